//! A seek index finer than the packet index.
//!
//! The packet index finds the packet holding a time, but an LTTng packet
//! holds tens of thousands of events: seeking by packet alone decodes, in
//! every stream, everything from the packet start to the target — several
//! milliseconds on a kernel trace. A [`SeekIndex`] remembers, per stream,
//! the exact reading position of every [`SeekIndex::every`]-th event (the
//! ctf reader can resume in the middle of a packet from such a position),
//! so that a seek decodes at most that many events per stream before the
//! target.
//!
//! It is built by watching a full read in order ([`SeekIndexBuilder`]; the
//! checkpoint pass does it for free) and stored with the checkpoints.

use serde::{Deserialize, Serialize};
use traceloom_ctf::{CursorPosition, Event, Position, Traceset};

/// Events of a stream between two marks, by default: one decoding batch of
/// the ctf reader, so the batch decoded after a seek usually holds the
/// target.
pub const DEFAULT_EVERY: u64 = 1024;

/// One remembered reading position of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Mark {
    /// The largest timestamp of the stream's events *before* this one: a
    /// read starting here misses no event at or after any time above it.
    /// Monotonic along a stream's marks even when its clock goes backwards.
    bound: i64,
    packet: u64,
    event_index: u64,
    offset_bits: u64,
    /// The stream clock before the event (to rebuild partial timestamps).
    clock: u64,
}

/// Per stream, the positions of every `every`-th event (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeekIndex {
    every: u64,
    streams: Vec<Vec<Mark>>,
}

impl SeekIndex {
    /// Events of a stream between two marks (0 for an empty index).
    pub fn every(&self) -> u64 {
        self.every
    }

    /// Number of marks over all streams.
    pub fn len(&self) -> usize {
        self.streams.iter().map(Vec::len).sum()
    }

    /// `true` when the index has no mark.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each stream of `traceset` should start reading so that no
    /// event with a time `>= time` is missed, as late as the index and the
    /// packet index allow. The reader must still skip the events before
    /// `time` it meets (at most about [`every`](Self::every) per stream).
    pub fn starts(&self, traceset: &Traceset, time: i64) -> CursorPosition {
        let positions = traceset
            .streams()
            .map(|s| {
                let packets = traceset.packets(s.index);
                // The packet index's own answer (what a time seek of the
                // ctf reader does): the first packet that may hold `time`.
                let p = packets.partition_point(|p| p.end_ns.is_some_and(|e| e < time));
                let by_packet = Position {
                    stream: s.index,
                    packet: p,
                    event_index: 0,
                    offset_bits: 0,
                    clock_cycles: p
                        .checked_sub(1)
                        .and_then(|q| packets[q].ts_end)
                        .unwrap_or(0),
                };
                let marks = self.streams.get(s.index).map_or(&[][..], Vec::as_slice);
                let i = marks.partition_point(|m| m.bound < time);
                match i.checked_sub(1).map(|i| marks[i]) {
                    // Both starts are safe: take the later one.
                    Some(m) if (m.packet as usize, m.event_index) >= (p, 0) => Position {
                        stream: s.index,
                        packet: m.packet as usize,
                        event_index: m.event_index,
                        offset_bits: m.offset_bits,
                        clock_cycles: m.clock,
                    },
                    _ => by_packet,
                }
            })
            .collect();
        CursorPosition {
            positions,
            last_ns: i64::MIN,
        }
    }
}

/// Builds a [`SeekIndex`] from a read of every event of a traceset, each
/// stream's events in order from its first one (a full merged read does).
#[derive(Debug)]
pub struct SeekIndexBuilder {
    index: SeekIndex,
    /// Per stream: events to skip before the next mark (a countdown rather
    /// than a modulo: this runs for every event), and the largest timestamp
    /// seen.
    seen: Vec<(u64, i64)>,
}

impl SeekIndexBuilder {
    /// A builder keeping every `every`-th event of each stream (at least 1).
    pub fn new(every: u64) -> Self {
        SeekIndexBuilder {
            index: SeekIndex {
                every: every.max(1),
                streams: Vec::new(),
            },
            seen: Vec::new(),
        }
    }

    /// Takes note of the next event of its stream.
    #[inline]
    pub fn observe(&mut self, event: &Event<'_>) {
        let p = event.position();
        if self.seen.len() <= p.stream {
            self.seen.resize(p.stream + 1, (0, i64::MIN));
            self.index.streams.resize(p.stream + 1, Vec::new());
        }
        let (countdown, max) = &mut self.seen[p.stream];
        if *countdown == 0 {
            *countdown = self.index.every;
            self.index.streams[p.stream].push(Mark {
                bound: *max,
                packet: p.packet as u64,
                event_index: p.event_index,
                offset_bits: p.offset_bits,
                clock: p.clock_cycles,
            });
        }
        *countdown -= 1;
        if let Some(ns) = event.timestamp_ns() {
            *max = (*max).max(ns);
        }
    }

    /// Where the builder is in its read, to come back to with
    /// [`rewind`](Self::rewind).
    pub fn cursor(&self) -> SeekIndexCursor {
        SeekIndexCursor {
            streams: self
                .seen
                .iter()
                .zip(&self.index.streams)
                .map(|(&(countdown, max), marks)| (countdown, max, marks.len()))
                .collect(),
        }
    }

    /// Goes back to `cursor`, taken from this builder earlier in its read:
    /// drops the marks made since and takes the counts back, so that fed
    /// the events from there on it builds the index one read builds. (A
    /// builder cannot start mid-read from nothing: each stream's marks
    /// depend on its events counted from its first, and their bounds on
    /// the largest timestamp seen.)
    pub fn rewind(&mut self, cursor: &SeekIndexCursor) {
        let n = cursor.streams.len();
        self.seen.truncate(n);
        self.index.streams.truncate(n);
        for (k, &(countdown, max, marks)) in cursor.streams.iter().enumerate() {
            self.seen[k] = (countdown, max);
            self.index.streams[k].truncate(marks);
        }
    }

    /// The index.
    pub fn finish(self) -> SeekIndex {
        self.index
    }
}

/// A point of a [`SeekIndexBuilder`]'s read ([`SeekIndexBuilder::cursor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekIndexCursor {
    /// Per stream seen: the countdown, the largest timestamp, the number
    /// of marks.
    streams: Vec<(u64, i64, usize)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceloom_ctf::Message;

    /// Feeds `b` the events of `ts` in reading order, from the `skip`-th;
    /// with `cursor_at`, returns its cursor before the event of that rank.
    /// (And the number of events.)
    fn feed(
        ts: &Traceset,
        b: &mut SeekIndexBuilder,
        skip: u64,
        cursor_at: Option<u64>,
    ) -> (Option<SeekIndexCursor>, u64) {
        let mut cursor = None;
        let mut messages = ts.messages();
        let mut rank = 0;
        while let Some(m) = messages.next() {
            let Ok(Message::Event(e)) = m else {
                continue;
            };
            if cursor_at == Some(rank) {
                cursor = Some(b.cursor());
            }
            if rank >= skip {
                b.observe(&e);
            }
            rank += 1;
        }
        (cursor, rank)
    }

    /// A builder that read everything, rewound to where it was at any event
    /// and fed the events from there, builds the index of one read.
    #[test]
    fn rewound_and_read_on_equals_one_read() {
        let paths = [
            traceloom_testdata::sample_kernel(),
            traceloom_testdata::ctf("tracecompass/synctraces"),
        ];
        for path in paths {
            let ts = Traceset::open(std::slice::from_ref(&path)).unwrap();
            let mut whole = SeekIndexBuilder::new(7);
            let (_, events) = feed(&ts, &mut whole, 0, None);
            let whole = whole.finish();
            assert!(whole.streams.len() > 1, "{}", path.display());
            for at in [0, 1, 6, 7, 8, events / 3, events / 2, events - 3] {
                let mut b = SeekIndexBuilder::new(7);
                let c = feed(&ts, &mut b, 0, Some(at)).0.expect("a cursor");
                b.rewind(&c);
                feed(&ts, &mut b, at, None);
                assert_eq!(b.finish(), whole, "{}: rewound to {at}", path.display());
            }
        }
    }
}
