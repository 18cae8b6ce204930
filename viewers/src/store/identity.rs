//! What a store was computed from: the traces' identity (UUIDs, and the
//! size and modification time of every metadata and stream file), and the
//! name of a traceset's store file.
//!
//! The file is named after the traces' *location* (their canonical paths),
//! not their identity, so that a traceset has one store whatever happened
//! to its files: a changed trace finds its old store, sees that the
//! identity differs (stale) and replaces it, instead of leaving it behind
//! under another name.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use traceloom_ctf::Traceset;

/// One file a trace is read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Canonical path.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the Unix epoch (0 when unknown).
    pub modified_ns: u128,
}

impl FileStamp {
    /// The stamp of `path` as it is now.
    pub fn of(path: &Path) -> FileStamp {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let meta = std::fs::metadata(path).ok();
        FileStamp {
            path: canonical,
            size: meta.as_ref().map_or(0, |m| m.len()),
            modified_ns: meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        }
    }
}

/// One trace of a traceset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceIdentity {
    /// Canonical trace directory.
    pub path: PathBuf,
    /// The metadata's UUID, if any.
    pub uuid: Option<[u8; 16]>,
    /// The metadata file, then the stream files in traceset order.
    pub files: Vec<FileStamp>,
}

/// Every trace of a traceset, in traceset order: a store is valid for a
/// traceset only when this is equal.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TracesetIdentity {
    /// The traces.
    pub traces: Vec<TraceIdentity>,
}

impl TracesetIdentity {
    /// The identity of `traceset` as its files are now (a `stat` per file).
    pub fn of(traceset: &Traceset) -> TracesetIdentity {
        let mut traces: Vec<TraceIdentity> = traceset
            .traces()
            .map(|t| TraceIdentity {
                path: t.path.canonicalize().unwrap_or_else(|_| t.path.clone()),
                uuid: t.uuid(),
                files: vec![FileStamp::of(&t.path.join("metadata"))],
            })
            .collect();
        for s in traceset.streams() {
            if let Some(t) = traces.get_mut(s.trace) {
                t.files.extend(s.files.iter().map(|f| FileStamp::of(f)));
            }
        }
        TracesetIdentity { traces }
    }

    /// A digest of the whole identity (kept in the store's header, so that
    /// a stale store is rejected before its meta block is decoded).
    pub fn digest(&self) -> u64 {
        let bytes = postcard::to_stdvec(self).expect("identity serialization is infallible");
        fnv1a(&bytes)
    }

    /// A digest of the traces' locations only (names the store file).
    pub fn location(&self) -> u64 {
        let mut bytes = Vec::new();
        for t in &self.traces {
            bytes.extend_from_slice(t.path.as_os_str().as_encoded_bytes());
            bytes.push(0);
        }
        fnv1a(&bytes)
    }

    /// Bytes of trace data (metadata and stream files).
    pub fn total_bytes(&self) -> u64 {
        self.traces
            .iter()
            .flat_map(|t| &t.files)
            .map(|f| f.size)
            .sum()
    }

    /// Whether the traceset includes the trace directory `dir` or a trace
    /// under it (for `cache clear PATH`).
    pub fn is_under(&self, dir: &Path) -> bool {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        self.traces.iter().any(|t| t.path.starts_with(&dir))
    }
}

/// The store file of a traceset at `identity`'s location, in `dir`.
pub fn store_path(dir: &Path, identity: &TracesetIdentity) -> PathBuf {
    dir.join(format!("{:016x}.{}", identity.location(), super::EXTENSION))
}

/// 64-bit FNV-1a: stable across processes, builds and Rust versions
/// (unlike `DefaultHasher`), which a file name on disk needs.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_the_reference_function() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
