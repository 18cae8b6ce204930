//! Reading the messages of one stream: walking the events of its decoded
//! batches (`batch`), taken from a [`BatchSource`], and deriving the
//! lost-records messages from consecutive packet contexts.

use std::collections::BTreeMap;

use crate::error::ReadError;
use crate::event::{Discarded, Event, EventData, Message, Position};
use crate::schema::CompiledStream;
use crate::stream::batch::Batch;
use crate::stream::packet::PacketInfo;
use crate::stream::StreamData;
use crate::trace::TraceInfo;
use traceloom_tsdl::ir::StreamClass;

/// Where stream readers take their batches from: the merge's decoders,
/// which decode them ahead on worker threads or on the spot.
pub(crate) trait BatchSource {
    /// Takes the next batch of stream `stream` into `out` (the previous
    /// content of `out` is recycled); `false` when the stream is finished.
    fn next_batch(&self, stream: usize, out: &mut Batch) -> bool;
}

/// Placeholder for the stream class of a stream whose class is missing
/// (such a stream has no events to show).
static EMPTY_STREAM_CLASS: StreamClass = StreamClass {
    id: 0,
    packet_context: None,
    event_header: None,
    event_context: None,
    events: BTreeMap::new(),
};

/// A lost-records message waiting to be delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lost {
    pub(crate) packets: bool,
    pub(crate) begin: Option<u64>,
    pub(crate) end: Option<u64>,
    pub(crate) count: Option<u64>,
}

/// The message a stream reader currently holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Head {
    /// Nothing decoded yet.
    Unstarted,
    /// An event (its values are in the reader's batch).
    Event,
    /// Lost events or packets.
    Lost(Lost),
    /// The stream is damaged; the error is in `StreamReader::error`.
    Error,
    /// No more messages.
    End,
}

/// Lost-events message for the step from `prev` (the previous packet's
/// counter) to `cur`: `None` for no message, `Some(None)` for "may have
/// discarded" without a count.
///
/// babeltrace2 reports `cur - prev` computed in wrapping 64-bit arithmetic,
/// so a counter that goes backwards becomes a count near 2^64. Real
/// LTTng-UST discard-mode traces do that: the per-CPU buffer's counter
/// snapshot written in a packet can be older than the previous packet's
/// (e.g. 29691, 0, 29691, 0, ... on the shared ust_uid_discard traces).
/// We report exactly what babeltrace2 reports except for those
/// decreases, which produce no message and restart the reference at the
/// new value, so that counts are never absurd and never double a
/// decrease.
fn lost_events(prev: Option<u64>, cur: u64) -> Option<Option<u64>> {
    match prev {
        // First packet: babeltrace2 reports "may have discarded" without a
        // count when the counter is already non-zero.
        None => (cur != 0).then_some(None),
        Some(p) if cur > p => Some(Some(cur - p)),
        Some(_) => None,
    }
}

/// Lost packets between sequence numbers `prev` and `cur`: a gap of more
/// than one. A sequence number that does not increase (reordered or
/// duplicated packets, a wrapped counter) reports nothing, where babeltrace2
/// would print a wrapped count.
fn lost_packets(prev: Option<u64>, cur: u64) -> Option<u64> {
    let p = prev?;
    (cur > p && cur - p > 1).then(|| cur - p - 1)
}

/// Reads one stream's messages from its batches.
#[derive(Debug)]
pub(crate) struct StreamReader<'a> {
    pub(crate) stream: usize,
    sd: &'a StreamData,
    sc: Option<&'a CompiledStream>,
    /// The current batch and the index of its next event.
    batch: Batch,
    next_event: usize,
    has_batch: bool,
    /// Lost-records messages queued at the start of a packet.
    queue: [Option<Lost>; 2],
    /// `events_discarded`, `packet_seq_num` and `timestamp_end` of the
    /// previous packet.
    prev_discarded: Option<u64>,
    prev_seq: Option<u64>,
    prev_end: Option<u64>,
    pub(crate) head: Head,
    /// The stream's rank in babeltrace2's tie-break order.
    pub(crate) rank: u32,
    /// Time of the head (event time, or a lost range's start).
    pub(crate) ns: Option<i64>,
    pub(crate) error: Option<ReadError>,
    /// Whether the index error (damage found while indexing) was reported.
    index_error_done: bool,
    /// What the events of the current batch share (set once per batch).
    ev: EventData<'a>,
    /// Index in the batch of the head event (when `head` is `Event`).
    cur: usize,
    /// The head's lost-records message (when `head` is `Lost`), kept here
    /// so that a [`Message`] only refers to it: an event message is then
    /// 48 bytes, not 112.
    lost: Option<Discarded<'a>>,
    /// Where the stream starts (restored position), for checkpoints taken
    /// before anything was read.
    start: Position,
}

impl<'a> StreamReader<'a> {
    /// A reader of stream `sd` of trace `trace`, whose compiled stream
    /// class is `sc` (`None`: missing from the metadata), starting at
    /// `start` (as if everything before had been read: lost-records
    /// references are rebuilt from the packets before).
    pub(crate) fn new(
        trace: &'a TraceInfo,
        sd: &'a StreamData,
        sc: Option<&'a CompiledStream>,
        start: Position,
    ) -> Self {
        let ir_sc = trace.class.streams.get(&sd.info.class_id);
        let mut r = StreamReader {
            stream: sd.info.index,
            sd,
            sc,
            batch: Batch::default(),
            next_event: 0,
            has_batch: false,
            queue: [None; 2],
            prev_discarded: None,
            prev_seq: None,
            prev_end: None,
            head: Head::Unstarted,
            rank: sd.rank,
            ns: None,
            error: None,
            index_error_done: false,
            ev: EventData {
                trace,
                stream: &sd.info,
                stream_class: ir_sc.unwrap_or(&EMPTY_STREAM_CLASS),
                classes: sc.map(|sc| &sc.classes),
                clock: sc.and_then(|sc| sc.clock.as_ref()),
                packet: &[],
                header_values: 0,
                context_values: 0,
                cpu_id: None,
                packet_index: start.packet,
            },
            cur: 0,
            lost: None,
            start,
        };
        let upto = start.packet.min(sd.packets.len());
        for p in &sd.packets[..upto] {
            r.note_packet(p);
        }
        if start.offset_bits != 0 {
            // Resuming inside a packet: its lost-records messages were
            // delivered before.
            if let Some(p) = sd.packets.get(start.packet) {
                r.note_packet(p);
            }
        }
        r
    }

    /// Records `p` as the previous packet for lost-records accounting.
    fn note_packet(&mut self, p: &PacketInfo) {
        if p.events_discarded.is_some() {
            self.prev_discarded = p.events_discarded;
        }
        if p.seq_num.is_some() {
            self.prev_seq = p.seq_num;
        }
        self.prev_end = p.ts_end;
    }

    fn fail(&mut self, e: ReadError) {
        self.error = Some(e);
        self.head = Head::Error;
        self.has_batch = false;
        self.index_error_done = true;
    }

    /// Queues the lost-records messages due at the start of the batch's
    /// packet.
    fn queue_lost(&mut self) {
        let si = self.batch.info;
        self.queue = [None; 2];
        let mut q = 0;
        if let Some(cur) = si.events_discarded {
            if let Some(count) = lost_events(self.prev_discarded, cur) {
                let (begin, end) = match self.prev_discarded {
                    None => (si.ts_begin, si.ts_end),
                    Some(_) => (self.prev_end, si.ts_end),
                };
                self.queue[q] = Some(Lost {
                    packets: false,
                    begin,
                    end,
                    count,
                });
                q += 1;
            }
        }
        if let Some(cur) = si.seq_num {
            if let Some(count) = lost_packets(self.prev_seq, cur) {
                self.queue[q] = Some(Lost {
                    packets: true,
                    begin: self.prev_end,
                    end: si.ts_begin,
                    count: Some(count),
                });
            }
        }
        self.note_packet(&si);
    }

    /// Asks for what the next events will need while the head is
    /// consumed: the record after next (the merge reads the next one's
    /// time as soon as the head is consumed, and this was asked for one
    /// event earlier) and the values that follow the head's, those of the
    /// next events (found from the head's record, which is at hand). The
    /// decoding thread wrote them, so they are in another core's cache or
    /// in memory; waiting for them was a tenth of an analysis pass
    /// (`perf`).
    #[inline(always)]
    fn prefetch_ahead(&self) {
        let events = &self.batch.events;
        if let Some(later) = events.get(self.next_event + 1) {
            prefetch(later);
        }
        if let Some(head) = events.get(self.cur) {
            let end = head.bounds[4] as usize;
            // Four 16-byte values a cache line.
            for ahead in [0, 4, 8] {
                if let Some(v) = self.batch.values.get(end + ahead) {
                    prefetch(v);
                }
            }
        }
    }

    /// Makes event `index_in_batch` of the current batch the head.
    #[inline(always)]
    fn set_event(&mut self, index_in_batch: usize) {
        self.cur = index_in_batch;
        self.ns = self.batch.events[index_in_batch].ns();
        self.head = Head::Event;
    }

    /// The time of the next message when it is the next event of the
    /// current batch and has a time (what [`StreamReader::advance`] would
    /// make the head by its common case); `None` otherwise.
    #[inline(always)]
    pub(crate) fn next_event_ns(&self) -> Option<i64> {
        if self.has_batch && self.queue[0].is_none() {
            self.batch.events.get(self.next_event)?.ns()
        } else {
            None
        }
    }

    /// Makes the next event the head, after [`StreamReader::next_event_ns`]
    /// returned `Some(ns)`.
    #[inline(always)]
    pub(crate) fn take_next_event(&mut self, ns: i64) {
        self.cur = self.next_event;
        self.next_event += 1;
        self.prefetch_ahead();
        self.ns = Some(ns);
        self.head = Head::Event;
    }

    /// Decodes the next message into the reader's head.
    #[inline]
    pub(crate) fn advance(&mut self, batches: &impl BatchSource) {
        // The common case first: the next event of the current batch, no
        // lost-records message pending.
        if self.has_batch && self.queue[0].is_none() {
            let i = self.next_event;
            if i < self.batch.events.len() {
                self.next_event = i + 1;
                self.set_event(i);
                self.prefetch_ahead();
                return;
            }
        }
        self.advance_slow(batches);
    }

    /// Whether the next [`StreamReader::advance`] takes a new batch from
    /// the decoders (the current one is used up, no message is queued).
    pub(crate) fn needs_batch(&self) -> bool {
        !matches!(self.head, Head::Error | Head::End)
            && self.queue[0].is_none()
            && (!self.has_batch
                || (self.next_event >= self.batch.events.len() && self.batch.error.is_none()))
    }

    /// [`StreamReader::advance`] at batch and packet boundaries.
    fn advance_slow(&mut self, batches: &impl BatchSource) {
        if matches!(self.head, Head::Error | Head::End) {
            self.head = Head::End;
            return;
        }
        loop {
            // Queued lost-records messages come before the packet's events.
            if let Some(l) = self.queue[0].take() {
                self.queue[0] = self.queue[1].take();
                self.ns = match (self.sc.and_then(|sc| sc.conv), l.begin) {
                    (Some(c), Some(b)) => c.to_ns(b),
                    _ => None,
                };
                self.head = Head::Lost(l);
                self.lost = self.discarded(l);
                return;
            }
            if self.has_batch {
                let i = self.next_event;
                if i < self.batch.events.len() {
                    self.next_event = i + 1;
                    self.set_event(i);
                    return;
                }
                if let Some(e) = self.batch.error.take() {
                    self.fail(e);
                    return;
                }
                self.has_batch = false;
            }
            if !batches.next_batch(self.stream, &mut self.batch) {
                if !self.index_error_done {
                    self.index_error_done = true;
                    if let Some(e) = self.sd.index_error() {
                        self.fail(e);
                        return;
                    }
                }
                self.head = Head::End;
                return;
            }
            self.has_batch = true;
            self.next_event = 0;
            let b = &self.batch;
            self.ev.packet_index = b.packet;
            self.ev.header_values = b.header_values;
            self.ev.context_values = b.context_values;
            if b.packet_ok {
                let map: &'a [u8] = &self.sd.maps[b.info.file as usize];
                self.ev.packet = &map[b.start..b.content_end];
                self.ev.cpu_id = b.info.cpu_id;
                if b.packet_start {
                    self.queue_lost();
                }
            }
        }
    }

    /// The position of the current event head (its start).
    pub(crate) fn event_position(&self) -> Position {
        match self.batch.events.get(self.cur) {
            Some(rec) if self.has_batch => rec.position(
                self.stream,
                self.batch.packet,
                self.batch.first_index + self.cur as u64,
            ),
            _ => self.start,
        }
    }

    /// The start of the packet being read (its lost-records messages and
    /// events all replay from there).
    pub(crate) fn packet_start_position(&self) -> Position {
        if !self.has_batch {
            return self.start;
        }
        Position {
            stream: self.stream,
            packet: self.batch.packet,
            event_index: 0,
            offset_bits: 0,
            clock_cycles: self.batch.clock_before_packet,
        }
    }

    /// The position of the next message after the head.
    pub(crate) fn resume_position(&self) -> Position {
        match self.head {
            Head::Unstarted => self.start,
            Head::Error | Head::End => Position {
                stream: self.stream,
                packet: self.sd.packets.len(),
                event_index: 0,
                offset_bits: 0,
                clock_cycles: 0,
            },
            Head::Event | Head::Lost(_) => {
                if !self.has_batch {
                    return self.start;
                }
                let b = &self.batch;
                match b.events.get(self.next_event) {
                    Some(rec) => rec.position(
                        self.stream,
                        b.packet,
                        b.first_index + self.next_event as u64,
                    ),
                    None => match (b.next, &b.error) {
                        (Some(r), _) => Position {
                            stream: self.stream,
                            packet: b.packet,
                            event_index: r.event_index,
                            offset_bits: r.offset_bits,
                            clock_cycles: r.clock,
                        },
                        (None, Some(_)) => Position {
                            stream: self.stream,
                            packet: self.sd.packets.len(),
                            event_index: 0,
                            offset_bits: 0,
                            clock_cycles: 0,
                        },
                        (None, None) => Position {
                            stream: self.stream,
                            packet: b.packet + 1,
                            event_index: 0,
                            offset_bits: 0,
                            clock_cycles: b.end_clock,
                        },
                    },
                }
            }
        }
    }

    /// The head event (the head must be `Event`).
    #[inline(always)]
    pub(crate) fn event(&self) -> Event<'_> {
        Event {
            d: &self.ev,
            rec: &self.batch.events[self.cur],
            event_index: self.batch.first_index + self.cur as u64,
            values: &self.batch.values,
        }
    }

    /// The head when it is an event.
    #[inline(always)]
    pub(crate) fn head_event(&self) -> Option<Event<'_>> {
        if let Head::Event = self.head {
            return Some(self.event());
        }
        None
    }

    /// The head as a message (`None` for `Unstarted`, `Error`, `End`).
    #[inline(always)]
    pub(crate) fn message(&self) -> Option<Message<'_>> {
        // One compare for the common case (a `match` on the head makes a
        // jump table, which showed in the profiles of every reader).
        if let Some(ev) = self.head_event() {
            return Some(Message::Event(ev));
        }
        self.other_message()
    }

    /// [`StreamReader::message`] for a head that is not an event.
    #[inline(never)]
    fn other_message(&self) -> Option<Message<'_>> {
        match self.head {
            Head::Event => Some(Message::Event(self.event())),
            Head::Lost(l) => self.lost_message(l),
            Head::Unstarted | Head::Error | Head::End => None,
        }
    }

    /// The lost-records message `l`.
    #[inline(never)]
    fn lost_message(&self, l: Lost) -> Option<Message<'_>> {
        let d = self.lost.as_ref()?;
        Some(if l.packets {
            Message::DiscardedPackets(d)
        } else {
            Message::DiscardedEvents(d)
        })
    }

    /// The lost-records message of `l`.
    fn discarded(&self, l: Lost) -> Option<Discarded<'a>> {
        let sc = self.sc?;
        let conv = sc.conv;
        let to_ns = |c: Option<u64>| c.and_then(|c| conv.and_then(|cv| cv.to_ns(c)));
        let has_clock = sc.clock.is_some();
        Some(Discarded {
            trace: self.ev.trace,
            stream: &self.sd.info,
            clock: sc.clock.as_ref(),
            begin_cycles: l.begin.filter(|_| has_clock),
            end_cycles: l.end.filter(|_| has_clock),
            begin_ns: to_ns(l.begin),
            end_ns: to_ns(l.end),
            count: l.count,
        })
    }
}

/// Asks the processor to fetch the cache line of `item` (a hint; nothing
/// where there is no such instruction).
#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that never faults, and `item` is a
    // valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_event_counts_never_wrap() {
        assert_eq!(lost_events(None, 0), None);
        assert_eq!(lost_events(None, 4), Some(None));
        assert_eq!(lost_events(Some(4), 4), None);
        assert_eq!(lost_events(Some(4), 9), Some(Some(5)));
        // Backwards: nothing (babeltrace2 would report 2^64 - 2); the
        // reference restarts there.
        assert_eq!(lost_events(Some(9), 7), None);
        assert_eq!(lost_events(Some(7), 9), Some(Some(2)));
    }

    #[test]
    fn lost_packet_counts_from_sequence_gaps() {
        assert_eq!(lost_packets(None, 5), None);
        assert_eq!(lost_packets(Some(5), 6), None);
        assert_eq!(lost_packets(Some(5), 9), Some(3));
        assert_eq!(lost_packets(Some(9), 2), None);
        assert_eq!(lost_packets(Some(9), 9), None);
    }
}
