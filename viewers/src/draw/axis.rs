//! The time axis shared by the time graph and the histogram: 1-2-5 × 10^k ns
//! ticks, the absolute time of the first tick, offsets from it for the
//! others.

use super::canvas::{Anchor, Canvas, Font, Rect, Stroke, TextMeasure};
use crate::style::PresentationConfig;
use crate::time::{
    decimals_for, digits_for_step, format_absolute, format_in_unit, nice_step, ticks,
    AbsoluteTimeFormat, TimeUnit, XMap,
};
use traceloom_base::Time;

/// Ticks and their labels for an axis.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisTicks {
    /// Step between ticks, in ns.
    pub step: u64,
    /// Tick times.
    pub times: Vec<Time>,
    /// Absolute time of the first tick.
    pub first_label: String,
    /// Offset labels of the other ticks (`+0.5 ms`), one per tick after the
    /// first.
    pub offset_labels: Vec<String>,
}

/// Height of an axis drawn with `font_size` text: two text lines (absolute
/// time, offsets) and the tick marks.
pub fn axis_height(font_size: f64) -> f64 {
    (font_size * 1.35 * 2.0 + 8.0).ceil()
}

fn labels_for(step: u64, times: &[Time], format: AbsoluteTimeFormat) -> (String, Vec<String>) {
    let Some(&first) = times.first() else {
        return (String::new(), Vec::new());
    };
    let max_off = times.last().map(|&t| t.abs_diff(first)).unwrap_or(0);
    let unit = TimeUnit::for_magnitude(max_off.max(step));
    let decimals = decimals_for(step, unit);
    let first_label = format_absolute(first, format, digits_for_step(step));
    let offsets = times[1..]
        .iter()
        .map(|&t| {
            format!(
                "+{}",
                format_in_unit(t as i128 - first as i128, unit, decimals)
            )
        })
        .collect();
    (first_label, offsets)
}

/// Ticks for `xmap`, spaced so that offset labels in `font` do not overlap.
pub fn compute_ticks(
    xmap: &XMap,
    m: &dyn TextMeasure,
    font: Font,
    format: AbsoluteTimeFormat,
) -> AxisTicks {
    let span = xmap.range.span();
    let mut min_px = 60.0;
    let mut result = None;
    // Label widths depend on the step and the step on label widths: a few
    // rounds settle it (widths only grow with fewer, larger offsets).
    for _ in 0..4 {
        let step = nice_step(span, xmap.width, min_px);
        let times = ticks(xmap.range, step);
        let (first_label, offset_labels) = labels_for(step, &times, format);
        let widest = offset_labels
            .iter()
            .map(|l| m.text_width(l, font))
            .fold(0.0, f64::max);
        let need = widest + font.size * 1.5;
        let done = need <= min_px;
        result = Some(AxisTicks {
            step,
            times,
            first_label,
            offset_labels,
        });
        if done {
            break;
        }
        min_px = need;
    }
    result.expect("at least one round")
}

/// Draws the axis in `area` (x positions from `xmap`); returns the ticks so
/// the caller can draw the grid.
pub fn draw_axis(
    cv: &mut dyn Canvas,
    area: Rect,
    xmap: &XMap,
    config: &PresentationConfig,
    font_size: f64,
    format: AbsoluteTimeFormat,
) -> AxisTicks {
    let font = Font::regular(font_size);
    let ticks = compute_ticks(xmap, cv, font, format);
    cv.begin_group("axis");
    cv.fill_rect(area, config.header_background);
    cv.push_clip(area);
    let line_h = font_size * 1.35;
    let y1 = area.y + 2.0 + line_h / 2.0;
    let y2 = area.y + 2.0 + line_h * 1.5;
    let tick = Stroke::solid(config.foreground, 1.0);
    let mut prev_right = f64::NEG_INFINITY;
    for (i, &t) in ticks.times.iter().enumerate() {
        let x = xmap.x(t).round() + 0.5;
        let long = if i == 0 {
            area.bottom() - area.y - 2.0
        } else {
            6.0
        };
        cv.line((x, area.bottom() - long), (x, area.bottom()), &tick);
        if i == 0 {
            let label_font = Font::bold(font_size);
            let w = cv.text_width(&ticks.first_label, label_font);
            let (lx, anchor) = if x + 3.0 + w <= area.right() {
                (x + 3.0, Anchor::Start)
            } else {
                (x - 3.0, Anchor::End)
            };
            cv.text(
                (lx, y1),
                &ticks.first_label,
                label_font,
                config.foreground,
                anchor,
            );
        } else {
            let label = &ticks.offset_labels[i - 1];
            let w = cv.text_width(label, font);
            // Keep border labels inside the axis; one pushed back onto its
            // neighbour is left out.
            let left = (x - w / 2.0).min(area.right() - 2.0 - w);
            if left < prev_right + 4.0 {
                continue;
            }
            cv.text((left, y2), label, font, config.muted, Anchor::Start);
            prev_right = left + w;
        }
    }
    cv.pop_clip();
    cv.line(
        (area.x, area.bottom() - 0.5),
        (area.right(), area.bottom() - 0.5),
        &Stroke::solid(config.foreground, 1.0),
    );
    cv.end_group();
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;
    use traceloom_base::TimeRange;

    struct Fixed;
    impl TextMeasure for Fixed {
        fn text_width(&self, text: &str, font: Font) -> f64 {
            text.chars().count() as f64 * font.size * 0.6
        }
    }

    #[test]
    fn ticks_do_not_overlap_and_read_well() {
        let xmap = XMap {
            range: TimeRange::new(1_700_000_000_123_456_789, 1_700_000_000_133_456_789),
            x0: 0.0,
            width: 800.0,
        };
        let t = compute_ticks(
            &xmap,
            &Fixed,
            Font::regular(12.0),
            AbsoluteTimeFormat::ClockUtc,
        );
        // 10 ms over 800 px.
        assert!(t.times.len() >= 4, "{t:?}");
        let px = t.step as f64 * 800.0 / 10_000_000.0;
        let widest = t
            .offset_labels
            .iter()
            .map(|l| Fixed.text_width(l, Font::regular(12.0)))
            .fold(0.0, f64::max);
        assert!(px >= widest, "labels overlap: {px} < {widest}");
        assert_eq!(t.step % 1000, 0);
        assert!(t.first_label.starts_with("22:13:20.1"), "{}", t.first_label);
        assert!(t.offset_labels[0].starts_with('+') && t.offset_labels[0].ends_with("ms"));
    }
}
