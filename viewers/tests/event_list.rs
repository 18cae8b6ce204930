//! The event list scrolled by time, lines and pages, with and without a
//! filter (`state.*` operands included), shows exactly the rows of a slice
//! of the full filtered dump — also when its moves are serviced in small
//! chunks on a session whose LOW-priority kernel pass runs meanwhile.

use std::path::PathBuf;

use proptest::prelude::*;
use traceloom_ctf::{Message, Traceset};
use traceloom_engine::request::{Budget, OwnerId};
use traceloom_engine::state::{Handlers, TracesetState};
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;
use traceloom_viewers::model::fields::format_fields;
use traceloom_viewers::model::kernel::KernelCollector;
use traceloom_viewers::model::{EventListModel, KernelAnalysis, ListMove, Session};

fn trace() -> PathBuf {
    traceloom_testdata::ctf("tracecompass/bug446190")
}

type Line = (i64, String, String);

/// The filtered dump, as `traceloom dump --filter` computes it: `state.*`
/// operands see the state after the event, computed from the start.
fn dump(path: &PathBuf, filter: Option<&str>) -> Vec<Line> {
    let ts = Traceset::open(std::slice::from_ref(path)).unwrap();
    let f = filter.map(|e| Filter::new(e).unwrap());
    let mut state = TracesetState::new(ts.traces().len());
    let mut handlers = Handlers::new();
    let mut out = Vec::new();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Ok(Message::Event(e)) = m {
            state.apply(&mut handlers, &e);
            if f.as_ref()
                .is_none_or(|f| f.matches(&EventSubject::new(&e, Some(&state))))
            {
                out.push((
                    e.timestamp_ns().unwrap(),
                    e.name().to_string(),
                    format_fields(&e),
                ));
            }
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Op {
    Time(f64),
    Down(usize),
    Up(usize),
    PageDown,
    PageUp,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0.0f64..1.05).prop_map(Op::Time),
        (1usize..200).prop_map(Op::Down),
        (1usize..200).prop_map(Op::Up),
        Just(Op::PageDown),
        Just(Op::PageUp),
    ]
}

struct Fixture {
    path: PathBuf,
    filters: Vec<(Option<&'static str>, Vec<Line>)>,
    span: (i64, i64),
}

fn fixture() -> &'static Fixture {
    static F: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let path = trace();
        let filters = [
            None,
            Some("name == \"sched_switch\" || name == \"irq_*\""),
            Some("name == \"no_such_event\""),
            Some("state.mode == \"syscall\" && name != \"sched_switch\""),
            Some("state.mode == \"irq\" || state.mode == \"softirq\""),
        ]
        .into_iter()
        .map(|f| (f, dump(&path, f)))
        .collect::<Vec<_>>();
        for (f, lines) in &filters[3..] {
            // The state filters select a real part of the trace.
            assert!(
                lines.len() > 100 && lines.len() < filters[0].1.len() / 2,
                "{f:?}: {} events",
                lines.len()
            );
        }
        let s = Session::open(std::slice::from_ref(&path)).unwrap();
        let span = s.time_span().unwrap();
        Fixture {
            path,
            filters,
            span,
        }
    })
}

fn check(ops: &[Op], which: usize, page: usize, buffer: usize) {
    let fx = fixture();
    let (filter, all) = &fx.filters[which];
    let mut s = Session::open(std::slice::from_ref(&fx.path)).unwrap();
    let mut m = EventListModel::new(&mut s, page);
    m.set_buffer_size(buffer);
    m.set_filter(&mut s, *filter).unwrap();
    let max_top = all.len().saturating_sub(page);
    let mut idx = 0usize;
    for op in ops {
        match *op {
            Op::Time(f) => {
                let t = fx.span.0 + ((fx.span.1 - fx.span.0) as f64 * f) as i64;
                m.scroll_to_time(&mut s, t);
                idx = all.partition_point(|l| l.0 < t).min(max_top);
            }
            Op::Down(n) => {
                m.line_down(&mut s, n);
                idx = (idx + n).min(max_top);
            }
            Op::Up(n) => {
                m.line_up(&mut s, n);
                idx = idx.saturating_sub(n);
            }
            Op::PageDown => {
                m.page_down(&mut s);
                idx = (idx + page).min(max_top);
            }
            Op::PageUp => {
                m.page_up(&mut s);
                idx = idx.saturating_sub(page);
            }
        }
        let got: Vec<Line> = m
            .rows()
            .iter()
            .map(|r| (r.time, r.name.to_string(), r.fields.clone()))
            .collect();
        let want = &all[idx.min(all.len())..(idx + page).min(all.len())];
        assert_eq!(got, want, "after {op:?} (filter {filter:?})");
        for w in m.rows().windows(2) {
            assert!(w[0].position < w[1].position);
            if let Some(d) = w[1].delta {
                assert_eq!(d, w[1].time - w[0].time);
            }
        }
        if let Some(first) = m.rows().first() {
            assert_eq!(m.scrollbar_value(), Some(first.time));
        }
    }
}

#[test]
fn scripted_scrolls() {
    let ops = [
        Op::Time(0.5),
        Op::PageDown,
        Op::PageDown,
        Op::Up(7),
        Op::PageUp,
        Op::Time(0.0),
        Op::Up(3),
        Op::Down(250),
        Op::Time(1.0),
        Op::PageDown,
        Op::Up(90),
        Op::Time(0.999),
    ];
    for which in 0..5 {
        check(&ops, which, 25, 100);
        check(&ops, which, 40, 1000);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_scrolls(ops in proptest::collection::vec(op(), 1..12), which in 0usize..4, page in 1usize..50, buffer in 8usize..300) {
        check(&ops, which, page, buffer);
    }
}

/// Moves with their reads serviced 300 events at a time, on a session
/// where the whole-trace kernel pass (LOW priority) runs meanwhile: each
/// move's rows are the same, and the pass completes over every event.
#[test]
fn moves_preempt_the_kernel_pass() {
    let fx = fixture();
    for which in [0, 1, 3] {
        let (filter, all) = &fx.filters[which];
        let page = 20;
        let mut s = Session::open(std::slice::from_ref(&fx.path)).unwrap();
        let pass = KernelAnalysis::request(&mut s, OwnerId(1_000));
        let pass = s.add(pass);
        let mut m = EventListModel::new(&mut s, page);
        m.set_buffer_size(200);
        m.set_filter(&mut s, *filter).unwrap();
        let max_top = all.len().saturating_sub(page);
        let mut idx;
        let mut steps = 0u64;
        let mut serviced = |m: &mut EventListModel, s: &mut Session| {
            while m.is_pending() {
                s.service_nonblocking(Budget::events(300), || false);
                m.poll(s);
                steps += 1;
            }
        };
        let moves = [
            (
                ListMove::ToTime(fx.span.0 + (fx.span.1 - fx.span.0) / 2),
                None,
            ),
            (ListMove::PageDown, Some(page as i64)),
            (ListMove::LinesUp(57), Some(-57)),
            (ListMove::ToTime(fx.span.1), None),
            (ListMove::PageUp, Some(-(page as i64))),
        ];
        serviced(&mut m, &mut s);
        idx = 0usize;
        for (mv, delta) in moves {
            m.start(&mut s, mv);
            serviced(&mut m, &mut s);
            idx = match (mv, delta) {
                (ListMove::ToTime(t), _) => all.partition_point(|l| l.0 < t).min(max_top),
                (_, Some(d)) => (idx as i64 + d).clamp(0, max_top as i64) as usize,
                _ => unreachable!(),
            };
            let got: Vec<Line> = m
                .rows()
                .iter()
                .map(|r| (r.time, r.name.to_string(), r.fields.clone()))
                .collect();
            let want = &all[idx.min(all.len())..(idx + page).min(all.len())];
            assert_eq!(got, want, "after {mv:?} (filter {filter:?})");
        }
        assert!(steps > 5, "the moves were serviced in chunks");
        while !s.is_complete(pass) {
            s.service(Budget::events(1 << 16), || false);
        }
        let mut c = s
            .take::<KernelCollector>(pass)
            .expect("the kernel pass completes");
        let total: usize = fx.filters[0].1.len();
        assert_eq!(
            c.snapshot().events as usize,
            total,
            "the pass saw every event"
        );
    }
}

/// A move asked while another is under way: a far scroll replaces it, and
/// line moves queued after it add up.
#[test]
fn moves_asked_while_one_is_under_way() {
    let fx = fixture();
    let (_, all) = &fx.filters[0];
    let page = 10;
    let mut s = Session::open(std::slice::from_ref(&fx.path)).unwrap();
    let mut m = EventListModel::new(&mut s, page);
    m.set_buffer_size(40);
    m.scroll_to_time(&mut s, fx.span.0);
    let quarter = fx.span.0 + (fx.span.1 - fx.span.0) / 4;
    m.start(
        &mut s,
        ListMove::ToTime(fx.span.0 + (fx.span.1 - fx.span.0) / 2),
    );
    m.start(&mut s, ListMove::ToTime(quarter));
    m.start(&mut s, ListMove::LinesDown(30));
    m.start(&mut s, ListMove::LinesUp(5));
    m.start(&mut s, ListMove::PageDown);
    assert!(m.is_pending());
    m.finish(&mut s);
    let idx = all.partition_point(|l| l.0 < quarter) + 30 - 5 + page;
    let got: Vec<i64> = m.rows().iter().map(|r| r.time).collect();
    let want: Vec<i64> = all[idx..idx + page].iter().map(|l| l.0).collect();
    assert_eq!(got, want);
}
