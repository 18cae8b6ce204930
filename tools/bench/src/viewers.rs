//! `traceloom-bench viewers TRACE [--runs N]`: the viewers' performance
//! targets (issue #4, point 4) on a generated kernel trace of ~1 GB.
//!
//! 1. The checkpoints are loaded from the engine's cache (built and stored
//!    there when missing) and handed to the session's scheduler.
//! 2. The whole-trace analysis ([`KernelAnalysis`]) runs once; its time,
//!    its rate, the heap its data holds and the growth of the process's
//!    anonymous resident memory are reported; then the analysis store's
//!    rows ([`crate::store`]).
//! 3. Renders, `N` times each (median reported): a full-range control flow
//!    render at 1920 px on a freshly built model (the model caches the
//!    full-range render per width, so a fresh model is what measures the
//!    work), zoomed control flow renders of 1 ms windows at random places
//!    ([`ZOOMS_PER_RUN`] per run), and the same two for the resources view.
//!    The model constructions are timed apart.
//! 4. Whole-trace statistics as the application computes them
//!    ([`Session::start_statistics_with`]: parts split at the checkpoints,
//!    each read by its own scheduler on its own thread, then merged), `N`
//!    times, as events per second; interleaved with it, the same in one
//!    pass ([`stats::range_request`] on the session's scheduler, whose
//!    result must be equal) and a request that only counts events over the
//!    same range (the engine's read and state computation alone), so that
//!    the cost of the statistics hooks themselves is visible.
//!
//! Each figure gets PASS or FAIL against its target (on wall-clock
//! medians); a FAIL makes the command fail. The calling thread's CPU
//! times are printed too: on a shared machine they show what the work
//! costs whatever the load.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traceloom_base::Time;
use traceloom_base::TimeRange;

use clap::Args;
use traceloom_engine::checkpoint::{self, CacheOutcome, DEFAULT_INTERVAL};
use traceloom_engine::request::Start;
use traceloom_hooks::{Flow, Priority};
use traceloom_viewers::model::session::Payload;
use traceloom_viewers::model::stats::{self, ParallelConfig, Statistics};
use traceloom_viewers::model::{checkpoint_pass, parallel_pass};
use traceloom_viewers::model::{
    ControlFlowModel, KernelData, KernelRequest, ResourcesModel, Session,
};

use crate::measure::{load_average, median, pass_fail, rss_anon_bytes};
use crate::sizes::{WIDTH, ZOOMS_PER_RUN, ZOOM_SPAN};
use crate::BenchError;

/// Full-range control flow render at [`WIDTH`] px, at most.
pub const FULL_RENDER_TARGET: Duration = Duration::from_millis(100);
/// Render of a 1 ms window at [`WIDTH`] px, at most.
pub const ZOOM_RENDER_TARGET: Duration = Duration::from_millis(20);
/// Whole-trace statistics, events per second, at least.
pub const STATS_RATE_TARGET: f64 = 10e6;

/// Arguments of `traceloom-bench viewers`.
#[derive(Debug, Clone, Args)]
pub struct ViewersBenchArgs {
    /// CTF trace directories (a generated kernel trace of ~1 GB for the
    /// issue's targets: `traceloom-kernelgen OUT --max-bytes 1GiB`).
    #[arg(required = true, value_name = "TRACE")]
    pub paths: Vec<PathBuf>,
    /// How many times each measurement is taken (the median is reported).
    #[arg(long, default_value_t = 5, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Parts (threads) of the parallel kernel pass and statistics
    /// (default: the available cores; 1: the single pass).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parts: Option<u32>,
    /// Decoding threads of each part's reader (default: the application's,
    /// see `ParallelConfig`).
    #[arg(long, value_name = "N")]
    pub part_decode_threads: Option<u32>,
}

/// A small deterministic generator for the zoomed windows.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Opens a session on `paths` whose scheduler has the traceset's
/// checkpoints (from the cache, built there when missing).
fn session_with_checkpoints(paths: &[PathBuf], out: &mut dyn Write) -> Result<Session, BenchError> {
    let mut session = Session::open(paths).map_err(|e| BenchError::Trace(e.to_string()))?;
    let dir =
        checkpoint::cache_dir().unwrap_or_else(|| std::env::temp_dir().join("traceloom-cache"));
    let t0 = Instant::now();
    let (cps, outcome) = checkpoint::load_or_build(session.traceset(), &dir, DEFAULT_INTERVAL);
    let how = match outcome {
        CacheOutcome::Loaded => "loaded from the cache",
        CacheOutcome::Built(None) | CacheOutcome::Rebuilt(_, None) => "built and cached",
        CacheOutcome::Built(Some(_)) | CacheOutcome::Rebuilt(_, Some(_)) => {
            "built (the cache could not be written)"
        }
    };
    writeln!(
        out,
        "checkpoints: {} {how} in {:.2} s",
        cps.states.len(),
        t0.elapsed().as_secs_f64()
    )?;
    session
        .scheduler()
        .add_checkpoints(cps.states.into_iter().map(|c| (c.position, c.state)));
    Ok(session)
}

/// A request over `[begin, end]` that only counts its events.
fn count_request(session: &mut Session, begin: Time, end: Time) -> KernelRequest {
    let owner = session.new_owner();
    let mut req = KernelRequest::new(owner, Start::Time(begin), Box::new(0u64) as Payload);
    req.priority = Priority::HIGH;
    req.end_time = Some(end);
    req.event.add(Priority::HIGH, |ctx| {
        if let Some(n) = ctx.data.downcast_mut::<u64>() {
            *n += 1;
        }
        Flow::Continue
    });
    req
}

/// CPU time consumed by the calling thread so far: unlike wall time, it
/// does not grow when other processes take the CPU (the benchmark
/// machine is shared), so it is reported next to the wall-clock medians.
fn thread_cpu() -> Duration {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by the whole process so far (every thread: the
/// parallel statistics' parts and the decoding threads).
fn process_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The time of a CPU-time clock.
fn cpu_clock(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Times `f` `runs` times; returns the times, in run order.
fn time_runs(runs: u32, mut f: impl FnMut()) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed()
        })
        .collect()
}

/// Runs the viewers benchmark and prints its figures with PASS/FAIL.
pub fn run(args: &ViewersBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    writeln!(out, "load average before: {}", load_average())?;
    let mut session = session_with_checkpoints(&args.paths, out)?;
    let (begin, end) = session
        .time_span()
        .ok_or_else(|| BenchError::Failed("empty trace".into()))?;
    writeln!(
        out,
        "trace: {} MB of stream data, {:.3} s of events",
        session.traceset().total_bytes() / 1_000_000,
        (end - begin) as f64 / 1e9
    )?;
    let mut ok = true;

    // The whole-trace analysis, moving its finished chunks to a spill file
    // in the store's directory (as `store::load_or_build` has it do); the
    // anonymous memory is sampled every million events or so for its peak.
    let store_dir =
        checkpoint::cache_dir().unwrap_or_else(|| std::env::temp_dir().join("traceloom-cache"));
    session.set_spill_dir(Some(store_dir.clone()));
    let rss0 = rss_anon_bytes();
    let mut peak = rss0;
    // As `traceloom index` runs it: in parallel parts, a checkpoint pass
    // reading ahead to split them.
    let parts = args.parts.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |p| p as usize,
    );
    let every = checkpoint_pass::interval(session.traceset());
    let (t0, c0) = (Instant::now(), process_cpu());
    let (data, _): (Arc<KernelData>, _) =
        parallel_pass::analyse_cold(&mut session, parts, every, &mut |_, _| {
            peak = peak.max(rss_anon_bytes());
        });
    let pass_time = t0.elapsed();
    let pass_cpu = process_cpu() - c0;
    let rss1 = rss_anon_bytes();
    let changes: usize = data.threads.iter().map(|t| t.times.len()).sum::<usize>()
        + data
            .cpus
            .iter()
            .map(|c| c.row(&data.threads).len())
            .sum::<usize>()
        + data.lines.iter().map(|l| l.times.len()).sum::<usize>();
    writeln!(
        out,
        "whole-trace analysis in {parts} parts: {} events in {:.2} s wall ({:.2} s CPU) = {:.2} M events/s; {} threads, {} CPUs, {} lines, {changes} state changes, {} wake-up and {} CPU arrows",
        data.events,
        pass_time.as_secs_f64(),
        pass_cpu.as_secs_f64(),
        data.events as f64 / pass_time.as_secs_f64() / 1e6,
        data.threads.len(),
        data.cpus.len(),
        data.lines.len(),
        data.wakeups.len(),
        data.switches.len(),
    )?;
    let rss_text = match (rss0, rss1) {
        (Some(a), Some(b)) => format!("{:.1} MB", b.saturating_sub(a) as f64 / 1e6),
        _ => "unavailable".into(),
    };
    let peak_growth = match (rss0, peak) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    writeln!(
        out,
        "analysis memory: data {:.1} MB on the heap; RssAnon grew by {rss_text} over the pass",
        data.heap_bytes() as f64 / 1e6
    )?;

    // The analysis store (issue #17's rows).
    let identity = traceloom_viewers::store::identity::TracesetIdentity::of(session.traceset());
    let pass = crate::store::Pass {
        time: pass_time,
        peak_growth,
    };
    ok &= crate::store::run(&identity, &data, pass, &store_dir, args.runs, out)?;

    // Model construction (the GUI builds both models for each new data).
    let cf_new = time_runs(args.runs, || drop(ControlFlowModel::new(data.clone())));
    let res_new = time_runs(args.runs, || drop(ResourcesModel::new(data.clone())));
    writeln!(
        out,
        "model construction: control flow {} , resources {} (medians of {})",
        ms(median(&cf_new)),
        ms(median(&res_new)),
        args.runs
    )?;

    // Full-range renders, each on a fresh model (no cached render).
    let full = TimeRange::new(begin, end);
    let mut cf_full = Vec::new();
    let mut res_full = Vec::new();
    let (mut cf_full_cpu, mut res_full_cpu) = (Vec::new(), Vec::new());
    let mut intervals = 0;
    for _ in 0..args.runs {
        let m = ControlFlowModel::new(data.clone());
        let (t0, c0) = (Instant::now(), thread_cpu());
        let r = m.render(full, WIDTH);
        cf_full.push(t0.elapsed());
        cf_full_cpu.push(thread_cpu() - c0);
        intervals = (0..r.tree().len())
            .map(|i| r.states(i).len())
            .sum::<usize>();
        let m = ResourcesModel::new(data.clone());
        let (t0, c0) = (Instant::now(), thread_cpu());
        let r = m.render(full, WIDTH);
        res_full.push(t0.elapsed());
        res_full_cpu.push(thread_cpu() - c0);
        std::hint::black_box(r);
    }
    let cf = median(&cf_full);
    let pass = cf <= FULL_RENDER_TARGET;
    ok &= pass;
    writeln!(
        out,
        "control flow full-range render at {WIDTH} px: median {} wall, {} CPU ({intervals} intervals drawn; runs: {}) (target <= {}) {}",
        ms(cf),
        ms(median(&cf_full_cpu)),
        cf_full.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", "),
        ms(FULL_RENDER_TARGET),
        pass_fail(pass)
    )?;
    let res = median(&res_full);
    let pass = res <= FULL_RENDER_TARGET;
    ok &= pass;
    writeln!(
        out,
        "resources full-range render at {WIDTH} px: median {} wall, {} CPU (target <= {}) {}",
        ms(res),
        ms(median(&res_full_cpu)),
        ms(FULL_RENDER_TARGET),
        pass_fail(pass)
    )?;

    // Zoomed renders of 1 ms windows at random places.
    let cfm = ControlFlowModel::new(data.clone());
    let resm = ResourcesModel::new(data.clone());
    let mut rng = SplitMix(0x7ea1_100a);
    let room = (end - begin - ZOOM_SPAN).max(1) as u64;
    let mut cf_zoom = Vec::new();
    let mut res_zoom = Vec::new();
    let (mut cf_zoom_cpu, mut res_zoom_cpu) = (Vec::new(), Vec::new());
    for _ in 0..args.runs as usize * ZOOMS_PER_RUN {
        let s = begin + (rng.next() % room) as Time;
        let range = TimeRange::new(s, s + ZOOM_SPAN);
        let (t0, c0) = (Instant::now(), thread_cpu());
        std::hint::black_box(cfm.render(range, WIDTH));
        cf_zoom.push(t0.elapsed());
        cf_zoom_cpu.push(thread_cpu() - c0);
        let (t0, c0) = (Instant::now(), thread_cpu());
        std::hint::black_box(resm.render(range, WIDTH));
        res_zoom.push(t0.elapsed());
        res_zoom_cpu.push(thread_cpu() - c0);
    }
    for (name, times, cpu) in [
        ("control flow", &cf_zoom, &cf_zoom_cpu),
        ("resources", &res_zoom, &res_zoom_cpu),
    ] {
        let m = median(times);
        let worst = times.iter().max().copied().unwrap_or_default();
        let pass = m <= ZOOM_RENDER_TARGET;
        ok &= pass;
        writeln!(
            out,
            "{name} 1 ms window at {WIDTH} px: median {} wall, {} CPU over {} windows, worst {} wall (target <= {}) {}",
            ms(m),
            ms(median(cpu)),
            times.len(),
            ms(worst),
            ms(ZOOM_RENDER_TARGET),
            pass_fail(pass)
        )?;
    }
    drop((cfm, resm));

    // Whole-trace statistics as the application computes them (parts in
    // parallel), interleaved with the same in one pass and a bare
    // counting pass.
    let mut config = ParallelConfig::default();
    if let Some(p) = args.parts {
        config.parts = p as usize;
    }
    if let Some(d) = args.part_decode_threads {
        config.decode_threads = d as usize;
    }
    let mut par_times = Vec::new();
    let mut par_cpu = Vec::new();
    let mut parts_used = 0;
    let mut stats_times = Vec::new();
    let mut bare_times = Vec::new();
    let (mut stats_cpu, mut bare_cpu) = (Vec::new(), Vec::new());
    let mut counted = 0u64;
    let mut par_counted = 0u64;
    let mut bare_counted = 0u64;
    for _ in 0..args.runs {
        let owner = session.new_owner();
        let (t0, c0) = (Instant::now(), process_cpu());
        let task = session.start_statistics_with(owner, begin, end, Vec::new(), config);
        parts_used = task.parts();
        let par: Statistics = session
            .wait_statistics(task)
            .ok_or_else(|| BenchError::Failed("the parallel statistics gave no data".into()))?;
        par_times.push(t0.elapsed());
        par_cpu.push(process_cpu() - c0);
        par_counted = par.total_events;

        let owner = session.new_owner();
        let req = stats::range_request(owner, begin, end, Vec::new());
        let (t0, c0) = (Instant::now(), thread_cpu());
        let id = session.add(req);
        let s: Statistics = session
            .wait(id)
            .ok_or_else(|| BenchError::Failed("the statistics request gave no data".into()))?;
        stats_times.push(t0.elapsed());
        stats_cpu.push(thread_cpu() - c0);
        counted = s.total_events;
        if s != par {
            return Err(BenchError::Failed(
                "the parallel statistics differ from the single pass's".into(),
            ));
        }
        drop((s, par));

        let req = count_request(&mut session, begin, end);
        let (t0, c0) = (Instant::now(), thread_cpu());
        let id = session.add(req);
        bare_counted = session
            .wait::<u64>(id)
            .ok_or_else(|| BenchError::Failed("the counting request gave no data".into()))?;
        bare_times.push(t0.elapsed());
        bare_cpu.push(thread_cpu() - c0);
    }
    if counted != data.events || par_counted != data.events || bare_counted != data.events {
        return Err(BenchError::Failed(format!(
            "event counts disagree: analysis {}, statistics {par_counted} (parallel) and {counted} (one pass), counting pass {bare_counted}",
            data.events
        )));
    }
    let secs = |d: &[Duration]| {
        d.iter()
            .map(|d| format!("{:.2} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let par = median(&par_times);
    let rate = counted as f64 / par.as_secs_f64();
    let pass = rate >= STATS_RATE_TARGET;
    ok &= pass;
    writeln!(
        out,
        "whole-trace statistics ({parts_used} parts on {parts_used} threads, {} decoding thread(s) each; equal to the single pass): {counted} events, median {:.2} s wall = {:.2} M events/s, {:.2} s CPU of the process (runs: {}) (target >= {:.0} M events/s) {}",
        config.decode_threads,
        par.as_secs_f64(),
        rate / 1e6,
        median(&par_cpu).as_secs_f64(),
        secs(&par_times),
        STATS_RATE_TARGET / 1e6,
        pass_fail(pass)
    )?;
    let st = median(&stats_times);
    let bare = median(&bare_times);
    let (st_cpu, bare_c) = (median(&stats_cpu), median(&bare_cpu));
    // From CPU times: the wall-clock difference of two passes on a shared
    // machine is mostly noise.
    let hook_ns = (st_cpu.as_secs_f64() - bare_c.as_secs_f64()) * 1e9 / counted.max(1) as f64;
    writeln!(
        out,
        "  single pass (one thread reading, {} decoding thread(s)): median {:.2} s wall = {:.2} M events/s, {:.2} s CPU = {:.2} M events/s (runs: {})",
        session.traceset().decode_threads(),
        st.as_secs_f64(),
        counted as f64 / st.as_secs_f64() / 1e6,
        st_cpu.as_secs_f64(),
        counted as f64 / st_cpu.as_secs_f64() / 1e6,
        secs(&stats_times),
    )?;
    writeln!(
        out,
        "  engine alone (read + state, counting hook, one thread reading): median {:.2} s wall = {:.2} M events/s, {:.2} s CPU = {:.2} M events/s; statistics hooks cost {hook_ns:.1} ns/event of CPU",
        bare.as_secs_f64(),
        counted as f64 / bare.as_secs_f64() / 1e6,
        bare_c.as_secs_f64(),
        counted as f64 / bare_c.as_secs_f64() / 1e6,
    )?;
    writeln!(out, "load average after: {}", load_average())?;
    out.flush()?;
    if ok {
        Ok(())
    } else {
        Err(BenchError::Failed("a target was missed (see above)".into()))
    }
}
