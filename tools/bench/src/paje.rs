//! `traceloom-bench paje TRACE [--runs N]`: the Pajé reading benchmark.
//!
//! In one run of the command, on the same file, `N` times each
//! (interleaved, so that a change of load on the machine affects both
//! alike), and reports the medians:
//!
//! 1. `pj_dump TRACE > /dev/null` as a subprocess (wall time): pajeng's
//!    reader, simulator and dump;
//! 2. traceloom's full read and simulation, in this process: map the file,
//!    read every line, simulate, and fold every completed entity (every
//!    field of every state, event, variable piece and link, and every
//!    container created or destroyed) into a checksum ([`FoldSink`]), so
//!    that nothing can be skipped; the checksum and counts must be the same
//!    in every run;
//! 3. resident memory beyond the mapped file: the process's `RssAnon`
//!    (anonymous resident memory; the mapped trace is file-backed and not
//!    counted there) at its peak during each read, sampled every 65,536
//!    entities and at the end, minus its value just before the file was
//!    opened (after handing freed heap back to the system, so that a
//!    previous run's memory cannot hide this one's); the largest of all
//!    runs, an untimed first run included.
//!
//! It prints both times, their ratio and the memory, each with PASS or FAIL
//! against the targets ([`RATIO_TARGET`], [`RSS_MB_TARGET`]); a missed
//! target, a failing pj_dump, diagnostics on the trace or runs that
//! disagree make the command fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use traceloom_paje::{
    stream_file, ContainerId, EntitySink, EventRecord, LinkRecord, LoadOptions, StateRecord,
    VariableRecord,
};

use crate::checksum::Checksum;
use crate::measure::{
    conclude, cpu_time, list, load_average, median, rss_anon_bytes, secs, verdict,
};
use crate::BenchError;

/// traceloom's read over `pj_dump`'s, in speed (pj_dump's time over
/// traceloom's), at least.
pub const RATIO_TARGET: f64 = 10.0;
/// Resident memory beyond the mapped file during the read, in MB (10^6
/// bytes), less than.
pub const RSS_MB_TARGET: f64 = 200.0;

/// Entities between two samples of the resident memory.
const RSS_SAMPLE_EVERY: u64 = 1 << 16;

/// Arguments of `traceloom-bench paje`.
#[derive(Debug, Clone, Args)]
pub struct PajeBenchArgs {
    /// The Pajé trace (a single file, or the main file of a multi-file
    /// trace).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// How many times each measurement is taken (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// The pj_dump program to compare with.
    #[arg(long, default_value = "pj_dump", value_name = "PROGRAM")]
    pub pj_dump: PathBuf,
}

/// An [`EntitySink`] folding every entity into a checksum and counting
/// them, sampling the resident memory as it goes.
#[derive(Debug, Default)]
pub struct FoldSink {
    sum: Checksum,
    /// States received.
    pub states: u64,
    /// Events received.
    pub events: u64,
    /// Variable pieces received.
    pub variables: u64,
    /// Links received.
    pub links: u64,
    /// Containers created.
    pub containers: u64,
    /// Containers destroyed.
    pub destroyed: u64,
    /// Peak `RssAnon` seen by the samples, when sampling.
    pub rss_peak: Option<u64>,
}

impl FoldSink {
    /// A sink that samples `RssAnon` every [`RSS_SAMPLE_EVERY`] entities
    /// when `sample_rss`.
    pub fn new(sample_rss: bool) -> FoldSink {
        FoldSink {
            rss_peak: if sample_rss { rss_anon_bytes() } else { None },
            ..FoldSink::default()
        }
    }

    /// Entities received (containers excluded).
    pub fn entities(&self) -> u64 {
        self.states + self.events + self.variables + self.links
    }

    /// The checksum so far.
    pub fn checksum(&self) -> u64 {
        self.sum.get()
    }

    #[inline]
    fn counted(&mut self) {
        // A power of two: a mask instead of a division.
        if self.entities() & (RSS_SAMPLE_EVERY - 1) == 0 {
            self.sample();
        }
    }

    fn sample(&mut self) {
        if let (Some(p), Some(now)) = (self.rss_peak.as_mut(), rss_anon_bytes()) {
            *p = (*p).max(now);
        }
    }

    #[inline]
    fn place(&mut self, tag: u64, c: ContainerId, t: u32, seq: u32) {
        self.sum.word(tag);
        self.sum.word(u64::from(c.0) << 32 | u64::from(t));
        self.sum.word(u64::from(seq));
    }
}

fn container(c: Option<ContainerId>) -> u64 {
    c.map_or(u64::MAX, |c| u64::from(c.0))
}

impl EntitySink for FoldSink {
    fn state(&mut self, r: &StateRecord) {
        self.place(1, r.container, r.type_id.0, r.seq);
        self.sum.word(r.start.to_bits());
        self.sum.word(r.end.to_bits());
        self.sum
            .word(u64::from(r.imbrication) << 32 | u64::from(r.value.0));
        self.states += 1;
        self.counted();
    }

    fn event(&mut self, r: &EventRecord) {
        self.place(2, r.container, r.type_id.0, r.seq);
        self.sum.word(r.time.to_bits());
        self.sum.word(u64::from(r.value.0));
        self.events += 1;
        self.counted();
    }

    fn variable(&mut self, r: &VariableRecord) {
        self.place(3, r.container, r.type_id.0, r.seq);
        self.sum.word(r.start.to_bits());
        self.sum.word(r.end.to_bits());
        self.sum.word(r.value.to_bits());
        self.variables += 1;
        self.counted();
    }

    fn link(&mut self, r: &LinkRecord<'_>) {
        self.place(4, r.container, r.type_id.0, r.seq);
        self.sum.word(r.start.to_bits());
        self.sum.word(r.end.to_bits());
        self.sum.word(u64::from(r.value.0));
        self.sum.word(container(r.start_container));
        self.sum.word(container(r.end_container));
        self.sum.bytes(r.key);
        self.links += 1;
        self.counted();
    }

    fn container_created(&mut self, c: ContainerId) {
        self.sum.word(5 << 32 | u64::from(c.0));
        self.containers += 1;
    }

    fn container_destroyed(&mut self, c: ContainerId) {
        self.sum.word(6 << 32 | u64::from(c.0));
        self.destroyed += 1;
    }
}

/// What one read of the trace saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PajeRun {
    /// Event lines read.
    pub lines: u64,
    /// States, events, variable pieces and links.
    pub counts: [u64; 4],
    /// Containers created and destroyed.
    pub containers: (u64, u64),
    /// Errors and warnings found.
    pub diagnostics: (u64, u64),
    /// The first diagnostic, if any.
    pub first_diagnostic: Option<String>,
    /// Checksum of every entity.
    pub checksum: u64,
    /// Peak anonymous resident memory above the level before opening, in
    /// bytes (`None` where `/proc/self/status` has no `RssAnon`).
    pub rss_peak_bytes: Option<u64>,
}

/// Gives freed heap back to the system, so that `RssAnon` shows what is
/// in use rather than what the allocator kept from earlier runs.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's heap.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Reads and simulates the trace at `path` as `pj_dump` does, folding every
/// entity into a checksum and sampling the resident memory.
pub fn read_once(path: &Path) -> Result<PajeRun, BenchError> {
    trim_heap();
    let rss_before = rss_anon_bytes();
    let mut sink = FoldSink::new(rss_before.is_some());
    let o = stream_file(path, &LoadOptions::pj_dump(), &mut sink)
        .map_err(|e| BenchError::Trace(e.to_string()))?;
    sink.sample();
    // The model is the rest of the result: fold its size too.
    sink.sum.word(o.model.containers().len() as u64);
    sink.sum.word(o.model.values().len() as u64);
    sink.sum.word(o.model.types().len() as u64);
    Ok(PajeRun {
        lines: o.events_read,
        counts: [sink.states, sink.events, sink.variables, sink.links],
        containers: (sink.containers, sink.destroyed),
        diagnostics: (o.diagnostics.error_count(), o.diagnostics.warning_count()),
        first_diagnostic: o.diagnostics.items().first().map(|d| d.to_string()),
        checksum: sink.checksum(),
        rss_peak_bytes: sink
            .rss_peak
            .zip(rss_before)
            .map(|(p, b)| p.saturating_sub(b)),
    })
}

/// Peak resident memory of the largest waited-for child so far, in bytes.
fn children_max_rss() -> Option<u64> {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return None;
    }
    // Linux reports ru_maxrss in KiB.
    Some(ru.ru_maxrss as u64 * 1024)
}

/// Runs `pj_dump TRACE > /dev/null`; returns its wall and CPU times. A
/// failure of pj_dump is an error.
fn run_pj_dump(program: &Path, trace: &Path) -> Result<(Duration, Duration), BenchError> {
    let cpu0 = cpu_time(libc::RUSAGE_CHILDREN);
    let t = Instant::now();
    let o = Command::new(program)
        .arg(trace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BenchError::Failed(format!("cannot run {}: {e}", program.display())))?;
    let wall = t.elapsed();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu0);
    if !o.status.success() {
        return Err(BenchError::Failed(format!(
            "{} {} failed ({}): {}",
            program.display(),
            trace.display(),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim_end()
        )));
    }
    Ok((wall, cpu))
}

/// `traceloom-bench paje`: measures and prints; fails when a target is
/// missed or the measurements disagree.
pub fn run(args: &PajeBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let runs = args.runs as usize;
    let trace = &args.trace;
    let bytes = std::fs::metadata(trace)
        .map_err(|e| BenchError::Trace(format!("{}: {e}", trace.display())))?
        .len();
    writeln!(
        out,
        "traceloom-bench paje: {} ({:.1} MB); {runs} run(s) of each, interleaved, medians; load average {}",
        trace.display(),
        bytes as f64 / 1e6,
        load_average()
    )?;
    out.flush()?;

    // An untimed first read: the reference counts, and the file in the
    // page cache for both readers.
    let reference = read_once(trace)?;
    let mut problems: Vec<String> = Vec::new();
    let mut reads = vec![reference.clone()];
    let (mut pj_wall, mut pj_cpu) = (Vec::new(), Vec::new());
    let (mut tl_wall, mut tl_cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, cpu) = run_pj_dump(&args.pj_dump, trace)?;
        pj_wall.push(wall);
        pj_cpu.push(cpu);
        let cpu0 = cpu_time(libc::RUSAGE_SELF);
        let t = Instant::now();
        let r = read_once(trace)?;
        tl_wall.push(t.elapsed());
        tl_cpu.push(cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu0));
        reads.push(r);
    }
    let key = |r: &PajeRun| (r.lines, r.counts, r.containers, r.diagnostics, r.checksum);
    if reads.iter().any(|r| key(r) != key(&reference)) {
        problems.push(format!(
            "the runs read different things (lines, entities, containers, diagnostics, checksum): {}",
            reads
                .iter()
                .map(|r| format!("{:?}", key(r)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(d) = &reference.first_diagnostic {
        problems.push(format!(
            "{} error(s) and {} warning(s) on the trace; the first: {d}",
            reference.diagnostics.0, reference.diagnostics.1
        ));
    }

    let pj_median = median(&pj_wall);
    let tl_median = median(&tl_wall);
    let ratio = pj_median.as_secs_f64() / tl_median.as_secs_f64();
    let rss = reads.iter().filter_map(|r| r.rss_peak_bytes).max();
    let mb = |b: u64| b as f64 / 1e6;
    writeln!(
        out,
        "pj_dump > /dev/null   median {} wall (runs: {}), {} CPU: {:.1} MB/s; peak RSS of a pj_dump run {}",
        secs(pj_median),
        list(&pj_wall),
        secs(median(&pj_cpu)),
        mb(bytes) / pj_median.as_secs_f64(),
        children_max_rss().map_or("unknown".into(), |b| format!("{:.0} MB", mb(b))),
    )?;
    let [states, events, variables, links] = reference.counts;
    writeln!(
        out,
        "traceloom read+sim    median {} wall (runs: {}), {} CPU: {:.1} MB/s, {:.2} M lines/s; {} lines, {states} states, {events} events, {variables} variable pieces, {links} links, {} containers; checksum {:#018x}",
        secs(tl_median),
        list(&tl_wall),
        secs(median(&tl_cpu)),
        mb(bytes) / tl_median.as_secs_f64(),
        reference.lines as f64 / tl_median.as_secs_f64() / 1e6,
        reference.lines,
        reference.containers.0,
        reference.checksum
    )?;
    let mut ok = true;
    let pass = ratio >= RATIO_TARGET;
    ok &= pass;
    // The verdict is on wall time; the CPU ratio shows how much of it the
    // load on the machine explains.
    let cpu_ratio = median(&pj_cpu).as_secs_f64() / median(&tl_cpu).as_secs_f64();
    verdict(
        out,
        "speed ratio",
        &format!("{ratio:.1}x pj_dump (CPU time: {cpu_ratio:.1}x)"),
        &format!(">= {RATIO_TARGET}x"),
        pass,
    )?;
    match rss {
        Some(r) => {
            let pass = mb(r) < RSS_MB_TARGET;
            ok &= pass;
            verdict(
                out,
                "memory beyond map",
                &format!(
                    "peak RssAnon {:.1} MB above the level before opening",
                    mb(r)
                ),
                &format!("< {RSS_MB_TARGET} MB"),
                pass,
            )?;
        }
        None => {
            ok = false;
            writeln!(out, "{:<22}RssAnon unavailable   FAIL", "memory beyond map")?;
        }
    }
    conclude(out, &problems, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "\
%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
%EventDef PajeCreateContainer 2\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n\
%EventDef PajeSetState 3\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n\
0 P 0 Process\n1 S P State\n2 0 p1 P 0 p1\n3 1 S p1 a\n3 2 S p1 b\n3 3 S p1 VALUE\n";

    #[test]
    fn reads_are_folded_and_repeatable() {
        let dir = std::env::temp_dir().join(format!("traceloom-bench-paje-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.trace");
        std::fs::write(&f, TRACE).unwrap();
        let a = read_once(&f).unwrap();
        let b = read_once(&f).unwrap();
        assert_eq!(a.counts, [3, 0, 0, 0]);
        assert_eq!(a.containers, (1, 2));
        assert_eq!(a.diagnostics, (0, 0));
        assert_eq!((a.checksum, a.lines), (b.checksum, b.lines));
        // Any change of an entity changes the checksum.
        std::fs::write(&f, TRACE.replace("3 2 S p1 b", "3 2.5 S p1 b")).unwrap();
        let c = read_once(&f).unwrap();
        assert_eq!(c.counts, a.counts);
        assert_ne!(c.checksum, a.checksum);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
