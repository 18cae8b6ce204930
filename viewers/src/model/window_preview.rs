//! A window previewed ahead of every checkpoint: what a time graph draws
//! of a zoom the whole-trace pass has not reached, where no saved state
//! lies near enough to replay from.
//!
//! [`KernelAnalysis::window_request`] restores the state at the window's
//! start from the nearest checkpoint; ahead of the checkpoint pass that
//! replay reads everything since the last checkpoint (seconds on a large
//! trace). The preview instead seeks by time (the streams' packet index)
//! with no state at all and computes its own state from nothing
//! ([`TracesetState::unknown`]), as LTTV did for a process it had not met:
//! a row starts at the first event that tells its state — a CPU at its
//! first switch, a thread when it is switched, woken, forked or exits —
//! and a running thread's mode stays *unknown* until a system call's entry
//! or exit tells it. From then on its rows are the exact ones, so the preview is
//! what the window shows until the checkpoints get there and the exact
//! window analysis replaces it.

use traceloom_base::TimeRange;
use traceloom_engine::request::{OwnerId, Start};
use traceloom_engine::state::{Handlers, TracesetState};
use traceloom_hooks::{Flow, Priority};

use super::kernel::{DeferredSnapshot, KernelAnalysis, KernelCollector, KernelData};
use super::session::{KernelRequest, Payload, Session};

/// The data of a window preview request: the collector of a window and
/// the state it computes itself, from nothing.
#[derive(Debug)]
pub struct WindowPreview {
    collector: KernelCollector,
    state: TracesetState,
    handlers: Handlers,
}

impl WindowPreview {
    /// The window's data (its rows start where the events tell their
    /// state; see the module's documentation).
    pub fn into_data(self) -> KernelData {
        self.collector.into_data()
    }

    /// What the preview read so far, to be finished by
    /// [`DeferredSnapshot::finish`] (see
    /// [`KernelCollector::snapshot_deferred`]).
    pub fn snapshot_deferred(&mut self) -> DeferredSnapshot {
        self.collector.snapshot_deferred()
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.collector.progress().0
    }
}

impl KernelAnalysis {
    /// A HIGH-priority request previewing `window` without any state: a
    /// seek by time, then the window's events alone (see
    /// [`window_preview`](super::window_preview)). Complete, its data is
    /// a [`WindowPreview`] (take it with
    /// [`Session::take`]`::<WindowPreview>`).
    pub fn window_preview_request(
        session: &mut Session,
        owner: OwnerId,
        window: TimeRange,
    ) -> KernelRequest {
        let traces = session.traceset().traces().count();
        let mut collector =
            KernelCollector::new(session.traceset(), (window.start, window.end), None);
        collector.stats = None;
        let preview = WindowPreview {
            collector,
            state: TracesetState::unknown(traces),
            handlers: Handlers::new(),
        };
        let mut req = KernelRequest::new(
            owner,
            Start::Time(window.start),
            Box::new(preview) as Payload,
        );
        req.priority = Priority::HIGH;
        req.end_time = Some(window.end);
        // The scheduler's state is not read: its seek skips the replay.
        req.needs_state = false;
        // One hook does what the pass's three do at their priorities:
        // the collector sees the state before the event, then after it.
        req.event.add(Priority::DEFAULT, |ctx| {
            if let Some(p) = ctx.data.downcast_mut::<WindowPreview>() {
                p.collector.before(ctx.event, &p.state);
                if let Some(e) = ctx.event.event() {
                    p.state.apply(&mut p.handlers, &e);
                }
                p.collector.after(ctx.event, &p.state);
            }
            Flow::Continue
        });
        req
    }
}
