//! `traceloom-pajegen`: writes a synthetic Pajé trace of an MPI run.
//!
//! ```text
//! traceloom-pajegen run.trace --max-bytes 1GiB --seed 7
//! ```

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use traceloom_pajegen::{generate, GeneratorConfig};

/// Generate a synthetic Pajé trace (machines > nodes > MPI processes >
/// threads, with states, events, variables and links).
#[derive(Parser, Debug)]
#[command(name = "traceloom-pajegen", version)]
struct Args {
    /// Output file (replaced if it exists).
    out: PathBuf,
    /// Stop before the file reaches this size; accepts K/M/G or
    /// KiB/MiB/GiB suffixes (both binary: 2M = 2 MiB).
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    max_bytes: u64,
    /// Seed of the story.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Machines.
    #[arg(long, default_value_t = 4)]
    machines: u32,
    /// Nodes per machine.
    #[arg(long, default_value_t = 4)]
    nodes: u32,
    /// MPI processes per node.
    #[arg(long, default_value_t = 4)]
    procs: u32,
    /// Threads per process (the main thread included).
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Probability that a worker thread's step replaces it by a new thread.
    #[arg(long, default_value_t = 0.0002)]
    churn: f64,
}

fn split_suffix(s: &str) -> (&str, &str) {
    let at = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (&s[..at], s[at..].trim())
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
    let cfg = GeneratorConfig {
        machines: args.machines,
        nodes_per_machine: args.nodes,
        procs_per_node: args.procs,
        threads_per_proc: args.threads,
        max_bytes: args.max_bytes,
        seed: args.seed,
        thread_churn: args.churn,
    };
    let file = match File::create(&args.out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("traceloom-pajegen: {}: {e}", args.out.display());
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let s = match generate(&cfg, file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("traceloom-pajegen: {}: {e}", args.out.display());
            return ExitCode::FAILURE;
        }
    };
    let secs = started.elapsed().as_secs_f64();
    let mut out = io::stdout().lock();
    // A closed stdout (`| head`) is not worth a panic: the trace is written.
    let _ = writeln!(
        out,
        "wrote {} ({:.1} MB, {} lines) in {secs:.2} s\n\
         containers: {} created, {} destroyed; state lines: {}; events: {}; \
         variable lines: {}; links: {}; traced time: {:.3} s",
        args.out.display(),
        s.bytes as f64 / 1e6,
        s.lines,
        s.containers,
        s.destroyed,
        s.state_lines,
        s.events,
        s.variable_lines,
        s.links,
        s.last_time_ns as f64 / 1e9
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("3X").is_err());
    }
}
