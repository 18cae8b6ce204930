//! Helpers shared by the test binaries: running babeltrace2 and traceloom
//! on the bundled traces and comparing their output.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::process::Command;

/// The bundled CTF traces (`traces/ctf`).
pub fn traces_root() -> PathBuf {
    traceloom_testdata::ctf_root()
}

/// The traces of `rel` (relative to `traces/ctf`), to compare with
/// babeltrace2: panics when a trace or babeltrace2 is missing.
pub fn setup(rel: &[&str]) -> Vec<PathBuf> {
    traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
    rel.iter().map(|r| traceloom_testdata::ctf(r)).collect()
}

/// What a command printed and how it ended.
pub struct Run {
    /// Exit status 0.
    pub ok: bool,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error.
    pub stderr: String,
}

pub fn babeltrace2(opts: &[&str], paths: &[PathBuf]) -> Run {
    let mut cmd = Command::new("babeltrace2");
    cmd.args(opts).args(paths);
    // babeltrace2 colors its output on a color terminal only (or when
    // BABELTRACE_TERM_COLOR=always, which the colors test sets).
    cmd.env("TERM", "dumb");
    let o = cmd.output().expect("run babeltrace2");
    Run {
        ok: o.status.success(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

pub fn traceloom(args: &[&str], paths: &[PathBuf]) -> Run {
    let mut argv: Vec<std::ffi::OsString> = vec!["traceloom".into()];
    argv.extend(args.iter().map(Into::into));
    argv.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = traceloom_cli::run(argv, &mut out, &mut err);
    Run {
        ok: status == 0,
        stdout: out,
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

pub fn lines(b: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
    if v.last() == Some(&&b""[..]) {
        v.pop();
    }
    v
}

/// Asserts that `ours` has `reference`'s lines (all of them, or, when
/// `prefix_only`, at least its lines as a prefix); reports the first
/// difference.
pub fn assert_same_lines(what: &str, ours: &[u8], reference: &[u8], prefix_only: bool) {
    let a = lines(ours);
    let b = lines(reference);
    let mut forgiven = 0;
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y && stale_empty_strings(x, y) {
            forgiven += 1;
            continue;
        }
        if x != y {
            panic!(
                "{what}: line {} differs\n  traceloom:   {}\n  babeltrace2: {}",
                i + 1,
                String::from_utf8_lossy(x),
                String::from_utf8_lossy(y)
            );
        }
    }
    if a.len() < b.len() {
        panic!(
            "{what}: traceloom printed {} lines, babeltrace2 {}; first missing line:\n  {}",
            a.len(),
            b.len(),
            String::from_utf8_lossy(b[a.len()])
        );
    }
    if forgiven > 0 {
        eprintln!(
            "{what}: {forgiven} lines differ only by babeltrace2 2.0.4's stale empty strings"
        );
    }
    if !prefix_only && a.len() > b.len() {
        panic!(
            "{what}: traceloom printed {} lines, babeltrace2 only {}; first extra line:\n  {}",
            a.len(),
            b.len(),
            String::from_utf8_lossy(a[b.len()])
        );
    }
}

/// Whether `ours` and `theirs` differ only where `ours` has an empty string
/// and `theirs` a non-empty one.
///
/// babeltrace2 2.0.4 prints an empty string field as the stale content of
/// the string buffer of a recycled event object (its `clear_string_field()`
/// resets the length but not the first byte; fixed in 2.0.5 by "Fix:
/// clear_string_field(): set first character to 0"). bug446190 has three
/// such `sys_open`/`sys_stat64` events with `filename = ""` in the data.
pub fn stale_empty_strings(ours: &[u8], theirs: &[u8]) -> bool {
    let (mut x, mut y) = (ours, theirs);
    loop {
        let same = x.iter().zip(y).take_while(|(a, b)| a == b).count();
        if same == x.len() && same == y.len() {
            return true;
        }
        // The divergence must be right after the opening quote of a string
        // that is empty in ours.
        if same == 0 || !x[..same].ends_with(b"= \"") || x.get(same) != Some(&b'"') {
            return false;
        }
        // Skip their string up to its closing (unescaped) quote.
        let mut j = same;
        loop {
            match y.get(j) {
                None => return false,
                Some(b'\\') => j += 2,
                Some(b'"') => break,
                Some(_) => j += 1,
            }
        }
        x = &x[same + 1..];
        y = &y[j + 1..];
    }
}

/// Compares `traceloom dump OPTS` with `babeltrace2 OPTS` on `rel`.
pub fn parity_with(opts: &[&str], rel: &[&str]) {
    parity_paths(opts, &setup(rel));
}

/// [`parity_with`] on a trace outside the bundled folder.
pub fn parity_with_abs(opts: &[&str], path: &str) {
    parity_paths(opts, &[PathBuf::from(path)]);
}

pub fn parity_paths(opts: &[&str], paths: &[PathBuf]) {
    let what = format!("{} {:?}", opts.join(" "), paths);
    let reference = babeltrace2(opts, paths);
    let mut args = vec!["dump"];
    args.extend_from_slice(opts);
    let ours = traceloom(&args, paths);
    // babeltrace2's discarded-records warnings, on standard error.
    let warnings = |e: &str| -> Vec<String> {
        e.lines()
            // (possibly in color)
            .filter(|l| l.contains("WARNING") && l.contains(": Tracer "))
            .map(str::to_owned)
            .collect()
    };
    let (want, got) = (warnings(&reference.stderr), warnings(&ours.stderr));
    if reference.ok {
        assert!(ours.ok, "{what}: traceloom failed: {}", ours.stderr);
        assert_same_lines(&what, &ours.stdout, &reference.stdout, false);
        assert_eq!(got, want, "{what}: discarded-records warnings");
    } else {
        assert!(got.starts_with(&want), "{what}: discarded-records warnings");
        // babeltrace2 stopped part way: the same lines up to there.
        assert!(
            !reference.stdout.is_empty(),
            "{what}: babeltrace2 printed nothing: {}",
            reference.stderr
        );
        // On a color terminal babeltrace2 ends with a color reset, which
        // is not part of the events it printed.
        let printed = reference
            .stdout
            .strip_suffix(b"\x1b[0m")
            .unwrap_or(&reference.stdout);
        assert_same_lines(&what, &ours.stdout, printed, true);
    }
}

/// A copy of a bundled trace in a fresh temporary directory, with
/// `offset_s` of its clock made representable so that babeltrace2 reads it.
pub struct PatchedCopy(pub PathBuf);

impl PatchedCopy {
    pub fn new(rel: &str) -> PatchedCopy {
        let src = setup(&[rel]).remove(0);
        let dir = std::env::temp_dir().join(format!(
            "traceloom-parity-{}-{}",
            std::process::id(),
            rel.replace('/', "_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&src).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
            }
        }
        let meta = dir.join("metadata");
        let text = std::fs::read_to_string(&meta).unwrap();
        let patched = text.replace("offset_s = 1351530929945824323;", "offset_s = 1351530929;");
        assert_ne!(
            text, patched,
            "{rel}: clock offset not found in the metadata"
        );
        std::fs::write(&meta, patched).unwrap();
        PatchedCopy(dir)
    }
}

impl Drop for PatchedCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
