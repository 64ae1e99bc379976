//! What every report shows, whatever the markup: the series (a target in one run), the results
//! (one per workload kind + parameters + part, never merged), each labelled by what varies
//! across the report, with its comparison rows and charts, and the sweeps.

use crate::charts::{Bar, BarChart, Chart, Line, LineChart, Paint, Point, XAxis};
use crate::fio_figures::Direction;
use crate::job_curves::{bandwidth_per_second, latency_percentiles};
use crate::significance::{self, Contrast};
use crate::summary::{summarize, Summary};
use crate::sweep::{find_sweeps, Sweep};
use crate::{ResultEntry, RunReport};
use fsarena_core::run::Param;
use fsarena_core::{Better, JobResult};

/// A target in one run: one column of every table, one colour in every chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// `"<target>"`, or `"<run> <target>"` when the report covers several runs.
    pub label: String,
    /// Index of the run in the report.
    pub run: usize,
    /// The target's label.
    pub target: String,
    /// Its colour (by target) and shade (by run).
    pub paint: Paint,
}

/// Everything a report shows, grouped.
#[derive(Debug)]
pub(crate) struct Model<'a> {
    pub runs: &'a [RunReport],
    pub series: Vec<Series>,
    /// One per result key, in the order they first ran.
    pub results: Vec<Group<'a>>,
    /// Per workload kind, the parameters every result of that kind shares (`io: bs=4k,
    /// size=1g`): shown once, above the results, instead of in every label.
    pub common: Vec<String>,
    pub sweeps: Vec<Sweep<'a>>,
}

/// One result — workload kind, parameters and part — across the series that have it.
#[derive(Debug)]
pub(crate) struct Group<'a> {
    pub kind: &'a str,
    pub params: &'a [(String, String)],
    pub part: Option<&'a str>,
    pub point: &'a [Param],
    /// What tells this result apart from the others: the part, the sweep point, then the
    /// parameters that differ between workloads of its kind (the kind too when several ran).
    pub words: Vec<String>,
    /// (series index, its entry), in series order.
    pub entries: Vec<(usize, &'a ResultEntry)>,
    /// Whether a sweep chart shows it: its own bar charts and curves are then left out.
    pub swept: bool,
}

/// A metric's name, unit and direction, as first seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MetricInfo<'a> {
    pub name: &'a str,
    pub unit: &'a str,
    pub better: Better,
}

/// Whether a cell holds the significantly best or worst mean of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    None,
    Best,
    Worst,
}

/// One metric of one series over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub values: Vec<f64>,
    pub summary: Summary,
    pub mark: Mark,
}

impl Cell {
    /// Half-width of the 95% confidence interval; `None` for a single repetition.
    pub(crate) fn half_width(&self) -> Option<f64> {
        (self.values.len() > 1).then(|| (self.summary.ci95.1 - self.summary.ci95.0) / 2.0)
    }
}

/// One metric across the series of a result; `cells` follow [`Group::entries`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row<'a> {
    pub metric: MetricInfo<'a>,
    pub cells: Vec<Option<Cell>>,
    /// What the marks of the row say ("n.s." where the means differ but not significantly).
    pub contrast: Contrast,
}

/// What a report shows of one target: its kind, its options and how it was made and mounted.
pub(crate) struct TargetFacts<'a> {
    pub kind: &'a str,
    pub options: &'a [(String, String)],
    pub info: &'a [(String, String)],
}

/// Whether two entries are the same result (on whatever target, in whatever run).
pub(crate) fn same_result(a: &ResultEntry, b: &ResultEntry) -> bool {
    a.workload_kind == b.workload_kind && a.workload_params == b.workload_params && a.part == b.part
}

impl<'a> Model<'a> {
    /// The facts of a series' target, from the first of its results that has them.
    pub(crate) fn target_facts(&self, series: &Series) -> TargetFacts<'a> {
        let entries = || {
            self.runs.get(series.run).into_iter().flat_map(|r| &r.results).filter(|e| e.target_label == series.target)
        };
        TargetFacts {
            kind: entries().next().map_or("", |e| e.target_kind.as_str()),
            options: entries().find(|e| !e.target_options.is_empty()).map_or(&[][..], |e| &e.target_options[..]),
            info: entries().find(|e| !e.target_info.is_empty()).map_or(&[][..], |e| &e.target_info[..]),
        }
    }

    /// Groups the entries of `runs` by series and result, labels the results and finds the
    /// sweeps.
    pub(crate) fn new(runs: &'a [RunReport]) -> Self {
        let series = series_of(runs);
        let mut results: Vec<Group<'a>> = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            for entry in &run.results {
                let Some(s) = series.iter().position(|s| s.run == r && s.target == entry.target_label) else {
                    continue; // unreachable: every entry's target made a series
                };
                let g = match results.iter().position(|g| same_result(g.entries[0].1, entry)) {
                    Some(g) => g,
                    None => {
                        results.push(Group {
                            kind: &entry.workload_kind,
                            params: &entry.workload_params,
                            part: entry.part.as_deref(),
                            point: &entry.point,
                            words: Vec::new(),
                            entries: Vec::new(),
                            swept: false,
                        });
                        results.len() - 1
                    }
                };
                // A series with the same result twice (one target listed twice) shows the first.
                if !results[g].entries.iter().any(|(i, _)| *i == s) {
                    results[g].entries.push((s, entry));
                }
            }
        }
        for g in &mut results {
            g.entries.sort_by_key(|(s, _)| *s);
        }
        let common = label(&mut results);
        let sweeps = find_sweeps(&mut results);
        Self { runs, series, results, common, sweeps }
    }

    /// The label of series number `series`.
    pub(crate) fn label(&self, series: usize) -> &str {
        self.series.get(series).map_or("", |s| s.label.as_str())
    }

    /// How series number `series` is drawn.
    pub(crate) fn paint(&self, series: usize) -> Paint {
        self.series.get(series).map_or_else(Paint::default, |s| s.paint)
    }
}

/// Series by target, then run, so that "before" and "after" of a target sit side by side.
fn series_of(runs: &[RunReport]) -> Vec<Series> {
    let mut targets: Vec<&str> = Vec::new();
    for entry in runs.iter().flat_map(|r| &r.results) {
        if !targets.contains(&entry.target_label.as_str()) {
            targets.push(&entry.target_label);
        }
    }
    let mut series: Vec<Series> = Vec::new();
    for (hue, target) in targets.into_iter().enumerate() {
        let with_target: Vec<usize> =
            (0..runs.len()).filter(|&r| runs[r].results.iter().any(|e| e.target_label == target)).collect();
        for (i, &r) in with_target.iter().enumerate() {
            let label = if runs.len() > 1 { format!("{} {target}", runs[r].handle()) } else { target.to_string() };
            let paint = Paint { hue, age: with_target.len() - 1 - i };
            series.push(Series { label, run: r, target: target.to_string(), paint });
        }
    }
    series
}

/// `k=v`, or `k` for a flag given bare.
fn param_word(k: &str, v: &str) -> String {
    if v.is_empty() {
        k.to_string()
    } else {
        format!("{k}={v}")
    }
}

/// Labels every result by what varies across `results` and returns, per kind, the parameters
/// they all share. A parameter that is part of a sweep point is named by the point.
fn label(results: &mut [Group<'_>]) -> Vec<String> {
    let mut kinds: Vec<&str> = Vec::new();
    for g in results.iter() {
        if !kinds.contains(&g.kind) {
            kinds.push(g.kind);
        }
    }
    let mut common = Vec::new();
    for kind in &kinds {
        let of_kind: Vec<usize> = (0..results.len()).filter(|&i| results[i].kind == *kind).collect();
        let swept: Vec<&str> = of_kind.iter().flat_map(|&i| results[i].point.iter().map(|p| p.key.as_str())).collect();
        // Keys in first-seen order.
        let mut keys: Vec<&str> = Vec::new();
        for &i in &of_kind {
            for (k, _) in results[i].params {
                if !keys.contains(&k.as_str()) {
                    keys.push(k);
                }
            }
        }
        let value = |i: usize, k: &str| results[i].params.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let (mut shared, mut differing) = (Vec::new(), Vec::new());
        for k in keys.into_iter().filter(|k| !swept.contains(k)) {
            let first = value(of_kind[0], k);
            if of_kind.iter().all(|&i| value(i, k) == first) {
                shared.push(param_word(k, first.unwrap_or_default()));
            } else {
                differing.push(k);
            }
        }
        if !shared.is_empty() {
            common.push(format!("{kind}: {}", shared.join(", ")));
        }
        let labels: Vec<Vec<String>> = of_kind
            .iter()
            .map(|&i| {
                let g = &results[i];
                let mut words: Vec<String> = Vec::new();
                if kinds.len() > 1 {
                    words.push(kind.to_string());
                }
                words.extend(g.part.map(str::to_string));
                words.extend(g.point.iter().map(Param::to_string));
                words.extend(differing.iter().filter_map(|k| value(i, k).map(|v| param_word(k, v))));
                if words.is_empty() {
                    words.push(kind.to_string());
                }
                words
            })
            .collect();
        for (&i, words) in of_kind.iter().zip(labels) {
            results[i].words = words;
        }
    }
    common
}

/// The metrics of `entries`, in the order they first appear.
pub(crate) fn metrics<'a>(entries: impl IntoIterator<Item = &'a ResultEntry>) -> Vec<MetricInfo<'a>> {
    let mut out: Vec<MetricInfo<'a>> = Vec::new();
    for entry in entries {
        for m in entry.measurements.iter().flat_map(|m| &m.metrics) {
            if !out.iter().any(|i| i.name == m.name) {
                out.push(MetricInfo { name: &m.name, unit: &m.unit, better: m.better });
            }
        }
    }
    out
}

/// The values of metric `name` over the repetitions of `entry`, and their summary.
pub(crate) fn cell(entry: &ResultEntry, name: &str) -> Option<Cell> {
    let values: Vec<f64> = entry.measurements.iter().filter_map(|m| m.metric(name)).map(|m| m.value).collect();
    let summary = summarize(&values)?;
    Some(Cell { values, summary, mark: Mark::None })
}

/// Whether values of `unit` count things rather than measure a rate, a time or a share
/// (`items`): no chart is drawn for them.
pub(crate) fn is_count(unit: &str) -> bool {
    matches!(unit, "" | "items" | "count" | "files" | "dirs" | "ops")
}

/// The jobs of the last repetition of `entry`: the curves show one repetition, not an average.
fn last_jobs(entry: &ResultEntry) -> &[JobResult] {
    entry.measurements.last().map_or(&[], |m| m.jobs())
}

/// `"higher is better"` or `"lower is better"`.
pub(crate) fn better_text(better: Better) -> &'static str {
    match better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

impl Group<'_> {
    /// The label: `seqread`, `rw=read numjobs=16`.
    pub(crate) fn label(&self) -> String {
        self.words.join(" ")
    }

    /// Whether every entry ran to the end of every repetition.
    pub(crate) fn complete(&self) -> bool {
        self.entries.iter().all(|(_, e)| !e.measurements.is_empty() && e.measurements.iter().all(|m| m.complete))
    }

    /// One row per metric; a row's best and worst cells are marked where they differ
    /// significantly from the others.
    pub(crate) fn rows(&self) -> Vec<Row<'_>> {
        metrics(self.entries.iter().map(|(_, e)| *e))
            .into_iter()
            .map(|metric| {
                let mut cells: Vec<Option<Cell>> = self.entries.iter().map(|(_, e)| cell(e, metric.name)).collect();
                let contrast = significance::mark(&mut cells, metric.better);
                Row { metric, cells, contrast }
            })
            .collect()
    }

    /// The result's comparison table for every surface: a metric per row (its name, which
    /// way is better, and the note of its contrast), a series per column (mean ± half-width of
    /// the 95% interval, each repetition's value on hover), the significantly best and worst
    /// marked.
    pub(crate) fn table(&self, model: &Model<'_>) -> crate::table::Table {
        use crate::table::{Cell, Column, Note, Role, Table};
        let mut metric = Column::new("metric", false);
        metric.role = Role::Name;
        let mut columns = vec![metric];
        columns.extend(self.entries.iter().map(|(s, _)| Column::new(model.label(*s), true)));
        let mut table = Table::with(columns);
        for row in self.rows() {
            let arrow = if row.metric.better == Better::Higher { "↑" } else { "↓" };
            let mut name = Cell::from(row.metric.name.to_string());
            name.notes.push(Note { text: arrow.into(), meaning: better_text(row.metric.better).into(), aside: false });
            if !row.contrast.note().is_empty() {
                let (text, meaning) = (row.contrast.note().into(), row.contrast.explanation().into());
                name.notes.push(Note { text, meaning, aside: true });
            }
            let mut cells = vec![name];
            cells.extend(row.cells.iter().map(|cell| {
                let Some(c) = cell else { return Cell::blank() };
                let mark = match c.mark {
                    Mark::Best => Some(crate::table::Mark::Best),
                    Mark::Worst => Some(crate::table::Mark::Worst),
                    Mark::None => None,
                };
                let text = crate::humanize::mean_ci(c.summary.mean, c.half_width(), row.metric.unit);
                let values: Vec<String> =
                    c.values.iter().map(|v| crate::humanize::value(*v, row.metric.unit)).collect();
                let title = format!("n={}: {}", c.values.len(), values.join(", "));
                Cell { title: Some(title), ..Cell::marked(text, mark) }
            }));
            table.push(cells);
        }
        table
    }

    /// A bar chart per metric that varies between the series (counts and constants left
    /// out) when there are several series, then latency percentile curves and bandwidth per
    /// second for each direction that has them. A result shown by a sweep chart gets none.
    pub(crate) fn charts(&self, model: &Model<'_>) -> Vec<Chart> {
        if self.swept {
            return Vec::new();
        }
        // A bar chart of one bar compares nothing.
        let several = self.entries.len() > 1;
        let mut charts: Vec<Chart> = self
            .rows()
            .into_iter()
            .filter(|row| several && !is_count(row.metric.unit) && varies(&row.cells))
            .map(|row| {
                let bars = self
                    .entries
                    .iter()
                    .zip(&row.cells)
                    .filter_map(|((s, _), c)| c.as_ref().map(|c| (s, c)))
                    .map(|(s, c)| Bar {
                        label: model.label(*s).to_string(),
                        paint: model.paint(*s),
                        value: c.summary.mean,
                        err: c.half_width().unwrap_or(0.0),
                        repetitions: c.values.len(),
                    })
                    .collect();
                let note = format!("mean ± 95% CI · {}", better_text(row.metric.better));
                Chart::Bar(BarChart {
                    title: row.metric.name.to_string(),
                    note,
                    unit: row.metric.unit.to_string(),
                    bars,
                })
            })
            .collect();
        for d in Direction::ALL {
            let lines = self.lines(model, |e| {
                latency_percentiles(e, d).into_iter().map(|(x, y)| Point { x, y, err: 0.0 }).collect()
            });
            if !lines.is_empty() {
                charts.push(Chart::Line(LineChart {
                    kind: "latency",
                    title: format!("{} completion latency percentiles", d.name()),
                    note: "every job and repetition, histograms merged".into(),
                    x: XAxis::Percentile,
                    unit: "ns".into(),
                    log_y: true,
                    lines,
                }));
            }
        }
        for d in Direction::ALL {
            let lines = self.lines(model, |e| {
                bandwidth_per_second(last_jobs(e), d)
                    .into_iter()
                    .enumerate()
                    .map(|(i, y)| Point { x: i as f64 + 1.0, y, err: 0.0 })
                    .collect()
            });
            if !lines.is_empty() {
                charts.push(Chart::Line(LineChart {
                    kind: "timeseries",
                    title: format!("{} bandwidth per second", d.name()),
                    note: "last repetition".into(),
                    x: XAxis::Seconds,
                    unit: "bytes/s".into(),
                    log_y: false,
                    lines,
                }));
            }
        }
        charts.extend(self.series_charts(model));
        charts
    }

    /// A chart per time series the measurements keep (a workload's own rates first, then
    /// memory: page cache, dirty pages, fsarena's RSS), from the last repetition of each.
    fn series_charts(&self, model: &Model<'_>) -> Vec<Chart> {
        let mut names: Vec<&str> = Vec::new();
        for (_, e) in &self.entries {
            for name in e.measurements.last().map(|m| m.series.keys()).into_iter().flatten() {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        names.sort_by_key(|n| (n.starts_with("mem."), *n));
        names
            .into_iter()
            .filter_map(|name| {
                let unit = self
                    .entries
                    .iter()
                    .find_map(|(_, e)| e.measurements.last()?.series.get(name).map(|s| s.unit.clone()))?;
                let lines = self.lines(model, |e| {
                    let Some(s) = e.measurements.last().and_then(|m| m.series.get(name)) else { return Vec::new() };
                    let step = s.interval_ns as f64 / 1e9;
                    s.values.iter().enumerate().map(|(i, &y)| Point { x: i as f64 * step, y, err: 0.0 }).collect()
                });
                (!lines.is_empty()).then(|| {
                    Chart::Line(LineChart {
                        kind: "timeseries",
                        title: series_title(name),
                        note: "last repetition".into(),
                        x: XAxis::Seconds,
                        unit,
                        log_y: false,
                        lines,
                    })
                })
            })
            .collect()
    }

    /// One line per series whose entry yields two points or more; a line of one point (a
    /// run shorter than a sampling interval) shows nothing, and is left out.
    fn lines(&self, model: &Model<'_>, points: impl Fn(&ResultEntry) -> Vec<Point>) -> Vec<Line> {
        self.entries
            .iter()
            .map(|(s, e)| Line { label: model.label(*s).to_string(), paint: model.paint(*s), points: points(e) })
            .filter(|l| l.points.len() > 1)
            .collect()
    }
}

/// A series' chart title: memory series in words, others by their name.
fn series_title(name: &str) -> String {
    match name {
        "mem.workload_page_cache" => "page cache of the workload's files".into(),
        "mem.page_cache" => "page cache (system)".into(),
        "mem.dirty" => "dirty pages (system)".into(),
        "mem.writeback" => "pages under writeback (system)".into(),
        "mem.tool_rss" => "fsarena's resident memory".into(),
        other => format!("{other} per interval"),
    }
}

/// Whether the values of a row (every series, every repetition) are not all equal.
pub(crate) fn varies(cells: &[Option<Cell>]) -> bool {
    let mut values = cells.iter().flatten().flat_map(|c| &c.values);
    let Some(first) = values.next() else { return false };
    values.any(|v| v != first)
}

/// The environment keys of all runs, in first-seen order.
fn environment_keys(runs: &[RunReport]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for (k, _) in runs.iter().flat_map(|r| &r.environment) {
        if !keys.contains(&k.as_str()) {
            keys.push(k);
        }
    }
    keys
}

/// The machine as one table for the reports: a row per environment fact, a column per run
/// (`value` for a single run), each value that differs from the first run's marked; `None`
/// when no run recorded one.
pub(crate) fn environment_table(runs: &[RunReport]) -> Option<crate::table::Table> {
    use crate::table::{Cell, Column, Mark, Role, Table};
    let keys = environment_keys(runs);
    if keys.is_empty() {
        return None;
    }
    let column = |title: &str, role: Role| Column { title: title.to_string(), numeric: false, left: false, role };
    let mut columns = vec![column("", Role::Heading)];
    columns.extend(runs.iter().map(|r| column(if runs.len() > 1 { r.handle() } else { "value" }, Role::Value)));
    let mut table = Table::with(columns);
    let value = |run: &'_ RunReport, key: &str| -> Option<String> {
        run.environment.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    for key in keys {
        let first = runs.first().and_then(|r| value(r, key));
        let mut row: Vec<Cell> = vec![key.to_string().into()];
        row.extend(runs.iter().map(|run| match value(run, key) {
            None if first.is_some() => Cell { mark: Some(Mark::Differs), ..Cell::blank() },
            None => Cell::blank(),
            Some(v) => {
                let mark = (Some(&v) != first.as_ref()).then_some(Mark::Differs);
                Cell::marked(v, mark)
            }
        }));
        table.push(row);
    }
    Some(table)
}
