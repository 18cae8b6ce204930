//! Unsigned LEB128 varints (7 bits a byte, low bits first) and the
//! zigzag mapping of signed numbers onto them: the byte encodings the
//! store's columns, the sealed statistics cells and a render's
//! properties share. The columns' block decoder reads them a word at a
//! time (`model::pack`); everything else reads them here.

/// Appends `v` to `out` as a varint.
#[inline]
pub(crate) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at the start of `bytes`, which then start after it; `None`
/// when `bytes` end inside it or it does not fit 64 bits.
#[inline]
pub(crate) fn take(bytes: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
}

/// `v` as an unsigned number small when `v` is near 0 (-1 is 1).
#[inline]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub(crate) fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzags_round_trip() {
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut out = Vec::new();
        for &v in &values {
            put(&mut out, v);
        }
        assert_eq!(out[..4], [0, 1, 127, 0x80]);
        let mut rest = &out[..];
        for &v in &values {
            assert_eq!(take(&mut rest), Some(v));
        }
        assert_eq!(take(&mut rest), None);
        // Cut inside a varint.
        assert_eq!(take(&mut &[0x80u8, 0x80][..]), None);
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
    }
}
