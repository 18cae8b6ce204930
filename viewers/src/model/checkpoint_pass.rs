//! The checkpoint pass of a session: a LOW request from the trace start
//! keeping the state every so many events, with the seek index (the
//! engine's [`CheckpointBuild`]). Added with the kernel pass, which starts
//! there too, the two join in one read; the window keeps its checkpoints
//! in memory for seeks, and both the window and `traceloom index` cache
//! them next to the analysis store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};

use traceloom_base::Time;
use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint::{CheckpointBuild, Checkpoints, DEFAULT_INTERVAL};
use traceloom_engine::request::{Budget, OwnerId, Start};
use traceloom_engine::source::CtfPosition;
use traceloom_engine::state::TracesetState;
use traceloom_hooks::{Flow, Priority};

use super::kernel::{KernelAnalysis, KernelData};
use super::parallel_pass;
use super::session::{part_scheduler, KernelRequest, Payload, Session};

/// Events between two checkpoints of a whole-trace checkpoint pass: the
/// engine's default, or more on a large trace so that it keeps about 512
/// of them (each is a whole state: thousands of threads), estimating ~20
/// bytes an event. A seek then replays at most some 100,000 events on a
/// 1 GB trace (~15 ms).
pub fn interval(traceset: &Traceset) -> u64 {
    let events = traceset.total_bytes() / 20;
    (events / 512).max(DEFAULT_INTERVAL)
}

/// The checkpoint pass's request (its data a [`CheckpointBuild`]: take it
/// with [`Session::take`] once complete, then
/// [`finish`](CheckpointBuild::finish)).
pub fn request(owner: OwnerId, every: u64) -> KernelRequest {
    request_from(owner, Start::Time(Time::MIN), CheckpointBuild::new(every))
}

/// The request of a checkpoint pass carrying `build` on from `start`:
/// from the trace start for a new build, or from the checkpoint it was
/// rewound to ([`CheckpointBuild::rewind`]) with that checkpoint's state.
pub fn request_from(
    owner: OwnerId,
    start: Start<CtfPosition>,
    build: CheckpointBuild,
) -> KernelRequest {
    let mut req = KernelRequest::new(owner, start, Box::new(build) as Payload);
    req.priority = Priority::LOW;
    req.event.add(Priority::HIGH, |ctx| {
        if let Some(b) = ctx.data.downcast_mut::<CheckpointBuild>() {
            b.observe(ctx.event, ctx.position, ctx.state);
        }
        Flow::Continue
    });
    req
}

/// The kernel pass (as [`KernelAnalysis::run_with_progress`]) with the
/// checkpoint pass joined to it: both in one read.
pub fn analyse_with_checkpoints(
    session: &mut Session,
    progress: impl FnMut(u64, Time),
) -> (Arc<KernelData>, Checkpoints) {
    let mut found = None;
    let data = analyse_handing_checkpoints(session, progress, &mut |c| found = Some(c));
    (data, found.unwrap_or_default())
}

/// [`analyse_with_checkpoints`], giving the checkpoints to `done` (to
/// cache them, say) as soon as both passes end, before the analysis' data
/// is made from the pass: held while it was, the checkpoints (whole
/// states, 21 MB on the 8 GB generated trace) were part of the peak of
/// the pass.
pub fn analyse_handing_checkpoints(
    session: &mut Session,
    progress: impl FnMut(u64, Time),
    done: &mut dyn FnMut(Checkpoints),
) -> Arc<KernelData> {
    let owner = session.new_owner();
    let every = interval(session.traceset());
    // The checkpoint pass keeps the checkpoints: the scheduler's own
    // would be a second set of whole states (31 MB on a 1 GB trace).
    session.scheduler().set_checkpoint_interval(None);
    let id = session.add(request(owner, every));
    let collector = KernelAnalysis::run_to_end(session, progress);
    // Both started at the trace start and end with it: the checkpoint
    // pass is complete too, or a few events from it.
    while !session.is_complete(id) && session.scheduler().request(id).is_some() {
        session.service(Budget::events(1 << 20), || false);
    }
    let checkpoints = session
        .take::<CheckpointBuild>(id)
        .map(CheckpointBuild::finish)
        .unwrap_or_default();
    done(checkpoints);
    Arc::new(collector.into_data())
}

/// The kernel pass of `session` in `parts` parallel parts
/// ([`parallel_pass`]), split at `checkpoints` when given (a cache's),
/// else at checkpoints a checkpoint pass finds while the first part reads
/// ([`parallel_pass::analyse_cold`]); those checkpoints go to `done` as
/// soon as the parts no longer need them, before the parts are joined.
/// With one part, [`analyse_handing_checkpoints`].
pub fn analyse_in_parts(
    session: &mut Session,
    checkpoints: Option<Checkpoints>,
    parts: usize,
    progress: &mut dyn FnMut(u64, Time),
    done: &mut dyn FnMut(Checkpoints),
) -> Arc<KernelData> {
    if parts <= 1 {
        return match checkpoints {
            Some(c) => {
                done(c);
                // Checkpoints are known: the scheduler need not take its own.
                session.scheduler().set_checkpoint_interval(None);
                KernelAnalysis::run_with_progress(session, progress)
            }
            None => analyse_handing_checkpoints(session, progress, done),
        };
    }
    match checkpoints {
        Some(c) => parallel_pass::analyse_handing(session, c, parts, progress, done),
        None => {
            let every = interval(session.traceset());
            parallel_pass::analyse_cold_handing(session, parts, every, progress, done)
        }
    }
}

/// What [`CheckpointsAhead`] reports.
enum Ahead {
    /// A checkpoint: the state before the event at the position.
    Checkpoint(CtfPosition, TracesetState),
    /// The pass is complete: all its checkpoints and the seek index.
    Done(Checkpoints),
}

/// Where the checkpoints of a [`CheckpointsAhead`] go, from its own
/// thread or, once its build is handed over, from the read carrying it
/// on: the same channel, so that the window sees one pass.
pub(super) struct CheckpointSink {
    tx: Sender<Ahead>,
    /// Checkpoints of the build sent so far: a build rewound behind them
    /// makes them again, and they are not sent twice.
    sent: usize,
    /// None is sent after the first at this time or later
    /// ([`CheckpointsAhead::start_until`]).
    until: Option<Time>,
    /// That one was sent.
    ended: bool,
}

impl CheckpointSink {
    /// Sends the checkpoints `build` made since the last call; `false`
    /// when nobody receives them any more (the window closed the tab).
    pub(super) fn forward(&mut self, build: &CheckpointBuild) -> bool {
        for c in build.checkpoints.iter().skip(self.sent) {
            if self.ended {
                break;
            }
            if self
                .tx
                .send(Ahead::Checkpoint(c.position, c.state.clone()))
                .is_err()
            {
                return false;
            }
            self.sent += 1;
            self.ended = self.until.is_some_and(|u| c.position.time >= u);
        }
        true
    }

    /// The build is complete: its last checkpoints, then all of them with
    /// the seek index.
    pub(super) fn done(mut self, build: CheckpointBuild) {
        if self.forward(&build) {
            let _ = self.tx.send(Ahead::Done(build.finish()));
        }
    }
}

/// A [`CheckpointsAhead`]'s build handed over to the read that carries it
/// on from a checkpoint (a window's [`parallel_pass::TailPart`], which
/// reads with the state anyway): rewound to that checkpoint
/// ([`CheckpointBuild::rewind`]), with the number of events before it and
/// where its later checkpoints go.
pub(super) struct CarriedBuild {
    pub(super) build: CheckpointBuild,
    pub(super) rank: u64,
    pub(super) sink: CheckpointSink,
}

/// The answer to [`CheckpointsAhead::hand_over`], to wait for.
pub struct BuildHandOver(Receiver<Option<CarriedBuild>>);

impl BuildHandOver {
    /// The build rewound to the checkpoint asked for; `None` when the
    /// pass was over first (complete, or stopped), or had no checkpoint
    /// there.
    pub(super) fn wait(self) -> Option<CarriedBuild> {
        self.0.recv().ok().flatten()
    }
}

/// Where a hand-over of a [`CheckpointsAhead`]'s build stands.
enum HandOverSlot {
    /// None asked.
    Open,
    /// Asked: stop at the checkpoint at this position, and give the
    /// build there.
    Wanted(CtfPosition, SyncSender<Option<CarriedBuild>>),
    /// The pass is over: a hand-over asked now gets nothing.
    Closed,
}

/// Closes the hand-over slot when the pass's thread ends, however it
/// ends: a hand-over still asked gets nothing.
struct CloseSlot(Arc<Mutex<HandOverSlot>>);

impl CloseSlot {
    /// The hand-over asked, if any (the slot stays open).
    fn wanted(&self) -> Option<(CtfPosition, SyncSender<Option<CarriedBuild>>)> {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *slot, HandOverSlot::Open) {
            HandOverSlot::Wanted(at, reply) => Some((at, reply)),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Asks again for a hand-over [`wanted`](Self::wanted) gave: the pass
    /// has not made its checkpoint yet.
    fn keep(&self, at: CtfPosition, reply: SyncSender<Option<CarriedBuild>>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = HandOverSlot::Wanted(at, reply);
    }
}

impl Drop for CloseSlot {
    fn drop(&mut self) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let HandOverSlot::Wanted(_, reply) = std::mem::replace(&mut *slot, HandOverSlot::Closed)
        {
            let _ = reply.send(None);
        }
    }
}

/// A checkpoint pass on a thread of its own, for a window whose analysis
/// reads far slower (the window's pass builds every view's data; a
/// checkpoint pass only keeps the state): it hands its checkpoints over
/// as it makes them, so that a request for any part of the trace it has
/// passed replays a few thousand events from the nearest one rather than
/// everything from where the analysis is. A seek's replay is not
/// interrupted, so without them a zoom ahead of the analysis froze the
/// window for as long as reading up to there took.
///
/// Once the window's pass is split ([`hand_over`](Self::hand_over)), the
/// pass stops and its second part carries the build on, as the command
/// line's last part does: reading on beside it, on the same core, the
/// checkpoint pass slowed it down (1 GB generated trace: the window's
/// analysis completed about 1 s later).
///
/// Dropping it stops the thread.
pub struct CheckpointsAhead {
    rx: Receiver<Ahead>,
    stop: Arc<AtomicBool>,
    slot: Arc<Mutex<HandOverSlot>>,
    over: bool,
    reached: Option<Time>,
}

impl CheckpointsAhead {
    /// Starts the pass over `traceset`, keeping a checkpoint every `every`
    /// events; its events are decoded on its own thread only, which first
    /// runs `on_thread` (a window lowers its priority there).
    pub fn start(
        traceset: &Traceset,
        every: u64,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        Self::spawn(traceset, every, None, on_thread)
    }

    /// A pass from checkpoint `from` (its position and state) that ends
    /// with its first checkpoint at `until` or after: the window's way to
    /// a zoom ahead of the pass when the checkpoint pass was handed over
    /// (see [`hand_over`](Self::hand_over)). Its checkpoints serve seeks
    /// only: it makes no whole set, nor a seek index.
    pub fn start_until(
        traceset: &Traceset,
        every: u64,
        from: (CtfPosition, TracesetState),
        until: Time,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        Self::spawn(traceset, every, Some((from, until)), on_thread)
    }

    fn spawn(
        traceset: &Traceset,
        every: u64,
        bounded: Option<((CtfPosition, TracesetState), Time)>,
        on_thread: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(HandOverSlot::Open));
        let traceset = Arc::new(traceset.with_decode_threads(0));
        let stopped = stop.clone();
        let close = CloseSlot(slot.clone());
        std::thread::Builder::new()
            .name("checkpoints ahead".into())
            .spawn(move || {
                on_thread();
                read_ahead(traceset, every, bounded, &close, &stopped, tx);
            })?;
        Ok(CheckpointsAhead {
            rx,
            stop,
            slot,
            over: false,
            reached: None,
        })
    }

    /// Asks the pass to stop at its checkpoint at `at` (once it has made
    /// it) and to give its build, rewound there, to the read that goes on
    /// from there (see the type's documentation); later checkpoints still
    /// come through [`poll`](Self::poll), from that read. The answer comes
    /// within a chunk of the pass's read past `at`: nothing if the pass
    /// was over first or made no checkpoint at `at`.
    pub fn hand_over(&self, at: CtfPosition) -> BuildHandOver {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        match &*slot {
            HandOverSlot::Closed => {
                let _ = reply.send(None);
            }
            _ => *slot = HandOverSlot::Wanted(at, reply),
        }
        BuildHandOver(answer)
    }

    /// The checkpoints made since the last call, and the whole set with
    /// the seek index once the pass is complete (`None` before, and when
    /// its thread ended without completing it).
    pub fn poll(&mut self) -> (Vec<(CtfPosition, TracesetState)>, Option<Checkpoints>) {
        let mut new = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(Ahead::Checkpoint(p, s)) => {
                    self.reached = Some(p.time);
                    new.push((p, s));
                }
                Ok(Ahead::Done(c)) => {
                    self.over = true;
                    return (new, Some(c));
                }
                Err(TryRecvError::Empty) => return (new, None),
                Err(TryRecvError::Disconnected) => {
                    self.over = true;
                    return (new, None);
                }
            }
        }
    }

    /// The time of the last checkpoint [`poll`](Self::poll) gave.
    pub fn reached(&self) -> Option<Time> {
        self.reached
    }

    /// Whether the pass is over (complete, or its thread ended) and
    /// [`poll`](Self::poll) has given everything it made.
    pub fn is_over(&self) -> bool {
        self.over
    }
}

/// The thread of a [`CheckpointsAhead`]: reads `traceset` from its start
/// (or `bounded`'s checkpoint, up to its time), sending its checkpoints
/// through `tx`, until the build is complete, handed over (`close`) or
/// `stopped`.
fn read_ahead(
    traceset: Arc<Traceset>,
    every: u64,
    bounded: Option<((CtfPosition, TracesetState), Time)>,
    close: &CloseSlot,
    stopped: &AtomicBool,
    tx: Sender<Ahead>,
) {
    let (from, until) = bounded.unzip();
    let start = from
        .as_ref()
        .map_or(Start::Time(Time::MIN), |(p, _)| Start::Position(*p));
    let mut sched = part_scheduler(traceset, from);
    let build = CheckpointBuild::new(every);
    let id = sched.add(request_from(OwnerId(0), start, build));
    let mut sink = CheckpointSink {
        tx,
        sent: 0,
        until,
        ended: false,
    };
    while !stopped.load(Ordering::Relaxed) {
        let report = sched.service(Budget::events(1 << 14), || false);
        let complete = report.completed.into_iter().find(|c| c.id == id);
        let build = match complete {
            Some(c) => match c.data.downcast::<CheckpointBuild>() {
                Ok(b) => Built::Complete(b),
                Err(_) => return,
            },
            None => match sched
                .data_mut(id)
                .and_then(|d| d.downcast_mut::<CheckpointBuild>())
            {
                Some(b) => Built::Reading(b),
                None => return,
            },
        };
        if let Some((at, reply)) = close.wanted() {
            let b = build.get();
            match b.checkpoints.iter().position(|c| c.position == at) {
                Some(i) => {
                    let mut b = match build {
                        Built::Complete(b) => b,
                        Built::Reading(_) => match sched
                            .cancel(id)
                            .and_then(|d| d.downcast::<CheckpointBuild>().ok())
                        {
                            Some(b) => b,
                            None => return,
                        },
                    };
                    let rank = b.rewind(i).rank;
                    let build = *b;
                    let _ = reply.send(Some(CarriedBuild { build, rank, sink }));
                    return;
                }
                // Not there yet: asked again after the next chunk.
                None if !matches!(build, Built::Complete(_))
                    && b.checkpoints.last().is_none_or(|c| c.position < at) =>
                {
                    close.keep(at, reply)
                }
                None => {
                    let _ = reply.send(None);
                }
            }
        }
        match build {
            Built::Complete(b) if until.is_some() => {
                sink.forward(&b);
                return;
            }
            Built::Complete(b) => return sink.done(*b),
            Built::Reading(b) => {
                if !sink.forward(b) || sink.ended {
                    return;
                }
            }
        }
    }
}

/// The build of a [`CheckpointsAhead`] after a chunk.
enum Built<'a> {
    /// Complete: the pass read the whole trace.
    Complete(Box<CheckpointBuild>),
    /// Still reading, in the scheduler.
    Reading(&'a mut CheckpointBuild),
}

impl Built<'_> {
    fn get(&self) -> &CheckpointBuild {
        match self {
            Built::Complete(b) => b,
            Built::Reading(b) => b,
        }
    }
}

impl Drop for CheckpointsAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
