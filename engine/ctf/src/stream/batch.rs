//! Decoding a whole packet at once into a [`Batch`]: the packet header and
//! context values followed by every event's values, plus one small record
//! per event. Packets whose context has a full 64-bit `timestamp_begin`
//! are independent of each other, so batches can be decoded ahead on
//! other threads (the merge's prefetching); the stream reader then only
//! walks records.

use crate::decode::clock::ClockConv;
use crate::decode::plan::{exec, FastEvents, Plan};
use crate::decode::{run, DecodeState, Program};
use crate::error::{CorruptKind, DecodeError, ReadError};
use crate::event::{EvRec, FieldValue, NO_NS};
use crate::schema::CompiledTrace;
use crate::stream::packet::{decode_packet_start, PacketInfo};
use crate::stream::StreamData;

/// A batch stops taking events beyond this many values.
const MAX_BATCH_VALUES: usize = 1 << 22;

/// The decoded packet.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub(crate) stream: usize,
    pub(crate) packet: usize,
    /// Packet header and context values, then the events' values.
    pub(crate) values: Vec<FieldValue>,
    pub(crate) header_values: u32,
    pub(crate) context_values: u32,
    /// The packet properties as decoded from the packet itself.
    pub(crate) info: PacketInfo,
    pub(crate) events: Vec<EvRec>,
    /// Index in its packet of the first event of `events`.
    pub(crate) first_index: u64,
    /// Damage found after `events` (the stream stops there).
    pub(crate) error: Option<ReadError>,
    /// The clock before the packet header, and after the packet's end
    /// (`timestamp_end` unless that would go backwards).
    pub(crate) clock_before_packet: u64,
    pub(crate) end_clock: u64,
    /// Byte range of the packet content in its file map.
    pub(crate) start: usize,
    pub(crate) content_end: usize,
    /// The batch starts at the packet's first event (not a continuation or
    /// a restored position): lost-records messages are due.
    pub(crate) packet_start: bool,
    /// The packet header and context decoded fine (`info` is valid).
    pub(crate) packet_ok: bool,
    /// Where the packet continues when the batch stopped at its event limit.
    pub(crate) next: Option<Resume>,
}

/// Where to start decoding in a packet (a restored position), instead of
/// its first event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resume {
    pub(crate) offset_bits: u64,
    pub(crate) event_index: u64,
    pub(crate) clock: u64,
}

impl Batch {
    fn reset(&mut self, stream: usize, packet: usize) {
        self.stream = stream;
        self.packet = packet;
        self.values.clear();
        self.events.clear();
        self.first_index = 0;
        self.header_values = 0;
        self.context_values = 0;
        self.info = PacketInfo::default();
        self.error = None;
        self.start = 0;
        self.content_end = 0;
        self.packet_start = false;
        self.packet_ok = false;
        self.next = None;
    }
}

/// Runs `prog` through its fast-path `plan` when it has one, falling back
/// to the general interpreter (from the same state) when the plan fails:
/// the result is always that of [`run`].
#[inline(always)]
fn run_fast(
    prog: &Program,
    plan: Option<&Plan>,
    bytes: &[u8],
    pos: u64,
    st: &mut DecodeState,
    out: &mut Vec<FieldValue>,
) -> Result<u64, DecodeError> {
    if let Some(plan) = plan {
        let (len, clock, event_id) = (out.len(), st.clock, st.event_id);
        if let Some(end) = exec(plan, bytes, pos, st, out) {
            return Ok(end);
        }
        out.truncate(len);
        st.clock = clock;
        st.event_id = event_id;
    }
    run(prog, bytes, pos, st, out)
}

/// Decodes the byte-aligned events ([`FastEvents`]) from bit `pos` of
/// `bytes` into `b`, up to the first event it does not take, bit `end`,
/// or the batch's bounds; returns the bit after the last event taken.
///
/// Apart from [`decode_batch`]: in a loop of its own, fewer of the values
/// it needs are spilled to the stack and reloaded (4 % fewer instructions
/// for a whole decode of ust_uid_discard).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn fast_events(
    fast: &FastEvents,
    bytes: &[u8],
    mut pos: u64,
    end: u64,
    max_events: usize,
    to_ns: &impl Fn(u64) -> i64,
    st: &mut DecodeState,
    b: &mut Batch,
) -> u64 {
    // Records written into the spare capacity, the length set once at the
    // end (`push` stores the length and reloads the buffer every time).
    let first = b.events.len();
    let room = max_events.saturating_sub(first);
    b.events.reserve(room);
    let Some(slots) = b.events.spare_capacity_mut().get_mut(..room) else {
        return pos;
    };
    let mut n = 0;
    for slot in slots {
        if pos >= end || b.values.len() >= MAX_BATCH_VALUES {
            break;
        }
        let clock_before = st.clock;
        let h = b.values.len() as u32;
        let Some(ev) = fast.decode(bytes, pos, st, &mut b.values) else {
            break;
        };
        slot.write(EvRec {
            id: ev.class_id,
            bounds: [
                h,
                ev.marks[0],
                ev.marks[1],
                ev.marks[2],
                b.values.len() as u32,
            ],
            cycles: ev.cycles,
            ns_or_none: to_ns(ev.cycles),
            offset_bits: pos,
            clock_before,
        });
        n += 1;
        pos = ev.end;
    }
    // SAFETY: the loop wrote the first `n` slots after `first`.
    unsafe { b.events.set_len(first + n) };
    pos
}

/// Decodes packet `packet` of stream `sd` of a trace compiled as `trace`
/// into `b`, the stream clock being `clock` before its header, from its
/// first event or from `resume`, stopping after `max_events` events (then
/// `b.next` tells where to go on). Errors end the batch (`b.error`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_batch(
    trace: &CompiledTrace,
    sd: &StreamData,
    packet: usize,
    clock: u64,
    resume: Option<Resume>,
    max_events: usize,
    st: &mut DecodeState,
    b: &mut Batch,
) {
    b.reset(sd.info.index, packet);
    b.packet_start = resume.is_none();
    let info = sd.packets[packet];
    let map: &[u8] = &sd.maps[info.file as usize];
    let path = &sd.info.files[info.file as usize];
    let corrupt = |offset: u64, kind| ReadError::Corrupt {
        path: path.clone(),
        offset,
        kind,
    };
    st.clock = clock;
    b.clock_before_packet = clock;
    b.end_clock = clock;
    let (start, sc) = match decode_packet_start(trace, map, info.offset, st, &mut b.values) {
        Ok(x) => x,
        Err((at, kind)) => {
            b.error = Some(corrupt(info.offset + at, kind));
            return;
        }
    };
    let si = start.info;
    if sc.id != sd.info.class_id {
        b.error = Some(corrupt(
            info.offset,
            CorruptKind::StreamClassChanged {
                expected: sd.info.class_id,
                found: sc.id,
            },
        ));
        return;
    }
    if si.size != info.size || si.content_bits != info.content_bits {
        // The index (an LTTng .idx) disagrees with the packet itself.
        b.error = Some(corrupt(
            info.offset,
            CorruptKind::BadPacketSize {
                packet_bits: si.size * 8,
                content_bits: si.content_bits,
                header_bits: start.events_bit,
            },
        ));
        return;
    }
    b.info = si;
    b.info.file = info.file;
    b.packet_ok = true;
    b.header_values = start.header_values as u32;
    b.context_values = b.values.len() as u32;
    let s = info.offset as usize;
    let e = s + si.content_bits.div_ceil(8) as usize;
    b.start = s;
    b.content_end = e;
    let bytes = &map[s..e];
    let mut pos = start.events_bit;
    let mut index = 0;
    if let Some(r) = resume {
        if r.offset_bits >= pos && r.offset_bits <= si.content_bits {
            pos = r.offset_bits;
            index = r.event_index;
            st.clock = r.clock;
        }
    }
    b.first_index = index;
    let conv = sc.conv;
    let to_ns = |cycles| conv.and_then(|c| c.to_ns(cycles)).unwrap_or(NO_NS);
    let fast = sc.fast.as_ref();
    while pos < si.content_bits {
        // Bounded batches: `max_events` events, and few enough values that
        // indices into them fit in u32 (one event adds at most
        // `MAX_SCOPE_VALUES`).
        if b.events.len() >= max_events || b.values.len() >= MAX_BATCH_VALUES {
            b.next = Some(Resume {
                offset_bits: pos,
                event_index: index,
                clock: st.clock,
            });
            b.end_clock = st.clock;
            return;
        }
        if let Some(fast) = fast {
            let before = b.events.len();
            let (end, max) = (si.content_bits, max_events);
            // A 1 GHz clock (LTTng's) converts by one checked addition:
            // its own copy of the loop, without the general conversion's
            // tests on every event.
            pos = match conv.and_then(|c| c.ns_base_if_exact()) {
                Some(base) => {
                    let exact = |cycles| ClockConv::exact_to_ns(base, cycles).unwrap_or(NO_NS);
                    fast_events(fast, bytes, pos, end, max, &exact, st, b)
                }
                None => fast_events(fast, bytes, pos, end, max, &to_ns, st, b),
            };
            if b.events.len() > before {
                index += (b.events.len() - before) as u64;
                continue;
            }
        }
        let clock_before = st.clock;
        let h = b.values.len() as u32;
        st.value_base = b.values.len();
        st.event_id = None;
        let after_head = match run_fast(
            &sc.head,
            sc.head_plan.as_ref(),
            bytes,
            pos,
            st,
            &mut b.values,
        ) {
            Ok(p) => p,
            Err(e) => {
                b.values.truncate(h as usize);
                b.error = Some(corrupt(
                    info.offset + e.bit_offset / 8,
                    CorruptKind::Decode(e.kind),
                ));
                break;
            }
        };
        let (header_end, cycles) = st.marks[0];
        let sec_end = b.values.len() as u32;
        let id = st.event_id.or(sc.single_event);
        let Some((class_id, ce)) = id.and_then(|id| sc.events.get(id).map(|ce| (id, ce))) else {
            b.values.truncate(h as usize);
            b.error = Some(corrupt(
                info.offset + pos / 8,
                CorruptKind::UnknownEventClass {
                    stream_class: sc.id,
                    id,
                },
            ));
            break;
        };
        let end = match run_fast(
            &ce.body,
            ce.body_plan.as_ref(),
            bytes,
            after_head,
            st,
            &mut b.values,
        ) {
            Ok(p) => p,
            Err(e) => {
                b.values.truncate(h as usize);
                b.error = Some(corrupt(
                    info.offset + e.bit_offset / 8,
                    CorruptKind::Decode(e.kind),
                ));
                break;
            }
        };
        b.events.push(EvRec {
            id: class_id,
            bounds: [
                h,
                header_end as u32,
                sec_end,
                st.marks[1].0 as u32,
                b.values.len() as u32,
            ],
            cycles,
            ns_or_none: to_ns(cycles),
            offset_bits: pos,
            clock_before,
        });
        pos = end;
        index += 1;
    }
    // Packet end: the clock moves to `timestamp_end` unless that would make
    // it go backwards (babeltrace2's LTTng "event after packet" quirk).
    if b.error.is_none() {
        if let Some(e) = si.ts_end {
            if e >= st.clock {
                st.clock = e;
            }
        }
    }
    b.end_clock = st.clock;
}
