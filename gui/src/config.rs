//! What the window remembers between runs, under the XDG config directory
//! (`$XDG_CONFIG_HOME/traceloom`, else `~/.config/traceloom`):
//!
//! * `state.json`: the last traceset opened and the recent traces;
//! * `traces/<key>.json`: per traceset, the open viewers, the time window,
//!   the filter and the bookmarks.
//!
//! A file that cannot be read or parsed is ignored with a warning (on
//! standard error, and for a traceset's configuration in the window's info
//! bar): a damaged configuration must never keep the viewer from opening a
//! trace. Nothing is ever written next to the traces.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many recent tracesets the File menu lists.
pub const MAX_RECENT: usize = 8;

/// The configuration directory; `None` when neither `XDG_CONFIG_HOME` nor
/// `HOME` is set.
pub fn config_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("traceloom"))
}

/// Application-wide memory: last traceset and recent ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppState {
    /// The traceset of the last window, reopened when no path is given.
    #[serde(default)]
    pub last_traceset: Vec<PathBuf>,
    /// Recently opened tracesets, most recent first.
    #[serde(default)]
    pub recent: Vec<Vec<PathBuf>>,
}

impl AppState {
    /// Records `paths` as the last and most recent traceset.
    pub fn remember(&mut self, paths: &[PathBuf]) {
        self.last_traceset = paths.to_vec();
        self.recent.retain(|r| r.as_slice() != paths);
        self.recent.insert(0, paths.to_vec());
        self.recent.truncate(MAX_RECENT);
    }
}

/// A bookmark: a named time marker shown in every view of the tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bookmark {
    /// Name given by the user.
    pub name: String,
    /// Time in ns.
    pub time: i64,
}

/// Per-traceset memory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceConfig {
    /// Names of the viewers shown (in the notebook's order).
    #[serde(default)]
    pub viewers: Vec<String>,
    /// Visible time window `(start, end)` in ns.
    #[serde(default)]
    pub time_window: Option<(i64, i64)>,
    /// Filter expression of the filter bar.
    #[serde(default)]
    pub filter: String,
    /// Bookmarks.
    #[serde(default)]
    pub bookmarks: Vec<Bookmark>,
    /// Positions of the tab's panes, in pixels, 0 where the layout places
    /// them (see `layout::SavedLayout`).
    #[serde(default)]
    pub panes: Vec<i32>,
    /// The time graphs' last layouts (control flow, then resources): the
    /// first renders of a reopened trace are made for the graph widths
    /// they leave.
    #[serde(default)]
    pub time_graphs: Vec<SavedGraph>,
}

/// What a time graph's layout was: its width and its tree column's, in
/// pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SavedGraph {
    /// The whole view's width.
    pub width: f64,
    /// The tree column's width.
    pub tree_column: f64,
}

/// Reads a JSON file: `Ok(None)` when it is missing, `Err` with a warning
/// to show when it cannot be read or parsed (the caller then goes on with
/// defaults).
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(format!(
                "cannot read the configuration {} ({e}): ignored",
                path.display()
            ))
        }
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        format!(
            "the configuration {} is corrupted ({e}): ignored, defaults used",
            path.display()
        )
    })
}

/// Reads a JSON file; a missing file is `None` silently, an unreadable or
/// corrupt one is `None` with a warning on standard error.
pub fn load_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    read_json(path).unwrap_or_else(|w| {
        eprintln!("traceloom: warning: {w}");
        None
    })
}

/// Writes `value` as JSON, atomically (temporary file then rename) so a
/// crash never leaves a half-written file behind.
pub fn save_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Where the application state lives in `dir`.
pub fn state_path(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

/// Where the configuration of the traceset `paths` lives in `dir`: keyed
/// by a hash of the canonical paths, so the same traces opened from another
/// working directory find their configuration again.
pub fn trace_config_path(dir: &Path, paths: &[PathBuf]) -> PathBuf {
    let mut h = DefaultHasher::new();
    for p in paths {
        std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.clone())
            .hash(&mut h);
    }
    let name = paths
        .first()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    dir.join("traces")
        .join(format!("{safe}-{:016x}.json", h.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("traceloom-gui-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trip_and_corruption() {
        let dir = tmpdir("cfg");
        let paths = vec![PathBuf::from("/nonexistent/trace")];
        let p = trace_config_path(&dir, &paths);
        let cfg = TraceConfig {
            viewers: vec!["control-flow".into()],
            time_window: Some((10, 20)),
            filter: "event.name == \"x\"".into(),
            bookmarks: vec![Bookmark {
                name: "b".into(),
                time: 15,
            }],
            panes: vec![200, 400],
            time_graphs: vec![SavedGraph {
                width: 1381.0,
                tree_column: 176.0,
            }],
        };
        save_json(&p, &cfg).unwrap();
        assert_eq!(load_json::<TraceConfig>(&p), Some(cfg));
        std::fs::write(&p, "{not json").unwrap();
        assert_eq!(load_json::<TraceConfig>(&p), None);
        let w = read_json::<TraceConfig>(&p).unwrap_err();
        assert!(w.contains("corrupted") && w.contains("ignored"), "{w}");
        assert_eq!(
            read_json::<TraceConfig>(&dir.join("missing.json")),
            Ok(None)
        );
        assert_eq!(load_json::<TraceConfig>(&dir.join("missing.json")), None);
    }

    #[test]
    fn recent_is_deduplicated_and_bounded() {
        let mut s = AppState::default();
        for i in 0..20 {
            s.remember(&[PathBuf::from(format!("/t{}", i % 10))]);
        }
        assert_eq!(s.recent.len(), MAX_RECENT);
        assert_eq!(s.recent[0], vec![PathBuf::from("/t9")]);
        assert_eq!(s.last_traceset, vec![PathBuf::from("/t9")]);
        s.remember(&[PathBuf::from("/t5")]);
        assert_eq!(s.recent[0], vec![PathBuf::from("/t5")]);
        assert_eq!(
            s.recent.iter().filter(|r| r[0] == Path::new("/t5")).count(),
            1
        );
    }
}
