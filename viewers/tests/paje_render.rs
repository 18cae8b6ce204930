//! A Pajé render stays bounded by its rows and width, whatever the number
//! of states, events and links it draws, and carries no property strings
//! per item; its tooltips give each state's and event's properties, made
//! on demand from the data.

use std::fs;

use traceloom_base::TimeRange;
use traceloom_viewers::draw::hit::{tooltip, HitItem};
use traceloom_viewers::lod::MAX_INTERVALS_PER_PIXEL;
use traceloom_viewers::model::controlflow::ARROWS_PER_PIXEL;
use traceloom_viewers::model::paje_analysis::ContainerData;
use traceloom_viewers::model::{PajeData, PajeView};
use traceloom_viewers::time::{format_duration, AbsoluteTimeFormat};
use traceloom_viewers::{Properties, TimeGraphRender};

/// A generated trace of some megabytes: thousands of links of a few
/// types, hundreds of thousands of states.
fn generated() -> PajeData {
    let dir = tempfile::tempdir().unwrap();
    let cfg = traceloom_pajegen::GeneratorConfig {
        max_bytes: 4 << 20,
        ..Default::default()
    };
    let f = dir.path().join("gen.trace");
    traceloom_pajegen::generate(&cfg, fs::File::create(&f).unwrap()).unwrap();
    PajeData::open(&f).unwrap().0
}

fn secs(t: i64) -> String {
    format!("{:.9}", t as f64 / 1e9)
}

/// The container a row belongs to.
fn container_of<'a>(data: &'a PajeData, r: &TimeGraphRender, row: usize) -> &'a ContainerData {
    let id = traceloom_paje::ContainerId((r.tree().rows()[row].id.0 >> 16) as u32);
    &data.containers[data.container_index(id).expect("a container's row")]
}

fn type_name(data: &PajeData, t: traceloom_paje::TypeId) -> &str {
    &data.types[t.0 as usize].name
}

fn value_name(data: &PajeData, v: u32) -> &str {
    &data.values[v as usize].name
}

/// Checks interval `i` of row `row`'s properties against the data: the
/// state of its container, type and level that starts at its start time,
/// with that state's value and duration, and that holds the interval.
/// Returns whether it had properties.
fn check_interval(data: &PajeData, r: &TimeGraphRender, row: usize, i: usize) -> bool {
    let iv = &r.states(row)[i];
    let p = r.interval_properties(row, i);
    if iv.is_mixed() {
        assert!(p.is_empty(), "a merged interval has no properties");
        return false;
    }
    let keys: Vec<&str> = p.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ["container", "type", "value", "level", "start", "duration"]
    );
    let c = container_of(data, r, row);
    assert_eq!(p.get("container"), Some(&*c.name));
    let lane = c
        .lanes
        .iter()
        .find(|l| {
            Some(type_name(data, l.type_id)) == p.get("type")
                && Some(l.level.to_string().as_str()) == p.get("level")
        })
        .expect("the lane the properties name");
    let times: Vec<i64> = lane.times.iter().collect();
    let k = times
        .iter()
        .position(|&t| Some(secs(t).as_str()) == p.get("start"))
        .expect("a state starting when the properties say");
    // Several changes at one time: the last is the one that lasts.
    let k = k + times[k..].iter().take_while(|&&t| t == times[k]).count() - 1;
    let end = times.get(k + 1).copied().unwrap_or(lane.end);
    assert_eq!(p.get("value"), Some(value_name(data, lane.codes.at(k))));
    assert_eq!(p.get("value"), Some(iv.state.as_str()));
    assert_eq!(
        p.get("duration").map(str::to_owned),
        Some(format_duration((end - times[k]) as i128))
    );
    assert!(
        times[k] <= iv.start && iv.end <= end,
        "the interval is the state"
    );
    true
}

/// Checks drawn event `i` of row `row`'s properties against the data: an
/// event of its container, at its time, of the type and value named.
fn check_event(data: &PajeData, r: &TimeGraphRender, row: usize, i: usize) {
    let ev = &r.events(row)[i];
    let p = r.event_properties(row, i);
    let keys: Vec<&str> = p.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["container", "type", "value", "time"]);
    let c = container_of(data, r, row);
    assert_eq!(p.get("container"), Some(&*c.name));
    assert_eq!(p.get("value"), Some(&*ev.name));
    assert_eq!(p.get("time"), Some(secs(ev.time).as_str()));
    let found = c.events.iter().any(|(t, items)| {
        Some(type_name(data, *t)) == p.get("type")
            && items
                .iter()
                .any(|x| x.time == ev.time && value_name(data, x.value) == &*ev.name)
    });
    assert!(found, "no such event: {p:?}");
}

#[test]
fn full_range_render_is_bounded_by_rows_and_width() {
    let data = generated();
    let links: usize = data.links.iter().map(|l| l.items.len()).sum();
    let states: usize = data
        .containers
        .iter()
        .flat_map(|c| &c.lanes)
        .map(|l| l.times.len())
        .sum();
    let width = 120u32;
    let cap = (width as f64 * ARROWS_PER_PIXEL) as usize;
    // Enough of everything that drawing each would break the bounds.
    assert!(links > 4 * cap * data.links.len(), "{links} links");
    let view = PajeView::default();
    let r = data.render(data.span, width, &view);
    let rows = r.tree().len();

    let mut intervals = 0;
    for row in 0..rows {
        let n = r.states(row).len();
        assert!(
            n <= MAX_INTERVALS_PER_PIXEL * width as usize,
            "row {row}: {n}"
        );
        assert!(r.events(row).len() <= width as usize + 1, "row {row}");
        assert!(r.states(row).iter().all(|iv| iv.properties.is_empty()));
        assert!(r.events(row).iter().all(|e| e.properties.is_empty()));
        intervals += n;
    }
    // Fewer intervals than states: merged per pixel column.
    assert!(
        intervals > 0 && states > 2 * intervals,
        "{states} → {intervals}"
    );
    for s in r.arrow_series() {
        assert!(
            s.arrows.len() <= cap,
            "{}: {} arrows",
            s.name,
            s.arrows.len()
        );
        assert!(s.arrows.iter().all(|a| a.properties.is_empty()));
    }
    // Every link stands in the render, sampled arrows counting for the
    // ones left out.
    let counted: u64 = r
        .arrow_series()
        .iter()
        .flat_map(|s| s.arrows.iter())
        .map(|a| u64::from(a.count))
        .sum();
    assert_eq!(counted, links as u64);

    // Zoomed in far enough, every link of the range is drawn.
    let l = &data.links[0];
    let x = l.items.at(l.items.len() / 2);
    let narrow = TimeRange::new(x.start.min(x.end), x.start.max(x.end) + 1);
    let z = data.render(narrow, width, &view);
    let drawn = z.arrow_series().iter().flat_map(|s| s.arrows.iter());
    assert!(drawn
        .clone()
        .any(|a| a.from.time == x.start && a.to.time == x.end));
    assert!(drawn.clone().all(|a| a.count == 1) || drawn.count() >= cap / 2);
}

#[test]
fn tooltips_give_each_state_and_event_its_properties() {
    let data = generated();
    let view = PajeView::default();
    let (a, b) = (data.span.start, data.span.end);
    let mut with_props = 0;
    let mut events = 0;
    // The whole trace, and a tenth of it (more of the states whole).
    for range in [
        data.span,
        TimeRange::new(a + (b - a) / 2, a + (b - a) * 6 / 10),
    ] {
        let r = data.render(range, 400, &view);
        for row in 0..r.tree().len() {
            for i in 0..r.states(row).len() {
                with_props += check_interval(&data, &r, row, i) as usize;
            }
            for i in 0..r.events(row).len() {
                check_event(&data, &r, row, i);
                events += 1;
            }
        }
        // The tooltip lists them, after what the item itself says and
        // before the row's own properties not given yet.
        let row = (0..r.tree().len())
            .find(|&row| r.states(row).iter().any(|iv| !iv.is_mixed()))
            .expect("a state");
        let i = r.states(row).iter().position(|iv| !iv.is_mixed()).unwrap();
        let cfg = data.presentation();
        let item = HitItem::Interval { row, index: i };
        let lines = tooltip(&r, &cfg, &item, AbsoluteTimeFormat::default());
        let p: Properties = r.interval_properties(row, i);
        for (k, v) in p.iter() {
            assert!(
                lines.iter().any(|(lk, lv)| lk == k && lv == v),
                "{k}: {v} not in {lines:?}"
            );
        }
        assert_eq!(lines[0].0, "State");
    }
    assert!(with_props > 1000, "{with_props} states with properties");
    assert!(events > 100, "{events} events");
}

#[test]
fn a_render_given_up_stops_and_the_rows_alone_lay_out_the_same_tree() {
    let data = generated();
    let view = PajeView::default();
    let whole = data.render(data.span, 200, &view);
    let asked = std::cell::Cell::new(0usize);
    let stopped = data.render_until(data.span, 200, &view, || {
        asked.set(asked.get() + 1);
        asked.get() > 10
    });
    assert!(stopped.is_none());
    assert_eq!(asked.get(), 11, "asked once per row until it holds");
    let again = data.render_until(data.span, 200, &view, || false);
    assert!(again.as_ref() == Some(&whole));
    let rows = data.render_tree(data.span, 200, &view);
    assert!(rows.tree() == whole.tree() && rows.tree().len() > 100);
    assert!((0..rows.tree().len()).all(|i| rows.states(i).is_empty() && rows.events(i).is_empty()));
    assert!(rows.arrow_series().is_empty() && rows.counters().is_empty());
}

/// A render for some rows (what the window asks for: the rows in view
/// and a page either side) equals the whole render on those rows —
/// states, events, the variables' counters — and is empty elsewhere; the
/// tree and the links' arrows are whole.
#[test]
fn render_of_some_rows_equals_the_whole_render_there() {
    let data = generated();
    let view = PajeView::default();
    let full = data.span;
    let third = (full.span() / 3) as i64;
    let zoom = TimeRange::new(full.start + third, full.start + third + third / 2);
    for range in [full, zoom] {
        let all = data.render(range, 800, &view);
        let n = all.tree().len();
        assert!(n > 100, "{n} rows");
        assert_eq!(all.materialized(), 0..n);
        assert!(all.arrow_series().iter().any(|a| !a.arrows.is_empty()));
        let row_of = |r: &TimeGraphRender, c: &traceloom_viewers::Counter| {
            c.row.and_then(|id| r.tree().index_of(id))
        };
        for rows in [0..10, n / 2..n / 2 + 37, n - 5..n + 10] {
            let part = data.render_rows(range, 800, &view, Some(rows.clone()));
            let held = rows.start..rows.end.min(n);
            assert_eq!(part.materialized(), held);
            assert!(part.tree() == all.tree());
            assert_eq!(part.arrow_series(), all.arrow_series());
            let (mut states, mut events) = (0, 0);
            for i in 0..n {
                if held.contains(&i) {
                    assert_eq!(part.states(i), all.states(i), "row {i}");
                    assert_eq!(part.events(i), all.events(i), "row {i}");
                    states += part.states(i).len();
                    events += part.events(i).len();
                } else {
                    assert!(part.states(i).is_empty() && part.events(i).is_empty());
                }
            }
            // The counters of the rows held, the same; none elsewhere.
            let mine: Vec<_> = all
                .counters()
                .iter()
                .filter(|c| row_of(&all, c).is_some_and(|i| held.contains(&i)))
                .collect();
            let got: Vec<_> = part.counters().iter().collect();
            assert_eq!(got, mine, "rows {rows:?}");
            assert!(part
                .counters()
                .iter()
                .all(|c| row_of(&part, c).is_some_and(|i| held.contains(&i))));
            if range == full && rows.start > 0 {
                assert!(states > 0 && events > 0, "rows {rows:?} drew nothing");
            }
        }
        // Some rows hold variables: their counters were checked.
        assert!(!all.counters().is_empty());
    }
}
