//! Rendering a step function stored compactly — sorted change times and a
//! code per change — into a [`RowIntervalsBuilder`], in time proportional
//! to the number of *pixels* the row covers rather than to its number of
//! changes.
//!
//! Wherever several changes fall in one pixel column, a binary search jumps
//! to the first change of the next column and the changes skipped are
//! pushed as one mixed interval whose state is the dominant one of a
//! bounded sample (like LTTV's "next good time"): a full-range render of a
//! 50-million-event trace costs O(rows × width × log n).

use crate::lod::RowIntervalsBuilder;
use crate::render::{StateInterval, StyleKey};
use crate::time::{PixelScale, Time};

/// Code meaning "no state here" (the interval is not drawn).
pub const NONE: u32 = u32::MAX;

/// Most intervals looked at to choose the dominant state of one pixel.
const SAMPLE: usize = 24;

/// Pushes the intervals `[times[k], times[k+1])` (the last one ends at
/// `end`) that overlap `scale`'s range. `code(k)` is interval k's state
/// code ([`NONE`]: not drawn), `key(code)` its style key, and `detail(k,
/// start, end)` builds an interval lasting at least a pixel (with its
/// label and tooltip).
pub fn push_steps(
    times: &[Time],
    end: Time,
    scale: PixelScale,
    out: &mut RowIntervalsBuilder,
    code: impl Fn(usize) -> u32,
    key: impl Fn(u32) -> StyleKey,
    detail: impl Fn(usize, Time, Time) -> StateInterval,
) {
    let n = times.len();
    if n == 0 {
        return;
    }
    let range = scale.range;
    let end_of = |k: usize| if k + 1 < n { times[k + 1] } else { end };
    // The interval containing the range start (or the first after it).
    let mut i = times
        .partition_point(|&t| t <= range.start)
        .saturating_sub(1);
    while i < n && times[i] <= range.end {
        let start = times[i];
        let stop = end_of(i);
        if stop <= start {
            i += 1;
            continue;
        }
        if scale.at_least_one_pixel(stop.abs_diff(start)) {
            let c = code(i);
            if c != NONE {
                out.push_interval(detail(i, start, stop));
            }
            i += 1;
            continue;
        }
        // Sub-pixel: every change starting in this pixel column at once.
        let p = scale.pixel_of(start.max(range.start));
        let next_pixel = if p + 1 >= scale.width {
            Time::MAX
        } else {
            scale.time_of_pixel(p + 1)
        };
        let j = i + times[i..].partition_point(|&t| t < next_pixel);
        if j - i <= 1 {
            let c = code(i);
            if c != NONE {
                out.push_interval(StateInterval::new(start, stop, key(c)));
            }
            i += 1;
            continue;
        }
        // Intervals i..j-1 all start and end inside the column; interval
        // j-1 starts in it too but may run on, so it is pushed on its own.
        let last = j - 1;
        let count = last - i;
        let stride = count.div_ceil(SAMPLE).max(1);
        let mut tally: Vec<(u32, u64)> = Vec::with_capacity(4);
        let mut k = i;
        while k < last {
            let c = code(k);
            if c != NONE {
                let d = times[k + 1].abs_diff(times[k]);
                match tally.iter_mut().find(|(x, _)| *x == c) {
                    Some((_, t)) => *t += d,
                    None => tally.push((c, d)),
                }
            }
            k += stride;
        }
        if let Some(&(best, _)) = tally.iter().max_by_key(|(_, d)| *d) {
            out.push_interval(StateInterval {
                start,
                end: times[last],
                state: key(best),
                label: None,
                merged: count as u32,
                covered: times[last].abs_diff(start),
                properties: Default::default(),
            });
        }
        i = last;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeRange;

    fn render(
        times: &[Time],
        codes: &[u32],
        end: Time,
        range: TimeRange,
        w: u32,
    ) -> Vec<StateInterval> {
        let scale = PixelScale::new(range, w);
        let mut b = RowIntervalsBuilder::new(scale);
        let keys = ["a", "b", "c"];
        push_steps(
            times,
            end,
            scale,
            &mut b,
            |k| codes[k],
            |c| StyleKey::new(keys[c as usize]),
            |k, s, e| StateInterval::new(s, e, keys[codes[k] as usize]),
        );
        b.finish()
    }

    #[test]
    fn zoomed_in_is_exact() {
        let iv = render(
            &[0, 10, 20, 30],
            &[0, 1, NONE, 2],
            40,
            TimeRange::new(0, 40),
            40,
        );
        let got: Vec<(Time, Time, &str)> = iv
            .iter()
            .map(|i| (i.start, i.end, i.state.as_str()))
            .collect();
        assert_eq!(got, vec![(0, 10, "a"), (10, 20, "b"), (30, 40, "c")]);
        // A window in the middle starts with the interval containing it.
        let iv = render(
            &[0, 10, 20, 30],
            &[0, 1, NONE, 2],
            40,
            TimeRange::new(15, 35),
            20,
        );
        assert_eq!(iv[0].start, 10);
        assert_eq!(iv.last().unwrap().end, 40);
    }

    #[test]
    fn zoomed_out_is_bounded_and_covers_the_row() {
        // 100k alternating changes of 1 ns over 100 px.
        let n = 100_000;
        let times: Vec<Time> = (0..n).collect();
        let codes: Vec<u32> = (0..n).map(|k| (k % 2) as u32).collect();
        let iv = render(&times, &codes, n, TimeRange::new(0, n), 100);
        assert!(iv.len() <= 3 * 100, "{}", iv.len());
        assert_eq!(iv[0].start, 0);
        assert_eq!(iv.last().unwrap().end, n);
        for w in iv.windows(2) {
            assert!(w[0].end <= w[1].start);
        }
        let merged: u64 = iv.iter().map(|i| i.merged as u64).sum();
        assert!(merged as i64 >= n - 200, "{merged}");
    }
}
