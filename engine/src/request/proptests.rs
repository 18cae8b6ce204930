//! The acceptance property: random request sets serviced with random chunk
//! sizes, budgets and interruptions, with requests added and cancelled
//! between chunks, deliver to every request exactly what a brute-force scan
//! with its own boundaries gives.

use std::collections::HashMap;
use std::time::Duration;
use traceloom_base::Time;

use proptest::prelude::*;
use traceloom_hooks::{Flow, Priority};

use super::tests::{recorder, tally_state, Rec, Sched, Tally};
use super::*;

#[derive(Debug, Clone)]
enum StartSpec {
    Time(Time),
    /// Index into the merged events; `len` means the end position.
    Pos(usize),
}

#[derive(Debug, Clone)]
struct ReqSpec {
    start: StartSpec,
    priority: Priority,
    end_time: Option<Time>,
    num_events: Option<u64>,
    end_pos: Option<usize>,
    /// Accepted classes as a bit mask.
    filter: Option<u8>,
    /// A hook stops the request when it has received this many events.
    stop_after: Option<u64>,
    /// A by-id hook for this class stops the request.
    stop_on_class: Option<u64>,
    /// A by-id hook recording this class, at this priority.
    by_id: (u64, Priority),
    /// Whether the request reads the state (else its states are not
    /// checked).
    needs_state: bool,
}

#[derive(Debug, Clone)]
enum Op {
    /// One service call: event budget, and the answers of pending_input.
    Service(Option<u64>, Vec<bool>),
    Add(ReqSpec),
    /// Cancel the n-th added request (modulo).
    Cancel(usize),
}

#[derive(Debug, Clone)]
struct Scenario {
    /// Per stream: (time increment, class) of each event.
    streams: Vec<Vec<(Time, u64)>>,
    chunk_events: u64,
    checkpoint_interval: Option<u64>,
    stateful: bool,
    initial: Vec<ReqSpec>,
    ops: Vec<Op>,
}

const CLASSES: u64 = 4;
const MAX_EVENTS_GUESS: usize = 45;

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::HIGH),
        Just(Priority::DEFAULT),
        Just(Priority::LOW)
    ]
}

fn req_spec() -> impl Strategy<Value = ReqSpec> {
    (
        prop_oneof![
            (-3..40 as Time).prop_map(StartSpec::Time),
            (0..MAX_EVENTS_GUESS).prop_map(StartSpec::Pos),
        ],
        priority(),
        proptest::option::weighted(0.4, -3..50 as Time),
        proptest::option::weighted(0.4, 0..15u64),
        proptest::option::weighted(0.3, 0..MAX_EVENTS_GUESS),
        proptest::option::weighted(0.3, 1..16u8),
        proptest::option::weighted(0.3, 1..10u64),
        proptest::option::weighted(0.2, 0..CLASSES),
        (0..CLASSES, priority()),
        proptest::bool::weighted(0.6),
    )
        .prop_map(
            |(
                start,
                priority,
                end_time,
                num_events,
                end_pos,
                filter,
                stop_after,
                stop_on_class,
                by_id,
                needs_state,
            )| ReqSpec {
                start,
                priority,
                end_time,
                num_events,
                end_pos,
                filter,
                stop_after,
                stop_on_class,
                by_id,
                needs_state,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (proptest::option::weighted(0.7, 1..25u64), proptest::collection::vec(proptest::bool::weighted(0.4), 0..6))
            .prop_map(|(b, p)| Op::Service(b, p)),
        2 => req_spec().prop_map(Op::Add),
        1 => any::<usize>().prop_map(Op::Cancel),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        proptest::collection::vec(
            proptest::collection::vec((0..4 as Time, 0..CLASSES), 0..25),
            1..4,
        ),
        1..8u64,
        proptest::option::weighted(0.5, 1..20u64),
        any::<bool>(),
        proptest::collection::vec(req_spec(), 0..5),
        proptest::collection::vec(op(), 0..12),
    )
        .prop_map(
            |(streams, chunk_events, checkpoint_interval, stateful, initial, ops)| Scenario {
                streams,
                chunk_events,
                checkpoint_interval,
                stateful,
                initial,
                ops,
            },
        )
}

fn build_source(streams: &[Vec<(Time, u64)>]) -> MemorySource {
    let mut events = Vec::new();
    let mut payload = 0;
    for (s, evs) in streams.iter().enumerate() {
        let mut t = 0;
        for &(dt, class_id) in evs {
            t += dt;
            events.push(MemoryEvent {
                time: t,
                class_id,
                // Two traces, to exercise the per-trace hooks.
                stream: StreamId::new((s % 2) as u32, s as u32),
                payload,
            });
            payload += 1;
        }
    }
    MemorySource::new(events)
}

fn position_of(src: &MemorySource, index: usize) -> MemoryPosition {
    src.events()
        .get(index)
        .map_or(MemoryPosition::END, |(p, _)| *p)
}

fn make_request(spec: &ReqSpec, src: &MemorySource) -> EventsRequest<MemorySource, Tally, Rec> {
    let start = match spec.start {
        StartSpec::Time(t) => Start::Time(t),
        StartSpec::Pos(i) => Start::Position(position_of(src, i)),
    };
    let mut r = recorder(start, spec.priority);
    r.needs_state = spec.needs_state;
    r.end_time = spec.end_time;
    r.num_events = spec.num_events;
    r.end_position = spec.end_pos.map(|i| position_of(src, i));
    if let Some(mask) = spec.filter {
        r.filter = Some(Box::new(move |e: &MemoryEvent| {
            mask & (1 << e.class_id) != 0
        }));
    }
    if let Some(k) = spec.stop_after {
        r.event.add(Priority::LOW, move |ctx| {
            if ctx.data.events.len() as u64 == k {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
    }
    if let Some(c) = spec.stop_on_class {
        r.event_by_id.add(c, Priority::DEFAULT, |_| Flow::Stop);
    }
    let (class, prio) = spec.by_id;
    r.event_by_id.add(class, prio, |ctx| {
        ctx.data.by_id.push(ctx.event.payload);
        Flow::Continue
    });
    r
}

/// Brute force: the events `spec` must receive, and why it ends.
fn oracle(spec: &ReqSpec, src: &MemorySource) -> (Vec<u64>, EndReason) {
    let all = src.events();
    let mut idx = match spec.start {
        StartSpec::Time(t) => all.partition_point(|(p, _)| p.time() < t),
        StartSpec::Pos(i) => i.min(all.len()),
    };
    let end_pos = spec.end_pos.map(|i| position_of(src, i));
    let mut out = Vec::new();
    let mut stopped = false;
    loop {
        if spec.num_events == Some(out.len() as u64) {
            return (out, EndReason::NumEvents);
        }
        if stopped {
            return (out, EndReason::Stopped);
        }
        let Some((p, e)) = all.get(idx) else {
            return (out, EndReason::EndOfTraceset);
        };
        if spec.end_time.is_some_and(|t| e.time > t) {
            return (out, EndReason::EndTime);
        }
        if end_pos.is_some_and(|ep| *p >= ep) {
            return (out, EndReason::EndPosition);
        }
        if spec.filter.is_none_or(|m| m & (1 << e.class_id) != 0) {
            out.push(e.payload);
            stopped =
                spec.stop_after == Some(out.len() as u64) || spec.stop_on_class == Some(e.class_id);
        }
        idx += 1;
    }
}

fn run(sc: &Scenario) -> Result<(), TestCaseError> {
    let src = build_source(&sc.streams);
    // State before / after each event, by payload.
    let mut before: HashMap<u64, (Tally, Tally, u64)> = HashMap::new();
    let mut t = Tally::default();
    for (_, e) in src.events() {
        let pre = t.clone();
        t.apply(e);
        before.insert(e.payload, (pre, t.clone(), e.class_id));
    }
    let state = if sc.stateful {
        tally_state()
    } else {
        StateComputation::new(Tally::default())
    };
    let mut sched: Sched = Scheduler::new(
        src.clone(),
        state,
        SchedulerConfig {
            chunk_events: sc.chunk_events,
            checkpoint_interval: sc.checkpoint_interval,
            ..SchedulerConfig::default()
        },
    );
    let mut specs: Vec<(RequestId, ReqSpec)> = Vec::new();
    let mut completed: HashMap<RequestId, Completed<Rec>> = HashMap::new();
    let mut cancelled: Vec<(RequestId, Rec)> = Vec::new();
    for spec in &sc.initial {
        specs.push((sched.add(make_request(spec, &src)), spec.clone()));
    }
    let absorb = |report: ServiceReport<Rec>,
                  completed: &mut HashMap<RequestId, Completed<Rec>>| {
        for c in report.completed {
            let id = c.id;
            prop_assert!(completed.insert(id, c).is_none(), "completed twice");
        }
        Ok(report.status)
    };
    for op in &sc.ops {
        match op {
            Op::Service(budget, pending) => {
                let mut answers = pending.iter().copied();
                let budget = Budget {
                    max_events: *budget,
                    max_duration: Some(Duration::from_secs(20)),
                };
                let report = sched.service(budget, || answers.next().unwrap_or(false));
                let reported = report.events_read;
                let status = absorb(report, &mut completed)?;
                if let Some(b) = budget.max_events {
                    prop_assert!(reported <= b, "budget exceeded: {reported} > {b}");
                }
                if status == ServiceStatus::Idle {
                    prop_assert!(sched.is_idle());
                }
            }
            Op::Add(spec) => specs.push((sched.add(make_request(spec, &src)), spec.clone())),
            Op::Cancel(k) => {
                if !specs.is_empty() {
                    let id = specs[k % specs.len()].0;
                    match sched.cancel(id) {
                        Some(rec) => cancelled.push((id, rec)),
                        None => prop_assert!(
                            completed.contains_key(&id) || cancelled.iter().any(|c| c.0 == id)
                        ),
                    }
                }
            }
        }
    }
    let report = sched.service(Budget::duration(Duration::from_secs(20)), || false);
    let status = absorb(report, &mut completed)?;
    prop_assert_eq!(status, ServiceStatus::Idle);
    prop_assert_eq!(completed.len() + cancelled.len(), specs.len());

    let check_states = |rec: &Rec, spec: &ReqSpec| -> Result<(), TestCaseError> {
        prop_assert_eq!(rec.pre.len(), rec.events.len());
        if !spec.needs_state {
            // It promised not to look at the state.
            return Ok(());
        }
        for (i, p) in rec.events.iter().enumerate() {
            let (pre, post, _) = &before[p];
            if sc.stateful {
                prop_assert_eq!(&rec.pre[i], pre, "state before event {}", p);
                prop_assert_eq!(&rec.post[i], post, "state after event {}", p);
            } else {
                prop_assert_eq!(&rec.post[i], &Tally::default());
            }
        }
        Ok(())
    };
    for (id, spec) in &specs {
        let (expected, reason) = oracle(spec, &src);
        let by_id: Vec<u64> = expected
            .iter()
            .copied()
            .filter(|p| before[p].2 == spec.by_id.0)
            .collect();
        if let Some(c) = completed.get(id) {
            let rec = &c.data;
            prop_assert!(rec.violations.is_empty(), "{:?}", rec.violations);
            prop_assert_eq!(&rec.events, &expected, "request {:?} {:?}", id, spec);
            prop_assert_eq!(c.reason, reason, "request {:?} {:?}", id, spec);
            prop_assert_eq!(c.delivered, expected.len() as u64);
            prop_assert_eq!(&rec.by_id, &by_id);
            prop_assert_eq!(rec.count(Boundary::BeforeTraceset), 1);
            prop_assert_eq!(rec.count(Boundary::AfterTraceset), 1);
            prop_assert_eq!(
                rec.count(Boundary::BeforeChunk),
                rec.count(Boundary::AfterChunk)
            );
            let streams = src.streams().len();
            prop_assert_eq!(rec.count(Boundary::BeforeChunk) >= 1, true);
            let per_stream = rec
                .boundaries
                .iter()
                .filter(|b| matches!(b, Boundary::BeforeStream(_) | Boundary::AfterStream(_)))
                .count();
            prop_assert_eq!(per_stream, 2 * streams);
            check_states(rec, spec)?;
        } else {
            let rec = &cancelled
                .iter()
                .find(|c| c.0 == *id)
                .expect("completed or cancelled")
                .1;
            prop_assert!(rec.violations.is_empty(), "{:?}", rec.violations);
            prop_assert!(
                expected.starts_with(&rec.events),
                "cancelled {:?}: {:?} vs {:?}",
                id,
                rec.events,
                expected
            );
            prop_assert!(by_id.starts_with(&rec.by_id));
            let begun = rec.count(Boundary::BeforeTraceset);
            prop_assert!(begun <= 1);
            prop_assert_eq!(rec.count(Boundary::AfterTraceset), begun);
            prop_assert_eq!(
                rec.count(Boundary::BeforeChunk),
                rec.count(Boundary::AfterChunk)
            );
            check_states(rec, spec)?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn every_request_gets_exactly_its_events(sc in scenario()) {
        run(&sc)?;
    }
}
