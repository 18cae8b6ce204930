//! The interface between a compiled filter and the events it is applied to.

use std::cmp::Ordering;
use std::fmt;

/// A value read from an event, its payload or the state, or written in a
/// filter as a literal.
///
/// Strings are borrowed so that the engine can hand out field values without
/// allocating for each event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (needed for 64-bit unsigned CTF fields above
    /// `i64::MAX`).
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// A string (CTF strings, enumeration labels, process names, ...).
    Str(&'a str),
    /// A boolean.
    Bool(bool),
}

impl Value<'_> {
    /// Compares two values the way the filter language does.
    ///
    /// Numbers of any kind compare numerically and exactly (no rounding of a
    /// large integer to a float), strings compare byte-wise, booleans compare
    /// with `false < true`. Any other pairing (a string against a number, a
    /// boolean against a number) and NaN have no order: `None`, which makes
    /// every comparison operator false.
    pub fn compare(&self, other: &Value<'_>) -> Option<Ordering> {
        use Value::*;
        match (*self, *other) {
            (Int(a), Int(b)) => Some(a.cmp(&b)),
            (UInt(a), UInt(b)) => Some(a.cmp(&b)),
            (Int(a), UInt(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            (UInt(a), Int(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            (Float(a), Float(b)) => a.partial_cmp(&b),
            (Int(a), Float(b)) => cmp_int_float(i128::from(a), b),
            (UInt(a), Float(b)) => cmp_int_float(i128::from(a), b),
            (Float(a), Int(b)) => cmp_int_float(i128::from(b), a).map(Ordering::reverse),
            (Float(a), UInt(b)) => cmp_int_float(i128::from(b), a).map(Ordering::reverse),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bool(a), Bool(b)) => Some(a.cmp(&b)),
            _ => None,
        }
    }

    /// The truth of a value used on its own as a condition (`event.field.flag`):
    /// `true`, a non-zero number or a non-empty string.
    pub fn is_truthy(&self) -> bool {
        match *self {
            Value::Int(v) => v != 0,
            Value::UInt(v) => v != 0,
            Value::Float(v) => v != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => b,
        }
    }
}

/// Exact comparison of an integer with a float. Converting the integer to
/// `f64` would round above 2^53 and make e.g. `2^53 + 1 == 2^53 as float`
/// true; instead the float is split into its integral part (exact in `i128`
/// for every finite `f64` below 2^127) and its fraction.
fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // 2^127 as f64 is exact; every i128 is below it.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f >= LIMIT {
        return Some(Ordering::Less);
    }
    if f < -LIMIT {
        return Some(Ordering::Greater);
    }
    let whole = f.trunc();
    // In range and integral, so the cast is exact.
    let whole_i = whole as i128;
    match i.cmp(&whole_i) {
        Ordering::Equal => {
            let frac = f - whole;
            if frac > 0.0 {
                Some(Ordering::Less)
            } else if frac < 0.0 {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        other => Some(other),
    }
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u64> for Value<'_> {
    fn from(v: u64) -> Self {
        Value::UInt(v)
    }
}

impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Str(v)
    }
}

/// Where a field operand is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldScope {
    /// `event.field.NAME`: the event payload.
    Payload,
    /// `event.context.NAME`: the event context, then the stream event context
    /// (LTTng puts `vtid`, `procname`, ... in either depending on the
    /// session configuration, so the engine searches both).
    Context,
    /// `event.packet.NAME`: the packet context (`cpu_id`, `timestamp_begin`, ...).
    Packet,
}

impl FieldScope {
    /// The operand prefix for this scope, e.g. `event.field`.
    pub fn prefix(self) -> &'static str {
        match self {
            FieldScope::Payload => "event.field",
            FieldScope::Context => "event.context",
            FieldScope::Packet => "event.packet",
        }
    }
}

/// One step of a field path: `event.field.a.b[2]` is `[Name("a"), Name("b"), Index(2)]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathElem {
    /// A member of a structure (or variant), by name.
    Name(Box<str>),
    /// An element of an array or sequence, from 0.
    Index(usize),
}

/// A field operand: a scope and a non-empty path whose first element is a
/// [`PathElem::Name`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldOperand {
    /// Where the field is looked up.
    pub scope: FieldScope,
    /// The path below the scope.
    pub path: Vec<PathElem>,
}

impl fmt::Display for FieldOperand {
    /// Prints the operand as written in a filter, e.g. `event.field.a.b[2]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.scope.prefix())?;
        for elem in &self.path {
            match elem {
                PathElem::Name(name) => write!(f, ".{name}")?,
                PathElem::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A per-process (or per-CPU) state attribute, `state.KEY` in a filter.
///
/// State values are those of the process running on the event's CPU just
/// before the event (the LTTV convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateKey {
    /// `state.tid`: thread id (integer).
    Tid,
    /// `state.pid`: process (thread group) id (integer).
    Pid,
    /// `state.ppid`: parent process id (integer).
    Ppid,
    /// `state.name`: process name / command (string).
    Name,
    /// `state.mode`: execution mode (string, one of [`STATE_MODES`]).
    Mode,
    /// `state.status`: process status (string, e.g. `RUN`, `WAIT`).
    Status,
    /// `state.cpu`: CPU the process runs on (integer).
    Cpu,
}

impl StateKey {
    /// Every key, in declaration order.
    pub const ALL: [StateKey; 7] = [
        StateKey::Tid,
        StateKey::Pid,
        StateKey::Ppid,
        StateKey::Name,
        StateKey::Mode,
        StateKey::Status,
        StateKey::Cpu,
    ];

    /// The name after `state.` in a filter.
    pub fn name(self) -> &'static str {
        match self {
            StateKey::Tid => "tid",
            StateKey::Pid => "pid",
            StateKey::Ppid => "ppid",
            StateKey::Name => "name",
            StateKey::Mode => "mode",
            StateKey::Status => "status",
            StateKey::Cpu => "cpu",
        }
    }

    /// Looks a key up by its name after `state.`.
    pub fn from_name(name: &str) -> Option<StateKey> {
        StateKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the key's values are strings (otherwise they are integers).
    pub fn is_string(self) -> bool {
        matches!(self, StateKey::Name | StateKey::Mode | StateKey::Status)
    }
}

/// The values `state.mode` can take. Comparing `state.mode` with `==`/`!=`
/// against any other string literal is rejected when the filter is parsed,
/// so typos do not silently match nothing.
pub const STATE_MODES: &[&str] = &[
    "user", "syscall", "trap", "irq", "softirq", "idle", "unknown",
];

/// What a filter needs to know about an event. The engine implements it for
/// its event handles; the filter calls it only for the operands the
/// expression uses.
pub trait FilterSubject {
    /// The event class name, e.g. `sched_switch`.
    fn event_name(&self) -> &str;
    /// The event timestamp in nanoseconds.
    fn time_ns(&self) -> i64;
    /// The CPU (stream) the event was recorded on, if known.
    fn cpu(&self) -> Option<u64>;
    /// The trace's name (path or hostname) the event belongs to.
    fn trace_name(&self) -> &str;
    /// A payload, context or packet field; `None` when the event has no such
    /// field (or the path does not lead to a scalar).
    fn field(&self, scope: FieldScope, path: &[PathElem]) -> Option<Value<'_>>;
    /// A state attribute of the current process; `None` when unknown.
    fn state(&self, key: StateKey) -> Option<Value<'_>>;
}

impl<T: FilterSubject + ?Sized> FilterSubject for &T {
    fn event_name(&self) -> &str {
        (**self).event_name()
    }
    fn time_ns(&self) -> i64 {
        (**self).time_ns()
    }
    fn cpu(&self) -> Option<u64> {
        (**self).cpu()
    }
    fn trace_name(&self) -> &str {
        (**self).trace_name()
    }
    fn field(&self, scope: FieldScope, path: &[PathElem]) -> Option<Value<'_>> {
        (**self).field(scope, path)
    }
    fn state(&self, key: StateKey) -> Option<Value<'_>> {
        (**self).state(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_float_comparison_is_exact() {
        let big = (1i64 << 53) + 1;
        let f = (1i64 << 53) as f64;
        assert_eq!(
            Value::Int(big).compare(&Value::Float(f)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Value::Float(f).compare(&Value::Int(big)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::Int(3).compare(&Value::Float(3.0)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            Value::Int(3).compare(&Value::Float(3.5)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::Int(-3).compare(&Value::Float(-3.5)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Value::UInt(u64::MAX).compare(&Value::Float(1e30)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::Int(i64::MIN).compare(&Value::Float(-1e300)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Value::Int(0).compare(&Value::Float(f64::INFINITY)),
            Some(Ordering::Less)
        );
        assert_eq!(Value::Int(0).compare(&Value::Float(f64::NAN)), None);
    }

    #[test]
    fn signed_unsigned_comparison() {
        assert_eq!(
            Value::Int(-1).compare(&Value::UInt(u64::MAX)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::UInt(5).compare(&Value::Int(5)),
            Some(Ordering::Equal)
        );
    }

    #[test]
    fn mixed_kinds_have_no_order() {
        assert_eq!(Value::Str("1").compare(&Value::Int(1)), None);
        assert_eq!(Value::Bool(true).compare(&Value::Int(1)), None);
        assert_eq!(
            Value::Str("a").compare(&Value::Str("b")),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn truthiness() {
        assert!(Value::Int(-1).is_truthy());
        assert!(!Value::UInt(0).is_truthy());
        assert!(!Value::Float(0.0).is_truthy());
        assert!(!Value::Str("").is_truthy());
        assert!(Value::Str("x").is_truthy());
        assert!(!Value::Bool(false).is_truthy());
    }

    #[test]
    fn field_ref_display() {
        let r = FieldOperand {
            scope: FieldScope::Payload,
            path: vec![
                PathElem::Name("a".into()),
                PathElem::Index(2),
                PathElem::Name("b".into()),
            ],
        };
        assert_eq!(r.to_string(), "event.field.a[2].b");
    }
}
