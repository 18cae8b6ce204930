//! The checkpoint pass of a session: a LOW request from the trace start
//! keeping the state every so many events, with the seek index (the
//! engine's [`CheckpointBuild`]). Added with the kernel pass, which starts
//! there too, the two join in one read; the window keeps its checkpoints
//! in memory for seeks, and both the window and `traceloom index` cache
//! them next to the analysis store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// A checkpoint pass on a thread of its own, for a window whose analysis
/// reads far slower (the window's pass builds every view's data; a
/// checkpoint pass only keeps the state): it hands its checkpoints over
/// as it makes them, so that a request for any part of the trace it has
/// passed replays a few thousand events from the nearest one rather than
/// everything from where the analysis is. A seek's replay is not
/// interrupted, so without them a zoom ahead of the analysis froze the
/// window for as long as reading up to there took.
///
/// Dropping it stops the thread.
pub struct CheckpointsAhead {
    rx: std::sync::mpsc::Receiver<Ahead>,
    stop: Arc<AtomicBool>,
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
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let traceset = Arc::new(traceset.with_decode_threads(0));
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("checkpoints ahead".into())
            .spawn(move || {
                on_thread();
                let mut sched = part_scheduler(traceset, None);
                let id = sched.add(request(OwnerId(0), every));
                let mut sent = 0;
                let forward = |b: &CheckpointBuild, sent: &mut usize| {
                    for c in &b.checkpoints[*sent..] {
                        // The receiver gone: the window closed the tab.
                        if tx
                            .send(Ahead::Checkpoint(c.position, c.state.clone()))
                            .is_err()
                        {
                            return false;
                        }
                    }
                    *sent = b.checkpoints.len();
                    true
                };
                while !stopped.load(Ordering::Relaxed) {
                    let report = sched.service(Budget::events(1 << 14), || false);
                    if let Some(c) = report.completed.into_iter().find(|c| c.id == id) {
                        if let Ok(b) = c.data.downcast::<CheckpointBuild>() {
                            if forward(&b, &mut sent) {
                                let _ = tx.send(Ahead::Done(b.finish()));
                            }
                        }
                        return;
                    }
                    let Some(b) = sched
                        .data_mut(id)
                        .and_then(|d| d.downcast_mut::<CheckpointBuild>())
                    else {
                        return;
                    };
                    if !forward(b, &mut sent) {
                        return;
                    }
                }
            })?;
        Ok(CheckpointsAhead {
            rx,
            stop,
            over: false,
            reached: None,
        })
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
                Err(std::sync::mpsc::TryRecvError::Empty) => return (new, None),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
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

impl Drop for CheckpointsAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
