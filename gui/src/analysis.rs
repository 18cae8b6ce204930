//! What a tab's viewers ask of the trace behind them, whatever its format:
//! the [`Analysis`] trait. A tab holds one, and drives it from its idle
//! loop and its navigation exactly the same way for a CTF traceset
//! ([`KernelTab`]: the kernel pass, the event list and searches on a
//! [`Session`]) and for a Pajé trace ([`crate::paje_models::PajeTab`]:
//! the Pajé pass, renders, statistics and list on a `PajeSession`). Both
//! hand the views the same render objects through [`Updates`].

use std::path::{Path, PathBuf};
use std::time::Duration;
use traceloom_base::{Time, TimeRange};

use traceloom_engine::request::{Budget, ServiceStatus};
use traceloom_filter::Filter;
use traceloom_viewers::model::Session;
use traceloom_viewers::DataConfig;

use crate::models::{ListModels, ListPage, Search, TabModels, Updates};
use crate::views::eventlist::ListMove;

/// The trace analysis behind a tab (see the module doc). Every call is made
/// on the main thread; work that cannot be chunked runs on worker threads.
pub trait Analysis {
    /// Times of the first and last events.
    fn time_span(&self) -> Option<(Time, Time)>;
    /// Starts the whole-trace work (at LOW priority).
    fn start_background(&mut self);
    /// Shortest interval between two partial updates of the views.
    fn set_update_interval(&mut self, d: Duration);
    /// Collects what completed, for the views.
    fn poll(&mut self) -> Updates;
    /// Services the requests for at most `budget`, yielding after a chunk
    /// when `interrupt()` says so (input arrived, or a result the user
    /// waits for landed). When the read would wait for a decoding thread
    /// it yields too, unless `wait`: the first chunk of what the user
    /// waits for (a seek's first events, decoded in a few ms) is worth
    /// waiting for, rather than a round of the main loop's frames.
    fn service(
        &mut self,
        budget: Budget,
        interrupt: &mut dyn FnMut() -> bool,
        wait: bool,
    ) -> ServiceStatus;
    /// The event list's move under way: its next request, or its rows.
    fn list_poll(&mut self) -> Option<ListPage>;
    /// Whether requests are pending or jobs under way.
    fn busy(&mut self) -> bool;
    /// Label and fraction of the whole-trace work while it runs or is
    /// paused, and whether it is paused.
    fn background_progress(&mut self) -> Option<(String, f64, bool)>;
    /// What the window shows: the main time graph's and the second one's
    /// graph widths.
    fn request_window(&mut self, window: TimeRange, main_width: u32, second_width: u32);
    /// The rows (display indices) the main time graph shows: its renders
    /// need hold only those, and a margin (a format whose renders hold
    /// every row ignores it).
    fn request_main_rows(&mut self, _shown: std::ops::Range<usize>) {}
    /// The main time graph's rows configuration (collapsed rows, filter,
    /// order); the next poll renders with it.
    fn set_main_rows(&mut self, rows: DataConfig);
    /// Histogram bins wanted.
    fn request_histogram(&mut self, bins: u32);
    /// Statistics of the selection (`None`: of the whole trace or window).
    fn request_statistics(&mut self, selection: Option<TimeRange>);
    /// Moves the event list; what it shows when done at once.
    fn list_move(&mut self, mv: ListMove) -> Option<ListPage>;
    /// Whether the event list's move is under way.
    fn list_reading(&self) -> bool;
    /// Sets the event list's filter expression.
    fn set_list_filter(&mut self, expr: Option<&str>) -> Result<ListPage, String>;
    /// Starts a search for an event matching `filter`.
    fn search(&mut self, filter: Filter, search: Search, span: TimeRange) -> Result<(), String>;
    /// Pauses the whole-trace work.
    fn pause_background(&mut self);
    /// Resumes it.
    fn resume_background(&mut self);
    /// Whether the whole-trace analysis came from the analysis store.
    fn analysis_from_store(&self) -> bool;
    /// How many statistics trees were started since the tab opened (a
    /// large trace's takes a good part of a second of a core).
    fn statistics_renders(&self) -> u32;
    /// How many time-graph renders were started since the tab opened.
    fn time_graph_renders(&self) -> u32;
    /// Whether the whole-trace work is paused.
    fn background_paused(&self) -> bool;
    /// Whether the time graphs' window is a preview, read with no state
    /// ahead of the analysis (kernel traces; see
    /// `KernelAnalysis::window_preview_request`).
    fn window_previewed(&self) -> bool {
        false
    }
    /// Whether the whole-trace pass was split across two cores (kernel
    /// traces; see `crate::pass_split`).
    fn pass_was_split(&self) -> bool {
        false
    }
    /// Whether the format has a second time graph (resources for kernel
    /// traces; a Pajé trace has a single view, its containers).
    fn has_second_graph(&self) -> bool;
    /// The entity types a legend can show or hide, as `(kind, name,
    /// shown)` (empty when the format has none).
    fn type_toggles(&self) -> Vec<(&'static str, String, bool)> {
        Vec::new()
    }
    /// Shows or hides type `i` of [`type_toggles`](Self::type_toggles).
    fn set_type_shown(&mut self, _i: usize, _shown: bool) {}
}

/// A Pajé trace: one existing file (a `.trace` or `.paje` file, or any
/// file that is not a CTF trace's `metadata`).
pub fn is_paje(paths: &[PathBuf]) -> bool {
    paths.len() == 1 && paths[0].is_file() && !is_ctf_metadata(&paths[0])
}

/// A CTF trace's metadata file (a path to it opens its directory).
fn is_ctf_metadata(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "metadata")
}

/// `paths` with CTF metadata files replaced by their directories (what the
/// Open dialog gives when a CTF trace's file is picked).
pub fn trace_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths
        .into_iter()
        .map(|p| match p.parent() {
            Some(dir) if p.is_file() && is_ctf_metadata(&p) => dir.to_path_buf(),
            _ => p,
        })
        .collect()
}

/// Events the window's scheduler reads between two looks at input.
const WINDOW_CHUNK_EVENTS: u64 = 1024;

/// A CTF traceset's analysis: the tab's kernel models and event list on
/// its session.
pub struct KernelTab {
    session: Session,
    models: TabModels,
    list: ListModels,
}

impl KernelTab {
    /// Models over `session`'s traceset; nothing is requested yet.
    pub fn new(mut session: Session) -> KernelTab {
        // Input and results landing for the user are looked at between
        // chunks: 1,024 events take about 0.6 ms of a quiet core, several
        // ms of a loaded one (the default 4,096 held a landed picture up
        // to 8 ms at a load of 4).
        session.scheduler().set_chunk_events(WINDOW_CHUNK_EVENTS);
        let models = TabModels::new(&mut session);
        let list = ListModels::new(&mut session);
        KernelTab {
            session,
            models,
            list,
        }
    }
}

impl Analysis for KernelTab {
    fn time_span(&self) -> Option<(Time, Time)> {
        self.session.time_span()
    }
    fn start_background(&mut self) {
        self.models.start_background(&mut self.session);
    }
    fn set_update_interval(&mut self, d: Duration) {
        self.models.set_update_interval(d);
    }
    fn poll(&mut self) -> Updates {
        self.models.poll(&mut self.session)
    }
    fn service(
        &mut self,
        budget: Budget,
        interrupt: &mut dyn FnMut() -> bool,
        wait: bool,
    ) -> ServiceStatus {
        if wait {
            self.session.service(budget, interrupt)
        } else {
            self.session.service_nonblocking(budget, interrupt)
        }
    }
    fn list_poll(&mut self) -> Option<ListPage> {
        let list = self.list.poll(&mut self.session);
        // New kernel data fills the thread columns of the rows shown.
        list.or_else(|| self.list.set_threads(self.models.data()))
    }
    fn busy(&mut self) -> bool {
        self.session.scheduler().pending() > 0 || self.models.rendering()
    }
    fn background_progress(&mut self) -> Option<(String, f64, bool)> {
        self.models.background_progress(&mut self.session)
    }
    fn request_main_rows(&mut self, shown: std::ops::Range<usize>) {
        self.models.request_control_flow_rows(shown);
    }
    fn request_window(&mut self, window: TimeRange, main_width: u32, second_width: u32) {
        self.models.request_window(window, main_width, second_width);
    }
    fn set_main_rows(&mut self, rows: DataConfig) {
        self.models.set_control_flow_rows(rows);
    }
    fn request_histogram(&mut self, bins: u32) {
        self.models.request_histogram(bins);
    }
    fn request_statistics(&mut self, selection: Option<TimeRange>) {
        self.models.request_statistics(&mut self.session, selection);
    }
    fn list_move(&mut self, mv: ListMove) -> Option<ListPage> {
        self.list.list_move(&mut self.session, mv)
    }
    fn list_reading(&self) -> bool {
        self.list.reading()
    }
    fn set_list_filter(&mut self, expr: Option<&str>) -> Result<ListPage, String> {
        self.list.set_list_filter(&mut self.session, expr)
    }
    fn search(&mut self, filter: Filter, search: Search, span: TimeRange) -> Result<(), String> {
        self.models.search(&mut self.session, filter, search, span);
        Ok(())
    }
    fn pause_background(&mut self) {
        self.models.pause_background(&mut self.session);
    }
    fn resume_background(&mut self) {
        self.models.resume_background(&mut self.session);
    }
    fn analysis_from_store(&self) -> bool {
        self.models.from_store()
    }
    fn statistics_renders(&self) -> u32 {
        self.models.statistics_renders()
    }
    fn time_graph_renders(&self) -> u32 {
        self.models.time_graph_renders()
    }
    fn background_paused(&self) -> bool {
        self.models.background_paused(&self.session)
    }
    fn window_previewed(&self) -> bool {
        self.models.previewing()
    }
    fn pass_was_split(&self) -> bool {
        self.models.pass_was_split()
    }
    fn has_second_graph(&self) -> bool {
        true
    }
}
