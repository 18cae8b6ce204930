//! `traceloom-bench paje-store TRACE`: the memory and the analysis store of
//! the window's Pajé pass (issue #21: "memory within the analysis store's
//! budget"; issue #17's store for Pajé traces).
//!
//! 1. the pass (`PajeData::analyse`, spilling to a temporary directory as
//!    the store's build does) in this process, its anonymous resident
//!    memory sampled every 20 ms on a thread for its peak growth, and the
//!    heap its snapshot holds per kind of series (lanes, events,
//!    variables, links), with the items of each.
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
use traceloom_viewers::model::{PajeData, PajeSession};

use crate::measure::{conclude, load_average, pass_fail, RssProbe};
use crate::BenchError;

/// Heap beyond the maps, during and after the pass, at most.
pub const HEAP_TARGET: u64 = 250_000_000;

/// Arguments of `traceloom-bench paje-store`.
#[derive(Debug, Clone, Args)]
pub struct PajeStoreBenchArgs {
    /// The Pajé trace.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
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
    let dir = tempfile::Builder::new()
        .prefix("traceloom-paje-store-")
        .tempdir()?;
    let rss = RssProbe::open();
    let rss_now = || rss.as_ref().and_then(RssProbe::bytes).unwrap_or(0);
    let rss0 = rss_now();
    let sampler = PeakSampler::start();
    let t0 = Instant::now();
    let trace_err = |e: OpenError| BenchError::Trace(e.to_string());
    let mut session = PajeSession::open(&args.trace).map_err(trace_err)?;
    // As the store's build does: finished chunks to a spill file.
    session.set_spill_dir(Some(dir.path().to_path_buf()));
    let (data, _) = PajeData::analyse(&mut session).map_err(trace_err)?;
    drop(session);
    let pass = t0.elapsed();
    let peak = sampler.map_or(0, PeakSampler::finish);
    let after = rss_now();
    let h = data.heap_bytes();
    writeln!(
        out,
        "pass: {} events in {:.2} s; {} containers",
        data.events_read,
        pass.as_secs_f64(),
        data.containers.len()
    )?;
    writeln!(
        out,
        "pass: heap of its data {}: lanes {} ({} changes), events {} ({}), variables {} ({}), links {} ({})",
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
        "pass: RssAnon peak growth during the pass {} (target <= {}) {}",
        mb(during),
        mb(HEAP_TARGET),
        pass_fail(pass_during)
    )?;
    let kept = after.saturating_sub(rss0);
    let pass_after = kept <= HEAP_TARGET;
    ok &= pass_after;
    writeln!(
        out,
        "pass: RssAnon growth after the pass, its data kept {} (target <= {}) {}",
        mb(kept),
        mb(HEAP_TARGET),
        pass_fail(pass_after)
    )?;
    drop(data);
    conclude(out, &[], ok)
}
