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

/// How a view shows a statistics tree: which rows are expanded (by path,
/// the labels from the root joined by `/`, stable while the statistics
/// grow) and how siblings are sorted.
///
/// A row shallower than the tree's [`open_depth`](StatisticsTree::open_depth)
/// is expanded unless its path is in `collapsed`; a deeper one is
/// collapsed unless its path is in `expanded`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatisticsArrangement {
    /// Paths of the rows collapsed that would be expanded.
    pub collapsed: HashSet<String>,
    /// Paths of the rows expanded that would be collapsed.
    pub expanded: HashSet<String>,
    /// Value column to sort siblings by, largest first when the flag is
    /// set; `None` keeps the model's order.
    pub sort: Option<(usize, bool)>,
}

impl StatisticsArrangement {
    /// Whether the row at `path`, `depth` deep in a tree opened to
    /// `open_depth`, shows its children.
    pub fn is_expanded(&self, path: &str, depth: u16, open_depth: u16) -> bool {
        if depth < open_depth {
            !self.collapsed.contains(path)
        } else {
            self.expanded.contains(path)
        }
    }

    /// Collapses the row at `path` if it is expanded, expands it if not.
    pub fn toggle(&mut self, path: &str, depth: u16, open_depth: u16) {
        let (set, other) = if depth < open_depth {
            (&mut self.collapsed, &mut self.expanded)
        } else {
            (&mut self.expanded, &mut self.collapsed)
        };
        other.remove(path);
        if !set.remove(path) {
            set.insert(path.to_owned());
        }
    }
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

/// A statistics tree as a view reads it: the children of a row when the
/// row is expanded, never every row at once. A kernel trace of tens of
/// thousands of threads has millions of rows (an event name under every
/// mode of every thread on every CPU) where a view shows a few hundred.
pub trait StatisticsTree: Send + Sync + std::fmt::Debug {
    /// Title of the name column.
    fn name_title(&self) -> &str;
    /// Titles of the value columns.
    fn columns(&self) -> &[String];
    /// Rows shallower than this are shown expanded, until collapsed.
    fn open_depth(&self) -> u16 {
        u16::MAX
    }
    /// Appends the children of `parent` (`None`: the roots) to `out`, in
    /// the model's order.
    fn children(&self, parent: Option<u64>, out: &mut Vec<StatisticsTreeRow>);
}

/// A row of a [`StatisticsTree`].
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsTreeRow {
    /// What [`StatisticsTree::children`] takes to list its children.
    pub id: u64,
    /// Name.
    pub label: String,
    /// One value per column.
    pub values: Vec<StatValue>,
    /// Whether it has children.
    pub has_children: bool,
}

/// A [`StatisticsRender`] read as a tree (its rows' depths give the
/// parents): what a small table (a Pajé trace's, an export's) is shown as.
#[derive(Debug)]
pub struct TableTree {
    render: Arc<StatisticsRender>,
    /// The children of row `p` are `kids[first[p]..first[p + 1]]`; slot
    /// `row_count()` holds the roots.
    first: Vec<u32>,
    kids: Vec<u32>,
}

impl TableTree {
    /// `render`'s rows as a tree.
    pub fn new(render: Arc<StatisticsRender>) -> Self {
        let n = render.row_count();
        // Each row's parent: the last row above it less deep (rows are
        // in depth-first order); `n` for a root.
        let mut parents = Vec::with_capacity(n);
        let mut stack: Vec<u32> = Vec::new();
        for &depth in &render.rows.depths {
            stack.truncate(depth as usize);
            parents.push(stack.last().map_or(n, |&p| p as usize));
            stack.push(parents.len() as u32 - 1);
        }
        let mut first = vec![0u32; n + 3];
        for &p in &parents {
            first[p + 2] += 1;
        }
        for i in 2..first.len() {
            first[i] += first[i - 1];
        }
        let mut kids = vec![0u32; n];
        for (i, &p) in parents.iter().enumerate() {
            let at = &mut first[p + 1];
            kids[*at as usize] = i as u32;
            *at += 1;
        }
        first.truncate(n + 2);
        TableTree {
            render,
            first,
            kids,
        }
    }

    fn kids(&self, p: usize) -> &[u32] {
        &self.kids[self.first[p] as usize..self.first[p + 1] as usize]
    }
}

impl StatisticsTree for TableTree {
    fn name_title(&self) -> &str {
        &self.render.name_title
    }
    fn columns(&self) -> &[String] {
        &self.render.columns
    }
    fn children(&self, parent: Option<u64>, out: &mut Vec<StatisticsTreeRow>) {
        let p = parent.map_or(self.render.row_count(), |p| p as usize);
        for &i in self.kids(p) {
            let row = self.render.row(i as usize);
            out.push(StatisticsTreeRow {
                id: i as u64,
                label: row.label.to_owned(),
                values: row.values.to_vec(),
                has_children: !self.kids(i as usize).is_empty(),
            });
        }
    }
}

/// No parent: a root row.
const ROOT: u32 = u32::MAX;

/// A [`StatisticsTree`] as a [`StatisticsArrangement`] shows it: siblings
/// sorted, the rows below collapsed rows left out, rows with children
/// given an [`Expander`].
///
/// It reads the tree from its roots down through the expanded rows only,
/// and holds the rows shown: what a view arranges is what it can show,
/// however many rows the tree has below its collapsed rows.
#[derive(Debug)]
pub struct ArrangedStatistics {
    tree: Arc<dyn StatisticsTree>,
    /// The rows shown, in display order.
    table: StatisticsRender,
    /// The shown row above each ([`ROOT`] for a root).
    parents: Vec<u32>,
    /// The expander of each shown row.
    expanders: Vec<Expander>,
}

impl ArrangedStatistics {
    /// `tree` as `arrangement` shows it.
    pub fn new(tree: Arc<dyn StatisticsTree>, arrangement: &StatisticsArrangement) -> Self {
        let open_depth = tree.open_depth();
        let mut out = StatisticsBuilder::new(tree.name_title(), tree.columns().to_vec());
        let mut parents = Vec::new();
        let mut expanders = Vec::new();
        // Depth first from the roots: (row, its depth, its path, the shown
        // row above it).
        let mut todo: Vec<(StatisticsTreeRow, u16, String, u32)> = Vec::new();
        let mut kids = Vec::new();
        let mut push_children = |todo: &mut Vec<_>, id, depth, path: &str, parent| {
            kids.clear();
            tree.children(id, &mut kids);
            if let Some((col, descending)) = arrangement.sort {
                let key = |r: &StatisticsTreeRow| match r.values.get(col) {
                    Some(StatValue::Count(n)) => *n as f64,
                    Some(StatValue::Duration(d)) => *d as f64,
                    Some(StatValue::Percent(p)) => *p,
                    _ => f64::NEG_INFINITY,
                };
                // Stable: equal keys keep the model's order.
                kids.sort_by(|x, y| {
                    let o = key(x).total_cmp(&key(y));
                    if descending {
                        o.reverse()
                    } else {
                        o
                    }
                });
            }
            for r in kids.drain(..).rev() {
                let path = if path.is_empty() {
                    r.label.clone()
                } else {
                    format!("{path}/{}", r.label)
                };
                todo.push((r, depth, path, parent));
            }
        };
        push_children(&mut todo, None, 0, "", ROOT);
        while let Some((row, depth, path, parent)) = todo.pop() {
            let expander = if !row.has_children {
                Expander::Leaf
            } else if arrangement.is_expanded(&path, depth, open_depth) {
                Expander::Expanded
            } else {
                Expander::Collapsed
            };
            let at = parents.len() as u32;
            out.push(depth, &row.label, row.values);
            parents.push(parent);
            expanders.push(expander);
            if expander == Expander::Expanded {
                push_children(&mut todo, Some(row.id), depth + 1, &path, at);
            }
        }
        ArrangedStatistics {
            tree,
            table: out.build(),
            parents,
            expanders,
        }
    }

    /// A table shown as a tree (every row expanded unless collapsed).
    pub fn of_table(render: Arc<StatisticsRender>, arrangement: &StatisticsArrangement) -> Self {
        Self::new(Arc::new(TableTree::new(render)), arrangement)
    }

    /// The tree arranged.
    pub fn tree(&self) -> &Arc<dyn StatisticsTree> {
        &self.tree
    }

    /// The rows shown, in display order.
    pub fn rows(&self) -> impl Iterator<Item = ShownRow<'_>> {
        (0..self.table.row_count()).map(|i| self.row(i))
    }

    /// The path of shown row `i`: the labels from its root down to it,
    /// joined by `/`.
    pub fn path(&self, i: usize) -> String {
        let mut at = i as u32;
        let mut labels = Vec::new();
        while at != ROOT {
            labels.push(self.table.row(at as usize).label);
            at = self.parents[at as usize];
        }
        labels.reverse();
        labels.join("/")
    }

    /// Collapses shown row `i` if it is expanded, expands it if it is
    /// collapsed (nothing for a leaf).
    pub fn toggle(&self, i: usize, arrangement: &mut StatisticsArrangement) {
        if i < self.expanders.len() && self.expanders[i] != Expander::Leaf {
            let depth = self.table.row(i).depth;
            arrangement.toggle(&self.path(i), depth, self.tree.open_depth());
        }
    }
}

impl StatisticsTable for ArrangedStatistics {
    fn name_title(&self) -> &str {
        &self.table.name_title
    }
    fn columns(&self) -> &[String] {
        &self.table.columns
    }
    fn row_count(&self) -> usize {
        self.table.row_count()
    }
    fn row(&self, i: usize) -> ShownRow<'_> {
        ShownRow {
            expander: self.expanders[i],
            ..self.table.row(i)
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
        let plain = ArrangedStatistics::of_table(r.clone(), &StatisticsArrangement::default());
        assert_eq!(labels(&plain), ["▾ traceset", "▾ a", "x", "▾ b", "y", "z"]);
        assert_eq!(plain.path(4), "traceset/b/y");
        assert_eq!(plain.path(0), "traceset");
        let mut a = StatisticsArrangement {
            sort: Some((0, true)),
            ..Default::default()
        };
        a.collapsed.insert("traceset/a".into());
        let sorted = ArrangedStatistics::of_table(r.clone(), &a);
        assert_eq!(labels(&sorted), ["▾ traceset", "▾ b", "z", "y", "▸ a"]);
        assert_eq!(sorted.path(2), "traceset/b/z");
        a.sort = Some((0, false));
        let ascending = ArrangedStatistics::of_table(r.clone(), &a);
        assert_eq!(labels(&ascending), ["▾ traceset", "▸ a", "▾ b", "y", "z"]);
        a.collapsed.insert("traceset".into());
        assert_eq!(labels(&ArrangedStatistics::of_table(r, &a)), ["▸ traceset"]);
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
        let shown = ArrangedStatistics::of_table(r.clone(), &a);
        assert_eq!(
            labels(&shown),
            ["▾ traceset", "▸ /usr/bin/a", "▾ /usr", "bin"]
        );
        assert_eq!(shown.path(1), "traceset//usr/bin/a");
        // The row's path, as the view takes it from a click, collapses it.
        let mut b = StatisticsArrangement::default();
        b.collapsed.insert(shown.path(2));
        let other = ArrangedStatistics::of_table(r, &b);
        assert_eq!(
            labels(&other),
            ["▾ traceset", "▾ /usr/bin/a", "x", "▸ /usr"]
        );
    }

    /// Rows from the tree's open depth down are collapsed until expanded,
    /// and a toggle flips a row whichever its default.
    #[test]
    fn rows_below_the_open_depth_start_collapsed() {
        #[derive(Debug)]
        struct Shallow(TableTree);
        impl StatisticsTree for Shallow {
            fn name_title(&self) -> &str {
                self.0.name_title()
            }
            fn columns(&self) -> &[String] {
                self.0.columns()
            }
            fn open_depth(&self) -> u16 {
                1
            }
            fn children(&self, parent: Option<u64>, out: &mut Vec<StatisticsTreeRow>) {
                self.0.children(parent, out)
            }
        }
        let tree: Arc<dyn StatisticsTree> = Arc::new(Shallow(TableTree::new(table(&[
            (0, "traceset", 10),
            (1, "a", 3),
            (2, "x", 3),
            (1, "b", 7),
            (2, "y", 7),
        ]))));
        let mut a = StatisticsArrangement::default();
        let shown = ArrangedStatistics::new(tree.clone(), &a);
        assert_eq!(labels(&shown), ["▾ traceset", "▸ a", "▸ b"]);
        shown.toggle(2, &mut a);
        let shown = ArrangedStatistics::new(tree.clone(), &a);
        assert_eq!(labels(&shown), ["▾ traceset", "▸ a", "▾ b", "y"]);
        shown.toggle(0, &mut a);
        let shown = ArrangedStatistics::new(tree.clone(), &a);
        assert_eq!(labels(&shown), ["▸ traceset"]);
        // A leaf toggles nothing.
        shown.toggle(0, &mut a);
        let shown = ArrangedStatistics::new(tree.clone(), &a);
        shown.toggle(3, &mut a);
        assert_eq!(
            labels(&ArrangedStatistics::new(tree, &a)),
            ["▾ traceset", "▸ a", "▾ b", "y"]
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
