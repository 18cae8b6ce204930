//! A tab: one traceset with its own time window, current time, selection,
//! filter and bookmarks, the five viewers, and the idle-loop servicing of
//! their events requests.
//!
//! The viewer models' [`Session`] (traceset + scheduler) lives on the main
//! thread: every change of window asks the models for what is now visible
//! (HIGH priority); the whole-trace work (state pass, statistics,
//! histogram) runs at LOW priority. A `glib::idle_add_local` source calls
//! the scheduler's `service()` with a [`SERVICE_BUDGET`] of at most 10 ms,
//! yielding after one chunk when input reached the tab since the last turn
//! (a capture-phase controller records it): the interruption of the v2
//! algorithm, after which the visible viewers' HIGH requests are read
//! first. Frames, timers and painting results need no interruption: GTK
//! dispatches them before this idle-priority source. It also yields rather than wait for a decoding thread (the
//! scheduler's `service_nonblocking`), and then sleeps a millisecond in
//! the main loop, input still handled (as it does while only jobs are
//! left). It removes itself when nothing is pending, and is added again by
//! the next request. Building the time-graph models and rendering the
//! graphs and the statistics run as jobs on threads of their own
//! ([`crate::worker`]), painting on painting threads
//! ([`crate::views::painter`]). The event list's moves are HIGH requests
//! on the same session: the rows are shown when they arrive.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_engine::request::{Budget, ServiceStatus};
use traceloom_filter::Filter;
use traceloom_viewers::model::{PajeSession, Session};
use traceloom_viewers::PresentationConfig;

use crate::analysis::{self, Analysis, KernelTab};
use crate::config::{self, Bookmark, TraceConfig};
use crate::layout::{Layout, SavedLayout};
use crate::models::{ListPage, Search};
use crate::pacing::Pacing;
use crate::paje_models::PajeTab;
use crate::stalls;
use crate::time_text::{format_time, parse_time};
use crate::views::eventlist::{EventListView, ListMove, ListSink};
use crate::views::histogram::HistogramView;
use crate::views::rows_bar::{FollowSink, RowsBar};
use crate::views::statistics::StatisticsView;
use crate::views::timegraph::TimeGraphView;
use crate::views::{Nav, NavSink, TimeFocus};
use crate::worker::SERVICE_BUDGET;

/// Smallest window span, in ns, zooming in stops at.
const MIN_SPAN: u64 = 1_000;
/// Longest wait for a tab's first frame before the whole-trace analysis
/// starts anyway (a tab never shown still gets analysed).
const FIRST_FRAME_WAIT: Duration = Duration::from_secs(2);
/// How long the servicing sleeps when the read waits for a decoding
/// thread: about a batch's decoding time (a thousand events), short enough
/// not to slow the read down, long enough not to spin.
const DATA_WAIT: Duration = Duration::from_millis(1);

/// What the servicing idle source does after a turn.
enum Turn {
    /// Run again (requests or jobs remain).
    Again,
    /// Sleep [`DATA_WAIT`] first, then run again: the read waits for a
    /// decoding thread, or only jobs are left.
    Sleep,
    /// Remove itself: nothing remains.
    Done,
}

/// The tab's mutable state.
struct TabState {
    /// The trace's models and their session (serviced by the idle
    /// source): a CTF traceset's or a Pajé trace's.
    analysis: Box<dyn Analysis>,
    /// The idle source servicing the requests, while there are any (or
    /// the timeout re-installing it, while the read waits for data).
    idle: Option<glib::SourceId>,
    /// When the progress bar was last updated.
    last_progress: Option<Instant>,
    /// First and last event times of the traceset.
    span: TimeRange,
    cursor: TimeFocus,
    filter: Option<Arc<Filter>>,
    filter_text: String,
    /// The list filter "follow thread" set, while following.
    following: Option<String>,
}

/// Widgets of a tab.
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
    /// The viewers' panes, title bars and View menu.
    pub layout: Layout,
    start_entry: gtk::Entry,
    end_entry: gtk::Entry,
    current_entry: gtk::Entry,
    filter_entry: gtk::Entry,
    filter_error: gtk::Label,
    search_entry: gtk::Entry,
    bookmarks_box: gtk::DropDown,
    bookmarks_list: gtk::StringList,
    progress_box: gtk::Box,
    progress: gtk::ProgressBar,
    /// Pauses the whole-trace pass.
    pub cancel_button: gtk::Button,
    /// Resumes the paused whole-trace pass.
    pub resume_button: gtk::Button,
    state: RefCell<TabState>,
    /// Where errors go (the window's info bar).
    report_error: Box<dyn Fn(&str)>,
    /// Why the saved configuration was ignored, if it was.
    config_warning: RefCell<Option<String>>,
    me: RefCell<Weak<Tab>>,
    /// Guards against re-entrant cursor pushes (a view reacting to a cursor
    /// update by sending navigation).
    pushing: Cell<bool>,
    /// Input reached the tab since the servicing last looked
    /// ([`watch_input`]).
    input: Rc<Cell<bool>>,
    /// How often background updates may come, by what their frames cost.
    pacing: Rc<Pacing>,
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

impl Tab {
    /// Opens `paths` in a new tab; errors (unreadable traces, empty
    /// traceset) are returned for the info bar.
    pub fn open(paths: Vec<PathBuf>, report_error: Box<dyn Fn(&str)>) -> Result<Rc<Tab>, String> {
        let paths = analysis::trace_paths(paths);
        let named = |e: String| {
            // The reader's errors usually name the path already.
            let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            if named.iter().any(|p| e.contains(p.as_str())) {
                e
            } else {
                format!("{}: {e}", named.join(", "))
            }
        };
        let analysis: Box<dyn Analysis> = if analysis::is_paje(&paths) {
            let mut session = PajeSession::open(&paths[0]).map_err(|e| named(e.to_string()))?;
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
        } else {
            let session = Session::open(&paths).map_err(|e| named(e.to_string()))?;
            Box::new(KernelTab::new(session))
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

        let tab = Rc::new_cyclic(|me: &Weak<Tab>| {
            let nav: NavSink = {
                let me = me.clone();
                Rc::new(move |n| {
                    if let Some(t) = me.upgrade() {
                        t.navigate(n);
                    }
                })
            };
            build(
                paths.clone(),
                TabState {
                    analysis,
                    idle: None,
                    last_progress: None,
                    span,
                    cursor: TimeFocus::default(),
                    filter: None,
                    filter_text: String::new(),
                    following: None,
                },
                nav,
                report_error,
                me.clone(),
            )
        });
        *tab.config_warning.borrow_mut() = config_warning;
        // The keyboard starts on the control flow (arrows, zoom keys), not
        // in a text field of the time bar, whose blinking cursor would
        // ask for a frame many times a second for as long as it has focus.
        tab.control_flow.area.connect_map(|area| {
            area.grab_focus();
        });
        *tab.me.borrow_mut() = Rc::downgrade(&tab);
        tab.connect_bars();

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
        tab.layout.restore(&SavedLayout {
            shown: saved.viewers.clone(),
            positions: saved.panes.clone(),
        });
        if !saved.filter.is_empty() {
            tab.filter_entry.set_text(&saved.filter);
            tab.apply_filter();
        }
        tab.fit_to_format();
        tab.start_background_when_shown();
        tab.kick();
        tab.list_move(ListMove::ToTime(window.start));
        tab.request_visible();
        Ok(tab)
    }

    /// Starts the whole-trace analysis once the tab's first frame is
    /// painted (or after [`FIRST_FRAME_WAIT`] if it is not shown by then).
    /// GTK's first frame sets its renderer up: with the GL renderer on a
    /// software rasterizer that is most of a second of the main thread
    /// (0.7 s of CPU for a bare window of 40 buttons; `TRACELOOM_GUI_ONLY=
    /// baseline` in the GUI tests measures it), which the read would only
    /// compete with for the cores, and stall behind.
    fn start_background_when_shown(self: &Rc<Self>) {
        let started = Rc::new(Cell::new(false));
        let start = {
            let me = Rc::downgrade(self);
            move || {
                if started.replace(true) {
                    return;
                }
                if let Some(t) = me.upgrade() {
                    t.state.borrow_mut().analysis.start_background();
                    t.kick();
                }
            }
        };
        let on_paint = start.clone();
        self.widget.connect_map(move |w| {
            let Some(clock) = w.frame_clock() else {
                on_paint();
                return;
            };
            let handler: Rc<Cell<Option<glib::SignalHandlerId>>> = Rc::default();
            let (h, start, c) = (handler.clone(), on_paint.clone(), clock.clone());
            handler.set(Some(clock.connect_after_paint(move |_| {
                start();
                if let Some(id) = h.take() {
                    c.disconnect(id);
                }
            })));
        });
        glib::timeout_add_local_once(FIRST_FRAME_WAIT, start);
    }

    /// Fits the viewers to the trace's format: a Pajé trace has one time
    /// graph, its containers (ViTE's view), and no resources view.
    fn fit_to_format(&self) {
        if self.state.borrow().analysis.has_second_graph() {
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
        let me = self.me.borrow().clone();
        popover.connect_show(move |_| {
            let Some(tab) = me.upgrade() else { return };
            while let Some(c) = list.first_child() {
                list.remove(&c);
            }
            for (i, (kind, name, on)) in tab.type_toggles().into_iter().enumerate() {
                let check = gtk::CheckButton::with_label(&format!("{kind}: {name}"));
                check.set_active(on);
                let me = me.clone();
                check.connect_toggled(move |c| {
                    if let Some(tab) = me.upgrade() {
                        tab.set_type_shown(i, c.is_active());
                    }
                });
                list.append(&check);
            }
        });
        button
    }

    /// The entity types the legend menu lists: `(kind, name, shown)`.
    pub fn type_toggles(&self) -> Vec<(&'static str, String, bool)> {
        self.state.borrow().analysis.type_toggles()
    }

    /// Shows or hides type `i` of [`type_toggles`](Self::type_toggles) in
    /// the views.
    pub fn set_type_shown(&self, i: usize, shown: bool) {
        self.state.borrow_mut().analysis.set_type_shown(i, shown);
        self.request_visible();
    }

    /// Whether the tab shows a Pajé trace.
    pub fn is_paje(&self) -> bool {
        !self.state.borrow().analysis.has_second_graph()
    }

    /// The tab's label: the traceset's directory names.
    pub fn title(&self) -> String {
        self.paths
            .iter()
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| p.display().to_string())
            })
            .collect::<Vec<_>>()
            .join(" + ")
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
    /// installed), or a time graph is being painted.
    pub fn busy(&self) -> bool {
        self.state.borrow().idle.is_some()
            || self.control_flow.painting()
            || self.resources.painting()
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
                Nav::Resized => resized = true,
                Nav::Rows => {
                    st.analysis.set_main_rows(self.control_flow.rows());
                    resized = true;
                }
                Nav::Current(t) => st.cursor.current = Some(t),
                Nav::Select(r) => st.cursor.selection = Some(r),
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
            {
                let mut st = self.state.borrow_mut();
                let sel = st.cursor.selection;
                st.analysis.request_statistics(sel);
            }
            self.kick();
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
            self.start_entry.set_text(&format_time(w.start));
            self.end_entry.set_text(&format_time(w.end));
        }
        if let Some(t) = c.current {
            self.current_entry.set_text(&format_time(t));
            self.events.follow_time(t);
        }
        self.pushing.set(false);
    }

    /// Asks the models for what the window now shows (HIGH priority).
    pub fn request_visible(&self) {
        self.push_cursor();
        {
            let mut st = self.state.borrow_mut();
            let window = st.cursor.window.unwrap_or(st.span);
            st.analysis.request_window(
                window,
                self.control_flow.graph_width(),
                self.resources.graph_width(),
            );
            st.analysis.request_histogram(self.histogram.bins_wanted());
        }
        self.kick();
    }

    /// Moves the event list (far or near scroll, or a new page size): at
    /// once within the list's buffer, otherwise by HIGH-priority requests
    /// the idle source services (the rows are shown when they arrive).
    pub fn list_move(&self, mv: ListMove) {
        let page = {
            let Ok(mut st) = self.state.try_borrow_mut() else {
                // A move while the tab is busy (a signal emitted from inside
                // a state change) is dropped; the user can repeat it.
                return;
            };
            stalls::time("tab:list-move", || st.analysis.list_move(mv))
        };
        self.kick();
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
            if page.rows.first().is_some_and(|r| r.time <= t)
                && page.rows.last().is_some_and(|r| t <= r.time)
            {
                self.events.follow_time(t);
            }
            self.pushing.set(false);
        }
    }

    /// Whether the event list's move is under way (its requests pending).
    pub fn list_reading(&self) -> bool {
        self.state.borrow().analysis.list_reading()
    }

    /// Makes sure the idle source servicing requests is installed (or the
    /// timeout re-installing it, while the read waits for data).
    fn kick(&self) {
        let mut st = self.state.borrow_mut();
        if st.idle.is_some() {
            return;
        }
        st.idle = Some(self.idle_source());
    }

    /// The idle source servicing requests. When the read waits for a
    /// decoding thread or only jobs are left, it removes itself for
    /// [`DATA_WAIT`], so that the main loop sleeps meanwhile rather than
    /// spin.
    fn idle_source(&self) -> glib::SourceId {
        let me = self.me.borrow().clone();
        glib::idle_add_local(move || {
            let Some(tab) = me.upgrade() else {
                return glib::ControlFlow::Break;
            };
            match tab.service_once() {
                Turn::Again => glib::ControlFlow::Continue,
                Turn::Done => {
                    tab.state.borrow_mut().idle = None;
                    stalls::report_done(&tab.title());
                    glib::ControlFlow::Break
                }
                Turn::Sleep => {
                    let me = me.clone();
                    let wait = glib::timeout_add_local_once(DATA_WAIT, move || {
                        if let Some(tab) = me.upgrade() {
                            let idle = tab.idle_source();
                            tab.state.borrow_mut().idle = Some(idle);
                        }
                    });
                    tab.state.borrow_mut().idle = Some(wait);
                    glib::ControlFlow::Break
                }
            }
        })
    }

    /// One turn of the idle source: collects what completed (taking a
    /// snapshot of the kernel pass when one is due), services for what is
    /// left of [`SERVICE_BUDGET`] (after one chunk when input arrived since
    /// the last turn), hands new renders to the views and updates the
    /// progress bar. Returns whether work remains, and whether to sleep
    /// first.
    fn service_once(&self) -> Turn {
        let started = Instant::now();
        let (status, updates, list) = {
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            st.analysis.set_update_interval(self.pacing.interval());
            let mut updates = stalls::time("tab:poll", || st.analysis.poll());
            // Snapshots of the pass are taken in the poll: their cost
            // spaces the updates as their frames' does.
            self.pacing.charge(started.elapsed());
            // The poll's snapshot counts against the turn's budget; with
            // none left, servicing waits for the next turn.
            let budget = SERVICE_BUDGET.saturating_sub(started.elapsed());
            let status = if budget.is_zero() {
                ServiceStatus::BudgetSpent
            } else {
                stalls::time("tab:service", || {
                    // Input since the last turn interrupts the read after
                    // its first chunk (the turn's budget bounds the delay
                    // of input arriving during it); so does an event not
                    // decoded yet (waiting for it would block input).
                    // Other ready sources (timers, frames, painting
                    // results) do not: GTK dispatches them before this
                    // idle source anyway.
                    let input = self.input.replace(false);
                    st.analysis.service(Budget::duration(budget), input)
                })
            };
            if status == ServiceStatus::Idle {
                // The last requests completed in this call: collected now,
                // or nothing would be left to keep the source installed.
                // (With no request left, no snapshot can be due: this poll
                // stays cheap.)
                let more = stalls::time("tab:poll", || st.analysis.poll());
                updates.merge(more);
            }
            // The event list's move under way: its next request, or its
            // rows.
            let list = stalls::time("tab:list-poll", || st.analysis.list_poll());
            (status, updates, list)
        };
        stalls::time("tab:apply", || self.apply_updates(updates));
        if let Some(page) = list {
            stalls::time("tab:list-show", || self.show_list(page));
        }
        let busy = {
            let mut st = self.state.borrow_mut();
            st.analysis.busy() || status != ServiceStatus::Idle
        };
        self.update_progress(busy);
        match status {
            _ if !busy => Turn::Done,
            // Only jobs left: their results are polled for, and spinning
            // meanwhile would take a CPU from them.
            ServiceStatus::Idle | ServiceStatus::WaitingForData => Turn::Sleep,
            _ => Turn::Again,
        }
    }

    /// Shows the whole-trace pass's progress, at most once per
    /// [`Pacing::interval`] while it runs.
    fn update_progress(&self, busy: bool) {
        let now = Instant::now();
        let progress = {
            let mut st = self.state.borrow_mut();
            if busy
                && st
                    .last_progress
                    .is_some_and(|t| now - t < self.pacing.interval())
            {
                return;
            }
            st.last_progress = Some(now);
            st.analysis.background_progress()
        };
        match progress {
            Some((label, fraction, paused)) if busy || paused => {
                self.cancel_button.set_visible(!paused);
                self.resume_button.set_visible(paused);
                // A new text makes GTK lay the window out again: only
                // when it changed (the percentage moves slowly on a
                // large trace).
                if self.progress.text().as_deref() != Some(label.as_str()) {
                    self.progress.set_text(Some(&label));
                }
                self.progress.set_fraction(fraction.clamp(0.0, 1.0));
                self.progress_box.set_visible(true);
            }
            _ => self.progress_box.set_visible(false),
        }
    }

    fn apply_updates(&self, u: crate::models::Updates) {
        // One control-flow render per snapshot of the pass (the other
        // views' renders of the same snapshot follow): the frames until
        // the next one are this update's.
        if u.control_flow.is_some() {
            self.pacing.updated(crate::worker::background_cpu());
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
        if let Some((r, caption)) = u.statistics {
            self.statistics.set_render(r, &caption);
        }
        if let Some(found) = u.search {
            match found {
                Some(t) => {
                    self.navigate(Nav::Current(t));
                    let w = self.time_focus().window.unwrap_or(self.span());
                    if !w.contains(t) {
                        let half = (w.span() / 2) as i64;
                        self.navigate(Nav::Window(TimeRange::new(t - half, t + half)));
                    }
                }
                None => (self.report_error)("Search: no matching event"),
            }
        }
        for e in u.errors {
            (self.report_error)(&e);
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
        self.bookmarks_list
            .splice(0, self.bookmarks_list.n_items(), &refs);
        self.bookmarks_box.set_visible(!names.is_empty());
    }

    /// Types `text` in the filter bar and applies it, as the user would.
    pub fn set_filter(&self, text: &str) {
        self.filter_entry.set_text(text);
        self.filter_entry.emit_activate();
    }

    /// The inline filter error shown, if any.
    pub fn filter_error(&self) -> Option<String> {
        self.filter_error
            .is_visible()
            .then(|| self.filter_error.text().to_string())
    }

    /// Types `text` in the search bar.
    pub fn set_search(&self, text: &str) {
        self.search_entry.set_text(text);
    }

    /// Why the traceset's saved configuration was ignored (unreadable or
    /// corrupted), if it was: the window shows it as a warning.
    pub fn config_warning(&self) -> Option<String> {
        self.config_warning.borrow().clone()
    }

    /// What the time bar shows: window start, window end, current time.
    pub fn time_bar(&self) -> [String; 3] {
        [&self.start_entry, &self.end_entry, &self.current_entry].map(|e| e.text().to_string())
    }

    /// The filter bar's text.
    pub fn filter_text(&self) -> String {
        self.filter_entry.text().to_string()
    }

    /// The bookmarks the drop-down lists (none when it is hidden).
    pub fn bookmarks_listed(&self) -> Vec<String> {
        if !self.bookmarks_box.is_visible() {
            return Vec::new();
        }
        (0..self.bookmarks_list.n_items())
            .filter_map(|i| self.bookmarks_list.string(i))
            .map(|s| s.to_string())
            .collect()
    }

    /// Types `start` and `end` in the time bar's window entries, activating
    /// each, as the user would.
    pub fn type_window(&self, start: &str, end: &str) {
        self.start_entry.set_text(start);
        self.start_entry.emit_activate();
        self.end_entry.set_text(end);
        self.end_entry.emit_activate();
    }

    /// Types `text` in the time bar's current-time entry and activates it.
    pub fn type_current_time(&self, text: &str) {
        self.current_entry.set_text(text);
        self.current_entry.emit_activate();
    }

    /// Puts the keyboard in the time bar's current-time entry, its text
    /// selected: typing a time and Enter goes there (Ctrl+G).
    pub fn focus_current_time(&self) {
        self.current_entry.grab_focus();
        self.current_entry.select_region(0, -1);
    }

    /// Applies the filter bar's expression to the event list; a parse error
    /// is shown inline with its column.
    pub fn apply_filter(&self) {
        let text = self.filter_entry.text().to_string();
        let filter = if text.trim().is_empty() {
            Ok(None)
        } else {
            Filter::new(&text).map(|f| Some(Arc::new(f)))
        };
        match filter {
            Ok(f) => {
                self.filter_error.set_visible(false);
                self.filter_entry.remove_css_class("error");
                let listed = {
                    let mut st = self.state.borrow_mut();
                    let st = &mut *st;
                    st.filter = f;
                    let expr = st.filter.is_some().then_some(text.as_str());
                    let listed = st.analysis.set_list_filter(expr);
                    st.filter_text = text;
                    listed
                };
                match listed {
                    Ok(page) => self.show_list(page),
                    Err(e) => (self.report_error)(&format!("Event list filter: {e}")),
                }
                self.request_visible();
                self.save_config();
            }
            Err(e) => {
                self.filter_error
                    .set_text(&format!("column {}: {}", e.column, e.kind));
                self.filter_error.set_visible(true);
                self.filter_entry.add_css_class("error");
                // Put the caret where the problem is.
                self.filter_entry
                    .set_position(e.column.saturating_sub(1) as i32);
            }
        }
    }

    /// Follows thread `tid` (highlighted in the control flow, the event
    /// list filtered to its events), or stops following: the list's
    /// filter is cleared if it is still the one following set.
    pub fn follow_thread(&self, tid: Option<i64>) {
        let following = self.state.borrow_mut().following.take();
        match tid {
            Some(tid) => {
                let expr = format!("state.tid == {tid}");
                self.filter_entry.set_text(&expr);
                self.state.borrow_mut().following = Some(expr);
            }
            None => {
                self.control_flow.select_row(None);
                if following.is_some_and(|f| f == self.filter_entry.text().as_str()) {
                    self.filter_entry.set_text("");
                }
            }
        }
        self.apply_filter();
    }

    /// Searches the next (or previous) event matching the search bar's
    /// expression from the current time.
    pub fn search(&self, forward: bool) {
        let text = self.search_entry.text().to_string();
        let filter = match Filter::new(&text) {
            Ok(f) => f,
            Err(e) => {
                (self.report_error)(&format!("Search: column {}: {}", e.column, e.kind));
                return;
            }
        };
        let searching = {
            let mut st = self.state.borrow_mut();
            let from = st
                .cursor
                .current
                .unwrap_or(st.cursor.window.unwrap_or(st.span).start);
            let search = if forward {
                Search::Next(from)
            } else {
                Search::Previous(from)
            };
            let span = st.span;
            st.analysis.search(filter, search, span)
        };
        match searching {
            Ok(()) => self.kick(),
            Err(e) => (self.report_error)(&format!("Search: {e}")),
        }
    }

    /// Pauses the background (LOW priority) whole-trace pass: the views
    /// keep what it computed so far, and [`resume_background`]
    /// (Self::resume_background) goes on from where it stopped.
    pub fn cancel_background(&self) {
        {
            self.state.borrow_mut().analysis.pause_background();
        }
        // One more turn: the snapshot of what was read.
        self.kick();
        self.update_progress(false);
    }

    /// Resumes the paused whole-trace pass.
    pub fn resume_background(&self) {
        {
            self.state.borrow_mut().analysis.resume_background();
        }
        self.kick();
        self.update_progress(true);
    }

    /// Whether the whole-trace analysis was read from the analysis store
    /// (the traces were analysed before and have not changed).
    pub fn analysis_from_store(&self) -> bool {
        self.state.borrow().analysis.analysis_from_store()
    }

    /// Whether the whole-trace pass is paused.
    pub fn background_paused(&self) -> bool {
        self.state.borrow().analysis.background_paused()
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
        };
        if let Err(e) = config::save_json(&config::trace_config_path(&dir, &self.paths), &cfg) {
            eprintln!("traceloom: warning: cannot save the configuration: {e}");
        }
    }

    /// Handles a key of the views: arrows pan, +/- zoom, Home/End go to the
    /// trace's ends, F zooms to fit, S to the selection, B bookmarks.
    pub fn key(&self, key: gtk::gdk::Key) -> bool {
        use gtk::gdk::Key;
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
            Key::b | Key::B => {
                let n = self.time_focus().bookmarks.len() + 1;
                self.add_bookmark(&format!("B{n}"));
            }
            _ => return false,
        }
        true
    }

    fn connect_bars(&self) {
        let me = self.me.borrow().clone();
        let on_time = move |which: u8| {
            let me = me.clone();
            move |e: &gtk::Entry| {
                let Some(tab) = me.upgrade() else { return };
                let first = tab.span().start;
                match parse_time(&e.text(), first) {
                    Ok(t) => {
                        e.remove_css_class("error");
                        let w = tab.time_focus().window.unwrap_or(tab.span());
                        match which {
                            0 if t < w.end => tab.navigate(Nav::Window(TimeRange::new(t, w.end))),
                            1 if t > w.start => {
                                tab.navigate(Nav::Window(TimeRange::new(w.start, t)))
                            }
                            2 => tab.navigate(Nav::Current(t)),
                            _ => {
                                e.add_css_class("error");
                                (tab.report_error)("The window's start must come before its end");
                            }
                        }
                    }
                    Err(msg) => {
                        e.add_css_class("error");
                        (tab.report_error)(&format!("Time: {msg}"));
                    }
                }
            }
        };
        self.start_entry.connect_activate(on_time(0));
        self.end_entry.connect_activate(on_time(1));
        self.current_entry.connect_activate(on_time(2));
        let me = self.me.borrow().clone();
        self.filter_entry.connect_activate(move |_| {
            if let Some(t) = me.upgrade() {
                t.apply_filter();
            }
        });
        let me = self.me.borrow().clone();
        self.search_entry.connect_activate(move |_| {
            if let Some(t) = me.upgrade() {
                t.search(true);
            }
        });
        let me = self.me.borrow().clone();
        self.bookmarks_box.connect_selected_notify(move |d| {
            let Some(t) = me.upgrade() else { return };
            let i = d.selected() as usize;
            let b = t.time_focus().bookmarks.get(i).cloned();
            if let Some(b) = b {
                t.navigate(Nav::Current(b.time));
            }
        });
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        if let Some(id) = self.state.get_mut().idle.take() {
            id.remove();
        }
    }
}

fn labelled_entry(bar: &gtk::Box, label: &str, width: i32) -> gtk::Entry {
    bar.append(&gtk::Label::new(Some(label)));
    let e = gtk::Entry::new();
    e.set_width_chars(width);
    bar.append(&e);
    e
}

fn button(bar: &gtk::Box, label: &str, tip: &str, f: impl Fn() + 'static) -> gtk::Button {
    let b = gtk::Button::with_label(label);
    b.set_tooltip_text(Some(tip));
    b.connect_clicked(move |_| f());
    bar.append(&b);
    b
}

/// Builds the widgets of a tab.
fn build(
    paths: Vec<PathBuf>,
    state: TabState,
    nav: NavSink,
    report_error: Box<dyn Fn(&str)>,
    me: Weak<Tab>,
) -> Tab {
    let span = state.span;
    let widget = gtk::Box::new(gtk::Orientation::Vertical, 4);
    let input = Rc::new(Cell::new(false));
    watch_input(&widget, input.clone());
    let pacing = Pacing::watch(&widget);

    // Time bar.
    let timebar = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    timebar.set_margin_start(6);
    timebar.set_margin_end(6);
    timebar.set_margin_top(4);
    let start_entry = labelled_entry(&timebar, "Start", 20);
    let end_entry = labelled_entry(&timebar, "End", 20);
    let current_entry = labelled_entry(&timebar, "Current", 20);
    let w = me.clone();
    let with = move |f: fn(&Tab)| {
        let w = w.clone();
        move || {
            if let Some(t) = w.upgrade() {
                f(&t)
            }
        }
    };
    button(
        &timebar,
        "Fit",
        "Zoom to the whole trace (F)",
        with(|t| t.zoom_fit()),
    );
    button(
        &timebar,
        "Selection",
        "Zoom to the selection (S)",
        with(|t| t.zoom_selection()),
    );
    button(
        &timebar,
        "−",
        "Zoom out (-)",
        with(|t| {
            t.key(gtk::gdk::Key::minus);
        }),
    );
    button(
        &timebar,
        "+",
        "Zoom in (+)",
        with(|t| {
            t.key(gtk::gdk::Key::plus);
        }),
    );
    button(
        &timebar,
        "Bookmark",
        "Bookmark the current time (B)",
        with(|t| {
            t.key(gtk::gdk::Key::b);
        }),
    );
    let bookmarks_list = gtk::StringList::new(&[]);
    let bookmarks_box = gtk::DropDown::new(Some(bookmarks_list.clone()), None::<gtk::Expression>);
    bookmarks_box.set_tooltip_text(Some("Go to a bookmark"));
    bookmarks_box.set_visible(false);
    timebar.append(&bookmarks_box);
    widget.append(&timebar);

    // Filter and search bar.
    let filterbar = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    filterbar.set_margin_start(6);
    filterbar.set_margin_end(6);
    let filter_entry = labelled_entry(&filterbar, "Filter", 40);
    filter_entry.set_hexpand(true);
    filter_entry.set_placeholder_text(Some("e.g. event.name == \"sched_switch\" && cpu == 1"));
    button(
        &filterbar,
        "Apply",
        "Filter the event list",
        with(|t| t.apply_filter()),
    );
    let filter_error = gtk::Label::new(None);
    filter_error.add_css_class("error");
    filter_error.set_visible(false);
    filterbar.append(&filter_error);
    let search_entry = labelled_entry(&filterbar, "Search", 24);
    search_entry.set_placeholder_text(Some("filter expression"));
    button(
        &filterbar,
        "◀",
        "Previous matching event",
        with(|t| t.search(false)),
    );
    button(
        &filterbar,
        "▶",
        "Next matching event",
        with(|t| t.search(true)),
    );
    widget.append(&filterbar);

    // The viewers.
    let config = PresentationConfig::control_flow();
    let control_flow = TimeGraphView::new("Process", config.clone(), nav.clone());
    let follow: FollowSink = {
        let me = me.clone();
        Rc::new(move |tid| {
            if let Some(t) = me.upgrade() {
                t.follow_thread(tid);
            }
        })
    };
    let rows_bar = RowsBar::new(&control_flow, follow);
    let resources = TimeGraphView::new(
        "Resource",
        traceloom_viewers::model::resources::presentation(),
        nav.clone(),
    );
    let moves: ListSink = {
        let me = me.clone();
        Rc::new(move |mv| {
            if let Some(t) = me.upgrade() {
                t.list_move(mv);
            }
        })
    };
    let events = EventListView::new(nav.clone(), moves);
    events.set_span(span.start, span.end);
    let statistics = StatisticsView::new(config.clone());
    let histogram = HistogramView::new(config, nav);

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
    timebar.append(&layout.view_menu);
    let main = layout.widget.clone();
    let keys = gtk::EventControllerKey::new();
    let w = me.clone();
    keys.connect_key_pressed(move |_, key, _, mods| {
        if mods.intersects(gtk::gdk::ModifierType::CONTROL_MASK | gtk::gdk::ModifierType::ALT_MASK)
        {
            return glib::Propagation::Proceed;
        }
        match w.upgrade() {
            Some(t) if t.key(key) => glib::Propagation::Stop,
            _ => glib::Propagation::Proceed,
        }
    });
    main.add_controller(keys);
    widget.append(&main);

    // Progress of background work, with cancel.
    let progress_box = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    progress_box.set_margin_start(6);
    progress_box.set_margin_end(6);
    progress_box.set_margin_bottom(4);
    let progress = gtk::ProgressBar::new();
    progress.set_show_text(true);
    progress.set_hexpand(true);
    progress_box.append(&progress);
    let cancel_button = button(
        &progress_box,
        "Cancel",
        "Pause the whole-trace analysis (Resume goes on from where it stopped)",
        with(|t| t.cancel_background()),
    );
    let resume_button = button(
        &progress_box,
        "Resume",
        "Go on with the whole-trace analysis from where it stopped",
        with(|t| t.resume_background()),
    );
    resume_button.set_visible(false);
    progress_box.set_visible(false);
    widget.append(&progress_box);

    Tab {
        widget,
        paths,
        control_flow,
        rows_bar,
        resources,
        events,
        statistics,
        histogram,
        layout,
        start_entry,
        end_entry,
        current_entry,
        filter_entry,
        filter_error,
        search_entry,
        bookmarks_box,
        bookmarks_list,
        progress_box,
        progress,
        cancel_button,
        resume_button,
        state: RefCell::new(state),
        report_error,
        config_warning: RefCell::new(None),
        me: RefCell::new(me),
        pushing: Cell::new(false),
        input,
        pacing,
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
