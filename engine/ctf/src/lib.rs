//! CTF 1.8 stream reading: memory-mapped data streams decoded bit-exactly,
//! indexed by packet, and merged across streams and traces by time.
//!
//! * [`Traceset::open`] finds the traces under some paths ([`discover`]),
//!   compiles their metadata into decoders ([`decode`]) and indexes their
//!   packets ([`index`], [`packet`]);
//! * [`Traceset::messages`] returns a [`Cursor`] over the time-ordered
//!   [`Message`]s of all streams ([`merge`], [`stream`]);
//! * the decoded-event API is in [`event`]; the trace and stream
//!   descriptions an event points back to are in [`trace`].

pub use traceloom_tsdl as tsdl;

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
pub(crate) mod prefetch;
pub(crate) mod schema;
pub mod stream;
pub mod trace;
pub mod traceset;

pub use error::{CorruptKind, OpenError, ReadError};
pub use event::{Discarded, Event, FieldRef, FieldValue, Message, Position};
pub use merge::{Checkpoint, Cursor};
pub use packet::PacketInfo;
pub use schema::SchemaError;
pub use trace::{StreamInfo, TraceInfo};
pub use traceset::Traceset;
