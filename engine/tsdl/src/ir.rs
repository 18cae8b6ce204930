//! The resolved trace class: what the metadata describes, after type
//! aliases, typedefs and field paths have been resolved.
//!
//! Both metadata readers produce a [`TraceClass`]: the TSDL one (CTF 1.8)
//! and the JSON one (CTF 2, [`crate::ctf2`]); the stream decoder consumes
//! it. Nothing here refers back to TSDL or JSON syntax. The few CTF 2
//! notions without a CTF 1.8 counterpart are optional extras: a field's
//! [`Role`], variable-length integers ([`IntegerType::varlen`]) and
//! variants that select by integer ranges ([`VariantType::selector_ranges`]).

use std::collections::BTreeMap;
use std::sync::Arc;

/// Byte order of a field or of the whole trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Most significant byte first (`be`, `network`).
    Big,
    /// Least significant byte first (`le`).
    Little,
}

/// Text encoding attached to an integer or string type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// Not text.
    #[default]
    None,
    /// UTF-8 text.
    Utf8,
    /// ASCII text.
    Ascii,
}

/// Preferred display base of an integer (`base = 2/8/10/16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DisplayBase {
    /// Base 2.
    Binary,
    /// Base 8.
    Octal,
    /// Base 10 (the default).
    #[default]
    Decimal,
    /// Base 16.
    Hexadecimal,
}

/// `integer { ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IntegerType {
    /// Size in bits, 1..=64.
    pub size: u32,
    /// Alignment in bits (a power of two, >= 1).
    pub align: u32,
    /// Two's complement signed.
    pub signed: bool,
    /// Resolved byte order (`native` is replaced by the trace's byte order).
    pub byte_order: ByteOrder,
    /// Preferred display base.
    pub base: DisplayBase,
    /// Text encoding (an integer with an encoding, in an array/sequence, is text).
    pub encoding: Encoding,
    /// Name of the clock this integer maps to (`map = clock.NAME.value`).
    pub mapped_clock: Option<String>,
    /// Encoded as a variable-length integer (CTF 2, unsigned or signed
    /// LEB128) rather than on `size` bits; `size` is then 64, the range
    /// of the decoded value, and `align` 8.
    pub varlen: bool,
    /// What the field means to the reader (CTF 2 `roles`); `None` in CTF
    /// 1.8, where the meaning comes from the field's name.
    pub role: Option<Role>,
}

/// The meaning of an integer field, from its CTF 2 class's `roles`.
///
/// CTF 1.8 readers infer the same meanings from the names LTTng gives
/// (`magic`, `stream_id`, `content_size`, ...); CTF 2 states them, and a
/// field may have any name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `packet-magic-number` (packet header): must be 0xC1FC1FC1.
    PacketMagicNumber,
    /// `data-stream-class-id` (packet header).
    DataStreamClassId,
    /// `data-stream-id` (packet header): the stream instance id.
    DataStreamId,
    /// `packet-total-length` (packet context): packet size in bits.
    PacketTotalLength,
    /// `packet-content-length` (packet context): content size in bits.
    PacketContentLength,
    /// `default-clock-timestamp`: updates the stream's default clock.
    DefaultClockTimestamp,
    /// `packet-end-default-clock-timestamp` (packet context).
    PacketEndDefaultClockTimestamp,
    /// `discarded-event-record-counter-snapshot` (packet context).
    DiscardedEventRecordCounterSnapshot,
    /// `packet-sequence-number` (packet context).
    PacketSequenceNumber,
    /// `event-record-class-id` (event record header).
    EventRecordClassId,
}

/// `floating_point { ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FloatType {
    /// Exponent digits (8 for single, 11 for double).
    pub exp_dig: u32,
    /// Mantissa digits including the implicit bit (24 for single, 53 for double).
    pub mant_dig: u32,
    /// Alignment in bits.
    pub align: u32,
    /// Resolved byte order.
    pub byte_order: ByteOrder,
}

impl FloatType {
    /// Total size in bits.
    pub fn size(&self) -> u32 {
        self.exp_dig + self.mant_dig
    }
}

/// One label of an enumeration, with the inclusive value ranges it covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EnumMapping {
    /// The label.
    pub label: String,
    /// Inclusive ranges `(low, high)`; values are widened to i128 so that
    /// signed and unsigned 64-bit containers share one representation.
    pub ranges: Vec<(i128, i128)>,
}

/// `enum : container { ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EnumType {
    /// The integer container type.
    pub container: IntegerType,
    /// Mappings in declaration order.
    pub mappings: Vec<EnumMapping>,
}

impl EnumType {
    /// Labels whose ranges contain `value`, in declaration order.
    pub fn labels_for(&self, value: i128) -> impl Iterator<Item = &str> {
        self.mappings
            .iter()
            .filter(move |m| m.ranges.iter().any(|&(lo, hi)| lo <= value && value <= hi))
            .map(|m| m.label.as_str())
    }
}

/// A named member of a structure or variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedField {
    /// Field name as written in TSDL metadata (LTTng's `_` prefix kept);
    /// a CTF 2 name that starts with `_` gets a second one, so that
    /// removing the TSDL escape gives the CTF 2 name back.
    pub name: String,
    /// Field type.
    pub ty: FieldType,
}

/// `struct { ... } align(N)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StructType {
    /// Members in declaration order.
    pub fields: Vec<NamedField>,
    /// Minimum alignment in bits from `align(N)` (1 when absent). The
    /// effective alignment is the max of this and the members' alignments.
    pub min_align: u32,
}

/// The six dynamic scopes of CTF 1.8, in decoding order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `trace.packet.header`
    PacketHeader,
    /// `stream.packet.context`
    PacketContext,
    /// `stream.event.header`
    EventHeader,
    /// `stream.event.context`
    StreamEventContext,
    /// `event.context`
    EventContext,
    /// `event.fields`
    EventPayload,
}

/// A resolved reference to an earlier field, used as a variant tag or a
/// sequence length. `path` indexes into nested structures starting at the root
/// structure of `scope`: `[2, 0]` is member 0 of the struct that is member 2
/// of the scope's root. Array/sequence elements are crossed transparently
/// (the reference is to the element being decoded, the innermost one).
/// Variants along the path are crossed by option index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldPath {
    /// The scope whose root structure the path starts from.
    pub scope: Scope,
    /// Member indices from the scope root down to the target.
    pub path: Vec<usize>,
}

/// `variant <tag> { ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VariantType {
    /// The tag field (an enumeration) as written, e.g. `id` or `stream.event.header.id`.
    pub tag_name: String,
    /// The resolved tag field.
    pub tag: FieldPath,
    /// Options; each option's name is matched against the tag's enum
    /// labels, unless `selector_ranges` gives the option's values.
    pub options: Vec<NamedField>,
    /// CTF 2: for each option, the inclusive ranges of selector values
    /// that select it (the selector is then any integer, enumeration or
    /// not). `None` in CTF 1.8.
    pub selector_ranges: Option<Vec<Vec<(i128, i128)>>>,
}

impl VariantType {
    /// Index of the option selected by the tag label `label`: the option
    /// named exactly `label`, else the one named `_label` (LTTng prefixes
    /// payload field names with `_` but not the enum labels).
    pub fn option_index(&self, label: &str) -> Option<usize> {
        self.options
            .iter()
            .position(|o| o.name == label)
            .or_else(|| {
                self.options
                    .iter()
                    .position(|o| o.name.strip_prefix('_') == Some(label))
            })
    }
}

/// Fixed-length array `type name[N]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrayType {
    /// Element type.
    pub element: Box<FieldType>,
    /// Number of elements.
    pub length: u64,
}

/// Sequence `type name[length_field]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SequenceType {
    /// Element type.
    pub element: Box<FieldType>,
    /// The length field as written.
    pub length_name: String,
    /// The resolved length field (an unsigned integer).
    pub length: FieldPath,
}

/// Any CTF 1.8 field type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// Integer.
    Integer(IntegerType),
    /// Floating point.
    Float(FloatType),
    /// Null-terminated string.
    String(Encoding),
    /// Enumeration.
    Enum(EnumType),
    /// Structure.
    Struct(StructType),
    /// Variant.
    Variant(VariantType),
    /// Fixed-length array.
    Array(ArrayType),
    /// Sequence.
    Sequence(SequenceType),
}

impl FieldType {
    /// Alignment in bits of this type (CTF 1.8 §4: structures align to
    /// their most-aligned member, arrays and sequences to their element,
    /// strings to 8, variants to nothing themselves).
    pub fn align(&self) -> u32 {
        match self {
            FieldType::Integer(i) => i.align,
            FieldType::Float(f) => f.align,
            FieldType::String(_) => 8,
            FieldType::Enum(e) => e.container.align,
            FieldType::Struct(s) => s
                .fields
                .iter()
                .map(|f| f.ty.align())
                .fold(s.min_align.max(1), u32::max),
            FieldType::Variant(_) => 1,
            FieldType::Array(a) => a.element.align(),
            FieldType::Sequence(s) => s.element.align(),
        }
    }

    /// The structure, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            FieldType::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// `clock { ... }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockClass {
    /// Clock name.
    pub name: String,
    /// Frequency in Hz (default 1e9).
    pub freq: u64,
    /// Offset in seconds from the origin.
    pub offset_s: i64,
    /// Offset in cycles, added to `offset_s`.
    pub offset: i64,
    /// Precision in cycles.
    pub precision: u64,
    /// The clock is absolute (comparable across traces).
    pub absolute: bool,
    /// UUID, if given.
    pub uuid: Option<[u8; 16]>,
    /// Description, if given.
    pub description: Option<String>,
}

impl ClockClass {
    /// Converts a cycle count of this clock to nanoseconds from its origin,
    /// offsets included, as babeltrace2 does (saturating at the i64 range).
    pub fn cycles_to_ns(&self, cycles: u64) -> i64 {
        let freq = self.freq.max(1) as i128;
        let total_cycles = self.offset as i128 + cycles as i128;
        let ns = self.offset_s as i128 * 1_000_000_000 + total_cycles * 1_000_000_000 / freq;
        ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }
}

/// One event class (`event { ... }`).
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// Numeric id, unique within the stream class.
    pub id: u64,
    /// Event name.
    pub name: String,
    /// Owning stream class id.
    pub stream_id: u64,
    /// `loglevel`, if given.
    pub loglevel: Option<i64>,
    /// `model.emf.uri`, if given.
    pub emf_uri: Option<String>,
    /// `context := struct {...}` (event-specific context). Shared by the
    /// event classes of a trace whose contexts are identical.
    pub context: Option<Arc<FieldType>>,
    /// `fields := struct {...}` (payload). Shared by the event classes of
    /// a trace whose payloads are identical (LTTng's repeat the same
    /// structures: one copy each, not one per event class).
    pub payload: Option<Arc<FieldType>>,
}

/// One stream class (`stream { ... }`).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// Stream class id (0 when the metadata gives none).
    pub id: u64,
    /// `packet.context`.
    pub packet_context: Option<FieldType>,
    /// `event.header`.
    pub event_header: Option<FieldType>,
    /// `event.context`.
    pub event_context: Option<FieldType>,
    /// Event classes by id.
    pub events: BTreeMap<u64, Arc<EventClass>>,
}

/// A `callsite { ... }` block (kept for completeness; not used in decoding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callsite {
    /// Event name.
    pub name: String,
    /// Function.
    pub func: String,
    /// Instruction pointer.
    pub ip: u64,
    /// Source file.
    pub file: String,
    /// Source line.
    pub line: u64,
}

/// An `env` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// Integer value.
    Int(i64),
    /// String value.
    Str(String),
}

/// The whole resolved trace class.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceClass {
    /// Metadata major version (1).
    pub major: u64,
    /// Metadata minor version (8).
    pub minor: u64,
    /// Trace UUID, if given.
    pub uuid: Option<[u8; 16]>,
    /// CTF 2: the trace class's unique id (`uid`, any string), which
    /// babeltrace2 2.1 shows instead of the UUID; `None` in CTF 1.8.
    pub uid: Option<String>,
    /// Native byte order of the trace.
    pub byte_order: ByteOrder,
    /// `trace.packet.header`.
    pub packet_header: Option<FieldType>,
    /// `env { ... }` in declaration order.
    pub env: Vec<(String, EnvValue)>,
    /// Clocks in declaration order.
    pub clocks: Vec<ClockClass>,
    /// Stream classes by id.
    pub streams: BTreeMap<u64, StreamClass>,
    /// Callsites.
    pub callsites: Vec<Callsite>,
}

impl TraceClass {
    /// The clock with this name.
    pub fn clock(&self, name: &str) -> Option<&ClockClass> {
        self.clocks.iter().find(|c| c.name == name)
    }
}
