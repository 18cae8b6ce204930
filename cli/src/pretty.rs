//! babeltrace2's `sink.text.pretty` text format, byte for byte.
//!
//! One line per event:
//!
//! ```text
//! [18:51:04.828559410] (+0.000012893) loki ust_tests_hello:tptest: { cpu_id = 2 }, { intfield = 1, ... }
//! ```
//!
//! timestamp, delta from the previous event, trace environment fields
//! (`hostname`, `procname`, `vpid`), event name, then the packet context,
//! stream event context, event context and payload, each a `{ ... }`
//! structure. Discarded events/packets become `WARNING: Tracer discarded ...`
//! lines on standard error.
//!
//! babeltrace2 does not print every field of the metadata: its CTF reader
//! leaves out of its trace IR the integers mapped to a clock and the packet
//! context fields that have a special meaning (`timestamp_begin`,
//! `packet_size`, ...) unless a sequence or variant refers to them, and a
//! scope with nothing left is not printed at all. [`ScopePlan`]s reproduce
//! that selection; it is computed once per stream class.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use traceloom_ctf::event::{is_text_element, value_span, Discarded, Event, FieldValue};
use traceloom_ctf::trace::{StreamInfo, TraceInfo};
use traceloom_tsdl::ir::{
    ClockClass, DisplayBase, EnumType, EnvValue, EventClass, FieldPath, FieldType, IntegerType,
    Scope, StreamClass,
};

use crate::clock::{self, push_delta_ns, WallClock, WallOptions};
use crate::num::{push_g, push_hex_upper, push_i64, push_octal, push_u64, push_u64_padded};

/// Which field names `sink.text.pretty` prints (`--names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameOptions {
    /// Member names in the payload (`payload`, on by default).
    pub payload: bool,
    /// Member names in the contexts (`context`, on by default).
    pub context: bool,
    /// Header names: `timestamp = `, `delta = `, `name = ` ... (`header`).
    pub header: bool,
    /// Scope names: `stream.packet.context = ` ... (`scope`).
    pub scope: bool,
}

impl Default for NameOptions {
    fn default() -> Self {
        NameOptions {
            payload: true,
            context: true,
            header: false,
            scope: false,
        }
    }
}

/// Which header fields `sink.text.pretty` prints (`--fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOptions {
    /// The trace name (`trace`).
    pub trace: bool,
    /// The `hostname` environment entry (`trace:hostname`, on by default).
    pub hostname: bool,
    /// The `domain` environment entry (`trace:domain`).
    pub domain: bool,
    /// The `procname` environment entry (`trace:procname`, on by default).
    pub procname: bool,
    /// The `vpid` environment entry (`trace:vpid`, on by default).
    pub vpid: bool,
    /// The event class log level (`loglevel`).
    pub loglevel: bool,
    /// The event class EMF URI (`emf`).
    pub emf: bool,
}

impl Default for FieldOptions {
    fn default() -> Self {
        FieldOptions {
            trace: false,
            hostname: true,
            domain: false,
            procname: true,
            vpid: true,
            loglevel: false,
            emf: false,
        }
    }
}

/// The terminal color codes of `sink.text.pretty`, all empty when colors
/// are off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colors {
    /// Whether any code is emitted (skips the pushes when not).
    pub on: bool,
    /// `\e[0m`
    pub reset: &'static str,
    /// Header and scope names: bold.
    pub name: &'static str,
    /// Member names: cyan.
    pub field_name: &'static str,
    /// String values: bold.
    pub string: &'static str,
    /// Numbers: bold.
    pub number: &'static str,
    /// Enumeration labels: bold.
    pub enum_label: &'static str,
    /// `<unknown>`: bold, bright red.
    pub unknown: &'static str,
    /// Event names: bold, bright magenta.
    pub event_name: &'static str,
    /// Timestamps: bold, bright yellow.
    pub timestamp: &'static str,
    /// Discarded-records warnings: yellow.
    pub warning: &'static str,
    /// `WARNING`: bold.
    pub bold: &'static str,
}

impl Colors {
    /// No color.
    pub const NONE: Colors = Colors {
        on: false,
        reset: "",
        name: "",
        field_name: "",
        string: "",
        number: "",
        enum_label: "",
        unknown: "",
        event_name: "",
        timestamp: "",
        warning: "",
        bold: "",
    };

    /// babeltrace2's ANSI codes. `bright_means_bold`: bright colors are
    /// written as bold plus the normal color (babeltrace2's default, for old
    /// terminals) rather than with the bright color codes.
    pub fn ansi(bright_means_bold: bool) -> Colors {
        let (bright_red, bright_magenta, bright_yellow) = if bright_means_bold {
            ("\x1b[1m\x1b[31m", "\x1b[1m\x1b[35m", "\x1b[1m\x1b[33m")
        } else {
            ("\x1b[91m", "\x1b[95m", "\x1b[93m")
        };
        let leak =
            |a: &str, b: &str| -> &'static str { Box::leak(format!("{a}{b}").into_boxed_str()) };
        const BOLD: &str = "\x1b[1m";
        Colors {
            on: true,
            reset: "\x1b[0m",
            name: BOLD,
            field_name: "\x1b[36m",
            string: BOLD,
            number: BOLD,
            enum_label: BOLD,
            unknown: leak(BOLD, bright_red),
            event_name: leak(BOLD, bright_magenta),
            timestamp: leak(BOLD, bright_yellow),
            warning: "\x1b[33m",
            bold: BOLD,
        }
    }
}

/// All the options of the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrettyOptions {
    /// `--clock-cycles`: raw clock values instead of times.
    pub clock_cycles: bool,
    /// How times are printed (`--clock-seconds`, `--clock-gmt`, `--clock-date`).
    pub wall: WallOptions,
    /// Print the delta from the previous event (off with `--no-delta`).
    pub delta: bool,
    /// Field names to print.
    pub names: NameOptions,
    /// Header fields to print.
    pub fields: FieldOptions,
    /// Terminal colors.
    pub colors: Colors,
}

impl Default for PrettyOptions {
    fn default() -> Self {
        PrettyOptions {
            clock_cycles: false,
            wall: WallOptions::default(),
            delta: true,
            names: NameOptions::default(),
            fields: FieldOptions::default(),
            colors: Colors::NONE,
        }
    }
}

/// An event whose time babeltrace2 cannot compute (it refuses such traces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockRangeError {
    /// The clock.
    pub clock: String,
    /// `offset_s` of the clock.
    pub offset_s: i64,
    /// `offset` (cycles) of the clock.
    pub offset: i64,
    /// `freq` of the clock.
    pub freq: u64,
    /// The clock value that could not be converted.
    pub cycles: u64,
}

impl std::fmt::Display for ClockRangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot convert clock `{}` value {} to nanoseconds from origin: \
             offset_s = {}, offset = {}, freq = {} Hz put it outside the signed 64-bit \
             nanosecond range (babeltrace2 refuses this trace too; --clock-cycles prints raw values)",
            self.clock, self.cycles, self.offset_s, self.offset, self.freq
        )
    }
}

impl std::error::Error for ClockRangeError {}

/// The fields of a set of scopes that babeltrace2 leaves out, identified by
/// the address of their [`FieldType`] node (the trace class is shared and
/// immutable while a traceset is open, so addresses are stable).
#[derive(Debug, Default)]
pub struct Hidden(Vec<usize>);

impl Hidden {
    /// A sorted set (a handful of entries at most in real traces, looked
    /// up for every member of every printed structure: a binary search
    /// beats hashing here).
    fn new(set: HashSet<usize>) -> Self {
        let mut v: Vec<usize> = set.into_iter().collect();
        v.sort_unstable();
        Hidden(v)
    }

    #[inline]
    fn contains(&self, ty: &FieldType) -> bool {
        !self.0.is_empty() && self.0.binary_search(&addr(ty)).is_ok()
    }
}

fn addr(ty: &FieldType) -> usize {
    ty as *const FieldType as usize
}

/// How one scope of an event class is printed.
#[derive(Debug, Clone)]
pub struct ScopePlan {
    /// Whether babeltrace2 prints the scope at all.
    pub shown: bool,
    /// Fields left out inside it.
    pub hidden: Rc<Hidden>,
}

/// How the four printed scopes of an event class are printed: packet
/// context, stream event context, event context, payload.
#[derive(Debug, Clone)]
pub struct EventPlan {
    /// Per scope, in printing order.
    pub scopes: [ScopePlan; 4],
}

/// The printed scopes, in printing order.
const PRINTED: [Scope; 4] = [
    Scope::PacketContext,
    Scope::StreamEventContext,
    Scope::EventContext,
    Scope::EventPayload,
];

/// Packet context members that babeltrace2 gives a meaning and so removes.
const PACKET_CONTEXT_MEANINGS: [&str; 6] = [
    "timestamp_begin",
    "timestamp_end",
    "events_discarded",
    "packet_seq_num",
    "packet_size",
    "content_size",
];

/// The names `--names=scope` prints before each scope.
fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::PacketHeader => "trace.packet.header",
        Scope::PacketContext => "stream.packet.context",
        Scope::EventHeader => "stream.event.header",
        Scope::StreamEventContext => "stream.event.context",
        Scope::EventContext => "event.context",
        Scope::EventPayload => "event.fields",
    }
}

/// babeltrace2 removes one leading underscore from member names.
fn display_name(name: &str) -> &str {
    name.strip_prefix('_').unwrap_or(name)
}

/// The root types of the six scopes, for resolving field paths.
struct Roots<'a> {
    packet_header: Option<&'a FieldType>,
    stream: &'a StreamClass,
    event: Option<&'a EventClass>,
}

impl<'a> Roots<'a> {
    fn root(&self, scope: Scope) -> Option<&'a FieldType> {
        match scope {
            Scope::PacketHeader => self.packet_header,
            Scope::PacketContext => self.stream.packet_context.as_ref(),
            Scope::EventHeader => self.stream.event_header.as_ref(),
            Scope::StreamEventContext => self.stream.event_context.as_ref(),
            Scope::EventContext => self.event?.context.as_deref(),
            Scope::EventPayload => self.event?.payload.as_deref(),
        }
    }

    /// The field a path designates (arrays and sequences are crossed
    /// transparently, variants by option index).
    fn resolve(&self, path: &FieldPath) -> Option<&'a FieldType> {
        let mut ty = self.root(path.scope)?;
        for &i in &path.path {
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
}

/// babeltrace2's `update_field_class_in_ir`: decides which fields make it to
/// its trace IR, walking in reverse order so that a sequence length or
/// variant tag is known to have dependents by the time it is reached.
struct InIr<'a> {
    roots: Roots<'a>,
    dependents: HashSet<usize>,
    meaning: HashSet<usize>,
    hidden: HashSet<usize>,
}

impl<'a> InIr<'a> {
    fn update(&mut self, ty: &'a FieldType) -> bool {
        let in_ir = match ty {
            FieldType::Integer(i) => self.int_in_ir(ty, i),
            FieldType::Enum(e) => self.int_in_ir(ty, &e.container),
            FieldType::Float(_) | FieldType::String(_) => true,
            FieldType::Struct(s) => {
                let mut any = s.fields.is_empty();
                for f in s.fields.iter().rev() {
                    any |= self.update(&f.ty);
                }
                any
            }
            FieldType::Variant(v) => {
                let mut any = false;
                for o in v.options.iter().rev() {
                    any |= self.update(&o.ty);
                }
                if any {
                    // Every option stays selectable, even one whose fields
                    // all went away (it prints as `{ }`).
                    for o in &v.options {
                        self.hidden.remove(&addr(&o.ty));
                    }
                    if let Some(tag) = self.roots.resolve(&v.tag) {
                        self.dependents.insert(addr(tag));
                    }
                }
                any
            }
            FieldType::Array(a) => self.update(&a.element),
            FieldType::Sequence(s) => {
                let in_ir = self.update(&s.element);
                if in_ir {
                    if let Some(len) = self.roots.resolve(&s.length) {
                        self.dependents.insert(addr(len));
                    }
                }
                in_ir
            }
        };
        if !in_ir {
            self.hidden.insert(addr(ty));
        }
        in_ir
    }

    fn int_in_ir(&self, ty: &FieldType, int: &IntegerType) -> bool {
        let a = addr(ty);
        (int.mapped_clock.is_none() && !self.meaning.contains(&a)) || self.dependents.contains(&a)
    }

    /// Runs the selection on one scope; returns whether it is printed.
    fn scope(&mut self, root: Option<&'a FieldType>) -> (bool, Rc<Hidden>) {
        self.hidden.clear();
        let shown = match root {
            Some(ty) => self.update(ty),
            None => false,
        };
        (
            shown,
            Rc::new(Hidden::new(std::mem::take(&mut self.hidden))),
        )
    }
}

/// Computes the printing plans of the event classes `events` of a stream
/// class, in babeltrace2's selection order: each event class's payload then
/// context, then the stream event context, then the packet context. The
/// stream-level scopes depend on every event class (a sequence in a payload
/// may take its length from the stream event context), so `events` should be
/// all of the stream class's events.
pub fn plan_stream<'a>(
    packet_header: Option<&'a FieldType>,
    stream: &'a StreamClass,
    events: impl IntoIterator<Item = &'a EventClass>,
) -> HashMap<usize, EventPlan> {
    let mut sel = InIr {
        roots: Roots {
            packet_header,
            stream,
            event: None,
        },
        dependents: HashSet::new(),
        meaning: HashSet::new(),
        hidden: HashSet::new(),
    };
    let mut per_event = Vec::new();
    for ec in events {
        sel.roots.event = Some(ec);
        let payload = sel.scope(ec.payload.as_deref());
        let context = sel.scope(ec.context.as_deref());
        per_event.push((ec, context, payload));
    }
    sel.roots.event = None;
    let stream_context = sel.scope(stream.event_context.as_ref());
    if let Some(FieldType::Struct(s)) = &stream.packet_context {
        let role = |ty: &FieldType| match ty {
            FieldType::Integer(i) => Some(i.role),
            FieldType::Enum(e) => Some(e.container.role),
            _ => None,
        };
        // CTF 2 metadata gives the meanings by roles (and its fields may
        // have any name, as babeltrace2's own CTF 2 output shows), CTF 1.8
        // by names.
        let by_role = s.fields.iter().any(|f| role(&f.ty).flatten().is_some());
        for f in &s.fields {
            let meaning = match role(&f.ty) {
                None => false,
                Some(r) if by_role => r.is_some(),
                Some(_) => PACKET_CONTEXT_MEANINGS.contains(&display_name(&f.name)),
            };
            if meaning {
                sel.meaning.insert(addr(&f.ty));
            }
        }
    }
    let packet_context = sel.scope(stream.packet_context.as_ref());
    let plan = |(shown, hidden): &(bool, Rc<Hidden>)| ScopePlan {
        shown: *shown,
        hidden: hidden.clone(),
    };
    per_event
        .into_iter()
        .map(|(ec, context, payload)| {
            (
                event_key(ec),
                EventPlan {
                    scopes: [
                        plan(&packet_context),
                        plan(&stream_context),
                        plan(&context),
                        plan(&payload),
                    ],
                },
            )
        })
        .collect()
}

fn event_key(ec: &EventClass) -> usize {
    ec as *const EventClass as usize
}

/// Writes one field's text at `values[*at..]`, advancing `*at` past its
/// values. A value list that ends early (which the decoder never produces)
/// prints what is there without panicking.
pub struct FieldWriter<'a> {
    /// Packet bytes that [`FieldValue::Str`] ranges refer to.
    pub bytes: &'a [u8],
    /// Fields to leave out.
    pub hidden: &'a Hidden,
    /// Whether to print member names and array indexes.
    pub names: bool,
    /// Terminal colors.
    pub colors: &'a Colors,
}

impl FieldWriter<'_> {
    /// Appends the field of type `ty` whose values start at `values[*at]`.
    pub fn field(&self, buf: &mut Vec<u8>, ty: &FieldType, values: &[FieldValue], at: &mut usize) {
        match ty {
            FieldType::Integer(i) => {
                if let Some(&v) = values.get(*at) {
                    *at += 1;
                    self.number(buf, |b| push_integer(b, i, v));
                }
            }
            FieldType::Enum(e) => {
                if let Some(&v) = values.get(*at) {
                    *at += 1;
                    push_enum(buf, e, v, self.colors);
                }
            }
            FieldType::Float(_) => {
                if let Some(&v) = values.get(*at) {
                    *at += 1;
                    match v {
                        FieldValue::Float(f) => self.number(buf, |b| push_g(b, f)),
                        // An integer where a float was expected cannot come
                        // from the decoder; print it rather than nothing.
                        other => self.number(buf, |b| push_i64(b, other.as_i64().unwrap_or(0))),
                    }
                }
            }
            FieldType::String(_) => self.string(buf, values, at),
            FieldType::Struct(s) => {
                buf.push(b'{');
                let mut printed = 0usize;
                for m in &s.fields {
                    if self.hidden.contains(&m.ty) {
                        *at += value_span(&m.ty, values.get(*at..).unwrap_or(&[]));
                        continue;
                    }
                    buf.extend_from_slice(if printed > 0 { b", " } else { b" " });
                    if self.names {
                        colored(buf, self.colors, self.colors.field_name, |b| {
                            b.extend_from_slice(display_name(&m.name).as_bytes())
                        });
                        buf.extend_from_slice(b" = ");
                    }
                    self.field(buf, &m.ty, values, at);
                    printed += 1;
                }
                buf.extend_from_slice(b" }");
            }
            FieldType::Variant(v) => {
                let Some(&FieldValue::Variant(i)) = values.get(*at) else {
                    return;
                };
                *at += 1;
                // babeltrace2 prints the selected option's value only, not
                // its name.
                buf.extend_from_slice(b"{ ");
                if let Some(o) = v.options.get(i as usize) {
                    self.field(buf, &o.ty, values, at);
                }
                buf.extend_from_slice(b" }");
            }
            FieldType::Array(a) => self.elements(buf, &a.element, values, at),
            FieldType::Sequence(s) => self.elements(buf, &s.element, values, at),
        }
    }

    fn number(&self, buf: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u8>)) {
        colored(buf, self.colors, self.colors.number, f);
    }

    fn string(&self, buf: &mut Vec<u8>, values: &[FieldValue], at: &mut usize) {
        if let Some(&v) = values.get(*at) {
            *at += 1;
            if let FieldValue::Str { start, len } = v {
                let s = start as usize;
                let bytes = self.bytes.get(s..s + len as usize).unwrap_or(&[]);
                colored(buf, self.colors, self.colors.string, |b| {
                    push_escaped(b, bytes)
                });
            }
        }
    }

    fn elements(
        &self,
        buf: &mut Vec<u8>,
        element: &FieldType,
        values: &[FieldValue],
        at: &mut usize,
    ) {
        if is_text_element(element) {
            // babeltrace2 turns text arrays and sequences into strings.
            self.string(buf, values, at);
            return;
        }
        let Some(&FieldValue::Len(n)) = values.get(*at) else {
            return;
        };
        *at += 1;
        buf.push(b'[');
        for i in 0..n {
            if *at >= values.len() {
                break;
            }
            buf.extend_from_slice(if i > 0 { b", " } else { b" " });
            if self.names {
                buf.push(b'[');
                push_u64(buf, i);
                buf.extend_from_slice(b"] = ");
            }
            self.field(buf, element, values, at);
        }
        buf.extend_from_slice(b" ]");
    }
}

/// Appends an integer as babeltrace2's `print_integer` does for its
/// preferred display base and size.
pub fn push_integer(buf: &mut Vec<u8>, ty: &IntegerType, v: FieldValue) {
    let bits = v.as_u64().unwrap_or(0);
    let len = ty.size.clamp(1, 64);
    match ty.base {
        DisplayBase::Binary => {
            buf.extend_from_slice(b"0b");
            for bit in (0..len).rev() {
                buf.push(if bits >> bit & 1 == 1 { b'1' } else { b'0' });
            }
        }
        DisplayBase::Octal => {
            let mut u = bits;
            if ty.signed && len < 64 {
                // Keep the sign bits up to a whole octal digit.
                let rounded = (len - 1) / 3 * 3 + 3;
                if rounded < 64 {
                    u &= (1u64 << rounded) - 1;
                }
            }
            buf.push(b'0');
            push_octal(buf, u);
        }
        DisplayBase::Decimal => {
            if ty.signed {
                push_i64(buf, v.as_i64().unwrap_or(0));
            } else {
                push_u64(buf, bits);
            }
        }
        DisplayBase::Hexadecimal => {
            let mut u = bits;
            if len < 64 {
                // Keep the sign bits up to a whole nibble.
                let rounded = (len + 3) & !3;
                if rounded < 64 {
                    u &= (1u64 << rounded) - 1;
                }
            }
            buf.extend_from_slice(b"0x");
            push_hex_upper(buf, u);
        }
    }
}

/// Appends `text` (written by `f`) between `code` and the reset code when
/// colors are on.
#[inline]
fn colored(buf: &mut Vec<u8>, colors: &Colors, code: &str, f: impl FnOnce(&mut Vec<u8>)) {
    if colors.on {
        buf.extend_from_slice(code.as_bytes());
        f(buf);
        buf.extend_from_slice(colors.reset.as_bytes());
    } else {
        f(buf);
    }
}

/// Appends `( "LABEL", ... : container = N )`, or `( <unknown> : ... )`.
pub fn push_enum(buf: &mut Vec<u8>, ty: &EnumType, v: FieldValue, colors: &Colors) {
    buf.extend_from_slice(b"( ");
    let value = if ty.container.signed {
        v.as_i64().map(i128::from)
    } else {
        v.as_u64().map(i128::from)
    };
    let mut n = 0;
    if let Some(value) = value {
        for label in ty.labels_for(value) {
            if n > 0 {
                buf.extend_from_slice(b", ");
            }
            colored(buf, colors, colors.enum_label, |b| {
                push_escaped(b, label.as_bytes())
            });
            n += 1;
        }
    }
    if n == 0 {
        colored(buf, colors, colors.unknown, |b| {
            b.extend_from_slice(b"<unknown>")
        });
    }
    buf.extend_from_slice(b" : container = ");
    colored(buf, colors, colors.number, |b| {
        push_integer(b, &ty.container, v)
    });
    buf.extend_from_slice(b" )");
}

/// Appends a string in double quotes with babeltrace2's escapes: `\\`,
/// `\'`, `\"`, `\?`, the C escapes of control characters, `\xNN` for the
/// other control characters; other bytes (UTF-8 included) as they are.
pub fn push_escaped(buf: &mut Vec<u8>, s: &[u8]) {
    buf.push(b'"');
    // babeltrace2 stops at the first NUL (it uses C strings).
    let s = match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    };
    for &b in s {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\'' => buf.extend_from_slice(b"\\'"),
            b'"' => buf.extend_from_slice(b"\\\""),
            b'?' => buf.extend_from_slice(b"\\?"),
            0x07 => buf.extend_from_slice(b"\\a"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x1b => buf.extend_from_slice(b"\\e"),
            0x0c => buf.extend_from_slice(b"\\f"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0x0b => buf.extend_from_slice(b"\\v"),
            // iscntrl() in the C locale.
            0x01..=0x1f | 0x7f => {
                buf.extend_from_slice(b"\\x");
                push_u64_padded_hex2(buf, b);
            }
            _ => buf.push(b),
        }
    }
    buf.push(b'"');
}

/// `%02x`: two lower-case hex digits.
fn push_u64_padded_hex2(buf: &mut Vec<u8>, b: u8) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    buf.push(DIGITS[(b >> 4) as usize]);
    buf.push(DIGITS[(b & 15) as usize]);
}

/// babeltrace2's names of the CTF log levels 0 to 14.
const LOG_LEVEL_NAMES: [&str; 15] = [
    "TRACE_EMERG",
    "TRACE_ALERT",
    "TRACE_CRIT",
    "TRACE_ERR",
    "TRACE_WARNING",
    "TRACE_NOTICE",
    "TRACE_INFO",
    "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",
    "TRACE_DEBUG_PROCESS",
    "TRACE_DEBUG_MODULE",
    "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION",
    "TRACE_DEBUG_LINE",
    "TRACE_DEBUG",
];

/// The parts of an event's header line that come from outside the fields.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    /// The stream's clock and the event's clock value, when the stream has
    /// a clock.
    pub clock: Option<(&'a ClockClass, Option<u64>)>,
    /// The trace.
    pub trace: &'a TraceInfo,
    /// The event class.
    pub class: &'a EventClass,
}

/// The environment entries of a trace that the header may print: strings
/// for `hostname`, `domain`, `procname`, an integer for `vpid` (babeltrace2
/// prints nothing for an entry of the other kind).
#[derive(Debug)]
struct TraceEnv {
    hostname: Option<String>,
    domain: Option<String>,
    procname: Option<String>,
    vpid: Option<i64>,
}

/// The `sink.text.pretty` state: options, the previous event's time (for
/// deltas) and the reusable line buffer.
pub struct Printer {
    opts: PrettyOptions,
    wall: WallClock,
    last_ns: Option<i64>,
    delta_ns: Option<u64>,
    last_cycles: Option<u64>,
    delta_cycles: Option<u64>,
    line: Vec<u8>,
    warnings: Vec<u8>,
    plans: HashMap<usize, Rc<EventPlan>>,
    planned_streams: HashSet<usize>,
    /// Colors of the discarded-records warnings.
    warning_colors: Colors,
    /// Environment entries per trace (keyed by `TraceInfo` address).
    envs: Vec<(usize, Rc<TraceEnv>)>,
    /// The last event class and its plan: consecutive events often share
    /// their class, and this skips the map lookup.
    last_plan: Option<(usize, Rc<EventPlan>)>,
}

impl Printer {
    /// A printer with these options.
    pub fn new(opts: PrettyOptions) -> Self {
        Printer {
            opts,
            wall: WallClock::new(opts.wall),
            last_ns: None,
            delta_ns: None,
            last_cycles: None,
            delta_cycles: None,
            line: Vec::with_capacity(512),
            warnings: Vec::new(),
            plans: HashMap::new(),
            planned_streams: HashSet::new(),
            last_plan: None,
            envs: Vec::new(),
            warning_colors: Colors::NONE,
        }
    }

    /// Sets the colors of the discarded-records warnings (babeltrace2 uses
    /// them when the terminal supports colors, even with `--color=never`).
    pub fn set_warning_colors(&mut self, colors: Colors) {
        self.warning_colors = colors;
    }

    /// The last formatted line (with its newline).
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// Text to print on standard error before the line, if any (taken).
    pub fn take_warnings(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.warnings)
    }

    fn plan(&mut self, ev: &Event<'_>) -> Rc<EventPlan> {
        let key = event_key(ev.class());
        if let Some((k, p)) = &self.last_plan {
            if *k == key {
                return p.clone();
            }
        }
        let plan = match self.plans.get(&key) {
            Some(p) => p.clone(),
            None => self.plan_new(ev, key),
        };
        self.last_plan = Some((key, plan.clone()));
        plan
    }

    #[cold]
    fn plan_new(&mut self, ev: &Event<'_>, key: usize) -> Rc<EventPlan> {
        let sc = ev.stream_class();
        let header = ev.trace().class.packet_header.as_ref();
        let wrap = |m: HashMap<usize, EventPlan>| m.into_iter().map(|(k, p)| (k, Rc::new(p)));
        if self
            .planned_streams
            .insert(sc as *const StreamClass as usize)
        {
            let plans = plan_stream(header, sc, sc.events.values().map(|e| &**e));
            self.plans.extend(wrap(plans));
        }
        if !self.plans.contains_key(&key) {
            // An event class missing from its stream class's map (the decoder
            // does not make those): plan it on its own.
            self.plans
                .extend(wrap(plan_stream(header, sc, [ev.class()])));
        }
        self.plans[&key].clone()
    }

    /// Formats `ev` into the line buffer ([`Printer::line`]).
    pub fn event(&mut self, ev: &Event<'_>) -> Result<(), ClockRangeError> {
        let plan = self.plan(ev);
        self.line.clear();
        let header = Header {
            clock: ev.clock().map(|c| (c, ev.timestamp_cycles())),
            trace: ev.trace(),
            class: ev.class(),
        };
        let mut start_line = self.header(&header)?;
        let bytes = ev.packet_bytes();
        for (i, scope) in PRINTED.iter().enumerate() {
            let sp = &plan.scopes[i];
            if !sp.shown {
                continue;
            }
            let Some(ty) = ev.scope_type(*scope) else {
                continue;
            };
            if !start_line {
                self.line.extend_from_slice(b", ");
            }
            start_line = false;
            if self.opts.names.scope {
                self.name_equal(scope_name(*scope));
            }
            let names = if *scope == Scope::EventPayload {
                self.opts.names.payload
            } else {
                self.opts.names.context
            };
            let w = FieldWriter {
                bytes,
                hidden: &sp.hidden,
                names,
                colors: &self.opts.colors,
            };
            let mut at = 0;
            w.field(&mut self.line, ty, ev.scope_values(*scope), &mut at);
        }
        self.line.push(b'\n');
        Ok(())
    }

    /// Appends the header (timestamp, delta, trace fields, event name) to the
    /// line buffer. Returns babeltrace2's `start_line` flag: whether the next
    /// scope goes without a leading `, `.
    pub fn header(&mut self, h: &Header<'_>) -> Result<bool, ClockRangeError> {
        let names = self.opts.names.header;
        let mut start_line = true;
        if let Some((clock, cycles)) = h.clock {
            if names {
                self.name_equal("timestamp");
            } else {
                self.line.push(b'[');
            }
            if self.opts.colors.on {
                self.line
                    .extend_from_slice(self.opts.colors.timestamp.as_bytes());
            }
            if self.opts.clock_cycles {
                let c = cycles.unwrap_or(0);
                push_u64_padded(&mut self.line, c, 20);
                self.last_cycles_update(c);
            } else {
                match cycles {
                    None => self.line.extend_from_slice(b"??:??:??.?????????"),
                    Some(c) => {
                        let ns =
                            clock::ns_from_origin(clock, c).ok_or_else(|| ClockRangeError {
                                clock: clock.name.clone(),
                                offset_s: clock.offset_s,
                                offset: clock.offset,
                                freq: clock.freq,
                                cycles: c,
                            })?;
                        self.delta_ns_update(ns);
                        if let Some(w) = self.wall.push(&mut self.line, ns) {
                            self.warnings.extend_from_slice(w.message().as_bytes());
                        }
                    }
                }
            }
            if self.opts.colors.on {
                self.line
                    .extend_from_slice(self.opts.colors.reset.as_bytes());
            }
            if !names {
                self.line.extend_from_slice(b"] ");
            }
            if self.opts.delta {
                if names {
                    self.line.extend_from_slice(b", ");
                    self.name_equal("delta");
                } else {
                    self.line.push(b'(');
                }
                if self.opts.clock_cycles {
                    match self.delta_cycles {
                        Some(d) => {
                            self.line.push(b'+');
                            push_u64_padded(&mut self.line, d, 12);
                        }
                        None => self.line.extend_from_slice(b"+????????????"),
                    }
                } else {
                    match self.delta_ns {
                        Some(d) => push_delta_ns(&mut self.line, d),
                        None => self.line.extend_from_slice(b"+?.?????????"),
                    }
                }
                if !names {
                    self.line.extend_from_slice(b") ");
                }
            }
            start_line = !names;
        }
        let f = self.opts.fields;
        let mut dom_print = false;
        if f.trace {
            // babeltrace2's CTF reader always names a trace, possibly "".
            let name = h.trace.name.as_deref().unwrap_or("");
            if !start_line {
                self.line.extend_from_slice(b", ");
            }
            if names {
                self.name_equal("trace");
            }
            self.line.extend_from_slice(name.as_bytes());
            if names {
                self.line.extend_from_slice(b", ");
            }
        }
        let env = self.trace_env(h.trace);
        if f.hostname {
            if let Some(s) = &env.hostname {
                if !start_line {
                    self.line.extend_from_slice(b", ");
                }
                if names {
                    self.name_equal("trace:hostname");
                }
                self.line.extend_from_slice(s.as_bytes());
                dom_print = true;
            }
        }
        for (on, key, value) in [
            (f.domain, "domain", &env.domain),
            (f.procname, "procname", &env.procname),
        ] {
            if !on {
                continue;
            }
            if let Some(s) = value {
                self.env_separator(start_line, names, dom_print, key);
                self.line.extend_from_slice(s.as_bytes());
                dom_print = true;
            }
        }
        if f.vpid {
            if let Some(v) = env.vpid {
                self.env_separator(start_line, names, dom_print, "vpid");
                self.line.push(b'(');
                push_i64(&mut self.line, v);
                self.line.push(b')');
                dom_print = true;
            }
        }
        if f.loglevel {
            let level = h
                .class
                .loglevel
                .and_then(|l| usize::try_from(l).ok())
                .and_then(|l| LOG_LEVEL_NAMES.get(l).map(|n| (l, *n)));
            if let Some((l, name)) = level {
                if !start_line {
                    self.line.extend_from_slice(b", ");
                }
                if names {
                    self.name_equal("loglevel");
                } else if dom_print {
                    self.line.push(b':');
                }
                self.line.extend_from_slice(name.as_bytes());
                self.line.extend_from_slice(b" (");
                push_u64(&mut self.line, l as u64);
                self.line.push(b')');
                dom_print = true;
            }
        }
        if f.emf {
            if let Some(uri) = h.class.emf_uri.as_deref().filter(|u| !u.is_empty()) {
                if !start_line {
                    self.line.extend_from_slice(b", ");
                }
                if names {
                    self.name_equal("model.emf.uri");
                } else if dom_print {
                    self.line.push(b':');
                }
                self.line.extend_from_slice(uri.as_bytes());
                dom_print = true;
            }
        }
        if dom_print && !names {
            self.line.push(b' ');
        }
        if !start_line {
            self.line.extend_from_slice(b", ");
        }
        if names {
            self.name_equal("name");
        }
        let colors = self.opts.colors;
        colored(&mut self.line, &colors, colors.event_name, |b| {
            b.extend_from_slice(h.class.name.as_bytes())
        });
        self.line
            .extend_from_slice(if names { b", " } else { b": " });
        // babeltrace2 resets `start_line` to true after the name: the first
        // scope never gets a leading comma.
        Ok(true)
    }

    /// Formats babeltrace2's warning for discarded events (`packets` false)
    /// or packets, for standard error, into the warnings
    /// ([`Printer::take_warnings`]).
    pub fn discarded(&mut self, d: &Discarded<'_>, packets: bool) {
        let what = if packets { "packet" } else { "event" };
        let b = &mut self.warnings;
        b.clear();
        // babeltrace2 colors this line whenever the terminal supports it,
        // whatever `--color` says.
        let c = self.warning_colors;
        for code in [c.warning, c.bold, "WARNING", c.reset, c.warning, ": "] {
            b.extend_from_slice(code.as_bytes());
        }
        match d.count {
            Some(n) => {
                b.extend_from_slice(b"Tracer discarded ");
                push_u64(b, n);
                b.push(b' ');
                b.extend_from_slice(what.as_bytes());
                if n != 1 {
                    b.push(b's');
                }
            }
            None => {
                b.extend_from_slice(b"Tracer may have discarded ");
                b.extend_from_slice(what.as_bytes());
                b.push(b's');
            }
        }
        b.push(b' ');
        let range = d.clock.and_then(|c| {
            let begin = clock::ns_from_origin(c, d.begin_cycles?);
            let end = clock::ns_from_origin(c, d.end_cycles?);
            Some((begin, end))
        });
        let mut notes = Vec::new();
        match range {
            Some((begin, end)) => {
                b.extend_from_slice(b"between [");
                push_time_or_error(b, &mut self.wall, begin, &mut notes);
                b.extend_from_slice(b"] and [");
                push_time_or_error(b, &mut self.wall, end, &mut notes);
                b.push(b']');
            }
            None => b.extend_from_slice(b"(unknown time range)"),
        }
        b.extend_from_slice(b" in trace \"");
        // babeltrace2's CTF reader always names a trace, with an empty name
        // when it has no `hostname` and was given directly.
        let name = d.trace.name.as_deref().unwrap_or("");
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(b"\" ");
        // babeltrace2 2.1 names a CTF 2 trace by its class's `uid`.
        match (d.trace.class.major, d.trace.uuid()) {
            (2, _) => match &d.trace.class.uid {
                Some(uid) => {
                    b.extend_from_slice(b"(UID: ");
                    b.extend_from_slice(uid.as_bytes());
                    b.extend_from_slice(b") ");
                }
                None => b.extend_from_slice(b"(no UID) "),
            },
            (_, Some(u)) => {
                b.extend_from_slice(b"(UUID: ");
                push_uuid(b, &u);
                b.extend_from_slice(b") ");
            }
            (_, None) => b.extend_from_slice(b"(no UUID) "),
        }
        b.extend_from_slice(b"within stream \"");
        push_stream_name(b, d.stream);
        b.extend_from_slice(b"\" (stream class ID: ");
        push_u64(b, d.stream.class_id);
        b.extend_from_slice(b", stream ID: ");
        push_u64(b, d.stream.id);
        b.extend_from_slice(b").");
        b.extend_from_slice(c.reset.as_bytes());
        b.push(b'\n');
        if !notes.is_empty() {
            // babeltrace2 prints its time warnings while formatting, that is
            // before the message itself.
            notes.extend_from_slice(b);
            *b = notes;
        }
    }

    /// The environment entries the header prints, looked up once per trace
    /// (a traceset has few traces; events of several traces interleave).
    fn trace_env(&mut self, trace: &TraceInfo) -> Rc<TraceEnv> {
        let key = trace as *const TraceInfo as usize;
        if let Some((_, e)) = self.envs.iter().find(|(k, _)| *k == key) {
            return e.clone();
        }
        let text = |k: &str| match trace.env(k) {
            Some(EnvValue::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let env = Rc::new(TraceEnv {
            hostname: text("hostname"),
            domain: text("domain"),
            procname: text("procname"),
            vpid: match trace.env("vpid") {
                Some(EnvValue::Int(v)) => Some(*v),
                _ => None,
            },
        });
        self.envs.push((key, env.clone()));
        env
    }

    /// babeltrace2 keeps the previous time and the last delta; a delta is
    /// computed with wrapping unsigned arithmetic.
    fn delta_ns_update(&mut self, ns: i64) {
        if let Some(last) = self.last_ns {
            self.delta_ns = Some(ns.wrapping_sub(last) as u64);
        }
        self.last_ns = Some(ns);
    }

    fn last_cycles_update(&mut self, cycles: u64) {
        if let Some(last) = self.last_cycles {
            self.delta_cycles = Some(cycles.wrapping_sub(last));
        }
        self.last_cycles = Some(cycles);
    }

    /// `NAME = ` for header and scope names (bold in color).
    fn name_equal(&mut self, name: &str) {
        let colors = self.opts.colors;
        colored(&mut self.line, &colors, colors.name, |b| {
            b.extend_from_slice(name.as_bytes())
        });
        self.line.extend_from_slice(b" = ");
    }

    fn env_separator(&mut self, start_line: bool, names: bool, dom_print: bool, key: &str) {
        if !start_line {
            self.line.extend_from_slice(b", ");
        }
        if names {
            let colors = self.opts.colors;
            colored(&mut self.line, &colors, colors.name, |b| {
                b.extend_from_slice(b"trace:");
                b.extend_from_slice(key.as_bytes());
            });
            self.line.extend_from_slice(b" = ");
        } else if dom_print {
            self.line.push(b':');
        }
    }
}

/// A time of a discarded-records range; babeltrace2 prints `Error` for one
/// it cannot convert.
fn push_time_or_error(b: &mut Vec<u8>, wall: &mut WallClock, ns: Option<i64>, notes: &mut Vec<u8>) {
    match ns {
        Some(ns) => {
            if let Some(w) = wall.push(b, ns) {
                notes.extend_from_slice(w.message().as_bytes());
            }
        }
        None => b.extend_from_slice(b"Error"),
    }
}

/// `BT_UUID_FMT`: lower-case 8-4-4-4-12.
fn push_uuid(b: &mut Vec<u8>, u: &[u8; 16]) {
    for (i, byte) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            b.push(b'-');
        }
        push_u64_padded_hex2(b, *byte);
    }
}

/// The stream name babeltrace2's CTF reader gives: the absolute path of the
/// stream's first file.
fn push_stream_name(b: &mut Vec<u8>, s: &StreamInfo) {
    match s.name_path() {
        Some(p) => {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            b.extend_from_slice(abs.as_os_str().as_encoded_bytes());
        }
        None => b.extend_from_slice(b"(unknown)"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use traceloom_tsdl::ir::{
        ArrayType, ByteOrder, Encoding, EnumMapping, FloatType, NamedField, SequenceType,
        StructType, VariantType,
    };

    fn int_t(size: u32, signed: bool, base: DisplayBase) -> IntegerType {
        IntegerType {
            size,
            align: 8,
            signed,
            byte_order: ByteOrder::Little,
            base,
            encoding: Encoding::None,
            mapped_clock: None,
            varlen: false,
            role: None,
        }
    }

    fn int(size: u32, signed: bool, base: DisplayBase) -> FieldType {
        FieldType::Integer(int_t(size, signed, base))
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

    fn text(ty: &FieldType, values: &[FieldValue], bytes: &[u8], hidden: &Hidden) -> String {
        let w = FieldWriter {
            bytes,
            hidden,
            names: true,
            colors: &Colors::NONE,
        };
        let mut buf = Vec::new();
        let mut at = 0;
        w.field(&mut buf, ty, values, &mut at);
        assert_eq!(at, values.len(), "all values consumed");
        String::from_utf8(buf).unwrap()
    }

    fn one(ty: &IntegerType, v: FieldValue) -> String {
        let mut b = Vec::new();
        push_integer(&mut b, ty, v);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn integers_in_every_base() {
        use DisplayBase::*;
        use FieldValue::{SInt, UInt};
        assert_eq!(
            one(&int_t(32, false, Decimal), UInt(4_000_000_000)),
            "4000000000"
        );
        assert_eq!(one(&int_t(32, true, Decimal), SInt(-3)), "-3");
        assert_eq!(
            one(&int_t(64, true, Decimal), SInt(i64::MIN)),
            "-9223372036854775808"
        );
        // Hex masks a signed value to its size rounded up to a nibble.
        assert_eq!(
            one(&int_t(32, false, Hexadecimal), UInt(0xBF08_3A6C)),
            "0xBF083A6C"
        );
        assert_eq!(one(&int_t(32, true, Hexadecimal), SInt(-1)), "0xFFFFFFFF");
        assert_eq!(one(&int_t(5, true, Hexadecimal), SInt(-1)), "0xFF");
        assert_eq!(
            one(&int_t(64, true, Hexadecimal), SInt(-2)),
            "0xFFFFFFFFFFFFFFFE"
        );
        assert_eq!(one(&int_t(8, false, Hexadecimal), UInt(0)), "0x0");
        // Octal: `0` prefix; signed values masked to whole octal digits.
        assert_eq!(one(&int_t(16, false, Octal), UInt(8)), "010");
        assert_eq!(one(&int_t(16, false, Octal), UInt(0)), "00");
        assert_eq!(one(&int_t(8, true, Octal), SInt(-1)), "0777");
        assert_eq!(
            one(&int_t(64, true, Octal), SInt(-1)),
            "01777777777777777777777"
        );
        // Binary: exactly `size` digits.
        assert_eq!(one(&int_t(4, false, Binary), UInt(5)), "0b0101");
        assert_eq!(one(&int_t(8, true, Binary), SInt(-2)), "0b11111110");
        assert_eq!(one(&int_t(1, false, Binary), UInt(1)), "0b1");
    }

    fn enum_t(signed: bool, base: DisplayBase) -> EnumType {
        EnumType {
            container: int_t(8, signed, base),
            mappings: vec![
                EnumMapping {
                    label: "ZERO".into(),
                    ranges: vec![(0, 0)],
                },
                EnumMapping {
                    label: "LOW".into(),
                    ranges: vec![(-5, 3), (10, 10)],
                },
                EnumMapping {
                    label: "say \"hi\"".into(),
                    ranges: vec![(3, 3)],
                },
            ],
        }
    }

    #[test]
    fn enumerations() {
        let e = |t: &EnumType, v| {
            let mut b = Vec::new();
            push_enum(&mut b, t, v, &Colors::NONE);
            String::from_utf8(b).unwrap()
        };
        let u = enum_t(false, DisplayBase::Decimal);
        assert_eq!(
            e(&u, FieldValue::UInt(0)),
            r#"( "ZERO", "LOW" : container = 0 )"#
        );
        assert_eq!(e(&u, FieldValue::UInt(10)), r#"( "LOW" : container = 10 )"#);
        assert_eq!(
            e(&u, FieldValue::UInt(3)),
            r#"( "LOW", "say \"hi\"" : container = 3 )"#
        );
        assert_eq!(
            e(&u, FieldValue::UInt(200)),
            "( <unknown> : container = 200 )"
        );
        let s = enum_t(true, DisplayBase::Hexadecimal);
        assert_eq!(
            e(&s, FieldValue::SInt(-5)),
            r#"( "LOW" : container = 0xFB )"#
        );
    }

    #[test]
    fn strings_are_escaped_like_babeltrace2() {
        let s = |bytes: &[u8]| {
            let mut b = Vec::new();
            push_escaped(&mut b, bytes);
            b
        };
        assert_eq!(s(b"plain text"), b"\"plain text\"");
        assert_eq!(s(b"a\\b'c\"d?e"), b"\"a\\\\b\\'c\\\"d\\?e\"");
        assert_eq!(
            s(b"\x07\x08\x1b\x0c\n\r\t\x0b\x01\x7f"),
            b"\"\\a\\b\\e\\f\\n\\r\\t\\v\\x01\\x7f\""
        );
        // UTF-8 and other high bytes go through untouched.
        assert_eq!(s("é€".as_bytes()), "\"é€\"".as_bytes());
        assert_eq!(s(b"\xff"), b"\"\xff\"");
        // C strings end at the first NUL.
        assert_eq!(s(b"ab\0cd"), b"\"ab\"");
        assert_eq!(s(b""), b"\"\"");
    }

    /// The hello-lost payload layout, with values from its first event.
    #[test]
    fn nested_payload() {
        let utf8 = |size| {
            FieldType::Integer(IntegerType {
                encoding: Encoding::Utf8,
                ..int_t(size, true, DisplayBase::Decimal)
            })
        };
        let len_path = |i| FieldPath {
            scope: Scope::EventPayload,
            path: vec![i],
        };
        let ty = strukt(vec![
            named("_intfield2", int(32, true, DisplayBase::Hexadecimal)),
            named(
                "_arrfield1",
                FieldType::Array(ArrayType {
                    element: Box::new(int(64, true, DisplayBase::Decimal)),
                    length: 3,
                }),
            ),
            named(
                "_arrfield2",
                FieldType::Array(ArrayType {
                    element: Box::new(utf8(8)),
                    length: 10,
                }),
            ),
            named("__seqfield1_length", int(64, false, DisplayBase::Decimal)),
            named(
                "_seqfield1",
                FieldType::Sequence(SequenceType {
                    element: Box::new(int(8, true, DisplayBase::Decimal)),
                    length_name: "__seqfield1_length".into(),
                    length: len_path(3),
                }),
            ),
            named(
                "_empty",
                FieldType::Sequence(SequenceType {
                    element: Box::new(int(8, true, DisplayBase::Decimal)),
                    length_name: "__seqfield1_length".into(),
                    length: len_path(3),
                }),
            ),
            named("_stringfield", FieldType::String(Encoding::Utf8)),
            named(
                "_floatfield",
                FieldType::Float(FloatType {
                    exp_dig: 8,
                    mant_dig: 24,
                    align: 8,
                    byte_order: ByteOrder::Little,
                }),
            ),
            named(
                "_nested",
                strukt(vec![named("a", int(8, false, DisplayBase::Decimal))]),
            ),
            named("_nothing", strukt(vec![])),
        ]);
        let bytes = b"test\0\0\0\0\0\0test\0";
        use FieldValue::*;
        let values = [
            SInt(0x10),
            Len(3),
            SInt(1),
            SInt(2),
            SInt(-3),
            Str { start: 0, len: 4 },
            UInt(4),
            Len(4),
            SInt(116),
            SInt(101),
            SInt(115),
            SInt(116),
            Len(0),
            Str { start: 10, len: 4 },
            Float(2222.0),
            UInt(7),
        ];
        assert_eq!(
            text(&ty, &values, bytes, &Hidden::default()),
            "{ intfield2 = 0x10, arrfield1 = [ [0] = 1, [1] = 2, [2] = -3 ], arrfield2 = \"test\", \
             _seqfield1_length = 4, seqfield1 = [ [0] = 116, [1] = 101, [2] = 115, [3] = 116 ], \
             empty = [ ], stringfield = \"test\", floatfield = 2222, nested = { a = 7 }, nothing = { } }"
        );
        // Without names (`--names=none`), arrays lose their indexes too.
        let w = FieldWriter {
            bytes,
            hidden: &Hidden::default(),
            names: false,
            colors: &Colors::NONE,
        };
        let mut buf = Vec::new();
        let mut at = 0;
        w.field(&mut buf, &ty, &values, &mut at);
        assert!(String::from_utf8(buf).unwrap().starts_with(
            "{ 0x10, [ 1, 2, -3 ], \"test\", 4, [ 116, 101, 115, 116 ], [ ], \"test\""
        ));
    }

    #[test]
    fn variants_print_the_selected_option_only() {
        let tag = FieldType::Enum(enum_t(false, DisplayBase::Decimal));
        let ty = strukt(vec![
            named("_tag", tag),
            named(
                "_v",
                FieldType::Variant(VariantType {
                    selector_ranges: None,
                    tag_name: "_tag".into(),
                    tag: FieldPath {
                        scope: Scope::EventPayload,
                        path: vec![0],
                    },
                    options: vec![
                        named("ZERO", int(32, false, DisplayBase::Decimal)),
                        named(
                            "LOW",
                            strukt(vec![named("x", int(8, false, DisplayBase::Decimal))]),
                        ),
                    ],
                }),
            ),
        ]);
        let values = [
            FieldValue::UInt(10),
            FieldValue::Variant(1),
            FieldValue::UInt(9),
        ];
        assert_eq!(
            text(&ty, &values, b"", &Hidden::default()),
            r#"{ tag = ( "LOW" : container = 10 ), v = { { x = 9 } } }"#
        );
    }

    fn clocked(size: u32) -> FieldType {
        FieldType::Integer(IntegerType {
            mapped_clock: Some("monotonic".into()),
            varlen: false,
            role: None,
            ..int_t(size, false, DisplayBase::Decimal)
        })
    }

    fn event(id: u64, context: Option<FieldType>, payload: Option<FieldType>) -> Arc<EventClass> {
        Arc::new(EventClass {
            id,
            name: format!("ev{id}"),
            stream_id: 0,
            loglevel: None,
            emf_uri: None,
            context: context.map(Arc::new),
            payload: payload.map(Arc::new),
        })
    }

    /// babeltrace2's selection of printed fields: clock-mapped integers and
    /// special packet-context fields go, unless something depends on them.
    #[test]
    fn plans_follow_babeltrace2_in_ir_rules() {
        let packet_context = strukt(vec![
            named("timestamp_begin", clocked(64)),
            named("timestamp_end", clocked(64)),
            named("content_size", int(64, false, DisplayBase::Decimal)),
            named("packet_size", int(64, false, DisplayBase::Decimal)),
            named("events_discarded", int(64, false, DisplayBase::Decimal)),
            named("packet_seq_num", int(64, false, DisplayBase::Decimal)),
            named("cpu_id", int(32, false, DisplayBase::Decimal)),
        ]);
        let only_clock = strukt(vec![named("ts", clocked(64))]);
        let stream_context = strukt(vec![named("_len", int(8, false, DisplayBase::Decimal))]);
        let payload = strukt(vec![
            named("_ts", clocked(64)),
            named("_clocked_len", clocked(8)),
            named(
                "_seq",
                FieldType::Sequence(SequenceType {
                    element: Box::new(int(8, false, DisplayBase::Decimal)),
                    length_name: "_clocked_len".into(),
                    length: FieldPath {
                        scope: Scope::EventPayload,
                        path: vec![1],
                    },
                }),
            ),
            named("_inner", strukt(vec![named("t", clocked(32))])),
            named(
                "_seq2",
                FieldType::Sequence(SequenceType {
                    element: Box::new(int(8, false, DisplayBase::Decimal)),
                    length_name: "stream.event.context._len".into(),
                    length: FieldPath {
                        scope: Scope::StreamEventContext,
                        path: vec![0],
                    },
                }),
            ),
        ]);
        let mut events = BTreeMap::new();
        events.insert(0, event(0, Some(only_clock), Some(payload)));
        events.insert(1, event(1, None, Some(strukt(vec![]))));
        let sc = StreamClass {
            id: 0,
            packet_context: Some(packet_context),
            event_header: None,
            event_context: Some(stream_context),
            events,
        };
        let plans = plan_stream(None, &sc, sc.events.values().map(|e| &**e));
        let p0 = &plans[&event_key(&sc.events[&0])];
        let p1 = &plans[&event_key(&sc.events[&1])];
        // Packet context: only cpu_id is left.
        assert!(p0.scopes[0].shown);
        let pc = sc.packet_context.as_ref().unwrap();
        let values: Vec<FieldValue> = (0..7).map(FieldValue::UInt).collect();
        assert_eq!(
            text(pc, &values, b"", &p0.scopes[0].hidden),
            "{ cpu_id = 6 }"
        );
        // The stream event context's `_len` is a sequence length: kept.
        assert!(p0.scopes[1].shown);
        // An event context made only of a clock-mapped field is not printed.
        assert!(!p0.scopes[2].shown);
        // The payload keeps the clock-mapped sequence length, drops the other
        // clock-mapped fields and the struct left empty by that.
        assert!(p0.scopes[3].shown);
        let payload = sc.events[&0].payload.as_ref().unwrap();
        use FieldValue::*;
        let values = [
            UInt(99),
            UInt(2),
            Len(2),
            UInt(5),
            UInt(6),
            UInt(77),
            Len(1),
            UInt(8),
        ];
        assert_eq!(
            text(payload, &values, b"", &p0.scopes[3].hidden),
            "{ clocked_len = 2, seq = [ [0] = 5, [1] = 6 ], seq2 = [ [0] = 8 ] }"
        );
        // An empty payload struct is printed as `{ }`; a missing context is not.
        assert!(p1.scopes[3].shown);
        assert!(!p1.scopes[2].shown);
    }
}

#[cfg(test)]
mod color_tests {
    use super::*;
    use traceloom_tsdl::ir::{ByteOrder, Encoding, EnumMapping, NamedField, StructType};

    #[test]
    fn colored_fields() {
        let int = |base| IntegerType {
            size: 8,
            align: 8,
            signed: false,
            byte_order: ByteOrder::Little,
            base,
            encoding: Encoding::None,
            mapped_clock: None,
            varlen: false,
            role: None,
        };
        let ty = FieldType::Struct(StructType {
            fields: vec![
                NamedField {
                    name: "_n".into(),
                    ty: FieldType::Integer(int(DisplayBase::Hexadecimal)),
                },
                NamedField {
                    name: "e".into(),
                    ty: FieldType::Enum(EnumType {
                        container: int(DisplayBase::Decimal),
                        mappings: vec![EnumMapping {
                            label: "A".into(),
                            ranges: vec![(1, 1)],
                        }],
                    }),
                },
                NamedField {
                    name: "u".into(),
                    ty: FieldType::Enum(EnumType {
                        container: int(DisplayBase::Decimal),
                        mappings: vec![],
                    }),
                },
                NamedField {
                    name: "s".into(),
                    ty: FieldType::String(Encoding::Utf8),
                },
            ],
            min_align: 1,
        });
        let colors = Colors::ansi(true);
        let w = FieldWriter {
            bytes: b"hi",
            hidden: &Hidden::default(),
            names: true,
            colors: &colors,
        };
        let values = [
            FieldValue::UInt(10),
            FieldValue::UInt(1),
            FieldValue::UInt(2),
            FieldValue::Str { start: 0, len: 2 },
        ];
        let mut buf = Vec::new();
        w.field(&mut buf, &ty, &values, &mut 0);
        // The codes babeltrace2 2.0.4 writes (checked on a terminal).
        let want = "{ \x1b[36mn\x1b[0m = \x1b[1m0xA\x1b[0m, \
                    \x1b[36me\x1b[0m = ( \x1b[1m\"A\"\x1b[0m : container = \x1b[1m1\x1b[0m ), \
                    \x1b[36mu\x1b[0m = ( \x1b[1m\x1b[1m\x1b[31m<unknown>\x1b[0m : container = \x1b[1m2\x1b[0m ), \
                    \x1b[36ms\x1b[0m = \x1b[1m\"hi\"\x1b[0m }";
        assert_eq!(String::from_utf8(buf).unwrap(), want);
        assert_eq!(Colors::ansi(false).timestamp, "\x1b[1m\x1b[93m");
    }
}

#[cfg(test)]
mod header_tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use traceloom_tsdl::ir::{ByteOrder, TraceClass};

    fn trace(env: Vec<(&str, EnvValue)>) -> TraceInfo {
        TraceInfo {
            index: 0,
            path: PathBuf::from("/t"),
            name: Some("vm/ust/pid/x".into()),
            class: Arc::new(TraceClass {
                uid: None,
                major: 1,
                minor: 8,
                uuid: None,
                byte_order: ByteOrder::Little,
                packet_header: None,
                env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                clocks: vec![],
                streams: BTreeMap::new(),
                callsites: vec![],
            }),
        }
    }

    fn class(loglevel: Option<i64>) -> EventClass {
        EventClass {
            id: 0,
            name: "loomdemo:tick".into(),
            stream_id: 0,
            loglevel,
            emf_uri: Some("http://x/".into()),
            context: None,
            payload: None,
        }
    }

    fn clock() -> ClockClass {
        ClockClass {
            name: "monotonic".into(),
            freq: 1_000_000_000,
            offset_s: 0,
            offset: 1_795_314_821_615_765_212,
            precision: 0,
            absolute: false,
            uuid: None,
            description: None,
        }
    }

    fn headers(
        opts: PrettyOptions,
        t: &TraceInfo,
        c: &EventClass,
        times: &[Option<u64>],
    ) -> Vec<String> {
        let mut p = Printer::new(opts);
        let clk = clock();
        times
            .iter()
            .map(|&cycles| {
                p.line.clear();
                let h = Header {
                    clock: Some((&clk, cycles)),
                    trace: t,
                    class: c,
                };
                assert!(p.header(&h).unwrap());
                String::from_utf8(p.line.clone()).unwrap()
            })
            .collect()
    }

    #[test]
    fn default_header() {
        let t = trace(vec![
            ("hostname", EnvValue::Str("vm".into())),
            ("domain", EnvValue::Str("ust".into())),
            ("procname", EnvValue::Str("loomdemo".into())),
            ("vpid", EnvValue::Int(3526)),
        ]);
        let opts = PrettyOptions {
            wall: WallOptions {
                gmt: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let c = class(Some(13));
        let lines = headers(
            opts,
            &t,
            &c,
            &[Some(1_500_000_000), Some(1_500_014_700), None],
        );
        assert_eq!(
            lines[0],
            "[02:33:43.115765212] (+?.?????????) vm:loomdemo:(3526) loomdemo:tick: "
        );
        assert_eq!(
            lines[1],
            "[02:33:43.115779912] (+0.000014700) vm:loomdemo:(3526) loomdemo:tick: "
        );
        // An event without a clock value keeps the last delta.
        assert_eq!(
            lines[2],
            "[??:??:??.?????????] (+0.000014700) vm:loomdemo:(3526) loomdemo:tick: "
        );

        // Everything named, like `--names all --fields all`.
        let all = PrettyOptions {
            names: NameOptions {
                payload: true,
                context: true,
                header: true,
                scope: true,
            },
            fields: FieldOptions {
                trace: true,
                hostname: true,
                domain: true,
                procname: true,
                vpid: true,
                loglevel: true,
                emf: true,
            },
            ..opts
        };
        let lines = headers(all, &t, &c, &[Some(1_500_000_000)]);
        assert_eq!(
            lines[0],
            "timestamp = 02:33:43.115765212, delta = +?.?????????, trace = vm/ust/pid/x, , \
             trace:hostname = vm, trace:domain = ust, trace:procname = loomdemo, trace:vpid = (3526), \
             loglevel = TRACE_DEBUG_LINE (13), model.emf.uri = http://x/, name = loomdemo:tick, "
        );

        // Cycles, no delta, no environment: only the domain and log level.
        let cycles = PrettyOptions {
            clock_cycles: true,
            delta: false,
            fields: FieldOptions {
                hostname: false,
                procname: false,
                vpid: false,
                domain: true,
                loglevel: true,
                ..FieldOptions::default()
            },
            ..opts
        };
        let lines = headers(cycles, &t, &class(Some(99)), &[Some(42)]);
        assert_eq!(lines[0], "[00000000000000000042] ust loomdemo:tick: ");
        let lines = headers(cycles, &t, &class(Some(4)), &[Some(42), Some(50)]);
        assert_eq!(
            lines[1],
            "[00000000000000000050] ust:TRACE_WARNING (4) loomdemo:tick: "
        );
    }

    #[test]
    fn cycles_delta() {
        let t = trace(vec![]);
        let opts = PrettyOptions {
            clock_cycles: true,
            ..Default::default()
        };
        let lines = headers(opts, &t, &class(None), &[Some(7), Some(10)]);
        assert_eq!(
            lines[0],
            "[00000000000000000007] (+????????????) loomdemo:tick: "
        );
        assert_eq!(
            lines[1],
            "[00000000000000000010] (+000000000003) loomdemo:tick: "
        );
    }
}
