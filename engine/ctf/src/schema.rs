//! A trace class compiled for decoding: programs for every scope of every
//! stream class and event class, event lookup tables and clocks.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::classes::EventTable;
use crate::decode::clock::ClockConv;
use crate::decode::plan::{FastEvents, Plan};
use crate::decode::{auto_clock_field, Compiler, Program};
use crate::error::SchemaError;
use crate::event::display_name;
use traceloom_tsdl::ir::{ClockClass, EventClass, FieldType, Scope, TraceClass};

/// Compiled event class (its id is its key in [`EventTable`]).
#[derive(Debug)]
pub(crate) struct CompiledEvent {
    /// Event context, `Mark { slot: 1 }`, payload.
    pub(crate) body: Program,
    /// `body` for the fast path, when it has one.
    pub(crate) body_plan: Option<Plan>,
}

/// Compiled stream class.
#[derive(Debug)]
pub(crate) struct CompiledStream {
    pub(crate) id: u64,
    /// Packet header compiled with this stream class's registers (the
    /// packet context may refer to header fields).
    pub(crate) packet_header: Program,
    pub(crate) packet_context: Program,
    /// Event header, `Mark { slot: 0 }` (the event's timestamp is the clock
    /// there), stream event context.
    pub(crate) head: Program,
    /// `head` for the fast path, when it has one.
    pub(crate) head_plan: Option<Plan>,
    pub(crate) events: EventTable<CompiledEvent>,
    /// The event classes, what an [`crate::event::Event`] points back to.
    pub(crate) classes: EventTable<Arc<EventClass>>,
    /// The byte-aligned events, decoded without the plans (`plan::fast`).
    pub(crate) fast: Option<FastEvents>,
    /// The only event class, used when the event header has no `id`.
    pub(crate) single_event: Option<u64>,
    /// Registers needed by the largest event of this stream class.
    pub(crate) nregs: usize,
    /// The stream's default clock (babeltrace2: the clock mapped by any
    /// integer of the stream's scopes).
    pub(crate) clock: Option<ClockClass>,
    pub(crate) conv: Option<ClockConv>,
}

/// Compiled trace class.
#[derive(Debug)]
pub(crate) struct CompiledTrace {
    pub(crate) class: Arc<TraceClass>,
    /// Packet header with trace-level registers, to find the stream class.
    pub(crate) packet_header: Program,
    pub(crate) header_nregs: usize,
    pub(crate) streams: BTreeMap<u64, CompiledStream>,
}

/// Collects the clock names integers of `ty` map to.
fn mapped_clocks<'a>(ty: &'a FieldType, out: &mut Vec<&'a str>) {
    match ty {
        FieldType::Integer(i) => out.extend(i.mapped_clock.as_deref()),
        FieldType::Enum(e) => out.extend(e.container.mapped_clock.as_deref()),
        FieldType::Struct(s) => s.fields.iter().for_each(|f| mapped_clocks(&f.ty, out)),
        FieldType::Variant(v) => v.options.iter().for_each(|o| mapped_clocks(&o.ty, out)),
        FieldType::Array(a) => mapped_clocks(&a.element, out),
        FieldType::Sequence(s) => mapped_clocks(&s.element, out),
        _ => {}
    }
}

/// Whether `ty` has a member that babeltrace2 would auto-map to a clock.
fn has_auto_clock_field(scope: Scope, ty: &FieldType) -> bool {
    match ty {
        FieldType::Struct(s) => s.fields.iter().any(|f| {
            let unmapped_int = match &f.ty {
                FieldType::Integer(i) => i.mapped_clock.is_none(),
                FieldType::Enum(e) => e.container.mapped_clock.is_none(),
                _ => false,
            };
            (unmapped_int && auto_clock_field(scope, display_name(&f.name)))
                || has_auto_clock_field(scope, &f.ty)
        }),
        FieldType::Variant(v) => v.options.iter().any(|o| has_auto_clock_field(scope, &o.ty)),
        _ => false,
    }
}

impl CompiledTrace {
    /// Compiles every scope of `class`.
    pub(crate) fn new(class_arc: Arc<TraceClass>) -> Result<Self, SchemaError> {
        let keep = Arc::clone(&class_arc);
        let class: &TraceClass = &keep;
        let ph = class.packet_header.as_ref();
        let header_compiler =
            Compiler::new([ph, None, None, None, None, None]).map_err(|source| {
                SchemaError::Compile {
                    stream: 0,
                    event: None,
                    source,
                }
            })?;
        let packet_header = header_compiler
            .compile(Scope::PacketHeader)
            .map_err(|source| SchemaError::Compile {
                stream: 0,
                event: None,
                source,
            })?;
        let mut streams = BTreeMap::new();
        for (&id, sc) in &class.streams {
            let err = |event, source| SchemaError::Compile {
                stream: id,
                event,
                source,
            };
            let roots = [
                ph,
                sc.packet_context.as_ref(),
                sc.event_header.as_ref(),
                sc.event_context.as_ref(),
                None,
                None,
            ];
            let mut comp = Compiler::new(roots).map_err(|e| err(None, e))?;
            // CTF 2 gives meanings by roles, CTF 1.8 by names (and
            // babeltrace2 maps unmapped timestamps to the only clock).
            comp.roles = class.major == 2;
            comp.auto_clock = !comp.roles && class.clocks.len() <= 1;
            // Event scopes may refer to stream-level fields (a sequence
            // length in `stream.event.header`): those fields need
            // registers before the stream-level scopes are compiled.
            for (&eid, ec) in &sc.events {
                for ty in [&ec.context, &ec.payload].into_iter().flatten() {
                    comp.add_refs_from(ty).map_err(|e| err(Some(eid), e))?;
                }
            }
            let compile = |s| comp.compile(s).map_err(|e| err(None, e));
            let packet_header = compile(Scope::PacketHeader)?;
            let packet_context = compile(Scope::PacketContext)?;
            let event_header = compile(Scope::EventHeader)?;
            let event_context = compile(Scope::StreamEventContext)?;
            let mut nregs = comp.nregs;
            // Straight into the table: a vector of them first held every
            // compiled event twice (23 MB of 128,000 event classes).
            let max_id = sc.events.keys().next_back().copied().unwrap_or(0);
            let mut events = if max_id < 1 << 16 {
                let mut v: Vec<Option<CompiledEvent>> = Vec::new();
                v.resize_with(max_id as usize + 1, || None);
                EventTable::Dense(v)
            } else {
                EventTable::Sparse(HashMap::with_capacity(sc.events.len()))
            };
            for (&eid, ec) in &sc.events {
                let c = comp
                    .with_event(ec.context.as_deref(), ec.payload.as_deref())
                    .map_err(|e| err(Some(eid), e))?;
                nregs = nregs.max(c.nregs);
                let context = c
                    .compile(Scope::EventContext)
                    .map_err(|e| err(Some(eid), e))?;
                let payload = c
                    .compile(Scope::EventPayload)
                    .map_err(|e| err(Some(eid), e))?;
                let body = Program::concat(&context, 1, &payload);
                let ce = CompiledEvent {
                    body_plan: Plan::compile(&body),
                    body,
                };
                match &mut events {
                    EventTable::Dense(v) => v[eid as usize] = Some(ce),
                    EventTable::Sparse(m) => {
                        m.insert(eid, ce);
                    }
                }
            }
            let classes =
                EventTable::new(max_id, sc.events.iter().map(|(&id, ec)| (id, ec.clone())));
            let single_event = if sc.events.len() == 1 {
                sc.events.keys().next().copied()
            } else {
                None
            };
            let clock = stream_clock(class, sc)?;
            let conv = clock.as_ref().map(ClockConv::new);
            let head = Program::concat(&event_header, 0, &event_context);
            let head_plan = Plan::compile(&head);
            let fast = head_plan
                .as_ref()
                .and_then(|p| FastEvents::compile(p, &events, |ce| ce.body_plan.as_ref()));
            streams.insert(
                id,
                CompiledStream {
                    id,
                    packet_header,
                    packet_context,
                    head_plan,
                    head,
                    events,
                    classes,
                    fast,
                    single_event,
                    nregs,
                    clock,
                    conv,
                },
            );
        }
        Ok(CompiledTrace {
            class: class_arc,
            packet_header,
            header_nregs: header_compiler.nregs,
            streams,
        })
    }

    /// The stream class a packet belongs to: the header's `stream_id`, or
    /// the only stream class when the header has none.
    pub(crate) fn stream(&self, stream_id: Option<u64>) -> Option<&CompiledStream> {
        match stream_id {
            Some(id) => self.streams.get(&id),
            None if self.streams.len() == 1 => self.streams.values().next(),
            None => None,
        }
    }
}

/// The default clock of a stream class, as babeltrace2 picks it: the one
/// clock that integers of its scopes map to; when none is mapped but a
/// `timestamp`-like field exists, the trace's only clock (or an implicit
/// 1 GHz clock named `default` when the trace declares none).
fn stream_clock(
    class: &TraceClass,
    sc: &traceloom_tsdl::ir::StreamClass,
) -> Result<Option<ClockClass>, SchemaError> {
    let mut names = Vec::new();
    for ty in [&sc.packet_context, &sc.event_header, &sc.event_context]
        .into_iter()
        .flatten()
    {
        mapped_clocks(ty, &mut names);
    }
    for ec in sc.events.values() {
        for ty in [&ec.context, &ec.payload].into_iter().flatten() {
            mapped_clocks(ty, &mut names);
        }
    }
    names.sort_unstable();
    names.dedup();
    let auto = sc
        .packet_context
        .as_ref()
        .is_some_and(|t| has_auto_clock_field(Scope::PacketContext, t))
        || sc
            .event_header
            .as_ref()
            .is_some_and(|t| has_auto_clock_field(Scope::EventHeader, t));
    match names.as_slice() {
        [] if auto && class.clocks.len() <= 1 => Ok(Some(match class.clocks.as_slice() {
            [only] => only.clone(),
            _ => ClockClass {
                name: "default".into(),
                freq: 1_000_000_000,
                offset_s: 0,
                offset: 0,
                precision: 0,
                absolute: false,
                uuid: None,
                description: None,
            },
        })),
        [] => Ok(None),
        [one] => class
            .clock(one)
            .cloned()
            .map(Some)
            .ok_or_else(|| SchemaError::UnknownClock(one.to_string())),
        _ => Err(SchemaError::SeveralClocks(sc.id)),
    }
}
