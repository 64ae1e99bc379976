//! What the HTML and Markdown reports show, whatever the markup: the series (a target in one
//! run), the workloads with their comparison rows and charts, and the sweeps.

use crate::charts::{Bar, BarChart, Chart, Line, LineChart, Paint, Point, XAxis};
use crate::fio_figures::Direction;
use crate::job_curves::{bandwidth_per_second, latency_percentiles};
use crate::summary::{summarize, Summary};
use crate::{ResultEntry, RunReport};
use fsarena_core::units::{parse_size, parse_time};
use fsarena_core::{Better, JobResult};

/// A target in one run: one column of every table, one colour in every chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// `"<target>"`, or `"<run id> <target>"` when the report covers several runs.
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
    pub workloads: Vec<Workload<'a>>,
    pub sweeps: Vec<Sweep<'a>>,
}

/// One workload (by [`ResultEntry::workload_title`]) across the series that ran it.
#[derive(Debug)]
pub(crate) struct Workload<'a> {
    pub title: String,
    /// (series index, its entry), in series order.
    pub entries: Vec<(usize, &'a ResultEntry)>,
}

/// A metric's name, unit and direction, as first seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MetricInfo<'a> {
    pub name: &'a str,
    pub unit: &'a str,
    pub better: Better,
}

/// Whether a cell holds the best or the worst mean of its row.
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

/// One metric across the series of a workload; `cells` follow [`Workload::entries`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row<'a> {
    pub metric: MetricInfo<'a>,
    pub cells: Vec<Option<Cell>>,
}

/// Entries on the same series that differ in exactly one numeric parameter.
#[derive(Debug)]
pub(crate) struct Sweep<'a> {
    /// The parameter that varies, e.g. `numjobs`.
    pub param: String,
    /// The workload without that parameter, e.g. `io:rw=randread,bs=4k`.
    pub rest: String,
    /// The parameter's values, in numeric order.
    pub values: Vec<String>,
    /// (series index, index into `values`, entry).
    pub entries: Vec<(usize, usize, &'a ResultEntry)>,
}

impl Sweep<'_> {
    /// `"numjobs sweep · io:rw=randread,bs=4k"`.
    pub(crate) fn title(&self) -> String {
        format!("{} sweep · {}", self.param, self.rest)
    }
}

/// What a report shows of one target: its kind, its options and how it was made and mounted.
pub(crate) struct TargetFacts<'a> {
    pub kind: &'a str,
    pub options: &'a [(String, String)],
    pub info: &'a [(String, String)],
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

    /// Groups the entries of `runs` by series and workload, and finds the sweeps.
    pub(crate) fn new(runs: &'a [RunReport]) -> Self {
        // Series by target, then run, so that "before" and "after" of a target sit side by side.
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
        let mut workloads: Vec<Workload<'a>> = Vec::new();
        let mut located: Vec<(usize, &'a ResultEntry)> = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            for entry in &run.results {
                let Some(s) = series.iter().position(|s| s.run == r && s.target == entry.target_label) else {
                    continue; // unreachable: every entry's target made a series above
                };
                located.push((s, entry));
                let title = entry.workload_title();
                let w = match workloads.iter().position(|w| w.title == title) {
                    Some(w) => w,
                    None => {
                        workloads.push(Workload { title, entries: Vec::new() });
                        workloads.len() - 1
                    }
                };
                // A series that ran the same workload twice shows its first result.
                if !workloads[w].entries.iter().any(|(i, _)| *i == s) {
                    workloads[w].entries.push((s, entry));
                }
            }
        }
        for w in &mut workloads {
            w.entries.sort_by_key(|(s, _)| *s);
        }
        let sweeps = find_sweeps(&located);
        Self { runs, series, workloads, sweeps }
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
fn cell(entry: &ResultEntry, name: &str) -> Option<Cell> {
    let values: Vec<f64> = entry.measurements.iter().filter_map(|m| m.metric(name)).map(|m| m.value).collect();
    let summary = summarize(&values)?;
    Some(Cell { values, summary, mark: Mark::None })
}

/// The jobs of the last repetition of `entry`: the curves show one repetition, not an average.
fn last_jobs(entry: &ResultEntry) -> &[JobResult] {
    entry.measurements.last().map_or(&[], |m| m.jobs.as_slice())
}

/// `"higher is better"` or `"lower is better"`.
pub(crate) fn better_text(better: Better) -> &'static str {
    match better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

impl Workload<'_> {
    /// Whether every entry ran to the end of every repetition.
    pub(crate) fn complete(&self) -> bool {
        self.entries.iter().all(|(_, e)| !e.measurements.is_empty() && e.measurements.iter().all(|m| m.complete))
    }

    /// One row per metric; the best mean of a row is marked best, the worst marked worst, when
    /// at least two series differ.
    pub(crate) fn rows(&self) -> Vec<Row<'_>> {
        metrics(self.entries.iter().map(|(_, e)| *e))
            .into_iter()
            .map(|metric| {
                let mut cells: Vec<Option<Cell>> = self.entries.iter().map(|(_, e)| cell(e, metric.name)).collect();
                let means: Vec<f64> =
                    cells.iter().flatten().map(|c| c.summary.mean).filter(|m| m.is_finite()).collect();
                let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if means.len() > 1 && lo < hi {
                    let (best, worst) = if metric.better == Better::Higher { (hi, lo) } else { (lo, hi) };
                    for c in cells.iter_mut().flatten() {
                        if c.summary.mean == best {
                            c.mark = Mark::Best;
                        } else if c.summary.mean == worst {
                            c.mark = Mark::Worst;
                        }
                    }
                }
                Row { metric, cells }
            })
            .collect()
    }

    /// A bar chart per metric, then latency percentile curves and bandwidth per second for
    /// each direction that has them.
    pub(crate) fn charts(&self, model: &Model<'_>) -> Vec<Chart> {
        let mut charts: Vec<Chart> = self
            .rows()
            .into_iter()
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
                latency_percentiles(last_jobs(e), d).into_iter().map(|(x, y)| Point { x, y, err: 0.0 }).collect()
            });
            if !lines.is_empty() {
                charts.push(Chart::Line(LineChart {
                    kind: "latency",
                    title: format!("{} completion latency percentiles", d.name()),
                    note: "last repetition".into(),
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
        charts
    }

    /// One line per series whose entry yields points; series without points are left out.
    fn lines(&self, model: &Model<'_>, points: impl Fn(&ResultEntry) -> Vec<Point>) -> Vec<Line> {
        self.entries
            .iter()
            .map(|(s, e)| Line { label: model.label(*s).to_string(), paint: model.paint(*s), points: points(e) })
            .filter(|l| !l.points.is_empty())
            .collect()
    }
}

impl Sweep<'_> {
    /// One line chart per metric: the mean (± 95% CI) against the swept parameter, one line
    /// per series.
    pub(crate) fn charts(&self, model: &Model<'_>) -> Vec<Chart> {
        let mut series: Vec<usize> = self.entries.iter().map(|(s, _, _)| *s).collect();
        series.sort_unstable();
        series.dedup();
        metrics(self.entries.iter().map(|(_, _, e)| *e))
            .into_iter()
            .map(|metric| {
                let lines = series
                    .iter()
                    .map(|&s| {
                        let mut points: Vec<Point> = self
                            .entries
                            .iter()
                            .filter(|(es, _, _)| *es == s)
                            .filter_map(|(_, x, e)| cell(e, metric.name).map(|c| (x, c)))
                            .map(|(x, c)| Point { x: *x as f64, y: c.summary.mean, err: c.half_width().unwrap_or(0.0) })
                            .collect();
                        points.sort_by(|a, b| a.x.total_cmp(&b.x));
                        Line { label: model.label(s).to_string(), paint: model.paint(s), points }
                    })
                    .filter(|l| !l.points.is_empty())
                    .collect();
                Chart::Line(LineChart {
                    kind: "sweep",
                    title: format!("{} by {}", metric.name, self.param),
                    note: better_text(metric.better).into(),
                    x: XAxis::Categories { title: self.param.clone(), labels: self.values.clone() },
                    unit: metric.unit.to_string(),
                    log_y: false,
                    lines,
                })
            })
            .collect()
    }
}

/// Where a parameter value sits on a sweep's axis: a number (`4`, `0.5`), a size (`4k`) or a
/// duration (`10s`); `None` for anything else (`rw=read` vs `rw=write` is not a sweep).
fn sweep_position(value: &str) -> Option<f64> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .or_else(|| parse_size(value).ok().map(|v| v as f64))
        .or_else(|| parse_time(value, 1_000_000_000).ok().map(|t| t.0 as f64))
}

/// Families of entries on the same workload kind whose parameters are equal but for one key
/// with numeric values, kept when some series has at least two different values of it.
fn find_sweeps<'a>(located: &[(usize, &'a ResultEntry)]) -> Vec<Sweep<'a>> {
    // (signature, sweep, numeric position of each value)
    let mut families: Vec<(String, Sweep<'a>, Vec<f64>)> = Vec::new();
    for &(s, entry) in located {
        for (key, value) in &entry.workload_params {
            let Some(position) = sweep_position(value) else { continue };
            let rest: Vec<&(String, String)> = entry.workload_params.iter().filter(|(k, _)| k != key).collect();
            let mut signature: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={v}")).collect();
            signature.sort();
            let signature = format!("{}\u{0}{key}\u{0}{}", entry.workload_kind, signature.join("\u{0}"));
            let f = match families.iter().position(|(sig, _, _)| *sig == signature) {
                Some(f) => f,
                None => {
                    let params: Vec<String> =
                        rest.iter().map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") }).collect();
                    let rest = if params.is_empty() {
                        entry.workload_kind.clone()
                    } else {
                        format!("{}:{}", entry.workload_kind, params.join(","))
                    };
                    let sweep = Sweep { param: key.clone(), rest, values: Vec::new(), entries: Vec::new() };
                    families.push((signature, sweep, Vec::new()));
                    families.len() - 1
                }
            };
            let (_, sweep, positions) = &mut families[f];
            let x = match sweep.values.iter().position(|v| v == value) {
                Some(x) => x,
                None => {
                    sweep.values.push(value.clone());
                    positions.push(position);
                    sweep.values.len() - 1
                }
            };
            if !sweep.entries.iter().any(|(es, ex, _)| *es == s && *ex == x) {
                sweep.entries.push((s, x, entry));
            }
        }
    }
    families
        .into_iter()
        .filter(|(_, sweep, _)| {
            sweep.entries.iter().any(|(s, x, _)| sweep.entries.iter().any(|(s2, x2, _)| s == s2 && x != x2))
        })
        .map(|(_, mut sweep, positions)| {
            // Order the values numerically and renumber the entries to match.
            let mut order: Vec<usize> = (0..sweep.values.len()).collect();
            order.sort_by(|&a, &b| positions[a].total_cmp(&positions[b]));
            let new_index = |old: usize| order.iter().position(|&o| o == old).unwrap_or(old);
            sweep.values = order.iter().map(|&o| sweep.values[o].clone()).collect();
            for (_, x, _) in &mut sweep.entries {
                *x = new_index(*x);
            }
            sweep
        })
        .collect()
}

/// The environment keys of all runs, in first-seen order.
pub(crate) fn environment_keys(runs: &[RunReport]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for (k, _) in runs.iter().flat_map(|r| &r.environment) {
        if !keys.contains(&k.as_str()) {
            keys.push(k);
        }
    }
    keys
}
