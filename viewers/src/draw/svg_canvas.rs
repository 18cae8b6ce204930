//! Direct SVG writer: the [`Canvas`] primitives as SVG elements, text as
//! `<text>` (searchable, selectable, editable in a report).
//!
//! Cairo's own SVG surface (1.16 here) writes each glyph as an outline in a
//! `<symbol>` and places it with `<use>`, so a label is not text any more;
//! this writer is what `export_svg` uses.

use svg::node::element::Element;
use svg::Node;

use super::canvas::{Anchor, CairoMeasure, Canvas, Font, Rect, Stroke, TextMeasure, FONT_FAMILY};
use crate::style::Rgba;

/// Rounds a coordinate to 1/100 px: enough for any viewer, and keeps the
/// file small.
fn r2(v: f64) -> f64 {
    if v.is_finite() {
        (v * 100.0).round() / 100.0
    } else {
        0.0
    }
}

/// Text an XML document may hold: control characters other than tab and
/// newline are not allowed in XML 1.0, so they become U+FFFD.
fn xml_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if (c < ' ' && c != '\t' && c != '\n' && c != '\r')
                || c == '\u{FFFE}'
                || c == '\u{FFFF}'
            {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

fn points_attr(points: &[(f64, f64)]) -> String {
    let mut s = String::with_capacity(points.len() * 12);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{},{}", r2(x), r2(y)));
    }
    s
}

/// [`Canvas`] writing an SVG document.
pub struct SvgCanvas {
    width: f64,
    height: f64,
    measure: CairoMeasure,
    defs: Element,
    /// Open groups; the first is the document body.
    stack: Vec<Element>,
    clip_counter: usize,
}

impl SvgCanvas {
    /// A `width × height` document. Text is measured with cairo (same font
    /// as the PNG), so layouts match the cairo output.
    pub fn new(width: f64, height: f64) -> Result<Self, cairo::Error> {
        Ok(SvgCanvas {
            width,
            height,
            measure: CairoMeasure::new()?,
            defs: Element::new("defs"),
            stack: vec![Element::new("g")],
            clip_counter: 0,
        })
    }

    fn add(&mut self, e: Element) {
        self.stack
            .last_mut()
            .expect("the body group is never popped")
            .append(e);
    }

    fn fill_attrs(e: &mut Element, c: Rgba) {
        e.assign("fill", c.hex());
        if c.a < 255 {
            e.assign("fill-opacity", r2(c.a as f64 / 255.0));
        }
    }

    fn stroke_attrs(e: &mut Element, s: &Stroke) {
        e.assign("stroke", s.color.hex());
        e.assign("stroke-width", r2(s.width));
        if s.color.a < 255 {
            e.assign("stroke-opacity", r2(s.color.a as f64 / 255.0));
        }
        let d = s.style.dashes(s.width);
        if !d.is_empty() {
            let v: Vec<String> = d.iter().map(|v| r2(*v).to_string()).collect();
            e.assign("stroke-dasharray", v.join(","));
        }
    }

    /// The finished document.
    pub fn finish(mut self) -> String {
        while self.stack.len() > 1 {
            let g = self.stack.pop().expect("checked");
            self.add(g);
        }
        let body = self.stack.pop().expect("body");
        let mut root = Element::new("svg");
        root.assign("xmlns", "http://www.w3.org/2000/svg");
        root.assign("version", "1.1");
        root.assign("width", r2(self.width));
        root.assign("height", r2(self.height));
        root.assign(
            "viewBox",
            format!("0 0 {} {}", r2(self.width), r2(self.height)),
        );
        root.assign("font-family", format!("{FONT_FAMILY}, Verdana, sans-serif"));
        if !self.defs.get_children().is_empty() {
            root.append(self.defs);
        }
        root.append(body);
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{root}\n")
    }
}

impl TextMeasure for SvgCanvas {
    fn text_width(&self, text: &str, font: Font) -> f64 {
        self.measure.text_width(text, font)
    }
}

impl Canvas for SvgCanvas {
    fn fill_rect(&mut self, r: Rect, color: Rgba) {
        if r.w <= 0.0 || r.h <= 0.0 {
            return;
        }
        let mut e = Element::new("rect");
        e.assign("x", r2(r.x));
        e.assign("y", r2(r.y));
        e.assign("width", r2(r.w));
        e.assign("height", r2(r.h));
        Self::fill_attrs(&mut e, color);
        self.add(e);
    }

    fn stroke_rect(&mut self, r: Rect, stroke: &Stroke) {
        let mut e = Element::new("rect");
        e.assign("x", r2(r.x));
        e.assign("y", r2(r.y));
        e.assign("width", r2(r.w));
        e.assign("height", r2(r.h));
        e.assign("fill", "none");
        Self::stroke_attrs(&mut e, stroke);
        self.add(e);
    }

    fn line(&mut self, a: (f64, f64), b: (f64, f64), stroke: &Stroke) {
        let mut e = Element::new("line");
        e.assign("x1", r2(a.0));
        e.assign("y1", r2(a.1));
        e.assign("x2", r2(b.0));
        e.assign("y2", r2(b.1));
        Self::stroke_attrs(&mut e, stroke);
        self.add(e);
    }

    fn polyline(&mut self, points: &[(f64, f64)], stroke: &Stroke) {
        if points.len() < 2 {
            return;
        }
        let mut e = Element::new("polyline");
        e.assign("points", points_attr(points));
        e.assign("fill", "none");
        Self::stroke_attrs(&mut e, stroke);
        self.add(e);
    }

    fn polygon(&mut self, points: &[(f64, f64)], fill: Rgba, outline: Option<&Stroke>) {
        if points.len() < 3 {
            return;
        }
        let mut e = Element::new("polygon");
        e.assign("points", points_attr(points));
        Self::fill_attrs(&mut e, fill);
        if let Some(s) = outline {
            Self::stroke_attrs(&mut e, s);
        }
        self.add(e);
    }

    fn circle(&mut self, c: (f64, f64), radius: f64, fill: Option<Rgba>, outline: Option<&Stroke>) {
        let mut e = Element::new("circle");
        e.assign("cx", r2(c.0));
        e.assign("cy", r2(c.1));
        e.assign("r", r2(radius));
        match fill {
            Some(f) => Self::fill_attrs(&mut e, f),
            None => e.assign("fill", "none"),
        }
        if let Some(s) = outline {
            Self::stroke_attrs(&mut e, s);
        }
        self.add(e);
    }

    fn text(&mut self, pos: (f64, f64), text: &str, font: Font, color: Rgba, anchor: Anchor) {
        if text.is_empty() {
            return;
        }
        let mut e = Element::new("text");
        e.assign("x", r2(pos.0));
        e.assign("y", r2(font.baseline_for_middle(pos.1)));
        e.assign("font-size", r2(font.size));
        if font.bold {
            e.assign("font-weight", "bold");
        }
        match anchor {
            Anchor::Start => {}
            Anchor::Middle => e.assign("text-anchor", "middle"),
            Anchor::End => e.assign("text-anchor", "end"),
        }
        // Keep runs of spaces as drawn by cairo.
        e.assign("xml:space", "preserve");
        Self::fill_attrs(&mut e, color);
        // The svg crate escapes &, < and > in text nodes.
        e.append(svg::node::Text::new(xml_text(text)));
        self.add(e);
    }

    fn push_clip(&mut self, r: Rect) {
        self.clip_counter += 1;
        let id = format!("clip{}", self.clip_counter);
        let mut cp = Element::new("clipPath");
        cp.assign("id", id.clone());
        let mut rect = Element::new("rect");
        rect.assign("x", r2(r.x));
        rect.assign("y", r2(r.y));
        rect.assign("width", r2(r.w));
        rect.assign("height", r2(r.h));
        cp.append(rect);
        self.defs.append(cp);
        let mut g = Element::new("g");
        g.assign("clip-path", format!("url(#{id})"));
        self.stack.push(g);
    }

    fn pop_clip(&mut self) {
        if self.stack.len() > 1 {
            let g = self.stack.pop().expect("checked");
            self.add(g);
        }
    }

    fn begin_group(&mut self, name: &str) {
        let mut g = Element::new("g");
        // Group names are ours (ASCII identifiers), safe in an attribute.
        g.assign("class", name.to_string());
        self.stack.push(g);
    }

    fn end_group(&mut self) {
        self.pop_clip();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_replaced() {
        assert_eq!(xml_text("a\u{1}b\tc"), "a\u{FFFD}b\tc");
    }

    #[test]
    fn document_is_well_formed_with_nested_clips() {
        let mut c = SvgCanvas::new(100.0, 50.0).unwrap();
        c.begin_group("rows");
        c.push_clip(Rect::new(0.0, 0.0, 50.0, 50.0));
        c.fill_rect(
            Rect::new(1.0, 2.0, 3.0, 4.0),
            Rgba::translucent(1, 2, 3, 128),
        );
        c.text(
            (5.0, 5.0),
            "a<b & \"c\"",
            Font::regular(12.0),
            Rgba::rgb(0, 0, 0),
            Anchor::End,
        );
        // Left open on purpose: finish closes it.
        let s = c.finish();
        let doc = roxmltree::Document::parse(&s).expect("well-formed");
        let text: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or(""))
            .collect();
        assert_eq!(text, vec!["a<b & \"c\""]);
        assert_eq!(
            doc.descendants()
                .filter(|n| n.has_tag_name("clipPath"))
                .count(),
            1
        );
    }
}
