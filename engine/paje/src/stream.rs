//! Reading a trace in one streaming pass: every entity goes to an
//! [`EntitySink`] as soon as it is complete, and nothing else is kept but
//! the model (types, containers, values) and what is still open (state
//! stacks, unmatched link halves, the last piece of each variable).
//!
//! This is the path for traces larger than memory (a consumer that folds,
//! filters or writes entities out as they come); [`crate::Trace`] runs the
//! same pass with an [`crate::EntityStore`] as the sink.

use std::path::{Path, PathBuf};

use crate::error::{Diagnostics, PajeError};
use crate::index::TraceIndex;
use crate::model::Model;
use crate::multifile::TraceFiles;
use crate::options::LoadOptions;
use crate::simulate::{EntitySink, Simulator};

/// What a streaming pass leaves behind besides the entities it handed out.
pub struct StreamOutcome {
    /// Types, containers and values.
    pub model: Model,
    /// Everything that went wrong, sorted by file and line.
    pub diagnostics: Diagnostics,
    /// The files read, the main one first.
    pub files: Vec<PathBuf>,
    /// One index per file (empty unless asked for).
    pub indexes: Vec<TraceIndex>,
    /// Event lines read (definitions and lines with errors excluded).
    pub events_read: u64,
}

/// Opens the trace at `path` and streams it into `sink`.
pub fn stream_file(
    path: impl AsRef<Path>,
    opts: &LoadOptions,
    sink: &mut (impl EntitySink + ?Sized),
) -> Result<StreamOutcome, PajeError> {
    let set = TraceFiles::open(path, opts.reader, opts.follow_trace_files)?;
    Ok(stream_set(&set, opts, sink))
}

/// Reads and simulates every event of `set`, handing every entity to
/// `sink` as it completes (the containers still alive at the end are
/// destroyed at the time of the last event, which ends what they hold).
pub fn stream_set(
    set: &TraceFiles,
    opts: &LoadOptions,
    sink: &mut (impl EntitySink + ?Sized),
) -> StreamOutcome {
    let mut sim = Simulator::new(opts.sim);
    let mut events = set.events();
    if let Some(interval) = opts.index_interval {
        events = events.with_index(interval);
    }
    let mut events_read = 0u64;
    events.for_each_event(|ev| {
        events_read += 1;
        sim.apply(ev, sink);
    });
    sim.finish(sink);
    let indexes = events.take_indexes();
    let mut diagnostics = set.diagnostics().clone();
    diagnostics.append(events.take_diagnostics());
    let (model, sim_diags) = sim.into_parts();
    diagnostics.append(sim_diags);
    let files: Vec<PathBuf> = set.files().iter().map(|f| f.path().to_path_buf()).collect();
    sort_diagnostics(&mut diagnostics, &files);
    StreamOutcome {
        model,
        diagnostics,
        files,
        indexes,
        events_read,
    }
}

/// Orders diagnostics by file (in the order the trace names them) and line.
fn sort_diagnostics(d: &mut Diagnostics, files: &[PathBuf]) {
    let mut items = d.items().to_vec();
    let rank = |p: &Path| files.iter().position(|f| f == p).unwrap_or(usize::MAX);
    items.sort_by_key(|x| (rank(&x.location.file), x.location.line));
    d.replace_items(items);
}
