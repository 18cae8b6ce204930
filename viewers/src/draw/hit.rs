//! Hit testing of a drawn time graph: what is under the pointer, for
//! tooltips and clicks, using the same geometry the drawing used.

use super::timegraph::{arrow_segment, format_value, indent, LegendKind, TimeGraphLayout};
use crate::render::{RowId, TimeGraphRender};
use crate::style::PresentationConfig;
use crate::time::{format_absolute, format_duration, AbsoluteTimeFormat};
use traceloom_base::Time;

/// The part of the drawing a point is in.
#[derive(Debug, Clone, PartialEq)]
pub enum HitPart {
    /// Outside the drawing.
    Outside,
    /// The corner above the tree column.
    Header,
    /// The time axis.
    Axis,
    /// The tree column.
    Tree,
    /// The graph.
    Graph,
    /// The legend (with the entry under the point, if any).
    Legend(Option<LegendKind>),
}

/// A render item under the point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitItem {
    /// `render.states(row)[index]`.
    Interval {
        /// Display index of the row.
        row: usize,
        /// Index in the row's intervals.
        index: usize,
    },
    /// `render.events(row)[index]`.
    Event {
        /// Display index of the row.
        row: usize,
        /// Index in the row's events.
        index: usize,
    },
    /// `render.arrow_series()[series].arrows[index]`.
    Arrow {
        /// Index of the series.
        series: usize,
        /// Index of the arrow.
        index: usize,
    },
    /// `render.counters()[counter].samples[sample]`: the sample holding at
    /// the point's time.
    Counter {
        /// Index of the counter.
        counter: usize,
        /// Index of the sample.
        sample: usize,
    },
}

/// Result of [`TimeGraphLayout::hit`].
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Part of the drawing.
    pub part: HitPart,
    /// Display row (tree rows, then counter rows) under the point.
    pub row: Option<usize>,
    /// Id of the tree row under the point.
    pub row_id: Option<RowId>,
    /// Time under the point (graph and axis).
    pub time: Option<Time>,
    /// Item under the point (graph only).
    pub item: Option<HitItem>,
}

/// Pointer tolerance, in pixels, for thin things (arrows, markers).
const SLOP: f64 = 3.0;

fn dist_to_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    };
    let (cx, cy) = (a.0 + t * dx, a.1 + t * dy);
    ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt()
}

impl TimeGraphLayout {
    /// The row whose expander triangle (▾/▸, drawn before the label of a
    /// row with children) is at `(x, y)`: a click there collapses or
    /// expands it.
    pub fn expander_at(&self, render: &TimeGraphRender, x: f64, y: f64) -> Option<RowId> {
        if !self.tree.contains(x, y) {
            return None;
        }
        let row = render.tree().rows().get(self.row_at(y)?)?;
        let ind = indent(self.font_size);
        // The drawing's geometry: the triangle is centred in the first
        // indent after the row's own indentation.
        let left = 4.0 + row.depth as f64 * ind;
        (row.has_children && x >= left - 2.0 && x < left + ind).then_some(row.id)
    }

    /// What of `render` (drawn with this layout) is at `(x, y)`. Items are
    /// looked for in drawing order reversed: arrows, then events, then
    /// intervals and counters.
    pub fn hit(&self, render: &TimeGraphRender, x: f64, y: f64) -> Hit {
        let mut hit = Hit {
            part: HitPart::Outside,
            row: None,
            row_id: None,
            time: None,
            item: None,
        };
        if x < 0.0 || y < 0.0 || x >= self.width || y >= self.height {
            return hit;
        }
        if let Some(lr) = self.legend {
            if lr.contains(x, y) {
                let kind = self
                    .legend_items
                    .iter()
                    .find(|it| it.rect.contains(x, y))
                    .map(|it| it.kind.clone());
                hit.part = HitPart::Legend(kind);
                return hit;
            }
        }
        if self.header.contains(x, y) {
            hit.part = HitPart::Header;
            return hit;
        }
        if self.axis.contains(x, y) {
            hit.part = HitPart::Axis;
            hit.time = Some(self.xmap.time(x));
            return hit;
        }
        hit.row = self.row_at(y);
        hit.row_id = hit
            .row
            .filter(|&r| r < self.tree_rows)
            .map(|r| render.tree().rows()[r].id);
        if self.tree.contains(x, y) {
            hit.part = HitPart::Tree;
            return hit;
        }
        if !self.graph.contains(x, y) {
            return hit;
        }
        hit.part = HitPart::Graph;
        hit.time = Some(self.xmap.time(x));
        hit.item = self.item_at(render, x, y, hit.row);
        hit
    }

    fn item_at(
        &self,
        render: &TimeGraphRender,
        x: f64,
        y: f64,
        row: Option<usize>,
    ) -> Option<HitItem> {
        // Arrows are drawn last, on top.
        for (si, s) in render.arrow_series().iter().enumerate().rev() {
            for (ai, a) in s.arrows.iter().enumerate().rev() {
                if let Some(seg) = arrow_segment(self, render, a) {
                    if dist_to_segment((x, y), seg.from, seg.to) <= SLOP {
                        return Some(HitItem::Arrow {
                            series: si,
                            index: ai,
                        });
                    }
                }
            }
        }
        let row = row?;
        if row >= self.tree_rows {
            let counter = self.counter_rows[row - self.tree_rows];
            return self.counter_sample_at(render, counter, x);
        }
        let (ry, rh) = self.row_band(row);
        let mid = ry + rh / 2.0;
        let r = self.symbol_radius() + SLOP;
        if (y - mid).abs() <= r {
            let evs = render.events(row);
            let lo = self.xmap.time(x - r);
            let first = evs.partition_point(|e| e.time < lo);
            let mut best: Option<(f64, usize)> = None;
            for (k, e) in evs.iter().enumerate().skip(first) {
                let ex = self.xmap.x(e.time).round() + 0.5;
                if ex > x + r {
                    break;
                }
                let d = (ex - x).abs();
                if d <= r && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, k));
                }
            }
            if let Some((_, index)) = best {
                return Some(HitItem::Event { row, index });
            }
        }
        let ivs = render.states(row);
        let t_lo = self.xmap.time(x - 2.0);
        let first = ivs.partition_point(|iv| iv.end < t_lo);
        for (k, iv) in ivs.iter().enumerate().skip(first) {
            let Some((x1, x2)) = self.interval_x(iv.start, iv.end) else {
                if self.xmap.x(iv.start) > x + 2.0 {
                    break;
                }
                continue;
            };
            if x1 > x {
                break;
            }
            if x >= x1 && x < x2 {
                return Some(HitItem::Interval { row, index: k });
            }
        }
        // A counter drawn in this tree row.
        let id = render.tree().rows()[row].id;
        let counter = render.counters().iter().position(|c| c.row == Some(id))?;
        self.counter_sample_at(render, counter, x)
    }

    fn counter_sample_at(
        &self,
        render: &TimeGraphRender,
        counter: usize,
        x: f64,
    ) -> Option<HitItem> {
        let c = &render.counters()[counter];
        let t = self.xmap.time(x);
        let n = c.samples.partition_point(|s| s.time <= t);
        (n > 0).then(|| HitItem::Counter {
            counter,
            sample: n - 1,
        })
    }
}

/// Row properties that are times (a thread's birth), in ns.
const TIME_PROPERTIES: &[&str] = &["birth"];

/// Appends the properties of row `row` (what a control-flow row knows of
/// its thread: name, TID, PID, PPID, birth; a resource row its CPU) that `out`
/// does not have yet: an interval or an event carries only what is its
/// own, so that a render of many thousands of them allocates nothing per
/// item for what its row already says. A property that is a time
/// ([`TIME_PROPERTIES`], ns) is shown as the tooltip's other times, by
/// `abs`.
fn push_row_properties(
    render: &TimeGraphRender,
    row: usize,
    abs: impl Fn(Time) -> String,
    out: &mut Vec<(String, String)>,
) {
    let Some(r) = render.tree().rows().get(row) else {
        return;
    };
    for (k, v) in r.properties.iter() {
        if !out.iter().any(|(have, _)| have == k) {
            let v = match v.parse::<Time>() {
                Ok(t) if TIME_PROPERTIES.contains(&k) => abs(t),
                _ => v.to_string(),
            };
            out.push((k.to_string(), v));
        }
    }
}

/// Tooltip lines (name, value) for `item`.
pub fn tooltip(
    render: &TimeGraphRender,
    config: &PresentationConfig,
    item: &HitItem,
    format: AbsoluteTimeFormat,
) -> Vec<(String, String)> {
    let abs = |t: Time| format_absolute(t, format, 9);
    let mut out = Vec::new();
    match *item {
        HitItem::Interval { row, index } => {
            let Some(iv) = render.states(row).get(index) else {
                return out;
            };
            out.push(("State".into(), config.state(&iv.state).style.label.clone()));
            if iv.is_mixed() {
                out.push((
                    "Merged".into(),
                    format!("{} intervals (zoom in for detail)", iv.merged),
                ));
            }
            out.push(("Start".into(), abs(iv.start)));
            out.push(("End".into(), abs(iv.end)));
            out.push((
                "Duration".into(),
                format_duration(iv.end as i128 - iv.start as i128),
            ));
            if iv.is_mixed() {
                out.push(("Covered".into(), format_duration(iv.covered as i128)));
            }
            if let Some(l) = &iv.label {
                out.push(("Label".into(), l.to_string()));
            }
            out.extend(
                render
                    .interval_properties(row, index)
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
            push_row_properties(render, row, abs, &mut out);
        }
        HitItem::Event { row, index } => {
            let Some(e) = render.events(row).get(index) else {
                return out;
            };
            out.push(("Event".into(), e.name.to_string()));
            out.push(("Kind".into(), config.event(&e.kind).style.label.clone()));
            out.push(("Time".into(), abs(e.time)));
            if e.count > 1 {
                out.push(("Count".into(), format!("{} events in this pixel", e.count)));
            }
            out.extend(
                render
                    .event_properties(row, index)
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
            push_row_properties(render, row, abs, &mut out);
        }
        HitItem::Arrow { series, index } => {
            let Some(s) = render.arrow_series().get(series) else {
                return out;
            };
            let Some(a) = s.arrows.get(index) else {
                return out;
            };
            let label = |id: RowId| {
                render
                    .tree()
                    .index_of(id)
                    .map(|i| render.tree().rows()[i].label.to_string())
                    .unwrap_or_else(|| format!("#{}", id.0))
            };
            out.push(("Series".into(), config.arrow(&s.name).style.label.clone()));
            out.push((
                "From".into(),
                format!("{} at {}", label(a.from.row), abs(a.from.time)),
            ));
            out.push((
                "To".into(),
                format!("{} at {}", label(a.to.row), abs(a.to.time)),
            ));
            out.push((
                "Duration".into(),
                format_duration(a.to.time as i128 - a.from.time as i128),
            ));
            if a.count > 1 {
                out.push(("Count".into(), format!("{} arrows", a.count)));
            }
            out.extend(
                a.properties
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
        }
        HitItem::Counter { counter, sample } => {
            let Some(c) = render.counters().get(counter) else {
                return out;
            };
            let Some(s) = c.samples.get(sample) else {
                return out;
            };
            out.push((
                "Counter".into(),
                config.counter(&c.name).style.label.clone(),
            ));
            out.push(("Value".into(), format_value(s.value)));
            if s.min < s.max {
                out.push((
                    "Range in pixel".into(),
                    format!("{} – {}", format_value(s.min), format_value(s.max)),
                ));
            }
            out.push(("Since".into(), abs(s.time)));
        }
    }
    out
}
