//! The `traceloom` binary: the command line when a subcommand (or
//! `--help`/`--version`) is given, otherwise the viewer window on the paths
//! given (`traceloom [PATH...]`). It only dispatches: the commands are
//! `traceloom-cli`, the window `traceloom-gui`.

use std::ffi::OsString;
use std::path::PathBuf;

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if is_cli_invocation(&args, &traceloom_cli::subcommand_names()) {
        traceloom_cli::main();
    } else {
        let paths: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
        std::process::exit(traceloom_gui::run_window(paths));
    }
}

/// Whether `args` (without the program name) are for the command line: one
/// of `subcommands` first, or `--help`/`--version` anywhere before a `--`.
fn is_cli_invocation(args: &[OsString], subcommands: &[String]) -> bool {
    if let Some(first) = args.first().and_then(|a| a.to_str()) {
        if subcommands.iter().any(|n| n == first) {
            return true;
        }
    }
    args.iter()
        .map_while(|a| a.to_str().filter(|s| *s != "--"))
        .any(|a| matches!(a, "-h" | "--help" | "-V" | "--version"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn cli_or_window() {
        let names = traceloom_cli::subcommand_names();
        let cli = |v: &[&str]| is_cli_invocation(&os(v), &names);
        assert!(cli(&["dump", "x"]));
        assert!(cli(&["count"]));
        assert!(cli(&["--help"]));
        assert!(cli(&["trace", "--version"]));
        assert!(!cli(&[]));
        assert!(!cli(&["/traces/k"]));
        assert!(!cli(&["--", "--help"]));
        assert!(!cli(&["bench"]), "the benchmarks are traceloom-bench");
    }
}
