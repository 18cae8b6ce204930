//! The histogram at the bottom of a tab: event counts over the whole trace,
//! the visible window highlighted. Dragging inside the highlight moves the
//! window; dragging elsewhere, or anywhere while the window is the whole
//! trace (there is nowhere to move it), makes the dragged range the window;
//! a click centres the window there.
//!
//! The viewer is a relm4 component whose output is navigation ([`Nav`]),
//! forwarded to its tab; its model, [`HistogramView`], is a handle the
//! tab keeps to hand it renders and the time focus.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use traceloom_base::TimeRange;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};
use traceloom_viewers::draw::{draw_histogram, HistogramLayout, HistogramOptions};
use traceloom_viewers::{HistogramRender, PresentationConfig};

use super::{draw_bookmarks, Nav, TimeFocus};

struct State {
    render: Option<Arc<HistogramRender>>,
    config: PresentationConfig,
    opts: HistogramOptions,
    cursor: TimeFocus,
    layout: Option<HistogramLayout>,
    /// Drag in progress: the window when it began, and whether it moves
    /// that window (true) or draws a new one.
    drag: Option<(Option<TimeRange>, bool)>,
    /// New-window drag preview (x0, x1).
    preview: Option<(f64, f64)>,
    /// Bins last asked for through [`Nav::Resized`] (asked once, not at
    /// every redraw until the new render lands).
    asked_bins: Option<usize>,
    /// The count scale's fitted width last told through [`Nav::Resized`].
    told_fit: Option<f64>,
}

/// The histogram widget.
#[derive(Clone)]
pub struct HistogramView {
    /// The widget to pack.
    pub area: gtk::DrawingArea,
    state: Rc<RefCell<State>>,
}

impl SimpleComponent for HistogramView {
    /// What it draws with.
    type Init = PresentationConfig;
    /// Driven through its handle (see the module documentation).
    type Input = ();
    type Output = Nav;
    type Root = gtk::DrawingArea;
    type Widgets = ();

    fn init_root() -> gtk::DrawingArea {
        gtk::DrawingArea::new()
    }

    fn init(
        config: PresentationConfig,
        root: gtk::DrawingArea,
        sender: ComponentSender<Self>,
    ) -> ComponentParts<Self> {
        let model = HistogramView::new(root, config, sender.output_sender().clone());
        ComponentParts { model, widgets: () }
    }
}

impl std::fmt::Debug for HistogramView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramView").finish_non_exhaustive()
    }
}

impl HistogramView {
    /// A histogram drawn in `area`, sending window changes to `nav`.
    fn new(area: gtk::DrawingArea, config: PresentationConfig, nav: relm4::Sender<Nav>) -> Self {
        area.set_hexpand(true);
        area.set_vexpand(true);
        // A minimum only: the tab's layout gives it a strip (its pane
        // handle makes it taller).
        area.set_content_height(50);
        let state = Rc::new(RefCell::new(State {
            render: None,
            config,
            opts: HistogramOptions::default(),
            cursor: TimeFocus::default(),
            layout: None,
            drag: None,
            preview: None,
            asked_bins: None,
            told_fit: None,
        }));
        let view = HistogramView { area, state };
        view.connect_draw(nav.clone());
        view.connect_input(nav);
        view
    }

    /// The geometry of the last drawing (plot area, time to x).
    pub fn layout(&self) -> Option<traceloom_viewers::draw::HistogramLayout> {
        self.state.borrow().layout.clone()
    }

    /// Where the plot starts when the count scale fits its labels, from
    /// the last layout.
    pub fn fitted_plot_left(&self) -> Option<f64> {
        self.state
            .borrow()
            .layout
            .as_ref()
            .map(|l| l.fitted_scale_w)
    }

    /// Lines the plot up from `left` to `right` (the area's x; `None`:
    /// after the count scale, to the edge), redrawing when it changes.
    pub fn set_plot_span(&self, span: Option<(f64, f64)>) {
        let mut s = self.state.borrow_mut();
        if s.opts.plot_span == span {
            return;
        }
        s.opts.plot_span = span;
        drop(s);
        self.area.queue_draw();
    }

    /// Shows `render`.
    pub fn set_render(&self, render: Arc<HistogramRender>) {
        let old = self.state.borrow_mut().render.replace(render);
        super::drop_later(old);
        self.area.queue_draw();
    }

    /// The render shown.
    pub fn render(&self) -> Option<Arc<HistogramRender>> {
        self.state.borrow().render.clone()
    }

    /// Number of bins a render should have to fill the plot.
    pub fn bins_wanted(&self) -> u32 {
        match &self.state.borrow().layout {
            Some(l) => (l.plot.w as u32).max(10),
            None => (self.area.width().max(600) as u32).saturating_sub(60),
        }
    }

    /// Updates the highlighted window, markers and bookmarks.
    pub fn set_time_focus(&self, cursor: &TimeFocus) {
        let mut s = self.state.borrow_mut();
        if s.cursor == *cursor {
            return;
        }
        s.cursor = cursor.clone();
        drop(s);
        self.area.queue_draw();
    }

    fn connect_draw(&self, nav: relm4::Sender<Nav>) {
        let state = self.state.clone();
        self.area.set_draw_func(move |_, cr, w, h| {
            crate::stalls::time("draw:histogram", || {
                let mut s = state.borrow_mut();
                let Some(render) = s.render.clone() else {
                    cr.set_source_rgb(1.0, 1.0, 1.0);
                    cr.paint().ok();
                    return;
                };
                // The highlight is the tab's window, not the model's.
                let mut shown = (*render).clone();
                shown.highlight = s.cursor.window;
                match draw_histogram(cr, &shown, &s.config, &s.opts, w as f64, h as f64) {
                    Ok(l) => {
                        let p = l.plot;
                        // The selection, as the time graphs show it: a
                        // translucent band between two edges.
                        if let Some(sel) = s.cursor.selection {
                            let c = s.config.selection.to_f64();
                            let (a, b) = (l.xmap.x(sel.start), l.xmap.x(sel.end));
                            let (a, b) = (a.max(p.x), b.min(p.right()));
                            if b >= a {
                                cr.set_source_rgba(c.0, c.1, c.2, c.3.max(0.25));
                                cr.rectangle(a, p.y, (b - a).max(1.0), p.h);
                                cr.fill().ok();
                                cr.set_source_rgba(c.0, c.1, c.2, 0.9);
                                cr.set_line_width(1.0);
                                for x in [a, b] {
                                    cr.move_to(x.round() + 0.5, p.y);
                                    cr.line_to(x.round() + 0.5, p.bottom());
                                }
                                cr.stroke().ok();
                            }
                        }
                        if let Some(t) = s.cursor.current {
                            let x = l.xmap.x(t).round() + 0.5;
                            if x >= p.x && x <= p.right() {
                                let c = s.config.current_time.to_f64();
                                cr.set_source_rgba(c.0, c.1, c.2, c.3);
                                cr.set_line_width(1.0);
                                cr.move_to(x, p.y);
                                cr.line_to(x, p.bottom());
                                cr.stroke().ok();
                            }
                        }
                        draw_bookmarks(
                            cr,
                            &s.cursor,
                            |t| l.xmap.x(t),
                            (p.x, p.right()),
                            (p.y, p.bottom()),
                        );
                        if let Some((a, b)) = s.preview {
                            cr.set_source_rgba(0.2, 0.4, 0.9, 0.3);
                            cr.rectangle(a.min(b), p.y, (a - b).abs().max(1.0), p.h);
                            cr.fill().ok();
                        }
                        let want = (p.w as usize).max(10);
                        if render.bins().len().abs_diff(want) > 1
                            && s.asked_bins.is_none_or(|a| a.abs_diff(want) > 1)
                        {
                            s.asked_bins = Some(want);
                            let nav = nav.clone();
                            glib::idle_add_local_once(move || nav.emit(Nav::Resized));
                        }
                        // The count labels ask for another margin: the
                        // tab lines up the views' time axes again.
                        if s.told_fit != Some(l.fitted_scale_w) {
                            s.told_fit = Some(l.fitted_scale_w);
                            let nav = nav.clone();
                            glib::idle_add_local_once(move || nav.emit(Nav::Resized));
                        }
                        s.layout = Some(l);
                    }
                    Err(e) => eprintln!("traceloom: warning: drawing failed: {e}"),
                }
            })
        });
    }

    fn connect_input(&self, nav: relm4::Sender<Nav>) {
        let drag = gtk::GestureDrag::new();
        let state = self.state.clone();
        drag.connect_drag_begin(move |_, x, _| {
            let mut s = state.borrow_mut();
            let window = s.cursor.window;
            let inside = match (&s.layout, window) {
                (Some(l), Some(w)) => moves_window(l, w, x),
                _ => false,
            };
            s.drag = Some((window, inside));
        });
        let (state, area, nav1) = (self.state.clone(), self.area.clone(), nav.clone());
        drag.connect_drag_update(move |g, dx, _| {
            let Some((x0, _)) = g.start_point() else {
                return;
            };
            let msg = {
                let mut s = state.borrow_mut();
                let Some(l) = s.layout.clone() else {
                    return;
                };
                match s.drag {
                    Some((Some(w), true)) => {
                        let shift = l.xmap.time(x0 + dx) - l.xmap.time(x0);
                        Some(Nav::Window(TimeRange::new(w.start + shift, w.end + shift)))
                    }
                    Some((_, false)) => {
                        s.preview = Some((x0, x0 + dx));
                        None
                    }
                    _ => None,
                }
            };
            area.queue_draw();
            if let Some(m) = msg {
                nav1.emit(m);
            }
        });
        let (state, area) = (self.state.clone(), self.area.clone());
        drag.connect_drag_end(move |g, dx, _| {
            let Some((x0, _)) = g.start_point() else {
                return;
            };
            let msg = {
                let mut s = state.borrow_mut();
                s.preview = None;
                let drag = s.drag.take();
                let Some(l) = s.layout.clone() else {
                    return;
                };
                let t0 = l.xmap.time(x0);
                if dx.abs() < 3.0 {
                    // A click centres the window on the time clicked.
                    s.cursor
                        .window
                        .map(|w| Nav::Window(super::centred_on(w, t0)))
                } else if matches!(drag, Some((_, false))) {
                    let t1 = l.xmap.time(x0 + dx);
                    Some(Nav::Window(TimeRange::new(t0.min(t1), t0.max(t1))))
                } else {
                    None
                }
            };
            area.queue_draw();
            if let Some(m) = msg {
                nav.emit(m);
            }
        });
        self.area.add_controller(drag);
    }
}

/// Whether a drag beginning at `x` moves `window` (a drag on its
/// highlight) rather than choosing a new window. A window covering the
/// whole histogram cannot move, and its highlight covers every pixel: a
/// drag there chooses a window, as the first drag on a trace just opened
/// is meant to.
fn moves_window(l: &HistogramLayout, window: TimeRange, x: f64) -> bool {
    let range = l.xmap.range;
    if window.start <= range.start && window.end >= range.end {
        return false;
    }
    let (a, b) = (l.xmap.x(window.start), l.xmap.x(window.end));
    // A narrow highlight is hard to hit: give it a few pixels.
    x >= a - 4.0 && x <= b + 4.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceloom_viewers::draw::Rect;
    use traceloom_viewers::time::XMap;

    fn layout(range: TimeRange) -> HistogramLayout {
        let plot = Rect::new(50.0, 20.0, 1000.0, 60.0);
        HistogramLayout {
            scale: Rect::new(0.0, 20.0, 50.0, 60.0),
            axis: Rect::new(50.0, 0.0, 1000.0, 20.0),
            plot,
            caption: Rect::new(50.0, 80.0, 1000.0, 16.0),
            xmap: XMap {
                range,
                x0: plot.x,
                width: plot.w,
            },
            fitted_scale_w: 50.0,
        }
    }

    #[test]
    fn a_drag_on_the_whole_trace_window_chooses_a_window() {
        let range = TimeRange::new(1_000, 11_000);
        let l = layout(range);
        // The window is the whole trace (as at open) or wider: every drag
        // chooses a window.
        for w in [range, TimeRange::new(0, 20_000)] {
            for x in [50.0, 300.0, 1049.0] {
                assert!(!moves_window(&l, w, x), "window {w:?}, x {x}");
            }
        }
        // A window within the trace moves when dragged on its highlight
        // (x 300–400), or a few pixels beside it, and not elsewhere.
        let w = TimeRange::new(3_500, 4_500);
        for x in [297.0, 350.0, 403.0] {
            assert!(moves_window(&l, w, x), "x {x}");
        }
        for x in [100.0, 290.0, 410.0, 900.0] {
            assert!(!moves_window(&l, w, x), "x {x}");
        }
    }
}
