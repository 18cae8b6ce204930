//! The main window (a relm4 component): header bar with the File menu,
//! an info bar for errors, and a notebook of tabs, each a [`TabPage`]
//! factory component whose errors and close requests come back as
//! messages.

use std::path::PathBuf;
use std::rc::Rc;

use gtk4 as gtk;
use gtk4::gio;
use gtk4::prelude::*;
use relm4::factory::FactoryVecDeque;
use relm4::{Component, ComponentParts, ComponentSender};
use traceloom_viewers::draw::TimeGraphOptions;
use traceloom_viewers::export::{self, TimeGraphFigure};

use crate::config::{self, AppState};
use crate::first_paint;
use crate::tab::{self, Tab, TabOutput, TabPage};
use crate::tab_book::TabBook;

/// What the window opens first.
#[derive(Debug, Clone, Default)]
pub struct AppInit {
    /// Traceset of the first tab (none: an empty window).
    pub paths: Vec<PathBuf>,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Scalable vector graphics (text kept as text).
    Svg,
    /// PNG image.
    Png,
}

/// Messages of the window.
#[derive(Debug)]
pub enum Msg {
    /// Open a traceset in a new tab.
    Open(Vec<PathBuf>),
    /// Open the traceset given at start (counted in `App::opening`
    /// already).
    OpenGiven(Vec<PathBuf>),
    /// Ask for a trace file to open: a Pajé trace, or a CTF trace's
    /// `metadata` (which opens its directory).
    OpenDialog,
    /// Ask for a CTF trace directory to open.
    OpenFolderDialog,
    /// Ask for a trace directory to add to the current tab's traceset.
    AddDialog,
    /// Add a trace to the current tab's traceset (reopens the tab).
    AddTrace(PathBuf),
    /// Open recent traceset number n.
    OpenRecent(usize),
    /// Ask where to export the current view.
    ExportDialog(ExportFormat),
    /// Export the current view to this file.
    Export(PathBuf, ExportFormat),
    /// Show an error in the info bar.
    Error(String),
    /// Close tab n.
    CloseTab(usize),
    /// Close the tab shown (Ctrl+W).
    CloseCurrentTab,
    /// The notebook shows another tab: the title follows it.
    TabShown,
    /// Show the About dialog.
    About,
    /// Show the keyboard and mouse shortcuts (F1, Ctrl+?).
    Shortcuts,
    /// Type a time to go to (Ctrl+G): the time bar's current-time entry.
    GoToTime,
    /// Close the window (Ctrl+Q).
    Quit,
}

/// What a background command of the window gives back.
#[derive(Debug)]
pub enum AppCommand {
    /// The files of a traceset asked for were read ([`tab::read`], off
    /// the main loop): the tab can be made.
    Read(Result<tab::TracesetRead, String>),
}

/// The window's model.
pub struct App {
    /// Open tabs, in notebook order.
    tabs: FactoryVecDeque<TabPage>,
    state: AppState,
    /// The file chooser being shown; native dialogs must be kept alive.
    dialog: Option<gtk::FileChooserNative>,
    window: gtk::ApplicationWindow,
    /// Tracesets being read on a thread: the empty window's hint waits
    /// for them.
    opening: usize,
}

/// Widgets the updates touch.
pub struct AppWidgets {
    notebook: gtk::Notebook,
    /// Shown instead of the notebook while no tab is open: a hint, an
    /// Open button and the recent tracesets.
    empty_hint: gtk::Box,
    /// The recent tracesets' buttons in `empty_hint`.
    recent_buttons: gtk::Box,
    info_bar: gtk::InfoBar,
    info_label: gtk::Label,
    recent_menu: gio::Menu,
}

impl App {
    /// Tracesets being read to open (the ones given at start count from
    /// the start): the tests wait for them.
    pub fn opening(&self) -> usize {
        self.opening
    }

    /// Tab `i`, in notebook order.
    pub fn tab(&self, i: usize) -> Option<Rc<Tab>> {
        self.tabs.get(i).map(TabPage::tab)
    }

    /// How many tabs are open.
    pub fn tab_count(&self) -> usize {
        self.tabs.len()
    }

    /// The tab in front.
    pub fn current_tab(&self, notebook: &gtk::Notebook) -> Option<Rc<Tab>> {
        let i = notebook.current_page()? as usize;
        self.tab(i)
    }

    /// Opens `paths` in a new tab, their files read on a thread: a large
    /// trace (every page of a Pajé file is read to find the files it
    /// names) must not freeze the window, let alone one on a slow disk.
    fn open_later(
        &mut self,
        paths: Vec<PathBuf>,
        widgets: &AppWidgets,
        sender: &ComponentSender<Self>,
    ) {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        show_message(
            widgets,
            gtk::MessageType::Info,
            &format!("Opening {}…", shown.join(", ")),
        );
        self.opening += 1;
        sender.spawn_oneshot_command(move || AppCommand::Read(tab::read(paths)));
    }

    /// A new tab of `opened`, or its error in the info bar (the caller
    /// brings the title and the empty window's hint up to date).
    fn add_tab(&mut self, opened: Result<tab::Opened, String>, widgets: &AppWidgets) {
        match opened {
            Ok(opened) => {
                let paths = opened.paths.clone();
                let warning = opened.config_warning.clone();
                let i = {
                    let mut tabs = self.tabs.guard();
                    tabs.push_back(opened);
                    tabs.len() - 1
                };
                widgets.notebook.set_current_page(Some(i as u32));
                if let Some(w) = warning {
                    show_message(widgets, gtk::MessageType::Warning, &format!("Warning: {w}"));
                }
                self.state.remember(&paths);
                self.save_state();
                self.rebuild_recent(widgets);
            }
            Err(e) => show_error(widgets, &format!("Cannot open the trace: {e}")),
        }
    }

    /// The window's title: the application and the tab shown; with no
    /// tab, a hint in place of the notebook.
    fn update_title(&self, widgets: &AppWidgets) {
        let empty = self.tabs.is_empty();
        widgets.notebook.set_visible(!empty);
        widgets.empty_hint.set_visible(empty && self.opening == 0);
        let title = match self.current_tab(&widgets.notebook) {
            Some(t) => format!("traceloom — {}", t.title()),
            None => "traceloom".to_string(),
        };
        self.window.set_title(Some(&title));
    }

    fn save_state(&self) {
        if let Some(dir) = config::config_dir() {
            if let Err(e) = config::save_json(&config::state_path(&dir), &self.state) {
                eprintln!("traceloom: warning: cannot save the configuration: {e}");
            }
        }
    }

    /// The recent tracesets in the File menu and in the empty window.
    fn rebuild_recent(&self, widgets: &AppWidgets) {
        let menu = &widgets.recent_menu;
        menu.remove_all();
        while let Some(b) = widgets.recent_buttons.first_child() {
            widgets.recent_buttons.remove(&b);
        }
        for (i, paths) in self.state.recent.iter().enumerate() {
            let label = paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" + ");
            let item = gio::MenuItem::new(Some(&label), None);
            item.set_action_and_target_value(Some("win.recent"), Some(&(i as u32).to_variant()));
            menu.append_item(&item);
            let b = gtk::Button::with_label(&label);
            b.add_css_class("flat");
            b.set_action_name(Some("win.recent"));
            b.set_action_target_value(Some(&(i as u32).to_variant()));
            widgets.recent_buttons.append(&b);
        }
    }

    fn choose(
        &mut self,
        title: &str,
        action: gtk::FileChooserAction,
        on_file: impl Fn(PathBuf) + 'static,
    ) {
        let dialog =
            gtk::FileChooserNative::new(Some(title), Some(&self.window), action, None, None);
        dialog.connect_response(move |d, r| {
            if r == gtk::ResponseType::Accept {
                if let Some(p) = d.file().and_then(|f| f.path()) {
                    on_file(p);
                }
            }
        });
        dialog.show();
        self.dialog = Some(dialog);
    }

    /// Exports the current tab's focused time graph (control flow unless
    /// resources has the focus) to `path`.
    pub fn export(
        &self,
        notebook: &gtk::Notebook,
        path: &std::path::Path,
        format: ExportFormat,
    ) -> Result<(), String> {
        let tab = self.current_tab(notebook).ok_or("no trace is open")?;
        let view = if tab.resources.area.has_focus() {
            &tab.resources
        } else {
            &tab.control_flow
        };
        let render = view.render().ok_or("the view has nothing to export yet")?;
        let config = view.config();
        let mut fig = TimeGraphFigure::new(&render, &config);
        fig.options = TimeGraphOptions {
            scroll_y: 0.0,
            ..view.options()
        };
        let width = view.area.width().max(800) as u32;
        match format {
            ExportFormat::Svg => export::export_svg(&fig, width, None, path),
            ExportFormat::Png => export::export_png(&fig, width, None, path),
        }
        .map_err(|e| format!("export to {}: {e}", path.display()))
    }
}

fn show_error(w: &AppWidgets, text: &str) {
    eprintln!("traceloom: {text}");
    show_message(w, gtk::MessageType::Error, text);
}

/// Shows `text` in the info bar, styled as `kind`.
fn show_message(w: &AppWidgets, kind: gtk::MessageType, text: &str) {
    w.info_bar.set_message_type(kind);
    w.info_label.set_text(text);
    w.info_bar.set_revealed(true);
}

impl Component for App {
    type CommandOutput = AppCommand;
    type Input = Msg;
    type Output = ();
    type Init = AppInit;
    type Root = gtk::ApplicationWindow;
    type Widgets = AppWidgets;

    fn init_root() -> Self::Root {
        let window = gtk::ApplicationWindow::builder()
            .title("traceloom")
            .default_width(1400)
            .default_height(1000)
            .build();
        if crate::stalls::recording() {
            crate::stalls::watch_frames(&window);
        }
        window
    }

    fn init(
        init: AppInit,
        window: Self::Root,
        sender: ComponentSender<Self>,
    ) -> ComponentParts<Self> {
        let header = gtk::HeaderBar::new();
        let file_menu = gio::Menu::new();
        let open_section = gio::Menu::new();
        open_section.append(Some("Open trace…"), Some("win.open"));
        open_section.append(Some("Open trace folder…"), Some("win.open-folder"));
        open_section.append(Some("Add trace to traceset…"), Some("win.add"));
        file_menu.append_section(None, &open_section);
        let recent_menu = gio::Menu::new();
        file_menu.append_submenu(Some("Recent traces"), &recent_menu);
        let export_section = gio::Menu::new();
        export_section.append(Some("Export current view to SVG…"), Some("win.export-svg"));
        export_section.append(Some("Export current view to PNG…"), Some("win.export-png"));
        file_menu.append_section(None, &export_section);
        let window_section = gio::Menu::new();
        window_section.append(Some("Close tab"), Some("win.close-tab"));
        window_section.append(Some("Keyboard shortcuts"), Some("win.shortcuts"));
        window_section.append(Some("About traceloom"), Some("win.about"));
        window_section.append(Some("Quit"), Some("win.quit"));
        file_menu.append_section(None, &window_section);
        let file_button = gtk::MenuButton::new();
        file_button.set_label("File");
        file_button.set_menu_model(Some(&file_menu));
        header.pack_start(&file_button);
        // The header bar is the window's title bar (client-side
        // decorations) where a compositor composes the windows, as in
        // GNOME; on a display without one (Xvfb, VNC, X forwarding, plain
        // window managers) it is the first row of the window instead, and
        // the window manager, if any, draws the title bar. There, a window
        // decorating itself took twice as long to draw each frame with
        // GTK's GL renderer on llvmpipe (`docs/performance.md`, issue 18's
        // stall row).
        let decorated_by_gtk = gtk::prelude::WidgetExt::display(&window).is_composited();
        if decorated_by_gtk {
            window.set_titlebar(Some(&header));
        } else {
            header.set_show_title_buttons(false);
        }

        let add_action = |name: &str, msg: fn() -> Msg| {
            let a = gio::SimpleAction::new(name, None);
            let s = sender.clone();
            a.connect_activate(move |_, _| s.input(msg()));
            window.add_action(&a);
        };
        add_action("open", || Msg::OpenDialog);
        add_action("open-folder", || Msg::OpenFolderDialog);
        add_action("add", || Msg::AddDialog);
        add_action("export-svg", || Msg::ExportDialog(ExportFormat::Svg));
        add_action("export-png", || Msg::ExportDialog(ExportFormat::Png));
        add_action("close-tab", || Msg::CloseCurrentTab);
        add_action("about", || Msg::About);
        add_action("shortcuts", || Msg::Shortcuts);
        add_action("go-to-time", || Msg::GoToTime);
        add_action("quit", || Msg::Quit);
        // The usual keys, on the window itself (no GtkApplication needed).
        let shortcuts = gtk::ShortcutController::new();
        shortcuts.set_scope(gtk::ShortcutScope::Global);
        for (keys, action) in [
            ("<Control>o", "win.open"),
            ("<Control><Shift>o", "win.open-folder"),
            ("<Control>w", "win.close-tab"),
            ("<Control>q", "win.quit"),
            ("F1", "win.shortcuts"),
            ("<Control>question", "win.shortcuts"),
            ("<Control>g", "win.go-to-time"),
        ] {
            shortcuts.add_shortcut(gtk::Shortcut::new(
                gtk::ShortcutTrigger::parse_string(keys),
                Some(gtk::NamedAction::new(action)),
            ));
        }
        window.add_controller(shortcuts);
        let recent = gio::SimpleAction::new("recent", Some(glib::VariantTy::UINT32));
        let s = sender.clone();
        recent.connect_activate(move |_, v| {
            if let Some(i) = v.and_then(|v| v.get::<u32>()) {
                s.input(Msg::OpenRecent(i as usize));
            }
        });
        window.add_action(&recent);

        let vbox = gtk::Box::new(gtk::Orientation::Vertical, 0);
        if !decorated_by_gtk {
            vbox.append(&header);
        }
        let info_bar = gtk::InfoBar::new();
        info_bar.set_message_type(gtk::MessageType::Error);
        info_bar.set_show_close_button(true);
        info_bar.set_revealed(false);
        let info_label = gtk::Label::new(None);
        info_label.set_wrap(true);
        info_label.set_selectable(true);
        info_bar.add_child(&info_label);
        info_bar.connect_response(|bar, _| bar.set_revealed(false));
        vbox.append(&info_bar);
        let book = TabBook::new();
        book.set_vexpand(true);
        let notebook = book.notebook();
        notebook.set_scrollable(true);
        let s = sender.clone();
        notebook.connect_switch_page(move |_, _, _| s.input(Msg::TabShown));
        vbox.append(&book);
        // The tabs' errors go to the info bar, their close buttons close
        // them.
        let tabs = FactoryVecDeque::builder()
            .launch(book)
            .forward(sender.input_sender(), |out| match out {
                TabOutput::Error(e) => Msg::Error(e),
                TabOutput::Close(i) => Msg::CloseTab(i.current_index()),
            });
        let empty_hint = gtk::Box::new(gtk::Orientation::Vertical, 8);
        empty_hint.set_vexpand(true);
        empty_hint.set_valign(gtk::Align::Center);
        empty_hint.set_halign(gtk::Align::Center);
        let hint = gtk::Label::new(Some(
            "No trace open. Open a Pajé trace file (Ctrl+O) or a CTF trace directory \
             (Ctrl+Shift+O), or one of the recent ones:",
        ));
        hint.add_css_class("dim-label");
        empty_hint.append(&hint);
        let open_button = gtk::Button::with_label("Open a trace…");
        open_button.set_action_name(Some("win.open"));
        open_button.set_halign(gtk::Align::Center);
        empty_hint.append(&open_button);
        let recent_buttons = gtk::Box::new(gtk::Orientation::Vertical, 2);
        empty_hint.append(&recent_buttons);
        vbox.append(&empty_hint);
        window.set_child(Some(&vbox));

        let state: AppState = config::config_dir()
            .and_then(|d| config::load_json(&config::state_path(&d)))
            .unwrap_or_default();
        let mut model = App {
            tabs,
            state,
            dialog: None,
            window: window.clone(),
            opening: 0,
        };
        let widgets = AppWidgets {
            notebook,
            empty_hint,
            recent_buttons,
            info_bar,
            info_label,
            recent_menu,
        };
        model.rebuild_recent(&widgets);
        if !init.paths.is_empty() {
            // The traces open once the window has drawn its first frame:
            // that frame sets the renderer up (with GL on a software
            // rasterizer, its context and shaders: 50 ms and more), and
            // reading a large trace's files (a Pajé trace is read through
            // to find the files it names) must not keep the window from
            // showing.
            model.opening += 1;
            let paths = init.paths;
            let s = sender.clone();
            first_paint::after_first_paint(&window, first_paint::FIRST_FRAME_WAIT, move || {
                s.input(Msg::OpenGiven(paths))
            });
        } else {
            show_error(
                &widgets,
                "No trace given and no sample trace found: use File → Open trace",
            );
        }
        model.update_title(&widgets);

        ComponentParts { model, widgets }
    }

    fn update_cmd_with_view(
        &mut self,
        widgets: &mut Self::Widgets,
        cmd: AppCommand,
        _sender: ComponentSender<Self>,
        _root: &Self::Root,
    ) {
        match cmd {
            AppCommand::Read(read) => {
                // The "Opening…" note has done its job.
                if widgets.info_bar.message_type() == gtk::MessageType::Info {
                    widgets.info_bar.set_revealed(false);
                }
                self.opening = self.opening.saturating_sub(1);
                self.add_tab(read.and_then(tab::open_read), widgets);
                self.update_title(widgets);
            }
        }
    }

    fn update_with_view(
        &mut self,
        widgets: &mut Self::Widgets,
        msg: Msg,
        sender: ComponentSender<Self>,
        _root: &Self::Root,
    ) {
        match msg {
            Msg::Open(paths) => self.open_later(paths, widgets, &sender),
            Msg::OpenGiven(paths) => {
                self.opening = self.opening.saturating_sub(1);
                self.open_later(paths, widgets, &sender);
            }
            Msg::OpenDialog => {
                let s = sender.clone();
                // A file: a Pajé trace (.trace, .paje), or a CTF trace's
                // metadata, whose directory the tab opens.
                self.choose(
                    "Open trace (Pajé file, or a CTF trace's metadata)",
                    gtk::FileChooserAction::Open,
                    move |p| s.input(Msg::Open(vec![p])),
                );
            }
            Msg::OpenFolderDialog => {
                let s = sender.clone();
                self.choose(
                    "Open trace folder (CTF)",
                    gtk::FileChooserAction::SelectFolder,
                    move |p| s.input(Msg::Open(vec![p])),
                );
            }
            Msg::AddDialog => {
                let s = sender.clone();
                self.choose(
                    "Add trace to traceset",
                    gtk::FileChooserAction::SelectFolder,
                    move |p| s.input(Msg::AddTrace(p)),
                );
            }
            Msg::AddTrace(p) => match self.current_tab(&widgets.notebook) {
                Some(tab) => {
                    let mut paths = tab.paths.clone();
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                    let i = widgets.notebook.current_page().unwrap_or(0) as usize;
                    // Closing saves the tab's configuration.
                    self.tabs.guard().remove(i);
                    self.open_later(paths, widgets, &sender);
                }
                None => self.open_later(vec![p], widgets, &sender),
            },
            Msg::OpenRecent(i) => {
                if let Some(paths) = self.state.recent.get(i).cloned() {
                    self.open_later(paths, widgets, &sender);
                }
            }
            Msg::ExportDialog(format) => {
                let s = sender.clone();
                self.choose(
                    "Export current view",
                    gtk::FileChooserAction::Save,
                    move |p| {
                        let ext = match format {
                            ExportFormat::Svg => "svg",
                            ExportFormat::Png => "png",
                        };
                        let p = if p.extension().is_none() {
                            p.with_extension(ext)
                        } else {
                            p
                        };
                        s.input(Msg::Export(p, format))
                    },
                );
            }
            Msg::Export(path, format) => {
                if let Err(e) = self.export(&widgets.notebook, &path, format) {
                    show_error(widgets, &format!("Cannot export: {e}"));
                }
            }
            Msg::Error(e) => show_error(widgets, &e),
            Msg::CloseTab(i) => {
                // Its shutdown saves the tab's configuration and stops
                // its reads.
                self.tabs.guard().remove(i);
                self.update_title(widgets);
            }
            Msg::CloseCurrentTab => {
                if let Some(i) = widgets.notebook.current_page() {
                    sender.input(Msg::CloseTab(i as usize));
                }
            }
            Msg::TabShown => self.update_title(widgets),
            Msg::About => {
                let about = gtk::AboutDialog::builder()
                    .transient_for(&self.window)
                    .modal(true)
                    .program_name("traceloom")
                    .version(env!("CARGO_PKG_VERSION"))
                    .comments(
                        "A trace viewer for parallel systems: LTTng kernel and user-space \
                         traces (CTF) and Pajé traces, on one traceset engine.",
                    )
                    .license_type(gtk::License::Gpl30)
                    .build();
                about.present();
            }
            Msg::Shortcuts => {
                let w = crate::shortcuts::window();
                w.set_transient_for(Some(&self.window));
                w.present();
            }
            Msg::GoToTime => {
                if let Some(tab) = self.current_tab(&widgets.notebook) {
                    tab.focus_current_time();
                }
            }
            Msg::Quit => self.window.close(),
        }
    }

    fn shutdown(&mut self, _widgets: &mut Self::Widgets, _output: relm4::Sender<()>) {
        for t in self.tabs.iter() {
            t.tab().close();
        }
        self.save_state();
    }
}
