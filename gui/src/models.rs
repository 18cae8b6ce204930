//! The viewer models of one tab, driven through the tab's [`Session`]: what
//! each view asks for, and collecting what completed.
//!
//! * the kernel pass ([`KernelAnalysis`], LOW priority, whole trace) feeds
//!   the control flow and resources models; a job on a thread of its own
//!   ([`crate::worker::Job`]) builds them from the `Arc`'d kernel data and
//!   renders the window (the result is handed over at a later poll, so
//!   neither the build, tens of ms on thousands of threads, nor a render
//!   longer than a frame stalls the main loop); while the pass runs,
//!   partial snapshots are taken on the main thread (a few ms each, at
//!   most one per [`SNAPSHOT_INTERVAL`], none while a graph job runs) so
//!   the views fill in progressively; with more than one core the rest of
//!   the pass is read on threads and joined at its end
//!   ([`crate::pass_split`]);
//! * the histogram of the whole trace: re-binned from the kernel pass's
//!   fine bins, so it grows with the pass and follows the view's width
//!   without reading the trace again;
//! * statistics: the whole trace's come with the kernel pass, a selection's
//!   from a HIGH-priority range request; both are rendered by a job;
//! * the event list: the time-scrolled [`EventListModel`], whose moves
//!   ([`ListModels::list_move`]) are HIGH-priority requests on the same
//!   session, preempting the whole-trace pass;
//! * search: a HIGH-priority request for the next (or last previous) event
//!   matching an expression.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint::{self, Checkpoints};
use traceloom_engine::request::{OwnerId, RequestId, Start};
use traceloom_engine::source::CtfPosition;
use traceloom_engine::state::TracesetState;
use traceloom_filter::Filter;
use traceloom_hooks::{Flow, Priority};
use traceloom_viewers::model::checkpoint_pass::{self, CheckpointsAhead};
use traceloom_viewers::model::damage::StreamDamage;
use traceloom_viewers::model::eventlist::{event_matches, ListMove as Move};
use traceloom_viewers::model::histogram::lost_events;
use traceloom_viewers::model::kernel::KernelCollector;
use traceloom_viewers::model::stats::StatisticsTask;
use traceloom_viewers::model::{
    CellTree, ControlFlowModel, EventListModel, EventRow, KernelAnalysis, KernelData,
    KernelRequest, Payload, ResourcesModel, Session, Statistics, WindowPreview,
};
use traceloom_viewers::store::identity::TracesetIdentity;
use traceloom_viewers::store::{self, StoreError};
use traceloom_viewers::time::format_duration;
use traceloom_viewers::DataConfig;
use traceloom_viewers::{HistogramRender, StatisticsTree, TimeGraphRender};

use crate::bars::FINISHING;
use crate::held_render::HeldRender;
use crate::pass_split::{Completed, PassSplit};
use crate::stalls;
use crate::time_text::format_time;
use crate::views::drop_later;
use crate::views::eventlist::{ListMove, ListRow, RowOrder, DEFAULT_PAGE};
use crate::worker::{Job, JobState};

/// Shortest interval between two partial renders of the kernel pass.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(250);
/// Longest a render of the pass waits for the other renders of its
/// snapshot.
const BACKGROUND_HOLD: Duration = Duration::from_millis(500);
/// How many times as long as the last statistics render took the next
/// one of the pass waits (see `TabModels::stats_render_resting`): renders
/// then take at most a quarter of a core.
const STATS_REST: u32 = 3;

/// The selection `r` as the statistics pane's caption names it.
fn selection_text(r: TimeRange) -> String {
    format!(
        "the selection {} – {} ({})",
        format_time(r.start),
        format_time(r.end),
        format_duration(r.end as i128 - r.start as i128)
    )
}

/// The statistics pane's caption while the selection `r`'s statistics
/// are read, `done` of them so far (from 0 to 1, when known). Both said
/// first: a narrow pane ellipsizes the end.
pub(crate) fn reading_caption(r: TimeRange, done: Option<f64>) -> String {
    let done = done.map_or(String::new(), |f| format!(" ({:.0} %)", f * 100.0));
    format!("Reading the statistics{done} of {}…", selection_text(r))
}

/// How often the progress of a selection's statistics is reported (each
/// report lays the caption out again).
const STATS_PROGRESS_EVERY: Duration = Duration::from_millis(250);

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
    pub statistics: Option<(Arc<dyn StatisticsTree>, String)>,
    /// The caption of statistics being read (with how far they are),
    /// shown over the table until they come.
    pub statistics_pending: Option<String>,
    /// A search ended: the event found, or `None` when nothing matched.
    pub search: Option<Option<RowOrder>>,
    /// How far a search under way has read, from 0 to 1 (of what it may
    /// read: to the trace's end, or back to its start).
    pub search_progress: Option<f64>,
    /// Errors to report.
    pub errors: Vec<String>,
    /// New colours for the main time graph (a Pajé trace's own, known as
    /// its types and values are read).
    pub presentation: Option<traceloom_viewers::PresentationConfig>,
}

impl Updates {
    /// Whether there is nothing for the views to show before more is
    /// read. A search's progress does not count: it is reported while the
    /// search reads, and the read is not held for it (it would hold the
    /// very search it reports); it goes with the turn's other updates.
    pub fn is_empty(&self) -> bool {
        self.control_flow.is_none()
            && self.resources.is_none()
            && self.histogram.is_none()
            && self.statistics.is_none()
            && self.search.is_none()
            && self.errors.is_empty()
            && self.presentation.is_none()
    }

    /// Adds `later`'s updates to these (a newer render replaces an older
    /// one, which is freed off the main loop: it may be large).
    pub fn merge(&mut self, later: Updates) {
        let Updates {
            control_flow,
            resources,
            histogram,
            statistics,
            statistics_pending,
            search,
            search_progress,
            errors,
            presentation,
        } = later;
        replace_newer(&mut self.control_flow, control_flow);
        replace_newer(&mut self.resources, resources);
        replace_newer(&mut self.histogram, histogram);
        replace_newer(&mut self.statistics, statistics);
        if search.is_some() {
            self.search = search;
        }
        if statistics_pending.is_some() {
            self.statistics_pending = statistics_pending;
        }
        if search_progress.is_some() {
            self.search_progress = search_progress;
        }
        self.errors.extend(errors);
        if presentation.is_some() {
            self.presentation = presentation;
        }
    }
}

/// Keeps `newer` in `slot` when there is one, freeing what it replaces off
/// the main loop ([`drop_later`]).
fn replace_newer<T: Send + 'static>(slot: &mut Option<T>, newer: Option<T>) {
    if newer.is_some() {
        if let Some(old) = std::mem::replace(slot, newer) {
            drop_later(old);
        }
    }
}

/// What a render of the time graphs shows: window and graph widths, the
/// generation of the models it was drawn from and the fingerprint of the
/// control flow's rows configuration (the rows it holds are beside it, in
/// a [`HeldRender`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shows {
    window: (TimeRange, u32, u32),
    generation: u64,
    rows: u64,
}

/// A render of the time graphs and the control-flow rows it holds.
type Rendered = HeldRender<Shows>;

/// Whether `now` shows another window, rows or rows configuration than
/// `before` (a render the user waits for).
fn moved_from(now: &Rendered, before: &Rendered) -> bool {
    now.shows.window != before.shows.window
        || now.shows.rows != before.shows.rows
        || now.rows != before.rows
}

/// Direction and origin of a search: an event's place in the list's
/// reading order (the selected row's, or before or after every event of
/// the current time), so that events of the same time are found in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// First match strictly after this place.
    Next(RowOrder),
    /// Last match strictly before this place.
    Previous(RowOrder),
}

/// What the event list shows after a move.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    /// The rows.
    pub rows: Vec<ListRow>,
    /// Status line.
    pub status: String,
    /// Time of the top row (the scrollbar's value).
    pub top: Option<Time>,
}

impl ListPage {
    /// The page of `rows`, with its status line: how many events from when
    /// to when (marked filtered when `filtered`), "reading…" while the
    /// move is `pending`. While a move is under way the scrollbar stays
    /// where the user put it (`top` is `None`): setting it back to the
    /// rows shown would fight a drag.
    pub fn new(rows: Vec<ListRow>, filtered: bool, pending: bool, top: Option<Time>) -> Self {
        let filtered = if filtered { " (filtered)" } else { "" };
        let reading = if pending { " — reading…" } else { "" };
        let status = match (rows.first(), rows.last()) {
            (Some(a), Some(b)) => format!(
                "{} events from {} to {}{filtered}{reading}",
                rows.len(),
                format_time(a.time()),
                format_time(b.time()),
            ),
            _ if pending => "Reading…".to_string(),
            _ => "No event".to_string(),
        };
        ListPage {
            rows,
            status,
            top: if pending { None } else { top },
        }
    }
}

/// Data of a search request: the match found, and the time of the last
/// event read (its progress).
struct SearchData {
    found: Option<RowOrder>,
    read: Option<Time>,
}

/// A search under way: its request and expression, the backward search
/// it is a window of (`None`: forward), and where it started.
struct ActiveSearch {
    id: RequestId,
    filter: Arc<Filter>,
    back: Option<BackSearch>,
    origin: RowOrder,
    /// When its progress was last reported.
    reported: Option<Instant>,
}

/// How often a search's progress is reported: each report redraws the
/// search bar, a frame the reading waits for.
const SEARCH_PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The event list's model, on the main thread: the user's moves are
/// HIGH-priority requests on the tab's [`Session`], serviced by the tab's
/// idle source with the other viewers' (they preempt the LOW whole-trace
/// pass); the rows come back through [`ListModels::poll`].
pub struct ListModels {
    list: EventListModel,
    /// The list's filter expression.
    filter: Option<String>,
    /// The kernel pass's data, for the thread columns.
    threads: Option<Arc<KernelData>>,
}

impl ListModels {
    /// The list of `session`'s traceset, showing [`DEFAULT_PAGE`] rows;
    /// nothing is read yet.
    pub fn new(session: &mut Session) -> Self {
        ListModels {
            list: EventListModel::new(session, DEFAULT_PAGE),
            filter: None,
            threads: None,
        }
    }

    /// Begins a move of the event list; returns what it shows when the
    /// move was done at once (within the list's buffer).
    pub fn list_move(&mut self, session: &mut Session, mv: ListMove) -> Option<ListPage> {
        let pending = self.list.is_pending();
        let before = self.list.scrollbar_value();
        match mv {
            ListMove::ToTime(t) => self.list.start(session, Move::ToTime(t)),
            ListMove::LinesDown(n) => self.list.start(session, Move::LinesDown(n)),
            ListMove::LinesUp(n) => self.list.start(session, Move::LinesUp(n)),
            ListMove::PageDown => self.list.start(session, Move::PageDown),
            ListMove::PageUp => self.list.start(session, Move::PageUp),
            ListMove::Resize(n) => {
                let shown = self.list.rows().len();
                self.list.set_page_size(session, n);
                if !self.list.is_pending() && self.list.rows().len() != shown {
                    return Some(self.list_page());
                }
            }
        }
        // Done at once, or a move started: the status says it reads.
        (self.list.is_pending() != pending || self.list.scrollbar_value() != before)
            .then(|| self.list_page())
    }

    /// Gives the thread columns the kernel pass's latest data; returns
    /// the page to show again when it is new data.
    pub fn set_threads(&mut self, data: Option<Arc<KernelData>>) -> Option<ListPage> {
        let same = match (&self.threads, &data) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return None;
        }
        self.threads = data;
        (!self.list.is_pending()).then(|| self.list_page())
    }

    /// Whether a move is under way.
    pub fn reading(&self) -> bool {
        self.list.is_pending()
    }

    /// What changed in the list since the last call, after the session
    /// was serviced.
    pub fn poll(&mut self, session: &mut Session) -> Option<ListPage> {
        let pending = self.list.is_pending();
        let changed = self.list.poll(session);
        (changed || pending != self.list.is_pending()).then(|| self.list_page())
    }

    /// Sets the event list's filter expression (reloading at the top row).
    pub fn set_list_filter(
        &mut self,
        session: &mut Session,
        expr: Option<&str>,
    ) -> Result<ListPage, String> {
        self.list
            .set_filter(session, expr)
            .map_err(|e| e.to_string())?;
        self.filter = expr.map(str::to_owned);
        Ok(self.list_page())
    }

    /// What the event list shows.
    pub fn list_page(&self) -> ListPage {
        let threads = self.threads.as_deref();
        let rows: Vec<ListRow> = self
            .list
            .rows()
            .iter()
            .map(|r| list_row(r, threads))
            .collect();
        ListPage::new(
            rows,
            self.filter.is_some(),
            self.list.is_pending(),
            self.list.scrollbar_value(),
        )
    }
}

/// A time-graph job's result: the models it rendered from (built by the
/// job when the data was new) and the two renders.
type GraphResult = (
    Arc<(ControlFlowModel, ResourcesModel)>,
    TimeGraphRender,
    TimeGraphRender,
);

/// What a statistics render is made from.
enum StatsSource {
    /// The kernel pass's (whole trace) statistics.
    Whole(Arc<KernelData>),
    /// Statistics on their own: a selection's, from its range request, or
    /// the whole trace's read from the store ahead of its data.
    Range(Box<Statistics>),
}

/// The models of a tab behind the whole-trace work, and their pending
/// requests. They live on the main thread with the tab's [`Session`],
/// which the tab services from a GLib idle source; what cannot be chunked
/// (building the time-graph models of a snapshot, rendering the time
/// graphs and the statistics) runs as [`Job`]s on threads of their own.
pub struct TabModels {
    owner: OwnerId,
    /// The caches (analysis store, checkpoints) being read, at open.
    opening: Option<Job<Cached>>,
    /// The checkpoint cache, read after a stored analysis (which the views
    /// wait for, and the checkpoints only serve seeks).
    stored_checkpoints: Option<Job<Option<Checkpoints>>>,
    /// The checkpoint pass on its own thread, when the cache had no
    /// checkpoints: its checkpoints reach the scheduler as they come.
    checkpoints_ahead: Option<CheckpointsAhead>,
    /// The session has every checkpoint and the seek index (the cache's,
    /// or the checkpoint pass's once complete).
    checkpoints_complete: bool,
    /// Checkpoints read up to a zoom ahead of the pass's tail, when the
    /// tail carries the checkpoint pass on (it reads at the analysis'
    /// pace, a third of the checkpoint pass's): where they go to.
    checkpoints_to_zoom: Option<(Time, CheckpointsAhead)>,
    /// Writing the analysis store or the checkpoints: their warnings.
    saving: Vec<Job<Vec<String>>>,
    /// The analysis shown was read from the store.
    from_store: bool,
    /// The visible window analysed alone (HIGH priority) because the pass
    /// has not reached it yet: its request, or the job taking its
    /// snapshot, the window and how exact the analysis is.
    window_pass: Option<(TimeRange, WindowDetail, WindowPass)>,
    /// The result of the last window analysis, or what it has read so
    /// far.
    window_data: Option<WindowData>,
    /// A snapshot of the window analysis under way (what it has read so
    /// far, shown while it reads) being finished.
    window_partial: Option<Job<KernelData>>,
    /// When the last such snapshot was taken.
    window_partial_at: Option<Instant>,
    /// How far the pass has read (the time of its next event).
    pass_reached: Option<Time>,
    /// The whole-trace pass's request: all of it, or its head when
    /// `split` reads its tail.
    kernel_pass: Option<RequestId>,
    /// The pass's second half on a thread of its own.
    split: PassSplit,
    /// The user paused the whole-trace pass.
    paused: bool,
    /// The window shown is a preview whose exact analysis waits for the
    /// checkpoint pass to get there: the pass's tail lets it have the
    /// CPU.
    zoom_waits_for_checkpoints: bool,
    last_snapshot: Option<Instant>,
    /// Shortest interval between two snapshots of the pass (at least
    /// [`SNAPSHOT_INTERVAL`]; longer when frames are expensive).
    update_interval: Duration,
    /// The final snapshot of the completed kernel pass, taken (and the
    /// collector freed) on a thread: about 50 ms on a 1 GB trace; or the
    /// completed head waiting for the tail there, then joined to it (1 s
    /// on the 1 GB generated trace, 6 s on the 8 GB one, which the
    /// progress strip says: [`FINISHING`]); `None`: a damaged stream made
    /// the split pass give up.
    final_job: Option<Job<Option<KernelData>>>,
    /// A partial snapshot of the pass having its statistics merged on a
    /// thread (tens of ms on a trace of thousands of threads).
    snapshot_job: Option<Job<KernelData>>,
    /// Renders of the pass's latest snapshot held until the others of the
    /// same snapshot land, and since when ([`BACKGROUND_HOLD`]).
    held: Option<(Updates, Instant)>,
    data: Option<Arc<KernelData>>,
    /// Bumped whenever `data` changes.
    generation: u64,
    /// The time-graph models and the generation of the data they were
    /// built from (a graph job builds them): the pass's data's first, the
    /// window's own data's second (generations with the top bit set), so
    /// that going back and forth between the two rebuilds neither (tens
    /// of ms for thousands of threads).
    graphs: [Option<(u64, GraphModels)>; 2],
    /// A render of the time graphs under way, and what it renders.
    graph_job: Option<(Rendered, Job<GraphResult>)>,
    /// Whether that render also builds its models (it is then let finish
    /// even when the user moves on: the next render reuses them).
    graph_job_builds: bool,
    /// Whether the time-graph job renders a window preview.
    graph_job_preview: bool,
    /// Whether the time graphs' last render is of a window preview.
    shown_preview: bool,
    /// The store's statistics, read ahead of its data.
    stored_statistics: Option<Job<Option<Statistics>>>,
    /// The statistics shown are the store's, read ahead of its data.
    stats_read_ahead: bool,
    /// A statistics render under way, its caption, and when it started.
    stats_job: Option<(Job<CellTree>, String, Instant)>,
    /// Statistics renders started since the tab opened.
    stats_renders: u32,
    /// Time-graph renders started since the tab opened.
    graph_renders: u32,
    /// When the last statistics render ended, and how long it took.
    stats_render_ended: Option<(Instant, Duration)>,
    /// Statistics to render once the job under way is done (the latest
    /// wins).
    stats_next: Option<(StatsSource, String)>,
    /// Lost events of the traceset (marked on the histogram).
    lost: Vec<(Time, u64)>,
    /// Bins of the histogram last asked.
    histogram_bins: Option<u32>,
    /// Bins and data generation of the histogram last rendered.
    histogram_rendered: Option<(u32, u64)>,
    /// The selection's statistics under way (in parallel parts when the
    /// session has checkpoints in the range).
    stats_request: Option<(StatisticsTask, TimeRange)>,
    /// When the progress of `stats_request` was last reported.
    stats_progress_reported: Option<Instant>,
    /// The search under way.
    search_request: Option<ActiveSearch>,
    /// Window and widths asked last, to re-render when the kernel data
    /// arrives.
    window: Option<(TimeRange, u32, u32)>,
    selection: Option<TimeRange>,
    span: TimeRange,
    /// What the time graphs last rendered show.
    rendered: Option<Rendered>,
    /// The control flow's rows configuration (filter, order, collapsed
    /// processes, hidden idle threads, arrows).
    control_flow_rows: DataConfig,
    /// The control-flow rows in view (display indices).
    control_flow_shown: std::ops::Range<usize>,
    /// The whole trace's statistics shown are out of date.
    stats_dirty: bool,
    /// Damaged streams already reported (the session's errors before
    /// this index).
    damage_reported: usize,
    /// The messages of the damaged streams reported (the session's, and
    /// those recorded in the analysis shown), each shown once.
    damage_shown: HashSet<String>,
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
            opening: None,
            stored_checkpoints: None,
            checkpoints_ahead: None,
            checkpoints_complete: false,
            checkpoints_to_zoom: None,
            saving: Vec::new(),
            from_store: false,
            window_pass: None,
            window_data: None,
            window_partial: None,
            window_partial_at: None,
            pass_reached: None,
            kernel_pass: None,
            split: PassSplit::none(),
            paused: false,
            zoom_waits_for_checkpoints: false,
            last_snapshot: None,
            update_interval: SNAPSHOT_INTERVAL,
            final_job: None,
            snapshot_job: None,
            held: None,
            data: None,
            generation: 0,
            graphs: [None, None],
            graph_job: None,
            graph_job_builds: false,
            graph_job_preview: false,
            shown_preview: false,
            stored_statistics: None,
            stats_read_ahead: false,
            stats_job: None,
            stats_renders: 0,
            graph_renders: 0,
            stats_render_ended: None,
            stats_next: None,
            lost: lost_events(session.traceset()),
            histogram_bins: None,
            histogram_rendered: None,
            stats_request: None,
            stats_progress_reported: None,
            search_request: None,
            window: None,
            selection: None,
            span,
            rendered: None,
            control_flow_rows: DataConfig::default(),
            control_flow_shown: 0..64,
            stats_dirty: true,
            damage_reported: 0,
            damage_shown: HashSet::new(),
        }
    }

    /// Starts the whole-trace analysis: from the analysis store when it
    /// holds a valid one for these traces (read on a thread, with the
    /// checkpoint cache), otherwise by the LOW-priority pass, with a
    /// checkpoint pass on its own thread when the cache has none; both are
    /// cached once complete.
    pub fn start_background(&mut self, session: &mut Session) {
        if self.kernel_pass.is_some() || self.data.is_some() || self.opening.is_some() {
            return;
        }
        let Some(dir) = store::cache_dir() else {
            self.start_pass(session, false);
            return;
        };
        let traceset = session.traceset().clone();
        // The store's statistics are in its meta block, read in tens of ms
        // where the whole store takes hundreds: their tree starts while
        // the rest loads.
        let (d, ts) = (dir.clone(), traceset.clone());
        self.stored_statistics = Job::spawn_urgent("traceloom-stored-stats", move || {
            store::load_summary(&d, &TracesetIdentity::of(&ts))
                .ok()
                .map(|s| s.stats)
        })
        .ok();
        match Job::spawn("traceloom-caches", move || Cached::read(&dir, &traceset)) {
            Ok(j) => self.opening = Some(j),
            Err(_) => self.start_pass(session, false),
        }
    }

    /// Adds the kernel pass (and starts the checkpoint pass unless
    /// `have_checkpoints`).
    fn start_pass(&mut self, session: &mut Session, have_checkpoints: bool) {
        // The pass's finished chunks go to a spill file in the cache
        // directory, not the heap (tens of MB instead of hundreds on 1 GB).
        if let Some(dir) = store::cache_dir() {
            if std::fs::create_dir_all(&dir).is_ok() {
                session.set_spill_dir(Some(dir));
            }
        }
        let req = KernelAnalysis::request(session, self.owner);
        self.kernel_pass = Some(session.add(req));
        self.split = PassSplit::wanted();
        if !have_checkpoints {
            self.start_checkpoint_pass(session);
        }
    }

    /// Reads the whole-trace pass again, in one part: the split pass gave
    /// up (a damaged stream, whose bookkeeping follows the streams across
    /// the trace).
    fn restart_single_pass(&mut self, session: &mut Session) {
        // The tail that gave up carried the checkpoint pass on: it is read
        // again, from the start.
        let carried = self.split.carries_checkpoints();
        self.split.end();
        if carried && !self.checkpoints_complete {
            self.start_checkpoint_pass(session);
        }
        if let Some(id) = self.kernel_pass.take() {
            session.cancel(id);
        }
        // A join under way gives up with its tail.
        self.final_job = None;
        let req = KernelAnalysis::request(session, self.owner);
        let id = session.add(req);
        if self.paused {
            session.pause(id);
        }
        self.kernel_pass = Some(id);
        self.last_snapshot = None;
    }

    /// The caches read at open: checkpoints to the scheduler, and the
    /// stored analysis as the data, or the pass when there is none.
    fn poll_opening(&mut self, session: &mut Session, u: &mut Updates) -> Option<KernelData> {
        let state = self.opening.as_ref()?.try_take();
        let cached = match state {
            JobState::Running => return None,
            JobState::Done(c) => c,
            JobState::Failed => Cached::default(),
        };
        self.opening = None;
        let have_checkpoints = cached.checkpoints.is_some();
        let checkpoints = match cached.checkpoints {
            Some(c) => self.use_checkpoints(session, c),
            None => Vec::new(),
        };
        u.errors.extend(cached.warnings);
        let data = cached.data;
        if data.is_none() {
            self.start_pass(session, have_checkpoints);
            if let Some(id) = self.kernel_pass {
                let head = self.pass_position(session);
                self.split.offer(
                    session,
                    (id, head),
                    self.span,
                    &checkpoints,
                    None,
                    self.paused,
                );
            }
        }
        session.scheduler().add_checkpoints(checkpoints);
        match data {
            Some(d) => {
                self.from_store = true;
                // The checkpoints next; without them, they are built
                // alone in the background.
                let read = store::cache_dir().and_then(|dir| {
                    let traceset = session.traceset().clone();
                    Job::spawn("traceloom-checkpoints", move || {
                        Cached::read_checkpoints(&dir, &traceset)
                    })
                    .ok()
                });
                match read {
                    Some(job) => self.stored_checkpoints = Some(job),
                    None => self.start_checkpoint_pass(session),
                }
                Some(d)
            }
            None => None,
        }
    }

    /// Makes the cached checkpoints `c` serve the seeks; returns their
    /// states, for the scheduler.
    fn use_checkpoints(
        &mut self,
        session: &mut Session,
        c: Checkpoints,
    ) -> Vec<(CtfPosition, TracesetState)> {
        self.checkpoints_complete = true;
        let sched = session.scheduler();
        sched.source_mut().set_seek_index(Arc::new(c.seek_index));
        // The cache's serve the seeks: no second set of whole states.
        sched.set_checkpoint_interval(None);
        c.states
            .into_iter()
            .map(|c| (c.position, c.state))
            .collect()
    }

    /// The checkpoint cache read after a stored analysis: its checkpoints
    /// to the scheduler, or, when it has none, the checkpoint pass.
    fn poll_stored_checkpoints(&mut self, session: &mut Session) {
        let Some(job) = &self.stored_checkpoints else {
            return;
        };
        let read = match job.try_take() {
            JobState::Running => return,
            JobState::Done(c) => c,
            JobState::Failed => None,
        };
        self.stored_checkpoints = None;
        match read {
            Some(c) => {
                let states = self.use_checkpoints(session, c);
                session.scheduler().add_checkpoints(states);
            }
            None => self.start_checkpoint_pass(session),
        }
    }

    /// The checkpoint pass, on a thread of its own: it reads several
    /// times faster than the kernel pass, so that a zoom ahead of the
    /// analysis restores its state from a checkpoint near it.
    fn start_checkpoint_pass(&mut self, session: &mut Session) {
        let every = checkpoint_pass::interval(session.traceset());
        // Behind the main loop and its frames (with GL under Xvfb, the
        // frames wait for llvmpipe's threads, which this pass kept from a
        // core).
        match CheckpointsAhead::start(session.traceset(), every, crate::worker::lower_priority) {
            Ok(a) => {
                // Its checkpoints serve the seeks, and it is ahead of the
                // scheduler's own: those would be a second set of whole
                // states (31 MB on a 1 GB trace).
                session.scheduler().set_checkpoint_interval(None);
                self.checkpoints_ahead = Some(a);
            }
            Err(e) => eprintln!("traceloom: warning: cannot start the checkpoint pass: {e}"),
        }
    }

    /// The checkpoints made since the last poll serve this session's
    /// seeks at once; once the pass is complete, its seek index too, and
    /// all are cached (with the analysis when it is saved, alone
    /// otherwise).
    fn poll_checkpoints(&mut self, session: &mut Session) {
        // Kept once over: it says how far it got.
        if let Some((_, reader)) = &mut self.checkpoints_to_zoom {
            session.scheduler().add_checkpoints(reader.poll().0);
        }
        let head = self.pass_position(session);
        let Some(ahead) = &mut self.checkpoints_ahead else {
            return;
        };
        let (new, done) = ahead.poll();
        let over = ahead.is_over();
        if let Some(id) = self.kernel_pass {
            self.split.offer(
                session,
                (id, head),
                self.span,
                &new,
                Some(ahead),
                self.paused,
            );
        }
        let sched = session.scheduler();
        if !new.is_empty() {
            sched.add_checkpoints(new);
        }
        if over {
            self.checkpoints_ahead = None;
        }
        let Some(c) = done else {
            return;
        };
        self.checkpoints_complete = true;
        sched
            .source_mut()
            .set_seek_index(Arc::new(c.seek_index.clone()));
        // Cached at once, not with the analysis once the pass ends: the
        // scheduler holds its own copies of these states, and both sets
        // at once weighed 15 MB more on a 1 GB trace for most of the pass.
        self.save(session, None, Some(c));
    }

    /// When the pass's tail carries the checkpoint pass on, reads
    /// checkpoints from the last one before `to` up to `to`, unless that
    /// is under way: the checkpoint pass would have got there three times
    /// sooner than the tail will.
    fn read_checkpoints_to(&mut self, session: &Session, to: Time) {
        if !self.split.carries_checkpoints()
            || self
                .checkpoints_to_zoom
                .as_ref()
                .is_some_and(|(until, _)| *until == to)
        {
            return;
        }
        let Some((at, state)) = session
            .checkpoints()
            .take_while(|(p, _)| p.time < to)
            .last()
        else {
            return;
        };
        let every = checkpoint_pass::interval(session.traceset());
        match CheckpointsAhead::start_until(
            session.traceset(),
            every,
            (at, state.clone()),
            to,
            crate::worker::lower_priority,
        ) {
            Ok(r) => self.checkpoints_to_zoom = Some((to, r)),
            Err(e) => eprintln!("traceloom: warning: cannot read checkpoints ahead: {e}"),
        }
    }

    /// Writes the analysis store and the checkpoint cache on a thread.
    fn save(&mut self, session: &Session, data: Option<Arc<KernelData>>, cps: Option<Checkpoints>) {
        let Some(dir) = store::cache_dir() else {
            return;
        };
        let traceset = session.traceset().clone();
        let job = Job::spawn("traceloom-save", move || {
            let mut warnings = Vec::new();
            if let Some(d) = data {
                let identity = TracesetIdentity::of(&traceset);
                match store::save(&dir, &identity, &d) {
                    // Checked once settled, and recorded: reopening the
                    // trace then reads the record, not the whole store.
                    Ok((path, _)) => store::check_and_record_in_background(path),
                    Err(e) => warnings.push(format!("The analysis was not stored: {e}")),
                }
            }
            if let Some(c) = cps {
                if let Err(e) = checkpoint::save(&dir, &traceset, c) {
                    warnings.push(format!("The checkpoints were not stored: {e}"));
                }
            }
            warnings
        });
        match job {
            Ok(j) => self.saving.push(j),
            Err(e) => {
                eprintln!("traceloom: warning: cannot start a thread to store the analysis: {e}")
            }
        }
    }

    /// Spaces the snapshots of the pass by at least `d` (never less than
    /// [`SNAPSHOT_INTERVAL`]): each one redraws the views.
    pub fn set_update_interval(&mut self, d: Duration) {
        self.update_interval = d.max(SNAPSHOT_INTERVAL);
    }

    /// Pauses the whole-trace pass (the views keep the last partial data;
    /// [`resume_background`](Self::resume_background) goes on from there).
    pub fn pause_background(&mut self, session: &mut Session) {
        self.paused = true;
        self.split.set_waiting(true, false);
        if let Some(id) = self.kernel_pass {
            session.pause(id);
            // The views get everything read up to the pause at the next
            // poll.
            self.last_snapshot = None;
        }
    }

    /// Resumes the paused whole-trace pass from where it stopped.
    pub fn resume_background(&mut self, session: &mut Session) {
        self.paused = false;
        self.split
            .set_waiting(false, self.user_requests_pending(session));
        if let Some(id) = self.kernel_pass {
            session.resume(id);
        }
    }

    /// Whether the analysis shown was read from the analysis store.
    pub fn from_store(&self) -> bool {
        self.from_store
    }

    /// How many statistics trees were started since the tab opened.
    pub fn statistics_renders(&self) -> u32 {
        self.stats_renders
    }

    /// How many time-graph renders were started since the tab opened.
    pub fn time_graph_renders(&self) -> u32 {
        self.graph_renders
    }

    /// Whether the whole-trace pass is paused.
    pub fn background_paused(&self, session: &Session) -> bool {
        self.kernel_pass.is_some_and(|id| session.is_paused(id))
            || (self.paused && self.split.running())
    }

    /// Whether requests other than the pass's wait on the scheduler: the
    /// user's (a zoom's window, a list's page, a search, a selection's
    /// statistics), which the pass's tail lets go first.
    fn user_requests_pending(&self, session: &mut Session) -> bool {
        let head = self
            .kernel_pass
            .is_some_and(|id| !session.is_paused(id) && session.scheduler().request(id).is_some());
        session.scheduler().pending() > usize::from(head)
    }

    /// How far the whole-trace pass has read: the time of the event it
    /// goes on from.
    fn pass_position(&self, session: &mut Session) -> Option<Time> {
        let id = self.kernel_pass?;
        session.scheduler().request(id).map(|r| match &r.start {
            Start::Time(t) => *t,
            Start::Position(p) => p.time,
        })
    }

    /// Label and fraction of the background pass while it runs or is
    /// paused, and whether it is paused.
    pub fn background_progress(&mut self, session: &mut Session) -> Option<(String, f64, bool)> {
        if self.final_job.is_some() {
            // The views still show the pass's head until its parts are
            // joined.
            return Some((FINISHING.to_string(), 1.0, false));
        }
        let request = self.pass_position(session);
        if request.is_none() && !self.split.running() {
            return None;
        }
        let paused = self.background_paused(session);
        let read = self.split.read(request, self.span);
        let f = read as f64 / self.span.span().max(1) as f64;
        let pct = f.clamp(0.0, 1.0) * 100.0;
        let mut label = if paused {
            format!("Whole-trace analysis paused at {pct:.0} %: the views show the part read")
        } else {
            format!("Analysing the whole trace (state, statistics): {pct:.0} %")
        };
        if self.previewing() {
            label.push_str(" · this window is a preview: each row from its first event in it");
        }
        Some((label, f, paused))
    }

    /// Whether the whole-trace pass was split, its second half read on a
    /// thread of its own ([`PassSplit`]).
    pub fn pass_was_split(&self) -> bool {
        self.split.was_split()
    }

    /// Whether the time graphs' last render is of a window preview (read
    /// with no state, ahead of the analysis), not of an exact analysis.
    pub fn previewing(&self) -> bool {
        self.shown_preview
    }

    /// The kernel pass's data shown (the pass's latest snapshot, or the
    /// stored analysis).
    pub fn data(&self) -> Option<Arc<KernelData>> {
        self.data.clone()
    }

    /// Sets the control flow's rows configuration; the next poll renders
    /// the time graphs again with it.
    pub fn set_control_flow_rows(&mut self, rows: DataConfig) {
        self.control_flow_rows = rows;
    }

    /// Says which control-flow rows are in view: renders hold those and a
    /// page either side ([`ControlFlowModel::rows_with_margin`]); the next
    /// poll renders again if the last render does not hold them.
    pub fn request_control_flow_rows(&mut self, shown: std::ops::Range<usize>) {
        self.control_flow_shown = shown;
    }

    /// Asks for what `window` shows: time graphs at the given graph widths.
    pub fn request_window(&mut self, window: TimeRange, cf_width: u32, res_width: u32) {
        self.window = Some((window, cf_width.max(1), res_width.max(1)));
    }

    /// Whether a job (time-graph or statistics render, parallel
    /// statistics) is under way or waiting: the idle source keeps polling
    /// until its result lands.
    pub fn rendering(&self) -> bool {
        self.graph_job.is_some()
            || self.stats_job.is_some()
            || matches!(self.stats_request, Some((StatisticsTask::Parallel(_), _)))
            || self.stats_next.is_some()
            || self.final_job.is_some()
            || self.opening.is_some()
            || self.stored_checkpoints.is_some()
            || self.stored_statistics.is_some()
            || !self.saving.is_empty()
            || matches!(self.window_pass, Some((_, _, WindowPass::Snapshot(_))))
    }

    /// Asks for the whole trace's histogram in `bins` bins: a re-binning
    /// of the kernel pass's fine bins (which grow with the pass), never a
    /// read of the trace; done at the next poll.
    pub fn request_histogram(&mut self, bins: u32) {
        self.histogram_bins = Some(bins.max(1));
    }

    /// Asks for the statistics of `range` (the whole trace's when `None`).
    pub fn request_statistics(&mut self, session: &mut Session, range: Option<TimeRange>) {
        if let Some((task, _)) = self.stats_request.take() {
            session.cancel_statistics(task);
        }
        // A render of the previous selection's (or of the whole trace's)
        // is no longer wanted.
        self.stats_job = None;
        self.stats_next = None;
        self.selection = range;
        if let Some(r) = range {
            let names = self
                .data
                .as_ref()
                .map(|d| d.trace_names.clone())
                .unwrap_or_default();
            let task = session.start_statistics(self.owner, r.start, r.end, names);
            self.stats_request = Some((task, r));
            // The tab said it is being read: the first progress in a while.
            self.stats_progress_reported = Some(Instant::now());
        }
        self.stats_dirty = true;
    }

    /// Searches with `filter` from the origin of `search`: forward, the
    /// first match after it; backward, the last match before it, read
    /// window by window back from it ([`BackSearch`]).
    pub fn search(
        &mut self,
        session: &mut Session,
        filter: Filter,
        search: Search,
        span: TimeRange,
    ) {
        if let Some(active) = self.search_request.take() {
            session.cancel(active.id);
        }
        let filter = Arc::new(filter);
        let (start, end, back, origin) = match search {
            Search::Next(o) => (o.time, None, None, o),
            Search::Previous(o) => {
                let back = BackSearch {
                    anchor: o.time,
                    // A first window a few thousand events long on average.
                    offset: (span.span() as Time / 10_000).max(1_000),
                    end: o.time,
                };
                (back.window_start(), Some(back.end), Some(back), o)
            }
        };
        let id = session.add(search_request(
            self.owner,
            filter.clone(),
            SearchWindow { start, end, origin },
        ));
        self.search_request = Some(ActiveSearch {
            id,
            filter,
            back,
            origin,
            reported: None,
        });
    }

    /// A search's request completed: the match, or the next window of a
    /// backward search. While it runs, how far it has read.
    fn poll_search(&mut self, session: &mut Session, u: &mut Updates) {
        let Some(mut active) = self.search_request.take() else {
            return;
        };
        let Some(SearchData { found, .. }) = session.take::<SearchData>(active.id) else {
            if session.scheduler().request(active.id).is_some() {
                let due = active
                    .reported
                    .is_none_or(|t| t.elapsed() >= SEARCH_PROGRESS_EVERY);
                if due {
                    let read = session.peek::<SearchData>(active.id).and_then(|d| d.read);
                    u.search_progress = Some(search_progress(
                        active.back.as_ref(),
                        active.origin.time,
                        self.span,
                        read,
                    ));
                    active.reported = Some(Instant::now());
                }
                self.search_request = Some(active);
            } else {
                // Cancelled: no progress to show.
                u.search_progress = Some(0.0);
            }
            return;
        };
        match &mut active.back {
            Some(b) if found.is_none() && b.window_start() > self.span.start => {
                b.end = b.window_start().saturating_sub(1);
                b.offset = b.offset.saturating_mul(2);
                let (start, end) = (b.window_start(), b.end);
                active.id = session.add(search_request(
                    self.owner,
                    active.filter.clone(),
                    SearchWindow {
                        start,
                        end: Some(end),
                        origin: active.origin,
                    },
                ));
                self.search_request = Some(active);
            }
            _ => u.search = Some(found),
        }
    }

    /// Collects what completed since the last call, takes a snapshot of
    /// the kernel pass when one is due, and starts the jobs rendering what
    /// changed. Everything here is cheap (a snapshot of the kernel pass
    /// takes a few ms); the rest is done by the jobs.
    pub fn poll(&mut self, session: &mut Session) -> Updates {
        let mut u = Updates::default();

        // The kernel pass: complete, or a partial snapshot now and then.
        // No snapshot while a graph job runs: it would be superseded
        // before its models are built.
        let mut new_data = self.poll_opening(session, &mut u);
        self.poll_stored_checkpoints(session);
        self.poll_checkpoints(session);
        self.saving.retain(|job| match job.try_take() {
            JobState::Running => true,
            JobState::Done(w) => {
                for w in w {
                    eprintln!("traceloom: warning: {w}");
                }
                false
            }
            JobState::Failed => false,
        });
        if self.split.failed() || (self.split.running() && !session.errors().is_empty()) {
            self.restart_single_pass(session);
        }
        if let Some(id) = self.kernel_pass {
            if let Some(mut c) = session.take::<KernelCollector>(id) {
                self.kernel_pass = None;
                c.set_damage(StreamDamage::all(session.errors()));
                if self.split.running() && self.split.snapshots_shown() {
                    // The views show the whole head while the tail reads
                    // on.
                    let partial = c.snapshot_deferred();
                    if let Ok(j) = Job::spawn("traceloom-snapshot", move || partial.finish()) {
                        self.snapshot_job = Some(j);
                    }
                }
                let job = match self.split.completed(session, self.owner, self.span, c) {
                    Completed::ReadOn(id) => {
                        self.kernel_pass = Some(id);
                        if self.paused {
                            session.pause(id);
                        }
                        None
                    }
                    Completed::Join(join) => Some(Job::spawn("traceloom-final", join)),
                };
                match job {
                    None => {}
                    Some(Ok(j)) => {
                        self.final_job = Some(j);
                        // The joined data will need models of its own
                        // (a render meanwhile builds them again).
                        self.free_graph_models(0);
                    }
                    Some(Err(e)) => u.errors.push(format!(
                        "cannot start a thread for the whole-trace analysis' result: {e}"
                    )),
                }
            } else if session.is_complete(id) {
                self.kernel_pass = None;
                u.errors
                    .push("the whole-trace analysis ended without data".into());
            } else if self.graph_job.is_none()
                && self.snapshot_job.is_none()
                && self.split.snapshots_shown()
                && self
                    .last_snapshot
                    .is_none_or(|t| t.elapsed() >= self.update_interval)
            {
                let damage = StreamDamage::all(session.errors());
                if let Some(c) = session.peek::<KernelCollector>(id) {
                    c.set_damage(damage);
                    let partial = stalls::time("tab:snapshot", || c.snapshot_deferred());
                    self.last_snapshot = Some(Instant::now());
                    match Job::spawn("traceloom-snapshot", move || partial.finish()) {
                        Ok(j) => self.snapshot_job = Some(j),
                        Err(e) => u
                            .errors
                            .push(format!("cannot start a thread for a snapshot: {e}")),
                    }
                }
            }
        }
        if let Some(job) = &self.snapshot_job {
            match job.try_take() {
                JobState::Running => {}
                JobState::Done(d) => {
                    self.snapshot_job = None;
                    // A partial snapshot that lands after the final data
                    // would show less than it.
                    if self.kernel_pass.is_some() || self.final_job.is_some() {
                        new_data = Some(d);
                    } else {
                        drop_later(d);
                    }
                }
                JobState::Failed => self.snapshot_job = None,
            }
        }
        if let Some(job) = &self.final_job {
            match job.try_take() {
                JobState::Running => {}
                JobState::Done(None) => self.restart_single_pass(session),
                JobState::Done(Some(d)) => {
                    self.final_job = None;
                    self.split.end();
                    // A snapshot of the pass's head that landed in this
                    // same poll holds less than the complete analysis:
                    // shown after it, it would stay (a small trace's
                    // views kept the head's half).
                    if let Some(partial) = new_data.take() {
                        drop_later(partial);
                    }
                    let d = Arc::new(d);
                    // The complete analysis goes to the store: the next
                    // open is immediate.
                    self.save(session, Some(d.clone()), None);
                    self.set_data(d);
                }
                JobState::Failed => {
                    self.final_job = None;
                    u.errors
                        .push("the whole-trace analysis' final snapshot failed".into());
                }
            }
        }
        if let Some(d) = new_data {
            self.set_data(Arc::new(d));
        }

        // Once the head is done, its data (the snapshot taken then)
        // covers up to the tail's start.
        let request = self.pass_position(session);
        self.pass_reached = self.split.covered(request);
        self.poll_window_pass(session);
        // A zoom waiting for checkpoints makes the tail wait (they share a
        // core), unless the tail makes them and nothing else reads ahead.
        let reading_to_zoom = self
            .checkpoints_to_zoom
            .as_ref()
            .is_some_and(|(_, r)| !r.is_over());
        let zoom_waits = self.zoom_waits_for_checkpoints
            && (!self.split.carries_checkpoints() || reading_to_zoom);
        let user_waits = self.user_requests_pending(session) || zoom_waits;
        self.split.set_waiting(self.paused, user_waits);
        let moved = self.poll_graphs(&mut u);
        self.poll_histogram(&mut u);
        self.poll_statistics(session, &mut u);
        self.hold_background(&mut u, moved);

        self.poll_search(session, &mut u);
        self.poll_damage(session, &mut u);
        u
    }

    /// While the pass runs, the renders of one snapshot (time graphs,
    /// histogram, statistics: separate jobs) are shown together, so that
    /// they cost the window one frame, not one each (with a software GL
    /// renderer a frame of a large window blocks the main thread for tens
    /// of ms). A render that follows the user (`moved`: another window or
    /// rows) is never held.
    fn hold_background(&mut self, u: &mut Updates, moved: bool) {
        let running = self.kernel_pass.is_some() || self.final_job.is_some();
        let renders = Updates {
            control_flow: u.control_flow.take(),
            resources: u.resources.take(),
            histogram: u.histogram.take(),
            statistics: u.statistics.take(),
            ..Updates::default()
        };
        if renders.is_empty() && self.held.is_none() {
            return;
        }
        let (held, since) = self
            .held
            .get_or_insert_with(|| (Updates::default(), Instant::now()));
        held.merge(renders);
        let pending = self.graph_job.is_some()
            || self.stats_job.is_some()
            || self.stats_next.is_some()
            || self.snapshot_job.is_some();
        if !running || moved || !pending || since.elapsed() >= BACKGROUND_HOLD {
            if let Some((held, _)) = self.held.take() {
                u.merge(held);
            }
        }
    }

    /// Makes `d` the data the views show.
    fn set_data(&mut self, d: Arc<KernelData>) {
        // The previous snapshot may hold the last reference to a large data
        // set: freed off the main loop.
        if let Some(old) = self.data.replace(d) {
            drop_later(old);
        }
        self.generation += 1;
        // The store's data after its statistics (read ahead, shown): the
        // same statistics, not to be made again.
        let shown = std::mem::take(&mut self.stats_read_ahead) && self.from_store;
        if self.selection.is_none() && !shown {
            self.stats_dirty = true;
        }
    }

    /// Reports the damaged streams the session met since the last poll
    /// (each once: file and byte offset), for the window's info bar: the
    /// views show what was read before the damage, and must say so.
    /// The analysis shown may come from a pass that met damage this
    /// session did not read (an analysis store): its damage is reported
    /// too.
    fn poll_damage(&mut self, session: &Session, u: &mut Updates) {
        let errors = session.errors();
        let fresh = errors
            .iter()
            .skip(self.damage_reported)
            .map(|e| e.to_string());
        self.damage_reported = errors.len();
        let recorded = self
            .data
            .iter()
            .flat_map(|d| d.damage.iter())
            .filter(|d| !self.damage_shown.contains(&d.message))
            .map(|d| d.message.clone());
        let new: Vec<String> = fresh.chain(recorded).collect();
        for e in new {
            if self.damage_shown.insert(e.clone()) {
                u.errors
                    .push(format!("Damaged trace, shown up to the damage: {e}"));
            }
        }
    }

    /// Frees the models of `slot` (see `graphs`) before new ones are
    /// built: the older data's models, and the snapshot they hold, alive
    /// until the new ones land were the window's peak of memory on a
    /// trace of many threads.
    fn free_graph_models(&mut self, slot: usize) {
        if let Some((_, old)) = self.graphs[slot].take() {
            drop_later(old);
        }
    }

    /// Collects a time-graph job's result, and starts one when the window
    /// or the data changed since the last render.
    fn poll_graphs(&mut self, u: &mut Updates) -> bool {
        let mut moved = false;
        if let Some((what, job)) = &self.graph_job {
            let what = what.clone();
            match job.try_take() {
                // A render of another window than the one now wanted is
                // left to finish on its own (its result dropped there):
                // the user waits for the new one, not for it.
                JobState::Running
                    if !self.graph_job_builds
                        && self.window.is_some_and(|w| w != what.shows.window) =>
                {
                    self.graph_job = None;
                }
                JobState::Running => return false,
                JobState::Done((graphs, cf, res)) => {
                    self.shown_preview = self.graph_job_preview;
                    u.control_flow = Some(Arc::new(cf));
                    u.resources = Some(Arc::new(res));
                    let slot = &mut self.graphs[graph_slot(what.shows.generation)];
                    if slot
                        .as_ref()
                        .is_none_or(|(g, _)| *g < what.shows.generation)
                    {
                        if let Some((_, old)) = slot.replace((what.shows.generation, graphs)) {
                            drop_later(old);
                        }
                    } else {
                        drop_later(graphs);
                    }
                }
                JobState::Failed => {
                    // Not retried: the same render would fail again.
                    u.errors.push("rendering the time graphs failed".into());
                }
            }
            moved = self
                .rendered
                .as_ref()
                .is_none_or(|before| moved_from(&what, before));
            self.rendered = Some(what);
            self.graph_job = None;
        }
        let Some(w) = self.window else { return moved };
        // The window analysed alone when the pass has not reached it, else
        // the pass's data.
        let covered = self.covers(w.0);
        let (generation, data) = match (&self.window_data, &self.data) {
            (Some(d), _) if d.range == w.0 && !covered => (d.generation, d.data.clone()),
            // The window's own pass is under way: the pass's data has
            // nothing there, and a render of it would take a core from
            // that pass.
            _ if !covered && self.window_pass.as_ref().is_some_and(|(r, _, _)| *r == w.0) => {
                return moved
            }
            (_, Some(d)) => (self.generation, d.clone()),
            _ => return moved,
        };
        let rows = self.control_flow_rows.clone();
        let shown = self.control_flow_shown.clone();
        let held = ControlFlowModel::rows_with_margin(shown.clone());
        let what = Rendered {
            shows: Shows {
                window: w,
                generation,
                rows: rows.fingerprint(),
            },
            rows: held.clone(),
        };
        if self
            .rendered
            .as_ref()
            .is_some_and(|r| r.serves(&what.shows, &shown))
        {
            return moved;
        }
        // Models of the current data are reused; else the job builds them
        // (tens of ms on a trace of thousands of threads).
        let built = self.graphs[graph_slot(generation)]
            .as_ref()
            .filter(|(g, _)| *g == generation)
            .map(|(_, m)| m.clone());
        let has_models = built.is_some();
        if !has_models {
            self.free_graph_models(graph_slot(generation));
        }
        // A render the user waits for (another window or rows, or the
        // window's own data) runs at their priority; one that only follows
        // the pass's growth, at the background's.
        let follows_user = graph_slot(generation) == 1
            || self
                .rendered
                .as_ref()
                .is_none_or(|before| moved_from(&what, before));
        let render = move || {
            let graphs = built.unwrap_or_else(|| {
                Arc::new((
                    ControlFlowModel::new(data.clone()),
                    ResourcesModel::new(data),
                ))
            });
            let (window, cfw, rw) = w;
            let cf = graphs.0.render_rows_with(&rows, window, cfw, Some(held));
            let res = graphs.1.render(window, rw);
            (graphs, cf, res)
        };
        let job = if follows_user {
            Job::spawn_urgent("traceloom-render", render)
        } else {
            Job::spawn("traceloom-render", render)
        };
        match job {
            Ok(j) => {
                self.graph_renders += 1;
                self.graph_job = Some((what, j));
                self.graph_job_builds = !has_models;
                self.graph_job_preview = self.window_data.as_ref().is_some_and(|d| {
                    d.generation == generation && d.detail == WindowDetail::Preview
                });
            }
            Err(e) => {
                self.rendered = Some(what);
                u.errors.push(format!("cannot start a render thread: {e}"));
            }
        }
        moved
    }

    /// Whether the whole-trace data covers `window`: the pass is complete
    /// (or the data came from the store), or it has read past its end.
    fn covers(&self, window: TimeRange) -> bool {
        if self.data.is_some()
            && self.kernel_pass.is_none()
            && self.final_job.is_none()
            && self.opening.is_none()
        {
            return true;
        }
        self.pass_reached.is_some_and(|t| t >= window.end)
    }

    /// The visible window when the pass has not reached it (and it is at
    /// most a quarter of the trace: a wider one is the pass's work):
    /// analysed alone by HIGH requests, so that a zoom shows its detail
    /// at once: first previewed with no state
    /// ([`KernelAnalysis::window_preview_request`]: a seek by time, no
    /// replay, rows from their first telling event), then, once the
    /// checkpoint pass has been there, from the nearest checkpoint
    /// (exact). Each is shown as it reads (snapshots every
    /// [`WINDOW_PARTIAL_EVERY`]) until a complete one is, instead of the
    /// pass's data until the pass gets there.
    fn poll_window_pass(&mut self, session: &mut Session) {
        if let Some((r, detail, WindowPass::Reading(id))) = &self.window_pass {
            let (r, detail, id) = (*r, *detail, *id);
            let snapshot = match detail {
                WindowDetail::Preview => session
                    .take::<WindowPreview>(id)
                    .map(|p| Job::spawn_urgent("traceloom-window", move || p.into_data())),
                WindowDetail::Exact => session
                    .take::<KernelCollector>(id)
                    .map(|c| Job::spawn_urgent("traceloom-window", move || c.into_data())),
            };
            match snapshot {
                Some(Ok(j)) => self.window_pass = Some((r, detail, WindowPass::Snapshot(j))),
                Some(Err(_)) => self.window_pass = None,
                None if session.scheduler().request(id).is_none() => self.window_pass = None,
                None => self.window_partial_snapshot(session, detail, id),
            }
        }
        if let Some((r, detail, WindowPass::Snapshot(job))) = &self.window_pass {
            let (r, detail) = (*r, *detail);
            match job.try_take() {
                JobState::Running => {}
                JobState::Done(d) => {
                    self.window_pass = None;
                    self.window_partial = None;
                    self.set_window_data(r, d, detail, true);
                }
                JobState::Failed => self.window_pass = None,
            }
        }
        if let Some(job) = &self.window_partial {
            match job.try_take() {
                JobState::Running => {}
                JobState::Done(d) => {
                    self.window_partial = None;
                    // Only while its analysis reads, and when nothing
                    // complete is shown there: a snapshot landing after
                    // the complete data, or replacing a complete preview,
                    // would show less than it.
                    let reading = match self.window_pass {
                        Some((r, detail, WindowPass::Reading(_))) => Some((r, detail)),
                        _ => None,
                    };
                    let shown_complete = |r: TimeRange| {
                        self.window_data
                            .as_ref()
                            .is_some_and(|w| w.complete && w.range == r)
                    };
                    if let Some((r, detail)) = reading.filter(|(r, _)| !shown_complete(*r)) {
                        self.set_window_data(r, d, detail, false);
                    } else {
                        drop_later(d);
                    }
                }
                JobState::Failed => self.window_partial = None,
            }
        }
        self.zoom_waits_for_checkpoints = false;
        let Some((w, _, _)) = self.window else { return };
        if self.covers(w) || w.span() > self.span.span() / 4 {
            return;
        }
        // Something under way for this window: wait for it.
        if self.window_pass.as_ref().is_some_and(|(r, _, _)| *r == w) {
            return;
        }
        let shown = self
            .window_data
            .as_ref()
            .filter(|d| d.complete && d.range == w)
            .map(|d| d.detail);
        // A seek's replay is not interrupted: ahead of every checkpoint, it
        // would hold the main loop for as long as reading up to the window
        // takes. The window is first previewed (no replay: detail after the
        // first chunk read), then, once the checkpoint pass (several times
        // faster than the analysis) has been there, analysed exactly.
        let reached = |a: &CheckpointsAhead| a.reached().is_some_and(|t| t >= w.start);
        let replay_bounded = match &self.checkpoints_ahead {
            Some(a) => {
                reached(a)
                    || self
                        .checkpoints_to_zoom
                        .as_ref()
                        .is_some_and(|(_, r)| reached(r))
            }
            None => true,
        };
        let wanted = match shown {
            None => WindowDetail::Preview,
            Some(WindowDetail::Preview) if replay_bounded => WindowDetail::Exact,
            Some(WindowDetail::Preview) => {
                self.zoom_waits_for_checkpoints = true;
                self.read_checkpoints_to(session, w.start);
                return;
            }
            Some(_) => return,
        };
        if let Some((_, _, WindowPass::Reading(id))) = self.window_pass.take() {
            session.cancel(id);
        }
        self.window_partial = None;
        self.window_partial_at = None;
        let req = match wanted {
            WindowDetail::Preview => KernelAnalysis::window_preview_request(session, self.owner, w),
            WindowDetail::Exact => KernelAnalysis::window_request(session, self.owner, w),
        };
        self.window_pass = Some((w, wanted, WindowPass::Reading(session.add(req))));
    }

    /// While the window's analysis `id` (`detail`) reads: a
    /// snapshot of what it read so far, at its first poll with events
    /// read and then every [`WINDOW_PARTIAL_EVERY`], so that a zoom shows
    /// detail after the analysis' first chunk, not after its last.
    fn window_partial_snapshot(
        &mut self,
        session: &mut Session,
        detail: WindowDetail,
        id: RequestId,
    ) {
        if self.window_partial.is_some()
            || self
                .window_partial_at
                .is_some_and(|t| t.elapsed() < WINDOW_PARTIAL_EVERY)
        {
            return;
        }
        let partial = match detail {
            WindowDetail::Preview => session
                .peek::<WindowPreview>(id)
                .filter(|p| p.events() > 0)
                .map(WindowPreview::snapshot_deferred),
            WindowDetail::Exact => session
                .peek::<KernelCollector>(id)
                .filter(|c| c.progress().0 > 0)
                .map(KernelCollector::snapshot_deferred),
        };
        let Some(partial) = partial else { return };
        if let Ok(j) = Job::spawn_urgent("traceloom-window", move || partial.finish()) {
            self.window_partial = Some(j);
            self.window_partial_at = Some(Instant::now());
        }
    }

    /// Shows `data`, the analysis of `window` alone (complete, or what it
    /// read so far).
    fn set_window_data(
        &mut self,
        window: TimeRange,
        data: KernelData,
        detail: WindowDetail,
        complete: bool,
    ) {
        // Generations of window data have the top bit set: never those of
        // the pass's data (the models built from one must not be reused
        // for the other).
        let generation = (1 << 63) | self.window_data.as_ref().map_or(0, |w| w.generation + 1);
        if let Some(old) = self.window_data.replace(WindowData {
            range: window,
            generation,
            data: Arc::new(data),
            detail,
            complete,
        }) {
            drop_later(old.data);
        }
    }

    /// The histogram, re-binned from the kernel data's fine bins when the
    /// data or the bins changed (at most once per snapshot: well under a
    /// millisecond for 65,536 fine bins).
    fn poll_histogram(&mut self, u: &mut Updates) {
        let (Some(bins), Some(data)) = (self.histogram_bins, &self.data) else {
            return;
        };
        if self.histogram_rendered == Some((bins, self.generation)) {
            return;
        }
        self.histogram_rendered = Some((bins, self.generation));
        let r = stalls::time("tab:histogram", || {
            data.histogram.render(self.span, bins, &self.lost)
        });
        u.histogram = Some(Arc::new(r));
    }

    /// The store's statistics, read ahead, when they are to be shown:
    /// before any data, with no selection.
    fn poll_stored_statistics(&mut self) -> Option<Statistics> {
        let stats = match self.stored_statistics.as_ref()?.try_take() {
            JobState::Running => return None,
            JobState::Done(s) => s,
            JobState::Failed => None,
        };
        self.stored_statistics = None;
        let stats = stats.filter(|_| self.data.is_none() && self.selection.is_none())?;
        self.stats_read_ahead = true;
        // They are the whole trace's: the store's data, when it comes,
        // has the same ones (a tree of an 8 GB trace's: 0.3 s of a core,
        // made twice at each reopen before).
        self.stats_dirty = false;
        Some(stats)
    }

    /// Whether the statistics that follow the pass wait before their next
    /// render: for [`STATS_REST`] times as long as the last render took
    /// (from its end). On a large trace a render takes a good part of a
    /// second (the tree of an 8 GB trace's 239,000 cells: 0.3 s), and one
    /// started at every snapshot would keep a core busy for the whole
    /// pass; on a small one it takes milliseconds and nothing waits.
    fn stats_render_resting(&self) -> bool {
        self.kernel_pass.is_some()
            && self
                .stats_render_ended
                .is_some_and(|(ended, took)| ended.elapsed() < took * STATS_REST)
    }

    /// Statistics: the selection's when one is asked, else the whole
    /// trace's (read ahead from the store, or from the kernel pass);
    /// rendered by a job.
    fn poll_statistics(&mut self, session: &mut Session, u: &mut Updates) {
        if let Some((task, r)) = &mut self.stats_request {
            let r = *r;
            let due = self
                .stats_progress_reported
                .is_none_or(|t| t.elapsed() >= STATS_PROGRESS_EVERY);
            if due {
                u.statistics_pending = Some(reading_caption(r, Some(task.progress(session))));
                self.stats_progress_reported = Some(Instant::now());
            }
            if let Some(s) = session.poll_statistics(task) {
                self.stats_request = None;
                self.stats_dirty = false;
                self.stats_next = Some((
                    StatsSource::Range(Box::new(s)),
                    format!("Statistics of {}", selection_text(r)),
                ));
            }
        } else if let Some(stats) = self.poll_stored_statistics() {
            self.stats_next = Some((
                StatsSource::Range(Box::new(stats)),
                "Statistics of the whole trace".to_string(),
            ));
        } else if self.stats_dirty && self.selection.is_none() && !self.stats_render_resting() {
            if let Some(d) = &self.data {
                let partial = if self.kernel_pass.is_some() || self.final_job.is_some() {
                    " (so far)"
                } else {
                    ""
                };
                self.stats_next = Some((
                    StatsSource::Whole(d.clone()),
                    format!("Statistics of the whole trace{partial}"),
                ));
                // A new snapshot (or the final data) makes them dirty
                // again; re-rendering the same data on every poll would
                // cost tens of ms each time.
                self.stats_dirty = false;
            }
        }
        if let Some((job, _, _)) = &self.stats_job {
            match job.try_take() {
                JobState::Running => return,
                JobState::Done(r) => {
                    if let Some((_, caption, started)) = self.stats_job.take() {
                        u.statistics = Some((Arc::new(r) as Arc<dyn StatisticsTree>, caption));
                        self.stats_render_ended = Some((Instant::now(), started.elapsed()));
                    }
                }
                JobState::Failed => {
                    self.stats_job = None;
                    u.errors.push("rendering the statistics failed".into());
                }
            }
        }
        if let Some((source, caption)) = self.stats_next.take() {
            // Statistics that follow the pass's growth are the
            // background's; the complete analysis' and a selection's are
            // what the user waits for.
            let urgent = self.kernel_pass.is_none() || matches!(source, StatsSource::Range(_));
            let render = move || match source {
                StatsSource::Whole(d) => CellTree::new(&d.stats),
                StatsSource::Range(s) => CellTree::new(&s),
            };
            let job = if urgent {
                Job::spawn_urgent("traceloom-stats", render)
            } else {
                Job::spawn("traceloom-stats", render)
            };
            match job {
                Ok(j) => {
                    self.stats_job = Some((j, caption, Instant::now()));
                    self.stats_renders += 1;
                }
                Err(e) => u.errors.push(format!("cannot start a render thread: {e}")),
            }
        }
    }
}

/// A backward search under way: the windows before `anchor` are read one
/// at a time, each twice as long as the one after it, until one holds a
/// match (the last match of that window is the answer) or the trace start
/// is reached — never the whole trace from its start.
#[derive(Clone, Copy)]
struct BackSearch {
    anchor: Time,
    offset: Time,
    /// Last time of the next window (inclusive).
    end: Time,
}

impl BackSearch {
    fn window_start(&self) -> Time {
        self.anchor.saturating_sub(self.offset)
    }
}

/// How often the window's analysis under way is shown as it reads.
const WINDOW_PARTIAL_EVERY: Duration = Duration::from_millis(50);

/// What the time graphs draw of a window the pass has not reached: its
/// own analysis.
struct WindowData {
    range: TimeRange,
    /// Generation of the data (top bit set: see `set_window_data`).
    generation: u64,
    data: Arc<KernelData>,
    detail: WindowDetail,
    /// The analysis read the whole window (else what it read so far).
    complete: bool,
}

/// How exact a window analysed alone is (ordered: exact is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum WindowDetail {
    /// Read with no state, ahead of every checkpoint: rows from their
    /// first telling event, modes unknown until they are left.
    Preview,
    /// From the nearest checkpoint's state: what the pass will draw.
    Exact,
}

/// A window analysed alone: its request, then the job taking its
/// snapshot.
enum WindowPass {
    Reading(RequestId),
    Snapshot(Job<KernelData>),
}

/// What the caches hold for a traceset when its tab opens.
#[derive(Default)]
struct Cached {
    /// The stored analysis, when valid for the traces as they are.
    data: Option<KernelData>,
    /// The cached checkpoints and seek index, when valid.
    checkpoints: Option<Checkpoints>,
    /// Why a store was not used, for the info bar (a damaged one: it is
    /// rebuilt).
    warnings: Vec<String>,
}

impl Cached {
    /// Reads the analysis store of `traceset` in `dir`, and when there is
    /// none its checkpoint cache (a missing one is no warning; a stale
    /// one is expected after the traces changed, reported on stderr
    /// only). With a store, the checkpoints are read after it
    /// ([`Cached::read_checkpoints`]): the views wait for the store.
    fn read(dir: &Path, traceset: &Arc<Traceset>) -> Cached {
        let mut c = Cached::default();
        match store::load(dir, &TracesetIdentity::of(traceset)) {
            Ok(l) => c.data = Some(l.data),
            Err(StoreError::Missing(_)) => {}
            Err(e @ StoreError::Stale { .. }) => {
                eprintln!("traceloom: warning: {e}; analysing again");
            }
            Err(e) => c.warnings.push(format!(
                "The analysis store is unusable ({e}): analysing again"
            )),
        }
        if c.data.is_none() {
            c.checkpoints = Cached::read_checkpoints(dir, traceset);
        }
        c
    }

    /// The checkpoint cache of `traceset` in `dir`, when valid.
    fn read_checkpoints(dir: &Path, traceset: &Arc<Traceset>) -> Option<Checkpoints> {
        let fp = checkpoint::fingerprint(traceset);
        checkpoint::load_at_most(
            &checkpoint::cache_path(dir, fp),
            fp,
            checkpoint::LOADED_AT_MOST,
        )
        .ok()
    }
}

/// How far a search from `origin` (backward: `back`) has read, from 0 to
/// 1, when the last event it read is at `read`: forward, of the way from
/// its origin to the trace's end; backward, of the way from its origin
/// back to the trace's start (the windows after the current one, and this
/// one as far as `read`).
fn search_progress(
    back: Option<&BackSearch>,
    origin: Time,
    span: TimeRange,
    read: Option<Time>,
) -> f64 {
    let fraction = |done: i128, whole: i128| {
        if whole <= 0 {
            0.0
        } else {
            (done as f64 / whole as f64).clamp(0.0, 1.0)
        }
    };
    let origin = origin as i128;
    match (back, read) {
        (None, Some(t)) => fraction(t as i128 - origin, span.end as i128 - origin),
        (None, None) => 0.0,
        (Some(b), read) => {
            // Windows are read oldest first, from the window's start.
            let start = b.window_start() as i128;
            let window = (b.end as i128 - start).max(0);
            let within = read.map_or(0, |t| (t as i128 - start).clamp(0, window));
            let whole = origin - span.start as i128;
            // The windows after this one cover (b.end, origin].
            fraction(origin - b.end as i128 + within, whole)
        }
    }
}

/// What a search's request reads: forward (`end` `None`) from `start`
/// on, backward the window `[start, end]`; a match must come after the
/// search's origin forward, before it backward.
struct SearchWindow {
    start: Time,
    end: Option<Time>,
    origin: RowOrder,
}

/// An event's place in the list's reading order ([`CtfPosition`]'s order:
/// the stream's rank and the stream each fit 32 bits).
pub fn row_order(p: &CtfPosition) -> RowOrder {
    RowOrder {
        time: p.time,
        tie: [
            (u64::from(p.rank) << 32) | u64::from(p.stream),
            p.packet,
            p.event_index,
        ],
    }
}

/// The request looking for the first match of `filter` after the origin
/// (forward), or for the last match before it in the window (backward).
fn search_request(owner: OwnerId, filter: Arc<Filter>, window: SearchWindow) -> KernelRequest {
    let SearchWindow { start, end, origin } = window;
    let stop_at_first = end.is_none();
    let mut req = KernelRequest::new(
        owner,
        Start::Time(start),
        Box::new(SearchData {
            found: None,
            read: None,
        }) as Payload,
    );
    req.priority = Priority::HIGH;
    req.end_time = end;
    // As the event list reads: an expression that does not read the state
    // spares the replay to the start and the state hooks (a search with no
    // match reads the rest of the trace), and most events are decided by
    // their name alone.
    let needs_state = filter.needs_state();
    req.needs_state = needs_state;
    req.event.add(Priority::DEFAULT, move |ctx| {
        let Some(ev) = ctx.event.event() else {
            return Flow::Continue;
        };
        let Some(data) = ctx.data.downcast_mut::<SearchData>() else {
            return Flow::Stop;
        };
        data.read = ev.timestamp_ns();
        let order = row_order(ctx.position);
        let beyond = if stop_at_first {
            order <= origin
        } else {
            order >= origin
        };
        if beyond || !event_matches(&filter, needs_state, &ev, ctx.state) {
            return Flow::Continue;
        }
        data.found = Some(order);
        if stop_at_first {
            Flow::Stop
        } else {
            Flow::Continue
        }
    });
    req
}

/// A list row of the model's `row`: time, CPU and trace, thread, process
/// and its name (from the event's context, else what the kernel pass
/// knows the CPU ran then: blank where it has not been yet), event name,
/// fields.
pub fn list_row(row: &EventRow, threads: Option<&KernelData>) -> ListRow {
    // The CPU first: the column is narrow, and the trace's name, the same
    // on every row of a one-trace tab, is what its ellipsis may hide.
    let cpu_trace = match row.cpu {
        Some(c) => format!("CPU {c} · {}", row.trace),
        None => row.trace.to_string(),
    };
    let ctx = &row.context_thread;
    let ran = match (ctx.tid, row.cpu, threads) {
        (None, Some(cpu), Some(d)) => d.thread_at(row.trace_index, cpu as u32, row.time),
        _ => None,
    };
    let text = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    ListRow {
        order: row_order(&row.position),
        columns: [
            format_time(row.time),
            cpu_trace,
            text(ctx.tid.or(ran.map(|t| t.tid))),
            text(ctx.pid.or(ran.map(|t| t.pid))),
            ctx.name
                .clone()
                .or_else(|| ran.map(|t| t.name.clone()))
                .map(|n| n.to_string())
                .unwrap_or_default(),
            row.name.to_string(),
            row.fields.clone(),
        ],
    }
}

/// The time graphs' models of one data set.
type GraphModels = Arc<(ControlFlowModel, ResourcesModel)>;

/// Which of [`TabModels`]' two model slots the data of `generation`
/// builds: the pass's (0) or the visible window's own (1, top bit set).
fn graph_slot(generation: u64) -> usize {
    (generation >> 63) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The caption of a selection's statistics being read says how far
    /// they are before the range, which a narrow pane may cut.
    #[test]
    fn reading_caption_says_progress_first() {
        let r = TimeRange::new(1_000_000_000, 3_500_000_000);
        let c = reading_caption(r, Some(0.347));
        assert!(
            c.starts_with("Reading the statistics (35 %) of the selection "),
            "{c}"
        );
        assert!(c.ends_with("(2.5 s)…"), "{c}");
        let c = reading_caption(r, None);
        assert!(
            c.starts_with("Reading the statistics of the selection "),
            "{c}"
        );
    }

    /// Row orders sort as the positions they come from: the list's
    /// reading order, also among the events of one time.
    #[test]
    fn row_orders_sort_as_positions() {
        let at = |time, rank, stream, packet, event_index| CtfPosition {
            time,
            rank,
            stream,
            packet,
            event_index,
        };
        let mut positions = [
            at(5, 0, 3, 0, 9),
            at(5, 1, 0, 0, 0),
            at(5, 0, 3, 1, 0),
            at(4, u32::MAX, u32::MAX, 7, 7),
            at(5, 0, 2, 9, 9),
            at(6, 0, 0, 0, 0),
        ];
        let mut orders: Vec<RowOrder> = positions.iter().map(row_order).collect();
        positions.sort();
        orders.sort();
        assert_eq!(orders, positions.iter().map(row_order).collect::<Vec<_>>());
        assert!(RowOrder::first_at(5) < orders[1] && orders[4] < RowOrder::last_at(5));
    }

    #[test]
    fn a_search_reports_how_far_it_read() {
        let span = TimeRange::new(0, 1_000);
        // Forward from 200: at 600, half the way to the end.
        assert_eq!(search_progress(None, 200, span, Some(600)), 0.5);
        assert_eq!(search_progress(None, 200, span, None), 0.0);
        assert_eq!(search_progress(None, 200, span, Some(5_000)), 1.0);
        // Backward from 800: the window [400, 599] after [600, 800] was
        // read; halfway through it, 301 of the 800 back to the start.
        let back = BackSearch {
            anchor: 800,
            offset: 400,
            end: 599,
        };
        let f = search_progress(Some(&back), 800, span, Some(500));
        assert!((f - 301.0 / 800.0).abs() < 1e-9, "{f}");
    }

    /// Once every event is read, the result is made on a thread (a split
    /// pass's parts joined), the views still showing a partial snapshot:
    /// the progress strip says so rather than hiding.
    #[test]
    fn progress_is_reported_while_the_result_is_made() {
        let trace = traceloom_testdata::sample_kernel();
        let mut session = Session::open(&[trace]).expect("open the bundled sample trace");
        let mut models = TabModels::new(&mut session);
        assert!(models.background_progress(&mut session).is_none());
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let job = Job::spawn("test-final", move || {
            let _ = wait.recv();
            None
        });
        models.final_job = Some(job.expect("a thread"));
        let progress = models.background_progress(&mut session);
        drop(release);
        assert_eq!(
            progress,
            Some((FINISHING.to_string(), 1.0, false)),
            "while the result is made"
        );
    }
}
