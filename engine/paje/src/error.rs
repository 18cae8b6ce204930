//! Diagnostics (recoverable problems, collected while parsing and simulating)
//! and the few fatal errors (a file that cannot be opened).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Longest quoted token in a message, in characters: a damaged or hostile
/// trace can hold a gigabyte-long word, and a message is for reading.
pub const QUOTE_CHARS: usize = 48;

/// `s` for a message: whole when short, else its first [`QUOTE_CHARS`]
/// characters and how long it was.
pub fn cut(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => s.to_string(),
        Some((end, _)) => format!("{}… ({} bytes)", &s[..end], s.len()),
    }
}

/// The bytes of a trace token for a message (see [`cut`]); only the bytes
/// shown are converted, so a huge token costs nothing.
pub fn cut_bytes(b: &[u8]) -> String {
    // A UTF-8 character is at most 4 bytes.
    let head = &b[..b.len().min(QUOTE_CHARS * 4)];
    let text = String::from_utf8_lossy(head);
    match text.char_indices().nth(QUOTE_CHARS) {
        None if head.len() == b.len() => text.into_owned(),
        None => format!("{text}… ({} bytes)", b.len()),
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], b.len()),
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Something odd that was tolerated; the result is still what the
    /// trace most likely means (e.g. an extra field on a line).
    Warning,
    /// An event or definition that was rejected and skipped; `pj_dump`
    /// would usually have stopped here.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Where in which file something was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The trace file.
    pub file: Arc<Path>,
    /// 1-based line number (every `\n` counts, comments and blank lines too).
    pub line: u64,
    /// Byte offset of the start of that line in the file.
    pub byte_offset: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} (byte {})",
            self.file.display(),
            self.line,
            self.byte_offset
        )
    }
}

/// One recoverable problem found in a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// Where it is.
    pub location: Location,
    /// What it is, in words.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location, self.severity, self.message)
    }
}

/// Default number of diagnostics kept in memory; later ones are only counted.
pub const DEFAULT_DIAGNOSTIC_LIMIT: usize = 1000;

/// A bounded collection of diagnostics.
///
/// A broken multi-gigabyte trace can produce one problem per line, so only
/// the first `limit` diagnostics are stored; the rest are counted.
#[derive(Debug, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
    limit: usize,
    errors: u64,
    warnings: u64,
}

impl Default for Diagnostics {
    fn default() -> Self {
        Self::with_limit(DEFAULT_DIAGNOSTIC_LIMIT)
    }
}

impl Diagnostics {
    /// An empty collection that stores at most `limit` diagnostics.
    pub fn with_limit(limit: usize) -> Self {
        Diagnostics {
            items: Vec::new(),
            limit,
            errors: 0,
            warnings: 0,
        }
    }

    /// Records a diagnostic (stored if under the limit, always counted).
    pub fn push(&mut self, d: Diagnostic) {
        match d.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.items.len() < self.limit {
            self.items.push(d);
        }
    }

    /// Records a diagnostic built from its parts.
    pub fn report(&mut self, severity: Severity, location: Location, message: impl Into<String>) {
        self.push(Diagnostic {
            severity,
            location,
            message: message.into(),
        });
    }

    /// The stored diagnostics, in the order they were found.
    pub fn items(&self) -> &[Diagnostic] {
        &self.items
    }

    /// Number of errors seen (stored or not).
    pub fn error_count(&self) -> u64 {
        self.errors
    }

    /// Number of warnings seen (stored or not).
    pub fn warning_count(&self) -> u64 {
        self.warnings
    }

    /// Number of diagnostics seen but not stored because of the limit.
    pub fn suppressed(&self) -> u64 {
        (self.errors + self.warnings).saturating_sub(self.items.len() as u64)
    }

    /// True when nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.errors == 0 && self.warnings == 0
    }

    /// Replaces the stored items (same counts), e.g. to reorder them.
    pub(crate) fn replace_items(&mut self, items: Vec<Diagnostic>) {
        self.items = items;
        self.items.truncate(self.limit);
    }

    /// Moves every diagnostic of `other` into `self` (respecting the limit).
    pub fn append(&mut self, other: Diagnostics) {
        let stored_errors = count_kind(&other.items, Severity::Error);
        let stored_warnings = other.items.len() as u64 - stored_errors;
        // What `other` only counted is counted here too.
        self.errors += other.errors.saturating_sub(stored_errors);
        self.warnings += other.warnings.saturating_sub(stored_warnings);
        for d in other.items {
            self.push(d);
        }
    }
}

fn count_kind(items: &[Diagnostic], s: Severity) -> u64 {
    items.iter().filter(|d| d.severity == s).count() as u64
}

/// Fatal errors: the trace could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum PajeError {
    /// A file could not be opened, inspected or mapped.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The path is not a regular file (a FIFO would block the reader, a
    /// device such as `/dev/zero` never ends or reads as nothing).
    #[error("{}: not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Output(#[source] io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_tokens_are_cut() {
        assert_eq!(cut_bytes(b"abc"), "abc");
        assert_eq!(cut("abc"), "abc");
        let long = vec![b'x'; 1 << 20];
        let c = cut_bytes(&long);
        assert!(c.starts_with(&"x".repeat(QUOTE_CHARS)), "{c}");
        assert!(c.ends_with("… (1048576 bytes)"), "{c}");
        assert!(c.len() < 80, "{c}");
        // Cut on a character boundary.
        let e = "é".repeat(100);
        assert_eq!(cut(&e), format!("{}… (200 bytes)", "é".repeat(QUOTE_CHARS)));
        assert_eq!(cut_bytes(e.as_bytes()), cut(&e));
    }
}
