//! The CTF 2 metadata reader on any bytes after a record separator (so
//! that every input takes the JSON path): an error or a trace class,
//! never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Vec::with_capacity(data.len() + 1);
    bytes.push(0x1E);
    bytes.extend_from_slice(data);
    let _ = traceloom_tsdl::parse_metadata(&bytes);
});
