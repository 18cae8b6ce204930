//! Writes synthetic CTF 1.8 kernel traces in LTTng's layout.
//!
//! [`generate`] simulates a small Linux machine — `cpus` CPUs,
//! `processes` × `threads_per_process` user threads, plus init, kernel
//! threads and the session daemon — and records what LTTng 2.11's kernel
//! tracer would: a statedump, scheduling (`sched_switch`, `sched_waking`,
//! `sched_wakeup[_new]`, `sched_migrate_task`), syscalls (`read`, `write`,
//! `openat`, `close`, `futex`, `ioctl`, `nanosleep`, `clone`, `execve`,
//! `exit_group`), IRQs and softirqs, and short-lived processes that fork,
//! exec, exit and are freed. The story is coherent (a thread runs on one
//! CPU at a time, every `sched_switch` switches out the running thread,
//! blocked threads are woken before they run again, syscall exits follow
//! their entries on the same thread, handlers nest) and deterministic for
//! a given configuration.
//!
//! The output directory holds what an LTTng kernel session directory
//! holds: a `metadata` file (plain-text TSDL, x86-64 layout), one stream
//! file `channel0_<cpu>` per CPU made of fixed-size packets (the last one
//! page-aligned, as LTTng flushes it), and `index/channel0_<cpu>.idx`
//! (CTF index 1.1). Event headers use LTTng's compact form (5-bit id,
//! 27-bit timestamp) when the id is below 31 and the time since the
//! previous event of the stream fits in 27 bits, the extended form
//! otherwise.

mod catalog;
mod metadata;
mod rng;
mod sim;
mod stream;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use crate::rng::splitmix64;

/// What to generate.
#[derive(Clone, Debug)]
pub struct GeneratorConfig {
    /// Number of CPUs, hence of stream files (1..=1024).
    pub cpus: u32,
    /// Long-lived user processes (at least 1).
    pub processes: u32,
    /// Threads in each of those processes (at least 1).
    pub threads_per_process: u32,
    /// Total number of events to write; generation stops at exactly this
    /// many unless `max_bytes` is reached first.
    pub events: u64,
    /// Optional cap on the total size of the stream files, in bytes:
    /// generation stops at the first event that reaches it (the final
    /// packets are then padded to a page, so the files may exceed it by up
    /// to a page per CPU).
    pub max_bytes: Option<u64>,
    /// Packet (sub-buffer) size in bytes: a multiple of 4096, at least
    /// 4096.
    pub packet_size: u32,
    /// Seed of the pseudo-random story; same config, same bytes.
    pub seed: u64,
    /// `env.hostname` in the metadata.
    pub hostname: String,
    /// `env.trace_name` in the metadata.
    pub trace_name: String,
    /// Wall-clock time of the trace start, in ns since the Unix epoch; the
    /// clock offset is derived from it.
    pub start_time_unix_ns: u64,
    /// Probability that a long-lived thread's next action is forking a
    /// short-lived process (0.0..=1.0).
    pub fork_rate: f64,
    /// Write `index/channel0_<cpu>.idx`.
    pub write_index: bool,
    /// Allow writing into a non-empty directory (existing `metadata`,
    /// `channel0_*` and `index/channel0_*.idx` files are replaced; other
    /// files are left alone).
    pub overwrite: bool,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            cpus: 4,
            processes: 16,
            threads_per_process: 4,
            events: 1_000_000,
            max_bytes: None,
            packet_size: 1 << 20,
            seed: 1,
            hostname: "traceloom-synth".to_string(),
            trace_name: "traceloom-kernelgen".to_string(),
            // 2023-11-14T22:13:20Z
            start_time_unix_ns: 1_700_000_000_000_000_000,
            fork_rate: 0.0005,
            write_index: true,
            overwrite: false,
        }
    }
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// The output directory has files in it and `overwrite` is off.
    #[error("output directory {0} is not empty (allow overwriting to write into it)")]
    NotEmpty(PathBuf),
    /// Reading or writing the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> GenError + '_ {
    move |source| GenError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What was written.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Events written, all streams together.
    pub events: u64,
    /// Events written per event name, for every declared event class (in
    /// id order, zero counts included).
    pub event_counts: Vec<(&'static str, u64)>,
    /// Number of stream files (one per CPU).
    pub streams: u32,
    /// Packets written, all streams together.
    pub packets: u64,
    /// Total size of the stream files, bytes.
    pub stream_bytes: u64,
    /// Size of the metadata file, bytes.
    pub metadata_bytes: u64,
    /// Events written with the compact header.
    pub compact_headers: u64,
    /// Events written with the extended header.
    pub extended_headers: u64,
    /// Clock value (ns, without offset) of the first event.
    pub first_timestamp: u64,
    /// Clock value of the last event.
    pub last_timestamp: u64,
    /// `timestamp_end` of the last packets: the trace's stop time.
    pub stop_timestamp: u64,
    /// The clock offset written in the metadata (ns since the epoch at
    /// clock value 0).
    pub clock_offset: u64,
    /// The trace UUID (also in every packet header).
    pub trace_uuid: [u8; 16],
    /// Threads that exist at some point: init, kernel threads, the session
    /// daemon, the user threads and the forked processes.
    pub threads: u32,
    /// Short-lived processes forked.
    pub forks: u64,
    /// Short-lived processes that exited.
    pub exits: u64,
}

impl Summary {
    /// Events written with this name (0 for unknown names).
    pub fn count(&self, name: &str) -> u64 {
        self.event_counts
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |&(_, c)| c)
    }
}

/// Names of the event classes the generator declares, in id order.
pub fn event_names() -> impl Iterator<Item = &'static str> {
    catalog::EVENTS.iter().map(|e| e.name)
}

fn validate(cfg: &GeneratorConfig) -> Result<(), GenError> {
    let bad = |m: String| Err(GenError::InvalidConfig(m));
    if !(1..=1024).contains(&cfg.cpus) {
        return bad(format!("cpus must be in 1..=1024, not {}", cfg.cpus));
    }
    if cfg.processes == 0 || cfg.threads_per_process == 0 {
        return bad("processes and threads_per_process must be at least 1".into());
    }
    if u64::from(cfg.processes) * u64::from(cfg.threads_per_process) > 1_000_000 {
        return bad("at most 1,000,000 user threads".into());
    }
    if cfg.events == 0 {
        return bad("events must be at least 1".into());
    }
    if cfg.packet_size < 4096 || cfg.packet_size & 4095 != 0 {
        return bad(format!(
            "packet_size must be a multiple of 4096, at least 4096, not {}",
            cfg.packet_size
        ));
    }
    if !(0.0..=1.0).contains(&cfg.fork_rate) {
        return bad(format!("fork_rate must be in 0..=1, not {}", cfg.fork_rate));
    }
    if cfg.max_bytes == Some(0) {
        return bad("max_bytes must be positive".into());
    }
    Ok(())
}

/// Readies `dir`: creates it, or checks that it is empty, or (with
/// `overwrite`) removes the files a previous run would have left, so no
/// stale stream of a run with more CPUs survives.
fn prepare_dir(dir: &Path, overwrite: bool) -> Result<(), GenError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let entries: Vec<fs::DirEntry> = fs::read_dir(dir)
        .map_err(io_err(dir))?
        .collect::<Result<_, _>>()
        .map_err(io_err(dir))?;
    if entries.is_empty() {
        return Ok(());
    }
    if !overwrite {
        return Err(GenError::NotEmpty(dir.to_path_buf()));
    }
    let ours = |name: &str| name == "metadata" || name.starts_with("channel0_");
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if ours(&name) && path.is_file() {
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
    }
    let index = dir.join("index");
    if index.is_dir() {
        for e in fs::read_dir(&index).map_err(io_err(&index))? {
            let e = e.map_err(io_err(&index))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if name.starts_with("channel0_") && name.ends_with(".idx") && path.is_file() {
                fs::remove_file(&path).map_err(io_err(&path))?;
            }
        }
    }
    Ok(())
}

fn uuid_from(state: &mut u64) -> [u8; 16] {
    let mut u = [0u8; 16];
    u[..8].copy_from_slice(&splitmix64(state).to_le_bytes());
    u[8..].copy_from_slice(&splitmix64(state).to_le_bytes());
    // A version-4, RFC 4122 variant UUID, like LTTng's random session UUIDs.
    u[6] = (u[6] & 0x0F) | 0x40;
    u[8] = (u[8] & 0x3F) | 0x80;
    u
}

/// `YYYYmmddTHHMMSS+0000` for a Unix time in seconds (LTTng's
/// `trace_creation_datetime` format).
fn iso8601_basic(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let secs = unix_secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}+0000",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Generates a trace into `out_dir` (created if missing; it must be empty
/// unless `config.overwrite`). Returns what was written.
pub fn generate(config: &GeneratorConfig, out_dir: &Path) -> Result<Summary, GenError> {
    validate(config)?;
    prepare_dir(out_dir, config.overwrite)?;

    let mut seed_state = config.seed;
    let trace_uuid = uuid_from(&mut seed_state);
    let clock_uuid = uuid_from(&mut seed_state);
    // Monotonic clock value at the trace start: about an hour of uptime.
    let start_ts = 3_600_000_000_000 + splitmix64(&mut seed_state) % 1_000_000_000_000;
    let clock_offset = config.start_time_unix_ns.saturating_sub(start_ts);

    let creation = iso8601_basic(config.start_time_unix_ns / 1_000_000_000);
    let text = metadata::render(&metadata::MetadataParams {
        trace_uuid,
        clock_uuid,
        hostname: &config.hostname,
        trace_name: &config.trace_name,
        creation_datetime: &creation,
        clock_offset,
    });
    let meta_path = out_dir.join("metadata");
    fs::write(&meta_path, &text).map_err(io_err(&meta_path))?;

    let index_dir = out_dir.join("index");
    if config.write_index {
        fs::create_dir_all(&index_dir).map_err(io_err(&index_dir))?;
    }
    let packet_size = config.packet_size as usize;
    let mut streams = Vec::with_capacity(config.cpus as usize);
    for cpu in 0..config.cpus {
        let name = format!("channel0_{cpu}");
        let path = out_dir.join(&name);
        let data = File::create(&path).map_err(io_err(&path))?;
        let index = if config.write_index {
            let p = index_dir.join(format!("{name}.idx"));
            Some(File::create(&p).map_err(io_err(&p))?)
        } else {
            None
        };
        let s = stream::Stream::new(cpu, data, index, &trace_uuid, packet_size, start_ts)
            .map_err(io_err(&path))?;
        streams.push(s);
    }
    // Every stream starts with an open packet holding just its header.
    let initial_bytes = u64::from(config.cpus) * stream::PACKET_HEADER_LEN as u64;

    let params = sim::SimParams {
        cpus: config.cpus,
        processes: config.processes,
        threads_per_process: config.threads_per_process,
        max_events: config.events,
        max_bytes: config.max_bytes.unwrap_or(u64::MAX),
        seed: config.seed,
        start_ts,
        fork_rate: config.fork_rate,
    };
    let (outcome, stats) = sim::Sim::new(params, streams, initial_bytes)
        .run()
        .map_err(io_err(out_dir))?;

    Ok(Summary {
        events: outcome.events,
        event_counts: catalog::EVENTS
            .iter()
            .zip(&outcome.counts)
            .map(|(e, &n)| (e.name, n))
            .collect(),
        streams: config.cpus,
        packets: stats.iter().map(|s| s.packets).sum(),
        stream_bytes: stats.iter().map(|s| s.bytes).sum(),
        metadata_bytes: text.len() as u64,
        compact_headers: stats.iter().map(|s| s.compact).sum(),
        extended_headers: stats.iter().map(|s| s.extended).sum(),
        first_timestamp: outcome.first_ts,
        last_timestamp: outcome.last_ts,
        stop_timestamp: outcome.stop_ts,
        clock_offset,
        trace_uuid,
        threads: outcome.threads,
        forks: outcome.forks,
        exits: outcome.exits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_datetime() {
        assert_eq!(iso8601_basic(0), "19700101T000000+0000");
        assert_eq!(iso8601_basic(1_700_000_000), "20231114T221320+0000");
        assert_eq!(iso8601_basic(951_827_696), "20000229T123456+0000");
    }

    #[test]
    fn uuids_are_v4() {
        let mut s = 9;
        let u = uuid_from(&mut s);
        assert_eq!(u[6] >> 4, 4);
        assert_eq!(u[8] >> 6, 2);
        assert_ne!(u, uuid_from(&mut s));
    }

    #[test]
    fn rejects_bad_configs() {
        let dir = tempfile::tempdir().unwrap();
        let base = GeneratorConfig {
            events: 10,
            ..GeneratorConfig::default()
        };
        for bad in [
            GeneratorConfig {
                cpus: 0,
                ..base.clone()
            },
            GeneratorConfig {
                processes: 0,
                ..base.clone()
            },
            GeneratorConfig {
                packet_size: 5000,
                ..base.clone()
            },
            GeneratorConfig {
                packet_size: 2048,
                ..base.clone()
            },
            GeneratorConfig {
                events: 0,
                ..base.clone()
            },
            GeneratorConfig {
                fork_rate: 1.5,
                ..base.clone()
            },
        ] {
            assert!(matches!(
                generate(&bad, dir.path()),
                Err(GenError::InvalidConfig(_))
            ));
        }
        // Nothing was written for an invalid config.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn refuses_non_empty_dir_unless_overwriting() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("notes.txt"), "keep me").unwrap();
        let cfg = GeneratorConfig {
            events: 500,
            cpus: 2,
            ..GeneratorConfig::default()
        };
        assert!(matches!(
            generate(&cfg, dir.path()),
            Err(GenError::NotEmpty(_))
        ));
        // Overwriting a run with more CPUs leaves no stale stream behind.
        let wide = GeneratorConfig {
            cpus: 4,
            overwrite: true,
            ..cfg.clone()
        };
        generate(&wide, dir.path()).unwrap();
        assert!(dir.path().join("channel0_3").exists());
        let narrow = GeneratorConfig {
            overwrite: true,
            ..cfg
        };
        let s = generate(&narrow, dir.path()).unwrap();
        assert_eq!(s.events, 500);
        assert!(!dir.path().join("channel0_3").exists());
        assert!(!dir.path().join("index/channel0_3.idx").exists());
        assert!(dir.path().join("channel0_1").exists());
        assert_eq!(
            fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "keep me"
        );
    }

    #[test]
    fn deterministic_per_seed() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let c = tempfile::tempdir().unwrap();
        let cfg = GeneratorConfig {
            events: 20_000,
            cpus: 3,
            packet_size: 16384,
            ..GeneratorConfig::default()
        };
        generate(&cfg, a.path()).unwrap();
        generate(&cfg, b.path()).unwrap();
        generate(&GeneratorConfig { seed: 2, ..cfg }, c.path()).unwrap();
        for name in [
            "metadata",
            "channel0_0",
            "channel0_1",
            "channel0_2",
            "index/channel0_2.idx",
        ] {
            let x = fs::read(a.path().join(name)).unwrap();
            assert_eq!(x, fs::read(b.path().join(name)).unwrap(), "{name}");
            if name.starts_with("channel0_0") {
                assert_ne!(x, fs::read(c.path().join(name)).unwrap(), "{name}");
            }
        }
    }

    #[test]
    fn stops_at_exact_event_count_and_byte_cap() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = GeneratorConfig {
            events: 12_345,
            cpus: 2,
            ..GeneratorConfig::default()
        };
        let s = generate(&cfg, dir.path()).unwrap();
        assert_eq!(s.events, 12_345);
        assert_eq!(s.event_counts.iter().map(|&(_, n)| n).sum::<u64>(), 12_345);
        assert_eq!(s.compact_headers + s.extended_headers, 12_345);

        let dir = tempfile::tempdir().unwrap();
        let cap = 300_000;
        let cfg = GeneratorConfig {
            events: u64::MAX,
            max_bytes: Some(cap),
            cpus: 2,
            packet_size: 8192,
            ..GeneratorConfig::default()
        };
        let s = generate(&cfg, dir.path()).unwrap();
        let on_disk: u64 = (0..2)
            .map(|c| {
                fs::metadata(dir.path().join(format!("channel0_{c}")))
                    .unwrap()
                    .len()
            })
            .sum();
        assert_eq!(on_disk, s.stream_bytes);
        assert!(
            s.stream_bytes >= cap && s.stream_bytes < cap + 2 * 8192,
            "{}",
            s.stream_bytes
        );
    }
}
