//! pj_dump's CSV output, row for row and digit for digit.
//!
//! pj_dump walks the container tree depth-first with an explicit stack:
//! it prints a container, then for each type under the container's type
//! (in byte order of type identifiers) either pushes the child containers of
//! that type (in byte order of their identifiers, so they come out in
//! reverse) or prints that type's entities. Entities are those whose start
//! is selected by two `std::lower_bound` searches between the trace start (0)
//! and end (the root container's end); the searches run on the list in its
//! own order, sorted or not, and are mirrored exactly here — including the
//! quirk that only the first of several entities starting exactly at the end
//! of the trace is printed.

use std::io::{self, Write};

use crate::model::{ContainerId, Model, TypeId, TypeNature, ROOT_CONTAINER};
use crate::numfmt::{push_fixed, push_general};
use crate::store::{EntityList, EntityStore};

/// Options of the dump (pj_dump's defaults unless changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PjDumpOptions {
    /// Digits after the point for entity times and values (`-l`, 6).
    pub float_precision: usize,
    /// Print a header line before each kind's first row (`-h`).
    pub header: bool,
}

impl Default for PjDumpOptions {
    fn default() -> Self {
        PjDumpOptions {
            float_precision: 6,
            header: false,
        }
    }
}

/// libstdc++'s `std::lower_bound` over `0..n` with "start(i) < t".
fn lower_bound(n: usize, t: f64, start: impl Fn(usize) -> f64) -> usize {
    let mut first = 0;
    let mut len = n;
    while len > 0 {
        let half = len / 2;
        let middle = first + half;
        if start(middle) < t {
            first = middle + 1;
            len = len - half - 1;
        } else {
            len = half;
        }
    }
    first
}

/// The index range pj_dump prints for a list, between `t0` and `t1`.
fn selected(list: &EntityList, t0: f64, t1: f64) -> std::ops::Range<usize> {
    let n = list.len();
    let mut low = lower_bound(n, t0, |i| list.start_time(i));
    let mut up = lower_bound(n, t1, |i| list.start_time(i));
    low = low.saturating_sub(1);
    if up != n {
        up += 1;
    }
    low..up.max(low)
}

struct Writer<'a, W: Write> {
    out: W,
    line: Vec<u8>,
    model: &'a Model,
    store: &'a EntityStore,
    prec: usize,
}

impl<'a, W: Write> Writer<'a, W> {
    fn text(&mut self, s: &[u8]) {
        self.line.extend_from_slice(s);
    }

    fn sep(&mut self) {
        self.line.extend_from_slice(b", ");
    }

    fn fixed(&mut self, x: f64) {
        self.sep();
        push_fixed(&mut self.line, x, self.prec);
    }

    fn flush_line(&mut self) -> io::Result<()> {
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.line.clear();
        Ok(())
    }

    fn container_name(&self, c: Option<ContainerId>) -> &'a [u8] {
        match c {
            Some(c) => &self.model.container(c).name,
            None => b"NULL",
        }
    }

    fn value_name(&self, v: crate::model::ValueId) -> &'a [u8] {
        self.model
            .values()
            .get(v.0 as usize)
            .map_or(b"NULL", |v| &v.name)
    }

    fn container(&mut self, c: ContainerId) -> io::Result<()> {
        let model = self.model;
        let cont = model.container(c);
        self.text(b"Container, ");
        let parent = cont.parent.map_or(&b"0"[..], |p| &model.container(p).name);
        self.text(parent);
        self.sep();
        self.text(&model.type_(cont.type_id).name);
        for x in [cont.start, cont.end, cont.end - cont.start] {
            self.sep();
            push_general(&mut self.line, x, 6);
        }
        self.sep();
        self.text(&cont.name);
        self.flush_line()
    }

    fn entities(&mut self, c: ContainerId, t: TypeId, t0: f64, t1: f64) -> io::Result<()> {
        let Some(list) = self.store.list(c, t) else {
            return Ok(());
        };
        let model = self.model;
        let cname: &[u8] = &model.container(c).name;
        let ty = model.type_(t);
        let kind = ty.nature.kind_name().as_bytes();
        let duration = |s: f64, e: f64| if e >= 0.0 && s >= 0.0 { e - s } else { 0.0 };
        let range = selected(list, t0, t1);
        for i in range {
            self.text(kind);
            self.sep();
            self.text(cname);
            self.sep();
            self.text(&ty.name);
            match list {
                EntityList::States(v) => {
                    let s = v[i];
                    self.fixed(s.start);
                    self.fixed(s.end);
                    self.fixed(duration(s.start, s.end));
                    self.fixed(f64::from(s.imbrication));
                    self.sep();
                    self.text(self.value_name(s.value));
                }
                EntityList::Events(v) => {
                    let e = v[i];
                    self.fixed(e.time);
                    self.sep();
                    self.text(self.value_name(e.value));
                }
                EntityList::Variables(v) => {
                    let x = v[i];
                    self.fixed(x.start);
                    self.fixed(x.end);
                    self.fixed(duration(x.start, x.end));
                    self.fixed(x.value);
                }
                EntityList::Links(v) => {
                    let l = v[i];
                    self.fixed(l.start);
                    self.fixed(l.end);
                    self.fixed(duration(l.start, l.end));
                    self.sep();
                    self.text(self.value_name(l.value));
                    self.sep();
                    self.text(self.container_name(l.start_container));
                    self.sep();
                    self.text(self.container_name(l.end_container));
                    self.sep();
                    self.text(self.store.link_key(&l));
                }
            }
            self.flush_line()?;
        }
        Ok(())
    }
}

/// Types under `t`, in pj_dump's order (byte order of identifiers).
fn sorted_child_types(model: &Model, t: TypeId) -> Vec<TypeId> {
    let mut v = model.type_(t).children().to_vec();
    v.sort_by(|a, b| {
        model
            .type_(*a)
            .identifier()
            .cmp(model.type_(*b).identifier())
    });
    v
}

/// Writes what `pj_dump` prints for a simulated trace.
///
/// `model` and `store` come from a finished simulation (see
/// [`crate::Trace`]). With `options.header`, each kind's column names are
/// printed before the first row of that kind, as `pj_dump -h` does.
pub fn write_pj_dump_parts(
    model: &Model,
    store: &EntityStore,
    options: &PjDumpOptions,
    out: impl Write,
) -> io::Result<()> {
    let mut w = Writer {
        out: io::BufWriter::with_capacity(1 << 16, out),
        line: Vec::with_capacity(256),
        model,
        store,
        prec: options.float_precision,
    };
    let root = model.container(ROOT_CONTAINER);
    let (t0, t1) = (root.start, root.end);
    if options.header {
        write_headers(&mut w, t0, t1)?;
    }
    let mut stack = vec![ROOT_CONTAINER];
    while let Some(c) = stack.pop() {
        w.container(c)?;
        let cont = model.container(c);
        let mut children = cont.children().to_vec();
        children.sort_by(|a, b| {
            model
                .container(*a)
                .identifier()
                .cmp(model.container(*b).identifier())
        });
        for t in sorted_child_types(model, cont.type_id) {
            if model.type_(t).nature == TypeNature::Container {
                stack.extend(
                    children
                        .iter()
                        .copied()
                        .filter(|k| model.container(*k).type_id == t),
                );
            } else {
                w.entities(c, t, t0, t1)?;
            }
        }
    }
    w.out.flush()
}

/// pj_dump -h: the header of each kind seen, in the order the dump walk
/// meets them (pj_dump looks at the first selected entity of each list).
fn write_headers<W: Write>(w: &mut Writer<'_, W>, t0: f64, t1: f64) -> io::Result<()> {
    let model = w.model;
    let mut seen = [false; 4];
    w.text(b"Container, Parent, Type, Start, End, Duration, Name");
    w.flush_line()?;
    let mut stack = vec![ROOT_CONTAINER];
    while let Some(c) = stack.pop() {
        let cont = model.container(c);
        let mut children = cont.children().to_vec();
        children.sort_by(|a, b| {
            model
                .container(*a)
                .identifier()
                .cmp(model.container(*b).identifier())
        });
        for t in sorted_child_types(model, cont.type_id) {
            if model.type_(t).nature == TypeNature::Container {
                stack.extend(
                    children
                        .iter()
                        .copied()
                        .filter(|k| model.container(*k).type_id == t),
                );
                continue;
            }
            let Some(list) = w.store.list(c, t) else {
                continue;
            };
            if selected(list, t0, t1).is_empty() {
                continue;
            }
            let (i, text): (usize, &[u8]) = match list {
                EntityList::Links(_) => (0, b"Link, Container, Type, Start, End, Duration, Value, StartContainer, EndContainer"),
                EntityList::States(_) => (1, b"State, Container, Type, Start, End, Duration, Imbrication, Value"),
                EntityList::Events(_) => (2, b"Event, Container, Variable, Value, Start, Value"),
                EntityList::Variables(_) => (3, b"Variable, Container, Type, Start, End, Duration, Value"),
            };
            if !seen[i] {
                seen[i] = true;
                w.text(text);
                w.flush_line()?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_bound_matches_libstdcxx_on_sorted_input() {
        let v = [0.0, 1.0, 1.0, 2.0];
        assert_eq!(lower_bound(v.len(), 1.0, |i| v[i]), 1);
        assert_eq!(lower_bound(v.len(), 3.0, |i| v[i]), 4);
        assert_eq!(lower_bound(v.len(), -1.0, |i| v[i]), 0);
        assert_eq!(lower_bound(0, 1.0, |_| 0.0), 0);
    }

    #[test]
    fn lower_bound_probes_unsorted_input_like_libstdcxx() {
        // Probes index 2 (5.0, not < 4), then index 1 (0.0 < 4) -> 2.
        let v = [9.0, 0.0, 5.0, 1.0];
        assert_eq!(lower_bound(v.len(), 4.0, |i| v[i]), 2);
    }
}
