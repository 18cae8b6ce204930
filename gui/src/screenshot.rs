//! Screenshots of a realized widget: the widget is painted through a
//! `gtk::WidgetPaintable` into a snapshot, the render node is rendered to a
//! texture by the widget's own GSK renderer, and the texture is saved as
//! PNG. Used by the GUI tests to produce `docs/screenshots/`.

use std::path::Path;

use gtk4 as gtk;
use gtk4::prelude::*;

/// Saves what `widget` currently shows to `path` (PNG).
pub fn save_png(widget: &impl IsA<gtk::Widget>, path: &Path) -> Result<(), String> {
    let widget = widget.as_ref();
    let (w, h) = (widget.width(), widget.height());
    if w <= 0 || h <= 0 {
        return Err("the widget is not allocated".into());
    }
    let paintable = gtk::WidgetPaintable::new(Some(widget));
    let snapshot = gtk::Snapshot::new();
    paintable.snapshot(&snapshot, w as f64, h as f64);
    let node = snapshot.to_node().ok_or("the widget drew nothing")?;
    let native = widget.native().ok_or("the widget is not in a window")?;
    let renderer = native.renderer().ok_or("the window has no renderer")?;
    let texture = renderer.render_texture(
        &node,
        Some(&gtk::graphene::Rect::new(0.0, 0.0, w as f32, h as f32)),
    );
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    texture.save_to_png(path).map_err(|e| e.to_string())
}
