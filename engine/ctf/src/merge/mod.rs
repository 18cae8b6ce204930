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
//! the next call to [`Cursor::next`]. Its stream readers take their batches
//! from `prefetch`, which decodes them ahead on worker threads. The top
//! layer of the crate: [`Traceset::messages`] and
//! [`Traceset::messages_between`] are defined here.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::ReadError;
use crate::event::{Message, Position};
use crate::fs::traceset::{Traceset, TracesetData};
use crate::stream::reader::{Head, StreamReader};
use prefetch::Decoders;

mod prefetch;

/// Ordering key of a stream's head: `(ns, rank, stream)`, smallest first,
/// packed in one integer that orders the same (see [`key`]): comparing
/// and moving it takes one register pair, not three fields (stored
/// separately and loaded at once, the fields stalled the store-to-load
/// forwarding of the merge's switch between streams).
type Key = u128;

/// The [`Key`] of a head at time `ns` of the stream `stream` of rank
/// `rank`.
#[inline(always)]
fn key(ns: i64, rank: u32, stream: u32) -> Key {
    // Flipping the sign bit maps i64 order onto u64 order.
    let t = (ns as u64) ^ (1 << 63);
    (u128::from(t) << 64) | (u128::from(rank) << 32) | u128::from(stream)
}

/// The stream of a [`Key`].
#[inline(always)]
fn key_stream(k: Key) -> usize {
    k as u32 as usize
}

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
    #[inline(always)]
    fn replace_min(&mut self, k: Key) -> Option<Key> {
        match self {
            Queue::Sorted(v) => {
                let n = v.len();
                // With two streams the queue holds one key; generally the
                // new key often goes back on top: then it just takes the
                // place of the minimum.
                if n >= 2 && k >= v[n - 2] {
                    let top = v.pop()?;
                    let i = v.partition_point(|x| *x > k);
                    v.insert(i, k);
                    return Some(top);
                }
                let last = v.last_mut()?;
                Some(std::mem::replace(last, k))
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
pub struct CursorPosition {
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
    /// `begin` and `end` as an inclusive range of times (the whole range
    /// without bounds), for the fast path.
    lo: i64,
    hi: i64,
}

impl Traceset {
    /// A cursor over all messages in time order.
    pub fn messages(&self) -> Cursor<'_> {
        Cursor::new(self, None, None)
    }

    /// A cursor over the messages whose time is within `[begin, end]` ns
    /// (either bound optional), starting directly at the right packet of
    /// each stream (binary search of the packet index).
    pub fn messages_between(&self, begin: Option<i64>, end: Option<i64>) -> Cursor<'_> {
        Cursor::new(self, begin, end)
    }
}

impl<'a> Cursor<'a> {
    fn new(ts: &'a Traceset, begin: Option<i64>, end: Option<i64>) -> Self {
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
            .map(|p| {
                let sd = &data.streams[p.stream];
                let trace = &data.traces[sd.info.trace].info;
                StreamReader::new(trace, sd, data.stream_class(sd), *p)
            })
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
            lo: begin.unwrap_or(i64::MIN),
            hi: end.unwrap_or(i64::MAX),
        }
    }

    /// The traceset being read.
    pub fn traceset(&self) -> &'a Traceset {
        self.ts
    }

    /// A cursor resuming at a position taken with [`Cursor::position`]
    /// (of a cursor on the same traceset).
    pub fn from_position(ts: &'a Traceset, cp: &CursorPosition) -> Self {
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
    /// [`Cursor::from_position`]. Lost-records messages queued at the
    /// start of a packet and not yet delivered are replayed only when the
    /// stream had not yet delivered any event of that packet.
    pub fn position(&self) -> CursorPosition {
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
        CursorPosition {
            positions,
            last_ns: self.last_ns,
        }
    }

    fn head_key(&self, s: usize) -> Option<Key> {
        let r = &self.readers[s];
        match r.head {
            Head::End | Head::Unstarted => None,
            Head::Event | Head::Lost(_) | Head::Error => {
                Some(key(r.ns.unwrap_or(self.last_ns), r.rank, s as u32))
            }
        }
    }

    /// Advances stream `s` past messages before `begin`; returns its key.
    fn advance(&mut self, s: usize) -> Option<Key> {
        loop {
            self.readers[s].advance(&*self.decoders.shared);
            let k = self.head_key(s)?;
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
    #[inline(always)]
    pub fn next(&mut self) -> Option<Result<Message<'_>, ReadError>> {
        let fast = match self.current {
            Some(s) => self.next_fast(s),
            None => None,
        };
        let chosen = match fast {
            Some(chosen) => chosen,
            None => match self.next_slow()? {
                Ok(chosen) => chosen,
                Err(e) => return Some(Err(e)),
            },
        };
        // One place builds the message, whichever path chose the stream.
        // An event is built right in the returned value: built as an
        // `Option<Message>` and then wrapped in `Ok`, it was copied to the
        // other layout in 16-byte pieces just after being written in
        // 8-byte ones, which stalled store forwarding on every event.
        let r = &self.readers[chosen];
        if let Some(ev) = r.head_event() {
            return Some(Ok(Message::Event(ev)));
        }
        r.message().map(Ok)
    }

    /// The common case of [`Cursor::next`], straight-line: the stream read
    /// last goes on with the next event of its batch, which has a time
    /// within the bounds, and the next message is either that event or
    /// the head of the stream on top of the queue, also an event with a
    /// time within the bounds. Returns the stream whose head event is the
    /// next message, with the same result as the general path; `None`
    /// leaves the general path a state it handles: the stream read last
    /// not advanced, or advanced and back in the queue.
    #[inline(always)]
    fn next_fast(&mut self, s: usize) -> Option<usize> {
        let r = &mut self.readers[s];
        let ns = r.next_event_ns()?;
        if ns < self.lo || ns > self.hi {
            // Before `begin` (skipped) or past `end` (the stream is
            // dropped): the general path does both.
            return None;
        }
        r.take_next_event(ns);
        let k = key(ns, r.rank, s as u32);
        match self.heap.peek() {
            Some(top) if k > top => {
                let t = key_stream(top);
                let next = &self.readers[t];
                match (next.head, next.ns) {
                    (Head::Event, Some(t_ns)) if t_ns <= self.hi => {
                        self.heap.replace_min(k);
                        self.current = Some(t);
                        self.last_ns = self.last_ns.max(t_ns);
                        Some(t)
                    }
                    _ => {
                        // A lost-records message, an error, an event without
                        // a time or past the end: back to the general path,
                        // which pops `top` next.
                        self.heap.push(k);
                        self.current = None;
                        None
                    }
                }
            }
            _ => {
                self.last_ns = self.last_ns.max(ns);
                Some(s)
            }
        }
    }

    /// [`Cursor::next`] in general: the stream whose head is the next
    /// message (an event or a lost-records message), or an error.
    #[inline(never)]
    #[cold]
    fn next_slow(&mut self) -> Option<Result<usize, ReadError>> {
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
        Some(Ok(chosen))
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
            return Some(key_stream(self.heap.pop()?));
        }
        match self.current.take() {
            Some(s) => match self.advance(s) {
                // Fast path: the same stream still has the oldest head.
                Some(k) if self.heap.peek().is_none_or(|top| k <= top) => Some(s),
                Some(k) => Some(key_stream(self.heap.replace_min(k)?)),
                None => Some(key_stream(self.heap.pop()?)),
            },
            None => Some(key_stream(self.heap.pop()?)),
        }
    }
}

impl<'a> Cursor<'a> {
    /// The message the last [`Cursor::next`] returned, again (`None` before
    /// the first call and at the end). It borrows the cursor like `next`'s.
    #[inline]
    pub fn current(&self) -> Option<Message<'_>> {
        self.readers.get(self.current?)?.message()
    }
}

impl Traceset {
    /// The merge tie-break rank of stream `stream` ([`crate::StreamInfo::index`]):
    /// at equal timestamps, messages of lower-ranked streams come first.
    #[inline]
    pub fn stream_rank(&self, stream: usize) -> u32 {
        self.streams.get(stream).map_or(u32::MAX, |s| s.rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    impl Cursor<'_> {
        /// [`Cursor::next`] without its fast path.
        fn next_general(&mut self) -> Option<Result<Message<'_>, ReadError>> {
            match self.next_slow()? {
                Ok(chosen) => self.readers[chosen].message().map(Ok),
                Err(e) => Some(Err(e)),
            }
        }
    }

    /// What a message shows, in a comparable form.
    fn summary(m: Result<Message<'_>, ReadError>) -> String {
        match m {
            Ok(Message::Event(e)) => format!(
                "event {:?} {:?} {:?} {} {:?} {:?}",
                e.position(),
                e.timestamp_ns(),
                e.timestamp_cycles(),
                e.name(),
                e.event_values(),
                e.scope_values(traceloom_tsdl::ir::Scope::PacketContext),
            ),
            Ok(Message::DiscardedEvents(d)) => format!(
                "lost events {} {:?} {:?} {:?}",
                d.stream.index, d.begin_ns, d.end_ns, d.count
            ),
            Ok(Message::DiscardedPackets(d)) => format!(
                "lost packets {} {:?} {:?} {:?}",
                d.stream.index, d.begin_ns, d.end_ns, d.count
            ),
            Err(e) => format!("error {e}"),
        }
    }

    fn read_all(mut c: Cursor<'_>, general: bool) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let m = if general { c.next_general() } else { c.next() };
            let Some(m) = m else { break };
            out.push(summary(m));
            if out.len() % 97 == 0 {
                out.push(format!("{:?}", c.position()));
            }
        }
        out
    }

    #[test]
    fn fast_path_reads_what_the_general_path_reads() {
        use traceloom_testdata::{ctf, sample_kernel};
        let sets: Vec<Vec<PathBuf>> = vec![
            vec![sample_kernel()],
            vec![ctf("lttng-ust/ust_uid_discard")],
            vec![ctf("lttng-ust/ust_pid")],
            vec![ctf("lttng-ust/ust_overwrite")],
            vec![ctf("tracecompass/hello-lost")],
            vec![ctf("tracecompass/context-switches-ust")],
            vec![
                ctf("tracecompass/synctraces/scp_src"),
                ctf("tracecompass/synctraces/scp_dest"),
            ],
        ];
        let mut compared = 0;
        for paths in sets {
            let ts = Traceset::open(&paths).unwrap().with_decode_threads(0);
            let (b, e) = ts.time_range_ns().unwrap();
            let mid = b + (e - b) / 2;
            let third = b + (e - b) / 3;
            for (begin, end) in [
                (None, None),
                (Some(mid), None),
                (None, Some(mid)),
                (Some(third), Some(mid)),
            ] {
                let fast = read_all(ts.messages_between(begin, end), false);
                let general = read_all(ts.messages_between(begin, end), true);
                assert_eq!(fast, general, "{paths:?} {begin:?} {end:?}");
                assert!(!fast.is_empty() || begin.is_some() || end.is_some());
                compared += fast.len();
            }
        }
        assert!(compared > 0, "no trace found");
    }

    #[test]
    fn packed_keys_order_like_their_fields() {
        let times = [
            i64::MIN,
            i64::MIN + 1,
            -5,
            -1,
            0,
            1,
            7,
            i64::MAX - 1,
            i64::MAX,
        ];
        let small = [0u32, 1, 2, u32::MAX - 1, u32::MAX];
        let mut fields = Vec::new();
        for &t in &times {
            for &r in &small {
                for &s in &small {
                    fields.push((t, r, s));
                }
            }
        }
        for &a in &fields {
            assert_eq!(key_stream(key(a.0, a.1, a.2)), a.2 as usize);
            for &b in &fields {
                assert_eq!(
                    key(a.0, a.1, a.2).cmp(&key(b.0, b.1, b.2)),
                    a.cmp(&b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn queue_replace_min_keeps_the_order() {
        // Both kinds of queue against a sorted reference, with keys going
        // back on top, in the middle and at the bottom.
        for n in [1usize, 2, 3, 5, SORTED_MAX + 3] {
            let mut q = Queue::new(n);
            let mut reference: Vec<Key> = Vec::new();
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            for i in 0..n {
                let k = key((x % 1000) as i64, 0, i as u32);
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                q.push(k);
                reference.push(k);
            }
            for _ in 0..2000 {
                reference.sort_unstable();
                assert_eq!(q.peek(), reference.first().copied());
                let top = reference[0];
                let k = key((x % 1000) as i64, 0, key_stream(top) as u32);
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                assert_eq!(q.replace_min(k), Some(top));
                reference[0] = k;
            }
        }
    }
}
