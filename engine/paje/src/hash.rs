//! A small, fast, non-cryptographic hasher for the simulator's name tables.
//!
//! Every event line looks up a container, a type and often a value by name,
//! so SipHash's per-lookup cost would be a noticeable share of the hot path.
//! The multiply-rotate scheme below is the one popularised by rustc's FxHash;
//! it is written here so the crate needs no extra dependency.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Multiply-rotate hasher with a final mix; not DoS-resistant.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
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
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The multiply only carries information upwards, so the low bits
        // (which pick the bucket) would depend on the first bytes of a key
        // alone: "k1", "k2", ... would all collide. A final avalanche step
        // (murmur3's fmix64) spreads every input bit over the output.
        let mut h = self.hash;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Builder for [`FxHasher`].
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
/// `HashMap` using [`FxHasher`].
pub(crate) type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
/// `HashSet` using [`FxHasher`].
pub(crate) type FxHashSet<K> = HashSet<K, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn similar_keys_spread_over_low_bits() {
        let b = FxBuild::default();
        let buckets: FxHashSet<u64> = (0..1000)
            .map(|i| b.hash_one(format!("k{i}").into_bytes().into_boxed_slice()) & 1023)
            .collect();
        assert!(
            buckets.len() > 500,
            "only {} distinct buckets",
            buckets.len()
        );
    }
}
