//! The detailed event list, as LTTV's redesign describes it: the scrollbar
//! value is a *time* (no pre-parsing needed), a far scroll seeks by time,
//! and line/page moves use seek-n-events backward/forward with the active
//! filter. A backing buffer of about [`BUFFER`] events around the shown
//! page answers page moves at once; when a move leaves it, it is refilled
//! around the new top row.
//!
//! Rows are formatted in request hooks (time, delta, trace, CPU, event
//! name, fields); the filter is the request's filter, so the list works
//! before, during and without any pre-parsing pass.

use std::sync::Arc;
use traceloom_base::Time;

use traceloom_engine::request::{OwnerId, SourceEvent, Start};
use traceloom_engine::source::{CtfCurrent, CtfPosition};
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;
use traceloom_hooks::{Flow, Priority};

use super::fields::format_fields;
use super::session::{KernelRequest, Payload, Session};

/// A compiled filter as a request filter.
type Predicate = Box<dyn FnMut(&CtfCurrent) -> bool + Send>;

/// Events kept in the backing buffer (about half before the top row, half
/// after).
pub const BUFFER: usize = 1000;

/// One line of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Where the event is (to seek back to it).
    pub position: CtfPosition,
    /// Timestamp (ns).
    pub time: Time,
    /// Time since the previous row of the list (`None` for the first row
    /// of the buffer when nothing is known before it).
    pub delta: Option<Time>,
    /// Trace name.
    pub trace: Arc<str>,
    /// CPU, when the stream has one.
    pub cpu: Option<u64>,
    /// Event name.
    pub name: Arc<str>,
    /// Context and payload fields, babeltrace2-style.
    pub fields: String,
}

/// Formats the event of `cur` as a row (delta left unset).
pub fn row_of(cur: &CtfCurrent, position: CtfPosition) -> Option<EventRow> {
    let e = cur.event()?;
    let t = e.trace();
    Some(EventRow {
        position,
        time: cur.time(),
        delta: None,
        trace: Arc::from(
            t.name
                .as_deref()
                .unwrap_or_else(|| t.path.to_str().unwrap_or_default()),
        ),
        cpu: e.cpu_id(),
        name: Arc::from(e.name()),
        fields: format_fields(&e),
    })
}

/// The list's model.
pub struct EventListModel {
    owner: OwnerId,
    filter: Option<Arc<Filter>>,
    page: usize,
    buffer_size: usize,
    buffer: Vec<EventRow>,
    top: usize,
    /// The buffer starts at the first accepted event of the traceset.
    at_start: bool,
    /// The buffer ends at the last accepted event of the traceset.
    at_end: bool,
}

impl std::fmt::Debug for EventListModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventListModel")
            .field("page", &self.page)
            .field("buffer", &self.buffer.len())
            .field("top", &self.top)
            .finish()
    }
}

impl EventListModel {
    /// A list showing `page` rows, with no filter; call
    /// [`scroll_to_time`](Self::scroll_to_time) to fill it.
    pub fn new(session: &mut Session, page: usize) -> Self {
        EventListModel {
            owner: session.new_owner(),
            filter: None,
            page: page.max(1),
            buffer_size: BUFFER.max(4 * page.max(1)),
            buffer: Vec::new(),
            top: 0,
            at_start: false,
            at_end: false,
        }
    }

    /// Changes the backing buffer's size (at least four pages).
    pub fn set_buffer_size(&mut self, n: usize) {
        self.buffer_size = n.max(4 * self.page);
    }

    /// Sets the filter (an expression of the filter language) and reloads
    /// at the current top time. `state.*` operands are not available to the
    /// list (it does not wait for the state).
    pub fn set_filter(
        &mut self,
        session: &mut Session,
        expr: Option<&str>,
    ) -> Result<(), traceloom_filter::ParseError> {
        self.filter = match expr {
            Some(e) => Some(Arc::new(Filter::new(e)?)),
            None => None,
        };
        let t = self.scrollbar_value().unwrap_or(Time::MIN);
        self.scroll_to_time(session, t);
        Ok(())
    }

    /// Number of rows shown.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// The rows shown.
    pub fn rows(&self) -> &[EventRow] {
        let end = (self.top + self.page).min(self.buffer.len());
        &self.buffer[self.top.min(end)..end]
    }

    /// The scrollbar value: the time of the top row.
    pub fn scrollbar_value(&self) -> Option<Time> {
        self.buffer.get(self.top).map(|r| r.time)
    }

    fn predicate(&self) -> Option<Predicate> {
        let f = self.filter.clone()?;
        Some(Box::new(move |cur: &CtfCurrent| {
            cur.event()
                .is_some_and(|e| f.matches(&EventSubject::new(&e, None)))
        }))
    }

    /// Reads up to `n` accepted events from `start` (before `end`, if set).
    fn read(
        &self,
        session: &mut Session,
        start: Start<CtfPosition>,
        n: usize,
        end: Option<CtfPosition>,
    ) -> Vec<EventRow> {
        if n == 0 {
            return Vec::new();
        }
        let mut req = KernelRequest::new(
            self.owner,
            start,
            Box::new(Vec::<EventRow>::with_capacity(n)) as Payload,
        );
        req.priority = Priority::HIGH;
        // Rows and the list's filter never read the state (`state.*`
        // operands do not match here), so a jump seeks directly through
        // the packet index instead of replaying the state up to it.
        req.needs_state = false;
        req.num_events = Some(n as u64);
        req.end_position = end;
        req.filter = self.predicate();
        req.event.add(Priority::HIGH, |ctx| {
            if let Some(rows) = ctx.data.downcast_mut::<Vec<EventRow>>() {
                if let Some(r) = row_of(ctx.event, *ctx.position) {
                    rows.push(r);
                }
            }
            Flow::Continue
        });
        let id = session.add(req);
        session.wait::<Vec<EventRow>>(id).unwrap_or_default()
    }

    /// Positions of the `n` accepted events before `from`.
    fn back(&self, session: &mut Session, from: &CtfPosition, n: usize) -> Vec<CtfPosition> {
        let mut pred = self.predicate();
        let span = session.time_span().map_or(1, |(a, b)| (b - a).max(1));
        // Start with a window a few events long on average.
        let offset = (span / 100_000).max(1_000);
        match pred.as_mut() {
            Some(p) => session
                .scheduler()
                .seek_n_events_backward(from, n, offset, Some(&mut **p)),
            None => session
                .scheduler()
                .seek_n_events_backward(from, n, offset, None),
        }
    }

    /// Fills the buffer around `first`, the first row to show (the rows at
    /// and after it are `ahead`, read already): about half a buffer before
    /// it, and makes the page full near the end.
    fn fill_around(&mut self, session: &mut Session, mut ahead: Vec<EventRow>) {
        let half = self.buffer_size / 2;
        let want_ahead = self.buffer_size - half;
        self.at_end = ahead.len() < want_ahead;
        let from = ahead.first().map_or(CtfPosition::END, |r| r.position);
        let back = self.back(session, &from, half);
        let mut rows = match back.first() {
            Some(p) => self.read(session, Start::Position(*p), back.len(), Some(from)),
            None => Vec::new(),
        };
        self.at_start = back.len() < half;
        let top = rows.len();
        rows.append(&mut ahead);
        self.buffer = rows;
        self.top = top;
        self.clamp_top();
        self.compute_deltas();
    }

    fn clamp_top(&mut self) {
        if self.at_end && self.top + self.page > self.buffer.len() {
            self.top = self.buffer.len().saturating_sub(self.page);
        }
    }

    fn compute_deltas(&mut self) {
        for i in 0..self.buffer.len() {
            self.buffer[i].delta = if i == 0 {
                None
            } else {
                Some(self.buffer[i].time - self.buffer[i - 1].time)
            };
        }
    }

    /// Far scroll: the first accepted event at or after `t` becomes the
    /// top row (the last page when fewer rows follow).
    pub fn scroll_to_time(&mut self, session: &mut Session, t: Time) {
        let ahead = self.read(
            session,
            Start::Time(t),
            self.buffer_size - self.buffer_size / 2,
            None,
        );
        self.fill_around(session, ahead);
    }

    /// Moves the top row `n` rows down (near scroll).
    pub fn line_down(&mut self, session: &mut Session, n: usize) {
        if self.buffer.is_empty() {
            return;
        }
        let target = self.top + n;
        if target + self.page <= self.buffer.len() || self.at_end {
            self.top = target.min(self.buffer.len());
            self.clamp_top();
            return;
        }
        // Leaves the buffer: seek n events forward from the top row, with
        // the filter, and refill around it.
        let from = self.buffer[self.top].position;
        let mut pred = self.predicate();
        let fwd = match pred.as_mut() {
            Some(p) => session
                .scheduler()
                .seek_n_events_forward(&from, n as u64, Some(&mut **p)),
            None => session
                .scheduler()
                .seek_n_events_forward(&from, n as u64, None),
        };
        let ahead = self.read(
            session,
            Start::Position(fwd.position),
            self.buffer_size - self.buffer_size / 2,
            None,
        );
        self.fill_around(session, ahead);
    }

    /// Moves the top row `n` rows up (near scroll).
    pub fn line_up(&mut self, session: &mut Session, n: usize) {
        if self.buffer.is_empty() {
            return;
        }
        if n <= self.top || self.at_start {
            self.top = self.top.saturating_sub(n);
            return;
        }
        // Seek n events backward from the top row.
        let from = self.buffer[self.top].position;
        let back = self.back(session, &from, n);
        let start = back.first().copied().unwrap_or(from);
        let ahead = self.read(
            session,
            Start::Position(start),
            self.buffer_size - self.buffer_size / 2,
            None,
        );
        self.fill_around(session, ahead);
    }

    /// One page down.
    pub fn page_down(&mut self, session: &mut Session) {
        self.line_down(session, self.page);
    }

    /// One page up.
    pub fn page_up(&mut self, session: &mut Session) {
        self.line_up(session, self.page);
    }
}
