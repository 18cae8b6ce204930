//! A control-flow-style model of a Pajé trace (`traceloom-paje`): the
//! containers are the rows tree; each container's states are intervals
//! (nested push/pop states are flattened so the innermost one shows);
//! events are drawn events; links are arrows (one series per link type);
//! variables are counters drawn in their container's row.
//!
//! A Pajé trace is simulated whole in memory by `traceloom-paje`, so the
//! model is built once from it; renders then binary-search each row.

use std::collections::HashMap;
use std::path::Path;
use traceloom_base::Time;
use traceloom_base::TimeRange;

use traceloom_paje::{ContainerId, PajeError, Trace, TypeId, TypeNature};

use crate::model::steps::{push_steps, Blocks, NONE};
use crate::render::{
    Arrow, DrawnEvent, Properties, RowId, StateInterval, StyleKey, TimeGraphRender,
    TimeGraphRenderBuilder, TreeBuilder, TreeNode, TreeRender,
};
use crate::style::{DataConfig, PresentationConfig, Rgba, StateStyle};
use crate::time::format_duration;

/// Pajé seconds to nanoseconds.
pub fn ns(seconds: f64) -> Time {
    (seconds * 1e9).round() as Time
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A link: start row and time, end row and time.
type LinkArrow = (RowId, Time, RowId, Time);

/// One row: a container, or one state type of a container with several.
#[derive(Debug, Clone)]
struct Row {
    id: RowId,
    /// Step function: change times, value per change ([`NONE`]: no state).
    times: Vec<Time>,
    values: Vec<u32>,
    end: Time,
    events: Vec<(Time, u32)>,
    counters: Vec<(String, Vec<(Time, f64)>)>,
}

/// The Pajé view's model.
#[derive(Debug)]
pub struct PajeModel {
    range: TimeRange,
    tree: TreeRender,
    rows: HashMap<RowId, Row>,
    value_names: Vec<StyleKey>,
    links: Vec<(StyleKey, Vec<LinkArrow>)>,
    presentation: PresentationConfig,
}

/// Flattens nested states (sorted by start) into the innermost state over
/// time: `(start, end, value)` segments, non-overlapping, in time order.
pub fn flatten_states(states: &[(Time, Time, u32)]) -> Vec<(Time, Time, u32)> {
    let mut out: Vec<(Time, Time, u32)> = Vec::new();
    let mut emit = |s: Time, e: Time, v: u32| {
        if e > s {
            out.push((s, e, v));
        }
    };
    let mut stack: Vec<(Time, u32)> = Vec::new();
    let mut cursor = Time::MIN;
    for &(start, end, value) in states {
        while let Some(&(top_end, top_value)) = stack.last() {
            if top_end <= start {
                emit(cursor, top_end, top_value);
                cursor = cursor.max(top_end);
                stack.pop();
            } else {
                break;
            }
        }
        if let Some(&(_, top_value)) = stack.last() {
            emit(cursor, start, top_value);
        }
        cursor = start;
        stack.push((end, value));
    }
    while let Some((top_end, top_value)) = stack.pop() {
        emit(cursor, top_end, top_value);
        cursor = cursor.max(top_end);
    }
    out
}

impl PajeModel {
    /// Loads and simulates the Pajé trace at `path`.
    pub fn open(path: &Path) -> Result<PajeModel, PajeError> {
        Ok(PajeModel::new(&Trace::open(path)?))
    }

    /// The model of a loaded trace.
    pub fn new(trace: &Trace) -> PajeModel {
        let model = &trace.model;
        let store = &trace.entities;
        let mut presentation = PresentationConfig::empty();
        let mut value_names = Vec::new();
        for v in model.values() {
            let name = text(if v.alias.is_empty() || !v.name.is_empty() {
                &v.name
            } else {
                &v.alias
            });
            let key = StyleKey::from(name.clone());
            if let Some(c) = v.color {
                let to8 = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
                presentation.states.set(
                    key.clone(),
                    StateStyle {
                        label: name,
                        color: Rgba::rgb(to8(c.r), to8(c.g), to8(c.b)),
                        height: 1.0,
                    },
                );
            }
            value_names.push(key);
        }
        let mut nodes = TreeBuilder::new();
        let mut rows = HashMap::new();
        let mut links: HashMap<TypeId, Vec<LinkArrow>> = HashMap::new();
        let mut lo = Time::MAX;
        let mut hi = Time::MIN;
        let row_of = |c: ContainerId| RowId((c.0 as u64) << 16);
        for (ci, c) in model.containers().iter().enumerate() {
            let cid = ContainerId(ci as u32);
            if ci == 0 {
                // The root container is implicit in Pajé traces.
                continue;
            }
            let (start, end) = (ns(c.start), ns(c.end.max(c.start)));
            lo = lo.min(start);
            hi = hi.max(end);
            let ty = model.type_(c.type_id);
            let state_types: Vec<TypeId> = ty
                .children()
                .iter()
                .copied()
                .filter(|t| model.type_(*t).nature == TypeNature::State)
                .collect();
            let id = row_of(cid);
            let parent = c.parent.filter(|p| p.0 != 0).map(row_of);
            nodes.add(TreeNode {
                id,
                parent,
                label: text(&c.name),
                properties: Properties::new([
                    ("container", text(&c.name)),
                    ("type", text(&ty.name)),
                    ("start", format!("{}", c.start)),
                    ("end", format!("{}", c.end)),
                ]),
            });
            let mut row_ids = vec![id];
            if state_types.len() > 1 {
                row_ids.clear();
                for (k, t) in state_types.iter().enumerate() {
                    let sub = RowId(id.0 | (k as u64 + 1));
                    nodes.add(TreeNode {
                        id: sub,
                        parent: Some(id),
                        label: text(&model.type_(*t).name),
                        properties: Properties::none(),
                    });
                    row_ids.push(sub);
                }
            }
            let make_row = |rid: RowId| Row {
                id: rid,
                times: Vec::new(),
                values: Vec::new(),
                end,
                events: Vec::new(),
                counters: Vec::new(),
            };
            let mut main_row = make_row(row_ids[0]);
            let mut extra: Vec<Row> = row_ids[1..].iter().map(|r| make_row(*r)).collect();
            for (k, t) in state_types.iter().enumerate() {
                let mut st: Vec<(Time, Time, u32)> = store
                    .states(cid, *t)
                    .iter()
                    .map(|s| (ns(s.start), ns(s.end), s.value.0))
                    .collect();
                st.sort_by_key(|s| s.0);
                let row = if k == 0 {
                    &mut main_row
                } else {
                    &mut extra[k - 1]
                };
                let mut prev_end = Time::MIN;
                for (s, e, v) in flatten_states(&st) {
                    if prev_end != Time::MIN && s > prev_end {
                        row.times.push(prev_end);
                        row.values.push(NONE);
                    }
                    row.times.push(s);
                    row.values.push(v);
                    prev_end = e;
                    hi = hi.max(e);
                    lo = lo.min(s);
                }
                if prev_end != Time::MIN {
                    row.end = prev_end;
                }
            }
            for &t in ty.children() {
                match model.type_(t).nature {
                    TypeNature::Event => {
                        for e in store.events(cid, t) {
                            main_row.events.push((ns(e.time), e.value.0));
                        }
                    }
                    TypeNature::Variable => {
                        let pts: Vec<(Time, f64)> = store
                            .variables(cid, t)
                            .iter()
                            .map(|v| (ns(v.start), v.value))
                            .collect();
                        if !pts.is_empty() {
                            main_row.counters.push((text(&model.type_(t).name), pts));
                        }
                    }
                    TypeNature::Link { .. } => {
                        for l in store.links(cid, t) {
                            if let (Some(a), Some(b)) = (l.start_container, l.end_container) {
                                links.entry(t).or_default().push((
                                    row_of(a),
                                    ns(l.start),
                                    row_of(b),
                                    ns(l.end),
                                ));
                            }
                        }
                    }
                    _ => {}
                }
            }
            main_row.events.sort_by_key(|e| e.0);
            rows.insert(main_row.id, main_row);
            for r in extra {
                rows.insert(r.id, r);
            }
        }
        if lo > hi {
            (lo, hi) = (0, 1);
        }
        let mut links: Vec<(StyleKey, Vec<LinkArrow>)> = links
            .into_iter()
            .map(|(t, mut v)| {
                v.sort_by_key(|a| a.1);
                (StyleKey::from(text(&model.type_(t).name)), v)
            })
            .collect();
        links.sort_by(|a, b| a.0.cmp(&b.0));
        PajeModel {
            range: TimeRange::new(lo, hi),
            tree: nodes.build(&DataConfig::default()),
            rows,
            value_names,
            links,
            presentation,
        }
    }

    /// The span of the trace.
    pub fn full_range(&self) -> TimeRange {
        self.range
    }

    /// The rows tree.
    pub fn tree(&self) -> &TreeRender {
        &self.tree
    }

    /// Colours from the trace's value definitions (other values get
    /// palette colours).
    pub fn presentation(&self) -> PresentationConfig {
        self.presentation.clone()
    }

    /// The render of `range` at `width` pixels.
    pub fn render(&self, range: TimeRange, width: u32) -> TimeGraphRender {
        let mut b = TimeGraphRenderBuilder::new(self.tree.clone(), range, width);
        let scale = b.scale();
        let names = &self.value_names;
        for (i, tr) in self.tree.rows().iter().enumerate() {
            let Some(row) = self.rows.get(&tr.id) else {
                continue;
            };
            push_steps(
                &row.times,
                row.end,
                scale,
                b.intervals(i),
                // No summary: Pajé values are not bytes, and Pajé traces are
                // small enough for sampling.
                &Blocks::default(),
                |c| c as u32,
                |k| row.values[k],
                |v| names[v as usize].clone(),
                |k, s, e| {
                    let v = &names[row.values[k] as usize];
                    StateInterval::new(s, e, v.clone())
                        .with_label(v.as_str())
                        .with_properties(Properties::new([
                            ("value", v.to_string()),
                            ("start", format!("{:.9}", s as f64 / 1e9)),
                            ("duration", format_duration(e.saturating_sub(s) as i128)),
                        ]))
                },
            );
            let lo = row.events.partition_point(|e| e.0 < range.start);
            let ev = b.events(i);
            for &(t, v) in row.events[lo..].iter().take_while(|e| e.0 <= range.end) {
                let key = names[v as usize].clone();
                ev.push(DrawnEvent::new(t, key.as_str(), key.clone()));
            }
            for (name, pts) in &row.counters {
                let c = b.counter(name.as_str(), Some(row.id));
                let first = pts.partition_point(|p| p.0 < range.start).saturating_sub(1);
                for &(t, v) in pts[first..].iter().take_while(|p| p.0 <= range.end) {
                    c.push(t, v);
                }
            }
        }
        for (name, arrows) in &self.links {
            let builder = b.arrows(name.clone());
            for &(from, t0, to, t1) in arrows {
                if t0 > range.end {
                    break;
                }
                if t1 < range.start
                    || self.tree.index_of(from).is_none()
                    || self.tree.index_of(to).is_none()
                {
                    continue;
                }
                builder.push(Arrow::new(from, t0, to, t1));
            }
        }

        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_states_show_the_innermost() {
        // A [0,100) with B pushed on [10,20) and C on [30,90) holding D on
        // [40,50).
        let s = [(0, 100, 0), (10, 20, 1), (30, 90, 2), (40, 50, 3)];
        assert_eq!(
            flatten_states(&s),
            vec![
                (0, 10, 0),
                (10, 20, 1),
                (20, 30, 0),
                (30, 40, 2),
                (40, 50, 3),
                (50, 90, 2),
                (90, 100, 0)
            ]
        );
        assert_eq!(
            flatten_states(&[(0, 5, 1), (7, 9, 2)]),
            vec![(0, 5, 1), (7, 9, 2)]
        );
    }
}
