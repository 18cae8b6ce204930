//! Clock values as babeltrace2 2.0 converts and prints them.
//!
//! * [`ns_from_origin`]: cycles to nanoseconds from the clock's origin with
//!   babeltrace2's arithmetic (the decoder's `traceloom_ctf::clock`).
//! * [`WallClock`]: the `HH:MM:SS.nnnnnnnnn` / `SEC.nnnnnnnnn` text of
//!   `sink.text.pretty`, in UTC or in the local time zone (through the C
//!   library, like babeltrace2, so that `TZ` is honoured the same way).

use traceloom_ctf::tsdl::ir::ClockClass;

use crate::num::{push_u64, push_u64_padded};

const NS_PER_S: i64 = 1_000_000_000;

/// Converts a clock value to ns from the clock's origin exactly as
/// babeltrace2 2.0 does; `None` where babeltrace2 reports an overflow.
pub fn ns_from_origin(clock: &ClockClass, cycles: u64) -> Option<i64> {
    traceloom_ctf::clock::cycles_to_ns(clock, cycles)
}

/// Broken-down time of day (and date) of a second since the Epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    /// Full year.
    pub year: i64,
    /// Month 1..=12.
    pub month: u32,
    /// Day of month 1..=31.
    pub day: u32,
    /// Hour 0..=23.
    pub hour: u32,
    /// Minute 0..=59.
    pub minute: u32,
    /// Second 0..=60.
    pub second: u32,
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01 (Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// UTC broken-down time of `secs` since the Epoch (what `gmtime_r` gives).
pub fn gmt(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        hour: sod / 3600,
        minute: sod / 60 % 60,
        second: sod % 60,
    }
}

/// Local broken-down time of `secs` since the Epoch, from the C library's
/// `localtime_r` (the `TZ` variable and `/etc/localtime` apply as in
/// babeltrace2); `None` when the C library cannot represent it.
pub fn local(secs: i64) -> Option<Civil> {
    // time_t is i64 on the 64-bit targets traceloom is built for.
    let t: libc::time_t = secs;
    // SAFETY: `tm` is plain data that `localtime_r` fills in; both pointers
    // are valid for the duration of the call, and `localtime_r` is the
    // thread-safe variant.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return None;
        }
        tm
    };
    Some(Civil {
        year: i64::from(tm.tm_year) + 1900,
        month: (tm.tm_mon + 1) as u32,
        day: tm.tm_mday as u32,
        hour: tm.tm_hour as u32,
        minute: tm.tm_min as u32,
        second: tm.tm_sec as u32,
    })
}

/// Seconds since the Epoch of a local date and time, from the C library's
/// `mktime` with `tm_isdst = -1` (as babeltrace2's trimmer does); `None`
/// when it fails or the time is before the Epoch.
pub fn mktime_local(c: &Civil) -> Option<i64> {
    // SAFETY: `tm` is plain data owned here; `mktime` only reads and
    // normalizes it.
    let t = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = i32::try_from(c.year - 1900).ok()?;
        tm.tm_mon = c.month as i32 - 1;
        tm.tm_mday = c.day as i32;
        tm.tm_hour = c.hour as i32;
        tm.tm_min = c.minute as i32;
        tm.tm_sec = c.second as i32;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm)
    };
    (t >= 0).then_some(t as i64)
}

/// Seconds since the Epoch of a UTC date and time (`timegm`), with the same
/// normalization of out-of-range fields that `timegm` applies (an hour of
/// 25 rolls over to the next day).
pub fn timegm(c: &Civil) -> i64 {
    // Normalize the month first, as timegm does, then let the day count
    // absorb any day/hour/minute/second overflow.
    let m0 = i64::from(c.month) - 1;
    let year = c.year + m0.div_euclid(12);
    let month = (m0.rem_euclid(12) + 1) as u32;
    let days = days_from_civil(year, month, 1) + i64::from(c.day) - 1;
    days * 86_400 + i64::from(c.hour) * 3600 + i64::from(c.minute) * 60 + i64::from(c.second)
}

/// Makes sure the C library has read `TZ` before the first `localtime_r`.
pub fn init_local_time() {
    extern "C" {
        fn tzset();
    }
    // SAFETY: `tzset` takes no arguments and only initializes the C
    // library's time zone state.
    unsafe { tzset() }
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
    fn civil_round_trip() {
        for secs in [
            0i64,
            951_782_400,
            1_376_592_664,
            4_102_444_800,
            -86_400,
            1_709_164_800,
        ] {
            let c = gmt(secs);
            assert_eq!(timegm(&c), secs);
        }
        assert_eq!(
            gmt(1_376_592_664),
            Civil {
                year: 2013,
                month: 8,
                day: 15,
                hour: 18,
                minute: 51,
                second: 4
            }
        );
        // timegm normalizes like the C function.
        let c = Civil {
            year: 2020,
            month: 12,
            day: 31,
            hour: 24,
            minute: 0,
            second: 0,
        };
        assert_eq!(
            gmt(timegm(&c)),
            Civil {
                year: 2021,
                month: 1,
                day: 1,
                hour: 0,
                minute: 0,
                second: 0
            }
        );
    }

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
