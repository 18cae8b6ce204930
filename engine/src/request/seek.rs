//! Near scrolling without pre-parsing: find the position `n` events before
//! or after a given one, optionally counting only events a filter accepts
//! (LTTV's detailed event list redesign, "seek n events backward/forward").
//!
//! Going forward is a plain read. Going backward is the interesting part: a
//! trace can only be sought by time, and nothing tells how far back `n`
//! events lie. So a window `[anchor - offset, from)` is read, keeping the
//! positions of the last `n` accepted events; if fewer than `n` were found,
//! the window before it, twice as long, is read, and so on until `n` events
//! are found or the window reaches the beginning of the traceset. Windows
//! never overlap, so no event is read twice.

use std::collections::VecDeque;
use traceloom_base::Time;

use super::event_source::{EventSource, SourcePosition};

/// A predicate selecting the events to count (a filter); `None` counts all.
pub type EventPredicate<E> = dyn FnMut(&E) -> bool;

/// Result of [`seek_n_events_forward`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardSeek<P> {
    /// The wanted position, or the end position if the traceset ran out.
    pub position: P,
    /// Whether `n` accepted events were skipped and one more exists.
    pub found: bool,
    /// Accepted events skipped (equal to `n` when `found`).
    pub skipped: u64,
}

/// Finds the position of the accepted event coming `n` accepted events
/// after the first accepted event at or after `from`: with `n = 0`, the
/// first accepted event at or after `from`; with `n = 1`, the next one; and
/// so on. The source's cursor is left anywhere.
pub fn seek_n_events_forward<Src: EventSource>(
    source: &mut Src,
    from: &Src::Position,
    n: u64,
    mut filter: Option<&mut EventPredicate<Src::Event>>,
) -> ForwardSeek<Src::Position> {
    source.seek_position(from);
    let mut skipped = 0;
    while let Some(event) = source.current() {
        if filter.as_mut().is_none_or(|f| f(event)) {
            if skipped == n {
                return ForwardSeek {
                    position: source.position(),
                    found: true,
                    skipped,
                };
            }
            skipped += 1;
        }
        source.advance();
    }
    ForwardSeek {
        position: source.position(),
        found: false,
        skipped,
    }
}

/// Returns the positions of the (at most) `n` accepted events just before
/// `from` (exclusive), oldest first; fewer than `n` only when the traceset
/// has no more before. The first one is where a list showing `n` more rows
/// above `from` starts.
///
/// `initial_offset` is the length of the first time window read (at least
/// 1 ns); each further window is twice the previous one. The source's cursor
/// is left anywhere.
pub fn seek_n_events_backward<Src: EventSource>(
    source: &mut Src,
    from: &Src::Position,
    n: usize,
    initial_offset: Time,
    mut filter: Option<&mut EventPredicate<Src::Event>>,
) -> Vec<Src::Position> {
    let Some((first_time, last_time)) = source.time_span() else {
        return Vec::new();
    };
    if n == 0 {
        return Vec::new();
    }
    // The end position's time is Time::MAX; anchoring there would waste
    // dozens of doublings on empty windows.
    let anchor = from.time().min(last_time);
    let mut offset = initial_offset.max(1);
    let mut end = from.clone();
    let mut collected: VecDeque<Src::Position> = VecDeque::with_capacity(n);
    loop {
        let window_start = anchor.saturating_sub(offset);
        source.seek_time(window_start);
        let window_first = source.position();
        let need = n - collected.len();
        let mut window: VecDeque<Src::Position> = VecDeque::with_capacity(need);
        while source.position() < end {
            let Some(event) = source.current() else { break };
            if filter.as_mut().is_none_or(|f| f(event)) {
                if window.len() == need {
                    window.pop_front();
                }
                window.push_back(source.position());
            }
            source.advance();
        }
        while let Some(p) = window.pop_back() {
            collected.push_front(p);
        }
        if collected.len() >= n || window_start <= first_time {
            break;
        }
        end = window_first;
        offset = offset.saturating_mul(2);
    }
    collected.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::event_source::{SourceEvent, StreamId};
    use crate::request::memory::{MemoryEvent, MemoryPosition, MemorySource};

    /// Wraps a source to record the times it is sought to.
    struct Recording {
        inner: MemorySource,
        time_seeks: Vec<Time>,
        events_read: usize,
    }

    impl EventSource for Recording {
        type Event = MemoryEvent;
        type Position = MemoryPosition;
        fn seek_time(&mut self, time: Time) {
            self.time_seeks.push(time);
            self.inner.seek_time(time)
        }
        fn seek_position(&mut self, p: &MemoryPosition) {
            self.inner.seek_position(p)
        }
        fn current(&self) -> Option<&MemoryEvent> {
            self.inner.current()
        }
        fn position(&self) -> MemoryPosition {
            self.inner.position()
        }
        fn advance(&mut self) {
            self.events_read += 1;
            self.inner.advance()
        }
        fn streams(&self) -> Vec<StreamId> {
            self.inner.streams()
        }
        fn time_span(&self) -> Option<(Time, Time)> {
            self.inner.time_span()
        }
    }

    /// Events at times 0, 10, 20, … on two streams, class = index % 3.
    fn source(count: u64) -> Recording {
        let events = (0..count).map(|i| MemoryEvent {
            time: (i as Time / 2) * 10,
            class_id: i % 3,
            stream: StreamId::new(0, (i % 2) as u32),
            payload: i,
        });
        Recording {
            inner: MemorySource::new(events),
            time_seeks: Vec::new(),
            events_read: 0,
        }
    }

    fn positions(src: &Recording) -> Vec<MemoryPosition> {
        src.inner.events().iter().map(|(p, _)| *p).collect()
    }

    #[test]
    fn backward_finds_the_n_previous_events_and_doubles_the_window() {
        let mut src = source(200);
        let all = positions(&src);
        let from = all[150];
        let got = seek_n_events_backward(&mut src, &from, 30, 10, None);
        assert_eq!(got, all[120..150].to_vec());
        // from is at time 750: windows start at 740, 730 (offset 20), 710
        // (40), 670 (80), 590 (160) — the latter covers 30 events.
        assert_eq!(src.time_seeks, vec![740, 730, 710, 670, 590]);
        // No event is read twice: [590, 750) holds 32 events.
        assert_eq!(src.events_read, 32);
    }

    #[test]
    fn backward_with_filter_counts_only_accepted_events() {
        let mut src = source(200);
        let all: Vec<(MemoryPosition, MemoryEvent)> = src.inner.events().to_vec();
        let from = all[100].0;
        let mut only_class_1 = |e: &MemoryEvent| e.class_id() == 1;
        let got = seek_n_events_backward(&mut src, &from, 5, 1, Some(&mut only_class_1));
        let expected: Vec<MemoryPosition> = all[..100]
            .iter()
            .filter(|(_, e)| e.class_id == 1)
            .map(|(p, _)| *p)
            .collect::<Vec<_>>()[28..]
            .to_vec();
        assert_eq!(got, expected);
    }

    #[test]
    fn backward_stops_at_the_beginning_with_fewer_events() {
        let mut src = source(20);
        let all = positions(&src);
        let got = seek_n_events_backward(&mut src, &all[5], 10, 3, None);
        assert_eq!(got, all[..5].to_vec());
        let got = seek_n_events_backward(&mut src, &all[0], 10, 3, None);
        assert!(got.is_empty());
        assert!(seek_n_events_backward(&mut src, &all[5], 0, 3, None).is_empty());
    }

    #[test]
    fn backward_from_the_end_position() {
        let mut src = source(40);
        let all = positions(&src);
        let got = seek_n_events_backward(&mut src, &MemoryPosition::END, 3, 5, None);
        assert_eq!(got, all[37..].to_vec());
        // Anchored at the last event time, not at Time::MAX.
        assert_eq!(src.time_seeks.len(), 2);
    }

    #[test]
    fn forward_moves_over_n_accepted_events() {
        let mut src = source(30);
        let all: Vec<(MemoryPosition, MemoryEvent)> = src.inner.events().to_vec();
        let r = seek_n_events_forward(&mut src, &all[4].0, 0, None);
        assert_eq!((r.position, r.found, r.skipped), (all[4].0, true, 0));
        let r = seek_n_events_forward(&mut src, &all[4].0, 7, None);
        assert_eq!((r.position, r.found), (all[11].0, true));
        let mut class_2 = |e: &MemoryEvent| e.class_id == 2;
        // Class-2 events are at indexes 2, 5, 8, 11, ...; from 4 the first is 5.
        let r = seek_n_events_forward(&mut src, &all[4].0, 2, Some(&mut class_2));
        assert_eq!((r.position, r.found, r.skipped), (all[11].0, true, 2));
        let r = seek_n_events_forward(&mut src, &all[25].0, 5, None);
        assert_eq!(
            (r.position, r.found, r.skipped),
            (MemoryPosition::END, false, 5)
        );
    }
}
