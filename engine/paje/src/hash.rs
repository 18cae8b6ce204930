//! Name tables for the simulator's hot path.
//!
//! Every event line looks up a container, a type and often a value by name;
//! the tables hash with the workspace's one fast hasher
//! (`traceloom_base::FastHasher`).

use traceloom_base::FastMap;

/// A map from names (byte strings) to small ids.
///
/// Every event line looks names up (a container, a type, a value), and
/// they are nearly always short: names of up to 15 bytes are packed with
/// their length into a `u128` key, which hashes in two steps and compares
/// in one, with no call to `memcmp`. Longer names go to an ordinary map.
#[derive(Debug, Clone)]
pub(crate) struct NameMap<V> {
    short: FastMap<u128, V>,
    long: FastMap<Box<[u8]>, V>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            short: FastMap::default(),
            long: FastMap::default(),
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
}
