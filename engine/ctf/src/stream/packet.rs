//! Packet framing: decoding a packet's header and context, checking them,
//! and extracting the properties the index and the event reader need.

use crate::decode::{run, DecodeState, Program};
use crate::error::CorruptKind;
use crate::event::{FieldRef, FieldValue};
use crate::schema::{CompiledStream, CompiledTrace};
use traceloom_tsdl::ir::{FieldType, Role};

/// CTF packet magic number.
pub const CTF_MAGIC: u64 = 0xC1FC_1FC1;

/// What the index knows about one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketInfo {
    /// Index of the file in the stream's file list.
    pub file: u32,
    /// Byte offset of the packet in its file.
    pub offset: u64,
    /// Packet size in bytes (`packet_size` / 8, or the rest of the file).
    pub size: u64,
    /// Content size in bits (`content_size`, or the packet size).
    pub content_bits: u64,
    /// Stream class id.
    pub stream_class: u64,
    /// `stream_instance_id`, if recorded.
    pub instance_id: Option<u64>,
    /// `timestamp_begin` in clock cycles.
    pub ts_begin: Option<u64>,
    /// `timestamp_end` in clock cycles.
    pub ts_end: Option<u64>,
    /// `timestamp_begin` in ns from the clock origin.
    pub begin_ns: Option<i64>,
    /// `timestamp_end` in ns from the clock origin.
    pub end_ns: Option<i64>,
    /// `events_discarded` snapshot (a running counter).
    pub events_discarded: Option<u64>,
    /// `packet_seq_num`.
    pub seq_num: Option<u64>,
    /// `cpu_id` of the packet context (unknown when the packet was indexed
    /// from an LTTng `.idx` file).
    pub cpu_id: Option<u64>,
}

/// The decoded header and context of a packet.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PacketStart {
    pub(crate) info: PacketInfo,
    /// Bit offset (from the packet start) where the first event begins.
    pub(crate) events_bit: u64,
    /// Number of values of the packet header in the values vector (the
    /// context's follow).
    pub(crate) header_values: usize,
}

/// The root member `name` of a decoded struct, as an integer.
fn member_u64(root: &FieldRef<'_>, name: &str) -> Option<u64> {
    let f = root.field(name)?;
    match f.ty() {
        FieldType::Integer(_) | FieldType::Enum(_) => f.value()?.as_u64(),
        _ => None,
    }
}

/// The value of the root member meaning `role`: in CTF 2 the member whose
/// class has that role, whatever its name; in CTF 1.8 the member `name`.
fn role_u64(root: &FieldRef<'_>, ctf2: bool, role: Role, name: &str) -> Option<u64> {
    if !ctf2 {
        return member_u64(root, name);
    }
    root.fields().find_map(|(_, f)| {
        let int = match f.ty() {
            FieldType::Integer(i) => i,
            FieldType::Enum(e) => &e.container,
            _ => return None,
        };
        (int.role == Some(role))
            .then(|| f.value()?.as_u64())
            .flatten()
    })
}

/// Checks the `uuid` member of the packet header against the trace's.
fn uuid_matches(root: &FieldRef<'_>, expected: &[u8; 16]) -> bool {
    let Some(f) = root.field("uuid") else {
        return true;
    };
    if let Some(bytes) = f.str_bytes() {
        // Declared as text: compare the raw bytes (up to the first NUL).
        return expected.starts_with(bytes);
    }
    let mut n = 0;
    for (i, e) in f.elements().enumerate() {
        match (e.value().and_then(FieldValue::as_u64), expected.get(i)) {
            (Some(v), Some(&b)) if v == b as u64 => n += 1,
            _ => return false,
        }
    }
    n == 16
}

fn decode_err(e: crate::error::DecodeError) -> (u64, CorruptKind) {
    (e.bit_offset / 8, CorruptKind::Decode(e.kind))
}

/// Runs `prog` as a packet-level scope.
fn run_scope(
    prog: &Program,
    pkt: &[u8],
    pos: u64,
    st: &mut DecodeState,
    values: &mut Vec<FieldValue>,
) -> Result<u64, (u64, CorruptKind)> {
    run(prog, pkt, pos, st, values).map_err(decode_err)
}

/// Decodes the header and context of the packet at `offset` of `file`.
///
/// `values` receives the header's then the context's values; `st` is left
/// with the stream class's registers and clock set by them (the clock is
/// updated by `timestamp_begin` only). `expected` is the stream class of
/// the stream being read, if known. Errors carry the byte offset from the
/// packet start.
pub(crate) fn decode_packet_start<'t>(
    trace: &'t CompiledTrace,
    file: &[u8],
    offset: u64,
    st: &mut DecodeState,
    values: &mut Vec<FieldValue>,
) -> Result<(PacketStart, &'t CompiledStream), (u64, CorruptKind)> {
    let avail = (file.len() as u64).saturating_sub(offset);
    let pkt = &file[offset.min(file.len() as u64) as usize..];
    let class = &trace.class;
    // CTF 2 says what a field means by its role, CTF 1.8 by its name.
    let ctf2 = class.major == 2;
    values.clear();
    st.value_base = 0;

    // 1. Trace-level header decode: magic, uuid and the stream class.
    let (stream_id, instance_id) = match &class.packet_header {
        Some(ty) => {
            if st.regs.len() < trace.header_nregs {
                st.regs.resize(trace.header_nregs, 0);
            }
            run_scope(&trace.packet_header, pkt, 0, st, values)?;
            let root = FieldRef::new(ty, values, pkt);
            if let Some(magic) = role_u64(&root, ctf2, Role::PacketMagicNumber, "magic") {
                if magic != CTF_MAGIC {
                    return Err((0, CorruptKind::BadMagic(magic)));
                }
            }
            if let Some(uuid) = &class.uuid {
                if !uuid_matches(&root, uuid) {
                    return Err((0, CorruptKind::UuidMismatch));
                }
            }
            (
                role_u64(&root, ctf2, Role::DataStreamClassId, "stream_id"),
                role_u64(&root, ctf2, Role::DataStreamId, "stream_instance_id"),
            )
        }
        None => (None, None),
    };
    let sc = trace
        .stream(stream_id)
        .ok_or((0, CorruptKind::UnknownStreamClass(stream_id)))?;

    // 2. Decode again with the stream class's registers (its packet
    //    context or event scopes may refer to header fields), then the
    //    packet context.
    if st.regs.len() < sc.nregs {
        st.regs.resize(sc.nregs, 0);
    }
    values.clear();
    let mut pos = run_scope(&sc.packet_header, pkt, 0, st, values)?;
    let header_values = values.len();
    pos = run_scope(&sc.packet_context, pkt, pos, st, values)?;

    let mut info = PacketInfo {
        stream_class: sc.id,
        instance_id,
        ..PacketInfo::default()
    };
    let mut packet_bits = None;
    let mut content_bits = None;
    if let Some(ty) = trace
        .class
        .streams
        .get(&sc.id)
        .and_then(|s| s.packet_context.as_ref())
    {
        let root = FieldRef::new(ty, &values[header_values..], pkt);
        packet_bits = role_u64(&root, ctf2, Role::PacketTotalLength, "packet_size");
        content_bits = role_u64(&root, ctf2, Role::PacketContentLength, "content_size");
        info.ts_begin = role_u64(&root, ctf2, Role::DefaultClockTimestamp, "timestamp_begin");
        info.ts_end = role_u64(
            &root,
            ctf2,
            Role::PacketEndDefaultClockTimestamp,
            "timestamp_end",
        );
        info.events_discarded = role_u64(
            &root,
            ctf2,
            Role::DiscardedEventRecordCounterSnapshot,
            "events_discarded",
        );
        info.seq_num = role_u64(&root, ctf2, Role::PacketSequenceNumber, "packet_seq_num");
        info.cpu_id = member_u64(&root, "cpu_id");
    }
    // Without `packet_size`, the packet is the rest of the file (and then
    // without `content_size` it is all content).
    let packet_bits = packet_bits.unwrap_or(avail.saturating_mul(8));
    let content_bits = content_bits.unwrap_or(packet_bits);
    if packet_bits % 8 != 0 || packet_bits == 0 || content_bits > packet_bits || pos > content_bits
    {
        return Err((
            0,
            CorruptKind::BadPacketSize {
                packet_bits,
                content_bits,
                header_bits: pos,
            },
        ));
    }
    let size = packet_bits / 8;
    if size > avail {
        return Err((
            0,
            CorruptKind::Truncated {
                size,
                available: avail,
            },
        ));
    }
    if size > u32::MAX as u64 {
        return Err((0, CorruptKind::PacketTooLarge(size)));
    }
    info.offset = offset;
    info.size = size;
    info.content_bits = content_bits;
    if let Some(conv) = &sc.conv {
        info.begin_ns = info.ts_begin.and_then(|c| conv.to_ns(c));
        // A packet end before its beginning is no end: LTTng's crash
        // buffers (lttng-crash) leave `timestamp_end` at 0 in packets
        // that were never closed. Such a packet must not be skipped by a
        // seek as if it ended before the trace began.
        info.end_ns = info
            .ts_end
            .filter(|&e| info.ts_begin.is_none_or(|b| e >= b))
            .and_then(|c| conv.to_ns(c));
    }
    Ok((
        PacketStart {
            info,
            events_bit: pos,
            header_values,
        },
        sc,
    ))
}
