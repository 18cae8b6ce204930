//! An [`EntitySink`] that keeps every entity in memory, per (container,
//! type) list and in pj_dump's list order, in a compact form.

use crate::model::{ContainerId, TypeId, ValueId};
use crate::simulate::{EntitySink, EventRecord, LinkRecord, StateRecord, VariableRecord};
use traceloom_base::FastMap;

/// A state interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct State {
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Stack depth when pushed.
    pub imbrication: u32,
    /// Its value.
    pub value: ValueId,
}

/// An event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    /// Time.
    pub time: f64,
    /// Its value.
    pub value: ValueId,
}

/// A piece of a variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variable {
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Value on `[start, end)`.
    pub value: f64,
}

/// A link; its key is read with [`EntityStore::link_key`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// Its value.
    pub value: ValueId,
    /// Where it starts.
    pub start_container: Option<ContainerId>,
    /// Where it ends.
    pub end_container: Option<ContainerId>,
    key_start: usize,
    key_len: u32,
}

/// A state slot whose state has not ended yet.
const NOT_YET: ValueId = ValueId(u32::MAX);

/// The entities of one (container, type) pair.
#[derive(Debug, Clone)]
pub enum EntityList {
    /// States.
    States(Vec<State>),
    /// Events.
    Events(Vec<Event>),
    /// Variable pieces.
    Variables(Vec<Variable>),
    /// Links.
    Links(Vec<Link>),
}

impl EntityList {
    /// Number of entities.
    pub fn len(&self) -> usize {
        match self {
            EntityList::States(v) => v.len(),
            EntityList::Events(v) => v.len(),
            EntityList::Variables(v) => v.len(),
            EntityList::Links(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Start time of entity `i` (the key pj_dump selects entities by).
    pub fn start_time(&self, i: usize) -> f64 {
        match self {
            EntityList::States(v) => v[i].start,
            EntityList::Events(v) => v[i].time,
            EntityList::Variables(v) => v[i].start,
            EntityList::Links(v) => v[i].start,
        }
    }
}

/// Every entity of a simulated trace.
#[derive(Debug, Default, Clone)]
pub struct EntityStore {
    lists: FastMap<(u32, u32), EntityList>,
    keys: Vec<u8>,
    entities: u64,
}

impl EntityStore {
    /// An empty store.
    pub fn new() -> EntityStore {
        EntityStore::default()
    }

    /// The entities of type `t` in container `c`, if any.
    pub fn list(&self, c: ContainerId, t: TypeId) -> Option<&EntityList> {
        self.lists.get(&(c.0, t.0))
    }

    /// The states of type `t` in container `c`, in start order.
    pub fn states(&self, c: ContainerId, t: TypeId) -> &[State] {
        match self.list(c, t) {
            Some(EntityList::States(v)) => v,
            _ => &[],
        }
    }

    /// The events of type `t` in container `c`, in time order.
    pub fn events(&self, c: ContainerId, t: TypeId) -> &[Event] {
        match self.list(c, t) {
            Some(EntityList::Events(v)) => v,
            _ => &[],
        }
    }

    /// The pieces of variable `t` in container `c`, in time order.
    pub fn variables(&self, c: ContainerId, t: TypeId) -> &[Variable] {
        match self.list(c, t) {
            Some(EntityList::Variables(v)) => v,
            _ => &[],
        }
    }

    /// The links of type `t` held by container `c`, in completion order.
    pub fn links(&self, c: ContainerId, t: TypeId) -> &[Link] {
        match self.list(c, t) {
            Some(EntityList::Links(v)) => v,
            _ => &[],
        }
    }

    /// The key of `link`.
    pub fn link_key(&self, link: &Link) -> &[u8] {
        self.keys
            .get(link.key_start..link.key_start + link.key_len as usize)
            .unwrap_or(b"")
    }

    /// Total number of entities stored.
    pub fn entity_count(&self) -> u64 {
        self.entities
    }

    fn slot(&mut self, c: ContainerId, t: TypeId, make: fn() -> EntityList) -> &mut EntityList {
        self.lists.entry((c.0, t.0)).or_insert_with(make)
    }
}

/// Puts `item` at position `seq`, padding with `pad` (states end out of
/// order; everything else arrives in order and simply appends).
fn place<T: Copy>(v: &mut Vec<T>, seq: u32, item: T, pad: T) {
    let i = seq as usize;
    if i < v.len() {
        v[i] = item;
    } else {
        v.resize(i, pad);
        v.push(item);
    }
}

impl EntitySink for EntityStore {
    fn state(&mut self, r: &StateRecord) {
        self.entities += 1;
        let pad = State {
            start: f64::NAN,
            end: f64::NAN,
            imbrication: 0,
            value: NOT_YET,
        };
        if let EntityList::States(v) =
            self.slot(r.container, r.type_id, || EntityList::States(Vec::new()))
        {
            let s = State {
                start: r.start,
                end: r.end,
                imbrication: r.imbrication,
                value: r.value,
            };
            place(v, r.seq, s, pad);
        }
    }

    fn event(&mut self, r: &EventRecord) {
        self.entities += 1;
        if let EntityList::Events(v) =
            self.slot(r.container, r.type_id, || EntityList::Events(Vec::new()))
        {
            let e = Event {
                time: r.time,
                value: r.value,
            };
            place(v, r.seq, e, e);
        }
    }

    fn variable(&mut self, r: &VariableRecord) {
        self.entities += 1;
        if let EntityList::Variables(v) =
            self.slot(r.container, r.type_id, || EntityList::Variables(Vec::new()))
        {
            let x = Variable {
                start: r.start,
                end: r.end,
                value: r.value,
            };
            place(v, r.seq, x, x);
        }
    }

    fn link(&mut self, r: &LinkRecord<'_>) {
        self.entities += 1;
        let key_start = self.keys.len();
        let key_len = r.key.len().min(u32::MAX as usize);
        self.keys.extend_from_slice(&r.key[..key_len]);
        let l = Link {
            start: r.start,
            end: r.end,
            value: r.value,
            start_container: r.start_container,
            end_container: r.end_container,
            key_start,
            key_len: key_len as u32,
        };
        if let EntityList::Links(v) =
            self.slot(r.container, r.type_id, || EntityList::Links(Vec::new()))
        {
            place(v, r.seq, l, l);
        }
    }
}
