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
//! The kernel pass lists the explicit changes as it goes, classifying
//! each when the next change comes (`CpuSeries`, in `kernel`), and keeps
//! no whole row: its snapshots, the final result and the store read the
//! rows through the threads' rows.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use traceloom_base::{FastMap, Time};
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

    /// Takes back the change listed last.
    pub(crate) fn pop(&mut self) {
        self.times.pop();
        self.threads.pop();
        self.modes.pop();
        self.before.pop();
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
    stretch: RefCell<Option<Stretch>>,
    /// The rows of the threads the stretches read last, each with its
    /// readers' decoded blocks: a CPU runs a few threads in turn, and a
    /// stretch is a few dozen changes, so readers made for each stretch
    /// decoded the same blocks again (most of the time of reading a row
    /// through).
    rows: RefCell<Vec<ThreadReader<'a, T>>>,
    /// Counts the uses of `rows`.
    clock: Cell<u64>,
    /// Where each thread's reader is in `rows`.
    slots: RefCell<FastMap<u32, usize>>,
    /// How many readers `rows` holds at most.
    readers: usize,
    /// The reader replaced next when there are more than [`READERS`].
    hand: Cell<usize>,
}

/// The threads whose rows a [`CpuRow`] keeps readers of (about 1 kB
/// each).
const READERS: usize = 64;

/// Changes a stretch's start is looked for one after another, from where
/// its thread's last stretch ended, before a search.
const PROBES: usize = 8;

/// Explicit change `j` and the changes it implies: changes `lo..hi` of
/// the row, the implied ones being changes `first..` of the thread's row,
/// read by `rows[reader]` (none when the thread is unknown).
struct Stretch {
    j: usize,
    lo: usize,
    hi: usize,
    explicit: CpuChange,
    first: usize,
    reader: Option<usize>,
}

/// A thread's row, read by a [`CpuRow`].
struct ThreadReader<'a, T> {
    thread: u32,
    th: &'a T,
    times: ColumnReader<'a, Time>,
    codes: ColumnReader<'a, u8>,
    /// When the reader was used last (the least recent is replaced).
    used: u64,
    /// The change after the last one the stretch read last implies.
    next: usize,
}

impl<T: ThreadRow> ThreadReader<'_, T> {
    /// The CPU mode an implied change of state code `code` shows (the
    /// thread runs there; a store that lies may say otherwise: unknown).
    #[inline]
    fn mode(&self, code: u8) -> u8 {
        self.th
            .running_mode(code)
            .unwrap_or(CpuMode::Unknown.code())
    }
}

/// The explicit change whose stretch holds change `k` of the row, `before`
/// giving the changes before each explicit one.
fn stretch_holding(before: &ColumnReader<'_, u64>, k: usize) -> usize {
    before
        .column()
        .partition_point(|&b| b as usize <= k)
        .saturating_sub(1)
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
            rows: RefCell::new(Vec::new()),
            clock: Cell::new(0),
            slots: RefCell::new(FastMap::default()),
            readers: READERS,
            hand: Cell::new(0),
        }
    }

    /// The row of `c` for one read through from a change on
    /// ([`for_each_from`](Self::for_each_from)), keeping the readers of up
    /// to `readers` threads rather than [`READERS`]: a CPU runs thousands
    /// of threads over a trace, and a reader replaced decodes its thread's
    /// blocks again when the thread runs next.
    pub fn scanning(c: &'a CpuRecord, threads: &'a [Arc<T>], readers: usize) -> Self {
        CpuRow {
            readers: readers.max(1),
            ..CpuRow::new(c, threads)
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
            // Read in order, the next stretch is the next explicit
            // change's: no search.
            let n = before.len();
            let j = match cache.as_ref() {
                Some(s)
                    if s.hi == k
                        && s.j + 1 < n
                        && (s.j + 2 == n || before.at(s.j + 2) as usize > k) =>
                {
                    s.j + 1
                }
                _ => stretch_holding(before, k),
            };
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
        let rows = self.rows.borrow();
        match s.reader.map(|x| &rows[x]) {
            Some(row) if s.first + i - 1 < row.times.len() => {
                let e = s.first + i - 1;
                (row.times.at(e), r, row.mode(row.codes.at(e)))
            }
            _ => (t, r, m),
        }
    }

    /// Calls `f` with each change of the row from change `from` on, in
    /// order: [`at`](Self::at) of each, without its look-ups.
    pub fn for_each_from(&self, from: usize, mut f: impl FnMut(CpuChange)) {
        let Some(before) = &self.before else {
            for k in from..self.len {
                f((self.times.at(k), self.runs.at(k), self.modes.at(k)));
            }
            return;
        };
        if from >= self.len {
            return;
        }
        let mut j = stretch_holding(before, from);
        let mut k = from;
        while k < self.len && j < before.len() {
            let s = self.stretch(j, before);
            let rows = self.rows.borrow();
            let row = s.reader.map(|x| &rows[x]);
            let (t, r, m) = s.explicit;
            if k <= s.lo {
                f(s.explicit);
            }
            // Changes `s.first + i - 1` of the thread's row, a block at a
            // time; past its end (a store that lies), as `at` reads them.
            let mut i = k.max(s.lo + 1) - s.lo;
            let end = s.hi - s.lo;
            if let Some(row) = row {
                let n = row.times.len();
                while i < end && s.first + i - 1 < n {
                    let e = s.first + i - 1;
                    let taken = row.times.run_from(e, |ts| {
                        row.codes.run_from(e, |cs| {
                            let take = ts.len().min(cs.len()).min(end - i);
                            for (&time, &code) in ts[..take].iter().zip(&cs[..take]) {
                                f((time, r, row.mode(code)));
                            }
                            take
                        })
                    });
                    i += taken;
                }
            }
            for _ in i..end {
                f((t, r, m));
            }
            k = s.hi;
            j += 1;
        }
    }

    /// The stretch of explicit change `j`.
    fn stretch(&self, j: usize, before: &ColumnReader<'a, u64>) -> Stretch {
        let n = before.len();
        let lo = (before.at(j) as usize).min(self.len);
        let hi = if j + 1 < n {
            before.at(j + 1) as usize
        } else {
            self.len
        }
        .clamp(lo + 1, self.len.max(lo + 1));
        let explicit = (self.times.at(j), self.runs.at(j), self.modes.at(j));
        let reader = self.reader(explicit.1);
        let first = reader.map_or(0, |x| {
            let rows = self.rows.borrow();
            let row = &rows[x];
            let after = explicit.0.saturating_add(1);
            // The search starts where the thread's last stretch ended when
            // that is before the answer: a CPU's stretches read in order.
            let n = row.times.len();
            let mut from = match row.next {
                0 => 0,
                h if h <= n && row.times.at(h - 1) < after => h,
                _ => 0,
            };
            // A few steps read on first (the blocks they decode are those
            // the stretch reads), then a search.
            for _ in 0..PROBES {
                if from == n || row.times.at(from) >= after {
                    return from;
                }
                from += 1;
            }
            row.times.first_at_or_after(from, after).0
        });
        if let Some(x) = reader {
            // Where the next stretch of this thread will likely start.
            let mut rows = self.rows.borrow_mut();
            rows[x].next = first + (hi - lo - 1);
        }
        Stretch {
            j,
            lo,
            hi,
            explicit,
            first,
            reader,
        }
    }

    /// The index in `rows` of the reader of thread record `thread`, made
    /// when missing (`None`: no such record).
    fn reader(&self, thread: u32) -> Option<usize> {
        let th = self.threads.get(thread as usize)?;
        let mut rows = self.rows.borrow_mut();
        let now = self.clock.get() + 1;
        self.clock.set(now);
        let mut slots = self.slots.borrow_mut();
        if let Some(&x) = slots.get(&thread) {
            rows[x].used = now;
            return Some(x);
        }
        let made = ThreadReader {
            thread,
            th: &**th,
            times: th.times().reader(),
            codes: th.codes().reader(),
            used: now,
            next: 0,
        };
        if rows.len() < self.readers {
            rows.push(made);
            slots.insert(thread, rows.len() - 1);
            return Some(rows.len() - 1);
        }
        // A few readers: the least recently used is replaced. Many (a
        // read through): each in turn, the oldest made first, with no
        // search over them all at each thread met.
        let oldest = if rows.len() <= READERS {
            (0..rows.len()).min_by_key(|&x| rows[x].used)?
        } else {
            let h = self.hand.get();
            self.hand.set((h + 1) % rows.len());
            h % rows.len()
        };
        slots.remove(&rows[oldest].thread);
        slots.insert(thread, oldest);
        rows[oldest] = made;
        Some(oldest)
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
        let rows = self.rows.borrow();
        let implied = s.reader.map_or(0, |x| {
            let (e, _) = rows[x]
                .times
                .first_at_or_after(s.first, t.saturating_add(1));
            e - s.first
        });
        (s.lo + 1 + implied).min(s.hi)
    }
}
