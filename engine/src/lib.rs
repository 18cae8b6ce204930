//! The traceset engine: the traceset as an event source, events requests
//! and their scheduler, state computation, checkpoints, the seek index and
//! the filter's view of an event; a Pajé trace as an event source and its
//! simulation as the state. The format readers are crates of their
//! own (`traceloom-ctf`, `traceloom-paje`, `traceloom-tsdl`) and so is the
//! filter language (`traceloom-filter`): callers import them directly.

pub mod checkpoint;
pub mod paje_source;
pub mod paje_state;
pub mod request;
pub mod seek_index;
pub mod source;
pub mod state;
pub mod subject;
