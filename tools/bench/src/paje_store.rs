//! `traceloom-bench paje-store TRACE`: the memory and the analysis store of
//! the window's Pajé pass (issue #21: "memory within the analysis store's
//! budget"; issue #17's store for Pajé traces).
//!
//! 1. cold: the pass (spilling to the store's directory, a temporary
//!    one), the store written and read back in place
//!    (`store::paje::load_or_build`, what `traceloom index` and the
//!    window do), its anonymous resident memory sampled every 20 ms on a
//!    thread for its peak growth; the heap the data holds afterwards per
//!    kind of series, and the store's size against the trace's;
//! 2. warm: the trace opened again, its store loaded and a first
//!    full-range render; the window's full-range render (the rows in
//!    view and a page either side, from the top and from the middle of
//!    the tree: the median of five); the whole-trace statistics from the
//!    store.
//!
//! Every heap figure is against the store's budget: at most
//! [`HEAP_TARGET`] beyond the mapped files, during and after the pass.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use traceloom_viewers::model::session::OpenError;
use traceloom_viewers::model::{ControlFlowModel, PajeSession, PajeView};
use traceloom_viewers::store::paje as paje_store;
use traceloom_viewers::store::StoreOutcome;

use crate::measure::{conclude, load_average, median, pass_fail, RssProbe};
use crate::sizes::WIDTH;
use crate::BenchError;

/// Heap beyond the maps, during and after the pass, at most.
pub const HEAP_TARGET: u64 = 250_000_000;

/// Rows a window shows: a 1,000-pixel graph of 20-pixel rows.
const SHOWN_ROWS: usize = 50;

/// Arguments of `traceloom-bench paje-store`.
#[derive(Debug, Clone, Args)]
pub struct PajeStoreBenchArgs {
    /// The Pajé trace.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Keep the store in this directory (default: a temporary one, removed
    /// after); a valid store there is used, and the cold rows are skipped.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// Samples this process's anonymous resident memory on a thread until
/// dropped; keeps the largest value seen.
struct PeakSampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakSampler {
    fn start() -> Option<PeakSampler> {
        let probe = RssProbe::open()?;
        let peak = Arc::new(AtomicU64::new(probe.bytes()?));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(b) = probe.bytes() {
                    p.fetch_max(b, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Some(PeakSampler {
            peak,
            stop,
            thread: Some(thread),
        })
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// Runs the benchmark (see the module documentation).
pub fn run(args: &PajeStoreBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let mut ok = true;
    writeln!(out, "load average before: {}", load_average())?;
    let tmp = tempfile::Builder::new()
        .prefix("traceloom-paje-store-")
        .tempdir()?;
    let dir = args.cache_dir.as_deref().unwrap_or(tmp.path());
    let rss = RssProbe::open();
    let rss_now = || rss.as_ref().and_then(RssProbe::bytes).unwrap_or(0);
    let trace_err = |e: OpenError| BenchError::Trace(e.to_string());

    // 1. Cold: the pass (spilling to the store's directory), the store
    //    written and read back in place, as `index` and the window do.
    let rss0 = rss_now();
    let sampler = PeakSampler::start();
    let t0 = Instant::now();
    let mut session = PajeSession::open(&args.trace).map_err(trace_err)?;
    let (data, outcome) = paje_store::load_or_build(&mut session, dir).map_err(trace_err)?;
    let cold = t0.elapsed();
    drop(session);
    let peak = sampler.map_or(0, PeakSampler::finish);
    // Free pages back to the system, as the window's dropping thread does
    // when idle: what is left is what the data holds.
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
    let after = rss_now();
    let (path, bytes) = match &outcome {
        StoreOutcome::Loaded { path, bytes } => {
            writeln!(
                out,
                "cold: skipped, the store in {} is valid",
                dir.display()
            )?;
            (path.clone(), *bytes)
        }
        StoreOutcome::Built(None) => {
            let p = paje_store::store_path(
                dir,
                &paje_store::identity_of_files(std::slice::from_ref(&args.trace)),
            );
            let b = std::fs::metadata(&p).map_or(0, |m| m.len());
            (p, b)
        }
        other => return Err(BenchError::Failed(format!("store not built: {other:?}"))),
    };
    writeln!(
        out,
        "cold: {} events, {} containers: pass + store written + read back {:.2} s",
        data.events_read,
        data.containers.len(),
        cold.as_secs_f64()
    )?;
    let h = data.heap_bytes();
    writeln!(
        out,
        "after: heap of the data {} (lanes {} for {} changes, events {} for {}, variables {} for {}, links {} for {})",
        mb(h.total() as u64),
        mb(h.lanes as u64),
        h.lane_changes,
        mb(h.events as u64),
        h.event_items,
        mb(h.variables as u64),
        h.variable_items,
        mb(h.links as u64),
        h.link_items
    )?;
    let during = peak.saturating_sub(rss0);
    let pass_during = during <= HEAP_TARGET;
    ok &= pass_during;
    writeln!(
        out,
        "heap during the pass: RssAnon peak growth {} (target <= {}) {}",
        mb(during),
        mb(HEAP_TARGET),
        pass_fail(pass_during)
    )?;
    let kept = after.saturating_sub(rss0);
    let pass_after = kept <= HEAP_TARGET;
    ok &= pass_after;
    writeln!(
        out,
        "heap after the pass, data kept (mapped): RssAnon growth {} (target <= {}) {}",
        mb(kept),
        mb(HEAP_TARGET),
        pass_fail(pass_after)
    )?;
    let trace_bytes = std::fs::metadata(&args.trace).map_or(1, |m| m.len().max(1));
    writeln!(
        out,
        "store: {} = {:.1} % of the trace's {} ({})",
        mb(bytes),
        100.0 * bytes as f64 / trace_bytes as f64,
        mb(trace_bytes),
        path.display()
    )?;
    drop(data);

    // 2. Warm: the trace opened again, its store loaded (checksums, meta
    //    block, map) and a first full-range render at WIDTH pixels.
    let rss1 = rss_now();
    let t0 = Instant::now();
    let mut session = PajeSession::open(&args.trace).map_err(trace_err)?;
    let opened = t0.elapsed();
    let (data, outcome) = paje_store::load_or_build(&mut session, dir).map_err(trace_err)?;
    let loaded = t0.elapsed();
    if !matches!(outcome, StoreOutcome::Loaded { .. }) {
        return Err(BenchError::Failed(format!("store not used: {outcome:?}")));
    }
    let rss_loaded = rss_now();
    let render = data.render(data.span, WIDTH, &PajeView::default());
    let first = t0.elapsed();
    let rss_rendered = rss_now();
    let intervals: usize = (0..render.tree().len())
        .map(|i| render.states(i).len())
        .sum();
    let events: usize = (0..render.tree().len())
        .map(|i| render.events(i).len())
        .sum();
    let arrows: usize = render.arrow_series().iter().map(|a| a.arrows.len()).sum();
    writeln!(
        out,
        "warm: open {:.3} s (session {:.3} s, store loaded {:.3} s), first full-range render at {WIDTH} px {:.3} s ({} rows)",
        first.as_secs_f64(),
        opened.as_secs_f64(),
        (loaded - opened).as_secs_f64(),
        (first - loaded).as_secs_f64(),
        render.tree().len()
    )?;
    let n = render.tree().len();
    drop(render);
    for (from, first) in [("top", 0), ("middle", n.saturating_sub(SHOWN_ROWS) / 2)] {
        let rows = ControlFlowModel::rows_with_margin(first..first + SHOWN_ROWS);
        let mut times = Vec::new();
        for _ in 0..5 {
            let t0 = Instant::now();
            let r = data.render_rows(data.span, WIDTH, &PajeView::default(), Some(rows.clone()));
            times.push(t0.elapsed());
            std::hint::black_box(r);
        }
        writeln!(
            out,
            "warm: the window's full-range render at {WIDTH} px, rows {rows:?} ({SHOWN_ROWS} in view from the {from}, a page either side): median {:.3} s of 5",
            median(&times).as_secs_f64()
        )?;
    }
    let rss_stats = rss_now();
    let t0 = Instant::now();
    let stats = data.statistics(data.span, &PajeView::default());
    writeln!(
        out,
        "warm: whole-trace statistics from the store {:.3} s ({} rows)",
        t0.elapsed().as_secs_f64(),
        stats.row_count()
    )?;
    writeln!(
        out,
        "warm: RssAnon growth: store loaded {}, its full-range render ({intervals} intervals, {events} events, {arrows} arrows) {}, statistics {}",
        mb(rss_loaded.saturating_sub(rss1)),
        mb(rss_rendered.saturating_sub(rss_loaded)),
        mb(rss_now().saturating_sub(rss_stats))
    )?;
    drop((stats, data, session));
    conclude(out, &[], ok)
}
