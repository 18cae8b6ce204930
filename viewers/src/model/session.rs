//! One scheduler over a source, shared by every model of a window
//! ([`SessionOf`]): over a CTF traceset a [`Session`], over a Pajé trace a
//! [`PajeSession`](crate::model::PajeSession).
//!
//! Every model adds its own [`EventsRequest`]s (their data is a
//! [`Payload`], a boxed value of the model's own type) and gets them back
//! when they complete. The scheduler computes the source's state (the
//! kernel/UST state, the Pajé simulation) at STATE priority, so model hooks
//! at `HIGH` see the state before each event and hooks at `DEFAULT` see it
//! after.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use traceloom_base::Time;

use traceloom_ctf::{ReadError, Traceset};
use traceloom_engine::request::{
    Budget, EndReason, EventsRequest, OwnerId, RequestId, Scheduler, SchedulerConfig,
    ServiceReport, ServiceStatus,
};
use traceloom_engine::request::{EventSource, SourcePosition};
use traceloom_engine::source::{CtfPosition, CtfSource};
use traceloom_engine::state::{self, TracesetState};

/// The data of a model's request: anything the model wants to collect.
pub type Payload = Box<dyn Any + Send>;
/// The scheduler every kernel/UST model shares.
pub type KernelScheduler = Scheduler<CtfSource, TracesetState, Payload>;
/// A request on a [`KernelScheduler`].
pub type KernelRequest = EventsRequest<CtfSource, TracesetState, Payload>;

/// A scheduler of its own over `traceset` for a reader that reads one
/// stretch once (a part of a parallel pass or of parallel statistics),
/// starting from the checkpoint `from` when given: it keeps no
/// checkpoints, which would only cost state copies.
pub fn part_scheduler(
    traceset: Arc<Traceset>,
    from: Option<(CtfPosition, TracesetState)>,
) -> KernelScheduler {
    let n = traceset.traces().len();
    let mut sched = Scheduler::new(
        CtfSource::new(traceset),
        state::computation(n),
        SchedulerConfig {
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    );
    sched.add_checkpoints(from);
    sched
}

/// Why a traceset could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OpenError(pub String);

/// What a session needs of its source beyond reading events: what the
/// source found in its input besides events, handed over after each
/// servicing (a Pajé reader's diagnostics, which its bounded per-file list
/// would otherwise drop past its limit).
pub trait SessionSource: EventSource {
    /// What the source reports about its input.
    type Report;
    /// Moves what was found since the last call into `into`.
    fn collect_reports(&mut self, into: &mut Vec<Self::Report>);
}

impl SessionSource for CtfSource {
    /// A CTF source keeps its damaged streams itself ([`Session::errors`]).
    type Report = std::convert::Infallible;
    fn collect_reports(&mut self, _into: &mut Vec<Self::Report>) {}
}

/// A source with its scheduler, shared by every model of a window, and
/// the requests completed but not yet collected by their model: a
/// [`Session`] for CTF, a [`PajeSession`](crate::model::PajeSession) for
/// Pajé.
pub struct SessionOf<Src: SessionSource, S> {
    scheduler: Scheduler<Src, S, Payload>,
    completed: HashMap<RequestId, (EndReason, Payload)>,
    next_owner: u64,
    span: Option<(Time, Time)>,
    reports: Vec<Src::Report>,
    spill_dir: Option<PathBuf>,
    spill_every: u64,
}

/// A CTF traceset with its scheduler (the kernel/UST state computed at
/// STATE priority).
pub type Session = SessionOf<CtfSource, TracesetState>;

impl<Src: SessionSource, S: Clone> std::fmt::Debug for SessionOf<Src, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("pending", &self.scheduler.pending())
            .field("completed", &self.completed.len())
            .finish()
    }
}

impl<Src: SessionSource, S: Clone> SessionOf<Src, S> {
    /// A session over `scheduler`'s source, whose events span `span`.
    pub fn with_scheduler(
        scheduler: Scheduler<Src, S, Payload>,
        span: Option<(Time, Time)>,
    ) -> Self {
        SessionOf {
            scheduler,
            completed: HashMap::new(),
            next_owner: 1,
            span,
            reports: Vec::new(),
            spill_dir: None,
            spill_every: 1 << 18,
        }
    }

    /// Times of the first and last events.
    pub fn time_span(&self) -> Option<(Time, Time)> {
        self.span
    }

    /// Where the passes started from now on move the finished chunks of
    /// their columns (a spill file, see [`crate::model::spill`]), `None`
    /// to keep them on the heap.
    pub fn set_spill_dir(&mut self, dir: Option<PathBuf>) {
        self.spill_dir = dir;
    }

    /// See [`set_spill_dir`](Self::set_spill_dir).
    pub fn spill_dir(&self) -> Option<&std::path::Path> {
        self.spill_dir.as_deref()
    }

    /// Events between two moves of the finished chunks to the spill file
    /// (default 262,144: a walk over the columns costs a few ms).
    pub fn set_spill_every(&mut self, events: u64) {
        self.spill_every = events.max(1);
    }

    /// See [`set_spill_every`](Self::set_spill_every).
    pub fn spill_every(&self) -> u64 {
        self.spill_every
    }

    /// A fresh owner id for a model.
    pub fn new_owner(&mut self) -> OwnerId {
        self.next_owner += 1;
        OwnerId(self.next_owner)
    }

    /// The source the scheduler reads.
    pub fn source(&self) -> &Src {
        self.scheduler.source()
    }

    /// The scheduler (to seek, or to add requests directly).
    pub fn scheduler(&mut self) -> &mut Scheduler<Src, S, Payload> {
        &mut self.scheduler
    }

    /// Adds a request.
    pub fn add(&mut self, request: EventsRequest<Src, S, Payload>) -> RequestId {
        self.scheduler.add(request)
    }

    /// Cancels a request (its data is dropped).
    pub fn cancel(&mut self, id: RequestId) {
        self.scheduler.cancel(id);
        self.completed.remove(&id);
    }

    /// Pauses a pending request (see [`Scheduler::pause`]): its data and
    /// position are kept until [`resume`](Self::resume).
    pub fn pause(&mut self, id: RequestId) -> bool {
        self.scheduler.pause(id)
    }

    /// Resumes a paused request from where it was paused.
    pub fn resume(&mut self, id: RequestId) -> bool {
        self.scheduler.resume(id)
    }

    /// Whether request `id` is paused.
    pub fn is_paused(&self, id: RequestId) -> bool {
        self.scheduler.is_paused(id)
    }

    /// Services requests within `budget` (see [`Scheduler::service`]),
    /// keeping the completed ones for [`take`](Self::take).
    pub fn service(
        &mut self,
        budget: Budget,
        pending_input: impl FnMut() -> bool,
    ) -> ServiceStatus {
        let report = self.scheduler.service(budget, pending_input);
        self.keep_completed(report)
    }

    /// Keeps the requests a service call completed, for
    /// [`take`](Self::take), and what the source found; returns the
    /// call's status.
    fn keep_completed(&mut self, report: ServiceReport<Payload>) -> ServiceStatus {
        for c in report.completed {
            self.completed.insert(c.id, (c.reason, c.data));
        }
        self.scheduler
            .source_mut()
            .collect_reports(&mut self.reports);
        report.status
    }

    /// What the source found in its input since the last call, with what
    /// it has not handed over yet.
    pub fn take_reports(&mut self) -> Vec<Src::Report> {
        let mut all = std::mem::take(&mut self.reports);
        self.scheduler.source_mut().collect_reports(&mut all);
        all
    }

    /// Whether request `id` completed (and was not taken yet).
    pub fn is_complete(&self, id: RequestId) -> bool {
        self.completed.contains_key(&id)
    }

    /// Takes the data of completed request `id`, if it is of type `T`.
    pub fn take<T: 'static>(&mut self, id: RequestId) -> Option<T> {
        let (_, data) = self.completed.remove(&id)?;
        data.downcast::<T>().ok().map(|b| *b)
    }

    /// The data of a request still pending, if it is of type `T` (to show
    /// partial results while a long pass goes on).
    pub fn peek<T: 'static>(&mut self, id: RequestId) -> Option<&mut T> {
        self.scheduler.data_mut(id)?.downcast_mut::<T>()
    }

    /// Services until request `id` completes, then takes its data. For
    /// command-line use; a GUI calls [`service`](Self::service) from its
    /// idle handler instead.
    pub fn wait<T: 'static>(&mut self, id: RequestId) -> Option<T> {
        while !self.is_complete(id) {
            // Unknown (cancelled) requests never complete.
            self.scheduler.request(id)?;
            self.service(Budget::events(1 << 20), || false);
        }
        self.take(id)
    }

    /// How far a request starting at the first event has come when it is
    /// at `time`, in `[0, 1]`.
    pub fn fraction(&self, time: Time) -> f64 {
        match self.span {
            Some((a, b)) if b > a => ((time.max(a) - a) as f64 / (b - a) as f64).min(1.0),
            _ => 1.0,
        }
    }

    /// The time of the source's current position (where the read is).
    pub fn read_time(&self) -> Time {
        self.scheduler.source().position().time()
    }
}

impl Session {
    /// Opens the CTF traces under `paths` as one traceset.
    pub fn open(paths: &[PathBuf]) -> Result<Session, OpenError> {
        let ts = Traceset::open(paths).map_err(|e| OpenError(e.to_string()))?;
        Ok(Session::new(Arc::new(ts)))
    }

    /// A session over `traceset`, with the kernel state computation.
    pub fn new(traceset: Arc<Traceset>) -> Session {
        let n = traceset.traces().len();
        let mut scheduler = Scheduler::new(
            CtfSource::new(traceset),
            state::computation(n),
            SchedulerConfig::default(),
        );
        // The traceset's own span ends with its last packet, which can be
        // far after its last event: find the last event (one short
        // backward read) so that "the whole trace" means its events.
        let span = scheduler.source().time_span().map(|(first, last)| {
            let end = scheduler
                .seek_n_events_backward(&CtfPosition::END, 1, 1_000_000, None)
                .first()
                .map_or(last, |p| p.time);
            (first, end.max(first))
        });
        Session::with_scheduler(scheduler, span)
    }

    /// The traceset.
    pub fn traceset(&self) -> &Arc<Traceset> {
        self.scheduler.source().traceset()
    }

    /// The damaged streams met so far, oldest first: each error names the
    /// stream file and the byte offset where reading it stopped (the other
    /// streams went on).
    pub fn errors(&self) -> &[ReadError] {
        self.scheduler.source().errors()
    }

    /// The scheduler's state checkpoints (each position with the state
    /// before the event there), in position order.
    pub fn checkpoints(&self) -> impl Iterator<Item = (CtfPosition, &TracesetState)> {
        self.scheduler.checkpoints().map(|(p, s)| (*p, s))
    }

    /// [`service`](Self::service) that returns
    /// [`ServiceStatus::WaitingForData`] rather than wait for a decoding
    /// thread ([`Scheduler::service_nonblocking`]): for a main loop.
    pub fn service_nonblocking(
        &mut self,
        budget: Budget,
        pending_input: impl FnMut() -> bool,
    ) -> ServiceStatus {
        let report = self.scheduler.service_nonblocking(budget, pending_input);
        self.keep_completed(report)
    }
}
