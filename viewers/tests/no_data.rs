//! A damaged stream's rows (issue 19): the CPU of the stream and the
//! threads and lines whose last change came from it end their last state
//! at the last event read from it, and show "no data" from there to their
//! end instead of extending that state; a figure of it is written to
//! `$CARGO_TARGET_TMPDIR/no-data-*.png` for people to look at.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use traceloom_base::{Time, TimeRange};
use traceloom_ctf::{Message, Traceset};
use traceloom_viewers::export::{render_png, TimeGraphFigure};
use traceloom_viewers::model::resources::presentation;
use traceloom_viewers::model::{damage::StreamDamage, Session};
use traceloom_viewers::model::{ControlFlowModel, KernelAnalysis, KernelData, ResourcesModel};
use traceloom_viewers::render::StateInterval;
use traceloom_viewers::style::NO_DATA;
use traceloom_viewers::TimeGraphRender;

/// A copy of the sample kernel trace under `dir` with 64 bytes of 0xFF in
/// the middle of a packet of `channel0_1` (met by a full read, not by
/// opening the trace); returns the trace and the damaged file.
fn damaged_sample(dir: &Path) -> (PathBuf, PathBuf) {
    let dst = traceloom_testdata::copy_trace(&traceloom_testdata::sample_kernel(), dir);
    let stream = dst.join("channel0_1");
    let mut bytes = fs::read(&stream).unwrap();
    let at = bytes.len() / 2 + 1000;
    bytes[at..at + 64].fill(0xFF);
    fs::write(&stream, &bytes).unwrap();
    (dst, stream)
}

/// The time of the last event read from `file`, and its CPU, by a plain
/// read of the traces (independent of the kernel pass).
fn last_event_of(trace: &Path, file: &Path) -> (Time, u32) {
    let ts = Traceset::open(&[trace.to_path_buf()]).unwrap();
    let stream = ts
        .streams()
        .find(|s| s.files.iter().any(|f| f == file))
        .expect("the damaged file is a stream")
        .index;
    let mut last = None;
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Ok(Message::Event(e)) = m {
            if e.position().stream == stream {
                last = Some((e.timestamp_ns().unwrap(), e.cpu_id().unwrap() as u32));
            }
        }
    }
    last.expect("events were read before the damage")
}

fn no_data(iv: &StateInterval) -> bool {
    &*iv.state == NO_DATA
}

/// Row `row` of `r` ends its states at `from` and has "no data" from
/// there to `end` (intervals are not cut at the render's range).
fn assert_gap(r: &TimeGraphRender, row: usize, from: Time, end: Time, what: &str) {
    let states = r.states(row);
    for iv in states.iter().filter(|iv| !no_data(iv)) {
        assert!(
            iv.end <= from,
            "{what}: a state extended over the damage: {iv:?} (no data from {from})"
        );
    }
    let gaps: Vec<_> = states.iter().filter(|iv| no_data(iv)).collect();
    assert_eq!(gaps.len(), 1, "{what}: {states:?}");
    assert_eq!((gaps[0].start, gaps[0].end), (from, end), "{what}");
    assert!(
        gaps[0].properties.get("file").is_some() && gaps[0].properties.get("byte offset").is_some(),
        "{what}: the tooltip names the file and offset: {:?}",
        gaps[0].properties
    );
}

fn analyse(trace: &Path) -> (Arc<KernelData>, Vec<StreamDamage>) {
    let mut s = Session::open(&[trace.to_path_buf()]).unwrap();
    let data = KernelAnalysis::run(&mut s);
    let damage = data.damage.clone();
    (data, damage)
}

#[test]
fn a_damaged_streams_rows_show_no_data_after_its_last_event() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, file) = damaged_sample(tmp.path());
    let (last, cpu) = last_event_of(&trace, &file);
    let (data, damage) = analyse(&trace);
    assert_eq!(damage.len(), 1, "{damage:?}");
    let gap = damage[0].gap.as_ref().expect("events were read from it");
    assert_eq!(gap.from, last);
    assert_eq!(gap.cpus, vec![(0, cpu)]);
    assert!(!gap.threads.is_empty(), "the thread running on CPU {cpu}");
    let (_, end) = data.span;
    assert!(last < end, "the other streams go on after the damage");

    // The resources view: the damaged stream's CPU, whole trace and a
    // window around the damage (where every change is a pixel or more).
    let resources = ResourcesModel::new(data.clone());
    let window = TimeRange::new(last - 2_000_000, (last + 2_000_000).min(end));
    for (range, width) in [(TimeRange::new(data.span.0, end), 1000), (window, 4000)] {
        let r = resources.render(range, width);
        let row = (0..r.tree().len())
            .find(|&i| *r.tree().rows()[i].label == *format!("CPU {cpu}"))
            .expect("the CPU row");
        assert_gap(&r, row, last, end, &format!("CPU {cpu} in {range:?}"));
        // The other CPUs go on.
        for i in (0..r.tree().len()).filter(|&i| i != row) {
            assert!(!r.states(i).iter().any(no_data), "row {i}");
        }
    }

    // The control flow view: the threads whose last change came from the
    // stream, up to their end.
    let cf = ControlFlowModel::new(data.clone());
    let r = cf.render(window, 4000);
    for &rec in &gap.threads {
        let t = &data.threads[rec as usize];
        let Some(row) = r.tree().index_of(t.row) else {
            continue;
        };
        if t.end > window.start {
            assert_gap(&r, row, last, t.end, &format!("thread {}", t.tid));
        }
    }
    let others = (0..r.tree().len()).filter(|&i| {
        !gap.threads
            .iter()
            .any(|&rec| r.tree().index_of(data.threads[rec as usize].row) == Some(i))
    });
    for i in others {
        assert!(!r.states(i).iter().any(no_data), "row {i}");
    }

    // The figures, hatched "no data" and its legend entry.
    let config = presentation();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (name, r) in [
        (
            "resources",
            resources.render(TimeRange::new(data.span.0, end), 1200),
        ),
        (
            "controlflow",
            cf.render(TimeRange::new(data.span.0, end), 1200),
        ),
    ] {
        let fig = TimeGraphFigure::new(&r, &config);
        let png = render_png(&fig, 1200, None).unwrap();
        fs::write(out.join(format!("no-data-{name}.png")), png).unwrap();
        assert!(r.used_states().iter().any(|k| &**k == NO_DATA), "{name}");
    }
}

/// The same trace undamaged has no "no data" anywhere.
#[test]
fn an_undamaged_trace_has_no_gap() {
    let trace = traceloom_testdata::sample_kernel();
    let (data, damage) = analyse(&trace);
    assert!(damage.is_empty());
    let r =
        ResourcesModel::new(data.clone()).render(TimeRange::new(data.span.0, data.span.1), 1000);
    assert!(!r.used_states().iter().any(|k| &**k == NO_DATA));
}
