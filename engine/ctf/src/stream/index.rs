//! The packet index of a stream file: built from the packet headers and
//! contexts only, or read from LTTng's `index/<stream>.idx` when that file
//! is present and agrees with the stream file.

use std::path::{Path, PathBuf};

use crate::decode::DecodeState;
use crate::error::ReadError;
use crate::event::FieldValue;
use crate::schema::CompiledTrace;
use crate::stream::packet::{decode_packet_start, PacketInfo};

/// LTTng packet index magic.
pub const IDX_MAGIC: u32 = 0xC1F1_DCC1;

/// The packets of one stream file, and the damage that ended it early.
#[derive(Debug, Default)]
pub struct FileIndex {
    /// Packets in file order.
    pub packets: Vec<PacketInfo>,
    /// Where and why indexing stopped before the end of the file.
    pub error: Option<ReadError>,
    /// Whether the packets came from an LTTng `.idx` file.
    pub from_lttng_index: bool,
}

/// Builds the index of a stream file by walking its packet headers.
pub(crate) fn scan_file(trace: &CompiledTrace, file: u32, path: &Path, data: &[u8]) -> FileIndex {
    let mut st = DecodeState::new(0);
    let mut values: Vec<FieldValue> = Vec::with_capacity(64);
    let mut out = FileIndex::default();
    let mut offset = 0u64;
    let len = data.len() as u64;
    while offset < len {
        match decode_packet_start(trace, data, offset, &mut st, &mut values) {
            Ok((ps, _)) => {
                let mut info = ps.info;
                info.file = file;
                offset += info.size;
                out.packets.push(info);
            }
            Err((at, kind)) => {
                out.error = Some(ReadError::Corrupt {
                    path: path.to_path_buf(),
                    offset: offset + at,
                    kind,
                });
                break;
            }
        }
    }
    out
}

/// One entry of an LTTng `.idx` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdxEntry {
    /// Byte offset of the packet.
    pub offset: u64,
    /// Packet size in bits.
    pub packet_bits: u64,
    /// Content size in bits.
    pub content_bits: u64,
    /// `timestamp_begin`.
    pub ts_begin: u64,
    /// `timestamp_end`.
    pub ts_end: u64,
    /// `events_discarded`.
    pub events_discarded: u64,
    /// `stream_id` (the stream class).
    pub stream_id: u64,
    /// `stream_instance_id` (index 1.1+).
    pub instance_id: Option<u64>,
    /// `packet_seq_num` (index 1.1+).
    pub seq_num: Option<u64>,
}

/// Parses an LTTng index: `magic(u32) major(u32) minor(u32)
/// entry_len(u32)` then entries of big-endian u64s. `None` if malformed.
pub fn parse_idx(bytes: &[u8]) -> Option<Vec<IdxEntry>> {
    let be32 = |o: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(o..o + 4)?.try_into().ok()?))
    };
    if be32(0)? != IDX_MAGIC {
        return None;
    }
    let major = be32(4)?;
    let minor = be32(8)?;
    let entry_len = be32(12)? as usize;
    if major != 1 {
        return None;
    }
    let fields = if minor >= 1 { 9 } else { 7 };
    if entry_len < fields * 8 {
        return None;
    }
    let body = bytes.get(16..)?;
    if body.len() % entry_len != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() / entry_len);
    for e in body.chunks_exact(entry_len) {
        let f = |i: usize| u64::from_be_bytes(e[i * 8..i * 8 + 8].try_into().unwrap());
        out.push(IdxEntry {
            offset: f(0),
            packet_bits: f(1),
            content_bits: f(2),
            ts_begin: f(3),
            ts_end: f(4),
            events_discarded: f(5),
            stream_id: f(6),
            instance_id: (fields == 9).then(|| f(7)),
            seq_num: (fields == 9).then(|| f(8)),
        });
    }
    Some(out)
}

/// The `.idx` path LTTng writes for a stream file.
pub fn idx_path(stream_file: &Path) -> Option<PathBuf> {
    let dir = stream_file.parent()?;
    let mut name = stream_file.file_name()?.to_os_string();
    name.push(".idx");
    Some(dir.join("index").join(name))
}

/// Builds the index from an LTTng `.idx` file if it is consistent with the
/// stream file: packets contiguous from offset 0 to the end of the file,
/// sizes sane, and the first packet's header and context agreeing with its
/// entry. Returns `None` otherwise (the caller then scans the file).
pub(crate) fn index_from_idx(
    trace: &CompiledTrace,
    file: u32,
    data: &[u8],
    idx_bytes: &[u8],
) -> Option<FileIndex> {
    let entries = parse_idx(idx_bytes)?;
    let len = data.len() as u64;
    let mut expect = 0u64;
    for e in &entries {
        if e.offset != expect
            || e.packet_bits == 0
            || e.packet_bits % 8 != 0
            || e.content_bits > e.packet_bits
            || e.packet_bits / 8 > u32::MAX as u64
        {
            return None;
        }
        expect = e.offset.checked_add(e.packet_bits / 8)?;
        if expect > len {
            return None;
        }
    }
    if expect != len {
        return None;
    }
    // Cross-check the first packet with its real header and context.
    let first = entries.first()?;
    let mut st = DecodeState::new(0);
    let mut values = Vec::new();
    let (ps, sc) = decode_packet_start(trace, data, 0, &mut st, &mut values).ok()?;
    let i = ps.info;
    if i.size * 8 != first.packet_bits
        || i.content_bits != first.content_bits
        || i.stream_class != first.stream_id
        || i.ts_begin.is_some_and(|t| t != first.ts_begin)
        || i.ts_end.is_some_and(|t| t != first.ts_end)
    {
        return None;
    }
    let conv = sc.conv;
    let packets = entries
        .iter()
        .map(|e| {
            // Trust the packet context for which fields exist: the index
            // stores zeros for fields the packet context lacks.
            PacketInfo {
                file,
                offset: e.offset,
                size: e.packet_bits / 8,
                content_bits: e.content_bits,
                stream_class: e.stream_id,
                instance_id: e
                    .instance_id
                    .filter(|_| i.instance_id.is_some())
                    .or(i.instance_id),
                ts_begin: i.ts_begin.map(|_| e.ts_begin),
                ts_end: i.ts_end.map(|_| e.ts_end),
                begin_ns: i.ts_begin.and(conv.and_then(|c| c.to_ns(e.ts_begin))),
                // An end before the beginning is no end (see `packet`).
                end_ns: i
                    .ts_end
                    .filter(|_| e.ts_end >= e.ts_begin)
                    .and(conv.and_then(|c| c.to_ns(e.ts_end))),
                events_discarded: i.events_discarded.map(|_| e.events_discarded),
                seq_num: i.seq_num.and(e.seq_num),
                cpu_id: None,
            }
        })
        .collect();
    Some(FileIndex {
        packets,
        error: None,
        from_lttng_index: true,
    })
}

/// Indexes a stream file: from its LTTng `.idx` when valid, else by
/// scanning the packet headers.
pub(crate) fn index_file(trace: &CompiledTrace, file: u32, path: &Path, data: &[u8]) -> FileIndex {
    if let Some(idx) = idx_path(path) {
        if let Ok(bytes) = std::fs::read(&idx) {
            if let Some(fi) = index_from_idx(trace, file, data, &bytes) {
                return fi;
            }
        }
    }
    scan_file(trace, file, path, data)
}
