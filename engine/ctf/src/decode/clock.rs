//! Clock arithmetic exactly as babeltrace2 2.0 does it: partial timestamps
//! rebuilt into full clock values, and cycles converted to nanoseconds from
//! the clock's origin.

use traceloom_tsdl::ir::ClockClass;

/// Updates a full 64-bit clock value with a field of `size` bits mapped to
/// the clock (CTF 1.8 §8): the low `size` bits are replaced, and when they
/// are smaller than the current low bits the clock is assumed to have
/// wrapped once on that width.
#[inline(always)]
pub fn update_clock(current: u64, new_val: u64, size: u32) -> u64 {
    if size >= 64 {
        return new_val;
    }
    update_clock_masked(current, new_val, (1u64 << size) - 1)
}

/// [`update_clock`] for a width below 64 given as its mask (`2^size - 1`).
#[inline(always)]
pub fn update_clock_masked(current: u64, new_val: u64, mask: u64) -> u64 {
    let mut cur = current;
    if new_val < (cur & mask) {
        cur = cur.wrapping_add(mask + 1);
    }
    (cur & !mask) | (new_val & mask)
}

/// A clock's conversion parameters, precomputed the way babeltrace2 does
/// (`bt_util_get_base_offset_ns`, `bt_util_ns_from_origin_inline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockConv {
    freq: u64,
    /// `offset_s * 1e9 + ns(offset cycles)`, `None` when it overflows
    /// (babeltrace2 then refuses to convert any value of this clock).
    base_ns: Option<i64>,
}

/// Converts cycles to ns as babeltrace2: exact when the frequency is 1 GHz,
/// otherwise through a `double` and truncated.
#[inline(always)]
fn ns_from_value(freq: u64, cycles: u64) -> u64 {
    if freq == 1_000_000_000 {
        cycles
    } else {
        let d = (1e9 * cycles as f64) / freq as f64;
        if d >= u64::MAX as f64 {
            u64::MAX
        } else {
            d as u64
        }
    }
}

impl ClockConv {
    /// Precomputes the conversion of `clock`. The offset in cycles is first
    /// normalized below one second (babeltrace2's
    /// `calibrate_clock_class_offsets`); a negative offset in cycles, which
    /// babeltrace2 cannot represent, borrows whole seconds.
    pub fn new(clock: &ClockClass) -> Self {
        let freq = clock.freq.max(1);
        let mut off_s = clock.offset_s as i128;
        let mut off_c = clock.offset as i128;
        off_s += off_c.div_euclid(freq as i128);
        off_c = off_c.rem_euclid(freq as i128);
        let base_ns = if off_s <= (i64::MIN / 1_000_000_000 - 1) as i128
            || off_s >= (i64::MAX / 1_000_000_000 - 1) as i128
        {
            None
        } else {
            Some(off_s as i64 * 1_000_000_000 + ns_from_value(freq, off_c as u64) as i64)
        };
        ClockConv { freq, base_ns }
    }

    /// Nanoseconds from the clock's origin, or `None` where babeltrace2
    /// reports "Cannot convert clock cycles to nanoseconds" (overflow).
    #[inline(always)]
    pub fn to_ns(&self, cycles: u64) -> Option<i64> {
        let base = self.base_ns?;
        Self::exact_to_ns(base, ns_from_value(self.freq, cycles))
    }

    /// For a 1 GHz clock whose offset converts, the base that
    /// [`ClockConv::exact_to_ns`] takes: then `to_ns(c)` is
    /// `exact_to_ns(base, c)`.
    pub fn ns_base_if_exact(&self) -> Option<i64> {
        self.base_ns.filter(|_| self.freq == 1_000_000_000)
    }

    /// `base` plus `ns`, as [`ClockConv::to_ns`] adds them.
    #[inline(always)]
    pub fn exact_to_ns(base: i64, ns: u64) -> Option<i64> {
        if ns >= i64::MAX as u64 {
            return None;
        }
        // `ns` is non-negative: only a positive base can overflow.
        base.checked_add(ns as i64)
    }
}

/// [`ClockConv::to_ns`] for a clock class.
pub fn cycles_to_ns(clock: &ClockClass, cycles: u64) -> Option<i64> {
    ClockConv::new(clock).to_ns(cycles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(freq: u64, offset_s: i64, offset: i64) -> ClockClass {
        ClockClass {
            name: "c".into(),
            freq,
            offset_s,
            offset,
            precision: 0,
            absolute: false,
            uuid: None,
            description: None,
        }
    }

    #[test]
    fn the_exact_conversion_is_the_general_one_at_1_ghz() {
        let edges = [0, 1, 5, i64::MAX as u64 - 1, i64::MAX as u64, u64::MAX];
        for (offset_s, offset) in [(0, 0), (1_500_000_000, 17), (-3, 0), (9_223_372_034, 0)] {
            let conv = ClockConv::new(&clock(1_000_000_000, offset_s, offset));
            let base = conv.ns_base_if_exact().expect("1 GHz");
            for c in edges {
                assert_eq!(
                    ClockConv::exact_to_ns(base, c),
                    conv.to_ns(c),
                    "{offset_s} {c}"
                );
            }
        }
        // Another frequency, or an offset that does not convert: none.
        assert_eq!(ClockConv::new(&clock(1000, 0, 0)).ns_base_if_exact(), None);
        let huge = ClockConv::new(&clock(1_000_000_000, i64::MAX / 2, 0));
        assert_eq!(huge.ns_base_if_exact(), None);
        assert_eq!(huge.to_ns(1), None);
    }

    #[test]
    fn partial_clock_values_wrap_once() {
        // 27-bit compact timestamps.
        let full = 0x1234_5000_0000u64;
        let low = full & ((1 << 27) - 1);
        assert_eq!(update_clock(full, low + 5, 27), full + 5);
        // Smaller low bits: one wrap of 2^27.
        let next = update_clock(full + 100, 3, 27);
        assert_eq!(next, ((full + 100) & !((1 << 27) - 1)) + (1 << 27) + 3);
        assert_eq!(update_clock(7, 9, 64), 9);
        assert_eq!(update_clock(0xFF, 0x0E, 4), 0x10E);
        assert_eq!(update_clock(0xFF, 0x0F, 4), 0xFF);
    }

    #[test]
    fn lttng_ghz_clock_is_exact() {
        let c = ClockConv::new(&clock(1_000_000_000, 1_700_000_000, 123));
        assert_eq!(c.to_ns(5), Some(1_700_000_000_000_000_128));
    }

    #[test]
    fn other_frequencies_go_through_double_and_truncate() {
        // 3 cycles at 3 Hz... 1e9 * 1 / 3 = 333333333.33 -> 333333333.
        let c = ClockConv::new(&clock(3, 0, 0));
        assert_eq!(c.to_ns(1), Some(333_333_333));
        // Offset cycles beyond one second move into seconds.
        let c = ClockConv::new(&clock(1000, 1, 2500));
        assert_eq!(c.to_ns(0), Some(3_500_000_000));
        // A large value where double rounding differs from exact math.
        let c = ClockConv::new(&clock(2_400_000_000, 0, 0));
        let cycles = 123_456_789_012_345_679u64;
        let expect = ((1e9 * cycles as f64) / 2.4e9) as u64 as i64;
        assert_eq!(c.to_ns(cycles), Some(expect));
    }

    #[test]
    fn overflow_is_refused_like_babeltrace2() {
        let c = ClockConv::new(&clock(1_000_000_000, i64::MAX / 1_000_000_000, 0));
        assert_eq!(c.to_ns(0), None);
        let c = ClockConv::new(&clock(1_000_000_000, 0, 0));
        assert_eq!(c.to_ns(u64::MAX), None);
        let c = ClockConv::new(&clock(1_000_000_000, 9_000_000_000, 0));
        assert_eq!(c.to_ns(300_000_000_000_000_000), None);
        assert_eq!(c.to_ns(1), Some(9_000_000_000_000_000_001));
    }
}
