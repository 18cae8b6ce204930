//! A CPU row kept as the changes its threads' rows do not imply.
//!
//! A CPU's mode is its running thread's (`CpuMode::of`), and it changes
//! at nearly every event of a kernel trace (system calls): recorded whole,
//! the CPU rows repeat what the thread rows hold (155 of the 1 GB
//! generated trace's 396 MiB store). Change `k` of a CPU row is *implied*
//! when the thread it runs is the one change `k − 1` ran, and that
//! thread's next change after change `k − 1` is at change `k`'s time, to
//! running in the mode change `k` shows. The other changes are *explicit*
//! (switches, stretches without a known thread, an exited thread's exit
//! path, a thread changed from another CPU). So after an explicit change
//! at `t` running thread `r`, the implied changes are `r`'s next changes
//! after `t`, consecutive: a record keeps its explicit changes and, for
//! each, how many changes of the row come before it ([`Implied`]), and
//! [`CpuRow`] reads change `k` of the row in place, in O(1) once its
//! stretch is found.
//!
//! The kernel pass records each CPU row whole while it runs (its
//! snapshots are drawn from them) and classifies each change as the next
//! comes (`CpuSeries`, in `kernel`); the final result lists only the
//! explicit changes, and so does the store. [`explicit_of`] classifies a
//! whole row afresh, for a row whose list a parallel pass's join could
//! not keep.

use std::cell::RefCell;
use std::sync::Arc;

use traceloom_base::Time;
use traceloom_engine::state::CpuMode;

use super::column::{Column, ColumnBuilder, ColumnReader};
use super::spill::Arena;
use super::steps::{Blocks, Times};

/// The thread record of a CPU row that runs no known thread.
pub const NO_THREAD: u32 = u32::MAX;

/// What one CPU ran over time.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuRecord {
    /// Trace index.
    pub trace: u32,
    /// CPU number.
    pub cpu: u32,
    /// Change times, increasing: of every change of the row, or of its
    /// explicit ones when [`implied`](Self::implied) is set.
    pub times: Column<Time>,
    /// Thread record running from each change on ([`NO_THREAD`]: unknown).
    pub threads: Column<u32>,
    /// CPU mode code from each change on (index in
    /// [`CPU_MODES`](super::kernel::CPU_MODES)).
    pub modes: Column<u8>,
    /// Set when only the explicit changes are listed.
    pub implied: Option<Implied>,
    /// Summary of the whole row's changes (class: the mode code,
    /// [`NO_CLASS`](super::steps::NO_CLASS) while neither the thread nor
    /// the mode is known).
    pub blocks: Blocks,
}

impl CpuRecord {
    /// The row, read in place; `threads`: the thread records its changes
    /// name.
    pub fn row<'a, T: ThreadRow>(&'a self, threads: &'a [Arc<T>]) -> CpuRow<'a, T> {
        CpuRow::new(self, threads)
    }

    /// Bytes of heap its lists hold.
    pub fn heap_bytes(&self) -> usize {
        self.times.heap_bytes()
            + self.threads.heap_bytes()
            + self.modes.heap_bytes()
            + self.implied.as_ref().map_or(0, |i| i.before.heap_bytes())
            + self.blocks.heap_bytes()
    }
}

/// A thread record's row, as a CPU row reads it.
pub trait ThreadRow {
    /// Change times, increasing.
    fn times(&self) -> &Column<Time>;
    /// State code from each change on.
    fn codes(&self) -> &Column<u8>;
    /// The CPU mode code state code `code` shows on the thread's CPU,
    /// when the thread is running (`None` otherwise).
    fn running_mode(&self, code: u8) -> Option<u8>;
}

/// A change of a CPU row: its time, the thread record running from then
/// on ([`NO_THREAD`]: none known) and the CPU mode (an index in
/// [`CPU_MODES`](super::kernel::CPU_MODES)).
pub type CpuChange = (Time, u32, u8);

/// What a CPU record that lists only its explicit changes keeps besides
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct Implied {
    /// For each explicit change, the number of changes of the whole row
    /// before it (increasing).
    pub before: Column<u64>,
    /// Number of changes of the whole row.
    pub len: u64,
}

/// The explicit changes of a CPU row as they are listed, and the number
/// of changes of the row before each.
#[derive(Debug, Default)]
pub(crate) struct ExplicitLists {
    pub(crate) times: ColumnBuilder<Time>,
    pub(crate) threads: ColumnBuilder<u32>,
    pub(crate) modes: ColumnBuilder<u8>,
    pub(crate) before: ColumnBuilder<u64>,
}

impl ExplicitLists {
    /// Lists change `k` of the row, `c`.
    pub(crate) fn push(&mut self, k: usize, c: CpuChange) {
        self.times.push(c.0);
        self.threads.push(c.1);
        self.modes.push(c.2);
        self.before.push(k as u64);
    }

    /// Moves the full chunks to `arena`.
    pub(crate) fn spill(&mut self, arena: &Arc<Arena>) {
        self.times.spill(arena);
        self.threads.spill(arena);
        self.modes.spill(arena);
        self.before.spill(arena);
    }

    /// The record of CPU `cpu` of trace `trace` they list so far, its row
    /// having `len` changes summarized by `blocks`.
    pub(crate) fn record(&mut self, trace: u32, cpu: u32, len: usize, blocks: Blocks) -> CpuRecord {
        CpuRecord {
            trace,
            cpu,
            times: self.times.snapshot(),
            threads: self.threads.snapshot(),
            modes: self.modes.snapshot(),
            implied: Some(Implied {
                before: self.before.snapshot(),
                len: len as u64,
            }),
            blocks,
        }
    }
}

/// The threads whose rows [`explicit_of`] keeps reading on (about 1 kB
/// each).
const CURSORS: usize = 16;

/// The explicit changes listed every so many, then moved to the spill
/// file (as the pass does its own lists).
const SPILL_EVERY: usize = 262_144;

/// CPU record `c`, which lists its whole row, listing only its explicit
/// changes: the pass lists them as it goes, and this is for a row whose
/// list it could not keep (see `CpuSeries::stale`); what it lists is
/// spilled to `arena` as it grows.
pub(crate) fn explicit_of<T: ThreadRow>(
    c: &CpuRecord,
    threads: &[Arc<T>],
    arena: Option<&Arc<Arena>>,
) -> CpuRecord {
    let mut out = ExplicitLists::default();
    // The rows of the threads the CPU ran last, each read on from where
    // it was left (most recent first): a CPU runs a few threads in turn,
    // and a row read afresh at each stretch was searched from its start
    // and its blocks decoded again, the bulk of this pass's time.
    let mut cursors: Vec<ThreadCursor<'_, T>> = Vec::new();
    let mut prev: Option<CpuChange> = None;
    let blocks = c
        .times
        .chunks()
        .zip(c.threads.chunks())
        .zip(c.modes.chunks());
    let changes = blocks.flat_map(|((t, r), m)| {
        let n = t.len().min(r.len()).min(m.len());
        (0..n).map(move |i| (t[i], r[i], m[i]))
    });
    for (k, (t, r, m)) in changes.enumerate() {
        let implied = match prev {
            Some((pt, pr, _)) if pr == r && r != NO_THREAD => match threads.get(r as usize) {
                Some(th) => {
                    match cursors.iter().position(|s| s.thread == r) {
                        Some(0) => {}
                        Some(i) => cursors[..=i].rotate_right(1),
                        None => {
                            cursors.truncate(CURSORS - 1);
                            cursors.insert(0, ThreadCursor::new(r, th));
                        }
                    }
                    cursors[0].next_after(pt) == Some((t, m))
                }
                None => false,
            },
            _ => false,
        };
        if !implied {
            out.push(k, (t, r, m));
            if let (Some(a), true) = (arena, out.times.len().is_multiple_of(SPILL_EVERY)) {
                out.spill(a);
            }
        }
        prev = Some((t, r, m));
    }
    if let Some(a) = arena {
        out.spill(a);
    }
    out.record(c.trace, c.cpu, c.times.len(), c.blocks.clone())
}

/// A thread's row, read forward: its changes after a time.
struct ThreadCursor<'a, T> {
    thread: u32,
    th: &'a T,
    /// Its changes from `base` on, a block at a time.
    base: usize,
    times: Vec<Time>,
    codes: Vec<u8>,
    /// Index of the first change after the time asked last (a forward
    /// search starts there).
    next: usize,
}

impl<'a, T: ThreadRow> ThreadCursor<'a, T> {
    fn new(thread: u32, th: &'a T) -> Self {
        ThreadCursor {
            thread,
            th,
            base: 0,
            times: Vec::new(),
            codes: Vec::new(),
            next: 0,
        }
    }

    /// Time of change `k` (`k` < the row's length).
    #[inline]
    fn time(&mut self, k: usize) -> Time {
        if k < self.base || k - self.base >= self.times.len() {
            self.base = self.th.times().block_of(k, &mut self.times);
            self.th.codes().block_of(k, &mut self.codes);
        }
        self.times[k - self.base]
    }

    /// The thread's first change after `t` (at or after the last time
    /// asked): its time and the CPU mode it shows, when running.
    fn next_after(&mut self, t: Time) -> Option<(Time, u8)> {
        // Through a stretch the answer is the change after the last one:
        // read on in order, each block decoded once. A search only when
        // the thread changed more than a few times elsewhere since.
        let n = self.th.times().len();
        let mut steps = 0;
        while self.next < n && self.time(self.next) <= t {
            self.next += 1;
            steps += 1;
            if steps == 4 {
                let rest = self.th.times().partition_point(|&x| x <= t);
                self.next = self.next.max(rest);
                break;
            }
        }
        let e = self.next;
        if e >= n {
            return None;
        }
        let time = self.time(e);
        Some((time, self.th.running_mode(self.codes[e - self.base])?))
    }
}

/// A CPU row read in place: change `k`, its time, and the number of
/// changes up to a time ([`Times`], what a render walks), whether the
/// record lists the whole row or only its explicit changes.
pub struct CpuRow<'a, T> {
    threads: &'a [Arc<T>],
    times: ColumnReader<'a, Time>,
    runs: ColumnReader<'a, u32>,
    modes: ColumnReader<'a, u8>,
    /// The changes before each listed one, when only explicit ones are.
    before: Option<ColumnReader<'a, u64>>,
    len: usize,
    /// The stretch read last.
    stretch: RefCell<Option<Stretch<'a, T>>>,
}

/// Explicit change `j` and the changes it implies: changes `lo..hi` of
/// the row, the implied ones being changes `first..` of `thread`'s row.
struct Stretch<'a, T> {
    lo: usize,
    hi: usize,
    explicit: CpuChange,
    th: Option<&'a T>,
    first: usize,
    times: Option<ColumnReader<'a, Time>>,
    codes: Option<ColumnReader<'a, u8>>,
}

impl<'a, T: ThreadRow> CpuRow<'a, T> {
    /// The row of `c`, whose threads are `threads`.
    pub fn new(c: &'a CpuRecord, threads: &'a [Arc<T>]) -> Self {
        CpuRow {
            threads,
            times: c.times.reader(),
            runs: c.threads.reader(),
            modes: c.modes.reader(),
            before: c.implied.as_ref().map(|i| i.before.reader()),
            len: match &c.implied {
                Some(i) => usize::try_from(i.len).unwrap_or(usize::MAX),
                None => c.times.len(),
            },
            stretch: RefCell::new(None),
        }
    }

    /// Number of changes of the row.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the row has no change.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Change `k` of the row (`k < len()`).
    pub fn at(&self, k: usize) -> CpuChange {
        let Some(before) = &self.before else {
            return (self.times.at(k), self.runs.at(k), self.modes.at(k));
        };
        let mut cache = self.stretch.borrow_mut();
        if !cache.as_ref().is_some_and(|s| s.lo <= k && k < s.hi) {
            let col = before.column();
            let j = col.partition_point(|&b| b as usize <= k).saturating_sub(1);
            *cache = Some(self.stretch(j, before));
        }
        let s = cache.as_ref().expect("just set");
        let i = k - s.lo;
        if i == 0 {
            return s.explicit;
        }
        let (t, r, m) = s.explicit;
        // A store that lies (its checksums hold) must not panic a render:
        // past the thread's row, the explicit change's values.
        match (s.th, &s.times, &s.codes) {
            (Some(th), Some(times), Some(codes)) if s.first + i - 1 < times.len() => {
                let e = s.first + i - 1;
                let mode = th
                    .running_mode(codes.at(e))
                    .unwrap_or(CpuMode::Unknown.code());
                (times.at(e), r, mode)
            }
            _ => (t, r, m),
        }
    }

    /// The stretch of explicit change `j`.
    fn stretch(&self, j: usize, before: &ColumnReader<'a, u64>) -> Stretch<'a, T> {
        let n = before.len();
        let lo = (before.at(j) as usize).min(self.len);
        let hi = if j + 1 < n {
            before.at(j + 1) as usize
        } else {
            self.len
        }
        .clamp(lo + 1, self.len.max(lo + 1));
        let explicit = (self.times.at(j), self.runs.at(j), self.modes.at(j));
        let th = self.threads.get(explicit.1 as usize).map(|t| &**t);
        let times = th.map(|t| t.times().reader());
        let first = times.as_ref().map_or(0, |r| {
            r.first_at_or_after(0, explicit.0.saturating_add(1)).0
        });
        Stretch {
            lo,
            hi,
            explicit,
            th,
            first,
            times,
            codes: th.map(|t| t.codes().reader()),
        }
    }
}

impl<T: ThreadRow> Times for CpuRow<'_, T> {
    fn count(&self) -> usize {
        self.len
    }

    fn time(&self, k: usize) -> Time {
        self.at(k).0
    }

    fn count_until(&self, t: Time) -> usize {
        let listed = self.times.column().partition_point(|&x| x <= t);
        let Some(before) = &self.before else {
            return listed;
        };
        let Some(j) = listed.checked_sub(1) else {
            return 0;
        };
        let mut cache = self.stretch.borrow_mut();
        let lo = (before.at(j) as usize).min(self.len);
        if cache.as_ref().is_none_or(|s| s.lo != lo) {
            *cache = Some(self.stretch(j, before));
        }
        let s = cache.as_ref().expect("just set");
        let implied = s.times.as_ref().map_or(0, |times| {
            let (e, _) = times.first_at_or_after(s.first, t.saturating_add(1));
            e - s.first
        });
        (s.lo + 1 + implied).min(s.hi)
    }
}
