//! The Pajé simulation as the scheduler's traceset state.
//!
//! For a kernel trace the state is who runs where ([`crate::state`]); for a
//! Pajé trace it is `traceloom-paje`'s [`Simulator`]: the types, the
//! containers alive, the states pushed on each container, the variables'
//! values and the links waiting for their other end. [`computation`]
//! applies every event to it at STATE priority, so the scheduler's saved
//! states and checkpoints hold simulations, and a request resumed or started
//! anywhere sees what a read from the beginning would have built.
//!
//! Each event may complete entities (a popped state, a matched link, the
//! end of a variable's value): [`PajeState::completed`] lists those of the
//! last event applied, for hooks after the state (DEFAULT priority) to
//! collect. They are the simulator's records, so what a pass collects is
//! exactly what `pj_dump` prints.

use traceloom_hooks::{Flow, HookContext, Priority};
use traceloom_paje::{
    ContainerId, Diagnostics, EntitySink, EventRecord, LinkRecord, Model, SimOptions, Simulator,
    StateRecord, TypeId, ValueId, VariableRecord,
};

use crate::paje_source::{PajeCurrent, PajePosition, PajeSource};
use crate::request::StateComputation;

/// A matched link, without its key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PajeLink {
    /// The container holding it.
    pub container: ContainerId,
    /// Its link type.
    pub type_id: TypeId,
    /// Start time in seconds (-1 if only ends were seen).
    pub start: f64,
    /// End time in seconds (-1 if only starts were seen).
    pub end: f64,
    /// Its value.
    pub value: ValueId,
    /// Where it starts.
    pub start_container: Option<ContainerId>,
    /// Where it ends.
    pub end_container: Option<ContainerId>,
}

/// Something an event completed or changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PajeEntity {
    /// A state ended.
    State(StateRecord),
    /// An event happened.
    Event(EventRecord),
    /// A variable's value ended.
    Variable(VariableRecord),
    /// A link was matched.
    Link(PajeLink),
    /// A container was created.
    Created(ContainerId),
    /// A container was destroyed.
    Destroyed(ContainerId),
}

/// Collects entities as the simulator completes them.
#[derive(Debug, Clone, Default)]
pub struct Completed(pub Vec<PajeEntity>);

impl EntitySink for Completed {
    fn state(&mut self, r: &StateRecord) {
        self.0.push(PajeEntity::State(*r));
    }
    fn event(&mut self, r: &EventRecord) {
        self.0.push(PajeEntity::Event(*r));
    }
    fn variable(&mut self, r: &VariableRecord) {
        self.0.push(PajeEntity::Variable(*r));
    }
    fn link(&mut self, r: &LinkRecord<'_>) {
        self.0.push(PajeEntity::Link(PajeLink {
            container: r.container,
            type_id: r.type_id,
            start: r.start,
            end: r.end,
            value: r.value,
            start_container: r.start_container,
            end_container: r.end_container,
        }));
    }
    fn container_created(&mut self, c: ContainerId) {
        self.0.push(PajeEntity::Created(c));
    }
    fn container_destroyed(&mut self, c: ContainerId) {
        self.0.push(PajeEntity::Destroyed(c));
    }
}

/// The simulation after the events read so far (see the module doc).
#[derive(Clone)]
pub struct PajeState {
    sim: Simulator,
    completed: Completed,
}

impl std::fmt::Debug for PajeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PajeState")
            .field("containers", &self.sim.model().containers().len())
            .field("clock", &self.sim.clock())
            .finish()
    }
}

impl Default for PajeState {
    fn default() -> Self {
        PajeState {
            sim: Simulator::new(SimOptions::default()),
            completed: Completed::default(),
        }
    }
}

impl PajeState {
    /// Types, containers and values defined so far.
    pub fn model(&self) -> &Model {
        self.sim.model()
    }

    /// What the last event applied completed (or created, or destroyed).
    pub fn completed(&self) -> &[PajeEntity] {
        &self.completed.0
    }

    /// Problems of the simulation so far (an event naming an unknown
    /// container, a pop on an empty stack...), each with file and line.
    pub fn diagnostics(&self) -> &Diagnostics {
        self.sim.diagnostics()
    }

    /// The time of the last event, in seconds (-1 before any).
    pub fn clock(&self) -> f64 {
        self.sim.clock()
    }

    /// What ending the trace here completes: every container still alive
    /// destroyed at the clock's time, as at the end of a trace (a copy of
    /// the simulation is ended; this state goes on).
    pub fn finish_copy(&self) -> Vec<PajeEntity> {
        let mut sim = self.sim.clone();
        let mut out = Completed::default();
        sim.finish(&mut out);
        out.0
    }

    /// Applies one event.
    pub fn apply(&mut self, ev: &PajeCurrent) {
        self.completed.0.clear();
        if let Some(e) = ev.event() {
            self.sim.apply(e, &mut self.completed);
        }
    }
}

/// The Pajé state computation: the simulation, at STATE priority.
pub fn computation() -> StateComputation<PajeSource, PajeState> {
    let mut c = StateComputation::new(PajeState::default());
    c.hooks.add(
        Priority::STATE,
        |ctx: &mut HookContext<'_, PajeCurrent, PajePosition, (), PajeState>| {
            ctx.data.apply(ctx.event);
            Flow::Continue
        },
    );
    c
}
