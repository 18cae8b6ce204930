//! PNG and SVG export of any render, without a display: what
//! `traceloom export` and the GUI's export menu call.

use std::path::{Path, PathBuf};

use crate::draw::{
    paint_histogram, paint_statistics, paint_time_graph, CairoCanvas, CairoMeasure, Canvas,
    HistogramLayout, HistogramOptions, StatisticsLayout, StatisticsOptions, SvgCanvas, TextMeasure,
    TimeGraphLayout, TimeGraphOptions,
};
use crate::render::{HistogramRender, StatisticsRender, TimeGraphRender};
use crate::style::PresentationConfig;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Cairo could not create or draw the surface.
    #[error("cairo: {0}")]
    Cairo(#[from] cairo::Error),
    /// Encoding the PNG or SVG stream failed.
    #[error("encoding {0}")]
    Encode(#[from] EncodeError),
    /// Writing the file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The requested size is empty or beyond cairo's limit (32767 px).
    #[error("cannot export an image of {0}×{1} pixels (1 to 32767 per side)")]
    Size(u32, u32),
}

/// Why a figure's PNG or SVG stream could not be encoded.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// Encoding the PNG stream failed.
    #[error("PNG: {0}")]
    Png(#[source] png::EncodingError),
    /// Cairo would not hand the drawn pixels over.
    #[error("PNG: cannot read the drawn image: {0}")]
    Pixels(#[source] cairo::BorrowError),
    /// The PNG encoder refused a row of pixels.
    #[error("PNG: {0}")]
    Stream(#[source] std::io::Error),
    /// Finishing cairo's SVG stream failed in the writer.
    #[error("SVG: {0}")]
    Svg(#[source] std::io::Error),
    /// cairo handed back another stream than the one it was given.
    #[error("SVG: cairo returned an unexpected stream")]
    UnexpectedSvgStream,
}

/// A render with everything needed to draw it.
pub trait Figure {
    /// Height showing everything at `width`.
    fn natural_height(&self, width: f64, m: &dyn TextMeasure) -> f64;
    /// Draws the figure over `width × height`.
    fn paint(&self, cv: &mut dyn Canvas, width: f64, height: f64);
}

/// A time graph (control flow, resources, Pajé) to export.
#[derive(Debug, Clone)]
pub struct TimeGraphFigure<'a> {
    /// The render.
    pub render: &'a TimeGraphRender,
    /// Colours and styles.
    pub config: &'a PresentationConfig,
    /// Sizes, markers.
    pub options: TimeGraphOptions,
}

impl<'a> TimeGraphFigure<'a> {
    /// `render` with `config` and default options.
    pub fn new(render: &'a TimeGraphRender, config: &'a PresentationConfig) -> Self {
        TimeGraphFigure {
            render,
            config,
            options: TimeGraphOptions::default(),
        }
    }

    /// The layout the figure gets at `width × height`.
    pub fn layout(&self, width: f64, height: f64, m: &dyn TextMeasure) -> TimeGraphLayout {
        TimeGraphLayout::compute(self.render, self.config, &self.options, width, height, m)
    }
}

impl Figure for TimeGraphFigure<'_> {
    fn natural_height(&self, width: f64, m: &dyn TextMeasure) -> f64 {
        TimeGraphLayout::natural_height(self.render, self.config, &self.options, width, m)
    }

    fn paint(&self, cv: &mut dyn Canvas, width: f64, height: f64) {
        paint_time_graph(cv, self.render, self.config, &self.options, width, height);
    }
}

/// A histogram to export.
#[derive(Debug, Clone)]
pub struct HistogramFigure<'a> {
    /// The render.
    pub render: &'a HistogramRender,
    /// Colours.
    pub config: &'a PresentationConfig,
    /// Sizes.
    pub options: HistogramOptions,
}

impl<'a> HistogramFigure<'a> {
    /// `render` with `config` and default options.
    pub fn new(render: &'a HistogramRender, config: &'a PresentationConfig) -> Self {
        HistogramFigure {
            render,
            config,
            options: HistogramOptions::default(),
        }
    }
}

impl Figure for HistogramFigure<'_> {
    fn natural_height(&self, width: f64, _m: &dyn TextMeasure) -> f64 {
        HistogramLayout::natural_height(&self.options, width)
    }

    fn paint(&self, cv: &mut dyn Canvas, width: f64, height: f64) {
        paint_histogram(cv, self.render, self.config, &self.options, width, height);
    }
}

/// A statistics table to export.
#[derive(Debug, Clone)]
pub struct StatisticsFigure<'a> {
    /// The render.
    pub render: &'a StatisticsRender,
    /// Colours.
    pub config: &'a PresentationConfig,
    /// Sizes.
    pub options: StatisticsOptions,
}

impl<'a> StatisticsFigure<'a> {
    /// `render` with `config` and default options.
    pub fn new(render: &'a StatisticsRender, config: &'a PresentationConfig) -> Self {
        StatisticsFigure {
            render,
            config,
            options: StatisticsOptions::default(),
        }
    }
}

impl Figure for StatisticsFigure<'_> {
    fn natural_height(&self, _width: f64, _m: &dyn TextMeasure) -> f64 {
        StatisticsLayout::natural_height(self.render, &self.options)
    }

    fn paint(&self, cv: &mut dyn Canvas, width: f64, height: f64) {
        paint_statistics(cv, self.render, self.config, &self.options, width, height);
    }
}

/// Cairo's largest image side.
const MAX_SIDE: u32 = 32767;

/// The size to export: `height` if given, else the figure's natural height.
fn resolve_size(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
) -> Result<(u32, u32), ExportError> {
    let h = match height {
        Some(h) => h,
        None => {
            let m = CairoMeasure::new()?;
            figure
                .natural_height(width as f64, &m)
                .ceil()
                .clamp(1.0, MAX_SIDE as f64) as u32
        }
    };
    if width == 0 || h == 0 || width > MAX_SIDE || h > MAX_SIDE {
        return Err(ExportError::Size(width, h));
    }
    Ok((width, h))
}

/// Draws `figure` on `cr` over `width × height` (the GUI's entry point).
pub fn draw_figure(
    cr: &cairo::Context,
    figure: &dyn Figure,
    width: f64,
    height: f64,
) -> Result<(), cairo::Error> {
    let mut cv = CairoCanvas::new(cr);
    figure.paint(&mut cv, width, height);
    cv.finish()
}

/// PNG bytes of `figure`, `width` wide and `height` high (natural height if
/// `None`).
pub fn render_png(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
) -> Result<Vec<u8>, ExportError> {
    let (w, h) = resolve_size(figure, width, height)?;
    let mut surface = cairo::ImageSurface::create(cairo::Format::ARgb32, w as i32, h as i32)?;
    {
        let cr = cairo::Context::new(&surface)?;
        draw_figure(&cr, figure, w as f64, h as f64)?;
    }
    surface.flush();
    Ok(encode_png(&mut surface)?)
}

/// The PNG of `surface` (cairo's ARGB32: premultiplied, one native-endian
/// `u32` a pixel) as cairo's own writer gives it: 8-bit RGB when every
/// pixel is opaque, else RGBA with colours divided by alpha and rounded as
/// cairo does; compressed at deflate level 1 with each row filtered
/// against the one above. Cairo's writer (zlib's default level, adaptive
/// filters) took 10.3 of the 13.1 G instructions of a control flow export
/// of the 50 MB generated trace; this one makes a file 9 % larger in a
/// few percent of its time.
fn encode_png(surface: &mut cairo::ImageSurface) -> Result<Vec<u8>, EncodeError> {
    let (w, h) = (
        surface.width().max(0) as u32,
        surface.height().max(0) as u32,
    );
    let stride = (surface.stride().max(0) as usize).max(1);
    let data = surface.data().map_err(EncodeError::Pixels)?;
    let lines = || data.chunks(stride).take(h as usize);
    let opaque = lines().all(|line| argb_pixels(line, w).all(|v| v >> 24 == 255));
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(if opaque {
        png::ColorType::Rgb
    } else {
        png::ColorType::Rgba
    });
    encoder.set_depth(png::BitDepth::Eight);
    // Measured on that export's 1920 × 11,549 image (cairo's file: 3.80 MB):
    // level 1 with `Up` 4.13 MB, fdeflate 6.31 MB, level 2 (adaptive)
    // 3.84 MB in 2.7 times level 1's time.
    encoder.set_deflate_compression(png::DeflateCompression::Level(1));
    encoder.set_filter(png::Filter::Up);
    let mut writer = encoder.write_header().map_err(EncodeError::Png)?;
    let mut stream = writer.stream_writer().map_err(EncodeError::Png)?;
    // A row at a time: the image converted whole was another 190 MB at
    // cairo's largest height.
    let mut row = Vec::with_capacity(w as usize * 4);
    for line in lines() {
        row.clear();
        for v in argb_pixels(line, w) {
            let a = v >> 24;
            let [r, g, b] = [(v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
            let straight = |c: u32| ((c * 255 + a / 2) / a) as u8;
            match a {
                _ if opaque => row.extend_from_slice(&[r as u8, g as u8, b as u8]),
                0 => row.extend_from_slice(&[0; 4]),
                255 => row.extend_from_slice(&[r as u8, g as u8, b as u8, 255]),
                _ => row.extend_from_slice(&[straight(r), straight(g), straight(b), a as u8]),
            }
        }
        std::io::Write::write_all(&mut stream, &row).map_err(EncodeError::Stream)?;
    }
    stream.finish().map_err(EncodeError::Png)?;
    writer.finish().map_err(EncodeError::Png)?;
    Ok(out)
}

/// The first `width` pixels of `line`, a row of a cairo ARGB32 image.
fn argb_pixels(line: &[u8], width: u32) -> impl Iterator<Item = u32> + '_ {
    line[..width as usize * 4]
        .chunks_exact(4)
        .map(|p| u32::from_ne_bytes([p[0], p[1], p[2], p[3]]))
}

/// SVG document of `figure` written directly: text stays text (`<text>`
/// elements), elements are grouped by role (`<g class="states">`...).
pub fn render_svg(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
) -> Result<String, ExportError> {
    let (w, h) = resolve_size(figure, width, height)?;
    let mut cv = SvgCanvas::new(w as f64, h as f64)?;
    figure.paint(&mut cv, w as f64, h as f64);
    Ok(cv.finish())
}

/// SVG document of `figure` made by cairo's SVG surface: identical to the
/// PNG, but cairo (1.16+) writes glyph outlines (`<symbol>` + `<use>`)
/// instead of text.
pub fn render_svg_cairo(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
) -> Result<Vec<u8>, ExportError> {
    let (w, h) = resolve_size(figure, width, height)?;
    let surface = cairo::SvgSurface::for_stream(w as f64, h as f64, Vec::<u8>::new())?;
    {
        let cr = cairo::Context::new(&surface)?;
        draw_figure(&cr, figure, w as f64, h as f64)?;
    }
    let stream = surface
        .finish_output_stream()
        .map_err(|e| EncodeError::Svg(e.error))?;
    let bytes = stream
        .downcast::<Vec<u8>>()
        .map_err(|_| EncodeError::UnexpectedSvgStream)?;
    Ok(*bytes)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    std::fs::write(path, bytes).map_err(|source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `figure` as a PNG file.
pub fn export_png(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
    path: &Path,
) -> Result<(), ExportError> {
    write(path, &render_png(figure, width, height)?)
}

/// Writes `figure` as an SVG file with text as `<text>` (see
/// [`render_svg`]).
pub fn export_svg(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
    path: &Path,
) -> Result<(), ExportError> {
    write(path, render_svg(figure, width, height)?.as_bytes())
}

/// Writes `figure` as an SVG file made by cairo (see [`render_svg_cairo`]).
pub fn export_svg_cairo(
    figure: &dyn Figure,
    width: u32,
    height: Option<u32>,
    path: &Path,
) -> Result<(), ExportError> {
    write(path, &render_svg_cairo(figure, width, height)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Size, colour type, bit depth and pixels of a PNG stream.
    fn decoded(bytes: &[u8]) -> (u32, u32, png::ColorType, png::BitDepth, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .expect("a PNG header");
        let mut pixels = vec![0; reader.output_buffer_size().expect("a sane size")];
        let info = reader.next_frame(&mut pixels).expect("a PNG image");
        pixels.truncate(info.buffer_size());
        (
            info.width,
            info.height,
            info.color_type,
            info.bit_depth,
            pixels,
        )
    }

    /// The PNG holds the pixels cairo's own writer gives: opaque ones,
    /// translucent ones (their colours divided by alpha as cairo
    /// rounds) and transparent ones; without alpha when every pixel is
    /// opaque (an export's background is).
    #[test]
    fn png_pixels_are_those_cairo_writes() {
        let mut opaque = cairo::ImageSurface::create(cairo::Format::ARgb32, 23, 19).unwrap();
        {
            let cr = cairo::Context::new(&opaque).unwrap();
            cr.set_source_rgb(1.0, 1.0, 1.0);
            cr.paint().unwrap();
            cr.set_source_rgba(0.1, 0.55, 0.8, 0.37);
            cr.arc(11.0, 9.0, 7.3, 0.0, std::f64::consts::TAU);
            cr.fill().unwrap();
        }
        opaque.flush();
        let ours = decoded(&encode_png(&mut opaque).unwrap());
        let mut cairos = Vec::new();
        opaque.write_to_png(&mut cairos).unwrap();
        let cairos = decoded(&cairos);
        assert_eq!(cairos.2, png::ColorType::Rgb);
        assert!(
            ours == cairos,
            "the opaque image's pixels differ from cairo's"
        );

        let mut surface = cairo::ImageSurface::create(cairo::Format::ARgb32, 61, 37).unwrap();
        {
            let cr = cairo::Context::new(&surface).unwrap();
            cr.set_source_rgba(0.9, 0.2, 0.1, 1.0);
            cr.rectangle(0.0, 0.0, 30.5, 37.0);
            cr.fill().unwrap();
            cr.set_source_rgba(0.1, 0.55, 0.8, 0.37);
            cr.arc(40.0, 18.0, 15.3, 0.0, std::f64::consts::TAU);
            cr.fill().unwrap();
        }
        surface.flush();
        let ours = encode_png(&mut surface).unwrap();
        let mut cairos = Vec::new();
        surface.write_to_png(&mut cairos).unwrap();
        let (ours, cairos) = (decoded(&ours), decoded(&cairos));
        let alphas: std::collections::BTreeSet<u8> =
            cairos.4.chunks_exact(4).map(|p| p[3]).collect();
        assert!(alphas.len() > 10, "{} alpha values drawn", alphas.len());
        assert!(ours == cairos, "the pixels differ from cairo's");
    }
}
