//! The TSDL parser and resolver on any bytes (plain or packetized
//! metadata): an error or a trace class, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = traceloom_tsdl::parse_metadata(data);
});
