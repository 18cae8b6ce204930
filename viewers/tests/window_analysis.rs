//! A window analysed alone (`KernelAnalysis::window_request`: from the
//! nearest checkpoint's state, every row seeded at its first event) draws
//! the same states over the window as the whole-trace pass: what a time
//! graph shows of a part the pass has not reached yet; previewed with no
//! state (`KernelAnalysis::window_preview_request`: ahead of every
//! checkpoint), it draws nothing the whole pass does not.

use std::collections::HashMap;
use std::sync::Arc;

use traceloom_base::{Time, TimeRange};
use traceloom_engine::request::{Budget, OwnerId};
use traceloom_viewers::model::kernel::KernelCollector;
use traceloom_viewers::model::{
    ControlFlowModel, KernelAnalysis, KernelData, ResourcesModel, Session, WindowPreview,
};
use traceloom_viewers::TimeGraphRender;

/// Per row label, the states drawn (start, end, state name).
type Drawn = HashMap<String, Vec<(Time, Time, String)>>;

/// Per row label, the states drawn within `[from, to]` (clipped to it).
fn states(r: &TimeGraphRender, from: Time, to: Time) -> Drawn {
    let mut out = HashMap::new();
    for (i, row) in r.tree().rows().iter().enumerate() {
        let v: Vec<(Time, Time, String)> = r
            .states(i)
            .iter()
            .filter_map(|iv| {
                let (a, b) = (iv.start.max(from), iv.end.min(to));
                (a < b).then(|| (a, b, iv.state.to_string()))
            })
            .collect();
        if !v.is_empty() {
            out.insert(row.label.to_string(), v);
        }
    }
    out
}

/// The window of `span` from fraction `f0` to `f1` of it.
fn window_at((a, b): (Time, Time), f0: f64, f1: f64) -> TimeRange {
    TimeRange::new(
        a + ((b - a) as f64 * f0) as Time,
        a + ((b - a) as f64 * f1) as Time,
    )
}

/// Per view (resources, control flow), the states the whole pass and the
/// window's own data draw within `[window.start, to]`, per row label.
fn drawn_by_both(
    whole: &Arc<KernelData>,
    part: &Arc<KernelData>,
    window: TimeRange,
    to: Time,
) -> [(&'static str, Drawn, Drawn); 2] {
    let width = 200_000;
    let from = window.start;
    [
        (
            "resources",
            states(
                &ResourcesModel::new(whole.clone()).render(window, width),
                from,
                to,
            ),
            states(
                &ResourcesModel::new(part.clone()).render(window, width),
                from,
                to,
            ),
        ),
        (
            "control flow",
            states(
                &ControlFlowModel::new(whole.clone()).render(window, width),
                from,
                to,
            ),
            states(
                &ControlFlowModel::new(part.clone()).render(window, width),
                from,
                to,
            ),
        ),
    ]
}

fn window_data(session: &mut Session, window: TimeRange) -> Arc<KernelData> {
    let req = KernelAnalysis::window_request(session, OwnerId(77), window);
    let id = session.add(req);
    while !session.is_complete(id) {
        session.service(Budget::events(1 << 16), || false);
    }
    let mut c = session
        .take::<KernelCollector>(id)
        .expect("the window request completes");
    Arc::new(c.snapshot())
}

#[test]
fn a_window_analysed_alone_draws_what_the_whole_pass_draws() {
    for trace in [
        traceloom_testdata::sample_kernel(),
        traceloom_testdata::ctf("tracecompass/bug446190"),
    ] {
        let mut s = Session::open(std::slice::from_ref(&trace)).unwrap();
        let whole = KernelAnalysis::run(&mut s);
        for (f0, f1) in [(0.40, 0.45), (0.7, 0.72), (0.0, 0.05)] {
            let window = window_at(whole.span, f0, f1);
            // A fresh session: the window is read from a checkpoint-less
            // start or from what the scheduler kept, not from the pass.
            let mut s2 = Session::open(std::slice::from_ref(&trace)).unwrap();
            let part = window_data(&mut s2, window);
            // The window's data ends at its last event.
            let (from, to) = (window.start, part.span.1);
            assert!(to > from, "{}: events in {window:?}", trace.display());
            for (name, full, part) in drawn_by_both(&whole, &part, window, to) {
                assert!(!part.is_empty(), "{name}: rows in {window:?}");
                let mut compared = 0;
                for (label, want) in &full {
                    if let Some(got) = part.get(label) {
                        if got != want {
                            let i = got.iter().zip(want).take_while(|(g, w)| g == w).count();
                            panic!(
                                "{}: {name} row {label} in {window:?}: {} vs {} states, first \
                                 difference at {i}: window {:?}, whole pass {:?}",
                                trace.display(),
                                got.len(),
                                want.len(),
                                &got[i.saturating_sub(1)..(i + 2).min(got.len())],
                                &want[i.saturating_sub(1)..(i + 2).min(want.len())],
                            );
                        }
                        compared += 1;
                    }
                }
                assert!(
                    compared * 10 >= full.len() * 9,
                    "{}: {name}: {compared} of {} rows drawn in the window",
                    trace.display(),
                    full.len()
                );
            }
        }
    }
}

fn preview_data(session: &mut Session, window: TimeRange) -> Arc<KernelData> {
    let req = KernelAnalysis::window_preview_request(session, OwnerId(78), window);
    let id = session.add(req);
    while !session.is_complete(id) {
        session.service(Budget::events(1 << 16), || false);
    }
    let p = session
        .take::<WindowPreview>(id)
        .expect("the window preview completes");
    Arc::new(p.into_data())
}

/// A window previewed with no state at all (ahead of every checkpoint)
/// draws, wherever it draws a known state, what the whole pass draws
/// there: the same state, ending at the same change. Only where a row has
/// not been told its state yet (before its first telling event, or a
/// running thread whose mode is unknown) may it differ, and it says so.
#[test]
fn a_window_previewed_from_nothing_draws_only_what_the_whole_pass_draws() {
    let tmp = tempfile::tempdir().unwrap();
    let generated = tmp.path().join("gen");
    traceloom_kernelgen::generate(
        &traceloom_kernelgen::GeneratorConfig {
            events: 200_000,
            cpus: 4,
            overwrite: true,
            ..Default::default()
        },
        &generated,
    )
    .expect("generate a kernel trace");
    for trace in [
        traceloom_testdata::sample_kernel(),
        traceloom_testdata::ctf("tracecompass/bug446190"),
        generated,
    ] {
        let mut s = Session::open(std::slice::from_ref(&trace)).unwrap();
        let whole = KernelAnalysis::run(&mut s);
        for (f0, f1) in [(0.40, 0.45), (0.7, 0.72), (0.0, 0.05), (0.5, 0.6)] {
            let window = window_at(whole.span, f0, f1);
            let mut s2 = Session::open(std::slice::from_ref(&trace)).unwrap();
            let part = preview_data(&mut s2, window);
            let to = part.span.1;
            for (name, full, part) in drawn_by_both(&whole, &part, window, to) {
                let (mut known, mut unknown) = (0, 0);
                for (label, got) in &part {
                    let Some(want) = full.get(label) else {
                        continue;
                    };
                    for (ga, gb, gs) in got {
                        if gs == "run-unknown" {
                            unknown += 1;
                            continue;
                        }
                        known += 1;
                        let covering: Vec<_> = want
                            .iter()
                            .filter(|(wa, wb, _)| wa < gb && wb > ga)
                            .collect();
                        // Where the whole pass itself never learnt a
                        // running thread's mode (no statedump, first seen
                        // inside a call), the preview may know it: a
                        // system call's entry tells it was in user mode.
                        let same = |ws: &String| {
                            ws == gs || (ws == "run-unknown" && gs.starts_with("run-"))
                        };
                        let ok = matches!(
                            covering.as_slice(),
                            [(wa, wb, ws)] if same(ws) && wa <= ga && (wb == gb || *gb == to)
                        );
                        assert!(
                            ok,
                            "{}: {name} row {label} in {window:?}: preview draws {gs} over \
                             {ga}..{gb}, the whole pass {covering:?}",
                            trace.display()
                        );
                    }
                }
                // Most of what the preview draws is known: the unknown
                // stretches end at each thread's first system call exit.
                assert!(
                    known > 0 && known >= unknown,
                    "{}: {name} in {window:?}: {known} known states drawn, {unknown} unknown",
                    trace.display()
                );
            }
        }
    }
}
