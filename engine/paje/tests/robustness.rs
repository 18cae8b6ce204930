//! Random and mutated input never makes the reader, the simulator or the
//! dump panic.

use proptest::prelude::*;
use traceloom_paje::{LoadOptions, PjDumpOptions, Trace};

/// A small valid trace to mutate: the bundled `states.trace`.
fn seed() -> Vec<u8> {
    let p = traceloom_testdata::paje("states.trace");
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn run(bytes: Vec<u8>) {
    for opts in [LoadOptions::default(), LoadOptions::pj_dump()] {
        let t = Trace::from_bytes("fuzz.trace", bytes.clone(), &opts);
        let mut out = Vec::new();
        t.write_pj_dump(&PjDumpOptions::default(), &mut out)
            .unwrap();
        assert!(t.diagnostics.items().len() <= 1000);
    }
}

/// Words that matter to the parser, to make random lines meaningful.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("%EventDef".to_string()),
        Just("%EndEventDef".to_string()),
        Just("%".to_string()),
        Just("\"".to_string()),
        Just("#".to_string()),
        Just("PajePushState".to_string()),
        Just("PajeStartLink".to_string()),
        Just("Time".to_string()),
        Just("date".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("nan".to_string()),
        Just("p1".to_string()),
        "[0-9]{1,3}",
        "[a-zA-Z\"#%]{0,6}",
        "[0-9.eE+-]{1,8}",
    ]
}

fn mutate(base: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut v = base.to_vec();
    for &(pos, kind, byte) in edits {
        if v.is_empty() {
            v.push(byte);
            continue;
        }
        let p = pos % v.len();
        match kind % 4 {
            0 => v[p] = byte,
            1 => {
                v.remove(p);
            }
            2 => v.insert(p, byte),
            _ => {
                // Duplicate a line-sized chunk to shuffle structure.
                let end = (p + 40).min(v.len());
                let chunk = v[p..end].to_vec();
                let at = (p * 7) % v.len();
                v.splice(at..at, chunk);
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        run(bytes);
    }

    #[test]
    fn random_token_lines_never_panic(lines in proptest::collection::vec(proptest::collection::vec(token(), 0..8), 0..60)) {
        let text: Vec<String> = lines.iter().map(|l| l.join(" ")).collect();
        run(text.join("\n").into_bytes());
    }

    #[test]
    fn mutated_real_trace_never_panics(edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..30)) {
        run(mutate(&seed(), &edits));
    }

    #[test]
    fn mutated_header_keeps_later_lines_readable(cut in 0usize..3000) {
        // Dropping any one byte of a valid trace still yields a result.
        let mut v = seed();
        let p = cut % v.len();
        v.remove(p);
        run(v);
    }
}

#[test]
fn deep_container_nesting_does_not_overflow_the_stack() {
    let mut s = String::from(
        "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
         %EventDef PajeCreateContainer 1\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n",
    );
    let depth = 20_000;
    let mut parent_type = "0".to_string();
    for i in 0..depth {
        s.push_str(&format!("0 T{i} {parent_type} T{i}\n"));
        parent_type = format!("T{i}");
    }
    let mut parent = "0".to_string();
    for i in 0..depth {
        s.push_str(&format!("1 {i} c{i} T{i} {parent} c{i}\n"));
        parent = format!("c{i}");
    }
    let t = Trace::from_bytes("deep.trace", s.into_bytes(), &LoadOptions::default());
    assert!(t.diagnostics.is_empty());
    let mut out = Vec::new();
    t.write_pj_dump(&PjDumpOptions::default(), &mut out)
        .unwrap();
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), depth + 1);
}
