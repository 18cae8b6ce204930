//! What every traceloom crate shares, and nothing else: the engine's unit
//! of time ([`Time`], nanoseconds) and closed time ranges ([`TimeRange`]);
//! calendar conversions ([`civil`]) and the `--begin`/`--end` time syntax
//! ([`timespec`]); the fast hasher of in-process tables ([`hash`]).
//!
//! It depends on no other traceloom crate, so that the format readers, the
//! engine, the viewers, the command line and the window all use one
//! definition of each.

pub mod civil;
pub mod hash;
pub mod time;
pub mod timespec;

pub use hash::{FastBuildHasher, FastHasher, FastMap, FastSet};
pub use time::{Time, TimeRange};
