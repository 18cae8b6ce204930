//! traceloom's benchmarks, out of the product: each measures one family of
//! performance targets on real or generated traces, side by side with the
//! reference tool where there is one, and prints every figure with PASS or
//! FAIL against its target (`docs/performance.md` lists the targets).
//!
//! * `traceloom-bench decode PATH...`: full decode against
//!   `babeltrace2 -o dummy`, packet index building, memory ([`decode`]);
//! * `traceloom-bench engine PATH...`: state computation with checkpoints,
//!   seeks, a cold `traceloom dump --begin` ([`engine`]);
//! * `traceloom-bench viewers PATH...`: control-flow and resources renders,
//!   whole-trace statistics, the analysis's memory ([`viewers`]), and the
//!   analysis store's rows ([`store`]);
//! * `traceloom-bench paje FILE.trace`: Pajé read and simulation against
//!   `pj_dump` ([`paje`]);
//! * `traceloom-bench vite FILE.trace`: ViTE's export against traceloom's,
//!   and the window's Pajé pass alone ([`vite`]);
//! * `traceloom-bench paje-store FILE.trace`: the Pajé pass's memory and
//!   its analysis store ([`paje_store`]).
//!
//! A missed target makes the command exit with status 1.

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

pub mod checksum;
pub mod decode;
pub mod engine;
pub mod measure;
pub mod paje;
pub mod paje_store;
pub mod sizes;
pub mod store;
pub mod viewers;
pub mod vite;

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The traces cannot be opened or read (the message names the file).
    #[error("{0}")]
    Trace(String),
    /// The benchmark could not run, missed a target, or its measurements
    /// disagree.
    #[error("benchmark: {0}")]
    Failed(String),
    /// The report could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `traceloom-bench`: traceloom's performance targets, measured.
#[derive(Debug, Parser)]
#[command(name = "traceloom-bench", version)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub what: BenchCommand,
}

/// The benchmarks.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchCommand {
    /// Full decode against `babeltrace2 -o dummy`, packet index building,
    /// and memory.
    Decode(decode::DecodeBenchArgs),
    /// State computation with checkpoints, seeks, a cold `dump --begin`,
    /// and the checkpoint cache size.
    Engine(engine::EngineBenchArgs),
    /// Pajé read and simulation against `pj_dump`, and memory.
    Paje(paje::PajeBenchArgs),
    /// Control flow and resources renders (full range, 1 ms windows),
    /// whole-trace statistics, and the analysis's memory.
    Viewers(viewers::ViewersBenchArgs),
    /// A Pajé trace: ViTE's export against traceloom's, and the window's
    /// Pajé pass alone.
    Vite(vite::ViteBenchArgs),
    /// The Pajé pass's memory, and the Pajé analysis store.
    PajeStore(paje_store::PajeStoreBenchArgs),
}

/// Runs the benchmark that `args` (the program name first) names, writing
/// its report to `out`. Argument errors come back as [`BenchError::Failed`]
/// with clap's message.
pub fn run<I, T>(args: I, out: &mut dyn Write) -> Result<(), BenchError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args = BenchArgs::try_parse_from(args).map_err(|e| BenchError::Failed(e.to_string()))?;
    match &args.what {
        BenchCommand::Decode(a) => decode::run_decode_bench(a, out),
        BenchCommand::Engine(a) => engine::run(a, out),
        BenchCommand::Paje(a) => paje::run(a, out),
        BenchCommand::PajeStore(a) => paje_store::run(a, out),
        BenchCommand::Viewers(a) => viewers::run(a, out),
        BenchCommand::Vite(a) => vite::run(a, out),
    }
}
