//! SVG charts drawn in Rust, for the HTML report (inline) and the Markdown report (files).
//!
//! Every chart is one `<svg class="chart" data-chart="KIND">` with its title, axes, grid, a
//! legend and native tooltips (`<title>` elements, no script), styled by presentation
//! attributes only, so the same text renders inline in a page and as a standalone `.svg` file.

mod axis;
mod bar;
mod grouped;
mod line;
mod svg;

pub(crate) use bar::{Bar, BarChart};
pub(crate) use grouped::GroupedBarChart;
pub(crate) use line::{Line, LineChart, Point, XAxis};
pub(crate) use svg::Paint;

/// A chart ready to render.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Chart {
    /// One metric across series.
    Bar(BarChart),
    /// Curves, time series and sweeps.
    Line(LineChart),
    /// Categories × series: a study's grouped bars.
    Grouped(GroupedBarChart),
}

impl Chart {
    /// The chart's title (also the alt text of its image in Markdown).
    pub(crate) fn title(&self) -> &str {
        match self {
            Chart::Bar(c) => &c.title,
            Chart::Line(c) => &c.title,
            Chart::Grouped(c) => &c.title,
        }
    }

    /// The chart as one SVG element.
    pub(crate) fn render(&self) -> String {
        match self {
            Chart::Bar(c) => c.render(),
            Chart::Line(c) => c.render(),
            Chart::Grouped(c) => c.render(),
        }
    }
}
