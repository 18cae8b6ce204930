//! The damaged streams an analysis met, kept with it: a [`KernelData`]
//! read back from the analysis store was built by a pass that may have
//! stopped reading a stream at its damage, and whoever shows it (the
//! commands, the window) must still say so, with the file and byte
//! offset, though nothing is read this time.
//!
//! [`KernelData`]: super::kernel::KernelData

use std::fmt;

use serde::{Deserialize, Serialize};
use traceloom_ctf::ReadError;

/// A stream the pass stopped reading at its damage (what came before was
/// analysed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StreamDamage {
    /// The stream file, as displayed (a `String`, not a `PathBuf`: the
    /// store's postcard encoding of a path that is not UTF-8 would fail).
    pub path: String,
    /// Byte offset of the damage in the file, when known (not for a file
    /// that could not be opened).
    pub offset: Option<u64>,
    /// The reader's whole message (file, offset, what is wrong): what the
    /// commands print.
    pub message: String,
}

impl StreamDamage {
    /// The damage `e` reports.
    pub fn of(e: &ReadError) -> Self {
        StreamDamage {
            path: e.path().display().to_string(),
            offset: e.offset(),
            message: e.to_string(),
        }
    }

    /// The damage of each of `errors`, in their order.
    pub fn all(errors: &[ReadError]) -> Vec<StreamDamage> {
        errors.iter().map(StreamDamage::of).collect()
    }
}

impl fmt::Display for StreamDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
