//! `traceloom dump --clock-gmt` against `babeltrace2 --clock-gmt` on the
//! bundled real traces, line by line, and `traceloom count` against the
//! per-name counts of babeltrace2's output.
//!
//! babeltrace2 is the reference; where it stops with an error part way
//! (its muxer's "time went backwards" on hello-lost and on the two
//! synctraces together), traceloom must print the same lines up to that
//! point. Where it refuses a trace outright (funky_trace, ctfwriter_JF8nq3:
//! a clock offset out of the 64-bit nanosecond range), traceloom must refuse
//! too with an error naming the stream file, and still read the trace with
//! `--clock-cycles` and `count`.
//!
//! A test fails, saying what is missing, when babeltrace2 or a trace is
//! missing.

mod common;

use common::*;

fn parity(rel: &str) {
    parity_with(&["--clock-gmt"], &[rel]);
}

#[test]
fn bug446190() {
    parity("tracecompass/bug446190");
}

#[test]
fn flipping_endianness() {
    parity("tracecompass/flipping-endianness");
}

#[test]
fn hello_lost() {
    parity("tracecompass/hello-lost");
}

#[test]
fn context_switches_ust() {
    parity("tracecompass/context-switches-ust");
}

#[test]
fn glxgears_cyg_profile() {
    parity("tracecompass/glxgears-cyg-profile");
}

#[test]
fn perf_taskset2() {
    parity("tracecompass/perf-taskset2");
}

#[test]
fn bandwidth_issue() {
    parity("tracecompass/bandwidth_issue");
}

#[test]
fn mpi_allreduce() {
    parity("tracecompass/mpi_allreduce");
}

#[test]
fn ctf_sequence_empty() {
    parity("tracecompass/ctf-sequence-empty");
}

#[test]
fn debuginfo_test_app2() {
    parity("tracecompass/debuginfo-test-app2");
}

#[test]
fn synctraces_together() {
    parity_with(
        &["--clock-gmt"],
        &[
            "tracecompass/synctraces/scp_src",
            "tracecompass/synctraces/scp_dest",
        ],
    );
}

#[test]
fn synctraces_src() {
    parity("tracecompass/synctraces/scp_src");
}

#[test]
fn synctraces_dest() {
    parity("tracecompass/synctraces/scp_dest");
}

#[test]
fn ust_uid_blocking() {
    parity("lttng-ust/ust_uid_blocking");
}

#[test]
fn ust_uid_discard() {
    parity("lttng-ust/ust_uid_discard");
}

#[test]
fn ust_pid() {
    parity("lttng-ust/ust_pid");
}

#[test]
fn ust_overwrite() {
    parity("lttng-ust/ust_overwrite");
}

/// Runs `babeltrace2 run` with a source reading `path` and one
/// `sink.text.pretty` per stream file in `streams`, connected directly:
/// without babeltrace2's muxer, which stops these traces with "time went
/// backwards", every stream is printed in full.
fn babeltrace2_without_muxer(path: &std::path::Path, streams: &[&str], params: &str) -> Run {
    let mut args: Vec<String> = vec![
        "run".into(),
        "-c".into(),
        "src:source.ctf.fs".into(),
        "-p".into(),
        format!("inputs=[\"{}\"]", path.display()),
    ];
    for (i, s) in streams.iter().enumerate() {
        args.extend([
            "-c".into(),
            format!("s{i}:sink.text.pretty"),
            "-p".into(),
            params.into(),
            "-x".into(),
            format!("src.*/{s}:s{i}"),
        ]);
    }
    let o = std::process::Command::new("babeltrace2")
        .args(&args)
        .env("TERM", "dumb")
        .output()
        .expect("run babeltrace2");
    Run {
        ok: o.status.success(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The synctraces, one stream each, read in full by babeltrace2 when its
/// muxer is left out: traceloom prints exactly the same.
#[test]
fn synctraces_in_full_without_muxer() {
    for rel in [
        "tracecompass/synctraces/scp_src",
        "tracecompass/synctraces/scp_dest",
    ] {
        let paths = setup(&[rel]);
        let reference = babeltrace2_without_muxer(&paths[0], &["channel0_0"], "clock-gmt=yes");
        assert!(reference.ok, "{rel}: {}", reference.stderr);
        let ours = traceloom(&["dump", "--clock-gmt"], &paths);
        assert!(ours.ok, "{rel}: {}", ours.stderr);
        assert_same_lines(rel, &ours.stdout, &reference.stdout, false);
    }
}

/// hello-lost in full: babeltrace2 with one sink per stream prints the
/// same events (compared as sorted lines without deltas, since its sinks
/// interleave) and the same discarded-events warnings.
#[test]
fn hello_lost_in_full_without_muxer() {
    let rel = "tracecompass/hello-lost";
    let paths = setup(&[rel]);
    let streams = ["channel1_0", "channel1_1", "channel1_2", "channel1_3"];
    let reference = babeltrace2_without_muxer(&paths[0], &streams, "clock-gmt=yes,no-delta=yes");
    assert!(reference.ok, "{}", reference.stderr);
    let ours = traceloom(&["dump", "--clock-gmt", "--no-delta"], &paths);
    assert!(ours.ok, "{}", ours.stderr);
    let sorted = |b: &[u8]| {
        let mut v: Vec<Vec<u8>> = lines(b).into_iter().map(<[u8]>::to_vec).collect();
        v.sort();
        v.join(&b'\n')
    };
    assert_same_lines(
        rel,
        &sorted(&ours.stdout),
        &sorted(&reference.stdout),
        false,
    );
    let warnings = |e: &str| {
        let mut v: Vec<String> = e
            .lines()
            .filter(|l| l.starts_with("WARNING: Tracer"))
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    };
    let (got, want) = (warnings(&ours.stderr), warnings(&reference.stderr));
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn clock_options() {
    for opts in [
        &["--clock-gmt", "--no-delta"][..],
        &["--clock-seconds"],
        &["--clock-cycles"],
        &["--clock-gmt", "--clock-date"],
        &["--clock-gmt", "--names", "all", "--fields", "all"],
        &[
            "--clock-gmt",
            "--names",
            "none",
            "--fields",
            "trace:domain,loglevel",
        ],
        &["--clock-gmt", "-n", "payload,scope", "-f", "trace"],
    ] {
        parity_with(opts, &["tracecompass/hello-lost"]);
        parity_with(opts, &["lttng-ust/ust_pid"]);
    }
}

/// ust_pid spans 02:55:22.497 to 02:55:22.952 UTC on 2026-11-22, with no
/// events between 22.55 and 22.72.
#[test]
fn time_ranges() {
    for opts in [
        // Time of day on the first event's date.
        &[
            "--clock-gmt",
            "--begin",
            "02:55:22.5",
            "--end",
            "02:55:22.6",
        ][..],
        &["--clock-gmt", "--begin", "02:55:22.9"],
        &["--clock-gmt", "--end", "02:55:22.5"],
        &[
            "--clock-gmt",
            "--begin",
            "02:55:22.55",
            "--end",
            "02:55:22.56",
        ],
        // Full dates and seconds since the Epoch.
        &[
            "--clock-gmt",
            "--begin",
            "2026-11-22 02:55:22.72",
            "--end",
            "2026-11-22 02:55:22.73",
        ],
        &[
            "--clock-gmt",
            "--begin",
            "1795316122.9",
            "--end",
            "1795316122.91",
        ],
    ] {
        parity_with(opts, &["lttng-ust/ust_pid"]);
    }
    // Local time: this machine's zone (babeltrace2 and traceloom alike).
    parity_with(
        &["--begin", "02:55:22.5", "--end", "02:55:22.6"],
        &["lttng-ust/ust_pid"],
    );
}

#[test]
fn begin_after_end_is_an_error() {
    let paths = setup(&["tracecompass/ctf-sequence-empty"]);
    let r = traceloom(
        &["dump", "--clock-gmt", "--begin", "20", "--end", "10"],
        &paths,
    );
    assert!(!r.ok);
    assert!(r.stderr.contains("--begin"), "{}", r.stderr);
    let r = traceloom(&["dump", "--begin", "noon"], &paths);
    assert!(!r.ok);
    assert!(r.stderr.contains("`noon`"), "{}", r.stderr);
}

/// Per-name event counts of babeltrace2's text output (the event name is
/// the last word before the first `: ` after the timestamp and delta).
fn babeltrace2_counts(out: &[u8]) -> (u64, Vec<(String, u64)>) {
    let mut per = std::collections::BTreeMap::<String, u64>::new();
    let mut total = 0;
    for line in lines(out) {
        let line = String::from_utf8_lossy(line);
        // `[ts] (+delta) host name: ...`
        let rest = &line[line.find(") ").expect("babeltrace2 line has a delta") + 2..];
        let head = &rest[..rest.find(": ").expect("event name ends with `: `")];
        let name = head.rsplit(' ').next().unwrap();
        *per.entry(name.to_string()).or_default() += 1;
        total += 1;
    }
    let mut v: Vec<(String, u64)> = per.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (total, v)
}

fn count_parity(rel: &str) {
    let paths = setup(&[rel]);
    let reference = babeltrace2(&["--clock-gmt"], &paths);
    assert!(reference.ok, "babeltrace2 fails on {rel}");
    let (total, per) = babeltrace2_counts(&reference.stdout);
    let mut want = format!("{total} events\n");
    let width = total.to_string().len();
    for (name, n) in per {
        want += &format!("{n:>width$} {name}\n");
    }
    let ours = traceloom(&["count"], &paths);
    assert!(ours.ok, "{rel}: {}", ours.stderr);
    assert_eq!(String::from_utf8(ours.stdout).unwrap(), want, "{rel}");
}

#[test]
fn counts() {
    for rel in [
        "tracecompass/bug446190",
        "tracecompass/perf-taskset2",
        "tracecompass/ctf-sequence-empty",
        "lttng-ust/ust_pid",
        "lttng-ust/ust_overwrite",
    ] {
        count_parity(rel);
    }
}

/// babeltrace2 refuses these: their clock offset (1351530929945824323 s)
/// is far outside the 64-bit nanosecond range. traceloom refuses to print
/// times too, naming the stream file and the clock, but reads them as raw
/// clock values (`--clock-cycles`) and counts them.
fn clock_out_of_range(rel: &str) {
    let paths = setup(&[rel]);
    let reference = babeltrace2(&["--clock-gmt"], &paths);
    assert!(!reference.ok && reference.stdout.is_empty());
    assert!(reference
        .stderr
        .contains("Cannot convert clock cycles to nanoseconds"));

    let ours = traceloom(&["dump", "--clock-gmt"], &paths);
    assert!(
        !ours.ok,
        "{rel}: traceloom printed times babeltrace2 cannot compute"
    );
    assert!(
        ours.stdout.is_empty(),
        "{rel}: nothing printed before the error"
    );
    assert!(
        ours.stderr.contains(rel) && ours.stderr.contains("clock `test_clock`"),
        "{rel}: error must name the stream file and the clock: {}",
        ours.stderr
    );

    let cycles = traceloom(&["dump", "--clock-cycles"], &paths);
    let count = traceloom(&["count"], &paths);
    assert!(cycles.ok, "{rel}: {}", cycles.stderr);
    assert!(count.ok, "{rel}: {}", count.stderr);
    let total: usize = String::from_utf8_lossy(&count.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(lines(&cycles.stdout).len(), total, "{rel}");
}

#[test]
fn funky_trace_clock_out_of_range() {
    clock_out_of_range("tracecompass/funky_trace");
}

#[test]
fn ctfwriter_clock_out_of_range() {
    clock_out_of_range("tracecompass/ctfwriter_JF8nq3");
}

/// funky_trace's unusual types (escaped enum labels, odd sizes and
/// alignments, variants, nested structures, floats) against babeltrace2,
/// on a copy whose clock offset babeltrace2 accepts.
#[test]
fn funky_trace_with_representable_clock() {
    let copy = PatchedCopy::new("tracecompass/funky_trace");
    let path = copy.0.to_str().unwrap();
    parity_with_abs(&["--clock-gmt"], path);
    parity_with_abs(&["--clock-gmt", "--names", "all", "--fields", "all"], path);
}

/// ctfwriter_JF8nq3 (custom event headers, a sequence sized by an event
/// header field, discarded events, empty streams) likewise.
#[test]
fn ctfwriter_with_representable_clock() {
    let copy = PatchedCopy::new("tracecompass/ctfwriter_JF8nq3");
    let path = copy.0.to_str().unwrap();
    parity_with_abs(&["--clock-gmt"], path);
    parity_with_abs(&["--clock-gmt", "--names", "all", "--fields", "all"], path);
}

#[test]
fn stale_string_forgiveness_is_narrow() {
    assert!(stale_empty_strings(
        br#"{ a = "", b = "", c = 1 }"#,
        br#"{ a = "/lib/x\"y", b = "z", c = 1 }"#
    ));
    assert!(!stale_empty_strings(
        br#"{ a = "", b = 1 }"#,
        br#"{ a = "/lib", b = 2 }"#
    ));
    assert!(!stale_empty_strings(
        br#"{ a = "x", b = 1 }"#,
        br#"{ a = "y", b = 1 }"#
    ));
    assert!(!stale_empty_strings(
        br#"{ a = "/lib", b = 1 }"#,
        br#"{ a = "", b = 1 }"#
    ));
    assert!(!stale_empty_strings(b"{ a = 1 }", b"{ a = 2 }"));
}
