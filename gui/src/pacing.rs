//! How often the views follow a background pass: as often as the frames
//! that following causes allow.
//!
//! Each background update (new renders of a growing analysis, progress)
//! makes the window paint several frames: the views redraw, then their
//! pictures land from the painting threads. With GTK's GL renderer on a
//! software rasterizer (llvmpipe under Xvfb, or a machine without a GPU)
//! a frame of a large window blocks the main thread for tens of ms and
//! takes both cores while it renders; eight of them per update once a
//! second left the trace's read a fifth of the main thread. And each
//! update's renders and paintings take the other core for tens to
//! hundreds of ms on a trace of thousands of threads. So the frame time
//! and the background threads' CPU time that follow an update are charged
//! to it, and updates are spaced so that they take about a tenth of the
//! time.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk4 as gtk;
use gtk4::prelude::*;

/// Shortest interval between two background updates.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Longest interval between two background updates (the views must still
/// follow the pass).
pub const MAX_INTERVAL: Duration = Duration::from_secs(5);

/// The frame time of a window (and the main thread's other work for the
/// updates, [`Pacing::charge`]) and what each background update costs in
/// it.
#[derive(Debug, Default)]
pub struct Pacing {
    /// Wall time of every frame so far (frame clock's before-paint to
    /// after-paint).
    frames: Cell<Duration>,
    /// `frames` and the background threads' CPU time at the last update,
    /// once there was one.
    at_update: Cell<Option<(Duration, Duration)>>,
    /// Moving average of the frame time between two updates.
    per_update: Cell<Duration>,
}

impl Pacing {
    /// Pacing for the window of `widget`, whose frames it times once the
    /// widget is realized.
    pub fn watch(widget: &impl IsA<gtk::Widget>) -> Rc<Pacing> {
        let pacing = Rc::new(Pacing::default());
        let p = pacing.clone();
        widget.as_ref().connect_realize(move |w| {
            let Some(clock) = w.frame_clock() else {
                return;
            };
            let began: Rc<Cell<Option<Instant>>> = Rc::default();
            let b = began.clone();
            clock.connect_before_paint(move |_| b.set(Some(Instant::now())));
            let p = p.clone();
            clock.connect_after_paint(move |_| {
                if let Some(t) = began.take() {
                    p.frames.set(p.frames.get() + t.elapsed());
                }
            });
        });
        pacing
    }

    /// Charges `d` of main-thread work done for the updates (taking a
    /// snapshot of the pass) to the current one, as frame time is.
    pub fn charge(&self, d: Duration) {
        self.frames.set(self.frames.get() + d);
    }

    /// A background update was applied: the frames since the previous one,
    /// and what the background threads (`background_cpu`, a running
    /// total: rendering and painting the updates) used meanwhile, are
    /// charged to that one.
    pub fn updated(&self, background_cpu: Duration) {
        let now = (self.frames.get(), background_cpu);
        if let Some(before) = self.at_update.replace(Some(now)) {
            let cost = now.0.saturating_sub(before.0) + now.1.saturating_sub(before.1);
            // A moving average: one slow frame (the first one sets the
            // renderer up) does not space the updates for long.
            self.per_update.set((self.per_update.get() * 3 + cost) / 4);
        }
    }

    /// Shortest interval until the next background update: ten times what
    /// an update costs in frames, within [`MIN_INTERVAL`] and
    /// [`MAX_INTERVAL`].
    pub fn interval(&self) -> Duration {
        (self.per_update.get() * 10).clamp(MIN_INTERVAL, MAX_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_are_spaced_by_the_frames_they_cause() {
        let p = Pacing::default();
        assert_eq!(p.interval(), MIN_INTERVAL);
        // The frames before the first update are not charged.
        p.frames.set(Duration::from_secs(2));
        p.updated(Duration::from_secs(1));
        assert_eq!(p.interval(), MIN_INTERVAL);
        // Eight frames of 80 ms after an update: 640 ms, a quarter of it
        // in the average, ten times that.
        // Four frames of 80 ms and 320 ms of rendering on other threads.
        p.frames.set(p.frames.get() + Duration::from_millis(320));
        p.updated(Duration::from_millis(1320));
        assert_eq!(p.interval(), Duration::from_millis(1600));
        for _ in 0..20 {
            p.frames.set(p.frames.get() + Duration::from_millis(640));
            p.updated(Duration::from_millis(1320));
        }
        assert_eq!(p.interval(), MAX_INTERVAL);
        // Cheap frames bring the interval back down.
        for _ in 0..40 {
            p.frames.set(p.frames.get() + Duration::from_millis(5));
            p.updated(Duration::from_millis(1320));
        }
        assert!(
            p.interval() <= Duration::from_millis(100),
            "{:?}",
            p.interval()
        );
    }
}
