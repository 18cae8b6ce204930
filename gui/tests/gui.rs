//! GUI tests driving the real window (run under `xvfb-run -a`): open a
//! kernel trace, check that the five viewers are populated, click an event
//! in the list and check that the time graphs follow, select a range and
//! check that the statistics follow, type a bad filter and check the inline
//! error, scroll the time-scrolled event list (scrollbar drag, lines,
//! pages, filtered) and compare its rows with `traceloom dump`, save
//! screenshots of the window zoomed out and in (under the test's directory
//! in `target/`, or `TRACELOOM_SCREENSHOTS_DIR`: `scripts/screenshots.sh`
//! sets it to `docs/screenshots/` to refresh the committed ones),
//! open a CTF 2 trace, and measure the main loop's latency while a
//! generated kernel trace is read in the background.
//!
//! The latency test generates a trace of `TRACELOOM_GUI_LATENCY_MB`
//! megabytes (default [`DEFAULT_LATENCY_MB`], which CI runs in well under a
//! minute), or reads the trace at `TRACELOOM_GUI_LATENCY_TRACE` (e.g. a
//! 1 GB generated trace, issue 5's setting); `TRACELOOM_GUI_LATENCY_ONLY=1`
//! runs it alone. It prints the median and worst delay, the same less the
//! main thread's waits for a CPU, the main-thread work by source
//! (`traceloom_gui::stalls`, wall and CPU time) and, for the latest probes,
//! which work ran while they waited. It always wants the read complete, a
//! median delay ≤ 16 ms and no main-thread callback using more than
//! [`CPU_LIMIT`] of CPU; the worst delay less the main thread's waits for a
//! CPU (on a shared machine, other processes' turns) must stay under
//! [`FREEZE_LIMIT`]. With `TRACELOOM_GUI_LATENCY_STRICT=1` (a quiet
//! machine) the worst delay itself must meet issue 5's 50 ms.
//!
//! Without a display the tests fail, saying to run them under `xvfb-run -a`.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{Component, ComponentController};
use traceloom_gui::app::{App, AppInit};
use traceloom_gui::stalls;
use traceloom_gui::tab::{Tab, TabHost};
use traceloom_gui::views::Nav;

mod background;
mod list;
mod paje;
mod rows;

/// Size of the generated trace of the latency test, in MB, when
/// `TRACELOOM_GUI_LATENCY_MB` is not set.
pub(crate) const DEFAULT_LATENCY_MB: u64 = 40;
/// Longest main-loop stall the default latency check accepts.
const FREEZE_LIMIT: Duration = Duration::from_millis(500);
/// Most main-thread CPU time one callback (idle, timeout, draw function or
/// GTK frame phase) may use while the trace is read. CPU time rather than
/// wall time: on a shared machine (CI) the wall time of anything includes
/// the other processes' turns.
pub(crate) const CPU_LIMIT: Duration = Duration::from_millis(50);
/// Period of the latency probe.
const PROBE_PERIOD: Duration = Duration::from_millis(20);

/// Handles GTK events for `ms` milliseconds (layout, drawing, idle
/// servicing).
pub(crate) fn pump(ms: u64) {
    let ctx = glib::MainContext::default();
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        // Bounded too: a source that is always ready must not hold it.
        while ctx.pending() && Instant::now() < end {
            ctx.iteration(false);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Services the tab's requests to the end, then lets the views draw,
/// until 300 ms of drawing start nothing new: a picture landing may ask
/// for a render at the graph's real width, and its labels for another
/// tree column, whose render asks again (a slow machine can land one at
/// the very end of a fixed wait).
pub(crate) fn settle(tab: &Tab) {
    for _ in 0..20 {
        assert!(
            tab.run_until_idle(Duration::from_secs(120)),
            "requests still pending after 2 minutes"
        );
        let quiet = (0..15).all(|_| {
            pump(20);
            !tab.busy()
        });
        if quiet {
            return;
        }
    }
    panic!("the views kept asking for renders through 20 rounds");
}

fn trace_path() -> PathBuf {
    traceloom_testdata::ctf("tracecompass/bug446190")
}

/// Where the screenshots go: `TRACELOOM_SCREENSHOTS_DIR` when set (see
/// `scripts/screenshots.sh`), else the test's scratch folder in `target/`,
/// so that a test run leaves the work tree clean.
pub(crate) fn screenshots_dir() -> PathBuf {
    std::env::var_os("TRACELOOM_SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots"))
}

/// `(time of day GMT, event name)` of every event `traceloom dump` prints
/// for `path`, with `filter` if given.
pub(crate) fn dump_events(path: &Path, filter: Option<&str>) -> Vec<(String, String)> {
    let mut args = vec!["traceloom".to_string(), "dump".into(), "--clock-gmt".into()];
    if let Some(f) = filter {
        args.push("--filter".into());
        args.push(f.into());
    }
    args.push(path.display().to_string());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = traceloom_cli::run(args, &mut out, &mut err);
    assert_eq!(code, 0, "dump failed: {}", String::from_utf8_lossy(&err));
    String::from_utf8(out)
        .expect("UTF-8 dump")
        .lines()
        .map(|l| {
            // [08:36:01.211260539] (+0.000014700) lager kmem_kfree: { ...
            let time = l[1..l.find(']').expect("time")].to_string();
            let rest = &l[l.find(") ").expect("delta") + 2..];
            let name = rest
                .split_once(' ')
                .map_or(rest, |(_, r)| r)
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string();
            (time, name)
        })
        .collect()
}

/// `t` (ns since the epoch) as dump's `--clock-gmt` time of day.
pub(crate) fn gmt(t: Time) -> String {
    let day = t.rem_euclid(86_400_000_000_000);
    let (s, ns) = (day / 1_000_000_000, day % 1_000_000_000);
    format!("{:02}:{:02}:{:02}.{ns:09}", s / 3600, s / 60 % 60, s % 60)
}

/// The rows the list shows, as `(time of day GMT, event name)`.
fn shown(tab: &Tab) -> Vec<(String, String)> {
    (0..tab.events.len())
        .map(|i| {
            (
                gmt(tab.events.time_of(i).expect("row time")),
                tab.events
                    .column(i, traceloom_gui::views::eventlist::col::EVENT)
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// Compares the shown rows with `dump[k..]` once the list's move is done
/// (its requests are serviced by the window's idle source); describes the
/// difference.
fn rows_match(tab: &Tab, dump: &[(String, String)], k: usize) -> Result<(), String> {
    if !pump_until(|| !tab.list_reading()) {
        return Err("the list's move did not complete in 30 s".into());
    }
    let rows = shown(tab);
    let n = tab.events.page();
    let want = &dump[k.min(dump.len())..(k + n).min(dump.len())];
    if rows.is_empty() || rows != want {
        return Err(format!(
            "page {n}, index {k}: shown {:?}… ({} rows), dump {:?}… ({} rows)",
            rows.first(),
            rows.len(),
            want.first(),
            want.len()
        ));
    }
    Ok(())
}

/// `host`'s tab in a window of its own, once it has settled and its list
/// has its rows.
pub(crate) fn show_settled(host: &TabHost) -> (Rc<Tab>, gtk::Window) {
    let tab = host.tab();
    let window = gtk::Window::new();
    window.set_default_size(1400, 1000);
    window.set_child(Some(host.widget()));
    window.present();
    settle(&tab);
    pump_until(|| !tab.list_reading());
    (tab, window)
}

/// The left and right x, in the tab's coordinates, of the control flow's
/// and the resources' graphs and of the histogram's plot, as last drawn.
fn time_axes(tab: &Tab) -> [Option<(f64, f64)>; 3] {
    let root = tab.widget.upcast_ref::<gtk::Widget>();
    let edges = |area: &gtk::DrawingArea, l: f64, r: f64| {
        let at = |x: f64| {
            area.compute_point(root, &gtk::graphene::Point::new(x as f32, 0.0))
                .map(|p| f64::from(p.x()))
        };
        Some((at(l)?, at(r)?))
    };
    let graph = |v: &traceloom_gui::views::timegraph::TimeGraphView| {
        v.layout()
            .and_then(|l| edges(&v.area, l.graph.x, l.graph.right()))
    };
    [
        graph(&tab.control_flow),
        graph(&tab.resources),
        tab.histogram
            .layout()
            .and_then(|l| edges(&tab.histogram.area, l.plot.x, l.plot.right())),
    ]
}

/// Drags the scrollbar to `t` and lets the window run; again when the
/// list's page size changed meanwhile (a resize keeps the top row, which
/// is then no longer the one `t` asks near the end).
fn drag(tab: &Tab, t: Time) {
    for _ in 0..5 {
        let page = tab.events.page();
        tab.events.drag_to(t);
        pump(50);
        if tab.events.page() == page {
            return;
        }
    }
}

/// Index in `dump` of the first event at or after `t`.
fn index_at(dump: &[(String, String)], t: Time) -> usize {
    let g = gmt(t);
    dump.partition_point(|(d, _)| *d < g)
}

/// Drags the scrollbar, scrolls by lines (wheel, arrows) and pages, across
/// the backing buffer's edges, and checks every page against the dump.
fn event_list_scrolling(out: &mut Outcome, tab: &Tab, path: &Path) {
    let dump = dump_events(path, None);
    let span = tab.span();
    // The page follows the list's height, which may change between steps:
    // it is read again before each page move.
    let page = || tab.events.page();
    // Let the list reach its laid-out page size.
    let mut last = (page(), 0);
    for _ in 0..20 {
        pump(250);
        last = if page() == last.0 {
            (last.0, last.1 + 1)
        } else {
            (page(), 0)
        };
        if last.1 >= 3 {
            break;
        }
    }
    let mut steps: Vec<Result<(), String>> = Vec::new();
    let mut step = |what: &str, r: Result<(), String>| {
        steps.push(r.map_err(|e| format!("{what}: {e}")));
    };

    // Far scroll: drag to the middle of the trace.
    let t = span.start + (span.span() / 2) as i64;
    drag(tab, t);
    let mut k = index_at(&dump, t);
    step("drag to the middle", rows_match(tab, &dump, k));
    let sb = tab.events.scrollbar_time();
    step(
        "scrollbar shows the top row's time",
        if tab.events.time_of(0) == Some(sb) {
            Ok(())
        } else {
            Err(format!("{sb} vs {:?}", tab.events.time_of(0)))
        },
    );
    // Near scrolls.
    tab.events.wheel(1.0);
    k += 3;
    step("wheel down", rows_match(tab, &dump, k));
    // The arrows move the selection, and scroll a line past the last
    // (first) row shown.
    tab.events.select_row(tab.events.len() - 1);
    tab.events.key(gtk::gdk::Key::Down);
    k += 1;
    step("arrow down", rows_match(tab, &dump, k));
    k += page();
    tab.events.key(gtk::gdk::Key::Page_Down);
    step("page down", rows_match(tab, &dump, k));
    k -= page();
    tab.events.key(gtk::gdk::Key::Page_Up);
    step("page up", rows_match(tab, &dump, k));
    tab.events.select_row(0);
    tab.events.key(gtk::gdk::Key::Up);
    tab.events.wheel(-1.0);
    k -= 4;
    step("arrow and wheel up", rows_match(tab, &dump, k));
    // Far enough to leave the ~1000-event backing buffer both ways.
    let pages = 2_500 / page() + 1;
    let mut moved = Vec::new();
    for _ in 0..pages {
        moved.push(page());
        tab.events.key(gtk::gdk::Key::Page_Down);
    }
    let down: usize = moved.iter().sum();
    step(
        "pages down past the buffer",
        rows_match(tab, &dump, k + down),
    );
    let mut up = 0;
    for _ in 0..pages {
        up += page();
        tab.events.key(gtk::gdk::Key::Page_Up);
    }
    k = (k + down).saturating_sub(up);
    step("pages up past the buffer", rows_match(tab, &dump, k));
    // Both ends.
    drag(tab, span.end);
    let last = dump.len().saturating_sub(page());
    step("drag to the end", rows_match(tab, &dump, last));
    drag(tab, span.start);
    step("drag to the start", rows_match(tab, &dump, 0));
    tab.events.key(gtk::gdk::Key::Up);
    step("arrow up at the start", rows_match(tab, &dump, 0));
    // Home and End go to the trace's ends, not the page's.
    tab.events.key(gtk::gdk::Key::End);
    step("End", rows_match(tab, &dump, last));
    tab.events.key(gtk::gdk::Key::Home);
    step("Home", rows_match(tab, &dump, 0));

    // The tab's filter applies to the scrolled list.
    let expr = "event.name == \"sched_switch\"";
    tab.set_filter(expr);
    pump(50);
    let filtered = dump_events(path, Some(expr));
    let t = span.start + (span.span() / 3) as i64;
    drag(tab, t);
    let k = index_at(&filtered, t);
    step("filtered drag", rows_match(tab, &filtered, k));
    let k = k + page();
    tab.events.key(gtk::gdk::Key::Page_Down);
    step("filtered page down", rows_match(tab, &filtered, k));

    // A filter on the state (after each event, as `dump --filter`): the
    // list's requests restore the state from checkpoints.
    let expr = "state.mode == \"syscall\" && name != \"sched_switch\"";
    tab.set_filter(expr);
    pump(50);
    let filtered = dump_events(path, Some(expr));
    let t = span.start + (span.span() / 3) as i64;
    drag(tab, t);
    let k = index_at(&filtered, t);
    step("state-filtered drag", rows_match(tab, &filtered, k));
    let k = k + page();
    tab.events.key(gtk::gdk::Key::Page_Down);
    step("state-filtered page down", rows_match(tab, &filtered, k));
    tab.set_filter("");
    pump(50);

    let failed: Vec<String> = steps.into_iter().filter_map(Result::err).collect();
    out.check(
        "event_list_scrolls_by_time_lines_pages",
        page() > 0 && dump.len() > 3 * 1000 && failed.is_empty(),
        || format!("page {}, {} events; {failed:?}", page(), dump.len()),
    );
}

/// Every widget under `root` (itself included), depth first.
fn descendants(root: &gtk::Widget) -> Vec<gtk::Widget> {
    let mut out = vec![root.clone()];
    let mut child = root.first_child();
    while let Some(c) = child {
        out.extend(descendants(&c));
        child = c.next_sibling();
    }
    out
}

/// The first widget of type `W` under `root`.
fn find<W: IsA<gtk::Widget>>(root: &impl IsA<gtk::Widget>) -> Option<W> {
    descendants(root.upcast_ref())
        .into_iter()
        .find_map(|w| w.downcast::<W>().ok())
}

/// The first tab of `app`'s window, once it has opened (the traces given
/// at start open after the window's first frame, read on a thread).
pub(crate) fn first_tab(app: &relm4::Controller<App>) -> Option<Rc<Tab>> {
    pump_until(|| app.model().tab(0).is_some() || app.model().opening() == 0);
    app.model().tab(0)
}

/// Runs the window until `cond` holds (or 30 s pass).
pub(crate) fn pump_until(cond: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(30);
    while !cond() {
        if Instant::now() > end {
            return false;
        }
        pump(20);
    }
    true
}

/// What the window's info bar shows, when it is revealed: its kind and
/// text.
pub(crate) fn info_bar(window: &gtk::Window) -> Option<(gtk::MessageType, String)> {
    let bar: gtk::InfoBar = find(window)?;
    if !bar.is_revealed() {
        return None;
    }
    let text = descendants(bar.upcast_ref())
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Label>().ok())
        .map(|l| l.text().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    Some((bar.message_type(), text))
}

/// Clicks the close button on the notebook tab of `tab`.
fn click_tab_close(window: &gtk::Window, tab: &Tab) -> bool {
    let Some(notebook) = find::<gtk::Notebook>(window) else {
        return false;
    };
    let Some(label) = notebook.tab_label(&tab.widget) else {
        return false;
    };
    match find::<gtk::Button>(&label) {
        Some(b) => {
            b.emit_clicked();
            true
        }
        None => false,
    }
}

/// The files directly in `dir`, with their sizes and modification times.
fn listing(dir: &Path) -> Vec<(String, u64, Option<std::time::SystemTime>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| {
                    let m = e.metadata().ok();
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        m.as_ref().map_or(0, |m| m.len()),
                        m.and_then(|m| m.modified().ok()),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Issue 5, acceptance 5: the configuration changed through the widgets
/// (window typed in the time bar, filter, a bookmark) is saved when the tab
/// is closed, under the XDG configuration directory and never next to the
/// trace, and comes back when the trace is reopened from File → Recent
/// traces, and in a new window opening the last traceset.
fn config_restored(out: &mut Outcome, path: &Path) {
    let dir = traceloom_gui::config::config_dir().expect("XDG_CONFIG_HOME is set");
    let file = traceloom_gui::config::trace_config_path(&dir, &[path.to_path_buf()]);
    let _ = std::fs::remove_file(&file);
    let before = listing(path);
    let controller = App::builder()
        .launch(AppInit {
            paths: vec![path.to_path_buf()],
        })
        .detach();
    let window: gtk::Window = controller.widget().clone().upcast();
    window.set_default_size(1400, 1000);
    window.present();
    let tab = first_tab(&controller).expect("a tab");
    settle(&tab);
    let span = tab.span();
    let (s, e) = (
        span.start + (span.span() / 5) as i64,
        span.start + (span.span() / 3) as i64,
    );
    let (s_text, e_text) = (tab_time(s), tab_time(e));
    tab.type_window(&s_text, &e_text);
    let filter = "event.name == \"sched_switch\"";
    tab.set_filter(filter);
    let mark = s + (e - s) / 2;
    tab.type_current_time(&tab_time(mark));
    tab.key(gtk::gdk::Key::b);
    settle(&tab);
    let shown = (tab.time_bar(), tab.filter_text(), tab.bookmarks_listed());
    let closed = click_tab_close(&window, &tab);
    drop(tab);
    let emptied = pump_until(|| controller.model().tab_count() == 0);
    let saved = file.is_file();

    // Reopen from the File menu's recent traces.
    window
        .activate_action("win.recent", Some(&0u32.to_variant()))
        .expect("the recent action");
    let reopened = pump_until(|| controller.model().tab_count() == 1);
    let check = |tab: &Tab| -> Result<(), String> {
        let bar = tab.time_bar();
        let marks = tab.bookmarks_listed();
        let rows_filtered = !tab.events.is_empty()
            && (0..tab.events.len()).all(|i| {
                tab.events
                    .row_text(i)
                    .is_some_and(|t| t.contains("sched_switch"))
            });
        let window_ok = tab.time_focus().window == Some(TimeRange::new(s, e))
            && tab.control_flow.options().view_range == Some(TimeRange::new(s, e));
        if bar[0] == s_text
            && bar[1] == e_text
            && window_ok
            && tab.filter_text() == filter
            && rows_filtered
            && marks.len() == 1
            && marks[0].starts_with("B1 (")
            && marks == shown.2
        {
            Ok(())
        } else {
            Err(format!(
                "time bar {bar:?} (want {s_text}, {e_text}), window {:?}, filter {:?}, \
                 rows filtered {rows_filtered}, bookmarks {marks:?} (shown before {:?})",
                tab.time_focus().window,
                tab.filter_text(),
                shown.2
            ))
        }
    };
    // Bound first: the model's borrow must not last while the window runs.
    let reopened_tab = controller.model().tab(0);
    let again = match reopened_tab {
        Some(tab) => {
            settle(&tab);
            let r = check(&tab);
            click_tab_close(&window, &tab);
            pump_until(|| controller.model().tab_count() == 0);
            r
        }
        None => Err("no tab reopened".into()),
    };
    window.close();
    pump(100);

    // A new window opens the last traceset with its configuration.
    let last = traceloom_gui::default_traceset();
    let second = App::builder()
        .launch(AppInit {
            paths: last.clone(),
        })
        .detach();
    let window2: gtk::Window = second.widget().clone().upcast();
    window2.present();
    let new_window = match first_tab(&second) {
        Some(tab) => {
            settle(&tab);
            let r = check(&tab);
            // Closed here, its configuration saved, before the next test
            // writes a corrupted one for the same trace: the window's
            // shutdown would close it later.
            click_tab_close(&window2, &tab);
            pump_until(|| second.model().tab_count() == 0);
            r
        }
        None => Err(format!("no tab for the last traceset {last:?}")),
    };
    window2.close();
    pump(100);
    let after = listing(path);
    out.check(
        "config_restored_on_reopen",
        closed
            && emptied
            && saved
            && reopened
            && shown.1 == filter
            && again.is_ok()
            && new_window.is_ok()
            && file.starts_with(&dir)
            && before == after,
        || {
            format!(
                "tab closed {closed}/{emptied}, saved {saved} ({}), reopened {reopened}, \
                 shown before close {shown:?}; from recent: {again:?}; new window: {new_window:?}; \
                 trace directory unchanged {}",
                file.display(),
                before == after
            )
        },
    );
}

/// Issue 5, acceptance 5: a corrupted configuration file is ignored: the
/// trace opens with the defaults (whole trace, no filter, no bookmark) and
/// the window shows a warning naming the file.
fn corrupted_config_ignored(out: &mut Outcome, path: &Path) {
    let dir = traceloom_gui::config::config_dir().expect("XDG_CONFIG_HOME is set");
    let file = traceloom_gui::config::trace_config_path(&dir, &[path.to_path_buf()]);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{\"time_window\": [1, \"oops\"], \"filter\": ").unwrap();
    let controller = App::builder()
        .launch(AppInit {
            paths: vec![path.to_path_buf()],
        })
        .detach();
    let window: gtk::Window = controller.widget().clone().upcast();
    window.present();
    let tab = first_tab(&controller);
    let result = match &tab {
        Some(tab) => {
            settle(tab);
            let shown = info_bar(&window);
            let defaults = tab.time_focus().window == Some(tab.span())
                && tab.filter_text().is_empty()
                && tab.bookmarks_listed().is_empty();
            // The views fill in once the list has its laid-out page (on a
            // loaded machine, a few resize checks later).
            // (The info bar leaves the list room for 4 whole rows in the
            // default window.)
            let filled = pump_until(|| {
                tab.events.len() >= 3
                    && tab.events.len() == tab.events.page()
                    && tab.control_flow.render().is_some()
            });
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let warned = shown.as_ref().is_some_and(|(kind, text)| {
                *kind == gtk::MessageType::Warning
                    && text.contains("corrupted")
                    && text.contains("ignored")
                    && text.contains(&name)
            });
            if defaults && warned && filled {
                Ok(())
            } else {
                Err(format!(
                    "defaults {defaults} (window {:?} of {:?}, filter {:?}, bookmarks {:?}), \
                     {} rows listed, control flow drawn {}, info bar {shown:?}",
                    tab.time_focus().window,
                    tab.span(),
                    tab.filter_text(),
                    tab.bookmarks_listed(),
                    tab.events.len(),
                    tab.control_flow.render().is_some()
                ))
            }
        }
        None => Err(format!(
            "the trace did not open; info bar {:?}",
            info_bar(&window)
        )),
    };
    window.close();
    pump(100);
    out.check(
        "corrupted_config_ignored_with_warning",
        result.is_ok(),
        || format!("{result:?}"),
    );
}

/// `t` as the time bar writes it.
fn tab_time(t: Time) -> String {
    traceloom_gui::time_text::format_time(t)
}

/// Median and worst of `d` (sorted in place).
fn median_worst(d: &mut [Duration]) -> (Duration, Duration) {
    d.sort();
    (
        d.get(d.len() / 2).copied().unwrap_or_default(),
        d.last().copied().unwrap_or_default(),
    )
}

/// A 1400×1000 window, up and watched by the stall accounting, that has
/// shown a tab of the bundled sample trace once and now shows a label:
/// its first frames set the renderer up. With GTK's GL renderer on a
/// software rasterizer (llvmpipe), the first frame that draws a tab
/// compiles shaders for 1.3-1.8 s on the main thread, once per machine
/// (Mesa keeps them in its cache), which is no trace's: a test timing a
/// trace's opening starts from here, as a user's window would.
pub(crate) fn warmed_window(test: &str) -> gtk::Window {
    let window = gtk::Window::new();
    window.set_default_size(1400, 1000);
    stalls::watch_frames(&window);
    window.present();
    let warmed = Instant::now();
    let sample = TabHost::open(vec![traceloom_testdata::sample_kernel()], |e| {
        eprintln!("warm-up tab: {e}")
    })
    .expect("open the sample trace");
    window.set_child(Some(sample.widget()));
    sample.tab().run_until_idle(Duration::from_secs(60));
    pump(1000);
    window.set_child(Some(&gtk::Label::new(Some("opening…"))));
    drop(sample);
    pump(500);
    println!(
        "{test}: renderer warmed up on the sample trace in {:.1} s",
        warmed.elapsed().as_secs_f64()
    );
    window
}

/// Issue 5, acceptance 3, scaled: while a generated kernel trace is read in
/// the background (state, statistics, histogram), a 20 ms GLib timeout
/// stands for periodic input; how late each one runs is the main loop's
/// latency. Wants the read complete and no stall over [`FREEZE_LIMIT`];
/// with `TRACELOOM_GUI_LATENCY_STRICT` set, median ≤ 16 ms and worst ≤
/// 50 ms (issue 5).
fn latency_while_reading(out: &mut Outcome) {
    let given = std::env::var_os("TRACELOOM_GUI_LATENCY_TRACE").map(PathBuf::from);
    let mb: u64 = std::env::var("TRACELOOM_GUI_LATENCY_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LATENCY_MB);
    let generated_dir =
        std::env::temp_dir().join(format!("traceloom-gui-latency-{}", std::process::id()));
    let dir = match &given {
        Some(p) => p.clone(),
        None => {
            let config = traceloom_kernelgen::GeneratorConfig {
                events: u64::MAX,
                max_bytes: Some(mb << 20),
                overwrite: true,
                ..Default::default()
            };
            let generated = Instant::now();
            let summary = traceloom_kernelgen::generate(&config, &generated_dir)
                .expect("generate a kernel trace");
            println!(
                "latency: generated {} events, {:.1} MB in {:.1} s",
                summary.events,
                summary.stream_bytes as f64 / 1e6,
                generated.elapsed().as_secs_f64()
            );
            generated_dir.clone()
        }
    };
    let size_mb = dir_size(&dir) as f64 / 1e6;
    println!(
        "latency: trace {} ({size_mb:.0} MB); GSK_RENDERER={}; load average {}",
        dir.display(),
        std::env::var("GSK_RENDERER").unwrap_or_default(),
        load_average()
    );
    let window = warmed_window("latency");
    // Opening (index of the packets, metadata): reported, and counted as a
    // stall when longer than a frame.
    let opened = Instant::now();
    let host = TabHost::open(vec![dir.clone()], |e| eprintln!("latency tab: {e}"))
        .expect("open the trace");
    let tab = host.tab();
    let open_time = opened.elapsed();
    println!(
        "latency: TabHost::open took {:.1} ms",
        open_time.as_secs_f64() * 1e3
    );
    stalls::start();
    window.set_child(Some(host.widget()));

    // Each probe: when it ran, how late it was, and how long the main
    // thread waited for a CPU meanwhile (run-queue wait: other threads
    // and processes had the cores).
    let delays: Rc<RefCell<Vec<Probe>>> = Rc::default();
    let last = Rc::new(Cell::new((Instant::now(), run_queue_wait())));
    let probe = {
        let (delays, last) = (delays.clone(), last.clone());
        glib::timeout_add_local(PROBE_PERIOD, move || {
            let (now, waited) = (Instant::now(), run_queue_wait());
            let (then, waited_then) = last.get();
            // GLib schedules the next run one period after this one ran.
            delays.borrow_mut().push(Probe {
                at: now,
                delay: (now - then).saturating_sub(PROBE_PERIOD),
                cpu_wait: waited.saturating_sub(waited_then),
            });
            last.set((now, waited));
            glib::ControlFlow::Continue
        })
    };
    let ctx = glib::MainContext::default();
    let start = Instant::now();
    // Generous: the 40 MB default reads in well under 15 s.
    let limit = Duration::from_secs(60 + (size_mb as u64) / 2);
    while tab.busy() && start.elapsed() < limit {
        ctx.iteration(true);
    }
    let read = start.elapsed();
    probe.remove();
    let (per_source, stall_list) = stalls::stop();
    // Let the last renders land (a histogram re-binned for the final axis
    // width, say), then check the read completed.
    tab.run_until_idle(Duration::from_secs(60));
    pump(300);
    let complete = !tab.busy()
        && !tab.statistics.caption().contains("so far")
        && tab.statistics.render().is_some();
    // The analysed trace as it looks (`latency-<renderer>.png`), once the
    // painting threads drew the last renders.
    pump(500);
    let shot = format!(
        "latency-{}.png",
        std::env::var("GSK_RENDERER").unwrap_or_default()
    );
    if let Err(e) = traceloom_gui::screenshot::save_png(&window, &screenshots_dir().join(&shot)) {
        println!("latency: no screenshot: {e}");
    }
    let probes = delays.borrow().clone();
    let mut d: Vec<Duration> = probes.iter().map(|p| p.delay).collect();
    let (median, worst) = median_worst(&mut d);
    let over = d.iter().filter(|&&x| x > Duration::from_millis(50)).count();
    println!(
        "latency: {size_mb:.0} MB read in {:.1} s; {} probes every {} ms: median delay {:.1} ms, worst {:.1} ms, {over} over 50 ms",
        read.as_secs_f64(),
        d.len(),
        PROBE_PERIOD.as_millis(),
        median.as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
    let mut own: Vec<Duration> = probes
        .iter()
        .map(|p| p.delay.saturating_sub(p.cpu_wait))
        .collect();
    let (own_median, own_worst) = median_worst(&mut own);
    println!(
        "latency: less the main thread's waits for a CPU: median {:.1} ms, worst {:.1} ms",
        own_median.as_secs_f64() * 1e3,
        own_worst.as_secs_f64() * 1e3
    );
    println!(
        "latency: main-thread work while reading:\n{}",
        stalls::summary(&per_source)
    );
    // Blame each late probe on the stalls that ran while it waited.
    let mut late: Vec<&Probe> = probes.iter().filter(|p| p.delay > stalls::STALL).collect();
    late.sort_by_key(|p| std::cmp::Reverse(p.delay));
    for p in late.iter().take(10) {
        let (at, delay) = (&p.at, &p.delay);
        let due = *at - *delay;
        let blamed: Vec<String> = stall_list
            .iter()
            .filter(|s| s.start < *at && s.start + s.duration > due - PROBE_PERIOD)
            .map(|s| {
                format!(
                    "{} {:.1} ms (CPU {:.1} ms)",
                    s.source,
                    s.duration.as_secs_f64() * 1e3,
                    s.cpu.as_secs_f64() * 1e3
                )
            })
            .collect();
        println!(
            "latency: probe {:.1} ms late at {:.2} s, {:.1} ms of it waiting for a CPU: {}",
            delay.as_secs_f64() * 1e3,
            (*at - start).as_secs_f64(),
            p.cpu_wait.as_secs_f64() * 1e3,
            if blamed.is_empty() {
                "no recorded main-thread work".into()
            } else {
                blamed.join(", ")
            }
        );
    }
    // The most main-thread CPU time one callback, draw or frame phase used:
    // what the window itself puts on the main loop, whatever else runs on
    // the machine.
    let (heaviest, heaviest_cpu) = per_source
        .iter()
        .map(|(name, s)| (*name, s.worst_cpu))
        .max_by_key(|(_, cpu)| *cpu)
        .unwrap_or(("none", Duration::ZERO));
    let strict = std::env::var_os("TRACELOOM_GUI_LATENCY_STRICT").is_some();
    let worst_max = if strict {
        Duration::from_millis(50)
    } else {
        FREEZE_LIMIT
    };
    println!(
        "latency: issue 5 wants median ≤ 16 ms and worst ≤ 50 ms: {}; checking median ≤ 16 ms, \
         worst{} ≤ {worst_max:?}, main-thread CPU per callback ≤ {CPU_LIMIT:?} (heaviest: {heaviest} {:.1} ms)",
        if median <= Duration::from_millis(16) && worst <= Duration::from_millis(50) {
            "met"
        } else {
            "NOT met"
        },
        if strict {
            ""
        } else {
            " less the waits for a CPU"
        },
        heaviest_cpu.as_secs_f64() * 1e3
    );
    out.check(
        "latency_while_reading",
        complete
            && d.len() >= 5
            && median <= Duration::from_millis(16)
            && (if strict { worst } else { own_worst }) <= worst_max
            && heaviest_cpu <= CPU_LIMIT,
        || {
            format!(
                "complete {complete} after {:.1} s (busy {}, statistics {:?}, {}), {} probes, \
                 median {median:?}, worst {worst:?} ({own_worst:?} less the waits for a CPU), \
                 heaviest main-thread CPU {heaviest} {heaviest_cpu:?}",
                read.as_secs_f64(),
                tab.busy(),
                tab.statistics.caption(),
                tab.statistics.render().is_some(),
                d.len()
            )
        },
    );
    window.close();
    drop(tab);
    drop(host);
    pump(100);
    if given.is_none() {
        let _ = std::fs::remove_dir_all(&generated_dir);
    }
}

/// One run of the latency probe.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// When it ran.
    at: Instant,
    /// How much later than due.
    delay: Duration,
    /// How long the main thread waited for a CPU since the previous probe.
    cpu_wait: Duration,
}

/// Time the calling thread has spent waiting on a run queue (ready but
/// not running), from the scheduler's statistics; zero where unavailable.
fn run_queue_wait() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

/// Bytes of the trace at `dir`: its files' (a CTF directory), or its own
/// (a Pajé file).
fn dir_size(dir: &Path) -> u64 {
    if let Some(m) = std::fs::metadata(dir).ok().filter(|m| m.is_file()) {
        return m.len();
    }
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The 1, 5 and 15 minute load averages (the machine may be shared).
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

pub(crate) struct Outcome {
    passed: u32,
    failed: u32,
}

impl Outcome {
    pub(crate) fn check(&mut self, name: &str, ok: bool, detail: impl FnOnce() -> String) {
        if ok {
            println!("test {name} ... ok");
            self.passed += 1;
        } else {
            println!("test {name} ... FAILED: {}", detail());
            self.failed += 1;
        }
    }
}

/// Issue 19: a stream of the sample kernel trace cut in the middle. The
/// tab opens, its views fill with what was read, and the error naming the
/// file and byte offset goes to the window's info bar, once.
fn damaged_stream_reported(out: &mut Outcome) {
    let t = tempfile::tempdir().expect("temporary directory");
    let dir = t.path().join("trace");
    let src = traceloom_testdata::sample_kernel();
    std::fs::create_dir(&dir).expect("trace copy");
    for e in std::fs::read_dir(&src).expect("sample trace") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).expect("copy");
        }
    }
    let stream = dir.join("channel0_1");
    let len = std::fs::metadata(&stream).expect("stream").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&stream)
        .expect("open the stream");
    f.set_len(len / 2 + 100).expect("truncate");
    drop(f);
    let messages: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = messages.clone();
    let host = TabHost::open(vec![dir.clone()], move |m: &str| {
        sink.borrow_mut().push(m.to_string())
    });
    let Ok(host) = host else {
        out.check("damaged_stream_reported", false, || {
            "the tab did not open".into()
        });
        return;
    };
    let tab = host.tab();
    settle(&tab);
    let name = stream.display().to_string();
    let got = messages.borrow().clone();
    let reports = got
        .iter()
        .filter(|m| m.contains(&name) && m.contains("byte offset"))
        .count();
    out.check("damaged_stream_reported", reports == 1, || {
        format!("{reports} report(s) of {name} among {got:?}")
    });
}

/// Issue 20: opening a path that is no trace leaves the window with the
/// error in the info bar, naming the path once, and a hint where the
/// views would be.
fn failed_open_explained(out: &mut Outcome) {
    let t = tempfile::tempdir().expect("temporary directory");
    let bad = t.path().join("no-trace-here");
    std::fs::create_dir(&bad).expect("an empty directory");
    let controller = App::builder()
        .launch(AppInit {
            paths: vec![bad.clone()],
        })
        .detach();
    let window: gtk::Window = controller.widget().clone().upcast();
    window.present();
    first_tab(&controller);
    pump(100);
    let shown = info_bar(&window);
    let name = bad.display().to_string();
    let once = shown.as_ref().is_some_and(|(kind, text)| {
        *kind == gtk::MessageType::Error && text.matches(&name).count() == 1
    });
    let hint = descendants(window.upcast_ref())
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Label>().ok())
        .any(|l| l.is_visible() && l.is_mapped() && l.text().contains("Ctrl+O"));
    // The empty window offers the recent tracesets (the test's own
    // configuration remembers the sample trace opened first).
    let recent: Vec<String> = descendants(window.upcast_ref())
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Button>().ok())
        .filter(|b| b.is_mapped() && b.action_name().as_deref() == Some("win.recent"))
        .filter_map(|b| b.label().map(|l| l.to_string()))
        .collect();
    let offered = recent.iter().any(|l| l.contains("bug446190"));
    let _ =
        traceloom_gui::screenshot::save_png(&window, &screenshots_dir().join("empty-window.png"));
    out.check(
        "failed_open_explained",
        once && hint && offered && controller.model().tab_count() == 0,
        || format!("info bar {shown:?}, hint shown {hint}, recent offered {recent:?}"),
    );
    window.close();
    pump(100);
}

/// Issue 19: 64 bytes of 0xFF in the middle of a packet of the sample
/// kernel trace's `channel0_1` (found by the pass, not at open). The window
/// reports it and draws the rows of that stream's CPU hatched "no data"
/// from its last event on (screenshot `damaged-window.png`).
fn no_data_drawn_in_window(out: &mut Outcome) {
    let t = tempfile::tempdir().expect("temporary directory");
    let dir = traceloom_testdata::copy_trace(&traceloom_testdata::sample_kernel(), t.path());
    let stream = dir.join("channel0_1");
    let mut bytes = std::fs::read(&stream).expect("stream");
    let at = bytes.len() / 2 + 1000;
    bytes[at..at + 64].fill(0xFF);
    std::fs::write(&stream, &bytes).expect("damage the stream");
    let messages: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = messages.clone();
    let host = TabHost::open(vec![dir.clone()], move |m: &str| {
        sink.borrow_mut().push(m.to_string())
    })
    .expect("the damaged trace opens");
    let (tab, window) = show_settled(&host);
    let hatched = |r: Option<std::sync::Arc<traceloom_viewers::TimeGraphRender>>| {
        r.is_some_and(|r| {
            r.used_states()
                .iter()
                .any(|k| &**k == traceloom_viewers::style::NO_DATA)
        })
    };
    let res = hatched(tab.resources.render());
    // The control flow's renders hold the rows in view: scrolled a page
    // at a time, as a user looks for the hatched threads.
    let mut cf = hatched(tab.control_flow.render());
    while !cf {
        let Some(l) = tab.control_flow.layout() else {
            break;
        };
        let bottom = (l.row_count() as f64 * l.row_height - l.graph.h).max(0.0);
        let y = tab.control_flow.rows_scroll();
        if y >= bottom {
            break;
        }
        tab.control_flow.scroll_rows_to((y + l.graph.h).min(bottom));
        settle(&tab);
        cf = hatched(tab.control_flow.render());
    }
    let name = stream.display().to_string();
    let reported = messages.borrow().iter().any(|m| m.contains(&name));
    let shot =
        traceloom_gui::screenshot::save_png(&window, &screenshots_dir().join("damaged-window.png"));
    out.check(
        "no_data_drawn_in_window",
        cf && res && reported && shot.is_ok(),
        || format!("control flow {cf}, resources {res}, reported {reported}, screenshot {shot:?}"),
    );
    window.close();
    pump(100);
}

/// Issue 22: a CTF 2 trace (babeltrace2 2.1's conversion of `ust_pid`,
/// three traces) opens without a message, the histogram counts its 45,450
/// events and the event list shows the first ones at `dump`'s times.
fn ctf2_trace_opens(out: &mut Outcome) {
    let path = traceloom_testdata::ctf("ctf2/ust_pid");
    let messages: Rc<RefCell<Vec<String>>> = Rc::default();
    let sink = messages.clone();
    let host = match TabHost::open(vec![path.clone()], move |m: &str| {
        sink.borrow_mut().push(m.to_string())
    }) {
        Ok(host) => host,
        Err(e) => {
            out.check("ctf2_trace_opens", false, || format!("not opened: {e:?}"));
            return;
        }
    };
    let (tab, window) = show_settled(&host);
    let events = tab.histogram.render().map(|h| h.bins().iter().sum::<u64>());
    let dump: Vec<String> = dump_events(&path, None)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let rows: Vec<String> = (0..tab.events.len())
        .filter_map(|i| tab.events.time_of(i).map(gmt))
        .collect();
    let first_rows = !rows.is_empty() && dump.starts_with(&rows);
    let got = messages.borrow().clone();
    out.check(
        "ctf2_trace_opens",
        events == Some(45_450) && first_rows && got.is_empty(),
        || {
            format!(
                "histogram {events:?} events, list {:?}… against dump {:?}…, messages {got:?}",
                rows.first(),
                dump.first()
            )
        },
    );
    window.close();
    pump(100);
}

fn main() {
    // The configuration and the caches must not leak in from (or out to)
    // the user's.
    let cfg = std::env::temp_dir().join(format!("traceloom-gui-test-{}", std::process::id()));
    std::env::set_var("XDG_CONFIG_HOME", &cfg);
    std::env::set_var("XDG_CACHE_HOME", cfg.join("cache"));
    // Made now, so that Mesa's shader cache (`mesa_shader_cache` under
    // it) works as on a user's machine: Mesa creates only its own
    // directory, and without it compiles every shader again.
    let _ = std::fs::create_dir_all(cfg.join("cache"));
    // Xvfb has no GPU: GTK's GL renderer would run on Mesa's llvmpipe,
    // rasterizing every frame in software on the same cores as the trace
    // reading, which measures the emulation rather than the window. The
    // cairo renderer is GTK's own software path; GSK_RENDERER=gl measures
    // the other.
    if std::env::var_os("GSK_RENDERER").is_none() {
        std::env::set_var("GSK_RENDERER", "cairo");
    }
    traceloom_gui::prepare_process();
    if let Err(e) = gtk::init() {
        println!("no display ({e}): run the GUI tests under `xvfb-run -a` (scripts/test.sh does)");
        println!("0 passed, 1 failed");
        std::process::exit(1);
    }
    let mut out = Outcome {
        passed: 0,
        failed: 0,
    };
    // Issue 21's Pajé tests alone.
    if std::env::var_os("TRACELOOM_GUI_PAJE_ONLY").is_some() {
        paje::paje_window(&mut out);
        finish(&out, &cfg);
    }
    // Measuring latency alone (e.g. on a 1 GB trace) skips the rest.
    if std::env::var_os("TRACELOOM_GUI_LATENCY_ONLY").is_some() {
        latency_while_reading(&mut out);
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_ONLY=baseline`: GTK's own first frame, for a bare
    // window (what the renderer costs before any trace).
    if std::env::var("TRACELOOM_GUI_ONLY").as_deref() == Ok("baseline") {
        stalls::start();
        let w = gtk::Window::new();
        w.set_default_size(1400, 1000);
        let b = gtk::Box::new(gtk::Orientation::Vertical, 4);
        for i in 0..40 {
            b.append(&gtk::Button::with_label(&format!("button {i}")));
        }
        w.set_child(Some(&b));
        stalls::watch_frames(&w);
        w.present();
        pump(3000);
        let (per, _) = stalls::stop();
        println!("{}", stalls::summary(&per));
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_ONLY=damaged` runs the damaged-trace window test
    // alone.
    if std::env::var("TRACELOOM_GUI_ONLY").as_deref() == Ok("damaged") {
        no_data_drawn_in_window(&mut out);
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_ONLY=one-time`: the list's events of one time alone.
    if std::env::var("TRACELOOM_GUI_ONLY").as_deref() == Ok("one-time") {
        list::events_of_one_time(&mut out);
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_ONLY=rows` runs the control-flow rows test alone.
    if std::env::var("TRACELOOM_GUI_ONLY").as_deref() == Ok("rows") {
        rows::control_flow_rows(&mut out, &screenshots_dir());
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_REOPEN_TRACE=PATH` times a reopen of PATH from its
    // store, alone.
    if let Some(path) = std::env::var_os("TRACELOOM_GUI_REOPEN_TRACE") {
        background::reopen_large(&mut out, Path::new(&path));
        finish(&out, &cfg);
    }
    // `TRACELOOM_GUI_ONLY=background` runs the background-pass test alone.
    if std::env::var("TRACELOOM_GUI_ONLY").as_deref() == Ok("background") {
        background::background_pass(&mut out);
        finish(&out, &cfg);
    }
    let controller = App::builder()
        .launch(AppInit {
            paths: vec![trace_path()],
        })
        .detach();
    let window = controller.widget().clone();
    window.set_default_size(1400, 1000);
    window.present();
    let tab: Rc<Tab> = first_tab(&controller).expect("a tab opened");
    settle(&tab);
    out.check(
        "window_title_follows_the_tab",
        window.title().as_deref() == Some(&format!("traceloom — {}", tab.title())),
        || format!("title {:?}", window.title()),
    );

    // 1. All five viewers populated.
    let cf = tab.control_flow.render();
    let res = tab.resources.render();
    let hist = tab.histogram.render();
    let stats = tab.statistics.shown();
    let states = |r: &traceloom_viewers::TimeGraphRender| {
        (0..r.tree().len())
            .map(|i| r.states(i).len())
            .sum::<usize>()
    };
    out.check(
        "viewers_populated",
        cf.as_ref().is_some_and(|r| r.tree().len() > 1 && states(r) > 0)
            && res.as_ref().is_some_and(|r| !r.tree().is_empty() && states(r) > 0)
            && hist.as_ref().is_some_and(|h| h.bins().iter().sum::<u64>() > 0)
            && stats.as_ref().is_some_and(|s| s.rows().count() > 0)
            && tab.events.len() >= 5
            && tab.events.len() == tab.events.page(),
        || {
            format!(
                "control flow {:?} rows, resources {:?} rows, histogram {:?} events, statistics {:?} rows, list {} rows (page {})",
                cf.as_ref().map(|r| r.tree().len()),
                res.as_ref().map(|r| r.tree().len()),
                hist.as_ref().map(|h| h.bins().iter().sum::<u64>()),
                stats.as_ref().map(|s| s.rows().count()),
                tab.events.len(),
                tab.events.page()
            )
        },
    );
    // The time axes line up: the two graphs and the histogram's plot
    // start and end at the same x of the tab.
    let aligned = time_axes(&tab);
    out.check(
        "time_axes_line_up",
        aligned.iter().all(Option::is_some)
            && aligned.iter().flatten().all(|&(l, r)| {
                let (l0, r0) = aligned[0].unwrap_or_default();
                (l - l0).abs() <= 1.0 && (r - r0).abs() <= 1.0
            }),
        || format!("left and right x of control flow, resources, histogram: {aligned:?}"),
    );
    let shots = screenshots_dir();
    let r = traceloom_gui::screenshot::save_png(&window, &shots.join("main-window.png"));
    out.check("screenshot_zoomed_out", r.is_ok(), || format!("{r:?}"));

    // 2. Clicking an event in the list moves every viewer's marker.
    let k = tab.events.len() / 3;
    let t = tab.events.time_of(k).expect("row k");
    tab.events.select_row(k);
    pump(200);
    out.check(
        "list_click_moves_current_time",
        tab.time_focus().current == Some(t)
            && tab.control_flow.options().current_time == Some(t)
            && tab.resources.options().current_time == Some(t),
        || {
            format!(
                "want {t}: tab {:?}, control flow {:?}, resources {:?}",
                tab.time_focus().current,
                tab.control_flow.options().current_time,
                tab.resources.options().current_time
            )
        },
    );

    // 3. Selecting a range (what a drag in a time graph ends with) gives
    // that range's statistics.
    let span = tab.span();
    let sel = TimeRange::new(
        span.start + (span.span() / 4) as i64,
        span.start + (span.span() / 2) as i64,
    );
    // The rows shown: label and values.
    let shown_rows = |tab: &Tab| {
        tab.statistics.shown().map(|a| {
            a.rows()
                .map(|r| (r.label.to_string(), r.values.to_vec()))
                .collect::<Vec<_>>()
        })
    };
    let whole = shown_rows(&tab);
    tab.navigate(Nav::Select(sel));
    settle(&tab);
    let after = shown_rows(&tab);
    out.check(
        "selection_updates_statistics",
        tab.statistics.caption().contains("selection") && after.is_some() && after != whole,
        || format!("caption {:?}", tab.statistics.caption()),
    );
    // The range's start is the time selected (Trace Compass): the list
    // selects the range's first event.
    let first = tab.events.selected().and_then(|i| tab.events.time_of(i));
    let before_it = tab
        .events
        .selected()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| tab.events.time_of(i));
    out.check(
        "a_selection_selects_its_first_event",
        tab.time_focus().current == Some(sel.start)
            && first.is_some_and(|t| sel.contains(t))
            && before_it.is_none_or(|t| t < sel.start),
        || {
            format!(
                "selection {sel:?}, current {:?}, selected row at {first:?}, the row before at {before_it:?}",
                tab.time_focus().current
            )
        },
    );
    // Escape on the views clears the selection: the whole trace's
    // statistics again. (Selected again for what follows.)
    tab.key(gtk::gdk::Key::Escape);
    settle(&tab);
    let cleared = (tab.time_focus().selection, tab.statistics.caption());
    let again = shown_rows(&tab);
    tab.navigate(Nav::Select(sel));
    settle(&tab);
    out.check(
        "escape_clears_the_selection",
        cleared == (None, "Statistics of the whole trace".to_string()) && again == whole,
        || {
            format!(
                "after Escape: selection and caption {cleared:?}, rows as the whole trace's {}",
                again == whole
            )
        },
    );

    // 3b. The list's thread columns, details pane, arrow keys, column
    // resizing; Ctrl+G and F1.
    list::event_list_columns_and_details(&mut out, window.upcast_ref(), &tab);
    list::statistics_tree_and_histogram_selection(&mut out, &tab, &screenshots_dir());

    // 4. A bad filter shows its column inline; a good one filters the list.
    tab.set_filter("event.name == && cpu");
    let err = tab.filter_error();
    tab.set_filter("event.name == \"sched_switch\"");
    settle(&tab);
    let names_ok = (0..tab.events.len()).all(|i| {
        tab.events
            .row_text(i)
            .is_some_and(|s| s.contains("sched_switch"))
    });
    out.check(
        "filter_bar",
        err.as_deref().is_some_and(|e| e.starts_with("column 15"))
            && !tab.events.is_empty()
            && names_ok,
        || {
            format!(
                "error {err:?}, {} rows, all sched_switch: {names_ok}",
                tab.events.len()
            )
        },
    );
    tab.set_filter("");
    settle(&tab);

    // 5. The time-scrolled list against the dump.
    event_list_scrolling(&mut out, &tab, &trace_path());
    settle(&tab);

    // 6. Zoom in around the current time: the time graphs are re-rendered
    // for the narrower window.
    let before = tab.time_focus().window.expect("a window");
    tab.navigate(Nav::Zoom {
        factor: 0.02,
        anchor: t,
    });
    settle(&tab);
    let w = tab.time_focus().window.expect("a window");
    let cf = tab.control_flow.render();
    out.check(
        "zoom_renders_window",
        w.span() < before.span() / 10
            && w.contains(t)
            && cf.as_ref().is_some_and(|r| r.range() == w),
        || {
            format!(
                "window {w:?} (was {before:?}), render {:?}",
                cf.map(|r| r.range())
            )
        },
    );
    tab.navigate(Nav::Select(TimeRange::new(
        w.start + (w.span() / 3) as i64,
        w.start + (w.span() / 2) as i64,
    )));
    tab.add_bookmark("here");
    settle(&tab);
    let r = traceloom_gui::screenshot::save_png(&window, &shots.join("main-window-zoomed.png"));
    out.check("screenshot_zoomed_in", r.is_ok(), || format!("{r:?}"));

    // Ctrl+W's action closes the tab shown; the title follows.
    drop(tab);
    let _ = WidgetExt::activate_action(&window, "win.close-tab", None);
    let closed = pump_until(|| controller.model().tab_count() == 0);
    out.check(
        "close_tab_action",
        closed && window.title().as_deref() == Some("traceloom"),
        || format!("closed {closed}, title {:?}", window.title()),
    );

    window.close();
    pump(100);

    // 7. The per-trace configuration comes back; a corrupted one is
    // ignored with a warning.
    config_restored(&mut out, &trace_path());
    corrupted_config_ignored(&mut out, &trace_path());
    failed_open_explained(&mut out);

    // 8. A damaged stream is reported (file and byte offset) for the
    // info bar, the views showing what was read.
    damaged_stream_reported(&mut out);
    no_data_drawn_in_window(&mut out);
    ctf2_trace_opens(&mut out);
    list::events_of_one_time(&mut out);

    // 9. The control flow with many threads: scrollbar, collapse, rows
    // filter, hide idle, CPU-time order, follow thread.
    rows::control_flow_rows(&mut out, &shots);

    // 9b. Pajé traces in the window (issue 21).
    paje::paje_window(&mut out);

    // 10. Latency of the main loop while a large trace is read.
    latency_while_reading(&mut out);

    // 11. The whole-trace pass: statistics and histogram grow during it,
    // the list's HIGH requests preempt it, Cancel pauses and Resume
    // completes it with the right totals.
    background::background_pass(&mut out);

    finish(&out, &cfg);
}

/// Prints the tally, removes the test's configuration and caches (a
/// large trace's analysis store is hundreds of MB) and exits, failing
/// when a check failed.
fn finish(out: &Outcome, cfg: &Path) -> ! {
    let _ = std::fs::remove_dir_all(cfg);
    println!("{} passed, {} failed", out.passed, out.failed);
    std::process::exit(i32::from(out.failed > 0));
}
