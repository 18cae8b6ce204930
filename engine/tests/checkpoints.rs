//! Checkpoints: the state saved at each equals a replay from the start,
//! ranks are right, and the cache detects damage and never touches the
//! trace directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use traceloom_ctf::{Message, Traceset};
use traceloom_engine::checkpoint::{self, CacheError, CacheOutcome};
use traceloom_engine::request::EventSource;
use traceloom_engine::source::CtfSource;
use traceloom_engine::state::{Handlers, TracesetState};

fn kernel_traces() -> Vec<PathBuf> {
    let mut v = vec![traceloom_testdata::sample_kernel()];
    for rel in [
        "tracecompass/bug446190",
        "tracecompass/flipping-endianness",
        "tracecompass/synctraces",
    ] {
        v.push(traceloom_testdata::ctf(rel));
    }
    v
}

#[test]
fn state_at_every_checkpoint_equals_a_replay_from_the_start() {
    for path in kernel_traces() {
        let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
        let cps = checkpoint::build(ts.clone(), 997).states;
        assert!(
            cps.len() > 3,
            "{}: {} checkpoints",
            path.display(),
            cps.len()
        );
        // Replay with a plain loop, independent of the scheduler.
        let mut state = TracesetState::new(ts.traces().len());
        let mut handlers = Handlers::new();
        let mut cursor = ts.messages();
        let mut rank = 0u64;
        let mut next = cps.iter().peekable();
        while let Some(msg) = cursor.next() {
            let Ok(Message::Event(ev)) = msg else {
                continue;
            };
            if let Some(cp) = next.peek() {
                if cp.rank == rank {
                    assert_eq!(cp.position.time, ev.timestamp_ns().unwrap());
                    assert_eq!(cp.position.packet, ev.position().packet as u64);
                    assert_eq!(cp.position.event_index, ev.position().event_index);
                    assert!(
                        cp.state == state,
                        "{}: state differs at rank {rank}",
                        path.display()
                    );
                    next.next();
                }
            }
            state.apply(&mut handlers, &ev);
            rank += 1;
        }
        assert!(
            next.next().is_none(),
            "{}: checkpoints past the end",
            path.display()
        );
        // Intervals: at most twice the interval apart, at least the interval.
        for w in cps.windows(2) {
            let d = w[1].rank - w[0].rank;
            assert!((997..=2 * 997).contains(&d), "{}: gap {d}", path.display());
        }
    }
}

#[test]
fn ranks_and_rank_seeks_agree_with_counting() {
    let path = traceloom_testdata::sample_kernel();
    let ts = Arc::new(Traceset::open(&[path]).unwrap());
    let cps = checkpoint::build(ts.clone(), 5000).states;
    let mut src = CtfSource::new(ts.clone());
    let mut positions = Vec::new();
    while src.current().is_some() {
        positions.push(src.position());
        src.advance();
    }
    for r in [0u64, 1, 4999, 5000, 12345, positions.len() as u64 - 1] {
        checkpoint::seek_rank(&mut src, &cps, r);
        assert_eq!(src.position(), positions[r as usize], "seek_rank({r})");
        assert_eq!(
            checkpoint::rank_of(&mut src, &cps, &positions[r as usize]),
            r
        );
    }
}

/// Every file under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), m.len(), m.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn cache_is_reused_and_damage_is_detected_and_rebuilt() {
    let trace = traceloom_testdata::sample_kernel();
    let before = snapshot(&trace);
    let dir = tempfile::tempdir().unwrap();
    let ts = Arc::new(Traceset::open(std::slice::from_ref(&trace)).unwrap());

    let (built, outcome) = checkpoint::load_or_build(&ts, dir.path(), 5000);
    assert!(matches!(outcome, CacheOutcome::Built(None)), "{outcome:?}");
    let (loaded, outcome) = checkpoint::load_or_build(&ts, dir.path(), 5000);
    assert!(matches!(outcome, CacheOutcome::Loaded), "{outcome:?}");
    assert_eq!(built, loaded);

    let path = checkpoint::cache_path(dir.path(), checkpoint::fingerprint(&ts));
    let good = std::fs::read(&path).unwrap();
    // The cache is small next to the trace (< 1%).
    let trace_bytes: u64 = before.iter().map(|f| f.1).sum();
    assert!(
        (good.len() as u64) * 100 < trace_bytes,
        "{} vs {trace_bytes}",
        good.len()
    );

    // Flip a payload byte, truncate, break the header: each is detected.
    let mut flipped = good.clone();
    let last = flipped.len() - 7;
    flipped[last] ^= 0x40;
    let cases: Vec<Vec<u8>> = vec![
        flipped,
        good[..good.len() / 2].to_vec(),
        b"garbage".to_vec(),
    ];
    for bad in cases {
        std::fs::write(&path, &bad).unwrap();
        let fp = checkpoint::fingerprint(&ts);
        assert!(matches!(
            checkpoint::load(&path, fp),
            Err(CacheError::Damaged { .. })
        ));
        let (rebuilt, outcome) = checkpoint::load_or_build(&ts, dir.path(), 5000);
        assert!(
            matches!(
                outcome,
                CacheOutcome::Rebuilt(CacheError::Damaged { .. }, None)
            ),
            "{outcome:?}"
        );
        assert_eq!(rebuilt, built);
        assert_eq!(std::fs::read(&path).unwrap(), good);
    }
    // Another fingerprint (the traces changed): stale.
    assert!(matches!(
        checkpoint::load(&path, 42),
        Err(CacheError::Stale(_))
    ));
    // The trace directory was never written to.
    assert_eq!(snapshot(&trace), before);
}

#[test]
fn cached_checkpoints_decode_to_the_states_they_were_taken_of() {
    for path in kernel_traces() {
        let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
        // Dense checkpoints: many deltas, with threads created, changed and
        // freed between them.
        let built = checkpoint::build(ts.clone(), 211);
        assert!(built.states.len() > 10, "{}", path.display());
        let payload = checkpoint::encode_payload(&built);
        let decoded = checkpoint::decode_payload(&payload).unwrap();
        assert_eq!(decoded.states.len(), built.states.len());
        for (d, b) in decoded.states.iter().zip(&built.states) {
            assert_eq!(d.rank, b.rank, "{}", path.display());
            assert_eq!(d.position, b.position, "{}", path.display());
            assert!(
                d.state == b.state,
                "{}: state differs at rank {}",
                path.display(),
                b.rank
            );
        }
        assert_eq!(decoded.seek_index, built.seek_index);
        // Thinned as they are read: every k-th checkpoint from the first,
        // each the state it was taken of.
        for max in [1, 3, built.states.len() / 2, built.states.len() + 1] {
            let thin = checkpoint::decode_payload_at_most(&payload, max).unwrap();
            let every = built.states.len().div_ceil(max);
            let expect: Vec<_> = built.states.iter().step_by(every).collect();
            assert_eq!(thin.states.len(), expect.len(), "{max}");
            assert!(thin.states.len() <= max, "{max}");
            for (t, b) in thin.states.iter().zip(expect) {
                assert_eq!((t.rank, t.position), (b.rank, b.position), "{max}");
                assert!(
                    t.state == b.state,
                    "{}: thinned state differs",
                    path.display()
                );
            }
            assert_eq!(thin.seek_index, built.seek_index);
        }
        // The deltas are what makes dense checkpoints affordable: the
        // payload is far smaller than the states encoded one by one.
        let full: usize = built
            .states
            .iter()
            .map(|c| {
                let mut v = Vec::new();
                traceloom_engine::state::codec::encode(&c.state, &mut v);
                v.len()
            })
            .sum();
        assert!(
            payload.len() * 2 < full,
            "{}: payload {} vs states {full}",
            path.display(),
            payload.len()
        );
    }
}
