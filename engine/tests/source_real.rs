//! The CTF traceset as an event source: reading, seeking by time and by
//! position, and serving events requests, on the bundled traces.

use std::path::PathBuf;
use std::sync::Arc;

use traceloom_ctf::Traceset;
use traceloom_engine::request::{
    Budget, EventSource, EventsRequest, OwnerId, Scheduler, SchedulerConfig, SourceEvent, Start,
    StateComputation,
};
use traceloom_engine::source::{CtfPosition, CtfSource};

fn traces() -> Vec<PathBuf> {
    [
        "tracecompass/bug446190",
        "lttng-ust/ust_pid",
        "tracecompass/flipping-endianness",
        "lttng-ust/ust_overwrite",
    ]
    .iter()
    .map(|r| traceloom_testdata::ctf(r))
    .collect()
}

fn read_all(src: &mut CtfSource) -> Vec<(CtfPosition, String)> {
    let mut out = Vec::new();
    while let Some(cur) = src.current() {
        let name = cur.event().unwrap().name().to_string();
        assert_eq!(cur.time(), src.position().time);
        out.push((src.position(), name));
        src.advance();
    }
    out
}

#[test]
fn positions_increase_and_seeks_land_exactly() {
    for path in traces() {
        let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
        let mut src = CtfSource::new(ts.clone());
        let all = read_all(&mut src);
        assert!(all.len() > 100, "{}", path.display());
        for w in all.windows(2) {
            assert!(
                w[0].0 < w[1].0,
                "{}: positions not increasing: {:?} {:?}",
                path.display(),
                w[0].0,
                w[1].0
            );
        }
        assert_eq!(src.position(), CtfPosition::END);
        // Seek by position to a spread of events, and by time.
        let step = (all.len() / 37).max(1);
        for i in (0..all.len()).step_by(step) {
            src.seek_position(&all[i].0);
            assert_eq!(src.position(), all[i].0);
            assert_eq!(src.current().unwrap().event().unwrap().name(), all[i].1);
            src.advance();
            if i + 1 < all.len() {
                assert_eq!(src.position(), all[i + 1].0);
            }
            let t = all[i].0.time;
            src.seek_time(t);
            let first = all.iter().position(|(p, _)| p.time >= t).unwrap();
            assert_eq!(
                src.position(),
                all[first].0,
                "{}: seek_time({t})",
                path.display()
            );
        }
    }
}

#[test]
fn requests_on_a_real_trace_get_exactly_their_events() {
    let path = traceloom_testdata::ctf("tracecompass/bug446190");
    let ts = Arc::new(Traceset::open(&[path]).unwrap());
    let mut src = CtfSource::new(ts.clone());
    let all = read_all(&mut src);
    src.seek_time(i64::MIN);
    type Data = Vec<String>;
    let mut sched: Scheduler<CtfSource, (), Data> =
        Scheduler::new(src, StateComputation::new(()), SchedulerConfig::default());
    let mut expected = Vec::new();
    for (k, (start, n)) in [
        (100usize, 500u64),
        (2000, 7),
        (30, 20000),
        (all.len() - 5, 100),
    ]
    .into_iter()
    .enumerate()
    {
        let mut req: EventsRequest<CtfSource, (), Data> = EventsRequest::new(
            OwnerId(k as u64),
            Start::Time(all[start].0.time),
            Vec::new(),
        );
        req.num_events = Some(n);
        req.event.add(traceloom_hooks::Priority::DEFAULT, |ctx| {
            let name = ctx.event.event().unwrap().name().to_string();
            ctx.data.push(name);
            traceloom_hooks::Flow::Continue
        });
        sched.add(req);
        let first = all
            .iter()
            .position(|(p, _)| p.time >= all[start].0.time)
            .unwrap();
        let want: Vec<String> = all[first..]
            .iter()
            .take(n as usize)
            .map(|(_, n)| n.clone())
            .collect();
        expected.push(want);
    }
    let mut got = vec![Vec::new(); expected.len()];
    loop {
        let report = sched.service(Budget::events(997), || false);
        for c in report.completed {
            got[c.owner.0 as usize] = c.data;
        }
        if sched.is_idle() {
            break;
        }
    }
    assert_eq!(got, expected);
}
