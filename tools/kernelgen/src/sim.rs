//! The story: a discrete-event simulation of a small Linux machine, turned
//! into kernel events as it runs.
//!
//! Each CPU follows a short *script* of steps (a syscall, an interrupt, a
//! context switch, ...), planned when the previous script ends. Steps of
//! all CPUs run in global time order (a heap keyed by the step's time), so
//! every decision sees the machine as it is at that instant: a thread is
//! taken off a run queue by exactly one CPU, a blocked thread must be woken
//! before any CPU can pick it, and so on. Every event gets a timestamp
//! strictly greater than the previous event of the whole trace, so any
//! reader's time-ordered merge of the per-CPU streams reproduces the exact
//! order in which the story happened.
//!
//! The story:
//! * CPU 0 runs `lttng-sessiond`, which performs the statedump
//!   (`lttng_statedump_start`, one `lttng_statedump_process_state` per
//!   thread, one `lttng_statedump_interrupt` per IRQ line,
//!   `lttng_statedump_end`) and then blocks; the other CPUs are idle and
//!   silent until the statedump ends. All user threads start blocked.
//! * Idle CPUs take device interrupts and timer softirqs, which wake
//!   blocked threads; a CPU with runnable threads switches to them; an
//!   idle CPU steals a runnable thread from a busy CPU's queue
//!   (`sched_migrate_task`).
//! * A running thread issues syscalls (entry/exit pairs), some of which
//!   wake other threads (`sched_waking`, `sched_wakeup`), some of which
//!   block (entry, `sched_switch` away; the exit comes after it is woken
//!   and scheduled again), takes interrupts (also nested in syscalls), is
//!   preempted when its time slice ends and others are waiting, and now
//!   and then forks a short-lived process (`clone`, `sched_process_fork`,
//!   `sched_wakeup_new`) that returns from `clone` in the child, execs
//!   (`execve`, `sched_process_exec`), works a little, exits
//!   (`exit_group`, `sched_process_exit`, final `sched_switch`) and is
//!   freed later from an RCU softirq (`sched_process_free`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;

use crate::catalog::*;
use crate::rng::Rng;
use crate::stream::Stream;

/// `Cpu::current` value when the CPU runs its idle task (`swapper/N`).
const IDLE: u32 = u32::MAX;
/// Position value meaning "not in that pool".
const NOWHERE: u32 = u32::MAX;

// `prev_state` values as lttng-modules 2.11 records them on kernels >= 4.15
// (`__trace_sched_switch_state`): the task-state bit, or TASK_REPORT_MAX
// for a preempted task.
const STATE_RUNNING: i64 = 0;
const STATE_INTERRUPTIBLE: i64 = 1;
const STATE_UNINTERRUPTIBLE: i64 = 2;
const STATE_EXIT_ZOMBIE: i64 = 32;
const STATE_PREEMPTED: i64 = 256;

// lttng_statedump_process_state enums (lttng-statedump-impl.c).
const THREAD_USER: i32 = 0;
const THREAD_KERNEL: i32 = 1;
const MODE_UNKNOWN: i32 = 5;
const SUBMODE_NONE: i32 = 0;
const STATUS_WAIT_CPU: i32 = 2;
const STATUS_WAIT: i32 = 5;

/// Inode number of the initial PID namespace.
const INIT_PID_NS_INUM: u32 = 4_026_531_836;
/// `prio` field of normal tasks (kernel prio 120 minus MAX_RT_PRIO).
const DEFAULT_PRIO: i32 = 20;

// Softirq vectors.
const TIMER_SOFTIRQ: u8 = 1;
const NET_TX_SOFTIRQ: u8 = 2;
const NET_RX_SOFTIRQ: u8 = 3;
const BLOCK_SOFTIRQ: u8 = 4;
const TASKLET_SOFTIRQ: u8 = 6;
const RCU_SOFTIRQ: u8 = 9;

/// Mean user-space compute time between two syscalls, ns.
const USER_GAP_MEAN: f64 = 12_000.0;
/// The same for CPU-bound threads.
const CPU_BOUND_GAP_MEAN: f64 = 40_000.0;
/// Mean time an idle CPU waits for its next interrupt, ns.
const IDLE_GAP_MEAN: f64 = 300_000.0;
/// Most short-lived processes alive at once.
const MAX_CHILDREN: u32 = 16;

struct IrqLine {
    irq: i32,
    action: &'static str,
    chip: &'static str,
    softirq: Option<u8>,
}

static IRQS: &[IrqLine] = &[
    IrqLine {
        irq: 1,
        action: "i8042",
        chip: "IR-IO-APIC",
        softirq: Some(TASKLET_SOFTIRQ),
    },
    IrqLine {
        irq: 16,
        action: "ahci[0000:00:17.0]",
        chip: "IR-PCI-MSI",
        softirq: Some(BLOCK_SOFTIRQ),
    },
    IrqLine {
        irq: 24,
        action: "eth0-rx-0",
        chip: "IR-PCI-MSI",
        softirq: Some(NET_RX_SOFTIRQ),
    },
    IrqLine {
        irq: 25,
        action: "eth0-tx-0",
        chip: "IR-PCI-MSI",
        softirq: Some(NET_TX_SOFTIRQ),
    },
    IrqLine {
        irq: 28,
        action: "nvme0q1",
        chip: "IR-PCI-MSI",
        softirq: Some(BLOCK_SOFTIRQ),
    },
    IrqLine {
        irq: 31,
        action: "i915",
        chip: "IR-PCI-MSI",
        softirq: None,
    },
];

static PROCESS_NAMES: &[&str] = &[
    "postgres",
    "nginx",
    "java",
    "python3",
    "firefox",
    "Xorg",
    "gnome-shell",
    "redis-server",
    "node",
    "sshd",
    "dockerd",
    "chrome",
    "mysqld",
    "rsyslogd",
    "pulseaudio",
    "containerd",
];

static EXECUTABLES: &[&str] = &[
    "/usr/bin/ls",
    "/usr/bin/grep",
    "/bin/sh",
    "/usr/bin/cat",
    "/usr/bin/git",
    "/usr/bin/make",
    "/usr/bin/sed",
    "/usr/bin/gawk",
    "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
];

static FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/proc/self/stat",
    "/etc/passwd",
    "/var/lib/data/table.db",
    "/usr/share/locale/locale.alias",
    "/dev/null",
    "/sys/fs/cgroup/cpu.max",
    "/home/user/.cache/index.bin",
];

fn comm(name: &str) -> [u8; 16] {
    // TASK_COMM_LEN is 16 including the NUL: at most 15 bytes survive.
    let mut c = [0u8; 16];
    let n = name.len().min(15);
    c[..n].copy_from_slice(&name.as_bytes()[..n]);
    c
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TState {
    Running,
    Runnable,
    Blocked,
    Dead,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Appears in the statedump only (init, kernel threads): never runs.
    Inert,
    /// Long-lived user thread.
    Worker,
    /// Short-lived forked process: execs, works `bursts_left` more
    /// actions, then exits.
    Child { execed: bool, bursts_left: u32 },
}

/// A syscall that has been entered and not yet exited.
#[derive(Clone, Copy, Debug)]
struct Pending {
    sc: Sc,
    /// Return value for the exit event.
    ret: i64,
    /// Syscall-specific: the buffer/address echoed in the exit event, or
    /// the executable index for `execve`.
    arg: u64,
}

struct Thread {
    tid: i32,
    pid: i32,
    ppid: i32,
    comm: [u8; 16],
    prio: i32,
    state: TState,
    /// The CPU it runs on, is queued on, or last ran on (`task_cpu`).
    cpu: u32,
    pending: Option<Pending>,
    role: Role,
    kernel: bool,
    /// Computes long and rarely sleeps (so it is the one that gets
    /// preempted when its time slice ends).
    cpu_bound: bool,
    /// Index in `Sim::blocked` while it is in the wake-up pool.
    pool_pos: u32,
}

impl Thread {
    /// A blocked, normal-priority user thread that last ran on `cpu`.
    fn new(tid: i32, pid: i32, ppid: i32, name: &str, role: Role, cpu: u32) -> Thread {
        Thread {
            tid,
            pid,
            ppid,
            comm: comm(name),
            prio: DEFAULT_PRIO,
            state: TState::Blocked,
            cpu,
            pending: None,
            role,
            kernel: false,
            cpu_bound: false,
            pool_pos: NOWHERE,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    StatedumpStart,
    StatedumpProcess(u32),
    StatedumpInterrupt(u8),
    StatedumpEnd,
    SysEntry(Sc, bool),
    SysExit,
    Wake,
    IrqEntry(u8),
    IrqExit(u8),
    SoftRaise(u8),
    SoftEntry(u8),
    SoftExit(u8),
    FreeDead,
    Block,
    Preempt,
    Dispatch,
    Fork,
    Exec,
    ProcExit,
    Die,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    /// Time after the end of the previous step on this CPU, ns.
    delay: u64,
    op: Op,
}

struct Cpu {
    current: u32,
    rq: VecDeque<u32>,
    script: VecDeque<Step>,
    /// The script is an idle wait that has not started: a wake-up may
    /// replace it with an immediate dispatch.
    interruptible: bool,
    /// Bumped whenever the script is replaced; stale heap entries carry an
    /// older version and are skipped.
    version: u32,
    /// Index in `Sim::idle` while idle with an empty run queue.
    idle_pos: u32,
    slice_end: u64,
    swapper: [u8; 16],
}

/// Numbers the simulation needs from the configuration.
pub(crate) struct SimParams {
    pub cpus: u32,
    pub processes: u32,
    pub threads_per_process: u32,
    pub max_events: u64,
    pub max_bytes: u64,
    pub seed: u64,
    pub start_ts: u64,
    pub fork_rate: f64,
}

/// What the run produced besides the stream files.
pub(crate) struct SimOutcome {
    pub events: u64,
    pub counts: Vec<u64>,
    pub first_ts: u64,
    pub last_ts: u64,
    pub stop_ts: u64,
    pub threads: u32,
    pub forks: u64,
    pub exits: u64,
}

/// Little-endian field writers over the payload scratch buffer.
struct W<'a>(&'a mut Vec<u8>);

impl W<'_> {
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn comm(&mut self, c: &[u8; 16]) -> &mut Self {
        self.0.extend_from_slice(c);
        self
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        self
    }
}

pub(crate) struct Sim {
    p: SimParams,
    rng: Rng,
    threads: Vec<Thread>,
    cpus: Vec<Cpu>,
    streams: Vec<Stream>,
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// Blocked user threads that a wake-up may pick.
    blocked: Vec<u32>,
    /// Idle CPUs with empty run queues.
    idle: Vec<u32>,
    /// Exited threads whose `sched_process_free` is still due.
    to_free: VecDeque<u32>,
    /// Timestamp of the last event of the whole trace.
    now: u64,
    /// Time position of the step being executed.
    cursor: u64,
    emitted: u64,
    bytes: u64,
    counts: Vec<u64>,
    fixed_sizes: Vec<Option<usize>>,
    first_ts: Option<u64>,
    done: bool,
    next_tid: i32,
    live_children: u32,
    forks: u64,
    exits: u64,
    scratch: Vec<u8>,
}

impl Sim {
    pub(crate) fn new(p: SimParams, streams: Vec<Stream>, initial_bytes: u64) -> Sim {
        let mut rng = Rng::new(p.seed ^ 0x6B65_726E_656C_6765); // "kernelge"
        let ncpu = p.cpus as u64;
        let mut threads = Vec::new();
        threads.push(Thread::new(
            1,
            1,
            0,
            "systemd",
            Role::Inert,
            rng.below(ncpu) as u32,
        ));
        let mut kthreadd = Thread::new(2, 2, 0, "kthreadd", Role::Inert, rng.below(ncpu) as u32);
        kthreadd.kernel = true;
        threads.push(kthreadd);
        for c in 0..p.cpus {
            let tid = 3 + c as i32;
            let mut k = Thread::new(tid, tid, 2, &format!("ksoftirqd/{c}"), Role::Inert, c);
            k.kernel = true;
            threads.push(k);
        }
        let mut next_tid = 1000;
        // The session daemon runs the statedump on CPU 0.
        let mut sessiond = Thread::new(next_tid, next_tid, 1, "lttng-sessiond", Role::Worker, 0);
        sessiond.state = TState::Running;
        threads.push(sessiond);
        let sessiond = (threads.len() - 1) as u32;
        next_tid += 1;
        for proc_idx in 0..p.processes {
            let base = PROCESS_NAMES[proc_idx as usize % PROCESS_NAMES.len()];
            let pid = next_tid;
            // A few processes run at other nice levels.
            let prio = match rng.below(8) {
                0 => 10,
                1 => 25,
                _ => DEFAULT_PRIO,
            };
            let cpu_bound = rng.chance(0.1);
            for t in 0..p.threads_per_process {
                let name = if t == 0 {
                    base.to_string()
                } else {
                    let short: String = base.chars().take(9).collect();
                    format!("{short}:w{t}")
                };
                let cpu = rng.below(ncpu) as u32;
                let mut th = Thread::new(next_tid, pid, 1, &name, Role::Worker, cpu);
                th.prio = prio;
                th.cpu_bound = cpu_bound;
                threads.push(th);
                next_tid += 1;
            }
        }

        let cpus = (0..p.cpus)
            .map(|c| Cpu {
                current: if c == 0 { sessiond } else { IDLE },
                rq: VecDeque::new(),
                script: VecDeque::new(),
                interruptible: false,
                version: 0,
                idle_pos: NOWHERE,
                slice_end: 0,
                swapper: comm(&format!("swapper/{c}")),
            })
            .collect();
        let mut sim = Sim {
            now: p.start_ts,
            cursor: p.start_ts,
            p,
            rng,
            threads,
            cpus,
            streams,
            heap: BinaryHeap::new(),
            blocked: Vec::new(),
            idle: Vec::new(),
            to_free: VecDeque::new(),
            emitted: 0,
            bytes: initial_bytes,
            counts: vec![0; EVENTS.len()],
            fixed_sizes: (0..EVENTS.len() as u32).map(fixed_payload_size).collect(),
            first_ts: None,
            done: false,
            next_tid,
            live_children: 0,
            forks: 0,
            exits: 0,
            scratch: Vec::with_capacity(512),
        };
        for t in 0..sim.threads.len() as u32 {
            let th = &sim.threads[t as usize];
            if th.role == Role::Worker && th.state == TState::Blocked {
                sim.pool_add(t);
            }
        }
        for c in 1..sim.cpus.len() {
            sim.update_idle(c);
        }
        sim
    }

    /// Runs the story until the event or byte budget is spent, then
    /// flushes the streams.
    pub(crate) fn run(mut self) -> io::Result<(SimOutcome, Vec<crate::stream::StreamStats>)> {
        self.plan_statedump();
        self.schedule(0, self.p.start_ts + 20_000);
        while !self.done {
            let Some(Reverse((mut t, c, version))) = self.heap.pop() else {
                break;
            };
            let c = c as usize;
            if version != self.cpus[c].version {
                continue;
            }
            loop {
                let step = self.cpus[c]
                    .script
                    .pop_front()
                    .expect("scheduled CPU has a step");
                self.cpus[c].interruptible = false;
                self.cursor = t.max(self.now + 1);
                self.exec(c, step.op)?;
                if self.done {
                    break;
                }
                if self.cpus[c].script.is_empty() {
                    self.plan(c);
                }
                let next = self.cursor + self.cpus[c].script.front().expect("planned").delay;
                // Keep running this CPU while its next step is still the
                // earliest of all: the same order the heap would give,
                // without the round trip through it.
                match self.heap.peek() {
                    Some(&Reverse((pt, pc, _))) if (pt, pc as usize) < (next, c) => {
                        let version = self.cpus[c].version;
                        self.heap.push(Reverse((next, c as u32, version)));
                        break;
                    }
                    _ => t = next,
                }
            }
        }
        let stop_ts = self.now + 1_000;
        let mut stats = Vec::with_capacity(self.streams.len());
        for mut s in self.streams.drain(..) {
            s.set_stop(stop_ts);
            stats.push(s.finish()?);
        }
        let outcome = SimOutcome {
            events: self.emitted,
            counts: self.counts,
            first_ts: self.first_ts.unwrap_or(self.p.start_ts),
            last_ts: if self.emitted > 0 {
                self.now
            } else {
                self.p.start_ts
            },
            stop_ts,
            threads: self.threads.len() as u32,
            forks: self.forks,
            exits: self.exits,
        };
        Ok((outcome, stats))
    }

    // ----- bookkeeping -------------------------------------------------

    /// Queues CPU `c`'s next step: its delay counts from `base`.
    fn schedule(&mut self, c: usize, base: u64) {
        let cpu = &self.cpus[c];
        if let Some(step) = cpu.script.front() {
            self.heap
                .push(Reverse((base + step.delay, c as u32, cpu.version)));
        }
    }

    fn push(&mut self, c: usize, delay: u64, op: Op) {
        self.cpus[c].script.push_back(Step { delay, op });
    }

    fn pool_add(&mut self, t: u32) {
        self.threads[t as usize].pool_pos = self.blocked.len() as u32;
        self.blocked.push(t);
    }

    fn pool_take_random(&mut self) -> Option<u32> {
        if self.blocked.is_empty() {
            return None;
        }
        let i = self.rng.index(self.blocked.len());
        let t = self.blocked.swap_remove(i);
        if let Some(&moved) = self.blocked.get(i) {
            self.threads[moved as usize].pool_pos = i as u32;
        }
        self.threads[t as usize].pool_pos = NOWHERE;
        Some(t)
    }

    /// Keeps `idle` equal to the set of idle CPUs with empty run queues.
    fn update_idle(&mut self, c: usize) {
        let cpu = &self.cpus[c];
        let should = cpu.current == IDLE && cpu.rq.is_empty();
        let is = cpu.idle_pos != NOWHERE;
        if should && !is {
            self.cpus[c].idle_pos = self.idle.len() as u32;
            self.idle.push(c as u32);
        } else if !should && is {
            let i = self.cpus[c].idle_pos as usize;
            self.idle.swap_remove(i);
            if let Some(&moved) = self.idle.get(i) {
                self.cpus[moved as usize].idle_pos = i as u32;
            }
            self.cpus[c].idle_pos = NOWHERE;
        }
    }

    fn enqueue(&mut self, target: usize, t: u32) {
        let th = &mut self.threads[t as usize];
        th.state = TState::Runnable;
        th.cpu = target as u32;
        self.cpus[target].rq.push_back(t);
        self.update_idle(target);
    }

    /// An idle CPU waiting for its next interrupt is told to reschedule
    /// now (the IPI a remote wake-up sends).
    fn kick(&mut self, target: usize) {
        let cpu = &self.cpus[target];
        if cpu.current != IDLE || !cpu.interruptible {
            return;
        }
        let delay = self.rng.range(1_000, 4_000);
        let cpu = &mut self.cpus[target];
        cpu.script.clear();
        cpu.script.push_back(Step {
            delay,
            op: Op::Dispatch,
        });
        cpu.interruptible = false;
        cpu.version = cpu.version.wrapping_add(1);
        let at = self.cursor;
        self.schedule(target, at);
    }

    /// Where a woken task goes: its previous CPU or the waker's if idle,
    /// any idle CPU, else the shorter of two run queues.
    fn select_cpu(&mut self, waker: usize, prev: usize) -> usize {
        if self.cpus[prev].idle_pos != NOWHERE {
            return prev;
        }
        if self.cpus[waker].idle_pos != NOWHERE {
            return waker;
        }
        if !self.idle.is_empty() {
            return self.idle[self.rng.index(self.idle.len())] as usize;
        }
        let other = self.rng.index(self.cpus.len());
        if self.cpus[other].rq.len() < self.cpus[prev].rq.len() {
            other
        } else {
            prev
        }
    }

    /// A busy CPU with waiting threads, found by sampling a few CPUs.
    fn steal_victim(&mut self, c: usize, tries: u32) -> Option<usize> {
        if self.cpus.len() < 2 {
            return None;
        }
        for _ in 0..tries {
            let v = self.rng.index(self.cpus.len());
            if v != c && self.cpus[v].current != IDLE && !self.cpus[v].rq.is_empty() {
                return Some(v);
            }
        }
        None
    }

    fn slice(&mut self) -> u64 {
        self.rng.range(1_000_000, 3_000_000)
    }

    /// Writes the event in `scratch` to CPU `c`'s stream.
    fn emit(&mut self, c: usize, id: u32) -> io::Result<()> {
        if self.done {
            return Ok(());
        }
        debug_assert!(
            self.fixed_sizes[id as usize]
                .into_iter()
                .all(|n| n == self.scratch.len()),
            "payload size mismatch for {}",
            EVENTS[id as usize].name
        );
        let ts = self.cursor.max(self.now + 1);
        self.now = ts;
        self.cursor = ts;
        self.bytes += self.streams[c].emit(ts, id, &self.scratch)? as u64;
        self.emitted += 1;
        self.counts[id as usize] += 1;
        self.first_ts.get_or_insert(ts);
        if self.emitted >= self.p.max_events || self.bytes >= self.p.max_bytes {
            self.done = true;
        }
        Ok(())
    }

    /// Starts a payload in the scratch buffer.
    fn payload(&mut self) -> W<'_> {
        self.scratch.clear();
        W(&mut self.scratch)
    }

    /// A short pause between events of one step.
    fn tick(&mut self, lo: u64, hi: u64) {
        self.cursor += self.rng.range(lo, hi);
    }

    fn buffer_address(&mut self) -> u64 {
        0x5600_0000_0000 + self.rng.below(1 << 28) * 16
    }

    // ----- planning ----------------------------------------------------

    fn plan_statedump(&mut self) {
        self.push(0, 0, Op::StatedumpStart);
        for t in 0..self.threads.len() as u32 {
            let d = self.rng.range(400, 1_500);
            self.push(0, d, Op::StatedumpProcess(t));
        }
        for i in 0..IRQS.len() as u8 {
            let d = self.rng.range(300, 900);
            self.push(0, d, Op::StatedumpInterrupt(i));
        }
        self.push(0, 600, Op::StatedumpEnd);
        let d = self.rng.range(2_000, 6_000);
        self.push(0, d, Op::Block);
    }

    fn plan(&mut self, c: usize) {
        let cur = self.cpus[c].current;
        if cur == IDLE {
            self.plan_idle(c);
        } else {
            self.plan_thread(c, cur);
        }
    }

    fn plan_idle(&mut self, c: usize) {
        if !self.cpus[c].rq.is_empty() || self.steal_victim(c, 2).is_some() {
            let d = self.rng.range(1_000, 4_000);
            self.push(c, d, Op::Dispatch);
            return;
        }
        // Now and then a long sleep, beyond the 27-bit compact timestamp
        // range, as on a real idle CPU.
        let wait = if self.rng.chance(0.03) {
            self.rng.range(140_000_000, 400_000_000)
        } else {
            self.rng.exp(IDLE_GAP_MEAN)
        };
        if self.rng.chance(0.6) {
            self.push_irq(c, wait, 0.85);
        } else {
            self.push_timer_softirq(c, wait, 0.7);
        }
        self.cpus[c].interruptible = true;
    }

    fn plan_thread(&mut self, c: usize, t: u32) {
        let (in_syscall, role, cpu_bound) = {
            let th = &self.threads[t as usize];
            (th.pending.is_some(), th.role, th.cpu_bound)
        };
        if in_syscall {
            // Back on a CPU inside a syscall: finish it.
            let d = self.rng.range(800, 3_000);
            self.push(c, d, Op::SysExit);
            return;
        }
        match role {
            Role::Child {
                execed: false,
                bursts_left,
            } => {
                self.threads[t as usize].role = Role::Child {
                    execed: true,
                    bursts_left,
                };
                let d = self.rng.exp(20_000.0);
                self.push(c, d, Op::SysEntry(Sc::Execve, false));
                let d = self.rng.range(60_000, 250_000);
                self.push(c, d, Op::Exec);
                let d = self.rng.range(2_000, 8_000);
                self.push(c, d, Op::SysExit);
                return;
            }
            Role::Child { bursts_left: 0, .. } => {
                let d = self.rng.exp(USER_GAP_MEAN);
                self.push(c, d, Op::SysEntry(Sc::ExitGroup, false));
                let d = self.rng.range(3_000, 15_000);
                self.push(c, d, Op::ProcExit);
                let d = self.rng.range(2_000, 10_000);
                self.push(c, d, Op::Die);
                return;
            }
            Role::Child {
                execed,
                bursts_left,
            } => {
                self.threads[t as usize].role = Role::Child {
                    execed,
                    bursts_left: bursts_left - 1,
                };
            }
            Role::Worker | Role::Inert => {}
        }
        let may_fork = role == Role::Worker && self.live_children < MAX_CHILDREN;
        let cpu = &self.cpus[c];
        let (gap_mean, block_p) = if cpu_bound {
            (CPU_BOUND_GAP_MEAN, 0.02)
        } else {
            (USER_GAP_MEAN, 0.12)
        };
        let gap = self.rng.exp(gap_mean);
        if !cpu.rq.is_empty() && self.cursor >= cpu.slice_end {
            self.push(c, gap, Op::Preempt);
            return;
        }
        let fork_p = if may_fork { self.p.fork_rate } else { 0.0 };
        let r = self.rng.unit();
        if r < fork_p {
            self.push(c, gap, Op::SysEntry(Sc::Clone, false));
            let d = self.rng.range(15_000, 40_000);
            self.push(c, d, Op::Fork);
            let d = self.rng.range(3_000, 10_000);
            self.push(c, d, Op::SysExit);
        } else if r < fork_p + block_p {
            let sc = match self.rng.below(10) {
                0..=4 => Sc::Read,
                5..=7 => Sc::Futex,
                _ => Sc::Nanosleep,
            };
            self.push(c, gap, Op::SysEntry(sc, true));
            let d = self.rng.range(1_000, 4_000);
            self.push(c, d, Op::Block);
        } else if r < fork_p + block_p + 0.06 {
            if self.rng.chance(0.5) {
                self.push_irq(c, gap, 0.3);
            } else {
                self.push_timer_softirq(c, gap, 0.3);
            }
        } else {
            let sc = match self.rng.below(20) {
                0..=5 => Sc::Read,
                6..=10 => Sc::Write,
                11..=12 => Sc::Futex,
                13..=14 => Sc::Openat,
                15..=16 => Sc::Close,
                _ => Sc::Ioctl,
            };
            self.push(c, gap, Op::SysEntry(sc, false));
            let wakes = match sc {
                Sc::Write => self.rng.chance(0.15),
                Sc::Futex => self.rng.chance(0.5),
                _ => false,
            };
            if wakes {
                let d = self.rng.range(500, 2_500);
                self.push(c, d, Op::Wake);
            }
            if self.rng.chance(0.05) {
                // An interrupt arriving while in the kernel.
                let line = self.rng.index(IRQS.len()) as u8;
                let d = self.rng.range(300, 2_000);
                self.push(c, d, Op::IrqEntry(line));
                let d = self.rng.range(1_500, 6_000);
                self.push(c, d, Op::IrqExit(line));
            }
            let d = self.rng.range(600, 6_000);
            self.push(c, d, Op::SysExit);
        }
    }

    /// A device interrupt, with its softirq when the line has one.
    fn push_irq(&mut self, c: usize, first: u64, wake_p: f64) {
        let line = self.rng.index(IRQS.len()) as u8;
        self.push(c, first, Op::IrqEntry(line));
        match IRQS[line as usize].softirq {
            Some(vec) => {
                let d = self.rng.range(300, 1_200);
                self.push(c, d, Op::SoftRaise(vec));
                let d = self.rng.range(300, 1_500);
                self.push(c, d, Op::IrqExit(line));
                let d = self.rng.range(200, 800);
                self.push(c, d, Op::SoftEntry(vec));
                if self.rng.chance(wake_p) {
                    let d = self.rng.range(800, 4_000);
                    self.push(c, d, Op::Wake);
                }
                let d = self.rng.range(500, 3_000);
                self.push(c, d, Op::SoftExit(vec));
            }
            None => {
                let d = self.rng.range(1_500, 8_000);
                self.push(c, d, Op::IrqExit(line));
            }
        }
    }

    /// Softirqs raised by the local timer interrupt (which LTTng does not
    /// trace as `irq_handler_*`): TIMER, and RCU when frees are due.
    fn push_timer_softirq(&mut self, c: usize, first: u64, wake_p: f64) {
        self.push(c, first, Op::SoftRaise(TIMER_SOFTIRQ));
        let rcu = !self.to_free.is_empty() || self.rng.chance(0.2);
        if rcu {
            let d = self.rng.range(200, 600);
            self.push(c, d, Op::SoftRaise(RCU_SOFTIRQ));
        }
        let d = self.rng.range(500, 1_500);
        self.push(c, d, Op::SoftEntry(TIMER_SOFTIRQ));
        if self.rng.chance(wake_p) {
            let d = self.rng.range(800, 3_000);
            self.push(c, d, Op::Wake);
        }
        let d = self.rng.range(500, 2_500);
        self.push(c, d, Op::SoftExit(TIMER_SOFTIRQ));
        if rcu {
            let d = self.rng.range(200, 800);
            self.push(c, d, Op::SoftEntry(RCU_SOFTIRQ));
            let d = self.rng.range(500, 2_000);
            self.push(c, d, Op::FreeDead);
            let d = self.rng.range(500, 2_000);
            self.push(c, d, Op::SoftExit(RCU_SOFTIRQ));
        }
    }

    // ----- execution ---------------------------------------------------

    fn exec(&mut self, c: usize, op: Op) -> io::Result<()> {
        match op {
            Op::StatedumpStart => {
                self.payload();
                self.emit(c, STATEDUMP_START)
            }
            Op::StatedumpProcess(t) => self.statedump_process(c, t),
            Op::StatedumpInterrupt(i) => {
                let line = &IRQS[i as usize];
                self.payload()
                    .u32(line.irq as u32)
                    .string(line.chip)
                    .string(line.action);
                self.emit(c, STATEDUMP_INTERRUPT)
            }
            Op::StatedumpEnd => {
                self.payload();
                self.emit(c, STATEDUMP_END)?;
                // The other CPUs come to life once the statedump is over.
                for other in 1..self.cpus.len() {
                    self.plan_idle(other);
                    let at = self.cursor;
                    self.schedule(other, at);
                }
                Ok(())
            }
            Op::SysEntry(sc, blocking) => self.sys_entry(c, sc, blocking),
            Op::SysExit => self.sys_exit(c),
            Op::Wake => self.wake(c),
            Op::IrqEntry(i) => {
                let line = &IRQS[i as usize];
                self.payload().i32(line.irq).string(line.action);
                self.emit(c, IRQ_HANDLER_ENTRY)
            }
            Op::IrqExit(i) => {
                let irq = IRQS[i as usize].irq;
                self.payload().i32(irq).i32(1); // IRQ_HANDLED
                self.emit(c, IRQ_HANDLER_EXIT)
            }
            Op::SoftRaise(vec) => {
                self.payload().u32(u32::from(vec));
                self.emit(c, IRQ_SOFTIRQ_RAISE)
            }
            Op::SoftEntry(vec) => {
                self.payload().u32(u32::from(vec));
                self.emit(c, IRQ_SOFTIRQ_ENTRY)
            }
            Op::SoftExit(vec) => {
                self.payload().u32(u32::from(vec));
                self.emit(c, IRQ_SOFTIRQ_EXIT)
            }
            Op::FreeDead => {
                // delayed_put_task_struct runs as an RCU callback.
                let n = self.to_free.len().min(2);
                for _ in 0..n {
                    let t = self.to_free.pop_front().expect("counted");
                    let th = &self.threads[t as usize];
                    let (cm, tid, prio) = (th.comm, th.tid, th.prio);
                    self.payload().comm(&cm).i32(tid).i32(prio);
                    self.emit(c, SCHED_PROCESS_FREE)?;
                    self.tick(200, 900);
                }
                Ok(())
            }
            Op::Block => {
                let cur = self.cpus[c].current;
                let state = match self.threads[cur as usize].pending {
                    Some(Pending { sc: Sc::Read, .. }) if self.rng.chance(0.25) => {
                        STATE_UNINTERRUPTIBLE
                    }
                    _ => STATE_INTERRUPTIBLE,
                };
                self.switch_out(c, state)
            }
            Op::Preempt => {
                if self.cpus[c].rq.is_empty() {
                    return Ok(());
                }
                self.switch_out(c, STATE_PREEMPTED)
            }
            Op::Die => self.switch_out(c, STATE_EXIT_ZOMBIE),
            Op::Dispatch => self.dispatch(c),
            Op::Fork => self.fork(c),
            Op::Exec => self.exec_image(c),
            Op::ProcExit => {
                let cur = self.cpus[c].current as usize;
                let th = &mut self.threads[cur];
                // exit_group never returns.
                th.pending = None;
                let (cm, tid, prio) = (th.comm, th.tid, th.prio);
                self.payload().comm(&cm).i32(tid).i32(prio);
                self.emit(c, SCHED_PROCESS_EXIT)
            }
        }
    }

    fn statedump_process(&mut self, c: usize, t: u32) -> io::Result<()> {
        let th = &self.threads[t as usize];
        let status = if th.state == TState::Blocked {
            STATUS_WAIT
        } else {
            STATUS_WAIT_CPU
        };
        let kind = if th.kernel {
            THREAD_KERNEL
        } else {
            THREAD_USER
        };
        let (tid, pid, ppid, cm, cpu) = (th.tid, th.pid, th.ppid, th.comm, th.cpu);
        self.payload()
            .i32(tid) // tid
            .i32(tid) // vtid
            .i32(pid) // pid
            .i32(pid) // vpid
            .i32(ppid) // ppid
            .i32(ppid) // vppid
            .comm(&cm)
            .i32(kind)
            .i32(MODE_UNKNOWN)
            .i32(SUBMODE_NONE)
            .i32(status)
            .i32(0) // ns_level
            .u32(INIT_PID_NS_INUM)
            .u32(cpu);
        self.emit(c, STATEDUMP_PROCESS_STATE)
    }

    fn sys_entry(&mut self, c: usize, sc: Sc, blocking: bool) -> io::Result<()> {
        let cur = self.cpus[c].current as usize;
        let fd = self.rng.range(3, 40) as u32;
        let addr = self.buffer_address();
        let mut pending = Pending { sc, ret: 0, arg: 0 };
        self.scratch.clear();
        match sc {
            Sc::Read => {
                let count = [1u64, 512, 4096, 8192, 65536][self.rng.index(5)];
                pending.ret = if !blocking && self.rng.chance(0.15) {
                    -11 // EAGAIN
                } else {
                    self.rng.range(1, count) as i64
                };
                pending.arg = addr;
                W(&mut self.scratch).u32(fd).u64(count);
            }
            Sc::Write => {
                let count = self.rng.range(1, 16_384);
                pending.ret = count as i64;
                W(&mut self.scratch).u32(fd).u64(addr).u64(count);
            }
            Sc::Openat => {
                let file = FILES[self.rng.index(FILES.len())];
                let (flags, mode) = if self.rng.chance(0.7) {
                    (0o2_000_000, 0) // O_RDONLY | O_CLOEXEC
                } else {
                    (0o1_101, 0o644) // O_WRONLY | O_CREAT | O_TRUNC
                };
                pending.ret = if self.rng.chance(0.1) {
                    -2
                } else {
                    i64::from(fd)
                };
                W(&mut self.scratch)
                    .i32(-100)
                    .string(file)
                    .i32(flags)
                    .u16(mode);
            }
            Sc::Close => {
                W(&mut self.scratch).u32(fd);
            }
            Sc::Futex => {
                // FUTEX_WAIT_PRIVATE sleeps; FUTEX_WAKE_PRIVATE wakes one.
                let (op, val) = if blocking { (128, 0) } else { (129, 1) };
                pending.ret = if blocking {
                    0
                } else {
                    self.rng.range(0, 1) as i64
                };
                pending.arg = addr;
                W(&mut self.scratch)
                    .u64(addr)
                    .i32(op)
                    .u32(val)
                    .u64(0)
                    .u64(0)
                    .u32(0);
            }
            Sc::Ioctl => {
                let cmd = [0x5401u32, 0x541B, 0xC018_6201, 0x8008_4601][self.rng.index(4)];
                pending.arg = addr;
                W(&mut self.scratch).u32(fd).u32(cmd).u64(addr);
            }
            Sc::Nanosleep => {
                W(&mut self.scratch).u64(addr);
            }
            Sc::Clone => {
                // SIGCHLD | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID, as
                // glibc's fork() passes; the return value is set by Fork.
                W(&mut self.scratch)
                    .u64(0x0120_0011)
                    .u64(0)
                    .u64(0)
                    .u64(addr);
            }
            Sc::Execve => {
                let exe = self.rng.index(EXECUTABLES.len());
                pending.arg = exe as u64;
                let argv = self.buffer_address();
                W(&mut self.scratch)
                    .string(EXECUTABLES[exe])
                    .u64(argv)
                    .u64(addr);
            }
            Sc::ExitGroup => {
                W(&mut self.scratch).i32(0);
            }
        }
        debug_assert!(self.threads[cur].pending.is_none());
        self.threads[cur].pending = Some(pending);
        self.emit(c, sc.entry_id())
    }

    fn sys_exit(&mut self, c: usize) -> io::Result<()> {
        let cur = self.cpus[c].current as usize;
        let p = self.threads[cur].pending.take().expect("in a syscall");
        self.scratch.clear();
        let mut w = W(&mut self.scratch);
        w.i64(p.ret);
        match p.sc {
            Sc::Read | Sc::Ioctl => {
                w.u64(p.arg);
            }
            Sc::Futex => {
                w.u64(p.arg).u64(0);
            }
            Sc::Nanosleep => {
                w.u64(0);
            }
            Sc::Write | Sc::Openat | Sc::Close | Sc::Clone | Sc::Execve | Sc::ExitGroup => {}
        }
        self.emit(c, p.sc.exit_id())
    }

    /// `sched_switch` from the current task to the head of the run queue
    /// (or the idle task). The outgoing task blocks, is requeued, or is
    /// dead, depending on `state`.
    fn switch_out(&mut self, c: usize, state: i64) -> io::Result<()> {
        let prev = self.cpus[c].current;
        debug_assert_ne!(prev, IDLE);
        let next = self.cpus[c].rq.pop_front().unwrap_or(IDLE);
        let p = &self.threads[prev as usize];
        let (pc, ptid, pprio) = (p.comm, p.tid, p.prio);
        let (nc, ntid, nprio) = self.task_ident(c, next);
        self.payload()
            .comm(&pc)
            .i32(ptid)
            .i32(pprio)
            .i64(state)
            .comm(&nc)
            .i32(ntid)
            .i32(nprio);
        self.emit(c, SCHED_SWITCH)?;
        match state {
            STATE_PREEMPTED => {
                self.threads[prev as usize].state = TState::Runnable;
                self.cpus[c].rq.push_back(prev);
            }
            STATE_EXIT_ZOMBIE => {
                self.threads[prev as usize].state = TState::Dead;
                self.to_free.push_back(prev);
                self.live_children -= 1;
                self.exits += 1;
            }
            _ => {
                self.threads[prev as usize].state = TState::Blocked;
                self.pool_add(prev);
            }
        }
        self.run_next(c, next);
        Ok(())
    }

    fn task_ident(&self, c: usize, t: u32) -> ([u8; 16], i32, i32) {
        if t == IDLE {
            (self.cpus[c].swapper, 0, DEFAULT_PRIO)
        } else {
            let th = &self.threads[t as usize];
            (th.comm, th.tid, th.prio)
        }
    }

    fn run_next(&mut self, c: usize, next: u32) {
        if next != IDLE {
            let th = &mut self.threads[next as usize];
            debug_assert_eq!(th.state, TState::Runnable);
            th.state = TState::Running;
            th.cpu = c as u32;
        }
        self.cpus[c].current = next;
        self.cpus[c].slice_end = self.cursor + self.slice();
        self.update_idle(c);
    }

    /// The idle task hands the CPU to a queued thread, stealing one from a
    /// busy CPU first when its own queue is empty.
    fn dispatch(&mut self, c: usize) -> io::Result<()> {
        debug_assert_eq!(self.cpus[c].current, IDLE);
        if self.cpus[c].rq.is_empty() {
            let Some(victim) = self.steal_victim(c, 4) else {
                return Ok(());
            };
            let t = self.cpus[victim].rq.pop_back().expect("victim has waiters");
            let th = &self.threads[t as usize];
            let (cm, tid, prio) = (th.comm, th.tid, th.prio);
            self.payload()
                .comm(&cm)
                .i32(tid)
                .i32(prio)
                .i32(victim as i32)
                .i32(c as i32);
            self.emit(c, SCHED_MIGRATE_TASK)?;
            self.update_idle(victim);
            self.enqueue(c, t);
            self.tick(500, 2_000);
        }
        let next = self.cpus[c].rq.pop_front().expect("non-empty run queue");
        let (nc, ntid, nprio) = self.task_ident(c, next);
        let swapper = self.cpus[c].swapper;
        self.payload()
            .comm(&swapper)
            .i32(0)
            .i32(DEFAULT_PRIO)
            .i64(STATE_RUNNING)
            .comm(&nc)
            .i32(ntid)
            .i32(nprio);
        self.emit(c, SCHED_SWITCH)?;
        self.run_next(c, next);
        Ok(())
    }

    /// try_to_wake_up on a random blocked thread, from CPU `c`.
    fn wake(&mut self, c: usize) -> io::Result<()> {
        let Some(t) = self.pool_take_random() else {
            return Ok(());
        };
        let th = &self.threads[t as usize];
        debug_assert_eq!(th.state, TState::Blocked);
        let (cm, tid, prio, prev_cpu) = (th.comm, th.tid, th.prio, th.cpu as usize);
        let target = self.select_cpu(c, prev_cpu);
        self.payload()
            .comm(&cm)
            .i32(tid)
            .i32(prio)
            .i32(prev_cpu as i32);
        self.emit(c, SCHED_WAKING)?;
        if target != prev_cpu {
            self.tick(100, 400);
            self.payload()
                .comm(&cm)
                .i32(tid)
                .i32(prio)
                .i32(prev_cpu as i32)
                .i32(target as i32);
            self.emit(c, SCHED_MIGRATE_TASK)?;
        }
        self.tick(200, 800);
        self.payload()
            .comm(&cm)
            .i32(tid)
            .i32(prio)
            .i32(target as i32);
        self.emit(c, SCHED_WAKEUP)?;
        self.enqueue(target, t);
        if target != c {
            self.kick(target);
        }
        Ok(())
    }

    fn fork(&mut self, c: usize) -> io::Result<()> {
        let parent = self.cpus[c].current as usize;
        let child_tid = self.next_tid;
        self.next_tid += 1;
        let bursts = self.rng.range(2, 10) as u32;
        let par = &mut self.threads[parent];
        if let Some(p) = &mut par.pending {
            p.ret = i64::from(child_tid);
        }
        let (pc, ptid, parent_pid, pprio) = (par.comm, par.tid, par.pid, par.prio);
        let child = Thread {
            tid: child_tid,
            pid: child_tid,
            ppid: parent_pid,
            comm: pc,
            prio: pprio,
            state: TState::Runnable,
            cpu: c as u32,
            // The child returns from the clone its parent entered.
            pending: Some(Pending {
                sc: Sc::Clone,
                ret: 0,
                arg: 0,
            }),
            role: Role::Child {
                execed: false,
                bursts_left: bursts,
            },
            kernel: false,
            cpu_bound: false,
            pool_pos: NOWHERE,
        };
        let t = self.threads.len() as u32;
        self.threads.push(child);
        self.payload()
            .comm(&pc)
            .i32(ptid)
            .i32(parent_pid)
            .u32(INIT_PID_NS_INUM)
            .comm(&pc)
            .i32(child_tid)
            .u8(1) // one PID namespace level
            .i32(child_tid)
            .i32(child_tid)
            .u32(INIT_PID_NS_INUM);
        self.emit(c, SCHED_PROCESS_FORK)?;
        let target = self.select_cpu(c, c);
        if target != c {
            self.tick(200, 600);
            self.payload()
                .comm(&pc)
                .i32(child_tid)
                .i32(pprio)
                .i32(c as i32)
                .i32(target as i32);
            self.emit(c, SCHED_MIGRATE_TASK)?;
        }
        self.tick(300, 1_000);
        self.payload()
            .comm(&pc)
            .i32(child_tid)
            .i32(pprio)
            .i32(target as i32);
        self.emit(c, SCHED_WAKEUP_NEW)?;
        self.enqueue(target, t);
        if target != c {
            self.kick(target);
        }
        self.live_children += 1;
        self.forks += 1;
        Ok(())
    }

    fn exec_image(&mut self, c: usize) -> io::Result<()> {
        let cur = self.cpus[c].current as usize;
        let exe = self.threads[cur].pending.map_or(0, |p| p.arg as usize);
        let path = EXECUTABLES[exe];
        let th = &mut self.threads[cur];
        th.comm = comm(path.rsplit('/').next().unwrap_or(path));
        let tid = th.tid;
        self.payload().string(path).i32(tid).i32(tid);
        self.emit(c, SCHED_PROCESS_EXEC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_truncates_to_15_bytes() {
        let c = comm("a-very-long-thread-name");
        assert_eq!(&c[..15], b"a-very-long-thr");
        assert_eq!(c[15], 0);
        assert_eq!(&comm("ls")[..3], b"ls\0");
    }
}
