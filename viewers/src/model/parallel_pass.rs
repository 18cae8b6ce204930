//! The kernel pass in parallel parts: the traceset is split at
//! checkpoints, each part is analysed by a [`KernelCollector`] on a thread
//! of its own (its own scheduler and reader, its state restored from the
//! checkpoint), and the parts are joined in order into what the single
//! pass ([`KernelAnalysis::run`]) gives.
//!
//! A part after the first starts with a *placeholder* record for every
//! thread of the state at its first event; it updates them as the single
//! pass updates the records the parts before leave alive. Joining a part
//! to what precedes it:
//!
//! - a placeholder continues the alive record of its thread: its changes
//!   are replayed onto that record's change list with the single pass's
//!   rules (a change equal to the last one is no change; two changes at
//!   one instant keep the last), which also completes the wake-ups still
//!   pending at the boundary (at the thread's first run);
//! - the part's other records are new: appended, their row ids given the
//!   next generations of their TIDs;
//! - CPU and line records continue theirs (their changes replayed, the
//!   thread records they name renumbered), arrows are renumbered and
//!   appended, statistics parts merged ([`stats::merge`]), histograms
//!   added.
//!
//! What needs the parts before cannot be known in a part: a part that
//! meets damaged streams makes the whole pass fall back to one part (the
//! damage bookkeeping follows the streams across the trace).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use traceloom_base::Time;
use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint::{CheckpointBuild, Checkpoints};
use traceloom_engine::request::{Budget, OwnerId, RequestId, Start};
use traceloom_engine::source::CtfPosition;
use traceloom_engine::state::{CpuMap, ThreadKey, ThreadStatus, TracesetState};
use traceloom_hooks::{Flow, Priority};

use super::checkpoint_pass::{BuildHandOver, CarriedBuild, CheckpointSink};
use super::column::{Column, ColumnBuilder};
use super::cores::on_cores;
use super::cpu_row::CpuChange;
use super::kernel::{
    add_collector_hooks, decode_thread_code, row_id, ArrowRecord, CpuRecord, CpuSeries,
    KernelAnalysis, KernelCollector, KernelData, LineRecord, LineSeries, RecordLists, NO_THREAD,
};
use super::pack::Item;
use super::session::{part_scheduler, KernelRequest, Payload, Session};
use super::spill::Arena;
use super::stats::{self, StatsPart};
use traceloom_base::hash::FastMap;

/// A finished part: its collector and its statistics, and for the last
/// part of a cold pass the checkpoint build it carried on to the end.
struct Part {
    collector: KernelCollector,
    stats: StatsPart,
    checkpoints: Option<CheckpointBuild>,
}

/// Parts for a whole-trace pass: `TRACELOOM_JOBS` when set to a number
/// (1: the single pass, to compare), else one per core.
pub fn parts_wanted() -> usize {
    std::env::var("TRACELOOM_JOBS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The states to split a pass of `parts` parts at: `parts - 1` of
/// `checkpoints` (taken every so many events), evenly spread over them so
/// that the parts hold about as many events; fewer when there are fewer
/// checkpoints.
pub fn split_at(checkpoints: &Checkpoints, parts: usize) -> Vec<(CtfPosition, TracesetState)> {
    spread(checkpoints.states.len(), parts)
        .into_iter()
        .map(|i| {
            let c = &checkpoints.states[i];
            (c.position, c.state.clone())
        })
        .collect()
}

/// Which of `m` checkpoints to split `parts` parts at: `parts - 1` of
/// them, evenly spread (fewer when there are fewer), as indices in order.
pub fn spread(m: usize, parts: usize) -> Vec<usize> {
    let p = parts.clamp(1, m + 1);
    let mut picked: Vec<usize> = (1..p).map(|i| i * m / p).collect();
    picked.dedup();
    picked
}

/// The kernel pass of `session` ([`KernelAnalysis::run_with_progress`])
/// in `parts` parts split at `checkpoints` (a whole-trace checkpoint
/// pass's), read on as many threads; one pass on the session when there
/// is nothing to split at, or when a part met damage. `progress` gets the
/// events read by all the parts together, and the time of the traces'
/// start (parts run out of order).
pub fn analyse(
    session: &mut Session,
    checkpoints: &Checkpoints,
    parts: usize,
    progress: &mut dyn FnMut(u64, Time),
) -> Arc<KernelData> {
    analyse_split(session, split_at(checkpoints, parts), progress)
}

/// [`analyse`], giving `checkpoints` to `done` (to cache them, say) once
/// the parts' starts are taken from them: they are not held while the
/// parts run and are joined.
pub fn analyse_handing(
    session: &mut Session,
    checkpoints: Checkpoints,
    parts: usize,
    progress: &mut dyn FnMut(u64, Time),
    done: &mut dyn FnMut(Checkpoints),
) -> Arc<KernelData> {
    let at = split_at(&checkpoints, parts);
    done(checkpoints);
    analyse_split(session, at, progress)
}

/// The kernel pass in parts starting at `at`, or the single pass.
fn analyse_split(
    session: &mut Session,
    at: Vec<(CtfPosition, TracesetState)>,
    progress: &mut dyn FnMut(u64, Time),
) -> Arc<KernelData> {
    if !at.is_empty() && session.errors().is_empty() {
        let plan = Plan::new(at.len() + 1);
        for (k, (p, s)) in at.into_iter().enumerate() {
            plan.split(k + 1, (p, s, 0, None));
        }
        plan.close();
        if let Some((parts, _)) = run(session, &plan, progress) {
            return Arc::new(join(parts));
        }
    }
    KernelAnalysis::run_with_progress(session, progress)
}

/// The kernel pass of `session` in `parts` parts, on a traceset whose
/// checkpoints are not known yet: a checkpoint pass (the state alone,
/// several times faster than the analysis) reads ahead on a thread of its
/// own and starts each part when it reaches the part's share of the
/// traces' time span, while the first part reads from the start. At the
/// last part's start it stops and hands its build over to that part,
/// which carries it on to the end (its read has the state anyway). Gives
/// the analysis and the checkpoints of one checkpoint pass (one every
/// `every` events, with its seek index). One pass joined to the
/// checkpoint pass
/// ([`crate::model::checkpoint_pass::analyse_with_checkpoints`]) when
/// `parts` is 1 or a part met damage.
pub fn analyse_cold(
    session: &mut Session,
    parts: usize,
    every: u64,
    progress: &mut dyn FnMut(u64, Time),
) -> (Arc<KernelData>, Checkpoints) {
    let mut found = None;
    let data = analyse_cold_handing(session, parts, every, progress, &mut |c| found = Some(c));
    (data, found.unwrap_or_default())
}

/// [`analyse_cold`], giving the checkpoints to `done` (to cache them, say)
/// as soon as the parts end, before they are joined: held during the
/// join, their states were part of its peak (16 MB on the 8 GB generated
/// trace).
pub fn analyse_cold_handing(
    session: &mut Session,
    parts: usize,
    every: u64,
    progress: &mut dyn FnMut(u64, Time),
    done: &mut dyn FnMut(Checkpoints),
) -> Arc<KernelData> {
    let span = session.time_span().unwrap_or((0, 0));
    if parts > 1 && session.errors().is_empty() && span.1 > span.0 {
        let plan = Plan::new(parts);
        let traceset = Arc::new(session.traceset().with_decode_threads(0));
        let (ran, split) = std::thread::scope(|scope| {
            let plan = &plan;
            let splitter = std::thread::Builder::new()
                .name("kernel pass splitter".into())
                .spawn_scoped(scope, move || {
                    split_ahead(traceset, span, SplitFrom::start(every), plan)
                });
            if splitter.is_err() {
                plan.close();
            }
            let ran = run(session, plan, progress);
            let split = splitter.ok().and_then(|h| h.join().ok());
            (ran, split)
        });
        if let Some((parts, carried)) = ran {
            let checkpoints = match split.flatten() {
                // The splitter read the whole trace (it found fewer splits).
                Some(c) => Some(c),
                // It handed its build over to the last part.
                None => carried.map(CheckpointBuild::finish),
            };
            if let Some(c) = checkpoints {
                done(c);
                return Arc::new(join(parts));
            }
        }
    }
    super::checkpoint_pass::analyse_handing_checkpoints(session, progress, done)
}

/// The rest of a whole-trace pass, from a checkpoint to the traces' end,
/// read on threads of its own while the caller's scheduler reads the
/// first part, its *head*, up to that checkpoint: a window's pass stays a
/// request of its scheduler (interruptible, snapshotted as it reads,
/// behind the user's requests) and gets the other cores. The tail is
/// itself read in parts, one per thread ([`TailSplit`]).
///
/// The head is the request of [`KernelAnalysis::request`], its end
/// position set to the tail's start before it read past it
/// ([`traceloom_engine::request::Scheduler::set_end_position`]);
/// [`join`](Self::join) makes both the single pass's result. Dropping the
/// tail before the join stops its threads.
pub struct TailPart {
    control: TailControl,
    thread: Option<std::thread::JoinHandle<Option<Vec<Part>>>>,
}

/// How a [`TailPart`] is split into parts read in parallel.
pub enum TailSplit {
    /// At these later checkpoints, in order (a cache's, all known at
    /// once): one part more than there are; none, one part.
    At(Vec<(CtfPosition, TracesetState)>),
    /// The window's checkpoint pass, handed over at the tail's start, is
    /// carried on by the tail, in this many parts: with one, the part
    /// carries the build on; with more, a splitter reads on with it and
    /// splits the tail as the command line's cold pass is split
    /// ([`analyse_cold`]), handing the build over to the last part.
    /// Either way the checkpoints go where the checkpoint pass's went
    /// ([`CheckpointsAhead::hand_over`]).
    ///
    /// [`CheckpointsAhead::hand_over`]: super::checkpoint_pass::CheckpointsAhead::hand_over
    Carrying(BuildHandOver, usize),
}

impl TailSplit {
    /// One part, carrying nothing.
    pub fn one() -> TailSplit {
        TailSplit::At(Vec::new())
    }

    fn parts(&self) -> usize {
        match self {
            TailSplit::At(later) => later.len() + 1,
            TailSplit::Carrying(_, parts) => (*parts).max(1),
        }
    }
}

/// What the reader of a [`TailPart`]'s head controls of it while the part
/// reads (also once it is handed to a thread waiting to join it).
#[derive(Clone)]
pub struct TailControl {
    plan: Arc<Plan>,
    progress: Arc<PartProgress>,
    start: CtfPosition,
}

impl TailPart {
    /// Starts reading `session`'s traceset from `at`, a checkpoint's
    /// position, with `state`, the checkpoint's state, in the parts
    /// `split` says, on threads of which the first runs `on_thread` (a
    /// window lowers its priority there, which the others inherit);
    /// `paused`, they wait before their first read. Each part decodes its
    /// events itself, and spills as the session's pass does.
    pub fn start(
        session: &Session,
        at: CtfPosition,
        state: TracesetState,
        split: TailSplit,
        paused: bool,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<TailPart> {
        let plan = Arc::new(Plan::new(split.parts()));
        plan.paused.store(paused, Ordering::Release);
        let progress = Arc::new(PartProgress::default());
        let traceset = Arc::new(session.traceset().with_decode_threads(0));
        let span = session.time_span().unwrap_or((0, 0));
        // Off the main loop, and sharing the cores with the head: the
        // parts write their spill files themselves (see
        // `Arena::write_through`).
        let spill = session
            .spill_dir()
            .map(|d| (d.to_path_buf(), session.spill_every()));
        let (p, r) = (plan.clone(), progress.clone());
        let thread = std::thread::Builder::new()
            .name("kernel pass tail".into())
            .spawn(move || {
                // Finished however the thread ends (a panic too): the
                // window stops waiting for it.
                let _finished = Finished(r.clone());
                on_thread();
                read_tail(&traceset, span, spill, &p, &r, (at, state), split)
            })?;
        Ok(TailPart {
            control: TailControl {
                plan,
                progress,
                start: at,
            },
            thread: Some(thread),
        })
    }

    /// Its control, to keep while a thread waits to [`join`](Self::join)
    /// it.
    pub fn control(&self) -> TailControl {
        self.control.clone()
    }

    /// Waits for the part to end and joins `head` to it, and `after` when
    /// the part was ended early ([`TailControl::end_at`]): the single
    /// pass's result. A paused part is waited for until resumed. `None`
    /// when a part met a damaged stream (damage set by
    /// [`KernelCollector::set_damage`]: the damage bookkeeping follows the
    /// streams across the trace, so the caller reads again in one pass),
    /// when the part was stopped, or when `head` or `after` is not
    /// complete (see the type's documentation).
    pub fn join(
        mut self,
        mut head: KernelCollector,
        after: Option<KernelCollector>,
    ) -> Option<KernelData> {
        let tail = self.thread.take()?.join().ok().flatten()?;
        if !head.damage.is_empty() {
            return None;
        }
        let stats = head.closed_stats.take()?.without_end();
        let mut parts = vec![Part {
            collector: head,
            stats,
            checkpoints: None,
        }];
        parts.extend(tail);
        match after {
            Some(mut a) if a.damage.is_empty() => {
                let stats = a.closed_stats.take()?;
                parts.push(Part {
                    collector: a,
                    stats,
                    checkpoints: None,
                });
            }
            Some(_) => return None,
            // The part read to the end, unless it was ended early.
            None if self.control.plan.ends.last()?.get().is_some() => return None,
            None => {}
        }
        Some(join(parts))
    }

    /// The request reading what follows the part once it is ended at
    /// `at` ([`TailControl::end_at`]), to the traces' end, on `session`'s
    /// scheduler (which must have a checkpoint at `at`); complete, its
    /// data is the [`KernelCollector`] to [`join`](Self::join).
    pub fn after_request(session: &mut Session, owner: OwnerId, at: CtfPosition) -> KernelRequest {
        KernelAnalysis::request_from(session, owner, Start::Position(at), true)
    }
}

/// The thread of a [`TailPart`]: reads its parts as `split` says, the
/// first from `from`, and gives them in order; `None` when a part met a
/// damaged stream, could not stop where the next starts, or was stopped.
fn read_tail(
    traceset: &Arc<Traceset>,
    span: (Time, Time),
    spill: Option<(std::path::PathBuf, u64)>,
    plan: &Plan,
    progress: &PartProgress,
    (at, state): (CtfPosition, TracesetState),
    split: TailSplit,
) -> Option<Vec<Part>> {
    let carried = match split {
        TailSplit::At(later) => {
            for (k, (p, s)) in later.into_iter().enumerate() {
                plan.split(k + 1, (p, s, 0, None));
            }
            None
        }
        // None: the checkpoint pass was over first, nothing to carry.
        TailSplit::Carrying(handover, _) => handover.wait(),
    };
    // What reads on with the carried build to split the tail, if any.
    let splitter = match carried {
        None => {
            plan.start_first((at, state, 0, None));
            plan.close();
            None
        }
        Some(CarriedBuild { build, rank, sink }) if plan.parts() == 1 => {
            progress.carries.store(true, Ordering::Release);
            *plan.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink);
            plan.start_first((at, state, rank, Some(build)));
            plan.close();
            None
        }
        Some(CarriedBuild { build, rank, sink }) => {
            progress.carries.store(true, Ordering::Release);
            plan.start_first((at, state.clone(), rank, None));
            Some(SplitFrom {
                from: Some((at, state)),
                build,
                rank,
                sink: Some(sink),
            })
        }
    };
    std::thread::scope(|scope| {
        if let Some(from) = splitter {
            let traceset = Arc::new(traceset.with_decode_threads(0));
            let split = std::thread::Builder::new()
                .name("kernel pass splitter".into())
                .spawn_scoped(scope, move || {
                    split_ahead(traceset, (at.time, span.1), from, plan);
                });
            if split.is_err() {
                plan.fail();
            }
        }
        run_parts(traceset, span, spill, plan, progress, &mut |_, _| {}).map(|(p, _)| p)
    })
}

/// Marks a part finished when dropped.
struct Finished(Arc<PartProgress>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.finished.store(true, Ordering::Release);
    }
}

impl Drop for TailPart {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.control.stop();
        }
    }
}

impl std::fmt::Debug for TailPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.control.fmt(f)
    }
}

impl TailControl {
    /// Where the part starts: where the head must end.
    pub fn start_position(&self) -> CtfPosition {
        self.start
    }

    /// How much of the traces' time span the tail's parts have read
    /// (ns), each from its start.
    pub fn span_read(&self) -> Time {
        self.progress.span_read.load(Ordering::Relaxed)
    }

    /// Events read so far, and the time of the last one (of the part
    /// that read last, when there are several).
    pub fn progress(&self) -> (u64, Time) {
        (
            self.progress.events.load(Ordering::Relaxed),
            self.progress.reached.load(Ordering::Relaxed),
        )
    }

    /// Makes the part wait (after its chunk under way), or go on.
    pub fn set_paused(&self, paused: bool) {
        self.plan.paused.store(paused, Ordering::Release);
    }

    /// Whether it was made to wait.
    pub fn is_paused(&self) -> bool {
        self.plan.paused.load(Ordering::Relaxed)
    }

    /// Ends the tail at `at`, a checkpoint's position well ahead of where
    /// it reads, so that another reader goes on from there
    /// ([`TailPart::after_request`]); `false` if it was ended already, or
    /// is read in several parts. Were the part past `at` when it looks
    /// (between two chunks), it would give up ([`failed`](Self::failed)).
    pub fn end_at(&self, at: CtfPosition) -> bool {
        self.plan.parts() == 1 && self.plan.ends[0].set(at).is_ok()
    }

    /// Whether it is read in several parts.
    pub fn in_parts(&self) -> bool {
        self.plan.parts() > 1
    }

    /// Whether it waits, paused (its chunk under way read).
    pub fn is_waiting(&self) -> bool {
        self.progress.waiting.load(Ordering::Acquire)
    }

    /// Whether it carries the checkpoint pass's build on (from when it
    /// got it): the checkpoints past its start come as it reads.
    pub fn carries_checkpoints(&self) -> bool {
        self.progress.carries.load(Ordering::Acquire)
    }

    /// Whether it read to the end or gave up.
    pub fn is_finished(&self) -> bool {
        self.progress.finished.load(Ordering::Acquire)
    }

    /// Whether it gave up: it met a damaged stream, or was stopped. The
    /// join will give nothing.
    pub fn failed(&self) -> bool {
        self.plan.failed.load(Ordering::Relaxed)
    }

    /// Stops the part's read, unless it is over (then its join is
    /// unaffected).
    pub fn stop(&self) {
        if !self.is_finished() {
            self.plan.fail();
        }
    }
}

impl std::fmt::Debug for TailControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TailPart")
            .field("start", &self.start)
            .field("progress", &self.progress())
            .finish()
    }
}

/// Where the parts of a pass start and end, as found: part `k` starts
/// where part `k - 1` ends, at a checkpoint whose state it starts from.
struct Plan {
    /// Per part: its start, once found (never for the first), with the
    /// number of events before it.
    starts: Vec<Mutex<Option<Start_>>>,
    /// Per part: its end, once found (the next part's start).
    ends: Vec<OnceLock<CtfPosition>>,
    /// No more start will be found (the parts without one do not run).
    closed: AtomicBool,
    ready: Condvar,
    /// A part met damage or could not stop where the next part starts:
    /// the pass is abandoned.
    failed: AtomicBool,
    /// Events the splitter has read and split at (a part whose end is
    /// not known yet reads no further, so that it cannot pass it).
    split_up_to: AtomicU64,
    /// The parts wait (a window's [`TailPart`] while the user's requests
    /// are read, or while the user paused the pass).
    paused: AtomicBool,
    /// The time of the first part's last event read ([`Time::MIN`]
    /// before any): how fast the analysis goes against the splitter.
    first_reached: AtomicI64,
    /// Where the checkpoints of the build a part carries on go, as they
    /// are made (a window's), taken by that part.
    sink: Mutex<Option<CheckpointSink>>,
}

/// How far a part has read: its events, and the time of its last one.
#[derive(Default)]
struct PartProgress {
    events: AtomicU64,
    reached: AtomicI64,
    /// Its thread is done.
    finished: AtomicBool,
    /// It waits, paused.
    waiting: AtomicBool,
    /// It carries a checkpoint pass's build on.
    carries: AtomicBool,
    /// The time span read (ns), summed over the parts that count here:
    /// each from its start to its last event.
    span_read: AtomicI64,
}

impl PartProgress {
    /// A part read `events` more, up to `last` (the time of its last
    /// event); `reached` is where it was.
    fn advance(&self, events: u64, last: Time, reached: &mut Time) {
        self.events.fetch_add(events, Ordering::Relaxed);
        self.reached.store(last, Ordering::Relaxed);
        if last > *reached {
            self.span_read
                .fetch_add(last.saturating_sub(*reached), Ordering::Relaxed);
            *reached = last;
        }
    }
}

/// Where a part starts: a checkpoint's position, its state, the number of
/// events before it, and for the last part of a cold pass the splitter's
/// checkpoint build, rewound to there, to carry on.
type Start_ = (CtfPosition, TracesetState, u64, Option<CheckpointBuild>);

impl Plan {
    fn new(parts: usize) -> Plan {
        Plan {
            starts: (0..parts).map(|_| Mutex::new(None)).collect(),
            ends: (0..parts).map(|_| OnceLock::new()).collect(),
            closed: AtomicBool::new(false),
            ready: Condvar::new(),
            failed: AtomicBool::new(false),
            split_up_to: AtomicU64::new(0),
            paused: AtomicBool::new(false),
            first_reached: AtomicI64::new(Time::MIN),
            sink: Mutex::new(None),
        }
    }

    /// The first part starts at `start` (a window's tail), not at the
    /// traces' start.
    fn start_first(&self, start: Start_) {
        *self.starts[0].lock().unwrap_or_else(|e| e.into_inner()) = Some(start);
    }

    fn parts(&self) -> usize {
        self.starts.len()
    }

    /// Part `k` starts at `start`; part `k - 1` ends there.
    fn split(&self, k: usize, start: Start_) {
        let _ = self.ends[k - 1].set(start.0);
        *self.starts[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(start);
        self.ready.notify_all();
    }

    /// No more split will come (or the pass failed): the parts waiting
    /// for a start give up.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // Taking each lock orders the flag with a waiter's check.
        for s in &self.starts {
            drop(s.lock().unwrap_or_else(|e| e.into_inner()));
        }
        self.ready.notify_all();
    }

    /// Abandons the pass.
    fn fail(&self) {
        self.failed.store(true, Ordering::Relaxed);
        self.close();
    }

    /// Waits for the start of part `k` (`None`: it has none, the part
    /// before reads to the end).
    fn wait_start(&self, k: usize) -> Option<Start_> {
        let mut g = self.starts[k].lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(s) = g.take() {
                return Some(s);
            }
            if self.closed.load(Ordering::Acquire) {
                return None;
            }
            g = self.ready.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Where a splitter's checkpoint pass starts: at the traces' start with a
/// new build, or at a checkpoint with a build rewound there (a window's
/// tail, which carries the window's checkpoint pass on from its start),
/// then with where the build's checkpoints go as they are made.
struct SplitFrom {
    from: Option<(CtfPosition, TracesetState)>,
    build: CheckpointBuild,
    /// The events before `from`.
    rank: u64,
    sink: Option<CheckpointSink>,
}

impl SplitFrom {
    /// From the traces' start, a checkpoint every `every` events.
    fn start(every: u64) -> SplitFrom {
        SplitFrom {
            from: None,
            build: CheckpointBuild::new(every),
            rank: 0,
            sink: None,
        }
    }
}

/// The checkpoint pass of the splitter: reads `traceset` with its state
/// from `from`, and splits `plan` at the first checkpoint past each part's
/// share of `span`. At the last split it stops: after there only the
/// checkpoints and the seek index are wanted of it, and the last part's
/// read has the state anyway, so its build is rewound to the split and
/// handed over to the last part, with its sink. The checkpoints when it
/// read the whole trace (it found fewer splits) and has no sink; `None`
/// when it handed them over, sent them, or failed. It waits while the
/// plan's parts are paused, and stops when the pass is abandoned.
fn split_ahead(
    traceset: Arc<Traceset>,
    span: (Time, Time),
    from: SplitFrom,
    plan: &Plan,
) -> Option<Checkpoints> {
    let SplitFrom {
        from,
        build,
        rank,
        mut sink,
    } = from;
    let start = from
        .as_ref()
        .map_or(Start::Time(Time::MIN), |(p, _)| Start::Position(*p));
    let mut sched = part_scheduler(traceset, from);
    let id = sched.add(super::checkpoint_pass::request_from(
        OwnerId(0),
        start,
        build,
    ));
    let parts = plan.parts();
    let mut next = 1;
    let mut seen = 0;
    let mut read = 0;
    let built = loop {
        while plan.paused.load(Ordering::Acquire) && !plan.failed.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if plan.failed.load(Ordering::Relaxed) {
            break None;
        }
        let report = sched.service(Budget::events(1 << 14), || false);
        read += report.events_read;
        if let Some(c) = report.completed.into_iter().find(|c| c.id == id) {
            break c.data.downcast::<CheckpointBuild>().ok().map(|b| *b);
        }
        let Some(b) = sched
            .data_mut(id)
            .and_then(|d| d.downcast_mut::<CheckpointBuild>())
        else {
            break None;
        };
        let mut last = None;
        let at = b.checkpoints.last().map_or(span.0, |c| c.position.time);
        let first = plan.first_reached.load(Ordering::Relaxed);
        let shares = part_shares(parts, analysis_pace(span.0, first, at), CARRY_PACE);
        let share = |k: usize| span.0 + ((span.1 - span.0) as f64 * shares[k - 1]) as Time;
        while next < parts && seen < b.checkpoints.len() {
            let c = &b.checkpoints[seen];
            if c.position.time >= share(next) {
                if next + 1 == parts {
                    last = Some(seen);
                    break;
                }
                plan.split(next, (c.position, c.state.clone(), c.rank, None));
                next += 1;
            }
            seen += 1;
        }
        if let Some(i) = last {
            let Some(mut b) = sched
                .cancel(id)
                .and_then(|d| d.downcast::<CheckpointBuild>().ok())
            else {
                break None;
            };
            // The batch read past the split: back to it, exactly.
            let c = b.rewind(i);
            if let Some(mut s) = sink {
                // Nobody receives them any more: the window closed.
                if !s.forward(&b) {
                    plan.fail();
                    return None;
                }
                *plan.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
            }
            plan.split(next, (c.position, c.state, c.rank, Some(*b)));
            plan.close();
            return None;
        }
        if let Some(s) = &mut sink {
            if !s.forward(b) {
                plan.fail();
                return None;
            }
        }
        plan.split_up_to.store(rank + read, Ordering::Release);
    };
    plan.close();
    match (built, sink) {
        (Some(b), Some(s)) => {
            s.done(b);
            None
        }
        (built, _) => built.map(CheckpointBuild::finish),
    }
}

/// How fast the analysis reads against the splitter's checkpoint pass
/// (0 to 1): how far into the trace the first part is, `first`, when the
/// splitter is at `at`, from `start` (as times: events are about evenly
/// spread over a trace). Until both have read a little, a guess: the
/// analysis is about a third as fast on the 1 GB generated trace.
fn analysis_pace(start: Time, first: Time, at: Time) -> f64 {
    const GUESS: f64 = 0.35;
    if first <= start || at <= start {
        return GUESS;
    }
    ((first - start) as f64 / (at - start) as f64).clamp(0.05, 0.9)
}

/// How fast the last part reads against the others: it also carries
/// the splitter's checkpoint build on to the traces' end (a state copy
/// every so many events, the seek index's marks). Measured against the
/// first part's pace, it read at 0.91–0.97 of it on the 1 GB generated
/// trace and at 0.86 on the 8 GB one, where, split as if it read at the
/// others' pace, it ended 5.8 s after the first part (`traceloom index`,
/// two parts).
const CARRY_PACE: f64 = 0.9;

/// Where parts `1..parts` should start, as shares of the trace, for all
/// the parts to end together when the analysis reads at `pace` times the
/// splitter's speed, and the last part at `last` times the analysis'
/// pace. Part `k` starts when the splitter gets to its start `s_k`, and
/// reads to `s_{k+1}`: ending with the first part, at time `s_1 / pace`
/// (in the splitter's time to read the whole trace), gives `s_{k+1} = s_k
/// (1 - pace) + s_1`, so `s_k = s_1 (1 - q^k) / pace` with `q = 1 -
/// pace`, up to the last part's start `s_{n-1}` (`n` parts); that part
/// reads `1 - s_{n-1}` at `last × pace`, which gives `s_1 = 1 / ((1 -
/// q^(n-1)) (1 - last × pace) / pace + last)`. Even shares would leave the
/// first part done long before the last (the 1 GB generated trace, two
/// parts: 6.3 s against 9.3 s, one core idle meanwhile).
pub fn part_shares(parts: usize, pace: f64, last: f64) -> Vec<f64> {
    let pace = pace.clamp(0.05, 0.9);
    let q = 1.0 - pace;
    let n = parts as i32;
    let first = 1.0 / ((1.0 - q.powi(n - 1)) * (1.0 - last * pace) / pace + last);
    (1..parts)
        .map(|k| first * (1.0 - q.powi(k as i32)) / pace)
        .collect()
}

/// Runs the parts of `plan` over `session`'s traceset, each on its own
/// thread, and joins them; `progress` is called on this thread with the
/// events read by all parts together. With the checkpoint build the last
/// part carried on, if it was given one.
///
/// `None` when a part met a damaged stream or could not stop where the
/// next one starts: the caller runs the single pass instead.
fn run(
    session: &Session,
    plan: &Plan,
    progress: &mut dyn FnMut(u64, Time),
) -> Option<(Vec<Part>, Option<CheckpointBuild>)> {
    let spill = session
        .spill_dir()
        .map(|d| (d.to_path_buf(), session.spill_every()));
    let span = session.time_span().unwrap_or((0, 0));
    let read = PartProgress::default();
    run_parts(session.traceset(), span, spill, plan, &read, progress)
}

/// Runs the parts of `plan` over `traceset` (whose time span is `span`),
/// each on its own thread, spilling to files in `spill` (a directory and
/// the events between two spills) when given; `read` counts what they
/// read, and `progress` is called on this thread with the events read by
/// all parts together. The parts that ran, in order (those given a
/// start), with the checkpoint build the last one carried on if it has
/// it; `None` when a part met a damaged stream or could not stop where
/// the next one starts.
fn run_parts(
    traceset: &Traceset,
    span: (Time, Time),
    spill: Option<(std::path::PathBuf, u64)>,
    plan: &Plan,
    read: &PartProgress,
    progress: &mut dyn FnMut(u64, Time),
) -> Option<(Vec<Part>, Option<CheckpointBuild>)> {
    let parts: Vec<Option<Part>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..plan.parts())
            .map(|k| {
                // The parts keep every core busy: each writes its spill
                // file itself (see `Arena::write_through`).
                let arena = spill.as_ref().and_then(|(dir, every)| {
                    Arena::create(dir).ok().map(|a| {
                        a.write_through();
                        (Arc::new(a), *every)
                    })
                });
                // Each part decodes its events itself: the parts already
                // keep every core busy (as the parallel statistics do).
                let traceset = Arc::new(traceset.with_decode_threads(0));
                std::thread::Builder::new()
                    .name(format!("kernel pass {k}"))
                    .spawn_scoped(scope, move || {
                        run_part(traceset, span, plan, k, arena, read)
                    })
            })
            .collect();
        if handles.iter().any(|h| h.is_err()) {
            plan.fail();
        }
        while !handles
            .iter()
            .all(|h| h.as_ref().map_or(true, |h| h.is_finished()))
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
            progress(read.events.load(Ordering::Relaxed), span.0);
        }
        handles
            .into_iter()
            .map(|h| h.ok().and_then(|h| h.join().ok().flatten()))
            .collect()
    });
    if plan.failed.load(Ordering::Relaxed) {
        return None;
    }
    // The parts that ran: those given a start (they follow each other).
    let mut parts: Vec<Part> = parts.into_iter().map_while(|p| p).collect();
    let carried = parts.last_mut()?.checkpoints.take();
    Some((parts, carried))
}

/// Analyses part `k` of `plan` on a scheduler of its own; `None` when it
/// has no start, or when it met damage or could not stop where the next
/// part starts (then `plan` is marked failed). The first part starts
/// where the plan says ([`Plan::start_first`]), or at the traces' start.
/// The checkpoints of a build it carries on go to the plan's sink as
/// they are made, and the whole set once complete, when it has one;
/// otherwise they are the part's.
fn run_part(
    traceset: Arc<Traceset>,
    span: (Time, Time),
    plan: &Plan,
    k: usize,
    arena: Option<(Arc<Arena>, u64)>,
    progress: &PartProgress,
) -> Option<Part> {
    let start = if k == 0 {
        plan.starts[0]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    } else {
        Some(plan.wait_start(k)?)
    };
    let (from, rank, build) = match start {
        Some((p, s, rank, build)) => (Some((p, s)), rank, build),
        None => (None, 0, None),
    };
    let mut sink = match build {
        Some(_) => plan.sink.lock().unwrap_or_else(|e| e.into_inner()).take(),
        None => None,
    };
    // How much of the traces' time span it has read, from its start.
    let mut reached = from.as_ref().map_or(span.0, |(p, _)| p.time);
    let mut collector = KernelCollector::new(&traceset, span, arena);
    collector.placeholders_pending = from.is_some();
    let start = match &from {
        Some((p, _)) => Start::Position(*p),
        None => Start::Time(Time::MIN),
    };
    let mut sched = part_scheduler(traceset, from);
    let mut req = KernelRequest::new(OwnerId(0), start.clone(), Box::new(collector) as Payload);
    req.priority = Priority::LOW;
    add_collector_hooks(&mut req);
    // Whether the part is the last is known only at its end: the end
    // state is kept for the statistics, and dropped when a part follows.
    req.after_traceset.add(Priority::DEFAULT, |ctx| {
        if let Some(c) = ctx.data.downcast_mut::<KernelCollector>() {
            if let Some(s) = c.stats.take() {
                c.closed_stats = Some(s.into_part(Some(ctx.state)));
            }
        }
        Flow::Continue
    });
    let id: RequestId = sched.add(req);
    // The splitter's checkpoint build, carried on in the same read (the
    // last part's, which reads to the end).
    let carry =
        build.map(|b| sched.add(super::checkpoint_pass::request_from(OwnerId(0), start, b)));
    let mut end_set = false;
    let mut seen = 0;
    let mut checkpoints = None;
    let fail = || {
        plan.fail();
        None
    };
    loop {
        // Paused, it waits before it looks for its end: one set while it
        // waited is seen before it reads on.
        while plan.paused.load(Ordering::Acquire) && !plan.failed.load(Ordering::Relaxed) {
            progress.waiting.store(true, Ordering::Release);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        progress.waiting.store(false, Ordering::Release);
        if !end_set {
            if let Some(end) = plan.ends[k].get() {
                if !sched.set_end_position(id, *end) {
                    return fail();
                }
                end_set = true;
            }
        }
        // Until its end is known, a part stays behind the splitter.
        let mut budget = 1 << 14;
        if !end_set && !plan.closed.load(Ordering::Acquire) {
            let ahead = plan
                .split_up_to
                .load(Ordering::Acquire)
                .saturating_sub(rank + seen);
            if ahead < 1024 {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            budget = budget.min(ahead);
        }
        let report = sched.service(Budget::events(budget), || {
            plan.failed.load(Ordering::Relaxed) || plan.paused.load(Ordering::Relaxed)
        });
        if !sched.source().errors().is_empty() {
            return fail();
        }
        if plan.failed.load(Ordering::Relaxed) {
            return None;
        }
        let mut done = None;
        for c in report.completed {
            if Some(c.id) == carry {
                checkpoints = c.data.downcast::<CheckpointBuild>().ok().map(|b| *b);
            } else if c.id == id {
                done = Some(c.data);
            }
        }
        if let (Some(sink), Some(carry)) = (&mut sink, carry) {
            if let Some(b) = sched
                .data_mut(carry)
                .and_then(|d| d.downcast_mut::<CheckpointBuild>())
            {
                // Nobody receives them any more: the window closed.
                if !sink.forward(b) {
                    return fail();
                }
            }
        }
        if let Some(data) = done {
            let mut collector = *data.downcast::<KernelCollector>().ok()?;
            progress.advance(collector.events - seen, collector.last_time, &mut reached);
            if let Some(end) = plan.ends[k].get().filter(|_| end_set) {
                // Read up to the next part's start.
                progress.advance(0, end.time, &mut reached);
            }
            let stats = collector.closed_stats.take()?;
            let stats = if end_set {
                stats.without_end()
            } else if plan.ends[k].get().is_some() {
                // Read to the end while a next part was started.
                return fail();
            } else {
                stats
            };
            if carry.is_some() && checkpoints.is_none() {
                // Both read to the end in one read: they complete
                // together.
                return fail();
            }
            if let Some(sink) = sink {
                if let Some(b) = checkpoints.take() {
                    sink.done(b);
                }
            }
            return Some(Part {
                collector,
                stats,
                checkpoints,
            });
        }
        match sched
            .data_mut(id)
            .and_then(|d| d.downcast_mut::<KernelCollector>())
        {
            Some(c) => {
                progress.advance(c.events - seen, c.last_time, &mut reached);
                if k == 0 {
                    plan.first_reached.store(c.last_time, Ordering::Relaxed);
                }
                seen = c.events;
            }
            None => return fail(),
        }
    }
}

/// Joins the parts, in order, into the pass's result.
fn join(parts: Vec<Part>) -> KernelData {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        unreachable!("a pass has at least one part")
    };
    let mut whole = first.collector;
    let mut stats_parts = vec![first.stats];
    for p in parts {
        absorb(&mut whole, p.collector);
        stats_parts.push(p.stats);
    }
    let mut st = stats::merge(stats_parts);
    st.trace_names = whole.trace_names.clone();
    whole.result = Some(st);
    whole.into_data()
}

/// Appends `p`, the part that follows what `w` holds, to `w`.
fn absorb(w: &mut KernelCollector, mut p: KernelCollector) {
    // 1. Thread records: placeholders continue the records alive in `w`,
    //    the others are new.
    let n = p.threads.len();
    let mut map = vec![NO_THREAD; n];
    let mut continued = Vec::new();
    // Each record's lists are moved as they are met, and only the
    // continued ones (the threads alive at the boundary) wait for step 2:
    // a copy of every record's lists (816 bytes each in place) was tens
    // of MB at the join's peak on a trace of many threads.
    let series = std::mem::take(&mut p.thread_series);
    debug_assert_eq!(series.len(), n);
    let mut continued_series: FastMap<usize, RecordLists> = FastMap::default();
    for (i, lists) in series.into_iter().enumerate() {
        let r = &p.threads[i];
        let key = (
            r.trace,
            ThreadKey {
                tid: r.tid,
                cpu: r.cpu,
            },
        );
        let (placeholder, touched) = p.placeholder[i];
        if placeholder {
            if let Some(&g) = w.alive.get(&key) {
                map[i] = g;
                continued.push((i, g, touched));
                continued_series.insert(i, lists);
                continue;
            }
            if !touched {
                // Nothing the part did names it: not a row of the pass.
                continue;
            }
        }
        let g = w.threads.len() as u32;
        map[i] = g;
        let generation = {
            let e = w.generations.entry((r.trace, r.tid)).or_insert(0);
            let v = *e;
            *e = e.wrapping_add(1);
            v
        };
        let mut rec = r.clone();
        rec.row = row_id(r.trace, key.1, generation);
        w.threads.push(rec);
        w.thread_series.push(lists);
        w.placeholder.push((false, true));
    }
    // 2. The changes the part appends to the records it continues: the
    //    continued thread records (their first change by the single
    //    pass's rules, the wake-ups pending at the boundary completed,
    //    their marks appended), the CPU and line records (new ones
    //    created in `w` first), and the switch arrows, renumbered; all on
    //    every core at once, the CPUs' long lists first, so that no core
    //    waits on another's share.
    let arena = w.arena.clone();
    if let Some(a) = &arena {
        a.write_through();
    }
    // The join spills as often as the pass did: every `spill_every`
    // changes or arrows (blocks of 64 changes).
    let spill_items = usize::try_from(w.spill_every).unwrap_or(usize::MAX).max(1);
    let spill_chunks = (spill_items / 64).max(1);
    let cpu_targets: Vec<usize> = p.cpus.iter().map(|c| cpu_record(w, c)).collect();
    let line_targets: Vec<usize> = p.lines.iter().map(|l| line_record(w, l)).collect();
    let mut cpu_srcs: Vec<Option<CpuSeries>> = std::mem::take(&mut p.cpu_series)
        .into_iter()
        .map(Some)
        .collect();
    let mut line_srcs: Vec<Option<LineSeries>> = std::mem::take(&mut p.line_series)
        .into_iter()
        .map(Some)
        .collect();
    let switches = src_column(std::mem::take(&mut p.switches));
    let mut jobs: Vec<JoinJob<'_>> = Vec::new();
    {
        let KernelCollector {
            thread_series,
            cpu_series,
            line_series,
            switches: w_switches,
            pending_wakeups,
            ..
        } = &mut *w;
        for (g, dst) in cpu_series.iter_mut().enumerate() {
            if let Some(k) = cpu_targets.iter().position(|&t| t == g) {
                if let Some(src) = cpu_srcs[k].take() {
                    jobs.push(JoinJob::Cpu(Box::new(CpuJob { dst, src })));
                }
            }
        }
        jobs.push(JoinJob::Switches(w_switches, switches));
        let mut of_record: FastMap<u32, usize> = FastMap::default();
        for &(i, g, _) in &continued {
            of_record.insert(g, i);
        }
        for (g, dst) in thread_series.iter_mut().enumerate() {
            if let Some(&i) = of_record.get(&(g as u32)) {
                jobs.push(JoinJob::Thread(ThreadJob {
                    g: g as u32,
                    dst,
                    src: continued_series
                        .remove(&i)
                        .expect("each continued record's lists are kept once"),
                    pending: pending_wakeups
                        .remove(&(g as u32))
                        .filter(|l| !l.is_empty()),
                    arrows: Vec::new(),
                    arena: arena.clone(),
                    spill_chunks,
                }));
            }
        }
        for (g, dst) in line_series.iter_mut().enumerate() {
            if let Some(k) = line_targets.iter().position(|&t| t == g) {
                if let Some(src) = line_srcs[k].take() {
                    jobs.push(JoinJob::Line(dst, Box::new(src)));
                }
            }
        }
    }
    on_cores(&mut jobs, |j| j.run(&map, arena.as_ref(), spill_items));
    let mut carried_arrows = Vec::new();
    let mut pending_back = Vec::new();
    for j in jobs {
        if let JoinJob::Thread(j) = j {
            carried_arrows.extend(j.arrows);
            if let Some(list) = j.pending {
                pending_back.push((j.g, list));
            }
        }
    }
    w.pending_wakeups.extend(pending_back);
    for a in &carried_arrows {
        w.max_wakeup_span = w.max_wakeup_span.max(a.to_time.saturating_sub(a.from_time));
    }
    for &(i, g, touched) in &continued {
        let r = &p.threads[i];
        let dst = &mut w.threads[g as usize];
        if touched {
            dst.name = r.name.clone();
            dst.pid = r.pid;
            dst.ppid = r.ppid;
        }
        if r.end != Time::MAX {
            // Its thread exited inside the part: the lists are final.
            dst.end = r.end;
            w.thread_series[g as usize].seal(w.arena.as_ref());
        }
    }
    // 3. What stays alive, and the wake-ups still pending. A record of
    //    `w` no placeholder stood for (the state no longer had its thread)
    //    stays alive, as the single pass keeps it; a continued record
    //    that ended inside the part loses what was pending for it, as in
    //    the single pass.
    let still_alive: std::collections::HashSet<u32> = p.alive.values().copied().collect();
    for &(i, g, _) in &continued {
        let r = &p.threads[i];
        w.alive.remove(&(
            r.trace,
            ThreadKey {
                tid: r.tid,
                cpu: r.cpu,
            },
        ));
        if !still_alive.contains(&(i as u32)) {
            w.pending_wakeups.remove(&g);
        }
    }
    for (k, l) in p.alive.drain() {
        if map[l as usize] != NO_THREAD {
            w.alive.insert(k, map[l as usize]);
        }
    }
    for (l, list) in p.pending_wakeups.drain() {
        let g = map[l as usize];
        if g == NO_THREAD {
            continue;
        }
        let v = w.pending_wakeups.entry(g).or_default();
        v.extend(list.into_iter().map(|(t, waker)| (t, map[waker as usize])));
    }
    // 4. The part's wake-ups, renumbered, merged with those completed at
    //    the join, which come first among those of their instant, as the
    //    single pass finds them; merged as they are read: unpacked at once
    //    they were the join's peak (about 40 bytes each, 7 M in the second
    //    half of an 8 GB trace). They spill as the pass's do: millions of
    //    arrows pushed at once otherwise stayed on the heap (112 MB at the
    //    join of an 8 GB trace).
    let local = src_column(std::mem::take(&mut p.wakeups));
    carried_arrows.sort_by_key(|a| a.to_time);
    let mut carried = carried_arrows.into_iter().peekable();
    for (k, a) in local.iter().map(|a| renumber_arrow(&map, a)).enumerate() {
        while let Some(c) = carried.next_if(|c| c.to_time <= a.to_time) {
            w.wakeups.push(c);
        }
        w.wakeups.push(a);
        if let (Some(ar), true) = (&arena, (k + 1).is_multiple_of(spill_items)) {
            w.wakeups.spill(ar);
        }
    }
    for c in carried {
        w.wakeups.push(c);
    }
    if let Some(ar) = &arena {
        w.wakeups.spill(ar);
    }
    w.max_wakeup_span = w.max_wakeup_span.max(p.max_wakeup_span);
    w.wakeup_events += p.wakeup_events;
    // 5. Counts.
    for (a, b) in w.histogram.counts.iter_mut().zip(&p.histogram.counts) {
        *a += b;
    }
    w.events += p.events;
    w.last_time = w.last_time.max(p.last_time);
}

/// What the join appends to one record of what precedes the part.
enum JoinJob<'a> {
    /// A CPU record's changes, their thread records renumbered.
    Cpu(Box<CpuJob<'a>>),
    /// The switch arrows, renumbered.
    Switches(&'a mut ColumnBuilder<ArrowRecord>, Column<ArrowRecord>),
    /// A continued thread record's changes.
    Thread(ThreadJob<'a>),
    /// An IRQ or soft IRQ line's changes.
    Line(&'a mut LineSeries, Box<LineSeries>),
}

impl JoinJob<'_> {
    /// Appends, renumbering thread records by `map`, spilling to `arena`
    /// as the pass did (arrows every `spill_items`).
    fn run(&mut self, map: &[u32], arena: Option<&Arc<Arena>>, spill_items: usize) {
        match self {
            JoinJob::Cpu(j) => j.run(map, arena),
            JoinJob::Switches(dst, src) => {
                for (k, a) in src.iter().enumerate() {
                    dst.push(renumber_arrow(map, a));
                    if let (Some(ar), true) = (arena, (k + 1).is_multiple_of(spill_items)) {
                        dst.spill(ar);
                    }
                }
                if let Some(ar) = arena {
                    dst.spill(ar);
                }
            }
            JoinJob::Thread(j) => j.run(),
            JoinJob::Line(dst, src) => append_line_changes(dst, src, arena),
        }
    }
}

/// Arrow `a` of a part, its thread records renumbered by `map`.
fn renumber_arrow(map: &[u32], a: ArrowRecord) -> ArrowRecord {
    ArrowRecord {
        from: map[a.from as usize],
        to: map[a.to as usize],
        ..a
    }
}

/// The continuation of one CPU record by a part: its explicit changes
/// (`cpu_row`), which the part classified against its own thread rows,
/// after the record's, and the last change before the part, listed
/// explicit (its classification needs what follows; listing a change
/// explicit is always exact, where the single pass may find it implied).
///
/// The part's classifications hold in the joined rows. The join changes
/// only the first change of each continued thread's row in the part, and
/// the CPU row's first (either may be dropped, when equal to the state
/// before the part), and the part implies no change from them
/// (`kernel::implied_by_thread`, `CpuSeries::first_implied`). The row's
/// summary is made at the end, from the joined rows
/// (`CpuSeries::summarize_at_end`): the part's blocks of `BLOCK` changes
/// do not line up with the joined row's.
struct CpuJob<'a> {
    dst: &'a mut CpuSeries,
    src: CpuSeries,
}

/// How a part's CPU row meets the row before it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Meet {
    /// There is none.
    Empty,
    /// The part's first change is at the instant of the last before, and
    /// replaces it.
    Replaced,
    /// The part's first change says what the last before says, and is
    /// dropped.
    Dropped,
    /// The part's first change follows the last before.
    Appended,
}

impl CpuJob<'_> {
    fn run(&mut self, map: &[u32], arena: Option<&Arc<Arena>>) {
        let renumber = |(t, r, m): CpuChange| {
            let r = if r == NO_THREAD { r } else { map[r as usize] };
            (t, r, m)
        };
        let dst = &mut *self.dst;
        let src = &mut self.src;
        let n = src.len;
        let Some(src_last) = src.last.map(renumber) else {
            return;
        };
        let explicit = std::mem::take(&mut src.explicit);
        let (ex_times, ex_threads, ex_modes, ex_before) = (
            src_column(explicit.times),
            src_column(explicit.threads),
            src_column(explicit.modes),
            src_column(explicit.before),
        );
        // The part's first change: listed, unless it is the last (nothing
        // precedes it in the part).
        let first = match ex_before.first() {
            Some(0) => renumber((ex_times.at(0), ex_threads.at(0), ex_modes.at(0))),
            _ => src_last,
        };
        let before = dst.len;
        let meet = match dst.last {
            None => Meet::Empty,
            Some(l) if l.0 == first.0 => {
                // Replaced: taken back from the list if it was listed.
                if dst.last_closed && dst.explicit.before.last() == Some(before as u64 - 1) {
                    dst.explicit.pop();
                }
                Meet::Replaced
            }
            Some(l) => {
                if !dst.last_closed {
                    dst.explicit.push(before - 1, l);
                }
                if (l.1, l.2) == (first.1, first.2) {
                    Meet::Dropped
                } else {
                    Meet::Appended
                }
            }
        };
        // Where the part's change k lands: at `offset + k`.
        let offset = match meet {
            Meet::Empty => 0,
            Meet::Replaced | Meet::Dropped => before - 1,
            Meet::Appended => before,
        };
        let listed = ex_before
            .iter()
            .zip(ex_times.iter())
            .zip(ex_threads.iter())
            .zip(ex_modes.iter());
        for (((k, t), r), m) in listed {
            let k = k as usize;
            if meet == Meet::Dropped && k == 0 {
                continue;
            }
            dst.explicit.push(offset + k, renumber((t, r, m)));
            if let (Some(ar), true) = (arena, dst.explicit.times.len().is_multiple_of(1 << 18)) {
                dst.explicit.spill(ar);
            }
        }
        // The joined row's last two changes.
        let src_before_last = src.before_last.map(renumber);
        let (last, before_last, closed) = match (meet, n) {
            (Meet::Dropped, 1) => (dst.last, dst.before_last, true),
            (Meet::Dropped, 2) | (Meet::Appended, 1) => (Some(src_last), dst.last, false),
            (Meet::Replaced, 1) => (Some(src_last), dst.before_last, false),
            _ => (Some(src_last), src_before_last, src.last_closed),
        };
        (dst.len, dst.last, dst.before_last, dst.last_closed) =
            (offset + n, last, before_last, closed);
        if meet == Meet::Empty {
            dst.blocks = std::mem::take(&mut src.blocks);
            dst.summarize_at_end = src.summarize_at_end;
        } else {
            dst.blocks.reopen();
            dst.summarize_at_end = true;
        }
        dst.whole = None;
        if let Some(ar) = arena {
            dst.spill(ar);
        }
    }
}

/// The continuation of one thread record by a part.
struct ThreadJob<'a> {
    g: u32,
    dst: &'a mut RecordLists,
    src: RecordLists,
    /// The wake-ups pending for it at the boundary, until it runs.
    pending: Option<Vec<(Time, u32)>>,
    /// The wake-ups it completed.
    arrows: Vec<ArrowRecord>,
    /// Where the appended changes go as chunks fill (the join's heap
    /// stays bounded as the pass's does).
    arena: Option<Arc<Arena>>,
    /// Chunks of changes appended between two spills.
    spill_chunks: usize,
}

impl ThreadJob<'_> {
    fn run(&mut self) {
        let src = std::mem::take(&mut self.src).into_lists();
        let (times, codes) = (src.times, src.codes);
        let running = |c: u8| decode_thread_code(c).0 == ThreadStatus::Run;
        let mut ran_at = None;
        let dst = self.dst.grow();
        let mut last = None;
        let (mut time_chunk, mut code_chunk) = (Vec::new(), Vec::new());
        // Lists of one record: their chunks have the same lengths.
        for k in 0..times.chunk_count().min(codes.chunk_count()) {
            times.read_chunk(k, &mut time_chunk);
            codes.read_chunk(k, &mut code_chunk);
            let (mut t, mut c) = (&time_chunk[..], &code_chunk[..]);
            if k == 0 {
                let (Some(&t0), Some(&c0)) = (t.first(), c.first()) else {
                    break;
                };
                // The first change, by the single pass's rules (it was
                // decided without what precedes the part).
                if let Some(prev) = dst.change(t0, c0) {
                    if running(c0) && !prev.is_some_and(running) {
                        ran_at = Some(t0);
                    }
                }
                last = Some(c0);
                (t, c) = (&t[1..], &c[1..]);
            }
            if ran_at.is_none() && self.pending.is_some() {
                // Its first run in the part, if any.
                let mut prev = last;
                for (&ti, &ci) in t.iter().zip(c) {
                    if running(ci) && !prev.is_some_and(running) {
                        ran_at = Some(ti);
                        break;
                    }
                    prev = Some(ci);
                }
            }
            last = c.last().copied().or(last);
            // The others are the single pass's own: appended as they are.
            dst.times.extend_from_slice(t);
            dst.codes.extend_from_slice(c);
            dst.sync();
            // A busy thread's part can hold millions of changes: spilled
            // as they are appended, as `append_line_changes` does (appended
            // whole, they were 27 MB of the join's peak on 8 GB).
            if let (Some(a), true) = (&self.arena, (k + 1).is_multiple_of(self.spill_chunks)) {
                dst.spill(a);
            }
        }
        for m in src.marks.chunks() {
            dst.marks.extend_from_slice(&m);
        }
        if let Some(a) = &self.arena {
            dst.spill(a);
        }
        // The wake-ups pending for it end at its first run.
        if let (Some(t), Some(list)) = (ran_at, self.pending.take_if(|_| ran_at.is_some())) {
            let to = self.g;
            self.arrows
                .extend(list.into_iter().map(|(wt, waker)| ArrowRecord {
                    from_time: wt,
                    from: waker,
                    to_time: t,
                    to,
                }));
        }
    }
}

/// Appends a part's changes of a line: the first change by the single
/// pass's rules, the others as they are (they are the single pass's own,
/// and may repeat a value when a change at one instant was undone). What
/// is appended is spilled as it goes.
fn append_line_changes(dst: &mut LineSeries, src: &mut LineSeries, arena: Option<&Arc<Arena>>) {
    let (times, codes, cpus) = (
        src_column(std::mem::take(&mut src.times)),
        src_column(std::mem::take(&mut src.codes)),
        src_column(std::mem::take(&mut src.cpus)),
    );
    let chunks = times.chunks().zip(codes.chunks()).zip(cpus.chunks());
    for (k, ((t, c), p)) in chunks.enumerate() {
        let (mut t, mut c, mut p) = (&t[..], &c[..], &p[..]);
        if k == 0 {
            let (Some(&t0), Some(&c0), Some(&p0)) = (t.first(), c.first(), p.first()) else {
                break;
            };
            dst.change(t0, c0, p0);
            (t, c, p) = (&t[1..], &c[1..], &p[1..]);
        }
        dst.times.extend_from_slice(t);
        dst.codes.extend_from_slice(c);
        dst.cpus.extend_from_slice(p);
        dst.sync();
        if let (Some(ar), true) = (arena, k % 4096 == 4095) {
            dst.spill(ar);
        }
    }
    if let Some(ar) = arena {
        dst.spill(ar);
    }
}

/// The items of a finished part's builder.
fn src_column<T: Item>(mut b: ColumnBuilder<T>) -> Column<T> {
    b.snapshot()
}

/// The index in `w` of the record of `c`'s CPU, created when missing.
fn cpu_record(w: &mut KernelCollector, c: &CpuRecord) -> usize {
    let ti = c.trace as usize;
    if w.cpu_index.len() <= ti {
        w.cpu_index.resize_with(ti + 1, CpuMap::new);
    }
    let slot = w.cpu_index[ti].get_or_insert_with(c.cpu, || u32::MAX);
    if *slot == u32::MAX {
        *slot = w.cpus.len() as u32;
        w.cpus.push(CpuRecord {
            times: Default::default(),
            threads: Default::default(),
            modes: Default::default(),
            blocks: Default::default(),
            ..c.clone()
        });
        w.cpu_series.push(Default::default());
    }
    *slot as usize
}

/// The index in `w` of the record of `l`'s line, created when missing.
fn line_record(w: &mut KernelCollector, l: &LineRecord) -> usize {
    let key = (l.trace, l.kind, l.number);
    if let Some(&g) = w.line_index.get(&key) {
        let g = g as usize;
        if w.lines[g].name.is_none() {
            w.lines[g].name = l.name.clone();
        }
        return g;
    }
    let g = w.lines.len();
    w.line_index.insert(key, g as u32);
    w.lines.push(LineRecord {
        times: Default::default(),
        codes: Default::default(),
        cpus: Default::default(),
        blocks: Default::default(),
        ..l.clone()
    });
    w.line_series.push(Default::default());
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares grow, the last part's end is the trace's end, and every
    /// part ends with the first, the last reading at `last` times the
    /// others' pace; for two parts the first ends where `s / pace = s + (1
    /// - s) / (last × pace)`.
    #[test]
    fn part_shares_end_the_parts_together() {
        for parts in 2..6 {
            for pace in [0.05, 0.2, 0.35, 0.6, 0.9] {
                for last in [1.0, CARRY_PACE, 0.5] {
                    let s = part_shares(parts, pace, last);
                    assert_eq!(s.len(), parts - 1);
                    assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
                    assert!(s[0] > 0.0 && s[parts - 2] < 1.0, "{s:?}");
                    // Part k ends when the splitter reached its start,
                    // plus its own read: all at the first part's end.
                    let mut starts = vec![0.0];
                    starts.extend(&s);
                    starts.push(1.0);
                    let first_end = starts[1] / pace;
                    for k in 1..parts {
                        let own = if k + 1 == parts { last * pace } else { pace };
                        let end = starts[k] + (starts[k + 1] - starts[k]) / own;
                        assert!(
                            (end - first_end).abs() < 1e-9,
                            "{parts} parts, {pace}, {last}: {s:?}"
                        );
                    }
                }
            }
        }
        let two = part_shares(2, 0.35, 1.0);
        assert!((two[0] - 1.0 / (2.0 - 0.35)).abs() < 1e-12);
        let carried = part_shares(2, 0.35, 0.9);
        assert!((carried[0] - 1.0 / (1.0 + 0.9 * (1.0 - 0.35))).abs() < 1e-12);
        // A slower last part starts later.
        assert!(carried[0] > two[0]);
        // A slow analysis splits about evenly.
        let slow = part_shares(4, 0.05, 1.0);
        assert!((slow[0] - 0.25).abs() < 0.05, "{slow:?}");
    }

    #[test]
    fn analysis_pace_is_a_guess_until_both_read() {
        assert_eq!(analysis_pace(100, Time::MIN, 500), 0.35);
        assert_eq!(analysis_pace(100, 150, 100), 0.35);
        assert!((analysis_pace(100, 200, 500) - 0.25).abs() < 1e-12);
        assert_eq!(analysis_pace(100, 500, 500), 0.9);
    }
}
