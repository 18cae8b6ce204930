//! Events requests and their scheduler: LTTV's strict-boundaries servicing,
//! revised algorithm (v2), over an abstract traceset.
//!
//! Design source: `lttv-events-requests-servicing.txt` (Mathieu Desnoyers,
//! 2004), section "Revised Events Requests Servicing Algorithm (v2)", and
//! `lttv-detailed-event-list-redesign.txt` for [`seek_n_events_backward`]
//! and [`seek_n_events_forward`].
//!
//! # Pieces
//!
//! * [`EventSource`] — what the scheduler needs from a traceset: seek to a
//!   time, seek to a position, the current event (time, position,
//!   event-class id, trace/stream ids), step past it. Positions are `Ord` in
//!   reading order and `Clone`, so they can be saved and sought back to.
//!   [`MemorySource`] is an in-memory implementation (streams merged by time,
//!   ties broken by stream id then order in the stream); the CTF traceset
//!   will implement the same trait.
//! * [`EventsRequest`] — the document's `EventsRequest`: owner (viewer),
//!   `servicing` flag, priority, start time *or* start position
//!   ([`Start`]), stop flag, end time, number of events, end position, the
//!   before/after traceset, trace, tracefile (stream) and chunk hooks, the
//!   event hooks and by-id event hooks (from `traceloom_hooks`), and the
//!   request's own data, handed to every hook as `ctx.data`. A per-request
//!   filter predicate is an addition: rejected events are neither delivered
//!   nor counted.
//! * [`Scheduler`] — owns the source, the requests (added with
//!   [`Scheduler::add`], which returns a [`RequestId`] handle, and removed
//!   with [`Scheduler::cancel`] / [`Scheduler::cancel_owner`]) and the
//!   traceset state `S`, computed by state hooks ([`StateComputation`]).
//!
//! # Boundaries
//!
//! A request receives, in reading order and exactly once, the events from
//! its start (first event with time `>=` start time, or the event at the
//! start position) that its filter accepts, until: the next event's time
//! is `>` its end time (inclusive end time); it received `num_events`
//! events; the next event's position is `>=` its end position (exclusive,
//! the document's "`>=` for position"); one of its hooks returned
//! [`Flow::Stop`](traceloom_hooks::Flow::Stop) (the event on which it did
//! was delivered, to this request and to all others); or the traceset ends.
//! Its begin hooks (`before_traceset`, then per trace `before_trace` and its
//! streams' `before_tracefile`) run once before its first event and its end
//! hooks (the mirror, ending with `after_traceset`) once after its last —
//! also when it is cancelled after servicing began. `before_chunk` /
//! `after_chunk` bracket every stretch during which its hooks are in the
//! read.
//!
//! # The algorithm, step by step
//!
//! [`Scheduler::service`] is loop **A**. The two lists of the document are
//! fields of the scheduler: `list_in`, the requests whose hooks are in the
//! read, and `list_out`, the waiting ones. Between `service` calls `list_in`
//! is always empty, so adding or cancelling a request between chunks
//! restarts the algorithm from the top, as the document wants.
//!
//! Each turn of the loop:
//!
//! 1. **list_in empty: choose and seek** (`step1_seek`).
//!    1.1 Among list_out, take the most urgent priority (lowest value, as
//!    for hooks: [`Priority::HIGH`](traceloom_hooks::Priority::HIGH) first);
//!    within it, the lowest start time (ltime) and the lowest start position
//!    (lpos); lpos wins only if its time is strictly lower than ltime
//!    (1.1.3/1.1.4). All requests of that priority starting there are
//!    chosen. 1.2 Seek there unless the read is already there: for a time,
//!    "already there" is exact (see step 2); for a position, equality with
//!    the current position. When seeking to a position that has a saved
//!    state, the state is restored instead of being recomputed. 1.3 is done
//!    by step 2.
//! 2. **Join** (`step2_join`). Every list_out request that starts at the
//!    current position moves to list_in — whatever its priority, so a
//!    lower-priority request rides along for free — together with the
//!    requests chosen in step 1. If not `servicing` yet, its begin hooks run
//!    and `servicing` becomes true; then `before_chunk`; its event hooks
//!    enter the merged hook order. The document's test for time requests,
//!    `start time == current time`, is made exact: the request joins when no
//!    event already read has a time `>=` its start and the current event's
//!    time is `>=` its start. This matters because several events share
//!    timestamps and a chunk can stop between them; it also lets a request
//!    starting at 5 join before an event at 7 when nothing lies in between.
//! 3. **End criteria** (`step3_criteria`): lowest end time in list_in
//!    (3.1.1), lowest start time in list_out still ahead of the read
//!    (3.1.2 — starts already passed belong to requests that will need a
//!    seek), number of events (3.2, enforced per request because filters
//!    make counts differ; the chunk stops as soon as one request has its
//!    count), the chunk size `min(CHUNK_NUM_EVENTS, budget left)` (3.2.2),
//!    lowest end position in list_in (3.3.1) and lowest start position in
//!    list_out still ahead (3.3.3).
//! 4. **Read** (`step4_read`, the document's `process_traceset_middle`):
//!    for each event, the state hooks and the event/by-id hooks of every
//!    request of list_in (whose filter accepts the event) are called in one
//!    merged order — by priority; at equal priority state hooks first, then
//!    requests by id, then insertion order — so that a `HIGH` hook sees the
//!    state before the event and a `DEFAULT` hook after it. A hook returning
//!    `Stop` raises its request's stop flag and the read stops after the
//!    event.
//! 5. **After the chunk** (`step5_after_chunk`): each request of list_in
//!    whose count is reached, whose stop flag is raised, whose end time is
//!    passed, whose end position is reached, or everybody at the end of the
//!    traceset, gets `after_chunk` then its end hooks, leaves list_in and is
//!    reported in [`ServiceReport::completed`] with its data. Then the
//!    priority rule: the document moves back to list_out (start := current
//!    position, `after_chunk`, state saved) every request for which a more
//!    urgent request waits away from the current position — but its step 2
//!    would re-join it immediately while list_in is not empty. The net
//!    effect is implemented directly: when every request left in list_in is
//!    less urgent than some request waiting elsewhere, they are all parked
//!    that way, list_in empties, and step 1 goes to the urgent one.
//!
//! After each chunk, if the [`Budget`] (events and/or wall time) is spent or
//! `pending_input()` returns `true`, **B** runs (`park_all`): every request
//! of list_in takes the current position as its start position (its start
//! time is dropped), gets `after_chunk`, its hooks leave the read, it goes
//! back to list_out, and the current state is saved; then `service`
//! returns. The check happens after a chunk, never before the first one, so
//! every call makes progress however eager `pending_input` is. The loop
//! also returns ([`ServiceStatus::Idle`]) when both lists are empty — the
//! document's `while list_in !empty and list_out !empty` is meant as "or".
//!
//! # Saved states and the traceset state
//!
//! The document keeps one saved state and notes that a low-priority read
//! interrupted under a high-priority one that is itself interrupted loses
//! its state; the fix it suggests is implemented: **one saved state per
//! priority** ([`Scheduler::saved_states`]). Parking requests of priority
//! `p` at position `x` stores `(x, state)` for `p`; when step 1 later seeks
//! to `x`, that state is restored without recomputation. Saved states no
//! waiting request starts from are dropped.
//!
//! The state is a function of the events read from the beginning of the
//! traceset, so after any other seek it is rebuilt: from the latest snapshot
//! at or before the target — the current state when seeking forward, a saved
//! state, a periodic checkpoint ([`SchedulerConfig::checkpoint_interval`],
//! LTTV's periodic saved states) or the initial state — by replaying the
//! events in between through the state hooks only. Resuming thus always
//! gives what a fresh read from the beginning gives. Without state hooks the
//! state never changes and seeks cost nothing more than the source's seek.
//! A time target is not looked up first: positions order by time first, so
//! the snapshot to restore is chosen from the snapshots' own times (and
//! prior bounds), and the replay stops at the first event at or after the
//! time — one position seek per seek with state.
//!
//! Requests that do not read the state
//! ([`EventsRequest::needs_state`] `false`, e.g. an event list) skip all
//! that: when step 1 chooses only such requests, it seeks with the source's
//! own seek and the state becomes unknown; state hooks are not run and no
//! checkpoint is taken while it is; requests that need the state neither
//! join such a read nor cut its chunks, and the next step 1 choosing one of
//! them recovers the state as above.
//!
//! # Driving it
//!
//! ```
//! use traceloom_engine::request::*;
//! use traceloom_hooks::{Flow, Priority};
//!
//! let source = MemorySource::new((0..100).map(|i| MemoryEvent {
//!     time: i * 10,
//!     class_id: (i % 4) as u64,
//!     stream: StreamId::new(0, (i % 2) as u32),
//!     payload: i as u64,
//! }));
//! let mut sched: Scheduler<MemorySource, (), Vec<u64>> =
//!     Scheduler::new(source, StateComputation::new(()), SchedulerConfig::default());
//! // The source type cannot be inferred from the hooks' closures: name it.
//! let mut req: EventsRequest<MemorySource, (), Vec<u64>> =
//!     EventsRequest::new(OwnerId(1), Start::Time(250), Vec::new());
//! req.num_events = Some(3);
//! req.event.add(Priority::DEFAULT, |ctx| {
//!     ctx.data.push(ctx.event.payload);
//!     Flow::Continue
//! });
//! let id = sched.add(req);
//! let report = sched.service(Budget::unlimited(), || false);
//! assert_eq!(report.status, ServiceStatus::Idle);
//! assert_eq!(report.completed[0].id, id);
//! assert_eq!(report.completed[0].data, vec![25, 26, 27]);
//! ```

mod event_source;
mod events_request;
mod memory;
mod scheduler;
mod seek;
mod state_computation;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use event_source::{EventSource, SourceEvent, SourcePosition, StreamId};
pub use events_request::{
    Boundary, BoundaryHooks, EventFilter, EventHooks, EventHooksById, EventOf, EventsRequest,
    OwnerId, PositionOf, RequestId, Start,
};
pub use memory::{MemoryEvent, MemoryPosition, MemorySource};
pub use scheduler::{
    Budget, Completed, EndReason, Scheduler, SchedulerConfig, SchedulerStats, ServiceReport,
    ServiceStatus, DEADLINE_EVERY, MAX_CHECKPOINTS,
};
pub use seek::{seek_n_events_backward, seek_n_events_forward, EventPredicate, ForwardSeek};
pub use state_computation::{SavedState, StateComputation, StateHooks, StateHooksById};
