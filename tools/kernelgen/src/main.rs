//! `traceloom-kernelgen`: writes a synthetic LTTng kernel trace.
//!
//! ```text
//! traceloom-kernelgen OUT_DIR --cpus 4 --events 1M --packet-size 1MiB
//! traceloom-kernelgen sample --events 1G --max-bytes 2MiB --packet-size 64KiB
//! ```

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use traceloom_kernelgen::{generate, GenError, GeneratorConfig, Summary};

/// Generate a synthetic CTF 1.8 kernel trace in LTTng's layout.
#[derive(Parser, Debug)]
#[command(name = "traceloom-kernelgen", version)]
struct Args {
    /// Output directory (created if missing; must be empty unless --force).
    out_dir: PathBuf,
    /// Number of CPUs (one stream file each).
    #[arg(long, default_value_t = 4)]
    cpus: u32,
    /// Long-lived user processes.
    #[arg(long, default_value_t = 16)]
    processes: u32,
    /// Threads per process.
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Number of events; accepts k/M/G suffixes (decimal: 2M = 2,000,000).
    #[arg(long, default_value = "1M", value_parser = parse_count)]
    events: u64,
    /// Stop once the stream files reach this size; accepts K/M/G or
    /// KiB/MiB/GiB suffixes (both binary: 2M = 2 MiB).
    #[arg(long, value_parser = parse_size)]
    max_bytes: Option<u64>,
    /// Packet size in bytes, a multiple of 4096; K/M suffixes accepted.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    packet_size: u64,
    /// Seed of the story.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `env.hostname` in the metadata.
    #[arg(long, default_value = "traceloom-synth")]
    hostname: String,
    /// Probability that a thread's next action is forking a short-lived
    /// process.
    #[arg(long, default_value_t = 0.0005)]
    fork_rate: f64,
    /// Do not write index/*.idx files.
    #[arg(long)]
    no_index: bool,
    /// Write into a non-empty directory, replacing a previous trace.
    #[arg(long)]
    force: bool,
}

fn split_suffix(s: &str) -> (&str, &str) {
    let at = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (&s[..at], s[at..].trim())
}

/// A count with an optional decimal suffix: `1500`, `200k`, `3M`, `1G`.
fn parse_count(s: &str) -> Result<u64, String> {
    let (num, suffix) = split_suffix(s.trim());
    let n: u64 = num.parse().map_err(|_| format!("not a count: {s:?}"))?;
    let mult = match suffix {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => return Err(format!("unknown suffix in {s:?} (use k, M or G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("too large: {s:?}"))
}

/// A size in bytes with an optional binary suffix: `4096`, `64K`, `1MiB`, `2G`.
fn parse_size(s: &str) -> Result<u64, String> {
    let (num, suffix) = split_suffix(s.trim());
    let n: u64 = num.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let mult = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("unknown suffix in {s:?} (use K, M or G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("too large: {s:?}"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Ok(packet_size) = u32::try_from(args.packet_size) else {
        eprintln!("traceloom-kernelgen: packet size too large");
        return ExitCode::FAILURE;
    };
    let config = GeneratorConfig {
        cpus: args.cpus,
        processes: args.processes,
        threads_per_process: args.threads,
        events: args.events,
        max_bytes: args.max_bytes,
        packet_size,
        seed: args.seed,
        hostname: args.hostname,
        fork_rate: args.fork_rate,
        write_index: !args.no_index,
        overwrite: args.force,
        ..GeneratorConfig::default()
    };
    let started = Instant::now();
    let summary = match generate(&config, &args.out_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("traceloom-kernelgen: {e}");
            if matches!(e, GenError::NotEmpty(_)) {
                eprintln!("(use --force to replace the trace in it)");
            }
            return ExitCode::FAILURE;
        }
    };
    let secs = started.elapsed().as_secs_f64();
    // A closed stdout (`| head`) is not worth a panic: the trace is written.
    let _ = report(&summary, &args.out_dir, secs);
    ExitCode::SUCCESS
}

fn report(summary: &Summary, out_dir: &Path, secs: f64) -> io::Result<()> {
    let mut out = io::stdout().lock();
    let mb = summary.stream_bytes as f64 / 1e6;
    writeln!(
        out,
        "wrote {} events in {} packets, {:.1} MB in {} streams, to {}",
        summary.events,
        summary.packets,
        mb,
        summary.streams,
        out_dir.display()
    )?;
    writeln!(
        out,
        "{:.2} s: {:.0} MB/s, {:.2} M events/s; headers: {} compact, {} extended",
        secs,
        mb / secs,
        summary.events as f64 / secs / 1e6,
        summary.compact_headers,
        summary.extended_headers
    )?;
    writeln!(
        out,
        "threads: {} ({} short-lived forked, {} exited); traced time: {:.3} s",
        summary.threads,
        summary.forks,
        summary.exits,
        (summary.last_timestamp - summary.first_timestamp) as f64 / 1e9
    )?;
    for (name, n) in &summary.event_counts {
        if *n > 0 {
            writeln!(out, "  {n:>12}  {name}")?;
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_sizes() {
        assert_eq!(parse_count("1500"), Ok(1500));
        assert_eq!(parse_count("200k"), Ok(200_000));
        assert_eq!(parse_count("3M"), Ok(3_000_000));
        assert!(parse_count("3X").is_err());
        assert!(parse_count("").is_err());
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("1.5M").is_err());
    }

    #[test]
    fn cli_parses() {
        let a = Args::try_parse_from([
            "kg",
            "out",
            "--cpus",
            "8",
            "--events",
            "2M",
            "--max-bytes",
            "2MiB",
        ])
        .unwrap();
        assert_eq!(a.cpus, 8);
        assert_eq!(a.events, 2_000_000);
        assert_eq!(a.max_bytes, Some(2 << 20));
        assert_eq!(a.packet_size, 1 << 20);
    }
}
