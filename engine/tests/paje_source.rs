//! The Pajé trace as an event source: the scheduler reads the bundled
//! examples in the reader's order, seeks by time and position land where a
//! read from the start says, interrupted and resumed passes give the same
//! events, and the simulation run as the scheduler's state completes
//! exactly the entities `traceloom-paje`'s in-memory `Trace` holds.

use traceloom_engine::paje_source::{seconds_to_ns, PajePosition, PajeSource};
use traceloom_engine::paje_state::{self, PajeEntity, PajeState};
use traceloom_engine::request::{
    Budget, EventSource, EventsRequest, OwnerId, Scheduler, SchedulerConfig, ServiceStatus, Start,
};
use traceloom_hooks::{Flow, Priority};
use traceloom_paje::{LoadOptions, Trace};

const EXAMPLES: [&str; 4] = [
    "g5k.trace",
    "simu-mardi.trace",
    "native_sample.trace",
    "native_paje.trace",
];

/// Every (position, line) of a read from the start.
fn read_all(src: &mut PajeSource) -> Vec<(PajePosition, u64)> {
    src.seek_time(i64::MIN);
    let mut out = Vec::new();
    while let Some(ev) = src.current() {
        out.push((src.position(), ev.event().unwrap().line));
        src.advance();
    }
    out
}

#[test]
fn positions_follow_reading_order_and_seeks_land_on_them() {
    for name in EXAMPLES {
        let path = traceloom_testdata::paje(name);
        let mut src = PajeSource::open(&path).unwrap();
        let all = read_all(&mut src);
        assert!(all.len() > 10, "{name}: {} events", all.len());
        for w in all.windows(2) {
            assert!(w[0].0 < w[1].0, "{name}: {:?} then {:?}", w[0], w[1]);
        }
        // Seeks to positions and times, out of order.
        let n = all.len();
        for k in [n - 1, 0, n / 2, n / 3, 7, n - 2] {
            let (p, line) = all[k];
            src.seek_position(&p);
            assert_eq!(src.position(), p, "{name}: seek to #{k}");
            assert_eq!(src.current().unwrap().event().unwrap().line, line);
            src.seek_time(p.time);
            let first = all.iter().position(|(q, _)| q.time >= p.time).unwrap();
            assert_eq!(src.position(), all[first].0, "{name}: time seek to #{k}");
        }
        src.seek_position(&PajePosition::END);
        assert!(src.current().is_none());
        src.seek_time(i64::MAX - 1);
        assert!(src.current().is_none());
        let (a, b) = src.time_span().unwrap();
        let timed: Vec<i64> = all
            .iter()
            .map(|(p, _)| p.time)
            .filter(|&t| t != i64::MIN)
            .collect();
        assert_eq!(a, timed[0], "{name}: span start");
        assert_eq!(b, *timed.last().unwrap(), "{name}: span end");
    }
}

/// `simu-mardi.trace` split as ViTE's multi-file traces are: the header,
/// the definitions and the containers in `root.trace`, which names two
/// event files sharing the other lines.
fn split_trace(dir: &std::path::Path) -> (std::path::PathBuf, usize) {
    let text = std::fs::read_to_string(traceloom_testdata::paje("simu-mardi.trace")).unwrap();
    let (mut root, mut a, mut b) = (String::new(), String::new(), String::new());
    let mut events = 0;
    for line in text.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        if line.starts_with('%') || word.is_empty() {
            root.push_str(line);
            root.push('\n');
            if line.starts_with("%EndEventDef") && !root.contains("PajeTraceFile") {
                root.push_str(
                    "%EventDef PajeTraceFile 99\n% Container string\n% Type string\n\
                     % Filename string\n%EndEventDef\n",
                );
            }
            continue;
        }
        events += 1;
        // Definitions and containers stay in the main file; the others
        // alternate.
        let id: u32 = word.parse().unwrap_or(0);
        let out = if id <= 7 || events % 3 == 0 {
            &mut root
        } else if events % 3 == 1 {
            &mut a
        } else {
            &mut b
        };
        out.push_str(line);
        out.push('\n');
    }
    root.push_str("99 0 0 a.trace\n99 0 0 b.trace\n");
    std::fs::write(dir.join("a.trace"), a).unwrap();
    std::fs::write(dir.join("b.trace"), b).unwrap();
    std::fs::write(dir.join("root.trace"), root).unwrap();
    (dir.join("root.trace"), events + 2)
}

#[test]
fn the_multi_file_trace_reads_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let (root, lines) = split_trace(dir.path());
    let mut src = PajeSource::open(&root).unwrap();
    let diags: Vec<String> = src
        .take_diagnostics()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(src.streams().len(), 3, "{:?} {diags:?}", src.streams());
    let all = read_all(&mut src);
    let files: std::collections::BTreeSet<u32> = all.iter().map(|(p, _)| p.file).collect();
    assert_eq!(
        files.len(),
        3,
        "{:?}",
        src.take_diagnostics()
            .iter()
            .take(3)
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    );
    assert!(
        all.len() + 10 >= lines && all.len() <= lines,
        "{} of {lines}",
        all.len()
    );
    for w in all.windows(2) {
        assert!(w[0].0 < w[1].0);
    }
    let mid = all[all.len() / 2].0;
    src.seek_position(&mid);
    assert_eq!(src.position(), mid);
}

/// Entities completed by a whole pass on the scheduler, serviced in
/// `budget`-event turns with a HIGH request seeking elsewhere between turns.
fn pass_entities(name: &str, budget: u64) -> (Vec<PajeEntity>, u64) {
    let src = PajeSource::open(&traceloom_testdata::paje(name)).unwrap();
    let config = SchedulerConfig {
        checkpoint_interval: Some(500),
        ..SchedulerConfig::default()
    };
    let mut sched: Scheduler<PajeSource, PajeState, Vec<PajeEntity>> =
        Scheduler::new(src, paje_state::computation(), config);
    let mut req: EventsRequest<PajeSource, PajeState, Vec<PajeEntity>> =
        EventsRequest::new(OwnerId(1), Start::Time(i64::MIN), Vec::new());
    req.priority = Priority::LOW;
    req.event.add(Priority::DEFAULT, |ctx| {
        ctx.data.extend_from_slice(ctx.state.completed());
        Flow::Continue
    });
    req.after_traceset.add(Priority::DEFAULT, |ctx| {
        if *ctx.position == PajePosition::END {
            let rest = ctx.state.finish_copy();
            ctx.data.extend(rest);
        }
        Flow::Continue
    });
    let id = sched.add(req);
    let span = sched.source().time_span().unwrap();
    let mut turn = 0i64;
    loop {
        let report = sched.service(Budget::events(budget), || false);
        if let Some(c) = report.completed.into_iter().find(|c| c.id == id) {
            return (c.data, sched.checkpoint_count() as u64);
        }
        assert_ne!(report.status, ServiceStatus::Idle);
        // A list-like read elsewhere, without the state.
        turn += 1;
        let at = span.0 + (span.1 - span.0) / 7 * (turn % 7);
        let mut other: EventsRequest<PajeSource, PajeState, Vec<PajeEntity>> =
            EventsRequest::new(OwnerId(2), Start::Time(at), Vec::new());
        other.priority = Priority::HIGH;
        other.needs_state = false;
        other.num_events = Some(50);
        sched.add(other);
    }
}

#[test]
fn the_simulation_as_state_completes_what_the_reader_does() {
    for name in ["simu-mardi.trace", "g5k.trace", "native_sample.trace"] {
        let trace =
            Trace::open_with(traceloom_testdata::paje(name), &LoadOptions::default()).unwrap();
        let (whole, _) = pass_entities(name, u64::MAX);
        let (chopped, checkpoints) = pass_entities(name, 777);
        assert!(checkpoints > 0, "{name}: no checkpoint taken");
        let count = |v: &[PajeEntity]| {
            v.iter()
                .filter(|e| !matches!(e, PajeEntity::Created(_) | PajeEntity::Destroyed(_)))
                .count() as u64
        };
        assert_eq!(count(&whole), trace.entities.entity_count(), "{name}");
        assert_eq!(whole, chopped, "{name}: interrupted pass differs");
        // The times are the reader's.
        if let Some(PajeEntity::State(s)) = whole.iter().find(|e| matches!(e, PajeEntity::State(_)))
        {
            assert!(seconds_to_ns(s.end) >= seconds_to_ns(s.start));
        }
    }
}

#[test]
fn a_bad_line_is_reported_once_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.trace");
    let good = std::fs::read_to_string(traceloom_testdata::paje("states.trace")).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    let at = lines.len() - 2;
    lines.insert(at, "42 this is not a Pajé event");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let mut src = PajeSource::open(&path).unwrap();
    read_all(&mut src);
    read_all(&mut src);
    let d = src.take_diagnostics();
    assert_eq!(d.len(), 1, "{d:?}");
    let text = d[0].to_string();
    assert!(
        text.contains("bad.trace") && text.contains(&format!(":{}", at + 1)),
        "{text}"
    );
    assert!(src.take_diagnostics().is_empty());
}
