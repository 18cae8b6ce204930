//! Statistics render objects: the tree of names with value columns that a
//! statistics model produces, and the same tree as a view arranges it
//! (collapsed rows, sorted siblings) without copying its rows.

use std::collections::HashSet;
use std::sync::Arc;

/// What a statistics column holds.
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue {
    /// Nothing.
    Empty,
    /// An event or occurrence count.
    Count(u64),
    /// A duration in nanoseconds.
    Duration(i64),
    /// A percentage (0–100).
    Percent(f64),
    /// Free text.
    Text(String),
}

/// One row of a statistics table, owned: what a table is built from when
/// its rows come one by one from elsewhere
/// ([`StatisticsRender::from_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StatRow {
    /// Indentation level.
    pub depth: u16,
    /// Name.
    pub label: String,
    /// One value per column.
    pub values: Vec<StatValue>,
}

/// A statistics table: a tree of names with value columns (LTTV's
/// statistics viewer, ViTE's statistics window), rows in display order,
/// each with one value per column.
///
/// The rows are flat (depths, labels in one string, values in one
/// vector), not a row object each: a 1 GB kernel trace's table has
/// 236,000 rows, and two allocations a row made building it and freeing
/// it most of its cost. Cloning shares the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsRender {
    /// Title of the name column.
    pub name_title: String,
    /// Titles of the value columns.
    pub columns: Arc<[String]>,
    rows: Arc<FlatRows>,
}

#[derive(Debug, Default, PartialEq)]
struct FlatRows {
    depths: Vec<u16>,
    /// End of each row's label in `labels`.
    label_ends: Vec<usize>,
    labels: String,
    /// `columns.len()` values a row.
    values: Vec<StatValue>,
}

impl StatisticsRender {
    /// A table of `rows` (values missing at the end of a row are
    /// [`StatValue::Empty`], values beyond the columns dropped).
    pub fn from_rows(
        name_title: impl Into<String>,
        columns: Vec<String>,
        rows: impl IntoIterator<Item = StatRow>,
    ) -> Self {
        let mut b = StatisticsBuilder::new(name_title, columns);
        for r in rows {
            b.push(r.depth, &r.label, r.values);
        }
        b.build()
    }

    /// Number of rows.
    pub fn row_count(&self) -> usize {
        self.rows.depths.len()
    }

    /// Row `i` (`i < row_count()`), without an expander.
    pub fn row(&self, i: usize) -> ShownRow<'_> {
        let r = &self.rows;
        let start = if i == 0 { 0 } else { r.label_ends[i - 1] };
        let w = self.columns.len();
        ShownRow {
            depth: r.depths[i],
            expander: Expander::Leaf,
            label: &r.labels[start..r.label_ends[i]],
            values: &r.values[i * w..(i + 1) * w],
        }
    }

    /// The rows, in order.
    pub fn rows(&self) -> impl Iterator<Item = ShownRow<'_>> {
        (0..self.row_count()).map(|i| self.row(i))
    }
}

/// Builds a [`StatisticsRender`] row by row.
#[derive(Debug)]
pub struct StatisticsBuilder {
    name_title: String,
    columns: Arc<[String]>,
    rows: FlatRows,
}

impl StatisticsBuilder {
    /// An empty table with these titles.
    pub fn new(name_title: impl Into<String>, columns: Vec<String>) -> Self {
        StatisticsBuilder {
            name_title: name_title.into(),
            columns: columns.into(),
            rows: FlatRows::default(),
        }
    }

    /// Room for `rows` more rows, their labels `label_bytes` long.
    pub fn reserve(&mut self, rows: usize, label_bytes: usize) {
        let r = &mut self.rows;
        r.labels.reserve(label_bytes);
        r.depths.reserve(rows);
        r.label_ends.reserve(rows);
        r.values.reserve(rows * self.columns.len());
    }

    /// Adds a row (values missing at the end are [`StatValue::Empty`],
    /// values beyond the columns dropped).
    pub fn push(&mut self, depth: u16, label: &str, values: impl IntoIterator<Item = StatValue>) {
        let r = &mut self.rows;
        r.depths.push(depth);
        r.labels.push_str(label);
        r.label_ends.push(r.labels.len());
        let w = self.columns.len();
        let end = r.values.len() + w;
        r.values.extend(values.into_iter().take(w));
        r.values.resize(end, StatValue::Empty);
    }

    /// The table.
    pub fn build(self) -> StatisticsRender {
        StatisticsRender {
            name_title: self.name_title,
            columns: self.columns,
            rows: Arc::new(self.rows),
        }
    }
}

/// How a view shows a [`StatisticsRender`]: rows collapsed (by path, the
/// labels from the root joined by `/`, stable while the statistics grow)
/// and siblings sorted by a value column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatisticsArrangement {
    /// Paths of the collapsed rows.
    pub collapsed: HashSet<String>,
    /// Value column to sort siblings by, largest first when the flag is
    /// set; `None` keeps the model's order.
    pub sort: Option<(usize, bool)>,
}

/// Whether a shown row has children, and whether they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expander {
    /// No children.
    Leaf,
    /// Children shown below.
    Expanded,
    /// Children hidden.
    Collapsed,
}

impl Expander {
    /// The mark drawn before the label: `▾ `, `▸ ` or nothing.
    pub fn mark(self) -> &'static str {
        match self {
            Expander::Leaf => "",
            Expander::Expanded => "▾ ",
            Expander::Collapsed => "▸ ",
        }
    }
}

/// One row of a table as shown.
#[derive(Debug, Clone, Copy)]
pub struct ShownRow<'a> {
    /// Indentation level.
    pub depth: u16,
    /// Its expander.
    pub expander: Expander,
    /// Name, without the expander's mark.
    pub label: &'a str,
    /// One value per column.
    pub values: &'a [StatValue],
}

impl ShownRow<'_> {
    /// The label as drawn: the expander's mark, then the name.
    pub fn marked_label(&self) -> String {
        format!("{}{}", self.expander.mark(), self.label)
    }
}

/// What a statistics drawing reads: titles and rows in display order.
pub trait StatisticsTable {
    /// Title of the name column.
    fn name_title(&self) -> &str;
    /// Titles of the value columns.
    fn columns(&self) -> &[String];
    /// Number of rows.
    fn row_count(&self) -> usize;
    /// Row `i` (`i < row_count()`).
    fn row(&self, i: usize) -> ShownRow<'_>;
}

/// A render drawn as it is: every row, in the model's order, no expander.
impl StatisticsTable for StatisticsRender {
    fn name_title(&self) -> &str {
        &self.name_title
    }
    fn columns(&self) -> &[String] {
        &self.columns
    }
    fn row_count(&self) -> usize {
        StatisticsRender::row_count(self)
    }
    fn row(&self, i: usize) -> ShownRow<'_> {
        StatisticsRender::row(self, i)
    }
}

/// No parent: a root row.
const ROOT: u32 = u32::MAX;

/// A [`StatisticsRender`] as a [`StatisticsArrangement`] shows it:
/// siblings sorted, the descendants of collapsed rows left out, rows with
/// children given an [`Expander`].
///
/// It holds indices into the render's rows, not copies: a 1 GB kernel
/// trace's table has 236,000 rows, and copying their labels and values
/// and building every row's path took 0.2–0.5 s at each change. A row's
/// path (what [`StatisticsArrangement::collapsed`] holds) is made when
/// asked, by [`path`](Self::path).
#[derive(Debug, Clone)]
pub struct ArrangedStatistics {
    render: Arc<StatisticsRender>,
    /// Each render row's parent ([`ROOT`] for a root).
    parents: Vec<u32>,
    /// Render rows shown, in display order.
    shown: Vec<u32>,
    /// The expander of each shown row.
    expanders: Vec<Expander>,
}

impl ArrangedStatistics {
    /// `render` as `arrangement` shows it.
    pub fn new(render: Arc<StatisticsRender>, arrangement: &StatisticsArrangement) -> Self {
        let rows = &*render;
        let n = rows.row_count();
        // Each row's parent: the last row above it less deep (rows are
        // in depth-first order).
        let mut parents = Vec::with_capacity(n);
        let mut stack: Vec<u32> = Vec::new();
        for (i, &depth) in rows.rows.depths.iter().enumerate() {
            stack.truncate(depth as usize);
            parents.push(stack.last().copied().unwrap_or(ROOT));
            stack.push(i as u32);
        }
        let slot = |p: u32| if p == ROOT { n } else { p as usize };
        // Children of each row (slot `n`: the roots), in one array: those
        // of row `p` are `kids[first[p]..first[p + 1]]`, in the model's
        // order.
        let mut first = vec![0u32; n + 3];
        for &p in &parents {
            first[slot(p) + 2] += 1;
        }
        for i in 2..first.len() {
            first[i] += first[i - 1];
        }
        let mut kids = vec![0u32; n];
        for (i, &p) in parents.iter().enumerate() {
            let at = &mut first[slot(p) + 1];
            kids[*at as usize] = i as u32;
            *at += 1;
        }
        let children = |p: usize| &kids[first[p] as usize..first[p + 1] as usize];
        let mut collapsed = vec![false; n];
        for path in &arrangement.collapsed {
            mark_path(rows, &children, children(n), path, &mut collapsed);
        }
        if let Some((col, descending)) = arrangement.sort {
            let key = |i: u32| match rows.row(i as usize).values.get(col) {
                Some(StatValue::Count(n)) => *n as f64,
                Some(StatValue::Duration(d)) => *d as f64,
                Some(StatValue::Percent(p)) => *p,
                _ => f64::NEG_INFINITY,
            };
            for p in 0..=n {
                let (a, b) = (first[p] as usize, first[p + 1] as usize);
                // Stable: equal keys keep the model's order.
                kids[a..b].sort_by(|&x, &y| {
                    let o = key(x).total_cmp(&key(y));
                    if descending {
                        o.reverse()
                    } else {
                        o
                    }
                });
            }
        }
        let children = |p: usize| &kids[first[p] as usize..first[p + 1] as usize];
        let mut shown = Vec::with_capacity(n);
        let mut expanders = Vec::with_capacity(n);
        // Depth first from the roots.
        let mut todo: Vec<u32> = children(n).iter().rev().copied().collect();
        while let Some(i) = todo.pop() {
            let below = children(i as usize);
            let expander = match (below.is_empty(), collapsed[i as usize]) {
                (true, _) => Expander::Leaf,
                (false, true) => Expander::Collapsed,
                (false, false) => Expander::Expanded,
            };
            shown.push(i);
            expanders.push(expander);
            if expander == Expander::Expanded {
                todo.extend(below.iter().rev());
            }
        }
        ArrangedStatistics {
            render,
            parents,
            shown,
            expanders,
        }
    }

    /// The render arranged.
    pub fn render(&self) -> &Arc<StatisticsRender> {
        &self.render
    }

    /// The rows shown, in display order.
    pub fn rows(&self) -> impl Iterator<Item = ShownRow<'_>> {
        (0..self.shown.len()).map(|i| self.row(i))
    }

    /// The path of shown row `i`: the labels from its root down to it,
    /// joined by `/`.
    pub fn path(&self, i: usize) -> String {
        let mut at = self.shown[i];
        let mut labels = Vec::new();
        while at != ROOT {
            labels.push(self.render.row(at as usize).label);
            at = self.parents[at as usize];
        }
        labels.reverse();
        labels.join("/")
    }
}

/// Marks collapsed the rows among `candidates` (and below them) whose
/// path is `path`. Labels may hold `/`, so a path is matched label by
/// label from the front, not split.
fn mark_path<'k>(
    rows: &StatisticsRender,
    children: &impl Fn(usize) -> &'k [u32],
    candidates: &[u32],
    path: &str,
    collapsed: &mut [bool],
) {
    for &c in candidates {
        let Some(rest) = path.strip_prefix(rows.row(c as usize).label) else {
            continue;
        };
        if rest.is_empty() {
            collapsed[c as usize] = true;
        } else if let Some(rest) = rest.strip_prefix('/') {
            mark_path(rows, children, children(c as usize), rest, collapsed);
        }
    }
}

impl StatisticsTable for ArrangedStatistics {
    fn name_title(&self) -> &str {
        &self.render.name_title
    }
    fn columns(&self) -> &[String] {
        &self.render.columns
    }
    fn row_count(&self) -> usize {
        self.shown.len()
    }
    fn row(&self, i: usize) -> ShownRow<'_> {
        ShownRow {
            expander: self.expanders[i],
            ..self.render.row(self.shown[i] as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(depth: u16, label: &str, n: u64) -> StatRow {
        StatRow {
            depth,
            label: label.into(),
            values: vec![StatValue::Count(n)],
        }
    }

    fn labels(a: &ArrangedStatistics) -> Vec<String> {
        a.rows().map(|r| r.marked_label()).collect()
    }

    /// A one-column table of `(depth, label, events)` rows.
    fn table(rows: &[(u16, &str, u64)]) -> Arc<StatisticsRender> {
        Arc::new(StatisticsRender::from_rows(
            "Statistics",
            vec!["events".to_string()],
            rows.iter().map(|&(d, l, n)| row(d, l, n)),
        ))
    }

    #[test]
    fn statistics_collapse_and_sort() {
        let r = table(&[
            (0, "traceset", 10),
            (1, "a", 3),
            (2, "x", 3),
            (1, "b", 7),
            (2, "y", 2),
            (2, "z", 5),
        ]);
        let plain = ArrangedStatistics::new(r.clone(), &StatisticsArrangement::default());
        assert_eq!(labels(&plain), ["▾ traceset", "▾ a", "x", "▾ b", "y", "z"]);
        assert_eq!(plain.path(4), "traceset/b/y");
        assert_eq!(plain.path(0), "traceset");
        let mut a = StatisticsArrangement {
            sort: Some((0, true)),
            ..Default::default()
        };
        a.collapsed.insert("traceset/a".into());
        let sorted = ArrangedStatistics::new(r.clone(), &a);
        assert_eq!(labels(&sorted), ["▾ traceset", "▾ b", "z", "y", "▸ a"]);
        assert_eq!(sorted.path(2), "traceset/b/z");
        a.sort = Some((0, false));
        let ascending = ArrangedStatistics::new(r.clone(), &a);
        assert_eq!(labels(&ascending), ["▾ traceset", "▸ a", "▾ b", "y", "z"]);
        a.collapsed.insert("traceset".into());
        assert_eq!(labels(&ArrangedStatistics::new(r, &a)), ["▸ traceset"]);
    }

    /// A label holding `/` is matched whole, and a path matching no row
    /// (a row gone since) collapses nothing.
    #[test]
    fn collapsed_paths_match_labels_with_slashes() {
        let r = table(&[
            (0, "traceset", 4),
            (1, "/usr/bin/a", 3),
            (2, "x", 3),
            (1, "/usr", 1),
            (2, "bin", 1),
        ]);
        let mut a = StatisticsArrangement::default();
        a.collapsed.insert("traceset//usr/bin/a".into());
        a.collapsed.insert("traceset/gone".into());
        let shown = ArrangedStatistics::new(r.clone(), &a);
        assert_eq!(
            labels(&shown),
            ["▾ traceset", "▸ /usr/bin/a", "▾ /usr", "bin"]
        );
        assert_eq!(shown.path(1), "traceset//usr/bin/a");
        // The row's path, as the view takes it from a click, collapses it.
        let mut b = StatisticsArrangement::default();
        b.collapsed.insert(shown.path(2));
        let other = ArrangedStatistics::new(r, &b);
        assert_eq!(
            labels(&other),
            ["▾ traceset", "▾ /usr/bin/a", "x", "▸ /usr"]
        );
    }

    /// A render drawn as it is has every row, unmarked.
    #[test]
    fn render_as_table_is_unarranged() {
        let r = StatisticsRender::from_rows(
            "Statistics",
            vec!["events".to_string(), "time".to_string()],
            vec![row(0, "traceset", 1), row(1, "a", 1)],
        );
        assert_eq!(r.row_count(), 2);
        assert_eq!(r.row(1).marked_label(), "a");
        // Values padded to the columns.
        assert_eq!(r.row(1).values, [StatValue::Count(1), StatValue::Empty]);
    }
}
