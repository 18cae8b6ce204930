//! The set of link keys already used in a (container, type) list.
//!
//! pajeng refuses a link whose key was used before by a finished link of
//! the same list, so every key has to be remembered until the container is
//! destroyed — in a long trace, millions of them, which as boxed strings in
//! a hash set would cost some 60 bytes each. Tracers name links with
//! counters (`42`, `com_42`, `0_1_42`): such a key is split into its
//! non-numeric prefix and its canonical decimal suffix, and the numbers of
//! each prefix go to a compressed integer set (sorted 16-bit arrays or
//! bitmaps per 65,536 values, as in Roaring bitmaps) that costs at most 2
//! bytes per key, and 1 bit when keys are dense. Any other key is kept as
//! is. The set is exact: distinct keys never collide.

use std::sync::Arc;

use traceloom_base::{FastMap, FastSet};

/// Values of a 65,536-wide chunk, sorted, up to this many; a bitmap above.
const ARRAY_MAX: usize = 4096;

#[derive(Debug, Clone)]
enum Chunk {
    /// Sorted low halves.
    Array(Vec<u16>),
    /// One bit per low half.
    Bitmap(Box<[u64; 1024]>),
}

impl Chunk {
    fn contains(&self, lo: u16) -> bool {
        match self {
            Chunk::Array(v) => v.binary_search(&lo).is_ok(),
            Chunk::Bitmap(b) => b[usize::from(lo >> 6)] >> (lo & 63) & 1 == 1,
        }
    }

    fn insert(&mut self, lo: u16) {
        match self {
            Chunk::Array(v) => {
                // Counters mostly grow: the common case is an append.
                if v.last().is_none_or(|&l| l < lo) {
                    v.push(lo);
                } else if let Err(at) = v.binary_search(&lo) {
                    v.insert(at, lo);
                }
                if v.len() > ARRAY_MAX {
                    let mut b = Box::new([0u64; 1024]);
                    for &x in v.iter() {
                        b[usize::from(x >> 6)] |= 1 << (x & 63);
                    }
                    *self = Chunk::Bitmap(b);
                }
            }
            Chunk::Bitmap(b) => b[usize::from(lo >> 6)] |= 1 << (lo & 63),
        }
    }
}

/// A compressed set of `u64`.
///
/// Its chunks are shared with its copies (the simulation's checkpoints)
/// until they change: counters grow, so all but the last chunk of a
/// prefix stay as they are, and a copy costs a pointer per chunk. Copied
/// whole, the key sets of a 4 GB generated trace took 158 MB over its
/// 28 checkpoints.
#[derive(Debug, Clone, Default)]
struct IntSet {
    chunks: FastMap<u64, Arc<Chunk>>,
}

impl IntSet {
    fn contains(&self, x: u64) -> bool {
        self.chunks
            .get(&(x >> 16))
            .is_some_and(|c| c.contains(x as u16))
    }

    fn insert(&mut self, x: u64) {
        let chunk = self
            .chunks
            .entry(x >> 16)
            .or_insert_with(|| Arc::new(Chunk::Array(Vec::new())));
        // Copied first when a copy of the set shares it (once per copy,
        // for the chunk counters are filling).
        Arc::make_mut(chunk).insert(x as u16);
    }
}

/// `key` as (prefix, number) when it ends with a canonical decimal number
/// (no leading zero, at most 19 digits): `com_42` is (`com_`, 42). The
/// prefix then ends with a non-digit, so the split is unique.
fn split(key: &[u8]) -> Option<(&[u8], u64)> {
    let digits = key.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (prefix, number) = key.split_at(key.len() - digits);
    if digits == 0 || digits > 19 || (digits > 1 && number[0] == b'0') {
        return None;
    }
    let n = number
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Some((prefix, n))
}

/// The keys used by the finished links of one list.
#[derive(Debug, Clone, Default)]
pub(crate) struct UsedKeys {
    numbered: FastMap<Box<[u8]>, IntSet>,
    other: FastSet<Box<[u8]>>,
}

impl UsedKeys {
    /// True when `key` was inserted.
    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        match split(key) {
            Some((prefix, n)) => self.numbered.get(prefix).is_some_and(|s| s.contains(n)),
            None => self.other.contains(key),
        }
    }

    /// Remembers `key`.
    pub(crate) fn insert(&mut self, key: &[u8]) {
        match split(key) {
            Some((prefix, n)) => match self.numbered.get_mut(prefix) {
                Some(s) => s.insert(n),
                None => {
                    let mut s = IntSet::default();
                    s.insert(n);
                    self.numbered.insert(prefix.into(), s);
                }
            },
            None => {
                self.other.insert(key.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_split_only_when_canonical() {
        assert_eq!(split(b"42"), Some((&b""[..], 42)));
        assert_eq!(split(b"com_42"), Some((&b"com_"[..], 42)));
        assert_eq!(split(b"0"), Some((&b""[..], 0)));
        assert_eq!(split(b"a0"), Some((&b"a"[..], 0)));
        assert_eq!(split(b"s007"), None);
        assert_eq!(split(b"abc"), None);
        assert_eq!(split(b""), None);
        assert_eq!(split(b"12345678901234567890"), None);
        assert_eq!(
            split(b"x1234567890123456789"),
            Some((&b"x"[..], 1234567890123456789))
        );
    }

    #[test]
    fn dense_keys_turn_into_bitmaps() {
        let mut k = UsedKeys::default();
        for i in (0..20_000u64).rev() {
            k.insert(i.to_string().as_bytes());
        }
        for i in 0..20_000u64 {
            assert!(k.contains(i.to_string().as_bytes()));
        }
        assert!(!k.contains(b"20000"));
        assert!(!k.contains(b"00"));
        assert!(matches!(
            k.numbered
                .get(&b""[..])
                .unwrap()
                .chunks
                .get(&0)
                .map(|c| &**c),
            Some(Chunk::Bitmap(_))
        ));
    }

    proptest! {
        /// The set answers exactly like a set of strings.
        #[test]
        fn same_answers_as_a_string_set(
            inserted in proptest::collection::vec("[a-c_]{0,2}[0-9]{0,4}", 0..200),
            probes in proptest::collection::vec("[a-c_]{0,2}[0-9]{0,4}", 0..200),
        ) {
            let mut k = UsedKeys::default();
            let mut reference = std::collections::HashSet::new();
            for s in &inserted {
                k.insert(s.as_bytes());
                reference.insert(s.clone());
            }
            for s in inserted.iter().chain(&probes) {
                prop_assert_eq!(k.contains(s.as_bytes()), reference.contains(s), "{}", s);
            }
        }
    }
}
