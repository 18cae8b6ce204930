//! The `traceloom` binary: the command line when a subcommand (or
//! `--help`/`--version`) is given, otherwise the viewer window on the paths
//! given (`traceloom [PATH...]`).

use std::path::PathBuf;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if traceloom_gui::is_cli_invocation(&args) {
        traceloom_cli::main();
    } else {
        let paths: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
        std::process::exit(traceloom_gui::run_window(paths));
    }
}
