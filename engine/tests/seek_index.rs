//! The seek index changes how far a seek decodes, never what it finds:
//! time and position seeks with and without it read the same events.

use std::path::PathBuf;
use std::sync::Arc;

use traceloom_ctf::{Message, Traceset};
use traceloom_engine::request::EventSource;
use traceloom_engine::seek_index::{SeekIndex, SeekIndexBuilder};
use traceloom_engine::source::{CtfPosition, CtfSource};

fn traces() -> Vec<PathBuf> {
    let mut v = vec![traceloom_testdata::sample_kernel()];
    for rel in [
        "tracecompass/bug446190",
        "tracecompass/flipping-endianness",
        "tracecompass/synctraces",
        "tracecompass/hello-lost",
    ] {
        v.push(traceloom_testdata::ctf(rel));
    }
    v
}

fn index_of(ts: &Traceset, every: u64) -> SeekIndex {
    let mut b = SeekIndexBuilder::new(every);
    let mut cursor = ts.messages();
    while let Some(m) = cursor.next() {
        if let Ok(Message::Event(e)) = m {
            b.observe(&e);
        }
    }
    b.finish()
}

fn next_positions(src: &mut CtfSource, n: usize) -> Vec<CtfPosition> {
    let mut out = Vec::with_capacity(n.min(1 << 16));
    while out.len() < n && src.current().is_some() {
        out.push(src.position());
        src.advance();
    }
    out
}

#[test]
fn seeks_find_the_same_events_with_and_without_the_index() {
    for path in traces() {
        let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
        let mut plain = CtfSource::new(ts.clone());
        let all = next_positions(&mut plain, usize::MAX);
        assert!(all.len() > 100, "{}", path.display());
        for every in [7, 1024] {
            let index = index_of(&ts, every);
            assert!(!index.is_empty());
            let mut indexed = CtfSource::new(ts.clone());
            indexed.set_seek_index(Arc::new(index));
            // Every event time, just before and after it, and the ends.
            let step = (all.len() / 60).max(1);
            let mut times: Vec<i64> = all
                .iter()
                .step_by(step)
                .flat_map(|p| [p.time - 1, p.time, p.time + 1])
                .collect();
            times.extend([i64::MIN, all[0].time, all[all.len() - 1].time, i64::MAX]);
            for t in times {
                plain.seek_time(t);
                indexed.seek_time(t);
                assert_eq!(
                    next_positions(&mut indexed, 30),
                    next_positions(&mut plain, 30),
                    "{}: seek_time({t}), every {every}",
                    path.display()
                );
            }
            // Long reads after a seek go on with decoding threads: the
            // switch loses and repeats nothing.
            let long = traceloom_engine::source::SHORT_READ_EVENTS as usize + 1000;
            for p in all.iter().step_by(all.len() / 4 + 1) {
                plain.seek_time(p.time);
                indexed.seek_time(p.time);
                assert_eq!(
                    next_positions(&mut indexed, long),
                    next_positions(&mut plain, long),
                    "{}: long read from {}, every {every}",
                    path.display(),
                    p.time
                );
            }
            for p in all.iter().step_by(step).chain([&CtfPosition::END]) {
                plain.seek_position(p);
                indexed.seek_position(p);
                assert_eq!(indexed.position(), *p);
                assert_eq!(
                    next_positions(&mut indexed, 30),
                    next_positions(&mut plain, 30),
                    "{}: seek_position({p:?}), every {every}",
                    path.display()
                );
            }
        }
    }
}
