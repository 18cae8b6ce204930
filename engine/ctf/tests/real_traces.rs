//! The bundled real traces: event counts and order against babeltrace2 2.0.4
//! (the reference reader), decoded values checked by hand against its
//! output, and damaged copies.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{copy_tree, real_traces};
use traceloom_ctf::{Event, FieldRef, FieldValue, Message, Traceset};
use traceloom_tsdl::ir::Scope;

/// Traces babeltrace2 reads completely, with its event counts.
const COMPLETE: &[(&str, u64)] = &[
    ("tracecompass/bug446190", 31_556),
    ("tracecompass/flipping-endianness", 14_310),
    ("tracecompass/context-switches-ust", 3_934),
    ("tracecompass/glxgears-cyg-profile", 4_977),
    ("tracecompass/perf-taskset2", 1_500),
    ("tracecompass/bandwidth_issue", 1_680),
    ("tracecompass/mpi_allreduce", 891),
    ("tracecompass/ctf-sequence-empty", 10),
    ("tracecompass/debuginfo-test-app2", 41),
    ("lttng-ust/ust_uid_blocking", 28_274),
    ("lttng-ust/ust_uid_discard", 28_274),
    ("lttng-ust/ust_pid", 45_450),
    ("lttng-ust/ust_overwrite", 26_250),
];

/// Traces where babeltrace2's muxer stops early ("time went backwards",
/// caused by its packet-end messages): the events it prints must be our
/// first ones, in the same order. Then our full counts.
const PARTIAL: &[(&str, usize, u64)] = &[
    ("tracecompass/hello-lost", 38, 32_300),
    ("tracecompass/synctraces", 11_682, 196_500),
];

/// `seconds.nanoseconds name cpu_id` per event, our way.
fn our_lines(path: &Path) -> (Vec<String>, BTreeMap<String, u64>) {
    let ts = Traceset::open(&[path.to_path_buf()]).unwrap();
    let mut lines = Vec::new();
    let mut names = BTreeMap::new();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Message::Event(e) = m.unwrap() {
            let ns = e.timestamp_ns().unwrap();
            lines.push(format!(
                "{}.{:09} {} {}",
                ns.div_euclid(1_000_000_000),
                ns.rem_euclid(1_000_000_000),
                e.name(),
                e.cpu_id().map_or("-".to_string(), |c| c.to_string())
            ));
            *names.entry(e.name().to_string()).or_insert(0) += 1;
        }
    }
    (lines, names)
}

/// The same from `babeltrace2 --clock-seconds` text.
fn babeltrace_lines(path: &Path) -> Vec<String> {
    let out = Command::new("babeltrace2")
        .arg("--clock-seconds")
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('[')?;
            let (ts, rest) = rest.split_once("] (")?;
            let (_, rest) = rest.split_once(") ")?;
            let name = rest
                .split(' ')
                .take(3)
                .find(|t| t.ends_with(':'))?
                .trim_end_matches(':');
            let cpu = l
                .split_once("cpu_id = ")
                .map(|(_, r)| r.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("-"))
                .unwrap_or("-");
            Some(format!("{ts} {name} {cpu}"))
        })
        .collect()
}

#[test]
fn counts_and_order_match_babeltrace2() {
    let root = real_traces();
    traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
    for (rel, count) in COMPLETE {
        let path = root.join(rel);
        let (ours, names) = our_lines(&path);
        assert_eq!(ours.len() as u64, *count, "{rel}");
        assert_eq!(names.values().sum::<u64>(), *count);
        let theirs = babeltrace_lines(&path);
        let mut their_names = BTreeMap::new();
        for l in &theirs {
            let n = l.split(' ').nth(1).unwrap().to_string();
            *their_names.entry(n).or_insert(0u64) += 1;
        }
        assert_eq!(names, their_names, "{rel}: per-event-name counts");
        if let Some(i) = (0..ours.len()).find(|&i| ours.get(i) != theirs.get(i)) {
            panic!(
                "{rel}: order differs at event {i}: ours {:?} babeltrace2 {:?}",
                ours[i],
                theirs.get(i)
            );
        }
    }
    for (rel, bt_prefix, count) in PARTIAL {
        let path = root.join(rel);
        let (ours, _) = our_lines(&path);
        assert_eq!(ours.len() as u64, *count, "{rel}");
        let theirs = babeltrace_lines(&path);
        assert_eq!(theirs.len(), *bt_prefix, "{rel}");
        assert_eq!(&ours[..theirs.len()], &theirs[..], "{rel}");
    }
}

/// The first event of `path` satisfying `pred`, handed to `check`.
fn with_event(path: &Path, pred: impl Fn(&Event<'_>) -> bool, check: impl FnOnce(&Event<'_>)) {
    let ts = Traceset::open(&[path.to_path_buf()]).unwrap();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Message::Event(e) = m.unwrap() {
            if pred(&e) {
                check(&e);
                return;
            }
        }
    }
    panic!("no matching event in {}", path.display());
}

fn payload<'a>(e: &Event<'a>) -> FieldRef<'a> {
    e.scope(Scope::EventPayload).unwrap()
}

fn val(f: &FieldRef<'_>, name: &str) -> FieldValue {
    f.field(name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .value()
        .unwrap()
}

fn text(f: &FieldRef<'_>, name: &str) -> String {
    String::from_utf8_lossy(f.field(name).unwrap().str_bytes().unwrap()).into_owned()
}

fn ints(f: &FieldRef<'_>, name: &str) -> Vec<i64> {
    f.field(name)
        .unwrap()
        .elements()
        .map(|e| e.value().unwrap().as_i64().unwrap())
        .collect()
}

fn ns(e: &Event<'_>) -> String {
    let ns = e.timestamp_ns().unwrap();
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

#[test]
fn values_match_babeltrace2_output() {
    let root = real_traces();

    // [1376592664.828559410] loki ust_tests_hello:tptest: { cpu_id = 2 },
    // { intfield = 0, intfield2 = 0x0, longfield = 0, netintfield = 0,
    //   netintfieldhex = 0x0, arrfield1 = [1, 2, 3], arrfield2 = "test",
    //   _seqfield1_length = 4, seqfield1 = [116, 101, 115, 116],
    //   _seqfield2_length = 4, seqfield2 = "test", stringfield = "test",
    //   floatfield = 2222, doublefield = 2, boolfield = 1 }
    with_event(
        &root.join("tracecompass/hello-lost"),
        |_| true,
        |e| {
            assert_eq!(ns(e), "1376592664.828559410");
            assert_eq!(e.name(), "ust_tests_hello:tptest");
            assert_eq!(e.cpu_id(), Some(2));
            assert_eq!(e.trace().hostname(), Some("loki"));
            let p = payload(e);
            assert_eq!(val(&p, "intfield").as_i64(), Some(0));
            assert_eq!(ints(&p, "arrfield1"), [1, 2, 3]);
            assert_eq!(text(&p, "arrfield2"), "test");
            assert_eq!(val(&p, "_seqfield1_length").as_u64(), Some(4));
            assert_eq!(ints(&p, "seqfield1"), [116, 101, 115, 116]);
            assert_eq!(text(&p, "seqfield2"), "test");
            assert_eq!(text(&p, "stringfield"), "test");
            assert_eq!(val(&p, "floatfield"), FieldValue::Float(2222.0));
            assert_eq!(val(&p, "doublefield"), FieldValue::Float(2.0));
            assert_eq!(val(&p, "boolfield").as_i64(), Some(1));
        },
    );

    // [1795316121.001873129] vm loomdemo:sample: { cpu_id = 1 },
    // { vpid = 3497, vtid = 3501, procname = "loomdemo" },
    // { seq = 4100, seq_hex = 0x1004, neg = -4100, net32 = 68157440,
    //   dval = 2050, fval = 1366.67, name = "alpha", _vals_length = 5,
    //   vals = [4100, 4101, 4102, 4103, 4104], arr = [-1, 2, -3, 4],
    //   tag = "alph", _seqtext_length = 3, seqtext = "alp" }
    let uid = root.join("lttng-ust/ust_uid_blocking");
    with_event(
        &uid,
        |e| e.name() == "loomdemo:sample" && val(&payload(e), "seq").as_u64() == Some(4100),
        |e| {
            assert_eq!(ns(e), "1795316121.001873129");
            assert_eq!(e.cpu_id(), Some(1));
            let ctx = e.scope(Scope::StreamEventContext).unwrap();
            assert_eq!(val(&ctx, "vpid").as_i64(), Some(3497));
            assert_eq!(val(&ctx, "vtid").as_i64(), Some(3501));
            assert_eq!(text(&ctx, "procname"), "loomdemo");
            let p = payload(e);
            assert_eq!(val(&p, "seq_hex").as_u64(), Some(0x1004));
            assert_eq!(val(&p, "neg"), FieldValue::SInt(-4100));
            assert_eq!(val(&p, "net32").as_u64(), Some(68_157_440));
            assert_eq!(val(&p, "dval"), FieldValue::Float(2050.0));
            let FieldValue::Float(f) = val(&p, "fval") else {
                panic!()
            };
            assert_eq!(format!("{f:.2}"), "1366.67");
            assert_eq!(text(&p, "name"), "alpha");
            assert_eq!(ints(&p, "vals"), [4100, 4101, 4102, 4103, 4104]);
            assert_eq!(ints(&p, "arr"), [-1, 2, -3, 4]);
            assert_eq!(text(&p, "tag"), "alph");
            assert_eq!(text(&p, "seqtext"), "alp");
        },
    );

    // [1795316121.000715378] vm loomdemo:state_change: { cpu_id = 0 }, ...
    // { worker = 0, old_state = ( "IDLE" : container = 0 ),
    //   new_state = ( "ZOMBIE_RANGE" : container = 12 ) }
    with_event(
        &uid,
        |e| {
            e.name() == "loomdemo:state_change"
                && val(&payload(e), "new_state").as_i64() == Some(12)
        },
        |e| {
            assert_eq!(ns(e), "1795316121.000715378");
            let p = payload(e);
            let labels: Vec<&str> = p.field("new_state").unwrap().enum_labels().collect();
            assert_eq!(labels, ["ZOMBIE_RANGE"]);
            let labels: Vec<&str> = p.field("old_state").unwrap().enum_labels().collect();
            assert_eq!(labels, ["IDLE"]);
        },
    );

    // [1417383672.251352767] qemu0 sched_switch: { cpu_id = 0 },
    // { prev_comm = "lttng-sessiond", prev_tid = 211, prev_prio = 20,
    //   prev_state = 1024, next_comm = "lttng-consumerd", next_tid = 232,
    //   next_prio = 20 }  (packetized metadata, 32-bit longs)
    with_event(
        &root.join("tracecompass/flipping-endianness"),
        |e| e.name() == "sched_switch",
        |e| {
            assert_eq!(ns(e), "1417383672.251352767");
            let p = payload(e);
            assert_eq!(text(&p, "prev_comm"), "lttng-sessiond");
            assert_eq!(val(&p, "prev_tid").as_i64(), Some(211));
            assert_eq!(val(&p, "prev_state").as_i64(), Some(1024));
            assert_eq!(text(&p, "next_comm"), "lttng-consumerd");
            assert_eq!(val(&p, "next_tid").as_i64(), Some(232));
        },
    );

    // [1412670961.211290339] lager rcu_utilization: { cpu_id = 2 },
    // { s = "Start context switch" }
    with_event(
        &root.join("tracecompass/bug446190"),
        |e| e.name() == "rcu_utilization" && e.cpu_id() == Some(2),
        |e| {
            assert_eq!(ns(e), "1412670961.211290339");
            assert_eq!(text(&payload(e), "s"), "Start context switch");
        },
    );
}

/// Traces babeltrace2 refuses (clock offsets it cannot convert): we read
/// them, without timestamps in ns.
#[test]
fn traces_babeltrace2_refuses_are_read_without_errors() {
    let root = real_traces();
    for (rel, count) in [
        ("tracecompass/funky_trace", 100_002u64),
        ("tracecompass/ctfwriter_JF8nq3", 100_003),
    ] {
        let (n, errs) = count_events(&root.join(rel));
        assert_eq!((n, errs), (count, vec![]), "{rel}");
    }
    // A sequence whose length is in `stream.event.header` (13-bit fields,
    // big-endian, unaligned): `some_sequence = [0, 1]`.
    let ts = Traceset::open(&[root.join("tracecompass/ctfwriter_JF8nq3")]).unwrap();
    let mut c = ts.messages();
    let mut found = false;
    while let Some(m) = c.next() {
        if let Message::Event(e) = m.unwrap() {
            if e.name() == "sequence_event" {
                let hdr = e.scope(Scope::EventHeader).unwrap();
                assert_eq!(val(&hdr, "seq_len").as_u64(), Some(2));
                assert_eq!(ints(&payload(&e), "some_sequence"), [0, 1]);
                assert_eq!(e.timestamp_cycles(), Some(100_043));
                assert_eq!(e.timestamp_ns(), None);
                found = true;
            }
        }
    }
    assert!(found);
}

#[test]
fn discovery_of_lttng_layouts() {
    let root = real_traces();
    // Three per-PID traces under one tree, found in name order.
    let ts = Traceset::open(&[root.join("lttng-ust/ust_pid")]).unwrap();
    let names: Vec<String> = ts.traces().map(|t| t.name.clone().unwrap()).collect();
    assert_eq!(names.len(), 3);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    assert!(names[0].starts_with("vm/ust/pid/loomdemo-"), "{names:?}");
    // The index directory is not a stream.
    assert!(ts.streams().all(|s| s
        .files
        .iter()
        .all(|f| !f.to_string_lossy().contains("/index/"))));
    // Two traces given at once, deduplicated.
    let p = root.join("tracecompass/synctraces/scp_src");
    let ts =
        Traceset::open(&[p.clone(), p, root.join("tracecompass/synctraces/scp_dest")]).unwrap();
    assert_eq!(ts.traces().len(), 2);
}

/// Events per (file, packet offset), to predict what survives damage.
fn events_by_packet(path: &Path) -> Vec<(PathBuf, u64, u64, u64)> {
    let ts = Traceset::open(&[path.to_path_buf()]).unwrap();
    let mut counts: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        if let Message::Event(e) = m.unwrap() {
            *counts
                .entry((e.stream().index, e.position().packet))
                .or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for s in ts.streams() {
        for (i, p) in ts.packets(s.index).iter().enumerate() {
            let n = counts.get(&(s.index, i)).copied().unwrap_or(0);
            out.push((s.files[p.file as usize].clone(), p.offset, p.size, n));
        }
    }
    out
}

fn count_events(path: &Path) -> (u64, Vec<String>) {
    let ts = Traceset::open(&[path.to_path_buf()]).unwrap();
    let mut n = 0;
    let mut errs = Vec::new();
    let mut c = ts.messages();
    while let Some(m) = c.next() {
        match m {
            Ok(Message::Event(_)) => n += 1,
            Ok(_) => {}
            Err(e) => errs.push(e.to_string()),
        }
    }
    (n, errs)
}

#[test]
fn truncated_real_streams_keep_their_earlier_packets() {
    let root = real_traces();
    for rel in ["lttng-ust/ust_uid_blocking", "tracecompass/bug446190"] {
        let t = tempfile::tempdir().unwrap();
        let copy = t.path().join("trace");
        copy_tree(&root.join(rel), &copy);
        let packets = events_by_packet(&copy);
        let total: u64 = packets.iter().map(|p| p.3).sum();
        // Damage the first stream file at offsets spread over it (with its
        // LTTng index, when any, left as is: it no longer matches).
        let file = packets[0].0.clone();
        let orig = std::fs::read(&file).unwrap();
        let in_file: Vec<_> = packets.iter().filter(|p| p.0 == file).collect();
        let step = (orig.len() / 23).max(1);
        for cut in (1..orig.len()).step_by(step).chain([orig.len() - 1]) {
            std::fs::write(&file, &orig[..cut]).unwrap();
            let (n, errs) = count_events(&copy);
            let lost: u64 = in_file
                .iter()
                .filter(|p| p.1 + p.2 > cut as u64)
                .map(|p| p.3)
                .sum();
            assert_eq!(n, total - lost, "{rel} cut at {cut}: {errs:?}");
            let boundary = in_file.iter().any(|p| p.1 == cut as u64);
            assert_eq!(
                errs.len(),
                usize::from(!boundary),
                "{rel} cut at {cut}: {errs:?}"
            );
            if let Some(e) = errs.first() {
                assert!(
                    e.contains(&file.display().to_string()) && e.contains("byte offset"),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn corrupted_real_packets_never_panic() {
    let root = real_traces();
    let t = tempfile::tempdir().unwrap();
    let copy = t.path().join("trace");
    copy_tree(&root.join("tracecompass/hello-lost"), &copy);
    let file = copy.join("channel1_2");
    let orig = std::fs::read(&file).unwrap();
    let packets = events_by_packet(&copy);
    let total: u64 = packets.iter().map(|p| p.3).sum();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Packet headers and contexts (first 128 bytes of each packet), then
    // random payload bytes.
    let mut targets: Vec<usize> = packets
        .iter()
        .filter(|p| p.0 == file)
        .step_by(97)
        .flat_map(|p| (p.1 as usize..p.1 as usize + 128).step_by(5))
        .collect();
    targets.extend((0..60).map(|_| (next() % orig.len() as u64) as usize));
    for i in targets {
        let mut bad = orig.clone();
        bad[i] ^= (next() as u8) | 1;
        std::fs::write(&file, &bad).unwrap();
        let (n, errs) = count_events(&copy);
        // Packets entirely before the damage are delivered.
        let before: u64 = packets
            .iter()
            .filter(|p| p.0 != file || p.1 + p.2 <= i as u64)
            .map(|p| p.3)
            .sum();
        assert!(n >= before.min(total), "byte {i}: {n} < {before}");
        for e in errs {
            assert!(e.contains("channel1_2"), "{e}");
        }
    }
}
