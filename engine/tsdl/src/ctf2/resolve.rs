//! From the fragments' intermediate field classes to the trace class:
//! field locations become [`FieldPath`]s (member indices from a scope's
//! root, arrays crossed, variants by option), roles that time a field map
//! it to its data stream class's default clock, and event payloads and
//! contexts that are alike are shared, as the TSDL reader does.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::fields::{Fc, Loc};
use super::fragments::State;
use super::FragError;
use crate::ir::{
    ArrayType, ByteOrder, DisplayBase, Encoding, EnumType, EventClass, FieldPath, FieldType,
    IntegerType, NamedField, Role, Scope, SequenceType, StreamClass, StructType, TraceClass,
    VariantType,
};

/// Index of a scope in a `[_; 6]` of scope roots.
fn slot(s: Scope) -> usize {
    match s {
        Scope::PacketHeader => 0,
        Scope::PacketContext => 1,
        Scope::EventHeader => 2,
        Scope::StreamEventContext => 3,
        Scope::EventContext => 4,
        Scope::EventPayload => 5,
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::PacketHeader => "packet-header",
        Scope::PacketContext => "packet-context",
        Scope::EventHeader => "event-record-header",
        Scope::StreamEventContext => "event-record-common-context",
        Scope::EventContext => "event-record-specific-context",
        Scope::EventPayload => "event-record-payload",
    }
}

/// Follows member names from `fc`, crossing arrays and trying each
/// variant option in turn; pushes the indices onto `path`.
fn locate<'a>(fc: &'a Fc, names: &[String], path: &mut Vec<usize>) -> Option<&'a Fc> {
    let Some((first, rest)) = names.split_first() else {
        return Some(fc);
    };
    match fc {
        Fc::StaticArray { element, .. } | Fc::DynArray { element, .. } => {
            locate(element, names, path)
        }
        Fc::Struct { members, .. } => {
            let i = members.iter().position(|(n, _)| n == first)?;
            path.push(i);
            let found = locate(&members[i].1, rest, path);
            if found.is_none() {
                path.pop();
            }
            found
        }
        Fc::Variant { options, .. } => {
            for (i, (_, _, o)) in options.iter().enumerate() {
                path.push(i);
                if let Some(found) = locate(o, names, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        _ => None,
    }
}

/// Converts the field classes of one scope.
struct Conv<'a> {
    roots: [Option<&'a Fc>; 6],
    scope: Scope,
    /// Name of the data stream class's default clock.
    clock: Option<&'a str>,
    frag: (usize, usize),
}

/// What a location must point at.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    /// A length: an unsigned integer.
    Length,
    /// A variant selector: an integer.
    Selector,
}

impl Conv<'_> {
    fn err(&self, message: impl Into<String>) -> FragError {
        FragError::new(self.frag.0, self.frag.1, message)
    }

    fn path(&self, loc: &Loc, want: Want) -> Result<(String, FieldPath), FragError> {
        let shown = format!("{}/{}", scope_name(loc.origin), loc.names.join("/"));
        if loc.origin > self.scope {
            return Err(self.err(format!(
                "field location `{shown}` is in a scope decoded after `{}`",
                scope_name(self.scope)
            )));
        }
        let root = self.roots[slot(loc.origin)]
            .ok_or_else(|| self.err(format!("field location `{shown}`: no such scope")))?;
        let mut path = Vec::new();
        let target = locate(root, &loc.names, &mut path)
            .ok_or_else(|| self.err(format!("field location `{shown}`: no such field")))?;
        let ok = match (target, want) {
            (Fc::Int { int, .. }, Want::Length) => !int.signed,
            (Fc::Int { .. }, Want::Selector) => true,
            _ => false,
        };
        if !ok {
            return Err(self.err(format!(
                "field location `{shown}`: {}",
                match want {
                    Want::Length => "a length must be an unsigned integer",
                    Want::Selector => "a variant selector must be an integer",
                }
            )));
        }
        Ok((
            loc.names.join("."),
            FieldPath {
                scope: loc.origin,
                path,
            },
        ))
    }

    fn ty(&self, fc: &Fc) -> Result<FieldType, FragError> {
        let byte = |encoding| IntegerType {
            size: 8,
            align: 8,
            signed: false,
            byte_order: ByteOrder::Little,
            base: DisplayBase::Decimal,
            encoding,
            mapped_clock: None,
            varlen: false,
            role: None,
        };
        let array = |element: FieldType, length: u64| {
            FieldType::Array(ArrayType {
                element: Box::new(element),
                length,
            })
        };
        let seq = |element: FieldType, loc: &Loc| -> Result<FieldType, FragError> {
            let (length_name, length) = self.path(loc, Want::Length)?;
            Ok(FieldType::Sequence(SequenceType {
                element: Box::new(element),
                length_name,
                length,
            }))
        };
        Ok(match fc {
            Fc::Int { int, mappings } => {
                let mut int = int.clone();
                if matches!(
                    int.role,
                    Some(Role::DefaultClockTimestamp | Role::PacketEndDefaultClockTimestamp)
                ) {
                    int.mapped_clock = self.clock.map(str::to_string);
                }
                match mappings {
                    Some(m) => FieldType::Enum(EnumType {
                        container: int,
                        mappings: m.clone(),
                    }),
                    None => FieldType::Integer(int),
                }
            }
            Fc::Float(f) => FieldType::Float(f.clone()),
            Fc::Str => FieldType::String(Encoding::Utf8),
            Fc::StaticText(n) => array(FieldType::Integer(byte(Encoding::Utf8)), *n),
            Fc::DynText(loc) => seq(FieldType::Integer(byte(Encoding::Utf8)), loc)?,
            Fc::StaticBlob(n) => array(FieldType::Integer(byte(Encoding::None)), *n),
            Fc::DynBlob(loc) => seq(FieldType::Integer(byte(Encoding::None)), loc)?,
            Fc::Struct { members, min_align } => FieldType::Struct(StructType {
                fields: members
                    .iter()
                    .map(|(name, fc)| {
                        Ok(NamedField {
                            name: escaped(name),
                            ty: self.ty(fc)?,
                        })
                    })
                    .collect::<Result<_, FragError>>()?,
                min_align: *min_align,
            }),
            Fc::StaticArray { element, length } => array(self.ty(element)?, *length),
            Fc::DynArray { element, length } => seq(self.ty(element)?, length)?,
            Fc::Variant { selector, options } => {
                let (tag_name, tag) = self.path(selector, Want::Selector)?;
                let mut opts = Vec::with_capacity(options.len());
                let mut ranges = Vec::with_capacity(options.len());
                for (name, r, fc) in options {
                    opts.push(NamedField {
                        name: escaped(name),
                        ty: self.ty(fc)?,
                    });
                    ranges.push(r.clone());
                }
                FieldType::Variant(VariantType {
                    tag_name,
                    tag,
                    options: opts,
                    selector_ranges: Some(ranges),
                })
            }
        })
    }
}

/// A CTF 2 member or option name in the trace class's TSDL form: there a
/// leading underscore escapes the name and readers remove one
/// (`display_name`); CTF 2 names escape nothing, so one starting with an
/// underscore gets another (babeltrace2 shows `_x` for a CTF 2 `_x`).
fn escaped(name: &str) -> String {
    if name.starts_with('_') {
        format!("_{name}")
    } else {
        name.to_string()
    }
}

/// One copy of each distinct event context and payload.
#[derive(Default)]
struct Shared(HashSet<Arc<FieldType>>);

impl Shared {
    fn get(&mut self, t: FieldType) -> Arc<FieldType> {
        if let Some(k) = self.0.get(&t) {
            return Arc::clone(k);
        }
        let a = Arc::new(t);
        self.0.insert(Arc::clone(&a));
        a
    }
}

/// The byte order of the packet header's first fixed-length integer (the
/// magic number in practice): CTF 2 has no trace-wide byte order, but the
/// trace class keeps one for readers that show it.
fn native_order(fc: Option<&Fc>) -> ByteOrder {
    fn first(fc: &Fc) -> Option<ByteOrder> {
        match fc {
            Fc::Int { int, .. } if !int.varlen => Some(int.byte_order),
            Fc::Struct { members, .. } => members.iter().find_map(|(_, m)| first(m)),
            _ => None,
        }
    }
    fc.and_then(first).unwrap_or(ByteOrder::Little)
}

/// Resolves every scope and assembles the trace class. `fragments` and
/// `end` (the last fragment's offset) locate errors found at the end.
pub(crate) fn finish(state: State, fragments: usize, end: usize) -> Result<TraceClass, FragError> {
    if !state.preamble {
        return Err(FragError::new(fragments, end, "no preamble fragment"));
    }
    let mut roots: [Option<&Fc>; 6] = [None; 6];
    roots[0] = state.packet_header.as_ref();
    let packet_header = match &state.packet_header {
        Some(fc) => Some(
            Conv {
                roots,
                scope: Scope::PacketHeader,
                clock: None,
                frag: (fragments, end),
            }
            .ty(fc)?,
        ),
        None => None,
    };
    let clock_name = |id: &Option<String>| {
        id.as_deref().and_then(|id| {
            state
                .clocks
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, c)| c.name.as_str())
        })
    };
    let mut streams = BTreeMap::new();
    for s in &state.streams {
        let mut r = roots;
        r[1] = s.packet_context.as_ref();
        r[2] = s.event_header.as_ref();
        r[3] = s.event_context.as_ref();
        let conv = |scope, fc: &Option<Fc>| -> Result<Option<FieldType>, FragError> {
            fc.as_ref()
                .map(|fc| {
                    Conv {
                        roots: r,
                        scope,
                        clock: clock_name(&s.clock),
                        frag: s.frag,
                    }
                    .ty(fc)
                })
                .transpose()
        };
        streams.insert(
            s.id,
            StreamClass {
                id: s.id,
                packet_context: conv(Scope::PacketContext, &s.packet_context)?,
                event_header: conv(Scope::EventHeader, &s.event_header)?,
                event_context: conv(Scope::StreamEventContext, &s.event_context)?,
                events: BTreeMap::new(),
            },
        );
    }
    let mut shared = Shared::default();
    for e in &state.events {
        // The event's data stream class exists: `fragments` checked it.
        let Some(s) = state.streams.iter().find(|s| s.id == e.stream_id) else {
            continue;
        };
        let mut r = roots;
        r[1] = s.packet_context.as_ref();
        r[2] = s.event_header.as_ref();
        r[3] = s.event_context.as_ref();
        r[4] = e.context.as_ref();
        r[5] = e.payload.as_ref();
        let conv = |scope, fc: &Option<Fc>| -> Result<Option<FieldType>, FragError> {
            fc.as_ref()
                .map(|fc| {
                    Conv {
                        roots: r,
                        scope,
                        clock: clock_name(&s.clock),
                        frag: e.frag,
                    }
                    .ty(fc)
                })
                .transpose()
        };
        let context = conv(Scope::EventContext, &e.context)?.map(|t| shared.get(t));
        let payload = conv(Scope::EventPayload, &e.payload)?.map(|t| shared.get(t));
        let class = EventClass {
            id: e.id,
            name: e.name.clone(),
            stream_id: e.stream_id,
            loglevel: e.loglevel,
            emf_uri: e.emf_uri.clone(),
            context,
            payload,
        };
        if let Some(stream) = streams.get_mut(&e.stream_id) {
            stream.events.insert(class.id, Arc::new(class));
        }
    }
    Ok(TraceClass {
        major: 2,
        minor: 0,
        uuid: state.uuid,
        uid: state.uid,
        byte_order: native_order(state.packet_header.as_ref()),
        packet_header,
        env: state.env,
        clocks: state.clocks.into_iter().map(|(_, c)| c).collect(),
        streams,
        callsites: Vec::new(),
    })
}
