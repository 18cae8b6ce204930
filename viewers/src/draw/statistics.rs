//! Drawing of a statistics table ([`StatisticsTable`]: a render as it
//! is, or as a view arranges it): a tree of names with right-aligned value
//! columns.

use super::canvas::{elide, Anchor, CairoCanvas, Canvas, Font, Rect, Stroke, TextMeasure};
use crate::render::{StatValue, StatisticsTable};
use crate::style::PresentationConfig;
use crate::time::{format_duration, TimeUnit};

/// How to draw a statistics table.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsOptions {
    /// Text size in pixels.
    pub font_size: f64,
    /// Vertical scroll in pixels.
    pub scroll_y: f64,
}

impl Default for StatisticsOptions {
    fn default() -> Self {
        StatisticsOptions {
            font_size: 12.0,
            scroll_y: 0.0,
        }
    }
}

/// Text of a value cell.
pub fn format_stat(v: &StatValue) -> String {
    match v {
        StatValue::Empty => String::new(),
        StatValue::Count(n) => group_thousands(*n),
        StatValue::Duration(ns) => format_duration(*ns as i128),
        StatValue::Percent(p) => format!("{p:.1} %"),
        StatValue::Text(s) => s.clone(),
    }
}

/// Characters in [`format_stat`]'s text of `v`, without writing it: the
/// layout weighs every row of a table (236,000 for a 1 GB kernel trace),
/// and writing each value took most of a painting. Exact but for a
/// percentage rounding up to one more digit (99.96 → `100.0 %`).
pub fn stat_text_chars(v: &StatValue) -> usize {
    fn digits(mut n: u128) -> usize {
        let mut d = 1;
        while n >= 10 {
            n /= 10;
            d += 1;
        }
        d
    }
    match v {
        StatValue::Empty => 0,
        StatValue::Count(n) => {
            let d = digits(*n as u128);
            d + (d - 1) / 3
        }
        StatValue::Duration(ns) => {
            // As `format_duration`: the largest unit, three decimals
            // truncated, trailing zeros dropped.
            let abs = ns.unsigned_abs();
            let unit = TimeUnit::for_magnitude(abs);
            let int = abs / unit.ns();
            let mut frac = (abs % unit.ns()) * 1_000 / unit.ns();
            let decimals = if unit == TimeUnit::Ns || frac == 0 {
                0
            } else {
                let mut d = 3;
                while frac.is_multiple_of(10) {
                    frac /= 10;
                    d -= 1;
                }
                d
            };
            let point = usize::from(decimals > 0);
            usize::from(*ns < 0)
                + digits(int as u128)
                + point
                + decimals
                + 1
                + unit.symbol().chars().count()
        }
        StatValue::Percent(p) => usize::from(*p < 0.0) + digits(p.abs().trunc() as u128) + 4,
        StatValue::Text(t) => t.chars().count(),
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Column geometry of a statistics table.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsLayout {
    /// Height of a row (header included).
    pub row_height: f64,
    /// Width of the name column.
    pub name_width: f64,
    /// Right edge of each value column.
    pub column_right: Vec<f64>,
    /// Width of the whole table.
    pub table_width: f64,
}

/// Rows of a table measured whole; a larger one has only its
/// `MEASURED_ROWS` longest texts measured.
const MEASURED_ROWS: usize = 256;

/// The rows `0..n` whose `length` (an estimate of the text's width) is
/// among the [`MEASURED_ROWS`] largest: all of them for a small table.
fn longest(n: usize, length: impl Fn(usize) -> f64) -> Vec<usize> {
    if n <= MEASURED_ROWS {
        return (0..n).collect();
    }
    // Each length once (a selection compares each row several times).
    let mut rows: Vec<(f64, usize)> = (0..n).map(|i| (length(i), i)).collect();
    rows.select_nth_unstable_by(MEASURED_ROWS - 1, |a, b| b.0.total_cmp(&a.0));
    rows.truncate(MEASURED_ROWS);
    rows.into_iter().map(|(_, i)| i).collect()
}

impl StatisticsLayout {
    /// Lays out `table` for `width`.
    pub fn compute(
        table: &dyn StatisticsTable,
        opts: &StatisticsOptions,
        width: f64,
        m: &dyn TextMeasure,
    ) -> Self {
        let font = Font::regular(opts.font_size);
        let bold = Font::bold(opts.font_size);
        let ind = (opts.font_size * 1.2).round();
        let pad = opts.font_size;
        // Measuring every row's text costs microseconds a row: seconds for
        // the 236,000 rows of a 1 GB kernel trace, at every paint. Only the
        // rows whose text is among the longest (in characters, after the
        // indent) are measured; a table of at most MEASURED_ROWS rows is
        // measured whole.
        let n = table.row_count();
        let mut name_w = m.text_width(table.name_title(), bold);
        let em = opts.font_size;
        for i in longest(n, |i| {
            let r = table.row(i);
            let chars = r.expander.mark().chars().count() + r.label.chars().count();
            r.depth as f64 * ind + chars as f64 * em * 0.6
        }) {
            let r = table.row(i);
            name_w = name_w.max(r.depth as f64 * ind + m.text_width(&r.marked_label(), font));
        }
        let mut col_w: Vec<f64> = table
            .columns()
            .iter()
            .map(|c| m.text_width(c, bold))
            .collect();
        for (k, w) in col_w.iter_mut().enumerate() {
            let text = |i: usize| table.row(i).values.get(k).map(format_stat);
            for i in longest(n, |i| {
                table
                    .row(i)
                    .values
                    .get(k)
                    .map_or(0.0, |v| stat_text_chars(v) as f64)
            }) {
                if let Some(t) = text(i) {
                    *w = w.max(m.text_width(&t, font));
                }
            }
        }
        let values_w: f64 = col_w.iter().map(|w| w + 2.0 * pad).sum();
        // The name column gets what is left, up to its natural width.
        let name_width = (name_w + 2.0 * pad)
            .min((width - values_w).max(width * 0.3))
            .ceil();
        let mut x = name_width;
        let mut column_right = Vec::with_capacity(col_w.len());
        for w in &col_w {
            x += w + 2.0 * pad;
            column_right.push(x.ceil());
        }
        StatisticsLayout {
            row_height: (opts.font_size * 1.7).round(),
            name_width,
            column_right,
            table_width: x.min(width),
        }
    }

    /// Height showing every row.
    pub fn natural_height(table: &dyn StatisticsTable, opts: &StatisticsOptions) -> f64 {
        ((table.row_count() + 1) as f64 * (opts.font_size * 1.7).round() + 2.0).ceil()
    }
}

/// Draws `table` on `cr`.
pub fn draw_statistics(
    cr: &cairo::Context,
    table: &dyn StatisticsTable,
    config: &PresentationConfig,
    opts: &StatisticsOptions,
    width: f64,
    height: f64,
) -> Result<StatisticsLayout, cairo::Error> {
    let mut cv = CairoCanvas::new(cr);
    let l = paint_statistics(&mut cv, table, config, opts, width, height);
    cv.finish()?;
    Ok(l)
}

/// Draws `table` on any canvas.
pub fn paint_statistics(
    cv: &mut dyn Canvas,
    table: &dyn StatisticsTable,
    config: &PresentationConfig,
    opts: &StatisticsOptions,
    width: f64,
    height: f64,
) -> StatisticsLayout {
    let l = StatisticsLayout::compute(table, opts, width, cv);
    let font = Font::regular(opts.font_size);
    let bold = Font::bold(opts.font_size);
    let pad = opts.font_size;
    let ind = (opts.font_size * 1.2).round();
    let rh = l.row_height;
    cv.fill_rect(Rect::new(0.0, 0.0, width, height), config.background);

    cv.begin_group("rows");
    cv.push_clip(Rect::new(0.0, rh, width, height - rh));
    let first = (opts.scroll_y / rh).floor().max(0.0) as usize;
    for i in first..table.row_count() {
        let r = table.row(i);
        let y = rh + i as f64 * rh - opts.scroll_y;
        if y > height {
            break;
        }
        if i % 2 == 1 {
            cv.fill_rect(Rect::new(0.0, y, l.table_width, rh), config.zebra);
        }
        let mid = y + rh / 2.0;
        let x = pad / 2.0 + r.depth as f64 * ind;
        let f = if r.depth == 0 { bold } else { font };
        let label = elide(cv, &r.marked_label(), f, l.name_width - x - pad / 2.0);
        cv.text((x, mid), &label, f, config.foreground, Anchor::Start);
        for (k, v) in r.values.iter().enumerate().take(l.column_right.len()) {
            let text = format_stat(v);
            cv.text(
                (l.column_right[k] - pad, mid),
                &text,
                font,
                config.foreground,
                Anchor::End,
            );
        }
    }
    cv.pop_clip();
    cv.end_group();

    cv.begin_group("header");
    cv.fill_rect(
        Rect::new(0.0, 0.0, l.table_width, rh),
        config.header_background,
    );
    cv.text(
        (pad / 2.0, rh / 2.0),
        table.name_title(),
        bold,
        config.foreground,
        Anchor::Start,
    );
    for (k, title) in table.columns().iter().enumerate() {
        cv.text(
            (l.column_right[k] - pad, rh / 2.0),
            title,
            bold,
            config.foreground,
            Anchor::End,
        );
    }
    let line = Stroke::solid(config.foreground.with_alpha(140), 1.0);
    cv.line((0.0, rh - 0.5), (l.table_width, rh - 0.5), &line);
    let sep = Stroke::solid(config.grid, 1.0);
    let bottom = (rh * (table.row_count() + 1) as f64 - opts.scroll_y).min(height);
    cv.line(
        (l.name_width + 0.5, 0.0),
        (l.name_width + 0.5, bottom),
        &sep,
    );
    for &x in &l.column_right[..l.column_right.len().saturating_sub(1)] {
        cv.line((x + 0.5, 0.0), (x + 0.5, bottom), &sep);
    }
    cv.end_group();
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_formatted() {
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(format_stat(&StatValue::Count(1000)), "1,000");
        assert_eq!(format_stat(&StatValue::Duration(1_500_000)), "1.5 ms");
        assert_eq!(format_stat(&StatValue::Percent(12.345)), "12.3 %");
    }

    /// The layout's character counts are those of the written values.
    #[test]
    fn text_chars_without_writing() {
        let mut values = vec![StatValue::Empty, StatValue::Text("héllo".into())];
        let mut n: u64 = 0;
        while n < u64::MAX / 7 {
            values.push(StatValue::Count(n));
            values.push(StatValue::Duration(n as i64));
            values.push(StatValue::Duration(-(n as i64)));
            n = n * 7 + 3;
        }
        for ns in [
            1_000,
            1_500,
            1_050,
            1_005,
            999_999,
            1_000_000_000,
            2_000_001_000,
        ] {
            values.push(StatValue::Duration(ns));
        }
        for p in [0.0, 5.04, 12.345, 99.9, 100.0, -3.2] {
            values.push(StatValue::Percent(p));
        }
        for v in &values {
            assert_eq!(stat_text_chars(v), format_stat(v).chars().count(), "{v:?}");
        }
    }
}
