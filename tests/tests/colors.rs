//! `traceloom dump` colors like babeltrace2 on a color terminal.
//!
//! `BABELTRACE_TERM_COLOR=always` makes both programs behave as on a color
//! terminal even with piped output. It is set for the whole process, so this
//! binary holds this one test only.

mod common;

use common::*;

#[test]
fn colors_match_babeltrace2() {
    std::env::set_var("BABELTRACE_TERM_COLOR", "always");
    std::env::remove_var("BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD");
    parity_with(&["--clock-gmt"], &["lttng-ust/ust_pid"]);
    parity_with(
        &["--clock-gmt", "--names", "all", "--fields", "all"],
        &["tracecompass/hello-lost"],
    );
    parity_with(
        &["--clock-gmt", "--color", "never"],
        &["tracecompass/ctf-sequence-empty"],
    );
    // Enumerations with unknown values, floats, strings with escapes.
    let copy = PatchedCopy::new("tracecompass/funky_trace");
    let path = copy.0.to_str().unwrap();
    parity_with_abs(&["--clock-gmt"], path);
    parity_with_abs(&["--clock-gmt", "-n", "all", "-f", "all"], path);
    // The other rendering of bright colors.
    std::env::set_var("BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD", "0");
    parity_with(&["--clock-gmt"], &["tracecompass/hello-lost"]);
}
