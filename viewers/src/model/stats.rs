//! Statistics: per trace, CPU, process, thread and execution mode, the
//! events counted per event name and the CPU time spent (LTTV's
//! statistics viewer).
//!
//! A [`StatsCollector`] runs in a HIGH-priority hook, so it sees the state
//! *before* each event: the time since the previous event of the same CPU
//! is charged to what that CPU was doing, and the event itself is counted
//! for the thread and mode it interrupted or ran in. Per CPU the charged
//! times add up to the accounted duration exactly.
//!
//! The whole-trace statistics come with the [`kernel`](super::kernel)
//! pass (LOW priority, cached); [`range_request`] computes them for a
//! selected range at HIGH priority.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use traceloom_engine::request::{OwnerId, SourceEvent, Start, Time};
use traceloom_engine::source::CtfCurrent;
use traceloom_engine::state::{CpuMode, TraceState, TracesetState};
use traceloom_hooks::{Flow, Priority};

use super::session::{KernelRequest, Payload};
use crate::render::{StatRow, StatValue, StatisticsRender};

/// CPU number used for events that carry none.
pub const NO_CPU: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct CellKey {
    trace: u32,
    cpu: u32,
    pid: i64,
    tid: i64,
    mode: CpuMode,
}

#[derive(Debug, Clone)]
struct Cell {
    key: CellKey,
    name: Arc<str>,
    time: u64,
    /// Events per dense class index (see `StatsCollector::class_index`).
    events: Vec<u64>,
}

/// What a CPU was last seen running, and the cells of that thread per
/// mode: the mode changes at every system call, the thread far less
/// often, so most events find their cell here without hashing.
#[derive(Debug, Clone, Copy, Default)]
struct CpuCache {
    thread: Option<(i64, i64)>,
    cells: [Option<u32>; 7],
}

#[derive(Debug, Clone, Default)]
struct CpuAcc {
    last: Time,
    cache: CpuCache,
}

pub use crate::fasthash::{IntHasher, IntMap};

/// Accumulates statistics from events seen with the state before them.
///
/// Per event: one lookup of the running thread, the cell found in the
/// CPU's cache (a hash lookup only when the CPU changed threads), and
/// the event class counted by a dense index (one integer-hash lookup); no
/// allocation and no string is touched.
#[derive(Debug, Clone)]
pub struct StatsCollector {
    begin: Option<Time>,
    end: Option<Time>,
    cells: Vec<Cell>,
    index: IntMap<CellKey, u32>,
    cpus: Vec<Vec<Option<CpuAcc>>>,
    class_index: IntMap<u64, u32>,
    class_names: Vec<Arc<str>>,
    last_time: Option<Time>,
    events: u64,
}

/// The CPU mode of a CPU running `t` (as [`TraceState::cpu_mode`], from
/// the thread already looked up).
fn mode_of(t: &traceloom_engine::state::Thread) -> CpuMode {
    use traceloom_engine::state::ExecMode;
    match t.mode() {
        ExecMode::User if t.tid == 0 => CpuMode::Idle,
        ExecMode::User => CpuMode::User,
        ExecMode::Syscall => CpuMode::Syscall,
        ExecMode::Trap => CpuMode::Trap,
        ExecMode::Irq => CpuMode::Irq,
        ExecMode::SoftIrq => CpuMode::SoftIrq,
        ExecMode::Unknown => CpuMode::Unknown,
    }
}

fn mode_slot(m: CpuMode) -> usize {
    match m {
        CpuMode::Idle => 0,
        CpuMode::User => 1,
        CpuMode::Syscall => 2,
        CpuMode::Trap => 3,
        CpuMode::Irq => 4,
        CpuMode::SoftIrq => 5,
        _ => 6,
    }
}

fn key_of(ts: Option<&TraceState>, trace: u32, cpu: u32) -> (CellKey, Arc<str>) {
    let running = if cpu == NO_CPU {
        None
    } else {
        ts.and_then(|t| t.running_on(cpu))
    };
    match running {
        Some(th) => (
            CellKey {
                trace,
                cpu,
                pid: th.pid,
                tid: th.tid,
                mode: mode_of(th),
            },
            th.name.clone(),
        ),
        None => (
            CellKey {
                trace,
                cpu,
                pid: -1,
                tid: -1,
                mode: CpuMode::Unknown,
            },
            Arc::from("(unknown)"),
        ),
    }
}

impl StatsCollector {
    /// A collector charging time from `begin` (the first event's time if
    /// `None`) to `end` (the last event's time if `None`).
    pub fn new(begin: Option<Time>, end: Option<Time>) -> Self {
        StatsCollector {
            begin,
            end,
            cells: Vec::new(),
            index: IntMap::default(),
            cpus: Vec::new(),
            class_index: IntMap::default(),
            class_names: Vec::new(),
            last_time: None,
            events: 0,
        }
    }

    fn cell(&mut self, key: CellKey, name: Arc<str>) -> usize {
        if let Some(&i) = self.index.get(&key) {
            let i = i as usize;
            if self.cells[i].name != name && !name.is_empty() {
                self.cells[i].name = name;
            }
            return i;
        }
        let i = self.cells.len();
        self.index.insert(key, i as u32);
        self.cells.push(Cell {
            key,
            name,
            time: 0,
            events: Vec::new(),
        });
        i
    }

    fn acc(&mut self, trace: u32, cpu: u32, begin: Time) -> &mut CpuAcc {
        let t = trace as usize;
        if self.cpus.len() <= t {
            self.cpus.resize(t + 1, Vec::new());
        }
        let c = if cpu == NO_CPU { 0 } else { cpu as usize + 1 };
        let v = &mut self.cpus[t];
        if v.len() <= c {
            v.resize(c + 1, None);
        }
        v[c].get_or_insert(CpuAcc {
            last: begin,
            cache: CpuCache::default(),
        })
    }

    /// Accounts `ev`, seen with `state` as it was before the event.
    pub fn on_event(&mut self, ev: &CtfCurrent, state: &TracesetState) {
        let Some(e) = ev.event() else { return };
        let t = ev.time();
        let begin = *self.begin.get_or_insert(t);
        if t < begin || self.end.is_some_and(|end| t > end) {
            return;
        }
        if self.last_time.is_none() {
            // Every CPU the state knows starts being accounted now, also
            // those without events in the range.
            for (ti, ts) in state.traces.iter().enumerate() {
                for cpu in 0..ts.cpus.len() {
                    self.acc(ti as u32, cpu as u32, begin);
                }
            }
        }
        self.last_time = Some(t);
        self.events += 1;
        let trace = e.trace().index as u32;
        let cpu = e
            .cpu_id()
            .map_or(NO_CPU, |c| c.min(NO_CPU as u64 - 1) as u32);
        let ts = state.traces.get(trace as usize);
        let running = if cpu == NO_CPU {
            None
        } else {
            ts.and_then(|t| t.running_on(cpu))
        };
        debug_assert!(running.is_none_or(|th| ts.map(|t| t.cpu_mode(cpu)) == Some(mode_of(th))));
        let (thread, slot) = match running {
            Some(th) => (Some((th.pid, th.tid)), mode_slot(mode_of(th))),
            None => (None, 6),
        };
        let acc = self.acc(trace, cpu, begin);
        if acc.cache.thread != thread {
            acc.cache = CpuCache {
                thread,
                cells: [None; 7],
            };
        }
        let idx = match acc.cache.cells[slot] {
            Some(i) => i as usize,
            None => {
                let (key, name) = key_of(ts, trace, cpu);
                let i = self.cell(key, name);
                self.acc(trace, cpu, begin).cache.cells[slot] = Some(i as u32);
                i
            }
        };
        let acc = self.acc(trace, cpu, begin);
        let dt = if cpu == NO_CPU {
            0
        } else {
            t.saturating_sub(acc.last).max(0) as u64
        };
        acc.last = acc.last.max(t);
        let class = ev.class_id();
        let ci = match self.class_index.get(&class) {
            Some(&c) => c as usize,
            None => {
                let c = self.class_names.len();
                self.class_index.insert(class, c as u32);
                self.class_names.push(Arc::from(e.name()));
                c
            }
        };
        let cell = &mut self.cells[idx];
        cell.time += dt;
        if cell.events.len() <= ci {
            cell.events.resize(ci + 1, 0);
        }
        cell.events[ci] += 1;
    }

    /// Charges every CPU up to the end, with `state` as it is there, and
    /// returns the statistics: [`close`](Self::close) then
    /// [`into_statistics`](Self::into_statistics).
    pub fn finish(mut self, state: &TracesetState) -> Statistics {
        self.close(state);
        self.into_statistics()
    }

    /// Charges every CPU up to the end, with `state` as it is there: the
    /// part of [`finish`](Self::finish) that needs the state, cheap (one
    /// step per CPU). Closing again charges nothing more.
    pub fn close(&mut self, state: &TracesetState) {
        let begin = self.begin.unwrap_or(0);
        let end = self.end_time(begin);
        for (ti, ts) in state.traces.iter().enumerate() {
            for cpu in 0..ts.cpus.len() {
                self.acc(ti as u32, cpu as u32, begin);
            }
        }
        let mut pending = Vec::new();
        for (ti, cpus) in self.cpus.iter_mut().enumerate() {
            for (c, acc) in cpus.iter_mut().enumerate() {
                let (Some(acc), true) = (acc, c > 0) else {
                    continue;
                };
                let cpu = (c - 1) as u32;
                let dt = end.saturating_sub(acc.last).max(0) as u64;
                acc.last = acc.last.max(end);
                pending.push((ti as u32, cpu, dt));
            }
        }
        for (trace, cpu, dt) in pending {
            let (key, name) = key_of(state.traces.get(trace as usize), trace, cpu);
            let i = self.cell(key, name);
            self.cells[i].time += dt;
        }
    }

    /// End of the accounted range.
    fn end_time(&self, begin: Time) -> Time {
        self.end.or(self.last_time).unwrap_or(begin).max(begin)
    }

    /// The statistics of a [`close`](Self::close)d collector (without the
    /// state: it can run on another thread). The bulk of
    /// [`finish`](Self::finish): tens of ms for tens of thousands of cells.
    pub fn into_statistics(self) -> Statistics {
        let begin = self.begin.unwrap_or(0);
        let end = self.end_time(begin);
        let mut per_name: BTreeMap<String, u64> = BTreeMap::new();
        let mut cells = Vec::with_capacity(self.cells.len());
        for c in self.cells {
            let mut events: BTreeMap<Arc<str>, u64> = BTreeMap::new();
            for (class, n) in c.events.into_iter().enumerate() {
                if n == 0 {
                    continue;
                }
                let name = self.class_names[class].clone();
                *per_name.entry(name.to_string()).or_insert(0) += n;
                *events.entry(name).or_insert(0) += n;
            }
            cells.push(StatCell {
                trace: c.key.trace,
                cpu: c.key.cpu,
                pid: c.key.pid,
                tid: c.key.tid,
                mode: c.key.mode,
                name: c.name,
                cpu_time: c.time,
                events,
            });
        }
        Statistics {
            begin,
            end,
            total_events: self.events,
            per_name,
            cells,
            trace_names: Vec::new(),
        }
    }
}

/// What one thread did on one CPU in one mode.
#[derive(Debug, Clone, PartialEq)]
pub struct StatCell {
    /// Trace index.
    pub trace: u32,
    /// CPU ([`NO_CPU`] for events without one).
    pub cpu: u32,
    /// Process id (-1: nothing known to run).
    pub pid: i64,
    /// Thread id (-1: nothing known to run).
    pub tid: i64,
    /// CPU mode.
    pub mode: CpuMode,
    /// Thread name (the latest seen).
    pub name: Arc<str>,
    /// Nanoseconds charged.
    pub cpu_time: u64,
    /// Events per event name.
    pub events: BTreeMap<Arc<str>, u64>,
}

/// The statistics of a time range.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// Start of the accounted range.
    pub begin: Time,
    /// End of the accounted range.
    pub end: Time,
    /// Events counted.
    pub total_events: u64,
    /// Events per event name.
    pub per_name: BTreeMap<String, u64>,
    /// The finest level: trace × CPU × thread × mode.
    pub cells: Vec<StatCell>,
    /// Trace names, by trace index (labels of the tree).
    pub trace_names: Vec<String>,
}

/// A node of the statistics tree.
#[derive(Debug, Clone, PartialEq)]
pub struct StatNode {
    /// Level: `traceset`, `trace`, `cpu`, `process`, `thread`, `mode`,
    /// `event`.
    pub kind: &'static str,
    /// Name shown.
    pub label: String,
    /// Events counted under the node.
    pub events: u64,
    /// CPU time under the node (`None` for event names).
    pub cpu_time: Option<u64>,
    /// Children, in display order.
    pub children: Vec<StatNode>,
}

impl StatNode {
    fn new(kind: &'static str, label: String) -> Self {
        StatNode {
            kind,
            label,
            events: 0,
            cpu_time: Some(0),
            children: Vec::new(),
        }
    }

    fn child(&mut self, kind: &'static str, label: String) -> &mut StatNode {
        let i = match self.children.iter().position(|c| c.label == label) {
            Some(i) => i,
            None => {
                self.children.push(StatNode::new(kind, label));
                self.children.len() - 1
            }
        };
        &mut self.children[i]
    }
}

impl Statistics {
    /// The accounted duration.
    pub fn duration(&self) -> u64 {
        self.end.abs_diff(self.begin)
    }

    /// CPU time charged on `cpu` of `trace`, whatever ran.
    pub fn cpu_time(&self, trace: u32, cpu: u32) -> u64 {
        self.cells
            .iter()
            .filter(|c| c.trace == trace && c.cpu == cpu)
            .map(|c| c.cpu_time)
            .sum()
    }

    /// The CPUs accounted, per trace.
    pub fn cpus(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self
            .cells
            .iter()
            .filter(|c| c.cpu != NO_CPU)
            .map(|c| (c.trace, c.cpu))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The tree traceset → trace → CPU → process → thread → mode → event
    /// name.
    pub fn tree(&self) -> StatNode {
        let mut cells: Vec<&StatCell> = self.cells.iter().collect();
        cells.sort_by(|a, b| {
            (a.trace, a.cpu, a.pid, a.tid, a.mode).cmp(&(b.trace, b.cpu, b.pid, b.tid, b.mode))
        });
        let mut root = StatNode::new("traceset", "traceset".into());
        for c in cells {
            let n: u64 = c.events.values().sum();
            let trace_label = self
                .trace_names
                .get(c.trace as usize)
                .cloned()
                .unwrap_or_else(|| format!("trace {}", c.trace));
            let cpu_label = if c.cpu == NO_CPU {
                "CPU ?".to_string()
            } else {
                format!("CPU {}", c.cpu)
            };
            let (proc_label, thread_label) = if c.tid < 0 {
                ("(unknown)".to_string(), "(unknown)".to_string())
            } else {
                (
                    format!("process {}", c.pid),
                    format!("{} [{}]", c.name, c.tid),
                )
            };
            let path: [(&'static str, String); 5] = [
                ("trace", trace_label),
                ("cpu", cpu_label),
                ("process", proc_label),
                ("thread", thread_label),
                ("mode", c.mode.name().to_string()),
            ];
            root.events += n;
            *root.cpu_time.get_or_insert(0) += c.cpu_time;
            let mut node = &mut root;
            for (kind, label) in path {
                node = node.child(kind, label);
                node.events += n;
                *node.cpu_time.get_or_insert(0) += c.cpu_time;
            }
            for (name, k) in &c.events {
                let leaf = node.child("event", name.to_string());
                leaf.cpu_time = None;
                leaf.events += k;
            }
        }
        root
    }

    /// The tree as a statistics table (name, events, CPU time).
    pub fn render(&self) -> StatisticsRender {
        fn walk(n: &StatNode, depth: u16, rows: &mut Vec<StatRow>) {
            rows.push(StatRow {
                depth,
                label: n.label.clone(),
                values: vec![
                    StatValue::Count(n.events),
                    n.cpu_time.map_or(StatValue::Empty, |t| {
                        StatValue::Duration(t.min(i64::MAX as u64) as i64)
                    }),
                ],
            });
            for c in &n.children {
                walk(c, depth + 1, rows);
            }
        }
        let mut rows = Vec::new();
        walk(&self.tree(), 0, &mut rows);
        StatisticsRender {
            name_title: "Statistics".into(),
            columns: vec!["events".to_string(), "CPU time".to_string()].into(),
            rows: rows.into(),
        }
    }

    /// The tree as indented text, one node per line.
    pub fn to_text(&self) -> String {
        fn walk(n: &StatNode, depth: usize, out: &mut String) {
            let _ = write!(
                out,
                "{:indent$}{}: {} events",
                "",
                n.label,
                n.events,
                indent = depth * 2
            );
            if let Some(t) = n.cpu_time {
                let _ = write!(
                    out,
                    ", CPU time {}.{:09} s",
                    t / 1_000_000_000,
                    t % 1_000_000_000
                );
            }
            out.push('\n');
            for c in &n.children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "range {} .. {} ({} ns), {} events",
            self.begin,
            self.end,
            self.duration(),
            self.total_events
        );
        walk(&self.tree(), 0, &mut out);
        out
    }

    /// The tree as JSON: `{"begin", "end", "events", "per_event_name",
    /// "tree": {"kind", "name", "events", "cpu_time_ns", "children"}}`.
    pub fn to_json(&self) -> String {
        fn walk(n: &StatNode, out: &mut String) {
            let _ = write!(
                out,
                "{{\"kind\":\"{}\",\"name\":{},\"events\":{}",
                n.kind,
                json_str(&n.label),
                n.events
            );
            if let Some(t) = n.cpu_time {
                let _ = write!(out, ",\"cpu_time_ns\":{t}");
            }
            if !n.children.is_empty() {
                out.push_str(",\"children\":[");
                for (i, c) in n.children.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(c, out);
                }
                out.push(']');
            }
            out.push('}');
        }
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\"begin\":{},\"end\":{},\"events\":{},\"per_event_name\":{{",
            self.begin, self.end, self.total_events
        );
        for (i, (k, v)) in self.per_name.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{v}", json_str(k));
        }
        out.push_str("},\"tree\":");
        walk(&self.tree(), &mut out);
        out.push_str("}\n");
        out
    }
}

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A HIGH-priority request computing the statistics of `[begin, end]`;
/// its data, once complete, is a [`Statistics`].
pub fn range_request(
    owner: OwnerId,
    begin: Time,
    end: Time,
    trace_names: Vec<String>,
) -> KernelRequest {
    let mut req = KernelRequest::new(
        owner,
        Start::Time(begin),
        Box::new(StatsCollector::new(Some(begin), Some(end))) as Payload,
    );
    req.priority = Priority::HIGH;
    req.end_time = Some(end);
    req.event.add(Priority::HIGH, |ctx| {
        if let Some(c) = ctx.data.downcast_mut::<StatsCollector>() {
            c.on_event(ctx.event, ctx.state);
        }
        Flow::Continue
    });
    req.after_traceset.add(Priority::DEFAULT, move |ctx| {
        let data = std::mem::replace(ctx.data, Box::new(()));
        if let Ok(c) = data.downcast::<StatsCollector>() {
            let mut s = c.finish(ctx.state);
            s.trace_names = trace_names.clone();
            *ctx.data = Box::new(s);
        }
        Flow::Continue
    });
    req
}
