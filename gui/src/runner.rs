//! A tab's background runner: the LTTV scheduler's chunked servicing of
//! the tab's events requests on the GLib idle loop.
//!
//! The runner owns the tab's [`Analysis`] (its models and their session)
//! and the idle source that services it. A turn collects what completed
//! (taking a snapshot of the pass when one is due), services for what is
//! left of [`SERVICE_BUDGET`] (after one chunk when input reached the tab
//! since the last turn: the v2 algorithm's interruption, after which the
//! visible viewers' HIGH requests are read first; also after the chunk
//! in which a job the user waits for finished; not at all when the poll
//! collected something for the views), and hands the results
//! to its tab as a message ([`Serviced`]), which the tab's component
//! applies to the views. Frames, timers and painting results need no
//! interruption: GTK dispatches them before this idle-priority source, and
//! the tab's messages too (default priority), so a turn's results reach
//! the views before the next turn reads. A turn yields rather than wait
//! for a decoding thread (the scheduler's `service_nonblocking`) and then
//! sleeps [`DATA_WAIT`] in the main loop, input still handled (as it does
//! while only jobs are left). The source removes itself when nothing is
//! pending, and is added again by the next request ([`Runner::kick`]).
//!
//! The servicing is not a relm4 worker: a worker's messages run on
//! another thread (or at the main context's default priority), and the
//! reads must stay on the main thread, below input and frames.

use std::cell::{Cell, RefCell, RefMut};
use std::fmt;
use std::rc::Rc;
use std::time::{Duration, Instant};

use traceloom_engine::request::{Budget, ServiceStatus};

use crate::analysis::Analysis;
use crate::models::{ListPage, Updates};
use crate::pacing::Pacing;
use crate::stalls;
use crate::worker::SERVICE_BUDGET;

/// How long the servicing sleeps when the read waits for a decoding
/// thread: about a batch's decoding time (a thousand events), short enough
/// not to slow the read down, long enough not to spin.
const DATA_WAIT: Duration = Duration::from_millis(1);

/// What the servicing idle source does after a turn.
enum Turn {
    /// Run again (requests or jobs remain).
    Again,
    /// Sleep [`DATA_WAIT`] first, then run again: the read waits for a
    /// decoding thread, or only jobs are left.
    Sleep,
    /// Remove itself: nothing remains.
    Done,
}

/// What one turn produced for the views.
pub struct Serviced {
    /// New renders, statistics, search results and errors.
    pub updates: Updates,
    /// The event list's rows, when its move completed.
    pub list: Option<ListPage>,
    /// Whether work remains (the progress bar stays).
    pub busy: bool,
}

impl fmt::Debug for Serviced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serviced")
            .field("updates", &!self.updates.is_empty())
            .field("list", &self.list.is_some())
            .field("busy", &self.busy)
            .finish()
    }
}

struct Inner<M: 'static> {
    /// The trace's models and their session: a CTF traceset's or a Pajé
    /// trace's.
    analysis: RefCell<Box<dyn Analysis>>,
    /// The idle source servicing the requests, while there are any (or
    /// the timeout re-installing it, while the read waits for data).
    idle: RefCell<Option<glib::SourceId>>,
    /// A turn before the next frame is due ([`Runner::hurry`]).
    hurried: Cell<bool>,
    /// Turns whose results the tab has not applied yet.
    in_flight: Cell<usize>,
    /// Of those, the turns carrying the event list's rows.
    pages_in_flight: Cell<usize>,
    /// Input reached the tab since the servicing last looked.
    input: Rc<Cell<bool>>,
    /// How often background updates may come, by what their frames cost.
    pacing: Rc<Pacing>,
    /// Where a turn's results go: the tab's component.
    results: relm4::Sender<M>,
    /// The tab's title, for the stall report.
    title: String,
}

/// A tab's background runner (see the module documentation); clones
/// share it. `M` is the tab's message type.
pub struct Runner<M: 'static>(Rc<Inner<M>>);

impl<M> Clone for Runner<M> {
    fn clone(&self) -> Self {
        Runner(self.0.clone())
    }
}

impl<M: From<Serviced> + 'static> Runner<M> {
    /// A runner servicing `analysis`, yielding to the input recorded in
    /// `input`, pacing the updates by `pacing`, sending each turn's
    /// results to `results`.
    pub fn new(
        analysis: Box<dyn Analysis>,
        input: Rc<Cell<bool>>,
        pacing: Rc<Pacing>,
        results: relm4::Sender<M>,
        title: String,
    ) -> Self {
        Runner(Rc::new(Inner {
            analysis: RefCell::new(analysis),
            idle: RefCell::new(None),
            hurried: Cell::new(false),
            in_flight: Cell::new(0),
            pages_in_flight: Cell::new(0),
            input,
            pacing,
            results,
            title,
        }))
    }

    /// The analysis, to add requests to (then [`kick`](Self::kick)).
    pub fn analysis(&self) -> RefMut<'_, Box<dyn Analysis>> {
        self.0.analysis.borrow_mut()
    }

    /// The analysis, unless it is in use (a signal emitted from inside a
    /// turn or a request).
    pub fn try_analysis(&self) -> Option<RefMut<'_, Box<dyn Analysis>>> {
        self.0.analysis.try_borrow_mut().ok()
    }

    /// How often background updates may reach the views.
    pub fn pacing(&self) -> &Pacing {
        &self.0.pacing
    }

    /// Whether the idle source is installed (requests or jobs left) or a
    /// turn's results are still to be applied.
    pub fn active(&self) -> bool {
        self.0.idle.borrow().is_some() || self.0.in_flight.get() > 0
    }

    /// Whether a turn's event-list rows are still to be shown.
    pub fn page_in_flight(&self) -> bool {
        self.0.pages_in_flight.get() > 0
    }

    /// The tab applied `serviced`, a turn's results.
    pub fn applied(&self, serviced: &Serviced) {
        let inner = &*self.0;
        inner.in_flight.set(inner.in_flight.get().saturating_sub(1));
        if serviced.list.is_some() {
            let n = inner.pages_in_flight.get();
            inner.pages_in_flight.set(n.saturating_sub(1));
        }
    }

    /// Starts the whole-trace analysis.
    pub fn start_background(&self) {
        stalls::report_started(&self.0.title);
        self.analysis().start_background();
        self.kick();
    }

    /// Makes sure the idle source servicing requests is installed (or the
    /// timeout re-installing it, while the read waits for data).
    pub fn kick(&self) {
        if self.0.idle.borrow().is_some() {
            return;
        }
        let source = self.idle_source();
        *self.0.idle.borrow_mut() = Some(source);
    }

    /// Makes sure the requests are serviced, and runs a turn before the
    /// next frame (at the main context's default priority, above GTK's
    /// redraw, reading one chunk at most): the user waits for what it
    /// reads (a window zoomed into, a list scrolled far), and the frames
    /// the move asks for (its views' pictures redrawn at once) would
    /// otherwise come first, tens of ms on a large window.
    pub fn hurry(&self) {
        self.kick();
        if self.0.hurried.replace(true) {
            return;
        }
        let runner = self.clone();
        glib::idle_add_local_full(glib::Priority::DEFAULT, move || {
            runner.0.hurried.set(false);
            // The installed idle source goes on with what is left.
            if runner.0.idle.borrow().is_some() {
                runner.turn(true);
            }
            glib::ControlFlow::Break
        });
    }

    /// Records user input as the tab's capture controller does: the next
    /// turn yields after one chunk, and pictures landing show at once.
    pub fn note_input(&self) {
        self.0.input.set(true);
        crate::views::painter::note_input();
    }

    /// Stops servicing (the tab is closed).
    pub fn stop(&self) {
        if let Some(id) = self.0.idle.borrow_mut().take() {
            id.remove();
        }
    }

    /// The idle source servicing requests. When the read waits for a
    /// decoding thread or only jobs are left, it removes itself for
    /// [`DATA_WAIT`], so that the main loop sleeps meanwhile rather than
    /// spin.
    fn idle_source(&self) -> glib::SourceId {
        let runner = self.clone();
        glib::idle_add_local(move || match runner.turn(false) {
            Turn::Again => glib::ControlFlow::Continue,
            Turn::Done => {
                *runner.0.idle.borrow_mut() = None;
                stalls::report_done(&runner.0.title);
                glib::ControlFlow::Break
            }
            Turn::Sleep => {
                let again = runner.clone();
                let wait = glib::timeout_add_local_once(DATA_WAIT, move || {
                    let idle = again.idle_source();
                    *again.0.idle.borrow_mut() = Some(idle);
                });
                *runner.0.idle.borrow_mut() = Some(wait);
                glib::ControlFlow::Break
            }
        })
    }

    /// One turn of the idle source: collects what completed (taking a
    /// snapshot of the kernel pass when one is due), services for what is
    /// left of [`SERVICE_BUDGET`] (after one chunk when input arrived since
    /// the last turn, or when `one_chunk`), and sends the new renders, the
    /// list's rows and whether work remains to the tab. Returns whether
    /// work remains, and whether to sleep first. A picture landed for the
    /// user and not drawn yet defers the turn (see
    /// [`frame_wanted`](crate::views::painter::frame_wanted)).
    fn turn(&self, one_chunk: bool) -> Turn {
        let inner = &*self.0;
        if !one_chunk && crate::views::painter::frame_wanted() {
            // A picture the user waits for is about to be drawn: its frame
            // first.
            return Turn::Sleep;
        }
        let started = Instant::now();
        let (status, updates, list, busy) = {
            let mut analysis = inner.analysis.borrow_mut();
            analysis.set_update_interval(inner.pacing.interval());
            // What lands from now on interrupts the servicing below.
            crate::worker::take_urgent_landed();
            let mut updates = stalls::time("tab:poll", || analysis.poll());
            // Snapshots of the pass are taken in the poll: their cost
            // spaces the updates as their frames' does.
            inner.pacing.charge(started.elapsed());
            // The poll's snapshot counts against the turn's budget; with
            // none left, servicing waits for the next turn.
            let budget = SERVICE_BUDGET.saturating_sub(started.elapsed());
            let status = if budget.is_zero() {
                ServiceStatus::BudgetSpent
            } else if !updates.is_empty() {
                // The views get what the poll collected (a render the user
                // may wait for) before more is read: the next turn reads.
                ServiceStatus::PendingInput
            } else {
                stalls::time("tab:service", || {
                    // Input since the last turn interrupts the read after
                    // its first chunk (the turn's budget bounds the delay
                    // of input arriving during it); so does an event not
                    // decoded yet (waiting for it would block input).
                    // Other ready sources (timers, frames, painting
                    // results) do not: GTK dispatches them before this
                    // idle source anyway.
                    // A result the user waits for landing on a job
                    // thread interrupts too: it is collected by the next
                    // turn rather than after the rest of this budget.
                    let input = inner.input.replace(false) || one_chunk;
                    let mut interrupt = || input || crate::worker::urgent_landed();
                    analysis.service(Budget::duration(budget), &mut interrupt, one_chunk)
                })
            };
            // A hurried turn's read (the first chunk of what the user
            // waits for) is collected now too: its snapshot is made while
            // the frames the move asked for are drawn.
            if status == ServiceStatus::Idle || one_chunk {
                // The last requests completed in this call: collected now,
                // or nothing would be left to keep the source installed.
                // (With no request left, no snapshot can be due: this poll
                // stays cheap.)
                let more = stalls::time("tab:poll", || analysis.poll());
                updates.merge(more);
            }
            // The event list's move under way: its next request, or its
            // rows.
            let list = stalls::time("tab:list-poll", || analysis.list_poll());
            let busy = analysis.busy() || status != ServiceStatus::Idle;
            (status, updates, list, busy)
        };
        let page = list.is_some();
        inner.in_flight.set(inner.in_flight.get() + 1);
        inner
            .pages_in_flight
            .set(inner.pages_in_flight.get() + usize::from(page));
        if inner
            .results
            .send(M::from(Serviced {
                updates,
                list,
                busy,
            }))
            .is_err()
        {
            // The tab is gone: nothing to service for.
            inner.in_flight.set(inner.in_flight.get() - 1);
            inner
                .pages_in_flight
                .set(inner.pages_in_flight.get() - usize::from(page));
            return Turn::Done;
        }
        match status {
            _ if !busy => Turn::Done,
            // Only jobs left: their results are polled for, and spinning
            // meanwhile would take a CPU from them.
            ServiceStatus::Idle | ServiceStatus::WaitingForData => Turn::Sleep,
            _ => Turn::Again,
        }
    }
}
