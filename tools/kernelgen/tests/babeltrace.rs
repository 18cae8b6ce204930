//! Generated traces checked with babeltrace2, the reference CTF reader:
//! it must read them without a warning, find exactly the events the
//! generator says it wrote, decode the expected values, and the decoded
//! event sequence must tell a coherent story.

use std::collections::HashMap;
use std::fs;
use std::process::Command;

use traceloom_kernelgen::{generate, GeneratorConfig, Summary};

/// One decoded event: babeltrace2's text output parsed back.
#[derive(Debug)]
struct Ev {
    ts: u64,
    name: String,
    cpu: u32,
    fields: Vec<(String, String)>,
}

impl Ev {
    fn get(&self, key: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no field {key} in {self:?}"))
    }
    fn int(&self, key: &str) -> i64 {
        let v = self.get(key);
        v.parse()
            .unwrap_or_else(|_| panic!("{key} = {v} is not an integer in {self:?}"))
    }
    fn str(&self, key: &str) -> &str {
        let v = self.get(key);
        v.strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or_else(|| panic!("{key} = {v} is not a string"))
    }
}

/// Splits `a = 1, b = [ [0] = 2, [1] = 3 ], c = "x"` at top-level commas.
fn split_fields(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0usize);
    let bytes = s.as_bytes();
    let mut push = |part: &str| {
        let part = part.trim();
        if !part.is_empty() {
            let (k, v) = part
                .split_once(" = ")
                .unwrap_or_else(|| panic!("bad field {part:?}"));
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    };
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'[' | b'{' if !quoted => depth += 1,
            b']' | b'}' if !quoted => depth -= 1,
            b',' if !quoted && depth == 0 => {
                push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&s[start..]);
    out
}

/// Parses a line of `babeltrace2 --clock-cycles --no-delta`:
/// `[cycles] host name: { cpu_id = N }, { fields }`.
fn parse_line(line: &str) -> Ev {
    let rest = line.strip_prefix('[').expect("line starts with [");
    let (ts, rest) = rest.split_once("] ").expect("timestamp");
    let (_host, rest) = rest.split_once(' ').expect("hostname");
    let (name, rest) = rest
        .split_once(": { cpu_id = ")
        .expect("event name and cpu_id");
    let (cpu, rest) = rest.split_once(" }, { ").expect("stream context");
    let body = rest
        .strip_suffix(" }")
        .or_else(|| rest.strip_suffix("}"))
        .expect("payload");
    Ev {
        ts: ts.parse().expect("cycles"),
        name: name.to_string(),
        cpu: cpu.parse().expect("cpu_id"),
        fields: split_fields(body),
    }
}

/// Generates into a temp dir and decodes it with babeltrace2 (which must be
/// installed).
fn generate_and_read(cfg: &GeneratorConfig) -> (tempfile::TempDir, Summary, Vec<Ev>) {
    traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
    let dir = tempfile::tempdir().unwrap();
    let summary = generate(cfg, dir.path()).unwrap();
    let out = Command::new("babeltrace2")
        .args(["--clock-cycles", "--no-delta"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "babeltrace2 failed: {stderr}");
    assert!(stderr.trim().is_empty(), "babeltrace2 complained: {stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let events: Vec<Ev> = text.lines().map(parse_line).collect();
    (dir, summary, events)
}

fn check_counts(summary: &Summary, events: &[Ev]) {
    assert_eq!(events.len() as u64, summary.events);
    let mut by_name: HashMap<&str, u64> = HashMap::new();
    for e in events {
        *by_name.entry(e.name.as_str()).or_default() += 1;
    }
    for &(name, n) in &summary.event_counts {
        assert_eq!(by_name.remove(name).unwrap_or(0), n, "count of {name}");
    }
    assert!(by_name.is_empty(), "undeclared events decoded: {by_name:?}");
    // Timestamps are strictly increasing over the whole trace, which also
    // proves the 27-bit compact timestamps were reconstructed right.
    for w in events.windows(2) {
        assert!(
            w[0].ts < w[1].ts,
            "time not increasing: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    assert_eq!(events.first().unwrap().ts, summary.first_timestamp);
    assert_eq!(events.last().unwrap().ts, summary.last_timestamp);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Blocked,
    Runnable,
    Running,
    New,
    Exiting,
    Dead,
    Freed,
}

#[derive(Debug)]
struct Task {
    st: St,
    comm: String,
    /// CPU it must next run on (where it was woken, queued or migrated to).
    cpu: Option<u32>,
    syscall: Option<String>,
    /// For a parent inside clone(): the tid clone must return.
    clone_ret: Option<i64>,
}

#[derive(Debug, PartialEq, Eq)]
enum Ctx {
    Irq(i64),
    Soft(i64),
}

/// Checks the story told by a decoded trace; returns how many times each
/// kind of transition was seen, so callers can require coverage.
fn check_story(events: &[Ev], ncpus: u32) -> HashMap<&'static str, u64> {
    let mut tasks: HashMap<i64, Task> = HashMap::new();
    let mut current: Vec<Option<i64>> = vec![None; ncpus as usize];
    let mut stacks: Vec<Vec<Ctx>> = (0..ncpus).map(|_| Vec::new()).collect();
    let mut raised: Vec<HashMap<i64, u32>> = (0..ncpus).map(|_| HashMap::new()).collect();
    let mut seen: HashMap<&'static str, u64> = HashMap::new();
    let mut note = |k: &'static str| *seen.entry(k).or_default() += 1;

    for (i, e) in events.iter().enumerate() {
        let c = e.cpu as usize;
        assert!(c < ncpus as usize, "event {i} on cpu {c}");
        let ctx = || format!("event #{i}: {e:?}");
        let cur = current[c];
        let running = |t: Option<i64>| -> i64 {
            t.unwrap_or_else(|| panic!("no known running thread on cpu {c} at {}", ctx()))
        };
        match e.name.as_str() {
            "lttng_statedump_start" | "lttng_statedump_end" => {}
            "lttng_statedump_interrupt" => {
                assert!(
                    !e.str("name").is_empty() && !e.str("action").is_empty(),
                    "{}",
                    ctx()
                );
            }
            "lttng_statedump_process_state" => {
                let tid = e.int("tid");
                assert_eq!(tid, e.int("vtid"));
                assert_eq!(e.int("pid"), e.int("vpid"));
                assert_eq!(e.int("ppid"), e.int("vppid"));
                assert_eq!(e.int("mode"), 5);
                let st = match e.int("status") {
                    5 => St::Blocked,
                    2 => St::Running,
                    s => panic!("unexpected status {s} in {}", ctx()),
                };
                let prev = tasks.insert(
                    tid,
                    Task {
                        st,
                        comm: e.str("name").to_string(),
                        cpu: None,
                        syscall: None,
                        clone_ret: None,
                    },
                );
                assert!(prev.is_none(), "thread {tid} dumped twice");
                note("statedump");
            }
            "sched_switch" => {
                assert!(
                    stacks[c].is_empty(),
                    "switch inside an interrupt: {}",
                    ctx()
                );
                let prev = e.int("prev_tid");
                let next = e.int("next_tid");
                let state = e.int("prev_state");
                match cur {
                    Some(t) => assert_eq!(prev, t, "prev_tid is not the running thread: {}", ctx()),
                    // First switch on this CPU: the CPU was idle, or ran
                    // the thread the statedump saw on a CPU.
                    None => assert!(prev == 0 || tasks[&prev].st == St::Running, "{}", ctx()),
                }
                if prev == 0 {
                    assert_eq!(e.str("prev_comm"), format!("swapper/{c}"));
                    assert_eq!(state, 0, "{}", ctx());
                } else {
                    let t = tasks.get_mut(&prev).unwrap();
                    assert_eq!(
                        t.st,
                        if state == 32 {
                            St::Exiting
                        } else {
                            St::Running
                        },
                        "{}",
                        ctx()
                    );
                    assert_eq!(e.str("prev_comm"), t.comm, "{}", ctx());
                    t.st = match state {
                        1 | 2 => St::Blocked,
                        256 => St::Runnable,
                        32 => St::Dead,
                        s => panic!("unexpected prev_state {s}: {}", ctx()),
                    };
                    t.cpu = Some(c as u32);
                    note(match state {
                        1 | 2 => "block",
                        256 => "preempt",
                        _ => "die",
                    });
                }
                if next == 0 {
                    assert_eq!(e.str("next_comm"), format!("swapper/{c}"));
                } else {
                    let t = tasks
                        .get_mut(&next)
                        .unwrap_or_else(|| panic!("unknown next: {}", ctx()));
                    assert_eq!(
                        t.st,
                        St::Runnable,
                        "switch to a thread that is not runnable: {}",
                        ctx()
                    );
                    assert_eq!(
                        t.cpu,
                        Some(c as u32),
                        "thread runs elsewhere than queued: {}",
                        ctx()
                    );
                    assert_eq!(e.str("next_comm"), t.comm, "{}", ctx());
                    t.st = St::Running;
                }
                current[c] = Some(next);
                note("switch");
            }
            "sched_waking" | "sched_wakeup" => {
                let tid = e.int("tid");
                let t = tasks.get_mut(&tid).unwrap();
                assert_eq!(
                    t.st,
                    St::Blocked,
                    "waking a thread that is not blocked: {}",
                    ctx()
                );
                assert_eq!(e.str("comm"), t.comm);
                if e.name == "sched_wakeup" {
                    t.st = St::Runnable;
                    t.cpu = Some(e.int("target_cpu") as u32);
                    note("wakeup");
                }
            }
            "sched_wakeup_new" => {
                let t = tasks.get_mut(&e.int("tid")).unwrap();
                assert_eq!(t.st, St::New, "{}", ctx());
                t.st = St::Runnable;
                t.cpu = Some(e.int("target_cpu") as u32);
                note("wakeup_new");
            }
            "sched_migrate_task" => {
                let t = tasks.get_mut(&e.int("tid")).unwrap();
                assert!(
                    matches!(t.st, St::Runnable | St::Blocked | St::New),
                    "migrating a running thread: {}",
                    ctx()
                );
                if t.st == St::Runnable {
                    assert_eq!(t.cpu, Some(e.int("orig_cpu") as u32), "{}", ctx());
                }
                t.cpu = Some(e.int("dest_cpu") as u32);
                note("migrate");
            }
            "sched_process_fork" => {
                let parent = running(cur);
                assert_eq!(e.int("parent_tid"), parent, "{}", ctx());
                let child = e.int("child_tid");
                assert_eq!(e.int("child_pid"), child);
                assert_eq!(e.get("vtids"), format!("[ [0] = {child} ]"));
                assert!(!tasks.contains_key(&child), "tid reused: {}", ctx());
                let p = tasks.get_mut(&parent).unwrap();
                assert_eq!(
                    p.syscall.as_deref(),
                    Some("clone"),
                    "fork outside clone: {}",
                    ctx()
                );
                assert_eq!(e.str("parent_comm"), p.comm);
                p.clone_ret = Some(child);
                let comm = e.str("child_comm").to_string();
                assert_eq!(comm, p.comm);
                // The child returns from the clone its parent entered.
                tasks.insert(
                    child,
                    Task {
                        st: St::New,
                        comm,
                        cpu: None,
                        syscall: Some("clone".into()),
                        clone_ret: Some(0),
                    },
                );
                note("fork");
            }
            "sched_process_exec" => {
                let tid = running(cur);
                assert_eq!(e.int("tid"), tid);
                assert_eq!(e.int("old_tid"), tid);
                let t = tasks.get_mut(&tid).unwrap();
                assert_eq!(t.syscall.as_deref(), Some("execve"), "{}", ctx());
                let file = e.str("filename");
                t.comm = file.rsplit('/').next().unwrap().chars().take(15).collect();
                note("exec");
            }
            "sched_process_exit" => {
                let tid = running(cur);
                assert_eq!(e.int("tid"), tid);
                let t = tasks.get_mut(&tid).unwrap();
                assert_eq!(t.syscall.take().as_deref(), Some("exit_group"), "{}", ctx());
                assert_eq!(e.str("comm"), t.comm);
                t.st = St::Exiting;
                note("exit");
            }
            "sched_process_free" => {
                let t = tasks.get_mut(&e.int("tid")).unwrap();
                assert_eq!(t.st, St::Dead, "freeing a live thread: {}", ctx());
                t.st = St::Freed;
                note("free");
            }
            "irq_handler_entry" => {
                stacks[c].push(Ctx::Irq(e.int("irq")));
                assert!(!e.str("name").is_empty());
                note("irq");
            }
            "irq_handler_exit" => {
                assert_eq!(stacks[c].pop(), Some(Ctx::Irq(e.int("irq"))), "{}", ctx());
                assert_eq!(e.int("ret"), 1);
            }
            "irq_softirq_raise" => {
                *raised[c].entry(e.int("vec")).or_default() += 1;
            }
            "irq_softirq_entry" => {
                let vec = e.int("vec");
                let n = raised[c].get_mut(&vec).filter(|n| **n > 0);
                *n.unwrap_or_else(|| panic!("softirq not raised: {}", ctx())) -= 1;
                assert!(stacks[c].is_empty(), "softirq inside a handler: {}", ctx());
                stacks[c].push(Ctx::Soft(vec));
                note("softirq");
            }
            "irq_softirq_exit" => {
                assert_eq!(stacks[c].pop(), Some(Ctx::Soft(e.int("vec"))), "{}", ctx());
            }
            name => {
                if let Some(sc) = name.strip_prefix("syscall_entry_") {
                    assert!(
                        stacks[c].is_empty(),
                        "syscall inside an interrupt: {}",
                        ctx()
                    );
                    let tid = running(cur);
                    assert_ne!(tid, 0, "syscall from the idle task: {}", ctx());
                    let t = tasks.get_mut(&tid).unwrap();
                    assert_eq!(t.st, St::Running);
                    assert!(t.syscall.is_none(), "nested syscall: {}", ctx());
                    t.syscall = Some(sc.to_string());
                    if sc == "openat" {
                        assert_eq!(e.int("dfd"), -100);
                        assert!(e.str("filename").starts_with('/'));
                    }
                    note("syscall_entry");
                } else if let Some(sc) = name.strip_prefix("syscall_exit_") {
                    assert!(
                        stacks[c].is_empty(),
                        "syscall exit inside an interrupt: {}",
                        ctx()
                    );
                    let tid = running(cur);
                    let t = tasks.get_mut(&tid).unwrap();
                    assert_eq!(
                        t.syscall.take().as_deref(),
                        Some(sc),
                        "exit without entry: {}",
                        ctx()
                    );
                    if sc == "clone" {
                        let want = t.clone_ret.take().expect("clone return value");
                        assert_eq!(e.int("ret"), want, "{}", ctx());
                    }
                    note("syscall_exit");
                } else {
                    panic!("unexpected event {}", ctx());
                }
            }
        }
    }
    // Every CPU's current thread is indeed running, and only there.
    for (c, cur) in current.iter().enumerate() {
        if let Some(t) = cur.filter(|&t| t != 0) {
            assert_eq!(tasks[&t].st, St::Running, "cpu {c}");
        }
    }
    let running = tasks.values().filter(|t| t.st == St::Running).count();
    assert!(running <= ncpus as usize);
    seen
}

#[test]
fn babeltrace2_reads_it_all_with_expected_values() {
    let cfg = GeneratorConfig {
        cpus: 4,
        processes: 12,
        threads_per_process: 3,
        events: 200_000,
        packet_size: 64 * 1024,
        seed: 11,
        ..GeneratorConfig::default()
    };
    let (_dir, summary, events) = generate_and_read(&cfg);
    check_counts(&summary, &events);
    assert!(
        summary.packets > 40,
        "several packets per stream: {}",
        summary.packets
    );
    assert!(summary.compact_headers > 0 && summary.extended_headers > 0);

    let first = &events[0];
    assert_eq!(
        (first.name.as_str(), first.cpu),
        ("lttng_statedump_start", 0)
    );
    let systemd = events
        .iter()
        .find(|e| e.name == "lttng_statedump_process_state" && e.int("tid") == 1)
        .unwrap();
    assert_eq!(systemd.str("name"), "systemd");
    assert_eq!(
        (systemd.int("pid"), systemd.int("ppid"), systemd.int("type")),
        (1, 0, 0)
    );
    assert_eq!(
        (systemd.int("status"), systemd.int("ns_inum")),
        (5, 4_026_531_836)
    );
    let kthreadd = events
        .iter()
        .find(|e| e.name == "lttng_statedump_process_state" && e.int("tid") == 2)
        .unwrap();
    assert_eq!(
        (kthreadd.str("name"), kthreadd.int("type")),
        ("kthreadd", 1)
    );
    let dumped = events
        .iter()
        .filter(|e| e.name == "lttng_statedump_process_state")
        .count();
    // init, kthreadd, one ksoftirqd per CPU, the session daemon, the workers.
    assert_eq!(dumped, 2 + 4 + 1 + 12 * 3);
    let eth = events
        .iter()
        .find(|e| e.name == "lttng_statedump_interrupt" && e.int("irq") == 24)
        .unwrap();
    assert_eq!(
        (eth.str("name"), eth.str("action")),
        ("IR-PCI-MSI", "eth0-rx-0")
    );

    // The session daemon blocks on CPU 0 right after the statedump.
    let end = events
        .iter()
        .position(|e| e.name == "lttng_statedump_end")
        .unwrap();
    let sw = &events[end + 1];
    assert_eq!((sw.name.as_str(), sw.cpu), ("sched_switch", 0));
    assert_eq!(sw.str("prev_comm"), "lttng-sessiond");
    assert_eq!(
        (
            sw.int("prev_tid"),
            sw.int("prev_state"),
            sw.int("prev_prio")
        ),
        (1000, 1, 20)
    );
    assert_eq!((sw.str("next_comm"), sw.int("next_tid")), ("swapper/0", 0));
    // Nothing happens on the other CPUs before the statedump ends.
    assert!(events[..end].iter().all(|e| e.cpu == 0));

    let read_exit = events
        .iter()
        .find(|e| e.name == "syscall_exit_read")
        .unwrap();
    assert!(read_exit.int("ret") == -11 || read_exit.int("ret") > 0);
    assert!(read_exit.int("buf") > 0x5600_0000_0000);
    let clone = events
        .iter()
        .find(|e| e.name == "syscall_entry_clone")
        .unwrap();
    assert_eq!(clone.get("clone_flags"), "0x1200011");

    let seen = check_story(&events, cfg.cpus);
    for kind in [
        "switch",
        "block",
        "wakeup",
        "syscall_entry",
        "syscall_exit",
        "irq",
        "softirq",
        "migrate",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 10,
            "too few {kind}: {seen:?}"
        );
    }
}

#[test]
fn story_is_coherent_with_many_cpus_forks_and_small_packets() {
    let cfg = GeneratorConfig {
        cpus: 8,
        processes: 40,
        threads_per_process: 5,
        events: 150_000,
        packet_size: 4096,
        fork_rate: 0.01,
        seed: 3,
        ..GeneratorConfig::default()
    };
    let (_dir, summary, events) = generate_and_read(&cfg);
    check_counts(&summary, &events);
    let seen = check_story(&events, cfg.cpus);
    for kind in [
        "fork",
        "wakeup_new",
        "exec",
        "exit",
        "die",
        "free",
        "preempt",
        "migrate",
        "block",
    ] {
        assert!(
            seen.get(kind).copied().unwrap_or(0) > 3,
            "too few {kind}: {seen:?}"
        );
    }
    assert_eq!(seen["fork"], summary.forks);
    assert_eq!(seen["die"], summary.exits);
}

#[test]
fn single_cpu_and_byte_cap() {
    let cfg = GeneratorConfig {
        cpus: 1,
        processes: 3,
        threads_per_process: 2,
        events: u64::MAX,
        max_bytes: Some(1_500_000),
        packet_size: 256 * 1024,
        seed: 5,
        ..GeneratorConfig::default()
    };
    let (dir, summary, events) = generate_and_read(&cfg);
    check_counts(&summary, &events);
    check_story(&events, 1);
    let size = fs::metadata(dir.path().join("channel0_0")).unwrap().len();
    assert_eq!(size, summary.stream_bytes);
    assert!(
        (1_500_000..1_500_000 + 4096 + 100).contains(&size),
        "{size}"
    );
}

/// A mostly idle machine sleeps longer than the 27-bit compact timestamp
/// can span; those events need the extended header, and babeltrace2 must
/// still decode every timestamp right (strictly increasing over the whole
/// trace, first and last as the generator wrote them).
#[test]
fn long_idle_gaps_decode_right() {
    let cfg = GeneratorConfig {
        cpus: 16,
        processes: 2,
        threads_per_process: 1,
        events: 100_000,
        seed: 8,
        ..GeneratorConfig::default()
    };
    let (_dir, summary, events) = generate_and_read(&cfg);
    check_counts(&summary, &events);
    check_story(&events, cfg.cpus);
    let mut last_on_cpu: HashMap<u32, u64> = HashMap::new();
    let mut long_gaps = 0;
    for e in &events {
        if let Some(prev) = last_on_cpu.insert(e.cpu, e.ts) {
            if e.ts - prev >= 1 << 27 {
                long_gaps += 1;
            }
        }
    }
    assert!(long_gaps >= 5, "only {long_gaps} gaps beyond 2^27 ns");
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The index files describe the stream files packet by packet, as LTTng's
/// do (CTF index 1.1, big-endian).
#[test]
fn index_files_describe_the_packets() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = GeneratorConfig {
        cpus: 3,
        events: 60_000,
        packet_size: 8192,
        ..GeneratorConfig::default()
    };
    let summary = generate(&cfg, dir.path()).unwrap();
    let mut packets = 0;
    for cpu in 0..3u64 {
        let data = fs::read(dir.path().join(format!("channel0_{cpu}"))).unwrap();
        let idx = fs::read(dir.path().join(format!("index/channel0_{cpu}.idx"))).unwrap();
        assert_eq!(
            &idx[..16],
            &[0xC1, 0xF1, 0xDC, 0xC1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 72]
        );
        assert_eq!((idx.len() - 16) % 72, 0);
        let mut offset = 0u64;
        let mut last_end = 0;
        for (seq, e) in idx[16..].chunks_exact(72).enumerate() {
            let p = &data[offset as usize..];
            assert_eq!(be_u64(e, 0), offset);
            assert_eq!(&p[..4], &[0xC1, 0x1F, 0xFC, 0xC1]);
            assert_eq!(&p[4..20], &summary.trace_uuid);
            for (field, at) in [(3, 32), (4, 40), (2, 48), (1, 56), (8, 64), (5, 72)] {
                assert_eq!(
                    be_u64(e, field * 8),
                    le_u64(p, at),
                    "field {field} of packet {seq}"
                );
            }
            assert_eq!(be_u64(e, 64), seq as u64);
            assert_eq!((be_u64(e, 48), be_u64(e, 56)), (0, cpu));
            assert!(be_u64(e, 24) >= last_end && be_u64(e, 32) >= be_u64(e, 24));
            last_end = be_u64(e, 32);
            offset += be_u64(e, 8) / 8;
            packets += 1;
        }
        assert_eq!(offset, data.len() as u64);
        assert_eq!(last_end, summary.stop_timestamp);
    }
    assert_eq!(packets, summary.packets);
}
