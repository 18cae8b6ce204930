//! The notebook the window's tabs live in, as a relm4 factory's parent
//! widget.
//!
//! relm4 0.11 knows how to put a factory's components into a `gtk::Box`,
//! a `gtk::Stack` or a `gtk::ListBox`, not into a `gtk::Notebook`, and
//! neither its `FactoryView` trait nor GTK's notebook are ours to join.
//! [`TabBook`] is a widget of our own holding a `gtk::Notebook` (a bin:
//! the notebook takes all of it), so that a `FactoryVecDeque` of tabs
//! appends, inserts and removes notebook pages.

use gtk4 as gtk;
use gtk4::prelude::*;
use gtk4::subclass::prelude::*;
use relm4::factory::FactoryView;

mod imp {
    use super::*;

    /// The widget's private part: the notebook it wraps.
    #[derive(Default)]
    pub struct TabBook {
        pub(super) notebook: gtk::Notebook,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for TabBook {
        const NAME: &'static str = "TraceloomTabBook";
        type Type = super::TabBook;
        type ParentType = gtk::Widget;

        fn class_init(klass: &mut Self::Class) {
            klass.set_layout_manager_type::<gtk::BinLayout>();
        }
    }

    impl ObjectImpl for TabBook {
        fn constructed(&self) {
            self.parent_constructed();
            self.notebook.set_parent(&*self.obj());
        }

        fn dispose(&self) {
            self.notebook.unparent();
        }
    }

    impl WidgetImpl for TabBook {}
}

glib::wrapper! {
    /// A notebook whose pages a relm4 factory manages (see the module
    /// documentation).
    pub struct TabBook(ObjectSubclass<imp::TabBook>)
        @extends gtk::Widget,
        @implements gtk::Buildable, gtk::ConstraintTarget;
}

impl Default for TabBook {
    fn default() -> Self {
        Self::new()
    }
}

impl TabBook {
    /// An empty notebook.
    pub fn new() -> Self {
        glib::Object::new()
    }

    /// The notebook itself (current page, tab labels, signals).
    pub fn notebook(&self) -> gtk::Notebook {
        self.imp().notebook.clone()
    }
}

impl FactoryView for TabBook {
    type Children = gtk::Widget;
    type ReturnedWidget = gtk::Widget;
    type Position = ();

    fn factory_remove(&self, widget: &gtk::Widget) {
        let notebook = &self.imp().notebook;
        if let Some(i) = notebook.page_num(widget) {
            notebook.remove_page(Some(i));
        }
    }

    fn factory_append(&self, widget: impl AsRef<gtk::Widget>, _: &()) -> gtk::Widget {
        let widget = widget.as_ref();
        self.imp()
            .notebook
            .append_page(widget, None::<&gtk::Widget>);
        widget.clone()
    }

    fn factory_prepend(&self, widget: impl AsRef<gtk::Widget>, _: &()) -> gtk::Widget {
        let widget = widget.as_ref();
        self.imp()
            .notebook
            .prepend_page(widget, None::<&gtk::Widget>);
        widget.clone()
    }

    fn factory_insert_after(
        &self,
        widget: impl AsRef<gtk::Widget>,
        _: &(),
        other: &gtk::Widget,
    ) -> gtk::Widget {
        let widget = widget.as_ref();
        let notebook = &self.imp().notebook;
        let at = notebook.page_num(other).map(|i| i + 1);
        notebook.insert_page(widget, None::<&gtk::Widget>, at);
        widget.clone()
    }

    fn returned_widget_to_child(returned: &gtk::Widget) -> gtk::Widget {
        returned.clone()
    }

    fn factory_move_after(&self, widget: &gtk::Widget, other: &gtk::Widget) {
        let notebook = &self.imp().notebook;
        let (Some(from), Some(to)) = (notebook.page_num(widget), notebook.page_num(other)) else {
            return;
        };
        let to = if from < to { to } else { to + 1 };
        notebook.reorder_child(widget, Some(to));
    }

    fn factory_move_start(&self, widget: &gtk::Widget) {
        self.imp().notebook.reorder_child(widget, Some(0));
    }
}
