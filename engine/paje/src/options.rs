//! How a trace is loaded: reader, simulation, multi-file and index options.

use crate::defs::DefOptions;
use crate::reader::ReaderOptions;
use crate::simulate::SimOptions;

/// How to load a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Reader options.
    pub reader: ReaderOptions,
    /// Simulation options.
    pub sim: SimOptions,
    /// Read the event files a multi-file trace names.
    pub follow_trace_files: bool,
    /// Build an index with an entry about every this many bytes.
    pub index_interval: Option<u64>,
}

impl Default for LoadOptions {
    /// Tolerant reading: legacy field names accepted, multi-file traces
    /// followed, an index entry every MiB.
    fn default() -> Self {
        LoadOptions {
            reader: ReaderOptions::default(),
            sim: SimOptions::default(),
            follow_trace_files: true,
            index_interval: Some(1 << 20),
        }
    }
}

impl LoadOptions {
    /// What `pj_dump FILE` does with its default flags: strict field names,
    /// and pajeng 1.3.6's clock on untimed events.
    pub fn pj_dump() -> LoadOptions {
        LoadOptions {
            reader: ReaderOptions {
                defs: DefOptions {
                    legacy_field_names: false,
                },
            },
            sim: SimOptions {
                pajeng_untimed_clock: true,
            },
            follow_trace_files: true,
            index_interval: None,
        }
    }
}
