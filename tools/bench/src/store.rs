//! The analysis store rows of `traceloom-bench viewers` (issue #17's
//! table): after the benchmark's in-memory analysis, the store is written,
//! loaded back (mapped) and rendered from, each figure against its target.
//!
//! 1. cold analysis to a complete store: the pass just timed plus the
//!    store's write;
//! 2. warm open: loading the store (checksums, meta block, map) and the
//!    first full-range control flow render, after a first open has
//!    checked the whole store and recorded it (timed apart);
//! 3. full-range control flow render at [`WIDTH`] px from the mapped store
//!    (fresh model each run, median), of the rows the window renders (the
//!    busiest it can show, and a page either side) and, without a target,
//!    of every row (what exports draw);
//! 4. 1 ms window renders from the mapped store (median), the same two
//!    ways;
//! 5. heap beyond the maps: the analysis's data left on the heap (the
//!    pass moves its finished chunks to a spill file), the peak growth of
//!    anonymous resident memory during the pass, and its growth over
//!    loading the store and rendering from it;
//! 6. store size against the trace's;
//!
//! and, without a target, the time to read the statistics and histogram
//! alone (the store's meta block: what `traceloom stats` reads). Rows 2
//! and 3 and that one are timed `--runs` times, and at least
//! [`MIN_QUICK_RUNS`].
//!
//! Kept apart from `viewers`: the store's rows and their targets in one
//! place.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use traceloom_base::{Time, TimeRange};
use traceloom_viewers::model::steps::BlockSummary;
use traceloom_viewers::model::{ControlFlowModel, KernelData};
use traceloom_viewers::render::TimeGraphRender;
use traceloom_viewers::store::{self, identity::TracesetIdentity};

use crate::measure::{median, pass_fail, rss_anon_bytes};
use crate::sizes::{WIDTH, ZOOMS_PER_RUN, ZOOM_SPAN};
use crate::BenchError;

/// Cold analysis to a complete store, at most.
pub const COLD_TARGET: Duration = Duration::from_secs(5);
/// Store loaded and first full-range render, at most.
pub const WARM_OPEN_TARGET: Duration = Duration::from_millis(300);
/// Full-range control flow render from the store, at most.
pub const FULL_TARGET: Duration = Duration::from_millis(30);
/// Runs of the rows that take under a second (loads, opens, full-range
/// renders), at least: the median of three full-range renders moved by a
/// fifth between runs of the benchmark.
pub const MIN_QUICK_RUNS: u32 = 15;
/// 1 ms window render from the store, at most.
pub const WINDOW_TARGET: Duration = Duration::from_millis(5);
/// Heap beyond the maps after the analysis, at most, for a trace of up
/// to 1 GB.
pub const HEAP_TARGET: u64 = 250_000_000;
/// What the heap may grow by from a 1 GB to an 8 GB trace, at most: the
/// target for a trace of 8 GB or more is [`HEAP_TARGET`] plus this.
pub const HEAP_GROWTH_TO_8GB: u64 = 50_000_000;

/// The heap target for a trace of `trace_bytes`: [`HEAP_TARGET`] up to
/// 1 GB, rising linearly to [`HEAP_TARGET`] + [`HEAP_GROWTH_TO_8GB`] at
/// 8 GB (the 250 and 300 MB), and no further.
pub fn heap_target(trace_bytes: u64) -> u64 {
    const GB: u64 = 1 << 30;
    let beyond = trace_bytes.saturating_sub(GB).min(7 * GB);
    HEAP_TARGET + (HEAP_GROWTH_TO_8GB as u128 * beyond as u128 / (7 * GB) as u128) as u64
}
/// Store size as a share of the trace, at most.
pub const SIZE_TARGET: f64 = 0.10;

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn mb(b: u64) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}

/// What the benchmark measured of the pass.
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    /// Its wall time.
    pub time: Duration,
    /// The largest growth of anonymous resident memory while it ran
    /// (sampled every million events or so), if known.
    pub peak_growth: Option<u64>,
}

/// Rows a window shows: a 1,000-pixel graph of 20-pixel rows.
const SHOWN_ROWS: usize = 50;

/// The rows the window renders when it opens: the first [`SHOWN_ROWS`],
/// and a page below.
fn top_rows() -> Option<std::ops::Range<usize>> {
    Some(ControlFlowModel::rows_with_margin(0..SHOWN_ROWS))
}

/// The rows the window renders when it shows the [`SHOWN_ROWS`]
/// consecutive rows of `every_row` (a render of every row) that hold the
/// most intervals and events, a page either side: a user scrolled to where
/// the render is busiest. On a trace whose threads come and go (80,430
/// records on the 8 GB generated one), the rows in the middle of the tree
/// are mostly dead in a given millisecond.
fn busiest_rows(every_row: &TimeGraphRender) -> Option<std::ops::Range<usize>> {
    let n = every_row.tree().len();
    let items: Vec<usize> = (0..n)
        .map(|i| every_row.states(i).len() + every_row.events(i).len())
        .collect();
    let shown = SHOWN_ROWS.min(n);
    let mut sum: usize = items[..shown].iter().sum();
    let (mut best, mut first) = (sum, 0);
    for i in shown..n {
        sum = sum + items[i] - items[i - shown];
        if sum > best {
            (best, first) = (sum, i + 1 - shown);
        }
    }
    Some(ControlFlowModel::rows_with_margin(first..first + shown))
}

/// Runs the store rows for `data`, the analysis of the traces at
/// `identity` measured as `pass`, with the store in `dir`; returns
/// whether every target was met.
pub fn run(
    identity: &TracesetIdentity,
    data: &Arc<KernelData>,
    pass: Pass,
    dir: &Path,
    runs: u32,
    out: &mut dyn Write,
) -> Result<bool, BenchError> {
    let mut ok = true;
    let err = |e: store::StoreError| BenchError::Failed(e.to_string());

    // 1. Cold: the pass plus the write.
    let t0 = Instant::now();
    let (path, bytes) = store::save(dir, identity, data).map_err(err)?;
    let write = t0.elapsed();
    let written_at = Instant::now();
    let pass_time = pass.time;
    let peak_growth = pass.peak_growth;
    let cold = pass_time + write;
    let pass = cold <= COLD_TARGET;
    ok &= pass;
    writeln!(
        out,
        "store: cold analysis to complete store: {:.2} s (pass {:.2} s + write {:.2} s) (target <= {:.0} s) {}",
        cold.as_secs_f64(),
        pass_time.as_secs_f64(),
        write.as_secs_f64(),
        COLD_TARGET.as_secs_f64(),
        pass_fail(pass)
    )?;

    // 6. Size.
    let trace_bytes = identity.total_bytes().max(1);
    let share = bytes as f64 / trace_bytes as f64;
    let pass = share <= SIZE_TARGET;
    ok &= pass;
    writeln!(
        out,
        "store: size {} = {:.1} % of the trace's {} ({}) (target <= {:.0} %) {}",
        mb(bytes),
        share * 100.0,
        mb(trace_bytes),
        path.display(),
        SIZE_TARGET * 100.0,
        pass_fail(pass)
    )?;

    // Where the bytes go (packed columns and summaries).
    let (mut times, mut codes, mut summaries, mut marks) = (0usize, 0usize, 0usize, 0usize);
    for t in &data.threads {
        times += t.times.packed_bytes();
        codes += t.codes.packed_bytes();
        summaries += t.blocks.len() * std::mem::size_of::<BlockSummary>();
        marks += t.marks.packed_bytes();
    }
    for c in &data.cpus {
        times += c.times.packed_bytes();
        codes += c.threads.packed_bytes() + c.modes.packed_bytes();
        // The counts of changes before each listed one go with the times.
        times += c.implied.as_ref().map_or(0, |i| i.before.packed_bytes());
        summaries += c.blocks.len() * std::mem::size_of::<BlockSummary>();
    }
    for l in &data.lines {
        times += l.times.packed_bytes();
        codes += l.codes.packed_bytes() + l.cpus.packed_bytes();
        summaries += l.blocks.len() * std::mem::size_of::<BlockSummary>();
    }
    let arrows = data.wakeups.packed_bytes() + data.switches.packed_bytes();
    writeln!(
        out,
        "store: of which change times {}, codes and thread records {}, block summaries {}, drawn events {}, arrows {}",
        mb(times as u64),
        mb(codes as u64),
        mb(summaries as u64),
        mb(marks as u64),
        mb(arrows as u64)
    )?;

    // The statistics and histogram alone (what `stats` reads).
    let summaries = (0..runs.max(MIN_QUICK_RUNS))
        .map(|_| {
            let t0 = Instant::now();
            store::load_summary(dir, identity).map(|s| {
                std::hint::black_box(s);
                t0.elapsed()
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    writeln!(
        out,
        "store: statistics and histogram from the store (header and meta block): median {}",
        ms(median(&summaries))
    )?;

    // 2. Warm open, and the heap it takes (5.). A user reopens a trace
    // later than a second after its store was written: the first open
    // then checks the whole store and records that it held, and the
    // opens after it read that record instead (`store::verified`). The
    // first open is timed on its own.
    let since_write = written_at.elapsed();
    if let Some(wait) = store::verified::SETTLED.checked_sub(since_write) {
        std::thread::sleep(wait + Duration::from_millis(50));
    }
    let rss0 = rss_anon_bytes();
    let t1 = Instant::now();
    let first = store::load(dir, identity).map_err(err)?;
    let first_load = t1.elapsed();
    drop(first);
    writeln!(
        out,
        "store: first open after the write (the whole store checked): load {}",
        ms(first_load)
    )?;
    let mut opens = Vec::new();
    let mut loads = Vec::new();
    let mut loaded = None;
    for _ in 0..runs.max(MIN_QUICK_RUNS) {
        let t0 = Instant::now();
        let l = store::load(dir, identity).map_err(err)?;
        loads.push(t0.elapsed());
        let d = Arc::new(l.data);
        let (b, e) = d.span;
        let m = ControlFlowModel::new(d.clone());
        let r = std::hint::black_box(m.render_rows_with(
            m.config(),
            TimeRange::new(b, e),
            WIDTH,
            top_rows(),
        ));
        opens.push(t0.elapsed());
        // Renders are dropped after the clock stops: a view drops the one
        // it replaces off the main loop.
        drop((r, m));
        loaded = Some(d);
    }
    let loaded = loaded.expect("at least one run");
    if *loaded != **data {
        return Err(BenchError::Failed(
            "the loaded store differs from the analysis".into(),
        ));
    }
    let open = median(&opens);
    let pass = open <= WARM_OPEN_TARGET;
    ok &= pass;
    writeln!(
        out,
        "store: warm open (load {}, its check recorded by the first open + model + first full-range render of the rows the window opens on): median {} (target <= {}) {}",
        ms(median(&loads)),
        ms(open),
        ms(WARM_OPEN_TARGET),
        pass_fail(pass)
    )?;

    // 3. Full-range renders from the mapped store.
    let (begin, end) = loaded.span;
    let full = TimeRange::new(begin, end);
    let (mut fulls, mut every_row) = (Vec::new(), Vec::new());
    let mut shown = None;
    for _ in 0..runs.max(MIN_QUICK_RUNS) {
        // Alternated: every row's render, then the window's (the busiest
        // rows it can show, and a page either side), each on a fresh
        // model.
        let m = ControlFlowModel::new(loaded.clone());
        let t0 = Instant::now();
        let all = std::hint::black_box(m.render(full, WIDTH));
        every_row.push(t0.elapsed());
        let rows = busiest_rows(&all);
        drop(all);
        let m = ControlFlowModel::new(loaded.clone());
        let t0 = Instant::now();
        let r = std::hint::black_box(m.render_rows_with(m.config(), full, WIDTH, rows.clone()));
        fulls.push(t0.elapsed());
        drop(r);
        shown = rows;
    }
    let f = median(&fulls);
    let pass = f <= FULL_TARGET;
    ok &= pass;
    writeln!(
        out,
        "store: control flow full-range render at {WIDTH} px from the store, the rows of a window (the busiest {SHOWN_ROWS}, a page either side: rows {:?}): median {} (target <= {}) {}",
        shown.unwrap_or_default(),
        ms(f),
        ms(FULL_TARGET),
        pass_fail(pass)
    )?;
    writeln!(
        out,
        "store: control flow full-range render at {WIDTH} px from the store, every row (what exports draw): median {}",
        ms(median(&every_row)),
    )?;

    // 4. Window renders from the mapped store: every row's (what an
    // export of the window draws), then the window's, of the busiest rows
    // of that window.
    let m = ControlFlowModel::new(loaded.clone());
    let room = (end - begin - ZOOM_SPAN).max(1) as u64;
    let mut x = 0x005e_ed17_u64;
    let (mut windows, mut every_row) = (Vec::new(), Vec::new());
    let mut drawn = 0;
    for _ in 0..runs as usize * ZOOMS_PER_RUN {
        // A multiplicative congruential walk: deterministic places.
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let s = begin + ((x >> 11) % room) as Time;
        let range = TimeRange::new(s, s + ZOOM_SPAN);
        let t0 = Instant::now();
        let all = std::hint::black_box(m.render(range, WIDTH));
        every_row.push(t0.elapsed());
        let rows = busiest_rows(&all);
        drop(all);
        let t0 = Instant::now();
        let r = std::hint::black_box(m.render_rows_with(m.config(), range, WIDTH, rows));
        windows.push(t0.elapsed());
        drawn += r.materialized().map(|i| r.states(i).len()).sum::<usize>();
    }
    let w = median(&windows);
    let pass = w <= WINDOW_TARGET;
    ok &= pass;
    writeln!(
        out,
        "store: control flow 1 ms window at {WIDTH} px from the store, the rows of a window (the busiest {SHOWN_ROWS}, a page either side; {:.0} intervals drawn on average): median {} over {} windows, worst {} (target <= {}) {}",
        drawn as f64 / windows.len().max(1) as f64,
        ms(w),
        windows.len(),
        ms(windows.iter().max().copied().unwrap_or_default()),
        ms(WINDOW_TARGET),
        pass_fail(pass)
    )?;
    writeln!(
        out,
        "store: control flow 1 ms window at {WIDTH} px from the store, every row (what exports draw): median {}, worst {}",
        ms(median(&every_row)),
        ms(every_row.iter().max().copied().unwrap_or_default()),
    )?;
    drop(m);

    // 5. Heap.
    let rss1 = rss_anon_bytes();
    let grew = match (rss0, rss1) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    let in_memory = data.heap_bytes() as u64;
    let heap_target = heap_target(trace_bytes);
    let pass_mem = in_memory <= heap_target;
    let pass_loaded = grew <= heap_target;
    ok &= pass_mem && pass_loaded;
    writeln!(
        out,
        "store: heap beyond maps after the analysis: {} of change lists (the rest is in the spill file) (target <= {}) {}",
        mb(in_memory),
        mb(heap_target),
        pass_fail(pass_mem)
    )?;
    if let Some(g) = peak_growth {
        let pass_peak = g <= heap_target;
        ok &= pass_peak;
        writeln!(
            out,
            "store: heap beyond maps during the analysis: RssAnon peak growth {} (target <= {}) {}",
            mb(g),
            mb(heap_target),
            pass_fail(pass_peak)
        )?;
    }
    writeln!(
        out,
        "store: heap beyond maps with the store loaded and rendered from: RssAnon grew by {} ({} of change lists on the heap; the allocator reuses what the in-memory pass freed, so only a growth is meaningful) (target <= {}) {}",
        mb(grew),
        mb(loaded.heap_bytes() as u64),
        mb(heap_target),
        pass_fail(pass_loaded)
    )?;
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_target_rises_from_1_to_8_gb_and_no_further() {
        const GB: u64 = 1 << 30;
        assert_eq!(heap_target(100 << 20), 250_000_000);
        assert_eq!(heap_target(GB), 250_000_000);
        assert_eq!(heap_target(GB + 7 * GB / 2), 275_000_000);
        assert_eq!(heap_target(8 * GB), 300_000_000);
        assert_eq!(heap_target(20 * GB), 300_000_000);
    }
}
