//! Background jobs of a tab: building the time-graph models of a kernel
//! data snapshot, rendering the time graphs and the statistics. Each runs
//! on a thread of its own from `Arc`'d, immutable inputs, and its result is
//! collected by the idle-loop servicing on the main thread
//! ([`crate::models::TabModels::poll`]).
//!
//! The events requests themselves are *not* serviced here: the tab's
//! [`Session`](traceloom_viewers::model::Session) and its scheduler live on
//! the main thread and are serviced from a GLib idle source, in chunks of at
//! most [`SERVICE_BUDGET`] that yield as soon as the main loop has something
//! to dispatch (the interruption of the v2 algorithm). What stays off the
//! main loop is the work that cannot be chunked that way: building
//! `ControlFlowModel` takes tens of milliseconds on a trace of thousands of
//! threads, a statistics render about 15 ms, a time-graph render of a large
//! window more than a frame.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Time budget of one idle-loop `service()` call.
pub const SERVICE_BUDGET: Duration = Duration::from_millis(10);
/// Nice value of the job threads (and of the painting and freeing
/// threads).
const BACKGROUND_NICE: i32 = 5;

/// Lowers the calling thread's scheduling priority to [`BACKGROUND_NICE`]
/// (the job, painting and freeing threads):
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
                "traceloom: warning: cannot lower a background thread's priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// CPU time of the background threads (jobs, painting, freeing), in ns.
static BACKGROUND_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// Runs `f`, adding the calling thread's CPU time in it to
/// [`background_cpu`].
pub fn charged<R>(f: impl FnOnce() -> R) -> R {
    let t0 = crate::stalls::thread_cpu_time();
    let r = f();
    let d = crate::stalls::thread_cpu_time().saturating_sub(t0);
    BACKGROUND_CPU_NS.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    r
}

/// CPU time the background threads (jobs, painting, freeing) have used so
/// far: what following a pass costs beside the main thread's frames, on
/// the cores the read needs too.
pub fn background_cpu() -> Duration {
    Duration::from_nanos(BACKGROUND_CPU_NS.load(Ordering::Relaxed))
}

/// Set when an urgent job's result is waiting to be collected (see
/// [`urgent_landed`]).
static URGENT_LANDED: AtomicBool = AtomicBool::new(false);

/// Whether the result of a job the user waits for ([`Job::spawn_urgent`])
/// landed since the last [`take_urgent_landed`]: the servicing yields at
/// its next chunk, so that the result is collected and shown without
/// waiting for the rest of the turn's budget of background reading.
pub fn urgent_landed() -> bool {
    URGENT_LANDED.load(Ordering::Acquire)
}

/// Notes that a result the user waits for landed on another thread (a
/// job's, a picture's), and wakes the main loop.
pub fn note_urgent_landed() {
    URGENT_LANDED.store(true, Ordering::Release);
    // The main loop may be asleep (the servicing waiting for data or for
    // jobs).
    glib::MainContext::default().wakeup();
}

/// Clears [`urgent_landed`]: the results landed so far are being collected.
pub fn take_urgent_landed() -> bool {
    URGENT_LANDED.swap(false, Ordering::AcqRel)
}

/// A job running on a thread of its own; its result is picked up with
/// [`Job::try_take`].
pub struct Job<T> {
    rx: mpsc::Receiver<T>,
}

/// What [`Job::try_take`] found.
pub enum JobState<T> {
    /// Still running.
    Running,
    /// Done, with its result.
    Done(T),
    /// The thread ended without a result (it panicked).
    Failed,
}

impl<T: Send + 'static> Job<T> {
    /// Runs `f` on a new thread at the background priority.
    pub fn spawn(name: &str, f: impl FnOnce() -> T + Send + 'static) -> std::io::Result<Job<T>> {
        Self::spawn_at(name, true, f)
    }

    /// Runs `f` on a new thread at the main thread's priority: work the
    /// user waits for (the render of a window they just moved to), which
    /// must not queue behind the background's or other processes' work.
    pub fn spawn_urgent(
        name: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<Job<T>> {
        Self::spawn_at(name, false, f)
    }

    fn spawn_at(
        name: &str,
        background: bool,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<Job<T>> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if background {
                    lower_priority();
                }
                // A job whose result is no longer wanted was dropped: its
                // receiver is gone, and the result is dropped here, off
                // the main loop.
                if tx.send(charged(f)).is_ok() && !background {
                    note_urgent_landed();
                }
            })?;
        Ok(Job { rx })
    }

    /// The job's result, if it is done (never blocks).
    pub fn try_take(&self) -> JobState<T> {
        match self.rx.try_recv() {
            Ok(r) => JobState::Done(r),
            Err(mpsc::TryRecvError::Empty) => JobState::Running,
            Err(mpsc::TryRecvError::Disconnected) => JobState::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_result_arrives_and_panics_are_reported() {
        let job = Job::spawn("test-job", || 6 * 7).unwrap();
        let start = std::time::Instant::now();
        loop {
            match job.try_take() {
                JobState::Done(v) => {
                    assert_eq!(v, 42);
                    break;
                }
                JobState::Running => {
                    assert!(start.elapsed() < Duration::from_secs(10));
                    std::thread::sleep(Duration::from_millis(1));
                }
                JobState::Failed => panic!("the job failed"),
            }
        }
        let failing = Job::<u32>::spawn("test-job", || panic!("on purpose")).unwrap();
        let start = std::time::Instant::now();
        loop {
            match failing.try_take() {
                JobState::Failed => break,
                JobState::Running => {
                    assert!(start.elapsed() < Duration::from_secs(10));
                    std::thread::sleep(Duration::from_millis(1));
                }
                JobState::Done(_) => panic!("a panicking job gave a result"),
            }
        }
    }
}
