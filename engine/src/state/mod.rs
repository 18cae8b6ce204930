//! The traceset state, as LTTV computes it from kernel (and UST) events.
//!
//! For every trace: per CPU, the thread running on it; per thread, its ids,
//! name, status (running, waiting for a CPU, blocked, ...) and its stack of
//! execution modes (user, syscall, trap, IRQ, softirq); per IRQ line and
//! softirq vector, whether it is being serviced. [`TracesetState::apply`]
//! moves the state past one event; it is what the STATE-priority hooks of
//! the events-request scheduler run, so that every later hook sees the state
//! as of its event.
//!
//! The state is a plain value: `Clone` gives a saved state (checkpoints,
//! the scheduler's per-priority saved states), and [`codec`] turns it into
//! bytes for the checkpoint cache.

pub mod codec;
pub mod cpus;
mod kernel;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traceloom_ctf::Event;
use traceloom_hooks::{Flow, HookContext, Priority};

use crate::request::StateComputation;
use crate::source::{CtfCurrent, CtfPosition, CtfSource};
use traceloom_base::FastMap;

pub use cpus::CpuMap;
pub use kernel::Handlers;

/// Execution mode of a thread (LTTV's `LttvExecutionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ExecMode {
    /// Running user-space code.
    User,
    /// In a system call.
    Syscall,
    /// In a trap / exception handler.
    Trap,
    /// In a hardware interrupt handler.
    Irq,
    /// In a softirq handler.
    SoftIrq,
    /// Not known (before the first event that tells).
    Unknown,
}

impl ExecMode {
    /// Lower-case name, as filters and tooltips show it.
    pub fn name(self) -> &'static str {
        match self {
            ExecMode::User => "user",
            ExecMode::Syscall => "syscall",
            ExecMode::Trap => "trap",
            ExecMode::Irq => "irq",
            ExecMode::SoftIrq => "softirq",
            ExecMode::Unknown => "unknown",
        }
    }
}

/// Status of a thread (LTTV's process states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ThreadStatus {
    /// Known only by id so far.
    Unnamed,
    /// Forked, has not run yet.
    WaitFork,
    /// Runnable, waiting for a CPU.
    WaitCpu,
    /// Exiting.
    Exit,
    /// Exited, not yet reaped.
    Zombie,
    /// Blocked (waiting for I/O, a lock, a timer, ...).
    WaitBlocked,
    /// Running on a CPU.
    Run,
    /// Reaped; the thread is about to be forgotten.
    Dead,
}

impl ThreadStatus {
    /// Lower-case name, as filters and tooltips show it.
    pub fn name(self) -> &'static str {
        match self {
            ThreadStatus::Unnamed => "unnamed",
            ThreadStatus::WaitFork => "wait-fork",
            ThreadStatus::WaitCpu => "wait-cpu",
            ThreadStatus::Exit => "exit",
            ThreadStatus::Zombie => "zombie",
            ThreadStatus::WaitBlocked => "wait-blocked",
            ThreadStatus::Run => "run",
            ThreadStatus::Dead => "dead",
        }
    }
}

/// One level of a thread's execution-mode stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModeFrame {
    /// The mode.
    pub mode: ExecMode,
    /// Sub-mode: the syscall's event-class id, the IRQ number or the softirq
    /// vector; 0 for user mode.
    pub sub: u64,
}

/// Identifies a thread within one trace. The idle threads (tid 0, LTTV's
/// "swapper") exist once per CPU, so their key carries the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ThreadKey {
    /// Thread id.
    pub tid: i64,
    /// The CPU for idle threads (tid 0), 0 otherwise.
    pub cpu: u32,
}

impl ThreadKey {
    /// The key of thread `tid`, or of CPU `cpu`'s idle thread when `tid == 0`.
    pub fn new(tid: i64, cpu: u32) -> Self {
        ThreadKey {
            tid,
            cpu: if tid == 0 { cpu } else { 0 },
        }
    }
}

/// One thread of a traced system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// Thread id.
    pub tid: i64,
    /// Process id (thread-group id).
    pub pid: i64,
    /// Parent process id.
    pub ppid: i64,
    /// Command name.
    pub name: Arc<str>,
    /// Current status.
    pub status: ThreadStatus,
    /// Execution-mode stack; the last frame is the current mode. Never empty.
    pub modes: Vec<ModeFrame>,
    /// The CPU the thread runs on or last ran on.
    pub cpu: Option<u32>,
    /// Time (ns) of the thread's creation, when the trace shows it.
    pub created: Option<i64>,
    /// Time (ns) of the last change of status or mode.
    pub since: i64,
}

impl Thread {
    /// What a CPU running this thread is doing (the idle thread's user
    /// mode is idle).
    pub fn cpu_mode(&self) -> CpuMode {
        CpuMode::of(self.mode(), self.tid)
    }

    fn new(tid: i64, time: i64) -> Self {
        Thread {
            tid,
            pid: tid,
            ppid: 0,
            name: Arc::from(""),
            status: ThreadStatus::Unnamed,
            modes: vec![ModeFrame {
                mode: ExecMode::User,
                sub: 0,
            }],
            cpu: None,
            created: None,
            since: time,
        }
    }

    /// The current execution mode.
    pub fn mode(&self) -> ExecMode {
        self.modes.last().map_or(ExecMode::Unknown, |f| f.mode)
    }

    /// The current mode frame.
    pub fn frame(&self) -> ModeFrame {
        self.modes.last().copied().unwrap_or(ModeFrame {
            mode: ExecMode::Unknown,
            sub: 0,
        })
    }
}

/// What a CPU is doing, for the resources view and the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum CpuMode {
    /// Running nothing (the idle thread in user mode).
    Idle,
    /// Running a thread in user mode.
    User,
    /// In a system call.
    Syscall,
    /// In a trap.
    Trap,
    /// In an IRQ handler.
    Irq,
    /// In a softirq handler.
    SoftIrq,
    /// Not known yet.
    Unknown,
}

impl CpuMode {
    /// Every mode, in the order of [`code`](Self::code).
    pub const ALL: [CpuMode; 7] = [
        CpuMode::Idle,
        CpuMode::User,
        CpuMode::Syscall,
        CpuMode::Trap,
        CpuMode::Irq,
        CpuMode::SoftIrq,
        CpuMode::Unknown,
    ];

    /// What a CPU running thread `tid` in `mode` is doing (the idle
    /// thread's user mode is idle).
    pub fn of(mode: ExecMode, tid: i64) -> CpuMode {
        match mode {
            ExecMode::User if tid == 0 => CpuMode::Idle,
            ExecMode::User => CpuMode::User,
            ExecMode::Syscall => CpuMode::Syscall,
            ExecMode::Trap => CpuMode::Trap,
            ExecMode::Irq => CpuMode::Irq,
            ExecMode::SoftIrq => CpuMode::SoftIrq,
            ExecMode::Unknown => CpuMode::Unknown,
        }
    }

    /// The mode's index in [`ALL`](Self::ALL) (how stores and tables
    /// encode it).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CpuMode::Idle => "idle",
            CpuMode::User => "user",
            CpuMode::Syscall => "syscall",
            CpuMode::Trap => "trap",
            CpuMode::Irq => "irq",
            CpuMode::SoftIrq => "softirq",
            CpuMode::Unknown => "unknown",
        }
    }
}

/// One CPU of a traced system.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// The thread running on it, once known.
    pub running: Option<ThreadKey>,
    /// Time (ns) of the last change of its running thread or mode.
    pub since: i64,
}

/// State of one IRQ line or softirq vector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The CPU servicing it, when it is being serviced.
    pub busy_on: Option<u32>,
    /// Raised and not yet serviced (softirqs only).
    pub pending: bool,
    /// Last IRQ handler name seen (IRQs only).
    pub name: Option<Arc<str>>,
}

/// The state of one trace (one traced system).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceState {
    /// Threads by key; dead ones are removed. A hash map, not a sorted
    /// one: most events look their thread up, and the order is not needed.
    pub threads: FastMap<ThreadKey, Thread>,
    /// CPUs by number, those seen only: a damaged trace's huge `cpu_id`
    /// costs one entry, not a vector up to it.
    pub cpus: CpuMap<Cpu>,
    /// IRQ lines by number.
    pub irqs: BTreeMap<u64, Line>,
    /// Softirq vectors by number.
    pub softirqs: BTreeMap<u64, Line>,
    /// Time (ns) of the last event applied.
    pub time: i64,
    /// Whether this state started in the middle of the trace with nothing
    /// known ([`TracesetState::unknown`]): a thread first seen then gets
    /// an unknown execution mode, not user mode, since its first event
    /// (being switched in, say) does not tell what it was doing. Not part
    /// of a saved state: states read from the start never set it.
    #[serde(skip)]
    pub from_nothing: bool,
}

impl TraceState {
    /// The thread running on `cpu`, if known.
    #[inline]
    pub fn running_on(&self, cpu: u32) -> Option<&Thread> {
        let key = self.cpus.get(cpu)?.running?;
        self.threads.get(&key)
    }

    /// What `cpu` is doing.
    pub fn cpu_mode(&self, cpu: u32) -> CpuMode {
        match self.running_on(cpu) {
            None => CpuMode::Unknown,
            Some(t) => t.cpu_mode(),
        }
    }

    pub(crate) fn cpu_mut(&mut self, cpu: u32) -> &mut Cpu {
        self.cpus.get_or_insert_with(cpu, Cpu::default)
    }

    pub(crate) fn thread_mut(&mut self, key: ThreadKey, time: i64) -> &mut Thread {
        let from_nothing = self.from_nothing;
        self.threads.entry(key).or_insert_with(|| {
            let mut t = Thread::new(key.tid, time);
            // An idle thread is idle (user mode) outside its interrupts.
            if from_nothing && key.tid != 0 {
                t.modes[0].mode = ExecMode::Unknown;
            }
            t
        })
    }
}

/// The state of every trace of a traceset, indexed like the traceset's
/// traces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TracesetState {
    /// Per-trace state.
    pub traces: Vec<TraceState>,
}

impl TracesetState {
    /// An empty state for `n` traces.
    pub fn new(n: usize) -> Self {
        TracesetState {
            traces: vec![TraceState::default(); n],
        }
    }

    /// The state of `n` traces read from the middle with nothing known
    /// (a window previewed ahead of every checkpoint): threads first seen
    /// get an unknown mode (see [`TraceState::from_nothing`]), until a
    /// system call's entry or exit tells user mode.
    pub fn unknown(n: usize) -> Self {
        let mut s = Self::new(n);
        for t in &mut s.traces {
            t.from_nothing = true;
        }
        s
    }

    /// The state of trace `index` (grown on demand).
    pub fn trace_mut(&mut self, index: usize) -> &mut TraceState {
        if self.traces.len() <= index {
            let from_nothing = self.traces.first().is_some_and(|t| t.from_nothing);
            self.traces.resize(
                index + 1,
                TraceState {
                    from_nothing,
                    ..TraceState::default()
                },
            );
        }
        &mut self.traces[index]
    }

    /// The thread an event of trace `trace` on `cpu` belongs to: the thread
    /// running on that CPU.
    pub fn current_thread(&self, trace: usize, cpu: u32) -> Option<&Thread> {
        self.traces.get(trace)?.running_on(cpu)
    }

    /// Moves the state past `event`, using the event handlers compiled in
    /// `handlers` (which caches per-event-class decisions).
    #[inline]
    pub fn apply(&mut self, handlers: &mut Handlers, event: &Event<'_>) {
        handlers.apply(self, event);
    }
}

/// The state computation for a scheduler over a [`CtfSource`]: the empty
/// state of `traces` traces, updated by one STATE-priority hook.
pub fn computation(traces: usize) -> StateComputation<CtfSource, TracesetState> {
    let mut c = StateComputation::new(TracesetState::new(traces));
    let mut handlers = Handlers::new();
    c.hooks.add(
        Priority::STATE,
        move |ctx: &mut HookContext<'_, CtfCurrent, CtfPosition, (), TracesetState>| {
            if let Some(ev) = ctx.event.event() {
                ctx.data.apply(&mut handlers, &ev);
            }
            Flow::Continue
        },
    );
    c
}

#[cfg(test)]
mod tests {
    use super::CpuMode;

    #[test]
    fn cpu_mode_codes_index_all_modes() {
        for (i, m) in CpuMode::ALL.iter().enumerate() {
            assert_eq!(m.code() as usize, i, "{m:?}");
        }
    }
}
