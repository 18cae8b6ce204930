//! A Pajé trace as an [`EventSource`]: what the events-request scheduler
//! reads, as it reads a CTF traceset ([`crate::source`]).
//!
//! A [`PajeSource`] owns the trace's files (`traceloom-paje`'s
//! [`TraceFiles`]: the main file and, for ViTE's multi-file traces, the
//! event files it names) and one [`EventReader`] per file. The files are
//! merged by time; the scheduler's event type is [`PajeCurrent`], the
//! reading head, whose [`PajeCurrent::event`] lends the decoded
//! [`PajeEvent`] (words borrowed from the mapped file, nothing copied).
//!
//! **Positions** are `(time, file, byte offset of the line)`. The time is
//! the event's `Time` field in ns, made non-decreasing per file (an event
//! without a time, a definition, or one earlier than the file's previous
//! event takes the previous time), and the merge orders events by exactly
//! that key, then by file, then by offset: reading order and position order
//! are the same, as the scheduler needs. Definitions before the first timed
//! event have the time [`Time::MIN`], so a request starting at a time never
//! sees them, while the state computation, which replays from the first
//! event, does.
//!
//! **Seeking.** The source records, per file, a seek point about every
//! [`INDEX_INTERVAL`] bytes as it reads forward for the first time (the
//! reader's position and the time before it); a seek to a time resumes each
//! file at the last point before it and steps to the first event at or
//! after it. A seek beyond what was read so far starts at the last point
//! and reads on (recording points on the way): the whole-trace pass
//! normally gets there first. A seek to a position seeks to its time and
//! steps over the few events sharing it that come before.
//!
//! **Problems** in the files (bad lines, unknown ids) never stop the read:
//! the reader skips the line and the diagnostic, naming file, line and
//! byte offset, is kept once ([`PajeSource::take_diagnostics`]) however
//! often the line is read again after seeks.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use traceloom_base::Time;
use traceloom_paje::{
    Diagnostic, EventDef, EventReader, PajeError, PajeEvent, ReaderOptions, ReaderPosition,
    TraceFiles,
};

use crate::request::{EventSource, SourceEvent, SourcePosition, StreamId};

/// Bytes between two seek points of a file.
pub const INDEX_INTERVAL: u64 = 256 * 1024;

/// Pajé seconds to ns (rounded; infinities and NaN saturate).
pub fn seconds_to_ns(seconds: f64) -> Time {
    (seconds * 1e9).round() as Time
}

/// A place in a Pajé trace, in reading order (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PajePosition {
    /// The event's time in ns (non-decreasing per file); `i64::MAX` for
    /// the end.
    pub time: Time,
    /// Index of the file in the trace (0: the main file).
    pub file: u32,
    /// Byte offset of the event's line in its file.
    pub offset: u64,
}

impl PajePosition {
    /// The position past the last event.
    pub const END: PajePosition = PajePosition {
        time: Time::MAX,
        file: u32::MAX,
        offset: u64::MAX,
    };
}

impl SourcePosition for PajePosition {
    fn time(&self) -> Time {
        self.time
    }
}

/// One file's seek point: resume the reader at `position`, every event
/// before it having a time `<= time_before`.
#[derive(Debug, Clone, Copy)]
struct SeekPoint {
    position: ReaderPosition,
    time_before: Time,
}

/// The seek points of one file, recorded on its first forward read.
#[derive(Debug, Clone, Default)]
struct FileIndex {
    points: Vec<SeekPoint>,
}

impl FileIndex {
    /// Records `position` if it is [`INDEX_INTERVAL`] past the last point.
    #[inline]
    fn record(&mut self, position: ReaderPosition, time_before: Time) {
        let due = match self.points.last() {
            None => true,
            Some(p) => position.offset >= p.position.offset + INDEX_INTERVAL,
        };
        if due {
            self.points.push(SeekPoint {
                position,
                time_before,
            });
        }
    }

    /// The last point before which every event is earlier than `time`.
    fn point_for(&self, time: Time) -> Option<SeekPoint> {
        let n = self.points.partition_point(|p| p.time_before < time);
        self.points.get(n.saturating_sub(1)).copied()
    }
}

/// The head of one file: its next event and that event's position.
#[derive(Clone, Copy)]
struct FileHead<'a> {
    event: PajeEvent<'a>,
    position: PajePosition,
}

/// The readers of every file and their heads.
struct Merge<'a> {
    readers: Vec<EventReader<'a>>,
    heads: Vec<Option<FileHead<'a>>>,
    /// Time of the last event read from each file (the floor of the next).
    last_time: Vec<Time>,
    /// File of the current event, `None` at the end.
    current: Option<usize>,
    /// Where each reader started: an event file's reader starts knowing
    /// the main file's definitions, which a seek to offset 0 must keep.
    starts: Vec<ReaderPosition>,
}

self_cell::self_cell!(
    struct MergeCell {
        owner: Arc<TraceFiles>,
        #[covariant]
        dependent: Merge,
    }
);

impl<'a> Merge<'a> {
    fn new(files: &'a TraceFiles) -> Merge<'a> {
        let readers = files.readers();
        let n = readers.len();
        Merge {
            starts: readers.iter().map(EventReader::position).collect(),
            readers,
            heads: vec![None; n],
            last_time: vec![Time::MIN; n],
            current: None,
        }
    }

    /// Reads file `i`'s next event into its head, recording seek points
    /// on a first read.
    #[inline]
    fn pull(&mut self, i: usize, index: &mut FileIndex) {
        let before = self.readers[i].position();
        if index
            .points
            .last()
            .is_none_or(|p| before.offset > p.position.offset)
        {
            index.record(before, self.last_time[i]);
        }
        self.heads[i] = self.readers[i].next().map(|event| {
            let t = event.time.map_or(self.last_time[i], |t| {
                seconds_to_ns(t).max(self.last_time[i])
            });
            self.last_time[i] = t;
            FileHead {
                event,
                position: PajePosition {
                    time: t,
                    file: i as u32,
                    offset: event.offset,
                },
            }
        });
    }

    /// Makes the earliest head the current event.
    #[inline]
    fn choose(&mut self) {
        self.current = if self.heads.len() == 1 {
            self.heads[0].as_ref().map(|_| 0)
        } else {
            (0..self.heads.len())
                .filter_map(|i| self.heads[i].as_ref().map(|h| (h.position, i)))
                .min()
                .map(|(_, i)| i)
        };
    }

    /// Puts file `i` on its first event at or after `time`.
    fn seek_file(&mut self, i: usize, time: Time, index: &mut FileIndex) {
        let point = index.point_for(time);
        match point {
            Some(p) => {
                self.readers[i].seek(p.position);
                self.last_time[i] = p.time_before;
            }
            None => {
                self.readers[i].seek(self.starts[i]);
                self.last_time[i] = Time::MIN;
            }
        }
        self.pull(i, index);
        while self.heads[i].is_some_and(|h| h.position.time < time) {
            self.pull(i, index);
        }
    }
}

/// The reading head of a [`PajeSource`]: what hooks see.
pub struct PajeCurrent {
    cell: MergeCell,
}

impl std::fmt::Debug for PajeCurrent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PajeCurrent")
            .field("position", &self.position())
            .finish()
    }
}

impl PajeCurrent {
    fn head(&self) -> Option<&FileHead<'_>> {
        let m = self.cell.borrow_dependent();
        m.current.and_then(|i| m.heads[i].as_ref())
    }

    fn position(&self) -> PajePosition {
        self.head().map_or(PajePosition::END, |h| h.position)
    }

    /// The decoded current event, `None` at the end.
    pub fn event(&self) -> Option<&PajeEvent<'_>> {
        self.head().map(|h| &h.event)
    }

    /// The definition the current event was read with (its field names).
    pub fn definition(&self) -> Option<&EventDef> {
        let m = self.cell.borrow_dependent();
        let i = m.current?;
        let ev = &m.heads[i].as_ref()?.event;
        m.readers[i].definitions().get(ev.def)
    }

    /// The trace's files.
    pub fn files(&self) -> &Arc<TraceFiles> {
        self.cell.borrow_owner()
    }
}

impl SourceEvent for PajeCurrent {
    fn time(&self) -> Time {
        self.head().map_or(Time::MAX, |h| h.position.time)
    }

    fn class_id(&self) -> u64 {
        self.head().map_or(u64::MAX, |h| h.event.kind as u64)
    }

    fn stream(&self) -> StreamId {
        self.head().map_or(StreamId::new(u32::MAX, u32::MAX), |h| {
            StreamId::new(0, h.position.file)
        })
    }
}

/// A Pajé trace (one file or ViTE's several) read as one time-ordered
/// sequence of events (see the module doc).
pub struct PajeSource {
    current: PajeCurrent,
    index: Vec<FileIndex>,
    streams: Vec<StreamId>,
    span: Option<(Time, Time)>,
    /// Diagnostics already handed out, by (file, byte offset, message).
    reported: HashSet<(PathBuf, u64, String)>,
}

impl std::fmt::Debug for PajeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PajeSource")
            .field("current", &self.current)
            .field("files", &self.streams.len())
            .finish()
    }
}

impl PajeSource {
    /// Opens the Pajé trace whose main file is `path`, with the event files
    /// it names.
    pub fn open(path: &Path) -> Result<PajeSource, PajeError> {
        let files = TraceFiles::open(path, ReaderOptions::default(), true)?;
        Ok(PajeSource::new(Arc::new(files)))
    }

    /// A source reading `files` from their first event.
    pub fn new(files: Arc<TraceFiles>) -> PajeSource {
        let n = files.files().len();
        let span = time_span(&files);
        let mut source = PajeSource {
            current: PajeCurrent {
                cell: MergeCell::new(files, |f| Merge::new(f)),
            },
            index: vec![FileIndex::default(); n],
            streams: (0..n as u32).map(|i| StreamId::new(0, i)).collect(),
            span,
            reported: HashSet::new(),
        };
        source.restart(Time::MIN);
        source
    }

    /// The trace's files.
    pub fn files(&self) -> &Arc<TraceFiles> {
        self.current.files()
    }

    /// Problems met since the last call (and while looking for event
    /// files), each reported once whatever the number of reads: file, line
    /// and byte offset, and what is wrong.
    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        let mut all: Vec<Diagnostic> = self.files().diagnostics().items().to_vec();
        self.current.cell.with_dependent_mut(|_, m| {
            for r in &mut m.readers {
                all.extend(r.take_diagnostics().items().iter().cloned());
            }
        });
        all.retain(|d| {
            self.reported.insert((
                d.location.file.to_path_buf(),
                d.location.byte_offset,
                d.message.clone(),
            ))
        });
        all
    }

    /// Every file positioned at its first event at or after `time`.
    fn restart(&mut self, time: Time) {
        let index = &mut self.index;
        self.current.cell.with_dependent_mut(|_, m| {
            for (i, ix) in index.iter_mut().enumerate() {
                m.seek_file(i, time, ix);
            }
            m.choose();
        });
    }
}

/// Times of the first and last timed events of `files`: the first from the
/// top of each file, the last from its final 64 KiB (read with the header's
/// definitions).
fn time_span(files: &TraceFiles) -> Option<(Time, Time)> {
    const TAIL: usize = 64 * 1024;
    let mut span: Option<(Time, Time)> = None;
    let mut readers = files.readers();
    for (r, f) in readers.iter_mut().zip(files.files()) {
        let Some(first) = r.by_ref().find_map(|e| e.time) else {
            continue;
        };
        let data = f.bytes();
        let mut last = first;
        if data.len() > TAIL {
            let from = data.len() - TAIL;
            if let Some(nl) = data[from..].iter().position(|&b| b == b'\n') {
                let offset = (from + nl + 1) as u64;
                let known = r.definitions().len();
                let here = EventReader::position(r);
                if here.offset < offset {
                    r.seek(ReaderPosition {
                        offset,
                        line: here.line,
                        definitions: known,
                    });
                }
            }
        }
        for t in r.by_ref().filter_map(|e| e.time) {
            last = last.max(t);
        }
        let (a, b) = (seconds_to_ns(first), seconds_to_ns(last.max(first)));
        span = Some(match span {
            None => (a, b),
            Some((x, y)) => (x.min(a), y.max(b)),
        });
    }
    span
}

impl EventSource for PajeSource {
    type Event = PajeCurrent;
    type Position = PajePosition;

    fn seek_time(&mut self, time: Time) {
        self.restart(time);
    }

    fn seek_position(&mut self, position: &PajePosition) {
        if *position == PajePosition::END {
            self.current.cell.with_dependent_mut(|_, m| {
                m.heads.iter_mut().for_each(|h| *h = None);
                m.current = None;
            });
            return;
        }
        self.restart(position.time);
        while self.position() < *position {
            self.advance();
        }
    }

    fn current(&self) -> Option<&PajeCurrent> {
        self.current.head().map(|_| &self.current)
    }

    fn position(&self) -> PajePosition {
        self.current.position()
    }

    #[inline]
    fn advance(&mut self) {
        let index = &mut self.index;
        self.current.cell.with_dependent_mut(|_, m| {
            if let Some(i) = m.current {
                m.pull(i, &mut index[i]);
                m.choose();
            }
        });
    }

    fn streams(&self) -> Vec<StreamId> {
        self.streams.clone()
    }

    fn time_span(&self) -> Option<(Time, Time)> {
        self.span
    }
}
