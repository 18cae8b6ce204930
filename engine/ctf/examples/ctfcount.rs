//! Counts the messages of a traceset per event name and times the read.
//!
//! `cargo run --release -p traceloom-ctf --example ctfcount -- PATH...`

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use traceloom_ctf::{Message, Traceset};

fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let t0 = Instant::now();
    let ts = match Traceset::open(&paths) {
        Ok(ts) => ts,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let t_open = t0.elapsed();
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    let (mut events, mut lost_ev, mut lost_pk, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let t1 = Instant::now();
    let mut cur = ts.messages();
    while let Some(m) = cur.next() {
        match m {
            Ok(Message::Event(e)) => {
                events += 1;
                if let Some(n) = names.get_mut(e.name()) {
                    *n += 1;
                } else {
                    names.insert(e.name().to_string(), 1);
                }
            }
            Ok(Message::DiscardedEvents(d)) => {
                lost_ev += 1;
                eprintln!(
                    "discarded events: {:?} [{:?}, {:?}]",
                    d.count, d.begin_ns, d.end_ns
                );
            }
            Ok(Message::DiscardedPackets(d)) => {
                lost_pk += 1;
                eprintln!(
                    "discarded packets: {:?} [{:?}, {:?}]",
                    d.count, d.begin_ns, d.end_ns
                );
            }
            Err(e) => {
                errors += 1;
                eprintln!("error: {e}");
            }
        }
    }
    let t_read = t1.elapsed();
    for (n, c) in &names {
        println!("{c:>10} {n}");
    }
    println!("{events:>10} events");
    println!(
        "open+index {:?}, read {:?} ({:.1} M events/s), {} bytes, {lost_ev} discarded-events msgs, {lost_pk} discarded-packets msgs, {errors} errors",
        t_open,
        t_read,
        events as f64 / t_read.as_secs_f64() / 1e6,
        ts.total_bytes()
    );
}
