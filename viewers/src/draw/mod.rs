//! Drawing of renders, written once against the [`Canvas`] primitives and
//! run on cairo (GUI, PNG, cairo's SVG surface) or on the direct SVG writer
//! (text kept as `<text>`).
//!
//! Each figure has a `draw_*` function taking a `cairo::Context` (what the
//! GTK GUI calls from its draw callback) and a `paint_*` function taking any
//! [`Canvas`]; both return the layout used, which hit testing reuses.

pub mod axis;
pub mod canvas;
pub mod histogram;
pub mod hit;
pub mod statistics;
pub mod svg_canvas;
pub mod timegraph;

pub use canvas::{
    Anchor, CairoCanvas, CairoMeasure, Canvas, Font, Rect, Stroke, TextMeasure, FONT_FAMILY,
};
pub use histogram::{draw_histogram, paint_histogram, HistogramLayout, HistogramOptions};
pub use hit::{tooltip, Hit, HitItem, HitPart};
pub use statistics::{draw_statistics, paint_statistics, StatisticsLayout, StatisticsOptions};
pub use svg_canvas::SvgCanvas;
pub use timegraph::{
    draw_time_graph, paint_time_graph, LegendItem, LegendKind, TimeGraphLayout, TimeGraphOptions,
};
