//! A tab's layout: its viewers in resizable panes with visible handles and
//! minimum sizes, each under a title bar whose button (or a double-click
//! on the title) maximizes it within the tab and restores it; a View menu
//! shows and hides viewers. The visible viewers and the pane positions are
//! what the per-trace configuration saves ([`Layout::saved`]).
//!
//! ```text
//! ┌ Control flow ───────────────────────┐
//! ├ Resources ──────────────────────────┤   vertical panes: graphs,
//! ├ Events ──────────────┬ Statistics ──┤   then events | statistics
//! │                      │  / Event     │   and event details,
//! ├ Histogram ───────────┴──────────────┤   then the histogram
//! └─────────────────────────────────────┘
//! ```

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

use gtk4 as gtk;
use gtk4::prelude::*;

/// The viewers, in the View menu's order: the name the configuration
/// saves, and the title shown.
pub const VIEWERS: [(&str, &str); 5] = [
    ("control-flow", "Control flow"),
    ("resources", "Resources"),
    ("event-list", "Events"),
    ("statistics", "Statistics"),
    ("histogram", "Histogram"),
];

/// Smallest height (or width) of a viewer, so that a pane handle never
/// squeezes one to nothing.
const MIN_SIZE: i32 = 60;

/// Where each pane's handle goes at first (in [`Layout::saved`] order), as
/// a fraction of the pane's size; negative: that many pixels from its end
/// (within what the children's minimum sizes allow).
/// The graphs get a bit over half of the height, the control flow most of
/// that, the histogram a strip, the event list most of the width.
const DEFAULT_PLACES: [f64; 4] = [0.62, 0.58, -90.0, 0.62];

/// What the configuration keeps of a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedLayout {
    /// Names of the viewers shown.
    pub shown: Vec<String>,
    /// Pane positions (graphs split, main split, bottom split, lower
    /// split), in pixels; 0 for a pane the user did not place, which the
    /// layout places for the window it opens in.
    pub positions: Vec<i32>,
}

/// The panes and title bars of a tab's viewers.
#[derive(Clone)]
pub struct Layout {
    /// The widget to pack (fills the tab below its toolbars).
    pub widget: gtk::Paned,
    /// The View menu's button, for the tab's toolbar.
    pub view_menu: gtk::MenuButton,
    /// The notebook holding the statistics and the event details.
    pub side: gtk::Notebook,
    frames: Rc<Vec<gtk::Frame>>,
    /// Graphs (control flow | resources), main (graphs | bottom), bottom
    /// (lower | histogram), lower (events | side).
    panes: Rc<[gtk::Paned; 4]>,
    hidden: Rc<RefCell<BTreeSet<usize>>>,
    maximized: Rc<Cell<Option<usize>>>,
    checks: Rc<Vec<gtk::CheckButton>>,
    /// Panes whose handle the user (or a saved layout) placed.
    placed_by_user: Rc<[Cell<bool>; 4]>,
}

impl Layout {
    /// Lays out the viewers' widgets (in [`VIEWERS`] order; the details
    /// share the statistics' place, in a notebook), with `tools` in the
    /// control flow's title bar (its rows toolbar: on the title's line, it
    /// leaves the rows room on a small screen).
    pub fn new(
        viewers: [&gtk::Widget; 5],
        details: &impl IsA<gtk::Widget>,
        tools: &impl IsA<gtk::Widget>,
    ) -> Self {
        let side = gtk::Notebook::new();
        side.append_page(viewers[3], Some(&gtk::Label::new(Some("Statistics"))));
        side.append_page(details, Some(&gtk::Label::new(Some("Event"))));
        let children: [gtk::Widget; 5] = [
            viewers[0].clone(),
            viewers[1].clone(),
            viewers[2].clone(),
            side.clone().upcast(),
            viewers[4].clone(),
        ];
        let pane = |o: gtk::Orientation, a: &gtk::Widget, b: &gtk::Widget| {
            let p = gtk::Paned::new(o);
            p.set_wide_handle(true);
            p.set_start_child(Some(a));
            p.set_end_child(Some(b));
            p.set_shrink_start_child(false);
            p.set_shrink_end_child(false);
            p
        };
        let maximized: Rc<Cell<Option<usize>>> = Rc::default();
        let hidden: Rc<RefCell<BTreeSet<usize>>> = Rc::default();
        let frames: Vec<gtk::Frame> = VIEWERS
            .iter()
            .zip(children.iter())
            .enumerate()
            .map(|(i, ((_, title), child))| {
                titled(title, child, (i == 0).then(|| tools.upcast_ref()))
            })
            .collect();
        let v = gtk::Orientation::Vertical;
        let graphs = pane(v, frames[0].upcast_ref(), frames[1].upcast_ref());
        let lower = pane(
            gtk::Orientation::Horizontal,
            frames[2].upcast_ref(),
            frames[3].upcast_ref(),
        );
        let bottom = pane(v, lower.upcast_ref(), frames[4].upcast_ref());
        bottom.set_resize_end_child(false);
        let main = pane(v, graphs.upcast_ref(), bottom.upcast_ref());
        main.set_vexpand(true);
        let panes = [graphs, main, bottom, lower];
        let placed_by_user: Rc<[Cell<bool>; 4]> = Rc::default();
        for (k, (p, place)) in panes.iter().zip(DEFAULT_PLACES).enumerate() {
            // Placed as the pane's size settles, until the user drags the
            // handle (a press near it, seen before the pane handles it) or
            // a saved layout places it: then it stays where put.
            let by_user = placed_by_user.clone();
            let press = gtk::GestureClick::new();
            press.set_propagation_phase(gtk::PropagationPhase::Capture);
            press.connect_pressed(move |g, _, x, y| {
                let Some(p) = g.widget().and_downcast::<gtk::Paned>() else {
                    return;
                };
                let at = match p.orientation() {
                    gtk::Orientation::Horizontal => x,
                    _ => y,
                };
                if (at - p.position() as f64).abs() < 12.0 {
                    by_user[k].set(true);
                }
            });
            p.add_controller(press);
            let by_user = placed_by_user.clone();
            p.connect_notify_local(Some("max-position"), move |p, _| {
                // After the allocation under way: a position set while the
                // pane computes its own would be overwritten.
                let (p, by_user) = (p.downgrade(), by_user.clone());
                glib::idle_add_local_once(move || {
                    let Some(p) = p.upgrade() else { return };
                    let max = p.max_position();
                    let size = match p.orientation() {
                        gtk::Orientation::Horizontal => p.width(),
                        _ => p.height(),
                    };
                    if max > 2 * MIN_SIZE && !by_user[k].get() {
                        let pos = if place < 0.0 {
                            size + place as i32
                        } else {
                            (size as f64 * place) as i32
                        };
                        p.set_position(pos.clamp(MIN_SIZE, max - MIN_SIZE));
                    }
                });
            });
        }
        let menu = gtk::Box::new(gtk::Orientation::Vertical, 2);
        let checks: Vec<gtk::CheckButton> = VIEWERS
            .iter()
            .map(|(_, title)| {
                let c = gtk::CheckButton::with_label(title);
                c.set_active(true);
                menu.append(&c);
                c
            })
            .collect();
        let popover = gtk::Popover::new();
        popover.set_child(Some(&menu));
        let view_menu = gtk::MenuButton::new();
        view_menu.set_label("View");
        view_menu.set_tooltip_text(Some("Show or hide viewers"));
        view_menu.set_popover(Some(&popover));
        let layout = Layout {
            widget: panes[1].clone(),
            view_menu,
            side,
            frames: Rc::new(frames),
            panes: Rc::new(panes),
            hidden,
            maximized,
            checks: Rc::new(checks),
            placed_by_user,
        };
        for (i, c) in layout.checks.iter().enumerate() {
            let l = layout.clone();
            c.connect_toggled(move |c| l.show(i, c.is_active()));
        }
        for (i, f) in layout.frames.iter().enumerate() {
            let l = layout.clone();
            connect_title(f, move || l.toggle_maximized(i));
        }
        layout
    }

    /// Maximizes viewer `i` within the tab, or restores the layout when it
    /// is the one maximized.
    pub fn toggle_maximized(&self, i: usize) {
        let m = if self.maximized.get() == Some(i) {
            None
        } else {
            Some(i)
        };
        self.maximized.set(m);
        self.apply();
    }

    /// The viewer maximized, if one is.
    pub fn maximized(&self) -> Option<usize> {
        self.maximized.get()
    }

    /// Shows or hides viewer `i` (the View menu).
    pub fn show(&self, i: usize, shown: bool) {
        let changed = if shown {
            self.hidden.borrow_mut().remove(&i)
        } else {
            self.hidden.borrow_mut().insert(i)
        };
        if self.checks[i].is_active() != shown {
            self.checks[i].set_active(shown);
        }
        if changed {
            self.maximized.set(None);
            self.apply();
        }
    }

    /// Whether viewer `i` is visible.
    pub fn is_shown(&self, i: usize) -> bool {
        self.frames[i].is_visible() && self.frames[i].is_mapped()
    }

    /// The viewer's frame (title bar and widget).
    pub fn frame(&self, i: usize) -> &gtk::Frame {
        &self.frames[i]
    }

    /// What to save: the viewers shown and the pane positions.
    pub fn saved(&self) -> SavedLayout {
        let hidden = self.hidden.borrow();
        SavedLayout {
            shown: VIEWERS
                .iter()
                .enumerate()
                .filter(|(i, _)| !hidden.contains(i))
                .map(|(_, (id, _))| id.to_string())
                .collect(),
            // Only where the user put a handle: the default places are
            // fractions of the window, and a pixel position kept for them
            // would fit only a window of the same size (reopened in a
            // smaller one, the histogram kept a few pixels).
            positions: self
                .panes
                .iter()
                .zip(self.placed_by_user.iter())
                .map(|(p, by_user)| if by_user.get() { p.position() } else { 0 })
                .collect(),
        }
    }

    /// Restores a saved layout (unknown viewer names are ignored; an empty
    /// list of viewers, as older configurations have, shows them all).
    pub fn restore(&self, saved: &SavedLayout) {
        if !saved.shown.is_empty() {
            for (i, (id, _)) in VIEWERS.iter().enumerate() {
                self.show(i, saved.shown.iter().any(|s| s == id));
            }
        }
        for (k, (p, &pos)) in self.panes.iter().zip(&saved.positions).enumerate() {
            if pos > 0 {
                self.placed_by_user[k].set(true);
                p.set_position(pos);
            }
        }
    }

    /// Makes the frames and panes visible as `hidden` and `maximized` say:
    /// a pane with both sides hidden is hidden too, so that its parent
    /// gives the room to the other side.
    fn apply(&self) {
        let hidden = self.hidden.borrow();
        let m = self.maximized.get();
        // Panes first (a child is shown again inside a shown pane), then
        // the frames, then the panes left with nothing to show hidden.
        for p in self.panes.iter() {
            p.set_visible(true);
        }
        for (i, f) in self.frames.iter().enumerate() {
            f.set_visible(m.map_or(!hidden.contains(&i), |m| m == i));
        }
        // Innermost first: graphs, lower, bottom, main.
        for k in [0, 3, 2, 1] {
            let p = &self.panes[k];
            let any = [p.start_child(), p.end_child()]
                .into_iter()
                .flatten()
                .any(|c| c.is_visible());
            p.set_visible(any);
        }
    }
}

/// `child` under a title bar: the name in bold, `tools` if any, and a
/// button that maximizes or restores it; at least [`MIN_SIZE`] high.
fn titled(title: &str, child: &gtk::Widget, tools: Option<&gtk::Widget>) -> gtk::Frame {
    let f = gtk::Frame::new(None);
    let bar = gtk::Box::new(gtk::Orientation::Horizontal, 4);
    let l = gtk::Label::new(None);
    l.set_markup(&format!("<b>{title}</b>"));
    l.set_xalign(0.0);
    l.set_hexpand(true);
    l.set_tooltip_text(Some("Double-click to maximize or restore"));
    bar.append(&l);
    if let Some(tools) = tools {
        l.set_hexpand(false);
        l.set_margin_end(12);
        tools.set_hexpand(true);
        bar.append(tools);
    }
    let b = gtk::Button::from_icon_name("view-fullscreen-symbolic");
    b.add_css_class("flat");
    b.set_tooltip_text(Some("Maximize within the tab, or restore"));
    bar.append(&b);
    f.set_label_widget(Some(&bar));
    f.set_child(Some(child));
    f.set_size_request(-1, MIN_SIZE);
    square_corners(&f);
    f
}

/// Gives `frame` square corners. A frame clips its child to its rounded
/// corners, and GTK's GL renderer makes that clip by drawing the whole
/// viewer offscreen first, then again masked: on a software rasterizer
/// (llvmpipe, where GTK redraws the whole window at every frame) the five
/// viewers' frames cost about a quarter of a frame, 38 ms of a 1400×1000
/// window instead of 28 ms on an idle machine, and frames over 50 ms
/// while the analysis keeps the cores busy.
fn square_corners(frame: &gtk::Frame) {
    thread_local! {
        static SQUARE: gtk::CssProvider = {
            let p = gtk::CssProvider::new();
            p.load_from_data("frame { border-radius: 0; }");
            p
        };
    }
    // A provider of the frame's own style (its children keep theirs).
    #[allow(deprecated)]
    SQUARE.with(|p| {
        frame
            .style_context()
            .add_provider(p, gtk::STYLE_PROVIDER_PRIORITY_APPLICATION)
    });
}

/// Calls `toggle` when the frame's maximize button is clicked or its
/// title double-clicked.
fn connect_title(frame: &gtk::Frame, toggle: impl Fn() + 'static) {
    let Some(bar) = frame.label_widget() else {
        return;
    };
    let toggle = Rc::new(toggle);
    if let Some(b) = bar.last_child().and_downcast::<gtk::Button>() {
        let t = toggle.clone();
        b.connect_clicked(move |_| t());
    }
    let click = gtk::GestureClick::new();
    click.connect_pressed(move |_, n, _, _| {
        if n == 2 {
            toggle();
        }
    });
    bar.add_controller(click);
}
