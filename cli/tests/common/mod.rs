//! What the command-line tests share: running a command in process, and
//! the export that must give the same bytes from a pass and from a store.

// Each test file uses only some of these.
#![allow(dead_code)]

use std::path::Path;

/// Runs `traceloom ARGS` in this process: exit status, standard output
/// and standard error.
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["traceloom"];
    argv.extend_from_slice(args);
    let code = traceloom_cli::run(argv, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// `p` as a command-line argument.
pub(crate) fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `traceloom export TRACE` twice under `tmp`: first with an empty cache
/// directory (the pass runs, and `--verbose` says `pass_says`), then with
/// `cache`, which holds the trace's store (`--verbose` says it was used).
/// Both must write the same bytes.
pub(crate) fn export_from_pass_then_store(tmp: &Path, trace: &str, cache: &str, pass_says: &str) {
    let empty = tmp.join("export-empty-cache");
    let (svg1, svg2) = (tmp.join("from-pass.svg"), tmp.join("from-store.svg"));
    for (svg, dir, says) in [
        (&svg1, arg(&empty), pass_says),
        (&svg2, cache, "analysis store used"),
    ] {
        let (code, _, err) = run(&[
            "export",
            trace,
            "-o",
            arg(svg),
            "--cache-dir",
            dir,
            "--verbose",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert_eq!(std::fs::read(&svg1).unwrap(), std::fs::read(&svg2).unwrap());
}
