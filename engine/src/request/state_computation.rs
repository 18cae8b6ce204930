//! State computation attached to a scheduler, and saved states.

use traceloom_base::Time;
use traceloom_hooks::{Hooks, HooksById};

use super::event_source::EventSource;
use super::events_request::{EventOf, PositionOf};

/// Hooks computing the traceset state. They receive the state as their own
/// data (`ctx.data`, mutable) and `()` as `ctx.state`. Add them at
/// [`Priority::STATE`](traceloom_hooks::Priority::STATE) so that request
/// hooks at `HIGH` see the state before each event and those at `DEFAULT`
/// after it.
pub type StateHooks<Src, S> = Hooks<EventOf<Src>, PositionOf<Src>, (), S>;
/// By-id variant of [`StateHooks`].
pub type StateHooksById<Src, S> = HooksById<EventOf<Src>, PositionOf<Src>, (), S>;

/// How the scheduler computes the traceset state: the state at the first
/// event of the traceset, and the hooks that update it event by event.
///
/// The state must be a function of the events read from the beginning of
/// the traceset (the hooks must be deterministic and must not depend on
/// anything else): this is what lets the scheduler resume from a saved
/// state, or rebuild the state after a seek by replaying events from an
/// earlier snapshot, and get what a fresh read would give.
pub struct StateComputation<Src: EventSource, S> {
    /// State before the first event.
    pub initial: S,
    /// Hooks updating the state, called for every event read.
    pub hooks: StateHooks<Src, S>,
    /// Hooks updating the state for one event class.
    pub hooks_by_id: StateHooksById<Src, S>,
}

impl<Src: EventSource, S> StateComputation<Src, S> {
    /// `initial` with no hooks: the state never changes.
    pub fn new(initial: S) -> Self {
        StateComputation {
            initial,
            hooks: Hooks::new(),
            hooks_by_id: HooksById::new(),
        }
    }
}

/// A snapshot of the state at a position: what the state is before the
/// event at [`position`](Self::position) is read.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedState<P, S> {
    /// Where the snapshot was taken.
    pub position: P,
    /// The state there.
    pub state: S,
    /// When known, every event before `position` has a time lower than this
    /// bound; it lets time requests starting in `[bound, time(position)]`
    /// join at `position` without a seek.
    pub prior_bound: Option<Time>,
}
