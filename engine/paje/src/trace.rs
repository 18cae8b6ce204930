//! Loading a whole trace into memory: read, simulate, keep every entity.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Diagnostics, PajeError};
use crate::index::TraceIndex;
use crate::model::Model;
use crate::multifile::TraceFiles;
use crate::options::LoadOptions;
use crate::pjdump::{write_pj_dump_parts, PjDumpOptions};
use crate::reader::TraceFile;
use crate::store::EntityStore;
use crate::stream::stream_set;

/// A trace loaded in memory.
pub struct Trace {
    /// Types, containers and values.
    pub model: Model,
    /// Every state, event, variable piece and link.
    pub entities: EntityStore,
    /// Everything that went wrong, sorted by file and line.
    pub diagnostics: Diagnostics,
    /// The files read, the main one first.
    pub files: Vec<PathBuf>,
    /// One index per file (empty unless asked for).
    pub indexes: Vec<TraceIndex>,
}

impl Trace {
    /// Loads the trace at `path` with [`LoadOptions::default`].
    pub fn open(path: impl AsRef<Path>) -> Result<Trace, PajeError> {
        Self::open_with(path, &LoadOptions::default())
    }

    /// Loads the trace at `path`.
    pub fn open_with(path: impl AsRef<Path>, opts: &LoadOptions) -> Result<Trace, PajeError> {
        let set = TraceFiles::open(path, opts.reader, opts.follow_trace_files)?;
        Ok(Self::load(&set, opts))
    }

    /// Loads a single-file trace held in memory (`name` names it in
    /// diagnostics).
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>, opts: &LoadOptions) -> Trace {
        let set = TraceFiles::from_file(TraceFile::from_bytes(name, bytes), opts.reader);
        Self::load(&set, opts)
    }

    /// Reads and simulates every event of `set`.
    pub fn load(set: &TraceFiles, opts: &LoadOptions) -> Trace {
        let mut store = EntityStore::new();
        let o = stream_set(set, opts, &mut store);
        Trace {
            model: o.model,
            entities: store,
            diagnostics: o.diagnostics,
            files: o.files,
            indexes: o.indexes,
        }
    }

    /// Writes what `pj_dump` prints for this trace.
    pub fn write_pj_dump(&self, options: &PjDumpOptions, out: impl Write) -> io::Result<()> {
        write_pj_dump_parts(&self.model, &self.entities, options, out)
    }
}

/// Writes what `pj_dump` prints for `trace`.
pub fn write_pj_dump(trace: &Trace, options: &PjDumpOptions, out: impl Write) -> io::Result<()> {
    trace.write_pj_dump(options, out)
}

/// Does what `pj_dump [-l PREC] [-h] FILE` does: loads `path` the way
/// pj_dump reads it ([`LoadOptions::pj_dump`]) and writes the CSV to `out`.
/// Returns the problems found; pj_dump would have stopped at the first
/// error, this dump goes on past it.
pub fn pj_dump(
    path: impl AsRef<Path>,
    options: &PjDumpOptions,
    out: impl Write,
) -> Result<Diagnostics, PajeError> {
    let trace = Trace::open_with(path, &LoadOptions::pj_dump())?;
    trace
        .write_pj_dump(options, out)
        .map_err(PajeError::Output)?;
    Ok(trace.diagnostics)
}
