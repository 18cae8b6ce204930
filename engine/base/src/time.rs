//! Time in nanoseconds and closed time ranges.

/// A timestamp in nanoseconds from the traces' origin (the Epoch for
/// LTTng traces), the engine's unit of time everywhere.
pub type Time = i64;

/// A closed time range `[start, end]` in nanoseconds: both ends included.
///
/// [`TimeRange::new`] never gives an empty or zero-length range (it widens
/// `end` to `start + 1`), so that a time ↔ pixel mapping made for it never
/// divides by zero; a range written field by field may be a single instant
/// (`start == end`), which is what a filter's time bounds can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeRange {
    /// First nanosecond of the range.
    pub start: Time,
    /// Last nanosecond of the range.
    pub end: Time,
}

impl TimeRange {
    /// Every timestamp.
    pub const ALL: TimeRange = TimeRange {
        start: Time::MIN,
        end: Time::MAX,
    };

    /// The range `[start, end]`, swapped if given backwards and widened to at
    /// least one nanosecond.
    pub fn new(start: Time, end: Time) -> Self {
        let (start, end) = if end < start {
            (end, start)
        } else {
            (start, end)
        };
        TimeRange {
            start,
            end: end.max(start.saturating_add(1)),
        }
    }

    /// Length of the range in nanoseconds (`end - start`; at least 1 for a
    /// range made by [`TimeRange::new`]).
    pub fn span(&self) -> u64 {
        self.end.abs_diff(self.start)
    }

    /// Whether `t` lies in the range (both ends included).
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t <= self.end
    }

    /// Whether `[start, end]` overlaps the range by more than one instant.
    pub fn overlaps(&self, start: Time, end: Time) -> bool {
        start < self.end && end > self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_orders_and_widens() {
        assert_eq!(TimeRange::new(5, 2), TimeRange { start: 2, end: 5 });
        assert_eq!(TimeRange::new(7, 7).span(), 1);
        assert_eq!(TimeRange::new(Time::MAX, Time::MAX).end, Time::MAX);
        assert!(TimeRange::new(2, 5).contains(5));
        assert!(!TimeRange::new(2, 5).overlaps(5, 9));
        assert!(TimeRange::ALL.contains(Time::MIN));
    }
}
