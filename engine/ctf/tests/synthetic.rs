//! End-to-end tests on small traces written by the test itself: values,
//! timestamps, lost records, stream grouping, merge order, positions,
//! and damaged files.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use traceloom_ctf::{Cursor, CursorPosition, FieldValue, Message, Traceset};
use traceloom_tsdl::ir::Scope;

const BASE_NS: i64 = 1000 * 1_000_000_000;

/// An owned summary of a message.
#[derive(Debug, Clone, PartialEq)]
enum Rec {
    Ev {
        ns: Option<i64>,
        cycles: u64,
        name: String,
        stream: usize,
        cpu: Option<u64>,
        payload: Vec<FieldValue>,
        strings: Vec<String>,
    },
    Lost {
        packets: bool,
        count: Option<u64>,
        begin: Option<i64>,
        end: Option<i64>,
        stream: usize,
    },
    Err {
        path: PathBuf,
        offset: Option<u64>,
        text: String,
    },
}

fn drain(cur: &mut Cursor<'_>, limit: Option<usize>) -> Vec<Rec> {
    let mut out = Vec::new();
    while limit.is_none_or(|l| out.len() < l) {
        let Some(m) = cur.next() else { break };
        out.push(match m {
            Ok(Message::Event(e)) => {
                let payload = e.scope_values(Scope::EventPayload).to_vec();
                let strings = payload
                    .iter()
                    .filter_map(|v| e.bytes(*v))
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .collect();
                Rec::Ev {
                    ns: e.timestamp_ns(),
                    cycles: e.timestamp_cycles().unwrap(),
                    name: e.name().to_string(),
                    stream: e.stream().index,
                    cpu: e.cpu_id(),
                    payload,
                    strings,
                }
            }
            Ok(Message::DiscardedEvents(d)) | Ok(Message::DiscardedPackets(d)) => {
                let packets = matches!(m, Ok(Message::DiscardedPackets(_)));
                Rec::Lost {
                    packets,
                    count: d.count,
                    begin: d.begin_ns,
                    end: d.end_ns,
                    stream: d.stream.index,
                }
            }
            Err(e) => Rec::Err {
                path: e.path().to_path_buf(),
                offset: e.offset(),
                text: e.to_string(),
            },
        });
    }
    out
}

fn read_all(path: &Path) -> Vec<Rec> {
    let ts = Traceset::open(&[path.to_path_buf()]).unwrap();
    let mut c = ts.messages();
    drain(&mut c, None)
}

fn events(recs: &[Rec]) -> Vec<&Rec> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Ev { .. }))
        .collect()
}

fn ev_ts(r: &Rec) -> i64 {
    match r {
        Rec::Ev { ns, .. } => ns.unwrap(),
        _ => panic!("not an event: {r:?}"),
    }
}

#[test]
fn values_and_timestamps_with_compact_wrap_and_extended_headers() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let base = 0x1_07FF_FFF0u64; // low 27 bits close to wrapping
    let evs = vec![
        Ev::Ev {
            ts: base,
            value: 7,
            s: "hello".into(),
        },
        // Compact header, low 27 bits wrap: rebuilt with +2^27.
        Ev::Ev {
            ts: base + 0x20,
            value: 8,
            s: String::new(),
        },
        // Event id 40 needs the extended header.
        Ev::Big {
            ts: base + 0x30,
            seq: vec![1, 2, 0xFFFF],
        },
        // Delta larger than 2^27: extended header.
        Ev::Ev {
            ts: base + (1 << 30),
            value: 9,
            s: "x".into(),
        },
    ];
    write_trace(
        &dir,
        "host",
        &UUID,
        &[("chan_0", 0, vec![Pkt::new(base, base + (1 << 30), 0, evs)])],
    );
    let recs = read_all(&dir);
    assert_eq!(recs.len(), 4, "{recs:?}");
    let want_ts = [base, base + 0x20, base + 0x30, base + (1 << 30)];
    for (r, ts) in recs.iter().zip(want_ts) {
        match r {
            Rec::Ev {
                ns, cycles, cpu, ..
            } => {
                assert_eq!(*cycles, ts);
                assert_eq!(*ns, Some(BASE_NS + ts as i64));
                assert_eq!(*cpu, Some(0));
            }
            other => panic!("{other:?}"),
        }
    }
    let Rec::Ev {
        name,
        payload,
        strings,
        ..
    } = &recs[0]
    else {
        unreachable!()
    };
    assert_eq!(name, "ev");
    assert_eq!(payload[0], FieldValue::UInt(7));
    assert_eq!(strings, &["hello"]);
    let Rec::Ev { name, payload, .. } = &recs[2] else {
        unreachable!()
    };
    assert_eq!(name, "big");
    assert_eq!(
        payload,
        &[
            FieldValue::UInt(3),
            FieldValue::Len(3),
            FieldValue::UInt(1),
            FieldValue::UInt(2),
            FieldValue::UInt(0xFFFF)
        ]
    );

    // The event view: header values, packet context, navigation by name.
    let ts = Traceset::open(&[dir]).unwrap();
    let mut c = ts.messages();
    let Some(Ok(Message::Event(e))) = c.next() else {
        panic!()
    };
    assert_eq!(e.trace().hostname(), Some("host"));
    assert_eq!(e.trace().name.as_deref(), Some("host"));
    assert_eq!(e.stream().instance_id, Some(0));
    let ctx = e.scope(Scope::PacketContext).unwrap();
    assert_eq!(
        ctx.field("timestamp_begin").unwrap().value(),
        Some(FieldValue::UInt(base))
    );
    let hdr = e.scope(Scope::EventHeader).unwrap();
    let (_, opt, _) = hdr.field("v").unwrap().variant().unwrap();
    assert_eq!(opt, "compact");
    let s = e.scope(Scope::EventPayload).unwrap().field("s").unwrap();
    assert_eq!(s.str_bytes(), Some(&b"hello"[..]));
    assert_eq!(e.position().packet, 0);
    assert_eq!(e.position().event_index, 0);
}

#[test]
fn lost_events_and_packets_match_babeltrace_ranges_without_wrapped_counts() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let mut p = vec![
        Pkt::new(100, 200, 0, evs(110, 10, 3, 0)),
        Pkt::new(300, 400, 1, evs(310, 10, 3, 10)),
        Pkt::new(500, 600, 3, evs(510, 10, 3, 20)), // seq gap: 1 lost packet
        Pkt::new(700, 800, 4, evs(710, 10, 3, 30)),
        Pkt::new(900, 1000, 5, evs(910, 10, 3, 40)),
    ];
    p[0].discarded = 2; // first packet: "may have discarded", no count
    p[1].discarded = 5;
    p[2].discarded = 5;
    p[3].discarded = 3; // backwards: nothing reported
    p[4].discarded = 9; // 9 - 3 = 6
    write_trace(&dir, "h", &UUID, &[("chan_0", 0, p)]);
    let recs = read_all(&dir);
    let lost: Vec<&Rec> = recs
        .iter()
        .filter(|r| matches!(r, Rec::Lost { .. }))
        .collect();
    let ns = |c: i64| Some(BASE_NS + c);
    assert_eq!(
        lost,
        vec![
            &Rec::Lost {
                packets: false,
                count: None,
                begin: ns(100),
                end: ns(200),
                stream: 0
            },
            &Rec::Lost {
                packets: false,
                count: Some(3),
                begin: ns(200),
                end: ns(400),
                stream: 0
            },
            &Rec::Lost {
                packets: true,
                count: Some(1),
                begin: ns(400),
                end: ns(500),
                stream: 0
            },
            &Rec::Lost {
                packets: false,
                count: Some(6),
                begin: ns(800),
                end: ns(1000),
                stream: 0
            },
        ]
    );
    assert_eq!(events(&recs).len(), 15);
    // Lost messages come before their packet's events, in time order.
    let pos = |want: &Rec| recs.iter().position(|r| r == want).unwrap();
    let first_ev_p4 = recs
        .iter()
        .position(|r| matches!(r, Rec::Ev { ns, .. } if *ns == Some(BASE_NS + 910)))
        .unwrap();
    assert!(pos(lost[3]) < first_ev_p4);
}

#[test]
fn rotated_files_form_one_stream_and_ids_follow_babeltrace() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    write_trace(
        &dir,
        "h",
        &UUID,
        &[
            // Rotation of instance 0: chan_0_1 holds the later packets.
            (
                "chan_0_0",
                0,
                vec![Pkt::new(100, 200, 0, evs(100, 10, 5, 0))],
            ),
            (
                "chan_0_1",
                0,
                vec![Pkt::new(300, 400, 1, evs(300, 10, 5, 100))],
            ),
            (
                "chan_1_0",
                1,
                vec![Pkt::new(150, 350, 0, evs(155, 10, 5, 200))],
            ),
        ],
    );
    let ts = Traceset::open(std::slice::from_ref(&dir)).unwrap();
    let streams: Vec<_> = ts.streams().collect();
    assert_eq!(streams.len(), 2);
    assert_eq!(streams[0].files.len(), 2);
    assert_eq!(streams[0].id, 0);
    assert_eq!(streams[1].id, 1);
    assert_eq!(ts.packets(0).len(), 2);
    assert_eq!(ts.packets(0)[1].file, 1);
    let recs = read_all(&dir);
    let ev = events(&recs);
    assert_eq!(ev.len(), 15);
    assert!(ev.windows(2).all(|w| ev_ts(w[0]) <= ev_ts(w[1])));
    // No lost packets between the rotated files (sequence 0 then 1).
    assert!(recs.iter().all(|r| !matches!(r, Rec::Lost { .. })));
}

#[test]
fn equal_timestamps_break_ties_like_babeltrace_muxer() {
    let t = tempfile::tempdir().unwrap();
    let mut uuid_hi = UUID;
    uuid_hi[0] = 0xFF;
    // Two traces whose events all share timestamps; the one with the
    // smaller UUID goes first even though its name sorts last.
    write_trace(
        &t.path().join("a"),
        "zzz",
        &uuid_hi,
        &[("chan_0", 0, vec![Pkt::new(100, 200, 0, evs(100, 10, 3, 0))])],
    );
    write_trace(
        &t.path().join("b"),
        "aaa",
        &UUID,
        &[(
            "chan_0",
            0,
            vec![Pkt::new(100, 200, 0, evs(100, 10, 3, 50))],
        )],
    );
    let ts = Traceset::open(&[t.path().to_path_buf()]).unwrap();
    let names: Vec<_> = ts.traces().map(|t| t.name.clone().unwrap()).collect();
    assert_eq!(names, ["zzz/a", "aaa/b"]);
    let mut c = ts.messages();
    let recs = drain(&mut c, None);
    let values: Vec<u64> = recs
        .iter()
        .map(|r| match r {
            Rec::Ev { payload, .. } => payload[0].as_u64().unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(values, [50, 0, 51, 1, 52, 2]);
    // Same UUID: the trace name decides.
    let t2 = tempfile::tempdir().unwrap();
    for (d, host, v0) in [("a", "zzz", 0), ("b", "aaa", 50)] {
        write_trace(
            &t2.path().join(d),
            host,
            &UUID,
            &[(
                "chan_0",
                0,
                vec![Pkt::new(100, 200, 0, evs(100, 10, 2, v0))],
            )],
        );
    }
    let recs = read_all(t2.path());
    let first = match &recs[0] {
        Rec::Ev { payload, .. } => payload[0],
        other => panic!("{other:?}"),
    };
    assert_eq!(first, FieldValue::UInt(50));
}

fn three_streams(dir: &Path) {
    let mut p0 = vec![
        Pkt::new(100, 190, 0, evs(100, 7, 12, 0)),
        Pkt::new(200, 290, 1, evs(200, 7, 12, 100)),
        Pkt::new(300, 390, 3, evs(300, 7, 12, 200)),
    ];
    p0[1].discarded = 4;
    p0[2].discarded = 6;
    write_trace(
        dir,
        "h",
        &UUID,
        &[
            ("chan_0", 0, p0),
            (
                "chan_1",
                1,
                vec![
                    Pkt::new(105, 250, 0, evs(105, 11, 12, 1000)),
                    Pkt::new(260, 400, 1, evs(260, 11, 12, 1100)),
                ],
            ),
            (
                "chan_2",
                2,
                vec![Pkt::new(100, 400, 0, evs(100, 25, 12, 2000))],
            ),
        ],
    );
}

#[test]
fn checkpoints_resume_exactly() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    three_streams(&dir);
    let ts = Traceset::open(&[dir]).unwrap();
    let all = drain(&mut ts.messages(), None);
    assert!(all.len() > 70);
    for cut in [0, 1, 5, 13, 40, 61, all.len() - 1, all.len()] {
        let mut c = ts.messages();
        let head = drain(&mut c, Some(cut));
        let cp: CursorPosition = c.position();
        let rest = drain(&mut c, None);
        let mut c2 = Cursor::from_position(&ts, &cp);
        let resumed = drain(&mut c2, None);
        assert_eq!(rest, resumed, "cut at {cut}");
        assert_eq!([head, rest].concat(), all);
    }
}

#[test]
fn time_ranges_seek_through_the_packet_index() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    three_streams(&dir);
    let ts = Traceset::open(&[dir]).unwrap();
    let all = drain(&mut ts.messages(), None);
    for (b, e) in [(250, 320), (100, 100), (0, 1000), (391, 1000), (150, 151)] {
        let (b, e) = (BASE_NS + b, BASE_NS + e);
        let got = drain(&mut ts.messages_between(Some(b), Some(e)), None);
        let want: Vec<Rec> = all
            .iter()
            .filter(|r| match r {
                Rec::Ev { ns, .. } => ns.is_some_and(|ns| ns >= b && ns <= e),
                _ => false,
            })
            .cloned()
            .collect();
        assert_eq!(events(&got).into_iter().cloned().collect::<Vec<_>>(), want);
    }
    let (lo, hi) = ts.time_range_ns().unwrap();
    assert_eq!((lo, hi), (BASE_NS + 100, BASE_NS + 400));
}

/// Packets and their byte ranges in a synthetic file.
fn packet_ranges(file: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 64 <= file.len() {
        let size = u64::from_le_bytes(file[off + 56..off + 64].try_into().unwrap()) as usize / 8;
        out.push((off, off + size));
        off += size;
    }
    out
}

#[test]
fn truncation_at_every_offset_keeps_earlier_packets() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let packets = vec![
        Pkt::new(100, 190, 0, evs(100, 10, 4, 0)),
        Pkt::new(200, 290, 1, evs(200, 10, 4, 10)),
        Pkt::new(300, 390, 2, evs(300, 10, 4, 20)),
    ];
    write_trace(&dir, "h", &UUID, &[("chan_0", 0, packets)]);
    let file = dir.join("chan_0");
    let orig = std::fs::read(&file).unwrap();
    let ranges = packet_ranges(&orig);
    assert_eq!(ranges.len(), 3);
    for cut in 1..orig.len() {
        std::fs::write(&file, &orig[..cut]).unwrap();
        let recs = read_all(&dir);
        let whole = ranges.iter().filter(|r| r.1 <= cut).count();
        assert_eq!(events(&recs).len(), whole * 4, "cut at {cut}");
        let errs: Vec<&Rec> = recs
            .iter()
            .filter(|r| matches!(r, Rec::Err { .. }))
            .collect();
        if ranges.iter().any(|r| r.1 == cut) {
            assert!(errs.is_empty(), "cut at {cut}: {errs:?}");
        } else {
            assert_eq!(errs.len(), 1, "cut at {cut}");
            let Rec::Err { path, offset, text } = errs[0] else {
                unreachable!()
            };
            assert_eq!(path, &file);
            // The damaged packet starts where the last whole one ends.
            let start = ranges.get(whole).map_or(0, |r| r.0) as u64;
            assert!(
                offset.unwrap() >= start && offset.unwrap() <= cut as u64,
                "cut at {cut}: {text}"
            );
            assert!(text.contains("chan_0") && text.contains("byte offset"));
        }
    }
}

#[test]
fn flipped_bytes_never_panic_and_earlier_packets_survive() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let packets = vec![
        Pkt::new(100, 190, 0, evs(100, 10, 3, 0)),
        Pkt::new(200, 290, 1, evs(200, 10, 3, 10)),
    ];
    write_trace(&dir, "h", &UUID, &[("chan_0", 0, packets)]);
    let file = dir.join("chan_0");
    let orig = std::fs::read(&file).unwrap();
    let clean = read_all(&dir);
    let ranges = packet_ranges(&orig);
    for i in 0..orig.len() {
        for mask in [0xFFu8, 0x80, 0x01] {
            let mut bad = orig.clone();
            bad[i] ^= mask;
            std::fs::write(&file, &bad).unwrap();
            let recs = read_all(&dir);
            // Every message of the packets before the damaged one is intact.
            let damaged = ranges.iter().position(|r| i < r.1).unwrap();
            let before = damaged * 3;
            assert_eq!(
                &recs[..before.min(recs.len())],
                &clean[..before],
                "byte {i}"
            );
            assert!(recs.len() >= before, "byte {i} ^ {mask:#x}");
            for r in &recs {
                if let Rec::Err { offset, path, .. } = r {
                    assert_eq!(path, &file);
                    assert!(offset.unwrap() < orig.len() as u64);
                }
            }
        }
    }
}

#[test]
fn absurd_lengths_and_sizes_are_errors_not_allocations() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let mut p1 = evs(200, 10, 2, 10);
    p1.push(Ev::Big {
        ts: 250,
        seq: vec![1, 2, 3],
    });
    let packets = vec![
        Pkt::new(100, 190, 0, evs(100, 10, 2, 0)),
        Pkt::new(200, 290, 1, p1),
    ];
    write_trace(&dir, "h", &UUID, &[("chan_0", 0, packets)]);
    let file = dir.join("chan_0");
    let orig = std::fs::read(&file).unwrap();
    // The `n` of the `big` event: its value 3 right after the extended
    // header, followed by the elements 1, 2, 3.
    let pat: Vec<u8> = [3u32.to_le_bytes().to_vec(), vec![1, 0, 2, 0, 3, 0]].concat();
    let at = orig.windows(pat.len()).position(|w| w == pat).unwrap();
    let mut bad = orig.clone();
    bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&file, &bad).unwrap();
    let recs = read_all(&dir);
    assert_eq!(events(&recs).len(), 4);
    let Some(Rec::Err { offset, text, .. }) = recs.last() else {
        panic!("{recs:?}")
    };
    assert_eq!(*offset, Some(at as u64 + 4), "{text}");
    assert!(text.contains("4294967295"), "{text}");

    // An absurd packet_size in the second packet's context.
    let ranges = packet_ranges(&orig);
    let mut bad = orig.clone();
    let ps = ranges[1].0 + 56;
    bad[ps..ps + 8].copy_from_slice(&(u64::MAX - 7).to_le_bytes());
    std::fs::write(&file, &bad).unwrap();
    let recs = read_all(&dir);
    assert_eq!(events(&recs).len(), 2);
    assert!(
        matches!(recs.last(), Some(Rec::Err { offset: Some(o), .. }) if *o == ranges[1].0 as u64),
        "{recs:?}"
    );

    // A bad magic.
    let mut bad = orig.clone();
    bad[ranges[1].0] ^= 1;
    std::fs::write(&file, &bad).unwrap();
    let recs = read_all(&dir);
    assert_eq!(events(&recs).len(), 2);
    let Some(Rec::Err { text, .. }) = recs.last() else {
        panic!()
    };
    assert!(text.contains("magic"), "{text}");
}

#[test]
fn a_damaged_stream_does_not_stop_the_others() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    three_streams(&dir);
    let all = read_all(&dir);
    let f = dir.join("chan_1");
    let bytes = std::fs::read(&f).unwrap();
    // Cut chan_1 in the middle of its second packet.
    let ranges = packet_ranges(&bytes);
    std::fs::write(&f, &bytes[..ranges[1].0 + 40]).unwrap();
    let recs = read_all(&dir);
    let n_err = recs.iter().filter(|r| matches!(r, Rec::Err { .. })).count();
    assert_eq!(n_err, 1);
    // Everything except chan_1's second packet is delivered.
    let expect: Vec<&Rec> = all
        .iter()
        .filter(|r| !matches!(r, Rec::Ev { stream: 1, payload, .. } if payload[0].as_u64().unwrap() >= 1100))
        .collect();
    let got: Vec<&Rec> = recs
        .iter()
        .filter(|r| !matches!(r, Rec::Err { .. }))
        .collect();
    assert_eq!(got, expect);
}

#[test]
fn decoding_threads_do_not_change_the_messages() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    // Packets of several thousand events: decoded in several batches.
    let mut p0 = vec![
        Pkt::new(100, 60_000, 0, evs(100, 7, 5000, 0)),
        Pkt::new(60_100, 90_000, 2, evs(60_100, 3, 2500, 10_000)),
    ];
    p0[1].discarded = 12;
    write_trace(
        &dir,
        "h",
        &UUID,
        &[
            ("chan_0", 0, p0),
            (
                "chan_1",
                1,
                vec![Pkt::new(50, 95_000, 0, evs(50, 11, 8000, 20_000))],
            ),
            (
                "chan_2",
                2,
                vec![Pkt::new(90, 91, 0, evs(90, 1, 2, 40_000))],
            ),
        ],
    );
    let mut ts = Traceset::open(&[dir]).unwrap();
    ts.set_decode_threads(0);
    let reference = drain(&mut ts.messages(), None);
    assert_eq!(events(&reference).len(), 15_502);
    assert!(reference.windows(2).all(|w| match (&w[0], &w[1]) {
        (Rec::Ev { ns: a, .. }, Rec::Ev { ns: b, .. }) => a <= b,
        _ => true,
    }));
    for threads in [1, 2, 5] {
        ts.set_decode_threads(threads);
        assert_eq!(
            drain(&mut ts.messages(), None),
            reference,
            "{threads} threads"
        );
        // Checkpoints inside multi-batch packets, restored with threads.
        for cut in [1, 1023, 1025, 7000, 15_000] {
            let mut c = ts.messages();
            drain(&mut c, Some(cut));
            let cp = c.position();
            let resumed = drain(&mut Cursor::from_position(&ts, &cp), None);
            assert_eq!(
                &resumed[..],
                &reference[cut..],
                "{threads} threads, cut {cut}"
            );
        }
        // Stopping early drops the cursor and its threads cleanly.
        let mut c = ts.messages();
        drain(&mut c, Some(10));
    }
}

/// `Cursor::would_block` is never `true` without decoding threads, and a
/// reader that only steps when it is `false` (waiting otherwise, as a GUI's
/// main loop does) reads the same messages.
#[test]
fn reading_only_when_the_cursor_would_not_block_reads_everything() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    write_trace(
        &dir,
        "h",
        &UUID,
        &[
            (
                "chan_0",
                0,
                vec![Pkt::new(100, 60_000, 0, evs(100, 7, 5000, 0))],
            ),
            (
                "chan_1",
                1,
                vec![Pkt::new(50, 95_000, 0, evs(50, 11, 8000, 20_000))],
            ),
        ],
    );
    let mut ts = Traceset::open(&[dir]).unwrap();
    ts.set_decode_threads(0);
    let reference = drain(&mut ts.messages(), None);
    assert_eq!(events(&reference).len(), 13_000);
    let mut c = ts.messages();
    let mut unthreaded = Vec::new();
    loop {
        assert!(!c.would_block());
        let Some(r) = drain(&mut c, Some(1)).pop() else {
            break;
        };
        unthreaded.push(r);
    }
    assert_eq!(unthreaded, reference);
    for threads in [1, 2] {
        ts.set_decode_threads(threads);
        let mut c = ts.messages();
        let mut got = Vec::new();
        let started = std::time::Instant::now();
        loop {
            if c.would_block() {
                // The worker's batch is on its way.
                assert!(started.elapsed().as_secs() < 60, "never ready");
                std::thread::sleep(std::time::Duration::from_micros(50));
                continue;
            }
            let Some(r) = drain(&mut c, Some(1)).pop() else {
                break;
            };
            got.push(r);
        }
        assert_eq!(got, reference, "{threads} threads");
    }
}

#[test]
fn lttng_index_files_are_used_when_valid_and_ignored_otherwise() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    let mut packets = vec![
        Pkt::new(100, 190, 0, evs(100, 10, 4, 0)),
        Pkt::new(200, 290, 1, evs(200, 10, 4, 10)),
        Pkt::new(300, 390, 2, evs(300, 10, 4, 20)),
    ];
    packets[2].cpu = 3;
    packets[2].discarded = 5;
    write_trace(&dir, "h", &UUID, &[("chan_3", 0, packets)]);
    let file = std::fs::read(dir.join("chan_3")).unwrap();
    let reference = read_all(&dir);
    std::fs::create_dir_all(dir.join("index")).unwrap();
    let idx = dir.join("index/chan_3.idx");
    for minor in [0, 1] {
        std::fs::write(&idx, idx_bytes(&file, minor)).unwrap();
        let ts = Traceset::open(std::slice::from_ref(&dir)).unwrap();
        let p = ts.packets(0);
        assert_eq!(p.len(), 3);
        // Indexed from the .idx: the cpu is not in it.
        assert_eq!(p[2].cpu_id, None, "minor {minor}");
        assert_eq!(p[2].events_discarded, Some(5));
        assert_eq!(p[1].seq_num, (minor == 1).then_some(1), "seq in 1.1 only");
        assert_eq!(p[2].begin_ns, Some(BASE_NS + 300));
        // Same messages (the cpu of each event comes from its packet).
        assert_eq!(drain(&mut ts.messages(), None), reference);
    }
    // Inconsistent indexes are ignored: the packet headers are scanned.
    let good = idx_bytes(&file, 1);
    let mut wrong_size = good.clone();
    wrong_size[16 + 8 + 7] ^= 0x08; // first entry's packet_size
    let mut bad_magic = good.clone();
    bad_magic[0] = 0;
    let truncated = good[..good.len() - 3].to_vec();
    let mut short_file = good.clone();
    short_file.truncate(16 + 2 * 72); // misses the last packet
    for (what, bytes) in [
        ("size", wrong_size),
        ("magic", bad_magic),
        ("truncated", truncated),
        ("missing entry", short_file),
    ] {
        std::fs::write(&idx, bytes).unwrap();
        let ts = Traceset::open(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(ts.packets(0)[2].cpu_id, Some(3), "{what}: scanned");
        assert_eq!(drain(&mut ts.messages(), None), reference, "{what}");
    }
}

#[test]
fn open_errors_name_the_path_once() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("trace");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("metadata"),
        "/* CTF 1.8 */ trace { major = 1; minor = 8; byte_order = le; ",
    )
    .unwrap();
    let e = Traceset::open(std::slice::from_ref(&dir))
        .unwrap_err()
        .to_string();
    let path = dir.join("metadata").display().to_string();
    assert_eq!(e.matches(&path).count(), 1, "{e}");
    let e = Traceset::open(&[t.path().join("nothing")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = Traceset::open(&[empty.path().to_path_buf()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no CTF trace"), "{e}");
}
