//! The one fast, non-cryptographic hasher of in-process tables (event
//! classes and threads by id in the engine's hot loop, statistics cells,
//! Pajé names) and of content hashes of renders.
//!
//! The std `HashMap`'s SipHash resists hash flooding, which matters for
//! keys an attacker chooses; here keys are ids and names read from a trace,
//! looked up tens of millions of times per second, and SipHash was a tenth
//! of the state computation's time and a large share of the statistics
//! hook. A multiply-rotate step per 64-bit word (the FxHash idea) and a
//! final avalanche spread them well enough. Not stable across versions:
//! for in-memory tables and change detection only.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher, a 64-bit word at a time, with a final mix.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

/// An odd constant with well-spread bits.
const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // A product carries information upwards only, so the low bits
        // (which pick a table's bucket) would depend on the keys' low bits
        // alone, while class keys differ in their high bits and names in
        // their last bytes: fold the high half down, mix, fold again.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 33)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // Mixing in the length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }

    #[inline]
    fn write_u128(&mut self, x: u128) {
        self.add(x as u64);
        self.add((x >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }

    #[inline]
    fn write_i64(&mut self, x: i64) {
        self.add(x as u64);
    }

    #[inline]
    fn write_isize(&mut self, x: isize) {
        self.add(x as u64);
    }
}

/// The `BuildHasher` of [`FastHasher`].
pub type FastBuildHasher = BuildHasherDefault<FastHasher>;

/// A `HashMap` hashed with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, FastBuildHasher>;

/// A `HashSet` hashed with [`FastHasher`].
pub type FastSet<K> = HashSet<K, FastBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn h<T: Hash>(x: T) -> u64 {
        FastBuildHasher::default().hash_one(x)
    }

    #[test]
    fn distinguishes_close_inputs() {
        assert_ne!(h(1u64), h(2u64));
        assert_ne!(h("abc"), h("abd"));
        assert_ne!(h("abcdefgh1"), h("abcdefgh2"));
        assert_ne!(h(&b"a"[..]), h(&b"a\0"[..]));
        assert_ne!(h((1u32, 2i64)), h((2u32, 1i64)));
        assert_eq!(h("same"), h("same"));
    }

    #[test]
    fn keys_differing_only_in_high_bits_spread_over_buckets() {
        // Event-class keys put the trace and stream class in the high bits.
        let low: FastSet<u64> = (0..64u64).map(|t| h(t << 48 | 7) & 63).collect();
        assert!(low.len() > 32, "{} distinct buckets", low.len());
        let mut m: FastMap<u64, u64> = FastMap::default();
        for k in 0..1000u64 {
            m.insert(k << 40 | k, k);
        }
        assert!((0..1000u64).all(|k| m[&(k << 40 | k)] == k));
    }

    #[test]
    fn similar_names_spread_over_low_bits() {
        let buckets: FastSet<u64> = (0..1000)
            .map(|i| h(format!("k{i}").into_bytes().into_boxed_slice()) & 1023)
            .collect();
        assert!(
            buckets.len() > 500,
            "only {} distinct buckets",
            buckets.len()
        );
    }
}
