//! Profiling driver (not a benchmark with targets: see `traceloom-bench
//! engine`): times the layers of the state pass separately on one trace —
//! the merged decode alone, the [`CtfSource`] walk, and the checkpoint pass
//! (state hooks through the scheduler).
//!
//! `cargo run --release -p traceloom-engine --example engine_profile -- PATH [decode|source|state|seek|seekindex|all]`
//!
//! `seek` loads (or builds and caches) the checkpoints in the XDG cache,
//! then times random seeks + 50 events without and with the state.
//! `seekindex` builds the seek index alone and prints its size per mark
//! and the time of a lookup of a random time in every stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use traceloom_ctf::Traceset;
use traceloom_engine::checkpoint;
use traceloom_engine::request::{
    Budget, EventSource, EventsRequest, OwnerId, Scheduler, SchedulerConfig, Start,
};
use traceloom_engine::seek_index::{self, SeekIndexBuilder};
use traceloom_engine::source::{CtfCurrent, CtfPosition, CtfSource};
use traceloom_engine::state::{self, TracesetState};
use traceloom_hooks::{Flow, HookContext, Priority};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: engine_profile PATH [decode|source|state|seek|seekindex|all]");
    let what = args.get(1).map_or("all", String::as_str);
    let ts = Arc::new(Traceset::open(&[path.into()]).expect("open the trace"));
    if matches!(what, "decode" | "all") {
        let t0 = Instant::now();
        let mut cursor = ts.messages();
        let mut n = 0u64;
        while let Some(m) = cursor.next() {
            let _ = m;
            n += 1;
        }
        report("merged decode", n, t0);
    }
    if matches!(what, "source" | "all") {
        let t0 = Instant::now();
        let mut src = CtfSource::new(ts.clone());
        let mut n = 0u64;
        while src.current().is_some() {
            src.advance();
            n += 1;
        }
        report("CtfSource walk", n, t0);
    }
    if matches!(what, "state" | "all") {
        let t0 = Instant::now();
        let cps = checkpoint::build(ts.clone(), checkpoint::DEFAULT_INTERVAL);
        let n = cps.states.last().map_or(0, |c| c.rank);
        report("state + checkpoints (to last checkpoint)", n, t0);
    }
    if matches!(what, "seek" | "all") {
        seeks(&ts);
    }
    if matches!(what, "seekindex" | "all") {
        seek_index(&ts);
    }
}

/// The seek index's size (bytes a mark, while built and once finished)
/// and the time of a lookup in every stream.
fn seek_index(ts: &Arc<Traceset>) {
    use traceloom_ctf::Message;
    let t0 = Instant::now();
    let mut builder = SeekIndexBuilder::new(seek_index::DEFAULT_EVERY);
    let mut messages = ts.messages();
    while let Some(m) = messages.next() {
        if let Ok(Message::Event(e)) = m {
            builder.observe(&e);
        }
    }
    let index = builder.finish();
    let marks = index.len().max(1) as f64;
    println!(
        "seek index: {} marks in {:.2} s, {} B ({:.2} B a mark)",
        index.len(),
        t0.elapsed().as_secs_f64(),
        index.heap_bytes(),
        index.heap_bytes() as f64 / marks
    );
    let (begin, end) = ts.time_range_ns().expect("events");
    let span = (end - begin).max(1) as u64;
    let lookups = 100_000u64;
    let t0 = Instant::now();
    let mut fold = 0u64;
    for i in 0..lookups {
        // A spread of times without a random number crate.
        let t = begin + (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % span) as i64;
        let starts = index.starts(ts, t);
        fold = starts
            .positions
            .iter()
            .fold(fold, |f, p| f.wrapping_add(p.packet as u64 + p.event_index));
    }
    println!(
        "a start in every stream (packet index and seek index): {:.0} ns (fold {fold})",
        t0.elapsed().as_secs_f64() * 1e9 / lookups as f64
    );
}

type Delivered = Vec<CtfPosition>;

fn seeks(ts: &Arc<Traceset>) {
    let dir = checkpoint::cache_dir().expect("a cache directory");
    let t0 = Instant::now();
    let (cps, outcome) = checkpoint::load_or_build(ts, &dir, checkpoint::DEFAULT_INTERVAL);
    println!(
        "{} checkpoints ({outcome:?}) in {:.2} s",
        cps.states.len(),
        t0.elapsed().as_secs_f64()
    );
    let (begin, end) = ts.time_range_ns().expect("events");
    let mut source = CtfSource::new(ts.clone());
    if std::env::var_os("NO_SEEK_INDEX").is_none() {
        source.set_seek_index(Arc::new(cps.seek_index.clone()));
    }
    let mut sched: Scheduler<CtfSource, TracesetState, Delivered> = Scheduler::new(
        source,
        state::computation(ts.traces().len()),
        SchedulerConfig {
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        },
    );
    sched.add_checkpoints(cps.states.iter().map(|c| (c.position, c.state.clone())));
    let mut x = 0x5eed_u64;
    for needs_state in [false, true] {
        let before = sched.stats();
        let mut times = Vec::new();
        for i in 0..100 {
            // xorshift: any spread of times will do.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = begin + (x % (end - begin).max(1) as u64) as i64;
            let mut req: EventsRequest<CtfSource, TracesetState, Delivered> =
                EventsRequest::new(OwnerId(i), Start::Time(t), Vec::new());
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
            while !sched.is_idle() {
                sched.service(Budget::unlimited(), || false);
            }
            times.push(t0.elapsed());
        }
        times.sort();
        let replayed = sched.stats().replayed_events - before.replayed_events;
        println!(
            "seek + 50, needs_state {needs_state}: median {:.3} ms, p90 {:.3} ms, {} replayed per seek",
            ms(times[50]),
            ms(times[90]),
            replayed / 100
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(what: &str, n: u64, t0: Instant) {
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{what}: {n} events in {s:.2} s = {:.2} M/s",
        n as f64 / s / 1e6
    );
}
