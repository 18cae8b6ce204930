//! Rendering a step function stored compactly — sorted change times and a
//! code per change — into a [`RowIntervalsBuilder`], in time proportional
//! to the number of *pixels* the row covers rather than to its number of
//! changes.
//!
//! Wherever several changes fall in one pixel column, a search jumps to
//! the first change of the next column and the changes skipped are pushed
//! as one mixed interval whose state is the dominant one of a bounded
//! sample (like LTTV's "next good time"): a full-range render of a
//! 50-million-event trace costs O(rows × width × log n).
//!
//! Each change list comes with a precomputed summary, [`Blocks`]: per
//! block of [`BLOCK`] changes, the time of its first change and its
//! dominant state (built as the changes are recorded, see
//! [`BlocksBuilder`]). Where a pixel column holds at least two whole
//! blocks, its dominant state is taken from their summaries (at most
//! eight of them, evenly spread, each weighing its duration in its own
//! dominant state), and the search for
//! the next column walks the summaries before the changes of one block;
//! so a dense column costs a few cache lines instead of one per sampled
//! change. Sparser columns sample the changes themselves. The interval
//! boundaries and merged counts do not depend on the summaries; the state
//! chosen for a mixed interval may (it is the dominant of a bounded sample
//! either way), and so may its covered time: the drawn share of the
//! sample (each summary gives its block's), applied to the interval's
//! extent. An IRQ line busy 1 % of the time is thus a mixed interval
//! covering 1 % of it, which the drawing shows as such, not as a line
//! busy throughout.
//!
//! The search gallops forward from the current change (1, 2, 4, ...
//! changes ahead, then bisects the last step) rather than bisecting all the
//! changes left: its probes stay within the next pixel's changes, which
//! are few cache lines away, where a bisection of millions of changes
//! misses the cache at nearly every probe (it was 80 % of a full-range
//! render of the 1 GB benchmark trace).

use crate::lod::RowIntervalsBuilder;
use crate::model::column::{Column, ColumnBuilder, ColumnReader};
use crate::model::gallop::last_holding;
use crate::model::series::{SealBatch, SealedBatch, Series, SeriesBuilder};
use crate::render::{StateInterval, StyleKey};
use crate::time::PixelScale;
use traceloom_base::Time;

/// Sorted change times, however stored.
pub trait Times {
    /// Number of changes.
    fn count(&self) -> usize;
    /// Time of change `k`.
    fn time(&self, k: usize) -> Time;
    /// Number of changes at or before `t`.
    fn count_until(&self, t: Time) -> usize;
}

impl Times for [Time] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn time(&self, k: usize) -> Time {
        self[k]
    }
    fn count_until(&self, t: Time) -> usize {
        self.partition_point(|&x| x <= t)
    }
}

impl Times for Vec<Time> {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn time(&self, k: usize) -> Time {
        self[k]
    }
    fn count_until(&self, t: Time) -> usize {
        self.partition_point(|&x| x <= t)
    }
}

impl Times for Series<Time> {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn time(&self, k: usize) -> Time {
        *self.at(k)
    }
    fn count_until(&self, t: Time) -> usize {
        self.partition_point(|&x| x <= t)
    }
}

impl Times for Column<Time> {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn time(&self, k: usize) -> Time {
        self.at(k)
    }
    fn count_until(&self, t: Time) -> usize {
        self.partition_point(|&x| x <= t)
    }
}

impl Times for ColumnReader<'_, Time> {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn time(&self, k: usize) -> Time {
        self.at(k)
    }
    fn count_until(&self, t: Time) -> usize {
        self.column().partition_point(|&x| x <= t)
    }
}

/// The first change at or after index `from` whose time is `>= t`
/// (`times.count()` if none), galloping forward from `from`.
pub fn first_at_or_after<T: Times + ?Sized>(times: &T, from: usize, t: Time) -> usize {
    let n = times.count();
    if from >= n || times.time(from) >= t {
        return from;
    }
    last_holding(from, n, |k| times.time(k) < t) + 1
}

/// Code meaning "no state here" (the interval is not drawn).
pub const NONE: u32 = u32::MAX;

/// Most intervals looked at to choose the dominant state of one pixel.
const SAMPLE: usize = 24;

/// Most block summaries looked at to choose the dominant state of one
/// pixel: each stands for [`BLOCK`] changes already.
const BLOCK_SAMPLE: usize = 8;

/// Changes per block of a [`Blocks`] summary: a packed block of the
/// change list ([`crate::model::pack::BLOCK`]), so that a summary is
/// computed while its block is still unpacked in the builder.
pub const BLOCK: usize = crate::model::pack::BLOCK;

/// Class of a change that is not drawn, in [`Blocks`] summaries.
pub const NO_CLASS: u8 = u8::MAX;

/// The summary of a change list: for each block `b` of [`BLOCK`] changes
/// whose intervals are all closed (the change after it is known), the time
/// of its first change (`times[b × BLOCK]`) and the class that lasted
/// longest over its intervals ([`NO_CLASS`] if none is drawn; ties: the
/// first seen).
/// The third member is the longest interval of the block in ns
/// ([`u32::MAX`]: that long or longer, or unknown).
pub type Blocks = Series<BlockSummary>;

/// One block of a [`Blocks`] summary. Plain data of a fixed layout: the
/// analysis store keeps summaries as they are in memory and maps them
/// back.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BlockSummary {
    /// Time of the block's first change.
    pub start: Time,
    /// Longest interval of the block, in ns ([`u32::MAX`]: that long or
    /// longer, or unknown).
    pub longest: u32,
    /// Class that lasted longest ([`NO_CLASS`] if none is drawn).
    pub class: u8,
    /// Share of the block's time in drawn classes, in 255ths, rounded up
    /// (any drawn time is at least 1): how much of a column the block
    /// fills is drawn, as an IRQ line busy 1 % of the time is.
    pub drawn: u8,
    /// Zero (explicit padding).
    pub pad: [u8; 2],
}

impl BlockSummary {
    /// A block starting at `start`, of dominant `class`, longest
    /// interval `longest` and share of drawn time `drawn` (255ths).
    pub fn new(start: Time, class: u8, longest: u32, drawn: u8) -> Self {
        BlockSummary {
            start,
            longest,
            class,
            drawn,
            pad: [0; 2],
        }
    }
}

/// `part` of `whole` in 255ths, rounded up: any part is at least 1.
fn share_255(part: u64, whole: u64) -> u8 {
    if whole == 0 {
        return if part > 0 { 255 } else { 0 };
    }
    let s = (u128::from(part) * 255).div_ceil(u128::from(whole));
    s.min(255) as u8
}

/// Builds a [`Blocks`] summary as changes are recorded.
#[derive(Debug, Default)]
pub struct BlocksBuilder {
    blocks: SeriesBuilder<BlockSummary>,
    tally: Vec<(u8, u64)>,
}

impl BlocksBuilder {
    /// Brings the summary up to date with the change list `times`, after
    /// any push or pop; `class()` makes, when a block closes, the function
    /// giving the class of interval `k` ([`NO_CLASS`]: not drawn), which
    /// can keep what it decoded (a [`ColumnBuilder::cursor`]). Costs O(1)
    /// unless a block was closed (or reopened by a pop).
    ///
    /// Inline, and the work kept apart: the kernel pass calls this at
    /// every change of every row, and a block closes once in [`BLOCK`]
    /// calls.
    #[inline]
    pub fn sync<F: FnMut(usize) -> u8>(
        &mut self,
        times: &ColumnBuilder<Time>,
        class: impl FnOnce() -> F,
    ) {
        // Block b is closed once change (b + 1) × BLOCK exists.
        let closed = times.len().saturating_sub(1) / BLOCK;
        if self.blocks.len() != closed {
            self.close_blocks(times, closed, class());
        }
    }

    /// Drops the summaries of blocks no longer closed and adds those of
    /// the blocks closed, up to `closed` blocks.
    #[inline(never)]
    fn close_blocks(
        &mut self,
        times: &ColumnBuilder<Time>,
        closed: usize,
        mut class: impl FnMut(usize) -> u8,
    ) {
        while self.blocks.len() > closed {
            self.blocks.pop();
        }
        let mut copy = [0 as Time; BLOCK + 1];
        while self.blocks.len() < closed {
            let b = self.blocks.len();
            let lo = b * BLOCK;
            // A block and the change after it are unpacked still, but
            // after pops or a bulk append (a record unsealed, a parallel
            // pass's join): then they are decoded, each block once.
            let ts = match times.unpacked(lo, lo + BLOCK + 1) {
                Some(ts) => ts,
                None => {
                    times.read_range(lo, &mut copy);
                    &copy[..]
                }
            };
            let summary = summarize(ts, |i| class(lo + i), &mut self.tally);
            self.blocks.push(summary);
        }
    }

    /// Moves the summary's full chunks to `arena`.
    pub fn spill(&mut self, arena: &std::sync::Arc<crate::model::spill::Arena>) {
        self.blocks.spill(arena);
    }

    /// The first half of sealing (see [`SeriesBuilder::seal_push`]).
    pub(crate) fn seal_push(
        &mut self,
        arena: &std::sync::Arc<crate::model::spill::Arena>,
        batch: &mut SealBatch,
    ) {
        self.blocks.seal_push(arena, batch);
    }

    /// The second half (see [`SeriesBuilder::seal_take`]).
    pub(crate) fn seal_take(&self, written: &mut SealedBatch) -> Blocks {
        self.blocks.seal_take(written)
    }

    /// The summary so far (shares its chunks, see [`SeriesBuilder::snapshot`]).
    pub fn snapshot(&mut self) -> Blocks {
        self.blocks.snapshot()
    }
}

/// Builds a [`Blocks`] summary from changes given one at a time, for a
/// row whose changes are not kept (a CPU row, `cpu_row`): only the open
/// block's times and classes are, until the change after it closes it.
/// Changes at one instant replace the last one's class
/// ([`set_last_class`](Self::set_last_class)), never its time, and are
/// never undone: what a block's summary reads of the change after it, its
/// time, is final once given.
#[derive(Debug, Default)]
pub(crate) struct BlockTally {
    blocks: SeriesBuilder<BlockSummary>,
    /// The open block's changes: times and classes.
    times: Vec<Time>,
    classes: Vec<u8>,
    tally: Vec<(u8, u64)>,
}

impl BlockTally {
    /// A change at `t` of class `class` ([`NO_CLASS`]: not drawn).
    #[inline]
    pub(crate) fn push(&mut self, t: Time, class: u8) {
        if self.times.len() == BLOCK {
            self.close(t);
        }
        self.times.push(t);
        self.classes.push(class);
    }

    /// Closes the open block, `next` being the time of the change after
    /// it.
    #[inline(never)]
    fn close(&mut self, next: Time) {
        let mut ts = [0 as Time; BLOCK + 1];
        ts[..BLOCK].copy_from_slice(&self.times);
        ts[BLOCK] = next;
        let classes = &self.classes;
        let summary = summarize(&ts, |i| classes[i], &mut self.tally);
        self.blocks.push(summary);
        self.times.clear();
        self.classes.clear();
    }

    /// The last change's class becomes `class`.
    #[inline]
    pub(crate) fn set_last_class(&mut self, class: u8) {
        if let Some(c) = self.classes.last_mut() {
            *c = class;
        }
    }

    /// Number of blocks closed: the changes from `closed() × BLOCK` on
    /// are those of the open block.
    pub(crate) fn closed(&self) -> usize {
        self.blocks.len()
    }

    /// Forgets the open block's changes, to be given again from change
    /// `closed() × BLOCK` on.
    pub(crate) fn reopen(&mut self) {
        self.times.clear();
        self.classes.clear();
    }

    /// Moves the summary's full chunks to `arena`.
    pub(crate) fn spill(&mut self, arena: &std::sync::Arc<crate::model::spill::Arena>) {
        self.blocks.spill(arena);
    }

    /// The summary of the blocks closed so far (shares its chunks, see
    /// [`SeriesBuilder::snapshot`]).
    pub(crate) fn snapshot(&mut self) -> Blocks {
        self.blocks.snapshot()
    }
}

/// The summary of one block: `ts` holds its [`BLOCK`] change times and
/// the time of the change after it, `class(i)` is the class of its
/// interval `i`; `tally` is scratch.
#[inline]
fn summarize(
    ts: &[Time],
    mut class: impl FnMut(usize) -> u8,
    tally: &mut Vec<(u8, u64)>,
) -> BlockSummary {
    let ts = &ts[..BLOCK + 1];
    tally.clear();
    let (mut longest, mut drawn, mut whole) = (0u64, 0u64, 0u64);
    for (i, w) in ts.windows(2).enumerate() {
        let d = w[1].abs_diff(w[0]);
        longest = longest.max(d);
        whole = whole.saturating_add(d);
        let c = class(i);
        if c == NO_CLASS {
            continue;
        }
        drawn = drawn.saturating_add(d);
        // Damaged timestamps can make any duration: sums saturate.
        match tally.iter_mut().find(|(x, _)| *x == c) {
            Some((_, t)) => *t = t.saturating_add(d),
            None => tally.push((c, d)),
        }
    }
    let mut best = (NO_CLASS, 0u64);
    for &(c, d) in tally.iter() {
        if best.0 == NO_CLASS || d > best.1 {
            best = (c, d);
        }
    }
    let longest = u32::try_from(longest).unwrap_or(u32::MAX);
    BlockSummary::new(ts[0], best.0, longest, share_255(drawn, whole))
}

/// A summary of `times`, computed at once (for change lists built whole).
pub fn blocks_of(times: &[Time], class: impl FnMut(usize) -> u8) -> Blocks {
    let mut t = ColumnBuilder::new();
    let mut b = BlocksBuilder::default();
    for &x in times {
        t.push(x);
    }
    b.sync(&t, || class);
    b.snapshot()
}

/// [`first_at_or_after`] using the block summary `blocks` of `times` to
/// skip whole blocks (same result).
pub fn first_at_or_after_blocked<T: Times + ?Sized>(
    times: &T,
    blocks: &Blocks,
    from: usize,
    t: Time,
) -> usize {
    let nb = blocks.len();
    let b0 = from / BLOCK + 1;
    if b0 >= nb || blocks[b0].start >= t {
        return first_at_or_after(times, from, t);
    }
    // blocks[b0] starts before t: the answer lies in the last block
    // starting before t.
    let lo = last_holding(b0, nb, |b| blocks[b].start < t);
    first_at_or_after(times, lo * BLOCK, t)
}

/// The first block at or after `from` whose first change is at or after
/// `t` (`blocks.len()` if none), galloping from `from`.
fn first_block_at_or_after(blocks: &Blocks, from: usize, t: Time) -> usize {
    let nb = blocks.len();
    if from >= nb || blocks[from].start >= t {
        return from;
    }
    last_holding(from, nb, |b| blocks[b].start < t) + 1
}

/// Adds to `tally` the duration of each block of `blocks` (a range of
/// block indices) in its dominant state: `block(b)` gives its state code
/// ([`NONE`]: not drawn), start and share of drawn time (255ths),
/// `block_end(b)` its end. Returns the drawn time and the whole time of
/// the blocks looked at, whose ratio is the blocks' drawn share. At most
/// [`BLOCK_SAMPLE`] blocks, evenly spread, are looked at: a pixel column of a
/// full-range render of the 8 GB benchmark trace holds a hundred blocks of
/// a busy row, and tallying them all was the render's main cost. Which
/// blocks are sampled changes only the state a mixed interval is drawn
/// in, never its bounds, nor whether it is drawn: when no sampled block is
/// drawn, every block is looked at.
fn tally_blocks(
    blocks: std::ops::Range<usize>,
    block_end: impl Fn(usize) -> Time,
    block: impl Fn(usize) -> (u32, Time, u8),
    tally: &mut Vec<(u32, u64)>,
) -> DrawnShare {
    let add = |tally: &mut Vec<(u32, u64)>, share: &mut DrawnShare, b: usize| {
        let (c, start, drawn) = block(b);
        let d = block_end(b).abs_diff(start);
        share.add(d.saturating_mul(u64::from(drawn)), d.saturating_mul(255));
        if c == NONE {
            return;
        }
        match tally.iter_mut().find(|(x, _)| *x == c) {
            Some((_, t)) => *t += d,
            None => tally.push((c, d)),
        }
    };
    let mut share = DrawnShare::default();
    let stride = blocks.len().div_ceil(BLOCK_SAMPLE).max(1);
    for b in blocks.clone().step_by(stride) {
        add(tally, &mut share, b);
    }
    if tally.is_empty() && stride > 1 {
        share = DrawnShare::default();
        for b in blocks {
            add(tally, &mut share, b);
        }
    }
    share
}

/// Drawn time and whole time of what a mixed interval stands for (or of
/// a sample of it), in ns × 255 (a summary's share is in 255ths): the
/// interval's `covered` time is its extent times their ratio. Integer
/// sums and one float division per interval: the tally runs for every
/// pixel column of every row (a 128-bit division per block made the
/// full-range render a fifth slower).
#[derive(Debug, Default, Clone, Copy)]
struct DrawnShare {
    drawn: u64,
    whole: u64,
}

impl DrawnShare {
    fn add(&mut self, drawn: u64, whole: u64) {
        self.drawn = self.drawn.saturating_add(drawn);
        self.whole = self.whole.saturating_add(whole);
    }

    /// The drawn part of `extent` (all of it when nothing was measured).
    fn of(self, extent: u64) -> u64 {
        if self.whole == 0 || self.drawn >= self.whole {
            return extent;
        }
        (extent as f64 * (self.drawn as f64 / self.whole as f64)) as u64
    }
}

/// Pushes the intervals `[times[k], times[k+1])` (the last one ends at
/// `end`) that overlap `scale`'s range. `code(k)` is interval k's state
/// code ([`NONE`]: not drawn), `key(code)` its style key, and `detail(k,
/// start, end)` builds an interval lasting at least a pixel (with its
/// label and tooltip). `blocks` is the summary of `times` (it may be
/// empty, or cover only a prefix) and `block_code(class)` the state code
/// of a summary's class.
#[allow(clippy::too_many_arguments)]
pub fn push_steps<T: Times + ?Sized>(
    times: &T,
    end: Time,
    scale: PixelScale,
    out: &mut RowIntervalsBuilder,
    blocks: &Blocks,
    block_code: impl Fn(u8) -> u32,
    code: impl Fn(usize) -> u32,
    key: impl Fn(u32) -> StyleKey,
    detail: impl Fn(usize, Time, Time) -> StateInterval,
) {
    let n = times.count();
    if n == 0 {
        return;
    }
    let range = scale.range;
    let end_of = |k: usize| if k + 1 < n { times.time(k + 1) } else { end };
    // The interval containing the range start (or the first after it).
    let mut i = times.count_until(range.start).saturating_sub(1);
    let mut tally: Vec<(u32, u64)> = Vec::with_capacity(8);
    let nb = blocks.len();
    // Start time of block b + 1 (the end of block b).
    let block_end = |b: usize| {
        if b + 1 < nb {
            blocks[b + 1].start
        } else {
            times.time((b + 1) * BLOCK)
        }
    };
    // State code, start and drawn share of block b, from its summary.
    let block_class = |b: usize| {
        let c = blocks[b].class;
        let code = if c == NO_CLASS { NONE } else { block_code(c) };
        (code, blocks[b].start, blocks[b].drawn)
    };
    // Whether every interval of block b is shorter than a pixel.
    let sub_pixel = |b: usize| {
        let l = blocks[b].longest;
        l != u32::MAX && !scale.at_least_one_pixel(l as u64)
    };
    // Time of change k, from the summary at block boundaries (the walk
    // below never touches the change list itself).
    let time_at = |k: usize| {
        if k.is_multiple_of(BLOCK) && k / BLOCK < nb {
            blocks[k / BLOCK].start
        } else {
            times.time(k)
        }
    };
    'walk: while i < n && time_at(i) <= range.end {
        // Summary walk: from a block boundary, while whole blocks of
        // sub-pixel intervals fill the column (and end less than a pixel
        // after it), draw from the summaries alone.
        if i.is_multiple_of(BLOCK) && i / BLOCK + 2 < nb && sub_pixel(i / BLOCK) {
            let b = i / BLOCK;
            let start = blocks[b].start;
            let p = scale.pixel_of(start.max(range.start));
            if p + 1 < scale.width {
                let next_pixel = scale.time_of_pixel(p + 1);
                // First block starting at or after the next column.
                let bj = first_block_at_or_after(blocks, b + 1, next_pixel);
                if bj < nb
                    && bj >= b + 2
                    && !scale.at_least_one_pixel(blocks[bj].start.abs_diff(next_pixel))
                    && (b..bj).all(sub_pixel)
                {
                    tally.clear();
                    let share = tally_blocks(b..bj, block_end, block_class, &mut tally);
                    if let Some(&(best, _)) = tally.iter().max_by_key(|(_, d)| *d) {
                        let stop = blocks[bj].start;
                        out.push_interval(StateInterval {
                            start,
                            end: stop,
                            state: key(best),
                            label: None,
                            merged: ((bj - b) * BLOCK) as u32,
                            covered: share.of(stop.abs_diff(start)),
                            properties: Default::default(),
                        });
                    }
                    i = bj * BLOCK;
                    continue 'walk;
                }
            }
        }
        let start = times.time(i);
        let stop = end_of(i);
        if stop <= start {
            i += 1;
            continue;
        }
        if scale.at_least_one_pixel(stop.abs_diff(start)) {
            let c = code(i);
            if c != NONE {
                out.push_interval(detail(i, start, stop));
            }
            i += 1;
            continue;
        }
        // Sub-pixel: every change starting in this pixel column at once.
        let p = scale.pixel_of(start.max(range.start));
        let next_pixel = if p + 1 >= scale.width {
            Time::MAX
        } else {
            scale.time_of_pixel(p + 1)
        };
        let j = first_at_or_after_blocked(times, blocks, i, next_pixel);
        if j - i <= 1 {
            let c = code(i);
            if c != NONE {
                out.push_interval(StateInterval::new(start, stop, key(c)));
            }
            i += 1;
            continue;
        }
        // Intervals i..j-1 all start and end inside the column; interval
        // j-1 starts in it too but may run on, so it is pushed on its own.
        let mut last = j - 1;
        tally.clear();
        let share;
        // Whole summarized blocks inside intervals i..last.
        let (fb, lb) = (i.div_ceil(BLOCK), (last / BLOCK).min(nb));
        if lb >= fb + 2 {
            // Dense: run on to the next block boundary when the few
            // intervals up to it are sub-pixel and end within a pixel, so
            // that the summary walk takes over from there.
            let jb = last.div_ceil(BLOCK);
            if jb < nb
                && sub_pixel(jb - 1)
                && !scale.at_least_one_pixel(blocks[jb].start.abs_diff(next_pixel))
            {
                last = jb * BLOCK;
            }
            share = tally_blocks(fb..lb, block_end, block_class, &mut tally);
        } else {
            let stride = (last - i).div_ceil(SAMPLE).max(1);
            let mut sampled = DrawnShare::default();
            let mut k = i;
            while k < last {
                let c = code(k);
                let d = times.time(k + 1).abs_diff(times.time(k));
                if c != NONE {
                    sampled.add(d.saturating_mul(255), d.saturating_mul(255));
                    match tally.iter_mut().find(|(x, _)| *x == c) {
                        Some((_, t)) => *t += d,
                        None => tally.push((c, d)),
                    }
                } else {
                    sampled.add(0, d.saturating_mul(255));
                }
                k += stride;
            }
            share = sampled;
        }
        if let Some(&(best, _)) = tally.iter().max_by_key(|(_, d)| *d) {
            out.push_interval(StateInterval {
                start,
                end: times.time(last),
                state: key(best),
                label: None,
                merged: (last - i) as u32,
                covered: share.of(times.time(last).abs_diff(start)),
                properties: Default::default(),
            });
        }
        i = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceloom_base::TimeRange;

    fn render(
        times: &[Time],
        codes: &[u32],
        end: Time,
        range: TimeRange,
        w: u32,
    ) -> Vec<StateInterval> {
        let scale = PixelScale::new(range, w);
        let mut b = RowIntervalsBuilder::new(scale);
        let keys = ["a", "b", "c"];
        push_steps(
            times,
            end,
            scale,
            &mut b,
            &Blocks::default(),
            |c| c as u32,
            |k| codes[k],
            |c| StyleKey::new(keys[c as usize]),
            |k, s, e| StateInterval::new(s, e, keys[codes[k] as usize]),
        );
        b.finish()
    }

    /// The summary class of each change of `codes` (`NONE`: not drawn).
    fn class_of(codes: &[u32]) -> impl Fn(usize) -> u8 + '_ {
        |k| {
            if codes[k] == NONE {
                NO_CLASS
            } else {
                codes[k] as u8
            }
        }
    }

    fn render_with(
        times: &[Time],
        codes: &[u32],
        end: Time,
        scale: PixelScale,
        blocks: &Blocks,
    ) -> Vec<StateInterval> {
        let mut b = RowIntervalsBuilder::new(scale);
        let keys = ["a", "b", "c", "d"];
        push_steps(
            times,
            end,
            scale,
            &mut b,
            blocks,
            |c| if c == 3 { NONE } else { c as u32 },
            |k| codes[k],
            |c| StyleKey::new(keys[c as usize]),
            |k, s, e| StateInterval::new(s, e, keys[codes[k] as usize]),
        );
        b.finish()
    }

    proptest::proptest! {
        /// The summary changes nothing but the state of mixed intervals,
        /// which is then the dominant of the whole blocks they hold, each
        /// block counted in its own dominant state.
        #[test]
        fn summaries_follow_the_lod_rules(
            steps in proptest::collection::vec((1i64..200, 0u32..4), 1..6000),
            width in 1u32..400,
            a in 0.0f64..1.0,
            b in 0.0f64..1.0,
        ) {
            let mut t = 1_000;
            let (mut times, mut codes) = (Vec::new(), Vec::new());
            for &(d, c) in &steps {
                // Runs of one code, as in real rows.
                let c = if codes.last().is_some_and(|&l| l == c) { (c + 1) % 4 } else { c };
                times.push(t);
                codes.push(if c == 3 { NONE } else { c });
                t += d;
            }
            let end = t;
            let (a, b) = (a.min(b), a.max(b));
            let span = (end - 1_000) as f64;
            let range = TimeRange::new(1_000 + (a * span) as Time, 1_000 + (b * span) as Time);
            let scale = PixelScale::new(range, width);
            let blocks = blocks_of(&times, class_of(&codes));
            let sum = render_with(&times, &codes, end, scale, &blocks);
            check_lod_rules(&times, &codes, end, scale, &sum)?;
            // Without a summary, the same rules hold.
            let raw = render_with(&times, &codes, end, scale, &Blocks::default());
            check_lod_rules(&times, &codes, end, scale, &raw)?;
        }
    }

    /// The level-of-detail rules of a row render `out` of the change list
    /// (`times`, `codes`, closed at `end`): intervals in order, starting
    /// and ending at changes; every interval of at least a pixel drawn
    /// exactly; mixed intervals made only of sub-pixel intervals and
    /// shorter than 3 pixels; every drawn interval inside an output one.
    #[allow(clippy::needless_range_loop)]
    fn check_lod_rules(
        times: &[Time],
        codes: &[u32],
        end: Time,
        scale: PixelScale,
        out: &[StateInterval],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        use proptest::{prop_assert, prop_assert_eq};
        let keys = ["a", "b", "c", "d"];
        let n = times.len();
        let end_of = |k: usize| if k + 1 < n { times[k + 1] } else { end };
        let is_change = |t: Time| t == end || times.binary_search(&t).is_ok();
        for w in out.windows(2) {
            prop_assert!(w[0].end <= w[1].start, "overlap");
        }
        let px3 = |d: u64| d as u128 * scale.width as u128 >= 3 * scale.range.span() as u128;
        // The last column merges everything from its first change on (its
        // intervals end out of sight): the rules are checked before it.
        let last_column = scale.time_of_pixel(scale.width - 1);
        for o in out {
            prop_assert!(is_change(o.start) && is_change(o.end), "{:?}", o);
            if o.is_mixed() && o.end <= last_column {
                prop_assert!(
                    !px3(o.end.abs_diff(o.start)),
                    "mixed interval of 3 px: {:?} {:?} {}",
                    o,
                    scale,
                    out.len()
                );
                let k0 = times.partition_point(|&t| t < o.start);
                let k1 = times.partition_point(|&t| t < o.end);
                for k in k0..k1 {
                    prop_assert!(
                        !scale.at_least_one_pixel(end_of(k).abs_diff(times[k])),
                        "{:?} hides interval {}",
                        o,
                        k
                    );
                }
            }
        }
        for k in 0..n {
            let (s, e) = (times[k], end_of(k));
            if codes[k] == NONE || e <= s || !scale.range.overlaps(s, e) || s >= last_column {
                continue;
            }
            let o = out.partition_point(|o| o.end <= s);
            prop_assert!(
                o < out.len() && out[o].start <= s && out[o].end >= e,
                "interval {} not drawn",
                k
            );
            if scale.at_least_one_pixel(e.abs_diff(s)) {
                prop_assert_eq!(&out[o], &StateInterval::new(s, e, keys[codes[k] as usize]));
            }
        }
        Ok(())
    }

    #[test]
    fn a_drawn_block_among_undrawn_ones_is_drawn() {
        // 40 blocks of undrawn changes but one, which no sample of 8
        // spread over them meets, all in one pixel column.
        let n = 40 * BLOCK;
        let times: Vec<Time> = (0..n as Time).collect();
        let codes: Vec<u32> = (0..n)
            .map(|k| {
                if k / BLOCK == 13 {
                    (k % 2) as u32
                } else {
                    NONE
                }
            })
            .collect();
        let blocks = blocks_of(&times, class_of(&codes));
        let scale = PixelScale::new(TimeRange::new(0, 4 * n as Time), 4);
        let out = render_with(&times, &codes, n as Time, scale, &blocks);
        let start = (13 * BLOCK) as Time;
        assert!(
            out.iter()
                .any(|o| o.start <= start && o.end >= start + BLOCK as Time),
            "{out:?}"
        );
    }

    /// A row drawn 1 % of the time (an IRQ line: 10 ns busy, 990 ns idle)
    /// rendered far out is mixed intervals covering about 1 % of their
    /// extent, from the summaries as from the changes; a row drawn
    /// throughout covers all of it.
    #[test]
    fn mixed_intervals_cover_their_drawn_share() {
        let n = 200 * BLOCK;
        let times: Vec<Time> = (0..n as Time).map(|k| k / 2 * 1_000 + k % 2 * 10).collect();
        let end = times[n - 1] + 990;
        let sparse: Vec<u32> = (0..n).map(|k| if k % 2 == 0 { 0 } else { NONE }).collect();
        let full: Vec<u32> = (0..n).map(|k| (k % 2) as u32).collect();
        let scale = PixelScale::new(TimeRange::new(0, end), 50);
        for (codes, lo, hi) in [(&sparse, 0.005, 0.03), (&full, 1.0, 1.0)] {
            let blocks = blocks_of(&times, class_of(codes));
            for (how, blocks) in [("summaries", blocks), ("changes", Blocks::default())] {
                let out = render_with(&times, codes, end, scale, &blocks);
                let mixed: Vec<_> = out.iter().filter(|o| o.is_mixed()).collect();
                assert!(mixed.len() >= 20, "{how}: {out:?}");
                for o in mixed {
                    let share = o.covered as f64 / o.end.abs_diff(o.start) as f64;
                    assert!(
                        (lo..=hi).contains(&share),
                        "{how}: {o:?} covers {share} of its extent"
                    );
                }
            }
        }
        // Any drawn time is a drawn share of at least 1/255.
        assert_eq!(share_255(1, 1_000_000), 1);
        assert_eq!(share_255(0, 1_000), 0);
        assert_eq!(share_255(1_000, 1_000), 255);
    }

    #[test]
    fn blocked_search_equals_the_plain_one() {
        let times: Vec<Time> = (0..5000).map(|k| k * 10 + (k % 7)).collect();
        let blocks = blocks_of(&times, |_| 0);
        assert_eq!(blocks.len(), (times.len() - 1) / BLOCK);
        for from in (0..times.len()).step_by(37) {
            for t in (0..52_000).step_by(13) {
                assert_eq!(
                    first_at_or_after_blocked(&times[..], &blocks, from, t),
                    first_at_or_after(&times[..], from, t),
                    "{from} {t}"
                );
            }
        }
    }

    #[test]
    fn galloping_finds_the_first_change_at_or_after() {
        let times: Vec<Time> = vec![1, 3, 3, 3, 7, 9, 9, 20, 21, 40];
        for from in 0..=times.len() {
            for t in 0..45 {
                let expect = from + times[from..].partition_point(|&x| x < t);
                assert_eq!(first_at_or_after(&times[..], from, t), expect, "{from} {t}");
            }
        }
        let s = Series::from(times.clone());
        assert_eq!(first_at_or_after(&s, 2, 9), 5);
    }

    #[test]
    fn zoomed_in_is_exact() {
        let iv = render(
            &[0, 10, 20, 30],
            &[0, 1, NONE, 2],
            40,
            TimeRange::new(0, 40),
            40,
        );
        let got: Vec<(Time, Time, &str)> = iv
            .iter()
            .map(|i| (i.start, i.end, i.state.as_str()))
            .collect();
        assert_eq!(got, vec![(0, 10, "a"), (10, 20, "b"), (30, 40, "c")]);
        // A window in the middle starts with the interval containing it.
        let iv = render(
            &[0, 10, 20, 30],
            &[0, 1, NONE, 2],
            40,
            TimeRange::new(15, 35),
            20,
        );
        assert_eq!(iv[0].start, 10);
        assert_eq!(iv.last().unwrap().end, 40);
    }

    #[test]
    fn zoomed_out_is_bounded_and_covers_the_row() {
        // 100k alternating changes of 1 ns over 100 px.
        let n = 100_000;
        let times: Vec<Time> = (0..n).collect();
        let codes: Vec<u32> = (0..n).map(|k| (k % 2) as u32).collect();
        let iv = render(&times, &codes, n, TimeRange::new(0, n), 100);
        assert!(iv.len() <= 3 * 100, "{}", iv.len());
        assert_eq!(iv[0].start, 0);
        assert_eq!(iv.last().unwrap().end, n);
        for w in iv.windows(2) {
            assert!(w[0].end <= w[1].start);
        }
        let merged: u64 = iv.iter().map(|i| i.merged as u64).sum();
        assert!(merged as i64 >= n - 200, "{merged}");
    }
}
