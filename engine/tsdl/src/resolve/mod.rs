//! Resolver: walks the syntax tree in order, resolving type names through
//! nested scopes (typealias/typedef, named struct/enum/variant) into
//! intermediate types; [`blocks`] interprets the attributes of every block
//! and finally links each dynamic scope's field references (see
//! [`crate::link`]) into the [`TraceClass`].

mod blocks;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{Attr, BlockEntry, BlockKind, Decl, Declarator, Dim, Enumerator, Item};
use crate::ast::{Spanned, TypeSpec};
use crate::attrs::{
    alignment, alignment_attr, base_value, bool_value, byte_order_value, clock_map_value,
    encoding_value, int_value,
};
use crate::error::{Pos, TsdlError};
use crate::ir::{
    ByteOrder, Callsite, ClockClass, DisplayBase, Encoding, EnumMapping, EnumType, EnvValue,
    FloatType, IntegerType, TraceClass,
};
use crate::parser::{Items, MAX_DEPTH};
use crate::types::{RNode, RType};

pub(crate) use crate::link::MAX_NODES;

/// Parses and resolves metadata text into a trace class, one top-level
/// item at a time: each item's syntax is dropped once resolved, so the
/// syntax tree of the whole text never exists at once. Errors are those of
/// parsing the whole text first: a syntax or lexical error anywhere wins
/// over a semantic one.
pub(crate) fn resolve_text(text: &str) -> Result<TraceClass, TsdlError> {
    let native = trace_byte_order(text)?;
    let mut r = Resolver {
        frames: vec![Frame::default()],
        native,
        trace: None,
        env: Vec::new(),
        env_index: HashMap::new(),
        clocks: Vec::new(),
        clock_names: HashSet::new(),
        streams: Vec::new(),
        stream_ids: HashMap::new(),
        events: Vec::new(),
        callsites: Vec::new(),
        interned: HashSet::new(),
    };
    let mut items = Items::new(text);
    while let Some(item) = items.next_item()? {
        if let Err(e) = r.item(&item) {
            return Err(items.or_syntax_error(e));
        }
    }
    r.finish()
}

/// The trace's byte order, needed before anything else because `native`
/// in type declarations that precede the `trace` block refers to it: the
/// items are parsed (and dropped) up to the first trace block that gives
/// it, usually among the first few.
fn trace_byte_order(text: &str) -> Result<ByteOrder, TsdlError> {
    let mut trace_pos = None;
    let mut items = Items::new(text);
    while let Some(item) = items.next_item()? {
        let Item::Block {
            kind: BlockKind::Trace,
            entries,
            pos,
        } = &item
        else {
            continue;
        };
        trace_pos.get_or_insert(*pos);
        for e in entries {
            if let BlockEntry::Attr(a) = e {
                if a.key == "byte_order" {
                    return match byte_order_value(a) {
                        Ok(Some(bo)) => Ok(bo),
                        Ok(None) => Err(items.or_syntax_error(TsdlError::semantic(
                            a.value_pos,
                            "the trace's byte_order cannot be `native`",
                        ))),
                        Err(e) => Err(items.or_syntax_error(e)),
                    };
                }
            }
        }
    }
    match trace_pos {
        Some(pos) => Err(TsdlError::semantic(
            pos,
            "the trace block has no byte_order attribute",
        )),
        None => Err(TsdlError::semantic(
            Pos { line: 1, column: 1 },
            "the metadata has no trace block (is this CTF 1.8 metadata?)",
        )),
    }
}

/// One lexical scope of type names.
#[derive(Default)]
struct Frame {
    aliases: HashMap<String, Rc<RNode>>,
    structs: HashMap<String, Rc<RNode>>,
    variants: HashMap<String, Rc<RNode>>,
    enums: HashMap<String, Rc<RNode>>,
}

/// Which name space a named type lives in (`struct foo` vs `enum foo`).
#[derive(Clone, Copy)]
enum Space {
    Alias,
    Struct,
    Variant,
    Enum,
}

impl Space {
    fn map(self, f: &Frame) -> &HashMap<String, Rc<RNode>> {
        match self {
            Space::Alias => &f.aliases,
            Space::Struct => &f.structs,
            Space::Variant => &f.variants,
            Space::Enum => &f.enums,
        }
    }

    fn map_mut(self, f: &mut Frame) -> &mut HashMap<String, Rc<RNode>> {
        match self {
            Space::Alias => &mut f.aliases,
            Space::Struct => &mut f.structs,
            Space::Variant => &mut f.variants,
            Space::Enum => &mut f.enums,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Space::Alias => "type",
            Space::Struct => "struct",
            Space::Variant => "variant",
            Space::Enum => "enum",
        }
    }
}

/// A dynamic-scope type waiting to be linked, with where it was assigned.
type ScopeType = Option<(Rc<RNode>, Pos)>;

struct TraceInfo {
    major: Option<u64>,
    minor: Option<u64>,
    uuid: Option<[u8; 16]>,
    packet_header: ScopeType,
}

struct PendingStream {
    id: u64,
    packet_context: ScopeType,
    event_header: ScopeType,
    event_context: ScopeType,
}

struct PendingEvent {
    pos: Pos,
    name: Option<String>,
    id: u64,
    stream_id: Option<u64>,
    loglevel: Option<i64>,
    emf_uri: Option<String>,
    context: ScopeType,
    payload: ScopeType,
}

struct Resolver {
    frames: Vec<Frame>,
    native: ByteOrder,
    trace: Option<TraceInfo>,
    env: Vec<(String, EnvValue)>,
    /// Position of each key in `env`.
    env_index: HashMap<String, usize>,
    clocks: Vec<ClockClass>,
    clock_names: HashSet<String>,
    streams: Vec<PendingStream>,
    /// Declared stream ids and where.
    stream_ids: HashMap<u64, Pos>,
    events: Vec<PendingEvent>,
    callsites: Vec<Callsite>,
    /// One copy of each distinct scope type (see `scope_type`).
    interned: HashSet<Rc<RNode>>,
}

impl Resolver {
    /// Resolves one top-level item.
    fn item(&mut self, item: &Item) -> Result<(), TsdlError> {
        match item {
            Item::Decl(d) => self.decl(d, None)?,
            Item::Block { kind, entries, pos } => {
                self.frames.push(Frame::default());
                match kind {
                    BlockKind::Trace => self.trace_block(entries, *pos)?,
                    BlockKind::Stream => self.stream_block(entries, *pos)?,
                    BlockKind::Event => self.event_block(entries, *pos)?,
                    BlockKind::Clock => self.clock_block(entries, *pos)?,
                    BlockKind::Env => self.env_block(entries)?,
                    BlockKind::Callsite => self.callsite_block(entries)?,
                }
                self.frames.pop();
            }
        }
        Ok(())
    }
}

/// Interprets one attribute of a block into the block's state.
type AttrFn<S> = fn(&mut S, &Attr) -> Result<(), TsdlError>;

/// Interprets one `key := type;` of a block into the block's state.
type AssignFn<S> =
    fn(&mut Resolver, &mut S, &str, &Spanned<TypeSpec>, Pos) -> Result<(), TsdlError>;

/// A member of a struct or an option of a variant, as declared.
type Member = (String, Rc<RNode>, Pos);

impl Resolver {
    fn lookup(&self, space: Space, name: &str) -> Option<Rc<RNode>> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| space.map(f).get(name).cloned())
    }

    fn define(
        &mut self,
        space: Space,
        name: &str,
        ty: Rc<RNode>,
        pos: Pos,
    ) -> Result<(), TsdlError> {
        let frame = self
            .frames
            .last_mut()
            .expect("the top-level frame is never popped");
        let map = space.map_mut(frame);
        if let Some(old) = map.get(name) {
            // Re-declaring the very same type is harmless; a different one
            // would make earlier and later uses disagree.
            if !Rc::ptr_eq(old, &ty) {
                return Err(TsdlError::semantic(
                    pos,
                    format!(
                        "{} `{name}` is already declared in this scope",
                        space.describe()
                    ),
                ));
            }
        }
        map.insert(name.to_string(), ty);
        Ok(())
    }

    /// Checks the limits on a freshly built node.
    fn checked(&self, node: Rc<RNode>, pos: Pos) -> Result<Rc<RNode>, TsdlError> {
        if node.depth > MAX_DEPTH {
            return Err(TsdlError::limit(
                pos,
                format!("type nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        if node.size > MAX_NODES {
            return Err(TsdlError::limit(
                pos,
                format!("type expands to more than {MAX_NODES} nodes"),
            ));
        }
        Ok(node)
    }

    /// Handles a declaration; fields go to `members` (an error where there is none).
    fn decl(&mut self, d: &Decl, members: Option<&mut Vec<Member>>) -> Result<(), TsdlError> {
        match d {
            Decl::TypeAlias { target, name, pos } => {
                let t = self.spec(target)?;
                self.define(Space::Alias, name, t, *pos)
            }
            Decl::Typedef { ty, declarators } => {
                let t = self.spec(ty)?;
                for dcl in declarators {
                    let w = self.wrap_dims(t.clone(), dcl)?;
                    self.define(Space::Alias, &dcl.name, w, dcl.pos)?;
                }
                Ok(())
            }
            Decl::Field { ty, declarators } => {
                let t = self.spec(ty)?;
                if declarators.is_empty() {
                    return Ok(());
                }
                let Some(members) = members else {
                    return Err(TsdlError::semantic(
                        declarators[0].pos,
                        format!(
                            "field `{}` declared outside a struct or variant",
                            declarators[0].name
                        ),
                    ));
                };
                for dcl in declarators {
                    let w = self.wrap_dims(t.clone(), dcl)?;
                    members.push((dcl.name.clone(), w, dcl.pos));
                }
                Ok(())
            }
        }
    }

    /// Applies `[N]` / `[len]` dimensions: `x[a][b]` is `a` arrays of `b` elements.
    fn wrap_dims(&self, mut t: Rc<RNode>, dcl: &Declarator) -> Result<Rc<RNode>, TsdlError> {
        for (dim, pos) in dcl.dims.iter().rev() {
            let ty = match dim {
                Dim::Len(n) => RType::Array {
                    element: t,
                    length: *n,
                },
                Dim::Field(path) => RType::Sequence {
                    element: t,
                    length: path.clone(),
                    pos: *pos,
                },
            };
            t = self.checked(RNode::new(ty), *pos)?;
        }
        Ok(t)
    }

    /// Resolves a type specifier.
    fn spec(&mut self, s: &Spanned<TypeSpec>) -> Result<Rc<RNode>, TsdlError> {
        let pos = s.pos;
        let node = match &s.node {
            TypeSpec::Named(name) => self
                .lookup(Space::Alias, name)
                .ok_or_else(|| TsdlError::semantic(pos, format!("unknown type `{name}`")))?,
            TypeSpec::Integer(attrs) => RNode::new(RType::Int(self.integer(attrs, pos)?)),
            TypeSpec::Float(attrs) => RNode::new(RType::Float(self.float(attrs, pos)?)),
            TypeSpec::String(attrs) => {
                let mut enc = Encoding::Utf8;
                for a in attrs {
                    if a.key == "encoding" {
                        enc = encoding_value(a)?;
                        // A string is text; `none` means the default here.
                        if enc == Encoding::None {
                            enc = Encoding::Utf8;
                        }
                    }
                }
                RNode::new(RType::Str(enc))
            }
            TypeSpec::Struct { name, body, align } => self.struct_spec(name, body, *align, pos)?,
            TypeSpec::Variant { name, tag, body } => self.variant_spec(name, tag, body, pos)?,
            TypeSpec::Enum {
                name,
                container,
                body,
            } => self.enum_spec(name, container.as_deref(), body, pos)?,
        };
        self.checked(node, pos)
    }

    /// Members of a struct or variant body, in a scope of their own.
    fn body(&mut self, decls: &[Decl]) -> Result<Vec<Member>, TsdlError> {
        self.frames.push(Frame::default());
        let mut members = Vec::new();
        let mut seen = HashSet::new();
        let res = decls.iter().try_for_each(|d| {
            let start = members.len();
            self.decl(d, Some(&mut members))?;
            for (name, _, pos) in &members[start..] {
                if !seen.insert(name.clone()) {
                    return Err(TsdlError::semantic(
                        *pos,
                        format!("duplicate field name `{name}`"),
                    ));
                }
            }
            Ok(())
        });
        self.frames.pop();
        res.map(|()| members)
    }

    fn struct_spec(
        &mut self,
        name: &Option<String>,
        body: &Option<Vec<Decl>>,
        align: Option<(u64, Pos)>,
        pos: Pos,
    ) -> Result<Rc<RNode>, TsdlError> {
        let min_align = match align {
            Some((a, apos)) => alignment(a, apos)?,
            None => 1,
        };
        let Some(decls) = body else {
            let name = name.as_deref().unwrap_or_default();
            let found = self
                .lookup(Space::Struct, name)
                .ok_or_else(|| TsdlError::semantic(pos, format!("unknown struct `{name}`")))?;
            if min_align <= 1 {
                return Ok(found);
            }
            // `struct foo align(N)`: same members, stricter alignment.
            return Ok(match &found.ty {
                RType::Struct {
                    fields,
                    min_align: a,
                } => RNode::new(RType::Struct {
                    fields: fields.clone(),
                    min_align: min_align.max(*a),
                }),
                _ => found,
            });
        };
        let fields = self
            .body(decls)?
            .into_iter()
            .map(|(n, t, _)| (n, t))
            .collect();
        let node = self.checked(RNode::new(RType::Struct { fields, min_align }), pos)?;
        if let Some(name) = name {
            self.define(Space::Struct, name, node.clone(), pos)?;
        }
        Ok(node)
    }

    fn variant_spec(
        &mut self,
        name: &Option<String>,
        tag: &Option<Vec<String>>,
        body: &Option<Vec<Decl>>,
        pos: Pos,
    ) -> Result<Rc<RNode>, TsdlError> {
        let Some(decls) = body else {
            let name = name.as_deref().unwrap_or_default();
            let found = self
                .lookup(Space::Variant, name)
                .ok_or_else(|| TsdlError::semantic(pos, format!("unknown variant `{name}`")))?;
            return Ok(match &found.ty {
                // `variant foo <tag>` uses the declared options with this
                // tag (or the declared tag); errors then point at this use.
                RType::Variant {
                    options,
                    tag: declared,
                    ..
                } => RNode::new(RType::Variant {
                    tag: tag.clone().or_else(|| declared.clone()),
                    options: options.clone(),
                    pos,
                }),
                _ => found,
            });
        };
        let options = self
            .body(decls)?
            .into_iter()
            .map(|(n, t, _)| (n, t))
            .collect();
        let node = self.checked(
            RNode::new(RType::Variant {
                tag: tag.clone(),
                options,
                pos,
            }),
            pos,
        )?;
        if let Some(name) = name {
            self.define(Space::Variant, name, node.clone(), pos)?;
        }
        Ok(node)
    }

    fn enum_spec(
        &mut self,
        name: &Option<String>,
        container: Option<&Spanned<TypeSpec>>,
        body: &Option<Vec<Enumerator>>,
        pos: Pos,
    ) -> Result<Rc<RNode>, TsdlError> {
        let Some(list) = body else {
            let name = name.as_deref().unwrap_or_default();
            return self
                .lookup(Space::Enum, name)
                .ok_or_else(|| TsdlError::semantic(pos, format!("unknown enum `{name}`")));
        };
        let container = match container {
            Some(c) => {
                let t = self.spec(c)?;
                t.as_int().cloned().ok_or_else(|| {
                    TsdlError::semantic(c.pos, "an enumeration's container must be an integer type")
                })?
            }
            // CTF: without `: type`, the container is whatever `int` is.
            None => self
                .lookup(Space::Alias, "int")
                .and_then(|t| t.as_int().cloned())
                .ok_or_else(|| {
                    TsdlError::semantic(
                        pos,
                        "enumeration without a container type, and no integer type `int` is declared",
                    )
                })?,
        };
        let (min, max) = int_range(&container);
        let mut mappings: Vec<EnumMapping> = Vec::new();
        let mut by_label: HashMap<&str, usize> = HashMap::new();
        let mut next: i128 = 0;
        for e in list {
            let (lo, hi) = e.value.unwrap_or((next, next));
            if lo > hi {
                return Err(TsdlError::semantic(
                    e.pos,
                    format!("enumerator `{}` has an empty range {lo} ... {hi}", e.label),
                ));
            }
            if lo < min || hi > max {
                return Err(TsdlError::semantic(
                    e.pos,
                    format!(
                        "enumerator `{}` value {lo} ... {hi} does not fit the {}-bit {} container",
                        e.label,
                        container.size,
                        if container.signed {
                            "signed"
                        } else {
                            "unsigned"
                        }
                    ),
                ));
            }
            next = hi + 1;
            // A label declared again adds a range to the same mapping.
            match by_label.get(e.label.as_str()) {
                Some(&i) => mappings[i].ranges.push((lo, hi)),
                None => {
                    by_label.insert(&e.label, mappings.len());
                    mappings.push(EnumMapping {
                        label: e.label.clone(),
                        ranges: vec![(lo, hi)],
                    });
                }
            }
        }
        let node = RNode::new(RType::Enum(EnumType {
            container,
            mappings,
        }));
        if let Some(name) = name {
            self.define(Space::Enum, name, node.clone(), pos)?;
        }
        Ok(node)
    }

    fn resolve_order(&self, a: &Attr) -> Result<ByteOrder, TsdlError> {
        Ok(byte_order_value(a)?.unwrap_or(self.native))
    }

    fn integer(&self, attrs: &[Attr], pos: Pos) -> Result<IntegerType, TsdlError> {
        let mut size = None;
        let mut align = None;
        let mut signed = false;
        let mut byte_order = self.native;
        let mut base = DisplayBase::Decimal;
        let mut encoding = Encoding::None;
        let mut mapped_clock = None;
        for a in attrs {
            match a.key.as_str() {
                "size" => {
                    let s = int_value(a)?;
                    if !(1..=64).contains(&s) {
                        return Err(TsdlError::semantic(
                            a.value_pos,
                            format!("integer size {s} is out of range 1..=64"),
                        ));
                    }
                    size = Some(s as u32);
                }
                "align" => align = Some(alignment_attr(a)?),
                "signed" => signed = bool_value(a)?,
                "byte_order" => byte_order = self.resolve_order(a)?,
                "base" => base = base_value(a)?,
                "encoding" => encoding = encoding_value(a)?,
                "map" => mapped_clock = Some(clock_map_value(a)?),
                _ => {} // CTF: unknown attributes are ignored.
            }
        }
        let Some(size) = size else {
            return Err(TsdlError::semantic(
                pos,
                "integer type has no size attribute",
            ));
        };
        Ok(IntegerType {
            size,
            align: align.unwrap_or(if size & 7 == 0 { 8 } else { 1 }),
            signed,
            byte_order,
            base,
            encoding,
            mapped_clock,
            varlen: false,
            role: None,
        })
    }

    fn float(&self, attrs: &[Attr], pos: Pos) -> Result<FloatType, TsdlError> {
        let mut exp_dig = None;
        let mut mant_dig = None;
        let mut align = None;
        let mut byte_order = self.native;
        for a in attrs {
            match a.key.as_str() {
                "exp_dig" => exp_dig = Some(int_value(a)?),
                "mant_dig" => mant_dig = Some(int_value(a)?),
                "align" => align = Some(alignment_attr(a)?),
                "byte_order" => byte_order = self.resolve_order(a)?,
                _ => {}
            }
        }
        let (Some(exp_dig), Some(mant_dig)) = (exp_dig, mant_dig) else {
            return Err(TsdlError::semantic(
                pos,
                "floating_point type needs both exp_dig and mant_dig",
            ));
        };
        // Only IEEE 754 binary32 and binary64 exist in practice, and only
        // they can be decoded.
        if !matches!((exp_dig, mant_dig), (8, 24) | (11, 53)) {
            return Err(TsdlError::semantic(
                pos,
                format!(
                    "unsupported floating_point type (exp_dig = {exp_dig}, mant_dig = {mant_dig}); \
                     only single (8, 24) and double (11, 53) precision are supported"
                ),
            ));
        }
        let size = (exp_dig + mant_dig) as u32;
        Ok(FloatType {
            exp_dig: exp_dig as u32,
            mant_dig: mant_dig as u32,
            align: align.unwrap_or(if size & 7 == 0 { 8 } else { 1 }),
            byte_order,
        })
    }
}

/// Smallest and largest value an integer type can hold.
fn int_range(t: &IntegerType) -> (i128, i128) {
    let bits = t.size.clamp(1, 64);
    if t.signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}
