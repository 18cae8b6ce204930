//! `--filter EXPR` for `dump` and `count`: the engine's filter language
//! evaluated on every event, with the kernel state computed alongside when
//! the expression reads `state.*`.

use traceloom_ctf::Event;
use traceloom_engine::state::{Handlers, TracesetState};
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;

use crate::CliError;

/// A compiled `--filter`, and the state it needs.
pub struct EventFilter {
    filter: Filter,
    /// Present when the filter reads the state: the state must then see
    /// every event from the start of the traceset, accepted or not.
    state: Option<(TracesetState, Handlers)>,
}

impl EventFilter {
    /// Compiles `expr` for a traceset of `traces` traces.
    pub fn new(expr: &str, traces: usize) -> Result<Self, CliError> {
        let filter = Filter::new(expr).map_err(|e| CliError::Filter(e.to_string()))?;
        let state = filter
            .needs_state()
            .then(|| (TracesetState::new(traces), Handlers::new()));
        Ok(EventFilter { filter, state })
    }

    /// Whether the reading must start at the beginning of the traceset
    /// (the state is built from there), rather than seek to `--begin`.
    pub fn needs_full_read(&self) -> bool {
        self.state.is_some()
    }

    /// Moves the state past `ev` (when there is one) and tells whether the
    /// filter accepts `ev`, seeing the state as of that event (after it).
    pub fn accept(&mut self, ev: &Event<'_>) -> bool {
        match &mut self.state {
            Some((state, handlers)) => {
                state.apply(handlers, ev);
                self.filter.matches(&EventSubject::new(ev, Some(state)))
            }
            None => match self.filter.name_only_decision(ev.name()) {
                Some(decision) => decision,
                None => self.filter.matches(&EventSubject::new(ev, None)),
            },
        }
    }
}
