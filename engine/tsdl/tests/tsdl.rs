//! TSDL constructs and error cases through the public API.

use traceloom_tsdl::ir::{
    ByteOrder, DisplayBase, Encoding, EnvValue, FieldPath, FieldType, Scope, TraceClass,
};
use traceloom_tsdl::{parse_tsdl, Pos, TsdlError};

/// A little-endian trace with the usual aliases, then `rest`.
fn with_prelude(rest: &str) -> String {
    format!(
        "/* CTF 1.8 */\n\
         typealias integer {{ size = 8; align = 8; signed = false; }} := uint8_t;\n\
         typealias integer {{ size = 16; align = 8; signed = false; }} := uint16_t;\n\
         typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;\n\
         typealias integer {{ size = 32; align = 8; signed = true; }} := int;\n\
         trace {{ major = 1; minor = 8; byte_order = le; }};\n\
         {rest}"
    )
}

/// Prelude line count, for error positions in `rest`.
const PRELUDE_LINES: u32 = 6;

fn ok(text: &str) -> TraceClass {
    parse_tsdl(text).unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"))
}

fn err(text: &str) -> TsdlError {
    match parse_tsdl(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts the error is at `line` and `column` and mentions `needle`.
fn assert_err_at(e: &TsdlError, line: u32, column: u32, needle: &str) {
    assert_eq!(e.position(), Some(Pos { line, column }), "{e}");
    assert!(e.to_string().contains(needle), "`{e}` lacks `{needle}`");
}

/// Line number in the whole text of line `n` (1-based) of the part after the prelude.
fn rest_line(n: u32) -> u32 {
    PRELUDE_LINES + n
}

fn payload(tc: &TraceClass, stream: u64, id: u64) -> &FieldType {
    tc.streams[&stream].events[&id].payload.as_ref().unwrap()
}

fn field<'a>(ty: &'a FieldType, name: &str) -> &'a FieldType {
    &ty.as_struct()
        .unwrap()
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .ty
}

fn int(ty: &FieldType) -> &traceloom_tsdl::ir::IntegerType {
    match ty {
        FieldType::Integer(i) => i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn event_with(fields: &str) -> String {
    with_prelude(&format!(
        "event {{ name = \"e\"; fields := struct {{\n{fields}\n}}; }};"
    ))
}

#[test]
fn integer_attributes() {
    let tc = ok(&event_with(
        "integer { size = 12; } a;
         integer { size = 16; align = 32; signed = TRUE; byte_order = be; base = hex; } b;
         integer { size = 8; signed = 1; encoding = UTF8; base = 8; } c;
         integer { size = 64; signed = false; base = x; map = clock.mono.value; byte_order = network; } d;
         integer { size = 1; base = 2; encoding = ASCII; unknown_attr = 5; } e;
         integer { size = 32; base = p; byte_order = native; } f;",
    ));
    let p = payload(&tc, 0, 0);
    let a = int(field(p, "a"));
    assert_eq!((a.size, a.align, a.signed), (12, 1, false));
    assert_eq!(
        (a.byte_order, a.base, a.encoding),
        (ByteOrder::Little, DisplayBase::Decimal, Encoding::None)
    );
    let b = int(field(p, "b"));
    assert_eq!(
        (b.size, b.align, b.signed, b.byte_order, b.base),
        (16, 32, true, ByteOrder::Big, DisplayBase::Hexadecimal)
    );
    let c = int(field(p, "c"));
    assert_eq!(
        (c.align, c.signed, c.encoding, c.base),
        (8, true, Encoding::Utf8, DisplayBase::Octal)
    );
    let d = int(field(p, "d"));
    assert_eq!(
        (d.mapped_clock.as_deref(), d.byte_order, d.base),
        (Some("mono"), ByteOrder::Big, DisplayBase::Hexadecimal)
    );
    let e = int(field(p, "e"));
    assert_eq!((e.base, e.encoding), (DisplayBase::Binary, Encoding::Ascii));
    let f = int(field(p, "f"));
    assert_eq!(
        (f.byte_order, f.base),
        (ByteOrder::Little, DisplayBase::Hexadecimal)
    );
}

#[test]
fn typealias_multi_word_and_typedef() {
    let tc = ok(&with_prelude(
        "typealias integer { size = 64; signed = false; } := unsigned long long;
         typealias integer { size = 32; signed = true; } := long;
         typedef uint8_t uuid_t[16], byte_t;
         event { name = \"e\"; fields := struct {
             unsigned long long a;
             long b, c;
             uuid_t u;
             byte_t m[2][3];
         }; };",
    ));
    let p = payload(&tc, 0, 0);
    assert_eq!(int(field(p, "a")).size, 64);
    assert!(int(field(p, "b")).signed && int(field(p, "c")).signed);
    let FieldType::Array(u) = field(p, "u") else {
        panic!()
    };
    assert_eq!((u.length, int(&u.element).size), (16, 8));
    // `m[2][3]` is 2 arrays of 3 bytes.
    let FieldType::Array(m) = field(p, "m") else {
        panic!()
    };
    assert_eq!(m.length, 2);
    let FieldType::Array(inner) = &*m.element else {
        panic!()
    };
    assert_eq!(inner.length, 3);
}

#[test]
fn native_before_the_trace_block_takes_the_trace_order() {
    let tc = ok("typealias integer { size = 32; byte_order = native; } := u32;
         typealias floating_point { exp_dig = 8; mant_dig = 24; } := f32;
         trace { major = 1; minor = 8; byte_order = be; packet.header := struct { u32 magic; }; };
         event { name = \"e\"; fields := struct { u32 x; f32 y; floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 64; } z; }; };");
    assert_eq!(tc.byte_order, ByteOrder::Big);
    let p = payload(&tc, 0, 0);
    assert_eq!(int(field(p, "x")).byte_order, ByteOrder::Big);
    let FieldType::Float(y) = field(p, "y") else {
        panic!()
    };
    assert_eq!(
        (y.exp_dig, y.mant_dig, y.align, y.byte_order),
        (8, 24, 8, ByteOrder::Big)
    );
    let FieldType::Float(z) = field(p, "z") else {
        panic!()
    };
    assert_eq!(
        (z.size(), z.align, z.byte_order),
        (64, 64, ByteOrder::Little)
    );
    assert_eq!(
        int(field(tc.packet_header.as_ref().unwrap(), "magic")).byte_order,
        ByteOrder::Big
    );
}

#[test]
fn strings() {
    let tc = ok(&event_with(
        "string a; string { encoding = ASCII; } b; string { } c;",
    ));
    let p = payload(&tc, 0, 0);
    assert_eq!(field(p, "a"), &FieldType::String(Encoding::Utf8));
    assert_eq!(field(p, "b"), &FieldType::String(Encoding::Ascii));
    assert_eq!(field(p, "c"), &FieldType::String(Encoding::Utf8));
}

#[test]
fn enums() {
    let tc = ok(&with_prelude(
        "enum color : uint8_t { RED, GREEN = 5, BLUE, \"light blue\" = 10 ... 19, NEXT, RED = 100 };
         event { name = \"e\"; fields := struct {
             enum color c;
             enum { A, B = -3, C } d;
             enum : integer { size = 8; signed = true; } { X = -128 ... 127 } e;
         }; };",
    ));
    let p = payload(&tc, 0, 0);
    let FieldType::Enum(c) = field(p, "c") else {
        panic!()
    };
    let labels = |v| c.labels_for(v).collect::<Vec<_>>();
    assert_eq!(labels(0), ["RED"]);
    assert_eq!(labels(5), ["GREEN"]);
    assert_eq!(labels(6), ["BLUE"]);
    assert_eq!(labels(15), ["light blue"]);
    assert_eq!(labels(20), ["NEXT"]);
    assert_eq!(labels(100), ["RED"]);
    assert_eq!(c.mappings[0].ranges, vec![(0, 0), (100, 100)]);
    // Default container is `int`; implicit values continue after negatives.
    let FieldType::Enum(d) = field(p, "d") else {
        panic!()
    };
    assert_eq!((d.container.size, d.container.signed), (32, true));
    assert_eq!(d.labels_for(-2).collect::<Vec<_>>(), ["C"]);
    let FieldType::Enum(e) = field(p, "e") else {
        panic!()
    };
    assert_eq!(e.labels_for(-128).collect::<Vec<_>>(), ["X"]);
}

#[test]
fn enum_errors() {
    let e = err("trace { major = 1; minor = 8; byte_order = le; };\nenum { A } x;");
    assert_err_at(&e, 2, 1, "no integer type `int`");
    let e = err(&with_prelude("enum : uint8_t {\n  A = 255,\n  B };"));
    assert_err_at(&e, rest_line(3), 3, "does not fit");
    let e = err(&with_prelude("enum : uint8_t { A = 5 ... 1 };"));
    assert_err_at(&e, rest_line(1), 18, "empty range");
    let e = err(&with_prelude(
        "enum : floating_point { exp_dig = 8; mant_dig = 24; } { A };",
    ));
    assert_err_at(&e, rest_line(1), 8, "container must be an integer");
}

#[test]
fn named_structs_alignment_and_reuse() {
    let tc = ok(&with_prelude(
        "struct pair { uint32_t a; uint8_t b; } align(64);
         event { name = \"e\"; fields := struct {
             struct pair p;
             struct pair align(128) q;
             struct { uint8_t z; } align(16) r;
         } align(8); };",
    ));
    let p = payload(&tc, 0, 0);
    let FieldType::Struct(pair) = field(p, "p") else {
        panic!()
    };
    assert_eq!((pair.fields.len(), pair.min_align), (2, 64));
    assert_eq!(field(p, "q").as_struct().unwrap().min_align, 128);
    assert_eq!(field(p, "r").align(), 16);
    assert_eq!(p.as_struct().unwrap().min_align, 8);
    assert_eq!(p.align(), 128);
}

#[test]
fn scoped_typealias_does_not_leak() {
    let e = err(&with_prelude(
        "struct s { typealias uint8_t := inner_t; inner_t x; };\nevent { name = \"e\"; fields := struct { inner_t y; }; };",
    ));
    assert_err_at(&e, rest_line(2), 40, "unknown type `inner_t`");
}

#[test]
fn lttng_header_variant_with_tag_in_same_struct() {
    let tc = ok(&with_prelude(
        "struct event_header_compact {
             enum : integer { size = 5; } { compact = 0 ... 30, extended = 31 } id;
             variant <id> {
                 struct { integer { size = 27; } timestamp; } compact;
                 struct { uint32_t id; integer { size = 64; } timestamp; } extended;
             } v;
         } align(8);
         stream { event.header := struct event_header_compact; };
         event { name = \"e\"; };",
    ));
    let h = tc.streams[&0].event_header.as_ref().unwrap();
    let FieldType::Variant(v) = field(h, "v") else {
        panic!()
    };
    assert_eq!(
        v.tag,
        FieldPath {
            scope: Scope::EventHeader,
            path: vec![0]
        }
    );
    assert_eq!(v.options[1].name, "extended");
}

#[test]
fn named_variant_used_with_a_tag_and_lttng_underscore_options() {
    let tc = ok(&with_prelude(
        "variant payload_v { uint8_t _one; string _two; };
         event { name = \"e\"; fields := struct {
             enum : uint8_t { one, two } _sel;
             struct { variant payload_v <_sel> inner; } wrap;
         }; };",
    ));
    let p = payload(&tc, 0, 0);
    // The tag is found by searching outward from the inner struct.
    let FieldType::Variant(v) = field(field(p, "wrap"), "inner") else {
        panic!()
    };
    assert_eq!(v.tag_name, "_sel");
    assert_eq!(
        v.tag,
        FieldPath {
            scope: Scope::EventPayload,
            path: vec![0]
        }
    );
    let names: Vec<_> = v.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["_one", "_two"]);
    assert_eq!(v.option_index("two"), Some(1));
    assert_eq!(v.option_index("_one"), Some(0));
    assert_eq!(v.option_index("three"), None);
}

#[test]
fn sequences_relative_and_absolute() {
    let tc = ok(&with_prelude(
        "stream {
             packet.context := struct { uint16_t pc_len; };
             event.header := struct { uint32_t id; uint8_t hlen; };
             event.context := struct { uint8_t ctx_len; uint8_t ctx_seq[ctx_len]; };
         };
         event { name = \"e\"; context := struct { uint8_t elen; };
             fields := struct {
                 uint8_t len;
                 uint8_t a[len];
                 uint8_t b[event.fields.len];
                 uint8_t c[stream.event.header.hlen];
                 uint8_t d[stream.packet.context.pc_len];
                 uint8_t e[hlen];
                 uint8_t f[elen];
                 uint8_t g[event.context.elen];
                 struct { uint8_t n; uint8_t s[n]; } items[4];
                 uint8_t h[items.n];
             };
         };",
    ));
    let p = payload(&tc, 0, 0);
    let len_of = |name: &str| match field(p, name) {
        FieldType::Sequence(s) => s.length.clone(),
        other => panic!("{name}: {other:?}"),
    };
    let fp = |scope, path: &[usize]| FieldPath {
        scope,
        path: path.to_vec(),
    };
    assert_eq!(len_of("a"), fp(Scope::EventPayload, &[0]));
    assert_eq!(len_of("b"), fp(Scope::EventPayload, &[0]));
    assert_eq!(len_of("c"), fp(Scope::EventHeader, &[1]));
    assert_eq!(len_of("d"), fp(Scope::PacketContext, &[0]));
    assert_eq!(len_of("e"), fp(Scope::EventHeader, &[1]));
    assert_eq!(len_of("f"), fp(Scope::EventContext, &[0]));
    assert_eq!(len_of("g"), fp(Scope::EventContext, &[0]));
    // Through an array of structs, transparently.
    let FieldType::Array(items) = field(p, "items") else {
        panic!()
    };
    let FieldType::Sequence(s) = field(&items.element, "s") else {
        panic!()
    };
    assert_eq!(s.length, fp(Scope::EventPayload, &[8, 0]));
    assert_eq!(len_of("h"), fp(Scope::EventPayload, &[8, 0]));
    let ec = tc.streams[&0].event_context.as_ref().unwrap();
    let FieldType::Sequence(cs) = field(ec, "ctx_seq") else {
        panic!()
    };
    assert_eq!(cs.length, fp(Scope::StreamEventContext, &[0]));
}

#[test]
fn reference_errors() {
    let cases: &[(&str, (u32, u32), &str)] = &[
        ("event { name = \"e\"; fields := struct {\n  uint8_t a[nope]; }; };", (2, 13), "no field `nope`"),
        ("event { name = \"e\"; fields := struct {\n  int n; uint8_t a[n]; }; };", (2, 20), "not an unsigned integer"),
        ("event { name = \"e\"; fields := struct {\n  uint8_t a[b]; uint8_t b; }; };", (2, 13), "no field `b`"),
        ("event { name = \"e\"; fields := struct {\n  uint8_t t; variant <t> { string x; } v; }; };", (2, 14), "not an enumeration"),
        (
            "stream { event.header := struct {\n  uint8_t a[event.fields.n]; }; };\nevent { name = \"e\"; };",
            (2, 13),
            "decoded after",
        ),
        ("event { name = \"e\"; fields := struct {\n  uint8_t a[stream.event.context.n]; }; };", (2, 13), "not defined"),
        ("variant v { string x; };\nevent { name = \"e\"; fields := struct { variant v x; }; };", (2, 40), "no tag"),
    ];
    for (rest, (line, column), needle) in cases {
        let e = err(&with_prelude(rest));
        assert_err_at(&e, rest_line(*line), *column, needle);
    }
}

#[test]
fn blocks_env_clock_callsite_and_defaults() {
    let tc = ok(&with_prelude(
        "env { hostname = \"h\"; tracer_major = 2; neg = -5; big = 18446744073709551615; kind = kernel; };
         clock { name = \"mono\"; uuid = \"01234567-89ab-cdef-0123-456789ABCDEF\"; description = \"d\";
                 freq = 1000; precision = 3; offset_s = -2; offset = 0x10; absolute = 1; };
         clock { name = other; absolute = FALSE; };
         callsite { name = \"e\"; func = \"f\"; ip = 0x1000; file = \"a.c\"; line = 12; };
         stream { packet.context := struct { uint32_t x; }; };
         event { name = \"e\"; loglevel = -1; model.emf.uri = \"u\"; unknown = 3; unknown_type := struct { nope_t x; }; };",
    ));
    assert_eq!(
        tc.env,
        vec![
            ("hostname".into(), EnvValue::Str("h".into())),
            ("tracer_major".into(), EnvValue::Int(2)),
            ("neg".into(), EnvValue::Int(-5)),
            ("big".into(), EnvValue::Str("18446744073709551615".into())),
            ("kind".into(), EnvValue::Str("kernel".into())),
        ]
    );
    let c = tc.clock("mono").unwrap();
    assert_eq!(
        (c.freq, c.precision, c.offset_s, c.offset, c.absolute),
        (1000, 3, -2, 16, true)
    );
    assert_eq!(c.uuid.unwrap()[..3], [0x01, 0x23, 0x45]);
    assert_eq!(c.uuid.unwrap()[15], 0xEF);
    assert_eq!(c.description.as_deref(), Some("d"));
    let o = tc.clock("other").unwrap();
    assert_eq!((o.freq, o.absolute), (1_000_000_000, false));
    assert_eq!(tc.callsites[0].ip, 0x1000);
    assert_eq!(tc.callsites[0].line, 12);
    // No stream id: 0; no event id / stream_id: 0 and the only stream.
    let e = &tc.streams[&0].events[&0];
    assert_eq!(
        (e.loglevel, e.emf_uri.as_deref(), e.stream_id),
        (Some(-1), Some("u"), 0)
    );
}

#[test]
fn events_without_any_stream_block_get_an_implicit_stream() {
    let tc = ok(&with_prelude("event { name = \"a\"; id = 3; };"));
    assert_eq!(tc.streams.len(), 1);
    let s = &tc.streams[&0];
    assert!(s.event_header.is_none() && s.packet_context.is_none());
    assert_eq!(s.events[&3].name, "a");
}

#[test]
fn events_may_precede_their_stream() {
    let tc = ok(&with_prelude(
        "event { name = \"a\"; stream_id = 7; fields := struct { uint8_t x[n]; }; };
         stream { id = 7; event.context := struct { uint8_t n; }; };",
    ));
    let FieldType::Sequence(s) = field(payload(&tc, 7, 0), "x") else {
        panic!()
    };
    assert_eq!(s.length.scope, Scope::StreamEventContext);
}

#[test]
fn semantic_errors_have_positions() {
    let cases: &[(&str, (u32, u32), &str)] = &[
        ("event { name = \"e\"; fields := struct {\n  nope_t x; }; };", (2, 3), "unknown type `nope_t`"),
        ("event { name = \"e\"; fields := struct {\n  struct nope x; }; };", (2, 3), "unknown struct `nope`"),
        ("event { name = \"e\"; fields := struct {\n  uint8_t x; string x; }; };", (2, 21), "duplicate field"),
        ("event { name = \"a\"; id = 1; };\nevent { name = \"b\"; id = 1; };", (2, 1), "reuses id 1"),
        ("stream { id = 1; };\nevent { name = \"a\"; stream_id = 2; };", (2, 1), "not declared"),
        ("stream { id = 1; };\nstream { id = 2; };\nevent { name = \"a\"; };", (3, 1), "no stream_id"),
        ("stream { };\nstream { };", (2, 1), "duplicate stream class id 0"),
        ("event { id = 1; };", (1, 1), "no name"),
        ("event { name = \"e\"; fields := uint8_t; };", (1, 31), "must be a structure"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 65; } x; }; };", (2, 20), "out of range"),
        ("event { name = \"e\"; fields := struct {\n  integer { align = 8; } x; }; };", (2, 3), "no size"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 8; align = 3; } x; }; };", (2, 31), "power of two"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 8; base = 7; } x; }; };", (2, 30), "base"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 8; map = mono; } x; }; };", (2, 29), "clock.NAME.value"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 8; signed = maybe; } x; }; };", (2, 32), "true, false"),
        ("event { name = \"e\"; fields := struct {\n  integer { size = 8; encoding = EBCDIC; } x; }; };", (2, 34), "encoding"),
        ("event { name = \"e\"; fields := struct {\n  floating_point { exp_dig = 5; mant_dig = 11; } x; }; };", (2, 3), "floating_point"),
        ("event { name = \"e\"; fields := struct {\n  struct { uint8_t a; } align(6) x; }; };", (2, 31), "power of two"),
        ("clock { name = c; uuid = \"not-a-uuid\"; };", (1, 26), "UUID"),
        ("clock { name = c; freq = 0; };", (1, 26), "must not be 0"),
        ("clock { name = c; };\nclock { name = c; };", (2, 1), "duplicate clock"),
        ("clock { freq = 1; };", (1, 1), "no name"),
        ("uint8_t stray;", (1, 9), "outside a struct"),
        ("typealias uint8_t := uint8_t;\ntypealias uint16_t := uint8_t;", (2, 23), "already declared"),
        ("trace { major = 1; minor = 8; byte_order = le; };", (1, 1), "duplicate trace"),
        ("event { name = \"e\"; loglevel = 9223372036854775808; };", (1, 32), "signed 64-bit"),
        ("stream { id = -1; };", (1, 15), "non-negative"),
    ];
    for (rest, (line, column), needle) in cases {
        let e = err(&with_prelude(rest));
        assert_err_at(&e, rest_line(*line), *column, needle);
    }
}

#[test]
fn trace_block_errors() {
    let e = err("typealias integer { size = 8; } := u8;");
    assert_err_at(&e, 1, 1, "no trace block");
    let e = err("\ntrace { major = 1; minor = 8; };");
    assert_err_at(&e, 2, 1, "no byte_order");
    let e = err("trace { major = 1; minor = 8; byte_order = native; };");
    assert_err_at(&e, 1, 44, "native");
    let e = err("trace { major = 2; minor = 0; byte_order = le; };");
    assert_err_at(&e, 1, 1, "major version 2");
    let e = err("trace { minor = 8; byte_order = le; };");
    assert_err_at(&e, 1, 1, "major and minor");
    let e = err("trace { major = 1; minor = 8; byte_order = le; uuid = \"x\"; };");
    assert_err_at(&e, 1, 55, "UUID");
    let e = err("trace { major = 1; minor = 8; byte_order = le; packet.header := struct {\n  uint32_t magic; }; };");
    assert_err_at(&e, 2, 3, "unknown type `uint32_t`");
}

#[test]
fn trace_attributes() {
    let tc = ok("trace { major = 1; minor = 8; uuid = \"cf1c757c-93a6-6343-be56-fe367222623c\"; byte_order = network; };");
    assert_eq!(tc.byte_order, ByteOrder::Big);
    assert_eq!(tc.uuid.unwrap()[0], 0xcf);
    assert!(tc.streams.is_empty());
}

#[test]
fn huge_array_length_does_not_allocate() {
    let tc = ok(&event_with(
        "uint8_t uuid[4000000000]; uint8_t big[0xffffffffffffffff];",
    ));
    let FieldType::Array(a) = field(payload(&tc, 0, 0), "uuid") else {
        panic!()
    };
    assert_eq!(a.length, 4_000_000_000);
}

#[test]
fn exponential_alias_expansion_is_limited() {
    let mut text = with_prelude("typealias struct { uint8_t a; uint8_t b; } := t0;\n");
    for i in 1..40 {
        text.push_str(&format!(
            "typealias struct {{ t{} a; t{} b; }} := t{i};\n",
            i - 1,
            i - 1
        ));
    }
    text.push_str("event { name = \"e\"; fields := struct { t39 x; }; };");
    let e = err(&text);
    assert!(matches!(e, TsdlError::Limit { .. }), "{e}");
}

#[test]
fn deep_alias_chains_are_limited() {
    let mut text = with_prelude("typealias struct { uint8_t a; } := t0;\n");
    for i in 1..500 {
        text.push_str(&format!("typealias struct {{ t{} a; }} := t{i};\n", i - 1));
    }
    let e = err(&text);
    assert!(matches!(e, TsdlError::Limit { .. }), "{e}");
    assert!(e.to_string().contains("deeper"), "{e}");
}

#[test]
fn ctf2_text_is_not_tsdl() {
    let e = err("\u{1e}{\"type\": \"preamble\", \"version\": 2}");
    assert_eq!(e, TsdlError::Ctf2Unsupported);
    assert!(e.to_string().contains("CTF 2"));
}

#[test]
fn literals_and_comments() {
    let tc = ok(&with_prelude(
        "// line comment\n/* block\n comment */
         enum lit : integer { size = 16; signed = true; } { A = 0x10, B = 010, C = 7UL, D = -0x8, E = 'a' };
         event { name = e_ident; id = 0x2a; fields := struct { enum lit x; }; };",
    ));
    assert_eq!(tc.streams[&0].events[&42].name, "e_ident");
    let FieldType::Enum(e) = field(payload(&tc, 0, 42), "x") else {
        panic!()
    };
    let ranges: Vec<_> = e.mappings.iter().map(|m| m.ranges[0].0).collect();
    assert_eq!(ranges, [16, 8, 7, -8, 97]);
}

/// Items are resolved as they are parsed, yet a syntax error anywhere is
/// still the error reported, before a semantic error of an earlier item
/// (as when the whole text was parsed first).
#[test]
fn a_syntax_error_wins_over_an_earlier_semantic_error() {
    let text = with_prelude(
        "event { name = \"a\"; fields := struct { no_such_type x; }; };\n\
         event { name = \"b\"; id = 1; fields := struct { uint8_t y; } };\n",
    );
    let e = err(&text);
    assert!(e.to_string().contains("syntax error"), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(rest_line(2)), "{e}");
    // Without the syntax error, the semantic one.
    let text = with_prelude(
        "event { name = \"a\"; fields := struct { no_such_type x; }; };\n\
         event { name = \"b\"; id = 1; fields := struct { uint8_t y; }; };\n",
    );
    let e = err(&text);
    assert!(!e.to_string().contains("syntax error"), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(rest_line(1)), "{e}");
}

/// The trace block may come after the types that use `native`, and after
/// the event classes.
#[test]
fn the_trace_block_may_come_last() {
    let tc = ok("typealias integer { size = 16; align = 8; signed = false; byte_order = native; } := u16;\n\
         event { name = \"e\"; fields := struct { u16 x; }; };\n\
         trace { major = 1; minor = 8; byte_order = be; };\n");
    assert_eq!(
        int(field(payload(&tc, 0, 0), "x")).byte_order,
        ByteOrder::Big
    );
}

/// Event classes with the same payload structure share one copy of it.
#[test]
fn identical_payloads_are_shared() {
    let tc = ok(&with_prelude(
        "event { name = \"a\"; id = 0; fields := struct { uint8_t x; int y; }; };\n\
         event { name = \"b\"; id = 1; fields := struct { uint8_t x; int y; }; };\n\
         event { name = \"c\"; id = 2; fields := struct { uint8_t x; int z; }; };\n",
    ));
    let events = &tc.streams[&0].events;
    let p = |id: u64| events[&id].payload.clone().unwrap();
    assert!(std::sync::Arc::ptr_eq(&p(0), &p(1)));
    assert!(!std::sync::Arc::ptr_eq(&p(0), &p(2)));
    assert_eq!(events[&1].name, "b");
}
