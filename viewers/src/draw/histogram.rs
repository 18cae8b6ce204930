//! Drawing of a [`HistogramRender`]: bars of event counts under a time
//! axis, lost-event marks, the highlighted window.

use super::axis::{axis_height, draw_axis};
use super::canvas::{Anchor, CairoCanvas, Canvas, Font, Rect, Stroke, TextMeasure};
use super::statistics::group_thousands;
use crate::render::HistogramRender;
use crate::style::PresentationConfig;
use crate::time::{format_duration, AbsoluteTimeFormat, PixelScale, XMap};

/// How to draw a histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramOptions {
    /// Text size in pixels.
    pub font_size: f64,
    /// How absolute times are written.
    pub time_format: AbsoluteTimeFormat,
    /// Left and right x of the plot, to line it up with other views (a
    /// window's time graphs); `None`: after the count scale, to the edge.
    pub plot_span: Option<(f64, f64)>,
}

impl Default for HistogramOptions {
    fn default() -> Self {
        HistogramOptions {
            font_size: 12.0,
            time_format: AbsoluteTimeFormat::default(),
            plot_span: None,
        }
    }
}

/// Where the parts of a histogram go.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramLayout {
    /// Count scale column, left of the bars.
    pub scale: Rect,
    /// The time axis.
    pub axis: Rect,
    /// The bars.
    pub plot: Rect,
    /// The caption line below.
    pub caption: Rect,
    /// Time → x of the plot.
    pub xmap: XMap,
    /// Width the count scale's labels ask for (where the plot starts when
    /// [`HistogramOptions::plot_span`] is `None`).
    pub fitted_scale_w: f64,
}

impl HistogramLayout {
    /// Lays out a histogram in `width × height`.
    pub fn compute(
        render: &HistogramRender,
        opts: &HistogramOptions,
        width: f64,
        height: f64,
        m: &dyn TextMeasure,
    ) -> Self {
        let font = Font::regular(opts.font_size);
        let fitted_scale_w = (m.text_width(&group_thousands(render.max_count()), font) + 16.0)
            .max(40.0)
            .ceil();
        let (scale_w, right) = match opts.plot_span {
            Some((left, right)) => (left.clamp(0.0, width), right.min(width - 1.0)),
            None => (fitted_scale_w, width - 1.0),
        };
        let axis_h = axis_height(opts.font_size);
        let caption_h = (opts.font_size * 1.8).round();
        let plot_h = (height - axis_h - caption_h).max(0.0);
        let plot = Rect::new(scale_w, axis_h, (right - scale_w).max(1.0), plot_h);
        HistogramLayout {
            scale: Rect::new(0.0, axis_h, scale_w, plot_h),
            axis: Rect::new(scale_w, 0.0, plot.w, axis_h),
            caption: Rect::new(0.0, height - caption_h, width, caption_h),
            xmap: XMap {
                range: render.range(),
                x0: plot.x,
                width: plot.w,
            },
            plot,
            fitted_scale_w,
        }
    }

    /// A comfortable height for `width`.
    pub fn natural_height(opts: &HistogramOptions, width: f64) -> f64 {
        (axis_height(opts.font_size) + (width * 0.25).clamp(120.0, 400.0) + opts.font_size * 1.8)
            .round()
    }

    /// Index of the bin under x, if in the plot.
    pub fn bin_at(&self, render: &HistogramRender, x: f64) -> Option<usize> {
        if x < self.plot.x || x >= self.plot.right() || render.bins().is_empty() {
            return None;
        }
        let t = self.xmap.time(x);
        let grid = PixelScale::new(render.range(), render.bins().len() as u32);
        render
            .range()
            .contains(t)
            .then(|| grid.pixel_of(t) as usize)
    }
}

/// Draws `render` on `cr`.
pub fn draw_histogram(
    cr: &cairo::Context,
    render: &HistogramRender,
    config: &PresentationConfig,
    opts: &HistogramOptions,
    width: f64,
    height: f64,
) -> Result<HistogramLayout, cairo::Error> {
    let mut cv = CairoCanvas::new(cr);
    let l = paint_histogram(&mut cv, render, config, opts, width, height);
    cv.finish()?;
    Ok(l)
}

/// Draws `render` on any canvas.
pub fn paint_histogram(
    cv: &mut dyn Canvas,
    render: &HistogramRender,
    config: &PresentationConfig,
    opts: &HistogramOptions,
    width: f64,
    height: f64,
) -> HistogramLayout {
    let l = HistogramLayout::compute(render, opts, width, height, cv);
    let font = Font::regular(opts.font_size);
    let small = Font::regular((opts.font_size * 0.85).round());
    cv.fill_rect(Rect::new(0.0, 0.0, width, height), config.background);
    cv.fill_rect(
        Rect::new(0.0, 0.0, l.scale.w, l.axis.h),
        config.header_background,
    );
    let ticks = draw_axis(
        cv,
        l.axis,
        &l.xmap,
        config,
        opts.font_size,
        opts.time_format,
    );

    let max = render.max_count();
    let p = l.plot;
    let top = p.y + opts.font_size;
    let bottom = p.bottom() - 1.0;
    let vy = |v: u64| {
        if max == 0 {
            bottom
        } else {
            bottom - v as f64 / max as f64 * (bottom - top)
        }
    };

    cv.begin_group("plot");
    cv.push_clip(p);
    let grid = Stroke::solid(config.grid, 1.0);
    for &t in &ticks.times {
        let x = l.xmap.x(t).round() + 0.5;
        cv.line((x, p.y), (x, p.bottom()), &grid);
    }
    // Lines at the top count and at half of it, rounded down: counts are
    // whole, and so are the labels the lines carry.
    let half = max / 2;
    for v in [half, max] {
        if v > 0 {
            let y = vy(v).round() + 0.5;
            cv.line((p.x, y), (p.right(), y), &grid);
        }
    }
    for (i, &count) in render.bins().iter().enumerate() {
        if count == 0 {
            continue;
        }
        let r = render.bin_range(i);
        let x1 = l.xmap.x(r.start).round();
        let x2 = l.xmap.x(r.end).round().max(x1 + 1.0);
        let y = vy(count).round().min(bottom - 1.0);
        cv.fill_rect(Rect::new(x1, y, x2 - x1, bottom - y), config.histogram_bar);
    }
    let mut lost_total = 0u64;
    for (i, &lost) in render.lost().iter().enumerate() {
        if lost == 0 {
            continue;
        }
        lost_total = lost_total.saturating_add(lost);
        let r = render.bin_range(i);
        let x = (l.xmap.x(r.start) + l.xmap.x(r.end)) / 2.0;
        // A red tick down the plot and a marker at its top.
        cv.line(
            (x, p.y + 8.0),
            (x, bottom),
            &Stroke::solid(config.lost_events.with_alpha(150), 1.0),
        );
        cv.polygon(
            &[(x - 5.0, p.y + 1.0), (x + 5.0, p.y + 1.0), (x, p.y + 9.0)],
            config.lost_events,
            None,
        );
    }
    if let Some(h) = render.highlight {
        // Over the bars, translucent: the window tints what it covers.
        let x1 = l.xmap.x(h.start).max(p.x - 1.0);
        let x2 = l.xmap.x(h.end).min(p.right() + 1.0);
        if x2 > x1 {
            cv.fill_rect(
                Rect::new(x1, p.y, (x2 - x1).max(1.0), p.h),
                config.selection,
            );
        }
        let s = Stroke::solid(config.selection.with_alpha(220), 2.0);
        for t in [h.start, h.end] {
            if l.xmap.range.contains(t) {
                let x = l.xmap.x(t);
                cv.line((x, p.y), (x, p.bottom()), &s);
            }
        }
    }
    cv.pop_clip();
    cv.line(
        (p.x, bottom + 0.5),
        (p.right(), bottom + 0.5),
        &Stroke::solid(config.foreground, 1.0),
    );
    cv.end_group();

    // Count scale.
    cv.begin_group("scale");
    cv.line(
        (l.scale.right() + 0.5, p.y),
        (l.scale.right() + 0.5, bottom),
        &Stroke::solid(config.foreground, 1.0),
    );
    let sx = l.scale.right() - 5.0;
    cv.text(
        (sx, top),
        &group_thousands(max),
        small,
        config.foreground,
        Anchor::End,
    );
    if half > 0 {
        cv.text(
            (sx, vy(half)),
            &group_thousands(half),
            small,
            config.muted,
            Anchor::End,
        );
    }
    cv.text(
        (sx, bottom - small.size / 2.0),
        "0",
        small,
        config.muted,
        Anchor::End,
    );
    cv.end_group();

    // Caption.
    let bins = render.bins().len().max(1) as u64;
    let bin_ns = render.range().span() / bins;
    let total: u64 = render.bins().iter().fold(0u64, |a, &b| a.saturating_add(b));
    let mut caption = format!(
        "{} events, {} bins of {}",
        group_thousands(total),
        bins,
        format_duration(bin_ns as i128)
    );
    if lost_total > 0 {
        caption.push_str(&format!(
            ", {} lost events (▼)",
            group_thousands(lost_total)
        ));
    }
    cv.text(
        (l.plot.x, l.caption.mid_y()),
        &caption,
        font,
        config.muted,
        Anchor::Start,
    );
    l
}
