//! Test helpers: a writer of small LTTng-shaped CTF 1.8 traces (plain-text
//! metadata, compact/extended event headers) and the location of the
//! bundled real traces.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

/// The bundled real CTF traces (`traces/ctf`); panics when missing.
pub fn real_traces() -> PathBuf {
    traceloom_testdata::ctf_root()
}

pub const UUID: [u8; 16] = [
    0x2a, 0x64, 0x22, 0xd0, 0x6c, 0xee, 0x11, 0xe0, 0x8c, 0x08, 0xcb, 0x07, 0xd7, 0xb3, 0xa5, 0x64,
];

/// Metadata of the synthetic traces. Event classes:
/// * id 0 `ev`: `{ uint32_t value; string s; }`
/// * id 40 `big`: `{ uint32_t n; uint16_t seq[n]; }` (needs the extended header)
pub fn metadata(hostname: &str, uuid: &[u8; 16]) -> String {
    let u = uuid;
    let uuid_s = format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]
    );
    format!(
        r#"/* CTF 1.8 */
typealias integer {{ size = 8; align = 8; signed = false; }} := uint8_t;
typealias integer {{ size = 16; align = 8; signed = false; }} := uint16_t;
typealias integer {{ size = 32; align = 8; signed = false; }} := uint32_t;
typealias integer {{ size = 64; align = 8; signed = false; }} := uint64_t;
trace {{
    major = 1;
    minor = 8;
    uuid = "{uuid_s}";
    byte_order = le;
    packet.header := struct {{
        uint32_t magic;
        uint8_t uuid[16];
        uint32_t stream_id;
        uint64_t stream_instance_id;
    }};
}};
env {{
    hostname = "{hostname}";
}};
clock {{
    name = "monotonic";
    freq = 1000000000;
    offset_s = 1000;
    offset = 0;
}};
typealias integer {{ size = 27; align = 1; signed = false; map = clock.monotonic.value; }} := uint27_clock_t;
typealias integer {{ size = 64; align = 8; signed = false; map = clock.monotonic.value; }} := uint64_clock_t;
stream {{
    id = 0;
    event.header := struct {{
        enum : integer {{ size = 5; align = 1; signed = false; }} {{ compact = 0 ... 30, extended = 31 }} id;
        variant <id> {{
            struct {{ uint27_clock_t timestamp; }} compact;
            struct {{ uint32_t id; uint64_clock_t timestamp; }} extended;
        }} v;
    }} align(8);
    packet.context := struct {{
        uint64_clock_t timestamp_begin;
        uint64_clock_t timestamp_end;
        uint64_t content_size;
        uint64_t packet_size;
        uint64_t packet_seq_num;
        uint64_t events_discarded;
        uint32_t cpu_id;
    }};
}};
event {{
    name = "ev";
    id = 0;
    stream_id = 0;
    fields := struct {{ uint32_t value; string s; }};
}};
event {{
    name = "big";
    id = 40;
    stream_id = 0;
    fields := struct {{ uint32_t n; uint16_t seq[n]; }};
}};
"#
    )
}

/// One event to write.
#[derive(Debug, Clone)]
pub enum Ev {
    /// `ev { value, s }` at a full timestamp.
    Ev { ts: u64, value: u32, s: String },
    /// `big { n, seq }`.
    Big { ts: u64, seq: Vec<u16> },
}

impl Ev {
    pub fn ts(&self) -> u64 {
        match self {
            Ev::Ev { ts, .. } | Ev::Big { ts, .. } => *ts,
        }
    }
}

/// One packet to write.
#[derive(Debug, Clone)]
pub struct Pkt {
    pub ts_begin: u64,
    pub ts_end: u64,
    pub seq: u64,
    pub discarded: u64,
    pub cpu: u32,
    pub events: Vec<Ev>,
    /// Extra padding bytes after the content.
    pub padding: usize,
}

impl Pkt {
    pub fn new(ts_begin: u64, ts_end: u64, seq: u64, events: Vec<Ev>) -> Self {
        Pkt {
            ts_begin,
            ts_end,
            seq,
            discarded: 0,
            cpu: 0,
            events,
            padding: 16,
        }
    }
}

fn align(buf: &mut Vec<u8>, to: usize) {
    while !buf.len().is_multiple_of(to) {
        buf.push(0);
    }
}

/// Serializes packets of stream instance `instance` as LTTng would: the
/// header, the context, events with a compact header when the id fits
/// and the timestamp delta fits in 27 bits, extended otherwise.
pub fn stream_bytes(instance: u64, uuid: &[u8; 16], packets: &[Pkt]) -> Vec<u8> {
    let mut file = Vec::new();
    for p in packets {
        let mut b = Vec::new();
        b.extend(0xC1FC1FC1u32.to_le_bytes());
        b.extend(uuid);
        b.extend(0u32.to_le_bytes());
        b.extend(instance.to_le_bytes());
        b.extend(p.ts_begin.to_le_bytes());
        b.extend(p.ts_end.to_le_bytes());
        let sizes_at = b.len();
        b.extend(0u64.to_le_bytes()); // content_size, patched
        b.extend(0u64.to_le_bytes()); // packet_size, patched
        b.extend(p.seq.to_le_bytes());
        b.extend(p.discarded.to_le_bytes());
        b.extend(p.cpu.to_le_bytes());
        let mut prev = p.ts_begin;
        for e in &p.events {
            align(&mut b, 1);
            let (id, ts) = match e {
                Ev::Ev { ts, .. } => (0u32, *ts),
                Ev::Big { ts, .. } => (40u32, *ts),
            };
            let compact = id < 31 && ts >= prev && ts - prev < (1 << 27);
            if compact {
                let word = id | (((ts & ((1 << 27) - 1)) as u32) << 5);
                b.extend(word.to_le_bytes());
            } else {
                b.push(31);
                b.extend(id.to_le_bytes());
                b.extend(ts.to_le_bytes());
            }
            prev = ts;
            match e {
                Ev::Ev { value, s, .. } => {
                    b.extend(value.to_le_bytes());
                    b.extend(s.as_bytes());
                    b.push(0);
                }
                Ev::Big { seq, .. } => {
                    b.extend((seq.len() as u32).to_le_bytes());
                    for v in seq {
                        b.extend(v.to_le_bytes());
                    }
                }
            }
        }
        let content = b.len();
        b.resize(content + p.padding, 0);
        let total = b.len();
        b[sizes_at..sizes_at + 8].copy_from_slice(&((content as u64) * 8).to_le_bytes());
        b[sizes_at + 8..sizes_at + 16].copy_from_slice(&((total as u64) * 8).to_le_bytes());
        file.extend(b);
    }
    file
}

/// Writes a trace directory: metadata plus `files` (name, instance id,
/// packets).
pub fn write_trace(dir: &Path, hostname: &str, uuid: &[u8; 16], files: &[(&str, u64, Vec<Pkt>)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), metadata(hostname, uuid)).unwrap();
    for (name, instance, packets) in files {
        std::fs::write(dir.join(name), stream_bytes(*instance, uuid, packets)).unwrap();
    }
}

/// `n` `ev` events from `t0`, `step` ns apart, values from `v0`.
pub fn evs(t0: u64, step: u64, n: usize, v0: u32) -> Vec<Ev> {
    (0..n)
        .map(|i| Ev::Ev {
            ts: t0 + i as u64 * step,
            value: v0 + i as u32,
            s: format!("s{}", v0 + i as u32),
        })
        .collect()
}

/// Copies a directory tree (the shared traces are read-only; tests damage
/// copies).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
            let mut perm = std::fs::metadata(&t).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(&t, perm).unwrap();
        }
    }
}

/// An LTTng packet index (`index/<stream>.idx`) for a file written by
/// [`stream_bytes`]: version 1.1 (9 fields per entry) or 1.0 (7).
pub fn idx_bytes(file: &[u8], minor: u32) -> Vec<u8> {
    let fields = if minor >= 1 { 9 } else { 7 };
    let mut out = Vec::new();
    out.extend(0xC1F1_DCC1u32.to_be_bytes());
    out.extend(1u32.to_be_bytes());
    out.extend(minor.to_be_bytes());
    out.extend((fields * 8u32).to_be_bytes());
    let mut off = 0usize;
    while off + 76 <= file.len() {
        let le = |at: usize| u64::from_le_bytes(file[off + at..off + at + 8].try_into().unwrap());
        let (ts_b, ts_e, content, size, seq, disc) =
            (le(32), le(40), le(48), le(56), le(64), le(72));
        let instance = le(24);
        let mut vals = vec![off as u64, size, content, ts_b, ts_e, disc, 0];
        if fields == 9 {
            vals.extend([instance, seq]);
        }
        for v in vals {
            out.extend(v.to_be_bytes());
        }
        off += size as usize / 8;
    }
    out
}
