//! Drawing of a [`StatisticsRender`]: a tree of names with right-aligned
//! value columns.

use super::canvas::{elide, Anchor, CairoCanvas, Canvas, Font, Rect, Stroke, TextMeasure};
use crate::render::{StatValue, StatisticsRender};
use crate::style::PresentationConfig;
use crate::time::format_duration;

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

/// `1234567` → `1,234,567`.
fn group_thousands(n: u64) -> String {
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
    /// Lays out `render` for `width`.
    pub fn compute(
        render: &StatisticsRender,
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
        let rows = &render.rows;
        let mut name_w = m.text_width(&render.name_title, bold);
        let em = opts.font_size;
        for i in longest(rows.len(), |i| {
            let r = &rows[i];
            r.depth as f64 * ind + r.label.chars().count() as f64 * em * 0.6
        }) {
            let r = &rows[i];
            name_w = name_w.max(r.depth as f64 * ind + m.text_width(&r.label, font));
        }
        let mut col_w: Vec<f64> = render
            .columns
            .iter()
            .map(|c| m.text_width(c, bold))
            .collect();
        for (k, w) in col_w.iter_mut().enumerate() {
            let text = |i: usize| rows[i].values.get(k).map(format_stat);
            for i in longest(rows.len(), |i| {
                text(i).map_or(0.0, |t| t.chars().count() as f64)
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
    pub fn natural_height(render: &StatisticsRender, opts: &StatisticsOptions) -> f64 {
        ((render.rows.len() + 1) as f64 * (opts.font_size * 1.7).round() + 2.0).ceil()
    }
}

/// Draws `render` on `cr`.
pub fn draw_statistics(
    cr: &cairo::Context,
    render: &StatisticsRender,
    config: &PresentationConfig,
    opts: &StatisticsOptions,
    width: f64,
    height: f64,
) -> Result<StatisticsLayout, cairo::Error> {
    let mut cv = CairoCanvas::new(cr);
    let l = paint_statistics(&mut cv, render, config, opts, width, height);
    cv.finish()?;
    Ok(l)
}

/// Draws `render` on any canvas.
pub fn paint_statistics(
    cv: &mut dyn Canvas,
    render: &StatisticsRender,
    config: &PresentationConfig,
    opts: &StatisticsOptions,
    width: f64,
    height: f64,
) -> StatisticsLayout {
    let l = StatisticsLayout::compute(render, opts, width, cv);
    let font = Font::regular(opts.font_size);
    let bold = Font::bold(opts.font_size);
    let pad = opts.font_size;
    let ind = (opts.font_size * 1.2).round();
    let rh = l.row_height;
    cv.fill_rect(Rect::new(0.0, 0.0, width, height), config.background);

    cv.begin_group("rows");
    cv.push_clip(Rect::new(0.0, rh, width, height - rh));
    let first = (opts.scroll_y / rh).floor().max(0.0) as usize;
    for (i, r) in render.rows.iter().enumerate().skip(first) {
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
        let label = elide(cv, &r.label, f, l.name_width - x - pad / 2.0);
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
        &render.name_title,
        bold,
        config.foreground,
        Anchor::Start,
    );
    for (k, title) in render.columns.iter().enumerate() {
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
    let bottom = (rh * (render.rows.len() + 1) as f64 - opts.scroll_y).min(height);
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
}
