//! The kernel pass: one LOW-priority request over the whole traceset that
//! records, compactly, what the control flow, resources and statistics
//! views need, so that any later render is a binary search away.
//!
//! * per thread: sorted change times and a `u8` state code (status, and
//!   execution mode while running), packed by blocks ([`Column`]: delta
//!   varints and dictionary-coded codes, 2 to 4 bytes per change);
//! * per CPU: change times, the thread running and the CPU mode;
//! * per IRQ line and softirq vector: change times and idle / raised / busy;
//! * wake-ups (`sched_wakeup` → the wakee's next run) and CPU hand-offs
//!   (`sched_switch`), as arrows between thread records;
//! * drawn events (wake-up, fork, exec, exit) per thread;
//! * the whole-trace [`Statistics`].
//!
//! Transitions are detected in a DEFAULT-priority hook, which sees the
//! state after the event (applied at STATE priority): the threads an event
//! can change — the one running on its CPU before and after it, and the
//! thread its payload names (switch, wake-up, fork, exit, free, statedump)
//! — are compared with the last code recorded for them. A HIGH-priority
//! hook notes the thread running before the event and feeds the
//! statistics.

use std::sync::Arc;
use traceloom_base::Time;

use traceloom_ctf::event::{display_name, is_text_element};
use traceloom_ctf::{Event, Traceset};
use traceloom_engine::request::{OwnerId, SourceEvent, Start};
use traceloom_engine::source::{CtfCurrent, CtfPosition};
use traceloom_engine::state::{
    CpuMap, CpuMode, ExecMode, Thread, ThreadKey, ThreadStatus, TraceState, TracesetState,
};
use traceloom_hooks::{Flow, Priority};
use traceloom_tsdl::ir::{FieldType, Scope};

use super::class_slots::ClassSlots;
use super::column::{Column, ColumnBuilder, ColumnParts};
use super::damage::{GapTracker, StreamDamage};
use super::histogram::FineHistogram;
use super::pack::Item;
use super::series::{SealBatch, SealedBatch, Series, Words};
use super::session::{KernelRequest, Payload, Session};
use super::spill::Arena;
use super::stats::{self, Statistics, StatsCollector, StatsPart};
use super::steps::{BlockSummary, BlockTally, Blocks, BlocksBuilder, Times, NO_CLASS};
use crate::render::RowId;
use traceloom_base::FastMap;

use super::cpu_row::{CpuChange, CpuRow, ExplicitLists, ThreadRow};
pub use super::cpu_row::{CpuRecord, NO_THREAD};

/// State code of a thread: `status << 3 | mode` (the mode only while
/// running, other statuses are drawn the same whatever the mode).
pub fn thread_code(status: ThreadStatus, mode: ExecMode) -> u8 {
    let s = status_index(status);
    let m = if status == ThreadStatus::Run {
        mode_index(mode)
    } else {
        0
    };
    (s << 3) | m
}

/// The status and mode of a state code.
pub fn decode_thread_code(code: u8) -> (ThreadStatus, ExecMode) {
    (
        STATUSES[(code >> 3) as usize & 7],
        MODES[(code & 7).min(5) as usize],
    )
}

/// Every thread status, by code.
pub const STATUSES: [ThreadStatus; 8] = [
    ThreadStatus::Unnamed,
    ThreadStatus::WaitFork,
    ThreadStatus::WaitCpu,
    ThreadStatus::Exit,
    ThreadStatus::Zombie,
    ThreadStatus::WaitBlocked,
    ThreadStatus::Run,
    ThreadStatus::Dead,
];

/// Every execution mode, by code.
pub const MODES: [ExecMode; 6] = [
    ExecMode::User,
    ExecMode::Syscall,
    ExecMode::Trap,
    ExecMode::Irq,
    ExecMode::SoftIrq,
    ExecMode::Unknown,
];

/// Every CPU mode, by code.
pub const CPU_MODES: [CpuMode; 7] = CpuMode::ALL;

fn status_index(s: ThreadStatus) -> u8 {
    STATUSES.iter().position(|x| *x == s).unwrap_or(0) as u8
}

fn mode_index(m: ExecMode) -> u8 {
    MODES.iter().position(|x| *x == m).unwrap_or(5) as u8
}

fn cpu_mode_index(m: CpuMode) -> u8 {
    m.code()
}

/// Kinds of drawn events on thread rows.
pub mod mark {
    /// Woken up (`sched_wakeup`, `sched_wakeup_new`).
    pub const WAKEUP: u8 = 0;
    /// Created (`sched_process_fork`, on the child).
    pub const FORK: u8 = 1;
    /// `sched_process_exec`.
    pub const EXEC: u8 = 2;
    /// `sched_process_exit`.
    pub const EXIT: u8 = 3;
}

/// A drawn event of a thread: its time and [`mark`] kind. Plain data of a
/// fixed layout (the analysis store maps it back as it is).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Mark {
    /// When.
    pub time: Time,
    /// A [`mark`] kind.
    pub kind: u8,
    /// Zero (explicit padding).
    pub pad: [u8; 7],
}

impl Mark {
    /// A mark of `kind` at `time`.
    pub fn new(time: Time, kind: u8) -> Self {
        Mark {
            time,
            kind,
            pad: [0; 7],
        }
    }
}

/// One thread's life (a TID reused after the thread was freed gets a new
/// record).
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRecord {
    /// Trace index.
    pub trace: u32,
    /// Thread id.
    pub tid: i64,
    /// Process id (latest known).
    pub pid: i64,
    /// Parent process id (latest known).
    pub ppid: i64,
    /// Command name (latest known).
    pub name: Arc<str>,
    /// The CPU of an idle thread (TID 0), 0 otherwise.
    pub cpu: u32,
    /// Stable row id: trace, TID and a disambiguator (CPU of an idle
    /// thread, or generation of a reused TID), so sorting by id sorts by
    /// TID.
    pub row: RowId,
    /// First seen.
    pub birth: Time,
    /// Freed, or the end of the trace.
    pub end: Time,
    /// Change times, increasing.
    pub times: Column<Time>,
    /// State code from each change on ([`thread_code`]).
    pub codes: Column<u8>,
    /// Summary of the changes (class: the state code).
    pub blocks: Blocks,
    /// Drawn events: time and [`mark`] kind, in time order.
    pub marks: Column<Mark>,
}

impl ThreadRow for ThreadRecord {
    fn times(&self) -> &Column<Time> {
        &self.times
    }
    fn codes(&self) -> &Column<u8> {
        &self.codes
    }
    fn running_mode(&self, code: u8) -> Option<u8> {
        running_cpu_mode(code, self.tid)
    }
}

/// The CPU mode code a thread `tid` in state code `code` shows on its CPU,
/// when it is running.
fn running_cpu_mode(code: u8, tid: i64) -> Option<u8> {
    match decode_thread_code(code) {
        (ThreadStatus::Run, mode) => Some(CpuMode::of(mode, tid).code()),
        _ => None,
    }
}

/// Whether CPU change `last` is implied by the row of the thread it runs
/// (`series[last.1]`, whose head is `heads[last.1]`), `prev` being the
/// change before it, as `cpu_row` defines it: that thread's first change
/// after `prev` is at `last`'s time, to running in `last`'s mode. Not
/// when that change is the first of a placeholder (`placeholder[r].0`),
/// in a part of a parallel pass: the join may drop it from the joined row
/// (see `parallel_pass::CpuJob`).
#[inline]
pub(super) fn implied_by_thread(
    series: &[RecordLists],
    heads: &[ThreadHead],
    placeholder: &[(bool, bool)],
    prev: CpuChange,
    last: CpuChange,
) -> bool {
    let r = last.1 as usize;
    let (Some(s), Some(h)) = (series.get(r), heads.get(r)) else {
        return false;
    };
    match s.first_change_after(prev.0, last.0) {
        Some((0, _)) if placeholder.get(r).is_some_and(|p| p.0) => {
            // Not met: the pass records the running thread's state at each
            // event of its CPU, so a CPU change follows a change of the
            // thread's row in the part. Listing the change is exact all
            // the same, and the tests check that it is not met.
            if cfg!(debug_assertions) {
                panic!("a CPU change implied by a placeholder's first change");
            }
            false
        }
        Some((_, code)) => running_cpu_mode(code, h.tid) == Some(last.2),
        None => false,
    }
}

/// An interrupt line or softirq vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LineKind {
    /// A hardware IRQ line.
    Irq,
    /// A softirq vector.
    SoftIrq,
}

/// Activity of an IRQ line or softirq vector.
#[derive(Debug, Clone, PartialEq)]
pub struct LineRecord {
    /// Trace index.
    pub trace: u32,
    /// IRQ or softirq.
    pub kind: LineKind,
    /// Line or vector number.
    pub number: u64,
    /// Handler name (IRQs), when the trace gave it.
    pub name: Option<Arc<str>>,
    /// Change times, increasing.
    pub times: Column<Time>,
    /// 0 idle, 1 raised (softirq pending), 2 busy.
    pub codes: Column<u8>,
    /// CPU servicing it while busy.
    pub cpus: Column<u32>,
    /// Summary of the changes (class: the code, [`NO_CLASS`] while idle).
    pub blocks: Blocks,
}

/// An arrow between two thread records (plain data of a fixed layout,
/// which the analysis store maps back as it is).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ArrowRecord {
    /// Where it leaves.
    pub from_time: Time,
    /// Where it arrives.
    pub to_time: Time,
    /// Thread record it leaves from.
    pub from: u32,
    /// Thread record it arrives at.
    pub to: u32,
}

/// Everything the kernel pass collected, immutable once complete.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelData {
    /// First and last event times.
    pub span: (Time, Time),
    /// Trace names, by index.
    pub trace_names: Vec<String>,
    /// Thread records, in order of appearance.
    pub threads: Vec<Arc<ThreadRecord>>,
    /// CPU records, sorted by trace then CPU.
    pub cpus: Vec<CpuRecord>,
    /// IRQ lines and softirq vectors, sorted by trace, kind, number.
    pub lines: Vec<LineRecord>,
    /// Wake-ups: waker (running on the CPU of the `sched_wakeup`) at the
    /// event → wakee at its next run; sorted by `to_time` (the order they
    /// are found in, so that a partial snapshot needs no sort).
    pub wakeups: Column<ArrowRecord>,
    /// Longest wake-up arrow (to find those crossing a window).
    pub max_wakeup_span: Time,
    /// CPU hand-offs: the thread switched out → the thread switched in, at
    /// the `sched_switch`; sorted by time.
    pub switches: Column<ArrowRecord>,
    /// `sched_wakeup` events seen, and how many of them got an arrow (the
    /// others have no known waker, or the wakee never ran again).
    pub wakeup_events: (u64, u64),
    /// Whole-trace statistics.
    pub stats: Statistics,
    /// Whole-trace event counts in fine bins (full-range histograms).
    pub histogram: FineHistogram,
    /// Events read.
    pub events: u64,
    /// The damaged streams the pass met (it read each up to its damage).
    pub damage: Vec<StreamDamage>,
}

impl KernelData {
    /// The thread CPU `cpu` of trace `trace` was running just before
    /// `time` (an event at a `sched_switch`'s time belongs to the thread
    /// switched out, as the event list shows it); `None` where the pass
    /// has not been, or the CPU's thread is not known.
    pub fn thread_at(&self, trace: u32, cpu: u32, time: Time) -> Option<&ThreadRecord> {
        let i = self
            .cpus
            .binary_search_by_key(&(trace, cpu), |c| (c.trace, c.cpu))
            .ok()?;
        let row = self.cpus[i].row(&self.threads);
        let k = row.count_until(time.saturating_sub(1)).checked_sub(1)?;
        if time > self.span.1 {
            return None;
        }
        match row.at(k).1 {
            NO_THREAD => None,
            rec => self.threads.get(rec as usize).map(|t| &**t),
        }
    }

    /// Record of the thread with row id `row`.
    pub fn thread_by_row(&self, row: RowId) -> Option<usize> {
        self.threads.iter().position(|t| t.row == row)
    }

    /// Bytes of heap held by the change lists, arrows and marks (the bulk
    /// of the data; names and statistics excluded).
    pub fn heap_bytes(&self) -> usize {
        let threads: usize = self
            .threads
            .iter()
            .map(|t| {
                t.times.heap_bytes()
                    + t.codes.heap_bytes()
                    + t.blocks.heap_bytes()
                    + t.marks.heap_bytes()
            })
            .sum();
        let cpus: usize = self.cpus.iter().map(CpuRecord::heap_bytes).sum();
        let lines: usize = self
            .lines
            .iter()
            .map(|l| {
                l.times.heap_bytes()
                    + l.codes.heap_bytes()
                    + l.cpus.heap_bytes()
                    + l.blocks.heap_bytes()
            })
            .sum();
        threads
            + cpus
            + lines
            + self.threads.capacity() * std::mem::size_of::<ThreadRecord>()
            + self.wakeups.heap_bytes()
            + self.switches.heap_bytes()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    Switch,
    Wakeup,
    Waking,
    Fork,
    Exec,
    Exit,
    Free,
    Statedump,
    Irq,
    SoftIrq,
}

fn classify(name: &str) -> Kind {
    match name {
        "sched_switch" => Kind::Switch,
        "sched_wakeup" | "sched_wakeup_new" => Kind::Wakeup,
        "sched_waking" => Kind::Waking,
        "sched_process_fork" => Kind::Fork,
        "sched_process_exec" => Kind::Exec,
        "sched_process_exit" => Kind::Exit,
        "sched_process_free" => Kind::Free,
        "lttng_statedump_process_state" => Kind::Statedump,
        "irq_handler_entry" | "irq_handler_exit" => Kind::Irq,
        "softirq_raise" | "softirq_entry" | "softirq_exit" | "irq_softirq_raise"
        | "irq_softirq_entry" | "irq_softirq_exit" => Kind::SoftIrq,
        _ => Kind::Other,
    }
}

/// A payload integer member, by name (LTTng's `_name` spelling too).
pub fn payload_i64(e: &Event<'_>, name: &str) -> Option<i64> {
    e.scope(Scope::EventPayload)?.field(name)?.value()?.as_i64()
}

/// Where [`payload_i64`] finds a member in the payload of one event
/// class, located once per class: matching its name against every member
/// before it, for each switch, wake-up or interrupt, was 2 % of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// No member of that name, or a structure (which has no value).
    Absent,
    /// The value at this index of the payload's values: every member
    /// before it takes exactly one value per scalar, whatever the event.
    Index(usize),
    /// After a member whose values depend on the event (an array, a
    /// variant): found by name every time.
    ByName,
}

/// Values a field of type `ty` always takes, whatever was decoded (one
/// per scalar or text; what an array's or a variant's take depends on
/// the event).
fn exact_span(ty: &FieldType) -> Option<usize> {
    match ty {
        FieldType::Integer(_) | FieldType::Float(_) | FieldType::String(_) | FieldType::Enum(_) => {
            Some(1)
        }
        FieldType::Array(a) if is_text_element(&a.element) => Some(1),
        FieldType::Sequence(q) if is_text_element(&q.element) => Some(1),
        FieldType::Struct(st) => st.fields.iter().map(|f| exact_span(&f.ty)).sum(),
        _ => None,
    }
}

impl Member {
    /// The member `name` of payloads of type `payload`, as
    /// [`FieldRef::field`](traceloom_ctf::event::FieldRef::field) finds
    /// it (the first whose name, or name without its escaping underscore,
    /// is `name`).
    fn locate(payload: Option<&FieldType>, name: &str) -> Member {
        let Some(FieldType::Struct(st)) = payload else {
            return Member::Absent;
        };
        let mut index = Some(0usize);
        for f in &st.fields {
            if f.name == name || display_name(&f.name) == name {
                return match (&f.ty, index) {
                    (FieldType::Struct(_), _) => Member::Absent,
                    (_, Some(i)) => Member::Index(i),
                    (_, None) => Member::ByName,
                };
            }
            index = match (index, exact_span(&f.ty)) {
                (Some(i), Some(w)) => Some(i + w),
                _ => None,
            };
        }
        Member::Absent
    }

    /// Its value in `e` as an integer, the member being `name`: what
    /// [`payload_i64`] gives.
    #[inline]
    fn read(self, e: &Event<'_>, name: &str) -> Option<i64> {
        match self {
            Member::Absent => None,
            Member::Index(i) => e.scope_values(Scope::EventPayload).get(i)?.as_i64(),
            Member::ByName => payload_i64(e, name),
        }
    }
}

/// The names of the payload members each kind of event reads.
fn member_names(kind: Kind) -> [&'static str; 2] {
    match kind {
        Kind::Switch => ["prev_tid", "next_tid"],
        Kind::Wakeup | Kind::Waking => ["tid", "target_cpu"],
        Kind::Fork => ["child_tid", ""],
        Kind::Exit | Kind::Free => ["tid", ""],
        Kind::Statedump => ["tid", "cpu"],
        Kind::Irq => ["irq", ""],
        Kind::SoftIrq => ["vec", ""],
        Kind::Other | Kind::Exec => ["", ""],
    }
}

/// What the pass knows of an event class: its kind, and where its
/// payload holds the members that kind reads.
#[derive(Debug, Clone, Copy)]
struct ClassInfo {
    kind: Kind,
    /// The address of the payload type the members were located in: an
    /// event of another payload type (two classes of one key, which
    /// `class_key` can give a damaged trace) looks them up by name.
    payload: usize,
    members: [Member; 2],
}

/// The address of a payload type (0: none), to compare.
fn type_address(ty: Option<&FieldType>) -> usize {
    ty.map_or(0, |t| t as *const FieldType as usize)
}

impl ClassInfo {
    fn new(e: &Event<'_>) -> ClassInfo {
        let kind = classify(e.name());
        let ty = e.scope_type(Scope::EventPayload);
        let names = member_names(kind);
        ClassInfo {
            kind,
            payload: type_address(ty),
            members: names.map(|n| Member::locate(ty, n)),
        }
    }

    /// Payload member `i` of this class's [`member_names`] of `e` (an
    /// event of this class), named `name`: what [`payload_i64`] gives.
    #[inline]
    fn member(&self, e: &Event<'_>, i: usize, name: &str) -> Option<i64> {
        debug_assert_eq!(member_names(self.kind)[i], name);
        let v = if type_address(e.scope_type(Scope::EventPayload)) == self.payload {
            self.members[i].read(e, name)
        } else {
            payload_i64(e, name)
        };
        debug_assert_eq!(v, payload_i64(e, name));
        v
    }
}

/// The row id of the record of thread `key` of trace `trace` that is the
/// `generation`-th of its TID (the CPU disambiguates idle threads).
pub(super) fn row_id(trace: u32, key: ThreadKey, generation: u16) -> RowId {
    let disamb = if key.tid == 0 {
        key.cpu as u64
    } else {
        generation as u64
    };
    RowId(
        ((trace as u64 & 0x7FFF) << 48)
            | ((key.tid as u64 & 0xFFFF_FFFF) << 16)
            | (disamb & 0xFFFF),
    )
}

/// A [`ThreadRecord`] while the pass builds it: its change lists are
/// apart, in a [`ThreadSeries`] (the collector keeps one of each per
/// record, and a trace can have tens of thousands of records).
#[derive(Debug, Clone)]
pub(super) struct ThreadHead {
    pub(super) trace: u32,
    pub(super) tid: i64,
    pub(super) pid: i64,
    pub(super) ppid: i64,
    pub(super) name: Arc<str>,
    pub(super) cpu: u32,
    pub(super) row: RowId,
    pub(super) birth: Time,
    pub(super) end: Time,
}

impl ThreadHead {
    /// Whether `r` has this head.
    fn heads(&self, r: &ThreadRecord) -> bool {
        self.trace == r.trace
            && self.tid == r.tid
            && self.pid == r.pid
            && self.ppid == r.ppid
            && (Arc::ptr_eq(&self.name, &r.name) || self.name == r.name)
            && self.cpu == r.cpu
            && self.row == r.row
            && self.birth == r.birth
            && self.end == r.end
    }

    /// The record, with its change lists `l`.
    pub(super) fn with_lists(self, l: ThreadLists) -> ThreadRecord {
        ThreadRecord {
            trace: self.trace,
            tid: self.tid,
            pid: self.pid,
            ppid: self.ppid,
            name: self.name,
            cpu: self.cpu,
            row: self.row,
            birth: self.birth,
            end: self.end,
            times: l.times,
            codes: l.codes,
            blocks: l.blocks,
            marks: l.marks,
        }
    }
}

/// The change lists of a thread record, as a snapshot gives them.
#[derive(Debug, Clone, Default)]
pub(super) struct ThreadLists {
    pub(super) times: Column<Time>,
    pub(super) codes: Column<u8>,
    pub(super) blocks: Blocks,
    pub(super) marks: Column<Mark>,
}

impl ThreadLists {
    /// See [`Series::settle`].
    fn settle(&mut self) -> bool {
        // Not short-circuited: each list settles.
        self.times.settle() | self.codes.settle() | self.blocks.settle() | self.marks.settle()
    }

    /// Whether any full chunk is still being written to the arena.
    fn queued(&self) -> bool {
        self.times.queued() || self.codes.queued() || self.blocks.queued() || self.marks.queued()
    }
}

/// The change lists of a thread record in the collector.
///
/// A trace can have tens of thousands of thread records, most of them
/// of threads that exited long ago: a record whose thread exited never
/// changes again (its thread is out of `KernelCollector::alive`), so it
/// is sealed ([`seal`](Self::seal)) and costs a few dozen bytes of heap
/// rather than a set of growable builders (1.2 kB inline, their unpacked
/// tails and scratch vectors besides).
#[derive(Debug)]
pub(super) enum RecordLists {
    /// Its thread lives: the lists grow.
    Growing(Box<ThreadSeries>),
    /// Its thread exited: the lists, final, back to back in the arena.
    Sealed(SealedLists, Shown),
    /// Its thread exited, but there is no arena, or the lists are too long
    /// to copy again: they stay as they were (full chunks shared, tails
    /// copied once).
    Done(Box<ThreadLists>, Shown),
}

/// The record a snapshot made of final lists, which the next snapshots
/// share while the record's head stays the same: a snapshot of a trace
/// of 80,000 thread records made each one anew, 23 MB a snapshot, and
/// the window holds two while it makes the next.
type Shown = Option<Arc<ThreadRecord>>;

impl Default for RecordLists {
    fn default() -> Self {
        RecordLists::Growing(Box::default())
    }
}

/// Largest lists a record sealed in the arena copies there (beyond that
/// its full chunks are spilled already, and the record is rare: a thread
/// with thousands of changes).
const SEAL_MAX_BYTES: usize = 16 << 10;

impl RecordLists {
    /// The lists so far (sharing what is packed, see
    /// [`ColumnBuilder::snapshot`]).
    pub(super) fn lists(&mut self) -> ThreadLists {
        match self {
            RecordLists::Growing(s) => s.lists(),
            RecordLists::Sealed(s, _) => s.lists(),
            RecordLists::Done(l, _) => (**l).clone(),
        }
    }

    /// The record of `head` with these lists, for a snapshot: made anew
    /// while the lists grow, shared between snapshots once they are final
    /// (and `head` unchanged).
    pub(super) fn record(&mut self, head: &ThreadHead) -> Arc<ThreadRecord> {
        let shown = match self {
            RecordLists::Growing(s) => return Arc::new(head.clone().with_lists(s.lists())),
            RecordLists::Sealed(_, shown) | RecordLists::Done(_, shown) => shown,
        };
        if let Some(r) = shown.as_ref().filter(|r| head.heads(r)) {
            return r.clone();
        }
        let r = Arc::new(head.clone().with_lists(self.lists()));
        if let RecordLists::Sealed(_, shown) | RecordLists::Done(_, shown) = self {
            *shown = Some(r.clone());
        }
        r
    }

    /// [`record`](Self::record), consuming the lists: the record a
    /// snapshot shares when it has `head`, else one made of the lists.
    pub(super) fn into_record(self, head: ThreadHead) -> Arc<ThreadRecord> {
        match self {
            RecordLists::Sealed(_, Some(r)) | RecordLists::Done(_, Some(r)) if head.heads(&r) => r,
            lists => Arc::new(head.with_lists(lists.into_lists())),
        }
    }

    /// The lists, consuming them (the builders freed).
    pub(super) fn into_lists(self) -> ThreadLists {
        match self {
            RecordLists::Growing(mut s) => s.lists(),
            RecordLists::Sealed(s, _) => s.lists(),
            RecordLists::Done(l, _) => *l,
        }
    }

    /// The index and state code of the thread's first change after
    /// `after`, when that change is at `t` and among the thread's last few
    /// changes (`None` otherwise: a CPU row then lists its change,
    /// `cpu_row`).
    pub(super) fn first_change_after(&self, after: Time, t: Time) -> Option<(usize, u8)> {
        match self {
            RecordLists::Growing(s) => {
                // The last changes are unpacked (the last BLOCK at least):
                // searched as slices, at every change of every CPU row.
                // The search passes over SCAN_BACK changes at most, so the
                // change before the one it finds is in these too.
                let n = s.times.len();
                let from = n.saturating_sub(SCAN_BACK + 2);
                if let (Some(ts), Some(cs)) = (s.times.unpacked(from, n), s.codes.unpacked(from, n))
                {
                    return first_change_after(|k| ts[k], |k| cs[k], ts.len(), after, t)
                        .map(|(k, c)| (from + k, c));
                }
                first_change_after(|k| s.times.get(k), |k| s.codes.get(k), n, after, t)
            }
            RecordLists::Sealed(l, _) => {
                let l = l.lists();
                first_change_after(
                    |k| l.times.at(k),
                    |k| l.codes.at(k),
                    l.times.len(),
                    after,
                    t,
                )
            }
            RecordLists::Done(l, _) => first_change_after(
                |k| l.times.at(k),
                |k| l.codes.at(k),
                l.times.len(),
                after,
                t,
            ),
        }
    }

    /// The growing lists, to change. Only the records of living threads
    /// change, and those are not sealed; a sealed record is unsealed here
    /// all the same (its items copied into new builders), so that what is
    /// computed never depends on when records are sealed.
    #[inline]
    pub(super) fn grow(&mut self) -> &mut ThreadSeries {
        if !matches!(self, RecordLists::Growing(_)) {
            self.unseal();
        }
        match self {
            RecordLists::Growing(s) => s,
            _ => unreachable!("made growing by `unseal`"),
        }
    }

    /// Makes sealed lists growing again (see [`grow`](Self::grow)).
    #[cold]
    #[inline(never)]
    fn unseal(&mut self) {
        let l = std::mem::take(self).into_lists();
        let mut s = ThreadSeries::default();
        for (t, c) in l.times.chunks().zip(l.codes.chunks()) {
            s.times.extend_from_slice(&t);
            s.codes.extend_from_slice(&c);
        }
        s.sync();
        for m in l.marks.chunks() {
            s.marks.extend_from_slice(&m);
        }
        *self = RecordLists::Growing(Box::new(s));
    }

    /// Seals the lists of a record whose thread exited: copied back to
    /// back into `arena` when there is one and they are short (nearly
    /// always: most records of a trace of many threads are of short-lived
    /// ones), else kept as a snapshot, their full chunks spilled.
    pub(super) fn seal(&mut self, arena: Option<&Arc<Arena>>) {
        let RecordLists::Growing(s) = self else {
            return;
        };
        if let Some(sealed) = arena.and_then(|a| SealedLists::copy(&s.lists(), a)) {
            *self = RecordLists::Sealed(sealed, None);
            return;
        }
        if let Some(a) = arena {
            s.spill(a);
        }
        *self = RecordLists::Done(Box::new(s.lists()), None);
    }

    /// Moves the full chunks of growing lists to `arena`.
    pub(super) fn spill(&mut self, arena: &Arc<Arena>) {
        if let RecordLists::Growing(s) = self {
            s.spill(arena);
        }
    }

    /// Final lists read what their arena wrote since there, off the heap;
    /// whether nothing of them is left to be written.
    pub(super) fn settle(&mut self) -> bool {
        let (settled, shown, left) = match self {
            RecordLists::Growing(_) => return true,
            RecordLists::Sealed(s, shown) => {
                let settled = s.settle();
                (settled, shown, s.pending.is_some())
            }
            RecordLists::Done(l, shown) => {
                let settled = l.settle();
                (settled, shown, l.queued())
            }
        };
        if settled {
            // The record shown holds the heap copies: made again.
            *shown = None;
        }
        !left
    }
}

/// The parts of a thread record's lists, in the order [`SealedLists`]
/// keeps them: times, codes and marks (each packed bytes, block offsets,
/// first items, tail) and the block summaries.
const SEALED_PARTS: usize = 13;

/// A sealed record's lists: every part of its columns copied back to back
/// into the arena with one write ([`SealBatch`]), read there in place as
/// spilled chunks are.
pub(super) struct SealedLists {
    arena: Arc<Arena>,
    /// Offset of the copy in the arena.
    at: u64,
    /// Bytes of the copy.
    bytes: u32,
    /// Items in each part.
    lens: [u32; SEALED_PARTS],
    /// The copy on the heap while the arena's is being written
    /// ([`SealBatch::submit`]).
    pending: Option<Arc<Words>>,
}

impl std::fmt::Debug for SealedLists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedLists(at {}, {:?})", self.at, self.lens)
    }
}

impl SealedLists {
    /// A copy of `l` in `arena`; `None` when its parts are too long (see
    /// [`SEAL_MAX_BYTES`]) or the arena cannot take it.
    fn copy(l: &ThreadLists, arena: &Arc<Arena>) -> Option<SealedLists> {
        fn size<T: Item>(c: &Column<T>) -> usize {
            c.packed_bytes() + 24
        }
        let total = size(&l.times)
            + size(&l.codes)
            + size(&l.marks)
            + l.blocks.len() * std::mem::size_of::<BlockSummary>();
        if total > SEAL_MAX_BYTES {
            return None;
        }
        let mut batch = SealBatch::default();
        let mut lens = Vec::with_capacity(SEALED_PARTS);
        fn column<T: Item>(c: &Column<T>, batch: &mut SealBatch, lens: &mut Vec<u32>) {
            let p = c.parts();
            lens.push(batch.push_series(&p.bytes));
            lens.push(batch.push_series(&p.locs));
            lens.push(batch.push_series(&p.firsts));
            lens.push(batch.push_series(&p.tail));
        }
        column(&l.times, &mut batch, &mut lens);
        column(&l.codes, &mut batch, &mut lens);
        column(&l.marks, &mut batch, &mut lens);
        lens.push(batch.push_series(&l.blocks));
        // Not waited for: the window's pass seals on the main loop.
        let written = batch.submit(arena)?;
        Some(SealedLists {
            arena: arena.clone(),
            at: written.offset() as u64,
            bytes: u32::try_from(batch.len()).ok()?,
            lens: lens.try_into().ok()?,
            pending: written.pending().cloned(),
        })
    }

    /// Drops the copy on the heap once the arena's is written; whether it
    /// did.
    fn settle(&mut self) -> bool {
        let end = self.at as usize + self.bytes as usize;
        let done = self.pending.is_some() && self.arena.written() >= end;
        if done {
            self.pending = None;
        }
        done
    }

    /// The lists, read in place in the arena (no copy, no heap), or on
    /// the heap while the arena's copy is being written.
    fn lists(&self) -> ThreadLists {
        let mut parts = SealedBatch::reopen(
            &self.arena,
            self.at as usize,
            self.bytes as usize,
            self.pending.clone(),
        );
        let mut lens = self.lens.iter().map(|&n| n as usize);
        // The parts in the order `copy` queued them.
        fn part<T: bytemuck::Pod>(
            parts: &mut SealedBatch,
            lens: &mut impl Iterator<Item = usize>,
        ) -> Series<T> {
            parts.next(lens.next().expect("a length per part"))
        }
        fn column<T: Item>(
            parts: &mut SealedBatch,
            lens: &mut impl Iterator<Item = usize>,
        ) -> Column<T> {
            let bytes = part(parts, lens);
            let locs = part(parts, lens);
            let firsts = part(parts, lens);
            let tail = part(parts, lens);
            Column::from_parts(ColumnParts {
                bytes,
                locs,
                firsts,
                tail,
            })
            .expect("sealed from a column")
        }
        ThreadLists {
            times: column(&mut parts, &mut lens),
            codes: column(&mut parts, &mut lens),
            marks: column(&mut parts, &mut lens),
            blocks: part(&mut parts, &mut lens),
        }
    }
}

/// Changes from the end of a thread's row [`RecordLists::first_change_after`]
/// passes over, at most, before it gives up: a CPU row's change is
/// classified when the CPU's next one comes, and the thread it ran has
/// rarely changed more than once since.
const SCAN_BACK: usize = 4;

/// [`RecordLists::first_change_after`] over a row of `n` changes.
fn first_change_after(
    time: impl Fn(usize) -> Time,
    code: impl Fn(usize) -> u8,
    n: usize,
    after: Time,
    t: Time,
) -> Option<(usize, u8)> {
    let mut i = n;
    while i > 0 && time(i - 1) > t {
        i -= 1;
        if n - i > SCAN_BACK {
            return None;
        }
    }
    let e = i.checked_sub(1)?;
    let first = time(e) == t && (e == 0 || time(e - 1) <= after);
    first.then(|| (e, code(e)))
}

/// The growing change lists of a thread record.
#[derive(Debug, Default)]
pub(super) struct ThreadSeries {
    pub(super) times: ColumnBuilder<Time>,
    pub(super) codes: ColumnBuilder<u8>,
    pub(super) blocks: BlocksBuilder,
    pub(super) marks: ColumnBuilder<Mark>,
}

impl ThreadSeries {
    /// The lists so far.
    fn lists(&mut self) -> ThreadLists {
        ThreadLists {
            times: self.times.snapshot(),
            codes: self.codes.snapshot(),
            blocks: self.blocks.snapshot(),
            marks: self.marks.snapshot(),
        }
    }

    /// Moves the full chunks to `arena`.
    pub(super) fn spill(&mut self, arena: &Arc<Arena>) {
        self.times.spill(arena);
        self.codes.spill(arena);
        self.blocks.spill(arena);
        self.marks.spill(arena);
    }

    pub(super) fn sync(&mut self) {
        let codes = &self.codes;
        self.blocks.sync(&self.times, || {
            let mut codes = codes.cursor();
            move |k| codes.get(k)
        });
    }

    /// Records that the thread's state code is `code` at `t`: a change
    /// when it differs from the last (several at one instant: the last
    /// wins). The code before, when it was a change.
    #[inline]
    pub(super) fn change(&mut self, t: Time, code: u8) -> Option<Option<u8>> {
        let prev = self.codes.last();
        if prev == Some(code) {
            return None;
        }
        if self.times.last() == Some(t) {
            self.codes.pop();
            self.times.pop();
            if self.codes.last() != Some(code) {
                self.times.push(t);
                self.codes.push(code);
            }
        } else {
            self.times.push(t);
            self.codes.push(code);
        }
        self.sync();
        Some(prev)
    }
}

/// The growing lists of a CPU record: the changes its threads' rows do
/// not imply (`cpu_row`), each classified when the next change comes, and
/// the summary of the whole row, tallied as it goes. The whole row is not
/// kept (unless asked, for checks): it is read through the threads' rows
/// (a snapshot's [`CpuRow`](super::cpu_row::CpuRow)), and keeping it cost
/// about a tenth of the pass's instructions.
#[derive(Debug, Default)]
pub(super) struct CpuSeries {
    /// Number of changes of the row.
    pub(super) len: usize,
    /// The last change, not classified until the next comes (or the end).
    pub(super) last: Option<CpuChange>,
    /// The change before the last.
    pub(super) before_last: Option<CpuChange>,
    /// Whether the last change is classified (listed if explicit).
    pub(super) last_closed: bool,
    pub(super) explicit: ExplicitLists,
    pub(super) blocks: BlockTally,
    /// Set by a parallel pass's join: the summary of the blocks from
    /// `blocks.closed()` on is made at the end, from the joined rows.
    pub(super) summarize_at_end: bool,
    /// No change before this one is implied: 2 in a part that follows
    /// others, whose first change may join the one before it (see
    /// `parallel_pass::CpuJob`).
    pub(super) first_implied: usize,
    /// The whole row, when kept for checks
    /// ([`KernelCollector::keep_whole_cpu_rows`]).
    pub(super) whole: Option<Box<WholeCpuRow>>,
}

/// A CPU row recorded whole.
#[derive(Debug, Default)]
pub(super) struct WholeCpuRow {
    times: ColumnBuilder<Time>,
    threads: ColumnBuilder<u32>,
    modes: ColumnBuilder<u8>,
}

impl CpuSeries {
    /// Moves the full chunks to `arena`.
    pub(super) fn spill(&mut self, arena: &Arc<Arena>) {
        self.blocks.spill(arena);
        self.explicit.spill(arena);
        if let Some(w) = &mut self.whole {
            w.times.spill(arena);
            w.threads.spill(arena);
            w.modes.spill(arena);
        }
    }

    /// Records that the CPU runs thread record `thread` in mode `mode` at
    /// `t` (several at one instant: the last wins); whether it changed.
    /// A change at a new instant closes the last one, which is listed
    /// explicit unless `implied(change before it, it)`.
    #[inline]
    pub(super) fn change(
        &mut self,
        t: Time,
        thread: u32,
        mode: u8,
        implied: impl FnOnce(CpuChange, CpuChange) -> bool,
    ) -> bool {
        let class = cpu_class(thread, mode);
        match self.last {
            Some((_, r, m)) if (r, m) == (thread, mode) => return false,
            Some((lt, _, _)) if lt == t => {
                self.last = Some((t, thread, mode));
                self.blocks.set_last_class(class);
                if let Some(w) = &mut self.whole {
                    w.threads.set_last(thread);
                    w.modes.set_last(mode);
                }
                return true;
            }
            _ => {}
        }
        self.close_last(implied);
        self.len += 1;
        self.last = Some((t, thread, mode));
        self.last_closed = false;
        self.blocks.push(t, class);
        if let Some(w) = &mut self.whole {
            w.times.push(t);
            w.threads.push(thread);
            w.modes.push(mode);
        }
        true
    }

    /// Classifies the last change (no other can come at its instant).
    #[inline]
    pub(super) fn close_last(&mut self, implied: impl FnOnce(CpuChange, CpuChange) -> bool) {
        let Some(last) = self.last else { return };
        if self.last_closed {
            return;
        }
        let k = self.len - 1;
        let is_implied = k >= self.first_implied
            && match self.before_last {
                Some(p) => last.1 != NO_THREAD && p.1 == last.1 && implied(p, last),
                None => false,
            };
        if !is_implied {
            self.explicit.push(k, last);
        }
        self.before_last = Some(last);
        self.last_closed = true;
    }

    /// The whole row as a record, when kept: its summary made afresh
    /// from it, not tallied (what checks compare the tally with).
    pub(super) fn whole_record(&mut self, trace: u32, cpu: u32) -> Option<CpuRecord> {
        self.whole.as_mut().map(|w| {
            let times = w.times.snapshot();
            let (threads, modes) = (w.threads.snapshot(), w.modes.snapshot());
            let classes: Vec<u8> = threads
                .iter()
                .zip(modes.iter())
                .map(|(r, m)| cpu_class(r, m))
                .collect();
            let blocks = super::steps::blocks_of(&times.to_vec(), |k| classes[k]);
            CpuRecord {
                trace,
                cpu,
                times,
                threads,
                modes,
                implied: None,
                blocks,
            }
        })
    }

    /// The record of CPU `cpu` of trace `trace` so far: its explicit
    /// changes, the last listed too while it is not classified (listing
    /// a change explicit is always exact).
    pub(super) fn record(&mut self, trace: u32, cpu: u32) -> CpuRecord {
        let blocks = self.blocks.snapshot();
        match self.last {
            Some(last) if !self.last_closed => {
                self.explicit.push(self.len - 1, last);
                let r = self.explicit.record(trace, cpu, self.len, blocks);
                self.explicit.pop();
                r
            }
            _ => self.explicit.record(trace, cpu, self.len, blocks),
        }
    }

    /// Summarizes the changes from `blocks.closed() × BLOCK` on, reading
    /// them in `row`, the record's row in the result (see
    /// `summarize_at_end`).
    pub(super) fn summarize_rest<T: ThreadRow>(
        &mut self,
        row: &CpuRow<'_, T>,
        arena: Option<&Arc<Arena>>,
    ) {
        self.blocks.reopen();
        let from = self.blocks.closed() * super::steps::BLOCK;
        row.for_each_from(from, |(t, r, m)| self.blocks.push(t, cpu_class(r, m)));
        if let Some(a) = arena {
            self.blocks.spill(a);
        }
    }
}

/// Summary class of a CPU change: its mode, unless nothing is known.
fn cpu_class(thread: u32, mode: u8) -> u8 {
    if thread == NO_THREAD && CPU_MODES[mode as usize] == CpuMode::Unknown {
        NO_CLASS
    } else {
        mode
    }
}

/// The growing change lists of a line record.
#[derive(Debug, Default)]
pub(super) struct LineSeries {
    pub(super) times: ColumnBuilder<Time>,
    pub(super) codes: ColumnBuilder<u8>,
    pub(super) cpus: ColumnBuilder<u32>,
    pub(super) blocks: BlocksBuilder,
}

impl LineSeries {
    /// Moves the full chunks to `arena`.
    pub(super) fn spill(&mut self, arena: &Arc<Arena>) {
        self.times.spill(arena);
        self.codes.spill(arena);
        self.cpus.spill(arena);
        self.blocks.spill(arena);
    }

    pub(super) fn sync(&mut self) {
        let codes = &self.codes;
        self.blocks.sync(&self.times, || {
            let mut codes = codes.cursor();
            move |k| match codes.get(k) {
                0 => NO_CLASS,
                c => c,
            }
        });
    }

    /// Records that the line is in state `code`, serviced by `cpu`, at `t`
    /// (several at one instant: the last wins); whether it changed.
    pub(super) fn change(&mut self, t: Time, code: u8, cpu: u32) -> bool {
        if self.codes.last() == Some(code) && self.cpus.last() == Some(cpu) {
            return false;
        }
        if self.times.last() == Some(t) {
            self.codes.set_last(code);
            self.cpus.set_last(cpu);
        } else {
            self.times.push(t);
            self.codes.push(code);
            self.cpus.push(cpu);
        }
        self.sync();
        true
    }
}

/// The request data of the kernel pass while it runs, and once it is
/// complete (then with its statistics finished: [`snapshot`](Self::snapshot)
/// gives the final [`KernelData`]).
///
/// The change lists grow in [`ColumnBuilder`]s, so that
/// [`snapshot`](Self::snapshot) shares everything already frozen with the
/// snapshots before it: its cost is O(records) pointer copies plus, for
/// the lists that changed since the last snapshot, a copy of their
/// unpacked tail (fewer than 128 items) and of the partial last chunks of
/// their packed bytes, block offsets and first items, whatever the size of
/// the trace read so far.
#[derive(Debug)]
pub struct KernelCollector {
    span: (Time, Time),
    pub(super) trace_names: Vec<String>,
    /// Records without their change lists (kept in `thread_series`).
    pub(super) threads: Vec<ThreadHead>,
    pub(super) thread_series: Vec<RecordLists>,
    pub(super) cpus: Vec<CpuRecord>,
    pub(super) cpu_series: Vec<CpuSeries>,
    pub(super) lines: Vec<LineRecord>,
    pub(super) line_series: Vec<LineSeries>,
    pub(super) wakeups: ColumnBuilder<ArrowRecord>,
    pub(super) max_wakeup_span: Time,
    pub(super) switches: ColumnBuilder<ArrowRecord>,
    pub(super) alive: FastMap<(u32, ThreadKey), u32>,
    pub(super) generations: FastMap<(u32, i64), u16>,
    /// Per trace, the record of each CPU (sparse: see [`CpuMap`]).
    pub(super) cpu_index: Vec<CpuMap<u32>>,
    pub(super) line_index: FastMap<(u32, LineKind, u64), u32>,
    /// What is known of each event class seen, by its slot.
    classes: Vec<ClassInfo>,
    class_slots: ClassSlots,
    pre_running: Option<ThreadKey>,
    pub(super) pending_wakeups: FastMap<u32, Vec<(Time, u32)>>,
    pub(super) wakeup_events: u64,
    pub(super) stats: Option<StatsCollector>,
    /// The statistics once the pass ended, before their conversion (done
    /// by the next [`KernelCollector::snapshot`], off the main loop in the
    /// GUI).
    pub(super) closed_stats: Option<StatsPart>,
    pub(super) result: Option<Statistics>,
    pub(super) histogram: FineHistogram,
    pub(super) last_time: Time,
    pub(super) events: u64,
    pub(super) damage: Vec<StreamDamage>,
    /// Where each damaged stream leaves rows without data.
    gaps: GapTracker,
    /// Where full chunks go every `spill_every` events, if anywhere.
    pub(super) arena: Option<Arc<Arena>>,
    /// The records sealed since their lists were last found written in
    /// the arena ([`RecordLists::settle`]): looked at each spill round,
    /// rather than every record.
    unsettled: Vec<u32>,
    pub(super) spill_every: u64,
    /// The event count at which to spill next (a multiple of
    /// `spill_every`).
    next_spill: u64,
    /// A window's collector, not started at the first event: every row
    /// the state knows is seeded, at this time (the window's start, no
    /// event lying between it and the first event seen).
    seed_pending: Option<Time>,
    /// A part of a parallel pass after the first: at its first event,
    /// every thread of the state gets a placeholder record standing for
    /// the record the parts before leave alive ([`crate::model::parallel_pass`]).
    pub(super) placeholders_pending: bool,
    /// Per thread record: whether it is such a placeholder, and whether
    /// the part updated it (then its name and ids are the part's).
    pub(super) placeholder: Vec<(bool, bool)>,
    /// Whether it is such a part (its placeholders were made).
    follows: bool,
    /// Whether the CPU rows are also recorded whole
    /// ([`keep_whole_cpu_rows`](Self::keep_whole_cpu_rows)).
    whole_cpu_rows: bool,
}

impl KernelCollector {
    pub(super) fn new(
        traceset: &Traceset,
        span: (Time, Time),
        arena: Option<(Arc<Arena>, u64)>,
    ) -> Self {
        let (arena, spill_every) = match arena {
            Some((a, every)) => (Some(a), every.max(1)),
            None => (None, u64::MAX),
        };
        KernelCollector {
            span,
            trace_names: traceset
                .traces()
                .map(|t| {
                    t.name
                        .clone()
                        .unwrap_or_else(|| t.path.display().to_string())
                })
                .collect(),
            threads: Vec::new(),
            thread_series: Vec::new(),
            cpus: Vec::new(),
            cpu_series: Vec::new(),
            lines: Vec::new(),
            line_series: Vec::new(),
            wakeups: ColumnBuilder::new(),
            max_wakeup_span: 0,
            switches: ColumnBuilder::new(),
            alive: FastMap::default(),
            generations: FastMap::default(),
            cpu_index: Vec::new(),
            line_index: FastMap::default(),
            classes: Vec::new(),
            class_slots: ClassSlots::default(),
            pre_running: None,
            pending_wakeups: FastMap::default(),
            wakeup_events: 0,
            stats: Some(StatsCollector::new(None, None)),
            closed_stats: None,
            result: None,
            histogram: FineHistogram::new(span),
            last_time: span.0,
            events: 0,
            damage: Vec::new(),
            gaps: GapTracker::new(traceset),
            arena,
            unsettled: Vec::new(),
            spill_every,
            next_spill: spill_every,
            seed_pending: None,
            placeholders_pending: false,
            follows: false,
            whole_cpu_rows: false,
            placeholder: Vec::new(),
        }
    }

    /// Records every thread, CPU, IRQ line and softirq vector of `state`
    /// as it is at `t`: the rows of a collector that starts in the middle
    /// of the trace (a window), restored from a checkpoint.
    fn seed(&mut self, state: &TracesetState, t: Time) {
        for (ti, ts) in state.traces.iter().enumerate() {
            let trace = ti as u32;
            let keys: Vec<ThreadKey> = ts.threads.keys().copied().collect();
            for k in keys {
                self.update_thread(ts, trace, k, t);
            }
            let cpus: Vec<u32> = ts.cpus.iter().map(|(c, _)| c).collect();
            for c in cpus {
                self.update_cpu(ts, trace, c, t);
            }
            let irqs: Vec<u64> = ts.irqs.keys().copied().collect();
            for n in irqs {
                self.update_line(ts, trace, LineKind::Irq, n, t);
            }
            let softirqs: Vec<u64> = ts.softirqs.keys().copied().collect();
            for n in softirqs {
                self.update_line(ts, trace, LineKind::SoftIrq, n, t);
            }
        }
    }

    /// Sets the damaged streams the pass met so far (its session's
    /// [`Session::errors`], which the hooks do not see): the snapshots
    /// carry them, with the rows each leaves without data.
    pub fn set_damage(&mut self, damage: Vec<StreamDamage>) {
        self.damage = damage;
    }

    /// Moves every full chunk of the change lists, marks, arrows and
    /// summaries to the spill file (a walk over the records: a few ms).
    fn spill(&mut self) {
        let Some(a) = &self.arena else { return };
        for s in &mut self.thread_series {
            s.spill(a);
        }
        let series = &mut self.thread_series;
        self.unsettled.retain(|&r| !series[r as usize].settle());
        for s in &mut self.cpu_series {
            s.spill(a);
        }
        for s in &mut self.line_series {
            s.spill(a);
        }
        self.wakeups.spill(a);
        self.switches.spill(a);
        a.flush();
    }

    /// What is known of class `class`, that of event `e` (classified
    /// by the name of the first event of the class seen).
    #[inline]
    fn kind(&mut self, class: u64, e: &Event<'_>) -> ClassInfo {
        match self.class_slots.get(class) {
            Some(i) => self.classes[i as usize],
            None => self.new_class(class, e),
        }
    }

    /// [`kind`](Self::kind) of a class not seen yet.
    #[cold]
    #[inline(never)]
    fn new_class(&mut self, class: u64, e: &Event<'_>) -> ClassInfo {
        let k = ClassInfo::new(e);
        self.class_slots.insert(class, self.classes.len() as u32);
        self.classes.push(k);
        k
    }

    /// HIGH priority: the state before the event.
    pub(super) fn before(&mut self, ev: &CtfCurrent, state: &TracesetState) {
        if let Some(t) = self.seed_pending.take() {
            self.seed(state, t.min(ev.time()));
        }
        if std::mem::take(&mut self.placeholders_pending) {
            self.add_placeholders(state, ev.time());
        }
        self.pre_running = None;
        if let Some(e) = ev.event() {
            if let Some(cpu) = e.cpu_id() {
                self.pre_running = state
                    .traces
                    .get(e.trace().index)
                    .and_then(|t| t.cpus.get(u32::try_from(cpu).unwrap_or(u32::MAX)))
                    .and_then(|c| c.running);
            }
        }
        if let Some(s) = &mut self.stats {
            s.on_event(ev, state);
        }
    }

    /// A new record for thread `key`, first seen at `t`; a placeholder
    /// (see [`placeholder`](Self::placeholder)) takes no generation of the
    /// TID: its row id is the record's it stands for.
    fn create_thread(&mut self, trace: u32, key: ThreadKey, t: Time, placeholder: bool) -> u32 {
        let generation = if placeholder {
            0
        } else {
            let g = self.generations.entry((trace, key.tid)).or_insert(0);
            let v = *g;
            *g = g.wrapping_add(1);
            v
        };
        let row = row_id(trace, key, generation);
        let idx = self.threads.len() as u32;
        self.threads.push(ThreadHead {
            trace,
            tid: key.tid,
            pid: key.tid,
            ppid: 0,
            name: Arc::from(""),
            cpu: key.cpu,
            row,
            birth: t,
            end: Time::MAX,
        });
        self.thread_series.push(RecordLists::default());
        self.placeholder.push((placeholder, false));
        self.alive.insert((trace, key), idx);
        idx
    }

    /// A placeholder record for every thread of `state` (the first event
    /// of a part after the first, at `t`): the part updates them as the
    /// single pass would the records alive there, and the parts are
    /// joined by them.
    fn add_placeholders(&mut self, state: &TracesetState, t: Time) {
        self.follows = true;
        for (ti, ts) in state.traces.iter().enumerate() {
            let mut keys: Vec<ThreadKey> = ts.threads.keys().copied().collect();
            keys.sort_unstable();
            for key in keys {
                let rec = self.create_thread(ti as u32, key, t, true);
                if let Some(th) = ts.threads.get(&key) {
                    let r = &mut self.threads[rec as usize];
                    r.name = th.name.clone();
                    r.pid = th.pid;
                    r.ppid = th.ppid;
                }
            }
        }
    }

    /// Records the current state of thread `key` at `t`; returns its record.
    fn update_thread(
        &mut self,
        ts: &TraceState,
        trace: u32,
        key: ThreadKey,
        t: Time,
    ) -> Option<u32> {
        self.update_found(ts.threads.get(&key), trace, key, t)
    }

    /// [`update_thread`](Self::update_thread) with the thread of `key`
    /// already looked up in the state (`None`: not there): `after` looks
    /// up the thread running on the event's CPU once for it and for the
    /// CPU's record.
    #[inline]
    fn update_found(
        &mut self,
        th: Option<&Thread>,
        trace: u32,
        key: ThreadKey,
        t: Time,
    ) -> Option<u32> {
        let Some(th) = th else {
            if let Some(rec) = self.alive.remove(&(trace, key)) {
                self.threads[rec as usize].end = t;
                self.pending_wakeups.remove(&rec);
                // Its lists will not change again, nor its statistics.
                self.thread_series[rec as usize].seal(self.arena.as_ref());
                if self.arena.is_some() {
                    self.unsettled.push(rec);
                }
                if let Some(s) = &mut self.stats {
                    let h = &self.threads[rec as usize];
                    s.thread_gone(trace, h.pid, h.tid);
                }
            }
            return None;
        };
        let rec = match self.alive.get(&(trace, key)) {
            Some(&r) => r,
            None => self.create_thread(trace, key, t, false),
        };
        self.placeholder[rec as usize].1 = true;
        let r = &mut self.threads[rec as usize];
        if !Arc::ptr_eq(&r.name, &th.name) && !th.name.is_empty() {
            r.name = th.name.clone();
        }
        r.pid = th.pid;
        r.ppid = th.ppid;
        let code = thread_code(th.status, th.mode());
        if let Some(prev) = self.thread_series[rec as usize].grow().change(t, code) {
            self.gaps.thread_changed(rec);
            let was_running = prev.is_some_and(|c| decode_thread_code(c).0 == ThreadStatus::Run);
            if th.status == ThreadStatus::Run && !was_running {
                if let Some(list) = self.pending_wakeups.remove(&rec) {
                    for (wt, waker) in list {
                        self.max_wakeup_span = self.max_wakeup_span.max(t.saturating_sub(wt));
                        self.wakeups.push(ArrowRecord {
                            from_time: wt,
                            from: waker,
                            to_time: t,
                            to: rec,
                        });
                    }
                }
            }
        }
        Some(rec)
    }

    fn update_cpu(&mut self, ts: &TraceState, trace: u32, cpu: u32, t: Time) {
        let running = ts
            .cpus
            .get(cpu)
            .and_then(|c| c.running)
            .and_then(|k| self.alive.get(&(trace, k)).copied())
            .unwrap_or(NO_THREAD);
        let mode = cpu_mode_index(ts.cpu_mode(cpu));
        self.record_cpu(trace, cpu, running, mode, t);
    }

    /// Records that CPU `cpu` runs thread record `running` ([`NO_THREAD`]:
    /// none known) in mode `mode` (a [`CPU_MODES`] index) at `t`.
    #[inline]
    fn record_cpu(&mut self, trace: u32, cpu: u32, running: u32, mode: u8, t: Time) {
        let ti = trace as usize;
        if self.cpu_index.len() <= ti {
            self.cpu_index.resize_with(ti + 1, CpuMap::new);
        }
        let slot = self.cpu_index[ti].get_or_insert_with(cpu, || u32::MAX);
        let mut idx = *slot;
        if idx == u32::MAX {
            idx = self.cpus.len() as u32;
            *slot = idx;
            self.cpus.push(CpuRecord {
                trace,
                cpu,
                times: Default::default(),
                threads: Default::default(),
                modes: Default::default(),
                implied: None,
                blocks: Default::default(),
            });
            self.cpu_series.push(CpuSeries {
                first_implied: if self.follows { 2 } else { 0 },
                whole: self.whole_cpu_rows.then(Default::default),
                ..Default::default()
            });
        }
        let (series, heads, placeholder) = (&self.thread_series, &self.threads, &self.placeholder);
        let implied = |p, l| implied_by_thread(series, heads, placeholder, p, l);
        if self.cpu_series[idx as usize].change(t, running, mode, implied) {
            self.gaps.cpu_changed(idx);
        }
    }

    fn update_line(&mut self, ts: &TraceState, trace: u32, kind: LineKind, number: u64, t: Time) {
        let line = match kind {
            LineKind::Irq => ts.irqs.get(&number),
            LineKind::SoftIrq => ts.softirqs.get(&number),
        };
        let Some(line) = line else { return };
        let (code, cpu) = match (line.busy_on, line.pending) {
            (Some(c), _) => (2u8, c),
            (None, true) => (1, u32::MAX),
            (None, false) => (0, u32::MAX),
        };
        let idx = *self
            .line_index
            .entry((trace, kind, number))
            .or_insert_with(|| {
                self.lines.push(LineRecord {
                    trace,
                    kind,
                    number,
                    name: None,
                    times: Default::default(),
                    codes: Default::default(),
                    cpus: Default::default(),
                    blocks: Default::default(),
                });
                self.line_series.push(LineSeries::default());
                self.lines.len() as u32 - 1
            });
        if self.lines[idx as usize].name.is_none() {
            self.lines[idx as usize].name = line.name.clone();
        }
        if self.line_series[idx as usize].change(t, code, cpu) {
            self.gaps.line_changed(idx);
        }
    }

    /// DEFAULT priority: the state after the event.
    pub(super) fn after(&mut self, ev: &CtfCurrent, state: &TracesetState) {
        let Some(e) = ev.event() else { return };
        let t = ev.time();
        self.gaps.event(ev.stream().stream, t);
        self.events += 1;
        // A comparison, not a division per event.
        if self.events == self.next_spill {
            self.next_spill = self.next_spill.saturating_add(self.spill_every);
            self.spill();
        }
        self.last_time = t;
        self.histogram.add(t);
        let trace = e.trace().index as u32;
        let Some(ts) = state.traces.get(trace as usize) else {
            return;
        };
        let cpu = e
            .cpu_id()
            .map_or(0, |c| u32::try_from(c).unwrap_or(u32::MAX));
        let info = self.kind(ev.class_id(), &e);
        let kind = info.kind;
        let pre = self.pre_running.take();
        let pre_th = pre.and_then(|k| ts.threads.get(&k));
        let pre_rec = pre.and_then(|k| self.update_found(pre_th, trace, k, t));
        let post = ts.cpus.get(cpu).and_then(|c| c.running);
        let (post_th, post_rec) = match post {
            Some(k) if Some(k) != pre => {
                let th = ts.threads.get(&k);
                (th, self.update_found(th, trace, k, t))
            }
            Some(_) => (pre_th, pre_rec),
            None => (None, None),
        };
        match kind {
            Kind::Other => {}
            Kind::Switch => {
                // Normally the threads running before and after; the payload
                // says otherwise when the state did not know who ran.
                for (i, name) in ["prev_tid", "next_tid"].into_iter().enumerate() {
                    if let Some(tid) = info.member(&e, i, name) {
                        let k = ThreadKey::new(tid, cpu);
                        if Some(k) != pre && Some(k) != post {
                            self.update_thread(ts, trace, k, t);
                        }
                    }
                }
                if let (Some(from), Some(to)) = (pre_rec, post_rec) {
                    if from != to {
                        self.switches.push(ArrowRecord {
                            from_time: t,
                            from,
                            to_time: t,
                            to,
                        });
                    }
                }
            }
            Kind::Wakeup | Kind::Waking => {
                if let Some(tid) = info.member(&e, 0, "tid") {
                    let target = info
                        .member(&e, 1, "target_cpu")
                        .map_or(cpu, |c| c.clamp(0, u32::MAX as i64 - 1) as u32);
                    let wakee = self.update_thread(ts, trace, ThreadKey::new(tid, target), t);
                    if kind == Kind::Wakeup {
                        self.wakeup_events += 1;
                        if let Some(w) = wakee {
                            self.thread_series[w as usize]
                                .grow()
                                .marks
                                .push(Mark::new(t, mark::WAKEUP));
                            if let Some(waker) = pre_rec {
                                self.pending_wakeups.entry(w).or_default().push((t, waker));
                            }
                        }
                    }
                }
            }
            Kind::Fork => {
                if let Some(tid) = info.member(&e, 0, "child_tid") {
                    if let Some(c) = self.update_thread(ts, trace, ThreadKey::new(tid, cpu), t) {
                        self.thread_series[c as usize]
                            .grow()
                            .marks
                            .push(Mark::new(t, mark::FORK));
                    }
                }
            }
            Kind::Exec => {
                if let Some(r) = post_rec {
                    self.thread_series[r as usize]
                        .grow()
                        .marks
                        .push(Mark::new(t, mark::EXEC));
                }
            }
            Kind::Exit | Kind::Free => {
                if let Some(tid) = info.member(&e, 0, "tid") {
                    let r = self.update_thread(ts, trace, ThreadKey::new(tid, cpu), t);
                    if let (Kind::Exit, Some(r)) = (kind, r) {
                        self.thread_series[r as usize]
                            .grow()
                            .marks
                            .push(Mark::new(t, mark::EXIT));
                    }
                }
            }
            Kind::Statedump => {
                if let Some(tid) = info.member(&e, 0, "tid") {
                    let c = info
                        .member(&e, 1, "cpu")
                        .map_or(cpu, |c| c.clamp(0, u32::MAX as i64 - 1) as u32);
                    self.update_thread(ts, trace, ThreadKey::new(tid, c), t);
                    if let Some(run) = ts.cpus.get(c).and_then(|x| x.running) {
                        self.update_thread(ts, trace, run, t);
                    }
                    if c != cpu {
                        self.update_cpu(ts, trace, c, t);
                    }
                }
            }
            Kind::Irq => {
                if let Some(n) = info.member(&e, 0, "irq") {
                    self.update_line(ts, trace, LineKind::Irq, n as u64, t);
                }
            }
            Kind::SoftIrq => {
                if let Some(n) = info.member(&e, 0, "vec") {
                    self.update_line(ts, trace, LineKind::SoftIrq, n as u64, t);
                }
            }
        }
        if e.cpu_id().is_some() {
            // What `update_cpu` would look up again: the thread running on
            // `cpu` (`post`, as the state has it after the event, which
            // the updates above do not change) and its record, which they
            // leave as it was (updating a thread twice with one state
            // gives its record twice, and removes it from `alive` only
            // when the state no longer has it, then `post_th` is `None`).
            let running = post_rec.unwrap_or(NO_THREAD);
            let mode = match post_th {
                None => CpuMode::Unknown,
                Some(th) => th.cpu_mode(),
            };
            debug_assert_eq!(mode, ts.cpu_mode(cpu));
            debug_assert_eq!(
                running,
                post.and_then(|k| self.alive.get(&(trace, k)).copied())
                    .unwrap_or(NO_THREAD)
            );
            self.record_cpu(trace, cpu, running, cpu_mode_index(mode), t);
        }
    }

    /// At the end of the pass (on the thread servicing it): only what
    /// needs the state; the statistics are built by the next snapshot.
    fn finish_stats(&mut self, state: &TracesetState) {
        if let Some(s) = self.stats.take() {
            self.closed_stats = Some(s.into_part(Some(state)));
        }
    }

    /// Also records each CPU row whole, from now on, as the snapshots
    /// then give it (not the result, whose rows list their explicit
    /// changes): for checks of the explicit changes and of the summaries
    /// tallied, against the rows and summaries made from them whole. A
    /// parallel pass's join drops the whole rows.
    pub fn keep_whole_cpu_rows(&mut self) {
        self.whole_cpu_rows = true;
    }

    /// Events read so far, and the time of the last one (progress).
    pub fn progress(&self) -> (u64, Time) {
        (self.events, self.last_time)
    }

    /// The collected data so far, closed at the last event read (for
    /// partial renders while the pass goes on, and for the final result).
    ///
    /// Cheap: the change lists are shared with the collector (see the
    /// type's documentation), the records of exited threads with the
    /// previous snapshot; only the others' headers are copied. The
    /// first snapshot after the pass ended also builds the statistics
    /// (tens of ms on a large trace; the GUI takes it on a job thread).
    pub fn snapshot(&mut self) -> KernelData {
        if let Some(s) = self.closed_stats.take() {
            let mut st = stats::merge(vec![s]);
            st.trace_names = self.trace_names.clone();
            self.result = Some(st);
        }
        self.snapshot_deferred().finish()
    }

    /// [`snapshot`](Self::snapshot) without its costly part: the
    /// statistics counted so far are copied, not yet merged into their
    /// tree ([`DeferredSnapshot::finish`] does it, on another thread if
    /// the caller likes). What stays here is O(records).
    pub fn snapshot_deferred(&mut self) -> DeferredSnapshot {
        let (stats, pending) = match (&self.result, &self.closed_stats, &self.stats) {
            (Some(r), _, _) => (r.clone(), None),
            (None, Some(closed), _) => (self.empty_stats(), Some(closed.clone())),
            // While the pass runs: what was counted so far (the time of the
            // intervals still open is charged once they close).
            (None, None, Some(s)) => (self.empty_stats(), Some(s.partial_part())),
            (None, None, None) => (self.empty_stats(), None),
        };
        let threads = self
            .threads
            .iter()
            .zip(&mut self.thread_series)
            .map(|(t, s)| s.record(t))
            .collect();
        self.assemble(threads, stats, pending, true)
    }

    /// The final result, the collector consumed: as [`snapshot`](Self::snapshot)
    /// once the pass ended, but moving the statistics and the thread
    /// records rather than copying them, and freeing each record's
    /// builders as it goes (on a trace of 80,000 thread records the copies
    /// doubled the heap at the end of the pass).
    pub fn into_data(mut self) -> KernelData {
        // What is on its way to the spill file is read there, not kept
        // on the heap with the result.
        if let Some(a) = self.arena.clone() {
            self.spill();
            a.wait_written(a.used());
            self.spill();
            // Those of the parts a parallel pass absorbed too.
            for s in &mut self.thread_series {
                s.settle();
            }
        }
        // The CPU rows' last changes, classified now that none can follow:
        // the result keeps their explicit changes (`cpu_row`).
        {
            let (series, heads, placeholder) =
                (&self.thread_series, &self.threads, &self.placeholder);
            for s in &mut self.cpu_series {
                s.close_last(|p, l| implied_by_thread(series, heads, placeholder, p, l));
            }
        }
        // The statistics first: their merge holds the collector's cells
        // and the merged ones at once, which would otherwise come on top
        // of the records built below.
        let stats = match self.result.take() {
            Some(r) => r,
            None => {
                let part = self
                    .closed_stats
                    .take()
                    .or_else(|| self.stats.take().map(|s| s.into_part(None)));
                match part {
                    Some(p) => {
                        let mut st = stats::merge(vec![p]);
                        st.trace_names = self.trace_names.clone();
                        st
                    }
                    None => self.empty_stats(),
                }
            }
        };
        // What only the pass needed goes before the records are built.
        self.alive = FastMap::default();
        self.generations = FastMap::default();
        self.pending_wakeups = FastMap::default();
        self.placeholder = Vec::new();
        // The records are built from the last one back, the collector's
        // headers and lists shrunk as they empty: consumed in order, their
        // buffers (20 MB on a trace of 80,000 thread records) stayed whole
        // until the last record was built, the peak of the pass.
        let mut headers = std::mem::take(&mut self.threads);
        let mut series = std::mem::take(&mut self.thread_series);
        let n = headers.len().min(series.len());
        headers.truncate(n);
        series.truncate(n);
        // Their spare room (grown by doubling: up to half of them) goes
        // before the records' room is taken, not after.
        headers.shrink_to_fit();
        series.shrink_to_fit();
        let mut threads = Vec::with_capacity(n);
        while let (Some(t), Some(s)) = (headers.pop(), series.pop()) {
            threads.push(s.into_record(t));
            if headers.len() < headers.capacity() / 2 {
                headers.shrink_to_fit();
                series.shrink_to_fit();
            }
        }
        threads.reverse();
        let mut d = self.assemble(threads, stats, None, false).finish();
        self.summarize_joined(&mut d);
        d
    }

    /// Threads whose readers a CPU row read through at the join keeps
    /// (about 1.2 kB each, 5 MB a row): with 64, a CPU running thousands
    /// of threads in turn decoded the same blocks again and again.
    const SCAN_READERS: usize = 4096;

    /// The summaries of the CPU rows whose blocks a parallel pass's join
    /// left to the end (`CpuSeries::summarize_at_end`), read through the
    /// thread records of `d`, the result: a row per core at once.
    fn summarize_joined(&mut self, d: &mut KernelData) {
        let at: FastMap<(u32, u32), usize> = d
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.trace, c.cpu), i))
            .collect();
        let index = |c: &CpuRecord| at.get(&(c.trace, c.cpu)).copied();
        {
            let (cpus, threads, arena) = (&d.cpus, &d.threads, self.arena.as_ref());
            let mut jobs: Vec<(&mut CpuSeries, &CpuRecord)> = self
                .cpus
                .iter()
                .zip(&mut self.cpu_series)
                .filter(|(_, s)| s.summarize_at_end)
                .filter_map(|(c, s)| Some((s, &cpus[index(c)?])))
                .collect();
            super::cores::on_cores(&mut jobs, |(s, c)| {
                s.summarize_rest(&CpuRow::scanning(c, threads, Self::SCAN_READERS), arena);
            });
        }
        for (c, s) in self.cpus.iter().zip(&mut self.cpu_series) {
            if let (true, Some(i)) = (s.summarize_at_end, index(c)) {
                d.cpus[i].blocks = s.blocks.snapshot();
                s.summarize_at_end = false;
            }
        }
    }

    /// The snapshot around `threads` (the records with their change
    /// lists) and the statistics.
    /// With `whole_rows`, the CPU rows kept whole are given whole
    /// ([`keep_whole_cpu_rows`](Self::keep_whole_cpu_rows)).
    fn assemble(
        &mut self,
        threads: Vec<Arc<ThreadRecord>>,
        stats: Statistics,
        pending: Option<StatsPart>,
        whole_rows: bool,
    ) -> DeferredSnapshot {
        let cpus = self
            .cpus
            .iter()
            .zip(&mut self.cpu_series)
            .map(|(c, s)| match s.whole_record(c.trace, c.cpu) {
                Some(w) if whole_rows => w,
                _ => s.record(c.trace, c.cpu),
            })
            .collect();
        let lines = self
            .lines
            .iter()
            .zip(&mut self.line_series)
            .map(|(l, s)| LineRecord {
                times: s.times.snapshot(),
                codes: s.codes.snapshot(),
                cpus: s.cpus.snapshot(),
                blocks: s.blocks.snapshot(),
                ..l.clone()
            })
            .collect();
        let wakeups = self.wakeups.snapshot();
        let mut d = KernelData {
            span: (self.span.0, self.last_time.max(self.span.0)),
            trace_names: self.trace_names.clone(),
            threads,
            cpus,
            lines,
            wakeup_events: (self.wakeup_events, wakeups.len() as u64),
            wakeups,
            max_wakeup_span: self.max_wakeup_span,
            switches: self.switches.snapshot(),
            stats,
            histogram: self.histogram.clone(),
            events: self.events,
            damage: self.damage.clone(),
        };
        let (cpus, lines) = (&self.cpus, &self.lines);
        self.gaps.place(
            &mut d.damage,
            |k| (cpus[k as usize].trace, cpus[k as usize].cpu),
            |k| {
                let l = &lines[k as usize];
                (l.trace, (l.kind == LineKind::SoftIrq) as u8, l.number)
            },
        );
        finalize(&mut d);
        DeferredSnapshot {
            data: d,
            stats: pending,
        }
    }

    /// Statistics of nothing yet, over the span read so far.
    fn empty_stats(&self) -> Statistics {
        Statistics {
            begin: self.span.0,
            end: self.last_time,
            total_events: 0,
            per_name: Default::default(),
            cells: Vec::new(),
            trace_names: self.trace_names.clone(),
        }
    }
}

/// A [`KernelCollector::snapshot_deferred`]: the data with its statistics
/// still to be merged.
#[derive(Debug)]
pub struct DeferredSnapshot {
    data: KernelData,
    /// The statistics counted, to merge.
    stats: Option<StatsPart>,
}

impl DeferredSnapshot {
    /// The snapshot, its statistics merged (tens of ms on a large trace).
    pub fn finish(self) -> KernelData {
        let mut d = self.data;
        if let Some(part) = self.stats {
            let names = std::mem::take(&mut d.stats.trace_names);
            d.stats = stats::merge(vec![part]);
            d.stats.trace_names = names;
        }
        d
    }
}

pub(super) fn finalize(d: &mut KernelData) {
    let end = d.span.1;
    for t in &mut d.threads {
        if t.end == Time::MAX {
            // A record shared with another snapshot is copied.
            Arc::make_mut(t).end = end;
        }
    }
    d.cpus.sort_by_key(|c| (c.trace, c.cpu));
    d.lines.sort_by_key(|l| (l.trace, l.kind, l.number));
}

/// The collector's two event hooks on `req`: at HIGH priority the state
/// before the event, at DEFAULT the state after it.
pub(super) fn add_collector_hooks(req: &mut KernelRequest) {
    req.event.add(Priority::HIGH, |ctx| {
        if let Some(c) = ctx.data.downcast_mut::<KernelCollector>() {
            c.before(ctx.event, ctx.state);
        }
        Flow::Continue
    });
    req.event.add(Priority::DEFAULT, |ctx| {
        if let Some(c) = ctx.data.downcast_mut::<KernelCollector>() {
            c.after(ctx.event, ctx.state);
        }
        Flow::Continue
    });
}

/// The kernel pass.
#[derive(Debug)]
pub struct KernelAnalysis;

impl KernelAnalysis {
    /// The LOW-priority request reading the whole traceset; while it runs,
    /// [`Session::peek`]`::<KernelCollector>` gives the partial data; once
    /// complete, its data is the finished [`KernelCollector`] (take it with
    /// [`Session::take`]`::<KernelCollector>`), whose
    /// [`snapshot`](KernelCollector::snapshot) is the final [`KernelData`].
    /// Only what needs the state at the end of the trace (the statistics)
    /// is finished in the request's last hook, which runs inside
    /// `service()`: the final snapshot and freeing the collector (52 ms on
    /// a 1 GB trace) are left to the caller, who may do them off an
    /// interactive loop.
    pub fn request(session: &mut Session, owner: OwnerId) -> KernelRequest {
        Self::request_from(session, owner, Start::Time(Time::MIN), false)
    }

    /// [`request`](Self::request) from `start`; with `placeholders`, as a
    /// part that follows others ([`crate::model::parallel_pass`]).
    pub(super) fn request_from(
        session: &mut Session,
        owner: OwnerId,
        start: Start<CtfPosition>,
        placeholders: bool,
    ) -> KernelRequest {
        let span = session.time_span().unwrap_or((0, 0));
        // Without a spill file (none asked for, or it cannot be made) the
        // pass keeps everything on the heap.
        let arena = session
            .spill_dir()
            .and_then(|d| Arena::create(d).ok())
            .map(|a| (Arc::new(a), session.spill_every()));
        let mut collector = KernelCollector::new(session.traceset(), span, arena);
        collector.placeholders_pending = placeholders;
        let mut req = KernelRequest::new(owner, start, Box::new(collector) as Payload);
        req.priority = Priority::LOW;
        add_collector_hooks(&mut req);
        req.after_traceset.add(Priority::DEFAULT, |ctx| {
            if let Some(c) = ctx.data.downcast_mut::<KernelCollector>() {
                c.finish_stats(ctx.state);
            }
            Flow::Continue
        });
        req
    }

    /// A HIGH-priority request analysing only `window` (from the nearest
    /// checkpoint's state, which seeds every row at the window's first
    /// event): what a time graph shows of a part the whole-trace pass has
    /// not reached. No statistics; complete, its data is the
    /// [`KernelCollector`], whose snapshot covers the window.
    pub fn window_request(
        session: &mut Session,
        owner: OwnerId,
        window: traceloom_base::TimeRange,
    ) -> KernelRequest {
        let mut collector =
            KernelCollector::new(session.traceset(), (window.start, window.end), None);
        collector.stats = None;
        collector.seed_pending = Some(window.start);
        let mut req = KernelRequest::new(
            owner,
            Start::Time(window.start),
            Box::new(collector) as Payload,
        );
        req.priority = Priority::HIGH;
        req.end_time = Some(window.end);
        add_collector_hooks(&mut req);
        req
    }

    /// Runs the pass to completion on `session` (command line, tests).
    pub fn run(session: &mut Session) -> Arc<KernelData> {
        Self::run_with_progress(session, |_, _| {})
    }

    /// [`run`](Self::run), calling `progress` with the events read and
    /// the time of the last one every million events or so (a progress
    /// bar).
    pub fn run_with_progress(
        session: &mut Session,
        progress: impl FnMut(u64, Time),
    ) -> Arc<KernelData> {
        Arc::new(Self::run_to_end(session, progress).into_data())
    }

    /// The pass of [`run_with_progress`](Self::run_with_progress), its
    /// collector complete but not yet made into the analysis' data.
    pub(crate) fn run_to_end(
        session: &mut Session,
        mut progress: impl FnMut(u64, Time),
    ) -> KernelCollector {
        let owner = session.new_owner();
        let req = Self::request(session, owner);
        let id = session.add(req);
        while !session.is_complete(id) && session.scheduler().request(id).is_some() {
            session.service(traceloom_engine::request::Budget::events(1 << 20), || false);
            if let Some(c) = session.peek::<KernelCollector>(id) {
                let (n, t) = c.progress();
                progress(n, t);
            }
        }
        let mut collector = session
            .take::<KernelCollector>(id)
            .expect("the kernel pass completes");
        collector.set_damage(StreamDamage::all(session.errors()));
        collector
    }
}

/// Generates at `dir` a small kernel trace of `events` events where
/// threads fork and exit often (hundreds of thread records), for tests of
/// what the pass does per record; gives `dir`.
#[cfg(test)]
pub(crate) fn forking_trace(dir: &std::path::Path, events: u64, seed: u64) -> std::path::PathBuf {
    let cfg = traceloom_kernelgen::GeneratorConfig {
        events,
        seed,
        cpus: 2,
        processes: 3,
        threads_per_process: 2,
        fork_rate: 0.05,
        overwrite: true,
        ..Default::default()
    };
    traceloom_kernelgen::generate(&cfg, dir).unwrap();
    dir.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Changes, marks and instants to replay on a record's lists.
    fn replay(s: &mut RecordLists, ops: &[(u8, u8)], t: &mut Time) {
        for &(op, x) in ops {
            *t += (x % 5) as Time * 10;
            if op % 7 == 0 {
                s.grow().marks.push(Mark::new(*t, x % 4));
            } else {
                s.grow().change(*t, x % 9);
            }
        }
    }

    proptest! {
        /// A sealed record gives the lists it had (in the arena, or kept
        /// without one), and one changed after its sealing the lists of a
        /// record never sealed.
        #[test]
        fn sealed_lists_equal_growing_ones(
            ops in prop::collection::vec((0u8..64, any::<u8>()), 0..3000),
            more in prop::collection::vec((0u8..64, any::<u8>()), 0..300),
            spill in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let arena = Arc::new(Arena::create(dir.path()).unwrap());
            let arena = spill.then_some(&arena);
            let (mut never, mut sealed) = (RecordLists::default(), RecordLists::default());
            let (mut t1, mut t2) = (0, 0);
            replay(&mut never, &ops, &mut t1);
            replay(&mut sealed, &ops, &mut t2);
            if let Some(a) = arena {
                never.spill(a);
            }
            let before = sealed.lists();
            sealed.seal(arena);
            prop_assert!(!matches!(sealed, RecordLists::Growing(_)));
            let long = before.times.packed_bytes() > SEAL_MAX_BYTES / 2;
            if spill && !long {
                prop_assert!(matches!(sealed, RecordLists::Sealed(..)));
            }
            let (a, b) = (never.lists(), sealed.lists());
            prop_assert_eq!(&a.times, &b.times);
            prop_assert_eq!(&a.codes, &b.codes);
            prop_assert_eq!(&a.blocks, &b.blocks);
            prop_assert_eq!(&a.marks, &b.marks);
            prop_assert_eq!(&before.times, &b.times);
            replay(&mut never, &more, &mut t1);
            replay(&mut sealed, &more, &mut t2);
            let (a, b) = (never.into_lists(), sealed.into_lists());
            prop_assert_eq!(a.times, b.times);
            prop_assert_eq!(a.codes, b.codes);
            prop_assert_eq!(a.blocks, b.blocks);
            prop_assert_eq!(a.marks, b.marks);
        }
    }

    /// Payload members are located where `FieldRef::field` finds them:
    /// by index after members of one value each (text arrays included),
    /// by name after an array or a sequence, none for a structure.
    #[test]
    fn payload_members_are_located_as_by_name() {
        let tc = traceloom_tsdl::parse_tsdl(
            r#"/* CTF 1.8 */
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
trace { major = 1; minor = 8; byte_order = le; };
stream { id = 0; };
event {
    name = "e"; id = 0; stream_id = 0;
    fields := struct {
        integer { size = 8; align = 8; signed = 0; encoding = UTF8; } _prev_comm[16];
        int32_t _prev_tid;
        string s;
        struct { int32_t a; int32_t b; } pair;
        int32_t next_tid;
        int32_t xs[2];
        int32_t tid;
        struct { int32_t a; } cpu;
        int32_t vec;
    };
};
"#,
        )
        .expect("metadata");
        let payload = tc.streams[&0].events[&0].payload.as_deref();
        let at = |name| Member::locate(payload, name);
        assert_eq!(at("prev_tid"), Member::Index(1));
        assert_eq!(at("_prev_tid"), Member::Index(1));
        assert_eq!(at("prev_comm"), Member::Index(0));
        // Past a string (one value) and a structure of two.
        assert_eq!(at("next_tid"), Member::Index(5));
        // Past a fixed array of integers (its length, then its values).
        assert_eq!(at("tid"), Member::ByName);
        assert_eq!(at("vec"), Member::ByName);
        assert_eq!(at("cpu"), Member::Absent);
        assert_eq!(at("pair"), Member::Absent);
        assert_eq!(at("irq"), Member::Absent);
        assert_eq!(Member::locate(None, "tid"), Member::Absent);
    }

    #[test]
    fn exited_threads_statistics_are_sealed_and_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let trace = forking_trace(&dir.path().join("t"), 30_000, 9);
        let mut session = Session::open(std::slice::from_ref(&trace)).unwrap();
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        let collector: KernelCollector = session.wait(id).unwrap();
        let sealed = collector.closed_stats.as_ref().unwrap().sealed_cells();
        assert!(sealed > 100, "{sealed} cells sealed");
        let data = collector.into_data();
        // The statistics of a collector that seals nothing (no kernel
        // pass tells it of exits).
        let (b, e) = session.time_span().unwrap();
        let req = stats::range_request(owner, b, e, data.trace_names.clone());
        let id = session.add(req);
        let plain: Statistics = session.wait(id).unwrap();
        assert_eq!(plain, data.stats);
    }

    /// A session on `trace` spilling to `dir` every 1,000 events, and
    /// its kernel pass's request.
    fn spilling_pass(
        trace: &std::path::Path,
        dir: &std::path::Path,
    ) -> (Session, traceloom_engine::request::RequestId) {
        let mut session = Session::open(&[trace.to_path_buf()]).unwrap();
        session.set_spill_dir(Some(dir.to_path_buf()));
        session.set_spill_every(1000);
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        (session, id)
    }

    /// `d` with every CPU record listing its whole row (as snapshots
    /// do): results compare with snapshots so.
    pub(crate) fn whole_rows(mut d: KernelData) -> KernelData {
        let threads = d.threads.clone();
        for c in &mut d.cpus {
            let row = c.row(&threads);
            let changes: Vec<CpuChange> = (0..row.len()).map(|k| row.at(k)).collect();
            *c = CpuRecord {
                times: changes.iter().map(|x| x.0).collect(),
                threads: changes.iter().map(|x| x.1).collect(),
                modes: changes.iter().map(|x| x.2).collect(),
                implied: None,
                ..c.clone()
            };
        }
        d
    }

    #[test]
    fn cpu_rows_list_the_changes_their_threads_do_not_imply() {
        let dir = tempfile::tempdir().unwrap();
        let trace = forking_trace(&dir.path().join("t"), 30_000, 9);
        // One pass keeping its CPU rows whole, one listing their explicit
        // changes alone, read in step.
        let start = |whole: bool| {
            let mut session = Session::open(std::slice::from_ref(&trace)).unwrap();
            let owner = session.new_owner();
            let req = KernelAnalysis::request(&mut session, owner);
            let id = session.add(req);
            if whole {
                session
                    .peek::<KernelCollector>(id)
                    .expect("added")
                    .keep_whole_cpu_rows();
            }
            (session, id)
        };
        let (mut whole, wid) = start(true);
        let (mut listed, lid) = start(false);
        let budget = traceloom_engine::request::Budget::events(2_500);
        let mut steps = 0;
        while !listed.is_complete(lid) {
            whole.service(budget, || false);
            listed.service(budget, || false);
            let Some(w) = whole.peek::<KernelCollector>(wid) else {
                break;
            };
            let w = w.snapshot();
            let l = listed
                .peek::<KernelCollector>(lid)
                .expect("reading")
                .snapshot();
            // Part way, the last change (not classified yet) is listed
            // too; the summaries tallied equal those made whole.
            assert_eq!(whole_rows(l), w, "step {steps}");
            steps += 1;
        }
        assert!(steps > 5, "{steps} steps");
        let w = whole.wait::<KernelCollector>(wid).unwrap().snapshot();
        let data = listed.wait::<KernelCollector>(lid).unwrap().into_data();
        let (n_listed, all): (usize, u64) = data.cpus.iter().fold((0, 0), |(l, a), c| {
            (
                l + c.times.len(),
                a + c.implied.as_ref().expect("listed").len,
            )
        });
        assert!(n_listed * 4 < all as usize, "{n_listed} of {all} listed");
        assert_eq!(whole_rows(data), w);
    }

    #[test]
    fn snapshots_share_the_records_of_exited_threads() {
        let dir = tempfile::tempdir().unwrap();
        let trace = forking_trace(&dir.path().join("t"), 30_000, 9);
        // Spill rounds, which find the sealed records written: those
        // sealed after the last one are read on the heap until the end,
        // when the result reads them in the arena, made again.
        let (mut session, id) = spilling_pass(&trace, dir.path());
        let mut collector: KernelCollector = session.wait(id).unwrap();
        let (a, b) = (collector.snapshot(), collector.snapshot());
        assert_eq!(a, b);
        let shared = a
            .threads
            .iter()
            .zip(&b.threads)
            .filter(|(x, y)| Arc::ptr_eq(x, y))
            .count();
        assert!(
            shared > 100,
            "{shared} of {} records shared",
            a.threads.len()
        );
        let whole = collector.into_data();
        assert_eq!(whole_rows(whole.clone()), whole_rows(b.clone()));
        // The result shares them too (those it does not end).
        assert!(whole
            .threads
            .iter()
            .zip(&b.threads)
            .any(|(x, y)| Arc::ptr_eq(x, y)));
    }

    #[test]
    fn a_spill_file_that_stops_taking_writes_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let trace = forking_trace(&dir.path().join("t"), 30_000, 9);
        let mut plain = Session::open(std::slice::from_ref(&trace)).unwrap();
        let want = KernelAnalysis::run(&mut plain);
        // The disk fills up part way: the writer thread's write of a
        // chunk fails, and so would every later one.
        for full_at in [0, 16 << 10, 64 << 10] {
            let (mut session, id) = spilling_pass(&trace, dir.path());
            let arena = session
                .peek::<KernelCollector>(id)
                .and_then(|c| c.arena.clone())
                .expect("a spill file");
            arena.fail_writes_from(full_at);
            let budget = traceloom_engine::request::Budget::events(12_000);
            session.service(budget, || false);
            let partial = session
                .peek::<KernelCollector>(id)
                .expect("reading")
                .snapshot();
            let mut alone = Session::open(std::slice::from_ref(&trace)).unwrap();
            let owner = alone.new_owner();
            let req = KernelAnalysis::request(&mut alone, owner);
            let alone_id = alone.add(req);
            alone.service(budget, || false);
            let want_partial = alone
                .peek::<KernelCollector>(alone_id)
                .expect("reading")
                .snapshot();
            let mut collector: KernelCollector = session.wait(id).unwrap();
            assert!(arena.failed(), "full at {full_at}: no write failed");
            assert!(arena.written() <= full_at, "full at {full_at}");
            // What was read before and after the failure reads the same
            // as without a spill file: the chunks not written stay on
            // the heap, and the arena takes nothing more.
            assert!(partial.events > 0, "full at {full_at}");
            assert_eq!(partial, want_partial, "full at {full_at}: part way");
            assert_eq!(
                whole_rows(collector.snapshot()),
                whole_rows((*want).clone()),
                "full at {full_at}: snapshot"
            );
            let got = collector.into_data();
            assert_eq!(got, *want, "full at {full_at}: result");
        }
    }

    #[test]
    fn a_shared_record_follows_its_head_and_lists() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arc::new(Arena::create(dir.path()).unwrap());
        let mut s = RecordLists::default();
        let mut t = 0;
        replay(&mut s, &[(1, 3), (2, 4), (7, 1)], &mut t);
        let mut head = ThreadHead {
            trace: 0,
            tid: 5,
            pid: 5,
            ppid: 1,
            name: Arc::from("a"),
            cpu: 0,
            row: RowId(5),
            birth: 0,
            end: 100,
        };
        // Growing lists: a record each time.
        assert!(!Arc::ptr_eq(&s.record(&head), &s.record(&head)));
        s.seal(Some(&arena));
        let first = s.record(&head);
        assert!(Arc::ptr_eq(&first, &s.record(&head)));
        // Another head: another record.
        head.end = 200;
        let second = s.record(&head);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.end, 200);
        // Lists grown again, then sealed again: the new lists.
        replay(&mut s, &[(1, 2)], &mut t);
        s.seal(Some(&arena));
        let third = s.record(&head);
        assert_eq!(third.times.len(), second.times.len() + 1);
    }

    #[test]
    fn a_sealed_record_is_small() {
        let dir = tempfile::tempdir().unwrap();
        let arena = Arc::new(Arena::create(dir.path()).unwrap());
        let mut s = RecordLists::default();
        replay(&mut s, &[(1, 3), (2, 4), (7, 1), (3, 2)], &mut 0);
        arena.hold_writes(true);
        s.seal(Some(&arena));
        assert!(matches!(s, RecordLists::Sealed(..)));
        assert!(std::mem::size_of::<RecordLists>() <= 96);
        // Read on the heap while the arena's copy is being written, then
        // there, once a spill round finds it written.
        let queued = s.lists();
        arena.hold_writes(false);
        assert!(arena.wait_written(arena.used()));
        assert!(s.settle());
        let l = s.lists();
        for l in [&queued, &l] {
            assert_eq!(l.times.len(), 3);
            assert_eq!(l.marks.len(), 1);
            assert_eq!(l.times.to_vec(), queued.times.to_vec());
        }
        assert_eq!(
            l.times.heap_bytes() + l.codes.heap_bytes() + l.marks.heap_bytes(),
            0
        );
    }
}
