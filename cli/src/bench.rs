//! `traceloom bench decode PATH... [--runs N]`: the reading benchmark.
//!
//! In one run of the command, on the same traces, `N` times each
//! (interleaved, so that a change of load on the machine affects all of
//! them alike), and reports the medians:
//!
//! 1. `babeltrace2 -o dummy PATH...` as a subprocess (wall time; the event
//!    count comes from one extra, untimed `sink.utils.counter` run, which
//!    also brings the files into the page cache);
//! 2. traceloom's full decode, in this process: open the traces, read every
//!    message of the merged sequence, and fold every value of all six
//!    scopes of every event (and the bytes of every string) into a
//!    checksum ([`EventFolder`]), so that nothing can be skipped; the
//!    checksum must be the same in every run;
//! 3. building the packet index by scanning packet headers: the traces are
//!    opened through a mirror of their directories made of symbolic links
//!    that leaves out LTTng's `.idx` files, so that the reader has to walk
//!    every packet header and context itself; the time is the whole
//!    opening (discovery, metadata, mapping, scan), an upper bound of the
//!    scan alone. The packets found must be those of the normal opening;
//! 4. resident memory beyond the mapped files: the process's `RssAnon`
//!    (anonymous resident memory, which excludes mapped trace files) at its
//!    peak during each decode run, sampled every 65,536 messages and at the
//!    end, minus its value before the traces were opened; the largest of
//!    all runs.
//!
//! It prints both event rates and their ratio, the index rate and the
//! memory, each with PASS or FAIL against the targets ([`RATIO_TARGET`],
//! [`INDEX_GBPS_TARGET`], [`RSS_MB_TARGET`]); a missed target makes the
//! command fail.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use traceloom_ctf::event::{value_kind, Event, FieldValue, Message};
use traceloom_ctf::tsdl::ir::Scope;
use traceloom_ctf::Traceset;

use crate::CliError;

/// Events per second of traceloom's decode over those of
/// `babeltrace2 -o dummy`, at least.
pub const RATIO_TARGET: f64 = 20.0;
/// Packet index building rate, in GB/s (10^9 bytes of stream files per
/// second), at least.
pub const INDEX_GBPS_TARGET: f64 = 2.0;
/// Resident memory beyond the mapped files during the decode, in MB (10^6
/// bytes), less than.
pub const RSS_MB_TARGET: f64 = 100.0;

/// The scopes of a packet, the same for all its events.
const PACKET_SCOPES: [Scope; 2] = [Scope::PacketHeader, Scope::PacketContext];

/// Messages between two samples of the resident memory.
const RSS_SAMPLE_EVERY: u64 = 1 << 16;

/// Arguments of `traceloom bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub what: BenchCommand,
}

/// The benchmarks.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchCommand {
    /// Full decode against `babeltrace2 -o dummy`, packet index building,
    /// and memory.
    Decode(DecodeBenchArgs),
    /// State computation with checkpoints, seeks, a cold `dump --begin`,
    /// and the checkpoint cache size.
    Engine(crate::bench_engine::EngineBenchArgs),
    /// Pajé read and simulation against `pj_dump`, and memory.
    Paje(crate::bench_paje::PajeBenchArgs),
    /// Control flow and resources renders (full range, 1 ms windows),
    /// whole-trace statistics, and the analysis's memory.
    Viewers(crate::bench_viewers::ViewersBenchArgs),
}

/// Arguments of `traceloom bench decode`.
#[derive(Debug, Clone, Args)]
pub struct DecodeBenchArgs {
    /// CTF trace directories, or trees holding several traces.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// How many times each measurement is taken (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// The babeltrace2 program to compare with.
    #[arg(long, default_value = "babeltrace2", value_name = "PROGRAM")]
    pub babeltrace2: PathBuf,
}

/// An order-sensitive checksum of 64-bit words (Fletcher-style: two running
/// sums, one instruction of dependency per word, so that folding costs
/// little next to decoding). Decoded values ([`Checksum::value`]) go to
/// sums of their own in two lanes, kinds and payloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checksum {
    a: u64,
    b: u64,
    values: lanes::Lanes,
}

/// Fletcher sums in two 64-bit lanes, each sum taking one vector addition
/// per pair of words where vectors are part of the architecture's
/// baseline (SSE2 on x86-64): half the additions of folding the words one
/// by one, on the benchmark's hottest loop.
mod lanes {
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::{__m128i, _mm_add_epi64, _mm_set_epi64x, _mm_setzero_si128};

    /// The sums.
    #[cfg(target_arch = "x86_64")]
    #[derive(Clone, Copy)]
    pub struct Lanes {
        a: __m128i,
        b: __m128i,
    }

    #[cfg(target_arch = "x86_64")]
    impl Lanes {
        /// Folds `w[0]` into the first lane and `w[1]` into the second.
        #[inline(always)]
        pub fn fold(&mut self, w: [u64; 2]) {
            // SAFETY: SSE2 is part of the x86-64 baseline (every x86-64
            // processor has it), and these intrinsics touch no memory.
            unsafe {
                let v = _mm_set_epi64x(w[1] as i64, w[0] as i64);
                self.a = _mm_add_epi64(self.a, v);
                self.b = _mm_add_epi64(self.b, self.a);
            }
        }

        /// `[a, b]` of each lane.
        pub fn sums(&self) -> [[u64; 2]; 2] {
            // SAFETY: a vector of two 64-bit lanes is 16 bytes of plain
            // data, the first lane first (x86-64 is little-endian).
            let lane = |x: __m128i| unsafe { std::mem::transmute::<__m128i, [u64; 2]>(x) };
            let (a, b) = (lane(self.a), lane(self.b));
            [[a[0], b[0]], [a[1], b[1]]]
        }
    }

    #[cfg(target_arch = "x86_64")]
    impl Default for Lanes {
        fn default() -> Self {
            // SAFETY: as in `fold`.
            let zero = unsafe { _mm_setzero_si128() };
            Lanes { a: zero, b: zero }
        }
    }

    /// The sums.
    #[cfg(not(target_arch = "x86_64"))]
    #[derive(Clone, Copy, Default)]
    pub struct Lanes {
        a: [u64; 2],
        b: [u64; 2],
    }

    #[cfg(not(target_arch = "x86_64"))]
    impl Lanes {
        /// Folds `w[0]` into the first lane and `w[1]` into the second.
        #[inline(always)]
        pub fn fold(&mut self, w: [u64; 2]) {
            for i in 0..2 {
                self.a[i] = self.a[i].wrapping_add(w[i]);
                self.b[i] = self.b[i].wrapping_add(self.a[i]);
            }
        }

        /// `[a, b]` of each lane.
        pub fn sums(&self) -> [[u64; 2]; 2] {
            [[self.a[0], self.b[0]], [self.a[1], self.b[1]]]
        }
    }

    impl PartialEq for Lanes {
        fn eq(&self, other: &Self) -> bool {
            self.sums() == other.sums()
        }
    }

    impl Eq for Lanes {}

    impl std::fmt::Debug for Lanes {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_tuple("Lanes").field(&self.sums()).finish()
        }
    }
}

impl Checksum {
    /// Folds one word.
    #[inline(always)]
    pub fn word(&mut self, x: u64) {
        self.a = self.a.wrapping_add(x);
        self.b = self.b.wrapping_add(self.a);
    }

    /// Folds a value's two words ([`FieldValue::words`]): the first into
    /// the kinds' lane, the second into the payloads'.
    #[inline(always)]
    pub fn pair(&mut self, w: [u64; 2]) {
        self.values.fold(w);
    }

    /// Folds a byte string: its bytes, 8 at a time, then its length.
    #[inline]
    pub fn bytes(&mut self, s: &[u8]) {
        let mut chunks = s.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = 0u64;
            for (i, &c) in rest.iter().enumerate() {
                last |= u64::from(c) << (8 * i);
            }
            self.word(last);
        }
        self.word(s.len() as u64);
    }

    /// Folds one decoded value; `packet` holds the bytes of strings.
    ///
    /// A value is folded as its kind and its payload, one per lane
    /// ([`Checksum::pair`] of [`FieldValue::words`]: a number's 64 bits, a
    /// string's position and length), a string then as its bytes
    /// ([`Checksum::bytes`]).
    #[inline(always)]
    pub fn value(&mut self, packet: &[u8], v: FieldValue) {
        // No jump on the kind (a jump table mispredicted as kinds
        // interleave, half of the folding's time): the words of all kinds
        // alike, and a test for strings, which are rare.
        let [kind, payload] = v.words();
        self.pair([kind, payload]);
        if kind == value_kind::STR {
            self.packet_str(packet, payload as u32 as usize, (payload >> 32) as usize);
        }
    }

    /// Folds the string of `len` bytes at `start` in `packet` exactly as
    /// [`Checksum::bytes`] does (an empty string when the range is out of
    /// the packet, which the decoder never makes), reading its last
    /// partial word with one load that ends at the string's end instead of
    /// byte by byte.
    #[inline(always)]
    fn packet_str(&mut self, packet: &[u8], start: usize, len: usize) {
        let end = start.wrapping_add(len);
        let Some(s) = packet.get(start..end) else {
            self.bytes(&[]);
            return;
        };
        let rest = len % 8;
        if rest == 0 || end < 8 {
            self.bytes(s);
            return;
        }
        // Whole words straight from the packet (`chunks_exact` costs more
        // to set up than these strings, 12 bytes on average, have words).
        let mut at = start;
        while at + 8 <= end {
            let w: [u8; 8] = packet[at..at + 8].try_into().expect("8 bytes");
            self.word(u64::from_le_bytes(w));
            at += 8;
        }
        // The 8 bytes ending at the string's end, the first `8 - rest` of
        // them (before the tail) shifted out: the tail bytes, the first in
        // the low byte, as `bytes` folds them.
        let last: [u8; 8] = packet[end - 8..end].try_into().expect("8 bytes");
        self.word(u64::from_le_bytes(last) >> (64 - 8 * rest as u32));
        self.word(len as u64);
    }

    /// Folds every value of `scopes` of `ev`.
    #[inline]
    pub fn scopes(&mut self, ev: &Event<'_>, scopes: &[Scope]) {
        let packet = ev.packet_bytes();
        for &scope in scopes {
            for &v in ev.scope_values(scope) {
                self.value(packet, v);
            }
        }
    }

    /// The checksum so far.
    pub fn get(&self) -> u64 {
        let [kinds, payloads] = self.values.sums();
        let sum = |[a, b]: [u64; 2]| a ^ b.rotate_left(32);
        sum([self.a, self.b])
            ^ sum(kinds).rotate_left(16)
            ^ sum(payloads).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Folds events into a checksum: every value of their six scopes (string
/// bytes included) and their timestamp.
///
/// The packet header and context values are the same for all the events
/// of a packet (and decoded once per packet): they are folded once per
/// packet into a digest, and that digest is folded into each event's
/// checksum. Each decoded value is thus folded once, and the checksum
/// still depends on all six scopes of every event.
#[derive(Debug, Default)]
pub struct EventFolder {
    sum: Checksum,
    /// Per stream: the packet index and the digest of the last packet seen.
    packets: Vec<Option<(usize, u64)>>,
}

impl EventFolder {
    /// Folds `ev`.
    #[inline]
    pub fn event(&mut self, ev: &Event<'_>) {
        let pos = ev.position();
        if self.packets.len() <= pos.stream {
            self.packets.resize(pos.stream + 1, None);
        }
        let digest = match self.packets[pos.stream] {
            Some((packet, digest)) if packet == pos.packet => digest,
            _ => {
                let mut c = Checksum::default();
                c.scopes(ev, &PACKET_SCOPES);
                let digest = c.get();
                self.packets[pos.stream] = Some((pos.packet, digest));
                digest
            }
        };
        self.sum.word(digest);
        // The four event scopes are contiguous: one slice, the same values
        // in the same order as scope by scope.
        let packet = ev.packet_bytes();
        for &v in ev.event_values() {
            self.sum.value(packet, v);
        }
        self.sum.word(ev.timestamp_ns().unwrap_or(0) as u64);
    }

    /// Folds one word (for messages other than events).
    pub fn word(&mut self, x: u64) {
        self.sum.word(x);
    }

    /// The checksum so far.
    pub fn get(&self) -> u64 {
        self.sum.get()
    }
}

/// What one decode run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeRun {
    /// Events read.
    pub events: u64,
    /// Discarded-events and discarded-packets messages read.
    pub discarded: u64,
    /// Read errors (each ends a stream).
    pub errors: u64,
    /// The first read error.
    pub first_error: Option<String>,
    /// Checksum of all values.
    pub checksum: u64,
    /// Peak anonymous resident memory above the level before opening, in
    /// bytes (`None` where `/proc/self/status` has no `RssAnon`).
    pub rss_peak_bytes: Option<u64>,
}

/// `RssAnon` of a `/proc/PID/status` text, in bytes.
pub fn parse_rss_anon(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    let mut words = line["RssAnon:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => Some(n * 1024),
        _ => None,
    }
}

/// This process's anonymous resident memory, in bytes.
pub fn rss_anon_bytes() -> Option<u64> {
    parse_rss_anon(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// This process's anonymous resident memory, read again and again at
/// little cost: `/proc/self/statm` kept open and read from its start each
/// time (no path lookup, and a line of seven numbers rather than
/// `status`'s fifty lines). Resident minus shared pages is what `status`
/// calls `RssAnon` (shared pages are the file and shared-memory ones).
#[derive(Debug)]
pub struct RssProbe {
    statm: std::fs::File,
    page_bytes: u64,
}

impl RssProbe {
    /// `None` where `/proc/self/statm` cannot be opened.
    pub fn open() -> Option<Self> {
        // SAFETY: `sysconf` only reads a system constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(RssProbe {
            statm: std::fs::File::open("/proc/self/statm").ok()?,
            page_bytes: u64::try_from(page).ok().filter(|&p| p > 0)?,
        })
    }

    /// The anonymous resident memory now, in bytes.
    pub fn bytes(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 256];
        let n = self.statm.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        let mut pages = text
            .split_whitespace()
            .skip(1)
            .map(|w| w.parse::<u64>().ok());
        let (resident, shared) = (pages.next()??, pages.next()??);
        Some(resident.saturating_sub(shared) * self.page_bytes)
    }
}

/// Opens the traces under `paths` and reads all their messages, folding
/// every value into a checksum and sampling the resident memory.
pub fn decode_once(paths: &[PathBuf]) -> Result<DecodeRun, CliError> {
    let probe = RssProbe::open();
    let rss_before = probe.as_ref().and_then(RssProbe::bytes);
    let mut rss_peak = rss_before;
    // Rare (every `RSS_SAMPLE_EVERY` messages) and out of line: the
    // compiler keeps what the reading loop holds in registers around it.
    #[cold]
    #[inline(never)]
    fn sample(probe: Option<&RssProbe>, peak: &mut Option<u64>) {
        if let (Some(p), Some(now)) = (peak.as_mut(), probe.and_then(RssProbe::bytes)) {
            *p = (*p).max(now);
        }
    }
    let ts = Traceset::open(paths).map_err(|e| CliError::Trace(e.to_string()))?;
    let mut sum = EventFolder::default();
    let (mut discarded, mut errors, mut messages) = (0u64, 0u64, 0u64);
    let mut first_error = None;
    let mut cursor = ts.messages();
    while let Some(msg) = cursor.next() {
        messages += 1;
        // The message first, the sampling after: the message then need
        // not be kept in memory across the sampling's calls.
        match msg {
            // Events are counted at the end (the other messages apart).
            Ok(Message::Event(ev)) => sum.event(&ev),
            Ok(Message::DiscardedEvents(d) | Message::DiscardedPackets(d)) => {
                discarded += 1;
                sum.word(d.count.unwrap_or(u64::MAX));
                sum.word(d.begin_ns.unwrap_or(0) as u64);
                sum.word(d.end_ns.unwrap_or(0) as u64);
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
        if messages % RSS_SAMPLE_EVERY == 0 {
            sample(probe.as_ref(), &mut rss_peak);
        }
    }
    sample(probe.as_ref(), &mut rss_peak);
    drop(cursor);
    drop(ts);
    Ok(DecodeRun {
        events: messages - discarded - errors,
        discarded,
        errors,
        first_error,
        checksum: sum.get(),
        rss_peak_bytes: rss_peak.zip(rss_before).map(|(p, b)| p.saturating_sub(b)),
    })
}

/// The median of some durations (the mean of the two middle ones for an
/// even count); zero for none.
pub fn median(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    match t.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => t[n / 2],
        n => (t[n / 2 - 1] + t[n / 2]) / 2,
    }
}

/// The `Event messages` count of babeltrace2's `sink.utils.counter`
/// output.
pub fn parse_counter_events(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let l = l.trim();
        let n = l.strip_suffix("Event messages")?;
        n.trim().parse().ok()
    })
}

/// User + system CPU time of this process (`who` = `RUSAGE_SELF`) or of its
/// waited-for children (`RUSAGE_CHILDREN`).
pub(crate) fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// A copy of trace directory trees made of symbolic links to the original
/// files, without LTTng's `.idx` packet indexes; removed when dropped.
#[derive(Debug)]
pub struct IndexlessMirror {
    root: PathBuf,
    /// The mirrored counterparts of the input paths.
    pub paths: Vec<PathBuf>,
}

impl IndexlessMirror {
    /// Mirrors `paths` under a new directory of `parent`. A path to a file
    /// (a `metadata` file) mirrors its directory.
    pub fn new(paths: &[PathBuf], parent: &Path) -> io::Result<IndexlessMirror> {
        let root = parent.join(format!(
            "traceloom-bench-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&root)?;
        let mut mirror = IndexlessMirror {
            root,
            paths: Vec::new(),
        };
        for (i, p) in paths.iter().enumerate() {
            let p = p.canonicalize()?;
            let (src, file) = if p.is_file() {
                let dir = p.parent().unwrap_or(Path::new("/")).to_path_buf();
                let name = p.file_name().map(|n| n.to_owned());
                (dir, name)
            } else {
                (p, None)
            };
            let dst = mirror.root.join(i.to_string());
            link_tree(&src, &dst, 0)?;
            mirror.paths.push(match file {
                Some(name) => dst.join(name),
                None => dst,
            });
        }
        Ok(mirror)
    }
}

impl Drop for IndexlessMirror {
    fn drop(&mut self) {
        // Removes the links and directories, never what they point to.
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Recreates the directories of `src` under `dst` with links to its files,
/// except `*.idx` files.
fn link_tree(src: &Path, dst: &Path, depth: u32) -> io::Result<()> {
    // The reader's discovery does not go deeper either.
    const MAX_DEPTH: u32 = 32;
    std::fs::create_dir_all(dst)?;
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let path = entry.path();
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            link_tree(&path, &target, depth + 1)?;
        } else if path.extension().is_none_or(|e| e != "idx") {
            std::os::unix::fs::symlink(&path, &target)?;
        }
    }
    Ok(())
}

/// What the benchmark compares of a packet: file, offset, size, content
/// bits, `timestamp_begin`, `timestamp_end`.
type PacketKey = (u32, u64, u64, u64, Option<u64>, Option<u64>);

/// The packets of a traceset, per stream.
fn packet_list(ts: &Traceset) -> Vec<Vec<PacketKey>> {
    ts.streams()
        .map(|s| {
            ts.packets(s.index)
                .iter()
                .map(|p| {
                    (
                        p.file,
                        p.offset,
                        p.size,
                        p.content_bits,
                        p.ts_begin,
                        p.ts_end,
                    )
                })
                .collect()
        })
        .collect()
}

/// A line of the report: `label: text   target ...   PASS|FAIL`.
pub(crate) fn verdict(
    out: &mut dyn Write,
    label: &str,
    text: &str,
    target: &str,
    ok: bool,
) -> io::Result<()> {
    writeln!(
        out,
        "{label:<22}{text}   (target {target})   {}",
        if ok { "PASS" } else { "FAIL" }
    )
}

/// A duration in seconds, three decimals.
pub(crate) fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// The runs' times in seconds, comma-separated.
pub(crate) fn list(times: &[Duration]) -> String {
    times
        .iter()
        .map(|t| format!("{:.3}", t.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The machine's three load averages (`/proc/loadavg`), or "unknown".
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Runs `babeltrace2 ARGS PATHS` (its standard output kept when
/// `capture`, else discarded); returns its wall time, CPU time and
/// standard output. A failure of babeltrace2 is an error.
fn run_babeltrace2(
    program: &Path,
    args: &[&str],
    paths: &[PathBuf],
    capture: bool,
) -> Result<(Duration, Duration, String), CliError> {
    let cpu0 = cpu_time(libc::RUSAGE_CHILDREN);
    let t = Instant::now();
    let o = Command::new(program)
        .args(args)
        .args(paths)
        .env("TERM", "dumb")
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| CliError::Bench(format!("cannot run {}: {e}", program.display())))?;
    let wall = t.elapsed();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu0);
    if !o.status.success() {
        return Err(CliError::Bench(format!(
            "{} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim_end()
        )));
    }
    Ok((wall, cpu, String::from_utf8_lossy(&o.stdout).into_owned()))
}

/// `traceloom bench decode`: measures and prints; fails when a target is
/// missed or the measurements disagree (event counts, checksums, packets).
pub fn run_decode_bench(args: &DecodeBenchArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let runs = args.runs as usize;
    let paths = &args.paths;

    // Describe the input (and check it opens).
    let ts = Traceset::open(paths).map_err(|e| CliError::Trace(e.to_string()))?;
    let bytes = ts.total_bytes();
    let packets: usize = ts.streams().map(|s| ts.packets(s.index).len()).sum();
    let reference_packets = packet_list(&ts);
    writeln!(
        out,
        "traceloom bench decode: {} trace(s), {} stream(s), {packets} packets, {:.1} MB of stream files; {runs} run(s) of each, medians; {} decoding thread(s); load average {}",
        ts.traces().len(),
        ts.streams().len(),
        bytes as f64 / 1e6,
        ts.decode_threads(),
        load_average(),
    )?;
    drop(ts);
    out.flush()?;

    // babeltrace2's event count, untimed (this also warms the page cache).
    let (_, _, counter) = run_babeltrace2(
        &args.babeltrace2,
        &["-c", "sink.utils.counter", "-p", "step=+0"],
        paths,
        true,
    )?;
    let bt2_events = parse_counter_events(&counter).ok_or_else(|| {
        CliError::Bench(format!(
            "no `Event messages` count in babeltrace2's sink.utils.counter output:\n{counter}"
        ))
    })?;

    let mirror = IndexlessMirror::new(paths, &std::env::temp_dir())
        .map_err(|e| CliError::Bench(format!("cannot mirror the traces without .idx: {e}")))?;

    let mut bt2_wall = Vec::new();
    let mut bt2_cpu = Vec::new();
    let mut tl_wall = Vec::new();
    let mut tl_cpu = Vec::new();
    let mut index_wall = Vec::new();
    let mut decoded: Vec<DecodeRun> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for _ in 0..runs {
        let (w, c, _) = run_babeltrace2(&args.babeltrace2, &["-o", "dummy"], paths, false)?;
        bt2_wall.push(w);
        bt2_cpu.push(c);

        let cpu0 = cpu_time(libc::RUSAGE_SELF);
        let t = Instant::now();
        let d = decode_once(paths)?;
        tl_wall.push(t.elapsed());
        tl_cpu.push(cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu0));
        decoded.push(d);

        let t = Instant::now();
        let scanned = Traceset::open(&mirror.paths).map_err(|e| CliError::Trace(e.to_string()))?;
        index_wall.push(t.elapsed());
        if packet_list(&scanned) != reference_packets {
            problems.push(
                "the packets found by scanning the headers differ from those of the normal opening"
                    .into(),
            );
        }
    }
    drop(mirror);

    let first = &decoded[0];
    let key = |d: &DecodeRun| (d.events, d.discarded, d.errors, d.checksum);
    if decoded.iter().any(|d| key(d) != key(first)) {
        problems.push(format!(
            "the runs read different things (events, lost-records messages, errors, checksum): {}",
            decoded
                .iter()
                .map(|d| format!("{:?}", key(d)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(e) = &first.first_error {
        problems.push(format!("{} read error(s); the first: {e}", first.errors));
    }
    if first.events != bt2_events {
        problems.push(format!(
            "babeltrace2 counted {bt2_events} events, traceloom read {}",
            first.events
        ));
    }

    let bt2_median = median(&bt2_wall);
    let tl_median = median(&tl_wall);
    let index_median = median(&index_wall);
    let bt2_rate = bt2_events as f64 / bt2_median.as_secs_f64();
    let tl_rate = first.events as f64 / tl_median.as_secs_f64();
    let ratio = tl_rate / bt2_rate;
    let index_gbps = bytes as f64 / index_median.as_secs_f64() / 1e9;
    let rss = decoded.iter().filter_map(|d| d.rss_peak_bytes).max();

    writeln!(
        out,
        "babeltrace2 -o dummy  {bt2_events} events, median {} wall (runs: {}), {} CPU: {:.3} M events/s",
        secs(bt2_median),
        list(&bt2_wall),
        secs(median(&bt2_cpu)),
        bt2_rate / 1e6
    )?;
    writeln!(
        out,
        "traceloom decode      {} events, {} lost-records messages, median {} wall (runs: {}), {} CPU: {:.3} M events/s, checksum {:#018x}",
        first.events,
        first.discarded,
        secs(tl_median),
        list(&tl_wall),
        secs(median(&tl_cpu)),
        tl_rate / 1e6,
        first.checksum
    )?;
    let mut ok = true;
    let pass = ratio >= RATIO_TARGET;
    ok &= pass;
    verdict(
        out,
        "events/s ratio",
        &format!("{ratio:.1}x babeltrace2"),
        &format!(">= {RATIO_TARGET}x"),
        pass,
    )?;
    let pass = index_gbps >= INDEX_GBPS_TARGET;
    ok &= pass;
    verdict(
        out,
        "packet index scan",
        &format!(
            "{packets} packets of {:.1} MB in {} (median; runs: {}): {index_gbps:.2} GB/s",
            bytes as f64 / 1e6,
            format_args!("{:.3} ms", index_median.as_secs_f64() * 1e3),
            index_wall
                .iter()
                .map(|t| format!("{:.3}", t.as_secs_f64() * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        &format!(">= {INDEX_GBPS_TARGET} GB/s"),
        pass,
    )?;
    match rss {
        Some(r) => {
            let mb = r as f64 / 1e6;
            let pass = mb < RSS_MB_TARGET;
            ok &= pass;
            verdict(
                out,
                "memory beyond maps",
                &format!("peak RssAnon {mb:.1} MB above the level before opening"),
                &format!("< {RSS_MB_TARGET} MB"),
                pass,
            )?;
        }
        None => {
            ok = false;
            writeln!(
                out,
                "{:<22}RssAnon unavailable   FAIL",
                "memory beyond maps"
            )?;
        }
    }
    for p in &problems {
        writeln!(out, "problem: {p}")?;
    }
    writeln!(out, "load average after: {}", load_average())?;
    out.flush()?;
    if problems.is_empty() && ok {
        Ok(())
    } else {
        Err(CliError::Bench(
            "a target was missed or the measurements disagree (see above)".into(),
        ))
    }
}

/// `traceloom bench`.
pub fn run_bench(args: &BenchArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.what {
        BenchCommand::Decode(a) => run_decode_bench(a, out),
        BenchCommand::Engine(a) => crate::bench_engine::run(a, out),
        BenchCommand::Paje(a) => crate::bench_paje::run(a, out),
        BenchCommand::Viewers(a) => crate::bench_viewers::run(a, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_depends_on_values_and_order() {
        let fold = |words: &[u64]| {
            let mut c = Checksum::default();
            for &w in words {
                c.word(w);
            }
            c.get()
        };
        assert_ne!(fold(&[1, 2]), fold(&[2, 1]));
        assert_ne!(fold(&[1, 2]), fold(&[1, 3]));
        assert_eq!(fold(&[1, 2]), fold(&[1, 2]));
        let bytes = |s: &[u8]| {
            let mut c = Checksum::default();
            c.bytes(s);
            c.get()
        };
        // Lengths count: a trailing NUL is not lost in the padding.
        assert_ne!(bytes(b"abc"), bytes(b"abc\0"));
        assert_ne!(bytes(b"abcdefgh1"), bytes(b"abcdefgh2"));
    }

    #[test]
    fn lanes_are_two_fletcher_sums() {
        // The vector sums against the plain definition, on words that
        // overflow.
        let mut lanes = lanes::Lanes::default();
        let mut sums = [[0u64; 2]; 2];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..1000 {
            let w = [x, x.rotate_left(29) ^ 0xdead_beef];
            lanes.fold(w);
            for (lane, &word) in sums.iter_mut().zip(&w) {
                lane[0] = lane[0].wrapping_add(word);
                lane[1] = lane[1].wrapping_add(lane[0]);
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        assert_eq!(lanes.sums(), sums);
        // Order and lanes count.
        let fold = |ws: &[[u64; 2]]| {
            let mut c = Checksum::default();
            ws.iter().for_each(|&w| c.pair(w));
            c.get()
        };
        assert_ne!(fold(&[[1, 2], [3, 4]]), fold(&[[3, 4], [1, 2]]));
        assert_ne!(fold(&[[1, 2]]), fold(&[[2, 1]]));
    }

    #[test]
    fn packet_strings_fold_like_their_bytes() {
        // Every range of a 40-byte packet (and some out of it): after the
        // value's words, the one-load tail of `value` must fold what
        // `bytes` folds.
        let packet: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        let mut checked = 0;
        for start in 0..=42u32 {
            for len in 0..=42u32 {
                let mut fast = Checksum::default();
                fast.value(&packet, FieldValue::Str { start, len });
                let mut plain = Checksum::default();
                let (s, e) = (start as usize, (start + len) as usize);
                plain.pair([value_kind::STR, u64::from(start) | u64::from(len) << 32]);
                plain.bytes(packet.get(s..e).unwrap_or_default());
                assert_eq!(fast, plain, "start {start} len {len}");
                checked += usize::from(e <= packet.len() && e >= 8 && len % 8 != 0);
            }
        }
        // The one-load tail did run.
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn rss_and_counter_parsing() {
        let status = "Name:\tx\nVmRSS:\t  2000 kB\nRssAnon:\t    1234 kB\nRssFile:\t 99 kB\n";
        assert_eq!(parse_rss_anon(status), Some(1234 * 1024));
        assert_eq!(parse_rss_anon("VmRSS: 1 kB\n"), None);
        assert!(rss_anon_bytes().is_some_and(|b| b > 0));
        // The probe reads the same figure as `status` (read one after the
        // other; the slack is for the tests running alongside).
        let probe = RssProbe::open().expect("statm");
        let (a, b) = (
            probe.bytes().expect("statm"),
            rss_anon_bytes().expect("status"),
        );
        assert!(a.abs_diff(b) <= 4 << 20, "{a} {b}");
        // Memory touched now shows.
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let c = probe.bytes().expect("statm");
        assert!(c >= a + (48 << 20), "{a} {c}");
        drop(block);
        let counter = "        3955024 Event messages\n              2 Stream beginning messages\n        3955236 messages (TOTAL)\n";
        assert_eq!(parse_counter_events(counter), Some(3_955_024));
        assert_eq!(parse_counter_events("nothing"), None);
    }

    #[test]
    fn medians() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(median(&[ms(4), ms(1), ms(2), ms(10)]), ms(3));
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn mirror_links_everything_but_idx_files() {
        let tmp = std::env::temp_dir().join(format!("traceloom-bench-test-{}", std::process::id()));
        let trace = tmp.join("src/trace");
        std::fs::create_dir_all(trace.join("index")).unwrap();
        std::fs::write(trace.join("metadata"), "m").unwrap();
        std::fs::write(trace.join("chan_0"), "data").unwrap();
        std::fs::write(trace.join("index/chan_0.idx"), "idx").unwrap();
        {
            let m = IndexlessMirror::new(&[trace.clone(), trace.join("metadata")], &tmp).unwrap();
            assert_eq!(m.paths.len(), 2);
            assert_eq!(
                std::fs::read_to_string(m.paths[0].join("chan_0")).unwrap(),
                "data"
            );
            assert!(m.paths[0].join("index").is_dir());
            assert!(!m.paths[0].join("index/chan_0.idx").exists());
            assert!(m.paths[1].ends_with("metadata") && m.paths[1].is_file());
            assert!(std::fs::symlink_metadata(m.paths[0].join("metadata"))
                .unwrap()
                .file_type()
                .is_symlink());
        }
        // Dropping the mirror removed only the links.
        assert!(trace.join("index/chan_0.idx").is_file());
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1);
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    /// A bundled LTTng-UST trace.
    fn shared_ust(kind: &str) -> PathBuf {
        traceloom_testdata::ctf(&format!("lttng-ust/{kind}"))
    }

    #[test]
    fn decode_reads_everything_and_is_repeatable() {
        let trace = shared_ust("ust_uid_discard");
        let paths = vec![trace];
        let a = decode_once(&paths).unwrap();
        let b = decode_once(&paths).unwrap();
        assert_eq!(
            (a.events, a.discarded, a.checksum),
            (b.events, b.discarded, b.checksum)
        );
        assert_eq!((a.errors, &a.first_error), (0, &None));
        assert!(a.rss_peak_bytes.is_some());
        let ts = Traceset::open(&paths).unwrap();
        let mut cur = ts.messages();
        let mut events = 0;
        while let Some(m) = cur.next() {
            events += u64::from(matches!(m.unwrap(), Message::Event(_)));
        }
        drop(cur);
        assert_eq!(a.events, events);

        // Scanning the packet headers finds LTTng's index.
        let mirror = IndexlessMirror::new(&paths, &std::env::temp_dir()).unwrap();
        let scanned = Traceset::open(&mirror.paths).unwrap();
        assert_eq!(packet_list(&scanned), packet_list(&ts));
        assert!(!packet_list(&ts).concat().is_empty());
    }

    /// The scopes of an event.
    const EVENT_SCOPES: [Scope; 4] = [
        Scope::EventHeader,
        Scope::StreamEventContext,
        Scope::EventContext,
        Scope::EventPayload,
    ];

    #[test]
    fn folder_caches_packet_scopes_correctly() {
        let trace = shared_ust("ust_pid");
        let ts = Traceset::open(&[trace]).unwrap();
        assert!(ts.streams().len() > 1);
        // The folder equals folding the packet scopes' digest afresh for
        // every event.
        let mut cur = ts.messages();
        let mut folder = EventFolder::default();
        let mut plain = Checksum::default();
        let (mut n, mut payloads) = (0, 0);
        while let Some(m) = cur.next() {
            if let Message::Event(ev) = m.unwrap() {
                folder.event(&ev);
                let mut packet = Checksum::default();
                packet.scopes(&ev, &PACKET_SCOPES);
                assert!(!ev.scope_values(Scope::PacketHeader).is_empty());
                plain.word(packet.get());
                plain.scopes(&ev, &EVENT_SCOPES);
                plain.word(ev.timestamp_ns().unwrap_or(0) as u64);
                payloads += usize::from(!ev.scope_values(Scope::EventPayload).is_empty());
                n += 1;
            }
        }
        assert!(n > 1000 && payloads > n / 2, "{n} {payloads}");
        assert_eq!(folder.get(), plain.get());
    }

    #[test]
    fn bench_command_reports_every_figure() {
        let trace = shared_ust("ust_uid_blocking");
        if Command::new("babeltrace2")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("note: babeltrace2 is not installed: test skipped");
            return;
        }
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let argv = ["traceloom", "bench", "decode", "--runs", "1"];
        let status = crate::run(
            argv.iter()
                .map(|a| a.into())
                .chain([trace.into_os_string()]),
            &mut out,
            &mut err,
        );
        let out = String::from_utf8(out).unwrap();
        let err = String::from_utf8(err).unwrap();
        for line in [
            "babeltrace2 -o dummy",
            "traceloom decode",
            "events/s ratio",
            "packet index scan",
            "memory beyond maps",
        ] {
            assert!(out.contains(line), "no `{line}` in:\n{out}{err}");
        }
        // Both tools read the same number of events, and the verdict
        // matches the exit status.
        assert!(!out.contains("problem:"), "{out}");
        assert_eq!(status == 0, !out.contains("FAIL"), "{out}{err}");
    }
}
