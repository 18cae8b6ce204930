//! Prints the packet index of a traceset (`-q`: only the timing).
//!
//! `cargo run --release -p traceloom-ctf --example ctfindex -- [-q] PATH...`

use std::path::PathBuf;
use std::time::Instant;

use traceloom_ctf::Traceset;

fn main() {
    let mut quiet = false;
    let mut paths: Vec<PathBuf> = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "-q" {
            quiet = true;
        } else {
            paths.push(a.into());
        }
    }
    let t0 = Instant::now();
    let ts = Traceset::open(&paths).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let el = t0.elapsed();
    let mut n = 0;
    for s in ts.streams() {
        if !quiet {
            println!(
                "stream {} trace {} class {} id {} files {:?}",
                s.index, s.trace, s.class_id, s.id, s.files
            );
        }
        for p in ts.packets(s.index) {
            n += 1;
            if !quiet {
                println!(
                    "  file {} off {} size {} content {} ts {:?}..{:?} disc {:?} seq {:?} cpu {:?}",
                    p.file,
                    p.offset,
                    p.size,
                    p.content_bits,
                    p.ts_begin,
                    p.ts_end,
                    p.events_discarded,
                    p.seq_num,
                    p.cpu_id
                );
            }
        }
    }
    let bytes = ts.total_bytes();
    println!(
        "{n} packets, {bytes} bytes, open+index {el:?} ({:.2} GB/s)",
        bytes as f64 / el.as_secs_f64() / 1e9
    );
}
