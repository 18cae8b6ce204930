//! A compact field formatter for the event list, close to babeltrace2's
//! text output (`{ name = value, ... }` per scope), written here because
//! the viewers must not depend on the command-line crate.

use std::fmt::Write as _;

use traceloom_ctf::event::{display_name, FieldRef};
use traceloom_ctf::{Event, FieldValue};
use traceloom_tsdl::ir::{FieldType, Scope};

fn quote(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for ch in String::from_utf8_lossy(bytes).chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn value(out: &mut String, f: &FieldRef<'_>) {
    match f.ty() {
        FieldType::Struct(_) => {
            out.push_str("{ ");
            let mut first = true;
            for (name, sub) in f.fields() {
                if !first {
                    out.push_str(", ");
                }
                first = false;
                out.push_str(display_name(name));
                out.push_str(" = ");
                value(out, &sub);
            }
            out.push_str(if first { "}" } else { " }" });
        }
        FieldType::Variant(_) => match f.variant() {
            Some((_, name, inner)) => {
                let _ = write!(out, "{{ {} = ", display_name(name));
                value(out, &inner);
                out.push_str(" }");
            }
            None => out.push_str("{ }"),
        },
        FieldType::Array(_) | FieldType::Sequence(_) => match f.str_bytes() {
            Some(b) => quote(out, b),
            None => {
                out.push('[');
                let mut first = true;
                for (i, e) in f.elements().enumerate() {
                    out.push_str(if first { " " } else { ", " });
                    first = false;
                    let _ = write!(out, "[{i}] = ");
                    value(out, &e);
                }
                out.push_str(if first { "]" } else { " ]" });
            }
        },
        FieldType::Enum(_) => {
            let labels: Vec<&str> = f.enum_labels().collect();
            let n = scalar(f);
            match labels.as_slice() {
                [] => {
                    let _ = write!(out, "( <unknown> : container = {n} )");
                }
                [one] => {
                    let _ = write!(out, "( \"{one}\" : container = {n} )");
                }
                many => {
                    let _ = write!(
                        out,
                        "( {{ \"{}\" }} : container = {n} )",
                        many.join("\", \"")
                    );
                }
            }
        }
        FieldType::String(_) => quote(out, f.str_bytes().unwrap_or_default()),
        _ => out.push_str(&scalar(f)),
    }
}

fn scalar(f: &FieldRef<'_>) -> String {
    match f.value() {
        Some(FieldValue::UInt(v)) => v.to_string(),
        Some(FieldValue::SInt(v)) => v.to_string(),
        Some(FieldValue::Float(v)) => format!("{v}"),
        Some(FieldValue::Len(v)) => v.to_string(),
        Some(FieldValue::Variant(v)) => v.to_string(),
        Some(FieldValue::Str { .. }) => {
            let mut s = String::new();
            quote(&mut s, f.str_bytes().unwrap_or_default());
            s
        }
        None => "?".to_string(),
    }
}

/// The event's stream event context, event context and payload, each as
/// `{ name = value, ... }`, separated by `, ` (empty scopes left out).
pub fn format_fields(e: &Event<'_>) -> String {
    let mut out = String::new();
    for scope in [
        Scope::StreamEventContext,
        Scope::EventContext,
        Scope::EventPayload,
    ] {
        let Some(root) = e.scope(scope) else { continue };
        if root.fields().next().is_none() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        value(&mut out, &root);
    }
    out
}

/// The text [`format_fields`] makes, as a tree for a details pane: one
/// line per member, `(depth, "name = value")`, with a line `name =` (or a
/// bare `{`/`[` for an unnamed scope or element) opening each nested
/// structure or array, whose members follow one level deeper. Quoted
/// strings are kept whole (their braces and commas are text).
pub fn fields_tree(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    let mut in_str = false;
    let mut escaped = false;
    let flush = |cur: &mut String, depth: usize, lines: &mut Vec<(usize, String)>| {
        let t = cur.trim();
        if !t.is_empty() {
            lines.push((depth, t.to_owned()));
        }
        cur.clear();
    };
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        i += 1;
        // An element's index label, `[3] = ...`, is text.
        if ch == '[' && !in_str {
            let digits = chars[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 && chars.get(i + digits) == Some(&']') {
                cur.extend(&chars[i - 1..=i + digits]);
                i += digits + 1;
                continue;
            }
        }
        if in_str {
            cur.push(ch);
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => {
                in_str = true;
                cur.push(ch);
            }
            '{' | '[' => {
                let t = cur.trim();
                let opener = if t.is_empty() {
                    ch.to_string()
                } else {
                    t.to_owned()
                };
                lines.push((depth, opener));
                cur.clear();
                depth += 1;
            }
            '}' | ']' => {
                flush(&mut cur, depth, &mut lines);
                depth = depth.saturating_sub(1);
            }
            ',' => flush(&mut cur, depth, &mut lines),
            c => cur.push(c),
        }
    }
    flush(&mut cur, depth, &mut lines);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_as_a_tree() {
        let t = fields_tree(
            r#"{ cpu_id = 3 }, { prev_comm = "a{b, c}\"", ids = [ [0] = 1, [1] = 2 ], s = { x = 1 } }"#,
        );
        let want: Vec<(usize, String)> = vec![
            (0, "{".into()),
            (1, "cpu_id = 3".into()),
            (0, "{".into()),
            (1, r#"prev_comm = "a{b, c}\"""#.into()),
            (1, "ids =".into()),
            (2, "[0] = 1".into()),
            (2, "[1] = 2".into()),
            (1, "s =".into()),
            (2, "x = 1".into()),
        ];
        assert_eq!(t, want);
    }
}
