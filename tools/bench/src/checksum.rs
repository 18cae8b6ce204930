//! An order-sensitive checksum that the decode and Pajé benchmarks fold
//! every decoded value into, so that nothing can be skipped.

use traceloom_ctf::event::{value_kind, Event, FieldValue};
use traceloom_tsdl::ir::Scope;

/// An order-sensitive checksum of 64-bit words (Fletcher-style: two running
/// sums, one instruction of dependency per word, so that folding costs
/// little next to decoding). Decoded values ([`Checksum::value`]) go to
/// sums of their own in two lanes, kinds and payloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checksum {
    a: u64,
    b: u64,
    values: lanes::Lanes,
}

/// Fletcher sums in two 64-bit lanes, each sum taking one vector addition
/// per pair of words where vectors are part of the architecture's
/// baseline (SSE2 on x86-64): half the additions of folding the words one
/// by one, on the benchmark's hottest loop.
mod lanes {
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::{__m128i, _mm_add_epi64, _mm_set_epi64x, _mm_setzero_si128};

    /// The sums.
    #[cfg(target_arch = "x86_64")]
    #[derive(Clone, Copy)]
    pub(super) struct Lanes {
        a: __m128i,
        b: __m128i,
    }

    #[cfg(target_arch = "x86_64")]
    impl Lanes {
        /// Folds `w[0]` into the first lane and `w[1]` into the second.
        #[inline(always)]
        pub(super) fn fold(&mut self, w: [u64; 2]) {
            // SAFETY: SSE2 is part of the x86-64 baseline (every x86-64
            // processor has it), and these intrinsics touch no memory.
            unsafe {
                let v = _mm_set_epi64x(w[1] as i64, w[0] as i64);
                self.a = _mm_add_epi64(self.a, v);
                self.b = _mm_add_epi64(self.b, self.a);
            }
        }

        /// `[a, b]` of each lane.
        pub(super) fn sums(&self) -> [[u64; 2]; 2] {
            // SAFETY: a vector of two 64-bit lanes is 16 bytes of plain
            // data, the first lane first (x86-64 is little-endian).
            let lane = |x: __m128i| unsafe { std::mem::transmute::<__m128i, [u64; 2]>(x) };
            let (a, b) = (lane(self.a), lane(self.b));
            [[a[0], b[0]], [a[1], b[1]]]
        }
    }

    #[cfg(target_arch = "x86_64")]
    impl Default for Lanes {
        fn default() -> Self {
            // SAFETY: as in `fold`.
            let zero = unsafe { _mm_setzero_si128() };
            Lanes { a: zero, b: zero }
        }
    }

    /// The sums.
    #[cfg(not(target_arch = "x86_64"))]
    #[derive(Clone, Copy, Default)]
    pub(super) struct Lanes {
        a: [u64; 2],
        b: [u64; 2],
    }

    #[cfg(not(target_arch = "x86_64"))]
    impl Lanes {
        /// Folds `w[0]` into the first lane and `w[1]` into the second.
        #[inline(always)]
        pub(super) fn fold(&mut self, w: [u64; 2]) {
            for i in 0..2 {
                self.a[i] = self.a[i].wrapping_add(w[i]);
                self.b[i] = self.b[i].wrapping_add(self.a[i]);
            }
        }

        /// `[a, b]` of each lane.
        pub(super) fn sums(&self) -> [[u64; 2]; 2] {
            [[self.a[0], self.b[0]], [self.a[1], self.b[1]]]
        }
    }

    impl PartialEq for Lanes {
        fn eq(&self, other: &Self) -> bool {
            self.sums() == other.sums()
        }
    }

    impl Eq for Lanes {}

    impl std::fmt::Debug for Lanes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_tuple("Lanes").field(&self.sums()).finish()
        }
    }
}

impl Checksum {
    /// Folds one word.
    #[inline(always)]
    pub fn word(&mut self, x: u64) {
        self.a = self.a.wrapping_add(x);
        self.b = self.b.wrapping_add(self.a);
    }

    /// Folds a value's two words ([`FieldValue::words`]): the first into
    /// the kinds' lane, the second into the payloads'.
    #[inline(always)]
    pub fn pair(&mut self, w: [u64; 2]) {
        self.values.fold(w);
    }

    /// Folds a byte string: its bytes, 8 at a time, then its length.
    #[inline]
    pub fn bytes(&mut self, s: &[u8]) {
        let mut chunks = s.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = 0u64;
            for (i, &c) in rest.iter().enumerate() {
                last |= u64::from(c) << (8 * i);
            }
            self.word(last);
        }
        self.word(s.len() as u64);
    }

    /// Folds one decoded value; `packet` holds the bytes of strings.
    ///
    /// A value is folded as its kind and its payload, one per lane
    /// ([`Checksum::pair`] of [`FieldValue::words`]: a number's 64 bits, a
    /// string's position and length), a string then as its bytes
    /// ([`Checksum::bytes`]).
    #[inline(always)]
    pub fn value(&mut self, packet: &[u8], v: FieldValue) {
        // No jump on the kind (a jump table mispredicted as kinds
        // interleave, half of the folding's time): the words of all kinds
        // alike, and a test for strings, which are rare.
        let [kind, payload] = v.words();
        self.pair([kind, payload]);
        if kind == value_kind::STR {
            self.packet_str(packet, payload as u32 as usize, (payload >> 32) as usize);
        }
    }

    /// Folds the string of `len` bytes at `start` in `packet` exactly as
    /// [`Checksum::bytes`] does (an empty string when the range is out of
    /// the packet, which the decoder never makes), reading its last
    /// partial word with one load that ends at the string's end instead of
    /// byte by byte.
    #[inline(always)]
    fn packet_str(&mut self, packet: &[u8], start: usize, len: usize) {
        let end = start.wrapping_add(len);
        let Some(s) = packet.get(start..end) else {
            self.bytes(&[]);
            return;
        };
        let rest = len % 8;
        if rest == 0 || end < 8 {
            self.bytes(s);
            return;
        }
        // Whole words straight from the packet (`chunks_exact` costs more
        // to set up than these strings, 12 bytes on average, have words).
        let mut at = start;
        while at + 8 <= end {
            let w: [u8; 8] = packet[at..at + 8].try_into().expect("8 bytes");
            self.word(u64::from_le_bytes(w));
            at += 8;
        }
        // The 8 bytes ending at the string's end, the first `8 - rest` of
        // them (before the tail) shifted out: the tail bytes, the first in
        // the low byte, as `bytes` folds them.
        let last: [u8; 8] = packet[end - 8..end].try_into().expect("8 bytes");
        self.word(u64::from_le_bytes(last) >> (64 - 8 * rest as u32));
        self.word(len as u64);
    }

    /// Folds every value of `scopes` of `ev`.
    #[inline]
    pub fn scopes(&mut self, ev: &Event<'_>, scopes: &[Scope]) {
        let packet = ev.packet_bytes();
        for &scope in scopes {
            for &v in ev.scope_values(scope) {
                self.value(packet, v);
            }
        }
    }

    /// The checksum so far.
    pub fn get(&self) -> u64 {
        let [kinds, payloads] = self.values.sums();
        let sum = |[a, b]: [u64; 2]| a ^ b.rotate_left(32);
        sum([self.a, self.b])
            ^ sum(kinds).rotate_left(16)
            ^ sum(payloads).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_depends_on_values_and_order() {
        let fold = |words: &[u64]| {
            let mut c = Checksum::default();
            for &w in words {
                c.word(w);
            }
            c.get()
        };
        assert_ne!(fold(&[1, 2]), fold(&[2, 1]));
        assert_ne!(fold(&[1, 2]), fold(&[1, 3]));
        assert_eq!(fold(&[1, 2]), fold(&[1, 2]));
        let bytes = |s: &[u8]| {
            let mut c = Checksum::default();
            c.bytes(s);
            c.get()
        };
        // Lengths count: a trailing NUL is not lost in the padding.
        assert_ne!(bytes(b"abc"), bytes(b"abc\0"));
        assert_ne!(bytes(b"abcdefgh1"), bytes(b"abcdefgh2"));
    }

    #[test]
    fn lanes_are_two_fletcher_sums() {
        // The vector sums against the plain definition, on words that
        // overflow.
        let mut lanes = lanes::Lanes::default();
        let mut sums = [[0u64; 2]; 2];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..1000 {
            let w = [x, x.rotate_left(29) ^ 0xdead_beef];
            lanes.fold(w);
            for (lane, &word) in sums.iter_mut().zip(&w) {
                lane[0] = lane[0].wrapping_add(word);
                lane[1] = lane[1].wrapping_add(lane[0]);
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        assert_eq!(lanes.sums(), sums);
        // Order and lanes count.
        let fold = |ws: &[[u64; 2]]| {
            let mut c = Checksum::default();
            ws.iter().for_each(|&w| c.pair(w));
            c.get()
        };
        assert_ne!(fold(&[[1, 2], [3, 4]]), fold(&[[3, 4], [1, 2]]));
        assert_ne!(fold(&[[1, 2]]), fold(&[[2, 1]]));
    }
}
