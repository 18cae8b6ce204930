//! Hash maps for the per-event lookups of the hot read loop (hooks by
//! event class, threads by id), with a cheap hash.
//!
//! The std `HashMap`'s SipHash resists hash flooding, which matters for
//! keys an attacker chooses; here the keys are event-class ids and thread
//! ids read from a trace, looked up tens of millions of times per second,
//! and SipHash was a tenth of the state computation's time. A multiply and
//! a fold (the FxHash idea) spread them well enough.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for small integer keys.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

/// An odd constant with well-spread bits (2^64 / golden ratio).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(K);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The table indexes buckets by the low bits, and a product's low
        // bits only depend on the key's low bits, while class keys differ
        // in their high bits too: fold down, mix again, fold down.
        let x = (self.0 ^ (self.0 >> 32)).wrapping_mul(K);
        x ^ (x >> 32)
    }
}

/// The `BuildHasher` of [`FastHasher`].
pub type FastBuildHasher = BuildHasherDefault<FastHasher>;

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, FastBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn keys_differing_only_in_high_bits_spread_over_buckets() {
        // Event-class keys put the trace and stream class in the high bits.
        let b = FastBuildHasher::default();
        let low: std::collections::HashSet<u64> =
            (0..64u64).map(|t| b.hash_one(t << 48 | 7) & 63).collect();
        assert!(low.len() > 32, "{} distinct buckets", low.len());
        let mut m: FastMap<u64, u64> = FastMap::default();
        for k in 0..1000u64 {
            m.insert(k << 40 | k, k);
        }
        assert!((0..1000u64).all(|k| m[&(k << 40 | k)] == k));
    }
}
