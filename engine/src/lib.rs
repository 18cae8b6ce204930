//! The traceset engine: trace formats, traceset, events requests and their
//! scheduler, state computation, filter.

pub use traceloom_ctf as ctf;
pub use traceloom_filter as filter;
pub use traceloom_paje as paje;
pub use traceloom_tsdl as tsdl;

pub mod checkpoint;
pub mod class_map;
pub mod request;
pub mod seek_index;
pub mod source;
pub mod state;
pub mod subject;
