//! The event handlers that move the state: LTTV's `state.c` hooks, for the
//! event names of LTTng 2.x kernel traces (both the modern
//! `syscall_entry_*`/`syscall_exit_*` names and the older `sys_*` /
//! `exit_syscall`), and the `vpid`/`vtid`/`procname` contexts of UST traces.
//!
//! Each event class is classified once; the payload members a handler reads
//! are located once per class too (their index in the flat value list when
//! the layout before them is fixed), so applying an event costs a lookup and
//! a few array reads.

use std::sync::Arc;

use traceloom_ctf::event::{fixed_span, FieldRef};
use traceloom_ctf::{Event, FieldValue};
use traceloom_tsdl::ir::{EnvValue, FieldType, Scope};

use traceloom_base::FastMap;

use super::{ExecMode, ModeFrame, ThreadKey, ThreadStatus, TraceState, TracesetState};

/// What an event class does to the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ignore,
    SchedSwitch,
    Wakeup,
    Fork,
    Exec,
    Exit,
    Free,
    SyscallEntry,
    SyscallExit,
    IrqEntry,
    IrqExit,
    SoftIrqRaise,
    SoftIrqEntry,
    SoftIrqExit,
    Statedump,
}

/// The payload members each kind reads, in slot order.
fn members(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::SchedSwitch => &[
            "prev_tid",
            "prev_state",
            "next_tid",
            "prev_comm",
            "next_comm",
        ],
        Kind::Wakeup => &["tid", "target_cpu", "comm"],
        Kind::Fork => &[
            "parent_pid",
            "child_tid",
            "child_pid",
            "child_comm",
            "parent_tid",
        ],
        Kind::Exec => &["filename"],
        Kind::Exit | Kind::Free => &["tid"],
        Kind::IrqEntry => &["irq", "name"],
        Kind::IrqExit => &["irq"],
        Kind::SoftIrqRaise | Kind::SoftIrqEntry | Kind::SoftIrqExit => &["vec"],
        Kind::Statedump => &[
            "tid", "pid", "ppid", "name", "mode", "submode", "status", "cpu",
        ],
        Kind::Ignore | Kind::SyscallEntry | Kind::SyscallExit => &[],
    }
}

fn classify(name: &str) -> Kind {
    match name {
        "sched_switch" => Kind::SchedSwitch,
        "sched_wakeup" | "sched_wakeup_new" | "sched_waking" => Kind::Wakeup,
        "sched_process_fork" => Kind::Fork,
        "sched_process_exec" => Kind::Exec,
        "sched_process_exit" => Kind::Exit,
        "sched_process_free" => Kind::Free,
        "irq_handler_entry" => Kind::IrqEntry,
        "irq_handler_exit" => Kind::IrqExit,
        "softirq_raise" | "irq_softirq_raise" => Kind::SoftIrqRaise,
        "softirq_entry" | "irq_softirq_entry" => Kind::SoftIrqEntry,
        "softirq_exit" | "irq_softirq_exit" => Kind::SoftIrqExit,
        "lttng_statedump_process_state" => Kind::Statedump,
        "exit_syscall" => Kind::SyscallExit,
        n if n.starts_with("syscall_entry_") || n.starts_with("compat_syscall_entry_") => {
            Kind::SyscallEntry
        }
        n if n.starts_with("syscall_exit_") || n.starts_with("compat_syscall_exit_") => {
            Kind::SyscallExit
        }
        n if n.starts_with("sys_") => Kind::SyscallEntry,
        _ => Kind::Ignore,
    }
}

/// Where to find a member: its index in the flat payload values when every
/// member before it has a fixed number of values, else its position among
/// the root structure's members (found by walking the values).
#[derive(Debug, Clone, Copy)]
enum Slot {
    Missing,
    Index(usize),
    Member(usize),
}

/// Where to find the UST thread context members.
#[derive(Debug, Clone, Copy)]
struct UstSlots {
    vtid: Slot,
    vpid: Slot,
    procname: Slot,
}

#[derive(Debug, Clone, Copy)]
struct Compiled {
    kind: Kind,
    /// The event class id (a system call's sub-mode), kept here so that
    /// applying an event does not go back to its class.
    id: u64,
    slots: [Slot; 8],
    ust: Option<UstSlots>,
}

fn locate(ty: Option<&FieldType>, name: &'static str) -> Slot {
    let Some(FieldType::Struct(s)) = ty else {
        return Slot::Missing;
    };
    let mut index = Some(0usize);
    for (member, f) in s.fields.iter().enumerate() {
        if f.name == name || f.name.strip_prefix('_') == Some(name) {
            return match index {
                Some(i) => Slot::Index(i),
                None => Slot::Member(member),
            };
        }
        index = match (index, fixed_span(&f.ty)) {
            (Some(i), Some(w)) => Some(i + w),
            _ => None,
        };
    }
    Slot::Missing
}

#[inline]
fn read(event: &Event<'_>, scope: Scope, slot: Slot) -> Option<FieldValue> {
    match slot {
        Slot::Missing => None,
        Slot::Index(i) => event.scope_values(scope).get(i).copied(),
        Slot::Member(m) => event
            .scope(scope)
            .and_then(|s: FieldRef<'_>| s.fields().nth(m))
            .and_then(|(_, f)| f.value()),
    }
}

fn read_i64(event: &Event<'_>, scope: Scope, slot: Slot) -> Option<i64> {
    read(event, scope, slot).and_then(FieldValue::as_i64)
}

fn read_str(event: &Event<'_>, scope: Scope, slot: Slot) -> Option<Arc<str>> {
    let bytes = event.bytes(read(event, scope, slot)?)?;
    Some(Arc::from(String::from_utf8_lossy(bytes).as_ref()))
}

/// The per-event-class handlers, compiled lazily and cached. One `Handlers`
/// serves one traceset.
#[derive(Debug)]
pub struct Handlers {
    // Index in `compiled` by trace index, stream class id and event class
    // id: LTTng numbers both classes densely from 0, so a table indexed by
    // them resolves every event without hashing (`NONE` where nothing is
    // compiled yet). Ids of `DENSE_LIMIT` or more go through `classes`. A
    // `Compiled` is some 200 bytes: it is never copied per event.
    dense: Vec<Vec<Vec<u32>>>,
    dense_limit: u64,
    classes: FastMap<(usize, u64, u64), usize>,
    compiled: Vec<Compiled>,
}

impl Default for Handlers {
    fn default() -> Self {
        Handlers {
            dense: Vec::new(),
            dense_limit: DENSE_LIMIT,
            classes: FastMap::default(),
            compiled: Vec::new(),
        }
    }
}

/// No compiled handler yet, in [`Handlers::dense`].
const NONE: u32 = u32::MAX;

/// Stream class and event class ids from this on are looked up by hash.
const DENSE_LIMIT: u64 = 1 << 12;

impl Handlers {
    /// Empty handlers.
    pub fn new() -> Self {
        Self::default()
    }

    fn compile(event: &Event<'_>) -> Compiled {
        let kernel = matches!(event.trace().env("domain"), Some(EnvValue::Str(d)) if d == "kernel");
        let kind = if kernel {
            classify(event.name())
        } else {
            Kind::Ignore
        };
        let payload = event.scope_type(Scope::EventPayload);
        let mut slots = [Slot::Missing; 8];
        for (slot, name) in slots.iter_mut().zip(members(kind)) {
            *slot = locate(payload, name);
        }
        let ust = if kernel {
            None
        } else {
            let ctx = event.scope_type(Scope::StreamEventContext);
            let vtid = locate(ctx, "vtid");
            (!matches!(vtid, Slot::Missing)).then(|| UstSlots {
                vtid,
                vpid: locate(ctx, "vpid"),
                procname: locate(ctx, "procname"),
            })
        };
        Compiled {
            kind,
            id: event.id(),
            slots,
            ust,
        }
    }

    /// The index in `compiled` of `event`'s class, compiling it the first
    /// time.
    #[inline]
    fn index(&mut self, event: &Event<'_>) -> usize {
        let (trace, sc, id) = (event.trace().index, event.stream_class().id, event.id());
        let dense = self
            .dense
            .get(trace)
            .and_then(|t| t.get(sc as usize))
            .and_then(|c| c.get(id as usize));
        match dense {
            Some(&i) if i != NONE => i as usize,
            _ => self.index_slow(event, (trace, sc, id)),
        }
    }

    #[cold]
    fn index_slow(&mut self, event: &Event<'_>, key: (usize, u64, u64)) -> usize {
        let compiled = &mut self.compiled;
        let i = *self.classes.entry(key).or_insert_with(|| {
            compiled.push(Self::compile(event));
            compiled.len() - 1
        });
        let (trace, sc, id) = key;
        if sc < self.dense_limit && id < self.dense_limit && i < NONE as usize {
            if self.dense.len() <= trace {
                self.dense.resize_with(trace + 1, Vec::new);
            }
            let t = &mut self.dense[trace];
            if t.len() <= sc as usize {
                t.resize_with(sc as usize + 1, Vec::new);
            }
            let c = &mut t[sc as usize];
            if c.len() <= id as usize {
                c.resize(id as usize + 1, NONE);
            }
            c[id as usize] = i as u32;
        }
        i
    }

    #[inline]
    pub(super) fn apply(&mut self, state: &mut TracesetState, event: &Event<'_>) {
        let index = self.index(event);
        let compiled = &self.compiled[index];
        let time = event.timestamp_ns().unwrap_or(0);
        let trace = state.trace_mut(event.trace().index);
        trace.time = time;
        // Numbers past u32 (damage) saturate: one CPU, u32::MAX, which the
        // statistics show as no CPU.
        let cpu = u32::try_from(event.cpu_id().unwrap_or(0)).unwrap_or(u32::MAX);
        if let Some(ust) = &compiled.ust {
            apply_ust(trace, event, ust, cpu, time);
        }
        if compiled.kind != Kind::Ignore {
            apply_kernel(trace, event, compiled, cpu, time);
        }
    }
}

fn apply_ust(trace: &mut TraceState, event: &Event<'_>, slots: &UstSlots, cpu: u32, time: i64) {
    let scope = Scope::StreamEventContext;
    let Some(vtid) = read_i64(event, scope, slots.vtid) else {
        return;
    };
    let key = ThreadKey::new(vtid, cpu);
    let running_changed = trace.cpu_mut(cpu).running != Some(key);
    let thread = trace.thread_mut(key, time);
    if let Some(pid) = read_i64(event, scope, slots.vpid) {
        thread.pid = pid;
    }
    if thread.name.is_empty() {
        if let Some(name) = read_str(event, scope, slots.procname) {
            thread.name = name;
        }
    }
    if thread.status != ThreadStatus::Run {
        thread.status = ThreadStatus::Run;
        thread.since = time;
    }
    thread.cpu = Some(cpu);
    if running_changed {
        let c = trace.cpu_mut(cpu);
        c.running = Some(key);
        c.since = time;
    }
}

#[inline]
fn push_mode(trace: &mut TraceState, cpu: u32, frame: ModeFrame, time: i64) {
    // No running thread known means no `Cpu` record changes either.
    let Some(c) = trace.cpus.get_mut(cpu) else {
        return;
    };
    let Some(key) = c.running else {
        return;
    };
    c.since = time;
    if let Some(t) = trace.threads.get_mut(&key) {
        // A system call entered from an unknown mode tells that the thread
        // was in user mode (system calls do not nest; an interrupt or a
        // trap may come in either mode, so they tell nothing).
        if frame.mode == ExecMode::Syscall && t.modes.len() == 1 {
            t.modes[0] = ModeFrame {
                mode: ExecMode::User,
                sub: 0,
            };
        }
        t.modes.push(frame);
        t.since = time;
        // A hostile trace could nest entries forever; the stack of a real
        // kernel is a few frames deep.
        if t.modes.len() > 64 {
            t.modes.remove(1);
        }
    }
}

#[inline]
fn pop_mode(trace: &mut TraceState, cpu: u32, mode: ExecMode, time: i64) {
    let from_nothing = trace.from_nothing;
    let Some(c) = trace.cpus.get_mut(cpu) else {
        return;
    };
    let Some(key) = c.running else {
        return;
    };
    c.since = time;
    if let Some(t) = trace.threads.get_mut(&key) {
        if t.modes.len() > 1 && t.mode() == mode {
            t.modes.pop();
            t.since = time;
        } else if t.modes.len() == 1
            && t.modes[0].mode != ExecMode::User
            // Read from nothing, only a system call's exit tells: an
            // interrupt or a trap may have come in kernel mode.
            && (!from_nothing || mode == ExecMode::Syscall)
        {
            // The thread was first seen inside this mode.
            t.modes[0] = ModeFrame {
                mode: ExecMode::User,
                sub: 0,
            };
            t.since = time;
        }
    }
}

fn status_from_statedump(v: i64) -> ThreadStatus {
    match v {
        1 => ThreadStatus::WaitFork,
        2 => ThreadStatus::WaitCpu,
        3 => ThreadStatus::Exit,
        4 => ThreadStatus::Zombie,
        5 => ThreadStatus::WaitBlocked,
        6 => ThreadStatus::Run,
        7 => ThreadStatus::Dead,
        _ => ThreadStatus::Unnamed,
    }
}

fn mode_from_statedump(v: i64) -> ExecMode {
    match v {
        0 => ExecMode::User,
        1 => ExecMode::Syscall,
        2 => ExecMode::Trap,
        3 => ExecMode::Irq,
        4 => ExecMode::SoftIrq,
        _ => ExecMode::Unknown,
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn apply_kernel(trace: &mut TraceState, event: &Event<'_>, c: &Compiled, cpu: u32, time: i64) {
    let p = Scope::EventPayload;
    let s = &c.slots;
    match c.kind {
        Kind::Ignore => {}
        Kind::SchedSwitch => {
            let (Some(prev_tid), Some(next_tid)) =
                (read_i64(event, p, s[0]), read_i64(event, p, s[2]))
            else {
                return;
            };
            // Preemption flags (TASK_REPORT_MAX and friends) are not states.
            let prev_state = read_i64(event, p, s[1]).unwrap_or(0) & !0x180;
            let prev_key = ThreadKey::new(prev_tid, cpu);
            let prev = trace.thread_mut(prev_key, time);
            if prev.name.is_empty() {
                if let Some(n) = read_str(event, p, s[3]) {
                    prev.name = n;
                }
            }
            prev.status = match prev.status {
                ThreadStatus::Exit | ThreadStatus::Zombie => ThreadStatus::Zombie,
                _ if prev_state == 0 => ThreadStatus::WaitCpu,
                _ => ThreadStatus::WaitBlocked,
            };
            prev.cpu = Some(cpu);
            prev.since = time;
            let next_key = ThreadKey::new(next_tid, cpu);
            let next = trace.thread_mut(next_key, time);
            if next.name.is_empty() || next.status == ThreadStatus::Unnamed {
                if let Some(n) = read_str(event, p, s[4]) {
                    next.name = n;
                }
            }
            next.status = ThreadStatus::Run;
            next.cpu = Some(cpu);
            next.since = time;
            let c = trace.cpu_mut(cpu);
            c.running = Some(next_key);
            c.since = time;
        }
        Kind::Wakeup => {
            let Some(tid) = read_i64(event, p, s[0]) else {
                return;
            };
            let target =
                read_i64(event, p, s[1]).map_or(cpu, |v| v.clamp(0, u32::MAX as i64) as u32);
            let t = trace.thread_mut(ThreadKey::new(tid, target), time);
            if t.name.is_empty() {
                if let Some(n) = read_str(event, p, s[2]) {
                    t.name = n;
                }
            }
            if matches!(
                t.status,
                ThreadStatus::WaitBlocked | ThreadStatus::Unnamed | ThreadStatus::WaitFork
            ) {
                t.status = ThreadStatus::WaitCpu;
                t.since = time;
            }
        }
        Kind::Fork => {
            let Some(child_tid) = read_i64(event, p, s[1]) else {
                return;
            };
            let parent_pid = read_i64(event, p, s[0]).unwrap_or(0);
            let child_pid = read_i64(event, p, s[2]).unwrap_or(child_tid);
            let parent_name = read_i64(event, p, s[4])
                .and_then(|ptid| trace.threads.get(&ThreadKey::new(ptid, cpu)))
                .map(|t| t.name.clone());
            let name = read_str(event, p, s[3]).or(parent_name);
            let child = trace.thread_mut(ThreadKey::new(child_tid, cpu), time);
            child.pid = child_pid;
            child.ppid = parent_pid;
            if let Some(n) = name {
                child.name = n;
            }
            child.status = ThreadStatus::WaitFork;
            // The child starts by returning from the clone system call.
            child.modes = vec![
                ModeFrame {
                    mode: ExecMode::User,
                    sub: 0,
                },
                ModeFrame {
                    mode: ExecMode::Syscall,
                    sub: 0,
                },
            ];
            child.created = Some(time);
            child.cpu = Some(cpu);
            child.since = time;
        }
        Kind::Exec => {
            let Some(file) = read(event, p, s[0]).and_then(|v| event.bytes(v)) else {
                return;
            };
            let name: Arc<str> = Arc::from(basename(&String::from_utf8_lossy(file)));
            if let Some(key) = trace.cpus.get(cpu).and_then(|c| c.running) {
                if let Some(t) = trace.threads.get_mut(&key) {
                    t.name = name;
                }
            }
        }
        Kind::Exit => {
            let Some(tid) = read_i64(event, p, s[0]) else {
                return;
            };
            let t = trace.thread_mut(ThreadKey::new(tid, cpu), time);
            t.status = ThreadStatus::Exit;
            t.since = time;
        }
        Kind::Free => {
            let Some(tid) = read_i64(event, p, s[0]) else {
                return;
            };
            if tid != 0 {
                trace.threads.remove(&ThreadKey::new(tid, cpu));
            }
        }
        Kind::SyscallEntry => push_mode(
            trace,
            cpu,
            ModeFrame {
                mode: ExecMode::Syscall,
                sub: c.id,
            },
            time,
        ),
        Kind::SyscallExit => pop_mode(trace, cpu, ExecMode::Syscall, time),
        Kind::IrqEntry => {
            let irq = read_i64(event, p, s[0]).unwrap_or(-1) as u64;
            let name = read(event, p, s[1]).and_then(|v| event.bytes(v));
            let line = trace.irqs.entry(irq).or_default();
            line.busy_on = Some(cpu);
            // The same handler name every time, mostly: no new string then.
            if let Some(name) = name {
                if line.name.as_deref().map(str::as_bytes) != Some(name) {
                    line.name = Some(Arc::from(String::from_utf8_lossy(name).as_ref()));
                }
            }
            push_mode(
                trace,
                cpu,
                ModeFrame {
                    mode: ExecMode::Irq,
                    sub: irq,
                },
                time,
            );
        }
        Kind::IrqExit => {
            let irq = read_i64(event, p, s[0]).unwrap_or(-1) as u64;
            trace.irqs.entry(irq).or_default().busy_on = None;
            pop_mode(trace, cpu, ExecMode::Irq, time);
        }
        Kind::SoftIrqRaise => {
            let vec = read_i64(event, p, s[0]).unwrap_or(-1) as u64;
            trace.softirqs.entry(vec).or_default().pending = true;
        }
        Kind::SoftIrqEntry => {
            let vec = read_i64(event, p, s[0]).unwrap_or(-1) as u64;
            let line = trace.softirqs.entry(vec).or_default();
            line.pending = false;
            line.busy_on = Some(cpu);
            push_mode(
                trace,
                cpu,
                ModeFrame {
                    mode: ExecMode::SoftIrq,
                    sub: vec,
                },
                time,
            );
        }
        Kind::SoftIrqExit => {
            let vec = read_i64(event, p, s[0]).unwrap_or(-1) as u64;
            trace.softirqs.entry(vec).or_default().busy_on = None;
            pop_mode(trace, cpu, ExecMode::SoftIrq, time);
        }
        Kind::Statedump => {
            let Some(tid) = read_i64(event, p, s[0]) else {
                return;
            };
            let dump_cpu = read_i64(event, p, s[7]).map(|v| v.clamp(0, u32::MAX as i64) as u32);
            let key = ThreadKey::new(tid, dump_cpu.unwrap_or(cpu));
            let known = trace.threads.contains_key(&key);
            let status = read_i64(event, p, s[6]).map(status_from_statedump);
            let t = trace.thread_mut(key, time);
            if let Some(pid) = read_i64(event, p, s[1]) {
                t.pid = pid;
            }
            if let Some(ppid) = read_i64(event, p, s[2]) {
                t.ppid = ppid;
            }
            if let Some(n) = read_str(event, p, s[3]) {
                t.name = n;
            }
            // The statedump describes threads the trace has not shown yet;
            // what the trace itself showed is more recent.
            if !known || t.status == ThreadStatus::Unnamed {
                if let Some(st) = status {
                    t.status = st;
                }
                let mode = read_i64(event, p, s[4]).map_or(ExecMode::User, mode_from_statedump);
                let sub = read_i64(event, p, s[5]).unwrap_or(0) as u64;
                // An unknown mode stays the only frame: the next exit from
                // any mode resolves it to user mode (see `pop_mode`).
                t.modes = vec![ModeFrame {
                    mode: if mode == ExecMode::Unknown {
                        ExecMode::Unknown
                    } else {
                        ExecMode::User
                    },
                    sub: 0,
                }];
                if !matches!(mode, ExecMode::User | ExecMode::Unknown) {
                    t.modes.push(ModeFrame { mode, sub });
                }
                t.cpu = dump_cpu;
                t.since = time;
                if status == Some(ThreadStatus::Run) {
                    if let Some(dc) = dump_cpu {
                        let c = trace.cpu_mut(dc);
                        if c.running.is_none() {
                            c.running = Some(key);
                            c.since = time;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use traceloom_ctf::{Message, Traceset};

    use super::*;

    /// The dense class table resolves every event to the handler the hash
    /// map alone resolves it to: the states agree all along the bundled
    /// kernel traces.
    #[test]
    fn dense_class_table_gives_the_states_of_the_hashed_lookup() {
        let mut checked = 0;
        for rel in [
            "tracecompass/bug446190",
            "tracecompass/flipping-endianness",
            "tracecompass/synctraces/scp_src",
            "tracecompass/synctraces/scp_dest",
        ] {
            let ts = Traceset::open(&[traceloom_testdata::ctf(rel)]).expect("open");
            let n = ts.traces().len();
            let (mut dense, mut hashed) = (TracesetState::new(n), TracesetState::new(n));
            let mut dense_handlers = Handlers::new();
            let mut hashed_handlers = Handlers {
                dense_limit: 0,
                ..Handlers::default()
            };
            let mut cursor = ts.messages();
            let mut events = 0u64;
            while let Some(msg) = cursor.next() {
                let Ok(Message::Event(ev)) = msg else {
                    continue;
                };
                dense_handlers.apply(&mut dense, &ev);
                hashed_handlers.apply(&mut hashed, &ev);
                events += 1;
                if events.is_multiple_of(97) {
                    assert_eq!(dense, hashed, "{rel}: event {events}");
                }
            }
            assert_eq!(dense, hashed, "{rel}: at the end");
            assert!(!dense_handlers.dense.is_empty(), "{rel}: table used");
            assert!(hashed_handlers.dense.is_empty(), "{rel}: table unused");
            assert_eq!(
                dense_handlers.compiled.len(),
                hashed_handlers.compiled.len()
            );
            checked += events;
        }
        eprintln!("{checked} events compared");
    }
}
