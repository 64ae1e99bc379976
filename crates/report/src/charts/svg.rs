//! The SVG frame every chart shares: the root element, title, plot area, axes and legend.
//!
//! Styling is by presentation attributes only (no CSS), so a chart renders the same inline in
//! the HTML report and as a standalone file beside the Markdown report.

use super::axis::Axis;
use crate::escape;

/// Width of every chart, in SVG user units (the HTML scales it to its column).
pub(crate) const WIDTH: f64 = 560.0;
/// Left edge of the plot area: room for the y tick labels and the y axis title.
const PLOT_LEFT: f64 = 84.0;
/// Right margin.
const PLOT_RIGHT: f64 = 20.0;
/// Width of the plot area.
pub(crate) const PLOT_WIDTH: f64 = WIDTH - PLOT_LEFT - PLOT_RIGHT;
/// Top of the plot area: room for the title.
const PLOT_TOP: f64 = 44.0;
/// Height of the plot area.
const PLOT_HEIGHT: f64 = 220.0;
/// Room under the plot for x tick labels and the x axis title.
const X_AXIS_ROOM: f64 = 46.0;
/// Angle of slanted category labels.
pub(crate) const SLANT_DEGREES: f64 = 35.0;
/// Height of one legend row.
const LEGEND_ROW: f64 = 20.0;

const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
pub(crate) const TEXT: &str = "#1f2328";
pub(crate) const MUTED: &str = "#59636e";
const GRID: &str = "#e8ebef";
const AXIS: &str = "#8c959f";

/// Series colours (Tableau 10): distinct, readable on white, and in the same order in every
/// chart so that a target keeps its colour throughout the report.
const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"];

/// How a series is drawn: the colour of its target, lighter (and dashed, for lines) for the
/// older runs of that target, so that "before" and "after" read as a pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Paint {
    /// Index of the target: picks the colour.
    pub hue: usize,
    /// 0 for the newest run of the target, 1 for the one before, ...
    pub age: usize,
}

impl Paint {
    /// The colour.
    pub(crate) fn color(self) -> &'static str {
        PALETTE[self.hue % PALETTE.len()]
    }

    /// Opacity of fills and strokes.
    pub(crate) fn opacity(self) -> f64 {
        match self.age {
            0 => 1.0,
            1 => 0.55,
            _ => 0.35,
        }
    }

    /// Extra attributes for a stroke: a dash pattern for older runs.
    pub(crate) fn dash(self) -> &'static str {
        match self.age {
            0 => "",
            1 => r#" stroke-dasharray="6 4""#,
            _ => r#" stroke-dasharray="2 3""#,
        }
    }
}

/// Estimated width of `text` at `size` px in a proportional sans-serif font.
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.56
}

/// `text` cut to `max_width` px at `size` px, with an ellipsis when cut.
pub(crate) fn fit(text: &str, max_width: f64, size: f64) -> String {
    if text_width(text, size) <= max_width {
        return text.to_string();
    }
    let keep = ((max_width / (size * 0.56)) as usize).saturating_sub(1);
    let mut out: String = text.chars().take(keep).collect();
    out.push('…');
    out
}

/// Where the plot area and the legend are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    legend_top: f64,
    pub total_height: f64,
}

impl Layout {
    /// The layout for a chart whose legend lists `legend`, with `extra_x_room` more room under
    /// the plot (for slanted labels).
    pub(crate) fn new(legend: &[(String, Paint)], extra_x_room: f64) -> Self {
        let legend_top = PLOT_TOP + PLOT_HEIGHT + X_AXIS_ROOM + extra_x_room.max(0.0);
        let rows = legend_rows(legend).last().map_or(0, |(row, _, _)| row + 1);
        Self {
            left: PLOT_LEFT,
            top: PLOT_TOP,
            width: PLOT_WIDTH,
            height: PLOT_HEIGHT,
            legend_top,
            total_height: legend_top + rows as f64 * LEGEND_ROW + 8.0,
        }
    }

    /// The bottom edge of the plot area.
    pub(crate) fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// The x coordinate of a fraction (0..1) of the plot width.
    pub(crate) fn x(&self, fraction: f64) -> f64 {
        self.left + fraction * self.width
    }

    /// The y coordinate of a fraction (0..1) of the plot height, 0 at the bottom.
    pub(crate) fn y(&self, fraction: f64) -> f64 {
        self.bottom() - fraction * self.height
    }
}

/// (row, x, item index) of each legend entry, wrapped to the chart width.
fn legend_rows(items: &[(String, Paint)]) -> Vec<(usize, f64, usize)> {
    let mut out = Vec::new();
    let (mut row, mut x) = (0, 16.0);
    for (i, (label, _)) in items.iter().enumerate() {
        let w = 18.0 + text_width(&fit(label, 300.0, 12.0), 12.0) + 18.0;
        if x > 16.0 && x + w > WIDTH - 16.0 {
            row += 1;
            x = 16.0;
        }
        out.push((row, x, i));
        x += w;
    }
    out
}

/// An SVG document being written.
#[derive(Debug)]
pub(crate) struct Svg {
    out: String,
}

impl Svg {
    /// Opens `<svg class="chart" data-chart="KIND">` with a white background, the title at the
    /// top left and `note` (e.g. "higher is better") at the top right.
    pub(crate) fn new(kind: &str, title: &str, note: &str, height: f64) -> Self {
        let mut out = format!(
            r#"<svg class="chart" data-chart="{kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" font-family="{FONT}" font-size="12" fill="{TEXT}">"#,
        );
        out.push_str(&format!("<title>{}</title>", escape::html(title)));
        out.push_str(&format!(r##"<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>"##));
        let note_width = text_width(note, 11.0);
        let shown = fit(title, WIDTH - 32.0 - note_width - 12.0, 14.0);
        out.push_str(&format!(
            r#"<text x="16" y="26" font-size="14" font-weight="600">{}</text>"#,
            escape::html(&shown)
        ));
        if !note.is_empty() {
            out.push_str(&format!(
                r#"<text x="{}" y="26" font-size="11" text-anchor="end" fill="{MUTED}">{}</text>"#,
                WIDTH - 16.0,
                escape::html(note)
            ));
        }
        Self { out }
    }

    /// Appends raw SVG (already escaped).
    pub(crate) fn raw(&mut self, svg: &str) {
        self.out.push_str(svg);
    }

    /// A straight line.
    pub(crate) fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        self.out.push_str(&format!(
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        ));
    }

    /// Text at (x, y); `anchor` is start, middle or end; `content` is escaped here.
    pub(crate) fn text(&mut self, (x, y): (f64, f64), anchor: &str, size: f64, fill: &str, content: &str) {
        self.out.push_str(&format!(
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="{size}" fill="{fill}">{}</text>"#,
            escape::html(content)
        ));
    }

    /// Text slanted upwards to the left, ending at (x, y): category labels too long to sit
    /// side by side.
    pub(crate) fn slanted_text(&mut self, (x, y): (f64, f64), size: f64, fill: &str, content: &str) {
        self.out.push_str(&format!(
            r#"<text transform="translate({x:.1} {y:.1}) rotate(-{SLANT_DEGREES})" text-anchor="end" font-size="{size}" fill="{fill}">{}</text>"#,
            escape::html(content)
        ));
    }

    /// Horizontal grid lines and labels of the y axis, the axis title, and the axis lines.
    pub(crate) fn y_axis(&mut self, layout: &Layout, axis: &Axis, title: &str) {
        for (v, label) in &axis.ticks {
            let y = layout.y(axis.fraction(*v));
            self.line((layout.left, y), (layout.left + layout.width, y), GRID, 1.0);
            self.text((layout.left - 8.0, y + 4.0), "end", 11.0, MUTED, label);
        }
        let middle = layout.top + layout.height / 2.0;
        self.out.push_str(&format!(
            r#"<text transform="translate(18 {middle:.1}) rotate(-90)" text-anchor="middle" font-size="12" fill="{MUTED}">{}</text>"#,
            escape::html(&fit(title, layout.height, 12.0))
        ));
        self.line((layout.left, layout.top), (layout.left, layout.bottom()), AXIS, 1.0);
        self.line((layout.left, layout.bottom()), (layout.left + layout.width, layout.bottom()), AXIS, 1.0);
    }

    /// Tick marks and labels of the x axis, and its title.
    pub(crate) fn x_axis(&mut self, layout: &Layout, axis: &Axis, title: &str) {
        let room = layout.width / axis.ticks.len().max(1) as f64 - 4.0;
        for (v, label) in &axis.ticks {
            let x = layout.x(axis.fraction(*v));
            self.line((x, layout.bottom()), (x, layout.bottom() + 5.0), AXIS, 1.0);
            self.text((x, layout.bottom() + 18.0), "middle", 11.0, MUTED, &fit(label, room, 11.0));
        }
        self.x_title(layout, title);
    }

    /// The x axis title, centred under the plot.
    pub(crate) fn x_title(&mut self, layout: &Layout, title: &str) {
        self.text((layout.x(0.5), layout.bottom() + 38.0), "middle", 12.0, MUTED, title);
    }

    /// The legend: a colour swatch and the label of each item, wrapped to the chart width;
    /// a cut label keeps its full text as a tooltip.
    pub(crate) fn legend(&mut self, layout: &Layout, items: &[(String, Paint)]) {
        for (row, x, i) in legend_rows(items) {
            let (label, paint) = &items[i];
            let y = layout.legend_top + row as f64 * LEGEND_ROW;
            self.out.push_str(&format!(
                r#"<g><title>{}</title><rect x="{x:.1}" y="{:.1}" width="12" height="12" rx="2" fill="{}" fill-opacity="{}"/>"#,
                escape::html(label),
                y,
                paint.color(),
                paint.opacity()
            ));
            self.text((x + 18.0, y + 10.5), "start", 12.0, TEXT, &fit(label, 300.0, 12.0));
            self.out.push_str("</g>");
        }
    }

    /// Closes the document.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}
