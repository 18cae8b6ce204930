//! The packet decoder: the input is one stream file of a trace whose
//! metadata is fixed (the bundled `mpi_allreduce` trace's, which has
//! sequences, variants and several stream classes); every message is read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use traceloom_ctf::Traceset;

/// The metadata every input is decoded with.
const METADATA: &str = include_str!("../../traces/ctf/tracecompass/mpi_allreduce/metadata");

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(dir.path().join("metadata"), METADATA).expect("write metadata");
    std::fs::write(dir.path().join("stream"), data).expect("write stream");
    let Ok(ts) = Traceset::open(&[dir.path().to_path_buf()]) else {
        return;
    };
    let mut cursor = ts.messages();
    // A damaged stream ends at its first error.
    while let Some(m) = cursor.next() {
        if m.is_err() {
            break;
        }
    }
});
