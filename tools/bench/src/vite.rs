//! `traceloom-bench vite TRACE [--runs N]`: traceloom against ViTE on a
//! Pajé trace (issue 21: traceloom loads a 200 MB Pajé trace faster than
//! ViTE does).
//!
//! In one run of the command, on the same file, `N` times each
//! (interleaved, so that a change of load affects all alike), it times and
//! reports the medians of:
//!
//! 1. ViTE's export, `QT_QPA_PLATFORM=offscreen vite -f TRACE -e OUT.svg`
//!    (Debian package `vite`), as a subprocess: its parser, its model and
//!    an 800 × 600 SVG;
//! 2. traceloom's export, `traceloom export TRACE -o OUT.svg` (the binary
//!    next to this one, or `--traceloom`), as a subprocess: the window's
//!    Pajé pass on the scheduler, and a 1,920 px SVG of the whole trace;
//! 3. that pass alone, in this process (`PajeData::open`): what the
//!    window reads before its views are complete — the "headless read
//!    time" of the window's open.
//!
//! It prints the three medians, ViTE's time over traceloom's export time
//! (PASS when above 1) and the load average; a failing program makes it
//! fail.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use traceloom_viewers::model::PajeData;

use crate::measure::{conclude, list, load_average, median, secs, verdict};
use crate::BenchError;

/// Arguments of `traceloom-bench vite`.
#[derive(Debug, Clone, Args)]
pub struct ViteBenchArgs {
    /// The Pajé trace.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// How many times each measurement is taken (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// The ViTE program.
    #[arg(long, default_value = "vite", value_name = "PROGRAM")]
    pub vite: PathBuf,
    /// The traceloom program (default: `traceloom` next to this binary).
    #[arg(long, value_name = "PROGRAM")]
    pub traceloom: Option<PathBuf>,
}

/// Runs `cmd`, its output discarded; its wall time, or why it failed.
fn timed(what: &str, cmd: &mut Command) -> Result<Duration, BenchError> {
    let start = Instant::now();
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| BenchError::Failed(format!("{what}: {e}")))?;
    let t = start.elapsed();
    if !out.status.success() {
        return Err(BenchError::Failed(format!(
            "{what}: {} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(t)
}

fn traceloom_program(args: &ViteBenchArgs) -> PathBuf {
    args.traceloom.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("traceloom")))
            .unwrap_or_else(|| PathBuf::from("traceloom"))
    })
}

fn out_dir() -> Result<PathBuf, BenchError> {
    let d = std::env::temp_dir().join(format!("traceloom-bench-vite-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| BenchError::Failed(format!("{}: {e}", d.display())))?;
    Ok(d)
}

fn pass(trace: &Path) -> Result<Duration, BenchError> {
    let start = Instant::now();
    let (data, _) = PajeData::open(trace).map_err(|e| BenchError::Trace(e.to_string()))?;
    let t = start.elapsed();
    if !data.complete {
        return Err(BenchError::Failed("the Pajé pass did not complete".into()));
    }
    drop(data);
    Ok(t)
}

/// Runs the benchmark (see the module doc).
pub fn run(args: &ViteBenchArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let dir = out_dir()?;
    let tl = traceloom_program(args);
    // ViTE runs in `dir`: the trace's path must not depend on the cwd.
    let trace = std::fs::canonicalize(&args.trace)
        .map_err(|e| BenchError::Trace(format!("{}: {e}", args.trace.display())))?;
    let args = &ViteBenchArgs {
        trace,
        ..args.clone()
    };
    let size = std::fs::metadata(&args.trace)
        .map_err(|e| BenchError::Trace(format!("{}: {e}", args.trace.display())))?
        .len();
    writeln!(
        out,
        "trace: {} ({:.1} MB), {} runs, load average before: {}",
        args.trace.display(),
        size as f64 / 1e6,
        args.runs,
        load_average()
    )?;
    let (mut vite, mut export, mut headless) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.runs {
        vite.push(timed(
            "vite",
            Command::new(&args.vite)
                // ViTE writes a log.txt where it runs.
                .current_dir(&dir)
                .env("QT_QPA_PLATFORM", "offscreen")
                .arg("-f")
                .arg(&args.trace)
                .arg("-e")
                .arg(dir.join("vite.svg")),
        )?);
        export.push(timed(
            "traceloom export",
            Command::new(&tl)
                .arg("export")
                .arg(&args.trace)
                .arg("-o")
                .arg(dir.join("traceloom.svg")),
        )?);
        headless.push(pass(&args.trace)?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (v, e, h) = (median(&vite), median(&export), median(&headless));
    writeln!(
        out,
        "ViTE export (vite -e):   {} median ({})",
        secs(v),
        list(&vite)
    )?;
    writeln!(
        out,
        "traceloom export:        {} median ({})",
        secs(e),
        list(&export)
    )?;
    writeln!(
        out,
        "traceloom pass alone:    {} median ({})",
        secs(h),
        list(&headless)
    )?;
    let ratio = v.as_secs_f64() / e.as_secs_f64().max(1e-9);
    verdict(
        out,
        "ViTE / traceloom:",
        &format!("{ratio:.2}×"),
        "> 1: traceloom faster",
        ratio > 1.0,
    )?;
    conclude(out, &[], ratio > 1.0)
}
