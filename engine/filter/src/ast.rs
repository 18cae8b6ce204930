//! The syntax tree of a filter expression, and its printing back to source.
//!
//! [`crate::parse`] produces it; [`crate::Filter::from_expr`] compiles it.
//! Printing ([`fmt::Display`]) yields text that parses back to an equal tree
//! for every tree the parser can produce.

use std::fmt::{self, Write as _};

use crate::value::{FieldOperand, StateKey};

/// A filter expression (a condition).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `true` or `false`.
    Bool(bool),
    /// An operand used on its own as a condition (`event.field.flag`): true
    /// when the value exists and is truthy (see [`crate::Value::is_truthy`]).
    /// The parser only accepts field operands here.
    Test(Operand),
    /// `!expr`.
    Not(Box<Expr>),
    /// `a && b && ...`. The parser always produces at least two operands; an
    /// empty conjunction is `true`.
    And(Vec<Expr>),
    /// `a || b || ...`. The parser always produces at least two operands; an
    /// empty disjunction is `false`.
    Or(Vec<Expr>),
    /// `lhs OP rhs`, compared by value (no wildcards).
    Compare {
        /// Left side.
        lhs: Term,
        /// Operator.
        op: CmpOp,
        /// Right side.
        rhs: Term,
    },
    /// `operand == "glob"` or `operand != "glob"`: a string literal holding
    /// unescaped `*` or `?`.
    Glob {
        /// The value matched.
        operand: Operand,
        /// `true` for `!=`.
        negated: bool,
        /// The pattern.
        pattern: GlobPattern,
    },
    /// `operand =~ "regex"`.
    Regex {
        /// The value matched.
        operand: Operand,
        /// The compiled regular expression.
        regex: RegexLit,
    },
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// A value taken from the event.
    Operand(Operand),
    /// A constant.
    Literal(Literal),
}

/// A value taken from the event or its state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// `event.name` / `name`.
    Name,
    /// `event.time` / `time`, in nanoseconds.
    Time,
    /// `event.cpu` / `cpu` / `stream`.
    Cpu,
    /// `trace`.
    Trace,
    /// `event.field.PATH`, `event.context.PATH`, `event.packet.PATH`.
    Field(FieldOperand),
    /// `state.KEY`.
    State(StateKey),
}

/// The static type of an operand, when the language knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandType {
    /// Always a string.
    Str,
    /// Always an integer.
    Int,
    /// Depends on the trace (payload, context and packet fields).
    Unknown,
}

impl Operand {
    /// The operand's static type.
    pub fn static_type(&self) -> OperandType {
        match self {
            Operand::Name | Operand::Trace => OperandType::Str,
            Operand::Time | Operand::Cpu => OperandType::Int,
            Operand::Field(_) => OperandType::Unknown,
            Operand::State(key) if key.is_string() => OperandType::Str,
            Operand::State(_) => OperandType::Int,
        }
    }
}

/// A constant in a filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// An integer that fits in `i64` (the parser's choice for every such
    /// integer, including time literals converted to nanoseconds).
    Int(i64),
    /// An integer above `i64::MAX`.
    UInt(u64),
    /// A finite float (written with a `.` or an exponent).
    Float(f64),
    /// A string (escapes already decoded).
    Str(String),
    /// `true` / `false`.
    Bool(bool),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every operator.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its sides swapped: `a < b` is `b > a`.
    pub fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ne => CmpOp::Ne,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
        }
    }

    /// Whether the operator orders (`<`, `<=`, `>`, `>=`) rather than tests equality.
    pub fn is_ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    /// Whether `a OP b` holds when `a.cmp(b)` is `ord`.
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => ord == Equal,
            CmpOp::Ne => ord != Equal,
            CmpOp::Lt => ord == Less,
            CmpOp::Le => ord != Greater,
            CmpOp::Gt => ord == Greater,
            CmpOp::Ge => ord != Less,
        }
    }
}

/// A glob pattern: literal text, `?` (any one character) and `*` (any run of
/// characters, possibly empty). Matching is case-sensitive and covers the
/// whole string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GlobPattern {
    pieces: Vec<GlobPiece>,
}

/// One piece of a [`GlobPattern`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GlobPiece {
    /// Text matched exactly (never empty in a normalized pattern).
    Literal(String),
    /// `?`: exactly one character.
    AnyChar,
    /// `*`: any number of characters.
    AnyString,
}

impl GlobPattern {
    /// Builds a pattern, merging adjacent literal pieces and dropping empty
    /// ones so that equal patterns have equal pieces.
    pub fn new(pieces: impl IntoIterator<Item = GlobPiece>) -> GlobPattern {
        let mut out: Vec<GlobPiece> = Vec::new();
        for piece in pieces {
            match piece {
                GlobPiece::Literal(s) if s.is_empty() => {}
                GlobPiece::Literal(s) => {
                    if let Some(GlobPiece::Literal(prev)) = out.last_mut() {
                        prev.push_str(&s);
                    } else {
                        out.push(GlobPiece::Literal(s));
                    }
                }
                other => out.push(other),
            }
        }
        GlobPattern { pieces: out }
    }

    /// Builds a pattern from plain text where every `*` and `?` is a
    /// wildcard (no escapes), e.g. `GlobPattern::from_wildcards("sched_*")`.
    pub fn from_wildcards(text: &str) -> GlobPattern {
        GlobPattern::new(text.chars().map(|c| match c {
            '*' => GlobPiece::AnyString,
            '?' => GlobPiece::AnyChar,
            c => GlobPiece::Literal(c.to_string()),
        }))
    }

    /// The pattern's pieces.
    pub fn pieces(&self) -> &[GlobPiece] {
        &self.pieces
    }

    /// Whether the pattern has any wildcard (otherwise it matches one string).
    pub fn has_wildcards(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| !matches!(p, GlobPiece::Literal(_)))
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &str) -> bool {
        glob_match(&self.pieces, text)
    }
}

/// Whole-string glob matching without allocation.
///
/// Greedy with a single backtrack point: when a later `*` is reached, earlier
/// stars never need to absorb more, because the later star can absorb
/// anything they would have. This keeps the worst case at
/// O(pattern × text) instead of exponential.
pub(crate) fn glob_match(pieces: &[GlobPiece], text: &str) -> bool {
    let mut p = 0; // next piece
    let mut t = 0; // byte offset in text
                   // (piece after the last star, text offset that star currently extends to)
    let mut backtrack: Option<(usize, usize)> = None;
    loop {
        if p == pieces.len() {
            if t == text.len() {
                return true;
            }
        } else {
            match &pieces[p] {
                GlobPiece::AnyString => {
                    backtrack = Some((p + 1, t));
                    p += 1;
                    continue;
                }
                GlobPiece::AnyChar => {
                    if let Some(c) = text[t..].chars().next() {
                        t += c.len_utf8();
                        p += 1;
                        continue;
                    }
                }
                GlobPiece::Literal(lit) => {
                    if text[t..].starts_with(lit.as_str()) {
                        t += lit.len();
                        p += 1;
                        continue;
                    }
                }
            }
        }
        // Mismatch: let the last star absorb one more character.
        let Some((bp, bt)) = backtrack else {
            return false;
        };
        let Some(c) = text[bt..].chars().next() else {
            return false;
        };
        let next = bt + c.len_utf8();
        backtrack = Some((bp, next));
        p = bp;
        t = next;
    }
}

/// A regular expression literal, compiled once when the filter is parsed.
///
/// Two literals are equal when their source text is equal.
#[derive(Debug, Clone)]
pub struct RegexLit(regex::Regex);

impl RegexLit {
    /// Compiles a pattern (Rust `regex` syntax, unanchored search).
    pub fn new(pattern: &str) -> Result<RegexLit, regex::Error> {
        regex::Regex::new(pattern).map(RegexLit)
    }

    /// The compiled expression.
    pub fn regex(&self) -> &regex::Regex {
        &self.0
    }

    /// The pattern's source text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl From<regex::Regex> for RegexLit {
    fn from(re: regex::Regex) -> Self {
        RegexLit(re)
    }
}

impl PartialEq for RegexLit {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

// ---------------------------------------------------------------------------
// Printing

impl fmt::Display for Expr {
    /// Prints the expression in filter syntax, with only the parentheses the
    /// tree shape needs; the result parses back to an equal [`Expr`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Test(op) => write!(f, "{op}"),
            Expr::Not(inner) => {
                f.write_char('!')?;
                match **inner {
                    // `!` binds tighter than anything else, so only atoms
                    // can follow it without parentheses.
                    Expr::Bool(_) | Expr::Test(_) | Expr::Not(_) => write!(f, "{inner}"),
                    _ => write!(f, "({inner})"),
                }
            }
            Expr::And(items) => {
                if items.is_empty() {
                    return f.write_str("true");
                }
                write_joined(f, items, " && ", |e| {
                    matches!(e, Expr::And(_) | Expr::Or(_))
                })
            }
            Expr::Or(items) => {
                if items.is_empty() {
                    return f.write_str("false");
                }
                // A nested `&&` needs no parentheses (it binds tighter), a
                // nested `||` does, or it would re-parse flattened.
                write_joined(f, items, " || ", |e| matches!(e, Expr::Or(_)))
            }
            Expr::Compare { lhs, op, rhs } => write!(f, "{lhs} {} {rhs}", op.symbol()),
            Expr::Glob {
                operand,
                negated,
                pattern,
            } => {
                write!(
                    f,
                    "{operand} {} {pattern}",
                    if *negated { "!=" } else { "==" }
                )
            }
            Expr::Regex { operand, regex } => {
                write!(f, "{operand} =~ ")?;
                write_regex(f, regex.as_str())
            }
        }
    }
}

fn write_joined(
    f: &mut fmt::Formatter<'_>,
    items: &[Expr],
    sep: &str,
    needs_parens: impl Fn(&Expr) -> bool,
) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        if needs_parens(item) {
            write!(f, "({item})")?;
        } else {
            write!(f, "{item}")?;
        }
    }
    Ok(())
}

/// Regex sources are printed verbatim between quotes (the parser hands the
/// quoted text to the regex engine unchanged), except that a bare `"` is
/// written `\"`, which the regex engine reads as a literal quote.
fn write_regex(f: &mut fmt::Formatter<'_>, src: &str) -> fmt::Result {
    f.write_char('"')?;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                f.write_char('\\')?;
                if let Some(next) = chars.next() {
                    f.write_char(next)?;
                }
            }
            '"' => f.write_str("\\\"")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Operand(op) => write!(f, "{op}"),
            Term::Literal(lit) => write!(f, "{lit}"),
        }
    }
}

impl fmt::Display for Operand {
    /// Prints the canonical spelling (`event.name`, `event.time`, `event.cpu`,
    /// `trace`, `event.field.x`, `state.tid`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name => f.write_str("event.name"),
            Operand::Time => f.write_str("event.time"),
            Operand::Cpu => f.write_str("event.cpu"),
            Operand::Trace => f.write_str("trace"),
            Operand::Field(r) => write!(f, "{r}"),
            Operand::State(key) => write!(f, "state.{}", key.name()),
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::UInt(v) => write!(f, "{v}"),
            // `{:?}` is the shortest text that reads back to the same f64 and
            // always has a `.` or an exponent, so it re-parses as a float.
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::Str(s) => {
                f.write_char('"')?;
                for c in s.chars() {
                    write_escaped_char(f, c)?;
                }
                f.write_char('"')
            }
            Literal::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Display for GlobPattern {
    /// Prints the pattern as a quoted string literal with unescaped wildcards.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for piece in &self.pieces {
            match piece {
                GlobPiece::Literal(s) => {
                    for c in s.chars() {
                        write_escaped_char(f, c)?;
                    }
                }
                GlobPiece::AnyChar => f.write_char('?')?,
                GlobPiece::AnyString => f.write_char('*')?,
            }
        }
        f.write_char('"')
    }
}

/// Writes one character of a string literal. `*` and `?` are escaped so a
/// literal string never turns into a glob when re-parsed.
fn write_escaped_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '"' => f.write_str("\\\""),
        '\\' => f.write_str("\\\\"),
        '*' => f.write_str("\\*"),
        '?' => f.write_str("\\?"),
        '\n' => f.write_str("\\n"),
        '\t' => f.write_str("\\t"),
        '\r' => f.write_str("\\r"),
        '\0' => f.write_str("\\0"),
        c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32),
        c => f.write_char(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(s: &str) -> GlobPattern {
        GlobPattern::from_wildcards(s)
    }

    #[test]
    fn glob_basics() {
        assert!(pat("sched_*").matches("sched_switch"));
        assert!(pat("sched_*").matches("sched_"));
        assert!(!pat("sched_*").matches("sche"));
        assert!(pat("*_entry").matches("irq_handler_entry"));
        assert!(!pat("*_entry").matches("irq_handler_exit"));
        assert!(pat("?").matches("é"));
        assert!(!pat("?").matches(""));
        assert!(!pat("?").matches("ab"));
        assert!(pat("a*b*c").matches("aXXbYYc"));
        assert!(pat("a*b*c").matches("abc"));
        assert!(!pat("a*b*c").matches("acb"));
        assert!(pat("*").matches(""));
        assert!(pat("**").matches("anything"));
        assert!(pat("a*?").matches("ab"));
        assert!(!pat("a*?").matches("a"));
        assert!(pat("*aab").matches("aaab"));
        assert!(pat("").matches(""));
        assert!(!pat("").matches("x"));
    }

    #[test]
    fn glob_backtracking_is_not_exponential() {
        let text = "a".repeat(2000);
        let p = pat(&format!("{}b", "*a".repeat(50)));
        assert!(!p.matches(&text));
    }

    #[test]
    fn glob_pattern_normalizes() {
        let p = GlobPattern::new(vec![
            GlobPiece::Literal("a".into()),
            GlobPiece::Literal(String::new()),
            GlobPiece::Literal("b".into()),
            GlobPiece::AnyString,
        ]);
        assert_eq!(
            p.pieces(),
            &[GlobPiece::Literal("ab".into()), GlobPiece::AnyString]
        );
        assert!(p.has_wildcards());
        assert!(!pat("abc").has_wildcards());
    }

    #[test]
    fn printing_escapes() {
        let lit = Literal::Str("a\"b\\c*?\n\u{1}".into());
        assert_eq!(lit.to_string(), r#""a\"b\\c\*\?\n\u{1}""#);
        let glob = GlobPattern::new(vec![
            GlobPiece::Literal("x*".into()),
            GlobPiece::AnyString,
            GlobPiece::AnyChar,
        ]);
        assert_eq!(glob.to_string(), r#""x\**?""#);
        assert_eq!(Literal::Float(1.0).to_string(), "1.0");
        assert_eq!(Literal::Float(1e300).to_string(), "1e300");
    }

    #[test]
    fn printing_parenthesizes_only_where_needed() {
        let t = |n: &str| {
            Expr::Test(Operand::Field(FieldOperand {
                scope: crate::FieldScope::Payload,
                path: vec![crate::PathElem::Name(n.into())],
            }))
        };
        let e = Expr::Or(vec![
            Expr::And(vec![t("a"), t("b")]),
            Expr::Not(Box::new(Expr::Or(vec![t("c"), t("d")]))),
            Expr::Not(Box::new(t("e"))),
        ]);
        assert_eq!(
            e.to_string(),
            "event.field.a && event.field.b || !(event.field.c || event.field.d) || !event.field.e"
        );
        let nested = Expr::And(vec![
            Expr::And(vec![t("a"), t("b")]),
            Expr::Or(vec![t("c"), t("d")]),
        ]);
        assert_eq!(
            nested.to_string(),
            "(event.field.a && event.field.b) && (event.field.c || event.field.d)"
        );
        assert_eq!(Expr::And(vec![]).to_string(), "true");
        assert_eq!(Expr::Or(vec![]).to_string(), "false");
    }

    #[test]
    fn regex_printing_escapes_bare_quotes() {
        let re = RegexLit::new("a\"b\\\"c\\d").unwrap();
        let e = Expr::Regex {
            operand: Operand::Name,
            regex: re,
        };
        assert_eq!(e.to_string(), r#"event.name =~ "a\"b\"c\d""#);
    }
}
