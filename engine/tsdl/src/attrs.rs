//! Interpretation of attribute values (`size = 32;`, `byte_order = be;`,
//! `uuid = "...";`, ...), with errors pointing at the value.

use crate::ast::{Attr, Value};
use crate::error::{Pos, TsdlError};
use crate::ir::{ByteOrder, DisplayBase, Encoding};

pub(crate) fn alignment(a: u64, pos: Pos) -> Result<u32, TsdlError> {
    match u32::try_from(a) {
        Ok(v) if v.is_power_of_two() => Ok(v),
        _ => Err(TsdlError::semantic(
            pos,
            format!("alignment {a} is not a power of two (in bits)"),
        )),
    }
}

pub(crate) fn alignment_attr(a: &Attr) -> Result<u32, TsdlError> {
    let v = u64_value(a)?;
    alignment(v, a.value_pos)
}

pub(crate) fn int_value(a: &Attr) -> Result<i128, TsdlError> {
    match a.value {
        Value::Int(v) => Ok(v),
        _ => Err(TsdlError::semantic(
            a.value_pos,
            format!("attribute `{}` must be an integer", a.key),
        )),
    }
}

pub(crate) fn u64_value(a: &Attr) -> Result<u64, TsdlError> {
    u64::try_from(int_value(a)?).map_err(|_| {
        TsdlError::semantic(
            a.value_pos,
            format!(
                "attribute `{}` must be a non-negative 64-bit integer",
                a.key
            ),
        )
    })
}

pub(crate) fn i64_value(a: &Attr) -> Result<i64, TsdlError> {
    i64::try_from(int_value(a)?).map_err(|_| {
        TsdlError::semantic(
            a.value_pos,
            format!(
                "attribute `{}` does not fit in a signed 64-bit integer",
                a.key
            ),
        )
    })
}

/// A string, or an identifier used as one (`name = monotonic;`).
pub(crate) fn str_value(a: &Attr) -> Result<String, TsdlError> {
    match &a.value {
        Value::Str(s) => Ok(s.clone()),
        Value::Path(p) => Ok(p.join(".")),
        Value::Int(_) => Err(TsdlError::semantic(
            a.value_pos,
            format!("attribute `{}` must be a string", a.key),
        )),
    }
}

/// Identifier or string value, for keyword-like attributes.
pub(crate) fn word_value(a: &Attr) -> Option<String> {
    match &a.value {
        Value::Str(s) => Some(s.clone()),
        Value::Path(p) if p.len() == 1 => Some(p[0].clone()),
        _ => None,
    }
}

pub(crate) fn bool_value(a: &Attr) -> Result<bool, TsdlError> {
    let v = match &a.value {
        Value::Int(0) => Some(false),
        Value::Int(1) => Some(true),
        _ => match word_value(a).as_deref() {
            Some("true" | "TRUE" | "True") => Some(true),
            Some("false" | "FALSE" | "False") => Some(false),
            _ => None,
        },
    };
    v.ok_or_else(|| {
        TsdlError::semantic(
            a.value_pos,
            format!("attribute `{}` must be true, false, 1 or 0", a.key),
        )
    })
}

/// `Some(order)`, or `None` for `native`.
pub(crate) fn byte_order_value(a: &Attr) -> Result<Option<ByteOrder>, TsdlError> {
    match word_value(a).as_deref() {
        Some("be" | "network") => Ok(Some(ByteOrder::Big)),
        Some("le") => Ok(Some(ByteOrder::Little)),
        Some("native") => Ok(None),
        _ => Err(TsdlError::semantic(
            a.value_pos,
            "byte_order must be be, le, network or native",
        )),
    }
}

pub(crate) fn base_value(a: &Attr) -> Result<DisplayBase, TsdlError> {
    let base = match &a.value {
        Value::Int(2) => Some(DisplayBase::Binary),
        Value::Int(8) => Some(DisplayBase::Octal),
        Value::Int(10) => Some(DisplayBase::Decimal),
        Value::Int(16) => Some(DisplayBase::Hexadecimal),
        Value::Int(_) => None,
        _ => match word_value(a).as_deref() {
            Some("decimal" | "dec" | "d" | "i" | "u") => Some(DisplayBase::Decimal),
            Some("hexadecimal" | "hex" | "x" | "X" | "p" | "pointer") => {
                Some(DisplayBase::Hexadecimal)
            }
            Some("octal" | "oct" | "o") => Some(DisplayBase::Octal),
            Some("binary" | "bin" | "b") => Some(DisplayBase::Binary),
            _ => None,
        },
    };
    base.ok_or_else(|| TsdlError::semantic(a.value_pos, "base must be 2, 8, 10 or 16"))
}

pub(crate) fn encoding_value(a: &Attr) -> Result<Encoding, TsdlError> {
    let w = word_value(a).map(|w| w.to_ascii_lowercase());
    match w.as_deref() {
        Some("none") => Ok(Encoding::None),
        Some("utf8" | "utf-8") => Ok(Encoding::Utf8),
        Some("ascii") => Ok(Encoding::Ascii),
        _ => Err(TsdlError::semantic(
            a.value_pos,
            "encoding must be none, UTF8 or ASCII",
        )),
    }
}

/// `map = clock.NAME.value` gives `NAME`.
pub(crate) fn clock_map_value(a: &Attr) -> Result<String, TsdlError> {
    match &a.value {
        Value::Path(p) if p.len() == 3 && p[0] == "clock" && p[2] == "value" => Ok(p[1].clone()),
        _ => Err(TsdlError::semantic(
            a.value_pos,
            "map must be of the form clock.NAME.value",
        )),
    }
}

/// `"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"`.
pub(crate) fn uuid_value(a: &Attr) -> Result<[u8; 16], TsdlError> {
    let err = || {
        TsdlError::semantic(
            a.value_pos,
            format!(
                "attribute `{}` must be a UUID string like \"01234567-89ab-cdef-0123-456789abcdef\"",
                a.key
            ),
        )
    };
    let Value::Str(s) = &a.value else {
        return Err(err());
    };
    parse_uuid(s).ok_or_else(err)
}

/// Parses the canonical 8-4-4-4-12 hexadecimal UUID form.
pub(crate) fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: Vec<u8> = b.iter().copied().filter(|&c| c != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}
