//! CTF metadata, parsed and resolved into a [`ir::TraceClass`] that the
//! stream decoder consumes: CTF 1.8 TSDL text (plain or packetized), or
//! CTF 2 JSON fragments ([`ctf2`], detected by their record separator).
//!
//! Entry points: [`read_metadata_file`] for a trace's `metadata` file,
//! [`parse_metadata`] for its bytes, [`metadata_text`] to get the text out
//! of packetized metadata, [`parse_tsdl`] for TSDL text.

mod ast;
mod attrs;
pub(crate) mod ctf2;
mod error;
pub mod ir;
mod lexer;
mod link;
mod metadata;
mod parser;
mod resolve;
mod types;

pub use error::{MetadataError, Pos, TsdlError};
pub use link::MAX_NODES;
pub use metadata::{
    is_ctf2, metadata_text, packetized_byte_order, parse_metadata, read_metadata_file,
    read_metadata_text, MAX_METADATA_FILE_LEN, METADATA_PACKET_HEADER_LEN, METADATA_PACKET_MAGIC,
};
pub use parser::MAX_DEPTH;

/// Parses and resolves TSDL text into a trace class.
///
/// `native` byte orders resolve to the trace block's `byte_order`, wherever
/// the trace block is. Errors point at a line and column of `text`.
pub fn parse_tsdl(text: &str) -> Result<ir::TraceClass, TsdlError> {
    if is_ctf2(text.as_bytes()) {
        return Err(TsdlError::Ctf2Unsupported);
    }
    resolve::resolve_text(text)
}
