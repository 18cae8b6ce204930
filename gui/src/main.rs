//! The `traceloom` binary. For now the command line only
//! ([`traceloom_cli::main`]); the GTK viewer window will open from here when
//! no subcommand is given.

fn main() {
    traceloom_cli::main();
}
