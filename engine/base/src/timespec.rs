//! `--begin` / `--end` time bounds in babeltrace2's syntax (its
//! `filter.utils.trimmer`):
//!
//! * `YYYY-MM-DD hh:mm[:ss[.nnnnnnnnn]]` and `YYYY-MM-DD`: a date and time,
//!   local or UTC (`--clock-gmt`);
//! * `hh:mm[:ss[.nnnnnnnnn]]`: a time of day on the date of the first
//!   event of the traceset;
//! * `[-]SEC[.nnnnnnnnn]`: nanoseconds from the Epoch.
//!
//! Fractions are left-aligned (`.5` is 500 ms), 1 to 9 digits.

use std::fmt;

use crate::civil::{gmt, local, mktime_local, timegm, Civil};

const NS_PER_S: i64 = 1_000_000_000;

/// A parsed time bound, possibly still waiting for a date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// An absolute time in ns from the Epoch.
    Absolute(i64),
    /// A time of day; the date is the first event's (in the same zone).
    TimeOfDay {
        /// Hour.
        hour: u32,
        /// Minute.
        minute: u32,
        /// Second.
        second: u32,
        /// Nanoseconds.
        ns: u32,
    },
}

/// Why a time bound is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeSpecError {
    text: String,
    why: &'static str,
}

impl fmt::Display for TimeSpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid time `{}`: {} (expected `YYYY-MM-DD hh:mm[:ss[.nnnnnnnnn]]`, `YYYY-MM-DD`, \
             `hh:mm[:ss[.nnnnnnnnn]]` or `[-]SEC[.nnnnnnnnn]`)",
            self.text, self.why
        )
    }
}

impl std::error::Error for TimeSpecError {}

/// A cursor over ASCII text for the small fixed grammars above.
struct Scan<'a> {
    s: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    /// Exactly `n` digits.
    fn digits(&mut self, n: usize) -> Option<u32> {
        let d = self.s.get(self.at..self.at + n)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += n;
        Some(d.iter().fold(0, |v, &c| v * 10 + u32::from(c - b'0')))
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    /// `.` and 1 to 9 digits, scaled to nanoseconds; `Some(0)` when absent,
    /// `None` when malformed.
    fn fraction(&mut self) -> Option<u32> {
        if !self.eat(b'.') {
            return Some(0);
        }
        let start = self.at;
        while self.at < self.s.len() && self.s[self.at].is_ascii_digit() {
            self.at += 1;
        }
        let n = self.at - start;
        if n == 0 || n > 9 {
            return None;
        }
        let v = self.s[start..self.at]
            .iter()
            .fold(0u32, |v, &c| v * 10 + u32::from(c - b'0'));
        Some(v * 10u32.pow(9 - n as u32))
    }

    /// `hh:mm[:ss[.nnnnnnnnn]]`
    fn time(&mut self) -> Option<(u32, u32, u32, u32)> {
        let hour = self.digits(2)?;
        if !self.eat(b':') {
            return None;
        }
        let minute = self.digits(2)?;
        let (mut second, mut ns) = (0, 0);
        if self.eat(b':') {
            second = self.digits(2)?;
            ns = self.fraction()?;
        }
        Some((hour, minute, second, ns))
    }

    /// `YYYY-MM-DD`
    fn date(&mut self) -> Option<(i64, u32, u32)> {
        let y = self.digits(4)?;
        if !self.eat(b'-') {
            return None;
        }
        let m = self.digits(2)?;
        if !self.eat(b'-') {
            return None;
        }
        let d = self.digits(2)?;
        Some((i64::from(y), m, d))
    }
}

/// Seconds since the Epoch of a date and time in UTC or local time, as
/// babeltrace2 computes it (`timegm` / `mktime`); `None` if before the Epoch
/// or not representable (babeltrace2 rejects those).
fn epoch_seconds(c: &Civil, is_gmt: bool) -> Option<i64> {
    let t = if is_gmt {
        Some(timegm(c))
    } else {
        mktime_local(c)
    }?;
    (t >= 0).then_some(t)
}

fn civil_ns(c: &Civil, ns: u32, is_gmt: bool) -> Option<i64> {
    epoch_seconds(c, is_gmt)?
        .checked_mul(NS_PER_S)?
        .checked_add(i64::from(ns))
}

/// Parses a `--begin`/`--end` value; `is_gmt` says whether dates and times
/// are UTC (`--clock-gmt`) or local.
pub fn parse(text: &str, is_gmt: bool) -> Result<TimeSpec, TimeSpecError> {
    let err = |why| TimeSpecError {
        text: text.to_owned(),
        why,
    };
    let bytes = text.as_bytes();

    // YYYY-MM-DD[ hh:mm[:ss[.ns]]]
    let mut s = Scan { s: bytes, at: 0 };
    if let Some((year, month, day)) = s.date() {
        let (hour, minute, second, ns) = if s.done() {
            (0, 0, 0, 0)
        } else if s.eat(b' ') {
            match s.time() {
                Some(t) if s.done() => t,
                _ => return Err(err("malformed time after the date")),
            }
        } else {
            return Err(err("unexpected text after the date"));
        };
        let c = Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
        };
        return civil_ns(&c, ns, is_gmt)
            .map(TimeSpec::Absolute)
            .ok_or_else(|| err("not a representable time after 1970-01-01"));
    }

    // hh:mm[:ss[.ns]]
    let mut s = Scan { s: bytes, at: 0 };
    if let Some((hour, minute, second, ns)) = s.time() {
        if s.done() {
            return Ok(TimeSpec::TimeOfDay {
                hour,
                minute,
                second,
                ns,
            });
        }
    }

    // [-]SEC[.ns]
    let mut s = Scan { s: bytes, at: 0 };
    let negative = s.eat(b'-');
    let start = s.at;
    while s.at < bytes.len() && bytes[s.at].is_ascii_digit() {
        s.at += 1;
    }
    if s.at > start {
        let secs: i64 = text[start..s.at]
            .parse()
            .map_err(|_| err("too many seconds"))?;
        let ns = s.fraction().ok_or_else(|| err("malformed fraction"))?;
        if s.done() {
            let v = secs
                .checked_mul(NS_PER_S)
                .and_then(|v| v.checked_add(i64::from(ns)))
                .ok_or_else(|| err("too many seconds"))?;
            return Ok(TimeSpec::Absolute(if negative { -v } else { v }));
        }
    }
    Err(err("unrecognized format"))
}

impl TimeSpec {
    /// The bound in ns from the Epoch; a time of day takes the date of
    /// `first_ns` (the first timestamped message) in the same zone, as
    /// babeltrace2's trimmer does. `None` if the result is not representable.
    pub fn resolve(self, first_ns: i64, is_gmt: bool) -> Option<i64> {
        match self {
            TimeSpec::Absolute(ns) => Some(ns),
            TimeSpec::TimeOfDay {
                hour,
                minute,
                second,
                ns,
            } => {
                // C division truncates toward zero.
                let secs = first_ns / NS_PER_S;
                let day = if is_gmt { gmt(secs) } else { local(secs)? };
                let c = Civil {
                    hour,
                    minute,
                    second,
                    ..day
                };
                civil_ns(&c, ns, is_gmt)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(
            parse("2013-08-15 18:51:04.8285", true),
            Ok(TimeSpec::Absolute(1_376_592_664_828_500_000))
        );
        assert_eq!(
            parse("2013-08-15 18:51", true),
            Ok(TimeSpec::Absolute(1_376_592_660_000_000_000))
        );
        assert_eq!(
            parse("2013-08-15", true),
            Ok(TimeSpec::Absolute(1_376_524_800_000_000_000))
        );
        assert_eq!(
            parse("18:51:04.000000001", true),
            Ok(TimeSpec::TimeOfDay {
                hour: 18,
                minute: 51,
                second: 4,
                ns: 1
            })
        );
        assert_eq!(
            parse("18:51", false),
            Ok(TimeSpec::TimeOfDay {
                hour: 18,
                minute: 51,
                second: 0,
                ns: 0
            })
        );
        assert_eq!(parse("12", true), Ok(TimeSpec::Absolute(12_000_000_000)));
        assert_eq!(parse("-1.5", true), Ok(TimeSpec::Absolute(-1_500_000_000)));
        assert_eq!(
            parse("1376592664.828559410", true),
            Ok(TimeSpec::Absolute(1_376_592_664_828_559_410))
        );
        for bad in [
            "",
            "-",
            "1.",
            "1.1234567890",
            "18:5",
            "18:51:4",
            "2013-8-15",
            "2013-08-15T18:51",
            "2013-08-15 18",
            "abc",
            "18:51:04.",
            "1e9",
            " 12",
            "1969-12-31",
        ] {
            assert!(parse(bad, true).is_err(), "{bad:?} should be rejected");
        }
        let e = parse("noon", true).unwrap_err().to_string();
        assert!(e.contains("`noon`") && e.contains("hh:mm"), "{e}");
    }

    #[test]
    fn time_of_day_takes_the_first_event_date() {
        let t = parse("02:55:23.5", true).unwrap();
        // First event: 2026-11-22 02:55:20.998857024 UTC.
        let first = 1_795_316_120_998_857_024;
        assert_eq!(t.resolve(first, true), Some(1_795_316_123_500_000_000));
        assert_eq!(TimeSpec::Absolute(5).resolve(first, true), Some(5));
    }
}
