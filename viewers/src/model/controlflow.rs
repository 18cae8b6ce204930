//! The control flow model: one row per thread, grouped under its process
//! (two levels, TID in the label; flattening and sorting by name or TID
//! through the [`DataConfig`]), each thread's status and mode over time in
//! Trace Compass's colours (the idle threads idle), wake-up and CPU hand-off
//! arrows, and tooltips; rows filtered, sorted by CPU time or without the
//! idle ones per view ([`ControlFlowModel::render_with`]).
//!
//! Renders come from the [`KernelData`] of the kernel pass by binary
//! search in each thread's transitions plus level of detail, so a render
//! costs O(rows × width × log n) whatever the window. The full-range render
//! is cached per width ("zoom to fit" is immediate).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use traceloom_engine::state::ThreadStatus;

use crate::lod::{RowEventsBuilder, RowIntervalsBuilder};
use crate::model::column::Column;
use crate::model::damage::rows_without_data;
use crate::model::kernel::{
    decode_thread_code, ArrowRecord, KernelData, Mark, ThreadRecord, NO_THREAD,
};
use crate::model::pack::BLOCK;
use crate::model::steps::push_steps;
use crate::render::RowSlot;
use crate::render::{
    Arrow, DrawnEvent, Properties, PropertiesWriter, RowId, StateInterval, StyleKey,
    TimeGraphRender, TimeGraphRenderBuilder, TreeBuilder, TreeNode, TreeRender,
};
use crate::style::control_flow::{self as keys, state_key, thread_state_key};
use crate::style::{DataConfig, TreeOrder};
use crate::time::PixelScale;
use traceloom_base::FastMap;

/// Most arrows of one series per pixel of width: beyond, arrows are
/// sampled evenly (each kept arrow counting for those it stands for), as
/// denser arrows would only hide the states under them.
pub const ARROWS_PER_PIXEL: f64 = 0.25;

/// Row ids of trace rows (shown when the traceset has several traces).
const TRACE_ROW: u64 = 1 << 63;

/// Summary blocks (of 64 changes) in a render's range from which its rows
/// are filled on several threads: a few ms of work on one, where starting
/// a thread costs tens of µs.
pub const PARALLEL_BLOCKS: usize = 4096;

/// The control flow view's model.
#[derive(Debug)]
pub struct ControlFlowModel {
    data: Arc<KernelData>,
    config: DataConfig,
    nodes: TreeBuilder,
    tree: TreeRender,
    rec_of_row: FastMap<RowId, u32>,
    /// What a render's items are drawn with, for the calling thread; the
    /// render threads make their own.
    styles: Styles,
    /// Thread records left without data by a damaged stream: from when,
    /// and the damage (index in `KernelData::damage`).
    no_data: FastMap<u32, (Time, usize)>,
    full: Mutex<Option<(u32, TimeGraphRender)>>,
    /// Summary blocks in a render's range from which its rows are filled
    /// on several threads.
    parallel_blocks: usize,
}

/// The style keys and tooltip properties a render's items share.
///
/// Cloning an item's key or properties bumps a count in its `Arc`: a full
/// render pushes hundreds of thousands of items, and two threads bumping
/// the same counts pass their cache line back and forth. Each render
/// thread therefore has its own, equal but apart.
#[derive(Debug)]
struct Styles {
    /// State key by thread code; `idle_keys` for a CPU's idle thread.
    keys: Vec<StyleKey>,
    /// State key by thread code for the idle threads (TID 0, `swapper/N`):
    /// their running is the CPU's idleness, not work; interrupts they take
    /// stay interrupts.
    idle_keys: Vec<StyleKey>,
    /// Tooltip properties of a state interval, by thread code: what is the
    /// interval's own (status and mode). The thread's name, TID, PID and
    /// PPID are its row's properties, which tooltips show too; the times
    /// are the interval's. Built once, so an interval costs no allocation.
    code_props: Vec<Properties>,
    /// `code_props` for the idle threads.
    idle_props: Vec<Properties>,
    mark_keys: [StyleKey; 4],
    /// Event names of the marks, by [`mark`](crate::model::kernel::mark)
    /// kind, allocated once (not once per marker).
    mark_names: [Arc<str>; 4],
}

impl Styles {
    fn new() -> Styles {
        let keys: Vec<StyleKey> = (0u8..64)
            .map(|c| {
                let (s, m) = decode_thread_code(c);
                StyleKey::new(state_key(s, m))
            })
            .collect();
        let code_props: Vec<Properties> = (0u8..64)
            .map(|c| {
                let (status, mode) = decode_thread_code(c);
                if status == ThreadStatus::Run {
                    Properties::new([("status", status.name()), ("mode", mode.name())])
                } else {
                    Properties::new([("status", status.name())])
                }
            })
            .collect();
        // The idle threads' tables: what `thread_state_key` makes of TID 0.
        let idle = |c: u8| {
            let (status, mode) = decode_thread_code(c);
            thread_state_key(0, status, mode) == keys::IDLE
        };
        let idle_keys = (0u8..64)
            .map(|c| {
                if idle(c) {
                    StyleKey::new(keys::IDLE)
                } else {
                    keys[c as usize].clone()
                }
            })
            .collect();
        let idle_props = (0u8..64)
            .map(|c| {
                if idle(c) {
                    Properties::new([("status", "idle")])
                } else {
                    code_props[c as usize].clone()
                }
            })
            .collect();
        Styles {
            keys,
            idle_keys,
            code_props,
            idle_props,
            mark_keys: [
                StyleKey::new(keys::EV_WAKEUP),
                StyleKey::new(keys::EV_FORK),
                StyleKey::new(keys::EV_EXEC),
                StyleKey::new(keys::EV_EXIT),
            ],
            mark_names: [
                Arc::from("sched_wakeup"),
                Arc::from("sched_process_fork"),
                Arc::from("sched_process_exec"),
                Arc::from("sched_process_exit"),
            ],
        }
    }
}

/// Row label of a thread: its name and TID, put together in `scratch`.
///
/// Without `format!` or a string of its own, one allocation (the label's):
/// the formatting machinery and the allocations were most of making the
/// model of the 8 GB generated trace's 80,434 thread records.
fn thread_label(t: &ThreadRecord, scratch: &mut String) -> Arc<str> {
    let name = if t.name.is_empty() { "?" } else { &t.name };
    let mut tid = itoa::Buffer::new();
    scratch.clear();
    scratch.push_str(name);
    scratch.push_str(" [");
    scratch.push_str(tid.format(t.tid));
    scratch.push(']');
    Arc::from(scratch.as_str())
}

impl ControlFlowModel {
    /// A model over the kernel pass's data, with the default configuration.
    pub fn new(data: Arc<KernelData>) -> Self {
        let rows = data.threads.len() + data.trace_names.len();
        let mut nodes = TreeBuilder::with_capacity(rows);
        let mut rec_of_row = FastMap::with_capacity_and_hasher(rows, Default::default());
        // The main thread of each process: the latest record with TID ==
        // PID in the same trace.
        let mut main: FastMap<(u32, i64), RowId> = FastMap::default();
        for t in &data.threads {
            if t.tid == t.pid && t.tid != 0 {
                main.insert((t.trace, t.pid), t.row);
            }
        }
        let several = data.trace_names.len() > 1;
        if several {
            for (i, name) in data.trace_names.iter().enumerate() {
                nodes.add(TreeNode {
                    id: RowId(TRACE_ROW | i as u64),
                    parent: None,
                    label: name.as_str().into(),
                    properties: Properties::new([("trace", name.clone())]),
                });
            }
        }
        let (mut scratch, mut properties) = (String::new(), PropertiesWriter::new());
        for (i, t) in data.threads.iter().enumerate() {
            rec_of_row.insert(t.row, i as u32);
            let trace_row = several.then_some(RowId(TRACE_ROW | t.trace as u64));
            let parent = if t.tid != t.pid {
                main.get(&(t.trace, t.pid)).copied().or(trace_row)
            } else {
                trace_row
            };
            nodes.add(TreeNode {
                id: t.row,
                parent,
                label: thread_label(t, &mut scratch),
                properties: properties
                    .text("name", &t.name)
                    .int("tid", t.tid)
                    .int("pid", t.pid)
                    .int("ppid", t.ppid)
                    .int("birth", t.birth)
                    .finish(),
            });
        }
        let config = DataConfig::default();
        let tree = nodes.build(&config);
        let no_data = rows_without_data(&data.damage, |g| g.threads.iter().copied());
        ControlFlowModel {
            data,
            no_data,
            config,
            tree,
            nodes,
            rec_of_row,
            styles: Styles::new(),
            full: Mutex::new(None),
            parallel_blocks: PARALLEL_BLOCKS,
        }
    }

    /// Fills a render's rows on several threads when they hold at least
    /// `blocks` summary blocks (of 64 changes) in its range
    /// ([`PARALLEL_BLOCKS`] by default; 0: whenever there are two rows,
    /// `usize::MAX`: never).
    pub fn set_parallel_blocks(&mut self, blocks: usize) {
        self.parallel_blocks = blocks;
    }

    /// The data rendered.
    pub fn data(&self) -> &Arc<KernelData> {
        &self.data
    }

    /// The data configuration (flatten, order, collapsed, hidden, arrows).
    pub fn config(&self) -> &DataConfig {
        &self.config
    }

    /// Changes the data configuration; the next renders follow it.
    pub fn set_config(&mut self, config: DataConfig) {
        if config != self.config {
            self.tree = self.nodes.build(&config);
            self.config = config;
            *self.full.lock().expect("not poisoned") = None;
        }
    }

    /// The tree column.
    pub fn tree(&self) -> &TreeRender {
        &self.tree
    }

    /// The time range of the whole traceset.
    pub fn full_range(&self) -> TimeRange {
        TimeRange::new(self.data.span.0, self.data.span.1)
    }

    /// Thread record shown in row `row`.
    pub fn thread(&self, row: RowId) -> Option<&ThreadRecord> {
        self.rec_of_row
            .get(&row)
            .map(|&i| &*self.data.threads[i as usize])
    }

    /// The render of `range` at `width` pixels, with the model's
    /// configuration.
    pub fn render(&self, range: TimeRange, width: u32) -> TimeGraphRender {
        self.render_with(&self.config, range, width)
    }

    /// The render of `range` at `width` pixels with `config` instead of
    /// the model's own: views sharing one model (behind an `Arc`) each
    /// keep their rows filter, order, collapsed rows and arrows.
    pub fn render_with(
        &self,
        config: &DataConfig,
        range: TimeRange,
        width: u32,
    ) -> TimeGraphRender {
        self.render_rows_with(config, range, width, None)
    }

    /// The rows a render for a view showing `shown` holds: those, and a
    /// page more on each side, so that scrolling by less than a page shows
    /// rows already made while the next render comes.
    pub fn rows_with_margin(shown: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let page = shown.len().max(1);
        shown.start.saturating_sub(page)..shown.end.saturating_add(page)
    }

    /// [`render_with`](Self::render_with) holding the states and drawn
    /// events of `rows` only (display indices; `None`: every row), the
    /// tree and arrows whole: a view shows a few dozen of a trace's
    /// thousands of threads, and the others made most of a render's
    /// cost (a full-range render of 10,240 threads at 1,920 px: ~94 ms).
    pub fn render_rows_with(
        &self,
        config: &DataConfig,
        range: TimeRange,
        width: u32,
        rows: Option<std::ops::Range<usize>>,
    ) -> TimeGraphRender {
        let cached = range == self.full_range() && *config == self.config && rows.is_none();
        if cached {
            if let Some((w, r)) = &*self.full.lock().expect("not poisoned") {
                if *w == width {
                    return r.clone();
                }
            }
        }
        let tree = if config.order == TreeOrder::Weight || config.hide_idle {
            self.nodes
                .build_weighted(config, Some(&self.cpu_time(range)))
        } else if *config == self.config {
            self.tree.clone()
        } else {
            self.nodes.build(config)
        };
        let r = self.build(config, tree, range, width, rows);
        if cached {
            *self.full.lock().expect("not poisoned") = Some((width, r.clone()));
        }
        r
    }

    /// CPU time of each thread in `range`, by row, from what each CPU ran
    /// (the idle threads weigh nothing: their running is idleness).
    /// O(CPUs × log changes + thread switches in the range): the thread a
    /// CPU runs changes only at the changes its record lists (a change it
    /// does not list, `cpu_row`, keeps the thread).
    pub fn cpu_time(&self, range: TimeRange) -> HashMap<RowId, u64> {
        let mut by_rec: FastMap<u32, u64> = FastMap::default();
        for cpu in &self.data.cpus {
            let times = cpu.times.reader();
            let threads = cpu.threads.reader();
            let mut k = cpu
                .times
                .partition_point(|t| *t <= range.start)
                .saturating_sub(1);
            while k < times.len() {
                let from = times.at(k).max(range.start);
                if from > range.end {
                    break;
                }
                let to = if k + 1 < times.len() {
                    times.at(k + 1).min(range.end)
                } else {
                    range.end
                };
                let rec = threads.at(k);
                if rec != NO_THREAD && to > from {
                    *by_rec.entry(rec).or_default() += (to - from) as u64;
                }
                k += 1;
            }
        }
        by_rec
            .into_iter()
            .filter_map(|(rec, d)| {
                let t = self.data.threads.get(rec as usize)?;
                (t.tid != 0).then_some((t.row, d))
            })
            .collect()
    }

    fn build(
        &self,
        config: &DataConfig,
        tree: TreeRender,
        range: TimeRange,
        width: u32,
        rows: Option<std::ops::Range<usize>>,
    ) -> TimeGraphRender {
        let mut b = TimeGraphRenderBuilder::new(tree, range, width);
        if let Some(rows) = rows {
            b.materialize_only(rows);
        }
        let scale = b.scale();
        let shown = b.materialized();
        // (index among the materialized rows, thread record)
        let rows: Vec<(usize, u32)> = b.tree().rows()[shown.clone()]
            .iter()
            .enumerate()
            .filter_map(|(i, r)| self.rec_of_row.get(&r.id).map(|&rec| (i, rec)))
            .collect();
        self.fill_rows(&rows, scale, b.row_slots());
        if config.arrows_on(keys::ARROWS_WAKEUP) {
            // Wake-ups are sorted by arrival: those crossing the window
            // arrive after its start and, leaving before its end, arrive
            // at most the longest wake-up later.
            let d = &self.data;
            let lo = d.wakeups.partition_point(|a| a.to_time < range.start);
            let hi = d
                .wakeups
                .partition_point(|a| a.to_time <= range.end.saturating_add(d.max_wakeup_span));
            self.push_arrows(
                &mut b,
                keys::ARROWS_WAKEUP,
                &d.wakeups,
                lo..hi.max(lo),
                range,
            );
        }
        if config.arrows_on(keys::ARROWS_CPU) {
            let d = &self.data;
            let lo = d.switches.partition_point(|a| a.from_time < range.start);
            let hi = d.switches.partition_point(|a| a.from_time <= range.end);
            self.push_arrows(&mut b, keys::ARROWS_CPU, &d.switches, lo..hi.max(lo), range);
        }
        b.build()
    }

    fn push_arrows(
        &self,
        b: &mut TimeGraphRenderBuilder,
        series: &str,
        arrows: &Column<ArrowRecord>,
        span: std::ops::Range<usize>,
        range: TimeRange,
    ) {
        let max = ((b.scale().width as f64 * ARROWS_PER_PIXEL) as usize).max(1);
        let mut stride = span.len().div_ceil(max).max(1);
        let mut span = span;
        if stride >= BLOCK {
            // Each arrow drawn the first of its packed block, read without
            // decoding the block: a full-range render of the 8 GB
            // benchmark trace decoded a block for each of its 960 arrows
            // (1.6 of its 28 ms).
            stride = stride.next_multiple_of(BLOCK);
            span.start = span.start.next_multiple_of(BLOCK).min(span.end);
        }
        let tree = b.tree().clone();
        let threads = &self.data.threads;
        let builder = b.arrows(series);
        let arrows = arrows.reader();
        for k in span.step_by(stride) {
            let a = arrows.at(k);
            if a.to_time < range.start || a.from_time > range.end {
                continue;
            }
            let from = threads[a.from as usize].row;
            let to = threads[a.to as usize].row;
            if tree.index_of(from).is_none() || tree.index_of(to).is_none() {
                continue;
            }
            let mut arrow = Arrow::new(from, a.from_time, to, a.to_time);
            arrow.count = stride as u32;
            builder.push(arrow);
        }
    }

    /// Fills the rows `rows` (index among `slots`, thread record), in
    /// runs on several threads when they hold many changes in the range:
    /// a full-range render of the busiest rows reads millions of changes
    /// (38 ms of its 49 ms on one core for the 1 GB generated trace), a
    /// zoomed one a few thousand.
    fn fill_rows(&self, rows: &[(usize, u32)], scale: PixelScale, slots: &mut [RowSlot]) {
        let fill = |styles: &Styles,
                    rows: &[(usize, u32)],
                    base: usize,
                    slots: &mut [RowSlot],
                    finish: bool| {
            for &(i, rec) in rows {
                let t = &self.data.threads[rec as usize];
                let gap = self.no_data.get(&rec).copied();
                let slot = &mut slots[i - base];
                self.push_thread(styles, t, gap, scale, &mut slot.intervals, &mut slot.events);
                if finish {
                    slot.finish();
                }
            }
        };
        // The work of a row: its summary blocks in the range.
        let range = scale.range;
        let work: Vec<usize> = rows
            .iter()
            .map(|&(_, rec)| {
                let blocks = &self.data.threads[rec as usize].blocks;
                let from = blocks.partition_point(|b| b.start < range.start);
                let to = blocks.partition_point(|b| b.start <= range.end);
                to.saturating_sub(from) + 1
            })
            .collect();
        let total: usize = work.iter().sum();
        let parts = if total < self.parallel_blocks {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(total / self.parallel_blocks.max(1))
                .min(rows.len())
        };
        if parts <= 1 {
            fill(&self.styles, rows, 0, slots, false);
            return;
        }
        // Consecutive runs of rows of about equal work, sixteen a thread:
        // the blocks leave out the drawn events, so the threads balance
        // the runs by taking the next one when free. With four a thread,
        // one of two threads finished the 8 GB benchmark trace's busiest
        // rows 5 ms before the other (a run took up to 9 ms).
        let count = (parts * 16).min(rows.len());
        let mut runs = Vec::with_capacity(count);
        let (mut from, mut sum) = (0, 0);
        for (k, w) in work.iter().enumerate() {
            sum += w;
            if sum * count >= total * (runs.len() + 1) && runs.len() + 1 < count {
                runs.push(from..k + 1);
                from = k + 1;
            }
        }
        runs.push(from..rows.len());
        // The runs with their builders, taken by whichever thread is free.
        let mut jobs = Vec::with_capacity(count);
        let (mut rest, mut base) = (slots, 0);
        for run in runs {
            let run = &rows[run];
            // The run's rows: up to its last row's.
            let end = run.last().map_or(base, |&(i, _)| i + 1);
            let (these, after) = std::mem::take(&mut rest).split_at_mut(end - base);
            rest = after;
            jobs.push((run, base, these));
            base = end;
        }
        let jobs = Mutex::new(jobs);
        let work = |styles: &Styles| loop {
            let job = match jobs.lock() {
                Ok(mut jobs) => jobs.pop(),
                Err(_) => None,
            };
            match job {
                // Each row finished here, while its items are in this
                // core's cache.
                Some((run, base, slots)) => fill(styles, run, base, slots, true),
                None => break,
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..parts {
                let spawned = std::thread::Builder::new()
                    .name("control flow render".into())
                    .spawn_scoped(scope, || work(&Styles::new()));
                if spawned.is_err() {
                    // This thread does the rest.
                    break;
                }
            }
            work(&self.styles);
        });
    }

    /// Pushes thread `t`'s states and drawn events; its last state ends
    /// at `gap`'s start, if a damaged stream left it without data.
    fn push_thread(
        &self,
        styles: &Styles,
        t: &ThreadRecord,
        gap: Option<(Time, usize)>,
        scale: PixelScale,
        intervals: &mut RowIntervalsBuilder,
        ev: &mut RowEventsBuilder,
    ) {
        let range = scale.range;
        if t.birth > range.end || t.end < range.start {
            // Not alive in the window (most threads of a zoomed render).
            return;
        }
        let (keys, code_props) = if t.tid == 0 {
            (&styles.idle_keys, &styles.idle_props)
        } else {
            (&styles.keys, &styles.code_props)
        };
        let codes = t.codes.reader();
        let end = gap.map_or(t.end, |(from, _)| from.min(t.end));
        push_steps(
            &t.times.reader(),
            end,
            scale,
            intervals,
            &t.blocks,
            |c| c as u32,
            |k| codes.at(k) as u32,
            |c| keys[c as usize].clone(),
            |k, start, end| {
                let code = codes.at(k) as usize;
                StateInterval::new(start, end, keys[code].clone())
                    .with_properties(code_props[code].clone())
            },
        );
        if let Some((from, k)) = gap {
            intervals.push_interval(self.data.damage[k].no_data(from, t.end));
        }
        // Drawn events: one per pixel column at most, each column's first
        // found by a search from the previous one's.
        let marks = t.marks.reader();
        let (mut i, mut first) = marks.first_at_or_after(0, range.start);
        while let Some(Mark { time, kind, .. }) = first.filter(|m| m.time <= range.end) {
            let key = styles.mark_keys[kind as usize & 3].clone();
            let name = styles.mark_names[kind as usize & 3].clone();
            let p = scale.pixel_of(time);
            let next: Time = if p + 1 >= scale.width {
                Time::MAX
            } else {
                scale.time_of_pixel(p + 1)
            };
            // At or after i + 1: a damaged time past `next`'s cannot stall
            // the walk.
            let (j, after) = marks.first_at_or_after(i + 1, next);
            let mut d = DrawnEvent::new(time, name, key);
            d.count = (j - i) as u32;
            ev.push(d);
            (i, first) = (j, after);
        }
    }
}
