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
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
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

/// A map from names (byte strings) to small ids.
///
/// Every event line looks names up (a container, a type, a value), and
/// they are nearly always short: names of up to 15 bytes are packed with
/// their length into a `u128` key, which hashes in two steps and compares
/// in one, with no call to `memcmp`. Longer names go to an ordinary map.
#[derive(Debug, Clone)]
pub(crate) struct NameMap<V> {
    short: FxHashMap<u128, V>,
    long: FxHashMap<Box<[u8]>, V>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            short: FxHashMap::default(),
            long: FxHashMap::default(),
        }
    }
}

/// `name` and its length in one `u128`, when it has at most 15 bytes (the
/// length byte keeps `a` and `a\0` apart).
#[inline]
fn pack(name: &[u8]) -> Option<u128> {
    let n = name.len();
    if n > 15 {
        return None;
    }
    let load8 = |at: usize| u64::from_le_bytes(name[at..at + 8].try_into().unwrap_or([0; 8]));
    let load4 = |at: usize| u32::from_le_bytes(name[at..at + 4].try_into().unwrap_or([0; 4]));
    // Whole-word loads, overlapping when the length is not a multiple:
    // an overlapping byte lands where the other load put the same byte.
    let (lo, hi) = if n >= 8 {
        let tail = if n == 8 {
            0
        } else {
            load8(n - 8) >> (8 * (16 - n))
        };
        (load8(0), tail)
    } else if n >= 4 {
        (
            u64::from(load4(0)) | u64::from(load4(n - 4)) << (8 * (n - 4)),
            0,
        )
    } else {
        let mut lo = 0u64;
        for (i, &b) in name.iter().enumerate() {
            lo |= u64::from(b) << (8 * i);
        }
        (lo, 0)
    };
    Some(u128::from(lo) | u128::from(hi) << 64 | (n as u128) << 120)
}

impl<V: Copy> NameMap<V> {
    /// The id of `name`.
    #[inline]
    pub(crate) fn get(&self, name: &[u8]) -> Option<V> {
        match pack(name) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(name).copied(),
        }
    }

    /// Sets the id of `name` (replacing any previous one).
    pub(crate) fn insert(&mut self, name: &[u8], v: V) {
        match pack(name) {
            Some(k) => {
                self.short.insert(k, v);
            }
            None => {
                self.long.insert(name.into(), v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn packing_is_bytes_then_length() {
        let name = b"abcdefghijklmno";
        for n in 0..=15 {
            let mut k = (n as u128) << 120;
            for (i, &b) in name[..n].iter().enumerate() {
                k |= u128::from(b) << (8 * i);
            }
            assert_eq!(pack(&name[..n]), Some(k), "{n}");
        }
        assert_eq!(pack(b"abcdefghijklmnop"), None);
    }

    #[test]
    fn name_map_short_and_long_names() {
        let mut m = NameMap::default();
        m.insert(b"a", 1);
        m.insert(b"a\0", 2);
        m.insert(b"", 3);
        m.insert(b"exactly15bytes!", 4);
        m.insert(b"sixteen bytes!!!", 5);
        m.insert(b"a", 6);
        assert_eq!(m.get(b"a"), Some(6));
        assert_eq!(m.get(b"a\0"), Some(2));
        assert_eq!(m.get(b""), Some(3));
        assert_eq!(m.get(b"exactly15bytes!"), Some(4));
        assert_eq!(m.get(b"sixteen bytes!!!"), Some(5));
        assert_eq!(m.get(b"sixteen bytes!!"), None);
        assert_eq!(m.get(b"b"), None);
    }

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
