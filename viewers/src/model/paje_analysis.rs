//! The whole-trace pass over a Pajé trace: ViTE's model of a trace, built
//! by an events request on the tab's [`PajeSession`] like the kernel
//! analysis ([`crate::model::kernel`]) is for CTF.
//!
//! [`PajeAnalysis::request`] is a LOW-priority request over the whole
//! trace whose DEFAULT hook (after the simulation, the STATE hook, has
//! applied the event) collects the entities the event completed into a
//! [`PajeCollector`]: per container, one *lane* per state type and nesting
//! level (states of one level of one container never overlap, and complete
//! in start order, so each lane is an append-only step function), the
//! events and the variables' values per type, the links per type (a link
//! completes at its later end, so they come sorted by it), a fine
//! histogram of the events. Everything is appended to packed columns
//! ([`ColumnBuilder`]s, as the kernel pass's change lists: blocks of 64
//! items, delta-coded times, dictionary-coded values), so
//! [`PajeCollector::snapshot`] — what the window shows while the pass goes
//! on — shares what it holds in O(columns) and copies only their unpacked
//! tails. Given a spill directory ([`PajeSession::set_spill_dir`]) the
//! pass moves the full chunks of its columns to a mapped spill file every
//! [`PajeSession::spill_every`] events, and seals a container as soon as
//! it is destroyed (its columns' partial chunks and unpacked tails copied
//! there too, with one write: a generated 1 GB trace creates and destroys
//! over 5,000 containers, whose growing tails otherwise stayed on the heap
//! to the end), so that its heap stays bounded whatever the trace's size.
//! At the end of the trace the containers still alive are destroyed as
//! `pj_dump` does (the last states close then).
//!
//! The snapshot, [`PajeData`], is immutable and `Arc`-shared; it renders
//! time graphs, statistics and histograms ([`crate::model::paje_render`],
//! [`crate::model::paje_stats`]).

use std::path::Path;
use std::sync::Arc;
use traceloom_base::{Time, TimeRange};

use traceloom_engine::paje_source::{seconds_to_ns, PajeCurrent, PajePosition};
use traceloom_engine::paje_state::{PajeEntity, PajeLink, PajeState};
use traceloom_engine::request::{OwnerId, RequestId, Start};
use traceloom_hooks::{Flow, HookContext, Priority};
use traceloom_paje::{
    ContainerId, Diagnostic, EventRecord, Model, StateRecord, TypeId, TypeNature, VariableRecord,
};

use crate::model::column::{Column, ColumnBuilder};
use crate::model::histogram::FineHistogram;
use crate::model::paje_session::{PajeRequest, PajeSession};
use crate::model::paje_stats::StateTotals;
use crate::model::series::{SealBatch, SealedBatch};
use crate::model::session::{OpenError, Payload};
use crate::model::spill::Arena;
use crate::model::steps::{Blocks, BlocksBuilder, NONE, NO_CLASS};
use crate::style::Rgba;

/// An event of a container: its time and value (plain data of a fixed
/// layout, packed in [`Column`]s and mapped back from a store as it is).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct EventItem {
    /// Time (ns).
    pub time: Time,
    /// Value id.
    pub value: u32,
    /// Zero (explicit padding).
    pub pad: u32,
}

impl EventItem {
    /// The event of value `value` at `time`.
    pub fn new(time: Time, value: u32) -> Self {
        EventItem {
            time,
            value,
            pad: 0,
        }
    }
}

/// A value of a variable, from `time` to the next item's time (or the
/// variable's end).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct VarItem {
    /// Start (ns).
    pub time: Time,
    /// Value.
    pub value: f64,
}

/// A link between two containers.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LinkItem {
    /// Start (ns).
    pub start: Time,
    /// End (ns).
    pub end: Time,
    /// Starting container.
    pub from: u32,
    /// Ending container.
    pub to: u32,
    /// Value id.
    pub value: u32,
    /// Zero (explicit padding).
    pub pad: u32,
}

impl LinkItem {
    /// A link from container `from` at `start` to `to` at `end`.
    pub fn new(from: u32, to: u32, start: Time, end: Time, value: u32) -> Self {
        LinkItem {
            start,
            end,
            from,
            to,
            value,
            pad: 0,
        }
    }

    /// When the link completed: its later end (links are sorted by it).
    pub fn completed(&self) -> Time {
        self.start.max(self.end)
    }
}

/// A type of the trace, as the views name it.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeInfo {
    /// Display name.
    pub name: Arc<str>,
    /// What its entities are.
    pub nature: TypeNature,
    /// Colour given by the trace (variable types).
    pub color: Option<Rgba>,
}

/// A value of a type, as the views name it.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInfo {
    /// Display name (its alias when it has no name).
    pub name: Arc<str>,
    /// Its type.
    pub type_id: TypeId,
    /// Colour given by the trace, if any.
    pub color: Option<Rgba>,
}

/// One state type at one nesting level of a container: a step function.
#[derive(Debug, Clone)]
pub struct Lane {
    /// State type.
    pub type_id: TypeId,
    /// Nesting level (0: the bottom of the stack).
    pub level: u32,
    /// Change times.
    pub times: Column<Time>,
    /// Value id per change ([`NONE`]: no state until the next change).
    pub codes: Column<u32>,
    /// End of the last state.
    pub end: Time,
    /// The summary of the changes per block of 64 (first time, longest
    /// interval, value that lasted longest as a class of
    /// [`classes`](Self::classes)): what a render draws a column of
    /// sub-pixel states from without decoding them. Empty for a lane of
    /// more than [`MAX_CLASSES`] values.
    pub blocks: Blocks,
    /// The value id of each class of [`blocks`](Self::blocks), in order
    /// of first appearance.
    pub classes: Arc<[u32]>,
}

/// Most values a lane's summary tells apart (a class is a byte, and
/// [`NO_CLASS`] means no state): a lane of more values has no summary and
/// is drawn from its changes alone.
pub const MAX_CLASSES: usize = NO_CLASS as usize;

/// Values of one variable type of a container.
#[derive(Debug, Clone)]
pub struct VarSeries {
    /// Variable type.
    pub type_id: TypeId,
    /// Values, by time.
    pub items: Column<VarItem>,
    /// End of the last value.
    pub end: Time,
}

/// A container and what it holds.
#[derive(Debug, Clone)]
pub struct ContainerData {
    /// Its id in the trace.
    pub id: ContainerId,
    /// Parent (`None` for children of the root, which is not shown).
    pub parent: Option<ContainerId>,
    /// Display name.
    pub name: Arc<str>,
    /// What events call it (its alias, or its name without one).
    pub ident: Arc<str>,
    /// Its type.
    pub type_id: TypeId,
    /// Creation time.
    pub start: Time,
    /// Destruction time, if destroyed.
    pub end: Option<Time>,
    /// State lanes, by (type, level).
    pub lanes: Vec<Lane>,
    /// Events, per event type, by time.
    pub events: Vec<(TypeId, Column<EventItem>)>,
    /// Variables, per type.
    pub variables: Vec<VarSeries>,
}

/// Links of one link type, by completion time.
#[derive(Debug, Clone)]
pub struct LinkSeries {
    /// Link type.
    pub type_id: TypeId,
    /// The links.
    pub items: Column<LinkItem>,
    /// Longest link (ns), to bound searches by start.
    pub longest: Time,
}

/// What the pass collected up to a point: a snapshot (see the module doc).
#[derive(Debug, Clone)]
pub struct PajeData {
    /// Times of the first and last timed events of the trace.
    pub span: TimeRange,
    /// How far the pass read (the time of the next event; the span's end
    /// once complete).
    pub reached: Time,
    /// Whether the pass read the whole trace.
    pub complete: bool,
    /// Types, by id.
    pub types: Arc<[TypeInfo]>,
    /// Values, by id.
    pub values: Arc<[ValueInfo]>,
    /// Containers (the root excepted), in creation order; each shared
    /// with the other snapshots once destroyed (final).
    pub containers: Arc<[Arc<ContainerData>]>,
    /// Links per type.
    pub links: Arc<[LinkSeries]>,
    /// Events read per fine bin.
    pub histogram: Arc<FineHistogram>,
    /// Events read.
    pub events_read: u64,
    /// Problems of the simulation (with file and line).
    pub diagnostics: Arc<[Diagnostic]>,
    /// The whole trace's state statistics, when kept (a complete pass read
    /// from its store).
    pub totals: Option<Arc<StateTotals>>,
}

impl PajeData {
    /// Reads the whole Pajé trace at `path` through a session (the command
    /// line's export; the window runs the same pass on its idle loop).
    pub fn open(path: &Path) -> Result<(PajeData, Vec<Diagnostic>), OpenError> {
        let mut session = PajeSession::open(path)?;
        PajeData::analyse(&mut session)
    }

    /// Runs the whole-trace pass on `session` to its end (spilling to its
    /// spill directory, if it has one), with the problems met.
    pub fn analyse(session: &mut PajeSession) -> Result<(PajeData, Vec<Diagnostic>), OpenError> {
        let owner = session.new_owner();
        let id = PajeAnalysis::request(session, owner);
        let collector: PajeCollector = session
            .wait(id)
            .ok_or_else(|| OpenError("the Pajé pass was cancelled".into()))?;
        let mut diags = session.take_diagnostics();
        let mut data = collector.into_snapshot();
        diags.extend(data.diagnostics.iter().cloned());
        data.diagnostics = Arc::from(diags.clone());
        Ok((data, diags))
    }

    /// Bytes of heap held by the series, per kind (none for spilled or
    /// mapped chunks; chunks shared with another snapshot counted too).
    pub fn heap_bytes(&self) -> PajeHeap {
        let mut h = PajeHeap::default();
        for c in self.containers.iter() {
            for l in &c.lanes {
                h.lanes += l.times.heap_bytes() + l.codes.heap_bytes() + l.blocks.heap_bytes();
                h.lane_changes += l.times.len();
            }
            for (_, e) in &c.events {
                h.events += e.heap_bytes();
                h.event_items += e.len();
            }
            for v in &c.variables {
                h.variables += v.items.heap_bytes();
                h.variable_items += v.items.len();
            }
        }
        for l in self.links.iter() {
            h.links += l.items.heap_bytes();
            h.link_items += l.items.len();
        }
        h
    }

    /// The container at index `i` of [`containers`](Self::containers) with
    /// id `id`, if shown.
    pub fn container_index(&self, id: ContainerId) -> Option<usize> {
        // Containers are stored in id order (the root excepted).
        self.containers.binary_search_by_key(&id.0, |c| c.id.0).ok()
    }
}

/// Heap bytes of a [`PajeData`]'s series, per kind, and their items
/// ([`PajeData::heap_bytes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PajeHeap {
    /// State lanes (change times and values).
    pub lanes: usize,
    /// Changes of the lanes (states, and the gaps between them).
    pub lane_changes: usize,
    /// Events.
    pub events: usize,
    /// Events held.
    pub event_items: usize,
    /// Variable values.
    pub variables: usize,
    /// Values held.
    pub variable_items: usize,
    /// Links.
    pub links: usize,
    /// Links held.
    pub link_items: usize,
}

impl PajeHeap {
    /// Bytes of every kind.
    pub fn total(&self) -> usize {
        self.lanes + self.events + self.variables + self.links
    }
}

/// A lane being built.
#[derive(Debug)]
struct LaneBuilder {
    type_id: TypeId,
    level: u32,
    times: ColumnBuilder<Time>,
    codes: ColumnBuilder<u32>,
    end: Time,
    blocks: BlocksBuilder,
    /// Value id per class, in order of first appearance; `None` once the
    /// lane has more than [`MAX_CLASSES`] values (no summary then).
    classes: Option<Vec<u32>>,
}

impl LaneBuilder {
    fn new(type_id: TypeId, level: u32) -> Self {
        LaneBuilder {
            type_id,
            level,
            times: ColumnBuilder::new(),
            codes: ColumnBuilder::new(),
            end: Time::MIN,
            blocks: BlocksBuilder::default(),
            classes: Some(Vec::new()),
        }
    }

    /// Appends a change to `code` at `time`, and brings the summary up to
    /// date.
    fn push(&mut self, time: Time, code: u32) {
        self.times.push(time);
        self.codes.push(code);
        if let Some(classes) = &mut self.classes {
            if code != NONE && !classes.contains(&code) {
                if classes.len() == MAX_CLASSES {
                    self.classes = None;
                    return;
                }
                classes.push(code);
            }
            let codes = &self.codes;
            self.blocks.sync(&self.times, || {
                let mut codes = codes.cursor();
                move |k| match codes.get(k) {
                    NONE => NO_CLASS,
                    c => classes
                        .iter()
                        .position(|&x| x == c)
                        .map_or(NO_CLASS, |i| i as u8),
                }
            });
        }
    }

    /// The first half of sealing (see [`ContainerBuilder::seal`]).
    fn seal_push(&mut self, arena: &Arc<Arena>, batch: &mut SealBatch) {
        self.times.seal_push(arena, batch);
        self.codes.seal_push(arena, batch);
        if self.classes.is_some() {
            self.blocks.seal_push(arena, batch);
        }
    }

    /// The second half: the lane, read in place in the arena.
    fn seal_take(&self, written: &mut SealedBatch) -> Lane {
        let times = self.times.seal_take(written);
        let codes = self.codes.seal_take(written);
        let (blocks, classes) = match &self.classes {
            Some(c) => (self.blocks.seal_take(written), Arc::from(c.as_slice())),
            None => (Blocks::default(), Arc::from([])),
        };
        Lane {
            type_id: self.type_id,
            level: self.level,
            times,
            codes,
            end: self.end,
            blocks,
            classes,
        }
    }

    fn snapshot(&mut self) -> Lane {
        let (blocks, classes) = match &self.classes {
            Some(c) => (self.blocks.snapshot(), Arc::from(c.as_slice())),
            None => (Blocks::default(), Arc::from([])),
        };
        Lane {
            type_id: self.type_id,
            level: self.level,
            times: self.times.snapshot(),
            codes: self.codes.snapshot(),
            end: self.end,
            blocks,
            classes,
        }
    }
}

#[derive(Debug)]
struct VarBuilder {
    type_id: TypeId,
    items: ColumnBuilder<VarItem>,
    end: Time,
}

#[derive(Debug)]
struct ContainerBuilder {
    id: ContainerId,
    parent: Option<ContainerId>,
    name: Arc<str>,
    ident: Arc<str>,
    type_id: TypeId,
    start: Time,
    end: Option<Time>,
    lanes: Vec<LaneBuilder>,
    events: Vec<(TypeId, ColumnBuilder<EventItem>)>,
    variables: Vec<VarBuilder>,
}

/// A container of the collector: growing while alive; once destroyed,
/// final (the simulation, like pajeng, ignores whatever names a destroyed
/// container, and its destruction completes all it held first).
#[derive(Debug)]
enum ContainerSlot {
    Growing(ContainerBuilder),
    /// Destroyed: sealed ([`ContainerBuilder::seal`]), and shared by the
    /// snapshots taken since (a 4 GB generated trace's 20,000 containers
    /// copied into each snapshot took 68 MB of the window's peak).
    Sealed(Arc<ContainerData>),
}

#[derive(Debug)]
struct LinkBuilder {
    type_id: TypeId,
    items: ColumnBuilder<LinkItem>,
    longest: Time,
}

/// The pass's data (see the module doc): what its hooks fill.
#[derive(Debug)]
pub struct PajeCollector {
    span: TimeRange,
    reached: Time,
    complete: bool,
    types: Vec<TypeInfo>,
    values: Vec<ValueInfo>,
    /// By container id (the root's slot stays `None`).
    containers: Vec<Option<ContainerSlot>>,
    links: Vec<LinkBuilder>,
    histogram: FineHistogram,
    events_read: u64,
    diagnostics: Vec<Diagnostic>,
    /// Where full chunks go every `spill_every` events, if anywhere.
    arena: Option<Arc<Arena>>,
    spill_every: u64,
}

fn text(b: &[u8]) -> Arc<str> {
    Arc::from(String::from_utf8_lossy(b).as_ref())
}

fn rgba(c: traceloom_paje::Color) -> Rgba {
    let to8 = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    Rgba::rgb(to8(c.r), to8(c.g), to8(c.b))
}

impl PajeCollector {
    /// An empty collector for a trace spanning `span`.
    pub fn new(span: TimeRange) -> PajeCollector {
        PajeCollector {
            span,
            reached: span.start,
            complete: false,
            types: Vec::new(),
            values: Vec::new(),
            containers: Vec::new(),
            links: Vec::new(),
            histogram: FineHistogram::new((span.start, span.end)),
            events_read: 0,
            diagnostics: Vec::new(),
            arena: None,
            spill_every: u64::MAX,
        }
    }

    /// Moves the full chunks of the columns to `arena` every `every`
    /// events (see the module doc).
    pub fn with_spill(mut self, arena: Arc<Arena>, every: u64) -> Self {
        self.arena = Some(arena);
        self.spill_every = every.max(1);
        self
    }

    /// Moves the full chunks of every column to the spill file (a walk
    /// over the columns: a few ms).
    fn spill(&mut self) {
        let Some(a) = &self.arena else { return };
        for c in self.containers.iter_mut().flatten() {
            let ContainerSlot::Growing(c) = c else {
                continue;
            };
            for l in &mut c.lanes {
                l.times.spill(a);
                l.codes.spill(a);
                l.blocks.spill(a);
            }
            for (_, e) in &mut c.events {
                e.spill(a);
            }
            for v in &mut c.variables {
                v.items.spill(a);
            }
        }
        for l in &mut self.links {
            l.items.spill(a);
        }
        a.flush();
    }

    /// Copies the types and values the model defined since the last call.
    fn sync_model(&mut self, model: &Model) {
        for t in &model.types()[self.types.len()..] {
            let name = if t.name.is_empty() { &t.alias } else { &t.name };
            self.types.push(TypeInfo {
                name: text(name),
                nature: t.nature,
                color: t.color.map(rgba),
            });
        }
        for v in &model.values()[self.values.len()..] {
            let name = if v.name.is_empty() { &v.alias } else { &v.name };
            self.values.push(ValueInfo {
                name: text(name),
                type_id: v.type_id,
                color: v.color.map(rgba),
            });
        }
    }

    /// The container `id` while it grows (nothing names a destroyed one:
    /// see [`ContainerSlot`]).
    fn container(&mut self, id: ContainerId) -> Option<&mut ContainerBuilder> {
        match self.containers.get_mut(id.0 as usize)? {
            Some(ContainerSlot::Growing(c)) => Some(c),
            _ => None,
        }
    }

    /// Container `id` destroyed at `end`: sealed, so that what it holds
    /// leaves the heap.
    fn destroyed(&mut self, id: ContainerId, end: Time) {
        let Some(slot) = self.containers.get_mut(id.0 as usize) else {
            return;
        };
        if let Some(ContainerSlot::Growing(c)) = slot {
            c.end = Some(end);
            *slot = Some(ContainerSlot::Sealed(Arc::new(c.seal(self.arena.as_ref()))));
        }
    }

    fn created(&mut self, model: &Model, id: ContainerId) {
        if id.0 == 0 {
            return;
        }
        let c = model.container(id);
        let i = id.0 as usize;
        if self.containers.len() <= i {
            self.containers.resize_with(i + 1, || None);
        }
        self.containers[i] = Some(ContainerSlot::Growing(ContainerBuilder {
            id,
            parent: c.parent.filter(|p| p.0 != 0),
            name: text(if c.name.is_empty() { &c.alias } else { &c.name }),
            ident: text(c.identifier()),
            type_id: c.type_id,
            start: seconds_to_ns(c.start),
            end: None,
            lanes: Vec::new(),
            events: Vec::new(),
            variables: Vec::new(),
        }));
    }

    fn state(&mut self, s: &StateRecord) {
        let Some(c) = self.container(s.container) else {
            return;
        };
        let (start, end) = (seconds_to_ns(s.start), seconds_to_ns(s.end));
        let lane = match c
            .lanes
            .iter()
            .position(|l| l.type_id == s.type_id && l.level == s.imbrication)
        {
            Some(k) => &mut c.lanes[k],
            None => {
                c.lanes.push(LaneBuilder::new(s.type_id, s.imbrication));
                c.lanes.sort_by_key(|l| (l.type_id, l.level));
                let k = c
                    .lanes
                    .iter()
                    .position(|l| l.type_id == s.type_id && l.level == s.imbrication)
                    .unwrap_or(0);
                &mut c.lanes[k]
            }
        };
        // States of a level never overlap; a bad trace's are clipped.
        let start = start.max(lane.end);
        if !lane.times.is_empty() && start > lane.end {
            lane.push(lane.end, NONE);
        }
        lane.push(start, s.value.0);
        lane.end = end.max(start);
    }

    fn event(&mut self, e: &EventRecord) {
        let Some(c) = self.container(e.container) else {
            return;
        };
        let item = EventItem::new(seconds_to_ns(e.time), e.value.0);
        match c.events.iter_mut().find(|(t, _)| *t == e.type_id) {
            Some((_, s)) => s.push(item),
            None => {
                let mut s = ColumnBuilder::new();
                s.push(item);
                c.events.push((e.type_id, s));
            }
        }
    }

    fn variable(&mut self, v: &VariableRecord) {
        let Some(c) = self.container(v.container) else {
            return;
        };
        let item = VarItem {
            time: seconds_to_ns(v.start),
            value: v.value,
        };
        let end = seconds_to_ns(v.end);
        match c.variables.iter_mut().find(|s| s.type_id == v.type_id) {
            Some(s) => {
                s.items.push(item);
                s.end = end;
            }
            None => {
                let mut items = ColumnBuilder::new();
                items.push(item);
                c.variables.push(VarBuilder {
                    type_id: v.type_id,
                    items,
                    end,
                });
            }
        }
    }

    fn link(&mut self, l: &PajeLink) {
        let (Some(a), Some(b)) = (l.start_container, l.end_container) else {
            return;
        };
        // pajeng gives -1 to a missing end: such links are not drawn.
        if l.start < 0.0 || l.end < 0.0 {
            return;
        }
        let item = LinkItem::new(
            a.0,
            b.0,
            seconds_to_ns(l.start),
            seconds_to_ns(l.end),
            l.value.0,
        );
        let k = match self.links.iter().position(|s| s.type_id == l.type_id) {
            Some(k) => k,
            None => {
                self.links.push(LinkBuilder {
                    type_id: l.type_id,
                    items: ColumnBuilder::new(),
                    longest: 0,
                });
                self.links.len() - 1
            }
        };
        let s = &mut self.links[k];
        s.longest = s.longest.max(item.end.abs_diff(item.start) as Time);
        s.items.push(item);
    }

    /// Collects what the last event applied completed.
    fn collect(&mut self, state: &PajeState, entities: &[PajeEntity]) {
        if entities.is_empty() {
            return;
        }
        let model = state.model();
        if model.types().len() != self.types.len() || model.values().len() != self.values.len() {
            self.sync_model(model);
        }
        for e in entities {
            match e {
                PajeEntity::Created(c) => self.created(model, *c),
                PajeEntity::Destroyed(c) => {
                    // Ended by the end of the trace (on a copy of the
                    // simulation): at the clock.
                    let m = model.container(*c);
                    let end = seconds_to_ns(if m.destroyed { m.end } else { state.clock() });
                    self.destroyed(*c, end);
                }
                PajeEntity::State(s) => self.state(s),
                PajeEntity::Event(e) => self.event(e),
                PajeEntity::Variable(v) => self.variable(v),
                PajeEntity::Link(l) => self.link(l),
            }
        }
    }

    /// What was collected so far (cheap: the series share their chunks).
    pub fn snapshot(&mut self) -> PajeData {
        self.snapshot_part(&mut PartialSnapshot::default(), || false)
            .expect("a snapshot never stopped is whole")
    }

    /// [`snapshot`](Self::snapshot) a few containers at a time, for a
    /// caller that must not hold its thread for all of them at once (the
    /// window's main loop: a 1 GB trace's 5,553 containers took 50-74 ms).
    /// Adds the containers from `snapshot.next` on to it until `done`
    /// says so (checked every few containers); the whole snapshot once
    /// every container is in. The collector must not take events between
    /// the calls of one snapshot, or its containers would be of different
    /// moments.
    pub fn snapshot_part(
        &mut self,
        snapshot: &mut PartialSnapshot,
        mut done: impl FnMut() -> bool,
    ) -> Option<PajeData> {
        while snapshot.next < self.containers.len() {
            match &mut self.containers[snapshot.next] {
                Some(ContainerSlot::Growing(c)) => snapshot.containers.push(Arc::new(c.snapshot())),
                Some(ContainerSlot::Sealed(c)) => snapshot.containers.push(c.clone()),
                None => {}
            }
            snapshot.next += 1;
            if snapshot.next.is_multiple_of(32) && done() {
                return None;
            }
        }
        let containers = Arc::from(std::mem::take(&mut snapshot.containers));
        snapshot.next = 0;
        Some(self.snapshot_with(containers))
    }

    fn snapshot_with(&mut self, containers: Arc<[Arc<ContainerData>]>) -> PajeData {
        PajeData {
            span: self.span,
            reached: self.reached,
            complete: self.complete,
            types: Arc::from(self.types.clone()),
            values: Arc::from(self.values.clone()),
            containers,
            links: self
                .links
                .iter_mut()
                .map(|l| LinkSeries {
                    type_id: l.type_id,
                    items: l.items.snapshot(),
                    longest: l.longest,
                })
                .collect(),
            histogram: Arc::new(self.histogram.clone()),
            events_read: self.events_read,
            diagnostics: Arc::from(self.diagnostics.clone()),
            totals: None,
        }
    }

    /// The final snapshot: each container's builders are dropped once
    /// copied, so that the copies of the unpacked tails never all exist
    /// twice.
    pub fn into_snapshot(mut self) -> PajeData {
        let mut containers = Vec::with_capacity(self.containers.len());
        for c in std::mem::take(&mut self.containers).into_iter().flatten() {
            containers.push(match c {
                ContainerSlot::Growing(mut c) => Arc::new(c.snapshot()),
                ContainerSlot::Sealed(c) => c,
            });
        }
        self.snapshot_with(Arc::from(containers))
    }
}

/// A [`PajeCollector::snapshot_part`] under way: the containers copied so
/// far.
#[derive(Debug, Default)]
pub struct PartialSnapshot {
    containers: Vec<Arc<ContainerData>>,
    next: usize,
}

impl ContainerBuilder {
    /// The container, final (destroyed): with an arena, every column's
    /// full chunks spilled and the rest of all of them copied there with
    /// one write ([`SealBatch`]), so that nothing of it stays on the heap
    /// but the series' descriptors; else (or when the arena is full) a
    /// snapshot, the builders' spare room freed.
    fn seal(&mut self, arena: Option<&Arc<Arena>>) -> ContainerData {
        let Some(arena) = arena else {
            return self.snapshot();
        };
        let mut batch = SealBatch::default();
        for l in &mut self.lanes {
            l.seal_push(arena, &mut batch);
        }
        for (_, e) in &mut self.events {
            e.seal_push(arena, &mut batch);
        }
        for v in &mut self.variables {
            v.items.seal_push(arena, &mut batch);
        }
        let Some(mut written) = batch.write(arena) else {
            return self.snapshot();
        };
        let lanes = self
            .lanes
            .iter()
            .map(|l| l.seal_take(&mut written))
            .collect();
        let events = self
            .events
            .iter()
            .map(|(t, e)| (*t, e.seal_take(&mut written)))
            .collect();
        let variables = self
            .variables
            .iter()
            .map(|v| VarSeries {
                type_id: v.type_id,
                items: v.items.seal_take(&mut written),
                end: v.end,
            })
            .collect();
        ContainerData {
            id: self.id,
            parent: self.parent,
            name: self.name.clone(),
            ident: self.ident.clone(),
            type_id: self.type_id,
            start: self.start,
            end: self.end,
            lanes,
            events,
            variables,
        }
    }

    fn snapshot(&mut self) -> ContainerData {
        let c = self;
        ContainerData {
            id: c.id,
            parent: c.parent,
            name: c.name.clone(),
            ident: c.ident.clone(),
            type_id: c.type_id,
            start: c.start,
            end: c.end,
            lanes: c.lanes.iter_mut().map(LaneBuilder::snapshot).collect(),
            events: c
                .events
                .iter_mut()
                .map(|(t, s)| (*t, s.snapshot()))
                .collect(),
            variables: c
                .variables
                .iter_mut()
                .map(|v| VarSeries {
                    type_id: v.type_id,
                    items: v.items.snapshot(),
                    end: v.end,
                })
                .collect(),
        }
    }
}

impl PajeCollector {
    /// How far the pass read.
    pub fn reached(&self) -> Time {
        self.reached
    }

    /// Whether the pass read the whole trace.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Events read so far.
    pub fn events_read(&self) -> u64 {
        self.events_read
    }
}

type Ctx<'a> = HookContext<'a, PajeCurrent, PajePosition, PajeState, Payload>;
type BoundaryCtx<'a> =
    HookContext<'a, traceloom_engine::request::Boundary, PajePosition, PajeState, Payload>;

/// The whole-trace Pajé pass (see the module doc).
pub struct PajeAnalysis;

impl PajeAnalysis {
    /// Adds the LOW-priority pass to `session`; its data is a
    /// [`PajeCollector`] (peek at it for snapshots, take it once
    /// complete).
    pub fn request(session: &mut PajeSession, owner: OwnerId) -> RequestId {
        let span = session
            .time_span()
            .map(|(a, b)| TimeRange::new(a, b.max(a + 1)))
            .unwrap_or(TimeRange::new(0, 1));
        let mut collector = PajeCollector::new(span);
        // Without a spill file (none asked for, or it cannot be made) the
        // columns stay on the heap, packed.
        if let Some(a) = session.spill_dir().and_then(|d| Arena::create(d).ok()) {
            collector = collector.with_spill(Arc::new(a), session.spill_every());
        }
        let mut req = PajeRequest::new(
            owner,
            // From the very first line: definitions have no time.
            Start::Time(Time::MIN),
            Box::new(collector) as Payload,
        );
        req.priority = Priority::LOW;
        req.event.add(Priority::DEFAULT, |ctx: &mut Ctx<'_>| {
            if let Some(c) = ctx.data.downcast_mut::<PajeCollector>() {
                let t = ctx.position.time;
                c.events_read += 1;
                if c.events_read.is_multiple_of(c.spill_every) {
                    c.spill();
                }
                if t != Time::MIN {
                    c.histogram.add(t);
                    c.reached = t;
                }
                c.collect(ctx.state, ctx.state.completed());
            }
            Flow::Continue
        });
        req.after_traceset
            .add(Priority::DEFAULT, |ctx: &mut BoundaryCtx<'_>| {
                if let Some(c) = ctx.data.downcast_mut::<PajeCollector>() {
                    if *ctx.position == PajePosition::END {
                        // The end of the trace: what is still open closes
                        // (pj_dump's last states), on a copy.
                        let rest = ctx.state.finish_copy();
                        c.collect(ctx.state, &rest);
                        c.complete = true;
                        c.reached = c.span.end;
                    }
                    c.diagnostics = ctx.state.diagnostics().items().to_vec();
                }
                Flow::Continue
            });
        session.add(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::steps::BLOCK;

    /// A lane's summary names, per closed block, the value that lasted
    /// longest (as a class of its own values) and its longest interval;
    /// gaps are no class.
    #[test]
    fn lane_summaries_follow_the_changes() {
        let mut l = LaneBuilder::new(TypeId(1), 0);
        // Value 40 + k % 3 lasting 10 + k % 3 ns, every fourth change a
        // gap of 1 ns.
        let mut t = 0;
        let mut changes = Vec::new();
        for k in 0..10 * BLOCK as u32 {
            let (code, d) = if k % 4 == 3 {
                (NONE, 1)
            } else {
                (40 + k % 3, 10 + Time::from(k % 3))
            };
            l.push(t, code);
            changes.push((t, code, d));
            t += d;
        }
        let lane = l.snapshot();
        assert_eq!(lane.blocks.len(), (changes.len() - 1) / BLOCK);
        for (b, s) in lane.blocks.iter().enumerate() {
            let block = &changes[b * BLOCK..(b + 1) * BLOCK];
            assert_eq!(s.start, block[0].0);
            let mut per_value: Vec<(u32, Time)> = Vec::new();
            for &(_, code, d) in block.iter().filter(|c| c.1 != NONE) {
                match per_value.iter_mut().find(|(c, _)| *c == code) {
                    Some((_, x)) => *x += d,
                    None => per_value.push((code, d)),
                }
            }
            let best = per_value
                .iter()
                .fold(per_value[0], |a, &b| if b.1 > a.1 { b } else { a });
            assert_eq!(lane.classes[usize::from(s.class)], best.0, "block {b}");
            assert_eq!(s.longest, 12);
        }
    }

    /// A lane of more values than a summary tells apart has none: it is
    /// drawn from its changes.
    #[test]
    fn a_lane_of_many_values_has_no_summary() {
        let mut l = LaneBuilder::new(TypeId(1), 0);
        for k in 0..4 * BLOCK as u32 {
            l.push(Time::from(k), k);
        }
        let lane = l.snapshot();
        assert!(lane.blocks.is_empty() && lane.classes.is_empty());
        assert_eq!(lane.codes.len(), 4 * BLOCK);
    }
}
