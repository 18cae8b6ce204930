//! Splitting a Pajé trace into lines and lines into words.
//!
//! The rules follow pajeng's line breaker (the reference reader):
//! words are separated by C `isspace` characters; a `"` at the start of a
//! word opens a quoted word that ends at the next `"` (a `"` inside a word is
//! an ordinary character); `#` outside quotes starts a comment that runs to
//! the end of the line, even in the middle of a word. Quoted words never span
//! lines.
//!
//! One deliberate difference: pajeng 1.3.6 does not look at the character
//! right after an opening quote, so `""` (an empty field) swallows the rest of
//! the line. This was fixed upstream in pajeng 1.3.7; here `""` is simply an
//! empty word, as in ViTE.

/// Most words kept for one line. pajeng keeps 20; a few more are allowed so
/// that definitions with a handful of user fields still work.
pub const MAX_FIELDS: usize = 24;

/// The words of one line, borrowed from the input.
#[derive(Clone, Copy)]
pub struct Words<'a> {
    words: [&'a [u8]; MAX_FIELDS],
    stored: usize,
    total: usize,
    unterminated_quote: bool,
}

impl Default for Words<'_> {
    fn default() -> Self {
        Words {
            words: [&[]; MAX_FIELDS],
            stored: 0,
            total: 0,
            unterminated_quote: false,
        }
    }
}

impl<'a> Words<'a> {
    /// The stored words (at most [`MAX_FIELDS`]).
    pub fn as_slice(&self) -> &[&'a [u8]] {
        &self.words[..self.stored]
    }

    /// How many words the line had, including any beyond [`MAX_FIELDS`].
    pub fn total(&self) -> usize {
        self.total
    }

    /// True when the last word opened a quote that the line never closed.
    pub fn unterminated_quote(&self) -> bool {
        self.unterminated_quote
    }

    /// The `i`-th word, or an empty slice past the end.
    pub fn get(&self, i: usize) -> &'a [u8] {
        if i < self.stored {
            self.words[i]
        } else {
            &[]
        }
    }

    fn push(&mut self, w: &'a [u8]) {
        if self.stored < MAX_FIELDS {
            self.words[self.stored] = w;
            self.stored += 1;
        }
        self.total += 1;
    }
}

/// C's `isspace` in the "C" locale.
#[inline]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Splits `line` (without its `\n`) into words.
pub fn split_words(line: &[u8]) -> Words<'_> {
    let mut out = Words::default();
    split_words_into(line, &mut out);
    out
}

/// Like [`split_words`], reusing `out` (no 400-byte value to move per line).
pub fn split_words_into<'a>(line: &'a [u8], out: &mut Words<'a>) {
    out.stored = 0;
    out.total = 0;
    out.unterminated_quote = false;
    let n = line.len();
    let mut i = 0;
    while i < n {
        let b = line[i];
        if is_space(b) {
            i += 1;
        } else if b == b'#' {
            break;
        } else if b == b'"' {
            let start = i + 1;
            match line[start..].iter().position(|&c| c == b'"') {
                Some(len) => {
                    out.push(&line[start..start + len]);
                    i = start + len + 1;
                }
                None => {
                    out.push(&line[start..]);
                    out.unterminated_quote = true;
                    break;
                }
            }
        } else {
            let start = i;
            while i < n && !is_space(line[i]) && line[i] != b'#' {
                i += 1;
            }
            out.push(&line[start..i]);
        }
    }
}

/// Position of the next `\n` in `data` at or after `from`, if any.
#[inline]
pub fn find_newline(data: &[u8], from: usize) -> Option<usize> {
    data.get(from..)?
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_words(s.as_bytes())
            .as_slice()
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    #[test]
    fn plain_words_and_whitespace() {
        assert_eq!(words("  6 0.5\tp1 \r"), ["6", "0.5", "p1"]);
        assert!(words("   \t").is_empty());
    }

    #[test]
    fn quoted_words() {
        assert_eq!(
            words(r#"0 PROCESS 0 "A process""#),
            ["0", "PROCESS", "0", "A process"]
        );
        assert_eq!(words(r#""a"b"#), ["a", "b"]);
        assert_eq!(words(r#"x"y z"#), ["x\"y", "z"]);
        assert_eq!(words(r#"1 "" 2"#), ["1", "", "2"]);
        assert_eq!(words(r##"1 "#x" 2"##), ["1", "#x", "2"]);
    }

    #[test]
    fn comments() {
        assert_eq!(words("# whole line"), Vec::<String>::new());
        assert_eq!(words("1 2 # three"), ["1", "2"]);
        assert_eq!(words("w#z"), ["w"]);
    }

    #[test]
    fn unterminated_quote_runs_to_end_of_line() {
        let w = split_words(br#"1 "abc def"#);
        assert_eq!(w.as_slice(), [&b"1"[..], &b"abc def"[..]]);
        assert!(w.unterminated_quote());
    }

    #[test]
    fn too_many_words_are_counted_not_stored() {
        let line = (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
        let w = split_words(line.as_bytes());
        assert_eq!(w.total(), 40);
        assert_eq!(w.as_slice().len(), MAX_FIELDS);
        assert_eq!(w.get(MAX_FIELDS), b"");
    }

    #[test]
    fn newline_search() {
        assert_eq!(find_newline(b"ab\ncd\n", 0), Some(2));
        assert_eq!(find_newline(b"ab\ncd\n", 3), Some(5));
        assert_eq!(find_newline(b"ab", 0), None);
        assert_eq!(find_newline(b"ab", 7), None);
    }
}
