//! The abstract traceset the scheduler reads: [`EventSource`].
//!
//! The scheduler needs very little from a traceset: seek by time, seek by
//! position, look at the current event, step past it, and tell where it is.
//! Keeping that behind a trait lets the scheduler be tested against
//! [`MemorySource`](super::MemorySource) and driven later by the CTF
//! traceset without depending on the readers.

use std::fmt::Debug;

use traceloom_base::Time;

/// Identifies one stream (LTTV: a tracefile) of one trace in a traceset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Index of the trace in the traceset.
    pub trace: u32,
    /// Index of the stream in its trace.
    pub stream: u32,
}

impl StreamId {
    /// Stream `stream` of trace `trace`.
    pub const fn new(trace: u32, stream: u32) -> Self {
        StreamId { trace, stream }
    }
}

/// What the scheduler reads from an event.
pub trait SourceEvent {
    /// Timestamp of the event.
    fn time(&self) -> Time;
    /// Event-class id, unique in the whole traceset; it keys by-id hooks.
    fn class_id(&self) -> u64;
    /// The stream the event was read from.
    fn stream(&self) -> StreamId;
}

/// A saved place in a traceset.
///
/// Positions must be totally ordered **in reading order**: `a < b` exactly
/// when the event at `a` is read before the event at `b`. The position past
/// the last event (see [`EventSource::position`]) is greater than every event
/// position. They are cloneable so they can be stored (start of an
/// interrupted request, saved states, checkpoints) and later sought to.
pub trait SourcePosition: Ord + Clone + Debug {
    /// Timestamp of the event at this position; [`Time::MAX`] for the end
    /// position.
    fn time(&self) -> Time;
}

/// A traceset seen as one time-ordered sequence of events with a cursor.
///
/// The cursor designates the *current event* — the next one to be
/// delivered — or the end of the traceset. Every stream's events are merged
/// by time; ties must be broken deterministically, so that a seek followed
/// by reads always yields the same sequence.
///
/// Decoding errors are the source's business: it is expected to skip what it
/// cannot decode (and report it out of band) rather than fail a read, as
/// LTTV does; the scheduler only sees well-formed events.
pub trait EventSource {
    /// The event type handed to hooks.
    type Event: SourceEvent;
    /// The position type; see [`SourcePosition`].
    type Position: SourcePosition;

    /// Moves the cursor to the first event whose time is `>= time` (or to the
    /// end if there is none).
    fn seek_time(&mut self, time: Time);

    /// Moves the cursor to `position`, which was obtained from
    /// [`EventSource::position`] on this source.
    fn seek_position(&mut self, position: &Self::Position);

    /// The current event, `None` at the end.
    fn current(&self) -> Option<&Self::Event>;

    /// Position of the current event, or the end position (greater than any
    /// other) at the end.
    fn position(&self) -> Self::Position;

    /// Steps past the current event; no effect at the end.
    fn advance(&mut self);

    /// Whether [`advance`](Self::advance) can step past the current event
    /// without waiting for another thread (a decoding thread behind the
    /// read). A hint for [`Scheduler::service_nonblocking`](super::Scheduler::service_nonblocking),
    /// whose caller would rather do something else meanwhile; sources that
    /// never wait keep the default, `true`.
    fn ready(&self) -> bool {
        true
    }

    /// Every stream of the traceset, sorted; used to call the per-trace and
    /// per-stream begin/end hooks.
    fn streams(&self) -> Vec<StreamId>;

    /// Times of the first and last events, `None` if the traceset is empty.
    fn time_span(&self) -> Option<(Time, Time)>;
}
