//! Finding CTF traces under input paths and the stream files of a trace.
//!
//! A trace is a directory holding a `metadata` file. An input path is
//! either a trace or a tree holding traces (LTTng's `ust/uid/0/64-bit/`,
//! `ust/pid/<name>/`, `kernel/` side by side, ...); trees are walked in
//! name order and a trace directory is not descended into (its `index/`
//! subdirectory is LTTng's packet index, not a stream).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::OpenError;

/// Deepest directory nesting walked under one input path (guards against
/// symlink loops).
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

/// Finds the traces under `input`, in a deterministic order (sorted
/// directory walk).
pub fn find_traces(input: &Path) -> Result<Vec<FoundTrace>, OpenError> {
    let md = fs::metadata(input).map_err(|e| io_err(input, e))?;
    // A path to a `metadata` file stands for its trace directory.
    let root: PathBuf = if md.is_file() && input.file_name().is_some_and(|n| n == "metadata") {
        input.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        input.to_path_buf()
    };
    let mut out = Vec::new();
    walk(&root, &root, 0, &mut out)?;
    if out.is_empty() {
        return Err(OpenError::NoTrace(input.to_path_buf()));
    }
    Ok(out)
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<FoundTrace>) -> Result<(), OpenError> {
    if depth > MAX_DEPTH || !dir.is_dir() {
        return Ok(());
    }
    if is_trace_dir(dir) {
        let relative = dir
            .strip_prefix(root)
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
            .filter(|r| !r.is_empty());
        out.push(FoundTrace {
            dir: dir.to_path_buf(),
            relative,
            stream_files: stream_files(dir)?,
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
        walk(root, &d, depth + 1, out)?;
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
