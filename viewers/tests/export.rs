//! Drawing and export without a display: PNG decodes and shows the
//! intervals where the layout says, SVG is well-formed with labels as text,
//! hit testing finds what is drawn. The demo render is written to
//! `$CARGO_TARGET_TMPDIR/demo.png` (and `.svg`) for people to look at.

use std::path::PathBuf;
use traceloom_base::TimeRange;

use traceloom_viewers::draw::{
    tooltip, CairoMeasure, HitItem, HitPart, LegendKind, StatisticsOptions,
};
use traceloom_viewers::export::{
    render_png, render_svg, render_svg_cairo, ExportError, Figure, HistogramFigure,
    StatisticsFigure, TimeGraphFigure,
};
use traceloom_viewers::render::ArrowEnd;
use traceloom_viewers::style::control_flow as cf;
use traceloom_viewers::{
    Arrow, DataConfig, DrawnEvent, HistogramBuilder, PresentationConfig, Properties, Rgba, RowId,
    StatRow, StatValue, StateInterval, StatisticsRender, TimeGraphRender, TimeGraphRenderBuilder,
    TreeBuilder, TreeNode,
};

const T0: i64 = 1_700_000_000_100_000_000; // 22:13:20.100 UTC
const MS: i64 = 1_000_000;
const US: i64 = 1_000;

fn node(id: u64, parent: Option<u64>, label: &str) -> TreeNode {
    TreeNode {
        id: RowId(id),
        parent: parent.map(RowId),
        label: label.into(),
        properties: Properties::new([("tid", id.to_string())]),
    }
}

/// A small synthetic control-flow render: a few processes and threads,
/// every state of the palette, sub-pixel bursts, wake-up and CPU arrows,
/// events, a CPU-usage counter.
fn demo_render(width_px: u32) -> TimeGraphRender {
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "systemd [1]"))
        .add(node(812, None, "bash [812]"))
        .add(node(3000, None, "firefox [3000]"))
        .add(node(3001, Some(3000), "gmain [3001]"))
        .add(node(3002, Some(3000), "dbus [3002]"))
        .add(node(3005, Some(3000), "Compositor [3005]"))
        .add(node(4711, None, "make [4711]"))
        .add(node(4712, Some(4711), "cc1 [4712]"))
        .add(node(
            90,
            None,
            "kworker/u16:3-events_unbound_with_a_very_long_name [90]",
        ))
        .add(node(9000, None, "page cache"));
    let tree = tb.build(&DataConfig::default());
    let range = TimeRange::new(T0, T0 + 20 * MS);
    let mut b = TimeGraphRenderBuilder::new(tree, range, width_px);
    let idx = |b: &TimeGraphRenderBuilder, id: u64| b.tree().index_of(RowId(id)).unwrap();

    // systemd: mostly blocked.
    let r = idx(&b, 1);
    b.intervals(r)
        .push(T0 - 5 * MS, T0 + 8 * MS, cf::WAIT_BLOCKED);
    b.intervals(r).push(T0 + 8 * MS, T0 + 9 * MS, cf::RUN_USER);
    b.intervals(r).push_interval(
        StateInterval::new(T0 + 9 * MS, T0 + 12 * MS, cf::RUN_SYSCALL)
            .with_label("epoll_wait")
            .with_properties(Properties::new([("syscall", "epoll_wait"), ("cpu", "1")])),
    );
    b.intervals(r)
        .push(T0 + 12 * MS, T0 + 25 * MS, cf::WAIT_BLOCKED);

    // bash: waits for the CPU, runs, syscall, blocked.
    let r = idx(&b, 812);
    b.intervals(r).push(T0, T0 + 2 * MS, cf::WAIT_CPU);
    b.intervals(r).push(T0 + 2 * MS, T0 + 5 * MS, cf::RUN_USER);
    b.intervals(r).push_interval(
        StateInterval::new(T0 + 5 * MS, T0 + 7 * MS, cf::RUN_SYSCALL).with_label("read"),
    );
    b.intervals(r)
        .push(T0 + 7 * MS, T0 + 20 * MS, cf::WAIT_BLOCKED);

    // firefox main thread: a burst of tiny intervals (merged), then IRQ and
    // softirq.
    let r = idx(&b, 3000);
    let mut t = T0;
    let mut k = 0;
    while t < T0 + 6 * MS {
        let (state, d) = match k % 3 {
            0 => (cf::RUN_USER, 3 * US),
            1 => (cf::RUN_SYSCALL, 2 * US),
            _ => (cf::WAIT_CPU, US),
        };
        b.intervals(r).push(t, t + d, state);
        t += d;
        k += 1;
    }
    b.intervals(r).push(t, T0 + 7 * MS, cf::RUN_USER);
    b.intervals(r).push(T0 + 7 * MS, T0 + 8 * MS, cf::RUN_IRQ);
    b.intervals(r)
        .push(T0 + 8 * MS, T0 + 10 * MS, cf::RUN_SOFTIRQ);
    b.intervals(r)
        .push(T0 + 10 * MS, T0 + 20 * MS, cf::RUN_USER);

    let r = idx(&b, 3001);
    b.intervals(r).push(T0, T0 + 10 * MS, cf::WAIT_BLOCKED);
    b.intervals(r)
        .push(T0 + 10 * MS, T0 + 11 * MS, cf::WAIT_CPU);
    b.intervals(r)
        .push(T0 + 11 * MS, T0 + 14 * MS, cf::RUN_TRAP);
    b.intervals(r)
        .push(T0 + 14 * MS, T0 + 20 * MS, cf::RUN_USER);

    let r = idx(&b, 3002);
    b.intervals(r).push(T0 + 3 * MS, T0 + 4 * MS, cf::WAIT_FORK);
    b.intervals(r)
        .push(T0 + 4 * MS, T0 + 9 * MS, cf::RUN_UNKNOWN);
    b.intervals(r).push(T0 + 9 * MS, T0 + 10 * MS, cf::EXIT);
    b.intervals(r).push(T0 + 10 * MS, T0 + 14 * MS, cf::ZOMBIE);
    b.intervals(r).push(T0 + 14 * MS, T0 + 15 * MS, cf::DEAD);

    let r = idx(&b, 3005);
    b.intervals(r).push(T0, T0 + 20 * MS, cf::UNNAMED);

    let r = idx(&b, 4711);
    b.intervals(r).push(T0, T0 + 12 * MS, cf::WAIT_BLOCKED);
    b.intervals(r)
        .push(T0 + 12 * MS, T0 + 20 * MS, cf::RUN_SYSCALL);
    let r = idx(&b, 4712);
    b.intervals(r).push(T0, T0 + 20 * MS, cf::RUN_USER);
    let r = idx(&b, 90);
    b.intervals(r).push(T0, T0 + 16 * MS, cf::WAIT_BLOCKED);
    b.intervals(r)
        .push(T0 + 16 * MS, T0 + 18 * MS, cf::RUN_SYSCALL);
    b.intervals(r)
        .push(T0 + 18 * MS, T0 + 20 * MS, "kworker-flush");

    // Events.
    let r = idx(&b, 812);
    b.events(r).push(
        DrawnEvent::new(T0 + 2 * MS, "sched_wakeup", cf::EV_WAKEUP)
            .with_properties(Properties::new([("waker", "systemd")])),
    );
    let r = idx(&b, 3002);
    b.events(r).push(DrawnEvent::new(
        T0 + 3 * MS,
        "sched_process_fork",
        cf::EV_FORK,
    ));
    b.events(r).push(DrawnEvent::new(
        T0 + 9 * MS,
        "sched_process_exit",
        cf::EV_EXIT,
    ));
    let r = idx(&b, 4712);
    b.events(r)
        .push(DrawnEvent::new(T0 + MS, "sched_process_exec", cf::EV_EXEC));
    for k in 0..50 {
        b.events(r).push(DrawnEvent::new(
            T0 + 15 * MS + k * 100,
            "lttng_ust:mark",
            cf::EV_MARK,
        ));
    }

    // Arrows: wake-ups, CPU hand-overs, one coming from before the range.
    b.arrows(cf::ARROWS_WAKEUP).push(Arrow::new(
        RowId(1),
        T0 + 2 * MS - 200 * US,
        RowId(812),
        T0 + 2 * MS,
    ));
    b.arrows(cf::ARROWS_WAKEUP).push(Arrow::new(
        RowId(3000),
        T0 + 10 * MS,
        RowId(3001),
        T0 + 10 * MS + 400 * US,
    ));
    b.arrows(cf::ARROWS_CPU).push(Arrow::new(
        RowId(812),
        T0 + 7 * MS,
        RowId(3000),
        T0 + 7 * MS,
    ));
    b.arrows(cf::ARROWS_CPU).push(Arrow::new(
        RowId(3001),
        T0 + 14 * MS,
        RowId(4711),
        T0 + 14 * MS + 50 * US,
    ));
    b.arrows(cf::ARROWS_CPU)
        .push(Arrow::new(RowId(90), T0 - 3 * MS, RowId(4712), T0 + 3 * MS));

    // Page cache size, drawn in its tree row (a Pajé variable's container).
    let c = b.counter("page-cache", Some(RowId(9000)));
    c.push(T0 - MS, 100.0);
    for k in 0..200 {
        c.push(T0 + k * 100 * US, 100.0 + (k / 10) as f64 * 7.0);
    }

    // CPU usage, a chart row of its own.
    let c = b.counter("cpu-usage", None);
    for k in 0..=40 {
        let v = 50.0 + 40.0 * ((k as f64) / 4.0).sin();
        c.push(T0 + k * MS / 2, v.round());
    }
    b.build()
}

fn demo_config() -> PresentationConfig {
    let mut c = PresentationConfig::control_flow();
    c.counters.set(
        "cpu-usage",
        traceloom_viewers::style::CounterStyle {
            label: "CPU usage (%)".into(),
            color: Rgba::rgb(0x4e, 0x79, 0xa7),
        },
    );
    c
}

fn demo_figure<'a>(
    render: &'a TimeGraphRender,
    config: &'a PresentationConfig,
) -> TimeGraphFigure<'a> {
    let mut f = TimeGraphFigure::new(render, config);
    f.options.title = Some("Process".into());
    f.options.current_time = Some(T0 + 13 * MS);
    f.options.selection = Some(TimeRange::new(T0 + 15 * MS, T0 + 17 * MS));
    f.options.selected_row = Some(RowId(3001));
    f
}

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

struct Decoded {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

impl Decoded {
    fn pixel(&self, x: u32, y: u32) -> Rgba {
        let i = ((y * self.width + x) * 4) as usize;
        Rgba::translucent(
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        )
    }
}

fn decode(bytes: &[u8]) -> Decoded {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = dec.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    Decoded {
        width: info.width,
        height: info.height,
        rgba: buf,
    }
}

#[test]
fn demo_png_shows_intervals_where_the_layout_says() {
    let render = demo_render(1000);
    let config = demo_config();
    let fig = demo_figure(&render, &config);
    let bytes = render_png(&fig, 1000, None).unwrap();
    std::fs::write(out_dir().join("demo.png"), &bytes).unwrap();
    let img = decode(&bytes);
    assert_eq!(img.width, 1000);
    let m = CairoMeasure::new().unwrap();
    let natural = fig.natural_height(1000.0, &m).ceil() as u32;
    assert_eq!(img.height, natural);
    let layout = fig.layout(1000.0, natural as f64, &m);

    // Every plain interval's colour is at its centre, in every row.
    let mut checked = 0;
    for row in 0..render.tree().len() {
        for iv in render.states(row) {
            if iv.is_mixed() {
                continue;
            }
            let Some((x1, x2)) = layout.interval_x(iv.start, iv.end) else {
                continue;
            };
            if x2 - x1 < 8.0 {
                continue;
            }
            let (y, h) = layout.row_band(row);
            // Away from labels, arrows, events and the markers.
            let x = ((x1 + x2) / 2.0).floor() as u32;
            // Arrows may cross the bar: skip those columns.
            let crossed = render.arrow_series().iter().any(|s| {
                s.arrows.iter().any(|a| {
                    let (ax1, ax2) = (layout.xmap.x(a.from.time), layout.xmap.x(a.to.time));
                    ax1.min(ax2) - 8.0 <= x as f64 && x as f64 <= ax1.max(ax2) + 8.0
                })
            });
            if crossed {
                continue;
            }
            // One pixel below the bar's top: above labels and markers.
            let (top, _) = layout.bar(y, h, config.state(&iv.state).style.height);
            let py = (top + 1.0) as u32;
            let px = img.pixel(x, py);
            let want = config.state(&iv.state).style.color;
            let sel = TimeRange::new(T0 + 15 * MS, T0 + 17 * MS);
            let t = layout.xmap.time(x as f64);
            if sel.contains(t) || t.abs_diff(T0 + 13 * MS) < (100 * US) as u64 {
                // Under the translucent selection or the current-time line.
                assert_ne!(px, config.background);
                continue;
            }
            assert_eq!(px, want, "row {row} {:?} at ({x}, {py})", iv.state);
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} intervals checked");

    // The background stays the background where nothing is drawn: the
    // dead thread after its death (row of dbus, end of the range).
    let dbus = render.tree().index_of(RowId(3002)).unwrap();
    let (y, h) = layout.row_band(dbus);
    let x = layout.xmap.x(T0 + 19 * MS) as u32;
    let bg = img.pixel(x, (y + h / 2.0) as u32);
    assert!(bg == config.background || bg == config.zebra, "{bg:?}");
}

fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").to_string())
        .collect()
}

#[test]
fn svg_is_well_formed_with_labels_as_text() {
    let render = demo_render(1000);
    let config = demo_config();
    let mut fig = demo_figure(&render, &config);
    fig.options.tree_width = Some(260.0);
    let svg = render_svg(&fig, 1000, None).unwrap();
    std::fs::write(out_dir().join("demo.svg"), &svg).unwrap();
    let texts = svg_texts(&svg);
    for label in [
        "systemd [1]",
        "bash [812]",
        "gmain [3001]",
        "Process",
        "user",
        "blocked",
        "wait for CPU",
        "wake-up",
        "CPU execution flow",
        "CPU usage (%)",
        "epoll_wait",
        "States:",
        "Counters:",
        "page-cache",
        "22:13:20.100",
    ] {
        assert!(
            texts.iter().any(|t| t == label),
            "{label:?} missing from {texts:?}"
        );
    }
    // The long label is elided to the tree column.
    assert!(texts
        .iter()
        .any(|t| t.starts_with("kworker/u16:3") && t.ends_with('…')));
    assert!(texts
        .iter()
        .any(|t| t.starts_with('+') && t.ends_with(" ms")));
    // Unknown state keys get a legend entry named after the key.
    assert!(texts.iter().any(|t| t == "kworker-flush"));
}

#[test]
fn svg_escapes_what_xml_needs() {
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "a<b>&\"c\" \u{1}"));
    let tree = tb.build(&DataConfig::default());
    let mut b = TimeGraphRenderBuilder::new(tree, TimeRange::new(0, 1000), 100);
    b.intervals(0).push(0, 1000, "<&>");
    let render = b.build();
    let config = PresentationConfig::control_flow();
    let svg = render_svg(&TimeGraphFigure::new(&render, &config), 400, None).unwrap();
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().any(|t| t == "a<b>&\"c\" \u{FFFD}"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "<&>"));
}

#[test]
fn cairo_svg_surface_is_well_formed_too() {
    let render = demo_render(600);
    let config = demo_config();
    let bytes = render_svg_cairo(&demo_figure(&render, &config), 600, Some(400)).unwrap();
    let s = String::from_utf8(bytes).unwrap();
    std::fs::write(out_dir().join("demo-cairo.svg"), &s).unwrap();
    let doc = roxmltree::Document::parse(&s).expect("well-formed");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    // Cairo draws rectangles for the intervals.
    assert!(doc.descendants().filter(|n| n.has_tag_name("path")).count() > 20);
}

#[test]
fn hit_testing_finds_what_is_drawn() {
    let render = demo_render(1000);
    let config = demo_config();
    let fig = demo_figure(&render, &config);
    let m = CairoMeasure::new().unwrap();
    let h = fig.natural_height(1000.0, &m);
    let l = fig.layout(1000.0, h, &m);

    // An interval: systemd's syscall.
    let row = render.tree().index_of(RowId(1)).unwrap();
    let x = l.xmap.x(T0 + 10 * MS);
    let hit = l.hit(&render, x, l.row_center(row));
    assert_eq!(hit.part, HitPart::Graph);
    assert_eq!(hit.row_id, Some(RowId(1)));
    let Some(HitItem::Interval { row: r, index }) = hit.item else {
        panic!("{hit:?}");
    };
    assert_eq!(render.states(r)[index].state.as_str(), cf::RUN_SYSCALL);
    let tip = tooltip(
        &render,
        &config,
        hit.item.as_ref().unwrap(),
        Default::default(),
    );
    assert!(tip.contains(&("State".into(), "syscall".into())));
    assert!(tip.contains(&("Duration".into(), "3 ms".into())));
    assert!(tip.contains(&("syscall".into(), "epoll_wait".into())));
    // The row's properties follow the interval's own.
    assert!(tip.contains(&("tid".into(), "1".into())), "{tip:?}");

    // A merged interval says so.
    let ff = render.tree().index_of(RowId(3000)).unwrap();
    let hit = l.hit(&render, l.xmap.x(T0 + 3 * MS), l.row_center(ff) + 3.0);
    let item = hit.item.expect("merged interval");
    let tip = tooltip(&render, &config, &item, Default::default());
    assert!(tip.iter().any(|(k, _)| k == "Merged"), "{tip:?}");

    // An event: the exec marker of cc1.
    let cc1 = render.tree().index_of(RowId(4712)).unwrap();
    let hit = l.hit(&render, l.xmap.x(T0 + MS) + 1.0, l.row_center(cc1));
    assert!(matches!(hit.item, Some(HitItem::Event { .. })), "{hit:?}");
    let tip = tooltip(
        &render,
        &config,
        hit.item.as_ref().unwrap(),
        Default::default(),
    );
    assert!(tip.contains(&("Event".into(), "sched_process_exec".into())));
    // The burst of marks collapsed into a few markers with counts.
    let marks: u32 = render.events(cc1).iter().skip(1).map(|e| e.count).sum();
    assert_eq!(marks, 50);
    assert!(render.events(cc1).len() < 10);

    // An arrow: the wake-up of gmain, at its middle.
    let s = render
        .arrow_series()
        .iter()
        .position(|s| s.name.as_str() == cf::ARROWS_WAKEUP)
        .unwrap();
    let a = &render.arrow_series()[s].arrows[1];
    let ArrowEnd {
        row: from,
        time: t1,
    } = a.from;
    let ArrowEnd { row: to, time: t2 } = a.to;
    let (x1, y1) = (
        l.xmap.x(t1),
        l.row_center(render.tree().index_of(from).unwrap()),
    );
    let (x2, y2) = (
        l.xmap.x(t2),
        l.row_center(render.tree().index_of(to).unwrap()),
    );
    let hit = l.hit(&render, (x1 + x2) / 2.0, (y1 + y2) / 2.0);
    assert_eq!(
        hit.item,
        Some(HitItem::Arrow {
            series: s,
            index: 1
        })
    );

    // The counter row.
    let crow = l.tree_rows;
    let cpu = render
        .counters()
        .iter()
        .position(|c| c.name.as_str() == "cpu-usage")
        .unwrap();
    let hit = l.hit(&render, l.xmap.x(T0 + 5 * MS + 10), l.row_center(crow));
    assert!(
        matches!(hit.item, Some(HitItem::Counter { counter, .. }) if counter == cpu),
        "{hit:?}"
    );

    // A counter drawn in a tree row.
    let pc = render.tree().index_of(RowId(9000)).unwrap();
    let hit = l.hit(&render, l.xmap.x(T0 + 5 * MS), l.row_center(pc));
    let Some(item @ HitItem::Counter { counter, .. }) = hit.item else {
        panic!("{hit:?}");
    };
    assert_eq!(render.counters()[counter].name.as_str(), "page-cache");
    let tip = tooltip(&render, &config, &item, Default::default());
    assert!(tip.contains(&("Value".into(), "135".into())), "{tip:?}");

    // Tree, axis, legend.
    let hit = l.hit(&render, 10.0, l.row_center(row));
    assert_eq!((hit.part, hit.row_id), (HitPart::Tree, Some(RowId(1))));
    let hit = l.hit(&render, l.xmap.x(T0 + 5 * MS), 5.0);
    assert_eq!(hit.part, HitPart::Axis);
    assert!(hit.time.unwrap().abs_diff(T0 + 5 * MS) < (50 * US) as u64);
    let item = l
        .legend_items
        .iter()
        .find(|i| matches!(i.kind, LegendKind::State(_)))
        .unwrap();
    let hit = l.hit(&render, item.rect.x + 2.0, item.rect.mid_y());
    assert!(
        matches!(hit.part, HitPart::Legend(Some(LegendKind::State(_)))),
        "{hit:?}"
    );
    assert_eq!(l.hit(&render, -1.0, 5.0).part, HitPart::Outside);

    // The expander of firefox (which has threads), not its label.
    let ff = render.tree().index_of(RowId(3000)).unwrap();
    assert_eq!(
        l.expander_at(&render, 8.0, l.row_center(ff)),
        Some(RowId(3000))
    );
    assert_eq!(l.expander_at(&render, 80.0, l.row_center(ff)), None);
    assert_eq!(l.expander_at(&render, 8.0, l.row_center(row)), None);
}

/// The window's legend: one line, the same entries whatever the render
/// uses, so that it never reflows as the pass meets new states.
#[test]
fn one_line_legend_does_not_depend_on_the_data() {
    let config = demo_config();
    let full = demo_render(1000);
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "idle"));
    let empty = TimeGraphRenderBuilder::new(
        tb.build(&DataConfig::default()),
        TimeRange::new(T0, T0 + MS),
        1000,
    )
    .build();
    let m = CairoMeasure::new().unwrap();
    let layout = |render: &TimeGraphRender, width: f64| {
        let mut f = demo_figure(render, &config);
        f.options.legend_one_line = true;
        f.layout(width, 600.0, &m)
    };
    for width in [600.0, 1366.0, 1920.0] {
        let (a, b) = (layout(&full, width), layout(&empty, width));
        let labels = |l: &traceloom_viewers::draw::TimeGraphLayout| {
            l.legend_items
                .iter()
                .map(|i| i.label.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(&a), labels(&b), "at {width} px");
        assert!(a.legend_items.len() > 3, "at {width} px");
        let y = a.legend_items[0].rect.y;
        assert!(a
            .legend_items
            .iter()
            .all(|i| i.rect.y == y && i.rect.right() <= width));
        assert_eq!(a.legend, b.legend);
    }
}

#[test]
fn a_million_intervals_stay_a_few_per_pixel() {
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "busy"));
    let tree = tb.build(&DataConfig::default());
    let mut b = TimeGraphRenderBuilder::new(tree, TimeRange::new(0, 10_000_000), 800);
    let states = [cf::RUN_USER, cf::RUN_SYSCALL, cf::WAIT_CPU];
    let keys: Vec<_> = states
        .iter()
        .map(|s| traceloom_viewers::StyleKey::from(*s))
        .collect();
    for i in 0..1_000_000i64 {
        b.intervals(0)
            .push(i * 10, i * 10 + 10, keys[(i % 3) as usize].clone());
    }
    let render = b.build();
    assert!(
        render.states(0).len() <= 3 * 800,
        "{}",
        render.states(0).len()
    );
    let merged: u64 = render.states(0).iter().map(|i| i.merged as u64).sum();
    assert_eq!(merged, 1_000_000);
    let png = render_png(
        &TimeGraphFigure::new(&render, &PresentationConfig::control_flow()),
        800,
        None,
    )
    .unwrap();
    assert_eq!(decode(&png).width, 800);
}

#[test]
fn histogram_exports() {
    let range = TimeRange::new(T0, T0 + 100 * MS);
    let mut b = HistogramBuilder::new(range, 200);
    for k in 0..20_000i64 {
        // A bump in the middle.
        let t = T0 + (k * 5 * US) % (100 * MS);
        b.add(t);
        if (40 * MS..60 * MS).contains(&(t - T0)) {
            b.add_count(t, 3);
        }
    }
    b.add_lost(T0 + 70 * MS, 1234);
    let h = b.build(Some(TimeRange::new(T0 + 20 * MS, T0 + 30 * MS)));
    let config = PresentationConfig::control_flow();
    let fig = HistogramFigure::new(&h, &config);
    let png = render_png(&fig, 900, None).unwrap();
    std::fs::write(out_dir().join("histogram.png"), &png).unwrap();
    let img = decode(&png);
    assert_eq!(img.width, 900);
    let svg = render_svg(&fig, 900, Some(300)).unwrap();
    let texts = svg_texts(&svg);
    assert!(texts.iter().any(|t| t.contains("lost events")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.starts_with("22:13:20.1")),
        "{texts:?}"
    );

    // A bar of the bump is drawn in the bar colour.
    let m = CairoMeasure::new().unwrap();
    let l = traceloom_viewers::draw::HistogramLayout::compute(
        &h,
        &fig.options,
        900.0,
        img.height as f64,
        &m,
    );
    let x = l.xmap.x(T0 + 45 * MS) as u32;
    let y = (l.plot.bottom() - 4.0) as u32;
    assert_eq!(img.pixel(x, y), config.histogram_bar);
    assert_eq!(l.bin_at(&h, l.xmap.x(T0 + 45 * MS) + 0.5), Some(90));

    // Lined up with other views: the plot spans what it is given, the
    // count scale takes the rest on the left; what the labels ask for is
    // still told.
    let mut lined_up = fig.options.clone();
    lined_up.plot_span = Some((150.0, 880.0));
    let a = traceloom_viewers::draw::HistogramLayout::compute(&h, &lined_up, 900.0, 300.0, &m);
    assert_eq!((a.plot.x, a.plot.right()), (150.0, 880.0));
    assert_eq!((a.scale.w, a.xmap.x0, a.xmap.width), (150.0, 150.0, 730.0));
    assert_eq!(a.fitted_scale_w, l.fitted_scale_w);
    assert_eq!(l.plot.x, l.fitted_scale_w);
}

#[test]
fn statistics_export() {
    let stats = StatisticsRender::from_rows(
        "Name",
        vec![
            "Events".to_string(),
            "CPU time".to_string(),
            "Share".to_string(),
        ],
        vec![
            StatRow {
                depth: 0,
                label: "trace kernel".into(),
                values: vec![
                    StatValue::Count(1_234_567),
                    StatValue::Duration(2_500_000_000),
                    StatValue::Percent(100.0),
                ],
            },
            StatRow {
                depth: 1,
                label: "CPU 0".into(),
                values: vec![
                    StatValue::Count(600_000),
                    StatValue::Duration(1_200_000_000),
                    StatValue::Empty,
                ],
            },
            StatRow {
                depth: 2,
                label: "sched_switch".into(),
                values: vec![
                    StatValue::Count(12_000),
                    StatValue::Empty,
                    StatValue::Text("n/a".into()),
                ],
            },
        ],
    );
    let config = PresentationConfig::control_flow();
    let mut fig = StatisticsFigure::new(&stats, &config);
    fig.options = StatisticsOptions {
        font_size: 13.0,
        ..Default::default()
    };
    let png = render_png(&fig, 700, None).unwrap();
    std::fs::write(out_dir().join("statistics.png"), &png).unwrap();
    assert_eq!(decode(&png).width, 700);
    let texts = svg_texts(&render_svg(&fig, 700, None).unwrap());
    for want in [
        "trace kernel",
        "CPU 0",
        "sched_switch",
        "1,234,567",
        "2.5 s",
        "100.0 %",
        "Events",
    ] {
        assert!(texts.iter().any(|t| t == want), "{want} missing: {texts:?}");
    }
}

#[test]
fn bad_sizes_are_errors() {
    let render = demo_render(100);
    let config = demo_config();
    let fig = TimeGraphFigure::new(&render, &config);
    assert!(matches!(
        render_png(&fig, 0, Some(10)),
        Err(ExportError::Size(0, 10))
    ));
    assert!(matches!(
        render_svg(&fig, 40_000, Some(10)),
        Err(ExportError::Size(..))
    ));
    let err = traceloom_viewers::export::export_png(
        &fig,
        100,
        Some(100),
        std::path::Path::new("/nonexistent/x.png"),
    )
    .unwrap_err();
    assert!(
        matches!(&err, ExportError::Io { path, .. } if path == std::path::Path::new("/nonexistent/x.png")),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some(), "{err}");
}

#[test]
fn scrolled_and_rezoomed_layouts_map_consistently() {
    let render = demo_render(1000);
    let config = demo_config();
    let mut fig = TimeGraphFigure::new(&render, &config);
    fig.options.scroll_y = 2.0 * fig.options.row_height;
    fig.options.view_range = Some(TimeRange::new(T0 + 5 * MS, T0 + 10 * MS));
    fig.options.legend = false;
    let m = CairoMeasure::new().unwrap();
    let l = fig.layout(800.0, 200.0, &m);
    // The first visible row is the third one.
    let hit = l.hit(&render, l.graph.x + 5.0, l.graph.y + 3.0);
    assert_eq!(hit.row, Some(2));
    assert_eq!(hit.row_id, Some(render.tree().rows()[2].id));
    // The graph spans the view range, not the render's.
    assert_eq!(l.xmap.time(l.graph.x), T0 + 5 * MS);
    assert_eq!(l.xmap.time(l.graph.right()), T0 + 10 * MS);
    // Rows scrolled above the region are not hit.
    assert_eq!(l.row_at(l.graph.y - 1.0), None);
    // Drawing a render over another range is fine (the GUI does it while
    // the new render is being made).
    let png = render_png(&fig, 800, Some(200)).unwrap();
    let img = decode(&png);
    assert_eq!((img.width, img.height), (800, 200));
    // bash (row 1) is scrolled out; firefox (row 2) is the first row: its
    // IRQ interval (7–8 ms) is drawn at the top of the rows region.
    let (y, h) = l.row_band(2);
    let (top, _) = l.bar(y, h, 1.0);
    let x = l.xmap.x(T0 + 7 * MS + 500 * US) as u32;
    assert_eq!(
        img.pixel(x, top as u32 + 1),
        config.state(cf::RUN_IRQ).style.color
    );
}

#[test]
fn narrow_exports_keep_axis_labels_apart() {
    use traceloom_viewers::draw::{Font, TextMeasure};
    let render = demo_render(400);
    let config = demo_config();
    let m = CairoMeasure::new().unwrap();
    for width in [320u32, 420, 640, 1500] {
        let fig = demo_figure(&render, &config);
        let svg = render_svg(&fig, width, None).unwrap();
        std::fs::write(out_dir().join(format!("demo-{width}.svg")), &svg).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let mut labels: Vec<(f64, f64, String)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| {
                let t = n.text()?;
                t.starts_with('+').then(|| {
                    let x: f64 = n.attribute("x").unwrap().parse().unwrap();
                    (x, m.text_width(t, Font::regular(12.0)), t.to_string())
                })
            })
            .collect();
        assert!(labels.len() >= 2, "{width}: {labels:?}");
        labels.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in labels.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "{width}: {w:?} overlap");
        }
        let last = labels.last().unwrap();
        assert!(last.0 + last.1 <= width as f64, "{width}: {last:?} clipped");
        // The tree column never takes more than 40 % of the width.
        let l = fig.layout(width as f64, 300.0, &m);
        assert!(
            l.tree.w <= (width as f64 * 0.4).max(60.0),
            "{width}: {}",
            l.tree.w
        );
    }
}

/// A mixed interval is as high as its drawn share: an IRQ line busy a
/// tenth of the time is a low bar with the background above it, a row
/// drawn throughout a full one.
#[test]
fn mixed_intervals_are_as_high_as_their_drawn_share() {
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "sparse")).add(node(2, None, "full"));
    let tree = tb.build(&DataConfig::default());
    let range = TimeRange::new(T0, T0 + 20 * MS);
    let mut b = TimeGraphRenderBuilder::new(tree, range, 400);
    let mixed = |covered: u64| StateInterval {
        merged: 500,
        covered,
        ..StateInterval::new(T0, T0 + 20 * MS, cf::RUN_USER)
    };
    b.intervals(0).push_interval(mixed(2 * MS as u64));
    b.intervals(1).push_interval(mixed(20 * MS as u64));
    let render = b.build();
    let config = demo_config();
    let fig = TimeGraphFigure::new(&render, &config);
    let bytes = render_png(&fig, 400, None).unwrap();
    let img = decode(&bytes);
    let m = CairoMeasure::new().unwrap();
    let layout = fig.layout(400.0, img.height as f64, &m);
    let want = config.state(cf::RUN_USER).style.color;
    let x = (layout.xmap.x(T0 + 10 * MS)).floor() as u32;
    let column = |row: usize| {
        let (y, h) = layout.row_band(row);
        let (top, bh) = layout.bar(y, h, config.state(cf::RUN_USER).style.height);
        let filled: Vec<bool> = (top.ceil() as u32..(top + bh).floor() as u32)
            .map(|py| img.pixel(x, py) == want)
            .collect();
        filled
    };
    let sparse = column(0);
    let full = column(1);
    assert!(
        full.len() >= 8 && full.iter().all(|&f| f),
        "full row {full:?}"
    );
    let n = sparse.iter().filter(|&&f| f).count();
    assert!(
        (1..=3).contains(&n) && *sparse.last().unwrap() && !sparse[0],
        "the sparse row's bar fills {n} of {} px from the bottom: {sparse:?}",
        sparse.len()
    );
}

/// Wake-ups every other pixel column of a row are drawn a symbol's width
/// apart, not piled up (hundreds of overlapping outlines turned a busy
/// thread's bar dark at full range); a fork among them still is drawn:
/// symbols are thinned per kind.
#[test]
fn dense_event_symbols_do_not_pile_up() {
    let mut tb = TreeBuilder::new();
    tb.add(node(1, None, "busy"));
    tb.add(node(2, None, "quiet"));
    let tree = tb.build(&DataConfig::default());
    let range = TimeRange::new(T0, T0 + 400 * US);
    let mut b = TimeGraphRenderBuilder::new(tree, range, 400);
    b.intervals(0).push(T0, T0 + 400 * US, cf::WAIT_CPU);
    b.intervals(1).push(T0, T0 + 400 * US, cf::WAIT_BLOCKED);
    // A wake-up every other pixel column, a fork in a column between.
    for k in 0..200 {
        let (t, name, kind) = if k == 100 {
            (T0 + 201 * US + US / 2, "sched_process_fork", cf::EV_FORK)
        } else {
            (T0 + 2 * k * US + US / 2, "sched_wakeup", cf::EV_WAKEUP)
        };
        b.events(0).push(DrawnEvent::new(t, name, kind));
    }
    // Ten wake-ups 30 columns apart: each its own symbol.
    for k in 0..10 {
        let t = T0 + (30 * k + 20) * US + US / 2;
        b.events(1)
            .push(DrawnEvent::new(t, "sched_wakeup", cf::EV_WAKEUP));
    }
    let render = b.build();
    assert_eq!(render.events(0).len(), 200);
    let config = demo_config();
    let svg = render_svg(&TimeGraphFigure::new(&render, &config), 400, None).unwrap();
    let events = &svg[svg.find("<g class=\"events\"").expect("an events group")..];
    let events = &events[..events.find("</g>").expect("the group's end")];
    let symbols = events.matches("<path").count() + events.matches("<polygon").count();
    // The busy row: the first wake-up, the fork, and a line along the
    // run to the last wake-up; the quiet row: ten symbols.
    assert_eq!(symbols, 12, "{symbols} symbols for 210 events: {events}");
    let lines: Vec<f64> = events
        .split("<line")
        .skip(1)
        .map(|l| {
            let attr = |name: &str| -> f64 {
                let v = &l[l.find(&format!("{name}=\"")).expect("an attribute") + name.len() + 2..];
                v[..v.find('"').expect("a value")]
                    .parse()
                    .expect("a number")
            };
            attr("x2") - attr("x1")
        })
        .collect();
    assert!(
        lines.len() == 1 && lines[0] > 300.0,
        "one run line across the row: {lines:?}"
    );
    let fork = config.event(cf::EV_FORK).style.color;
    let fork_hex = format!("#{:02x}{:02x}{:02x}", fork.r, fork.g, fork.b);
    assert!(events.contains(&fork_hex), "no fork symbol in {events}");
}
