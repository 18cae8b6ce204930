//! Viewer models: they talk to the engine only through events requests,
//! collect what their view needs in request hooks, and produce immutable
//! render objects ([`crate::render`]) for a time range and a pixel width.
//!
//! - [`session`]: a scheduler over a CTF traceset (with the kernel state
//!   computation) shared by every model, and the bookkeeping of completed
//!   requests;
//! - [`damage`]: the damaged streams an analysis met, kept with it;
//! - [`kernel`]: the full-range pass (LOW priority) that records, compactly,
//!   every thread's status/mode transitions, every CPU's and interrupt
//!   line's activity, wake-ups and CPU hand-offs, and the whole-trace
//!   statistics; the control flow, resources and statistics models render
//!   from it;
//! - [`parallel_pass`]: the kernel pass in parts split at checkpoints,
//!   on threads of their own, joined exactly;
//! - [`controlflow`]: threads grouped under their process;
//! - [`resources`]: one row per CPU, IRQ line and softirq vector;
//! - [`stats`]: the statistics (whole trace, or a range at HIGH
//!   priority); [`stats_tree`] their tree, whose rows a view reads as it
//!   expands them;
//! - [`histogram`]: events per pixel bin, lost events marked;
//! - [`eventlist`]: LTTV's time-scrolled detailed event list;
//! - [`paje_session`]: a scheduler over a Pajé trace (the simulation as
//!   state) shared by the Pajé models;
//! - [`paje_analysis`]: the whole-trace Pajé pass (LOW priority) and its
//!   snapshots, [`PajeData`]; [`paje_render`] draws them as ViTE's view
//!   (containers, nested states, events, links, variables),
//!   [`paje_stats`] gives ViTE's statistics, [`paje_list`] is the Pajé
//!   event list;
//! - [`series`]: chunked, shareable plain sequences (cheap partial snapshots);
//! - [`column`]: packed change lists, marks and arrows (blocks of
//!   [`pack`]ed items), the same in memory and in a mapped store;
//! - [`spill`]: the file the kernel pass moves finished chunks to (its
//!   heap stays bounded);
//! - [`steps`]: rendering change lists at a pixel scale;
//! - [`window_preview`]: a window the pass and the checkpoints have not
//!   reached, read with no state (rows from their first telling event).

pub mod checkpoint_pass;
mod class_slots;
pub mod column;
pub mod controlflow;
mod cores;
pub mod cpu_row;
pub mod damage;
pub mod eventlist;
pub mod fields;
mod gallop;

pub mod histogram;
pub mod kernel;
pub mod pack;
pub mod paje_analysis;
pub mod paje_list;
pub mod paje_render;
pub mod paje_session;
pub mod paje_stats;
pub mod parallel_pass;

pub mod resources;
pub mod series;
pub mod session;
pub mod spill;
pub mod stats;
pub mod stats_tree;
pub mod steps;
pub mod window_preview;

pub use controlflow::ControlFlowModel;
pub use eventlist::{EventListModel, EventRow, ListMove};

pub use histogram::HistogramModel;
pub use kernel::{KernelAnalysis, KernelData};
pub use paje_analysis::{PajeAnalysis, PajeCollector, PajeData, PartialSnapshot};
pub use paje_list::{PajeListModel, PajeRow};
pub use paje_render::PajeView;
pub use paje_session::PajeSession;
pub use paje_stats::PajeStatistics;

pub use resources::ResourcesModel;
pub use session::{KernelRequest, KernelScheduler, Payload, Session, SessionOf, SessionSource};
pub use stats::{Statistics, StatsCollector};
pub use stats_tree::CellTree;
pub use window_preview::WindowPreview;
