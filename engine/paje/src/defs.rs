//! The `%EventDef NAME ID ... %EndEventDef` header: event kinds, field
//! names and types, and the table mapping event ids to definitions.

use crate::error::{Diagnostics, Location, Severity};
use crate::lexer::MAX_FIELDS;
use traceloom_base::FastMap;

/// The Pajé events (plus `PajeTraceFile`, used by multi-file traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `PajeDefineContainerType`
    DefineContainerType,
    /// `PajeDefineStateType`
    DefineStateType,
    /// `PajeDefineEventType`
    DefineEventType,
    /// `PajeDefineVariableType`
    DefineVariableType,
    /// `PajeDefineLinkType`
    DefineLinkType,
    /// `PajeDefineEntityValue`
    DefineEntityValue,
    /// `PajeCreateContainer`
    CreateContainer,
    /// `PajeDestroyContainer`
    DestroyContainer,
    /// `PajeSetState`
    SetState,
    /// `PajePushState`
    PushState,
    /// `PajePopState`
    PopState,
    /// `PajeResetState`
    ResetState,
    /// `PajeNewEvent`
    NewEvent,
    /// `PajeSetVariable`
    SetVariable,
    /// `PajeAddVariable`
    AddVariable,
    /// `PajeSubVariable`
    SubVariable,
    /// `PajeStartLink`
    StartLink,
    /// `PajeEndLink`
    EndLink,
    /// `PajeTraceFile`: names the file holding a container's events.
    TraceFile,
}

const KINDS: [(EventKind, &str); 19] = [
    (EventKind::DefineContainerType, "PajeDefineContainerType"),
    (EventKind::DefineStateType, "PajeDefineStateType"),
    (EventKind::DefineEventType, "PajeDefineEventType"),
    (EventKind::DefineVariableType, "PajeDefineVariableType"),
    (EventKind::DefineLinkType, "PajeDefineLinkType"),
    (EventKind::DefineEntityValue, "PajeDefineEntityValue"),
    (EventKind::CreateContainer, "PajeCreateContainer"),
    (EventKind::DestroyContainer, "PajeDestroyContainer"),
    (EventKind::SetState, "PajeSetState"),
    (EventKind::PushState, "PajePushState"),
    (EventKind::PopState, "PajePopState"),
    (EventKind::ResetState, "PajeResetState"),
    (EventKind::NewEvent, "PajeNewEvent"),
    (EventKind::SetVariable, "PajeSetVariable"),
    (EventKind::AddVariable, "PajeAddVariable"),
    (EventKind::SubVariable, "PajeSubVariable"),
    (EventKind::StartLink, "PajeStartLink"),
    (EventKind::EndLink, "PajeEndLink"),
    (EventKind::TraceFile, "PajeTraceFile"),
];

impl EventKind {
    /// The kind named `name` (`PajeSetState`, ...).
    pub fn from_name(name: &[u8]) -> Option<EventKind> {
        KINDS
            .iter()
            .find(|(_, n)| n.as_bytes() == name)
            .map(|(k, _)| *k)
    }

    /// The Pajé name of this kind.
    pub fn name(self) -> &'static str {
        KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("")
    }

    /// Fields a definition of this kind must have (besides the id).
    pub fn obligatory_fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            EventKind::DefineContainerType
            | EventKind::DefineEventType
            | EventKind::DefineStateType
            | EventKind::DefineVariableType
            | EventKind::DefineEntityValue => &[Name, Type],
            EventKind::DefineLinkType => &[Name, Type, StartContainerType, EndContainerType],
            EventKind::CreateContainer => &[Time, Name, Type, Container],
            EventKind::DestroyContainer => &[Time, Name, Type],
            EventKind::NewEvent
            | EventKind::SetState
            | EventKind::PushState
            | EventKind::SetVariable
            | EventKind::AddVariable
            | EventKind::SubVariable => &[Time, Type, Container, Value],
            EventKind::PopState | EventKind::ResetState => &[Time, Type, Container],
            EventKind::StartLink => &[Time, Type, Container, Value, StartContainer, Key],
            EventKind::EndLink => &[Time, Type, Container, Value, EndContainer, Key],
            EventKind::TraceFile => &[Container, Type, Filename],
        }
    }
}

/// The field names Pajé gives a meaning to. Any other name is a
/// user-defined ("extra") field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Field {
    /// The event id (always the first word of an event line).
    Event,
    /// `Time`
    Time,
    /// `Name`
    Name,
    /// `Type`
    Type,
    /// `Container`
    Container,
    /// `StartContainerType`
    StartContainerType,
    /// `EndContainerType`
    EndContainerType,
    /// `StartContainer`
    StartContainer,
    /// `EndContainer`
    EndContainer,
    /// `Value`
    Value,
    /// `Key`
    Key,
    /// `Alias`
    Alias,
    /// `Color`
    Color,
    /// `Line`
    Line,
    /// `File`
    File,
    /// `Filename`
    Filename,
}

/// Number of [`Field`] variants.
pub const FIELD_COUNT: usize = 16;

const FIELDS: [(Field, &str); FIELD_COUNT] = [
    (Field::Event, "Event"),
    (Field::Time, "Time"),
    (Field::Name, "Name"),
    (Field::Type, "Type"),
    (Field::Container, "Container"),
    (Field::StartContainerType, "StartContainerType"),
    (Field::EndContainerType, "EndContainerType"),
    (Field::StartContainer, "StartContainer"),
    (Field::EndContainer, "EndContainer"),
    (Field::Value, "Value"),
    (Field::Key, "Key"),
    (Field::Alias, "Alias"),
    (Field::Color, "Color"),
    (Field::Line, "Line"),
    (Field::File, "File"),
    (Field::Filename, "Filename"),
];

/// Pre-standard field names some tracers still write (pj_dump accepts them
/// only with `--no-strict`).
const LEGACY_FIELDS: [(Field, &str); 6] = [
    (Field::Type, "ContainerType"),
    (Field::Type, "EntityType"),
    (Field::StartContainerType, "SourceContainerType"),
    (Field::EndContainerType, "DestContainerType"),
    (Field::StartContainer, "SourceContainer"),
    (Field::EndContainer, "DestContainer"),
];

impl Field {
    /// The field named `name`; legacy names are recognised when `legacy`.
    pub fn from_name(name: &[u8], legacy: bool) -> Option<Field> {
        let hit = FIELDS.iter().find(|(_, n)| n.as_bytes() == name);
        let hit = match hit {
            Some(h) => Some(h),
            None if legacy => LEGACY_FIELDS.iter().find(|(_, n)| n.as_bytes() == name),
            None => None,
        };
        hit.map(|(f, _)| *f)
    }

    /// The standard name of this field.
    pub fn name(self) -> &'static str {
        FIELDS[self as usize].1
    }
}

/// Declared type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// `string`
    String,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `int`
    Int,
    /// `hex`
    Hex,
    /// `date`
    Date,
    /// `color`
    Color,
}

impl FieldType {
    /// The type named `name` (`string`, `date`, ...).
    pub fn from_name(name: &[u8]) -> Option<FieldType> {
        Some(match name {
            b"string" => FieldType::String,
            b"float" => FieldType::Float,
            b"double" => FieldType::Double,
            b"int" => FieldType::Int,
            b"hex" => FieldType::Hex,
            b"date" => FieldType::Date,
            b"color" => FieldType::Color,
            _ => return None,
        })
    }
}

/// One field of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// The name as written in the header.
    pub name: Box<[u8]>,
    /// The meaning, or `None` for a user-defined field.
    pub field: Option<Field>,
    /// The declared type.
    pub ty: FieldType,
}

/// Index of a definition in a [`Definitions`] table.
pub type DefId = u32;

/// Marker for "field absent" in [`EventDef::positions`].
pub(crate) const ABSENT: u8 = u8::MAX;

/// One `%EventDef ... %EndEventDef` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDef {
    /// Which Pajé event this defines.
    pub kind: EventKind,
    /// The id event lines use (compared as written: `01` is not `1`).
    pub id: Box<[u8]>,
    /// Line of the `%EventDef`.
    pub line: u64,
    /// The fields in line order; the first is always the implicit `Event`.
    pub fields: Vec<FieldSpec>,
    positions: [u8; FIELD_COUNT],
}

impl EventDef {
    fn new(kind: EventKind, id: &[u8], line: u64) -> EventDef {
        let mut d = EventDef {
            kind,
            id: id.into(),
            line,
            fields: Vec::new(),
            positions: [ABSENT; FIELD_COUNT],
        };
        d.push(b"Event", Some(Field::Event), FieldType::Int);
        d
    }

    fn push(&mut self, name: &[u8], field: Option<Field>, ty: FieldType) {
        if let Some(f) = field {
            self.positions[f as usize] = self.fields.len() as u8;
        }
        self.fields.push(FieldSpec {
            name: name.into(),
            field,
            ty,
        });
    }

    /// Position of `field` on an event line, if the definition has it.
    pub fn position(&self, field: Field) -> Option<usize> {
        match self.positions[field as usize] {
            ABSENT => None,
            p => Some(usize::from(p)),
        }
    }

    pub(crate) fn positions(&self) -> &[u8; FIELD_COUNT] {
        &self.positions
    }

    /// Obligatory fields this definition lacks.
    pub fn missing_fields(&self) -> Vec<Field> {
        self.kind
            .obligatory_fields()
            .iter()
            .copied()
            .filter(|f| self.position(*f).is_none())
            .collect()
    }
}

/// Options of the header parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefOptions {
    /// Accept pre-standard field names (`ContainerType`, `EntityType`,
    /// `SourceContainer`, ...). pj_dump needs `--no-strict` for that.
    pub legacy_field_names: bool,
}

impl Default for DefOptions {
    fn default() -> Self {
        DefOptions {
            legacy_field_names: true,
        }
    }
}

/// Ids that are small canonical decimals get a direct slot.
const DENSE_IDS: usize = 4096;

fn dense_slot(id: &[u8]) -> Option<usize> {
    if id.is_empty() || id.len() > 4 || (id.len() > 1 && id[0] == b'0') {
        return None;
    }
    let mut v = 0usize;
    for &b in id {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + usize::from(b - b'0');
    }
    (v < DENSE_IDS).then_some(v)
}

enum State {
    Outside,
    /// Inside a block; `None` when the block is being skipped after an error.
    Inside(Option<EventDef>),
}

/// The table of event definitions, and the state machine reading them.
pub struct Definitions {
    defs: Vec<EventDef>,
    dense: Vec<u32>,
    sparse: FastMap<Box<[u8]>, DefId>,
    state: State,
    opts: DefOptions,
}

impl Clone for Definitions {
    /// Clones the finished table (a block being read is not carried over).
    fn clone(&self) -> Self {
        Definitions {
            defs: self.defs.clone(),
            dense: self.dense.clone(),
            sparse: self.sparse.clone(),
            state: State::Outside,
            opts: self.opts,
        }
    }
}

impl Definitions {
    /// An empty table.
    pub fn new(opts: DefOptions) -> Definitions {
        Definitions {
            defs: Vec::new(),
            dense: vec![0; DENSE_IDS],
            sparse: FastMap::default(),
            state: State::Outside,
            opts,
        }
    }

    /// The definition event lines with id `id` use.
    #[inline]
    pub fn lookup(&self, id: &[u8]) -> Option<DefId> {
        match dense_slot(id) {
            Some(s) => self.dense[s].checked_sub(1),
            None => self.sparse.get(id).copied(),
        }
    }

    /// Definition number `id`.
    pub fn get(&self, id: DefId) -> Option<&EventDef> {
        self.defs.get(id as usize)
    }

    /// All definitions, in header order.
    pub fn all(&self) -> &[EventDef] {
        &self.defs
    }

    /// Number of definitions.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// True when no definition has been read.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// True between an `%EventDef` and its `%EndEventDef`.
    pub fn in_block(&self) -> bool {
        matches!(self.state, State::Inside(_))
    }

    /// Forgets every definition after the first `count` ones (used when a
    /// reader seeks back to a point where fewer were known).
    pub fn truncate(&mut self, count: usize) {
        while self.defs.len() > count {
            if let Some(d) = self.defs.pop() {
                match dense_slot(&d.id) {
                    Some(s) => self.dense[s] = 0,
                    None => {
                        self.sparse.remove(&d.id);
                    }
                }
            }
        }
        self.state = State::Outside;
    }

    fn register(&mut self, d: EventDef, loc: &Location, diags: &mut Diagnostics) {
        if self.lookup(&d.id).is_some() {
            diags.report(
                Severity::Error,
                loc.clone(),
                format!(
                    "redefinition of event id '{}' ignored (first definition kept)",
                    crate::error::cut_bytes(&d.id)
                ),
            );
            return;
        }
        let missing = d.missing_fields();
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|f| f.name()).collect();
            diags.report(
                Severity::Error,
                loc.clone(),
                format!(
                    "definition of {} with id '{}' (line {}) lacks obligatory field(s) {}; events with this id will be rejected",
                    d.kind.name(),
                    crate::error::cut_bytes(&d.id),
                    d.line,
                    names.join(", ")
                ),
            );
            return;
        }
        let n = self.defs.len() as DefId;
        match dense_slot(&d.id) {
            Some(s) => self.dense[s] = n + 1,
            None => {
                self.sparse.insert(d.id.clone(), n);
            }
        }
        self.defs.push(d);
    }

    /// Closes a block left open (at end of file or when an event line
    /// interrupts it).
    pub fn close_open_block(&mut self, loc: &Location, diags: &mut Diagnostics) {
        if let State::Inside(pending) = std::mem::replace(&mut self.state, State::Outside) {
            diags.report(
                Severity::Warning,
                loc.clone(),
                "event definition not closed by %EndEventDef",
            );
            if let Some(d) = pending {
                self.register(d, loc, diags);
            }
        }
    }

    /// Reads one header line (its first word starts with `%`).
    pub fn header_line(&mut self, words: &[&[u8]], loc: &Location, diags: &mut Diagnostics) {
        // "%EventDef" or "% EventDef": the keyword may be detached.
        let first = words.first().copied().unwrap_or(b"%");
        let (keyword, rest) = if first.len() == 1 {
            (
                words.get(1).copied().unwrap_or(b""),
                words.get(2..).unwrap_or(&[]),
            )
        } else {
            (&first[1..], &words[1..])
        };

        if keyword == b"EventDef" {
            if self.in_block() {
                self.close_open_block(loc, diags);
            }
            self.begin_block(rest, loc, diags);
            return;
        }
        match &mut self.state {
            State::Outside => {
                diags.report(
                    Severity::Error,
                    loc.clone(),
                    format!(
                        "header line '%{}' outside of an %EventDef block ignored",
                        crate::error::cut_bytes(keyword)
                    ),
                );
            }
            State::Inside(_) if keyword == b"EndEventDef" => {
                if let State::Inside(Some(d)) = std::mem::replace(&mut self.state, State::Outside) {
                    self.register(d, loc, diags);
                }
            }
            State::Inside(None) => {}
            State::Inside(Some(d)) => {
                let Some(&ty_name) = rest.first() else {
                    diags.report(
                        Severity::Error,
                        loc.clone(),
                        format!(
                            "field '{}' has no type; assuming string",
                            crate::error::cut_bytes(keyword)
                        ),
                    );
                    push_field(d, keyword, FieldType::String, self.opts, loc, diags);
                    return;
                };
                let ty = FieldType::from_name(ty_name).unwrap_or_else(|| {
                    diags.report(
                        Severity::Error,
                        loc.clone(),
                        format!(
                            "unknown type '{}' for field '{}'; assuming string",
                            crate::error::cut_bytes(ty_name),
                            crate::error::cut_bytes(keyword)
                        ),
                    );
                    FieldType::String
                });
                push_field(d, keyword, ty, self.opts, loc, diags);
            }
        }
    }

    fn begin_block(&mut self, rest: &[&[u8]], loc: &Location, diags: &mut Diagnostics) {
        if rest.len() != 2 {
            diags.report(
                Severity::Error,
                loc.clone(),
                "'%EventDef <event name> <event id>' expected; block ignored",
            );
            self.state = State::Inside(None);
            return;
        }
        let Some(kind) = EventKind::from_name(rest[0]) else {
            diags.report(
                Severity::Error,
                loc.clone(),
                format!(
                    "unknown event name '{}'; block ignored",
                    crate::error::cut_bytes(rest[0])
                ),
            );
            self.state = State::Inside(None);
            return;
        };
        self.state = State::Inside(Some(EventDef::new(kind, rest[1], loc.line)));
    }
}

fn push_field(
    d: &mut EventDef,
    name: &[u8],
    ty: FieldType,
    opts: DefOptions,
    loc: &Location,
    diags: &mut Diagnostics,
) {
    if d.fields.len() >= MAX_FIELDS {
        diags.report(
            Severity::Error,
            loc.clone(),
            format!("more than {MAX_FIELDS} fields in one definition; field ignored"),
        );
        return;
    }
    let mut field = Field::from_name(name, opts.legacy_field_names);
    if let Some(f) = field {
        if d.position(f).is_some() {
            diags.report(
                Severity::Error,
                loc.clone(),
                format!(
                    "field '{}' defined twice; the second one is ignored",
                    crate::error::cut_bytes(name)
                ),
            );
            field = None;
        }
    }
    d.push(name, field, ty);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::split_words;
    use std::path::Path;
    use std::sync::Arc;

    fn feed(text: &str, opts: DefOptions) -> (Definitions, Diagnostics) {
        let mut defs = Definitions::new(opts);
        let mut diags = Diagnostics::default();
        let file: Arc<Path> = Arc::from(Path::new("t.trace"));
        for (i, line) in text.lines().enumerate() {
            let w = split_words(line.as_bytes());
            if w.total() == 0 {
                continue;
            }
            let loc = Location {
                file: file.clone(),
                line: i as u64 + 1,
                byte_offset: 0,
            };
            defs.header_line(w.as_slice(), &loc, &mut diags);
        }
        (defs, diags)
    }

    #[test]
    fn any_field_order_and_extra_fields() {
        let (defs, diags) = feed(
            "%EventDef PajeSetState 7\n% Value string\n% Mark int\n%  Container string\n% Time date\n% Type string\n%EndEventDef",
            DefOptions::default(),
        );
        assert!(diags.is_empty(), "{:?}", diags.items());
        let d = defs.get(defs.lookup(b"7").unwrap()).unwrap();
        assert_eq!(d.kind, EventKind::SetState);
        assert_eq!(d.position(Field::Event), Some(0));
        assert_eq!(d.position(Field::Value), Some(1));
        assert_eq!(d.fields[2].field, None);
        assert_eq!(&*d.fields[2].name, b"Mark");
        assert_eq!(d.fields[2].ty, FieldType::Int);
        assert_eq!(d.position(Field::Time), Some(4));
        assert_eq!(defs.lookup(b"07"), None);
    }

    #[test]
    fn detached_percent_and_sparse_ids() {
        let (defs, diags) = feed(
            "% EventDef PajePopState abc\n% Time date\n% Type string\n% Container string\n% EndEventDef",
            DefOptions::default(),
        );
        assert!(diags.is_empty());
        assert!(defs.lookup(b"abc").is_some());
    }

    #[test]
    fn legacy_names_depend_on_options() {
        let text = "%EventDef PajeDefineContainerType 1\n% Alias string\n% ContainerType string\n% Name string\n%EndEventDef";
        let (defs, diags) = feed(
            text,
            DefOptions {
                legacy_field_names: true,
            },
        );
        assert!(diags.is_empty());
        assert!(defs.lookup(b"1").is_some());
        let (defs, diags) = feed(
            text,
            DefOptions {
                legacy_field_names: false,
            },
        );
        assert_eq!(defs.lookup(b"1"), None);
        assert_eq!(diags.error_count(), 1);
        assert_eq!(diags.items()[0].location.line, 5);
        assert!(diags.items()[0].message.contains("Type"));
    }

    #[test]
    fn errors_are_reported_and_recovered() {
        let (defs, diags) = feed(
            "%EventDef PajeBogus 1\n% Time date\n%EndEventDef\n\
             %EventDef PajeNewEvent 2\n% Time date\n% Type string\n% Container string\n% Value strange\n% Value string\n%EndEventDef\n\
             %EventDef PajeNewEvent 2\n% Time date\n%EndEventDef\n\
             %Time date\n\
             %EventDef PajePopState 3\n% Time date\n% Type string\n% Container string\n\
             %EventDef PajeResetState 4\n% Time date\n% Type string\n% Container string\n%EndEventDef",
            DefOptions::default(),
        );
        assert_eq!(defs.lookup(b"1"), None);
        let d = defs.get(defs.lookup(b"2").unwrap()).unwrap();
        // The unknown type became a string; the duplicate became an extra field.
        assert_eq!(d.fields.len(), 6);
        assert_eq!(d.fields[5].field, None);
        assert!(defs.lookup(b"3").is_some());
        assert!(defs.lookup(b"4").is_some());
        let lines: Vec<u64> = diags.items().iter().map(|d| d.location.line).collect();
        assert_eq!(lines, [1, 8, 9, 13, 14, 19]);
    }

    #[test]
    fn truncate_forgets_later_definitions() {
        let (mut defs, _) = feed(
            "%EventDef PajePopState 3\n% Time date\n% Type string\n% Container string\n%EndEventDef\n\
             %EventDef PajePopState x\n% Time date\n% Type string\n% Container string\n%EndEventDef",
            DefOptions::default(),
        );
        assert_eq!(defs.len(), 2);
        defs.truncate(1);
        assert!(defs.lookup(b"3").is_some());
        assert_eq!(defs.lookup(b"x"), None);
    }
}
