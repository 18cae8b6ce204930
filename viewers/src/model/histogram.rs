//! The histogram model: events per pixel bin over a time range (one
//! HIGH-priority request per range, the full range cached), with the events
//! the tracer reported lost marked where their packet begins.

use std::sync::Arc;
use traceloom_base::Time;
use traceloom_base::TimeRange;

use traceloom_ctf::Traceset;
use traceloom_engine::request::{OwnerId, RequestId, SourceEvent, Start};
use traceloom_engine::source::CtfCurrent;
use traceloom_hooks::{Flow, Priority};

use super::session::{KernelRequest, Payload, Session};
use crate::render::{HistogramBuilder, HistogramRender};

/// A per-event predicate (a filter) for the histogram.
pub type HistogramFilter = Box<dyn FnMut(&CtfCurrent) -> bool + Send>;

/// The request counting the events of `range` into `bins` bins; once
/// complete its data is a [`HistogramRender`].
pub fn request(
    owner: OwnerId,
    traceset: &Traceset,
    range: TimeRange,
    bins: u32,
    filter: Option<HistogramFilter>,
) -> KernelRequest {
    let mut hb = HistogramBuilder::new(range, bins);
    for (t, n) in lost_events(traceset) {
        hb.add_lost(t, n);
    }
    let mut req = KernelRequest::new(owner, Start::Time(range.start), Box::new(hb) as Payload);
    req.priority = Priority::HIGH;
    req.end_time = Some(range.end);
    if let Some(mut f) = filter {
        req.filter = Some(Box::new(move |e: &CtfCurrent| f(e)));
    }
    req.event.add(Priority::DEFAULT, |ctx| {
        if let Some(h) = ctx.data.downcast_mut::<HistogramBuilder>() {
            h.add(ctx.event.time());
        }
        Flow::Continue
    });
    req.after_traceset.add(Priority::DEFAULT, |ctx| {
        let data = std::mem::replace(ctx.data, Box::new(()));
        match data.downcast::<HistogramBuilder>() {
            Ok(h) => *ctx.data = Box::new(h.build(None)),
            Err(other) => *ctx.data = other,
        }
        Flow::Continue
    });
    req
}

/// Events the tracer discarded, from the packet index: each packet's
/// discarded-events counter minus the previous packet's of its stream,
/// reported at the packet's beginning.
pub fn lost_events(traceset: &Traceset) -> Vec<(Time, u64)> {
    let mut out = Vec::new();
    for s in traceset.streams() {
        let mut prev = 0u64;
        for p in traceset.packets(s.index) {
            if let Some(d) = p.events_discarded {
                if d > prev {
                    if let Some(t) = p.begin_ns.or(p.end_ns) {
                        out.push((t, d - prev));
                    }
                }
                prev = d;
            }
        }
    }
    out
}

/// The histogram view's model: renders per range, the full range cached.
#[derive(Debug, Default)]
pub struct HistogramModel {
    full: Option<(u32, Arc<HistogramRender>)>,
    pending: Option<(RequestId, TimeRange, u32)>,
}

impl HistogramModel {
    /// A model with nothing computed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for the histogram of `range` in `bins` bins: returns it at once
    /// when cached (the full range), else adds the request to `session`
    /// (collect it with [`poll`](Self::poll)).
    pub fn ask(
        &mut self,
        session: &mut Session,
        range: TimeRange,
        bins: u32,
    ) -> Option<Arc<HistogramRender>> {
        let full = session.time_span().map(|(a, b)| TimeRange::new(a, b));
        if Some(range) == full {
            if let Some((w, r)) = &self.full {
                if *w == bins {
                    return Some(r.clone());
                }
            }
        }
        if let Some((id, _, _)) = self.pending.take() {
            session.cancel(id);
        }
        let owner = session.new_owner();
        let req = request(owner, session.traceset(), range, bins, None);
        let id = session.add(req);
        self.pending = Some((id, range, bins));
        None
    }

    /// The render asked for, once its request completed.
    pub fn poll(&mut self, session: &mut Session) -> Option<Arc<HistogramRender>> {
        let (id, range, bins) = self.pending?;
        let r = Arc::new(session.take::<HistogramRender>(id)?);
        self.pending = None;
        if session.time_span().map(|(a, b)| TimeRange::new(a, b)) == Some(range) {
            self.full = Some((bins, r.clone()));
        }
        Some(r)
    }

    /// Computes the histogram of `range` now (command line, tests).
    pub fn compute(
        &mut self,
        session: &mut Session,
        range: TimeRange,
        bins: u32,
    ) -> Arc<HistogramRender> {
        if let Some(r) = self.ask(session, range, bins) {
            return r;
        }
        let (id, _, _) = self.pending.expect("just asked");
        while !session.is_complete(id) {
            session.service(traceloom_engine::request::Budget::events(1 << 20), || false);
        }
        self.poll(session).expect("completed")
    }
}

/// Most bins of a [`FineHistogram`].
pub const FINE_BINS: usize = 1 << 16;

/// Events counted over the whole trace in bins of a fixed power-of-two
/// duration, fine enough that any full-range histogram of a few thousand
/// pixels is a re-binning of it, not a read of the trace (the kernel pass
/// fills it, the analysis store keeps it).
///
/// Bin `i` covers `[start + i << shift, start + (i + 1) << shift)`: finding
/// an event's bin is a subtraction and a shift, which the pass can afford
/// on every event.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct FineHistogram {
    /// Start of bin 0.
    pub start: Time,
    /// Bin width: `1 << shift` ns.
    pub shift: u32,
    /// Events per bin.
    pub counts: Vec<u64>,
}

impl FineHistogram {
    /// Empty bins over `span` (at most [`FINE_BINS`] of them).
    pub fn new(span: (Time, Time)) -> Self {
        let len = span.1.abs_diff(span.0);
        let mut shift = 0;
        while (len >> shift) as usize >= FINE_BINS {
            shift += 1;
        }
        FineHistogram {
            start: span.0,
            shift,
            counts: vec![0; (len >> shift) as usize + 1],
        }
    }

    /// Counts one event at `t` (ignored outside the bins).
    #[inline]
    pub fn add(&mut self, t: Time) {
        if t >= self.start {
            let i = (t.abs_diff(self.start) >> self.shift) as usize;
            if let Some(c) = self.counts.get_mut(i) {
                *c += 1;
            }
        }
    }

    /// Width of one bin, in ns.
    pub fn bin_width(&self) -> u64 {
        1u64 << self.shift
    }

    /// Events counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Whether re-binning into `bins` bins over `range` is faithful: each
    /// output bin spans at least `min_per_bin` fine bins, so that the fine
    /// bins straddling its edges (whose events all go to the bin holding
    /// their start) are a small part of it.
    pub fn resolves(&self, range: TimeRange, bins: u32, min_per_bin: u64) -> bool {
        range.start >= self.start
            && range.span() / bins.max(1) as u64 >= min_per_bin.saturating_mul(self.bin_width())
    }

    /// The histogram of `range` in `bins` bins, each fine bin counted in
    /// the output bin holding its start (or the range start); `lost`
    /// events ([`lost_events`]) marked as a request would.
    pub fn render(&self, range: TimeRange, bins: u32, lost: &[(Time, u64)]) -> HistogramRender {
        let mut hb = HistogramBuilder::new(range, bins);
        let w = self.bin_width();
        let first = (range.start.saturating_sub(self.start).max(0) as u64 >> self.shift) as usize;
        for (i, &n) in self.counts.iter().enumerate().skip(first) {
            let t = self.start.saturating_add((i as u64 * w) as Time);
            if t > range.end {
                break;
            }
            if n > 0 {
                hb.add_count(t.max(range.start), n);
            }
        }
        for &(t, n) in lost {
            hb.add_lost(t, n);
        }
        hb.build(None)
    }
}
