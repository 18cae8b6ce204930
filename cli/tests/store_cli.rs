//! The analysis store from the command line: `index`, `cache list`,
//! `cache clear`, and `stats`/`export` using the store (`--verbose` says
//! so) with the same output as without it.

mod common;

use common::{arg as s, export_from_pass_then_store, run};
use std::path::Path;

#[test]
fn index_list_use_and_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = s(&cache);
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let trace = s(&trace);

    // Without a store: computed, and said so.
    let (code, plain, err) = run(&["stats", trace, "--cache-dir", cache, "--verbose"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no analysis store"), "{err}");

    let (code, out, err) = run(&["index", trace, "--cache-dir", cache]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("written"), "{out}");
    let (code, out, _) = run(&["index", trace, "--cache-dir", cache]);
    assert_eq!(code, 0);
    assert!(out.contains("up to date"), "{out}");

    let (code, out, _) = run(&["cache", "list", "--cache-dir", cache]);
    assert_eq!(code, 0);
    assert!(
        out.contains("current") && out.contains("bug446190"),
        "{out}"
    );
    assert!(out.contains("1 analysis store(s)"), "{out}");
    // `index` caches the checkpoints too (the window then reads no pass).
    assert!(out.contains("1 checkpoint cache(s)"), "{out}");

    // With the store: the same tree, and said so.
    let (code, stored, err) = run(&["stats", trace, "--cache-dir", cache, "--verbose"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("analysis store used"), "{err}");
    assert_eq!(stored, plain);
    let (_, stored_json, _) = run(&["stats", trace, "--cache-dir", cache, "--json"]);
    let (_, plain_json, _) = run(&[
        "stats",
        trace,
        "--cache-dir",
        s(&tmp.path().join("empty")),
        "--json",
    ]);
    assert_eq!(stored_json, plain_json);

    // Export: the control flow from the store, the same bytes.
    export_from_pass_then_store(tmp.path(), trace, cache, "analysis store written");
    for view in ["histogram", "statistics", "resources"] {
        let f = tmp.path().join(format!("{view}.png"));
        let (code, _, err) = run(&[
            "export",
            trace,
            "--view",
            view,
            "--width",
            "300",
            "-o",
            s(&f),
            "--cache-dir",
            cache,
            "--verbose",
        ]);
        assert_eq!(code, 0, "{view}: {err}");
        assert!(err.contains("analysis store used"), "{view}: {err}");
    }

    // Clear by path, then everything.
    let other = traceloom_testdata::ctf("tracecompass/flipping-endianness");
    run(&["index", s(&other), "--cache-dir", cache]);
    let (code, out, _) = run(&["cache", "clear", trace, "--cache-dir", cache]);
    assert_eq!(code, 0);
    // Its store and its checkpoints.
    assert!(out.contains("2 file(s) removed"), "{out}");
    let (_, out, _) = run(&["cache", "list", "--cache-dir", cache]);
    assert!(
        out.contains("1 analysis store(s)") && out.contains("flipping"),
        "{out}"
    );
    let (_, out, _) = run(&["cache", "clear", "--cache-dir", cache]);
    assert!(out.contains("2 file(s) removed"), "{out}");
    let (_, out, _) = run(&["cache", "list", "--cache-dir", cache]);
    assert!(out.contains("0 analysis store(s)"), "{out}");
}

#[test]
fn a_damaged_store_is_not_used_and_said_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let trace = traceloom_testdata::ctf("tracecompass/flipping-endianness");
    let (code, _, err) = run(&["index", s(&trace), "--cache-dir", s(&cache)]);
    assert_eq!(code, 0, "{err}");
    let store = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "store"))
        .unwrap();
    let mut bytes = std::fs::read(&store).unwrap();
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&store, &bytes).unwrap();
    let (code, _, err) = run(&["stats", s(&trace), "--cache-dir", s(&cache)]);
    assert_eq!(code, 0);
    assert!(err.contains("damaged analysis store"), "{err}");
    // `index` rebuilds it, with a warning.
    let (code, out, err) = run(&["index", s(&trace), "--cache-dir", s(&cache)]);
    assert_eq!(code, 0);
    assert!(
        err.contains("damaged") && out.contains("written"),
        "{err} {out}"
    );
}

/// A copy of the CTF trace `src` at `dst`.
fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// `stats` and `export` served from a store built from a damaged stream
/// still name the file and byte offset and exit 1: the store records the
/// damage its pass met (they read nothing of the streams this time).
#[test]
fn commands_served_from_a_store_report_its_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = s(&cache);
    let trace = tmp.path().join("trace");
    copy_dir(&traceloom_testdata::ctf("tracecompass/bug446190"), &trace);
    // Damage in the middle of a packet: met by a full read only, not by
    // opening the trace (which frames packets through its index).
    let stream = trace.join("channel0_1");
    let mut bytes = std::fs::read(&stream).unwrap();
    let at = bytes.len() / 2 + 1000;
    bytes[at..at + 64].fill(0xFF);
    std::fs::write(&stream, &bytes).unwrap();
    let name = stream.display().to_string();
    let damaged = |err: &str| err.contains(&name) && err.contains("byte offset");

    let (code, _, err) = run(&["index", s(&trace), "--cache-dir", cache]);
    assert_eq!(code, 1, "{err}");
    assert!(damaged(&err), "{err}");

    let (code, _, err) = run(&["stats", s(&trace), "--cache-dir", cache, "--verbose"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("analysis store used"), "{err}");
    assert!(damaged(&err), "{err}");
    // Reported once, though both the store and this read may know it.
    assert_eq!(err.matches(&name).count(), 1, "{err}");

    for view in ["controlflow", "resources", "histogram", "statistics"] {
        let out = tmp.path().join(format!("{view}.svg"));
        let (code, _, err) = run(&[
            "export",
            "--view",
            view,
            "-o",
            s(&out),
            s(&trace),
            "--cache-dir",
            cache,
            "--verbose",
        ]);
        assert_eq!(code, 1, "{view}: {err}");
        assert!(err.contains("analysis store used"), "{view}: {err}");
        assert!(damaged(&err), "{view}: {err}");
        assert!(out.is_file(), "{view}");
    }
}

/// With a progress bar asked for (stderr a terminal, the output a file),
/// `count` and `dump` print exactly what they print without one: the bar
/// goes to the process's stderr, never into the output.
#[test]
fn count_and_dump_with_a_progress_bar_print_the_same() {
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let trace = s(&trace);
    for cmd in ["count", "dump"] {
        let (code, plain, err) = run(&[cmd, trace]);
        assert_eq!(code, 0, "{err}");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let term = traceloom_cli::Terminal {
            stdout_tty: false,
            stderr_tty: true,
        };
        let code = traceloom_cli::run_on(["traceloom", cmd, trace], &mut out, &mut err, term);
        assert_eq!(code, 0);
        assert_eq!(String::from_utf8(out).unwrap(), plain, "{cmd}");
        assert!(err.is_empty(), "{cmd}");
    }
}
