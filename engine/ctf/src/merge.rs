//! Merging all streams into one time-ordered message sequence.
//!
//! Each stream reader holds its next message (its *head*); a binary heap
//! orders the heads by `(time, rank)` where the rank reproduces
//! babeltrace2's muxer tie-break for equal timestamps (trace UUID, trace
//! name, stream class id, stream id). Messages without a time take the last
//! delivered time, as in babeltrace2. While the stream just read still has
//! the smallest head, it is read again without touching the heap.
//!
//! The cursor is a lending iterator: a [`Message`] borrows the cursor until
//! the next call to [`Cursor::next`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::ReadError;
use crate::event::{Message, Position};
use crate::prefetch::Decoders;
use crate::stream::{Head, StreamReader};
use crate::traceset::{Traceset, TracesetData};

/// Ordering key of a stream's head: `(ns, rank, stream)`, smallest first.
type Key = (i64, u32, u32);

/// The heads waiting to be merged. Few streams (the usual case: one per
/// CPU) are kept in a vector sorted in decreasing order, whose last element
/// is the minimum: cheaper than a heap at that size. Many streams use a
/// binary heap.
#[derive(Debug)]
enum Queue {
    Sorted(Vec<Key>),
    Heap(BinaryHeap<Reverse<Key>>),
}

/// Above this many streams, the queue is a binary heap.
const SORTED_MAX: usize = 64;

impl Queue {
    fn new(n: usize) -> Self {
        if n <= SORTED_MAX {
            Queue::Sorted(Vec::with_capacity(n))
        } else {
            Queue::Heap(BinaryHeap::with_capacity(n))
        }
    }

    #[inline]
    fn push(&mut self, k: Key) {
        match self {
            Queue::Sorted(v) => {
                let i = v.partition_point(|x| *x > k);
                v.insert(i, k);
            }
            Queue::Heap(h) => h.push(Reverse(k)),
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Key> {
        match self {
            Queue::Sorted(v) => v.pop(),
            Queue::Heap(h) => h.pop().map(|r| r.0),
        }
    }

    /// Pops the minimum and pushes `k` (one operation: the merge's switch
    /// from one stream to another).
    #[inline]
    fn replace_min(&mut self, k: Key) -> Option<Key> {
        match self {
            Queue::Sorted(v) => {
                let top = v.pop()?;
                // With two streams the queue is now empty; generally the
                // new key often goes back on top.
                if v.last().is_none_or(|last| k < *last) {
                    v.push(k);
                } else {
                    let i = v.partition_point(|x| *x > k);
                    v.insert(i, k);
                }
                Some(top)
            }
            Queue::Heap(h) => {
                let mut top = h.peek_mut()?;
                Some(std::mem::replace(&mut *top, Reverse(k)).0)
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<Key> {
        match self {
            Queue::Sorted(v) => v.last().copied(),
            Queue::Heap(h) => h.peek().map(|r| r.0),
        }
    }
}

/// A saved reading position of a [`Cursor`]: per stream, where its next
/// message is. Cheap to take and to restore (one packet header decode per
/// stream).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Checkpoint {
    /// Per stream (indexed by [`crate::StreamInfo::index`]).
    pub positions: Vec<Position>,
    /// The time of the last delivered message.
    pub last_ns: i64,
}

/// Reads the merged messages of a [`Traceset`].
#[derive(Debug)]
pub struct Cursor<'a> {
    ts: &'a Traceset,
    readers: Vec<StreamReader<'a>>,
    /// Dropping it stops and joins the decoding threads.
    decoders: Decoders,
    heap: Queue,
    /// The stream whose head was delivered last (advanced on the next call).
    current: Option<usize>,
    started: bool,
    last_ns: i64,
    begin: Option<i64>,
    end: Option<i64>,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(ts: &'a Traceset, begin: Option<i64>, end: Option<i64>) -> Self {
        let starts: Vec<Position> = ts
            .streams
            .iter()
            .enumerate()
            .map(|(stream, sd)| {
                let packets = &sd.packets;
                // Start each stream at the first packet that may hold
                // messages at or after `begin` (O(log packets)); the rest of
                // the way is an in-packet scan filtered in `next`.
                let p = begin.map_or(0, |b| {
                    packets.partition_point(|p| p.end_ns.is_some_and(|e| e < b))
                });
                Position {
                    stream,
                    packet: p,
                    event_index: 0,
                    offset_bits: 0,
                    clock_cycles: p
                        .checked_sub(1)
                        .and_then(|q| packets[q].ts_end)
                        .unwrap_or(0),
                }
            })
            .collect();
        Self::starting_at(ts, &starts, i64::MIN, begin, end)
    }

    fn starting_at(
        ts: &'a Traceset,
        starts: &[Position],
        last_ns: i64,
        begin: Option<i64>,
        end: Option<i64>,
    ) -> Self {
        let data: &'a TracesetData = &ts.data;
        let readers: Vec<StreamReader<'a>> = starts
            .iter()
            .map(|p| StreamReader::new(data, p.stream, *p))
            .collect();
        // More workers than streams would only wait.
        let threads = ts
            .decode_threads()
            .min(starts.len().saturating_sub(1).max(1));
        let threads = if starts.len() <= 1 { 0 } else { threads };
        Cursor {
            ts,
            decoders: Decoders::new(Arc::clone(&ts.data), starts, threads),
            readers,
            heap: Queue::new(starts.len()),
            current: None,
            started: false,
            last_ns,
            begin,
            end,
        }
    }

    /// The traceset being read.
    pub fn traceset(&self) -> &'a Traceset {
        self.ts
    }

    /// A cursor resuming at a checkpoint taken with [`Cursor::checkpoint`]
    /// (of a cursor on the same traceset).
    pub fn from_checkpoint(ts: &'a Traceset, cp: &Checkpoint) -> Self {
        let starts: Vec<Position> = (0..ts.streams.len())
            .map(|s| {
                cp.positions.get(s).copied().unwrap_or(Position {
                    stream: s,
                    packet: 0,
                    event_index: 0,
                    offset_bits: 0,
                    clock_cycles: 0,
                })
            })
            .map(|mut p| {
                p.packet = p.packet.min(ts.streams[p.stream].packets.len());
                p
            })
            .collect();
        Self::starting_at(ts, &starts, cp.last_ns, None, None)
    }

    /// Where each stream's next message is; restore with
    /// [`Cursor::from_checkpoint`]. Lost-records messages queued at the
    /// start of a packet and not yet delivered are replayed only when the
    /// stream had not yet delivered any event of that packet.
    pub fn checkpoint(&self) -> Checkpoint {
        let positions = self
            .readers
            .iter()
            .map(|r| {
                let delivered = self.current == Some(r.stream) || !self.started;
                match r.head {
                    Head::Event if !delivered => r.event_position(),
                    Head::Lost(_) if !delivered => r.packet_start_position(),
                    _ => r.resume_position(),
                }
            })
            .collect();
        Checkpoint {
            positions,
            last_ns: self.last_ns,
        }
    }

    fn key(&self, s: usize) -> Option<Key> {
        let r = &self.readers[s];
        match r.head {
            Head::End | Head::Unstarted => None,
            Head::Event | Head::Lost(_) | Head::Error => {
                Some((r.ns.unwrap_or(self.last_ns), r.rank, s as u32))
            }
        }
    }

    /// Advances stream `s` past messages before `begin`; returns its key.
    fn advance(&mut self, s: usize) -> Option<Key> {
        loop {
            self.readers[s].advance(&self.decoders.shared);
            let k = self.key(s)?;
            if let (Some(b), Head::Event | Head::Lost(_)) = (self.begin, self.readers[s].head) {
                if self.readers[s].ns.is_some_and(|ns| ns < b) {
                    continue;
                }
            }
            return Some(k);
        }
    }

    /// The next message, or `None` at the end. An `Err` reports damage in
    /// one stream (file and byte offset); that stream stops there and the
    /// other streams go on.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<Message<'_>, ReadError>> {
        let chosen = loop {
            let chosen = self.pick()?;
            self.current = Some(chosen);
            let r = &mut self.readers[chosen];
            if let Head::Error = r.head {
                r.head = Head::End;
                match r.error.take() {
                    Some(e) => return Some(Err(e)),
                    None => continue,
                }
            }
            if let (Some(e), Some(ns)) = (self.end, r.ns) {
                if ns > e {
                    // This stream is past the end bound: drop it.
                    r.head = Head::End;
                    self.decoders.shared.drop_stream(chosen);
                    continue;
                }
            }
            if !matches!(r.head, Head::Event | Head::Lost(_)) {
                continue;
            }
            if let Some(ns) = r.ns {
                self.last_ns = self.last_ns.max(ns);
            }
            break chosen;
        };
        self.readers[chosen].message().map(Ok)
    }

    /// Whether the next [`Cursor::next`] would wait for a decoding thread:
    /// the stream it advances needs a new batch, and a worker is still
    /// decoding it. Never `true` without decoding threads. A hint for
    /// callers with something else to do meanwhile (a GUI's main loop):
    /// a `false` does not rule out a wait in the rare calls that advance
    /// more than one stream (past damage, past the end bound).
    pub fn would_block(&self) -> bool {
        let shared = &self.decoders.shared;
        let waits = |r: &StreamReader<'_>| r.needs_batch() && shared.would_wait(r.stream);
        if !self.started {
            return self.readers.iter().any(waits);
        }
        self.current.is_some_and(|s| waits(&self.readers[s]))
    }

    /// Selects the stream holding the oldest head, advancing the stream
    /// delivered last.
    fn pick(&mut self) -> Option<usize> {
        if !self.started {
            self.started = true;
            for s in 0..self.readers.len() {
                if let Some(k) = self.advance(s) {
                    self.heap.push(k);
                }
            }
            return Some(self.heap.pop()?.2 as usize);
        }
        match self.current.take() {
            Some(s) => match self.advance(s) {
                // Fast path: the same stream still has the oldest head.
                Some(k) if self.heap.peek().is_none_or(|top| k <= top) => Some(s),
                Some(k) => Some(self.heap.replace_min(k)?.2 as usize),
                None => Some(self.heap.pop()?.2 as usize),
            },
            None => Some(self.heap.pop()?.2 as usize),
        }
    }
}

impl<'a> Cursor<'a> {
    /// The message the last [`Cursor::next`] returned, again (`None` before
    /// the first call and at the end). It borrows the cursor like `next`'s.
    pub fn current(&self) -> Option<Message<'_>> {
        self.readers.get(self.current?)?.message()
    }
}

impl Traceset {
    /// The merge tie-break rank of stream `stream` ([`crate::StreamInfo::index`]):
    /// at equal timestamps, messages of lower-ranked streams come first.
    pub fn stream_rank(&self, stream: usize) -> u32 {
        self.streams.get(stream).map_or(u32::MAX, |s| s.rank)
    }
}
