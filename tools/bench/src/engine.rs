//! `traceloom-bench engine`: the traceset engine's performance targets on a
//! (generated) kernel trace — state computation with checkpoints, seeking
//! to a random time and delivering the next 50 events, a cold
//! `traceloom dump --begin T` process printing 50 lines, and the size of
//! the checkpoint cache.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint::{self, DEFAULT_INTERVAL};
use traceloom_engine::request::{
    Budget, EventsRequest, OwnerId, Scheduler, SchedulerConfig, Start,
};
use traceloom_engine::source::{CtfCurrent, CtfPosition, CtfSource};
use traceloom_engine::state::{self, TracesetState};
use traceloom_hooks::{Flow, HookContext, Priority};

use crate::measure::{median, pass_fail};
use crate::BenchError;

/// Arguments of `traceloom-bench engine`.
#[derive(Debug, Clone, Args)]
pub struct EngineBenchArgs {
    /// CTF trace directories (a generated kernel trace of ~1 GB for the
    /// issue's targets: `traceloom-kernelgen OUT --max-bytes 1GiB`).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Random seeks to time.
    #[arg(long, default_value_t = 200)]
    pub seeks: u32,
    /// Cold `dump --begin` processes to time.
    #[arg(long, default_value_t = 11)]
    pub cold_runs: u32,
    /// Events between checkpoints.
    #[arg(long, default_value_t = DEFAULT_INTERVAL)]
    pub interval: u64,
    /// The `traceloom` binary for the cold `dump --begin` runs; default:
    /// the one beside this benchmark's binary (`cargo build --release`
    /// builds both into `target/release/`).
    #[arg(long, value_name = "PROGRAM")]
    pub traceloom: Option<PathBuf>,
}

/// The `traceloom` binary to time: `given`, or the one beside this
/// process's executable.
fn traceloom_binary(given: Option<&PathBuf>) -> Result<PathBuf, BenchError> {
    if let Some(p) = given {
        return Ok(p.clone());
    }
    let exe = std::env::current_exe().map_err(|e| BenchError::Failed(e.to_string()))?;
    let beside = exe.with_file_name("traceloom");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(BenchError::Failed(format!(
            "no traceloom binary at {}: build it (cargo build --release -p traceloom) or pass --traceloom PROGRAM",
            beside.display()
        )))
    }
}

/// A small deterministic generator for the random seek times.
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

type Delivered = Vec<CtfPosition>;

/// Runs the engine benchmark and prints its figures with PASS/FAIL against
/// the targets of the traceset-engine issue.
pub fn run(args: &EngineBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let ts = Arc::new(Traceset::open(&args.paths).map_err(|e| BenchError::Trace(e.to_string()))?);
    let bytes = ts.total_bytes();
    writeln!(out, "trace: {} MB of stream data", bytes / 1_000_000)?;

    // 1. State computation with checkpoints (the LOW-priority pass).
    let t0 = Instant::now();
    let mut built = checkpoint::build(ts.clone(), args.interval);
    let state_time = t0.elapsed();
    // What `load_or_build` stores: thinned to the cache budget if needed.
    checkpoint::fit_to_budget(&mut built, (bytes as f64 * checkpoint::CACHE_BUDGET) as u64);
    let cps = &built.states;
    let events = {
        let mut src = CtfSource::new(ts.clone());
        let last = cps.last().map_or(0, |c| c.rank);
        checkpoint::seek_rank(&mut src, cps, last);
        let mut n = last;
        while traceloom_engine::request::EventSource::current(&src).is_some() {
            traceloom_engine::request::EventSource::advance(&mut src);
            n += 1;
        }
        n
    };
    let state_rate = events as f64 / state_time.as_secs_f64();
    writeln!(
        out,
        "state + checkpoints: {events} events in {:.2} s = {:.2} M events/s (target >= 10) {}",
        state_time.as_secs_f64(),
        state_rate / 1e6,
        pass_fail(state_rate >= 10e6)
    )?;

    // Cache size.
    let dir = std::env::temp_dir().join(format!("traceloom-bench-{}", std::process::id()));
    let fp = checkpoint::fingerprint(&ts);
    let path = checkpoint::cache_path(&dir, fp);
    checkpoint::store(&path, fp, &built).map_err(|e| BenchError::Failed(e.to_string()))?;
    let cache = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    // What a later session pays before its first seek: reading the file,
    // inflating it and applying every delta.
    let t0 = Instant::now();
    let loaded = checkpoint::load(&path, fp).map_err(|e| BenchError::Failed(e.to_string()));
    let load_time = t0.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    if loaded?.states.len() != built.states.len() {
        return Err(BenchError::Failed("the cache read back differs".into()));
    }
    let ratio = cache as f64 / bytes.max(1) as f64;
    writeln!(
        out,
        "checkpoint cache: {} checkpoints (one per {} events) and {} seek-index marks, {} KB = {:.3}% of the trace (target < 1%) {}",
        cps.len(),
        events / cps.len().max(1) as u64,
        built.seek_index.len(),
        cache / 1000,
        ratio * 100.0,
        pass_fail(ratio < 0.01)
    )?;
    writeln!(
        out,
        "checkpoint cache load (inflate + apply the deltas): {:.0} ms",
        load_time.as_secs_f64() * 1e3
    )?;

    // 2. Random seeks: a request at a random time for 50 events, serviced
    //    by a scheduler that has the checkpoints. Two kinds: an event list
    //    (the request does not read the state: a direct seek) and a
    //    request reading the state (checkpoint restore and replay).
    let (begin, end) = ts
        .time_range_ns()
        .ok_or_else(|| BenchError::Failed("empty trace".into()))?;
    let traces = ts.traces().len();
    let mut source = CtfSource::new(ts.clone());
    source.set_seek_index(Arc::new(built.seek_index.clone()));
    let mut sched: Scheduler<CtfSource, TracesetState, Delivered> = Scheduler::new(
        source,
        state::computation(traces),
        SchedulerConfig {
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    );
    sched.add_checkpoints(cps.iter().map(|c| (c.position, c.state.clone())));
    let mut rng = SplitMix(0x5eed);
    for (needs_state, what) in [
        (false, "without state (event list)"),
        (true, "with state (restore + replay)"),
    ] {
        let before = sched.stats();
        let mut times = Vec::new();
        for i in 0..args.seeks {
            let t = begin + (rng.next() % (end - begin).max(1) as u64) as i64;
            let mut req: EventsRequest<CtfSource, TracesetState, Delivered> =
                EventsRequest::new(OwnerId(i as u64), Start::Time(t), Vec::new());
            req.num_events = Some(50);
            req.priority = Priority::HIGH;
            req.needs_state = needs_state;
            req.event.add(
                Priority::DEFAULT,
                |ctx: &mut HookContext<'_, CtfCurrent, CtfPosition, TracesetState, Delivered>| {
                    ctx.data.push(*ctx.position);
                    Flow::Continue
                },
            );
            let t0 = Instant::now();
            sched.add(req);
            let mut got = 0;
            while !sched.is_idle() {
                got += sched
                    .service(Budget::unlimited(), || false)
                    .completed
                    .iter()
                    .map(|c| c.data.len())
                    .sum::<usize>();
            }
            times.push(t0.elapsed());
            if got == 0 && t < end {
                return Err(BenchError::Failed(format!("seek to {t} delivered nothing")));
            }
        }
        let seek = median(&times);
        let replayed = sched.stats().replayed_events - before.replayed_events;
        writeln!(
            out,
            "seek to a random time + next 50 events, {what}: median {:.3} ms over {} seeks, worst {:.3} ms, {} events replayed per seek (target median <= 1 ms) {}",
            seek.as_secs_f64() * 1e3,
            args.seeks,
            times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
            replayed / u64::from(args.seeks.max(1)),
            pass_fail(seek <= Duration::from_millis(1))
        )?;
    }

    // 3. A cold process: `traceloom dump --begin T`, until 50 lines.
    let exe = traceloom_binary(args.traceloom.as_ref())?;
    let mut cold = Vec::new();
    for _ in 0..args.cold_runs {
        let t = begin + (rng.next() % (end - begin).max(1) as u64) as i64;
        let spec = format!(
            "{}.{:09}",
            t.div_euclid(1_000_000_000),
            t.rem_euclid(1_000_000_000)
        );
        let t0 = Instant::now();
        let mut child = Command::new(&exe)
            .args(["dump", "--clock-gmt", "--begin", &spec])
            .args(&args.paths)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| BenchError::Failed(e.to_string()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let lines = BufReader::new(stdout).lines().take(50).count();
        let _ = child.kill();
        let _ = child.wait();
        cold.push(t0.elapsed());
        if lines < 50 && t < end - (end - begin) / 100 {
            return Err(BenchError::Failed(format!(
                "cold dump at {spec} printed {lines} lines"
            )));
        }
    }
    let cold = median(&cold);
    writeln!(
        out,
        "cold `traceloom dump --begin T` printing 50 lines: median {:.1} ms over {} runs (target <= 50 ms) {}",
        cold.as_secs_f64() * 1e3,
        args.cold_runs,
        pass_fail(cold <= Duration::from_millis(50))
    )?;
    Ok(())
}
