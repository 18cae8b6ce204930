//! CTF 1.8 stream reading: memory-mapped data streams decoded bit-exactly,
//! indexed by packet, and merged across streams and traces by time, with
//! babeltrace2 2.0's semantics (clock arithmetic, lost-records messages,
//! muxer tie-breaks).
//!
//! * [`Traceset::open`] finds the traces under some paths
//!   ([`fs::discover`]), parses their metadata (`traceloom-tsdl`), compiles
//!   it into decoders ([`decode`]) and indexes their packets from the packet
//!   headers or LTTng `.idx` files ([`stream::index`], [`stream::packet`]);
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
//!
//! The modules form a one-way stack, each importing only those below it:
//!
//! | layer | modules | job |
//! |---|---|---|
//! | leaves | [`error`], [`trace`], [`event`], `classes` | errors; trace and stream descriptions; the decoded-event API; tables by event class id |
//! | decoders | [`decode`] (`plan`, `plan/fast`, [`decode::bits`], [`decode::clock`]) | scopes compiled into programs and run over bytes |
//! | compiled metadata | `schema` | a trace class compiled for decoding |
//! | streams | [`stream`] ([`stream::packet`], [`stream::index`], `batch`, `reader`) | one stream's bytes and packet index to its messages |
//! | files | [`fs`] ([`fs::discover`], [`fs::traceset`]) | traces found, opened and indexed |
//! | merge | [`merge`] (`prefetch`, the cursor) | all streams in time order, decoded ahead |

pub(crate) mod classes;
pub mod decode;
pub mod error;
pub mod event;
pub mod fs;
pub mod merge;
pub(crate) mod schema;
pub mod stream;
pub mod trace;

pub use error::{CorruptKind, OpenError, ReadError, SchemaError};
pub use event::{Discarded, Event, FieldRef, FieldValue, Message, Position};
pub use fs::traceset::Traceset;
pub use merge::{Cursor, CursorPosition};
pub use stream::packet::PacketInfo;
pub use trace::{StreamInfo, TraceInfo};
