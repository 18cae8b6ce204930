//! `dump --begin T` (which seeks) and `dump --filter EXPR` print exactly the
//! lines of a full dump filtered afterwards, on every bundled CTF trace.

mod common;

use std::path::PathBuf;

use common::{lines, traceloom, traces_root};

/// Every bundled CTF 1.8 trace traceloom reads to the end with the default
/// clock conversion.
fn shared_traces() -> Vec<PathBuf> {
    let root = traces_root();
    let mut out = Vec::new();
    for rel in [
        "tracecompass/bug446190",
        "tracecompass/flipping-endianness",
        "tracecompass/hello-lost",
        "tracecompass/context-switches-ust",
        "tracecompass/glxgears-cyg-profile",
        "tracecompass/perf-taskset2",
        "tracecompass/bandwidth_issue",
        "tracecompass/mpi_allreduce",
        "tracecompass/ctf-sequence-empty",
        "tracecompass/debuginfo-test-app2",
        "tracecompass/synctraces",
        "lttng-ust/ust_uid_blocking",
        "lttng-ust/ust_uid_discard",
        "lttng-ust/ust_pid",
        "lttng-ust/ust_overwrite",
    ] {
        out.push(root.join(rel));
    }
    out
}

const BASE: &[&str] = &["dump", "--clock-seconds", "--no-delta"];

fn dump(extra: &[&str], path: &PathBuf) -> Vec<u8> {
    let mut args = BASE.to_vec();
    args.extend_from_slice(extra);
    let run = traceloom(&args, std::slice::from_ref(path));
    assert!(
        run.ok,
        "{}: traceloom dump {extra:?} failed: {}",
        path.display(),
        run.stderr
    );
    run.stdout
}

/// The `[SEC.NNNNNNNNN]` time at the start of a `--clock-seconds` line, in ns.
fn line_ns(line: &[u8]) -> i64 {
    let text =
        std::str::from_utf8(&line[1..line.iter().position(|&b| b == b']').unwrap()]).unwrap();
    let (s, n) = text.split_once('.').unwrap();
    let neg = s.starts_with('-');
    let v = s.trim_start_matches('-').parse::<i64>().unwrap() * 1_000_000_000
        + n.parse::<i64>().unwrap();
    if neg {
        -v
    } else {
        v
    }
}

fn event_name(line: &[u8]) -> &[u8] {
    // `[time] host name: {...` or `[time] name: {...`
    let colon = line.windows(3).position(|w| w == b": {").unwrap();
    let start = line[..colon].iter().rposition(|&b| b == b' ').unwrap() + 1;
    &line[start..colon]
}

fn ns_arg(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

#[test]
fn begin_seeks_to_exactly_the_right_lines() {
    for path in shared_traces() {
        let full = dump(&[], &path);
        let all = lines(&full);
        assert!(!all.is_empty(), "{}", path.display());
        for frac in [0usize, 1, 50, 97, 100] {
            let i = (all.len() - 1) * frac / 100;
            let t = line_ns(all[i]);
            let want: Vec<&[u8]> = all.iter().copied().filter(|l| line_ns(l) >= t).collect();
            let got = dump(&["--begin", &ns_arg(t)], &path);
            assert_eq!(
                lines(&got),
                want,
                "{}: --begin {}",
                path.display(),
                ns_arg(t)
            );
        }
    }
}

#[test]
fn filters_keep_exactly_the_matching_lines() {
    for path in shared_traces() {
        let full = dump(&[], &path);
        let all = lines(&full);
        // The most frequent event name, and a name-glob, cpu and time filter.
        let mut names: Vec<&[u8]> = all.iter().map(|l| event_name(l)).collect();
        names.sort();
        let top = names
            .chunk_by(|a, b| a == b)
            .max_by_key(|c| c.len())
            .unwrap()[0];
        let top = std::str::from_utf8(top).unwrap().to_string();
        let expr = format!("event.name == \"{top}\"");
        let got = dump(&["--filter", &expr], &path);
        let want: Vec<&[u8]> = all
            .iter()
            .copied()
            .filter(|l| event_name(l) == top.as_bytes())
            .collect();
        assert_eq!(lines(&got), want, "{}: {expr}", path.display());

        let mid = line_ns(all[all.len() / 2]);
        let expr = format!("!(event.name == \"{top}\") && time >= {mid}");
        let got = dump(&["--filter", &expr], &path);
        let want: Vec<&[u8]> = all
            .iter()
            .copied()
            .filter(|l| event_name(l) != top.as_bytes() && line_ns(l) >= mid)
            .collect();
        assert_eq!(lines(&got), want, "{}: {expr}", path.display());

        let got = dump(&["--filter", "cpu == 1"], &path);
        let want: Vec<&[u8]> = all
            .iter()
            .copied()
            .filter(|l| l.windows(13).any(|w| w == b"{ cpu_id = 1 "))
            .collect();
        assert_eq!(lines(&got), want, "{}: cpu == 1", path.display());
    }
}

#[test]
fn state_filter_on_a_kernel_trace_selects_the_running_thread() {
    let root = traces_root();
    let path = root.join("tracecompass/bug446190");
    // At a sched_switch the state as of the event is the incoming thread's.
    let got = dump(
        &[
            "--filter",
            "event.name == \"sched_switch\" && state.tid == event.field.next_tid",
        ],
        &path,
    );
    let all = dump(&["--filter", "event.name == \"sched_switch\""], &path);
    assert!(!lines(&all).is_empty());
    assert_eq!(lines(&got), lines(&all));
    // And one thread's events are those on the CPUs while it runs.
    let some = dump(
        &[
            "--filter",
            "state.tid == 0 && event.name == \"sched_switch\"",
        ],
        &path,
    );
    for l in lines(&some) {
        assert!(
            l.windows(13).any(|w| w == b"next_tid = 0,"),
            "{}",
            String::from_utf8_lossy(l)
        );
    }
}

#[test]
fn bad_filter_names_the_column() {
    let root = traces_root();
    let run = traceloom(
        &["dump", "--filter", "event.name == && cpu == 1"],
        &[root.join("tracecompass/bug446190")],
    );
    assert!(!run.ok);
    assert!(
        run.stderr.contains("invalid filter: column 15"),
        "{}",
        run.stderr
    );
}
