//! The widgets of a tab. They only draw what the models produced (render
//! objects) and turn pointer input into [`Nav`] requests for their tab,
//! which owns the time window, the current time and the selection and pushes
//! them back to every view ([`TimeFocus`]: the window, current time,
//! selection and bookmarks every view focuses on).
//!
//! Each viewer (and the control flow's rows toolbar) is a relm4
//! component: its outputs are navigation messages, which the tab's
//! component receives forwarded as its own messages. A component's model
//! is a cheap handle (the widgets and a shared state) that the tab keeps
//! to hand the viewer renders and the time focus directly.

pub mod eventlist;
pub mod histogram;
pub mod painter;
pub mod rows_bar;
pub mod statistics;
pub mod timegraph;

use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;
use traceloom_base::Time;
use traceloom_base::TimeRange;

use crate::config::Bookmark;

/// What a view asks its tab to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Nav {
    /// Move the current-time marker (a click on an event or state).
    Current(Time),
    /// Select a time range (a drag); statistics follow it, and the
    /// current time goes to its start.
    Select(TimeRange),
    /// Clear the selection (Escape): the statistics cover the whole trace
    /// again.
    Unselect,
    /// Show this time window.
    Window(TimeRange),
    /// Zoom by `factor` (< 1 zooms in) keeping `anchor` under the pointer.
    Zoom {
        /// Span multiplier.
        factor: f64,
        /// Time that stays in place.
        anchor: Time,
    },
    /// Pan by this fraction of the window span (negative: earlier).
    Pan(f64),
    /// The view's drawing width no longer matches its render: ask again.
    Resized,
    /// The view's rows configuration changed (filter, order, collapsed
    /// rows, arrows): render it again.
    Rows,
}

/// The tab's time state, pushed to every view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimeFocus {
    /// Visible window.
    pub window: Option<TimeRange>,
    /// Current time marker.
    pub current: Option<Time>,
    /// Selected range.
    pub selection: Option<TimeRange>,
    /// Bookmarks, drawn as named markers.
    pub bookmarks: Vec<Bookmark>,
}

/// Colour of bookmark markers (a violet that none of the state colours
/// uses, so a marker is never mistaken for a state boundary).
pub const BOOKMARK_RGB: (f64, f64, f64) = (0.55, 0.2, 0.75);

/// A window of `window`'s span centred on `t` (a click in the histogram, a
/// current time chosen outside the window).
pub fn centred_on(window: TimeRange, t: Time) -> TimeRange {
    let start = t - (window.span() / 2) as i64;
    TimeRange::new(start, start + window.span() as i64)
}

/// Draws the bookmarks of `cursor` as dashed vertical lines with their name
/// over `[top, bottom]`, mapping times with `x_of`; markers outside
/// `[x_min, x_max]` are skipped.
pub fn draw_bookmarks(
    cr: &cairo::Context,
    cursor: &TimeFocus,
    x_of: impl Fn(Time) -> f64,
    (x_min, x_max): (f64, f64),
    (top, bottom): (f64, f64),
) {
    if cursor.bookmarks.is_empty() {
        return;
    }
    cr.save().ok();
    cr.set_source_rgb(BOOKMARK_RGB.0, BOOKMARK_RGB.1, BOOKMARK_RGB.2);
    cr.set_line_width(1.5);
    cr.set_dash(&[5.0, 3.0], 0.0);
    cr.set_font_size(11.0);
    for b in &cursor.bookmarks {
        let x = x_of(b.time).round() + 0.5;
        if x < x_min || x > x_max {
            continue;
        }
        cr.move_to(x, top);
        cr.line_to(x, bottom);
        cr.stroke().ok();
        cr.move_to(x + 3.0, top + 12.0);
        cr.show_text(&b.name).ok();
    }
    cr.restore().ok();
}

/// How long the dropping thread waits for more garbage before it trims
/// the allocator: longer than the background pass's snapshots come (about
/// a second apart), so that it trims once the pass is over, not during it.
/// A trim locks each of glibc's arenas while it walks their free pages,
/// tens of ms on a large heap, and the main thread's allocations in the
/// arena it shares waited that long in the middle of the pass.
const TRIM_QUIET: Duration = Duration::from_secs(3);

/// Gives the allocator's free pages back to the system.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory glibc holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Drops `value` on a thread of its own rather than on the main loop.
///
/// A view replacing its render may hold the last reference to the old one,
/// and freeing a large trace's render (millions of intervals, thousands of
/// statistics rows) took up to 200 ms of the main loop.
pub fn drop_later<T: Send + 'static>(value: T) {
    type Garbage = Box<dyn Send>;
    static DROPPER: OnceLock<Option<Mutex<mpsc::Sender<Garbage>>>> = OnceLock::new();
    let dropper = DROPPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Garbage>();
        std::thread::Builder::new()
            .name("traceloom-drop".into())
            .spawn(move || {
                crate::worker::lower_priority();
                // Whether something was freed since the last trim.
                let mut owed = false;
                loop {
                    // Freed pages stay in the allocator's arenas (one per
                    // job thread): on the 1 GB trace half the window's
                    // anonymous memory after the pass (1.1 GB → 0.65 GB
                    // once trimmed). Given back once nothing else came
                    // to be freed for TRIM_QUIET, so always after the last
                    // drop (a drop soon after a trim used to leave its
                    // pages, 150 MB of a 1 GB Pajé trace's first open,
                    // held for good); until then, what is freed is reused.
                    let next = if owed {
                        rx.recv_timeout(TRIM_QUIET)
                    } else {
                        rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
                    };
                    match next {
                        Ok(garbage) => {
                            crate::worker::charged(|| drop(garbage));
                            owed = true;
                        }
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            release_free_memory();
                            owed = false;
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .ok()
            .map(|_| Mutex::new(tx))
    });
    if let Some(tx) = dropper {
        if let Ok(tx) = tx.lock() {
            // A failed send hands the value back, dropped here after all.
            let _ = tx.send(Box::new(value));
        }
    }
}
