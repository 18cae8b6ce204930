//! The detailed event list, scrolled by time as LTTV's redesign describes
//! it: a `gtk::ListView` shows the rows of the event-list model
//! (`traceloom_viewers::model::EventListModel`), one row per event in
//! columns (time, trace/CPU, event name, fields), and a vertical
//! `gtk::Scrollbar` beside it whose value is a *time* (offset from the
//! trace's first event): dragging it sends a far scroll ([`ListMove::ToTime`]).
//! The mouse wheel, the arrow keys and PageUp/PageDown send near scrolls
//! (lines and pages), which the model answers with seek-n-events.
//!
//! The view never scrolls the ListView itself: the model's page is sized to
//! the rows that fit ([`ListMove::Resize`]), and the list's own scrolling is
//! kept at its first row through the inner ListView's `list.scroll-to-item`
//! action (on GTK 4.8, setting the vadjustment programmatically can leave
//! the list blank until the next scroll).
//!
//! Rows are `gtk::StringObject`s holding the columns joined by a unit
//! separator, split again when a row is bound: this keeps the list model a
//! stock `gtk::StringList` (no GObject subclass) while the view shows real
//! columns.
//!
//! The viewer is a relm4 component whose outputs ([`ListOutput`]) are the
//! current time a selected row designates and the list's moves, forwarded
//! to its tab, which owns the model; its model, [`EventListView`], is a
//! handle the tab keeps to show the rows that come back.
//!
//! Selecting a row moves the tab's current time there; when the current time
//! moves elsewhere the list selects the first row at or after it, scrolling
//! there by time when it is not shown. Rows are told apart by their place in
//! the reading order ([`RowOrder`]), not by their time, which events on
//! several CPUs share.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use traceloom_base::Time;

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};

use super::Nav;

/// A move of the list asked by the user (or the view's resizing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMove {
    /// Far scroll: the first event at or after this time becomes the top
    /// row.
    ToTime(Time),
    /// The top row moves this many rows down.
    LinesDown(usize),
    /// The top row moves this many rows up.
    LinesUp(usize),
    /// One page down.
    PageDown,
    /// One page up.
    PageUp,
    /// The list now shows this many rows (keeping the top row).
    Resize(usize),
}

/// What the list asks of its tab.
#[derive(Debug, Clone, PartialEq)]
pub enum ListOutput {
    /// Navigation: a selected row's time becomes the current time.
    Nav(Nav),
    /// Move the list (the tab owns the model).
    Move(ListMove),
}

/// Rows the mouse wheel moves per notch.
pub const WHEEL_LINES: f64 = 3.0;
/// Height of a row assumed until one is drawn (pixels).
const DEFAULT_ROW_HEIGHT: i32 = 22;
/// How often the list checks whether its page size changed.
const RESIZE_CHECK: std::time::Duration = std::time::Duration::from_millis(200);
/// Rows shown before the list is laid out.
pub const DEFAULT_PAGE: usize = 30;
/// Cells longer than this many bytes show their whole text as a tooltip.
const LONG_CELL: usize = 60;

/// Separates the columns inside a row's string.
const SEP: char = '\u{1f}';

/// Column titles and initial widths (in pixels; the last column takes the
/// rest; the others are resized by dragging their header's right edge).
/// Pixels rather than `width_chars`: GTK sizes those from the font's widest
/// glyphs, which made the list much wider than its text.
pub const COLUMNS: [(&str, i32); 7] = [
    ("Time", 175),
    ("CPU / Trace", 110),
    ("TID", 56),
    ("PID", 56),
    ("Process", 110),
    ("Event", 170),
    ("Fields", 60),
];

/// Indices of the columns in [`COLUMNS`] and [`ListRow::columns`].
pub mod col {
    /// Time of day.
    pub const TIME: usize = 0;
    /// CPU and trace name (a Pajé event's container).
    pub const CPU: usize = 1;
    /// Thread id.
    pub const TID: usize = 2;
    /// Process id.
    pub const PID: usize = 3;
    /// Process name.
    pub const PROCESS: usize = 4;
    /// Event name.
    pub const EVENT: usize = 5;
    /// Context and payload fields.
    pub const FIELDS: usize = 6;
}

/// Narrowest a column can be dragged to.
const MIN_COLUMN: i32 = 30;
/// How near a header's right edge a drag resizes it (pixels).
const EDGE: f64 = 6.0;

/// One row of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRow {
    /// Where the row's event comes in the list's reading order.
    pub order: RowOrder,
    /// Column texts, in [`COLUMNS`] order.
    pub columns: [String; 7],
}

impl ListRow {
    /// Event time (ns).
    pub fn time(&self) -> Time {
        self.order.time
    }
}

/// Where an event comes in the list's reading order: its time, then what
/// orders the events of one time (for a CTF trace the stream's rank in
/// the merge, the stream, the packet and the event's index in it). Real
/// traces have events of the same ns on several CPUs, so the selection
/// is kept, and a search goes on from it, by this and not by the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowOrder {
    /// Event time (ns).
    pub time: Time,
    /// Order among the events of `time`.
    pub tie: [u64; 3],
}

impl RowOrder {
    /// Before every event of `time`.
    pub fn first_at(time: Time) -> Self {
        RowOrder { time, tie: [0; 3] }
    }

    /// After every event of `time`.
    pub fn last_at(time: Time) -> Self {
        RowOrder {
            time,
            tie: [u64::MAX; 3],
        }
    }
}

/// Where the selection goes once the next rows arrive: the arrow keys
/// moving past the first or last row shown scroll by a line and select
/// the new edge row; Home and End select the trace's first or last event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SelectAfter {
    First,
    Last,
}

/// The event list widget.
#[derive(Clone)]
pub struct EventListView {
    /// The widget to pack (header above the scrolled list).
    pub widget: gtk::Box,
    /// The list itself.
    pub list: gtk::ListView,
    /// The time scrollbar (its value is the top row's time minus the
    /// trace's first event time).
    pub scrollbar: gtk::Scrollbar,
    adjustment: gtk::Adjustment,
    /// Time of the trace's first event (the scrollbar's 0).
    origin: Rc<Cell<Time>>,
    /// The component's output, for the tab.
    output: relm4::Sender<ListOutput>,
    /// Moves sent and not handled yet by the tab.
    queued: Rc<Cell<usize>>,
    /// When the frame showing the rows set last began.
    rows_drawn_at: Rc<Cell<Option<std::time::Instant>>>,
    /// Rows the model was last told to show.
    page: Rc<Cell<usize>>,
    store: gtk::StringList,
    selection: gtk::SingleSelection,
    /// The shown rows' places, in order.
    orders: Rc<RefCell<Vec<RowOrder>>>,
    /// The event to select once shown (a search's match): moving the
    /// current time selects the first row of that time otherwise.
    wanted: Cell<Option<RowOrder>>,
    /// The time [`follow_time`](EventListView::follow_time) scrolled to,
    /// until the rows come: they start after it when no event is at it.
    scrolled_to: Cell<Option<Time>>,
    /// The rows shown answer the last move (not a page shown while it
    /// reads).
    settled: Cell<bool>,
    /// Set while the selection is changed by the program, so that it is
    /// not sent back as a user's choice.
    programmatic: Rc<Cell<bool>>,
    status: gtk::Label,
    /// Column widths, shared by the header and every row.
    widths: Rc<RefCell<Vec<i32>>>,
    /// The header's labels and the rows' boxes, resized with the columns.
    header: gtk::Box,
    rows: Rc<RefCell<Vec<glib::WeakRef<gtk::Box>>>>,
    select_after: Rc<Cell<Option<SelectAfter>>>,
    /// The selected event's fields as a tree (copyable text).
    pub details: gtk::TextView,
    /// The widget to pack for the details (scrolling `details`).
    pub details_widget: gtk::ScrolledWindow,
}

impl EventListView {
    /// An empty list in `widget` sending the chosen event's time and the
    /// user's scrolling to `output`.
    fn new(widget: gtk::Box, output: relm4::Sender<ListOutput>) -> Self {
        let header = gtk::Box::new(gtk::Orientation::Horizontal, 8);
        header.set_margin_start(6);
        let widths: Rc<RefCell<Vec<i32>>> =
            Rc::new(RefCell::new(COLUMNS.iter().map(|(_, w)| *w).collect()));
        for (i, (title, width)) in COLUMNS.into_iter().enumerate() {
            let l = gtk::Label::new(None);
            l.set_markup(&format!("<b>{title}</b>"));
            l.set_xalign(0.0);
            l.set_size_request(width, -1);
            l.set_ellipsize(gtk::pango::EllipsizeMode::End);
            // The column's width, not the text's: a long text must not
            // widen its cell past the header's.
            l.set_max_width_chars(1);
            // The last column takes what is left.
            l.set_hexpand(i + 1 == COLUMNS.len());
            if i + 1 < COLUMNS.len() {
                l.set_tooltip_text(Some("Drag the right edge to resize"));
            }
            header.append(&l);
        }
        let store = gtk::StringList::new(&[]);
        let selection = gtk::SingleSelection::new(Some(store.clone()));
        selection.set_autoselect(false);
        selection.set_can_unselect(true);
        let factory = gtk::SignalListItemFactory::new();
        let rows: Rc<RefCell<Vec<glib::WeakRef<gtk::Box>>>> = Rc::default();
        let (w, r) = (widths.clone(), rows.clone());
        factory.connect_setup(move |_, item| {
            let row = gtk::Box::new(gtk::Orientation::Horizontal, 8);
            for (i, width) in w.borrow().iter().enumerate() {
                // An inscription, not a label: its size is the column's
                // whatever its text, so a page of rows is laid out without
                // shaping every cell's text to measure it (a label's
                // measure did, 38-50 ms of the tab's first layout).
                let l = gtk::Inscription::new(None);
                l.set_xalign(0.0);
                l.set_min_chars(1);
                l.set_nat_chars(1);
                l.set_size_request(*width, -1);
                l.set_hexpand(i + 1 == COLUMNS.len());
                l.set_text_overflow(gtk::InscriptionOverflow::EllipsizeEnd);
                l.add_css_class("monospace");
                // The whole text of a long cell, asked for when the
                // pointer rests on it: a tooltip set at each bind makes
                // GTK query the pointer from the display server, a round
                // trip per label (a page of 30 rows took 87 ms of the main
                // loop under Xvfb, 22 ms without them).
                l.set_has_tooltip(true);
                l.connect_query_tooltip(|l, _, _, _, tooltip| {
                    let text = l.text().unwrap_or_default();
                    let long = text.len() > LONG_CELL;
                    if long {
                        tooltip.set_text(Some(&text));
                    }
                    long
                });
                row.append(&l);
            }
            let mut rows = r.borrow_mut();
            rows.retain(|w| w.upgrade().is_some());
            rows.push(row.downgrade());
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
                if let Some(l) = w.downcast_ref::<gtk::Inscription>() {
                    let t = parts.next().unwrap_or("");
                    l.set_text(Some(t));
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
        // Vertically, the list scrolls by time through `scrollbar`; the
        // scrolled window only clips.
        scrolled.set_policy(gtk::PolicyType::Never, gtk::PolicyType::External);
        scrolled.set_hexpand(true);
        scrolled.set_child(Some(&list));
        let adjustment = gtk::Adjustment::new(0.0, 0.0, 1.0, 1.0, 1.0, 1.0);
        let scrollbar = gtk::Scrollbar::new(gtk::Orientation::Vertical, Some(&adjustment));
        scrollbar.set_tooltip_text(Some("Time of the first row shown"));
        let body = gtk::Box::new(gtk::Orientation::Horizontal, 0);
        body.set_vexpand(true);
        body.append(&scrolled);
        body.append(&scrollbar);
        let status = gtk::Label::new(Some("Reading the trace…"));
        status.set_xalign(0.0);
        // A long status must not widen the pane (GTK would clip the list).
        status.set_ellipsize(gtk::pango::EllipsizeMode::End);
        status.set_margin_start(6);
        widget.append(&header);
        widget.append(&body);
        widget.append(&status);
        // The selected event in full, for the tab to place: its fields as
        // a tree of indented lines, selectable and copyable.
        let details = gtk::TextView::new();
        details.set_editable(false);
        details.set_cursor_visible(false);
        details.set_monospace(true);
        details.set_wrap_mode(gtk::WrapMode::WordChar);
        details.set_left_margin(6);
        details
            .buffer()
            .set_text("Select an event in the list to see its fields.");
        let details_widget = gtk::ScrolledWindow::new();
        details_widget.set_child(Some(&details));
        details_widget.set_vexpand(true);

        let orders: Rc<RefCell<Vec<RowOrder>>> = Rc::default();
        let programmatic = Rc::new(Cell::new(false));
        let (o, p, nav) = (orders.clone(), programmatic.clone(), output.clone());
        selection.connect_selected_notify(move |sel| {
            if p.get() {
                return;
            }
            let i = sel.selected();
            let time = o.borrow().get(i as usize).map(|o| o.time);
            if let Some(time) = time {
                nav.emit(ListOutput::Nav(Nav::Current(time)));
            }
        });
        let d = details.clone();
        selection.connect_selected_item_notify(move |sel| {
            let text = sel
                .selected_item()
                .and_then(|o| o.downcast::<gtk::StringObject>().ok())
                .map(|s| details_text(&s.string()))
                .unwrap_or_default();
            d.buffer().set_text(&text);
        });
        let view = EventListView {
            widget,
            list,
            scrollbar,
            adjustment,
            origin: Rc::new(Cell::new(0)),
            output,
            queued: Rc::default(),
            rows_drawn_at: Rc::default(),
            page: Rc::new(Cell::new(0)),
            store,
            selection,
            orders,
            wanted: Cell::new(None),
            scrolled_to: Cell::new(None),
            settled: Cell::new(true),
            programmatic,
            status,
            widths,
            header,
            rows,
            select_after: Rc::default(),
            details,
            details_widget,
        };
        view.connect_input(&scrolled);
        view.connect_column_resizing();
        view
    }

    /// Asks the tab for move `mv`, the user's (or
    /// [`follow_time`](Self::follow_time)'s): the rows it brings answer no
    /// earlier scroll to a time.
    fn send_move(&self, mv: ListMove) {
        self.scrolled_to.set(None);
        send_move(&self.output, &self.queued, mv);
    }

    /// How many of the list's moves the tab has not handled yet.
    pub fn moves_queued(&self) -> usize {
        self.queued.get()
    }

    /// The tab handled one of the list's moves.
    pub fn move_handled(&self) {
        self.queued.set(self.queued.get().saturating_sub(1));
    }

    /// Connects the scrollbar, the wheel, the keys and the resizing.
    fn connect_input(&self, scrolled: &gtk::ScrolledWindow) {
        let v = self.clone();
        self.adjustment.connect_value_changed(move |adj| {
            if v.programmatic.get() {
                return;
            }
            let t = v.origin.get().saturating_add(adj.value().max(0.0) as i64);
            v.send_move(ListMove::ToTime(t));
        });
        let wheel = gtk::EventControllerScroll::new(gtk::EventControllerScrollFlags::VERTICAL);
        wheel.set_propagation_phase(gtk::PropagationPhase::Capture);
        let v = self.clone();
        wheel.connect_scroll(move |_, _, dy| {
            v.wheel(dy);
            glib::Propagation::Stop
        });
        scrolled.add_controller(wheel);
        let keys = gtk::EventControllerKey::new();
        keys.set_propagation_phase(gtk::PropagationPhase::Capture);
        let v = self.clone();
        keys.connect_key_pressed(move |_, key, _, _| {
            if v.key(key) {
                glib::Propagation::Stop
            } else {
                glib::Propagation::Proceed
            }
        });
        self.widget.add_controller(keys);
        // The model's page follows the rows that fit, checked a few times a
        // second (a tick callback would keep the frame clock running).
        let (sw, list) = (scrolled.downgrade(), self.list.downgrade());
        let (page, output, queued) = (self.page.clone(), self.output.clone(), self.queued.clone());
        let row_height = Cell::new(0);
        glib::timeout_add_local(RESIZE_CHECK, move || {
            let (Some(sw), Some(list)) = (sw.upgrade(), list.upgrade()) else {
                return glib::ControlFlow::Break;
            };
            let h = sw.height();
            if h > 0 && sw.is_mapped() {
                // Rows whose text falls back on a taller font are higher:
                // the tallest row seen sizes the page, so that the page
                // does not change with the rows shown. A row's height
                // counts its padding and border (its bounds, not its
                // content height), so that the page's last row is whole.
                let mut child = list.first_child();
                while let Some(c) = child {
                    if let Some(b) = c.compute_bounds(&list) {
                        row_height.set(row_height.get().max(b.height().ceil() as i32));
                    }
                    child = c.next_sibling();
                }
                let row = match row_height.get() {
                    0 => DEFAULT_ROW_HEIGHT,
                    r => r,
                };
                let n = (h / row).max(1) as usize;
                if n != page.get() {
                    page.set(n);
                    send_move(&output, &queued, ListMove::Resize(n));
                }
            }
            glib::ControlFlow::Continue
        });
    }

    /// Dragging near a header's right edge resizes its column (the pointer
    /// turns into a resize arrow there).
    fn connect_column_resizing(&self) {
        let drag = gtk::GestureDrag::new();
        let grabbed: Rc<Cell<Option<(usize, i32)>>> = Rc::default();
        let (v, g) = (self.clone(), grabbed.clone());
        drag.connect_drag_begin(move |_, x, _| g.set(v.edge_at(x).map(|c| (c, v.column_width(c)))));
        let (v, g) = (self.clone(), grabbed.clone());
        drag.connect_drag_update(move |_, dx, _| {
            if let Some((c, w)) = g.get() {
                v.set_column_width(c, w + dx as i32);
            }
        });
        drag.connect_drag_end(move |_, _, _| grabbed.set(None));
        self.header.add_controller(drag);
        let motion = gtk::EventControllerMotion::new();
        let v = self.clone();
        motion.connect_motion(move |_, x, _| {
            let cursor = v.edge_at(x).map(|_| "col-resize");
            v.header.set_cursor_from_name(cursor);
        });
        self.header.add_controller(motion);
    }

    /// The column whose right edge is within [`EDGE`] of header x `x`.
    fn edge_at(&self, x: f64) -> Option<usize> {
        let mut child = self.header.first_child();
        let mut i = 0;
        while let Some(w) = child {
            if i + 1 < COLUMNS.len() {
                let right = w.allocation().x() as f64 + w.width() as f64;
                if (x - right).abs() <= EDGE {
                    return Some(i);
                }
            }
            child = w.next_sibling();
            i += 1;
        }
        None
    }

    /// Width of column `c` in pixels.
    pub fn column_width(&self, c: usize) -> i32 {
        self.widths.borrow().get(c).copied().unwrap_or(0)
    }

    /// Resizes column `c` (not the last, which takes the rest) to `width`
    /// pixels, at least [`MIN_COLUMN`], in the header and every row.
    pub fn set_column_width(&self, c: usize, width: i32) {
        if c + 1 >= COLUMNS.len() {
            return;
        }
        let width = width.max(MIN_COLUMN);
        self.widths.borrow_mut()[c] = width;
        let resize = |row: &gtk::Widget| {
            let mut child = row.first_child();
            let mut i = 0;
            while let Some(w) = child {
                if i == c {
                    w.set_size_request(width, -1);
                }
                child = w.next_sibling();
                i += 1;
            }
        };
        resize(self.header.upcast_ref());
        for row in self.rows.borrow().iter().filter_map(|r| r.upgrade()) {
            resize(row.upcast_ref());
        }
    }

    /// A wheel move of `dy` notches (positive: down).
    pub fn wheel(&self, dy: f64) {
        let lines = (dy.abs() * WHEEL_LINES).round().max(1.0) as usize;
        if dy > 0.0 {
            self.send_move(ListMove::LinesDown(lines));
        } else if dy < 0.0 {
            self.send_move(ListMove::LinesUp(lines));
        }
    }

    /// Handles a key of the list: Up/Down move the selection one row
    /// (scrolling a line at the first or last row shown), PageUp/PageDown
    /// one page, Home/End select the first/last events of the trace.
    /// Returns whether the key was used.
    pub fn key(&self, key: gtk::gdk::Key) -> bool {
        use gtk::gdk::Key;
        let mv = match key {
            Key::Home | Key::KP_Home => {
                self.select_after.set(Some(SelectAfter::First));
                ListMove::ToTime(Time::MIN)
            }
            Key::End | Key::KP_End => {
                self.select_after.set(Some(SelectAfter::Last));
                ListMove::ToTime(Time::MAX)
            }
            Key::Up | Key::KP_Up => match self.selected() {
                Some(i) if i > 0 => {
                    self.select_row(i - 1);
                    return true;
                }
                _ => {
                    self.select_after.set(Some(SelectAfter::First));
                    ListMove::LinesUp(1)
                }
            },
            Key::Down | Key::KP_Down => match self.selected() {
                Some(i) if i + 1 < self.len() => {
                    self.select_row(i + 1);
                    return true;
                }
                None if !self.is_empty() => {
                    self.select_row(0);
                    return true;
                }
                _ => {
                    self.select_after.set(Some(SelectAfter::Last));
                    ListMove::LinesDown(1)
                }
            },
            Key::Page_Up | Key::KP_Page_Up => ListMove::PageUp,
            Key::Page_Down | Key::KP_Page_Down => ListMove::PageDown,
            _ => return false,
        };
        self.send_move(mv);
        true
    }

    /// Sets the scrollbar's range to the trace's span.
    pub fn set_span(&self, first: Time, last: Time) {
        self.origin.set(first);
        let len = last.saturating_sub(first).max(1) as f64;
        // The slider stands for a fiftieth of the trace.
        let page = (len / 50.0).max(1.0);
        self.programmatic.set(true);
        self.adjustment.configure(
            self.adjustment.value().min(len),
            0.0,
            len + page,
            (len / 10_000.0).max(1.0),
            page,
            page,
        );
        self.programmatic.set(false);
    }

    /// Rows the model is asked to show (0 before the first layout).
    pub fn page(&self) -> usize {
        self.page.get()
    }

    /// The scrollbar's value as a time (what a drag asked last, or the top
    /// row's time).
    pub fn scrollbar_time(&self) -> Time {
        self.origin
            .get()
            .saturating_add(self.adjustment.value() as i64)
    }

    /// Drags the scrollbar to time `t`, as the user would.
    pub fn drag_to(&self, t: Time) {
        self.adjustment
            .set_value(t.saturating_sub(self.origin.get()) as f64);
    }

    /// Shows the model's `rows`; `top` is the top row's time, which the
    /// scrollbar then shows.
    pub fn show(&self, rows: &[ListRow], status: &str, top: Option<Time>) {
        let selected = self.selected().and_then(|i| self.order_of(i));
        self.set_rows(rows, status);
        self.settled.set(top.is_some());
        self.rows_drawn_at.set(None);
        let drawn_at = self.rows_drawn_at.clone();
        self.list.add_tick_callback(move |_, _| {
            drawn_at.set(Some(std::time::Instant::now()));
            glib::ControlFlow::Break
        });
        self.programmatic.set(true);
        if let Some(t) = top {
            self.adjustment
                .set_value(t.saturating_sub(self.origin.get()) as f64);
        }
        // Keep the selected event selected when it is still shown (the
        // event, not the first of its time).
        if let Some(o) = selected {
            if let Some(i) = self.index_of(o) {
                self.selection.set_selected(i as u32);
            }
        }
        self.programmatic.set(false);
        // An arrow key went past an edge row: the new edge row is the
        // selection (and the current time), once the line scroll is done.
        if !rows.is_empty() && !status.contains("reading") {
            match self.select_after.take() {
                Some(SelectAfter::First) => self.select_row(0),
                Some(SelectAfter::Last) => self.select_row(rows.len() - 1),
                None => {}
            }
        }
        if !rows.is_empty() {
            if let Some(adj) = self.list.vadjustment() {
                if adj.value() > 0.0 {
                    let _ = self
                        .list
                        .activate_action("list.scroll-to-item", Some(&0u32.to_variant()));
                }
            }
        }
    }

    /// Replaces the rows; `status` describes them (range, count, limits).
    pub fn set_rows(&self, rows: &[ListRow], status: &str) {
        let strings: Vec<String> = rows
            .iter()
            .map(|r| r.columns.join(&SEP.to_string()))
            .collect();
        self.status.set_text(status);
        let same = strings.len() == self.store.n_items() as usize
            && strings
                .iter()
                .enumerate()
                .all(|(i, s)| self.store.string(i as u32).as_deref() == Some(s.as_str()));
        if same {
            // Only the status changed (a move started, or a page already
            // shown early): no new rows to lay out.
            return;
        }
        let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
        self.programmatic.set(true);
        self.store.splice(0, self.store.n_items(), &refs);
        self.selection.set_selected(gtk::INVALID_LIST_POSITION);
        self.programmatic.set(false);
        *self.orders.borrow_mut() = rows.iter().map(|r| r.order).collect();
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.orders.borrow().len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When the frame that shows the rows given last began (`None`
    /// until it did): what the user waits for after a move.
    pub fn rows_drawn_at(&self) -> Option<std::time::Instant> {
        self.rows_drawn_at.get()
    }

    /// Time of row `i`.
    pub fn time_of(&self, i: usize) -> Option<Time> {
        self.order_of(i).map(|o| o.time)
    }

    /// Place of row `i`'s event in the reading order.
    pub fn order_of(&self, i: usize) -> Option<RowOrder> {
        self.orders.borrow().get(i).copied()
    }

    /// The row showing the event at `order`, if shown.
    fn index_of(&self, order: RowOrder) -> Option<usize> {
        self.orders.borrow().iter().position(|&o| o == order)
    }

    /// Text of row `i`, columns separated by spaces.
    pub fn row_text(&self, i: usize) -> Option<String> {
        self.store.string(i as u32).map(|s| s.replace(SEP, "  "))
    }

    /// Text of column `c` of row `i` (see [`col`]).
    pub fn column(&self, i: usize, c: usize) -> Option<String> {
        self.store
            .string(i as u32)
            .and_then(|s| s.split(SEP).nth(c).map(str::to_owned))
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

    /// Selects, without echo, the first row at or after `t`, unless the
    /// selected row is already at `t` (another event of the same time:
    /// the arrow keys step through them) or the event the list waits for
    /// ([`select_event`](Self::select_event)) is; when `t` is not among
    /// the rows shown, scrolls there by time first.
    pub fn follow_time(&self, t: Time) {
        let shown = self.shows(t);
        if !shown {
            self.send_move(ListMove::ToTime(t));
            self.scrolled_to.set(Some(t));
        } else if self.scrolled_to.get() == Some(t) {
            self.scrolled_to.set(None);
        }
        let i = match self.wanted.get() {
            Some(o) if o.time == t => match self.index_of(o) {
                Some(i) => {
                    self.wanted.set(None);
                    i
                }
                // Not among these rows yet: the scroll brings it.
                None if !shown => return,
                None => {
                    self.wanted.set(None);
                    self.orders.borrow().partition_point(|o| o.time < t)
                }
            },
            _ => {
                self.wanted.set(None);
                if self.selected_at(t).is_some() {
                    return;
                }
                self.orders.borrow().partition_point(|o| o.time < t)
            }
        };
        if i >= self.len() {
            return;
        }
        if self.selected() != Some(i) {
            self.programmatic.set(true);
            self.selection.set_selected(i as u32);
            self.programmatic.set(false);
        }
    }

    /// Selects, without echo, the row of the event at `order` (a search's
    /// match), now when it is shown, else once the tab's move to its time
    /// ([`follow_time`](Self::follow_time)) shows it.
    pub fn select_event(&self, order: RowOrder) {
        self.wanted.set(Some(order));
        if let Some(i) = self.index_of(order) {
            self.wanted.set(None);
            self.programmatic.set(true);
            self.selection.set_selected(i as u32);
            self.programmatic.set(false);
        }
    }

    /// Whether the rows shown are where time `t` is: they span it, or
    /// they are the answer to a scroll to it (starting after it when no
    /// event is at `t`).
    pub fn shows(&self, t: Time) -> bool {
        let answered =
            self.scrolled_to.get() == Some(t) && self.queued.get() == 0 && self.settled.get();
        let orders = self.orders.borrow();
        match (orders.first(), orders.last()) {
            (Some(a), Some(b)) => (a.time <= t || answered) && t <= b.time,
            _ => false,
        }
    }

    /// The selected row's event, when it is at `t`.
    pub fn selected_at(&self, t: Time) -> Option<RowOrder> {
        self.selected()
            .and_then(|i| self.order_of(i))
            .filter(|o| o.time == t)
    }
}

/// Sends move `mv` to `output`, counting it in `queued` until the tab
/// handles it.
fn send_move(output: &relm4::Sender<ListOutput>, queued: &Cell<usize>, mv: ListMove) {
    queued.set(queued.get() + 1);
    output.emit(ListOutput::Move(mv));
}

impl SimpleComponent for EventListView {
    type Init = ();
    /// Driven through its handle (see the module documentation).
    type Input = ();
    type Output = ListOutput;
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        gtk::Box::new(gtk::Orientation::Vertical, 0)
    }

    fn init(_: (), root: gtk::Box, sender: ComponentSender<Self>) -> ComponentParts<Self> {
        let model = EventListView::new(root, sender.output_sender().clone());
        ComponentParts { model, widgets: () }
    }
}

impl std::fmt::Debug for EventListView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventListView").finish_non_exhaustive()
    }
}

/// The details pane's text for a row (its columns joined by [`SEP`]): the
/// event's name, time, CPU and thread, then its fields as a tree, one
/// member per line, nested structures and arrays indented.
pub fn details_text(row: &str) -> String {
    let c: Vec<&str> = row.split(SEP).collect();
    let get = |i: usize| c.get(i).copied().unwrap_or("");
    let mut out = format!(
        "{} at {}  {}\nTID {}  PID {}  {}\n",
        get(col::EVENT),
        get(col::TIME),
        get(col::CPU),
        get(col::TID),
        get(col::PID),
        get(col::PROCESS)
    );
    for (depth, line) in traceloom_viewers::model::fields::fields_tree(get(col::FIELDS)) {
        out.push_str(&"  ".repeat(depth));
        out.push_str(&line);
        out.push('\n');
    }
    out
}
