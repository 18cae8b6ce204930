//! The statistics tree of a [`Statistics`] snapshot, kept as small nodes
//! from which a view reads only the rows it expands.
//!
//! The tree is traceset → trace → CPU → process → thread → mode → event
//! name, with a summary by event name beside it. Its last level, the
//! event names, is most of its rows (a few names under every mode of
//! every thread on every CPU: 1.8 M rows on an 8 GB kernel trace of
//! 80,430 thread records), so a mode node keeps the counts of the cells it
//! sums and makes its leaves when asked; a node's label is made from what
//! it stands for when shown. Made whole, as a table at every snapshot of
//! the pass, those rows took 110–150 MB a table on the 8 GB trace, two
//! of them alive at once in the window.
//!
//! Rows are grouped by label, as a user reads them: traces of the same
//! name share their rows, and a thread renamed between two cells has a
//! row under each name. Children come in the order they are first met
//! in the cells sorted by trace, CPU, process, thread and mode.

use std::fmt::Write as _;
use std::sync::Arc;

use traceloom_base::FastMap;
use traceloom_engine::state::CpuMode;

use super::stats::{self, EventCounts, StatCell, StatNode, Statistics, EVENT_TYPES, NO_CPU};
use crate::render::StatisticsTreeRow;
use crate::render::{StatValue, StatisticsBuilder, StatisticsRender, StatisticsTree};

/// What a node stands for, from which its label is made: eight bytes,
/// the values of processes and threads kept beside the nodes.
#[derive(Debug, Clone, Copy)]
enum Label {
    Traceset,
    /// The trace's label, in [`CellTree::trace_labels`].
    Trace(u32),
    Cpu(u32),
    /// The PID, in [`CellTree::pids`].
    Process(u32),
    /// The TID and name, in [`CellTree::threads`].
    Thread(u32),
    /// A process or thread of a cell in which nothing was known to run.
    Unknown,
    Mode(CpuMode),
}

/// What a node stands for, as a cell gives it.
enum Named<'a> {
    Trace(u32),
    Cpu(u32),
    Process(i64),
    Thread(i64, &'a Arc<str>),
    Unknown,
    Mode(CpuMode),
}

/// What tells siblings apart: their labels, without making them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key<'a> {
    Trace(&'a str),
    Cpu(u32),
    Process(i64),
    Thread(i64, &'a str),
    Unknown,
    Mode(CpuMode),
}

/// No node.
const NONE: u32 = u32::MAX;

/// A node: 32 bytes (a tree has a node for every mode of every thread on
/// every CPU: 400,000 on an 8 GB kernel trace, and the window holds the
/// tree shown beside the next one being made).
#[derive(Debug, Clone)]
struct Node {
    events: u64,
    cpu_time: u64,
    /// The first child node; for a mode node, which has none, the first
    /// cell's counts (index into `CellTree::counts`). [`NONE`]: none.
    first: u32,
    next_sibling: u32,
    label: Label,
}

const _: () = assert!(std::mem::size_of::<Node>() == 32);

/// Id of the summary by event name.
const SUMMARY: u64 = u64::MAX - 1;
/// Id given to the leaves (they have no children to ask for).
const LEAF: u64 = u64::MAX;

/// The statistics tree of a [`Statistics`] snapshot (see the module's
/// documentation): the window's statistics view reads it through
/// [`StatisticsTree`], the table of every row
/// ([`Statistics::render`]) and the [`StatNode`] tree are walks of it.
#[derive(Debug, Clone)]
pub struct CellTree {
    /// Node 0 is the traceset.
    nodes: Vec<Node>,
    /// The events of the cells the mode nodes sum.
    counts: Vec<EventCounts>,
    /// The counts of the mode nodes that sum several cells (traces of the
    /// same name share their mode nodes): node → indices into `counts`
    /// after the first.
    more_counts: FastMap<u32, Vec<u32>>,
    trace_labels: Vec<String>,
    /// The PIDs of the process nodes.
    pids: Vec<i64>,
    /// The TIDs and names of the thread nodes.
    threads: Vec<(i64, Arc<str>)>,
    /// Events per name, most frequent first.
    names: Vec<(Arc<str>, u64)>,
    columns: [String; 2],
}

impl CellTree {
    /// The tree of `stats`.
    pub fn new(stats: &Statistics) -> Self {
        let mut cells: Vec<&StatCell> = stats.cells.iter().collect();
        cells.sort_by(|a, b| {
            (a.trace, a.cpu, a.pid, a.tid, a.mode).cmp(&(b.trace, b.cpu, b.pid, b.tid, b.mode))
        });
        let traces = cells
            .iter()
            .map(|c| c.trace as usize + 1)
            .max()
            .unwrap_or(0);
        let trace_labels: Vec<String> = (0..traces.max(stats.trace_names.len()))
            .map(|i| match stats.trace_names.get(i) {
                Some(name) => name.clone(),
                None => format!("trace {i}"),
            })
            .collect();
        // Room for every node at once: grown by doubling, the nodes of an
        // 8 GB trace's tree took up to twice their size, and the old and
        // the new buffer were alive together at each growth.
        let room = nodes_at_most(&cells);
        let mut nodes = Vec::with_capacity(room);
        nodes.push(Node::new(Label::Traceset));
        // The last child of each node, while children are appended.
        let mut last_child: Vec<u32> = Vec::with_capacity(room);
        last_child.push(NONE);
        // The node of each (parent, key) met: traces and CPUs in `upper`,
        // processes, threads and modes in `lower`. With distinct trace
        // labels, the cells under a CPU node are consecutive, so `lower` is
        // emptied when the next CPU node starts: it holds one CPU's nodes,
        // not the whole tree's (17 MB beside the tree being made, on an
        // 8 GB kernel trace).
        let mut upper: FastMap<(u32, Key), u32> = FastMap::default();
        let mut lower: FastMap<(u32, Key), u32> = FastMap::default();
        let distinct_labels = {
            let mut labels: Vec<&str> = trace_labels.iter().map(String::as_str).collect();
            labels.sort_unstable();
            labels.windows(2).all(|w| w[0] != w[1])
        };
        let mut cpu_node = NONE;
        let mut counts = Vec::with_capacity(cells.len());
        let mut more_counts: FastMap<u32, Vec<u32>> = FastMap::default();
        let mut pids = Vec::new();
        let mut threads = Vec::new();
        // Events per event name number (see `stats::event_id`): numbers,
        // not names, are added up for each cell's events (looking the
        // 8 GB trace's 239,000 cells' names up and hashing them was most
        // of the tree's 0.2 s).
        let mut by_number: Vec<Option<u64>> = Vec::new();
        for c in &cells {
            let mut n = 0u64;
            for (id, k) in c.events.numbered() {
                n += k;
                let id = id as usize;
                if id >= by_number.len() {
                    by_number.resize(id + 1, None);
                }
                *by_number[id].get_or_insert(0) += k;
            }
            let known = c.tid >= 0;
            let path: [(Key, Named); 5] = [
                (
                    Key::Trace(&trace_labels[c.trace as usize]),
                    Named::Trace(c.trace),
                ),
                (Key::Cpu(c.cpu), Named::Cpu(c.cpu)),
                if known {
                    (Key::Process(c.pid), Named::Process(c.pid))
                } else {
                    (Key::Unknown, Named::Unknown)
                },
                if known {
                    (Key::Thread(c.tid, &c.name), Named::Thread(c.tid, &c.name))
                } else {
                    (Key::Unknown, Named::Unknown)
                },
                (Key::Mode(c.mode), Named::Mode(c.mode)),
            ];
            nodes[0].add(n, c.cpu_time);
            let mut at = 0u32;
            for (level, (key, label)) in path.into_iter().enumerate() {
                if level == 2 && at != cpu_node {
                    // `at` is the next CPU node: nothing below the previous
                    // one is met again.
                    if distinct_labels {
                        lower.clear();
                    }
                    cpu_node = at;
                }
                let found = if level < 2 { &mut upper } else { &mut lower };
                at = *found.entry((at, key)).or_insert_with(|| {
                    let new = nodes.len() as u32;
                    let label = match label {
                        Named::Trace(t) => Label::Trace(t),
                        Named::Cpu(c) => Label::Cpu(c),
                        Named::Process(pid) => {
                            pids.push(pid);
                            Label::Process(pids.len() as u32 - 1)
                        }
                        Named::Thread(tid, name) => {
                            threads.push((tid, name.clone()));
                            Label::Thread(threads.len() as u32 - 1)
                        }
                        Named::Unknown => Label::Unknown,
                        Named::Mode(m) => Label::Mode(m),
                    };
                    nodes.push(Node::new(label));
                    last_child.push(NONE);
                    match last_child[at as usize] {
                        NONE => nodes[at as usize].first = new,
                        prev => nodes[prev as usize].next_sibling = new,
                    }
                    last_child[at as usize] = new;
                    new
                });
                nodes[at as usize].add(n, c.cpu_time);
            }
            let i = counts.len() as u32;
            counts.push(c.events.clone());
            let mode = &mut nodes[at as usize];
            if mode.first == NONE {
                mode.first = i;
            } else {
                more_counts.entry(at).or_default().push(i);
            }
        }
        let mut names: Vec<(Arc<str>, u64)> = by_number
            .into_iter()
            .enumerate()
            .filter_map(|(id, k)| Some((stats::event_name(id as u32).clone(), k?)))
            .collect();
        names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        // They borrow the labels moved below.
        drop((upper, lower));
        debug_assert!(nodes.len() <= room);
        nodes.shrink_to_fit();
        CellTree {
            nodes,
            counts,
            more_counts,
            trace_labels,
            pids,
            threads,
            names,
            columns: ["events".to_string(), "CPU time".to_string()],
        }
    }

    /// Events counted, over every name.
    fn total(&self) -> u64 {
        self.names.iter().map(|(_, k)| k).sum()
    }

    /// Writes node `i`'s label into `out`.
    fn write_label(&self, i: u32, out: &mut String) {
        match self.nodes[i as usize].label {
            Label::Traceset => out.push_str("traceset"),
            Label::Trace(t) => out.push_str(&self.trace_labels[t as usize]),
            Label::Cpu(NO_CPU) => out.push_str("CPU ?"),
            Label::Cpu(cpu) => {
                let _ = write!(out, "CPU {cpu}");
            }
            Label::Process(p) => {
                let _ = write!(out, "process {}", self.pids[p as usize]);
            }
            Label::Thread(t) => {
                let (tid, name) = &self.threads[t as usize];
                let _ = write!(out, "{name} [{tid}]");
            }
            Label::Unknown => out.push_str("(unknown)"),
            Label::Mode(m) => out.push_str(m.name()),
        }
    }

    /// The children of node `i`, in order.
    fn child_nodes(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        let n = &self.nodes[i as usize];
        let first = if n.is_mode() { NONE } else { n.first };
        std::iter::successors((first != NONE).then_some(first), move |&c| {
            let next = self.nodes[c as usize].next_sibling;
            (next != NONE).then_some(next)
        })
    }

    /// The event-name leaves of mode node `i`, in the order the names
    /// first appear in its cells, each name's counts summed.
    fn for_each_leaf(&self, i: u32, mut f: impl FnMut(&str, u64)) {
        let n = &self.nodes[i as usize];
        let first = n.first;
        if !n.is_mode() || first == NONE {
            return;
        }
        let Some(more) = self.more_counts.get(&i) else {
            // A cell's names are distinct.
            for (name, k) in &self.counts[first as usize] {
                f(name, k);
            }
            return;
        };
        let mut order: Vec<(&str, u64)> = Vec::new();
        let mut at: FastMap<&str, usize> = FastMap::default();
        for &c in std::iter::once(&first).chain(more) {
            for (name, k) in &self.counts[c as usize] {
                match at.get(&**name) {
                    Some(&j) => order[j].1 += k,
                    None => {
                        at.insert(name, order.len());
                        order.push((name, k));
                    }
                }
            }
        }
        for (name, k) in order {
            f(name, k);
        }
    }

    /// The values of node `i`: events and CPU time.
    fn values(&self, i: u32) -> [StatValue; 2] {
        let n = &self.nodes[i as usize];
        [
            StatValue::Count(n.events),
            StatValue::Duration(n.cpu_time.min(i64::MAX as u64) as i64),
        ]
    }

    /// Whether node `i` has a child row: a mode whose cells counted no
    /// event (time charged, nothing read) has none.
    fn has_children(&self, i: u32) -> bool {
        let n = &self.nodes[i as usize];
        let counted = |c: u32| !self.counts[c as usize].is_empty();
        if !n.is_mode() {
            return n.first != NONE;
        }
        n.first != NONE
            && (counted(n.first)
                || self
                    .more_counts
                    .get(&i)
                    .is_some_and(|more| more.iter().any(|&c| counted(c))))
    }

    /// Every row, depth first: the summary by event name, then the tree.
    fn walk(&self, mut row: impl FnMut(u16, &str, [StatValue; 2])) {
        fn node(
            t: &CellTree,
            i: u32,
            depth: u16,
            label: &mut String,
            row: &mut dyn FnMut(u16, &str, [StatValue; 2]),
        ) {
            label.clear();
            t.write_label(i, label);
            row(depth, label, t.values(i));
            for c in t.child_nodes(i) {
                node(t, c, depth + 1, label, row);
            }
            t.for_each_leaf(i, |name, k| {
                row(depth + 1, name, [StatValue::Count(k), StatValue::Empty])
            });
        }
        row(
            0,
            EVENT_TYPES,
            [StatValue::Count(self.total()), StatValue::Empty],
        );
        for (name, k) in &self.names {
            row(1, name, [StatValue::Count(*k), StatValue::Empty]);
        }
        node(self, 0, 0, &mut String::new(), &mut row);
    }

    /// Every row as a table (an export's).
    pub fn render(&self) -> StatisticsRender {
        let (mut rows, mut bytes) = (0, 0);
        self.walk(|_, label, _| {
            rows += 1;
            bytes += label.len();
        });
        let mut out = StatisticsBuilder::new("Statistics", self.columns.to_vec());
        // Reserved exactly: a table of millions of rows (an 8 GB trace's)
        // grown by doubling held up to twice its size.
        out.reserve(rows, bytes);
        self.walk(|depth, label, values| out.push(depth, label, values));
        out.build()
    }

    /// The tree as [`StatNode`]s (without the summary by event name).
    pub fn stat_node(&self) -> StatNode {
        /// Kinds of nodes by depth.
        const KINDS: [&str; 6] = ["traceset", "trace", "cpu", "process", "thread", "mode"];
        fn node(t: &CellTree, i: u32, depth: usize) -> StatNode {
            let mut label = String::new();
            t.write_label(i, &mut label);
            let mut children: Vec<StatNode> =
                t.child_nodes(i).map(|c| node(t, c, depth + 1)).collect();
            t.for_each_leaf(i, |name, k| {
                children.push(StatNode {
                    kind: "event",
                    label: name.to_string(),
                    events: k,
                    cpu_time: None,
                    children: Vec::new(),
                })
            });
            let n = &t.nodes[i as usize];
            StatNode {
                kind: KINDS[depth.min(KINDS.len() - 1)],
                label,
                events: n.events,
                cpu_time: Some(n.cpu_time),
                children,
            }
        }
        node(self, 0, 0)
    }
}

/// At least as many as the nodes of the tree of `cells` (sorted as
/// [`CellTree::new`] sorts them): the root, and for each cell a node at
/// every level from the first where its path differs from the previous
/// cell's. Nodes met again further on are counted again.
fn nodes_at_most(cells: &[&StatCell]) -> usize {
    // The first level at which `c`'s path leaves `p`'s.
    let level = |p: &StatCell, c: &StatCell| {
        if p.trace != c.trace {
            0
        } else if p.cpu != c.cpu {
            1
        } else if p.pid != c.pid {
            2
        } else if p.tid != c.tid || p.name != c.name {
            3
        } else {
            4
        }
    };
    let mut n = 1;
    let mut prev: Option<&StatCell> = None;
    for &c in cells {
        n += 5 - prev.map_or(0, |p| level(p, c));
        prev = Some(c);
    }
    n
}

impl Node {
    fn new(label: Label) -> Self {
        Node {
            label,
            events: 0,
            cpu_time: 0,
            first: NONE,
            next_sibling: NONE,
        }
    }

    /// Whether it is a mode node, whose `first` is its first cell's counts.
    fn is_mode(&self) -> bool {
        matches!(self.label, Label::Mode(_))
    }

    /// Counts a cell's `events` and `cpu_time` under this node. Damaged
    /// timestamps can charge any time: sums saturate.
    fn add(&mut self, events: u64, cpu_time: u64) {
        self.events += events;
        self.cpu_time = self.cpu_time.saturating_add(cpu_time);
    }
}

impl StatisticsTree for CellTree {
    fn name_title(&self) -> &str {
        "Statistics"
    }

    fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The summary by event name, the traces and their CPUs.
    fn open_depth(&self) -> u16 {
        2
    }

    fn children(&self, parent: Option<u64>, out: &mut Vec<StatisticsTreeRow>) {
        let leaf = |label: &str, k: u64| StatisticsTreeRow {
            id: LEAF,
            label: label.to_owned(),
            values: vec![StatValue::Count(k), StatValue::Empty],
            has_children: false,
        };
        let node = |i: u32| {
            let mut label = String::new();
            self.write_label(i, &mut label);
            StatisticsTreeRow {
                id: i as u64,
                label,
                values: self.values(i).to_vec(),
                has_children: self.has_children(i),
            }
        };
        match parent {
            None => {
                out.push(StatisticsTreeRow {
                    id: SUMMARY,
                    values: vec![StatValue::Count(self.total()), StatValue::Empty],
                    has_children: !self.names.is_empty(),
                    label: EVENT_TYPES.to_owned(),
                });
                out.push(node(0));
            }
            Some(SUMMARY) => out.extend(self.names.iter().map(|(n, k)| leaf(n, *k))),
            Some(i) if i < self.nodes.len() as u64 => {
                let i = i as u32;
                out.extend(self.child_nodes(i).map(node));
                self.for_each_leaf(i, |name, k| out.push(leaf(name, k)));
            }
            Some(_) => {}
        }
    }
}
