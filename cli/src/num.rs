//! Allocation-free number formatting into a byte buffer, with the exact
//! output of the C `printf` conversions babeltrace2 uses (`%PRIu64`,
//! `%PRId64`, `0x%PRIX64`, `0%PRIo64`, `%020PRIu64`, `%g`).

use std::io::Write;

/// Appends `v` in decimal (`%PRIu64`).
pub fn push_u64(buf: &mut Vec<u8>, v: u64) {
    push_u64_padded(buf, v, 0);
}

/// Appends `v` in decimal, left-padded with zeros to at least `width`
/// digits (`%0<width>PRIu64`).
pub fn push_u64_padded(buf: &mut Vec<u8>, mut v: u64, width: usize) {
    // Two digits at a time from a table: timestamps print a dozen numbers
    // per event. u64::MAX has 20 digits.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
                                2021222324252627282930313233343536373839\
                                4041424344454647484950515253545556575859\
                                6061626364656667686970717273747576777879\
                                8081828384858687888990919293949596979899";
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    let digits = tmp.len() - i;
    for _ in digits..width {
        buf.push(b'0');
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `v` in decimal (`%PRId64`).
pub fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// Appends `v` in upper-case hexadecimal without prefix (`%PRIX64`).
pub fn push_hex_upper(buf: &mut Vec<u8>, v: u64) {
    push_radix_pow2(buf, v, 4);
}

/// Appends `v` in octal without prefix (`%PRIo64`).
pub fn push_octal(buf: &mut Vec<u8>, v: u64) {
    push_radix_pow2(buf, v, 3);
}

fn push_radix_pow2(buf: &mut Vec<u8>, mut v: u64, bits: u32) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mask = (1u64 << bits) - 1;
    // 64 bits in base 8 take 22 digits.
    let mut tmp = [0u8; 22];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = DIGITS[(v & mask) as usize];
        v >>= bits;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `v` as C's `printf("%g", v)` does (glibc): 6 significant digits,
/// scientific notation when the decimal exponent is below -4 or at least 6,
/// trailing zeros removed, `inf`/`nan` with their sign.
///
/// Rust's exact float formatting rounds like glibc (correctly rounded from the
/// binary value, ties to even), so the digits come from `{:.5e}` / `{:.N}`
/// and only the layout is adjusted here.
pub fn push_g(buf: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        buf.extend_from_slice(if v.is_sign_negative() {
            b"-nan"
        } else {
            b"nan"
        });
        return;
    }
    if v.is_infinite() {
        buf.extend_from_slice(if v < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    // Fast path: integral values below 10^6 print as integers under %g
    // (values that rounding would take to 1e+06 are excluded).
    if v.fract() == 0.0 && v.abs() < 999_999.5 && !(v == 0.0 && v.is_sign_negative()) {
        push_i64(buf, v as i64);
        return;
    }
    const PRECISION: i32 = 6;
    let start = buf.len();
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "{:.*e}", (PRECISION - 1) as usize, v);
    let e_pos = start
        + buf[start..]
            .iter()
            .position(|&b| b == b'e')
            .expect("`{:e}` output has an exponent");
    let exp: i32 = std::str::from_utf8(&buf[e_pos + 1..])
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("`{:e}` exponent is an integer");
    if !(-4..PRECISION).contains(&exp) {
        // Scientific: strip the mantissa's trailing zeros, then C's exponent
        // form (sign and at least two digits).
        buf.truncate(e_pos);
        strip_fraction_zeros(buf, start);
        buf.push(b'e');
        buf.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs() as u64;
        if a < 10 {
            buf.push(b'0');
        }
        push_u64(buf, a);
    } else {
        buf.truncate(start);
        let _ = write!(buf, "{:.*}", (PRECISION - 1 - exp) as usize, v);
        strip_fraction_zeros(buf, start);
    }
}

/// Removes trailing zeros of the fractional part of the number written at
/// `buf[start..]`, and the decimal point if nothing remains after it.
fn strip_fraction_zeros(buf: &mut Vec<u8>, start: usize) {
    if !buf[start..].contains(&b'.') {
        return;
    }
    while buf.last() == Some(&b'0') {
        buf.pop();
    }
    if buf.last() == Some(&b'.') {
        buf.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut b = Vec::new();
        f(&mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn integers() {
        assert_eq!(s(|b| push_u64(b, 0)), "0");
        assert_eq!(s(|b| push_u64(b, u64::MAX)), "18446744073709551615");
        assert_eq!(s(|b| push_i64(b, i64::MIN)), "-9223372036854775808");
        assert_eq!(s(|b| push_i64(b, -42)), "-42");
        assert_eq!(s(|b| push_u64_padded(b, 123, 20)), "00000000000000000123");
        assert_eq!(s(|b| push_u64_padded(b, 1234, 3)), "1234");
        assert_eq!(s(|b| push_hex_upper(b, 0xBF08_3A6C)), "BF083A6C");
        assert_eq!(s(|b| push_hex_upper(b, 0)), "0");
        assert_eq!(s(|b| push_hex_upper(b, u64::MAX)), "FFFFFFFFFFFFFFFF");
        assert_eq!(s(|b| push_octal(b, 8)), "10");
        assert_eq!(s(|b| push_octal(b, u64::MAX)), "1777777777777777777777");
    }

    #[test]
    fn g_matches_printf() {
        // Expected strings are glibc's printf("%g") output.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (2222.0, "2222"),
            (2.0, "2"),
            (1.23456789, "1.23457"),
            (0.5, "0.5"),
            (1e6, "1e+06"),
            (999999.5, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123455, "0.000123455"),
            (1e100, "1e+100"),
            (1.5e-300, "1.5e-300"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
            (-1.25, "-1.25"),
            (100000.0, "100000"),
            (f32::MAX as f64, "3.40282e+38"),
            (0.1f32 as f64, "0.1"),
        ];
        for &(v, want) in cases {
            assert_eq!(s(|b| push_g(b, v)), want, "{v:e}");
        }
    }
}
