//! An in-memory [`EventSource`], for tests and examples.

use super::event_source::{EventSource, SourceEvent, SourcePosition, StreamId};
use traceloom_base::Time;

/// An event held by [`MemorySource`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemoryEvent {
    /// Timestamp.
    pub time: Time,
    /// Event-class id.
    pub class_id: u64,
    /// Stream the event belongs to.
    pub stream: StreamId,
    /// Free value (tests use it to identify events).
    pub payload: u64,
}

impl SourceEvent for MemoryEvent {
    fn time(&self) -> Time {
        self.time
    }
    fn class_id(&self) -> u64 {
        self.class_id
    }
    fn stream(&self) -> StreamId {
        self.stream
    }
}

/// Position in a [`MemorySource`]: `(time, stream, index in stream)`.
///
/// The derived order is the reading order, because the source merges its
/// streams by time and breaks ties by stream then by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemoryPosition {
    time: Time,
    stream: StreamId,
    index: u32,
}

impl MemoryPosition {
    /// The position past the last event.
    pub const END: MemoryPosition = MemoryPosition {
        time: Time::MAX,
        stream: StreamId::new(u32::MAX, u32::MAX),
        index: u32::MAX,
    };
}

impl SourcePosition for MemoryPosition {
    fn time(&self) -> Time {
        self.time
    }
}

/// Several streams of events merged by time.
///
/// Ties between streams are broken by [`StreamId`], and within a stream by
/// the order the events were given in, so reading is fully deterministic.
#[derive(Debug, Clone)]
pub struct MemorySource {
    /// All events in reading order, with their positions.
    merged: Vec<(MemoryPosition, MemoryEvent)>,
    streams: Vec<StreamId>,
    cursor: usize,
    time_seeks: u64,
    position_seeks: u64,
    /// See [`MemorySource::stall_at`].
    stall_at: Option<usize>,
}

impl MemorySource {
    /// Builds a source from events in any order; each stream's events are
    /// sorted by time (stably, so equal times keep the given order).
    pub fn new(events: impl IntoIterator<Item = MemoryEvent>) -> Self {
        let mut events: Vec<MemoryEvent> = events.into_iter().collect();
        events.sort_by_key(|e| (e.stream, e.time));
        let mut merged = Vec::with_capacity(events.len());
        let mut streams: Vec<StreamId> = Vec::new();
        let mut index = 0u32;
        for e in events {
            if streams.last() != Some(&e.stream) {
                streams.push(e.stream);
                index = 0;
            }
            let pos = MemoryPosition {
                time: e.time,
                stream: e.stream,
                index,
            };
            index += 1;
            merged.push((pos, e));
        }
        merged.sort_by_key(|(p, _)| *p);
        MemorySource {
            merged,
            streams,
            cursor: 0,
            time_seeks: 0,
            position_seeks: 0,
            stall_at: None,
        }
    }

    /// Every event in reading order, with its position.
    pub fn events(&self) -> &[(MemoryPosition, MemoryEvent)] {
        &self.merged
    }

    /// Simulates a source fed by another thread that has decoded the
    /// events before index `index` (in reading order) only:
    /// [`EventSource::ready`] is `false` from that event on, until called
    /// again (`None`: always ready, the default). Reading is not affected.
    pub fn stall_at(&mut self, index: Option<usize>) {
        self.stall_at = index;
    }

    /// Index of the current event in reading order (the number of events
    /// before it; the number of events at the end).
    pub fn index(&self) -> usize {
        self.cursor
    }

    /// Number of [`EventSource::seek_time`] calls so far.
    pub fn time_seeks(&self) -> u64 {
        self.time_seeks
    }

    /// Number of [`EventSource::seek_position`] calls so far.
    pub fn position_seeks(&self) -> u64 {
        self.position_seeks
    }
}

impl EventSource for MemorySource {
    type Event = MemoryEvent;
    type Position = MemoryPosition;

    fn seek_time(&mut self, time: Time) {
        self.time_seeks += 1;
        self.cursor = self.merged.partition_point(|(p, _)| p.time < time);
    }

    fn seek_position(&mut self, position: &MemoryPosition) {
        self.position_seeks += 1;
        self.cursor = self.merged.partition_point(|(p, _)| p < position);
    }

    fn current(&self) -> Option<&MemoryEvent> {
        self.merged.get(self.cursor).map(|(_, e)| e)
    }

    fn position(&self) -> MemoryPosition {
        self.merged
            .get(self.cursor)
            .map_or(MemoryPosition::END, |(p, _)| *p)
    }

    fn advance(&mut self) {
        if self.cursor < self.merged.len() {
            self.cursor += 1;
        }
    }

    fn ready(&self) -> bool {
        self.stall_at.is_none_or(|i| self.cursor < i)
    }

    fn streams(&self) -> Vec<StreamId> {
        self.streams.clone()
    }

    fn time_span(&self) -> Option<(Time, Time)> {
        Some((self.merged.first()?.0.time, self.merged.last()?.0.time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: Time, stream: u32, payload: u64) -> MemoryEvent {
        MemoryEvent {
            time,
            class_id: 0,
            stream: StreamId::new(0, stream),
            payload,
        }
    }

    fn read_all(src: &mut MemorySource) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(e) = src.current() {
            out.push(e.payload);
            src.advance();
        }
        out
    }

    #[test]
    fn streams_merge_by_time_with_deterministic_ties() {
        let mut src = MemorySource::new([
            ev(5, 1, 10),
            ev(1, 1, 11),
            ev(5, 0, 12),
            ev(5, 1, 13),
            ev(3, 0, 14),
            ev(5, 0, 15),
        ]);
        // Time 5: stream 0 first, in given order, then stream 1.
        assert_eq!(read_all(&mut src), vec![11, 14, 12, 15, 10, 13]);
        assert_eq!(
            src.streams(),
            vec![StreamId::new(0, 0), StreamId::new(0, 1)]
        );
        assert_eq!(src.time_span(), Some((1, 5)));
        assert!(src.current().is_none());
        assert_eq!(src.position(), MemoryPosition::END);
        src.advance();
        assert_eq!(src.position(), MemoryPosition::END);
    }

    #[test]
    fn positions_are_in_reading_order_and_seekable() {
        let mut src = MemorySource::new([ev(2, 0, 0), ev(2, 1, 1), ev(4, 0, 2), ev(9, 1, 3)]);
        let positions: Vec<MemoryPosition> = src.events().iter().map(|(p, _)| *p).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
        assert!(positions.iter().all(|p| *p < MemoryPosition::END));
        src.seek_position(&positions[2]);
        assert_eq!(read_all(&mut src), vec![2, 3]);
        src.seek_position(&MemoryPosition::END);
        assert!(src.current().is_none());
        assert_eq!(src.position_seeks(), 2);
    }

    #[test]
    fn seek_time_lands_on_first_event_at_or_after() {
        let mut src = MemorySource::new([ev(2, 0, 0), ev(2, 1, 1), ev(4, 0, 2), ev(9, 1, 3)]);
        src.seek_time(2);
        assert_eq!(read_all(&mut src), vec![0, 1, 2, 3]);
        src.seek_time(3);
        assert_eq!(read_all(&mut src), vec![2, 3]);
        src.seek_time(10);
        assert!(src.current().is_none());
        src.seek_time(Time::MIN);
        assert_eq!(src.current().map(|e| e.payload), Some(0));
        assert_eq!(src.time_seeks(), 4);
    }

    #[test]
    fn empty_source() {
        let mut src = MemorySource::new([]);
        src.seek_time(0);
        assert!(src.current().is_none());
        assert_eq!(src.time_span(), None);
        assert!(src.streams().is_empty());
    }
}
