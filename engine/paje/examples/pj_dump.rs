//! `cargo run --example pj_dump -- [-l PREC] [-h] FILE`: prints what
//! `pj_dump` prints; diagnostics go to stderr.

use std::process::ExitCode;

use traceloom_paje::{pj_dump, PjDumpOptions};

fn main() -> ExitCode {
    let mut opts = PjDumpOptions::default();
    let mut file = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" => opts.header = true,
            "-l" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => opts.float_precision = p,
                None => {
                    eprintln!("-l needs a number");
                    return ExitCode::FAILURE;
                }
            },
            _ => file = Some(a),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: pj_dump [-l PREC] [-h] FILE");
        return ExitCode::FAILURE;
    };
    match pj_dump(&file, &opts, std::io::stdout().lock()) {
        Ok(diags) => {
            for d in diags.items() {
                eprintln!("{d}");
            }
            if diags.error_count() > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
