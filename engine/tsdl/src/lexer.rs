//! TSDL tokenizer: identifiers, integer literals, string literals and
//! punctuation, with 1-based line/column positions. Comments and whitespace
//! are skipped. Keywords are not distinguished here: the parser decides from
//! context whether a word is a keyword, which lets attribute names such as
//! `signed` or `align` and LTTng field names pass through unchanged.

use crate::error::{Pos, TsdlError};

/// One token kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Identifier or keyword.
    Ident(String),
    /// Integer literal magnitude (a leading `-` is a separate token).
    Int(u64),
    /// String literal with escapes decoded.
    Str(String),
    /// Punctuation: one of `{ } [ ] ( ) ; , : := = . ... < > + - *`.
    Punct(&'static str),
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("integer `{v}`"),
            Tok::Str(s) => format!("string \"{}\"", s.escape_debug()),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "end of metadata".to_string(),
        }
    }
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    /// The token.
    pub tok: Tok,
    /// Its first character.
    pub pos: Pos,
}

/// Character cursor tracking line and column.
struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    pos: Pos,
}

impl Cursor<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.pos.line = self.pos.line.saturating_add(1);
            self.pos.column = 1;
        } else {
            self.pos.column = self.pos.column.saturating_add(1);
        }
        Some(c)
    }

    /// Whether the characters after the current one start with `s`
    /// (the current one is compared too).
    fn starts_with(&self, s: &str) -> bool {
        let mut it = self.chars.clone();
        s.chars().all(|c| it.next() == Some(c))
    }
}

/// The tokens of a text, produced one at a time as the parser asks for
/// them: holding them all (some 40 bytes each plus their strings) took
/// twenty times the size of the metadata.
pub(crate) struct Lexer<'a> {
    cur: Cursor<'a>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Lexer {
            cur: Cursor {
                chars: text.chars().peekable(),
                pos: Pos { line: 1, column: 1 },
            },
        }
    }

    /// The next token; [`Tok::Eof`] at the end, and again after it.
    pub(crate) fn next_token(&mut self) -> Result<Token, TsdlError> {
        let cur = &mut self.cur;
        skip_trivia(cur)?;
        let pos = cur.pos;
        let Some(c) = cur.peek() else {
            return Ok(Token { tok: Tok::Eof, pos });
        };
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(c) = cur.peek() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    s.push(c);
                    cur.bump();
                } else {
                    break;
                }
            }
            Tok::Ident(s)
        } else if c.is_ascii_digit() {
            Tok::Int(lex_int(cur, pos)?)
        } else if c == '"' {
            cur.bump();
            Tok::Str(lex_string(cur, pos)?)
        } else if c == '\'' {
            // Character constants are integers in C and TSDL.
            cur.bump();
            Tok::Int(lex_char(cur, pos)?)
        } else {
            Tok::Punct(lex_punct(cur, pos)?)
        };
        Ok(Token { tok, pos })
    }
}

/// Splits `text` into tokens; the last token is always [`Tok::Eof`].
#[cfg(test)]
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, TsdlError> {
    let mut lexer = Lexer::new(text);
    let mut out = Vec::new();
    loop {
        let t = lexer.next_token()?;
        let end = t.tok == Tok::Eof;
        out.push(t);
        if end {
            return Ok(out);
        }
    }
}

fn skip_trivia(cur: &mut Cursor<'_>) -> Result<(), TsdlError> {
    loop {
        match cur.peek() {
            // NUL padding may trail packetized metadata: treat it as blank.
            Some(c) if c.is_whitespace() || c == '\0' => {
                cur.bump();
            }
            Some('/') if cur.starts_with("//") => {
                while let Some(c) = cur.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            Some('/') if cur.starts_with("/*") => {
                let start = cur.pos;
                cur.bump();
                cur.bump();
                loop {
                    match cur.bump() {
                        None => return Err(TsdlError::syntax(start, "unterminated comment")),
                        Some('*') if cur.peek() == Some('/') => {
                            cur.bump();
                            break;
                        }
                        Some(_) => {}
                    }
                }
            }
            _ => return Ok(()),
        }
    }
}

/// Decimal, `0x` hexadecimal or `0`-prefixed octal, with optional `u`/`l`
/// suffixes (`U`, `UL`, `ULL`, `LL`, ...), which carry no meaning in TSDL.
fn lex_int(cur: &mut Cursor<'_>, pos: Pos) -> Result<u64, TsdlError> {
    let mut radix = 10u32;
    let mut digits = String::new();
    if cur.starts_with("0x") || cur.starts_with("0X") {
        cur.bump();
        cur.bump();
        radix = 16;
    } else if cur.peek() == Some('0') {
        radix = 8;
    }
    while let Some(c) = cur.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            digits.push(c);
            cur.bump();
        } else {
            break;
        }
    }
    let body = digits.trim_end_matches(['u', 'U', 'l', 'L']);
    if body.is_empty() && radix == 16 {
        return Err(TsdlError::syntax(pos, "hexadecimal literal without digits"));
    }
    let suffix = &digits[body.len()..];
    let upper = suffix.to_ascii_uppercase();
    let suffix_ok = matches!(
        upper.as_str(),
        "" | "U" | "L" | "UL" | "LU" | "LL" | "ULL" | "LLU"
    );
    if !suffix_ok {
        return Err(TsdlError::syntax(
            pos,
            format!("invalid integer literal suffix `{suffix}`"),
        ));
    }
    u64::from_str_radix(body, radix).map_err(|e| {
        let what = match e.kind() {
            std::num::IntErrorKind::PosOverflow => "does not fit in 64 bits",
            _ => "has invalid digits",
        };
        TsdlError::syntax(pos, format!("integer literal `{digits}` {what}"))
    })
}

/// Reads one (possibly escaped) character of a string or char literal.
fn lex_escaped(cur: &mut Cursor<'_>, start: Pos, what: &str) -> Result<char, TsdlError> {
    let Some(c) = cur.bump() else {
        return Err(TsdlError::syntax(start, format!("unterminated {what}")));
    };
    if c != '\\' {
        return Ok(c);
    }
    let esc_pos = cur.pos;
    let Some(e) = cur.bump() else {
        return Err(TsdlError::syntax(start, format!("unterminated {what}")));
    };
    Ok(match e {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '\\' | '"' | '\'' | '?' => e,
        'x' => {
            let mut v = 0u32;
            let mut n = 0;
            while let Some(h) = cur.peek().and_then(|c| c.to_digit(16)) {
                if n == 2 {
                    break;
                }
                v = v * 16 + h;
                n += 1;
                cur.bump();
            }
            if n == 0 {
                return Err(TsdlError::syntax(esc_pos, "`\\x` escape without digits"));
            }
            char::from_u32(v).unwrap_or('\u{fffd}')
        }
        '0'..='7' => {
            let mut v = e.to_digit(8).unwrap_or(0);
            let mut n = 1;
            while let Some(o) = cur.peek().and_then(|c| c.to_digit(8)) {
                if n == 3 {
                    break;
                }
                v = v * 8 + o;
                n += 1;
                cur.bump();
            }
            char::from_u32(v).unwrap_or('\u{fffd}')
        }
        other => {
            return Err(TsdlError::syntax(
                esc_pos,
                format!("unknown escape sequence `\\{}`", other.escape_debug()),
            ))
        }
    })
}

fn lex_string(cur: &mut Cursor<'_>, start: Pos) -> Result<String, TsdlError> {
    let mut s = String::new();
    loop {
        if cur.peek() == Some('"') {
            cur.bump();
            return Ok(s);
        }
        s.push(lex_escaped(cur, start, "string literal")?);
    }
}

fn lex_char(cur: &mut Cursor<'_>, start: Pos) -> Result<u64, TsdlError> {
    if cur.peek() == Some('\'') {
        return Err(TsdlError::syntax(start, "empty character constant"));
    }
    let c = lex_escaped(cur, start, "character constant")?;
    if cur.bump() != Some('\'') {
        return Err(TsdlError::syntax(
            start,
            "character constant must hold exactly one character",
        ));
    }
    Ok(u64::from(u32::from(c)))
}

fn lex_punct(cur: &mut Cursor<'_>, pos: Pos) -> Result<&'static str, TsdlError> {
    const MULTI: [&str; 2] = [":=", "..."];
    for p in MULTI {
        if cur.starts_with(p) {
            for _ in 0..p.len() {
                cur.bump();
            }
            return Ok(p);
        }
    }
    const SINGLE: [&str; 16] = [
        "{", "}", "[", "]", "(", ")", ";", ",", ":", "=", ".", "<", ">", "+", "-", "*",
    ];
    let c = cur.bump().unwrap_or(' ');
    let mut buf = [0u8; 4];
    let s: &str = c.encode_utf8(&mut buf);
    SINGLE.iter().copied().find(|p| *p == s).ok_or_else(|| {
        TsdlError::syntax(pos, format!("unexpected character `{}`", c.escape_debug()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn integers_in_all_bases_with_suffixes() {
        assert_eq!(
            toks("10 0x1F 017 0 42U 7ULL 0xffffffffffffffff"),
            vec![
                Tok::Int(10),
                Tok::Int(31),
                Tok::Int(15),
                Tok::Int(0),
                Tok::Int(42),
                Tok::Int(7),
                Tok::Int(u64::MAX),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn integer_overflow_and_bad_digits_are_errors() {
        let e = tokenize("\n  18446744073709551616").unwrap_err();
        assert_eq!(e.position(), Some(Pos { line: 2, column: 3 }));
        assert!(tokenize("09").is_err());
        assert!(tokenize("12abc").is_err());
        assert!(tokenize("0x").is_err());
    }

    #[test]
    fn strings_with_escapes() {
        assert_eq!(
            toks(r#""a\"b\t\n\\ \x41\101 '""#),
            vec![Tok::Str("a\"b\t\n\\ AA '".into()), Tok::Eof]
        );
        assert_eq!(
            toks("'a' '\\n'"),
            vec![Tok::Int(97), Tok::Int(10), Tok::Eof]
        );
    }

    #[test]
    fn comments_are_skipped_and_positions_tracked() {
        let t = tokenize("/* a\n b */ x // c\n  := ...").unwrap();
        assert_eq!(t[0].tok, Tok::Ident("x".into()));
        assert_eq!(t[0].pos, Pos { line: 2, column: 7 });
        assert_eq!(t[1].tok, Tok::Punct(":="));
        assert_eq!(t[1].pos, Pos { line: 3, column: 3 });
        assert_eq!(t[2].tok, Tok::Punct("..."));
    }

    #[test]
    fn lexical_errors_carry_positions() {
        let e = tokenize("a\n  \"abc").unwrap_err();
        assert_eq!(e.position(), Some(Pos { line: 2, column: 3 }));
        let e = tokenize("x /* never closed").unwrap_err();
        assert_eq!(e.position(), Some(Pos { line: 1, column: 3 }));
        let e = tokenize("a @").unwrap_err();
        assert_eq!(e.position(), Some(Pos { line: 1, column: 3 }));
        let e = tokenize(r#""\q""#).unwrap_err();
        assert_eq!(e.position(), Some(Pos { line: 1, column: 3 }));
    }
}
