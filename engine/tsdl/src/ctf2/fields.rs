//! CTF 2 field classes, from JSON to an intermediate tree ([`Fc`]):
//! aliases are expanded, relative field locations are made absolute (as
//! names from the root of a scope), and every value is checked. The tree
//! becomes [`crate::ir::FieldType`]s in [`super::resolve`], once every
//! scope a location may point into is known.
//!
//! Field classes that have a CTF 1.8 counterpart take its representation:
//! a static-length string is a text array of bytes, a BLOB an array of
//! bytes, a boolean or a bit array an unsigned integer. Optional fields
//! and UTF-16/32 strings have none and are refused with a clear error.

use std::cell::Cell;
use std::collections::HashMap;

use serde_json::Value;

use super::json::{int128, Frag};
use super::FragError;
use crate::ir::{
    ByteOrder, DisplayBase, Encoding, EnumMapping, FloatType, IntegerType, Role, Scope,
};
use crate::link::MAX_NODES;
use crate::parser::MAX_DEPTH;

/// A field location made absolute: the scope and member names from its
/// root structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loc {
    /// The scope the path starts from.
    pub(crate) origin: Scope,
    /// Member names from the scope's root structure.
    pub(crate) names: Vec<String>,
}

/// An intermediate field class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fc {
    /// Fixed- or variable-length integer, boolean or bit array; with
    /// mappings, an enumeration.
    Int {
        /// The integer (its `mapped_clock` is set in `resolve`).
        int: IntegerType,
        /// Mappings (label → ranges).
        mappings: Option<Vec<EnumMapping>>,
    },
    /// Floating point number.
    Float(FloatType),
    /// Null-terminated string.
    Str,
    /// Static-length string of this many bytes.
    StaticText(u64),
    /// Dynamic-length string, its byte count at the location.
    DynText(Loc),
    /// Static-length BLOB of this many bytes.
    StaticBlob(u64),
    /// Dynamic-length BLOB, its byte count at the location.
    DynBlob(Loc),
    /// Structure.
    Struct {
        /// Members in order.
        members: Vec<(String, Fc)>,
        /// Minimum alignment in bits.
        min_align: u32,
    },
    /// Static-length array.
    StaticArray {
        /// Element class.
        element: Box<Fc>,
        /// Element count.
        length: u64,
    },
    /// Dynamic-length array, its element count at the location.
    DynArray {
        /// Element class.
        element: Box<Fc>,
        /// Where the count is.
        length: Loc,
    },
    /// Variant: each option with the selector ranges that select it.
    Variant {
        /// Where the selector is.
        selector: Loc,
        /// Options: name (may be empty), ranges, class.
        options: Vec<VariantOption>,
    },
}

/// A variant option: its name (may be empty), the selector ranges that
/// select it, its class.
pub(crate) type VariantOption = (String, Vec<(i128, i128)>, Fc);

/// JSON name of a scope (a field location's `origin`).
pub(crate) fn scope_of(name: &str) -> Option<Scope> {
    Some(match name {
        "packet-header" => Scope::PacketHeader,
        "packet-context" => Scope::PacketContext,
        "event-record-header" => Scope::EventHeader,
        "event-record-common-context" => Scope::StreamEventContext,
        "event-record-specific-context" => Scope::EventContext,
        "event-record-payload" => Scope::EventPayload,
        _ => return None,
    })
}

fn role_of(name: &str) -> Option<Role> {
    Some(match name {
        "packet-magic-number" => Role::PacketMagicNumber,
        "data-stream-class-id" => Role::DataStreamClassId,
        "data-stream-id" => Role::DataStreamId,
        "packet-total-length" => Role::PacketTotalLength,
        "packet-content-length" => Role::PacketContentLength,
        "default-clock-timestamp" => Role::DefaultClockTimestamp,
        "packet-end-default-clock-timestamp" => Role::PacketEndDefaultClockTimestamp,
        "discarded-event-record-counter-snapshot" => Role::DiscardedEventRecordCounterSnapshot,
        "packet-sequence-number" => Role::PacketSequenceNumber,
        "event-record-class-id" => Role::EventRecordClassId,
        // `metadata-stream-uuid` (a BLOB) and unknown roles mean nothing
        // to an integer reader.
        _ => return None,
    })
}

/// Field-class aliases defined so far: their JSON, converted at each use
/// (a relative location inside means something different at each).
///
/// Also counts the nodes made by expanding aliases in the whole metadata:
/// the JSON's own nodes are bounded by its size, but a few aliases used
/// by many event record classes could otherwise make the trace class
/// grow far beyond it (the TSDL reader's limit, [`MAX_NODES`], applies).
#[derive(Debug, Default)]
pub(crate) struct Aliases {
    map: HashMap<String, Value>,
    expanded: Cell<u64>,
}

impl Aliases {
    /// Defines an alias; redefining one is an error.
    pub(crate) fn define(
        &mut self,
        frag: &Frag<'_>,
        name: &str,
        fc: &Value,
    ) -> Result<(), FragError> {
        if self.map.contains_key(name) {
            return Err(frag.err(format!("field-class alias `{name}` is already defined")));
        }
        self.map.insert(name.to_string(), fc.clone());
        Ok(())
    }
}

/// Converts the field classes of one fragment.
pub(crate) struct Builder<'a> {
    frag: Frag<'a>,
    aliases: &'a Aliases,
    scope: Scope,
    /// Member names from the scope root to the field being converted.
    names: Vec<String>,
    /// Nodes made so far (aliases can expand exponentially).
    nodes: u64,
    /// Alias names being expanded (an alias cannot refer to itself).
    expanding: Vec<String>,
}

impl<'a> Builder<'a> {
    /// A builder for the fields of `frag`, in the scope `scope`.
    pub(crate) fn new(frag: Frag<'a>, aliases: &'a Aliases, scope: Scope) -> Self {
        Builder {
            frag,
            aliases,
            scope,
            names: Vec::new(),
            nodes: 0,
            expanding: Vec::new(),
        }
    }

    /// Converts a scope's root field class (which must be a structure).
    pub(crate) fn scope_root(&mut self, v: &Value, key: &str) -> Result<Fc, FragError> {
        let fc = self.fc(v, key, 0)?;
        if !matches!(fc, Fc::Struct { .. }) {
            return Err(self
                .frag
                .err(format!("`{key}` must be a structure field class")));
        }
        Ok(fc)
    }

    /// Converts any field class; `what` names it in errors.
    pub(crate) fn fc(&mut self, v: &Value, what: &str, depth: usize) -> Result<Fc, FragError> {
        if depth > MAX_DEPTH {
            return Err(self.frag.err(format!(
                "{what}: field classes nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.nodes += 1;
        let expanded = &self.aliases.expanded;
        if !self.expanding.is_empty() {
            expanded.set(expanded.get() + 1);
        }
        if self.nodes > MAX_NODES || expanded.get() > MAX_NODES {
            return Err(self.frag.err(format!(
                "{what}: field classes expand to more than {MAX_NODES} nodes"
            )));
        }
        if let Value::String(alias) = v {
            let Some(target) = self.aliases.map.get(alias) else {
                return Err(self
                    .frag
                    .err(format!("{what}: unknown field-class alias `{alias}`")));
            };
            if self.expanding.contains(alias) {
                return Err(self
                    .frag
                    .err(format!("{what}: alias `{alias}` refers to itself")));
            }
            self.expanding.push(alias.clone());
            let r = self.fc(target, what, depth + 1);
            self.expanding.pop();
            return r;
        }
        let o = self.frag.obj(v, what)?;
        let ty = o.req_str("type")?;
        let int = |signed: bool, varlen: bool| -> Result<Fc, FragError> {
            let (size, align, byte_order) = if varlen {
                (64, 8, ByteOrder::Little)
            } else {
                let size = o.req_u64("length")?;
                if !(1..=64).contains(&size) {
                    return Err(o.err(format!("length {size} is out of range 1..=64")));
                }
                (size as u32, alignment(&o, "alignment")?, byte_order(&o)?)
            };
            let base = match o.u64("preferred-display-base")? {
                None | Some(10) => DisplayBase::Decimal,
                Some(2) => DisplayBase::Binary,
                Some(8) => DisplayBase::Octal,
                Some(16) => DisplayBase::Hexadecimal,
                Some(b) => {
                    return Err(o.err(format!("preferred-display-base {b} is not 2, 8, 10 or 16")))
                }
            };
            let mut role = None;
            for r in o.array("roles")?.map(Vec::as_slice).unwrap_or_default() {
                let r = r.as_str().ok_or_else(|| o.err("`roles` must be strings"))?;
                role = role.or(role_of(r));
            }
            let mappings = match o.obj("mappings")? {
                None => None,
                Some(m) => Some(mappings(&m, signed)?),
            };
            Ok(Fc::Int {
                int: IntegerType {
                    size,
                    align,
                    signed,
                    byte_order,
                    base,
                    encoding: Encoding::None,
                    mapped_clock: None,
                    varlen,
                    role,
                },
                mappings,
            })
        };
        let fc = match ty {
            "fixed-length-unsigned-integer"
            | "fixed-length-unsigned-enumeration"
            | "fixed-length-boolean" => int(false, false)?,
            "fixed-length-signed-integer" | "fixed-length-signed-enumeration" => int(true, false)?,
            "fixed-length-bit-array" | "fixed-length-bit-map" => {
                let mut fc = int(false, false)?;
                if let Fc::Int { int, .. } = &mut fc {
                    int.base = DisplayBase::Hexadecimal;
                }
                // A bit map's flags are not mappings.
                if let Fc::Int { mappings, .. } = &mut fc {
                    *mappings = None;
                }
                fc
            }
            "variable-length-unsigned-integer" | "variable-length-unsigned-enumeration" => {
                int(false, true)?
            }
            "variable-length-signed-integer" | "variable-length-signed-enumeration" => {
                int(true, true)?
            }
            "fixed-length-floating-point-number" => {
                let (exp_dig, mant_dig) = match o.req_u64("length")? {
                    32 => (8, 24),
                    64 => (11, 53),
                    n => return Err(o.err(format!("floating point length {n} is not 32 or 64"))),
                };
                Fc::Float(FloatType {
                    exp_dig,
                    mant_dig,
                    align: alignment(&o, "alignment")?,
                    byte_order: byte_order(&o)?,
                })
            }
            "null-terminated-string" => {
                utf8(&o)?;
                Fc::Str
            }
            "static-length-string" => {
                utf8(&o)?;
                Fc::StaticText(o.req_u64("length")?)
            }
            "dynamic-length-string" => {
                utf8(&o)?;
                Fc::DynText(self.loc(&o, "length-field-location")?)
            }
            "static-length-blob" => Fc::StaticBlob(o.req_u64("length")?),
            "dynamic-length-blob" => Fc::DynBlob(self.loc(&o, "length-field-location")?),
            "structure" => {
                let mut members: Vec<(String, Fc)> = Vec::new();
                for (i, m) in o
                    .array("member-classes")?
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    let mo = self
                        .frag
                        .obj(m, &format!("{what}: member class {}", i + 1))?;
                    let name = mo.req_str("name")?;
                    if members.iter().any(|(n, _)| n == name) {
                        return Err(mo.err(format!("duplicate member name `{name}`")));
                    }
                    let fcv = mo
                        .get("field-class")
                        .ok_or_else(|| mo.err("missing `field-class`"))?;
                    self.names.push(name.to_string());
                    let r = self.fc(fcv, &format!("field class `{name}`"), depth + 1);
                    self.names.pop();
                    members.push((name.to_string(), r?));
                }
                Fc::Struct {
                    members,
                    min_align: alignment(&o, "minimum-alignment")?,
                }
            }
            "static-length-array" | "dynamic-length-array" => {
                let ev = o
                    .get("element-field-class")
                    .ok_or_else(|| o.err("missing `element-field-class`"))?;
                let element = Box::new(self.fc(ev, &format!("{what}: element"), depth + 1)?);
                if alignment(&o, "minimum-alignment")? > 1 {
                    return Err(o.err("arrays with a minimum-alignment are not supported"));
                }
                if ty == "static-length-array" {
                    Fc::StaticArray {
                        element,
                        length: o.req_u64("length")?,
                    }
                } else {
                    Fc::DynArray {
                        element,
                        length: self.loc(&o, "length-field-location")?,
                    }
                }
            }
            "variant" => {
                let selector = self.loc(&o, "selector-field-location")?;
                let mut options = Vec::new();
                let list = o.array("options")?.map(Vec::as_slice).unwrap_or_default();
                if list.is_empty() {
                    return Err(o.err("a variant needs at least one option"));
                }
                for (i, opt) in list.iter().enumerate() {
                    let oo = self.frag.obj(opt, &format!("{what}: option {}", i + 1))?;
                    let name = oo.str("name")?.unwrap_or_default().to_string();
                    let rv = oo
                        .get("selector-field-ranges")
                        .ok_or_else(|| oo.err("missing `selector-field-ranges`"))?;
                    let ranges = ranges(&oo, rv)?;
                    let fcv = oo
                        .get("field-class")
                        .ok_or_else(|| oo.err("missing `field-class`"))?;
                    let fc = self.fc(fcv, &format!("{what}: option {}", i + 1), depth + 1)?;
                    options.push((name, ranges, fc));
                }
                Fc::Variant { selector, options }
            }
            "optional" => {
                return Err(o.err("optional field classes are not supported yet"));
            }
            other => return Err(o.err(format!("unknown field class type `{other}`"))),
        };
        Ok(fc)
    }

    /// A field location (`{origin, path}`, or the older array form whose
    /// first item is the origin), made absolute.
    fn loc(&self, o: &super::json::Obj<'_>, key: &str) -> Result<Loc, FragError> {
        let v = o
            .get(key)
            .ok_or_else(|| o.err(format!("missing `{key}`")))?;
        let bad = |m: &str| o.err(format!("`{key}`: {m}"));
        let (origin, path): (Option<&str>, &[Value]) = match v {
            Value::Object(m) => {
                let origin = match m.get("origin") {
                    None => None,
                    Some(Value::String(s)) => Some(s.as_str()),
                    Some(_) => return Err(bad("`origin` must be a string")),
                };
                match m.get("path") {
                    Some(Value::Array(a)) => (origin, a.as_slice()),
                    _ => return Err(bad("`path` must be an array")),
                }
            }
            Value::Array(a) => match a.split_first() {
                Some((Value::String(s), rest)) => (Some(s.as_str()), rest),
                _ => return Err(bad("the first item must be the origin scope")),
            },
            _ => return Err(bad("must be an object")),
        };
        let mut items: Vec<Option<&str>> = Vec::with_capacity(path.len());
        for p in path {
            items.push(match p {
                Value::String(s) => Some(s.as_str()),
                Value::Null => None,
                _ => return Err(bad("path items must be strings or null")),
            });
        }
        if items.last().is_none_or(|i| i.is_none()) {
            return Err(bad("the path must end with a member name"));
        }
        if let Some(origin) = origin {
            let origin =
                scope_of(origin).ok_or_else(|| bad(&format!("unknown origin `{origin}`")))?;
            if items.iter().any(Option::is_none) {
                return Err(bad("an absolute path cannot go to a parent (null)"));
            }
            return Ok(Loc {
                origin,
                names: items.into_iter().flatten().map(str::to_string).collect(),
            });
        }
        // Relative: from the structure holding the field being converted
        // (the last name is its own), each leading null one level up; a
        // null after a name cancels it.
        let mut base: Vec<&str> = self.names.iter().map(String::as_str).collect();
        base.pop();
        let mut rel: Vec<&str> = Vec::new();
        let mut leading = true;
        for item in items {
            match item {
                None if leading => {
                    if base.pop().is_none() {
                        return Err(bad("too many parent (null) path items"));
                    }
                }
                None => {
                    rel.pop();
                }
                Some(n) => {
                    leading = false;
                    rel.push(n);
                }
            }
        }
        base.extend(rel);
        Ok(Loc {
            origin: self.scope,
            names: base.into_iter().map(str::to_string).collect(),
        })
    }
}

/// `alignment` / `minimum-alignment`: a power of two, 1 when absent.
fn alignment(o: &super::json::Obj<'_>, key: &str) -> Result<u32, FragError> {
    match o.u64(key)? {
        None => Ok(1),
        Some(a) if a.is_power_of_two() && a <= 1 << 16 => Ok(a as u32),
        Some(a) => Err(o.err(format!("`{key}` {a} is not a power of two up to 65536"))),
    }
}

fn byte_order(o: &super::json::Obj<'_>) -> Result<ByteOrder, FragError> {
    let bo = match o.req_str("byte-order")? {
        "little-endian" => ByteOrder::Little,
        "big-endian" => ByteOrder::Big,
        other => return Err(o.err(format!("unknown byte order `{other}`"))),
    };
    // The default bit order follows the byte order; the other one is not
    // something any tracer writes.
    let natural = match bo {
        ByteOrder::Little => "last-to-first",
        ByteOrder::Big => "first-to-last",
    };
    match o.str("bit-order")? {
        None => {}
        Some(b) if b == natural => {}
        Some(b) => {
            return Err(o.err(format!(
                "bit order `{b}` with this byte order is not supported"
            )))
        }
    }
    Ok(bo)
}

fn utf8(o: &super::json::Obj<'_>) -> Result<(), FragError> {
    match o.str("encoding")? {
        None | Some("utf-8") => Ok(()),
        Some(e) => Err(o.err(format!(
            "string encoding `{e}` is not supported (only UTF-8)"
        ))),
    }
}

/// An integer range set: `[[low, high], ...]`, each `low <= high`.
fn ranges(o: &super::json::Obj<'_>, v: &Value) -> Result<Vec<(i128, i128)>, FragError> {
    let bad = || o.err("integer ranges must be [[low, high], ...] with low <= high");
    let Value::Array(list) = v else {
        return Err(bad());
    };
    let mut out = Vec::with_capacity(list.len());
    for r in list {
        let Some([lo, hi]) = r
            .as_array()
            .map(Vec::as_slice)
            .and_then(|a| <&[Value; 2]>::try_from(a).ok())
        else {
            return Err(bad());
        };
        let (Some(lo), Some(hi)) = (int128(lo), int128(hi)) else {
            return Err(bad());
        };
        if lo > hi {
            return Err(bad());
        }
        out.push((lo, hi));
    }
    Ok(out)
}

/// `mappings`: label → integer ranges, checked against the signedness.
fn mappings(m: &super::json::Obj<'_>, signed: bool) -> Result<Vec<EnumMapping>, FragError> {
    let mut out = Vec::new();
    for (label, v) in m.entries() {
        let ranges = ranges(m, v)?;
        let fits = |x: i128| {
            if signed {
                (i64::MIN as i128..=i64::MAX as i128).contains(&x)
            } else {
                (0..=u64::MAX as i128).contains(&x)
            }
        };
        if ranges.iter().any(|&(lo, hi)| !fits(lo) || !fits(hi)) {
            return Err(m.err(format!(
                "mapping `{label}` has a range out of the integer's values"
            )));
        }
        out.push(EnumMapping {
            label: label.clone(),
            ranges,
        });
    }
    Ok(out)
}
