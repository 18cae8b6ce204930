//! A tab's bars, as relm4 components: above the viewers the time bar
//! (window and current-time entries, zoom and bookmark buttons, the
//! bookmarks) and the filter and search bar ([`TabBars`]), below them
//! the whole-trace pass's progress with Cancel and Resume
//! ([`ProgressStrip`]).
//!
//! Their outputs are what the user asks of the tab ([`BarsOutput`],
//! [`ProgressOutput`]), forwarded to it as its messages; the tab reads
//! and writes the entries and the progress through the components'
//! models, handles to the widgets (times shown, filter errors, bookmarks,
//! progress).

use gtk4 as gtk;
use gtk4::prelude::*;
use relm4::{ComponentParts, ComponentSender, SimpleComponent};

/// The time bar's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeEntry {
    /// The window's start.
    Start,
    /// The window's end.
    End,
    /// The current time.
    Current,
}

/// What the time, filter and search bars ask of the tab.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BarsOutput {
    /// Enter in a time bar entry.
    TimeTyped(TimeEntry),
    /// Apply the filter bar's expression.
    ApplyFilter,
    /// Search the next (true) or previous matching event.
    Search(bool),
    /// Zoom to the whole trace.
    ZoomFit,
    /// Zoom to the selection.
    ZoomSelection,
    /// What a key of the viewers does (the zoom and bookmark buttons).
    Key(gtk::gdk::Key),
    /// Go to bookmark n of the drop-down.
    GoToBookmark(usize),
}

/// The time bar and the filter and search bar: the component's model, a
/// handle to their widgets.
#[derive(Clone)]
pub struct TabBars {
    /// The time bar (the tab adds its View menu at the end).
    pub time_bar: gtk::Box,
    /// The window's start.
    pub start_entry: gtk::Entry,
    /// The window's end.
    pub end_entry: gtk::Entry,
    /// The current time.
    pub current_entry: gtk::Entry,
    /// The event list's filter expression.
    pub filter_entry: gtk::Entry,
    /// The filter expression's error, shown inline.
    pub filter_error: gtk::Label,
    /// The search expression.
    pub search_entry: gtk::Entry,
    /// The bookmarks' drop-down (hidden without bookmarks).
    pub bookmarks_box: gtk::DropDown,
    /// The bookmarks' names.
    pub bookmarks_list: gtk::StringList,
}

impl std::fmt::Debug for TabBars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TabBars").finish_non_exhaustive()
    }
}

impl TabBars {
    /// Time bar entry `which`.
    pub fn entry(&self, which: TimeEntry) -> &gtk::Entry {
        match which {
            TimeEntry::Start => &self.start_entry,
            TimeEntry::End => &self.end_entry,
            TimeEntry::Current => &self.current_entry,
        }
    }
}

impl SimpleComponent for TabBars {
    type Init = ();
    /// Driven through its handle (see the module documentation).
    type Input = ();
    type Output = BarsOutput;
    /// The two bars, one above the other.
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        // The tab's own spacing between its rows.
        gtk::Box::new(gtk::Orientation::Vertical, 4)
    }

    fn init(_: (), root: gtk::Box, sender: ComponentSender<Self>) -> ComponentParts<Self> {
        let out = sender.output_sender();
        // Time bar.
        let time_bar = gtk::Box::new(gtk::Orientation::Horizontal, 6);
        time_bar.set_margin_start(6);
        time_bar.set_margin_end(6);
        time_bar.set_margin_top(4);
        let start_entry = labelled_entry(&time_bar, "Start", 20);
        let end_entry = labelled_entry(&time_bar, "End", 20);
        let current_entry = labelled_entry(&time_bar, "Current", 20);
        for (entry, which) in [
            (&start_entry, TimeEntry::Start),
            (&end_entry, TimeEntry::End),
            (&current_entry, TimeEntry::Current),
        ] {
            let out = out.clone();
            entry.connect_activate(move |_| out.emit(BarsOutput::TimeTyped(which)));
        }
        button(
            &time_bar,
            "Fit",
            "Zoom to the whole trace (F)",
            out,
            BarsOutput::ZoomFit,
        );
        button(
            &time_bar,
            "Selection",
            "Zoom to the selection (S)",
            out,
            BarsOutput::ZoomSelection,
        );
        use gtk::gdk::Key;
        button(
            &time_bar,
            "−",
            "Zoom out (-)",
            out,
            BarsOutput::Key(Key::minus),
        );
        button(
            &time_bar,
            "+",
            "Zoom in (+)",
            out,
            BarsOutput::Key(Key::plus),
        );
        button(
            &time_bar,
            "Bookmark",
            "Bookmark the current time (B)",
            out,
            BarsOutput::Key(Key::b),
        );
        let bookmarks_list = gtk::StringList::new(&[]);
        let bookmarks_box =
            gtk::DropDown::new(Some(bookmarks_list.clone()), None::<gtk::Expression>);
        bookmarks_box.set_tooltip_text(Some("Go to a bookmark"));
        bookmarks_box.set_visible(false);
        {
            let out = out.clone();
            bookmarks_box.connect_selected_notify(move |d| {
                out.emit(BarsOutput::GoToBookmark(d.selected() as usize))
            });
        }
        time_bar.append(&bookmarks_box);
        root.append(&time_bar);

        // Filter and search bar.
        let filter_bar = gtk::Box::new(gtk::Orientation::Horizontal, 6);
        filter_bar.set_margin_start(6);
        filter_bar.set_margin_end(6);
        let filter_entry = labelled_entry(&filter_bar, "Filter", 40);
        filter_entry.set_hexpand(true);
        filter_entry.set_placeholder_text(Some("e.g. event.name == \"sched_switch\" && cpu == 1"));
        {
            let out = out.clone();
            filter_entry.connect_activate(move |_| out.emit(BarsOutput::ApplyFilter));
        }
        button(
            &filter_bar,
            "Apply",
            "Filter the event list",
            out,
            BarsOutput::ApplyFilter,
        );
        let filter_error = gtk::Label::new(None);
        filter_error.add_css_class("error");
        filter_error.set_visible(false);
        filter_bar.append(&filter_error);
        let search_entry = labelled_entry(&filter_bar, "Search", 24);
        search_entry.set_placeholder_text(Some("filter expression"));
        {
            let out = out.clone();
            search_entry.connect_activate(move |_| out.emit(BarsOutput::Search(true)));
        }
        button(
            &filter_bar,
            "◀",
            "Previous matching event",
            out,
            BarsOutput::Search(false),
        );
        button(
            &filter_bar,
            "▶",
            "Next matching event",
            out,
            BarsOutput::Search(true),
        );
        root.append(&filter_bar);

        let model = TabBars {
            time_bar,
            start_entry,
            end_entry,
            current_entry,
            filter_entry,
            filter_error,
            search_entry,
            bookmarks_box,
            bookmarks_list,
        };
        ComponentParts { model, widgets: () }
    }
}

/// What the progress strip asks of the tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressOutput {
    /// Pause the whole-trace pass.
    Cancel,
    /// Resume it.
    Resume,
}

/// The progress strip's label once a pass has read every event and its
/// result is being made on a thread (a split pass's parts joined, the
/// store written): the views still show the last partial snapshot
/// meanwhile, 6 s on the 8 GB generated kernel trace.
pub const FINISHING: &str = "Every event read: finishing the analysis";

/// The whole-trace pass's progress with Cancel and Resume: the
/// component's model, a handle to its widgets. Hidden while no pass runs
/// or is paused.
#[derive(Clone)]
pub struct ProgressStrip {
    /// The strip.
    pub widget: gtk::Box,
    /// The pass's progress and what it is doing.
    pub progress: gtk::ProgressBar,
    /// Pauses the whole-trace pass.
    pub cancel_button: gtk::Button,
    /// Resumes the paused whole-trace pass.
    pub resume_button: gtk::Button,
}

impl std::fmt::Debug for ProgressStrip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressStrip").finish_non_exhaustive()
    }
}

impl ProgressStrip {
    /// Shows the pass's progress: `label`, `fraction` done, and whether
    /// it is paused (Resume offered instead of Cancel).
    pub fn show(&self, label: &str, fraction: f64, paused: bool) {
        self.cancel_button.set_visible(!paused);
        self.resume_button.set_visible(paused);
        // A new text makes GTK lay the window out again: only when it
        // changed (the percentage moves slowly on a large trace).
        if self.progress.text().as_deref() != Some(label) {
            self.progress.set_text(Some(label));
        }
        self.progress.set_fraction(fraction.clamp(0.0, 1.0));
        self.widget.set_visible(true);
    }

    /// Hides the strip (no pass runs).
    pub fn hide(&self) {
        self.widget.set_visible(false);
    }
}

impl SimpleComponent for ProgressStrip {
    type Init = ();
    /// Driven through its handle.
    type Input = ();
    type Output = ProgressOutput;
    type Root = gtk::Box;
    type Widgets = ();

    fn init_root() -> gtk::Box {
        gtk::Box::new(gtk::Orientation::Horizontal, 6)
    }

    fn init(_: (), widget: gtk::Box, sender: ComponentSender<Self>) -> ComponentParts<Self> {
        let out = sender.output_sender();
        widget.set_margin_start(6);
        widget.set_margin_end(6);
        widget.set_margin_bottom(4);
        let progress = gtk::ProgressBar::new();
        progress.set_show_text(true);
        progress.set_hexpand(true);
        widget.append(&progress);
        let cancel_button = button(
            &widget,
            "Cancel",
            "Pause the whole-trace analysis (Resume goes on from where it stopped)",
            out,
            ProgressOutput::Cancel,
        );
        let resume_button = button(
            &widget,
            "Resume",
            "Go on with the whole-trace analysis from where it stopped",
            out,
            ProgressOutput::Resume,
        );
        resume_button.set_visible(false);
        widget.set_visible(false);
        let model = ProgressStrip {
            widget,
            progress,
            cancel_button,
            resume_button,
        };
        ComponentParts { model, widgets: () }
    }
}

fn labelled_entry(bar: &gtk::Box, label: &str, width: i32) -> gtk::Entry {
    bar.append(&gtk::Label::new(Some(label)));
    let e = gtk::Entry::new();
    e.set_width_chars(width);
    bar.append(&e);
    e
}

/// A button of `bar` labelled `label` that sends `msg` to `out`.
fn button<M: Clone + 'static>(
    bar: &gtk::Box,
    label: &str,
    tip: &str,
    out: &relm4::Sender<M>,
    msg: M,
) -> gtk::Button {
    let b = gtk::Button::with_label(label);
    b.set_tooltip_text(Some(tip));
    let out = out.clone();
    b.connect_clicked(move |_| out.emit(msg.clone()));
    bar.append(&b);
    b
}
