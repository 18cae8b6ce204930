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

/// Where a word is in its line: `start..end` byte offsets.
pub type Span = (u32, u32);

/// What [`split_spans`] found besides the spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitInfo {
    /// Spans stored (at most [`MAX_FIELDS`]).
    pub stored: usize,
    /// Words on the line, including any beyond [`MAX_FIELDS`].
    pub total: usize,
    /// True when the last word opened a quote that the line never closed.
    pub unterminated_quote: bool,
}

/// The words of one line, borrowed from the input.
#[derive(Clone, Copy)]
pub struct Words<'a> {
    words: [&'a [u8]; MAX_FIELDS],
    info: SplitInfo,
}

impl Default for Words<'_> {
    fn default() -> Self {
        Words {
            words: [&[]; MAX_FIELDS],
            info: SplitInfo::default(),
        }
    }
}

impl<'a> Words<'a> {
    /// The stored words (at most [`MAX_FIELDS`]).
    pub fn as_slice(&self) -> &[&'a [u8]] {
        &self.words[..self.info.stored]
    }

    /// How many words the line had, including any beyond [`MAX_FIELDS`].
    pub fn total(&self) -> usize {
        self.info.total
    }

    /// True when the last word opened a quote that the line never closed.
    pub fn unterminated_quote(&self) -> bool {
        self.info.unterminated_quote
    }

    /// The `i`-th word, or an empty slice past the end.
    pub fn get(&self, i: usize) -> &'a [u8] {
        if i < self.info.stored {
            self.words[i]
        } else {
            &[]
        }
    }
}

/// C's `isspace` in the "C" locale.
#[inline]
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Byte classes of the splitter.
const ORDINARY: u8 = 0;
const SPACE: u8 = 1;
const COMMENT: u8 = 2;
const QUOTE: u8 = 3;
const NEWLINE: u8 = 4;

/// The class of every byte, so that the scan does one load per byte.
const CLASS: [u8; 256] = {
    let mut t = [ORDINARY; 256];
    t[b' ' as usize] = SPACE;
    t[b'\t' as usize] = SPACE;
    t[0x0b] = SPACE;
    t[0x0c] = SPACE;
    t[b'\r' as usize] = SPACE;
    t[b'\n' as usize] = NEWLINE;
    t[b'#' as usize] = COMMENT;
    t[b'"' as usize] = QUOTE;
    t
};

/// Splits the line of `data` starting at `start` into word spans
/// (relative to `start`), and finds where it ends, in one scan: returns
/// what was found and the position of the line's `\n` (or `data.len()`).
/// The first [`MAX_FIELDS`] spans go to `spans`, the others are only
/// counted. This is the only implementation of the splitting rules; the
/// other functions of this module are built on it.
#[inline]
pub fn split_line(data: &[u8], start: usize, spans: &mut [Span; MAX_FIELDS]) -> (SplitInfo, usize) {
    let mut info = SplitInfo::default();
    let n = data.len();
    let mut i = start;
    let mut push = |s: usize, e: usize, info: &mut SplitInfo| {
        if info.stored < MAX_FIELDS {
            // Offsets in a line fit: the reader refuses lines of 4 GiB.
            spans[info.stored] = ((s - start) as u32, (e - start) as u32);
            info.stored += 1;
        }
        info.total += 1;
    };
    while i < n {
        match CLASS[usize::from(data[i])] {
            SPACE => i += 1,
            NEWLINE => return (info, i),
            COMMENT => break,
            QUOTE => {
                let from = i + 1;
                // Quoted words never span lines.
                match memchr::memchr2(b'"', b'\n', &data[from..]) {
                    Some(len) if data[from + len] == b'"' => {
                        push(from, from + len, &mut info);
                        i = from + len + 1;
                    }
                    stop => {
                        let end = stop.map_or(n, |len| from + len);
                        push(from, end, &mut info);
                        info.unterminated_quote = true;
                        return (info, end);
                    }
                }
            }
            _ => {
                let from = i;
                i += 1;
                // A word ends at a space, a comment or the end of the
                // line; a quote inside a word is an ordinary character.
                while i < n && matches!(CLASS[usize::from(data[i])], ORDINARY | QUOTE) {
                    i += 1;
                }
                push(from, i, &mut info);
            }
        }
    }
    // A comment (or the end of the data): the line ends at the next `\n`.
    let end = if i < n {
        memchr::memchr(b'\n', &data[i..]).map_or(n, |p| i + p)
    } else {
        n
    };
    (info, end)
}

/// Splits `line` (without its `\n`) into word spans; the first
/// [`MAX_FIELDS`] go to `spans`, the others are only counted.
#[inline]
pub fn split_spans(line: &[u8], spans: &mut [Span; MAX_FIELDS]) -> SplitInfo {
    split_line(line, 0, spans).0
}

/// Splits `line` (without its `\n`) into words.
pub fn split_words(line: &[u8]) -> Words<'_> {
    let mut out = Words::default();
    split_words_into(line, &mut out);
    out
}

/// Like [`split_words`], reusing `out`.
pub fn split_words_into<'a>(line: &'a [u8], out: &mut Words<'a>) {
    let mut spans = [(0, 0); MAX_FIELDS];
    out.info = split_spans(line, &mut spans);
    for (w, &(s, e)) in out.words.iter_mut().zip(&spans[..out.info.stored]) {
        *w = &line[s as usize..e as usize];
    }
}

/// Position of the next `\n` in `data` at or after `from`, if any.
#[inline]
pub fn find_newline(data: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', data.get(from..)?).map(|p| p + from)
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
    fn split_line_finds_the_line_end_in_the_same_scan() {
        let data = b"1 \"a b\" c\n2 # x \"y\n3 \"open\n4";
        let mut spans = [(0, 0); MAX_FIELDS];
        let words = |start: usize, spans: &[Span], n: usize| -> Vec<String> {
            spans[..n]
                .iter()
                .map(|&(s, e)| {
                    String::from_utf8_lossy(&data[start + s as usize..start + e as usize])
                        .into_owned()
                })
                .collect()
        };
        let (info, end) = split_line(data, 0, &mut spans);
        assert_eq!((info.total, end), (3, 9));
        assert_eq!(words(0, &spans, 3), ["1", "a b", "c"]);
        // A comment runs to the newline, quotes in it included.
        let (info, end) = split_line(data, 10, &mut spans);
        assert_eq!((info.total, end), (1, 18));
        // An open quote stops at the newline, not at the next quote.
        let (info, end) = split_line(data, 19, &mut spans);
        assert_eq!((info.total, info.unterminated_quote, end), (2, true, 26));
        assert_eq!(words(19, &spans, 2), ["3", "open"]);
        let (info, end) = split_line(data, 27, &mut spans);
        assert_eq!((info.total, end), (1, data.len()));
    }

    #[test]
    fn newline_search() {
        assert_eq!(find_newline(b"ab\ncd\n", 0), Some(2));
        assert_eq!(find_newline(b"ab\ncd\n", 3), Some(5));
        assert_eq!(find_newline(b"ab", 0), None);
        assert_eq!(find_newline(b"ab", 7), None);
    }
}
