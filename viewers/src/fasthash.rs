//! A fast, non-cryptographic hasher for in-process tables and content
//! hashes: SipHash's protection against crafted keys is useless on trace
//! data, and it dominated the statistics hook and the hashing of renders.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher (words at a time). Not stable across versions:
/// for in-memory tables and change detection only.
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        // A final avalanche so that low bits (hashbrown's buckets) depend
        // on every input bit.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(last));
        }
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(K);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_isize(&mut self, x: isize) {
        self.write_u64(x as u64);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

/// A `HashMap` hashed with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn h<T: Hash>(x: T) -> u64 {
        let mut s = IntHasher::default();
        x.hash(&mut s);
        s.finish()
    }

    #[test]
    fn distinguishes_close_inputs() {
        assert_ne!(h(1u64), h(2u64));
        assert_ne!(h("abc"), h("abd"));
        assert_ne!(h("abcdefgh1"), h("abcdefgh2"));
        assert_ne!(h((1u32, 2i64)), h((2u32, 1i64)));
        assert_eq!(h("same"), h("same"));
    }
}
