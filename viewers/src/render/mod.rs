//! Render objects: immutable snapshots a model produces for one time range
//! and pixel width, and that any view (GUI, PNG, SVG) draws.
//!
//! Everything is shared through `Arc`, so cloning a render is a few
//! reference-count increments, and each render carries a content hash so
//! that comparing two renders (or two trees, to redraw the tree column only
//! when it changed) costs a couple of integer comparisons.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use traceloom_base::Time;
use traceloom_base::TimeRange;
use traceloom_base::{FastHasher, FastMap, FastSet};

use crate::lod::{ArrowsBuilder, CounterBuilder, RowEventsBuilder, RowIntervalsBuilder};
use crate::style::{DataConfig, TreeOrder};
use crate::time::PixelScale;

mod statistics;
pub(crate) mod types;

pub use statistics::{
    ArrangedStatistics, Expander, ShownRow, StatRow, StatValue, StatisticsArrangement,
    StatisticsBuilder, StatisticsRender, StatisticsTable, StatisticsTree, StatisticsTreeRow,
    TableTree,
};

pub use types::{
    Arrow, ArrowEnd, ArrowSeries, Counter, CounterSample, DrawnEvent, ItemDetails, Properties,
    PropertiesWriter, RowId, StateInterval, StyleKey,
};

/// One row of the tree column, in display order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TreeRow {
    /// Stable id.
    pub id: RowId,
    /// Parent row, if any.
    pub parent: Option<RowId>,
    /// Text shown in the tree column (shared with the model's node: a
    /// tree of 80,000 rows is made at every change of its configuration).
    pub label: Arc<str>,
    /// Indentation level (0 = top).
    pub depth: u16,
    /// Whether the row has children (shown or collapsed).
    pub has_children: bool,
    /// Whether its children are shown.
    pub expanded: bool,
    /// Extra information for tooltips (PPID, birth time, trace...).
    pub properties: Properties,
}

/// Snapshot of the tree column: rows in display order. The state, event and
/// counter lists of a [`TimeGraphRender`] are indexed like these rows.
#[derive(Debug, Clone)]
pub struct TreeRender {
    rows: Arc<[TreeRow]>,
    index: Arc<FastMap<RowId, usize>>,
    hash: u64,
}

impl TreeRender {
    /// A tree from rows already in display order.
    pub fn new(rows: Vec<TreeRow>) -> Self {
        // A fast hasher: the hash only detects changes within the process.
        let mut h = FastHasher::default();
        rows.hash(&mut h);
        let index = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        TreeRender {
            rows: rows.into(),
            index: Arc::new(index),
            hash: h.finish(),
        }
    }

    /// The rows, in display order.
    pub fn rows(&self) -> &[TreeRow] {
        &self.rows
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Display index of row `id`, if shown.
    pub fn index_of(&self, id: RowId) -> Option<usize> {
        self.index.get(&id).copied()
    }

    /// Content hash: equal trees have equal hashes.
    pub fn content_hash(&self) -> u64 {
        self.hash
    }
}

impl PartialEq for TreeRender {
    /// Equality by content hash (64-bit [`FastHasher`] over every row): a view
    /// compares the new render's tree with the one it drew to decide whether
    /// to redraw the tree column, in constant time.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows)
            || (self.hash == other.hash && self.rows.len() == other.rows.len())
    }
}

impl Eq for TreeRender {}

/// A node handed to [`TreeBuilder`], in any order.
#[derive(Debug, Clone)]
pub struct TreeNode {
    /// Stable id.
    pub id: RowId,
    /// Parent, if any (unknown parents make the node a root).
    pub parent: Option<RowId>,
    /// Text of the row.
    pub label: Arc<str>,
    /// Tooltip information.
    pub properties: Properties,
}

/// Builds a [`TreeRender`] from unordered nodes, applying the data
/// configuration: flattening, sibling order, collapsed and hidden rows.
///
/// The control flow view gives each thread its process's main thread as
/// parent (two levels, as `htop` shows them); the builder does not limit the
/// depth itself.
#[derive(Debug, Default, Clone)]
pub struct TreeBuilder {
    nodes: Vec<TreeNode>,
    index: FastMap<RowId, usize>,
}

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        TreeBuilder::default()
    }

    /// An empty builder with room for `nodes` nodes.
    pub fn with_capacity(nodes: usize) -> Self {
        TreeBuilder {
            nodes: Vec::with_capacity(nodes),
            index: FastMap::with_capacity_and_hasher(nodes, Default::default()),
        }
    }

    /// Adds a node (a later node with the same id replaces the earlier one,
    /// keeping its insertion place).
    pub fn add(&mut self, node: TreeNode) -> &mut Self {
        match self.index.get(&node.id) {
            Some(&i) => self.nodes[i] = node,
            None => {
                self.index.insert(node.id, self.nodes.len());
                self.nodes.push(node);
            }
        }
        self
    }

    /// Rows in display order for `config`, with no weights (see
    /// [`build_weighted`](Self::build_weighted)).
    pub fn build(&self, config: &DataConfig) -> TreeRender {
        self.build_weighted(config, None)
    }

    /// Rows in display order for `config`, where the model knows a weight
    /// for each row in the window rendered (`weights`, by row id; absent
    /// rows weigh 0): [`TreeOrder::Weight`] sorts by it and
    /// [`DataConfig::hide_idle`] hides the rows that weigh 0. The row
    /// filter and `hide_idle` keep the ancestors of the rows they keep, so
    /// that a matching thread is still shown under its process.
    pub fn build_weighted(
        &self,
        config: &DataConfig,
        weights: Option<&HashMap<RowId, u64>>,
    ) -> TreeRender {
        let weight = |id: &RowId| weights.and_then(|w| w.get(id)).copied().unwrap_or(0);
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        let nodes = &self.nodes;
        match config.order {
            TreeOrder::Insertion => {}
            TreeOrder::Id => order.sort_by_key(|&i| nodes[i].id),
            TreeOrder::Label => order.sort_by(|&a, &b| {
                nodes[a]
                    .label
                    .cmp(&nodes[b].label)
                    .then(nodes[a].id.cmp(&nodes[b].id))
            }),
            TreeOrder::Weight => order.sort_by(|&a, &b| {
                weight(&nodes[b].id)
                    .cmp(&weight(&nodes[a].id))
                    .then(nodes[a].id.cmp(&nodes[b].id))
            }),
        }
        let filter = row_matcher(&config.row_filter);
        let keep = |n: &TreeNode| {
            filter.as_ref().is_none_or(|re| {
                re.is_match(&n.label) || n.properties.iter().any(|(_, v)| re.is_match(v))
            }) && (!config.hide_idle || weight(&n.id) > 0)
        };
        if filter.is_none() && !config.hide_idle {
            return self.build_rows(config, &order, &config.hidden);
        }
        // Rows neither kept nor above a kept row are hidden.
        let mut shown: FastSet<RowId> = FastSet::default();
        let parent: FastMap<RowId, RowId> = nodes
            .iter()
            .filter_map(|n| n.parent.filter(|p| *p != n.id).map(|p| (n.id, p)))
            .collect();
        for n in nodes.iter().filter(|n| keep(n)) {
            let mut cur = Some(n.id);
            // Bounded walk: parent cycles end it.
            let mut steps = 0;
            while let Some(id) = cur {
                if !shown.insert(id) || steps > nodes.len() {
                    break;
                }
                steps += 1;
                cur = if config.flatten {
                    None
                } else {
                    parent.get(&id).copied()
                };
            }
        }
        let mut hidden = config.hidden.clone();
        hidden.extend(nodes.iter().map(|n| n.id).filter(|id| !shown.contains(id)));
        self.build_rows(config, &order, &hidden)
    }

    fn build_rows(
        &self,
        config: &DataConfig,
        order: &[usize],
        hidden: &HashSet<RowId>,
    ) -> TreeRender {
        let ids: FastSet<RowId> = self.nodes.iter().map(|n| n.id).collect();
        let nodes = &self.nodes;
        let mut rows = Vec::with_capacity(self.nodes.len());
        if config.flatten {
            for &i in order {
                let n = &nodes[i];
                if hidden.contains(&n.id) {
                    continue;
                }
                rows.push(root_row(n));
            }
            return TreeRender::new(rows);
        }
        // A parent that is itself, or not among the nodes, makes a root.
        let parent_of = |n: &TreeNode| n.parent.filter(|p| *p != n.id && ids.contains(p));
        let mut children: FastMap<RowId, Vec<usize>> = FastMap::default();
        let mut roots = Vec::new();
        for &i in order {
            match parent_of(&nodes[i]) {
                Some(p) => children.entry(p).or_default().push(i),
                None => roots.push(i),
            }
        }
        let mut visited = FastSet::default();
        // Depth-first, iterative: traces can have deep fork chains.
        let mut stack: Vec<(usize, u16)> = roots.iter().rev().map(|&i| (i, 0)).collect();
        while let Some((i, depth)) = stack.pop() {
            let n = &nodes[i];
            if !visited.insert(n.id) || hidden.contains(&n.id) {
                continue;
            }
            let kids = children.get(&n.id);
            let has_children = kids.is_some_and(|k| !k.is_empty());
            let expanded = has_children && !config.collapsed.contains(&n.id);
            rows.push(TreeRow {
                id: n.id,
                parent: parent_of(n),
                label: n.label.clone(),
                depth,
                has_children,
                expanded,
                properties: n.properties.clone(),
            });
            if expanded {
                for &k in kids.into_iter().flatten().rev() {
                    stack.push((k, depth.saturating_add(1)));
                }
            }
        }
        // Nodes caught in a parent cycle are reachable from no root: show
        // them at the top rather than lose them.
        if visited.len() < ids.len() {
            let by_id: FastMap<RowId, &TreeNode> = nodes.iter().map(|n| (n.id, n)).collect();
            for &i in order {
                let n = &nodes[i];
                if !visited.contains(&n.id)
                    && !hidden.contains(&n.id)
                    && !Self::under_collapsed_or_hidden(&by_id, n, config, hidden, &ids)
                {
                    visited.insert(n.id);
                    rows.push(root_row(n));
                }
            }
        }
        TreeRender::new(rows)
    }

    fn under_collapsed_or_hidden(
        by_id: &FastMap<RowId, &TreeNode>,
        n: &TreeNode,
        config: &DataConfig,
        hidden: &HashSet<RowId>,
        ids: &FastSet<RowId>,
    ) -> bool {
        let mut seen = HashSet::new();
        let mut cur = n.parent.filter(|p| ids.contains(p));
        while let Some(p) = cur {
            if !seen.insert(p) {
                // A cycle: not under anything collapsed.
                return false;
            }
            if config.collapsed.contains(&p) || hidden.contains(&p) {
                return true;
            }
            cur = by_id.get(&p).and_then(|n| n.parent);
        }
        false
    }
}

/// Node `n` as a top-level row without children (a flat tree's rows,
/// rows caught in a parent cycle).
fn root_row(n: &TreeNode) -> TreeRow {
    TreeRow {
        id: n.id,
        parent: None,
        label: n.label.clone(),
        depth: 0,
        has_children: false,
        expanded: false,
        properties: n.properties.clone(),
    }
}

/// The matcher of a rows filter: `pattern` as a case-insensitive regular
/// expression, or as a plain substring when it is not a valid one (a user
/// typing `gcc++` or `[1` means the text); `None` for an empty pattern.
pub fn row_matcher(pattern: &str) -> Option<regex::Regex> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return None;
    }
    let build = |p: &str| {
        regex::RegexBuilder::new(p)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
    };
    build(pattern)
        .or_else(|_| build(&regex::escape(pattern)))
        .ok()
}

/// Everything a time-graph view (control flow, resources, Pajé) draws for
/// one time range: tree, per-row state intervals and events, arrows,
/// counters.
#[derive(Debug, Clone)]
pub struct TimeGraphRender {
    scale: PixelScale,
    tree: TreeRender,
    /// The intervals of the materialized rows, the first row's first.
    states: Arc<[Arc<[StateInterval]>]>,
    /// The drawn events of the materialized rows, the first row's first.
    events: Arc<[Arc<[DrawnEvent]>]>,
    arrows: Arc<[ArrowSeries]>,
    counters: Arc<[Counter]>,
    /// Properties made on demand, for models whose items carry none.
    details: Option<Arc<dyn ItemDetails>>,
    /// Rows whose intervals and events were made (display indices).
    materialized: std::ops::Range<usize>,
    hash: u64,
}

impl TimeGraphRender {
    /// The rows (display indices) whose intervals and events the render
    /// holds: every row, or those a view shows and a margin when the
    /// render was made for them (the others are empty, not idle).
    pub fn materialized(&self) -> std::ops::Range<usize> {
        self.materialized.clone()
    }

    /// The time range and pixel width the render was made for.
    pub fn scale(&self) -> PixelScale {
        self.scale
    }

    /// The time range the render covers.
    pub fn range(&self) -> TimeRange {
        self.scale.range
    }

    /// The tree column.
    pub fn tree(&self) -> &TreeRender {
        &self.tree
    }

    /// State intervals of the row at display index `row` (time order).
    pub fn states(&self, row: usize) -> &[StateInterval] {
        self.materialized_index(row)
            .and_then(|i| self.states.get(i))
            .map(|a| &a[..])
            .unwrap_or(&[])
    }

    /// Drawn events of the row at display index `row` (time order).
    pub fn events(&self, row: usize) -> &[DrawnEvent] {
        self.materialized_index(row)
            .and_then(|i| self.events.get(i))
            .map(|a| &a[..])
            .unwrap_or(&[])
    }

    /// Where the row at display index `row` is among the materialized.
    fn materialized_index(&self, row: usize) -> Option<usize> {
        self.materialized
            .contains(&row)
            .then(|| row - self.materialized.start)
    }

    /// Arrow series.
    pub fn arrow_series(&self) -> &[ArrowSeries] {
        &self.arrows
    }

    /// Counters.
    pub fn counters(&self) -> &[Counter] {
        &self.counters
    }

    /// Content hash of the whole render.
    pub fn content_hash(&self) -> u64 {
        self.hash
    }

    /// Tooltip properties of interval `index` of the row at display index
    /// `row`: its own, else those its model makes on demand.
    pub fn interval_properties(&self, row: usize, index: usize) -> Properties {
        let Some(iv) = self.states(row).get(index) else {
            return Properties::none();
        };
        match (&self.details, self.tree.rows().get(row)) {
            (Some(d), Some(r)) if iv.properties.is_empty() => d.interval(r.id, iv),
            _ => iv.properties.clone(),
        }
    }

    /// Tooltip properties of drawn event `index` of the row at display
    /// index `row`: its own, else those its model makes on demand.
    pub fn event_properties(&self, row: usize, index: usize) -> Properties {
        let Some(ev) = self.events(row).get(index) else {
            return Properties::none();
        };
        match (&self.details, self.tree.rows().get(row)) {
            (Some(d), Some(r)) if ev.properties.is_empty() => d.event(r.id, ev),
            _ => ev.properties.clone(),
        }
    }

    /// Every state key used by the intervals, in first-use order.
    pub fn used_states(&self) -> Vec<StyleKey> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for row in self.states.iter() {
            for iv in row.iter() {
                if seen.insert(iv.state.clone()) {
                    out.push(iv.state.clone());
                }
            }
        }
        out
    }

    /// Every event kind used, in first-use order.
    pub fn used_event_kinds(&self) -> Vec<StyleKey> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for row in self.events.iter() {
            for e in row.iter() {
                if seen.insert(e.kind.clone()) {
                    out.push(e.kind.clone());
                }
            }
        }
        out
    }

    /// Whether any interval stands for several merged intervals.
    pub fn has_mixed(&self) -> bool {
        self.states.iter().any(|r| r.iter().any(|i| i.is_mixed()))
    }
}

impl PartialEq for TimeGraphRender {
    /// Equality by content hash, after the cheap checks.
    fn eq(&self, other: &Self) -> bool {
        self.scale == other.scale && self.tree == other.tree && self.hash == other.hash
    }
}

/// One materialized row of a [`TimeGraphRenderBuilder`]: its builders,
/// then, once finished, its lists and their digest (part of the render's
/// content hash).
#[derive(Debug)]
pub struct RowSlot {
    /// The row's state intervals.
    pub intervals: RowIntervalsBuilder,
    /// The row's drawn events.
    pub events: RowEventsBuilder,
    scale: PixelScale,
    finished: Option<FinishedRow>,
}

/// A finished row: its lists and their digest.
type FinishedRow = (Arc<[StateInterval]>, Arc<[DrawnEvent]>, u64);

impl RowSlot {
    fn new(scale: PixelScale) -> Self {
        RowSlot {
            intervals: RowIntervalsBuilder::new(scale),
            events: RowEventsBuilder::new(scale),
            scale,
            finished: None,
        }
    }

    /// Makes the row's lists now (the render's build makes those of the
    /// rows not finished yet): a model filling rows on several threads
    /// finishes each on the thread that filled it, where its items are in
    /// the cache. Nothing pushed afterwards is kept.
    pub fn finish(&mut self) {
        if self.finished.is_none() {
            self.finished = Some(self.make());
        }
    }

    fn take_finished(&mut self) -> FinishedRow {
        match self.finished.take() {
            Some(f) => f,
            None => self.make(),
        }
    }

    fn make(&mut self) -> FinishedRow {
        let scale = self.scale;
        let intervals = std::mem::replace(&mut self.intervals, RowIntervalsBuilder::new(scale));
        let events = std::mem::replace(&mut self.events, RowEventsBuilder::new(scale));
        let states: Arc<[StateInterval]> = intervals.finish().into();
        let events: Arc<[DrawnEvent]> = events.finish().into();
        let d = digest(&states, &events);
        (states, events, d)
    }
}

/// The digest of a row's states and events: a fast hasher, since it only
/// detects changes within the process, over four lanes of items hashed
/// in turn. Each item hashed feeds its lane's state to a multiply, one
/// after the other: four independent lanes let the processor overlap
/// them (a full-range render of the 8 GB benchmark trace's busiest rows
/// spent 9 % of its time hashing them in one lane).
fn digest(states: &[StateInterval], events: &[DrawnEvent]) -> u64 {
    let mut lanes: [FastHasher; 4] = Default::default();
    for (k, s) in states.iter().enumerate() {
        s.hash(&mut lanes[k % 4]);
    }
    for (k, e) in events.iter().enumerate() {
        e.hash(&mut lanes[k % 4]);
    }
    let mut h = FastHasher::default();
    (states.len(), events.len()).hash(&mut h);
    for lane in &lanes {
        h.write_u64(lane.finish());
    }
    h.finish()
}

/// Assembles a [`TimeGraphRender`] for a time range and pixel width; every
/// row's intervals and events go through level-of-detail builders, so the
/// render holds O(rows × width) items whatever the input size.
///
/// Only the materialized rows have builders and lists: a view showing 50
/// rows of a tree of 80,000 thread records (an 8 GB kernel trace) made
/// 160,000 empty lists a render, most of its cost, before they did.
#[derive(Debug)]
pub struct TimeGraphRenderBuilder {
    scale: PixelScale,
    tree: TreeRender,
    /// The materialized rows, the first row's first (made on first use,
    /// once the rows are known).
    rows: Vec<RowSlot>,
    /// What a row that is not materialized is given, and forgets.
    discarded: RowSlot,
    arrows: Vec<(StyleKey, ArrowsBuilder)>,
    counters: Vec<(StyleKey, Option<RowId>, CounterBuilder)>,
    details: Option<Arc<dyn ItemDetails>>,
    materialized: std::ops::Range<usize>,
}

impl TimeGraphRenderBuilder {
    /// A builder for `tree` over `range` drawn `width_px` pixels wide.
    pub fn new(tree: TreeRender, range: TimeRange, width_px: u32) -> Self {
        let scale = PixelScale::new(range, width_px);
        let n = tree.len();
        TimeGraphRenderBuilder {
            scale,
            rows: Vec::new(),
            discarded: RowSlot::new(scale),
            tree,
            arrows: Vec::new(),
            counters: Vec::new(),
            details: None,
            materialized: 0..n,
        }
    }

    /// Says the render holds the intervals and events of `rows` only
    /// (clamped to the tree); its model fills no other row. Said before
    /// anything is pushed: what was pushed to a row before is dropped.
    pub fn materialize_only(&mut self, rows: std::ops::Range<usize>) {
        let n = self.tree.len();
        let start = rows.start.min(n);
        self.materialized = start..rows.end.min(n).max(start);
        self.rows.clear();
    }

    /// Index of the row at display index `row` among the builders (made
    /// now if they are not yet), or `None` if it is not materialized.
    fn builder_index(&mut self, row: usize) -> Option<usize> {
        if !self.materialized.contains(&row) {
            return None;
        }
        if self.rows.is_empty() {
            let (n, scale) = (self.materialized.len(), self.scale);
            self.rows = (0..n).map(|_| RowSlot::new(scale)).collect();
        }
        Some(row - self.materialized.start)
    }

    /// The rows to fill (every row unless
    /// [`materialize_only`](Self::materialize_only) said otherwise).
    pub fn materialized(&self) -> std::ops::Range<usize> {
        self.materialized.clone()
    }

    /// The grid the render is made for.
    pub fn scale(&self) -> PixelScale {
        self.scale
    }

    /// The tree.
    pub fn tree(&self) -> &TreeRender {
        &self.tree
    }

    /// Interval builder of the row at display index `row`; what is
    /// pushed to a row that is not materialized (or not in the tree) is
    /// dropped.
    pub fn intervals(&mut self, row: usize) -> &mut RowIntervalsBuilder {
        match self.builder_index(row) {
            Some(i) => &mut self.rows[i].intervals,
            None => {
                self.discarded = RowSlot::new(self.scale);
                &mut self.discarded.intervals
            }
        }
    }

    /// Event builder of the row at display index `row`; what is pushed to
    /// a row that is not materialized (or not in the tree) is dropped.
    pub fn events(&mut self, row: usize) -> &mut RowEventsBuilder {
        match self.builder_index(row) {
            Some(i) => &mut self.rows[i].events,
            None => {
                self.discarded = RowSlot::new(self.scale);
                &mut self.discarded.events
            }
        }
    }

    /// Every materialized row, the first row's first (display index
    /// [`materialized`](Self::materialized)`().start`): a model can fill
    /// disjoint runs of rows on several threads, and finish each row
    /// there ([`RowSlot::finish`]).
    pub fn row_slots(&mut self) -> &mut [RowSlot] {
        if let Some(first) = self.materialized.clone().next() {
            self.builder_index(first);
        }
        &mut self.rows
    }

    /// Interval builder of row `id`, if the row is shown and materialized.
    pub fn intervals_of(&mut self, id: RowId) -> Option<&mut RowIntervalsBuilder> {
        let i = self.builder_index(self.tree.index_of(id)?)?;
        Some(&mut self.rows[i].intervals)
    }

    /// Event builder of row `id`, if the row is shown and materialized.
    pub fn events_of(&mut self, id: RowId) -> Option<&mut RowEventsBuilder> {
        let i = self.builder_index(self.tree.index_of(id)?)?;
        Some(&mut self.rows[i].events)
    }

    /// Builder of arrow series `name` (created on first use).
    pub fn arrows(&mut self, name: impl Into<StyleKey>) -> &mut ArrowsBuilder {
        let name = name.into();
        let i = match self.arrows.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                self.arrows.push((name, ArrowsBuilder::new(self.scale)));
                self.arrows.len() - 1
            }
        };
        &mut self.arrows[i].1
    }

    /// Builder of counter `name` drawn in row `row` (`None`: its own row),
    /// created on first use.
    pub fn counter(
        &mut self,
        name: impl Into<StyleKey>,
        row: Option<RowId>,
    ) -> &mut CounterBuilder {
        let name = name.into();
        let i = match self
            .counters
            .iter()
            .position(|(n, r, _)| *n == name && *r == row)
        {
            Some(i) => i,
            None => {
                self.counters
                    .push((name, row, CounterBuilder::new(self.scale)));
                self.counters.len() - 1
            }
        };
        &mut self.counters[i].2
    }

    /// Makes the tooltip properties of the items pushed without any on
    /// demand, from `details` (see [`ItemDetails`]).
    pub fn set_details(&mut self, details: Arc<dyn ItemDetails>) {
        self.details = Some(details);
    }

    /// The immutable render.
    pub fn build(mut self) -> TimeGraphRender {
        if let Some(first) = self.materialized.clone().next() {
            // Every materialized row has its (maybe empty) lists.
            self.builder_index(first);
        }
        let tree = self.tree;
        let mut states = Vec::with_capacity(self.rows.len());
        let mut events = Vec::with_capacity(self.rows.len());
        let mut digests = Vec::with_capacity(self.rows.len());
        for mut slot in self.rows {
            let (s, e, d) = slot.take_finished();
            states.push(s);
            events.push(e);
            digests.push(d);
        }
        let states: Arc<[Arc<[StateInterval]>]> = states.into();
        let events: Arc<[Arc<[DrawnEvent]>]> = events.into();
        let arrows: Arc<[ArrowSeries]> = self
            .arrows
            .into_iter()
            .map(|(name, b)| ArrowSeries {
                name,
                arrows: b.finish().into(),
            })
            .collect();
        let counters: Arc<[Counter]> = self
            .counters
            .into_iter()
            .map(|(name, row, b)| Counter {
                name,
                row,
                samples: b.finish().into(),
            })
            .collect();
        // The rows' digests stand for their intervals and events (hashed
        // where each row was finished). A fast hasher: the hash only
        // detects changes within the process.
        let mut h = FastHasher::default();
        self.scale.hash(&mut h);
        self.materialized.hash(&mut h);
        tree.content_hash().hash(&mut h);
        digests.hash(&mut h);
        arrows.hash(&mut h);
        for c in counters.iter() {
            c.name.hash(&mut h);
            c.row.hash(&mut h);
            for s in c.samples.iter() {
                s.time.hash(&mut h);
                s.value.to_bits().hash(&mut h);
                s.min.to_bits().hash(&mut h);
                s.max.to_bits().hash(&mut h);
            }
        }
        TimeGraphRender {
            scale: self.scale,
            tree,
            states,
            events,
            arrows,
            counters,
            details: self.details,
            materialized: self.materialized,
            hash: h.finish(),
        }
    }
}

/// Event counts over a time range, in equal bins (LTTV's histogram view).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramRender {
    range: TimeRange,
    bins: Arc<[u64]>,
    lost: Arc<[u64]>,
    /// The highlighted window (the time range other views show).
    pub highlight: Option<TimeRange>,
}

impl HistogramRender {
    /// The time range the bins cover.
    pub fn range(&self) -> TimeRange {
        self.range
    }

    /// Event count per bin.
    pub fn bins(&self) -> &[u64] {
        &self.bins
    }

    /// Lost-event count per bin (same length as the bins).
    pub fn lost(&self) -> &[u64] {
        &self.lost
    }

    /// Time range of bin `i`.
    pub fn bin_range(&self, i: usize) -> TimeRange {
        let n = self.bins.len().max(1) as i128;
        let span = self.range.span() as i128;
        let s = self.range.start as i128 + span * i as i128 / n;
        let e = self.range.start as i128 + span * (i as i128 + 1) / n;
        TimeRange::new(s as Time, e as Time)
    }

    /// Largest bin count.
    pub fn max_count(&self) -> u64 {
        self.bins.iter().copied().max().unwrap_or(0)
    }
}

/// Counts events into the bins of a [`HistogramRender`].
#[derive(Debug, Clone)]
pub struct HistogramBuilder {
    scale: PixelScale,
    bins: Vec<u64>,
    lost: Vec<u64>,
}

impl HistogramBuilder {
    /// `nbins` bins (at least one) over `range`.
    pub fn new(range: TimeRange, nbins: u32) -> Self {
        let scale = PixelScale::new(range, nbins);
        HistogramBuilder {
            scale,
            bins: vec![0; scale.width as usize],
            lost: vec![0; scale.width as usize],
        }
    }

    /// Counts one event at `t` (ignored outside the range).
    pub fn add(&mut self, t: Time) {
        self.add_count(t, 1);
    }

    /// Counts `n` events at `t` (ignored outside the range).
    pub fn add_count(&mut self, t: Time, n: u64) {
        if self.scale.range.contains(t) {
            let b = self.scale.pixel_of(t) as usize;
            self.bins[b] = self.bins[b].saturating_add(n);
        }
    }

    /// Records `n` lost events reported at `t` (discarded-events counters of
    /// CTF packets).
    pub fn add_lost(&mut self, t: Time, n: u64) {
        if self.scale.range.contains(t) {
            let b = self.scale.pixel_of(t) as usize;
            self.lost[b] = self.lost[b].saturating_add(n);
        }
    }

    /// The render, highlighting `highlight`.
    pub fn build(self, highlight: Option<TimeRange>) -> HistogramRender {
        HistogramRender {
            range: self.scale.range,
            bins: self.bins.into(),
            lost: self.lost.into(),
            highlight,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, parent: Option<u64>, label: &str) -> TreeNode {
        TreeNode {
            id: RowId(id),
            parent: parent.map(RowId),
            label: label.into(),
            properties: Properties::none(),
        }
    }

    fn labels(t: &TreeRender) -> Vec<(String, u16)> {
        t.rows()
            .iter()
            .map(|r| (r.label.to_string(), r.depth))
            .collect()
    }

    fn sample_tree() -> TreeBuilder {
        let mut b = TreeBuilder::new();
        b.add(node(100, None, "bash"))
            .add(node(300, None, "firefox"))
            .add(node(301, Some(300), "firefox/gmain"))
            .add(node(302, Some(300), "firefox/dbus"))
            .add(node(1, None, "init"));
        b
    }

    #[test]
    fn tree_groups_threads_under_their_process() {
        let t = sample_tree().build(&DataConfig::default());
        assert_eq!(
            labels(&t),
            vec![
                ("bash".into(), 0),
                ("firefox".into(), 0),
                ("firefox/gmain".into(), 1),
                ("firefox/dbus".into(), 1),
                ("init".into(), 0)
            ]
        );
        let ff = &t.rows()[1];
        assert!(ff.has_children && ff.expanded);
        assert_eq!(t.index_of(RowId(302)), Some(3));
    }

    #[test]
    fn tree_flatten_collapse_hide_and_order() {
        let b = sample_tree();
        let mut c = DataConfig {
            flatten: true,
            order: TreeOrder::Id,
            ..Default::default()
        };
        let t = b.build(&c);
        let ids: Vec<u64> = t.rows().iter().map(|r| r.id.0).collect();
        assert_eq!(ids, vec![1, 100, 300, 301, 302]);
        assert!(t.rows().iter().all(|r| r.depth == 0));

        c.flatten = false;
        c.order = TreeOrder::Label;
        c.collapsed.insert(RowId(300));
        let t = b.build(&c);
        assert_eq!(
            labels(&t),
            vec![
                ("bash".into(), 0),
                ("firefox".into(), 0),
                ("init".into(), 0)
            ]
        );
        assert!(t.rows()[1].has_children && !t.rows()[1].expanded);

        c.collapsed.clear();
        c.hidden.insert(RowId(301));
        c.hidden.insert(RowId(1));
        let t = b.build(&c);
        assert_eq!(
            labels(&t),
            vec![
                ("bash".into(), 0),
                ("firefox".into(), 0),
                ("firefox/dbus".into(), 1)
            ]
        );
    }

    #[test]
    fn tree_survives_parent_cycles() {
        let mut b = TreeBuilder::new();
        b.add(node(1, Some(2), "a")).add(node(2, Some(1), "b"));
        let t = b.build(&DataConfig::default());
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn tree_equality_is_by_content() {
        let a = sample_tree().build(&DataConfig::default());
        let b = sample_tree().build(&DataConfig::default());
        assert_eq!(a, b);
        let mut c = DataConfig::default();
        c.collapsed.insert(RowId(300));
        assert_ne!(a, sample_tree().build(&c));
        let mut renamed = sample_tree();
        renamed.add(node(1, None, "systemd"));
        assert_ne!(a, renamed.build(&DataConfig::default()));
    }

    /// A row's digest sees every item, in whichever lane it is hashed,
    /// and their order.
    #[test]
    fn row_digests_see_every_item_and_their_order() {
        let states: Vec<StateInterval> = (0..9)
            .map(|k| StateInterval::new(k * 10, k * 10 + 10, "run-user"))
            .collect();
        let events: Vec<DrawnEvent> = (0..6)
            .map(|k| DrawnEvent::new(k * 15, "sched_wakeup", "wakeup"))
            .collect();
        let d = digest(&states, &events);
        assert_eq!(d, digest(&states.clone(), &events.clone()));
        for k in 0..states.len() {
            let mut other = states.clone();
            other[k].state = StyleKey::from("run-syscall");
            assert_ne!(d, digest(&other, &events), "state {k}");
        }
        for k in 0..events.len() {
            let mut other = events.clone();
            other[k].count = 2;
            assert_ne!(d, digest(&states, &other), "event {k}");
        }
        let mut swapped = states.clone();
        swapped.swap(0, 4);
        assert_ne!(d, digest(&swapped, &events));
        assert_ne!(d, digest(&states[..8], &events));
        assert_ne!(d, digest(&states, &[]));
    }

    #[test]
    fn render_equality_and_cheap_clone() {
        let tree = sample_tree().build(&DataConfig::default());
        let make = |state: &str| {
            let mut b = TimeGraphRenderBuilder::new(tree.clone(), TimeRange::new(0, 1000), 100);
            b.intervals(0).push(0, 500, state);
            b.events(1)
                .push(DrawnEvent::new(20, "sched_wakeup", "wakeup"));
            b.arrows("cpu")
                .push(Arrow::new(RowId(100), 10, RowId(300), 12));
            b.counter("load", None).push(0, 1.0);
            b.build()
        };
        let a = make("run-user");
        let a2 = a.clone();
        assert!(Arc::ptr_eq(&a.states, &a2.states));
        assert_eq!(a, a2);
        assert_eq!(a, make("run-user"));
        assert_ne!(a, make("run-syscall"));
        assert_eq!(a.used_states(), vec![StyleKey::from("run-user")]);
        assert_eq!(a.states(0).len(), 1);
        assert_eq!(a.events(1).len(), 1);
        assert!(a.states(99).is_empty());
    }

    #[test]
    fn histogram_bins_and_lost() {
        let mut b = HistogramBuilder::new(TimeRange::new(0, 1000), 10);
        for t in [0, 5, 99, 100, 999, 1000, 2000] {
            b.add(t);
        }
        b.add_lost(550, 7);
        let h = b.build(Some(TimeRange::new(200, 400)));
        assert_eq!(h.bins(), &[3, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
        assert_eq!(h.lost()[5], 7);
        assert_eq!(h.max_count(), 3);
        assert_eq!(h.bin_range(1), TimeRange::new(100, 200));
    }

    #[test]
    fn properties_lookup() {
        let p = Properties::new([("tid", "42"), ("cpu", "1")]);
        assert_eq!(p.get("cpu"), Some("1"));
        assert_eq!(p.iter().count(), 2);
        assert!(Properties::new(Vec::<(String, String)>::new()).is_empty());
    }
}
