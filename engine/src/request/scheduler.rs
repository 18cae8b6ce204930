//! The events-request scheduler: LTTV's revised servicing algorithm (v2).
//!
//! See the [module documentation](super) for how the steps of the design
//! document map onto the functions here.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use traceloom_base::Time;

use traceloom_hooks::{Flow, HookContext, HookHandle, Priority};

use traceloom_base::FastMap;

use super::event_source::{EventSource, SourceEvent, SourcePosition, StreamId};
use super::events_request::{
    Boundary, BoundaryHooks, EventOf, EventsRequest, OwnerId, PositionOf, RequestId, Start,
};
use super::seek::{self, EventPredicate, ForwardSeek};
use super::state_computation::{SavedState, StateComputation, StateHooks, StateHooksById};

/// Tunables of a [`Scheduler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Maximum events read by one call of the read loop (the document's
    /// `CHUNK_NUM_EVENTS`); budgets and pending input are checked between
    /// such calls. At least 1.
    pub chunk_events: u64,
    /// Take a state checkpoint every this many events read (only when state
    /// hooks exist); checkpoints bound how far back a seek has to replay.
    /// `None` disables checkpoints. Once more than
    /// [`max_checkpoints`](Self::max_checkpoints) are kept, every other
    /// one is dropped and the interval doubles: a checkpoint is a whole
    /// state, and a trace can be any length.
    pub checkpoint_interval: Option<u64>,
    /// Most periodic checkpoints kept (at least 2): [`MAX_CHECKPOINTS`] by
    /// default; fewer for a state that grows with the trace (a Pajé
    /// simulation holds every container ever created), whose checkpoints
    /// would otherwise weigh O(trace²).
    pub max_checkpoints: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            chunk_events: 4096,
            checkpoint_interval: Some(50_000),
            max_checkpoints: MAX_CHECKPOINTS,
        }
    }
}

/// Most state checkpoints a scheduler keeps by default (see
/// [`SchedulerConfig::checkpoint_interval`]). Whole states of a kernel
/// trace weigh tens of KB each: every 50,000 events, an 8 GB trace
/// kept 8,000 of them, hundreds of MB.
pub const MAX_CHECKPOINTS: usize = 1024;

/// How often (in events) [`Scheduler::service_nonblocking`] checks its time
/// budget inside a chunk: reading the clock costs more than an event's
/// bookkeeping, and 64 events take well under a millisecond.
pub const DEADLINE_EVERY: u64 = 64;

/// How a [`Scheduler::service_nonblocking`] read stops inside a chunk.
#[derive(Debug, Clone, Copy)]
struct Yielding {
    /// When the call's time budget runs out.
    deadline: Option<Instant>,
}

/// How much work one [`Scheduler::service`] call may do before yielding.
///
/// The budget is checked after each chunk, so a call reads at least one
/// chunk; chunks are shortened so as not to exceed `max_events` (but never
/// below one event, so `Some(0)` still reads one). State replays after a
/// seek are not counted nor interrupted; checkpoints bound their length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// Events to read (for requests) at most.
    pub max_events: Option<u64>,
    /// Wall time to spend at most.
    pub max_duration: Option<Duration>,
}

impl Budget {
    /// No limit: service until every request is complete (or input is
    /// pending).
    pub fn unlimited() -> Self {
        Budget::default()
    }

    /// At most `n` events.
    pub fn events(n: u64) -> Self {
        Budget {
            max_events: Some(n),
            max_duration: None,
        }
    }

    /// At most `d` of wall time.
    pub fn duration(d: Duration) -> Self {
        Budget {
            max_events: None,
            max_duration: Some(d),
        }
    }
}

/// Why [`Scheduler::service`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceStatus {
    /// No request is left.
    Idle,
    /// The budget was spent; requests remain.
    BudgetSpent,
    /// `pending_input()` returned `true`; requests remain.
    PendingInput,
    /// The source was not ready to go on without waiting (only from
    /// [`Scheduler::service_nonblocking`]); requests remain.
    WaitingForData,
}

/// Why a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// Its number of events was delivered.
    NumEvents,
    /// One of its hooks returned `Stop`.
    Stopped,
    /// The next event is after its end time.
    EndTime,
    /// The next event is at or after its end position.
    EndPosition,
    /// The traceset has no more events.
    EndOfTraceset,
}

/// A request that ended during a [`Scheduler::service`] call.
#[derive(Debug)]
pub struct Completed<D> {
    /// Its handle.
    pub id: RequestId,
    /// Its owner.
    pub owner: OwnerId,
    /// Why it ended.
    pub reason: EndReason,
    /// How many events it received.
    pub delivered: u64,
    /// Its own data, given back.
    pub data: D,
}

/// What a [`Scheduler::service`] call did.
#[derive(Debug)]
pub struct ServiceReport<D> {
    /// Why it returned.
    pub status: ServiceStatus,
    /// Events read for requests (replays for state recovery not included).
    pub events_read: u64,
    /// Read-loop calls (chunks).
    pub chunks: u64,
    /// Requests that ended, in the order they ended.
    pub completed: Vec<Completed<D>>,
}

/// Counters over the scheduler's life, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedulerStats {
    /// Seeks the algorithm decided (step 1.2), however the state was then
    /// recovered.
    pub seeks: u64,
    /// Seeks that landed exactly on a saved state or a checkpoint, so the
    /// state was restored without replay.
    pub state_restores: u64,
    /// Events replayed through the state hooks only, to rebuild the state
    /// after a seek.
    pub replayed_events: u64,
    /// Events read for requests.
    pub events_read: u64,
    /// Requests moved back to list_out with a saved state (interruptions and
    /// preemptions).
    pub parked: u64,
}

/// The scheduler's knowledge about the source's cursor.
#[derive(Debug, Clone)]
struct Cursor<P> {
    /// Where the scheduler left the source.
    position: P,
    /// When known, every event before `position` has a time lower than this.
    prior_bound: Option<Time>,
    /// Position of the event read just before `position` in the current
    /// continuous read, if any.
    last_read: Option<P>,
    /// The scheduler's state is the state at `position`.
    state_valid: bool,
}

/// One hook of the merged calling order of a chunk.
#[derive(Debug, Clone, Copy)]
enum HookRef {
    State {
        by_id: bool,
        index: usize,
    },
    Request {
        slot: usize,
        by_id: bool,
        index: usize,
    },
}

/// Merged calling order of the hooks of the state and of every request in
/// list_in, per event-class id. Rebuilt lazily whenever list_in changes
/// (the document's "events hooks added / removed").
#[derive(Default)]
struct Plan {
    // Looked up for every event read: a cheap hash.
    per_id: FastMap<u64, Vec<HookRef>>,
}

struct Slot<Src: EventSource, S, D> {
    id: RequestId,
    req: EventsRequest<Src, S, D>,
}

/// End criteria of one chunk (step 3).
struct Criteria<P> {
    /// Lowest end time in list_in: stop before an event after it.
    end_time: Option<Time>,
    /// Lowest start time in list_out still ahead: stop before an event at or
    /// after it, so the request can join.
    next_start_time: Option<Time>,
    /// Lowest end position in list_in: stop before it.
    end_position: Option<P>,
    /// Lowest start position in list_out still ahead: stop before it.
    next_start_position: Option<P>,
    /// Chunk size.
    max_events: u64,
}

/// Where step 1 decided to go.
enum Target<P> {
    Time(Time),
    Position(P),
}

/// Whether a waiting or paused request of priority `prio` resumes at
/// `position` (and so may use a state saved there).
fn resumes_at<Src: EventSource, S, D>(
    list_out: &BTreeMap<RequestId, EventsRequest<Src, S, D>>,
    paused: &BTreeMap<RequestId, EventsRequest<Src, S, D>>,
    prio: Priority,
    position: &PositionOf<Src>,
) -> bool {
    list_out
        .values()
        .chain(paused.values())
        .any(|r| r.priority == prio && matches!(&r.start, Start::Position(p) if p == position))
}

/// Priorities whose saved state is the live state at `position`, not
/// copied yet.
#[derive(Debug)]
struct LazySaved<P> {
    position: P,
    prior_bound: Option<Time>,
    priorities: Vec<Priority>,
}

/// Services [`EventsRequest`]s over an [`EventSource`], computing a state
/// of type `S` along the way; `D` is the requests' own data type.
///
/// Drive it by calling [`service`](Self::service) repeatedly (from a GUI's
/// idle handler, or in a loop): each call reads chunks until the requests
/// are all complete, the budget is spent, or `pending_input()` asks to
/// yield. Between calls, requests can be [added](Self::add) and
/// [cancelled](Self::cancel); the next call starts the algorithm over.
pub struct Scheduler<Src: EventSource, S, D> {
    source: Src,
    streams: Vec<StreamId>,
    config: SchedulerConfig,
    state: S,
    state_hooks: StateHooks<Src, S>,
    state_hooks_by_id: StateHooksById<Src, S>,
    /// Whether any state hook exists; without, the state never changes and
    /// seeks need no recovery.
    stateful: bool,
    /// The state at the first event.
    initial: SavedState<PositionOf<Src>, S>,
    /// Periodic snapshots (position, state, prior bound), sorted by
    /// position, one per position: a vector, so that a time seek can find
    /// the last one before a time by bisection.
    checkpoints: Vec<(PositionOf<Src>, S, Option<Time>)>,
    since_checkpoint: Periodic,
    /// One saved state per request priority (the document's suggested fix
    /// to its single saved state).
    saved: BTreeMap<Priority, SavedState<PositionOf<Src>, S>>,
    /// Priorities parked whose saved state is still the live state: copied
    /// into `saved` only if the state is about to change before they
    /// resume ([`materialize_saved`](Self::materialize_saved)). Parking
    /// and resuming at the same position — every yield of an interactive
    /// loop — then copies nothing.
    lazy_saved: Option<LazySaved<PositionOf<Src>>>,
    /// Requests whose hooks are in the read, sorted by id.
    list_in: Vec<Slot<Src, S, D>>,
    /// Requests waiting.
    list_out: BTreeMap<RequestId, EventsRequest<Src, S, D>>,
    /// Requests paused by their owner: kept with their position and data,
    /// not serviced until resumed.
    paused: BTreeMap<RequestId, EventsRequest<Src, S, D>>,
    cursor: Cursor<PositionOf<Src>>,
    plan: Plan,
    next_id: u64,
    stats: SchedulerStats,
}

impl<Src: EventSource, S: Clone, D> Scheduler<Src, S, D> {
    /// A scheduler reading `source` and computing the state described by
    /// `state`.
    pub fn new(mut source: Src, state: StateComputation<Src, S>, config: SchedulerConfig) -> Self {
        source.seek_time(Time::MIN);
        let start = source.position();
        let streams = source.streams();
        let stateful = !state.hooks.is_empty() || !state.hooks_by_id.is_empty();
        Scheduler {
            source,
            streams,
            config: SchedulerConfig {
                chunk_events: config.chunk_events.max(1),
                checkpoint_interval: config.checkpoint_interval.filter(|&n| n > 0),
                max_checkpoints: config.max_checkpoints.max(2),
            },
            state: state.initial.clone(),
            state_hooks: state.hooks,
            state_hooks_by_id: state.hooks_by_id,
            stateful,
            initial: SavedState {
                position: start.clone(),
                state: state.initial,
                // Nothing precedes the first event.
                prior_bound: Some(Time::MIN),
            },
            checkpoints: Vec::new(),
            since_checkpoint: Periodic::default(),
            saved: BTreeMap::new(),
            lazy_saved: None,
            list_in: Vec::new(),
            list_out: BTreeMap::new(),
            paused: BTreeMap::new(),
            cursor: Cursor {
                position: start,
                prior_bound: Some(Time::MIN),
                last_read: None,
                state_valid: true,
            },
            plan: Plan::default(),
            next_id: 0,
            stats: SchedulerStats::default(),
        }
    }

    /// The state checkpoints kept: each position with the state before the
    /// event there, in position order.
    pub fn checkpoints(&self) -> impl Iterator<Item = (&PositionOf<Src>, &S)> {
        self.checkpoints.iter().map(|(p, s, _)| (p, s))
    }

    /// Changes the interval of the periodic checkpoints (`None`: none are
    /// taken from now on). A reader whose checkpoints come from elsewhere
    /// (a checkpoint pass beside it, a cache) need not take its own: each
    /// is a whole state, and a long pass keeps up to
    /// [`SchedulerConfig::max_checkpoints`].
    pub fn set_checkpoint_interval(&mut self, every: Option<u64>) {
        self.config.checkpoint_interval = every.filter(|&n| n > 0);
    }

    /// Adds checkpoints computed elsewhere (a persisted cache, a background
    /// pass): each must be the state a fresh read from the start has before
    /// the event at its position. Seeks then replay from the nearest one.
    pub fn add_checkpoints(&mut self, checkpoints: impl IntoIterator<Item = (PositionOf<Src>, S)>) {
        for (p, s) in checkpoints {
            insert_checkpoint(&mut self.checkpoints, p, || (s, None));
        }
    }

    /// Adds a request; it will be serviced by the next
    /// [`service`](Self::service) calls.
    pub fn add(&mut self, mut request: EventsRequest<Src, S, D>) -> RequestId {
        request.servicing = false;
        request.stop_flag = false;
        request.delivered = 0;
        let id = RequestId(self.next_id);
        self.next_id += 1;
        self.list_out.insert(id, request);
        id
    }

    /// Cancels a request and gives its data back; `None` if it is unknown or
    /// already complete. A request whose servicing began gets its end hooks
    /// called first, so begin and end hooks always pair.
    pub fn cancel(&mut self, id: RequestId) -> Option<D> {
        // Between service calls list_in is always empty: interruption (B)
        // moved everything back to list_out.
        debug_assert!(self.list_in.is_empty());
        let mut req = self
            .list_out
            .remove(&id)
            .or_else(|| self.paused.remove(&id))?;
        if req.servicing {
            let position = self.source.position();
            call_end_hooks(&self.streams, &mut req, &position, &self.state);
        }
        self.prune_saved_states();
        Some(req.data)
    }

    /// Cancels every request of `owner` (see [`cancel`](Self::cancel)).
    pub fn cancel_owner(&mut self, owner: OwnerId) -> Vec<(RequestId, D)> {
        let ids: Vec<RequestId> = self
            .list_out
            .iter()
            .chain(&self.paused)
            .filter(|(_, r)| r.owner == owner)
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.cancel(id).map(|d| (id, d)))
            .collect()
    }

    /// A pending (or paused) request.
    pub fn request(&self, id: RequestId) -> Option<&EventsRequest<Src, S, D>> {
        self.list_out.get(&id).or_else(|| self.paused.get(&id))
    }

    /// Brings the end of a pending (or paused) request forward to
    /// position `end` (exclusive), unless it has already read past it;
    /// whether it did. A reader that learns where to stop only while it
    /// reads (a part of a parallel pass whose successor's start is found
    /// by another thread) sets it between two service calls.
    pub fn set_end_position(&mut self, id: RequestId, end: PositionOf<Src>) -> bool {
        let r = match self.list_out.get_mut(&id) {
            Some(r) => r,
            None => match self.paused.get_mut(&id) {
                Some(r) => r,
                None => return false,
            },
        };
        if matches!(&r.start, Start::Position(p) if *p > end) {
            return false;
        }
        r.end_position = Some(match r.end_position.take() {
            Some(e) => e.min(end),
            None => end,
        });
        true
    }

    /// The data of a pending (or paused) request.
    pub fn data_mut(&mut self, id: RequestId) -> Option<&mut D> {
        match self.list_out.get_mut(&id) {
            Some(r) => Some(&mut r.data),
            None => self.paused.get_mut(&id).map(|r| &mut r.data),
        }
    }

    /// Pauses a pending request: it keeps its data and the position it
    /// reached, and is not serviced until [`resume`](Self::resume)d; its
    /// priority's saved state is kept, so resuming goes on from there
    /// without replaying. `false` if it is not pending.
    pub fn pause(&mut self, id: RequestId) -> bool {
        // Between service calls list_in is always empty (see `cancel`).
        debug_assert!(self.list_in.is_empty());
        match self.list_out.remove(&id) {
            Some(r) => {
                self.paused.insert(id, r);
                true
            }
            None => false,
        }
    }

    /// Resumes a paused request: the next service calls go on with it from
    /// where it was paused. `false` if it is not paused.
    pub fn resume(&mut self, id: RequestId) -> bool {
        match self.paused.remove(&id) {
            Some(r) => {
                self.list_out.insert(id, r);
                true
            }
            None => false,
        }
    }

    /// Whether request `id` is paused.
    pub fn is_paused(&self, id: RequestId) -> bool {
        self.paused.contains_key(&id)
    }

    /// Reads at most `n` events (at least 1) between two checks of the
    /// budget and of pending input ([`SchedulerConfig::chunk_events`]).
    pub fn set_chunk_events(&mut self, n: u64) {
        self.config.chunk_events = n.max(1);
    }

    /// Number of pending requests (paused ones not counted).
    pub fn pending(&self) -> usize {
        self.list_out.len() + self.list_in.len()
    }

    /// `true` when no request is pending.
    pub fn is_idle(&self) -> bool {
        self.pending() == 0
    }

    /// The source.
    pub fn source(&self) -> &Src {
        &self.source
    }

    /// The source, mutably. Moving its cursor is allowed: the next service
    /// notices and recovers the state by seeking.
    pub fn source_mut(&mut self) -> &mut Src {
        &mut self.source
    }

    /// The state at the source's current position (as left by the last
    /// service or seek).
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The saved states, one per priority of parked requests (those parked
    /// without a copy of the live state are copied first).
    pub fn saved_states(
        &mut self,
    ) -> impl Iterator<Item = (Priority, &SavedState<PositionOf<Src>, S>)> {
        self.materialize_saved();
        self.saved.iter().map(|(p, s)| (*p, s))
    }

    /// Number of state checkpoints kept.
    pub fn checkpoint_count(&self) -> usize {
        self.checkpoints.len()
    }

    /// Counters.
    pub fn stats(&self) -> SchedulerStats {
        self.stats
    }

    /// Moves to the first event at or after `time` and brings the state
    /// there (restoring a snapshot and replaying as needed). Only between
    /// service calls; pending requests are unaffected.
    pub fn seek_time(&mut self, time: Time) {
        self.sync_cursor();
        self.seek_with_state(Target::Time(time));
    }

    /// Moves to `position` and brings the state there.
    pub fn seek_position(&mut self, position: &PositionOf<Src>) {
        self.sync_cursor();
        self.seek_with_state(Target::Position(position.clone()));
    }

    /// [`seek::seek_n_events_backward`] on this scheduler's source; the
    /// source is put back where it was.
    pub fn seek_n_events_backward(
        &mut self,
        from: &PositionOf<Src>,
        n: usize,
        initial_offset: Time,
        filter: Option<&mut EventPredicate<Src::Event>>,
    ) -> Vec<PositionOf<Src>> {
        let out = seek::seek_n_events_backward(&mut self.source, from, n, initial_offset, filter);
        self.source.seek_position(&self.cursor.position.clone());
        out
    }

    /// [`seek::seek_n_events_forward`] on this scheduler's source; the
    /// source is put back where it was.
    pub fn seek_n_events_forward(
        &mut self,
        from: &PositionOf<Src>,
        n: u64,
        filter: Option<&mut EventPredicate<Src::Event>>,
    ) -> ForwardSeek<PositionOf<Src>> {
        let out = seek::seek_n_events_forward(&mut self.source, from, n, filter);
        self.source.seek_position(&self.cursor.position.clone());
        out
    }

    /// Services pending requests (loop A of the v2 algorithm) until none is
    /// left, `budget` is spent, or `pending_input()` returns `true`; the last
    /// two are checked after every chunk, so each call makes progress. When
    /// yielding, requests being read are interrupted (B): they will resume
    /// exactly where they stopped, from a saved state.
    pub fn service(
        &mut self,
        budget: Budget,
        pending_input: impl FnMut() -> bool,
    ) -> ServiceReport<D> {
        self.service_with(budget, pending_input, false)
    }

    /// [`service`](Self::service) that also yields, with
    /// [`ServiceStatus::WaitingForData`], rather than wait for the source
    /// ([`EventSource::ready`]): the read stops before an event it could
    /// not step past without waiting for a decoding thread, and the caller
    /// (a GUI's main loop) services again once the data is likely there.
    /// The events delivered are the same; seeks and their state replays
    /// still wait. The time budget is also checked inside chunks, every
    /// [`DEADLINE_EVERY`] events: a call overruns it by that many events at
    /// most, not by a chunk.
    pub fn service_nonblocking(
        &mut self,
        budget: Budget,
        pending_input: impl FnMut() -> bool,
    ) -> ServiceReport<D> {
        self.service_with(budget, pending_input, true)
    }

    /// [`service`](Self::service), yielding when the source is not ready if
    /// `nonblocking`.
    fn service_with(
        &mut self,
        budget: Budget,
        mut pending_input: impl FnMut() -> bool,
        nonblocking: bool,
    ) -> ServiceReport<D> {
        let started = Instant::now();
        let yielding = nonblocking.then(|| Yielding {
            deadline: budget.max_duration.and_then(|d| started.checked_add(d)),
        });
        self.sync_cursor();
        let mut report = ServiceReport {
            status: ServiceStatus::Idle,
            events_read: 0,
            chunks: 0,
            completed: Vec::new(),
        };
        report.status = loop {
            let mut chosen = Vec::new();
            if self.list_in.is_empty() {
                if self.list_out.is_empty() {
                    break ServiceStatus::Idle;
                }
                chosen = self.step1_seek();
            }
            self.step2_join(&chosen);
            let left = budget
                .max_events
                .map_or(u64::MAX, |m| m.saturating_sub(report.events_read));
            let criteria = self.step3_criteria(self.config.chunk_events.min(left).max(1));
            let read = self.step4_read(&criteria, yielding);
            report.events_read += read;
            report.chunks += 1;
            self.step5_after_chunk(&mut report.completed);
            if self.list_in.is_empty() && self.list_out.is_empty() {
                break ServiceStatus::Idle;
            }
            if nonblocking && !self.source.ready() {
                self.park_all();
                break ServiceStatus::WaitingForData;
            }
            let spent = budget.max_events.is_some_and(|m| report.events_read >= m)
                || budget.max_duration.is_some_and(|d| started.elapsed() >= d);
            if spent {
                self.park_all();
                break ServiceStatus::BudgetSpent;
            }
            if pending_input() {
                self.park_all();
                break ServiceStatus::PendingInput;
            }
        };
        self.prune_saved_states();
        report
    }

    // ----- the algorithm's steps -------------------------------------------

    /// Step 1: list_in is empty, choose where to read next and go there.
    /// Returns the ids of the chosen requests (step 1.1), which step 2 joins
    /// unconditionally.
    fn step1_seek(&mut self) -> Vec<RequestId> {
        // 1.1: the most urgent priority wins; within it, the lowest start
        // time (ltime) against the lowest start position (lpos), the position
        // winning only if it is strictly earlier in time.
        let Some(top) = self.list_out.values().map(|r| r.priority).min() else {
            return Vec::new();
        };
        let mut ltime: Option<Time> = None;
        let mut lpos: Option<&PositionOf<Src>> = None;
        for r in self.list_out.values().filter(|r| r.priority == top) {
            match &r.start {
                Start::Time(t) => ltime = Some(ltime.map_or(*t, |l| l.min(*t))),
                Start::Position(p) => lpos = Some(lpos.map_or(p, |l| l.min(p))),
            }
        }
        let target = match (ltime, lpos) {
            (Some(t), Some(p)) if p.time() < t => Target::Position(p.clone()),
            (Some(t), _) => Target::Time(t),
            (None, Some(p)) => Target::Position(p.clone()),
            (None, None) => unreachable!("priority {top:?} has requests"),
        };
        let chosen: Vec<RequestId> = self
            .list_out
            .iter()
            .filter(|(_, r)| {
                r.priority == top
                    && match (&r.start, &target) {
                        (Start::Time(a), Target::Time(b)) => a == b,
                        (Start::Position(a), Target::Position(b)) => a == b,
                        _ => false,
                    }
            })
            .map(|(id, _)| *id)
            .collect();
        // 1.2: seek only if the read is not already there (and the state
        // is right, for requests that read it); a position with a saved
        // state is restored, not replayed. When none of the chosen requests
        // reads the state, the seek goes straight to the target: replaying
        // the state up to there would be wasted.
        let here = match &target {
            Target::Time(t) => self.joinable_time(*t),
            Target::Position(p) => *p == self.cursor.position,
        };
        let needs_state = chosen.iter().any(|id| self.list_out[id].needs_state);
        if !needs_state {
            if !here {
                self.seek_without_state(target);
            }
        } else if !(here && self.state_ok()) {
            self.seek_with_state(target);
        }
        chosen
    }

    /// Step 2 (and 1.3): join every request of list_out that starts at the
    /// current position, plus `chosen`: begin hooks if not servicing yet,
    /// then before_chunk; their event hooks are added to the read.
    fn step2_join(&mut self, chosen: &[RequestId]) {
        let ids: Vec<RequestId> = self
            .list_out
            .iter()
            .filter(|(id, r)| chosen.contains(id) || self.can_join(r))
            .map(|(id, _)| *id)
            .collect();
        if ids.is_empty() {
            return;
        }
        let position = self.source.position();
        for id in ids {
            let mut req = self.list_out.remove(&id).expect("listed above");
            if !req.servicing {
                call_begin_hooks(&self.streams, &mut req, &position, &self.state);
                req.servicing = true;
            }
            if call_boundary(&mut req, Boundary::BeforeChunk, &position, &self.state).is_stop() {
                req.stop_flag = true;
            }
            let at = self.list_in.partition_point(|s| s.id < id);
            self.list_in.insert(at, Slot { id, req });
        }
        self.plan.per_id.clear();
    }

    /// Step 3: the end criteria of the next chunk.
    fn step3_criteria(&self, max_events: u64) -> Criteria<PositionOf<Src>> {
        let cur_time = self.source.current().map(|e| e.time());
        let cur_pos = &self.cursor.position;
        let reqs = self.list_in.iter().map(|s| &s.req);
        // Requests reading the state cannot join a read without it: their
        // starts do not cut the chunk.
        let state_ok = self.state_ok();
        let waiting = || {
            self.list_out
                .values()
                .filter(|r| state_ok || !r.needs_state)
        };
        Criteria {
            end_time: reqs.clone().filter_map(|r| r.end_time).min(),
            end_position: reqs.filter_map(|r| r.end_position.clone()).min(),
            // Starts already behind are for lower-priority requests that will
            // need a seek (3.1.2's footnote); starts at the current position
            // were joined by step 2. Only starts ahead matter.
            next_start_time: waiting()
                .filter_map(|r| match r.start {
                    Start::Time(t) if cur_time.is_some_and(|c| t > c) => Some(t),
                    _ => None,
                })
                .min(),
            next_start_position: waiting()
                .filter_map(|r| match &r.start {
                    Start::Position(p) if p > cur_pos => Some(p.clone()),
                    _ => None,
                })
                .min(),
            max_events,
        }
    }

    /// Step 4: read events until a criterion is met (LTTV's
    /// `process_traceset_middle`), calling the state hooks and the hooks of
    /// every request of list_in in one merged priority order. Returns the
    /// number of events read. With `yielding`, it also stops before an
    /// event the source cannot step past without waiting
    /// ([`EventSource::ready`]), and at the deadline.
    fn step4_read(
        &mut self,
        criteria: &Criteria<PositionOf<Src>>,
        yielding: Option<Yielding>,
    ) -> u64 {
        debug_assert!(
            self.state_ok() || self.list_in.iter().all(|s| !s.req.needs_state),
            "reading with a stale state for a request that needs it"
        );
        // Without a valid state (after a seek for requests that do not read
        // it), the state hooks are not run: they would only compute garbage.
        let run_state = self.stateful && self.cursor.state_valid;
        if run_state {
            self.settle_lazy_saved();
        }
        let Scheduler {
            source,
            state,
            state_hooks,
            state_hooks_by_id,
            list_in,
            plan,
            cursor,
            checkpoints,
            since_checkpoint,
            config,
            stats,
            ..
        } = self;
        // A request may already be over (zero events, stop raised by a begin
        // hook): let step 5 end it before anything is read.
        if list_in
            .iter()
            .any(|s| s.req.stop_flag || s.req.remaining() == Some(0))
        {
            return 0;
        }
        let mut accepted = vec![true; list_in.len()];
        // Hoisted out of the loop: without filters every request accepts
        // every event, and without by-id hooks every event class has the
        // same merged order (the state pass: no per-event lookup at all).
        let filtered = list_in.iter().any(|s| s.req.filter.is_some());
        let uniform = (state_hooks_by_id.is_empty()
            && list_in.iter().all(|s| s.req.event_by_id.is_empty()))
        .then(|| merged_order(0, state_hooks, state_hooks_by_id, list_in));
        let counted = list_in.iter().any(|s| s.req.num_events.is_some());
        // The end criteria folded into one time and one position: stop at
        // an event whose time is `>= time_limit` (after the end time, or at
        // a waiting start) or whose position is `>= position_limit`.
        let time_limit = [
            // An end time of `Time::MAX` stops nothing.
            criteria.end_time.and_then(|e| e.checked_add(1)),
            criteria.next_start_time,
        ]
        .into_iter()
        .flatten()
        .min();
        let position_limit = [&criteria.end_position, &criteria.next_start_position]
            .into_iter()
            .flatten()
            .min();
        let checkpointing = run_state && config.checkpoint_interval.is_some();
        let mut last = None;
        let mut read = 0;
        while read < criteria.max_events {
            if let Some(y) = yielding {
                if !source.ready()
                    || (read > 0
                        && read % DEADLINE_EVERY == 0
                        && y.deadline.is_some_and(|d| Instant::now() >= d))
                {
                    break;
                }
            }
            let Some(event) = source.current() else { break };
            let time = event.time();
            let position = source.position();
            if time_limit.is_some_and(|l| time >= l)
                || position_limit.is_some_and(|l| position >= *l)
            {
                break;
            }
            let class = event.class_id();
            if filtered {
                for (slot, ok) in list_in.iter_mut().zip(accepted.iter_mut()) {
                    *ok = slot.req.filter.as_mut().is_none_or(|f| f(event));
                }
            }
            let order = match &uniform {
                Some(order) => order.as_slice(),
                None => plan.order(class, state_hooks, state_hooks_by_id, list_in),
            };
            for hook in order {
                match *hook {
                    HookRef::State { .. } if !run_state => {}
                    HookRef::State { by_id, index } => {
                        let list = if by_id {
                            state_hooks_by_id.get_mut(class).expect("planned")
                        } else {
                            &mut *state_hooks
                        };
                        // State hooks cannot stop the read: every request
                        // relies on the state being complete.
                        let _ = list
                            .call_at(index, &mut HookContext::new(event, &position, &(), state));
                    }
                    HookRef::Request { slot, by_id, index } => {
                        if !accepted[slot] {
                            continue;
                        }
                        let EventsRequest {
                            event: hooks,
                            event_by_id,
                            data,
                            stop_flag,
                            ..
                        } = &mut list_in[slot].req;
                        let list = if by_id {
                            event_by_id.get_mut(class).expect("planned")
                        } else {
                            hooks
                        };
                        let mut ctx = HookContext::new(event, &position, &*state, data);
                        if list.call_at(index, &mut ctx) == Some(Flow::Stop) {
                            *stop_flag = true;
                        }
                    }
                }
            }
            let mut over = false;
            for (slot, ok) in list_in.iter_mut().zip(&accepted) {
                if *ok {
                    slot.req.delivered += 1;
                }
                over |= slot.req.stop_flag;
            }
            if counted {
                over |= list_in.iter().any(|s| s.req.remaining() == Some(0));
            }
            source.advance();
            read += 1;
            if checkpointing {
                cursor.prior_bound = time.checked_add(1);
                cursor.last_read = Some(position);
                cursor.position = source.position();
                maybe_checkpoint(config, checkpoints, since_checkpoint, cursor, state);
            } else {
                // Only checkpoints read the cursor during the loop.
                last = Some((position, time));
            }
            if over {
                break;
            }
        }
        if let Some((position, time)) = last {
            cursor.prior_bound = time.checked_add(1);
            cursor.last_read = Some(position);
            cursor.position = source.position();
        }
        stats.events_read += read;
        read
    }

    /// Step 5: end the requests whose boundary is reached, then park the
    /// remaining ones if a more urgent request waits elsewhere.
    fn step5_after_chunk(&mut self, completed: &mut Vec<Completed<D>>) {
        let cur_time = self.source.current().map(|e| e.time());
        let position = self.cursor.position.clone();
        let mut k = 0;
        while k < self.list_in.len() {
            let r = &self.list_in[k].req;
            let reason = if r.remaining() == Some(0) {
                Some(EndReason::NumEvents)
            } else if r.stop_flag {
                Some(EndReason::Stopped)
            } else if cur_time.is_none() {
                Some(EndReason::EndOfTraceset)
            } else if r.end_time.is_some_and(|e| cur_time.is_some_and(|c| c > e)) {
                Some(EndReason::EndTime)
            } else if r.end_position.as_ref().is_some_and(|e| position >= *e) {
                Some(EndReason::EndPosition)
            } else {
                None
            };
            match reason {
                Some(reason) => {
                    let Slot { id, mut req } = self.list_in.remove(k);
                    let _ = call_boundary(&mut req, Boundary::AfterChunk, &position, &self.state);
                    call_end_hooks(&self.streams, &mut req, &position, &self.state);
                    req.servicing = false;
                    completed.push(Completed {
                        id,
                        owner: req.owner,
                        reason,
                        delivered: req.delivered,
                        data: req.data,
                    });
                    self.plan.per_id.clear();
                }
                None => k += 1,
            }
        }
        // The document parks each request having a more urgent one waiting
        // away from the current position, but step 2 would re-join it at
        // once as long as list_in is not empty. The net effect, which is
        // what is done here without the churn: the read only leaves for the
        // waiting request when nothing as urgent remains in list_in.
        let waiting = self
            .list_out
            .values()
            .filter(|r| !self.can_join(r))
            .map(|r| r.priority)
            .min();
        if let Some(w) = waiting {
            if self.list_in.iter().all(|s| s.req.priority > w) {
                self.park_all();
            }
        }
    }

    /// Interruption (B), also used by step 5's preemption: every request of
    /// list_in restarts later at the current position; after_chunk is called
    /// and its hooks leave the read; the state is saved for each priority
    /// involved.
    fn park_all(&mut self) {
        if self.list_in.is_empty() {
            return;
        }
        let position = self.cursor.position.clone();
        let mut priorities = Vec::new();
        for Slot { id, mut req } in std::mem::take(&mut self.list_in) {
            req.start = Start::Position(position.clone());
            let _ = call_boundary(&mut req, Boundary::AfterChunk, &position, &self.state);
            priorities.push(req.priority);
            self.list_out.insert(id, req);
            self.stats.parked += 1;
        }
        self.plan.per_id.clear();
        if self.stateful && self.cursor.state_valid {
            // The live state is the saved state of these priorities until
            // it changes: not copied now.
            if self
                .lazy_saved
                .as_ref()
                .is_some_and(|l| l.position != position)
            {
                self.materialize_saved();
            }
            let lazy = self.lazy_saved.get_or_insert_with(|| LazySaved {
                position,
                prior_bound: self.cursor.prior_bound,
                priorities: Vec::new(),
            });
            for p in priorities {
                self.saved.remove(&p);
                if !lazy.priorities.contains(&p) {
                    lazy.priorities.push(p);
                }
            }
        }
    }

    /// Copies the live state into `saved` for the priorities parked
    /// without a copy: called before anything changes the state.
    fn materialize_saved(&mut self) {
        if let Some(l) = self.lazy_saved.take() {
            for p in l.priorities {
                self.saved.insert(
                    p,
                    SavedState {
                        position: l.position.clone(),
                        state: self.state.clone(),
                        prior_bound: l.prior_bound,
                    },
                );
            }
        }
    }

    /// Before a read moves the state on: the lazily saved priorities that
    /// a waiting request still needs (it did not rejoin the read) are
    /// copied; the others are forgotten.
    fn settle_lazy_saved(&mut self) {
        self.prune_lazy_saved();
        self.materialize_saved();
    }

    /// Forgets the lazily saved priorities no waiting request resumes
    /// from.
    fn prune_lazy_saved(&mut self) {
        let (list_out, paused) = (&self.list_out, &self.paused);
        if let Some(l) = &mut self.lazy_saved {
            l.priorities
                .retain(|prio| resumes_at(list_out, paused, *prio, &l.position));
            if l.priorities.is_empty() {
                self.lazy_saved = None;
            }
        }
    }

    /// Drops saved states no waiting request can use any more.
    fn prune_saved_states(&mut self) {
        self.prune_lazy_saved();
        let (list_out, paused) = (&self.list_out, &self.paused);
        self.saved
            .retain(|prio, saved| resumes_at(list_out, paused, *prio, &saved.position));
    }

    // ----- position and state bookkeeping --------------------------------

    /// Forgets what the scheduler knew about the cursor if someone moved the
    /// source.
    fn sync_cursor(&mut self) {
        let position = self.source.position();
        if position != self.cursor.position {
            self.cursor = Cursor {
                position,
                prior_bound: None,
                last_read: None,
                state_valid: false,
            };
        }
    }

    fn state_ok(&self) -> bool {
        !self.stateful || self.cursor.state_valid
    }

    /// Whether `request` can join the read here: at its start, and with
    /// the state it needs.
    fn can_join(&self, request: &EventsRequest<Src, S, D>) -> bool {
        self.joinable(&request.start) && (!request.needs_state || self.state_ok())
    }

    /// Whether a request starting at `start` can join at the current
    /// position without missing or repeating an event.
    fn joinable(&self, start: &Start<PositionOf<Src>>) -> bool {
        match start {
            Start::Time(t) => self.joinable_time(*t),
            Start::Position(p) => {
                *p == self.cursor.position
                    || (self.cursor.last_read.as_ref().is_some_and(|l| l < p)
                        && *p <= self.cursor.position)
            }
        }
    }

    /// A time request joins here when no event read before has a time
    /// `>= t` and the current event's time is `>= t` — the document's
    /// `start time == current time` made exact: several events can share a
    /// timestamp, and a chunk may have stopped in the middle of them.
    fn joinable_time(&self, t: Time) -> bool {
        let before_ok = self.cursor.prior_bound.is_some_and(|b| t >= b);
        let here_ok = self.source.current().is_none_or(|e| t <= e.time());
        before_ok && here_ok
    }

    /// Seeks to `target` for requests that do not read the state: the
    /// source's own seek (packet index), no replay. The state is no longer
    /// the state at the cursor (unless there are no state hooks).
    fn seek_without_state(&mut self, target: Target<PositionOf<Src>>) {
        self.materialize_saved();
        self.stats.seeks += 1;
        let prior_bound = match &target {
            Target::Time(t) => {
                self.source.seek_time(*t);
                Some(*t)
            }
            Target::Position(p) => {
                self.source.seek_position(p);
                None
            }
        };
        self.cursor = Cursor {
            position: self.source.position(),
            prior_bound,
            last_read: None,
            state_valid: !self.stateful,
        };
    }

    /// Seeks to `target` and brings the state there: from the nearest
    /// snapshot at or before the target (current state, saved states,
    /// checkpoints, initial state), replaying the state hooks only.
    ///
    /// The target's position is not looked up first: a time target `T` is
    /// the first event whose time is `>= T`, and positions are ordered by
    /// time first, so a snapshot is at or before it exactly when its time
    /// is below `T`, or when it is the target itself — its time is `>= T`
    /// and its prior bound says every earlier event is below `T`. The
    /// replay from the chosen snapshot then stops at the first event at or
    /// after `T`. One seek (to the snapshot) instead of two.
    fn seek_with_state(&mut self, target: Target<PositionOf<Src>>) {
        if !self.stateful {
            // The state never changes: any seek keeps it right.
            return self.seek_without_state(target);
        }
        self.materialize_saved();
        self.stats.seeks += 1;
        // Whether a snapshot at `p` with prior bound `b` is at or before
        // the target.
        let qualifies = |p: &PositionOf<Src>, b: Option<Time>| match &target {
            Target::Time(t) => p.time() < *t || b.is_some_and(|b| b <= *t),
            Target::Position(q) => p <= q,
        };
        // Candidates; the latest wins and the current state wins ties
        // (nothing to clone, no seek). The initial state always qualifies:
        // a target before the first event lands on the first event.
        enum From {
            Current,
            Saved(Priority),
            Checkpoint(usize),
            Initial,
        }
        let mut best: (&PositionOf<Src>, From) = (&self.initial.position, From::Initial);
        // The last checkpoint before the target, or the first one at it.
        let after = match &target {
            Target::Time(t) => self.checkpoints.partition_point(|c| c.0.time() < *t),
            Target::Position(q) => self.checkpoints.partition_point(|c| c.0 <= *q),
        };
        let at = self.checkpoints.get(after).filter(|c| qualifies(&c.0, c.2));
        let before = after.checked_sub(1).map(|i| (i, &self.checkpoints[i]));
        if let Some((i, c)) = at.map(|c| (after, c)).or(before) {
            if c.0 > *best.0 {
                best = (&c.0, From::Checkpoint(i));
            }
        }
        for (prio, saved) in &self.saved {
            if qualifies(&saved.position, saved.prior_bound) && saved.position > *best.0 {
                best = (&saved.position, From::Saved(*prio));
            }
        }
        if self.cursor.state_valid
            && qualifies(&self.cursor.position, self.cursor.prior_bound)
            && self.cursor.position >= *best.0
        {
            best = (&self.cursor.position, From::Current);
        }
        let from_pos = best.0.clone();
        let from_bound = match best.1 {
            From::Current => self.cursor.prior_bound,
            From::Saved(p) => {
                self.state = self.saved[&p].state.clone();
                self.saved[&p].prior_bound
            }
            From::Checkpoint(i) => {
                let (_, s, b) = &self.checkpoints[i];
                self.state = s.clone();
                *b
            }
            From::Initial => {
                self.state = self.initial.state.clone();
                self.initial.prior_bound
            }
        };
        let current = matches!(best.1, From::Current);
        let mut last_read = if current {
            self.cursor.last_read.take()
        } else {
            None
        };
        if !current || self.source.position() != from_pos {
            self.source.seek_position(&from_pos);
        }
        let replayed = self.replay_while(|e, p| match &target {
            Target::Time(t) => e.time() < *t,
            Target::Position(q) => p < q,
        });
        let bound = match replayed {
            Some((read, bound)) => {
                last_read = Some(read);
                bound
            }
            None => {
                if !current {
                    self.stats.state_restores += 1;
                }
                // Both bounds are true statements; the lower is the sharper.
                let extra = match &target {
                    Target::Time(t) => Some(*t),
                    Target::Position(_) => None,
                };
                match (from_bound, extra) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        };
        self.cursor = Cursor {
            position: self.source.position(),
            prior_bound: bound,
            last_read,
            state_valid: true,
        };
    }

    /// Reads from the source's position through the state hooks only, as
    /// long as `go_on(event, position)` holds. Returns the position of the
    /// last event read and the prior bound after it, `None` if nothing was
    /// read.
    fn replay_while(
        &mut self,
        mut go_on: impl FnMut(&EventOf<Src>, &PositionOf<Src>) -> bool,
    ) -> Option<(PositionOf<Src>, Option<Time>)> {
        let mut last = None;
        self.cursor.state_valid = true;
        while let Some(event) = self.source.current() {
            let position = self.source.position();
            if !go_on(event, &position) {
                break;
            }
            let class = event.class_id();
            let mut ctx = HookContext::new(event, &position, &(), &mut self.state);
            match self.state_hooks_by_id.get_mut(class) {
                Some(specific) => self.state_hooks.call_merged(specific, &mut ctx),
                None => self.state_hooks.call(&mut ctx),
            };
            let bound = event.time().checked_add(1);
            self.source.advance();
            self.stats.replayed_events += 1;
            self.cursor.position = self.source.position();
            self.cursor.prior_bound = bound;
            maybe_checkpoint(
                &self.config,
                &mut self.checkpoints,
                &mut self.since_checkpoint,
                &self.cursor,
                &self.state,
            );
            last = Some((position, bound));
        }
        last
    }
}

/// Takes a checkpoint if enough events were read since the last one.
fn maybe_checkpoint<P: Ord + Clone, S: Clone>(
    config: &SchedulerConfig,
    checkpoints: &mut Vec<(P, S, Option<Time>)>,
    periodic: &mut Periodic,
    cursor: &Cursor<P>,
    state: &S,
) {
    let Some(every) = config.checkpoint_interval else {
        return;
    };
    periodic.since += 1;
    if periodic.since >= every.saturating_mul(periodic.stride) {
        periodic.since = 0;
        insert_checkpoint(checkpoints, cursor.position.clone(), || {
            (state.clone(), cursor.prior_bound)
        });
        if checkpoints.len() > config.max_checkpoints {
            // Keep the first (the trace start) and every other one after.
            let mut i = 0;
            checkpoints.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            periodic.stride = periodic.stride.saturating_mul(2);
        }
    }
}

/// Where the periodic checkpoints stand: events since the last one, and
/// the interval's multiple in force.
#[derive(Debug, Clone, Copy)]
struct Periodic {
    since: u64,
    stride: u64,
}

impl Default for Periodic {
    fn default() -> Self {
        Periodic {
            since: 0,
            stride: 1,
        }
    }
}

/// Inserts a checkpoint at `position` in the sorted `checkpoints`, unless
/// one is there already (the first one stays). Checkpoints mostly come in
/// position order: appending is checked first.
fn insert_checkpoint<P: Ord, S>(
    checkpoints: &mut Vec<(P, S, Option<Time>)>,
    position: P,
    make: impl FnOnce() -> (S, Option<Time>),
) {
    let at = match checkpoints.last() {
        None => 0,
        Some(last) if last.0 < position => checkpoints.len(),
        Some(_) => match checkpoints.binary_search_by(|c| c.0.cmp(&position)) {
            Ok(_) => return,
            Err(at) => at,
        },
    };
    let (state, bound) = make();
    checkpoints.insert(at, (position, state, bound));
}

impl Plan {
    /// The merged calling order for an event of class `class`: state hooks
    /// first, then requests by id, at equal priority; insertion order (hook
    /// handle) within one owner.
    fn order<Src: EventSource, S, D>(
        &mut self,
        class: u64,
        state_hooks: &StateHooks<Src, S>,
        state_hooks_by_id: &StateHooksById<Src, S>,
        list_in: &[Slot<Src, S, D>],
    ) -> &[HookRef] {
        self.per_id
            .entry(class)
            .or_insert_with(|| merged_order(class, state_hooks, state_hooks_by_id, list_in))
    }
}

/// The merged calling order for an event of class `class` (see
/// [`Plan::order`]).
fn merged_order<Src: EventSource, S, D>(
    class: u64,
    state_hooks: &StateHooks<Src, S>,
    state_hooks_by_id: &StateHooksById<Src, S>,
    list_in: &[Slot<Src, S, D>],
) -> Vec<HookRef> {
    let mut keyed: Vec<(Priority, usize, HookHandle, HookRef)> = Vec::new();
    for (index, (h, p)) in state_hooks.iter().enumerate() {
        keyed.push((
            p,
            0,
            h,
            HookRef::State {
                by_id: false,
                index,
            },
        ));
    }
    if let Some(list) = state_hooks_by_id.get(class) {
        for (index, (h, p)) in list.iter().enumerate() {
            keyed.push((p, 0, h, HookRef::State { by_id: true, index }));
        }
    }
    for (slot, s) in list_in.iter().enumerate() {
        for (index, (h, p)) in s.req.event.iter().enumerate() {
            keyed.push((
                p,
                slot + 1,
                h,
                HookRef::Request {
                    slot,
                    by_id: false,
                    index,
                },
            ));
        }
        if let Some(list) = s.req.event_by_id.get(class) {
            for (index, (h, p)) in list.iter().enumerate() {
                keyed.push((
                    p,
                    slot + 1,
                    h,
                    HookRef::Request {
                        slot,
                        by_id: true,
                        index,
                    },
                ));
            }
        }
    }
    keyed.sort_by_key(|k| (k.0, k.1, k.2));
    keyed.into_iter().map(|k| k.3).collect()
}

fn call_boundary<Src: EventSource, S, D>(
    req: &mut EventsRequest<Src, S, D>,
    which: Boundary,
    position: &PositionOf<Src>,
    state: &S,
) -> Flow {
    let EventsRequest {
        before_traceset,
        before_trace,
        before_tracefile,
        after_tracefile,
        after_trace,
        after_traceset,
        before_chunk,
        after_chunk,
        data,
        ..
    } = req;
    let hooks: &mut BoundaryHooks<Src, S, D> = match which {
        Boundary::BeforeTraceset => before_traceset,
        Boundary::BeforeTrace(_) => before_trace,
        Boundary::BeforeStream(_) => before_tracefile,
        Boundary::BeforeChunk => before_chunk,
        Boundary::AfterChunk => after_chunk,
        Boundary::AfterStream(_) => after_tracefile,
        Boundary::AfterTrace(_) => after_trace,
        Boundary::AfterTraceset => after_traceset,
    };
    hooks.call(&mut HookContext::new(&which, position, state, data))
}

/// Begin hooks, nested as LTTV does: traceset, then per trace its streams.
/// A `Stop` from any of them raises the stop flag.
fn call_begin_hooks<Src: EventSource, S, D>(
    streams: &[StreamId],
    req: &mut EventsRequest<Src, S, D>,
    position: &PositionOf<Src>,
    state: &S,
) {
    let mut flow = call_boundary(req, Boundary::BeforeTraceset, position, state);
    for (i, s) in streams.iter().enumerate() {
        if i == 0 || streams[i - 1].trace != s.trace {
            flow = flow.or(call_boundary(
                req,
                Boundary::BeforeTrace(s.trace),
                position,
                state,
            ));
        }
        flow = flow.or(call_boundary(
            req,
            Boundary::BeforeStream(*s),
            position,
            state,
        ));
    }
    if flow.is_stop() {
        req.stop_flag = true;
    }
}

/// End hooks, mirror of [`call_begin_hooks`]; their result is ignored.
fn call_end_hooks<Src: EventSource, S, D>(
    streams: &[StreamId],
    req: &mut EventsRequest<Src, S, D>,
    position: &PositionOf<Src>,
    state: &S,
) {
    for (i, s) in streams.iter().enumerate() {
        let _ = call_boundary(req, Boundary::AfterStream(*s), position, state);
        if i + 1 == streams.len() || streams[i + 1].trace != s.trace {
            let _ = call_boundary(req, Boundary::AfterTrace(s.trace), position, state);
        }
    }
    let _ = call_boundary(req, Boundary::AfterTraceset, position, state);
}
