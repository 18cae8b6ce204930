//! The control flow's rows toolbar: filter the threads (name, TID, PID; a
//! regular expression), sort them, hide the idle ones, collapse or expand
//! every process, switch the arrows, and follow the selected thread.
//!
//! It only edits the view's rows configuration
//! ([`TimeGraphView::update_rows`], which the view announces to the tab);
//! the tab renders the view with it. It is a relm4 component whose output
//! is following a thread ([`RowsOutput`]), forwarded to the tab.

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};
use traceloom_viewers::style::control_flow as cf;
use traceloom_viewers::style::TreeOrder;

use super::timegraph::TimeGraphView;

/// The sort orders offered, with their names in the drop-down.
const ORDERS: [(TreeOrder, &str); 4] = [
    (TreeOrder::Insertion, "First seen"),
    (TreeOrder::Id, "TID"),
    (TreeOrder::Label, "Name"),
    (TreeOrder::Weight, "CPU time"),
];

/// What the toolbar asks of the tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsOutput {
    /// Follow this thread (its TID), or stop following.
    Follow(Option<i64>),
}

/// The toolbar's widgets.
#[derive(Clone)]
pub struct RowsBar {
    /// The widget to pack (above the control flow).
    pub widget: gtk::Box,
    /// Rows filter.
    pub filter: gtk::SearchEntry,
    /// Sort order.
    pub order: gtk::DropDown,
    /// "Hide idle threads".
    pub hide_idle: gtk::CheckButton,
    /// Wake-up arrows on or off.
    pub wakeups: gtk::CheckButton,
    /// CPU execution-flow arrows on or off.
    pub cpu_flow: gtk::CheckButton,
    /// Follow the selected thread.
    pub follow: gtk::ToggleButton,
}

impl SimpleComponent for RowsBar {
    /// The view whose rows it edits.
    type Init = TimeGraphView;
    /// Driven by its own widgets only.
    type Input = ();
    type Output = RowsOutput;
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        gtk::Box::new(gtk::Orientation::Horizontal, 6)
    }

    fn init(
        view: TimeGraphView,
        root: gtk::Box,
        sender: ComponentSender<Self>,
    ) -> ComponentParts<Self> {
        let model = RowsBar::new(root, &view, sender.output_sender().clone());
        ComponentParts { model, widgets: () }
    }
}

impl std::fmt::Debug for RowsBar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowsBar").finish_non_exhaustive()
    }
}

impl RowsBar {
    /// A toolbar in `widget` editing `view`'s rows, asking `output` to
    /// follow a thread.
    fn new(widget: gtk::Box, view: &TimeGraphView, output: relm4::Sender<RowsOutput>) -> Self {
        view.enable_rows_configuration();
        widget.set_margin_start(4);
        widget.set_margin_end(4);

        let filter = gtk::SearchEntry::new();
        filter.set_placeholder_text(Some("Filter threads: name, TID, PID (regex)"));
        filter.set_width_chars(30);
        filter.set_tooltip_text(Some(
            "Shows the threads whose name, TID or PID matches (a \
             case-insensitive regular expression), under their process",
        ));
        let v = view.clone();
        filter.connect_search_changed(move |e| {
            let text = e.text().to_string();
            v.update_rows(|c| c.row_filter = text);
        });
        widget.append(&filter);

        let names: Vec<&str> = ORDERS.iter().map(|(_, n)| *n).collect();
        let order = gtk::DropDown::from_strings(&names);
        order.set_tooltip_text(Some("Order of the threads (CPU time: in the window)"));
        let v = view.clone();
        order.connect_selected_notify(move |d| {
            if let Some((o, _)) = ORDERS.get(d.selected() as usize) {
                v.update_rows(|c| c.order = *o);
            }
        });
        widget.append(&order);

        let hide_idle = gtk::CheckButton::with_label("Hide idle");
        hide_idle.set_tooltip_text(Some(
            "Hide the threads that did not run in the window, and the CPUs' idle threads",
        ));
        let v = view.clone();
        hide_idle.connect_toggled(move |b| {
            let on = b.is_active();
            v.update_rows(|c| c.hide_idle = on);
        });
        widget.append(&hide_idle);

        let collapse = gtk::Button::with_label("Collapse all");
        collapse.set_tooltip_text(Some("Show the processes only"));
        let v = view.clone();
        collapse.connect_clicked(move |_| v.collapse_all(true));
        widget.append(&collapse);
        let expand = gtk::Button::with_label("Expand all");
        expand.set_tooltip_text(Some("Show every thread under its process"));
        let v = view.clone();
        expand.connect_clicked(move |_| v.collapse_all(false));
        widget.append(&expand);

        let arrows = |label: &str, series: &'static str, tip: &str| {
            let b = gtk::CheckButton::with_label(label);
            b.set_active(view.rows().arrows_on(series));
            b.set_tooltip_text(Some(tip));
            let v = view.clone();
            b.connect_toggled(move |b| {
                let on = b.is_active();
                v.update_rows(|c| {
                    if on {
                        c.arrows_off.remove(series);
                    } else {
                        c.arrows_off.insert(series.to_owned());
                    }
                });
            });
            widget.append(&b);
            b
        };
        let wakeups = arrows(
            "Wake-ups",
            cf::ARROWS_WAKEUP,
            "Arrows from the thread that woke a thread to its next run",
        );
        let cpu_flow = arrows(
            "CPU flow",
            cf::ARROWS_CPU,
            "Arrows from each thread to the next one on its CPU",
        );

        let follow_button = gtk::ToggleButton::with_label("Follow thread");
        follow_button.set_tooltip_text(Some(
            "Highlight the selected thread (click its name) and show its events only",
        ));
        let v = view.clone();
        follow_button.connect_toggled(move |b| {
            if !b.is_active() {
                output.emit(RowsOutput::Follow(None));
                return;
            }
            let tid = v.selected_row().and_then(|(_, props)| {
                props
                    .iter()
                    .find(|(k, _)| k == "tid")
                    .and_then(|(_, t)| t.parse::<i64>().ok())
            });
            match tid {
                Some(tid) => output.emit(RowsOutput::Follow(Some(tid))),
                None => {
                    b.set_tooltip_text(Some(
                        "Select a thread first: click its name in the tree column",
                    ));
                    b.set_active(false);
                }
            }
        });
        widget.append(&follow_button);

        RowsBar {
            widget,
            filter,
            order,
            hide_idle,
            wakeups,
            cpu_flow,
            follow: follow_button,
        }
    }
}
