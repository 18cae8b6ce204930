//! Work that waits for a widget's first frame: the window opens the
//! traces given at start, and a tab starts its whole-trace pass, once GTK
//! has painted them. GTK's first frame of new content sets its renderer
//! up (with the GL renderer on a software rasterizer, llvmpipe compiles
//! shaders for it: 50–80 ms of the main thread for the window, then for a
//! tab), which the work would only compete with for the cores, and stall
//! behind.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use gtk4 as gtk;
use gtk4::glib;
use gtk4::prelude::*;

/// Longest wait for a first frame: the work for a widget not shown by
/// then (a window not mapped yet, a tab in the background) starts anyway.
pub const FIRST_FRAME_WAIT: Duration = Duration::from_secs(2);

/// Runs `f` once, at the end of the first frame painted after `widget` is
/// mapped (at once when it is mapped without a frame clock), or after
/// `wait` if no such frame came by then (a window not shown yet).
pub fn after_first_paint(
    widget: &impl IsA<gtk::Widget>,
    wait: Duration,
    f: impl FnOnce() + 'static,
) {
    let f = Rc::new(RefCell::new(Some(f)));
    let run = move || {
        if let Some(f) = f.borrow_mut().take() {
            f();
        }
    };
    glib::timeout_add_local_once(wait, run.clone());
    widget.connect_map(move |w| {
        let Some(clock) = w.frame_clock() else {
            run();
            return;
        };
        let handler: Rc<Cell<Option<glib::SignalHandlerId>>> = Rc::default();
        let (h, run) = (handler.clone(), run.clone());
        handler.set(Some(clock.connect_after_paint(move |clock| {
            run();
            if let Some(id) = h.take() {
                clock.disconnect(id);
            }
        })));
    });
}
