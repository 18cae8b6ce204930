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

/// How often a painting in flight is looked for (only while one is: a
/// few ms at a time).
const POLL: Duration = Duration::from_millis(1);
/// Longest the servicing waits for the frame that shows a picture landed
/// after input (see [`frame_wanted`]).
const FRAME_WAIT: Duration = Duration::from_millis(25);
/// Longest a finished picture waits for the other paintings in flight,
/// so that pictures started together are shown in one frame.
const LANDING_HOLD: Duration = Duration::from_millis(120);
/// Input this recent shows a finished picture at once.
const INPUT_RECENT: Duration = Duration::from_millis(500);

/// The paintings of every view of the main thread: how many are in
/// flight, and the areas whose picture landed but is not shown yet.
///
/// The views of a tab are often repainted together (a new snapshot of a
/// background pass gives all of them a new render); each landing picture
/// used to ask for a frame of its own, and with GTK's GL renderer on a
/// software rasterizer a frame of a large window costs tens of ms of the
/// main thread. A picture that lands while others are in flight waits for
/// them (at most [`LANDING_HOLD`]) unless the user gave input lately.
#[derive(Default)]
struct Landings {
    in_flight: usize,
    waiting: Vec<gtk::DrawingArea>,
    timer: Option<glib::SourceId>,
}

thread_local! {
    static LANDINGS: RefCell<Landings> = RefCell::default();
    static LAST_INPUT: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
    /// When a picture the user waits for landed, until a frame draws it.
    static FRAME_WANTED: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Whether a picture landed after recent input and no frame has drawn it
/// yet (for at most [`FRAME_WAIT`]): the background servicing waits for
/// that frame rather than read a turn first. GTK's frame clock paces
/// frames by a timeout, which an idle source ready earlier would precede.
pub fn frame_wanted() -> bool {
    FRAME_WANTED.with(|f| f.get().is_some_and(|t| t.elapsed() < FRAME_WAIT))
}

/// Notes user input (the views' pictures are shown as soon as they land
/// for a while after it).
pub fn note_input() {
    LAST_INPUT.with(|l| l.set(Some(std::time::Instant::now())));
}

fn started_painting() {
    LANDINGS.with(|l| l.borrow_mut().in_flight += 1);
}

/// A picture for `area` landed (or failed): shown now, or with the others
/// in flight.
fn landed(area: &gtk::DrawingArea) {
    let input = LAST_INPUT
        .with(|l| l.get())
        .is_some_and(|t| t.elapsed() < INPUT_RECENT);
    let flush = LANDINGS.with(|l| {
        let mut l = l.borrow_mut();
        l.in_flight = l.in_flight.saturating_sub(1);
        l.waiting.push(area.clone());
        if input || l.in_flight == 0 {
            return true;
        }
        if l.timer.is_none() {
            l.timer = Some(glib::timeout_add_local_once(LANDING_HOLD, || {
                LANDINGS.with(|l| l.borrow_mut().timer = None);
                show_landed();
            }));
        }
        false
    });
    if flush {
        if input {
            FRAME_WANTED.with(|f| f.set(Some(std::time::Instant::now())));
        }
        show_landed();
    }
}

/// Asks a frame for every area whose picture landed.
fn show_landed() {
    let (areas, timer) = LANDINGS.with(|l| {
        let mut l = l.borrow_mut();
        (std::mem::take(&mut l.waiting), l.timer.take())
    });
    if let Some(t) = timer {
        t.remove();
    }
    for a in areas {
        a.queue_draw();
    }
}

/// What a painting thread sends back: the surface's pixels and what the
/// painting function returned (a layout for hit testing).
type Painted<L> = Result<(cairo::ImageSurfaceDataOwned, L), String>;

/// What a view does when one of its pictures lands, before the frame that
/// shows it (e.g. size its scrollbar from the picture's layout, so that
/// the change is in the same frame).
type OnLand<L> = Box<dyn Fn(&L)>;

struct Inner<K, L> {
    /// The last picture: its key, surface and layout.
    shown: Option<(K, cairo::ImageSurface, L)>,
    /// The key of the picture being painted.
    painting: Option<K>,
    on_land: Option<Rc<OnLand<L>>>,
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
                on_land: None,
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
        FRAME_WANTED.with(|f| f.set(None));
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

    /// Calls `f` with the layout of each picture that lands, before the
    /// frame that shows it.
    pub fn on_land(&self, f: impl Fn(&L) + 'static) {
        self.inner.borrow_mut().on_land = Some(Rc::new(Box::new(f)));
    }

    /// Starts painting `want` unless it is shown or a painting is under
    /// way, without a frame: a view given a new render asks for its
    /// picture here, and the frame comes when the picture lands (the old
    /// one stays on screen meanwhile). Returns whether it started.
    pub fn prepare<F>(&self, want: &K, (width, height, scale): (i32, i32, i32), paint: F) -> bool
    where
        F: FnOnce(&cairo::Context, f64, f64) -> Result<L, String> + Send + 'static,
    {
        let mut inner = self.inner.borrow_mut();
        let current = inner.shown.as_ref().is_some_and(|(k, _, _)| k == want);
        if current || inner.painting.is_some() || width <= 0 || height <= 0 {
            return false;
        }
        inner.painting = Some(want.clone());
        drop(inner);
        self.spawn(want.clone(), (width, height, scale.max(1)), paint);
        true
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
                // At the main thread's priority, not the background's: a
                // picture is what the next frame shows, as GTK's own
                // rendering on the main thread is (niced, the statistics
                // of a reopened 1 GB trace waited 1.9 s behind a build).
                let painted = crate::worker::charged(|| paint_surface(width, height, scale, paint));
                if tx.send(painted).is_ok() {
                    // The servicing on the main thread yields, so that the
                    // picture lands for the next frame.
                    crate::worker::note_urgent_landed();
                }
            });
        if let Err(e) = spawned {
            eprintln!("traceloom: warning: cannot start a painting thread: {e}");
            self.inner.borrow_mut().painting = None;
            return;
        }
        started_painting();
        let me = self.clone();
        glib::timeout_add_local(POLL, move || {
            let result = match rx.try_recv() {
                Ok(r) => r,
                Err(mpsc::TryRecvError::Empty) => return glib::ControlFlow::Continue,
                Err(mpsc::TryRecvError::Disconnected) => Err("the painting thread died".into()),
            };
            let mut inner = me.inner.borrow_mut();
            inner.painting = None;
            let mut landed_layout = None;
            match result {
                Ok((data, layout)) => {
                    if inner.on_land.is_some() {
                        landed_layout = Some(layout.clone());
                    }
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
            let on_land = inner.on_land.clone();
            drop(inner);
            // The view's own changes (not borrowing the painter) first, so
            // that they are in the frame that shows the picture.
            if let (Some(f), Some(layout)) = (on_land, landed_layout) {
                f(&layout);
            }
            // Shows it, and asks for the next picture if the view moved on.
            landed(&me.area);
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
