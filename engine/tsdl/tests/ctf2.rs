//! The CTF 2 metadata reader on small hand-written metadata: every field
//! class kind it maps, field locations (absolute, relative, with parent
//! steps, older array form), aliases, roles, and the errors, which name
//! the fragment and a byte offset.

use traceloom_tsdl::ir::{FieldType, Role, Scope};
use traceloom_tsdl::{parse_metadata, MetadataError, MAX_NODES};

/// Metadata from fragments (each a JSON text).
fn meta(fragments: &[&str]) -> Vec<u8> {
    let mut b = Vec::new();
    for f in fragments {
        b.push(0x1E);
        b.extend_from_slice(f.as_bytes());
        b.push(b'\n');
    }
    b
}

const PRE: &str = r#"{"type": "preamble", "version": 2}"#;
const DSC: &str = r#"{"type": "data-stream-class"}"#;

/// A trace with one event record class whose payload members are `members`.
fn with_payload(members: &str) -> Vec<u8> {
    let erc = format!(
        r#"{{"type": "event-record-class", "name": "e", "payload-field-class":
            {{"type": "structure", "member-classes": [{members}]}}}}"#
    );
    meta(&[PRE, DSC, &erc])
}

fn payload(bytes: &[u8]) -> FieldType {
    let tc = parse_metadata(bytes).unwrap_or_else(|e| panic!("{e}"));
    let ec = &tc.streams[&0].events[&0];
    (**ec.payload.as_ref().unwrap()).clone()
}

fn member<'a>(ty: &'a FieldType, name: &str) -> &'a FieldType {
    &ty.as_struct()
        .unwrap()
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no member {name}"))
        .ty
}

fn ctf2_err(bytes: &[u8]) -> (usize, u64, String) {
    // (The trace class of hostile metadata is too big to print.)
    let Err(e) = parse_metadata(bytes) else {
        panic!("the metadata was accepted");
    };
    match e {
        MetadataError::Ctf2 {
            fragment,
            offset,
            message,
            ..
        } => (fragment, offset, message),
        e => panic!("not a CTF 2 error: {e}"),
    }
}

const U8: &str = r#"{"type": "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian", "alignment": 8}"#;

#[test]
fn field_classes_map_to_the_trace_class() {
    let p = payload(&with_payload(&format!(
        r#"{{"name": "n", "field-class": {U8}}},
           {{"name": "s", "field-class": {{"type": "dynamic-length-string",
               "length-field-location": {{"origin": "event-record-payload", "path": ["n"]}}}}}},
           {{"name": "a", "field-class": {{"type": "dynamic-length-array",
               "length-field-location": {{"path": ["n"]}}, "element-field-class": {U8}}}}},
           {{"name": "t", "field-class": {{"type": "static-length-string", "length": 4}}}},
           {{"name": "b", "field-class": {{"type": "static-length-blob", "length": 3}}}},
           {{"name": "v", "field-class": {{"type": "variable-length-signed-integer"}}}},
           {{"name": "f", "field-class": {{"type": "fixed-length-floating-point-number",
               "length": 64, "byte-order": "big-endian", "alignment": 8}}}},
           {{"name": "_u", "field-class": {{"type": "null-terminated-string"}}}}"#
    )));
    let FieldType::Sequence(s) = member(&p, "s") else {
        panic!("s is not a sequence")
    };
    assert_eq!(
        (s.length.scope, s.length.path.clone()),
        (Scope::EventPayload, vec![0])
    );
    let FieldType::Sequence(a) = member(&p, "a") else {
        panic!("a is not a sequence")
    };
    assert_eq!(a.length.path, vec![0], "a relative location");
    assert!(matches!(member(&p, "t"), FieldType::Array(t) if t.length == 4));
    assert!(matches!(member(&p, "b"), FieldType::Array(b) if b.length == 3));
    let FieldType::Integer(v) = member(&p, "v") else {
        panic!("v is not an integer")
    };
    assert!(v.varlen && v.signed && v.size == 64 && v.align == 8);
    assert!(matches!(member(&p, "f"), FieldType::Float(f) if f.size() == 64));
    // A CTF 2 name starting with `_` keeps it once the TSDL escape is
    // removed.
    member(&p, "__u");
}

#[test]
fn relative_locations_go_up_with_null() {
    let p = payload(&with_payload(&format!(
        r#"{{"name": "len", "field-class": {U8}}},
           {{"name": "inner", "field-class": {{"type": "structure", "member-classes": [
               {{"name": "x", "field-class": {U8}}},
               {{"name": "seq", "field-class": {{"type": "dynamic-length-array",
                   "length-field-location": {{"path": [null, "len"]}},
                   "element-field-class": {U8}}}}},
               {{"name": "seq2", "field-class": {{"type": "dynamic-length-array",
                   "length-field-location": {{"path": ["x"]}},
                   "element-field-class": {U8}}}}}]}}}}"#
    )));
    let inner = member(&p, "inner");
    let FieldType::Sequence(s) = member(inner, "seq") else {
        panic!()
    };
    assert_eq!(s.length.path, vec![0]);
    let FieldType::Sequence(s2) = member(inner, "seq2") else {
        panic!()
    };
    assert_eq!(s2.length.path, vec![1, 0]);
}

#[test]
fn variants_select_by_ranges_and_roles_map_clocks() {
    let clock = r#"{"type": "clock-class", "id": "c", "frequency": 1000, "origin": "unix-epoch",
                    "offset-from-origin": {"seconds": 5, "cycles": 7}}"#;
    let dsc = r#"{"type": "data-stream-class", "default-clock-class-id": "c",
            "event-record-header-field-class": {"type": "structure", "member-classes": [
              {"name": "id", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
                 "byte-order": "little-endian", "roles": ["event-record-class-id"]}},
              {"name": "ts", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32,
                 "byte-order": "little-endian", "roles": ["default-clock-timestamp"]}}]}}"#;
    let erc = format!(
        r#"{{"type": "event-record-class", "id": 3, "name": "e", "payload-field-class":
            {{"type": "structure", "member-classes": [
              {{"name": "sel", "field-class": {U8}}},
              {{"name": "v", "field-class": {{"type": "variant",
                 "selector-field-location": ["event-record-payload", "sel"],
                 "options": [
                   {{"name": "a", "selector-field-ranges": [[0, 2], [9, 9]], "field-class": {U8}}},
                   {{"name": "b", "selector-field-ranges": [[3, 8]],
                     "field-class": {{"type": "null-terminated-string"}}}}]}}}}]}}}}"#
    );
    let tc = parse_metadata(&meta(&[PRE, clock, dsc, &erc])).unwrap();
    assert_eq!((tc.major, tc.minor), (2, 0));
    let c = &tc.clocks[0];
    assert_eq!(
        (c.name.as_str(), c.freq, c.offset_s, c.offset),
        ("c", 1000, 5, 7)
    );
    assert!(c.absolute);
    let header = tc.streams[&0].event_header.as_ref().unwrap();
    let FieldType::Integer(id) = member(header, "id") else {
        panic!()
    };
    assert_eq!(id.role, Some(Role::EventRecordClassId));
    let FieldType::Integer(ts) = member(header, "ts") else {
        panic!()
    };
    assert_eq!(
        (ts.role, ts.mapped_clock.as_deref()),
        (Some(Role::DefaultClockTimestamp), Some("c"))
    );
    let ec = &tc.streams[&0].events[&3];
    let FieldType::Variant(v) = member(ec.payload.as_ref().unwrap(), "v") else {
        panic!()
    };
    assert_eq!(v.tag.path, vec![0]);
    assert_eq!(
        v.selector_ranges.as_deref(),
        Some(&[vec![(0, 2), (9, 9)], vec![(3, 8)]][..])
    );
}

#[test]
fn aliases_expand_where_used() {
    let alias = format!(r#"{{"type": "field-class-alias", "name": "byte", "field-class": {U8}}}"#);
    let erc = r#"{"type": "event-record-class", "payload-field-class": {"type": "structure",
        "member-classes": [{"name": "x", "field-class": "byte"}]}}"#;
    let tc = parse_metadata(&meta(&[PRE, &alias, DSC, erc])).unwrap();
    let p = tc.streams[&0].events[&0].payload.as_ref().unwrap();
    assert!(matches!(member(p, "x"), FieldType::Integer(i) if i.size == 8));
}

#[test]
fn errors_name_the_fragment_and_offset() {
    // JSON syntax error in fragment 2: the offset is inside it.
    let b = meta(&[PRE, r#"{"type": "data-stream-class",, }"#]);
    let second = b.iter().rposition(|&c| c == 0x1E).unwrap() as u64;
    let (f, off, msg) = ctf2_err(&b);
    assert_eq!(f, 2);
    assert!(off > second && off < b.len() as u64, "{off}");
    assert!(msg.contains("invalid JSON"), "{msg}");

    // Semantic errors point at the fragment's start.
    for (frags, want, n) in [
        (vec![DSC], "preamble", 1),
        (
            vec![PRE, r#"{"type": "nonsense"}"#],
            "unknown fragment type",
            2,
        ),
        (
            vec![
                PRE,
                DSC,
                r#"{"type": "event-record-class", "data-stream-class-id": 4}"#,
            ],
            "unknown data stream class 4",
            3,
        ),
        (
            vec![PRE, r#"{"type": "clock-class", "id": "c", "frequency": 0}"#],
            "frequency",
            2,
        ),
    ] {
        let b = meta(&frags);
        let (f, off, msg) = ctf2_err(&b);
        assert_eq!(f, n, "{msg}");
        assert_eq!(b[off as usize], 0x1E, "{msg}");
        assert!(msg.contains(want), "{msg}");
    }

    for (members, want) in [
        (
            r#"{"name": "o", "field-class": {"type": "optional"}}"#,
            "optional",
        ),
        (
            r#"{"name": "x", "field-class": {"type": "no-such-type"}}"#,
            "unknown field class type",
        ),
        (
            r#"{"name": "x", "field-class": "nope"}"#,
            "unknown field-class alias",
        ),
        (
            r#"{"name": "s", "field-class": {"type": "dynamic-length-string",
                "length-field-location": {"origin": "event-record-payload", "path": ["missing"]}}}"#,
            "no such field",
        ),
        (
            r#"{"name": "x", "field-class": {"type": "fixed-length-signed-integer", "length": 65,
                "byte-order": "little-endian"}}"#,
            "out of range",
        ),
        (
            r#"{"name": "x", "field-class": {"type": "null-terminated-string", "encoding": "utf-16le"}}"#,
            "not supported",
        ),
    ] {
        let (f, _, msg) = ctf2_err(&with_payload(members));
        assert_eq!(f, 3, "{msg}");
        assert!(msg.contains(want), "{want}: {msg}");
    }
}

#[test]
fn hostile_aliases_and_nesting_are_bounded() {
    // Each alias doubles the previous one: 2^40 nodes if expanded.
    let mut frags = vec![PRE.to_string()];
    frags.push(format!(
        r#"{{"type": "field-class-alias", "name": "a0", "field-class": {U8}}}"#
    ));
    for i in 1..40 {
        frags.push(format!(
            r#"{{"type": "field-class-alias", "name": "a{i}", "field-class": {{"type": "structure",
                "member-classes": [{{"name": "x", "field-class": "a{p}"}}, {{"name": "y", "field-class": "a{p}"}}]}}}}"#,
            p = i - 1
        ));
    }
    let refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    let (f, _, msg) = ctf2_err(&meta(&refs));
    assert!(f > 2, "{msg}");
    assert!(
        msg.contains(&MAX_NODES.to_string()) || msg.contains("deeper"),
        "{msg}"
    );

    // One alias of 130,000 nodes used by 30 event record classes: 3.9 M
    // nodes of expansion in all, refused (each use alone is fine).
    let mut fc = U8.to_string();
    for _ in 0..16 {
        fc = format!(
            r#"{{"type": "structure", "member-classes": [{{"name": "x", "field-class": {fc}}}, {{"name": "y", "field-class": {fc}}}]}}"#
        );
    }
    let alias = format!(r#"{{"type": "field-class-alias", "name": "big", "field-class": {fc}}}"#);
    let mut frags = vec![PRE.to_string(), alias, DSC.to_string()];
    for id in 0..30 {
        frags.push(format!(
            r#"{{"type": "event-record-class", "id": {id}, "payload-field-class": "big"}}"#
        ));
    }
    let refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    let (f, _, msg) = ctf2_err(&meta(&refs));
    assert!((15..=24).contains(&f), "fragment {f}: {msg}");
    assert!(msg.contains(&MAX_NODES.to_string()), "{msg}");

    // JSON nested past serde_json's limit, and field classes nested deeper
    // than the reader's: errors, no stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(ctf2_err(&meta(&[PRE, &deep])).2.contains("invalid JSON"));
    let mut fc = U8.to_string();
    for _ in 0..100 {
        fc = format!(
            r#"{{"type": "static-length-array", "length": 1, "element-field-class": {fc}}}"#
        );
    }
    let (_, _, msg) = ctf2_err(&with_payload(&format!(
        r#"{{"name": "d", "field-class": {fc}}}"#
    )));
    assert!(msg.contains("deeper"), "{msg}");
}
