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
//! Colours are the trace's own (`PajeDefineEntityValue`'s `Color`,
//! `PajeDefineVariableType`'s); other keys — and lines given the
//! background's own colour, invisible on it — get the presentation's
//! stable hashed palette colour.

use std::collections::{HashMap, HashSet};
use traceloom_base::{Time, TimeRange};

use traceloom_paje::{TypeId, TypeNature};

use crate::model::paje_analysis::{ContainerData, PajeData};
use crate::model::steps::{push_steps, Blocks, NONE};
use crate::render::{
    Arrow, DrawnEvent, Properties, RowId, StateInterval, StyleKey, TimeGraphRender,
    TimeGraphRenderBuilder, TreeBuilder, TreeNode, TreeRender,
};
use crate::style::{
    ArrowStyle, CounterStyle, DataConfig, EventStyle, LineStyle, PresentationConfig, Rgba,
    StateStyle, Symbol,
};
use crate::time::format_duration;

/// What the view shows of the data: types hidden by the legend, and the
/// tree's configuration (collapsed and hidden rows, order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PajeView {
    /// Types not drawn.
    pub hidden: HashSet<TypeId>,
    /// Tree configuration.
    pub data: DataConfig,
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
                label: c.name.to_string(),
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
                    label,
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

    /// The render of `range` at `width` pixels.
    pub fn render(&self, range: TimeRange, width: u32, view: &PajeView) -> TimeGraphRender {
        let (tree, content) = self.rows(view);
        let mut b = TimeGraphRenderBuilder::new(tree.clone(), range, width);
        let scale = b.scale();
        for (i, tr) in tree.rows().iter().enumerate() {
            match content.get(&tr.id) {
                Some(&Content::Lane { c, lane }) => {
                    let cd = &self.containers[c];
                    let l = &cd.lanes[lane];
                    let type_name = self.type_name(l.type_id);
                    push_steps(
                        &l.times,
                        l.end,
                        scale,
                        b.intervals(i),
                        // No summary: values are many and unordered; the
                        // walk samples each pixel's changes instead.
                        &Blocks::default(),
                        |x| x as u32,
                        |k| l.codes[k],
                        |v| self.value_key(v),
                        |k, s, e| {
                            let key = self.value_key(l.codes[k]);
                            StateInterval::new(s, e, key.clone())
                                .with_label(key.as_str())
                                .with_properties(Properties::new([
                                    ("container", cd.name.to_string()),
                                    ("type", type_name.to_string()),
                                    ("value", key.to_string()),
                                    ("level", l.level.to_string()),
                                    ("start", format!("{:.9}", s as f64 / 1e9)),
                                    ("duration", format_duration(e.saturating_sub(s) as i128)),
                                ]))
                        },
                    );
                }
                Some(&Content::Var { c, var }) => {
                    let v = &self.containers[c].variables[var];
                    let name = self.type_name(v.type_id).to_string();
                    let counter = b.counter(name.as_str(), Some(tr.id));
                    let first = v
                        .items
                        .partition_point(|x| x.time < range.start)
                        .saturating_sub(1);
                    for x in v.items.iter().skip(first) {
                        if x.time > range.end {
                            break;
                        }
                        counter.push(x.time, x.value);
                    }
                }
                None => {}
            }
            // Events go to their container's own row.
            if tr.id.0 & 0xFFFF == 0 {
                if let Some(ci) =
                    self.container_index(traceloom_paje::ContainerId((tr.id.0 >> 16) as u32))
                {
                    self.push_events(&self.containers[ci], range, view, b.events(i));
                }
            }
        }
        for l in self.links.iter() {
            if view.hidden.contains(&l.type_id) {
                continue;
            }
            let name = self.type_name(l.type_id).to_string();
            let out = b.arrows(name.as_str());
            let first = l.items.partition_point(|x| x.completed() < range.start);
            for x in l.items.iter().skip(first) {
                if x.completed().saturating_sub(l.longest) > range.end {
                    break;
                }
                if x.start.min(x.end) > range.end {
                    continue;
                }
                let (from, to) = (container_row(x.from), container_row(x.to));
                if tree.index_of(from).is_none() || tree.index_of(to).is_none() {
                    continue;
                }
                out.push(Arrow::new(from, x.start, to, x.end));
            }
        }
        b.build()
    }

    fn push_events(
        &self,
        c: &ContainerData,
        range: TimeRange,
        view: &PajeView,
        out: &mut crate::lod::RowEventsBuilder,
    ) {
        for (t, items) in &c.events {
            if view.hidden.contains(t) {
                continue;
            }
            let first = items.partition_point(|x| x.time < range.start);
            for x in items.iter().skip(first) {
                if x.time > range.end {
                    break;
                }
                let key = self.value_key(x.value);
                out.push(
                    DrawnEvent::new(x.time, key.as_str(), key.clone()).with_properties(
                        Properties::new([
                            ("container", c.name.to_string()),
                            ("type", self.type_name(*t).to_string()),
                            ("value", key.to_string()),
                            ("time", format!("{:.9}", x.time as f64 / 1e9)),
                        ]),
                    ),
                );
            }
        }
    }

    /// The times at which lane changes and events of the whole trace
    /// happen nearest to `t`, for tests: the start of the state drawn at
    /// `t` in container row `row`, if any.
    pub fn state_at(&self, row: RowId, t: Time) -> Option<(Time, String)> {
        let ci = self.container_index(traceloom_paje::ContainerId((row.0 >> 16) as u32))?;
        let lane = self.containers[ci].lanes.first()?;
        let k = lane.times.partition_point(|&x| x <= t).checked_sub(1)?;
        let code = lane.codes[k];
        (code != NONE && t < lane.end).then(|| (lane.times[k], self.value_key(code).to_string()))
    }
}
