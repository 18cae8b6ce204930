//! Intermediate resolved types: every type name is resolved, but variant tags
//! and sequence lengths are still field names. They become
//! [`crate::ir::FieldType`] once their dynamic scope is known (see
//! [`crate::link`]), because a named struct declared at top level (LTTng's
//! `event_header_compact`) only learns where its variant tag lives when it is
//! used as `event.header`.
//!
//! Nodes are shared through `Rc` so that aliases cost nothing to reuse; each
//! node records its depth and the number of nodes it expands to, so that the
//! limits can be enforced before anything is expanded.

use std::rc::Rc;

use crate::error::Pos;
use crate::ir::{Encoding, EnumType, FloatType, IntegerType};

/// A resolved type whose field references are still names.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) enum RType {
    /// Integer.
    Int(IntegerType),
    /// Floating point.
    Float(FloatType),
    /// String.
    Str(Encoding),
    /// Enumeration.
    Enum(EnumType),
    /// Structure: members and `align(N)`.
    Struct {
        /// Members in order.
        fields: Vec<(String, Rc<RNode>)>,
        /// Minimum alignment.
        min_align: u32,
    },
    /// Variant.
    Variant {
        /// Tag path as written; `None` for a variant declared without one.
        tag: Option<Vec<String>>,
        /// Options in order.
        options: Vec<(String, Rc<RNode>)>,
        /// Where the variant was written (errors about its tag point here).
        pos: Pos,
    },
    /// Fixed-length array.
    Array {
        /// Element.
        element: Rc<RNode>,
        /// Length.
        length: u64,
    },
    /// Sequence.
    Sequence {
        /// Element.
        element: Rc<RNode>,
        /// Length field path as written.
        length: Vec<String>,
        /// Where the length was written.
        pos: Pos,
    },
}

/// An [`RType`] with its nesting depth and expanded size.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct RNode {
    /// The type.
    pub ty: RType,
    /// Levels of nesting (1 for a leaf).
    pub depth: usize,
    /// Number of nodes once expanded into a tree (saturating).
    pub size: u64,
}

impl RNode {
    /// Wraps a type, computing depth and size from its children.
    pub(crate) fn new(ty: RType) -> Rc<RNode> {
        let children: Vec<&Rc<RNode>> = match &ty {
            RType::Struct { fields, .. } => fields.iter().map(|(_, n)| n).collect(),
            RType::Variant { options, .. } => options.iter().map(|(_, n)| n).collect(),
            RType::Array { element, .. } | RType::Sequence { element, .. } => vec![element],
            _ => Vec::new(),
        };
        let depth = 1 + children.iter().map(|c| c.depth).max().unwrap_or(0);
        let size = children
            .iter()
            .fold(1u64, |acc, c| acc.saturating_add(c.size));
        Rc::new(RNode { ty, depth, size })
    }

    /// The integer type, if this is a plain integer.
    pub(crate) fn as_int(&self) -> Option<&IntegerType> {
        match &self.ty {
            RType::Int(i) => Some(i),
            _ => None,
        }
    }
}
