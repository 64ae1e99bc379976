//! Bar charts: one bar per series (a target in a run), the mean over repetitions, with the 95%
//! confidence interval as an error bar.

use super::axis::Axis;
use super::svg::{fit, text_width, Layout, Paint, Svg, MUTED, PLOT_WIDTH, SLANT_DEGREES, TEXT};
use crate::{escape, humanize};

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    /// The series' label.
    pub label: String,
    /// How the series is drawn.
    pub paint: Paint,
    /// Mean over repetitions.
    pub value: f64,
    /// Half-width of the 95% confidence interval; 0 when unknown.
    pub err: f64,
    /// Number of repetitions behind the mean.
    pub repetitions: usize,
}

/// A bar chart of one metric across series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BarChart {
    /// Shown at the top, e.g. the metric name.
    pub title: String,
    /// Shown at the top right, e.g. "higher is better".
    pub note: String,
    /// Unit of the values.
    pub unit: String,
    /// The bars, in series order.
    pub bars: Vec<Bar>,
}

impl BarChart {
    /// The chart as `<svg class="chart" data-chart="bar">`.
    pub(crate) fn render(&self) -> String {
        let legend: Vec<(String, Paint)> = self.bars.iter().map(|b| (b.label.clone(), b.paint)).collect();
        let slot = PLOT_WIDTH / self.bars.len().max(1) as f64;
        let labels = CategoryLabels::new(self.bars.iter().map(|b| b.label.as_str()), slot);
        let layout = Layout::new(&legend, labels.extra_room);
        let mut svg = Svg::new("bar", &self.title, &self.note, layout.total_height);
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        let max = self.bars.iter().map(|b| finite(b.value) + finite(b.err)).fold(0.0, f64::max);
        let axis = Axis::linear(max, &self.unit);
        svg.y_axis(&layout, &axis, &humanize::quantity(&self.unit));
        let bar_width = (slot * 0.6).min(72.0);
        for (i, bar) in self.bars.iter().enumerate() {
            let center = layout.left + slot * (i as f64 + 0.5);
            draw_bar(&mut svg, &layout, &axis, &self.unit, (center, bar_width, slot), bar, &bar.label);
            labels.draw(&mut svg, &layout, center, i);
        }
        svg.legend(&layout, &legend);
        svg.finish()
    }
}

/// Category labels under a chart: side by side when each fits its slot, else slanted (and
/// cut at 150 px), with the room they need under the plot.
pub(super) struct CategoryLabels {
    labels: Vec<String>,
    slanted: bool,
    /// Room needed under the plot beyond the usual.
    pub extra_room: f64,
}

impl CategoryLabels {
    /// The labels of slots `slot` px wide.
    pub(super) fn new<'l>(labels: impl Iterator<Item = &'l str> + Clone, slot: f64) -> Self {
        let slanted = labels.clone().any(|l| text_width(l, 11.0) > slot - 6.0);
        let labels: Vec<String> = labels.map(|l| if slanted { fit(l, 150.0, 11.0) } else { l.to_string() }).collect();
        let extra_room = if slanted {
            let longest = labels.iter().map(|l| text_width(l, 11.0)).fold(0.0, f64::max);
            longest * SLANT_DEGREES.to_radians().sin() + 12.0 - 30.0
        } else {
            0.0
        };
        Self { labels, slanted, extra_room }
    }

    /// Label `i` under the slot centred at `center`.
    pub(super) fn draw(&self, svg: &mut Svg, layout: &Layout, center: f64, i: usize) {
        let Some(label) = self.labels.get(i) else { return };
        if self.slanted {
            svg.slanted_text((center + 4.0, layout.bottom() + 14.0), 11.0, MUTED, label);
        } else {
            svg.text((center, layout.bottom() + 18.0), "middle", 11.0, MUTED, label);
        }
    }
}

/// One bar at `center`, `width` wide in a slot of `slot`: its rectangle with `tooltip_head`
/// and the value as its tooltip, its error bar, and the value above it where it fits.
pub(super) fn draw_bar(
    svg: &mut Svg,
    layout: &Layout,
    axis: &Axis,
    unit: &str,
    (center, width, slot): (f64, f64, f64),
    bar: &Bar,
    tooltip_head: &str,
) {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let value = finite(bar.value);
    let top = layout.y(axis.fraction(value));
    let text = humanize::mean_ci(bar.value, Some(bar.err).filter(|_| bar.repetitions > 1), unit);
    let tooltip = format!("{tooltip_head}: {text} (n={})", bar.repetitions);
    svg.raw(&format!(
        r#"<rect x="{:.1}" y="{top:.1}" width="{width:.1}" height="{:.1}" rx="2" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
        center - width / 2.0,
        (layout.bottom() - top).max(0.0),
        bar.paint.color(),
        bar.paint.opacity(),
        escape::html(&tooltip)
    ));
    let mut label_y = top;
    if bar.err > 0.0 && bar.err.is_finite() {
        let high = layout.y(axis.fraction(value + bar.err));
        let low = layout.y(axis.fraction((value - bar.err).max(0.0)));
        let cap = (width / 4.0).min(8.0);
        svg.line((center, low), (center, high), TEXT, 1.5);
        svg.line((center - cap, high), (center + cap, high), TEXT, 1.5);
        svg.line((center - cap, low), (center + cap, low), TEXT, 1.5);
        label_y = high;
    }
    let value_text = humanize::value(bar.value, unit);
    if text_width(&value_text, 10.0) <= slot - 4.0 {
        svg.text((center, label_y - 5.0), "middle", 10.0, MUTED, &value_text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_error_bars_and_escaped_labels() {
        let chart = BarChart {
            title: "read_iops".into(),
            note: "higher is better".into(),
            unit: "ops/s".into(),
            bars: vec![
                Bar { label: "ext4".into(), paint: Paint::default(), value: 1000.0, err: 100.0, repetitions: 3 },
                Bar {
                    label: "<script>alert(1)</script>".into(),
                    paint: Paint { hue: 1, age: 0 },
                    value: 500.0,
                    err: 0.0,
                    repetitions: 1,
                },
            ],
        };
        let svg = chart.render();
        assert!(svg.starts_with(r#"<svg class="chart" data-chart="bar""#));
        assert_eq!(svg.matches("<rect").count(), 1 + 2 + 2); // background, bars, legend swatches
        assert_eq!(svg.matches("stroke-width=\"1.5\"").count(), 3); // one error bar: stem and caps
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.contains("ext4: 1.00k ± 0.10k ops/s (n=3)"));
    }
}
