//! Errors of opening and reading a traceset, and of the layers below:
//! compiling metadata into decoders ([`CompileError`], [`SchemaError`]) and
//! decoding fields ([`DecodeError`]). Reading errors name the stream file
//! and the byte offset of the damage.
//!
//! A leaf of the crate: every layer reports through these types, and this
//! module imports no other module of the crate.

use std::path::PathBuf;

use thiserror::Error;
use traceloom_tsdl::ir::FieldPath;

/// The metadata cannot be compiled into a decoder.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum CompileError {
    /// A variant tag or sequence length path does not lead to a field.
    #[error("{what} refers to a missing field ({path:?})")]
    BadPath {
        /// What the path was for.
        what: &'static str,
        /// The path.
        path: FieldPath,
    },
    /// A variant tag is not an enumeration (CTF 1.8), or not an integer
    /// (CTF 2, whose options list their selector values).
    #[error("variant tag {0:?} is not an enumeration or integer")]
    TagNotEnum(FieldPath),
    /// A sequence length is not an integer.
    #[error("sequence length {0:?} is not an integer")]
    LengthNotInt(FieldPath),
    /// A floating-point type other than binary32/binary64.
    #[error("unsupported floating point size {exp_dig}+{mant_dig} bits")]
    UnsupportedFloat {
        /// Exponent digits.
        exp_dig: u32,
        /// Mantissa digits.
        mant_dig: u32,
    },
    /// An integer wider than 64 bits or of size 0.
    #[error("unsupported integer size {0}")]
    UnsupportedInt(u32),
    /// Too many referenced fields or too many ops.
    #[error("metadata too large to compile")]
    TooLarge,
}

/// Why decoding failed, with the bit offset from the start of the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// A field runs past the packet content.
    #[error("field of {bits} bits runs past the end of the packet content")]
    OutOfBounds {
        /// Bits requested.
        bits: u64,
    },
    /// A string has no terminating NUL before the packet content end.
    #[error("unterminated string")]
    UnterminatedString,
    /// A sequence length that cannot fit in the packet content.
    #[error("sequence/array length {0} does not fit in the packet content")]
    BadLength(u64),
    /// A variable-length integer that runs past the packet content or
    /// holds more than 64 bits.
    #[error("variable-length integer runs past the packet content or exceeds 64 bits")]
    BadVarInt,
    /// A variant tag value that selects no option.
    #[error("variant tag value {0} selects no option")]
    NoVariantOption(i64),
}

/// A decoding failure at `bit_offset` (from the start of the packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{kind} at bit offset {bit_offset}")]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Where, in bits from the start of the packet.
    pub bit_offset: u64,
}

/// Why a trace class cannot be used.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SchemaError {
    /// A scope cannot be compiled.
    #[error("stream class {stream}{}: {source}", event.map(|e| format!(", event class {e}")).unwrap_or_default())]
    Compile {
        /// Stream class id.
        stream: u64,
        /// Event class id, when the error is in an event class.
        event: Option<u64>,
        /// The error.
        source: CompileError,
    },
    /// Integers of one stream class map to different clocks.
    #[error("stream class {0} maps integers to more than one clock")]
    SeveralClocks(u64),
    /// A mapped clock is not declared.
    #[error("clock {0:?} is not declared")]
    UnknownClock(String),
}

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
