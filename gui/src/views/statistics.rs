//! The statistics view: the statistics tree drawn as a table (the viewers'
//! cairo function) with a scrollbar, with a caption saying which range it
//! covers (whole trace, or the selection).
//!
//! The table is a tree: a click on a row with children (▾/▸) collapses
//! or expands it, a click on a value column's title sorts the siblings by
//! it (largest first, again: smallest first, again: the model's order).
//! Rows toggled are remembered by path, so they stay as the user left them
//! while the statistics grow. The kernel statistics open on the summary
//! by event name, the traces and their CPUs; only the rows expanded are
//! read from the tree (an 8 GB trace's has 1.8 M rows).
//!
//! Only the visible rows are drawn (the options' `scroll_y`): a table of
//! thousands of rows in a plain scrolled drawing area would make GTK
//! allocate a texture as tall as the whole table. They are painted on a
//! painting thread ([`super::painter`]).
//!
//! The viewer is a relm4 component without output (nothing in it
//! navigates); its model, [`StatisticsView`], is a handle the tab keeps to
//! hand it renders.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};
use traceloom_viewers::draw::{draw_statistics, CairoMeasure, StatisticsLayout, StatisticsOptions};
use traceloom_viewers::render::{ArrangedStatistics, Expander, StatisticsArrangement};
use traceloom_viewers::{PresentationConfig, StatisticsTable, StatisticsTree};

use super::painter::Painter;

/// What a picture of the table shows: the tree, as arranged, at a
/// size. The arrangement is compared by its version (bumped on each
/// change), so that a draw compares no strings.
#[derive(Clone)]
struct Picture {
    render: Arc<dyn StatisticsTree>,
    version: u64,
    opts: StatisticsOptions,
    size: (i32, i32, i32),
}

impl PartialEq for Picture {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.render, &other.render)
            && self.version == other.version
            && self.opts == other.opts
            && self.size == other.size
    }
}

/// A tree as arranged (collapsed, sorted): made on the painting thread
/// (it reads every expanded row), kept for the next paintings and for
/// clicks.
#[derive(Clone)]
struct Arranged {
    version: u64,
    shown: Arc<ArrangedStatistics>,
}

impl Arranged {
    fn new(
        render: &Arc<dyn StatisticsTree>,
        arrangement: &StatisticsArrangement,
        version: u64,
    ) -> Self {
        Arranged {
            version,
            shown: Arc::new(ArrangedStatistics::new(render.clone(), arrangement)),
        }
    }

    /// Whether this is `render` arranged as at `version`.
    fn is_of(&self, render: &Arc<dyn StatisticsTree>, version: u64) -> bool {
        Arc::ptr_eq(self.shown.tree(), render) && self.version == version
    }
}

/// The picture of `render` that `s` asks for at `size`, and how to
/// arrange and paint it (on a painting thread).
#[allow(clippy::type_complexity)]
fn picture_job(
    s: &State,
    render: Arc<dyn StatisticsTree>,
    size: (i32, i32, i32),
) -> (
    Picture,
    impl FnOnce(&cairo::Context, f64, f64) -> Result<Painted, String> + Send + 'static,
) {
    let want = Picture {
        render: render.clone(),
        version: s.version,
        opts: s.opts.clone(),
        size,
    };
    let (config, opts, version) = (s.config.clone(), s.opts.clone(), s.version);
    let arrangement = s.arrangement.clone();
    // A scroll paints the table again as last arranged.
    let last = s.arranged.clone().filter(|a| a.is_of(&render, version));
    let paint = move |cr: &cairo::Context, w: f64, h: f64| {
        let arranged = last.unwrap_or_else(|| Arranged::new(&render, &arrangement, version));
        draw_statistics(cr, &*arranged.shown, &config, &opts, w, h).map_err(|e| e.to_string())?;
        let height = StatisticsLayout::natural_height(&*arranged.shown, &opts);
        Ok(Painted {
            arranged,
            height,
            page: h,
        })
    };
    (want, paint)
}

/// Sizes the table's scrollbar for a painted picture (only when something
/// changed: a change redraws).
fn size_scrollbar(adj: &gtk::Adjustment, painted: &Painted) {
    let (total, h) = (painted.height, painted.page);
    let value = adj.value().min((total - h).max(0.0));
    if adj.upper() != total || adj.page_size() != h || adj.value() != value {
        adj.configure(value, 0.0, total, 20.0, h * 0.9, h);
    }
}

/// What a painting returns: the arrangement painted and its natural
/// height (which sizes the scrollbar).
#[derive(Clone)]
struct Painted {
    arranged: Arranged,
    height: f64,
    /// Height of the picture (the scrollbar's page).
    page: f64,
}

struct State {
    render: Option<Arc<dyn StatisticsTree>>,
    config: PresentationConfig,
    opts: StatisticsOptions,
    arrangement: StatisticsArrangement,
    /// Bumped whenever `arrangement` changes.
    version: u64,
    /// The last arrangement made (painted, or asked by a click).
    arranged: Option<Arranged>,
    /// Size of the last drawing (width, height, scale factor).
    size: Option<(i32, i32, i32)>,
}

impl State {
    /// The current render as arranged now (made here if the last painting
    /// did not).
    fn arranged(&mut self) -> Option<Arranged> {
        let render = self.render.as_ref()?;
        let current = self
            .arranged
            .as_ref()
            .filter(|a| a.is_of(render, self.version));
        if current.is_none() {
            self.arranged = Some(Arranged::new(render, &self.arrangement, self.version));
        }
        self.arranged.clone()
    }

    fn rearranged(&mut self) {
        self.version += 1;
    }
}

/// Opacity of a table waiting for the statistics asked (GNOME's dimmed
/// look for content that is out of date).
const PENDING_OPACITY: f64 = 0.45;

/// The statistics widget.
#[derive(Clone)]
pub struct StatisticsView {
    /// The widget to pack (caption above the scrolled table).
    pub widget: gtk::Box,
    caption: gtk::Label,
    area: gtk::DrawingArea,
    state: Rc<RefCell<State>>,
    painter: Painter<Picture, Painted>,
}

impl SimpleComponent for StatisticsView {
    /// What it draws with.
    type Init = PresentationConfig;
    /// Driven through its handle: the tab hands it renders.
    type Input = ();
    /// Its clicks sort and fold the table, nothing for the tab.
    type Output = ();
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        gtk::Box::new(gtk::Orientation::Vertical, 2)
    }

    fn init(
        config: PresentationConfig,
        root: gtk::Box,
        _sender: ComponentSender<Self>,
    ) -> ComponentParts<Self> {
        let model = StatisticsView::new(root, config);
        ComponentParts { model, widgets: () }
    }
}

impl std::fmt::Debug for StatisticsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatisticsView").finish_non_exhaustive()
    }
}

impl StatisticsView {
    /// An empty statistics view in `widget`.
    fn new(widget: gtk::Box, config: PresentationConfig) -> Self {
        let caption = gtk::Label::new(Some("Statistics: reading the trace…"));
        caption.set_xalign(0.0);
        caption.set_ellipsize(gtk::pango::EllipsizeMode::End);
        caption.set_margin_start(6);
        let area = gtk::DrawingArea::new();
        area.set_hexpand(true);
        area.set_vexpand(true);
        let adjustment = gtk::Adjustment::new(0.0, 0.0, 0.0, 20.0, 200.0, 0.0);
        let scrollbar = gtk::Scrollbar::new(gtk::Orientation::Vertical, Some(&adjustment));
        let row = gtk::Box::new(gtk::Orientation::Horizontal, 0);
        row.set_vexpand(true);
        row.append(&area);
        row.append(&scrollbar);
        widget.append(&caption);
        widget.append(&row);
        let state = Rc::new(RefCell::new(State {
            render: None,
            config,
            opts: StatisticsOptions::default(),
            arrangement: StatisticsArrangement::default(),
            version: 0,
            arranged: None,
            size: None,
        }));
        let painter = Painter::<Picture, Painted>::new(&area);
        // A landing picture sizes the scrollbar in the frame that shows it.
        let a = adjustment.clone();
        painter.on_land(move |painted| size_scrollbar(&a, painted));
        let (s, adj, p) = (state.clone(), adjustment.clone(), painter.clone());
        area.set_draw_func(move |area, cr, w, h| {
            crate::stalls::time("draw:statistics", || {
                let mut s = s.borrow_mut();
                cr.set_source_rgb(1.0, 1.0, 1.0);
                cr.paint().ok();
                let Some(render) = s.render.clone() else {
                    return;
                };
                s.opts.scroll_y = adj.value();
                // The table is arranged and painted off the main thread (a
                // large trace's has thousands of rows); the last picture is
                // shown meanwhile, and its natural height sizes the
                // scrollbar.
                let size = (w, h, area.scale_factor());
                s.size = Some(size);
                let (want, paint) = picture_job(&s, render, size);
                let shown = p.draw(cr, &want, size, paint);
                if let Some((_, painted)) = shown {
                    size_scrollbar(&adj, &painted);
                    let fresh = s
                        .arranged
                        .as_ref()
                        .is_none_or(|a| !Arc::ptr_eq(&a.shown, &painted.arranged.shown));
                    if fresh {
                        if let Some(old) = s.arranged.replace(painted.arranged) {
                            super::drop_later(old);
                        }
                    }
                }
            })
        });
        let a = area.clone();
        adjustment.connect_value_changed(move |_| a.queue_draw());
        let scroll = gtk::EventControllerScroll::new(gtk::EventControllerScrollFlags::VERTICAL);
        let adj = adjustment.clone();
        scroll.connect_scroll(move |_, _, dy| {
            let max = (adj.upper() - adj.page_size()).max(0.0);
            adj.set_value((adj.value() + dy * 40.0).clamp(0.0, max));
            glib::Propagation::Stop
        });
        area.add_controller(scroll);
        let view = StatisticsView {
            widget,
            caption,
            area,
            state,
            painter,
        };
        let click = gtk::GestureClick::new();
        let v = view.clone();
        click.connect_released(move |_, _, x, y| v.click(x, y));
        view.area.add_controller(click);
        view
    }

    /// What a click at `(x, y)` of the table does: on a row with children,
    /// collapses or expands it; on a value column's title, sorts by it.
    pub fn click(&self, x: f64, y: f64) {
        let mut s = self.state.borrow_mut();
        let Some(Arranged { shown, .. }) = s.arranged() else {
            return;
        };
        let Ok(m) = CairoMeasure::new() else {
            return;
        };
        let l = StatisticsLayout::compute(&*shown, &s.opts, self.area.width() as f64, &m);
        let rh = l.row_height;
        if y < rh {
            let col = l.column_right.iter().position(|&right| x < right);
            if let Some(col) = col.filter(|_| x >= l.name_width) {
                s.arrangement.sort = match s.arrangement.sort {
                    Some((c, true)) if c == col => Some((col, false)),
                    Some((c, false)) if c == col => None,
                    _ => Some((col, true)),
                };
            } else {
                return;
            }
        } else {
            let i = ((y - rh + s.opts.scroll_y) / rh).floor() as usize;
            if i >= shown.row_count() || shown.row(i).expander == Expander::Leaf {
                return;
            }
            shown.toggle(i, &mut s.arrangement);
        }
        s.rearranged();
        drop(s);
        self.area.queue_draw();
    }

    /// The table as shown (collapsed rows, sort).
    pub fn shown(&self) -> Option<Arc<ArrangedStatistics>> {
        self.state.borrow_mut().arranged().map(|a| a.shown)
    }

    /// Collapses or expands the row at `path` (labels from the root joined
    /// by `/`), as a click on it does (nothing if no row shown has that
    /// path).
    pub fn toggle_row(&self, path: &str) {
        let mut s = self.state.borrow_mut();
        let Some(Arranged { shown, .. }) = s.arranged() else {
            return;
        };
        let Some(i) = (0..shown.row_count()).find(|&i| shown.path(i) == path) else {
            return;
        };
        shown.toggle(i, &mut s.arrangement);
        s.rearranged();
        drop(s);
        self.area.queue_draw();
    }

    /// Shows `render`, described by `caption` (e.g. which range it covers).
    pub fn set_render(&self, render: Arc<dyn StatisticsTree>, caption: &str) {
        let mut s = self.state.borrow_mut();
        let old = s.render.replace(render.clone());
        // Arranged and painted at once at the last size, shown when it
        // lands: no frame until then (see the time graphs' `set_render`).
        let started = match s.size {
            Some(size) => {
                let (want, paint) = picture_job(&s, render, size);
                self.painter.prepare(&want, size, paint)
            }
            None => false,
        };
        drop(s);
        super::drop_later(old);
        // A new text lays the window out again: only when it changed.
        if self.caption.text() != caption {
            self.caption.set_text(caption);
        }
        self.area.set_opacity(1.0);
        if !started {
            self.area.queue_draw();
        }
    }

    /// Says that other statistics are being computed (`caption` says
    /// which): the table shown, no longer what the user asked for, is
    /// dimmed until [`set_render`](Self::set_render) gives the new one.
    /// A selection's statistics on a large trace take seconds to read.
    pub fn set_pending(&self, caption: &str) {
        self.caption.set_text(caption);
        self.area.set_opacity(PENDING_OPACITY);
    }

    /// Whether the table is dimmed, waiting for the statistics asked
    /// ([`set_pending`](Self::set_pending)).
    pub fn is_pending(&self) -> bool {
        self.area.opacity() < 1.0
    }

    /// The tree given (its table may not be painted yet: see
    /// [`shows_render`](Self::shows_render)).
    pub fn render(&self) -> Option<Arc<dyn StatisticsTree>> {
        self.state.borrow().render.clone()
    }

    /// Whether the table last drawn is the current render's (arranged and
    /// painted off the main thread, which takes a while for a large
    /// trace's hundreds of thousands of rows).
    pub fn shows_render(&self) -> bool {
        let s = self.state.borrow();
        match (&s.render, &s.arranged) {
            (Some(r), Some(a)) => a.is_of(r, s.version),
            _ => false,
        }
    }

    /// The caption text.
    pub fn caption(&self) -> String {
        self.caption.text().to_string()
    }
}
