//! GUI-free viewer models and render objects.
//!
//! Following the Trace Compass control-flow model proposal, every view is
//! split into a model that talks to the engine through events requests and
//! produces immutable *renders* for a time range and pixel width, and views
//! that only draw them. This crate holds the GUI-free half:
//!
//! - [`render`]: render objects (tree, state intervals, drawn events, arrow
//!   series, counters; histogram; statistics table);
//! - [`lod`]: level-of-detail builders, so a render at width W holds
//!   O(rows × W) items whatever the trace size;
//! - [`style`]: presentation configuration (LTTV's control-flow colours)
//!   and data configuration;
//! - [`draw`]: drawing on any cairo context, or straight to SVG with text
//!   kept as `<text>`; hit-testing for tooltips and clicks;
//! - [`export`]: PNG and SVG files, without a display;
//! - [`model`]: the viewer models, producing renders from events requests;
//! - [`store`]: the whole-trace analysis kept on disk (the analysis store).

pub mod draw;
pub mod export;
pub mod lod;
pub mod model;
pub mod render;
pub mod store;
pub mod style;
pub mod time;
mod varint;

pub use render::{
    ArrangedStatistics, Arrow, ArrowEnd, ArrowSeries, Counter, CounterSample, DrawnEvent,
    HistogramBuilder, HistogramRender, ItemDetails, Properties, PropertiesWriter, RowId, StatRow,
    StatValue, StateInterval, StatisticsBuilder, StatisticsRender, StatisticsTable, StatisticsTree,
    StyleKey, TimeGraphRender, TimeGraphRenderBuilder, TreeBuilder, TreeNode, TreeRender, TreeRow,
};
pub use style::{DataConfig, PresentationConfig, Rgba};
