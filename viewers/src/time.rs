//! Time ranges, the time ↔ pixel mapping every render is made for, axis tick
//! steps and time formatting.

use std::fmt::Write as _;

use traceloom_base::{Time, TimeRange};

/// The time range and pixel width a render was made for.
///
/// Level of detail is decided on this grid: pixel `p` covers the times
/// `[start + p·span/width, start + (p+1)·span/width)`. All comparisons are
/// exact (128-bit integer arithmetic), so "shorter than one pixel" never
/// depends on floating-point rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PixelScale {
    /// The time range mapped onto the width.
    pub range: TimeRange,
    /// Width in pixels (`>= 1`).
    pub width: u32,
}

impl PixelScale {
    /// The grid of `width` pixels (at least one) over `range`.
    pub fn new(range: TimeRange, width: u32) -> Self {
        PixelScale {
            range,
            width: width.max(1),
        }
    }

    /// Pixel column of `t`, clamped to `0..width` (times outside the range go
    /// to the border columns).
    pub fn pixel_of(&self, t: Time) -> u32 {
        let rel = (t as i128 - self.range.start as i128).max(0);
        let span = self.range.span();
        // The same quotient in 64 bits when it fits (a 128-bit division is
        // a slow library call, and renders convert once per pixel column).
        if rel < span as i128 && span.checked_mul(u64::from(self.width)).is_some() {
            return (rel as u64 * u64::from(self.width) / span) as u32;
        }
        let p = rel * self.width as i128 / span as i128;
        p.min(self.width as i128 - 1) as u32
    }

    /// Whether a duration covers at least one whole pixel.
    pub fn at_least_one_pixel(&self, duration: u64) -> bool {
        duration as u128 * self.width as u128 >= self.range.span() as u128
    }

    /// Nanoseconds per pixel (fractional).
    pub fn ns_per_pixel(&self) -> f64 {
        self.range.span() as f64 / self.width as f64
    }

    /// First time of pixel column `p`.
    pub fn time_of_pixel(&self, p: u32) -> Time {
        let span = self.range.span();
        if p <= self.width && span.checked_mul(u64::from(self.width)).is_some() {
            let off = u64::from(p) * span / u64::from(self.width);
            return (self.range.start as i128 + off as i128) as Time;
        }
        let off = p as i128 * self.range.span() as i128 / self.width as i128;
        (self.range.start as i128 + off) as Time
    }
}

/// Maps times to x coordinates of a drawing area (floating point, for
/// drawing only; level-of-detail decisions use [`PixelScale`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XMap {
    /// The time range shown.
    pub range: TimeRange,
    /// x of `range.start`.
    pub x0: f64,
    /// Width of the area `range` is spread over.
    pub width: f64,
}

impl XMap {
    /// x coordinate of `t` (may lie outside the area).
    pub fn x(&self, t: Time) -> f64 {
        // Subtract in integers first: absolute trace times (~1.7e18 ns) do
        // not fit an f64 mantissa, offsets within a view do.
        let off = (t as i128 - self.range.start as i128) as f64;
        self.x0 + off * self.width / self.range.span() as f64
    }

    /// Time under x coordinate `x`, rounded to the nanosecond and saturated
    /// to the `i64` range.
    pub fn time(&self, x: f64) -> Time {
        let off = ((x - self.x0) * self.range.span() as f64 / self.width.max(1e-9)).round();
        let off = off.clamp(-1e30, 1e30) as i128;
        (self.range.start as i128 + off).clamp(Time::MIN as i128, Time::MAX as i128) as Time
    }
}

/// Smallest axis step of the 1-2-5 × 10^k ns series such that ticks are at
/// least `min_px` pixels apart when `span` ns are drawn over `width_px`.
pub fn nice_step(span: u64, width_px: f64, min_px: f64) -> u64 {
    let span = span.max(1) as f64;
    let width_px = width_px.max(1.0);
    let mut decade: u64 = 1;
    loop {
        for m in [1u64, 2, 5] {
            let Some(step) = decade.checked_mul(m) else {
                return decade;
            };
            if step as f64 * width_px / span >= min_px {
                return step;
            }
        }
        match decade.checked_mul(10) {
            Some(d) => decade = d,
            None => return decade,
        }
    }
}

/// Tick times: every multiple of `step` within `range`.
pub fn ticks(range: TimeRange, step: u64) -> Vec<Time> {
    let step = step.max(1) as i128;
    let first = (range.start as i128).div_euclid(step) * step;
    let first = if first < range.start as i128 {
        first + step
    } else {
        first
    };
    let mut out = Vec::new();
    let mut t = first;
    while t <= range.end as i128 {
        out.push(t as Time);
        t += step;
    }
    out
}

/// A unit the axis writes offsets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// Nanoseconds in one unit.
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }

    /// Symbol written after the number.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    /// Largest unit not larger than `ns` (nanoseconds for 0).
    pub fn for_magnitude(ns: u64) -> TimeUnit {
        if ns >= 1_000_000_000 {
            TimeUnit::S
        } else if ns >= 1_000_000 {
            TimeUnit::Ms
        } else if ns >= 1_000 {
            TimeUnit::Us
        } else {
            TimeUnit::Ns
        }
    }
}

/// Number of decimals needed to write multiples of `step` ns in `unit`
/// exactly.
pub fn decimals_for(step: u64, unit: TimeUnit) -> usize {
    let mut d = 0;
    let mut scaled = step.max(1) as u128;
    while d < 9 && !scaled.is_multiple_of(unit.ns() as u128) {
        scaled *= 10;
        d += 1;
    }
    d
}

/// Writes `ns` in `unit` with `decimals` decimals, exactly (no floating
/// point): `format_in_unit(1_500_000, Ms, 1)` is `"1.5 ms"`.
pub fn format_in_unit(ns: i128, unit: TimeUnit, decimals: usize) -> String {
    let neg = ns < 0;
    let ns = ns.unsigned_abs();
    let u = unit.ns() as u128;
    let int = ns / u;
    let frac = ns % u;
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    let _ = write!(s, "{int}");
    if decimals > 0 {
        // Fraction scaled to `decimals` digits, truncated: decimals come from
        // `decimals_for`, so nothing is lost for tick labels.
        let digits = match unit {
            TimeUnit::Ns => 0,
            TimeUnit::Us => 3,
            TimeUnit::Ms => 6,
            TimeUnit::S => 9,
        };
        let mut f = frac;
        let mut d = digits;
        while d > decimals {
            f /= 10;
            d -= 1;
        }
        while d < decimals {
            f *= 10;
            d += 1;
        }
        let _ = write!(s, ".{f:0width$}", width = decimals);
    }
    s.push(' ');
    s.push_str(unit.symbol());
    s
}

/// Writes a duration with a unit fitting its magnitude and 3 significant
/// decimals at most: `1.234 ms`, `17 ns`, `2.5 s`.
pub fn format_duration(ns: i128) -> String {
    let unit = TimeUnit::for_magnitude(ns.unsigned_abs().min(u64::MAX as u128) as u64);
    let decimals = if unit == TimeUnit::Ns { 0 } else { 3 };
    let s = format_in_unit(ns, unit, decimals);
    // Trailing zeros carry no information in a tooltip.
    if decimals > 0 {
        let (num, sym) = s.rsplit_once(' ').unwrap_or((&s, ""));
        let num = num.trim_end_matches('0').trim_end_matches('.');
        format!("{num} {sym}")
    } else {
        s
    }
}

/// How absolute times (the first axis tick, tooltips) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AbsoluteTimeFormat {
    /// `HH:MM:SS.nnnnnnnnn`, UTC time of day (babeltrace2's `--clock-gmt`).
    #[default]
    ClockUtc,
    /// Seconds and nanoseconds since the clock's origin: `1234.567890123 s`.
    Seconds,
}

/// Writes an absolute time with `digits` fractional digits (0–9), truncated.
pub fn format_absolute(t: Time, format: AbsoluteTimeFormat, digits: usize) -> String {
    let digits = digits.min(9);
    let secs = t.div_euclid(1_000_000_000);
    let nanos = t.rem_euclid(1_000_000_000) as u64;
    let frac = if digits == 0 {
        String::new()
    } else {
        format!(".{:0w$}", nanos / 10u64.pow(9 - digits as u32), w = digits)
    };
    match format {
        AbsoluteTimeFormat::ClockUtc => {
            let day = secs.rem_euclid(86_400);
            format!(
                "{:02}:{:02}:{:02}{}",
                day / 3600,
                day / 60 % 60,
                day % 60,
                frac
            )
        }
        AbsoluteTimeFormat::Seconds => {
            // Sign and magnitude, so that -1 ns reads "-0.000000001 s".
            let a = t.unsigned_abs();
            let sign = if t < 0 { "-" } else { "" };
            let frac = if digits == 0 {
                String::new()
            } else {
                format!(
                    ".{:0w$}",
                    (a % 1_000_000_000) / 10u64.pow(9 - digits as u32),
                    w = digits
                )
            };
            format!("{sign}{}{frac} s", a / 1_000_000_000)
        }
    }
}

/// Fractional digits an absolute time needs to tell ticks `step` ns apart,
/// rounded up to whole milli/micro/nanoseconds (3, 6 or 9) so the digits
/// read by thousands.
pub fn digits_for_step(step: u64) -> usize {
    let mut digits = 9usize;
    let mut s = step.max(1);
    while digits > 0 && s.is_multiple_of(10) {
        s /= 10;
        digits -= 1;
    }
    digits.div_ceil(3) * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_never_empty() {
        let r = TimeRange::new(5, 5);
        assert_eq!(r.span(), 1);
        let r = TimeRange::new(10, 2);
        assert_eq!((r.start, r.end), (2, 10));
    }

    proptest::proptest! {
        /// The 64-bit shortcuts give the 128-bit quotients.
        #[test]
        fn conversions_equal_the_wide_arithmetic(
            start in proptest::prelude::any::<i64>(),
            span_bits in 1u32..63,
            span_raw in proptest::prelude::any::<u64>(),
            width in 1u32..100_000,
            t in proptest::prelude::any::<i64>(),
            p in 0u32..100_001,
        ) {
            // Spans of any magnitude, most small enough for the shortcuts.
            let span = (span_raw >> (64 - span_bits)).max(1);
            let end = start.saturating_add(span as i64);
            let s = PixelScale::new(TimeRange::new(start, end), width);
            let span = s.range.span() as i128;
            let rel = (t as i128 - s.range.start as i128).max(0);
            let px = (rel * width as i128 / span).min(width as i128 - 1) as u32;
            proptest::prop_assert_eq!(s.pixel_of(t), px);
            let time = (s.range.start as i128 + p as i128 * span / width as i128) as Time;
            proptest::prop_assert_eq!(s.time_of_pixel(p), time);
        }
    }

    #[test]
    fn pixel_grid_is_exact() {
        let s = PixelScale::new(TimeRange::new(1000, 2000), 10);
        assert_eq!(s.pixel_of(1000), 0);
        assert_eq!(s.pixel_of(1099), 0);
        assert_eq!(s.pixel_of(1100), 1);
        assert_eq!(s.pixel_of(1999), 9);
        assert_eq!(s.pixel_of(5000), 9);
        assert_eq!(s.pixel_of(0), 0);
        assert!(s.at_least_one_pixel(100));
        assert!(!s.at_least_one_pixel(99));
        assert_eq!(s.time_of_pixel(3), 1300);
    }

    #[test]
    fn steps_follow_1_2_5() {
        // 1 s over 1000 px, at least 80 px apart: 0.08 s → 100 ms.
        assert_eq!(nice_step(1_000_000_000, 1000.0, 80.0), 100_000_000);
        // 50 px → 50 ms.
        assert_eq!(nice_step(1_000_000_000, 1000.0, 50.0), 50_000_000);
        assert_eq!(nice_step(1_000_000_000, 1000.0, 15.0), 20_000_000);
        assert_eq!(nice_step(10, 1000.0, 80.0), 1);
        // Huge spans do not overflow.
        assert!(nice_step(u64::MAX, 10.0, 80.0) > 0);
    }

    #[test]
    fn ticks_are_multiples_within_range() {
        let t = ticks(TimeRange::new(1_050, 1_420), 100);
        assert_eq!(t, vec![1_100, 1_200, 1_300, 1_400]);
        let t = ticks(TimeRange::new(-250, 10), 100);
        assert_eq!(t, vec![-200, -100, 0]);
    }

    #[test]
    fn unit_formatting_is_exact() {
        assert_eq!(decimals_for(500_000, TimeUnit::Ms), 1);
        assert_eq!(decimals_for(50_000, TimeUnit::Ms), 2);
        assert_eq!(decimals_for(2_000_000, TimeUnit::Ms), 0);
        assert_eq!(format_in_unit(1_500_000, TimeUnit::Ms, 1), "1.5 ms");
        assert_eq!(format_in_unit(2_000, TimeUnit::Us, 0), "2 µs");
        assert_eq!(format_in_unit(1_234_567_891, TimeUnit::S, 3), "1.234 s");
        assert_eq!(format_in_unit(-50, TimeUnit::Ns, 0), "-50 ns");
        assert_eq!(format_in_unit(120, TimeUnit::Us, 2), "0.12 µs");
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(format_duration(1_234_000), "1.234 ms");
        assert_eq!(format_duration(2_500_000_000), "2.5 s");
        assert_eq!(format_duration(17), "17 ns");
        assert_eq!(format_duration(3_000), "3 µs");
    }

    #[test]
    fn absolute_times() {
        let t = 3_723_123_456_789; // 01:02:03.123456789
        assert_eq!(
            format_absolute(t, AbsoluteTimeFormat::ClockUtc, 9),
            "01:02:03.123456789"
        );
        assert_eq!(
            format_absolute(t, AbsoluteTimeFormat::ClockUtc, 3),
            "01:02:03.123"
        );
        assert_eq!(
            format_absolute(t, AbsoluteTimeFormat::Seconds, 6),
            "3723.123456 s"
        );
        assert_eq!(
            format_absolute(-1, AbsoluteTimeFormat::Seconds, 9),
            "-0.000000001 s"
        );
        assert_eq!(digits_for_step(1_000_000), 3);
        assert_eq!(digits_for_step(10_000_000), 3);
        assert_eq!(digits_for_step(500), 9);
        assert_eq!(digits_for_step(20_000), 6);
        assert_eq!(digits_for_step(1_000_000_000), 0);
    }

    #[test]
    fn xmap_round_trips() {
        let m = XMap {
            range: TimeRange::new(1_000, 2_000),
            x0: 100.0,
            width: 500.0,
        };
        assert_eq!(m.x(1_000), 100.0);
        assert_eq!(m.x(2_000), 600.0);
        assert_eq!(m.time(350.0), 1_500);
        // Absolute trace times keep nanosecond precision.
        let big = XMap {
            range: TimeRange::new(1_700_000_000_100_000_000, 1_700_000_000_110_000_000),
            x0: 10.0,
            width: 1000.0,
        };
        assert_eq!(
            big.time(big.x(1_700_000_000_105_000_123)),
            1_700_000_000_105_000_123
        );
        assert_eq!(big.x(1_700_000_000_105_000_000), 510.0);
    }
}
