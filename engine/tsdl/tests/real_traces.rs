//! Parses the metadata of every bundled real trace (see
//! `traces/README.md`) and checks what it must contain.

use std::path::{Path, PathBuf};

use traceloom_tsdl::ir::{ByteOrder, FieldType, Scope, TraceClass};
use traceloom_tsdl::{packetized_byte_order, read_metadata_file, read_metadata_text};

fn traces_root() -> PathBuf {
    traceloom_testdata::ctf_root()
}

fn metadata_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            metadata_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "metadata") {
            out.push(p);
        }
    }
}

fn load(rel: &str) -> TraceClass {
    let p = traceloom_testdata::ctf(rel).join("metadata");
    read_metadata_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_trace_parses_ctf1_and_ctf2() {
    let root = traces_root();
    let mut files = Vec::new();
    metadata_files(&root, &mut files);
    assert!(
        files.len() >= 20,
        "found only {} metadata files",
        files.len()
    );
    let (mut parsed, mut parsed2) = (0, 0);
    for f in &files {
        // CTF 2 metadata is a JSON text sequence: its first byte is 0x1E.
        let is_ctf2 = std::fs::read(f).unwrap().first() == Some(&0x1E);
        match read_metadata_file(f) {
            Ok(tc) if is_ctf2 => {
                assert_eq!((tc.major, tc.minor), (2, 0), "{}", f.display());
                assert!(!tc.streams.is_empty(), "{}: no stream class", f.display());
                // Every event record class fragment became an event class.
                let text = read_metadata_text(f).unwrap();
                let fragments = text.matches("\"event-record-class\"").count();
                let events: usize = tc.streams.values().map(|s| s.events.len()).sum();
                assert_eq!(events, fragments, "{}", f.display());
                parsed2 += 1;
            }
            Ok(tc) => {
                assert_eq!((tc.major, tc.minor), (1, 8), "{}", f.display());
                assert!(!tc.streams.is_empty(), "{}: no stream class", f.display());
                // Every `event` block became an event class.
                let text = read_metadata_text(f).unwrap();
                let blocks = text.lines().filter(|l| l.starts_with("event {")).count();
                let events: usize = tc.streams.values().map(|s| s.events.len()).sum();
                assert!(events > 0, "{}: no event class", f.display());
                assert_eq!(events, blocks, "{}", f.display());
                parsed += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(parsed >= 15, "parsed only {parsed}");
    // The five Trace Compass ones, the three of ctf2/ust_pid and
    // ctf2/hello-lost.
    assert_eq!(parsed2, 9, "CTF 2 traces parsed");
}

fn field<'a>(ty: &'a FieldType, name: &str) -> &'a FieldType {
    let s = ty
        .as_struct()
        .unwrap_or_else(|| panic!("not a struct looking for {name}"));
    &s.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .ty
}

fn index_of(ty: &FieldType, name: &str) -> usize {
    ty.as_struct()
        .unwrap()
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
}

/// Checks the LTTng event header: `enum id` then `variant <id> v` with
/// `compact`/`extended` options, the extended one holding a 32-bit id.
fn check_lttng_header(header: &FieldType, extended_id: i128) {
    let FieldType::Enum(id) = field(header, "id") else {
        panic!("id is not an enum")
    };
    assert_eq!(id.labels_for(extended_id).collect::<Vec<_>>(), ["extended"]);
    assert_eq!(id.labels_for(0).collect::<Vec<_>>(), ["compact"]);
    let FieldType::Variant(v) = field(header, "v") else {
        panic!("v is not a variant")
    };
    assert_eq!(v.tag_name, "id");
    assert_eq!(v.tag.scope, Scope::EventHeader);
    assert_eq!(v.tag.path, vec![0]);
    let names: Vec<_> = v.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["compact", "extended"]);
    let FieldType::Integer(ext_id) = field(&v.options[1].ty, "id") else {
        panic!("extended.id is not an integer")
    };
    assert_eq!(ext_id.size, 32);
    let FieldType::Integer(ts) = field(&v.options[1].ty, "timestamp") else {
        panic!("extended.timestamp is not an integer")
    };
    assert_eq!(
        (ts.size, ts.mapped_clock.as_deref()),
        (64, Some("monotonic"))
    );
}

#[test]
fn bug446190_kernel_trace() {
    let tc = load("tracecompass/bug446190");
    assert_eq!(tc.byte_order, ByteOrder::Little);
    let s = &tc.streams[&0];
    assert_eq!(s.events.len(), 541);
    assert_eq!(s.events[&64].name, "sched_switch");
    assert_eq!(s.events[&237].name, "exit_syscall");
    assert!(s.events.values().all(|e| e.stream_id == 0));
    check_lttng_header(s.event_header.as_ref().unwrap(), 65535);
    let pc = s.packet_context.as_ref().unwrap();
    let FieldType::Integer(tb) = field(pc, "timestamp_begin") else {
        panic!()
    };
    assert_eq!(tb.mapped_clock.as_deref(), Some("monotonic"));
    assert_eq!(tc.clocks.len(), 1);
    assert!(tc.env.iter().any(|(k, _)| k == "domain"));
}

#[test]
fn flipping_endianness_is_big_endian_and_packetized() {
    let root = traces_root();
    let p = root.join("tracecompass/flipping-endianness/metadata");
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(packetized_byte_order(&bytes), Some(ByteOrder::Big));
    let tc = read_metadata_file(&p).unwrap();
    assert_eq!(tc.byte_order, ByteOrder::Big);
    let s = &tc.streams[&0];
    check_lttng_header(s.event_header.as_ref().unwrap(), 31);
    // `unsigned long` is 32 bits here; every integer took the trace's order.
    let FieldType::Integer(ed) = field(s.packet_context.as_ref().unwrap(), "events_discarded")
    else {
        panic!()
    };
    assert_eq!((ed.size, ed.byte_order), (32, ByteOrder::Big));
    let ph = tc.packet_header.as_ref().unwrap();
    let FieldType::Integer(magic) = field(ph, "magic") else {
        panic!()
    };
    assert_eq!(magic.byte_order, ByteOrder::Big);
}

#[test]
fn lttng_ust_trace_with_typed_payloads() {
    let tc = load("lttng-ust/ust_uid_blocking/ust/uid/0/64-bit");
    assert_eq!(tc.byte_order, ByteOrder::Little);
    let s = &tc.streams[&0];
    check_lttng_header(s.event_header.as_ref().unwrap(), 65535);
    let ec = s.event_context.as_ref().unwrap();
    assert_eq!(index_of(ec, "_vtid"), 1);
    let FieldType::Array(procname) = field(ec, "_procname") else {
        panic!()
    };
    assert_eq!(procname.length, 17);

    let sample = s
        .events
        .values()
        .find(|e| e.name == "loomdemo:sample")
        .unwrap();
    assert_eq!(sample.loglevel, Some(13));
    let p = sample.payload.as_ref().unwrap();
    let FieldType::Sequence(vals) = field(p, "_vals") else {
        panic!()
    };
    assert_eq!(vals.length_name, "__vals_length");
    assert_eq!(vals.length.scope, Scope::EventPayload);
    assert_eq!(vals.length.path, vec![index_of(p, "__vals_length")]);
    let FieldType::Integer(net) = field(p, "_net32") else {
        panic!()
    };
    assert_eq!(net.byte_order, ByteOrder::Big);
    let FieldType::Float(d) = field(p, "_dval") else {
        panic!()
    };
    assert_eq!(
        (d.exp_dig, d.mant_dig, d.byte_order),
        (11, 53, ByteOrder::Little)
    );
    let FieldType::Array(tag) = field(p, "_tag") else {
        panic!()
    };
    let FieldType::Integer(ch) = &*tag.element else {
        panic!()
    };
    assert_eq!(ch.encoding, traceloom_tsdl::ir::Encoding::Utf8);

    let state = s
        .events
        .values()
        .find(|e| e.name == "loomdemo:state_change")
        .unwrap();
    let FieldType::Enum(e) = field(state.payload.as_ref().unwrap(), "_old_state") else {
        panic!()
    };
    assert_eq!(e.labels_for(15).collect::<Vec<_>>(), ["ZOMBIE_RANGE"]);
    assert_eq!(e.labels_for(2).collect::<Vec<_>>(), ["BLOCKED"]);
    assert_eq!(e.labels_for(5).count(), 0);
}

#[test]
fn funky_trace_nested_variant_and_sequence_paths() {
    let tc = load("tracecompass/funky_trace");
    let e = &tc.streams[&0].events[&2];
    assert_eq!(e.name, "Complex Test Event");
    let p = e.payload.as_ref().unwrap();
    let cs = field(p, "complex_structure");
    let FieldType::Variant(v) = field(cs, "variant_value") else {
        panic!()
    };
    assert_eq!(v.tag.scope, Scope::EventPayload);
    assert_eq!(v.tag.path, vec![2, 0]);
    let FieldType::Sequence(seq) = field(field(cs, "inner_structure"), "a_sequence") else {
        panic!()
    };
    assert_eq!(seq.length.path, vec![2, 3, 0]);
    let FieldType::Integer(u35) = field(p, "uint_35") else {
        panic!()
    };
    assert_eq!((u35.size, u35.align), (35, 1));
    assert_eq!(p.align(), 32);
    let c = &tc.clocks[0];
    assert!(c.absolute);
    assert_eq!(
        (c.offset_s, c.offset, c.precision),
        (1351530929945824323, 1234567, 10)
    );
}

#[test]
fn ctfwriter_custom_headers_and_escaped_labels() {
    let tc = load("tracecompass/ctfwriter_JF8nq3");
    assert_eq!(tc.byte_order, ByteOrder::Big);
    assert!(tc.streams.contains_key(&0) && tc.streams.contains_key(&123));
    let e = &tc.streams[&123].events[&11];
    assert_eq!(e.name, "nu name");
    assert_eq!(e.loglevel, Some(5));
    assert_eq!(e.emf_uri.as_deref(), Some("http://kernel.org/"));
    let simple = &tc.streams[&123].events[&13];
    let FieldType::Enum(en) = field(simple.payload.as_ref().unwrap(), "enum_field") else {
        panic!()
    };
    assert_eq!(en.labels_for(-20000).collect::<Vec<_>>(), ["another entry"]);
    assert_eq!(
        en.labels_for(3).collect::<Vec<_>>(),
        ["\tanother 'escaping'\n test\""]
    );
    assert!(simple.context.is_some());
    let FieldType::Integer(custom) = field(
        tc.packet_header.as_ref().unwrap(),
        "custom_trace_packet_header_field",
    ) else {
        panic!()
    };
    assert_eq!((custom.size, custom.align), (22, 1));
}

#[test]
fn barectf_native_byte_order_resolves_to_trace_order() {
    let tc = load("tracecompass/bandwidth_issue");
    assert_eq!(tc.byte_order, ByteOrder::Little);
    fn all_little(t: &FieldType) -> bool {
        match t {
            FieldType::Integer(i) => i.byte_order == ByteOrder::Little,
            FieldType::Float(f) => f.byte_order == ByteOrder::Little,
            FieldType::Enum(e) => e.container.byte_order == ByteOrder::Little,
            FieldType::Struct(s) => s.fields.iter().all(|f| all_little(&f.ty)),
            FieldType::Variant(v) => v.options.iter().all(|f| all_little(&f.ty)),
            FieldType::Array(a) => all_little(&a.element),
            FieldType::Sequence(s) => all_little(&s.element),
            FieldType::String(_) => true,
        }
    }
    assert!(all_little(tc.packet_header.as_ref().unwrap()));
    for s in tc.streams.values() {
        for e in s.events.values() {
            if let Some(p) = &e.payload {
                assert!(all_little(p), "{}", e.name);
            }
        }
    }
    assert_eq!(tc.clocks[0].name, "default");
    assert_eq!(tc.clocks[0].offset_s, 1646230909);
}
