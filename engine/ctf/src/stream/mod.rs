//! Streams: from a stream's bytes to its messages, given its compiled
//! stream class (`crate::schema`), never the whole traceset.
//!
//! * [`packet`] frames a packet: decodes its header and context, checks
//!   them, and gives its [`PacketInfo`];
//! * [`index`] builds a stream file's packet index, from LTTng's `.idx`
//!   files or by scanning the packet headers;
//! * `batch` decodes a packet (or part of one) at a time into a `Batch` of
//!   values and event records, through the decoders' fast paths;
//! * `reader` walks one stream's batches: its events, and the
//!   lost-records messages derived from consecutive packet contexts.
//!
//! A `StreamData` is one stream as the layers above hand it down: its
//! files' bytes and its packet index.

use std::path::PathBuf;

use memmap2::Mmap;

use crate::error::{CorruptKind, ReadError};
use crate::trace::StreamInfo;
use packet::PacketInfo;

pub(crate) mod batch;
pub mod index;
pub mod packet;
pub(crate) mod reader;

/// A stream file's bytes.
#[derive(Debug)]
pub(crate) enum FileBytes {
    Mapped(Mmap),
    /// Used for files that cannot be mapped (empty).
    Empty,
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Empty => &[],
        }
    }
}

/// A stream with its files and packet index.
#[derive(Debug)]
pub(crate) struct StreamData {
    pub(crate) info: StreamInfo,
    pub(crate) maps: Vec<FileBytes>,
    /// Packets in reading order (all files merged by `timestamp_begin`).
    pub(crate) packets: Vec<PacketInfo>,
    /// Damage found while indexing: reported after the good packets.
    pub(crate) index_error: Option<(PathBuf, u64, CorruptKind)>,
    /// Position in babeltrace2's tie-break order for equal timestamps.
    pub(crate) rank: u32,
    /// The stream id is assigned in order (babeltrace2 does so for files
    /// without an instance id or without a first timestamp).
    pub(crate) auto_id: bool,
}

impl StreamData {
    /// The indexing error as a [`ReadError`].
    pub(crate) fn index_error(&self) -> Option<ReadError> {
        self.index_error
            .as_ref()
            .map(|(path, offset, kind)| ReadError::Corrupt {
                path: path.clone(),
                offset: *offset,
                kind: kind.clone(),
            })
    }
}
