//! Grouped bar charts: a study's figure of categories (fio modes, benchmarks, phases) × series
//! (targets): one group of bars per category, one bar per series in each, the mean over
//! repetitions with its 95% confidence interval as an error bar.

use super::axis::Axis;
use super::bar::{draw_bar, Bar, CategoryLabels};
use super::svg::{Layout, Paint, Svg, PLOT_WIDTH};
use crate::humanize;

/// A grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GroupedBarChart {
    /// Shown at the top.
    pub title: String,
    /// Shown at the top right.
    pub note: String,
    /// Unit of the values.
    pub unit: String,
    /// The series, in legend order: (label, paint).
    pub series: Vec<(String, Paint)>,
    /// (category, a bar per series or none where it has no value), in order.
    pub groups: Vec<(String, Vec<Option<Bar>>)>,
}

impl GroupedBarChart {
    /// The chart as `<svg class="chart" data-chart="grouped">`; a bar's tooltip names its
    /// series and category.
    pub(crate) fn render(&self) -> String {
        let slot = PLOT_WIDTH / self.groups.len().max(1) as f64;
        let labels = CategoryLabels::new(self.groups.iter().map(|(c, _)| c.as_str()), slot);
        let layout = Layout::new(&self.series, labels.extra_room);
        let mut svg = Svg::new("grouped", &self.title, &self.note, layout.total_height);
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        let bars = || self.groups.iter().flat_map(|(_, b)| b.iter().flatten());
        let max = bars().map(|b| finite(b.value) + finite(b.err)).fold(0.0, f64::max);
        let axis = Axis::linear(max, &self.unit);
        svg.y_axis(&layout, &axis, &humanize::quantity(&self.unit));
        let n = self.series.len().max(1) as f64;
        let bar_slot = slot * 0.84 / n;
        let bar_width = (bar_slot * 0.86).min(56.0);
        for (g, (category, bars)) in self.groups.iter().enumerate() {
            let group_center = layout.left + slot * (g as f64 + 0.5);
            for (s, bar) in bars.iter().enumerate() {
                let Some(bar) = bar else { continue };
                let center = group_center + bar_slot * (s as f64 - (n - 1.0) / 2.0);
                let head = format!("{} · {category}", bar.label);
                draw_bar(&mut svg, &layout, &axis, &self.unit, (center, bar_width, bar_slot), bar, &head);
            }
            labels.draw(&mut svg, &layout, group_center, g);
        }
        svg.legend(&layout, &self.series);
        svg.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_per_category_a_bar_per_series() {
        let bar = |label: &str, hue: usize, value: f64| Bar {
            label: label.into(),
            paint: Paint { hue, age: 0 },
            value,
            err: value / 10.0,
            repetitions: 3,
        };
        let chart = GroupedBarChart {
            title: "Fig. 3".into(),
            note: String::new(),
            unit: "bytes/s".into(),
            series: vec![("ext3".into(), Paint { hue: 0, age: 0 }), ("ext4".into(), Paint { hue: 1, age: 0 })],
            groups: vec![
                ("write".into(), vec![Some(bar("ext3", 0, 4e8)), Some(bar("ext4", 1, 1e8))]),
                ("read".into(), vec![Some(bar("ext3", 0, 3e8)), None]),
            ],
        };
        let svg = chart.render();
        assert!(svg.starts_with(r#"<svg class="chart" data-chart="grouped""#));
        assert_eq!(svg.matches("<rect").count(), 1 + 3 + 2); // background, bars, legend swatches
        assert!(svg.contains("ext3 · write: ") && svg.contains("ext4 · write: ") && svg.contains("ext3 · read: "));
        assert!(!svg.contains("ext4 · read"));
        assert!(svg.contains(">write</text>") && svg.contains(">read</text>"));
    }
}
