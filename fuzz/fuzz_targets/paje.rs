//! The Pajé reader and simulation on any bytes: diagnostics, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use traceloom_paje::{LoadOptions, PjDumpOptions, Trace};

fuzz_target!(|data: &[u8]| {
    let trace = Trace::from_bytes("fuzz.trace", data.to_vec(), &LoadOptions::default());
    let _ = trace.write_pj_dump(&PjDumpOptions::default(), std::io::sink());
});
