//! Main-loop stall accounting: how long each kind of main-thread work
//! (an idle or timeout callback, a view's draw function, a GTK frame)
//! takes, so a late input event can be blamed on what ran before it.
//!
//! Each run is measured in wall time (what input waits) and in the main
//! thread's CPU time (what the work itself costs, whatever else the machine
//! runs: on a shared machine the first is inflated by other processes, the
//! second is not).
//!
//! Recording is off until [`start`] (the latency test, or
//! `TRACELOOM_GUI_STALLS=1` which prints a summary on standard error when
//! the window closes); when off, [`time`] costs one thread-local read.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A stall: one main-thread run of `source` longer than [`STALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// What ran (e.g. `draw:control-flow`, `tab:updates`, `gtk:frame`).
    pub source: &'static str,
    /// When it began.
    pub start: Instant,
    /// How long it took.
    pub duration: Duration,
    /// The main thread's CPU time in it.
    pub cpu: Duration,
}

/// A point in time, on the wall clock and on the thread's CPU clock.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    wall: Instant,
    cpu: Duration,
}

impl Mark {
    /// Now.
    pub fn now() -> Mark {
        Mark {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }
}

/// CPU time the calling thread has used.
pub(crate) fn thread_cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

/// Per-source totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// Runs recorded.
    pub runs: u64,
    /// Time spent in all runs.
    pub total: Duration,
    /// The main thread's CPU time in all runs (less than `total` when it
    /// waited: for a CPU, or for the GL renderer's threads).
    pub total_cpu: Duration,
    /// Longest run.
    pub worst: Duration,
    /// Most CPU time of the main thread in one run.
    pub worst_cpu: Duration,
    /// Runs longer than [`STALL`].
    pub stalls: u64,
}

/// What counts as a stall: longer than one 60 Hz frame.
pub const STALL: Duration = Duration::from_millis(16);

#[derive(Default)]
struct Log {
    per_source: BTreeMap<&'static str, SourceStats>,
    stalls: Vec<Stall>,
}

thread_local! {
    static LOG: RefCell<Option<Log>> = const { RefCell::new(None) };
}

thread_local! {
    /// When the window started, if `TRACELOOM_GUI_STALLS=1` asked for
    /// [`report_done`]'s line.
    static REPORT_FROM: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Starts recording (clearing what was recorded).
pub fn start() {
    LOG.with(|l| *l.borrow_mut() = Some(Log::default()));
}

/// Makes [`report_done`] print, with times counted from now.
pub fn report_from_now() {
    REPORT_FROM.with(|r| r.set(Some(Instant::now())));
}

/// Prints on standard error when a tab starts its whole-trace pass,
/// counted from [`report_from_now`] (the stalls before it are the
/// window's and the tab's first frames). Silent unless asked.
pub fn report_started(title: &str) {
    if let Some(t0) = REPORT_FROM.with(|r| r.get()) {
        eprintln!(
            "traceloom: {title}: background work started {:.2} s after start",
            t0.elapsed().as_secs_f64()
        );
    }
}

/// Prints on standard error when a tab's background work (its requests
/// and jobs) is done, counted from [`report_from_now`]: what a user waits
/// for after opening a trace. Silent unless asked.
pub fn report_done(title: &str) {
    if let Some(t0) = REPORT_FROM.with(|r| r.get()) {
        eprintln!(
            "traceloom: {title}: background work done {:.2} s after start",
            t0.elapsed().as_secs_f64()
        );
    }
}

/// Whether recording is on.
pub fn recording() -> bool {
    LOG.with(|l| l.borrow().is_some())
}

/// Records one run of `source` that began at `start` and ends now.
pub fn record(source: &'static str, start: Mark) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            let end = Mark::now();
            let duration = end.wall - start.wall;
            let cpu = end.cpu.saturating_sub(start.cpu);
            let s = log.per_source.entry(source).or_default();
            s.runs += 1;
            s.total += duration;
            s.total_cpu += cpu;
            s.worst = s.worst.max(duration);
            s.worst_cpu = s.worst_cpu.max(cpu);
            if duration > STALL {
                s.stalls += 1;
                log.stalls.push(Stall {
                    source,
                    start: start.wall,
                    duration,
                    cpu,
                });
            }
        }
    });
}

/// Runs `f`, recording its duration under `source` when recording.
pub fn time<R>(source: &'static str, f: impl FnOnce() -> R) -> R {
    if !recording() {
        return f();
    }
    let start = Mark::now();
    let r = f();
    record(source, start);
    r
}

/// Stops recording; returns the per-source totals and the stalls in the
/// order they happened.
pub fn stop() -> (BTreeMap<&'static str, SourceStats>, Vec<Stall>) {
    LOG.with(|l| {
        l.borrow_mut()
            .take()
            .map(|log| (log.per_source, log.stalls))
            .unwrap_or_default()
    })
}

/// The per-source totals as a table, worst first.
pub fn summary(per_source: &BTreeMap<&'static str, SourceStats>) -> String {
    let mut rows: Vec<_> = per_source.iter().collect();
    rows.sort_by_key(|(_, s)| std::cmp::Reverse(s.worst));
    let mut out = String::from(
        "source                 runs   total ms    CPU ms  worst ms  worst CPU ms  >16 ms\n",
    );
    for (name, s) in rows {
        out.push_str(&format!(
            "{name:<22} {:>5} {:>10.1} {:>9.1} {:>9.1} {:>13.1} {:>7}\n",
            s.runs,
            s.total.as_secs_f64() * 1e3,
            s.total_cpu.as_secs_f64() * 1e3,
            s.worst.as_secs_f64() * 1e3,
            s.worst_cpu.as_secs_f64() * 1e3,
            s.stalls
        ));
    }
    out
}

/// The stalls longer than `over`, one line each with when it began
/// (seconds since [`report_from_now`], or since the first stall), what
/// ran and its CPU time: whether the long ones came at start-up (the
/// first frames: with GL, its context and shaders), during a trace's
/// pass, or when it ended.
pub fn long_stalls(stalls: &[Stall], over: Duration) -> String {
    let from = REPORT_FROM
        .with(|r| r.get())
        .or_else(|| stalls.first().map(|s| s.start));
    let long: Vec<&Stall> = stalls.iter().filter(|s| s.duration > over).collect();
    let mut out = format!(
        "{} main-thread runs over {} ms\n",
        long.len(),
        over.as_millis()
    );
    for s in long {
        let at = from.map_or(0.0, |t0| {
            s.start.saturating_duration_since(t0).as_secs_f64()
        });
        out.push_str(&format!(
            "  at {at:.2} s: {} {:.1} ms (CPU {:.1} ms)\n",
            s.source,
            s.duration.as_secs_f64() * 1e3,
            s.cpu.as_secs_f64() * 1e3
        ));
    }
    out
}

/// Times every GTK frame of `widget`'s window, by phase of its frame
/// clock: `gtk:update` (tick callbacks), `gtk:layout` (measure and
/// allocate), `gtk:paint` (snapshot, with the draw functions, and
/// rendering: with GL, the renderer's draw calls, shader compiles and
/// waits for the display server) and `gtk:after-paint` (the frame's end),
/// often differing by orders of magnitude.
///
/// GDK connects its own handlers to the frame clock when the window's
/// surface is made, before this sees the window realized: they run before
/// ours in every signal, so each of our handlers marks the *end* of GDK's
/// work in that signal (GTK allocates in its `layout` handler and renders
/// in its `paint` handler). The clock emits `layout` only in frames where
/// something asked for a new layout: in the others, what runs between the
/// ends of `update` and `paint` is the paint alone, and counts as such.
pub fn watch_frames(widget: &impl gtk4::prelude::IsA<gtk4::Widget>) {
    use gtk4::prelude::*;
    widget.connect_realize(|w| {
        let Some(clock) = w.frame_clock() else {
            return;
        };
        // The phase under way and when it began.
        type Phase = std::rc::Rc<std::cell::Cell<Option<(&'static str, Mark)>>>;
        let phase: Phase = Default::default();
        let next = |p: &Phase, following: Option<&'static str>| {
            if let Some((name, t)) = p.take() {
                record(name, t);
            }
            p.set(following.map(|f| (f, Mark::now())));
        };
        let p = phase.clone();
        clock.connect_before_paint(move |_| next(&p, Some("gtk:update")));
        let p = phase.clone();
        clock.connect_update(move |_| next(&p, Some("gtk:layout")));
        let p = phase.clone();
        clock.connect_layout(move |_| next(&p, Some("gtk:paint")));
        let p = phase.clone();
        clock.connect_paint(move |_| {
            // No `layout` this frame: the time since `update` was the paint.
            if let Some(("gtk:layout", t)) = p.get() {
                p.set(Some(("gtk:paint", t)));
            }
            next(&p, Some("gtk:after-paint"))
        });
        clock.connect_after_paint(move |_| next(&phase, None));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_while_on() {
        time("x", || ());
        start();
        time("a", || std::thread::sleep(Duration::from_millis(20)));
        time("a", || ());
        time("b", || ());
        let (per, stalls) = stop();
        assert_eq!(per["a"].runs, 2);
        assert_eq!(per["a"].stalls, 1);
        assert!(per["a"].worst >= Duration::from_millis(20));
        assert_eq!(per["b"].runs, 1);
        assert!(!per.contains_key("x"));
        assert_eq!(stalls.len(), 1);
        assert_eq!(stalls[0].source, "a");
        assert!(summary(&per).contains("a "));
        let long = long_stalls(&stalls, Duration::from_millis(10));
        assert!(
            long.starts_with("1 main-thread runs over 10 ms\n  at "),
            "{long}"
        );
        assert!(long.contains(": a "), "{long}");
        assert!(long_stalls(&stalls, Duration::from_secs(1)).starts_with("0 main-thread runs"));
        assert!(!recording());
    }
}
