//! Pictures painted off the main thread: a view's draw function only
//! paints the last finished picture (an image surface) and asks for a new
//! one when what it should show changed; the painting (the viewers' cairo
//! functions, tens to hundreds of milliseconds for a large render) runs on
//! a thread of its own. Until the new picture lands the old one is shown.
//!
//! What a picture shows is a key (render, options, size); the draw function
//! compares it with the wanted key, so nothing is painted twice and a
//! picture that is no longer wanted when it lands is still shown (better
//! than a blank) while the next one is painted.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use gtk4 as gtk;
use gtk4::prelude::*;

/// How often a painting in flight is looked for.
const POLL: Duration = Duration::from_millis(4);

/// What a painting thread sends back: the surface's pixels and what the
/// painting function returned (a layout for hit testing).
type Painted<L> = Result<(cairo::ImageSurfaceDataOwned, L), String>;

struct Inner<K, L> {
    /// The last picture: its key, surface and layout.
    shown: Option<(K, cairo::ImageSurface, L)>,
    /// The key of the picture being painted.
    painting: Option<K>,
}

/// The pictures of one drawing area, keyed by `K`, with the layout `L` the
/// painting function returns.
pub struct Painter<K, L> {
    inner: Rc<RefCell<Inner<K, L>>>,
    area: gtk::DrawingArea,
}

impl<K, L> Clone for Painter<K, L> {
    fn clone(&self) -> Self {
        Painter {
            inner: self.inner.clone(),
            area: self.area.clone(),
        }
    }
}

impl<K: PartialEq + Clone + Send + 'static, L: Clone + Send + 'static> Painter<K, L> {
    /// Pictures for `area` (redrawn when one lands).
    pub fn new(area: &gtk::DrawingArea) -> Self {
        Painter {
            inner: Rc::new(RefCell::new(Inner {
                shown: None,
                painting: None,
            })),
            area: area.clone(),
        }
    }

    /// Paints the last picture on `cr` (at its own size, top left) and
    /// returns its key and layout; when it is not of `want`, starts
    /// painting `want` with `paint` on a thread (unless that is under way).
    /// `paint` draws on a `width × height` context (device pixels scaled by
    /// `scale`).
    pub fn draw<F>(
        &self,
        cr: &cairo::Context,
        want: &K,
        (width, height, scale): (i32, i32, i32),
        paint: F,
    ) -> Option<(K, L)>
    where
        F: FnOnce(&cairo::Context, f64, f64) -> Result<L, String> + Send + 'static,
    {
        let mut inner = self.inner.borrow_mut();
        let current = inner.shown.as_ref().is_some_and(|(k, _, _)| k == want);
        if !current && inner.painting.is_none() && width > 0 && height > 0 {
            inner.painting = Some(want.clone());
            self.spawn(want.clone(), (width, height, scale.max(1)), paint);
        }
        let (key, surface, layout) = inner.shown.as_ref()?;
        cr.set_source_surface(surface, 0.0, 0.0).ok()?;
        cr.paint().ok()?;
        Some((key.clone(), layout.clone()))
    }

    /// Whether a picture is being painted.
    pub fn busy(&self) -> bool {
        self.inner.borrow().painting.is_some()
    }

    fn spawn<F>(&self, key: K, (width, height, scale): (i32, i32, i32), paint: F)
    where
        F: FnOnce(&cairo::Context, f64, f64) -> Result<L, String> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Painted<L>>();
        let spawned = std::thread::Builder::new()
            .name("traceloom-paint".into())
            .spawn(move || {
                crate::worker::lower_priority();
                let _ = tx.send(paint_surface(width, height, scale, paint));
            });
        if let Err(e) = spawned {
            eprintln!("traceloom: warning: cannot start a painting thread: {e}");
            self.inner.borrow_mut().painting = None;
            return;
        }
        let me = self.clone();
        glib::timeout_add_local(POLL, move || {
            let result = match rx.try_recv() {
                Ok(r) => r,
                Err(mpsc::TryRecvError::Empty) => return glib::ControlFlow::Continue,
                Err(mpsc::TryRecvError::Disconnected) => Err("the painting thread died".into()),
            };
            let mut inner = me.inner.borrow_mut();
            inner.painting = None;
            match result {
                Ok((data, layout)) => {
                    // The old picture's key may hold the last reference to
                    // a large render.
                    if let Some((old, _, old_layout)) =
                        inner
                            .shown
                            .replace((key.clone(), data.into_inner(), layout))
                    {
                        super::drop_later((old, old_layout));
                    }
                }
                Err(e) => eprintln!("traceloom: warning: drawing failed: {e}"),
            }
            drop(inner);
            // Shows it, and asks for the next picture if the view moved on.
            me.area.queue_draw();
            glib::ControlFlow::Break
        });
    }
}

/// Paints with `paint` on a new `width × height` surface at `scale`.
fn paint_surface<L, F>(width: i32, height: i32, scale: i32, paint: F) -> Painted<L>
where
    F: FnOnce(&cairo::Context, f64, f64) -> Result<L, String>,
{
    let surface = cairo::ImageSurface::create(cairo::Format::ARgb32, width * scale, height * scale)
        .map_err(|e| e.to_string())?;
    surface.set_device_scale(scale as f64, scale as f64);
    let layout = {
        let cr = cairo::Context::new(&surface).map_err(|e| e.to_string())?;
        paint(&cr, width as f64, height as f64)?
    };
    surface.flush();
    let data = surface
        .take_data()
        .map_err(|e| format!("the painted surface is still shared: {e}"))?;
    Ok((data, layout))
}
