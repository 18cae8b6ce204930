//! One fragment's JSON: parsed with `serde_json` (whose recursion limit
//! keeps hostile nesting off the stack), then read through [`Obj`], which
//! turns a missing or mistyped property into an error naming the
//! fragment.

use serde_json::{Map, Value};

use super::framing::Record;
use super::FragError;

/// Parses a record's JSON text; a syntax error points at its byte.
pub(crate) fn parse(r: &Record<'_>) -> Result<Value, FragError> {
    serde_json::from_slice(r.text).map_err(|e| {
        let at = byte_of(r.text, e.line(), e.column());
        FragError::new(
            r.number,
            r.offset + 1 + at,
            format!("invalid JSON: {}", strip_position(&e.to_string())),
        )
    })
}

/// The byte offset of a 1-based line and column (`serde_json` counts
/// columns in bytes) in `text`, clamped to its length.
fn byte_of(text: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text[start..].iter().position(|&b| b == b'\n') {
            Some(p) => start += p + 1,
            None => return text.len(),
        }
    }
    (start + column.saturating_sub(1)).min(text.len())
}

/// `serde_json`'s message without its " at line L column C" (the error
/// gives the byte offset instead).
fn strip_position(msg: &str) -> &str {
    msg.rfind(" at line ").map_or(msg, |i| &msg[..i])
}

/// Which fragment a value belongs to, for error messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frag<'a> {
    /// Fragment number from 1.
    pub(crate) number: usize,
    /// Byte offset of the fragment.
    pub(crate) offset: usize,
    /// The fragment's value.
    pub(crate) value: &'a Value,
}

impl<'a> Frag<'a> {
    pub(crate) fn new(r: &Record<'_>, value: &'a Value) -> Self {
        Frag {
            number: r.number,
            offset: r.offset,
            value,
        }
    }

    /// An error about this fragment.
    pub(crate) fn err(&self, message: impl Into<String>) -> FragError {
        FragError::new(self.number, self.offset, message)
    }

    /// `v` as an object, `what` naming it in errors.
    pub(crate) fn obj(&self, v: &'a Value, what: &str) -> Result<Obj<'a>, FragError> {
        match v {
            Value::Object(map) => Ok(Obj {
                frag: Frag { value: v, ..*self },
                map,
                what: what.to_string(),
            }),
            _ => Err(self.err(format!("{what} must be a JSON object"))),
        }
    }
}

/// A JSON object of a fragment, with typed getters whose errors say which
/// property of what was wrong.
pub(crate) struct Obj<'a> {
    pub(crate) frag: Frag<'a>,
    map: &'a Map<String, Value>,
    /// What the object is ("event record class", "field class `x`").
    pub(crate) what: String,
}

impl<'a> Obj<'a> {
    /// An error about this object.
    pub(crate) fn err(&self, message: impl std::fmt::Display) -> FragError {
        self.frag.err(format!("{}: {message}", self.what))
    }

    fn bad(&self, key: &str, wanted: &str) -> FragError {
        self.err(format!("`{key}` must be {wanted}"))
    }

    /// The raw property.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// A string property.
    pub(crate) fn str(&self, key: &str) -> Result<Option<&'a str>, FragError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.bad(key, "a string")),
        }
    }

    /// A required string property.
    pub(crate) fn req_str(&self, key: &str) -> Result<&'a str, FragError> {
        self.str(key)?
            .ok_or_else(|| self.err(format!("missing `{key}`")))
    }

    /// An unsigned integer property.
    pub(crate) fn u64(&self, key: &str) -> Result<Option<u64>, FragError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.bad(key, "an unsigned integer")),
        }
    }

    /// A required unsigned integer property.
    pub(crate) fn req_u64(&self, key: &str) -> Result<u64, FragError> {
        self.u64(key)?
            .ok_or_else(|| self.err(format!("missing `{key}`")))
    }

    /// A signed integer property.
    pub(crate) fn i64(&self, key: &str) -> Result<Option<i64>, FragError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.bad(key, "a 64-bit signed integer")),
        }
    }

    /// An array property.
    pub(crate) fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, FragError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(self.bad(key, "an array")),
        }
    }

    /// An object property.
    pub(crate) fn obj(&self, key: &str) -> Result<Option<Obj<'a>>, FragError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => self
                .frag
                .obj(v, &format!("{}: `{key}`", self.what))
                .map(Some),
        }
    }

    /// The properties in order (`serde_json` keeps keys sorted).
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.map.iter()
    }
}

/// A JSON integer as i128 (CTF 2 integer ranges span both the signed and
/// the unsigned 64-bit ranges).
pub(crate) fn int128(v: &Value) -> Option<i128> {
    v.as_u64()
        .map(i128::from)
        .or_else(|| v.as_i64().map(i128::from))
}

/// A 16-byte UUID written as an array of 16 integers 0..=255.
pub(crate) fn uuid(o: &Obj<'_>, key: &str) -> Result<Option<[u8; 16]>, FragError> {
    let Some(a) = o.array(key)? else {
        return Ok(None);
    };
    let bad = || o.err(format!("`{key}` must be an array of 16 bytes (0 to 255)"));
    if a.len() != 16 {
        return Err(bad());
    }
    let mut u = [0u8; 16];
    for (d, v) in u.iter_mut().zip(a) {
        *d = v
            .as_u64()
            .and_then(|b| u8::try_from(b).ok())
            .ok_or_else(bad)?;
    }
    Ok(Some(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_point_at_the_byte() {
        let text = b"{\n  \"a\": 1,\n  \"b\": tru\n}\n";
        let r = Record {
            number: 3,
            offset: 100,
            text,
        };
        let e = parse(&r).unwrap_err();
        assert_eq!(e.fragment, 3);
        // Line 3 is bytes 13 to 23: the error is at `tru` or just after.
        assert!((101 + 19..=101 + 23).contains(&e.offset), "{e:?}");
        assert!(e.message.starts_with("invalid JSON"), "{}", e.message);
        assert!(!e.message.contains("at line"), "{}", e.message);
    }
}
