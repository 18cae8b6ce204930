//! [`KernelData`] to and from a store file: every change list, mark and
//! arrow list is a packed [`Column`] whose parts (packed blocks, block
//! offsets, first items, unpacked tail) are written as they are in memory,
//! and every block summary a plain column; all are read back in place from
//! the map. The record headers, statistics, histogram and the damaged
//! streams met go to the meta block.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::file::{Col, Mapped, MetaBlock, Packed, Writer};
use super::identity::TracesetIdentity;
use super::StoreError;
use crate::model::cpu_row::{CpuRecord, Implied};
use crate::model::damage::StreamDamage;
use crate::model::histogram::FineHistogram;
use crate::model::kernel::{KernelData, LineKind, LineRecord, ThreadRecord};
use crate::model::stats::{self, StatCell, Statistics};
use crate::render::RowId;
use traceloom_base::FastMap;
use traceloom_base::Time;
use traceloom_engine::state::CpuMode;

#[derive(Debug, Serialize, Deserialize)]
struct ThreadMeta {
    trace: u32,
    tid: i64,
    pid: i64,
    ppid: i64,
    /// Shared with the records and cells of the same name as it is read
    /// (one allocation per record otherwise).
    #[serde(deserialize_with = "stats::shared_name")]
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
    /// With only the explicit changes listed (`model::cpu_row`): the
    /// changes before each, and the row's length.
    implied: Option<(Packed, u64)>,
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

/// The meta block, as a whole: [`write`] encodes it member by member and
/// [`read_meta`] decodes it so; only the test that checks the two against
/// it decodes it whole.
#[cfg(test)]
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
    stats: StoredStats,
    histogram: FineHistogram,
    damage: Vec<StreamDamage>,
}

/// The statistics in the meta block: their members, then every thread
/// and event name once, then the cells, each naming its thread and its
/// events by their index among the names. Written from the statistics by
/// [`StatsOut`], read by [`StoredStats`]'s `Deserialize` straight into
/// them: as a [`Statistics`] is serialized, each cell repeats its names,
/// and on a trace of 80,000 thread records (400,000 cells) the meta block
/// took 36 MB rather than about 15, all on the heap as it is written.
#[derive(Debug)]
struct StoredStats(Statistics);

/// A cell of [`StoredStats`].
#[derive(Debug, Serialize, Deserialize)]
struct StoredCell {
    trace: u32,
    cpu: u32,
    pid: i64,
    tid: i64,
    mode: CpuMode,
    /// Index of its thread name.
    name: u32,
    cpu_time: u64,
    /// (index of the event name, events), by event name.
    events: Vec<(u32, u64)>,
}

/// Members of [`StoredStats`], in order.
const STORED_STATS: [&str; 7] = [
    "begin",
    "end",
    "total_events",
    "per_name",
    "trace_names",
    "names",
    "cells",
];

/// [`Statistics`] serialized as a [`StoredStats`].
struct StatsOut<'a>(&'a Statistics);

/// A cell of [`StatsOut`], with the index of each name.
struct CellOut<'a> {
    cell: &'a StatCell,
    index: &'a FastMap<&'a str, u32>,
}

impl Serialize for CellOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let c = self.cell;
        let at = |name: &str| self.index[name];
        let mut st = s.serialize_struct("StoredCell", 8)?;
        st.serialize_field("trace", &c.trace)?;
        st.serialize_field("cpu", &c.cpu)?;
        st.serialize_field("pid", &c.pid)?;
        st.serialize_field("tid", &c.tid)?;
        st.serialize_field("mode", &c.mode)?;
        st.serialize_field("name", &at(&c.name))?;
        st.serialize_field("cpu_time", &c.cpu_time)?;
        st.serialize_field("events", &EventsOut(c, self.index))?;
        st.end()
    }
}

/// The events of a cell as (name index, events) pairs.
struct EventsOut<'a>(&'a StatCell, &'a FastMap<&'a str, u32>);

impl Serialize for EventsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.events.iter().map(|(k, n)| (self.1[&**k], n)))
    }
}

/// The cells of [`StatsOut`].
struct CellsOut<'a>(&'a [StatCell], &'a FastMap<&'a str, u32>);

impl Serialize for CellsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|cell| CellOut {
            cell,
            index: self.1,
        }))
    }
}

impl Serialize for StatsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let st = self.0;
        // The names, in the order first met.
        let mut names: Vec<&str> = Vec::new();
        let mut index: FastMap<&str, u32> = FastMap::default();
        for c in &st.cells {
            for name in std::iter::once(&c.name).chain(c.events.iter().map(|(k, _)| k)) {
                let name: &str = name;
                index.entry(name).or_insert_with(|| {
                    names.push(name);
                    names.len() as u32 - 1
                });
            }
        }
        let mut out = s.serialize_struct("StoredStats", STORED_STATS.len())?;
        out.serialize_field("begin", &st.begin)?;
        out.serialize_field("end", &st.end)?;
        out.serialize_field("total_events", &st.total_events)?;
        out.serialize_field("per_name", &st.per_name)?;
        out.serialize_field("trace_names", &st.trace_names)?;
        out.serialize_field("names", &names)?;
        out.serialize_field("cells", &CellsOut(&st.cells, &index))?;
        out.end()
    }
}

impl Serialize for StoredStats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StatsOut(&self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for StoredStats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, SeqAccess, Visitor};
        struct Stats;
        impl<'de> Visitor<'de> for Stats {
            type Value = StoredStats;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("stored statistics")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StoredStats, A::Error> {
                let missing = |i| A::Error::invalid_length(i, &"7 members");
                let begin = seq.next_element()?.ok_or_else(|| missing(0))?;
                let end = seq.next_element()?.ok_or_else(|| missing(1))?;
                let total_events = seq.next_element()?.ok_or_else(|| missing(2))?;
                let per_name = seq.next_element()?.ok_or_else(|| missing(3))?;
                let trace_names = seq.next_element()?.ok_or_else(|| missing(4))?;
                let names: Vec<String> = seq.next_element()?.ok_or_else(|| missing(5))?;
                let names: Vec<Arc<str>> = names.into_iter().map(stats::intern).collect();
                let cells = seq
                    .next_element_seed(CellsIn(&names))?
                    .ok_or_else(|| missing(6))?;
                Ok(StoredStats(Statistics {
                    begin,
                    end,
                    total_events,
                    per_name,
                    cells,
                    trace_names,
                }))
            }
        }
        d.deserialize_struct("StoredStats", &STORED_STATS, Stats)
    }
}

/// Reads the cells of a [`StoredStats`] whose names are `.0`, each made
/// a [`StatCell`] as it is read.
struct CellsIn<'a>(&'a [Arc<str>]);

impl<'de> serde::de::DeserializeSeed<'de> for CellsIn<'_> {
    type Value = Vec<StatCell>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<StatCell>, D::Error> {
        use serde::de::{Error, SeqAccess, Visitor};
        struct Cells<'a>(&'a [Arc<str>]);
        impl<'de> Visitor<'de> for Cells<'_> {
            type Value = Vec<StatCell>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("statistics cells")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<StatCell>, A::Error> {
                let name = |i: u32| {
                    self.0
                        .get(i as usize)
                        .cloned()
                        .ok_or_else(|| A::Error::custom(format!("name {i} of {}", self.0.len())))
                };
                let mut numbers = EventNumbers::new(self.0);
                let mut cells = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(c) = seq.next_element::<StoredCell>()? {
                    let events = match numbers.of_ordered(&c.events) {
                        Some(counts) => counts,
                        // Not as written (a damaged or hostile store):
                        // sorted and merged by name.
                        None => {
                            let mut events = Vec::with_capacity(c.events.len());
                            for (k, n) in c.events {
                                events.push((name(k)?, n));
                            }
                            events.into_iter().collect()
                        }
                    };
                    cells.push(StatCell {
                        trace: c.trace,
                        cpu: c.cpu,
                        pid: c.pid,
                        tid: c.tid,
                        mode: c.mode,
                        name: name(c.name)?,
                        cpu_time: c.cpu_time,
                        events,
                    });
                }
                Ok(cells)
            }
        }
        d.deserialize_seq(Cells(self.0))
    }
}

/// The event counts of stored cells, made without sorting or looking
/// names up: a cell's events are written by name, each name once, so
/// the counts follow from the names' numbers in the process's table
/// ([`stats::event_id`]), each looked up once per store (on an 8 GB
/// trace's 400,000 cells, sorting and looking up every name took half
/// of the store's load).
struct EventNumbers<'a> {
    names: &'a [Arc<str>],
    /// Each name's place among the names sorted (equal names, one place).
    rank: Vec<u32>,
    /// Each name's number as an event name, once looked up (thread names
    /// never are: the table is the process's, kept for its lifetime).
    number: Vec<Option<u32>>,
}

impl<'a> EventNumbers<'a> {
    fn new(names: &'a [Arc<str>]) -> Self {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_unstable_by(|&a, &b| names[a].cmp(&names[b]));
        let mut rank = vec![0; names.len()];
        let mut place = 0;
        for (i, w) in order.iter().enumerate() {
            if i > 0 && names[order[i - 1]] != names[*w] {
                place += 1;
            }
            rank[*w] = place;
        }
        EventNumbers {
            names,
            number: vec![None; names.len()],
            rank,
        }
    }

    /// The counts of `events`, (name index, events), when they are by
    /// name, each name once, and every index names a name.
    fn of_ordered(&mut self, events: &[(u32, u64)]) -> Option<stats::EventCounts> {
        let rank = |k: u32| self.rank.get(k as usize).copied();
        let mut last = None;
        for &(k, _) in events {
            let r = rank(k)?;
            if last.is_some_and(|l| l >= r) {
                return None;
            }
            last = Some(r);
        }
        let pairs = events.iter().map(|&(k, n)| {
            let number = self.number[k as usize]
                .get_or_insert_with(|| stats::event_id(&self.names[k as usize]));
            (*number, n)
        });
        Some(stats::EventCounts::from_ordered_ids(pairs))
    }
}

/// The members of `Meta` before its thread records, borrowed.
#[derive(Serialize)]
struct MetaHead<'a> {
    head: StoreHead,
    span: (Time, Time),
    trace_names: &'a [String],
}

/// The members of `Meta` after its thread records, borrowed.
#[derive(Serialize)]
struct MetaRest<'a> {
    cpus: Vec<CpuMeta>,
    lines: Vec<LineMeta>,
    wakeups: Packed,
    max_wakeup_span: Time,
    switches: Packed,
    wakeup_events: (u64, u64),
    stats: StatsOut<'a>,
    histogram: &'a FineHistogram,
    damage: &'a [StreamDamage],
}

/// Appends the postcard encoding of `value` to `out`.
#[cfg(test)]
fn append<T: Serialize + ?Sized>(value: &T, out: Vec<u8>) -> Vec<u8> {
    postcard::to_extend(value, out).expect("meta serialization is infallible")
}

/// Writes the postcard encoding of `value` to `out`.
fn put<T: Serialize + ?Sized>(value: &T, out: &mut MetaBlock) -> std::io::Result<()> {
    // postcard reports a failed write as a full buffer: the cause (a full
    // disk, say) is the temporary file's.
    postcard::to_io(value, out)
        .map(|_| ())
        .map_err(|e| std::io::Error::other(format!("cannot write the meta block: {e}")))
}

/// Writes `data`, computed from the traces at `identity`, with `w`;
/// returns the meta block to finish the file with
/// ([`Writer::finish_with`]).
///
/// The block is the postcard encoding of a `Meta`, made member by
/// member (postcard puts a struct's members back to back, a sequence
/// after its length): each thread record's header is encoded as its
/// columns are written, and the statistics are encoded from `data`, so
/// that neither a list of the headers nor a copy of the statistics is
/// made, and the block goes to a temporary file as it is made. On a
/// trace of 80,000 thread records the copy and the headers took 75 MB
/// and the block, on the heap, up to 67 MB, the peak of `traceloom
/// index`.
pub(crate) fn write(
    w: &mut Writer,
    identity: &TracesetIdentity,
    data: &KernelData,
) -> std::io::Result<MetaBlock> {
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
    let mut meta = w.meta_block()?;
    put(&head, &mut meta)?;
    // A sequence's length is encoded as a `u64` is (a varint).
    put(&(data.threads.len() as u64), &mut meta)?;
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
            times: w.packed(&t.times)?,
            codes: w.packed(&t.codes)?,
            blocks: w.series(&t.blocks)?,
            marks: w.packed(&t.marks)?,
        };
        put(&m, &mut meta)?;
    }
    let mut cpus = Vec::with_capacity(data.cpus.len());
    for c in &data.cpus {
        cpus.push(CpuMeta {
            trace: c.trace,
            cpu: c.cpu,
            times: w.packed(&c.times)?,
            threads: w.packed(&c.threads)?,
            modes: w.packed(&c.modes)?,
            implied: match &c.implied {
                Some(i) => Some((w.packed(&i.before)?, i.len)),
                None => None,
            },
            blocks: w.series(&c.blocks)?,
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
            times: w.packed(&l.times)?,
            codes: w.packed(&l.codes)?,
            cpus: w.packed(&l.cpus)?,
            blocks: w.series(&l.blocks)?,
        });
    }
    let rest = MetaRest {
        cpus,
        lines,
        wakeups: w.packed(&data.wakeups)?,
        max_wakeup_span: data.max_wakeup_span,
        switches: w.packed(&data.switches)?,
        wakeup_events: data.wakeup_events,
        stats: StatsOut(&data.stats),
        histogram: &data.histogram,
        damage: &data.damage,
    };
    put(&rest, &mut meta)?;
    Ok(meta)
}

/// The members of `Meta` before its thread records, read.
#[derive(Deserialize)]
struct MetaHeadIn {
    head: StoreHead,
    span: (Time, Time),
    trace_names: Vec<String>,
}

/// The members of `Meta` after its thread records, read.
#[derive(Deserialize)]
struct MetaRestIn {
    cpus: Vec<CpuMeta>,
    lines: Vec<LineMeta>,
    wakeups: Packed,
    max_wakeup_span: Time,
    switches: Packed,
    wakeup_events: (u64, u64),
    stats: StoredStats,
    histogram: FineHistogram,
    damage: Vec<StreamDamage>,
}

/// Decodes the meta block `bytes` of `m` member by member, as [`write`]
/// encodes it, giving each thread record's header to `thread` as it is
/// read: a list of the headers (about 280 bytes a record) is never made,
/// nor held with the records built from it.
fn read_meta(
    m: &Mapped,
    bytes: &[u8],
    mut thread: impl FnMut(ThreadMeta) -> Result<(), StoreError>,
) -> Result<(MetaHeadIn, MetaRestIn), StoreError> {
    let bad = |e: postcard::Error| damaged(m, format!("meta block: {e}"));
    stats::with_shared_names(|| {
        let (head, mut rest) = postcard::take_from_bytes::<MetaHeadIn>(bytes).map_err(bad)?;
        let (n, after) = postcard::take_from_bytes::<u64>(rest).map_err(bad)?;
        rest = after;
        for _ in 0..n {
            let (t, after) = postcard::take_from_bytes::<ThreadMeta>(rest).map_err(bad)?;
            rest = after;
            thread(t)?;
        }
        let tail = postcard::from_bytes::<MetaRestIn>(rest).map_err(bad)?;
        Ok((head, tail))
    })
}

/// The head of the meta block of `m` (its checksum verified).
pub(crate) fn read_head(m: &Mapped) -> Result<StoreHead, StoreError> {
    let bytes = m.meta()?;
    postcard::take_from_bytes::<StoreHead>(bytes)
        .map(|(h, _)| h)
        .map_err(|e| damaged(m, format!("meta block: {e}")))
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
    let (head, rest) = read_meta(m, m.meta()?, |_| Ok(()))?;
    Ok(Summary {
        head: head.head,
        span: head.span,
        stats: rest.stats.0,
        histogram: rest.histogram,
        damage: rest.damage,
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
    let mut threads = Vec::new();
    let (head, meta) = read_meta(m, m.meta()?, |t| {
        threads.push(Arc::new(ThreadRecord {
            trace: t.trace,
            tid: t.tid,
            pid: t.pid,
            ppid: t.ppid,
            name: t.name,
            cpu: t.cpu,
            row: RowId(t.row),
            birth: t.birth,
            end: t.end,
            times: m.packed(t.times)?,
            codes: m.packed(t.codes)?,
            blocks: m.series(t.blocks)?,
            marks: m.packed(t.marks)?,
        }));
        Ok(())
    })?;
    threads.shrink_to_fit();
    let mut cpus = Vec::with_capacity(meta.cpus.len());
    for c in meta.cpus {
        cpus.push(CpuRecord {
            trace: c.trace,
            cpu: c.cpu,
            times: m.packed(c.times)?,
            threads: m.packed(c.threads)?,
            modes: m.packed(c.modes)?,
            implied: match c.implied {
                Some((before, len)) => Some(Implied {
                    before: m.packed(before)?,
                    len,
                }),
                None => None,
            },
            blocks: m.series(c.blocks)?,
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
            times: m.packed(l.times)?,
            codes: m.packed(l.codes)?,
            cpus: m.packed(l.cpus)?,
            blocks: m.series(l.blocks)?,
        });
    }
    let data = KernelData {
        span: head.span,
        trace_names: head.trace_names,
        threads,
        cpus,
        lines,
        wakeups: m.packed(meta.wakeups)?,
        max_wakeup_span: meta.max_wakeup_span,
        switches: m.packed(meta.switches)?,
        wakeup_events: meta.wakeup_events,
        stats: meta.stats.0,
        histogram: meta.histogram,
        events: head.head.events,
        damage: meta.damage,
    };
    Ok((head.head, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernel::KernelAnalysis;
    use crate::model::session::Session;
    use std::collections::BTreeMap;

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
    fn statistics_are_stored_with_their_names_once() {
        let name = |s: &str| -> Arc<str> { Arc::from(s) };
        let cell = |tid, thread: &str, events: &[(&str, u64)]| StatCell {
            trace: 0,
            cpu: 1,
            pid: -1,
            tid,
            mode: CpuMode::Syscall,
            name: name(thread),
            cpu_time: u64::MAX - tid as u64,
            events: events.iter().map(|&(k, n)| (name(k), n)).collect(),
        };
        let stats = Statistics {
            begin: -5,
            end: 1_000,
            total_events: 9,
            per_name: [("exit".to_string(), 2), ("open".to_string(), 7)].into(),
            cells: vec![
                cell(-1, "", &[]),
                cell(3, "worker", &[("open", 5), ("exit", 1)]),
                cell(4, "worker", &[("open", 2), ("exit", 1)]),
                cell(5, "open", &[]),
            ],
            trace_names: vec!["a".into(), "b".into()],
        };
        let bytes = postcard::to_stdvec(&StatsOut(&stats)).unwrap();
        let read: StoredStats = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(read.0, stats);
        // Names are read once: the cells share them.
        let (a, b) = (&read.0.cells[1], &read.0.cells[2]);
        assert!(Arc::ptr_eq(&a.name, &b.name));
        let first = |c: &StatCell| c.events.iter().next().unwrap().0.clone();
        assert!(Arc::ptr_eq(&first(a), &first(b)));
        // Each name once, whether a thread's or an event's.
        let names = ["", "worker", "exit", "open"];
        assert!(bytes.len() < postcard::to_stdvec(&stats).unwrap().len());
        let count = |s: &str| {
            bytes
                .windows(s.len())
                .filter(|w| *w == s.as_bytes())
                .count()
        };
        for n in &names[1..] {
            // The per-name totals hold "exit" and "open" once more.
            let extra = usize::from(stats.per_name.contains_key(*n));
            assert_eq!(count(n), 1 + extra, "{n}");
        }
        // A name index beyond the names is an error, not a panic.
        #[derive(Serialize)]
        struct Raw {
            begin: Time,
            end: Time,
            total_events: u64,
            per_name: BTreeMap<String, u64>,
            trace_names: Vec<String>,
            names: Vec<String>,
            cells: Vec<StoredCell>,
        }
        let raw = |name, events: Vec<(u32, u64)>| Raw {
            begin: 0,
            end: 1,
            total_events: 1,
            per_name: BTreeMap::new(),
            trace_names: Vec::new(),
            names: vec!["a".into(), "b".into()],
            cells: vec![StoredCell {
                trace: 0,
                cpu: 0,
                pid: 1,
                tid: 1,
                mode: CpuMode::User,
                name,
                cpu_time: 1,
                events,
            }],
        };
        let read = |r: &Raw| postcard::from_bytes::<StoredStats>(&postcard::to_stdvec(r).unwrap());
        assert!(read(&raw(1, vec![(0, 1)])).is_ok());
        assert!(read(&raw(2, vec![(0, 1)])).is_err());
        assert!(read(&raw(0, vec![(2, 1)])).is_err());
        assert!(read(&raw(0, vec![(0, 1), (2, 1)])).is_err());
        // Events not by name, or a name twice (not as written): sorted
        // and added up, as the counts of a pass are.
        let counts = |r: &Raw| -> Vec<(String, u64)> {
            let s = read(r).unwrap().0;
            let c = &s.cells[0].events;
            c.iter().map(|(k, n)| (k.to_string(), n)).collect()
        };
        let ab = |a, b| vec![("a".to_string(), a), ("b".to_string(), b)];
        assert_eq!(counts(&raw(0, vec![(1, 3), (0, 2)])), ab(2, 3));
        assert_eq!(counts(&raw(0, vec![(0, 2), (1, 3), (1, 4)])), ab(2, 7));
        let mut twice = raw(0, vec![(0, 2), (1, 5)]);
        twice.names = vec!["a".into(), "a".into()];
        assert_eq!(counts(&twice), vec![("a".to_string(), 7)]);
        assert_eq!(counts(&raw(0, vec![(0, 2), (1, 3)])), ab(2, 3));
    }

    #[test]
    fn the_meta_block_is_a_meta_encoded_whole() {
        let dir = std::env::temp_dir().join(format!("traceloom-codec-{}", std::process::id()));
        // Enough records for a count beyond one varint byte.
        let trace = crate::model::kernel::forking_trace(&dir.join("trace"), 20_000, 5);
        let mut session = Session::open(std::slice::from_ref(&trace)).unwrap();
        let data = KernelAnalysis::run(&mut session);
        assert!(data.threads.len() > 128, "{} records", data.threads.len());
        let identity = TracesetIdentity::of(session.traceset());
        let mut w = Writer::create(&dir.join("store")).unwrap();
        let mut block = write(&mut w, &identity, &data).unwrap();
        let bytes = block.bytes().unwrap();
        // Decoded as a whole, encoded again as a whole: the same bytes.
        let meta: Meta = stats::with_shared_names(|| postcard::from_bytes(&bytes)).unwrap();
        assert_eq!(postcard::to_stdvec(&meta).unwrap(), bytes);
        assert_eq!(meta.stats.0, data.stats);
        assert_eq!(meta.head.events, data.events);
        let names: Vec<&str> = meta.threads.iter().map(|t| &*t.name).collect();
        let want: Vec<&str> = data.threads.iter().map(|t| &*t.name).collect();
        assert_eq!(names, want);
        assert_eq!(meta.cpus.len(), data.cpus.len());
        // Decoded member by member, records built as their headers are
        // read: the same analysis, equal names shared.
        w.finish_with(identity.digest(), block).unwrap();
        let m = Mapped::open(&dir.join("store")).unwrap();
        let (head, back) = read(&m).unwrap();
        assert_eq!(head.events, data.events);
        assert_eq!(back, *data);
        let summary = read_summary(&m).unwrap();
        assert_eq!(summary.stats, data.stats);
        let mut by_name: FastMap<&str, &Arc<str>> = FastMap::default();
        let mut shared = 0;
        for t in &back.threads {
            let first = by_name.entry(&t.name).or_insert(&t.name);
            assert!(Arc::ptr_eq(first, &t.name), "{}", t.name);
            shared += usize::from(!std::ptr::eq(*first, &t.name));
        }
        assert!(shared > 0);
        drop(m);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
