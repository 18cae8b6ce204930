//! The analysis store from the command line (`docs/store.md`):
//!
//! * `traceloom index PATH...`: analyses the traces and writes their store
//!   ahead of time (nothing to do when it is valid);
//! * `traceloom cache list`: the stores, their size, state and traces;
//! * `traceloom cache clear [PATH]`: removes every store and checkpoint
//!   cache, or those of the traces under `PATH`;
//! * [`analysis`], [`summary`]: what `export` and `stats` use — the store
//!   when it is valid, else a pass over the trace (stored for next time by
//!   [`analysis`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use traceloom_base::Time;
use traceloom_engine::checkpoint;
use traceloom_viewers::model::{checkpoint_pass, parallel_pass};
use traceloom_viewers::model::{KernelData, Session};
use traceloom_viewers::store::identity::{FileStamp, TracesetIdentity};
use traceloom_viewers::store::{self, StoreError, StoreOutcome, Summary};

use crate::progress::Progress;
use crate::session::open_session;
use crate::CliError;

/// Where the caches are, and how much to say about them (shared by the
/// commands that use the store).
#[derive(Debug, Clone, Default, Args)]
pub struct CacheOptions {
    /// The cache directory (default: `$XDG_CACHE_HOME/traceloom`, or
    /// `~/.cache/traceloom`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Say on stderr whether the analysis store was used, built or
    /// rebuilt, and why.
    #[arg(short, long)]
    pub verbose: bool,
}

impl CacheOptions {
    /// The cache directory, `None` without a home directory.
    pub fn dir(&self) -> Option<PathBuf> {
        self.cache_dir.clone().or_else(store::cache_dir)
    }
}

/// Arguments of `traceloom cache`.
#[derive(Debug, Clone, Args)]
pub struct CacheArgs {
    /// What to do with the cache.
    #[command(subcommand)]
    pub command: CacheCommand,
    /// The cache directory (default: `$XDG_CACHE_HOME/traceloom`, or
    /// `~/.cache/traceloom`).
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
}

/// `traceloom cache` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum CacheCommand {
    /// List the analysis stores: size, events, state and traces.
    List,
    /// Remove the analysis stores and checkpoint caches (all of them, or
    /// those of the traces under PATH).
    Clear {
        /// Only the caches of the traces under this directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
}

/// Arguments of `traceloom index`.
#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    /// CTF trace directories, or trees holding several traces; or a Pajé
    /// trace file.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Cache options.
    #[command(flatten)]
    pub cache: CacheOptions,
}

pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// What `traceloom index` says of the store at `file` after `outcome`:
/// up to date, or written with its share of the `traced` bytes (of the
/// trace or traces, as `of` says); an error when it could not be written.
pub(crate) fn report_index(
    out: &mut dyn Write,
    file: &Path,
    outcome: &StoreOutcome,
    events: u64,
    traced: u64,
    of: &str,
) -> Result<(), CliError> {
    let bytes = std::fs::metadata(file).map_or(0, |m| m.len());
    match outcome {
        StoreOutcome::Loaded { .. } => writeln!(
            out,
            "{}: up to date ({}, {events} events)",
            file.display(),
            mib(bytes)
        )?,
        StoreOutcome::Built(Some(_)) | StoreOutcome::Rebuilt(_, Some(_)) => {
            return Err(CliError::Trace(
                "the analysis store could not be written".into(),
            ))
        }
        _ => writeln!(
            out,
            "{}: written ({}, {events} events, {:.1} % of the {of})",
            file.display(),
            mib(bytes),
            100.0 * bytes as f64 / traced.max(1) as f64
        )?,
    }
    Ok(())
}

/// Runs the kernel pass on `session` with a progress bar on stderr when
/// `progress` (stderr is a terminal): in parallel parts, one per core,
/// split at the checkpoints cached in `dir`, or at those of a checkpoint
/// pass read first (then cached in `dir`; the warning to give when they
/// cannot be is returned).
pub fn analyse(
    session: &mut Session,
    progress: bool,
    dir: Option<&Path>,
) -> (Arc<KernelData>, Option<String>) {
    let traceset = session.traceset().clone();
    let cached = dir.and_then(|d| {
        let fp = checkpoint::fingerprint(&traceset);
        checkpoint::load_at_most(
            &checkpoint::cache_path(d, fp),
            fp,
            checkpoint::LOADED_AT_MOST,
        )
        .ok()
    });
    let had = cached.is_some();
    let parts = parallel_pass::parts_wanted();
    let mut warning = None;
    // The checkpoints go to the cache too, so that the window opened next
    // seeks at once instead of reading the whole trace for them; as soon
    // as they are complete, not held while the analysis is assembled.
    let mut save = |checkpoints| {
        match (dir, had) {
            (Some(dir), false) => {
                if let Err(e) = checkpoint::save(dir, &traceset, checkpoints) {
                    warning = Some(format!("the checkpoints were not stored: {e}"));
                }
            }
            _ => drop(checkpoints),
        }
        release_free_memory();
    };
    let data = with_bar(session, progress, |s, p| {
        checkpoint_pass::analyse_in_parts(s, cached, parts, p, &mut save)
    });
    (data, warning)
}

/// Gives the pages of the allocator's free memory back to the system.
/// Called once the checkpoints are stored and dropped, before the
/// analysis' data is made from the pass: their states are many small
/// blocks whose pages the allocator keeps, and the data's large blocks,
/// mapped anew, came on top of them (about 20 MB on the 8 GB generated
/// trace).
fn release_free_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Runs `pass` on `session`, feeding its progress to a bar on stderr when
/// `progress`.
fn with_bar<R>(
    session: &mut Session,
    progress: bool,
    pass: impl FnOnce(&mut Session, &mut dyn FnMut(u64, Time)) -> R,
) -> R {
    let span = session.time_span().unwrap_or((0, 0));
    let mut bar = Progress::new(progress, "analysing", span);
    let r = pass(session, &mut |n, t| bar.update(Some(n), t));
    bar.finish();
    r
}

/// The whole-trace analysis of `session`'s traces for `export`: from the
/// store when valid, else analysed and stored (with a warning when a stale
/// or damaged store is replaced).
pub fn analysis(
    session: &mut Session,
    opts: &CacheOptions,
    progress: bool,
    err: &mut dyn Write,
) -> Result<Arc<KernelData>, CliError> {
    let Some(dir) = opts.dir() else {
        if opts.verbose {
            writeln!(
                err,
                "traceloom: no cache directory (no HOME): store not used"
            )?;
        }
        return Ok(analyse(session, progress, None).0);
    };
    let mut warning = None;
    let (data, outcome) = store::load_or_build_with(session, &dir, |s| {
        let (data, w) = analyse(s, progress, Some(&dir));
        warning = w;
        data
    });
    if let Some(w) = warning {
        writeln!(err, "traceloom: warning: {w}")?;
    }
    let read = format!("traces analysed ({} events)", data.events);
    report_outcome(&outcome, opts.verbose, &read, &dir, err)?;
    Ok(data)
}

/// Says on `err` what `load_or_build` did: its warnings (a stale or
/// damaged store replaced, a store not written) and, when `verbose`,
/// whether the store was used or the traces were read (`read` says how
/// much) and the store written in `dir`.
pub(crate) fn report_outcome(
    outcome: &StoreOutcome,
    verbose: bool,
    read: &str,
    dir: &Path,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    for w in outcome.warnings() {
        writeln!(err, "traceloom: warning: {w}")?;
    }
    if !verbose {
        return Ok(());
    }
    match outcome {
        StoreOutcome::Loaded { path, bytes } => writeln!(
            err,
            "traceloom: analysis store used: {} ({})",
            path.display(),
            mib(*bytes)
        )?,
        _ => writeln!(
            err,
            "traceloom: {read}; analysis store written in {}",
            dir.display()
        )?,
    }
    Ok(())
}

/// The whole-trace statistics and histogram of `session`'s traces for
/// `stats` and `export`, from the store's meta block when the store is
/// valid; `None` otherwise (with a warning when a store is there but
/// unusable), and then nothing is built.
pub fn summary(
    session: &Session,
    opts: &CacheOptions,
    err: &mut dyn Write,
) -> Result<Option<Summary>, CliError> {
    let Some(dir) = opts.dir() else {
        return Ok(None);
    };
    let identity = TracesetIdentity::of(session.traceset());
    let path = store::identity::store_path(&dir, &identity);
    match store::load_summary(&dir, &identity) {
        Ok(s) => {
            if opts.verbose {
                let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
                writeln!(
                    err,
                    "traceloom: analysis store used: {} ({})",
                    path.display(),
                    mib(bytes)
                )?;
            }
            Ok(Some(s))
        }
        Err(StoreError::Missing(p)) => {
            if opts.verbose {
                writeln!(
                    err,
                    "traceloom: no analysis store ({}); reading the traces",
                    p.display()
                )?;
            }
            Ok(None)
        }
        Err(e) => {
            writeln!(err, "traceloom: warning: {e}; not used")?;
            Ok(None)
        }
    }
}

/// `traceloom index`.
pub fn run_index(
    args: &IndexArgs,
    progress: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if crate::export::is_paje(&args.paths) {
        return crate::paje::run_index(&args.paths[0], &args.cache, out, err);
    }
    let mut session = open_session(&args.paths, err)?;
    let Some(dir) = args.cache.dir() else {
        return Err(CliError::Trace(
            "no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir".into(),
        ));
    };
    let traceset = session.traceset().clone();
    let mut warning = None;
    let (data, outcome) = store::load_or_build_with(&mut session, &dir, |s| {
        let (data, w) = analyse(s, progress, Some(&dir));
        warning = w;
        data
    });
    for w in outcome.warnings().into_iter().chain(warning) {
        writeln!(err, "traceloom: warning: {w}")?;
    }
    // A store already up to date: the checkpoints may still be missing
    // (a cache cleared of them), and the window wants them.
    if !checkpoint::is_cached(&dir, &traceset) {
        let c = checkpoint::build(traceset.clone(), checkpoint_pass::interval(&traceset));
        if let Err(e) = checkpoint::save(&dir, &traceset, c) {
            writeln!(
                err,
                "traceloom: warning: the checkpoints were not stored: {e}"
            )?;
        }
    }
    let identity = TracesetIdentity::of(session.traceset());
    let path = store::identity::store_path(&dir, &identity);
    if outcome.written() {
        // Checked once now (a second after the write, by the rules of a
        // recorded check), the window's first open reads a large store's
        // record instead of all of it.
        if let Err(e) = store::check_and_record(&path, store::RECORDED_CHECK_BYTES) {
            writeln!(err, "traceloom: warning: {e}")?;
        }
    }
    report_index(
        out,
        &path,
        &outcome,
        data.events,
        identity.total_bytes(),
        "traces",
    )?;
    // A store built from damaged streams holds what could be read: say
    // so, as every reading command does (the store records the damage).
    crate::report_damage(session.errors(), &data.damage, out, err)
}

/// Whether the files a store was computed from are still as they were.
fn current(identity: &TracesetIdentity) -> bool {
    identity
        .traces
        .iter()
        .flat_map(|t| &t.files)
        .all(|f| FileStamp::of(&f.path) == *f)
}

/// `traceloom cache`.
pub fn run_cache(args: &CacheArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let opts = CacheOptions {
        cache_dir: args.cache_dir.clone(),
        verbose: false,
    };
    let Some(dir) = opts.dir() else {
        return Err(CliError::Trace(
            "no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir".into(),
        ));
    };
    match &args.command {
        CacheCommand::List => list(&dir, out),
        CacheCommand::Clear { path } => clear(&dir, path.as_deref(), out),
    }
}

fn list(dir: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Trace(format!("{}: {e}", dir.display()));
    let entries = store::list(dir).map_err(io)?;
    writeln!(out, "cache directory: {}", dir.display())?;
    let mut total = 0;
    for e in &entries {
        total += e.bytes;
        match &e.head {
            Ok(h) => {
                let state = if current(&h.identity) {
                    "current"
                } else {
                    "stale"
                };
                writeln!(
                    out,
                    "{}  {}  {} events  {}  {:.1} % of the traces",
                    e.path.display(),
                    mib(e.bytes),
                    h.events,
                    state,
                    100.0 * e.bytes as f64 / h.identity.total_bytes().max(1) as f64
                )?;
                for t in &h.identity.traces {
                    writeln!(out, "    {}", t.path.display())?;
                }
            }
            Err(why) => writeln!(
                out,
                "{}  {}  unusable: {why}",
                e.path.display(),
                mib(e.bytes)
            )?,
        }
    }
    let checkpoints = checkpoint_files(dir).map_err(io)?;
    let ck: u64 = checkpoints.iter().map(|(_, b)| b).sum();
    writeln!(
        out,
        "{} analysis store(s), {}; {} checkpoint cache(s), {}",
        entries.len(),
        mib(total),
        checkpoints.len(),
        mib(ck)
    )?;
    Ok(())
}

/// The checkpoint cache files in `dir`, with their sizes.
fn checkpoint_files(dir: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for e in rd {
        let p = e?.path();
        if p.extension().and_then(|x| x.to_str()) == Some("checkpoints") {
            let b = std::fs::metadata(&p).map_or(0, |m| m.len());
            out.push((p, b));
        }
    }
    Ok(out)
}

fn clear(dir: &Path, path: Option<&Path>, out: &mut dyn Write) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Trace(format!("{}: {e}", dir.display()));
    let mut removed = store::clear(dir, path).map_err(io)?;
    match path {
        None => {
            for (p, _) in checkpoint_files(dir).map_err(io)? {
                std::fs::remove_file(&p).map_err(io)?;
                removed.push(p);
            }
        }
        Some(p) => {
            // Checkpoint caches are named by the traces' fingerprint: the
            // traces must open to find theirs.
            if let Ok(ts) = traceloom_ctf::Traceset::open(&[p.to_path_buf()]) {
                let f = checkpoint::cache_path(dir, checkpoint::fingerprint(&ts));
                if f.exists() {
                    std::fs::remove_file(&f).map_err(io)?;
                    removed.push(f);
                }
            }
        }
    }
    for p in &removed {
        writeln!(out, "removed {}", p.display())?;
    }
    writeln!(out, "{} file(s) removed", removed.len())?;
    Ok(())
}
