//! Time-graph renders of a Pajé trace ([`PajeData`]), ViTE's main view on
//! the shared render objects and level-of-detail builders.
//!
//! Rows: every container is a node of the tree, under its parent (any
//! depth; the implicit root is not shown). A container's row draws its
//! first state type's bottom level (or, with no state, its first variable)
//! and its events as markers; each further state type, each nesting level
//! above the bottom one (a pushed state drawn one row below the state it
//! is pushed on) and each further variable gets a child row of its own,
//! before the child containers. Links are arrows between container rows,
//! one series per link type; variables are counters (min/max per pixel).
//! Types listed in [`PajeView::hidden`] are left out (the legend's
//! show/hide).
//!
//! Renders cost O(rows × width), not O(entities): state lanes go through
//! the shared step renderer (`steps.rs`), events and variable values are
//! walked one pixel column at a time (galloping to the next column), and
//! each link type keeps at most the control flow view's
//! [`ARROWS_PER_PIXEL`] arrows per pixel of width. No item holds a string
//! of its own: a value's key and label are shared, and the tooltips'
//! properties of states and events are made from the data when asked
//! ([`ItemDetails`]).
//!
//! Colours are the trace's own (`PajeDefineEntityValue`'s `Color`,
//! `PajeDefineVariableType`'s); other keys — and lines given the
//! background's own colour, invisible on it — get the presentation's
//! stable hashed palette colour.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use traceloom_base::{Time, TimeRange};

use traceloom_paje::{TypeId, TypeNature};

use crate::model::controlflow::ARROWS_PER_PIXEL;
use crate::model::gallop::last_holding;
use crate::model::paje_analysis::{ContainerData, PajeData};
use crate::model::steps::{push_steps, Blocks, NONE};
use crate::render::{
    Arrow, DrawnEvent, ItemDetails, Properties, RowId, StateInterval, StyleKey, TimeGraphRender,
    TimeGraphRenderBuilder, TreeBuilder, TreeNode, TreeRender,
};
use crate::style::{
    ArrowStyle, CounterStyle, DataConfig, EventStyle, LineStyle, PresentationConfig, Rgba,
    StateStyle, Symbol,
};
use crate::time::{format_duration, PixelScale};

/// What the view shows of the data: types hidden by the legend, and the
/// tree's configuration (collapsed and hidden rows, order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PajeView {
    /// Types not drawn.
    pub hidden: HashSet<TypeId>,
    /// Tree configuration.
    pub data: DataConfig,
}

/// Values of a variable pushed per pixel column at most (besides its last).
const COLUMN_SAMPLE: usize = 16;

/// The first index in `from..n` for which `at` holds (`at` holding for a
/// suffix), found by galloping from `from`: its probes stay near `from`
/// when the answer is near, as it is column after column.
fn gallop(from: usize, n: usize, at: impl Fn(usize) -> bool) -> usize {
    if from >= n || at(from) {
        return from;
    }
    last_holding(from, n, |i| !at(i)) + 1
}

/// What a row draws.
#[derive(Debug, Clone, Copy)]
enum Content {
    /// Lane `lane` of container `c` (indexes into [`PajeData`]).
    Lane { c: usize, lane: usize },
    /// Variable `var` of container `c`.
    Var { c: usize, var: usize },
}

/// The row of a container.
pub fn container_row(id: u32) -> RowId {
    RowId(u64::from(id) << 16)
}

/// A legend entry: a type and whether it is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The type.
    pub type_id: TypeId,
    /// Its name.
    pub name: String,
    /// `State`, `Event`, `Link` or `Variable`.
    pub kind: &'static str,
}

impl PajeData {
    /// The types a legend lists (containers' types excepted), by kind then
    /// name.
    pub fn legend(&self) -> Vec<LegendEntry> {
        let mut out: Vec<LegendEntry> = self
            .types
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let kind = match t.nature {
                    TypeNature::State => "State",
                    TypeNature::Event => "Event",
                    TypeNature::Variable => "Variable",
                    TypeNature::Link { .. } => "Link",
                    _ => return None,
                };
                Some(LegendEntry {
                    type_id: TypeId(i as u32),
                    name: t.name.to_string(),
                    kind,
                })
            })
            .collect();
        out.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
        out
    }

    /// Style keys of a value, of a type.
    fn value_key(&self, v: u32) -> StyleKey {
        match self.values.get(v as usize) {
            Some(x) => StyleKey::from(x.name.as_ref()),
            None => StyleKey::from("?"),
        }
    }

    fn type_name(&self, t: TypeId) -> &str {
        self.types.get(t.0 as usize).map_or("?", |x| &x.name)
    }

    /// Colours from the trace: values with a `Color`, variable types with
    /// one; the rest resolve to the palette's hashed colours.
    pub fn presentation(&self) -> PresentationConfig {
        let mut p = PresentationConfig::empty();
        for v in self.values.iter() {
            let Some(color) = v.color else { continue };
            let label = v.name.to_string();
            match self.types.get(v.type_id.0 as usize).map(|t| t.nature) {
                Some(TypeNature::Event) => p.events.set(
                    v.name.as_ref(),
                    EventStyle {
                        label,
                        color,
                        symbol: Symbol::Diamond,
                    },
                ),
                Some(TypeNature::Link { .. }) => {}
                _ => p.states.set(
                    v.name.as_ref(),
                    StateStyle {
                        label,
                        color,
                        height: 1.0,
                    },
                ),
            }
        }
        // A line as light as the background would not show: ViTE draws on
        // a dark background, traces often give variables and links white.
        let background = p.background.luminance();
        let visible = |c: Rgba| (c.luminance() - background).abs() > 0.2;
        for t in self.types.iter() {
            match (t.nature, t.color.filter(|&c| visible(c))) {
                (TypeNature::Variable, Some(color)) => p.counters.set(
                    t.name.as_ref(),
                    CounterStyle {
                        label: t.name.to_string(),
                        color,
                    },
                ),
                (TypeNature::Link { .. }, Some(color)) => p.arrows.set(
                    t.name.as_ref(),
                    ArrowStyle {
                        label: t.name.to_string(),
                        color,
                        line: LineStyle::Solid,
                        width: 1.0,
                    },
                ),
                _ => {}
            }
        }
        p
    }

    /// The rows tree and what each row draws.
    fn rows(&self, view: &PajeView) -> (TreeRender, HashMap<RowId, Content>) {
        let mut nodes = TreeBuilder::new();
        let mut content = HashMap::new();
        for (ci, c) in self.containers.iter().enumerate() {
            let row = container_row(c.id.0);
            nodes.add(TreeNode {
                id: row,
                parent: c.parent.map(|p| container_row(p.0)),
                label: Arc::from(&*c.name),
                properties: Properties::new([
                    ("container", c.name.to_string()),
                    ("type", self.type_name(c.type_id).to_string()),
                    ("start", format!("{:.9}", c.start as f64 / 1e9)),
                ]),
            });
            let mut rows: Vec<(String, Content)> = Vec::new();
            for (li, l) in c.lanes.iter().enumerate() {
                if view.hidden.contains(&l.type_id) {
                    continue;
                }
                let name = self.type_name(l.type_id);
                let label = match l.level {
                    0 => name.to_string(),
                    n => format!("{name} ▸ {n}"),
                };
                rows.push((label, Content::Lane { c: ci, lane: li }));
            }
            for (vi, v) in c.variables.iter().enumerate() {
                if !view.hidden.contains(&v.type_id) {
                    let label = self.type_name(v.type_id).to_string();
                    rows.push((label, Content::Var { c: ci, var: vi }));
                }
            }
            for (k, (label, what)) in rows.into_iter().enumerate() {
                if k == 0 {
                    content.insert(row, what);
                    continue;
                }
                let id = RowId(row.0 | k as u64);
                nodes.add(TreeNode {
                    id,
                    parent: Some(row),
                    label: label.into(),
                    properties: Properties::none(),
                });
                content.insert(id, what);
            }
        }
        (nodes.build(&view.data), content)
    }

    /// The rows tree of `view`.
    pub fn tree(&self, view: &PajeView) -> TreeRender {
        self.rows(view).0
    }

    /// The render of `range` at `width` pixels, every row filled (exports,
    /// the command line).
    ///
    /// It holds O(rows × width) items and no string per item: intervals
    /// and events share one key and label per value, their tooltip
    /// properties are made on demand from the data ([`PajeDetails`]), and
    /// each link type keeps at most [`ARROWS_PER_PIXEL`] arrows per pixel
    /// of width, sampled evenly, each counting for the links it stands for
    /// (as the control flow view's arrows).
    pub fn render(&self, range: TimeRange, width: u32, view: &PajeView) -> TimeGraphRender {
        self.render_rows(range, width, view, None)
    }

    /// [`render`](Self::render) holding the states, events and variables
    /// of `rows` only (display indices, clamped to the tree; `None`: every
    /// row), the tree and the arrows whole
    /// ([`TimeGraphRender::materialized`] says which): a window shows a
    /// few dozen of a trace's thousands of lanes, and the others made
    /// most of a render's cost. The window asks for the rows in view and
    /// a page either side
    /// ([`ControlFlowModel::rows_with_margin`](crate::model::ControlFlowModel::rows_with_margin)).
    pub fn render_rows(
        &self,
        range: TimeRange,
        width: u32,
        view: &PajeView,
        rows: Option<std::ops::Range<usize>>,
    ) -> TimeGraphRender {
        self.render_rows_until(range, width, view, rows, || false)
            .expect("a render never stopped")
    }

    /// The rows of the render of `range` at `width` pixels, with nothing
    /// drawn in them yet: what a view lays out (its tree column, hence
    /// the width of its graph) while the render is made.
    pub fn render_tree(&self, range: TimeRange, width: u32, view: &PajeView) -> TimeGraphRender {
        TimeGraphRenderBuilder::new(self.tree(view), range, width).build()
    }

    /// [`render`](Self::render), given up (`None`) as soon as `stop` holds
    /// (asked once per row): a window whose width or range changed while
    /// a render of the whole trace was made does not wait for it.
    pub fn render_until(
        &self,
        range: TimeRange,
        width: u32,
        view: &PajeView,
        stop: impl Fn() -> bool,
    ) -> Option<TimeGraphRender> {
        self.render_rows_until(range, width, view, None, stop)
    }

    /// [`render_rows`](Self::render_rows), given up as
    /// [`render_until`](Self::render_until) is.
    pub fn render_rows_until(
        &self,
        range: TimeRange,
        width: u32,
        view: &PajeView,
        rows: Option<std::ops::Range<usize>>,
        stop: impl Fn() -> bool,
    ) -> Option<TimeGraphRender> {
        self.render_lanes_from(range, width, view, rows, true, stop)
    }

    /// [`render_rows_until`](Self::render_rows_until), the lanes drawn
    /// from their block summaries (`summaries`: as the views do) or from
    /// their changes alone (the reference the summaries are tested
    /// against).
    fn render_lanes_from(
        &self,
        range: TimeRange,
        width: u32,
        view: &PajeView,
        rows: Option<std::ops::Range<usize>>,
        summaries: bool,
        stop: impl Fn() -> bool,
    ) -> Option<TimeGraphRender> {
        let no_blocks = Blocks::default();
        let (tree, content) = self.rows(view);
        let mut b = TimeGraphRenderBuilder::new(tree.clone(), range, width);
        if let Some(rows) = rows {
            b.materialize_only(rows);
        }
        let scale = b.scale();
        let keys = ValueKeys::new(self);
        for i in b.materialized() {
            let tr = &tree.rows()[i];
            if stop() {
                return None;
            }
            match content.get(&tr.id) {
                Some(&Content::Lane { c, lane }) => {
                    let l = &self.containers[c].lanes[lane];
                    // Packed columns: readers keep the blocks last decoded.
                    let codes = l.codes.reader();
                    push_steps(
                        &l.times.reader(),
                        l.end,
                        scale,
                        b.intervals(i),
                        if summaries { &l.blocks } else { &no_blocks },
                        |x| l.classes.get(usize::from(x)).copied().unwrap_or(NONE),
                        |k| codes.at(k),
                        |v| keys.key(v),
                        |k, s, e| {
                            let v = codes.at(k);
                            StateInterval::new(s, e, keys.key(v)).with_label(keys.label(v))
                        },
                    );
                }
                Some(&Content::Var { c, var }) => {
                    let v = &self.containers[c].variables[var];
                    let name = self.type_name(v.type_id).to_string();
                    let counter = b.counter(name.as_str(), Some(tr.id));
                    let n = v.items.len();
                    let mut k = v
                        .items
                        .partition_point(|x| x.time < range.start)
                        .saturating_sub(1);
                    let items = v.items.reader();
                    let at = |i: usize| items.at(i);
                    // Per pixel column: its values when few, else its
                    // first and last and a bounded, evenly spaced sample
                    // (whose extremes are the column's min and max as
                    // drawn): O(width) however many values a column holds.
                    while k < n && at(k).time <= range.end {
                        let p = scale.pixel_of(at(k).time.max(range.start));
                        let next = scale.time_of_pixel(p + 1);
                        let stop = gallop(k, n, |i| at(i).time >= next);
                        if stop - k <= COLUMN_SAMPLE {
                            for x in (k..stop).map(at) {
                                counter.push(x.time, x.value);
                            }
                        } else {
                            let step = (stop - k) / COLUMN_SAMPLE;
                            for x in (k..stop - 1).step_by(step).chain([stop - 1]).map(at) {
                                counter.push(x.time, x.value);
                            }
                        }
                        k = stop.max(k + 1);
                    }
                }
                None => {}
            }
            // Events go to their container's own row.
            if tr.id.0 & 0xFFFF == 0 {
                if let Some(ci) =
                    self.container_index(traceloom_paje::ContainerId((tr.id.0 >> 16) as u32))
                {
                    self.push_events(&self.containers[ci], scale, view, &keys, b.events(i));
                }
            }
        }
        let cap = ((scale.width as f64 * ARROWS_PER_PIXEL) as usize).max(1);
        for l in self.links.iter() {
            if view.hidden.contains(&l.type_id) {
                continue;
            }
            let name = self.type_name(l.type_id).to_string();
            let out = b.arrows(name.as_str());
            // By completion: those crossing the range complete after its
            // start and, starting before its end, at most the longest
            // link later.
            let first = l.items.partition_point(|x| x.completed() < range.start);
            let last = l
                .items
                .partition_point(|x| x.completed().saturating_sub(l.longest) <= range.end);
            let span = first..last.max(first);
            let stride = span.len().div_ceil(cap).max(1);
            let items = l.items.reader();
            for k in span.clone().step_by(stride) {
                let x = items.at(k);
                if x.start.min(x.end) > range.end {
                    continue;
                }
                let (from, to) = (container_row(x.from), container_row(x.to));
                if tree.index_of(from).is_none() || tree.index_of(to).is_none() {
                    continue;
                }
                let mut arrow = Arrow::new(from, x.start, to, x.end);
                arrow.count = u32::try_from(stride.min(span.end - k)).unwrap_or(u32::MAX);
                out.push(arrow);
            }
        }
        b.set_details(Arc::new(PajeDetails {
            data: self.clone(),
            content,
            hidden: view.hidden.clone(),
        }));
        Some(b.build())
    }

    fn push_events(
        &self,
        c: &ContainerData,
        scale: PixelScale,
        view: &PajeView,
        keys: &ValueKeys,
        out: &mut crate::lod::RowEventsBuilder,
    ) {
        let range = scale.range;
        for (t, items) in &c.events {
            if view.hidden.contains(t) {
                continue;
            }
            let n = items.len();
            let mut k = items.partition_point(|x| x.time < range.start);
            let items = items.reader();
            let at = |i: usize| items.at(i);
            // The first event of each pixel column, with the number it
            // stands for: the level-of-detail builder draws one marker per
            // column anyway, and a column can hold millions.
            while k < n && at(k).time <= range.end {
                let x = at(k);
                let next = scale.time_of_pixel(scale.pixel_of(x.time) + 1);
                let stop = gallop(k, n, |i| at(i).time >= next).max(k + 1);
                let count = stop - k;
                k = stop;
                let mut ev = DrawnEvent::new(x.time, keys.label(x.value), keys.key(x.value));
                ev.count = u32::try_from(count).unwrap_or(u32::MAX);
                out.push(ev);
            }
        }
    }

    /// Tooltip properties of a state `[start, end)` of value `value` in
    /// lane `lane` of container `c`.
    fn state_properties(
        &self,
        c: usize,
        lane: usize,
        value: u32,
        start: Time,
        end: Time,
    ) -> Properties {
        let cd = &self.containers[c];
        let l = &cd.lanes[lane];
        Properties::new([
            ("container", cd.name.to_string()),
            ("type", self.type_name(l.type_id).to_string()),
            ("value", self.value_key(value).to_string()),
            ("level", l.level.to_string()),
            ("start", format!("{:.9}", start as f64 / 1e9)),
            (
                "duration",
                format_duration(end.saturating_sub(start) as i128),
            ),
        ])
    }

    /// Tooltip properties of an event of type `t` and value `value` at
    /// `time` in container `c`.
    fn event_properties(&self, c: usize, t: TypeId, value: u32, time: Time) -> Properties {
        Properties::new([
            ("container", self.containers[c].name.to_string()),
            ("type", self.type_name(t).to_string()),
            ("value", self.value_key(value).to_string()),
            ("time", format!("{:.9}", time as f64 / 1e9)),
        ])
    }
}

/// A value's style key and label.
type KeyAndLabel = (StyleKey, Arc<str>);

/// The style key and label of each value, made once per render (when
/// first used) and shared by every interval and marker of that value.
struct ValueKeys<'a> {
    data: &'a PajeData,
    made: RefCell<Vec<Option<KeyAndLabel>>>,
}

impl<'a> ValueKeys<'a> {
    fn new(data: &'a PajeData) -> Self {
        ValueKeys {
            data,
            made: RefCell::new(vec![None; data.values.len() + 1]),
        }
    }

    fn get(&self, v: u32) -> KeyAndLabel {
        // Unknown values share the last slot (their key is "?").
        let i = (v as usize).min(self.data.values.len());
        let mut made = self.made.borrow_mut();
        made[i]
            .get_or_insert_with(|| {
                let key = self.data.value_key(v);
                let label = Arc::from(key.as_str());
                (key, label)
            })
            .clone()
    }

    fn key(&self, v: u32) -> StyleKey {
        self.get(v).0
    }

    fn label(&self, v: u32) -> Arc<str> {
        self.get(v).1
    }
}

/// Tooltip properties of a Pajé render's states and events, made from the
/// data when asked (by row and time) rather than stored with each item:
/// the same properties as the data gives, at no cost per item.
#[derive(Debug)]
struct PajeDetails {
    /// The data rendered (its series are shared, not copied).
    data: PajeData,
    /// What each row draws.
    content: HashMap<RowId, Content>,
    /// Types not drawn.
    hidden: HashSet<TypeId>,
}

impl ItemDetails for PajeDetails {
    fn interval(&self, row: RowId, iv: &StateInterval) -> Properties {
        // A merged interval stands for several states: no properties.
        if iv.is_mixed() {
            return Properties::none();
        }
        let Some(&Content::Lane { c, lane }) = self.content.get(&row) else {
            return Properties::none();
        };
        let l = &self.data.containers[c].lanes[lane];
        // The state the interval is: the last change at or before its
        // start (which the level-of-detail builder may have moved up to
        // the previous state's end, never past its own change).
        let Some(k) = l.times.partition_point(|&t| t <= iv.start).checked_sub(1) else {
            return Properties::none();
        };
        let start = l.times.at(k);
        let end = if k + 1 < l.times.len() {
            l.times.at(k + 1)
        } else {
            l.end
        };
        self.data
            .state_properties(c, lane, l.codes.at(k), start, end)
    }

    fn event(&self, row: RowId, ev: &DrawnEvent) -> Properties {
        if row.0 & 0xFFFF != 0 {
            return Properties::none();
        }
        let id = traceloom_paje::ContainerId((row.0 >> 16) as u32);
        let Some(c) = self.data.container_index(id) else {
            return Properties::none();
        };
        // The marker is the first event of its pixel column: the first at
        // its time, of the first shown type with one of its value there.
        for (t, items) in &self.data.containers[c].events {
            if self.hidden.contains(t) {
                continue;
            }
            let k = items.partition_point(|x| x.time < ev.time);
            let items = items.reader();
            for x in (k..items.len()).map(|i| items.at(i)) {
                if x.time != ev.time {
                    break;
                }
                if *self.data.value_key(x.value) == *ev.name {
                    return self.data.event_properties(c, *t, x.value, x.time);
                }
            }
        }
        Properties::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::paje_analysis::Lane;

    /// A generated trace of `mb` megabytes with `seed`, analysed.
    fn generated(mb: u64, seed: u64) -> PajeData {
        let dir = tempfile::tempdir().unwrap();
        let cfg = traceloom_pajegen::GeneratorConfig {
            max_bytes: mb << 20,
            seed,
            ..Default::default()
        };
        let f = dir.path().join("gen.trace");
        traceloom_pajegen::generate(&cfg, std::fs::File::create(&f).unwrap()).unwrap();
        PajeData::open(&f).unwrap().0
    }

    /// Checks a row's render from the summaries (`sum`) against the one
    /// from the changes alone (`exact`) of `lane`: the same intervals of a
    /// pixel or more, in order; mixed intervals made only of sub-pixel
    /// states. Returns whether the two differ.
    fn check_row(
        data: &PajeData,
        lane: &Lane,
        scale: PixelScale,
        exact: &[StateInterval],
        sum: &[StateInterval],
    ) -> bool {
        let whole = |v: &[StateInterval]| -> Vec<StateInterval> {
            v.iter()
                .filter(|iv| !iv.is_mixed() && scale.at_least_one_pixel(iv.end.abs_diff(iv.start)))
                .cloned()
                .collect()
        };
        assert_eq!(whole(exact), whole(sum), "intervals of a pixel or more");
        for w in sum.windows(2) {
            assert!(w[0].end <= w[1].start, "overlap: {w:?}");
        }
        let times = lane.times.to_vec();
        let n = times.len();
        let end_of = |k: usize| if k + 1 < n { times[k + 1] } else { lane.end };
        // The last column merges what runs out of sight: checked before.
        let last_column = scale.time_of_pixel(scale.width - 1);
        for iv in sum
            .iter()
            .filter(|iv| iv.is_mixed() && iv.end <= last_column)
        {
            let k0 = times.partition_point(|&t| t < iv.start);
            let k1 = times.partition_point(|&t| t < iv.end);
            for (k, &t) in times.iter().enumerate().take(k1).skip(k0) {
                assert!(
                    !scale.at_least_one_pixel(end_of(k).abs_diff(t)),
                    "{iv:?} hides state {k} [{t}, {}) of {}",
                    end_of(k),
                    data.value_key(lane.codes.at(k))
                );
            }
        }
        exact != sum
    }

    /// The render drawn from the lanes' block summaries equals the one
    /// drawn from their changes wherever states last a pixel or more, on
    /// generated traces, full range and windows, at several widths; and
    /// events and links are the same.
    #[test]
    fn summarised_render_equals_the_exact_one_where_states_last_a_pixel() {
        let mut differ = 0;
        for (mb, seed) in [(3, 1), (6, 7)] {
            let data = generated(mb, seed);
            let blocks: usize = data
                .containers
                .iter()
                .flat_map(|c| &c.lanes)
                .map(|l| l.blocks.len())
                .sum();
            assert!(blocks > 500, "{blocks} summarised blocks");
            let view = PajeView::default();
            let span = data.span;
            let third = span.span() as Time / 3;
            let ranges = [
                span,
                TimeRange::new(span.start + third, span.end - third),
                TimeRange::new(span.start + third, span.start + third + third / 50),
            ];
            for range in ranges {
                for width in [7, 31, 97, 400, 1920] {
                    let sum = data.render(range, width, &view);
                    let exact = data
                        .render_lanes_from(range, width, &view, None, false, || false)
                        .unwrap();
                    assert_eq!(sum.tree(), exact.tree());
                    let (_, content) = data.rows(&view);
                    let scale = PixelScale::new(range, width);
                    for (i, row) in sum.tree().rows().iter().enumerate() {
                        assert_eq!(sum.events(i), exact.events(i));
                        let Some(&Content::Lane { c, lane }) = content.get(&row.id) else {
                            assert_eq!(sum.states(i), exact.states(i));
                            continue;
                        };
                        let lane = &data.containers[c].lanes[lane];
                        if check_row(&data, lane, scale, exact.states(i), sum.states(i)) {
                            differ += 1;
                        }
                    }
                    assert_eq!(sum.arrow_series(), exact.arrow_series());
                }
            }
        }
        // The summaries were used: some rows are drawn differently.
        assert!(differ > 0);
    }

    #[test]
    fn gallop_finds_the_first_index_of_the_suffix() {
        let v: Vec<i64> = (0..1000).map(|i| i / 3).collect();
        for from in [0, 1, 5, 500, 998, 999, 1000] {
            for bound in [-1, 0, 1, 7, 200, 332, 333, 334] {
                let want = (from..v.len()).find(|&i| v[i] >= bound).unwrap_or(v.len());
                assert_eq!(gallop(from, v.len(), |i| v[i] >= bound), want);
            }
        }
    }
}
