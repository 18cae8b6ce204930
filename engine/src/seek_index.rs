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

use std::fmt;

use serde::{Deserialize, Serialize};
use traceloom_ctf::{CursorPosition, Event, Position, Traceset};

/// Events of a stream between two marks, by default: one decoding batch of
/// the ctf reader, so the batch decoded after a seek usually holds the
/// target.
pub const DEFAULT_EVERY: u64 = 1024;

/// Marks per block of a stream's [`Marks`]: a lookup decodes at most this
/// many marks after its binary search (0.4 µs per stream on a kernel
/// trace, against 1 µs with blocks of 64), and the anchors cost
/// 48 / `BLOCK` bytes per mark.
const BLOCK: usize = 32;

/// One remembered reading position of a stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// The first mark of a block of [`Marks`], in full, and where the deltas of
/// the block's other marks start in [`Marks::bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Anchor {
    mark: Mark,
    at: usize,
}

/// The marks of one stream, compact: 40-byte marks weighed 21 MB at the
/// peak of the pass of an 8 GB trace (and grew with it), while from one
/// mark to the next most fields change by a few bytes' worth or not at
/// all. So the marks go in blocks of [`BLOCK`]: the first one in full in
/// `anchors` (binary searched by bound), the others in `bytes` as varints
/// of their differences from the previous one (see [`Delta`]): 11.3 bytes
/// a mark with the anchors on a generated kernel trace.
///
/// Invariants (checked when deserialized): `anchors` holds one anchor per
/// started block, their `at` non-decreasing from 0; block `k`'s bytes,
/// from its `at` to the next one's (or the end), are exactly the deltas of
/// its marks after the first, in canonical varints; the bounds never
/// decrease.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "StoredMarks")]
struct Marks {
    anchors: Vec<Anchor>,
    bytes: Vec<u8>,
    /// Number of marks.
    len: usize,
}

impl Marks {
    /// Appends `m`, `last` being the last mark so far (ignored when there
    /// is none) and `every` the events between marks.
    // Once every `every` events: kept out of `SeekIndexBuilder::observe`.
    #[inline(never)]
    fn push(&mut self, m: Mark, last: &Mark, every: u64) {
        if self.len.is_multiple_of(BLOCK) {
            self.anchors.push(Anchor {
                mark: m,
                at: self.bytes.len(),
            });
        } else {
            Delta::encode(last, &m, every, &mut self.bytes);
        }
        self.len += 1;
    }

    /// The marks of block `k`, its anchor first (empty past the end).
    fn block(&self, k: usize, every: u64) -> BlockMarks<'_> {
        let Some(a) = self.anchors.get(k) else {
            return BlockMarks {
                first: None,
                bytes: &[],
                prev: Mark::default(),
                every,
            };
        };
        let end = self.anchors.get(k + 1).map_or(self.bytes.len(), |b| b.at);
        BlockMarks {
            first: Some(a.mark),
            // Never out of range once validated; empty rather than a panic.
            bytes: self.bytes.get(a.at..end).unwrap_or(&[]),
            prev: a.mark,
            every,
        }
    }

    /// The last mark with a bound `< time`, as `partition_point` on the
    /// marks in full would find it.
    fn last_before(&self, time: i64, every: u64) -> Option<Mark> {
        // Bounds are monotonic: the block after the last anchor below
        // `time` starts at or above it, so the answer is in that block.
        let k = self.anchors.partition_point(|a| a.mark.bound < time);
        let mut found = None;
        for m in self.block(k.checked_sub(1)?, every) {
            if m.bound >= time {
                break;
            }
            found = Some(m);
        }
        found
    }

    /// Keeps the first `n` marks (`n <= len`) and returns the last one
    /// kept.
    fn truncate(&mut self, n: usize, every: u64) -> Option<Mark> {
        if n >= self.len {
            return self.len.checked_sub(1).and_then(|i| self.get(i, every));
        }
        self.len = n;
        let Some(last) = n.checked_sub(1) else {
            self.anchors.clear();
            self.bytes.clear();
            return None;
        };
        let k = last / BLOCK;
        self.anchors.truncate(k + 1);
        // Decode the kept marks of the last block to find where its bytes
        // end (at most BLOCK - 1 deltas: rewinds are rare).
        let mut marks = self.block(k, every);
        let mut m = marks.next();
        for _ in 0..last % BLOCK {
            m = marks.next();
        }
        let end = self.bytes.len() - marks.bytes.len();
        self.bytes.truncate(end);
        m
    }

    /// The `i`-th mark.
    fn get(&self, i: usize, every: u64) -> Option<Mark> {
        self.block(i / BLOCK, every).nth(i % BLOCK)
    }

    /// The bytes held on the heap.
    fn heap_bytes(&self) -> usize {
        self.anchors.capacity() * size_of::<Anchor>() + self.bytes.capacity()
    }

    /// All the marks, in full (for `Debug` and tests).
    fn expand(&self, every: u64) -> impl Iterator<Item = Mark> + '_ {
        (0..self.anchors.len()).flat_map(move |k| self.block(k, every))
    }
}

/// The marks of one block of [`Marks`], decoded one after the other.
struct BlockMarks<'a> {
    first: Option<Mark>,
    bytes: &'a [u8],
    prev: Mark,
    every: u64,
}

impl Iterator for BlockMarks<'_> {
    type Item = Mark;

    #[inline]
    fn next(&mut self) -> Option<Mark> {
        if let Some(m) = self.first.take() {
            return Some(m);
        }
        if self.bytes.is_empty() {
            return None;
        }
        let m = Delta::decode(&self.prev, &mut self.bytes, self.every);
        // Damaged bytes (never once validated): end the block.
        if m.is_none() {
            self.bytes = &[];
        }
        self.prev = m?;
        m
    }
}

/// How a mark is written after the previous one of its block: five
/// varints, all differences in wrapping arithmetic (so any values round
/// trip), each chosen to be 0 or small on a real trace:
///
/// 1. the packet's difference (0 while in one packet);
/// 2. in the same packet, the event index's difference less `every`
///    (0: marks are `every` events apart), else the event index;
/// 3. in the same packet, the offset's difference (the size of `every`
///    events), else the offset;
/// 4. the bound's difference (bounds never decrease);
/// 5. zigzagged, the clock's difference less the bound's: the clock
///    before an event is usually the previous event's timestamp, which is
///    the bound, so with a 1 GHz clock (LTTng's) the two differences are
///    equal; the clock may also go backwards, hence the zigzag.
struct Delta;

impl Delta {
    fn encode(prev: &Mark, m: &Mark, every: u64, out: &mut Vec<u8>) {
        let packet = m.packet.wrapping_sub(prev.packet);
        put_varint(out, packet);
        if packet == 0 {
            put_varint(
                out,
                m.event_index
                    .wrapping_sub(prev.event_index)
                    .wrapping_sub(every),
            );
            put_varint(out, m.offset_bits.wrapping_sub(prev.offset_bits));
        } else {
            put_varint(out, m.event_index);
            put_varint(out, m.offset_bits);
        }
        let bound = (m.bound as u64).wrapping_sub(prev.bound as u64);
        put_varint(out, bound);
        let clock = m.clock.wrapping_sub(prev.clock).wrapping_sub(bound) as i64;
        put_varint(out, ((clock << 1) ^ (clock >> 63)) as u64);
    }

    /// The mark after `prev` read from `bytes` (advanced past it); `None`
    /// when they do not hold one.
    #[inline]
    fn decode(prev: &Mark, bytes: &mut &[u8], every: u64) -> Option<Mark> {
        let packet = get_varint(bytes)?;
        let (event_index, offset_bits) = if packet == 0 {
            (
                prev.event_index
                    .wrapping_add(every)
                    .wrapping_add(get_varint(bytes)?),
                prev.offset_bits.wrapping_add(get_varint(bytes)?),
            )
        } else {
            (get_varint(bytes)?, get_varint(bytes)?)
        };
        let bound = get_varint(bytes)?;
        let zz = get_varint(bytes)?;
        let clock = ((zz >> 1) as i64 ^ -((zz & 1) as i64)) as u64;
        Some(Mark {
            bound: (prev.bound as u64).wrapping_add(bound) as i64,
            packet: prev.packet.wrapping_add(packet),
            event_index,
            offset_bits,
            clock: prev.clock.wrapping_add(bound).wrapping_add(clock),
        })
    }
}

/// Appends `v` as a LEB128 varint (7 bits a byte, low first).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint written by [`put_varint`] from the front of `bytes`;
/// `None` at the end of the bytes, past 64 bits, or when not in its
/// shortest form (so that equal marks are equal bytes).
#[inline]
fn get_varint(bytes: &mut &[u8]) -> Option<u64> {
    // One byte: most fields of most marks (see `Delta`).
    let (&b, rest) = bytes.split_first()?;
    if b < 0x80 {
        *bytes = rest;
        return Some(u64::from(b));
    }
    get_long_varint(bytes)
}

/// [`get_varint`] past its first byte's fast path.
fn get_long_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        if shift == 63 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (b != 0 || shift == 0).then_some(v);
        }
        shift += 7;
    }
}

/// [`Marks`] as serialized: the compact form itself.
#[derive(Deserialize)]
struct StoredMarks {
    len: u64,
    anchors: Vec<Anchor>,
    bytes: ByteBuf,
}

impl Serialize for Marks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        /// The bytes as one byte string (postcard: length and bytes).
        struct Bytes<'a>(&'a [u8]);
        impl Serialize for Bytes<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        let mut s = serializer.serialize_struct("StoredMarks", 3)?;
        s.serialize_field("len", &(self.len as u64))?;
        s.serialize_field("anchors", &self.anchors)?;
        s.serialize_field("bytes", &Bytes(&self.bytes))?;
        s.end()
    }
}

/// A byte string deserialized in one piece (postcard checks its length
/// against the bytes present).
struct ByteBuf(Vec<u8>);

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ByteBuf, A::Error> {
                // Self-describing formats: a length hint is not trusted.
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(b) = seq.next_element()? {
                    v.push(b);
                }
                Ok(ByteBuf(v))
            }
        }
        d.deserialize_byte_buf(Visitor)
    }
}

/// Why stored [`Marks`] are rejected.
#[derive(Debug)]
struct BadMarks(&'static str);

impl fmt::Display for BadMarks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "damaged seek index: {}", self.0)
    }
}

impl TryFrom<StoredMarks> for Marks {
    type Error = BadMarks;

    /// Checks the invariants of [`Marks`], decoding every mark.
    fn try_from(s: StoredMarks) -> Result<Marks, BadMarks> {
        let marks = Marks {
            len: usize::try_from(s.len).map_err(|_| BadMarks("too many marks"))?,
            anchors: s.anchors,
            bytes: s.bytes.0,
        };
        if marks.anchors.len() != marks.len.div_ceil(BLOCK) {
            return Err(BadMarks("marks and blocks disagree"));
        }
        let mut at = 0;
        let mut bound = i64::MIN;
        for (k, a) in marks.anchors.iter().enumerate() {
            let end = marks.anchors.get(k + 1).map_or(marks.bytes.len(), |b| b.at);
            if a.at != at || end < at || end > marks.bytes.len() {
                return Err(BadMarks("block out of place"));
            }
            let mut bytes = &marks.bytes[at..end];
            let mut prev = a.mark;
            let count = (marks.len - k * BLOCK).min(BLOCK);
            for i in 0..count {
                if i > 0 {
                    // The `every` taken is irrelevant to the checks.
                    prev = Delta::decode(&prev, &mut bytes, 0).ok_or(BadMarks("bad delta"))?;
                }
                if prev.bound < bound {
                    return Err(BadMarks("bounds decrease"));
                }
                bound = prev.bound;
            }
            if !bytes.is_empty() {
                return Err(BadMarks("bytes left in a block"));
            }
            at = end;
        }
        if at != marks.bytes.len() {
            return Err(BadMarks("bytes after the last block"));
        }
        Ok(marks)
    }
}

/// Per stream, the positions of every `every`-th event (see the module doc).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeekIndex {
    every: u64,
    streams: Vec<Marks>,
}

impl fmt::Debug for SeekIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// One stream's marks, in full as they were before being compact.
        struct Stream<'a>(&'a Marks, u64);
        impl fmt::Debug for Stream<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list().entries(self.0.expand(self.1)).finish()
            }
        }
        let streams: Vec<_> = self.streams.iter().map(|m| Stream(m, self.every)).collect();
        f.debug_struct("SeekIndex")
            .field("every", &self.every)
            .field("streams", &streams)
            .finish()
    }
}

impl SeekIndex {
    /// Events of a stream between two marks (0 for an empty index).
    pub fn every(&self) -> u64 {
        self.every
    }

    /// Number of marks over all streams.
    pub fn len(&self) -> usize {
        self.streams.iter().map(|m| m.len).sum()
    }

    /// `true` when the index has no mark.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the index holds on the heap (its allocations' sizes), to
    /// measure it: a few bytes per mark.
    pub fn heap_bytes(&self) -> usize {
        self.streams.capacity() * size_of::<Marks>()
            + self.streams.iter().map(Marks::heap_bytes).sum::<usize>()
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
                let mark = self
                    .streams
                    .get(s.index)
                    .and_then(|m| m.last_before(time, self.every));
                match mark {
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

    /// Per stream, its marks in full.
    #[cfg(test)]
    fn expand(&self) -> Vec<Vec<Mark>> {
        self.streams
            .iter()
            .map(|m| m.expand(self.every).collect())
            .collect()
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
    /// Per stream, its last mark (the next one is written as a delta from
    /// it).
    last: Vec<Mark>,
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
            last: Vec::new(),
        }
    }

    /// Takes note of the next event of its stream.
    #[inline]
    pub fn observe(&mut self, event: &Event<'_>) {
        let p = event.position();
        if self.seen.len() <= p.stream {
            self.grow(p.stream + 1);
        }
        let (countdown, max) = &mut self.seen[p.stream];
        if *countdown == 0 {
            *countdown = self.index.every;
            let mark = Mark {
                bound: *max,
                packet: p.packet as u64,
                event_index: p.event_index,
                offset_bits: p.offset_bits,
                clock: p.clock_cycles,
            };
            let last = &mut self.last[p.stream];
            self.index.streams[p.stream].push(mark, last, self.index.every);
            *last = mark;
        }
        *countdown -= 1;
        if let Some(ns) = event.timestamp_ns() {
            *max = (*max).max(ns);
        }
    }

    /// Makes room for `n` streams (out of `observe`, which runs for every
    /// event).
    #[cold]
    fn grow(&mut self, n: usize) {
        self.seen.resize(n, (0, i64::MIN));
        self.last.resize(n, Mark::default());
        self.index.streams.resize(n, Marks::default());
    }

    /// Where the builder is in its read, to come back to with
    /// [`rewind`](Self::rewind).
    pub fn cursor(&self) -> SeekIndexCursor {
        SeekIndexCursor {
            streams: self
                .seen
                .iter()
                .zip(&self.index.streams)
                .map(|(&(countdown, max), marks)| (countdown, max, marks.len))
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
        self.last.truncate(n);
        self.index.streams.truncate(n);
        let every = self.index.every;
        for (k, &(countdown, max, marks)) in cursor.streams.iter().enumerate() {
            self.seen[k] = (countdown, max);
            self.last[k] = self.index.streams[k]
                .truncate(marks, every)
                .unwrap_or_default();
        }
    }

    /// The index.
    pub fn finish(mut self) -> SeekIndex {
        // The index lives on with the trace: drop the growth's slack.
        for m in &mut self.index.streams {
            m.anchors.shrink_to_fit();
            m.bytes.shrink_to_fit();
        }
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

/// The compact marks against plain `Vec<Mark>`s.
#[cfg(test)]
mod compact_tests {
    use super::*;
    use proptest::prelude::*;

    /// A mark's fields drawn from `r`, after `prev`, each sometimes a small
    /// step, sometimes anything (huge values, packet jumps, clocks going
    /// backwards); bounds never decrease, as the builder makes them.
    fn marks_of(raw: &[(u8, u64, u64, u64, u64, u64)], every: u64) -> Vec<Mark> {
        let mut out: Vec<Mark> = Vec::new();
        for &(pick, a, b, c, d, e) in raw {
            let prev = out.last().copied().unwrap_or(Mark {
                bound: i64::MIN,
                ..Mark::default()
            });
            let small = |v: u64| v % 5000;
            let m = Mark {
                bound: match pick & 3 {
                    0 => prev.bound,
                    1 => prev.bound.saturating_add(small(a) as i64),
                    2 => prev.bound.max(a as i64),
                    _ => i64::MAX,
                },
                packet: match (pick >> 2) & 3 {
                    0 | 1 => prev.packet,
                    2 => prev.packet.wrapping_add(1 + small(b)),
                    _ => b,
                },
                event_index: match (pick >> 4) & 1 {
                    0 => prev.event_index.wrapping_add(every),
                    _ => c,
                },
                offset_bits: match (pick >> 5) & 1 {
                    0 => prev.offset_bits.wrapping_add(small(d)),
                    _ => d,
                },
                clock: match pick >> 6 {
                    0 => prev.clock.wrapping_add(small(e)),
                    1 => prev.clock.wrapping_sub(small(e)),
                    2 => e,
                    _ => u64::MAX,
                },
            };
            out.push(m);
        }
        out
    }

    fn compact(marks: &[Mark], every: u64) -> Marks {
        let mut c = Marks::default();
        let mut last = Mark::default();
        for &m in marks {
            c.push(m, &last, every);
            last = m;
        }
        c
    }

    fn raw_marks() -> impl Strategy<Value = Vec<(u8, u64, u64, u64, u64, u64)>> {
        prop::collection::vec(any::<(u8, u64, u64, u64, u64, u64)>(), 0..300)
    }

    proptest! {
        #[test]
        fn compact_marks_answer_as_plain_ones(
            raw in prop::collection::vec(raw_marks(), 1..4),
            every in prop_oneof![Just(1u64), Just(7), Just(1024), any::<u64>()],
        ) {
            let streams: Vec<Vec<Mark>> = raw.iter().map(|r| marks_of(r, every)).collect();
            let index = SeekIndex {
                every,
                streams: streams.iter().map(|m| compact(m, every)).collect(),
            };
            prop_assert_eq!(index.expand(), streams.clone());
            prop_assert_eq!(index.len(), streams.iter().map(Vec::len).sum::<usize>());
            for (plain, marks) in streams.iter().zip(&index.streams) {
                let times = plain
                    .iter()
                    .flat_map(|m| [m.bound.saturating_sub(1), m.bound, m.bound.saturating_add(1)])
                    .chain([i64::MIN, 0, i64::MAX]);
                for t in times {
                    let i = plain.partition_point(|m| m.bound < t);
                    let want = i.checked_sub(1).map(|i| plain[i]);
                    prop_assert_eq!(marks.last_before(t, every), want, "time {}", t);
                }
                for (i, m) in plain.iter().enumerate() {
                    prop_assert_eq!(marks.get(i, every), Some(*m));
                }
                prop_assert_eq!(marks.get(plain.len(), every), None);
            }
            // Stored compact and read back the same.
            let bytes = postcard::to_allocvec(&index).unwrap();
            let back: SeekIndex = postcard::from_bytes(&bytes).unwrap();
            prop_assert_eq!(&back, &index);
            // Cut anywhere and appended to again: the same marks.
            for (plain, whole) in streams.iter().zip(&index.streams) {
                for n in (0..=plain.len()).step_by(plain.len() / 40 + 1).chain([plain.len()]) {
                    let mut m = whole.clone();
                    let mut last = m.truncate(n, every).unwrap_or_default();
                    prop_assert_eq!(n.checked_sub(1).map(|i| plain[i]), m.truncate(n, every));
                    prop_assert_eq!(m.len, n);
                    for &mark in &plain[n..] {
                        m.push(mark, &last, every);
                        last = mark;
                    }
                    prop_assert_eq!(&m, whole, "cut at {}", n);
                }
            }
        }

        /// Damaged bytes: an error or a valid index, never a panic.
        #[test]
        fn damaged_compact_marks_are_rejected(
            raw in raw_marks(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), 1..=255u8), 1..4),
        ) {
            let index = SeekIndex {
                every: 7,
                streams: vec![compact(&marks_of(&raw, 7), 7)],
            };
            let mut bytes = postcard::to_allocvec(&index).unwrap();
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            if let Ok(damaged) = postcard::from_bytes::<SeekIndex>(&bytes) {
                // Whatever passed the checks decodes in full.
                for m in &damaged.streams {
                    prop_assert_eq!(m.expand(damaged.every).count(), m.len);
                    let _ = m.last_before(0, damaged.every);
                }
            }
        }
    }

    /// Every truncation of a stored index is an error.
    #[test]
    fn truncated_index_is_rejected() {
        let raw: Vec<_> = (0..200u64)
            .map(|i| (i as u8, i * 77, i, i * 3, i * 1000, i * 5))
            .collect();
        let index = SeekIndex {
            every: 1024,
            streams: vec![compact(&marks_of(&raw, 1024), 1024), Marks::default()],
        };
        let bytes = postcard::to_allocvec(&index).unwrap();
        assert_eq!(postcard::from_bytes::<SeekIndex>(&bytes).unwrap(), index);
        for n in 0..bytes.len() {
            assert!(
                postcard::from_bytes::<SeekIndex>(&bytes[..n]).is_err(),
                "cut at {n}"
            );
        }
    }

    /// Stored marks breaking an invariant are rejected.
    #[test]
    fn inconsistent_marks_are_rejected() {
        let marks: Vec<Mark> = (0..100)
            .map(|i| Mark {
                bound: i * 10,
                packet: 1,
                event_index: i as u64 * 7,
                offset_bits: i as u64 * 800,
                clock: i as u64 * 10,
            })
            .collect();
        let good = compact(&marks, 7);
        let check = |len: u64, anchors: Vec<Anchor>, bytes: Vec<u8>| {
            Marks::try_from(StoredMarks {
                len,
                anchors,
                bytes: ByteBuf(bytes),
            })
        };
        assert_eq!(
            check(100, good.anchors.clone(), good.bytes.clone()).unwrap(),
            good
        );
        // Mark counts that disagree with the blocks or the bytes.
        for len in [0, 1, 64, 99, 101, 128, u64::MAX] {
            assert!(check(len, good.anchors.clone(), good.bytes.clone()).is_err());
        }
        // A block out of place.
        let mut anchors = good.anchors.clone();
        anchors[1].at += 1;
        assert!(check(100, anchors.clone(), good.bytes.clone()).is_err());
        anchors[1].at = usize::MAX;
        assert!(check(100, anchors, good.bytes.clone()).is_err());
        // A decreasing bound, in a block and between blocks.
        let mut bytes = good.bytes.clone();
        bytes.extend([0, 0, 0, 0, 0]);
        assert!(check(100, good.anchors.clone(), bytes).is_err());
        let mut anchors = good.anchors.clone();
        anchors[1].mark.bound = 0;
        assert!(check(100, anchors, good.bytes.clone()).is_err());
        let mut backwards = marks.clone();
        backwards[3].bound = 5;
        let bad = compact(&backwards, 7);
        assert!(check(100, bad.anchors, bad.bytes).is_err());
        // A varint past 64 bits, or not in its shortest form.
        assert_eq!(get_varint(&mut &[0xff; 9][..]), None);
        assert_eq!(
            get_varint(&mut &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2][..]),
            None
        );
        assert_eq!(
            get_varint(&mut &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1][..]),
            Some(u64::MAX)
        );
        assert_eq!(get_varint(&mut &[0x80, 0][..]), None);
        assert_eq!(get_varint(&mut &[0][..]), Some(0));
    }
}
