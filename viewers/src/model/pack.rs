//! How the items of a [`Column`](super::column::Column) are packed, one
//! block of [`BLOCK`] items at a time: times as zigzag varint deltas,
//! small codes and thread records through a per-block dictionary of
//! bit-packed indices, arrows as combinations of both; a Pajé trace's
//! events, links and variable values likewise (values as the XOR of
//! their bits with the previous value's, bit-reversed and as a varint:
//! equal or nearby values take a byte or two). Marks (drawn events) keep
//! their times as fixed-width offsets from the block's first, so that a
//! render bisects a block without decoding it.
//!
//! A block is decoded whole (a few hundred ns), never item by item: the
//! renders touch few blocks of a row (the per-block summaries beside the
//! change lists answer the rest), so the size of the data — what a pass
//! holds on the heap and a store keeps on disk — is what matters. Marks
//! are the exception: a full-range render searches a block of a busy
//! thread's drawn events in every pixel column.
//!
//! Decoding never panics: bytes that end early (a store is checksummed
//! before use, so only a bug could cause that) decode as zeroes.

use super::gallop::count_holding;
use crate::model::kernel::{ArrowRecord, Mark};
use crate::model::paje_analysis::{EventItem, LinkItem, VarItem};
use crate::varint::{put as put_varint, unzigzag, zigzag};
use traceloom_base::Time;

/// Items per packed block (a power of two).
pub const BLOCK: usize = 64;

// A dictionary's indices are bytes (255 marks none in `encode_dict_u8`),
// and its packed indices take at most a byte each (see `encode_dict`).
const _: () = assert!(BLOCK < 256);

/// What a [`Column`](super::column::Column) holds: plain data with a
/// block encoding.
pub trait Item: bytemuck::Pod + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// Appends the encoding of `items` (at most [`BLOCK`] of them) to `out`.
    fn encode(items: &[Self], out: &mut Vec<u8>);
    /// Decodes `out.len()` items from `bytes`.
    fn decode(bytes: &[u8], out: &mut [Self]);
}

/// Items in time order whose packed blocks can be searched by time.
pub trait Timed: Item {
    /// The item's time.
    fn time(&self) -> Time;

    /// The first of the `n` items packed in `bytes` at or after index
    /// `from` whose time is at or after `t`: its index and the item, or
    /// `(n, None)`. The times being in order, an encoding may search
    /// without decoding every item; by default the block is decoded
    /// whole.
    fn search_block(bytes: &[u8], n: usize, from: usize, t: Time) -> (usize, Option<Self>) {
        let mut buf = [Self::zeroed(); BLOCK];
        let items = &mut buf[..n.min(BLOCK)];
        Self::decode(bytes, items);
        let from = from.min(items.len());
        let k = from + items[from..].partition_point(|x| x.time() < t);
        (k, items.get(k).copied())
    }
}

/// A cursor over encoded bytes (reading past the end gives zeroes).
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    #[inline]
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A varint: from eight bytes read at once when they are there and
    /// hold its end (all but the last few of a block), else a byte at a
    /// time. One thread's full-range render of the 8 GB benchmark trace's
    /// busiest rows, a third of it decoding drawn events: 63 -> 58 ms.
    #[inline]
    fn varint(&mut self) -> u64 {
        if let Some(word) = self.bytes.get(self.pos..self.pos + 8) {
            let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            // The high bit of each byte says whether another follows.
            let ends = !w & 0x8080_8080_8080_8080;
            if ends != 0 {
                let bits = ends.trailing_zeros() + 1;
                self.pos += (bits / 8) as usize;
                return squeeze(low_bits(w, bits));
            }
        }
        self.varint_bytewise()
    }

    fn varint_bytewise(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.byte();
            if shift < 64 {
                v |= u64::from(b & 0x7F) << shift;
            }
            if b & 0x80 == 0 || shift >= 63 {
                return v;
            }
            shift += 7;
        }
    }
}

/// The low `bits` bits of `w` (`bits` at most 64).
#[inline]
fn low_bits(w: u64, bits: u32) -> u64 {
    if bits >= 64 {
        w
    } else {
        w & ((1 << bits) - 1)
    }
}

/// The value of a varint of at most eight bytes, read little-endian into
/// `x` (its bytes only): the 7-bit groups squeezed together, into 14, 28,
/// then 56 bits.
#[inline]
fn squeeze(x: u64) -> u64 {
    let x = x & 0x7f7f_7f7f_7f7f_7f7f;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// Times as the zigzag varint of their difference with the previous one
/// (the first with 0).
fn encode_times(times: impl Iterator<Item = Time>, out: &mut Vec<u8>) {
    let mut prev: Time = 0;
    for t in times {
        put_varint(out, zigzag(t.wrapping_sub(prev)));
        prev = t;
    }
}

fn decode_times(r: &mut Reader<'_>, mut set: impl FnMut(usize, Time), n: usize) {
    let mut prev: Time = 0;
    for k in 0..n {
        prev = prev.wrapping_add(unzigzag(r.varint()));
        set(k, prev);
    }
}

/// Values through a dictionary: the number of distinct values, each as a
/// varint, then every value's index in as few bits as the dictionary
/// needs (none for a single value).
///
/// At most [`BLOCK`] values (what [`Item::encode`] is given): the
/// dictionary and the indices live on the stack, since a block is packed
/// every 64 changes of every row and two allocations per block were a
/// visible part of the kernel pass.
fn encode_dict(values: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) {
    let mut dict = [0u32; BLOCK];
    let mut len = 0usize;
    let mut idx = [0u8; BLOCK];
    let mut n = 0usize;
    for v in values {
        assert!(n < BLOCK, "a dictionary codes at most a block");
        let i = match dict[..len].iter().position(|&d| d == v) {
            Some(i) => i,
            None => {
                dict[len] = v;
                len += 1;
                len - 1
            }
        };
        idx[n] = i as u8;
        n += 1;
    }
    write_dict(&dict[..len], &idx[..n], out);
}

/// [`encode_dict`] of bytes (the state codes of every row): each value's
/// dictionary index found in a table rather than by a search.
fn encode_dict_u8(values: &[u8], out: &mut Vec<u8>) {
    assert!(values.len() <= BLOCK, "a dictionary codes at most a block");
    let mut slot = [u8::MAX; 256];
    let mut dict = [0u32; BLOCK];
    let mut len = 0usize;
    let mut idx = [0u8; BLOCK];
    for (i, &v) in idx.iter_mut().zip(values) {
        let s = &mut slot[v as usize];
        if *s == u8::MAX {
            *s = len as u8;
            dict[len] = u32::from(v);
            len += 1;
        }
        *i = *s;
    }
    write_dict(&dict[..len], &idx[..values.len()], out);
}

/// Writes a dictionary and the values' indices into it (see
/// [`encode_dict`]).
fn write_dict(dict: &[u32], idx: &[u8], out: &mut Vec<u8>) {
    let len = dict.len();
    put_varint(out, len as u64);
    for &d in dict {
        put_varint(out, u64::from(d));
    }
    put_bits(idx.iter().map(|&i| u64::from(i)), bits(len), out);
}

/// Appends `values`, each in its `width` low bits (at most 64; the
/// others zero), packed low bits first, the last byte padded with zeroes.
fn put_bits(values: impl Iterator<Item = u64>, width: u32, out: &mut Vec<u8>) {
    let (mut acc, mut filled) = (0u128, 0u32);
    for v in values {
        acc |= u128::from(v) << filled;
        filled += width;
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(acc as u8);
    }
}

/// Bits needed for an index into a dictionary of `n` values.
fn bits(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

/// Value `k` of a dictionary-coded run starting at `r` (what
/// [`decode_dict`] gives as value `k`).
fn dict_at(r: &mut Reader<'_>, k: usize) -> u32 {
    let len = (r.varint() as usize).min(BLOCK);
    let mut dict = [0u32; BLOCK];
    for d in dict.iter_mut().take(len) {
        *d = r.varint() as u32;
    }
    let width = bits(len) as usize;
    if width == 0 {
        return dict[0];
    }
    // An index takes at most 6 bits (64 values): two bytes hold it.
    let bit = k * width;
    let at = |o: usize| u16::from(r.bytes.get(r.pos + o).copied().unwrap_or(0));
    let two = at(bit / 8) | (at(bit / 8 + 1) << 8);
    let i = (two >> (bit % 8)) as usize & ((1 << width) - 1);
    dict.get(i).copied().unwrap_or(0)
}

fn decode_dict(r: &mut Reader<'_>, mut set: impl FnMut(usize, u32), n: usize) {
    // At most one entry per item: a larger count is damage.
    let len = (r.varint() as usize).min(BLOCK);
    let mut dict = [0u32; BLOCK];
    for d in dict.iter_mut().take(len) {
        *d = r.varint() as u32;
    }
    let width = bits(len);
    let mask = (1u64 << width) - 1;
    let mut acc = 0u64;
    let mut filled = 0u32;
    for k in 0..n {
        while filled < width {
            acc |= u64::from(r.byte()) << filled;
            filled += 8;
        }
        let i = (acc & mask) as usize;
        acc >>= width;
        filled -= width;
        set(k, dict.get(i).copied().unwrap_or(0));
    }
}

impl Item for Time {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_times(items.iter().copied(), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k] = t, n);
    }
}

/// Counts in increasing order (a CPU row's changes before each change it
/// lists, `cpu_runs`): their differences, as for times.
impl Item for u64 {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_times(items.iter().map(|&c| c as Time), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k] = t as u64, n);
    }
}

impl Timed for Time {
    fn time(&self) -> Time {
        *self
    }
}

impl Item for u8 {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_dict_u8(items, out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_dict(&mut r, |k, v| out[k] = v as u8, n);
    }
}

impl Item for u32 {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_dict(items.iter().copied(), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_dict(&mut r, |k, v| out[k] = v, n);
    }
}

impl Item for Mark {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_offsets(items.iter().map(|m| m.time), out);
        encode_dict(items.iter().map(|m| u32::from(m.kind)), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        let offsets = Offsets::read(&mut r, n);
        for (k, m) in out.iter_mut().enumerate() {
            *m = Mark::new(offsets.time(&r, k), 0);
        }
        offsets.skip(&mut r, n);
        decode_dict(&mut r, |k, v| out[k].kind = v as u8, n);
    }
}

impl Timed for Mark {
    fn time(&self) -> Time {
        self.time
    }

    /// Bisects the block's times, which are fixed-width offsets from its
    /// first ([`encode_offsets`]), and reads the found one's kind alone: a
    /// full-range render searches a block of a busy thread's drawn events
    /// in each pixel column. Varint deltas had to be decoded in order up
    /// to the one found, a third of the render of the 8 GB benchmark
    /// trace's busiest rows.
    fn search_block(bytes: &[u8], n: usize, from: usize, t: Time) -> (usize, Option<Self>) {
        let n = n.min(BLOCK);
        let mut r = Reader { bytes, pos: 0 };
        let offsets = Offsets::read(&mut r, n);
        let from = from.min(n);
        let k = from + count_holding(from, n, |k| offsets.time(&r, k) < t);
        if k == n {
            return (n, None);
        }
        let time = offsets.time(&r, k);
        offsets.skip(&mut r, n);
        (k, Some(Mark::new(time, dict_at(&mut r, k) as u8)))
    }
}

/// Times as the first one (a zigzag varint), then each later one's
/// difference with it in as many bits as the largest takes (a byte says
/// how many), packed low bits first: any time of the block is read
/// without the others, so a block is bisected. On times in order whose
/// gaps are drawn from one distribution this takes about as many bytes as
/// varint deltas: the largest offset of 63 gaps needs about 6 bits more
/// than a gap, the varints' 7-bit groups waste 3.5 on average.
fn encode_offsets(times: impl Iterator<Item = Time> + Clone, out: &mut Vec<u8>) {
    let mut all = times.clone();
    let Some(first) = all.next() else {
        return;
    };
    let widest = all.fold(0u64, |w, t| w | t.wrapping_sub(first) as u64);
    let width = u64::BITS - widest.leading_zeros();
    put_varint(out, zigzag(first));
    out.push(width as u8);
    put_bits(
        times.skip(1).map(|t| t.wrapping_sub(first) as u64),
        width,
        out,
    );
}

/// Where the times of [`encode_offsets`] are, for reading any of them.
struct Offsets {
    first: Time,
    width: u32,
    /// Byte position of the first offset (the second time's).
    at: usize,
}

impl Offsets {
    /// Reads the head of `n` times (none for no time) at `r`'s position,
    /// leaving `r` at the first offset.
    fn read(r: &mut Reader<'_>, n: usize) -> Offsets {
        if n == 0 {
            return Offsets {
                first: 0,
                width: 0,
                at: r.pos,
            };
        }
        let first = unzigzag(r.varint());
        // A damaged width reads as at most 64 bits.
        let width = u32::from(r.byte()).min(64);
        Offsets {
            first,
            width,
            at: r.pos,
        }
    }

    /// Time `k` (of the `r.bytes` the head was read from).
    #[inline]
    fn time(&self, r: &Reader<'_>, k: usize) -> Time {
        if k == 0 || self.width == 0 {
            return self.first;
        }
        let bit = (k - 1) * self.width as usize;
        let byte = self.at + bit / 8;
        // The offset and the bits before it in its first byte: at most
        // 71 bits, read as 16 bytes when they are there.
        let word = match r.bytes.get(byte..byte + 16) {
            Some(b) => u128::from_le_bytes(b.try_into().expect("sixteen bytes")),
            None => (0..16).fold(0u128, |w, i| {
                w | u128::from(r.bytes.get(byte + i).copied().unwrap_or(0)) << (8 * i)
            }),
        };
        let v = (word >> (bit % 8)) as u64;
        let v = if self.width >= 64 {
            v
        } else {
            v & ((1 << self.width) - 1)
        };
        self.first.wrapping_add(v as i64)
    }

    /// Moves `r` past the offsets of `n` times.
    fn skip(&self, r: &mut Reader<'_>, n: usize) {
        let bits = n.saturating_sub(1) * self.width as usize;
        r.pos = self.at + bits.div_ceil(8);
    }
}

impl Item for ArrowRecord {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        // Sorted by one end or the other: the ends, as deltas, both small.
        encode_times(items.iter().map(|a| a.from_time), out);
        for a in items {
            put_varint(out, zigzag(a.to_time.wrapping_sub(a.from_time)));
        }
        for a in items {
            put_varint(out, u64::from(a.from));
            put_varint(out, u64::from(a.to));
        }
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k].from_time = t, n);
        for a in out.iter_mut() {
            a.to_time = a.from_time.wrapping_add(unzigzag(r.varint()));
        }
        for a in out.iter_mut() {
            a.from = r.varint() as u32;
            a.to = r.varint() as u32;
        }
    }
}

impl Item for EventItem {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_times(items.iter().map(|e| e.time), out);
        encode_dict(items.iter().map(|e| e.value), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k] = EventItem::new(t, 0), n);
        decode_dict(&mut r, |k, v| out[k].value = v, n);
    }
}

/// The bits of `v` that differ from those of `prev`, low bits first
/// (reversed): values that share their sign, exponent and high mantissa
/// bits differ in a few high bits, which reversed make a small varint.
#[inline]
fn float_delta(v: f64, prev: f64) -> u64 {
    (v.to_bits() ^ prev.to_bits()).reverse_bits()
}

impl Item for VarItem {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        encode_times(items.iter().map(|v| v.time), out);
        let mut prev = 0.0;
        for v in items {
            put_varint(out, float_delta(v.value, prev));
            prev = v.value;
        }
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k].time = t, n);
        let mut prev = 0u64;
        for v in out.iter_mut() {
            prev ^= r.varint().reverse_bits();
            v.value = f64::from_bits(prev);
        }
    }
}

impl Item for LinkItem {
    fn encode(items: &[Self], out: &mut Vec<u8>) {
        // Sorted by their later end: starts as deltas, each end from its
        // start, the containers as varints, the values by dictionary.
        encode_times(items.iter().map(|l| l.start), out);
        for l in items {
            put_varint(out, zigzag(l.end.wrapping_sub(l.start)));
        }
        for l in items {
            put_varint(out, u64::from(l.from));
            put_varint(out, u64::from(l.to));
        }
        encode_dict(items.iter().map(|l| l.value), out);
    }
    fn decode(bytes: &[u8], out: &mut [Self]) {
        let mut r = Reader { bytes, pos: 0 };
        let n = out.len();
        decode_times(&mut r, |k, t| out[k] = LinkItem::new(0, 0, t, 0, 0), n);
        for l in out.iter_mut() {
            l.end = l.start.wrapping_add(unzigzag(r.varint()));
        }
        for l in out.iter_mut() {
            l.from = r.varint() as u32;
            l.to = r.varint() as u32;
        }
        decode_dict(&mut r, |k, v| out[k].value = v, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;
    use proptest::prelude::*;

    fn round_trip<T: Item>(items: &[T]) -> Vec<T> {
        let mut bytes = Vec::new();
        T::encode(items, &mut bytes);
        let mut out = vec![T::zeroed(); items.len()];
        T::decode(&bytes, &mut out);
        out
    }

    proptest! {
        /// The word-at-a-time varint reads what the byte-at-a-time one
        /// does, from any bytes (damaged ones too), with varints of every
        /// length among them.
        #[test]
        fn varints_read_a_word_at_a_time_as_a_byte_at_a_time(
            values in prop::collection::vec((any::<u64>(), 0u32..64), 0..40),
            noise in prop::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut bytes = Vec::new();
            for &(v, shift) in &values {
                put_varint(&mut bytes, v >> shift);
            }
            bytes.extend_from_slice(&noise);
            let (mut fast, mut slow) = (Reader { bytes: &bytes, pos: 0 }, Reader { bytes: &bytes, pos: 0 });
            while slow.pos < bytes.len() + 2 {
                prop_assert_eq!(fast.varint(), slow.varint_bytewise());
                prop_assert_eq!(fast.pos, slow.pos);
            }
        }

        #[test]
        fn blocks_round_trip(
            times in prop::collection::vec(any::<i64>(), 0..=BLOCK),
            codes in prop::collection::vec(any::<u8>(), 0..=BLOCK),
            small in prop::collection::vec(0u8..6, 0..=BLOCK),
            recs in prop::collection::vec(any::<u32>(), 0..=BLOCK),
        ) {
            prop_assert_eq!(round_trip(&times), times.clone());
            prop_assert_eq!(round_trip(&codes), codes);
            prop_assert_eq!(round_trip(&small), small);
            prop_assert_eq!(round_trip(&recs), recs.clone());
            let marks: Vec<Mark> = times.iter().zip(&recs).map(|(&t, &r)| Mark::new(t, r as u8)).collect();
            prop_assert_eq!(round_trip(&marks), marks);
            let arrows: Vec<ArrowRecord> = times
                .iter()
                .zip(&recs)
                .map(|(&t, &r)| ArrowRecord { from_time: t, to_time: t ^ i64::from(r), from: r, to: r / 3 })
                .collect();
            prop_assert_eq!(round_trip(&arrows), arrows);
        }

        /// A block of drawn events is bisected as a slice of them is,
        /// whatever its offsets' width: gaps of a few ns to many years.
        #[test]
        fn mark_blocks_are_searched_as_slices(
            start in any::<i64>(),
            gaps in prop::collection::vec((0u32..64, any::<u64>(), 0u8..4), 0..=BLOCK),
            probes in prop::collection::vec((0usize..=BLOCK, 0u32..64, any::<u64>()), 1..20),
        ) {
            let mut t = start;
            let marks: Vec<Mark> = gaps
                .iter()
                .map(|&(shift, g, kind)| {
                    t = t.saturating_add((g >> shift.max(1)) as i64 / 64);
                    Mark::new(t, kind)
                })
                .collect();
            let mut bytes = Vec::new();
            Mark::encode(&marks, &mut bytes);
            for &(from, shift, x) in &probes {
                let from = from.min(marks.len());
                // Times among the marks' and between them.
                let at = marks.get(from).map_or(start, |m| m.time);
                let x = at.saturating_add((x >> shift.max(1)) as i64 / 64 - 8);
                let k = from + marks[from..].partition_point(|m| m.time < x);
                prop_assert_eq!(Mark::search_block(&bytes, marks.len(), from, x), (k, marks.get(k).copied()));
            }
        }

        #[test]
        fn paje_blocks_round_trip(
            times in prop::collection::vec(any::<i64>(), 0..=BLOCK),
            recs in prop::collection::vec(any::<u32>(), 0..=BLOCK),
            bits in prop::collection::vec(any::<u64>(), 0..=BLOCK),
            small in prop::collection::vec(-3i32..40, 0..=BLOCK),
        ) {
            let events: Vec<EventItem> = times.iter().zip(&recs).map(|(&t, &r)| EventItem::new(t, r % 7)).collect();
            prop_assert_eq!(round_trip(&events), events);
            // Any bits (NaNs, infinities, signed zeros), and the small
            // integers and fractions traces hold: compared bit for bit.
            let values = bits.iter().map(|&b| f64::from_bits(b)).chain(small.iter().map(|&v| f64::from(v) / 4.0));
            let vars: Vec<VarItem> = times.iter().cycle().zip(values).map(|(&t, value)| VarItem { time: t, value }).take(BLOCK).collect();
            let back = round_trip(&vars);
            prop_assert_eq!(back.len(), vars.len());
            for (a, b) in back.iter().zip(&vars) {
                prop_assert_eq!((a.time, a.value.to_bits()), (b.time, b.value.to_bits()));
            }
            let links: Vec<LinkItem> = times
                .iter()
                .zip(&recs)
                .map(|(&t, &r)| LinkItem::new(r, r / 5, t, t ^ i64::from(r), r % 3))
                .collect();
            prop_assert_eq!(round_trip(&links), links);
        }

        #[test]
        fn damaged_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), n in 0..=BLOCK) {
            let mut t = vec![0i64; n];
            Time::decode(&bytes, &mut t);
            let mut c = vec![0u8; n];
            u8::decode(&bytes, &mut c);
            let mut a = vec![ArrowRecord { from_time: 0, to_time: 0, from: 0, to: 0 }; n];
            ArrowRecord::decode(&bytes, &mut a);
            let mut l = vec![LinkItem::zeroed(); n];
            LinkItem::decode(&bytes, &mut l);
            let mut v = vec![VarItem::zeroed(); n];
            VarItem::decode(&bytes, &mut v);
            let mut m = vec![Mark::zeroed(); n];
            Mark::decode(&bytes, &mut m);
            for from in [0, n / 2, n] {
                Mark::search_block(&bytes, n, from, i64::from(bytes.first().copied().unwrap_or(0)) << 20);
            }
        }
    }

    #[test]
    fn codes_pack_in_a_few_bits() {
        let codes: Vec<u8> = (0..BLOCK).map(|k| [0x30, 0x31, 0x28][k % 3]).collect();
        let mut bytes = Vec::new();
        u8::encode(&codes, &mut bytes);
        // Count, 3 dictionary bytes, 2 bits per code.
        assert_eq!(bytes.len(), 1 + 3 + BLOCK * 2 / 8);
    }

    #[test]
    fn repeated_and_nearby_values_pack_small() {
        // A counter stepping by small integers every 100 ns: two time
        // bytes and two or three value bytes, under a third of the 16 bytes
        // of an unpacked item.
        let vars: Vec<VarItem> = (0..BLOCK)
            .map(|k| VarItem {
                time: k as i64 * 100,
                value: (k % 5) as f64 + 10.0,
            })
            .collect();
        let mut bytes = Vec::new();
        VarItem::encode(&vars, &mut bytes);
        assert!(bytes.len() <= BLOCK * 16 / 3, "{} bytes", bytes.len());
        assert_eq!(round_trip(&vars), vars);
    }
}
