//! [`EventsRequest`]: what a viewer asks the scheduler for.

use std::fmt;
use traceloom_base::Time;

use traceloom_hooks::{Hooks, HooksById, Priority};

use super::event_source::{EventSource, StreamId};

/// The event type of source `Src`.
pub type EventOf<Src> = <Src as EventSource>::Event;
/// The position type of source `Src`.
pub type PositionOf<Src> = <Src as EventSource>::Position;

/// Hooks called for every event of a request: they see the event, its
/// position, the state (read-only) and the request's data.
pub type EventHooks<Src, S, D> = Hooks<EventOf<Src>, PositionOf<Src>, S, D>;
/// Hooks called for the events of one class only.
pub type EventHooksById<Src, S, D> = HooksById<EventOf<Src>, PositionOf<Src>, S, D>;
/// Hooks called at a [`Boundary`] (begin, end, chunk limits); their "event"
/// is the boundary and their position the current one.
pub type BoundaryHooks<Src, S, D> = Hooks<Boundary, PositionOf<Src>, S, D>;
/// A per-request event predicate; events it rejects are not delivered to
/// the request and do not count towards its number of events.
pub type EventFilter<Src> = Box<dyn FnMut(&EventOf<Src>) -> bool + Send>;

/// The non-event notifications a request receives, in the order LTTV nests
/// them: traceset, then each trace, then each of its streams (tracefiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// The request starts being serviced (once).
    BeforeTraceset,
    /// Per trace, after `BeforeTraceset`.
    BeforeTrace(u32),
    /// Per stream, after its trace's `BeforeTrace`.
    BeforeStream(StreamId),
    /// The request's hooks are added to the read (each time it re-enters).
    BeforeChunk,
    /// The request's hooks are removed from the read (it was interrupted,
    /// preempted or is ending).
    AfterChunk,
    /// Per stream, before its trace's `AfterTrace`.
    AfterStream(StreamId),
    /// Per trace, before `AfterTraceset`.
    AfterTrace(u32),
    /// The request is over (once).
    AfterTraceset,
}

/// Identifies the viewer owning requests, so all of a viewer's requests can
/// be cancelled at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerId(pub u64);

/// Handle of a request added to a scheduler. Handles grow with addition
/// order, which is also the order requests' hooks run in at equal priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub(crate) u64);

/// Where a request starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start<P> {
    /// At the first event whose time is `>=` this time.
    Time(Time),
    /// At the event at this position (inclusive).
    Position(P),
}

/// A request for the events of a traceset within boundaries, with the hooks
/// to deliver them to (LTTV's `EventsRequest`, revised version).
///
/// The request receives exactly the events from [`start`](Self::start) on,
/// in order, that pass its [`filter`](Self::filter), until the first of:
///
/// * the next event's time is greater than [`end_time`](Self::end_time)
///   (end time is inclusive),
/// * [`num_events`](Self::num_events) events were delivered,
/// * the next event's position is `>=` [`end_position`](Self::end_position)
///   (end position is exclusive — the event there is not delivered),
/// * one of its hooks returned [`Flow::Stop`](traceloom_hooks::Flow::Stop)
///   (the stop flag; the event on which it was raised was delivered),
/// * the end of the traceset.
///
/// Unset boundaries are `None` (LTTV used sentinel values).
pub struct EventsRequest<Src: EventSource, S, D> {
    /// The viewer owning the request.
    pub owner: OwnerId,
    /// Servicing priority: a lower value is serviced first, like hooks (use
    /// [`Priority::HIGH`] for what the user is looking at).
    pub priority: Priority,
    /// Start time or start position.
    pub start: Start<PositionOf<Src>>,
    /// Last time to deliver (inclusive).
    pub end_time: Option<Time>,
    /// Maximum number of events to deliver.
    pub num_events: Option<u64>,
    /// First position not to deliver.
    pub end_position: Option<PositionOf<Src>>,
    /// Only events it accepts are delivered and counted.
    pub filter: Option<EventFilter<Src>>,
    /// Whether the request's hooks and filter read the traceset state
    /// (`ctx.state`). `true` by default, as in LTTV where every request
    /// sees the state.
    ///
    /// A request that does not (an event list without a state-based
    /// filter) sets it to `false`: the scheduler then seeks straight to
    /// its start through the packet index instead of restoring a
    /// checkpoint and replaying the state hooks up to it, and does not run
    /// the state hooks while only such requests are being read. Its hooks
    /// still receive a `ctx.state`, but it is then the state of some
    /// earlier point of the read, not of the event: it must not be used.
    pub needs_state: bool,
    /// Called once when servicing begins.
    pub before_traceset: BoundaryHooks<Src, S, D>,
    /// Called once per trace when servicing begins.
    pub before_trace: BoundaryHooks<Src, S, D>,
    /// Called once per stream when servicing begins.
    pub before_tracefile: BoundaryHooks<Src, S, D>,
    /// Called for every delivered event.
    pub event: EventHooks<Src, S, D>,
    /// Called for every delivered event of the hook's class, merged with
    /// [`event`](Self::event) by priority.
    pub event_by_id: EventHooksById<Src, S, D>,
    /// Called once per stream when the request ends.
    pub after_tracefile: BoundaryHooks<Src, S, D>,
    /// Called once per trace when the request ends.
    pub after_trace: BoundaryHooks<Src, S, D>,
    /// Called once when the request ends.
    pub after_traceset: BoundaryHooks<Src, S, D>,
    /// Called every time the request's hooks are added to the read.
    pub before_chunk: BoundaryHooks<Src, S, D>,
    /// Called every time the request's hooks are removed from the read.
    pub after_chunk: BoundaryHooks<Src, S, D>,
    /// The request's own data, handed to every hook as `ctx.data` and given
    /// back when the request completes or is cancelled.
    pub data: D,
    /// Servicing in progress: begin hooks were called, end hooks not yet.
    pub(crate) servicing: bool,
    /// Raised by a hook returning `Stop`.
    pub(crate) stop_flag: bool,
    /// Events delivered so far.
    pub(crate) delivered: u64,
}

impl<Src: EventSource, S, D> EventsRequest<Src, S, D> {
    /// A request starting at `start`, with [`Priority::DEFAULT`], no end
    /// boundary, no filter and no hooks.
    pub fn new(owner: OwnerId, start: Start<PositionOf<Src>>, data: D) -> Self {
        EventsRequest {
            owner,
            priority: Priority::DEFAULT,
            start,
            end_time: None,
            num_events: None,
            end_position: None,
            filter: None,
            needs_state: true,
            before_traceset: Hooks::new(),
            before_trace: Hooks::new(),
            before_tracefile: Hooks::new(),
            event: Hooks::new(),
            event_by_id: HooksById::new(),
            after_tracefile: Hooks::new(),
            after_trace: Hooks::new(),
            after_traceset: Hooks::new(),
            before_chunk: Hooks::new(),
            after_chunk: Hooks::new(),
            data,
            servicing: false,
            stop_flag: false,
            delivered: 0,
        }
    }

    /// Whether servicing is in progress (begin hooks called, end hooks not).
    pub fn is_servicing(&self) -> bool {
        self.servicing
    }

    /// Whether a hook asked to stop.
    pub fn stop_flag(&self) -> bool {
        self.stop_flag
    }

    /// Number of events delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Events still allowed by [`num_events`](Self::num_events); `None` if
    /// unlimited.
    pub fn remaining(&self) -> Option<u64> {
        self.num_events.map(|n| n.saturating_sub(self.delivered))
    }

    /// Whether the request starts at a time (as opposed to a position).
    pub fn is_time_request(&self) -> bool {
        matches!(self.start, Start::Time(_))
    }
}

impl<Src: EventSource, S, D> fmt::Debug for EventsRequest<Src, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventsRequest")
            .field("owner", &self.owner)
            .field("priority", &self.priority)
            .field("start", &self.start)
            .field("end_time", &self.end_time)
            .field("num_events", &self.num_events)
            .field("end_position", &self.end_position)
            .field("filter", &self.filter.is_some())
            .field("needs_state", &self.needs_state)
            .field("event_hooks", &self.event.len())
            .field("event_by_id_hooks", &self.event_by_id.len())
            .field("servicing", &self.servicing)
            .field("stop_flag", &self.stop_flag)
            .field("delivered", &self.delivered)
            .finish_non_exhaustive()
    }
}
