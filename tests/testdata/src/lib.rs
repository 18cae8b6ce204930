//! The one place that resolves test data.
//!
//! The repository carries the traces its tests use under `traces/` (see
//! `traces/README.md` for where each comes from). Tests ask for a trace by
//! its path under that folder:
//!
//! ```no_run
//! let bug = traceloom_testdata::ctf("tracecompass/bug446190");
//! let g5k = traceloom_testdata::paje("g5k.trace");
//! ```
//!
//! A missing trace or reference tool is a failure, never a skip: each
//! function panics with a message naming the missing path or program and
//! what provides it. Larger traces that do not belong in the repository
//! (recordings of millions of events, generated gigabytes) are looked up in
//! the folder named by [`EXTRA_TRACES_VAR`], for benchmarks and optional
//! checks only.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The environment variable naming a folder of extra, larger traces.
pub const EXTRA_TRACES_VAR: &str = "TRACELOOM_EXTRA_TRACES";

/// The repository's `traces/` folder.
pub fn root() -> PathBuf {
    // This crate is `tests/testdata/`: the repository is two levels up.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/testdata/ has two ancestors");
    repo.join("traces")
}

/// The trace (file or folder) at `rel` under `traces/`, e.g.
/// `"ctf/tracecompass/bug446190"` or `"paje/g5k.trace"`.
///
/// # Panics
/// When it does not exist, with a message naming the path.
pub fn trace(rel: &str) -> PathBuf {
    let p = root().join(rel);
    match p.canonicalize() {
        Ok(p) => p,
        Err(e) => panic!(
            "test trace missing: {} ({e}); the repository carries its test traces under \
             traces/ (see traces/README.md) — restore it with `git checkout -- traces/`",
            p.display()
        ),
    }
}

/// A CTF trace by its path under `traces/ctf/`, e.g.
/// `"lttng-ust/ust_pid"`. Panics like [`trace`].
pub fn ctf(rel: &str) -> PathBuf {
    trace(&format!("ctf/{rel}"))
}

/// A Pajé trace by its path under `traces/paje/`, e.g. `"g5k.trace"`.
/// Panics like [`trace`].
pub fn paje(rel: &str) -> PathBuf {
    trace(&format!("paje/{rel}"))
}

/// The folder of all CTF test traces (`traces/ctf`). Panics like [`trace`].
pub fn ctf_root() -> PathBuf {
    trace("ctf")
}

/// The folder of all Pajé test traces (`traces/paje`). Panics like
/// [`trace`].
pub fn paje_root() -> PathBuf {
    trace("paje")
}

/// The bundled sample kernel trace that `scripts/run.sh` opens.
pub fn sample_kernel() -> PathBuf {
    trace("sample-kernel")
}

/// A copy of the trace directory `src` (its files and subdirectories)
/// under `dir`, for a test that changes it; gives the copy's path,
/// `dir/<src's name>`. Panics when a copy fails.
pub fn copy_trace(src: &Path, dir: &Path) -> PathBuf {
    fn copy(src: &Path, dst: &Path) {
        std::fs::create_dir_all(dst).expect("create a trace copy's directory");
        for e in std::fs::read_dir(src).expect("read a trace directory") {
            let e = e.expect("read a trace directory");
            let to = dst.join(e.file_name());
            if e.file_type().expect("a trace file's type").is_dir() {
                copy(&e.path(), &to);
            } else {
                std::fs::copy(e.path(), &to).expect("copy a trace file");
            }
        }
    }
    let dst = dir.join(src.file_name().expect("a trace directory's name"));
    copy(src, &dst);
    dst
}

/// The bundled kernel tracesets the analysis tests run on: the sample,
/// two of Trace Compass's traces, and two traces opened as one traceset.
/// Panics like [`trace`].
pub fn kernel_tracesets() -> Vec<Vec<PathBuf>> {
    vec![
        vec![sample_kernel()],
        vec![ctf("tracecompass/bug446190")],
        vec![ctf("tracecompass/flipping-endianness")],
        vec![
            ctf("tracecompass/synctraces/scp_src"),
            ctf("tracecompass/synctraces/scp_dest"),
        ],
    ]
}

/// A larger trace at `rel` under the folder named by [`EXTRA_TRACES_VAR`],
/// or `None` when the variable is unset. Only for benchmarks and checks
/// that are optional by design.
///
/// # Panics
/// When the variable is set but the trace is not there.
pub fn extra(rel: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(EXTRA_TRACES_VAR)?;
    let p = Path::new(&dir).join(rel);
    assert!(
        p.exists(),
        "{EXTRA_TRACES_VAR} is set to {} but {} is not there",
        Path::new(&dir).display(),
        p.display()
    );
    Some(p)
}

/// A reference tool the tests compare against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `babeltrace2`, the CTF reference reader (Debian package `babeltrace2`).
    Babeltrace2,
    /// `pj_dump`, the Pajé reference reader (Debian package `pajeng`).
    PjDump,
}

impl Tool {
    /// The program's name on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Tool::Babeltrace2 => "babeltrace2",
            Tool::PjDump => "pj_dump",
        }
    }

    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Tool::Babeltrace2 => "babeltrace2",
            Tool::PjDump => "pajeng",
        }
    }

    fn probe(self) -> bool {
        // pj_dump has no --version: it prints its usage and exits non-zero,
        // so being able to start it is what counts.
        let mut cmd = Command::new(self.program());
        match self {
            Tool::Babeltrace2 => cmd.arg("--version"),
            Tool::PjDump => cmd.arg("--help"),
        };
        cmd.output().is_ok()
    }
}

/// Panics unless `tool` can be run, with a message saying what to install.
/// Call it before comparing with the tool, so that a machine without it
/// fails the test instead of passing it untested.
pub fn require(tool: Tool) {
    static FOUND: [OnceLock<bool>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = &FOUND[tool as usize];
    let found = *slot.get_or_init(|| tool.probe());
    assert!(
        found,
        "reference tool `{}` not found: install the Debian package `{}` \
         (scripts/install-deps.sh does)",
        tool.program(),
        tool.package()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_traces_resolve() {
        assert!(ctf("tracecompass/bug446190").join("metadata").is_file());
        assert!(paje("g5k.trace").is_file());
        assert!(sample_kernel().join("metadata").is_file());
    }

    #[test]
    #[should_panic(expected = "test trace missing")]
    fn a_missing_trace_fails_naming_it() {
        trace("ctf/no-such-trace");
    }
}
