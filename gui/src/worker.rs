//! The tab's worker thread: it owns the tab's [`Session`] and the models of
//! the whole-trace work ([`TabModels`]), services their events requests and
//! takes the kernel pass's snapshots, and sends what completed to the main
//! thread as [`Report`]s.
//!
//! None of that work runs on the GTK main loop: servicing a request, taking
//! a partial snapshot of the kernel pass (which copies what the pass
//! collected so far, so it grows with the trace), building the time-graph
//! models and rendering the statistics would each stall input for tens to
//! hundreds of milliseconds on a large trace. The main thread only sends
//! [`Command`]s (what the views now show) and applies reports (renders to
//! draw).

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use traceloom_engine::filter::Filter;
use traceloom_engine::request::{Budget, ServiceStatus};
use traceloom_viewers::model::Session;
use traceloom_viewers::TimeRange;

use crate::models::{Search, TabModels, Updates};

/// Time budget of one `service()` call: commands are looked at in between.
pub const SERVICE_BUDGET: Duration = Duration::from_millis(10);
/// Shortest interval between two progress reports.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);
/// How often a render in flight is checked for while nothing else runs.
const RENDER_POLL: Duration = Duration::from_millis(5);
/// Nice value of the worker thread (and of the decoding and rendering
/// threads it starts, which inherit it).
const BACKGROUND_NICE: i32 = 5;

/// Lowers the calling thread's scheduling priority to [`BACKGROUND_NICE`]
/// (the worker, painting and freeing threads):
/// on a busy machine the main loop must win the CPU over the whole-trace
/// work, or input waits behind it however little the main loop has to do.
/// (On Linux, `setpriority` on a thread id applies to that thread only.)
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE) != 0 {
            eprintln!(
                "traceloom: warning: cannot lower the worker thread's priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// What the main thread asks of the worker.
pub enum Command {
    /// Start the LOW-priority whole-trace pass.
    StartBackground,
    /// Cancel it (the views keep its last partial data).
    CancelBackground,
    /// The time graphs now show `window` at these graph widths.
    Window {
        /// Visible window.
        window: TimeRange,
        /// Control flow graph width (pixels).
        cf_width: u32,
        /// Resources graph width (pixels).
        res_width: u32,
    },
    /// The histogram of the whole trace, in this many bins.
    Histogram(u32),
    /// Statistics of this range (the whole trace's when `None`).
    Statistics(Option<TimeRange>),
    /// Search with this expression.
    Search(Filter, Search),
}

/// What the worker sends back.
pub struct Report {
    /// The last command taken into account (commands are numbered from 1
    /// in the order sent).
    pub seq: u64,
    /// Whether requests remain or a render is under way.
    pub busy: bool,
    /// Label and fraction of the whole-trace pass, while it runs.
    pub progress: Option<(String, f64)>,
    /// New renders, search results, errors.
    pub updates: Updates,
}

/// The main thread's end of a tab's worker.
pub struct Worker {
    tx: Option<mpsc::Sender<(u64, Command)>>,
    sent: u64,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the worker on `session` and `models`; its reports go to
    /// `reports`.
    pub fn spawn(
        session: Session,
        models: TabModels,
        reports: relm4::Sender<Report>,
    ) -> std::io::Result<Worker> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("traceloom-tab".into())
            .spawn(move || run(session, models, rx, reports))?;
        Ok(Worker {
            tx: Some(tx),
            sent: 0,
            thread: Some(thread),
        })
    }

    /// Sends `cmd`; returns its number.
    pub fn send(&mut self, cmd: Command) -> u64 {
        self.sent += 1;
        if let Some(tx) = &self.tx {
            // A worker that ended (it panicked) has reported nothing more:
            // the tab stays busy, its progress bar tells.
            let _ = tx.send((self.sent, cmd));
        }
        self.sent
    }

    /// Number of the last command sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the worker after its current step; it is
        // not joined, so that closing a tab never waits for a snapshot.
        self.tx = None;
        drop(self.thread.take());
    }
}

fn run(
    mut session: Session,
    mut models: TabModels,
    rx: mpsc::Receiver<(u64, Command)>,
    reports: relm4::Sender<Report>,
) {
    lower_priority();
    let span = session
        .time_span()
        .map(|(a, b)| TimeRange::new(a, b.max(a + 1)))
        .unwrap_or(TimeRange::new(0, 1));
    let mut seq = 0;
    let mut reported: Option<(u64, bool)> = None;
    let mut busy = true;
    let mut last_progress: Option<Instant> = None;
    loop {
        // Wait for work when there is none; else just look at what came.
        let first = if !busy {
            match rx.recv() {
                Ok(c) => Some(c),
                Err(_) => return,
            }
        } else if session.scheduler().pending() == 0 {
            // Only a render in flight: wait for it, or for a command.
            match rx.recv_timeout(RENDER_POLL) {
                Ok(c) => Some(c),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        } else {
            None
        };
        let mut cmds: Vec<(u64, Command)> = first.into_iter().collect();
        loop {
            match rx.try_recv() {
                Ok(c) => cmds.push(c),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        }
        for (n, cmd) in cmds {
            seq = n;
            match cmd {
                Command::StartBackground => models.start_background(&mut session),
                Command::CancelBackground => models.cancel_background(&mut session),
                Command::Window {
                    window,
                    cf_width,
                    res_width,
                } => models.request_window(window, cf_width, res_width),
                Command::Histogram(bins) => models.request_histogram(&mut session, span, bins),
                Command::Statistics(range) => models.request_statistics(&mut session, range),
                Command::Search(filter, search) => {
                    models.search(&mut session, filter, search, span)
                }
            }
        }
        let status = session.service(Budget::duration(SERVICE_BUDGET), || false);
        let updates = models.poll(&mut session);
        busy = status != ServiceStatus::Idle || models.rendering();
        let now = Instant::now();
        let progress_due = !busy || last_progress.is_none_or(|t| now - t >= PROGRESS_INTERVAL);
        let changed = reported != Some((seq, busy));
        if updates.is_empty() && !changed && !progress_due {
            continue;
        }
        let progress = if busy {
            models.background_progress(&mut session)
        } else {
            None
        };
        if progress_due {
            last_progress = Some(now);
        }
        if reports
            .send(Report {
                seq,
                busy,
                progress,
                updates,
            })
            .is_err()
        {
            return;
        }
        reported = Some((seq, busy));
    }
}
