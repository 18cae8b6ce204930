//! Reading throughput: opens a traceset, reads every message (all fields
//! decoded), and reports events/s. Compare with
//! `babeltrace2 PATH -o dummy` (CPU time, `/usr/bin/time`).
//!
//! `cargo run --release -p traceloom-ctf --example ctfbench -- PATH... [-n RUNS]`

use std::path::PathBuf;
use std::time::Instant;

use traceloom_ctf::{Message, Traceset};

/// CPU time of this thread in ns (`/proc/thread-self/schedstat`), so that
/// the figure does not depend on other load on the machine.
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn main() {
    let mut runs = 3;
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-n" {
            runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
        } else {
            paths.push(a.into());
        }
    }
    let t0 = Instant::now();
    let ts = Traceset::open(&paths).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    println!("open+index: {:?}, {} bytes", t0.elapsed(), ts.total_bytes());
    for _ in 0..runs {
        let t = Instant::now();
        let c0 = cpu_ns();
        let (mut events, mut values, mut other) = (0u64, 0usize, 0u64);
        let mut cur = ts.messages();
        while let Some(m) = cur.next() {
            match m {
                Ok(Message::Event(e)) => {
                    events += 1;
                    values += e
                        .scope_values(traceloom_tsdl::ir::Scope::EventPayload)
                        .len();
                }
                _ => other += 1,
            }
        }
        let el = t.elapsed();
        let cpu = match (c0, cpu_ns()) {
            (Some(a), Some(b)) => format!(
                ", CPU {:.3} s: {:.2} M events/s",
                (b - a) as f64 / 1e9,
                events as f64 / ((b - a) as f64 / 1e9) / 1e6
            ),
            _ => String::new(),
        };
        println!(
            "{events} events ({values} payload values, {other} other) in {el:?}: {:.2} M events/s (wall){cpu}",
            events as f64 / el.as_secs_f64() / 1e6
        );
    }
}
