//! The Pajé simulation: turns the event stream into containers, state
//! intervals, events, links and variable intervals.
//!
//! The rules are pajeng's (the reference): a PushState stacks a state with
//! an imbrication level one above the top, PopState ends the top, SetState
//! ends every stacked state and starts a new bottom one, ResetState ends all.
//! Set/Add/SubVariable end the current variable interval and start a new
//! one (or update it in place when at the same time). A link is matched by
//! (container, type, key) and may end before it starts. Destroying a
//! container ends everything still open in it and in its children; at the
//! end of the trace every container still alive is destroyed at the time of
//! the last event.
//!
//! Where pajeng would stop with an exception, the simulator records a
//! diagnostic, skips the offending event and goes on.
//!
//! Completed entities are handed to an [`EntitySink`] as soon as they can no
//! longer change, so a consumer may stream them. Each carries `seq`, its
//! position in pj_dump's per-(container, type) list (states are numbered
//! when they start but handed over when they end).

use crate::defs::{EventKind, Field};
use crate::error::{Diagnostics, Location, Severity};
use crate::keyset::UsedKeys;
use crate::model::{ContainerId, Model, TypeId, TypeNature, ValueId, ROOT_CONTAINER};
use crate::numparse::{parse_color, parse_strtof, Color};
use crate::reader::PajeEvent;
use std::sync::Arc;
use traceloom_base::FastMap;

/// pajeng's "not set yet" time.
const UNSET: f64 = -1.0;

/// A finished state interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateRecord {
    /// Container it belongs to.
    pub container: ContainerId,
    /// Its state type.
    pub type_id: TypeId,
    /// Position in its (container, type) list.
    pub seq: u32,
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Stack depth when pushed (0 for the bottom).
    pub imbrication: u32,
    /// Its value.
    pub value: ValueId,
}

/// An event (an instant with a value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventRecord {
    /// Container it belongs to.
    pub container: ContainerId,
    /// Its event type.
    pub type_id: TypeId,
    /// Position in its (container, type) list.
    pub seq: u32,
    /// Time.
    pub time: f64,
    /// Its value.
    pub value: ValueId,
}

/// A finished piece of a variable: `value` holds on `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariableRecord {
    /// Container it belongs to.
    pub container: ContainerId,
    /// Its variable type.
    pub type_id: TypeId,
    /// Position in its (container, type) list.
    pub seq: u32,
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Value (read in single precision, as pajeng does, then accumulated
    /// in double precision).
    pub value: f64,
}

/// A matched link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkRecord<'k> {
    /// Container it belongs to (the one named by the Container field).
    pub container: ContainerId,
    /// Its link type.
    pub type_id: TypeId,
    /// Position in its (container, type) list.
    pub seq: u32,
    /// Start time (-1 if only ends were seen, as pajeng reports it).
    pub start: f64,
    /// End time (-1 if only starts were seen).
    pub end: f64,
    /// Its value.
    pub value: ValueId,
    /// Where it starts.
    pub start_container: Option<ContainerId>,
    /// Where it ends.
    pub end_container: Option<ContainerId>,
    /// The key that matched start and end.
    pub key: &'k [u8],
}

/// Receives entities as the simulation completes them.
pub trait EntitySink {
    /// A state interval ended.
    fn state(&mut self, record: &StateRecord);
    /// An event happened.
    fn event(&mut self, record: &EventRecord);
    /// A variable interval ended.
    fn variable(&mut self, record: &VariableRecord);
    /// A link was matched.
    fn link(&mut self, record: &LinkRecord<'_>);
    /// A container was created (its data is in the simulator's model).
    fn container_created(&mut self, _container: ContainerId) {}
    /// A container was destroyed.
    fn container_destroyed(&mut self, _container: ContainerId) {}
}

/// A sink that drops everything (to only validate or build the model).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl EntitySink for NullSink {
    fn state(&mut self, _: &StateRecord) {}
    fn event(&mut self, _: &EventRecord) {}
    fn variable(&mut self, _: &VariableRecord) {}
    fn link(&mut self, _: &LinkRecord<'_>) {}
}

/// Options of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimOptions {
    /// pj_dump 1.3.6 sets its clock to 0 on events that have no `Time`
    /// field (definitions, `PajeTraceFile`); the clock at the end of the
    /// trace becomes the root container's end. When false (the default),
    /// such events leave the clock alone, so the trace ends at its last
    /// timed event.
    pub pajeng_untimed_clock: bool,
}

#[derive(Debug, Clone, Copy)]
struct OpenState {
    seq: u32,
    start: f64,
    imbrication: u32,
    value: ValueId,
}

#[derive(Debug, Clone, Copy)]
struct OpenVariable {
    seq: u32,
    start: f64,
    value: f64,
    closed: bool,
}

#[derive(Debug, Clone)]
struct PendingLink {
    /// Where the first half of the link was read.
    origin: Location,
    start: f64,
    end: f64,
    value: ValueId,
    start_container: Option<ContainerId>,
    end_container: Option<ContainerId>,
}

/// An entity appended with an unset end: pajeng gives it the container's
/// destruction time if it is still the last of its list then.
#[derive(Debug, Clone)]
enum Deferred {
    Event(EventRecord),
    Link {
        rec: PendingLink,
        seq: u32,
        key: Box<[u8]>,
    },
}

/// Simulation state of one (container, type) list.
#[derive(Debug, Clone)]
struct List {
    container: ContainerId,
    type_id: TypeId,
    count: u32,
    last_start: f64,
    last_end: f64,
    stack: Vec<OpenState>,
    var: Option<OpenVariable>,
    pending: FastMap<Box<[u8]>, PendingLink>,
    used_keys: UsedKeys,
    deferred: Option<Deferred>,
}

impl List {
    fn new(container: ContainerId, type_id: TypeId) -> List {
        List {
            container,
            type_id,
            count: 0,
            last_start: UNSET,
            last_end: UNSET,
            stack: Vec::new(),
            var: None,
            pending: FastMap::default(),
            used_keys: UsedKeys::default(),
            deferred: None,
        }
    }

    /// pajeng's check against the last entity of the list.
    fn in_order(&self, t: f64) -> bool {
        self.count == 0 || !(self.last_start > t || (self.last_end != UNSET && self.last_end > t))
    }

    fn flush_deferred(&mut self, sink: &mut (impl EntitySink + ?Sized)) {
        match self.deferred.take() {
            None => {}
            Some(Deferred::Event(e)) => sink.event(&e),
            Some(Deferred::Link { rec, seq, key }) => {
                emit_link(self.container, self.type_id, seq, &rec, &key, sink)
            }
        }
    }

    fn append(&mut self, start: f64, end: f64, sink: &mut (impl EntitySink + ?Sized)) -> u32 {
        self.flush_deferred(sink);
        let seq = self.count;
        self.count = self.count.saturating_add(1);
        self.last_start = start;
        self.last_end = end;
        seq
    }

    fn close_state(&mut self, s: OpenState, end: f64, sink: &mut (impl EntitySink + ?Sized)) {
        if s.seq.saturating_add(1) == self.count {
            self.last_end = end;
        }
        sink.state(&StateRecord {
            container: self.container,
            type_id: self.type_id,
            seq: s.seq,
            start: s.start,
            end,
            imbrication: s.imbrication,
            value: s.value,
        });
    }

    fn close_all_states(&mut self, end: f64, sink: &mut (impl EntitySink + ?Sized)) {
        let stack = std::mem::take(&mut self.stack);
        for s in stack {
            self.close_state(s, end, sink);
        }
    }

    fn close_variable(&mut self, end: f64, sink: &mut (impl EntitySink + ?Sized)) {
        if let Some(v) = self.var.as_mut().filter(|v| !v.closed) {
            v.closed = true;
            let v = *v;
            if v.seq.saturating_add(1) == self.count {
                self.last_end = end;
            }
            sink.variable(&VariableRecord {
                container: self.container,
                type_id: self.type_id,
                seq: v.seq,
                start: v.start,
                end,
                value: v.value,
            });
        }
    }
}

fn emit_link(
    container: ContainerId,
    type_id: TypeId,
    seq: u32,
    rec: &PendingLink,
    key: &[u8],
    sink: &mut (impl EntitySink + ?Sized),
) {
    sink.link(&LinkRecord {
        container,
        type_id,
        seq,
        start: rec.start,
        end: rec.end,
        value: rec.value,
        start_container: rec.start_container,
        end_container: rec.end_container,
        key,
    });
}

/// Why an event was rejected (the diagnostic has been recorded).
struct Rejected;

type Step = Result<(), Rejected>;

/// Which side of a link an event gives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LinkSide {
    Start,
    End,
}

/// Turns [`PajeEvent`]s into the [`Model`] and a stream of entities.
///
/// Cloneable so that a copy can stand for the simulation at a point of the
/// trace (the engine's saved states and checkpoints).
#[derive(Clone)]
pub struct Simulator {
    model: Model,
    /// Each shared with the copies (checkpoints) taken since it last
    /// changed: a copy costs a pointer per list, and a list is copied
    /// only when it changes after a copy. Most lists are of containers
    /// destroyed long ago, and never change again: copied whole, the
    /// lists of a 4 GB generated trace's 20,000 containers took 160 MB
    /// over its 28 checkpoints.
    lists: Vec<Arc<List>>,
    /// Lists of each container, for destruction.
    container_lists: Vec<Vec<u32>>,
    clock: f64,
    opts: SimOptions,
    diags: Diagnostics,
    finished: bool,
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new(SimOptions::default())
    }
}

impl Simulator {
    /// A simulator holding only the root container.
    pub fn new(opts: SimOptions) -> Simulator {
        Simulator {
            model: Model::new(),
            lists: Vec::new(),
            container_lists: vec![Vec::new()],
            clock: UNSET,
            opts,
            diags: Diagnostics::default(),
            finished: false,
        }
    }

    /// The model built so far.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Gives the model away (after [`Simulator::finish`]).
    pub fn into_parts(self) -> (Model, Diagnostics) {
        (self.model, self.diags)
    }

    /// Problems found so far.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diags
    }

    /// The simulation clock: the time of the last event.
    pub fn clock(&self) -> f64 {
        self.clock
    }

    fn reject(&mut self, ev: &PajeEvent<'_>, msg: String) -> Rejected {
        self.diags.report(
            Severity::Error,
            ev.location(),
            format!("{}: {msg}; event ignored", ev.kind.name()),
        );
        Rejected
    }

    fn warn(&mut self, ev: &PajeEvent<'_>, msg: String) {
        self.diags.report(
            Severity::Warning,
            ev.location(),
            format!("{}: {msg}", ev.kind.name()),
        );
    }

    /// Applies one event.
    pub fn apply(&mut self, ev: &PajeEvent<'_>, sink: &mut (impl EntitySink + ?Sized)) {
        if self.finished {
            return;
        }
        match ev.time {
            Some(t) => self.clock = t,
            None if self.opts.pajeng_untimed_clock => self.clock = 0.0,
            None => {}
        }
        let _ = match ev.kind {
            EventKind::DefineContainerType
            | EventKind::DefineStateType
            | EventKind::DefineEventType
            | EventKind::DefineVariableType
            | EventKind::DefineLinkType => self.define_type(ev),
            EventKind::DefineEntityValue => self.define_value(ev),
            EventKind::CreateContainer => self.create_container(ev, sink),
            EventKind::DestroyContainer => self.destroy_container(ev, sink),
            EventKind::NewEvent
            | EventKind::SetState
            | EventKind::PushState
            | EventKind::PopState
            | EventKind::ResetState
            | EventKind::SetVariable
            | EventKind::AddVariable
            | EventKind::SubVariable
            | EventKind::StartLink
            | EventKind::EndLink => self.entity_event(ev, sink),
            // Multi-file traces are assembled by the reader; nothing to do.
            EventKind::TraceFile => Ok(()),
        };
    }

    /// Ends the simulation: every container still alive is destroyed at
    /// the clock's time.
    pub fn finish(&mut self, sink: &mut (impl EntitySink + ?Sized)) {
        if self.finished {
            return;
        }
        self.finished = true;
        let t = self.clock;
        self.destroy_tree(ROOT_CONTAINER, t, sink);
    }

    fn color_of(&mut self, ev: &PajeEvent<'_>) -> Option<Color> {
        match parse_color(ev.field(Field::Color)) {
            Ok(c) => c,
            Err(()) => {
                let msg = format!(
                    "could not understand color '{}'; no color used",
                    lossy(ev.field(Field::Color))
                );
                self.warn(ev, msg);
                None
            }
        }
    }

    fn known_type(
        &mut self,
        ev: &PajeEvent<'_>,
        field: Field,
        what: &str,
    ) -> Result<TypeId, Rejected> {
        let ident = ev.field(field);
        match self.model.type_by_ident(ident) {
            Some(t) => Ok(t),
            None => Err(self.reject(ev, format!("unknown {what} '{}'", lossy(ident)))),
        }
    }

    fn known_container(
        &mut self,
        ev: &PajeEvent<'_>,
        field: Field,
        what: &str,
    ) -> Result<ContainerId, Rejected> {
        let ident = ev.field(field);
        match self.model.container_by_ident(ident) {
            Some(c) => Ok(c),
            None => Err(self.reject(ev, format!("unknown {what} '{}'", lossy(ident)))),
        }
    }

    fn define_type(&mut self, ev: &PajeEvent<'_>) -> Step {
        let name = ev.field(Field::Name);
        let alias = ev.field(Field::Alias);
        if ev.kind == EventKind::DefineContainerType && name == b"0" {
            return Err(self.reject(ev, "the type name '0' is reserved".into()));
        }
        let parent = self.known_type(ev, Field::Type, "container type")?;
        if self.model.type_(parent).nature != TypeNature::Container {
            let msg = format!("'{}' is not a container type", lossy(ev.field(Field::Type)));
            return Err(self.reject(ev, msg));
        }
        let ident = if alias.is_empty() { name } else { alias };
        if self.model.type_by_ident(ident).is_some() {
            return Err(self.reject(ev, format!("type '{}' already defined", lossy(ident))));
        }
        let mut color = None;
        let nature = match ev.kind {
            EventKind::DefineContainerType => TypeNature::Container,
            EventKind::DefineStateType => TypeNature::State,
            EventKind::DefineEventType => TypeNature::Event,
            EventKind::DefineVariableType => {
                color = self.color_of(ev);
                TypeNature::Variable
            }
            _ => {
                let start =
                    self.known_type(ev, Field::StartContainerType, "start container type")?;
                let end = self.known_type(ev, Field::EndContainerType, "end container type")?;
                TypeNature::Link { start, end }
            }
        };
        self.model.add_type(parent, name, alias, nature, color);
        Ok(())
    }

    fn define_value(&mut self, ev: &PajeEvent<'_>) -> Step {
        let name = ev.field(Field::Name);
        let alias = ev.field(Field::Alias);
        let t = self.known_type(ev, Field::Type, "type")?;
        let nature = self.model.type_(t).nature;
        if matches!(nature, TypeNature::Container | TypeNature::Variable) {
            let msg = format!(
                "cannot define value '{}' for '{}', a {} type",
                lossy(name),
                lossy(ev.field(Field::Type)),
                nature.kind_name().to_lowercase()
            );
            return Err(self.reject(ev, msg));
        }
        let ty = self.model.type_(t);
        let clash = if !alias.is_empty() && ty.value(alias).is_some() {
            Some(alias)
        } else if ty.value(name).is_some() {
            Some(name)
        } else {
            None
        };
        if let Some(c) = clash {
            return Err(self.reject(ev, format!("value '{}' already defined", lossy(c))));
        }
        let color = self.color_of(ev);
        self.model.add_value(t, name, alias, color);
        Ok(())
    }

    fn create_container(
        &mut self,
        ev: &PajeEvent<'_>,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        let name = ev.field(Field::Name);
        let alias = ev.field(Field::Alias);
        let ident = if alias.is_empty() { name } else { alias };
        if ident == b"0" {
            return Err(self.reject(ev, "the container name '0' is reserved".into()));
        }
        let t = self.known_type(ev, Field::Type, "container type")?;
        if self.model.type_(t).nature != TypeNature::Container {
            let msg = format!("'{}' is not a container type", lossy(ev.field(Field::Type)));
            return Err(self.reject(ev, msg));
        }
        let parent = self.known_container(ev, Field::Container, "container")?;
        if self.model.type_(t).parent != Some(self.model.container(parent).type_id) {
            let msg = format!(
                "container type '{}' is not a child of the type of container '{}'",
                lossy(ev.field(Field::Type)),
                lossy(ev.field(Field::Container))
            );
            return Err(self.reject(ev, msg));
        }
        if self.model.container_by_ident(ident).is_some() {
            return Err(self.reject(ev, format!("container '{}' already exists", lossy(ident))));
        }
        let start = ev.time.unwrap_or(self.clock);
        let id = self.model.add_container(parent, t, name, alias, start);
        self.container_lists.push(Vec::new());
        sink.container_created(id);
        Ok(())
    }

    fn destroy_container(
        &mut self,
        ev: &PajeEvent<'_>,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        let t = self.known_type(ev, Field::Type, "container type")?;
        let c = self.known_container(ev, Field::Name, "container")?;
        if self.model.container(c).type_id != t {
            let msg = format!(
                "container '{}' is not of type '{}'",
                lossy(ev.field(Field::Name)),
                lossy(ev.field(Field::Type))
            );
            return Err(self.reject(ev, msg));
        }
        let time = ev.time.unwrap_or(self.clock);
        if time < self.model.container(c).end {
            return Err(self.reject(ev, "container events are not time-ordered".into()));
        }
        if self.model.container(c).destroyed {
            // pajeng silently ignores a second destruction.
            return Ok(());
        }
        self.destroy_tree(c, time, sink);
        Ok(())
    }

    /// Destroys `root` (unless already destroyed) and, below it, every
    /// container not yet destroyed, all at `time`.
    fn destroy_tree(
        &mut self,
        root: ContainerId,
        time: f64,
        sink: &mut (impl EntitySink + ?Sized),
    ) {
        // An explicit stack: adversarial traces can nest very deeply.
        let mut todo = vec![root];
        while let Some(c) = todo.pop() {
            if !self.model.container(c).destroyed {
                self.destroy_one(c, time, sink);
            }
            let children = &self.model.container(c).children;
            todo.extend(children.iter().rev().copied());
        }
    }

    fn destroy_one(&mut self, c: ContainerId, time: f64, sink: &mut (impl EntitySink + ?Sized)) {
        {
            let cont = self.model.container_mut(c);
            cont.destroyed = true;
            cont.end = time;
        }
        let list_ids = std::mem::take(&mut self.container_lists[c.0 as usize]);
        for &l in &list_ids {
            let list = Arc::make_mut(&mut self.lists[l as usize]);
            // The last entity of a list gets the destruction time as end if
            // it has none yet (pajeng's rule); only deferred ones can lack it.
            match list.deferred.take() {
                Some(Deferred::Event(mut e)) => {
                    e.time = time;
                    sink.event(&e);
                }
                Some(Deferred::Link { mut rec, seq, key }) => {
                    rec.end = time;
                    emit_link(list.container, list.type_id, seq, &rec, &key, sink);
                }
                None => {}
            }
            list.close_variable(time, sink);
            list.close_all_states(time, sink);
            let pending = std::mem::take(&mut list.pending);
            // Report in file order so the first unmatched half comes first.
            let mut halves: Vec<(&Box<[u8]>, &PendingLink)> = pending.iter().collect();
            halves.sort_by_key(|(_, p)| (p.origin.file.clone(), p.origin.line));
            for (key, p) in halves {
                let missing = if p.start == UNSET { "start" } else { "end" };
                let msg = format!(
                    "link with key '{}' of type '{}' in container '{}' has no {missing} before the container ends at {time}; dropped",
                    lossy(key),
                    lossy(&self.model.type_(list.type_id).name),
                    lossy(&self.model.container(c).name),
                );
                self.diags.report(Severity::Error, p.origin.clone(), msg);
            }
            list.used_keys = UsedKeys::default();
        }
        self.container_lists[c.0 as usize] = list_ids;
        sink.container_destroyed(c);
    }

    fn list_index(&mut self, c: ContainerId, t: TypeId) -> usize {
        // A container has a handful of lists: a scan beats a hash lookup.
        let mine = &self.container_lists[c.0 as usize];
        if let Some(&l) = mine.iter().find(|&&l| self.lists[l as usize].type_id == t) {
            return l as usize;
        }
        let id = self.lists.len() as u32;
        self.lists.push(Arc::new(List::new(c, t)));
        self.container_lists[c.0 as usize].push(id);
        id as usize
    }

    fn entity_event(&mut self, ev: &PajeEvent<'_>, sink: &mut (impl EntitySink + ?Sized)) -> Step {
        let c = self.known_container(ev, Field::Container, "container")?;
        let other = match ev.kind {
            EventKind::StartLink => {
                Some(self.known_container(ev, Field::StartContainer, "start container")?)
            }
            EventKind::EndLink => {
                Some(self.known_container(ev, Field::EndContainer, "end container")?)
            }
            _ => None,
        };
        let t = self.known_type(ev, Field::Type, "type")?;
        let ty = self.model.type_(t);
        let nature_ok = match ev.kind {
            EventKind::NewEvent => ty.nature == TypeNature::Event,
            EventKind::SetState
            | EventKind::PushState
            | EventKind::PopState
            | EventKind::ResetState => ty.nature == TypeNature::State,
            EventKind::SetVariable | EventKind::AddVariable | EventKind::SubVariable => {
                ty.nature == TypeNature::Variable
            }
            _ => matches!(ty.nature, TypeNature::Link { .. }),
        };
        if !nature_ok {
            let msg = format!(
                "'{}' is a {} type, not the kind this event needs",
                lossy(ev.field(Field::Type)),
                ty.nature.kind_name().to_lowercase()
            );
            return Err(self.reject(ev, msg));
        }
        let cont_type = self.model.container(c).type_id;
        if ty.parent != Some(cont_type) {
            let msg = format!(
                "type '{}' is not a child of the type of container '{}'",
                lossy(ev.field(Field::Type)),
                lossy(ev.field(Field::Container))
            );
            return Err(self.reject(ev, msg));
        }
        if let (Some(o), TypeNature::Link { start, end }) = (other, ty.nature) {
            let (expected, side) = if ev.kind == EventKind::StartLink {
                (start, "start")
            } else {
                (end, "end")
            };
            if self.model.container(o).type_id != expected {
                let msg = format!(
                    "container '{}' does not have the type expected for the {side} of link type '{}'",
                    lossy(&self.model.container(o).name),
                    lossy(ev.field(Field::Type))
                );
                return Err(self.reject(ev, msg));
            }
        }
        let value = match ev.kind {
            EventKind::NewEvent
            | EventKind::SetState
            | EventKind::PushState
            | EventKind::StartLink
            | EventKind::EndLink => Some(self.model.value_or_insert(t, ev.field(Field::Value))),
            _ => None,
        };
        if self.model.container(c).destroyed {
            // pajeng ignores events sent to destroyed containers.
            return Ok(());
        }
        let time = ev.time.unwrap_or(self.clock);
        let l = self.list_index(c, t);
        let result = match ev.kind {
            EventKind::NewEvent => self.new_event(ev, l, time, value, sink),
            EventKind::SetState | EventKind::PushState => self.push_state(ev, l, time, value, sink),
            EventKind::PopState => self.pop_state(ev, l, time, sink),
            EventKind::ResetState => self.reset_state(ev, l, time, sink),
            EventKind::SetVariable | EventKind::AddVariable | EventKind::SubVariable => {
                self.variable(ev, l, time, sink)
            }
            EventKind::StartLink => self.link(ev, l, time, value, other, LinkSide::Start, sink),
            _ => self.link(ev, l, time, value, other, LinkSide::End, sink),
        };
        if result.is_ok() {
            self.model.container_mut(c).end = time;
        }
        result
    }

    fn check_order(&mut self, ev: &PajeEvent<'_>, l: usize, t: f64) -> Step {
        if self.lists[l].in_order(t) {
            Ok(())
        } else {
            Err(self.reject(
                ev,
                "trace is not time-ordered for this container and type".into(),
            ))
        }
    }

    fn new_event(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        value: Option<ValueId>,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        self.check_order(ev, l, t)?;
        let list = Arc::make_mut(&mut self.lists[l]);
        let seq = list.append(t, t, sink);
        let rec = EventRecord {
            container: list.container,
            type_id: list.type_id,
            seq,
            time: t,
            value: value.unwrap_or(ValueId(0)),
        };
        if t == UNSET {
            list.deferred = Some(Deferred::Event(rec));
        } else {
            sink.event(&rec);
        }
        Ok(())
    }

    fn push_state(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        value: Option<ValueId>,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        self.check_order(ev, l, t)?;
        let list = Arc::make_mut(&mut self.lists[l]);
        if ev.kind == EventKind::SetState {
            list.close_all_states(t, sink);
        }
        let imbrication = list
            .stack
            .last()
            .map_or(0, |s| s.imbrication.saturating_add(1));
        let seq = list.append(t, UNSET, sink);
        list.stack.push(OpenState {
            seq,
            start: t,
            imbrication,
            value: value.unwrap_or(ValueId(0)),
        });
        Ok(())
    }

    fn pop_state(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        self.check_order(ev, l, t)?;
        let list = Arc::make_mut(&mut self.lists[l]);
        match list.stack.pop() {
            Some(s) => {
                list.close_state(s, t, sink);
                Ok(())
            }
            None => Err(self.reject(ev, "pop of a state that has no value".into())),
        }
    }

    fn reset_state(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        self.check_order(ev, l, t)?;
        Arc::make_mut(&mut self.lists[l]).close_all_states(t, sink);
        Ok(())
    }

    fn variable(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        let v = f64::from(parse_strtof(ev.field(Field::Value)));
        if ev.kind != EventKind::SetVariable && self.lists[l].count == 0 {
            let msg = if ev.kind == EventKind::AddVariable {
                "addition to"
            } else {
                "subtraction from"
            };
            return Err(self.reject(ev, format!("{msg} a variable that has no value yet")));
        }
        if self.lists[l].count > 0 {
            self.check_order(ev, l, t)?;
        }
        let list = Arc::make_mut(&mut self.lists[l]);
        let previous = list.var.map_or(0.0, |p| p.value);
        let new_value = match ev.kind {
            EventKind::SetVariable => v,
            EventKind::AddVariable => previous + v,
            _ => previous - v,
        };
        if list.count > 0 && list.last_start == t {
            // Same time as the current piece: update it in place.
            if let Some(open) = list.var.as_mut() {
                open.value = new_value;
            }
            return Ok(());
        }
        list.close_variable(t, sink);
        let seq = list.append(t, UNSET, sink);
        list.var = Some(OpenVariable {
            seq,
            start: t,
            value: new_value,
            closed: false,
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        ev: &PajeEvent<'_>,
        l: usize,
        t: f64,
        value: Option<ValueId>,
        other: Option<ContainerId>,
        side: LinkSide,
        sink: &mut (impl EntitySink + ?Sized),
    ) -> Step {
        let key = ev.field(Field::Key);
        let value = value.unwrap_or(ValueId(0));
        if self.lists[l].used_keys.contains(key) {
            return Err(self.reject(
                ev,
                format!("key '{}' was already used for another link", lossy(key)),
            ));
        }
        let Some(mut rec) = self.lists[l].pending.get(key).cloned() else {
            let rec = match side {
                LinkSide::Start => PendingLink {
                    origin: ev.location(),
                    start: t,
                    end: UNSET,
                    value,
                    start_container: other,
                    end_container: None,
                },
                LinkSide::End => PendingLink {
                    origin: ev.location(),
                    start: UNSET,
                    end: t,
                    value,
                    start_container: None,
                    end_container: other,
                },
            };
            Arc::make_mut(&mut self.lists[l])
                .pending
                .insert(key.into(), rec);
            return Ok(());
        };
        if rec.value != value {
            let msg = format!(
                "value '{}' differs from the value of the other end of link '{}' ('{}')",
                lossy(ev.field(Field::Value)),
                lossy(key),
                lossy(&self.model.value(rec.value).name)
            );
            return Err(self.reject(ev, msg));
        }
        match side {
            LinkSide::Start => {
                rec.start = t;
                rec.start_container = other;
            }
            LinkSide::End => {
                rec.end = t;
                rec.end_container = other;
            }
        }
        self.check_order(ev, l, t)?;
        let list = Arc::make_mut(&mut self.lists[l]);
        list.pending.remove(key);
        list.used_keys.insert(key);
        let seq = list.append(rec.start, rec.end, sink);
        if rec.end == UNSET {
            list.deferred = Some(Deferred::Link {
                rec,
                seq,
                key: key.into(),
            });
        } else {
            emit_link(list.container, list.type_id, seq, &rec, key, sink);
        }
        Ok(())
    }
}

/// A trace token for a message, cut short (see [`crate::error::cut_bytes`]).
fn lossy(b: &[u8]) -> String {
    crate::error::cut_bytes(b)
}
