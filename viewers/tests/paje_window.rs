//! The Pajé models on the scheduler: the whole-trace pass holds what
//! `traceloom-paje`'s in-memory `Trace` (pj_dump's model) holds, whether
//! serviced at once or in small interrupted turns; renders show
//! containers, states, links and variables; the statistics of a range add
//! up; the event list far-scrolls by time and pages back and forth.

use std::collections::HashSet;
use std::sync::Arc;
use traceloom_base::{Time, TimeRange};
use traceloom_engine::request::Budget;
use traceloom_paje::{Trace, TypeNature};
use traceloom_viewers::model::eventlist::ListMove;
use traceloom_viewers::model::paje_analysis::{PajeCollector, PartialSnapshot};
use traceloom_viewers::model::paje_stats::OPEN_ROWS;
use traceloom_viewers::model::steps::NONE;
use traceloom_viewers::model::{
    PajeAnalysis, PajeData, PajeListModel, PajeSession, PajeStatistics, PajeView,
};
use traceloom_viewers::render::{
    ArrangedStatistics, StatValue, StatisticsArrangement, StatisticsTree,
};

const EXAMPLES: [&str; 3] = ["g5k.trace", "simu-mardi.trace", "native_sample.trace"];

/// Entities of the pass: (containers, states, variable pieces, links with
/// both ends, events).
fn counts(d: &PajeData) -> (usize, usize, usize, usize, usize) {
    let states = d
        .containers
        .iter()
        .flat_map(|c| c.lanes.iter())
        .map(|l| l.codes.iter().filter(|&c| c != NONE).count())
        .sum();
    let vars = d
        .containers
        .iter()
        .flat_map(|c| c.variables.iter())
        .map(|v| v.items.len())
        .sum();
    let links = d.links.iter().map(|l| l.items.len()).sum();
    let events = d
        .containers
        .iter()
        .flat_map(|c| c.events.iter())
        .map(|e| e.1.len())
        .sum();
    (d.containers.len(), states, vars, links, events)
}

/// The same counts from the in-memory reader.
fn reader_counts(t: &Trace) -> (usize, usize, usize, usize, usize) {
    let (mut states, mut vars, mut links, mut events) = (0, 0, 0, 0);
    for (ci, _) in t.model.containers().iter().enumerate() {
        let c = traceloom_paje::ContainerId(ci as u32);
        for (ti, ty) in t.model.types().iter().enumerate() {
            let ty_id = traceloom_paje::TypeId(ti as u32);
            match ty.nature {
                TypeNature::State => states += t.entities.states(c, ty_id).len(),
                TypeNature::Variable => vars += t.entities.variables(c, ty_id).len(),
                TypeNature::Event => events += t.entities.events(c, ty_id).len(),
                TypeNature::Link { .. } => {
                    links += t
                        .entities
                        .links(c, ty_id)
                        .iter()
                        .filter(|l| {
                            l.start_container.is_some()
                                && l.end_container.is_some()
                                && l.start >= 0.0
                                && l.end >= 0.0
                        })
                        .count()
                }
                _ => {}
            }
        }
    }
    (t.model.containers().len() - 1, states, vars, links, events)
}

#[test]
fn the_pass_holds_what_the_reader_does() {
    for name in EXAMPLES {
        let path = traceloom_testdata::paje(name);
        let (data, diags) = PajeData::open(&path).unwrap();
        assert!(data.complete);
        let trace = Trace::open(&path).unwrap();
        assert_eq!(counts(&data), reader_counts(&trace), "{name}");
        assert_eq!(diags.len(), trace.diagnostics.items().len(), "{name}");
    }
}

#[test]
fn interrupted_pass_snapshots_grow_to_the_whole() {
    let path = traceloom_testdata::paje("simu-mardi.trace");
    let (whole, _) = PajeData::open(&path).unwrap();
    let mut s = PajeSession::open(&path).unwrap();
    let owner = s.new_owner();
    let id = PajeAnalysis::request(&mut s, owner);
    let mut list = PajeListModel::new(&mut s, 20);
    let mut seen = Vec::new();
    let mut turn = 0u64;
    while !s.is_complete(id) {
        s.service(Budget::events(1500), || false);
        if let Some(c) = s.peek::<PajeCollector>(id) {
            let snap = c.snapshot();
            seen.push((snap.reached, counts(&snap).1));
        }
        // The list reads elsewhere between turns (HIGH, no state).
        turn += 1;
        let span = whole.span;
        list.start(
            &mut s,
            ListMove::ToTime(span.start + (span.span() as i64 / 5) * (turn % 5) as i64),
        );
    }
    let done: PajeCollector = s.take(id).unwrap();
    assert_eq!(counts(&done.into_snapshot()), counts(&whole));
    assert!(seen.len() > 3, "{seen:?}");
    for w in seen.windows(2) {
        assert!(w[0].0 <= w[1].0 && w[0].1 <= w[1].1, "{seen:?}");
    }
    assert!(seen[0].1 < counts(&whole).1);
}

/// A snapshot taken a few containers at a time (the window's main loop)
/// equals one taken at once, midway through the pass and at its end.
#[test]
fn snapshot_in_parts_equals_the_whole_snapshot() {
    for name in EXAMPLES {
        let path = traceloom_testdata::paje(name);
        let mut s = PajeSession::open(&path).unwrap();
        let owner = s.new_owner();
        let id = PajeAnalysis::request(&mut s, owner);
        let mut checked = 0;
        while !s.is_complete(id) {
            s.service(Budget::events(2000), || false);
            let Some(c) = s.peek::<PajeCollector>(id) else {
                break;
            };
            let whole = c.snapshot();
            let mut part = PartialSnapshot::default();
            let mut calls = 0;
            let parts = loop {
                calls += 1;
                // Stops at every chance: as many calls as 32-container steps.
                if let Some(d) = c.snapshot_part(&mut part, || true) {
                    break d;
                }
            };
            assert_eq!(calls, whole.containers.len() / 32 + 1, "{name}");
            assert_eq!(counts(&parts), counts(&whole), "{name}");
            assert_eq!(parts.reached, whole.reached, "{name}");
            let ids = |d: &PajeData| -> Vec<_> {
                d.containers
                    .iter()
                    .map(|c| (c.id, c.name.clone()))
                    .collect()
            };
            assert_eq!(ids(&parts), ids(&whole), "{name}");
            let view = PajeView::default();
            let (a, b) = (
                parts.render(whole.span, 800, &view),
                whole.render(whole.span, 800, &view),
            );
            assert_eq!(a.tree().len(), b.tree().len(), "{name}");
            for row in 0..a.tree().len() {
                assert_eq!(a.states(row), b.states(row), "{name} row {row}");
            }
            checked += 1;
        }
        assert!(checked > 1, "{name}: the pass took one turn");
    }
}

#[test]
fn renders_show_containers_states_links_and_variables() {
    for name in ["g5k.trace", "simu-mardi.trace"] {
        let (data, _) = PajeData::open(&traceloom_testdata::paje(name)).unwrap();
        let r = data.render(data.span, 1600, &PajeView::default());
        assert!(r.tree().len() >= data.containers.len(), "{name}");
        let states: usize = (0..r.tree().len()).map(|i| r.states(i).len()).sum();
        let arrows: usize = r.arrow_series().iter().map(|a| a.arrows.len()).sum();
        assert!(arrows > 0, "{name}: no link");
        assert!(!r.counters().is_empty(), "{name}: no variable");
        if name == "simu-mardi.trace" {
            assert!(states > 0, "{name}: no state");
        }
        // Hiding every link type removes the arrows.
        let hidden: HashSet<_> = data
            .legend()
            .iter()
            .filter(|e| e.kind == "Link")
            .map(|e| e.type_id)
            .collect();
        let view = PajeView {
            hidden,
            ..PajeView::default()
        };
        let r = data.render(data.span, 1600, &view);
        assert!(r.arrow_series().iter().all(|a| a.arrows.is_empty()));
    }
}

#[test]
fn range_statistics_add_up_per_type() {
    let (data, _) = PajeData::open(&traceloom_testdata::paje("simu-mardi.trace")).unwrap();
    let whole = data.statistics(data.span, &PajeView::default());
    assert!(whole.row_count() > 10);
    let mid = data.span.start + data.span.span() as Time / 2;
    let half = data.statistics(TimeRange::new(mid, data.span.end), &PajeView::default());
    assert_ne!(whole, half);
    for s in [&whole, &half] {
        // A container's row counts the states of its types.
        let rows: Vec<_> = s.rows().collect();
        for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.depth == 0) {
            let types = rows[i + 1..].iter().take_while(|t| t.depth > 0);
            let sum: u64 = types
                .filter(|t| t.depth == 1)
                .map(|t| match t.values[2] {
                    StatValue::Count(n) => n,
                    ref v => panic!("{v:?}"),
                })
                .sum();
            assert_eq!(r.values[2], StatValue::Count(sum), "{}", r.label);
            assert!(sum > 0, "{}", r.label);
        }
        for r in s.rows().filter(|r| r.depth == 1) {
            let StatValue::Percent(p) = r.values[1] else {
                panic!("{r:?}")
            };
            assert!((0.0..=100.0 + 1e-6).contains(&p), "{r:?}");
        }
    }
}

#[test]
fn the_list_far_scrolls_by_time_and_pages() {
    let path = traceloom_testdata::paje("simu-mardi.trace");
    let mut s = PajeSession::open(&path).unwrap();
    let span = s.time_span().unwrap();
    let mut list = PajeListModel::new(&mut s, 25);
    let run = |s: &mut PajeSession, list: &mut PajeListModel, mv| {
        list.start(s, mv);
        while list.is_pending() {
            s.service(Budget::unlimited(), || false);
            list.poll(s);
        }
        list.rows().to_vec()
    };
    let t = span.0 + (span.1 - span.0) * 2 / 3;
    let rows = run(&mut s, &mut list, ListMove::ToTime(t));
    assert_eq!(rows.len(), 25);
    assert!(rows[0].time >= t && rows.windows(2).all(|w| w[0].position < w[1].position));
    assert!(rows
        .iter()
        .all(|r| !r.kind.is_empty() && !r.container.is_empty()));
    let down = run(&mut s, &mut list, ListMove::PageDown);
    assert_eq!(down[0], rows[24]);
    let up = run(&mut s, &mut list, ListMove::PageUp);
    assert_eq!(up, rows);
    // The end: the last page.
    let end = run(&mut s, &mut list, ListMove::ToTime(span.1 + 1));
    assert_eq!(end.len(), 25);
    assert_eq!(end.last().unwrap().time, span.1);
}

/// Every row of the table a view arranges from the lazy statistics tree,
/// expanded as the tree opens.
fn arranged_rows(tree: PajeStatistics) -> Vec<(u16, String, Vec<StatValue>)> {
    let shown = ArrangedStatistics::new(Arc::new(tree), &StatisticsArrangement::default());
    shown
        .rows()
        .map(|r| (r.depth, r.label.to_string(), r.values.to_vec()))
        .collect()
}

/// The lazy statistics tree a view reads holds the table's rows; it opens
/// whole when small, and with values (or types too) collapsed when it has
/// more than `OPEN_ROWS` rows, so that a view lays out only what fits.
#[test]
fn statistics_tree_opens_whole_when_small_and_collapsed_when_large() {
    let (data, _) = PajeData::open(&traceloom_testdata::paje("simu-mardi.trace")).unwrap();
    let view = PajeView::default();
    let table = data.statistics(data.span, &view);
    let tree = data.statistics_tree(data.span, &view);
    assert_eq!(tree.open_depth(), u16::MAX);
    let all: Vec<_> = table
        .rows()
        .map(|r| (r.depth, r.label.to_string(), r.values.to_vec()))
        .collect();
    assert_eq!(arranged_rows(tree), all);

    // Thousands of short-lived threads: with values collapsed, then
    // state types too.
    let dir = tempfile::tempdir().unwrap();
    for (mb, open_depth) in [(8, 1), (12, 0)] {
        let cfg = traceloom_pajegen::GeneratorConfig {
            max_bytes: mb << 20,
            thread_churn: 0.3,
            ..Default::default()
        };
        let f = dir.path().join(format!("churn{mb}.trace"));
        traceloom_pajegen::generate(&cfg, std::fs::File::create(&f).unwrap()).unwrap();
        let (data, _) = PajeData::open(&f).unwrap();
        let table = data.statistics(data.span, &view);
        assert!(table.row_count() > OPEN_ROWS, "{} rows", table.row_count());
        let tree = data.statistics_tree(data.span, &view);
        assert_eq!(tree.open_depth(), open_depth, "{mb} MB");
        let expect: Vec<_> = table
            .rows()
            .filter(|r| r.depth <= open_depth)
            .map(|r| (r.depth, r.label.to_string(), r.values.to_vec()))
            .collect();
        assert!(expect.len() <= OPEN_ROWS, "{mb} MB");
        assert_eq!(arranged_rows(tree), expect, "{mb} MB");
    }
}
