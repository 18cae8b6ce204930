//! The Pajé analysis store from the command line: `index`, `cache list`,
//! `cache clear`, and `stats`/`export` of a Pajé trace using the store
//! (`--verbose` says so) with the same output as the pass gives.

mod common;

use common::{arg as s, export_from_pass_then_store, run};

#[test]
fn paje_index_list_use_and_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = s(&cache);
    let trace = tmp.path().join("simu-mardi.trace");
    std::fs::copy(traceloom_testdata::paje("simu-mardi.trace"), &trace).unwrap();
    let trace = s(&trace);

    // No store yet: the pass runs, and writes it.
    let (code, plain, err) = run(&["stats", trace, "--cache-dir", cache, "--verbose"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Pajé trace read"), "{err}");
    assert!(plain.contains("Container / state type / value"), "{plain}");
    assert!(plain.lines().count() > 10, "{plain}");

    // Then it is used: the same statistics, and said so.
    let (code, stored, err) = run(&["stats", trace, "--cache-dir", cache, "--verbose"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("analysis store used"), "{err}");
    assert_eq!(stored, plain);
    let (code, json, err) = run(&["stats", trace, "--cache-dir", cache, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(json.trim_start().starts_with('[') && json.contains("\"label\""));

    let (code, out, err) = run(&["index", trace, "--cache-dir", cache]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("up to date"), "{out}");

    let (code, out, _) = run(&["cache", "list", "--cache-dir", cache]);
    assert_eq!(code, 0);
    assert!(
        out.contains("current") && out.contains("simu-mardi.trace") && out.contains(".paje.store"),
        "{out}"
    );

    // Export: from the store, the same bytes as from a pass.
    export_from_pass_then_store(tmp.path(), trace, cache, "Pajé trace read");

    // A changed trace: the store is stale, said so, and rebuilt.
    let mut text = std::fs::read(trace).unwrap();
    text.extend_from_slice(b"# appended\n");
    std::fs::write(trace, &text).unwrap();
    let (code, out, _) = run(&["cache", "list", "--cache-dir", cache]);
    assert_eq!(code, 0);
    assert!(out.contains("stale"), "{out}");
    let (code, out, err) = run(&["index", trace, "--cache-dir", cache]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("stale"), "{err}");
    assert!(out.contains("written"), "{out}");

    // Cleared with the trace's path.
    let (code, out, _) = run(&["cache", "clear", trace, "--cache-dir", cache]);
    assert_eq!(code, 0);
    assert!(out.contains("1 file(s) removed"), "{out}");
    let (_, _, err) = run(&["stats", trace, "--cache-dir", cache, "--verbose"]);
    assert!(err.contains("Pajé trace read"), "{err}");
}
