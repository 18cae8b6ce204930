//! A packet-like index of a trace file: every so many bytes, where a line
//! starts, how many definitions precede it and what times surround it, so
//! that a reader can jump close to a time instead of reading from the top.
//!
//! Entries point at line starts and are taken only at event boundaries, so
//! [`EventReader::seek`] resumes exactly there. The simulation state
//! (open states, pending links) at that point is not part of the index: a
//! consumer that needs it replays from the start or keeps its own
//! checkpoints.

use crate::reader::{EventReader, PajeEvent, ReaderOptions, ReaderPosition, TraceFile};

/// One index point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexEntry {
    /// Where to resume reading.
    pub position: ReaderPosition,
    /// Time of the first timed event at or after `position` (`None` if
    /// there is none).
    pub first_time: Option<f64>,
    /// Largest event time before `position` (-inf if none). Never
    /// decreases from one entry to the next, even in unsorted traces.
    pub max_time_before: f64,
}

/// The index of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceIndex {
    entries: Vec<IndexEntry>,
    interval: u64,
}

impl TraceIndex {
    /// Indexes `file` with an entry about every `interval` bytes.
    pub fn build(file: &TraceFile, opts: ReaderOptions, interval: u64) -> TraceIndex {
        let mut reader = EventReader::new(file, opts);
        let mut b = IndexBuilder::new(interval);
        loop {
            b.before_read(reader.position());
            match reader.next() {
                Some(ev) => b.after_event(&ev),
                None => break,
            }
        }
        b.finish()
    }

    /// All entries, by increasing offset (the first one is at offset 0).
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// The spacing the index was built with.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The last entry before which every event is earlier than `t`:
    /// reading from there sees every event at or after `t`.
    pub fn seek_point(&self, t: f64) -> Option<&IndexEntry> {
        let n = self.entries.partition_point(|e| e.max_time_before < t);
        self.entries.get(n.saturating_sub(1))
    }
}

/// Builds a [`TraceIndex`] while a reader goes through a file.
#[derive(Debug, Clone)]
pub struct IndexBuilder {
    entries: Vec<IndexEntry>,
    interval: u64,
    next_mark: u64,
    max_time: f64,
    waiting: bool,
}

impl IndexBuilder {
    /// A builder placing an entry about every `interval` bytes (at least 1).
    pub fn new(interval: u64) -> IndexBuilder {
        IndexBuilder {
            entries: Vec::new(),
            interval: interval.max(1),
            next_mark: 0,
            max_time: f64::NEG_INFINITY,
            waiting: false,
        }
    }

    /// Call with the reader's position before each read.
    pub fn before_read(&mut self, pos: ReaderPosition) {
        if pos.offset >= self.next_mark {
            self.entries.push(IndexEntry {
                position: pos,
                first_time: None,
                max_time_before: self.max_time,
            });
            self.next_mark = pos.offset.saturating_add(self.interval);
            self.waiting = true;
        }
    }

    /// Call with each event read.
    pub fn after_event(&mut self, ev: &PajeEvent<'_>) {
        if let Some(t) = ev.time {
            if self.waiting {
                // Entries still waiting for a time all get this one.
                for e in self.entries.iter_mut().rev() {
                    if e.first_time.is_some() {
                        break;
                    }
                    e.first_time = Some(t);
                }
                self.waiting = false;
            }
            if t > self.max_time {
                self.max_time = t;
            }
        }
    }

    /// The index.
    pub fn finish(self) -> TraceIndex {
        TraceIndex {
            entries: self.entries,
            interval: self.interval,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(n: usize) -> String {
        let mut s = String::from(
            "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
             %EventDef PajeCreateContainer 1\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n%EndEventDef\n\
             0 P 0 P\n",
        );
        for i in 0..n {
            s.push_str(&format!("1 {}.5 c{i} P 0 c{i}\n", i));
        }
        s
    }

    #[test]
    fn entries_allow_seeking_by_time() {
        let f = TraceFile::from_bytes("x.trace", trace(1000).into_bytes());
        let idx = TraceIndex::build(&f, ReaderOptions::default(), 1024);
        assert!(idx.entries().len() > 10);
        assert_eq!(idx.entries()[0].position.offset, 0);
        for w in idx.entries().windows(2) {
            assert!(w[0].position.offset < w[1].position.offset);
            assert!(w[0].max_time_before <= w[1].max_time_before);
        }
        let e = idx.seek_point(500.0).unwrap();
        assert!(e.max_time_before < 500.0);
        let mut r = EventReader::new(&f, ReaderOptions::default());
        r.seek(e.position);
        let times: Vec<f64> = r.by_ref().filter_map(|e| e.time).collect();
        assert_eq!(times.first().copied(), e.first_time);
        assert!(times.contains(&500.5));
        assert!(times.len() < 600, "seek should skip most of the file");
        assert!(r.diagnostics().is_empty());
        // Before everything: the start of the file.
        assert_eq!(idx.seek_point(-5.0).unwrap().position.offset, 0);
    }
}
