//! Statistics of a Pajé trace over a time range, as ViTE's statistics
//! plugin gives them: per container and state type, the time spent in
//! each value and its share of the range.
//!
//! A container spends a moment in the state at the top of its stack: the
//! time of a state is its duration within the range minus that of the
//! states pushed on it (which count for their own values), so the shares
//! of one state type add up to at most 100 %. Computed from a
//! [`PajeData`] snapshot in O(states in the range × log), on the
//! window's worker thread.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use traceloom_base::{Time, TimeRange};
use traceloom_paje::TypeId;

use crate::model::column::ColumnReader;
use crate::model::paje_analysis::{ContainerData, Lane, PajeData};
use crate::model::paje_render::PajeView;
use crate::model::steps::NONE;
use crate::render::{
    StatValue, StatisticsBuilder, StatisticsRender, StatisticsTree, StatisticsTreeRow,
};

/// Calls `f(start, end, code)` for each state of `lane` overlapping
/// `range`, clipped to it.
fn each_state(lane: &Lane, range: TimeRange, mut f: impl FnMut(Time, Time, u32)) {
    let n = lane.times.len();
    let mut k = lane
        .times
        .partition_point(|&t| t <= range.start)
        .saturating_sub(1);
    let (times, codes) = (lane.times.reader(), lane.codes.reader());
    while k < n {
        let s = times.at(k);
        if s > range.end {
            break;
        }
        let e = if k + 1 < n { times.at(k + 1) } else { lane.end };
        let code = codes.at(k);
        let (cs, ce) = (s.max(range.start), e.min(range.end));
        if code != NONE && ce > cs {
            f(cs, ce, code);
        }
        k += 1;
    }
}

/// The value of a lane at increasing times: a forward walk over its
/// packed columns (each block decoded once), not a search per time.
struct CodeAt<'a> {
    lane: &'a Lane,
    times: ColumnReader<'a, Time>,
    codes: ColumnReader<'a, u32>,
    /// The change holding at the last time asked (`None`: before the
    /// first), once found.
    k: Option<Option<usize>>,
}

impl<'a> CodeAt<'a> {
    fn new(lane: &'a Lane) -> Self {
        CodeAt {
            lane,
            times: lane.times.reader(),
            codes: lane.codes.reader(),
            k: None,
        }
    }

    /// The value at `t` (at least the last time asked), if a state holds
    /// there.
    fn at(&mut self, t: Time) -> Option<u32> {
        let n = self.times.len();
        let mut k = match self.k {
            Some(k) => k,
            None => self.lane.times.partition_point(|&x| x <= t).checked_sub(1),
        };
        loop {
            let next = k.map_or(0, |k| k + 1);
            if next < n && self.times.at(next) <= t {
                k = Some(next);
            } else {
                break;
            }
        }
        self.k = Some(k);
        let k = k?;
        let end = if k + 1 < n {
            self.times.at(k + 1)
        } else {
            self.lane.end
        };
        let c = self.codes.at(k);
        (c != NONE && t < end).then_some(c)
    }
}

/// Per value id of one state type: its time (ns) and number of states.
pub type ValueTotals = Vec<(u32, i64, u64)>;

/// The time and number of states of each value of each state type of each
/// container over the whole trace: the statistics of any range holding
/// every state (the whole trace's, the window's at open) are made of them
/// without a walk over the changes. The analysis store keeps them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateTotals {
    /// The earliest start and the latest end of a state: a range holding
    /// them has these totals.
    pub extent: (Time, Time),
    /// Per container (as [`PajeData::containers`]), per state type: the
    /// value ids with their time (ns) and number of states.
    pub containers: Vec<Vec<(TypeId, ValueTotals)>>,
}

impl StateTotals {
    /// Whether `range` holds every state.
    fn covers(&self, range: TimeRange) -> bool {
        range.start <= self.extent.0 && range.end >= self.extent.1
    }
}

impl PajeData {
    /// Time and number of states per value id of the states of type `t` in
    /// `c`, over `range` (see the module doc).
    fn type_totals(
        &self,
        c: &ContainerData,
        t: TypeId,
        range: TimeRange,
    ) -> HashMap<u32, (i64, u64)> {
        let lanes: Vec<&Lane> = c.lanes.iter().filter(|l| l.type_id == t).collect();
        // By value id first (no name per state), by name after.
        let mut by_code: HashMap<u32, (i64, u64)> = HashMap::new();
        let mut add = |code: u32, d: i64, n: u64| {
            let e = by_code.entry(code).or_default();
            e.0 += d;
            e.1 += n;
        };
        for (k, lane) in lanes.iter().enumerate() {
            // The level below, when this one is pushed on it.
            let mut below = k
                .checked_sub(1)
                .map(|j| lanes[j])
                .filter(|b| b.level + 1 == lane.level)
                .map(CodeAt::new);
            each_state(lane, range, |s, e, code| {
                add(code, e - s, 1);
                if let Some(parent) = below.as_mut().and_then(|b| b.at(s)) {
                    add(parent, -(e - s), 0);
                }
            });
        }
        by_code
    }

    /// The whole trace's [`StateTotals`] (a walk over every change).
    pub fn state_totals(&self) -> StateTotals {
        let lanes = self.containers.iter().flat_map(|c| &c.lanes);
        let start = lanes.clone().filter_map(|l| l.times.first()).min();
        let end = lanes.map(|l| l.end).max();
        let (Some(start), Some(end)) = (start, end) else {
            // No state: any range holds them all.
            return StateTotals {
                extent: (Time::MAX, Time::MIN),
                containers: vec![Vec::new(); self.containers.len()],
            };
        };
        let extent = TimeRange::new(start, end.max(start));
        let containers = self
            .containers
            .iter()
            .map(|c| {
                let mut types: Vec<TypeId> = c.lanes.iter().map(|l| l.type_id).collect();
                types.dedup();
                types
                    .into_iter()
                    .map(|t| {
                        let mut v: ValueTotals = self
                            .type_totals(c, t, extent)
                            .into_iter()
                            .map(|(code, (d, n))| (code, d, n))
                            .collect();
                        v.sort_unstable();
                        (t, v)
                    })
                    .collect()
            })
            .collect();
        StateTotals {
            extent: (extent.start, extent.end),
            containers,
        }
    }

    /// The statistics of `range` (see the module doc) as a tree read
    /// lazily ([`PajeStatistics`]): from the kept [`StateTotals`] when
    /// `range` holds every state, else a walk over the states in it.
    pub fn statistics_tree(&self, range: TimeRange, view: &PajeView) -> PajeStatistics {
        let totals = self
            .totals
            .as_deref()
            .filter(|t| t.covers(range) && t.containers.len() == self.containers.len());
        let mut containers = Vec::new();
        let mut rows = 0;
        for (ci, c) in self.containers.iter().enumerate() {
            let mut types = Vec::new();
            let mut type_ids: Vec<_> = c.lanes.iter().map(|l| l.type_id).collect();
            type_ids.dedup();
            for t in type_ids {
                if view.hidden.contains(&t) {
                    continue;
                }
                let kept = totals.and_then(|x| x.containers[ci].iter().find(|(u, _)| *u == t));
                let by_code: Vec<(u32, (i64, u64))> = match kept {
                    Some((_, v)) => v.iter().map(|&(code, d, n)| (code, (d, n))).collect(),
                    None => self.type_totals(c, t, range).into_iter().collect(),
                };
                // Values of one name count as one (an alias and a name).
                let mut by_name: BTreeMap<Arc<str>, (i64, u64)> = BTreeMap::new();
                for (code, (d, n)) in by_code {
                    let name = self
                        .values
                        .get(code as usize)
                        .map_or_else(|| Arc::from("?"), |v| v.name.clone());
                    let e = by_name.entry(name).or_default();
                    e.0 += d;
                    e.1 += n;
                }
                let mut values: Vec<(Arc<str>, i64, u64)> = by_name
                    .into_iter()
                    .filter(|(_, v)| v.1 > 0 || v.0 != 0)
                    .map(|(name, (d, n))| (name, d, n))
                    .collect();
                if values.is_empty() {
                    continue;
                }
                // Longest first; by name among equals (the map's order).
                values.sort_by_key(|v| std::cmp::Reverse(v.1));
                rows += 1 + values.len();
                types.push(TypeRow {
                    name: self.types[t.0 as usize].name.clone(),
                    time: values.iter().map(|v| v.1).sum(),
                    states: values.iter().map(|v| v.2).sum(),
                    values,
                });
            }
            if !types.is_empty() {
                rows += 1;
                containers.push(ContainerRow {
                    name: c.name.clone(),
                    types,
                });
            }
        }
        let types: usize = containers.iter().map(|c| c.types.len()).sum();
        let open_depth = if rows <= OPEN_ROWS {
            u16::MAX
        } else if containers.len() + types <= OPEN_ROWS {
            1
        } else {
            0
        };
        PajeStatistics {
            columns: vec!["Time".to_string(), "%".to_string(), "States".to_string()],
            span: range.span().max(1) as f64,
            containers,
            open_depth,
        }
    }

    /// The statistics table of `range`: container, state type, value;
    /// time, share of the range, number of states (every row of
    /// [`statistics_tree`](Self::statistics_tree), for an export).
    pub fn statistics(&self, range: TimeRange, view: &PajeView) -> StatisticsRender {
        let tree = self.statistics_tree(range, view);
        let mut b = StatisticsBuilder::new(tree.name_title(), tree.columns.clone());
        let mut kids = Vec::new();
        let mut grandkids = Vec::new();
        let mut leaves = Vec::new();
        tree.children(None, &mut kids);
        for c in kids.drain(..) {
            b.push(0, &c.label, c.values);
            tree.children(Some(c.id), &mut grandkids);
            for t in grandkids.drain(..) {
                b.push(1, &t.label, t.values);
                tree.children(Some(t.id), &mut leaves);
                for v in leaves.drain(..) {
                    b.push(2, &v.label, v.values);
                }
            }
        }
        b.build()
    }
}

/// Rows of a [`PajeStatistics`] up to which all are shown expanded at
/// first; a larger tree (a trace of thousands of containers) opens with
/// its values, or its state types too, collapsed, so that a view never
/// lays out hundreds of thousands of rows nobody asked for.
pub const OPEN_ROWS: usize = 20_000;

/// The statistics of a Pajé trace over a range, as ViTE's statistics
/// plugin gives them (container, state type, value; time, share of the
/// range, number of states), as a tree a view reads lazily: rows are made
/// only for what it shows expanded. A table of every row of a 4 GB
/// generated trace (20,000 containers) took 50 MB, and the view's copy of
/// it 37 MB more.
#[derive(Debug)]
pub struct PajeStatistics {
    columns: Vec<String>,
    /// The range's length (ns), for the shares.
    span: f64,
    /// The containers with states in the range, in creation order.
    containers: Vec<ContainerRow>,
    open_depth: u16,
}

#[derive(Debug)]
struct ContainerRow {
    name: Arc<str>,
    types: Vec<TypeRow>,
}

#[derive(Debug)]
struct TypeRow {
    name: Arc<str>,
    /// Time in states of the type.
    time: i64,
    /// Number of states.
    states: u64,
    /// Per value: name, time, number of states; longest first.
    values: Vec<(Arc<str>, i64, u64)>,
}

/// Bits of a row id that say which state type of its container it is
/// (0: the container's row).
const TYPE_BITS: u32 = 20;

impl PajeStatistics {
    fn timed(&self, time: i64, states: u64) -> Vec<StatValue> {
        vec![
            StatValue::Duration(time),
            StatValue::Percent(100.0 * time as f64 / self.span),
            StatValue::Count(states),
        ]
    }
}

impl StatisticsTree for PajeStatistics {
    fn name_title(&self) -> &str {
        "Container / state type / value"
    }

    fn columns(&self) -> &[String] {
        &self.columns
    }

    fn open_depth(&self) -> u16 {
        self.open_depth
    }

    fn children(&self, parent: Option<u64>, out: &mut Vec<StatisticsTreeRow>) {
        let Some(id) = parent else {
            // A container's row counts its states, so that a tree opened
            // collapsed still sorts its containers by activity; a time
            // would add up state types, which is no share of the range.
            out.extend(
                self.containers
                    .iter()
                    .enumerate()
                    .map(|(ci, c)| StatisticsTreeRow {
                        id: (ci as u64) << TYPE_BITS,
                        label: c.name.to_string(),
                        values: vec![
                            StatValue::Empty,
                            StatValue::Empty,
                            StatValue::Count(c.types.iter().map(|t| t.states).sum()),
                        ],
                        has_children: true,
                    }),
            );
            return;
        };
        let Some(c) = self.containers.get((id >> TYPE_BITS) as usize) else {
            return;
        };
        match (id & ((1 << TYPE_BITS) - 1)) as usize {
            0 => out.extend(c.types.iter().enumerate().map(|(ti, t)| StatisticsTreeRow {
                id: id | (ti as u64 + 1),
                label: t.name.to_string(),
                values: self.timed(t.time, t.states),
                has_children: true,
            })),
            ti => {
                let Some(t) = c.types.get(ti - 1) else { return };
                out.extend(t.values.iter().map(|(name, d, n)| StatisticsTreeRow {
                    id: 0,
                    label: name.to_string(),
                    values: self.timed(*d, *n),
                    has_children: false,
                }));
            }
        }
    }
}
