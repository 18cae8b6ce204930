//! CTF 2 traces: `traceloom dump --clock-gmt` against babeltrace2 2.1's
//! output, committed under `traces/oracle/babeltrace2-2.1/` (regenerated
//! by `scripts/ctf2-oracle.sh`), so that no babeltrace2 2.1 is needed
//! here; and `count`, `stats` and every `export` view on each trace.
//!
//! The Trace Compass `CTF2-7.0-*` traces are in the CTF 2 draft form,
//! which babeltrace2 2.1 refuses ("Unknown object property `uuid`"):
//! their oracle is babeltrace2 2.1's output on a copy rewritten in the
//! final form (`scripts/ctf2-draft-to-final.py`), while traceloom reads
//! the originals. `ctf2/ust_pid` is `lttng-ust/ust_pid` written as CTF 2
//! by babeltrace2 2.1's `sink.ctf.fs`, and `ctf2/hello-lost` (discarded
//! events) likewise.
//!
//! A missing trace or oracle file fails the test, naming it.

mod common;

use std::io::Read;

use common::*;

/// babeltrace2 2.1's expected output `name` (`.txt`, or `.txt.gz`).
fn oracle(name: &str) -> Vec<u8> {
    let dir = traceloom_testdata::trace("oracle/babeltrace2-2.1");
    let plain = dir.join(format!("{name}.txt"));
    if plain.exists() {
        return std::fs::read(plain).unwrap();
    }
    let gz = dir.join(format!("{name}.txt.gz"));
    let file = std::fs::File::open(&gz).unwrap_or_else(|e| {
        panic!(
            "oracle missing: {} ({e}); regenerate it with scripts/ctf2-oracle.sh",
            gz.display()
        )
    });
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// babeltrace2 2.1's discarded-records warnings for `name`, with the
/// absolute path of `traces/` written `TRACES/`.
fn oracle_warnings(name: &str) -> String {
    let dir = traceloom_testdata::trace("oracle/babeltrace2-2.1");
    let p = dir.join(format!("{name}.warnings"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "oracle missing: {} ({e}); regenerate it with scripts/ctf2-oracle.sh",
            p.display()
        )
    })
}

/// The same lines as the oracle, and the same warnings.
fn parity(rel: &str, name: &str) {
    let path = traceloom_testdata::ctf(rel);
    let reference = oracle(name);
    let ours = traceloom(&["dump", "--clock-gmt"], std::slice::from_ref(&path));
    assert!(ours.ok, "{rel}: traceloom failed: {}", ours.stderr);
    let root = format!("{}/", traceloom_testdata::root().display());
    let warnings: Vec<String> = ours
        .stderr
        .lines()
        .filter(|l| l.contains("WARNING"))
        .map(|l| l.replace(&root, "TRACES/"))
        .collect();
    let want_text = oracle_warnings(name);
    let want: Vec<&str> = want_text.lines().collect();
    assert_eq!(warnings, want, "{rel}: discarded-records warnings");
    assert!(!reference.is_empty(), "{name}: empty oracle");
    assert_same_lines(rel, &ours.stdout, &reference, false);
    let timed = reference.starts_with(b"[");
    commands_work(&path, lines(&reference).len() as u64, timed);
}

/// `count` totals the oracle's events; `stats` counts them too (on a
/// trace with a clock: without one, it has no time range and says "no
/// events"); the four `export` views draw it (and refuse, saying so, a
/// trace without timestamps).
fn commands_work(path: &std::path::Path, events: u64, timed: bool) {
    let p = vec![path.to_path_buf()];
    let count = traceloom(&["count"], &p);
    assert!(count.ok, "count: {}", count.stderr);
    let text = String::from_utf8_lossy(&count.stdout).into_owned();
    assert!(
        text.lines().next() == Some(&format!("{events} events")[..]),
        "count on {}: {text}",
        path.display()
    );
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_string_lossy().into_owned();
    let stats = traceloom(&["stats", "--cache-dir", &cache_dir], &p);
    assert!(stats.ok, "stats: {}", stats.stderr);
    let text = String::from_utf8_lossy(&stats.stdout).into_owned();
    let want = if timed {
        format!("traceset: {events} events")
    } else {
        "no events".to_string()
    };
    assert!(text.contains(&want), "stats on {}: {text}", path.display());
    let dir = tempfile::tempdir().unwrap();
    for view in ["controlflow", "resources", "histogram", "statistics"] {
        let out = dir.path().join(format!("{view}.svg"));
        let o = out.to_string_lossy().into_owned();
        let r = traceloom(
            &[
                "export",
                "--view",
                view,
                "--cache-dir",
                &cache_dir,
                "-o",
                &o,
            ],
            &p,
        );
        if !timed {
            // The views are drawn against time: a trace without a clock
            // has nothing to place (as for CTF 1.8), and says so.
            assert!(
                !r.ok && r.stderr.contains("has no events"),
                "export {view} on a trace without timestamps: {}",
                r.stderr
            );
            continue;
        }
        assert!(r.ok, "export {view}: {}", r.stderr);
        let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        assert!(size > 0, "export {view} wrote nothing");
    }
}

#[test]
fn vl_ints() {
    parity("tracecompass/CTF2-vl-ints", "CTF2-vl-ints");
}

#[test]
fn smalltrace() {
    parity("tracecompass/CTF2-7.0-smalltrace", "CTF2-7.0-smalltrace");
}

#[test]
fn succeed1() {
    parity("tracecompass/CTF2-7.0-succeed1", "CTF2-7.0-succeed1");
}

#[test]
fn lttng_crash() {
    parity("tracecompass/CTF2-7.0-lttng-crash", "CTF2-7.0-lttng-crash");
}

#[test]
fn trace_with_index() {
    parity(
        "tracecompass/CTF2-7.0-trace-with-index",
        "CTF2-7.0-trace-with-index",
    );
}

#[test]
fn babeltrace2_sink_ust_pid() {
    parity("ctf2/ust_pid", "ust_pid");
}

/// Discarded events (562 warnings), which babeltrace2 2.1 attributes to
/// the trace class `uid` of a CTF 2 trace.
#[test]
fn babeltrace2_sink_hello_lost() {
    parity("ctf2/hello-lost", "hello-lost");
}

/// The CTF 2 conversion reads exactly like its CTF 1.8 original: the
/// same lines, once the three traces' dumps are compared as sets (the
/// sink names the packet context fields after their roles, not LTTng).
#[test]
fn conversion_matches_its_ctf1_original() {
    let ctf1 = traceloom(
        &["dump", "--clock-gmt"],
        &[traceloom_testdata::ctf("lttng-ust/ust_pid")],
    );
    let ctf2 = traceloom(
        &["dump", "--clock-gmt"],
        &[traceloom_testdata::ctf("ctf2/ust_pid")],
    );
    assert!(ctf1.ok && ctf2.ok, "{} {}", ctf1.stderr, ctf2.stderr);
    assert_same_lines(
        "ust_pid, CTF 2 against CTF 1.8",
        &ctf2.stdout,
        &ctf1.stdout,
        false,
    );
}
