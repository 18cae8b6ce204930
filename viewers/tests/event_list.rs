//! The event list scrolled by time, lines and pages, with and without a
//! filter, shows exactly the rows of a slice of the full filtered dump.

use std::path::PathBuf;

use proptest::prelude::*;
use traceloom_ctf::{Message, Traceset};
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;
use traceloom_viewers::model::fields::format_fields;
use traceloom_viewers::model::{EventListModel, Session};

fn trace() -> PathBuf {
    traceloom_testdata::ctf("tracecompass/bug446190")
}

type Line = (i64, String, String);

fn dump(path: &PathBuf, filter: Option<&str>) -> Vec<Line> {
    let ts = Traceset::open(std::slice::from_ref(path)).unwrap();
    let f = filter.map(|e| Filter::new(e).unwrap());
    let mut out = Vec::new();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Ok(Message::Event(e)) = m {
            if f.as_ref()
                .is_none_or(|f| f.matches(&EventSubject::new(&e, None)))
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
        ]
        .into_iter()
        .map(|f| (f, dump(&path, f)))
        .collect();
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
    for which in 0..3 {
        check(&ops, which, 25, 100);
        check(&ops, which, 40, 1000);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_scrolls(ops in proptest::collection::vec(op(), 1..12), which in 0usize..2, page in 1usize..50, buffer in 8usize..300) {
        check(&ops, which, page, buffer);
    }
}
