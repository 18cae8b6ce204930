//! Splits filter text into tokens, tracking 1-based character columns.

use crate::ast::{CmpOp, GlobPattern, GlobPiece, Literal};
use crate::error::{ParseError, ParseErrorKind};
use crate::value::PathElem;

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokKind,
    /// 1-based column of the first character.
    pub col: usize,
    /// Source text of the token (empty for the end marker).
    pub text: String,
}

impl Token {
    /// Width in characters, at least 1 so an error always underlines something.
    pub(crate) fn width(&self) -> usize {
        self.text.chars().count().max(1)
    }

    /// The token as shown in "found ..." messages.
    pub(crate) fn describe(&self) -> String {
        if self.kind == TokKind::End {
            return "end of input".to_string();
        }
        const MAX: usize = 40;
        if self.text.chars().count() > MAX {
            let short: String = self.text.chars().take(MAX).collect();
            format!("'{short}…'")
        } else {
            format!("'{}'", self.text)
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokKind {
    /// `a.b[2].c`: a dotted name, possibly with indices. The first segment is
    /// always a name.
    Path(Vec<Segment>),
    /// A number: `Int`, `UInt` or `Float` (time literals become `Int` ns).
    Number(Literal),
    /// A string literal, escapes not yet decoded (their meaning depends on
    /// whether the string is a regex, a glob or plain text).
    Str(StrLit),
    LParen,
    RParen,
    Not,
    And,
    Or,
    Cmp(CmpOp),
    /// `=~`
    Match,
    End,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segment {
    pub elem: PathElem,
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StrLit {
    /// The text between the quotes, exactly as written.
    pub raw: String,
    /// Column of the first character after the opening quote.
    pub body_col: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Tokenizes the whole input; the last token is always [`TokKind::End`].
pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = Lexer {
        chars: &chars,
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        while lx.peek(0).is_some_and(char::is_whitespace) {
            lx.i += 1;
        }
        let start = lx.i;
        let Some(c) = lx.peek(0) else {
            out.push(Token {
                kind: TokKind::End,
                col: start + 1,
                text: String::new(),
            });
            return Ok(out);
        };
        let kind = match c {
            '(' => lx.single(TokKind::LParen),
            ')' => lx.single(TokKind::RParen),
            '&' if lx.peek(1) == Some('&') => lx.double(TokKind::And),
            '&' => return Err(mistyped(start, '&', "&&")),
            '|' if lx.peek(1) == Some('|') => lx.double(TokKind::Or),
            '|' => return Err(mistyped(start, '|', "||")),
            '=' if lx.peek(1) == Some('=') => lx.double(TokKind::Cmp(CmpOp::Eq)),
            '=' if lx.peek(1) == Some('~') => lx.double(TokKind::Match),
            '=' => return Err(mistyped(start, '=', "==")),
            '~' => return Err(mistyped(start, '~', "=~")),
            '!' if lx.peek(1) == Some('=') => lx.double(TokKind::Cmp(CmpOp::Ne)),
            '!' => lx.single(TokKind::Not),
            '<' if lx.peek(1) == Some('=') => lx.double(TokKind::Cmp(CmpOp::Le)),
            '<' => lx.single(TokKind::Cmp(CmpOp::Lt)),
            '>' if lx.peek(1) == Some('=') => lx.double(TokKind::Cmp(CmpOp::Ge)),
            '>' => lx.single(TokKind::Cmp(CmpOp::Gt)),
            '"' => lx.string()?,
            '-' if lx.peek(1).is_some_and(|d| d.is_ascii_digit()) => lx.number()?,
            d if d.is_ascii_digit() => lx.number()?,
            c if is_ident_start(c) => lx.path()?,
            c => {
                return Err(ParseError::new(
                    start + 1,
                    1,
                    ParseErrorKind::UnexpectedChar(c),
                ))
            }
        };
        let text: String = chars[start..lx.i].iter().collect();
        out.push(Token {
            kind,
            col: start + 1,
            text,
        });
    }
}

fn mistyped(index: usize, found: char, suggestion: &'static str) -> ParseError {
    ParseError::new(
        index + 1,
        1,
        ParseErrorKind::MistypedOperator { found, suggestion },
    )
}

struct Lexer<'a> {
    chars: &'a [char],
    i: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn single(&mut self, kind: TokKind) -> TokKind {
        self.i += 1;
        kind
    }

    fn double(&mut self, kind: TokKind) -> TokKind {
        self.i += 2;
        kind
    }

    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> String {
        let start = self.i;
        while self.peek(0).is_some_and(&pred) {
            self.i += 1;
        }
        self.chars[start..self.i].iter().collect()
    }

    fn string(&mut self) -> Result<TokKind, ParseError> {
        let open = self.i;
        self.i += 1;
        let body_start = self.i;
        loop {
            match self.peek(0) {
                None => {
                    return Err(ParseError::new(
                        open + 1,
                        1,
                        ParseErrorKind::UnterminatedString,
                    ));
                }
                Some('"') => break,
                // Skip the escaped character whatever it is; its meaning is
                // decided later, but it can never close the string.
                Some('\\') if self.peek(1).is_some() => self.i += 2,
                Some(_) => self.i += 1,
            }
        }
        let raw = self.chars[body_start..self.i].iter().collect();
        self.i += 1; // closing quote
        Ok(TokKind::Str(StrLit {
            raw,
            body_col: body_start + 1,
        }))
    }

    fn path(&mut self) -> Result<TokKind, ParseError> {
        let mut segs = Vec::new();
        let col = self.i + 1;
        let name = self.take_while(is_ident_char);
        segs.push(Segment {
            elem: PathElem::Name(name.into()),
            col,
        });
        loop {
            match self.peek(0) {
                Some('.') => {
                    self.i += 1;
                    let col = self.i + 1;
                    if !self.peek(0).is_some_and(is_ident_start) {
                        return Err(self.path_error("expected a field name after '.'"));
                    }
                    let name = self.take_while(is_ident_char);
                    segs.push(Segment {
                        elem: PathElem::Name(name.into()),
                        col,
                    });
                }
                Some('[') => {
                    let col = self.i + 1;
                    self.i += 1;
                    let digits = self.take_while(|c| c.is_ascii_digit());
                    if digits.is_empty() {
                        return Err(self.path_error("expected an array index (digits) after '['"));
                    }
                    let Ok(index) = digits.parse::<usize>() else {
                        let width = digits.chars().count();
                        return Err(ParseError::new(
                            self.i + 1 - width,
                            width,
                            ParseErrorKind::BadPath("array index too large".into()),
                        ));
                    };
                    if self.peek(0) != Some(']') {
                        return Err(self.path_error("expected ']' after the array index"));
                    }
                    self.i += 1;
                    segs.push(Segment {
                        elem: PathElem::Index(index),
                        col,
                    });
                }
                _ => return Ok(TokKind::Path(segs)),
            }
        }
    }

    /// An error at the current character.
    fn path_error(&self, msg: &str) -> ParseError {
        ParseError::new(self.i + 1, 1, ParseErrorKind::BadPath(msg.to_string()))
    }

    fn number(&mut self) -> Result<TokKind, ParseError> {
        let start = self.i;
        let negative = self.peek(0) == Some('-');
        if negative {
            self.i += 1;
        }
        let bad = |lx: &mut Lexer<'_>, reason: &'static str| {
            // Include any letters glued to the number in the quoted text.
            lx.take_while(|c| is_ident_char(c) || c == '.');
            let text: String = lx.chars[start..lx.i].iter().collect();
            let width = lx.i - start;
            Err(ParseError::new(
                start + 1,
                width,
                ParseErrorKind::BadNumber { text, reason },
            ))
        };

        if self.peek(0) == Some('0') && matches!(self.peek(1), Some('x' | 'X')) {
            self.i += 2;
            let digits = self.take_while(|c| c.is_ascii_hexdigit());
            if digits.is_empty() {
                return bad(self, "expected hexadecimal digits after '0x'");
            }
            if self.peek(0).is_some_and(|c| is_ident_char(c) || c == '.') {
                return bad(self, "unexpected character in hexadecimal number");
            }
            let Ok(magnitude) = u128::from_str_radix(&digits, 16) else {
                return bad(self, "out of range");
            };
            return match int_literal(negative, magnitude) {
                Some(lit) => Ok(TokKind::Number(lit)),
                None => bad(self, "out of range"),
            };
        }

        let int_digits = self.take_while(|c| c.is_ascii_digit());
        let mut frac_digits = None;
        if self.peek(0) == Some('.') {
            self.i += 1;
            let digits = self.take_while(|c| c.is_ascii_digit());
            if digits.is_empty() {
                return bad(self, "expected digits after '.'");
            }
            frac_digits = Some(digits);
        }
        let mut has_exponent = false;
        if matches!(self.peek(0), Some('e' | 'E')) {
            let sign = usize::from(matches!(self.peek(1), Some('+' | '-')));
            if self.peek(1 + sign).is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1 + sign;
                self.take_while(|c| c.is_ascii_digit());
                has_exponent = true;
            }
        }
        let number_end = self.i;
        let unit = self.take_while(is_ident_char);
        if self.peek(0) == Some('.') {
            return bad(self, "unexpected '.' after number");
        }

        if !unit.is_empty() {
            let unit_digits = match unit.as_str() {
                "s" => 9,
                "ms" => 6,
                "us" => 3,
                "ns" => 0,
                _ => return bad(self, "unknown unit (time units are s, ms, us and ns)"),
            };
            if has_exponent {
                return bad(self, "a time unit cannot follow an exponent");
            }
            let frac = frac_digits.unwrap_or_default();
            if frac.len() > unit_digits {
                return bad(self, "more precise than a nanosecond");
            }
            return match duration_ns(negative, &int_digits, &frac, unit_digits) {
                Some(ns) => Ok(TokKind::Number(Literal::Int(ns))),
                None => bad(self, "out of range"),
            };
        }

        if frac_digits.is_some() || has_exponent {
            let text: String = self.chars[start..number_end].iter().collect();
            return match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(TokKind::Number(Literal::Float(v))),
                _ => bad(self, "out of range"),
            };
        }

        // More than 39 decimal digits do not fit u128 either: out of range.
        let Ok(magnitude) = int_digits.parse::<u128>() else {
            return bad(self, "out of range");
        };
        match int_literal(negative, magnitude) {
            Some(lit) => Ok(TokKind::Number(lit)),
            None => bad(self, "out of range"),
        }
    }
}

/// The literal for an integer: `Int` whenever it fits `i64`, `UInt` above.
fn int_literal(negative: bool, magnitude: u128) -> Option<Literal> {
    if negative {
        let v = -i128::try_from(magnitude).ok()?;
        i64::try_from(v).ok().map(Literal::Int)
    } else if let Ok(v) = i64::try_from(magnitude) {
        Some(Literal::Int(v))
    } else {
        u64::try_from(magnitude).ok().map(Literal::UInt)
    }
}

/// Exact conversion of `INT.FRAC UNIT` to nanoseconds (no float rounding:
/// `1234.000056789s` is exactly 1234000056789 ns).
fn duration_ns(negative: bool, int_digits: &str, frac: &str, unit_digits: usize) -> Option<i64> {
    let scale = 10i128.checked_pow(u32::try_from(unit_digits).ok()?)?;
    let whole: i128 = int_digits.parse::<u64>().ok()?.into();
    let frac_scaled: i128 = if frac.is_empty() {
        0
    } else {
        let digits: i128 = frac.parse::<u64>().ok()?.into();
        digits * 10i128.pow(u32::try_from(unit_digits - frac.len()).ok()?)
    };
    let magnitude = whole.checked_mul(scale)?.checked_add(frac_scaled)?;
    let v = if negative { -magnitude } else { magnitude };
    i64::try_from(v).ok()
}

/// Decodes a string literal for use as a plain string (`wildcards == false`)
/// or as a glob pattern (`wildcards == true`, where unescaped `*` and `?`
/// are wildcards). In both cases `\*` and `\?` are literal characters.
pub(crate) fn decode_string(lit: &StrLit, wildcards: bool) -> Result<GlobPattern, ParseError> {
    let raw: Vec<char> = lit.raw.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        match c {
            '\\' => {
                let (decoded, len) = decode_escape(&raw[i..]).ok_or_else(|| {
                    // Show the backslash and the character after it (or the
                    // whole `\u{...}` attempt).
                    let len = escape_extent(&raw[i..]);
                    let shown: String = raw[i..i + len].iter().collect();
                    ParseError::new(lit.body_col + i, len, ParseErrorKind::BadEscape(shown))
                })?;
                text.push(decoded);
                i += len;
            }
            '*' | '?' if wildcards => {
                pieces.push(GlobPiece::Literal(std::mem::take(&mut text)));
                pieces.push(if c == '*' {
                    GlobPiece::AnyString
                } else {
                    GlobPiece::AnyChar
                });
                i += 1;
            }
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
    pieces.push(GlobPiece::Literal(text));
    Ok(GlobPattern::new(pieces))
}

/// Decodes the escape sequence at the start of `s` (which starts with `\`):
/// the character and the number of source characters used.
fn decode_escape(s: &[char]) -> Option<(char, usize)> {
    let c = match s.get(1)? {
        '"' => '"',
        '\\' => '\\',
        '*' => '*',
        '?' => '?',
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '0' => '\0',
        'u' => {
            if s.get(2) != Some(&'{') {
                return None;
            }
            let close = s.iter().position(|&c| c == '}')?;
            let hex: String = s[3..close].iter().collect();
            if hex.is_empty() || hex.len() > 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            let code = u32::from_str_radix(&hex, 16).ok()?;
            return Some((char::from_u32(code)?, close + 1));
        }
        _ => return None,
    };
    Some((c, 2))
}

/// How many characters of a bad escape to show: `\x`, or `\u{...}` up to the
/// closing brace when there is one nearby.
fn escape_extent(s: &[char]) -> usize {
    if s.get(1) == Some(&'u') && s.get(2) == Some(&'{') {
        if let Some(close) = s.iter().take(12).position(|&c| c == '}') {
            return close + 1;
        }
    }
    s.len().min(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokKind> {
        tokenize(src).unwrap().into_iter().map(|t| t.kind).collect()
    }

    fn number(src: &str) -> Literal {
        match &kinds(src)[0] {
            TokKind::Number(lit) => lit.clone(),
            other => panic!("not a number: {other:?}"),
        }
    }

    fn err(src: &str) -> ParseError {
        tokenize(src).unwrap_err()
    }

    #[test]
    fn operators() {
        use CmpOp::*;
        assert_eq!(
            kinds("== != < <= > >= =~ && || ! ( )"),
            vec![
                TokKind::Cmp(Eq),
                TokKind::Cmp(Ne),
                TokKind::Cmp(Lt),
                TokKind::Cmp(Le),
                TokKind::Cmp(Gt),
                TokKind::Cmp(Ge),
                TokKind::Match,
                TokKind::And,
                TokKind::Or,
                TokKind::Not,
                TokKind::LParen,
                TokKind::RParen,
                TokKind::End,
            ]
        );
        // No spaces needed.
        assert_eq!(kinds("!(a)").len(), 5);
    }

    #[test]
    fn columns_count_characters() {
        let toks = tokenize("é == \"ü\"").unwrap_err();
        assert_eq!(toks.column, 1);
        let toks = tokenize("\"ü\" == x").unwrap();
        assert_eq!(toks[1].col, 5);
        assert_eq!(toks[2].col, 8);
        assert_eq!(toks[3].col, 9);
    }

    #[test]
    fn integers() {
        assert_eq!(number("42"), Literal::Int(42));
        assert_eq!(number("-42"), Literal::Int(-42));
        assert_eq!(number("0x1F"), Literal::Int(31));
        assert_eq!(number("-0x10"), Literal::Int(-16));
        assert_eq!(number("9223372036854775807"), Literal::Int(i64::MAX));
        assert_eq!(number("9223372036854775808"), Literal::UInt(1 << 63));
        assert_eq!(number("18446744073709551615"), Literal::UInt(u64::MAX));
        assert_eq!(number("-9223372036854775808"), Literal::Int(i64::MIN));
        assert_eq!(number("0xffffffffffffffff"), Literal::UInt(u64::MAX));
        assert_eq!(number("007"), Literal::Int(7));
    }

    #[test]
    fn integer_errors() {
        let e = err("x == 18446744073709551616");
        assert_eq!(e.column, 6);
        assert_eq!(
            e.to_string(),
            "column 6: invalid number '18446744073709551616': out of range"
        );
        assert!(matches!(
            err("-9223372036854775809").kind,
            ParseErrorKind::BadNumber { .. }
        ));
        assert!(matches!(err("0x").kind, ParseErrorKind::BadNumber { .. }));
        assert!(matches!(err("0x1g").kind, ParseErrorKind::BadNumber { .. }));
        assert!(matches!(
            err("12abc").kind,
            ParseErrorKind::BadNumber { .. }
        ));
        assert!(matches!(err("1.").kind, ParseErrorKind::BadNumber { .. }));
        assert!(matches!(
            err("1.2.3").kind,
            ParseErrorKind::BadNumber { .. }
        ));
        assert_eq!(
            err("1e").to_string(),
            "column 1: invalid number '1e': unknown unit (time units are s, ms, us and ns)"
        );
    }

    #[test]
    fn floats() {
        assert_eq!(number("1.5"), Literal::Float(1.5));
        assert_eq!(number("-0.25"), Literal::Float(-0.25));
        assert_eq!(number("1e3"), Literal::Float(1000.0));
        assert_eq!(number("1.5E-3"), Literal::Float(0.0015));
        assert_eq!(number("2e+2"), Literal::Float(200.0));
        assert!(matches!(
            err("1e999").kind,
            ParseErrorKind::BadNumber {
                reason: "out of range",
                ..
            }
        ));
    }

    #[test]
    fn time_literals_are_exact_nanoseconds() {
        assert_eq!(number("1234.000056789s"), Literal::Int(1_234_000_056_789));
        assert_eq!(number("12.5s"), Literal::Int(12_500_000_000));
        assert_eq!(number("3s"), Literal::Int(3_000_000_000));
        assert_eq!(number("-1.5s"), Literal::Int(-1_500_000_000));
        assert_eq!(number("2.5ms"), Literal::Int(2_500_000));
        assert_eq!(number("7us"), Literal::Int(7_000));
        assert_eq!(number("9ns"), Literal::Int(9));
        let e = err("time > 1.0000000001s");
        assert_eq!(e.column, 8);
        assert_eq!(e.width, 13);
        assert!(matches!(
            e.kind,
            ParseErrorKind::BadNumber {
                reason: "more precise than a nanosecond",
                ..
            }
        ));
        assert!(matches!(
            err("1.5ns").kind,
            ParseErrorKind::BadNumber { .. }
        ));
        assert!(matches!(err("1e3s").kind, ParseErrorKind::BadNumber { .. }));
        assert!(matches!(
            err("10000000000s").kind,
            ParseErrorKind::BadNumber {
                reason: "out of range",
                ..
            }
        ));
        assert!(matches!(err("5min").kind, ParseErrorKind::BadNumber { .. }));
    }

    #[test]
    fn paths() {
        let k = kinds("event.field.arr[2].x");
        let TokKind::Path(segs) = &k[0] else { panic!() };
        let elems: Vec<_> = segs.iter().map(|s| (s.elem.clone(), s.col)).collect();
        assert_eq!(
            elems,
            vec![
                (PathElem::Name("event".into()), 1),
                (PathElem::Name("field".into()), 7),
                (PathElem::Name("arr".into()), 13),
                (PathElem::Index(2), 16),
                (PathElem::Name("x".into()), 20),
            ]
        );
        assert_eq!(err("event.").column, 7);
        assert_eq!(err("a.1").column, 3);
        assert_eq!(err("a[x]").column, 3);
        assert_eq!(err("a[1").column, 4);
        assert_eq!(err("a[99999999999999999999999]").column, 3);
    }

    #[test]
    fn strings() {
        let k = kinds(r#""a\"b" "c""#);
        assert_eq!(
            k[0],
            TokKind::Str(StrLit {
                raw: "a\\\"b".into(),
                body_col: 2
            })
        );
        assert_eq!(
            k[1],
            TokKind::Str(StrLit {
                raw: "c".into(),
                body_col: 9
            })
        );
        let e = err(r#"x == "abc"#);
        assert_eq!((e.column, e.kind), (6, ParseErrorKind::UnterminatedString));
        // A trailing backslash cannot escape the end of input.
        assert_eq!(err(r#""ab\"#).kind, ParseErrorKind::UnterminatedString);
    }

    #[test]
    fn decoding() {
        let lit = |raw: &str| StrLit {
            raw: raw.into(),
            body_col: 10,
        };
        let plain = |raw: &str| decode_string(&lit(raw), false).unwrap();
        assert_eq!(
            plain(r#"a\"\\\n\t\r\0\u{e9}\*\?"#),
            GlobPattern::new([GlobPiece::Literal("a\"\\\n\t\r\0é*?".into())])
        );
        assert_eq!(
            plain("a*b?"),
            GlobPattern::new([GlobPiece::Literal("a*b?".into())])
        );
        let glob = decode_string(&lit(r#"a*b\*?"#), true).unwrap();
        assert_eq!(
            glob.pieces(),
            &[
                GlobPiece::Literal("a".into()),
                GlobPiece::AnyString,
                GlobPiece::Literal("b*".into()),
                GlobPiece::AnyChar
            ]
        );
        let e = decode_string(&lit(r"ab\d"), false).unwrap_err();
        assert_eq!((e.column, e.width), (12, 2));
        assert_eq!(e.kind, ParseErrorKind::BadEscape("\\d".into()));
        let e = decode_string(&lit(r"\u{110000}x"), false).unwrap_err();
        assert_eq!((e.column, e.width), (10, 10));
        assert!(decode_string(&lit(r"\u{}"), false).is_err());
        assert!(decode_string(&lit(r"\u41"), false).is_err());
    }

    #[test]
    fn mistyped_operators() {
        let e = err("a = 1");
        assert_eq!(
            e.to_string(),
            "column 3: '=' is not an operator; did you mean '=='?"
        );
        assert_eq!(err("a & b").column, 3);
        assert_eq!(err("a | b").column, 3);
        assert_eq!(err("a ~ b").column, 3);
        assert_eq!(err("a @ b").kind, ParseErrorKind::UnexpectedChar('@'));
        assert_eq!(err("- 1").kind, ParseErrorKind::UnexpectedChar('-'));
    }
}
