//! Shared test helpers: an event implementing `FilterSubject`, and a
//! reference evaluator written independently of the crate's compiled form.

#![allow(dead_code, unreachable_pub)] // Each test binary uses a different part.

use std::cmp::Ordering;

use traceloom_filter::{
    Expr, FieldScope, FilterSubject, GlobPattern, GlobPiece, Literal, Operand, PathElem, StateKey,
    Term, Value,
};

/// An owned value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bool(bool),
}

impl Val {
    pub fn as_value(&self) -> Value<'_> {
        match self {
            Val::Int(v) => Value::Int(*v),
            Val::UInt(v) => Value::UInt(*v),
            Val::Float(v) => Value::Float(*v),
            Val::Str(s) => Value::Str(s),
            Val::Bool(b) => Value::Bool(*b),
        }
    }
}

impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::Int(v)
    }
}
impl From<u64> for Val {
    fn from(v: u64) -> Self {
        Val::UInt(v)
    }
}
impl From<f64> for Val {
    fn from(v: f64) -> Self {
        Val::Float(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::Str(v.to_string())
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::Bool(v)
    }
}

/// A test event.
#[derive(Debug, Clone)]
pub struct Subject {
    pub name: String,
    pub time: i64,
    pub cpu: Option<u64>,
    pub trace: String,
    pub fields: Vec<(FieldScope, Vec<PathElem>, Val)>,
    pub state: Vec<(StateKey, Val)>,
}

/// `"a.b[2].c"` → `[Name(a), Name(b), Index(2), Name(c)]`.
pub fn path(text: &str) -> Vec<PathElem> {
    let mut out = Vec::new();
    for part in text.split('.') {
        let mut pieces = part.split('[');
        out.push(PathElem::Name(pieces.next().unwrap().into()));
        for index in pieces {
            out.push(PathElem::Index(
                index.trim_end_matches(']').parse().unwrap(),
            ));
        }
    }
    out
}

impl Subject {
    pub fn new(name: &str) -> Subject {
        Subject {
            name: name.into(),
            time: 0,
            cpu: Some(0),
            trace: "trace".into(),
            fields: vec![],
            state: vec![],
        }
    }
    pub fn time(mut self, t: i64) -> Self {
        self.time = t;
        self
    }
    pub fn cpu(mut self, cpu: Option<u64>) -> Self {
        self.cpu = cpu;
        self
    }
    pub fn trace(mut self, trace: &str) -> Self {
        self.trace = trace.into();
        self
    }
    pub fn field(self, p: &str, v: impl Into<Val>) -> Self {
        self.scoped(FieldScope::Payload, p, v)
    }
    pub fn context(self, p: &str, v: impl Into<Val>) -> Self {
        self.scoped(FieldScope::Context, p, v)
    }
    pub fn packet(self, p: &str, v: impl Into<Val>) -> Self {
        self.scoped(FieldScope::Packet, p, v)
    }
    pub fn scoped(mut self, scope: FieldScope, p: &str, v: impl Into<Val>) -> Self {
        self.fields.push((scope, path(p), v.into()));
        self
    }
    pub fn with_state(mut self, key: StateKey, v: impl Into<Val>) -> Self {
        self.state.push((key, v.into()));
        self
    }

    pub fn get_field(&self, scope: FieldScope, p: &[PathElem]) -> Option<&Val> {
        self.fields
            .iter()
            .find(|(s, fp, _)| *s == scope && fp == p)
            .map(|(_, _, v)| v)
    }

    pub fn get_state(&self, key: StateKey) -> Option<&Val> {
        self.state.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl FilterSubject for Subject {
    fn event_name(&self) -> &str {
        &self.name
    }
    fn time_ns(&self) -> i64 {
        self.time
    }
    fn cpu(&self) -> Option<u64> {
        self.cpu
    }
    fn trace_name(&self) -> &str {
        &self.trace
    }
    fn field(&self, scope: FieldScope, p: &[PathElem]) -> Option<Value<'_>> {
        self.get_field(scope, p).map(Val::as_value)
    }
    fn state(&self, key: StateKey) -> Option<Value<'_>> {
        self.get_state(key).map(Val::as_value)
    }
}

// ---------------------------------------------------------------------------
// Reference semantics, straight from the documentation.

fn operand_value(op: &Operand, s: &Subject) -> Option<Val> {
    match op {
        Operand::Name => Some(Val::Str(s.name.clone())),
        Operand::Time => Some(Val::Int(s.time)),
        Operand::Cpu => s.cpu.map(Val::UInt),
        Operand::Trace => Some(Val::Str(s.trace.clone())),
        Operand::Field(r) => s.get_field(r.scope, &r.path).cloned(),
        Operand::State(k) => s.get_state(*k).cloned(),
    }
}

fn term_value(t: &Term, s: &Subject) -> Option<Val> {
    match t {
        Term::Operand(op) => operand_value(op, s),
        Term::Literal(Literal::Int(v)) => Some(Val::Int(*v)),
        Term::Literal(Literal::UInt(v)) => Some(Val::UInt(*v)),
        Term::Literal(Literal::Float(v)) => Some(Val::Float(*v)),
        Term::Literal(Literal::Str(v)) => Some(Val::Str(v.clone())),
        Term::Literal(Literal::Bool(v)) => Some(Val::Bool(*v)),
    }
}

enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Val) -> Option<Num> {
    match v {
        Val::Int(i) => Some(Num::Int((*i).into())),
        Val::UInt(u) => Some(Num::Int((*u).into())),
        Val::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// Integer vs float: round-to-nearest is monotonic, so a strict order
/// between `i as f64` and `f` is the true order; only a tie needs an exact
/// look (the float is then integral and small enough for i128).
fn int_float(i: i128, f: f64) -> Option<Ordering> {
    match (i as f64).partial_cmp(&f)? {
        Ordering::Equal => Some(i.cmp(&(f as i128))),
        ord => Some(ord),
    }
}

pub fn reference_cmp(a: &Val, b: &Val) -> Option<Ordering> {
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        _ => match (num(a)?, num(b)?) {
            (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
            (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
            (Num::Int(x), Num::Float(y)) => int_float(x, y),
            (Num::Float(x), Num::Int(y)) => int_float(y, x).map(Ordering::reverse),
        },
    }
}

fn truthy(v: &Val) -> bool {
    match v {
        Val::Int(i) => *i != 0,
        Val::UInt(u) => *u != 0,
        Val::Float(f) => *f != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::Bool(b) => *b,
    }
}

/// A glob as an anchored regex, to check the hand-written matcher.
pub fn glob_as_regex(pattern: &GlobPattern) -> regex::Regex {
    let mut re = String::from("(?s)^");
    for piece in pattern.pieces() {
        match piece {
            GlobPiece::Literal(s) => re.push_str(&regex::escape(s)),
            GlobPiece::AnyChar => re.push('.'),
            GlobPiece::AnyString => re.push_str(".*"),
        }
    }
    re.push('$');
    regex::Regex::new(&re).unwrap()
}

pub fn reference_eval(e: &Expr, s: &Subject) -> bool {
    match e {
        Expr::Bool(b) => *b,
        Expr::Test(op) => operand_value(op, s).is_some_and(|v| truthy(&v)),
        Expr::Not(inner) => !reference_eval(inner, s),
        Expr::And(items) => items.iter().all(|i| reference_eval(i, s)),
        Expr::Or(items) => items.iter().any(|i| reference_eval(i, s)),
        Expr::Compare { lhs, op, rhs } => match (term_value(lhs, s), term_value(rhs, s)) {
            (Some(a), Some(b)) => reference_cmp(&a, &b).is_some_and(|o| op.holds(o)),
            _ => false,
        },
        Expr::Glob {
            operand,
            negated,
            pattern,
        } => match operand_value(operand, s) {
            Some(Val::Str(v)) => glob_as_regex(pattern).is_match(&v) != *negated,
            _ => false,
        },
        Expr::Regex { operand, regex } => match operand_value(operand, s) {
            Some(Val::Str(v)) => regex.regex().is_match(&v),
            _ => false,
        },
    }
}
