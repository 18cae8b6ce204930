//! ViTE's multi-file traces and the time-ordered merge of their files.
//!
//! A definition file holds the header and the containers; `PajeTraceFile`
//! events (fields `Container`, `Type`, `Filename`) — or a `Filename` field
//! on `PajeCreateContainer` — name files holding the events of containers.
//! Those files use the definitions of the main file. All files are read
//! together, merged by time (ties go to the earlier file), which is what a
//! single-file trace with the same events would give. A file named twice, or
//! naming the definition file itself, is read once.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use crate::defs::{EventKind, Field};
use crate::error::{Diagnostics, PajeError, Severity};
use crate::index::{IndexBuilder, TraceIndex};
use crate::reader::{EventReader, PajeEvent, ReaderOptions, TraceFile};

/// The files of one trace: the main file first, then event files.
pub struct TraceFiles {
    files: Vec<TraceFile>,
    opts: ReaderOptions,
    main_definitions: crate::defs::Definitions,
    diags: Diagnostics,
}

impl TraceFiles {
    /// Opens the trace whose main file is `path`, following the files it
    /// names when `follow` is set.
    pub fn open(
        path: impl AsRef<Path>,
        opts: ReaderOptions,
        follow: bool,
    ) -> Result<TraceFiles, PajeError> {
        let main = TraceFile::open(path.as_ref())?;
        Ok(Self::from_main(main, opts, follow))
    }

    /// A trace made of `main` (and, when `follow`, the files it names).
    pub fn from_main(main: TraceFile, opts: ReaderOptions, follow: bool) -> TraceFiles {
        let mut set = TraceFiles {
            files: Vec::new(),
            opts,
            main_definitions: crate::defs::Definitions::new(opts.defs),
            diags: Diagnostics::default(),
        };
        let mut wanted = Vec::new();
        if follow && may_name_files(main.bytes()) {
            let mut reader = EventReader::new(&main, opts);
            for ev in reader.by_ref() {
                let named = match ev.kind {
                    EventKind::TraceFile => ev.get(Field::Filename),
                    EventKind::CreateContainer => ev.get(Field::Filename).filter(|f| !f.is_empty()),
                    _ => None,
                };
                if let Some(name) = named {
                    wanted.push((name.to_vec(), ev.location()));
                }
            }
            set.main_definitions = reader.definitions().clone();
        }
        let dir = main
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        // Event files are read only inside the main file's directory tree:
        // a trace must not make the reader open any file of the system.
        let tree = canonical(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &dir
        });
        let mut seen = vec![canonical(main.path())];
        set.files.push(main);
        for (name, loc) in wanted {
            let rel = PathBuf::from(String::from_utf8_lossy(&name).into_owned());
            let path = if rel.is_absolute() {
                rel
            } else {
                dir.join(rel)
            };
            let key = match std::fs::canonicalize(&path) {
                Ok(k) => k,
                Err(e) => {
                    let msg = format!("cannot read event file '{}': {e}", quote_path(&path));
                    set.diags.report(Severity::Error, loc, msg);
                    continue;
                }
            };
            if !key.starts_with(&tree) {
                let msg = format!(
                    "event file '{}' is outside the trace's directory {}; not read",
                    quote_path(&path),
                    tree.display()
                );
                set.diags.report(Severity::Error, loc, msg);
                continue;
            }
            if seen.contains(&key) {
                let msg = if key == seen[0] {
                    format!(
                        "'{}' is the definition file itself; not read again",
                        quote_path(&path)
                    )
                } else {
                    format!(
                        "'{}' is already part of the trace; not read again",
                        quote_path(&path)
                    )
                };
                set.diags.report(Severity::Warning, loc, msg);
                continue;
            }
            match TraceFile::open(&path) {
                Ok(f) => {
                    seen.push(key);
                    set.files.push(f);
                }
                Err(e) => {
                    set.diags
                        .report(Severity::Error, loc, format!("cannot read event file: {e}"))
                }
            }
        }
        set
    }

    /// A single-file trace held in memory.
    pub fn from_file(file: TraceFile, opts: ReaderOptions) -> TraceFiles {
        Self::from_main(file, opts, false)
    }

    /// The files, the main one first.
    pub fn files(&self) -> &[TraceFile] {
        &self.files
    }

    /// Problems found while looking for event files.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diags
    }

    /// All events of all files, merged by time.
    pub fn events(&self) -> MergedEvents<'_> {
        MergedEvents::new(self.readers())
    }

    /// One reader per file, at its start: what [`TraceFiles::events`]
    /// merges, for a caller doing its own merge (the engine's event
    /// source, which seeks each file).
    pub fn readers(&self) -> Vec<EventReader<'_>> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut r = if i == 0 {
                    EventReader::new(f, self.opts)
                } else {
                    EventReader::with_definitions(f, self.main_definitions.clone())
                };
                r.set_file_index(i as u32);
                r
            })
            .collect()
    }
}

/// False when no header line of `data` (a line whose first word starts
/// with `%`) mentions `PajeTraceFile` or a `Filename` field: then no event
/// of the file can name another file, and the full pass looking for such
/// events can be skipped. `%` is rare outside header lines, so this costs
/// one fast byte search over the file instead of decoding every line.
fn may_name_files(data: &[u8]) -> bool {
    let mut from = 0;
    while let Some(p) = memchr::memchr(b'%', &data[from..]).map(|p| p + from) {
        let line_start = memchr::memrchr(b'\n', &data[..p]).map_or(0, |n| n + 1);
        let line_end = memchr::memchr(b'\n', &data[p..]).map_or(data.len(), |n| p + n);
        // A header line: only blanks (or an opening quote, which the
        // splitter drops) before the `%`.
        let header = data[line_start..p]
            .iter()
            .all(|&b| crate::lexer::is_space(b) || b == b'"');
        if header {
            let line = &data[line_start..line_end];
            if memchr::memmem::find(line, b"PajeTraceFile").is_some()
                || memchr::memmem::find(line, b"Filename").is_some()
            {
                return true;
            }
        }
        from = line_end;
    }
    false
}

/// `p` for a message, cut to a few dozen characters (a trace names it).
fn quote_path(p: &Path) -> String {
    crate::error::cut(&p.to_string_lossy())
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Heap key: (time, file) with times in total order.
#[derive(Clone, Copy)]
struct Key(f64, u32);

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// The events of several files in time order (see the module doc).
pub struct MergedEvents<'a> {
    readers: Vec<EventReader<'a>>,
    heads: Vec<Option<PajeEvent<'a>>>,
    last_key: Vec<f64>,
    heap: BinaryHeap<Reverse<Key>>,
    started: bool,
    indexes: Option<Vec<IndexBuilder>>,
}

impl<'a> MergedEvents<'a> {
    fn new(readers: Vec<EventReader<'a>>) -> MergedEvents<'a> {
        let n = readers.len();
        MergedEvents {
            readers,
            heads: vec![None; n],
            last_key: vec![f64::NEG_INFINITY; n],
            heap: BinaryHeap::new(),
            started: false,
            indexes: None,
        }
    }

    /// Builds an index of every file while reading, one entry about every
    /// `interval` bytes (call before the first event).
    pub fn with_index(mut self, interval: u64) -> Self {
        self.indexes = Some(
            self.readers
                .iter()
                .map(|_| IndexBuilder::new(interval))
                .collect(),
        );
        self
    }

    /// The indexes built (empty unless [`MergedEvents::with_index`]).
    pub fn take_indexes(&mut self) -> Vec<TraceIndex> {
        self.indexes
            .take()
            .map(|v| v.into_iter().map(IndexBuilder::finish).collect())
            .unwrap_or_default()
    }

    /// The reader of file `i` (for its definitions).
    pub fn reader(&self, i: usize) -> Option<&EventReader<'a>> {
        self.readers.get(i)
    }

    /// Takes the problems every reader found so far.
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        let mut all = Diagnostics::default();
        for r in &mut self.readers {
            all.append(r.take_diagnostics());
        }
        all
    }

    /// Calls `f` with every remaining event, in the order the iterator
    /// gives them. A single-file trace is read in place, without moving
    /// events through the iterator layers (the fast path of a full read).
    pub fn for_each_event(&mut self, mut f: impl FnMut(&PajeEvent<'a>)) {
        if self.readers.len() != 1 || self.started {
            for ev in self.by_ref() {
                f(&ev);
            }
            return;
        }
        self.started = true;
        let reader = &mut self.readers[0];
        match self.indexes.as_mut().and_then(|v| v.first_mut()) {
            None => reader.for_each_event(|ev, _| f(ev)),
            Some(b) => {
                reader.for_each_event(|ev, before| {
                    b.before_read(before);
                    b.after_event(ev);
                    f(ev);
                });
                // As the iterator does before its last, empty read.
                b.before_read(EventReader::position(reader));
            }
        }
    }

    fn pull(&mut self, i: usize) -> Option<PajeEvent<'a>> {
        if let Some(b) = self.indexes.as_mut().and_then(|v| v.get_mut(i)) {
            b.before_read(self.readers[i].position());
        }
        let ev = self.readers[i].next()?;
        if let Some(b) = self.indexes.as_mut().and_then(|v| v.get_mut(i)) {
            b.after_event(&ev);
        }
        Some(ev)
    }

    fn refill(&mut self, i: usize) {
        if let Some(ev) = self.pull(i) {
            // Untimed events keep their place after the file's last time.
            let key = ev.time.unwrap_or(self.last_key[i]);
            self.last_key[i] = key;
            self.heads[i] = Some(ev);
            self.heap.push(Reverse(Key(key, i as u32)));
        }
    }
}

impl<'a> Iterator for MergedEvents<'a> {
    type Item = PajeEvent<'a>;

    fn next(&mut self) -> Option<PajeEvent<'a>> {
        if self.readers.len() == 1 {
            return self.pull(0);
        }
        if !self.started {
            self.started = true;
            for i in 0..self.readers.len() {
                self.refill(i);
            }
        }
        let Reverse(Key(_, i)) = self.heap.pop()?;
        let i = i as usize;
        let ev = self.heads[i].take();
        self.refill(i);
        ev
    }
}
