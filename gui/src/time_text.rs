//! Times as the time bar writes and reads them (UTC time of day with
//! nanoseconds), shared by the tab and its models.

use traceloom_base::Time;
use traceloom_viewers::time::{format_absolute, AbsoluteTimeFormat};

/// Writes a time as the time bar shows it.
pub fn format_time(t: Time) -> String {
    format_absolute(t, AbsoluteTimeFormat::ClockUtc, 9)
}

/// Parses a time typed in the time bar: `HH:MM[:SS[.ns]]` (UTC time of day
/// on the trace's first day), `YYYY-MM-DD HH:MM:SS.ns`, or seconds since
/// the Epoch `SEC[.ns]` (the command line's `--begin` syntax).
pub fn parse_time(text: &str, first: Time) -> Result<Time, String> {
    let spec = traceloom_base::timespec::parse(text.trim(), true).map_err(|e| e.to_string())?;
    spec.resolve(first, true)
        .ok_or_else(|| format!("{text}: not a representable time"))
}
