//! The viewer models of one tab, driven through the tab's [`Session`]: what
//! each view asks for, and collecting what completed.
//!
//! * the kernel pass ([`KernelAnalysis`], LOW priority, whole trace) feeds
//!   the control flow and resources models, which then render any window
//!   synchronously; while it runs, partial snapshots are shown (at most one
//!   per [`SNAPSHOT_INTERVAL`]) so the views fill in progressively;
//! * the histogram of the whole trace ([`HistogramModel`]);
//! * statistics: the whole trace's come with the kernel pass, a selection's
//!   from a HIGH-priority range request;
//! * the event list: a HIGH-priority request for the first
//!   [`MAX_LIST_EVENTS`] events of the window that pass the filter;
//! * search: a HIGH-priority request for the next (or last previous) event
//!   matching an expression.

use std::sync::Arc;
use std::time::{Duration, Instant};

use traceloom_engine::ctf::event::{Event, FieldRef, FieldValue};
use traceloom_engine::filter::Filter;
use traceloom_engine::request::{OwnerId, RequestId, Start};
use traceloom_engine::subject::EventSubject;
use traceloom_engine::tsdl::ir::Scope;
use traceloom_hooks::{Flow, Priority};
use traceloom_viewers::model::kernel::KernelCollector;
use traceloom_viewers::model::stats::range_request;
use traceloom_viewers::model::{
    ControlFlowModel, HistogramModel, KernelAnalysis, KernelData, KernelRequest, Payload,
    ResourcesModel, Session, Statistics,
};
use traceloom_viewers::time::format_duration;
use traceloom_viewers::{HistogramRender, StatisticsRender, Time, TimeGraphRender, TimeRange};

use crate::tab::format_time;
use crate::views::eventlist::ListRow;

/// Most events the list holds for one window.
pub const MAX_LIST_EVENTS: u64 = 20_000;
/// Shortest interval between two partial renders of the kernel pass.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(700);

/// What [`TabModels::poll`] collected for the views.
#[derive(Default)]
pub struct Updates {
    /// New control flow render.
    pub control_flow: Option<Arc<TimeGraphRender>>,
    /// New resources render.
    pub resources: Option<Arc<TimeGraphRender>>,
    /// New histogram.
    pub histogram: Option<Arc<HistogramRender>>,
    /// New statistics and their caption.
    pub statistics: Option<(Arc<StatisticsRender>, String)>,
    /// New event-list rows and their status line.
    pub events: Option<(Vec<ListRow>, String)>,
    /// A search ended: the time found, or `None` when nothing matched.
    pub search: Option<Option<Time>>,
    /// Errors to report.
    pub errors: Vec<String>,
}

/// Direction and origin of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// First match strictly after this time.
    Next(Time),
    /// Last match strictly before this time.
    Previous(Time),
}

/// Data of the event-list request.
struct ListData {
    rows: Vec<ListRow>,
}

/// Data of a search request: the match found.
struct SearchData(Option<Time>);

/// The models of a tab and their pending requests.
pub struct TabModels {
    owner: OwnerId,
    kernel_pass: Option<RequestId>,
    last_snapshot: Option<Instant>,
    data: Option<Arc<KernelData>>,
    control_flow: Option<ControlFlowModel>,
    resources: Option<ResourcesModel>,
    histogram: HistogramModel,
    stats_request: Option<(RequestId, TimeRange)>,
    list_request: Option<(RequestId, TimeRange)>,
    search_request: Option<RequestId>,
    /// Window and widths asked last, to re-render when the kernel data
    /// arrives.
    window: Option<(TimeRange, u32, u32)>,
    selection: Option<TimeRange>,
    span: TimeRange,
    /// A cached histogram handed over at the next poll.
    pending_histogram: Option<Arc<HistogramRender>>,
    /// Window and widths of the time graphs last rendered.
    rendered: Option<(TimeRange, u32, u32)>,
    /// The statistics shown are out of date.
    stats_dirty: bool,
}

impl TabModels {
    /// Models over `session`'s traceset; nothing is requested yet.
    pub fn new(session: &mut Session) -> Self {
        let span = session
            .time_span()
            .map(|(a, b)| TimeRange::new(a, b.max(a + 1)))
            .unwrap_or(TimeRange::new(0, 1));
        TabModels {
            owner: session.new_owner(),
            kernel_pass: None,
            last_snapshot: None,
            data: None,
            control_flow: None,
            resources: None,
            histogram: HistogramModel::new(),
            stats_request: None,
            list_request: None,
            search_request: None,
            window: None,
            selection: None,
            span,
            pending_histogram: None,
            rendered: None,
            stats_dirty: true,
        }
    }

    /// Starts the LOW-priority whole-trace pass.
    pub fn start_background(&mut self, session: &mut Session) {
        if self.kernel_pass.is_none() && self.data.is_none() {
            let req = KernelAnalysis::request(session, self.owner);
            self.kernel_pass = Some(session.add(req));
        }
    }

    /// Cancels the whole-trace pass (the views keep the last partial data).
    pub fn cancel_background(&mut self, session: &mut Session) {
        if let Some(id) = self.kernel_pass.take() {
            session.cancel(id);
        }
    }

    /// Label and fraction of the background pass, while it runs.
    pub fn background_progress(&mut self, session: &mut Session) -> Option<(String, f64)> {
        let id = self.kernel_pass?;
        let pos = session.scheduler().request(id).map(|r| match &r.start {
            Start::Time(t) => *t,
            Start::Position(p) => p.time,
        })?;
        let f = (pos.saturating_sub(self.span.start)) as f64 / self.span.span().max(1) as f64;
        Some((
            format!(
                "Analysing the whole trace (state, statistics): {:.0} %",
                f.clamp(0.0, 1.0) * 100.0
            ),
            f,
        ))
    }

    /// Asks for what `window` shows: time graphs at the given graph widths,
    /// and the event list filtered by `filter`.
    pub fn request_window(
        &mut self,
        session: &mut Session,
        window: TimeRange,
        cf_width: u32,
        res_width: u32,
        filter: Option<Arc<Filter>>,
    ) {
        self.window = Some((window, cf_width.max(1), res_width.max(1)));
        if let Some((id, _)) = self.list_request.take() {
            session.cancel(id);
        }
        let req = list_request(self.owner, window, filter);
        self.list_request = Some((session.add(req), window));
    }

    /// Asks for the whole trace's histogram in `bins` bins.
    pub fn request_histogram(&mut self, session: &mut Session, span: TimeRange, bins: u32) {
        // A cached render comes back at once; the poll hands it over.
        if let Some(r) = self.histogram.ask(session, span, bins) {
            self.pending_histogram = Some(r);
        }
    }

    /// Asks for the statistics of `range` (the whole trace's when `None`).
    pub fn request_statistics(&mut self, session: &mut Session, range: Option<TimeRange>) {
        if let Some((id, _)) = self.stats_request.take() {
            session.cancel(id);
        }
        self.selection = range;
        if let Some(r) = range {
            let names = self
                .data
                .as_ref()
                .map(|d| d.trace_names.clone())
                .unwrap_or_default();
            let req = range_request(self.owner, r.start, r.end, names);
            self.stats_request = Some((session.add(req), r));
        }
        self.stats_dirty = true;
    }

    /// Searches with `filter` from the origin of `search`.
    pub fn search(
        &mut self,
        session: &mut Session,
        filter: Filter,
        search: Search,
        span: TimeRange,
    ) {
        if let Some(id) = self.search_request.take() {
            session.cancel(id);
        }
        let req = search_request(self.owner, filter, search, span);
        self.search_request = Some(session.add(req));
    }

    /// Collects what completed since the last call.
    pub fn poll(&mut self, session: &mut Session) -> Updates {
        let mut u = Updates {
            histogram: self.pending_histogram.take(),
            ..Updates::default()
        };
        if let Some(h) = self.histogram.poll(session) {
            u.histogram = Some(h);
        }

        // The kernel pass: complete, or a partial snapshot now and then.
        let mut new_data = false;
        if let Some(id) = self.kernel_pass {
            if let Some(d) = session.take::<KernelData>(id) {
                self.kernel_pass = None;
                self.data = Some(Arc::new(d));
                new_data = true;
            } else if session.is_complete(id) {
                self.kernel_pass = None;
                u.errors
                    .push("the whole-trace analysis ended without data".into());
            } else if self
                .last_snapshot
                .is_none_or(|t| t.elapsed() >= SNAPSHOT_INTERVAL)
            {
                if let Some(c) = session.peek::<KernelCollector>(id) {
                    self.data = Some(Arc::new(c.snapshot()));
                    self.last_snapshot = Some(Instant::now());
                    new_data = true;
                }
            }
        }
        if new_data {
            if let Some(d) = &self.data {
                self.control_flow = Some(ControlFlowModel::new(d.clone()));
                self.resources = Some(ResourcesModel::new(d.clone()));
            }
            self.rendered = None;
            if self.selection.is_none() {
                self.stats_dirty = true;
            }
        }

        // Time graphs render synchronously from the models.
        if let Some(w) = self.window {
            if self.rendered != Some(w) {
                if let (Some(cf), Some(res)) = (&self.control_flow, &self.resources) {
                    let (window, cfw, rw) = w;
                    u.control_flow = Some(Arc::new(cf.render(window, cfw)));
                    u.resources = Some(Arc::new(res.render(window, rw)));
                    self.rendered = Some(w);
                }
            }
        }

        // Statistics: the selection's when one is asked, else the whole
        // trace's from the kernel pass.
        if let Some((id, r)) = self.stats_request {
            if let Some(s) = session.take::<Statistics>(id) {
                self.stats_request = None;
                self.stats_dirty = false;
                u.statistics = Some((
                    Arc::new(s.render()),
                    format!(
                        "Statistics of the selection {} – {} ({})",
                        format_time(r.start),
                        format_time(r.end),
                        format_duration(r.end as i128 - r.start as i128)
                    ),
                ));
            }
        } else if self.stats_dirty && self.selection.is_none() {
            if let Some(d) = &self.data {
                let partial = if self.kernel_pass.is_some() {
                    " (so far)"
                } else {
                    ""
                };
                u.statistics = Some((
                    Arc::new(d.stats.render()),
                    format!("Statistics of the whole trace{partial}"),
                ));
                self.stats_dirty = self.kernel_pass.is_some();
            }
        }

        if let Some((id, w)) = self.list_request {
            if let Some(d) = session.take::<ListData>(id) {
                self.list_request = None;
                let n = d.rows.len();
                let more = if n as u64 >= MAX_LIST_EVENTS {
                    format!(" (first {MAX_LIST_EVENTS}; zoom in for the others)")
                } else {
                    String::new()
                };
                u.events = Some((
                    d.rows,
                    format!(
                        "{n} events from {} to {}{more}",
                        format_time(w.start),
                        format_time(w.end)
                    ),
                ));
            }
        }

        if let Some(id) = self.search_request {
            if let Some(SearchData(found)) = session.take::<SearchData>(id) {
                self.search_request = None;
                u.search = Some(found);
            }
        }
        u
    }
}

/// The request listing the events of `window` that `filter` accepts.
fn list_request(owner: OwnerId, window: TimeRange, filter: Option<Arc<Filter>>) -> KernelRequest {
    let mut req = KernelRequest::new(
        owner,
        Start::Time(window.start),
        Box::new(ListData { rows: Vec::new() }) as Payload,
    );
    req.priority = Priority::HIGH;
    req.end_time = Some(window.end);
    req.event.add(Priority::DEFAULT, move |ctx| {
        let Some(ev) = ctx.event.event() else {
            return Flow::Continue;
        };
        if let Some(f) = &filter {
            if !f.matches(&EventSubject::new(&ev, Some(ctx.state))) {
                return Flow::Continue;
            }
        }
        let Some(d) = ctx.data.downcast_mut::<ListData>() else {
            return Flow::Continue;
        };
        d.rows.push(list_row(&ev));
        if d.rows.len() as u64 >= MAX_LIST_EVENTS {
            Flow::Stop
        } else {
            Flow::Continue
        }
    });
    req
}

/// The request looking for a match of `filter` after or before a time.
fn search_request(
    owner: OwnerId,
    filter: Filter,
    search: Search,
    span: TimeRange,
) -> KernelRequest {
    let (start, end, stop_at_first) = match search {
        Search::Next(t) => (t.saturating_add(1), None, true),
        // The last match before `t`: everything from the start is read (the
        // state the expression may test needs it anyway).
        Search::Previous(t) => (span.start, Some(t.saturating_sub(1)), false),
    };
    let mut req = KernelRequest::new(
        owner,
        Start::Time(start),
        Box::new(SearchData(None)) as Payload,
    );
    req.priority = Priority::HIGH;
    req.end_time = end;
    req.event.add(Priority::DEFAULT, move |ctx| {
        let Some(ev) = ctx.event.event() else {
            return Flow::Continue;
        };
        if !filter.matches(&EventSubject::new(&ev, Some(ctx.state))) {
            return Flow::Continue;
        }
        if let Some(d) = ctx.data.downcast_mut::<SearchData>() {
            d.0 = ev.timestamp_ns();
        }
        if stop_at_first {
            Flow::Stop
        } else {
            Flow::Continue
        }
    });
    req
}

/// One list row: time, trace and CPU, name, payload fields.
pub fn list_row(ev: &Event<'_>) -> ListRow {
    let time = ev.timestamp_ns().unwrap_or(0);
    let trace = ev.trace().name.clone().unwrap_or_default();
    let cpu = ev.cpu_id().map(|c| format!("CPU {c}")).unwrap_or_default();
    let mut fields = String::new();
    for scope in [
        Scope::StreamEventContext,
        Scope::EventContext,
        Scope::EventPayload,
    ] {
        if let Some(f) = ev.scope(scope) {
            for (name, v) in f.fields() {
                if !fields.is_empty() {
                    fields.push_str(", ");
                }
                fields.push_str(name.trim_start_matches('_'));
                fields.push_str(" = ");
                push_value(&mut fields, ev, &v);
            }
        }
    }
    ListRow {
        time,
        columns: [
            format_time(time),
            if trace.is_empty() {
                cpu
            } else {
                format!("{trace} {cpu}")
            },
            ev.name().to_owned(),
            fields,
        ],
    }
}

fn push_value(out: &mut String, ev: &Event<'_>, f: &FieldRef<'_>) {
    if let Some(b) = f.str_bytes() {
        out.push('"');
        out.push_str(&String::from_utf8_lossy(b));
        out.push('"');
        return;
    }
    if let Some(label) = f.enum_labels().next() {
        out.push_str(label);
        return;
    }
    match f.value() {
        Some(FieldValue::UInt(v)) => out.push_str(&v.to_string()),
        Some(FieldValue::SInt(v)) => out.push_str(&v.to_string()),
        Some(FieldValue::Float(v)) => out.push_str(&v.to_string()),
        Some(other) => {
            if let Some(b) = ev.bytes(other) {
                out.push_str(&String::from_utf8_lossy(b));
            } else {
                out.push('…');
            }
        }
        None => {
            let inner: Vec<_> = f.fields().collect();
            if !inner.is_empty() {
                out.push_str("{ ");
                for (i, (n, v)) in inner.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(n);
                    out.push_str(" = ");
                    push_value(out, ev, v);
                }
                out.push_str(" }");
            } else {
                let els: Vec<_> = f.elements().take(16).collect();
                out.push('[');
                for (i, v) in els.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    push_value(out, ev, v);
                }
                out.push(']');
            }
        }
    }
}
