//! The CTF traceset as an [`EventSource`]: what the events-request
//! scheduler reads.
//!
//! A [`CtfSource`] owns an `Arc<Traceset>` and a merge cursor over it. The
//! scheduler's event type is [`CtfCurrent`], the reading head itself: hooks
//! call [`CtfCurrent::event`] to see the decoded [`Event`] (a view of the
//! cursor's buffers, nothing is copied).
//!
//! Positions are the merge order's sort key — time, the stream's tie-break
//! rank, the stream, the packet and the event's index in it — so they are
//! small `Copy` values, compare in reading order, and can be saved (in the
//! checkpoint cache too). Seeking to one seeks by time and then steps over
//! the few events that share its timestamp and sort before it.
//!
//! A time seek uses the packet index (binary search), which leaves every
//! stream at the start of a packet of possibly tens of thousands of events
//! to decode before the target; with a [`SeekIndex`]
//! ([`CtfSource::set_seek_index`]) each stream resumes instead within
//! [`SeekIndex::every`] events of it. An indexed seek also starts reading
//! without decoding threads: most reads after one are short (a screen of
//! events), and starting threads that decode thousands of events ahead
//! costs more than it saves; a read that goes on past [`SHORT_READ_EVENTS`]
//! continues with them. That holds for *position* seeks too (the scheduler
//! restoring a checkpoint before replaying the state, or resuming a read):
//! with a checkpoint every 4,000 events the replay plus a screen of events
//! is a short read — the seek with state went from 1.34 to 1.05 ms median,
//! worst 8.5 to 1.4 ms, back to back on the 1 GB trace — while a resumed
//! long read pays one switch to threads after [`SHORT_READ_EVENTS`].
//!
//! Discarded-records messages are not events: they are counted
//! ([`CtfSource::lost`]) and skipped. A damaged stream ends at the damage;
//! its error is kept ([`CtfSource::errors`]) and the other streams go on.

use std::sync::Arc;
use traceloom_base::Time;

use serde::{Deserialize, Serialize};
use traceloom_ctf::{Cursor, Event, Message, ReadError, Traceset};

use crate::request::{EventSource, SourceEvent, SourcePosition, StreamId};
use crate::seek_index::SeekIndex;

self_cell::self_cell!(
    struct CursorCell {
        owner: Arc<Traceset>,
        #[covariant]
        dependent: Cursor,
    }
);

/// A place in a CTF traceset, in reading order (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CtfPosition {
    /// Event time in ns; `i64::MAX` for the end.
    pub time: i64,
    /// Tie-break rank of the stream in the merge.
    pub rank: u32,
    /// Stream index in the traceset.
    pub stream: u32,
    /// Packet index within the stream.
    pub packet: u64,
    /// Event index within the packet.
    pub event_index: u64,
}

impl CtfPosition {
    /// The position past the last event.
    pub const END: CtfPosition = CtfPosition {
        time: i64::MAX,
        rank: u32::MAX,
        stream: u32::MAX,
        packet: u64::MAX,
        event_index: u64::MAX,
    };
}

impl SourcePosition for CtfPosition {
    fn time(&self) -> Time {
        self.time
    }
}

/// The reading head of a [`CtfSource`]: the event hooks see.
pub struct CtfCurrent {
    cell: CursorCell,
    /// Summary of the current event, `None` at the end.
    head: Option<Head>,
    /// After a seek through the seek index, messages before this time are
    /// skipped (the ctf reader's own time seek does the same).
    floor: Option<Time>,
    lost_events: u64,
    lost_packets: u64,
    errors: Vec<ReadError>,
}

#[derive(Debug, Clone, Copy)]
struct Head {
    position: CtfPosition,
    class_id: u64,
    stream: StreamId,
}

impl std::fmt::Debug for CtfCurrent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CtfCurrent")
            .field("head", &self.head)
            .finish()
    }
}

/// A traceset-wide event-class id: trace, stream class and event id packed
/// so that by-id hooks can key on it.
pub fn class_key(trace: usize, stream_class: u64, event_id: u64) -> u64 {
    ((trace as u64 & 0xFFFF) << 48) | ((stream_class & 0xFFFF) << 32) | (event_id & 0xFFFF_FFFF)
}

impl CtfCurrent {
    /// The decoded current event, `None` at the end.
    pub fn event(&self) -> Option<Event<'_>> {
        match self.cell.borrow_dependent().current()? {
            Message::Event(e) => Some(e),
            _ => None,
        }
    }

    /// The traceset.
    pub fn traceset(&self) -> &Arc<Traceset> {
        self.cell.borrow_owner()
    }

    fn load_head(&mut self) {
        self.head = None;
        let mut lost = (0, 0);
        let mut errors = Vec::new();
        let floor = self.floor;
        // Messages before the floor are skipped (events by their time,
        // lost-records messages by their start, as `Message::sort_time_ns`).
        // Matching the message once, where `next` returns it, rather than
        // keeping it for a second look spares a copy of it per event.
        let below = |t: Option<i64>| matches!((floor, t), (Some(f), Some(t)) if t < f);
        let head = self.cell.with_dependent_mut(|ts, cursor| loop {
            match cursor.next()? {
                Ok(Message::Event(e)) => {
                    if below(e.timestamp_ns()) {
                        continue;
                    }
                    let p = e.position();
                    break Some(Head {
                        position: CtfPosition {
                            time: e.timestamp_ns().unwrap_or(i64::MIN),
                            rank: ts.stream_rank(p.stream),
                            stream: p.stream as u32,
                            packet: p.packet as u64,
                            event_index: p.event_index,
                        },
                        class_id: class_key(e.trace().index, e.stream_class().id, e.id()),
                        stream: StreamId::new(e.trace().index as u32, p.stream as u32),
                    });
                }
                // Damaged counters can say anything: the sums saturate.
                Ok(Message::DiscardedEvents(d)) if !below(d.begin_ns) => {
                    lost.0 = u64::saturating_add(lost.0, d.count.unwrap_or(0))
                }
                Ok(Message::DiscardedPackets(d)) if !below(d.begin_ns) => {
                    lost.1 = u64::saturating_add(lost.1, d.count.unwrap_or(0))
                }
                Ok(_) => {}
                Err(e) => errors.push(e),
            }
        });
        self.head = head;
        self.lost_events = self.lost_events.saturating_add(lost.0);
        self.lost_packets = self.lost_packets.saturating_add(lost.1);
        // After a seek the same damage is met again; report it once.
        if errors.is_empty() {
            return;
        }
        for e in errors {
            let text = e.to_string();
            if !self.errors.iter().any(|x| x.to_string() == text) {
                self.errors.push(e);
            }
        }
    }
}

impl SourceEvent for CtfCurrent {
    fn time(&self) -> Time {
        self.head.map_or(i64::MAX, |h| h.position.time)
    }

    fn class_id(&self) -> u64 {
        self.head.map_or(u64::MAX, |h| h.class_id)
    }

    fn stream(&self) -> StreamId {
        self.head
            .map_or(StreamId::new(u32::MAX, u32::MAX), |h| h.stream)
    }
}

/// Events read after an indexed seek before decoding threads are started
/// (see the module doc).
pub const SHORT_READ_EVENTS: u64 = 4096;

/// A CTF traceset read as one time-ordered sequence of events.
pub struct CtfSource {
    current: CtfCurrent,
    streams: Vec<StreamId>,
    span: Option<(Time, Time)>,
    /// The traceset, with its own number of decoding threads.
    traceset: Arc<Traceset>,
    seek_index: Option<Arc<SeekIndex>>,
    /// The same traces without decoding threads, for reads after a seek.
    unthreaded: Option<Arc<Traceset>>,
    /// Events still to read on the unthreaded cursor before the read
    /// continues with threads; `None` when the cursor is threaded.
    short_read: Option<u64>,
}

impl std::fmt::Debug for CtfSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CtfSource")
            .field("current", &self.current)
            .field("streams", &self.streams.len())
            .finish()
    }
}

impl CtfSource {
    /// A source reading `traceset` from its first event.
    pub fn new(traceset: Arc<Traceset>) -> Self {
        let shared = traceset.clone();
        let streams = traceset
            .streams()
            .map(|s| StreamId::new(s.trace as u32, s.index as u32))
            .collect();
        let mut current = CtfCurrent {
            cell: CursorCell::new(traceset, |ts| ts.messages()),
            head: None,
            floor: None,
            lost_events: 0,
            lost_packets: 0,
            errors: Vec::new(),
        };
        current.load_head();
        let first = current.head.map(|h| h.position.time);
        let span = first.and_then(|b| {
            let (_, e) = current.traceset().time_range_ns()?;
            Some((b, e.max(b)))
        });
        CtfSource {
            current,
            streams,
            span,
            traceset: shared,
            seek_index: None,
            unthreaded: None,
            short_read: None,
        }
    }

    /// Makes time and position seeks resume each stream at the nearest
    /// position of `index` (built on this traceset) rather than at a packet
    /// start. The events read are the same either way.
    pub fn set_seek_index(&mut self, index: Arc<SeekIndex>) {
        self.seek_index = Some(index);
        if self.traceset.decode_threads() > 0 {
            self.unthreaded = Some(Arc::new(self.traceset.with_decode_threads(0)));
        }
    }

    /// The traceset.
    pub fn traceset(&self) -> &Arc<Traceset> {
        &self.traceset
    }

    /// Discarded events and lost packets seen so far (in whatever was read,
    /// possibly several times after seeks).
    pub fn lost(&self) -> (u64, u64) {
        (self.current.lost_events, self.current.lost_packets)
    }

    /// Errors met so far (damaged streams), oldest first.
    pub fn errors(&self) -> &[ReadError] {
        &self.current.errors
    }

    /// Restarts reading at the first event at or after `time`; `short`
    /// when the read is expected to be short (module doc).
    fn restart_at(&mut self, time: Option<Time>, short: bool) {
        let index = self.seek_index.as_deref().filter(|i| !i.is_empty());
        let ts = match (&self.unthreaded, time, index) {
            (Some(u), Some(_), Some(_)) if short => {
                self.short_read = Some(SHORT_READ_EVENTS);
                u.clone()
            }
            _ => {
                self.short_read = None;
                self.traceset.clone()
            }
        };
        self.current.floor = None;
        self.current.cell = CursorCell::new(ts, |ts| match (time, index) {
            (Some(t), Some(index)) => Cursor::from_position(ts, &index.starts(ts, t)),
            (Some(t), None) => ts.messages_between(Some(t), None),
            (None, _) => ts.messages(),
        });
        if let (Some(t), Some(_)) = (time, index) {
            self.current.floor = Some(t);
        }
        self.current.load_head();
    }
}

impl EventSource for CtfSource {
    type Event = CtfCurrent;
    type Position = CtfPosition;

    fn seek_time(&mut self, time: Time) {
        self.restart_at(Some(time), true);
    }

    fn seek_position(&mut self, position: &CtfPosition) {
        if *position == CtfPosition::END {
            while self.current.head.is_some() {
                self.current.load_head();
            }
            return;
        }
        // Short too (module doc): restoring a checkpoint replays fewer
        // events than starting decoding threads is worth.
        self.restart_at(Some(position.time), true);
        while let Some(h) = self.current.head {
            if h.position >= *position {
                break;
            }
            self.current.load_head();
        }
    }

    fn current(&self) -> Option<&CtfCurrent> {
        self.current.head.map(|_| &self.current)
    }

    fn position(&self) -> CtfPosition {
        self.current.head.map_or(CtfPosition::END, |h| h.position)
    }

    fn advance(&mut self) {
        if self.current.head.is_none() {
            return;
        }
        if let Some(left) = &mut self.short_read {
            *left = left.saturating_sub(1);
            if *left == 0 {
                // A long read: go on from here with decoding threads. The
                // cursor's checkpoint is just past the current event.
                self.short_read = None;
                let cp = self.current.cell.borrow_dependent().position();
                self.current.cell =
                    CursorCell::new(self.traceset.clone(), |ts| Cursor::from_position(ts, &cp));
            }
        }
        self.current.load_head();
    }

    fn ready(&self) -> bool {
        // A short read switching to threads on this advance may still wait
        // for the new decoders' first batches (once per long read).
        !self.current.cell.borrow_dependent().would_block()
    }

    fn streams(&self) -> Vec<StreamId> {
        self.streams.clone()
    }

    fn time_span(&self) -> Option<(Time, Time)> {
        self.span
    }
}
