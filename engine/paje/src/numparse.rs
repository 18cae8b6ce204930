//! Number parsing with the exact semantics pj_dump uses.
//!
//! pj_dump reads dates with Boost.Spirit's `double_` (the longest numeric
//! prefix of the field; the rest is ignored) and variable values with
//! `strtof` (single precision, then widened to `double`). Both are mirrored
//! here so that dumps match digit for digit.

/// An RGBA colour with components in `0.0..=1.0` (as the trace gives them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Color {
    /// Red.
    pub r: f32,
    /// Green.
    pub g: f32,
    /// Blue.
    pub b: f32,
    /// Alpha (1 when the trace gives three components).
    pub a: f32,
}

/// Length of the longest prefix of `s` that is a decimal floating-point
/// literal: `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`.
fn decimal_prefix_len(s: &[u8]) -> usize {
    let digits = |from: usize| {
        s[from.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let int_digits = digits(i);
    i += int_digits;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        frac_digits = digits(i + 1);
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return 0;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_digits = digits(j);
        if exp_digits > 0 {
            i = j + exp_digits;
        }
    }
    i
}

/// Recognises `[+-]?(inf|infinity|nan)` (any case) at the start of `s`.
fn special_prefix(s: &[u8]) -> Option<(f64, usize)> {
    let (neg, rest) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let sign_len = s.len() - rest.len();
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    let (v, len) = if starts(b"infinity") {
        (f64::INFINITY, 8)
    } else if starts(b"inf") {
        (f64::INFINITY, 3)
    } else if starts(b"nan") {
        (f64::NAN, 3)
    } else {
        return None;
    };
    Some((if neg { -v } else { v }, sign_len + len))
}

const EXACT_POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Clinger's fast path for plain `[-]digits[.digits]` literals: when the
/// digits, read as an integer, are below 2^53 and there are at most 22
/// decimals, mantissa and power of ten are exact doubles, so one division
/// gives the correctly rounded value.
#[inline]
fn simple_decimal(s: &[u8]) -> Option<f64> {
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let n = body.len();
    // More than 19 digits could overflow the u64 below (20 digits did:
    // a damaged date of twenty 9s, found by the mutation tests).
    if n == 0 || n > 19 {
        return None;
    }
    let mut mant: u64 = 0;
    let mut i = 0;
    while i < n {
        let d = body[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        mant = mant * 10 + u64::from(d);
        i += 1;
    }
    let int_digits = i;
    let mut decimals = 0;
    if i < n && body[i] == b'.' {
        i += 1;
        let from = i;
        while i < n {
            let d = body[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            mant = mant * 10 + u64::from(d);
            i += 1;
        }
        decimals = i - from;
    }
    if i != n || int_digits + decimals == 0 || mant > 1 << 53 || decimals > 22 {
        return None;
    }
    let v = mant as f64 / EXACT_POW10[decimals];
    Some(if neg { -v } else { v })
}

/// Parses a date field the way pj_dump does: the longest numeric prefix,
/// `None` when the field does not start with a number.
#[inline]
pub fn parse_date(s: &[u8]) -> Option<f64> {
    if let Some(v) = simple_decimal(s) {
        return Some(v);
    }
    if let Some((v, _)) = special_prefix(s) {
        return Some(v);
    }
    let len = decimal_prefix_len(s);
    if len == 0 {
        return None;
    }
    // The prefix is ASCII by construction.
    std::str::from_utf8(&s[..len]).ok()?.parse::<f64>().ok()
}

/// Parses a hexadecimal floating-point prefix (`0x1.8p3`) after the sign.
fn hex_prefix(s: &[u8]) -> Option<f64> {
    if s.len() < 2 || s[0] != b'0' || !matches!(s[1], b'x' | b'X') {
        return None;
    }
    let mut i = 2;
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut any = false;
    let mut seen_point = false;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            any = true;
            if mant >> 56 == 0 {
                mant = mant * 16 + u64::from(d);
                if seen_point {
                    exp -= 4;
                }
            } else if !seen_point {
                // Digits beyond u64 precision only scale the value.
                exp += 4;
            }
        } else {
            break;
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut j = i + 1;
        let neg = match s.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut e: i64 = 0;
        while let Some(d) = s.get(j).filter(|b| b.is_ascii_digit()) {
            e = (e * 10 + i64::from(d - b'0')).min(100_000);
            j += 1;
        }
        if j > start {
            exp += if neg { -e } else { e };
        }
    }
    let exp = exp.clamp(-2000, 2000) as i32;
    Some(mant as f64 * 2f64.powi(exp))
}

/// `strtof` semantics: leading white space skipped, the longest numeric
/// prefix converted to single precision, 0 when there is none.
pub fn parse_strtof(s: &[u8]) -> f32 {
    let start = s
        .iter()
        .position(|&b| !crate::lexer::is_space(b))
        .unwrap_or(s.len());
    let s = &s[start..];
    if let Some((v, _)) = special_prefix(s) {
        return v as f32;
    }
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if let Some(v) = hex_prefix(body) {
        let v = v as f32;
        return if neg { -v } else { v };
    }
    let len = decimal_prefix_len(s);
    if len == 0 {
        return 0.0;
    }
    std::str::from_utf8(&s[..len])
        .ok()
        .and_then(|t| t.parse::<f32>().ok())
        .unwrap_or(0.0)
}

/// `atof` semantics (like [`parse_strtof`] but in double precision).
fn parse_atof(s: &[u8]) -> f64 {
    if let Some((v, _)) = special_prefix(s) {
        return v;
    }
    let len = decimal_prefix_len(s);
    if len == 0 {
        return 0.0;
    }
    std::str::from_utf8(&s[..len])
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// Parses a colour field as pj_dump does: three or four numbers separated by
/// spaces or commas, or else six hexadecimal digits (`ff8000`).
///
/// `Ok(None)` for an empty field, `Err(())` for a field pj_dump rejects.
#[allow(clippy::result_unit_err)]
pub fn parse_color(s: &[u8]) -> Result<Option<Color>, ()> {
    if s.is_empty() {
        return Ok(None);
    }
    let parts: Vec<f64> = s
        .split(|&b| b == b' ' || b == b',')
        .filter(|t| !t.is_empty())
        .take(5)
        .map(parse_atof)
        .collect();
    match parts.len() {
        3 => {
            return Ok(Some(Color {
                r: parts[0] as f32,
                g: parts[1] as f32,
                b: parts[2] as f32,
                a: 1.0,
            }))
        }
        4 => {
            return Ok(Some(Color {
                r: parts[0] as f32,
                g: parts[1] as f32,
                b: parts[2] as f32,
                a: parts[3] as f32,
            }))
        }
        _ => {}
    }
    // HTML-like hex colour: a component completes at every odd index.
    let mut comp: u32 = 0;
    let mut rgb = [0f32; 3];
    let mut cnt = 0;
    for (i, &c) in s.iter().enumerate() {
        let d = (c as char).to_digit(16).ok_or(())?;
        comp = comp * 16 + d;
        if i % 2 == 1 {
            if cnt == 3 {
                return Err(());
            }
            rgb[cnt] = comp as f32 / 256.0;
            cnt += 1;
            comp = 0;
        }
    }
    if cnt == 3 {
        Ok(Some(Color {
            r: rgb[0],
            g: rgb[1],
            b: rgb[2],
            a: 1.0,
        }))
    } else {
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_digit_dates_do_not_overflow() {
        assert_eq!(parse_date(b"99999999999999999999"), Some(1e20));
        assert_eq!(
            parse_date(b"18446744073709551616"),
            Some(18446744073709551616.0)
        );
        assert_eq!(
            parse_date(b"1234567890.123456789"),
            "1234567890.123456789".parse::<f64>().ok()
        );
    }

    #[test]
    fn dates_take_the_numeric_prefix() {
        assert_eq!(parse_date(b"0.320000000"), Some(0.32));
        assert_eq!(parse_date(b"4103.658751000"), Some(4103.658751));
        assert_eq!(parse_date(b"1.5abc"), Some(1.5));
        assert_eq!(parse_date(b"-2"), Some(-2.0));
        assert_eq!(parse_date(b"+.5"), Some(0.5));
        assert_eq!(parse_date(b"5."), Some(5.0));
        assert_eq!(parse_date(b"1e3"), Some(1000.0));
        assert_eq!(parse_date(b"1e"), Some(1.0));
        assert_eq!(parse_date(b"1.5e-2x"), Some(0.015));
        assert_eq!(parse_date(b"inf"), Some(f64::INFINITY));
        assert!(parse_date(b"NaN").unwrap().is_nan());
        assert_eq!(parse_date(b""), None);
        assert_eq!(parse_date(b"abc"), None);
        assert_eq!(parse_date(b"."), None);
        assert_eq!(parse_date(b"-"), None);
        assert_eq!(parse_date(b" 1"), None);
    }

    #[test]
    fn fast_date_path_is_correctly_rounded() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let int = state % 100_000;
            let frac = (state >> 20) % 1_000_000_000;
            let text = format!("{int}.{frac:09}");
            assert_eq!(
                parse_date(text.as_bytes()),
                text.parse::<f64>().ok(),
                "{text}"
            );
        }
        assert_eq!(parse_date(b"-0.5"), Some(-0.5));
        assert_eq!(parse_date(b"00012.50"), Some(12.5));
    }

    #[test]
    fn strtof_is_single_precision_and_lenient() {
        assert_eq!(parse_strtof(b"1.000000"), 1.0);
        assert_eq!(parse_strtof(b"0.1") as f64, 0.1f32 as f64);
        assert_ne!(parse_strtof(b"0.1") as f64, 0.1f64);
        assert_eq!(parse_strtof(b"  7x"), 7.0);
        assert_eq!(parse_strtof(b"x"), 0.0);
        assert_eq!(parse_strtof(b""), 0.0);
        assert_eq!(parse_strtof(b"0x10"), 16.0);
        assert_eq!(parse_strtof(b"-0x1.8p1"), -3.0);
        assert_eq!(parse_strtof(b"0x"), 0.0);
        assert_eq!(parse_strtof(b"-inf"), f32::NEG_INFINITY);
        assert_eq!(parse_strtof(b"1e40"), f32::INFINITY);
    }

    #[test]
    fn colors() {
        let c = parse_color(b"1.0 0.5 0").unwrap().unwrap();
        assert_eq!((c.r, c.g, c.b, c.a), (1.0, 0.5, 0.0, 1.0));
        let c = parse_color(b"0.1,0.2,0.3,0.4").unwrap().unwrap();
        assert_eq!(c.a, 0.4);
        let c = parse_color(b"ff8000").unwrap().unwrap();
        assert_eq!((c.r, c.g, c.b), (255.0 / 256.0, 128.0 / 256.0, 0.0));
        assert_eq!(parse_color(b""), Ok(None));
        assert_eq!(parse_color(b"#ff8000"), Err(()));
        assert_eq!(parse_color(b"1 2"), Err(()));
        assert_eq!(parse_color(b"ff80001122"), Err(()));
    }
}
