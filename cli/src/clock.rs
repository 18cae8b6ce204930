//! Clock values as babeltrace2 2.0 converts and prints them.
//!
//! * [`ns_from_origin`]: cycles to nanoseconds from the clock's origin with
//!   babeltrace2's arithmetic (the decoder's `traceloom_ctf::decode::clock`).
//! * [`WallClock`]: the `HH:MM:SS.nnnnnnnnn` / `SEC.nnnnnnnnn` text of
//!   `sink.text.pretty`, in UTC or in the local time zone (through the C
//!   library, like babeltrace2, so that `TZ` is honoured the same way).

use traceloom_tsdl::ir::ClockClass;

use traceloom_base::civil::{gmt, init_local_time, local, Civil};

use crate::num::{push_u64, push_u64_padded};

const NS_PER_S: i64 = 1_000_000_000;

/// Converts a clock value to ns from the clock's origin exactly as
/// babeltrace2 2.0 does; `None` where babeltrace2 reports an overflow.
pub fn ns_from_origin(clock: &ClockClass, cycles: u64) -> Option<i64> {
    traceloom_ctf::decode::clock::cycles_to_ns(clock, cycles)
}

/// How `sink.text.pretty` prints a wall-clock time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WallOptions {
    /// `--clock-seconds`: `SEC.nnnnnnnnn` instead of a time of day.
    pub seconds: bool,
    /// `--clock-gmt`: time of day in UTC instead of the local time zone.
    pub gmt: bool,
    /// `--clock-date`: prefix the time of day with `YYYY-MM-DD `.
    pub date: bool,
}

/// Formats ns-from-origin values as babeltrace2's `print_timestamp_wall`,
/// caching the broken-down time of the last second (events are dense in
/// time, and `localtime_r` is not cheap).
#[derive(Debug)]
pub struct WallClock {
    opts: WallOptions,
    cached: Option<(i64, Option<Civil>)>,
    /// Whether the "negative time" warning was printed (babeltrace2 prints
    /// it once per sink).
    pub negative_warning_done: bool,
}

/// What [`WallClock::push`] wants said on standard error, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WallWarning {
    /// The first negative time printed as seconds.
    Negative,
    /// The C library could not break the time down.
    NoLocalTime,
}

impl WallWarning {
    /// The exact line babeltrace2 prints on standard error.
    pub fn message(self) -> &'static str {
        match self {
            WallWarning::Negative => {
                "[warning] Fallback to [sec.ns] to print negative time value. Use --clock-seconds.\n"
            }
            WallWarning::NoLocalTime => "[warning] Unable to get localtime.\n",
        }
    }
}

impl WallClock {
    /// A formatter with these options.
    pub fn new(opts: WallOptions) -> Self {
        if !opts.gmt && !opts.seconds {
            init_local_time();
        }
        WallClock {
            opts,
            cached: None,
            negative_warning_done: false,
        }
    }

    fn civil(&mut self, secs: i64) -> Option<Civil> {
        if let Some((s, c)) = self.cached {
            if s == secs {
                return c;
            }
        }
        let c = if self.opts.gmt {
            Some(gmt(secs))
        } else {
            local(secs)
        };
        self.cached = Some((secs, c));
        c
    }

    /// Appends the time `ns` (from the Epoch) to `buf`; returns a warning
    /// to print on standard error when babeltrace2 would print one.
    pub fn push(&mut self, buf: &mut Vec<u8>, ns: i64) -> Option<WallWarning> {
        // C division truncates toward zero; babeltrace2 then splits the
        // sign off by cases, which amounts to the absolute value.
        let negative = ns < 0;
        let abs = ns.unsigned_abs();
        let sec_abs = abs / NS_PER_S as u64;
        let nsec_abs = abs % NS_PER_S as u64;
        let mut warning = None;
        if !self.opts.seconds {
            if negative && !self.negative_warning_done {
                self.negative_warning_done = true;
                warning = Some(WallWarning::Negative);
            } else if let Some(c) = self.civil(sec_abs as i64) {
                // babeltrace2 breaks down the absolute value even for a
                // negative time once the warning was given.
                if self.opts.date {
                    push_year(buf, c.year);
                    buf.push(b'-');
                    push_u64_padded(buf, u64::from(c.month), 2);
                    buf.push(b'-');
                    push_u64_padded(buf, u64::from(c.day), 2);
                    buf.push(b' ');
                }
                push_u64_padded(buf, u64::from(c.hour), 2);
                buf.push(b':');
                push_u64_padded(buf, u64::from(c.minute), 2);
                buf.push(b':');
                push_u64_padded(buf, u64::from(c.second), 2);
                buf.push(b'.');
                push_u64_padded(buf, nsec_abs, 9);
                return None;
            } else {
                warning = Some(WallWarning::NoLocalTime);
            }
        }
        if negative {
            buf.push(b'-');
        }
        push_u64(buf, sec_abs);
        buf.push(b'.');
        push_u64_padded(buf, nsec_abs, 9);
        warning
    }
}

/// `strftime("%Y")`: the year, at least 4 digits for years 0..9999.
fn push_year(buf: &mut Vec<u8>, y: i64) {
    if y < 0 {
        buf.push(b'-');
    }
    push_u64_padded(buf, y.unsigned_abs(), 4);
}

/// Appends a delta between two ns values as `+S.nnnnnnnnn`, with
/// babeltrace2's unsigned arithmetic (a backwards step wraps around).
pub fn push_delta_ns(buf: &mut Vec<u8>, delta: u64) {
    buf.push(b'+');
    push_u64(buf, delta / NS_PER_S as u64);
    buf.push(b'.');
    push_u64_padded(buf, delta % NS_PER_S as u64, 9);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_text() {
        let mut w = WallClock::new(WallOptions {
            gmt: true,
            ..Default::default()
        });
        let mut b = Vec::new();
        assert_eq!(w.push(&mut b, 1_376_592_664_828_559_410), None);
        assert_eq!(b, b"18:51:04.828559410");

        let mut w = WallClock::new(WallOptions {
            gmt: true,
            date: true,
            ..Default::default()
        });
        b.clear();
        w.push(&mut b, 1_376_592_664_000_000_001);
        assert_eq!(b, b"2013-08-15 18:51:04.000000001");

        let mut w = WallClock::new(WallOptions {
            seconds: true,
            ..Default::default()
        });
        b.clear();
        w.push(&mut b, 1_376_592_664_000_000_001);
        assert_eq!(b, b"1376592664.000000001");
        b.clear();
        w.push(&mut b, -1_500_000_000);
        assert_eq!(b, b"-1.500000000");
        b.clear();
        w.push(&mut b, -5);
        assert_eq!(b, b"-0.000000005");

        // Negative times: the first one falls back to seconds with a warning,
        // later ones are broken down from their absolute value.
        let mut w = WallClock::new(WallOptions {
            gmt: true,
            ..Default::default()
        });
        b.clear();
        assert_eq!(w.push(&mut b, -1_500_000_000), Some(WallWarning::Negative));
        assert_eq!(b, b"-1.500000000");
        b.clear();
        assert_eq!(w.push(&mut b, -1_500_000_000), None);
        assert_eq!(b, b"00:00:01.500000000");
    }

    #[test]
    fn delta_text() {
        let mut b = Vec::new();
        push_delta_ns(&mut b, 14_700);
        assert_eq!(b, b"+0.000014700");
        b.clear();
        push_delta_ns(&mut b, 12_000_000_001);
        assert_eq!(b, b"+12.000000001");
        b.clear();
        push_delta_ns(&mut b, (-1i64) as u64);
        assert_eq!(b, b"+18446744073.709551615");
    }
}
