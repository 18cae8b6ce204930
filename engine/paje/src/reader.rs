//! Memory-mapped trace files and the streaming event reader.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::defs::{
    DefId, DefOptions, Definitions, EventDef, EventKind, Field, ABSENT, FIELD_COUNT,
};
use crate::error::{Diagnostics, Location, PajeError, Severity};
use crate::lexer::{find_newline, split_line, split_words, Span, SplitInfo, MAX_FIELDS};
use crate::numparse::parse_date;

enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// The bytes of one trace file: memory-mapped from disk, or owned.
pub struct TraceFile {
    path: Arc<Path>,
    data: Data,
}

impl TraceFile {
    /// Maps the file at `path` read-only. Only regular files are read: a
    /// FIFO or a device is an error, before anything blocks on it.
    pub fn open(path: impl AsRef<Path>) -> Result<TraceFile, PajeError> {
        let path = path.as_ref();
        let io_err = |source| PajeError::Io {
            path: path.to_path_buf(),
            source,
        };
        let not_a_file = || PajeError::NotAFile {
            path: path.to_path_buf(),
        };
        // Opening a FIFO blocks until a writer comes: look first, and open
        // without blocking in case the path changed in between.
        if !std::fs::metadata(path).map_err(io_err)?.is_file() {
            return Err(not_a_file());
        }
        let file = open_nonblocking(path).map_err(io_err)?;
        let md = file.metadata().map_err(io_err)?;
        if !md.is_file() {
            return Err(not_a_file());
        }
        let len = md.len();
        let data = if len == 0 {
            // Mapping an empty file fails on some systems; nothing to map.
            Data::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and private to this process. If
            // another process truncates the file while it is mapped, reads
            // may fault; that is the accepted cost of mapping trace files.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
            #[cfg(unix)]
            {
                // Only a hint: the reader goes front to back.
                let _ = map.advise(memmap2::Advice::Sequential);
            }
            Data::Mapped(map)
        };
        Ok(TraceFile {
            path: Arc::from(path),
            data,
        })
    }

    /// A trace held in memory; `name` is used in diagnostics only.
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>) -> TraceFile {
        TraceFile {
            path: Arc::from(name.into()),
            data: Data::Owned(bytes),
        }
    }

    /// The file's path (or the name given to [`TraceFile::from_bytes`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path as shared by diagnostics.
    pub fn shared_path(&self) -> &Arc<Path> {
        &self.path
    }

    /// The whole content.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(m) => m,
            Data::Owned(v) => v,
        }
    }
}

/// Opens `path` for reading without blocking on a FIFO.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    o.open(path)
}

/// Options of [`EventReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReaderOptions {
    /// Header options (legacy field names).
    pub defs: DefOptions,
}

/// One event line, decoded just enough to be used: its words are borrowed
/// from the file, no allocation is made.
#[derive(Clone, Copy)]
pub struct PajeEvent<'a> {
    /// The file it comes from.
    pub path: &'a Arc<Path>,
    /// Index of that file in a multi-file trace (0 for the first file).
    pub file: u32,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the start of the line.
    pub offset: u64,
    /// Which Pajé event it is.
    pub kind: EventKind,
    /// Its definition in the reader's [`Definitions`].
    pub def: DefId,
    /// The `Time` field, when the definition has one.
    pub time: Option<f64>,
    /// The line, without its `\n`; fields are spans of it. Spans keep the
    /// event small: it is moved through iterator layers on every line.
    text: &'a [u8],
    spans: [Span; MAX_FIELDS],
    count: u8,
    positions: [u8; FIELD_COUNT],
}

impl<'a> PajeEvent<'a> {
    /// A blank event to be filled by the reader.
    fn blank(path: &'a Arc<Path>, file: u32) -> PajeEvent<'a> {
        PajeEvent {
            path,
            file,
            line: 0,
            offset: 0,
            kind: EventKind::TraceFile,
            def: 0,
            time: None,
            text: b"",
            spans: [(0, 0); MAX_FIELDS],
            count: 0,
            positions: [ABSENT; FIELD_COUNT],
        }
    }
}

impl<'a> PajeEvent<'a> {
    /// The value of a known field, `None` when the definition lacks it.
    #[inline]
    pub fn get(&self, field: Field) -> Option<&'a [u8]> {
        match self.positions[field as usize] {
            ABSENT => None,
            p => Some(self.word(usize::from(p))),
        }
    }

    #[inline]
    fn word(&self, i: usize) -> &'a [u8] {
        let (s, e) = self.spans[i];
        self.text.get(s as usize..e as usize).unwrap_or(b"")
    }

    /// The value of a known field, empty when absent (as pajeng treats it).
    #[inline]
    pub fn field(&self, field: Field) -> &'a [u8] {
        self.get(field).unwrap_or(b"")
    }

    /// All words of the line, in definition order (the id first).
    pub fn words(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
        (0..usize::from(self.count)).map(|i| self.word(i))
    }

    /// Word `i` of the line (0 is the id), empty past the end.
    pub fn word_at(&self, i: usize) -> &'a [u8] {
        if i < usize::from(self.count) {
            self.word(i)
        } else {
            b""
        }
    }

    /// The user-defined fields, as (name, value) pairs; `def` is the
    /// definition this event was read with.
    pub fn extra_fields<'d>(
        &'d self,
        def: &'d EventDef,
    ) -> impl Iterator<Item = (&'d [u8], &'a [u8])> + 'd {
        def.fields
            .iter()
            .zip(self.words())
            .filter(|(spec, _)| spec.field.is_none())
            .map(|(spec, w)| (&*spec.name, w))
    }

    /// Where this event is, for diagnostics.
    pub fn location(&self) -> Location {
        Location {
            file: self.path.clone(),
            line: self.line,
            byte_offset: self.offset,
        }
    }
}

impl std::fmt::Debug for PajeEvent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<String> = self
            .words()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        f.debug_struct("PajeEvent")
            .field("line", &self.line)
            .field("offset", &self.offset)
            .field("kind", &self.kind)
            .field("time", &self.time)
            .field("words", &words)
            .finish()
    }
}

/// A position the reader can go back to (see [`crate::index`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderPosition {
    /// Byte offset of a line start.
    pub offset: u64,
    /// Line number of that line.
    pub line: u64,
    /// Number of definitions known before that line.
    pub definitions: usize,
}

/// Streams the events of one file, reading the header on the way.
///
/// Problems (unknown ids, malformed fields, bad header lines) are recorded
/// in [`EventReader::diagnostics`] and the offending line is skipped.
pub struct EventReader<'a> {
    data: &'a [u8],
    path: &'a Arc<Path>,
    file: u32,
    pos: usize,
    line: u64,
    defs: Definitions,
    diags: Diagnostics,
    finished: bool,
    /// The event being decoded, reused for every line (the iterator hands
    /// out copies).
    scratch: PajeEvent<'a>,
}

impl<'a> EventReader<'a> {
    /// A reader over `file`, starting with an empty definition table.
    pub fn new(file: &'a TraceFile, opts: ReaderOptions) -> EventReader<'a> {
        Self::with_definitions(file, Definitions::new(opts.defs))
    }

    /// A reader over `file` that already knows `defs` (multi-file traces:
    /// event files use the definitions of the main file).
    pub fn with_definitions(file: &'a TraceFile, defs: Definitions) -> EventReader<'a> {
        EventReader {
            data: file.bytes(),
            path: file.shared_path(),
            file: 0,
            pos: 0,
            line: 0,
            defs,
            diags: Diagnostics::default(),
            finished: false,
            scratch: PajeEvent::blank(file.shared_path(), 0),
        }
    }

    /// Sets the file index stamped on events (multi-file traces).
    pub fn set_file_index(&mut self, file: u32) {
        self.file = file;
        self.scratch.file = file;
    }

    /// The definitions read so far.
    pub fn definitions(&self) -> &Definitions {
        &self.defs
    }

    /// Problems found so far.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diags
    }

    /// Takes the problems found so far, leaving an empty collection.
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        std::mem::take(&mut self.diags)
    }

    /// Where the next line starts.
    pub fn position(&self) -> ReaderPosition {
        ReaderPosition {
            offset: self.pos as u64,
            line: self.line + 1,
            definitions: self.defs.len(),
        }
    }

    /// Continues reading at `pos` (obtained from [`EventReader::position`]
    /// or an index of the same file). Definitions made after that point are
    /// forgotten and will be read again; definitions made before it that
    /// this reader has not seen (a fresh reader) are read first from the top
    /// of the file, stopping as soon as they are all known.
    pub fn seek(&mut self, pos: ReaderPosition) {
        let target = (pos.offset as usize).min(self.data.len());
        if self.defs.len() < pos.definitions {
            self.read_definitions_until(pos.definitions, target);
        }
        self.pos = target;
        self.line = pos.line.saturating_sub(1);
        self.defs.truncate(pos.definitions);
        self.finished = false;
    }

    /// Reads header lines from the top until `count` definitions are known
    /// or `limit` is reached, without decoding event lines.
    fn read_definitions_until(&mut self, count: usize, limit: usize) {
        self.defs.truncate(0);
        let data: &'a [u8] = self.data;
        let (mut pos, mut line) = (0usize, 0u64);
        while pos < limit && self.defs.len() < count {
            let end = find_newline(data, pos).unwrap_or(data.len());
            line += 1;
            let text = &data[pos..end];
            let first = text.iter().position(|&b| !crate::lexer::is_space(b));
            if first.is_some_and(|i| text[i] == b'%') || self.defs.in_block() {
                let words = split_words(text);
                if words.get(0).first() == Some(&b'%') {
                    self.line = line;
                    let loc = self.loc(pos);
                    // Problems here are reported again when read normally.
                    let mut ignored = Diagnostics::with_limit(0);
                    self.defs.header_line(words.as_slice(), &loc, &mut ignored);
                }
            }
            pos = end + 1;
        }
    }

    fn loc(&self, offset: usize) -> Location {
        Location {
            file: self.path.clone(),
            line: self.line,
            byte_offset: offset as u64,
        }
    }

    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.defs.in_block() {
                let loc = self.loc(self.data.len());
                self.defs.close_open_block(&loc, &mut self.diags);
            }
        }
    }

    /// Decodes the event line `text` (starting at byte `start`, split into
    /// `ev.spans` as `split` says) into `ev`; false (with a diagnostic)
    /// when it is bad.
    #[inline]
    fn decode(
        &mut self,
        start: usize,
        text: &'a [u8],
        split: SplitInfo,
        ev: &mut PajeEvent<'a>,
    ) -> bool {
        let (s0, e0) = ev.spans[0];
        let id = &text[s0 as usize..e0 as usize];
        if self.defs.in_block() {
            let loc = self.loc(start);
            self.defs.close_open_block(&loc, &mut self.diags);
        }
        let Some(def_id) = self.defs.lookup(id) else {
            let msg = format!(
                "event id '{}' has no valid definition; line skipped",
                crate::error::cut_bytes(id)
            );
            self.diags.report(Severity::Error, self.loc(start), msg);
            return false;
        };
        let Some(def) = self.defs.get(def_id) else {
            return false;
        };
        let expected = def.fields.len();
        if split.total != expected {
            let skipped = split.total < expected;
            let msg = format!(
                "{} has {} field(s), its definition (id '{}') has {}; {}",
                def.kind.name(),
                split.total,
                crate::error::cut_bytes(id),
                expected,
                if skipped {
                    "line skipped"
                } else {
                    "extra fields ignored"
                }
            );
            let severity = if skipped {
                Severity::Error
            } else {
                Severity::Warning
            };
            self.diags.report(severity, self.loc(start), msg);
            if skipped {
                return false;
            }
        }
        ev.kind = def.kind;
        ev.def = def_id;
        ev.positions = *def.positions();
        ev.count = expected as u8;
        ev.text = text;
        ev.line = self.line;
        ev.offset = start as u64;
        ev.time = None;
        if let Some(p) = def.position(Field::Time) {
            let (s, e) = ev.spans[p];
            let word = &text[s as usize..e as usize];
            match parse_date(word) {
                Some(t) => ev.time = Some(t),
                None => {
                    let msg = format!(
                        "malformed date '{}' in {}; line skipped",
                        crate::error::cut_bytes(word),
                        def.kind.name()
                    );
                    self.diags.report(Severity::Error, self.loc(start), msg);
                    return false;
                }
            }
        }
        true
    }

    /// Reads lines until one is an event, decoded into `ev`; false at the
    /// end of the file. Header lines update the definitions, bad lines are
    /// reported and skipped.
    #[inline]
    fn read_into(&mut self, ev: &mut PajeEvent<'a>) -> bool {
        let data: &'a [u8] = self.data;
        loop {
            if self.pos >= data.len() {
                self.finish();
                return false;
            }
            let start = self.pos;
            let (split, end) = split_line(data, start, &mut ev.spans);
            self.pos = end + 1;
            self.line += 1;
            let text = &data[start..end];
            if text.len() > u32::MAX as usize {
                // Spans are 32-bit: such a line cannot be decoded.
                let loc = self.loc(start);
                self.diags
                    .report(Severity::Error, loc, "line longer than 4 GiB; line skipped");
                continue;
            }
            if split.total == 0 {
                continue;
            }
            if split.unterminated_quote {
                let loc = self.loc(start);
                self.diags.report(
                    Severity::Warning,
                    loc,
                    "quote not closed before the end of the line",
                );
            }
            let (s0, e0) = ev.spans[0];
            if text.get(s0 as usize..e0 as usize).and_then(|w| w.first()) == Some(&b'%') {
                // Header lines are few: the slice form is good enough.
                let words = split_words(text);
                let loc = self.loc(start);
                self.defs
                    .header_line(words.as_slice(), &loc, &mut self.diags);
                continue;
            }
            if self.decode(start, text, split, ev) {
                return true;
            }
        }
    }

    /// Calls `f` with every remaining event, in file order, and the
    /// position the reader was at before reading it (what
    /// [`EventReader::position`] said before the `next` call that would
    /// have returned it). Faster than iterating: each event is decoded in
    /// place and lent, never moved.
    #[inline]
    pub fn for_each_event(&mut self, mut f: impl FnMut(&PajeEvent<'a>, ReaderPosition)) {
        let mut ev = self.scratch;
        loop {
            let before = EventReader::position(self);
            if !self.read_into(&mut ev) {
                break;
            }
            f(&ev, before);
        }
    }
}

impl<'a> Iterator for EventReader<'a> {
    type Item = PajeEvent<'a>;

    fn next(&mut self) -> Option<PajeEvent<'a>> {
        let mut ev = self.scratch;
        self.read_into(&mut ev).then_some(ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n\
%EventDef PajeCreateContainer 6\n% Time date\n% Alias string\n% Type string\n% Container string\n% Name string\n% Note string\n%EndEventDef\n";

    /// (line, offset, kind, time, words) of each event.
    type Row = (u64, u64, EventKind, Option<f64>, Vec<String>);

    fn read(text: &str) -> (Vec<Row>, Diagnostics) {
        let f = TraceFile::from_bytes("mem.trace", text.as_bytes().to_vec());
        let mut r = EventReader::new(&f, ReaderOptions::default());
        let evs = r
            .by_ref()
            .map(|e| {
                let w = e
                    .words()
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                (e.line, e.offset, e.kind, e.time, w)
            })
            .collect();
        (evs, r.take_diagnostics())
    }

    #[test]
    fn events_carry_line_offset_time_and_fields() {
        let text =
            format!("{HEADER}# comment\n\n0 P 0 \"Process type\"\n6 1.5 p1 P 0 \"p 1\" hello\n");
        let (evs, diags) = read(&text);
        assert!(diags.is_empty(), "{:?}", diags.items());
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].0, 16);
        assert_eq!(evs[0].2, EventKind::DefineContainerType);
        assert_eq!(evs[0].3, None);
        assert_eq!(evs[1].0, 17);
        assert_eq!(evs[1].1 as usize, text.find("6 1.5").unwrap());
        assert_eq!(evs[1].3, Some(1.5));
        assert_eq!(evs[1].4, ["6", "1.5", "p1", "P", "0", "p 1", "hello"]);
    }

    #[test]
    fn field_access_by_name_and_extra_fields() {
        let text = format!("{HEADER}6 2 p1 P 0 n1 note\n");
        let f = TraceFile::from_bytes("mem.trace", text.into_bytes());
        let mut r = EventReader::new(&f, ReaderOptions::default());
        let ev = r.next().unwrap();
        assert_eq!(ev.get(Field::Name), Some(&b"n1"[..]));
        assert_eq!(ev.get(Field::Value), None);
        assert_eq!(ev.field(Field::Value), b"");
        let def = r.definitions().get(ev.def).unwrap();
        let extra: Vec<_> = ev.extra_fields(def).collect();
        assert_eq!(extra, [(&b"Note"[..], &b"note"[..])]);
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let text = format!("{HEADER}9 1 2\n6 abc p1 P 0 n x\n6 1 p1 P\n6 1 p1 P 0 n x extra\n");
        let (evs, diags) = read(&text);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].0, 17);
        let found: Vec<(u64, Severity)> = diags
            .items()
            .iter()
            .map(|d| (d.location.line, d.severity))
            .collect();
        assert_eq!(
            found,
            [
                (14, Severity::Error),
                (15, Severity::Error),
                (16, Severity::Error),
                (17, Severity::Warning)
            ]
        );
        assert!(diags.items()[0]
            .to_string()
            .starts_with("mem.trace:14 (byte "));
    }

    #[test]
    fn no_trailing_newline_and_crlf() {
        let text = format!("{HEADER}6 1 p1 P 0 n x\r\n6 2 p2 P 0 m y").replace('\n', "\r\n");
        let (evs, diags) = read(&text);
        assert!(diags.is_empty(), "{:?}", diags.items());
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[1].4[6], "y");
    }

    #[test]
    fn seek_back_rereads_definitions() {
        let text = format!("{HEADER}6 1 p1 P 0 n x\n6 2 p2 P 0 m y\n");
        let f = TraceFile::from_bytes("mem.trace", text.into_bytes());
        let mut r = EventReader::new(&f, ReaderOptions::default());
        let start = r.position();
        let all: Vec<u64> = r.by_ref().map(|e| e.line).collect();
        r.seek(start);
        let again: Vec<u64> = r.by_ref().map(|e| e.line).collect();
        assert_eq!(all, again);
        assert!(r.diagnostics().is_empty());
    }

    #[test]
    fn open_missing_file_names_it() {
        let err = TraceFile::open("/nonexistent/x.trace").err().unwrap();
        assert!(err.to_string().starts_with("/nonexistent/x.trace: "));
    }
}
