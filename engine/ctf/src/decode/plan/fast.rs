//! Byte-aligned events, decoded without the step loop.
//!
//! Most events of real traces are an LTTng header in its short form, then
//! stream event context, event context and payload whose fields all need
//! no alignment beyond a byte (LTTng writes `align = 8`): byte-sized
//! integers and floats, text arrays, and here and there a string or a
//! sequence. Between two such variable-length items, every field sits at
//! a byte offset fixed at compile time, so a run of fields is read
//! straight, without the executor's dispatch on step kinds it cannot
//! meet, its alignment and bit positions, and without the two plan runs
//! per event (head, then body) with their state saving, reservations and
//! marks.
//!
//! [`FastEvents::decode`] does what the head plan, the event-class lookup
//! and the body plan do together (but for scratch state that nothing
//! reads after an event: it leaves the event id alone, and the header's
//! tag register too for an event of fixed layout), or declines (`None`)
//! with the values, clock and event id untouched: the caller then takes
//! the general path for that event, which decodes it afresh (registers
//! this path may have set are written again before being read). A
//! property test checks both against the general interpreter.

use std::mem::MaybeUninit;

use super::{bytes_at, find_nul, int_run, read_int, Form, Header, Kind, Plan, Step};
use crate::classes::EventTable;
use crate::decode::{DecodeState, NO_REG};
use crate::event::FieldValue;

/// A field of a [`Run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    /// A plain integer kind, `F32Le`, `F64Le`, `TextArray`, or `IntFx`
    /// (an integer of kind `elem` feeding register `reg`).
    kind: Kind,
    elem: Kind,
    reg: u16,
    /// Byte offset from the run's start.
    off: u32,
    /// Byte length of a text array.
    len: u32,
    /// For a plain little-endian integer ([`Kind::plain_le`]): 64 minus
    /// its size in bits, the shift that leaves it alone in a 64-bit word
    /// read at its offset, and whether it is signed.
    shift: u8,
    signed: bool,
}

/// Fields at fixed byte offsets from a byte-aligned start, each pushing
/// one value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Run {
    fields: Vec<Field>,
    bytes: u32,
    /// All fields are plain little-endian integers (then one bounds check
    /// serves the whole run, and no field needs a jump on its kind).
    plain: bool,
}

impl Run {
    /// Pushes the fields' values (and, with `FX`, sets their registers),
    /// the run starting at byte `at` of `data`; `None` (having pushed
    /// none) when `data` is too short (or, without `FX`, on a field setting
    /// a register).
    #[inline(always)]
    fn push<const FX: bool>(
        &self,
        data: &[u8],
        at: usize,
        regs: &mut [u64],
        out: &mut Vec<FieldValue>,
    ) -> Option<()> {
        // Into the spare capacity, the length set once: `push` would store
        // the length and reload the buffer after every value (the values
        // might alias the vector for all the compiler knows).
        let (len, n) = (out.len(), self.fields.len());
        out.reserve(n);
        self.write::<FX>(data, at, regs, out.spare_capacity_mut().get_mut(..n)?)?;
        // SAFETY: `write` wrote the `n` slots after `len`.
        unsafe { out.set_len(len + n) };
        Some(())
    }

    /// [`Run::push`] into `slots`, one per field: all written when `Some`.
    #[inline(always)]
    fn write<const FX: bool>(
        &self,
        data: &[u8],
        at: usize,
        regs: &mut [u64],
        slots: &mut [MaybeUninit<FieldValue>],
    ) -> Option<()> {
        if slots.len() != self.fields.len() {
            return None;
        }
        if self.plain && at.saturating_add(self.bytes as usize + 7) <= data.len() {
            for (slot, f) in slots.iter_mut().zip(&self.fields) {
                let b = at + f.off as usize;
                // SAFETY: `b + 8 <= data.len()`: a field ends within the
                // run (`off + 1 <= bytes`), and the run and 7 bytes more
                // are within `data` (tested above).
                let raw = unsafe { data.as_ptr().add(b).cast::<u64>().read_unaligned() };
                let x = u64::from_le(raw) << f.shift;
                slot.write(if f.signed {
                    FieldValue::SInt((x as i64) >> f.shift)
                } else {
                    FieldValue::UInt(x >> f.shift)
                });
            }
            return Some(());
        }
        for (slot, f) in slots.iter_mut().zip(&self.fields) {
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
                Kind::IntFx if FX => {
                    let (v, raw) = read_int(f.elem, data, b as u64 * 8)?;
                    *regs.get_mut(f.reg as usize)? = match v {
                        FieldValue::SInt(x) => x as u64,
                        _ => raw,
                    };
                    v
                }
                _ => return None,
            };
            slot.write(v);
        }
        Some(())
    }
}

/// A field of variable length, read from the byte position its run left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Var {
    /// A null-terminated string.
    String,
    /// A text sequence whose byte count is in a register.
    TextSeq { reg: u16 },
    /// A sequence of integers of kind `elem` whose count is in register
    /// `reg`, or (`reg == NO_REG`) an array of `count` of them.
    Ints { elem: Kind, reg: u16, count: u32 },
}

impl Var {
    /// Pushes the value(s) of the item at byte `at` of `data` (`Len` and
    /// elements for integers, as the plan does); returns the byte after
    /// it. `base` is the number of values before the event (for the
    /// per-event value budget).
    #[inline(always)]
    fn push(
        self,
        data: &[u8],
        at: usize,
        regs: &[u64],
        base: usize,
        out: &mut Vec<FieldValue>,
    ) -> Option<usize> {
        match self {
            Var::String => {
                let len = find_nul(data.get(at..)?)?;
                out.push(FieldValue::Str {
                    start: at as u32,
                    len: len as u32,
                });
                Some(at + len + 1)
            }
            Var::TextSeq { reg } => {
                let len = usize::try_from(*regs.get(reg as usize)?).ok()?;
                let bytes = data.get(at..at.checked_add(len)?)?;
                out.push(FieldValue::Str {
                    start: at as u32,
                    len: find_nul(bytes).unwrap_or(len) as u32,
                });
                Some(at + len)
            }
            Var::Ints { elem, reg, count } => {
                let count = if reg == NO_REG {
                    u64::from(count)
                } else {
                    *regs.get(reg as usize)?
                };
                let end = int_run(elem, count, data, at as u64 * 8, base, out)?;
                Some((end / 8) as usize)
            }
        }
    }
}

/// The layout of byte-aligned steps: a run of fields, then any number of
/// variable-length items each followed by a run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Layout {
    first: Run,
    rest: Vec<(Var, Run)>,
    /// Per mark slot: the number of fields of `first` before the mark,
    /// if recorded (marks after a variable-length item are not taken).
    marks: [Option<u32>; 2],
}

impl Layout {
    /// The layout of `steps` (with the marks before and after them), or
    /// `None` when a step is not byte-aligned or of a kind not covered.
    fn of(steps: &[Step], pre: Option<u8>, post: Option<u8>) -> Option<Layout> {
        let mut l = Layout::default();
        let mark = |l: &mut Layout, slot: u8| {
            if !l.rest.is_empty() {
                return None;
            }
            l.marks[slot as usize & 1] = Some(l.first.fields.len() as u32);
            Some(())
        };
        if let Some(slot) = pre {
            mark(&mut l, slot)?;
        }
        for s in steps {
            // No alignment beyond a byte: from a byte-aligned start, the
            // step's `align` never moves the position.
            if s.mask > 7 {
                return None;
            }
            let var = match s.kind {
                Kind::String => Some(Var::String),
                Kind::TextSeq => Some(Var::TextSeq { reg: s.reg }),
                Kind::IntSeq => Some(Var::Ints {
                    elem: s.elem,
                    reg: s.reg,
                    count: 0,
                }),
                Kind::IntArray => Some(Var::Ints {
                    elem: s.elem,
                    reg: NO_REG,
                    count: s.arg,
                }),
                _ => None,
            };
            if let Some(var) = var {
                l.rest.push((var, Run::default()));
                continue;
            }
            let (bytes, len) = match s.kind {
                Kind::U8 | Kind::S8 => (1, 0),
                Kind::U16Le | Kind::U16Be | Kind::S16Le | Kind::S16Be => (2, 0),
                Kind::U32Le | Kind::U32Be | Kind::S32Le | Kind::S32Be | Kind::F32Le => (4, 0),
                Kind::U64Le | Kind::U64Be | Kind::S64Le | Kind::S64Be | Kind::F64Le => (8, 0),
                Kind::TextArray => (s.arg, s.arg),
                // An integer feeding a register only (no clock, no id).
                Kind::IntFx if s.flags == 0 && s.reg != NO_REG => {
                    (super::kind_bits(s.elem) as u32 / 8, 0)
                }
                Kind::Mark => {
                    mark(&mut l, s.arg as u8)?;
                    continue;
                }
                _ => return None,
            };
            let run = match l.rest.last_mut() {
                Some((_, run)) => run,
                None => &mut l.first,
            };
            let (shift, signed) = s.kind.plain_le().unwrap_or((0, false));
            run.fields.push(Field {
                kind: s.kind,
                elem: s.elem,
                reg: s.reg,
                off: run.bytes,
                len,
                shift,
                signed,
            });
            run.bytes = run.bytes.checked_add(bytes)?;
        }
        if let Some(slot) = post {
            mark(&mut l, slot)?;
        }
        let runs = std::iter::once(&mut l.first).chain(l.rest.iter_mut().map(|(_, run)| run));
        for run in runs {
            run.plain =
                !run.fields.is_empty() && run.fields.iter().all(|f| f.kind.plain_le().is_some());
        }
        Some(l)
    }

    /// One run of fields, none setting a register.
    fn is_fixed(&self) -> bool {
        self.rest.is_empty() && self.first.fields.iter().all(|f| f.kind != Kind::IntFx)
    }

    /// Pushes the values of the steps at byte `at` of `data`; returns the
    /// byte after them, or `None` (having pushed some values and set some
    /// registers) when the data does not hold them.
    #[inline(always)]
    fn push(
        &self,
        data: &[u8],
        at: usize,
        regs: &mut [u64],
        base: usize,
        out: &mut Vec<FieldValue>,
    ) -> Option<usize> {
        self.first.push::<true>(data, at, regs, out)?;
        let mut at = at + self.first.bytes as usize;
        for (var, run) in &self.rest {
            at = var.push(data, at, regs, base, out)?;
            run.push::<true>(data, at, regs, out)?;
            at += run.bytes as usize;
        }
        Some(at)
    }
}

/// The layout of an event class's body (event context, mark 1,
/// payload).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Body {
    class_id: u64,
    layout: Layout,
    /// Fields before mark 1 (the event context's).
    mark: u32,
    /// The whole event (head and body) is one run of fields at fixed
    /// offsets, none setting a register: it takes the shortest path.
    fixed: bool,
}

/// The byte-aligned events of a stream class: its header (short form of
/// [`Form::Large`] or [`Form::Compact`]), its stream event context and,
/// by event id, the bodies of the event classes that are byte-aligned.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FastEvents {
    /// Alignment mask of the `Align` steps before the header and of the
    /// header's tag: aligning on one then the other is aligning on the
    /// larger (alignments are powers of two).
    align: u32,
    header: Header,
    head: Layout,
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
    /// The byte-aligned events of a stream class whose head plan is
    /// `head` and whose event classes are `events` (`body_plan` gives an
    /// event class's body plan, if it has one), or `None` when its header
    /// or stream event context is not byte-aligned (or no event class is).
    pub(crate) fn compile<T>(
        head: &Plan,
        events: &EventTable<T>,
        body_plan: impl Fn(&T) -> Option<&Plan>,
    ) -> Option<FastEvents> {
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
        let head_layout = match header.mark {
            // The header records mark 0 itself.
            Some(0) => Layout::of(rest, None, head.post_mark)?,
            // Mark 0 after the program: nothing may follow the header.
            None if rest.is_empty() && head.post_mark == Some(0) => Layout::default(),
            _ => return None,
        };
        if head_layout.marks != [None, None] {
            return None;
        }
        let bodies: Vec<Option<Body>> = classes
            .iter()
            .enumerate()
            .map(|(id, ce)| {
                let plan = body_plan(ce.as_ref()?)?;
                let layout = Layout::of(&plan.steps, plan.pre_mark, plan.post_mark)?;
                let [None, Some(mark)] = layout.marks else {
                    return None;
                };
                Some(Body {
                    // A dense table's index is the class id.
                    class_id: id as u64,
                    fixed: head_layout.is_fixed() && layout.is_fixed(),
                    layout,
                    mark,
                })
            })
            .collect();
        if bodies.iter().all(Option::is_none) {
            return None;
        }
        Some(FastEvents {
            align: align.max(header.tag.mask),
            header,
            head: head_layout,
            bodies,
        })
    }

    /// Decodes the event at bit `pos` of `data`, appending its values to
    /// `out` and updating the clock and registers of `st` as the head
    /// plan, the class lookup and the body plan do (not the event id, nor
    /// the header's tag register for a fixed event: the batch loop clears
    /// the id before each general event, whose header sets the register
    /// again; no fixed body reads it).
    /// `None` when the event is not byte-aligned or does not fit in
    /// `data`: then the values, clock and event id are as they were.
    #[inline(always)]
    pub(crate) fn decode(
        &self,
        data: &[u8],
        pos: u64,
        st: &mut DecodeState,
        out: &mut Vec<FieldValue>,
    ) -> Option<FastEvent> {
        let h = &self.header;
        let at = super::align(pos, self.align);
        let (id, time, mask, len) = h.read_short(data, at)?;
        // The byte after the header (a short form ends on one).
        let after = ((at + len) >> 3) as usize;
        let body = self.bodies.get(id as usize)?.as_ref()?;
        if body.fixed {
            return self.decode_fixed(data, after, (id, time, mask), body, st, out);
        }
        let base = out.len();
        // Set first, as the general path does (a body may read it).
        *st.regs.get_mut(h.tag.reg as usize)? = id;
        out.reserve(3 + self.head.first.fields.len() + body.layout.first.fields.len());
        out.extend_from_slice(&self.header_values(id, time));
        let header_end = out.len() as u32;
        // No closure here: it would not be inlined.
        let head_end = self.head.push(data, after, &mut st.regs, base, out);
        let sec_end = out.len() as u32;
        let end = match head_end {
            Some(at) => body.layout.push(data, at, &mut st.regs, base, out),
            None => None,
        };
        let Some(end) = end else {
            out.truncate(base);
            return None;
        };
        Some(self.finish(st, (id, time, mask), body, end, [header_end, sec_end]))
    }

    /// The header's values: the id, the short form's option, the
    /// timestamp.
    #[inline(always)]
    fn header_values(&self, id: u64, time: u32) -> [FieldValue; 3] {
        [
            FieldValue::UInt(id),
            FieldValue::Variant(u64::from(self.header.short)),
            FieldValue::UInt(u64::from(time)),
        ]
    }

    /// Applies the header's side effects (event id, clock) once the event
    /// is decoded, up to byte `end`, its values after the header and after
    /// the stream event context starting at `marks`.
    #[inline(always)]
    fn finish(
        &self,
        st: &mut DecodeState,
        (_, time, mask): (u64, u32, u64),
        body: &Body,
        end: usize,
        [header_end, sec_end]: [u32; 2],
    ) -> FastEvent {
        st.clock = crate::decode::clock::update_clock_masked(st.clock, u64::from(time), mask);
        FastEvent {
            end: end as u64 * 8,
            class_id: body.class_id,
            cycles: st.clock,
            marks: [header_end, sec_end, sec_end + body.mark],
        }
    }

    /// [`FastEvents::decode`] for an event of fixed layout (`body.fixed`)
    /// whose header, `(id, timestamp, timestamp mask)`, ends at byte `at`:
    /// one bounds check, then the fields. Kept apart from the general
    /// case, which measured 4 % slower on these events with it.
    #[inline(always)]
    fn decode_fixed(
        &self,
        data: &[u8],
        at: usize,
        (id, time, mask): (u64, u32, u64),
        body: &Body,
        st: &mut DecodeState,
        out: &mut Vec<FieldValue>,
    ) -> Option<FastEvent> {
        let (head, fields) = (&self.head.first, &body.layout.first);
        let body_at = at + head.bytes as usize;
        let end = body_at + fields.bytes as usize;
        if end > data.len() {
            return None;
        }
        // All values written into the spare capacity, the length set once.
        let (base, nh, nb) = (out.len(), head.fields.len(), fields.fields.len());
        let n = 3 + nh + nb;
        out.reserve(n);
        let slots = out.spare_capacity_mut().get_mut(..n)?;
        let (header, slots) = slots.split_first_chunk_mut::<3>()?;
        let (head_slots, body_slots) = slots.split_at_mut(nh);
        // No register is set: an empty slice for them.
        head.write::<false>(data, at, &mut [], head_slots)?;
        fields.write::<false>(data, body_at, &mut [], body_slots)?;
        let [h0, h1, h2] = self.header_values(id, time);
        header[0].write(h0);
        header[1].write(h1);
        header[2].write(h2);
        // SAFETY: the three header slots, then `head` and `fields` wrote
        // theirs (`write` fills all of its slots when it succeeds).
        unsafe { out.set_len(base + n) };
        let header_end = base as u32 + 3;
        let sec_end = header_end + head.fields.len() as u32;
        Some(self.finish(st, (id, time, mask), body, end, [header_end, sec_end]))
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
        let id = st.event_id?;
        let ce = sc.events.get(id)?;
        let end = run(&ce.body, data, after_head, st, out).ok()?;
        Some(FastEvent {
            end,
            class_id: id,
            cycles,
            marks: [header_end as u32, sec_end, st.marks[1].0 as u32],
        })
    }

    /// Stream 0 (compact header, fixed stream event context) has two
    /// byte-aligned event classes (d: event context and payload of fixed
    /// layout; e: strings and sequences), not a (bit fields, 32-bit
    /// alignment) nor b (a sequence of structures); stream 1 (large
    /// header) has c.
    #[test]
    fn byte_aligned_layouts_are_found() {
        let t = compiled();
        let fixed: Vec<Vec<u64>> = t
            .streams
            .values()
            .map(|sc| {
                let fe = sc.fast.as_ref().expect("fast events");
                fe.bodies.iter().flatten().map(|b| b.class_id).collect()
            })
            .collect();
        assert_eq!(fixed, [vec![2, 3], vec![2, 3]]);
        let s0 = t.streams.values().next().and_then(|sc| sc.fast.as_ref());
        let s0 = s0.expect("stream 0");
        assert_eq!(s0.header.form, Form::Compact);
        // _vpid (4 bytes), _procname (5); d: _ctx, mark 1, 2 + 4 + 3 + 8.
        assert_eq!((s0.head.first.bytes, s0.head.rest.len()), (9, 0));
        let d = s0.bodies[2].as_ref().expect("d");
        let first = &d.layout.first;
        assert_eq!((first.bytes, first.fields.len(), d.mark), (18, 5, 1));
        // e: mark 1, then the string, _n, the text sequence, the array,
        // the integer sequence and _after.
        let e = s0.bodies[3].as_ref().expect("e");
        let runs: Vec<(Var, u32)> = e.layout.rest.iter().map(|(v, r)| (*v, r.bytes)).collect();
        assert_eq!(e.layout.first.bytes, 0);
        assert_eq!(runs.len(), 4);
        assert_eq!((runs[0].1, runs[3].1), (1, 4));
        // d takes the shortest path, e the general one.
        assert!(d.fixed && !e.fixed);
        assert!(!first.plain);
        // c: little-endian integers of every size, both signs: one plain
        // run.
        let s1 = t.streams.values().nth(1).and_then(|sc| sc.fast.as_ref());
        let c = s1.and_then(|s1| s1.bodies[2].as_ref()).expect("c");
        assert_eq!((c.layout.first.fields.len(), c.layout.first.bytes), (8, 30));
        assert!(c.fixed && c.layout.first.plain);
        // f: eight numbers of all kinds, fixed.
        let f = s1.and_then(|s1| s1.bodies[3].as_ref()).expect("f");
        assert_eq!((f.layout.first.fields.len(), f.layout.first.bytes), (8, 30));
        assert!(f.fixed);
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
        // Events compared: d and e of stream 0, c and f of stream 1.
        let successes: [std::cell::Cell<usize>; 4] = Default::default();
        // A fixed seed: the count of comparisons checked below must not
        // depend on luck.
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::with_cases(20_000),
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        );
        let strategy = (
            proptest::collection::vec(prop_oneof![0u8..4, any::<u8>()], 0..64),
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
                let mut st2 = state(sc.nregs, &regs, clock);
                let mut out2 = vec![FieldValue::Len(7)];
                let slow = general(sc, &data, start, &mut st2, &mut out2);
                let Some(fast) = fast else {
                    // Declined: nothing changed but registers, and the
                    // general path then decodes as from a fresh state.
                    prop_assert_eq!(bits(&out1), bits(&[FieldValue::Len(7)]));
                    prop_assert_eq!(st1.clock, clock);
                    prop_assert_eq!(st1.event_id, Some(77));
                    let again = general(sc, &data, start, &mut st1, &mut out1);
                    prop_assert_eq!(again, slow);
                    prop_assert_eq!(bits(&out1), bits(&out2));
                    prop_assert_eq!(&st1.regs, &st2.regs);
                    return Ok(());
                };
                let i = which * 2 + fast.class_id as usize - 2;
                successes[i].set(successes[i].get() + 1);
                prop_assert_eq!(slow, Some(fast));
                prop_assert_eq!(bits(&out1), bits(&out2));
                prop_assert_eq!(st1.clock, st2.clock);
                // Scratch state that nothing reads after an event is left
                // alone: the event id always, the header's tag register
                // for an event of fixed layout (whose body reads none).
                prop_assert_eq!(st1.event_id, Some(77));
                let fixed = fe
                    .bodies
                    .iter()
                    .flatten()
                    .any(|b| b.class_id == fast.class_id && b.fixed);
                let tag = fe.header.tag.reg as usize;
                let (mut regs1, mut regs2) = (st1.regs.clone(), st2.regs.clone());
                if fixed {
                    prop_assert_eq!(regs1[tag], regs.get(tag).copied().unwrap_or(0));
                    regs1[tag] = 0;
                    regs2[tag] = 0;
                }
                prop_assert_eq!(regs1, regs2);
                Ok(())
            })
            .unwrap();
        for (i, n) in successes.iter().enumerate() {
            let n = n.get();
            assert!(n >= 25, "class {i}: {n} comparisons");
        }
    }
}
