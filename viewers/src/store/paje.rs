//! The analysis store of a Pajé trace: the whole-trace Pajé pass's data
//! ([`PajeData`]: types and values, containers with their state lanes,
//! events and variables, links, fine histogram, the problems met) kept on
//! disk beside the kernel tracesets' stores, so that opening the same
//! trace again maps a file instead of reading it.
//!
//! Same container and rules as the kernel's store ([`super::file`]: magic,
//! version, byte order, CRC-32 of header, columns and meta block, file
//! length; written to a temporary file, synced and renamed): every lane,
//! event, variable and link list is a packed [`Column`] written as it is
//! in memory (its packed blocks, block offsets, first items and unpacked
//! tail) and read back in place from the map. The meta block starts with
//! the same [`StoreHead`] as the kernel's, so that `cache list` and
//! `cache clear` handle both alike; its next member, [`FORMAT`], tells a
//! Pajé store from a kernel one.
//!
//! The identity of a Pajé trace is its file(s) — the main file and the
//! event files it names — path, size and modification time, as a
//! [`TracesetIdentity`] of one trace (no UUID) whose path is the main
//! file's. The store is named `<location>.paje.store`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traceloom_base::{Time, TimeRange};
use traceloom_paje::{ContainerId, Diagnostic, Location, Severity, TypeId, TypeNature};

use super::file::{Col, Mapped, Packed, Writer};
use super::identity::{FileStamp, TraceIdentity, TracesetIdentity};
use super::{StoreError, StoreHead, StoreOutcome};
use crate::model::column::Column;
use crate::model::histogram::FineHistogram;
use crate::model::paje_analysis::{
    ContainerData, Lane, LinkSeries, PajeData, TypeInfo, ValueInfo, VarSeries,
};
use crate::model::paje_session::PajeSession;
use crate::model::paje_stats::{StateTotals, ValueTotals};
use crate::model::series::Series;
use crate::model::session::OpenError;
use crate::model::steps::{BlockSummary, BLOCK};
use crate::style::Rgba;

/// What the meta block of a Pajé store holds, and how: a store of another
/// format (or a kernel store) is stale for a Pajé trace. 3: lane
/// summaries give their share of drawn time (`BlockSummary::drawn`).
pub const FORMAT: u32 = 0x5041_0003;

/// The identity of the Pajé trace whose files are `files` (the main file
/// first): one trace, named by the main file, with every file's stamp.
pub fn identity_of_files(files: &[PathBuf]) -> TracesetIdentity {
    let Some(main) = files.first() else {
        return TracesetIdentity::default();
    };
    TracesetIdentity {
        traces: vec![TraceIdentity {
            path: main.canonicalize().unwrap_or_else(|_| main.clone()),
            uuid: None,
            files: files.iter().map(|f| FileStamp::of(f)).collect(),
        }],
    }
}

/// The identity of `session`'s trace as its files are now.
pub fn identity(session: &PajeSession) -> TracesetIdentity {
    identity_of_files(&session.files())
}

/// The store file of the Pajé trace at `identity`'s location, in `dir`.
pub fn store_path(dir: &Path, identity: &TracesetIdentity) -> PathBuf {
    dir.join(format!(
        "{:016x}.paje.{}",
        identity.location(),
        super::EXTENSION
    ))
}

/// Where the parts of a packed [`Column`] are (as the kernel codec's).
#[derive(Debug, Serialize, Deserialize)]
struct TypeMeta {
    name: Arc<str>,
    /// 0 container, 1 state, 2 event, 3 variable, 4 link.
    nature: u8,
    link_ends: (u32, u32),
    color: Option<[u8; 4]>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ValueMeta {
    name: Arc<str>,
    type_id: u32,
    color: Option<[u8; 4]>,
}

#[derive(Debug, Serialize, Deserialize)]
struct LaneMeta {
    type_id: u32,
    level: u32,
    times: Packed,
    codes: Packed,
    end: Time,
    /// The lane's block summaries, as they are in memory.
    blocks: Col,
    classes: Vec<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ContainerMeta {
    id: u32,
    parent: Option<u32>,
    name: Arc<str>,
    ident: Arc<str>,
    type_id: u32,
    start: Time,
    end: Option<Time>,
    lanes: Vec<LaneMeta>,
    events: Vec<(u32, Packed)>,
    /// Type, values, end of the last value.
    variables: Vec<(u32, Packed, Time)>,
    /// The whole trace's state statistics: per state type, per value id,
    /// time (ns) and number of states ([`StateTotals`]).
    totals: Vec<(u32, ValueTotals)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct LinkMeta {
    type_id: u32,
    items: Packed,
    longest: Time,
}

#[derive(Debug, Serialize, Deserialize)]
struct DiagnosticMeta {
    error: bool,
    file: PathBuf,
    line: u64,
    byte_offset: u64,
    message: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    head: StoreHead,
    format: u32,
    span: (Time, Time),
    types: Vec<TypeMeta>,
    values: Vec<ValueMeta>,
    containers: Vec<ContainerMeta>,
    links: Vec<LinkMeta>,
    histogram: FineHistogram,
    diagnostics: Vec<DiagnosticMeta>,
    /// [`StateTotals::extent`].
    totals_extent: (Time, Time),
}

fn color_out(c: Option<Rgba>) -> Option<[u8; 4]> {
    c.map(|c| [c.r, c.g, c.b, c.a])
}

fn color_in(c: Option<[u8; 4]>) -> Option<Rgba> {
    c.map(|[r, g, b, a]| Rgba { r, g, b, a })
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes `data`'s columns with `w`; returns the meta block.
fn write(w: &mut Writer, identity: &TracesetIdentity, data: &PajeData) -> std::io::Result<Vec<u8>> {
    // The whole trace's statistics, computed once here (a walk over every
    // change: ~1.3 s on a 1 GB trace) rather than at each open.
    let totals = match &data.totals {
        Some(t) if t.containers.len() == data.containers.len() => t.clone(),
        _ => Arc::new(data.state_totals()),
    };
    let mut containers = Vec::with_capacity(data.containers.len());
    for (c, kept) in data.containers.iter().zip(&totals.containers) {
        let mut lanes = Vec::with_capacity(c.lanes.len());
        for l in &c.lanes {
            lanes.push(LaneMeta {
                type_id: l.type_id.0,
                level: l.level,
                times: w.packed(&l.times)?,
                codes: w.packed(&l.codes)?,
                end: l.end,
                blocks: w.series(&l.blocks)?,
                classes: l.classes.to_vec(),
            });
        }
        let mut events = Vec::with_capacity(c.events.len());
        for (t, e) in &c.events {
            events.push((t.0, w.packed(e)?));
        }
        let mut variables = Vec::with_capacity(c.variables.len());
        for v in &c.variables {
            variables.push((v.type_id.0, w.packed(&v.items)?, v.end));
        }
        containers.push(ContainerMeta {
            id: c.id.0,
            parent: c.parent.map(|p| p.0),
            name: c.name.clone(),
            ident: c.ident.clone(),
            type_id: c.type_id.0,
            start: c.start,
            end: c.end,
            lanes,
            events,
            variables,
            totals: kept.iter().map(|(t, v)| (t.0, v.clone())).collect(),
        });
    }
    let mut links = Vec::with_capacity(data.links.len());
    for l in data.links.iter() {
        links.push(LinkMeta {
            type_id: l.type_id.0,
            items: w.packed(&l.items)?,
            longest: l.longest,
        });
    }
    let meta = Meta {
        head: StoreHead {
            identity: identity.clone(),
            created_unix_s: now_unix_s(),
            events: data.events_read,
        },
        format: FORMAT,
        span: (data.span.start, data.span.end),
        types: data
            .types
            .iter()
            .map(|t| {
                let (nature, link_ends) = match t.nature {
                    TypeNature::Container => (0, (0, 0)),
                    TypeNature::State => (1, (0, 0)),
                    TypeNature::Event => (2, (0, 0)),
                    TypeNature::Variable => (3, (0, 0)),
                    TypeNature::Link { start, end } => (4, (start.0, end.0)),
                };
                TypeMeta {
                    name: t.name.clone(),
                    nature,
                    link_ends,
                    color: color_out(t.color),
                }
            })
            .collect(),
        values: data
            .values
            .iter()
            .map(|v| ValueMeta {
                name: v.name.clone(),
                type_id: v.type_id.0,
                color: color_out(v.color),
            })
            .collect(),
        containers,
        links,
        histogram: (*data.histogram).clone(),
        diagnostics: data
            .diagnostics
            .iter()
            .map(|d| DiagnosticMeta {
                error: d.severity == Severity::Error,
                file: d.location.file.to_path_buf(),
                line: d.location.line,
                byte_offset: d.location.byte_offset,
                message: d.message.clone(),
            })
            .collect(),
        totals_extent: totals.extent,
    };
    Ok(postcard::to_stdvec(&meta).expect("meta serialization is infallible"))
}

fn damaged(m: &Mapped, reason: String) -> StoreError {
    StoreError::Damaged {
        path: m.path().to_path_buf(),
        reason,
    }
}

/// The analysis held by `m` (its checksums verified by the caller), with
/// its head; [`StoreError::Stale`] when it is not a Pajé store of this
/// format.
fn read(m: &Mapped) -> Result<(StoreHead, PajeData), StoreError> {
    let bytes = m.meta()?;
    let meta: Meta = match postcard::from_bytes(bytes) {
        Ok(meta) => meta,
        Err(e) => {
            // A kernel store (or another format) at this name: stale, not
            // damaged.
            return Err(match postcard::take_from_bytes::<(StoreHead, u32)>(bytes) {
                Ok(((_, f), _)) if f != FORMAT => StoreError::Stale {
                    path: m.path().to_path_buf(),
                    reason: format!("not a Pajé store of format {FORMAT:#x}"),
                },
                _ => damaged(m, format!("meta block: {e}")),
            });
        }
    };
    if meta.format != FORMAT {
        return Err(StoreError::Stale {
            path: m.path().to_path_buf(),
            reason: format!(
                "Pajé store format {:#x}, this build reads {FORMAT:#x}",
                meta.format
            ),
        });
    }
    let mut containers = Vec::with_capacity(meta.containers.len());
    let mut totals = StateTotals {
        extent: meta.totals_extent,
        containers: Vec::with_capacity(meta.containers.len()),
    };
    for c in meta.containers {
        totals
            .containers
            .push(c.totals.into_iter().map(|(t, v)| (TypeId(t), v)).collect());
        let mut lanes = Vec::with_capacity(c.lanes.len());
        for l in c.lanes {
            let times: Column<Time> = m.packed(l.times)?;
            let blocks: Series<BlockSummary> = m.series(l.blocks)?;
            // A render reads the change after each summarised block.
            if blocks.len() > times.len().saturating_sub(1) / BLOCK {
                return Err(damaged(
                    m,
                    format!("lane at {}: more summaries than blocks", l.blocks.offset),
                ));
            }
            lanes.push(Lane {
                type_id: TypeId(l.type_id),
                level: l.level,
                times,
                codes: m.packed(l.codes)?,
                end: l.end,
                blocks,
                classes: Arc::from(l.classes),
            });
        }
        let mut events = Vec::with_capacity(c.events.len());
        for (t, e) in c.events {
            events.push((TypeId(t), m.packed(e)?));
        }
        let mut variables = Vec::with_capacity(c.variables.len());
        for (t, items, end) in c.variables {
            variables.push(VarSeries {
                type_id: TypeId(t),
                items: m.packed(items)?,
                end,
            });
        }
        containers.push(Arc::new(ContainerData {
            id: ContainerId(c.id),
            parent: c.parent.map(ContainerId),
            name: c.name,
            ident: c.ident,
            type_id: TypeId(c.type_id),
            start: c.start,
            end: c.end,
            lanes,
            events,
            variables,
        }));
    }
    let mut links = Vec::with_capacity(meta.links.len());
    for l in meta.links {
        links.push(LinkSeries {
            type_id: TypeId(l.type_id),
            items: m.packed(l.items)?,
            longest: l.longest,
        });
    }
    let types = meta
        .types
        .into_iter()
        .map(|t| TypeInfo {
            name: t.name,
            nature: match t.nature {
                0 => TypeNature::Container,
                1 => TypeNature::State,
                2 => TypeNature::Event,
                3 => TypeNature::Variable,
                _ => TypeNature::Link {
                    start: TypeId(t.link_ends.0),
                    end: TypeId(t.link_ends.1),
                },
            },
            color: color_in(t.color),
        })
        .collect::<Vec<_>>();
    let values = meta
        .values
        .into_iter()
        .map(|v| ValueInfo {
            name: v.name,
            type_id: TypeId(v.type_id),
            color: color_in(v.color),
        })
        .collect::<Vec<_>>();
    let diagnostics = meta
        .diagnostics
        .into_iter()
        .map(|d| Diagnostic {
            severity: if d.error {
                Severity::Error
            } else {
                Severity::Warning
            },
            location: Location {
                file: Arc::from(d.file.as_path()),
                line: d.line,
                byte_offset: d.byte_offset,
            },
            message: d.message,
        })
        .collect::<Vec<_>>();
    let span = TimeRange::new(meta.span.0, meta.span.1);
    let data = PajeData {
        span,
        reached: span.end,
        complete: true,
        types: Arc::from(types),
        values: Arc::from(values),
        containers: Arc::from(containers),
        links: Arc::from(links),
        histogram: Arc::new(meta.histogram),
        events_read: meta.head.events,
        diagnostics: Arc::from(diagnostics),
        totals: Some(Arc::new(totals)),
    };
    Ok((meta.head, data))
}

/// A Pajé analysis read from a store.
#[derive(Debug)]
pub struct Loaded {
    /// The analysis (its columns read in place from the map).
    pub data: PajeData,
    /// What the store says of itself.
    pub head: StoreHead,
    /// The store file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Reads the store of the Pajé trace at `identity` from `dir`, if it is
/// valid for its files as they are now.
pub fn load(dir: &Path, identity: &TracesetIdentity) -> Result<Loaded, StoreError> {
    let path = store_path(dir, identity);
    let m = Mapped::open(&path)?;
    let stale = || StoreError::Stale {
        path: path.clone(),
        reason: "the trace files changed since it was written".to_string(),
    };
    if m.header.digest != identity.digest() {
        return Err(stale());
    }
    m.verify_columns()?;
    let (head, data) = read(&m)?;
    if head.identity != *identity {
        return Err(stale());
    }
    Ok(Loaded {
        data,
        head,
        bytes: m.len(),
        path,
    })
}

/// Writes `data`, the complete analysis of the Pajé trace at `identity`,
/// as its store in `dir` (atomically replacing any previous one); returns
/// the file and its size.
pub fn save(
    dir: &Path,
    identity: &TracesetIdentity,
    data: &PajeData,
) -> Result<(PathBuf, u64), StoreError> {
    let path = store_path(dir, identity);
    let io = |e| StoreError::Io {
        path: path.clone(),
        source: e,
    };
    let mut w = Writer::create(&path).map_err(io)?;
    let meta = write(&mut w, identity, data).map_err(io)?;
    let bytes = w.finish(identity.digest(), &meta).map_err(io)?;
    Ok((path, bytes))
}

/// The analysis in the store just written at `path`, read in place (its
/// checksums are not verified again).
pub fn reopen(path: &Path) -> Result<PajeData, StoreError> {
    let m = Mapped::open(path)?;
    read(&m).map(|(_, data)| data)
}

/// The whole-trace Pajé analysis of `session`'s trace: from its store in
/// `dir` when valid, else computed by [`PajeData::analyse`] (spilling to
/// `dir`) and stored; the analysis returned then reads the new store in
/// place. Fails only when the pass cannot complete.
pub fn load_or_build(
    session: &mut PajeSession,
    dir: &Path,
) -> Result<(Arc<PajeData>, StoreOutcome), OpenError> {
    load_or_build_with(session, dir, |s| PajeData::analyse(s).map(|(d, _)| d))
}

/// [`load_or_build`] with the analysis done by `analyse` (a caller showing
/// progress).
pub fn load_or_build_with(
    session: &mut PajeSession,
    dir: &Path,
    analyse: impl FnOnce(&mut PajeSession) -> Result<PajeData, OpenError>,
) -> Result<(Arc<PajeData>, StoreOutcome), OpenError> {
    let identity = identity(session);
    match load(dir, &identity) {
        Ok(l) => Ok((
            Arc::new(l.data),
            StoreOutcome::Loaded {
                path: l.path,
                bytes: l.bytes,
            },
        )),
        Err(why) => {
            // The pass moves its finished chunks to a spill file in `dir`;
            // the store is written from them and read back in place.
            let before = session.spill_dir().map(Path::to_path_buf);
            session.set_spill_dir(Some(dir.to_path_buf()));
            let analysed = analyse(session);
            session.set_spill_dir(before);
            let mut data = analysed?;
            let written = match save(dir, &identity, &data) {
                Ok((path, _)) => {
                    if let Ok(mapped) = reopen(&path) {
                        data = mapped;
                    }
                    None
                }
                Err(e) => Some(e),
            };
            let outcome = match why {
                StoreError::Missing(_) => StoreOutcome::Built(written),
                why => StoreOutcome::Rebuilt(why, written),
            };
            Ok((Arc::new(data), outcome))
        }
    }
}
