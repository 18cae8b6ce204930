//! Recursive-descent TSDL parser producing the [`crate::ast`] tree.
//!
//! Nesting is capped at [`MAX_DEPTH`] so that hostile metadata cannot
//! overflow the stack.

use crate::ast::{Attr, BlockEntry, BlockKind, Decl, Declarator, Dim, Enumerator, Item};
use crate::ast::{Spanned, TypeSpec, Value};
use crate::error::{Pos, TsdlError};
use std::collections::VecDeque;

use crate::lexer::{Lexer, Tok, Token};

/// Maximum nesting of type specifiers and bodies in the text (and, in the
/// resolver, of resolved types). Real traces nest fewer than 10 levels.
pub const MAX_DEPTH: usize = 64;

/// Parses TSDL text into top-level items.
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Result<Vec<Item>, TsdlError> {
    let mut items = Items::new(text);
    let mut out = Vec::new();
    while let Some(item) = items.next_item()? {
        out.push(item);
    }
    Ok(out)
}

/// The top-level items of TSDL text, parsed one at a time as they are
/// asked for: the resolver takes each and drops its syntax before the
/// next is parsed, so the syntax tree of the whole text (some 15 times
/// its size) never exists at once.
pub(crate) struct Items<'a> {
    p: Parser<'a>,
}

impl<'a> Items<'a> {
    /// The items of `text`, none parsed yet.
    pub(crate) fn new(text: &'a str) -> Self {
        let mut p = Parser {
            lexer: Lexer::new(text),
            ahead: VecDeque::with_capacity(LOOKAHEAD + 1),
            prev: None,
            lex_error: None,
            depth: 0,
        };
        p.fill();
        Items { p }
    }

    /// The next item; `None` after the last one.
    pub(crate) fn next_item(&mut self) -> Result<Option<Item>, TsdlError> {
        let item = self.p.item();
        // A lexical error ends the tokens there (the parser sees the end of
        // the metadata): it is the error to report, whatever the parser said.
        match self.p.lex_error.take() {
            Some(e) => Err(e),
            None => item,
        }
    }

    /// `err` (found in what was parsed so far), unless the rest of the
    /// text has a syntax or lexical error: that one is reported, as when
    /// the whole text was parsed before anything was resolved.
    pub(crate) fn or_syntax_error(mut self, err: TsdlError) -> TsdlError {
        loop {
            match self.next_item() {
                Ok(Some(_)) => {}
                Ok(None) => return err,
                Err(e) => return e,
            }
        }
    }
}

/// Tokens the parser looks at before taking one: the current one and the
/// next.
const LOOKAHEAD: usize = 2;

/// The parser reads the tokens as it goes (see [`Lexer`]), keeping the
/// [`LOOKAHEAD`] next ones and the last one taken (to step back one).
struct Parser<'a> {
    lexer: Lexer<'a>,
    ahead: VecDeque<Token>,
    prev: Option<Token>,
    lex_error: Option<TsdlError>,
    depth: usize,
}
/// Words that can only start a compound type specifier.
fn is_compound_keyword(w: &str) -> bool {
    matches!(
        w,
        "struct" | "variant" | "enum" | "integer" | "floating_point" | "string"
    )
}

impl Parser<'_> {
    /// Reads tokens until [`LOOKAHEAD`] are ahead. After a lexical error
    /// the tokens end there.
    fn fill(&mut self) {
        while self.ahead.len() < LOOKAHEAD {
            let t = match self.ahead.back() {
                Some(t) if t.tok == Tok::Eof => t.clone(),
                _ => match self.lexer.next_token() {
                    Ok(t) => t,
                    Err(e) => {
                        let pos = e.position().unwrap_or(Pos { line: 1, column: 1 });
                        self.lex_error = Some(e);
                        Token { tok: Tok::Eof, pos }
                    }
                },
            };
            self.ahead.push_back(t);
        }
    }

    fn peek(&self) -> &Tok {
        &self.ahead[0].tok
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.ahead[n.min(self.ahead.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.ahead[0].pos
    }

    fn bump(&mut self) -> Token {
        let t = match self.ahead.front() {
            Some(t) if t.tok == Tok::Eof => t.clone(),
            _ => self.ahead.pop_front().expect("lookahead filled"),
        };
        self.prev = Some(t.clone());
        self.fill();
        t
    }

    /// Steps back over the token [`bump`](Self::bump) just took.
    fn unbump(&mut self) {
        if let Some(t) = self.prev.take() {
            if t.tok != Tok::Eof {
                self.ahead.push_front(t);
            }
        }
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn unexpected(&self, expected: &str) -> TsdlError {
        TsdlError::syntax(
            self.pos(),
            format!("expected {expected}, found {}", self.peek().describe()),
        )
    }

    fn expect_punct(&mut self, p: &str) -> Result<(), TsdlError> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }

    fn expect_ident(&mut self, what: &str) -> Result<(String, Pos), TsdlError> {
        match self.peek() {
            Tok::Ident(s) => {
                let s = s.clone();
                let pos = self.bump().pos;
                Ok((s, pos))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn enter(&mut self) -> Result<(), TsdlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(TsdlError::limit(
                self.pos(),
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// The next top-level item, `None` at the end of the text.
    fn item(&mut self) -> Result<Option<Item>, TsdlError> {
        while *self.peek() != Tok::Eof {
            // A stray `;` between items is harmless (some writers emit `};;`).
            if self.eat_punct(";") {
                continue;
            }
            let kind = match self.peek() {
                Tok::Ident(w) if matches!(self.peek_at(1), Tok::Punct("{")) => match w.as_str() {
                    "trace" => Some(BlockKind::Trace),
                    "stream" => Some(BlockKind::Stream),
                    "event" => Some(BlockKind::Event),
                    "clock" => Some(BlockKind::Clock),
                    "env" => Some(BlockKind::Env),
                    "callsite" => Some(BlockKind::Callsite),
                    _ => None,
                },
                _ => None,
            };
            return match kind {
                Some(kind) => {
                    let pos = self.bump().pos;
                    self.bump(); // `{`
                    let entries = self.block_entries()?;
                    self.expect_punct(";")?;
                    Ok(Some(Item::Block { kind, entries, pos }))
                }
                None => Ok(Some(Item::Decl(self.decl()?))),
            };
        }
        Ok(None)
    }

    /// Entries of a top-level block, after `{`, through `}`.
    fn block_entries(&mut self) -> Result<Vec<BlockEntry>, TsdlError> {
        let mut entries = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(entries);
            }
            if self.eat_punct(";") {
                continue;
            }
            let starts_decl = match self.peek() {
                Tok::Ident(w) => {
                    matches!(w.as_str(), "typealias" | "typedef")
                        || (matches!(w.as_str(), "struct" | "variant" | "enum")
                            && !matches!(self.peek_at(1), Tok::Punct("=" | ":=" | ".")))
                }
                _ => false,
            };
            if starts_decl {
                entries.push(BlockEntry::Decl(self.decl()?));
                continue;
            }
            let pos = self.pos();
            let key = self.dotted_key()?;
            if self.eat_punct(":=") {
                let ty = self.type_spec(false)?;
                self.expect_punct(";")?;
                entries.push(BlockEntry::TypeAssign { key, ty, pos });
            } else if self.eat_punct("=") {
                let attr = self.attr_value(key, pos)?;
                self.expect_punct(";")?;
                entries.push(BlockEntry::Attr(attr));
            } else {
                return Err(self.unexpected("`=` or `:=`"));
            }
        }
    }

    /// `a.b.c` made of words.
    fn dotted_key(&mut self) -> Result<String, TsdlError> {
        let (mut key, _) = self.expect_ident("an attribute name")?;
        while self.eat_punct(".") {
            let (w, _) = self.expect_ident("a name after `.`")?;
            key.push('.');
            key.push_str(&w);
        }
        Ok(key)
    }

    /// The value after `key =`.
    fn attr_value(&mut self, key: String, pos: Pos) -> Result<Attr, TsdlError> {
        let value_pos = self.pos();
        let value = match self.peek().clone() {
            Tok::Punct(sign @ ("-" | "+")) => {
                self.bump();
                match self.bump().tok {
                    Tok::Int(v) => Value::Int(if sign == "-" {
                        -i128::from(v)
                    } else {
                        i128::from(v)
                    }),
                    _ => {
                        self.unbump();
                        return Err(self.unexpected("an integer after the sign"));
                    }
                }
            }
            Tok::Int(v) => {
                self.bump();
                Value::Int(i128::from(v))
            }
            Tok::Str(s) => {
                self.bump();
                Value::Str(s)
            }
            Tok::Ident(w) => {
                self.bump();
                let mut path = vec![w];
                while self.eat_punct(".") {
                    path.push(self.expect_ident("a name after `.`")?.0);
                }
                Value::Path(path)
            }
            _ => return Err(self.unexpected("a value")),
        };
        Ok(Attr {
            key,
            value,
            value_pos,
            pos,
        })
    }

    /// `{ key = value; ... }` of `integer`, `floating_point` and `string`.
    fn attr_block(&mut self) -> Result<Vec<Attr>, TsdlError> {
        self.expect_punct("{")?;
        let mut attrs = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(attrs);
            }
            if self.eat_punct(";") {
                continue;
            }
            let pos = self.pos();
            let key = self.dotted_key()?;
            self.expect_punct("=")?;
            attrs.push(self.attr_value(key, pos)?);
            self.expect_punct(";")?;
        }
    }

    /// A declaration: typealias, typedef, fields or a bare type declaration.
    fn decl(&mut self) -> Result<Decl, TsdlError> {
        if self.is_word("typealias") {
            self.bump();
            let target = self.type_spec(false)?;
            if self.is_punct("*") || self.is_punct("[") {
                return Err(TsdlError::semantic(
                    self.pos(),
                    "pointer or array declarators in a typealias are not supported",
                ));
            }
            self.expect_punct(":=")?;
            let pos = self.pos();
            let mut words = Vec::new();
            while let Tok::Ident(w) = self.peek() {
                words.push(w.clone());
                self.bump();
            }
            if words.is_empty() {
                return Err(self.unexpected("the alias name after `:=`"));
            }
            if self.is_punct("*") || self.is_punct("[") {
                return Err(TsdlError::semantic(
                    self.pos(),
                    "pointer or array declarators in a typealias are not supported",
                ));
            }
            self.expect_punct(";")?;
            return Ok(Decl::TypeAlias {
                target,
                name: words.join(" "),
                pos,
            });
        }
        if self.is_word("typedef") {
            self.bump();
            let ty = self.type_spec(true)?;
            let declarators = self.declarators()?;
            self.expect_punct(";")?;
            return Ok(Decl::Typedef { ty, declarators });
        }
        let ty = self.type_spec(true)?;
        if self.eat_punct(";") {
            return Ok(Decl::Field {
                ty,
                declarators: Vec::new(),
            });
        }
        let declarators = self.declarators()?;
        self.expect_punct(";")?;
        Ok(Decl::Field { ty, declarators })
    }

    /// `name[dims], name2, ...` (at least one).
    fn declarators(&mut self) -> Result<Vec<Declarator>, TsdlError> {
        let mut out = Vec::new();
        loop {
            if self.is_punct("*") {
                return Err(TsdlError::semantic(
                    self.pos(),
                    "pointer declarators are not supported in CTF metadata",
                ));
            }
            let (name, pos) = self.expect_ident("a field name")?;
            let mut dims = Vec::new();
            while self.eat_punct("[") {
                let dpos = self.pos();
                let dim = match self.peek().clone() {
                    Tok::Int(v) => {
                        self.bump();
                        Dim::Len(v)
                    }
                    Tok::Ident(_) => {
                        let mut path = vec![self.expect_ident("a length field")?.0];
                        while self.eat_punct(".") {
                            path.push(self.expect_ident("a name after `.`")?.0);
                        }
                        Dim::Field(path)
                    }
                    _ => return Err(self.unexpected("an array length or a length field name")),
                };
                self.expect_punct("]")?;
                dims.push((dim, dpos));
            }
            out.push(Declarator { name, dims, pos });
            if !self.eat_punct(",") {
                return Ok(out);
            }
        }
    }

    /// A type specifier. With `declarator_follows`, a run of plain words
    /// leaves its last word to the declarator (`unsigned long x;`) unless
    /// the run is followed by something other than a declarator ending.
    fn type_spec(&mut self, declarator_follows: bool) -> Result<Spanned<TypeSpec>, TsdlError> {
        self.enter()?;
        let pos = self.pos();
        let word = match self.peek() {
            Tok::Ident(w) => w.clone(),
            _ => return Err(self.unexpected("a type")),
        };
        let node = if is_compound_keyword(&word) {
            self.bump();
            match word.as_str() {
                "integer" => TypeSpec::Integer(self.attr_block()?),
                "floating_point" => TypeSpec::Float(self.attr_block()?),
                "string" => {
                    if self.is_punct("{") {
                        TypeSpec::String(self.attr_block()?)
                    } else {
                        TypeSpec::String(Vec::new())
                    }
                }
                "struct" => self.struct_spec()?,
                "variant" => self.variant_spec()?,
                _ => self.enum_spec()?,
            }
        } else {
            let mut words = Vec::new();
            while let Tok::Ident(w) = self.peek() {
                // Qualifiers do not change a CTF type.
                if w != "const" {
                    words.push(w.clone());
                }
                self.bump();
            }
            if declarator_follows
                && words.len() >= 2
                && matches!(self.peek(), Tok::Punct(";" | "," | "["))
            {
                words.pop();
                self.unbump();
            }
            if words.is_empty() {
                return Err(TsdlError::syntax(pos, "expected a type name"));
            }
            TypeSpec::Named(words.join(" "))
        };
        self.leave();
        Ok(Spanned { node, pos })
    }

    fn optional_name(&mut self) -> Option<String> {
        match self.peek() {
            Tok::Ident(w) => {
                let w = w.clone();
                self.bump();
                Some(w)
            }
            _ => None,
        }
    }

    /// A body of declarations `{ ... }`.
    fn body(&mut self) -> Result<Vec<Decl>, TsdlError> {
        self.expect_punct("{")?;
        let mut decls = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(decls);
            }
            if self.eat_punct(";") {
                continue;
            }
            decls.push(self.decl()?);
        }
    }

    /// After `struct`.
    fn struct_spec(&mut self) -> Result<TypeSpec, TsdlError> {
        let name = self.optional_name();
        let body = if self.is_punct("{") {
            Some(self.body()?)
        } else {
            None
        };
        if name.is_none() && body.is_none() {
            return Err(self.unexpected("a struct name or `{`"));
        }
        let mut align = None;
        if self.is_word("align") && matches!(self.peek_at(1), Tok::Punct("(")) {
            self.bump();
            self.bump();
            let apos = self.pos();
            match self.bump().tok {
                Tok::Int(v) => align = Some((v, apos)),
                _ => {
                    self.unbump();
                    return Err(self.unexpected("an alignment"));
                }
            }
            self.expect_punct(")")?;
        }
        Ok(TypeSpec::Struct { name, body, align })
    }

    /// After `variant`.
    fn variant_spec(&mut self) -> Result<TypeSpec, TsdlError> {
        let name = self.optional_name();
        let mut tag = None;
        if self.eat_punct("<") {
            let mut path = vec![self.expect_ident("a tag field name")?.0];
            while self.eat_punct(".") {
                path.push(self.expect_ident("a name after `.`")?.0);
            }
            self.expect_punct(">")?;
            tag = Some(path);
        }
        let body = if self.is_punct("{") {
            Some(self.body()?)
        } else {
            None
        };
        if name.is_none() && body.is_none() {
            return Err(self.unexpected("a variant name or `{`"));
        }
        Ok(TypeSpec::Variant { name, tag, body })
    }

    /// After `enum`.
    fn enum_spec(&mut self) -> Result<TypeSpec, TsdlError> {
        let name = self.optional_name();
        let container = if self.eat_punct(":") {
            Some(Box::new(self.type_spec(false)?))
        } else {
            None
        };
        let body = if self.eat_punct("{") {
            let mut list = Vec::new();
            loop {
                if self.eat_punct("}") {
                    break;
                }
                let pos = self.pos();
                let label = match self.bump().tok {
                    Tok::Ident(s) | Tok::Str(s) => s,
                    _ => {
                        self.unbump();
                        return Err(self.unexpected("an enumerator label"));
                    }
                };
                let value = if self.eat_punct("=") {
                    let lo = self.signed_int()?;
                    let hi = if self.eat_punct("...") {
                        self.signed_int()?
                    } else {
                        lo
                    };
                    Some((lo, hi))
                } else {
                    None
                };
                list.push(Enumerator { label, value, pos });
                if !self.eat_punct(",") {
                    self.expect_punct("}")?;
                    break;
                }
            }
            Some(list)
        } else {
            None
        };
        if name.is_none() && body.is_none() {
            return Err(self.unexpected("an enum name or `{`"));
        }
        Ok(TypeSpec::Enum {
            name,
            container,
            body,
        })
    }

    fn signed_int(&mut self) -> Result<i128, TsdlError> {
        let neg = if self.eat_punct("-") {
            true
        } else {
            self.eat_punct("+");
            false
        };
        match self.peek() {
            Tok::Int(v) => {
                let v = i128::from(*v);
                self.bump();
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.unexpected("an integer")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_decl(s: &str) -> Decl {
        match parse(s).unwrap().remove(0) {
            Item::Decl(d) => d,
            other => panic!("not a decl: {other:?}"),
        }
    }

    #[test]
    fn multi_word_typealias_name() {
        let d = first_decl("typealias integer { size = 64; } := unsigned long long;");
        match d {
            Decl::TypeAlias { name, target, .. } => {
                assert_eq!(name, "unsigned long long");
                assert!(matches!(target.node, TypeSpec::Integer(ref a) if a.len() == 1));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn multi_word_type_leaves_declarator() {
        let d = first_decl("unsigned long a, b[4][n.len];");
        match d {
            Decl::Field { ty, declarators } => {
                assert_eq!(ty.node, TypeSpec::Named("unsigned long".into()));
                assert_eq!(declarators.len(), 2);
                assert_eq!(declarators[0].name, "a");
                assert_eq!(declarators[1].name, "b");
                assert_eq!(declarators[1].dims[0].0, Dim::Len(4));
                assert_eq!(
                    declarators[1].dims[1].0,
                    Dim::Field(vec!["n".into(), "len".into()])
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn enum_with_trailing_comma_ranges_and_quoted_labels() {
        let d = first_decl(r#"enum e : uint8_t { A, "b c" = -3, C = 10 ... 19, };"#);
        match d {
            Decl::Field { ty, declarators } => {
                assert!(declarators.is_empty());
                match ty.node {
                    TypeSpec::Enum {
                        name,
                        container,
                        body,
                    } => {
                        assert_eq!(name.as_deref(), Some("e"));
                        assert_eq!(container.unwrap().node, TypeSpec::Named("uint8_t".into()));
                        let body = body.unwrap();
                        assert_eq!(body[0].value, None);
                        assert_eq!(body[1].label, "b c");
                        assert_eq!(body[1].value, Some((-3, -3)));
                        assert_eq!(body[2].value, Some((10, 19)));
                    }
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn blocks_with_attributes_and_type_assignments() {
        let items = parse(
            "event { name = \"a\"; id = -1; model.emf.uri = \"u\"; fields := struct { string s; }; };",
        )
        .unwrap();
        match &items[0] {
            Item::Block { kind, entries, pos } => {
                assert_eq!(*kind, BlockKind::Event);
                assert_eq!(*pos, Pos { line: 1, column: 1 });
                assert_eq!(entries.len(), 4);
                match &entries[1] {
                    BlockEntry::Attr(a) => assert_eq!(a.value, Value::Int(-1)),
                    other => panic!("{other:?}"),
                }
                match &entries[2] {
                    BlockEntry::Attr(a) => assert_eq!(a.key, "model.emf.uri"),
                    other => panic!("{other:?}"),
                }
                assert!(
                    matches!(&entries[3], BlockEntry::TypeAssign { key, .. } if key == "fields")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn variant_forms() {
        for s in [
            "variant v <a.b> { string x; } f;",
            "variant <tag> { string x; } f;",
            "variant v <tag> f;",
            "variant v { string x; };",
        ] {
            parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn syntax_errors_carry_positions() {
        let cases = [
            ("trace {\n  major = ;\n};", (2, 11)),
            ("struct { uint8_t a }", (1, 20)),
            ("typealias integer { size = 8; } :=  ;", (1, 37)),
            ("event {\n name \"x\"; };", (2, 7)),
            ("struct s { int x[]; };", (1, 18)),
            ("enum : uint8_t { A = }", (1, 22)),
            ("struct ;", (1, 8)),
            ("int *p;", (1, 5)),
        ];
        for (text, (line, column)) in cases {
            let e = parse(text).expect_err(text);
            assert_eq!(e.position(), Some(Pos { line, column }), "{text}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowing() {
        let mut s = String::new();
        for _ in 0..100_000 {
            s.push_str("struct { ");
        }
        let e = parse(&s).unwrap_err();
        assert!(matches!(e, TsdlError::Limit { .. }), "{e}");
    }
}
