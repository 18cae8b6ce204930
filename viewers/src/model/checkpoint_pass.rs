//! The checkpoint pass of a session: a LOW request from the trace start
//! keeping the state every so many events, with the seek index (the
//! engine's [`CheckpointBuild`]). Added with the kernel pass, which starts
//! there too, the two join in one read; the window keeps its checkpoints
//! in memory for seeks, and both the window and `traceloom index` cache
//! them next to the analysis store.

use std::sync::Arc;

use traceloom_base::Time;
use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint::{CheckpointBuild, Checkpoints, DEFAULT_INTERVAL};
use traceloom_engine::request::{Budget, OwnerId, Start};
use traceloom_hooks::{Flow, Priority};

use super::kernel::{KernelAnalysis, KernelData};
use super::parallel_pass;
use super::session::{KernelRequest, Payload, Session};

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
    let mut req = KernelRequest::new(
        owner,
        Start::Time(Time::MIN),
        Box::new(CheckpointBuild::new(every)) as Payload,
    );
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
    let owner = session.new_owner();
    let every = interval(session.traceset());
    let id = session.add(request(owner, every));
    let data = KernelAnalysis::run_with_progress(session, progress);
    // Both started at the trace start and end with it: the checkpoint
    // pass is complete too, or a few events from it.
    while !session.is_complete(id) && session.scheduler().request(id).is_some() {
        session.service(Budget::events(1 << 20), || false);
    }
    let checkpoints = session
        .take::<CheckpointBuild>(id)
        .map(CheckpointBuild::finish)
        .unwrap_or_default();
    (data, checkpoints)
}

/// The kernel pass of `session` in `parts` parallel parts
/// ([`parallel_pass`]), split at `checkpoints` when given (a cache's),
/// else at checkpoints a checkpoint pass finds while the first part reads
/// ([`parallel_pass::analyse_cold`]); with those checkpoints. With one
/// part, [`analyse_with_checkpoints`].
pub fn analyse_in_parts(
    session: &mut Session,
    checkpoints: Option<Checkpoints>,
    parts: usize,
    progress: &mut dyn FnMut(u64, Time),
) -> (Arc<KernelData>, Checkpoints) {
    if parts <= 1 {
        return match checkpoints {
            Some(c) => (KernelAnalysis::run_with_progress(session, progress), c),
            None => analyse_with_checkpoints(session, progress),
        };
    }
    match checkpoints {
        Some(c) => (parallel_pass::analyse(session, &c, parts, progress), c),
        None => {
            let every = interval(session.traceset());
            parallel_pass::analyse_cold(session, parts, every, progress)
        }
    }
}
