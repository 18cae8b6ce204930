//! Linking: expands an intermediate type ([`crate::types::RNode`]) placed in
//! a dynamic scope into an [`ir::FieldType`](crate::ir::FieldType) tree,
//! resolving every variant tag and sequence length into a [`FieldPath`].
//!
//! A reference is either absolute (`event.fields.len`, ...) or relative: a
//! relative name is searched among the earlier members of the innermost
//! enclosing structure, then outward through the enclosing structures, then
//! among the top-level members of the dynamic scopes decoded earlier,
//! nearest first (event context, stream event context, event header, packet
//! context, packet header). Only fields decoded before the reference are
//! visible.

use std::collections::HashMap;

use crate::error::{Pos, TsdlError};
use crate::ir::{
    ArrayType, FieldPath, FieldType, NamedField, Scope, SequenceType, StructType, VariantType,
};
use crate::types::{RNode, RType};

/// Maximum number of type nodes in the whole resolved trace class. Aliases
/// are copied into every use, so a few lines of hostile metadata could
/// otherwise expand exponentially. Real traces stay far below (the largest
/// shared kernel trace, bug446190 with 541 event classes, has about 2 300).
pub const MAX_NODES: u64 = 2_000_000;

/// Member comparisons allowed while resolving references in one trace:
/// real traces need a few thousand; hostile metadata (thousands of
/// references into huge structures) would otherwise take quadratic time.
const MAX_LOOKUP_STEPS: u64 = 200_000_000;

/// Expands intermediate types, sharing one node budget and one lookup
/// budget across a trace.
pub(crate) struct Linker {
    budget: u64,
    steps: u64,
}

/// Position of member `name`, charging the comparisons made to `steps`.
fn find(members: &[NamedField], name: &str, steps: &mut u64) -> Option<usize> {
    let found = members.iter().position(|m| m.name == name);
    let cost = found.map_or(members.len(), |i| i + 1);
    *steps = steps.saturating_sub(cost as u64);
    found
}

/// A structure being expanded: where it is and the members done so far.
struct Frame {
    /// Member indices from the scope root to this structure.
    prefix: Vec<usize>,
    /// Member/option names from the scope root to this structure.
    names: Vec<String>,
    /// Members already expanded (the visible ones).
    members: Vec<NamedField>,
    /// Index of each member of `members` by name.
    index: HashMap<String, usize>,
}

struct Ctx<'a> {
    scope: Scope,
    prev: &'a [(Scope, &'a FieldType)],
    frames: Vec<Frame>,
    /// Where the scope was assigned (budget errors point here).
    pos: Pos,
}

/// How a scope is written in an absolute path, and in messages.
fn scope_prefix(s: Scope) -> &'static [&'static str] {
    match s {
        Scope::PacketHeader => &["trace", "packet", "header"],
        Scope::PacketContext => &["stream", "packet", "context"],
        Scope::EventHeader => &["stream", "event", "header"],
        Scope::StreamEventContext => &["stream", "event", "context"],
        Scope::EventContext => &["event", "context"],
        Scope::EventPayload => &["event", "fields"],
    }
}

const ALL_SCOPES: [Scope; 6] = [
    Scope::PacketHeader,
    Scope::PacketContext,
    Scope::EventHeader,
    Scope::StreamEventContext,
    Scope::EventContext,
    Scope::EventPayload,
];

fn scope_name(s: Scope) -> String {
    scope_prefix(s).join(".")
}

/// Splits an absolute path into its scope and the rest.
fn absolute(tokens: &[String]) -> Option<(Scope, &[String])> {
    ALL_SCOPES.iter().find_map(|&s| {
        let p = scope_prefix(s);
        let matches = tokens.len() > p.len() && tokens.iter().zip(p).all(|(t, p)| t == p);
        matches.then(|| (s, &tokens[p.len()..]))
    })
}

/// Follows member/option names down from `ft`; arrays and sequences are
/// crossed without an index (the element being decoded is meant).
fn descend<'t>(
    mut ft: &'t FieldType,
    tokens: &[String],
    steps: &mut u64,
) -> Option<(Vec<usize>, &'t FieldType)> {
    let mut path = Vec::new();
    for tok in tokens {
        while let FieldType::Array(ArrayType { element, .. })
        | FieldType::Sequence(SequenceType { element, .. }) = ft
        {
            ft = element;
        }
        let members = match ft {
            FieldType::Struct(s) => &s.fields,
            FieldType::Variant(v) => &v.options,
            _ => return None,
        };
        let i = find(members, tok, steps)?;
        path.push(i);
        ft = &members[i].ty;
    }
    Some((path, ft))
}

impl Ctx<'_> {
    /// Resolves a written reference to the field it designates.
    fn lookup(
        &self,
        tokens: &[String],
        steps: &mut u64,
    ) -> Result<(FieldPath, &FieldType), String> {
        let shown = tokens.join(".");
        let not_found = || format!("no field `{shown}` is declared before this point");
        if let Some((scope, rest)) = absolute(tokens) {
            if scope == self.scope {
                for f in self.frames.iter().rev() {
                    let n = f.names.len();
                    if rest.len() <= n || rest[..n] != f.names[..] {
                        continue;
                    }
                    let Some(&i) = f.index.get(&rest[n]) else {
                        continue;
                    };
                    let (sub, ft) =
                        descend(&f.members[i].ty, &rest[n + 1..], steps).ok_or_else(not_found)?;
                    let mut path = f.prefix.clone();
                    path.push(i);
                    path.extend(sub);
                    return Ok((FieldPath { scope, path }, ft));
                }
                return Err(not_found());
            }
            if let Some((_, root)) = self.prev.iter().find(|(s, _)| *s == scope) {
                let (path, ft) = descend(root, rest, steps).ok_or_else(not_found)?;
                return Ok((FieldPath { scope, path }, ft));
            }
            return Err(if scope > self.scope {
                format!(
                    "`{shown}` refers to `{}`, which is decoded after `{}`",
                    scope_name(scope),
                    scope_name(self.scope)
                )
            } else {
                format!(
                    "`{shown}` refers to `{}`, which is not defined",
                    scope_name(scope)
                )
            });
        }
        let (first, rest) = tokens.split_first().ok_or_else(not_found)?;
        for f in self.frames.iter().rev() {
            if let Some(&i) = f.index.get(first) {
                let (sub, ft) = descend(&f.members[i].ty, rest, steps).ok_or_else(not_found)?;
                let mut path = f.prefix.clone();
                path.push(i);
                path.extend(sub);
                return Ok((
                    FieldPath {
                        scope: self.scope,
                        path,
                    },
                    ft,
                ));
            }
        }
        for &(scope, root) in self.prev.iter().rev() {
            if let Some((path, ft)) = descend(root, tokens, steps) {
                return Ok((FieldPath { scope, path }, ft));
            }
        }
        Err(not_found())
    }
}

impl Linker {
    /// A linker that may create at most `budget` type nodes in total.
    pub(crate) fn new(budget: u64) -> Self {
        Linker {
            budget,
            steps: MAX_LOOKUP_STEPS,
        }
    }

    /// Expands `root`, the type assigned (at `pos`) to `scope`; `prev` holds
    /// the already expanded scopes decoded before it, in decoding order.
    pub(crate) fn link(
        &mut self,
        root: &RNode,
        scope: Scope,
        prev: &[(Scope, &FieldType)],
        pos: Pos,
    ) -> Result<FieldType, TsdlError> {
        let mut ctx = Ctx {
            scope,
            prev,
            frames: Vec::new(),
            pos,
        };
        self.expand(root, &mut ctx, &mut Vec::new(), &mut Vec::new())
    }

    fn check_steps(&self, pos: Pos) -> Result<(), TsdlError> {
        if self.steps == 0 {
            return Err(TsdlError::limit(
                pos,
                "resolving field references takes too many steps",
            ));
        }
        Ok(())
    }

    fn expand(
        &mut self,
        node: &RNode,
        ctx: &mut Ctx<'_>,
        prefix: &mut Vec<usize>,
        names: &mut Vec<String>,
    ) -> Result<FieldType, TsdlError> {
        if self.budget == 0 {
            return Err(TsdlError::limit(
                ctx.pos,
                format!("the trace's types expand to more than {} nodes", MAX_NODES),
            ));
        }
        self.budget -= 1;
        Ok(match &node.ty {
            RType::Int(i) => FieldType::Integer(i.clone()),
            RType::Float(f) => FieldType::Float(f.clone()),
            RType::Str(e) => FieldType::String(*e),
            RType::Enum(e) => FieldType::Enum(e.clone()),
            RType::Struct { fields, min_align } => {
                ctx.frames.push(Frame {
                    prefix: prefix.clone(),
                    names: names.clone(),
                    members: Vec::with_capacity(fields.len()),
                    index: HashMap::with_capacity(fields.len()),
                });
                for (i, (name, child)) in fields.iter().enumerate() {
                    prefix.push(i);
                    names.push(name.clone());
                    let ty = self.expand(child, ctx, prefix, names)?;
                    prefix.pop();
                    names.pop();
                    if let Some(f) = ctx.frames.last_mut() {
                        f.index.insert(name.clone(), f.members.len());
                        f.members.push(NamedField {
                            name: name.clone(),
                            ty,
                        });
                    }
                }
                let members = ctx.frames.pop().map(|f| f.members).unwrap_or_default();
                FieldType::Struct(StructType {
                    fields: members,
                    min_align: *min_align,
                })
            }
            RType::Variant { tag, options, pos } => {
                let Some(tag) = tag else {
                    return Err(TsdlError::semantic(
                        *pos,
                        "variant has no tag (write `variant name <tag>` where it is used)",
                    ));
                };
                let shown = tag.join(".");
                let found = ctx.lookup(tag, &mut self.steps);
                self.check_steps(*pos)?;
                let path = match found {
                    Ok((path, FieldType::Enum(_))) => path,
                    Ok(_) => {
                        return Err(TsdlError::semantic(
                            *pos,
                            format!("variant tag `{shown}` is not an enumeration"),
                        ))
                    }
                    Err(msg) => {
                        return Err(TsdlError::semantic(
                            *pos,
                            format!("cannot resolve variant tag: {msg}"),
                        ))
                    }
                };
                let mut out = Vec::with_capacity(options.len());
                for (j, (name, child)) in options.iter().enumerate() {
                    prefix.push(j);
                    names.push(name.clone());
                    let ty = self.expand(child, ctx, prefix, names)?;
                    prefix.pop();
                    names.pop();
                    out.push(NamedField {
                        name: name.clone(),
                        ty,
                    });
                }
                FieldType::Variant(VariantType {
                    tag_name: shown,
                    tag: path,
                    options: out,
                    selector_ranges: None,
                })
            }
            RType::Array { element, length } => FieldType::Array(ArrayType {
                element: Box::new(self.expand(element, ctx, prefix, names)?),
                length: *length,
            }),
            RType::Sequence {
                element,
                length,
                pos,
            } => {
                let shown = length.join(".");
                let found = ctx.lookup(length, &mut self.steps);
                self.check_steps(*pos)?;
                let path = match found {
                    Ok((path, FieldType::Integer(i))) if !i.signed => path,
                    Ok(_) => {
                        return Err(TsdlError::semantic(
                            *pos,
                            format!("sequence length `{shown}` is not an unsigned integer"),
                        ))
                    }
                    Err(msg) => {
                        return Err(TsdlError::semantic(
                            *pos,
                            format!("cannot resolve sequence length: {msg}"),
                        ))
                    }
                };
                FieldType::Sequence(SequenceType {
                    element: Box::new(self.expand(element, ctx, prefix, names)?),
                    length_name: shown,
                    length: path,
                })
            }
        })
    }
}
