//! The `traceloom-bench` binary: see the library's documentation.

use std::io::{self, Write};

use clap::Parser;
use traceloom_bench::{BenchArgs, BenchCommand};

fn main() {
    let args = BenchArgs::parse();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match &args.what {
        BenchCommand::Decode(a) => traceloom_bench::decode::run_decode_bench(a, &mut out),
        BenchCommand::Engine(a) => traceloom_bench::engine::run(a, &mut out),
        BenchCommand::Paje(a) => traceloom_bench::paje::run(a, &mut out),
        BenchCommand::PajeStore(a) => traceloom_bench::paje_store::run(a, &mut out),
        BenchCommand::Viewers(a) => traceloom_bench::viewers::run(a, &mut out),
        BenchCommand::Vite(a) => traceloom_bench::vite::run(a, &mut out),
    };
    let _ = out.flush();
    if let Err(e) = result {
        eprintln!("traceloom-bench: error: {e}");
        std::process::exit(1);
    }
}
