//! The traceloom GTK4 window: a relm4 application whose tabs (factory
//! components) each show one traceset in five viewers (control flow,
//! resources, detailed event list, statistics, histogram; each a relm4
//! component). The widgets are thin: they draw the render objects the
//! viewer models (`traceloom_viewers::model`) produce and send input to
//! their tab as navigation messages; the models' events requests are
//! serviced on the GTK main loop by each tab's background runner, an idle
//! source, in chunks of at most 10 ms that yield to pending input, while
//! building the time-graph models, rendering and painting run on threads
//! of their own.

pub mod analysis;
pub mod app;
pub mod bars;
pub mod config;
pub mod first_paint;
pub mod held_render;
pub mod layout;
pub mod models;
pub mod pacing;
pub mod paje_models;
pub mod pass_split;
pub mod runner;
pub mod screenshot;
pub mod shortcuts;
pub mod stalls;
pub mod tab;
pub mod tab_book;
pub mod time_text;
pub mod views;
pub mod worker;

use std::path::{Path, PathBuf};

/// The bundled sample kernel trace: next to the executable's workspace
/// (`target/<profile>/traceloom` → `traces/sample-kernel`), else where the
/// crate was built.
pub fn sample_trace() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(4) {
            candidates.push(dir.join("traces").join("sample-kernel"));
        }
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/sample-kernel"));
    candidates
        .into_iter()
        .find(|p| p.join("metadata").is_file())
}

/// What to open when no path is given: the last traceset (when its paths
/// still exist), else the bundled sample trace.
pub fn default_traceset() -> Vec<PathBuf> {
    let last = config::config_dir()
        .and_then(|d| config::load_json::<config::AppState>(&config::state_path(&d)))
        .map(|s| s.last_traceset)
        .unwrap_or_default();
    if !last.is_empty() && last.iter().all(|p| p.exists()) {
        return last;
    }
    sample_trace().into_iter().collect()
}

/// Opens the window on `paths` (the default traceset when empty) and runs
/// until it is closed; returns the exit status.
pub fn run_window(paths: Vec<PathBuf>) -> i32 {
    let paths = if paths.is_empty() {
        default_traceset()
    } else {
        paths
    };
    prepare_process();
    if let Err(e) = gtk4::init() {
        eprintln!("traceloom: error: cannot open the display: {e}");
        return 1;
    }
    let app = relm4::RelmApp::new("org.traceloom.Traceloom").with_args(Vec::new());
    // Each `traceloom PATH` run opens its own window on its own traces.
    app.allow_multiple_instances(true);
    let stalls = std::env::var_os("TRACELOOM_GUI_STALLS").is_some_and(|v| v == "1");
    if stalls {
        stalls::start();
        stalls::report_from_now();
    }
    quit_on_signals();
    app.run::<app::App>(app::AppInit { paths });
    if stalls {
        let (per_source, long) = stalls::stop();
        eprintln!(
            "traceloom: main-thread work by source:\n{}traceloom: {}",
            stalls::summary(&per_source),
            stalls::long_stalls(&long, LONG_STALL)
        );
    }
    0
}

/// Sets up the process as the window wants it, before any thread starts
/// (the GUI tests call it too, so that they measure the window as it
/// runs):
/// - at most four malloc arenas. glibc gives each new thread an arena of
///   its own (up to eight per core), and the window's job and painting
///   threads come and go; memory freed in one arena is not reused by the
///   others, which kept hundreds of MB after the 1 GB trace's pass;
/// - blocks of 1 MiB or more always mapped on their own. By
///   default glibc raises that threshold to the size of each mapped block
///   freed (up to 32 MB), after which the window's large buffers (change
///   lists, render columns, statistics) came from the arenas, were freed
///   on another thread than the one that made them, and stayed there
///   (the figures are in `docs/performance.md`, issue 17's memory row).
pub fn prepare_process() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: set before any thread of ours starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 4);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// See [`prepare_process`]: large enough that the models' many small
/// blocks are not each a system call.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 1 << 20;

/// Main-thread runs longer than this are listed one by one when
/// `TRACELOOM_GUI_STALLS=1` (issue 18's limit for the window during a
/// pass).
const LONG_STALL: std::time::Duration = std::time::Duration::from_millis(50);

/// Set by SIGINT or SIGTERM.
static QUIT_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn ask_quit(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    QUIT_ASKED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Ctrl+C in the terminal (or a `kill`) ends the application as its Quit
/// does, so that what closing does (the stall summary) still happens.
fn quit_on_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores into an atomic.
        unsafe {
            libc::signal(signal, ask_quit as *const () as libc::sighandler_t);
        }
    }
    glib::timeout_add_local(std::time::Duration::from_millis(250), || {
        if QUIT_ASKED.load(std::sync::atomic::Ordering::Relaxed) {
            use gtk4::prelude::ApplicationExt;
            relm4::main_application().quit();
            return glib::ControlFlow::Break;
        }
        glib::ControlFlow::Continue
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_trace_is_found() {
        let p = sample_trace().expect("the bundled sample trace");
        assert!(p.join("metadata").is_file());
    }
}
