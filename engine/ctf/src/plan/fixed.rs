//! Events of fixed layout, decoded without the step loop.
//!
//! Most events of real traces are an LTTng header in its short form, a few
//! byte-sized integers of stream event context, and a payload of a few
//! byte-sized integers, floats or text arrays, all needing no alignment
//! beyond a byte (LTTng writes `align = 8`). Once the header's id is
//! known, every field of such an event sits at a byte offset fixed at
//! compile time: one bounds check covers the event, and the fields are
//! read straight, without the executor's dispatch, alignment and
//! per-read checks. This saves most of the per-event cost of the plans
//! (two plan runs, their state saving, reservations and marks).
//!
//! [`FastEvents::decode`] does exactly what the head plan, the event-class
//! lookup and the body plan do together, or nothing at all (`None`: the
//! caller then takes the general path for that event); a property test
//! checks it against the general interpreter.

use super::{bytes_at, find_nul, Form, Header, Kind, Plan, Step};
use crate::decode::DecodeState;
use crate::event::FieldValue;
use crate::schema::EventTable;

/// A field of a [`Fixed`] layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    /// A plain integer kind, `F32Le`, `F64Le` or `TextArray`.
    kind: Kind,
    /// Byte offset from the layout's start.
    off: u32,
    /// Byte length of a text array.
    len: u32,
}

/// Steps whose fields all sit at fixed byte offsets from a byte-aligned
/// start, each pushing one value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Fixed {
    fields: Vec<Field>,
    bytes: u32,
    /// Per mark slot: the number of fields before the mark, if recorded.
    marks: [Option<u32>; 2],
}

impl Fixed {
    /// The layout of `steps` (with the marks before and after them), or
    /// `None` when a step is not a byte-sized field at a fixed offset.
    fn of(steps: &[Step], pre: Option<u8>, post: Option<u8>) -> Option<Fixed> {
        let mut f = Fixed::default();
        let mark = |f: &mut Fixed, slot: u8| {
            let n = f.fields.len() as u32;
            f.marks[slot as usize & 1] = Some(n);
        };
        if let Some(slot) = pre {
            mark(&mut f, slot);
        }
        for s in steps {
            // No alignment beyond a byte: from a byte-aligned start, the
            // step's `align` never moves the position.
            if s.mask > 7 {
                return None;
            }
            let (bytes, len) = match s.kind {
                Kind::U8 | Kind::S8 => (1, 0),
                Kind::U16Le | Kind::U16Be | Kind::S16Le | Kind::S16Be => (2, 0),
                Kind::U32Le | Kind::U32Be | Kind::S32Le | Kind::S32Be | Kind::F32Le => (4, 0),
                Kind::U64Le | Kind::U64Be | Kind::S64Le | Kind::S64Be | Kind::F64Le => (8, 0),
                Kind::TextArray => (s.arg, s.arg),
                Kind::Mark => {
                    mark(&mut f, s.arg as u8);
                    continue;
                }
                _ => return None,
            };
            f.fields.push(Field {
                kind: s.kind,
                off: f.bytes,
                len,
            });
            f.bytes = f.bytes.checked_add(bytes)?;
        }
        if let Some(slot) = post {
            mark(&mut f, slot);
        }
        Some(f)
    }

    /// Pushes the fields' values, the layout starting at byte `at` of
    /// `data`; `None` (having pushed some values) when `data` is too short.
    #[inline(always)]
    fn push(&self, data: &[u8], at: usize, out: &mut Vec<FieldValue>) -> Option<()> {
        for f in &self.fields {
            let b = at + f.off as usize;
            let v = match f.kind {
                Kind::U8 => FieldValue::UInt(u64::from(bytes_at::<1>(data, b)?[0])),
                Kind::U16Le => FieldValue::UInt(u64::from(u16::from_le_bytes(bytes_at(data, b)?))),
                Kind::U16Be => FieldValue::UInt(u64::from(u16::from_be_bytes(bytes_at(data, b)?))),
                Kind::U32Le => FieldValue::UInt(u64::from(u32::from_le_bytes(bytes_at(data, b)?))),
                Kind::U32Be => FieldValue::UInt(u64::from(u32::from_be_bytes(bytes_at(data, b)?))),
                Kind::U64Le => FieldValue::UInt(u64::from_le_bytes(bytes_at(data, b)?)),
                Kind::U64Be => FieldValue::UInt(u64::from_be_bytes(bytes_at(data, b)?)),
                Kind::S8 => FieldValue::SInt(i64::from(bytes_at::<1>(data, b)?[0] as i8)),
                Kind::S16Le => FieldValue::SInt(i64::from(i16::from_le_bytes(bytes_at(data, b)?))),
                Kind::S16Be => FieldValue::SInt(i64::from(i16::from_be_bytes(bytes_at(data, b)?))),
                Kind::S32Le => FieldValue::SInt(i64::from(i32::from_le_bytes(bytes_at(data, b)?))),
                Kind::S32Be => FieldValue::SInt(i64::from(i32::from_be_bytes(bytes_at(data, b)?))),
                Kind::S64Le => FieldValue::SInt(i64::from_le_bytes(bytes_at(data, b)?)),
                Kind::S64Be => FieldValue::SInt(i64::from_be_bytes(bytes_at(data, b)?)),
                Kind::F32Le => FieldValue::Float(f64::from(f32::from_le_bytes(bytes_at(data, b)?))),
                Kind::F64Le => FieldValue::Float(f64::from_le_bytes(bytes_at(data, b)?)),
                Kind::TextArray => {
                    let s = data.get(b..b.checked_add(f.len as usize)?)?;
                    FieldValue::Str {
                        start: b as u32,
                        len: find_nul(s).unwrap_or(s.len()) as u32,
                    }
                }
                _ => return None,
            };
            out.push(v);
        }
        Some(())
    }
}

/// The fixed layout of an event class's body (event context, mark 1,
/// payload).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Body {
    class_id: u64,
    fixed: Fixed,
    /// Fields before mark 1 (the event context's).
    mark: u32,
}

/// The fixed-layout events of a stream class: its header (short form of
/// [`Form::Large`] or [`Form::Compact`]), its stream event context and,
/// by event id, the bodies of the event classes that have a fixed layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FastEvents {
    /// Alignment mask of the `Align` steps before the header.
    align: u32,
    header: Header,
    head: Fixed,
    bodies: Vec<Option<Body>>,
}

/// One event decoded by [`FastEvents::decode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastEvent {
    /// Bit position after the event.
    pub(crate) end: u64,
    /// Event class id.
    pub(crate) class_id: u64,
    /// The clock after the header (the event's timestamp).
    pub(crate) cycles: u64,
    /// Value counts after the header, after the stream event context and
    /// at mark 1 (after the event context), as in `EvRec::bounds`.
    pub(crate) marks: [u32; 3],
}

impl FastEvents {
    /// The fixed-layout events of a stream class whose head plan is
    /// `head` and whose event classes are `events`, or `None` when its
    /// header or stream event context has no fixed layout (or no event
    /// class has).
    pub(crate) fn compile(head: &Plan, events: &EventTable) -> Option<FastEvents> {
        let EventTable::Dense(classes) = events else {
            return None;
        };
        // The header structure's own alignment comes first.
        let lead = head.steps.iter().take_while(|s| s.kind == Kind::Align);
        let align = lead.clone().map(|s| s.mask).max().unwrap_or(0);
        let first = head.steps.get(lead.count())?;
        if head.pre_mark.is_some() || first.kind != Kind::Header {
            return None;
        }
        let header = head.headers.get(first.arg as usize)?.clone();
        if header.form == Form::General {
            return None;
        }
        let rest = head.steps.get(header.end as usize..)?;
        let head_fixed = match header.mark {
            // The header records mark 0 itself.
            Some(0) => Fixed::of(rest, None, head.post_mark)?,
            // Mark 0 after the program: nothing may follow the header.
            None if rest.is_empty() && head.post_mark == Some(0) => Fixed::default(),
            _ => return None,
        };
        if head_fixed.marks != [None, None] {
            return None;
        }
        let bodies: Vec<Option<Body>> = classes
            .iter()
            .map(|ce| {
                let ce = ce.as_ref()?;
                let plan = ce.body_plan.as_ref()?;
                let fixed = Fixed::of(&plan.steps, plan.pre_mark, plan.post_mark)?;
                let [None, Some(mark)] = fixed.marks else {
                    return None;
                };
                Some(Body {
                    class_id: ce.class.id,
                    fixed,
                    mark,
                })
            })
            .collect();
        if bodies.iter().all(Option::is_none) {
            return None;
        }
        Some(FastEvents {
            align,
            header,
            head: head_fixed,
            bodies,
        })
    }

    /// Decodes the event at bit `pos` of `data`, appending its values to
    /// `out` and updating the clock, event id and header register of
    /// `st`, exactly as the head plan, the class lookup and the body plan
    /// do. `None` when the event is not one of fixed layout or does not
    /// fit in `data`: then nothing has changed.
    #[inline(always)]
    pub(crate) fn decode(
        &self,
        data: &[u8],
        pos: u64,
        st: &mut DecodeState,
        out: &mut Vec<FieldValue>,
    ) -> Option<FastEvent> {
        let h = &self.header;
        let at = super::align(super::align(pos, self.align), h.tag.mask);
        let b = (at >> 3) as usize;
        let (id, time, mask, len) = match h.form {
            Form::Large => {
                let id = u64::from(u16::from_le_bytes(bytes_at(data, b)?));
                let time = u32::from_le_bytes(bytes_at(data, b + 2)?);
                (id, time, u64::from(u32::MAX), 6)
            }
            Form::Compact if at & 7 == 0 => {
                let w = u32::from_le_bytes(bytes_at(data, b)?);
                (u64::from(w & 31), w >> 5, (1 << 27) - 1, 4)
            }
            _ => return None,
        };
        if id == h.ext {
            return None;
        }
        let body = self.bodies.get(id as usize)?.as_ref()?;
        let head_at = b + len;
        let body_at = head_at + self.head.bytes as usize;
        let end = body_at + body.fixed.bytes as usize;
        if end > data.len() {
            return None;
        }
        let reg = st.regs.get_mut(h.tag.reg as usize)?;
        let base = out.len();
        out.reserve(3 + self.head.fields.len() + body.fixed.fields.len());
        out.push(FieldValue::UInt(id));
        out.push(FieldValue::Variant(h.short));
        out.push(FieldValue::UInt(u64::from(time)));
        if self
            .head
            .push(data, head_at, out)
            .and_then(|()| body.fixed.push(data, body_at, out))
            .is_none()
        {
            // Unreachable (the event fits in `data`), but then nothing
            // has changed either.
            out.truncate(base);
            return None;
        }
        *reg = id;
        st.event_id = Some(id);
        st.clock = crate::clock::update_clock_masked(st.clock, u64::from(time), mask);
        let header_end = base as u32 + 3;
        let sec_end = header_end + self.head.fields.len() as u32;
        Some(FastEvent {
            end: end as u64 * 8,
            class_id: body.class_id,
            cycles: st.clock,
            marks: [header_end, sec_end, sec_end + body.mark],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bits, compiled, state};
    use super::*;
    use crate::decode::run;
    use crate::schema::CompiledStream;
    use proptest::prelude::*;

    /// What the general path makes of the event at `pos`: the head
    /// program, the class lookup and the body program, as the batch
    /// decoder runs them.
    fn general(
        sc: &CompiledStream,
        data: &[u8],
        pos: u64,
        st: &mut DecodeState,
        out: &mut Vec<FieldValue>,
    ) -> Option<FastEvent> {
        st.value_base = out.len();
        st.event_id = None;
        let after_head = run(&sc.head, data, pos, st, out).ok()?;
        let (header_end, cycles) = st.marks[0];
        let sec_end = out.len() as u32;
        let ce = sc.events.get(st.event_id?)?;
        let end = run(&ce.body, data, after_head, st, out).ok()?;
        Some(FastEvent {
            end,
            class_id: ce.class.id,
            cycles,
            marks: [header_end as u32, sec_end, st.marks[1].0 as u32],
        })
    }

    /// Stream 0 (compact header, fixed stream event context) has one
    /// fixed-layout event class (d: event context and payload), not a
    /// (bit fields, strings) nor b (a sequence of structures); stream 1
    /// (large header) has c.
    #[test]
    fn fixed_layouts_are_found() {
        let t = compiled();
        let fixed: Vec<Vec<u64>> = t
            .streams
            .values()
            .map(|sc| {
                let fe = sc.fast.as_ref().expect("fast events");
                fe.bodies.iter().flatten().map(|b| b.class_id).collect()
            })
            .collect();
        assert_eq!(fixed, [vec![2], vec![2]]);
        let s0 = t.streams.values().next().and_then(|sc| sc.fast.as_ref());
        let s0 = s0.expect("stream 0");
        assert_eq!(s0.header.form, Form::Compact);
        // _vpid (4 bytes), _procname (5); d: _ctx, mark 1, 2 + 4 + 3 + 8.
        assert_eq!(s0.head.bytes, 9);
        let d = s0.bodies[2].as_ref().expect("d");
        assert_eq!((d.fixed.bytes, d.fixed.fields.len(), d.mark), (18, 5, 1));
    }

    /// Where the fast path decodes an event, the general path decodes the
    /// same: values, end, class, timestamp, scope bounds, clock, event id
    /// and registers; where it declines, it changes nothing. Bytes are
    /// often small so that the ids of fixed-layout classes come up
    /// (checked: both streams compare many events).
    #[test]
    fn fast_events_match_the_general_path() {
        let t = compiled();
        let streams: Vec<&CompiledStream> = t.streams.values().collect();
        let successes: [std::cell::Cell<usize>; 2] = Default::default();
        // A fixed seed: the count of comparisons checked below must not
        // depend on luck.
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::with_cases(10_000),
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        );
        let strategy = (
            proptest::collection::vec(prop_oneof![0u8..4, any::<u8>()], 0..48),
            0u64..24,
            0usize..2,
            any::<u64>(),
            proptest::collection::vec(0u64..6, 8),
        );
        runner
            .run(&strategy, |(data, start, which, clock, regs)| {
                let sc = streams[which];
                let fe = sc.fast.as_ref().expect("fast events");
                let mut st1 = state(sc.nregs, &regs, clock);
                st1.event_id = Some(77);
                let mut out1 = vec![FieldValue::Len(7)];
                let fast = fe.decode(&data, start, &mut st1, &mut out1);
                let Some(fast) = fast else {
                    prop_assert_eq!(bits(&out1), bits(&[FieldValue::Len(7)]));
                    prop_assert_eq!(st1.clock, clock);
                    prop_assert_eq!(st1.event_id, Some(77));
                    prop_assert_eq!(&st1.regs, &state(sc.nregs, &regs, clock).regs);
                    return Ok(());
                };
                successes[which].set(successes[which].get() + 1);
                let mut st2 = state(sc.nregs, &regs, clock);
                let mut out2 = vec![FieldValue::Len(7)];
                let slow = general(sc, &data, start, &mut st2, &mut out2);
                prop_assert_eq!(slow, Some(fast));
                prop_assert_eq!(bits(&out1), bits(&out2));
                prop_assert_eq!(st1.clock, st2.clock);
                prop_assert_eq!(st1.event_id, st2.event_id);
                prop_assert_eq!(&st1.regs, &st2.regs);
                Ok(())
            })
            .unwrap();
        for (i, n) in successes.iter().enumerate() {
            let n = n.get();
            assert!(n >= 25, "stream {i}: {n} comparisons");
        }
    }
}
