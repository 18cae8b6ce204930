//! Bytes for a [`TracesetState`]: what the checkpoint cache stores.
//!
//! The encoding is postcard (compact, varint-based); the cache file adds
//! its own version and checksum around it.

use super::TracesetState;

/// A state could not be decoded from bytes.
#[derive(Debug, thiserror::Error)]
#[error("cannot decode a saved state: {0}")]
pub struct DecodeError(#[from] postcard::Error);

/// Appends the encoding of `state` to `out`.
pub fn encode(state: &TracesetState, out: &mut Vec<u8>) {
    // Serializing plain data into a Vec cannot fail.
    let bytes = postcard::to_stdvec(state).expect("state serialization is infallible");
    out.extend_from_slice(&bytes);
}

/// Decodes a state encoded by [`encode`].
pub fn decode(bytes: &[u8]) -> Result<TracesetState, DecodeError> {
    Ok(postcard::from_bytes(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{ExecMode, ModeFrame, Thread, ThreadKey, ThreadStatus};
    use std::sync::Arc;

    #[test]
    fn round_trip() {
        let mut s = TracesetState::new(2);
        let t = s.trace_mut(1);
        t.time = 42;
        t.cpu_mut(3).running = Some(ThreadKey::new(7, 3));
        t.threads.insert(
            ThreadKey::new(7, 3),
            Thread {
                tid: 7,
                pid: 7,
                ppid: 1,
                name: Arc::from("bash"),
                status: ThreadStatus::Run,
                modes: vec![
                    ModeFrame {
                        mode: ExecMode::User,
                        sub: 0,
                    },
                    ModeFrame {
                        mode: ExecMode::Syscall,
                        sub: 12,
                    },
                ],
                cpu: Some(3),
                created: None,
                since: 40,
            },
        );
        let mut bytes = Vec::new();
        encode(&s, &mut bytes);
        assert_eq!(decode(&bytes).unwrap(), s);
        assert!(decode(&bytes[..bytes.len() - 3]).is_err());
    }
}
