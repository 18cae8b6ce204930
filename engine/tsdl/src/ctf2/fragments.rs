//! The fragment kinds of CTF 2 metadata, each interpreted into [`State`]:
//! the preamble (first, version 2), the trace class (at most one), clock
//! classes, data stream classes, event record classes, and field-class
//! aliases (usable by the fragments after them).
//!
//! The properties of the CTF 2 specification are read, and so are those
//! of its draft that LTTng 2.14 pre-releases wrote (the Trace Compass CTF
//! 2 test traces): a clock class `name` instead of `id`, a data stream
//! class `default-clock-class-name`, a trace class `uuid`, enumeration
//! field class types and `user-attributes`.

use super::fields::{Aliases, Builder, Fc};
use super::json::{uuid, Frag, Obj};
use super::FragError;
use crate::ir::{ClockClass, EnvValue, Scope};

/// A data stream class waiting for resolution.
#[derive(Debug)]
pub(crate) struct PendingStream {
    /// Its fragment (for errors).
    pub(crate) frag: (usize, usize),
    pub(crate) id: u64,
    /// Id (or draft name) of its default clock class.
    pub(crate) clock: Option<String>,
    pub(crate) packet_context: Option<Fc>,
    pub(crate) event_header: Option<Fc>,
    pub(crate) event_context: Option<Fc>,
}

/// An event record class waiting for resolution.
#[derive(Debug)]
pub(crate) struct PendingEvent {
    pub(crate) frag: (usize, usize),
    pub(crate) id: u64,
    pub(crate) stream_id: u64,
    pub(crate) name: String,
    pub(crate) loglevel: Option<i64>,
    pub(crate) emf_uri: Option<String>,
    pub(crate) context: Option<Fc>,
    pub(crate) payload: Option<Fc>,
}

/// Everything the fragments said, in order.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) preamble: bool,
    pub(crate) trace: bool,
    pub(crate) uuid: Option<[u8; 16]>,
    pub(crate) uid: Option<String>,
    pub(crate) env: Vec<(String, EnvValue)>,
    pub(crate) packet_header: Option<Fc>,
    /// Clock classes with their id (the name data stream classes use).
    pub(crate) clocks: Vec<(String, ClockClass)>,
    pub(crate) streams: Vec<PendingStream>,
    pub(crate) events: Vec<PendingEvent>,
    aliases: Aliases,
}

impl State {
    /// Interprets one fragment.
    pub(crate) fn fragment(&mut self, f: Frag<'_>) -> Result<(), FragError> {
        let o = f.obj(f.value, "fragment")?;
        let kind = o.req_str("type")?;
        if !self.preamble && kind != "preamble" {
            return Err(f.err(format!(
                "the first fragment must be the preamble, not a `{kind}`"
            )));
        }
        let o = f.obj(f.value, kind)?;
        match kind {
            "preamble" => self.preamble(&o),
            "trace-class" => self.trace_class(&o),
            "clock-class" => self.clock_class(&o),
            "data-stream-class" => self.stream_class(&o),
            "event-record-class" => self.event_class(&o),
            "field-class-alias" => {
                let name = o.req_str("name")?;
                let fc = o
                    .get("field-class")
                    .ok_or_else(|| o.err("missing `field-class`"))?;
                // Checked now, so that a bad alias is reported here.
                Builder::new(f, &self.aliases, Scope::EventPayload).fc(fc, name, 0)?;
                self.aliases.define(&f, name, fc)
            }
            other => Err(f.err(format!("unknown fragment type `{other}`"))),
        }
    }

    fn preamble(&mut self, o: &Obj<'_>) -> Result<(), FragError> {
        if self.preamble {
            return Err(o.err("a second preamble"));
        }
        match o.u64("version")? {
            Some(2) => {}
            v => {
                return Err(o.err(format!(
                    "unsupported CTF version {} (this is the CTF 2 reader)",
                    v.map_or("(none)".to_string(), |v| v.to_string())
                )))
            }
        }
        self.uuid = uuid(o, "uuid")?;
        self.preamble = true;
        Ok(())
    }

    fn trace_class(&mut self, o: &Obj<'_>) -> Result<(), FragError> {
        if self.trace {
            return Err(o.err("a second trace class"));
        }
        if !self.streams.is_empty() || !self.clocks.is_empty() {
            return Err(o.err("the trace class must come before clock and data stream classes"));
        }
        self.trace = true;
        if let Some(u) = uuid(o, "uuid")? {
            self.uuid.get_or_insert(u);
        }
        self.uid = o.str("uid")?.map(str::to_string);
        if let Some(env) = o.obj("environment")? {
            for (k, v) in env.entries() {
                let v = if let Some(i) = v.as_i64() {
                    EnvValue::Int(i)
                } else if let Some(s) = v.as_str() {
                    EnvValue::Str(s.to_string())
                } else if let Some(u) = v.as_u64() {
                    EnvValue::Str(u.to_string())
                } else {
                    return Err(env.err(format!("`{k}` must be an integer or a string")));
                };
                self.env.push((k.clone(), v));
            }
        }
        if let Some(v) = o.get("packet-header-field-class") {
            let mut b = Builder::new(o.frag, &self.aliases, Scope::PacketHeader);
            self.packet_header = Some(b.scope_root(v, "packet-header-field-class")?);
        }
        Ok(())
    }

    fn clock_class(&mut self, o: &Obj<'_>) -> Result<(), FragError> {
        let id = match o.str("id")? {
            Some(id) => id,
            None => o.req_str("name")?,
        };
        let name = o.str("name")?.unwrap_or(id).to_string();
        if self.clocks.iter().any(|(i, _)| i == id) {
            return Err(o.err(format!("duplicate clock class `{id}`")));
        }
        let freq = o.req_u64("frequency")?;
        if freq == 0 {
            return Err(o.err("frequency must not be 0"));
        }
        let (mut offset_s, mut offset) = (0i64, 0i64);
        if let Some(off) = o.obj("offset-from-origin")? {
            offset_s = off.i64("seconds")?.unwrap_or(0);
            let cycles = off.u64("cycles")?.unwrap_or(0);
            if cycles >= freq {
                return Err(off.err("`cycles` must be less than the frequency"));
            }
            offset = cycles as i64;
        }
        // The origin is the Unix epoch when it says so, and in the draft
        // format (LTTng's clocks, which babeltrace2 treats as such).
        let absolute = match o.get("origin") {
            Some(v) => v.as_str() == Some("unix-epoch"),
            None => o.get("id").is_none(),
        };
        let clock = ClockClass {
            name,
            freq,
            offset_s,
            offset,
            precision: o.u64("precision")?.unwrap_or(0),
            absolute,
            uuid: uuid(o, "uuid")?,
            description: o.str("description")?.map(str::to_string),
        };
        self.clocks.push((id.to_string(), clock));
        Ok(())
    }

    fn stream_class(&mut self, o: &Obj<'_>) -> Result<(), FragError> {
        let id = o.u64("id")?.unwrap_or(0);
        if self.streams.iter().any(|s| s.id == id) {
            return Err(o.err(format!("duplicate data stream class id {id}")));
        }
        let clock = match o.str("default-clock-class-id")? {
            Some(c) => Some(c),
            None => o.str("default-clock-class-name")?,
        };
        if let Some(c) = clock {
            if !self.clocks.iter().any(|(i, _)| i == c) {
                return Err(o.err(format!("unknown default clock class `{c}`")));
            }
        }
        let root = |key: &str, scope: Scope| -> Result<Option<Fc>, FragError> {
            match o.get(key) {
                None => Ok(None),
                Some(v) => Builder::new(o.frag, &self.aliases, scope)
                    .scope_root(v, key)
                    .map(Some),
            }
        };
        let s = PendingStream {
            frag: (o.frag.number, o.frag.offset),
            id,
            clock: clock.map(str::to_string),
            packet_context: root("packet-context-field-class", Scope::PacketContext)?,
            event_header: root("event-record-header-field-class", Scope::EventHeader)?,
            event_context: root(
                "event-record-common-context-field-class",
                Scope::StreamEventContext,
            )?,
        };
        self.streams.push(s);
        Ok(())
    }

    fn event_class(&mut self, o: &Obj<'_>) -> Result<(), FragError> {
        let id = o.u64("id")?.unwrap_or(0);
        let stream_id = o.u64("data-stream-class-id")?.unwrap_or(0);
        if !self.streams.iter().any(|s| s.id == stream_id) {
            return Err(o.err(format!("unknown data stream class {stream_id}")));
        }
        if self
            .events
            .iter()
            .any(|e| e.stream_id == stream_id && e.id == id)
        {
            return Err(o.err(format!(
                "duplicate event record class id {id} in data stream class {stream_id}"
            )));
        }
        let name = o.str("name")?.unwrap_or_default().to_string();
        // babeltrace2 keeps the log level and EMF URI in its namespace of
        // the attributes (`user-attributes` in the draft).
        let attrs = match o.obj("attributes")? {
            Some(a) => Some(a),
            None => o.obj("user-attributes")?,
        };
        let bt = match &attrs {
            Some(a) => a.obj("babeltrace.org,2020")?,
            None => None,
        };
        let (mut loglevel, mut emf_uri) = (None, None);
        if let Some(bt) = bt {
            if let Some(l) = bt.str("log-level")? {
                loglevel =
                    Some(log_level(l).ok_or_else(|| bt.err(format!("unknown log level `{l}`")))?);
            }
            emf_uri = bt.str("emf-uri")?.map(str::to_string);
        }
        let root = |key: &str, scope: Scope| -> Result<Option<Fc>, FragError> {
            match o.get(key) {
                None => Ok(None),
                Some(v) => Builder::new(o.frag, &self.aliases, scope)
                    .scope_root(v, key)
                    .map(Some),
            }
        };
        let e = PendingEvent {
            frag: (o.frag.number, o.frag.offset),
            id,
            stream_id,
            name,
            loglevel,
            emf_uri,
            context: root("specific-context-field-class", Scope::EventContext)?,
            payload: root("payload-field-class", Scope::EventPayload)?,
        };
        self.events.push(e);
        Ok(())
    }
}

/// babeltrace2's log level names, as the CTF 1.8 (LTTng) numbers.
fn log_level(name: &str) -> Option<i64> {
    Some(match name {
        "emergency" => 0,
        "alert" => 1,
        "critical" => 2,
        "error" => 3,
        "warning" => 4,
        "notice" => 5,
        "info" => 6,
        "debug:system" => 7,
        "debug:program" => 8,
        "debug:process" => 9,
        "debug:module" => 10,
        "debug:unit" => 11,
        "debug:function" => 12,
        "debug:line" => 13,
        "debug" => 14,
        _ => return None,
    })
}
