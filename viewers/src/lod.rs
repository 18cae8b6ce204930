//! Level of detail: builders that models feed with raw intervals, events,
//! arrows and counter values of one row, and that never keep more than a
//! few items per pixel column.
//!
//! A render made for W pixels thus holds O(rows × W) items whatever the size
//! of the trace, like LTTV's control flow viewer that skips drawing until the
//! next pixel ("next_good_time") and marks the skipped changes with a
//! collision dot.
//!
//! Intervals: an interval lasting at least one pixel is kept as is (so a
//! zoomed-in render is exact). Consecutive shorter ones are merged into one
//! *mixed* interval, in the state that lasted longest (ties: the first seen),
//! with the number of merged intervals and the time they really covered; a
//! merged group is closed as soon as it spans a pixel, so state changes stay
//! visible at pixel resolution. Gaps shorter than a pixel (invisible anyway)
//! are bridged; longer gaps are kept.
//!
//! Why at most 3 intervals meet any pixel: an output interval is either at
//! least one pixel long, or was closed because a gap of at least a pixel or
//! an interval of at least a pixel follows it. Either way the output after
//! next starts at least one pixel later, so a pixel holds at most two starts,
//! plus the interval coming from its left.

use std::collections::HashMap;
use traceloom_base::Time;

use crate::render::types::{Arrow, CounterSample, DrawnEvent, RowId, StateInterval, StyleKey};
use crate::time::PixelScale;

/// Most intervals a [`RowIntervalsBuilder`] output can overlap within one
/// pixel column (see the module documentation).
pub const MAX_INTERVALS_PER_PIXEL: usize = 3;

#[derive(Debug)]
struct Group {
    start: Time,
    end: Time,
    /// Number of input intervals (a pushed merged interval counts as many).
    merged: u32,
    /// Number of items pushed into the group.
    items: u32,
    covered: u64,
    first: StateInterval,
    /// Time per state, in first-seen order (few distinct states per pixel).
    durations: Vec<(StyleKey, u64)>,
}

impl Group {
    fn new(iv: StateInterval) -> Self {
        Group {
            start: iv.start,
            end: iv.end,
            merged: iv.merged.max(1),
            items: 1,
            covered: iv.covered,
            durations: vec![(iv.state.clone(), iv.covered)],
            first: iv,
        }
    }

    fn add(&mut self, iv: StateInterval) {
        self.end = iv.end;
        self.merged = self.merged.saturating_add(iv.merged.max(1));
        self.items += 1;
        self.covered = self.covered.saturating_add(iv.covered);
        match self.durations.iter_mut().find(|(k, _)| *k == iv.state) {
            Some((_, d)) => *d = d.saturating_add(iv.covered),
            None => self.durations.push((iv.state, iv.covered)),
        }
    }

    fn into_interval(mut self) -> StateInterval {
        if self.items == 1 {
            return self.first;
        }
        let mut best = 0;
        for (i, (_, d)) in self.durations.iter().enumerate() {
            if *d > self.durations[best].1 {
                best = i;
            }
        }
        StateInterval {
            start: self.start,
            end: self.end,
            state: self.durations.swap_remove(best).0,
            label: None,
            merged: self.merged,
            covered: self.covered,
            properties: Default::default(),
        }
    }
}

/// Level-of-detail builder of one row's state intervals.
///
/// Intervals must be pushed in time order; an interval starting before the
/// previous one ended is trimmed to start there. Empty intervals and
/// intervals outside the render's range are dropped.
#[derive(Debug)]
pub struct RowIntervalsBuilder {
    scale: PixelScale,
    out: Vec<StateInterval>,
    group: Option<Group>,
    last_end: Option<Time>,
}

impl RowIntervalsBuilder {
    /// A builder for the grid `scale`.
    pub fn new(scale: PixelScale) -> Self {
        RowIntervalsBuilder {
            scale,
            out: Vec::new(),
            group: None,
            last_end: None,
        }
    }

    /// Adds `[start, end)` in `state`.
    pub fn push(&mut self, start: Time, end: Time, state: impl Into<StyleKey>) {
        self.push_interval(StateInterval::new(start, end, state));
    }

    /// Adds an interval with its label and properties (kept if it lasts at
    /// least a pixel).
    pub fn push_interval(&mut self, mut iv: StateInterval) {
        if let Some(le) = self.last_end {
            if iv.start < le {
                iv.start = le;
                if iv.merged <= 1 {
                    iv.covered = iv.end.saturating_sub(iv.start).max(0) as u64;
                }
            }
        }
        if iv.end <= iv.start {
            return;
        }
        self.last_end = Some(iv.end);
        if !self.scale.range.overlaps(iv.start, iv.end) {
            return;
        }
        let duration = iv.end.abs_diff(iv.start);
        if self.scale.at_least_one_pixel(duration) {
            self.flush();
            self.out.push(iv);
            return;
        }
        match &mut self.group {
            Some(g) if !self.scale.at_least_one_pixel(iv.start.abs_diff(g.end)) => g.add(iv),
            _ => {
                self.flush();
                self.group = Some(Group::new(iv));
            }
        }
        let g = self.group.as_ref().expect("group just filled");
        if self.scale.at_least_one_pixel(g.end.abs_diff(g.start)) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(g) = self.group.take() {
            self.out.push(g.into_interval());
        }
    }

    /// Number of output intervals so far (merged groups still open excluded).
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether nothing was output yet.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty() && self.group.is_none()
    }

    /// The intervals, in time order.
    pub fn finish(mut self) -> Vec<StateInterval> {
        self.flush();
        self.out
    }
}

/// Level-of-detail builder of one row's drawn events: events falling in the
/// same pixel column collapse into one marker (the first event, with the
/// count of events).
#[derive(Debug)]
pub struct RowEventsBuilder {
    scale: PixelScale,
    out: Vec<DrawnEvent>,
    last_pixel: Option<u32>,
    last_time: Option<Time>,
    sorted: bool,
}

impl RowEventsBuilder {
    /// A builder for the grid `scale`.
    pub fn new(scale: PixelScale) -> Self {
        RowEventsBuilder {
            scale,
            out: Vec::new(),
            last_pixel: None,
            last_time: None,
            sorted: true,
        }
    }

    /// Adds an event (ignored outside the render's range). Events should come
    /// in time order; out-of-order ones are sorted at the end.
    pub fn push(&mut self, ev: DrawnEvent) {
        if !self.scale.range.contains(ev.time) {
            return;
        }
        if self.last_time.is_some_and(|t| ev.time < t) {
            self.sorted = false;
        }
        self.last_time = Some(ev.time);
        let p = self.scale.pixel_of(ev.time);
        match self.out.last_mut() {
            Some(last) if self.last_pixel == Some(p) => {
                last.count = last.count.saturating_add(ev.count.max(1));
            }
            _ => {
                self.out.push(ev);
                self.last_pixel = Some(p);
            }
        }
    }

    /// The markers, in time order, at most one per pixel column.
    pub fn finish(self) -> Vec<DrawnEvent> {
        if self.sorted {
            return self.out;
        }
        let mut events = self.out;
        events.sort_by_key(|e| e.time);
        let mut again = RowEventsBuilder::new(self.scale);
        for e in events {
            again.push(e);
        }
        again.out
    }
}

/// Level-of-detail builder of an arrow series: arrows between the same two
/// rows leaving and arriving in the same pixel columns collapse into one
/// (with their count).
#[derive(Debug)]
pub struct ArrowsBuilder {
    scale: PixelScale,
    out: Vec<Arrow>,
    seen: HashMap<(RowId, RowId, u32, u32), usize>,
}

impl ArrowsBuilder {
    /// A builder for the grid `scale`.
    pub fn new(scale: PixelScale) -> Self {
        ArrowsBuilder {
            scale,
            out: Vec::new(),
            seen: HashMap::new(),
        }
    }

    /// Adds an arrow; arrows entirely before or after the range are dropped,
    /// arrows with one end outside are kept (drawn leaving the border).
    pub fn push(&mut self, arrow: Arrow) {
        let r = self.scale.range;
        let lo = arrow.from.time.min(arrow.to.time);
        let hi = arrow.from.time.max(arrow.to.time);
        if hi < r.start || lo > r.end {
            return;
        }
        let key = (
            arrow.from.row,
            arrow.to.row,
            self.scale.pixel_of(arrow.from.time),
            self.scale.pixel_of(arrow.to.time),
        );
        match self.seen.get(&key) {
            Some(&i) => {
                let a = &mut self.out[i];
                a.count = a.count.saturating_add(arrow.count.max(1));
            }
            None => {
                self.seen.insert(key, self.out.len());
                self.out.push(arrow);
            }
        }
    }

    /// The arrows, in push order.
    pub fn finish(self) -> Vec<Arrow> {
        self.out
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    pixel: u32,
    sample: CounterSample,
}

/// Level-of-detail builder of a counter: at most one sample per pixel column
/// (first change time, last value, min and max of the values in between).
/// Values must come in time order; non-finite values are ignored.
#[derive(Debug)]
pub struct CounterBuilder {
    scale: PixelScale,
    out: Vec<CounterSample>,
    bucket: Option<Bucket>,
    /// Last value before the range: the value the range starts with.
    carry: Option<f64>,
    /// Last value pushed inside the range.
    last: Option<f64>,
}

impl CounterBuilder {
    /// A builder for the grid `scale`.
    pub fn new(scale: PixelScale) -> Self {
        CounterBuilder {
            scale,
            out: Vec::new(),
            bucket: None,
            carry: None,
            last: None,
        }
    }

    /// The counter takes `value` from time `t` on.
    pub fn push(&mut self, t: Time, value: f64) {
        if !value.is_finite() {
            return;
        }
        let r = self.scale.range;
        if t < r.start {
            self.carry = Some(value);
            return;
        }
        if t > r.end {
            return;
        }
        if self.last.is_none() {
            if let Some(c) = self.carry {
                // The range starts with the value set before it.
                self.bucket = Some(Bucket {
                    pixel: 0,
                    sample: CounterSample {
                        time: r.start,
                        value: c,
                        min: c,
                        max: c,
                    },
                });
                self.last = Some(c);
            }
        }
        let p = self.scale.pixel_of(t);
        match &mut self.bucket {
            Some(b) if b.pixel == p => {
                b.sample.value = value;
                b.sample.min = b.sample.min.min(value);
                b.sample.max = b.sample.max.max(value);
            }
            _ => {
                if let Some(b) = self.bucket.take() {
                    self.out.push(b.sample);
                }
                // The value before the change holds at the start of the
                // pixel, so it is part of the pixel's extent.
                let prev = self.last.unwrap_or(value);
                self.bucket = Some(Bucket {
                    pixel: p,
                    sample: CounterSample {
                        time: t,
                        value,
                        min: prev.min(value),
                        max: prev.max(value),
                    },
                });
            }
        }
        self.last = Some(value);
    }

    /// The samples, in time order.
    pub fn finish(mut self) -> Vec<CounterSample> {
        if let Some(b) = self.bucket.take() {
            self.out.push(b.sample);
        }
        if self.out.is_empty() {
            if let Some(c) = self.carry {
                self.out.push(CounterSample {
                    time: self.scale.range.start,
                    value: c,
                    min: c,
                    max: c,
                });
            }
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use traceloom_base::TimeRange;

    const STATES: [&str; 4] = ["run", "wait", "sys", "irq"];

    /// Input intervals described as (gap before, duration, state index).
    fn build(start: Time, parts: &[(u64, u64, usize)]) -> Vec<StateInterval> {
        let mut t = start;
        let mut v = Vec::new();
        for &(gap, dur, s) in parts {
            t += gap as Time;
            v.push(StateInterval::new(t, t + dur as Time, STATES[s]));
            t += dur as Time;
        }
        v
    }

    fn run(scale: PixelScale, input: &[StateInterval]) -> Vec<StateInterval> {
        let mut b = RowIntervalsBuilder::new(scale);
        for iv in input {
            b.push_interval(iv.clone());
        }
        b.finish()
    }

    /// Whether `[s, e)` meets pixel column `p` (exact rational bounds).
    fn meets_pixel(scale: PixelScale, s: Time, e: Time, p: u32) -> bool {
        let w = scale.width as i128;
        let span = scale.range.span() as i128;
        let rs = (s as i128 - scale.range.start as i128) * w;
        let re = (e as i128 - scale.range.start as i128) * w;
        rs < (p as i128 + 1) * span && re > p as i128 * span
    }

    fn part() -> impl Strategy<Value = (u64, u64, usize)> {
        // Mostly tiny intervals, some long ones, so that both paths run.
        (
            prop_oneof![4 => Just(0u64), 1 => 1u64..50, 1 => 50u64..3000],
            prop_oneof![6 => 1u64..40, 1 => 40u64..5000],
            0usize..STATES.len(),
        )
    }

    proptest! {
        #[test]
        fn contiguous_rows_keep_their_exact_extent(
            parts in prop::collection::vec((Just(0u64), 1u64..400, 0usize..4), 1..400),
            width in 1u32..300,
        ) {
            let input = build(1_000, &parts);
            let end = input.last().unwrap().end;
            let scale = PixelScale::new(TimeRange::new(1_000, end), width);
            let out = run(scale, &input);
            prop_assert_eq!(out.first().unwrap().start, 1_000);
            prop_assert_eq!(out.last().unwrap().end, end);
            for w in out.windows(2) {
                prop_assert_eq!(w[0].end, w[1].start, "gap or overlap introduced");
            }
            let covered: u64 = out.iter().map(|i| i.covered).sum();
            prop_assert_eq!(covered, (end - 1_000) as u64);
        }

        #[test]
        fn merging_is_bounded_and_loses_no_time(
            parts in prop::collection::vec(part(), 1..500),
            width in 1u32..200,
            lead in 0u64..2000,
        ) {
            let input = build(0, &parts);
            let end = input.last().unwrap().end;
            // The range starts inside the row sometimes: clipped intervals
            // are kept whole.
            let scale = PixelScale::new(TimeRange::new(lead.min(end as u64 - 1) as Time, end), width);
            let out = run(scale, &input);
            let kept: Vec<&StateInterval> = input
                .iter()
                .filter(|i| scale.range.overlaps(i.start, i.end))
                .collect();

            // Sorted, non-overlapping.
            for w in out.windows(2) {
                prop_assert!(w[0].end <= w[1].start);
            }
            // Each input interval lies in exactly one output interval, and
            // the counts and covered time add up.
            let mut total_merged = 0u64;
            for o in &out {
                let inside: Vec<&&StateInterval> = kept
                    .iter()
                    .filter(|i| i.start >= o.start && i.end <= o.end)
                    .collect();
                prop_assert_eq!(inside.len() as u32, o.merged);
                let cov: u64 = inside.iter().map(|i| i.covered).sum();
                prop_assert_eq!(cov, o.covered);
                total_merged += o.merged as u64;
                if o.merged == 1 {
                    prop_assert_eq!(*inside[0], o, "single interval must pass unchanged");
                } else {
                    // Dominant: longest total time, first seen on ties.
                    let mut acc: Vec<(&str, u64)> = Vec::new();
                    for i in &inside {
                        match acc.iter_mut().find(|(k, _)| *k == i.state.as_str()) {
                            Some((_, d)) => *d += i.covered,
                            None => acc.push((i.state.as_str(), i.covered)),
                        }
                    }
                    let max = acc.iter().map(|a| a.1).max().unwrap();
                    let expect = acc.iter().find(|a| a.1 == max).unwrap().0;
                    prop_assert_eq!(o.state.as_str(), expect);
                    // Only sub-pixel intervals merge.
                    for i in &inside {
                        prop_assert!(!scale.at_least_one_pixel(i.end.abs_diff(i.start)));
                    }
                }
            }
            prop_assert_eq!(total_merged, kept.len() as u64);
            let cov_in: u64 = kept.iter().map(|i| i.covered).sum();
            let cov_out: u64 = out.iter().map(|i| i.covered).sum();
            prop_assert_eq!(cov_in, cov_out);

            // Gaps of a pixel or more stay gaps.
            for w in kept.windows(2) {
                let (a, b) = (w[0].end, w[1].start);
                if scale.at_least_one_pixel(b.abs_diff(a)) {
                    for o in &out {
                        prop_assert!(!(o.start < b && o.end > a), "visible gap filled");
                    }
                }
            }

            // At most MAX_INTERVALS_PER_PIXEL per pixel column.
            for p in 0..scale.width {
                let n = out.iter().filter(|o| meets_pixel(scale, o.start, o.end, p)).count();
                prop_assert!(n <= MAX_INTERVALS_PER_PIXEL, "pixel {} has {} intervals", p, n);
            }
        }

        #[test]
        fn zoomed_in_rows_pass_through(
            parts in prop::collection::vec((0u64..500, 100u64..1000, 0usize..4), 1..100),
            width in 1u32..10,
        ) {
            let input = build(0, &parts);
            let end = input.last().unwrap().end;
            // A pixel is at most 100 ns: every interval covers one.
            let span = 100 * width as i64;
            let scale = PixelScale::new(TimeRange::new(0, span.min(end).max(1)), width);
            let out = run(scale, &input);
            let kept: Vec<StateInterval> = input
                .into_iter()
                .filter(|i| scale.range.overlaps(i.start, i.end))
                .collect();
            prop_assert_eq!(out, kept);
        }

        #[test]
        fn events_collapse_per_pixel(
            times in prop::collection::vec(0i64..100_000, 0..500),
            width in 1u32..300,
        ) {
            let mut times = times;
            times.sort();
            let scale = PixelScale::new(TimeRange::new(0, 100_000), width);
            let mut b = RowEventsBuilder::new(scale);
            for &t in &times {
                b.push(DrawnEvent::new(t, "ev", "mark"));
            }
            let out = b.finish();
            let total: u64 = out.iter().map(|e| e.count as u64).sum();
            prop_assert_eq!(total, times.len() as u64);
            for w in out.windows(2) {
                prop_assert!(scale.pixel_of(w[0].time) < scale.pixel_of(w[1].time));
            }
            prop_assert!(out.len() <= width as usize);
        }

        #[test]
        fn counters_keep_one_sample_per_pixel(
            points in prop::collection::vec((0i64..10_000, -100.0f64..100.0), 1..300),
            width in 1u32..100,
        ) {
            let mut points = points;
            points.sort_by_key(|p| p.0);
            let scale = PixelScale::new(TimeRange::new(2_000, 8_000), width);
            let mut b = CounterBuilder::new(scale);
            for &(t, v) in &points {
                b.push(t, v);
            }
            let out = b.finish();
            for w in out.windows(2) {
                prop_assert!(scale.pixel_of(w[0].time) < scale.pixel_of(w[1].time));
            }
            // The last sample holds the last value at or before the end.
            let last_in = points.iter().rev().find(|p| p.0 <= 8_000).map(|p| p.1);
            prop_assert_eq!(out.last().map(|s| s.value), last_in);
            for s in &out {
                prop_assert!(s.min <= s.value && s.value <= s.max);
            }
        }
    }

    #[test]
    fn sub_pixel_intervals_merge_into_the_dominant_state() {
        // 10 px over 1000 ns: a pixel is 100 ns.
        let scale = PixelScale::new(TimeRange::new(0, 1000), 10);
        let mut b = RowIntervalsBuilder::new(scale);
        b.push(0, 10, "sys");
        b.push(10, 75, "run");
        b.push(75, 90, "sys");
        b.push(90, 120, "sys");
        b.push(120, 400, "wait");
        let out = b.finish();
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].start, out[0].end), (0, 120));
        assert_eq!(out[0].state.as_str(), "run");
        assert_eq!(out[0].merged, 4);
        assert!(out[0].is_mixed());
        assert_eq!(out[1], StateInterval::new(120, 400, "wait"));
    }

    #[test]
    fn overlapping_and_outside_input_is_cleaned() {
        let scale = PixelScale::new(TimeRange::new(1000, 2000), 10);
        let mut b = RowIntervalsBuilder::new(scale);
        b.push(0, 500, "run"); // before the range
        b.push(900, 1300, "run");
        b.push(1200, 1500, "wait"); // overlaps: trimmed to 1300
        b.push(1500, 1500, "sys"); // empty
        b.push(2500, 3000, "run"); // after the range
        let out = b.finish();
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[1].start, out[1].end, out[1].covered),
            (1300, 1500, 200)
        );
    }

    #[test]
    fn arrows_dedup_per_pixel_and_keep_border_crossers() {
        let scale = PixelScale::new(TimeRange::new(1000, 2000), 10);
        let mut b = ArrowsBuilder::new(scale);
        b.push(Arrow::new(RowId(1), 1010, RowId(2), 1020));
        b.push(Arrow::new(RowId(1), 1011, RowId(2), 1030));
        b.push(Arrow::new(RowId(2), 1011, RowId(1), 1030));
        b.push(Arrow::new(RowId(1), 500, RowId(2), 1500)); // enters the range
        b.push(Arrow::new(RowId(1), 100, RowId(2), 200)); // before the range
        let out = b.finish();
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].count, 2);
        assert_eq!(out[2].from.time, 500);
    }

    #[test]
    fn counter_carries_the_value_set_before_the_range() {
        let scale = PixelScale::new(TimeRange::new(1000, 2000), 10);
        let mut b = CounterBuilder::new(scale);
        b.push(0, 5.0);
        b.push(1500, 7.0);
        b.push(1510, 3.0);
        let out = b.finish();
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].time, out[0].value), (1000, 5.0));
        assert_eq!(
            (out[1].time, out[1].value, out[1].min, out[1].max),
            (1500, 3.0, 3.0, 7.0)
        );

        let mut b = CounterBuilder::new(scale);
        b.push(0, 5.0);
        let out = b.finish();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].value, 5.0);
    }

    #[test]
    fn out_of_order_events_are_sorted() {
        let scale = PixelScale::new(TimeRange::new(0, 1000), 10);
        let mut b = RowEventsBuilder::new(scale);
        b.push(DrawnEvent::new(500, "b", "k"));
        b.push(DrawnEvent::new(100, "a", "k"));
        b.push(DrawnEvent::new(510, "c", "k"));
        let out = b.finish();
        assert_eq!(out.len(), 2);
        assert_eq!(&*out[0].name, "a");
        assert_eq!(out[1].count, 2);
    }
}
