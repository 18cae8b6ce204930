//! Finding CTF traces under input paths and the stream files of a trace.
//!
//! A trace is a directory holding a `metadata` file. An input path is
//! either a trace or a tree holding traces (LTTng's `ust/uid/0/64-bit/`,
//! `ust/pid/<name>/`, `kernel/` side by side, ...); trees are walked in
//! name order and a trace directory is not descended into (its `index/`
//! subdirectory is LTTng's packet index, not a stream).
//!
//! Symbolic links are followed, but every directory and stream file is
//! visited once by its real path: two links to `.` do not make the walk
//! endless, a link to a trace does not read it twice, and what was skipped
//! is reported ([`Discovery::duplicates`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::OpenError;

/// Deepest directory nesting walked under one input path. Links are
/// resolved and every directory is walked once (symbolic-link loops end
/// there); this only bounds the recursion of a real, absurdly deep tree.
const MAX_DEPTH: usize = 32;

/// A trace found under an input path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundTrace {
    /// The trace directory.
    pub dir: PathBuf,
    /// Path of the trace directory relative to the input path (`None` when
    /// the input is the trace itself); babeltrace2 uses it in the trace
    /// name.
    pub relative: Option<String>,
    /// The stream files, sorted by name.
    pub stream_files: Vec<PathBuf>,
}

fn io_err(path: &Path, source: io::Error) -> OpenError {
    OpenError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether `dir` is a trace directory.
pub fn is_trace_dir(dir: &Path) -> bool {
    dir.join("metadata").is_file()
}

/// The stream files of a trace directory: every regular, non-empty file
/// except `metadata` and hidden files (rotated `chan_0_1`, `chan_0_2`, ...
/// included), sorted by name. Subdirectories (`index/`) are skipped.
/// Empty files are skipped like babeltrace2 does (an LTTng stream that
/// never got a packet).
pub fn stream_files(dir: &Path) -> Result<Vec<PathBuf>, OpenError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_err(dir, e))? {
        let entry = entry.map_err(|e| io_err(dir, e))?;
        let name = entry.file_name();
        let name_s = name.to_string_lossy();
        if name_s == "metadata" || name_s.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Follow symlinks: a linked stream file is still a stream file.
        let md = fs::metadata(&path).map_err(|e| io_err(&path, e))?;
        if md.is_file() && md.len() > 0 {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// What [`find_traces`] found under its input paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// The traces, each once, in walk order.
    pub traces: Vec<FoundTrace>,
    /// Directories and stream files reached a second time (through a
    /// symbolic link, or by two input paths) and not read again.
    pub duplicates: Vec<Duplicate>,
}

/// A path that leads where an earlier one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The path reached (through a link).
    pub path: PathBuf,
    /// The path it was first reached by.
    pub first: PathBuf,
}

impl std::fmt::Display for Duplicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: same directory or file as {}; read once",
            self.path.display(),
            self.first.display()
        )
    }
}

/// The directories and files seen by a discovery, by real path (symbolic
/// links resolved): a tree with links to `.` is finite, a linked trace is
/// read once.
#[derive(Debug, Default)]
struct Visited {
    seen: std::collections::HashMap<PathBuf, PathBuf>,
    duplicates: Vec<Duplicate>,
}

impl Visited {
    /// Records `path` (as reached); false, and a duplicate noted, when its
    /// real path was seen before.
    fn first_visit(&mut self, path: &Path) -> Result<bool, OpenError> {
        let real = fs::canonicalize(path).map_err(|e| io_err(path, e))?;
        match self.seen.get(&real) {
            Some(first) => {
                self.duplicates.push(Duplicate {
                    path: path.to_path_buf(),
                    first: first.clone(),
                });
                Ok(false)
            }
            None => {
                self.seen.insert(real, path.to_path_buf());
                Ok(true)
            }
        }
    }
}

/// Finds the traces under `input`, in a deterministic order (sorted
/// directory walk).
pub fn find_traces(input: &Path) -> Result<Vec<FoundTrace>, OpenError> {
    Ok(discover(std::slice::from_ref(&input.to_path_buf()))?.traces)
}

/// Finds the traces under every input path, each trace once whatever the
/// links and overlapping inputs lead to it (see [`Discovery`]).
pub fn discover(inputs: &[PathBuf]) -> Result<Discovery, OpenError> {
    let mut visited = Visited::default();
    let mut traces = Vec::new();
    for input in inputs {
        let md = fs::metadata(input).map_err(|e| io_err(input, e))?;
        // A path to a `metadata` file stands for its trace directory.
        let root: PathBuf = if md.is_file() && input.file_name().is_some_and(|n| n == "metadata") {
            input.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            input.to_path_buf()
        };
        let before = traces.len();
        // An input that an earlier one covered is no error.
        let covered = fs::canonicalize(&root).is_ok_and(|r| visited.seen.contains_key(&r));
        walk(&root, &root, 0, &mut visited, &mut traces)?;
        if traces.len() == before && !covered {
            return Err(OpenError::NoTrace(input.to_path_buf()));
        }
    }
    Ok(Discovery {
        traces,
        duplicates: visited.duplicates,
    })
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    visited: &mut Visited,
    out: &mut Vec<FoundTrace>,
) -> Result<(), OpenError> {
    if depth > MAX_DEPTH || !dir.is_dir() || !visited.first_visit(dir)? {
        return Ok(());
    }
    if is_trace_dir(dir) {
        let relative = dir
            .strip_prefix(root)
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
            .filter(|r| !r.is_empty());
        let mut files = Vec::new();
        for f in stream_files(dir)? {
            if visited.first_visit(&f)? {
                files.push(f);
            }
        }
        out.push(FoundTrace {
            dir: dir.to_path_buf(),
            relative,
            stream_files: files,
        });
        return Ok(());
    }
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_err(dir, e))? {
        let entry = entry.map_err(|e| io_err(dir, e))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let p = entry.path();
        if p.is_dir() {
            subdirs.push(p);
        }
    }
    subdirs.sort();
    for d in subdirs {
        walk(root, &d, depth + 1, visited, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path, bytes: &[u8]) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    #[test]
    fn finds_lttng_layouts() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let uid = r.join("ust/uid/0/64-bit");
        touch(&uid.join("metadata"), b"/* CTF 1.8 */");
        touch(&uid.join("chan_0"), b"x");
        touch(&uid.join("chan_1_0"), b"x");
        touch(&uid.join("chan_1_1"), b"x");
        touch(&uid.join("empty"), b"");
        touch(&uid.join(".hidden"), b"x");
        touch(&uid.join("index/chan_0.idx"), b"x");
        let k = r.join("kernel");
        touch(&k.join("metadata"), b"x");
        touch(&k.join("channel0_0"), b"x");
        let found = find_traces(r).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].dir, k);
        assert_eq!(found[0].relative.as_deref(), Some("kernel"));
        assert_eq!(found[1].relative.as_deref(), Some("ust/uid/0/64-bit"));
        let names: Vec<_> = found[1]
            .stream_files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["chan_0", "chan_1_0", "chan_1_1"]);
        // The trace directory itself: no relative name.
        let one = find_traces(&uid).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].relative, None);
        // Its metadata file stands for it.
        assert_eq!(find_traces(&uid.join("metadata")).unwrap()[0].dir, uid);
    }

    #[test]
    fn no_trace_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        assert!(matches!(find_traces(t.path()), Err(OpenError::NoTrace(_))));
        assert!(matches!(
            find_traces(&t.path().join("missing")),
            Err(OpenError::Io { .. })
        ));
    }
}
