//! Checkpoints: the full traceset state saved every N events, with the
//! position and global rank of the event it precedes, and their cache file.
//!
//! A checkpoint pass is an ordinary events request (LOW priority, so it
//! runs in the background behind what the user looks at) whose hook, at
//! HIGH hook priority, sees the state *before* each event and keeps a copy
//! every [`DEFAULT_INTERVAL`] events. Seeking by time then restores the
//! nearest earlier checkpoint and replays; the event rank of any position is
//! the nearest checkpoint's rank plus the events in between. The same pass
//! builds the traceset's [`SeekIndex`], stored alongside, which makes every
//! seek — to a checkpoint too — land within a few hundred events of its
//! target in each stream, so checkpoints need not sit at packet starts.
//!
//! Denser checkpoints mean shorter replays but a bigger cache:
//! [`load_or_build`] keeps the cache within [`CACHE_BUDGET`] of the trace
//! size by dropping every other checkpoint as long as it does not fit
//! ([`fit_to_budget`]).
//!
//! In the cache file each checkpoint is a [`StateDelta`] against the one
//! before it (threads that did not change are not repeated, times are
//! stored relative to the trace's time), and the whole payload is
//! deflate-compressed: what makes checkpoints every few thousand events fit
//! the budget. Loading decodes them all, in order, into full states: the
//! checkpoints in memory are plain states, so restoring one (what every
//! seek with state does) is a clone, never a walk through deltas.
//!
//! The checkpoints are persisted outside the trace directory, in the XDG
//! cache (`$XDG_CACHE_HOME/traceloom/` or `~/.cache/traceloom/`), in a file
//! named after the traceset's fingerprint. The file is versioned and
//! checksummed; a stale (traces changed) or damaged file is detected and
//! the checkpoints are rebuilt.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use traceloom_ctf::Traceset;
use traceloom_hooks::{Flow, HookContext, Priority};

use crate::request::{
    Budget, EventSource, EventsRequest, OwnerId, Scheduler, SchedulerConfig, Start,
};
use crate::seek_index::{self, SeekIndex, SeekIndexBuilder, SeekIndexCursor};
use crate::source::{CtfCurrent, CtfPosition, CtfSource};
use crate::state::codec::StateDelta;
use crate::state::{self, TracesetState};

/// Events between two checkpoints, by default.
/// Restoring a checkpoint and replaying to a random time replays half the
/// interval on average, at some 0.15 µs an event: 4,000 keeps a seek with
/// state well under a millisecond.
pub const DEFAULT_INTERVAL: u64 = 4_000;

/// Most checkpoints a window or a command keeps from a cache
/// ([`load_at_most`]): twice the ~512 whole states that
/// `traceloom index` and the window write for a large trace, so that a
/// cache of denser checkpoints (written at the engine's default interval
/// by a benchmark, say) is thinned as it is read instead of filling the
/// memory.
pub const LOADED_AT_MOST: usize = 1024;

/// The largest cache [`load_or_build`] writes, as a fraction of the trace
/// size (the traceset-engine issue asks for less than 1 %).
pub const CACHE_BUDGET: f64 = 0.008;

/// One checkpoint: the state before the event at `position`, which is the
/// `rank`-th event (from 0) of the traceset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Number of events before `position`.
    pub rank: u64,
    /// Where the event is.
    pub position: CtfPosition,
    /// The state before it.
    pub state: TracesetState,
}

/// What a checkpoint pass produces, and the cache stores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checkpoints {
    /// The state checkpoints, in rank order.
    pub states: Vec<Checkpoint>,
    /// The traceset's seek index (give it to [`CtfSource::set_seek_index`]).
    pub seek_index: SeekIndex,
}

/// What a checkpoint pass collects (the request's data).
#[derive(Debug)]
pub struct CheckpointBuild {
    interval: u64,
    seen: u64,
    since: u64,
    /// The checkpoints so far, in rank order.
    pub checkpoints: Vec<Checkpoint>,
    index: SeekIndexBuilder,
    /// Where the seek index was at each checkpoint (a few words a
    /// stream), to [`rewind`](Self::rewind) to.
    cursors: Vec<SeekIndexCursor>,
}

impl CheckpointBuild {
    /// An empty build keeping a checkpoint every `interval` events.
    pub fn new(interval: u64) -> Self {
        CheckpointBuild {
            interval: interval.max(1),
            seen: 0,
            since: 0,
            checkpoints: Vec::new(),
            index: SeekIndexBuilder::new(seek_index::DEFAULT_EVERY),
            cursors: Vec::new(),
        }
    }

    /// Takes the event at `position` of a whole-traceset read, with
    /// `state` as it is *before* the event (a hook at HIGH priority sees
    /// it so): keeps a checkpoint when one is due and feeds the seek index.
    pub fn observe(&mut self, current: &CtfCurrent, position: &CtfPosition, state: &TracesetState) {
        // The first event always gets one: seeking anywhere has a start.
        let due = self.seen == 0 || self.since >= self.interval;
        if due {
            self.checkpoints.push(Checkpoint {
                rank: self.seen,
                position: *position,
                state: state.clone(),
            });
            self.cursors.push(self.index.cursor());
            self.since = 0;
        }
        if let Some(ev) = current.event() {
            self.index.observe(&ev);
        }
        self.seen += 1;
        self.since += 1;
    }

    /// Goes back to just before checkpoint `i` (an index into
    /// [`checkpoints`](Self::checkpoints)) and gives it: drops it, the
    /// checkpoints after it and the seek index marks made since, so that
    /// fed the events from its position on (with its state), the build
    /// makes what one read makes. A read can so hand the build over to
    /// another that starts there: the parallel pass's splitter stops at the
    /// last part's start, and the last part carries the build on.
    ///
    /// # Panics
    ///
    /// When there is no checkpoint `i`.
    pub fn rewind(&mut self, i: usize) -> Checkpoint {
        self.index.rewind(&self.cursors[i]);
        self.cursors.truncate(i);
        let c = self
            .checkpoints
            .drain(i..)
            .next()
            .expect("checkpoint i exists");
        self.seen = c.rank;
        // Due again at its event, as it was then.
        self.since = self.interval;
        c
    }

    /// The checkpoints and the seek index (complete once the pass read the
    /// whole traceset).
    pub fn finish(self) -> Checkpoints {
        Checkpoints {
            states: self.checkpoints,
            seek_index: self.index.finish(),
        }
    }
}

/// The events request of a checkpoint pass over the whole traceset, every
/// `interval` events.
pub fn checkpoint_request(
    owner: OwnerId,
    interval: u64,
) -> EventsRequest<CtfSource, TracesetState, CheckpointBuild> {
    let mut req = EventsRequest::new(owner, Start::Time(i64::MIN), CheckpointBuild::new(interval));
    req.priority = Priority::LOW;
    req.event.add(
        Priority::HIGH,
        |ctx: &mut HookContext<'_, CtfCurrent, CtfPosition, TracesetState, CheckpointBuild>| {
            ctx.data.observe(ctx.event, ctx.position, ctx.state);
            Flow::Continue
        },
    );
    req
}

/// Runs a checkpoint pass to the end, in the calling thread.
pub fn build(traceset: Arc<Traceset>, interval: u64) -> Checkpoints {
    let traces = traceset.traces().len();
    let source = CtfSource::new(traceset);
    let config = SchedulerConfig {
        checkpoint_interval: None,
        ..SchedulerConfig::default()
    };
    let mut sched = Scheduler::new(source, state::computation(traces), config);
    sched.add(checkpoint_request(OwnerId(0), interval));
    loop {
        let report = sched.service(Budget::unlimited(), || false);
        if let Some(done) = report.completed.into_iter().next() {
            return done.data.finish();
        }
        if sched.is_idle() {
            return Checkpoints::default();
        }
    }
}

/// Drops every other checkpoint (keeping the first) until `checkpoints`
/// encode in at most `max_bytes`, or one is left; returns whether they
/// fit. Seeks then replay up to twice as far for each halving.
pub fn fit_to_budget(checkpoints: &mut Checkpoints, max_bytes: u64) -> bool {
    fit_payload(checkpoints, max_bytes).1
}

/// [`fit_to_budget`], giving the payload that fit (or the last one tried)
/// as well: the cache is written from it rather than encoded again.
fn fit_payload(checkpoints: &mut Checkpoints, max_bytes: u64) -> (Vec<u8>, bool) {
    loop {
        // Deltas depend on the neighbours and the compression on the whole:
        // the size is that of the actual payload.
        let payload = encode_payload(checkpoints);
        if (HEADER_LEN + payload.len()) as u64 <= max_bytes {
            return (payload, true);
        }
        if checkpoints.states.len() <= 1 {
            return (payload, false);
        }
        let mut i = 0;
        checkpoints.states.retain(|_| {
            i += 1;
            i % 2 == 1
        });
    }
}

/// The cache payload before compression: the number of checkpoints, then
/// per checkpoint a frame (its length as a LEB128 varint, then the
/// postcard encoding of its rank as a step from the previous one, its
/// position and its state as a delta from the previous one), then the
/// seek index (postcard) to the end. Written and read a frame at a time
/// ([`encode_payload`], [`decode_payload_from`]): neither the deltas nor
/// the inflated payload are ever held whole (a dense cache of the 8 GB
/// generated trace inflates to 146 MB).
pub fn encode_payload(checkpoints: &Checkpoints) -> Vec<u8> {
    // Fast deflate: the deltas of neighbouring checkpoints still share most
    // thread entries, which a 32 KB window finds; higher levels save little.
    let z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    // Buffered: each write to the encoder readies its whole 32 KB output
    // buffer (a memset), which took a tenth of `traceloom index`'s CPU
    // when postcard wrote to it a varint at a time.
    let mut w = std::io::BufWriter::with_capacity(64 << 10, z);
    let fail = "writing to a Vec cannot fail";
    write_varint(&mut w, checkpoints.states.len() as u64).expect(fail);
    let mut frame = Vec::new();
    let mut prev: Option<&Checkpoint> = None;
    for c in &checkpoints.states {
        let step = c.rank - prev.map_or(0, |p| p.rank);
        let delta = StateDelta::diff(prev.map(|p| &p.state), &c.state);
        frame.clear();
        frame = postcard::to_extend(&(step, c.position, delta), frame).expect(fail);
        write_varint(&mut w, frame.len() as u64).expect(fail);
        w.write_all(&frame).expect(fail);
        prev = Some(c);
    }
    postcard::to_io(&checkpoints.seek_index, &mut w).expect(fail);
    let z = w.into_inner().expect(fail);
    z.finish().expect(fail)
}

/// The largest frame or seek index a payload may hold once inflated: a
/// damaged or hostile cache cannot make a read take more memory than this
/// (a whole state of 80,000 threads takes a few MB).
const FRAME_MAX: u64 = 1 << 30;

/// Writes `v` as a LEB128 varint ([`seek_index::put_varint`]).
fn write_varint(w: &mut impl Write, v: u64) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(10);
    seek_index::put_varint(&mut bytes, v);
    w.write_all(&bytes)
}

/// Reads a varint [`write_varint`] wrote, a byte at a time.
fn read_varint(r: &mut impl Read) -> Result<u64, PayloadError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let mut b = [0u8; 1];
        r.read_exact(&mut b).map_err(PayloadError::Inflate)?;
        v |= u64::from(b[0] & 0x7f) << shift;
        if b[0] & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(PayloadError::Frame("a length past 64 bits"))
}

/// Why a checkpoint payload does not decode.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The deflate stream is damaged, or ends early.
    #[error("cannot inflate: {0}")]
    Inflate(#[source] std::io::Error),
    /// A frame is not a checkpoint's encoding, or the rest not a seek
    /// index's.
    #[error("cannot decode: {0}")]
    Decode(#[source] postcard::Error),
    /// The frames are not laid out as written.
    #[error("bad frame: {0}")]
    Frame(&'static str),
    /// The checkpoints' ranks add up past `u64::MAX`.
    #[error("checkpoint rank overflow")]
    RankOverflow,
}

/// Decodes a payload written by [`encode_payload`].
pub fn decode_payload(payload: &[u8]) -> Result<Checkpoints, PayloadError> {
    decode_payload_at_most(payload, usize::MAX)
}

/// Decodes a payload written by [`encode_payload`], keeping at most
/// `max` of its checkpoints (at least one), evenly spread from the
/// first: each checkpoint in memory is a whole state, so a cache of
/// dense checkpoints (100,505 for the 8 GB generated trace at the
/// engine's default interval) would hold gigabytes once decoded. Every
/// delta is still applied, one state at a time, as its frame is read.
pub fn decode_payload_at_most(payload: &[u8], max: usize) -> Result<Checkpoints, PayloadError> {
    decode_payload_from(payload, max)
}

/// [`decode_payload_at_most`] of the payload `compressed` reads, a frame
/// at a time: what is held is the checkpoints kept, the state the next
/// delta applies to and one frame.
pub fn decode_payload_from(compressed: impl Read, max: usize) -> Result<Checkpoints, PayloadError> {
    let mut z =
        std::io::BufReader::with_capacity(64 << 10, flate2::read::DeflateDecoder::new(compressed));
    let n = read_varint(&mut z)?;
    let every = n.div_ceil(max.max(1) as u64).max(1);
    // A damaged count reserves no more than a few thousand states, and
    // the frames end early.
    let mut states = Vec::with_capacity(n.div_ceil(every).min(max as u64).min(4096) as usize);
    let mut last: Option<(u64, TracesetState)> = None;
    let mut frame = Vec::new();
    for i in 0..n {
        let len = read_varint(&mut z)?;
        if len > FRAME_MAX {
            return Err(PayloadError::Frame("a checkpoint larger than any state"));
        }
        frame.clear();
        (&mut z)
            .take(len)
            .read_to_end(&mut frame)
            .map_err(PayloadError::Inflate)?;
        if frame.len() as u64 != len {
            return Err(PayloadError::Frame("the payload ends inside a checkpoint"));
        }
        let (step, position, delta): (u64, CtfPosition, StateDelta) =
            postcard::from_bytes(&frame).map_err(PayloadError::Decode)?;
        let rank = last
            .as_ref()
            .map_or(0, |(r, _)| *r)
            .checked_add(step)
            .ok_or(PayloadError::RankOverflow)?;
        let state = delta.apply(last.as_ref().map(|(_, s)| s));
        if i % every == 0 {
            states.push(Checkpoint {
                rank,
                position,
                state: state.clone(),
            });
        }
        last = Some((rank, state));
    }
    drop(last);
    frame.clear();
    (&mut z)
        .take(FRAME_MAX + 1)
        .read_to_end(&mut frame)
        .map_err(PayloadError::Inflate)?;
    if frame.len() as u64 > FRAME_MAX {
        return Err(PayloadError::Frame("a seek index larger than any"));
    }
    let seek_index = postcard::from_bytes(&frame).map_err(PayloadError::Decode)?;
    Ok(Checkpoints { states, seek_index })
}

/// The event rank of `position` (the number of events before it): the
/// nearest earlier checkpoint's rank plus the events read from there.
pub fn rank_of(source: &mut CtfSource, checkpoints: &[Checkpoint], position: &CtfPosition) -> u64 {
    let i = checkpoints.partition_point(|c| c.position <= *position);
    let (mut rank, from) = match i.checked_sub(1).map(|i| &checkpoints[i]) {
        Some(c) => (c.rank, Some(c.position)),
        None => (0, None),
    };
    match from {
        Some(p) => source.seek_position(&p),
        None => source.seek_time(i64::MIN),
    }
    while source.current().is_some() && source.position() < *position {
        source.advance();
        rank += 1;
    }
    rank
}

/// Moves `source` to the event of rank `rank` (or the end).
pub fn seek_rank(source: &mut CtfSource, checkpoints: &[Checkpoint], rank: u64) {
    let i = checkpoints.partition_point(|c| c.rank <= rank);
    let mut at = match i.checked_sub(1).map(|i| &checkpoints[i]) {
        Some(c) => {
            source.seek_position(&c.position);
            c.rank
        }
        None => {
            source.seek_time(i64::MIN);
            0
        }
    };
    while at < rank && source.current().is_some() {
        source.advance();
        at += 1;
    }
}

/// Why a cache file was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// There is no cache file.
    #[error("no checkpoint cache at {0}")]
    Missing(PathBuf),
    /// The cache was written for other trace files (or another version).
    #[error("{0}: stale checkpoint cache (traces or format changed)")]
    Stale(PathBuf),
    /// The cache file is damaged.
    #[error("{path}: damaged checkpoint cache: {reason}")]
    Damaged {
        /// The cache file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The cache file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The cache file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

const MAGIC: &[u8; 8] = b"TLCKPT\r\n";
/// 2: the seek index is stored after the checkpoints.
/// 3: checkpoints as deltas from the previous one, payload deflated.
/// 4: CPUs stored with their numbers (sparse CPU maps).
/// 5: a system call entered from an unknown mode sets user mode beneath
/// it (states computed by version 4 differ).
/// 6: the seek index stored compact (varint deltas in blocks).
/// 7: each checkpoint in a frame of its own, read one at a time.
const VERSION: u32 = 7;
/// magic, version, fingerprint, payload length, crc32 of the payload.
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 4;

/// The per-user cache directory of traceloom (XDG), `None` without a home.
pub fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(base.join("traceloom"))
}

/// A fingerprint of the traceset's files: their paths, sizes and
/// modification times. Any change to a trace makes its cache stale.
pub fn fingerprint(traceset: &Traceset) -> u64 {
    let mut h = DefaultHasher::new();
    VERSION.hash(&mut h);
    for t in traceset.traces() {
        let meta = t.path.join("metadata");
        file_stamp(&meta).hash(&mut h);
    }
    for s in traceset.streams() {
        for f in &s.files {
            file_stamp(f).hash(&mut h);
        }
    }
    h.finish()
}

fn file_stamp(p: &Path) -> (PathBuf, u64, Option<std::time::SystemTime>) {
    let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let meta = fs::metadata(p).ok();
    (
        canonical,
        meta.as_ref().map_or(0, |m| m.len()),
        meta.and_then(|m| m.modified().ok()),
    )
}

/// The cache file of a traceset with this fingerprint, in `dir`.
pub fn cache_path(dir: &Path, fingerprint: u64) -> PathBuf {
    dir.join(format!("{fingerprint:016x}.checkpoints"))
}

/// Writes `checkpoints` to `path` (atomically: a temporary file renamed).
pub fn store(path: &Path, fingerprint: u64, checkpoints: &Checkpoints) -> Result<(), CacheError> {
    store_payload(path, fingerprint, &encode_payload(checkpoints))
}

/// Writes a cache file holding `payload` (from [`encode_payload`]) to
/// `path`, atomically.
fn store_payload(path: &Path, fingerprint: u64, payload: &[u8]) -> Result<(), CacheError> {
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&fingerprint.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = fs::File::create(&tmp).map_err(io)?;
    f.write_all(&header).map_err(io)?;
    f.write_all(payload).map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)
}

/// Caches `checkpoints` of `traceset` in `dir`: thinned to fit
/// [`CACHE_BUDGET`] of the traces, written atomically.
pub fn save(
    dir: &Path,
    traceset: &Traceset,
    mut checkpoints: Checkpoints,
) -> Result<(), CacheError> {
    let fp = fingerprint(traceset);
    let budget = traceset.total_bytes() as f64 * CACHE_BUDGET;
    let (payload, _) = fit_payload(&mut checkpoints, budget as u64);
    store_payload(&cache_path(dir, fp), fp, &payload)
}

/// Whether `dir` holds a valid checkpoint cache for `traceset`.
pub fn is_cached(dir: &Path, traceset: &Traceset) -> bool {
    let fp = fingerprint(traceset);
    load_at_most(&cache_path(dir, fp), fp, 1).is_ok()
}

/// Reads the checkpoints of a traceset with `fingerprint` from `path`.
pub fn load(path: &Path, fingerprint: u64) -> Result<Checkpoints, CacheError> {
    load_at_most(path, fingerprint, usize::MAX)
}

/// [`load`], keeping at most `max` checkpoints, evenly spread (see
/// [`decode_payload_at_most`]): what a window keeps in memory whatever
/// interval the cache was written with.
pub fn load_at_most(path: &Path, fingerprint: u64, max: usize) -> Result<Checkpoints, CacheError> {
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CacheError::Missing(path.to_path_buf()))
        }
        Err(source) => return Err(io(source)),
    };
    let damaged = |reason: &str| CacheError::Damaged {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    let size = file.metadata().map_err(io)?.len();
    let mut header = [0u8; HEADER_LEN];
    if size < HEADER_LEN as u64 {
        return Err(damaged("not a checkpoint cache (bad header)"));
    }
    file.read_exact(&mut header).map_err(io)?;
    if &header[..8] != MAGIC {
        return Err(damaged("not a checkpoint cache (bad header)"));
    }
    let u32_at = |o: usize| u32::from_le_bytes(header[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().unwrap());
    if u32_at(8) != VERSION || u64_at(12) != fingerprint {
        return Err(CacheError::Stale(path.to_path_buf()));
    }
    let len = u64_at(20);
    let payload = size - HEADER_LEN as u64;
    if payload != len {
        return Err(damaged(&format!(
            "payload is {payload} bytes, header says {len}"
        )));
    }
    // Inflated and decoded as it is read, its checksum summed on the way
    // and checked once all of it is read: a damaged payload is told by
    // its checksum even when it decodes.
    let mut summed = Summed {
        inner: std::io::BufReader::with_capacity(64 << 10, file.take(len)),
        hasher: crc32fast::Hasher::new(),
    };
    let decoded = decode_payload_from(&mut summed, max);
    std::io::copy(&mut summed, &mut std::io::sink()).map_err(io)?;
    if summed.hasher.finalize() != u32_at(28) {
        return Err(damaged("checksum mismatch"));
    }
    let checkpoints = decoded.map_err(|e| damaged(&e.to_string()))?;
    if checkpoints
        .states
        .windows(2)
        .any(|w| w[0].rank >= w[1].rank || w[0].position >= w[1].position)
    {
        return Err(damaged("checkpoints out of order"));
    }
    Ok(checkpoints)
}

/// A reader summing the CRC-32 of what it reads.
struct Summed<R> {
    inner: R,
    hasher: crc32fast::Hasher,
}

impl<R: Read> Read for Summed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Where the checkpoints of [`load_or_build`] came from.
#[derive(Debug)]
pub enum CacheOutcome {
    /// Read from the cache file.
    Loaded,
    /// Built now, and written to the cache (`Some(error)` if writing failed).
    Built(Option<CacheError>),
    /// Built now because the cache was unusable (stale or damaged), and
    /// written anew.
    Rebuilt(CacheError, Option<CacheError>),
}

/// The checkpoints of `traceset`: from the cache in `dir` when it is valid,
/// else built (every `interval` events, thinned to fit [`CACHE_BUDGET`])
/// and stored there. Nothing is ever written next to the traces.
pub fn load_or_build(
    traceset: &Arc<Traceset>,
    dir: &Path,
    interval: u64,
) -> (Checkpoints, CacheOutcome) {
    let fp = fingerprint(traceset);
    let path = cache_path(dir, fp);
    match load(&path, fp) {
        Ok(c) => (c, CacheOutcome::Loaded),
        Err(e) => {
            let mut c = build(traceset.clone(), interval);
            let budget = traceset.total_bytes() as f64 * CACHE_BUDGET;
            let (payload, _) = fit_payload(&mut c, budget as u64);
            let stored = store_payload(&path, fp, &payload).err();
            let outcome = match e {
                CacheError::Missing(_) => CacheOutcome::Built(stored),
                e => CacheOutcome::Rebuilt(e, stored),
            };
            (c, outcome)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::CtfPosition;

    /// Feeds `build` the events from `from` (a checkpoint's position and
    /// state; the start when `None`) to the end.
    fn read_on(
        traceset: &Arc<Traceset>,
        from: Option<(CtfPosition, TracesetState)>,
        build: CheckpointBuild,
    ) -> CheckpointBuild {
        let source = CtfSource::new(traceset.clone());
        let config = SchedulerConfig {
            checkpoint_interval: None,
            ..SchedulerConfig::default()
        };
        let mut sched = Scheduler::new(source, state::computation(traceset.traces().len()), config);
        let start = match &from {
            Some((p, _)) => Start::Position(*p),
            None => Start::Time(i64::MIN),
        };
        sched.add_checkpoints(from);
        let mut req = checkpoint_request(OwnerId(0), 1);
        req.start = start;
        req.data = build;
        sched.add(req);
        loop {
            let report = sched.service(Budget::unlimited(), || false);
            if let Some(done) = report.completed.into_iter().next() {
                return done.data;
            }
            assert!(!sched.is_idle(), "the read ended without completing");
        }
    }

    /// A build read to the end, rewound to any of its checkpoints and fed
    /// the rest of the read from there, gives what one read gives: the
    /// same checkpoints and the same seek index.
    #[test]
    fn a_build_rewound_and_read_on_equals_one_read() {
        let paths = [
            traceloom_testdata::sample_kernel(),
            traceloom_testdata::ctf("tracecompass/bug446190"),
        ];
        for path in paths {
            let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
            let whole = read_on(&ts, None, CheckpointBuild::new(97)).finish();
            let m = whole.states.len();
            assert!(m > 10, "{}: {m} checkpoints", path.display());
            assert!(
                whole.seek_index.len() > 4,
                "{}: {} seek marks",
                path.display(),
                whole.seek_index.len()
            );
            for i in [0, 1, m / 3, m / 2, m - 1] {
                let mut b = read_on(&ts, None, CheckpointBuild::new(97));
                let c = b.rewind(i);
                assert_eq!(c, whole.states[i], "{}: checkpoint {i}", path.display());
                assert_eq!(b.checkpoints.len(), i);
                let b = read_on(&ts, Some((c.position, c.state)), b).finish();
                assert!(b == whole, "{}: rewound to checkpoint {i}", path.display());
            }
        }
    }

    /// The payload is the checkpoints' count, a frame per checkpoint
    /// and the seek index, deflated; a damaged deflate stream, frames cut
    /// short, a frame that does not decode and ranks past `u64::MAX` are
    /// told apart.
    #[test]
    fn a_payload_is_its_frames_and_its_damage_is_named() {
        let path = traceloom_testdata::sample_kernel();
        let ts = Arc::new(Traceset::open(std::slice::from_ref(&path)).unwrap());
        let built = build(ts, 97);
        assert!(built.states.len() > 10);
        let payload = encode_payload(&built);
        let mut raw = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::DeflateDecoder::new(&payload[..]),
            &mut raw,
        )
        .unwrap();
        let mut r = &raw[..];
        let n = read_varint(&mut r).unwrap();
        assert_eq!(n as usize, built.states.len());
        let mut frames: Vec<(u64, CtfPosition, StateDelta)> = Vec::new();
        for _ in 0..n {
            let len = read_varint(&mut r).unwrap() as usize;
            frames.push(postcard::from_bytes(&r[..len]).unwrap());
            r = &r[len..];
        }
        let seek_index: SeekIndex = postcard::from_bytes(r).unwrap();
        assert_eq!(seek_index, built.seek_index);
        let summed: Vec<u64> = frames
            .iter()
            .scan(0, |rank, f| {
                *rank += f.0;
                Some(*rank)
            })
            .collect();
        let ranks: Vec<u64> = built.states.iter().map(|c| c.rank).collect();
        assert_eq!(summed, ranks);
        let encode = |frames: &[(u64, CtfPosition, StateDelta)], rest: &[u8]| {
            let mut raw = Vec::new();
            write_varint(&mut raw, frames.len() as u64).unwrap();
            for f in frames {
                let bytes = postcard::to_stdvec(f).unwrap();
                write_varint(&mut raw, bytes.len() as u64).unwrap();
                raw.extend_from_slice(&bytes);
            }
            raw.extend_from_slice(rest);
            raw
        };
        assert_eq!(encode(&frames, r), raw, "frames as written");

        // Not deflate at all.
        assert!(matches!(
            decode_payload(&[0xff; 64]),
            Err(PayloadError::Inflate(_))
        ));
        let deflate = |raw: &[u8]| {
            let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut z, raw).unwrap();
            z.finish().unwrap()
        };
        // Deflated, but cut short inside a frame.
        let cut = deflate(&raw[..raw.len() / 2]);
        assert!(matches!(decode_payload(&cut), Err(PayloadError::Frame(_))));
        // A frame that is not a checkpoint.
        let mut garbled = raw.clone();
        let first = 1 + 3;
        garbled[first..first + 32].fill(0xff);
        assert!(matches!(
            decode_payload(&deflate(&garbled)),
            Err(PayloadError::Decode(_) | PayloadError::Frame(_))
        ));
        // A length past any state.
        let mut huge = Vec::new();
        write_varint(&mut huge, 1).unwrap();
        write_varint(&mut huge, FRAME_MAX + 1).unwrap();
        assert!(matches!(
            decode_payload(&deflate(&huge)),
            Err(PayloadError::Frame(_))
        ));
        // Steps adding up past u64::MAX.
        let mut over = frames;
        over[1].0 = u64::MAX;
        over[2].0 = u64::MAX;
        assert!(matches!(
            decode_payload(&deflate(&encode(&over, r))),
            Err(PayloadError::RankOverflow)
        ));
    }
}
