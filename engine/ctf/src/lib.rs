//! CTF 1.8 stream reading: memory-mapped data streams decoded bit-exactly,
//! indexed by packet, and merged across streams and traces by time, with
//! babeltrace2 2.0's semantics (clock arithmetic, lost-records messages,
//! muxer tie-breaks).
//!
//! * [`Traceset::open`] finds the traces under some paths ([`discover`]),
//!   parses their metadata (`traceloom-tsdl`), compiles it into decoders
//!   ([`decode`]) and indexes their packets from the packet headers or
//!   LTTng `.idx` files ([`index`], [`packet`]);
//! * [`Traceset::messages`] / [`Traceset::messages_between`] return a
//!   [`Cursor`]: a lending iterator over the time-ordered [`Message`]s of
//!   all streams ([`merge`], [`stream`]). Streams are decoded a packet
//!   batch at a time, ahead of the merge on worker threads
//!   ([`Traceset::set_decode_threads`]); the sequence does not depend on
//!   the number of threads;
//! * [`Cursor::position`] / [`Cursor::from_position`] save and restore
//!   a reading position ([`Position`] per stream);
//! * the decoded-event API is in [`event`]; the trace and stream
//!   descriptions an event points back to are in [`trace`]; errors in
//!   [`error`] name the file and byte offset of damage, and a damaged
//!   stream stops there while the others go on.

pub(crate) mod batch;
pub mod bits;
pub mod clock;
pub mod decode;
pub mod discover;
pub mod error;
pub mod event;
pub mod index;
pub mod merge;
pub mod packet;
pub(crate) mod plan;
pub(crate) mod prefetch;
pub(crate) mod schema;
pub mod stream;
pub mod trace;
pub mod traceset;

pub use error::{CorruptKind, OpenError, ReadError};
pub use event::{Discarded, Event, FieldRef, FieldValue, Message, Position};
pub use merge::{Cursor, CursorPosition};
pub use packet::PacketInfo;
pub use schema::SchemaError;
pub use trace::{StreamInfo, TraceInfo};
pub use traceset::Traceset;
