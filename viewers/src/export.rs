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

/// Why cairo could not encode a figure's PNG or SVG stream.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// Writing the PNG stream failed (in cairo or in the writer).
    #[error("PNG: {0}")]
    Png(#[source] cairo::IoError),
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
    let surface = cairo::ImageSurface::create(cairo::Format::ARgb32, w as i32, h as i32)?;
    {
        let cr = cairo::Context::new(&surface)?;
        draw_figure(&cr, figure, w as f64, h as f64)?;
    }
    surface.flush();
    let mut out = Vec::new();
    surface.write_to_png(&mut out).map_err(EncodeError::Png)?;
    Ok(out)
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
