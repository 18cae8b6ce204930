//! What every benchmark measures with: medians, CPU time, anonymous
//! resident memory, the machine's load, and the report's PASS/FAIL lines.

use std::io::{self, Write};
use std::time::Duration;

use crate::BenchError;

/// The median of some durations (the mean of the two middle ones for an
/// even count); zero for none.
pub fn median(times: &[Duration]) -> Duration {
    let mut t = times.to_vec();
    t.sort();
    match t.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => t[n / 2],
        n => (t[n / 2 - 1] + t[n / 2]) / 2,
    }
}

/// User + system CPU time of this process (`who` = `RUSAGE_SELF`) or of its
/// waited-for children (`RUSAGE_CHILDREN`).
pub fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// `RssAnon` of a `/proc/PID/status` text, in bytes.
pub fn parse_rss_anon(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("RssAnon:"))?;
    let mut words = line["RssAnon:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => Some(n * 1024),
        _ => None,
    }
}

/// This process's anonymous resident memory, in bytes.
pub fn rss_anon_bytes() -> Option<u64> {
    parse_rss_anon(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// This process's anonymous resident memory, read again and again at
/// little cost: `/proc/self/statm` kept open and read from its start each
/// time (no path lookup, and a line of seven numbers rather than
/// `status`'s fifty lines). Resident minus shared pages is what `status`
/// calls `RssAnon` (shared pages are the file and shared-memory ones).
#[derive(Debug)]
pub struct RssProbe {
    statm: std::fs::File,
    page_bytes: u64,
}

impl RssProbe {
    /// `None` where `/proc/self/statm` cannot be opened.
    pub fn open() -> Option<Self> {
        // SAFETY: `sysconf` only reads a system constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(RssProbe {
            statm: std::fs::File::open("/proc/self/statm").ok()?,
            page_bytes: u64::try_from(page).ok().filter(|&p| p > 0)?,
        })
    }

    /// The anonymous resident memory now, in bytes.
    pub fn bytes(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 256];
        let n = self.statm.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        let mut pages = text
            .split_whitespace()
            .skip(1)
            .map(|w| w.parse::<u64>().ok());
        let (resident, shared) = (pages.next()??, pages.next()??);
        Some(resident.saturating_sub(shared) * self.page_bytes)
    }
}

/// A line of the report: `label: text   target ...   PASS|FAIL`.
pub fn verdict(
    out: &mut dyn Write,
    label: &str,
    text: &str,
    target: &str,
    ok: bool,
) -> io::Result<()> {
    writeln!(
        out,
        "{label:<22}{text}   (target {target})   {}",
        if ok { "PASS" } else { "FAIL" }
    )
}

/// A duration in seconds, three decimals.
pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// The runs' times in seconds, comma-separated.
pub fn list(times: &[Duration]) -> String {
    times
        .iter()
        .map(|t| format!("{:.3}", t.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The machine's three load averages (`/proc/loadavg`), or "unknown".
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// `PASS` or `FAIL`.
pub fn pass_fail(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

/// Ends a report: its problems, the load average after the runs, and the
/// verdict — an error when a target was missed (`!ok`) or the
/// measurements disagree (`problems`).
pub fn conclude(out: &mut dyn Write, problems: &[String], ok: bool) -> Result<(), BenchError> {
    for p in problems {
        writeln!(out, "problem: {p}")?;
    }
    writeln!(out, "load average after: {}", load_average())?;
    out.flush()?;
    if problems.is_empty() && ok {
        Ok(())
    } else {
        Err(BenchError::Failed(
            "a target was missed or the measurements disagree (see above)".into(),
        ))
    }
}
