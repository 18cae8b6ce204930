//! Syntax tree of TSDL text, as written: type names are not resolved yet and
//! attribute values are kept untyped. The resolver turns it into the IR.

use crate::error::Pos;

/// An attribute value (right of `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Integer literal, sign applied.
    Int(i128),
    /// String literal.
    Str(String),
    /// Identifier or dotted identifier path, e.g. `le` or `clock.monotonic.value`.
    Path(Vec<String>),
}

/// `key = value;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attr {
    /// Dotted key, e.g. `byte_order` or `model.emf.uri`.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Position of the value (errors about values point there).
    pub value_pos: Pos,
    /// Position of the key.
    pub pos: Pos,
}

/// One dimension of an array or sequence declarator: `[4]` or `[len]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dim {
    /// Fixed length.
    Len(u64),
    /// Length taken from a field (relative or absolute dotted path).
    Field(Vec<String>),
}

/// A declarator: name plus array/sequence dimensions, outermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declarator {
    /// The declared name.
    pub name: String,
    /// Dimensions in written order (`x[a][b]`: `[a, b]`).
    pub dims: Vec<(Dim, Pos)>,
    /// Position of the name.
    pub pos: Pos,
}

/// An enumerator: `LABEL`, `LABEL = v` or `LABEL = lo ... hi`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Enumerator {
    /// The label.
    pub label: String,
    /// Explicit value or range.
    pub value: Option<(i128, i128)>,
    /// Position of the label.
    pub pos: Pos,
}

/// A type specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeSpec {
    /// A type name made of one or more words, e.g. `uint32_t`, `unsigned long`.
    Named(String),
    /// `integer { ... }`.
    Integer(Vec<Attr>),
    /// `floating_point { ... }`.
    Float(Vec<Attr>),
    /// `string` or `string { ... }`.
    String(Vec<Attr>),
    /// `struct [name] [{ ... }] [align(N)]`.
    Struct {
        /// Name, if any.
        name: Option<String>,
        /// Body, if given (a reference to a named struct has none).
        body: Option<Vec<Decl>>,
        /// `align(N)`.
        align: Option<(u64, Pos)>,
    },
    /// `variant [name] [<tag>] [{ ... }]`.
    Variant {
        /// Name, if any.
        name: Option<String>,
        /// Tag path, if any.
        tag: Option<Vec<String>>,
        /// Body, if given.
        body: Option<Vec<Decl>>,
    },
    /// `enum [name] [: container] [{ ... }]`.
    Enum {
        /// Name, if any.
        name: Option<String>,
        /// Container type, if given.
        container: Option<Box<Spanned<TypeSpec>>>,
        /// Enumerators, if given.
        body: Option<Vec<Enumerator>>,
    },
}

/// A value with the position it starts at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spanned<T> {
    /// The value.
    pub node: T,
    /// Where it starts.
    pub pos: Pos,
}

/// A declaration inside a struct/variant body, a block, or at top level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decl {
    /// `typealias TYPE := NAME;`
    TypeAlias {
        /// The aliased type.
        target: Spanned<TypeSpec>,
        /// The new name (words joined with one space).
        name: String,
        /// Position of the new name.
        pos: Pos,
    },
    /// `typedef TYPE name[dims], ...;`
    Typedef {
        /// The base type.
        ty: Spanned<TypeSpec>,
        /// The new names.
        declarators: Vec<Declarator>,
    },
    /// `TYPE name[dims], ...;` (fields) or `TYPE;` (a named type declaration).
    Field {
        /// The type.
        ty: Spanned<TypeSpec>,
        /// The fields (empty for a bare type declaration).
        declarators: Vec<Declarator>,
    },
}

/// Kind of a top-level block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// `trace { }`
    Trace,
    /// `stream { }`
    Stream,
    /// `event { }`
    Event,
    /// `clock { }`
    Clock,
    /// `env { }`
    Env,
    /// `callsite { }`
    Callsite,
}

/// An entry of a top-level block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlockEntry {
    /// `key = value;`
    Attr(Attr),
    /// `key := TYPE;`
    TypeAssign {
        /// Dotted key, e.g. `packet.header`.
        key: String,
        /// The type.
        ty: Spanned<TypeSpec>,
        /// Position of the key.
        pos: Pos,
    },
    /// A type declaration scoped to the block.
    Decl(Decl),
}

/// A top-level item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    /// A declaration (typealias, typedef, named struct/enum/variant).
    Decl(Decl),
    /// A block.
    Block {
        /// Which block.
        kind: BlockKind,
        /// Its entries.
        entries: Vec<BlockEntry>,
        /// Position of the block keyword.
        pos: Pos,
    },
}
