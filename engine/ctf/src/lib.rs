//! CTF 1.8 stream reading: memory-mapped data streams decoded bit-exactly,
//! indexed by packet, and merged across streams and traces by time.

pub use traceloom_tsdl as tsdl;
