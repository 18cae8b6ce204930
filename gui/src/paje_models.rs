//! A Pajé trace's analysis behind a tab ([`PajeTab`], an [`Analysis`]):
//! ViTE's views served by the same engine as a kernel trace's.
//!
//! * the whole-trace pass ([`PajeAnalysis`], LOW priority) on the tab's
//!   [`PajeSession`], serviced by the tab's idle source in chunks, with
//!   progress; a snapshot of it ([`PajeData`], O(lanes)) is taken at most
//!   once per update interval while it runs, so the views fill in;
//! * the containers view: renders of the window, made by a [`Job`] on a
//!   thread of its own from the `Arc`'d snapshot (never on the main
//!   loop), holding the rows in view and a page either side (the view
//!   asks again when scrolled beyond them); one whose window, width or
//!   rows changed meanwhile gives up at its next row, and the first is
//!   preceded by the rows alone, so that the view lays them out and asks
//!   for its graph's true width at once;
//! * statistics of the selection (or of the window without one), per
//!   container and state type, also by a job;
//! * the histogram, re-binned from the pass's fine bins;
//! * the event list ([`PajeListModel`]), whose moves are HIGH requests on
//!   the same session, preempting the pass;
//! * problems in the trace (bad lines, inconsistent events) reported to
//!   the window with file and line, the first few of them;
//! * the Pajé analysis store (`traceloom_viewers::store::paje`): read on a
//!   thread at open, and when valid shown at once with no pass; otherwise
//!   the pass spills its finished chunks to the cache directory, and once
//!   complete its data is stored (on the final snapshot's thread) and read
//!   back in place from the store.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traceloom_base::{Time, TimeRange};

use traceloom_engine::request::{Budget, OwnerId, RequestId, ServiceStatus, Start};
use traceloom_filter::Filter;
use traceloom_paje::TypeId;
use traceloom_viewers::model::eventlist::ListMove as Move;
use traceloom_viewers::model::paje_render::LegendEntry;
use traceloom_viewers::model::{
    ControlFlowModel, PajeAnalysis, PajeCollector, PajeData, PajeListModel, PajeRow, PajeSession,
    PajeStatistics, PajeView, PartialSnapshot,
};
use traceloom_viewers::store::{self, paje as paje_store, StoreError};
use traceloom_viewers::{DataConfig, TimeGraphRender};

use crate::analysis::Analysis;
use crate::bars::FINISHING;
use crate::held_render::HeldRender;
use crate::models::{ListPage, Search, Updates, SNAPSHOT_INTERVAL};
use crate::time_text::format_time;
use crate::views::eventlist::{col, ListMove, ListRow, RowOrder, COLUMNS, DEFAULT_PAGE};
use crate::worker::{Job, JobState};

/// Problems of a trace shown in the window; the rest are counted.
const SHOWN_DIAGNOSTICS: usize = 3;
/// Shortest interval between two statistics of the same range while the
/// pass runs: each walks the range's states, on a core the pass needs.
const STATS_INTERVAL: Duration = Duration::from_secs(3);
/// A snapshot costs O(series), partial chunks copied: the next one waits
/// at least this many times as long as the last took, so that snapshots
/// take a small part of the main thread whatever the trace.
const SNAPSHOT_COST_FACTOR: u32 = 20;
/// Main-loop time a turn gives to the pass's snapshot under way.
const SNAPSHOT_SLICE: Duration = Duration::from_millis(6);
/// Each snapshot is rendered (and its statistics computed) on worker
/// threads, on the cores the pass reads with: while the pass runs, the
/// next snapshot waits at least this many times as long as the last
/// render took, and statistics of the same range this many times as long
/// as the last took.
const JOB_COST_FACTOR: u32 = 4;

/// What a render shows: window, width, data generation, view generation.
type RenderKey = (TimeRange, u32, u64, u64);

/// A render being made: what it shows and the rows it holds, its result
/// (`None` if given up), when it started, and whether it is to give up.
type GraphJob = (
    HeldRender<RenderKey>,
    Job<Option<TimeGraphRender>>,
    Instant,
    Arc<AtomicBool>,
);

/// A Pajé trace's models (see the module doc).
pub struct PajeTab {
    session: PajeSession,
    owner: OwnerId,
    span: TimeRange,
    pass: Option<RequestId>,
    paused: bool,
    data: Option<Arc<PajeData>>,
    generation: u64,
    last_snapshot: Option<Instant>,
    /// A snapshot of the pass being taken a slice at a time (the pass
    /// waits meanwhile), and the time spent on it so far.
    snapshot_build: Option<(Duration, PartialSnapshot)>,
    /// What the last snapshot cost.
    snapshot_cost: Duration,
    /// What the last render and statistics jobs took.
    render_cost: Duration,
    stats_cost: Duration,
    update_interval: Duration,
    /// Legend choices, and their generation.
    view: PajeView,
    view_generation: u64,
    /// Types and values known when the presentation was last sent.
    presented: (usize, usize),
    window: Option<(TimeRange, u32)>,
    /// Rows (display indices) the view shows: renders hold those and a
    /// page either side ([`ControlFlowModel::rows_with_margin`]).
    shown: Range<usize>,
    rendered: Option<HeldRender<RenderKey>>,
    /// The render being made, and whether it is no longer wanted (the
    /// window changed meanwhile: it stops at its next row).
    graph_job: Option<GraphJob>,
    /// The rows without their content, made while the first render is:
    /// once the view has laid them out it asks for its graph's true width
    /// (rather than its guess before any layout), and the first render,
    /// made for the guess, stops.
    rows_job: Option<Job<TimeGraphRender>>,
    /// Whether the rows were asked for (once per tab).
    rows_sent: bool,
    /// The final snapshot of the completed pass, taken (and the collector
    /// freed) on a thread: hundreds of ms of copies and frees on the 1 GB
    /// generated trace; then stored, and read back from the store (with
    /// why not, if it could not be).
    final_job: Option<Job<(PajeData, Option<String>)>>,
    /// The analysis store being read at open (the data, or why not).
    opening: Option<Job<Result<PajeData, Option<String>>>>,
    /// Whether the data shown came from the store (no pass ran).
    from_store: bool,
    selection: Option<TimeRange>,
    stats_rendered: Option<RenderKey>,
    /// When the last statistics were started.
    stats_started: Option<Instant>,
    stats_job: Option<(RenderKey, Job<PajeStatistics>, String)>,
    /// Statistics renders started since the tab opened.
    stats_renders: u32,
    /// Time-graph renders started since the tab opened.
    graph_renders: u32,
    histogram_bins: Option<u32>,
    histogram_rendered: Option<(u32, u64)>,
    list: PajeListModel,
    /// Container names by what events call them, for the list (rebuilt
    /// when containers were created).
    names: HashMap<Arc<str>, Arc<str>>,
    diagnostics_seen: usize,
}

impl PajeTab {
    /// Models over `session`'s trace; nothing is requested yet.
    pub fn new(mut session: PajeSession) -> PajeTab {
        let span = session
            .time_span()
            .map(|(a, b)| TimeRange::new(a, b.max(a + 1)))
            .unwrap_or(TimeRange::new(0, 1));
        let list = PajeListModel::new(&mut session, DEFAULT_PAGE);
        PajeTab {
            owner: session.new_owner(),
            session,
            span,
            pass: None,
            paused: false,
            data: None,
            generation: 0,
            last_snapshot: None,
            snapshot_build: None,
            snapshot_cost: Duration::ZERO,
            render_cost: Duration::ZERO,
            stats_cost: Duration::ZERO,
            update_interval: SNAPSHOT_INTERVAL,
            view: PajeView::default(),
            view_generation: 0,
            presented: (0, 0),
            window: None,
            shown: 0..0,
            rendered: None,
            graph_job: None,
            rows_job: None,
            rows_sent: false,
            final_job: None,
            opening: None,
            from_store: false,
            selection: None,
            stats_rendered: None,
            stats_started: None,
            stats_job: None,
            stats_renders: 0,
            graph_renders: 0,
            histogram_bins: None,
            histogram_rendered: None,
            list,
            names: HashMap::new(),
            diagnostics_seen: 0,
        }
    }

    /// The legend of the data shown: the types, and whether each is drawn.
    pub fn legend(&self) -> Vec<(LegendEntry, bool)> {
        self.data.as_ref().map_or_else(Vec::new, |d| {
            d.legend()
                .into_iter()
                .map(|e| {
                    let on = !self.view.hidden.contains(&e.type_id);
                    (e, on)
                })
                .collect()
        })
    }

    /// Shows or hides the entities of a type.
    pub fn set_type_shown(&mut self, t: TypeId, shown: bool) {
        let changed = if shown {
            self.view.hidden.remove(&t)
        } else {
            self.view.hidden.insert(t)
        };
        if changed {
            self.view_generation += 1;
        }
    }

    /// The types hidden.
    pub fn hidden(&self) -> &HashSet<TypeId> {
        &self.view.hidden
    }

    fn set_data(&mut self, d: PajeData) {
        if d.containers.len() != self.names.len() {
            self.names = d
                .containers
                .iter()
                .map(|c| (c.ident.clone(), c.name.clone()))
                .collect();
        }
        self.data = Some(Arc::new(d));
        self.generation += 1;
    }

    /// The store read at open: its data, or the pass when there is none.
    fn poll_opening(&mut self, u: &mut Updates) {
        let Some(job) = &self.opening else { return };
        let read = match job.try_take() {
            JobState::Running => return,
            JobState::Done(r) => r,
            JobState::Failed => Err(None),
        };
        self.opening = None;
        match read {
            Ok(d) => {
                self.from_store = true;
                self.set_data(d);
            }
            Err(why) => {
                u.errors.extend(why);
                self.start_pass();
            }
        }
    }

    /// Adds the whole-trace pass, its finished chunks spilled to the cache
    /// directory (tens of MB on the heap instead of hundreds on 1 GB).
    fn start_pass(&mut self) {
        if let Some(dir) = store::cache_dir() {
            if std::fs::create_dir_all(&dir).is_ok() {
                self.session.set_spill_dir(Some(dir));
            }
        }
        self.pass = Some(PajeAnalysis::request(&mut self.session, self.owner));
    }

    /// Takes a snapshot of the pass when one is due, or its final data.
    fn poll_pass(&mut self, u: &mut Updates) {
        if let Some(job) = &self.final_job {
            match job.try_take() {
                JobState::Running => {}
                JobState::Done((d, warning)) => {
                    self.final_job = None;
                    u.errors.extend(warning);
                    self.set_data(d);
                }
                JobState::Failed => self.final_job = None,
            }
        }
        let Some(id) = self.pass else { return };
        if self.session.is_complete(id) {
            self.pass = None;
            self.snapshot_build = None;
            if let Some(c) = self.session.take::<PajeCollector>(id) {
                let dir = store::cache_dir();
                let identity = paje_store::identity(&self.session);
                let finish = move || {
                    let d = c.into_snapshot();
                    let Some(dir) = dir else { return (d, None) };
                    // Stored, then read back in place: the heap keeps
                    // little of it, and the next open reads no trace.
                    match paje_store::save(&dir, &identity, &d) {
                        Ok((path, _)) => match paje_store::reopen(&path) {
                            Ok(mapped) => {
                                // As for a kernel trace's store.
                                store::check_and_record_in_background(path);
                                (mapped, None)
                            }
                            Err(_) => (d, None),
                        },
                        Err(e) => (d, Some(format!("The analysis was not stored: {e}"))),
                    }
                };
                match Job::spawn("traceloom-final", finish) {
                    Ok(j) => self.final_job = Some(j),
                    Err(e) => eprintln!("traceloom: warning: cannot start a thread: {e}"),
                }
            }
            return;
        }
        let wait = self
            .update_interval
            .max(self.snapshot_cost * SNAPSHOT_COST_FACTOR)
            .max(self.render_cost * JOB_COST_FACTOR);
        let due = self.last_snapshot.is_none_or(|t| t.elapsed() >= wait);
        if self.snapshot_build.is_none() {
            if !due || self.graph_job.is_some() {
                return;
            }
            self.snapshot_build = Some(Default::default());
        }
        // A slice of the snapshot per turn: with thousands of containers
        // the whole of it held the main loop for 50-74 ms.
        let started = Instant::now();
        let (Some(c), Some((spent, part))) = (
            self.session.peek::<PajeCollector>(id),
            self.snapshot_build.as_mut(),
        ) else {
            self.snapshot_build = None;
            return;
        };
        let done = c.snapshot_part(part, || started.elapsed() >= SNAPSHOT_SLICE);
        *spent += started.elapsed();
        if let Some(d) = done {
            self.snapshot_cost = *spent;
            self.snapshot_build = None;
            self.last_snapshot = Some(Instant::now());
            self.set_data(d);
        }
    }

    /// Problems met since the last poll, as messages for the window.
    fn poll_diagnostics(&mut self, u: &mut Updates) {
        let mut found: Vec<String> = self
            .session
            .take_diagnostics()
            .iter()
            .map(|d| d.to_string())
            .collect();
        if self.pass.is_none() && self.final_job.is_none() {
            if let Some(d) = &self.data {
                found.extend(d.diagnostics.iter().map(|d| d.to_string()));
            }
        }
        for text in found {
            self.diagnostics_seen += 1;
            match self.diagnostics_seen {
                n if n <= SHOWN_DIAGNOSTICS => u.errors.push(format!("Pajé trace: {text}")),
                n if n == SHOWN_DIAGNOSTICS + 1 => u
                    .errors
                    .push("Pajé trace: more problems (see `traceloom dump` for all)".into()),
                _ => {}
            }
        }
    }

    fn poll_graph(&mut self, u: &mut Updates) {
        if let Some(job) = &self.rows_job {
            match job.try_take() {
                JobState::Running => {}
                JobState::Done(r) => {
                    self.rows_job = None;
                    if self.rendered.is_none() {
                        u.control_flow = Some(Arc::new(r));
                    }
                }
                JobState::Failed => self.rows_job = None,
            }
        }
        let wanted = match (&self.data, self.window) {
            (Some(_), Some((window, width))) => {
                Some((window, width, self.generation, self.view_generation))
            }
            _ => None,
        };
        if let Some((made, job, started, stop)) = &self.graph_job {
            match job.try_take() {
                JobState::Running => {
                    if !wanted.is_some_and(|w| made.serves(&w, &self.shown)) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    return;
                }
                JobState::Done(Some(r)) => {
                    self.rendered = Some(made.clone());
                    u.control_flow = Some(Arc::new(r));
                    self.render_cost = started.elapsed();
                }
                // Given up for a newer window: rendered again below.
                JobState::Done(None) => {}
                JobState::Failed => self.rendered = Some(made.clone()),
            }
            self.graph_job = None;
        }
        let (Some(data), Some(key)) = (&self.data, wanted) else {
            return;
        };
        if self
            .rendered
            .as_ref()
            .is_some_and(|r| r.serves(&key, &self.shown))
        {
            return;
        }
        let (window, width) = (key.0, key.1);
        let held = ControlFlowModel::rows_with_margin(self.shown.clone());
        if self.rendered.is_none() && self.rows_job.is_none() && !self.rows_sent {
            self.rows_sent = true;
            let (data, view) = (data.clone(), self.view.clone());
            if let Ok(job) = Job::spawn("traceloom-paje-rows", move || {
                data.render_tree(window, width, &view)
            }) {
                self.rows_job = Some(job);
            }
        }
        // A render the user waits for (the first, another window, width,
        // view or rows) runs at their priority; one that only follows the
        // pass's growth, at the background's.
        let follows_user = self.rendered.as_ref().is_none_or(|r| {
            let k = &r.shows;
            (k.0, k.1, k.3) != (key.0, key.1, key.3) || r.rows != held
        });
        let (data, view) = (data.clone(), self.view.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let rows = held.clone();
        let render = move || {
            data.render_rows_until(window, width, &view, Some(rows), || {
                stopped.load(Ordering::Relaxed)
            })
        };
        let job = if follows_user {
            Job::spawn_urgent("traceloom-paje-render", render)
        } else {
            Job::spawn("traceloom-paje-render", render)
        };
        if let Ok(job) = job {
            self.graph_renders += 1;
            self.graph_job = Some((
                HeldRender {
                    shows: key,
                    rows: held,
                },
                job,
                Instant::now(),
                stop,
            ));
        }
    }

    fn poll_statistics(&mut self, u: &mut Updates) {
        if let Some((key, job, caption)) = &self.stats_job {
            match job.try_take() {
                JobState::Running => return,
                JobState::Done(r) => {
                    self.stats_rendered = Some(*key);
                    // An empty table would look like a view not done yet.
                    let mut roots = Vec::new();
                    traceloom_viewers::StatisticsTree::children(&r, None, &mut roots);
                    let caption = if roots.is_empty() {
                        format!("{caption} (no states in this range)")
                    } else {
                        caption.clone()
                    };
                    u.statistics = Some((Arc::new(r), caption));
                }
                JobState::Failed => self.stats_rendered = Some(*key),
            }
            if let Some(t) = self.stats_started {
                self.stats_cost = t.elapsed();
            }
            self.stats_job = None;
        }
        let Some(data) = &self.data else { return };
        let (range, what) = match (self.selection, self.window) {
            (Some(s), _) => (s, "Selection"),
            (None, Some((w, _))) => (w, "Window"),
            (None, None) => (self.span, "Whole trace"),
        };
        let key = (range, 0, self.generation, self.view_generation);
        if self.stats_rendered == Some(key) {
            return;
        }
        // While the pass runs, statistics of the same range follow its
        // snapshots at most every STATS_INTERVAL (they walk the range's
        // states); a new range is computed at once.
        if (self.pass.is_some() || self.final_job.is_some())
            && self
                .stats_rendered
                .is_some_and(|k| k.0 == range && k.3 == key.3)
            && self.stats_started.is_some_and(|t| {
                t.elapsed() < STATS_INTERVAL.max(self.stats_cost * JOB_COST_FACTOR)
            })
        {
            return;
        }
        let caption = format!(
            "{what}: {} – {}{}",
            format_time(range.start),
            format_time(range.end),
            if data.complete {
                ""
            } else {
                " (trace read in part)"
            }
        );
        let (data, view) = (data.clone(), self.view.clone());
        if let Ok(job) = Job::spawn("traceloom-paje-stats", move || {
            data.statistics_tree(range, &view)
        }) {
            self.stats_started = Some(Instant::now());
            self.stats_job = Some((key, job, caption));
            self.stats_renders += 1;
        }
    }

    fn poll_histogram(&mut self, u: &mut Updates) {
        let (Some(data), Some(bins)) = (&self.data, self.histogram_bins) else {
            return;
        };
        if self.histogram_rendered == Some((bins, self.generation)) {
            return;
        }
        self.histogram_rendered = Some((bins, self.generation));
        u.histogram = Some(Arc::new(data.histogram.render(self.span, bins, &[])));
    }

    fn list_page(&self) -> ListPage {
        let rows: Vec<ListRow> = self
            .list
            .rows()
            .iter()
            .map(|r| list_row(r, &self.names))
            .collect();
        ListPage::new(
            rows,
            false,
            self.list.is_pending(),
            self.list.scrollbar_value(),
        )
    }
}

/// A list row of a Pajé event: time; container (its name when known) in
/// the trace column; kind and type as the event; value and the other
/// fields as its fields (the thread columns stay empty).
pub fn list_row(r: &PajeRow, names: &HashMap<Arc<str>, Arc<str>>) -> ListRow {
    let value = match (r.value.is_empty(), r.fields.is_empty()) {
        (false, false) => format!("value={} {}", r.value, r.fields),
        (false, true) => format!("value={}", r.value),
        _ => r.fields.clone(),
    };
    let mut columns: [String; COLUMNS.len()] = Default::default();
    columns[col::TIME] = format_time(r.time);
    columns[col::CPU] = names
        .get(r.container.as_str())
        .map_or_else(|| r.container.clone(), |n| n.to_string());
    columns[col::EVENT] = format!("{} {}", r.kind, r.type_name);
    columns[col::FIELDS] = value;
    ListRow {
        order: RowOrder {
            time: r.time,
            tie: [u64::from(r.position.file), r.position.offset, 0],
        },
        columns,
    }
}

impl Analysis for PajeTab {
    fn time_span(&self) -> Option<(Time, Time)> {
        // A trace of definitions only has no time: it shows empty.
        Some((self.span.start, self.span.end))
    }

    fn start_background(&mut self) {
        if self.pass.is_some()
            || self.final_job.is_some()
            || self.data.is_some()
            || self.opening.is_some()
        {
            return;
        }
        let Some(dir) = store::cache_dir() else {
            self.start_pass();
            return;
        };
        let identity = paje_store::identity(&self.session);
        // A missing store is no warning; a stale one is expected after the
        // trace changed (stderr only); a damaged one is rebuilt.
        let read = move || match paje_store::load(&dir, &identity) {
            Ok(l) => Ok(l.data),
            Err(StoreError::Missing(_)) => Err(None),
            Err(e @ StoreError::Stale { .. }) => {
                eprintln!("traceloom: warning: {e}; reading the trace again");
                Err(None)
            }
            Err(e) => Err(Some(format!(
                "The analysis store is unusable ({e}): reading the trace again"
            ))),
        };
        match Job::spawn("traceloom-caches", read) {
            Ok(j) => self.opening = Some(j),
            Err(_) => self.start_pass(),
        }
    }

    fn set_update_interval(&mut self, d: Duration) {
        self.update_interval = d.max(SNAPSHOT_INTERVAL);
    }

    fn poll(&mut self) -> Updates {
        let mut u = Updates::default();
        self.poll_opening(&mut u);
        self.poll_pass(&mut u);
        let data = self.data.clone();
        if let Some(d) = data {
            let known = (d.types.len(), d.values.len());
            if known != self.presented {
                self.presented = known;
                u.presentation = Some(d.presentation());
            }
        }
        self.poll_diagnostics(&mut u);
        self.poll_graph(&mut u);
        self.poll_statistics(&mut u);
        self.poll_histogram(&mut u);
        u
    }

    fn service(
        &mut self,
        budget: Budget,
        interrupt: &mut dyn FnMut() -> bool,
        _wait: bool,
    ) -> ServiceStatus {
        // The Pajé session always waits for its reader (`wait`).
        // The pass waits for the snapshot under way, whose containers
        // must all be of one moment.
        if self.snapshot_build.is_some() {
            return ServiceStatus::BudgetSpent;
        }
        self.session.service(budget, interrupt)
    }

    fn list_poll(&mut self) -> Option<ListPage> {
        let pending = self.list.is_pending();
        let changed = self.list.poll(&mut self.session);
        (changed || pending != self.list.is_pending()).then(|| self.list_page())
    }

    fn busy(&mut self) -> bool {
        self.session.scheduler().pending() > 0
            || self.snapshot_build.is_some()
            || self.graph_job.is_some()
            || self.final_job.is_some()
            || self.opening.is_some()
            || self.stats_job.is_some()
            // A snapshot not rendered yet: the next turn renders it.
            || (self.window.is_some()
                && self.data.is_some()
                && self.rendered.as_ref().map(|r| (r.shows.2, r.shows.3))
                    != Some((self.generation, self.view_generation)))
    }

    fn background_progress(&mut self) -> Option<(String, f64, bool)> {
        if self.final_job.is_some() {
            // The views show the last snapshot until the store is written
            // and read back.
            return Some((FINISHING.to_string(), 1.0, false));
        }
        let id = self.pass?;
        let at = self
            .session
            .scheduler()
            .request(id)
            .map(|r| match &r.start {
                Start::Time(t) => *t,
                Start::Position(p) => p.time,
            })?;
        let f = self.session.fraction(at);
        let pct = f * 100.0;
        let label = if self.paused {
            format!("Pajé trace read paused at {pct:.0} %: the views show the part read")
        } else {
            format!("Reading the Pajé trace (containers, states, links, variables): {pct:.0} %")
        };
        Some((label, f, self.paused))
    }

    fn request_main_rows(&mut self, shown: std::ops::Range<usize>) {
        self.shown = shown;
    }

    fn request_window(&mut self, window: TimeRange, main_width: u32, _second_width: u32) {
        self.window = Some((window, main_width.max(1)));
    }

    fn set_main_rows(&mut self, rows: DataConfig) {
        if rows != self.view.data {
            self.view.data = rows;
            self.view_generation += 1;
        }
    }

    fn request_histogram(&mut self, bins: u32) {
        self.histogram_bins = Some(bins.max(1));
    }

    fn request_statistics(&mut self, selection: Option<TimeRange>) {
        self.selection = selection.filter(|s| s.span() > 0);
    }

    fn list_move(&mut self, mv: ListMove) -> Option<ListPage> {
        let before = (self.list.is_pending(), self.list.scrollbar_value());
        match mv {
            ListMove::ToTime(t) => self.list.start(&mut self.session, Move::ToTime(t)),
            ListMove::LinesDown(n) => self.list.start(&mut self.session, Move::LinesDown(n)),
            ListMove::LinesUp(n) => self.list.start(&mut self.session, Move::LinesUp(n)),
            ListMove::PageDown => self.list.start(&mut self.session, Move::PageDown),
            ListMove::PageUp => self.list.start(&mut self.session, Move::PageUp),
            ListMove::Resize(n) => self.list.set_page_size(&mut self.session, n),
        }
        let after = (self.list.is_pending(), self.list.scrollbar_value());
        (after != before).then(|| self.list_page())
    }

    fn list_reading(&self) -> bool {
        self.list.is_pending()
    }

    fn set_list_filter(&mut self, expr: Option<&str>) -> Result<ListPage, String> {
        match expr {
            None => Ok(self.list_page()),
            Some(_) => Err(
                "filter expressions apply to CTF events; a Pajé trace's types are shown or \
                 hidden in its legend"
                    .into(),
            ),
        }
    }

    fn search(&mut self, _filter: Filter, _search: Search, _span: TimeRange) -> Result<(), String> {
        Err("search expressions apply to CTF events, not to Pajé traces".into())
    }

    fn pause_background(&mut self) {
        if let Some(id) = self.pass {
            self.paused = self.session.pause(id);
            // The views show what was read.
            self.last_snapshot = None;
        }
    }

    fn resume_background(&mut self) {
        if let Some(id) = self.pass {
            if self.session.resume(id) {
                self.paused = false;
            }
        }
    }

    fn analysis_from_store(&self) -> bool {
        self.from_store
    }
    fn statistics_renders(&self) -> u32 {
        self.stats_renders
    }
    fn time_graph_renders(&self) -> u32 {
        self.graph_renders
    }

    fn background_paused(&self) -> bool {
        self.paused
    }

    fn has_second_graph(&self) -> bool {
        false
    }

    fn type_toggles(&self) -> Vec<(&'static str, String, bool)> {
        self.legend()
            .into_iter()
            .map(|(e, on)| (e.kind, e.name, on))
            .collect()
    }

    fn set_type_shown(&mut self, i: usize, shown: bool) {
        if let Some((e, _)) = self.legend().into_iter().nth(i) {
            PajeTab::set_type_shown(self, e.type_id, shown);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the kernel pass's (`models`' test): once the trace is read, its
    /// result is stored and read back on a thread while the views show
    /// the last snapshot, and the progress strip says so.
    #[test]
    fn progress_is_reported_while_the_result_is_made() {
        let trace = traceloom_testdata::paje("states.trace");
        let session = PajeSession::open(&trace).expect("open a bundled Pajé trace");
        let mut tab = PajeTab::new(session);
        assert!(tab.background_progress().is_none());
        let (data, _) = PajeData::open(&trace).expect("read the trace");
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let job = Job::spawn("test-final", move || {
            let _ = wait.recv();
            (data, None)
        });
        tab.final_job = Some(job.expect("a thread"));
        let progress = tab.background_progress();
        drop(release);
        assert_eq!(
            progress,
            Some((FINISHING.to_string(), 1.0, false)),
            "while the result is made"
        );
    }
}
