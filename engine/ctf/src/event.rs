//! The decoded-event API: what a reader of the merged message sequence sees.
//!
//! Decoding never builds a tree of owned values. Each of the six CTF scopes
//! (packet header, packet context, event header, stream event context, event
//! context, payload) is decoded into a flat, pre-order slice of
//! [`FieldValue`]s that is walked alongside the scope's [`FieldType`] tree:
//!
//! * a scalar (integer, enumeration, float, string) is one value;
//! * a structure has no value of its own: its members' values follow in
//!   declaration order (its arity comes from the type);
//! * a variant is [`FieldValue::Variant`] (the selected option's index)
//!   followed by that option's values;
//! * an array or sequence is [`FieldValue::Len`] (the element count) followed
//!   by the elements' values, except a *text* array or sequence (elements are
//!   8-bit, byte-aligned integers with an encoding, see [`is_text_element`]),
//!   which is a single [`FieldValue::Str`] like a string.
//!
//! Strings are byte ranges into the packet (`Event::bytes`), so nothing is
//! copied. The buffers holding the values are reused from event to event;
//! an [`Event`] is therefore a short-lived view borrowed from the reader.
//!
//! [`FieldRef`] navigates a scope by name without knowing the layout:
//!
//! ```no_run
//! use traceloom_tsdl::ir::Scope;
//! use traceloom_ctf::{FieldValue, Message, Traceset};
//!
//! let traceset = Traceset::open(&["/path/to/trace".into()])?;
//! let mut cursor = traceset.messages();
//! while let Some(msg) = cursor.next() {
//!     match msg? {
//!         Message::Event(ev) => {
//!             print!("[{:?}] {} (cpu {:?}):", ev.timestamp_ns(), ev.name(), ev.cpu_id());
//!             if let Some(payload) = ev.scope(Scope::EventPayload) {
//!                 for (name, field) in payload.fields() {
//!                     match field.value() {
//!                         Some(FieldValue::UInt(v)) => print!(" {name} = {v}"),
//!                         Some(FieldValue::Str { .. }) => print!(
//!                             " {name} = {:?}",
//!                             String::from_utf8_lossy(field.str_bytes().unwrap_or_default())
//!                         ),
//!                         _ => print!(" {name} = ..."),
//!                     }
//!                 }
//!             }
//!             println!();
//!         }
//!         Message::DiscardedEvents(d) => eprintln!("lost {:?} events", d.count),
//!         Message::DiscardedPackets(d) => eprintln!("lost {:?} packets", d.count),
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::Arc;

use crate::classes::EventTable;
use crate::trace::{StreamInfo, TraceInfo};
use traceloom_tsdl::ir::{
    ClockClass, Encoding, EventClass, FieldType, NamedField, Scope, StreamClass,
};

/// One decoded value of a scope's flat pre-order value list.
///
/// 16 bytes; `Copy`. Enumerations are stored as [`FieldValue::UInt`] or
/// [`FieldValue::SInt`] (per the container's signedness); their labels come
/// from the type ([`traceloom_tsdl::ir::EnumType::labels_for`]).
#[derive(Debug, Clone, Copy, PartialEq)]
// A `u64` tag and 8 bytes of payload in every variant: see `words`.
#[repr(u64)]
pub enum FieldValue {
    /// An unsigned integer or unsigned enumeration.
    UInt(u64),
    /// A signed integer or signed enumeration (sign-extended).
    SInt(i64),
    /// A floating-point number (32-bit floats are widened).
    Float(f64),
    /// A string: `len` bytes starting at byte `start` of the packet
    /// ([`Event::bytes`]). For a null-terminated string the terminator is
    /// excluded; for a text array or sequence the bytes stop before the first
    /// NUL byte (as babeltrace2 prints them).
    Str {
        /// Offset of the first byte from the start of the packet.
        start: u32,
        /// Number of bytes.
        len: u32,
    },
    /// The element count of an array or sequence; the elements' values follow.
    Len(u64),
    /// The index of the selected option of a variant (into
    /// [`traceloom_tsdl::ir::VariantType::options`]); the option's values follow.
    Variant(u64),
}

/// The kinds of [`FieldValue::words`], in their order of declaration.
pub mod value_kind {
    /// [`super::FieldValue::UInt`].
    pub const UINT: u64 = 0;
    /// [`super::FieldValue::SInt`].
    pub const SINT: u64 = 1;
    /// [`super::FieldValue::Float`].
    pub const FLOAT: u64 = 2;
    /// [`super::FieldValue::Str`].
    pub const STR: u64 = 3;
    /// [`super::FieldValue::Len`].
    pub const LEN: u64 = 4;
    /// [`super::FieldValue::Variant`].
    pub const VARIANT: u64 = 5;
}

impl FieldValue {
    /// The value as two machine words: its kind (one of [`value_kind`])
    /// and its payload (a number's 64 bits, a float's bit pattern, a
    /// string's `start | len << 32`). Branch-free, for hashing or folding
    /// values without a jump on each value's kind.
    #[inline(always)]
    pub fn words(self) -> [u64; 2] {
        // SAFETY: `repr(u64)` lays every variant out as a `repr(C)` struct
        // of a `u64` tag then its fields, and every variant's fields are 8
        // bytes without padding (two `u32` for `Str`): all 16 bytes of any
        // value are initialized, and any 16 bytes are a valid `[u64; 2]`.
        unsafe { std::mem::transmute::<FieldValue, [u64; 2]>(self) }
    }

    /// The value as an unsigned integer (signed values are reinterpreted).
    pub fn as_u64(self) -> Option<u64> {
        match self {
            FieldValue::UInt(v) | FieldValue::Len(v) => Some(v),
            FieldValue::SInt(v) => Some(v as u64),
            _ => None,
        }
    }

    /// The value as a signed integer (unsigned values are reinterpreted).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            FieldValue::SInt(v) => Some(v),
            FieldValue::UInt(v) | FieldValue::Len(v) => Some(v as i64),
            _ => None,
        }
    }

    /// The value widened to `i128`, the representation enumeration ranges use.
    pub fn as_i128(self) -> Option<i128> {
        match self {
            FieldValue::SInt(v) => Some(v as i128),
            FieldValue::UInt(v) | FieldValue::Len(v) => Some(v as i128),
            _ => None,
        }
    }
}

/// A field or option name as babeltrace2 shows it: CTF 1.8 lets metadata
/// escape a name with one leading underscore (LTTng writes `_msg_length`,
/// `_intfield`, ...), which is removed (`_x` → `x`, `__x` → `_x`).
pub fn display_name(name: &str) -> &str {
    name.strip_prefix('_').unwrap_or(name)
}

/// Whether an array or sequence whose elements have type `element` is text,
/// i.e. decoded as one [`FieldValue::Str`]: the element is an 8-bit integer
/// (or enumeration container) with an alignment of exactly 8 and an
/// encoding (babeltrace2 2.0's rule, `ctf-meta-update-text-array-sequence`).
pub fn is_text_element(element: &FieldType) -> bool {
    let int = match element {
        FieldType::Integer(i) => i,
        FieldType::Enum(e) => &e.container,
        _ => return false,
    };
    int.size == 8 && int.align == 8 && int.encoding != Encoding::None
}

/// Number of [`FieldValue`]s that the field of type `ty` whose values start
/// at `values[0]` occupies. Returns `values.len()` at most (a truncated slice
/// is never over-read).
pub fn value_span(ty: &FieldType, values: &[FieldValue]) -> usize {
    fn span(ty: &FieldType, values: &[FieldValue], at: usize) -> usize {
        match ty {
            FieldType::Integer(_)
            | FieldType::Float(_)
            | FieldType::String(_)
            | FieldType::Enum(_) => 1,
            FieldType::Struct(s) => {
                let mut n = 0;
                for f in &s.fields {
                    n += span(&f.ty, values, at + n);
                }
                n
            }
            FieldType::Variant(v) => match values.get(at) {
                Some(FieldValue::Variant(i)) => match v.options.get(*i as usize) {
                    Some(opt) => 1 + span(&opt.ty, values, at + 1),
                    None => 1,
                },
                _ => 1,
            },
            FieldType::Array(a) => elements_span(&a.element, values, at),
            FieldType::Sequence(s) => elements_span(&s.element, values, at),
        }
    }
    fn elements_span(element: &FieldType, values: &[FieldValue], at: usize) -> usize {
        if is_text_element(element) {
            return 1;
        }
        let count = match values.get(at) {
            Some(FieldValue::Len(n)) => *n,
            _ => return 1,
        };
        if let Some(w) = fixed_span(element) {
            return 1 + (count as usize).saturating_mul(w);
        }
        let mut n = 1;
        for _ in 0..count {
            if at + n >= values.len() {
                break;
            }
            n += span(element, values, at + n);
        }
        n
    }
    span(ty, values, 0).min(values.len())
}

/// The number of values of a type whose layout does not depend on the data
/// (no variants, sequences or non-text arrays inside), `None` otherwise.
pub fn fixed_span(ty: &FieldType) -> Option<usize> {
    match ty {
        FieldType::Integer(_) | FieldType::Float(_) | FieldType::String(_) | FieldType::Enum(_) => {
            Some(1)
        }
        FieldType::Struct(s) => s.fields.iter().map(|f| fixed_span(&f.ty)).sum(),
        FieldType::Array(a) if is_text_element(&a.element) => Some(1),
        FieldType::Sequence(s) if is_text_element(&s.element) => Some(1),
        FieldType::Array(a) => fixed_span(&a.element)
            .and_then(|w| w.checked_mul(usize::try_from(a.length).ok()?))
            .and_then(|n| n.checked_add(1)),
        FieldType::Sequence(_) | FieldType::Variant(_) => None,
    }
}

/// A field of a decoded scope: its type, its values (starting at this
/// field's first value) and the packet bytes that strings point into.
#[derive(Debug, Clone, Copy)]
pub struct FieldRef<'a> {
    ty: &'a FieldType,
    values: &'a [FieldValue],
    bytes: &'a [u8],
}

impl<'a> FieldRef<'a> {
    /// A view of a field of type `ty` whose values start at `values[0]`;
    /// `bytes` is the packet the string ranges refer to.
    pub fn new(ty: &'a FieldType, values: &'a [FieldValue], bytes: &'a [u8]) -> Self {
        FieldRef { ty, values, bytes }
    }

    /// The field's type.
    pub fn ty(&self) -> &'a FieldType {
        self.ty
    }

    /// The field's values (exactly [`FieldRef::span`] of them).
    pub fn values(&self) -> &'a [FieldValue] {
        &self.values[..self.span()]
    }

    /// The number of values this field occupies.
    pub fn span(&self) -> usize {
        value_span(self.ty, self.values)
    }

    /// The field's first value: the scalar itself, an array/sequence's
    /// [`FieldValue::Len`] (or [`FieldValue::Str`] for text), a variant's
    /// [`FieldValue::Variant`]. `None` for a structure.
    pub fn value(&self) -> Option<FieldValue> {
        match self.ty {
            FieldType::Struct(_) => None,
            _ => self.values.first().copied(),
        }
    }

    /// The bytes of a string or text array/sequence field.
    pub fn str_bytes(&self) -> Option<&'a [u8]> {
        match self.value()? {
            FieldValue::Str { start, len } => str_range(self.bytes, start, len),
            _ => None,
        }
    }

    /// The members of a structure, in declaration order (empty for any
    /// other type), with their names as written in the metadata (see
    /// [`display_name`]).
    pub fn fields(&self) -> StructFields<'a> {
        let members: &'a [NamedField] = match self.ty {
            FieldType::Struct(s) => &s.fields,
            _ => &[],
        };
        StructFields {
            members: members.iter(),
            values: self.values,
            bytes: self.bytes,
        }
    }

    /// The structure member called `name`, as written in the metadata or
    /// as displayed (without its escaping underscore, [`display_name`]);
    /// the first match wins.
    pub fn field(&self, name: &str) -> Option<FieldRef<'a>> {
        self.fields()
            .find(|(n, _)| *n == name || display_name(n) == name)
            .map(|(_, f)| f)
    }

    /// For a variant: the selected option's index, name and field.
    pub fn variant(&self) -> Option<(usize, &'a str, FieldRef<'a>)> {
        let FieldType::Variant(v) = self.ty else {
            return None;
        };
        let Some(FieldValue::Variant(i)) = self.values.first() else {
            return None;
        };
        let opt = v.options.get(*i as usize)?;
        Some((
            *i as usize,
            opt.name.as_str(),
            FieldRef::new(&opt.ty, self.values.get(1..)?, self.bytes),
        ))
    }

    /// For a non-text array or sequence: its elements (empty otherwise).
    pub fn elements(&self) -> Elements<'a> {
        let element = match self.ty {
            FieldType::Array(a) => Some(&*a.element),
            FieldType::Sequence(s) => Some(&*s.element),
            _ => None,
        };
        match (element, self.values.first()) {
            (Some(el), Some(FieldValue::Len(n))) if !is_text_element(el) => Elements {
                element: Some(el),
                remaining: *n,
                values: &self.values[1..],
                bytes: self.bytes,
            },
            _ => Elements {
                element: None,
                remaining: 0,
                values: &[],
                bytes: self.bytes,
            },
        }
    }

    /// For an enumeration: the labels matching the value, in declaration
    /// order (empty for any other type or when no label matches).
    pub fn enum_labels(&self) -> impl Iterator<Item = &'a str> + 'a {
        let (ty, value) = match (self.ty, self.value().and_then(FieldValue::as_i128)) {
            (FieldType::Enum(e), Some(v)) => (Some(e), v),
            _ => (None, 0),
        };
        ty.into_iter().flat_map(move |e| e.labels_for(value))
    }
}

fn str_range(bytes: &[u8], start: u32, len: u32) -> Option<&[u8]> {
    let start = start as usize;
    bytes.get(start..start.checked_add(len as usize)?)
}

/// Iterator over the members of a structure: `(name, field)`.
#[derive(Debug, Clone)]
pub struct StructFields<'a> {
    members: std::slice::Iter<'a, NamedField>,
    values: &'a [FieldValue],
    bytes: &'a [u8],
}

impl<'a> Iterator for StructFields<'a> {
    type Item = (&'a str, FieldRef<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let m = self.members.next()?;
        let f = FieldRef::new(&m.ty, self.values, self.bytes);
        let n = f.span();
        self.values = &self.values[n..];
        Some((m.name.as_str(), f))
    }
}

/// Iterator over the elements of a non-text array or sequence.
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    element: Option<&'a FieldType>,
    remaining: u64,
    values: &'a [FieldValue],
    bytes: &'a [u8],
}

impl<'a> Iterator for Elements<'a> {
    type Item = FieldRef<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let el = self.element?;
        if self.remaining == 0 || self.values.is_empty() {
            return None;
        }
        self.remaining -= 1;
        let f = FieldRef::new(el, self.values, self.bytes);
        let n = f.span();
        self.values = &self.values[n..];
        Some(f)
    }
}

/// Where an event is: enough to come back to it cheaply (the packet index
/// gives the packet's file and offset; decoding restarts at the packet start
/// and skips `event_index` events, or jumps to `offset_bits` with the clock
/// state `clock_cycles`). Positions of one stream order like the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// Stream index in the traceset ([`StreamInfo::index`]).
    pub stream: usize,
    /// Packet index within the stream (all its files' packets numbered
    /// together, in reading order).
    pub packet: usize,
    /// Event index within the packet.
    pub event_index: u64,
    /// Bit offset of the event header from the start of the packet.
    pub offset_bits: u64,
    /// The stream clock's full value just before this event (needed to
    /// rebuild a partial timestamp when resuming at `offset_bits`).
    pub clock_cycles: u64,
}

/// One decoded event: what the decoder records of it beside its values
/// (64 bytes; a batch holds one per event, an [`Event`] refers to one).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EvRec {
    /// Event class id.
    pub(crate) id: u64,
    /// Starts of the event header, stream event context, event context and
    /// payload values, and the end of the payload values, in
    /// `Batch::values`.
    pub(crate) bounds: [u32; 5],
    /// The event's timestamp (clock after its header).
    pub(crate) cycles: u64,
    /// The timestamp in ns, or [`NO_NS`] without a clock or on overflow
    /// (see [`EvRec::ns`]).
    pub(crate) ns_or_none: i64,
    /// Bit offset of the event in its packet.
    pub(crate) offset_bits: u64,
    /// The clock before the event.
    pub(crate) clock_before: u64,
}

/// [`EvRec::ns_or_none`] of an event without a time in ns. No time is
/// `i64::MIN`: a conversion adds a non-negative count of ns to a base
/// above it. (An `Option<i64>` took 8 bytes more per event, and with the
/// index of the event, which is that of the batch's first plus its rank,
/// the record shrank from 80 to 64 bytes: less memory traffic between the
/// decoding threads and the merge.)
pub(crate) const NO_NS: i64 = i64::MIN;

impl EvRec {
    /// The timestamp in ns (`None` without a clock or on overflow).
    #[inline(always)]
    pub(crate) fn ns(&self) -> Option<i64> {
        (self.ns_or_none != NO_NS).then_some(self.ns_or_none)
    }

    /// The event's position, it being event `event_index` of packet
    /// `packet` of stream `stream`.
    #[inline]
    pub(crate) fn position(&self, stream: usize, packet: usize, event_index: u64) -> Position {
        Position {
            stream,
            packet,
            event_index,
            offset_bits: self.offset_bits,
            clock_cycles: self.clock_before,
        }
    }
}

/// What the reader knows about the events of its current batch, besides
/// their values and records: everything that depends only on the stream
/// or the packet, set once per batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventData<'a> {
    pub(crate) trace: &'a TraceInfo,
    pub(crate) stream: &'a StreamInfo,
    pub(crate) stream_class: &'a StreamClass,
    /// The stream class's event classes by id (`None`: the stream's class
    /// is missing from the metadata).
    pub(crate) classes: Option<&'a EventTable<Arc<EventClass>>>,
    pub(crate) clock: Option<&'a ClockClass>,
    /// The packet's bytes: what [`FieldValue::Str`] ranges index.
    pub(crate) packet: &'a [u8],
    /// The packet header is `values[..header_values]`, the packet context
    /// `values[header_values..context_values]`.
    pub(crate) header_values: u32,
    pub(crate) context_values: u32,
    pub(crate) cpu_id: Option<u64>,
    /// Index of the packet in its stream.
    pub(crate) packet_index: usize,
}

/// The class of events whose class is unknown (never shown: the decoder
/// only records events of known classes).
pub(crate) static EMPTY_EVENT_CLASS: EventClass = EventClass {
    id: 0,
    name: String::new(),
    stream_id: 0,
    loglevel: None,
    emf_uri: None,
    context: None,
    payload: None,
};

/// One decoded event: a view borrowed from the reader, valid until the
/// reader advances. Four words (the batch's per-packet data, the event's
/// record, the batch's values); `Copy`. Making one costs nothing: every
/// accessor reads the record or the per-packet data directly.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub(crate) d: &'a EventData<'a>,
    pub(crate) rec: &'a EvRec,
    /// Index of the event in its packet.
    pub(crate) event_index: u64,
    /// The values of the batch: the packet header and context, then every
    /// event's four scopes.
    pub(crate) values: &'a [FieldValue],
}

impl<'a> Event<'a> {
    /// The event class (name, id, loglevel, model.emf.uri, field types).
    #[inline]
    pub fn class(&self) -> &'a EventClass {
        match self.d.classes.and_then(|t| t.get(self.rec.id)) {
            Some(class) => class,
            None => &EMPTY_EVENT_CLASS,
        }
    }

    /// The event name (`event.name` of the metadata).
    pub fn name(&self) -> &'a str {
        &self.class().name
    }

    /// The event class id.
    #[inline]
    pub fn id(&self) -> u64 {
        self.rec.id
    }

    /// The event's `loglevel`, if the metadata gives one.
    pub fn loglevel(&self) -> Option<i64> {
        self.class().loglevel
    }

    /// The stream class.
    pub fn stream_class(&self) -> &'a StreamClass {
        self.d.stream_class
    }

    /// The trace (index in the traceset, path, name, metadata, env).
    pub fn trace(&self) -> &'a TraceInfo {
        self.d.trace
    }

    /// The stream (files, class id, instance id).
    pub fn stream(&self) -> &'a StreamInfo {
        self.d.stream
    }

    /// The clock the event timestamps are in, if the stream has one.
    pub fn clock(&self) -> Option<&'a ClockClass> {
        self.d.clock
    }

    /// The event timestamp in clock cycles (the full 64-bit clock value,
    /// rebuilt from the event header's possibly partial timestamp). `None`
    /// when the stream has no clock.
    #[inline]
    pub fn timestamp_cycles(&self) -> Option<u64> {
        self.d.clock.map(|_| self.rec.cycles)
    }

    /// The event timestamp in nanoseconds from the clock's origin (clock
    /// offsets applied, converted exactly as babeltrace2 does, see
    /// [`crate::decode::clock::ClockConv`]). `None` without a clock or when
    /// the conversion overflows.
    #[inline]
    pub fn timestamp_ns(&self) -> Option<i64> {
        self.rec.ns()
    }

    /// The `cpu_id` of the packet context, when it has one.
    pub fn cpu_id(&self) -> Option<u64> {
        self.d.cpu_id
    }

    /// The type of a scope, `None` when the metadata does not define it.
    pub fn scope_type(&self, scope: Scope) -> Option<&'a FieldType> {
        match scope {
            Scope::PacketHeader => self.d.trace.class.packet_header.as_ref(),
            Scope::PacketContext => self.d.stream_class.packet_context.as_ref(),
            Scope::EventHeader => self.d.stream_class.event_header.as_ref(),
            Scope::StreamEventContext => self.d.stream_class.event_context.as_ref(),
            Scope::EventContext => self.class().context.as_deref(),
            Scope::EventPayload => self.class().payload.as_deref(),
        }
    }

    /// The flat values of a scope (empty when the scope is absent).
    pub fn scope_values(&self, scope: Scope) -> &'a [FieldValue] {
        let [h, s, c, p, e] = self.rec.bounds;
        let (a, b) = match scope {
            Scope::PacketHeader => (0, self.d.header_values),
            Scope::PacketContext => (self.d.header_values, self.d.context_values),
            Scope::EventHeader => (h, s),
            Scope::StreamEventContext => (s, c),
            Scope::EventContext => (c, p),
            Scope::EventPayload => (p, e),
        };
        self.values.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// The values of the four event scopes (event header, stream event
    /// context, event context, payload), one after the other: what
    /// [`Event::scope_values`] gives for each, in one slice, for consumers
    /// that take every value (checksums, copies).
    #[inline]
    pub fn event_values(&self) -> &'a [FieldValue] {
        let [a, .., b] = self.rec.bounds;
        self.values.get(a as usize..b as usize).unwrap_or(&[])
    }

    /// A scope as a navigable field, `None` when the metadata does not
    /// define it.
    pub fn scope(&self, scope: Scope) -> Option<FieldRef<'a>> {
        Some(FieldRef::new(
            self.scope_type(scope)?,
            self.scope_values(scope),
            self.d.packet,
        ))
    }

    /// The bytes of a [`FieldValue::Str`] of this event (`None` for any
    /// other value or an out-of-packet range, which the decoder never makes).
    pub fn bytes(&self, value: FieldValue) -> Option<&'a [u8]> {
        match value {
            FieldValue::Str { start, len } => str_range(self.d.packet, start, len),
            _ => None,
        }
    }

    /// The bytes of the event's packet.
    pub fn packet_bytes(&self) -> &'a [u8] {
        self.d.packet
    }

    /// Where the event is, for saving and restoring a reading position.
    #[inline]
    pub fn position(&self) -> Position {
        self.rec
            .position(self.d.stream.index, self.d.packet_index, self.event_index)
    }
}

/// Index of a scope in six-slot arrays (the order of [`Scope`]).
pub(crate) fn scope_slot(scope: Scope) -> usize {
    match scope {
        Scope::PacketHeader => 0,
        Scope::PacketContext => 1,
        Scope::EventHeader => 2,
        Scope::StreamEventContext => 3,
        Scope::EventContext => 4,
        Scope::EventPayload => 5,
    }
}

/// Records (events or packets) that the tracer lost, as babeltrace2 reports
/// them: between the end of the previous packet and the end of the packet
/// that revealed the loss.
#[derive(Debug, Clone, Copy)]
pub struct Discarded<'a> {
    /// The trace.
    pub trace: &'a TraceInfo,
    /// The stream the records were lost from.
    pub stream: &'a StreamInfo,
    /// The stream's clock, if any.
    pub clock: Option<&'a ClockClass>,
    /// Start of the time range, in clock cycles.
    pub begin_cycles: Option<u64>,
    /// End of the time range, in clock cycles.
    pub end_cycles: Option<u64>,
    /// Start of the time range in ns from the clock's origin.
    pub begin_ns: Option<i64>,
    /// End of the time range in ns from the clock's origin.
    pub end_ns: Option<i64>,
    /// Number of lost records, when known.
    pub count: Option<u64>,
}

/// One message of the merged, time-ordered sequence.
#[derive(Debug, Clone, Copy)]
pub enum Message<'a> {
    /// A decoded event.
    Event(Event<'a>),
    /// The tracer discarded events (ring buffer full).
    DiscardedEvents(&'a Discarded<'a>),
    /// Whole packets are missing (gap in `packet_seq_num`).
    DiscardedPackets(&'a Discarded<'a>),
}

impl<'a> Message<'a> {
    /// The stream the message belongs to.
    pub fn stream(&self) -> &'a StreamInfo {
        match self {
            Message::Event(e) => e.d.stream,
            Message::DiscardedEvents(d) | Message::DiscardedPackets(d) => d.stream,
        }
    }

    /// The trace the message belongs to.
    pub fn trace(&self) -> &'a TraceInfo {
        match self {
            Message::Event(e) => e.d.trace,
            Message::DiscardedEvents(d) | Message::DiscardedPackets(d) => d.trace,
        }
    }

    /// The time the message sorts by, in ns (event timestamp, or the end of a
    /// discarded range... babeltrace2 orders those by their begin time).
    pub fn sort_time_ns(&self) -> Option<i64> {
        match self {
            Message::Event(e) => e.timestamp_ns(),
            Message::DiscardedEvents(d) | Message::DiscardedPackets(d) => d.begin_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceloom_tsdl::ir::{
        ArrayType, ByteOrder, DisplayBase, EnumMapping, EnumType, FieldPath, IntegerType,
        SequenceType, StructType, VariantType,
    };

    fn int(size: u32, signed: bool, encoding: Encoding) -> FieldType {
        FieldType::Integer(IntegerType {
            size,
            align: 8,
            signed,
            byte_order: ByteOrder::Little,
            base: DisplayBase::Decimal,
            encoding,
            mapped_clock: None,
            varlen: false,
            role: None,
        })
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

    fn path(p: &[usize]) -> FieldPath {
        FieldPath {
            scope: Scope::EventPayload,
            path: p.to_vec(),
        }
    }

    /// payload: { tag: enum {A,B}; v: variant<tag> { u32 A; string B; };
    ///            n: u8; seq: struct{u8 x; u8 y;}[n]; txt: char[4]; last: i32 }
    fn sample_type() -> FieldType {
        let tag = FieldType::Enum(EnumType {
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
                    label: "A".into(),
                    ranges: vec![(0, 0)],
                },
                EnumMapping {
                    label: "B".into(),
                    ranges: vec![(1, 1)],
                },
            ],
        });
        strukt(vec![
            named("tag", tag),
            named(
                "v",
                FieldType::Variant(VariantType {
                    selector_ranges: None,
                    tag_name: "tag".into(),
                    tag: path(&[0]),
                    options: vec![
                        named("A", int(32, false, Encoding::None)),
                        named("B", FieldType::String(Encoding::Utf8)),
                    ],
                }),
            ),
            named("n", int(8, false, Encoding::None)),
            named(
                "seq",
                FieldType::Sequence(SequenceType {
                    element: Box::new(strukt(vec![
                        named("x", int(8, false, Encoding::None)),
                        named("y", int(8, false, Encoding::None)),
                    ])),
                    length_name: "n".into(),
                    length: path(&[2]),
                }),
            ),
            named(
                "txt",
                FieldType::Array(ArrayType {
                    element: Box::new(int(8, true, Encoding::Utf8)),
                    length: 4,
                }),
            ),
            named("last", int(32, true, Encoding::None)),
        ])
    }

    #[test]
    fn messages_are_small() {
        // An event message is moved through the cursor and its caller for
        // every event: the lost-records messages are referred to, not
        // carried (they made every message 112 bytes).
        assert!(std::mem::size_of::<Message<'_>>() <= 48);
    }

    #[test]
    fn words_are_kind_and_payload() {
        use value_kind::*;
        assert_eq!(std::mem::size_of::<FieldValue>(), 16);
        let cases = [
            (FieldValue::UInt(7), [UINT, 7]),
            (FieldValue::SInt(-2), [SINT, (-2i64) as u64]),
            (FieldValue::Float(1.5), [FLOAT, 1.5f64.to_bits()]),
            (FieldValue::Str { start: 3, len: 9 }, [STR, 3 | 9 << 32]),
            (FieldValue::Len(u64::MAX), [LEN, u64::MAX]),
            (FieldValue::Variant(2), [VARIANT, 2]),
        ];
        for (v, words) in cases {
            assert_eq!(v.words(), words, "{v:?}");
        }
    }

    #[test]
    fn navigation_follows_the_flat_layout() {
        let ty = sample_type();
        let bytes = b"hello\0abcd";
        let values = [
            FieldValue::UInt(1),
            FieldValue::Variant(1),
            FieldValue::Str { start: 0, len: 5 },
            FieldValue::UInt(2),
            FieldValue::Len(2),
            FieldValue::UInt(10),
            FieldValue::UInt(11),
            FieldValue::UInt(20),
            FieldValue::UInt(21),
            FieldValue::Str { start: 6, len: 4 },
            FieldValue::SInt(-7),
        ];
        let root = FieldRef::new(&ty, &values, bytes);
        assert_eq!(root.span(), values.len());
        let names: Vec<&str> = root.fields().map(|(n, _)| n).collect();
        assert_eq!(names, ["tag", "v", "n", "seq", "txt", "last"]);
        let tag = root.field("tag").unwrap();
        assert_eq!(tag.enum_labels().collect::<Vec<_>>(), ["B"]);
        let (i, name, opt) = root.field("v").unwrap().variant().unwrap();
        assert_eq!((i, name), (1, "B"));
        assert_eq!(opt.str_bytes(), Some(&b"hello"[..]));
        let seq = root.field("seq").unwrap();
        assert_eq!(seq.span(), 5);
        let ys: Vec<u64> = seq
            .elements()
            .map(|e| e.field("y").unwrap().value().unwrap().as_u64().unwrap())
            .collect();
        assert_eq!(ys, [11, 21]);
        assert_eq!(root.field("txt").unwrap().str_bytes(), Some(&b"abcd"[..]));
        assert_eq!(
            root.field("last").unwrap().value(),
            Some(FieldValue::SInt(-7))
        );
        assert!(root.field("nope").is_none());
    }

    #[test]
    fn truncated_values_are_never_over_read() {
        let ty = sample_type();
        let values = [FieldValue::UInt(0), FieldValue::Variant(0)];
        let root = FieldRef::new(&ty, &values, &[]);
        assert!(root.span() <= values.len());
        // Iterating must stop without panicking even though members are missing.
        let n = root.fields().count();
        assert_eq!(n, 6);
    }

    #[test]
    fn text_elements_follow_babeltrace2_rule() {
        assert!(is_text_element(&int(8, false, Encoding::Utf8)));
        assert!(is_text_element(&int(8, true, Encoding::Ascii)));
        assert!(!is_text_element(&int(8, false, Encoding::None)));
        assert!(!is_text_element(&int(16, false, Encoding::Utf8)));
        assert_eq!(fixed_span(&sample_type()), None);
        assert_eq!(
            fixed_span(&FieldType::Array(ArrayType {
                element: Box::new(int(32, false, Encoding::None)),
                length: 3
            })),
            Some(4)
        );
    }
}
