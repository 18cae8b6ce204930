//! The detailed event list of a Pajé trace: LTTV's time-scrolled list
//! ([`crate::model::eventlist`]) over the Pajé session — one row per event
//! line (time, container, event kind and type, value, the other fields),
//! the scrollbar's value a time.
//!
//! Each move is a HIGH-priority request on the tab's [`PajeSession`]
//! (started by [`PajeListModel::start`], collected by
//! [`PajeListModel::poll`] after the session was serviced), so it preempts
//! the whole-trace pass at its next chunk. Moving up seeks back with the
//! scheduler's `seek_n_events_backward` (window by window from the top
//! row), then reads the page forward. The list needs no simulation state:
//! its requests seek with the source's own seek. Definitions (lines without
//! a time) are not listed.

use traceloom_base::Time;

use traceloom_engine::paje_source::{PajeCurrent, PajePosition};
use traceloom_engine::request::{OwnerId, RequestId, Start};
use traceloom_hooks::{Flow, HookContext, Priority};
use traceloom_paje::{EventKind, Field};

use crate::model::eventlist::ListMove;
use crate::model::paje_session::{PajeRequest, PajeSession};
use crate::model::session::Payload;

/// One event of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct PajeRow {
    /// Time (ns).
    pub time: Time,
    /// Where it is (the list's moves start from rows' positions).
    pub position: PajePosition,
    /// Line number in its file.
    pub line: u64,
    /// The container field as written.
    pub container: String,
    /// Event kind without its `Paje` prefix (`PushState`, `StartLink`...).
    pub kind: &'static str,
    /// The type field as written.
    pub type_name: String,
    /// The value field as written (empty when the event has none).
    pub value: String,
    /// The other fields, `name=value` separated by spaces.
    pub fields: String,
}

/// Rows read by one request.
type Rows = Vec<PajeRow>;

fn word(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The row of the current event.
fn row_of(ev: &PajeCurrent, position: PajePosition) -> Option<PajeRow> {
    let e = ev.event()?;
    let mut fields = String::new();
    if let Some(def) = ev.definition() {
        for (spec, w) in def.fields.iter().zip(e.words()).skip(1) {
            let shown = match spec.field {
                Some(Field::Time | Field::Container | Field::Type | Field::Value) => true,
                Some(Field::Name) => e.kind == EventKind::DestroyContainer,
                _ => false,
            };
            if shown {
                continue;
            }
            if !fields.is_empty() {
                fields.push(' ');
            }
            fields.push_str(&String::from_utf8_lossy(&spec.name));
            fields.push('=');
            fields.push_str(&String::from_utf8_lossy(w));
        }
    }
    Some(PajeRow {
        time: position.time,
        position,
        line: e.line,
        // A destroyed container is named by the Name field.
        container: word(match (e.get(Field::Container), e.kind) {
            (None, EventKind::DestroyContainer) => e.field(Field::Name),
            (c, _) => c.unwrap_or(b""),
        }),
        kind: e.kind.name().trim_start_matches("Paje"),
        type_name: word(e.field(Field::Type)),
        value: word(e.field(Field::Value)),
        fields,
    })
}

/// Whether the list shows an event: timed lines only.
fn listed(ev: &PajeCurrent) -> bool {
    ev.event().is_some_and(|e| e.time.is_some())
}

/// The event list's model (see the module doc).
#[derive(Debug)]
pub struct PajeListModel {
    owner: OwnerId,
    page: usize,
    rows: Vec<PajeRow>,
    /// The read under way, and whether it fills a short last page.
    pending: Option<(RequestId, bool)>,
}

impl PajeListModel {
    /// A list of `page` rows; nothing is read yet.
    pub fn new(session: &mut PajeSession, page: usize) -> PajeListModel {
        PajeListModel {
            owner: session.new_owner(),
            page: page.max(1),
            rows: Vec::new(),
            pending: None,
        }
    }

    /// The rows shown.
    pub fn rows(&self) -> &[PajeRow] {
        &self.rows
    }

    /// Whether a move is under way.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The scrollbar's value: the top row's time.
    pub fn scrollbar_value(&self) -> Option<Time> {
        self.rows.first().map(|r| r.time)
    }

    /// Reads a page from `start` (replacing any read under way).
    fn read(&mut self, session: &mut PajeSession, start: Start<PajePosition>, fill: bool) {
        if let Some((id, _)) = self.pending.take() {
            session.cancel(id);
        }
        let mut req = PajeRequest::new(self.owner, start, Box::new(Rows::new()) as Payload);
        req.priority = Priority::HIGH;
        req.needs_state = false;
        req.num_events = Some(self.page as u64);
        req.filter = Some(Box::new(listed));
        req.event.add(
            Priority::HIGH,
            |ctx: &mut HookContext<'_, PajeCurrent, PajePosition, _, Payload>| {
                if let (Some(rows), Some(r)) = (
                    ctx.data.downcast_mut::<Rows>(),
                    row_of(ctx.event, *ctx.position),
                ) {
                    rows.push(r);
                }
                Flow::Continue
            },
        );
        self.pending = Some((session.add(req), fill));
    }

    /// The position `n` listed events before `from` (the first event when
    /// fewer precede it).
    fn back(session: &mut PajeSession, from: &PajePosition, n: usize) -> Option<PajePosition> {
        let span = session.time_span()?;
        // A first window of about the average spacing of n events.
        let offset = ((span.1 - span.0) / 1_000_000).max(1);
        let mut pred = |e: &PajeCurrent| listed(e);
        let found = session
            .scheduler()
            .seek_n_events_backward(from, n, offset, Some(&mut pred));
        found.first().copied()
    }

    /// Starts a move; the rows change at once when it needs no read.
    pub fn start(&mut self, session: &mut PajeSession, mv: ListMove) {
        let top = self.rows.first().map(|r| r.position);
        let page = self.page.saturating_sub(1).max(1);
        match mv {
            ListMove::ToTime(t) => self.read(session, Start::Time(t), true),
            ListMove::LinesDown(_) | ListMove::PageDown if self.rows.len() > 1 => {
                let n = match mv {
                    ListMove::LinesDown(n) => n,
                    _ => page,
                };
                let k = n.min(self.rows.len() - 1);
                let p = self.rows[k].position;
                self.read(session, Start::Position(p), true);
            }
            ListMove::LinesUp(_) | ListMove::PageUp => {
                let n = match mv {
                    ListMove::LinesUp(n) => n,
                    _ => page,
                };
                let Some(top) = top else { return };
                if let Some(p) = Self::back(session, &top, n) {
                    self.read(session, Start::Position(p), false);
                }
            }
            _ => {}
        }
    }

    /// Shows `n` rows from the same top row.
    pub fn set_page_size(&mut self, session: &mut PajeSession, n: usize) {
        let n = n.max(1);
        if n == self.page {
            return;
        }
        self.page = n;
        let start = match self.rows.first() {
            Some(r) => Start::Position(r.position),
            None => return,
        };
        self.read(session, start, false);
    }

    /// Collects the read under way after the session was serviced; true
    /// when the rows changed.
    pub fn poll(&mut self, session: &mut PajeSession) -> bool {
        let Some((id, fill)) = self.pending else {
            return false;
        };
        if !session.is_complete(id) {
            return false;
        }
        self.pending = None;
        let rows: Rows = session.take(id).unwrap_or_default();
        if fill && rows.len() < self.page {
            // Near the end: the last page, read from the events before.
            let from = rows.first().map_or(PajePosition::END, |r| r.position);
            let missing = self.page - rows.len();
            if let Some(p) = Self::back(session, &from, missing) {
                if rows.first().is_none_or(|r| r.position != p) {
                    self.read(session, Start::Position(p), false);
                    return false;
                }
            }
        }
        self.rows = rows;
        true
    }
}
