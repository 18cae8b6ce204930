//! What the viewer benchmarks render: shared by the in-memory (`viewers`)
//! and the store (`store`) measurements.

use traceloom_base::Time;

/// Render width, in pixels.
pub const WIDTH: u32 = 1920;
/// The zoomed window, in ns.
pub const ZOOM_SPAN: Time = 1_000_000;
/// Zoomed windows rendered per run.
pub const ZOOMS_PER_RUN: usize = 50;
