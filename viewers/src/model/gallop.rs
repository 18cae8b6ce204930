//! The forward search every render uses: from a known index, gallop
//! (1, 2, 4, ... ahead) while a monotone predicate holds, then bisect the
//! last step. Its probes stay near the start, where the next pixel
//! column's items are, so a render's searches touch few cache lines
//! where a bisection of the whole list would miss at nearly every probe.
//! Within a block, once narrowed, a plain bisection.

/// The last index in `from..n` up to which `holds` is true, `holds`
/// being true for a prefix of `from..n` and assumed true at `from`
/// (which is returned when it holds nowhere after it). `from` must be
/// less than `n`.
pub(super) fn last_holding(from: usize, n: usize, holds: impl Fn(usize) -> bool) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = lo + 1;
    while hi < n && holds(hi) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    let mut hi = hi.min(n);
    // holds(lo), and !holds(hi) or hi == n: bisect (lo, hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The number of indices in `from..to` for which `holds` is true, `holds`
/// being true for a prefix of them: a bisection, for a range already
/// narrowed (a block's items).
pub(super) fn count_holding(from: usize, to: usize, mut holds: impl FnMut(usize) -> bool) -> usize {
    let (mut a, mut z) = (from, to);
    while a < z {
        let mid = a + (z - a) / 2;
        if holds(mid) {
            a = mid + 1;
        } else {
            z = mid;
        }
    }
    a - from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_end_of_the_prefix() {
        for n in 1..70 {
            for end in 0..n {
                // holds on 0..=end.
                for from in 0..=end {
                    assert_eq!(last_holding(from, n, |k| k <= end), end, "{n} {end} {from}");
                }
            }
        }
    }
}
