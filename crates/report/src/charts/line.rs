//! Line charts: latency percentile curves, per-second time series and sweeps (a metric against
//! the parameter that varies), one line per series.

use super::axis::Axis;
use super::svg::{Layout, Paint, Svg};
use crate::{escape, humanize};

/// Lines with at most this many points get a marker (and a tooltip) on every point.
const MARKER_LIMIT: usize = 40;

/// What the x axis shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum XAxis {
    /// Seconds since the start of the measured phase.
    Seconds,
    /// Percentiles (0-100) on the scale that spreads the tail.
    Percentile,
    /// A swept parameter's values placed by their number (bytes, ns, counts): a point's x is
    /// the number; each value is a tick labelled as the user wrote it.
    Values {
        /// The parameter's name.
        title: String,
        /// (number, text as given), in increasing order.
        ticks: Vec<(f64, String)>,
        /// Logarithmic placement (the values span 16× or more).
        log: bool,
    },
}

/// One point; `err` is the half-width of its 95% confidence interval (0 when none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub x: f64,
    pub y: f64,
    pub err: f64,
}

/// One line: a series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub label: String,
    pub paint: Paint,
    pub points: Vec<Point>,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineChart {
    /// `data-chart` of the SVG: `latency`, `timeseries` or `sweep`.
    pub kind: &'static str,
    /// Shown at the top.
    pub title: String,
    /// Shown at the top right.
    pub note: String,
    /// The x axis.
    pub x: XAxis,
    /// Unit of the y values.
    pub unit: String,
    /// A logarithmic y axis (latencies spanning decades).
    pub log_y: bool,
    /// The lines, in series order.
    pub lines: Vec<Line>,
}

impl LineChart {
    /// The chart as `<svg class="chart" data-chart="KIND">`.
    pub(crate) fn render(&self) -> String {
        let legend: Vec<(String, Paint)> = self.lines.iter().map(|l| (l.label.clone(), l.paint)).collect();
        let layout = Layout::new(&legend, 0.0);
        let mut svg = Svg::new(self.kind, &self.title, &self.note, layout.total_height);
        let points = || self.lines.iter().flat_map(|l| &l.points).filter(|p| p.y.is_finite() && p.x.is_finite());
        let y_axis = if self.log_y {
            let positive = || points().map(|p| p.y).filter(|y| *y > 0.0);
            Axis::log(positive().fold(f64::INFINITY, f64::min), positive().fold(0.0, f64::max), &self.unit)
        } else {
            Axis::linear(points().map(|p| p.y + p.err.max(0.0)).fold(0.0, f64::max), &self.unit)
        };
        let (x_axis, x_title) = match &self.x {
            XAxis::Seconds => (Axis::linear(points().map(|p| p.x).fold(0.0, f64::max), ""), "time (s)".to_string()),
            XAxis::Percentile => {
                (Axis::percentile(points().map(|p| p.x).fold(0.0, f64::max)), "percentile".to_string())
            }
            XAxis::Values { title, ticks, log } => {
                (Axis::values(ticks, *log), if *log { format!("{title} (log scale)") } else { title.clone() })
            }
        };
        svg.y_axis(&layout, &y_axis, &humanize::quantity(&self.unit));
        svg.x_axis(&layout, &x_axis, &x_title);
        for line in &self.lines {
            let stroke = line.paint.color();
            let (opacity, dash) = (line.paint.opacity(), line.paint.dash());
            let at = |p: &Point| (layout.x(x_axis.fraction(p.x)), layout.y(y_axis.fraction(p.y)));
            let shown: Vec<&Point> = line.points.iter().filter(|p| p.y.is_finite() && p.x.is_finite()).collect();
            let mut d = String::new();
            for (i, p) in shown.iter().enumerate() {
                let (x, y) = at(p);
                d.push_str(&format!("{}{x:.1},{y:.1}", if i == 0 { "M" } else { " L" }));
            }
            if shown.len() > 1 {
                svg.raw(&format!(
                    r#"<path d="{d}" fill="none" stroke="{stroke}" stroke-opacity="{opacity}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"{dash}><title>{}</title></path>"#,
                    escape::html(&line.label)
                ));
            }
            if shown.len() > MARKER_LIMIT {
                continue;
            }
            for p in shown {
                let (x, y) = at(p);
                if p.err > 0.0 && p.err.is_finite() {
                    let high = layout.y(y_axis.fraction(p.y + p.err));
                    let low = layout.y(y_axis.fraction(p.y - p.err));
                    svg.line((x, low), (x, high), stroke, 1.5);
                    svg.line((x - 4.0, high), (x + 4.0, high), stroke, 1.5);
                    svg.line((x - 4.0, low), (x + 4.0, low), stroke, 1.5);
                }
                let value = humanize::mean_ci(p.y, Some(p.err).filter(|e| *e > 0.0), &self.unit);
                let tooltip = format!("{} · {}: {value}", line.label, self.x_label(p.x));
                svg.raw(&format!(
                    r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{stroke}" fill-opacity="{opacity}" stroke="#ffffff" stroke-width="1"><title>{}</title></circle>"##,
                    escape::html(&tooltip)
                ));
            }
        }
        svg.legend(&layout, &legend);
        svg.finish()
    }

    /// How a point's x reads in its tooltip.
    fn x_label(&self, x: f64) -> String {
        match &self.x {
            XAxis::Seconds => format!("{x} s"),
            XAxis::Percentile => format!("p{x}"),
            XAxis::Values { title, ticks, .. } => {
                let value = ticks.iter().find(|(v, _)| *v == x).map_or_else(|| x.to_string(), |(_, t)| t.clone());
                format!("{title}={value}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(label: &str, hue: usize, ys: &[f64]) -> Line {
        Line {
            label: label.into(),
            paint: Paint { hue, age: 0 },
            points: ys.iter().enumerate().map(|(i, &y)| Point { x: i as f64, y, err: y / 10.0 }).collect(),
        }
    }

    #[test]
    fn sweep_lines_have_markers_whiskers_and_a_legend() {
        let chart = LineChart {
            kind: "sweep",
            title: "read_iops vs numjobs".into(),
            note: String::new(),
            x: XAxis::Values {
                title: "numjobs".into(),
                ticks: vec![(0.0, "1".into()), (1.0, "2".into()), (2.0, "4".into())],
                log: false,
            },
            unit: "ops/s".into(),
            log_y: false,
            lines: vec![line("ext4", 0, &[100.0, 190.0, 350.0]), line("x & y", 1, &[90.0, 170.0, 300.0])],
        };
        let svg = chart.render();
        assert!(svg.starts_with(r#"<svg class="chart" data-chart="sweep""#));
        assert_eq!(svg.matches("<path").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("ext4 · numjobs=4: 350 ± 35 ops/s"));
        assert!(svg.contains(">x &amp; y</text>"));
        assert!(svg.contains(">numjobs</text>"));
    }

    #[test]
    fn latency_curves_use_log_axes() {
        let chart = LineChart {
            kind: "latency",
            title: "read latency".into(),
            note: String::new(),
            x: XAxis::Percentile,
            unit: "ns".into(),
            log_y: true,
            lines: vec![Line {
                label: "ext4".into(),
                paint: Paint::default(),
                points: [(50.0, 8_000.0), (99.0, 90_000.0), (99.99, 2_000_000.0)]
                    .iter()
                    .map(|&(x, y)| Point { x, y, err: 0.0 })
                    .collect(),
            }],
        };
        let svg = chart.render();
        for tick in [">p50<", ">p99.99<", ">1 µs<", ">10 ms<", ">percentile<"] {
            assert!(svg.contains(tick), "{tick} in {svg}");
        }
    }
}
