//! Descriptions of the traces and streams of an opened traceset: what an
//! [`Event`](crate::event::Event) points back to.

use std::path::PathBuf;
use std::sync::Arc;

use traceloom_tsdl::ir::{EnvValue, TraceClass};

/// One CTF trace of a traceset: a directory with a `metadata` file and its
/// data stream files.
#[derive(Debug)]
pub struct TraceInfo {
    /// Position of this trace in the traceset (deterministic: discovery order).
    pub index: usize,
    /// The trace directory (the one holding `metadata`).
    pub path: PathBuf,
    /// The trace name as babeltrace2 sets it: the `hostname` from the
    /// environment (when present) and the trace directory's path relative
    /// to the input path it was found under (when not the input itself),
    /// joined with `/`; `None` when neither exists.
    pub name: Option<String>,
    /// The resolved metadata.
    pub class: Arc<TraceClass>,
}

impl TraceInfo {
    /// The environment entry `key`, if the metadata's `env` block has it.
    pub fn env(&self, key: &str) -> Option<&EnvValue> {
        self.class
            .env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The `hostname` environment entry, when it is a string.
    pub fn hostname(&self) -> Option<&str> {
        match self.env("hostname") {
            Some(EnvValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The trace UUID from the metadata, if any.
    pub fn uuid(&self) -> Option<[u8; 16]> {
        self.class.uuid
    }
}

/// One data stream of a trace: one or more stream files (several when LTTng
/// rotated the trace files, `chan_0_0`, `chan_0_1`, ...) sharing a stream
/// class id and a stream instance id, read one after the other.
#[derive(Debug)]
pub struct StreamInfo {
    /// Position of this stream in the traceset (all traces' streams numbered
    /// together, deterministic).
    pub index: usize,
    /// Index of the owning trace in the traceset.
    pub trace: usize,
    /// The stream class id (`stream_id` of the packet header, 0 when absent).
    pub class_id: u64,
    /// The stream instance id (`stream_instance_id` of the packet header),
    /// when the packet header has one.
    pub instance_id: Option<u64>,
    /// The stream id in babeltrace2's sense: the instance id when the trace
    /// records one, else a number assigned in discovery order within the
    /// trace.
    pub id: u64,
    /// The stream's files in reading order.
    pub files: Vec<PathBuf>,
}

impl StreamInfo {
    /// Path of the first stream file, used by babeltrace2 as the stream name.
    pub fn name_path(&self) -> Option<&PathBuf> {
        self.files.first()
    }
}
