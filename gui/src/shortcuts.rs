//! The keyboard and mouse shortcuts window (F1, Ctrl+?), built from one
//! table, [`SHORTCUTS`], which is also what the window's keys do.

use gtk4 as gtk;

/// One shortcut: GTK accelerator syntax (empty for a mouse action, whose
/// gesture is then in the title) and what it does.
pub struct Shortcut {
    /// Keys, in GTK's accelerator syntax.
    pub accel: &'static str,
    /// What it does.
    pub title: &'static str,
}

const fn key(accel: &'static str, title: &'static str) -> Shortcut {
    Shortcut { accel, title }
}

/// The window's shortcuts, by group.
pub const SHORTCUTS: [(&str, &[Shortcut]); 4] = [
    (
        "Application",
        &[
            key(
                "<Control>o",
                "Open a trace file (Pajé, or a CTF metadata file)",
            ),
            key("<Control><Shift>o", "Open a CTF trace folder"),
            key("<Control>w", "Close the tab"),
            key("<Control>q", "Quit"),
            key("F1 <Control>question", "Keyboard shortcuts"),
        ],
    ),
    (
        "Time",
        &[
            key("<Control>g", "Go to a time (type it, then Enter)"),
            key("plus minus", "Zoom in, out"),
            key("f", "Zoom to the whole trace"),
            key("s", "Zoom to the selection"),
            key(
                "Escape",
                "Clear the selection (statistics of the whole trace)",
            ),
            key("Left Right", "Pan"),
            key("b", "Bookmark the current time"),
            key("", "Ctrl+wheel on a graph: zoom around the pointer"),
            key("", "Shift+wheel or middle-button drag: pan"),
            key("", "Drag on a graph: select a time range"),
        ],
    ),
    (
        "Control flow",
        &[
            key("", "Wheel: scroll the threads"),
            key("", "Click a triangle: collapse or expand the process"),
            key("", "Click a name: select the thread (then Follow thread)"),
        ],
    ),
    (
        "Event list",
        &[
            key("Up Down", "Previous, next event"),
            key("Page_Up Page_Down", "Previous, next page"),
            key("Home End", "First, last event of the trace"),
            key("", "Drag a column header's edge: resize the column"),
        ],
    ),
];

/// A new shortcuts window.
pub fn window() -> gtk::ShortcutsWindow {
    let mut xml = String::from(
        "<interface><object class=\"GtkShortcutsWindow\" id=\"w\">\
         <property name=\"modal\">1</property>\
         <child><object class=\"GtkShortcutsSection\">\
         <property name=\"section-name\">main</property>",
    );
    for (group, shortcuts) in SHORTCUTS {
        xml.push_str(&format!(
            "<child><object class=\"GtkShortcutsGroup\"><property name=\"title\">{}</property>",
            escape(group)
        ));
        for s in shortcuts {
            xml.push_str(&format!(
                "<child><object class=\"GtkShortcutsShortcut\">\
                 <property name=\"accelerator\">{}</property>\
                 <property name=\"title\">{}</property></object></child>",
                escape(s.accel),
                escape(s.title)
            ));
        }
        xml.push_str("</object></child>");
    }
    xml.push_str("</object></child></object></interface>");
    gtk::Builder::from_string(&xml)
        .object("w")
        .expect("the shortcuts window is in its own description")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
