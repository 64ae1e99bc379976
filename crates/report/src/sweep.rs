//! Sweeps: results that differ only in one numeric swept key (`numjobs=1,4,16,64`), drawn as
//! line charts against that key. The key and its values come from each result's typed sweep
//! point ([`fsarena_core::run::Param::number`]), never from re-parsing parameters.

use crate::charts::{Chart, Line, LineChart, Point, XAxis};
use crate::model::{better_text, cell, metrics, Group, MetricInfo, Model};
use crate::ResultEntry;

/// Values spanning this ratio or more are placed on a logarithmic axis (1, 4, 16, 64).
const LOG_SPAN: f64 = 16.0;

/// Two rates whose ratio stays within this relative tolerance at every point are one
/// headline: `read_bw` is `read_iops` × bs when bs is fixed, and one chart shows both.
const PROPORTIONAL: f64 = 1e-3;

/// Results on the same workload kind, parameters and part but for one numeric swept key.
#[derive(Debug)]
pub(crate) struct Sweep<'a> {
    /// The swept key, e.g. `numjobs`.
    pub key: String,
    /// What the results of the sweep share, as labelled: `rw=randread`, or the kind.
    pub rest: String,
    /// (number, value as given) of the key, in increasing order.
    pub values: Vec<(f64, String)>,
    /// (series index, index into `values`, entry).
    pub entries: Vec<(usize, usize, &'a ResultEntry)>,
}

impl Sweep<'_> {
    /// `"numjobs sweep · rw=randread"`.
    pub(crate) fn title(&self) -> String {
        format!("{} sweep · {}", self.key, self.rest)
    }

    /// The given values, comma-separated.
    pub(crate) fn values_text(&self) -> String {
        self.values.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// Whether the values span enough to be placed logarithmically.
    fn log(&self) -> bool {
        let lo = self.values.first().map_or(0.0, |v| v.0);
        let hi = self.values.last().map_or(0.0, |v| v.0);
        lo > 0.0 && hi / lo >= LOG_SPAN
    }

    /// The headline metrics: rates (`…/s`) that are not zero everywhere, less any that is
    /// the same quantity as, and proportional to, one already kept. For io that is the bandwidth of each direction the
    /// job does; for meta, each phase's rate.
    pub(crate) fn headlines(&self) -> Vec<MetricInfo<'_>> {
        let mut kept: Vec<MetricInfo<'_>> = Vec::new();
        let means = |name: &str| -> Vec<Option<f64>> {
            self.entries.iter().map(|(_, _, e)| cell(e, name).map(|c| c.summary.mean)).collect()
        };
        for metric in metrics(self.entries.iter().map(|(_, _, e)| *e)) {
            if !metric.unit.ends_with("/s") {
                continue;
            }
            let mine = means(metric.name);
            if !mine.iter().flatten().any(|v| *v != 0.0 && v.is_finite()) {
                continue;
            }
            let redundant =
                kept.iter().any(|k| same_quantity(k.name, metric.name) && proportional(&means(k.name), &mine));
            if !redundant {
                kept.push(metric);
            }
        }
        kept
    }

    /// One line chart per headline metric: its mean (± 95% CI) against the swept key, one
    /// line per series that has two points or more.
    pub(crate) fn charts(&self, model: &Model<'_>) -> Vec<Chart> {
        let mut series: Vec<usize> = self.entries.iter().map(|(s, _, _)| *s).collect();
        series.sort_unstable();
        series.dedup();
        self.headlines()
            .into_iter()
            .filter_map(|metric| {
                let lines = series
                    .iter()
                    .map(|&s| {
                        let mut points: Vec<Point> = self
                            .entries
                            .iter()
                            .filter(|(es, _, _)| *es == s)
                            .filter_map(|(_, x, e)| cell(e, metric.name).map(|c| (*x, c)))
                            .map(|(x, c)| Point {
                                x: self.values[x].0,
                                y: c.summary.mean,
                                err: c.half_width().unwrap_or(0.0),
                            })
                            .collect();
                        points.sort_by(|a, b| a.x.total_cmp(&b.x));
                        Line { label: model.label(s).to_string(), paint: model.paint(s), points }
                    })
                    .filter(|l| l.points.len() > 1)
                    .collect::<Vec<Line>>();
                // A target with one point of the sweep has no line; with none left, no chart.
                (!lines.is_empty()).then_some(())?;
                Some(Chart::Line(LineChart {
                    kind: "sweep",
                    title: format!("{} by {} · {}", metric.name, self.key, self.rest),
                    note: better_text(metric.better).into(),
                    x: XAxis::Values { title: self.key.clone(), ticks: self.values.clone(), log: self.log() },
                    unit: metric.unit.to_string(),
                    log_y: false,
                    lines,
                }))
            })
            .collect()
    }
}

/// Whether two metrics measure one thing in two units: the same name up to the last `_`
/// (`read_iops` and `read_bw`), so that read and write of a mixed job both stay.
fn same_quantity(a: &str, b: &str) -> bool {
    let stem = |n: &str| n.rsplit_once('_').map_or(n, |(s, _)| s).to_string();
    stem(a) == stem(b)
}

/// Whether `b` is a constant multiple of `a` wherever both are known (and some are).
fn proportional(a: &[Option<f64>], b: &[Option<f64>]) -> bool {
    let pairs: Vec<(f64, f64)> =
        a.iter().zip(b).filter_map(|(x, y)| Some(((*x)?, (*y)?))).filter(|(x, y)| *x != 0.0 && *y != 0.0).collect();
    let Some(&(x0, y0)) = pairs.first() else { return false };
    let ratio = y0 / x0;
    pairs.iter().all(|(x, y)| ((y / x) / ratio - 1.0).abs() <= PROPORTIONAL)
}

/// Families of results that differ in one numeric swept key only, kept when they have at least
/// two values of it; marks the results they cover as swept.
pub(crate) fn find_sweeps<'a>(results: &mut [Group<'a>]) -> Vec<Sweep<'a>> {
    // (signature, sweep, the groups it covers)
    let mut families: Vec<(Vec<String>, Sweep<'a>, Vec<usize>)> = Vec::new();
    for (g, group) in results.iter().enumerate() {
        for param in group.point {
            let Some(number) = param.number.filter(|n| n.is_finite()) else { continue };
            let mut signature: Vec<String> =
                group.params.iter().filter(|(k, _)| *k != param.key).map(|(k, v)| format!("{k}={v}")).collect();
            signature.sort();
            signature.insert(0, group.part.unwrap_or_default().to_string());
            signature.insert(0, format!("{}\u{0}{}", group.kind, param.key));
            let f = match families.iter().position(|(sig, _, _)| *sig == signature) {
                Some(f) => f,
                None => {
                    let own = param.to_string();
                    let rest: Vec<&str> = group.words.iter().map(String::as_str).filter(|w| *w != own).collect();
                    let rest = if rest.is_empty() { group.kind.to_string() } else { rest.join(" ") };
                    let sweep = Sweep { key: param.key.clone(), rest, values: Vec::new(), entries: Vec::new() };
                    families.push((signature, sweep, Vec::new()));
                    families.len() - 1
                }
            };
            let (_, sweep, groups) = &mut families[f];
            if !sweep.values.iter().any(|(n, _)| *n == number) {
                sweep.values.push((number, param.given.clone()));
            }
            groups.push(g);
        }
    }
    let mut sweeps = Vec::new();
    for (_, mut sweep, groups) in families {
        if sweep.values.len() < 2 {
            continue;
        }
        sweep.values.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &g in &groups {
            let group = &mut results[g];
            group.swept = true;
            let Some(number) = group.point.iter().find(|p| p.key == sweep.key).and_then(|p| p.number) else {
                continue;
            };
            let Some(x) = sweep.values.iter().position(|(n, _)| *n == number) else { continue };
            for &(s, e) in &group.entries {
                sweep.entries.push((s, x, e));
            }
        }
        sweeps.push(sweep);
    }
    sweeps
}
