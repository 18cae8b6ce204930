//! The statistics view: the statistics tree drawn as a table (the viewers'
//! cairo function) with a scrollbar, with a caption saying which range it
//! covers (whole trace, or the selection).
//!
//! Only the visible rows are drawn (the options' `scroll_y`): a table of
//! thousands of rows in a plain scrolled drawing area would make GTK
//! allocate a texture as tall as the whole table.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_viewers::draw::{draw_statistics, StatisticsLayout, StatisticsOptions};
use traceloom_viewers::{PresentationConfig, StatisticsRender};

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
        let (s, adj) = (state.clone(), adjustment.clone());
        area.set_draw_func(move |_, cr, w, h| {
            crate::stalls::time("draw:statistics", || {
                let mut s = s.borrow_mut();
                if let Some(r) = &s.render {
                    let total = StatisticsLayout::natural_height(r, &s.opts);
                    adj.configure(
                        adj.value().min((total - h as f64).max(0.0)),
                        0.0,
                        total,
                        20.0,
                        h as f64 * 0.9,
                        h as f64,
                    );
                }
                s.opts.scroll_y = adj.value();
                match &s.render {
                    Some(r) => {
                        if let Err(e) =
                            draw_statistics(cr, r, &s.config, &s.opts, w as f64, h as f64)
                        {
                            eprintln!("traceloom: warning: drawing failed: {e}");
                        }
                    }
                    None => {
                        cr.set_source_rgb(1.0, 1.0, 1.0);
                        cr.paint().ok();
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
        self.state.borrow_mut().render = Some(render);
        self.caption.set_text(caption);
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
