//! The control flow with many threads, as issue 20 tried it: a generated
//! kernel trace of 1,600-odd threads in a 1366×768 window. The rows
//! scroll (the scrollbar beside them), a click on a process's triangle
//! collapses it and a second expands it, "Collapse all" leaves the
//! processes only, the rows filter keeps the matching threads under their
//! processes, "Hide idle" and the CPU-time order do what they say, and
//! "Follow thread" filters the event list to the selected thread as
//! `traceloom dump --filter` does. Screenshots at 1366×768 and 1920×1080.

use std::path::Path;
use std::time::Duration;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_gui::tab::{follow_filter, Tab, TabHost};
use traceloom_viewers::TimeGraphRender;

use super::{pump, pump_until, Outcome};

/// Services the tab and lets it draw until the control flow shows a render
/// made after `changed` returns true (or 30 s).
fn settle_rows(tab: &Tab, changed: impl Fn(&TimeGraphRender) -> bool) -> bool {
    pump_until(|| {
        tab.run_until_idle(Duration::from_millis(200));
        tab.control_flow.render().is_some_and(|r| changed(&r)) && !tab.busy()
    }) && {
        pump(200);
        true
    }
}

fn rows(tab: &Tab) -> usize {
    tab.control_flow.render().map_or(0, |r| r.tree().len())
}

/// The control flow's row labels, in display order.
fn labels(tab: &Tab) -> Vec<String> {
    let render = tab.control_flow.render();
    let rows = render.as_ref().map(|r| r.tree().rows()).unwrap_or_default();
    rows.iter().map(|r| r.label.to_string()).collect()
}

pub(crate) fn control_flow_rows(out: &mut Outcome, shots: &Path) {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("many-threads");
    let config = traceloom_kernelgen::GeneratorConfig {
        processes: 200,
        threads_per_process: 8,
        events: 400_000,
        fork_rate: 0.0,
        ..Default::default()
    };
    traceloom_kernelgen::generate(&config, &dir).expect("generate a kernel trace");
    let host = TabHost::open(vec![dir.clone()], |e| eprintln!("rows tab: {e}"))
        .expect("open the generated trace");
    let tab = host.tab();
    let window = gtk::Window::new();
    window.set_default_size(1366, 768);
    window.set_child(Some(host.widget()));
    window.present();
    assert!(tab.run_until_idle(Duration::from_secs(120)));
    let all = settle_rows(&tab, |r| r.tree().len() > 1000);
    let n = rows(&tab);
    let cf = &tab.control_flow;
    let bar = &cf.scrollbar;
    let adj = bar.adjustment();
    out.check(
        "control_flow_many_rows_scroll",
        all && bar.is_sensitive() && adj.upper() > adj.page_size() * 10.0,
        || {
            format!(
                "{n} rows; scrollbar sensitive {}, upper {} page {}",
                bar.is_sensitive(),
                adj.upper(),
                adj.page_size()
            )
        },
    );
    // The scrollbar moves the rows.
    adj.set_value(adj.upper() / 2.0);
    pump(200);
    let scrolled = cf.rows_scroll();
    out.check(
        "scrollbar_scrolls_rows",
        (scrolled - adj.upper() / 2.0).abs() < 1.0,
        || format!("rows scrolled {scrolled}, asked {}", adj.upper() / 2.0),
    );
    let r = traceloom_gui::screenshot::save_png(&window, &shots.join("many-threads-1366x768.png"));
    out.check("screenshot_many_threads_1366", r.is_ok(), || {
        format!("{r:?}")
    });
    adj.set_value(0.0);
    pump(200);
    zoomed_screenshot(
        out,
        &tab,
        &window,
        &shots.join("many-threads-1366x768-zoomed.png"),
    );

    // A click on the first process's triangle collapses it, a second one
    // expands it (scrolled to it first: kernel threads come first).
    let render = cf.render().expect("a render");
    let first = render
        .tree()
        .rows()
        .iter()
        .position(|r| r.has_children)
        .expect("a process with threads");
    let row_h = cf.layout().expect("a layout").row_height;
    cf.scroll_rows_to(first as f64 * row_h);
    pump(300);
    let layout = cf.layout().expect("a layout");
    let rows_on_screen = (0..(layout.graph.h as usize))
        .step_by(4)
        .filter_map(|dy| layout.row_at(layout.graph.y + dy as f64));
    let (i, parent) = rows_on_screen
        .filter_map(|i| render.tree().rows().get(i).map(|r| (i, r.clone())))
        .find(|(_, r)| r.has_children)
        .unwrap_or_else(|| {
            panic!(
                "no process row on screen: graph {:?}, scroll {}, first process at {first}",
                layout.graph, layout.scroll_y
            )
        });
    let children = render
        .tree()
        .rows()
        .iter()
        .filter(|r| r.parent == Some(parent.id))
        .count();
    let y = layout.row_center(i);
    let x = (4..200)
        .map(f64::from)
        .find(|&x| layout.expander_at(&render, x, y) == Some(parent.id))
        .expect("the triangle is hit somewhere");
    cf.release(x, y, 0.0, 0.0);
    let collapsed = settle_rows(&tab, |r| r.tree().len() == n - children);
    cf.release(x, y, 0.0, 0.0);
    let expanded = settle_rows(&tab, |r| r.tree().len() == n);
    out.check("click_collapses_a_process", collapsed && expanded, || {
        format!(
            "{} has {children} threads; rows {n} → {}",
            parent.label,
            rows(&tab)
        )
    });

    // Collapse all: the processes only.
    let processes = render.tree().rows().iter().filter(|r| r.depth == 0).count();
    let collapse = find_button(&tab.rows_bar.widget, "Collapse all");
    collapse.emit_clicked();
    let only = settle_rows(&tab, |r| r.tree().len() == processes);
    find_button(&tab.rows_bar.widget, "Expand all").emit_clicked();
    let back = settle_rows(&tab, |r| r.tree().len() == n);
    out.check("collapse_and_expand_all", only && back, || {
        format!("{processes} processes; rows {}", rows(&tab))
    });

    // The rows filter: one thread's TID, and a name.
    let thread = render
        .tree()
        .rows()
        .iter()
        .find(|r| r.depth == 1)
        .cloned()
        .expect("a thread");
    let tid = thread.properties.get("tid").expect("tid").to_owned();
    tab.rows_bar.filter.set_text(&format!("^{tid}$"));
    let one = settle_rows(&tab, |r| r.tree().len() == 2);
    let shown = labels(&tab);
    // With its rows fitting, the graph keeps its scrollbar's room (the
    // bar no longer scrolls): it still ends where the resources' does.
    pump(300);
    let axes = super::time_axes(&tab);
    let same = |a: Option<(f64, f64)>, b: Option<(f64, f64)>| {
        a.zip(b)
            .is_some_and(|(a, b)| (a.0 - b.0).abs() <= 1.0 && (a.1 - b.1).abs() <= 1.0)
    };
    out.check(
        "rows_filter_by_tid",
        one && shown.contains(&thread.label.to_string())
            && same(axes[0], axes[1])
            && bar.is_visible()
            && !bar.is_sensitive(),
        || {
            format!(
                "filter ^{tid}$ shows {shown:?}; left and right x of the graphs {:?}; scrollbar visible {}, sensitive {}",
                &axes[..2],
                bar.is_visible(),
                bar.is_sensitive()
            )
        },
    );
    tab.rows_bar.filter.set_text("");
    let back = settle_rows(&tab, |r| r.tree().len() == n);

    // Hide idle + CPU time: running threads only, busiest first.
    tab.rows_bar.hide_idle.set_active(true);
    tab.rows_bar.order.set_selected(3);
    let busy = settle_rows(&tab, |r| r.tree().len() < n);
    let running = labels(&tab);
    out.check(
        "hide_idle_threads",
        back && busy && !running.iter().any(|l| l.starts_with("swapper")),
        || {
            format!(
                "{} rows with hide idle: {:?}…",
                running.len(),
                &running[..running.len().min(5)]
            )
        },
    );
    tab.rows_bar.hide_idle.set_active(false);
    tab.rows_bar.order.set_selected(0);
    settle_rows(&tab, |r| r.tree().len() == n);

    // Follow the selected thread (a click on its name): the list shows
    // its events only.
    let render = cf.render().expect("a render");
    let k = render
        .tree()
        .index_of(thread.id)
        .expect("the thread is shown");
    cf.scroll_rows_to(k as f64 * row_h);
    pump(300);
    let layout = cf.layout().expect("a layout");
    cf.release(
        layout.tree.x + layout.tree.w - 5.0,
        layout.row_center(k),
        0.0,
        0.0,
    );
    let selected = cf.selected_row().map(|(id, _)| id);
    tab.rows_bar.follow.set_active(true);
    let tid_number: i64 = tid.parse().expect("a TID is a number");
    let followed = pump_until(|| {
        tab.run_until_idle(Duration::from_millis(200));
        tab.filter_text() == follow_filter(tid_number) && !tab.list_reading() && !tab.busy()
    });
    pump(300);
    let want = super::dump_events(&dir, Some(&follow_filter(tid_number)));
    let listed = super::shown(&tab);
    out.check(
        "follow_thread_filters_the_list",
        selected == Some(thread.id)
            && followed
            && !listed.is_empty()
            && listed[..] == want[..listed.len().min(want.len())],
        || {
            format!(
                "selected {selected:?}, filter {:?}; list {:?}, dump {:?}",
                tab.filter_text(),
                &listed[..listed.len().min(3)],
                &want[..want.len().min(3)]
            )
        },
    );
    // The thread's switches out are among its events: when and why it
    // stopped running.
    let outs = super::dump_events(&dir, Some(&format!("event.field.prev_tid == {tid}")));
    let wanted: std::collections::HashSet<_> = want.iter().collect();
    out.check(
        "follow_thread_lists_its_switches_out",
        !outs.is_empty() && outs.iter().all(|e| wanted.contains(e)),
        || {
            format!(
                "{} switches out, {} of them followed",
                outs.len(),
                outs.iter().filter(|e| wanted.contains(e)).count()
            )
        },
    );
    tab.rows_bar.follow.set_active(false);
    pump_until(|| {
        tab.run_until_idle(Duration::from_millis(200));
        tab.filter_text().is_empty()
    });

    // Maximize and restore a viewer, hide one from the View menu.
    super::list::layout_maximize_and_view_menu(out, &tab);

    window.set_default_size(1920, 1080);
    window.set_size_request(1920, 1080);
    pump(500);
    settle_rows(&tab, |_| true);
    let r = save_when_drawn(&window, &shots.join("many-threads-1920x1080.png"));
    out.check("screenshot_many_threads_1920", r.is_ok(), || {
        format!("{r:?}")
    });
    zoomed_screenshot(
        out,
        &tab,
        &window,
        &shots.join("many-threads-1920x1080-zoomed.png"),
    );
    window.close();
    pump(100);
}

/// The button labelled `label` under `root`.
fn find_button(root: &impl IsA<gtk::Widget>, label: &str) -> gtk::Button {
    super::descendants(root.upcast_ref())
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Button>().ok())
        .find(|b| b.label().as_deref() == Some(label))
        .unwrap_or_else(|| panic!("no button {label:?}"))
}

/// Saves a screenshot of `window` to `path` once it has drawn: right
/// after a resize the window may not have painted its new size yet, and
/// its paintable then has nothing to show; the main loop is pumped and
/// the screenshot tried again, for up to 3 s.
pub(crate) fn save_when_drawn(window: &gtk::Window, path: &Path) -> Result<(), String> {
    let mut r = traceloom_gui::screenshot::save_png(window, path);
    for _ in 0..30 {
        if r.is_ok() {
            break;
        }
        pump(100);
        r = traceloom_gui::screenshot::save_png(window, path);
    }
    r
}

/// Zooms into a fiftieth of the trace in its middle, saves the window to
/// `path`, and zooms back out.
fn zoomed_screenshot(out: &mut Outcome, tab: &Tab, window: &gtk::Window, path: &Path) {
    let span = tab.span();
    let mid = span.start + (span.span() / 2) as i64;
    let half = (span.span() / 100) as i64;
    tab.navigate(traceloom_gui::views::Nav::Window(
        traceloom_base::TimeRange::new(mid - half, mid + half),
    ));
    settle_rows(tab, |r| r.scale().range.span() < span.span() / 10);
    let r = traceloom_gui::screenshot::save_png(window, path);
    out.check("screenshot_many_threads_zoomed", r.is_ok(), || {
        format!("{r:?}")
    });
    tab.zoom_fit();
    settle_rows(tab, |r| r.scale().range.span() >= span.span() / 2);
}
