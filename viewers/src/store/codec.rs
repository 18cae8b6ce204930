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

/// Writes `data`, computed from the traces at `identity`, with `w`;
/// returns the meta block to finish the file with.
pub(crate) fn write(
    w: &mut Writer,
    identity: &TracesetIdentity,
    data: &KernelData,
) -> std::io::Result<Vec<u8>> {
    let mut threads = Vec::with_capacity(data.threads.len());
    for t in &data.threads {
        threads.push(ThreadMeta {
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
        });
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
    let wakeups = packed_column(w, &data.wakeups)?;
    let switches = packed_column(w, &data.switches)?;
    let meta = Meta {
        head: StoreHead {
            identity: identity.clone(),
            created_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            events: data.events,
        },
        span: data.span,
        trace_names: data.trace_names.clone(),
        threads,
        cpus,
        lines,
        wakeups,
        max_wakeup_span: data.max_wakeup_span,
        switches,
        wakeup_events: data.wakeup_events,
        stats: data.stats.clone(),
        histogram: data.histogram.clone(),
        damage: data.damage.clone(),
    };
    Ok(postcard::to_stdvec(&meta).expect("meta serialization is infallible"))
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
