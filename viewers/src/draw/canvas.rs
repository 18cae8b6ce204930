//! The few drawing primitives every figure is made of, with two backends:
//! a cairo context ([`CairoCanvas`]: GUI, PNG, cairo's SVG surface) and a
//! direct SVG writer ([`SvgCanvas`](super::svg_canvas::SvgCanvas)) that keeps
//! text as `<text>` elements.
//!
//! Figures are written once against [`Canvas`], so the GUI, the PNG and the
//! SVG exports cannot drift apart.

use crate::style::{LineStyle, Rgba, Symbol};

/// Font family of every text. DejaVu Sans ships with GTK on Debian; SVG
/// viewers fall back to their sans-serif font.
pub const FONT_FAMILY: &str = "DejaVu Sans";

/// An axis-aligned rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The rectangle at `(x, y)` of size `w × h` (negative sizes become 0).
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> Self {
        Rect {
            x,
            y,
            w: w.max(0.0),
            h: h.max(0.0),
        }
    }

    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Whether `(x, y)` is inside (left/top edges included).
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.x && x < self.right() && y >= self.y && y < self.bottom()
    }

    /// Vertical middle.
    pub fn mid_y(&self) -> f64 {
        self.y + self.h / 2.0
    }
}

/// Size and weight of a text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Font {
    /// Size in pixels (the em size).
    pub size: f64,
    /// Bold.
    pub bold: bool,
}

impl Font {
    /// A regular font of `size` px.
    pub fn regular(size: f64) -> Self {
        Font { size, bold: false }
    }

    /// A bold font of `size` px.
    pub fn bold(size: f64) -> Self {
        Font { size, bold: true }
    }

    /// Baseline of a line of text whose vertical middle is `mid_y`: half the
    /// cap height of DejaVu Sans (0.73 em) below it. Both backends place text
    /// by baseline, so they agree.
    pub fn baseline_for_middle(&self, mid_y: f64) -> f64 {
        mid_y + self.size * 0.365
    }
}

/// Horizontal anchoring of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The text starts at x.
    Start,
    /// The text is centred on x.
    Middle,
    /// The text ends at x.
    End,
}

/// How a line is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stroke {
    /// Colour.
    pub color: Rgba,
    /// Width in pixels.
    pub width: f64,
    /// Pattern.
    pub style: LineStyle,
}

impl Stroke {
    /// A solid line.
    pub fn solid(color: Rgba, width: f64) -> Self {
        Stroke {
            color,
            width,
            style: LineStyle::Solid,
        }
    }
}

/// Measures text, for layout (tree column width, tick spacing, elision).
pub trait TextMeasure {
    /// Advance width of `text` in `font`, in pixels.
    fn text_width(&self, text: &str, font: Font) -> f64;
}

/// Drawing primitives of the figures.
pub trait Canvas: TextMeasure {
    /// Fills a rectangle.
    fn fill_rect(&mut self, r: Rect, color: Rgba);
    /// Strokes a rectangle's outline.
    fn stroke_rect(&mut self, r: Rect, stroke: &Stroke);
    /// A line segment.
    fn line(&mut self, a: (f64, f64), b: (f64, f64), stroke: &Stroke);
    /// An open polyline.
    fn polyline(&mut self, points: &[(f64, f64)], stroke: &Stroke);
    /// A filled closed polygon, optionally outlined.
    fn polygon(&mut self, points: &[(f64, f64)], fill: Rgba, outline: Option<&Stroke>);
    /// A circle, filled and/or outlined.
    fn circle(
        &mut self,
        center: (f64, f64),
        radius: f64,
        fill: Option<Rgba>,
        outline: Option<&Stroke>,
    );
    /// A line of text; `pos.1` is the text's vertical middle.
    fn text(&mut self, pos: (f64, f64), text: &str, font: Font, color: Rgba, anchor: Anchor);
    /// Restricts drawing to `r` (intersected with the current clip) until the
    /// matching [`Canvas::pop_clip`].
    fn push_clip(&mut self, r: Rect);
    /// Ends the innermost [`Canvas::push_clip`].
    fn pop_clip(&mut self);
    /// Starts a named group (SVG `<g>`; nothing for cairo).
    fn begin_group(&mut self, _name: &str) {}
    /// Ends the innermost group.
    fn end_group(&mut self) {}
}

/// Text truncated with an ellipsis to fit `max_w` pixels.
pub fn elide(m: &dyn TextMeasure, text: &str, font: Font, max_w: f64) -> String {
    if m.text_width(text, font) <= max_w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search on the number of kept characters.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if m.text_width(&s, font) <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        if m.text_width("…", font) <= max_w {
            "…".to_string()
        } else {
            String::new()
        }
    } else {
        chars[..lo].iter().collect::<String>() + "…"
    }
}

/// Draws `symbol` of half-size `r` centred on `c`.
pub fn draw_symbol(
    cv: &mut dyn Canvas,
    symbol: Symbol,
    c: (f64, f64),
    r: f64,
    fill: Rgba,
    outline: &Stroke,
) {
    let (x, y) = c;
    match symbol {
        Symbol::Circle => cv.circle(c, r, Some(fill), Some(outline)),
        Symbol::Square => cv.polygon(
            &[
                (x - r, y - r),
                (x + r, y - r),
                (x + r, y + r),
                (x - r, y + r),
            ],
            fill,
            Some(outline),
        ),
        Symbol::Diamond => cv.polygon(
            &[(x, y - r * 1.25), (x + r, y), (x, y + r * 1.25), (x - r, y)],
            fill,
            Some(outline),
        ),
        Symbol::Triangle => cv.polygon(
            &[
                (x, y - r * 1.2),
                (x + r * 1.1, y + r * 0.8),
                (x - r * 1.1, y + r * 0.8),
            ],
            fill,
            Some(outline),
        ),
        Symbol::Star => {
            let mut pts = Vec::with_capacity(10);
            for i in 0..10 {
                let a = std::f64::consts::PI * (i as f64) / 5.0 - std::f64::consts::FRAC_PI_2;
                let rr = if i % 2 == 0 { r * 1.3 } else { r * 0.55 };
                pts.push((x + rr * a.cos(), y + rr * a.sin()));
            }
            cv.polygon(&pts, fill, Some(outline));
        }
        Symbol::Cross | Symbol::Plus => {
            // Drawn as a thick line in the fill colour over a thicker outline
            // so it stays visible on any state colour.
            let (a1, b1, a2, b2) = if symbol == Symbol::Cross {
                (
                    (x - r, y - r),
                    (x + r, y + r),
                    (x - r, y + r),
                    (x + r, y - r),
                )
            } else {
                ((x - r, y), (x + r, y), (x, y - r), (x, y + r))
            };
            let under = Stroke::solid(outline.color, 3.5);
            let over = Stroke::solid(fill, 1.8);
            cv.line(a1, b1, &under);
            cv.line(a2, b2, &under);
            cv.line(a1, b1, &over);
            cv.line(a2, b2, &over);
        }
    }
}

fn set_font(cr: &cairo::Context, font: Font) {
    cr.select_font_face(
        FONT_FAMILY,
        cairo::FontSlant::Normal,
        if font.bold {
            cairo::FontWeight::Bold
        } else {
            cairo::FontWeight::Normal
        },
    );
    cr.set_font_size(font.size);
}

/// Measures text with cairo's toy font API on a private 1×1 surface, so
/// layouts can be computed without a drawing context (SVG writer, hit
/// testing before the first draw).
pub struct CairoMeasure {
    cr: cairo::Context,
}

impl CairoMeasure {
    /// A new measurer.
    pub fn new() -> Result<Self, cairo::Error> {
        let surface = cairo::ImageSurface::create(cairo::Format::ARgb32, 1, 1)?;
        Ok(CairoMeasure {
            cr: cairo::Context::new(&surface)?,
        })
    }
}

/// `text` as cairo takes it: cairo's text calls panic on a NUL byte, which
/// a damaged trace can put in any name; NULs are dropped.
fn cairo_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

impl TextMeasure for CairoMeasure {
    fn text_width(&self, text: &str, font: Font) -> f64 {
        set_font(&self.cr, font);
        self.cr
            .text_extents(&cairo_text(text))
            .map(|e| e.x_advance())
            .unwrap_or(0.0)
    }
}

/// [`Canvas`] over a cairo context. Cairo reports errors on the calls that
/// paint; the first one is kept and returned by [`CairoCanvas::finish`].
pub struct CairoCanvas<'a> {
    cr: &'a cairo::Context,
    error: Option<cairo::Error>,
}

impl<'a> CairoCanvas<'a> {
    /// A canvas drawing on `cr` (its current transformation applies).
    pub fn new(cr: &'a cairo::Context) -> Self {
        CairoCanvas { cr, error: None }
    }

    /// The first cairo error met, if any.
    pub fn finish(self) -> Result<(), cairo::Error> {
        match self.error {
            Some(e) => Err(e),
            None => self.cr.status(),
        }
    }

    fn check(&mut self, r: Result<(), cairo::Error>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
    }

    fn source(&self, c: Rgba) {
        let (r, g, b, a) = c.to_f64();
        self.cr.set_source_rgba(r, g, b, a);
    }

    fn apply_stroke(&self, s: &Stroke) {
        self.source(s.color);
        self.cr.set_line_width(s.width);
        self.cr.set_dash(&s.style.dashes(s.width), 0.0);
        self.cr.set_line_cap(cairo::LineCap::Butt);
        self.cr.set_line_join(cairo::LineJoin::Miter);
    }

    fn path(&self, points: &[(f64, f64)]) {
        let mut it = points.iter();
        if let Some(&(x, y)) = it.next() {
            self.cr.move_to(x, y);
            for &(x, y) in it {
                self.cr.line_to(x, y);
            }
        }
    }
}

impl TextMeasure for CairoCanvas<'_> {
    fn text_width(&self, text: &str, font: Font) -> f64 {
        set_font(self.cr, font);
        self.cr
            .text_extents(&cairo_text(text))
            .map(|e| e.x_advance())
            .unwrap_or(0.0)
    }
}

impl Canvas for CairoCanvas<'_> {
    fn fill_rect(&mut self, r: Rect, color: Rgba) {
        if r.w <= 0.0 || r.h <= 0.0 {
            return;
        }
        self.source(color);
        self.cr.rectangle(r.x, r.y, r.w, r.h);
        let res = self.cr.fill();
        self.check(res);
    }

    fn stroke_rect(&mut self, r: Rect, stroke: &Stroke) {
        self.apply_stroke(stroke);
        self.cr.rectangle(r.x, r.y, r.w, r.h);
        let res = self.cr.stroke();
        self.check(res);
    }

    fn line(&mut self, a: (f64, f64), b: (f64, f64), stroke: &Stroke) {
        self.apply_stroke(stroke);
        self.cr.move_to(a.0, a.1);
        self.cr.line_to(b.0, b.1);
        let res = self.cr.stroke();
        self.check(res);
    }

    fn polyline(&mut self, points: &[(f64, f64)], stroke: &Stroke) {
        if points.len() < 2 {
            return;
        }
        self.apply_stroke(stroke);
        self.path(points);
        let res = self.cr.stroke();
        self.check(res);
    }

    fn polygon(&mut self, points: &[(f64, f64)], fill: Rgba, outline: Option<&Stroke>) {
        if points.len() < 3 {
            return;
        }
        self.path(points);
        self.cr.close_path();
        self.source(fill);
        let res = if outline.is_some() {
            self.cr.fill_preserve()
        } else {
            self.cr.fill()
        };
        self.check(res);
        if let Some(s) = outline {
            self.apply_stroke(s);
            let res = self.cr.stroke();
            self.check(res);
        }
    }

    fn circle(&mut self, c: (f64, f64), radius: f64, fill: Option<Rgba>, outline: Option<&Stroke>) {
        self.cr.new_path();
        self.cr
            .arc(c.0, c.1, radius, 0.0, 2.0 * std::f64::consts::PI);
        if let Some(f) = fill {
            self.source(f);
            let res = self.cr.fill_preserve();
            self.check(res);
        }
        if let Some(s) = outline {
            self.apply_stroke(s);
            let res = self.cr.stroke_preserve();
            self.check(res);
        }
        self.cr.new_path();
    }

    fn text(&mut self, pos: (f64, f64), text: &str, font: Font, color: Rgba, anchor: Anchor) {
        if text.is_empty() {
            return;
        }
        set_font(self.cr, font);
        let w = match anchor {
            Anchor::Start => 0.0,
            _ => self
                .cr
                .text_extents(&cairo_text(text))
                .map(|e| e.x_advance())
                .unwrap_or(0.0),
        };
        let x = match anchor {
            Anchor::Start => pos.0,
            Anchor::Middle => pos.0 - w / 2.0,
            Anchor::End => pos.0 - w,
        };
        self.source(color);
        self.cr.move_to(x, font.baseline_for_middle(pos.1));
        let res = self.cr.show_text(&cairo_text(text));
        self.check(res);
        self.cr.new_path();
    }

    fn push_clip(&mut self, r: Rect) {
        let res = self.cr.save();
        self.check(res);
        self.cr.rectangle(r.x, r.y, r.w, r.h);
        self.cr.clip();
    }

    fn pop_clip(&mut self) {
        let res = self.cr.restore();
        self.check(res);
    }
}
