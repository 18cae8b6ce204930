//! Drawing of a [`TimeGraphRender`]: time axis, tree column, state rows,
//! drawn events, arrows, counters, current time, selection, legend.

use super::axis::{axis_height, draw_axis};
use super::canvas::{elide, Anchor, CairoCanvas, Canvas, Font, Rect, Stroke, TextMeasure};
use crate::render::{Counter, RowId, StyleKey, TimeGraphRender};
use crate::style::{PresentationConfig, Rgba, NO_DATA};
use crate::time::{AbsoluteTimeFormat, XMap};
use traceloom_base::Time;
use traceloom_base::TimeRange;

/// How to draw a time graph (what is not in the render nor the presentation
/// configuration: sizes, scrolling, the GUI's current time and selection).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeGraphOptions {
    /// Text size in pixels.
    pub font_size: f64,
    /// Height of a tree row.
    pub row_height: f64,
    /// Height of a counter's own row.
    pub counter_row_height: f64,
    /// Width of the tree column; `None` fits the labels (up to 40 % of the
    /// width).
    pub tree_width: Option<f64>,
    /// Vertical scroll of the rows, in pixels.
    pub scroll_y: f64,
    /// Time range to draw instead of the render's own (e.g. the new range
    /// while the model makes its render, as the proposal suggests).
    pub view_range: Option<TimeRange>,
    /// Current time marker.
    pub current_time: Option<Time>,
    /// Selected time range.
    pub selection: Option<TimeRange>,
    /// Highlighted row.
    pub selected_row: Option<RowId>,
    /// Draw the legend below the rows.
    pub legend: bool,
    /// Keep the legend on one line whose content does not depend on the
    /// data (every configured state, event and arrow series, then those
    /// met that the configuration does not know), dropping what does not
    /// fit: a window's legend that never reflows nor pushes the rows down
    /// as the pass meets new states. Off, the legend lists what the render
    /// uses, wrapped (exports).
    pub legend_one_line: bool,
    /// Title above the tree column (e.g. "Process").
    pub title: Option<String>,
    /// How absolute times are written.
    pub time_format: AbsoluteTimeFormat,
    /// Draw interval labels (syscall names...) inside bars wide enough.
    pub interval_labels: bool,
}

impl Default for TimeGraphOptions {
    fn default() -> Self {
        TimeGraphOptions {
            font_size: 12.0,
            row_height: 20.0,
            counter_row_height: 44.0,
            tree_width: None,
            scroll_y: 0.0,
            view_range: None,
            current_time: None,
            selection: None,
            selected_row: None,
            legend: true,
            legend_one_line: false,
            title: None,
            time_format: AbsoluteTimeFormat::default(),
            interval_labels: true,
        }
    }
}

/// What a legend entry shows.
#[derive(Debug, Clone, PartialEq)]
pub enum LegendKind {
    /// A group title ("States", "Events", "Arrows").
    Heading,
    /// A state colour.
    State(StyleKey),
    /// The mark of merged intervals.
    Mixed,
    /// An event symbol.
    Event(StyleKey),
    /// An arrow series.
    Arrows(StyleKey),
    /// A counter drawn inside tree rows.
    Counter(StyleKey),
}

/// A placed legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendItem {
    /// What it shows.
    pub kind: LegendKind,
    /// Its text.
    pub label: String,
    /// Where it is.
    pub rect: Rect,
}

/// Where everything of a time graph goes for a given size. Computed by the
/// drawing functions (which return it) and used for hit testing.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeGraphLayout {
    /// Whole width.
    pub width: f64,
    /// Whole height.
    pub height: f64,
    /// Above the tree column, left of the axis.
    pub header: Rect,
    /// The time axis, above the graph.
    pub axis: Rect,
    /// The tree column (rows region).
    pub tree: Rect,
    /// The graph (rows region).
    pub graph: Rect,
    /// The legend, if drawn.
    pub legend: Option<Rect>,
    /// Placed legend entries.
    pub legend_items: Vec<LegendItem>,
    /// Height of tree rows.
    pub row_height: f64,
    /// Height of counter rows.
    pub counter_row_height: f64,
    /// Vertical scroll.
    pub scroll_y: f64,
    /// Time → x of the graph.
    pub xmap: XMap,
    /// Number of tree rows.
    pub tree_rows: usize,
    /// Counters drawn on rows of their own (indices into
    /// [`TimeGraphRender::counters`]), below the tree rows.
    pub counter_rows: Vec<usize>,
    /// Text size.
    pub font_size: f64,
    /// Width the tree column's labels ask for (what it is when
    /// [`TimeGraphOptions::tree_width`] is `None`): a window aligns the
    /// time axes of its graphs by giving each the widest.
    pub fitted_tree_w: f64,
}

impl TimeGraphLayout {
    /// Lays out `render` in `width × height`.
    pub fn compute(
        render: &TimeGraphRender,
        config: &PresentationConfig,
        opts: &TimeGraphOptions,
        width: f64,
        height: f64,
        m: &dyn TextMeasure,
    ) -> Self {
        let font = Font::regular(opts.font_size);
        let counter_rows: Vec<usize> = render
            .counters()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.row.is_none())
            .map(|(i, _)| i)
            .collect();
        let indent = indent(opts.font_size);
        let fitted_tree_w = {
            let mut w: f64 = 0.0;
            for r in render.tree().rows() {
                w = w.max(r.depth as f64 * indent + indent + m.text_width(&r.label, font));
            }
            for &i in &counter_rows {
                let c = &render.counters()[i];
                w = w.max(indent + m.text_width(&config.counter(&c.name).style.label, font));
            }
            if let Some(t) = &opts.title {
                w = w.max(m.text_width(t, Font::bold(opts.font_size)));
            }
            (w + 14.0).clamp(60.0, (width * 0.4).max(60.0)).ceil()
        };
        let tree_w = opts
            .tree_width
            .unwrap_or(fitted_tree_w)
            .min(width - 20.0)
            .max(0.0);
        let axis_h = axis_height(opts.font_size);
        let (legend_items, legend_h) = if opts.legend {
            legend_items(render, config, opts, width, m)
        } else {
            (Vec::new(), 0.0)
        };
        let rows_h = (height - axis_h - legend_h).max(0.0);
        let graph_x = tree_w + 1.0;
        let graph_w = (width - graph_x - 1.0).max(1.0);
        let range = opts.view_range.unwrap_or(render.range());
        let legend = (legend_h > 0.0).then(|| Rect::new(0.0, height - legend_h, width, legend_h));
        let legend_items = legend_items
            .into_iter()
            .map(|mut it| {
                it.rect.y += height - legend_h;
                it
            })
            .collect();
        TimeGraphLayout {
            width,
            height,
            header: Rect::new(0.0, 0.0, tree_w, axis_h),
            axis: Rect::new(graph_x, 0.0, graph_w, axis_h),
            tree: Rect::new(0.0, axis_h, tree_w, rows_h),
            graph: Rect::new(graph_x, axis_h, graph_w, rows_h),
            legend,
            legend_items,
            row_height: opts.row_height,
            counter_row_height: opts.counter_row_height,
            scroll_y: opts.scroll_y,
            xmap: XMap {
                range,
                x0: graph_x,
                width: graph_w,
            },
            tree_rows: render.tree().len(),
            counter_rows,
            font_size: opts.font_size,
            fitted_tree_w,
        }
    }

    /// Height that shows every row and the legend at `width`.
    pub fn natural_height(
        render: &TimeGraphRender,
        config: &PresentationConfig,
        opts: &TimeGraphOptions,
        width: f64,
        m: &dyn TextMeasure,
    ) -> f64 {
        let n_counters = render.counters().iter().filter(|c| c.row.is_none()).count();
        let legend_h = if opts.legend {
            legend_items(render, config, opts, width, m).1
        } else {
            0.0
        };
        (axis_height(opts.font_size)
            + render.tree().len() as f64 * opts.row_height
            + n_counters as f64 * opts.counter_row_height
            + legend_h)
            .ceil()
    }

    /// Number of rows (tree rows, then counter rows).
    pub fn row_count(&self) -> usize {
        self.tree_rows + self.counter_rows.len()
    }

    /// Vertical extent of row `i` (tree rows first, then counter rows), in
    /// the whole drawing's coordinates (may lie outside the rows region).
    pub fn row_band(&self, i: usize) -> (f64, f64) {
        let top = self.graph.y - self.scroll_y;
        if i < self.tree_rows {
            let y = top + i as f64 * self.row_height;
            (y, self.row_height)
        } else {
            let y = top
                + self.tree_rows as f64 * self.row_height
                + (i - self.tree_rows) as f64 * self.counter_row_height;
            (y, self.counter_row_height)
        }
    }

    /// Row under `y`, if any (only within the rows region).
    pub fn row_at(&self, y: f64) -> Option<usize> {
        if y < self.graph.y || y >= self.graph.bottom() {
            return None;
        }
        let rel = y - self.graph.y + self.scroll_y;
        if rel < 0.0 {
            return None;
        }
        let tree_h = self.tree_rows as f64 * self.row_height;
        if rel < tree_h {
            return Some((rel / self.row_height) as usize);
        }
        let k = ((rel - tree_h) / self.counter_row_height) as usize;
        (k < self.counter_rows.len()).then_some(self.tree_rows + k)
    }

    /// Rows (display indices) at least partly in the rows region, at the
    /// layout's scroll.
    pub fn rows_in_view(&self) -> std::ops::Range<usize> {
        let n = self.row_count();
        let first = self.row_at(self.graph.y).unwrap_or(n);
        let last = self
            .row_at((self.graph.bottom() - 0.5).max(self.graph.y))
            .map_or(n, |r| r + 1);
        first.min(last)..last
    }

    /// Centre y of the row at display index `i`.
    pub fn row_center(&self, i: usize) -> f64 {
        let (y, h) = self.row_band(i);
        y + h / 2.0
    }

    /// Drawn x extent of an interval: whole pixels, at least one pixel wide,
    /// clamped to the graph (shared with hit testing so clicks hit what is
    /// drawn).
    pub fn interval_x(&self, start: Time, end: Time) -> Option<(f64, f64)> {
        let g = &self.graph;
        let x1 = self.xmap.x(start).max(g.x - 1.0).round();
        let x2 = self.xmap.x(end).min(g.right() + 1.0).round();
        if x2 < g.x || x1 > g.right() {
            return None;
        }
        Some((x1, x2.max(x1 + 1.0)))
    }

    /// Radius of drawn-event symbols.
    pub fn symbol_radius(&self) -> f64 {
        (self.row_height * 0.22).clamp(2.5, 6.0)
    }

    /// Bar extent (top, height) of a state of relative height `frac` in the
    /// row whose band is `(y, h)`.
    pub fn bar(&self, y: f64, h: f64, frac: f64) -> (f64, f64) {
        let full = (h - 6.0).max(2.0);
        let bh = (full * frac.clamp(0.05, 1.0)).max(2.0).round();
        let top = (y + (h - bh) / 2.0).round();
        (top, bh)
    }
}

/// Indentation per tree level.
pub(crate) fn indent(font_size: f64) -> f64 {
    (font_size * 1.1).round()
}

fn legend_items(
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
    width: f64,
    m: &dyn TextMeasure,
) -> (Vec<LegendItem>, f64) {
    let font_size = opts.font_size;
    let one_line = opts.legend_one_line;
    let font = Font::regular(font_size);
    let bold = Font::bold(font_size);
    let mut entries: Vec<(LegendKind, String)> = Vec::new();
    // States: configured ones in configuration order, then unknown ones in
    // order of first use.
    let used = render.used_states();
    let mut states: Vec<StyleKey> = config
        .states
        .iter()
        .filter(|(k, _)| used.contains(k) || (one_line && k.as_str() != NO_DATA))
        .map(|(k, _)| k.clone())
        .collect();
    // One line with a configured palette shows it alone (an unknown state
    // appearing would shift what fits); without one, what is used.
    let fixed = one_line && !config.states.is_empty();
    for k in used {
        if !states.contains(&k) && !fixed {
            states.push(k);
        }
    }
    if !states.is_empty() {
        entries.push((LegendKind::Heading, "States".into()));
        for k in states {
            let label = config.state(&k).style.label.clone();
            entries.push((LegendKind::State(k), label));
        }
        if one_line {
            entries.push((LegendKind::Mixed, "mixed".into()));
        } else if render.has_mixed() {
            entries.push((LegendKind::Mixed, "several states in a pixel".into()));
        }
    }
    let mut kinds = render.used_event_kinds();
    if one_line {
        let configured: Vec<StyleKey> = config.events.iter().map(|(k, _)| k.clone()).collect();
        kinds.retain(|k| !configured.contains(k));
        kinds.splice(0..0, configured);
    }
    if !kinds.is_empty() {
        entries.push((LegendKind::Heading, "Events".into()));
        for k in kinds {
            let label = config.event(&k).style.label.clone();
            entries.push((LegendKind::Event(k), label));
        }
    }
    let mut series: Vec<StyleKey> = render
        .arrow_series()
        .iter()
        .filter(|s| !s.arrows.is_empty())
        .map(|s| s.name.clone())
        .collect();
    if one_line {
        let configured: Vec<StyleKey> = config.arrows.iter().map(|(k, _)| k.clone()).collect();
        series.retain(|k| !configured.contains(k));
        series.splice(0..0, configured);
    }
    if !series.is_empty() {
        entries.push((LegendKind::Heading, "Arrows".into()));
        for name in series {
            let label = config.arrow(&name).style.label.clone();
            entries.push((LegendKind::Arrows(name), label));
        }
    }
    let in_rows: Vec<&Counter> = render
        .counters()
        .iter()
        .filter(|c| c.row.is_some())
        .collect();
    if !in_rows.is_empty() {
        entries.push((LegendKind::Heading, "Counters".into()));
        let mut seen = Vec::new();
        for c in in_rows {
            if !seen.contains(&c.name) {
                seen.push(c.name.clone());
                let label = config.counter(&c.name).style.label.clone();
                entries.push((LegendKind::Counter(c.name.clone()), label));
            }
        }
    }
    if entries.is_empty() {
        return (Vec::new(), 0.0);
    }
    // Flow layout, a heading never ends a line.
    let line_h = (font_size * 1.7).round();
    let swatch = swatch_width(font_size);
    let pad = 8.0;
    let gap = font_size * 1.2;
    let mut x = pad;
    let mut y = pad / 2.0;
    let mut items = Vec::with_capacity(entries.len());
    let widths: Vec<f64> = entries
        .iter()
        .map(|(k, l)| match k {
            LegendKind::Heading => m.text_width(&format!("{l}:"), bold),
            _ => swatch + 5.0 + m.text_width(l, font),
        })
        .collect();
    for (i, (kind, label)) in entries.into_iter().enumerate() {
        let w = widths[i];
        let need = if kind == LegendKind::Heading {
            w + gap / 2.0 + widths.get(i + 1).copied().unwrap_or(0.0)
        } else {
            w
        };
        if x > pad && x + need > width - pad {
            if one_line {
                // What does not fit is left out (the view's tooltip on the
                // legend names every entry); a heading never ends it.
                if items
                    .last()
                    .is_some_and(|it: &LegendItem| it.kind == LegendKind::Heading)
                {
                    items.pop();
                }
                break;
            }
            x = pad;
            y += line_h;
        } else if kind == LegendKind::Heading && x > pad {
            // Extra room before a new group on the same line.
            x += gap;
        }
        items.push(LegendItem {
            kind: kind.clone(),
            label,
            rect: Rect::new(x, y, w, line_h),
        });
        x += w + if kind == LegendKind::Heading {
            gap / 2.0
        } else {
            gap
        };
    }
    (items, (y + line_h + pad / 2.0).ceil())
}

fn swatch_width(font_size: f64) -> f64 {
    (font_size * 1.6).round()
}

/// Draws `render` on `cr` over `width × height` (in `cr`'s user units) and
/// returns the layout, for hit testing.
pub fn draw_time_graph(
    cr: &cairo::Context,
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
    width: f64,
    height: f64,
) -> Result<TimeGraphLayout, cairo::Error> {
    let mut cv = CairoCanvas::new(cr);
    let layout = paint_time_graph(&mut cv, render, config, opts, width, height);
    cv.finish()?;
    Ok(layout)
}

/// Draws `render` on any canvas (see [`draw_time_graph`]).
pub fn paint_time_graph(
    cv: &mut dyn Canvas,
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
    width: f64,
    height: f64,
) -> TimeGraphLayout {
    let l = TimeGraphLayout::compute(render, config, opts, width, height, cv);
    cv.fill_rect(Rect::new(0.0, 0.0, width, height), config.background);

    // Header and axis.
    cv.begin_group("header");
    cv.fill_rect(l.header, config.header_background);
    if let Some(t) = &opts.title {
        let f = Font::bold(opts.font_size);
        let t = elide(cv, t, f, l.header.w - 12.0);
        cv.text(
            (6.0, l.header.mid_y()),
            &t,
            f,
            config.foreground,
            Anchor::Start,
        );
    }
    cv.line(
        (0.0, l.header.bottom() - 0.5),
        (l.header.right(), l.header.bottom() - 0.5),
        &Stroke::solid(config.foreground, 1.0),
    );
    cv.end_group();
    let ticks = draw_axis(
        cv,
        l.axis,
        &l.xmap,
        config,
        opts.font_size,
        opts.time_format,
    );

    draw_row_backgrounds(cv, &l, render, config, opts);
    draw_tree(cv, &l, render, config, opts);

    cv.begin_group("graph");
    cv.push_clip(l.graph);
    let grid = Stroke::solid(config.grid, 1.0);
    for &t in &ticks.times {
        let x = l.xmap.x(t).round() + 0.5;
        cv.line((x, l.graph.y), (x, l.graph.bottom()), &grid);
    }
    if let Some(sel) = opts.selection {
        let x1 = l.xmap.x(sel.start).max(l.graph.x - 1.0);
        let x2 = l.xmap.x(sel.end).min(l.graph.right() + 1.0);
        if x2 > x1 {
            cv.fill_rect(
                Rect::new(x1, l.graph.y, x2 - x1, l.graph.h),
                config.selection,
            );
            let edge = Stroke::solid(config.selection.with_alpha(200), 1.0);
            cv.line((x1, l.graph.y), (x1, l.graph.bottom()), &edge);
            cv.line((x2, l.graph.y), (x2, l.graph.bottom()), &edge);
        }
    }
    draw_states(cv, &l, render, config, opts);
    draw_counters(cv, &l, render, config);
    draw_events(cv, &l, render, config);
    draw_arrows(cv, &l, render, config);
    cv.pop_clip();
    cv.end_group();

    // Column separator.
    cv.line(
        (l.tree.right() + 0.5, 0.0),
        (l.tree.right() + 0.5, l.graph.bottom()),
        &Stroke::solid(config.foreground.with_alpha(120), 1.0),
    );

    if let Some(t) = opts.current_time {
        if l.xmap.range.contains(t) {
            let x = l.xmap.x(t).round() + 0.5;
            let s = Stroke::solid(config.current_time, 1.5);
            cv.begin_group("current-time");
            cv.line((x, l.axis.y + 2.0), (x, l.graph.bottom()), &s);
            let b = l.axis.bottom();
            cv.polygon(
                &[(x - 5.0, b - 7.0), (x + 5.0, b - 7.0), (x, b)],
                config.current_time,
                None,
            );
            cv.end_group();
        }
    }

    if let Some(lr) = l.legend {
        draw_legend(cv, &l, lr, config, opts.font_size);
    }
    l
}

/// Rows visible in the rows region.
fn visible_rows(l: &TimeGraphLayout) -> impl Iterator<Item = (usize, f64, f64)> + '_ {
    (0..l.row_count()).filter_map(move |i| {
        let (y, h) = l.row_band(i);
        (y + h > l.graph.y && y < l.graph.bottom()).then_some((i, y, h))
    })
}

fn draw_row_backgrounds(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
) {
    cv.begin_group("rows");
    let region = Rect::new(0.0, l.graph.y, l.width, l.graph.h);
    cv.push_clip(region);
    let selected = opts.selected_row.and_then(|id| render.tree().index_of(id));
    for (i, y, h) in visible_rows(l) {
        let band = Rect::new(0.0, y, l.width, h);
        if Some(i) == selected {
            cv.fill_rect(band, config.selected_row);
        } else if i % 2 == 1 {
            cv.fill_rect(band, config.zebra);
        }
        if i >= l.tree_rows {
            // Counter rows are separated by a line: they are charts.
            cv.line(
                (0.0, y + 0.5),
                (l.width, y + 0.5),
                &Stroke::solid(config.grid, 1.0),
            );
        }
    }
    cv.pop_clip();
    cv.end_group();
}

fn draw_tree(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
) {
    let font = Font::regular(opts.font_size);
    let ind = indent(opts.font_size);
    cv.begin_group("tree");
    cv.push_clip(l.tree);
    let rows = render.tree().rows();
    for (i, y, h) in visible_rows(l) {
        let mid = y + h / 2.0;
        if i < l.tree_rows {
            let r = &rows[i];
            let x = 4.0 + r.depth as f64 * ind;
            if r.has_children {
                // Expander triangle: ▾ expanded, ▸ collapsed.
                let s = (opts.font_size * 0.32).round();
                let cx = x + ind / 2.0 - 2.0;
                let pts = if r.expanded {
                    vec![
                        (cx - s, mid - s * 0.6),
                        (cx + s, mid - s * 0.6),
                        (cx, mid + s * 0.8),
                    ]
                } else {
                    vec![
                        (cx - s * 0.6, mid - s),
                        (cx + s * 0.8, mid),
                        (cx - s * 0.6, mid + s),
                    ]
                };
                cv.polygon(&pts, config.muted, None);
            }
            let tx = x + ind;
            let label = elide(cv, &r.label, font, l.tree.right() - tx - 4.0);
            cv.text((tx, mid), &label, font, config.foreground, Anchor::Start);
        } else {
            let c = &render.counters()[l.counter_rows[i - l.tree_rows]];
            let style = config.counter(&c.name);
            let tx = 4.0 + ind;
            cv.fill_rect(Rect::new(4.0, mid - 4.0, ind - 6.0, 8.0), style.style.color);
            let label = elide(cv, &style.style.label, font, l.tree.right() - tx - 4.0);
            cv.text((tx, mid), &label, font, config.foreground, Anchor::Start);
        }
    }
    cv.pop_clip();
    cv.end_group();
}

fn draw_states(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
    opts: &TimeGraphOptions,
) {
    let label_font = Font::regular((opts.font_size * 0.85).round());
    cv.begin_group("states");
    let rows: Vec<_> = visible_rows(l)
        .filter(|(i, _, _)| *i < l.tree_rows)
        .collect();
    for (i, y, h) in rows {
        let ivs = render.states(i);
        // Only the intervals meeting the view.
        let first = ivs.partition_point(|iv| iv.end < l.xmap.range.start);
        for iv in &ivs[first..] {
            if iv.start > l.xmap.range.end {
                break;
            }
            let Some((x1, x2)) = l.interval_x(iv.start, iv.end) else {
                continue;
            };
            let style = config.state(&iv.state);
            let (top, bh) = l.bar(y, h, style.style.height);
            if &*iv.state == NO_DATA {
                hatch(cv, Rect::new(x1, top, x2 - x1, bh), style.style.color);
                continue;
            }
            if iv.is_mixed() {
                // As high as the merged intervals' drawn share of its
                // extent (an IRQ line busy 1 % of the time is a low bar,
                // not a full one), at least two pixels: every drawn
                // interval stays visible.
                let extent = iv.end.abs_diff(iv.start).max(1) as f64;
                let share = (iv.covered as f64 / extent).clamp(0.0, 1.0);
                // Whole pixels: a share a hair under 1 is a full bar, not
                // one with a blurred top edge.
                let fh = (bh * share).round().max(MIN_MIXED_HEIGHT.min(bh));
                cv.fill_rect(Rect::new(x1, top + bh - fh, x2 - x1, fh), style.style.color);
                // LTTV's collision indicator: something happened in here
                // that is too small to draw. On the bar, however low.
                let cap = top + bh - fh - 2.0;
                cv.fill_rect(Rect::new(x1, cap, x2 - x1, 2.0), config.mixed_marker);
                continue;
            }
            cv.fill_rect(Rect::new(x1, top, x2 - x1, bh), style.style.color);
            if opts.interval_labels {
                if let Some(text) = &iv.label {
                    let w = cv.text_width(text, label_font);
                    let (vx1, vx2) = (x1.max(l.graph.x), x2.min(l.graph.right()));
                    if w + 6.0 <= vx2 - vx1 && label_font.size + 2.0 <= bh {
                        cv.text(
                            ((vx1 + vx2) / 2.0, top + bh / 2.0),
                            text,
                            label_font,
                            style.style.color.contrasting_text(),
                            Anchor::Middle,
                        );
                    }
                }
            }
        }
    }
    cv.end_group();
}

/// Lowest bar of a mixed interval, px: however small its drawn share.
const MIN_MIXED_HEIGHT: f64 = 2.0;

/// Spacing of the diagonal lines of a hatched ("no data") interval, px.
const HATCH_STEP: f64 = 6.0;

/// Fills `r` hatched: a light wash of `color` crossed by diagonal lines
/// of it, so that "no data" reads as the absence of a state rather than
/// as one more colour.
fn hatch(cv: &mut dyn Canvas, r: Rect, color: Rgba) {
    if r.w <= 0.0 || r.h <= 0.0 {
        return;
    }
    cv.fill_rect(r, color.with_alpha(50));
    cv.push_clip(r);
    let stroke = Stroke::solid(color, 1.0);
    // Lines of slope 1 (bottom-left to top-right) every HATCH_STEP px,
    // aligned on the canvas so that neighbouring pieces join up.
    let mut x = (r.x / HATCH_STEP).floor() * HATCH_STEP - r.h;
    while x < r.right() {
        cv.line((x, r.bottom()), (x + r.h, r.y), &stroke);
        x += HATCH_STEP;
    }
    cv.pop_clip();
}

/// Draws a counter as a step area chart in the row band `(y, h)`.
fn draw_counter_chart(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    c: &Counter,
    config: &PresentationConfig,
    (y, h): (f64, f64),
    with_scale: bool,
) {
    let color = config.counter(&c.name).style.color;
    let font_size = l.font_size;
    let Some((lo, hi)) = c.value_bounds() else {
        return;
    };
    let lo = lo.min(0.0);
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let top = y + 3.0;
    let bottom = y + h - 2.0;
    let vy = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
    let base = vy(0.0_f64.clamp(lo, hi));
    let clamp_x = |x: f64| x.clamp(l.graph.x - 2.0, l.graph.right() + 2.0);
    let mut line = Vec::with_capacity(c.samples.len() * 2 + 1);
    for (k, s) in c.samples.iter().enumerate() {
        let x = clamp_x(l.xmap.x(s.time));
        if k > 0 {
            let prev = line.last().map(|p: &(f64, f64)| p.1).unwrap_or(vy(s.value));
            line.push((x, prev));
        }
        line.push((x, vy(s.value)));
    }
    if let Some(&(_, ly)) = line.last() {
        line.push((clamp_x(l.xmap.x(l.xmap.range.end)), ly));
    }
    if line.len() >= 2 {
        let mut area = line.clone();
        area.push((line.last().expect("non-empty").0, base));
        area.push((line[0].0, base));
        cv.polygon(&area, color.with_alpha(70), None);
        cv.polyline(&line, &Stroke::solid(color, 1.5));
    }
    // Values taken inside a pixel, beyond the drawn steps.
    let s = Stroke::solid(color, 1.0);
    for smp in c.samples.iter() {
        if smp.min < smp.max {
            let x = clamp_x(l.xmap.x(smp.time)).round() + 0.5;
            cv.line((x, vy(smp.max)), (x, vy(smp.min)), &s);
        }
    }
    if with_scale {
        let f = Font::regular((font_size * 0.8).round());
        let text = format!("max {}", format_value(hi));
        cv.text(
            (l.graph.x + 4.0, top + f.size / 2.0),
            &text,
            f,
            config.muted,
            Anchor::Start,
        );
    }
}

/// Short text for a counter value.
pub fn format_value(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

fn draw_counters(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
) {
    cv.begin_group("counters");
    for (i, y, h) in visible_rows(l) {
        if i < l.tree_rows {
            let id = render.tree().rows()[i].id;
            for c in render.counters().iter().filter(|c| c.row == Some(id)) {
                draw_counter_chart(cv, l, c, config, (y, h), false);
            }
        } else {
            let c = &render.counters()[l.counter_rows[i - l.tree_rows]];
            draw_counter_chart(cv, l, c, config, (y, h), true);
        }
    }
    cv.end_group();
}

fn draw_events(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
) {
    cv.begin_group("events");
    let r = l.symbol_radius();
    let outline = Stroke::solid(Rgba::rgb(0x20, 0x20, 0x20), 1.0);
    let rows: Vec<_> = visible_rows(l)
        .filter(|(i, _, _)| *i < l.tree_rows)
        .collect();
    // Events of a kind less than a symbol's width apart make a run: its
    // first is drawn as a symbol, the rest as a line along the row to the
    // last. At full range a busy thread has a wake-up in every pixel
    // column: symbols by the hundred hid its states (black outlines
    // piled up; thinned, still a band of triangles), where a run shows
    // where the wake-ups start and end over the state they come in.
    // Per kind in the row: the x of its run's first and last events.
    let mut runs: Vec<(&crate::render::StyleKey, f64, f64)> = Vec::new();
    let end_run = |cv: &mut dyn Canvas, (first, last): (f64, f64), y: f64| {
        if last - first > r {
            cv.line((first + r, y), (last, y), &outline);
        }
    };
    for (i, y, h) in rows {
        let cy = y + h / 2.0;
        runs.clear();
        for ev in render.events(i) {
            if !l.xmap.range.contains(ev.time) {
                continue;
            }
            let x = l.xmap.x(ev.time).round() + 0.5;
            match runs.iter_mut().find(|(k, _, _)| **k == ev.kind) {
                Some((_, _, last)) if x - *last < 2.0 * r => {
                    *last = x;
                    continue;
                }
                Some((_, first, last)) => {
                    end_run(cv, (*first, *last), cy);
                    (*first, *last) = (x, x);
                }
                None => runs.push((&ev.kind, x, x)),
            }
            let style = config.event(&ev.kind);
            cv.symbol(style.style.symbol, (x, cy), r, style.style.color, &outline);
        }
        for &(_, first, last) in &runs {
            end_run(cv, (first, last), cy);
        }
    }
    cv.end_group();
}

/// Where segment `a → b` enters and leaves the vertical band `[x0, x1]`, as
/// fractions of the segment (`None` if it misses the band).
pub(crate) fn clip_segment_x(a: (f64, f64), b: (f64, f64), x0: f64, x1: f64) -> Option<(f64, f64)> {
    let dx = b.0 - a.0;
    if dx.abs() < 1e-12 {
        return (a.0 >= x0 && a.0 <= x1).then_some((0.0, 1.0));
    }
    let t0 = (x0 - a.0) / dx;
    let t1 = (x1 - a.0) / dx;
    let (lo, hi) = if t0 < t1 { (t0, t1) } else { (t1, t0) };
    let lo = lo.max(0.0);
    let hi = hi.min(1.0);
    (lo <= hi).then_some((lo, hi))
}

/// The drawn part of an arrow.
pub(crate) struct ArrowSegment {
    /// Where the drawn line starts.
    pub from: (f64, f64),
    /// Where it ends.
    pub to: (f64, f64),
    /// Whether `from` is the arrow's real start (not a border crossing).
    pub from_real: bool,
    /// Whether `to` is the arrow's real end.
    pub to_real: bool,
}

/// The drawn segment of an arrow: end points, and whether each end is a
/// real end (inside the view) or where the arrow crosses the border.
pub(crate) fn arrow_segment(
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    a: &crate::render::Arrow,
) -> Option<ArrowSegment> {
    let tree = render.tree();
    let fi = tree.index_of(a.from.row)?;
    let ti = tree.index_of(a.to.row)?;
    let p = (l.xmap.x(a.from.time), l.row_center(fi));
    let q = (l.xmap.x(a.to.time), l.row_center(ti));
    let (t0, t1) = clip_segment_x(p, q, l.graph.x, l.graph.right())?;
    let at = |t: f64| (p.0 + (q.0 - p.0) * t, p.1 + (q.1 - p.1) * t);
    Some(ArrowSegment {
        from: at(t0),
        to: at(t1),
        from_real: t0 == 0.0,
        to_real: t1 == 1.0,
    })
}

fn draw_arrows(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    render: &TimeGraphRender,
    config: &PresentationConfig,
) {
    cv.begin_group("arrows");
    for series in render.arrow_series() {
        let style = config.arrow(&series.name);
        let st = &style.style;
        let stroke = Stroke {
            color: st.color,
            width: st.width,
            style: st.line,
        };
        let solid = Stroke::solid(st.color, st.width);
        for a in series.arrows.iter() {
            let Some(ArrowSegment {
                from: p,
                to: q,
                from_real: p_real,
                to_real: q_real,
            }) = arrow_segment(l, render, a)
            else {
                continue;
            };
            let (dx, dy) = (q.0 - p.0, q.1 - p.1);
            let len = (dx * dx + dy * dy).sqrt();
            let head = 7.0_f64.min(len * 0.6);
            if len < 0.5 {
                continue;
            }
            let (ux, uy) = (dx / len, dy / len);
            let stem_end = if q_real {
                (q.0 - ux * head * 0.8, q.1 - uy * head * 0.8)
            } else {
                q
            };
            cv.line(p, stem_end, &stroke);
            if q_real {
                let w = head * 0.45;
                let base = (q.0 - ux * head, q.1 - uy * head);
                cv.polygon(
                    &[
                        q,
                        (base.0 - uy * w, base.1 + ux * w),
                        (base.0 + uy * w, base.1 - ux * w),
                    ],
                    st.color,
                    None,
                );
            }
            if !p_real {
                // The arrow comes from outside the view: a hollow source mark.
                cv.circle(p, 2.5, Some(config.background), Some(&solid));
            } else if a.count > 1 {
                cv.circle(p, 1.8, Some(st.color), None);
            }
        }
    }
    cv.end_group();
}

fn draw_legend(
    cv: &mut dyn Canvas,
    l: &TimeGraphLayout,
    area: Rect,
    config: &PresentationConfig,
    font_size: f64,
) {
    cv.begin_group("legend");
    cv.fill_rect(area, config.background);
    cv.line(
        (0.0, area.y + 0.5),
        (area.right(), area.y + 0.5),
        &Stroke::solid(config.foreground.with_alpha(120), 1.0),
    );
    let font = Font::regular(font_size);
    let bold = Font::bold(font_size);
    let sw = swatch_width(font_size);
    let outline = Stroke::solid(Rgba::rgb(0x20, 0x20, 0x20), 1.0);
    for it in &l.legend_items {
        let mid = it.rect.mid_y();
        let x = it.rect.x;
        let text_x = x + sw + 5.0;
        match &it.kind {
            LegendKind::Heading => {
                cv.text(
                    (x, mid),
                    &format!("{}:", it.label),
                    bold,
                    config.foreground,
                    Anchor::Start,
                );
                continue;
            }
            LegendKind::State(k) => {
                let s = config.state(k);
                let bh = (font_size * 0.9 * s.style.height.clamp(0.3, 1.0))
                    .round()
                    .max(3.0);
                let r = Rect::new(x, (mid - bh / 2.0).round(), sw, bh);
                if &**k == NO_DATA {
                    hatch(cv, r, s.style.color);
                } else {
                    cv.fill_rect(r, s.style.color);
                }
                cv.stroke_rect(r, &Stroke::solid(config.foreground.with_alpha(90), 0.5));
            }
            LegendKind::Mixed => {
                let bh = (font_size * 0.9).round();
                let r = Rect::new(x, (mid - bh / 2.0 + 1.0).round(), sw, bh);
                cv.fill_rect(r, config.muted.with_alpha(60));
                cv.fill_rect(Rect::new(x, r.y - 2.0, sw, 2.0), config.mixed_marker);
            }
            LegendKind::Event(k) => {
                let s = config.event(k);
                cv.symbol(
                    s.style.symbol,
                    (x + sw / 2.0, mid),
                    4.5,
                    s.style.color,
                    &outline,
                );
            }
            LegendKind::Arrows(k) => {
                let s = config.arrow(k);
                let st = &s.style;
                let stroke = Stroke {
                    color: st.color,
                    width: st.width,
                    style: st.line,
                };
                cv.line((x, mid), (x + sw - 5.0, mid), &stroke);
                cv.polygon(
                    &[
                        (x + sw, mid),
                        (x + sw - 6.0, mid - 3.0),
                        (x + sw - 6.0, mid + 3.0),
                    ],
                    st.color,
                    None,
                );
            }
            LegendKind::Counter(k) => {
                let s = config.counter(k);
                let c = s.style.color;
                let pts = [
                    (x, mid + 4.0),
                    (x + sw * 0.3, mid + 4.0),
                    (x + sw * 0.3, mid - 3.0),
                    (x + sw * 0.7, mid - 3.0),
                    (x + sw * 0.7, mid + 1.0),
                    (x + sw, mid + 1.0),
                ];
                cv.polyline(&pts, &Stroke::solid(c, 1.5));
            }
        }
        cv.text(
            (text_x, mid),
            &it.label,
            font,
            config.foreground,
            Anchor::Start,
        );
    }
    cv.end_group();
}
