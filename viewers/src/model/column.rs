//! Packed, append-only columns: the change lists, marks and arrows of the
//! kernel analysis, held as blocks of [`BLOCK`] items packed by
//! [`pack`](super::pack) (delta-encoded times, dictionary-coded codes),
//! the same bytes in memory while the pass runs and in place in a mapped
//! analysis store, read by the same code.
//!
//! A [`Column`] is four plain [`Series`]: the packed bytes, the byte
//! offset of each block, each block's first item (searches bisect these
//! before decoding one block) and the items after the last packed block,
//! as they are. The first three are boxed apart, and absent when there is
//! no packed block: most columns of a trace of many short-lived threads
//! have fewer than 2 × [`BLOCK`] items, and the thread records built at
//! the end of the pass (then read back from the store) held three empty
//! series of 48 bytes in each of their three columns. A [`ColumnBuilder`] keeps its last one or two blocks'
//! worth of items unpacked (the kernel pass pops and rewrites its last
//! changes, and summarizes a block once the change after it is known) and
//! packs a block once [`2 × BLOCK`](BLOCK) items are waiting;
//! [`ColumnBuilder::snapshot`] shares everything packed, like
//! [`SeriesBuilder::snapshot`].
//!
//! Reading an item decodes its block: [`Column::reader`] gives a reader
//! with a two-block cache for the many nearby reads of one render; a
//! plain [`Column::at`] decodes each time.

use std::cell::RefCell;
use std::sync::Arc;

use super::gallop::{count_holding, last_holding};
use super::pack::{Item, Timed, BLOCK};
use super::series::{SealBatch, SealedBatch, Series, SeriesBuilder};
use super::spill::Arena;
use traceloom_base::Time;

/// Blocks a reader going through a column in order asks for at once,
/// ahead of it (about 20 chunks of the kernel pass's packed bytes).
const PREFETCH_BLOCKS: usize = 1024;

/// A packed column (see the module documentation).
#[derive(Clone)]
pub struct Column<T: Item> {
    /// The packed blocks; `None` when there is none (one word instead of
    /// three series).
    blocks: Option<Box<PackedBlocks<T>>>,
    tail: Series<T>,
}

/// The packed part of a [`Column`] with at least one packed block.
#[derive(Clone)]
struct PackedBlocks<T: Item> {
    bytes: Series<u8>,
    locs: Series<u64>,
    firsts: Series<T>,
}

impl<T: Item> Column<T> {
    /// See [`Series::settle`].
    pub fn settle(&mut self) -> bool {
        let packed = self
            .blocks
            .as_deref_mut()
            .is_some_and(|b| b.bytes.settle() | b.locs.settle() | b.firsts.settle());
        self.tail.settle() | packed
    }

    /// See [`Series::queued`].
    pub fn queued(&self) -> bool {
        self.tail.queued()
            || self
                .blocks
                .as_deref()
                .is_some_and(|b| b.bytes.queued() || b.locs.queued() || b.firsts.queued())
    }
}

impl<T: Item> Default for Column<T> {
    fn default() -> Self {
        Column {
            blocks: None,
            tail: Series::default(),
        }
    }
}

impl<T: Item> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Column({} items, {} packed blocks in {} bytes)",
            self.len(),
            self.block_count(),
            self.blocks.as_ref().map_or(0, |p| p.bytes.len())
        )
    }
}

/// Equal items, however packed.
impl<T: Item> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Item> From<Vec<T>> for Column<T> {
    fn from(v: Vec<T>) -> Self {
        v.into_iter().collect()
    }
}

impl<T: Item> FromIterator<T> for Column<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut b = ColumnBuilder::new();
        for x in iter {
            b.push(x);
        }
        b.snapshot()
    }
}

/// The parts of a [`Column`], as the analysis store writes and maps them.
#[derive(Debug, Clone)]
pub struct ColumnParts<T: Item> {
    /// The packed blocks, back to back.
    pub bytes: Series<u8>,
    /// Byte offset in `bytes` of each block.
    pub locs: Series<u64>,
    /// First item of each block.
    pub firsts: Series<T>,
    /// The items after the last block, unpacked.
    pub tail: Series<T>,
}

impl<T: Item> Column<T> {
    /// The column of these parts, the packed ones boxed only when there
    /// is something in them.
    fn of(bytes: Series<u8>, locs: Series<u64>, firsts: Series<T>, tail: Series<T>) -> Self {
        let none = bytes.is_empty() && locs.is_empty() && firsts.is_empty();
        Column {
            blocks: (!none).then(|| {
                Box::new(PackedBlocks {
                    bytes,
                    locs,
                    firsts,
                })
            }),
            tail,
        }
    }

    /// A column of `parts` (`None` when they do not fit together: a
    /// first item per block).
    pub fn from_parts(parts: ColumnParts<T>) -> Option<Self> {
        (parts.locs.len() == parts.firsts.len())
            .then(|| Column::of(parts.bytes, parts.locs, parts.firsts, parts.tail))
    }

    /// The parts of the column.
    pub fn parts(&self) -> ColumnParts<T> {
        match &self.blocks {
            Some(p) => ColumnParts {
                bytes: p.bytes.clone(),
                locs: p.locs.clone(),
                firsts: p.firsts.clone(),
                tail: self.tail.clone(),
            },
            None => ColumnParts {
                bytes: Series::default(),
                locs: Series::default(),
                firsts: Series::default(),
                tail: self.tail.clone(),
            },
        }
    }

    /// Number of packed blocks.
    #[inline]
    fn block_count(&self) -> usize {
        self.blocks.as_ref().map_or(0, |p| p.locs.len())
    }

    fn packed(&self) -> usize {
        self.block_count() * BLOCK
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.packed() + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Decodes block `b` into `out` ([`BLOCK`] items; panics when there
    /// is no such block).
    fn decode_block(&self, b: usize, out: &mut [T]) {
        self.with_block_bytes(b, |bytes| T::decode(bytes, out));
    }

    /// `f` of the packed bytes of block `b` (panics when there is no such
    /// block).
    fn with_block_bytes<R>(&self, b: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        let p = self.blocks.as_deref().expect("a packed block");
        let start = *p.locs.at(b) as usize;
        let end = p.locs.get(b + 1).map_or(p.bytes.len(), |&e| e as usize);
        let end = end.min(p.bytes.len()).max(start.min(p.bytes.len()));
        let start = start.min(end);
        match p.bytes.contiguous(start, end - start) {
            Some(bytes) => f(bytes),
            None => {
                let mut buf = Vec::with_capacity(end - start);
                p.bytes.copy_range(start, end - start, &mut buf);
                f(&buf)
            }
        }
    }

    fn block_vec(&self, b: usize) -> Vec<T> {
        let mut v = vec![T::zeroed(); BLOCK];
        self.decode_block(b, &mut v);
        v
    }

    /// Item `k` (panics when out of bounds, like a slice); decodes its
    /// block (use a [`reader`](Self::reader) for many reads).
    pub fn at(&self, k: usize) -> T {
        let p = self.packed();
        if k >= p {
            *self.tail.at(k - p)
        } else {
            let mut buf = [T::zeroed(); BLOCK];
            self.decode_block(k / BLOCK, &mut buf);
            buf[k % BLOCK]
        }
    }

    /// Item `k`, `None` when out of bounds.
    pub fn get(&self, k: usize) -> Option<T> {
        (k < self.len()).then(|| self.at(k))
    }

    /// The first item.
    pub fn first(&self) -> Option<T> {
        match self.blocks.as_ref().and_then(|p| p.firsts.first()) {
            Some(&f) => Some(f),
            None => self.tail.first().copied(),
        }
    }

    /// The last item.
    pub fn last(&self) -> Option<T> {
        self.len().checked_sub(1).map(|k| self.at(k))
    }

    /// The items, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.blocks_in_order()
            .flatten()
            .chain(self.tail.iter().copied())
    }

    /// The packed blocks decoded, in order, asked for ahead.
    fn blocks_in_order(&self) -> impl Iterator<Item = Vec<T>> + '_ {
        (0..self.block_count()).map(|b| {
            self.prefetch_blocks(b);
            self.block_vec(b)
        })
    }

    /// Before block `b` of a reader going through the blocks in order:
    /// every [`PREFETCH_BLOCKS`], asks for the spilled bytes of the next
    /// as many blocks ahead (and at the start, of the first ones too), as
    /// [`Series::chunks`] does: the join decodes a part's columns so,
    /// from a spill file that memory pressure may have evicted.
    fn prefetch_blocks(&self, b: usize) {
        let Some(p) = self.blocks.as_deref() else {
            return;
        };
        if !b.is_multiple_of(PREFETCH_BLOCKS) {
            return;
        }
        let from = if b == 0 { 0 } else { b + PREFETCH_BLOCKS };
        let to = (b + 2 * PREFETCH_BLOCKS).min(p.locs.len());
        if from >= to {
            return;
        }
        p.locs.prefetch(from, to - from);
        let start = *p.locs.at(from) as usize;
        let end = p.locs.get(to).map_or(p.bytes.len(), |&e| e as usize);
        p.bytes.prefetch(start, end.saturating_sub(start));
    }

    /// How many chunks [`chunks`](Self::chunks) gives: the blocks and the
    /// tail.
    pub fn chunk_count(&self) -> usize {
        self.block_count() + 1
    }

    /// Chunk `k` of [`chunks`](Self::chunks) into `out`, whose room is
    /// reused: a join going through millions of blocks allocated a vector
    /// for each.
    pub fn read_chunk(&self, k: usize, out: &mut Vec<T>) {
        out.clear();
        if k < self.block_count() {
            self.prefetch_blocks(k);
            out.resize(BLOCK, T::zeroed());
            self.decode_block(k, out);
        } else {
            out.extend(self.tail.iter().copied());
        }
    }

    /// The items a block at a time, in order (the last chunk is the
    /// unpacked tail): what a copy of a long column decodes without
    /// holding it all. Columns of the same length built in step (the
    /// change lists of one record) give chunks of the same lengths.
    pub fn chunks(&self) -> impl Iterator<Item = Vec<T>> + '_ {
        (0..self.chunk_count()).map(|k| {
            let mut items = Vec::new();
            self.read_chunk(k, &mut items);
            items
        })
    }

    /// The items, copied into a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// Number of items for which `pred` holds, `pred` holding for a prefix
    /// (like [`slice::partition_point`]); decodes one block at most.
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> usize {
        let nb = self.block_count();
        // Blocks whose first item holds: the answer is in the last of them.
        let f = self
            .blocks
            .as_ref()
            .map_or(0, |p| p.firsts.partition_point(&mut pred));
        if f == 0 {
            return if nb == 0 {
                self.tail.partition_point(pred)
            } else {
                0
            };
        }
        let mut buf = [T::zeroed(); BLOCK];
        self.decode_block(f - 1, &mut buf);
        let i = buf.partition_point(&mut pred);
        if i < BLOCK || f < nb {
            return (f - 1) * BLOCK + i;
        }
        self.packed() + self.tail.partition_point(pred)
    }

    /// Whether the items are in place in a mapped file.
    pub fn is_mapped(&self) -> bool {
        match &self.blocks {
            Some(p) => p.bytes.is_mapped(),
            None => self.tail.is_mapped(),
        }
    }

    /// Bytes of heap held by the items (none for a mapped column; the
    /// box of the packed parts, 144 bytes, is counted as the column's own
    /// size is: not).
    pub fn heap_bytes(&self) -> usize {
        let packed = self.blocks.as_ref().map_or(0, |p| {
            p.bytes.heap_bytes() + p.locs.heap_bytes() + p.firsts.heap_bytes()
        });
        packed + self.tail.heap_bytes()
    }

    /// Bytes the items take packed (in memory or on disk).
    pub fn packed_bytes(&self) -> usize {
        let (bytes, firsts) = self
            .blocks
            .as_ref()
            .map_or((0, 0), |p| (p.bytes.len(), p.firsts.len()));
        bytes + self.block_count() * 8 + (firsts + self.tail.len()) * std::mem::size_of::<T>()
    }

    /// A reader caching the last two blocks it decoded.
    pub fn reader(&self) -> ColumnReader<'_, T> {
        ColumnReader {
            col: self,
            cache: RefCell::new(Cache {
                blocks: [usize::MAX; 2],
                items: [[T::zeroed(); BLOCK]; 2],
                recent: 0,
            }),
        }
    }
}

struct Cache<T> {
    blocks: [usize; 2],
    items: [[T; BLOCK]; 2],
    /// The slot read last.
    recent: usize,
}

/// Reads a [`Column`] through a cache of two decoded blocks (the block of
/// a change and of the change after it, for instance).
pub struct ColumnReader<'a, T: Item> {
    col: &'a Column<T>,
    cache: RefCell<Cache<T>>,
}

impl<T: Item> ColumnReader<'_, T> {
    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.col.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.col.is_empty()
    }

    /// Item `k` (panics when out of bounds).
    #[inline]
    pub fn at(&self, k: usize) -> T {
        let p = self.col.packed();
        if k >= p {
            return *self.col.tail.at(k - p);
        }
        let b = k / BLOCK;
        if k.is_multiple_of(BLOCK) {
            // A block's first item is stored unpacked.
            if let Some(blocks) = self.col.blocks.as_deref() {
                return *blocks.firsts.at(b);
            }
        }
        let mut c = self.cache.borrow_mut();
        let slot = self.slot_of(&mut c, b);
        c.items[slot][k % BLOCK]
    }

    /// The cache slot holding packed block `b`, decoded into the slot read
    /// less recently when in neither.
    #[inline]
    fn slot_of(&self, c: &mut Cache<T>, b: usize) -> usize {
        let slot = if c.blocks[0] == b {
            0
        } else if c.blocks[1] == b {
            1
        } else {
            let s = 1 - c.recent;
            self.col.decode_block(b, &mut c.items[s]);
            c.blocks[s] = b;
            s
        };
        c.recent = slot;
        slot
    }

    /// `f` of the items from `k` to the end of the block holding it (or
    /// of the run of the unpacked tail), at least one, decoded into the
    /// cache as [`at`](Self::at) does: what a reader going through items
    /// in order takes at a time (panics when out of bounds).
    pub(crate) fn run_from<R>(&self, k: usize, f: impl FnOnce(&[T]) -> R) -> R {
        let p = self.col.packed();
        if k >= p {
            return f(self.col.tail.run_from(k - p));
        }
        let b = k / BLOCK;
        let mut c = self.cache.borrow_mut();
        let slot = self.slot_of(&mut c, b);
        f(&c.items[slot][k % BLOCK..])
    }

    /// The column read.
    pub fn column(&self) -> &Column<T> {
        self.col
    }
}

impl<T: Timed> ColumnReader<'_, T> {
    /// The first item at or after index `from` whose time is at or after
    /// `t`: its index and the item, or `(len(), None)`. A forward search
    /// that gallops over the blocks' first items, which are stored
    /// unpacked, then searches the one block holding the answer: in the
    /// reader's cache when an earlier read decoded it, else in its packed
    /// bytes ([`Timed::search_block`]; drawn events are bisected there,
    /// nothing decoded). A search through the items themselves decoded
    /// every block it probed: two or three blocks a pixel column in a
    /// full-range render of a thread with many drawn events.
    pub fn first_at_or_after(&self, from: usize, t: Time) -> (usize, Option<T>) {
        let n = self.len();
        let packed = self.col.packed();
        let tail = &self.col.tail;
        let in_tail = |from: usize| {
            let k = from + count_holding(from, tail.len(), |k| tail.at(k).time() < t);
            (packed + k, tail.get(k).copied())
        };
        if from >= packed {
            return in_tail(from.min(n) - packed);
        }
        let firsts = &self.col.blocks.as_deref().expect("a packed block").firsts;
        let nb = firsts.len();
        let before = |b: usize| firsts.at(b).time() < t;
        // The last block at or after from's whose first item is before t:
        // the answer is in it, or is the first item after it.
        let lo = last_holding(from / BLOCK, nb, before);
        let from_in_block = from.saturating_sub(lo * BLOCK);
        let (k, item) = if self.cache.borrow().blocks.contains(&lo) {
            let block = lo * BLOCK;
            let k = from_in_block
                + count_holding(from_in_block, BLOCK, |i| self.at(block + i).time() < t);
            (k, (k < BLOCK).then(|| self.at(block + k)))
        } else {
            // Not decoded into the cache: a full-range render reaches a
            // new block in most pixel columns of a busy row, and decoding
            // it whole took longer than bisecting it in place (one
            // thread, 8 GB benchmark trace's busiest rows: 49 -> 42 ms).
            self.col
                .with_block_bytes(lo, |bytes| T::search_block(bytes, BLOCK, from_in_block, t))
        };
        if k < BLOCK {
            return (lo * BLOCK + k, item);
        }
        if lo + 1 < nb {
            return ((lo + 1) * BLOCK, Some(*firsts.at(lo + 1)));
        }
        in_tail(0)
    }
}

/// The growing side of a [`Column`].
#[derive(Debug)]
pub struct ColumnBuilder<T: Item> {
    bytes: SeriesBuilder<u8>,
    locs: SeriesBuilder<u64>,
    firsts: SeriesBuilder<T>,
    /// Items packed: `locs.len() × BLOCK`, kept apart so that `len`,
    /// `get` and `last` (several calls per change of the kernel pass) do
    /// not go through the chunk list of `locs`.
    packed: usize,
    /// The items after the packed blocks (fewer than 2 × BLOCK).
    tail: Vec<T>,
    /// The tail as last frozen by `snapshot`, while unchanged.
    frozen: Option<Series<T>>,
    scratch: Vec<u8>,
}

impl<T: Item> Default for ColumnBuilder<T> {
    fn default() -> Self {
        ColumnBuilder {
            bytes: SeriesBuilder::new(),
            locs: SeriesBuilder::new(),
            firsts: SeriesBuilder::new(),
            packed: 0,
            tail: Vec::new(),
            frozen: None,
            scratch: Vec::new(),
        }
    }
}

/// Items of a [`ColumnBuilder`] by index, the last packed block met kept
/// decoded ([`ColumnBuilder::cursor`]).
pub struct BuilderCursor<'a, T: Item> {
    column: &'a ColumnBuilder<T>,
    /// The block `items` holds (`usize::MAX`: none yet).
    block: usize,
    items: Vec<T>,
}

impl<T: Item> BuilderCursor<'_, T> {
    /// Item `k` (panics when out of bounds).
    #[inline]
    pub fn get(&mut self, k: usize) -> T {
        let p = self.column.packed();
        if k >= p {
            return self.column.tail[k - p];
        }
        let b = k / BLOCK;
        if b != self.block {
            self.items = self.column.unpack(b);
            self.block = b;
        }
        self.items[k % BLOCK]
    }
}

impl<T: Item> ColumnBuilder<T> {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn packed(&self) -> usize {
        debug_assert_eq!(self.packed, self.locs.len() * BLOCK);
        self.packed
    }

    /// Number of items.
    #[inline]
    pub fn len(&self) -> usize {
        self.packed() + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cold]
    #[inline(never)]
    fn unpack(&self, b: usize) -> Vec<T> {
        let start = self.locs.get(b) as usize;
        let end = if b + 1 < self.locs.len() {
            self.locs.get(b + 1) as usize
        } else {
            self.bytes.len()
        };
        let mut bytes = Vec::with_capacity(end - start);
        self.bytes.copy_range(start, end - start, &mut bytes);
        let mut v = vec![T::zeroed(); BLOCK];
        T::decode(&bytes, &mut v);
        v
    }

    /// A reader of items by index that decodes each packed block it
    /// meets once: what a walk over items no longer unpacked wants (the
    /// summaries of blocks closed by a bulk append), where
    /// [`get`](Self::get) decodes a block per item.
    pub fn cursor(&self) -> BuilderCursor<'_, T> {
        BuilderCursor {
            column: self,
            block: usize::MAX,
            items: Vec::new(),
        }
    }

    /// Item `k` (panics when out of bounds; decodes its block unless it
    /// is one of the last ones).
    #[inline]
    pub fn get(&self, k: usize) -> T {
        let p = self.packed();
        if k >= p {
            self.tail[k - p]
        } else {
            self.unpack(k / BLOCK)[k % BLOCK]
        }
    }

    /// The last item.
    #[inline]
    pub fn last(&self) -> Option<T> {
        match self.tail.last() {
            Some(&x) => Some(x),
            None => self.last_packed(),
        }
    }

    /// The last item when the tail is empty (only after many pops).
    #[cold]
    #[inline(never)]
    fn last_packed(&self) -> Option<T> {
        self.len().checked_sub(1).map(|k| self.get(k))
    }

    /// Items `from..to` as a slice when they are all still unpacked (the
    /// last [`BLOCK`] items are, in a builder never popped), `None`
    /// otherwise.
    #[inline]
    pub fn unpacked(&self, from: usize, to: usize) -> Option<&[T]> {
        let p = self.packed();
        if from < p {
            return None;
        }
        self.tail.get(from - p..to - p)
    }

    /// Copies items `from..from + out.len()` to `out`, decoding each
    /// packed block once (panics when out of bounds).
    pub fn read_range(&self, from: usize, out: &mut [T]) {
        let p = self.packed();
        let mut k = from;
        let mut done = 0;
        while done < out.len() && k < p {
            let b = k / BLOCK;
            let items = self.unpack(b);
            let n = (BLOCK - k % BLOCK).min(out.len() - done);
            out[done..done + n].copy_from_slice(&items[k % BLOCK..k % BLOCK + n]);
            done += n;
            k += n;
        }
        if done < out.len() {
            let rest = out.len() - done;
            out[done..].copy_from_slice(&self.tail[k - p..k - p + rest]);
        }
    }

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: T) {
        self.frozen = None;
        // Inline, the rest apart: the kernel pass pushes several items
        // per event, and most pushes need no room and pack nothing.
        if self.tail.len() < self.tail.capacity() && self.tail.len() + 1 < 2 * BLOCK {
            self.tail.push(x);
        } else {
            self.push_slow(x);
        }
    }

    /// [`push`](Self::push) when the tail needs room or a block is full.
    #[inline(never)]
    fn push_slow(&mut self, x: T) {
        if self.tail.capacity() == 0 {
            self.tail.reserve_exact(8);
        }
        self.tail.push(x);
        if self.tail.len() == 2 * BLOCK {
            self.scratch.clear();
            T::encode(&self.tail[..BLOCK], &mut self.scratch);
            self.locs.push(self.bytes.len() as u64);
            self.packed += BLOCK;
            self.firsts.push(self.tail[0]);
            self.bytes.extend_from_slice(&self.scratch);
            self.tail.drain(..BLOCK);
        }
    }

    /// Appends `items` (what many [`push`](Self::push)es would give, a
    /// block at a time).
    pub fn extend_from_slice(&mut self, items: &[T]) {
        self.frozen = None;
        self.tail.extend_from_slice(items);
        let mut packed = 0;
        while self.tail.len() - packed >= 2 * BLOCK {
            let block = &self.tail[packed..packed + BLOCK];
            self.scratch.clear();
            T::encode(block, &mut self.scratch);
            self.locs.push(self.bytes.len() as u64);
            self.packed += BLOCK;
            self.firsts.push(block[0]);
            self.bytes.extend_from_slice(&self.scratch);
            packed += BLOCK;
        }
        self.tail.drain(..packed);
    }

    /// The tail, holding the last item if any (the last block unpacked
    /// back when it is empty: only after many pops).
    fn tail_mut(&mut self) -> &mut Vec<T> {
        self.frozen = None;
        if self.tail.is_empty() && !self.locs.is_empty() {
            let b = self.locs.len() - 1;
            let items = self.unpack(b);
            let start = self.locs.get(b) as usize;
            self.bytes.truncate(start);
            self.locs.pop();
            self.packed -= BLOCK;
            self.firsts.pop();
            self.tail = items;
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

    /// Moves the full chunks of packed bytes, offsets and first items to
    /// `arena` (see [`SeriesBuilder::spill`]).
    pub fn spill(&mut self, arena: &Arc<Arena>) {
        self.bytes.spill(arena);
        self.locs.spill(arena);
        self.firsts.spill(arena);
    }

    /// The first half of sealing a builder that will never change again
    /// (see [`SealBatch`]): full chunks spilled, the rest queued.
    pub(crate) fn seal_push(&mut self, arena: &Arc<Arena>, batch: &mut SealBatch) {
        self.bytes.seal_push(arena, batch);
        self.locs.seal_push(arena, batch);
        self.firsts.seal_push(arena, batch);
        batch.push(&self.tail);
    }

    /// The second half: the column, read in place in the arena (see
    /// [`SeriesBuilder::seal_take`]).
    pub(crate) fn seal_take(&self, written: &mut SealedBatch) -> Column<T> {
        let bytes = self.bytes.seal_take(written);
        let locs = self.locs.seal_take(written);
        let firsts = self.firsts.seal_take(written);
        let tail = written.next(self.tail.len());
        Column::of(bytes, locs, firsts, tail)
    }

    /// An immutable view of the items so far, sharing every packed block
    /// (a copy of the unpacked tail, fewer than 2 × [`BLOCK`] items, when
    /// it changed since the last snapshot).
    pub fn snapshot(&mut self) -> Column<T> {
        let tail = match &self.frozen {
            Some(t) => t.clone(),
            None => {
                let t = Series::from_slice(&self.tail);
                self.frozen = Some(t.clone());
                t
            }
        };
        Column::of(
            self.bytes.snapshot(),
            self.locs.snapshot(),
            self.firsts.snapshot(),
            tail,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_vector(ops in prop::collection::vec((0u8..12, 0i64..1000), 0..3000)) {
            let mut b = ColumnBuilder::new();
            let mut v: Vec<i64> = Vec::new();
            let mut snaps: Vec<(Column<i64>, Vec<i64>)> = Vec::new();
            let mut t = 0i64;
            for (op, x) in ops {
                match op {
                    0 => { prop_assert_eq!(b.pop(), v.pop()); }
                    1 => { b.set_last(x); if let Some(l) = v.last_mut() { *l = x; } }
                    2 => snaps.push((b.snapshot(), v.clone())),
                    3 if x % 3 == 0 => {
                        // Up to a few blocks at once.
                        let items: Vec<i64> = (0..x / 3).map(|i| t + i * 7).collect();
                        t += x / 3 * 7;
                        b.extend_from_slice(&items);
                        v.extend_from_slice(&items);
                    }
                    _ => { t += x; b.push(t); v.push(t); }
                }
                prop_assert_eq!(b.len(), v.len());
                prop_assert_eq!(b.last(), v.last().copied());
                if !v.is_empty() {
                    let k = x as usize % v.len();
                    prop_assert_eq!(b.get(k), v[k]);
                    // A range from `k`, packed or not.
                    let n = (x as usize / 7) % (v.len() - k + 1);
                    let mut out = vec![0; n];
                    b.read_range(k, &mut out);
                    prop_assert_eq!(&out[..], &v[k..k + n]);
                    if let Some(s) = b.unpacked(k, k + n) {
                        prop_assert_eq!(s, &v[k..k + n]);
                    }
                }
            }
            snaps.push((b.snapshot(), v.clone()));
            for (s, expect) in &snaps {
                prop_assert_eq!(&s.to_vec(), expect);
                prop_assert_eq!(&s.chunks().flatten().collect::<Vec<_>>(), expect);
                prop_assert_eq!(s.last(), expect.last().copied());
                prop_assert_eq!(s.first(), expect.first().copied());
                let r = s.reader();
                for k in (0..expect.len()).step_by(7) {
                    prop_assert_eq!(r.at(k), expect[k]);
                    prop_assert_eq!(s.at(k), expect[k]);
                }
            }
        }

        #[test]
        fn partition_point_matches_slices(mut v in prop::collection::vec(0i64..3000, 0..1000), x in 0i64..3100) {
            v.sort();
            let s = Column::from(v.clone());
            prop_assert_eq!(s.partition_point(|&y| y < x), v.partition_point(|&y| y < x));
            prop_assert_eq!(s.partition_point(|&y| y <= x), v.partition_point(|&y| y <= x));
        }

        #[test]
        fn forward_search_matches_slices(
            steps in prop::collection::vec((0i64..40, 0u8..4), 0..1200),
            probes in prop::collection::vec((0usize..1300, 0i64..30_000), 1..40),
        ) {
            use crate::model::kernel::Mark;
            let mut t = 0;
            let v: Vec<Mark> = steps.iter().map(|&(d, kind)| { t += d; Mark::new(t, kind) }).collect();
            let s = Column::from(v.clone());
            let r = s.reader();
            for &(from, x) in &probes {
                let from = from.min(v.len());
                let k = from + v[from..].partition_point(|m| m.time < x);
                prop_assert_eq!(r.first_at_or_after(from, x), (k, v.get(k).copied()), "{} {}", from, x);
            }
        }
    }

    #[test]
    fn spilled_columns_read_in_order_across_prefetch_windows() {
        // Spilled now and then, as the pass spills, over several windows
        // of blocks asked for ahead: read whole, a block at a time and
        // item by item, the column is what was pushed.
        let dir = tempfile::tempdir().unwrap();
        let arena = Arc::new(Arena::create(dir.path()).unwrap());
        let mut b = ColumnBuilder::new();
        let mut v: Vec<i64> = Vec::new();
        let mut t = 0i64;
        for i in 0..(3 * PREFETCH_BLOCKS * BLOCK + 100) as i64 {
            t += 1 + (i * 7919) % 5000;
            b.push(t);
            v.push(t);
            if i % 50_000 == 0 {
                b.spill(&arena);
            }
        }
        b.spill(&arena);
        let c = b.snapshot();
        assert!(c.iter().eq(v.iter().copied()));
        let blocks: Vec<i64> = c.chunks().flatten().collect();
        assert_eq!(blocks, v);
        assert_eq!(c.to_vec(), v);
    }

    #[test]
    fn columns_without_packed_blocks_hold_no_box() {
        // One word more than the tail, whatever is packed.
        assert!(std::mem::size_of::<Column<i64>>() <= std::mem::size_of::<Series<i64>>() + 8);
        let empty = Column::<i64>::default();
        assert_eq!(empty.parts().locs.len(), 0);
        assert_eq!(empty.heap_bytes(), 0);
        assert_eq!(empty.first(), None);
        assert_eq!(empty.partition_point(|_| true), 0);
        // Around the edges where a block is packed (2 × BLOCK items
        // waiting) and unpacked again by pops.
        let mut b = ColumnBuilder::new();
        let mut v: Vec<i64> = Vec::new();
        let edges = [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            2 * BLOCK - 1,
            2 * BLOCK,
            3 * BLOCK + 1,
        ];
        let down = edges.iter().rev().map(|&n| (false, n));
        for (rising, n) in edges.iter().map(|&n| (true, n)).chain(down) {
            while v.len() < n {
                let x = v.len() as i64 * 3;
                b.push(x);
                v.push(x);
            }
            while v.len() > n {
                assert_eq!(b.pop(), v.pop());
            }
            let c = b.snapshot();
            // Packed when some items are not in the unpacked tail: from
            // 2 × BLOCK items pushed, and down to fewer after pops (a
            // block is unpacked again only once the tail is empty).
            let packed = b.tail.len() < n;
            if rising {
                assert_eq!(packed, n >= 2 * BLOCK, "{n} items");
            }
            assert_eq!(c.blocks.is_some(), packed, "{n} items");
            assert_eq!(c.to_vec(), v, "{n} items");
            assert_eq!(c.first(), v.first().copied());
            assert_eq!(c.last(), v.last().copied());
            let x = n as i64;
            assert_eq!(c.partition_point(|&y| y < x), v.partition_point(|&y| y < x));
            // The parts, packed ones empty or not, give the same column
            // back, boxed alike.
            let back = Column::from_parts(c.parts()).unwrap();
            assert_eq!(back.blocks.is_some(), packed);
            assert_eq!(back, c);
            assert_eq!(back.parts().locs.len(), c.parts().locs.len());
            assert_eq!(back.packed_bytes(), c.packed_bytes());
            if !packed {
                assert_eq!(c.heap_bytes(), c.tail.heap_bytes());
            }
        }
    }

    #[test]
    fn mapped_columns_without_packed_blocks_are_mapped() {
        let v: Vec<i64> = (0..5).collect();
        let bytes: Arc<dyn super::super::series::StableBytes> =
            Arc::new(bytemuck::cast_slice::<i64, u8>(&v).to_vec());
        let c = Column::from_parts(ColumnParts {
            bytes: Series::<u8>::mapped(bytes.clone(), 0, 0).unwrap(),
            locs: Series::<u64>::mapped(bytes.clone(), 0, 0).unwrap(),
            firsts: Series::<i64>::mapped(bytes.clone(), 0, 0).unwrap(),
            tail: Series::<i64>::mapped(bytes.clone(), 0, v.len()).unwrap(),
        })
        .unwrap();
        assert!(c.blocks.is_none());
        assert!(c.is_mapped());
        assert_eq!(c.heap_bytes(), 0);
        assert_eq!(c.to_vec(), v);
        assert!(!Column::from(v.clone()).is_mapped());
    }

    #[test]
    fn parts_rebuild_the_column() {
        let v: Vec<i64> = (0..1000).map(|k| k * k).collect();
        let c = Column::from(v.clone());
        assert!(c.packed_bytes() < v.len() * 8 / 2);
        let back = Column::from_parts(c.parts()).unwrap();
        assert_eq!(back.to_vec(), v);
        let mut bad = c.parts();
        bad.firsts = Series::default();
        assert!(Column::from_parts(bad).is_none());
    }

    #[test]
    fn a_cursor_reads_what_get_reads() {
        let mut b = ColumnBuilder::<u32>::new();
        // Appended in bulk: most items are packed at once.
        let v: Vec<u32> = (0..1000u32).map(|k| k * 7 % 13).collect();
        b.extend_from_slice(&v);
        assert!(b.packed() > 0);
        let mut c = b.cursor();
        // In order, backwards (a block again), and in the tail.
        for k in (0..v.len()).chain((0..v.len()).rev()) {
            assert_eq!(c.get(k), v[k], "{k}");
            assert_eq!(b.get(k), v[k], "{k}");
        }
    }
}
