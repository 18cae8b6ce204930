//! Issue 21's acceptance in the window: every shared Pajé example opens
//! (the format told by the file) and its containers view shows the
//! containers, states, links and variables the trace holds (counted by the
//! reader, `traceloom-paje`'s `Trace`); on `g5k.trace` and
//! `simu-mardi.trace`, clicking a state (through the view's hit test and
//! click rule) moves the current time in every view, selecting a range
//! updates the per-container statistics, the event list far-scrolls by
//! time; screenshots `paje-<trace>.png` are saved; bad Pajé input gives an
//! error naming file and line, never a panic.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{Component, ComponentController};
use traceloom_base::TimeRange;
use traceloom_gui::app::{App, AppInit};
use traceloom_gui::tab::Tab;
use traceloom_gui::views::timegraph::click_time;
use traceloom_gui::views::Nav;
use traceloom_paje::{Trace, TypeNature};
use traceloom_viewers::draw::HitItem;
use traceloom_viewers::StatValue;

use super::{first_tab, info_bar, pump, pump_until, screenshots_dir, settle, Outcome};

/// What the reader finds in a trace: containers (the root excepted), and
/// whether it has states, links (with both ends) and variables.
fn expected(path: &Path) -> (usize, bool, bool, bool) {
    let t = Trace::open(path).expect("the reader opens the example");
    let (mut states, mut links, mut vars) = (false, false, false);
    for ci in 0..t.model.containers().len() {
        let c = traceloom_paje::ContainerId(ci as u32);
        for (ti, ty) in t.model.types().iter().enumerate() {
            let id = traceloom_paje::TypeId(ti as u32);
            match ty.nature {
                TypeNature::State => states |= !t.entities.states(c, id).is_empty(),
                TypeNature::Variable => vars |= !t.entities.variables(c, id).is_empty(),
                TypeNature::Link { .. } => {
                    links |= t.entities.links(c, id).iter().any(|l| {
                        l.start_container.is_some()
                            && l.end_container.is_some()
                            && l.start >= 0.0
                            && l.end >= 0.0
                    })
                }
                _ => {}
            }
        }
    }
    (t.model.containers().len() - 1, states, links, vars)
}

/// The shared Pajé examples (one-file traces, and the multi-file one).
fn examples() -> Vec<PathBuf> {
    let root = traceloom_testdata::paje_root();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("traces/paje")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "trace"))
        .collect();
    v.push(root.join("multiple_files/root.trace"));
    v.sort();
    v
}

fn open(path: &Path) -> (relm4::Controller<App>, gtk::Window, Option<Rc<Tab>>) {
    let controller = App::builder()
        .launch(AppInit {
            paths: vec![path.to_path_buf()],
        })
        .detach();
    let window: gtk::Window = controller.widget().clone().upcast();
    window.set_default_size(1400, 1000);
    window.present();
    let tab = first_tab(&controller);
    (controller, window, tab)
}

/// What the containers view shows: rows, states, arrows, counters.
fn shown(tab: &Tab) -> (usize, usize, usize, usize) {
    tab.control_flow.render().map_or((0, 0, 0, 0), |r| {
        let states = (0..r.tree().len()).map(|i| r.states(i).len()).sum();
        let arrows = r.arrow_series().iter().map(|a| a.arrows.len()).sum();
        (r.tree().len(), states, arrows, r.counters().len())
    })
}

/// Each example shows what its trace holds.
fn examples_shown(out: &mut Outcome) {
    let mut failed = Vec::new();
    let all = examples();
    for path in &all {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (want_c, want_s, want_l, want_v) = expected(path);
        let (_c, window, tab) = open(path);
        let Some(tab) = tab else {
            failed.push(format!("{name}: no tab ({:?})", info_bar(&window)));
            window.close();
            continue;
        };
        settle(&tab);
        let (rows, states, arrows, counters) = shown(&tab);
        let ok = tab.is_paje()
            && rows >= want_c
            && (states > 0) == want_s
            && (arrows > 0) == want_l
            && (counters > 0) == want_v
            && !tab.resources.area.is_mapped()
            && tab.histogram.render().is_some()
            // A trace of definitions only lists nothing.
            && tab.events.is_empty() == (want_c == 0);
        if !ok {
            failed.push(format!(
                "{name}: shown rows {rows} states {states} arrows {arrows} counters {counters}, \
                 list {}; want containers {want_c} states {want_s} links {want_l} variables {want_v}",
                tab.events.len()
            ));
        }
        window.close();
        pump(50);
    }
    out.check(
        "paje_examples_show_containers_states_links_variables",
        failed.is_empty() && all.len() >= 10,
        || format!("{} examples: {failed:?}", all.len()),
    );
}

/// The first state drawn wider than 6 px and its click point.
fn a_state(tab: &Tab) -> Option<(f64, f64, traceloom_base::Time)> {
    let layout = tab.control_flow.layout()?;
    let render = tab.control_flow.render()?;
    for i in 0..render.tree().len().min(layout.tree_rows) {
        let y = layout.row_center(i);
        if y <= layout.graph.y || y >= layout.graph.y + layout.graph.h {
            continue;
        }
        for s in render.states(i) {
            let Some((x0, x1)) = layout.interval_x(s.start, s.end) else {
                continue;
            };
            if x1 - x0 > 6.0 {
                let x = (x0 + x1) / 2.0;
                let hit = layout.hit(&render, x, y);
                if matches!(hit.item, Some(HitItem::Interval { .. })) {
                    let t = click_time(&layout, &render, x, y)?;
                    return Some((x, y, t));
                }
            }
        }
    }
    None
}

/// A point of the graph's first row and its click time.
fn a_graph_point(tab: &Tab) -> Option<(f64, f64, traceloom_base::Time)> {
    let layout = tab.control_flow.layout()?;
    let render = tab.control_flow.render()?;
    let (x, y) = (layout.graph.x + layout.graph.w / 3.0, layout.row_center(0));
    Some((x, y, click_time(&layout, &render, x, y)?))
}

/// Statistics rows of one container's state types: (label, time).
fn stats_rows(tab: &Tab) -> Vec<(String, i64)> {
    tab.statistics.shown().map_or_else(Vec::new, |r| {
        r.rows()
            .filter_map(|row| match row.values.first() {
                Some(StatValue::Duration(d)) => Some((row.label.to_string(), *d)),
                _ => None,
            })
            .collect()
    })
}

/// Clicks, selection, list and screenshot on one example.
fn interactions(out: &mut Outcome, name: &str) {
    let path = traceloom_testdata::paje(name);
    let (_c, window, tab) = open(&path);
    let Some(tab) = tab else {
        out.check(&format!("paje_{name}_opens"), false, || {
            format!("{:?}", info_bar(&window))
        });
        return;
    };
    settle(&tab);
    let shots = screenshots_dir();
    let stem = name.trim_end_matches(".trace");
    let r = traceloom_gui::screenshot::save_png(&window, &shots.join(format!("paje-{stem}.png")));
    out.check(&format!("paje_{stem}_screenshot"), r.is_ok(), || {
        format!("{r:?}")
    });

    rows_drawn_when_scrolled(out, &tab, &window, stem);

    // A click on a state: the current time moves in every view (g5k.trace
    // has no state: a click on the graph).
    let (_, has_states, _, _) = expected(&path);
    let clicked = if has_states {
        a_state(&tab)
    } else {
        a_graph_point(&tab)
    };
    if let Some((_, _, t)) = clicked {
        tab.navigate(Nav::Current(t));
        pump(200);
    }
    let t = clicked.map(|c| c.2);
    out.check(
        &format!("paje_{stem}_click_moves_current_time"),
        t.is_some()
            && tab.time_focus().current == t
            && tab.control_flow.options().current_time == t
            && tab.time_bar()[2] == traceloom_gui::time_text::format_time(t.unwrap()),
        || {
            format!(
                "clicked {clicked:?}: tab {:?}, view {:?}, bar {:?}",
                tab.time_focus().current,
                tab.control_flow.options().current_time,
                tab.time_bar()
            )
        },
    );

    // The legend's menu hides a type's entities and shows them again.
    let arrows = |tab: &Tab| {
        tab.control_flow.render().map_or(0, |r| {
            r.arrow_series()
                .iter()
                .map(|a| a.arrows.len())
                .sum::<usize>()
        })
    };
    let links: Vec<usize> = tab
        .type_toggles()
        .iter()
        .enumerate()
        .filter(|(_, t)| t.0 == "Link")
        .map(|(i, _)| i)
        .collect();
    let shown = arrows(&tab);
    for &i in &links {
        tab.set_type_shown(i, false);
    }
    settle(&tab);
    let hidden = arrows(&tab);
    for &i in &links {
        tab.set_type_shown(i, true);
    }
    settle(&tab);
    out.check(
        &format!("paje_{stem}_legend_hides_and_shows_types"),
        !links.is_empty() && shown > 0 && hidden == 0 && arrows(&tab) == shown,
        || {
            format!(
                "{} link types: arrows {shown} → {hidden} → {}",
                links.len(),
                arrows(&tab)
            )
        },
    );

    // A selection: the per-container statistics of that range.
    let span = tab.span();
    let before = stats_rows(&tab);
    let sel = TimeRange::new(
        span.start + (span.span() / 3) as i64,
        span.start + (span.span() / 2) as i64,
    );
    tab.navigate(Nav::Select(sel));
    settle(&tab);
    let after = stats_rows(&tab);
    let has_states = tab
        .control_flow
        .render()
        .is_some_and(|r| (0..r.tree().len()).any(|i| !r.states(i).is_empty()));
    out.check(
        &format!("paje_{stem}_selection_updates_statistics"),
        tab.statistics.caption().starts_with("Selection")
            && (!has_states || (!after.is_empty() && after != before)),
        || {
            format!(
                "caption {:?}, {} rows before, {} after",
                tab.statistics.caption(),
                before.len(),
                after.len()
            )
        },
    );

    // The list far-scrolls by time: dragging its scrollbar to two thirds
    // of the trace shows the events from there.
    let t = span.start + (span.span() * 2 / 3) as i64;
    tab.events.drag_to(t);
    let done = pump_until(|| !tab.list_reading() && tab.events.time_of(0).is_some_and(|x| x >= t));
    let first = tab.events.time_of(0);
    out.check(
        &format!("paje_{stem}_list_far_scrolls_by_time"),
        done && first.is_some_and(|x| x >= t && x <= span.end)
            && tab.events.len() == tab.events.page()
            && tab.events.column(0, 1).is_some_and(|c| !c.is_empty()),
        || {
            format!(
                "want >= {t}, top {first:?}, {} rows (page {}), {:?}",
                tab.events.len(),
                tab.events.page(),
                tab.events.row_text(0)
            )
        },
    );
    window.close();
    pump(50);
}

/// What the rows in view draw: states, events and counters.
fn drawn_in_view(tab: &Tab) -> usize {
    let (Some(r), rows) = (tab.control_flow.render(), tab.control_flow.shown_rows()) else {
        return 0;
    };
    let ids: Vec<_> = rows
        .clone()
        .filter_map(|i| r.tree().rows().get(i).map(|row| row.id))
        .collect();
    let counters = r
        .counters()
        .iter()
        .filter(|c| c.row.is_some_and(|id| ids.contains(&id)))
        .count();
    rows.map(|i| r.states(i).len() + r.events(i).len())
        .sum::<usize>()
        + counters
}

/// The containers view's renders hold the rows in view and a page
/// either side: scrolled to the middle of the tree and then to its end,
/// the rows shown are drawn (a screenshot of the middle,
/// `paje-<trace>-scrolled.png`), and scrolled back to the top as before.
fn rows_drawn_when_scrolled(out: &mut Outcome, tab: &Tab, window: &gtk::Window, stem: &str) {
    let cf = &tab.control_flow;
    let (Some(l), Some(r)) = (cf.layout(), cf.render()) else {
        out.check(
            &format!("paje_{stem}_rows_drawn_when_scrolled"),
            false,
            || "no render".into(),
        );
        return;
    };
    let n = r.tree().len();
    let bottom = (l.row_count() as f64 * l.row_height - l.graph.h).max(0.0);
    let top = drawn_in_view(tab);
    let mut seen = Vec::new();
    for y in [bottom / 2.0, bottom, 0.0] {
        cf.scroll_rows_to(y);
        settle(tab);
        let (shown, held) = (
            cf.shown_rows(),
            cf.render().map_or(0..0, |r| r.materialized()),
        );
        seen.push((y, shown.clone(), held.clone(), drawn_in_view(tab)));
        if y == bottom / 2.0 {
            let shot = traceloom_gui::screenshot::save_png(
                window,
                &screenshots_dir().join(format!("paje-{stem}-scrolled.png")),
            );
            seen.last_mut().unwrap().3 *= usize::from(shot.is_ok());
        }
    }
    let ok = n > 200
        && seen.iter().all(|(_, shown, held, drawn)| {
            held.start <= shown.start.min(n) && shown.end.min(n) <= held.end && *drawn > 0
        })
        // Far from the top, the renders hold part of the rows only.
        && seen[0].2.len() < n
        && seen[2].3 == top;
    out.check(&format!("paje_{stem}_rows_drawn_when_scrolled"), ok, || {
        format!("{n} rows, top drew {top}; (scroll, in view, held, drawn): {seen:?}")
    });
}

/// A file that is not a Pajé trace: the window says what is wrong with
/// it, naming file and line, and opens no tab.
fn bad_input_explained(out: &mut Outcome) {
    let t = tempfile::tempdir().expect("temporary directory");
    let bad = t.path().join("bad.trace");
    std::fs::write(
        &bad,
        "%EventDef PajeSetState 10\n% Time date\n3 4 5\nnot pajé\n",
    )
    .unwrap();
    let (c, window, tab) = open(&bad);
    let shown = info_bar(&window);
    let name = bad.display().to_string();
    let ok = tab.is_none()
        && c.model().tab_count() == 0
        && shown.as_ref().is_some_and(|(kind, text)| {
            *kind == gtk::MessageType::Error
                && text.contains(&name)
                && text.contains("not a Pajé trace")
                && text.contains(":3 (byte")
        });
    out.check("paje_bad_input_names_file_and_line", ok, || {
        format!("info bar {shown:?}")
    });
    window.close();
    pump(50);
}

/// A second open of a Pajé trace shows what the first showed, from the
/// analysis store (no pass), at once.
fn reopen_from_the_store(out: &mut Outcome) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("simu-mardi.trace");
    std::fs::copy(traceloom_testdata::paje("simu-mardi.trace"), &path).expect("copy");
    let (mut seen, mut widths) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        let (_c, window, tab) = open(&path);
        let Some(tab) = tab else {
            seen.push(None);
            window.close();
            continue;
        };
        settle(&tab);
        // The render's width and the graph's, should they differ.
        widths.push((
            tab.control_flow.render().map(|r| r.scale().width),
            tab.control_flow.layout().map(|l| l.graph.w),
        ));
        seen.push(Some((
            tab.analysis_from_store(),
            shown(&tab),
            held_states(&tab),
            stats_rows(&tab).len(),
        )));
        window.close();
        pump(50);
    }
    let ok = match (&seen[0], &seen[1]) {
        // A render holds the rows in view and a page either side, as the
        // graph's layout gave them when it was asked for: a reopen's
        // first render, made before the layout (at the width the last
        // run saved), holds more. So the states are compared on the rows
        // both hold, and the counters (one a held row) only for presence.
        (Some((false, a, ha, sa)), Some((true, b, hb, sb))) => {
            let both = ha.0.max(hb.0)..(ha.0 + ha.1.len()).min(hb.0 + hb.1.len());
            let states = |h: &(usize, Vec<usize>)| h.1[both.start - h.0..both.end - h.0].to_vec();
            (a.0, a.2) == (b.0, b.2)
                && both.len() >= 10
                && states(ha) == states(hb)
                && states(ha).iter().sum::<usize>() > 0
                && a.3 > 0
                && b.3 > 0
                && sa == sb
                && *sa > 0
        }
        _ => false,
    };
    out.check("paje_reopen_shows_the_stored_analysis", ok, || {
        format!(
            "(from store, (rows, states, arrows, counters), (first held row, states a row), statistics rows): {seen:?}; (render, graph) widths {widths:?}"
        )
    });
}

/// The rows the containers view's render holds: the first one's display
/// index, and the states of each.
fn held_states(tab: &Tab) -> (usize, Vec<usize>) {
    tab.control_flow.render().map_or((0, Vec::new()), |r| {
        let held = r.materialized();
        let held = held.start.min(r.tree().len())..held.end.min(r.tree().len());
        (held.start, held.map(|i| r.states(i).len()).collect())
    })
}

pub(crate) fn paje_window(out: &mut Outcome) {
    examples_shown(out);
    reopen_from_the_store(out);
    for name in ["g5k.trace", "simu-mardi.trace"] {
        interactions(out, name);
    }
    bad_input_explained(out);
}
