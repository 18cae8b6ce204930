//! Metadata files: plain TSDL text, or TSDL split into binary metadata
//! packets (CTF 1.8 §4.1.4), each with a 37-byte header:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `0x75D11D57` (u32, in the trace's byte order) |
//! | 4 | uuid (16 bytes) |
//! | 20 | checksum (u32) |
//! | 24 | content_size in bits (u32, header included) |
//! | 28 | packet_size in bits (u32) |
//! | 32 | compression, encryption, checksum scheme, major, minor (u8 each) |

use std::path::Path;

use crate::error::MetadataError;
use crate::ir::{ByteOrder, TraceClass};
use crate::parse_tsdl;

/// Magic number opening every metadata packet.
pub const METADATA_PACKET_MAGIC: u32 = 0x75D1_1D57;

/// Size in bytes of a metadata packet header.
pub const METADATA_PACKET_HEADER_LEN: usize = 37;

/// Largest metadata file accepted (real ones are at most a few MiB).
pub const MAX_METADATA_FILE_LEN: u64 = 256 << 20;

use crate::ctf2::RS as RECORD_SEPARATOR;

/// If `bytes` start with a metadata packet, the byte order of its header.
pub fn packetized_byte_order(bytes: &[u8]) -> Option<ByteOrder> {
    let head: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    if u32::from_le_bytes(head) == METADATA_PACKET_MAGIC {
        Some(ByteOrder::Little)
    } else if u32::from_be_bytes(head) == METADATA_PACKET_MAGIC {
        Some(ByteOrder::Big)
    } else {
        None
    }
}

/// Whether `bytes` look like CTF 2 metadata (a JSON text sequence).
pub fn is_ctf2(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == RECORD_SEPARATOR)
}

/// The text of a metadata file's contents: the packets' payloads
/// concatenated (each up to its `content_size`), or the bytes themselves for
/// plain-text metadata, TSDL or CTF 2 JSON. Invalid UTF-8 is replaced (it
/// can only occur inside string literals of valid metadata).
pub fn metadata_text(bytes: &[u8]) -> Result<String, MetadataError> {
    if let Some(order) = packetized_byte_order(bytes) {
        return unpacketize(bytes, order);
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// Parses metadata file contents (plain or packetized TSDL, or CTF 2
/// JSON) into a trace class.
pub fn parse_metadata(bytes: &[u8]) -> Result<TraceClass, MetadataError> {
    if is_ctf2(bytes) {
        return crate::ctf2::parse(bytes);
    }
    parse_text(&metadata_text(bytes)?)
}

/// Parses metadata text (unpacketized).
fn parse_text(text: &str) -> Result<TraceClass, MetadataError> {
    if is_ctf2(text.as_bytes()) {
        // Packetized CTF 2 metadata does not exist, but the text is read
        // for what it is.
        return crate::ctf2::parse(text.as_bytes());
    }
    parse_tsdl(text).map_err(|source| MetadataError::Tsdl { path: None, source })
}

/// Reads and parses a metadata file (plain or packetized TSDL, or CTF 2).
pub fn read_metadata_file(path: &Path) -> Result<TraceClass, MetadataError> {
    let bytes = read_bounded(path).map_err(|e| e.with_path(path))?;
    if is_ctf2(&bytes) {
        return crate::ctf2::parse(&bytes).map_err(|e| e.with_path(path));
    }
    // The text, without a second copy of a plain file's bytes (they are
    // the text): only one copy is held while parsing.
    let text = if packetized_byte_order(&bytes).is_some() {
        metadata_text(&bytes)
    } else {
        Ok(String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    };
    let text = text.map_err(|e| e.with_path(path))?;
    parse_text(&text).map_err(|e| e.with_path(path))
}

/// Reads a metadata file's text (plain or packetized), without parsing it.
pub fn read_metadata_text(path: &Path) -> Result<String, MetadataError> {
    let bytes = read_bounded(path).map_err(|e| e.with_path(path))?;
    metadata_text(&bytes).map_err(|e| e.with_path(path))
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, MetadataError> {
    let io = |source| MetadataError::Io { path: None, source };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_METADATA_FILE_LEN {
        return Err(MetadataError::TooLarge {
            path: None,
            size,
            limit: MAX_METADATA_FILE_LEN,
        });
    }
    std::fs::read(path).map_err(io)
}

fn packet_error(offset: usize, message: String) -> MetadataError {
    MetadataError::Packet {
        path: None,
        offset: offset as u64,
        message,
    }
}

fn read_u32(bytes: &[u8], at: usize, order: ByteOrder) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    match order {
        ByteOrder::Little => u32::from_le_bytes(b),
        ByteOrder::Big => u32::from_be_bytes(b),
    }
}

/// Concatenates the payloads of consecutive metadata packets.
fn unpacketize(bytes: &[u8], order: ByteOrder) -> Result<String, MetadataError> {
    const H: usize = METADATA_PACKET_HEADER_LEN;
    let mut text = Vec::new();
    let mut off = 0usize;
    let mut first_uuid: Option<&[u8]> = None;
    while off < bytes.len() {
        let left = bytes.len() - off;
        if left < H {
            return Err(packet_error(
                off,
                format!("truncated packet header: {left} bytes left, a header needs {H}"),
            ));
        }
        let magic = read_u32(bytes, off, order);
        if magic != METADATA_PACKET_MAGIC {
            return Err(packet_error(
                off,
                format!("bad magic 0x{magic:08X} (expected 0x{METADATA_PACKET_MAGIC:08X})"),
            ));
        }
        let uuid = &bytes[off + 4..off + 20];
        match first_uuid {
            None => first_uuid = Some(uuid),
            Some(u) if u != uuid => {
                return Err(packet_error(
                    off + 4,
                    "packet UUID differs from the first packet's".to_string(),
                ))
            }
            Some(_) => {}
        }
        let content_bits = read_u32(bytes, off + 24, order);
        let packet_bits = read_u32(bytes, off + 28, order);
        let (compression, encryption) = (bytes[off + 32], bytes[off + 33]);
        if compression != 0 || encryption != 0 {
            return Err(packet_error(
                off + 32,
                format!(
                    "compressed or encrypted metadata packets are not supported \
                     (compression scheme {compression}, encryption scheme {encryption})"
                ),
            ));
        }
        if packet_bits & 7 != 0 || content_bits & 7 != 0 {
            return Err(packet_error(
                off + 24,
                format!(
                    "content size {content_bits} bits or packet size {packet_bits} bits \
                     is not a whole number of bytes"
                ),
            ));
        }
        let content = (content_bits / 8) as usize;
        let packet = (packet_bits / 8) as usize;
        if content < H || content > packet {
            return Err(packet_error(
                off + 24,
                format!(
                    "impossible sizes: content {content} bytes, packet {packet} bytes \
                     (the content must hold the {H}-byte header and fit in the packet)"
                ),
            ));
        }
        if content > left {
            return Err(packet_error(
                off + 24,
                format!("content size {content} bytes exceeds the {left} bytes left in the file"),
            ));
        }
        text.extend_from_slice(&bytes[off + H..off + content]);
        if packet > left {
            // The last packet of a file copied while being written may lack
            // its padding; its content is complete, so accept it as the last.
            break;
        }
        off += packet;
    }
    // Some tracers pad the text with NULs inside the content size.
    while text.last() == Some(&0) {
        text.pop();
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds one metadata packet around `payload`.
    pub(crate) fn packet(
        payload: &[u8],
        padding: usize,
        order: ByteOrder,
        uuid: [u8; 16],
    ) -> Vec<u8> {
        let u32b = |v: u32| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let content = METADATA_PACKET_HEADER_LEN + payload.len();
        let mut p = Vec::new();
        p.extend_from_slice(&u32b(METADATA_PACKET_MAGIC));
        p.extend_from_slice(&uuid);
        p.extend_from_slice(&u32b(0));
        p.extend_from_slice(&u32b((content * 8) as u32));
        p.extend_from_slice(&u32b(((content + padding) * 8) as u32));
        p.extend_from_slice(&[0, 0, 0, 1, 8]);
        p.extend_from_slice(payload);
        p.extend(std::iter::repeat_n(0xAAu8, padding));
        p
    }

    #[test]
    fn packets_in_both_byte_orders_are_concatenated() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut bytes = packet(b"trace { ", 13, order, [7; 16]);
            bytes.extend(packet(b"major = 1; };", 0, order, [7; 16]));
            assert_eq!(packetized_byte_order(&bytes), Some(order));
            assert_eq!(metadata_text(&bytes).unwrap(), "trace { major = 1; };");
        }
    }

    #[test]
    fn plain_text_is_returned_as_is() {
        assert_eq!(
            metadata_text(b"/* CTF 1.8 */ x").unwrap(),
            "/* CTF 1.8 */ x"
        );
        assert_eq!(metadata_text(b"typealias").unwrap(), "typealias");
    }

    #[test]
    fn ctf2_is_recognized() {
        let e = parse_metadata(b"\x1e{\"type\": \"preamble\", \"version\": 3}\n").unwrap_err();
        assert!(
            matches!(e, MetadataError::Ctf2 { fragment: 1, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("CTF 2"), "{e}");
    }

    fn packet_err(bytes: &[u8]) -> (u64, String) {
        match metadata_text(bytes).unwrap_err() {
            MetadataError::Packet {
                offset, message, ..
            } => (offset, message),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn bad_packets_are_reported_with_offsets() {
        let good = packet(b"abc", 3, ByteOrder::Little, [1; 16]);
        let n = good.len() as u64;

        // Truncated second header.
        let mut b = good.clone();
        b.extend_from_slice(&good[..10]);
        assert_eq!(packet_err(&b).0, n);

        // Bad magic in the second packet.
        let mut b = good.clone();
        b.extend_from_slice(&good);
        b[n as usize] ^= 0xFF;
        let (off, msg) = packet_err(&b);
        assert_eq!(off, n);
        assert!(msg.contains("magic"), "{msg}");

        // Content larger than the packet.
        let mut b = good.clone();
        b[24..28].copy_from_slice(&(10_000u32 * 8).to_le_bytes());
        assert_eq!(packet_err(&b).0, 24);

        // Content smaller than a header; zero packet size.
        let mut b = good.clone();
        b[24..28].copy_from_slice(&8u32.to_le_bytes());
        assert_eq!(packet_err(&b).0, 24);
        let mut b = good.clone();
        b[28..32].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(packet_err(&b).0, 24);

        // Sizes not in whole bytes.
        let mut b = good.clone();
        b[28..32].copy_from_slice(&(43u32 * 8 + 1).to_le_bytes());
        assert_eq!(packet_err(&b).0, 24);

        // Absurd content size beyond the file.
        let mut b = good.clone();
        b[24..28].copy_from_slice(&u32::MAX.wrapping_sub(7).to_le_bytes());
        b[28..32].copy_from_slice(&u32::MAX.wrapping_sub(7).to_le_bytes());
        let (off, msg) = packet_err(&b);
        assert_eq!(off, 24);
        assert!(msg.contains("exceeds"), "{msg}");

        // Compression.
        let mut b = good.clone();
        b[32] = 1;
        assert_eq!(packet_err(&b).0, 32);

        // UUID change between packets.
        let mut b = good.clone();
        b.extend(packet(b"d", 0, ByteOrder::Little, [2; 16]));
        assert_eq!(packet_err(&b).0, n + 4);
    }

    #[test]
    fn last_packet_without_padding_is_accepted() {
        let mut b = packet(b"abc", 0, ByteOrder::Big, [0; 16]);
        b[28..32].copy_from_slice(&(4096u32 * 8).to_be_bytes());
        assert_eq!(metadata_text(&b).unwrap(), "abc");
    }

    #[test]
    fn file_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("tsdl-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("metadata");
        let mut b = packet(b"abc", 0, ByteOrder::Little, [0; 16]);
        b.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&p, &b).unwrap();
        let e = read_metadata_file(&p).unwrap_err();
        assert_eq!(e.path(), Some(p.as_path()));
        let s = e.to_string();
        assert!(
            s.contains(&p.display().to_string()) && s.contains("offset 40"),
            "{s}"
        );

        std::fs::write(&p, b"trace { major = 1; minor = 8; byte_order = xx; };").unwrap();
        let s = read_metadata_file(&p).unwrap_err().to_string();
        assert!(
            s.contains(&p.display().to_string()) && s.contains("line 1, column 44"),
            "{s}"
        );

        let missing = dir.join("nope");
        let e = read_metadata_file(&missing).unwrap_err();
        assert!(matches!(e, MetadataError::Io { .. }));
        assert!(e.to_string().contains("nope"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
