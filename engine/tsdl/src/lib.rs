//! CTF 1.8 metadata: the TSDL text (plain or packetized) parsed and resolved
//! into a [`ir::TraceClass`] that the stream decoder consumes.

pub mod ir;
