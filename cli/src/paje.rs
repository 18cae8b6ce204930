//! Pajé traces on the command line, through the Pajé analysis store
//! (`docs/store.md`, `docs/paje.md`): `export` and `stats` take the
//! window's analysis from the store when it is valid, else run the pass
//! and write the store (a second command on the same trace reads no
//! trace); `index` writes it ahead of time; `--verbose` says which.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use traceloom_base::TimeRange;
use traceloom_paje::{Diagnostic, Severity};
use traceloom_viewers::model::{PajeData, PajeSession, PajeView};
use traceloom_viewers::store::paje as paje_store;
use traceloom_viewers::store::StoreOutcome;
use traceloom_viewers::{StatValue, StatisticsRender};

use crate::cache::{report_outcome, CacheOptions};
use crate::stats::StatsArgs;
use crate::CliError;

fn trace_error(e: impl std::fmt::Display) -> CliError {
    CliError::Trace(e.to_string())
}

/// The whole-trace analysis of the Pajé trace at `path`: from its store
/// when valid, else read and stored (warnings on `err` when a store was
/// unusable or could not be written; `--verbose` says which it was).
pub fn analysis(
    path: &Path,
    opts: &CacheOptions,
    err: &mut dyn Write,
) -> Result<(Arc<PajeData>, StoreOutcome), CliError> {
    let mut session = PajeSession::open(path).map_err(trace_error)?;
    let Some(dir) = opts.dir() else {
        if opts.verbose {
            writeln!(
                err,
                "traceloom: no cache directory (no HOME): store not used"
            )?;
        }
        let (data, _) = PajeData::analyse(&mut session).map_err(trace_error)?;
        return Ok((Arc::new(data), StoreOutcome::Built(None)));
    };
    let (data, outcome) = paje_store::load_or_build(&mut session, &dir).map_err(trace_error)?;
    let read = format!("Pajé trace read ({} events)", data.events_read);
    report_outcome(&outcome, opts.verbose, &read, &dir, err)?;
    Ok((data, outcome))
}

/// Reports the trace's problems on `err` (file and line each, as `dump
/// --format pj_dump` does), after the output; an error if any is one.
pub fn report_diagnostics(
    path: &Path,
    diagnostics: &[Diagnostic],
    err: &mut dyn Write,
) -> Result<(), CliError> {
    for d in diagnostics {
        writeln!(err, "traceloom: {d}")?;
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    match errors {
        0 => Ok(()),
        n => Err(CliError::Trace(format!(
            "{}: {n} error(s) in the trace (reported above)",
            path.display()
        ))),
    }
}

/// `traceloom index TRACE` for a Pajé trace.
pub fn run_index(
    path: &Path,
    opts: &CacheOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if opts.dir().is_none() {
        return Err(CliError::Trace(
            "no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir".into(),
        ));
    }
    let (data, outcome) = analysis(path, opts, err)?;
    let dir = opts.dir().unwrap_or_default();
    let session = PajeSession::open(path).map_err(trace_error)?;
    let identity = paje_store::identity(&session);
    let file = paje_store::store_path(&dir, &identity);
    if outcome.written() {
        // As for a kernel trace's store: the window's first open reads
        // the record of this check.
        if let Err(e) = traceloom_viewers::store::check_and_record(
            &file,
            traceloom_viewers::store::RECORDED_CHECK_BYTES,
        ) {
            writeln!(err, "traceloom: warning: {e}")?;
        }
    }
    crate::cache::report_index(
        out,
        &file,
        &outcome,
        data.events_read,
        identity.total_bytes(),
        "trace",
    )?;
    report_diagnostics(path, &data.diagnostics, err)
}

/// `--begin`/`--end` of a Pajé trace: seconds, as the trace's times.
pub fn parse_seconds(t: Option<&str>) -> Result<Option<i64>, CliError> {
    t.map(|s| {
        s.trim()
            .parse::<f64>()
            .map(|x| (x * 1e9).round() as i64)
            .map_err(|_| CliError::Trace(format!("invalid Pajé time `{s}` (seconds expected)")))
    })
    .transpose()
}

fn cell(v: &StatValue) -> String {
    match v {
        StatValue::Empty => String::new(),
        StatValue::Count(n) => n.to_string(),
        StatValue::Duration(ns) => format!("{:.9} s", *ns as f64 / 1e9),
        StatValue::Percent(p) => format!("{p:.2} %"),
        StatValue::Text(t) => t.clone(),
    }
}

fn to_text(r: &StatisticsRender) -> String {
    let mut s = format!("{}: {}\n", r.name_title, r.columns.join(", "));
    for row in r.rows() {
        let values: Vec<String> = row.values.iter().map(cell).collect();
        let values = values.join("  ");
        let indent = "  ".repeat(usize::from(row.depth));
        s.push_str(&format!("{indent}{}  {}\n", row.label, values.trim()));
    }
    s
}

fn to_json(r: &StatisticsRender) -> String {
    let rows: Vec<serde_json::Value> = r
        .rows()
        .map(|row| {
            let mut o = serde_json::json!({ "depth": row.depth, "label": row.label });
            for (name, v) in r.columns.iter().zip(row.values) {
                let v = match v {
                    StatValue::Empty => continue,
                    StatValue::Count(n) => serde_json::json!(n),
                    StatValue::Duration(ns) => serde_json::json!(ns),
                    StatValue::Percent(p) => serde_json::json!(p),
                    StatValue::Text(t) => serde_json::json!(t),
                };
                o[name.as_str()] = v;
            }
            o
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&rows).unwrap_or_default();
    s.push('\n');
    s
}

/// `traceloom stats TRACE` for a Pajé trace: per container and state
/// type, the time per value over the range (ViTE's statistics), from the
/// store (or the pass, which writes it).
pub fn run_stats(
    args: &StatsArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if args.filter.is_some() {
        return Err(CliError::Trace(
            "filter expressions apply to CTF events, not to Pajé traces".into(),
        ));
    }
    let path = &args.paths[0];
    let (data, _) = analysis(path, &args.cache, err)?;
    let full = data.span;
    let b = parse_seconds(args.begin.as_deref())?.unwrap_or(full.start);
    let e = parse_seconds(args.end.as_deref())?.unwrap_or(full.end);
    if b > e {
        return Err(CliError::EmptyRange { begin: b, end: e });
    }
    let render = data.statistics(TimeRange::new(b, e), &PajeView::default());
    let text = if args.json {
        to_json(&render)
    } else {
        to_text(&render)
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    report_diagnostics(path, &data.diagnostics, err)
}
