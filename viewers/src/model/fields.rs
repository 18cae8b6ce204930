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
