//! `traceloom export PATH... --view controlflow|resources|histogram|statistics
//! [--begin T --end T] [--width PX] [--filter EXPR] -o OUT.svg|.png`: draws a
//! view's render to an image file, without a display server. A path that
//! is a file rather than a directory is read as a Pajé trace (control-flow
//! style view of its containers).

use std::io::Write;
use std::path::{Path, PathBuf};
use traceloom_base::TimeRange;

use clap::{Args, ValueEnum};
use traceloom_viewers::export::{
    export_png, export_svg, Figure, HistogramFigure, StatisticsFigure, TimeGraphFigure,
};
use traceloom_viewers::model::histogram;
use traceloom_viewers::model::{ControlFlowModel, PajeView, ResourcesModel};
use traceloom_viewers::PresentationConfig;

use crate::cache::{self, CacheOptions};
use crate::session::open_session;
use crate::stats::{compute_with_progress, request_filter, resolve_range};
use crate::CliError;

/// The views `export` can draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum View {
    /// Threads grouped under their process, status and mode over time.
    #[default]
    Controlflow,
    /// CPUs, IRQ lines and softirq vectors over time.
    Resources,
    /// Events per time bin.
    Histogram,
    /// The statistics tree.
    Statistics,
}

/// Arguments of `traceloom export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// CTF trace directories or trees, or one Pajé trace file.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The view to draw.
    #[arg(long, value_enum, default_value = "controlflow")]
    pub view: View,
    /// Start of the time range (babeltrace2's time syntax; seconds for
    /// Pajé traces).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub begin: Option<String>,
    /// End of the time range.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1920)]
    pub width: u32,
    /// Only events this filter expression accepts (histogram, statistics).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Output file; `.svg` or `.png`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// The analysis store (control flow and resources always; histogram
    /// and statistics of the whole trace without a filter when present).
    #[command(flatten)]
    pub cache: CacheOptions,
}

enum Format {
    Png,
    Svg,
}

fn format_of(path: &Path) -> Result<Format, CliError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => Err(CliError::Trace(format!(
            "{}: the output must end in .png or .svg",
            path.display()
        ))),
    }
}

fn write_figure(figure: &dyn Figure, args: &ExportArgs, format: &Format) -> Result<(), CliError> {
    let r = match format {
        Format::Png => export_png(figure, args.width, None, &args.output),
        Format::Svg => export_svg(figure, args.width, None, &args.output),
    };
    r.map_err(|e| CliError::Trace(e.to_string()))
}

/// Whether `paths` is one Pajé trace (a file, not a CTF directory).
pub fn is_paje(paths: &[PathBuf]) -> bool {
    paths.len() == 1 && paths[0].is_file()
}

/// A full-range histogram from the store's fine bins only when each pixel
/// bin spans at least this many of them (the fine bins straddling a pixel
/// edge are then at most a quarter of its count).
const MIN_FINE_BINS_PER_PIXEL: u64 = 4;

/// `traceloom export` (a progress bar on stderr when `progress`): the
/// image of what can be read; damaged streams are reported on `err` after
/// it is written, and make it fail.
pub fn run_export(
    args: &ExportArgs,
    progress: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let format = format_of(&args.output)?;
    if args.width == 0 {
        return Err(CliError::Trace("--width must be at least 1".into()));
    }
    if is_paje(&args.paths) {
        return export_paje(args, &format, out, err);
    }
    let mut session = open_session(&args.paths, err)?;
    let Some(span) = session.time_span() else {
        crate::report_stream_errors(session.errors(), out, err)?;
        return Err(CliError::Trace("the traceset has no events".into()));
    };
    let (b, e) = resolve_range(args.begin.as_deref(), args.end.as_deref(), span)?;
    let range = TimeRange::new(b, e);
    let whole = (b, e) == span && args.filter.is_none();
    // The damage met by the pass that built the store, when figures come
    // from it (this read does not meet it).
    let mut damage = Vec::new();
    match args.view {
        View::Controlflow | View::Resources => {
            let data = cache::analysis(&mut session, &args.cache, progress, err)?;
            damage.clone_from(&data.damage);
            let config = traceloom_viewers::model::resources::presentation();
            let render = if args.view == View::Controlflow {
                ControlFlowModel::new(data).render(range, args.width)
            } else {
                ResourcesModel::new(data).render(range, args.width)
            };
            write_figure(&TimeGraphFigure::new(&render, &config), args, &format)?;
        }
        View::Histogram => {
            let bins = args.width.min(4096);
            let stored = if args.filter.is_none() {
                cache::summary(&session, &args.cache, err)?
                    .filter(|d| d.histogram.resolves(range, bins, MIN_FINE_BINS_PER_PIXEL))
            } else {
                None
            };
            let render = match stored {
                Some(d) => {
                    damage = d.damage;
                    let lost = histogram::lost_events(session.traceset());
                    d.histogram.render(range, bins, &lost)
                }
                None => {
                    let owner = session.new_owner();
                    let filter = request_filter(args.filter.as_deref())?;
                    let req = histogram::request(owner, session.traceset(), range, bins, filter);
                    let id = session.add(req);
                    crate::progress::wait::<traceloom_viewers::HistogramRender>(
                        &mut session,
                        id,
                        progress,
                        "histogram",
                        (b, e),
                    )
                    .ok_or_else(|| {
                        CliError::Trace("the histogram request did not complete".into())
                    })?
                }
            };
            let config = PresentationConfig::default();
            write_figure(&HistogramFigure::new(&render, &config), args, &format)?;
        }
        View::Statistics => {
            let stored = if whole {
                cache::summary(&session, &args.cache, err)?
            } else {
                None
            };
            let st = match stored {
                Some(d) => {
                    damage = d.damage;
                    d.stats
                }
                None => {
                    compute_with_progress(&mut session, (b, e), args.filter.as_deref(), progress)?
                }
            };
            let render = st.render();
            let config = PresentationConfig::default();
            write_figure(&StatisticsFigure::new(&render, &config), args, &format)?;
        }
    }
    writeln!(out, "{}", args.output.display())?;
    crate::report_damage(session.errors(), &damage, out, err)
}

fn export_paje(
    args: &ExportArgs,
    format: &Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if args.view != View::Controlflow {
        return Err(CliError::Trace(
            "Pajé traces export with --view controlflow only".into(),
        ));
    }
    let path = &args.paths[0];
    // The window's Pajé pass and renders (or its store): an export is
    // what the window shows of the same trace.
    let (data, _) = crate::paje::analysis(path, &args.cache, err)?;
    let full = data.span;
    let b = crate::paje::parse_seconds(args.begin.as_deref())?.unwrap_or(full.start);
    let e = crate::paje::parse_seconds(args.end.as_deref())?.unwrap_or(full.end);
    if b > e {
        return Err(CliError::EmptyRange { begin: b, end: e });
    }
    let render = data.render(TimeRange::new(b, e), args.width, &PajeView::default());
    let config = data.presentation();
    write_figure(&TimeGraphFigure::new(&render, &config), args, format)?;
    writeln!(out, "{}", args.output.display())?;
    // As `dump --format pj_dump`: the problems with their file and line,
    // after the image of what could be read, and a failure if any is an
    // error.
    crate::paje::report_diagnostics(path, &data.diagnostics, err)
}
