//! One scheduler over a Pajé trace, shared by every Pajé model of a
//! window: the counterpart of [`crate::model::session::Session`] for CTF.
//!
//! The scheduler reads the trace through the engine's
//! [`PajeSource`] and computes the Pajé simulation at STATE priority
//! ([`traceloom_engine::paje_state`]), so model hooks at `HIGH` see the
//! simulation before each event and hooks at `DEFAULT` see it after, with
//! the entities the event completed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use traceloom_base::Time;

use traceloom_engine::paje_source::PajeSource;
use traceloom_engine::paje_state::{self, PajeState};
use traceloom_engine::request::{
    Budget, EndReason, EventSource, EventsRequest, OwnerId, RequestId, Scheduler, SchedulerConfig,
    ServiceReport, ServiceStatus,
};
use traceloom_paje::Diagnostic;

use crate::model::session::{OpenError, Payload};

/// The scheduler every Pajé model shares.
pub type PajeScheduler = Scheduler<PajeSource, PajeState, Payload>;
/// A request on a [`PajeScheduler`].
pub type PajeRequest = EventsRequest<PajeSource, PajeState, Payload>;

/// Events between two checkpoints of the simulation. A checkpoint copies
/// the simulator (types, containers, every (container, type) list with its
/// open states and used link keys): megabytes on a large trace, so far
/// fewer than the kernel state's — every 400,000 events, the 1 GB
/// generated trace's 88 checkpoints took about a GB. The Pajé views need
/// no state at a random place (the list reads without it, the pass goes
/// forward and resumes from its own saved state): checkpoints only bound
/// the replay of a seek with state.
pub const CHECKPOINT_EVENTS: u64 = 5_000_000;

/// A Pajé trace with its scheduler, and the requests completed but not
/// yet collected by their model.
pub struct PajeSession {
    scheduler: PajeScheduler,
    completed: HashMap<RequestId, (EndReason, Payload)>,
    next_owner: u64,
    span: Option<(Time, Time)>,
    diagnostics: Vec<Diagnostic>,
    spill_dir: Option<PathBuf>,
    spill_every: u64,
}

impl std::fmt::Debug for PajeSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PajeSession")
            .field("pending", &self.scheduler.pending())
            .field("completed", &self.completed.len())
            .finish()
    }
}

impl PajeSession {
    /// Opens the Pajé trace whose main file is `path` (with the event
    /// files it names).
    pub fn open(path: &Path) -> Result<PajeSession, OpenError> {
        let source = PajeSource::open(path).map_err(|e| OpenError(e.to_string()))?;
        Ok(PajeSession::new(source))
    }

    /// A session over `source`.
    pub fn new(source: PajeSource) -> PajeSession {
        let span = source.time_span();
        let config = SchedulerConfig {
            checkpoint_interval: Some(CHECKPOINT_EVENTS),
            ..SchedulerConfig::default()
        };
        PajeSession {
            scheduler: Scheduler::new(source, paje_state::computation(), config),
            completed: HashMap::new(),
            next_owner: 1,
            span,
            diagnostics: Vec::new(),
            spill_dir: None,
            spill_every: 1 << 18,
        }
    }

    /// Where the Pajé passes started from now on move the finished chunks
    /// of their columns (a spill file, see [`crate::model::spill`]),
    /// `None` to keep them on the heap.
    pub fn set_spill_dir(&mut self, dir: Option<PathBuf>) {
        self.spill_dir = dir;
    }

    /// See [`set_spill_dir`](Self::set_spill_dir).
    pub fn spill_dir(&self) -> Option<&Path> {
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

    /// Times of the first and last timed events.
    pub fn time_span(&self) -> Option<(Time, Time)> {
        self.span
    }

    /// The trace's files: the main file, then the event files it names.
    pub fn files(&self) -> Vec<PathBuf> {
        self.scheduler
            .source()
            .files()
            .files()
            .iter()
            .map(|f| f.path().to_path_buf())
            .collect()
    }

    /// The trace's main file.
    pub fn path(&self) -> &Path {
        self.scheduler.source().files().files()[0].path()
    }

    /// A fresh owner id for a model.
    pub fn new_owner(&mut self) -> OwnerId {
        self.next_owner += 1;
        OwnerId(self.next_owner)
    }

    /// The scheduler (to seek, or to add requests directly).
    pub fn scheduler(&mut self) -> &mut PajeScheduler {
        &mut self.scheduler
    }

    /// Adds a request.
    pub fn add(&mut self, request: PajeRequest) -> RequestId {
        self.scheduler.add(request)
    }

    /// Cancels a request (its data is dropped).
    pub fn cancel(&mut self, id: RequestId) {
        self.scheduler.cancel(id);
        self.completed.remove(&id);
    }

    /// Pauses a pending request (see [`Scheduler::pause`]).
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

    /// Services requests within `budget`, keeping the completed ones for
    /// [`take`](Self::take). A Pajé read never waits for another thread.
    pub fn service(
        &mut self,
        budget: Budget,
        pending_input: impl FnMut() -> bool,
    ) -> ServiceStatus {
        let report = self.scheduler.service(budget, pending_input);
        self.keep_completed(report)
    }

    fn keep_completed(&mut self, report: ServiceReport<Payload>) -> ServiceStatus {
        for c in report.completed {
            self.completed.insert(c.id, (c.reason, c.data));
        }
        self.diagnostics
            .extend(self.scheduler.source_mut().take_diagnostics());
        report.status
    }

    /// Problems the reader met in the files since the last call (bad
    /// lines, unknown ids), each once, naming file, line and byte offset.
    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        let mut all = std::mem::take(&mut self.diagnostics);
        all.extend(self.scheduler.source_mut().take_diagnostics());
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

    /// The data of a request still pending, if it is of type `T`.
    pub fn peek<T: 'static>(&mut self, id: RequestId) -> Option<&mut T> {
        self.scheduler.data_mut(id)?.downcast_mut::<T>()
    }

    /// Services until request `id` completes, then takes its data (command
    /// line and tests; a window services from its idle loop instead).
    pub fn wait<T: 'static>(&mut self, id: RequestId) -> Option<T> {
        while !self.is_complete(id) {
            self.scheduler.request(id)?;
            self.service(Budget::events(1 << 20), || false);
        }
        self.take(id)
    }

    /// How far a request starting at the trace's start has come when it is
    /// at `time`, in `[0, 1]`.
    pub fn fraction(&self, time: Time) -> f64 {
        match self.span {
            Some((a, b)) if b > a => ((time.max(a) - a) as f64 / (b - a) as f64).min(1.0),
            _ => 1.0,
        }
    }

    /// The source's current position's time (where the read is).
    pub fn read_time(&self) -> Time {
        self.scheduler.source().position().time
    }
}
