//! A time-graph viewer (control flow, resources): a `gtk::DrawingArea`
//! showing a [`TimeGraphRender`] drawn with the viewers' cairo function on
//! a painting thread ([`super::painter`]), with hit-testing for clicks and
//! tooltips, and the bookmarks and the selection being dragged drawn over
//! it.
//!
//! Input: click → current time (the event's time when an event is under the
//! pointer, the interval start for a state, else the pointer's time); drag
//! with the first button → selection; wheel → zoom around the pointer;
//! Shift+wheel, horizontal scroll or a middle/right-button drag → pan;
//! Ctrl+wheel → scroll the rows.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use traceloom_base::Time;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_viewers::draw::{
    draw_time_graph, tooltip, HitItem, HitPart, TimeGraphLayout, TimeGraphOptions,
};
use traceloom_viewers::{PresentationConfig, TimeGraphRender};

use super::painter::Painter;
use super::{draw_bookmarks, Nav, NavSink, TimeFocus};

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
    /// The render of the picture shown (`layout` is its layout): what
    /// clicks and tooltips hit.
    shown: Option<Arc<TimeGraphRender>>,
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
    /// The widget to pack.
    pub area: gtk::DrawingArea,
    state: Rc<RefCell<State>>,
    painter: Rc<RefCell<Option<Painter<Picture, TimeGraphLayout>>>>,
}

impl TimeGraphView {
    /// A view titled `title` (the tree column's heading), drawing with
    /// `config`, sending navigation to `nav`.
    pub fn new(title: &str, config: PresentationConfig, nav: NavSink) -> Self {
        let area = gtk::DrawingArea::new();
        area.set_hexpand(true);
        area.set_vexpand(true);
        area.set_focusable(true);
        area.set_has_tooltip(true);
        let opts = TimeGraphOptions {
            title: Some(title.to_owned()),
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
            shown: None,
        }));
        let view = TimeGraphView {
            area,
            state,
            painter: Rc::default(),
        };
        view.connect_draw(nav.clone());
        view.connect_input(nav);
        view
    }

    /// Shows `render` (a new model output).
    pub fn set_render(&self, render: Arc<TimeGraphRender>) {
        let old = self.state.borrow_mut().render.replace(render);
        super::drop_later(old);
        self.area.queue_draw();
    }

    /// The render shown, if any.
    pub fn render(&self) -> Option<Arc<TimeGraphRender>> {
        self.state.borrow().render.clone()
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
    /// made for), from the last layout; the whole width before the first
    /// draw.
    pub fn graph_width(&self) -> u32 {
        let s = self.state.borrow();
        match &s.layout {
            Some(l) => l.graph.w.max(1.0) as u32,
            None => (self.area.width().max(400) as f64 * 0.75) as u32,
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

    fn connect_draw(&self, nav: NavSink) {
        let state = self.state.clone();
        // Stall accounting names the view by its tree column's heading.
        let source = if self.state.borrow().opts.title.as_deref() == Some("Process") {
            "draw:control-flow"
        } else {
            "draw:resources"
        };
        let painter = Painter::<Picture, TimeGraphLayout>::new(&self.area);
        self.painter.replace(Some(painter.clone()));
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
                let scale = area.scale_factor();
                let want = Picture {
                    render: render.clone(),
                    opts: s.opts.clone(),
                    size: (w, h, scale),
                };
                let (config, opts) = (s.config.clone(), s.opts.clone());
                let shown = painter.draw(cr, &want, (w, h, scale), move |cr, w, h| {
                    draw_time_graph(cr, &render, &config, &opts, w, h).map_err(|e| e.to_string())
                });
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
                    glib::idle_add_local_once(move || nav(Nav::Resized));
                }
                s.layout = Some(layout);
                let old = s.shown.replace(picture.render);
                super::drop_later(old);
            })
        });
    }

    fn connect_input(&self, nav: NavSink) {
        let motion = gtk::EventControllerMotion::new();
        let state = self.state.clone();
        motion.connect_motion(move |_, x, _| state.borrow_mut().pointer_x = Some(x));
        self.area.add_controller(motion);

        // First button: click (current time) or drag (selection).
        let drag = gtk::GestureDrag::new();
        drag.set_button(1);
        let (state, area, nav1) = (self.state.clone(), self.area.clone(), nav.clone());
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
        let (state, area) = (self.state.clone(), self.area.clone());
        drag.connect_drag_end(move |g, dx, dy| {
            let Some((x0, y0)) = g.start_point() else {
                return;
            };
            let msg = {
                let mut s = state.borrow_mut();
                s.drag = None;
                let (Some(layout), Some(render)) = (s.layout.as_ref(), s.shown.as_ref()) else {
                    return;
                };
                if dx.abs() < CLICK_SLOP && dy.abs() < CLICK_SLOP {
                    click_time(layout, render, x0, y0).map(Nav::Current)
                } else {
                    let (a, b) = (layout.xmap.time(x0), layout.xmap.time(x0 + dx));
                    (a != b).then(|| Nav::Select(TimeRange::new(a.min(b), a.max(b))))
                }
            };
            area.queue_draw();
            if let Some(m) = msg {
                nav1(m);
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
                nav2(Nav::Pan(-step / w));
            }
        });
        self.area.add_controller(pan);

        let scroll = gtk::EventControllerScroll::new(gtk::EventControllerScrollFlags::BOTH_AXES);
        let (state, area) = (self.state.clone(), self.area.clone());
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
                let mut s = state.borrow_mut();
                let max = s
                    .layout
                    .as_ref()
                    .map(|l| (l.row_count() as f64 * l.row_height - l.graph.h * 0.5).max(0.0))
                    .unwrap_or(0.0);
                s.opts.scroll_y = (s.opts.scroll_y + dy * 40.0).clamp(0.0, max);
                drop(s);
                area.queue_draw();
            } else if mods.contains(gtk::gdk::ModifierType::SHIFT_MASK) || dx != 0.0 {
                let amount = if dx != 0.0 { dx } else { dy };
                nav(Nav::Pan(amount * 0.1));
            } else if let Some(anchor) = anchor {
                nav(Nav::Zoom {
                    factor: if dy > 0.0 { 1.25 } else { 0.8 },
                    anchor,
                });
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
