//! Append-only sequences stored in fixed-size, reference-counted chunks,
//! so that an immutable view of a sequence still growing costs O(1) plus
//! a copy of at most one partial chunk.
//!
//! The kernel pass appends state changes for minutes while the GUI wants
//! to draw what was read so far: a [`SeriesBuilder`] is the growing side,
//! [`SeriesBuilder::snapshot`] gives a [`Series`] sharing every full chunk
//! (and the last frozen partial chunk if nothing was pushed since), and the
//! builder goes on appending without ever touching what a snapshot holds.
//! Every chunk but the last holds exactly [`CHUNK`] items, so indexing is
//! a shift and a mask, never a search.

use std::ops::Index;
use std::sync::Arc;

/// Items per chunk (a power of two).
pub const CHUNK: usize = 1024;
const SHIFT: u32 = CHUNK.trailing_zeros();

/// An immutable chunked sequence (see the module documentation).
#[derive(Debug, Clone)]
pub struct Series<T> {
    full: Arc<Vec<Arc<[T]>>>,
    tail: Arc<[T]>,
}

impl<T> Default for Series<T> {
    fn default() -> Self {
        Series {
            full: Arc::new(Vec::new()),
            tail: Arc::from(Vec::new()),
        }
    }
}

impl<T: Copy> From<Vec<T>> for Series<T> {
    fn from(v: Vec<T>) -> Self {
        let mut b = SeriesBuilder::new();
        for x in v {
            b.push(x);
        }
        b.snapshot()
    }
}

/// Equal items, however chunked.
impl<T: PartialEq> PartialEq for Series<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Copy> FromIterator<T> for Series<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut b = SeriesBuilder::new();
        for x in iter {
            b.push(x);
        }
        b.snapshot()
    }
}

impl<T: Copy> Series<T> {
    /// A copy of `items`, chunked as a builder would have.
    pub fn from_slice(items: &[T]) -> Self {
        let mut chunks = items.chunks_exact(CHUNK);
        let full: Vec<Arc<[T]>> = chunks.by_ref().map(Arc::from).collect();
        Series {
            full: Arc::new(full),
            tail: Arc::from(chunks.remainder()),
        }
    }
}

impl<T> Series<T> {
    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        (self.full.len() << SHIFT) + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `k` (panics when out of bounds, like a slice).
    #[inline]
    pub fn at(&self, k: usize) -> &T {
        let c = k >> SHIFT;
        if c < self.full.len() {
            &self.full[c][k & (CHUNK - 1)]
        } else {
            &self.tail[k - (self.full.len() << SHIFT)]
        }
    }

    /// Item `k`, `None` when out of bounds.
    pub fn get(&self, k: usize) -> Option<&T> {
        (k < self.len()).then(|| self.at(k))
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.len().checked_sub(1).map(|k| self.at(k))
    }

    /// The chunks, in order (all full but the last).
    pub fn chunks(&self) -> impl Iterator<Item = &[T]> {
        self.full
            .iter()
            .map(|c| &c[..])
            .chain(std::iter::once(&self.tail[..]).filter(|t| !t.is_empty()))
    }

    /// The items, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks().flatten()
    }

    /// Number of items for which `pred` holds, `pred` holding for a prefix
    /// (like [`slice::partition_point`]).
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        // Windows before or after the whole sequence (most rows of a zoomed
        // render) are answered without a search.
        match (self.first(), self.last()) {
            (None, _) => return 0,
            (Some(f), _) if !pred(f) => return 0,
            (_, Some(l)) if pred(l) => return self.len(),
            _ => {}
        }
        // Whole chunks first (by their last item), then inside one.
        let full = self
            .full
            .partition_point(|c| pred(c.last().expect("full chunks are not empty")));
        if full < self.full.len() {
            (full << SHIFT) + self.full[full].partition_point(pred)
        } else {
            (full << SHIFT) + self.tail.partition_point(pred)
        }
    }

    /// Bytes of heap held (chunk payloads, shared ones included).
    pub fn heap_bytes(&self) -> usize {
        (self.len() * std::mem::size_of::<T>())
            + self.full.capacity() * std::mem::size_of::<Arc<[T]>>()
    }
}

impl<T: Clone> Series<T> {
    /// The items, copied into a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }
}

impl<'a, T> IntoIterator for &'a Series<T> {
    type Item = &'a T;
    type IntoIter = Box<dyn Iterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<T> Index<usize> for Series<T> {
    type Output = T;

    fn index(&self, k: usize) -> &T {
        self.at(k)
    }
}

/// The growing side of a [`Series`].
#[derive(Debug, Clone)]
pub struct SeriesBuilder<T> {
    full: Arc<Vec<Arc<[T]>>>,
    tail: Vec<T>,
    /// The tail as last frozen by [`snapshot`](Self::snapshot), while no
    /// change was made since.
    frozen: Option<Arc<[T]>>,
}

impl<T> Default for SeriesBuilder<T> {
    fn default() -> Self {
        SeriesBuilder {
            full: Arc::new(Vec::new()),
            tail: Vec::new(),
            frozen: None,
        }
    }
}

impl<T: Copy> SeriesBuilder<T> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        (self.full.len() << SHIFT) + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `k` (panics when out of bounds).
    #[inline]
    pub fn get(&self, k: usize) -> T {
        let c = k >> SHIFT;
        if c < self.full.len() {
            self.full[c][k & (CHUNK - 1)]
        } else {
            self.tail[k - (self.full.len() << SHIFT)]
        }
    }

    /// The last item.
    #[inline]
    pub fn last(&self) -> Option<T> {
        match self.tail.last() {
            Some(x) => Some(*x),
            None => self.full.last().and_then(|c| c.last().copied()),
        }
    }

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: T) {
        self.frozen = None;
        if self.tail.capacity() == 0 {
            self.tail.reserve_exact(CHUNK.min(16));
        }
        self.tail.push(x);
        if self.tail.len() == CHUNK {
            let chunk: Arc<[T]> = Arc::from(std::mem::take(&mut self.tail));
            // Copies the list of chunk pointers only when a snapshot shares
            // it (once per snapshot at most).
            Arc::make_mut(&mut self.full).push(chunk);
        }
    }

    /// The tail as a vector holding the last item, if any (a full chunk
    /// taken back when the tail is empty: rare, a copy of one chunk).
    fn tail_mut(&mut self) -> &mut Vec<T> {
        self.frozen = None;
        if self.tail.is_empty() {
            if let Some(c) = Arc::make_mut(&mut self.full).pop() {
                self.tail = c.to_vec();
            }
        }
        &mut self.tail
    }

    /// Removes and returns the last item.
    pub fn pop(&mut self) -> Option<T> {
        self.tail_mut().pop()
    }

    /// Replaces the last item (nothing happens when empty).
    pub fn set_last(&mut self, x: T) {
        if let Some(l) = self.tail_mut().last_mut() {
            *l = x;
        }
    }

    /// An immutable view of the items so far: O(1) plus, if items were
    /// pushed since the last snapshot, a copy of the partial last chunk.
    pub fn snapshot(&mut self) -> Series<T> {
        let tail = match &self.frozen {
            Some(t) => t.clone(),
            None => {
                let t: Arc<[T]> = Arc::from(&self.tail[..]);
                self.frozen = Some(t.clone());
                t
            }
        };
        Series {
            full: self.full.clone(),
            tail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_vector(ops in prop::collection::vec((0u8..10, any::<u32>()), 0..5000)) {
            let mut b = SeriesBuilder::new();
            let mut v: Vec<u32> = Vec::new();
            let mut snaps: Vec<(Series<u32>, Vec<u32>)> = Vec::new();
            for (op, x) in ops {
                match op {
                    0 => { prop_assert_eq!(b.pop(), v.pop()); }
                    1 => { b.set_last(x); if let Some(l) = v.last_mut() { *l = x; } }
                    2 => snaps.push((b.snapshot(), v.clone())),
                    _ => { b.push(x); v.push(x); }
                }
                prop_assert_eq!(b.len(), v.len());
                prop_assert_eq!(b.last(), v.last().copied());
                if !v.is_empty() {
                    let k = x as usize % v.len();
                    prop_assert_eq!(b.get(k), v[k]);
                }
            }
            snaps.push((b.snapshot(), v.clone()));
            // Later changes never show in earlier snapshots.
            for (s, expect) in &snaps {
                prop_assert_eq!(s.len(), expect.len());
                prop_assert_eq!(&s.to_vec(), expect);
                for k in (0..expect.len()).step_by(97) {
                    prop_assert_eq!(s[k], expect[k]);
                }
                prop_assert_eq!(s.last(), expect.last());
            }
        }

        #[test]
        fn partition_point_matches_slices(mut v in prop::collection::vec(0u32..3000, 0..5000), x in 0u32..3100) {
            v.sort();
            let s = Series::from(v.clone());
            prop_assert_eq!(s.partition_point(|&y| y < x), v.partition_point(|&y| y < x));
            prop_assert_eq!(s.partition_point(|&y| y <= x), v.partition_point(|&y| y <= x));
        }
    }

    #[test]
    fn snapshots_share_full_chunks() {
        let mut b = SeriesBuilder::new();
        for i in 0..(3 * CHUNK + 5) {
            b.push(i as u64);
        }
        let s1 = b.snapshot();
        let s2 = b.snapshot();
        assert!(Arc::ptr_eq(&s1.full, &s2.full));
        assert!(Arc::ptr_eq(&s1.tail, &s2.tail), "unchanged tail re-frozen");
        b.push(7);
        let s3 = b.snapshot();
        assert!(Arc::ptr_eq(&s1.full[0], &s3.full[0]));
        assert_eq!(s1.len() + 1, s3.len());
        assert_eq!(s3.chunks().count(), 4);
    }
}
