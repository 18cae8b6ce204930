//! A progress bar on stderr for passes over a trace, shown only when stderr
//! is a terminal and only once the pass has run for a second (short
//! commands stay silent, and pipes and logs never get bar drawings).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use traceloom_engine::request::{Budget, EventSource, RequestId, SourceEvent};
use traceloom_viewers::model::Session;

use crate::{message_ns, MessageSource};
use traceloom_ctf::event::Message;

/// Delay before a bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// Bar resolution (per mille of the trace's time span).
const STEPS: u64 = 1000;

/// The progress of one pass over a traceset's time span.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    what: String,
    span: (i64, i64),
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `what` over `span` (first and last event times), drawn
    /// only when `enabled` (stderr is a terminal).
    pub fn new(enabled: bool, what: &str, span: (i64, i64)) -> Progress {
        Progress {
            enabled,
            what: what.to_string(),
            span,
            started: Instant::now(),
            bar: None,
        }
    }

    /// The pass reached `t`, having read `events` (when known).
    pub fn update(&mut self, events: Option<u64>, t: i64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= SHOW_AFTER {
            let bar = ProgressBar::with_draw_target(Some(STEPS), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg} (eta {eta})",
                )
                .expect("a valid template"),
            );
            bar.set_prefix(self.what.clone());
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            let len = self.span.1.abs_diff(self.span.0).max(1);
            let done = t.saturating_sub(self.span.0).clamp(0, len as i64) as u64;
            bar.set_position((done as u128 * STEPS as u128 / len as u128) as u64);
            if let Some(n) = events {
                bar.set_message(format!("{n} events"));
            }
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Services `session` until request `id` completes, then takes its data
/// (like [`Session::wait`]), with a bar for `what` over `range` when
/// `enabled`.
pub fn wait<T: 'static>(
    session: &mut Session,
    id: RequestId,
    enabled: bool,
    what: &str,
    range: (i64, i64),
) -> Option<T> {
    let mut bar = Progress::new(enabled, what, range);
    while !session.is_complete(id) && session.scheduler().request(id).is_some() {
        session.service(Budget::events(1 << 20), || false);
        let t = session
            .scheduler()
            .source()
            .current()
            .map_or(range.1, |e| e.time());
        bar.update(None, t);
    }
    bar.finish();
    session.take(id)
}

/// A [`MessageSource`] that moves a [`Progress`] bar as its messages go
/// by (`count`, `dump` to a file).
pub struct Tracked<'a> {
    inner: &'a mut dyn MessageSource,
    bar: Progress,
    events: u64,
}

/// Messages between two bar updates (reading the time of one costs a
/// clock conversion; a bar moves at most a thousand times anyway).
const UPDATE_EVERY: u64 = 1 << 14;

impl<'a> Tracked<'a> {
    /// `inner`'s messages, with a bar for `what` over `span` (first and
    /// last event times) drawn when `enabled`.
    pub fn new(
        inner: &'a mut dyn MessageSource,
        enabled: bool,
        what: &str,
        span: (i64, i64),
    ) -> Tracked<'a> {
        Tracked {
            inner,
            bar: Progress::new(enabled, what, span),
            events: 0,
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish();
    }
}

impl MessageSource for Tracked<'_> {
    fn next_message(&mut self) -> Option<Result<Message<'_>, String>> {
        let Tracked { inner, bar, events } = self;
        let msg = inner.next_message();
        *events += 1;
        if bar.enabled && events.is_multiple_of(UPDATE_EVERY) {
            if let Some(ns) = msg
                .as_ref()
                .and_then(|m| m.as_ref().ok())
                .and_then(message_ns)
            {
                bar.update(Some(*events), ns);
            }
        }
        msg
    }
}
