//! No input makes the metadata reader panic, overflow the stack or hang:
//! arbitrary bytes, token soup, and mutations of real metadata.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use traceloom_tsdl::ir::ByteOrder;
use traceloom_tsdl::{metadata_text, parse_metadata, parse_tsdl, TsdlError};

/// LTTng-style metadata exercising most constructs; used when the shared
/// traces are absent and as one more mutation seed when they are present.
const SAMPLE: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
trace {
	major = 1; minor = 8;
	uuid = "a703e6fd-34fc-447f-b01c-d1f69cc8b6ed";
	byte_order = le;
	packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; };
};
env { domain = "ust"; tracer_major = 2; };
clock { name = "monotonic"; freq = 1000000000; offset = 1795314821615765212; absolute = TRUE; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;
struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct { integer { size = 27; map = clock.monotonic.value; } timestamp; } compact;
		struct { uint32_t id; uint64_clock_t timestamp; } extended;
	} v;
} align(8);
stream {
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct { uint64_clock_t timestamp_begin; unsigned long events_discarded; };
	event.context := struct { integer { size = 8; signed = 1; encoding = UTF8; } _procname[17]; };
};
event {
	name = "loomdemo:sample"; id = 1; stream_id = 0; loglevel = 13;
	fields := struct {
		enum : integer { size = 32; signed = 1; } { "IDLE" = 0, "ZOMBIE" = 10 ... 19, } _state;
		variant <_state> { string _IDLE; uint8_t _ZOMBIE; } _v;
		floating_point { exp_dig = 11; mant_dig = 53; align = 8; } _dval;
		uint32_t __vals_length;
		uint32_t _vals[ __vals_length ];
		uint32_t _abs[event.fields.__vals_length];
		uint8_t _grid[2][3];
	};
};
"#;

/// Seeds for mutation: the sample plus every real CTF 1.8 metadata text.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut v = vec![SAMPLE.to_string()];
        let root = traceloom_testdata::ctf_root();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "metadata") {
                    if let Ok(t) = traceloom_tsdl::read_metadata_text(&p) {
                        // Big kernel metadata would make each case slow.
                        if t.len() < 60_000 {
                            v.push(t);
                        }
                    }
                }
            }
        }
        v.sort();
        v
    })
}

#[test]
fn sample_is_valid() {
    let tc = parse_tsdl(SAMPLE).unwrap();
    assert_eq!(tc.streams[&0].events[&1].name, "loomdemo:sample");
}

/// Parses, and checks any error carries a position inside the text.
fn check(text: &str) {
    let lines = text.split('\n').count() as u32;
    if let Err(e) = parse_tsdl(text) {
        if let Some(p) = e.position() {
            assert!(
                p.line >= 1 && p.column >= 1 && p.line <= lines.max(1),
                "{e}"
            );
        } else {
            assert_eq!(e, TsdlError::Ctf2Unsupported);
        }
    }
}

/// Vocabulary for token soup.
const WORDS: &[&str] = &[
    "typealias",
    "typedef",
    "integer",
    "floating_point",
    "string",
    "struct",
    "variant",
    "enum",
    "trace",
    "stream",
    "event",
    "env",
    "clock",
    "callsite",
    "align",
    "size",
    "signed",
    "byte_order",
    "native",
    "be",
    "le",
    "map",
    "clock.c.value",
    "base",
    "encoding",
    "UTF8",
    "major",
    "minor",
    "id",
    "name",
    "fields",
    "context",
    "packet.header",
    "event.header",
    "event.fields.x",
    "uint8_t",
    "unsigned",
    "long",
    "int",
    "x",
    "y",
    "len",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ";",
    ",",
    ":",
    ":=",
    "=",
    ".",
    "...",
    "<",
    ">",
    "-",
    "0",
    "1",
    "8",
    "32",
    "0x10",
    "4000000000",
    "18446744073709551615",
    "\"s\"",
    "/* c */",
    "// c\n",
    "'a'",
];

fn mutate(seed: &str, ops: &[(usize, u8, usize)]) -> String {
    let mut b: Vec<char> = seed.chars().collect();
    for &(at, op, arg) in ops {
        if b.is_empty() {
            b.push('x');
        }
        let at = at % b.len();
        match op % 5 {
            0 => {
                let end = (at + arg % 64).min(b.len());
                b.drain(at..end);
            }
            1 => {
                let w = WORDS[arg % WORDS.len()];
                for (i, c) in format!(" {w} ").chars().enumerate() {
                    b.insert(at + i, c);
                }
            }
            2 => b[at] = char::from(b" {};[]<>=:.,0a\"/*-"[arg % 18]),
            3 => {
                let end = (at + arg % 200).min(b.len());
                let dup: Vec<char> = b[at..end].to_vec();
                b.splice(at..at, dup);
            }
            _ => {
                let end = (at + 1 + arg % 32).min(b.len());
                b[at..end].reverse();
            }
        }
    }
    b.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_metadata(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,512}") {
        check(&text);
    }

    #[test]
    fn token_soup_never_panics(words in proptest::collection::vec(0..WORDS.len(), 0..200)) {
        let text: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
        check(&text.join(" "));
    }

    #[test]
    fn mutated_real_metadata_never_panics(
        seed in any::<prop::sample::Index>(),
        ops in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..8),
    ) {
        let seeds = seeds();
        let text = mutate(&seeds[seed.index(seeds.len())], &ops);
        let start = Instant::now();
        check(&text);
        prop_assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn mutated_packets_never_panic(
        cuts in proptest::collection::vec(0usize..4096, 1..6),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        big in any::<bool>(),
    ) {
        let order = if big { ByteOrder::Big } else { ByteOrder::Little };
        let mut bytes = Vec::new();
        let mut rest = SAMPLE.as_bytes();
        for c in cuts {
            let (a, b) = rest.split_at(c.min(rest.len()));
            bytes.extend(packet(a, c % 17, order));
            rest = b;
        }
        bytes.extend(packet(rest, 0, order));
        // Unmodified packets give back the text exactly.
        prop_assert_eq!(metadata_text(&bytes).unwrap(), SAMPLE);
        for (at, x) in flips {
            let i = at % bytes.len();
            bytes[i] ^= x;
        }
        let _ = parse_metadata(&bytes);
    }
}

fn packet(payload: &[u8], padding: usize, order: ByteOrder) -> Vec<u8> {
    let u32b = |v: u32| match order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    let content = 37 + payload.len();
    let mut p = Vec::new();
    p.extend_from_slice(&u32b(0x75D1_1D57));
    p.extend_from_slice(&[9; 16]);
    p.extend_from_slice(&u32b(0));
    p.extend_from_slice(&u32b((content * 8) as u32));
    p.extend_from_slice(&u32b(((content + padding) * 8) as u32));
    p.extend_from_slice(&[0, 0, 0, 1, 8]);
    p.extend_from_slice(payload);
    p.extend(std::iter::repeat_n(0u8, padding));
    p
}

#[test]
fn pathological_inputs_are_refused_quickly() {
    let start = Instant::now();
    // Deep nesting of every kind.
    for (open, n) in [
        ("struct { ", 200_000),
        ("variant <x> { ", 200_000),
        ("enum : ", 200_000),
        ("{", 200_000),
        ("[", 200_000),
    ] {
        let text = format!(
            "trace {{ major = 1; minor = 8; byte_order = le; }};\n{}",
            open.repeat(n)
        );
        assert!(parse_tsdl(&text).is_err());
    }
    // A field with thousands of dimensions nests too deep once resolved.
    let text = format!(
        "trace {{ major = 1; minor = 8; byte_order = le; }};\n\
         typealias integer {{ size = 8; }} := u8;\n\
         event {{ name = \"e\"; fields := struct {{ u8 x{}; }}; }};",
        "[1]".repeat(100_000)
    );
    assert!(matches!(parse_tsdl(&text), Err(TsdlError::Limit { .. })));
    // Many references into a huge structure stay bounded in time.
    let mut text = String::from(
        "trace { major = 1; minor = 8; byte_order = le; };\n\
         typealias integer { size = 8; } := u8;\n\
         stream { event.context := struct {",
    );
    for i in 0..20_000 {
        text.push_str(&format!(" u8 f{i};"));
    }
    text.push_str(" }; };\nevent { name = \"e\"; fields := struct {");
    for i in 0..20_000 {
        text.push_str(&format!(" u8 s{i}[f0];"));
    }
    text.push_str(" }; };");
    assert!(parse_tsdl(&text).is_ok());
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}
