//! The top-level blocks (`trace`, `stream`, `event`, `clock`, `env`,
//! `callsite`) and the final assembly of the trace class.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use super::{PendingEvent, PendingStream, Resolver, ScopeType, TraceInfo};
use crate::ast::{BlockEntry, Spanned, TypeSpec, Value};
use crate::attrs::{bool_value, i64_value, str_value, u64_value, uuid_value};
use crate::error::{Pos, TsdlError};
use crate::ir::{
    Callsite, ClockClass, EnvValue, EventClass, FieldType, Scope, StreamClass, TraceClass,
};
use crate::link::Linker;
use crate::types::RType;

use super::{AssignFn, AttrFn, MAX_NODES};

impl Resolver {
    /// Handles the entries of a block: scoped declarations are processed,
    /// attributes and type assignments are handed to `attr` / `assign`,
    /// which fill in `state`.
    fn block_entries<S>(
        &mut self,
        entries: &[BlockEntry],
        state: &mut S,
        attr: AttrFn<S>,
        assign: AssignFn<S>,
    ) -> Result<(), TsdlError> {
        for e in entries {
            match e {
                BlockEntry::Decl(d) => self.decl(d, None)?,
                BlockEntry::Attr(a) => attr(state, a)?,
                BlockEntry::TypeAssign { key, ty, pos } => assign(self, state, key, ty, *pos)?,
            }
        }
        Ok(())
    }

    /// Resolves a dynamic scope's type, which must be a structure.
    fn scope_type(
        &mut self,
        key: &str,
        ty: &Spanned<TypeSpec>,
        pos: Pos,
    ) -> Result<ScopeType, TsdlError> {
        let t = self.spec(ty)?;
        if !matches!(t.ty, RType::Struct { .. }) {
            return Err(TsdlError::semantic(
                ty.pos,
                format!("`{key}` must be a structure"),
            ));
        }
        // Event classes repeat the same structures: one copy of each is
        // kept until they are linked.
        let t = match self.interned.get(&t) {
            Some(same) => Rc::clone(same),
            None => {
                self.interned.insert(Rc::clone(&t));
                t
            }
        };
        Ok(Some((t, pos)))
    }

    pub(super) fn trace_block(
        &mut self,
        entries: &[BlockEntry],
        pos: Pos,
    ) -> Result<(), TsdlError> {
        if self.trace.is_some() {
            return Err(TsdlError::semantic(pos, "duplicate trace block"));
        }
        let mut info = TraceInfo {
            major: None,
            minor: None,
            uuid: None,
            packet_header: None,
        };
        self.block_entries(
            entries,
            &mut info,
            |info, a| {
                match a.key.as_str() {
                    "major" => info.major = Some(u64_value(a)?),
                    "minor" => info.minor = Some(u64_value(a)?),
                    "uuid" => info.uuid = Some(uuid_value(a)?),
                    // `byte_order` was read up front by `trace_byte_order`.
                    _ => {}
                }
                Ok(())
            },
            |r, info, key, ty, p| {
                if key == "packet.header" {
                    info.packet_header = r.scope_type(key, ty, p)?;
                }
                Ok(())
            },
        )?;
        match (info.major, info.minor) {
            (Some(1), Some(_)) => {}
            (Some(m), Some(_)) => {
                return Err(TsdlError::semantic(
                    pos,
                    format!("unsupported CTF major version {m} (only CTF 1.8 is supported)"),
                ))
            }
            _ => {
                return Err(TsdlError::semantic(
                    pos,
                    "the trace block needs both major and minor attributes",
                ))
            }
        }
        self.trace = Some(info);
        Ok(())
    }

    pub(super) fn stream_block(
        &mut self,
        entries: &[BlockEntry],
        pos: Pos,
    ) -> Result<(), TsdlError> {
        let mut s = PendingStream {
            id: 0,
            packet_context: None,
            event_header: None,
            event_context: None,
        };
        self.block_entries(
            entries,
            &mut s,
            |s, a| {
                if a.key == "id" {
                    s.id = u64_value(a)?;
                }
                Ok(())
            },
            |r, s, key, ty, p| {
                match key {
                    "packet.context" => s.packet_context = r.scope_type(key, ty, p)?,
                    "event.header" => s.event_header = r.scope_type(key, ty, p)?,
                    "event.context" => s.event_context = r.scope_type(key, ty, p)?,
                    _ => {}
                }
                Ok(())
            },
        )?;
        if let Some(first) = self.stream_ids.insert(s.id, pos) {
            return Err(TsdlError::semantic(
                pos,
                format!(
                    "duplicate stream class id {} (first declared at line {})",
                    s.id, first.line
                ),
            ));
        }
        self.streams.push(s);
        Ok(())
    }

    pub(super) fn event_block(
        &mut self,
        entries: &[BlockEntry],
        pos: Pos,
    ) -> Result<(), TsdlError> {
        let mut e = PendingEvent {
            pos,
            name: None,
            id: 0,
            stream_id: None,
            loglevel: None,
            emf_uri: None,
            context: None,
            payload: None,
        };
        self.block_entries(
            entries,
            &mut e,
            |e, a| {
                match a.key.as_str() {
                    "name" => e.name = Some(str_value(a)?),
                    "id" => e.id = u64_value(a)?,
                    "stream_id" => e.stream_id = Some(u64_value(a)?),
                    "loglevel" => e.loglevel = Some(i64_value(a)?),
                    "model.emf.uri" => e.emf_uri = Some(str_value(a)?),
                    _ => {}
                }
                Ok(())
            },
            |r, e, key, ty, p| {
                match key {
                    "context" => e.context = r.scope_type(key, ty, p)?,
                    "fields" => e.payload = r.scope_type(key, ty, p)?,
                    _ => {}
                }
                Ok(())
            },
        )?;
        if e.name.is_none() {
            return Err(TsdlError::semantic(
                pos,
                "event block has no name attribute",
            ));
        }
        self.events.push(e);
        Ok(())
    }

    pub(super) fn clock_block(
        &mut self,
        entries: &[BlockEntry],
        pos: Pos,
    ) -> Result<(), TsdlError> {
        let mut c = (
            ClockClass {
                name: String::new(),
                freq: 1_000_000_000,
                offset_s: 0,
                offset: 0,
                precision: 0,
                absolute: false,
                uuid: None,
                description: None,
            },
            false,
        );
        self.block_entries(
            entries,
            &mut c,
            |(c, has_name), a| {
                match a.key.as_str() {
                    "name" => {
                        c.name = str_value(a)?;
                        *has_name = true;
                    }
                    "uuid" => c.uuid = Some(uuid_value(a)?),
                    "description" => c.description = Some(str_value(a)?),
                    "freq" => {
                        c.freq = u64_value(a)?;
                        if c.freq == 0 {
                            return Err(TsdlError::semantic(
                                a.value_pos,
                                "clock frequency must not be 0",
                            ));
                        }
                    }
                    "precision" => c.precision = u64_value(a)?,
                    "offset_s" => c.offset_s = i64_value(a)?,
                    "offset" => c.offset = i64_value(a)?,
                    "absolute" => c.absolute = bool_value(a)?,
                    _ => {}
                }
                Ok(())
            },
            ignore_assign,
        )?;
        let (c, has_name) = c;
        if !has_name {
            return Err(TsdlError::semantic(
                pos,
                "clock block has no name attribute",
            ));
        }
        if !self.clock_names.insert(c.name.clone()) {
            return Err(TsdlError::semantic(
                pos,
                format!("duplicate clock `{}`", c.name),
            ));
        }
        self.clocks.push(c);
        Ok(())
    }

    pub(super) fn env_block(&mut self, entries: &[BlockEntry]) -> Result<(), TsdlError> {
        let mut env = (
            std::mem::take(&mut self.env),
            std::mem::take(&mut self.env_index),
        );
        self.block_entries(
            entries,
            &mut env,
            |(env, index), a| {
                let v = match &a.value {
                    Value::Int(i) => match i64::try_from(*i) {
                        Ok(i) => EnvValue::Int(i),
                        // Too big for i64 (a u64 id, say): keep the digits.
                        Err(_) => EnvValue::Str(i.to_string()),
                    },
                    Value::Str(s) => EnvValue::Str(s.clone()),
                    Value::Path(p) => EnvValue::Str(p.join(".")),
                };
                // A later value for the same key replaces the earlier one.
                match index.get(&a.key) {
                    Some(&i) => env[i].1 = v,
                    None => {
                        index.insert(a.key.clone(), env.len());
                        env.push((a.key.clone(), v));
                    }
                }
                Ok(())
            },
            ignore_assign,
        )?;
        (self.env, self.env_index) = env;
        Ok(())
    }

    pub(super) fn callsite_block(&mut self, entries: &[BlockEntry]) -> Result<(), TsdlError> {
        let mut c = Callsite {
            name: String::new(),
            func: String::new(),
            ip: 0,
            file: String::new(),
            line: 0,
        };
        self.block_entries(
            entries,
            &mut c,
            |c, a| {
                match a.key.as_str() {
                    "name" => c.name = str_value(a)?,
                    "func" => c.func = str_value(a)?,
                    "ip" => c.ip = u64_value(a)?,
                    "file" => c.file = str_value(a)?,
                    "line" => c.line = u64_value(a)?,
                    _ => {}
                }
                Ok(())
            },
            ignore_assign,
        )?;
        self.callsites.push(c);
        Ok(())
    }

    /// Links every dynamic scope and assembles the trace class.
    pub(super) fn finish(self) -> Result<TraceClass, TsdlError> {
        let Some(trace) = self.trace else {
            // `trace_byte_order` already refused metadata without a trace block.
            return Err(TsdlError::semantic(
                Pos { line: 1, column: 1 },
                "the metadata has no trace block",
            ));
        };
        let mut linker = Linker::new(MAX_NODES);
        let packet_header = match &trace.packet_header {
            Some((t, pos)) => Some(linker.link(t, Scope::PacketHeader, &[], *pos)?),
            None => None,
        };
        let mut pending = self.streams;
        if pending.is_empty() && !self.events.is_empty() {
            // CTF allows omitting the stream block when there is a single
            // stream class without headers.
            pending.push(PendingStream {
                id: 0,
                packet_context: None,
                event_header: None,
                event_context: None,
            });
        }
        let mut streams = BTreeMap::new();
        for s in &pending {
            let mut prev: Vec<(Scope, &FieldType)> = Vec::new();
            if let Some(ph) = &packet_header {
                prev.push((Scope::PacketHeader, ph));
            }
            let packet_context =
                link_opt(&mut linker, &s.packet_context, Scope::PacketContext, &prev)?;
            if let Some(pc) = &packet_context {
                prev.push((Scope::PacketContext, pc));
            }
            let event_header = link_opt(&mut linker, &s.event_header, Scope::EventHeader, &prev)?;
            if let Some(eh) = &event_header {
                prev.push((Scope::EventHeader, eh));
            }
            let event_context = link_opt(
                &mut linker,
                &s.event_context,
                Scope::StreamEventContext,
                &prev,
            )?;
            drop(prev);
            streams.insert(
                s.id,
                StreamClass {
                    id: s.id,
                    packet_context,
                    event_header,
                    event_context,
                    events: BTreeMap::new(),
                },
            );
        }
        let mut shared = Shared::default();
        for e in self.events {
            let name = e.name.unwrap_or_default();
            let stream_id = match e.stream_id {
                Some(id) => id,
                None if streams.len() == 1 => *streams.keys().next().unwrap_or(&0),
                None => {
                    return Err(TsdlError::semantic(
                        e.pos,
                        format!(
                            "event `{}` has no stream_id but the trace has {} stream classes",
                            name,
                            streams.len()
                        ),
                    ))
                }
            };
            let Some(stream) = streams.get(&stream_id) else {
                return Err(TsdlError::semantic(
                    e.pos,
                    format!(
                        "event `{}` refers to stream class {stream_id}, which is not declared",
                        name
                    ),
                ));
            };
            if let Some(other) = stream.events.get(&e.id) {
                return Err(TsdlError::semantic(
                    e.pos,
                    format!(
                        "event `{}` reuses id {} of event `{}` in stream class {stream_id}",
                        name, e.id, other.name
                    ),
                ));
            }
            let mut prev: Vec<(Scope, &FieldType)> = Vec::new();
            if let Some(ph) = &packet_header {
                prev.push((Scope::PacketHeader, ph));
            }
            for (scope, t) in [
                (Scope::PacketContext, &stream.packet_context),
                (Scope::EventHeader, &stream.event_header),
                (Scope::StreamEventContext, &stream.event_context),
            ] {
                if let Some(t) = t {
                    prev.push((scope, t));
                }
            }
            let context = link_opt(&mut linker, &e.context, Scope::EventContext, &prev)?
                .map(|t| shared.get(t));
            if let Some(c) = &context {
                prev.push((Scope::EventContext, c));
            }
            let payload = link_opt(&mut linker, &e.payload, Scope::EventPayload, &prev)?
                .map(|t| shared.get(t));
            drop(prev);
            let class = EventClass {
                id: e.id,
                name,
                stream_id,
                loglevel: e.loglevel,
                emf_uri: e.emf_uri,
                context,
                payload,
            };
            if let Some(stream) = streams.get_mut(&stream_id) {
                stream.events.insert(class.id, Arc::new(class));
            }
        }
        Ok(TraceClass {
            uid: None,
            major: trace.major.unwrap_or(1),
            minor: trace.minor.unwrap_or(8),
            uuid: trace.uuid,
            byte_order: self.native,
            packet_header,
            env: self.env,
            clocks: self.clocks,
            streams,
            callsites: self.callsites,
        })
    }
}

/// One copy of each distinct event context and payload type, shared by
/// the event classes that have it (metadata with many event classes
/// repeats a few structures: the copies were most of its memory).
#[derive(Default)]
struct Shared(HashSet<Arc<FieldType>>);

impl Shared {
    /// The shared copy of `t`.
    fn get(&mut self, t: FieldType) -> Arc<FieldType> {
        if let Some(k) = self.0.get(&t) {
            return Arc::clone(k);
        }
        let a = Arc::new(t);
        self.0.insert(Arc::clone(&a));
        a
    }
}

/// Type assignments that a block does not know are ignored, like unknown
/// attributes (CTF 1.8 §7.3).
fn ignore_assign<S>(
    _: &mut Resolver,
    _: &mut S,
    _: &str,
    _: &Spanned<TypeSpec>,
    _: Pos,
) -> Result<(), TsdlError> {
    Ok(())
}

fn link_opt(
    linker: &mut Linker,
    t: &ScopeType,
    scope: Scope,
    prev: &[(Scope, &FieldType)],
) -> Result<Option<FieldType>, TsdlError> {
    match t {
        Some((t, pos)) => linker.link(t, scope, prev, *pos).map(Some),
        None => Ok(None),
    }
}
