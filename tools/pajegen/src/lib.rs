//! Synthetic Pajé traces of an MPI + threads HPC run, at any size.
//!
//! The trace looks like what MPI/task-runtime tracers write (the bundled
//! pajeng examples under `traces/paje` — StarPU's `native_sample`,
//! SimGrid's `g5k` — are the models): an `%EventDef` header (some definitions with
//! extra user fields, two definitions for the same event, fields in
//! varying orders), then a container tree `machine > node > MPI process >
//! thread` with typed states, events, variables and links:
//!
//! * threads push and pop nested states (`Compute`, `MPI_Send`, ...), set
//!   a bottom state now and then, and emit task events;
//! * processes go through phases (`PajeSetState`);
//! * nodes carry a memory variable (`PajeAddVariable`/`PajeSubVariable`
//!   around a `PajeSetVariable` start) and a load variable; machines a
//!   bandwidth variable;
//! * MPI messages are links between processes held by the root container,
//!   intra-node messages links between threads held by the node;
//! * worker threads retire (`PajeDestroyContainer`) and are replaced by new
//!   ones, so containers come and go during the run.
//!
//! Every line is in global time order and valid for `pj_dump`. The output
//! depends only on the [`GeneratorConfig`] (its seed included) and stops
//! before `max_bytes`: the generator keeps enough room to deliver the
//! messages in flight and destroy the live containers at the end.

use std::collections::BinaryHeap;
use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorConfig {
    /// Machines (cluster cabinets).
    pub machines: u32,
    /// Nodes per machine.
    pub nodes_per_machine: u32,
    /// MPI processes per node.
    pub procs_per_node: u32,
    /// Threads per process (the main thread and workers).
    pub threads_per_proc: u32,
    /// The trace is at most this many bytes.
    pub max_bytes: u64,
    /// Seed of the pseudo-random story.
    pub seed: u64,
    /// Probability that a worker thread's step retires it (it is destroyed
    /// and replaced by a new thread).
    pub thread_churn: f64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            machines: 4,
            nodes_per_machine: 4,
            procs_per_node: 4,
            threads_per_proc: 4,
            max_bytes: 1 << 20,
            seed: 1,
            thread_churn: 0.0002,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Bytes written.
    pub bytes: u64,
    /// Lines written (header included).
    pub lines: u64,
    /// Containers created (the root excluded).
    pub containers: u64,
    /// Containers destroyed explicitly.
    pub destroyed: u64,
    /// Push, pop and set state lines.
    pub state_lines: u64,
    /// New event lines.
    pub events: u64,
    /// Variable lines (set, add, sub).
    pub variable_lines: u64,
    /// Links (each a start and an end line).
    pub links: u64,
    /// Time of the last line, in nanoseconds.
    pub last_time_ns: u64,
}

/// Errors of [`generate`].
#[derive(Debug)]
pub enum GenError {
    /// The configuration cannot produce a trace (zero counts, a size too
    /// small for the header and containers).
    Config(String),
    /// Writing failed.
    Io(io::Error),
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::Config(m) => f.write_str(m),
            GenError::Io(e) => write!(f, "cannot write the trace: {e}"),
        }
    }
}

impl std::error::Error for GenError {}

impl From<io::Error> for GenError {
    fn from(e: io::Error) -> Self {
        GenError::Io(e)
    }
}

/// splitmix64: small, fast, and fully determined by this file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64) < p * (1u64 << 53) as f64
    }
}

/// The header. Ids and field orders vary like in real tracers' headers;
/// `PajePushState` has two definitions, one with extra fields.
const HEADER: &str = "\
%EventDef PajeDefineContainerType 0
%  Alias string
%  Type string
%  Name string
%EndEventDef
%EventDef PajeDefineStateType 1
%  Alias string
%  Type string
%  Name string
%EndEventDef
%EventDef PajeDefineEventType 2
%  Alias string
%  Type string
%  Name string
%EndEventDef
%EventDef PajeDefineVariableType 3
%  Alias string
%  Type string
%  Name string
%  Color color
%EndEventDef
%EventDef PajeDefineLinkType 4
%  Alias string
%  Type string
%  StartContainerType string
%  EndContainerType string
%  Name string
%EndEventDef
%EventDef PajeDefineEntityValue 5
%  Alias string
%  Type string
%  Name string
%  Color color
%EndEventDef
%EventDef PajeCreateContainer 6
%  Time date
%  Alias string
%  Type string
%  Container string
%  Name string
%EndEventDef
%EventDef PajeDestroyContainer 7
%  Time date
%  Type string
%  Name string
%EndEventDef
%EventDef PajeSetState 10
%  Time date
%  Container string
%  Type string
%  Value string
%EndEventDef
%EventDef PajePushState 11
%  Time date
%  Container string
%  Type string
%  Value string
%EndEventDef
%EventDef PajePopState 12
%  Time date
%  Container string
%  Type string
%EndEventDef
%EventDef PajeSetVariable 13
%  Time date
%  Container string
%  Type string
%  Value double
%EndEventDef
%EventDef PajeAddVariable 14
%  Time date
%  Type string
%  Container string
%  Value double
%EndEventDef
%EventDef PajeSubVariable 15
%  Time date
%  Type string
%  Container string
%  Value double
%EndEventDef
%EventDef PajeNewEvent 16
%  Time date
%  Type string
%  Container string
%  Value string
%  TaskId int
%EndEventDef
%EventDef PajeStartLink 18
%  Time date
%  Type string
%  Container string
%  Value string
%  StartContainer string
%  Key string
%  Size int
%EndEventDef
%EventDef PajeEndLink 19
%  Time date
%  Type string
%  Container string
%  Value string
%  EndContainer string
%  Key string
%EndEventDef
%EventDef PajePushState 20
%  Time date
%  Container string
%  Type string
%  Value string
%  Footprint hex
%  Tag string
%EndEventDef
";

/// Types and values (lines of definition events, time-less).
const TYPES: &str = "\
0 M 0 Machine
0 N M Node
0 P N \"MPI Process\"
0 T P Thread
1 S T \"Thread State\"
1 PS P \"Process Phase\"
2 E T \"Task Event\"
3 mem N \"Memory Used\" \"0.8 0.2 0.2\"
3 load N \"CPU Load\" \"0.2 0.2 0.8\"
3 bw M \"Network Bandwidth\" \"0.2 0.8 0.2\"
4 L 0 P P \"MPI Message\"
4 TL N T T \"Shared-Memory Message\"
5 Co S Compute \"0.2 0.8 0.2\"
5 Se S MPI_Send \"0.9 0.3 0.1\"
5 Re S MPI_Recv \"0.9 0.6 0.1\"
5 Wa S MPI_Wait \"0.8 0.1 0.1\"
5 Ar S MPI_Allreduce \"0.6 0.1 0.6\"
5 IO S \"File I/O\" \"0.3 0.3 0.3\"
5 Id S Idle \"1 1 1\"
5 In PS Init \"0.5 0.5 0.5\"
5 So PS Solve \"0.1 0.5 0.9\"
5 Ex PS Exchange \"0.9 0.5 0.1\"
5 Ck PS Checkpoint \"0.4 0.2 0.0\"
5 ts E task_submit \"0.1 0.1 0.9\"
5 te E task_end \"0.9 0.1 0.1\"
5 p2p L point_to_point \"0.1 0.1 0.1\"
5 shm TL shared_copy \"0.5 0.5 0.1\"
";

const THREAD_STATES: [&str; 7] = ["Co", "Se", "Re", "Wa", "Ar", "IO", "Id"];
const PHASES: [&str; 4] = ["In", "So", "Ex", "Ck"];
/// Task kernels (event values never declared, as tracers often do).
const KERNELS: [&str; 6] = [
    "dgemm",
    "dpotrf",
    "dtrsm",
    "dsyrk",
    "memcpy_h2d",
    "memcpy_d2h",
];
/// Longest line written after the header, with room to spare; used to
/// keep the end of the trace within `max_bytes`.
const MAX_LINE: u64 = 160;
/// Deepest state nesting on a thread.
const MAX_DEPTH: u32 = 4;

struct Out<W: Write> {
    w: W,
    line: Vec<u8>,
    bytes: u64,
    lines: u64,
    last_time: u64,
}

impl<W: Write> Out<W> {
    fn raw(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())?;
        self.bytes += s.len() as u64;
        self.lines += s.bytes().filter(|&b| b == b'\n').count() as u64;
        Ok(())
    }

    /// Starts a line: `id time`.
    fn begin(&mut self, id: &str, t: u64) {
        self.line.clear();
        self.line.extend_from_slice(id.as_bytes());
        self.line.push(b' ');
        push_u64(&mut self.line, t / 1_000_000_000);
        self.line.push(b'.');
        let frac = t % 1_000_000_000;
        let at = self.line.len();
        push_u64(&mut self.line, frac);
        let digits = self.line.len() - at;
        // Zero-pad the fraction to nine digits.
        self.line
            .splice(at..at, std::iter::repeat_n(b'0', 9 - digits));
        self.last_time = t;
    }

    fn word(&mut self, s: &str) {
        self.line.push(b' ');
        self.line.extend_from_slice(s.as_bytes());
    }

    fn alias(&mut self, c: u64) {
        self.line.extend_from_slice(b" c");
        push_u64(&mut self.line, c);
    }

    fn num(&mut self, v: u64) {
        self.line.push(b' ');
        push_u64(&mut self.line, v);
    }

    fn end(&mut self) -> io::Result<()> {
        self.line.push(b'\n');
        debug_assert!(self.line.len() as u64 <= MAX_LINE);
        self.w.write_all(&self.line)?;
        self.bytes += self.line.len() as u64;
        self.lines += 1;
        Ok(())
    }
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    /// A thread does something (index into the threads, generation).
    Step(usize, u32),
    /// An MPI message arrives at a process.
    Arrive { key: u64, dst: u64 },
    /// A shared-memory message arrives at a thread of a node.
    ArriveShm { key: u64, node: u64, dst: u64 },
}

/// A heap item ordered by (time, sequence number) only: the sequence makes
/// ties deterministic.
#[derive(PartialEq, Eq)]
struct Item {
    t: u64,
    seq: u64,
    action: Action,
}

impl Ord for Item {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap.
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

struct Thread {
    alias: u64,
    proc_: usize,
    main: bool,
    depth: u32,
    alive: bool,
    generation: u32,
}

struct Proc {
    alias: u64,
    node: usize,
    /// The main thread (receives shared-memory messages).
    main_thread: u64,
}

struct Node {
    alias: u64,
    machine: usize,
    mem: u64,
}

struct Gen<W: Write> {
    out: Out<W>,
    rng: Rng,
    heap: BinaryHeap<Item>,
    seq: u64,
    next_alias: u64,
    next_key: u64,
    next_task: u64,
    machines: Vec<u64>,
    nodes: Vec<Node>,
    procs: Vec<Proc>,
    threads: Vec<Thread>,
    live_threads: u64,
    in_flight: u64,
    summary: Summary,
    churn: f64,
    /// Time after the initial containers are created.
    run_start: u64,
}

impl<W: Write> Gen<W> {
    fn schedule(&mut self, t: u64, action: Action) {
        self.seq += 1;
        self.heap.push(Item {
            t,
            seq: self.seq,
            action,
        });
    }

    fn alias(&mut self) -> u64 {
        self.next_alias += 1;
        self.next_alias
    }

    fn create(&mut self, t: u64, ty: &str, parent: Option<u64>, name: &str) -> io::Result<u64> {
        let a = self.alias();
        self.out.begin("6", t);
        self.out.alias(a);
        self.out.word(ty);
        match parent {
            Some(p) => self.out.alias(p),
            None => self.out.word("0"),
        }
        self.out.word(name);
        self.out.end()?;
        self.summary.containers += 1;
        Ok(a)
    }

    fn destroy(&mut self, t: u64, ty: &str, c: u64) -> io::Result<()> {
        self.out.begin("7", t);
        self.out.word(ty);
        self.out.alias(c);
        self.summary.destroyed += 1;
        self.out.end()
    }

    fn variable(&mut self, id: &str, t: u64, ty: &str, c: u64, v: u64) -> io::Result<()> {
        self.out.begin(id, t);
        // SetVariable has Container before Type; Add/Sub the other way.
        if id == "13" {
            self.out.alias(c);
            self.out.word(ty);
        } else {
            self.out.word(ty);
            self.out.alias(c);
        }
        self.out.num(v);
        self.summary.variable_lines += 1;
        self.out.end()
    }

    fn new_thread(&mut self, t: u64, proc_: usize, main: bool) -> io::Result<()> {
        let palias = self.procs[proc_].alias;
        let name = format!(
            "\"{} {}.{}\"",
            if main { "main" } else { "worker" },
            palias,
            self.next_alias + 1
        );
        let a = self.create(t, "T", Some(palias), &name)?;
        if main {
            self.procs[proc_].main_thread = a;
        }
        self.threads.push(Thread {
            alias: a,
            proc_,
            main,
            depth: 0,
            alive: true,
            generation: 0,
        });
        self.live_threads += 1;
        let i = self.threads.len() - 1;
        // The run starts once every initial container exists, so that the
        // lines stay in global time order.
        let first = t.max(self.run_start) + 1 + self.rng.below(10_000_000);
        self.schedule(first, Action::Step(i, 0));
        Ok(())
    }

    fn build(&mut self, cfg: &GeneratorConfig) -> io::Result<()> {
        let mut t = 0u64;
        for m in 0..cfg.machines {
            let a = self.create(t, "M", None, &format!("\"machine {m}\""))?;
            self.machines.push(a);
            self.variable("13", t, "bw", a, 10_000)?;
            for n in 0..cfg.nodes_per_machine {
                t += 1_000;
                let name = format!("\"node {m}-{n}\"");
                let na = self.create(t, "N", Some(a), &name)?;
                self.variable("13", t, "mem", na, 0)?;
                self.variable("13", t, "load", na, 0)?;
                self.nodes.push(Node {
                    alias: na,
                    machine: self.machines.len() - 1,
                    mem: 0,
                });
                for _ in 0..cfg.procs_per_node {
                    let rank = self.procs.len();
                    let pa = self.create(t, "P", Some(na), &format!("\"rank {rank}\""))?;
                    self.out.begin("10", t);
                    self.out.alias(pa);
                    self.out.word("PS");
                    self.out.word("In");
                    self.summary.state_lines += 1;
                    self.out.end()?;
                    self.procs.push(Proc {
                        alias: pa,
                        node: self.nodes.len() - 1,
                        main_thread: 0,
                    });
                    for k in 0..cfg.threads_per_proc {
                        self.new_thread(t, rank, k == 0)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// One thread step at time `t`.
    fn step(&mut self, i: usize, t: u64) -> io::Result<()> {
        let th = &self.threads[i];
        let (alias, proc_, main, depth) = (th.alias, th.proc_, th.main, th.depth);
        if !main && self.rng.chance(self.churn) {
            // Retire: destroy (closing its open states) and replace.
            self.threads[i].alive = false;
            self.live_threads -= 1;
            self.destroy(t, "T", alias)?;
            return self.new_thread(t, proc_, false);
        }
        let roll = self.rng.below(1000);
        match roll {
            0..=349 if depth < MAX_DEPTH => {
                let v = if depth == 0 {
                    "Co"
                } else {
                    THREAD_STATES[self.rng.below(THREAD_STATES.len() as u64) as usize]
                };
                if self.rng.chance(0.2) {
                    // The runtime's richer push, with a footprint and a tag.
                    self.out.begin("20", t);
                    self.out.alias(alias);
                    self.out.word("S");
                    self.out.word(v);
                    let fp = self.rng.next() >> 32;
                    self.out
                        .line
                        .extend_from_slice(format!(" {fp:08x}").as_bytes());
                    self.out.word("\"tag a\"");
                } else {
                    self.out.begin("11", t);
                    self.out.alias(alias);
                    self.out.word("S");
                    self.out.word(v);
                }
                self.threads[i].depth += 1;
            }
            0..=699 if depth > 0 => {
                self.out.begin("12", t);
                self.out.alias(alias);
                self.out.word("S");
                self.threads[i].depth -= 1;
            }
            0..=719 => {
                // A new bottom state: ends the whole stack.
                self.out.begin("10", t);
                self.out.alias(alias);
                self.out.word("S");
                self.out
                    .word(if self.rng.chance(0.5) { "Id" } else { "Co" });
                self.threads[i].depth = 1;
            }
            720..=849 => {
                self.out.begin("16", t);
                self.out.word("E");
                self.out.alias(alias);
                let v = match self.rng.below(3) {
                    0 => "ts",
                    1 => "te",
                    _ => KERNELS[self.rng.below(KERNELS.len() as u64) as usize],
                };
                self.out.word(v);
                self.next_task += 1;
                self.out.num(self.next_task);
                self.summary.events += 1;
                self.out.end()?;
                return self.next_step(i, t);
            }
            850..=929 => {
                let node = self.procs[proc_].node;
                let na = self.nodes[node].alias;
                let amount = 4096 * (1 + self.rng.below(256));
                let free = self.nodes[node].mem > 0 && self.rng.chance(0.5);
                let amount = if free {
                    amount.min(self.nodes[node].mem)
                } else {
                    amount
                };
                if free {
                    self.nodes[node].mem -= amount;
                } else {
                    self.nodes[node].mem += amount;
                }
                let id = if free { "15" } else { "14" };
                self.variable(id, t, "mem", na, amount)?;
                if self.rng.chance(0.1) {
                    let load = self.rng.below(101);
                    self.variable("13", t, "load", na, load)?;
                }
                if self.rng.chance(0.02) {
                    let bw = 1000 + self.rng.below(10_000);
                    let m = self.machines[self.nodes[node].machine];
                    self.variable("13", t, "bw", m, bw)?;
                }
                return self.next_step(i, t);
            }
            930..=979 if main => {
                self.next_key += 1;
                let key = self.next_key;
                let dst = self.procs[self.rng.below(self.procs.len() as u64) as usize].alias;
                self.out.begin("18", t);
                self.out.word("L");
                self.out.word("0");
                self.out.word("p2p");
                self.out.alias(self.procs[proc_].alias);
                self.out.num(key);
                self.out.num(8 << self.rng.below(20));
                self.in_flight += 1;
                let at = t + 5_000 + self.rng.below(200_000);
                self.schedule(at, Action::Arrive { key, dst });
                if !self.rng.chance(0.05) {
                    self.out.end()?;
                    return self.next_step(i, t);
                }
                // Now and then the process enters a new phase too.
                self.out.end()?;
                let phase = PHASES[self.rng.below(PHASES.len() as u64) as usize];
                self.out.begin("10", t);
                self.out.alias(self.procs[proc_].alias);
                self.out.word("PS");
                self.out.word(phase);
            }
            930..=979 => {
                // Shared-memory message to the main thread of a process on
                // the same node.
                self.next_key += 1;
                let key = self.next_key;
                let node = self.procs[proc_].node;
                let na = self.nodes[node].alias;
                let first = self.procs.iter().position(|p| p.node == node).unwrap_or(0);
                let per_node = self.procs.iter().filter(|p| p.node == node).count().max(1);
                let dst = self.procs[first + self.rng.below(per_node as u64) as usize].main_thread;
                self.out.begin("18", t);
                self.out.word("TL");
                self.out.alias(na);
                self.out.word("shm");
                self.out.alias(alias);
                self.out.line.extend_from_slice(b" s");
                push_u64(&mut self.out.line, key);
                self.out.num(64 << self.rng.below(12));
                self.in_flight += 1;
                let at = t + 500 + self.rng.below(20_000);
                self.schedule(at, Action::ArriveShm { key, node: na, dst });
                self.out.end()?;
                return self.next_step(i, t);
            }
            _ => {
                // Nothing to trace this time: just let time pass.
                return self.next_step(i, t);
            }
        }
        self.summary.state_lines += 1;
        self.out.end()?;
        self.next_step(i, t)
    }

    fn next_step(&mut self, i: usize, t: u64) -> io::Result<()> {
        let g = self.threads[i].generation.wrapping_add(1);
        self.threads[i].generation = g;
        let at = t + 1_000 + self.rng.below(200_000);
        self.schedule(at, Action::Step(i, g));
        Ok(())
    }

    fn arrive(&mut self, t: u64, action: Action) -> io::Result<()> {
        match action {
            Action::Arrive { key, dst } => {
                self.out.begin("19", t);
                self.out.word("L");
                self.out.word("0");
                self.out.word("p2p");
                self.out.alias(dst);
                self.out.num(key);
            }
            Action::ArriveShm { key, node, dst } => {
                self.out.begin("19", t);
                self.out.word("TL");
                self.out.alias(node);
                self.out.word("shm");
                self.out.alias(dst);
                self.out.line.extend_from_slice(b" s");
                push_u64(&mut self.out.line, key);
            }
            Action::Step(..) => return Ok(()),
        }
        self.in_flight -= 1;
        self.summary.links += 1;
        self.out.end()
    }

    /// Bytes the end of the trace may need: messages in flight, then
    /// destroying every thread, process and node.
    fn reserve(&self) -> u64 {
        let containers = self.live_threads + self.procs.len() as u64 + self.nodes.len() as u64;
        // Room for one more step too (at most three lines).
        (self.in_flight + containers + 3) * MAX_LINE
    }
}

/// Writes a trace to `w` following `cfg`.
pub fn generate<W: Write>(cfg: &GeneratorConfig, w: W) -> Result<Summary, GenError> {
    if cfg.machines == 0
        || cfg.nodes_per_machine == 0
        || cfg.procs_per_node == 0
        || cfg.threads_per_proc == 0
    {
        return Err(GenError::Config(
            "machines, nodes, processes and threads must all be at least 1".into(),
        ));
    }
    let containers = u64::from(cfg.machines)
        * u64::from(cfg.nodes_per_machine)
        * u64::from(cfg.procs_per_node)
        * (1 + u64::from(cfg.threads_per_proc));
    // Header, types, containers created and destroyed, and some events.
    let minimum = (HEADER.len() + TYPES.len()) as u64 + containers * 4 * MAX_LINE;
    if cfg.max_bytes < minimum {
        return Err(GenError::Config(format!(
            "--max-bytes {} is too small for this hierarchy; at least {minimum} needed",
            cfg.max_bytes
        )));
    }
    let mut g = Gen {
        out: Out {
            w: io::BufWriter::with_capacity(1 << 20, w),
            line: Vec::with_capacity(MAX_LINE as usize),
            bytes: 0,
            lines: 0,
            last_time: 0,
        },
        rng: Rng(cfg.seed ^ 0x7061_6a65_6765_6e00),
        heap: BinaryHeap::new(),
        seq: 0,
        next_alias: 0,
        next_key: 0,
        next_task: 0,
        machines: Vec::new(),
        nodes: Vec::new(),
        procs: Vec::new(),
        threads: Vec::new(),
        live_threads: 0,
        in_flight: 0,
        summary: Summary::default(),
        churn: cfg.thread_churn.clamp(0.0, 1.0),
        run_start: u64::from(cfg.machines) * u64::from(cfg.nodes_per_machine) * 1_000,
    };
    g.out.raw(&format!(
        "# Synthetic MPI run written by traceloom-pajegen (seed {}).\n",
        cfg.seed
    ))?;
    g.out.raw(HEADER)?;
    g.out.raw(TYPES)?;
    g.build(cfg)?;
    // The run.
    while g.out.bytes + g.reserve() < cfg.max_bytes {
        let Some(item) = g.heap.pop() else { break };
        match item.action {
            Action::Step(i, gen) => {
                let th = &g.threads[i];
                if th.alive && th.generation == gen {
                    g.step(i, item.t)?;
                }
            }
            a => g.arrive(item.t, a)?,
        }
    }
    // The end: deliver what is in flight, then destroy threads, processes
    // and nodes; machines are left for the reader's end of trace.
    let mut t = g.out.last_time;
    while let Some(item) = g.heap.pop() {
        if !matches!(item.action, Action::Step(..)) {
            t = item.t;
            g.arrive(item.t, item.action)?;
        }
    }
    t += 1_000;
    for i in 0..g.threads.len() {
        if g.threads[i].alive {
            g.threads[i].alive = false;
            let a = g.threads[i].alias;
            g.destroy(t, "T", a)?;
        }
    }
    for i in 0..g.procs.len() {
        let a = g.procs[i].alias;
        g.destroy(t, "P", a)?;
    }
    for i in 0..g.nodes.len() {
        let a = g.nodes[i].alias;
        g.destroy(t, "N", a)?;
    }
    g.out.w.flush()?;
    let mut s = g.summary;
    s.bytes = g.out.bytes;
    s.lines = g.out.lines;
    s.last_time_ns = g.out.last_time;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(cfg: &GeneratorConfig) -> (Vec<u8>, Summary) {
        let mut v = Vec::new();
        let s = generate(cfg, &mut v).unwrap();
        (v, s)
    }

    #[test]
    fn deterministic_bounded_and_time_ordered() {
        let cfg = GeneratorConfig {
            // The end reserve (about 60 kB here) is small next to this.
            max_bytes: 1_000_000,
            thread_churn: 0.01,
            ..GeneratorConfig::default()
        };
        let (a, s) = gen(&cfg);
        let (b, _) = gen(&cfg);
        assert_eq!(a, b);
        assert_eq!(s.bytes, a.len() as u64);
        assert!(a.len() as u64 <= cfg.max_bytes);
        assert!(a.len() as u64 > cfg.max_bytes * 9 / 10, "{}", a.len());
        assert!(s.links > 0 && s.events > 0 && s.destroyed > 64 && s.variable_lines > 0);
        let text = String::from_utf8(a).unwrap();
        assert_eq!(s.lines, text.lines().count() as u64);
        let mut last = 0.0f64;
        for l in text.lines().filter(|l| !l.starts_with(['%', '#'])) {
            let mut w = l.split_whitespace();
            let id = w.next().unwrap();
            if ["0", "1", "2", "3", "4", "5"].contains(&id) {
                continue;
            }
            let t: f64 = w.next().unwrap().parse().unwrap();
            assert!(t >= last, "{l}");
            last = t;
        }
        let other = GeneratorConfig { seed: 2, ..cfg };
        assert_ne!(gen(&other).0, text.into_bytes());
    }

    #[test]
    fn too_small_or_empty_configs_are_refused() {
        let small = GeneratorConfig {
            max_bytes: 1000,
            ..GeneratorConfig::default()
        };
        assert!(matches!(
            generate(&small, Vec::new()),
            Err(GenError::Config(_))
        ));
        let none = GeneratorConfig {
            machines: 0,
            ..GeneratorConfig::default()
        };
        assert!(matches!(
            generate(&none, Vec::new()),
            Err(GenError::Config(_))
        ));
    }
}
