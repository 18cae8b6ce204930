//! Pajé trace reader: event definitions, the container hierarchy, states,
//! events, links and variables — and pj_dump's CSV output.
//!
//! Three layers, usable separately:
//!
//! * **Reading** — [`TraceFile`] maps a file; [`EventReader`] streams its
//!   [`PajeEvent`]s (line, byte offset, time, kind, borrowed fields) without
//!   allocating per line, reading the `%EventDef` header on the way.
//!   [`TraceFiles`] adds ViTE's multi-file traces (merged by time) and
//!   [`TraceIndex`] lets a reader jump near a time.
//! * **Simulating** — [`Simulator`] turns events into a [`Model`]
//!   (types, containers, values) and hands finished states, events,
//!   variable pieces and links to an [`EntitySink`].
//! * **Streaming** — [`stream_file`] runs the simulation over a whole
//!   trace into any sink, keeping only what is still open: the path for
//!   traces larger than memory.
//! * **Everything at once** — [`Trace`] loads a trace into memory
//!   ([`EntityStore`]) and [`write_pj_dump`] prints it exactly as `pj_dump`.
//!
//! Problems never stop the reader: each is a [`Diagnostic`] naming the file,
//! line and byte offset, and the offending line is skipped.
//!
//! ```no_run
//! use traceloom_paje::{Trace, PjDumpOptions};
//! let trace = Trace::open("run.trace")?;
//! for d in trace.diagnostics.items() {
//!     eprintln!("{d}");
//! }
//! trace.write_pj_dump(&PjDumpOptions::default(), std::io::stdout().lock())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod defs;
pub mod error;
mod hash;
pub mod index;
mod keyset;
pub mod lexer;
pub mod model;
pub mod multifile;
pub mod numfmt;
pub mod numparse;
pub mod options;
pub mod pjdump;
pub mod reader;
pub mod simulate;
pub mod store;
pub mod stream;
pub mod trace;

pub use defs::{DefOptions, Definitions, EventDef, EventKind, Field, FieldType};
pub use error::{Diagnostic, Diagnostics, Location, PajeError, Severity};
pub use index::{IndexEntry, TraceIndex};
pub use model::{
    Container, ContainerId, EntityType, EntityValue, Model, TypeId, TypeNature, ValueId,
    ROOT_CONTAINER, ROOT_TYPE,
};
pub use multifile::{MergedEvents, TraceFiles};
pub use numparse::Color;
pub use options::LoadOptions;
pub use pjdump::{write_pj_dump_parts, PjDumpOptions};
pub use reader::{EventReader, PajeEvent, ReaderOptions, ReaderPosition, TraceFile};
pub use simulate::{
    EntitySink, EventRecord, LinkRecord, NullSink, SimOptions, Simulator, StateRecord,
    VariableRecord,
};
pub use store::{EntityList, EntityStore, Event, Link, State, Variable};
pub use stream::{stream_file, stream_set, StreamOutcome};
pub use trace::{pj_dump, write_pj_dump, Trace};
