//! `traceloom-bench decode PATH... [--runs N]`: the reading benchmark.
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
//! With `--versus OTHER...` (the same trace in another form: CTF 1.8
//! against its CTF 2 conversion), each round also decodes `OTHER` like (2),
//! and the medians of the two and their ratio are printed: the speed of
//! one metadata format against the other, from the same run.
//!
//! It prints both event rates and their ratio, the index rate and the
//! memory, each with PASS or FAIL against the targets ([`RATIO_TARGET`],
//! [`INDEX_GBPS_TARGET`], [`RSS_MB_TARGET`]); a missed target makes the
//! command fail.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use traceloom_ctf::event::{Event, Message};
use traceloom_ctf::Traceset;
use traceloom_tsdl::ir::Scope;

use crate::checksum::Checksum;
use crate::measure::{conclude, cpu_time, list, load_average, median, secs, verdict, RssProbe};
use crate::BenchError;

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

/// Arguments of `traceloom-bench decode`.
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
    /// The same traces in another form (CTF 1.8 against CTF 2), decoded
    /// in each round too: their median is compared with PATH's.
    #[arg(long, value_name = "OTHER", num_args = 1..)]
    pub versus: Vec<PathBuf>,
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

/// Opens the traces under `paths` and reads all their messages, folding
/// every value into a checksum and sampling the resident memory.
pub fn decode_once(paths: &[PathBuf]) -> Result<DecodeRun, BenchError> {
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
    let ts = Traceset::open(paths).map_err(|e| BenchError::Trace(e.to_string()))?;
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

/// The `Event messages` count of babeltrace2's `sink.utils.counter`
/// output.
pub fn parse_counter_events(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let l = l.trim();
        let n = l.strip_suffix("Event messages")?;
        n.trim().parse().ok()
    })
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

/// Runs `babeltrace2 ARGS PATHS` (its standard output kept when
/// `capture`, else discarded); returns its wall time, CPU time and
/// standard output. A failure of babeltrace2 is an error.
fn run_babeltrace2(
    program: &Path,
    args: &[&str],
    paths: &[PathBuf],
    capture: bool,
) -> Result<(Duration, Duration, String), BenchError> {
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
        .map_err(|e| BenchError::Failed(format!("cannot run {}: {e}", program.display())))?;
    let wall = t.elapsed();
    let cpu = cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu0);
    if !o.status.success() {
        return Err(BenchError::Failed(format!(
            "{} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim_end()
        )));
    }
    Ok((wall, cpu, String::from_utf8_lossy(&o.stdout).into_owned()))
}

/// `traceloom-bench decode`: measures and prints; fails when a target is
/// missed or the measurements disagree (event counts, checksums, packets).
pub fn run_decode_bench(args: &DecodeBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let runs = args.runs as usize;
    let paths = &args.paths;

    // Describe the input (and check it opens).
    let ts = Traceset::open(paths).map_err(|e| BenchError::Trace(e.to_string()))?;
    let bytes = ts.total_bytes();
    let packets: usize = ts.streams().map(|s| ts.packets(s.index).len()).sum();
    let reference_packets = packet_list(&ts);
    writeln!(
        out,
        "traceloom-bench decode: {} trace(s), {} stream(s), {packets} packets, {:.1} MB of stream files; {runs} run(s) of each, medians; {} decoding thread(s); load average {}",
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
        BenchError::Failed(format!(
            "no `Event messages` count in babeltrace2's sink.utils.counter output:\n{counter}"
        ))
    })?;

    let mirror = IndexlessMirror::new(paths, &std::env::temp_dir())
        .map_err(|e| BenchError::Failed(format!("cannot mirror the traces without .idx: {e}")))?;

    let mut bt2_wall = Vec::new();
    let mut bt2_cpu = Vec::new();
    let mut tl_wall = Vec::new();
    let mut tl_cpu = Vec::new();
    let mut index_wall = Vec::new();
    let mut vs_wall = Vec::new();
    let mut vs_cpu = Vec::new();
    let mut vs_decoded: Vec<DecodeRun> = Vec::new();
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

        if !args.versus.is_empty() {
            let cpu0 = cpu_time(libc::RUSAGE_SELF);
            let t = Instant::now();
            let d = decode_once(&args.versus)?;
            vs_wall.push(t.elapsed());
            vs_cpu.push(cpu_time(libc::RUSAGE_SELF).saturating_sub(cpu0));
            vs_decoded.push(d);
        }

        let t = Instant::now();
        let scanned =
            Traceset::open(&mirror.paths).map_err(|e| BenchError::Trace(e.to_string()))?;
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
    if let Some(v) = vs_decoded.first() {
        let vs_median = median(&vs_wall);
        writeln!(
            out,
            "versus (other form)   {} events, median {} wall (runs: {}), {} CPU: {:.3} M events/s, checksum {:#018x}",
            v.events,
            secs(vs_median),
            list(&vs_wall),
            secs(median(&vs_cpu)),
            v.events as f64 / vs_median.as_secs_f64() / 1e6,
            v.checksum
        )?;
        writeln!(
            out,
            "{:<22}{:.3} (PATH's median wall time over OTHER's; CPU {:.3})",
            "PATH / OTHER time",
            tl_median.as_secs_f64() / vs_median.as_secs_f64(),
            median(&tl_cpu).as_secs_f64() / median(&vs_cpu).as_secs_f64(),
        )?;
        if v.events != first.events {
            problems.push(format!(
                "OTHER has {} events, PATH {}",
                v.events, first.events
            ));
        }
    }
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
    conclude(out, &problems, ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{parse_rss_anon, rss_anon_bytes};
    use traceloom_ctf::event::{value_kind, FieldValue};

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
        traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
        let mut out = Vec::new();
        let argv = ["traceloom-bench", "decode", "--runs", "1"];
        let result = crate::run(
            argv.iter()
                .map(|a| a.into())
                .chain([trace.into_os_string()]),
            &mut out,
        );
        let status = i32::from(result.is_err());
        let out = String::from_utf8(out).unwrap();
        let err = result.err().map(|e| e.to_string()).unwrap_or_default();
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
