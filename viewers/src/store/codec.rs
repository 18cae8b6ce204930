//! [`KernelData`] to and from a store file: every change list, mark and
//! arrow list is a packed [`Column`] whose parts (packed blocks, block
//! offsets, first items, unpacked tail) are written as they are in memory,
//! and every block summary a plain column; all are read back in place from
//! the map. The record headers, statistics, histogram and the damaged
//! streams met go to the meta block.

use std::sync::Arc;

use bytemuck::Pod;
use serde::{Deserialize, Serialize};

use super::file::{Col, Mapped, Writer};
use super::identity::TracesetIdentity;
use super::StoreError;
use crate::model::column::{Column, ColumnParts};
use crate::model::damage::StreamDamage;
use crate::model::histogram::FineHistogram;
use crate::model::kernel::{CpuRecord, KernelData, LineKind, LineRecord, ThreadRecord};
use crate::model::pack::Item;
use crate::model::series::Series;
use crate::model::stats::{self, Statistics};
use crate::render::RowId;
use traceloom_base::Time;

#[derive(Debug, Serialize, Deserialize)]
struct ThreadMeta {
    trace: u32,
    tid: i64,
    pid: i64,
    ppid: i64,
    name: Arc<str>,
    cpu: u32,
    row: u64,
    birth: Time,
    end: Time,
    times: Packed,
    codes: Packed,
    blocks: Col,
    marks: Packed,
}

#[derive(Debug, Serialize, Deserialize)]
struct CpuMeta {
    trace: u32,
    cpu: u32,
    times: Packed,
    threads: Packed,
    modes: Packed,
    blocks: Col,
}

#[derive(Debug, Serialize, Deserialize)]
struct LineMeta {
    trace: u32,
    /// 0: IRQ, 1: softirq.
    kind: u8,
    number: u64,
    name: Option<Arc<str>>,
    times: Packed,
    codes: Packed,
    cpus: Packed,
    blocks: Col,
}

/// The first members of the meta block, which [`read_head`] decodes alone
/// (`cache list`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoreHead {
    /// The traces the store was computed from.
    pub identity: TracesetIdentity,
    /// When it was written, s since the Unix epoch.
    pub created_unix_s: u64,
    /// Events analysed.
    pub events: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    head: StoreHead,
    span: (Time, Time),
    trace_names: Vec<String>,
    threads: Vec<ThreadMeta>,
    cpus: Vec<CpuMeta>,
    lines: Vec<LineMeta>,
    wakeups: Packed,
    max_wakeup_span: Time,
    switches: Packed,
    wakeup_events: (u64, u64),
    stats: Statistics,
    histogram: FineHistogram,
    damage: Vec<StreamDamage>,
}

/// Where the parts of a packed [`Column`] are.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Packed {
    bytes: Col,
    locs: Col,
    firsts: Col,
    tail: Col,
}

fn plain_column<T: Pod>(w: &mut Writer, s: &Series<T>) -> std::io::Result<Col> {
    w.column(s.chunks())
}

/// Writes the packed blocks of `c` as they are (no decoding).
fn packed_column<T: Item>(w: &mut Writer, c: &Column<T>) -> std::io::Result<Packed> {
    let p = c.parts();
    Ok(Packed {
        bytes: plain_column(w, &p.bytes)?,
        locs: plain_column(w, &p.locs)?,
        firsts: plain_column(w, &p.firsts)?,
        tail: plain_column(w, &p.tail)?,
    })
}

/// The members of [`Meta`] before its thread records, borrowed.
#[derive(Serialize)]
struct MetaHead<'a> {
    head: StoreHead,
    span: (Time, Time),
    trace_names: &'a [String],
}

/// The members of [`Meta`] after its thread records, borrowed.
#[derive(Serialize)]
struct MetaRest<'a> {
    cpus: Vec<CpuMeta>,
    lines: Vec<LineMeta>,
    wakeups: Packed,
    max_wakeup_span: Time,
    switches: Packed,
    wakeup_events: (u64, u64),
    stats: &'a Statistics,
    histogram: &'a FineHistogram,
    damage: &'a [StreamDamage],
}

/// Appends the postcard encoding of `value` to `out`.
fn append<T: Serialize + ?Sized>(value: &T, out: Vec<u8>) -> Vec<u8> {
    postcard::to_extend(value, out).expect("meta serialization is infallible")
}

/// Writes `data`, computed from the traces at `identity`, with `w`;
/// returns the meta block to finish the file with.
///
/// The block is the postcard encoding of a [`Meta`], made member by
/// member (postcard puts a struct's members back to back, a sequence
/// after its length): each thread record's header is encoded as its
/// columns are written, and the statistics are encoded from `data`, so
/// that neither a list of the headers nor a copy of the statistics is
/// made, and the block is allocated at its size once the records are in.
/// On a trace of 80,000 thread records the copy and the headers took
/// 75 MB and the block, grown by doubling, 67 MB at once, the peak of
/// `traceloom index`.
pub(crate) fn write(
    w: &mut Writer,
    identity: &TracesetIdentity,
    data: &KernelData,
) -> std::io::Result<Vec<u8>> {
    let head = MetaHead {
        head: StoreHead {
            identity: identity.clone(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            events: data.events,
        },
        span: data.span,
        trace_names: &data.trace_names,
    };
    let mut meta = append(&head, Vec::new());
    // A sequence's length is encoded as a `u64` is (a varint).
    meta = append(&(data.threads.len() as u64), meta);
    for t in &data.threads {
        let m = ThreadMeta {
            trace: t.trace,
            tid: t.tid,
            pid: t.pid,
            ppid: t.ppid,
            name: t.name.clone(),
            cpu: t.cpu,
            row: t.row.0,
            birth: t.birth,
            end: t.end,
            times: packed_column(w, &t.times)?,
            codes: packed_column(w, &t.codes)?,
            blocks: plain_column(w, &t.blocks)?,
            marks: packed_column(w, &t.marks)?,
        };
        meta = append(&m, meta);
    }
    let mut cpus = Vec::with_capacity(data.cpus.len());
    for c in &data.cpus {
        cpus.push(CpuMeta {
            trace: c.trace,
            cpu: c.cpu,
            times: packed_column(w, &c.times)?,
            threads: packed_column(w, &c.threads)?,
            modes: packed_column(w, &c.modes)?,
            blocks: plain_column(w, &c.blocks)?,
        });
    }
    let mut lines = Vec::with_capacity(data.lines.len());
    for l in &data.lines {
        lines.push(LineMeta {
            trace: l.trace,
            kind: match l.kind {
                LineKind::Irq => 0,
                LineKind::SoftIrq => 1,
            },
            number: l.number,
            name: l.name.clone(),
            times: packed_column(w, &l.times)?,
            codes: packed_column(w, &l.codes)?,
            cpus: packed_column(w, &l.cpus)?,
            blocks: plain_column(w, &l.blocks)?,
        });
    }
    let rest = MetaRest {
        cpus,
        lines,
        wakeups: packed_column(w, &data.wakeups)?,
        max_wakeup_span: data.max_wakeup_span,
        switches: packed_column(w, &data.switches)?,
        wakeup_events: data.wakeup_events,
        stats: &data.stats,
        histogram: &data.histogram,
        damage: &data.damage,
    };
    let size =
        postcard::experimental::serialized_size(&rest).expect("meta serialization is infallible");
    meta.reserve_exact(size);
    Ok(append(&rest, meta))
}

/// The head of the meta block of `m` (its checksum verified).
pub(crate) fn read_head(m: &Mapped) -> Result<StoreHead, StoreError> {
    let bytes = m.meta()?;
    postcard::take_from_bytes::<StoreHead>(bytes)
        .map(|(h, _)| h)
        .map_err(|e| damaged(m, format!("meta block: {e}")))
}

/// Column `c` of `m`, in place.
fn plain<T: Pod>(m: &Mapped, c: Col) -> Result<Series<T>, StoreError> {
    m.series(c)
}

/// Packed column `c` of `m`, in place.
fn packed<T: Item>(m: &Mapped, c: Packed) -> Result<Column<T>, StoreError> {
    let parts = ColumnParts {
        bytes: plain(m, c.bytes)?,
        locs: plain(m, c.locs)?,
        firsts: plain(m, c.firsts)?,
        tail: plain(m, c.tail)?,
    };
    Column::from_parts(parts).ok_or_else(|| {
        damaged(
            m,
            format!("column at {}: one first item per block", c.locs.offset),
        )
    })
}

fn damaged(m: &Mapped, reason: String) -> StoreError {
    StoreError::Damaged {
        path: m.path().to_path_buf(),
        reason,
    }
}

/// The whole-trace statistics and histogram of `m`, from its meta block
/// alone (its columns are neither read nor verified).
pub(crate) fn read_summary(m: &Mapped) -> Result<Summary, StoreError> {
    let meta: Meta = {
        let bytes = m.meta()?;
        stats::with_shared_names(|| postcard::from_bytes(bytes))
            .map_err(|e| damaged(m, format!("meta block: {e}")))?
    };
    Ok(Summary {
        head: meta.head,
        span: meta.span,
        stats: meta.stats,
        histogram: meta.histogram,
        damage: meta.damage,
    })
}

/// What a store holds of the whole trace besides its change lists.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The store's head.
    pub head: StoreHead,
    /// First and last event times.
    pub span: (Time, Time),
    /// Whole-trace statistics.
    pub stats: Statistics,
    /// Whole-trace fine histogram.
    pub histogram: FineHistogram,
    /// The damaged streams the pass that built the store met.
    pub damage: Vec<StreamDamage>,
}

/// The analysis held by `m` (its checksums verified by the caller), with
/// its head.
pub(crate) fn read(m: &Mapped) -> Result<(StoreHead, KernelData), StoreError> {
    let meta: Meta = {
        let bytes = m.meta()?;
        stats::with_shared_names(|| postcard::from_bytes(bytes))
            .map_err(|e| damaged(m, format!("meta block: {e}")))?
    };
    let mut threads = Vec::with_capacity(meta.threads.len());
    for t in meta.threads {
        threads.push(ThreadRecord {
            trace: t.trace,
            tid: t.tid,
            pid: t.pid,
            ppid: t.ppid,
            name: t.name,
            cpu: t.cpu,
            row: RowId(t.row),
            birth: t.birth,
            end: t.end,
            times: packed(m, t.times)?,
            codes: packed(m, t.codes)?,
            blocks: plain(m, t.blocks)?,
            marks: packed(m, t.marks)?,
        });
    }
    let mut cpus = Vec::with_capacity(meta.cpus.len());
    for c in meta.cpus {
        cpus.push(CpuRecord {
            trace: c.trace,
            cpu: c.cpu,
            times: packed(m, c.times)?,
            threads: packed(m, c.threads)?,
            modes: packed(m, c.modes)?,
            blocks: plain(m, c.blocks)?,
        });
    }
    let mut lines = Vec::with_capacity(meta.lines.len());
    for l in meta.lines {
        lines.push(LineRecord {
            trace: l.trace,
            kind: if l.kind == 0 {
                LineKind::Irq
            } else {
                LineKind::SoftIrq
            },
            number: l.number,
            name: l.name,
            times: packed(m, l.times)?,
            codes: packed(m, l.codes)?,
            cpus: packed(m, l.cpus)?,
            blocks: plain(m, l.blocks)?,
        });
    }
    let data = KernelData {
        span: meta.span,
        trace_names: meta.trace_names,
        threads,
        cpus,
        lines,
        wakeups: packed(m, meta.wakeups)?,
        max_wakeup_span: meta.max_wakeup_span,
        switches: packed(m, meta.switches)?,
        wakeup_events: meta.wakeup_events,
        stats: meta.stats,
        histogram: meta.histogram,
        events: meta.head.events,
        damage: meta.damage,
    };
    Ok((meta.head, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::KernelAnalysis;
    use crate::model::session::Session;

    #[test]
    fn a_length_is_encoded_as_a_sequence_prefix() {
        // `write` encodes the thread records' count itself, then each
        // record: the prefix must be the one postcard gives a sequence
        // (a sequence of `()` is its prefix alone).
        for n in [
            0usize,
            1,
            127,
            128,
            255,
            16_383,
            16_384,
            300_000,
            (1 << 21) + 3,
        ] {
            let seq = postcard::to_stdvec(&vec![(); n]).unwrap();
            assert_eq!(append(&(n as u64), Vec::new()), seq, "{n}");
        }
    }

    #[test]
    fn the_meta_block_is_a_meta_encoded_whole() {
        let dir = std::env::temp_dir().join(format!("traceloom-codec-{}", std::process::id()));
        let cfg = traceloom_kernelgen::GeneratorConfig {
            events: 20_000,
            seed: 5,
            cpus: 2,
            processes: 3,
            threads_per_process: 2,
            // Enough records for a count beyond one varint byte.
            fork_rate: 0.05,
            overwrite: true,
            ..Default::default()
        };
        let trace = dir.join("trace");
        traceloom_kernelgen::generate(&cfg, &trace).unwrap();
        let mut session = Session::open(std::slice::from_ref(&trace)).unwrap();
        let data = KernelAnalysis::run(&mut session);
        assert!(data.threads.len() > 128, "{} records", data.threads.len());
        let identity = TracesetIdentity::of(session.traceset());
        let mut w = Writer::create(&dir.join("store")).unwrap();
        let bytes = write(&mut w, &identity, &data).unwrap();
        // Decoded as a whole, encoded again as a whole: the same bytes.
        let meta: Meta = stats::with_shared_names(|| postcard::from_bytes(&bytes)).unwrap();
        assert_eq!(postcard::to_stdvec(&meta).unwrap(), bytes);
        assert_eq!(meta.stats, data.stats);
        assert_eq!(meta.head.events, data.events);
        let names: Vec<&str> = meta.threads.iter().map(|t| &*t.name).collect();
        let want: Vec<&str> = data.threads.iter().map(|t| &*t.name).collect();
        assert_eq!(names, want);
        assert_eq!(meta.cpus.len(), data.cpus.len());
        drop(w);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
