//! Runs traceloom command lines in a child process, so that a test can
//! survive what it checks for: an abort, a hang, unbounded memory.
//!
//! The child is the test binary itself, started on its
//! [`CHILD_TEST`] test with the command lines in an environment variable;
//! every test binary that uses this module declares that test as
//! `#[test] fn isolated_child() { isolated::child_main() }`. Its address
//! space is capped (`RLIMIT_AS`), so an unbounded allocation fails there
//! instead of taking the machine's memory; its peak resident memory is read
//! from `wait4`; it is killed when a case takes longer than the timeout.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The test that runs in the child.
pub const CHILD_TEST: &str = "isolated_child";
/// Names the file holding the command lines to run: NUL-separated
/// arguments, records separated by `\x1e`.
const CASES_VAR: &str = "TRACELOOM_ISOLATED_CASES";
/// What the child prints before each case (then the case number) and
/// after it (then the exit status and its time in ms).
const START: &str = "@@case-start ";
const DONE: &str = "@@case-done ";

/// Limits of one child run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Address-space cap of the child, in bytes.
    pub address_space: u64,
    /// Longest a single case may take.
    pub case_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // Twice the peak memory allowed: thread stacks and the
            // allocator's per-thread arenas reserve address space they do
            // not use. Peak resident memory is checked separately.
            address_space: 2 << 30,
            case_timeout: Duration::from_secs(10),
        }
    }
}

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The command returned this exit status.
    Exit(i32),
    /// The child died (panic escaping, abort, signal) during the case.
    Died(String),
    /// The case took longer than the timeout; the child was killed.
    Hung,
}

/// A case's outcome and time.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub elapsed: Duration,
}

/// The result of a batch.
#[derive(Debug, Clone)]
pub struct Batch {
    /// One result per case, in order.
    pub cases: Vec<CaseResult>,
    /// The largest peak resident memory of the child processes, in bytes.
    pub peak_rss: u64,
}

/// Runs the command lines of `cases` (each without the program name) in
/// child processes, in order, under `limits`: a child that dies or hangs is
/// replaced by a new one for the next case.
pub fn run_batch(cases: &[Vec<OsString>], limits: Limits) -> Batch {
    let mut results: Vec<CaseResult> = Vec::with_capacity(cases.len());
    let mut peak_rss = 0;
    while results.len() < cases.len() {
        let from = results.len();
        let (mut got, rss) = run_child(&cases[from..], limits);
        peak_rss = peak_rss.max(rss);
        assert!(!got.is_empty(), "the child ran no case");
        results.append(&mut got);
    }
    Batch {
        cases: results,
        peak_rss,
    }
}

/// Runs one command line in a child process; its result and the child's
/// peak resident memory in bytes.
pub fn run_one(args: &[&str], limits: Limits) -> (CaseResult, u64) {
    let case: Vec<OsString> = args.iter().map(OsString::from).collect();
    let b = run_batch(&[case], limits);
    (b.cases[0].clone(), b.peak_rss)
}

fn encode(cases: &[Vec<OsString>]) -> OsString {
    let mut bytes = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        if i > 0 {
            bytes.push(0x1e);
        }
        for (j, a) in c.iter().enumerate() {
            if j > 0 {
                bytes.push(0);
            }
            bytes.extend_from_slice(a.as_bytes());
        }
    }
    OsString::from_vec(bytes)
}

fn decode(v: &OsString) -> Vec<Vec<OsString>> {
    v.as_bytes()
        .split(|&b| b == 0x1e)
        .map(|c| {
            c.split(|&b| b == 0)
                .map(|a| OsString::from_vec(a.to_vec()))
                .collect()
        })
        .collect()
}

enum Line {
    Start(usize),
    Done(usize, i32, u64),
}

/// Runs cases in one child until it ends or a case fails to finish;
/// returns the results of the cases it got to and the child's peak RSS.
fn run_child(cases: &[Vec<OsString>], limits: Limits) -> (Vec<CaseResult>, u64) {
    let exe = std::env::current_exe().expect("test binary path");
    // The cases go through a file: arguments may hold any byte but NUL,
    // which an environment variable cannot.
    let file = tempfile::NamedTempFile::new().expect("cases file");
    std::fs::write(file.path(), encode(cases).as_bytes()).expect("write the cases");
    let mut cmd = Command::new(exe);
    cmd.args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CASES_VAR, file.path())
        // One allocator arena per thread reserves 64 MB of address space
        // each; the cap is about memory used, not reserved.
        .env("MALLOC_ARENA_MAX", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let cap = limits.address_space;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: cap as libc::rlim_t,
                rlim_max: cap as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start the child test process");
    let pid = child.id() as libc::pid_t;
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // The test harness may have started the line ("test ... ").
            let after = |m: &str| line.find(m).map(|at| &line[at + m.len()..]);
            let parsed = if let Some(rest) = after(START) {
                rest.trim().parse().ok().map(Line::Start)
            } else if let Some(rest) = after(DONE) {
                let v: Vec<&str> = rest.split_whitespace().collect();
                match v.as_slice() {
                    [i, code, ms] => match (i.parse(), code.parse(), ms.parse()) {
                        (Ok(i), Ok(c), Ok(m)) => Some(Line::Done(i, c, m)),
                        _ => None,
                    },
                    _ => None,
                }
            } else {
                None
            };
            if let Some(p) = parsed {
                if tx.send(p).is_err() {
                    break;
                }
            }
        }
    });
    let mut results = Vec::new();
    let mut started: Option<(usize, Instant)> = None;
    let mut hung = false;
    loop {
        let wait = match started {
            Some((_, at)) => limits.case_timeout.saturating_sub(at.elapsed()),
            None => limits.case_timeout,
        };
        match rx.recv_timeout(wait) {
            Ok(Line::Start(i)) => started = Some((i, Instant::now())),
            Ok(Line::Done(i, code, ms)) => {
                debug_assert_eq!(Some(i), started.map(|s| s.0));
                results.push(CaseResult {
                    outcome: Outcome::Exit(code),
                    elapsed: Duration::from_millis(ms),
                });
                started = None;
                if results.len() == cases.len() {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // SAFETY: plain kill of our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                hung = true;
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let (status, rss) = wait4(pid);
    // The child was reaped by wait4; `Child` must not wait again.
    drop(child);
    if let Some((_, at)) = started {
        results.push(CaseResult {
            outcome: if hung {
                Outcome::Hung
            } else {
                Outcome::Died(status)
            },
            elapsed: at.elapsed(),
        });
    } else if results.len() < cases.len() && results.is_empty() {
        panic!("the child test process ended before its first case: {status}");
    }
    (results, rss)
}

/// Waits for `pid`; its exit status in words and peak RSS in bytes.
fn wait4(pid: libc::pid_t) -> (String, u64) {
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let words = if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("exit status {}", libc::WEXITSTATUS(status))
    };
    // ru_maxrss is in kilobytes on Linux.
    (words, usage.ru_maxrss as u64 * 1024)
}

/// The child's side: runs the cases of the environment, if any (as a plain
/// test, it does nothing).
pub fn child_main() {
    child_main_with(|args| (Box::new(()), args));
}

/// Turns a case into the command line to run, and what must live while it
/// runs (a temporary directory).
pub type Prepare = fn(Vec<OsString>) -> (Box<dyn std::any::Any>, Vec<OsString>);

/// [`child_main`] with each case's arguments turned into the command line
/// by `prepare` first.
pub fn child_main_with(prepare: Prepare) {
    let Some(file) = std::env::var_os(CASES_VAR) else {
        return;
    };
    let v = OsString::from_vec(std::fs::read(file).expect("read the cases file"));
    use std::io::Write;
    let stdout = std::io::stdout();
    for (i, args) in decode(&v).into_iter().enumerate() {
        {
            let mut o = stdout.lock();
            let _ = writeln!(o, "{START}{i}");
            let _ = o.flush();
        }
        let (guard, args) = prepare(args);
        let t = Instant::now();
        let mut argv: Vec<OsString> = vec!["traceloom".into()];
        argv.extend(args);
        let mut out = std::io::sink();
        let mut err = std::io::sink();
        let code = traceloom_cli::run(argv, &mut out, &mut err);
        let mut o = stdout.lock();
        let _ = writeln!(o, "{DONE}{i} {code} {}", t.elapsed().as_millis());
        let _ = o.flush();
        drop(guard);
    }
}
