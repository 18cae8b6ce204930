//! A tab: one traceset with its own time window, current time, selection,
//! filter and bookmarks, the five viewers, and the background runner
//! servicing their events requests.
//!
//! In the window a tab is a relm4 factory component, [`TabPage`], one
//! page of the window's notebook ([`crate::tab_book::TabBook`]): what its
//! parts ask (the bars, the viewers, its keys, its runner) reaches it as
//! [`TabMsg`]s, and it reports errors and asks to be closed with
//! [`TabOutput`]s, which the window shows or acts on. [`Tab`] is the
//! page's state and widgets; the page's messages call its methods, which
//! tests call too (through [`TabPage::tab`] or a [`TabHost`]).
//!
//! Its parts are relm4 components of their own: each viewer
//! ([`crate::views`]), whose navigation outputs are forwarded to the tab
//! as [`TabMsg::Nav`], [`TabMsg::ListMove`] and [`TabMsg::Follow`], and
//! the bars above and below them ([`crate::bars`]: times typed, filter,
//! search, zoom buttons, Cancel and Resume). The tab keeps the
//! components' models, handles to their widgets, to hand the viewers
//! renders and the time focus and to show times, bookmarks and
//! progress.
//!
//! The viewer models' session (traceset + scheduler) lives on the main
//! thread, in the tab's [`Runner`]: every change of window asks the
//! models for what is now visible (HIGH priority); the whole-trace work
//! (state pass, statistics, histogram) runs at LOW priority. The runner
//! services them on the GLib idle loop in turns of at most 10 ms that
//! yield to input (see [`crate::runner`]) and sends each turn's renders
//! and rows to the tab as a [`TabMsg::Serviced`]. Building the time-graph
//! models and rendering the graphs and the statistics run as jobs on
//! threads of their own ([`crate::worker`]), painting on painting threads
//! ([`crate::views::painter`]). The event list's moves are HIGH requests
//! on the same session: the rows are shown when they arrive.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::factory::{DynamicIndex, FactoryComponent, FactorySender, FactoryVecDeque};
use relm4::{Component, ComponentController, Controller};
use traceloom_filter::Filter;
use traceloom_viewers::model::{PajeSession, Session};
use traceloom_viewers::PresentationConfig;

use crate::analysis::{self, Analysis, KernelTab};
pub use crate::bars::TimeEntry;
use crate::bars::{BarsOutput, ProgressOutput, ProgressStrip, TabBars};
use crate::config::{self, Bookmark, TraceConfig};
use crate::first_paint;
use crate::layout::{Layout, SavedLayout};
use crate::models::{ListPage, Search};
use crate::pacing::Pacing;
use crate::paje_models::PajeTab;
use crate::runner::{Runner, Serviced};
use crate::stalls;
use crate::tab_book::TabBook;
use crate::time_text::{format_time, parse_time};
use crate::views::eventlist::{EventListView, ListMove, ListOutput, RowOrder};
use crate::views::histogram::HistogramView;
use crate::views::rows_bar::{RowsBar, RowsOutput};
use crate::views::statistics::StatisticsView;
use crate::views::timegraph::{TimeGraphInit, TimeGraphView};
use crate::views::{centred_on, Nav, TimeFocus};

/// Smallest window span, in ns, zooming in stops at.
const MIN_SPAN: u64 = 1_000;

/// What a tab is asked to do: by its bars, its keys and its Types menu,
/// by its viewers (navigation), by its runner (a turn's results).
#[derive(Debug)]
pub enum TabMsg {
    /// A viewer's navigation (current time, selection, window, zoom,
    /// pan, a new width or rows configuration).
    Nav(Nav),
    /// The event list's scrolling.
    ListMove(ListMove),
    /// Follow a thread (its TID), or stop following.
    Follow(Option<i64>),
    /// A key of the viewers (see [`Tab::key`]).
    Key(gtk::gdk::Key),
    /// Enter in a time bar entry.
    TimeTyped(TimeEntry),
    /// Apply the filter bar's expression.
    ApplyFilter,
    /// Search the next (true) or previous matching event.
    Search(bool),
    /// Zoom to the whole trace.
    ZoomFit,
    /// Zoom to the selection.
    ZoomSelection,
    /// Go to bookmark n of the drop-down.
    GoToBookmark(usize),
    /// Show or hide entity type n of the legend's Types menu.
    TypeShown(usize, bool),
    /// Pause the whole-trace pass.
    Cancel,
    /// Resume it.
    Resume,
    /// A turn of the runner: renders, rows, progress for the views.
    Serviced(Box<Serviced>),
}

impl From<BarsOutput> for TabMsg {
    fn from(out: BarsOutput) -> Self {
        match out {
            BarsOutput::TimeTyped(which) => TabMsg::TimeTyped(which),
            BarsOutput::ApplyFilter => TabMsg::ApplyFilter,
            BarsOutput::Search(forward) => TabMsg::Search(forward),
            BarsOutput::ZoomFit => TabMsg::ZoomFit,
            BarsOutput::ZoomSelection => TabMsg::ZoomSelection,
            BarsOutput::Key(key) => TabMsg::Key(key),
            BarsOutput::GoToBookmark(i) => TabMsg::GoToBookmark(i),
        }
    }
}

impl From<ProgressOutput> for TabMsg {
    fn from(out: ProgressOutput) -> Self {
        match out {
            ProgressOutput::Cancel => TabMsg::Cancel,
            ProgressOutput::Resume => TabMsg::Resume,
        }
    }
}

impl From<Serviced> for TabMsg {
    fn from(s: Serviced) -> Self {
        TabMsg::Serviced(Box::new(s))
    }
}

/// What a tab tells the window.
#[derive(Debug)]
pub enum TabOutput {
    /// An error for the info bar.
    Error(String),
    /// The tab's close button was clicked.
    Close(DynamicIndex),
}

/// A traceset opened, not shown yet: what a [`TabPage`] is made from.
pub struct Opened {
    /// The traceset's paths (CTF metadata files replaced by their
    /// directories).
    pub paths: Vec<PathBuf>,
    analysis: Box<dyn Analysis>,
    /// First and last event times.
    span: TimeRange,
    saved: TraceConfig,
    /// Why the saved configuration was ignored (unreadable or corrupted),
    /// if it was: the window shows it as a warning.
    pub config_warning: Option<String>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("paths", &self.paths)
            .finish()
    }
}

/// A traceset's files opened and indexed: the part of opening a tab that
/// reads them (for a 1 GB Pajé file, every page of it: a header line may
/// name other files), which [`read`] can do off the main loop;
/// [`open_read`] then makes the tab's models.
pub struct TracesetRead {
    paths: Vec<PathBuf>,
    files: ReadFiles,
}

enum ReadFiles {
    Ctf(Arc<traceloom_ctf::Traceset>),
    Paje(Arc<traceloom_paje::TraceFiles>),
}

impl std::fmt::Debug for TracesetRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TracesetRead")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

/// `e`, naming `paths` unless it does already (the readers' errors
/// usually do).
fn naming(paths: &[PathBuf], e: String) -> String {
    let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    if named.iter().any(|p| e.contains(p.as_str())) {
        e
    } else {
        format!("{}: {e}", named.join(", "))
    }
}

/// Opens and indexes the files of `paths` (no GTK: any thread).
pub fn read(paths: Vec<PathBuf>) -> Result<TracesetRead, String> {
    let paths = analysis::trace_paths(paths);
    let files = if analysis::is_paje(&paths) {
        traceloom_paje::TraceFiles::open(&paths[0], Default::default(), true)
            .map(|f| ReadFiles::Paje(Arc::new(f)))
            .map_err(|e| naming(&paths, e.to_string()))?
    } else {
        traceloom_ctf::Traceset::open(&paths)
            .map(|t| ReadFiles::Ctf(Arc::new(t)))
            .map_err(|e| naming(&paths, e.to_string()))?
    };
    Ok(TracesetRead { paths, files })
}

/// Opens `paths` for a new tab; errors (unreadable traces, empty
/// traceset) are returned for the info bar.
pub fn open(paths: Vec<PathBuf>) -> Result<Opened, String> {
    open_read(read(paths)?)
}

/// The tab's models of the files `read` gave.
pub fn open_read(read: TracesetRead) -> Result<Opened, String> {
    let TracesetRead { paths, files } = read;
    let named = |e: String| naming(&paths, e);
    let analysis: Box<dyn Analysis> = match files {
        ReadFiles::Paje(files) => {
            let source = traceloom_engine::paje_source::PajeSource::new(files);
            let mut session = PajeSession::new(source);
            if session.time_span().is_none() {
                // Nothing timed: a trace of definitions only opens empty,
                // anything else is not a Pajé trace; say why.
                let diagnostics = session.take_diagnostics();
                let error = diagnostics
                    .iter()
                    .find(|d| d.severity == traceloom_paje::Severity::Error);
                if let Some(d) = error {
                    return Err(named(format!("not a Pajé trace: {d}")));
                }
            }
            Box::new(PajeTab::new(session))
        }
        ReadFiles::Ctf(traceset) => Box::new(KernelTab::new(Session::new(traceset))),
    };
    let (first, last) = analysis
        .time_span()
        .ok_or_else(|| "the traceset holds no event".to_string())?;
    let span = TimeRange::new(first, last.max(first + 1));

    let (saved, config_warning) = match config::config_dir()
        .map(|d| config::read_json::<TraceConfig>(&config::trace_config_path(&d, &paths)))
    {
        Some(Ok(Some(c))) => (c, None),
        Some(Err(w)) => {
            eprintln!("traceloom: warning: {w}");
            (TraceConfig::default(), Some(w))
        }
        _ => (TraceConfig::default(), None),
    };
    Ok(Opened {
        paths,
        analysis,
        span,
        saved,
        config_warning,
    })
}

/// The tab's time and filter state.
struct TabState {
    /// When the progress bar was last updated.
    last_progress: Option<Instant>,
    /// Whether the progress bar last said the window is a preview.
    progress_previewed: bool,
    /// First and last event times of the traceset.
    span: TimeRange,
    cursor: TimeFocus,
    filter: Option<Arc<Filter>>,
    filter_text: String,
    /// The list filter "follow thread" set, while following.
    following: Option<String>,
}

/// A tab's state and widgets (see the module documentation).
pub struct Tab {
    /// The tab's page widget.
    pub widget: gtk::Box,
    /// The traceset's paths.
    pub paths: Vec<PathBuf>,
    /// Control flow viewer.
    pub control_flow: TimeGraphView,
    /// The control flow's rows toolbar (filter, order, follow...).
    pub rows_bar: RowsBar,
    /// Resources viewer.
    pub resources: TimeGraphView,
    /// Detailed event list.
    pub events: EventListView,
    /// Statistics.
    pub statistics: StatisticsView,
    /// Histogram of the whole trace.
    pub histogram: HistogramView,
    /// The viewers' and bars' components (the handles here are their
    /// models).
    _components: Components,
    /// The viewers' panes, title bars and View menu.
    pub layout: Layout,
    /// The time, filter and search bars.
    bars: TabBars,
    /// The whole-trace pass's progress, Cancel and Resume.
    pub progress: ProgressStrip,
    state: RefCell<TabState>,
    /// Services the requests on the idle loop; owns the analysis.
    runner: Runner<TabMsg>,
    /// The tab's own messages (from signals it connects later).
    input: relm4::Sender<TabMsg>,
    /// Where errors go (the window's info bar).
    output: relm4::Sender<TabOutput>,
    /// Guards against re-entrant cursor pushes (a view reacting to a cursor
    /// update by sending navigation).
    pushing: Cell<bool>,
    /// Closed: configuration saved, requests no longer serviced.
    closed: Cell<bool>,
}

/// The viewers' and bars' components, kept for as long as the tab.
struct Components {
    _bars: Controller<TabBars>,
    _progress: Controller<ProgressStrip>,
    _control_flow: Controller<TimeGraphView>,
    _rows_bar: Controller<RowsBar>,
    _resources: Controller<TimeGraphView>,
    _events: Controller<EventListView>,
    _statistics: Controller<StatisticsView>,
    _histogram: Controller<HistogramView>,
}

/// `window` zoomed by `factor` around `anchor`, kept at least [`MIN_SPAN`]
/// wide.
pub fn zoom_window(window: TimeRange, factor: f64, anchor: Time) -> TimeRange {
    let left = (anchor - window.start) as f64 * factor;
    let right = (window.end - anchor) as f64 * factor;
    let (mut s, mut e) = (anchor - left.round() as i64, anchor + right.round() as i64);
    if ((e - s) as u64) < MIN_SPAN {
        let mid = s / 2 + e / 2;
        s = mid - MIN_SPAN as i64 / 2;
        e = mid + MIN_SPAN as i64 / 2;
    }
    TimeRange::new(s, e)
}

/// `window` moved inside `span` (kept the same width when it fits).
pub fn clamp_window(window: TimeRange, span: TimeRange) -> TimeRange {
    let w = window.span().min(span.span()) as i64;
    let mut s = window.start.max(span.start);
    if s + w > span.end {
        s = span.end - w;
    }
    TimeRange::new(s, s + w)
}

/// The event list's filter following thread `tid`: the events it runs
/// (`state.tid`, the thread on the CPU once the event is applied), and
/// the `sched_switch` events switching it out, which the state already
/// gives to the next thread: without them the list would show when the
/// thread ran, never when and why (`prev_state`) it stopped.
pub fn follow_filter(tid: i64) -> String {
    format!("state.tid == {tid} || event.field.prev_tid == {tid}")
}

/// What a search looks for among the events the list shows: `searched`,
/// and `listed` (the list's filter) when one is applied.
fn within_list(listed: Option<&Filter>, searched: Filter) -> Filter {
    match listed {
        Some(l) => Filter::from_expr(traceloom_filter::Expr::And(vec![
            l.expr().clone(),
            searched.expr().clone(),
        ])),
        None => searched,
    }
}

/// Whether [`Tab::key`] uses `key`: arrows, zoom keys, Home/End, F, S, B,
/// Escape.
fn is_view_key(key: gtk::gdk::Key) -> bool {
    use gtk::gdk::Key;
    matches!(
        key,
        Key::Left
            | Key::Right
            | Key::plus
            | Key::equal
            | Key::KP_Add
            | Key::minus
            | Key::KP_Subtract
            | Key::Home
            | Key::End
            | Key::f
            | Key::F
            | Key::s
            | Key::S
            | Key::b
            | Key::B
            | Key::Escape
    )
}

impl Tab {
    /// A tab showing `opened`, whose widgets send their messages to
    /// `input` and its errors to `output`. Starts the requests for what
    /// it shows, and the whole-trace analysis once it is painted.
    pub fn new(
        opened: Opened,
        input: relm4::Sender<TabMsg>,
        output: relm4::Sender<TabOutput>,
    ) -> Rc<Tab> {
        let Opened {
            paths,
            analysis,
            span,
            saved,
            config_warning: _,
        } = opened;
        let title = title_of(&paths);
        let tab = Rc::new(build(paths, analysis, span, title, input, output));
        // The keyboard starts on the control flow (arrows, zoom keys), not
        // in a text field of the time bar, whose blinking cursor would
        // ask for a frame many times a second for as long as it has focus.
        tab.control_flow.area.connect_map(|area| {
            area.grab_focus();
        });

        // Restore what was saved for this traceset.
        let window = saved
            .time_window
            .map(|(s, e)| clamp_window(TimeRange::new(s, e.max(s + 1)), span))
            .unwrap_or(span);
        {
            let mut st = tab.state.borrow_mut();
            st.cursor.window = Some(window);
            st.cursor.bookmarks = saved.bookmarks.clone();
        }
        tab.refresh_bookmarks();
        for (view, &g) in [&tab.control_flow, &tab.resources]
            .into_iter()
            .zip(&saved.time_graphs)
        {
            view.set_layout_hint(g);
        }
        tab.layout.restore(&SavedLayout {
            shown: saved.viewers.clone(),
            positions: saved.panes.clone(),
        });
        if !saved.filter.is_empty() {
            tab.bars.filter_entry.set_text(&saved.filter);
            tab.apply_filter();
        }
        tab.fit_to_format();
        tab.start_background_when_shown();
        tab.runner.kick();
        tab.list_move(ListMove::ToTime(window.start));
        tab.request_visible();
        tab
    }

    /// Starts the whole-trace analysis once the tab's first frame is
    /// painted, or after [`first_paint::FIRST_FRAME_WAIT`] if it is not
    /// shown by then (a tab never shown still gets analysed).
    fn start_background_when_shown(&self) {
        let runner = self.runner.clone();
        first_paint::after_first_paint(&self.widget, first_paint::FIRST_FRAME_WAIT, move || {
            runner.start_background()
        });
    }

    /// Fits the viewers to the trace's format: a Pajé trace has one time
    /// graph, its containers (ViTE's view), and no resources view.
    fn fit_to_format(&self) {
        if self.runner.analysis().has_second_graph() {
            return;
        }
        self.control_flow.set_title("Container");
        let bar = self.layout.frame(0).label_widget();
        let title = bar
            .as_ref()
            .and_then(|bar| bar.first_child())
            .and_downcast::<gtk::Label>();
        if let (Some(bar), Some(l)) = (bar.and_downcast::<gtk::Box>(), title) {
            l.set_markup("<b>Containers</b>");
            bar.insert_child_after(&self.types_button(), Some(&l));
        }
        self.layout.show(1, false);
        // The rows bar's filter, order and collapse apply to containers;
        // its kernel switches (idle threads, wake-up and CPU arrows,
        // following a thread) do not.
        let bar = &self.rows_bar;
        bar.filter
            .set_placeholder_text(Some("Filter containers: name (regex)"));
        for w in [
            bar.hide_idle.upcast_ref::<gtk::Widget>(),
            bar.wakeups.upcast_ref(),
            bar.cpu_flow.upcast_ref(),
            bar.follow.upcast_ref(),
        ] {
            w.set_visible(false);
        }
    }

    /// The legend's show/hide menu: a check button per entity type of
    /// the trace (ViTE's wished-for filter), filled when opened.
    fn types_button(&self) -> gtk::MenuButton {
        let button = gtk::MenuButton::new();
        button.set_label("Types");
        button.set_tooltip_text(Some(
            "Show or hide states, events, links, variables by type",
        ));
        let popover = gtk::Popover::new();
        let list = gtk::Box::new(gtk::Orientation::Vertical, 2);
        popover.set_child(Some(&list));
        button.set_popover(Some(&popover));
        let runner = self.runner.clone();
        let input = self.input_sender();
        popover.connect_show(move |_| {
            while let Some(c) = list.first_child() {
                list.remove(&c);
            }
            let toggles = runner.analysis().type_toggles();
            for (i, (kind, name, on)) in toggles.into_iter().enumerate() {
                let check = gtk::CheckButton::with_label(&format!("{kind}: {name}"));
                check.set_active(on);
                let input = input.clone();
                check.connect_toggled(move |c| input.emit(TabMsg::TypeShown(i, c.is_active())));
                list.append(&check);
            }
        });
        button
    }

    /// Records user input as the tab's capture controller does, for
    /// drivers of the tab that bypass GDK's events (the tests): a move
    /// they make is then served as one made with the mouse or keys.
    pub fn note_input(&self) {
        self.runner.note_input();
    }

    /// Where the tab's widgets send their messages.
    fn input_sender(&self) -> relm4::Sender<TabMsg> {
        self.input.clone()
    }

    /// Handles a message of the tab's widgets, viewers or runner.
    pub fn update(&self, msg: TabMsg) {
        match msg {
            TabMsg::Nav(n) => self.navigate(n),
            TabMsg::ListMove(mv) => {
                self.events.move_handled();
                self.list_move(mv);
            }
            TabMsg::Follow(tid) => self.follow_thread(tid),
            TabMsg::Key(key) => {
                self.key(key);
            }
            TabMsg::TimeTyped(which) => self.time_typed(which),
            TabMsg::ApplyFilter => self.apply_filter(),
            TabMsg::Search(forward) => self.search(forward),
            TabMsg::ZoomFit => self.zoom_fit(),
            TabMsg::ZoomSelection => self.zoom_selection(),
            TabMsg::GoToBookmark(i) => {
                let b = self.time_focus().bookmarks.get(i).cloned();
                if let Some(b) = b {
                    self.navigate(Nav::Current(b.time));
                }
            }
            TabMsg::TypeShown(i, shown) => self.set_type_shown(i, shown),
            TabMsg::Cancel => self.cancel_background(),
            TabMsg::Resume => self.resume_background(),
            TabMsg::Serviced(s) => self.apply(*s),
        }
    }

    /// The entity types the legend menu lists: `(kind, name, shown)`.
    pub fn type_toggles(&self) -> Vec<(&'static str, String, bool)> {
        self.runner.analysis().type_toggles()
    }

    /// Shows or hides type `i` of [`type_toggles`](Self::type_toggles) in
    /// the views.
    pub fn set_type_shown(&self, i: usize, shown: bool) {
        self.runner.analysis().set_type_shown(i, shown);
        self.request_visible();
    }

    /// Whether the tab shows a Pajé trace.
    pub fn is_paje(&self) -> bool {
        !self.runner.analysis().has_second_graph()
    }

    /// The tab's label: the traceset's directory names.
    pub fn title(&self) -> String {
        title_of(&self.paths)
    }

    /// The tab's time state.
    pub fn time_focus(&self) -> TimeFocus {
        self.state.borrow().cursor.clone()
    }

    /// First and last event times.
    pub fn span(&self) -> TimeRange {
        self.state.borrow().span
    }

    /// Whether requests are left or a job under way (the idle source is
    /// installed, or a turn's results are not applied yet), or a time
    /// graph is being painted.
    pub fn busy(&self) -> bool {
        self.runner.active() || self.control_flow.painting() || self.resources.painting()
    }

    /// Reports `e` in the window's info bar.
    fn report_error(&self, e: &str) {
        // Sent to a window that is gone: nowhere to show it.
        let _ = self.output.send(TabOutput::Error(e.to_owned()));
    }

    /// Applies a navigation request from a view or the keyboard.
    pub fn navigate(&self, nav: Nav) {
        if self.pushing.get() {
            return;
        }
        let (window_changed, selection_changed) = {
            let mut st = self.state.borrow_mut();
            let span = st.span;
            let old = st.cursor.clone();
            let window = old.window.unwrap_or(span);
            let mut resized = false;
            match nav {
                Nav::Resized => {
                    resized = true;
                    self.align_time_axes();
                }
                Nav::Rows => {
                    self.runner
                        .analysis()
                        .set_main_rows(self.control_flow.rows());
                    resized = true;
                }
                Nav::Current(t) => {
                    st.cursor.current = Some(t);
                    // A time chosen outside the window (a row of the list,
                    // a search's match, a bookmark, a typed time) is
                    // brought into view, centred, as Trace Compass's views
                    // do; the window keeps its span.
                    if !window.contains(t) {
                        st.cursor.window = Some(clamp_window(centred_on(window, t), span));
                    }
                }
                Nav::Select(r) => {
                    // As in Trace Compass, a range's start is the time
                    // selected: the event list goes to the range's first
                    // event, and the marker stands at its edge.
                    st.cursor.selection = Some(r);
                    st.cursor.current = Some(r.start);
                }
                Nav::Unselect => st.cursor.selection = None,
                Nav::Window(w) => st.cursor.window = Some(clamp_window(w, span)),
                Nav::Zoom { factor, anchor } => {
                    st.cursor.window = Some(clamp_window(zoom_window(window, factor, anchor), span))
                }
                Nav::Pan(frac) => {
                    let d = (window.span() as f64 * frac).round() as i64;
                    st.cursor.window = Some(clamp_window(
                        TimeRange::new(window.start + d, window.end + d),
                        span,
                    ))
                }
            }
            (
                resized || st.cursor.window != old.window,
                st.cursor.selection != old.selection,
            )
        };
        if window_changed {
            self.request_visible();
        } else {
            self.push_cursor();
        }
        if selection_changed {
            let sel = self.state.borrow().cursor.selection;
            self.runner.analysis().request_statistics(sel);
            // Until they come, the table shown is another range's.
            if let Some(r) = sel.filter(|r| r.span() > 0) {
                let caption = crate::models::reading_caption(r, None);
                self.statistics.set_pending(&caption);
            }
            self.runner.kick();
        }
    }

    /// Lines up the time axes of the views shown, as Trace Compass does:
    /// the time graphs get one tree column and the histogram's plot the
    /// same left edge, the widest their labels ask for, and the nearest
    /// right edge, so that a time is at the same x in the two graphs (and
    /// in the histogram while the window is the whole trace). A view shown
    /// alone (the others hidden or maximized over) fits its own labels.
    fn align_time_axes(&self) {
        let root = self.widget.upcast_ref::<gtk::Widget>();
        // An x of `w` in the tab's coordinates.
        let to_tab = |w: &gtk::Widget, x: f64| {
            w.compute_point(root, &gtk::graphene::Point::new(x as f32, 0.0))
                .map(|p| f64::from(p.x()))
        };
        let graphs: Vec<&TimeGraphView> = [&self.control_flow, &self.resources]
            .into_iter()
            .filter(|g| g.area.is_mapped())
            .collect();
        let histogram = self.histogram.area.is_mapped();
        if graphs.len() + usize::from(histogram) < 2 {
            for g in [&self.control_flow, &self.resources] {
                g.set_tree_width(None);
            }
            self.histogram.set_plot_span(None);
            return;
        }
        // (left, right) wanted by each view, in the tab's coordinates: a
        // graph starts a pixel after its tree column, ends a pixel before
        // its area's edge. Until every view shown has been laid out, what
        // they ask for is not known: they keep their columns (a reopened
        // tab's are the last run's, lined up then).
        let mut spans = Vec::new();
        let mut origins = Vec::new();
        for g in &graphs {
            let area = g.area.upcast_ref::<gtk::Widget>();
            let (Some(fit), Some(l), Some(r)) = (
                g.fitted_tree_width(),
                to_tab(area, 0.0),
                to_tab(area, f64::from(g.area.width())),
            ) else {
                return;
            };
            spans.push((l + fit + 1.0, r - 1.0));
            origins.push(l);
        }
        let hist_area = self.histogram.area.upcast_ref::<gtk::Widget>();
        let hist_origin = to_tab(hist_area, 0.0);
        if histogram {
            let (Some(fit), Some(l), Some(r)) = (
                self.histogram.fitted_plot_left(),
                hist_origin,
                to_tab(hist_area, f64::from(self.histogram.area.width())),
            ) else {
                return;
            };
            spans.push((l + fit, r - 1.0));
        }
        let Some((left, right)) = spans
            .into_iter()
            .reduce(|(a, b), (c, d)| (a.max(c), b.min(d)))
        else {
            return;
        };
        for (g, l) in graphs.iter().zip(origins) {
            g.set_tree_width(Some((left - l - 1.0).max(0.0)));
        }
        if let (true, Some(l)) = (histogram, hist_origin) {
            self.histogram.set_plot_span(Some((left - l, right - l)));
        }
    }

    /// Sends the cursor to every view and the time bar.
    fn push_cursor(&self) {
        self.pushing.set(true);
        let c = self.time_focus();
        self.control_flow.set_time_focus(&c);
        self.resources.set_time_focus(&c);
        self.histogram.set_time_focus(&c);
        if let Some(w) = c.window {
            self.bars.start_entry.set_text(&format_time(w.start));
            self.bars.end_entry.set_text(&format_time(w.end));
        }
        if let Some(t) = c.current {
            self.bars.current_entry.set_text(&format_time(t));
            self.events.follow_time(t);
        }
        self.pushing.set(false);
    }

    /// Asks the models for what the window now shows (HIGH priority).
    pub fn request_visible(&self) {
        self.push_cursor();
        let window = {
            let st = self.state.borrow();
            st.cursor.window.unwrap_or(st.span)
        };
        {
            let mut analysis = self.runner.analysis();
            analysis.request_main_rows(self.control_flow.shown_rows());
            analysis.request_window(
                window,
                self.control_flow.graph_width(),
                self.resources.graph_width(),
            );
            analysis.request_histogram(self.histogram.bins_wanted());
        }
        self.runner.hurry();
    }

    /// Moves the event list (far or near scroll, or a new page size): at
    /// once within the list's buffer, otherwise by HIGH-priority requests
    /// the runner services (the rows are shown when they arrive).
    pub fn list_move(&self, mv: ListMove) {
        let page = {
            let Some(mut analysis) = self.runner.try_analysis() else {
                // A move while the tab is busy (a signal emitted from inside
                // a state change) is dropped; the user can repeat it.
                return;
            };
            stalls::time("tab:list-move", || analysis.list_move(mv))
        };
        self.runner.hurry();
        if let Some(page) = page {
            self.show_list(page);
        }
    }

    /// Shows the event list's rows, selecting the current event when it is
    /// among them.
    fn show_list(&self, page: ListPage) {
        self.events.show(&page.rows, &page.status, page.top);
        if let Some(t) = self.time_focus().current {
            // Select the current event when it is shown (no scrolling).
            self.pushing.set(true);
            if self.events.shows(t) {
                self.events.follow_time(t);
            }
            self.pushing.set(false);
        }
    }

    /// Whether the event list's move is under way: asked and not handled
    /// yet, its requests pending, or its rows not shown yet.
    pub fn list_reading(&self) -> bool {
        self.events.moves_queued() > 0
            || self.runner.page_in_flight()
            || self.runner.analysis().list_reading()
    }

    /// Applies a turn of the runner: new renders to the views, the list's
    /// rows, the progress bar.
    fn apply(&self, serviced: Serviced) {
        self.runner.applied(&serviced);
        let Serviced {
            updates,
            list,
            busy,
        } = serviced;
        stalls::time("tab:apply", || self.apply_updates(updates));
        if let Some(page) = list {
            stalls::time("tab:list-show", || self.show_list(page));
        }
        self.update_progress(busy);
    }

    /// Shows the whole-trace pass's progress, at most once per
    /// [`Pacing::interval`] while it runs (at once when the window becomes
    /// or stops being a preview: the label says which).
    fn update_progress(&self, busy: bool) {
        let now = Instant::now();
        let interval = self.runner.pacing().interval();
        let previewed = self.window_previewed();
        {
            let mut st = self.state.borrow_mut();
            if busy
                && st.progress_previewed == previewed
                && st.last_progress.is_some_and(|t| now - t < interval)
            {
                return;
            }
            st.last_progress = Some(now);
            st.progress_previewed = previewed;
        }
        let progress = self.runner.analysis().background_progress();
        match progress {
            Some((label, fraction, paused)) if busy || paused => {
                self.progress.show(&label, fraction, paused)
            }
            _ => self.progress.hide(),
        }
    }

    fn apply_updates(&self, u: crate::models::Updates) {
        // One control-flow render per snapshot of the pass (the other
        // views' renders of the same snapshot follow): the frames until
        // the next one are this update's.
        if u.control_flow.is_some() {
            self.runner
                .pacing()
                .updated(crate::worker::background_cpu());
        }
        if let Some(p) = u.presentation {
            self.control_flow.set_config(p);
        }
        if let Some(r) = u.control_flow {
            self.control_flow.set_render(r);
        }
        if let Some(r) = u.resources {
            self.resources.set_render(r);
        }
        if let Some(r) = u.histogram {
            self.histogram.set_render(r);
        }
        // (Before a render: the statistics read come after their last
        // progress.)
        if let Some(caption) = u.statistics_pending {
            self.statistics.set_pending(&caption);
        }
        if let Some((r, caption)) = u.statistics {
            self.statistics.set_render(r, &caption);
        }
        if let Some(f) = u.search_progress {
            self.bars.search_entry.set_progress_fraction(f);
        }
        if let Some(found) = u.search {
            self.bars.search_entry.set_progress_fraction(0.0);
            match found {
                Some(order) => {
                    let t = order.time;
                    self.events.select_event(order);
                    // (Brought into view when outside the window.)
                    self.navigate(Nav::Current(t));
                }
                None => self.report_error("Search: no matching event"),
            }
        }
        for e in u.errors {
            self.report_error(&e);
        }
    }

    /// Runs the main loop until every request is serviced and every job's
    /// result applied, or `timeout` passes (tests and exports).
    pub fn run_until_idle(&self, timeout: Duration) -> bool {
        let start = Instant::now();
        let ctx = glib::MainContext::default();
        while start.elapsed() < timeout {
            while ctx.pending() {
                ctx.iteration(false);
            }
            if !self.busy() {
                return true;
            }
            // The idle source (or a painting's poll) is dispatched.
            ctx.iteration(true);
        }
        false
    }

    /// The tab is closed (or its window): saves its configuration and
    /// stops servicing its requests, once. The window's shutdown closes
    /// its tabs while their widgets are alive; the factory's shutdown of
    /// each page comes after, and finds it done.
    pub fn close(&self) {
        if self.closed.replace(true) {
            return;
        }
        self.save_config();
        self.runner.stop();
    }

    /// Zooms to the whole trace.
    pub fn zoom_fit(&self) {
        let span = self.span();
        self.navigate(Nav::Window(span));
    }

    /// Zooms to the selection, if any.
    pub fn zoom_selection(&self) {
        if let Some(s) = self.time_focus().selection {
            self.navigate(Nav::Window(s));
        }
    }

    /// Adds a bookmark named `name` at the current time (the window's middle
    /// without one).
    pub fn add_bookmark(&self, name: &str) {
        let c = self.time_focus();
        let t = c
            .current
            .or(c.window.map(|w| w.start + (w.span() / 2) as i64))
            .unwrap_or(self.span().start);
        self.state.borrow_mut().cursor.bookmarks.push(Bookmark {
            name: name.to_owned(),
            time: t,
        });
        self.refresh_bookmarks();
        self.push_cursor();
        self.save_config();
    }

    fn refresh_bookmarks(&self) {
        let names: Vec<String> = self
            .time_focus()
            .bookmarks
            .iter()
            .map(|b| format!("{} ({})", b.name, format_time(b.time)))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let bars = &self.bars;
        bars.bookmarks_list
            .splice(0, bars.bookmarks_list.n_items(), &refs);
        bars.bookmarks_box.set_visible(!names.is_empty());
    }

    /// Types `text` in the filter bar and applies it, as the user would
    /// (Enter), at once.
    pub fn set_filter(&self, text: &str) {
        self.bars.filter_entry.set_text(text);
        self.apply_filter();
    }

    /// The inline filter error shown, if any.
    pub fn filter_error(&self) -> Option<String> {
        let e = &self.bars.filter_error;
        e.is_visible().then(|| e.text().to_string())
    }

    /// Types `text` in the search bar.
    pub fn set_search(&self, text: &str) {
        self.bars.search_entry.set_text(text);
    }

    /// What the time bar shows: window start, window end, current time.
    pub fn time_bar(&self) -> [String; 3] {
        let b = &self.bars;
        [&b.start_entry, &b.end_entry, &b.current_entry].map(|e| e.text().to_string())
    }

    /// The filter bar's text.
    pub fn filter_text(&self) -> String {
        self.bars.filter_entry.text().to_string()
    }

    /// The bookmarks the drop-down lists (none when it is hidden).
    pub fn bookmarks_listed(&self) -> Vec<String> {
        let b = &self.bars;
        if !b.bookmarks_box.is_visible() {
            return Vec::new();
        }
        (0..b.bookmarks_list.n_items())
            .filter_map(|i| b.bookmarks_list.string(i))
            .map(|s| s.to_string())
            .collect()
    }

    /// Types `start` and `end` in the time bar's window entries, each
    /// followed by Enter, as the user would, at once.
    pub fn type_window(&self, start: &str, end: &str) {
        self.bars.start_entry.set_text(start);
        self.time_typed(TimeEntry::Start);
        self.bars.end_entry.set_text(end);
        self.time_typed(TimeEntry::End);
    }

    /// Types `text` in the time bar's current-time entry and Enter, at
    /// once.
    pub fn type_current_time(&self, text: &str) {
        self.bars.current_entry.set_text(text);
        self.time_typed(TimeEntry::Current);
    }

    /// Puts the keyboard in the time bar's current-time entry, its text
    /// selected: typing a time and Enter goes there (Ctrl+G).
    pub fn focus_current_time(&self) {
        self.bars.current_entry.grab_focus();
        self.bars.current_entry.select_region(0, -1);
    }

    /// Enter in time bar entry `which`: the window's start or end, or the
    /// current time, moves to the time typed; a bad time is marked and
    /// reported.
    fn time_typed(&self, which: TimeEntry) {
        let e = self.bars.entry(which);
        let first = self.span().start;
        match parse_time(&e.text(), first) {
            Ok(t) => {
                e.remove_css_class("error");
                let w = self.time_focus().window.unwrap_or(self.span());
                match which {
                    TimeEntry::Start if t < w.end => {
                        self.navigate(Nav::Window(TimeRange::new(t, w.end)))
                    }
                    TimeEntry::End if t > w.start => {
                        self.navigate(Nav::Window(TimeRange::new(w.start, t)))
                    }
                    TimeEntry::Current => self.navigate(Nav::Current(t)),
                    _ => {
                        e.add_css_class("error");
                        self.report_error("The window's start must come before its end");
                    }
                }
            }
            Err(msg) => {
                e.add_css_class("error");
                self.report_error(&format!("Time: {msg}"));
            }
        }
    }

    /// Applies the filter bar's expression to the event list; a parse error
    /// is shown inline with its column.
    pub fn apply_filter(&self) {
        let bars = &self.bars;
        let text = bars.filter_entry.text().to_string();
        let filter = if text.trim().is_empty() {
            Ok(None)
        } else {
            Filter::new(&text).map(|f| Some(Arc::new(f)))
        };
        match filter {
            Ok(f) => {
                bars.filter_error.set_visible(false);
                bars.filter_entry.remove_css_class("error");
                let listed = {
                    let mut st = self.state.borrow_mut();
                    st.filter = f;
                    let expr = st.filter.is_some().then_some(text.as_str());
                    let listed = self.runner.analysis().set_list_filter(expr);
                    st.filter_text = text;
                    listed
                };
                match listed {
                    Ok(page) => self.show_list(page),
                    Err(e) => self.report_error(&format!("Event list filter: {e}")),
                }
                self.request_visible();
                self.save_config();
            }
            Err(e) => {
                bars.filter_error
                    .set_text(&format!("column {}: {}", e.column, e.kind));
                bars.filter_error.set_visible(true);
                bars.filter_entry.add_css_class("error");
                // Put the caret where the problem is.
                bars.filter_entry
                    .set_position(e.column.saturating_sub(1) as i32);
            }
        }
    }

    /// Follows thread `tid` (highlighted in the control flow, the event
    /// list filtered to its events), or stops following: the list's
    /// filter is cleared if it is still the one following set.
    pub fn follow_thread(&self, tid: Option<i64>) {
        let following = self.state.borrow_mut().following.take();
        let entry = &self.bars.filter_entry;
        match tid {
            Some(tid) => {
                let expr = follow_filter(tid);
                entry.set_text(&expr);
                self.state.borrow_mut().following = Some(expr);
            }
            None => {
                self.control_flow.select_row(None);
                if following.is_some_and(|f| f == entry.text().as_str()) {
                    entry.set_text("");
                }
            }
        }
        self.apply_filter();
    }

    /// Searches the next (or previous) event matching the search bar's
    /// expression from the current time, among the events the list shows:
    /// with a filter applied, a match must pass it too, or the list would
    /// select a row that is not the match.
    pub fn search(&self, forward: bool) {
        let text = self.bars.search_entry.text().to_string();
        let searched = match Filter::new(&text) {
            Ok(f) => f,
            Err(e) => {
                self.report_error(&format!("Search: column {}: {}", e.column, e.kind));
                return;
            }
        };
        let (from, span, listed) = {
            let st = self.state.borrow();
            let from = st
                .cursor
                .current
                .unwrap_or(st.cursor.window.unwrap_or(st.span).start);
            (from, st.span, st.filter.clone())
        };
        let filter = within_list(listed.as_deref(), searched);
        // From the selected event when it is the current one: another
        // event of its time may match. Otherwise after (before) every
        // event of the current time, as the list shows the first of them.
        let selected = self.events.selected_at(from);
        let search = if forward {
            Search::Next(selected.unwrap_or(RowOrder::last_at(from)))
        } else {
            Search::Previous(selected.unwrap_or(RowOrder::first_at(from)))
        };
        let searching = self.runner.analysis().search(filter, search, span);
        match searching {
            Ok(()) => self.runner.kick(),
            Err(e) => self.report_error(&format!("Search: {e}")),
        }
    }

    /// Pauses the background (LOW priority) whole-trace pass: the views
    /// keep what it computed so far, and [`resume_background`]
    /// (Self::resume_background) goes on from where it stopped.
    pub fn cancel_background(&self) {
        self.runner.analysis().pause_background();
        // One more turn: the snapshot of what was read.
        self.runner.kick();
        self.update_progress(false);
    }

    /// Resumes the paused whole-trace pass.
    pub fn resume_background(&self) {
        self.runner.analysis().resume_background();
        self.runner.kick();
        self.update_progress(true);
    }

    /// Whether the whole-trace analysis was read from the analysis store
    /// (the traces were analysed before and have not changed).
    pub fn analysis_from_store(&self) -> bool {
        self.runner.analysis().analysis_from_store()
    }

    /// How many statistics trees were started since the tab opened: one
    /// when its statistics are the store's, read ahead of its data.
    pub fn statistics_renders(&self) -> u32 {
        self.runner.analysis().statistics_renders()
    }

    /// How many time-graph renders were started since the tab opened: one
    /// when a reopened trace's store is shown at the widths of the last
    /// run.
    pub fn time_graph_renders(&self) -> u32 {
        self.runner.analysis().time_graph_renders()
    }

    /// Whether the time graphs' window is a preview (read with no state
    /// ahead of the analysis), not yet exact.
    pub fn window_previewed(&self) -> bool {
        self.runner.analysis().window_previewed()
    }

    /// Whether the whole-trace pass was split across two cores.
    pub fn pass_was_split(&self) -> bool {
        self.runner.analysis().pass_was_split()
    }

    /// Whether the whole-trace pass is paused.
    pub fn background_paused(&self) -> bool {
        self.runner.analysis().background_paused()
    }

    /// Saves the per-trace configuration (viewers, window, filter,
    /// bookmarks).
    pub fn save_config(&self) {
        let Some(dir) = config::config_dir() else {
            return;
        };
        let st = self.state.borrow();
        let layout = self.layout.saved();
        let cfg = TraceConfig {
            viewers: layout.shown,
            time_window: st.cursor.window.map(|w| (w.start, w.end)),
            filter: st.filter_text.clone(),
            bookmarks: st.cursor.bookmarks.clone(),
            panes: layout.positions,
            time_graphs: [&self.control_flow, &self.resources]
                .into_iter()
                .map_while(|v| v.saved_layout())
                .collect(),
        };
        if let Err(e) = config::save_json(&config::trace_config_path(&dir, &self.paths), &cfg) {
            eprintln!("traceloom: warning: cannot save the configuration: {e}");
        }
    }

    /// Handles a key of the views: arrows pan, +/- zoom, Home/End go to the
    /// trace's ends, F zooms to fit, S to the selection, B bookmarks,
    /// Escape clears the selection.
    pub fn key(&self, key: gtk::gdk::Key) -> bool {
        use gtk::gdk::Key;
        if !is_view_key(key) {
            return false;
        }
        let c = self.time_focus();
        let w = c.window.unwrap_or(self.span());
        let mid = w.start + (w.span() / 2) as i64;
        let anchor = c.current.filter(|t| w.contains(*t)).unwrap_or(mid);
        match key {
            Key::Left => self.navigate(Nav::Pan(-0.1)),
            Key::Right => self.navigate(Nav::Pan(0.1)),
            Key::plus | Key::equal | Key::KP_Add => self.navigate(Nav::Zoom {
                factor: 0.5,
                anchor,
            }),
            Key::minus | Key::KP_Subtract => self.navigate(Nav::Zoom {
                factor: 2.0,
                anchor,
            }),
            Key::Home => {
                let s = self.span().start;
                self.navigate(Nav::Window(TimeRange::new(s, s + w.span() as i64)))
            }
            Key::End => {
                let e = self.span().end;
                self.navigate(Nav::Window(TimeRange::new(e - w.span() as i64, e)))
            }
            Key::f | Key::F => self.zoom_fit(),
            Key::s | Key::S => self.zoom_selection(),
            Key::Escape => self.navigate(Nav::Unselect),
            Key::b | Key::B => {
                let n = self.time_focus().bookmarks.len() + 1;
                self.add_bookmark(&format!("B{n}"));
            }
            _ => return false,
        }
        true
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.runner.stop();
    }
}

/// The label of a tab on `paths`: their directory (or file) names.
fn title_of(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Builds the widgets of a tab, their signals sending `input` messages,
/// and its runner over `analysis`.
fn build(
    paths: Vec<PathBuf>,
    analysis: Box<dyn Analysis>,
    span: TimeRange,
    title: String,
    input: relm4::Sender<TabMsg>,
    output: relm4::Sender<TabOutput>,
) -> Tab {
    let widget = gtk::Box::new(gtk::Orientation::Vertical, 4);
    let input_seen = Rc::new(Cell::new(false));
    watch_input(&widget, input_seen.clone());
    let pacing = Pacing::watch(&widget);
    let runner = Runner::new(analysis, input_seen, pacing, input.clone(), title);

    // The time, filter and search bars.
    let bars_c = TabBars::builder().launch(()).forward(&input, TabMsg::from);
    widget.append(bars_c.widget());
    let bars = bars_c.model().clone();
    // Below the viewers: the progress of background work, with cancel.
    let progress_c = ProgressStrip::builder()
        .launch(())
        .forward(&input, TabMsg::from);
    let progress = progress_c.model().clone();

    // The viewers: components whose navigation comes back as the tab's
    // messages.
    let config = PresentationConfig::control_flow();
    let cf = TimeGraphView::builder()
        .launch(TimeGraphInit {
            title: "Process".into(),
            config: config.clone(),
        })
        .forward(&input, TabMsg::Nav);
    let control_flow = cf.model().clone();
    let components = Components {
        _bars: bars_c,
        _progress: progress_c,
        _rows_bar: RowsBar::builder()
            .launch(control_flow.clone())
            .forward(&input, |RowsOutput::Follow(tid)| TabMsg::Follow(tid)),
        _control_flow: cf,
        _resources: TimeGraphView::builder()
            .launch(TimeGraphInit {
                title: "Resource".into(),
                config: traceloom_viewers::model::resources::presentation(),
            })
            .forward(&input, TabMsg::Nav),
        _events: EventListView::builder()
            .launch(())
            .forward(&input, |out| match out {
                ListOutput::Nav(n) => TabMsg::Nav(n),
                ListOutput::Move(mv) => TabMsg::ListMove(mv),
            }),
        _statistics: StatisticsView::builder().launch(config.clone()).detach(),
        _histogram: HistogramView::builder()
            .launch(config)
            .forward(&input, TabMsg::Nav),
    };
    let rows_bar = components._rows_bar.model().clone();
    let resources = components._resources.model().clone();
    let events = components._events.model().clone();
    events.set_span(span.start, span.end);
    let statistics = components._statistics.model().clone();
    let histogram = components._histogram.model().clone();

    let layout = Layout::new(
        [
            control_flow.widget.upcast_ref(),
            resources.widget.upcast_ref(),
            events.widget.upcast_ref(),
            statistics.widget.upcast_ref(),
            histogram.area.upcast_ref(),
        ],
        &events.details_widget,
        &rows_bar.widget,
    );
    bars.time_bar.append(&layout.view_menu);
    let main = layout.widget.clone();
    let keys = gtk::EventControllerKey::new();
    {
        let input = input.clone();
        keys.connect_key_pressed(move |_, key, _, mods| {
            use gtk::gdk::ModifierType as M;
            if mods.intersects(M::CONTROL_MASK | M::ALT_MASK) || !is_view_key(key) {
                return glib::Propagation::Proceed;
            }
            input.emit(TabMsg::Key(key));
            glib::Propagation::Stop
        });
    }
    main.add_controller(keys);
    widget.append(&main);

    widget.append(&progress.widget);

    Tab {
        widget,
        paths,
        control_flow,
        rows_bar,
        resources,
        events,
        statistics,
        histogram,
        _components: components,
        layout,
        bars,
        progress,
        state: RefCell::new(TabState {
            last_progress: None,
            progress_previewed: false,
            span,
            cursor: TimeFocus::default(),
            filter: None,
            filter_text: String::new(),
            following: None,
        }),
        runner,
        input,
        output,
        pushing: Cell::new(false),
        closed: Cell::new(false),
    }
}

/// A tab as a page of the window's notebook: a relm4 factory component
/// whose messages are its widgets' and viewers' (see the module
/// documentation).
pub struct TabPage {
    tab: Rc<Tab>,
}

impl TabPage {
    /// The tab's state and widgets.
    pub fn tab(&self) -> Rc<Tab> {
        self.tab.clone()
    }
}

impl FactoryComponent for TabPage {
    type ParentWidget = TabBook;
    type CommandOutput = ();
    type Input = TabMsg;
    type Output = TabOutput;
    type Init = Opened;
    type Root = gtk::Box;
    type Widgets = ();
    type Index = DynamicIndex;

    fn init_model(opened: Opened, _index: &DynamicIndex, sender: FactorySender<Self>) -> Self {
        let tab = Tab::new(
            opened,
            sender.input_sender().clone(),
            sender.output_sender().clone(),
        );
        TabPage { tab }
    }

    fn init_root(&self) -> gtk::Box {
        self.tab.widget.clone()
    }

    fn init_widgets(
        &mut self,
        index: &DynamicIndex,
        _root: gtk::Box,
        page: &gtk::Widget,
        sender: FactorySender<Self>,
    ) {
        // The notebook tab: the traceset's name and a close button.
        let label = gtk::Box::new(gtk::Orientation::Horizontal, 4);
        label.append(&gtk::Label::new(Some(&self.tab.title())));
        let close = gtk::Button::from_icon_name("window-close-symbolic");
        close.add_css_class("flat");
        let index = index.clone();
        close.connect_clicked(move |_| {
            let _ = sender.output(TabOutput::Close(index.clone()));
        });
        label.append(&close);
        let notebook = page
            .ancestor(gtk::Notebook::static_type())
            .and_downcast::<gtk::Notebook>();
        if let Some(notebook) = notebook {
            notebook.set_tab_label(page, Some(&label));
            notebook.set_tab_reorderable(page, false);
        }
    }

    fn update(&mut self, msg: TabMsg, _sender: FactorySender<Self>) {
        self.tab.update(msg);
    }

    fn shutdown(&mut self, _widgets: &mut (), _output: relm4::Sender<TabOutput>) {
        self.tab.close();
    }
}

/// A tab outside the window (tests, measurements): a one-page notebook
/// without tabs, its errors given to a function.
pub struct TabHost {
    book: TabBook,
    tabs: FactoryVecDeque<TabPage>,
}

impl TabHost {
    /// Opens `paths` in a tab of its own, reporting its errors to
    /// `on_error`.
    pub fn open(paths: Vec<PathBuf>, on_error: impl Fn(&str) + 'static) -> Result<Self, String> {
        let opened = open(paths)?;
        let book = TabBook::new();
        let notebook = book.notebook();
        notebook.set_show_tabs(false);
        notebook.set_show_border(false);
        let (errors, received) = relm4::channel::<TabOutput>();
        relm4::spawn_local(async move {
            while let Some(out) = received.recv().await {
                if let TabOutput::Error(e) = out {
                    on_error(&e);
                }
            }
        });
        let mut tabs = FactoryVecDeque::builder()
            .launch(book.clone())
            .forward(&errors, |out| out);
        tabs.guard().push_back(opened);
        Ok(TabHost { book, tabs })
    }

    /// The tab.
    pub fn tab(&self) -> Rc<Tab> {
        self.tabs[0].tab()
    }

    /// The widget to show: the tab's one-page notebook.
    pub fn widget(&self) -> &TabBook {
        &self.book
    }
}

/// Records, in `flag`, every input event (key, button, scroll, pointer
/// motion, touch) that reaches `widget` or its children, before they see
/// it (capture phase): the servicing of requests yields to input, not to
/// every ready main-context source.
fn watch_input(widget: &impl IsA<gtk::Widget>, flag: Rc<Cell<bool>>) {
    let c = gtk::EventControllerLegacy::new();
    c.set_propagation_phase(gtk::PropagationPhase::Capture);
    c.connect_event(move |_, ev| {
        use gtk::gdk::EventType as T;
        if matches!(
            ev.event_type(),
            T::KeyPress
                | T::KeyRelease
                | T::ButtonPress
                | T::ButtonRelease
                | T::Scroll
                | T::MotionNotify
                | T::TouchBegin
                | T::TouchUpdate
                | T::TouchEnd
        ) {
            flag.set(true);
            crate::views::painter::note_input();
        }
        glib::Propagation::Proceed
    });
    widget.as_ref().add_controller(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_keeps_anchor_and_min_span() {
        let w = TimeRange::new(1000, 3000);
        let z = zoom_window(w, 0.5, 1500);
        assert_eq!((z.start, z.end), (1250, 2250));
        let tiny = zoom_window(TimeRange::new(0, 1000), 0.1, 500);
        assert!(tiny.span() >= MIN_SPAN);
    }

    #[test]
    fn clamp_keeps_width_inside_span() {
        let span = TimeRange::new(0, 10_000);
        let c = clamp_window(TimeRange::new(9_000, 12_000), span);
        assert_eq!((c.start, c.end), (7_000, 10_000));
        let c = clamp_window(TimeRange::new(-500, 500), span);
        assert_eq!((c.start, c.end), (0, 1_000));
        let c = clamp_window(TimeRange::new(-5, 50_000), span);
        assert_eq!((c.start, c.end), (0, 10_000));
    }

    /// An event of a name on a CPU, all a search in the tests looks at.
    struct Named(&'static str, u64);

    impl traceloom_filter::FilterSubject for Named {
        fn event_name(&self) -> &str {
            self.0
        }
        fn time_ns(&self) -> i64 {
            0
        }
        fn cpu(&self) -> Option<u64> {
            Some(self.1)
        }
        fn trace_name(&self) -> &str {
            "t"
        }
        fn field(
            &self,
            _: traceloom_filter::FieldScope,
            _: &[traceloom_filter::PathElem],
        ) -> Option<traceloom_filter::Value<'_>> {
            None
        }
        fn state(&self, _: traceloom_filter::StateKey) -> Option<traceloom_filter::Value<'_>> {
            None
        }
    }

    #[test]
    fn a_search_finds_only_listed_events() {
        let searched = || Filter::new(r#"event.name == "sched_wakeup""#).unwrap();
        let listed = Filter::new("cpu == 1").unwrap();
        let f = within_list(Some(&listed), searched());
        assert!(f.matches(&Named("sched_wakeup", 1)));
        // A wake-up the list filters out is no match: the list would
        // select another event.
        assert!(!f.matches(&Named("sched_wakeup", 2)));
        assert!(!f.matches(&Named("sched_switch", 1)));
        // Without a filter, every wake-up matches.
        let f = within_list(None, searched());
        assert!(f.matches(&Named("sched_wakeup", 2)));
    }

    #[test]
    fn typed_times() {
        // 1970-01-01 00:00:10 UTC as the trace's first event.
        let first = 10_000_000_000;
        assert_eq!(parse_time("00:00:12.5", first), Ok(12_500_000_000));
        assert_eq!(parse_time("12.000000001", first), Ok(12_000_000_001));
        assert!(parse_time("noon", first).is_err());
        assert_eq!(format_time(12_500_000_000), "00:00:12.500000000");
    }
}
