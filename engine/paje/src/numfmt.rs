//! printf-compatible number formatting for the pj_dump output.
//!
//! pj_dump prints entity times with `std::fixed` (C's `%.6f`) and container
//! times with the stream default (C's `%g`). Rust's float formatting rounds
//! the exact binary value half-to-even, as glibc does, so `{:.N}` matches
//! `%.Nf`; `%g` is built on top of it below.

use std::io::{self, Write};

/// C's spelling of infinities and NaNs (`inf`, `-inf`, `nan`, `-nan`).
fn write_special(out: &mut Vec<u8>, x: f64) -> bool {
    if x.is_nan() {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        true
    } else if x.is_infinite() {
        out.extend_from_slice(if x < 0.0 { b"-inf" } else { b"inf" });
        true
    } else {
        false
    }
}

const POW10: [f64; 10] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// `%.{prec}f` by integer arithmetic when the rounding is unambiguous.
///
/// `|x| * 10^prec` is computed with an error of at most half an ulp of the
/// product; when its fractional part is further than a few ulps from one
/// half, rounding that product gives the same digits as rounding the exact
/// binary value (which is what printf does). Otherwise `None`.
fn fixed_fast(out: &mut Vec<u8>, x: f64, prec: usize) -> Option<()> {
    let scale = *POW10.get(prec)?;
    let scaled = x.abs() * scale;
    // Written so that NaN also takes the slow path.
    if scaled.is_nan() || scaled >= 9.0e15 {
        return None;
    }
    let floor = scaled.floor();
    let frac = scaled - floor;
    if (frac - 0.5).abs() <= scaled * f64::EPSILON * 4.0 + f64::MIN_POSITIVE {
        return None;
    }
    let rounded = floor as u64 + u64::from(frac > 0.5);
    let unit = scale as u64;
    if x.is_sign_negative() {
        out.push(b'-');
    }
    let mut digits = itoa_u64(rounded / unit);
    out.append(&mut digits);
    if prec > 0 {
        out.push(b'.');
        let frac_digits = itoa_u64(rounded % unit);
        out.resize(out.len() + prec - frac_digits.len(), b'0');
        out.extend_from_slice(&frac_digits);
    }
    Some(())
}

fn itoa_u64(mut v: u64) -> Vec<u8> {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf[i..].to_vec()
}

/// Appends `x` formatted like C's `%.{prec}f`.
pub fn push_fixed(out: &mut Vec<u8>, x: f64, prec: usize) {
    if write_special(out, x) || fixed_fast(out, x, prec).is_some() {
        return;
    }
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{x:.prec$}");
}

/// Removes trailing zeros after a decimal point, and the point if bare.
fn strip_fraction_zeros(digits: &mut Vec<u8>) {
    if digits.contains(&b'.') {
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits.last() == Some(&b'.') {
            digits.pop();
        }
    }
}

/// Appends `x` formatted like C's `%.{prec}g` (default stream output when
/// `prec` is 6).
pub fn push_general(out: &mut Vec<u8>, x: f64, prec: usize) {
    if write_special(out, x) {
        return;
    }
    let p = prec.max(1);
    // The exponent C uses is that of the %e conversion, after rounding.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    if exp < -4 || exp >= p as i32 {
        let mut m = mantissa.as_bytes().to_vec();
        strip_fraction_zeros(&mut m);
        out.extend_from_slice(&m);
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        let mut m = format!("{x:.decimals$}").into_bytes();
        strip_fraction_zeros(&mut m);
        out.extend_from_slice(&m);
    }
}

/// Writes `x` like C's `%.{prec}f` to `w`.
pub fn write_fixed(w: &mut impl Write, x: f64, prec: usize) -> io::Result<()> {
    let mut buf = Vec::with_capacity(32);
    push_fixed(&mut buf, x, prec);
    w.write_all(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        let mut v = Vec::new();
        push_general(&mut v, x, 6);
        String::from_utf8(v).unwrap()
    }

    fn f(x: f64, p: usize) -> String {
        let mut v = Vec::new();
        push_fixed(&mut v, x, p);
        String::from_utf8(v).unwrap()
    }

    // Expected strings were produced by glibc's printf.
    #[test]
    fn general_matches_glibc() {
        assert_eq!(g(0.0), "0");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(1.34), "1.34");
        assert_eq!(g(2.1), "2.1");
        assert_eq!(g(10.0), "10");
        assert_eq!(g(4.080734), "4.08073");
        assert_eq!(g(40704.49859), "40704.5");
        assert_eq!(g(1.8741e-05), "1.8741e-05");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(1234567.0), "1.23457e+06");
        assert_eq!(g(999999.5), "1e+06");
        assert_eq!(g(-0.5), "-0.5");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(f64::INFINITY), "inf");
        assert_eq!(g(f64::NAN), "nan");
    }

    #[test]
    fn fast_path_agrees_with_exact_formatting() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for i in 0..200_000 {
            let x = match i % 4 {
                0 => (next() % 100_000_000_000) as f64 / 1e9,
                1 => (next() % 1_000_000) as f64 * 0.5e-6,
                2 => f64::from_bits(next() >> 2) % 1e6,
                _ => -((next() % 10_000_000) as f64) / 1e7,
            };
            for prec in [0, 2, 6, 9] {
                let mut fast = Vec::new();
                if fixed_fast(&mut fast, x, prec).is_some() {
                    assert_eq!(
                        String::from_utf8(fast).unwrap(),
                        format!("{x:.prec$}"),
                        "{x:e} {prec}"
                    );
                }
            }
        }
    }

    #[test]
    fn fixed_matches_glibc() {
        assert_eq!(f(0.5, 0), "0");
        assert_eq!(f(1.5, 0), "2");
        assert_eq!(f(2.5, 0), "2");
        assert_eq!(f(0.125, 2), "0.12");
        assert_eq!(f(0.375, 2), "0.38");
        assert_eq!(f(5e-7, 6), "0.000000");
        assert_eq!(f(2.0000005, 6), "2.000001");
        assert_eq!(f(0.1234565, 6), "0.123456");
        assert_eq!(f(-1e-9, 6), "-0.000000");
        assert_eq!(f(f64::NEG_INFINITY, 6), "-inf");
        assert_eq!(f(-f64::NAN, 6), "-nan");
    }
}
