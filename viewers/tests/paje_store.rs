//! The Pajé analysis store: a round trip gives the in-memory analysis
//! back (its columns read in place from the map) on every shared Pajé
//! example that opens and on a generated trace; damaged, truncated and
//! stale stores are detected and rebuilt; the pass spilling to a file
//! gives what it gives on the heap; `list` and `clear` see Pajé stores.

use std::fs;
use std::path::{Path, PathBuf};

use traceloom_base::TimeRange;
use traceloom_paje::TypeId;
use traceloom_viewers::model::{PajeData, PajeSession, PajeView};
use traceloom_viewers::store::paje::{self, store_path};
use traceloom_viewers::store::{self, StoreError, StoreOutcome};

/// Every `.trace` of the shared Pajé examples (the main file of the
/// multi-file one), sorted.
fn examples() -> Vec<PathBuf> {
    let root = traceloom_testdata::paje_root();
    let mut out: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    out.push(traceloom_testdata::paje("multiple_files/root.trace"));
    out.sort();
    assert!(
        out.len() >= 10,
        "Pajé examples missing in {}",
        root.display()
    );
    out
}

fn generated(dir: &Path) -> PathBuf {
    let cfg = traceloom_pajegen::GeneratorConfig {
        max_bytes: 3 << 20,
        thread_churn: 0.005,
        ..Default::default()
    };
    let f = dir.join("gen.trace");
    traceloom_pajegen::generate(&cfg, fs::File::create(&f).unwrap()).unwrap();
    f
}

/// Everything a Pajé analysis holds, compared item by item (the columns
/// however packed or mapped), and its renders and statistics.
fn assert_same(a: &PajeData, b: &PajeData, what: &str) {
    assert_eq!(a.span, b.span, "{what}: span");
    assert_eq!(a.complete, b.complete, "{what}");
    assert_eq!(a.events_read, b.events_read, "{what}");
    assert_eq!(a.types, b.types, "{what}: types");
    assert_eq!(a.values, b.values, "{what}: values");
    assert_eq!(a.histogram, b.histogram, "{what}: histogram");
    assert_eq!(a.diagnostics, b.diagnostics, "{what}: diagnostics");
    assert_eq!(a.containers.len(), b.containers.len(), "{what}");
    for (x, y) in a.containers.iter().zip(b.containers.iter()) {
        let c = format!("{what}: container {}", x.name);
        assert_eq!(
            (x.id, x.parent, &x.name, &x.ident, x.type_id, x.start, x.end),
            (y.id, y.parent, &y.name, &y.ident, y.type_id, y.start, y.end),
            "{c}"
        );
        assert_eq!(x.lanes.len(), y.lanes.len(), "{c}");
        for (l, m) in x.lanes.iter().zip(&y.lanes) {
            assert_eq!((l.type_id, l.level, l.end), (m.type_id, m.level, m.end));
            assert_eq!(l.times, m.times, "{c}: lane times");
            assert_eq!(l.codes, m.codes, "{c}: lane values");
            assert_eq!(l.blocks, m.blocks, "{c}: lane summaries");
            assert_eq!(l.classes, m.classes, "{c}: lane summaries' values");
        }
        assert_eq!(x.events, y.events, "{c}: events");
        assert_eq!(x.variables.len(), y.variables.len(), "{c}");
        for (v, w) in x.variables.iter().zip(&y.variables) {
            assert_eq!((v.type_id, v.end), (w.type_id, w.end), "{c}");
            let bits = |s: &traceloom_viewers::model::column::Column<_>| -> Vec<(i64, u64)> {
                s.iter()
                    .map(|i: traceloom_viewers::model::paje_analysis::VarItem| {
                        (i.time, i.value.to_bits())
                    })
                    .collect()
            };
            assert_eq!(bits(&v.items), bits(&w.items), "{c}: variable values");
        }
    }
    assert_eq!(a.links.len(), b.links.len(), "{what}");
    for (l, m) in a.links.iter().zip(b.links.iter()) {
        assert_eq!((l.type_id, l.longest), (m.type_id, m.longest), "{what}");
        assert_eq!(l.items, m.items, "{what}: links");
    }
    let view = PajeView::default();
    assert_eq!(
        a.render(a.span, 1600, &view),
        b.render(b.span, 1600, &view),
        "{what}: render"
    );
    let mid = TimeRange::new(a.span.start + a.span.span() as i64 / 3, a.span.end);
    assert_eq!(
        a.render(mid, 700, &view),
        b.render(mid, 700, &view),
        "{what}: render of a window"
    );
    // The whole trace's statistics come from the kept totals when there
    // are some: they equal the walk over the states, over any range
    // holding them and with types hidden; other ranges are walked.
    let wide = TimeRange::new(a.span.start - 5, a.span.end + 1_000_000);
    let mut hidden = PajeView::default();
    hidden.hidden.extend(
        a.types
            .iter()
            .enumerate()
            .step_by(2)
            .map(|(i, _)| TypeId(i as u32)),
    );
    for (range, v, r) in [
        (a.span, &view, "whole trace"),
        (wide, &view, "wider range"),
        (a.span, &hidden, "whole trace, types hidden"),
        (mid, &view, "part"),
    ] {
        assert_eq!(
            a.statistics(range, v),
            b.statistics(range, v),
            "{what}: statistics of the {r}"
        );
    }
    if let Some(t) = &b.totals {
        assert_eq!(**t, a.state_totals(), "{what}: totals");
    }
}

fn is_mapped(d: &PajeData) -> bool {
    let lanes = d.containers.iter().flat_map(|c| &c.lanes);
    lanes.clone().count() > 0 && lanes.into_iter().all(|l| l.times.is_mapped())
}

#[test]
fn round_trip_equals_the_pass_on_every_example_and_a_generated_trace() {
    let gen_dir = tempfile::tempdir().unwrap();
    let mut traces = examples();
    traces.push(generated(gen_dir.path()));
    let mut stored = Vec::new();
    for path in traces {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Ok((heap, _)) = PajeData::open(&path) else {
            // Traces that do not open as Pajé (refused with their first
            // error) have no store either.
            assert!(PajeSession::open(&path).is_err(), "{name}");
            continue;
        };
        let cache = tempfile::tempdir().unwrap();
        // Spilling often (full chunks to the mapped file) changes nothing.
        let mut s = PajeSession::open(&path).unwrap();
        s.set_spill_dir(Some(cache.path().to_path_buf()));
        s.set_spill_every(500);
        let (spilled, _) = PajeData::analyse(&mut s).unwrap();
        assert_same(&heap, &spilled, &format!("{name} (spilled)"));
        // Every container is destroyed by the end of the trace, and a
        // destroyed container's columns are sealed into the spill file:
        // what stays on the heap is 8 bytes per full chunk (8 kB) spilled.
        let h = spilled.heap_bytes();
        let data: usize = spilled
            .containers
            .iter()
            .map(|c| {
                let lanes = c
                    .lanes
                    .iter()
                    .map(|l| l.times.packed_bytes() + l.codes.packed_bytes() + l.blocks.len() * 16);
                let events = c.events.iter().map(|(_, e)| e.packed_bytes());
                let vars = c.variables.iter().map(|v| v.items.packed_bytes());
                lanes.chain(events).chain(vars).sum::<usize>()
            })
            .sum();
        assert!(
            (h.lanes + h.events + h.variables) * 1024 <= data,
            "{name}: sealed containers hold {h:?} on the heap for {data} bytes"
        );
        drop((s, spilled));
        let mut s = PajeSession::open(&path).unwrap();
        let (built, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
        assert!(
            matches!(outcome, StoreOutcome::Built(None)),
            "{name}: {outcome:?}"
        );
        assert_same(&heap, &built, &format!("{name} (built)"));
        let mut s = PajeSession::open(&path).unwrap();
        let (loaded, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
        assert!(
            matches!(outcome, StoreOutcome::Loaded { .. }),
            "{name}: {outcome:?}"
        );
        assert_same(&heap, &loaded, &format!("{name} (loaded)"));
        assert!(heap.totals.is_none() && loaded.totals.is_some(), "{name}");
        if heap.containers.iter().any(|c| !c.lanes.is_empty()) {
            assert!(is_mapped(&loaded), "{name}: not read in place");
        }
        stored.push(name);
    }
    for must in [
        "g5k.trace",
        "simu-mardi.trace",
        "native_sample.trace",
        "root.trace",
        "gen.trace",
    ] {
        assert!(stored.iter().any(|n| n == must), "{must}: {stored:?}");
    }
}

/// A stored trace's whole-trace statistics are its kept totals (no walk
/// over its states); a range that does not hold every state is walked.
#[test]
fn whole_trace_statistics_come_from_the_kept_totals() {
    let dir = tempfile::tempdir().unwrap();
    let path = generated(dir.path());
    let mut s = PajeSession::open(&path).unwrap();
    let (data, _) = paje::load_or_build(&mut s, dir.path()).unwrap();
    let view = PajeView::default();
    let span = data.span;
    let part = TimeRange::new(span.start + span.span() as i64 / 4, span.end);
    let mut altered = (*data).clone();
    let mut totals = (**data.totals.as_ref().expect("kept totals")).clone();
    for (_, values) in totals.containers.iter_mut().flatten() {
        for v in values {
            v.1 *= 2;
        }
    }
    altered.totals = Some(std::sync::Arc::new(totals));
    let time_of = |r: &traceloom_viewers::StatisticsRender| -> Vec<String> {
        r.rows().map(|row| format!("{:?}", row.values[0])).collect()
    };
    assert_ne!(
        time_of(&altered.statistics(span, &view)),
        time_of(&data.statistics(span, &view))
    );
    assert_eq!(
        altered.statistics(part, &view),
        data.statistics(part, &view)
    );
}

/// A copy of `name` in a directory of its own (so that it can be changed).
fn copy_example(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    fs::copy(traceloom_testdata::paje(name), &to).unwrap();
    to
}

#[test]
fn damaged_truncated_and_stale_stores_are_rebuilt() {
    let traces = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let path = copy_example(traces.path(), "simu-mardi.trace");
    let (heap, _) = PajeData::open(&path).unwrap();
    let mut s = PajeSession::open(&path).unwrap();
    paje::load_or_build(&mut s, cache.path()).unwrap();
    let file = store_path(cache.path(), &paje::identity(&s));
    assert!(file.exists());
    let good = fs::read(&file).unwrap();

    // A flipped byte in the columns: the checksum catches it.
    let mut bad = good.clone();
    bad[good.len() / 3] ^= 0x40;
    fs::write(&file, &bad).unwrap();
    let mut s = PajeSession::open(&path).unwrap();
    let (d, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
    assert!(
        matches!(
            outcome,
            StoreOutcome::Rebuilt(StoreError::Damaged { .. }, None)
        ),
        "{outcome:?}"
    );
    assert_same(&heap, &d, "rebuilt after damage");
    assert_eq!(fs::read(&file).unwrap().len(), good.len());

    // Truncated.
    fs::write(&file, &good[..good.len() - 100]).unwrap();
    let mut s = PajeSession::open(&path).unwrap();
    let (d, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
    assert!(
        matches!(
            outcome,
            StoreOutcome::Rebuilt(StoreError::Damaged { .. }, None)
        ),
        "{outcome:?}"
    );
    assert_same(&heap, &d, "rebuilt after truncation");

    // The trace changed: one more comment line (its size and time).
    let mut text = fs::read(&path).unwrap();
    text.extend_from_slice(b"# appended\n");
    fs::write(&path, &text).unwrap();
    let mut s = PajeSession::open(&path).unwrap();
    assert!(matches!(
        paje::load(cache.path(), &paje::identity(&s)),
        Err(StoreError::Stale { .. })
    ));
    let (d, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
    assert!(
        matches!(
            outcome,
            StoreOutcome::Rebuilt(StoreError::Stale { .. }, None)
        ),
        "{outcome:?}"
    );
    assert_same(&heap, &d, "rebuilt after a change of the trace");
    let mut s = PajeSession::open(&path).unwrap();
    let (_, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
    assert!(
        matches!(outcome, StoreOutcome::Loaded { .. }),
        "{outcome:?}"
    );

    // Nothing but the store in the cache (the spill file is unlinked), and
    // nothing written beside the trace.
    let names: Vec<_> = fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(fs::read_dir(traces.path()).unwrap().count(), 1);
}

#[test]
fn list_and_clear_see_pajé_stores() {
    let traces = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let a = copy_example(traces.path(), "g5k.trace");
    let b = copy_example(traces.path(), "simu-mardi.trace");
    for p in [&a, &b] {
        let mut s = PajeSession::open(p).unwrap();
        paje::load_or_build(&mut s, cache.path()).unwrap();
    }
    let listed = store::list(cache.path()).unwrap();
    assert_eq!(listed.len(), 2);
    for e in &listed {
        let head = e.head.as_ref().unwrap();
        assert!(head.events > 0);
        assert_eq!(head.identity.traces.len(), 1);
        assert!(head.identity.total_bytes() > 0);
    }
    let removed = store::clear(cache.path(), Some(&b)).unwrap();
    assert_eq!(removed.len(), 1);
    assert!(removed[0].to_string_lossy().ends_with(".paje.store"));
    let mut s = PajeSession::open(&b).unwrap();
    assert!(matches!(
        paje::load(cache.path(), &paje::identity(&s)),
        Err(StoreError::Missing(_))
    ));
    let (_, outcome) = paje::load_or_build(&mut s, cache.path()).unwrap();
    assert!(matches!(outcome, StoreOutcome::Built(None)));
}
