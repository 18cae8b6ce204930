//! Errors of opening and reading a traceset. Reading errors name the stream
//! file and the byte offset of the damage.

use std::path::PathBuf;

use thiserror::Error;

use crate::decode::DecodeErrorKind;
use crate::schema::SchemaError;

/// What is wrong with the bytes of a stream file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CorruptKind {
    /// A field could not be decoded.
    #[error("{0}")]
    Decode(DecodeErrorKind),
    /// The packet header's `magic` is not 0xC1FC1FC1.
    #[error("bad packet magic {0:#x} (expected 0xc1fc1fc1)")]
    BadMagic(u64),
    /// The packet header's `uuid` differs from the trace's.
    #[error("packet UUID does not match the trace UUID")]
    UuidMismatch,
    /// The packet's `stream_id` names no stream class.
    #[error("no stream class with id {0:?}")]
    UnknownStreamClass(Option<u64>),
    /// A packet of another stream class than the stream's first packet.
    #[error("packet of stream class {found} in a stream of class {expected}")]
    StreamClassChanged {
        /// The stream's class.
        expected: u64,
        /// This packet's class.
        found: u64,
    },
    /// The event header's id names no event class.
    #[error("no event class with id {id:?} in stream class {stream_class}")]
    UnknownEventClass {
        /// The stream class.
        stream_class: u64,
        /// The decoded id (`None`: no id field and several event classes).
        id: Option<u64>,
    },
    /// `packet_size`/`content_size` are inconsistent.
    #[error("bad packet size: packet_size {packet_bits} bits, content_size {content_bits} bits, headers end at bit {header_bits}")]
    BadPacketSize {
        /// `packet_size` in bits.
        packet_bits: u64,
        /// `content_size` in bits.
        content_bits: u64,
        /// End of the packet header + context, in bits.
        header_bits: u64,
    },
    /// The packet runs past the end of the file.
    #[error("truncated packet: {size} bytes expected, {available} left in the file")]
    Truncated {
        /// Packet size in bytes.
        size: u64,
        /// Bytes left in the file from the packet start.
        available: u64,
    },
    /// Packets larger than 4 GiB are not supported.
    #[error("packet of {0} bytes is larger than 4 GiB")]
    PacketTooLarge(u64),
}

/// An error while reading a stream; the stream stops there, the other
/// streams go on.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The stream file cannot be opened or mapped.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The stream file is damaged.
    #[error("{}: at byte offset {offset}: {kind}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the damage in the file.
        offset: u64,
        /// What is wrong.
        kind: CorruptKind,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            ReadError::Io { path, .. } | ReadError::Corrupt { path, .. } => path,
        }
    }

    /// The byte offset of the damage, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReadError::Corrupt { offset, .. } => Some(*offset),
            ReadError::Io { .. } => None,
        }
    }
}

/// The parser's message, prefixed with the metadata path unless it names
/// it already (the TSDL parser's messages do).
fn metadata_message(path: &std::path::Path, message: &str) -> String {
    let p = path.display().to_string();
    if message.contains(&p) {
        message.to_string()
    } else {
        format!("{p}: {message}")
    }
}

/// Why a traceset cannot be opened.
#[derive(Debug, Error)]
pub enum OpenError {
    /// A path does not exist or cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// No CTF trace (directory with a `metadata` file) under a path.
    #[error("{}: no CTF trace found (no `metadata` file)", .0.display())]
    NoTrace(PathBuf),
    /// The metadata cannot be parsed.
    #[error("{}", metadata_message(path, message))]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The metadata cannot be compiled into a decoder.
    #[error("{}: {source}", path.display())]
    Schema {
        /// The trace directory.
        path: PathBuf,
        /// The problem.
        #[source]
        source: SchemaError,
    },
}
