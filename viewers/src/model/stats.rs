//! Statistics: per trace, CPU, process, thread and execution mode, the
//! events counted per event name and the CPU time spent (LTTV's
//! statistics viewer).
//!
//! A [`StatsCollector`] runs in a HIGH-priority hook, so it sees the state
//! *before* each event: the time since the previous event of the same CPU
//! is charged to what that CPU was doing, and the event itself is counted
//! for the thread and mode it interrupted or ran in. Per CPU the charged
//! times add up to the accounted duration exactly.
//!
//! The whole-trace statistics come with the [`kernel`](super::kernel)
//! pass (LOW priority, cached); [`range_request`] computes them for a
//! selected range at HIGH priority, in one pass.
//!
//! # Parts
//!
//! A range can also be split at state checkpoints into parts read each by
//! its own scheduler, on its own thread ([`StatisticsJob`],
//! [`Session::start_statistics`]): a collector does not need to know what
//! came before its first event. It charges nothing for the time before
//! the first event of each CPU and remembers that event's time and cell
//! instead; [`merge`] folds the parts in order and charges that time from
//! the CPU's last event in the previous parts (or the range's start), then
//! the time after each CPU's last event, to what runs on it at the end.
//! That is exactly what one pass does, so the merged statistics equal the
//! single pass's (the tests compare them); a single pass is the merge of
//! one part.

use crate::varint::{put as put_varint, unzigzag, zigzag};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{mpsc, Arc};
use traceloom_base::Time;

use traceloom_ctf::Event;
use traceloom_engine::request::{Budget, OwnerId, RequestId, SourceEvent, Start};
use traceloom_engine::source::{CtfCurrent, CtfPosition};
use traceloom_engine::state::{CpuMap, CpuMode, TraceState, TracesetState};
use traceloom_hooks::{Flow, Priority};

use super::session::{part_scheduler, KernelRequest, Payload, Session};
use super::stats_tree::CellTree;
use crate::render::StatisticsRender;

/// CPU number used for events that carry none.
pub const NO_CPU: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct CellKey {
    trace: u32,
    cpu: u32,
    pid: i64,
    tid: i64,
    mode: CpuMode,
}

/// What an event touches of its cell (the key is kept apart, in
/// `StatsCollector::keys`: one cache line per event, not two).
#[derive(Debug, Clone)]
struct Cell {
    name: Arc<str>,
    time: u64,
    events: ClassCounts,
}

/// No cell cached.
const NO_CELL: u32 = u32::MAX;

/// Most classes a cell counts as pairs before it counts by index.
const SPARSE_CLASSES: usize = 8;

/// A cell's events per dense class index (see
/// `StatsCollector::class_slot`). Most cells see a few of the trace's
/// classes (a short-lived thread in one mode on one CPU), and a trace of
/// many such threads has many cells: a vector indexed by class, as long
/// as the highest index seen, took ~1.6 KB per thread record on the
/// generated kernel trace. A cell counts (class, events) pairs until it
/// has seen [`SPARSE_CLASSES`] classes, then by index (a search through
/// many pairs per event would slow the busy threads' cells down).
#[derive(Debug, Clone)]
enum ClassCounts {
    /// Pairs, in the order the classes were first seen.
    Sparse(Vec<(u32, u64)>),
    /// Events by class index.
    Dense(Vec<u64>),
}

impl ClassCounts {
    /// Counts one event of class `ci`.
    #[inline]
    fn add(&mut self, ci: usize) {
        match self {
            ClassCounts::Dense(v) => match v.get_mut(ci) {
                Some(n) => *n += 1,
                None => {
                    v.resize(ci + 1, 0);
                    v[ci] = 1;
                }
            },
            ClassCounts::Sparse(pairs) => {
                if let Some((_, n)) = pairs.iter_mut().find(|(c, _)| *c as usize == ci) {
                    *n += 1;
                } else if pairs.len() < SPARSE_CLASSES {
                    pairs.push((ci as u32, 1));
                } else {
                    let top = pairs.iter().map(|&(c, _)| c as usize).max().unwrap_or(0);
                    let mut v = vec![0; top.max(ci) + 1];
                    for &(c, n) in pairs.iter() {
                        v[c as usize] = n;
                    }
                    v[ci] += 1;
                    *self = ClassCounts::Dense(v);
                }
            }
        }
    }

    /// The (class index, events) counted, none of them zero.
    fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (pairs, dense) = match self {
            ClassCounts::Sparse(p) => (&p[..], &[][..]),
            ClassCounts::Dense(v) => (&[][..], &v[..]),
        };
        pairs
            .iter()
            .map(|&(c, n)| (c as usize, n))
            .chain(dense.iter().copied().enumerate().filter(|&(_, n)| n > 0))
    }
}

/// A thread (or nothing known, pid and tid -1) on one CPU: its cells per
/// mode are in `StatsCollector::runs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RunKey {
    trace: u32,
    cpu: u32,
    pid: i64,
    tid: i64,
}

/// What a CPU was last seen running, and the cells of that thread per
/// mode (a copy of its entry in `StatsCollector::runs`): the mode changes
/// at every system call, the thread far less often, so most events find
/// their cell here, and a thread coming back to a CPU finds all its cells
/// with one hash lookup.
#[derive(Debug, Clone, Copy)]
struct CpuCache {
    thread: Option<(i64, i64)>,
    run: u32,
    cells: [u32; 7],
}

/// The accounting of one CPU (or of the events without one, [`NO_CPU`]).
#[derive(Debug, Clone, Copy)]
struct CpuAcc {
    /// Accounted: known to the state at the first event, or with events.
    present: bool,
    /// Time of the last event seen on the CPU.
    last: Option<Time>,
    /// Time and cell of the first event seen on the CPU: the time before
    /// it is charged by [`merge`], which knows what came before.
    first: Option<(Time, u32)>,
    cache: CpuCache,
}

const ABSENT: CpuAcc = CpuAcc {
    present: false,
    last: None,
    first: None,
    cache: CpuCache {
        thread: None,
        run: NO_CELL,
        cells: [NO_CELL; 7],
    },
};

use super::class_slots::ClassSlots;
use traceloom_base::FastMap;

/// Accumulates statistics from events seen with the state before them.
///
/// Per event: one lookup of the running thread (in the state), the cell
/// found in the CPU's cache (one hash lookup when the CPU changed threads,
/// one more the first time a thread runs in a mode on a CPU), the event
/// class counted by a dense index found in a direct table (the class's
/// stream class compared, its event id indexed); no allocation, no
/// hashing and no string is touched.
#[derive(Debug, Clone)]
pub struct StatsCollector {
    begin: Option<Time>,
    end: Option<Time>,
    cells: Vec<Cell>,
    /// The key of each cell.
    keys: Vec<CellKey>,
    index: FastMap<CellKey, u32>,
    /// Cells free for reuse: their threads exited, and their counts went
    /// to `sealed` ([`thread_gone`](Self::thread_gone)).
    free: Vec<u32>,
    /// The cells of threads that exited, encoded.
    sealed: SealedCells,
    /// Cells that are a CPU's first (`CpuAcc::first`): never sealed, as
    /// [`merge`] charges them by index.
    firsts: Vec<u32>,
    /// Threads per CPU, and their cells per mode slot.
    run_index: FastMap<RunKey, u32>,
    runs: Vec<[u32; 7]>,
    /// Entries of `runs` free for reuse.
    free_runs: Vec<u32>,
    /// Per trace, per CPU number ([`NO_CPU`] for events without one):
    /// sparse, so that a damaged trace's huge `cpu_id` costs one entry.
    cpus: Vec<CpuMap<CpuAcc>>,
    /// The dense index of each event class seen.
    class_slots: ClassSlots,
    class_names: Vec<Arc<str>>,
    last_time: Option<Time>,
    events: u64,
}

/// The mode of each slot of [`mode_slot`].
const SLOT_MODES: [CpuMode; 7] = CpuMode::ALL;

fn mode_slot(m: CpuMode) -> usize {
    m.code() as usize
}

fn key_of(ts: Option<&TraceState>, trace: u32, cpu: u32) -> (CellKey, Arc<str>) {
    let running = if cpu == NO_CPU {
        None
    } else {
        ts.and_then(|t| t.running_on(cpu))
    };
    match running {
        Some(th) => (
            CellKey {
                trace,
                cpu,
                pid: th.pid,
                tid: th.tid,
                mode: th.cpu_mode(),
            },
            th.name.clone(),
        ),
        None => (
            CellKey {
                trace,
                cpu,
                pid: -1,
                tid: -1,
                mode: CpuMode::Unknown,
            },
            Arc::from("(unknown)"),
        ),
    }
}

/// The accounting of `cpu` in `trace`, created absent when missing.
#[inline]
fn acc_mut(cpus: &mut Vec<CpuMap<CpuAcc>>, trace: usize, cpu: u32) -> &mut CpuAcc {
    // Inline when it exists (every event but a CPU's first), the rest
    // apart.
    if cpus.get(trace).is_some_and(|m| m.get(cpu).is_some()) {
        return cpus[trace].get_mut(cpu).expect("just seen");
    }
    new_acc(cpus, trace, cpu)
}

/// [`acc_mut`] of a CPU not accounted yet.
#[cold]
#[inline(never)]
fn new_acc(cpus: &mut Vec<CpuMap<CpuAcc>>, trace: usize, cpu: u32) -> &mut CpuAcc {
    if cpus.len() <= trace {
        cpus.resize_with(trace + 1, CpuMap::new);
    }
    cpus[trace].get_or_insert_with(cpu, || ABSENT)
}

/// The cell of `key`, created with `name` when missing; a known cell takes
/// `name` when it is not empty (the latest name seen wins).
fn cell_index(
    cells: &mut Vec<Cell>,
    keys: &mut Vec<CellKey>,
    index: &mut FastMap<CellKey, u32>,
    free: &mut Vec<u32>,
    key: CellKey,
    name: &Arc<str>,
) -> u32 {
    if let Some(&i) = index.get(&key) {
        let c = &mut cells[i as usize];
        if !name.is_empty() && !Arc::ptr_eq(&c.name, name) {
            c.name = name.clone();
        }
        return i;
    }
    let cell = Cell {
        name: name.clone(),
        time: 0,
        events: ClassCounts::Sparse(Vec::new()),
    };
    let i = match free.pop() {
        Some(i) => {
            keys[i as usize] = key;
            cells[i as usize] = cell;
            i
        }
        None => {
            keys.push(key);
            cells.push(cell);
            cells.len() as u32 - 1
        }
    };
    index.insert(key, i);
    i
}

impl StatsCollector {
    /// A collector charging time from `begin` (the first event's time if
    /// `None`) to `end` (the last event's time if `None`).
    pub fn new(begin: Option<Time>, end: Option<Time>) -> Self {
        StatsCollector {
            begin,
            end,
            cells: Vec::new(),
            keys: Vec::new(),
            index: FastMap::default(),
            free: Vec::new(),
            sealed: SealedCells::default(),
            firsts: Vec::new(),
            run_index: FastMap::default(),
            runs: Vec::new(),
            free_runs: Vec::new(),
            cpus: Vec::new(),
            class_slots: ClassSlots::default(),
            class_names: Vec::new(),
            last_time: None,
            events: 0,
        }
    }

    /// The dense index of event class `class` (of event `e`).
    #[inline]
    fn class_slot(&mut self, class: u64, e: &Event<'_>) -> usize {
        match self.class_slots.get(class) {
            Some(c) => c as usize,
            None => self.new_class(class, e),
        }
    }

    #[cold]
    fn new_class(&mut self, class: u64, e: &Event<'_>) -> usize {
        let c = self.class_names.len();
        self.class_names.push(Arc::from(e.name()));
        self.class_slots.insert(class, c as u32);
        c
    }

    /// Time of the last event accounted (`None` before the first): how
    /// far a range's read has come.
    pub fn last_time(&self) -> Option<Time> {
        self.last_time
    }

    /// Accounts `ev`, seen with `state` as it was before the event.
    pub fn on_event(&mut self, ev: &CtfCurrent, state: &TracesetState) {
        let Some(e) = ev.event() else { return };
        let t = ev.time();
        let begin = *self.begin.get_or_insert(t);
        if t < begin || self.end.is_some_and(|end| t > end) {
            return;
        }
        if self.last_time.is_none() {
            // Every CPU the state knows is accounted from now on, also
            // those without events in the range.
            for (ti, ts) in state.traces.iter().enumerate() {
                for (cpu, _) in ts.cpus.iter() {
                    acc_mut(&mut self.cpus, ti, cpu).present = true;
                }
            }
        }
        self.last_time = Some(t);
        self.events += 1;
        let trace = e.trace().index;
        // A number no machine has (damage) is no CPU: the state keeps such
        // events on CPU u32::MAX, which is `NO_CPU`.
        let cpu = e
            .cpu_id()
            .map_or(NO_CPU, |c| u32::try_from(c).unwrap_or(NO_CPU));
        let ci = self.class_slot(ev.class_id(), &e);
        let ts = state.traces.get(trace);
        let running = if cpu == NO_CPU {
            None
        } else {
            ts.and_then(|t| t.running_on(cpu))
        };
        debug_assert!(running.is_none_or(|th| ts.map(|t| t.cpu_mode(cpu)) == Some(th.cpu_mode())));
        let (thread, slot) = match running {
            Some(th) => (Some((th.pid, th.tid)), mode_slot(th.cpu_mode())),
            None => (None, 6),
        };
        let StatsCollector {
            cells,
            keys,
            index,
            free,
            firsts,
            run_index,
            runs,
            free_runs,
            cpus,
            ..
        } = self;
        let acc = acc_mut(cpus, trace, cpu);
        acc.present = true;
        if acc.cache.thread != thread || acc.cache.run == NO_CELL {
            let (pid, tid) = thread.unwrap_or((-1, -1));
            let key = RunKey {
                trace: trace as u32,
                cpu,
                pid,
                tid,
            };
            let run = *run_index
                .entry(key)
                .or_insert_with(|| match free_runs.pop() {
                    Some(r) => {
                        runs[r as usize] = [NO_CELL; 7];
                        r
                    }
                    None => {
                        runs.push([NO_CELL; 7]);
                        runs.len() as u32 - 1
                    }
                });
            acc.cache = CpuCache {
                thread,
                run,
                cells: runs[run as usize],
            };
        }
        let mut idx = acc.cache.cells[slot];
        if idx == NO_CELL {
            let (key, name) = key_of(ts, trace as u32, cpu);
            idx = cell_index(cells, keys, index, free, key, &name);
            acc.cache.cells[slot] = idx;
            runs[acc.cache.run as usize][slot] = idx;
        }
        let cell = &mut cells[idx as usize];
        // The latest name seen wins (an exec renames a running thread).
        if let Some(th) = running {
            if !Arc::ptr_eq(&cell.name, &th.name) && !th.name.is_empty() {
                cell.name = th.name.clone();
            }
        }
        if cpu != NO_CPU {
            match acc.last {
                Some(last) => {
                    cell.time = cell
                        .time
                        .saturating_add(t.saturating_sub(last).max(0) as u64);
                    acc.last = Some(last.max(t));
                }
                None => {
                    acc.first = Some((t, idx));
                    firsts.push(idx);
                    acc.last = Some(t);
                }
            }
        }
        cell.events.add(ci);
    }

    /// Thread `tid` of process `pid` in trace `trace` is gone (freed): its
    /// cells cannot count anything again. Each is encoded into the sealed
    /// cells, a few dozen bytes rather than the cell, its key, its index
    /// entry and its pairs (a trace of many short-lived threads has a few
    /// cells for each), and its slot is reused. Should the thread's key
    /// come back (a TID reused, or events charged to a thread the state
    /// still runs), a new cell counts it, and [`merge`] adds up the cells
    /// of a key in the order they were made: sealing never changes the
    /// statistics, only where they wait for the merge.
    pub fn thread_gone(&mut self, trace: u32, pid: i64, tid: i64) {
        let StatsCollector {
            cells,
            keys,
            index,
            free,
            sealed,
            firsts,
            run_index,
            runs,
            free_runs,
            cpus,
            ..
        } = self;
        let Some(accs) = cpus.get_mut(trace as usize) else {
            return;
        };
        for (cpu, acc) in accs.iter_mut() {
            if acc.cache.thread == Some((pid, tid)) {
                acc.cache = ABSENT.cache;
            }
            let key = RunKey {
                trace,
                cpu,
                pid,
                tid,
            };
            let Some(run) = run_index.remove(&key) else {
                continue;
            };
            free_runs.push(run);
            for (slot, &i) in runs[run as usize].iter().enumerate() {
                if i == NO_CELL || firsts.contains(&i) {
                    continue;
                }
                let k = keys[i as usize];
                // A mode without a slot of its own cannot be decoded from
                // its slot: that (hypothetical) cell stays as it is.
                if SLOT_MODES[slot] != k.mode {
                    continue;
                }
                let c = &mut cells[i as usize];
                let events = std::mem::replace(&mut c.events, ClassCounts::Sparse(Vec::new()));
                sealed.push(&k, slot as u8, &c.name, c.time, &events);
                c.time = 0;
                index.remove(&k);
                free.push(i);
            }
        }
    }

    /// The collector as a part of a range, without the end (`end_state`
    /// `None`: a part that more parts follow), or ending the range with
    /// the state there.
    pub fn into_part(self, end_state: Option<&TracesetState>) -> StatsPart {
        let tail = end_state.map(|state| {
            let mut v = Vec::new();
            for (ti, ts) in state.traces.iter().enumerate() {
                for (cpu, _) in ts.cpus.iter() {
                    let (key, name) = key_of(Some(ts), ti as u32, cpu);
                    v.push((key, name));
                }
            }
            v
        });
        StatsPart {
            collector: self,
            tail,
        }
    }

    /// What [`into_part`](Self::into_part)`(None)` of a clone gives,
    /// without copying the lookup tables that only counting needs (a
    /// partial snapshot of a large trace's pass took up to 150 ms of the
    /// window's main thread cloning them).
    pub fn partial_part(&self) -> StatsPart {
        StatsPart {
            collector: StatsCollector {
                begin: self.begin,
                end: self.end,
                cells: self.cells.clone(),
                keys: self.keys.clone(),
                index: FastMap::default(),
                free: self.free.clone(),
                sealed: self.sealed.without_index(),
                firsts: Vec::new(),
                run_index: FastMap::default(),
                runs: Vec::new(),
                free_runs: Vec::new(),
                cpus: self.cpus.clone(),
                class_slots: ClassSlots::default(),
                class_names: self.class_names.clone(),
                last_time: self.last_time,
                events: self.events,
            },
            tail: None,
        }
    }

    /// Charges every CPU up to the end, with `state` as it is there, and
    /// returns the statistics.
    pub fn finish(self, state: &TracesetState) -> Statistics {
        merge(vec![self.into_part(Some(state))])
    }
}

/// The varint at `*at` in `bytes` (made by [`put_varint`]); `*at` moves
/// past it.
fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut rest = &bytes[*at..];
    let v = crate::varint::take(&mut rest).expect("a whole varint, as sealed");
    *at = bytes.len() - rest.len();
    v
}

/// A cell as [`SealedCells`] keeps it, decoded.
#[derive(Debug, Clone, PartialEq)]
struct SealedCell {
    key: CellKey,
    name: Arc<str>,
    time: u64,
    /// (class index, events).
    events: Vec<(u32, u64)>,
}

/// Cells of threads that exited ([`StatsCollector::thread_gone`]), back
/// to back in a byte buffer, in the order they were sealed: per cell its
/// key (trace, CPU, pid and tid zigzagged, mode slot), its name's index
/// in `names`, its time and its (class, events) pairs, all varints. A
/// short-lived thread's cell takes 20 to 40 bytes here against about 200
/// as a cell (its key twice, an index entry, a vector of pairs).
#[derive(Debug, Clone, Default)]
struct SealedCells {
    bytes: Vec<u8>,
    /// The thread names, each once (by contents).
    names: Vec<Arc<str>>,
    /// Position of each name in `names` (only to seal more).
    name_index: FastMap<Arc<str>, u32>,
}

impl SealedCells {
    /// Appends the cell of `key` (whose mode has slot `slot`) named
    /// `name`, charged `time`, that counted `events`.
    fn push(&mut self, key: &CellKey, slot: u8, name: &Arc<str>, time: u64, events: &ClassCounts) {
        let name = match self.name_index.get(&**name) {
            Some(&n) => n,
            None => {
                let n = self.names.len() as u32;
                self.names.push(name.clone());
                self.name_index.insert(name.clone(), n);
                n
            }
        };
        let b = &mut self.bytes;
        put_varint(b, key.trace.into());
        put_varint(b, key.cpu.into());
        put_varint(b, zigzag(key.pid));
        put_varint(b, zigzag(key.tid));
        b.push(slot);
        put_varint(b, name.into());
        put_varint(b, time);
        put_varint(b, events.iter().count() as u64);
        for (class, n) in events.iter() {
            put_varint(b, class as u64);
            put_varint(b, n);
        }
    }

    /// The cells, in the order they were sealed.
    fn iter(&self) -> impl Iterator<Item = SealedCell> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            let b = &self.bytes[..];
            if at >= b.len() {
                return None;
            }
            let trace = get_varint(b, &mut at) as u32;
            let cpu = get_varint(b, &mut at) as u32;
            let pid = unzigzag(get_varint(b, &mut at));
            let tid = unzigzag(get_varint(b, &mut at));
            let mode = SLOT_MODES[b[at] as usize];
            at += 1;
            let name = self.names[get_varint(b, &mut at) as usize].clone();
            let time = get_varint(b, &mut at);
            let pairs = get_varint(b, &mut at) as usize;
            let events = (0..pairs)
                .map(|_| {
                    let class = get_varint(b, &mut at) as u32;
                    (class, get_varint(b, &mut at))
                })
                .collect();
            Some(SealedCell {
                key: CellKey {
                    trace,
                    cpu,
                    pid,
                    tid,
                    mode,
                },
                name,
                time,
                events,
            })
        })
    }

    /// A copy for merging only (the name index left out).
    fn without_index(&self) -> SealedCells {
        SealedCells {
            bytes: self.bytes.clone(),
            names: self.names.clone(),
            name_index: FastMap::default(),
        }
    }
}

/// A [`StatsCollector`] over one part of a range (see the module doc),
/// ready to be [merged](merge) with the parts before and after it.
#[derive(Debug, Clone)]
pub struct StatsPart {
    collector: StatsCollector,
    /// For the last part: the cell of what runs on each CPU of the state
    /// at the end, and its name.
    tail: Option<Vec<(CellKey, Arc<str>)>>,
}

impl StatsPart {
    /// The part as one that more parts follow (its end state dropped):
    /// for a reader that learns only at its end whether it was the last.
    pub fn without_end(mut self) -> StatsPart {
        self.tail = None;
        self
    }

    /// Events counted in the part.
    pub fn events(&self) -> u64 {
        self.collector.events
    }

    /// Cells sealed in the part.
    #[cfg(test)]
    pub(crate) fn sealed_cells(&self) -> usize {
        self.collector.sealed.iter().count()
    }
}

/// A cell of the merged statistics.
struct Merged {
    key: CellKey,
    /// Where the entry was made among all: the order of a key's entries.
    seq: u32,
    name: Arc<str>,
    time: u64,
    /// Events per name, packed as the statistics keep them: a trace of
    /// many short-lived threads has hundreds of thousands of cells of a
    /// few names each, all merged at once (as (name, count) pairs they
    /// took about 250 bytes a cell there, more than the cells).
    events: EventCounts,
}

/// The statistics of consecutive parts of a range, in order (the last one
/// made with its end state): exactly what one pass over the range gives.
///
/// Every cell of every part (sealed ones first in each part, as they were
/// made before the live ones) becomes an entry, then the time charged
/// before each CPU's first event and after its last one; the entries are
/// sorted by key, stably, and those of a key added up in that order (the
/// latest name that is not empty wins). No index of the keys is made: on
/// a trace of 80,000 thread records it held 400,000 keys.
pub fn merge(parts: Vec<StatsPart>) -> Statistics {
    let first = parts.first().map(|p| &p.collector);
    let begin = first.and_then(|c| c.begin).unwrap_or(0);
    let last_time = parts.iter().rev().find_map(|p| p.collector.last_time);
    let end = first
        .and_then(|c| c.end)
        .or(last_time)
        .unwrap_or(begin)
        .max(begin);
    let mut cells: Vec<Merged> = Vec::new();
    // Per trace and CPU: accounted, and the time of the last event.
    let mut carried: Vec<CpuMap<(bool, Option<Time>)>> = Vec::new();
    let mut total = 0;
    let mut tail = None;
    for part in parts {
        let mut c = part.collector;
        total += c.events;
        let names = &c.class_names;
        let sealed = std::mem::take(&mut c.sealed);
        let mut free = std::mem::take(&mut c.free);
        free.sort_unstable();
        let live = c.cells.len() - free.len();
        cells.reserve_exact(live + sealed.iter().count());
        for x in sealed.iter() {
            cells.push(Merged {
                key: x.key,
                seq: cells.len() as u32,
                name: x.name,
                time: x.time,
                events: x
                    .events
                    .iter()
                    .map(|&(class, n)| (names[class as usize].clone(), n))
                    .collect(),
            });
        }
        drop(sealed);
        // The part's cells are consumed as they are merged, so that both
        // are not held whole at once; `at` is where each went.
        let keys = std::mem::take(&mut c.keys);
        let mut at: Vec<u32> = vec![u32::MAX; keys.len()];
        let mut free = free.into_iter().peekable();
        for (i, (x, key)) in std::mem::take(&mut c.cells)
            .into_iter()
            .zip(keys)
            .enumerate()
        {
            if free.next_if_eq(&(i as u32)).is_some() {
                continue;
            }
            at[i] = cells.len() as u32;
            cells.push(Merged {
                key,
                seq: cells.len() as u32,
                name: x.name,
                time: x.time,
                events: x
                    .events
                    .iter()
                    .map(|(class, n)| (names[class].clone(), n))
                    .collect(),
            });
        }
        for (ti, accs) in c.cpus.iter().enumerate() {
            if carried.len() <= ti {
                carried.resize_with(ti + 1, CpuMap::new);
            }
            for (cpu, acc) in accs.iter() {
                if !acc.present || cpu == NO_CPU {
                    continue;
                }
                let slot = carried[ti].get_or_insert_with(cpu, || (false, None));
                let prev = slot.1.unwrap_or(begin);
                if let Some((t, i)) = acc.first {
                    let c = &mut cells[at[i as usize] as usize];
                    c.time = c.time.saturating_add(t.saturating_sub(prev).max(0) as u64);
                }
                *slot = (true, acc.last.map(|l| l.max(prev)).or(slot.1));
            }
        }
        if part.tail.is_some() {
            tail = part.tail;
        }
    }
    // After each CPU's last event, what runs on it at the end.
    let tail = tail.unwrap_or_default();
    for (key, _) in &tail {
        let ti = key.trace as usize;
        if carried.len() <= ti {
            carried.resize_with(ti + 1, CpuMap::new);
        }
        carried[ti].get_or_insert_with(key.cpu, || (false, None)).0 = true;
    }
    let mut at_end: FastMap<(u32, u32), usize> = FastMap::default();
    for (i, (key, _)) in tail.iter().enumerate() {
        at_end.insert((key.trace, key.cpu), i);
    }
    // Room for them, exactly: pushed beyond its capacity, the vector of
    // every cell doubled (39 MB, half of it spare, on a trace of 80,000
    // thread records), and kept its size as the statistics' cells.
    let ends = carried
        .iter()
        .flat_map(|v| v.iter())
        .filter(|&(cpu, &(present, _))| present && cpu != NO_CPU)
        .count();
    cells.reserve_exact(ends);
    for (ti, v) in carried.iter().enumerate() {
        for (cpu, &(present, last)) in v.iter() {
            if !present || cpu == NO_CPU {
                continue;
            }
            let trace = ti as u32;
            let dt = end.saturating_sub(last.unwrap_or(begin)).max(0) as u64;
            let (key, name) = match at_end.get(&(trace, cpu)) {
                Some(&k) => tail[k].clone(),
                None => key_of(None, trace, cpu),
            };
            cells.push(Merged {
                key,
                seq: cells.len() as u32,
                name,
                time: dt,
                events: EventCounts::default(),
            });
        }
    }
    // The entries of a key in the order they were made; an unstable sort
    // by that order too, since a stable one takes a buffer of half the
    // entries (7 MB on a trace of 80,000 thread records).
    cells.sort_unstable_by_key(|c| (c.key, c.seq));
    cells.dedup_by(|later, kept| {
        if later.key != kept.key {
            return false;
        }
        if !later.name.is_empty() && *kept.name != *later.name {
            kept.name = later.name.clone();
        }
        kept.time = kept.time.saturating_add(later.time);
        kept.events.add(&later.events);
        true
    });
    let mut per_name: BTreeMap<String, u64> = BTreeMap::new();
    let mut cells: Vec<StatCell> = cells
        .into_iter()
        .map(|c| {
            for (name, n) in &c.events {
                *per_name.entry(name.to_string()).or_insert(0) += n;
            }
            StatCell {
                trace: c.key.trace,
                cpu: c.key.cpu,
                pid: c.key.pid,
                tid: c.key.tid,
                mode: c.key.mode,
                name: c.name,
                cpu_time: c.time,
                events: c.events,
            }
        })
        .collect();
    // Made in place of the merged cells, larger: the spare room goes.
    cells.shrink_to_fit();
    Statistics {
        begin,
        end,
        total_events: total,
        per_name,
        cells,
        trace_names: Vec::new(),
    }
}

/// What one thread did on one CPU in one mode.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StatCell {
    /// Trace index.
    pub trace: u32,
    /// CPU ([`NO_CPU`] for events without one).
    pub cpu: u32,
    /// Process id (-1: nothing known to run).
    pub pid: i64,
    /// Thread id (-1: nothing known to run).
    pub tid: i64,
    /// CPU mode.
    pub mode: CpuMode,
    /// Thread name (the latest seen).
    #[serde(deserialize_with = "shared_name")]
    pub name: Arc<str>,
    /// Nanoseconds charged.
    pub cpu_time: u64,
    /// Events per event name.
    pub events: EventCounts,
}

/// Events per event name, sorted by name, packed: for each name, its
/// number in the process's table of event names ([`EventNames`]) and its
/// count, as varints (3 bytes a name, typically). A cell counts a handful
/// of names, and a trace with tens of thousands of short-lived threads
/// has a few cells for each: as (name, count) pairs, 24 bytes a name, the
/// counts took about 400 bytes a thread record at the end of the pass
/// (and a map's first node alone is 280 bytes). It serializes as the map
/// it stands for.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EventCounts(Varints);

/// Bytes of varints held in place (the bytes of [`EventCounts`] nearly
/// always fit: a handful of names, about 3 bytes each).
const INLINE_VARINTS: usize = 22;

/// The bytes of an [`EventCounts`]: in place when they fit, where a heap
/// allocation of a few bytes costs 32 (on a trace of 80,000 thread
/// records, 170,000 cells: 5 MB at the end of the pass, and as much in a
/// window holding the statistics).
#[derive(Clone)]
enum Varints {
    Inline {
        len: u8,
        bytes: [u8; INLINE_VARINTS],
    },
    Heap(Box<[u8]>),
}

impl Varints {
    fn new(bytes: &[u8]) -> Varints {
        if bytes.len() <= INLINE_VARINTS {
            let mut inline = [0; INLINE_VARINTS];
            inline[..bytes.len()].copy_from_slice(bytes);
            Varints::Inline {
                len: bytes.len() as u8,
                bytes: inline,
            }
        } else {
            Varints::Heap(bytes.into())
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Varints::Inline { len, bytes } => &bytes[..*len as usize],
            Varints::Heap(b) => b,
        }
    }
}

impl Default for Varints {
    fn default() -> Self {
        Varints::new(&[])
    }
}

impl PartialEq for Varints {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Varints {}

/// The event names of the whole process, numbered in the order first
/// counted, so that [`EventCounts`] can name one with a varint. A name is
/// never removed: the table holds one entry per distinct event name the
/// process ever counted (the event classes of the traces it opened, tens
/// to hundreds), and [`EventCounts::iter`] lends them for as long as the
/// process lives.
struct EventNames {
    ids: FastMap<Arc<str>, u32>,
    names: Vec<&'static Arc<str>>,
}

static EVENT_NAMES: std::sync::LazyLock<std::sync::RwLock<EventNames>> =
    std::sync::LazyLock::new(|| {
        std::sync::RwLock::new(EventNames {
            ids: Default::default(),
            names: Vec::new(),
        })
    });

/// The number of event name `name` (given one if new).
pub(crate) fn event_id(name: &Arc<str>) -> u32 {
    let read = |t: &EventNames| t.ids.get(name).copied();
    if let Some(id) = read(&EVENT_NAMES.read().unwrap_or_else(|e| e.into_inner())) {
        return id;
    }
    let mut t = EVENT_NAMES.write().unwrap_or_else(|e| e.into_inner());
    if let Some(id) = read(&t) {
        return id;
    }
    let id = t.names.len() as u32;
    // Leaked on purpose: see `EventNames`.
    t.names.push(Box::leak(Box::new(name.clone())));
    t.ids.insert(name.clone(), id);
    id
}

/// Event name number `id` (made by [`event_id`]).
pub(crate) fn event_name(id: u32) -> &'static Arc<str> {
    EVENT_NAMES.read().unwrap_or_else(|e| e.into_inner()).names[id as usize]
}

impl EventCounts {
    /// The names and their counts, by name.
    pub fn iter(&self) -> EventCountsIter<'_> {
        EventCountsIter {
            bytes: self.0.as_slice(),
            at: 0,
            left: self.len(),
        }
    }

    /// The counts, by name.
    pub fn values(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.iter().map(|(_, n)| n)
    }

    /// The (event name number from [`event_id`], count) pairs, by name:
    /// what [`EventCounts::iter`] gives without looking the names up
    /// (each a read of the process's table, behind its lock).
    pub(crate) fn numbered(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let mut pairs = self.iter();
        std::iter::from_fn(move || pairs.next_numbered())
    }

    /// The count of `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(k, _)| ***k == *name).map(|(_, n)| n)
    }

    /// Number of names: half the varints, each ending with the one byte
    /// below 0x80 it has.
    pub fn len(&self) -> usize {
        self.0.as_slice().iter().filter(|&&b| b < 0x80).count() / 2
    }

    /// Whether no event is counted.
    pub fn is_empty(&self) -> bool {
        self.0.as_slice().is_empty()
    }

    /// The counts of `pairs`, (event name number from [`event_id`],
    /// count), which the caller gives by name, each name once (as a
    /// store's cells hold them): no sorting, no lookups by name.
    pub(crate) fn from_ordered_ids(pairs: impl IntoIterator<Item = (u32, u64)>) -> EventCounts {
        let mut out = Vec::with_capacity(INLINE_VARINTS);
        for (id, n) in pairs {
            put_varint(&mut out, u64::from(id));
            put_varint(&mut out, n);
        }
        EventCounts(Varints::new(&out))
    }

    /// Adds the counts of `other` to these.
    fn add(&mut self, other: &EventCounts) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            self.0 = other.0.clone();
            return;
        }
        *self = self
            .iter()
            .chain(other.iter())
            .map(|(k, n)| (k.clone(), n))
            .collect();
    }
}

/// The (name, count) pairs of an [`EventCounts`], by name; of a known
/// length (serializers of sequences want it first).
#[derive(Debug, Clone)]
pub struct EventCountsIter<'a> {
    bytes: &'a [u8],
    at: usize,
    left: usize,
}

impl EventCountsIter<'_> {
    /// The next (event name number, count) pair.
    fn next_numbered(&mut self) -> Option<(u32, u64)> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let id = get_varint(self.bytes, &mut self.at);
        let n = get_varint(self.bytes, &mut self.at);
        self.left -= 1;
        Some((id as u32, n))
    }
}

impl<'a> Iterator for EventCountsIter<'a> {
    type Item = (&'a Arc<str>, u64);

    fn next(&mut self) -> Option<Self::Item> {
        self.next_numbered().map(|(id, n)| (event_name(id), n))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for EventCountsIter<'_> {}

impl std::fmt::Debug for EventCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a EventCounts {
    type Item = (&'a Arc<str>, u64);
    type IntoIter = EventCountsIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Counts of the same name are added.
impl FromIterator<(Arc<str>, u64)> for EventCounts {
    fn from_iter<I: IntoIterator<Item = (Arc<str>, u64)>>(iter: I) -> Self {
        let mut v: Vec<(Arc<str>, u64)> = iter.into_iter().collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = kept.1.saturating_add(later.1);
            }
            same
        });
        EventCounts::from_ordered_ids(v.iter().map(|(name, n)| (event_id(name), *n)))
    }
}

impl serde::Serialize for EventCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for EventCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = EventCounts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of event names to counts")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<EventCounts, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0).min(256));
                while let Some((k, n)) = map.next_entry::<String, u64>()? {
                    v.push((intern(k), n));
                }
                Ok(v.into_iter().collect())
            }
        }
        d.deserialize_map(Visit)
    }
}

thread_local! {
    /// The names read so far by [`with_shared_names`] on this thread.
    static NAMES: std::cell::RefCell<Option<std::collections::HashSet<Arc<str>>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` (a deserialization of [`Statistics`]) so that the thread and
/// event names it reads are shared, as the pass shares them, rather than
/// one allocation each: a store's statistics hold millions of them.
pub fn with_shared_names<R>(f: impl FnOnce() -> R) -> R {
    NAMES.with(|n| *n.borrow_mut() = Some(Default::default()));
    let r = f();
    NAMES.with(|n| *n.borrow_mut() = None);
    r
}

/// `s`, shared with the equal names read before it under
/// [`with_shared_names`] (a new one outside).
pub(crate) fn intern(s: String) -> Arc<str> {
    NAMES.with(|n| match n.borrow_mut().as_mut() {
        Some(set) => match set.get(s.as_str()) {
            Some(a) => a.clone(),
            None => {
                let a: Arc<str> = Arc::from(s);
                set.insert(a.clone());
                a
            }
        },
        None => Arc::from(s),
    })
}

/// Deserializes a name with [`intern`].
pub(crate) fn shared_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    <String as serde::Deserialize>::deserialize(d).map(intern)
}

/// Label of the statistics' first row, whose children count the events
/// by name over the whole range.
pub const EVENT_TYPES: &str = "event types";

/// The statistics of a time range.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Statistics {
    /// Start of the accounted range.
    pub begin: Time,
    /// End of the accounted range.
    pub end: Time,
    /// Events counted.
    pub total_events: u64,
    /// Events per event name.
    pub per_name: BTreeMap<String, u64>,
    /// The finest level: trace × CPU × thread × mode.
    pub cells: Vec<StatCell>,
    /// Trace names, by trace index (labels of the tree).
    pub trace_names: Vec<String>,
}

/// A node of the statistics tree.
#[derive(Debug, Clone, PartialEq)]
pub struct StatNode {
    /// Level: `traceset`, `trace`, `cpu`, `process`, `thread`, `mode`,
    /// `event`.
    pub kind: &'static str,
    /// Name shown.
    pub label: String,
    /// Events counted under the node.
    pub events: u64,
    /// CPU time under the node (`None` for event names).
    pub cpu_time: Option<u64>,
    /// Children, in display order.
    pub children: Vec<StatNode>,
}

impl StatNode {
    /// Nodes in the subtree, itself included.
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(StatNode::count).sum::<usize>()
    }
}

impl Statistics {
    /// The accounted duration.
    pub fn duration(&self) -> u64 {
        self.end.abs_diff(self.begin)
    }

    /// CPU time charged on `cpu` of `trace`, whatever ran.
    pub fn cpu_time(&self, trace: u32, cpu: u32) -> u64 {
        self.cells
            .iter()
            .filter(|c| c.trace == trace && c.cpu == cpu)
            .fold(0u64, |sum, c| sum.saturating_add(c.cpu_time))
    }

    /// The CPUs accounted, per trace.
    pub fn cpus(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self
            .cells
            .iter()
            .filter(|c| c.cpu != NO_CPU)
            .map(|c| (c.trace, c.cpu))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The tree traceset → trace → CPU → process → thread → mode → event
    /// name.
    pub fn tree(&self) -> StatNode {
        CellTree::new(self).stat_node()
    }

    /// The tree as a statistics table (name, events, CPU time): a summary
    /// by event name first (what a user looks for first), most frequent
    /// first; then the tree by trace, CPU, process.
    pub fn render(&self) -> StatisticsRender {
        CellTree::new(self).render()
    }

    /// The tree as indented text, one node per line.
    pub fn to_text(&self) -> String {
        fn walk(n: &StatNode, depth: usize, out: &mut String) {
            let _ = write!(
                out,
                "{:indent$}{}: {} events",
                "",
                n.label,
                n.events,
                indent = depth * 2
            );
            if let Some(t) = n.cpu_time {
                let _ = write!(
                    out,
                    ", CPU time {}.{:09} s",
                    t / 1_000_000_000,
                    t % 1_000_000_000
                );
            }
            out.push('\n');
            for c in &n.children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "range {} .. {} ({} ns), {} events",
            self.begin,
            self.end,
            self.duration(),
            self.total_events
        );
        walk(&self.tree(), 0, &mut out);
        out
    }

    /// The tree as JSON: `{"begin", "end", "events", "per_event_name",
    /// "tree": {"kind", "name", "events", "cpu_time_ns", "children"}}`.
    pub fn to_json(&self) -> String {
        fn walk(n: &StatNode, out: &mut String) {
            let _ = write!(
                out,
                "{{\"kind\":\"{}\",\"name\":{},\"events\":{}",
                n.kind,
                json_str(&n.label),
                n.events
            );
            if let Some(t) = n.cpu_time {
                let _ = write!(out, ",\"cpu_time_ns\":{t}");
            }
            if !n.children.is_empty() {
                out.push_str(",\"children\":[");
                for (i, c) in n.children.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(c, out);
                }
                out.push(']');
            }
            out.push('}');
        }
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\"begin\":{},\"end\":{},\"events\":{},\"per_event_name\":{{",
            self.begin, self.end, self.total_events
        );
        for (i, (k, v)) in self.per_name.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{v}", json_str(k));
        }
        out.push_str("},\"tree\":");
        walk(&self.tree(), &mut out);
        out.push_str("}\n");
        out
    }
}

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A HIGH-priority request computing the statistics of `[begin, end]`
/// in one pass; its data, once complete, is a [`Statistics`].
pub fn range_request(
    owner: OwnerId,
    begin: Time,
    end: Time,
    trace_names: Vec<String>,
) -> KernelRequest {
    let mut req = collector_request(owner, Start::Time(begin), begin, end);
    req.after_traceset.add(Priority::DEFAULT, move |ctx| {
        let data = std::mem::replace(ctx.data, Box::new(()));
        if let Ok(c) = data.downcast::<StatsCollector>() {
            let mut s = c.finish(ctx.state);
            s.trace_names = trace_names.clone();
            *ctx.data = Box::new(s);
        }
        Flow::Continue
    });
    req
}

/// A HIGH-priority request feeding a [`StatsCollector`] over `[begin,
/// end]` from `start`; its data is the collector.
fn collector_request(
    owner: OwnerId,
    start: Start<CtfPosition>,
    begin: Time,
    end: Time,
) -> KernelRequest {
    let mut req = KernelRequest::new(
        owner,
        start,
        Box::new(StatsCollector::new(Some(begin), Some(end))) as Payload,
    );
    req.priority = Priority::HIGH;
    req.end_time = Some(end);
    req.event.add(Priority::HIGH, |ctx| {
        if let Some(c) = ctx.data.downcast_mut::<StatsCollector>() {
            c.on_event(ctx.event, ctx.state);
        }
        Flow::Continue
    });
    req
}

/// A HIGH-priority request computing one part of the statistics of
/// `[begin, end]`: from `start` to `end_position` (exclusive; `None` for
/// the last part, which ends at `end`). Its data, once complete, is a
/// [`StatsPart`] to [`merge`] with the other parts, in order.
pub fn part_request(
    owner: OwnerId,
    start: Start<CtfPosition>,
    end_position: Option<CtfPosition>,
    begin: Time,
    end: Time,
) -> KernelRequest {
    let mut req = collector_request(owner, start, begin, end);
    let last = end_position.is_none();
    req.end_position = end_position;
    req.after_traceset.add(Priority::DEFAULT, move |ctx| {
        let data = std::mem::replace(ctx.data, Box::new(()));
        if let Ok(c) = data.downcast::<StatsCollector>() {
            *ctx.data = Box::new(c.into_part(last.then_some(ctx.state)));
        }
        Flow::Continue
    });
    req
}

/// How [`Session::start_statistics`] splits a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParallelConfig {
    /// Parts, each read on its own thread, at most (the range is split at
    /// checkpoints: fewer when it holds fewer). 1: one pass on the
    /// session's scheduler.
    pub parts: usize,
    /// Decoding threads of each part's reader (0: the part's thread
    /// decodes the events itself).
    pub decode_threads: usize,
}

impl Default for ParallelConfig {
    /// One part per available core, each decoding inline: the parts
    /// already keep every core busy, and decoding threads add hand-offs
    /// (`traceloom-bench viewers --part-decode-threads N` compares).
    fn default() -> Self {
        ParallelConfig {
            parts: std::thread::available_parallelism().map_or(1, |n| n.get()),
            decode_threads: 0,
        }
    }
}

/// Where each part of `[begin, end]` starts: at most `parts` positions
/// among `checkpoints` (sorted) inside the range, evenly spread over them
/// (checkpoints are taken every so many events, so that spreads the
/// events); the first part starts at `begin` and is not listed.
pub fn split_points(
    checkpoints: &[CtfPosition],
    begin: Time,
    end: Time,
    parts: usize,
) -> Vec<CtfPosition> {
    let inside: Vec<CtfPosition> = checkpoints
        .iter()
        .filter(|p| p.time > begin && p.time <= end)
        .copied()
        .collect();
    let m = inside.len();
    let p = parts.min(m + 1);
    let mut v: Vec<CtfPosition> = (1..p).map(|i| inside[i * m / p]).collect();
    v.dedup();
    v
}

/// One part of a [`StatisticsJob`]: where it starts, the checkpoint its
/// scheduler starts from, and where it ends.
struct PartSpec {
    start: Start<CtfPosition>,
    from: Option<(CtfPosition, TracesetState)>,
    end_position: Option<CtfPosition>,
}

/// What the part threads share: the parts done, and the parts still
/// running.
struct Shared {
    parts: Vec<Option<StatsPart>>,
    running: usize,
}

/// The statistics of a range computed in parts on threads of their own
/// (see the module doc), each part by its own scheduler and reader over
/// the session's traceset, from the session's nearest checkpoint. The last
/// part to finish merges them. Dropping the job cancels it.
pub struct StatisticsJob {
    rx: mpsc::Receiver<Statistics>,
    cancel: Arc<AtomicBool>,
    parts: usize,
    /// Per part: the time it starts at, and the time of the last event it
    /// read (its end once done), for [`progress`](Self::progress).
    reached: Arc<Vec<(Time, AtomicI64)>>,
    /// What was asked, to ask it again as one request if a part fails.
    owner: OwnerId,
    range: (Time, Time),
    trace_names: Vec<String>,
}

impl std::fmt::Debug for StatisticsJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatisticsJob")
            .field("parts", &self.parts)
            .finish()
    }
}

/// Where a [`StatisticsJob`] is.
#[derive(Debug)]
pub enum JobPoll {
    /// Parts are still being read.
    Running,
    /// The merged statistics.
    Done(Box<Statistics>),
    /// A part's thread died: no statistics will come.
    Failed,
}

impl StatisticsJob {
    /// Starts the parts of `[begin, end]` split at `splits` (from
    /// [`split_points`]) on the session's traceset and checkpoints.
    fn start(
        session: &Session,
        owner: OwnerId,
        begin: Time,
        end: Time,
        splits: &[CtfPosition],
        trace_names: Vec<String>,
        decode_threads: usize,
    ) -> std::io::Result<StatisticsJob> {
        let checkpoints: BTreeMap<CtfPosition, &TracesetState> = session.checkpoints().collect();
        let mut specs = Vec::with_capacity(splits.len() + 1);
        // The first part replays from the last checkpoint before `begin`
        // (or from the start); the others restore theirs.
        let from = checkpoints
            .iter()
            .rev()
            .find(|(p, _)| p.time < begin)
            .map(|(p, s)| (*p, (*s).clone()));
        specs.push(PartSpec {
            start: Start::Time(begin),
            from,
            end_position: splits.first().copied(),
        });
        for (k, p) in splits.iter().enumerate() {
            specs.push(PartSpec {
                start: Start::Position(*p),
                from: checkpoints.get(p).map(|s| (*p, (*s).clone())),
                end_position: splits.get(k + 1).copied(),
            });
        }
        let n = specs.len();
        let starts = std::iter::once(begin).chain(splits.iter().map(|p| p.time));
        let reached: Arc<Vec<(Time, AtomicI64)>> =
            Arc::new(starts.map(|t| (t, AtomicI64::new(t))).collect());
        let shared = Arc::new(std::sync::Mutex::new(Shared {
            parts: (0..n).map(|_| None).collect(),
            running: n,
        }));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let traceset = session.traceset().clone();
        for (k, spec) in specs.into_iter().enumerate() {
            let (shared, stop, tx) = (shared.clone(), cancel.clone(), tx.clone());
            let reached = reached.clone();
            let traceset = Arc::new(traceset.with_decode_threads(decode_threads));
            let names = trace_names.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("statistics {k}"))
                .spawn(move || {
                    let part_end = splits_end(&reached, k, end);
                    let Some(part) = run_part(traceset, spec, begin, end, &stop, &reached[k].1)
                    else {
                        return;
                    };
                    reached[k].1.store(part_end, Ordering::Relaxed);
                    let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
                    g.parts[k] = Some(part);
                    g.running -= 1;
                    if g.running > 0 {
                        return;
                    }
                    let parts: Option<Vec<StatsPart>> =
                        g.parts.iter_mut().map(Option::take).collect();
                    drop(g);
                    if let Some(parts) = parts {
                        let mut s = merge(parts);
                        s.trace_names = names;
                        let _ = tx.send(s);
                    }
                });
            if let Err(e) = spawned {
                cancel.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(StatisticsJob {
            rx,
            cancel,
            parts: n,
            reached,
            owner,
            range: (begin, end),
            trace_names,
        })
    }

    /// Number of parts (threads).
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// How much of the range the parts have read, from 0 to 1.
    pub fn progress(&self) -> f64 {
        let (begin, end) = self.range;
        let read: i128 = self
            .reached
            .iter()
            .map(|(start, at)| (at.load(Ordering::Relaxed) as i128 - *start as i128).max(0))
            .sum();
        fraction(read, begin, end)
    }

    /// Whether the statistics are ready (without waiting).
    pub fn poll(&mut self) -> JobPoll {
        match self.rx.try_recv() {
            Ok(s) => JobPoll::Done(Box::new(s)),
            Err(mpsc::TryRecvError::Empty) => JobPoll::Running,
            Err(mpsc::TryRecvError::Disconnected) => JobPoll::Failed,
        }
    }

    /// Waits for the statistics (`None` if a part's thread died).
    pub fn wait(self) -> Option<Statistics> {
        self.rx.recv().ok()
    }
}

impl Drop for StatisticsJob {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Where part `k` of `reached` ends: where the next one starts, or
/// `end` for the last.
fn splits_end(reached: &[(Time, AtomicI64)], k: usize, end: Time) -> Time {
    reached.get(k + 1).map_or(end, |(start, _)| *start)
}

/// `read` ns of `[begin, end]` as a fraction of it, from 0 to 1.
fn fraction(read: i128, begin: Time, end: Time) -> f64 {
    let span = (end as i128 - begin as i128).max(1);
    (read as f64 / span as f64).clamp(0.0, 1.0)
}

/// Events a part reads between two reports of how far it has come.
const PART_PROGRESS_EVENTS: u64 = 1 << 16;

/// Reads one part with a scheduler of its own, storing in `reached` the
/// time of the last event read as it goes; `None` when cancelled.
fn run_part(
    traceset: Arc<traceloom_ctf::Traceset>,
    spec: PartSpec,
    begin: Time,
    end: Time,
    cancel: &AtomicBool,
    reached: &AtomicI64,
) -> Option<StatsPart> {
    let mut sched = part_scheduler(traceset, spec.from);
    let id: RequestId = sched.add(part_request(
        OwnerId(0),
        spec.start,
        spec.end_position,
        begin,
        end,
    ));
    loop {
        let report = sched.service(Budget::events(PART_PROGRESS_EVENTS), || {
            cancel.load(Ordering::Relaxed)
        });
        if let Some(c) = report.completed.into_iter().find(|c| c.id == id) {
            return c.data.downcast::<StatsPart>().ok().map(|b| *b);
        }
        if cancel.load(Ordering::Relaxed) || sched.is_idle() {
            return None;
        }
        let last = sched
            .data_mut(id)
            .and_then(|d| d.downcast_ref::<StatsCollector>())
            .and_then(StatsCollector::last_time);
        if let Some(t) = last {
            reached.store(t, Ordering::Relaxed);
        }
    }
}

/// Statistics under way: a request on the session's scheduler, or a
/// [`StatisticsJob`].
#[derive(Debug)]
pub enum StatisticsTask {
    /// A [`range_request`] (one pass).
    Request(RequestId),
    /// Parts read in parallel.
    Parallel(StatisticsJob),
}

impl StatisticsTask {
    /// How much of its range `task` has read, from 0 to 1 (`session` is
    /// the one it was started on).
    pub fn progress(&self, session: &mut Session) -> f64 {
        match self {
            StatisticsTask::Request(id) => {
                let Some(c) = session.peek::<StatsCollector>(*id) else {
                    return 0.0;
                };
                match (c.begin, c.end, c.last_time) {
                    (Some(begin), Some(end), Some(t)) => {
                        fraction(t as i128 - begin as i128, begin, end)
                    }
                    _ => 0.0,
                }
            }
            StatisticsTask::Parallel(j) => j.progress(),
        }
    }

    /// Parts read in parallel (1 for a request).
    pub fn parts(&self) -> usize {
        match self {
            StatisticsTask::Request(_) => 1,
            StatisticsTask::Parallel(j) => j.parts(),
        }
    }
}

impl Session {
    /// Starts computing the statistics of `[begin, end]`: in parallel
    /// parts split at the scheduler's checkpoints when the range holds
    /// some (with the default [`ParallelConfig`]), else as a
    /// [`range_request`] on the session's scheduler. Either way the result
    /// is the same; [`poll_statistics`](Self::poll_statistics) gives it.
    pub fn start_statistics(
        &mut self,
        owner: OwnerId,
        begin: Time,
        end: Time,
        trace_names: Vec<String>,
    ) -> StatisticsTask {
        self.start_statistics_with(owner, begin, end, trace_names, ParallelConfig::default())
    }

    /// [`start_statistics`](Self::start_statistics) with `config`.
    pub fn start_statistics_with(
        &mut self,
        owner: OwnerId,
        begin: Time,
        end: Time,
        trace_names: Vec<String>,
        config: ParallelConfig,
    ) -> StatisticsTask {
        if config.parts > 1 {
            let positions: Vec<CtfPosition> = self.checkpoints().map(|(p, _)| p).collect();
            let splits = split_points(&positions, begin, end, config.parts);
            if !splits.is_empty() {
                if let Ok(job) = StatisticsJob::start(
                    self,
                    owner,
                    begin,
                    end,
                    &splits,
                    trace_names.clone(),
                    config.decode_threads,
                ) {
                    return StatisticsTask::Parallel(job);
                }
            }
        }
        StatisticsTask::Request(self.add(range_request(owner, begin, end, trace_names)))
    }

    /// The statistics of `task` once computed (the session must be
    /// serviced for a request to progress). A parallel job whose thread
    /// died is replaced by a request.
    pub fn poll_statistics(&mut self, task: &mut StatisticsTask) -> Option<Statistics> {
        match task {
            StatisticsTask::Request(id) => self.take::<Statistics>(*id),
            StatisticsTask::Parallel(job) => match job.poll() {
                JobPoll::Running => None,
                JobPoll::Done(s) => Some(*s),
                JobPoll::Failed => {
                    let id = self.fallback_request(job);
                    *task = StatisticsTask::Request(id);
                    None
                }
            },
        }
    }

    /// A one-pass request for what `job` was computing.
    fn fallback_request(&mut self, job: &StatisticsJob) -> RequestId {
        let (begin, end) = job.range;
        self.add(range_request(
            job.owner,
            begin,
            end,
            job.trace_names.clone(),
        ))
    }

    /// Cancels `task`.
    pub fn cancel_statistics(&mut self, task: StatisticsTask) {
        match task {
            StatisticsTask::Request(id) => self.cancel(id),
            StatisticsTask::Parallel(job) => drop(job),
        }
    }

    /// Waits for the statistics of `task` (servicing the session for a
    /// request). For command-line use.
    pub fn wait_statistics(&mut self, task: StatisticsTask) -> Option<Statistics> {
        match task {
            StatisticsTask::Request(id) => self.wait(id),
            StatisticsTask::Parallel(job) => {
                let (owner, (begin, end)) = (job.owner, job.range);
                let names = job.trace_names.clone();
                match job.wait() {
                    Some(s) => Some(s),
                    None => {
                        let id = self.add(range_request(owner, begin, end, names));
                        self.wait(id)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{StatValue, StatisticsTree};

    #[test]
    fn class_counts_keep_every_event_from_pairs_to_dense() {
        // Classes in an order that makes the switch to a dense vector
        // happen on a class index above every one seen before.
        let order = [3usize, 0, 3, 7, 1, 1, 2, 9, 4, 5, 3, 6, 30, 0, 12, 30, 7];
        let mut c = ClassCounts::Sparse(Vec::new());
        let mut want = std::collections::BTreeMap::new();
        for (k, &ci) in order.iter().enumerate() {
            c.add(ci);
            *want.entry(ci).or_insert(0u64) += 1;
            let mut got: Vec<(usize, u64)> = c.iter().collect();
            got.sort_unstable();
            let want: Vec<(usize, u64)> = want.iter().map(|(&c, &n)| (c, n)).collect();
            assert_eq!(got, want, "after {} events", k + 1);
            let distinct = want.len();
            assert_eq!(
                matches!(c, ClassCounts::Dense(_)),
                distinct > SPARSE_CLASSES,
                "{distinct} classes"
            );
        }
    }

    #[test]
    fn varints_and_zigzag_round_trip_at_the_edges() {
        let values = [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut b = Vec::new();
        for &v in &values {
            put_varint(&mut b, v);
        }
        let mut at = 0;
        for &v in &values {
            assert_eq!(get_varint(&b, &mut at), v);
        }
        assert_eq!(at, b.len());
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            -65,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            assert_eq!(unzigzag(zigzag(v)), v, "{v}");
        }
        // Small magnitudes stay small: -1 (nothing known) is one byte.
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn sealed_cells_decode_as_they_were_sealed() {
        let name = |s: &str| -> Arc<str> { Arc::from(s) };
        let mut dense = ClassCounts::Sparse(Vec::new());
        for ci in (0..SPARSE_CLASSES + 3).chain([40, 40, 2]) {
            dense.add(ci);
        }
        assert!(matches!(dense, ClassCounts::Dense(_)));
        let mut sparse = ClassCounts::Sparse(Vec::new());
        for ci in [5, 1, 5, 300] {
            sparse.add(ci);
        }
        let cells: Vec<(CellKey, Arc<str>, u64, ClassCounts)> = vec![
            (
                CellKey {
                    trace: 0,
                    cpu: 3,
                    pid: 1200,
                    tid: 1201,
                    mode: CpuMode::Syscall,
                },
                name("worker"),
                12_345,
                sparse,
            ),
            (
                CellKey {
                    trace: u32::MAX,
                    cpu: NO_CPU,
                    pid: -1,
                    tid: -1,
                    mode: CpuMode::Unknown,
                },
                name(""),
                0,
                ClassCounts::Sparse(Vec::new()),
            ),
            (
                CellKey {
                    trace: 7,
                    cpu: 0,
                    pid: i64::MIN,
                    tid: i64::MAX,
                    mode: CpuMode::Idle,
                },
                // The same contents as the first name, another `Arc`.
                name("worker"),
                u64::MAX,
                dense,
            ),
        ];
        let mut modes = SLOT_MODES.to_vec();
        modes.sort();
        modes.dedup();
        assert_eq!(modes.len(), SLOT_MODES.len(), "one slot per mode");
        let mut sealed = SealedCells::default();
        for (key, name, time, events) in &cells {
            let slot = mode_slot(key.mode);
            assert_eq!(SLOT_MODES[slot], key.mode);
            sealed.push(key, slot as u8, name, *time, events);
        }
        assert_eq!(sealed.names.len(), 2, "names kept once by contents");
        for copy in [sealed.clone(), sealed.without_index()] {
            let got: Vec<SealedCell> = copy.iter().collect();
            let want: Vec<SealedCell> = cells
                .iter()
                .map(|(key, name, time, events)| SealedCell {
                    key: *key,
                    name: name.clone(),
                    time: *time,
                    events: events.iter().map(|(c, n)| (c as u32, n)).collect(),
                })
                .collect();
            assert_eq!(got, want);
        }
        assert_eq!(SealedCells::default().iter().count(), 0);
    }

    fn counts(pairs: &[(&str, u64)]) -> EventCounts {
        pairs.iter().map(|&(k, n)| (Arc::from(k), n)).collect()
    }

    /// A cell whose CPU time tells its thread and CPU apart.
    fn stat_cell(
        trace: u32,
        cpu: u32,
        pid: i64,
        tid: i64,
        mode: CpuMode,
        name: &str,
        events: &[(&str, u64)],
    ) -> StatCell {
        StatCell {
            trace,
            cpu,
            pid,
            tid,
            mode,
            name: Arc::from(name),
            cpu_time: 10 * tid.unsigned_abs() + u64::from(cpu),
            events: counts(events),
        }
    }

    /// The tree as a naive reference builds it: every level, event names
    /// included, a node found among its siblings by label, children in
    /// the order first met over the sorted cells.
    fn reference_tree(s: &Statistics) -> StatNode {
        fn new_node(kind: &'static str, label: String) -> StatNode {
            StatNode {
                kind,
                label,
                events: 0,
                cpu_time: Some(0),
                children: Vec::new(),
            }
        }
        fn add_time(n: &mut StatNode, t: u64) {
            let sum = n.cpu_time.get_or_insert(0);
            *sum = sum.saturating_add(t);
        }
        fn child<'n>(n: &'n mut StatNode, kind: &'static str, label: &str) -> &'n mut StatNode {
            let i = match n.children.iter().position(|c| c.label == label) {
                Some(i) => i,
                None => {
                    n.children.push(new_node(kind, label.to_string()));
                    n.children.len() - 1
                }
            };
            &mut n.children[i]
        }
        let mut cells: Vec<&StatCell> = s.cells.iter().collect();
        cells.sort_by_key(|c| (c.trace, c.cpu, c.pid, c.tid, c.mode));
        let mut root = new_node("traceset", "traceset".into());
        for c in cells {
            let n: u64 = c.events.values().sum();
            let cpu = if c.cpu == NO_CPU {
                "CPU ?".to_string()
            } else {
                format!("CPU {}", c.cpu)
            };
            let (process, thread) = if c.tid < 0 {
                ("(unknown)".to_string(), "(unknown)".to_string())
            } else {
                (
                    format!("process {}", c.pid),
                    format!("{} [{}]", c.name, c.tid),
                )
            };
            let path = [
                ("trace", s.trace_names[c.trace as usize].clone()),
                ("cpu", cpu),
                ("process", process),
                ("thread", thread),
                ("mode", c.mode.name().to_string()),
            ];
            root.events += n;
            add_time(&mut root, c.cpu_time);
            let mut node = &mut root;
            for (kind, label) in &path {
                node = child(node, kind, label);
                node.events += n;
                add_time(node, c.cpu_time);
            }
            for (name, k) in &c.events {
                let leaf = child(node, "event", name);
                leaf.cpu_time = None;
                leaf.events += k;
            }
        }
        root
    }

    #[test]
    fn traces_of_distinct_names_make_the_reference_tree() {
        // The tree forgets the keys below a CPU when the next CPU starts;
        // a process, thread or mode met again under another CPU or trace
        // is a node of its own there.
        let cell = stat_cell;
        let mut cells = Vec::new();
        for trace in [1, 0] {
            for cpu in [1, 0, NO_CPU] {
                for (pid, tid, name) in [(7, 7, "bash"), (7, 8, "bash"), (9, 10, "w"), (7, 7, "ls")]
                {
                    for mode in [CpuMode::Syscall, CpuMode::User] {
                        cells.push(cell(
                            trace,
                            cpu,
                            pid,
                            tid,
                            mode,
                            name,
                            &[("read", 1), (name, 2)],
                        ));
                    }
                }
                cells.push(cell(
                    trace,
                    cpu,
                    -1,
                    -1,
                    CpuMode::Idle,
                    "",
                    &[("statedump", 1)],
                ));
            }
        }
        let total = cells.iter().map(|c| c.events.values().sum::<u64>()).sum();
        let s = Statistics {
            begin: 0,
            end: 100,
            total_events: total,
            per_name: BTreeMap::new(),
            cells,
            trace_names: vec!["kernel".into(), "ust".into()],
        };
        let tree = s.tree();
        assert_eq!(tree, reference_tree(&s));
        assert_eq!(tree.children.len(), 2);
        assert_eq!(tree.children[0].children.len(), 3);
    }

    #[test]
    fn the_tree_and_table_keep_every_level_and_event_name() {
        let cell = stat_cell;
        // Two traces of the same name share their nodes down to the
        // modes, whose event names then come from two cells; a thread
        // renamed between its modes' cells is two thread rows; events
        // with no CPU or no thread known have rows of their own.
        let cells = vec![
            cell(
                1,
                0,
                7,
                7,
                CpuMode::User,
                "bash",
                &[("write", 2), ("read", 1)],
            ),
            cell(
                0,
                0,
                7,
                7,
                CpuMode::User,
                "bash",
                &[("read", 4), ("open", 1)],
            ),
            cell(0, 0, 7, 7, CpuMode::Syscall, "ls", &[("read", 3)]),
            cell(0, 0, 7, 7, CpuMode::Irq, "bash", &[("irq_entry", 5)]),
            cell(0, 1, 9, 10, CpuMode::User, "worker", &[("x", 1)]),
            cell(0, NO_CPU, -1, -1, CpuMode::Idle, "", &[("statedump", 6)]),
            cell(1, 0, -1, -1, CpuMode::Idle, "", &[]),
        ];
        let s = Statistics {
            begin: 0,
            end: 100,
            total_events: 23,
            per_name: BTreeMap::new(),
            cells,
            trace_names: vec!["kernel".into(), "kernel".into()],
        };
        let want = reference_tree(&s);
        assert_eq!(s.tree(), want);
        // The table: the event names' summary, then the tree in order.
        fn walk(n: &StatNode, depth: u16, out: &mut Vec<(u16, String, u64)>) {
            out.push((depth, n.label.clone(), n.events));
            for c in &n.children {
                walk(c, depth + 1, out);
            }
        }
        let mut rows = Vec::new();
        walk(&want, 0, &mut rows);
        let table = s.render();
        let got: Vec<(u16, String, u64)> = table
            .rows()
            .skip_while(|r| r.depth > 0 || r.label != "traceset")
            .map(|r| {
                let StatValue::Count(n) = r.values[0] else {
                    panic!("row {} has no count", r.label);
                };
                (r.depth, r.label.to_string(), n)
            })
            .collect();
        assert_eq!(got, rows);
        let read = want.children[0].children[0].children[0].children[0].children[0].clone();
        assert_eq!(read.label, "user");
        let names: Vec<(&str, u64)> = read
            .children
            .iter()
            .map(|c| (c.label.as_str(), c.events))
            .collect();
        assert_eq!(names, [("open", 1), ("read", 5), ("write", 2)]);
        // The tree a view reads, every row expanded, is the table.
        fn read_all(
            t: &dyn StatisticsTree,
            id: Option<u64>,
            depth: u16,
            out: &mut Vec<(u16, String, Vec<StatValue>)>,
        ) {
            let mut kids = Vec::new();
            t.children(id, &mut kids);
            for k in kids {
                let label = k.label.clone();
                out.push((depth, k.label, k.values));
                if k.has_children {
                    let before = out.len();
                    read_all(t, Some(k.id), depth + 1, out);
                    // An expander opens on rows.
                    assert!(out.len() > before, "{label} shows no children");
                }
            }
        }
        let mut read = Vec::new();
        read_all(&CellTree::new(&s), None, 0, &mut read);
        let rows: Vec<(u16, String, Vec<StatValue>)> = table
            .rows()
            .map(|r| (r.depth, r.label.to_string(), r.values.to_vec()))
            .collect();
        assert_eq!(read, rows);
        assert_eq!(
            rows[0],
            (
                0,
                EVENT_TYPES.to_string(),
                vec![StatValue::Count(23), StatValue::Empty]
            )
        );
    }

    #[test]
    fn event_counts_sort_add_and_serialize_as_a_map() {
        let c = counts(&[("sched_switch", 3), ("irq", 1), ("sched_switch", 2)]);
        let v: Vec<(&str, u64)> = c.iter().map(|(k, n)| (&**k, n)).collect();
        assert_eq!(v, [("irq", 1), ("sched_switch", 5)]);
        assert_eq!(c.get("sched_switch"), Some(5));
        assert_eq!(c.get("exit"), None);
        assert_eq!(c.len(), 2);
        assert_eq!(c.values().sum::<u64>(), 6);
        // Equal counts, equal bytes, however made.
        assert_eq!(c, counts(&[("irq", 1), ("sched_switch", 5)]));
        assert_ne!(c, counts(&[("irq", 1), ("sched_switch", 4)]));
        // Counts beyond one varint byte, zero, the largest; a name first
        // counted after others but sorted before them; no name.
        let big = counts(&[("zz", u64::MAX), ("a", 0), ("m", 300), ("\u{e9}", 128)]);
        let v: Vec<(&str, u64)> = big.iter().map(|(k, n)| (&**k, n)).collect();
        assert_eq!(v, [("a", 0), ("m", 300), ("zz", u64::MAX), ("\u{e9}", 128)]);
        assert_eq!(big.get("zz"), Some(u64::MAX));
        assert_eq!(big.get("a"), Some(0));
        assert_eq!((big.len(), big.iter().len()), (4, 4));
        // Added: names of both, counts of a name summed (saturating).
        let mut sum = c.clone();
        sum.add(&big);
        let want = [("a", 0), ("irq", 1), ("m", 300), ("sched_switch", 5)];
        let want = counts(&[&want[..], &[("zz", u64::MAX), ("\u{e9}", 128)]].concat());
        assert_eq!(sum, want);
        sum.add(&counts(&[("zz", 1)]));
        assert_eq!(sum, want);
        let mut empty = EventCounts::default();
        empty.add(&c);
        assert_eq!(empty, c);
        empty.add(&EventCounts::default());
        assert_eq!(empty, c);
        let none = counts(&[]);
        assert!(none.is_empty() && none.iter().next().is_none());
        assert_eq!(none.len(), 0);
        assert_eq!(none, EventCounts::default());
        assert_eq!(format!("{c:?}"), r#"{"irq": 1, "sched_switch": 5}"#);
        // The store's format is the map's: stores written before read alike.
        let map: BTreeMap<Arc<str>, u64> = c.iter().map(|(k, n)| (k.clone(), n)).collect();
        let bytes = postcard::to_stdvec(&map).unwrap();
        assert_eq!(postcard::to_stdvec(&c).unwrap(), bytes);
        assert_eq!(postcard::from_bytes::<EventCounts>(&bytes).unwrap(), c);
        // Held in place or on the heap alike.
        let many: Vec<(String, u64)> = (0..40).map(|i| (format!("e{i:02}"), i * 1000)).collect();
        let many_counts: EventCounts = many.iter().map(|(k, n)| (Arc::from(&**k), *n)).collect();
        assert!(matches!(many_counts.0, Varints::Heap(_)));
        assert!(matches!(c.0, Varints::Inline { .. }));
        let v: Vec<(String, u64)> = many_counts
            .iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
        assert_eq!(v, many);
        let mut sum = c.clone();
        sum.add(&many_counts);
        assert_eq!(
            (sum.len(), sum.get("e39"), sum.get("irq")),
            (42, Some(39_000), Some(1))
        );
        assert!(std::mem::size_of::<EventCounts>() <= 24);
    }

    #[test]
    fn names_read_together_are_shared() {
        let cell = |tid| StatCell {
            trace: 0,
            cpu: 1,
            pid: 7,
            tid,
            mode: CpuMode::User,
            name: Arc::from("worker"),
            cpu_time: 10,
            events: counts(&[("sched_switch", 1)]),
        };
        let bytes = postcard::to_stdvec(&vec![cell(8), cell(9)]).unwrap();
        let read: Vec<StatCell> = with_shared_names(|| postcard::from_bytes(&bytes)).unwrap();
        assert_eq!(read, vec![cell(8), cell(9)]);
        assert!(Arc::ptr_eq(&read[0].name, &read[1].name));
        let name = |c: &StatCell| c.events.iter().next().unwrap().0.clone();
        assert!(Arc::ptr_eq(&name(&read[0]), &name(&read[1])));
        // Outside, each is its own.
        let apart: Vec<StatCell> = postcard::from_bytes(&bytes).unwrap();
        assert!(!Arc::ptr_eq(&apart[0].name, &apart[1].name));
    }
}
