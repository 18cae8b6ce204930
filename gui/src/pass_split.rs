//! The window's whole-trace pass on every core: the pass stays a LOW
//! request of the tab's scheduler (read on the idle loop, interrupted by
//! input, snapshotted as it reads, behind the user's HIGH requests), but
//! only up to a checkpoint past its share of the trace, its *head*; the
//! rest, its *tail*, is read from that checkpoint on threads of its own
//! ([`TailPart`]), one part per other core, and joined to the head once
//! all are done, exactly as the command line's parts are.
//!
//! How fast each part goes depends on what else the window does (frames,
//! renders): when the head is done first and much of a tail read in one
//! part is left, with a cache's checkpoints ahead of the tail, the tail
//! is ended at a checkpoint halfway through what it has left, and the
//! scheduler reads on from there ([`TailPart::after_request`]), so that
//! neither core idles long at the end.
//!
//! The split is made once, when the checkpoint pass reading ahead
//! ([`traceloom_viewers::model::checkpoint_pass::CheckpointsAhead`])
//! reaches the head's share (`head_share`: all parts end together at the
//! pace they read); with one core, or `TRACELOOM_JOBS=1`, or a damaged
//! stream met before, there is none. The checkpoint pass stops there and
//! the tail carries its build on, as the command line's last part does:
//! read beside the tail on the second core, it made the 1 GB trace's
//! analysis complete about 1 s later. With more than two cores a
//! splitter carries it on and starts the tail's parts as it gets to
//! their shares, then hands it over to the last part
//! ([`TailSplit::Carrying`]); with a cache's checkpoints the parts start
//! at once ([`TailSplit::At`]). The checkpoints past the split then come
//! as the tail reads; a tail that gives up takes them with it, and the
//! checkpoint pass is read again with the single pass.
//!
//! The tail takes its turn after the user's requests as the head does:
//! it waits while the scheduler has other requests than the pass to read
//! (a zoom's window, a list's page, a search), while the user paused the
//! pass, and while a zoom's preview waits for checkpoints to reach it:
//! from the checkpoint pass, or past the split from a read of its own
//! from the last checkpoint up to the zoom (the tail makes them at a
//! third of the checkpoint pass's pace). There is no steal from a tail
//! that carries the build (no checkpoint lies ahead of it, and its build
//! must reach the end), nor from one in parts (their shares make them end
//! with the head).

use traceloom_base::{Time, TimeRange};
use traceloom_engine::request::{OwnerId, RequestId};
use traceloom_engine::source::CtfPosition;
use traceloom_engine::state::TracesetState;
use traceloom_viewers::model::checkpoint_pass::CheckpointsAhead;
use traceloom_viewers::model::kernel::KernelCollector;
use traceloom_viewers::model::parallel_pass::{self, TailControl, TailPart, TailSplit};
use traceloom_viewers::model::{KernelData, Session};

/// How fast the head reads against the checkpoint pass before both have
/// read anything: about a third (the 1 GB generated trace).
const PACE_GUESS: f64 = 0.35;

/// How fast the tail reads against the head: it carries the checkpoint
/// build on, and shares its core with the window's jobs (snapshots,
/// renders, painting) at their priority, where the head has the main
/// thread's. Both ending together at one pace, the tail ended 0.8 s after
/// the head on the 1 GB generated trace and 10 s after on the 8 GB one
/// (cairo; 0.5–1.1 s on 1 GB with GL): it read at 0.83–0.89 of the
/// head's pace.
const TAIL_PACE: f64 = 0.85;

/// The tail is ended early only when more than this share of the traces'
/// time span is left to it.
const STEAL_ABOVE: f64 = 0.1;

/// Checkpoints at least between where the tail reads and where it is
/// ended early: it looks for its end between chunks (16,384 events), a
/// checkpoint comes every 4,000 events or more, and a tail past its end
/// would give up.
const STEAL_MARGIN: usize = 6;

/// What follows the completion of the pass's request.
pub enum Completed {
    /// The request reading on after the tail, added.
    ReadOn(RequestId),
    /// The pass's result, to make on a thread (`None`: a damaged stream
    /// made the split pass give up).
    Join(Box<dyn FnOnce() -> Option<KernelData> + Send>),
}

/// The pass's split (see the module documentation).
pub struct PassSplit {
    /// The tail, until the last request completes and all are joined.
    tail: Option<TailPart>,
    /// The tail's control, until the pass is over.
    control: Option<TailControl>,
    /// The completed head, while the request after the tail reads.
    head: Option<KernelCollector>,
    /// Where that request starts (the tail ends).
    after: Option<CtfPosition>,
    /// The split was made, or will not be.
    decided: bool,
    /// The split was made.
    made: bool,
    /// The parts to read the pass in: the head and the tail's.
    parts: usize,
}

impl PassSplit {
    /// A split to make when the pass is offered a checkpoint past the
    /// head's share, unless the pass is to run in one part (one core, or
    /// `TRACELOOM_JOBS=1`).
    pub fn wanted() -> PassSplit {
        let parts = parallel_pass::parts_wanted();
        PassSplit::decided(parts < 2, parts)
    }

    /// A pass that is not split.
    pub fn none() -> PassSplit {
        PassSplit::decided(true, 1)
    }

    fn decided(decided: bool, parts: usize) -> PassSplit {
        PassSplit {
            parts,
            tail: None,
            control: None,
            head: None,
            after: None,
            decided,
            made: false,
        }
    }

    /// Starts the tail from the first of `checkpoints` (made by the
    /// checkpoint pass, in order) past the head's share of `span`
    /// ([`head_share`]), and ends `head`, the pass's request on `session`,
    /// there; unless the split was made, the session met damage, or the
    /// head has read past it. `head_reached` is where the head reads now.
    /// `checkpoint_pass`, reading ahead, stops there and the tail carries
    /// its build on.
    pub fn offer(
        &mut self,
        session: &mut Session,
        (head, head_reached): (RequestId, Option<Time>),
        span: TimeRange,
        checkpoints: &[(CtfPosition, TracesetState)],
        checkpoint_pass: Option<&CheckpointsAhead>,
        paused: bool,
    ) {
        if self.decided {
            return;
        }
        let Some((ahead, _)) = checkpoints.last() else {
            return;
        };
        let share = head_share(self.parts, span, head_reached, ahead.time);
        let split = span.start + (span.span() as f64 * share) as Time;
        let Some(first) = checkpoints.iter().position(|(p, _)| p.time >= split) else {
            return;
        };
        let (at, state) = &checkpoints[first];
        self.decided = true;
        if !session.errors().is_empty() {
            return;
        }
        let tail_parts = self.parts - 1;
        let tail_split = match checkpoint_pass {
            Some(a) => TailSplit::Carrying(a.hand_over(*at), tail_parts),
            None => {
                let later = &checkpoints[first + 1..];
                let at = parallel_pass::spread(later.len(), tail_parts);
                TailSplit::At(at.into_iter().map(|i| later[i].clone()).collect())
            }
        };
        // Started before the head's end is set: a thread that cannot be
        // made leaves the head reading to the end.
        let tail = match TailPart::start(
            session,
            *at,
            state.clone(),
            tail_split,
            paused,
            crate::worker::lower_priority,
        ) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("traceloom: warning: cannot start the pass's second part: {e}");
                return;
            }
        };
        let control = tail.control();
        if session.scheduler().set_end_position(head, *at) {
            self.control = Some(control);
            self.tail = Some(tail);
            self.made = true;
        }
    }

    /// The pass's request completed with `collector`: what comes next.
    /// When it was the head and much of the tail is left, the tail is
    /// ended halfway through that, and a request of `owner` added to
    /// `session` to read on from there.
    pub fn completed(
        &mut self,
        session: &mut Session,
        owner: OwnerId,
        span: TimeRange,
        collector: KernelCollector,
    ) -> Completed {
        let Some(tail) = self.tail.take() else {
            return Completed::Join(Box::new(move || Some(collector.into_data())));
        };
        if self.after.is_some() {
            let head = self.head.take();
            return Completed::Join(Box::new(move || tail.join(head?, Some(collector))));
        }
        if let Some(at) = self.steal_point(session, span) {
            if self.control.as_ref().is_some_and(|c| c.end_at(at)) {
                let req = TailPart::after_request(session, owner, at);
                let id = session.add(req);
                self.tail = Some(tail);
                self.head = Some(collector);
                self.after = Some(at);
                return Completed::ReadOn(id);
            }
        }
        Completed::Join(Box::new(move || tail.join(collector, None)))
    }

    /// Where to end the tail early: a checkpoint of `session` halfway
    /// through what it has left, when that is much.
    fn steal_point(&self, session: &Session, span: TimeRange) -> Option<CtfPosition> {
        let control = self.control.as_ref()?;
        // Carrying the checkpoint build, it makes the only checkpoints
        // past it, and must read to the end to complete the build.
        // In parts, it ends with the head by its shares.
        if control.is_finished() || control.carries_checkpoints() || control.in_parts() {
            return None;
        }
        let reached = control.progress().1.max(control.start_position().time);
        let left = span.end.saturating_sub(reached);
        if (left as f64) < span.span() as f64 * STEAL_ABOVE {
            return None;
        }
        let halfway = reached + left / 2;
        let mut between = 0;
        for (p, _) in session.checkpoints() {
            if p.time <= reached {
                continue;
            }
            if p.time >= halfway {
                return (between >= STEAL_MARGIN).then_some(p);
            }
            between += 1;
        }
        None
    }

    /// Whether snapshots of the pass's request may be shown: not of the
    /// request after the tail (its records continue the tail's).
    pub fn snapshots_shown(&self) -> bool {
        self.after.is_none()
    }

    /// Makes the tail wait, or go on: `paused` by the user, or
    /// `user_requests` pending on the tab's scheduler.
    pub fn set_waiting(&self, paused: bool, user_requests: bool) {
        if let Some(c) = &self.control {
            c.set_paused(paused || user_requests);
        }
    }

    /// Whether the tail carries the checkpoint pass's build on: the
    /// checkpoints past its start come as it reads (a zoom waiting for
    /// them must not make it wait).
    pub fn carries_checkpoints(&self) -> bool {
        self.control
            .as_ref()
            .is_some_and(|c| c.carries_checkpoints())
    }

    /// Whether the pass was split (even if it is over, or gave up).
    pub fn was_split(&self) -> bool {
        self.made
    }

    /// Whether the tail reads (or waits to).
    pub fn running(&self) -> bool {
        self.control.as_ref().is_some_and(|c| !c.is_finished())
    }

    /// Whether the tail gave up (a damaged stream): the pass must be read
    /// again in one part.
    pub fn failed(&self) -> bool {
        self.control.as_ref().is_some_and(|c| c.failed())
    }

    /// How much of `span` the pass has read, given where its request is
    /// (`None`: it completed).
    pub fn read(&self, request: Option<Time>, span: TimeRange) -> Time {
        let start = span.start;
        let Some(c) = &self.control else {
            return request.map_or(span.end - start, |r| r.max(start) - start);
        };
        let middle = c.start_position().time;
        let tail = c.span_read().clamp(0, span.end - middle);
        match self.after {
            None => (request.unwrap_or(middle).clamp(start, middle) - start) + tail,
            Some(a) => {
                let after = request.unwrap_or(span.end).clamp(a.time, span.end);
                (middle - start) + tail.min(a.time - middle) + (after - a.time)
            }
        }
    }

    /// Up to where the data shown covers the trace, given where the
    /// pass's request is: the head's end once it completed.
    pub fn covered(&self, request: Option<Time>) -> Option<Time> {
        match &self.control {
            Some(c) if self.after.is_some() || request.is_none() => Some(c.start_position().time),
            _ => request,
        }
    }

    /// The pass is over (joined, or given up): the tail's thread stops if
    /// it still reads, and no split is made again.
    pub fn end(&mut self) {
        if let Some(c) = self.control.take() {
            c.stop();
        }
        self.tail = None;
        self.head = None;
        self.after = None;
        self.decided = true;
    }
}

/// The share of `span` the head reads, when it reads at `head` while the
/// checkpoint pass is at `ahead`, for the pass's `parts` to end together.
/// The tail starts only when the checkpoint pass gets to the split `s`,
/// the head reading since the start: split in the middle, the head of the
/// 1 GB generated trace had read its half long before the tail had. With
/// the head's pace `p` against the checkpoint pass and the tail's `r`
/// against the head ([`TAIL_PACE`]), in two parts the head ends at `s / p`
/// and the tail at `s + (1 - s) / (r p)` (in the checkpoint pass's time
/// to read the whole trace), so `s = 1 / (1 + r (1 - p))`; in more, the
/// tail's parts start as its splitter gets to them, as the command line's
/// do ([`parallel_pass::part_shares`]). A cache's checkpoints, all there
/// at once, split a little past the middle of two parts.
fn head_share(parts: usize, span: TimeRange, head: Option<Time>, ahead: Time) -> f64 {
    let read = |t: Time| t.saturating_sub(span.start).max(0) as f64;
    let pace = if read(ahead) <= 0.0 {
        PACE_GUESS
    } else {
        read(head.unwrap_or(span.start)) / read(ahead)
    };
    parallel_pass::part_shares(parts.max(2), pace, TAIL_PACE)[0]
}

impl Drop for PassSplit {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_reads_more_the_later_the_tail_starts() {
        let span = TimeRange::new(1_000, 11_000);
        // A cache's checkpoints: the tail can start at once.
        let cached = head_share(2, span, None, span.end);
        assert!((0.5..0.6).contains(&cached), "{cached}");
        // The head a third as fast as the checkpoint pass: the tail
        // starts at the split, when the head is a third of the way there,
        // and reads the rest at `TAIL_PACE` times the head's pace.
        let third = head_share(2, span, Some(2_000), 4_000);
        let head_ends = third * 3.0;
        let tail_ends = third + (1.0 - third) * 3.0 / TAIL_PACE;
        assert!((head_ends - tail_ends).abs() < 1e-9, "{third}");
        assert!((0.6..0.7).contains(&third), "{third}");
        // The closer the head's pace to the checkpoint pass's, the later
        // the tail starts, and the more the head reads.
        let slower = head_share(2, span, Some(1_500), 4_000);
        let faster = head_share(2, span, Some(3_500), 4_000);
        assert!(0.5 < slower && slower < third, "{slower}");
        assert!(third < faster && faster < 1.0, "{faster}");
        // Nothing read yet: a guess, still a split past the middle.
        let guess = head_share(2, span, None, span.start);
        assert!((0.5..1.0).contains(&guess), "{guess}");
        // More cores: the head reads less, about its share of the parts
        // when a cache's checkpoints start them all at once.
        let four = head_share(4, span, Some(2_000), 4_000);
        assert!(0.0 < four && four < third, "{four}");
        let cached_three = head_share(3, span, None, span.end);
        assert!((0.3..0.45).contains(&cached_three), "{cached_three}");
    }
}
