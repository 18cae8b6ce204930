//! The JSON text sequence framing of CTF 2 metadata (RFC 7464): every
//! fragment is a record separator (0x1E), one JSON text, and a line feed.
//! A JSON text cannot contain a raw 0x1E (control characters must be
//! escaped inside strings), so cutting at each separator finds the records.

use super::FragError;

/// ASCII record separator opening every fragment.
pub(crate) const RS: u8 = 0x1E;

/// One record: its JSON text and where it starts in the metadata.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    /// Number of the fragment, from 1.
    pub(crate) number: usize,
    /// Byte offset of its record separator.
    pub(crate) offset: usize,
    /// The JSON text (after the separator, trailing whitespace included).
    pub(crate) text: &'a [u8],
}

/// Cuts `bytes` into records. Whitespace may precede the first separator
/// (nothing else may); an empty record (two separators in a row) is an
/// error, as RFC 7464 calls it a truncated or corrupted text.
pub(crate) fn records(bytes: &[u8]) -> Result<Vec<Record<'_>>, FragError> {
    let Some(first) = bytes.iter().position(|&b| b == RS) else {
        return Err(FragError::new(
            0,
            0,
            "no record separator (0x1E): not CTF 2 metadata",
        ));
    };
    if let Some(bad) = bytes[..first].iter().position(|b| !b.is_ascii_whitespace()) {
        return Err(FragError::new(
            0,
            bad,
            "bytes before the first record separator (0x1E)",
        ));
    }
    let mut out = Vec::new();
    let mut start = first;
    while start < bytes.len() {
        let end = bytes[start + 1..]
            .iter()
            .position(|&b| b == RS)
            .map_or(bytes.len(), |p| start + 1 + p);
        let text = &bytes[start + 1..end];
        let number = out.len() + 1;
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(FragError::new(number, start, "empty fragment"));
        }
        out.push(Record {
            number,
            offset: start,
            text,
        });
        start = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_cut_at_separators() {
        let b = b"\n\x1e{\"a\":1}\n\x1e{\"b\":2}\n";
        let r = records(b).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].number, r[0].offset, r[0].text),
            (1, 1, &b"{\"a\":1}\n"[..])
        );
        assert_eq!((r[1].number, r[1].offset), (2, 10));
    }

    #[test]
    fn bad_framing_is_reported_with_offsets() {
        let e = records(b"x\x1e{}").unwrap_err();
        assert_eq!((e.fragment, e.offset), (0, 0));
        let e = records(b"\x1e{}\n\x1e\n\x1e{}").unwrap_err();
        assert_eq!((e.fragment, e.offset), (2, 4));
        assert!(records(b"{}").is_err());
    }
}
