//! Error types of the metadata reader.
//!
//! [`TsdlError`] is about the TSDL text and always points at a line and
//! column of it; [`MetadataError`] is about a metadata file or buffer (I/O,
//! packet framing) and names the file and byte offset where it can.

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// A position in the metadata text: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pos {
    /// Line, starting at 1.
    pub line: u32,
    /// Column in characters, starting at 1.
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// An error in the TSDL text: lexical, syntactic or semantic.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TsdlError {
    /// The text does not follow the TSDL grammar (bad token, unexpected token).
    #[error("line {line}, column {column}: syntax error: {message}")]
    Syntax {
        /// Line (1-based).
        line: u32,
        /// Column (1-based, in characters).
        column: u32,
        /// What was wrong.
        message: String,
    },
    /// The text is grammatical but means something invalid (unknown type,
    /// bad attribute value, unresolvable field reference, ...).
    #[error("line {line}, column {column}: {message}")]
    Semantic {
        /// Line (1-based).
        line: u32,
        /// Column (1-based, in characters).
        column: u32,
        /// What was wrong.
        message: String,
    },
    /// A resource limit was hit (nesting depth, number of type nodes); the
    /// limits keep hostile metadata from exhausting the stack or memory.
    #[error("line {line}, column {column}: limit exceeded: {message}")]
    Limit {
        /// Line (1-based).
        line: u32,
        /// Column (1-based, in characters).
        column: u32,
        /// Which limit.
        message: String,
    },
    /// The text is CTF 2 metadata (a JSON text sequence), not TSDL: it is
    /// read by [`crate::parse_metadata`], not by [`crate::parse_tsdl`].
    #[error("this is CTF 2 metadata (JSON), not TSDL text")]
    Ctf2Unsupported,
}

/// Longest quoted token kept in a message, in characters.
const QUOTE_CHARS: usize = 48;

/// `message` with every token quoted in it (between backquotes or double
/// quotes) cut to [`QUOTE_CHARS`] characters: metadata can hold a
/// megabyte-long name, and a message is for reading.
pub(crate) fn cut_quoted(message: String) -> String {
    if message.len() <= 2 * QUOTE_CHARS {
        return message;
    }
    let mut out = String::with_capacity(4 * QUOTE_CHARS);
    let mut quote: Option<(char, usize)> = None;
    for c in message.chars() {
        match quote {
            Some((q, _)) if c == q => {
                quote = None;
                out.push(c);
            }
            Some((q, n)) => {
                if n < QUOTE_CHARS {
                    out.push(c);
                } else if n == QUOTE_CHARS {
                    out.push('…');
                }
                quote = Some((q, n + 1));
            }
            None => {
                if c == '`' || c == '"' {
                    quote = Some((c, 0));
                }
                out.push(c);
            }
        }
    }
    out
}

impl TsdlError {
    pub(crate) fn syntax(pos: Pos, message: impl Into<String>) -> Self {
        TsdlError::Syntax {
            line: pos.line,
            column: pos.column,
            message: cut_quoted(message.into()),
        }
    }

    pub(crate) fn semantic(pos: Pos, message: impl Into<String>) -> Self {
        TsdlError::Semantic {
            line: pos.line,
            column: pos.column,
            message: cut_quoted(message.into()),
        }
    }

    pub(crate) fn limit(pos: Pos, message: impl Into<String>) -> Self {
        TsdlError::Limit {
            line: pos.line,
            column: pos.column,
            message: cut_quoted(message.into()),
        }
    }

    /// The position (line, column; 1-based) the error points at, if any.
    pub fn position(&self) -> Option<Pos> {
        match self {
            TsdlError::Syntax { line, column, .. }
            | TsdlError::Semantic { line, column, .. }
            | TsdlError::Limit { line, column, .. } => Some(Pos {
                line: *line,
                column: *column,
            }),
            TsdlError::Ctf2Unsupported => None,
        }
    }
}

/// An error reading a metadata file or buffer.
///
/// `path` is `None` when the bytes did not come from a file
/// ([`crate::metadata_text`]); it is displayed as `<metadata>` then.
#[derive(Debug, Error)]
pub enum MetadataError {
    /// The file could not be read.
    #[error("{}: cannot read metadata: {source}", show(path))]
    Io {
        /// The file.
        path: Option<PathBuf>,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A metadata packet is malformed (bad magic, impossible sizes, ...).
    #[error(
        "{}: bad metadata packet at byte offset {offset}: {message}",
        show(path)
    )]
    Packet {
        /// The file.
        path: Option<PathBuf>,
        /// Byte offset of the packet (or of the faulty header field) in the file.
        offset: u64,
        /// What was wrong.
        message: String,
    },
    /// The file is larger than any real metadata could be.
    #[error(
        "{}: metadata is {size} bytes, more than the {limit}-byte limit",
        show(path)
    )]
    TooLarge {
        /// The file.
        path: Option<PathBuf>,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The CTF 2 metadata (JSON text sequence) is invalid or uses what
    /// traceloom cannot decode. Fragments are numbered from 1, in file
    /// order; the offset is the byte where the fault is (for a JSON
    /// syntax error) or where the fragment starts.
    #[error(
        "{}: CTF 2 metadata fragment {fragment} (byte offset {offset}): {message}",
        show(path)
    )]
    Ctf2 {
        /// The file.
        path: Option<PathBuf>,
        /// The fragment, counted from 1 (0: the framing before any).
        fragment: usize,
        /// Byte offset in the metadata.
        offset: u64,
        /// What was wrong.
        message: String,
    },
    /// The TSDL text is invalid.
    #[error("{}: {source}", show(path))]
    Tsdl {
        /// The file.
        path: Option<PathBuf>,
        /// The TSDL error, with line and column.
        #[source]
        source: TsdlError,
    },
}

impl MetadataError {
    /// The file the error is about, if it came from a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            MetadataError::Io { path, .. }
            | MetadataError::Packet { path, .. }
            | MetadataError::TooLarge { path, .. }
            | MetadataError::Ctf2 { path, .. }
            | MetadataError::Tsdl { path, .. } => path.as_deref(),
        }
    }

    /// Attaches the file path (errors from in-memory parsing have none).
    pub(crate) fn with_path(mut self, p: &Path) -> Self {
        match &mut self {
            MetadataError::Io { path, .. }
            | MetadataError::Packet { path, .. }
            | MetadataError::TooLarge { path, .. }
            | MetadataError::Ctf2 { path, .. }
            | MetadataError::Tsdl { path, .. } => *path = Some(p.to_path_buf()),
        }
        self
    }
}

fn show(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => p.display().to_string(),
        None => "<metadata>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_tokens_are_cut() {
        let long = "x".repeat(10_000);
        let e = TsdlError::syntax(Pos { line: 1, column: 1 }, format!("unknown `{long}` here"));
        let m = e.to_string();
        assert!(m.len() < 120, "{m}");
        assert!(
            m.contains(&format!("`{}…` here", "x".repeat(QUOTE_CHARS))),
            "{m}"
        );
        let short = TsdlError::syntax(Pos { line: 1, column: 1 }, "expected `;`");
        assert!(short.to_string().ends_with("expected `;`"));
    }
}
