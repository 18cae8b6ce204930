//! CTF 2 metadata: a JSON text sequence of fragments (preamble, trace
//! class, clock classes, data stream classes, event record classes,
//! field-class aliases), resolved into the same [`TraceClass`] the TSDL
//! reader produces, so that the stream decoder reads both alike.
//!
//! The layers, each using only the ones before it:
//!
//! 1. [`framing`] cuts the bytes into records (RFC 7464);
//! 2. [`json`] parses each record with `serde_json` and gives typed,
//!    error-reporting access to its properties;
//! 3. [`fields`] turns field-class JSON into an intermediate tree
//!    ([`fields::Fc`]): aliases expanded, field locations made absolute,
//!    node count and depth bounded;
//! 4. [`fragments`] interprets each fragment kind;
//! 5. [`resolve`] resolves field locations to [`crate::ir::FieldPath`]s,
//!    maps roles to clocks and meanings, and assembles the trace class.
//!
//! Every error names the fragment (from 1) and a byte offset: where the
//! JSON syntax error is, or else where the fragment starts.

mod fields;
mod fragments;
mod framing;
mod json;
mod resolve;

use crate::error::MetadataError;
use crate::ir::TraceClass;

pub(crate) use framing::RS;

/// An error in one fragment, before the file path is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FragError {
    /// Fragment number from 1 (0: before the first one).
    pub(crate) fragment: usize,
    /// Byte offset in the metadata.
    pub(crate) offset: usize,
    /// What was wrong.
    pub(crate) message: String,
}

impl FragError {
    pub(crate) fn new(fragment: usize, offset: usize, message: impl Into<String>) -> Self {
        FragError {
            fragment,
            offset,
            message: crate::error::cut_quoted(message.into()),
        }
    }
}

impl From<FragError> for MetadataError {
    fn from(e: FragError) -> Self {
        MetadataError::Ctf2 {
            path: None,
            fragment: e.fragment,
            offset: e.offset as u64,
            message: e.message,
        }
    }
}

/// Parses CTF 2 metadata (the whole metadata file) into a trace class.
pub(crate) fn parse(bytes: &[u8]) -> Result<TraceClass, MetadataError> {
    let records = framing::records(bytes)?;
    let mut state = fragments::State::default();
    for r in &records {
        let value = json::parse(r)?;
        state.fragment(json::Frag::new(r, &value))?;
    }
    let end = records.last().map_or(0, |r| r.offset);
    Ok(resolve::finish(state, records.len(), end)?)
}
