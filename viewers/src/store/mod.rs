//! The analysis store: the whole-trace analysis of a traceset
//! ([`KernelData`]: state changes of every thread, CPU, IRQ and softirq
//! row with their block summaries, drawn events, wake-up and CPU hand-off
//! arrows, statistics, fine histogram) kept on disk, so that opening a
//! traceset a second time costs a file map instead of a pass over the
//! trace.
//!
//! One file per traceset, in the XDG cache next to the checkpoint cache
//! (`$XDG_CACHE_HOME/traceloom/<location>.store`), never in the trace
//! directory (a read-only trace works). Every function takes the cache
//! directory as a parameter ([`cache_dir`] is the default), so tests and
//! tools choose their own.
//!
//! - [`identity`]: what a store was computed from (UUIDs, sizes and
//!   modification times of every trace file), and the store's file name;
//! - [`file`]: the container (header, checksummed columns and meta block,
//!   atomic replacement by rename, memory map);
//! - [`verified`]: the record that a store's columns were checked, so
//!   that they are not read whole again until the file changes;
//! - `codec`: [`KernelData`] to and from columns;
//! - [`paje`]: a Pajé trace's analysis ([`crate::model::PajeData`]) in a
//!   store of its own, same container and rules.
//!
//! A store is used only when its format version and byte order are this
//! build's, its checksums hold and its identity equals the traces' as they
//! are now; otherwise [`load_or_build`] reports why
//! ([`StoreError::Stale`], [`StoreError::Damaged`]), analyses again and
//! replaces it. See `docs/store.md`.

pub mod file;
pub mod identity;
pub mod paje;
pub mod verified;

mod codec;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use codec::{StoreHead, Summary};
use identity::{store_path, TracesetIdentity};

use crate::model::kernel::{KernelAnalysis, KernelData};
use crate::model::session::Session;

/// File name extension of store files.
pub const EXTENSION: &str = "store";

/// Why a store was not used, or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// There is no store for these traces.
    #[error("no analysis store at {0}")]
    Missing(PathBuf),
    /// The store was computed from other trace files, or written by
    /// another format version.
    #[error("{path}: stale analysis store ({reason})")]
    Stale {
        /// The store file.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
    /// The store file is damaged (truncated, checksum mismatch...).
    #[error("{path}: damaged analysis store: {reason}")]
    Damaged {
        /// The store file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The store could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The store file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl StoreError {
    fn io(path: &Path, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The default cache directory (XDG), shared with the checkpoint cache;
/// `None` without a home directory.
pub fn cache_dir() -> Option<PathBuf> {
    traceloom_engine::checkpoint::cache_dir()
}

/// An analysis read from a store.
#[derive(Debug)]
pub struct Loaded {
    /// The analysis.
    pub data: KernelData,
    /// What the store says of itself.
    pub head: StoreHead,
    /// The store file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Reads the store of the traces at `identity` from `dir`, if it is valid
/// for them as they are now.
pub fn load(dir: &Path, identity: &TracesetIdentity) -> Result<Loaded, StoreError> {
    let path = store_path(dir, identity);
    let m = file::Mapped::open(&path)?;
    let stale = |reason: &str| StoreError::Stale {
        path: path.clone(),
        reason: reason.to_string(),
    };
    if m.header.digest != identity.digest() {
        return Err(stale("the trace files changed since it was written"));
    }
    let (head, data) = verify_while_reading(&m)?;
    if head.identity != *identity {
        return Err(stale("the trace files changed since it was written"));
    }
    Ok(Loaded {
        data,
        head,
        bytes: m.len(),
        path,
    })
}

/// The analysis held by `m`, its columns' checksum verified while its meta
/// block is decoded: the check reads every page of the store (3.3 GB on
/// an 8 GB trace, at memory speed on every core) and decoding the meta
/// block does not read the columns, so a warm open waits for the longer
/// of the two, not for both.
fn verify_while_reading(m: &file::Mapped) -> Result<(StoreHead, KernelData), StoreError> {
    let (verified, read) = std::thread::scope(|scope| {
        let verify = std::thread::Builder::new()
            .name("store check".into())
            .spawn_scoped(scope, || m.verify_columns());
        match verify {
            Ok(handle) => {
                let read = codec::read(m);
                (handle.join().ok(), read)
            }
            // No thread: one after the other.
            Err(_) => (Some(m.verify_columns()), codec::read(m)),
        }
    });
    match verified {
        Some(Ok(())) => read,
        Some(Err(e)) => Err(e),
        None => Err(StoreError::Damaged {
            path: m.path().to_path_buf(),
            reason: "the column check failed".into(),
        }),
    }
}

/// Stores this large or larger are checked and recorded by
/// [`check_and_record`], and by an open that checks them; a smaller one
/// is checked at each open in a few ms, and not recorded.
pub const RECORDED_CHECK_BYTES: u64 = 64 << 20;

/// Checks the columns of the store at `path` and records that they held
/// ([`verified`]), once the file has settled (waiting up to
/// [`verified::settle_time`]); stores under `min_bytes` are left alone. What
/// `traceloom index` does after writing a store (with
/// [`RECORDED_CHECK_BYTES`]), so that the window's first open of a large
/// trace does not read its store whole.
pub fn check_and_record(path: &Path, min_bytes: u64) -> Result<(), StoreError> {
    let m = file::Mapped::open(path)?;
    if m.len() < min_bytes {
        return Ok(());
    }
    if let Some(wait) = m.unsettled_for() {
        std::thread::sleep(wait);
    }
    m.verify_and_record()
}

/// [`check_and_record`] of a store of [`RECORDED_CHECK_BYTES`] or more,
/// on a thread of its own that nothing waits for: what the window does
/// after writing a store, so that reopening the trace does not read the
/// store whole. A process that ends first leaves no record, only a check
/// at the next open.
pub fn check_and_record_in_background(path: PathBuf) {
    let _ = std::thread::Builder::new()
        .name("traceloom-check".into())
        .spawn(move || check_and_record(&path, RECORDED_CHECK_BYTES));
}

/// The statistics and histogram of the store of the traces at `identity`
/// in `dir`, if it is valid for them as they are now: only the header and
/// the meta block are read and verified (what `stats` needs, in
/// milliseconds whatever the trace size), not the change lists.
pub fn load_summary(dir: &Path, identity: &TracesetIdentity) -> Result<Summary, StoreError> {
    let path = store_path(dir, identity);
    let m = file::Mapped::open(&path)?;
    let stale = || StoreError::Stale {
        path: path.clone(),
        reason: "the trace files changed since it was written".to_string(),
    };
    if m.header.digest != identity.digest() {
        return Err(stale());
    }
    let s = codec::read_summary(&m)?;
    if s.head.identity != *identity {
        return Err(stale());
    }
    Ok(s)
}

/// Writes `data`, the analysis of the traces at `identity`, as their store
/// in `dir` (atomically replacing any previous one); returns the file and
/// its size.
pub fn save(
    dir: &Path,
    identity: &TracesetIdentity,
    data: &KernelData,
) -> Result<(PathBuf, u64), StoreError> {
    let path = store_path(dir, identity);
    let io = |e| StoreError::io(&path, e);
    let mut w = file::Writer::create(&path).map_err(io)?;
    let meta = codec::write(&mut w, identity, data).map_err(io)?;
    let bytes = w.finish_with(identity.digest(), meta).map_err(io)?;
    Ok((path, bytes))
}

/// The analysis in the store just written at `path` (its checksums are
/// not verified again).
fn reopen(path: &Path) -> Result<KernelData, StoreError> {
    let m = file::Mapped::open(path)?;
    codec::read(&m).map(|(_, data)| data)
}

/// Where the analysis of [`load_or_build`] came from.
#[derive(Debug)]
pub enum StoreOutcome {
    /// Read from the store.
    Loaded {
        /// The store file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Analysed now (there was no store) and stored (`Some(error)` when
    /// writing failed: the analysis is good, only the next open is slow).
    Built(Option<StoreError>),
    /// Analysed now because the store was unusable (stale or damaged: the
    /// first member says why), and stored anew.
    Rebuilt(StoreError, Option<StoreError>),
}

impl StoreOutcome {
    /// What the user should be warned of (an unusable store, a failed
    /// write), if anything.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            StoreOutcome::Loaded { .. } => {}
            StoreOutcome::Built(w) => out.extend(w.iter().map(|e| format!("not stored: {e}"))),
            StoreOutcome::Rebuilt(why, w) => {
                out.push(format!("{why}; analysed again"));
                out.extend(w.iter().map(|e| format!("not stored: {e}")));
            }
        }
        out
    }

    /// Whether a store was written now (built or rebuilt, and stored).
    pub fn written(&self) -> bool {
        matches!(
            self,
            StoreOutcome::Built(None) | StoreOutcome::Rebuilt(_, None)
        )
    }
}

/// The whole-trace analysis of `session`'s traceset: from its store in
/// `dir` when valid, else computed by [`KernelAnalysis::run`] and stored.
pub fn load_or_build(session: &mut Session, dir: &Path) -> (Arc<KernelData>, StoreOutcome) {
    load_or_build_with(session, dir, KernelAnalysis::run)
}

/// [`load_or_build`] with the analysis done by `analyse` (a caller showing
/// progress; called again only if the store just written cannot be read
/// back).
pub fn load_or_build_with(
    session: &mut Session,
    dir: &Path,
    mut analyse: impl FnMut(&mut Session) -> Arc<KernelData>,
) -> (Arc<KernelData>, StoreOutcome) {
    let identity = TracesetIdentity::of(session.traceset());
    match load(dir, &identity) {
        Ok(l) => (
            Arc::new(l.data),
            StoreOutcome::Loaded {
                path: l.path,
                bytes: l.bytes,
            },
        ),
        Err(why) => {
            // The pass moves its finished chunks to a spill file in `dir`
            // (its heap stays bounded), then the store is written from
            // them and read back in place: what is returned holds little
            // heap, and the spill file goes away with the pass's data.
            let before = session.spill_dir().map(Path::to_path_buf);
            session.set_spill_dir(Some(dir.to_path_buf()));
            let data = analyse(session);
            let (data, written) = match save(dir, &identity, &data) {
                Ok((path, _)) => (read_back(&path, data, || analyse(session)), None),
                Err(e) => (data, Some(e)),
            };
            session.set_spill_dir(before);
            let outcome = match why {
                StoreError::Missing(_) => StoreOutcome::Built(written),
                why => StoreOutcome::Rebuilt(why, written),
            };
            (data, outcome)
        }
    }
}

/// The analysis just stored at `path`, read back in place, instead of
/// `data`, the same analysis on the heap. Unless someone else holds
/// `data`, it is dropped before the store is read: both at once held
/// their records and statistics twice at the end of the pass (on a trace
/// of tens of thousands of thread records, the largest part of its
/// heap). Should the store then not read back (a concurrent
/// `cache clear`, a failing disk), `again` analyses the traces again.
fn read_back(
    path: &Path,
    data: Arc<KernelData>,
    again: impl FnOnce() -> Arc<KernelData>,
) -> Arc<KernelData> {
    if Arc::strong_count(&data) > 1 {
        return reopen(path).map_or(data, Arc::new);
    }
    drop(data);
    match reopen(path) {
        Ok(mapped) => Arc::new(mapped),
        Err(_) => again(),
    }
}

/// A store file found in the cache directory.
#[derive(Debug)]
pub struct StoreEntry {
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// Its head, or why it cannot be read.
    pub head: Result<StoreHead, StoreError>,
}

/// The store files in `dir`, by path (none when `dir` does not exist).
pub fn list(dir: &Path) -> std::io::Result<Vec<StoreEntry>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in rd {
        let path = entry?.path();
        if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
            continue;
        }
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        let head = file::Mapped::open(&path).and_then(|m| codec::read_head(&m));
        out.push(StoreEntry { path, bytes, head });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Removes from `dir` the stores of traces under `under` (every store, and
/// the temporary files of interrupted writes, when `None`); returns the
/// files removed.
pub fn clear(dir: &Path, under: Option<&Path>) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    match under {
        Some(p) => {
            for e in list(dir)? {
                if e.head.as_ref().is_ok_and(|h| h.identity.is_under(p)) {
                    std::fs::remove_file(&e.path)?;
                    let record = verified::path_for(&e.path);
                    if std::fs::remove_file(&record).is_ok() {
                        removed.push(record);
                    }
                    removed.push(e.path);
                }
            }
        }
        None => {
            let rd = match std::fs::read_dir(dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
                Err(e) => return Err(e),
            };
            for entry in rd {
                let path = entry?.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let ours = name.ends_with(&format!(".{EXTENSION}"))
                    || name.ends_with(&format!(".{EXTENSION}{}", verified::SUFFIX))
                    || (name.contains(&format!(".{EXTENSION}")) && file::is_temporary(name));
                if ours {
                    std::fs::remove_file(&path)?;
                    removed.push(path);
                }
            }
        }
    }
    removed.sort();
    Ok(removed)
}
