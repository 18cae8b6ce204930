//! The detailed event list, as LTTV's redesign describes it: the scrollbar
//! value is a *time* (no pre-parsing needed), a far scroll seeks by time,
//! and line/page moves use seek-n-events backward/forward with the active
//! filter. A backing buffer of about [`BUFFER`] events around the shown
//! page answers page moves at once; when a move leaves it, it is refilled
//! around the new top row.
//!
//! Every read is an asynchronous HIGH-priority [`KernelRequest`] on the
//! session the other viewers share: [`EventListModel::start`] begins a
//! move and returns at once, and [`EventListModel::poll`], called after
//! the session was serviced, advances it as its requests complete. A move
//! leaving the buffer is a short chain of requests (the rows ahead of the
//! new top row, then a backward seek of half a buffer window by window,
//! then the rows it found), so a selective filter that has to read
//! millions of events to fill a page never holds the caller: the session
//! reads them in chunks, and the rows ahead are shown as soon as a page of
//! them is read. Moves asked while one is under way are queued (far
//! scrolls replace each other, line and page moves add up).
//!
//! Rows are formatted in request hooks (time, delta, trace, CPU, event
//! name, fields); the filter is evaluated in the hooks too, with the state
//! after the event when the expression reads `state.*` (the requests then
//! restore the state from the nearest checkpoint, as `dump --filter`
//! computes it from the start), so the list works before, during and
//! without any pre-parsing pass.

use std::collections::VecDeque;
use std::sync::Arc;
use traceloom_base::Time;
use traceloom_ctf::Event;
use traceloom_tsdl::ir::Scope;

use traceloom_engine::request::{Budget, OwnerId, RequestId, SourceEvent, Start};
use traceloom_engine::source::{CtfCurrent, CtfPosition};
use traceloom_engine::state::TracesetState;
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;
use traceloom_hooks::{Flow, Priority};

use super::fields::format_fields;
use super::session::{KernelRequest, Payload, Session};

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
    /// Index of the trace in the traceset (the kernel pass's records are
    /// keyed by it).
    pub trace_index: u32,
    /// CPU, when the stream has one.
    pub cpu: Option<u64>,
    /// Thread, process and process name from the event's own context
    /// (LTTng's `vtid`/`tid`, `vpid`/`pid`, `procname` context fields),
    /// when it has them; a kernel event's come from the kernel pass.
    pub context_thread: ContextThread,
    /// Event name.
    pub name: Arc<str>,
    /// Context and payload fields, babeltrace2-style.
    pub fields: String,
}

/// The thread an event's context names, if it names one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextThread {
    /// Thread id.
    pub tid: Option<i64>,
    /// Process id.
    pub pid: Option<i64>,
    /// Process name.
    pub name: Option<Arc<str>>,
}

impl ContextThread {
    /// The ids in `e`'s stream event context, then its event context.
    fn of(e: &Event<'_>) -> Self {
        let mut found = ContextThread::default();
        for scope in [Scope::StreamEventContext, Scope::EventContext] {
            let Some(ctx) = e.scope(scope) else { continue };
            let int = |names: [&str; 2]| {
                names.iter().find_map(|n| {
                    ctx.field(n)
                        .and_then(|f| f.value())
                        .and_then(|v| v.as_i64())
                })
            };
            found.tid = found.tid.or_else(|| int(["vtid", "tid"]));
            found.pid = found.pid.or_else(|| int(["vpid", "pid"]));
            if found.name.is_none() {
                found.name = ctx
                    .field("procname")
                    .and_then(|f| f.value().and_then(|v| e.bytes(v)))
                    .map(|b| Arc::from(String::from_utf8_lossy(b).trim_end_matches('\0')));
            }
        }
        found
    }
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
        trace_index: t.index as u32,
        cpu: e.cpu_id(),
        context_thread: ContextThread::of(&e),
        name: Arc::from(e.name()),
        fields: format_fields(&e),
    })
}

/// A move of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMove {
    /// Far scroll: the first accepted event at or after this time becomes
    /// the top row (the last page when fewer rows follow).
    ToTime(Time),
    /// The top row moves this many rows down.
    LinesDown(usize),
    /// The top row moves this many rows up.
    LinesUp(usize),
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
}

/// The list's filter, evaluated in the request hooks.
#[derive(Clone)]
struct RowFilter {
    filter: Arc<Filter>,
    /// The expression reads `state.*`: hooks run after the state's and
    /// the requests restore the state.
    needs_state: bool,
}

impl RowFilter {
    fn accepts(&self, cur: &CtfCurrent, state: &TracesetState) -> bool {
        let Some(e) = cur.event() else { return false };
        event_matches(&self.filter, self.needs_state, &e, state)
    }
}

/// Whether `filter` accepts event `e`, as a request reads it: with the
/// traceset's `state` when `needs_state` (the expression reads
/// `state.*`, and the request restored the state and runs after its
/// hooks), else without it, most events decided by their name alone.
/// The event list and the window's search read events this way.
pub fn event_matches(
    filter: &Filter,
    needs_state: bool,
    e: &Event<'_>,
    state: &TracesetState,
) -> bool {
    if needs_state {
        filter.matches(&EventSubject::new(e, Some(state)))
    } else {
        match filter.name_only_decision(e.name()) {
            Some(d) => d,
            None => filter.matches(&EventSubject::new(e, None)),
        }
    }
}

/// Whether `filter` (if any) accepts the event of `cur`.
fn accepted(filter: &Option<RowFilter>, cur: &CtfCurrent, state: &TracesetState) -> bool {
    match filter {
        Some(f) => f.accepts(cur, state),
        None => cur.event().is_some(),
    }
}

/// Data of a request reading rows: `skip` accepted events are passed over
/// first (a line move leaving the buffer), then up to `want` rows kept.
struct RowsData {
    skip: usize,
    want: usize,
    rows: Vec<EventRow>,
}

/// Data of one window of a backward seek: the position of the window's
/// first event (accepted or not), and the last `need` accepted positions.
struct WindowData {
    first: Option<CtfPosition>,
    need: usize,
    accepted: VecDeque<CtfPosition>,
}

/// A backward seek of `n` accepted events before `from`, one time window
/// at a time (each twice as long as the one after it), as
/// `seek_n_events_backward` does, but as requests.
struct BackSeek {
    n: usize,
    /// The priority of its requests.
    priority: Priority,
    /// Where the seek started (exclusive).
    from: CtfPosition,
    /// Time the windows are measured back from.
    anchor: Time,
    offset: Time,
    /// End of the next window (exclusive): the first event of the window
    /// read last.
    end: CtfPosition,
    /// Accepted positions found so far, oldest first.
    found: VecDeque<CtfPosition>,
}

/// What to do once a backward seek is done.
enum AfterBack {
    /// Read the rows it found, then make `ahead` the rows from the top.
    Fill { ahead: Vec<EventRow> },
    /// Read the rows ahead from the first position it found (a line move
    /// up leaving the buffer).
    ReadAhead,
}

/// The step of a move under way, with the request it waits for.
enum Step {
    /// Reading the rows from the new top row on.
    Ahead,
    /// Seeking backward (a window's request).
    Back { seek: BackSeek, then: AfterBack },
    /// Reading the rows before the top row, which `ahead` follow.
    BackRows { ahead: Vec<EventRow> },
}

/// The list's model.
pub struct EventListModel {
    owner: OwnerId,
    filter: Option<RowFilter>,
    page: usize,
    buffer_size: usize,
    buffer: Vec<EventRow>,
    top: usize,
    /// The buffer starts at the first accepted event of the traceset.
    at_start: bool,
    /// The buffer ends at the last accepted event of the traceset.
    at_end: bool,
    /// The move under way and the request it waits for.
    step: Option<(RequestId, Step)>,
    /// The rows ahead were shown before the move completed.
    shown_early: bool,
    /// The move to make once the one under way is done.
    queued: Option<ListMove>,
}

impl std::fmt::Debug for EventListModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventListModel")
            .field("page", &self.page)
            .field("buffer", &self.buffer.len())
            .field("top", &self.top)
            .field("pending", &self.step.is_some())
            .finish()
    }
}

impl EventListModel {
    /// A list showing `page` rows, with no filter; call
    /// [`scroll_to_time`](Self::scroll_to_time) (or [`start`](Self::start)
    /// a [`ListMove::ToTime`]) to fill it.
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
            step: None,
            shown_early: false,
            queued: None,
        }
    }

    /// Changes the backing buffer's size (at least four pages).
    pub fn set_buffer_size(&mut self, n: usize) {
        self.buffer_size = n.max(4 * self.page);
    }

    /// Sets the filter (an expression of the filter language) and starts
    /// reloading at the current top time. `state.*` operands see the state
    /// after the event, as `traceloom dump --filter` does.
    pub fn set_filter(
        &mut self,
        session: &mut Session,
        expr: Option<&str>,
    ) -> Result<(), traceloom_filter::ParseError> {
        self.filter = match expr {
            Some(e) => {
                let filter = Filter::new(e)?;
                Some(RowFilter {
                    needs_state: filter.needs_state(),
                    filter: Arc::new(filter),
                })
            }
            None => None,
        };
        let t = self.scrollbar_value().unwrap_or(Time::MIN);
        self.cancel(session);
        self.start(session, ListMove::ToTime(t));
        Ok(())
    }

    /// Shows `n` rows from now on: at once when the buffer holds them,
    /// otherwise by reloading at the top row's time.
    pub fn set_page_size(&mut self, session: &mut Session, n: usize) {
        let n = n.max(1);
        if n == self.page {
            return;
        }
        self.page = n;
        self.buffer_size = self.buffer_size.max(4 * n);
        if self.step.is_some() {
            return;
        }
        if self.top + n <= self.buffer.len() || self.at_end {
            self.clamp_top();
        } else {
            let t = self.scrollbar_value().unwrap_or(Time::MIN);
            self.start(session, ListMove::ToTime(t));
        }
    }

    /// Number of rows shown.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// The rows shown (while a move is under way: those shown before it,
    /// or the first rows it read).
    pub fn rows(&self) -> &[EventRow] {
        let end = (self.top + self.page).min(self.buffer.len());
        &self.buffer[self.top.min(end)..end]
    }

    /// The scrollbar value: the time of the top row.
    pub fn scrollbar_value(&self) -> Option<Time> {
        self.buffer.get(self.top).map(|r| r.time)
    }

    /// Whether a move is under way (its requests pending on the session).
    pub fn is_pending(&self) -> bool {
        self.step.is_some()
    }

    /// Cancels the move under way and the queued one (the rows shown stay).
    pub fn cancel(&mut self, session: &mut Session) {
        if let Some((id, _)) = self.step.take() {
            session.cancel(id);
        }
        self.queued = None;
        self.shown_early = false;
    }

    /// Begins `mv`. A move within the buffer is done at once; one leaving
    /// it adds requests to `session` (see [`poll`](Self::poll)). While a
    /// move is under way, a far scroll replaces it and line and page moves
    /// are queued after it.
    pub fn start(&mut self, session: &mut Session, mv: ListMove) {
        if self.step.is_some() {
            match mv {
                ListMove::ToTime(_) => {
                    self.cancel(session);
                    self.begin(session, mv);
                }
                _ => self.queue(mv),
            }
            return;
        }
        self.begin(session, mv);
    }

    /// Adds a relative move to the queued one.
    fn queue(&mut self, mv: ListMove) {
        let lines = |m: ListMove, page: usize| -> Option<i64> {
            match m {
                ListMove::LinesDown(n) => Some(n as i64),
                ListMove::LinesUp(n) => Some(-(n as i64)),
                ListMove::PageDown => Some(page as i64),
                ListMove::PageUp => Some(-(page as i64)),
                ListMove::ToTime(_) => None,
            }
        };
        let merged = match (
            self.queued.and_then(|q| lines(q, self.page)),
            lines(mv, self.page),
        ) {
            (Some(a), Some(b)) => {
                let n = a + b;
                if n >= 0 {
                    ListMove::LinesDown(n as usize)
                } else {
                    ListMove::LinesUp(n.unsigned_abs() as usize)
                }
            }
            _ => mv,
        };
        self.queued = Some(merged);
    }

    /// Starts `mv` with no move under way.
    fn begin(&mut self, session: &mut Session, mv: ListMove) {
        self.shown_early = false;
        match mv {
            ListMove::ToTime(t) => self.read_ahead(session, Start::Time(t), 0),
            ListMove::LinesDown(n) => self.begin_lines_down(session, n),
            ListMove::LinesUp(n) => self.begin_lines_up(session, n),
            ListMove::PageDown => self.begin_lines_down(session, self.page),
            ListMove::PageUp => self.begin_lines_up(session, self.page),
        }
    }

    fn begin_lines_down(&mut self, session: &mut Session, n: usize) {
        if self.buffer.is_empty() || n == 0 {
            return;
        }
        let target = self.top + n;
        if target + self.page <= self.buffer.len() || self.at_end {
            self.top = target.min(self.buffer.len());
            self.clamp_top();
            return;
        }
        // Leaves the buffer: pass over n accepted events from the top row,
        // with the filter, and refill around the one after them.
        let from = self.buffer[self.top].position;
        self.read_ahead(session, Start::Position(from), n);
    }

    fn begin_lines_up(&mut self, session: &mut Session, n: usize) {
        if self.buffer.is_empty() || n == 0 {
            return;
        }
        if n <= self.top || self.at_start {
            self.top = self.top.saturating_sub(n);
            return;
        }
        let from = self.buffer[self.top].position;
        self.seek_back(session, (from, n), AfterBack::ReadAhead, Priority::HIGH);
    }

    /// Rows wanted ahead of the top row.
    fn want_ahead(&self) -> usize {
        self.buffer_size - self.buffer_size / 2
    }

    /// A request of the list at `priority`: the filter's state needs
    /// decide whether it restores the state.
    fn request(
        &self,
        start: Start<CtfPosition>,
        data: Payload,
        priority: Priority,
    ) -> KernelRequest {
        let mut req = KernelRequest::new(self.owner, start, data);
        req.priority = priority;
        // Rows and a filter without `state.*` never read the state, so a
        // jump seeks directly through the packet index instead of
        // replaying the state up to it.
        req.needs_state = self.filter.as_ref().is_some_and(|f| f.needs_state);
        req
    }

    /// The hooks' priority: after the state's when the filter reads it
    /// (the state after the event, as `dump --filter` sees it).
    fn hook_priority(&self) -> Priority {
        if self.filter.as_ref().is_some_and(|f| f.needs_state) {
            Priority::DEFAULT
        } else {
            Priority::HIGH
        }
    }

    /// Reads rows from `start`: `skip` accepted events passed over, then
    /// up to [`want_ahead`](Self::want_ahead) rows.
    fn read_ahead(&mut self, session: &mut Session, start: Start<CtfPosition>, skip: usize) {
        let want = self.want_ahead();
        let data = RowsData {
            skip,
            want,
            rows: Vec::with_capacity(want.min(4096)),
        };
        let id = self.rows_request(session, start, Box::new(data), None, Priority::HIGH);
        self.step = Some((id, Step::Ahead));
    }

    /// Adds a request at `priority` collecting rows into its
    /// [`RowsData`], before `end`.
    fn rows_request(
        &self,
        session: &mut Session,
        start: Start<CtfPosition>,
        data: Payload,
        end: Option<CtfPosition>,
        priority: Priority,
    ) -> RequestId {
        let mut req = self.request(start, data, priority);
        req.end_position = end;
        let filter = self.filter.clone();
        req.event.add(self.hook_priority(), move |ctx| {
            if !accepted(&filter, ctx.event, ctx.state) {
                return Flow::Continue;
            }
            let Some(d) = ctx.data.downcast_mut::<RowsData>() else {
                return Flow::Stop;
            };
            if d.skip > 0 {
                d.skip -= 1;
                return Flow::Continue;
            }
            if let Some(r) = row_of(ctx.event, *ctx.position) {
                d.rows.push(r);
            }
            if d.rows.len() >= d.want {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        session.add(req)
    }

    /// Starts a backward seek of `n` accepted events before `from`, its
    /// requests at `priority`.
    fn seek_back(
        &mut self,
        session: &mut Session,
        (from, n): (CtfPosition, usize),
        then: AfterBack,
        priority: Priority,
    ) {
        let (first, last) = session.time_span().unwrap_or((0, 0));
        let span = (last - first).max(1);
        let seek = BackSeek {
            n,
            priority,
            from,
            // The end position's time is Time::MAX; anchoring there would
            // waste dozens of doublings on empty windows.
            anchor: from.time.min(last),
            // A first window a few events long on average.
            offset: (span / 100_000).max(1_000),
            end: from,
            found: VecDeque::with_capacity(n.min(4096)),
        };
        self.next_window(session, seek, then);
    }

    /// Adds the request reading the next window of `seek`.
    fn next_window(&mut self, session: &mut Session, seek: BackSeek, then: AfterBack) {
        let need = seek.n - seek.found.len();
        let window_start = seek.anchor.saturating_sub(seek.offset);
        let data = WindowData {
            first: None,
            need,
            accepted: VecDeque::with_capacity(need.min(4096)),
        };
        let mut req = self.request(Start::Time(window_start), Box::new(data), seek.priority);
        req.end_position = Some(seek.end);
        let filter = self.filter.clone();
        req.event.add(self.hook_priority(), move |ctx| {
            let Some(d) = ctx.data.downcast_mut::<WindowData>() else {
                return Flow::Stop;
            };
            d.first.get_or_insert(*ctx.position);
            if accepted(&filter, ctx.event, ctx.state) {
                if d.accepted.len() == d.need {
                    d.accepted.pop_front();
                }
                d.accepted.push_back(*ctx.position);
            }
            Flow::Continue
        });
        let id = session.add(req);
        self.step = Some((id, Step::Back { seek, then }));
    }

    /// Advances the move under way with the requests that completed since
    /// the last call; returns whether the rows shown changed. Call it after
    /// each servicing of the session.
    pub fn poll(&mut self, session: &mut Session) -> bool {
        let mut changed = false;
        while let Some((id, _)) = &self.step {
            let id = *id;
            if !session.is_complete(id) {
                if session.scheduler().request(id).is_none() {
                    // Cancelled behind our back: nothing will complete.
                    self.step = None;
                    break;
                }
                changed |= self.show_early(session, id);
                break;
            }
            let Some((_, step)) = self.step.take() else {
                break;
            };
            changed |= self.advance(session, id, step);
        }
        if self.step.is_none() {
            if let Some(mv) = self.queued.take() {
                self.begin(session, mv);
                // Done at once (within the buffer), or its requests are
                // answered by the next servicing.
                changed |= self.step.is_none();
            }
        }
        changed
    }

    /// While the rows ahead are read: shows the first page of them as soon
    /// as it is there (the rows before it follow).
    fn show_early(&mut self, session: &mut Session, id: RequestId) -> bool {
        if self.shown_early || !matches!(self.step, Some((_, Step::Ahead))) {
            return false;
        }
        let page = self.page;
        let Some(d) = session.peek::<RowsData>(id) else {
            return false;
        };
        if d.rows.len() < page {
            return false;
        }
        let first = d.rows[..page].to_vec();
        self.show_first_page(first);
        true
    }

    /// Shows `page`, the first rows read ahead, before the move is done.
    fn show_first_page(&mut self, page: Vec<EventRow>) {
        self.buffer = page;
        self.top = 0;
        self.at_start = false;
        self.at_end = false;
        self.compute_deltas();
        self.shown_early = true;
    }

    /// Takes the completed request `id` of `step` and starts the next
    /// step, or ends the move; returns whether the rows shown changed.
    fn advance(&mut self, session: &mut Session, id: RequestId, step: Step) -> bool {
        match step {
            Step::Ahead => {
                let ahead = session
                    .take::<RowsData>(id)
                    .map(|d| d.rows)
                    .unwrap_or_default();
                // Read within one servicing, the rows ahead were not shown
                // early: their first page is shown now, before the rows
                // before it are looked for.
                let shown = !self.shown_early && ahead.len() >= self.page;
                if shown {
                    self.show_first_page(ahead[..self.page].to_vec());
                }
                self.at_end = ahead.len() < self.want_ahead();
                let from = ahead.first().map_or(CtfPosition::END, |r| r.position);
                let half = self.buffer_size / 2;
                // With the page shown, the rows before it only fill the
                // buffer (for moves up): below what the visible viewers
                // wait for (a window zoomed into meanwhile), above the
                // background pass.
                let priority = if self.shown_early {
                    Priority::DEFAULT
                } else {
                    Priority::HIGH
                };
                self.seek_back(session, (from, half), AfterBack::Fill { ahead }, priority);
                shown
            }
            Step::Back { mut seek, then } => {
                let d = session.take::<WindowData>(id);
                let window_start = seek.anchor.saturating_sub(seek.offset);
                if let Some(d) = d {
                    for p in d.accepted.into_iter().rev() {
                        seek.found.push_front(p);
                    }
                    if let Some(f) = d.first {
                        seek.end = f;
                    }
                }
                let first_time = session.time_span().map_or(0, |s| s.0);
                if seek.found.len() < seek.n && window_start > first_time {
                    seek.offset = seek.offset.saturating_mul(2);
                    self.next_window(session, seek, then);
                    return false;
                }
                let found: Vec<CtfPosition> = seek.found.into();
                match then {
                    AfterBack::ReadAhead => {
                        // Nothing before: the top row stays the first.
                        let start = found.first().copied().unwrap_or(seek.from);
                        self.read_ahead(session, Start::Position(start), 0);
                        false
                    }
                    AfterBack::Fill { ahead } => {
                        self.at_start = found.len() < self.buffer_size / 2;
                        match found.first() {
                            Some(p) => {
                                let from = ahead.first().map_or(CtfPosition::END, |r| r.position);
                                let data = RowsData {
                                    skip: 0,
                                    want: found.len(),
                                    rows: Vec::with_capacity(found.len()),
                                };
                                let id = self.rows_request(
                                    session,
                                    Start::Position(*p),
                                    Box::new(data),
                                    Some(from),
                                    seek.priority,
                                );
                                self.step = Some((id, Step::BackRows { ahead }));
                                false
                            }
                            None => {
                                self.fill(Vec::new(), ahead);
                                true
                            }
                        }
                    }
                }
            }
            Step::BackRows { ahead } => {
                let back = session
                    .take::<RowsData>(id)
                    .map(|d| d.rows)
                    .unwrap_or_default();
                self.fill(back, ahead);
                true
            }
        }
    }

    /// Makes `back` then `ahead` the buffer, the top row the first of
    /// `ahead` (the last page when fewer rows follow).
    fn fill(&mut self, mut back: Vec<EventRow>, mut ahead: Vec<EventRow>) {
        let top = back.len();
        back.append(&mut ahead);
        self.buffer = back;
        self.top = top;
        self.shown_early = false;
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

    /// Services `session` until the move under way (and the queued one) is
    /// done: for command-line use and tests. An interactive caller services
    /// the session from its main loop and calls [`poll`](Self::poll).
    pub fn finish(&mut self, session: &mut Session) {
        loop {
            self.poll(session);
            if self.step.is_none() {
                return;
            }
            session.service(Budget::events(1 << 16), || false);
        }
    }

    /// [`ListMove::ToTime`], done before returning.
    pub fn scroll_to_time(&mut self, session: &mut Session, t: Time) {
        self.start(session, ListMove::ToTime(t));
        self.finish(session);
    }

    /// [`ListMove::LinesDown`], done before returning.
    pub fn line_down(&mut self, session: &mut Session, n: usize) {
        self.start(session, ListMove::LinesDown(n));
        self.finish(session);
    }

    /// [`ListMove::LinesUp`], done before returning.
    pub fn line_up(&mut self, session: &mut Session, n: usize) {
        self.start(session, ListMove::LinesUp(n));
        self.finish(session);
    }

    /// [`ListMove::PageDown`], done before returning.
    pub fn page_down(&mut self, session: &mut Session) {
        self.start(session, ListMove::PageDown);
        self.finish(session);
    }

    /// [`ListMove::PageUp`], done before returning.
    pub fn page_up(&mut self, session: &mut Session) {
        self.start(session, ListMove::PageUp);
        self.finish(session);
    }
}
