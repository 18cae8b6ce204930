//! [`KernelData`] to and from a store file: every change list, summary,
//! mark and arrow list becomes a column; the record headers, statistics
//! and histogram go to the meta block.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

use super::file::{Col, Mapped, Writer};
use super::identity::TracesetIdentity;
use super::StoreError;
use crate::model::histogram::FineHistogram;
use crate::model::kernel::{
    ArrowRecord, CpuRecord, KernelData, LineKind, LineRecord, ThreadRecord,
};
use crate::model::series::Series;
use crate::model::stats::Statistics;
use crate::render::RowId;
use traceloom_base::Time;

/// A [`Blocks`](crate::model::steps::Blocks) entry as stored.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct BlockRec {
    start: Time,
    longest: u32,
    class: u8,
    pad: [u8; 3],
}

/// A drawn event of a thread as stored.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct MarkRec {
    time: Time,
    kind: u8,
    pad: [u8; 7],
}

/// An [`ArrowRecord`] as stored.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct ArrowRec {
    from_time: Time,
    to_time: Time,
    from: u32,
    to: u32,
}

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
    times: Col,
    codes: Col,
    blocks: Col,
    marks: Col,
}

#[derive(Debug, Serialize, Deserialize)]
struct CpuMeta {
    trace: u32,
    cpu: u32,
    times: Col,
    threads: Col,
    modes: Col,
    blocks: Col,
}

#[derive(Debug, Serialize, Deserialize)]
struct LineMeta {
    trace: u32,
    /// 0: IRQ, 1: softirq.
    kind: u8,
    number: u64,
    name: Option<Arc<str>>,
    times: Col,
    codes: Col,
    cpus: Col,
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
    wakeups: Col,
    max_wakeup_span: Time,
    switches: Col,
    wakeup_events: (u64, u64),
    stats: Statistics,
    histogram: FineHistogram,
}

/// Writes `s` as a column, each chunk converted by `f`.
fn mapped_column<T, R: Pod>(
    w: &mut Writer,
    s: &Series<T>,
    f: impl Fn(&T) -> R,
) -> std::io::Result<Col> {
    let converted: Vec<Vec<R>> = s.chunks().map(|c| c.iter().map(&f).collect()).collect();
    w.column(converted.iter().map(|c| &c[..]))
}

fn plain_column<T: Pod>(w: &mut Writer, s: &Series<T>) -> std::io::Result<Col> {
    w.column(s.chunks())
}

fn block_rec(&(start, class, longest): &(Time, u8, u32)) -> BlockRec {
    BlockRec {
        start,
        longest,
        class,
        pad: [0; 3],
    }
}

fn arrow_rec(a: &ArrowRecord) -> ArrowRec {
    ArrowRec {
        from_time: a.from_time,
        to_time: a.to_time,
        from: a.from,
        to: a.to,
    }
}

/// Writes `data`, computed from the traces at `identity`, with `w`;
/// returns the meta block to finish the file with.
pub fn write(
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
            times: plain_column(w, &t.times)?,
            codes: plain_column(w, &t.codes)?,
            blocks: mapped_column(w, &t.blocks, block_rec)?,
            marks: mapped_column(w, &t.marks, |&(time, kind)| MarkRec {
                time,
                kind,
                pad: [0; 7],
            })?,
        });
    }
    let mut cpus = Vec::with_capacity(data.cpus.len());
    for c in &data.cpus {
        cpus.push(CpuMeta {
            trace: c.trace,
            cpu: c.cpu,
            times: plain_column(w, &c.times)?,
            threads: plain_column(w, &c.threads)?,
            modes: plain_column(w, &c.modes)?,
            blocks: mapped_column(w, &c.blocks, block_rec)?,
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
            times: plain_column(w, &l.times)?,
            codes: plain_column(w, &l.codes)?,
            cpus: plain_column(w, &l.cpus)?,
            blocks: mapped_column(w, &l.blocks, block_rec)?,
        });
    }
    let wakeups = mapped_column(w, &data.wakeups, arrow_rec)?;
    let switches = mapped_column(w, &data.switches, arrow_rec)?;
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
    };
    Ok(postcard::to_stdvec(&meta).expect("meta serialization is infallible"))
}

/// The head of the meta block of `m` (its checksum verified).
pub fn read_head(m: &Mapped) -> Result<StoreHead, StoreError> {
    let bytes = m.meta()?;
    postcard::take_from_bytes::<StoreHead>(bytes)
        .map(|(h, _)| h)
        .map_err(|e| damaged(m, format!("meta block: {e}")))
}

fn plain<T: Pod>(m: &Mapped, c: Col) -> Result<Series<T>, StoreError> {
    Ok(Series::from_slice(m.column(c)?))
}

fn damaged(m: &Mapped, reason: String) -> StoreError {
    StoreError::Damaged {
        path: m.path().to_path_buf(),
        reason,
    }
}

/// The analysis held by `m` (its checksums verified by the caller), with
/// its head.
pub fn read(m: &Mapped) -> Result<(StoreHead, KernelData), StoreError> {
    let meta: Meta =
        postcard::from_bytes(m.meta()?).map_err(|e| damaged(m, format!("meta block: {e}")))?;
    let blocks = |c: Col| -> Result<Series<(Time, u8, u32)>, StoreError> {
        let recs: &[BlockRec] = m.column(c)?;
        Ok(recs.iter().map(|b| (b.start, b.class, b.longest)).collect())
    };
    let arrows = |c: Col| -> Result<Series<ArrowRecord>, StoreError> {
        let recs: &[ArrowRec] = m.column(c)?;
        Ok(recs
            .iter()
            .map(|a| ArrowRecord {
                from_time: a.from_time,
                from: a.from,
                to_time: a.to_time,
                to: a.to,
            })
            .collect())
    };
    let mut threads = Vec::with_capacity(meta.threads.len());
    for t in meta.threads {
        let marks: &[MarkRec] = m.column(t.marks)?;
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
            times: plain(m, t.times)?,
            codes: plain(m, t.codes)?,
            blocks: blocks(t.blocks)?,
            marks: marks.iter().map(|k| (k.time, k.kind)).collect(),
        });
    }
    let mut cpus = Vec::with_capacity(meta.cpus.len());
    for c in meta.cpus {
        cpus.push(CpuRecord {
            trace: c.trace,
            cpu: c.cpu,
            times: plain(m, c.times)?,
            threads: plain(m, c.threads)?,
            modes: plain(m, c.modes)?,
            blocks: blocks(c.blocks)?,
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
            times: plain(m, l.times)?,
            codes: plain(m, l.codes)?,
            cpus: plain(m, l.cpus)?,
            blocks: blocks(l.blocks)?,
        });
    }
    let data = KernelData {
        span: meta.span,
        trace_names: meta.trace_names,
        threads,
        cpus,
        lines,
        wakeups: arrows(meta.wakeups)?,
        max_wakeup_span: meta.max_wakeup_span,
        switches: arrows(meta.switches)?,
        wakeup_events: meta.wakeup_events,
        stats: meta.stats,
        histogram: meta.histogram,
        events: meta.head.events,
    };
    Ok((meta.head, data))
}
