//! What one frame of the window costs once a trace is analysed, when the
//! whole window is drawn again (as GTK does at every frame with its GL
//! renderer on llvmpipe under Xvfb, where partial redraws do not happen):
//! the median and 90th percentile of the interval between frames while a
//! background change damages the whole window at every frame, with all
//! viewers shown, then with each one hidden.
//!
//! ```sh
//! cargo build --release -p traceloom-gui --example frame_cost
//! GSK_RENDERER=gl xvfb-run -a -s "-screen 0 2000x1300x24" \
//!     target/release/examples/frame_cost TRACE
//! ```
//!
//! `EXTRA_CSS` adds style rules (e.g. `frame { border-radius: 9px; }`) to
//! see what a look costs. Frames are paced at 60 Hz: a median of 16.7 ms
//! means "at most a frame's time".

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk4 as gtk;
use gtk4::prelude::*;

/// Runs the main loop for `ms` milliseconds.
fn pump(ms: u64) {
    let ctx = glib::MainContext::default();
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        ctx.iteration(false);
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Prints the intervals between frames over 3 s during which the window's
/// background changes at every frame.
fn measure(window: &gtk::Window, label: &str) {
    let Some(clock) = window.frame_clock() else {
        eprintln!("frame_cost: the window has no frame clock");
        return;
    };
    let intervals: Rc<RefCell<Vec<f64>>> = Rc::default();
    let last = Rc::new(Cell::new(None::<Instant>));
    let (l, i) = (last.clone(), intervals.clone());
    let handler = clock.connect_before_paint(move |_| {
        let now = Instant::now();
        if let Some(t) = l.replace(Some(now)) {
            i.borrow_mut().push((now - t).as_secs_f64() * 1e3);
        }
    });
    let flip = Cell::new(false);
    let tick = window.add_tick_callback(move |w, _| {
        flip.set(!flip.get());
        if flip.get() {
            w.add_css_class("frame-cost-alt");
        } else {
            w.remove_css_class("frame-cost-alt");
        }
        glib::ControlFlow::Continue
    });
    pump(3000);
    tick.remove();
    clock.disconnect(handler);
    let mut v = intervals.borrow().clone();
    if v.is_empty() {
        println!("{label:>16}: no frame");
        return;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    println!(
        "{label:>16}: {n} frames, median {:.1} ms, p90 {:.1} ms",
        v[n / 2],
        v[n * 9 / 10]
    );
}

fn main() {
    traceloom_gui::prepare_process();
    if let Err(e) = gtk::init() {
        eprintln!("frame_cost: {e}");
        std::process::exit(1);
    }
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: frame_cost TRACE");
        std::process::exit(2);
    };
    let css = gtk::CssProvider::new();
    let extra = std::env::var("EXTRA_CSS").unwrap_or_default();
    css.load_from_data(&format!(
        "window.frame-cost-alt {{ background-color: #fdfdfd; }} {extra}"
    ));
    if let Some(display) = gtk::gdk::Display::default() {
        gtk::style_context_add_provider_for_display(
            &display,
            &css,
            gtk::STYLE_PROVIDER_PRIORITY_USER,
        );
    }
    let window = gtk::Window::new();
    window.set_default_size(1400, 1000);
    window.present();
    let host = match traceloom_gui::tab::TabHost::open(vec![path.into()], |e| eprintln!("{e}")) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("frame_cost: {e}");
            std::process::exit(1);
        }
    };
    window.set_child(Some(host.widget()));
    let tab = host.tab();
    tab.run_until_idle(Duration::from_secs(600));
    pump(2000);
    measure(&window, "all viewers");
    for (i, (_, title)) in traceloom_gui::layout::VIEWERS.iter().enumerate() {
        tab.layout.show(i, false);
        pump(500);
        measure(&window, &format!("no {}", title.to_lowercase()));
        tab.layout.show(i, true);
        pump(500);
    }
    window.set_child(Some(&gtk::Label::new(Some("empty"))));
    pump(500);
    measure(&window, "a label alone");
}
