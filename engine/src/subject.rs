//! A decoded CTF event (and the state as of it) seen by the filter
//! language: the [`FilterSubject`] the engine evaluates filters on.

use traceloom_ctf::event::FieldRef;
use traceloom_ctf::{Event, FieldValue};
use traceloom_filter::{FieldScope, FilterSubject, PathElem, StateKey, Value};
use traceloom_tsdl::ir::{FieldType, Scope};

use crate::state::TracesetState;

/// An event, with the traceset state as of that event when the filter
/// needs it.
#[derive(Debug, Clone, Copy)]
pub struct EventSubject<'e, 'a> {
    event: &'e Event<'a>,
    state: Option<&'e TracesetState>,
}

impl<'e, 'a> EventSubject<'e, 'a> {
    /// `event`, with `state` (the state before or after the event, as the
    /// caller's hook priority decides) for `state.*` operands.
    pub fn new(event: &'e Event<'a>, state: Option<&'e TracesetState>) -> Self {
        EventSubject { event, state }
    }

    fn thread(&self) -> Option<&'e crate::state::Thread> {
        let cpu = self.event.cpu_id()?.min(u32::MAX as u64) as u32;
        self.state?.current_thread(self.event.trace().index, cpu)
    }
}

/// The member `name` of a structure, also found under LTTng's `_name`
/// spelling (babeltrace2 shows member names without the leading `_`).
fn member<'a>(s: &FieldRef<'a>, name: &str) -> Option<FieldRef<'a>> {
    s.fields()
        .find(|(n, _)| *n == name || n.strip_prefix('_') == Some(name))
        .map(|(_, f)| f)
}

fn walk<'a>(mut f: FieldRef<'a>, path: &[PathElem]) -> Option<FieldRef<'a>> {
    for elem in path {
        // Variants are transparent: `a.b` reaches into a's selected option.
        while let Some((_, _, inner)) = f.variant() {
            f = inner;
        }
        f = match elem {
            PathElem::Name(n) => member(&f, n)?,
            PathElem::Index(i) => f.elements().nth(*i)?,
        };
    }
    while let Some((_, _, inner)) = f.variant() {
        f = inner;
    }
    Some(f)
}

fn scalar<'a>(f: &FieldRef<'a>) -> Option<Value<'a>> {
    match f.ty() {
        FieldType::Struct(_) | FieldType::Variant(_) => return None,
        FieldType::Array(_) | FieldType::Sequence(_) if f.str_bytes().is_none() => return None,
        _ => {}
    }
    Some(match f.value()? {
        FieldValue::UInt(v) => Value::UInt(v),
        FieldValue::SInt(v) => Value::Int(v),
        FieldValue::Float(v) => Value::Float(v),
        FieldValue::Str { .. } => Value::Str(std::str::from_utf8(f.str_bytes()?).ok()?),
        FieldValue::Len(_) | FieldValue::Variant(_) => return None,
    })
}

impl FilterSubject for EventSubject<'_, '_> {
    fn event_name(&self) -> &str {
        self.event.name()
    }

    fn time_ns(&self) -> i64 {
        self.event.timestamp_ns().unwrap_or(i64::MIN)
    }

    fn cpu(&self) -> Option<u64> {
        self.event.cpu_id()
    }

    fn trace_name(&self) -> &str {
        let t = self.event.trace();
        t.name
            .as_deref()
            .or_else(|| t.path.to_str())
            .unwrap_or_default()
    }

    fn field(&self, scope: FieldScope, path: &[PathElem]) -> Option<Value<'_>> {
        let scopes: &[Scope] = match scope {
            FieldScope::Payload => &[Scope::EventPayload],
            FieldScope::Context => &[Scope::EventContext, Scope::StreamEventContext],
            FieldScope::Packet => &[Scope::PacketContext],
        };
        scopes
            .iter()
            .filter_map(|&s| self.event.scope(s))
            .find_map(|root| walk(root, path))
            .and_then(|f| scalar(&f))
    }

    fn state(&self, key: StateKey) -> Option<Value<'_>> {
        let thread = self.thread();
        Some(match key {
            StateKey::Tid => Value::Int(thread?.tid),
            StateKey::Pid => Value::Int(thread?.pid),
            StateKey::Ppid => Value::Int(thread?.ppid),
            StateKey::Name => Value::Str(&thread?.name),
            StateKey::Status => Value::Str(thread?.status.name()),
            StateKey::Cpu => Value::UInt(u64::from(thread?.cpu?)),
            StateKey::Mode => {
                let cpu = self.event.cpu_id()?.min(u32::MAX as u64) as u32;
                let trace = self.state?.traces.get(self.event.trace().index)?;
                Value::Str(trace.cpu_mode(cpu).name())
            }
        })
    }
}
