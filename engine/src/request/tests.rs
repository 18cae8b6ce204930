//! Focused tests, one per rule of the servicing algorithm.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use traceloom_base::Time;

use traceloom_hooks::{Flow, Priority};

use super::*;

/// The test state: a function of every event read from the beginning.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub count: u64,
    pub hash: u64,
    pub class0: u64,
}

impl Tally {
    /// Applies one event, as the state hooks do.
    pub(crate) fn apply(&mut self, e: &MemoryEvent) {
        self.count += 1;
        self.hash = self
            .hash
            .wrapping_mul(1_000_003)
            .wrapping_add(e.payload + 1);
        if e.class_id == 0 {
            self.class0 += 1;
        }
    }
}

/// State hooks computing [`Tally`]: a general hook and a by-id one.
pub(super) fn tally_state() -> StateComputation<MemorySource, Tally> {
    let mut st: StateComputation<MemorySource, Tally> = StateComputation::new(Tally::default());
    st.hooks.add(Priority::STATE, |ctx| {
        ctx.data.count += 1;
        ctx.data.hash = ctx
            .data
            .hash
            .wrapping_mul(1_000_003)
            .wrapping_add(ctx.event.payload + 1);
        Flow::Continue
    });
    st.hooks_by_id.add(0, Priority::STATE, |ctx| {
        ctx.data.class0 += 1;
        Flow::Continue
    });
    st
}

/// What a recording request saw.
#[derive(Debug, Default)]
pub(super) struct Rec {
    /// Payloads delivered to the general DEFAULT hook.
    pub events: Vec<u64>,
    /// State seen by the HIGH hook (before the event).
    pub pre: Vec<Tally>,
    /// State seen by the DEFAULT hook (after the event).
    pub post: Vec<Tally>,
    /// Payloads delivered to by-id hooks (tests add those themselves).
    pub by_id: Vec<u64>,
    /// Every boundary notification, in order.
    pub boundaries: Vec<Boundary>,
    /// Hook protocol violations (event outside a chunk, …).
    pub violations: Vec<String>,
    in_chunk: bool,
    begun: bool,
    ended: bool,
}

impl Rec {
    pub(crate) fn count(&self, b: Boundary) -> usize {
        self.boundaries.iter().filter(|x| **x == b).count()
    }
}

pub(super) type Req = EventsRequest<MemorySource, Tally, Rec>;
pub(super) type Sched = Scheduler<MemorySource, Tally, Rec>;

/// A request recording everything into its [`Rec`].
pub(super) fn recorder(start: Start<MemoryPosition>, priority: Priority) -> Req {
    let mut r = Req::new(OwnerId(1), start, Rec::default());
    r.priority = priority;
    let lists = [
        &mut r.before_traceset,
        &mut r.before_trace,
        &mut r.before_tracefile,
        &mut r.after_tracefile,
        &mut r.after_trace,
        &mut r.after_traceset,
        &mut r.before_chunk,
        &mut r.after_chunk,
    ];
    for list in lists {
        list.add(Priority::DEFAULT, |ctx| {
            let rec = &mut *ctx.data;
            let b = *ctx.event;
            match b {
                Boundary::BeforeTraceset => {
                    if rec.begun {
                        rec.violations.push("begun twice".into());
                    }
                    rec.begun = true;
                }
                Boundary::AfterTraceset => {
                    if rec.ended || !rec.begun || rec.in_chunk {
                        rec.violations.push("bad end".into());
                    }
                    rec.ended = true;
                }
                Boundary::BeforeChunk => {
                    if rec.in_chunk || !rec.begun || rec.ended {
                        rec.violations.push("bad before_chunk".into());
                    }
                    rec.in_chunk = true;
                }
                Boundary::AfterChunk => {
                    if !rec.in_chunk {
                        rec.violations.push("after_chunk outside a chunk".into());
                    }
                    rec.in_chunk = false;
                }
                _ => {}
            }
            rec.boundaries.push(b);
            Flow::Continue
        });
    }
    r.event.add(Priority::HIGH, |ctx| {
        ctx.data.pre.push(ctx.state.clone());
        Flow::Continue
    });
    r.event.add(Priority::DEFAULT, |ctx| {
        if !ctx.data.in_chunk {
            ctx.data
                .violations
                .push(format!("event {} outside a chunk", ctx.event.payload));
        }
        ctx.data.events.push(ctx.event.payload);
        ctx.data.post.push(ctx.state.clone());
        Flow::Continue
    });
    r
}

fn ev(time: Time, trace: u32, stream: u32, class_id: u64, payload: u64) -> MemoryEvent {
    MemoryEvent {
        time,
        class_id,
        stream: StreamId::new(trace, stream),
        payload,
    }
}

/// `n` events at times 0, 10, 20…, alternating between two streams, class
/// = payload % 3, payload = index.
fn linear(n: u64) -> MemorySource {
    MemorySource::new((0..n).map(|i| ev(i as Time * 10, 0, (i % 2) as u32, i % 3, i)))
}

fn sched(src: MemorySource, stateful: bool) -> Sched {
    let state = if stateful {
        tally_state()
    } else {
        StateComputation::new(Tally::default())
    };
    Scheduler::new(
        src,
        state,
        SchedulerConfig {
            chunk_events: 1000,
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    )
}

fn run_all(s: &mut Sched) -> Vec<Completed<Rec>> {
    let r = s.service(Budget::unlimited(), || false);
    assert_eq!(r.status, ServiceStatus::Idle);
    let mut done = r.completed;
    done.sort_by_key(|c| c.id);
    for c in &done {
        assert!(c.data.violations.is_empty(), "{:?}", c.data.violations);
        assert_eq!(c.data.count(Boundary::BeforeTraceset), 1);
        assert_eq!(c.data.count(Boundary::AfterTraceset), 1);
    }
    done
}

fn pos(s: &Sched, index: usize) -> MemoryPosition {
    s.source().events()[index].0
}

fn range(a: u64, b: u64) -> Vec<u64> {
    (a..b).collect()
}

/// The Tally after reading the first `n` events of `src`.
fn tally_of(src: &MemorySource, n: usize) -> Tally {
    let mut t = Tally::default();
    for (_, e) in &src.events()[..n] {
        t.apply(e);
    }
    t
}

#[test]
fn time_request_end_time_is_inclusive() {
    let mut s = sched(linear(20), false);
    let mut r = recorder(Start::Time(25), Priority::DEFAULT);
    r.end_time = Some(80);
    s.add(r);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(3, 9));
    assert_eq!(done[0].reason, EndReason::EndTime);
    assert_eq!(done[0].delivered, 6);
}

#[test]
fn position_request_end_position_is_exclusive() {
    let mut s = sched(linear(20), false);
    let (a, b) = (pos(&s, 4), pos(&s, 9));
    let mut r = recorder(Start::Position(a), Priority::DEFAULT);
    r.end_position = Some(b);
    s.add(r);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(4, 9));
    assert_eq!(done[0].reason, EndReason::EndPosition);
}

#[test]
fn end_position_set_while_reading_ends_there_unless_passed() {
    let mut s = sched(linear(60), true);
    let id = s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let r = s.service(Budget::events(10), || false);
    assert!(r.completed.is_empty());
    // Read up to event 10: an end behind it is refused, one ahead taken.
    assert!(!s.set_end_position(id, pos(&s, 9)));
    assert!(s.set_end_position(id, pos(&s, 40)));
    // A later end does not move it back.
    assert!(s.set_end_position(id, pos(&s, 50)));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, 40));
    assert_eq!(done[0].reason, EndReason::EndPosition);
    assert!(!s.set_end_position(id, pos(&s, 45)), "no longer pending");
}

#[test]
fn number_of_events_limits_delivery_including_zero() {
    let mut s = sched(linear(20), false);
    let mut r = recorder(Start::Time(0), Priority::DEFAULT);
    r.num_events = Some(5);
    s.add(r);
    let mut z = recorder(Start::Time(30), Priority::DEFAULT);
    z.num_events = Some(0);
    s.add(z);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, 5));
    assert_eq!(done[0].reason, EndReason::NumEvents);
    assert!(done[1].data.events.is_empty());
    assert_eq!(done[1].reason, EndReason::NumEvents);
}

#[test]
fn stop_from_a_hook_ends_that_request_after_the_event_only() {
    let mut s = sched(linear(20), false);
    let mut stopper = recorder(Start::Time(0), Priority::DEFAULT);
    stopper.event.add(Priority::LOW, |ctx| {
        if ctx.event.payload == 6 {
            Flow::Stop
        } else {
            Flow::Continue
        }
    });
    s.add(stopper);
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, 7));
    assert_eq!(done[0].reason, EndReason::Stopped);
    assert_eq!(done[1].data.events, range(0, 20));
    assert_eq!(done[1].reason, EndReason::EndOfTraceset);
}

#[test]
fn stop_from_a_begin_hook_ends_the_request_before_any_event() {
    let mut s = sched(linear(5), false);
    let mut r = recorder(Start::Time(0), Priority::DEFAULT);
    r.before_traceset.add(Priority::LOW, |_| Flow::Stop);
    s.add(r);
    let done = run_all(&mut s);
    assert!(done[0].data.events.is_empty());
    assert_eq!(done[0].reason, EndReason::Stopped);
}

#[test]
fn filter_rejected_events_are_neither_delivered_nor_counted() {
    let mut s = sched(linear(30), false);
    let mut r = recorder(Start::Time(0), Priority::DEFAULT);
    r.filter = Some(Box::new(|e: &MemoryEvent| e.class_id == 1));
    r.num_events = Some(4);
    s.add(r);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, vec![1, 4, 7, 10]);
}

#[test]
fn begin_and_end_hooks_nest_traces_and_streams() {
    let src = MemorySource::new([ev(1, 0, 0, 0, 0), ev(2, 0, 1, 0, 1), ev(3, 1, 0, 0, 2)]);
    let mut s = sched(src, false);
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let done = run_all(&mut s);
    let (s00, s01, s10) = (
        StreamId::new(0, 0),
        StreamId::new(0, 1),
        StreamId::new(1, 0),
    );
    use Boundary::*;
    assert_eq!(
        done[0].data.boundaries,
        vec![
            BeforeTraceset,
            BeforeTrace(0),
            BeforeStream(s00),
            BeforeStream(s01),
            BeforeTrace(1),
            BeforeStream(s10),
            BeforeChunk,
            AfterChunk,
            AfterStream(s00),
            AfterStream(s01),
            AfterTrace(0),
            AfterStream(s10),
            AfterTrace(1),
            AfterTraceset,
        ]
    );
}

/// Step 1.1: the most urgent priority is serviced first even if it starts
/// later; a less urgent request at the same place rides along.
#[test]
fn most_urgent_priority_is_serviced_first() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = sched(linear(40), false);
    let tagged = |tag: u32, start: Time, prio: Priority, log: &Arc<Mutex<Vec<(u32, u64)>>>| {
        let mut r = recorder(Start::Time(start), prio);
        let log = Arc::clone(log);
        r.event.add(Priority::DEFAULT, move |ctx| {
            log.lock().unwrap().push((tag, ctx.event.payload));
            Flow::Continue
        });
        r.end_time = Some(start + 50);
        r
    };
    s.add(tagged(0, 0, Priority::LOW, &log));
    s.add(tagged(1, 200, Priority::HIGH, &log));
    s.add(tagged(2, 200, Priority::LOW, &log));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, 6));
    assert_eq!(done[1].data.events, range(20, 26));
    assert_eq!(done[2].data.events, range(20, 26));
    let log = log.lock().unwrap();
    // The HIGH request's events come first, the LOW request at the same
    // start shares the read, the LOW request at 0 comes last.
    assert_eq!(log[0], (1, 20));
    assert_eq!(log[1], (2, 20));
    assert_eq!(log.last(), Some(&(0, 5)));
    assert_eq!(s.stats().seeks, 2);
}

/// Step 1.1.3/1.1.4: at equal priority a position start wins only when its
/// time is strictly lower than the lowest start time.
#[test]
fn position_start_wins_only_when_strictly_earlier() {
    // Two events at time 50 (indexes 5 and 6).
    let src = MemorySource::new((0..10u64).map(|i| {
        let t = if i == 6 { 50 } else { i as Time * 10 };
        ev(t, 0, 0, 0, i)
    }));
    for (time_start, expect_time_first) in [(50, true), (51, false)] {
        let mut s = sched(src.clone(), false);
        let p = pos(&s, 6);
        let order = Arc::new(Mutex::new(Vec::new()));
        for (tag, start) in [(0u32, Start::Time(time_start)), (1, Start::Position(p))] {
            let mut r = recorder(start, Priority::DEFAULT);
            let order = Arc::clone(&order);
            r.before_traceset.add(Priority::HIGH, move |_| {
                order.lock().unwrap().push(tag);
                Flow::Continue
            });
            s.add(r);
        }
        let done = run_all(&mut s);
        assert_eq!(
            order.lock().unwrap()[0] == 0,
            expect_time_first,
            "start {time_start}"
        );
        let time_events = if time_start == 50 {
            range(5, 10)
        } else {
            range(7, 10)
        };
        assert_eq!(done[0].data.events, time_events);
        assert_eq!(done[1].data.events, range(6, 10));
    }
}

/// Step 2: requests starting further on join while reading, without a seek.
#[test]
fn later_requests_join_the_read_without_seeking() {
    let mut s = sched(linear(50), true);
    let mut expected = Vec::new();
    for k in 0..5u64 {
        s.add(recorder(Start::Time(k as Time * 95), Priority::DEFAULT));
        expected.push(range((k * 95).div_ceil(10), 50));
    }
    let p = pos(&s, 33);
    s.add(recorder(Start::Position(p), Priority::DEFAULT));
    expected.push(range(33, 50));
    let done = run_all(&mut s);
    for (c, e) in done.iter().zip(&expected) {
        assert_eq!(&c.data.events, e);
    }
    assert_eq!(
        s.stats().seeks,
        0,
        "the read starts at the first event already"
    );
    assert_eq!(s.stats().replayed_events, 0);
}

/// Step 2 made exact: a time request added after a chunk stopped in the
/// middle of events sharing its start time must still get all of them.
#[test]
fn time_request_after_a_chunk_stopped_among_equal_timestamps() {
    let src = MemorySource::new([
        ev(5, 0, 0, 0, 0),
        ev(10, 0, 0, 0, 1),
        ev(10, 0, 1, 0, 2),
        ev(10, 0, 2, 0, 3),
        ev(20, 0, 0, 0, 4),
    ]);
    let mut s = sched(src, true);
    let mut a = recorder(Start::Time(0), Priority::DEFAULT);
    a.num_events = Some(2);
    s.add(a);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, vec![0, 1]);
    s.add(recorder(Start::Time(10), Priority::DEFAULT));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, vec![1, 2, 3, 4]);
    assert_eq!(done[0].data.pre[0], tally_of(s.source(), 1));
}

/// A time request starting between two events joins before the later one.
#[test]
fn time_request_between_events_joins_without_seek() {
    let mut s = sched(linear(10), false);
    let mut a = recorder(Start::Time(0), Priority::DEFAULT);
    a.num_events = Some(3);
    s.add(a);
    run_all(&mut s);
    let seeks = s.stats().seeks;
    s.add(recorder(Start::Time(25), Priority::DEFAULT));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(3, 10));
    assert_eq!(s.stats().seeks, seeks);
}

/// Interruption B by budget: servicing in many small slices delivers what
/// one unlimited call delivers, with after_chunk/before_chunk between.
#[test]
fn budget_slices_deliver_the_same_events() {
    let mut s = sched(linear(60), true);
    let mut a = recorder(Start::Time(35), Priority::DEFAULT);
    a.end_time = Some(400);
    s.add(a);
    s.add(recorder(Start::Time(100), Priority::LOW));
    let mut done = Vec::new();
    let mut calls = 0;
    loop {
        calls += 1;
        let r = s.service(Budget::events(7), || false);
        assert!(r.events_read <= 7);
        done.extend(r.completed);
        if r.status == ServiceStatus::Idle {
            break;
        }
        assert_eq!(r.status, ServiceStatus::BudgetSpent);
    }
    assert!(calls > 5);
    done.sort_by_key(|c| c.id);
    assert_eq!(done[0].data.events, range(4, 41));
    assert_eq!(done[1].data.events, range(10, 60));
    assert!(done[0].data.count(Boundary::BeforeChunk) > 3);
    for c in &done {
        assert!(c.data.violations.is_empty(), "{:?}", c.data.violations);
        assert_eq!(
            c.data.count(Boundary::BeforeChunk),
            c.data.count(Boundary::AfterChunk)
        );
        for (i, p) in c.data.events.iter().enumerate() {
            assert_eq!(c.data.pre[i], tally_of(s.source(), *p as usize));
            assert_eq!(c.data.post[i], tally_of(s.source(), *p as usize + 1));
        }
    }
}

#[test]
fn pending_input_yields_after_each_chunk_and_never_starves() {
    let mut s = Scheduler::new(
        linear(25),
        tally_state(),
        SchedulerConfig {
            chunk_events: 4,
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    );
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let mut done = Vec::new();
    for _ in 0..100 {
        let r = s.service(Budget::unlimited(), || true);
        assert_eq!(r.chunks, 1);
        assert!(r.events_read <= 4);
        done.extend(r.completed);
        if r.status == ServiceStatus::Idle {
            break;
        }
        assert_eq!(r.status, ServiceStatus::PendingInput);
    }
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].data.events, range(0, 25));
    // Resumed from the position it stopped at: never a seek.
    assert_eq!(s.stats().seeks, 0);
}

#[test]
fn zero_duration_budget_reads_one_chunk_per_call() {
    let mut s = Scheduler::new(
        linear(10),
        tally_state(),
        SchedulerConfig {
            chunk_events: 3,
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    );
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let r = s.service(Budget::duration(Duration::ZERO), || false);
    assert_eq!(
        (r.status, r.events_read, r.chunks),
        (ServiceStatus::BudgetSpent, 3, 1)
    );
}

/// A source that is not ready (its data still being decoded elsewhere)
/// makes `service_nonblocking` stop right before the event it could not
/// step past, without waiting; serviced again as the data arrives, it
/// delivers exactly what one blocking call delivers, with the right state.
#[test]
fn nonblocking_service_stops_where_the_source_is_not_ready() {
    let make = || {
        let mut s = Scheduler::new(
            linear(300),
            tally_state(),
            SchedulerConfig {
                chunk_events: 16,
                checkpoint_interval: Some(7),
                ..SchedulerConfig::default()
            },
        );
        let mut a = recorder(Start::Time(35), Priority::DEFAULT);
        a.end_time = Some(2_500);
        s.add(a);
        s.add(recorder(Start::Time(100), Priority::LOW));
        s
    };
    let mut blocking = make();
    let expected = run_all(&mut blocking);

    let mut s = make();
    // Nothing decoded yet: the call returns without reading.
    s.source_mut().stall_at(Some(0));
    let r = s.service_nonblocking(Budget::unlimited(), || false);
    assert_eq!(
        (r.status, r.events_read),
        (ServiceStatus::WaitingForData, 0)
    );
    let mut done = r.completed;
    let mut ready = 0;
    let mut waits = 0;
    loop {
        // A little more data each time, in steps unrelated to the chunks.
        ready += 5 + waits % 11;
        s.source_mut().stall_at(Some(ready));
        let r = s.service_nonblocking(Budget::unlimited(), || false);
        done.extend(r.completed);
        if r.status == ServiceStatus::Idle {
            break;
        }
        assert_eq!(r.status, ServiceStatus::WaitingForData);
        // Read up to the event it cannot step past, not beyond.
        assert_eq!(s.source().index(), ready);
        waits += 1;
        assert!(waits < 1_000, "no progress");
    }
    assert!(waits > 20);
    // One seek per request start (the LOW request waits for the other),
    // none for the waits: each resumes where the read stopped.
    assert_eq!(s.stats().seeks, blocking.stats().seeks);
    done.sort_by_key(|c| c.id);
    assert_eq!(done.len(), expected.len());
    for (c, e) in done.iter().zip(&expected) {
        assert!(c.data.violations.is_empty(), "{:?}", c.data.violations);
        assert_eq!(c.reason, e.reason);
        assert_eq!(c.data.events, e.data.events);
        assert_eq!(c.data.pre, e.data.pre);
        assert_eq!(c.data.post, e.data.post);
        assert_eq!(
            c.data.count(Boundary::BeforeChunk),
            c.data.count(Boundary::AfterChunk)
        );
    }
    // A source that is always ready never makes it wait.
    let mut always = make();
    let r = always.service_nonblocking(Budget::unlimited(), || false);
    assert_eq!(r.status, ServiceStatus::Idle);
}

/// `service_nonblocking` checks its time budget inside a chunk too (every
/// `DEADLINE_EVERY` events), where `service` reads the whole chunk.
#[test]
fn nonblocking_service_checks_the_time_budget_inside_chunks() {
    let make = || {
        let mut s = sched(linear(300), true);
        s.add(recorder(Start::Time(0), Priority::DEFAULT));
        s
    };
    let mut s = make();
    let r = s.service(Budget::duration(Duration::ZERO), || false);
    assert_eq!((r.status, r.events_read), (ServiceStatus::Idle, 300));
    let mut s = make();
    let mut done = Vec::new();
    let mut calls = 0;
    loop {
        let r = s.service_nonblocking(Budget::duration(Duration::ZERO), || false);
        calls += 1;
        done.extend(r.completed);
        if r.status == ServiceStatus::Idle {
            break;
        }
        assert_eq!(
            (r.status, r.events_read, r.chunks),
            (ServiceStatus::BudgetSpent, DEADLINE_EVERY, 1)
        );
    }
    assert_eq!(calls, 300u64.div_ceil(DEADLINE_EVERY));
    assert_eq!(done[0].data.events, range(0, 300));
    for (i, p) in done[0].data.events.iter().enumerate() {
        assert_eq!(done[0].data.post[i], tally_of(s.source(), *p as usize + 1));
    }
}

#[test]
fn cancel_calls_end_hooks_only_once_begun_and_returns_the_data() {
    let mut s = sched(linear(30), false);
    let fresh = s.add(recorder(Start::Time(200), Priority::LOW));
    let begun = s.add(recorder(Start::Time(0), Priority::DEFAULT));
    let mut other = recorder(Start::Time(0), Priority::DEFAULT);
    other.owner = OwnerId(2);
    let others = s.add(other);
    let r = s.service(Budget::events(5), || false);
    assert_eq!(r.status, ServiceStatus::BudgetSpent);
    assert!(s.request(begun).unwrap().is_servicing());
    assert!(!s.request(fresh).unwrap().is_servicing());
    let data = s.cancel(begun).unwrap();
    assert_eq!(data.events, range(0, 5));
    assert_eq!(data.count(Boundary::AfterTraceset), 1);
    assert!(data.violations.is_empty(), "{:?}", data.violations);
    assert!(s.cancel(begun).is_none());
    let by_owner = s.cancel_owner(OwnerId(1));
    assert_eq!(by_owner.len(), 1);
    assert_eq!(by_owner[0].0, fresh);
    assert!(
        by_owner[0].1.boundaries.is_empty(),
        "never begun, never ended"
    );
    let done = run_all(&mut s);
    assert_eq!(done[0].id, others);
    assert_eq!(done[0].data.events, range(0, 30));
}

/// Step 5's priority rule: when only less urgent requests remain in
/// list_in and an urgent one waits elsewhere, they are parked with a saved
/// state, the urgent one is serviced, and they resume by restoring it.
#[test]
fn less_urgent_requests_are_parked_and_resume_from_their_saved_state() {
    let mut s = sched(linear(100), true);
    let mut h1 = recorder(Start::Time(0), Priority::HIGH);
    h1.num_events = Some(10);
    s.add(h1);
    let mut h2 = recorder(Start::Time(800), Priority::HIGH);
    h2.num_events = Some(5);
    s.add(h2);
    s.add(recorder(Start::Time(0), Priority::LOW));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, 10));
    assert_eq!(done[1].data.events, range(80, 85));
    assert_eq!(done[2].data.events, range(0, 100));
    let low = &done[2].data;
    // Parked once: two chunks.
    assert_eq!(low.count(Boundary::BeforeChunk), 2);
    for (i, p) in low.events.iter().enumerate() {
        assert_eq!(low.post[i], tally_of(s.source(), *p as usize + 1));
    }
    let st = s.stats();
    assert_eq!(st.parked, 1);
    assert_eq!(st.seeks, 2, "to 800, then back to the parked position");
    assert_eq!(st.state_restores, 1);
    // Only the seek to 800 replays (from the current position at 10).
    assert_eq!(st.replayed_events, 70);
    assert_eq!(
        s.saved_states().count(),
        0,
        "unused saved states are dropped"
    );
}

/// The document's weak case, fixed by one saved state per priority: a low
/// priority read is interrupted, a high priority one is serviced and also
/// interrupted; both resume without recomputing their state.
#[test]
fn one_saved_state_per_priority_survives_nested_interruptions() {
    let mut s = sched(linear(100), true);
    let low = s.add(recorder(Start::Time(0), Priority::LOW));
    let r = s.service(Budget::events(20), || false);
    assert_eq!(r.status, ServiceStatus::BudgetSpent);
    let high = s.add(recorder(Start::Time(600), Priority::HIGH));
    let r = s.service(Budget::events(10), || false);
    assert_eq!(r.status, ServiceStatus::BudgetSpent);
    let saved: Vec<Priority> = s.saved_states().map(|(p, _)| p).collect();
    assert_eq!(saved, vec![Priority::HIGH, Priority::LOW]);
    // Something else used the source meanwhile (otherwise the high request
    // would simply continue from the current position).
    s.source_mut().seek_time(0);
    let before = s.stats();
    let done = run_all(&mut s);
    let after = s.stats();
    assert_eq!(after.state_restores - before.state_restores, 2);
    assert_eq!(
        after.replayed_events, before.replayed_events,
        "no replay needed"
    );
    let get = |id| done.iter().find(|c| c.id == id).unwrap();
    assert_eq!(get(high).data.events, range(60, 100));
    assert_eq!(get(low).data.events, range(0, 100));
    for c in &done {
        for (i, p) in c.data.events.iter().enumerate() {
            assert_eq!(c.data.pre[i], tally_of(s.source(), *p as usize));
        }
    }
}

/// HIGH hooks see the state before the event, DEFAULT hooks after; by-id
/// hooks merge with general hooks by priority.
#[test]
fn hook_priorities_interleave_with_state_hooks() {
    let mut s = sched(linear(12), true);
    let mut r = recorder(Start::Time(0), Priority::DEFAULT);
    let order = Arc::new(Mutex::new(Vec::new()));
    for (prio, tag) in [(Priority::LOW, "low"), (Priority::HIGH, "high")] {
        let order = Arc::clone(&order);
        r.event_by_id.add(2, prio, move |ctx| {
            order
                .lock()
                .unwrap()
                .push((tag, ctx.event.payload, ctx.state.count));
            Flow::Continue
        });
    }
    let o = Arc::clone(&order);
    r.event.add(Priority::DEFAULT, move |ctx| {
        o.lock()
            .unwrap()
            .push(("default", ctx.event.payload, ctx.state.count));
        Flow::Continue
    });
    s.add(r);
    let done = run_all(&mut s);
    let rec = &done[0].data;
    for (i, p) in rec.events.iter().enumerate() {
        assert_eq!(rec.pre[i], tally_of(s.source(), *p as usize));
        assert_eq!(rec.post[i], tally_of(s.source(), *p as usize + 1));
    }
    let order = order.lock().unwrap();
    assert_eq!(
        order[..4].to_vec(),
        vec![
            ("default", 0, 1),
            ("default", 1, 2),
            ("high", 2, 2),
            ("default", 2, 3)
        ]
    );
    assert_eq!(order[4], ("low", 2, 3));
    assert_eq!(order.iter().filter(|o| o.0 == "low").count(), 4);
}

/// At equal priority the state hooks run before request hooks, and requests
/// run in the order they were added.
#[test]
fn equal_priority_ties_put_state_first_then_requests_by_id() {
    let mut s = sched(linear(3), true);
    let log = Arc::new(Mutex::new(Vec::new()));
    for tag in [0u32, 1] {
        let mut r = recorder(Start::Time(0), Priority::DEFAULT);
        let log = Arc::clone(&log);
        r.event.add(Priority::STATE, move |ctx| {
            log.lock()
                .unwrap()
                .push((tag, ctx.event.payload, ctx.state.count));
            Flow::Continue
        });
        s.add(r);
    }
    run_all(&mut s);
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            (0, 0, 1),
            (1, 0, 1),
            (0, 1, 2),
            (1, 1, 2),
            (0, 2, 3),
            (1, 2, 3)
        ]
    );
}

/// Seeking rebuilds the state from the nearest snapshot; every route gives
/// the state a fresh read from the beginning gives.
#[test]
fn seeking_gives_the_state_of_a_fresh_read() {
    for interval in [None, Some(1), Some(7)] {
        let mut s: Sched = Scheduler::new(
            linear(80),
            tally_state(),
            SchedulerConfig {
                chunk_events: 5,
                checkpoint_interval: interval,
                ..SchedulerConfig::default()
            },
        );
        for &t in &[400, 100, 790, 0, 555, 10_000, 300] {
            s.seek_time(t);
            let n = s.source().events().partition_point(|(p, _)| p.time() < t);
            assert_eq!(
                *s.state(),
                tally_of(s.source(), n),
                "time {t}, interval {interval:?}"
            );
        }
        for &i in &[70usize, 3, 42] {
            let p = pos(&s, i);
            s.seek_position(&p);
            assert_eq!(*s.state(), tally_of(s.source(), i));
        }
        if interval == Some(7) {
            assert!(s.checkpoint_count() > 5);
        }
    }
}

/// A time seek with state finds its snapshot from the snapshots' times,
/// without a time seek of the source to learn the target position: one
/// position seek, then a replay up to the first event at or after the
/// time. Timestamps are shared by several events (ties), and snapshots sit
/// on every event (checkpoints taken by the scheduler know their prior
/// bound and can be the target itself) or come without a bound (added).
#[test]
fn time_seeks_with_state_restore_once_and_never_seek_by_time() {
    // Three streams, timestamps 0, 0, 0, 5, 5, 5, 10, ...: ties everywhere.
    let src = || {
        MemorySource::new((0..60u64).map(|i| ev((i / 3) as Time * 5, 0, (i % 3) as u32, i % 3, i)))
    };
    for (interval, added) in [(Some(1), false), (Some(4), false), (None, true)] {
        let mut s: Sched = Scheduler::new(
            src(),
            tally_state(),
            SchedulerConfig {
                chunk_events: 7,
                checkpoint_interval: interval,
                ..SchedulerConfig::default()
            },
        );
        if added {
            let fresh = src();
            let cps: Vec<_> = (0..60)
                .step_by(5)
                .map(|i| (fresh.events()[i].0, tally_of(&fresh, i)))
                .collect();
            s.add_checkpoints(cps);
        } else {
            s.add(recorder(Start::Time(0), Priority::DEFAULT));
            run_all(&mut s);
        }
        for &t in &[47, 5, 0, 300, 6, 95, -4, 10, 50, 12, 99] {
            let (time_seeks, position_seeks) =
                (s.source().time_seeks(), s.source().position_seeks());
            s.seek_time(t);
            let n = s.source().events().partition_point(|(p, _)| p.time() < t);
            let what = format!("time {t}, interval {interval:?}");
            assert_eq!(*s.state(), tally_of(s.source(), n), "{what}");
            assert_eq!(
                s.source().position(),
                s.source()
                    .events()
                    .get(n)
                    .map_or(MemoryPosition::END, |e| e.0),
                "{what}"
            );
            assert_eq!(s.source().time_seeks(), time_seeks, "{what}");
            assert!(s.source().position_seeks() <= position_seeks + 1, "{what}");
            // A time request there joins without another seek and sees the
            // state of a fresh read.
            let seeks = s.stats().seeks;
            let mut r = recorder(Start::Time(t), Priority::DEFAULT);
            r.num_events = Some(4);
            s.add(r);
            let done = run_all(&mut s);
            assert_eq!(s.stats().seeks, seeks, "{what}");
            let got = &done[0].data;
            assert_eq!(
                got.events,
                range(n as u64, (n + 4).min(60) as u64),
                "{what}"
            );
            for (i, p) in got.events.iter().enumerate() {
                assert_eq!(got.pre[i], tally_of(s.source(), *p as usize), "{what}");
            }
        }
        if interval == Some(1) {
            // Checkpoints on every event, each knowing its prior bound: the
            // one at a time's first event is restored as it is.
            let restores = s.stats().state_restores;
            let replayed = s.stats().replayed_events;
            s.source_mut().seek_time(0);
            s.seek_time(25);
            assert_eq!(s.stats().state_restores, restores + 1);
            assert_eq!(s.stats().replayed_events, replayed);
            assert_eq!(*s.state(), tally_of(s.source(), 15));
        }
    }
}

#[test]
fn checkpoints_bound_replay() {
    let mut s: Sched = Scheduler::new(
        linear(1000),
        tally_state(),
        SchedulerConfig {
            chunk_events: 100,
            checkpoint_interval: Some(50),
            ..SchedulerConfig::default()
        },
    );
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    run_all(&mut s);
    let before = s.stats().replayed_events;
    s.add(recorder(Start::Time(5_125), Priority::DEFAULT));
    let done = run_all(&mut s);
    assert!(s.stats().replayed_events - before < 50);
    assert_eq!(done[0].data.pre[0], tally_of(s.source(), 513));
}

/// A request that does not read the state is sought to directly: no
/// replay, no state hooks run; a request that needs the state afterwards
/// still gets the state of a fresh read, and checkpoints stay right.
#[test]
fn requests_without_state_seek_without_replay() {
    let mut s: Sched = Scheduler::new(
        linear(1000),
        tally_state(),
        SchedulerConfig {
            chunk_events: 100,
            checkpoint_interval: Some(50),
            ..SchedulerConfig::default()
        },
    );
    let mut list = recorder(Start::Time(5_125), Priority::DEFAULT);
    list.needs_state = false;
    list.num_events = Some(300);
    s.add(list);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(513, 813));
    assert_eq!(s.stats().replayed_events, 0);
    assert_eq!(s.stats().state_restores, 0);
    // Reading without the state takes no checkpoint.
    assert_eq!(s.checkpoint_count(), 0);
    // A stateful request riding along a stateless read cannot join it; it
    // is serviced with its own, replayed state.
    let mut list = recorder(Start::Time(2_000), Priority::HIGH);
    list.needs_state = false;
    list.num_events = Some(50);
    s.add(list);
    let mut stateful = recorder(Start::Time(2_100), Priority::DEFAULT);
    stateful.num_events = Some(20);
    s.add(stateful);
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(200, 250));
    assert_eq!(done[1].data.events, range(210, 230));
    for (i, p) in done[1].data.events.iter().enumerate() {
        assert_eq!(done[1].data.pre[i], tally_of(s.source(), *p as usize));
        assert_eq!(done[1].data.post[i], tally_of(s.source(), *p as usize + 1));
    }
    assert!(s.stats().replayed_events >= 210);
    for (p, st) in s.checkpoints() {
        let n = s.source().events().partition_point(|(q, _)| q < p);
        assert_eq!(*st, tally_of(s.source(), n));
    }
}

#[test]
fn moving_the_source_behind_the_schedulers_back_is_detected() {
    let mut s = sched(linear(40), true);
    let id = s.add(recorder(Start::Time(0), Priority::DEFAULT));
    s.service(Budget::events(10), || false);
    s.source_mut().seek_time(300);
    s.source_mut().advance();
    let done = run_all(&mut s);
    assert_eq!(done[0].id, id);
    assert_eq!(done[0].data.events, range(0, 40));
    let rec = &done[0].data;
    for (i, p) in rec.events.iter().enumerate() {
        assert_eq!(rec.post[i], tally_of(s.source(), *p as usize + 1));
    }
}

#[test]
fn requests_past_the_end_or_ending_before_they_start() {
    let mut s = sched(linear(10), false);
    s.add(recorder(Start::Time(1_000), Priority::DEFAULT));
    s.add(recorder(
        Start::Position(MemoryPosition::END),
        Priority::HIGH,
    ));
    let mut r = recorder(Start::Time(50), Priority::DEFAULT);
    r.end_time = Some(40);
    s.add(r);
    let done = run_all(&mut s);
    assert!(done.iter().all(|c| c.data.events.is_empty()));
    assert_eq!(done[0].reason, EndReason::EndOfTraceset);
    assert_eq!(done[1].reason, EndReason::EndOfTraceset);
    assert_eq!(done[2].reason, EndReason::EndTime);
}

#[test]
fn empty_traceset_completes_every_request() {
    let mut s = sched(MemorySource::new([]), true);
    s.add(recorder(Start::Time(0), Priority::DEFAULT));
    s.add(recorder(
        Start::Position(MemoryPosition::END),
        Priority::DEFAULT,
    ));
    let done = run_all(&mut s);
    assert_eq!(done.len(), 2);
    let r = s.service(Budget::unlimited(), || true);
    assert_eq!((r.status, r.chunks), (ServiceStatus::Idle, 0));
}

#[test]
fn scheduler_seek_helpers_leave_the_read_where_it_was() {
    let mut s = sched(linear(50), true);
    let id = s.add(recorder(Start::Time(0), Priority::DEFAULT));
    s.service(Budget::events(20), || false);
    let back = s.seek_n_events_backward(&pos(&s, 30), 4, 10, None);
    assert_eq!(back, (26..30).map(|i| pos(&s, i)).collect::<Vec<_>>());
    let mut class0 = |e: &MemoryEvent| e.class_id == 0;
    let fwd = s.seek_n_events_forward(&pos(&s, 30), 2, Some(&mut class0));
    assert_eq!(fwd.position, pos(&s, 36));
    let done = run_all(&mut s);
    assert_eq!(done[0].id, id);
    assert_eq!(done[0].data.events, range(0, 50));
    assert_eq!(s.stats().seeks, 0);
}

/// A paused LOW request is left alone while a HIGH one is serviced, keeps
/// its saved state, and once resumed delivers exactly the events it had not
/// seen, each with the right state.
#[test]
fn paused_request_resumes_where_it_stopped() {
    let mut s = sched(linear(60), true);
    let low = s.add(recorder(Start::Time(0), Priority::LOW));
    let r = s.service(Budget::events(13), || false);
    assert_eq!(r.status, ServiceStatus::BudgetSpent);
    assert!(s.pause(low));
    assert!(s.is_paused(low));
    assert_eq!(s.pending(), 0);
    assert!(!s.pause(low), "already paused");
    // Paused: nothing to service, and a HIGH request elsewhere is read.
    let mut high = recorder(Start::Time(400), Priority::HIGH);
    high.num_events = Some(5);
    s.add(high);
    let done = run_all(&mut s);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].data.events, range(40, 45));
    assert!(s.request(low).is_some() && s.data_mut(low).is_some());
    // The saved state of the paused priority is kept.
    assert!(s.saved_states().any(|(p, _)| p == Priority::LOW));
    assert!(s.resume(low));
    assert!(!s.resume(low));
    let done = run_all(&mut s);
    assert_eq!(done.len(), 1);
    let rec = &done[0].data;
    assert_eq!(rec.events, range(0, 60));
    for (i, p) in rec.events.iter().enumerate() {
        assert_eq!(rec.pre[i], tally_of(s.source(), *p as usize));
        assert_eq!(rec.post[i], tally_of(s.source(), *p as usize + 1));
    }
}

/// A paused request can be cancelled: its end hooks run and its data comes
/// back.
#[test]
fn paused_request_can_be_cancelled() {
    let mut s = sched(linear(30), true);
    let low = s.add(recorder(Start::Time(0), Priority::LOW));
    s.service(Budget::events(10), || false);
    assert!(s.pause(low));
    let rec = s.cancel(low).expect("data back");
    assert!(rec.ended && rec.violations.is_empty());
    assert!(!s.is_paused(low));
    assert!(s.saved_states().next().is_none());
}

/// A state that counts its copies.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counted(u64);

static COUNTED_CLONES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Clone for Counted {
    fn clone(&self) -> Self {
        COUNTED_CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Counted(self.0)
    }
}

/// Yielding and resuming at the same position (an interactive loop's
/// budget slices) copies the state no more than once, however many times
/// it yields; a preemption by a request elsewhere still saves it, and the
/// preempted request resumes with the right state.
#[test]
fn yields_at_the_same_position_do_not_copy_the_state() {
    use std::sync::atomic::Ordering;
    let mut st: StateComputation<MemorySource, Counted> = StateComputation::new(Counted(0));
    st.hooks.add(Priority::STATE, |ctx| {
        ctx.data.0 += 1;
        Flow::Continue
    });
    let config = SchedulerConfig {
        chunk_events: 4,
        checkpoint_interval: None,
        ..SchedulerConfig::default()
    };
    let mut s: Scheduler<MemorySource, Counted, Vec<u64>> = Scheduler::new(linear(400), st, config);
    type Req = EventsRequest<MemorySource, Counted, Vec<u64>>;
    let mut low: Req = EventsRequest::new(OwnerId(1), Start::Time(0), Vec::new());
    low.priority = Priority::LOW;
    low.event.add(Priority::DEFAULT, |ctx| {
        // The state after the event: the events read so far.
        assert_eq!(ctx.state.0, ctx.event.payload + 1);
        ctx.data.push(ctx.event.payload);
        Flow::Continue
    });
    s.add(low);
    let before = COUNTED_CLONES.load(Ordering::Relaxed);
    let mut yields = 0;
    let mut done = Vec::new();
    for i in 0.. {
        if i == 30 {
            // Preempted by a request elsewhere: the LOW state is saved.
            let mut high: Req = EventsRequest::new(OwnerId(2), Start::Time(3_500), Vec::new());
            high.priority = Priority::HIGH;
            high.num_events = Some(3);
            high.event.add(Priority::DEFAULT, |ctx| {
                assert_eq!(ctx.state.0, ctx.event.payload + 1);
                ctx.data.push(ctx.event.payload);
                Flow::Continue
            });
            s.add(high);
        }
        let r = s.service(Budget::events(8), || false);
        done.extend(r.completed);
        if r.status == ServiceStatus::Idle {
            break;
        }
        yields += 1;
    }
    let clones = COUNTED_CLONES.load(Ordering::Relaxed) - before;
    assert!(yields > 40, "{yields} yields");
    // One copy for the preemption, one to restore it: not one per yield.
    assert!(clones <= 3, "{clones} copies for {yields} yields");
    done.sort_by_key(|c| c.id);
    assert_eq!(done[0].data, range(0, 400));
    assert_eq!(done[1].data, range(350, 353));
}

/// Periodic checkpoints stay at most [`MAX_CHECKPOINTS`] however long the
/// read, spread over the whole of it, and seeks with state from them stay
/// exact.
#[test]
fn periodic_checkpoints_stop_when_the_interval_is_unset() {
    let mut s = Scheduler::new(
        linear(1000),
        tally_state(),
        SchedulerConfig {
            chunk_events: 64,
            checkpoint_interval: Some(10),
            ..SchedulerConfig::default()
        },
    );
    let mut r = recorder(Start::Time(0), Priority::LOW);
    r.num_events = Some(100);
    s.add(r);
    run_all(&mut s);
    let before = s.checkpoint_count();
    assert!(before >= 9, "{before} checkpoints in 100 events");
    s.set_checkpoint_interval(None);
    s.add(recorder(Start::Position(pos(&s, 100)), Priority::LOW));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(100, 1000));
    assert_eq!(s.checkpoint_count(), before);
}

/// Periodic checkpoints stay at most the configured number (the default
/// [`MAX_CHECKPOINTS`], or fewer) however long the read, spread over the
/// whole of it, and seeks with state from them stay exact.
#[test]
fn periodic_checkpoints_are_bounded_and_spread() {
    for max in [MAX_CHECKPOINTS, 8] {
        checkpoints_bounded_and_spread(max);
    }
}

fn checkpoints_bounded_and_spread(max: usize) {
    let n = (max as u64) * 5;
    let mut s = Scheduler::new(
        linear(n),
        tally_state(),
        SchedulerConfig {
            chunk_events: 64,
            checkpoint_interval: Some(1),
            max_checkpoints: max,
        },
    );
    s.add(recorder(Start::Time(0), Priority::LOW));
    let done = run_all(&mut s);
    assert_eq!(done[0].data.events, range(0, n));
    let kept = s.checkpoint_count();
    assert!(
        (max / 2..=max).contains(&kept),
        "{kept} checkpoints kept of at most {max}"
    );
    // Spread: the last one is in the last quarter of the read.
    let last = s.checkpoints().last().map(|(p, _)| *p).unwrap();
    assert!(
        last >= pos(&s, (n as usize) * 3 / 4),
        "last checkpoint at {last:?}"
    );
    for target in [1, n / 3, n - 7] {
        let mut r = recorder(Start::Position(pos(&s, target as usize)), Priority::HIGH);
        r.num_events = Some(2);
        s.add(r);
        let done = run_all(&mut s);
        let d = &done[0].data;
        assert_eq!(d.events, range(target, target + 2));
        assert_eq!(d.pre[0], tally_of(s.source(), target as usize));
    }
}
