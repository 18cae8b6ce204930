//! The event list as issue 20 asks for it, on the window's kernel trace:
//! TID, PID and process columns (from the kernel pass: compared with what
//! the trace's own `sched_switch` says), the details pane with the
//! selected event's fields as a tree, the arrow keys moving the selection
//! (and scrolling at the last row), a column resized by its header, and
//! the application's keys: Ctrl+G puts the keyboard in the current-time
//! entry, F1 opens the shortcuts window.

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_base::{Time, TimeRange};
use traceloom_gui::tab::{Tab, TabHost};
use traceloom_gui::views::eventlist::col;
use traceloom_gui::views::Nav;

use super::{pump, Outcome};

pub(crate) fn event_list_columns_and_details(out: &mut Outcome, window: &gtk::Window, tab: &Tab) {
    // A sched_switch names the thread it switches out: the list's TID and
    // process columns on that row must be it.
    // (In the middle of the trace: before a CPU's first switch, the pass
    // does not know what it ran, and those cells stay blank.)
    tab.set_filter("event.name == \"sched_switch\"");
    super::settle(tab);
    let span = tab.span();
    tab.events.drag_to(span.start + (span.span() / 2) as i64);
    super::settle(tab);
    let rows: Vec<(String, String, String)> = (0..tab.events.len())
        .filter_map(|i| {
            Some((
                tab.events.column(i, col::TID)?,
                tab.events.column(i, col::PROCESS)?,
                tab.events.column(i, col::FIELDS)?,
            ))
        })
        .collect();
    let agree = rows
        .iter()
        .filter(|(tid, name, fields)| {
            fields.contains(&format!("prev_tid = {tid},"))
                && fields.contains(&format!("prev_comm = \"{name}\""))
        })
        .count();
    out.check(
        "list_thread_columns",
        rows.len() >= 5 && agree == rows.len(),
        || {
            format!(
                "{agree} of {} sched_switch rows name their prev thread: {:?}",
                rows.len(),
                rows.first()
            )
        },
    );

    // The CPU leads its column, where the narrow column shows it; the
    // trace's name follows.
    let cpus: Vec<String> = (0..tab.events.len())
        .filter_map(|i| tab.events.column(i, col::CPU))
        .collect();
    out.check(
        "list_cpu_column_shows_the_cpu_first",
        !cpus.is_empty()
            && cpus.iter().all(|c| {
                c.strip_prefix("CPU ")
                    .and_then(|c| c.split(" · ").next())
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            }),
        || format!("CPU column {:?}", cpus.first()),
    );

    // Details: the selected event's fields, one per line.
    tab.events.select_row(1);
    pump(100);
    let buffer = tab.events.details.buffer();
    let text = buffer
        .text(&buffer.start_iter(), &buffer.end_iter(), false)
        .to_string();
    out.check(
        "details_pane_shows_fields_tree",
        text.starts_with("sched_switch at ")
            && text
                .lines()
                .any(|l| l.trim_start().starts_with("prev_comm = "))
            && text
                .lines()
                .any(|l| l.starts_with("    ") || l.starts_with("  ")),
        || format!("details {text:?}"),
    );

    // Arrow keys move the selection, and past the last row scroll a line.
    let n = tab.events.len();
    tab.events.key(gtk::gdk::Key::Down);
    pump(50);
    let moved =
        tab.events.selected() == Some(2) && tab.time_focus().current == tab.events.time_of(2);
    tab.events.select_row(n - 1);
    let last = tab.events.time_of(n - 1);
    tab.events.key(gtk::gdk::Key::Down);
    super::settle(tab);
    let scrolled = tab.events.selected() == Some(tab.events.len() - 1)
        && tab.events.time_of(tab.events.len() - 2) == last
        && tab.time_focus().current == tab.events.time_of(tab.events.len() - 1);
    out.check("arrow_keys_move_the_selection", moved && scrolled, || {
        format!(
            "after Down: selected {:?}; past the last row: selected {:?} of {}, row before it {:?}, was last {last:?}",
            tab.events.selected(),
            tab.events.selected(),
            tab.events.len(),
            tab.events.time_of(tab.events.len().saturating_sub(2))
        )
    });
    tab.set_filter("");
    super::settle(tab);

    // Home and End select the trace's first and last events, as a
    // table's keys do, and the list shows the last one whole: every row
    // of the page fits in the list's height.
    // The time graphs show the first tenth of the trace: the event End
    // selects is brought into view, the window keeping its span.
    let span = tab.span();
    let tenth = TimeRange::new(span.start, span.start + (span.span() / 10) as i64);
    tab.navigate(Nav::Window(tenth));
    super::settle(tab);
    tab.events.key(gtk::gdk::Key::End);
    super::settle(tab);
    let n = tab.events.len();
    let at_end = (tab.events.selected(), tab.time_focus().current);
    let shown = tab.time_focus().window;
    let whole = whole_rows(tab);
    tab.events.key(gtk::gdk::Key::Home);
    super::settle(tab);
    let at_home = (tab.events.selected(), tab.time_focus().current);
    tab.zoom_fit();
    super::settle(tab);
    out.check(
        "home_and_end_select_the_first_and_last_events",
        n > 0
            && at_end == (Some(n - 1), Some(span.end))
            && at_home == (Some(0), Some(span.start))
            && shown.is_some_and(|w| w.contains(span.end) && w.span() == tenth.span())
            && whole >= tab.events.page(),
        || {
            format!(
                "End: selected and current {at_end:?} of {n} rows (last event {}), window {shown:?} (was {tenth:?}), Home: {at_home:?} (first {}), {whole} whole rows of a page of {}",
                span.end,
                span.start,
                tab.events.page()
            )
        },
    );

    // A column resized through the header.
    let before = tab.events.column_width(col::PROCESS);
    tab.events.set_column_width(col::PROCESS, before + 80);
    pump(100);
    out.check(
        "list_column_resized",
        tab.events.column_width(col::PROCESS) == before + 80,
        || format!("width {before} → {}", tab.events.column_width(col::PROCESS)),
    );

    // Ctrl+G and F1, through the window's actions.
    let _ = WidgetExt::activate_action(window, "win.go-to-time", None);
    pump(100);
    let focused = gtk::prelude::GtkWindowExt::focus(window)
        .is_some_and(|w| w.ancestor(gtk::Entry::static_type()).is_some() || w.is::<gtk::Entry>());
    let _ = WidgetExt::activate_action(window, "win.shortcuts", None);
    pump(200);
    let shortcuts = gtk::Window::list_toplevels()
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::ShortcutsWindow>().ok())
        .collect::<Vec<_>>();
    out.check(
        "go_to_time_and_shortcuts_keys",
        focused && !shortcuts.is_empty(),
        || {
            format!(
                "entry focused {focused}, shortcuts windows {}",
                shortcuts.len()
            )
        },
    );
    for w in shortcuts {
        w.close();
    }
    pump(100);
}

/// How many of the list's rows are shown whole (their bounds within the
/// list's height).
fn whole_rows(tab: &Tab) -> usize {
    let list = &tab.events.list;
    let h = list.height() as f32;
    let mut whole = 0;
    let mut child = list.first_child();
    while let Some(c) = child {
        if c.compute_bounds(list)
            .is_some_and(|b| b.y() >= 0.0 && b.y() + b.height() <= h)
        {
            whole += 1;
        }
        child = c.next_sibling();
    }
    whole
}

/// Maximizing a viewer from its title bar, the View menu, and what the
/// configuration saves of the layout.
pub(crate) fn layout_maximize_and_view_menu(out: &mut Outcome, tab: &Tab) {
    let layout = &tab.layout;
    let rows_before = tab.events.page();
    let button = layout
        .frame(2)
        .label_widget()
        .and_then(|bar| bar.last_child())
        .and_then(|b| b.downcast::<gtk::Button>().ok())
        .expect("the events' maximize button");
    button.emit_clicked();
    super::pump(600);
    let others_hidden = (0..5)
        .filter(|&i| i != 2)
        .all(|i| !layout.frame(i).is_visible());
    let rows_max = tab.events.page();
    button.emit_clicked();
    super::pump(600);
    let restored = (0..5).all(|i| layout.frame(i).is_visible()) && layout.maximized().is_none();
    out.check(
        "maximize_a_viewer",
        others_hidden && rows_max > rows_before * 2 && restored,
        || {
            format!(
                "others hidden {others_hidden}, list rows {rows_before} → {rows_max}, restored {restored}: maximized {:?}, frames visible {:?}",
                layout.maximized(),
                (0..5).map(|i| layout.frame(i).is_visible()).collect::<Vec<_>>()
            )
        },
    );

    // The View menu hides the histogram; the layout saved says so.
    layout.show(4, false);
    super::pump(200);
    let hidden = !layout.frame(4).is_visible();
    let saved = layout.saved();
    layout.show(4, true);
    super::pump(200);
    out.check(
        "view_menu_hides_a_viewer",
        hidden
            && !saved.shown.iter().any(|s| s == "histogram")
            && saved.shown.len() == 4
            && saved.positions.len() == 4
            // No handle was dragged: each pane is left for the layout to
            // place in the window it reopens in.
            && saved.positions.iter().all(|&p| p == 0)
            && layout.frame(4).is_visible(),
        || format!("hidden {hidden}, saved {saved:?}"),
    );
}

/// The statistics collapse and sort by clicks; the histogram shows the
/// selection (pixels of its snapshot inside the band are bluer than
/// outside).
pub(crate) fn statistics_tree_and_histogram_selection(
    out: &mut Outcome,
    tab: &Tab,
    shots: &std::path::Path,
) {
    use traceloom_base::TimeRange;
    use traceloom_gui::views::Nav;

    use traceloom_viewers::StatisticsTable;

    let stats = &tab.statistics;
    let before = stats.shown().map_or(0, |r| r.row_count());
    let first = stats
        .shown()
        .and_then(|r| r.rows().next().map(|r| r.marked_label()));
    // The first row is the summary by event name; collapse it.
    stats.toggle_row(traceloom_viewers::model::stats::EVENT_TYPES);
    pump(100);
    let after = stats.shown().map_or(0, |r| r.row_count());
    let collapsed_label = stats
        .shown()
        .and_then(|r| r.rows().next().map(|r| r.marked_label()));
    stats.toggle_row(traceloom_viewers::model::stats::EVENT_TYPES);
    // A click on the "events" column title sorts by it, largest first.
    let width = stats.widget.width() as f64;
    stats.click(width - 120.0, 5.0);
    pump(100);
    let counts: Vec<u64> = stats
        .shown()
        .map(|r| {
            r.rows()
                .filter(|row| row.depth == 1)
                .take(20)
                .filter_map(|row| match row.values.first() {
                    Some(traceloom_viewers::StatValue::Count(n)) => Some(*n),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    out.check(
        "statistics_collapse_and_sort",
        first.as_deref().is_some_and(|l| l.starts_with("▾ event types"))
            && collapsed_label.as_deref().is_some_and(|l| l.starts_with("▸ event types"))
            && after < before
            && counts.len() > 2,
        || format!("rows {before} → {after} collapsed; first {first:?} → {collapsed_label:?}; counts {counts:?}"),
    );

    // The histogram's selection band.
    let span = tab.span();
    let sel = TimeRange::new(
        span.start + (span.span() / 5) as i64,
        span.start + (span.span() * 2 / 5) as i64,
    );
    tab.navigate(Nav::Select(sel));
    // Until the selection's statistics come, the pane says they are read
    // and dims the table it still shows (another range's).
    let waiting = (tab.statistics.is_pending(), tab.statistics.caption());
    super::settle(tab);
    let shown = (tab.statistics.is_pending(), tab.statistics.caption());
    out.check(
        "statistics_say_a_selection_is_read",
        waiting.0
            && waiting
                .1
                .starts_with("Reading the statistics of the selection")
            && !shown.0
            && shown.1.starts_with("Statistics of the selection")
            && !shown.1.contains("Reading"),
        || format!("just selected {waiting:?}, then {shown:?}"),
    );
    let path = shots.join("histogram-selection.png");
    let saved = traceloom_gui::screenshot::save_png(&tab.histogram.area, &path);
    let layout = tab.histogram.layout();
    let blue = |x: f64, y: f64| -> Option<i32> {
        let mut f = std::fs::File::open(&path).ok()?;
        let img = gtk::cairo::ImageSurface::create_from_png(&mut f).ok()?;
        let stride = img.stride() as usize;
        let data = img.take_data().ok()?;
        let (x, y) = (x as usize, y as usize);
        let px = &data[y * stride + x * 4..y * stride + x * 4 + 4];
        // ARGB32 little-endian: B, G, R, A.
        Some(px[0] as i32 - px[2] as i32)
    };
    let (inside, outside) = match &layout {
        Some(l) => {
            let y = l.plot.y + 3.0;
            let xin = (l.xmap.x(sel.start) + l.xmap.x(sel.end)) / 2.0;
            let xout = l.xmap.x(sel.end) + (l.plot.right() - l.xmap.x(sel.end)) / 2.0;
            (blue(xin, y), blue(xout, y))
        }
        None => (None, None),
    };
    out.check(
        "histogram_shows_selection",
        saved.is_ok() && inside.zip(outside).is_some_and(|(i, o)| i > o),
        || format!("saved {saved:?}; blue minus red inside {inside:?}, outside {outside:?}"),
    );
}

/// Events of the same ns (on two CPUs of a real kernel trace,
/// `bug446190`) are rows of their own: the Down key steps from the first
/// to the second, a search selects the event that matched rather than
/// the first of its time, and a search from the selected row finds
/// another event of its time.
pub(crate) fn events_of_one_time(out: &mut Outcome) {
    let path = traceloom_testdata::ctf("tracecompass/bug446190");
    let host = match TabHost::open(vec![path.clone()], |_: &str| {}) {
        Ok(host) => host,
        Err(e) => {
            out.check("events_of_one_time", false, || format!("not opened: {e:?}"));
            return;
        }
    };
    let (tab, window) = super::show_settled(&host);
    let dump = super::dump_events(&path, None);
    // The first two events of one time with different names, after an
    // event of an earlier time.
    let Some(k) = (1..dump.len().saturating_sub(1)).find(|&k| {
        dump[k].0 == dump[k + 1].0 && dump[k - 1].0 != dump[k].0 && dump[k].1 != dump[k + 1].1
    }) else {
        out.check("events_of_one_time", false, || {
            "no two events of one time".into()
        });
        return;
    };
    let day = tab.span().start - tab.span().start.rem_euclid(86_400_000_000_000);
    let ns = |gmt: &str| -> Time {
        let (hms, frac) = gmt.split_once('.').expect("h:m:s.ns");
        let s = hms
            .split(':')
            .fold(0i64, |a, p| a * 60 + p.parse::<i64>().expect("a number"));
        day + s * 1_000_000_000 + frac.parse::<i64>().expect("ns")
    };
    let (t, before) = (ns(&dump[k].0), ns(&dump[k - 1].0));
    // What the list has selected: (time of day, event name).
    let selected = |tab: &Tab| {
        let i = tab.events.selected()?;
        Some((
            super::gmt(tab.events.time_of(i)?),
            tab.events.column(i, col::EVENT)?,
        ))
    };
    let wait = |tab: &Tab| {
        pump(50);
        super::pump_until(|| !tab.busy() && !tab.list_reading());
        pump(50);
    };

    // A time between two events, far from the rows shown (a click on a
    // time graph): the list scrolls there and selects the event after it.
    tab.navigate(Nav::Current(tab.span().start));
    wait(&tab);
    tab.navigate(Nav::Current(before + 1));
    wait(&tab);
    let after = selected(&tab);
    out.check(
        "list_selects_the_event_after_a_time_between_events",
        after.as_ref() == Some(&dump[k]),
        || format!("want {:?}, selected {after:?}", dump[k]),
    );

    tab.navigate(Nav::Current(t));
    wait(&tab);
    let first = selected(&tab);
    tab.events.key(gtk::gdk::Key::Down);
    wait(&tab);
    let second = selected(&tab);
    out.check(
        "list_down_key_steps_through_one_time",
        first.as_ref() == Some(&dump[k]) && second.as_ref() == Some(&dump[k + 1]),
        || format!("at {:?}: selected {first:?}, then {second:?}", dump[k]),
    );

    // From the event before: the match is the second event of the time.
    tab.navigate(Nav::Current(before));
    wait(&tab);
    tab.set_search(&format!("event.name == \"{}\"", dump[k + 1].1));
    tab.search(true);
    wait(&tab);
    let found = selected(&tab);
    out.check(
        "search_selects_the_matching_event_of_its_time",
        found.as_ref() == Some(&dump[k + 1]) && tab.time_focus().current == Some(t),
        || format!("want {:?}, selected {found:?}", dump[k + 1]),
    );

    // From the first event of the time, selected: forward to the second,
    // then back to the first.
    tab.navigate(Nav::Current(before));
    wait(&tab);
    tab.navigate(Nav::Current(t));
    wait(&tab);
    let from = selected(&tab);
    tab.search(true);
    wait(&tab);
    let next = selected(&tab);
    tab.set_search(&format!("event.name == \"{}\"", dump[k].1));
    tab.search(false);
    wait(&tab);
    let back = selected(&tab);
    out.check(
        "search_from_the_selected_row_finds_its_time",
        from.as_ref() == Some(&dump[k])
            && next.as_ref() == Some(&dump[k + 1])
            && back.as_ref() == Some(&dump[k]),
        || {
            format!(
                "from {from:?}: next {next:?}, then back {back:?}; want {:?}",
                &dump[k..k + 2]
            )
        },
    );
    window.close();
    pump(100);
}
