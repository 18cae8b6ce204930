//! What a time-graph render shows and which rows it holds: the kernel and
//! the Pajé models decide the same way whether a render they made, or
//! are making, serves the view as it is now.

use std::ops::Range;

/// A render's identity `K` (window, widths, generations of the data and
/// of the rows configuration) and the rows it holds (display indices, end
/// excluded): those in view when it was asked for and a page either side
/// (`ControlFlowModel::rows_with_margin`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRender<K> {
    /// What the render shows.
    pub shows: K,
    /// The rows it holds.
    pub rows: Range<usize>,
}

impl<K: PartialEq> HeldRender<K> {
    /// Whether it serves a view that asks for `wanted` and shows the rows
    /// `shown`: the same identity, and every row in view held (any render
    /// of the identity when no row is in view).
    pub fn serves(&self, wanted: &K, shown: &Range<usize>) -> bool {
        self.shows == *wanted
            && (shown.is_empty() || (self.rows.start <= shown.start && shown.end <= self.rows.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_the_same_identity_with_every_row_in_view_held() {
        let r = HeldRender {
            shows: 7,
            rows: 10..50,
        };
        assert!(r.serves(&7, &(10..50)));
        assert!(r.serves(&7, &(20..30)));
        assert!(r.serves(&7, &(0..0)));
        assert!(!r.serves(&8, &(20..30)));
        assert!(!r.serves(&7, &(5..30)));
        assert!(!r.serves(&7, &(20..51)));
    }
}
