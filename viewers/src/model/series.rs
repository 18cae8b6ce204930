//! Append-only sequences stored in fixed-size, reference-counted chunks,
//! so that an immutable view of a sequence still growing costs O(1) plus
//! a copy of at most one partial chunk.
//!
//! The kernel pass appends state changes for minutes while the GUI wants
//! to draw what was read so far: a [`SeriesBuilder`] is the growing side,
//! [`SeriesBuilder::snapshot`] gives a [`Series`] sharing every full chunk
//! (and the last frozen partial chunk if nothing was pushed since), and the
//! builder goes on appending without ever touching what a snapshot holds.
//! Every chunk but the last holds exactly [`chunk_items`] items (about
//! [`CHUNK_BYTES`] of them, a power of two), so indexing is a shift and a
//! mask, never a search.
//!
//! A series can also be a column in place in a mapped file
//! ([`Series::mapped`], what the analysis store gives back): it is then
//! one "last chunk" of any length, borrowed from the map, which it keeps
//! alive; reading it is the same code, and costs no heap.

use std::ops::Index;
use std::sync::Arc;

use super::spill::Arena;

/// Bytes of a full chunk (at most; items whose size is not a power of
/// two fill less). Each full chunk keeps a descriptor on the heap even
/// once spilled, so chunks are sized in bytes, not items: at 1,024 items,
/// the packed bytes of the kernel pass (most of its change lists, hundreds
/// of MB on a 1 GB trace) were 1 kB chunks, and their descriptors (40
/// bytes then) grew the heap by some 17 MB per GB of trace. Larger chunks
/// cost more in each growing series' partial last chunk: 32 kB ones added
/// 11 MB to the 1 GB trace's pass.
pub const CHUNK_BYTES: usize = 8 << 10;

/// Items per full chunk of a series of `T`: a power of two, [`CHUNK_BYTES`]
/// worth of items of `T`'s size rounded up to a power of two.
pub const fn chunk_items<T>() -> usize {
    let size = std::mem::size_of::<T>();
    let size = if size == 0 {
        1
    } else {
        size.next_power_of_two()
    };
    if size >= CHUNK_BYTES {
        1
    } else {
        CHUNK_BYTES / size
    }
}

/// Chunks a reader going through a series in order asks for at once,
/// ahead of it ([`Chunks::iter`]).
const PREFETCH_CHUNKS: usize = 32;

/// `chunk_items::<T>()` and its base-2 logarithm, as constants of each
/// item type.
struct Chunk<T>(std::marker::PhantomData<T>);

impl<T> Chunk<T> {
    const ITEMS: usize = chunk_items::<T>();
    const SHIFT: u32 = Self::ITEMS.trailing_zeros();
    const MASK: usize = Self::ITEMS - 1;
}

/// An immutable chunked sequence (see the module documentation).
#[derive(Debug, Clone)]
pub struct Series<T> {
    full: Chunks<T>,
    tail: Tail<T>,
}

/// The list of full chunks, shared by snapshots; an empty one allocates
/// nothing (a kernel pass holds tens of thousands of short-lived records,
/// most with no full chunk, each with a dozen series).
struct Chunks<T>(Option<Arc<ChunkList<T>>>);

/// Full chunks: the spilled ones first, each by its start alone, then
/// those being written to the arena, then those on the heap. A pass over
/// a large trace spills hundreds of thousands of chunks and keeps their
/// descriptors on the heap to its end: 8 bytes each, where a descriptor
/// with its own length and owner ([`Tail`]) took 40 and made the heap
/// grow with the trace.
struct ChunkList<T> {
    /// The arena holding the spilled chunks (kept alive by the list).
    arena: Option<Arc<Arena>>,
    /// Where each spilled chunk starts in `arena` ([`Chunk::ITEMS`]
    /// items from there).
    spilled: Vec<ChunkStart<T>>,
    /// Chunks handed to `arena`'s writer, read on the heap until written
    /// ([`Arena::written`]): their offsets in the arena and items.
    queued: Vec<(usize, Arc<[T]>)>,
    /// The chunks after those.
    owned: Vec<Arc<[T]>>,
}

/// A full chunk as the bytes [`Arena::submit`] writes.
struct ChunkBytes<T>(Arc<[T]>);

// SAFETY: behind the `Arc`, the items cannot be mutated.
unsafe impl<T: bytemuck::Pod + Send + Sync> StableBytes for ChunkBytes<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.0)
    }
}

/// The start of a spilled chunk.
struct ChunkStart<T>(*const T);

impl<T> Clone for ChunkStart<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ChunkStart<T> {}

// SAFETY: the items a start points to are never written again (an arena
// hands out each range once) and live as long as the list's arena.
unsafe impl<T: Send + Sync> Send for ChunkStart<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for ChunkStart<T> {}

impl<T> Clone for ChunkList<T> {
    fn clone(&self) -> Self {
        ChunkList {
            arena: self.arena.clone(),
            spilled: self.spilled.clone(),
            queued: self.queued.clone(),
            owned: self.owned.clone(),
        }
    }
}

impl<T> Chunks<T> {
    fn new(owned: Vec<Arc<[T]>>) -> Self {
        Chunks((!owned.is_empty()).then(|| {
            Arc::new(ChunkList {
                arena: None,
                spilled: Vec::new(),
                queued: Vec::new(),
                owned,
            })
        }))
    }

    /// Number of full chunks.
    #[inline]
    fn len(&self) -> usize {
        self.0
            .as_ref()
            .map_or(0, |l| l.spilled.len() + l.queued.len() + l.owned.len())
    }

    /// Chunk `c` (panics when out of bounds).
    #[inline]
    fn chunk(&self, c: usize) -> &[T] {
        let l = self.0.as_deref().expect("a chunk in bounds");
        match l.spilled.get(c) {
            // SAFETY: a spilled chunk is `Chunk::<T>::ITEMS` items from
            // its start in `l.arena`, which `l` keeps alive.
            Some(p) => unsafe { std::slice::from_raw_parts(p.0, Chunk::<T>::ITEMS) },
            None => {
                let c = c - l.spilled.len();
                match l.queued.get(c) {
                    Some((_, items)) => items,
                    None => &l.owned[c - l.queued.len()],
                }
            }
        }
    }

    /// The chunks, in order, the spilled ones asked for ahead of the
    /// reader ([`Arena::prefetch`]) [`PREFETCH_CHUNKS`] at a time (the
    /// first ones as it starts, the next ones halfway through each): a
    /// store written from a spill file that was evicted read it many
    /// times over (60 GB for the 8 GB generated trace in 2 GiB).
    fn iter(&self) -> impl Iterator<Item = &[T]> {
        (0..self.len()).map(move |c| {
            if c == 0 {
                self.prefetch(0, PREFETCH_CHUNKS);
            }
            if c % PREFETCH_CHUNKS == PREFETCH_CHUNKS / 2 {
                self.prefetch(c + PREFETCH_CHUNKS / 2, PREFETCH_CHUNKS);
            }
            self.chunk(c)
        })
    }

    /// Asks for the spilled chunks among the `n` from chunk `from` ahead,
    /// runs of chunks next to each other in the arena at once.
    fn prefetch(&self, from: usize, n: usize) {
        let Some(l) = self.0.as_deref() else { return };
        let Some(arena) = &l.arena else { return };
        let bytes = Chunk::<T>::ITEMS * std::mem::size_of::<T>();
        let end = from.saturating_add(n).min(l.spilled.len());
        let mut run: Option<(*const u8, usize)> = None;
        for p in l.spilled.get(from..end).unwrap_or(&[]) {
            let start = p.0 as *const u8;
            run = match run {
                Some((s, len)) if s.wrapping_add(len) == start => Some((s, len + bytes)),
                Some((s, len)) => {
                    arena.prefetch(s, len);
                    Some((start, bytes))
                }
                None => Some((start, bytes)),
            };
        }
        if let Some((s, len)) = run {
            arena.prefetch(s, len);
        }
    }

    /// The last chunk.
    fn last(&self) -> Option<&[T]> {
        self.len().checked_sub(1).map(|c| self.chunk(c))
    }

    /// Number of chunks for which `pred` holds, `pred` holding for a
    /// prefix.
    fn partition_point(&self, mut pred: impl FnMut(&[T]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.chunk(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The list, to change (copied when a snapshot shares it).
    fn make_mut(&mut self) -> &mut ChunkList<T> {
        Arc::make_mut(self.0.get_or_insert_with(|| {
            Arc::new(ChunkList {
                arena: None,
                spilled: Vec::new(),
                queued: Vec::new(),
                owned: Vec::new(),
            })
        }))
    }

    /// Reads the chunks handed to the arena's writer that it wrote since
    /// in the arena (they are written in order); their heap copies are
    /// freed when no snapshot shares them.
    fn settle(&mut self) -> bool {
        let Some(l) = self.0.as_deref() else {
            return false;
        };
        let (Some(arena), Some(&(first, _))) = (&l.arena, l.queued.first()) else {
            return false;
        };
        let bytes = Chunk::<T>::ITEMS * std::mem::size_of::<T>();
        let written = arena.written();
        if first + bytes > written {
            return false;
        }
        let l = self.make_mut();
        let arena = l.arena.clone().expect("checked above");
        let done = l
            .queued
            .iter()
            .take_while(|(at, _)| at + bytes <= written)
            .count();
        for (at, _) in l.queued.drain(..done) {
            l.spilled.push(ChunkStart(arena.ptr_at(at)));
        }
        if l.queued.is_empty() {
            // Most lists stop growing: no room kept for the next round.
            l.queued = Vec::new();
        }
        true
    }

    /// Appends a full chunk.
    fn push(&mut self, chunk: Arc<[T]>) {
        self.make_mut().owned.push(chunk);
    }

    /// Removes the last chunk, its items copied.
    fn pop(&mut self) -> Option<Vec<T>>
    where
        T: Clone,
    {
        if self.len() == 0 {
            return None;
        }
        let l = self.make_mut();
        if let Some(c) = l.owned.pop() {
            return Some(c.to_vec());
        }
        if let Some((_, c)) = l.queued.pop() {
            // Its range stays handed out, written or not, never read.
            return Some(c.to_vec());
        }
        let p = l.spilled.pop()?;
        // SAFETY: as in `chunk`; `l.arena` still holds it.
        Some(unsafe { std::slice::from_raw_parts(p.0, Chunk::<T>::ITEMS) }.to_vec())
    }

    /// Bytes of heap held: the chunks on the heap and the descriptors.
    fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |l| {
            l.owned
                .iter()
                .chain(l.queued.iter().map(|(_, c)| c))
                .map(|c| std::mem::size_of_val(&c[..]))
                .sum::<usize>()
                + l.owned.capacity() * std::mem::size_of::<Arc<[T]>>()
                + l.queued.capacity() * std::mem::size_of::<(usize, Arc<[T]>)>()
                + l.spilled.capacity() * std::mem::size_of::<ChunkStart<T>>()
        })
    }
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks(None)
    }
}

impl<T> Clone for Chunks<T> {
    fn clone(&self) -> Self {
        Chunks(self.0.clone())
    }
}

impl<T> std::fmt::Debug for Chunks<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (spilled, owned) = self
            .0
            .as_ref()
            .map_or((0, 0), |l| (l.spilled.len(), l.owned.len()));
        write!(f, "Chunks({spilled} spilled, {owned} on the heap)")
    }
}

/// Bytes that stay at one address, unchanged, as long as they live (a
/// read-only memory map, a vector never mutated again).
///
/// # Safety
/// [`bytes`](Self::bytes) must return the same slice, with the same
/// contents, every time it is called.
pub unsafe trait StableBytes: Send + Sync + 'static {
    /// The bytes.
    fn bytes(&self) -> &[u8];
}

// SAFETY: a read-only map is not moved or changed by this process; the
// store never rewrites a file in place (it renames a new one over it).
unsafe impl StableBytes for memmap2::Mmap {
    fn bytes(&self) -> &[u8] {
        self
    }
}

// SAFETY: behind the `Arc` the series holds, the vector cannot be mutated.
unsafe impl StableBytes for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// What keeps a chunk's items alive.
enum Keep<T> {
    /// No item (nothing allocated).
    Empty,
    Owned(Arc<[T]>),
    Mapped(Arc<dyn StableBytes>),
    /// Copied to a spill file ([`Arena`]).
    Spilled(Arc<Arena>),
}

impl<T> Clone for Keep<T> {
    fn clone(&self) -> Self {
        match self {
            Keep::Empty => Keep::Empty,
            Keep::Owned(a) => Keep::Owned(a.clone()),
            Keep::Mapped(m) => Keep::Mapped(m.clone()),
            Keep::Spilled(a) => Keep::Spilled(a.clone()),
        }
    }
}

/// A chunk: items on the heap, in a spill file, or (the last chunk only)
/// a whole mapped column, as a raw slice so that reading it is the same
/// code either way.
struct Tail<T> {
    ptr: *const T,
    len: usize,
    keep: Keep<T>,
}

// SAFETY: a `Tail` is a shared, immutable slice of `T` kept alive by
// `keep` (an `Arc` of `T`s or of immutable bytes).
unsafe impl<T: Send + Sync> Send for Tail<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Tail<T> {}

impl<T> Tail<T> {
    fn owned(items: Arc<[T]>) -> Self {
        if items.is_empty() {
            return Tail::empty();
        }
        Tail {
            ptr: items.as_ptr(),
            len: items.len(),
            keep: Keep::Owned(items),
        }
    }

    fn empty() -> Self {
        Tail {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            keep: Keep::Empty,
        }
    }

    #[inline]
    fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe items owned by `keep` (an
        // `Arc<[T]>` or stable bytes checked for size and alignment by
        // `Series::mapped`), alive and unchanged while `self` is.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Clone for Tail<T> {
    fn clone(&self) -> Self {
        Tail {
            ptr: self.ptr,
            len: self.len,
            keep: self.keep.clone(),
        }
    }
}

impl<T> std::fmt::Debug for Tail<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.keep {
            Keep::Empty => "empty",
            Keep::Owned(_) => "owned",
            Keep::Mapped(_) => "mapped",
            Keep::Spilled(_) => "spilled",
        };
        write!(f, "Tail({kind}, {} items)", self.len)
    }
}

impl<T> std::ops::Deref for Tail<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> Default for Series<T> {
    fn default() -> Self {
        Series {
            full: Chunks::default(),
            tail: Tail::empty(),
        }
    }
}

impl<T: bytemuck::Pod> Series<T> {
    /// The `len` items at byte `offset` of `bytes`, in place (`None` when
    /// they are out of its bounds or misaligned).
    pub fn mapped(bytes: Arc<dyn StableBytes>, offset: usize, len: usize) -> Option<Self> {
        let size = len.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(size)?;
        let items: &[T] = bytemuck::try_cast_slice(bytes.bytes().get(offset..end)?).ok()?;
        let (ptr, len) = (items.as_ptr(), items.len());
        Some(Series {
            full: Chunks::default(),
            tail: Tail {
                ptr,
                len,
                keep: Keep::Mapped(bytes),
            },
        })
    }
}

impl<T> Series<T> {
    /// The `len` items at `ptr` in `arena`, in place.
    ///
    /// # Safety
    /// `ptr` must be what [`Arena::copy`] returned for `len` items of `T`
    /// (or point inside such a copy, at an item, with `len` items after
    /// it in the copy).
    pub(crate) unsafe fn in_arena(arena: &Arc<Arena>, ptr: *const T, len: usize) -> Self {
        if len == 0 {
            return Series::default();
        }
        Series {
            full: Chunks::default(),
            tail: Tail {
                ptr,
                len,
                keep: Keep::Spilled(arena.clone()),
            },
        }
    }
}

impl<T> Series<T> {
    /// Reads the full chunks that were being written to their arena when
    /// this was made and are written now there, off the heap (see
    /// [`SeriesBuilder::settle`]); whether there were any.
    pub fn settle(&mut self) -> bool {
        self.full.settle()
    }

    /// Whether any full chunk is still being written to the arena (read
    /// on the heap until [`settle`](Self::settle)).
    pub fn queued(&self) -> bool {
        self.full.0.as_ref().is_some_and(|l| !l.queued.is_empty())
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
        let mut chunks = items.chunks_exact(Chunk::<T>::ITEMS);
        let full: Vec<Arc<[T]>> = chunks.by_ref().map(Arc::from).collect();
        Series {
            full: Chunks::new(full),
            tail: Tail::owned(Arc::from(chunks.remainder())),
        }
    }
}

impl<T> Series<T> {
    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        (self.full.len() << Chunk::<T>::SHIFT) + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `k` (panics when out of bounds, like a slice).
    #[inline]
    pub fn at(&self, k: usize) -> &T {
        let c = k >> Chunk::<T>::SHIFT;
        if c < self.full.len() {
            &self.full.chunk(c)[k & Chunk::<T>::MASK]
        } else {
            &self.tail[k - (self.full.len() << Chunk::<T>::SHIFT)]
        }
    }

    /// Item `k`, `None` when out of bounds.
    pub fn get(&self, k: usize) -> Option<&T> {
        (k < self.len()).then(|| self.at(k))
    }

    /// The items from `k` to the end of the chunk holding it (or of the
    /// series), at least one (panics when out of bounds, like a slice).
    pub(crate) fn run_from(&self, k: usize) -> &[T] {
        let c = k >> Chunk::<T>::SHIFT;
        if c < self.full.len() {
            &self.full.chunk(c)[k & Chunk::<T>::MASK..]
        } else {
            &self.tail[k - (self.full.len() << Chunk::<T>::SHIFT)..]
        }
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.len().checked_sub(1).map(|k| self.at(k))
    }

    /// Asks for the spilled chunks holding items `start .. start + len`
    /// ahead of a reader going through them in order (see
    /// [`Arena::prefetch`]).
    pub(crate) fn prefetch(&self, start: usize, len: usize) {
        if len == 0 {
            return;
        }
        let first = start >> Chunk::<T>::SHIFT;
        let last = start.saturating_add(len - 1) >> Chunk::<T>::SHIFT;
        if first < self.full.len() {
            self.full.prefetch(first, last + 1 - first);
        }
    }

    /// The chunks, in order (all full but the last).
    pub fn chunks(&self) -> impl Iterator<Item = &[T]> {
        self.full
            .iter()
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
            (full << Chunk::<T>::SHIFT) + self.full.chunk(full).partition_point(pred)
        } else {
            (full << Chunk::<T>::SHIFT) + self.tail.partition_point(pred)
        }
    }

    /// Items `start .. start + len` when they lie in one chunk (always
    /// for a mapped series), `None` otherwise or when out of bounds.
    pub fn contiguous(&self, start: usize, len: usize) -> Option<&[T]> {
        let end = start.checked_add(len)?;
        if end > self.len() {
            return None;
        }
        let full = self.full.len() << Chunk::<T>::SHIFT;
        if start >= full {
            return self.tail.get(start - full..end - full);
        }
        let c = start >> Chunk::<T>::SHIFT;
        let off = start & Chunk::<T>::MASK;
        self.full.chunk(c).get(off..off + len)
    }

    /// Appends items `start .. start + len` (those in bounds) to `out`.
    pub fn copy_range(&self, start: usize, len: usize, out: &mut Vec<T>)
    where
        T: Copy,
    {
        let end = start.saturating_add(len).min(self.len());
        let mut k = start;
        while k < end {
            let full = self.full.len() << Chunk::<T>::SHIFT;
            let (chunk, off): (&[T], usize) = if k >= full {
                (&self.tail[..], k - full)
            } else {
                (
                    self.full.chunk(k >> Chunk::<T>::SHIFT),
                    k & Chunk::<T>::MASK,
                )
            };
            let take = (chunk.len() - off).min(end - k);
            out.extend_from_slice(&chunk[off..off + take]);
            k += take;
        }
    }

    /// Whether the items are in place in a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.tail.keep, Keep::Mapped(_))
    }

    /// Bytes of heap held (chunk payloads, shared ones included; none for
    /// mapped or spilled chunks).
    pub fn heap_bytes(&self) -> usize {
        let tail = match self.tail.keep {
            Keep::Owned(_) => self.tail.len * std::mem::size_of::<T>(),
            _ => 0,
        };
        self.full.heap_bytes() + tail
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
    full: Chunks<T>,
    tail: Vec<T>,
    /// The tail as last frozen by [`snapshot`](Self::snapshot), while no
    /// change was made since.
    frozen: Option<Arc<[T]>>,
}

impl<T> Default for SeriesBuilder<T> {
    fn default() -> Self {
        SeriesBuilder {
            full: Chunks::default(),
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
        (self.full.len() << Chunk::<T>::SHIFT) + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Item `k` (panics when out of bounds).
    #[inline]
    pub fn get(&self, k: usize) -> T {
        let c = k >> Chunk::<T>::SHIFT;
        if c < self.full.len() {
            self.full.chunk(c)[k & Chunk::<T>::MASK]
        } else {
            self.tail[k - (self.full.len() << Chunk::<T>::SHIFT)]
        }
    }

    /// Appends items `start..start + len` to `out`, a slice of a chunk at
    /// a time (panics when out of bounds).
    pub fn copy_range(&self, start: usize, len: usize, out: &mut Vec<T>) {
        let end = start + len;
        let in_chunks = self.full.len() << Chunk::<T>::SHIFT;
        let mut k = start;
        while k < end.min(in_chunks) {
            let chunk = self.full.chunk(k >> Chunk::<T>::SHIFT);
            let from = k & Chunk::<T>::MASK;
            let n = (chunk.len() - from).min(end - k);
            out.extend_from_slice(&chunk[from..from + n]);
            k += n;
        }
        if k < end {
            out.extend_from_slice(&self.tail[k - in_chunks..end - in_chunks]);
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
            self.tail.reserve_exact(Chunk::<T>::ITEMS.min(16));
        }
        self.tail.push(x);
        if self.tail.len() == Chunk::<T>::ITEMS {
            let chunk: Arc<[T]> = Arc::from(std::mem::take(&mut self.tail));
            // Copies the list of chunk pointers only when a snapshot shares
            // it (once per snapshot at most).
            self.full.push(chunk);
        }
    }

    /// Appends `items` (a chunk's worth at a time: the packed bytes of
    /// the kernel pass come this way, hundreds of millions on a large
    /// trace).
    pub fn extend_from_slice(&mut self, mut items: &[T]) {
        self.frozen = None;
        while !items.is_empty() {
            if self.tail.capacity() == 0 {
                self.tail.reserve_exact(Chunk::<T>::ITEMS.min(16));
            }
            // (A tail taken back from a full chunk by `set_last` can hold
            // a chunk's worth already.)
            let n = Chunk::<T>::ITEMS
                .saturating_sub(self.tail.len())
                .min(items.len());
            self.tail.extend_from_slice(&items[..n]);
            items = &items[n..];
            if self.tail.len() >= Chunk::<T>::ITEMS {
                let rest = self.tail.split_off(Chunk::<T>::ITEMS);
                let chunk: Arc<[T]> = Arc::from(std::mem::replace(&mut self.tail, rest));
                self.full.push(chunk);
            }
        }
    }

    /// Keeps the first `len` items.
    pub fn truncate(&mut self, len: usize) {
        while self.len() > len {
            self.pop();
        }
    }

    /// The tail as a vector holding the last item, if any (a full chunk
    /// taken back when the tail is empty: rare, a copy of one chunk).
    fn tail_mut(&mut self) -> &mut Vec<T> {
        self.frozen = None;
        if self.tail.is_empty() {
            if let Some(c) = self.full.pop() {
                self.tail = c;
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

    /// Moves the full chunks still on the heap to `arena` (as many as
    /// fit): handed to its writer ([`Arena::submit`]) and read on the heap
    /// until written, then in the arena from the next `spill` or
    /// [`settle`](Self::settle) on. The snapshots taken since share the
    /// copies, those taken before keep the heap chunks until they are
    /// dropped.
    pub fn spill(&mut self, arena: &Arc<Arena>)
    where
        T: bytemuck::Pod + Send + Sync,
    {
        self.full.settle();
        match self.full.0.as_deref() {
            // A series spills to one arena (a chunk's start does not say
            // which).
            Some(l) if l.arena.as_ref().is_some_and(|a| !Arc::ptr_eq(a, arena)) => return,
            Some(l) if !l.owned.is_empty() => {}
            _ => return,
        }
        let l = self.full.make_mut();
        l.arena.get_or_insert_with(|| arena.clone());
        let mut moved = 0;
        for c in &l.owned {
            let Some(at) = arena.submit(Arc::new(ChunkBytes(c.clone()))) else {
                break;
            };
            l.queued.push((at, c.clone()));
            moved += 1;
        }
        l.owned.drain(..moved);
        // Those written already (all of them when the arena writes
        // through) are read in the arena at once.
        self.full.settle();
    }

    /// Reads the chunks [`spill`](Self::spill) handed to the arena and
    /// that are written since in the arena, off the heap; whether there
    /// were any.
    pub fn settle(&mut self) -> bool {
        self.full.settle()
    }

    /// [`spill`](Self::spill), then waits for the chunks to be written
    /// and reads them there: for a builder about to be sealed, which
    /// will not spill again.
    pub(crate) fn spill_written(&mut self, arena: &Arc<Arena>)
    where
        T: bytemuck::Pod + Send + Sync,
    {
        self.spill(arena);
        if let Some((at, _)) = self.full.0.as_deref().and_then(|l| l.queued.last()) {
            arena.wait_written(at + Chunk::<T>::ITEMS * std::mem::size_of::<T>());
        }
        self.full.settle();
    }

    /// The first half of sealing a builder that will never change again
    /// (see [`SealBatch`]): moves its full chunks to `arena` and queues
    /// its partial last chunk in `batch`.
    pub(crate) fn seal_push(&mut self, arena: &Arc<Arena>, batch: &mut SealBatch)
    where
        T: bytemuck::Pod + Send + Sync,
    {
        self.spill_written(arena);
        // The builder is dropped once sealed: its list of chunks, shared
        // by the sealed series, keeps no spare room.
        if let Some(l) = self.full.0.as_mut().and_then(Arc::get_mut) {
            l.owned.shrink_to_fit();
            l.spilled.shrink_to_fit();
        }
        batch.push(&self.tail);
    }

    /// The second half of sealing: the items, their full chunks shared
    /// with the builder and their last chunk read in place where
    /// `written` holds it (the builder must not have changed since
    /// [`seal_push`](Self::seal_push), nor any builder pushed after it
    /// been taken yet).
    pub(crate) fn seal_take(&self, written: &mut SealedBatch) -> Series<T>
    where
        T: bytemuck::Pod,
    {
        Series {
            full: self.full.clone(),
            tail: written.next::<T>(self.tail.len()).tail,
        }
    }

    /// An immutable view of the items so far: O(1) plus, if items were
    /// pushed since the last snapshot, a copy of the partial last chunk.
    pub fn snapshot(&mut self) -> Series<T> {
        let tail = match &self.frozen {
            Some(t) => t.clone(),
            None if self.tail.is_empty() => {
                return Series {
                    full: self.full.clone(),
                    tail: Tail::empty(),
                }
            }
            None => {
                let t: Arc<[T]> = Arc::from(&self.tail[..]);
                self.frozen = Some(t.clone());
                t
            }
        };
        Series {
            full: self.full.clone(),
            tail: Tail::owned(tail),
        }
    }
}

/// The partial last chunks of many builders that will never change again
/// (the columns of a destroyed Pajé container), copied to an [`Arena`]
/// with one write rather than one per series: a trace of thousands of
/// short-lived containers otherwise keeps each one's partial chunks on the
/// heap to the end of the pass.
///
/// Sealing is two walks over the builders in the same order:
/// `seal_push` each (full chunks spilled, last chunk queued here), then
/// [`write`](Self::write), then `seal_take` each, which hands back the
/// series read in place.
#[derive(Debug, Default)]
pub(crate) struct SealBatch {
    buf: Vec<u8>,
}

impl SealBatch {
    /// Queues `items` (at a multiple of 8 bytes, as
    /// [`SealedBatch::next`] reads them back).
    pub(crate) fn push<T: bytemuck::Pod>(&mut self, items: &[T]) {
        self.buf.resize(self.buf.len().next_multiple_of(8), 0);
        self.buf.extend_from_slice(bytemuck::cast_slice(items));
    }

    /// Queues the items of `s`, its chunks back to back; their number.
    pub(crate) fn push_series<T: bytemuck::Pod>(&mut self, s: &Series<T>) -> u32 {
        self.buf.resize(self.buf.len().next_multiple_of(8), 0);
        for c in s.chunks() {
            self.buf.extend_from_slice(bytemuck::cast_slice(c));
        }
        s.len() as u32
    }

    /// Bytes queued.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Writes what was queued to `arena`, waiting for it; `None` when it
    /// cannot take it (the caller keeps its items on the heap).
    pub(crate) fn write(&self, arena: &Arc<Arena>) -> Option<SealedBatch> {
        let ptr = arena.copy(&self.buf[..])?;
        Some(SealedBatch {
            arena: arena.clone(),
            at: arena.offset_of(ptr),
            len: self.buf.len(),
            off: 0,
            pending: None,
        })
    }

    /// Hands what was queued to `arena`'s writer: the batch, read on the
    /// heap ([`SealedBatch::pending`]) until written; `None` when the
    /// arena cannot take it.
    pub(crate) fn submit(&self, arena: &Arc<Arena>) -> Option<SealedBatch> {
        // Whole words: the heap copy is read in place as items of up to
        // 8 bytes, as the arena's copy is.
        let mut words = vec![0u64; self.buf.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..self.buf.len()]
            .copy_from_slice(&self.buf);
        let heap = Arc::new(Words(words, self.buf.len()));
        let at = arena.submit(heap.clone())?;
        Some(SealedBatch {
            arena: arena.clone(),
            at,
            len: self.buf.len(),
            off: 0,
            pending: Some(heap),
        })
    }
}

/// The first `.1` bytes of words (8-byte aligned): a [`SealBatch`] on
/// the heap.
pub(crate) struct Words(Vec<u64>, usize);

// SAFETY: behind the `Arc` it is kept in, the vector cannot be mutated.
unsafe impl StableBytes for Words {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
}

/// A [`SealBatch`] written to its arena: hands the slices back in the
/// order they were queued.
pub(crate) struct SealedBatch {
    arena: Arc<Arena>,
    /// Offset of the batch in the arena.
    at: usize,
    /// Bytes of the batch.
    len: usize,
    /// Offset in the batch of the next slice.
    off: usize,
    /// The batch on the heap, while its write may not be done.
    pending: Option<Arc<Words>>,
}

impl std::fmt::Debug for SealedBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = if self.pending.is_some() {
            "heap"
        } else {
            "arena"
        };
        write!(
            f,
            "SealedBatch({} bytes at {}, on the {on})",
            self.len, self.at
        )
    }
}

impl SealedBatch {
    /// The batch of `len` bytes at offset `at` in `arena`, written before
    /// ([`offset`](Self::offset) of what [`SealBatch::write`] gave), to
    /// read again from its first slice.
    pub(crate) fn reopen(
        arena: &Arc<Arena>,
        at: usize,
        len: usize,
        pending: Option<Arc<Words>>,
    ) -> SealedBatch {
        SealedBatch {
            arena: arena.clone(),
            at,
            len,
            off: 0,
            pending: pending.filter(|_| arena.written() < at + len),
        }
    }

    /// The batch on the heap while its write is not done (`None` once
    /// it is, or when it was written at once).
    pub(crate) fn pending(&self) -> Option<&Arc<Words>> {
        self.pending
            .as_ref()
            .filter(|_| self.arena.written() < self.at + self.len)
    }

    /// Offset of the batch in its arena.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }

    /// The next slice queued, of `len` items of `T`, read in place.
    /// Panics when it would reach past the batch: the walks that queued
    /// and take the slices disagree (a bug; reading the wrong bytes as
    /// plain data would be wrong, never unsound).
    pub(crate) fn next<T: bytemuck::Pod>(&mut self, len: usize) -> Series<T> {
        self.off = self.off.next_multiple_of(8);
        let size = len * std::mem::size_of::<T>();
        assert!(
            self.off + size <= self.len && std::mem::align_of::<T>() <= 8,
            "a sealed slice past its batch"
        );
        let off = self.off;
        self.off += size;
        if let Some(heap) = &self.pending {
            // Read on the heap: a series made now keeps reading there.
            let heap: Arc<dyn StableBytes> = heap.clone();
            return Series::mapped(heap, off, len).expect("a slice inside the batch");
        }
        let ptr = self.arena.ptr_at::<u8>(self.at + off) as *const T;
        // SAFETY: the `len` items lie inside the batch's copy in the arena
        // (checked above), at a multiple of 8 bytes from its start, itself
        // a multiple of 8: aligned for `T`; the arena never writes them
        // again and the series keeps it alive.
        unsafe { Series::in_arena(&self.arena, ptr, len) }
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
            let dir = tempfile::tempdir().unwrap();
            let arena = Arc::new(Arena::create(dir.path()).unwrap());
            for (op, x) in ops {
                match op {
                    0 => { prop_assert_eq!(b.pop(), v.pop()); }
                    4 if x % 8 == 0 => b.spill(&arena),
                    1 => { b.set_last(x); if let Some(l) = v.last_mut() { *l = x; } }
                    2 => snaps.push((b.snapshot(), v.clone())),
                    3 if x % 4 == 0 => {
                        // Up to two chunks at once, across chunk edges.
                        let items: Vec<u32> = (0..x % (2 * chunk_items::<u32>() as u32)).map(|i| x ^ i).collect();
                        b.extend_from_slice(&items);
                        v.extend_from_slice(&items);
                    }
                    _ => { b.push(x); v.push(x); }
                }
                prop_assert_eq!(b.len(), v.len());
                prop_assert_eq!(b.last(), v.last().copied());
                if !v.is_empty() {
                    let k = x as usize % v.len();
                    prop_assert_eq!(b.get(k), v[k]);
                    // A range from there, across chunk edges.
                    let n = (x as usize / 7) % (v.len() - k + 1);
                    let mut out = vec![7];
                    b.copy_range(k, n, &mut out);
                    prop_assert_eq!(&out[1..], &v[k..k + n]);
                }
            }
            snaps.push((b.snapshot(), v.clone()));
            // Later changes never show in earlier snapshots.
            b.spill(&arena);
            snaps.push((b.snapshot(), v.clone()));
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
    fn many_spilled_chunks_read_back_in_order() {
        // Two series spilled in turns, so that one's chunks are apart in
        // the arena, then side by side (a run asked for at once), then
        // some left on the heap: read in order, past several rounds of
        // chunks asked for ahead, every item is there.
        let dir = tempfile::tempdir().unwrap();
        let arena = Arc::new(Arena::create(dir.path()).unwrap());
        let n = chunk_items::<u64>();
        let (mut a, mut b) = (SeriesBuilder::new(), SeriesBuilder::new());
        let mut v = Vec::new();
        for round in 0..(3 * PREFETCH_CHUNKS) {
            let items: Vec<u64> = (0..n as u64).map(|i| (round as u64) << 32 | i).collect();
            a.extend_from_slice(&items);
            v.extend_from_slice(&items);
            b.extend_from_slice(&items);
            if round < PREFETCH_CHUNKS {
                a.spill(&arena);
                b.spill(&arena);
            } else if round < 2 * PREFETCH_CHUNKS + 5 {
                a.spill(&arena);
            }
        }
        a.push(7);
        v.push(7);
        let s = a.snapshot();
        assert_eq!(s.chunks().count(), 3 * PREFETCH_CHUNKS + 1);
        assert!(s.chunks().flatten().copied().eq(v.iter().copied()));
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), v);
    }

    #[test]
    fn chunks_being_written_are_read_on_the_heap_then_in_the_arena() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arc::new(Arena::create(dir.path()).unwrap());
        let n = chunk_items::<u64>();
        let full = 3 * n * std::mem::size_of::<u64>();
        let v: Vec<u64> = (0..(3 * n + 5) as u64).collect();
        let mut b = SeriesBuilder::new();
        b.extend_from_slice(&v);
        arena.hold_writes(true);
        b.spill(&arena);
        let queued = b.snapshot();
        assert_eq!(queued.to_vec(), v);
        assert!(queued.heap_bytes() >= full, "on the heap until written");
        assert!(!b.settle(), "nothing written yet");
        arena.hold_writes(false);
        assert!(arena.wait_written(arena.used()));
        assert!(b.settle());
        let settled = b.snapshot();
        assert!(settled.heap_bytes() < full / 3, "{}", settled.heap_bytes());
        assert_eq!(settled.to_vec(), v);
        // The older snapshot keeps its heap copies, and reads the same.
        assert_eq!(queued.to_vec(), v);
        // A chunk taken back: the last one, whatever its state.
        b.extend_from_slice(&[1, 2, 3]);
        arena.hold_writes(true);
        b.spill(&arena);
        let mut w = v.clone();
        w.extend_from_slice(&[1, 2, 3]);
        for _ in 0..n + 8 {
            assert_eq!(b.pop(), w.pop());
        }
        assert_eq!(b.snapshot().to_vec(), w);
        arena.hold_writes(false);
    }

    #[test]
    fn mapped_series_read_in_place() {
        let v: Vec<u64> = (0..3000u64).map(|x| x * 3).collect();
        let mut bytes = vec![0u8; 8];
        bytes.extend_from_slice(bytemuck::cast_slice(&v));
        let bytes: Arc<dyn StableBytes> = Arc::new(bytes);
        let s = Series::<u64>::mapped(bytes.clone(), 8, v.len()).unwrap();
        assert!(s.is_mapped());
        assert_eq!(s.heap_bytes(), 0);
        assert_eq!(s, Series::from(v.clone()));
        assert_eq!(
            s.partition_point(|&x| x < 4000),
            v.partition_point(|&x| x < 4000)
        );
        assert_eq!(s.clone()[2999], 8997);
        // Out of bounds, misaligned.
        assert!(Series::<u64>::mapped(bytes.clone(), 8, v.len() + 1).is_none());
        assert!(Series::<u64>::mapped(bytes, 4, 2).is_none());
    }

    #[test]
    fn snapshots_share_full_chunks() {
        let mut b = SeriesBuilder::new();
        for i in 0..(3 * chunk_items::<u64>() + 5) {
            b.push(i as u64);
        }
        let s1 = b.snapshot();
        let s2 = b.snapshot();
        assert!(Arc::ptr_eq(
            s1.full.0.as_ref().unwrap(),
            s2.full.0.as_ref().unwrap()
        ));
        assert_eq!(s1.tail.ptr, s2.tail.ptr, "unchanged tail re-frozen");
        b.push(7);
        let s3 = b.snapshot();
        assert_eq!(s1.full.chunk(0).as_ptr(), s3.full.chunk(0).as_ptr());
        assert_eq!(s1.len() + 1, s3.len());
        assert_eq!(s3.chunks().count(), 4);
    }
}
