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
use traceloom_base::{Time, TimeRange};
use traceloom_paje::TypeId;

use crate::model::column::ColumnReader;
use crate::model::paje_analysis::{ContainerData, Lane, PajeData};
use crate::model::paje_render::PajeView;
use crate::model::steps::NONE;
use crate::render::{StatRow, StatValue, StatisticsRender};

/// Time per value of one state type of one container.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeStats {
    /// Value name → (time in ns, number of states).
    pub values: BTreeMap<String, (i64, u64)>,
}

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

    /// Per container (in tree order of creation) and state type, the time
    /// per value over `range` (see the module doc): from the kept
    /// [`StateTotals`] when `range` holds every state.
    pub fn state_statistics(
        &self,
        range: TimeRange,
        view: &PajeView,
    ) -> Vec<(String, Vec<(String, TypeStats)>)> {
        let totals = self
            .totals
            .as_deref()
            .filter(|t| t.covers(range) && t.containers.len() == self.containers.len());
        let mut out = Vec::new();
        for (ci, c) in self.containers.iter().enumerate() {
            let mut per_type: Vec<(String, TypeStats)> = Vec::new();
            let mut types: Vec<_> = c.lanes.iter().map(|l| l.type_id).collect();
            types.dedup();
            for t in types {
                if view.hidden.contains(&t) {
                    continue;
                }
                let kept = totals.and_then(|x| x.containers[ci].iter().find(|(u, _)| *u == t));
                let by_code: Vec<(u32, (i64, u64))> = match kept {
                    Some((_, v)) => v.iter().map(|&(code, d, n)| (code, (d, n))).collect(),
                    None => self.type_totals(c, t, range).into_iter().collect(),
                };
                let mut stats = TypeStats::default();
                for (code, (d, n)) in by_code {
                    let name = self
                        .values
                        .get(code as usize)
                        .map_or_else(|| "?".to_string(), |v| v.name.to_string());
                    let e = stats.values.entry(name).or_default();
                    e.0 += d;
                    e.1 += n;
                }
                stats.values.retain(|_, v| v.1 > 0 || v.0 != 0);
                if !stats.values.is_empty() {
                    per_type.push((self.types[t.0 as usize].name.to_string(), stats));
                }
            }
            if !per_type.is_empty() {
                out.push((c.name.to_string(), per_type));
            }
        }
        out
    }

    /// The statistics table of `range`: container, state type, value;
    /// time, share of the range, number of states.
    pub fn statistics(&self, range: TimeRange, view: &PajeView) -> StatisticsRender {
        let span = range.span().max(1) as f64;
        let mut rows = Vec::new();
        for (container, types) in self.state_statistics(range, view) {
            rows.push(StatRow {
                depth: 0,
                label: container,
                values: vec![StatValue::Empty, StatValue::Empty, StatValue::Empty],
            });
            for (ty, stats) in types {
                let total: i64 = stats.values.values().map(|v| v.0).sum();
                let count: u64 = stats.values.values().map(|v| v.1).sum();
                rows.push(StatRow {
                    depth: 1,
                    label: ty,
                    values: vec![
                        StatValue::Duration(total),
                        StatValue::Percent(100.0 * total as f64 / span),
                        StatValue::Count(count),
                    ],
                });
                let mut values: Vec<_> = stats.values.into_iter().collect();
                values.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)));
                for (v, (d, n)) in values {
                    rows.push(StatRow {
                        depth: 2,
                        label: v,
                        values: vec![
                            StatValue::Duration(d),
                            StatValue::Percent(100.0 * d as f64 / span),
                            StatValue::Count(n),
                        ],
                    });
                }
            }
        }
        StatisticsRender::from_rows(
            "Container / state type / value",
            vec!["Time".to_string(), "%".to_string(), "States".to_string()],
            rows,
        )
    }
}
