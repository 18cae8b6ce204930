//! `traceloom stats PATH... [--begin T --end T] [--json]`: the statistics
//! tree (traceset → trace → CPU → process → thread → mode → event name)
//! with event counts and CPU time, computed by the statistics model.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use traceloom_engine::subject::EventSubject;
use traceloom_filter::Filter;
use traceloom_viewers::model::stats::range_request;
use traceloom_viewers::model::{Session, Statistics};

use crate::cache::{self, CacheOptions};
use crate::session::open_session;
use crate::CliError;
use traceloom_base::timespec;

/// Arguments of `traceloom stats`.
#[derive(Debug, Clone, Default, Args)]
pub struct StatsArgs {
    /// CTF trace directories, or trees holding several traces; or a Pajé
    /// trace file (per container and state type, the time per value).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Start of the range (babeltrace2's time syntax; seconds for a Pajé
    /// trace); the first event if absent.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub begin: Option<String>,
    /// End of the range (inclusive); the last event if absent.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Count only the events this filter expression accepts (`state.*`
    /// operands are not available here).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Print JSON instead of indented text.
    #[arg(long)]
    pub json: bool,
    /// The analysis store (used for the whole trace without a filter).
    #[command(flatten)]
    pub cache: CacheOptions,
}

/// Resolves `--begin`/`--end` against the traceset's span.
pub(crate) fn resolve_range(
    begin: Option<&str>,
    end: Option<&str>,
    span: (i64, i64),
) -> Result<(i64, i64), CliError> {
    let bound = |t: Option<&str>, default: i64| -> Result<i64, CliError> {
        match t {
            None => Ok(default),
            Some(text) => {
                let spec = timespec::parse(text, false)?;
                spec.resolve(span.0, false)
                    .ok_or_else(|| CliError::TimeOfDay(text.to_string()))
            }
        }
    };
    let b = bound(begin, span.0)?;
    let e = bound(end, span.1)?;
    if b > e {
        return Err(CliError::EmptyRange { begin: b, end: e });
    }
    Ok((b, e))
}

/// A filter on the event a request is about to receive.
pub(crate) type RequestFilter =
    Box<dyn FnMut(&traceloom_engine::source::CtfCurrent) -> bool + Send>;

/// Compiles `--filter` into a request filter on the current event.
pub(crate) fn request_filter(expr: Option<&str>) -> Result<Option<RequestFilter>, CliError> {
    let Some(expr) = expr else { return Ok(None) };
    let f = Filter::new(expr).map_err(|e| CliError::Filter(e.to_string()))?;
    Ok(Some(Box::new(
        move |cur: &traceloom_engine::source::CtfCurrent| {
            cur.event()
                .is_some_and(|ev| f.matches(&EventSubject::new(&ev, None)))
        },
    )))
}

/// Computes the statistics of `[begin, end]` with an optional filter, with
/// a progress bar on stderr when `progress`.
pub(crate) fn compute_with_progress(
    session: &mut Session,
    range: (i64, i64),
    filter: Option<&str>,
    progress: bool,
) -> Result<Statistics, CliError> {
    let names: Vec<String> = session
        .traceset()
        .traces()
        .map(|t| {
            t.name
                .clone()
                .unwrap_or_else(|| t.path.display().to_string())
        })
        .collect();
    let owner = session.new_owner();
    let mut req = range_request(owner, range.0, range.1, names);
    req.filter = request_filter(filter)?;
    let id = session.add(req);
    crate::progress::wait(session, id, progress, "statistics", range)
        .ok_or_else(|| CliError::Trace("the statistics request did not complete".into()))
}

/// `traceloom stats`: the whole trace without a filter comes from the
/// analysis store when it is valid (`--verbose` says so); a progress bar
/// on stderr when `progress` (stderr is a terminal). Damaged streams met
/// are reported on `err` after the statistics, and make it fail.
pub fn run_stats(
    args: &StatsArgs,
    progress: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if crate::export::is_paje(&args.paths) {
        return crate::paje::run_stats(args, out, err);
    }
    let mut session = open_session(&args.paths, err)?;
    let Some(span) = session.time_span() else {
        writeln!(out, "no events")?;
        return crate::report_stream_errors(session.errors(), out, err);
    };
    let range = resolve_range(args.begin.as_deref(), args.end.as_deref(), span)?;
    let stored = if range == span && args.filter.is_none() {
        cache::summary(&session, &args.cache, err)?
    } else {
        None
    };
    // Figures from the store come with the damage its pass met.
    let (st, damage) = match stored {
        Some(summary) => (summary.stats, summary.damage),
        None => (
            compute_with_progress(&mut session, range, args.filter.as_deref(), progress)?,
            Vec::new(),
        ),
    };
    if args.json {
        out.write_all(st.to_json().as_bytes())?;
    } else {
        out.write_all(st.to_text().as_bytes())?;
    }
    out.flush()?;
    crate::report_damage(session.errors(), &damage, out, err)
}
