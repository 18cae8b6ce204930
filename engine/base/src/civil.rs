//! Civil (calendar) time: seconds since the Epoch to a date and time of
//! day and back, in UTC (pure arithmetic) or in the local time zone
//! (through the C library, like babeltrace2, so that `TZ` applies the same
//! way).

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
}
