//! Bit-exact reading of CTF integers and floats at any bit offset.
//!
//! CTF 1.8 numbers bits differently per byte order: in a little-endian
//! field, bit 0 of the stream is the least significant bit of the first
//! byte; in a big-endian field it is the most significant bit of the first
//! byte. Either way a field of `size` bits at bit offset `off` is the
//! `size`-bit run starting at `off` in that numbering, its first bit being
//! the least (LE) or most (BE) significant bit of the value.
//!
//! Every read is bounds-checked against the slice and returns
//! [`OutOfBounds`] instead of panicking.

use traceloom_tsdl::ir::ByteOrder;

/// A read would go past the end of the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds {
    /// Bit offset where the read started.
    pub bit_offset: u64,
    /// Number of bits requested.
    pub bits: u64,
}

/// Mask of the `size` low bits (`size` in 1..=64).
#[inline(always)]
fn mask(size: u32) -> u64 {
    if size >= 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    }
}

/// Reads an unsigned integer of `size` bits (1..=64) at bit offset `off`.
#[inline(always)]
pub fn read_uint(data: &[u8], off: u64, size: u32, bo: ByteOrder) -> Result<u64, OutOfBounds> {
    debug_assert!((1..=64).contains(&size));
    let oob = OutOfBounds {
        bit_offset: off,
        bits: size as u64,
    };
    let end = off.checked_add(size as u64).ok_or(oob)?;
    if end > (data.len() as u64) * 8 {
        return Err(oob);
    }
    let byte = (off >> 3) as usize;
    let shift = (off & 7) as u32;
    // Fast path: byte-aligned power-of-two sizes (the overwhelming case in
    // LTTng traces).
    if shift == 0 {
        match (size, bo) {
            (8, _) => return Ok(data[byte] as u64),
            (16, ByteOrder::Little) => {
                return Ok(u16::from_le_bytes([data[byte], data[byte + 1]]) as u64)
            }
            (16, ByteOrder::Big) => {
                return Ok(u16::from_be_bytes([data[byte], data[byte + 1]]) as u64)
            }
            (32, ByteOrder::Little) => {
                return Ok(u32::from_le_bytes(data[byte..byte + 4].try_into().unwrap()) as u64)
            }
            (32, ByteOrder::Big) => {
                return Ok(u32::from_be_bytes(data[byte..byte + 4].try_into().unwrap()) as u64)
            }
            (64, ByteOrder::Little) => {
                return Ok(u64::from_le_bytes(data[byte..byte + 8].try_into().unwrap()))
            }
            (64, ByteOrder::Big) => {
                return Ok(u64::from_be_bytes(data[byte..byte + 8].try_into().unwrap()))
            }
            _ => {}
        }
    }
    // General path: gather the (at most 9) bytes covering the field into a
    // 128-bit accumulator, then shift the field out.
    let nbytes = (shift + size).div_ceil(8) as usize;
    let acc: u128 = if byte + 16 <= data.len() {
        let chunk: [u8; 16] = data[byte..byte + 16].try_into().unwrap();
        match bo {
            ByteOrder::Little => u128::from_le_bytes(chunk),
            ByteOrder::Big => u128::from_be_bytes(chunk),
        }
    } else {
        let mut chunk = [0u8; 16];
        let avail = (data.len() - byte).min(16);
        chunk[..avail].copy_from_slice(&data[byte..byte + avail]);
        match bo {
            ByteOrder::Little => u128::from_le_bytes(chunk),
            ByteOrder::Big => u128::from_be_bytes(chunk),
        }
    };
    debug_assert!(nbytes <= 9);
    let v = match bo {
        ByteOrder::Little => (acc >> shift) as u64,
        ByteOrder::Big => (acc >> (128 - shift - size)) as u64,
    };
    Ok(v & mask(size))
}

/// Sign-extends the `size` low bits of `v`.
#[inline(always)]
pub fn sign_extend(v: u64, size: u32) -> i64 {
    if size >= 64 {
        v as i64
    } else {
        let s = 64 - size;
        ((v << s) as i64) >> s
    }
}

/// Reads a two's complement signed integer of `size` bits (1..=64).
#[inline(always)]
pub fn read_sint(data: &[u8], off: u64, size: u32, bo: ByteOrder) -> Result<i64, OutOfBounds> {
    read_uint(data, off, size, bo).map(|v| sign_extend(v, size))
}

/// Reads an IEEE 754 binary32 (`size == 32`) or binary64 (`size == 64`)
/// float, widened to `f64`. Other sizes are rejected when the decoder is
/// compiled, so they never reach this function; they read as NaN.
#[inline(always)]
pub fn read_float(data: &[u8], off: u64, size: u32, bo: ByteOrder) -> Result<f64, OutOfBounds> {
    let raw = read_uint(data, off, size, bo)?;
    Ok(match size {
        32 => f32::from_bits(raw as u32) as f64,
        64 => f64::from_bits(raw),
        _ => f64::NAN,
    })
}

/// Rounds `off` up to a multiple of `align` (a power of two).
#[inline(always)]
pub fn align_up(off: u64, align: u64) -> u64 {
    let m = align.max(1) - 1;
    (off.saturating_add(m)) & !m
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bit-by-bit reference: the textbook definition of CTF bit numbering.
    fn reference(data: &[u8], off: u64, size: u32, bo: ByteOrder) -> Option<u64> {
        if off + size as u64 > data.len() as u64 * 8 {
            return None;
        }
        let mut v: u64 = 0;
        for i in 0..size as u64 {
            let pos = off + i;
            let byte = data[(pos / 8) as usize];
            match bo {
                ByteOrder::Little => {
                    let bit = (byte >> (pos % 8)) & 1;
                    v |= (bit as u64) << i;
                }
                ByteOrder::Big => {
                    let bit = (byte >> (7 - pos % 8)) & 1;
                    v = (v << 1) | bit as u64;
                }
            }
        }
        Some(v)
    }

    fn bo_strategy() -> impl Strategy<Value = ByteOrder> {
        prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn matches_bit_by_bit_reference(
            data in proptest::collection::vec(any::<u8>(), 0..40),
            off in 0u64..340,
            size in 1u32..=64,
            bo in bo_strategy(),
        ) {
            let got = read_uint(&data, off, size, bo).ok();
            prop_assert_eq!(got, reference(&data, off, size, bo));
            let s = read_sint(&data, off, size, bo).ok();
            prop_assert_eq!(s, reference(&data, off, size, bo).map(|v| sign_extend(v, size)));
        }

        #[test]
        fn aligned_fast_path_matches_reference(
            data in proptest::collection::vec(any::<u8>(), 0..24),
            byte in 0u64..24,
            size in prop_oneof![Just(8u32), Just(16), Just(32), Just(64)],
            bo in bo_strategy(),
        ) {
            prop_assert_eq!(read_uint(&data, byte * 8, size, bo).ok(), reference(&data, byte * 8, size, bo));
        }
    }

    #[test]
    fn ctf_bit_numbering_examples() {
        // LE: 3 bits at offset 2 of 0b1110_1100 are 0b011.
        assert_eq!(
            read_uint(&[0b1110_1100], 2, 3, ByteOrder::Little),
            Ok(0b011)
        );
        // BE: 3 bits at offset 2 of 0b1110_1100 are 0b101.
        assert_eq!(read_uint(&[0b1110_1100], 2, 3, ByteOrder::Big), Ok(0b101));
        // A field crossing bytes: LE 12 bits at offset 4.
        assert_eq!(
            read_uint(&[0xAB, 0xCD], 4, 12, ByteOrder::Little),
            Ok(0xCDA)
        );
        assert_eq!(read_uint(&[0xAB, 0xCD], 4, 12, ByteOrder::Big), Ok(0xBCD));
        // 64 bits at an odd offset covers 9 bytes.
        let d = [0xFFu8; 9];
        assert_eq!(read_uint(&d, 7, 64, ByteOrder::Big), Ok(u64::MAX));
        assert_eq!(read_uint(&d, 7, 64, ByteOrder::Little), Ok(u64::MAX));
        assert_eq!(read_sint(&[0b1000_0000], 5, 3, ByteOrder::Little), Ok(-4));
        assert_eq!(
            read_sint(&[0x80, 0, 0, 0, 0, 0, 0, 0], 0, 64, ByteOrder::Big),
            Ok(i64::MIN)
        );
    }

    #[test]
    fn out_of_bounds_is_an_error() {
        assert!(read_uint(&[], 0, 1, ByteOrder::Little).is_err());
        assert!(read_uint(&[0; 4], 1, 32, ByteOrder::Little).is_err());
        assert!(read_uint(&[0; 4], 0, 32, ByteOrder::Big).is_ok());
        assert!(read_uint(&[0; 8], u64::MAX - 3, 8, ByteOrder::Big).is_err());
        assert_eq!(
            read_uint(&[0; 2], 9, 8, ByteOrder::Little),
            Err(OutOfBounds {
                bit_offset: 9,
                bits: 8
            })
        );
    }

    #[test]
    fn floats() {
        let b = 1.5f32.to_le_bytes();
        assert_eq!(read_float(&b, 0, 32, ByteOrder::Little), Ok(1.5));
        let b = (-2.25f64).to_be_bytes();
        assert_eq!(read_float(&b, 0, 64, ByteOrder::Big), Ok(-2.25));
        // Unaligned double.
        let mut d = vec![0u8; 9];
        let bits = 3.0f64.to_bits();
        for i in 0..64 {
            if bits >> i & 1 == 1 {
                let pos = 3 + i;
                d[pos / 8] |= 1 << (pos % 8);
            }
        }
        assert_eq!(read_float(&d, 3, 64, ByteOrder::Little), Ok(3.0));
    }

    #[test]
    fn alignment() {
        assert_eq!(align_up(0, 8), 0);
        assert_eq!(align_up(1, 8), 8);
        assert_eq!(align_up(9, 32), 32);
        assert_eq!(align_up(13, 1), 13);
        assert_eq!(align_up(13, 0), 13);
    }
}
