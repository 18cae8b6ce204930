//! The public entry point: open traces and index their streams. Reading
//! the merged message sequence ([`Traceset::messages`], a
//! [`Cursor`](crate::Cursor)) is the merge layer's, above this one.
//!
//! ```no_run
//! use traceloom_ctf::{Message, Traceset};
//! let ts = Traceset::open(&["/path/to/trace".into()])?;
//! // `--begin`/`--end`: bounds in ns from the clock origin.
//! let mut cur = ts.messages_between(Some(1_700_000_000_000_000_000), None);
//! while let Some(m) = cur.next() {
//!     if let Message::Event(e) = m? {
//!         println!("{:?} {}", e.timestamp_ns(), e.name());
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cmp::Ordering;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{OpenError, ReadError};
use crate::fs::discover::{discover, Duplicate};
use crate::schema::{CompiledStream, CompiledTrace};
use crate::stream::index::{index_file, FileIndex};
use crate::stream::packet::PacketInfo;
use crate::stream::{FileBytes, StreamData};
use crate::trace::{StreamInfo, TraceInfo};
use traceloom_tsdl::ir::{EnvValue, TraceClass};

/// A trace of the traceset with its compiled decoder.
#[derive(Debug)]
pub(crate) struct TraceData {
    pub(crate) info: TraceInfo,
    pub(crate) compiled: CompiledTrace,
}

/// The traces and streams of a [`Traceset`], shared with decoding threads.
#[doc(hidden)]
#[derive(Debug)]
pub struct TracesetData {
    pub(crate) traces: Vec<TraceData>,
    pub(crate) streams: Vec<StreamData>,
    /// Paths that led to a directory or file already read (links).
    pub(crate) duplicates: Vec<Duplicate>,
}

impl TracesetData {
    pub(crate) fn stream_class(&self, sd: &StreamData) -> Option<&CompiledStream> {
        self.traces[sd.info.trace]
            .compiled
            .streams
            .get(&sd.info.class_id)
    }
}

/// An opened set of traces, indexed and ready to be read.
#[derive(Debug)]
pub struct Traceset {
    pub(crate) data: Arc<TracesetData>,
    /// Worker threads decoding ahead of the merge.
    threads: usize,
}

impl std::ops::Deref for Traceset {
    type Target = TracesetData;
    fn deref(&self) -> &TracesetData {
        &self.data
    }
}

/// Default number of decoding threads: `TRACELOOM_DECODE_THREADS` when
/// set, else one less than the available cores.
fn default_threads() -> usize {
    if let Some(n) = std::env::var("TRACELOOM_DECODE_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1))
}

/// Loads the metadata of a trace directory.
pub type MetadataLoader<'l> = dyn Fn(&Path) -> Result<TraceClass, String> + 'l;

/// Reads `dir/metadata` with the TSDL parser.
pub fn load_metadata(dir: &Path) -> Result<TraceClass, String> {
    traceloom_tsdl::read_metadata_file(&dir.join("metadata")).map_err(|e| e.to_string())
}

/// babeltrace2's trace name: `hostname` and the relative path, joined by
/// `/`.
fn trace_name(class: &TraceClass, relative: Option<&str>) -> Option<String> {
    let host = class.env.iter().find_map(|(k, v)| match (k.as_str(), v) {
        ("hostname", EnvValue::Str(s)) => Some(s.as_str()),
        _ => None,
    });
    match (host, relative) {
        (Some(h), Some(r)) => Some(format!("{h}/{r}")),
        (Some(h), None) => Some(h.to_string()),
        (None, Some(r)) => Some(r.to_string()),
        (None, None) => None,
    }
}

/// One stream file, indexed.
struct IndexedFile {
    path: PathBuf,
    bytes: FileBytes,
    index: FileIndex,
}

fn map_file(path: &Path) -> Result<FileBytes, std::io::Error> {
    let f = File::open(path)?;
    if f.metadata()?.len() == 0 {
        return Ok(FileBytes::Empty);
    }
    // SAFETY: the trace files are read-only inputs; a concurrent
    // truncation by another process is outside what a trace reader can
    // defend against (it is the documented memmap2 caveat).
    let m = unsafe { Mmap::map(&f)? };
    // Where the page cache holds the file in 2 MB folios (as after a
    // first read through such a mapping: the kernel's readahead then makes
    // them), each is mapped with one page-table entry: far fewer page
    // faults and TLB misses for a whole read (docs/performance.md, "Page
    // cache"). Only advice: refused, nothing changes.
    #[cfg(target_os = "linux")]
    let _ = m.advise(memmap2::Advice::HugePage);
    Ok(FileBytes::Mapped(m))
}

impl Traceset {
    /// Opens the traces found under `paths` (trace directories or trees
    /// of traces), parsing their metadata with the TSDL parser.
    pub fn open(paths: &[PathBuf]) -> Result<Traceset, OpenError> {
        Self::open_with(paths, &load_metadata)
    }

    /// Like [`Traceset::open`] with a custom metadata loader.
    pub fn open_with(paths: &[PathBuf], load: &MetadataLoader<'_>) -> Result<Traceset, OpenError> {
        let discovery = discover(paths)?;
        let found = discovery.traces;
        let mut traces = Vec::new();
        let mut streams: Vec<StreamData> = Vec::new();
        for (ti, ft) in found.into_iter().enumerate() {
            let class = load(&ft.dir).map_err(|message| OpenError::Metadata {
                path: ft.dir.join("metadata"),
                message,
            })?;
            let class = Arc::new(class);
            let compiled =
                CompiledTrace::new(class.clone()).map_err(|source| OpenError::Schema {
                    path: ft.dir.clone(),
                    source,
                })?;
            let info = TraceInfo {
                index: ti,
                path: ft.dir.clone(),
                name: trace_name(&class, ft.relative.as_deref()),
                class,
            };
            let files = ft.stream_files.iter().map(|path| {
                let bytes = map_file(path).map_err(|source| OpenError::Io {
                    path: path.clone(),
                    source,
                })?;
                Ok((path.clone(), bytes))
            });
            let files: Vec<(PathBuf, FileBytes)> = files.collect::<Result<_, OpenError>>()?;
            let indexed: Vec<IndexedFile> = files
                .into_iter()
                .map(|(path, bytes)| {
                    let index = index_file(&compiled, 0, &path, &bytes);
                    IndexedFile { path, bytes, index }
                })
                .collect();
            let first_stream = streams.len();
            group_streams(ti, &compiled, indexed, &mut streams);
            // babeltrace2 numbers streams without an instance id in the
            // order of their first file's path.
            let mut next_id = 0;
            for s in &mut streams[first_stream..] {
                if s.auto_id {
                    s.info.id = next_id;
                    next_id += 1;
                }
            }
            traces.push(TraceData { info, compiled });
        }
        for (i, s) in streams.iter_mut().enumerate() {
            s.info.index = i;
        }
        let mut data = TracesetData {
            traces,
            streams,
            duplicates: discovery.duplicates,
        };
        data.rank_streams();
        Ok(Traceset {
            data: Arc::new(data),
            threads: default_threads(),
        })
    }

    /// Sets the number of threads decoding streams ahead of the merge
    /// (0: the reading thread decodes everything). The message sequence
    /// does not depend on it.
    pub fn set_decode_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// The number of decoding threads cursors use.
    pub fn decode_threads(&self) -> usize {
        self.threads
    }

    /// Another handle on the same opened traces (nothing is re-read or
    /// copied) whose cursors use `threads` decoding threads: e.g. none for
    /// short reads after a seek, where starting threads costs more than
    /// they save.
    pub fn with_decode_threads(&self, threads: usize) -> Traceset {
        Traceset {
            data: Arc::clone(&self.data),
            threads,
        }
    }
}

impl TracesetData {
    /// Orders streams like babeltrace2's muxer breaks timestamp ties:
    /// traces with a UUID first, by UUID; then by trace name (named first);
    /// then stream class id, then stream id.
    fn rank_streams(&mut self) {
        let mut order: Vec<usize> = (0..self.streams.len()).collect();
        let key = |i: usize| {
            let s = &self.streams[i];
            let t = &self.traces[s.info.trace].info;
            (t.class.uuid, t.name.clone(), s.info.class_id, s.info.id, i)
        };
        order.sort_by(|&a, &b| {
            let (ua, na, ca, ia, xa) = key(a);
            let (ub, nb, cb, ib, xb) = key(b);
            let by_option = |x: Ordering| x;
            by_option(match (ua, ub) {
                (Some(a), Some(b)) => a.cmp(&b),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then_with(|| match (&na, &nb) {
                (Some(a), Some(b)) => a.as_bytes().cmp(b.as_bytes()),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            })
            .then(ca.cmp(&cb))
            .then(ia.cmp(&ib))
            .then(xa.cmp(&xb))
        });
        for (rank, i) in order.into_iter().enumerate() {
            self.streams[i].rank = rank as u32;
        }
    }
}

impl Traceset {
    /// The traces, in discovery order.
    pub fn traces(&self) -> impl ExactSizeIterator<Item = &TraceInfo> {
        self.traces.iter().map(|t| &t.info)
    }

    /// The paths found while looking for traces that lead to a directory
    /// or stream file already read (through symbolic links, or named by two
    /// inputs): each was read once. Worth a warning.
    pub fn duplicates(&self) -> &[Duplicate] {
        &self.duplicates
    }

    /// The streams of all traces.
    pub fn streams(&self) -> impl ExactSizeIterator<Item = &StreamInfo> {
        self.streams.iter().map(|s| &s.info)
    }

    /// The packet index of stream `stream` ([`StreamInfo::index`]).
    pub fn packets(&self, stream: usize) -> &[PacketInfo] {
        self.streams.get(stream).map_or(&[], |s| &s.packets)
    }

    /// Total bytes of all stream files.
    pub fn total_bytes(&self) -> u64 {
        self.streams
            .iter()
            .flat_map(|s| s.maps.iter())
            .map(|m| m.len() as u64)
            .sum()
    }

    /// The time range covered by the packet index, in ns (smallest
    /// `timestamp_begin`, largest `timestamp_end`).
    pub fn time_range_ns(&self) -> Option<(i64, i64)> {
        let b = self
            .streams
            .iter()
            .flat_map(|s| s.packets.iter())
            .filter_map(|p| p.begin_ns)
            .min()?;
        let e = self
            .streams
            .iter()
            .flat_map(|s| s.packets.iter())
            .filter_map(|p| p.end_ns)
            .max()?;
        Some((b, e))
    }
}

/// Groups a trace's indexed files into streams: files with the same stream
/// class and instance id whose first packet has a timestamp form one
/// stream (LTTng trace file rotation), their packets merged by
/// `timestamp_begin` as babeltrace2 does; any other file is a stream by
/// itself. Streams are ordered by their first file's path.
fn group_streams(
    trace: usize,
    compiled: &CompiledTrace,
    files: Vec<IndexedFile>,
    out: &mut Vec<StreamData>,
) {
    let mut groups: Vec<StreamData> = Vec::new();
    for f in files {
        let first = f.index.packets.first().copied();
        let class_id = first
            .map(|p| p.stream_class)
            .or_else(|| compiled.streams.keys().next().copied())
            .unwrap_or(0);
        let instance = first.and_then(|p| p.instance_id);
        let groupable = first.is_some_and(|p| p.instance_id.is_some() && p.begin_ns.is_some());
        let index_error = match f.index.error {
            Some(ReadError::Corrupt { path, offset, kind }) => Some((path, offset, kind)),
            _ => None,
        };
        let existing = groupable
            .then(|| {
                groups.iter_mut().find(|g| {
                    g.info.class_id == class_id
                        && g.info.instance_id == instance
                        && g.packets.first().is_some_and(|p| p.begin_ns.is_some())
                })
            })
            .flatten();
        match existing {
            Some(g) => {
                let file_no = g.maps.len() as u32;
                g.maps.push(f.bytes);
                g.info.files.push(f.path);
                for mut p in f.index.packets {
                    p.file = file_no;
                    insert_sorted(&mut g.packets, p);
                }
                if g.index_error.is_none() {
                    g.index_error = index_error;
                }
            }
            None => {
                let packets = f.index.packets;
                groups.push(StreamData {
                    info: StreamInfo {
                        index: 0,
                        trace,
                        class_id,
                        instance_id: instance,
                        id: instance.unwrap_or(0),
                        files: vec![f.path],
                    },
                    maps: vec![f.bytes],
                    packets,
                    index_error,
                    rank: 0,
                    auto_id: !groupable,
                });
            }
        }
    }
    groups.sort_by(|a, b| a.info.files[0].cmp(&b.info.files[0]));
    out.extend(groups);
}

/// Inserts a packet into a stream's packet list sorted by begin time,
/// before packets with the same begin time, skipping exact duplicates
/// (overlapping snapshots), like babeltrace2's
/// `ds_index_insert_ds_index_entry_sorted`.
fn insert_sorted(packets: &mut Vec<PacketInfo>, p: PacketInfo) {
    let key = p.begin_ns.unwrap_or(i64::MIN);
    let i = packets.partition_point(|o| o.begin_ns.unwrap_or(i64::MIN) < key);
    if let Some(o) = packets.get(i) {
        if o.size == p.size
            && o.ts_begin == p.ts_begin
            && o.ts_end == p.ts_end
            && o.seq_num == p.seq_num
        {
            return;
        }
    }
    packets.insert(i, p);
}
