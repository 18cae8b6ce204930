//! A time-graph viewer (control flow, resources): a `gtk::DrawingArea`
//! showing a [`TimeGraphRender`] drawn with the viewers' cairo function on
//! a painting thread ([`super::painter`]), with hit-testing for clicks and
//! tooltips, and the bookmarks and the selection being dragged drawn over
//! it.
//!
//! Input, as in Trace Compass: click → current time (the event's time when
//! an event is under the pointer, the interval start for a state, else the
//! pointer's time); drag with the first button → selection; wheel → scroll
//! the rows (also the scrollbar beside them); Ctrl+wheel → zoom around the
//! pointer; Shift+wheel, horizontal scroll or a middle/right-button drag →
//! pan. In the tree column, a click on a row's triangle collapses or
//! expands it, elsewhere it selects the row (highlighted; what "follow"
//! follows).
//!
//! The viewer is a relm4 component whose output is navigation ([`Nav`]),
//! forwarded to its tab; its model, [`TimeGraphView`], is a handle the
//! tab keeps to hand it renders and the time focus (at once: the runner's
//! results are painted in the turn that brought them).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use traceloom_base::Time;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};
use traceloom_viewers::draw::{
    draw_time_graph, tooltip, HitItem, HitPart, TimeGraphLayout, TimeGraphOptions,
};
use traceloom_viewers::render::RowId;
use traceloom_viewers::{DataConfig, PresentationConfig, TimeGraphRender};

use super::painter::Painter;
use super::{draw_bookmarks, Nav, TimeFocus};
use crate::config::SavedGraph;

/// Pointer travel under which a press-release is a click, not a drag.
const CLICK_SLOP: f64 = 3.0;

struct State {
    render: Option<Arc<TimeGraphRender>>,
    config: PresentationConfig,
    opts: TimeGraphOptions,
    cursor: TimeFocus,
    layout: Option<TimeGraphLayout>,
    /// x of the pointer, for zooming around it.
    pointer_x: Option<f64>,
    /// Live drag: (start x, current x).
    drag: Option<(f64, f64)>,
    /// Message shown while there is nothing to draw.
    placeholder: String,
    /// Graph width last asked for through [`Nav::Resized`]: asked once,
    /// not at every redraw until the new render lands.
    asked_width: Option<u32>,
    /// Rows in view last asked for through [`Nav::Resized`] because the
    /// render did not hold them: asked once, likewise.
    asked_rows: Option<std::ops::Range<usize>>,
    /// The render of the picture shown (`layout` is its layout): what
    /// clicks and tooltips hit.
    shown: Option<Arc<TimeGraphRender>>,
    /// When a picture of `shown` was first drawn.
    shown_since: Option<std::time::Instant>,
    /// The rows configuration (filter, order, collapsed rows...) the
    /// models render this view with.
    rows: DataConfig,
    /// Whether the rows can be collapsed (the model renders `rows`).
    rows_configurable: bool,
    /// Size of the last drawing (width, height, scale factor): a new
    /// render is painted at it before any frame.
    size: Option<(i32, i32, i32)>,
    /// The layout to assume before the first: the last run's for this
    /// traceset ([`TimeGraphView::set_layout_hint`]).
    layout_hint: Option<SavedGraph>,
    /// The tree column's fitted width last told through [`Nav::Resized`]
    /// (the tab gives the graphs one tree width, the widest).
    told_fit: Option<f64>,
}

/// What a picture of the graph shows: the render, the drawing options and
/// the size (width, height, scale factor).
#[derive(Clone)]
struct Picture {
    render: Arc<TimeGraphRender>,
    opts: TimeGraphOptions,
    size: (i32, i32, i32),
}

impl PartialEq for Picture {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.render, &other.render)
            && self.opts == other.opts
            && self.size == other.size
    }
}

/// A time-graph viewer widget.
#[derive(Clone)]
pub struct TimeGraphView {
    /// The widget to pack: the drawing and its vertical scrollbar.
    pub widget: gtk::Box,
    /// The drawing.
    pub area: gtk::DrawingArea,
    /// The rows' vertical scrollbar.
    pub scrollbar: gtk::Scrollbar,
    /// The component's output: navigation, for the tab.
    nav: relm4::Sender<Nav>,
    state: Rc<RefCell<State>>,
    painter: Rc<RefCell<Option<Painter<Picture, TimeGraphLayout>>>>,
}

/// What a time-graph viewer is made with.
#[derive(Debug, Clone)]
pub struct TimeGraphInit {
    /// The tree column's heading.
    pub title: String,
    /// What it draws with.
    pub config: PresentationConfig,
}

impl SimpleComponent for TimeGraphView {
    type Init = TimeGraphInit;
    /// Driven through its handle (see the module documentation).
    type Input = ();
    type Output = Nav;
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        gtk::Box::new(gtk::Orientation::Horizontal, 0)
    }

    fn init(
        init: TimeGraphInit,
        root: gtk::Box,
        sender: ComponentSender<Self>,
    ) -> ComponentParts<Self> {
        let model = TimeGraphView::new(
            root,
            &init.title,
            init.config,
            sender.output_sender().clone(),
        );
        ComponentParts { model, widgets: () }
    }
}

impl std::fmt::Debug for TimeGraphView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeGraphView").finish_non_exhaustive()
    }
}

impl TimeGraphView {
    /// A view in `widget` titled `title` (the tree column's heading),
    /// drawing with `config`, sending navigation to `nav`.
    fn new(
        widget: gtk::Box,
        title: &str,
        config: PresentationConfig,
        nav: relm4::Sender<Nav>,
    ) -> Self {
        let area = gtk::DrawingArea::new();
        area.set_hexpand(true);
        area.set_vexpand(true);
        area.set_focusable(true);
        area.set_has_tooltip(true);
        let opts = TimeGraphOptions {
            title: Some(title.to_owned()),
            legend_one_line: true,
            ..TimeGraphOptions::default()
        };
        let state = Rc::new(RefCell::new(State {
            render: None,
            config,
            opts,
            cursor: TimeFocus::default(),
            layout: None,
            pointer_x: None,
            drag: None,
            placeholder: "Reading the trace…".into(),
            asked_width: None,
            asked_rows: None,
            shown: None,
            shown_since: None,
            rows: DataConfig::default(),
            rows_configurable: false,
            size: None,
            layout_hint: None,
            told_fit: None,
        }));
        let scrollbar = gtk::Scrollbar::new(gtk::Orientation::Vertical, None::<&gtk::Adjustment>);
        widget.append(&area);
        widget.append(&scrollbar);
        let view = TimeGraphView {
            widget,
            area,
            scrollbar,
            nav: nav.clone(),
            state,
            painter: Rc::default(),
        };
        view.connect_draw(nav.clone());
        view.connect_first_size(nav.clone());
        view.connect_input(nav);
        view.connect_scrollbar();
        view
    }

    /// Lets the user collapse rows; the tab renders the view with
    /// [`rows`](Self::rows) (the control flow).
    pub fn enable_rows_configuration(&self) {
        self.state.borrow_mut().rows_configurable = true;
    }

    /// The rows configuration the view is to be rendered with.
    pub fn rows(&self) -> DataConfig {
        self.state.borrow().rows.clone()
    }

    /// Changes the rows configuration and asks the tab for a render
    /// ([`Nav::Rows`]); the rows scroll back to the top when the filter
    /// changes (what was under the scroll may be gone).
    pub fn update_rows(&self, change: impl FnOnce(&mut DataConfig)) {
        let mut s = self.state.borrow_mut();
        let old = s.rows.clone();
        change(&mut s.rows);
        if s.rows == old {
            return;
        }
        if s.rows.row_filter != old.row_filter || s.rows.hide_idle != old.hide_idle {
            s.opts.scroll_y = 0.0;
        }
        drop(s);
        self.nav.emit(Nav::Rows);
    }

    /// Collapses every row that has children (or expands them all).
    pub fn collapse_all(&self, collapse: bool) {
        let parents: Vec<RowId> = self
            .render()
            .map(|r| {
                r.tree()
                    .rows()
                    .iter()
                    .filter(|row| row.has_children)
                    .map(|row| row.id)
                    .collect()
            })
            .unwrap_or_default();
        self.update_rows(|c| {
            if collapse {
                c.collapsed.extend(parents);
            } else {
                c.collapsed.clear();
            }
        });
    }

    /// The row selected in the tree column, and its properties (`tid`,
    /// `pid`, `name` for a thread), if it is shown.
    pub fn selected_row(&self) -> Option<(RowId, Vec<(String, String)>)> {
        let s = self.state.borrow();
        let id = s.opts.selected_row?;
        let render = s.render.as_ref()?;
        let row = render.tree().rows().get(render.tree().index_of(id)?)?;
        let props = row
            .properties
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Some((id, props))
    }

    /// Selects (highlights) row `id`, or none.
    pub fn select_row(&self, id: Option<RowId>) {
        self.state.borrow_mut().opts.selected_row = id;
        self.area.queue_draw();
    }

    /// Scrolls the rows to `y` pixels from the top (clamped).
    pub fn scroll_rows_to(&self, y: f64) {
        let mut s = self.state.borrow_mut();
        let max = s
            .layout
            .as_ref()
            .map(|l| (l.row_count() as f64 * l.row_height - l.graph.h).max(0.0))
            .unwrap_or(0.0);
        let y = y.clamp(0.0, max);
        if s.opts.scroll_y != y {
            s.opts.scroll_y = y;
            drop(s);
            self.area.queue_draw();
        }
    }

    /// The rows' vertical scroll, in pixels.
    pub fn rows_scroll(&self) -> f64 {
        self.state.borrow().opts.scroll_y
    }

    /// What the first button does when released at `(x0 + dx, y0 + dy)`
    /// after a press at `(x0, y0)`: a click (moving less than
    /// [`CLICK_SLOP`]) in the graph sets the current time, on a row's
    /// triangle collapses or expands it, elsewhere in the tree column
    /// selects the row; a drag selects a time range.
    pub fn release(&self, x0: f64, y0: f64, dx: f64, dy: f64) {
        let msg = {
            let mut s = self.state.borrow_mut();
            s.drag = None;
            let (Some(layout), Some(render)) = (s.layout.clone(), s.shown.clone()) else {
                return;
            };
            if dx.abs() < CLICK_SLOP && dy.abs() < CLICK_SLOP {
                let hit = layout.hit(&render, x0, y0);
                if hit.part == HitPart::Tree {
                    match layout.expander_at(&render, x0, y0) {
                        Some(id) if s.rows_configurable => {
                            if !s.rows.collapsed.remove(&id) {
                                s.rows.collapsed.insert(id);
                            }
                            Some(Nav::Rows)
                        }
                        _ => {
                            s.opts.selected_row = hit.row_id;
                            None
                        }
                    }
                } else {
                    click_time(&layout, &render, x0, y0).map(Nav::Current)
                }
            } else {
                let (a, b) = (layout.xmap.time(x0), layout.xmap.time(x0 + dx));
                (a != b).then(|| Nav::Select(TimeRange::new(a.min(b), a.max(b))))
            }
        };
        self.area.queue_draw();
        if let Some(m) = msg {
            self.nav.emit(m);
        }
    }

    /// The scrollbar moves the rows; the drawing keeps the scrollbar's
    /// range and position in step with the rows (see `connect_draw`).
    fn connect_scrollbar(&self) {
        let view = self.clone();
        self.scrollbar
            .adjustment()
            .connect_value_changed(move |adj| view.scroll_rows_to(adj.value()));
    }

    /// Shows `render` (a new model output).
    pub fn set_render(&self, render: Arc<TimeGraphRender>) {
        let old = self.state.borrow_mut().render.replace(render.clone());
        super::drop_later(old);
        // Painted at once at the last size, and shown when it lands: no
        // frame until then (with a software GL renderer each frame of a
        // large window costs tens of ms of the main thread). Before the
        // first drawing, or while another picture is painted, the next
        // frame asks for it.
        let started = {
            let s = self.state.borrow();
            let painter = self.painter.borrow();
            match (s.size, painter.as_ref()) {
                (Some(size), Some(p)) => {
                    let (want, paint) = picture_job(&s, render, size);
                    p.prepare(&want, size, paint)
                }
                _ => false,
            }
        };
        if !started {
            self.area.queue_draw();
        }
    }

    /// Draws with `config` from now on (a Pajé trace's colours).
    pub fn set_config(&self, config: PresentationConfig) {
        self.state.borrow_mut().config = config;
        self.area.queue_draw();
    }

    /// Heads the tree column with `title`.
    pub fn set_title(&self, title: &str) {
        self.state.borrow_mut().opts.title = Some(title.to_owned());
        self.area.queue_draw();
    }

    /// The render shown, if any.
    pub fn render(&self) -> Option<Arc<TimeGraphRender>> {
        self.state.borrow().render.clone()
    }

    /// The render whose picture the last frame drew, and when a frame
    /// first drew it: what the user sees (the render set last may still
    /// be painted).
    pub fn shown(&self) -> Option<(Arc<TimeGraphRender>, std::time::Instant)> {
        let s = self.state.borrow();
        s.shown.clone().zip(s.shown_since)
    }

    /// Shows `text` instead of a graph (no trace, or an error).
    pub fn set_placeholder(&self, text: &str) {
        let mut s = self.state.borrow_mut();
        s.placeholder = text.to_owned();
        s.render = None;
        drop(s);
        self.area.queue_draw();
    }

    /// Updates window, current time, selection and bookmarks.
    pub fn set_time_focus(&self, cursor: &TimeFocus) {
        let mut s = self.state.borrow_mut();
        if s.cursor == *cursor {
            return;
        }
        s.opts.view_range = cursor.window;
        s.opts.current_time = cursor.current;
        s.opts.selection = cursor.selection;
        s.cursor = cursor.clone();
        drop(s);
        self.area.queue_draw();
    }

    /// The presentation configuration it draws with.
    pub fn config(&self) -> PresentationConfig {
        self.state.borrow().config.clone()
    }

    /// The drawing options in force (current time, selection...).
    pub fn options(&self) -> TimeGraphOptions {
        self.state.borrow().opts.clone()
    }

    /// Width in pixels of the graph part (what a model render should be
    /// made for), from the last layout; before the first, from the layout
    /// the last run had: its width until the widget has one, and its
    /// tree column (a reopened trace's first render is then made for the
    /// width it is shown at, not made again once laid out: on an 8 GB
    /// trace, each render of the whole range takes 30–70 ms).
    pub fn graph_width(&self) -> u32 {
        let s = self.state.borrow();
        if let Some(l) = &s.layout {
            return l.graph.w.max(1.0) as u32;
        }
        let (width, tree) = match (self.area.width(), s.layout_hint) {
            (w, hint) if w > 0 => {
                let w = f64::from(w);
                (w, hint.map_or(w * 0.25, |h| h.tree_column))
            }
            (_, Some(h)) => (h.width, h.tree_column),
            (_, None) => (400.0, 100.0),
        };
        // As the layout places the graph: after the tree column and a
        // pixel, up to a pixel from the edge.
        (width - tree - 2.0).max(1.0) as u32
    }

    /// Width the tree column's labels ask for, from the last layout.
    pub fn fitted_tree_width(&self) -> Option<f64> {
        self.state.borrow().layout.as_ref().map(|l| l.fitted_tree_w)
    }

    /// Gives the tree column width `w` (`None`: what its labels ask
    /// for), redrawing when it changes; a graph of another width then
    /// asks for a render that fits ([`Nav::Resized`]).
    pub fn set_tree_width(&self, w: Option<f64>) {
        let mut s = self.state.borrow_mut();
        if s.opts.tree_width == w {
            return;
        }
        s.opts.tree_width = w;
        drop(s);
        self.area.queue_draw();
    }

    /// The last layout, to remember for
    /// [`TimeGraphView::set_layout_hint`].
    pub fn saved_layout(&self) -> Option<SavedGraph> {
        let s = self.state.borrow();
        s.layout.as_ref().map(|l| SavedGraph {
            width: l.width,
            tree_column: l.tree.w,
        })
    }

    /// The layout to assume before the first (see
    /// [`TimeGraphView::graph_width`]).
    pub fn set_layout_hint(&self, saved: SavedGraph) {
        let sane = |x: f64| x.is_finite() && (0.0..=1e6).contains(&x);
        if sane(saved.width) && sane(saved.tree_column) {
            let mut s = self.state.borrow_mut();
            s.layout_hint = Some(saved);
            // The tree column the tab lined the graphs up with last time:
            // the first layout is the one the first render was made for.
            s.opts.tree_width = Some(saved.tree_column);
        }
    }

    /// Asks for a render at the widget's width once it has one, if no
    /// layout came before: the renders asked before were made for a
    /// guessed width.
    fn connect_first_size(&self, nav: relm4::Sender<Nav>) {
        let state = self.state.clone();
        self.area.connect_resize(move |_, _, _| {
            if state.borrow().layout.is_none() {
                let nav = nav.clone();
                glib::idle_add_local_once(move || nav.emit(Nav::Resized));
            }
        });
    }

    /// Rows (display indices) in view at the current scroll, from the
    /// last layout; before the first drawing, as many as the widget's
    /// height could show.
    pub fn shown_rows(&self) -> std::ops::Range<usize> {
        let s = self.state.borrow();
        match &s.layout {
            Some(l) => rows_in_view_at(l, s.opts.scroll_y),
            None => {
                let first = (s.opts.scroll_y / s.opts.row_height).max(0.0) as usize;
                let h = self.area.height().max(1000) as f64;
                first..first + (h / s.opts.row_height).ceil() as usize
            }
        }
    }

    /// Time under widget x coordinate `x`, from the last drawing.
    pub fn time_at(&self, x: f64) -> Option<Time> {
        self.state.borrow().layout.as_ref().map(|l| l.xmap.time(x))
    }

    /// Whether a picture of the graph is being painted (off the main
    /// thread).
    pub fn painting(&self) -> bool {
        self.painter.borrow().as_ref().is_some_and(|p| p.busy())
    }

    /// The last layout drawn (for tests and hit-testing by callers).
    pub fn layout(&self) -> Option<TimeGraphLayout> {
        self.state.borrow().layout.clone()
    }

    fn connect_draw(&self, nav: relm4::Sender<Nav>) {
        let state = self.state.clone();
        // Stall accounting names the view by its tree column's heading.
        let source = if self.state.borrow().opts.title.as_deref() == Some("Process") {
            "draw:control-flow"
        } else {
            "draw:resources"
        };
        let painter = Painter::<Picture, TimeGraphLayout>::new(&self.area);
        let (st, bar) = (self.state.clone(), self.scrollbar.clone());
        painter.on_land(move |layout| {
            let scroll = st.borrow().opts.scroll_y;
            size_scrollbar(&bar, layout, scroll);
        });
        self.painter.replace(Some(painter.clone()));
        let scrollbar = self.scrollbar.clone();
        self.area.set_draw_func(move |area, cr, w, h| {
            crate::stalls::time(source, || {
                let mut s = state.borrow_mut();
                cr.set_source_rgb(1.0, 1.0, 1.0);
                cr.paint().ok();
                let Some(render) = s.render.clone() else {
                    cr.set_source_rgb(0.4, 0.4, 0.4);
                    cr.set_font_size(14.0);
                    cr.move_to(20.0, 30.0);
                    cr.show_text(&s.placeholder).ok();
                    s.layout = None;
                    s.shown = None;
                    return;
                };
                // The graph itself is painted off the main thread; the
                // last picture is shown meanwhile.
                let size = (w, h, area.scale_factor());
                s.size = Some(size);
                let (want, paint) = picture_job(&s, render, size);
                let shown = painter.draw(cr, &want, size, paint);
                let Some((picture, layout)) = shown else {
                    s.layout = None;
                    s.shown = None;
                    return;
                };
                let g = layout.graph;
                draw_bookmarks(
                    cr,
                    &s.cursor,
                    |t| layout.xmap.x(t),
                    (g.x, g.right()),
                    (g.y, g.bottom()),
                );
                if let Some((a, b)) = s.drag {
                    let (x0, x1) = (a.min(b).max(g.x), a.max(b).min(g.right()));
                    cr.set_source_rgba(0.2, 0.4, 0.9, 0.25);
                    cr.rectangle(x0, g.y, (x1 - x0).max(1.0), g.h);
                    cr.fill().ok();
                }
                // The render was made for another width (first draw,
                // resize): ask for one that fits, after drawing.
                let want = g.w.max(1.0) as u32;
                let latest = s.render.as_ref().map_or(want, |r| r.scale().width);
                if latest.abs_diff(want) > 1 && s.asked_width.is_none_or(|a| a.abs_diff(want) > 1) {
                    s.asked_width = Some(want);
                    let nav = nav.clone();
                    glib::idle_add_local_once(move || nav.emit(Nav::Resized));
                }
                // The labels ask for another tree column: the tab aligns
                // the graphs' time axes again.
                if s.told_fit != Some(layout.fitted_tree_w) {
                    s.told_fit = Some(layout.fitted_tree_w);
                    let nav = nav.clone();
                    glib::idle_add_local_once(move || nav.emit(Nav::Resized));
                }
                // The latest render does not hold the rows scrolled into
                // view (a render holds those a view showed, and a page
                // either side): ask for them.
                let in_view = rows_in_view_at(&layout, s.opts.scroll_y);
                if let Some((held, n)) = s
                    .render
                    .as_ref()
                    .map(|r| (r.materialized(), r.tree().len()))
                {
                    // Tree rows only: counters are drawn whole.
                    let wanted = in_view.start.min(n)..in_view.end.min(n);
                    let missing =
                        !wanted.is_empty() && (wanted.start < held.start || wanted.end > held.end);
                    if missing && s.asked_rows.as_ref() != Some(&in_view) {
                        s.asked_rows = Some(in_view);
                        let nav = nav.clone();
                        glib::idle_add_local_once(move || nav.emit(Nav::Resized));
                    }
                }
                // The scrollbar follows the rows (after the drawing: its
                // signal redraws, which must not borrow the state). A
                // landing picture sized it already (`on_land`), in the
                // frame that shows it; this catches the other changes.
                let scroll = s.opts.scroll_y;
                let bar = scrollbar.clone();
                let l = layout.clone();
                s.layout = Some(layout);
                if s.shown
                    .as_ref()
                    .is_none_or(|r| !Arc::ptr_eq(r, &picture.render))
                {
                    s.shown_since = Some(std::time::Instant::now());
                }
                let old = s.shown.replace(picture.render);
                super::drop_later(old);
                drop(s);
                glib::idle_add_local_once(move || size_scrollbar(&bar, &l, scroll));
            })
        });
    }

    fn connect_input(&self, nav: relm4::Sender<Nav>) {
        let motion = gtk::EventControllerMotion::new();
        let state = self.state.clone();
        motion.connect_motion(move |_, x, _| state.borrow_mut().pointer_x = Some(x));
        self.area.add_controller(motion);

        // First button: click (current time) or drag (selection).
        let drag = gtk::GestureDrag::new();
        drag.set_button(1);
        let (state, area) = (self.state.clone(), self.area.clone());
        drag.connect_drag_begin(move |_, x, _| {
            area.grab_focus();
            state.borrow_mut().drag = Some((x, x));
        });
        let (state, area) = (self.state.clone(), self.area.clone());
        drag.connect_drag_update(move |g, dx, _| {
            if let Some((x0, _)) = g.start_point() {
                if dx.abs() >= CLICK_SLOP {
                    state.borrow_mut().drag = Some((x0, x0 + dx));
                    area.queue_draw();
                }
            }
        });
        let view = self.clone();
        drag.connect_drag_end(move |g, dx, dy| {
            if let Some((x0, y0)) = g.start_point() {
                view.release(x0, y0, dx, dy);
            }
        });
        self.area.add_controller(drag);

        // Middle or right button drag: pan.
        let pan = gtk::GestureDrag::new();
        pan.set_button(0);
        let state = self.state.clone();
        let last_dx = Rc::new(std::cell::Cell::new(0.0));
        let ld = last_dx.clone();
        pan.connect_drag_begin(move |_, _, _| ld.set(0.0));
        let nav2 = nav.clone();
        pan.connect_drag_update(move |g, dx, _| {
            if g.current_button() == 1 {
                return;
            }
            let w = state
                .borrow()
                .layout
                .as_ref()
                .map(|l| l.graph.w)
                .unwrap_or(0.0);
            if w > 0.0 {
                let step = dx - last_dx.get();
                last_dx.set(dx);
                nav2.emit(Nav::Pan(-step / w));
            }
        });
        self.area.add_controller(pan);

        let scroll = gtk::EventControllerScroll::new(gtk::EventControllerScrollFlags::BOTH_AXES);
        let (state, view) = (self.state.clone(), self.clone());
        scroll.connect_scroll(move |c, dx, dy| {
            let mods = c.current_event_state();
            let (anchor, ctrl) = {
                let s = state.borrow();
                let anchor = match (s.layout.as_ref(), s.pointer_x) {
                    (Some(l), Some(x)) if x >= l.graph.x => Some(l.xmap.time(x)),
                    _ => None,
                };
                (anchor, mods.contains(gtk::gdk::ModifierType::CONTROL_MASK))
            };
            if ctrl {
                if let Some(anchor) = anchor {
                    nav.emit(Nav::Zoom {
                        factor: if dy > 0.0 { 1.25 } else { 0.8 },
                        anchor,
                    });
                }
            } else if mods.contains(gtk::gdk::ModifierType::SHIFT_MASK) || dx != 0.0 {
                let amount = if dx != 0.0 { dx } else { dy };
                nav.emit(Nav::Pan(amount * 0.1));
            } else {
                // Three rows a notch, as list views scroll.
                let y = {
                    let s = state.borrow();
                    let row = s.layout.as_ref().map_or(20.0, |l| l.row_height);
                    s.opts.scroll_y + dy * 3.0 * row
                };
                view.scroll_rows_to(y);
            }
            glib::Propagation::Stop
        });
        self.area.add_controller(scroll);

        let state = self.state.clone();
        self.area.connect_query_tooltip(move |_, x, y, _, tip| {
            let s = state.borrow();
            let (Some(layout), Some(render)) = (s.layout.as_ref(), s.shown.as_ref()) else {
                return false;
            };
            let hit = layout.hit(render, x as f64, y as f64);
            if let HitPart::Legend(_) = hit.part {
                // The one-line legend leaves out what does not fit: its
                // tooltip names every entry.
                let text = legend_text(&s.config);
                tip.set_text(Some(&text));
                return true;
            }
            let Some(item) = hit.item else {
                return false;
            };
            let lines = tooltip(render, &s.config, &item, s.opts.time_format);
            if lines.is_empty() {
                return false;
            }
            let mut text = String::new();
            if let Some(row) = hit.row.and_then(|r| render.tree().rows().get(r)) {
                text.push_str(&row.label);
                text.push('\n');
            }
            for (k, v) in lines {
                text.push_str(&format!("{k}: {v}\n"));
            }
            tip.set_text(Some(text.trim_end()));
            true
        });
    }
}

/// The time a click at `(x, y)` designates: the event's time, the state's
/// start, else the time under the pointer; `None` outside the graph.
pub fn click_time(
    layout: &TimeGraphLayout,
    render: &TimeGraphRender,
    x: f64,
    y: f64,
) -> Option<Time> {
    let hit = layout.hit(render, x, y);
    if hit.part != HitPart::Graph && hit.part != HitPart::Axis {
        return None;
    }
    match hit.item {
        Some(HitItem::Event { row, index }) => render.events(row).get(index).map(|e| e.time),
        _ => hit.time,
    }
}

/// Every state, event and arrow series of `config`, one per line under
/// their headings: the full legend.
fn legend_text(config: &PresentationConfig) -> String {
    let mut text = String::from("States:");
    for (_, st) in config.states.iter() {
        text.push_str(&format!("\n  {}", st.label));
    }
    if !config.events.is_empty() {
        text.push_str("\nEvents:");
        for (_, ev) in config.events.iter() {
            text.push_str(&format!("\n  {}", ev.label));
        }
    }
    if !config.arrows.is_empty() {
        text.push_str("\nArrows:");
        for (_, a) in config.arrows.iter() {
            text.push_str(&format!("\n  {}", a.label));
        }
    }
    text
}

/// The picture of `render` that `s` asks for at `size`, and how to paint
/// it (on a painting thread).
#[allow(clippy::type_complexity)]
fn picture_job(
    s: &State,
    render: Arc<TimeGraphRender>,
    size: (i32, i32, i32),
) -> (
    Picture,
    impl FnOnce(&cairo::Context, f64, f64) -> Result<TimeGraphLayout, String> + Send + 'static,
) {
    let want = Picture {
        render: render.clone(),
        opts: s.opts.clone(),
        size,
    };
    let (config, opts) = (s.config.clone(), s.opts.clone());
    let paint = move |cr: &cairo::Context, w: f64, h: f64| {
        draw_time_graph(cr, &render, &config, &opts, w, h).map_err(|e| e.to_string())
    };
    (want, paint)
}

/// The rows `layout` shows when scrolled to `scroll` pixels (the view
/// scrolls without laying out again).
fn rows_in_view_at(layout: &TimeGraphLayout, scroll: f64) -> std::ops::Range<usize> {
    let mut l = layout.clone();
    l.scroll_y = scroll;
    l.rows_in_view()
}

/// Sizes the rows' scrollbar for `layout`, scrolled to `scroll` pixels
/// (only when something changed: a change redraws); it scrolls only when
/// the rows do not fit.
fn size_scrollbar(bar: &gtk::Scrollbar, layout: &TimeGraphLayout, scroll: f64) {
    let rows_h = layout.row_count() as f64 * layout.row_height;
    let page = layout.graph.h;
    let adj = bar.adjustment();
    let upper = rows_h.max(page);
    if adj.upper() != upper || adj.page_size() != page || adj.value() != scroll {
        adj.configure(scroll, 0.0, upper, 20.0, (page - 20.0).max(20.0), page);
    }
    // Kept when the rows fit, greyed: hiding it would widen the graph,
    // whose time axis would then end past the other views'.
    bar.set_sensitive(rows_h > page);
}
