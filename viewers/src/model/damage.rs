//! The damaged streams an analysis met, kept with it: a [`KernelData`]
//! read back from the analysis store was built by a pass that may have
//! stopped reading a stream at its damage, and whoever shows it (the
//! commands, the window) must still say so, with the file and byte
//! offset, though nothing is read this time.
//!
//! Each damage also says where the analysis has no data ([`DataGap`]):
//! the reader stops reading a damaged stream at the damage, so the rows
//! whose state came from that stream — the rows whose last change was made
//! by one of its events: its CPU, the thread running there, the IRQ lines
//! it serviced — are known only up to the last event read from it.
//! Extending their last state to the end of the trace would show what was
//! never read (a CPU running one thread for ever, a made-up system call of
//! hundreds of ms): the views end it there and draw "no data" after.
//!
//! [`KernelData`]: super::kernel::KernelData

use std::fmt;

use std::hash::Hash;

use serde::{Deserialize, Serialize};
use traceloom_base::{FastMap, Time};
use traceloom_ctf::{ReadError, Traceset};

use crate::render::{Properties, StateInterval};
use crate::style::NO_DATA;

/// A stream the pass stopped reading at its damage (what came before was
/// analysed).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StreamDamage {
    /// The stream file, as displayed (a `String`, not a `PathBuf`: the
    /// store's postcard encoding of a path that is not UTF-8 would fail).
    pub path: String,
    /// Byte offset of the damage in the file, when known (not for a file
    /// that could not be opened).
    pub offset: Option<u64>,
    /// The reader's whole message (file, offset, what is wrong): what the
    /// commands print.
    pub message: String,
    /// Where the analysis has no data because of it; `None` when no event
    /// of the stream was read (no row's state came from it).
    pub gap: Option<DataGap>,
}

/// The rows a damaged stream leaves without data, from the last event read
/// from it to their end (the trace's end, or a thread's end).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataGap {
    /// Time of the last event read from the stream: the gap's start.
    pub from: Time,
    /// Thread records (indices in `KernelData::threads`) whose last change
    /// came from the stream.
    pub threads: Vec<u32>,
    /// CPUs whose last change came from the stream: (trace, CPU number).
    pub cpus: Vec<(u32, u32)>,
    /// IRQ lines and softirq vectors whose last change came from the
    /// stream: (trace, 0 for an IRQ or 1 for a softirq, number).
    pub lines: Vec<(u32, u8, u64)>,
}

impl StreamDamage {
    /// The damage `e` reports.
    pub fn of(e: &ReadError) -> Self {
        StreamDamage {
            path: e.path().display().to_string(),
            offset: e.offset(),
            message: e.to_string(),
            gap: None,
        }
    }

    /// The damage of each of `errors`, in their order.
    pub fn all(errors: &[ReadError]) -> Vec<StreamDamage> {
        errors.iter().map(StreamDamage::of).collect()
    }

    /// The "no data" interval `[start, end)` this damage leaves on a row,
    /// its tooltip naming the file and byte offset.
    pub fn no_data(&self, start: Time, end: Time) -> StateInterval {
        let mut props = vec![
            ("state", "no data (damaged stream)".to_string()),
            ("file", self.path.clone()),
        ];
        if let Some(o) = self.offset {
            props.push(("byte offset", o.to_string()));
        }
        props.push(("last event read", start.to_string()));
        StateInterval::new(start, end, NO_DATA).with_properties(Properties::new(props))
    }
}

/// The gap each row is in, by the row's key (`keys` lists the keys of a
/// gap's rows): the gap's start and the index of its damage. A row in
/// several gaps (a stream damaged twice) has the earliest.
pub fn rows_without_data<'a, K: Hash + Eq, I: IntoIterator<Item = K>>(
    damage: &'a [StreamDamage],
    keys: impl Fn(&'a DataGap) -> I,
) -> FastMap<K, (Time, usize)> {
    let mut out: FastMap<K, (Time, usize)> = FastMap::default();
    for (k, d) in damage.iter().enumerate() {
        let Some(g) = &d.gap else { continue };
        for key in keys(g) {
            let e = out.entry(key).or_insert((g.from, k));
            if g.from < e.0 {
                *e = (g.from, k);
            }
        }
    }
    out
}

impl fmt::Display for StreamDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// No stream (a record not changed yet).
const NO_STREAM: u32 = u32::MAX;

/// What the kernel pass notes to place the damage: the last event read
/// from each stream, and the stream of each record's last change. One
/// store per event and per change.
#[derive(Debug, Default)]
pub(crate) struct GapTracker {
    /// Per stream (traceset-wide index): its files as displayed, to find
    /// a damaged file's stream.
    files: Vec<Vec<String>>,
    /// Per stream: the time of the last event read from it.
    last: Vec<Option<Time>>,
    /// The stream of the event being handled.
    current: u32,
    /// Per thread, CPU and line record: the stream of its last change.
    threads: Vec<u32>,
    cpus: Vec<u32>,
    lines: Vec<u32>,
}

impl GapTracker {
    /// A tracker for the streams of `traceset`.
    pub(crate) fn new(traceset: &Traceset) -> Self {
        let files: Vec<Vec<String>> = traceset
            .streams()
            .map(|s| s.files.iter().map(|f| f.display().to_string()).collect())
            .collect();
        GapTracker {
            last: vec![None; files.len()],
            files,
            current: NO_STREAM,
            ..GapTracker::default()
        }
    }

    /// An event of `stream` at `t` is being handled.
    #[inline]
    pub(crate) fn event(&mut self, stream: u32, t: Time) {
        self.current = stream;
        if let Some(l) = self.last.get_mut(stream as usize) {
            *l = Some(t);
        }
    }

    fn note(v: &mut Vec<u32>, rec: u32, stream: u32) {
        let i = rec as usize;
        if v.len() <= i {
            v.resize(i + 1, NO_STREAM);
        }
        v[i] = stream;
    }

    /// Thread record `rec` changed with the current event.
    #[inline]
    pub(crate) fn thread_changed(&mut self, rec: u32) {
        Self::note(&mut self.threads, rec, self.current);
    }

    /// CPU record `rec` changed with the current event.
    #[inline]
    pub(crate) fn cpu_changed(&mut self, rec: u32) {
        Self::note(&mut self.cpus, rec, self.current);
    }

    /// Line record `rec` changed with the current event.
    #[inline]
    pub(crate) fn line_changed(&mut self, rec: u32) {
        Self::note(&mut self.lines, rec, self.current);
    }

    /// Fills the gap of each of `damage`; `cpu(rec)` and `line(rec)` are
    /// the keys of CPU and line records (their indices change when the
    /// snapshot sorts them).
    pub(crate) fn place(
        &self,
        damage: &mut [StreamDamage],
        cpu: impl Fn(u32) -> (u32, u32),
        line: impl Fn(u32) -> (u32, u8, u64),
    ) {
        // The damage of each stream that had events read.
        let mut of_stream: FastMap<u32, usize> = FastMap::default();
        for (k, d) in damage.iter_mut().enumerate() {
            d.gap = None;
            let stream = self.files.iter().position(|f| f.contains(&d.path));
            let Some(s) = stream else { continue };
            if let Some(from) = self.last[s] {
                d.gap = Some(DataGap {
                    from,
                    ..DataGap::default()
                });
                of_stream.insert(s as u32, k);
            }
        }
        if of_stream.is_empty() {
            return;
        }
        for (rec, &s) in self.threads.iter().enumerate() {
            if let Some(&k) = of_stream.get(&s) {
                if let Some(g) = damage[k].gap.as_mut() {
                    g.threads.push(rec as u32);
                }
            }
        }
        for (rec, &s) in self.cpus.iter().enumerate() {
            if let Some(&k) = of_stream.get(&s) {
                if let Some(g) = damage[k].gap.as_mut() {
                    g.cpus.push(cpu(rec as u32));
                }
            }
        }
        for (rec, &s) in self.lines.iter().enumerate() {
            if let Some(&k) = of_stream.get(&s) {
                if let Some(g) = damage[k].gap.as_mut() {
                    g.lines.push(line(rec as u32));
                }
            }
        }
    }
}
