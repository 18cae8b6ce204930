//! The resources model: one row per CPU (what runs on it and in which
//! mode), per IRQ line and per softirq vector (idle, raised, busy), from the
//! kernel pass's records.

use std::sync::Arc;
use traceloom_base::{FastMap, Time, TimeRange};

use crate::model::damage::rows_without_data;
use crate::model::kernel::{KernelData, LineKind, CPU_MODES, NO_THREAD};
use crate::model::steps::{push_steps, NONE};
use crate::render::{
    Properties, RowId, StateInterval, StyleKey, TimeGraphRender, TimeGraphRenderBuilder,
    TreeBuilder, TreeNode, TreeRender,
};
use crate::style::{control_flow as cf, DataConfig, PresentationConfig, Rgba, StateStyle, NO_DATA};
use crate::time::format_duration;

/// State key of an idle CPU.
pub const CPU_IDLE: &str = "cpu-idle";
/// State key of a raised (pending) softirq.
pub const LINE_RAISED: &str = "line-raised";
/// State key of a busy IRQ line.
pub const IRQ_BUSY: &str = "irq-busy";
/// State key of a busy softirq vector.
pub const SOFTIRQ_BUSY: &str = "softirq-busy";

const GROUP_CPU: u64 = 1 << 62;
const GROUP_IRQ: u64 = 2 << 62;
const GROUP_SOFTIRQ: u64 = 3 << 62;

/// The resources view's palette: the CPU modes in the control flow's
/// colours, and the view's own states. Only what its rows can show: the
/// window's one-line legend lists every configured state.
pub fn presentation() -> PresentationConfig {
    let cf_config = PresentationConfig::control_flow();
    let mut c = PresentationConfig::control_flow();
    c.states = Default::default();
    let st = |label: &str, color: Rgba, height: f64| StateStyle {
        label: label.into(),
        color,
        height,
    };
    for key in [
        cf::RUN_USER,
        cf::RUN_SYSCALL,
        cf::RUN_TRAP,
        cf::RUN_IRQ,
        cf::RUN_SOFTIRQ,
        cf::RUN_UNKNOWN,
    ] {
        c.states.set(key, cf_config.state(key).style.into_owned());
    }
    c.states
        .set(CPU_IDLE, st("idle", Rgba::rgb(200, 200, 200), 0.35));
    c.states
        .set(LINE_RAISED, st("raised", Rgba::rgb(200, 200, 0), 0.6));
    c.states
        .set(IRQ_BUSY, st("IRQ handler", Rgba::rgb(200, 0, 100), 1.0));
    c.states.set(
        SOFTIRQ_BUSY,
        st("softirq handler", Rgba::rgb(230, 110, 170), 1.0),
    );
    c.states
        .set(NO_DATA, cf_config.state(NO_DATA).style.into_owned());
    c
}

/// The resources view's model.
#[derive(Debug)]
pub struct ResourcesModel {
    data: Arc<KernelData>,
    tree: TreeRender,
    /// Per display row: `(is_cpu, record index)`.
    rows: Vec<Option<(bool, usize)>>,
    mode_keys: Vec<StyleKey>,
    line_keys: [StyleKey; 4],
    /// CPUs (trace, CPU) and lines (trace, 0 IRQ / 1 softirq, number) left
    /// without data by a damaged stream: from when, and the damage (index
    /// in `KernelData::damage`).
    cpus_no_data: FastMap<(u32, u32), (Time, usize)>,
    lines_no_data: FastMap<(u32, u8, u64), (Time, usize)>,
}

impl ResourcesModel {
    /// A model over the kernel pass's data.
    pub fn new(data: Arc<KernelData>) -> Self {
        let mut b = TreeBuilder::new();
        let several = data.trace_names.len() > 1;
        let group = |kind: u64, trace: u32| RowId(kind | ((trace as u64) << 40) | 0xFF_FFFF_FFFF);
        for c in &data.cpus {
            let parent = several.then(|| group(GROUP_CPU, c.trace));
            b.add(TreeNode {
                id: RowId(GROUP_CPU | ((c.trace as u64) << 40) | c.cpu as u64),
                parent,
                label: if several {
                    format!("{} CPU {}", data.trace_names[c.trace as usize], c.cpu).into()
                } else {
                    format!("CPU {}", c.cpu).into()
                },
                properties: Properties::new([("cpu", c.cpu.to_string())]),
            });
        }
        for l in &data.lines {
            let kind = match l.kind {
                LineKind::Irq => GROUP_IRQ,
                LineKind::SoftIrq => GROUP_SOFTIRQ,
            };
            let label = match (l.kind, &l.name) {
                (LineKind::Irq, Some(n)) => format!("IRQ {} ({n})", l.number),
                (LineKind::Irq, None) => format!("IRQ {}", l.number),
                (LineKind::SoftIrq, _) => format!("softirq {}", softirq_name(l.number)),
            };
            b.add(TreeNode {
                id: RowId(kind | ((l.trace as u64) << 40) | (l.number & 0xFF_FFFF_FFFF)),
                parent: None,
                label: label.into(),
                properties: Properties::none(),
            });
        }
        let tree = b.build(&DataConfig::default());
        let mut rows = vec![None; tree.len()];
        for (i, c) in data.cpus.iter().enumerate() {
            if let Some(r) =
                tree.index_of(RowId(GROUP_CPU | ((c.trace as u64) << 40) | c.cpu as u64))
            {
                rows[r] = Some((true, i));
            }
        }
        for (i, l) in data.lines.iter().enumerate() {
            let kind = match l.kind {
                LineKind::Irq => GROUP_IRQ,
                LineKind::SoftIrq => GROUP_SOFTIRQ,
            };
            if let Some(r) = tree.index_of(RowId(
                kind | ((l.trace as u64) << 40) | (l.number & 0xFF_FFFF_FFFF),
            )) {
                rows[r] = Some((false, i));
            }
        }
        let mode_keys = CPU_MODES
            .iter()
            .map(|m| {
                StyleKey::new(match m {
                    traceloom_engine::state::CpuMode::Idle => CPU_IDLE,
                    traceloom_engine::state::CpuMode::User => cf::RUN_USER,
                    traceloom_engine::state::CpuMode::Syscall => cf::RUN_SYSCALL,
                    traceloom_engine::state::CpuMode::Trap => cf::RUN_TRAP,
                    traceloom_engine::state::CpuMode::Irq => cf::RUN_IRQ,
                    traceloom_engine::state::CpuMode::SoftIrq => cf::RUN_SOFTIRQ,
                    traceloom_engine::state::CpuMode::Unknown => cf::RUN_UNKNOWN,
                })
            })
            .collect();
        let cpus_no_data = rows_without_data(&data.damage, |g| g.cpus.iter().copied());
        let lines_no_data = rows_without_data(&data.damage, |g| g.lines.iter().copied());
        ResourcesModel {
            cpus_no_data,
            lines_no_data,
            data,
            tree,
            rows,
            mode_keys,
            line_keys: [
                StyleKey::new(LINE_RAISED),
                StyleKey::new(IRQ_BUSY),
                StyleKey::new(SOFTIRQ_BUSY),
                StyleKey::new(CPU_IDLE),
            ],
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

    /// The render of `range` at `width` pixels.
    pub fn render(&self, range: TimeRange, width: u32) -> TimeGraphRender {
        let mut b = TimeGraphRenderBuilder::new(self.tree.clone(), range, width);
        let scale = b.scale();
        let end = self.data.span.1;
        for (row, what) in self.rows.iter().enumerate() {
            match *what {
                Some((true, i)) => {
                    let c = &self.data.cpus[i];
                    let threads = &self.data.threads;
                    let keys = &self.mode_keys;
                    let gap = self.cpus_no_data.get(&(c.trace, c.cpu)).copied();
                    let cpu_row = c.row(threads);
                    let cpu_row = &cpu_row;
                    push_steps(
                        cpu_row,
                        gap.map_or(end, |(from, _)| from.min(end)),
                        scale,
                        b.intervals(row),
                        &c.blocks,
                        |m| m as u32,
                        |k| {
                            let (_, thread, mode) = cpu_row.at(k);
                            if thread == NO_THREAD
                                && CPU_MODES[mode as usize]
                                    == traceloom_engine::state::CpuMode::Unknown
                            {
                                NONE
                            } else {
                                mode as u32
                            }
                        },
                        |code| keys[code as usize].clone(),
                        |k, s, e| {
                            let (_, thread, mode) = cpu_row.at(k);
                            let key = keys[mode as usize].clone();
                            let mut iv = StateInterval::new(s, e, key);
                            let mut props = vec![
                                ("cpu", c.cpu.to_string()),
                                ("mode", CPU_MODES[mode as usize].name().to_string()),
                            ];
                            if let Some(t) = threads.get(thread as usize) {
                                props.push(("name", t.name.to_string()));
                                props.push(("tid", t.tid.to_string()));
                                props.push(("pid", t.pid.to_string()));
                                if t.tid != 0 {
                                    iv = iv.with_label(t.name.clone());
                                }
                            }
                            props.push(("time", s.to_string()));
                            props.push(("duration", format_duration(e.saturating_sub(s) as i128)));
                            iv.with_properties(Properties::new(props))
                        },
                    );
                    self.push_no_data(&mut b, row, gap, end);
                }
                Some((false, i)) => {
                    let l = &self.data.lines[i];
                    let busy = match l.kind {
                        LineKind::Irq => 1u32,
                        LineKind::SoftIrq => 2,
                    };
                    let keys = &self.line_keys;
                    let (codes, cpus) = (l.codes.reader(), l.cpus.reader());
                    let code = |k: usize| match codes.at(k) {
                        0 => NONE,
                        1 => 0,
                        _ => busy,
                    };
                    let kind = (l.kind == LineKind::SoftIrq) as u8;
                    let gap = self.lines_no_data.get(&(l.trace, kind, l.number)).copied();
                    push_steps(
                        &l.times.reader(),
                        gap.map_or(end, |(from, _)| from.min(end)),
                        scale,
                        b.intervals(row),
                        &l.blocks,
                        |c| if c == 1 { 0 } else { busy },
                        code,
                        |c| keys[c as usize].clone(),
                        |k, s, e| {
                            let mut props = vec![(
                                "state",
                                if codes.at(k) == 1 { "raised" } else { "busy" }.to_string(),
                            )];
                            if cpus.at(k) != u32::MAX {
                                props.push(("cpu", cpus.at(k).to_string()));
                            }
                            props.push(("time", s.to_string()));
                            props.push(("duration", format_duration(e.saturating_sub(s) as i128)));
                            StateInterval::new(s, e, keys[code(k) as usize].clone())
                                .with_properties(Properties::new(props))
                        },
                    );
                    self.push_no_data(&mut b, row, gap, end);
                }
                None => {}
            }
        }
        b.build()
    }

    /// The "no data" interval of `row` from `gap`'s start to `end`, if a
    /// damaged stream left it without data.
    fn push_no_data(
        &self,
        b: &mut TimeGraphRenderBuilder,
        row: usize,
        gap: Option<(Time, usize)>,
        end: Time,
    ) {
        if let Some((from, k)) = gap {
            b.intervals(row)
                .push_interval(self.data.damage[k].no_data(from, end));
        }
    }
}

/// Linux softirq vector names.
pub fn softirq_name(v: u64) -> String {
    const NAMES: [&str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];
    match NAMES.get(v as usize) {
        Some(n) => format!("{v} ({n})"),
        None => v.to_string(),
    }
}
