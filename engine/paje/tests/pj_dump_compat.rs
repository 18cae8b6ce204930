//! Compares this crate's pj_dump output with the real `pj_dump` (Debian's
//! pajeng) on every bundled example trace, byte for byte. Without `pj_dump`
//! the tests fail, saying what to install.

use std::path::{Path, PathBuf};
use std::process::Command;

use traceloom_paje::{pj_dump, PjDumpOptions, Severity};

fn shared_dir() -> PathBuf {
    traceloom_testdata::paje_root()
}

/// Every trace file of the bundled folder, the multi-file one included.
fn traces() -> Vec<PathBuf> {
    let dir = shared_dir();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    v.push(dir.join("multiple_files/root.trace"));
    v.sort();
    v
}

struct Reference {
    stdout: Vec<u8>,
    success: bool,
}

fn real_pj_dump(args: &[&str], trace: &Path) -> Reference {
    traceloom_testdata::require(traceloom_testdata::Tool::PjDump);
    let out = Command::new("pj_dump")
        .args(args)
        .arg(trace)
        .output()
        .unwrap_or_else(|e| panic!("pj_dump {args:?} {}: {e}", trace.display()));
    Reference {
        stdout: out.stdout,
        success: out.status.success(),
    }
}

fn ours(trace: &Path, opts: &PjDumpOptions) -> (Vec<u8>, traceloom_paje::Diagnostics) {
    let mut out = Vec::new();
    let diags = pj_dump(trace, opts, &mut out).unwrap_or_else(|e| panic!("{e}"));
    (out, diags)
}

/// First differing line, for a readable failure.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  ours:    {x}\n  pj_dump: {y}", i + 1);
        }
    }
    format!(
        "line counts differ: ours {} vs pj_dump {}",
        a.lines().count(),
        b.lines().count()
    )
}

#[test]
fn every_shared_trace_matches_pj_dump() {
    let traces = traces();
    assert!(
        traces.len() >= 16,
        "bundled Pajé traces missing: {traces:?}"
    );
    let mut compared = 0;
    for trace in &traces {
        let (mine, diags) = ours(trace, &PjDumpOptions::default());
        let name = trace.file_name().unwrap().to_string_lossy().into_owned();
        let reference = real_pj_dump(&[], trace);
        if !reference.success {
            // pj_dump stops at the first error; we must have reported one.
            assert!(
                diags.error_count() > 0,
                "{name}: pj_dump failed but no error was reported"
            );
            eprintln!("note: pj_dump fails on {name}; not compared");
            continue;
        }
        assert!(
            mine == reference.stdout,
            "{name} differs from pj_dump: {}",
            first_difference(&mine, &reference.stdout)
        );
        assert_eq!(diags.error_count(), 0, "{name}: {:?}", diags.items());
        compared += 1;
    }
    eprintln!("{compared} traces identical to pj_dump");
    assert!(compared >= 14, "only {compared} traces compared");
}

#[test]
fn native_paje_fails_where_pj_dump_fails() {
    let trace = shared_dir().join("native_paje.trace");
    // Strict field names: the first definition lacks "Type" (line 5).
    let (_, diags) = ours(&trace, &PjDumpOptions::default());
    let first = diags
        .items()
        .iter()
        .find(|d| d.severity == Severity::Error)
        .unwrap();
    assert_eq!(first.location.line, 5, "{first}");
    assert!(first.location.file.ends_with("native_paje.trace"));
    // With legacy names the trace is read; pj_dump -n then stops on a
    // variable that goes back in time at line 1936. We report and go on.
    let t = traceloom_paje::Trace::open(&trace).unwrap();
    let lines: Vec<u64> = t
        .diagnostics
        .items()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.location.line)
        .collect();
    assert_eq!(lines.first(), Some(&1936), "{:?}", t.diagnostics.items());
    assert!(t.entities.entity_count() > 1000);
}

#[test]
fn precision_and_header_options_match_pj_dump() {
    let dir = shared_dir();
    for (name, args, opts) in [
        (
            "gattaca.trace",
            vec!["-l", "9"],
            PjDumpOptions {
                float_precision: 9,
                header: false,
            },
        ),
        (
            "links.trace",
            vec!["-l", "2"],
            PjDumpOptions {
                float_precision: 2,
                header: false,
            },
        ),
        (
            "ms.trace",
            vec!["-h"],
            PjDumpOptions {
                float_precision: 6,
                header: true,
            },
        ),
        (
            "native_sample.trace",
            vec!["-h"],
            PjDumpOptions {
                float_precision: 6,
                header: true,
            },
        ),
    ] {
        let trace = dir.join(name);
        let reference = real_pj_dump(&args, &trace);
        let (mine, _) = ours(&trace, &opts);
        assert!(
            mine == reference.stdout,
            "{name} {args:?}: {}",
            first_difference(&mine, &reference.stdout)
        );
    }
}
