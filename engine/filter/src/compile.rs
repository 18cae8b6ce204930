//! The evaluable form of a filter and its analyses.

use std::fmt;
use std::str::FromStr;
use traceloom_base::TimeRange;

use crate::ast::{CmpOp, Expr, GlobPattern, GlobPiece, Literal, Operand, Term};
use crate::error::ParseError;
use crate::value::{FieldOperand, FieldScope, FilterSubject, PathElem, StateKey, Value};

/// A compiled filter: parse once, then test many events.
///
/// Evaluation does not allocate; field paths, literals, glob patterns and
/// regular expressions are all prepared at compile time.
#[derive(Debug, Clone)]
pub struct Filter {
    expr: Expr,
    root: Node,
    fields: Vec<FieldOperand>,
    state_keys: Vec<StateKey>,
}

impl Filter {
    /// Parses and compiles a filter expression.
    ///
    /// ```
    /// let f = traceloom_filter::Filter::new(r#"event.name == "sched_*" && cpu == 1"#).unwrap();
    /// assert_eq!(f.name_only_decision("irq_handler_entry"), Some(false));
    ///
    /// let err = traceloom_filter::Filter::new("cpu == && x").unwrap_err();
    /// assert_eq!(err.to_string(), "column 8: expected a value after '==', found '&&'");
    /// ```
    pub fn new(src: &str) -> Result<Filter, ParseError> {
        crate::parser::parse(src).map(Filter::from_expr)
    }

    /// Compiles a syntax tree. Trees built by hand are accepted as they are;
    /// comparisons the parser would reject statically simply evaluate to
    /// false. Nesting deeper than [`crate::MAX_DEPTH`] is the caller's
    /// responsibility (evaluation recurses on it).
    pub fn from_expr(expr: Expr) -> Filter {
        let mut fields = Vec::new();
        let mut state_keys = Vec::new();
        collect_refs(&expr, &mut fields, &mut state_keys);
        fields.sort();
        fields.dedup();
        state_keys.sort();
        state_keys.dedup();
        let root = compile(&expr);
        Filter {
            expr,
            root,
            fields,
            state_keys,
        }
    }

    /// The syntax tree the filter was compiled from.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Whether the event matches.
    #[inline]
    pub fn matches<S: FilterSubject + ?Sized>(&self, subject: &S) -> bool {
        self.root.eval(subject)
    }

    /// The verdict for every event of the class `name`, when the filter can
    /// decide it from the event name alone; `None` when other operands
    /// matter.
    ///
    /// The engine calls this once per event class and skips decoding the
    /// events of classes that get `Some(false)` (and skips the filter for
    /// `Some(true)`). For example `event.name == "sched_*" && cpu == 1`
    /// gives `Some(false)` for `irq_handler_entry` and `None` for
    /// `sched_switch`.
    pub fn name_only_decision(&self, name: &str) -> Option<bool> {
        self.root.decide_by_name(name)
    }

    /// Whether any `state.*` operand is used, i.e. whether the engine must
    /// compute the process state before evaluating the filter.
    pub fn needs_state(&self) -> bool {
        !self.state_keys.is_empty()
    }

    /// The state attributes the filter reads, sorted, without duplicates.
    pub fn state_keys(&self) -> &[StateKey] {
        &self.state_keys
    }

    /// The payload, context and packet fields the filter reads, sorted,
    /// without duplicates.
    pub fn fields(&self) -> &[FieldOperand] {
        &self.fields
    }

    /// Whether the filter reads any field of `scope` (e.g. whether the
    /// payload must be decoded at all).
    pub fn needs_scope(&self, scope: FieldScope) -> bool {
        self.fields.iter().any(|f| f.scope == scope)
    }

    /// The timestamps matching events can have, from the filter's `time`
    /// comparisons; `None` when no timestamp can match. The range is
    /// conservative (it may be wider than necessary), so the engine can use
    /// it to seek to the first interesting event and stop after the last.
    pub fn time_bounds(&self) -> Option<TimeRange> {
        self.root.time_bounds(false)
    }
}

impl FromStr for Filter {
    type Err = ParseError;

    fn from_str(src: &str) -> Result<Filter, ParseError> {
        Filter::new(src)
    }
}

impl fmt::Display for Filter {
    /// The filter in canonical syntax (see [`Expr`]'s `Display`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.fmt(f)
    }
}

fn collect_refs(expr: &Expr, fields: &mut Vec<FieldOperand>, state: &mut Vec<StateKey>) {
    let mut operand = |op: &Operand| match op {
        Operand::Field(r) => fields.push(r.clone()),
        Operand::State(k) => state.push(*k),
        _ => {}
    };
    match expr {
        Expr::Bool(_) => {}
        Expr::Test(op) | Expr::Glob { operand: op, .. } | Expr::Regex { operand: op, .. } => {
            operand(op)
        }
        Expr::Compare { lhs, rhs, .. } => {
            for term in [lhs, rhs] {
                if let Term::Operand(op) = term {
                    operand(op);
                }
            }
        }
        Expr::Not(inner) => collect_refs(inner, fields, state),
        Expr::And(items) | Expr::Or(items) => {
            for item in items {
                collect_refs(item, fields, state);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Compiled form

#[derive(Debug, Clone)]
enum Node {
    Const(bool),
    Not(Box<Node>),
    And(Box<[Node]>),
    Or(Box<[Node]>),
    Test(Op),
    Cmp {
        lhs: Op,
        op: CmpOp,
        rhs: Op,
    },
    Str {
        operand: Op,
        matcher: StrMatcher,
        negated: bool,
    },
    Regex {
        operand: Op,
        regex: regex::Regex,
    },
}

/// A value source, with field paths and literals ready to use.
#[derive(Debug, Clone)]
enum Op {
    Name,
    Time,
    Cpu,
    Trace,
    Field(FieldScope, Box<[PathElem]>),
    State(StateKey),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(Box<str>),
    Bool(bool),
}

/// Glob patterns specialized by shape: event-name patterns are nearly always
/// `prefix*`, which then costs one `starts_with`.
#[derive(Debug, Clone)]
enum StrMatcher {
    Exact(Box<str>),
    Prefix(Box<str>),
    Suffix(Box<str>),
    Contains(Box<str>),
    /// `*`, `**`, ...: any string.
    Any,
    General(Box<[GlobPiece]>),
}

impl StrMatcher {
    fn new(pattern: &GlobPattern) -> StrMatcher {
        use GlobPiece::{AnyString as Star, Literal as Lit};
        match pattern.pieces() {
            [] => StrMatcher::Exact("".into()),
            [Lit(s)] => StrMatcher::Exact(s.as_str().into()),
            [Lit(s), Star] => StrMatcher::Prefix(s.as_str().into()),
            [Star, Lit(s)] => StrMatcher::Suffix(s.as_str().into()),
            [Star, Lit(s), Star] => StrMatcher::Contains(s.as_str().into()),
            pieces if pieces.iter().all(|p| *p == Star) => StrMatcher::Any,
            pieces => StrMatcher::General(pieces.into()),
        }
    }

    #[inline]
    fn matches(&self, s: &str) -> bool {
        match self {
            StrMatcher::Exact(t) => s == &**t,
            StrMatcher::Prefix(t) => s.starts_with(&**t),
            StrMatcher::Suffix(t) => s.ends_with(&**t),
            StrMatcher::Contains(t) => s.contains(&**t),
            StrMatcher::Any => true,
            StrMatcher::General(pieces) => crate::ast::glob_match(pieces, s),
        }
    }
}

fn compile(expr: &Expr) -> Node {
    match expr {
        Expr::Bool(b) => Node::Const(*b),
        Expr::Test(op) => Node::Test(compile_operand(op)),
        Expr::Not(inner) => match compile(inner) {
            Node::Const(b) => Node::Const(!b),
            node => Node::Not(Box::new(node)),
        },
        Expr::And(items) => compile_junction(items, true),
        Expr::Or(items) => compile_junction(items, false),
        Expr::Compare { lhs, op, rhs } => {
            let (lhs, rhs) = (compile_term(lhs), compile_term(rhs));
            match (lhs.constant(), rhs.constant()) {
                // Only hand-built trees compare two constants; fold them.
                (Some(a), Some(b)) => Node::Const(compare(*op, Some(a), Some(b))),
                _ => Node::Cmp { lhs, op: *op, rhs },
            }
        }
        Expr::Glob {
            operand,
            negated,
            pattern,
        } => Node::Str {
            operand: compile_operand(operand),
            matcher: StrMatcher::new(pattern),
            negated: *negated,
        },
        Expr::Regex { operand, regex } => Node::Regex {
            operand: compile_operand(operand),
            regex: regex.regex().clone(),
        },
    }
}

/// `&&` (`is_and`) or `||`: constants are folded away so that e.g.
/// `true && x` costs the same as `x`.
fn compile_junction(items: &[Expr], is_and: bool) -> Node {
    let mut nodes = Vec::with_capacity(items.len());
    for item in items {
        match compile(item) {
            // The neutral element (true for &&, false for ||) drops out.
            Node::Const(b) if b == is_and => {}
            // The absorbing element decides the whole junction.
            Node::Const(b) => return Node::Const(b),
            node => nodes.push(node),
        }
    }
    match nodes.len() {
        0 => Node::Const(is_and),
        1 => nodes.pop().expect("one node"),
        _ if is_and => Node::And(nodes.into_boxed_slice()),
        _ => Node::Or(nodes.into_boxed_slice()),
    }
}

fn compile_operand(op: &Operand) -> Op {
    match op {
        Operand::Name => Op::Name,
        Operand::Time => Op::Time,
        Operand::Cpu => Op::Cpu,
        Operand::Trace => Op::Trace,
        Operand::Field(r) => Op::Field(r.scope, r.path.clone().into_boxed_slice()),
        Operand::State(k) => Op::State(*k),
    }
}

fn compile_term(term: &Term) -> Op {
    match term {
        Term::Operand(op) => compile_operand(op),
        Term::Literal(Literal::Int(v)) => Op::Int(*v),
        Term::Literal(Literal::UInt(v)) => Op::UInt(*v),
        Term::Literal(Literal::Float(v)) => Op::Float(*v),
        Term::Literal(Literal::Str(s)) => Op::Str(s.as_str().into()),
        Term::Literal(Literal::Bool(b)) => Op::Bool(*b),
    }
}

impl Op {
    #[inline]
    fn value<'a, S: FilterSubject + ?Sized>(&'a self, s: &'a S) -> Option<Value<'a>> {
        match self {
            Op::Name => Some(Value::Str(s.event_name())),
            Op::Time => Some(Value::Int(s.time_ns())),
            Op::Cpu => s.cpu().map(Value::UInt),
            Op::Trace => Some(Value::Str(s.trace_name())),
            Op::Field(scope, path) => s.field(*scope, path),
            Op::State(key) => s.state(*key),
            _ => self.constant(),
        }
    }

    /// The value of a literal; `None` for operands.
    fn constant(&self) -> Option<Value<'_>> {
        match self {
            Op::Int(v) => Some(Value::Int(*v)),
            Op::UInt(v) => Some(Value::UInt(*v)),
            Op::Float(v) => Some(Value::Float(*v)),
            Op::Str(v) => Some(Value::Str(v)),
            Op::Bool(v) => Some(Value::Bool(*v)),
            _ => None,
        }
    }

    /// The value when only the event name is known: `Some(value)` for the
    /// name and literals, `None` (unknown) for everything else.
    fn value_by_name<'a>(&'a self, name: &'a str) -> Option<Value<'a>> {
        match self {
            Op::Name => Some(Value::Str(name)),
            _ => self.constant(),
        }
    }
}

/// `a OP b` with the language's rules: a missing side makes every operator
/// false, `!=` included (the babeltrace / Trace Compass convention), and so
/// do values without an order (string vs number, NaN).
#[inline]
fn compare(op: CmpOp, a: Option<Value<'_>>, b: Option<Value<'_>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.compare(&b).is_some_and(|ord| op.holds(ord)),
        _ => false,
    }
}

#[inline]
fn str_match(matcher: &StrMatcher, negated: bool, v: Option<Value<'_>>) -> bool {
    match v {
        // A missing or non-string value matches neither `==` nor `!=`.
        Some(Value::Str(s)) => matcher.matches(s) != negated,
        _ => false,
    }
}

#[inline]
fn regex_match(regex: &regex::Regex, v: Option<Value<'_>>) -> bool {
    matches!(v, Some(Value::Str(s)) if regex.is_match(s))
}

impl Node {
    fn eval<S: FilterSubject + ?Sized>(&self, s: &S) -> bool {
        match self {
            Node::Const(b) => *b,
            Node::Not(inner) => !inner.eval(s),
            Node::And(items) => items.iter().all(|n| n.eval(s)),
            Node::Or(items) => items.iter().any(|n| n.eval(s)),
            Node::Test(op) => op.value(s).is_some_and(|v| v.is_truthy()),
            Node::Cmp { lhs, op, rhs } => compare(*op, lhs.value(s), rhs.value(s)),
            Node::Str {
                operand,
                matcher,
                negated,
            } => str_match(matcher, *negated, operand.value(s)),
            Node::Regex { operand, regex } => regex_match(regex, operand.value(s)),
        }
    }

    /// Three-valued evaluation knowing only the event name: `None` when the
    /// result depends on anything else. `&&`/`||` use Kleene logic, so
    /// `name == "a" && x` is decided (false) for every other name.
    fn decide_by_name(&self, name: &str) -> Option<bool> {
        let needs = |op: &Op| !matches!(op, Op::Name) && op.constant().is_none();
        match self {
            Node::Const(b) => Some(*b),
            Node::Not(inner) => inner.decide_by_name(name).map(|b| !b),
            Node::And(items) => {
                let mut unknown = false;
                for item in items.iter() {
                    match item.decide_by_name(name) {
                        Some(false) => return Some(false),
                        Some(true) => {}
                        None => unknown = true,
                    }
                }
                if unknown {
                    None
                } else {
                    Some(true)
                }
            }
            Node::Or(items) => {
                let mut unknown = false;
                for item in items.iter() {
                    match item.decide_by_name(name) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => unknown = true,
                    }
                }
                if unknown {
                    None
                } else {
                    Some(false)
                }
            }
            Node::Test(op) if !needs(op) => {
                Some(op.value_by_name(name).is_some_and(|v| v.is_truthy()))
            }
            Node::Cmp { lhs, op, rhs } if !needs(lhs) && !needs(rhs) => Some(compare(
                *op,
                lhs.value_by_name(name),
                rhs.value_by_name(name),
            )),
            Node::Str {
                operand,
                matcher,
                negated,
            } if !needs(operand) => Some(str_match(matcher, *negated, operand.value_by_name(name))),
            Node::Regex { operand, regex } if !needs(operand) => {
                Some(regex_match(regex, operand.value_by_name(name)))
            }
            Node::Test(_) | Node::Cmp { .. } | Node::Str { .. } | Node::Regex { .. } => None,
        }
    }

    /// An over-approximation of the matching timestamps (`None`: none), for
    /// the node itself or, with `negated`, for its negation. Negation is
    /// pushed down (De Morgan) so that `!(time < X)` still bounds; this is
    /// sound because the timestamp is never missing.
    fn time_bounds(&self, negated: bool) -> Option<TimeRange> {
        match self {
            Node::Const(b) => (*b != negated).then_some(TimeRange::ALL),
            Node::Not(inner) => inner.time_bounds(!negated),
            Node::And(items) if !negated => intersect_all(items, negated),
            Node::Or(items) if negated => intersect_all(items, negated),
            Node::And(items) | Node::Or(items) => {
                let mut hull: Option<TimeRange> = None;
                for item in items.iter() {
                    if let Some(r) = item.time_bounds(negated) {
                        hull = Some(match hull {
                            None => r,
                            Some(h) => TimeRange {
                                start: h.start.min(r.start),
                                end: h.end.max(r.end),
                            },
                        });
                    }
                }
                hull
            }
            Node::Cmp { lhs, op, rhs } => {
                let (op, bound) = match (lhs, rhs) {
                    (Op::Time, other) => (*op, other),
                    (other, Op::Time) => (op.flipped(), other),
                    _ => return Some(TimeRange::ALL),
                };
                let op = if negated { negate(op) } else { op };
                time_range(op, bound)
            }
            Node::Test(_) | Node::Str { .. } | Node::Regex { .. } => Some(TimeRange::ALL),
        }
    }
}

fn intersect_all(items: &[Node], negated: bool) -> Option<TimeRange> {
    let mut acc = TimeRange::ALL;
    for item in items {
        let r = item.time_bounds(negated)?;
        acc = TimeRange {
            start: acc.start.max(r.start),
            end: acc.end.min(r.end),
        };
        if acc.start > acc.end {
            return None;
        }
    }
    Some(acc)
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
    }
}

/// The timestamps `t` with `t OP bound`.
fn time_range(op: CmpOp, bound: &Op) -> Option<TimeRange> {
    let k = match *bound {
        Op::Int(k) => k,
        // Above every timestamp.
        Op::UInt(_) => {
            return match op {
                CmpOp::Lt | CmpOp::Le | CmpOp::Ne => Some(TimeRange::ALL),
                CmpOp::Eq | CmpOp::Gt | CmpOp::Ge => None,
            }
        }
        // Floats (only in hand-built trees), other operands, strings and
        // booleans: do not try to be clever.
        _ => return Some(TimeRange::ALL),
    };
    let r = match op {
        CmpOp::Eq => TimeRange { start: k, end: k },
        CmpOp::Ne => TimeRange::ALL,
        CmpOp::Lt => TimeRange {
            start: i64::MIN,
            end: k.checked_sub(1)?,
        },
        CmpOp::Le => TimeRange {
            start: i64::MIN,
            end: k,
        },
        CmpOp::Gt => TimeRange {
            start: k.checked_add(1)?,
            end: i64::MAX,
        },
        CmpOp::Ge => TimeRange {
            start: k,
            end: i64::MAX,
        },
    };
    Some(r)
}
