//! A study's own figures and tables ([`Figure`]), drawn from a run's results as the suite
//! declares them: grouped bars (x categories × series), lines (series across x) or a table
//! (x × series), one each per facet value. What the figures show is markup-free here; the
//! HTML and Markdown reports lay it out.

use crate::charts::{Bar, Chart, GroupedBarChart, Line, LineChart, Paint, Point, XAxis};
use crate::experiment::{Experiment, Figure, FigureKind, Row};
use crate::findings::{ClaimFinding, Findings, MetricFinding};
use crate::model::{better_text, cell, Cell, Model};
use crate::{humanize, ResultEntry, RunReport};
use fsarena_core::Better;

/// Values spanning this ratio or more are placed on a logarithmic axis (as sweeps are).
const LOG_SPAN: f64 = 16.0;

/// One value of a layout key: as shown, and as a number where it is one (for lines' axes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Coordinate {
    pub text: String,
    pub number: Option<f64>,
}

/// One small chart or table of a figure: its x values, its series and a cell per pair.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Facet {
    /// `numjobs=4`; none when the figure has no facet.
    pub title: Option<String>,
    /// The x values, in the order the results ran.
    pub xs: Vec<Coordinate>,
    /// The series: label and paint.
    pub series: Vec<(String, Paint)>,
    /// `cells[x][series]`: the metric over the repetitions, where the run has it.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// The unit and direction of its metric (each facet's own when the facet is `metric`).
    pub unit: String,
    pub better: Better,
}

/// A figure as this run fills it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Drawn<'f> {
    pub figure: &'f Figure,
    pub facets: Vec<Facet>,
}

/// The value of layout key `key` for metric `metric` of `entry` of `row`: `row`, `target`,
/// `part`, `metric`, else the sweep point's or the parameters' value of that key.
fn coordinate(key: &str, entry: &ResultEntry, row: &Row, metric: &str) -> Option<Coordinate> {
    let text = |t: &str| Some(Coordinate { text: t.to_string(), number: None });
    match key {
        "row" => text(&row.id),
        "metric" => text(metric),
        "target" => text(&entry.target_label),
        "part" => text(entry.part.as_deref().unwrap_or(&entry.workload_kind)),
        _ => match entry.point.iter().find(|p| p.key == key) {
            Some(p) => Some(Coordinate { text: p.given.clone(), number: p.number }),
            None => entry
                .workload_params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| Coordinate { text: v.clone(), number: v.parse().ok() }),
        },
    }
}

/// The index of `text` in `list`, added at the end when new.
fn position(list: &mut Vec<Coordinate>, c: Coordinate) -> usize {
    match list.iter().position(|x| x.text == c.text) {
        Some(i) => i,
        None => {
            list.push(c);
            list.len() - 1
        }
    }
}

/// `figure` filled from `run`: every result of its rows that has its metric, placed by its
/// x, series and facet values. When a layout key is `metric`, each listed metric a result
/// has is placed; otherwise the first it has.
pub(crate) fn draw<'f>(figure: &'f Figure, experiment: &Experiment, run: &RunReport, model: &Model<'_>) -> Drawn<'f> {
    let rows: Vec<&Row> = experiment.rows.iter().filter(|r| figure.rows.contains(&r.id)).collect();
    let layout = [Some(figure.x.as_str()), Some(figure.series.as_str()), figure.facet.as_deref()];
    let every_metric = layout.contains(&Some("metric"));
    let mut placed: Vec<(&ResultEntry, &Row, &str, Cell)> = Vec::new();
    for entry in &run.results {
        let title = entry.workload_title();
        let Some(row) = rows.iter().find(|r| r.workloads.contains(&title)) else { continue };
        let cells = figure.metric.iter().filter_map(|m| cell(entry, m).map(|c| (m.as_str(), c)));
        for (name, c) in cells.take(if every_metric { usize::MAX } else { 1 }) {
            placed.push((entry, row, name, c));
        }
    }
    // The target names each series when it is no layout key and the figure has several.
    let mut targets: Vec<&str> = placed.iter().map(|(e, _, _, _)| e.target_label.as_str()).collect();
    targets.sort_unstable();
    targets.dedup();
    let name_target = !layout.contains(&Some("target")) && targets.len() > 1;
    let mut all_series: Vec<Coordinate> = Vec::new();
    let mut facets: Vec<(Option<String>, Facet)> = Vec::new();
    for (entry, row, metric, c) in placed {
        let at =
            |key: &str| coordinate(key, entry, row, metric).unwrap_or(Coordinate { text: "–".into(), number: None });
        let facet_key = figure.facet.as_deref().map(&at);
        let mut series = at(&figure.series);
        if name_target {
            series.text = format!("{} {}", entry.target_label, series.text);
        }
        let hue = position(&mut all_series, series.clone());
        let paint = if figure.series == "target" {
            model
                .series
                .iter()
                .position(|s| s.target == entry.target_label)
                .map_or(Paint::default(), |s| model.paint(s))
        } else {
            Paint { hue, age: 0 }
        };
        let facet_text = facet_key.map(|k| k.text);
        let f = match facets.iter().position(|(k, _)| *k == facet_text) {
            Some(f) => f,
            None => {
                let title = facet_text.as_ref().map(|k| format!("{}={k}", figure.facet.as_deref().unwrap_or("")));
                let (unit, better) = entry
                    .measurements
                    .iter()
                    .find_map(|m| m.metric(metric))
                    .map_or((String::new(), Better::Higher), |m| (m.unit.clone(), m.better));
                let facet = Facet { title, xs: Vec::new(), series: Vec::new(), cells: Vec::new(), unit, better };
                facets.push((facet_text, facet));
                facets.len() - 1
            }
        };
        let facet = &mut facets[f].1;
        let x = position(&mut facet.xs, at(&figure.x));
        let s = match facet.series.iter().position(|(l, _)| *l == series.text) {
            Some(s) => s,
            None => {
                facet.series.push((series.text, paint));
                facet.series.len() - 1
            }
        };
        facet.cells.resize_with(facet.xs.len(), Vec::new);
        for line in &mut facet.cells {
            line.resize(facet.series.len(), None);
        }
        // One result per place: a target listed twice shows its first.
        if facet.cells[x][s].is_none() {
            facet.cells[x][s] = Some(c);
        }
    }
    Drawn { figure, facets: facets.into_iter().map(|(_, f)| f).collect() }
}

/// `12.3 MiB/s ± 0.4`: a cell's mean and the half-width of its 95% confidence interval.
pub(crate) fn cell_text(c: &Cell, unit: &str) -> String {
    humanize::mean_ci(c.summary.mean, c.half_width(), unit)
}

impl Drawn<'_> {
    /// The note under the caption: kind, rows, layout and metric.
    pub(crate) fn note(&self) -> String {
        let f = self.figure;
        let facet = f.facet.as_ref().map(|k| format!(" · one per {k}")).unwrap_or_default();
        format!(
            "{} of {} · x: {} · series: {}{facet} · {} · mean ± 95% CI over the repetitions",
            f.kind.name(),
            f.rows.join(", "),
            f.x,
            f.series,
            f.metric_text()
        )
    }

    /// The facet drawn as the figure declares: grouped bars or lines; none for a table, and
    /// none for lines whose every series has one point (a line of one point shows nothing a
    /// table does not: the facet is then shown as a table).
    pub(crate) fn chart(&self, facet: &Facet) -> Option<Chart> {
        // The caption heads the figure: a chart names its facet, else its metric (or, for a
        // metric per direction or per phase, the quantity they share).
        let title = facet.title.clone().unwrap_or_else(|| match self.figure.metric.as_slice() {
            [one] => one.clone(),
            _ => humanize::quantity(&facet.unit),
        });
        let note = better_text(facet.better).to_string();
        let bar = |(label, paint): &(String, Paint), c: &Cell| Bar {
            label: label.clone(),
            paint: *paint,
            value: c.summary.mean,
            err: c.half_width().unwrap_or(0.0),
            repetitions: c.values.len(),
        };
        match self.figure.kind {
            FigureKind::Table => None,
            FigureKind::Bars => Some(Chart::Grouped(GroupedBarChart {
                title,
                note,
                unit: facet.unit.clone(),
                series: facet.series.clone(),
                groups: facet
                    .xs
                    .iter()
                    .zip(&facet.cells)
                    .map(|(x, cells)| {
                        let bars = facet.series.iter().zip(cells).map(|(s, c)| c.as_ref().map(|c| bar(s, c))).collect();
                        (x.text.clone(), bars)
                    })
                    .collect(),
            })),
            FigureKind::Lines => {
                // By number when every x is one, else evenly in the order they ran.
                let numbers: Option<Vec<f64>> = facet.xs.iter().map(|x| x.number).collect();
                let place: Vec<f64> =
                    numbers.clone().unwrap_or_else(|| (0..facet.xs.len()).map(|i| i as f64).collect());
                let mut ticks: Vec<(f64, String)> =
                    place.iter().zip(&facet.xs).map(|(p, x)| (*p, x.text.clone())).collect();
                ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (lo, hi) = (ticks.first().map_or(0.0, |t| t.0), ticks.last().map_or(0.0, |t| t.0));
                let log = numbers.is_some() && lo > 0.0 && hi / lo >= LOG_SPAN;
                let lines: Vec<Line> = facet
                    .series
                    .iter()
                    .enumerate()
                    .map(|(s, (label, paint))| {
                        let mut points: Vec<Point> = facet
                            .cells
                            .iter()
                            .zip(&place)
                            .filter_map(|(cells, x)| cells.get(s)?.as_ref().map(|c| (x, c)))
                            .map(|(x, c)| Point { x: *x, y: c.summary.mean, err: c.half_width().unwrap_or(0.0) })
                            .collect();
                        points.sort_by(|a, b| a.x.total_cmp(&b.x));
                        Line { label: label.clone(), paint: *paint, points }
                    })
                    .filter(|l| l.points.len() > 1)
                    .collect();
                (!lines.is_empty()).then(|| {
                    Chart::Line(LineChart {
                        kind: "figure",
                        title,
                        note,
                        x: XAxis::Values { title: self.figure.x.clone(), ticks, log },
                        unit: facet.unit.clone(),
                        log_y: false,
                        lines,
                    })
                })
            }
        }
    }

    /// The facet as a table: a header (the x key, then the series) and a line per x value.
    pub(crate) fn table(&self, facet: &Facet) -> (Vec<String>, Vec<Vec<String>>) {
        let mut header = vec![format!("{} \\ {}", self.figure.x, self.figure.series)];
        header.extend(facet.series.iter().map(|(l, _)| l.clone()));
        let lines = facet
            .xs
            .iter()
            .zip(&facet.cells)
            .map(|(x, cells)| {
                let mut line = vec![x.text.clone()];
                line.extend(
                    cells.iter().map(|c| c.as_ref().map_or_else(|| "–".to_string(), |c| cell_text(c, &facet.unit))),
                );
                line
            })
            .collect();
        (header, lines)
    }

    /// The claims about the figure's rows.
    pub(crate) fn claims<'c>(&self, findings: &'c Findings) -> Vec<&'c ClaimFinding> {
        findings.claims.iter().filter(|c| c.claim.row.as_ref().is_some_and(|r| self.figure.rows.contains(r))).collect()
    }

    /// The Findings lines of the figure's rows on its metric.
    pub(crate) fn findings<'m>(&self, findings: &'m Findings, experiment: &Experiment) -> Vec<&'m MetricFinding> {
        let titles: Vec<&str> =
            experiment.rows.iter().filter(|r| self.figure.rows.contains(&r.id)).map(|r| r.title.as_str()).collect();
        findings
            .metrics
            .iter()
            .filter(|m| titles.contains(&m.row.as_str()) && self.figure.metric.contains(&m.metric))
            .collect()
    }
}

/// The figures of `run` drawn, in the study's order; none when the run recorded none.
pub(crate) fn of_run<'e>(experiment: &'e Experiment, run: &RunReport, model: &Model<'_>) -> Vec<Drawn<'e>> {
    experiment.figures.iter().map(|f| draw(f, experiment, run, model)).collect()
}
