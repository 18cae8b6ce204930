//! The detailed event list: a `gtk::ListView` of the events the event-list
//! model produced for the visible window, one row per event in columns
//! (time, trace/CPU, event name, fields).
//!
//! Rows are `gtk::StringObject`s holding the columns joined by a unit
//! separator, split again when a row is bound: this keeps the list model a
//! stock `gtk::StringList` (no GObject subclass) while the view shows real
//! columns.
//!
//! Selecting a row moves the tab's current time there; when the current time
//! moves elsewhere the list selects and scrolls to the first event at or
//! after it, through the inner ListView's `list.scroll-to-item` action: on
//! GTK 4.8, setting the vadjustment programmatically can leave the list
//! blank until the next scroll.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_viewers::Time;

use super::{Nav, NavSink};

/// Separates the columns inside a row's string.
const SEP: char = '\u{1f}';

/// Column titles and widths (in pixels; the last column takes the rest).
/// Pixels rather than `width_chars`: GTK sizes those from the font's widest
/// glyphs, which made the list much wider than its text.
const COLUMNS: [(&str, i32); 4] = [
    ("Time", 175),
    ("Trace / CPU", 110),
    ("Event", 170),
    ("Fields", 60),
];

/// One row of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRow {
    /// Event time (ns).
    pub time: Time,
    /// Column texts, in [`COLUMNS`] order.
    pub columns: [String; 4],
}

/// The event list widget.
#[derive(Clone)]
pub struct EventListView {
    /// The widget to pack (header above the scrolled list).
    pub widget: gtk::Box,
    /// The list itself.
    pub list: gtk::ListView,
    store: gtk::StringList,
    selection: gtk::SingleSelection,
    times: Rc<RefCell<Vec<Time>>>,
    /// Set while the selection is changed by the program, so that it is
    /// not sent back as a user's choice.
    programmatic: Rc<Cell<bool>>,
    status: gtk::Label,
}

impl EventListView {
    /// An empty list sending the chosen event's time to `nav`.
    pub fn new(nav: NavSink) -> Self {
        let widget = gtk::Box::new(gtk::Orientation::Vertical, 0);
        let header = gtk::Box::new(gtk::Orientation::Horizontal, 8);
        header.set_margin_start(6);
        for (title, width) in COLUMNS {
            let l = gtk::Label::new(None);
            l.set_markup(&format!("<b>{title}</b>"));
            l.set_xalign(0.0);
            l.set_size_request(width, -1);
            l.set_ellipsize(gtk::pango::EllipsizeMode::End);
            // The last column takes what is left.
            l.set_hexpand(title == "Fields");
            header.append(&l);
        }
        let store = gtk::StringList::new(&[]);
        let selection = gtk::SingleSelection::new(Some(store.clone()));
        selection.set_autoselect(false);
        selection.set_can_unselect(true);
        let factory = gtk::SignalListItemFactory::new();
        factory.connect_setup(|_, item| {
            let row = gtk::Box::new(gtk::Orientation::Horizontal, 8);
            for (i, (_, width)) in COLUMNS.into_iter().enumerate() {
                let l = gtk::Label::new(None);
                l.set_xalign(0.0);
                l.set_size_request(width, -1);
                l.set_hexpand(i + 1 == COLUMNS.len());
                l.set_ellipsize(gtk::pango::EllipsizeMode::End);
                l.add_css_class("monospace");
                row.append(&l);
            }
            if let Some(item) = item.downcast_ref::<gtk::ListItem>() {
                item.set_child(Some(&row));
            }
        });
        factory.connect_bind(|_, item| {
            let Some(item) = item.downcast_ref::<gtk::ListItem>() else {
                return;
            };
            let (Some(obj), Some(row)) = (item.item(), item.child()) else {
                return;
            };
            let Some(s) = obj.downcast_ref::<gtk::StringObject>() else {
                return;
            };
            let text = s.string();
            let mut parts = text.split(SEP);
            let mut child = row.first_child();
            while let Some(w) = child {
                if let Some(l) = w.downcast_ref::<gtk::Label>() {
                    let t = parts.next().unwrap_or("");
                    l.set_text(t);
                    l.set_tooltip_text((t.len() > 60).then_some(t));
                }
                child = w.next_sibling();
            }
        });
        let list = gtk::ListView::new(Some(selection.clone()), Some(factory));
        list.set_vexpand(true);
        let scrolled = gtk::ScrolledWindow::new();
        scrolled.set_vexpand(true);
        // Long field lists are ellipsized (the tooltip shows them whole)
        // rather than scrolled sideways away from the time column.
        scrolled.set_policy(gtk::PolicyType::Never, gtk::PolicyType::Automatic);
        scrolled.set_child(Some(&list));
        let status = gtk::Label::new(Some("Reading the trace…"));
        status.set_xalign(0.0);
        // A long status must not widen the pane (GTK would clip the list).
        status.set_ellipsize(gtk::pango::EllipsizeMode::End);
        status.set_margin_start(6);
        widget.append(&header);
        widget.append(&scrolled);
        widget.append(&status);

        let times: Rc<RefCell<Vec<Time>>> = Rc::default();
        let programmatic = Rc::new(Cell::new(false));
        let (t, p) = (times.clone(), programmatic.clone());
        selection.connect_selected_notify(move |sel| {
            if p.get() {
                return;
            }
            let i = sel.selected();
            let time = t.borrow().get(i as usize).copied();
            if let Some(time) = time {
                nav(Nav::Current(time));
            }
        });
        EventListView {
            widget,
            list,
            store,
            selection,
            times,
            programmatic,
            status,
        }
    }

    /// Replaces the rows; `status` describes them (range, count, limits).
    pub fn set_rows(&self, rows: &[ListRow], status: &str) {
        let strings: Vec<String> = rows
            .iter()
            .map(|r| r.columns.join(&SEP.to_string()))
            .collect();
        let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
        self.programmatic.set(true);
        self.store.splice(0, self.store.n_items(), &refs);
        self.selection.set_selected(gtk::INVALID_LIST_POSITION);
        self.programmatic.set(false);
        *self.times.borrow_mut() = rows.iter().map(|r| r.time).collect();
        self.status.set_text(status);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.times.borrow().len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Time of row `i`.
    pub fn time_of(&self, i: usize) -> Option<Time> {
        self.times.borrow().get(i).copied()
    }

    /// Text of row `i`, columns separated by spaces.
    pub fn row_text(&self, i: usize) -> Option<String> {
        self.store.string(i as u32).map(|s| s.replace(SEP, "  "))
    }

    /// The selected row.
    pub fn selected(&self) -> Option<usize> {
        let i = self.selection.selected();
        (i != gtk::INVALID_LIST_POSITION).then_some(i as usize)
    }

    /// Selects row `i` as the user would (the tab's current time follows).
    pub fn select_row(&self, i: usize) {
        self.selection.set_selected(i as u32);
    }

    /// Selects, without echo, the first row at or after `t`, and scrolls to
    /// it.
    pub fn follow_time(&self, t: Time) {
        let i = self.times.borrow().partition_point(|&x| x < t);
        if i >= self.len() {
            return;
        }
        if self.selected() != Some(i) {
            self.programmatic.set(true);
            self.selection.set_selected(i as u32);
            self.programmatic.set(false);
        }
        if let Err(e) = self
            .list
            .activate_action("list.scroll-to-item", Some(&(i as u32).to_variant()))
        {
            eprintln!("traceloom: warning: cannot scroll the event list: {e}");
        }
    }
}
