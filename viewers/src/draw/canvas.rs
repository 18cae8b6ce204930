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
    /// `symbol` of half-size `r` centred on `c` (see [`draw_symbol`]).
    fn symbol(&mut self, symbol: Symbol, c: (f64, f64), r: f64, fill: Rgba, outline: &Stroke) {
        draw_symbol(self, symbol, c, r, fill, outline);
    }
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

/// Draws `symbol` of half-size `r` centred on `c`, as paths.
pub fn draw_symbol<C: Canvas + ?Sized>(
    cv: &mut C,
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
///
/// Symbols are drawn once into small image surfaces, *sprites*, one per
/// look and position within a device pixel, which are then copied to
/// where each symbol goes: filling and stroking a small path costs cairo
/// about 50,000 instructions, and a time graph's drawn events are
/// hundreds of symbols of a few looks, all centred on pixel columns
/// (callgrind, the window's paints of a 50 MB trace: 1.18 of 1.94 G
/// instructions in symbols). The result is the same: a sprite is the
/// symbol's own fill and stroke over nothing, composited over the
/// picture as they would be (compositing over is associative), at the
/// same position within the pixel.
pub struct CairoCanvas<'a> {
    cr: &'a cairo::Context,
    error: Option<cairo::Error>,
    sprites: Vec<(SpriteKey, Sprite)>,
}

/// Most sprites a canvas makes: symbols at more positions within a pixel
/// or in more looks are drawn as paths.
const MAX_SPRITES: usize = 64;

/// What makes two symbols' sprites the same: look, size, device scale and
/// position within the device pixel (floats by their bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SpriteKey {
    symbol: Symbol,
    fill: Rgba,
    outline: Rgba,
    style: LineStyle,
    bits: [u64; 5],
}

/// A symbol drawn alone, as a pattern to fill with (`None`: cairo could
/// not make it), its side and where its centre lies in it (in the
/// surface's pixels).
struct Sprite {
    pattern: Option<cairo::SurfacePattern>,
    side: i32,
    pad: i32,
}

impl<'a> CairoCanvas<'a> {
    /// A canvas drawing on `cr` (its current transformation applies).
    pub fn new(cr: &'a cairo::Context) -> Self {
        CairoCanvas {
            cr,
            error: None,
            sprites: Vec::new(),
        }
    }

    /// Draws `symbol` through a sprite; false when it cannot be (a
    /// transformation other than a translation, too many sprites, a
    /// cairo error), to draw it as paths instead.
    fn symbol_sprite(
        &mut self,
        symbol: Symbol,
        c: (f64, f64),
        r: f64,
        fill: Rgba,
        outline: &Stroke,
    ) -> bool {
        // Pixels only: a vector surface (cairo's SVG) keeps its paths.
        let target = self.cr.group_target();
        if target.type_() != cairo::SurfaceType::Image {
            return false;
        }
        let m = self.cr.matrix();
        if (m.xx(), m.yy(), m.xy(), m.yx()) != (1.0, 1.0, 0.0, 0.0) || !r.is_finite() {
            return false;
        }
        // Where the centre lands in the surface's pixels: the context's
        // "device" space is before the surface's scale and offset.
        let scale = target.device_scale().0;
        let offset = target.device_offset();
        let (lx, ly) = self.cr.user_to_device(c.0, c.1);
        let (dx, dy) = (lx * scale + offset.0, ly * scale + offset.1);
        if !(dx.is_finite() && dy.is_finite() && (1.0..=8.0).contains(&scale)) {
            return false;
        }
        let (ix, iy) = (dx.floor(), dy.floor());
        let (fx, fy) = (dx - ix, dy - iy);
        let key = SpriteKey {
            symbol,
            fill,
            outline: outline.color,
            style: outline.style,
            bits: [
                r.to_bits(),
                outline.width.to_bits(),
                scale.to_bits(),
                fx.to_bits(),
                fy.to_bits(),
            ],
        };
        let i = match self.sprites.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None if self.sprites.len() < MAX_SPRITES => {
                let sprite = make_sprite(symbol, (fx, fy), r, fill, outline, scale);
                self.sprites.push((key, sprite));
                self.sprites.len() - 1
            }
            None => return false,
        };
        let sprite = &self.sprites[i].1;
        let Some(pattern) = &sprite.pattern else {
            return false;
        };
        // Where the sprite's pixels land on whole pixels of the surface,
        // in user space (the transformation is a translation).
        let pad = f64::from(sprite.pad);
        let side = f64::from(sprite.side) / scale;
        let x = (ix - pad - offset.0) / scale - m.x0();
        let y = (iy - pad - offset.1) / scale - m.y0();
        pattern.set_matrix(cairo::Matrix::new(1.0, 0.0, 0.0, 1.0, -x, -y));
        let cr = self.cr;
        let res = cr.set_source(pattern).and_then(|()| {
            cr.rectangle(x, y, side, side);
            cr.fill()
        });
        self.check(res);
        true
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

/// `symbol` drawn alone on a transparent surface with the device `scale`,
/// its centre at `(pad + frac.0, pad + frac.1)` device pixels.
fn make_sprite(
    symbol: Symbol,
    frac: (f64, f64),
    r: f64,
    fill: Rgba,
    outline: &Stroke,
    scale: f64,
) -> Sprite {
    // The star reaches 1.3 r from its centre; the outline half its width
    // beyond, and antialiasing a pixel.
    let reach = (r.abs() * 1.3 + outline.width.abs()) * scale;
    let pad = (reach.ceil() as i32 + 2).clamp(2, 256);
    let side = 2 * pad + 1;
    let pattern = cairo::ImageSurface::create(cairo::Format::ARgb32, side, side)
        .ok()
        .filter(|s| {
            s.set_device_scale(scale, scale);
            let Ok(cr) = cairo::Context::new(s) else {
                return false;
            };
            let centre = (
                (f64::from(pad) + frac.0) / scale,
                (f64::from(pad) + frac.1) / scale,
            );
            let mut cv = CairoCanvas::new(&cr);
            draw_symbol(&mut cv, symbol, centre, r, fill, outline);
            cv.finish().is_ok()
        })
        .map(|s| cairo::SurfacePattern::create(&s));
    Sprite { pattern, side, pad }
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

    fn symbol(&mut self, symbol: Symbol, c: (f64, f64), r: f64, fill: Rgba, outline: &Stroke) {
        if !self.symbol_sprite(symbol, c, r, fill, outline) {
            draw_symbol(self, symbol, c, r, fill, outline);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const SYMBOLS: [Symbol; 7] = [
        Symbol::Circle,
        Symbol::Square,
        Symbol::Diamond,
        Symbol::Triangle,
        Symbol::Cross,
        Symbol::Plus,
        Symbol::Star,
    ];

    /// The pixels of a `w × h` picture (device scale `scale`) of stripes
    /// and `symbols` at `centres`, drawn by `draw`: through the canvas
    /// (sprites), or as paths.
    fn picture(
        scale: i32,
        clip: Option<Rect>,
        centres: &[(f64, f64)],
        through_canvas: bool,
    ) -> (Vec<u8>, usize) {
        let (w, h) = (240, 60);
        let mut s = cairo::ImageSurface::create(cairo::Format::ARgb32, w * scale, h * scale)
            .expect("a surface");
        s.set_device_scale(f64::from(scale), f64::from(scale));
        let sprites;
        {
            let cr = cairo::Context::new(&s).expect("a context");
            // Symbols are drawn over state colours, half transparent too.
            cr.translate(3.0, 2.0);
            let mut cv = CairoCanvas::new(&cr);
            for (i, colour) in [Rgba::rgb(0x20, 0xc0, 0x20), Rgba::rgb(0xd0, 0xd0, 0x10)]
                .into_iter()
                .enumerate()
            {
                cv.fill_rect(Rect::new(0.0, 25.0 * i as f64, 240.0, 20.0), colour);
            }
            if let Some(c) = clip {
                cv.push_clip(c);
            }
            let outline = Stroke::solid(Rgba::rgb(0x20, 0x20, 0x20), 1.0);
            for (k, &c) in centres.iter().enumerate() {
                let symbol = SYMBOLS[k % SYMBOLS.len()];
                let fill = if k % 3 == 0 {
                    Rgba::rgb(0xf0, 0x80, 0x10)
                } else {
                    Rgba::rgb(0x30, 0x60, 0xe0).with_alpha(160)
                };
                if through_canvas {
                    cv.symbol(symbol, c, 4.0, fill, &outline);
                } else {
                    draw_symbol(&mut cv, symbol, c, 4.0, fill, &outline);
                }
            }
            if clip.is_some() {
                cv.pop_clip();
            }
            sprites = cv.sprites.len();
            cv.finish().expect("drawn");
        }
        s.flush();
        let data = s.data().expect("the pixels").to_vec();
        (data, sprites)
    }

    fn assert_same(scale: i32, clip: Option<Rect>, centres: &[(f64, f64)]) -> usize {
        let (paths, _) = picture(scale, clip, centres, false);
        let (sprites, made) = picture(scale, clip, centres, true);
        let diffs: Vec<u8> = paths
            .iter()
            .zip(&sprites)
            .map(|(a, b)| a.abs_diff(*b))
            .collect();
        let worst = diffs.iter().copied().max().unwrap_or(0);
        let differ = diffs.iter().filter(|d| **d > 0).count();
        // Compositing the symbol's fill and stroke over nothing, then over
        // the picture, rounds to 8 bits once more than compositing each
        // over the picture: a few levels, where a symbol's edge or its
        // half transparent fill meets the outline.
        assert!(worst <= 4, "scale {scale}: a channel differs by {worst}");
        assert!(
            differ * 10 < diffs.len(),
            "scale {scale}: {differ} of {} channels differ",
            diffs.len()
        );
        made
    }

    #[test]
    fn sprites_draw_symbols_as_paths_do() {
        // Centred on pixel columns, as a time graph's drawn events are,
        // along the rows and across their edges.
        let on_columns: Vec<(f64, f64)> = (0..70)
            .map(|k| (2.5 + 3.0 * k as f64, [10.0, 20.5, 35.0, 44.0][k % 4]))
            .collect();
        for scale in [1, 2] {
            let made = assert_same(scale, None, &on_columns);
            // A few looks at one position in the pixel: few sprites.
            assert!(made <= SYMBOLS.len() * 2 * 4, "{made} sprites");
            // Clipped, partly outside the clip.
            assert_same(scale, Some(Rect::new(30.0, 5.0, 100.0, 30.0)), &on_columns);
        }
        // Anywhere within the pixel: past the most sprites, paths.
        let anywhere: Vec<(f64, f64)> = (0..200)
            .map(|k| (1.0 + 1.17 * k as f64, 5.0 + 0.37 * (k % 100) as f64))
            .collect();
        assert_eq!(assert_same(1, None, &anywhere), MAX_SPRITES);
    }

    #[test]
    fn vector_surfaces_keep_their_paths() {
        let s = cairo::SvgSurface::for_stream(100.0, 100.0, Vec::<u8>::new()).expect("svg");
        let cr = cairo::Context::new(&s).expect("a context");
        let mut cv = CairoCanvas::new(&cr);
        let outline = Stroke::solid(Rgba::rgb(0, 0, 0), 1.0);
        cv.symbol(
            Symbol::Triangle,
            (10.5, 10.5),
            4.0,
            Rgba::rgb(200, 0, 0),
            &outline,
        );
        assert!(cv.sprites.is_empty());
        cv.finish().expect("drawn");
    }
}
