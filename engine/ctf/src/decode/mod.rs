//! Field decoding, the layer below the streams: each scope's [`FieldType`]
//! tree is compiled once into a `Program`, a flat list of `Op`s, and run
//! over the packet bytes to produce the flat pre-order [`FieldValue`] list
//! described in [`crate::event`]. Three paths run a program:
//!
//! * `run`, this module's interpreter: every layout, and every kind of
//!   damage reported with its bit offset;
//! * `plan::exec`: the program re-encoded as a `Plan` of small steps for
//!   the shapes real traces use; it only says whether it succeeded, and on
//!   failure the caller runs the interpreter afresh;
//! * `plan::FastEvents`: byte-aligned events (LTTng's) decoded in one go,
//!   from runs of fields at byte offsets fixed at compile time.
//!
//! The program is the one description of a layout the three share: a plan
//! is compiled from it step for op (same alignments, reads and side
//! effects), the fast layouts from the plans, and property tests check both
//! against the interpreter on random bytes. [`bits`] reads bit fields,
//! [`clock`] does babeltrace2's clock arithmetic.
//!
//! Variant tags and sequence lengths are [`FieldPath`]s to earlier fields.
//! Every referenced field gets a *register*: the op that decodes it also
//! stores its raw value there, and the variant/sequence op reads it back. A
//! field inside an array overwrites its register at each element, which is
//! exactly CTF's "innermost element being decoded" rule.
//!
//! Nothing allocates while decoding once the output vector and the loop
//! stack have grown to their steady-state sizes, and no value is read
//! outside the slice given (the packet up to its content end): a sequence
//! length or string that runs past it is an error carrying the bit offset.

use std::collections::HashMap;

use crate::error::{CompileError, DecodeError, DecodeErrorKind};
use crate::event::{is_text_element, FieldValue};
use bits::{align_up, read_float, read_uint, sign_extend};
use clock::update_clock;
use traceloom_tsdl::ir::{ByteOrder, EnumType, FieldPath, FieldType, IntegerType, Role, Scope};

pub mod bits;
pub mod clock;
pub(crate) mod plan;

/// No register.
pub(crate) const NO_REG: u16 = u16::MAX;

/// The integer is mapped to the stream's clock: decoding it updates the clock.
pub(crate) const FLAG_CLOCK: u8 = 1;
/// The integer is an event-header `id` (babeltrace2's "event class id"
/// meaning: any struct member named `id` at any depth of the event header).
pub(crate) const FLAG_EVENT_ID: u8 = 2;

/// Elements of zero minimum size (empty structures, ...) are bounded by this
/// count so that a corrupted length cannot spin forever.
const MAX_EMPTY_ELEMENTS: u64 = 1 << 20;

/// At most this many values are decoded for one event (256 MiB of
/// values, counted from `DecodeState::value_base`): a huge array of tiny
/// elements that does fit in a huge packet is reported as a bad length
/// rather than exhausting memory.
pub(crate) const MAX_SCOPE_VALUES: u64 = 1 << 24;

/// One compiled decoding step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    /// Byte-aligned unsigned integer of 8, 16, 32 or 64 bits: the common
    /// case, read without bit arithmetic.
    UByte {
        align: u32,
        bytes: u8,
        big: bool,
        flags: u8,
        reg: u16,
    },
    /// Same, signed.
    SByte {
        align: u32,
        bytes: u8,
        big: bool,
        flags: u8,
        reg: u16,
    },
    // Byte-aligned integers without side effect, one variant per width,
    // signedness and byte order so that reading needs no further branch.
    U8 {
        align: u32,
    },
    U16Le {
        align: u32,
    },
    U16Be {
        align: u32,
    },
    U32Le {
        align: u32,
    },
    U32Be {
        align: u32,
    },
    U64Le {
        align: u32,
    },
    U64Be {
        align: u32,
    },
    S8 {
        align: u32,
    },
    S16Le {
        align: u32,
    },
    S16Be {
        align: u32,
    },
    S32Le {
        align: u32,
    },
    S32Be {
        align: u32,
    },
    S64Le {
        align: u32,
    },
    S64Be {
        align: u32,
    },
    /// Records the number of values so far and the clock in mark `slot`
    /// (boundaries between scopes run as one program).
    Mark {
        slot: u8,
    },
    /// Unsigned integer or enumeration.
    UInt {
        align: u32,
        size: u8,
        big: bool,
        flags: u8,
        reg: u16,
    },
    /// Signed integer or enumeration.
    SInt {
        align: u32,
        size: u8,
        big: bool,
        flags: u8,
        reg: u16,
    },
    /// Variable-length unsigned integer (unsigned LEB128, CTF 2), byte
    /// aligned.
    VarUInt {
        flags: u8,
        reg: u16,
    },
    /// Variable-length signed integer (signed LEB128, CTF 2), byte aligned.
    VarSInt {
        flags: u8,
        reg: u16,
    },
    /// 32- or 64-bit float.
    Float {
        align: u32,
        size: u8,
        big: bool,
    },
    /// Null-terminated string.
    String,
    /// Text array of a fixed byte count.
    TextArray {
        len: u64,
    },
    /// Text sequence whose byte count is in a register.
    TextSeq {
        reg: u16,
    },
    /// Array: emits `Len(count)`, runs the body `count` times, then
    /// continues at `end`.
    Array {
        align: u32,
        count: u64,
        end: u32,
        min_bits: u64,
    },
    /// Sequence: like `Array` with the count in a register.
    Seq {
        align: u32,
        reg: u16,
        end: u32,
        min_bits: u64,
    },
    /// End of an array/sequence body starting at `body`.
    LoopEnd {
        body: u32,
    },
    /// Variant: selects an option through `tables[table]` from the tag in
    /// `reg`, emits `Variant(i)` and jumps to the option's ops.
    Variant {
        reg: u16,
        table: u32,
    },
    /// End of a variant option: continue at `to`.
    Jump {
        to: u32,
    },
    /// Align the position (structure alignment).
    Align {
        align: u32,
    },
}

/// Tag value → option index for one variant.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantTable {
    signed: bool,
    /// For small non-negative tags: `direct[tag]` is the option or `u32::MAX`.
    direct: Vec<u32>,
    /// Otherwise: `(low, high, option)` ranges in babeltrace2's order, in
    /// the tag's own representation (two's complement for signed tags).
    ranges: Vec<(u64, u64, u32)>,
    /// Op index where each option's body starts.
    starts: Vec<u32>,
}

impl VariantTable {
    /// The option selected by the tag's raw value.
    #[inline]
    pub(crate) fn select(&self, raw: u64) -> Option<u32> {
        if !self.direct.is_empty() && raw < self.direct.len() as u64 && !self.signed {
            let o = self.direct[raw as usize];
            return (o != u32::MAX).then_some(o);
        }
        if self.signed {
            let v = raw as i64;
            self.ranges
                .iter()
                .find(|&&(lo, hi, _)| lo as i64 <= v && v <= hi as i64)
                .map(|&(_, _, o)| o)
        } else {
            self.ranges
                .iter()
                .find(|&&(lo, hi, _)| lo <= raw && raw <= hi)
                .map(|&(_, _, o)| o)
        }
    }
}

impl VariantTable {
    /// Op index where each option's body starts.
    pub(crate) fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The same table with the option starts mapped through `f` (for a
    /// re-encoding of the program, see [`crate::decode::plan`]).
    pub(crate) fn relocated(&self, f: impl Fn(u32) -> u32) -> VariantTable {
        VariantTable {
            starts: self.starts.iter().map(|&s| f(s)).collect(),
            ..self.clone()
        }
    }
}

/// A compiled scope.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Program {
    ops: Vec<Op>,
    tables: Vec<VariantTable>,
    /// Maximum array nesting, to size the loop stack once.
    max_depth: usize,
    /// A mark to record before the first op / after the last one (instead
    /// of a `Mark` op, when one side of a concatenation is empty).
    pre_mark: Option<u8>,
    post_mark: Option<u8>,
}

impl Program {
    /// The ops.
    pub(crate) fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The variant tables.
    pub(crate) fn tables(&self) -> &[VariantTable] {
        &self.tables
    }

    /// The mark recorded before the first op.
    pub(crate) fn pre_mark(&self) -> Option<u8> {
        self.pre_mark
    }

    /// The mark recorded after the last op.
    pub(crate) fn post_mark(&self) -> Option<u8> {
        self.post_mark
    }

    /// `a`, then a `Mark { slot }`, then `b`, as one program (jump targets
    /// and table indices of `b` relocated).
    pub(crate) fn concat(a: &Program, slot: u8, b: &Program) -> Program {
        if a.ops.is_empty() && a.pre_mark.is_none() && a.post_mark.is_none() {
            return Program {
                pre_mark: Some(slot),
                ..b.clone()
            };
        }
        if b.ops.is_empty() && b.pre_mark.is_none() && b.post_mark.is_none() {
            return Program {
                post_mark: Some(slot),
                ..a.clone()
            };
        }
        let mut ops = a.ops.clone();
        if let Some(m) = a.post_mark {
            ops.push(Op::Mark { slot: m });
        }
        ops.push(Op::Mark { slot });
        if let Some(m) = b.pre_mark {
            ops.push(Op::Mark { slot: m });
        }
        let off = ops.len() as u32;
        let toff = a.tables.len() as u32;
        ops.extend(b.ops.iter().map(|op| match *op {
            Op::Array {
                align,
                count,
                end,
                min_bits,
            } => Op::Array {
                align,
                count,
                end: end + off,
                min_bits,
            },
            Op::Seq {
                align,
                reg,
                end,
                min_bits,
            } => Op::Seq {
                align,
                reg,
                end: end + off,
                min_bits,
            },
            Op::LoopEnd { body } => Op::LoopEnd { body: body + off },
            Op::Jump { to } => Op::Jump { to: to + off },
            Op::Variant { reg, table } => Op::Variant {
                reg,
                table: table + toff,
            },
            other => other,
        }));
        let mut tables = a.tables.clone();
        tables.extend(b.tables.iter().map(|t| VariantTable {
            starts: t.starts.iter().map(|s| s + off).collect(),
            ..t.clone()
        }));
        Program {
            ops,
            tables,
            max_depth: a.max_depth.max(b.max_depth),
            pre_mark: a.pre_mark,
            post_mark: b.post_mark,
        }
    }
}

/// Names of the fields babeltrace2 maps to the trace's only clock when the
/// metadata maps them to none (`auto_map_fields_to_trace_clock_class`).
pub(crate) fn auto_clock_field(scope: Scope, name: &str) -> bool {
    match scope {
        Scope::EventHeader => name == "timestamp",
        Scope::PacketContext => name == "timestamp_begin" || name == "timestamp_end",
        _ => false,
    }
}

/// Mutable decoding state shared by the programs of one stream: registers,
/// the stream clock and the event id of the event being decoded.
#[derive(Debug, Clone, Default)]
pub(crate) struct DecodeState {
    pub(crate) regs: Vec<u64>,
    /// The stream's default clock value (full 64 bits).
    pub(crate) clock: u64,
    /// The last event-header `id` decoded.
    pub(crate) event_id: Option<u64>,
    /// Value counts and clock values recorded by `Op::Mark`.
    pub(crate) marks: [(usize, u64); 2],
    /// Number of values in the output before the current event (for the
    /// per-event value limit).
    pub(crate) value_base: usize,
    loops: Vec<(u32, u64)>,
}

impl DecodeState {
    /// A state with `nregs` registers.
    pub(crate) fn new(nregs: usize) -> Self {
        DecodeState {
            regs: vec![0; nregs],
            clock: 0,
            event_id: None,
            marks: [(0, 0); 2],
            value_base: 0,
            loops: Vec::new(),
        }
    }
}

#[inline(always)]
fn bo_of(big: bool) -> ByteOrder {
    if big {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

/// Runs `prog` over `data` (the packet, cut at its content end) from bit
/// `pos`, appending values to `out`. Returns the bit position after the
/// scope.
pub(crate) fn run(
    prog: &Program,
    data: &[u8],
    mut pos: u64,
    st: &mut DecodeState,
    out: &mut Vec<FieldValue>,
) -> Result<u64, DecodeError> {
    let ops = &prog.ops[..];
    let limit = data.len() as u64 * 8;
    let mut pc = 0usize;
    st.loops.clear();
    if st.loops.capacity() < prog.max_depth {
        st.loops.reserve(prog.max_depth);
    }
    let err = |kind, bit_offset| DecodeError { kind, bit_offset };
    if let Some(slot) = prog.pre_mark {
        st.marks[slot as usize & 1] = (out.len(), st.clock);
    }
    while pc < ops.len() {
        match ops[pc] {
            Op::UByte {
                align,
                bytes,
                big,
                flags,
                reg,
            } => {
                pos = align_up(pos, align as u64);
                let v = read_bytes(data, pos, bytes, big).ok_or_else(|| {
                    err(
                        DecodeErrorKind::OutOfBounds {
                            bits: bytes as u64 * 8,
                        },
                        pos,
                    )
                })?;
                pos += bytes as u64 * 8;
                out.push(FieldValue::UInt(v));
                if reg != NO_REG {
                    st.regs[reg as usize] = v;
                }
                if flags != 0 {
                    side_effects(st, flags, v, bytes as u32 * 8);
                }
            }
            Op::SByte {
                align,
                bytes,
                big,
                flags,
                reg,
            } => {
                pos = align_up(pos, align as u64);
                let raw = read_bytes(data, pos, bytes, big).ok_or_else(|| {
                    err(
                        DecodeErrorKind::OutOfBounds {
                            bits: bytes as u64 * 8,
                        },
                        pos,
                    )
                })?;
                pos += bytes as u64 * 8;
                let v = sign_extend(raw, bytes as u32 * 8);
                out.push(FieldValue::SInt(v));
                if reg != NO_REG {
                    st.regs[reg as usize] = v as u64;
                }
                if flags != 0 {
                    side_effects(st, flags, raw, bytes as u32 * 8);
                }
            }
            Op::U8 { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<1>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 8 }, pos));
                };
                out.push(FieldValue::UInt(u8::from_le_bytes(*a) as u64));
                pos += 8;
            }
            Op::U16Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<2>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 16 }, pos));
                };
                out.push(FieldValue::UInt(u16::from_le_bytes(*a) as u64));
                pos += 16;
            }
            Op::U16Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<2>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 16 }, pos));
                };
                out.push(FieldValue::UInt(u16::from_be_bytes(*a) as u64));
                pos += 16;
            }
            Op::U32Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<4>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 32 }, pos));
                };
                out.push(FieldValue::UInt(u32::from_le_bytes(*a) as u64));
                pos += 32;
            }
            Op::U32Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<4>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 32 }, pos));
                };
                out.push(FieldValue::UInt(u32::from_be_bytes(*a) as u64));
                pos += 32;
            }
            Op::U64Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<8>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 64 }, pos));
                };
                out.push(FieldValue::UInt(u64::from_le_bytes(*a)));
                pos += 64;
            }
            Op::U64Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<8>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 64 }, pos));
                };
                out.push(FieldValue::UInt(u64::from_be_bytes(*a)));
                pos += 64;
            }
            Op::S8 { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<1>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 8 }, pos));
                };
                out.push(FieldValue::SInt(u8::from_le_bytes(*a) as i8 as i64));
                pos += 8;
            }
            Op::S16Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<2>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 16 }, pos));
                };
                out.push(FieldValue::SInt(u16::from_le_bytes(*a) as i16 as i64));
                pos += 16;
            }
            Op::S16Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<2>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 16 }, pos));
                };
                out.push(FieldValue::SInt(u16::from_be_bytes(*a) as i16 as i64));
                pos += 16;
            }
            Op::S32Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<4>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 32 }, pos));
                };
                out.push(FieldValue::SInt(u32::from_le_bytes(*a) as i32 as i64));
                pos += 32;
            }
            Op::S32Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<4>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 32 }, pos));
                };
                out.push(FieldValue::SInt(u32::from_be_bytes(*a) as i32 as i64));
                pos += 32;
            }
            Op::S64Le { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<8>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 64 }, pos));
                };
                out.push(FieldValue::SInt(u64::from_le_bytes(*a) as i64));
                pos += 64;
            }
            Op::S64Be { align } => {
                pos = align_up(pos, align as u64);
                let b = (pos >> 3) as usize;
                let Some(a) = data.get(b..).and_then(|s| s.first_chunk::<8>()) else {
                    return Err(err(DecodeErrorKind::OutOfBounds { bits: 64 }, pos));
                };
                out.push(FieldValue::SInt(u64::from_be_bytes(*a) as i64));
                pos += 64;
            }
            Op::Mark { slot } => {
                st.marks[slot as usize & 1] = (out.len(), st.clock);
            }
            Op::UInt {
                align,
                size,
                big,
                flags,
                reg,
            } => {
                pos = align_up(pos, align as u64);
                let v = read_uint(data, pos, size as u32, bo_of(big))
                    .map_err(|e| err(DecodeErrorKind::OutOfBounds { bits: e.bits }, pos))?;
                pos += size as u64;
                out.push(FieldValue::UInt(v));
                if reg != NO_REG {
                    st.regs[reg as usize] = v;
                }
                if flags != 0 {
                    side_effects(st, flags, v, size as u32);
                }
            }
            Op::SInt {
                align,
                size,
                big,
                flags,
                reg,
            } => {
                pos = align_up(pos, align as u64);
                let raw = read_uint(data, pos, size as u32, bo_of(big))
                    .map_err(|e| err(DecodeErrorKind::OutOfBounds { bits: e.bits }, pos))?;
                pos += size as u64;
                let v = sign_extend(raw, size as u32);
                out.push(FieldValue::SInt(v));
                if reg != NO_REG {
                    st.regs[reg as usize] = v as u64;
                }
                if flags != 0 {
                    side_effects(st, flags, raw, size as u32);
                }
            }
            Op::VarUInt { flags, reg } => {
                pos = align_up(pos, 8);
                let (v, bits) = read_leb128(data, pos, false)
                    .ok_or_else(|| err(DecodeErrorKind::BadVarInt, pos))?;
                pos += bits;
                out.push(FieldValue::UInt(v));
                if reg != NO_REG {
                    st.regs[reg as usize] = v;
                }
                if flags != 0 {
                    side_effects(st, flags, v, 64);
                }
            }
            Op::VarSInt { flags, reg } => {
                pos = align_up(pos, 8);
                let (v, bits) = read_leb128(data, pos, true)
                    .ok_or_else(|| err(DecodeErrorKind::BadVarInt, pos))?;
                pos += bits;
                out.push(FieldValue::SInt(v as i64));
                if reg != NO_REG {
                    st.regs[reg as usize] = v;
                }
                if flags != 0 {
                    side_effects(st, flags, v, 64);
                }
            }
            Op::Float { align, size, big } => {
                pos = align_up(pos, align as u64);
                let v = read_float(data, pos, size as u32, bo_of(big))
                    .map_err(|e| err(DecodeErrorKind::OutOfBounds { bits: e.bits }, pos))?;
                pos += size as u64;
                out.push(FieldValue::Float(v));
            }
            Op::String => {
                pos = align_up(pos, 8);
                let start = (pos / 8) as usize;
                let rest = data.get(start..).unwrap_or(&[]);
                let len = rest
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or_else(|| err(DecodeErrorKind::UnterminatedString, pos))?;
                out.push(FieldValue::Str {
                    start: start as u32,
                    len: len as u32,
                });
                pos += (len as u64 + 1) * 8;
            }
            Op::TextArray { len } => {
                pos = text(data, pos, len, limit, out)?;
            }
            Op::TextSeq { reg } => {
                let len = st.regs[reg as usize];
                pos = text(data, pos, len, limit, out)?;
            }
            Op::Array {
                align,
                count,
                end,
                min_bits,
            } => {
                pos = align_up(pos, align as u64);
                check_count(
                    count,
                    min_bits,
                    pos,
                    limit,
                    out.len().saturating_sub(st.value_base),
                )?;
                out.push(FieldValue::Len(count));
                if count == 0 {
                    pc = end as usize;
                    continue;
                }
                st.loops.push((pc as u32 + 1, count));
            }
            Op::Seq {
                align,
                reg,
                end,
                min_bits,
            } => {
                pos = align_up(pos, align as u64);
                let count = st.regs[reg as usize];
                check_count(
                    count,
                    min_bits,
                    pos,
                    limit,
                    out.len().saturating_sub(st.value_base),
                )?;
                out.push(FieldValue::Len(count));
                if count == 0 {
                    pc = end as usize;
                    continue;
                }
                st.loops.push((pc as u32 + 1, count));
            }
            Op::LoopEnd { body } => {
                // The loop stack cannot be empty here: LoopEnd is only
                // reachable through its Array/Seq op.
                if let Some(top) = st.loops.last_mut() {
                    top.1 -= 1;
                    if top.1 > 0 {
                        pc = body as usize;
                        continue;
                    }
                    st.loops.pop();
                }
            }
            Op::Variant { reg, table } => {
                let t = &prog.tables[table as usize];
                let raw = st.regs[reg as usize];
                let Some(opt) = t.select(raw) else {
                    return Err(err(DecodeErrorKind::NoVariantOption(raw as i64), pos));
                };
                out.push(FieldValue::Variant(u64::from(opt)));
                pc = t.starts[opt as usize] as usize;
                continue;
            }
            Op::Jump { to } => {
                pc = to as usize;
                continue;
            }
            Op::Align { align } => {
                pos = align_up(pos, align as u64);
            }
        }
        pc += 1;
    }
    if let Some(slot) = prog.post_mark {
        st.marks[slot as usize & 1] = (out.len(), st.clock);
    }
    Ok(pos)
}

/// Applies an integer's meaning: clock update and/or event id. babeltrace2
/// feeds the raw (unsigned) bits of the field to both.
#[inline(always)]
pub(crate) fn side_effects(st: &mut DecodeState, flags: u8, raw: u64, size: u32) {
    if flags & FLAG_CLOCK != 0 {
        st.clock = update_clock(st.clock, raw, size);
    }
    if flags & FLAG_EVENT_ID != 0 {
        st.event_id = Some(raw);
    }
}

/// Reads a LEB128 integer at bit position `pos` (a multiple of 8): its
/// value (sign-extended from its last group when `signed`, as raw bits)
/// and its size in bits. `None` when it runs past `data` or needs more
/// than 64 bits (ten bytes, the last holding one value bit).
#[inline]
pub(crate) fn read_leb128(data: &[u8], pos: u64, signed: bool) -> Option<(u64, u64)> {
    let start = (pos >> 3) as usize;
    let bytes = data.get(start..)?;
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        let shift = 7 * i as u32;
        let group = (b & 0x7F) as u64;
        // The tenth group holds bit 63 only; a signed integer's may also
        // repeat its sign in the unused bits.
        if shift == 63 && group > 1 && !(signed && group == 0x7F) {
            return None;
        }
        v |= group << shift;
        if b & 0x80 == 0 {
            let used = shift + 7;
            if signed && used < 64 && b & 0x40 != 0 {
                v |= u64::MAX << used;
            }
            return Some((v, (i as u64 + 1) * 8));
        }
    }
    None
}

/// Reads a byte-aligned integer of `bytes` bytes (1, 2, 4 or 8) at bit
/// position `pos` (a multiple of 8); `None` past the end of `data`.
#[inline(always)]
fn read_bytes(data: &[u8], pos: u64, bytes: u8, big: bool) -> Option<u64> {
    let b = (pos >> 3) as usize;
    let s = data.get(b..b.checked_add(bytes as usize)?)?;
    Some(match (bytes, big) {
        (1, _) => s[0] as u64,
        (2, false) => u16::from_le_bytes([s[0], s[1]]) as u64,
        (2, true) => u16::from_be_bytes([s[0], s[1]]) as u64,
        (4, false) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64,
        (4, true) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64,
        (8, false) => u64::from_le_bytes(s.try_into().ok()?),
        _ => u64::from_be_bytes(s.try_into().ok()?),
    })
}

/// A text array/sequence of `len` bytes at `pos` (aligned on a byte).
#[inline]
fn text(
    data: &[u8],
    pos: u64,
    len: u64,
    limit: u64,
    out: &mut Vec<FieldValue>,
) -> Result<u64, DecodeError> {
    let pos = align_up(pos, 8);
    let bad = DecodeError {
        kind: DecodeErrorKind::BadLength(len),
        bit_offset: pos,
    };
    let bits = len.checked_mul(8).ok_or(bad)?;
    if bits > limit.saturating_sub(pos) {
        return Err(bad);
    }
    let start = (pos / 8) as usize;
    let bytes = &data[start..start + len as usize];
    // babeltrace2 stops a text array at its first NUL.
    let shown = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    out.push(FieldValue::Str {
        start: start as u32,
        len: shown as u32,
    });
    Ok(pos + bits)
}

/// Rejects element counts that cannot fit in what is left of the packet,
/// before anything is decoded or allocated for them.
#[inline]
fn check_count(
    count: u64,
    min_bits: u64,
    pos: u64,
    limit: u64,
    values: usize,
) -> Result<(), DecodeError> {
    let fits = match limit.saturating_sub(pos).checked_div(min_bits) {
        Some(max) => count <= max,
        None => count <= MAX_EMPTY_ELEMENTS,
    } && (values as u64).saturating_add(count) <= MAX_SCOPE_VALUES;
    if fits {
        Ok(())
    } else {
        Err(DecodeError {
            kind: DecodeErrorKind::BadLength(count),
            bit_offset: pos,
        })
    }
}

/// Minimum encoded size of a type in bits (alignment padding excluded).
fn min_bits(ty: &FieldType) -> u64 {
    match ty {
        FieldType::Integer(i) if i.varlen => 8,
        FieldType::Enum(e) if e.container.varlen => 8,
        FieldType::Integer(i) => i.size as u64,
        FieldType::Enum(e) => e.container.size as u64,
        FieldType::Float(f) => f.size() as u64,
        FieldType::String(_) => 8,
        FieldType::Struct(s) => s
            .fields
            .iter()
            .fold(0u64, |acc, f| acc.saturating_add(min_bits(&f.ty))),
        FieldType::Variant(v) => v.options.iter().map(|o| min_bits(&o.ty)).min().unwrap_or(0),
        FieldType::Array(a) => {
            if is_text_element(&a.element) {
                a.length.saturating_mul(8)
            } else {
                a.length.saturating_mul(min_bits(&a.element))
            }
        }
        FieldType::Sequence(_) => 0,
    }
}

/// The alignment applied at the very start of a field of type `ty` by its
/// own first op (1 for variants, whose options align themselves).
fn first_align(ty: &FieldType) -> u32 {
    match ty {
        FieldType::Struct(s) => ty
            .align()
            .max(s.fields.first().map_or(1, |f| first_align(&f.ty))),
        FieldType::Variant(_) => 1,
        FieldType::Array(a) if is_text_element(&a.element) => 8,
        FieldType::Sequence(s) if is_text_element(&s.element) => 8,
        other => other.align().max(1),
    }
}

/// Follows `path` from `root` (arrays and sequences crossed transparently,
/// variants by option index).
pub(crate) fn type_at<'t>(root: &'t FieldType, path: &[usize]) -> Option<&'t FieldType> {
    let mut ty = root;
    for &i in path {
        loop {
            match ty {
                FieldType::Array(a) => ty = &a.element,
                FieldType::Sequence(s) => ty = &s.element,
                _ => break,
            }
        }
        ty = match ty {
            FieldType::Struct(s) => &s.fields.get(i)?.ty,
            FieldType::Variant(v) => &v.options.get(i)?.ty,
            _ => return None,
        };
    }
    Some(ty)
}

/// Collects the field paths that variants and sequences of `ty` refer to.
fn collect_refs(ty: &FieldType, out: &mut Vec<FieldPath>) {
    match ty {
        FieldType::Struct(s) => s.fields.iter().for_each(|f| collect_refs(&f.ty, out)),
        FieldType::Variant(v) => {
            out.push(v.tag.clone());
            v.options.iter().for_each(|o| collect_refs(&o.ty, out));
        }
        FieldType::Array(a) => collect_refs(&a.element, out),
        FieldType::Sequence(s) => {
            out.push(s.length.clone());
            collect_refs(&s.element, out);
        }
        _ => {}
    }
}

/// Register allocation and compilation for the scopes of one stream class
/// (and, layered on top, one event class).
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiler<'t> {
    /// Root types of the six scopes, indexed by [`crate::event::scope_slot`].
    roots: [Option<&'t FieldType>; 6],
    regs: HashMap<(Scope, Vec<usize>), u16>,
    /// Number of registers allocated.
    pub(crate) nregs: usize,
    /// Treat unmapped `timestamp` (event header) and `timestamp_begin` /
    /// `timestamp_end` (packet context) integers as mapped to the stream
    /// clock, as babeltrace2 does when the trace has at most one clock.
    pub(crate) auto_clock: bool,
    /// CTF 2: an integer's meaning (clock, event id) comes from its role,
    /// not from its name.
    pub(crate) roles: bool,
}

impl<'t> Compiler<'t> {
    /// A compiler for the given scope roots. Registers are allocated for
    /// every field referenced from any of them.
    pub(crate) fn new(roots: [Option<&'t FieldType>; 6]) -> Result<Self, CompileError> {
        let mut c = Compiler {
            roots,
            regs: HashMap::new(),
            nregs: 0,
            auto_clock: false,
            roles: false,
        };
        let mut refs = Vec::new();
        for ty in roots.iter().flatten() {
            collect_refs(ty, &mut refs);
        }
        for r in refs {
            c.alloc(r)?;
        }
        Ok(c)
    }

    /// Allocates registers for the fields of this compiler's scopes that
    /// `ty` (an event context or payload compiled later) refers to, so that
    /// the stream-level programs store them.
    pub(crate) fn add_refs_from(&mut self, ty: &FieldType) -> Result<(), CompileError> {
        let mut refs = Vec::new();
        collect_refs(ty, &mut refs);
        for r in refs {
            if !matches!(r.scope, Scope::EventContext | Scope::EventPayload) {
                self.alloc(r)?;
            }
        }
        Ok(())
    }

    /// The same compiler with the event scopes replaced (stream-level
    /// registers keep their numbers; event-level ones are added after).
    pub(crate) fn with_event(
        &self,
        context: Option<&'t FieldType>,
        payload: Option<&'t FieldType>,
    ) -> Result<Self, CompileError> {
        let mut c = self.clone();
        c.roots[4] = context;
        c.roots[5] = payload;
        c.regs
            .retain(|(s, _), _| !matches!(s, Scope::EventContext | Scope::EventPayload));
        let mut refs = Vec::new();
        for ty in [context, payload].into_iter().flatten() {
            collect_refs(ty, &mut refs);
        }
        for r in refs {
            c.alloc(r)?;
        }
        Ok(c)
    }

    fn alloc(&mut self, r: FieldPath) -> Result<(), CompileError> {
        let key = (r.scope, r.path.clone());
        if self.regs.contains_key(&key) {
            return Ok(());
        }
        let root = self.roots[crate::event::scope_slot(r.scope)];
        if root.and_then(|t| type_at(t, &r.path)).is_none() {
            return Err(CompileError::BadPath {
                what: "variant tag or sequence length",
                path: r,
            });
        }
        let n = u16::try_from(self.nregs)
            .ok()
            .filter(|&n| n != NO_REG)
            .ok_or(CompileError::TooLarge)?;
        self.regs.insert(key, n);
        self.nregs += 1;
        Ok(())
    }

    /// Compiles the scope `scope` (its root type as given to `new`).
    pub(crate) fn compile(&self, scope: Scope) -> Result<Program, CompileError> {
        let mut b = Builder {
            c: self,
            scope,
            ops: Vec::new(),
            tables: Vec::new(),
            path: Vec::new(),
            depth: 0,
            max_depth: 0,
        };
        if let Some(ty) = self.roots[crate::event::scope_slot(scope)] {
            b.emit(ty, None, true)?;
        }
        if b.ops.len() >= u32::MAX as usize {
            return Err(CompileError::TooLarge);
        }
        Ok(Program {
            ops: b.ops,
            tables: b.tables,
            max_depth: b.max_depth,
            pre_mark: None,
            post_mark: None,
        })
    }

    fn reg_of(&self, r: &FieldPath) -> Option<u16> {
        self.regs.get(&(r.scope, r.path.clone())).copied()
    }

    fn root_type(&self, r: &FieldPath) -> Option<&'t FieldType> {
        type_at(self.roots[crate::event::scope_slot(r.scope)]?, &r.path)
    }
}

struct Builder<'c, 't> {
    c: &'c Compiler<'t>,
    scope: Scope,
    ops: Vec<Op>,
    tables: Vec<VariantTable>,
    path: Vec<usize>,
    depth: usize,
    max_depth: usize,
}

impl Builder<'_, '_> {
    fn here(&self) -> u32 {
        self.ops.len() as u32
    }

    /// Emits the ops of a field of type `ty`; `name` is its member name
    /// (`None` for array elements and variant options), `root_member` tells
    /// whether it is a direct member of the scope's root structure.
    fn emit(
        &mut self,
        ty: &FieldType,
        name: Option<&str>,
        root_member: bool,
    ) -> Result<(), CompileError> {
        match ty {
            FieldType::Integer(i) => self.int(i, name, root_member),
            FieldType::Enum(e) => self.int(&e.container, name, root_member),
            FieldType::Float(f) => {
                let size = f.size();
                if size != 32 && size != 64 {
                    return Err(CompileError::UnsupportedFloat {
                        exp_dig: f.exp_dig,
                        mant_dig: f.mant_dig,
                    });
                }
                self.ops.push(Op::Float {
                    align: f.align.max(1),
                    size: size as u8,
                    big: f.byte_order == ByteOrder::Big,
                });
                Ok(())
            }
            FieldType::String(_) => {
                self.ops.push(Op::String);
                Ok(())
            }
            FieldType::Struct(s) => {
                // The first member aligns itself; an explicit alignment is
                // needed only when the structure's is larger.
                let align = ty.align();
                let first = s.fields.first().map_or(1, |f| first_align(&f.ty));
                if align > first {
                    self.ops.push(Op::Align { align });
                }
                let is_root = self.path.is_empty() && self.depth == 0 && name.is_none();
                for (i, f) in s.fields.iter().enumerate() {
                    self.path.push(i);
                    self.emit(&f.ty, Some(&f.name), is_root)?;
                    self.path.pop();
                }
                Ok(())
            }
            FieldType::Variant(v) => {
                let reg = self.c.reg_of(&v.tag).ok_or_else(|| CompileError::BadPath {
                    what: "variant tag",
                    path: v.tag.clone(),
                })?;
                let table = match (&v.selector_ranges, self.c.root_type(&v.tag)) {
                    (None, Some(FieldType::Enum(e))) => {
                        build_table(e, v.options.iter().map(|o| &o.name[..]))
                    }
                    // CTF 2: each option lists its selector values.
                    (Some(ranges), Some(FieldType::Enum(EnumType { container: i, .. })))
                    | (Some(ranges), Some(FieldType::Integer(i))) => table_from_ranges(
                        i.signed,
                        ranges
                            .iter()
                            .enumerate()
                            .flat_map(|(o, r)| r.iter().map(move |&(lo, hi)| (lo, hi, o as u32))),
                    ),
                    _ => return Err(CompileError::TagNotEnum(v.tag.clone())),
                };
                let table_idx = self.tables.len() as u32;
                self.tables.push(table);
                self.ops.push(Op::Variant {
                    reg,
                    table: table_idx,
                });
                let mut jumps = Vec::new();
                let mut starts = Vec::new();
                for (i, o) in v.options.iter().enumerate() {
                    starts.push(self.here());
                    self.path.push(i);
                    self.emit(&o.ty, None, false)?;
                    self.path.pop();
                    jumps.push(self.ops.len());
                    self.ops.push(Op::Jump { to: 0 });
                }
                // The last option falls through to the end.
                if let Some(last) = jumps.pop() {
                    self.ops.truncate(last);
                }
                let end = self.here();
                for j in jumps {
                    self.ops[j] = Op::Jump { to: end };
                }
                self.tables[table_idx as usize].starts = starts;
                Ok(())
            }
            FieldType::Array(a) => {
                if is_text_element(&a.element) {
                    self.ops.push(Op::TextArray { len: a.length });
                    return Ok(());
                }
                let at = self.ops.len();
                self.ops.push(Op::Array {
                    align: a.element.align().max(1),
                    count: a.length,
                    end: 0,
                    min_bits: min_bits(&a.element),
                });
                self.body(&a.element)?;
                let end = self.here();
                if let Op::Array { end: e, .. } = &mut self.ops[at] {
                    *e = end;
                }
                Ok(())
            }
            FieldType::Sequence(s) => {
                let reg = self
                    .c
                    .reg_of(&s.length)
                    .ok_or_else(|| CompileError::BadPath {
                        what: "sequence length",
                        path: s.length.clone(),
                    })?;
                match self.c.root_type(&s.length) {
                    Some(FieldType::Integer(_)) | Some(FieldType::Enum(_)) => {}
                    _ => return Err(CompileError::LengthNotInt(s.length.clone())),
                }
                if is_text_element(&s.element) {
                    self.ops.push(Op::TextSeq { reg });
                    return Ok(());
                }
                let at = self.ops.len();
                self.ops.push(Op::Seq {
                    align: s.element.align().max(1),
                    reg,
                    end: 0,
                    min_bits: min_bits(&s.element),
                });
                self.body(&s.element)?;
                let end = self.here();
                if let Op::Seq { end: e, .. } = &mut self.ops[at] {
                    *e = end;
                }
                Ok(())
            }
        }
    }

    /// An array/sequence body followed by its `LoopEnd`.
    fn body(&mut self, element: &FieldType) -> Result<(), CompileError> {
        let body = self.here();
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        self.emit(element, None, false)?;
        self.depth -= 1;
        self.ops.push(Op::LoopEnd { body });
        Ok(())
    }

    fn int(
        &mut self,
        i: &IntegerType,
        name: Option<&str>,
        root_member: bool,
    ) -> Result<(), CompileError> {
        if i.size == 0 || i.size > 64 {
            return Err(CompileError::UnsupportedInt(i.size));
        }
        let mut flags = 0;
        let name = name.map(crate::event::display_name);
        let auto = self.c.auto_clock && name.is_some_and(|n| auto_clock_field(self.scope, n));
        if i.mapped_clock.is_some() || auto {
            // babeltrace2 removes the clock mapping of the packet context's
            // `timestamp_end`: the clock must not jump to the packet end
            // before the packet's events are read.
            let is_ts_end = if self.c.roles {
                i.role == Some(Role::PacketEndDefaultClockTimestamp)
            } else {
                self.scope == Scope::PacketContext && root_member && name == Some("timestamp_end")
            };
            if !is_ts_end {
                flags |= FLAG_CLOCK;
            }
        }
        let is_id = if self.c.roles {
            i.role == Some(Role::EventRecordClassId)
        } else {
            name == Some("id")
        };
        if self.scope == Scope::EventHeader && is_id {
            flags |= FLAG_EVENT_ID;
        }
        let key = (self.scope, self.path.clone());
        let reg = self.c.regs.get(&key).copied().unwrap_or(NO_REG);
        if i.varlen {
            self.ops.push(if i.signed {
                Op::VarSInt { flags, reg }
            } else {
                Op::VarUInt { flags, reg }
            });
            return Ok(());
        }
        let (align, size, big) = (i.align.max(1), i.size as u8, i.byte_order == ByteOrder::Big);
        if align % 8 == 0 && matches!(size, 8 | 16 | 32 | 64) {
            // Aligned on a byte boundary (the alignment is a multiple of 8)
            // and a whole number of bytes.
            let bytes = size / 8;
            if flags == 0 && reg == NO_REG {
                self.ops.push(match (i.signed, size, big) {
                    (false, 8, _) => Op::U8 { align },
                    (false, 16, false) => Op::U16Le { align },
                    (false, 16, true) => Op::U16Be { align },
                    (false, 32, false) => Op::U32Le { align },
                    (false, 32, true) => Op::U32Be { align },
                    (false, _, false) => Op::U64Le { align },
                    (false, _, true) => Op::U64Be { align },
                    (true, 8, _) => Op::S8 { align },
                    (true, 16, false) => Op::S16Le { align },
                    (true, 16, true) => Op::S16Be { align },
                    (true, 32, false) => Op::S32Le { align },
                    (true, 32, true) => Op::S32Be { align },
                    (true, _, false) => Op::S64Le { align },
                    (true, _, true) => Op::S64Be { align },
                });
                return Ok(());
            }
            self.ops.push(if i.signed {
                Op::SByte {
                    align,
                    bytes,
                    big,
                    flags,
                    reg,
                }
            } else {
                Op::UByte {
                    align,
                    bytes,
                    big,
                    flags,
                    reg,
                }
            });
            return Ok(());
        }
        self.ops.push(if i.signed {
            Op::SInt {
                align,
                size,
                big,
                flags,
                reg,
            }
        } else {
            Op::UInt {
                align,
                size,
                big,
                flags,
                reg,
            }
        });
        Ok(())
    }
}

/// Builds the tag → option table of a variant: each option takes the ranges
/// of the tag's mapping with the same label (an option `_x` also matches a
/// label `x`, LTTng's escaping of field names); ranges are tried in option
/// order, as babeltrace2 does.
fn build_table<'a>(tag: &EnumType, options: impl Iterator<Item = &'a str>) -> VariantTable {
    let mut ranges = Vec::new();
    for (oi, name) in options.enumerate() {
        let mapping = tag.mappings.iter().find(|m| m.label == name).or_else(|| {
            let stripped = name.strip_prefix('_')?;
            tag.mappings.iter().find(|m| m.label == stripped)
        });
        if let Some(m) = mapping {
            for &(lo, hi) in &m.ranges {
                ranges.push((lo, hi, oi as u32));
            }
        }
    }
    table_from_ranges(tag.container.signed, ranges.into_iter())
}

/// Builds a tag → option table from `(low, high, option)` ranges, tried
/// in the order given.
fn table_from_ranges(
    signed: bool,
    ranges: impl Iterator<Item = (i128, i128, u32)>,
) -> VariantTable {
    // Ranges outside the container's representable values can never match;
    // clamp the others to it.
    let (min, max) = if signed {
        (i64::MIN as i128, i64::MAX as i128)
    } else {
        (0, u64::MAX as i128)
    };
    let ranges: Vec<(i128, i128, u32)> = ranges
        .filter(|&(lo, hi, _)| lo <= hi && hi >= min && lo <= max)
        .map(|(lo, hi, o)| (lo.max(min), hi.min(max), o))
        .collect();
    // A direct lookup table for the common small non-negative tags.
    let mut direct = Vec::new();
    let max_hi = ranges.iter().map(|r| r.1).max().unwrap_or(-1);
    let min_lo = ranges.iter().map(|r| r.0).min().unwrap_or(0);
    if !signed && min_lo >= 0 && max_hi < 4096 && !ranges.is_empty() {
        direct = vec![u32::MAX; (max_hi + 1) as usize];
        // Earlier ranges win: fill in reverse so they overwrite later ones.
        for &(lo, hi, o) in ranges.iter().rev() {
            for v in lo..=hi {
                direct[v as usize] = o;
            }
        }
    }
    VariantTable {
        signed,
        direct,
        // Two's complement for signed tags, so that they fit in u64.
        ranges: ranges
            .into_iter()
            .map(|(lo, hi, o)| (lo as i64 as u64, hi as i64 as u64, o))
            .collect(),
        starts: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::FieldRef;
    use traceloom_tsdl::ir::{
        ArrayType, DisplayBase, Encoding, EnumMapping, FloatType, NamedField, SequenceType,
        StructType, VariantType,
    };

    pub(crate) fn int(size: u32, align: u32, signed: bool, bo: ByteOrder) -> FieldType {
        FieldType::Integer(IntegerType {
            size,
            align,
            signed,
            byte_order: bo,
            base: DisplayBase::Decimal,
            encoding: Encoding::None,
            mapped_clock: None,
            varlen: false,
            role: None,
        })
    }

    fn u8t() -> FieldType {
        int(8, 8, false, ByteOrder::Little)
    }

    fn named(name: &str, ty: FieldType) -> NamedField {
        NamedField {
            name: name.into(),
            ty,
        }
    }

    fn strukt(fields: Vec<NamedField>) -> FieldType {
        FieldType::Struct(StructType {
            fields,
            min_align: 1,
        })
    }

    fn p(path: &[usize]) -> FieldPath {
        FieldPath {
            scope: Scope::EventPayload,
            path: path.to_vec(),
        }
    }

    fn compile_payload(ty: &FieldType) -> (Program, usize) {
        let c = Compiler::new([None, None, None, None, None, Some(ty)]).unwrap();
        (c.compile(Scope::EventPayload).unwrap(), c.nregs)
    }

    fn decode(ty: &FieldType, data: &[u8]) -> Result<(Vec<FieldValue>, u64), DecodeError> {
        let (prog, nregs) = compile_payload(ty);
        let mut st = DecodeState::new(nregs);
        let mut out = Vec::new();
        let end = run(&prog, data, 0, &mut st, &mut out)?;
        Ok((out, end))
    }

    #[test]
    fn leb128_integers() {
        let u = |b: &[u8]| read_leb128(b, 0, false);
        let s = |b: &[u8]| read_leb128(b, 0, true).map(|(v, n)| (v as i64, n));
        assert_eq!(u(&[0]), Some((0, 8)));
        assert_eq!(u(&[0xE5, 0x8E, 0x26]), Some((624_485, 24)));
        assert_eq!(s(&[0xC0, 0xBB, 0x78]), Some((-123_456, 24)));
        assert_eq!(s(&[0x7F]), Some((-1, 8)));
        let max = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01];
        assert_eq!(u(&max), Some((u64::MAX, 80)));
        let min = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F];
        assert_eq!(s(&min), Some((i64::MIN, 80)));
        // More than 64 bits, unterminated, or past the data: no value.
        let mut big = max;
        big[9] = 0x02;
        assert_eq!(u(&big), None);
        assert_eq!(u(&[0x80; 11]), None);
        assert_eq!(u(&[0x80, 0x80]), None);
        assert_eq!(read_leb128(&[1, 2], 24, false), None);
    }

    #[test]
    fn ctf2_variants_select_by_ranges_on_an_integer() {
        // { sel: u8, v: variant <sel> { a: u8 [0..2, 9], b: u16 [3..8] },
        //   n: varuint }
        let ty = strukt(vec![
            named("sel", u8t()),
            named(
                "v",
                FieldType::Variant(VariantType {
                    tag_name: "sel".into(),
                    tag: p(&[0]),
                    options: vec![
                        named("a", u8t()),
                        named("b", int(16, 8, false, ByteOrder::Little)),
                    ],
                    selector_ranges: Some(vec![vec![(0, 2), (9, 9)], vec![(3, 8)]]),
                }),
            ),
            named(
                "n",
                FieldType::Integer(IntegerType {
                    size: 64,
                    align: 8,
                    signed: false,
                    byte_order: ByteOrder::Little,
                    base: DisplayBase::Decimal,
                    encoding: Encoding::None,
                    mapped_clock: None,
                    varlen: true,
                    role: None,
                }),
            ),
        ]);
        let (out, end) = decode(&ty, &[9, 7, 0xAC, 0x02]).unwrap();
        assert_eq!(
            out,
            vec![
                FieldValue::UInt(9),
                FieldValue::Variant(0),
                FieldValue::UInt(7),
                FieldValue::UInt(300)
            ]
        );
        assert_eq!(end, 32);
        let (out, _) = decode(&ty, &[4, 1, 2, 5]).unwrap();
        assert_eq!(out[1..3], [FieldValue::Variant(1), FieldValue::UInt(0x201)]);
        let e = decode(&ty, &[20, 0, 0, 0]).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::NoVariantOption(20));
        let e = decode(&ty, &[0, 0, 0x80]).unwrap_err();
        assert_eq!((e.kind, e.bit_offset), (DecodeErrorKind::BadVarInt, 16));
    }

    #[test]
    fn scalars_alignment_and_byte_orders() {
        let ty = strukt(vec![
            named("a", int(3, 1, false, ByteOrder::Little)),
            named("b", int(5, 1, true, ByteOrder::Little)),
            named("c", int(16, 16, false, ByteOrder::Big)),
            named("d", int(32, 32, false, ByteOrder::Little)),
            named(
                "f",
                FieldType::Float(FloatType {
                    exp_dig: 8,
                    mant_dig: 24,
                    align: 32,
                    byte_order: ByteOrder::Little,
                }),
            ),
            named("s", FieldType::String(Encoding::Utf8)),
        ]);
        let mut data = vec![0b1111_1101u8, 0, 0x12, 0x34];
        data.extend(7u32.to_le_bytes());
        data.extend(0.5f32.to_le_bytes());
        data.extend(b"hi\0");
        let (v, end) = decode(&ty, &data).unwrap();
        assert_eq!(
            v,
            vec![
                FieldValue::UInt(5),
                FieldValue::SInt(-1),
                FieldValue::UInt(0x1234),
                FieldValue::UInt(7),
                FieldValue::Float(0.5),
                FieldValue::Str { start: 12, len: 2 },
            ]
        );
        assert_eq!(end, 15 * 8);
    }

    fn tag_enum() -> FieldType {
        FieldType::Enum(EnumType {
            container: IntegerType {
                size: 8,
                align: 8,
                signed: false,
                byte_order: ByteOrder::Little,
                base: DisplayBase::Decimal,
                encoding: Encoding::None,
                mapped_clock: None,
                varlen: false,
                role: None,
            },
            mappings: vec![
                EnumMapping {
                    label: "small".into(),
                    ranges: vec![(0, 9)],
                },
                EnumMapping {
                    label: "big".into(),
                    ranges: vec![(10, 10), (20, 30)],
                },
            ],
        })
    }

    fn variant_seq_type() -> FieldType {
        strukt(vec![
            named("tag", tag_enum()),
            named(
                "v",
                FieldType::Variant(VariantType {
                    selector_ranges: None,
                    tag_name: "tag".into(),
                    tag: p(&[0]),
                    options: vec![
                        named("small", u8t()),
                        // LTTng escapes option names with `_`.
                        named("_big", int(32, 32, false, ByteOrder::Little)),
                    ],
                }),
            ),
            named("n", u8t()),
            named(
                "seq",
                FieldType::Sequence(SequenceType {
                    element: Box::new(strukt(vec![named("x", u8t()), named("y", u8t())])),
                    length_name: "n".into(),
                    length: p(&[2]),
                }),
            ),
            named(
                "txt",
                FieldType::Sequence(SequenceType {
                    element: Box::new(FieldType::Integer(IntegerType {
                        size: 8,
                        align: 8,
                        signed: true,
                        byte_order: ByteOrder::Little,
                        base: DisplayBase::Decimal,
                        encoding: Encoding::Utf8,
                        mapped_clock: None,
                        varlen: false,
                        role: None,
                    })),
                    length_name: "n".into(),
                    length: p(&[2]),
                }),
            ),
        ])
    }

    #[test]
    fn variants_sequences_and_text() {
        let ty = variant_seq_type();
        // tag=3 (small) -> u8 option.
        let data = [3u8, 0xAA, 2, 1, 2, 3, 4, b'a', 0];
        let (v, end) = decode(&ty, &data).unwrap();
        assert_eq!(
            v,
            vec![
                FieldValue::UInt(3),
                FieldValue::Variant(0),
                FieldValue::UInt(0xAA),
                FieldValue::UInt(2),
                FieldValue::Len(2),
                FieldValue::UInt(1),
                FieldValue::UInt(2),
                FieldValue::UInt(3),
                FieldValue::UInt(4),
                FieldValue::Str { start: 7, len: 1 },
            ]
        );
        assert_eq!(end, 9 * 8);
        let r = FieldRef::new(&ty, &v, &data);
        assert_eq!(r.span(), v.len());
        // tag=25 (big) -> aligned u32 option; empty sequences.
        let data = [25u8, 0, 0, 0, 9, 0, 0, 0, 0];
        let (v, _) = decode(&ty, &data).unwrap();
        assert_eq!(
            &v[..4],
            &[
                FieldValue::UInt(25),
                FieldValue::Variant(1),
                FieldValue::UInt(9),
                FieldValue::UInt(0)
            ]
        );
        assert_eq!(v[4], FieldValue::Len(0));
        assert_eq!(v[5], FieldValue::Str { start: 9, len: 0 });
        // tag=15 selects nothing.
        let e = decode(&ty, &[15u8, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::NoVariantOption(15));
        assert_eq!(e.bit_offset, 8);
    }

    #[test]
    fn signed_and_wide_variant_tags() {
        let mut tag = tag_enum();
        if let FieldType::Enum(e) = &mut tag {
            e.container.signed = true;
            e.container.size = 16;
            e.mappings[0].ranges = vec![(-5, -1)];
            e.mappings[1].ranges = vec![(0, 10), (30000, 32767)];
        }
        let ty = strukt(vec![
            named("tag", tag),
            named(
                "v",
                FieldType::Variant(VariantType {
                    selector_ranges: None,
                    tag_name: "tag".into(),
                    tag: p(&[0]),
                    options: vec![named("small", u8t()), named("big", u8t())],
                }),
            ),
        ]);
        for (tag, want) in [
            (-3i16, Some(0)),
            (7, Some(1)),
            (31000, Some(1)),
            (-6, None),
            (11, None),
        ] {
            let mut data = tag.to_le_bytes().to_vec();
            data.push(0x42);
            match decode(&ty, &data) {
                Ok((v, _)) => assert_eq!(v[1], FieldValue::Variant(want.unwrap()), "tag {tag}"),
                Err(e) => {
                    assert!(want.is_none(), "tag {tag}: {e}");
                    assert_eq!(e.kind, DecodeErrorKind::NoVariantOption(tag as i64));
                }
            }
        }
    }

    #[test]
    fn absurd_lengths_fail_before_decoding() {
        let ty = variant_seq_type();
        // n = 200 elements of 16 bits cannot fit in 6 remaining bytes.
        let e = decode(&ty, &[1u8, 0, 200, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::BadLength(200));
        assert_eq!(e.bit_offset, 24);
        // A huge sequence of u64 lengths: never allocates.
        let ty = strukt(vec![
            named("n", int(64, 8, false, ByteOrder::Little)),
            named(
                "s",
                FieldType::Sequence(SequenceType {
                    element: Box::new(u8t()),
                    length_name: "n".into(),
                    length: p(&[0]),
                }),
            ),
        ]);
        let e = decode(&ty, &u64::MAX.to_le_bytes()).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::BadLength(u64::MAX));
        // Truncated scalar.
        let e = decode(&ty, &[1, 2, 3]).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::OutOfBounds { bits: 64 });
        assert_eq!(e.bit_offset, 0);
    }

    #[test]
    fn huge_arrays_that_fit_are_still_bounded_in_values() {
        // 2^25 one-bit elements: present in the data, but more values than
        // one event may produce.
        let n = 1u64 << 25;
        let ty = strukt(vec![named(
            "a",
            FieldType::Array(ArrayType {
                element: Box::new(int(1, 1, false, ByteOrder::Little)),
                length: n,
            }),
        )]);
        let data = vec![0u8; (n / 8) as usize];
        let e = decode(&ty, &data).unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::BadLength(n));
        // Just under the limit decodes.
        let ty = strukt(vec![named(
            "a",
            FieldType::Array(ArrayType {
                element: Box::new(int(8, 8, false, ByteOrder::Little)),
                length: 1 << 16,
            }),
        )]);
        let (v, _) = decode(&ty, &vec![1u8; 1 << 16]).unwrap();
        assert_eq!(v.len(), (1 << 16) + 1);
    }

    #[test]
    fn unterminated_string_is_an_error() {
        let ty = strukt(vec![named("s", FieldType::String(Encoding::Utf8))]);
        let e = decode(&ty, b"abc").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::UnterminatedString);
    }

    #[test]
    fn text_array_stops_at_nul_and_arrays_of_ints() {
        let ty = strukt(vec![
            named(
                "t",
                FieldType::Array(ArrayType {
                    element: Box::new(FieldType::Integer(IntegerType {
                        size: 8,
                        align: 8,
                        signed: false,
                        byte_order: ByteOrder::Little,
                        base: DisplayBase::Decimal,
                        encoding: Encoding::Ascii,
                        mapped_clock: None,
                        varlen: false,
                        role: None,
                    })),
                    length: 4,
                }),
            ),
            named(
                "a",
                FieldType::Array(ArrayType {
                    element: Box::new(int(16, 16, false, ByteOrder::Big)),
                    length: 2,
                }),
            ),
        ]);
        let (v, end) = decode(&ty, &[b'o', b'k', 0, b'x', 0, 1, 0, 2]).unwrap();
        assert_eq!(
            v,
            vec![
                FieldValue::Str { start: 0, len: 2 },
                FieldValue::Len(2),
                FieldValue::UInt(1),
                FieldValue::UInt(2)
            ]
        );
        assert_eq!(end, 64);
    }

    #[test]
    fn nested_arrays_with_inner_sequence_use_the_current_element() {
        // struct { struct { u8 n; u8 s[n]; } a[2]; }
        let inner = strukt(vec![
            named("n", u8t()),
            named(
                "s",
                FieldType::Sequence(SequenceType {
                    element: Box::new(u8t()),
                    length_name: "n".into(),
                    length: p(&[0, 0]),
                }),
            ),
        ]);
        let ty = strukt(vec![named(
            "a",
            FieldType::Array(ArrayType {
                element: Box::new(inner),
                length: 2,
            }),
        )]);
        let (v, end) = decode(&ty, &[1, 9, 2, 7, 8]).unwrap();
        assert_eq!(
            v,
            vec![
                FieldValue::Len(2),
                FieldValue::UInt(1),
                FieldValue::Len(1),
                FieldValue::UInt(9),
                FieldValue::UInt(2),
                FieldValue::Len(2),
                FieldValue::UInt(7),
                FieldValue::UInt(8),
            ]
        );
        assert_eq!(end, 40);
        let r = FieldRef::new(&ty, &v, &[]);
        assert_eq!(r.span(), 8);
    }

    #[test]
    fn clock_and_event_id_flags() {
        // LTTng compact event header.
        let clocked = |size| {
            FieldType::Integer(IntegerType {
                size,
                align: 1,
                signed: false,
                byte_order: ByteOrder::Little,
                base: DisplayBase::Decimal,
                encoding: Encoding::None,
                mapped_clock: Some("monotonic".into()),
                varlen: false,
                role: None,
            })
        };
        let hp = |path: &[usize]| FieldPath {
            scope: Scope::EventHeader,
            path: path.to_vec(),
        };
        let mut id_enum = tag_enum();
        if let FieldType::Enum(e) = &mut id_enum {
            e.container.size = 5;
            e.container.align = 1;
            e.mappings = vec![
                EnumMapping {
                    label: "compact".into(),
                    ranges: vec![(0, 30)],
                },
                EnumMapping {
                    label: "extended".into(),
                    ranges: vec![(31, 31)],
                },
            ];
        }
        let header = strukt(vec![
            named("id", id_enum),
            named(
                "v",
                FieldType::Variant(VariantType {
                    selector_ranges: None,
                    tag_name: "id".into(),
                    tag: hp(&[0]),
                    options: vec![
                        named("compact", strukt(vec![named("timestamp", clocked(27))])),
                        named(
                            "extended",
                            strukt(vec![
                                named("id", int(32, 8, false, ByteOrder::Little)),
                                named("timestamp", clocked(64)),
                            ]),
                        ),
                    ],
                }),
            ),
        ]);
        let c = Compiler::new([None, None, Some(&header), None, None, None]).unwrap();
        let prog = c.compile(Scope::EventHeader).unwrap();
        let mut st = DecodeState::new(c.nregs);
        st.clock = 0x1_0000_0000;
        // compact: id = 4, timestamp = 100 (27 bits after 5 bits).
        let word: u32 = 4 | (100 << 5);
        let mut out = Vec::new();
        let end = run(&prog, &word.to_le_bytes(), 0, &mut st, &mut out).unwrap();
        assert_eq!(end, 32);
        assert_eq!(st.event_id, Some(4));
        assert_eq!(st.clock, 0x1_0000_0000 + 100);
        // extended: id = 31 then u32 id = 70000 then u64 timestamp.
        let mut data = vec![31u8];
        data.extend(70000u32.to_le_bytes());
        data.extend(0xDEAD_BEEFu64.to_le_bytes());
        out.clear();
        run(&prog, &data, 0, &mut st, &mut out).unwrap();
        assert_eq!(st.event_id, Some(70000));
        assert_eq!(st.clock, 0xDEAD_BEEF);
        assert_eq!(out[1], FieldValue::Variant(1));
    }

    #[test]
    fn bad_paths_and_types_are_compile_errors() {
        let ty = strukt(vec![named(
            "s",
            FieldType::Sequence(SequenceType {
                element: Box::new(u8t()),
                length_name: "nope".into(),
                length: p(&[5]),
            }),
        )]);
        assert!(Compiler::new([None, None, None, None, None, Some(&ty)]).is_err());
        let ty = strukt(vec![named(
            "f",
            FieldType::Float(FloatType {
                exp_dig: 5,
                mant_dig: 11,
                align: 8,
                byte_order: ByteOrder::Little,
            }),
        )]);
        let c = Compiler::new([None, None, None, None, None, Some(&ty)]).unwrap();
        assert!(matches!(
            c.compile(Scope::EventPayload),
            Err(CompileError::UnsupportedFloat { .. })
        ));
    }

    #[test]
    fn type_at_crosses_arrays() {
        let ty = variant_seq_type();
        assert!(matches!(type_at(&ty, &[3, 1]), Some(FieldType::Integer(_))));
        assert!(matches!(type_at(&ty, &[1, 1]), Some(FieldType::Integer(i)) if i.size == 32));
        assert!(type_at(&ty, &[9]).is_none());
    }
}
