//! One scheduler over a Pajé trace, shared by every Pajé model of a
//! window: the counterpart of [`crate::model::session::Session`] for CTF.
//!
//! The scheduler reads the trace through the engine's
//! [`PajeSource`] and computes the Pajé simulation at STATE priority
//! ([`traceloom_engine::paje_state`]), so model hooks at `HIGH` see the
//! simulation before each event and hooks at `DEFAULT` see it after, with
//! the entities the event completed.

use std::path::{Path, PathBuf};

use traceloom_engine::paje_source::PajeSource;
use traceloom_engine::paje_state::{self, PajeState};
use traceloom_engine::request::{EventSource, EventsRequest, Scheduler, SchedulerConfig};
use traceloom_paje::Diagnostic;

use crate::model::session::{OpenError, Payload, SessionOf, SessionSource};

/// The scheduler every Pajé model shares.
pub type PajeScheduler = Scheduler<PajeSource, PajeState, Payload>;
/// A request on a [`PajeScheduler`].
pub type PajeRequest = EventsRequest<PajeSource, PajeState, Payload>;

/// Events between two checkpoints of the simulation. A checkpoint copies
/// the simulator's model (types, containers, names) and shares its
/// (container, type) lists and their used link keys until they change:
/// megabytes on a large trace, so far fewer than the kernel state's —
/// every 400,000 events, the 1 GB generated trace's 88 checkpoints took
/// about a GB when the lists were copied too. The Pajé views need
/// no state at a random place (the list reads without it, the pass goes
/// forward and resumes from its own saved state): checkpoints only bound
/// the replay of a seek with state.
pub const CHECKPOINT_EVENTS: u64 = 5_000_000;

/// Most checkpoints of the simulation kept. The simulation holds every
/// container ever created (a generated 4 GB trace creates 20,000) and the
/// link keys of each list, so a checkpoint grows with the trace, and
/// checkpoints every [`CHECKPOINT_EVENTS`] would weigh O(trace²): with
/// the lists and key sets shared between copies, the models alone took
/// 62 MB over that trace's 28. Past this many, every other one is dropped
/// and the interval doubles.
pub const MAX_CHECKPOINTS: usize = 8;

/// A Pajé trace with its scheduler (the simulation computed at STATE
/// priority).
pub type PajeSession = SessionOf<PajeSource, PajeState>;

impl SessionSource for PajeSource {
    /// Bad lines and unknown ids, each once, naming file, line and byte
    /// offset.
    type Report = Diagnostic;
    fn collect_reports(&mut self, into: &mut Vec<Diagnostic>) {
        into.extend(self.take_diagnostics());
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
            max_checkpoints: MAX_CHECKPOINTS,
            ..SchedulerConfig::default()
        };
        let scheduler = Scheduler::new(source, paje_state::computation(), config);
        PajeSession::with_scheduler(scheduler, span)
    }

    /// The trace's files: the main file, then the event files it names.
    pub fn files(&self) -> Vec<PathBuf> {
        self.source()
            .files()
            .files()
            .iter()
            .map(|f| f.path().to_path_buf())
            .collect()
    }

    /// The trace's main file.
    pub fn path(&self) -> &Path {
        self.source().files().files()[0].path()
    }

    /// Problems the reader met in the files since the last call (bad
    /// lines, unknown ids), each once, naming file, line and byte offset.
    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        self.take_reports()
    }
}
