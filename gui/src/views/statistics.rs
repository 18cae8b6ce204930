//! The statistics view: the statistics tree drawn as a table (the viewers'
//! cairo function) with a scrollbar, with a caption saying which range it
//! covers (whole trace, or the selection).
//!
//! Only the visible rows are drawn (the options' `scroll_y`): a table of
//! thousands of rows in a plain scrolled drawing area would make GTK
//! allocate a texture as tall as the whole table. They are painted on a
//! painting thread ([`super::painter`]).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_viewers::draw::{draw_statistics, StatisticsLayout, StatisticsOptions};
use traceloom_viewers::{PresentationConfig, StatisticsRender};

use super::painter::Painter;

/// What a picture of the table shows.
#[derive(Clone)]
struct Picture {
    render: Arc<StatisticsRender>,
    opts: StatisticsOptions,
    size: (i32, i32, i32),
}

impl PartialEq for Picture {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.render, &other.render)
            && self.opts == other.opts
            && self.size == other.size
    }
}

struct State {
    render: Option<Arc<StatisticsRender>>,
    config: PresentationConfig,
    opts: StatisticsOptions,
}

/// The statistics widget.
#[derive(Clone)]
pub struct StatisticsView {
    /// The widget to pack (caption above the scrolled table).
    pub widget: gtk::Box,
    caption: gtk::Label,
    area: gtk::DrawingArea,
    state: Rc<RefCell<State>>,
}

impl StatisticsView {
    /// An empty statistics view.
    pub fn new(config: PresentationConfig) -> Self {
        let widget = gtk::Box::new(gtk::Orientation::Vertical, 2);
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
        }));
        let painter = Painter::<Picture, f64>::new(&area);
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
                // The table is painted off the main thread (a large trace's
                // has thousands of rows); the last picture is shown
                // meanwhile, and its natural height sizes the scrollbar.
                let scale = area.scale_factor();
                let want = Picture {
                    render: render.clone(),
                    opts: s.opts.clone(),
                    size: (w, h, scale),
                };
                let (config, opts) = (s.config.clone(), s.opts.clone());
                let shown = p.draw(cr, &want, (w, h, scale), move |cr, w, h| {
                    draw_statistics(cr, &render, &config, &opts, w, h)
                        .map_err(|e| e.to_string())?;
                    Ok(StatisticsLayout::natural_height(&render, &opts))
                });
                if let Some((_, total)) = shown {
                    let h = h as f64;
                    let value = adj.value().min((total - h).max(0.0));
                    if adj.upper() != total || adj.page_size() != h || adj.value() != value {
                        adj.configure(value, 0.0, total, 20.0, h * 0.9, h);
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
        StatisticsView {
            widget,
            caption,
            area,
            state,
        }
    }

    /// Shows `render`, described by `caption` (e.g. which range it covers).
    pub fn set_render(&self, render: Arc<StatisticsRender>, caption: &str) {
        let old = self.state.borrow_mut().render.replace(render);
        super::drop_later(old);
        // A new text lays the window out again: only when it changed.
        if self.caption.text() != caption {
            self.caption.set_text(caption);
        }
        self.area.queue_draw();
    }

    /// The render shown.
    pub fn render(&self) -> Option<Arc<StatisticsRender>> {
        self.state.borrow().render.clone()
    }

    /// The caption text.
    pub fn caption(&self) -> String {
        self.caption.text().to_string()
    }
}
