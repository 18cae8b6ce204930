//! Prints one line per message: `seconds.nanoseconds name cpu_id`, the
//! shape used to compare the merge order with babeltrace2's
//! (`babeltrace2 --clock-seconds`).
//!
//! `cargo run --release -p traceloom-ctf --example ctforder -- PATH...`

use std::io::Write;
use std::path::PathBuf;

use traceloom_ctf::{Message, Traceset};

fn fmt_ns(ns: Option<i64>) -> String {
    match ns {
        Some(ns) => format!(
            "{}.{:09}",
            ns.div_euclid(1_000_000_000),
            ns.rem_euclid(1_000_000_000)
        ),
        None => "?".into(),
    }
}

fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let ts = Traceset::open(&paths).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let mut cur = ts.messages();
    while let Some(m) = cur.next() {
        let r = match m {
            Ok(Message::Event(e)) => {
                let cpu = e
                    .cpu_id()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "-".into());
                writeln!(out, "{} {} {}", fmt_ns(e.timestamp_ns()), e.name(), cpu)
            }
            Ok(Message::DiscardedEvents(d)) => writeln!(
                out,
                "LOST-EVENTS {:?} {} {}",
                d.count,
                fmt_ns(d.begin_ns),
                fmt_ns(d.end_ns)
            ),
            Ok(Message::DiscardedPackets(d)) => writeln!(
                out,
                "LOST-PACKETS {:?} {} {}",
                d.count,
                fmt_ns(d.begin_ns),
                fmt_ns(d.end_ns)
            ),
            Err(e) => writeln!(out, "ERROR {e}"),
        };
        if r.is_err() {
            break;
        }
    }
}
