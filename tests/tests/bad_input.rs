//! Bad input costs an error message, never a crash, a hang or gigabytes
//! (issue 19): each reproduction of the issue, on a damaged copy of a
//! bundled trace.

mod isolated;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use isolated::{Limits, Outcome};

#[test]
fn isolated_child() {
    isolated::child_main();
}

/// What a command printed and how it ended.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `args` through the CLI's library entry, on a thread, failing the
/// test (rather than hanging it) after `limit`.
fn traceloom(args: &[&str], limit: Duration) -> Run {
    let argv: Vec<String> = std::iter::once("traceloom")
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = traceloom_cli::run(argv, &mut out, &mut err);
        let _ = tx.send(Run {
            code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        });
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("traceloom {args:?} did not finish in {limit:?}"))
}

/// A copy of directory `src` at `dst` (files and subdirectories).
fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// A temporary copy of the bundled CTF trace `rel`; the trace is at
/// `<tempdir>/trace`.
fn ctf_copy(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    copy_dir(&traceloom_testdata::ctf(rel), &dir);
    (t, dir)
}

/// Overwrites the bytes of `file` at `offset` with `bytes`.
fn patch(file: &Path, offset: usize, bytes: &[u8]) {
    let mut b = fs::read(file).unwrap();
    b[offset..offset + bytes.len()].copy_from_slice(bytes);
    fs::write(file, b).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `CPU n` rows of a `stats` text output.
fn cpu_rows(stats: &str) -> Vec<&str> {
    stats
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("CPU "))
        .collect()
}

/// Reproduction 1: `cpu_id` 0xFFFFFFFF in the packet context of
/// `context-switches-ust/channel0_0` (bytes 60–63) aborted `stats` and
/// every `export` view, allocating per-CPU vectors up to it.
#[test]
fn huge_cpu_id_gives_statistics_and_images() {
    let (t, dir) = ctf_copy("tracecompass/context-switches-ust");
    patch(&dir.join("channel0_0"), 60, &[0xFF; 4]);
    // In a child process: the abort this pins would take the test binary.
    for args in [vec!["stats", s(&dir)], vec!["stats", "--json", s(&dir)]] {
        let (r, rss) = isolated::run_one(&args, Limits::default());
        assert_eq!(r.outcome, Outcome::Exit(0), "{args:?}");
        assert!(rss < 512 << 20, "{args:?}: peak memory {rss} bytes");
    }
    for view in ["controlflow", "resources", "histogram", "statistics"] {
        let out = t.path().join(format!("{view}.svg"));
        let args = ["export", "--view", view, "-o", s(&out), s(&dir)];
        let (r, rss) = isolated::run_one(&args, Limits::default());
        assert_eq!(r.outcome, Outcome::Exit(0), "{view}");
        assert!(rss < 512 << 20, "{view}: peak memory {rss} bytes");
        assert!(out.is_file(), "{view}");
    }
    let r = traceloom(&["stats", s(&dir)], Duration::from_secs(60));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // One CPU row (the events' CPU number is no CPU a machine has: `?`),
    // not one per number below it.
    assert_eq!(cpu_rows(&r.stdout).len(), 1, "{}", r.stdout);
}

/// Reproduction 2: `stats` was quadratic in the largest CPU number (a
/// `cpu_id` of 100,000 did not finish in 30 s) and printed a row for every
/// number below it, each charged the whole trace's time.
#[test]
fn statistics_cost_does_not_follow_cpu_numbers() {
    let (_t, dir) = ctf_copy("tracecompass/context-switches-ust");
    patch(&dir.join("channel0_0"), 60, &100_000u32.to_le_bytes());
    let start = Instant::now();
    let r = traceloom(&["stats", s(&dir)], Duration::from_secs(60));
    let took = start.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = cpu_rows(&r.stdout);
    assert_eq!(rows.len(), 1, "{}", r.stdout);
    assert!(rows[0].starts_with("CPU 100000:"), "{}", r.stdout);
    assert!(
        took < Duration::from_secs(5),
        "stats took {took:?} for one CPU numbered 100000"
    );
}

/// The `N events` total of a `count` output.
fn total(count: &str) -> u64 {
    let first = count.lines().next().unwrap_or_default();
    first
        .trim()
        .strip_suffix(" events")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no total in {count:?}"))
}

/// Reproduction 3: two links to `.` made `count` run forever (even with
/// no trace in the tree), one such link read the same trace 32 times.
#[test]
fn symlink_loops_end_and_read_each_trace_once() {
    let reference = traceloom(
        &[
            "count",
            s(&traceloom_testdata::ctf("tracecompass/bug446190")),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(reference.code, 0, "{}", reference.stderr);
    let n = total(&reference.stdout);

    // No trace at all, two loops.
    let empty = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(".", empty.path().join("a")).unwrap();
    std::os::unix::fs::symlink(".", empty.path().join("b")).unwrap();
    let r = traceloom(&["count", s(empty.path())], Duration::from_secs(10));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no CTF trace found"), "{}", r.stderr);

    // A trace beside the loops, and a link to the trace itself.
    let (t, _dir) = ctf_copy("tracecompass/bug446190");
    std::os::unix::fs::symlink(".", t.path().join("a")).unwrap();
    std::os::unix::fs::symlink(".", t.path().join("b")).unwrap();
    std::os::unix::fs::symlink("trace", t.path().join("again")).unwrap();
    let r = traceloom(&["count", s(t.path())], Duration::from_secs(20));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(total(&r.stdout), n, "each event once");
    // What was skipped is said.
    assert!(
        r.stderr.contains("warning:") && r.stderr.contains("read once"),
        "{}",
        r.stderr
    );
}

/// Reproduction 5: `stats` and `export` exited 0 silently on a damaged
/// stream (`bug446190` with one stream truncated gave 19,992 events of
/// 31,556). They print what is readable, then name the file and byte
/// offset, and exit 1, as `dump` and `count` do.
#[test]
fn damaged_streams_fail_stats_and_export_after_their_output() {
    let (t, dir) = ctf_copy("tracecompass/bug446190");
    let stream = dir.join("channel0_1");
    let len = fs::metadata(&stream).unwrap().len();
    let f = fs::OpenOptions::new().write(true).open(&stream).unwrap();
    f.set_len(len / 2 + 1000).unwrap();
    drop(f);
    let name = stream.display().to_string();
    let r = traceloom(&["count", s(&dir)], Duration::from_secs(60));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains(&name) && r.stderr.contains("byte offset"));
    let readable = total(&r.stdout);
    assert!(readable > 0);

    let r = traceloom(&["stats", s(&dir)], Duration::from_secs(60));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!("{readable} events")),
        "the readable events are counted: {}",
        r.stdout.lines().next().unwrap_or_default()
    );
    assert!(
        r.stderr.contains(&name) && r.stderr.contains("byte offset"),
        "{}",
        r.stderr
    );
    for view in ["controlflow", "resources", "histogram", "statistics"] {
        let out = t.path().join(format!("{view}.svg"));
        let r = traceloom(
            &["export", "--view", view, "-o", s(&out), s(&dir)],
            Duration::from_secs(60),
        );
        assert_eq!(r.code, 1, "{view}: {}", r.stderr);
        assert!(out.is_file(), "{view}: the image of what was read");
        assert!(
            r.stderr.contains(&name) && r.stderr.contains("byte offset"),
            "{view}: {}",
            r.stderr
        );
    }
}

/// The header, definitions and containers of the bundled multi-file Pajé
/// trace, naming `file` as its event file.
fn paje_naming(file: &str) -> String {
    let root = fs::read_to_string(traceloom_testdata::paje("multiple_files/root.trace")).unwrap();
    root.replace("\"root.trace\"", &format!("\"{file}\""))
}

/// Reproduction 6: `PajeTraceFile` names were followed when absolute or
/// with `../` (lines of `/etc/passwd` appeared in messages), a FIFO
/// blocked the reader forever, `/dev/zero` read as an empty trace.
#[test]
fn paje_event_files_stay_inside_the_trace_tree() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    fs::create_dir(&dir).unwrap();
    let secret = t.path().join("secret.trace");
    fs::write(&secret, "SECRET LINE ONE\nSECRET LINE TWO\n").unwrap();
    let fifo = dir.join("fifo.trace");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.trace")).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("link.trace")).unwrap();
    for (name, said) in [
        ("../secret.trace", "outside the trace's directory"),
        (secret.to_str().unwrap(), "outside the trace's directory"),
        ("link.trace", "outside the trace's directory"),
        ("/dev/zero", "outside the trace's directory"),
        ("zero.trace", "outside the trace's directory"),
        ("fifo.trace", "not a regular file"),
    ] {
        let main = dir.join("main.trace");
        fs::write(&main, paje_naming(name)).unwrap();
        let r = traceloom(
            &["dump", "--format", "pj_dump", s(&main)],
            Duration::from_secs(10),
        );
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(said), "{name}: {}", r.stderr);
        assert!(
            !r.stderr.contains("SECRET") && !r.stdout.contains("SECRET"),
            "{name}: {}",
            r.stderr
        );
    }
    // A file inside the tree is still read.
    fs::write(dir.join("events.trace"), "").unwrap();
    let main = dir.join("main.trace");
    fs::write(&main, paje_naming("events.trace")).unwrap();
    let r = traceloom(
        &["dump", "--format", "pj_dump", s(&main)],
        Duration::from_secs(10),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Reproduction 7: error messages quoted whole bad tokens (a 1 GB line of
/// NUL bytes in a Pajé trace took 6 s and 3.1 GB). Here 64 MB: the message
/// must stay a line.
#[test]
fn messages_cut_long_tokens() {
    let t = tempfile::tempdir().unwrap();
    let trace = t.path().join("nul.trace");
    let mut bytes = fs::read(traceloom_testdata::paje("states.trace")).unwrap();
    bytes.extend(std::iter::repeat_n(0u8, 64 << 20));
    bytes.push(b'\n');
    fs::write(&trace, bytes).unwrap();
    let start = Instant::now();
    let r = traceloom(
        &["dump", "--format", "pj_dump", s(&trace)],
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 1);
    let longest = r.stderr.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 400, "a message of {longest} bytes");
    assert!(start.elapsed() < Duration::from_secs(10));

    // TSDL: a megabyte-long name in the metadata.
    let (_t, dir) = ctf_copy("tracecompass/context-switches-ust");
    fs::write(
        dir.join("metadata"),
        format!(
            "/* CTF 1.8 */\ntypealias integer {{ size = 8; }} := {};\n",
            "y".repeat(1 << 20)
        ),
    )
    .unwrap();
    let r = traceloom(&["count", s(&dir)], Duration::from_secs(30));
    assert_eq!(r.code, 1);
    assert!(r.stderr.len() < 400, "{} bytes of messages", r.stderr.len());
}

/// A trace directory holding only `metadata`: the TSDL of
/// `mpi_allreduce` with event classes appended up to `bytes`.
fn big_metadata(dir: &Path, bytes: usize) -> usize {
    let mut text =
        fs::read_to_string(traceloom_testdata::ctf("tracecompass/mpi_allreduce").join("metadata"))
            .unwrap();
    let mut id = 1000;
    while text.len() < bytes {
        use std::fmt::Write as _;
        let _ = write!(
            text,
            "event {{\n\tstream_id = 0;\n\tid = {id};\n\tname = \"generated_{id}\";\n\
             \tfields := struct {{ integer {{ size = 32; align = 8; signed = false; }} a; \
             integer {{ size = 64; align = 8; signed = true; }} b; }};\n}};\n"
        );
        id += 1;
    }
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("metadata"), &text).unwrap();
    text.len()
}

/// Reproduction 4: valid TSDL of 52 MB used 1.23 GB, the whole text
/// tokenized up front. The tokens are read as the parser goes, each
/// top-level item is resolved and its syntax dropped before the next is
/// parsed, identical scope types are kept once (before and after
/// linking), the file's bytes are not copied into the text, and compiled
/// events go straight into their table: 24 MB of TSDL with 128,000 event
/// classes went from 753 MB to 529 MB, then to 89 MB (3.7 times the text).
/// Bounded at 5 times.
#[test]
fn metadata_memory_is_a_small_multiple_of_its_size() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let len = big_metadata(&dir, 24 << 20);
    let (r, rss) = isolated::run_one(&["count", s(&dir)], Limits::default());
    assert_eq!(r.outcome, Outcome::Exit(0));
    eprintln!(
        "{} MB of TSDL: peak memory {} MB in {:?}",
        len >> 20,
        rss >> 20,
        r.elapsed
    );
    assert!(
        rss < 5 * len as u64,
        "{} MB of TSDL took {} MB",
        len >> 20,
        rss >> 20
    );
}

/// Reproduction 5 through the analysis store: `index` on a damaged trace
/// stores what could be read and says what was damaged (exit 1), as the
/// other reading commands do.
#[test]
fn index_reports_damaged_streams() {
    let (t, dir) = ctf_copy("tracecompass/bug446190");
    let stream = dir.join("channel0_1");
    let len = fs::metadata(&stream).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&stream)
        .unwrap()
        .set_len(len / 2 + 1000)
        .unwrap();
    let cache = t.path().join("cache");
    let r = traceloom(
        &["index", "--cache-dir", s(&cache), s(&dir)],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&stream.display().to_string()) && r.stderr.contains("byte offset"),
        "{}",
        r.stderr
    );
}
