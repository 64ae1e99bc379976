//! What an experiment file or a suite says about its own run, beyond the workloads: its rows
//! (a study's experiments, each with a title, a chart and the workloads it ran), the study's
//! claims to check, and what was skipped and why. The run stores it with its plan text, so
//! `fsarena report RUN` shapes a stored run as the study did without anything re-parsed from
//! the suite file (which may have changed since).
//!
//! It travels at the end of the plan text as one JSON line after [`MARKER`]: the plan text
//! is the run's verbatim record of what was asked, stored by every store version, so no
//! schema change is needed for it.

use serde::{Deserialize, Serialize};

/// The line that precedes the experiment's JSON in a run's plan text.
pub const MARKER: &str = "# experiment, as reports read it:";

/// The experiment's structure, as the run asked for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// The suite's or the file's name (`dbfs`).
    pub name: String,
    /// One line saying what the study compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `smoke`, `quick` or `full`.
    pub scale: String,
    /// The experiment rows, in the file's order.
    #[serde(default)]
    pub rows: Vec<Row>,
    /// The study's claims, checked against the figures in Findings.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// Rows or targets that did not run here, each with the reason.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// The study's own figures and tables, in its order: what a suite's report shows first.
    /// None in runs stored before figures were kept, and in files that declare none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
}

/// How a figure is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FigureKind {
    /// Grouped bars: one group per x value, one bar per series in each.
    #[default]
    Bars,
    /// One line per series across the x values.
    Lines,
    /// A table: one line per x value, one column per series.
    Table,
}

impl FigureKind {
    /// Every kind, as a suite file names it.
    pub const ALL: [FigureKind; 3] = [FigureKind::Bars, FigureKind::Lines, FigureKind::Table];

    /// `bars`, `lines` or `table`.
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::Bars => "bars",
            FigureKind::Lines => "lines",
            FigureKind::Table => "table",
        }
    }
}

/// A figure or table of the study, as a suite file declares it (`[[figure]]`): which results
/// it draws from and how they are laid out. A layout key (`x`, `series`, `facet`) names a
/// sweep key or workload parameter (`rw`, `numjobs`, `clients`), `part` (a benchmark or job
/// of a workload), `target`, `row` (one value per row) or `metric` (one value per metric
/// listed: mdtest's phases).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Its id (`fig3`), by which `suite show` and the report's anchors name it.
    pub id: String,
    /// Its caption, as the study numbers and names it.
    pub caption: String,
    /// Grouped bars, lines or a table.
    pub kind: FigureKind,
    /// The rows whose results it draws.
    pub rows: Vec<String>,
    /// What the x axis (a table's lines) shows.
    pub x: String,
    /// What the series (a table's columns) are: `target` unless said.
    pub series: String,
    /// One small chart (or table) per value of this, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facet: Option<String>,
    /// The metric shown: one quantity, named per direction when the results of several
    /// directions share a figure (`["write_bw", "read_bw"]`: each result shows the first of
    /// them it has), or the metrics a layout key `metric` spreads out (one unit).
    pub metric: Vec<String>,
}

impl Figure {
    /// The metric as the suite file wrote it: `write_bw` or `write_bw|read_bw`.
    pub fn metric_text(&self) -> String {
        self.metric.join("|")
    }
}

/// One experiment row: a `[[workload]]` of the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Its id (`fio-seq`), by which claims and docs/studies.md name it.
    pub id: String,
    /// Its title, as the study names the experiment.
    pub title: String,
    /// The chart the study drew: `bars`, `sweep` or `grid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<String>,
    /// The metrics its Findings rank; empty: every rate it reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    /// The workload titles (`io:rw=read,bs=1m`) of its sweep points, as results name them.
    #[serde(default)]
    pub workloads: Vec<String>,
    /// Why it is smaller than the study's at this scale; none at `full`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<String>,
    /// The values the suite chose where the study gives none, and why (`chosen = "..."`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
}

/// A study's claim, scoped to a row, a sweep point and a part, about one metric. Its kind is
/// one of:
///
/// - every `better` target beats every `worse` one;
/// - `order`: the targets rank in this order, best first (each beats the next);
/// - `targets` with `from`: each target's own gain from `from` to this scope lies within the
///   bounds ("ext3 gains up to 1.4× from 1 to 4 jobs, DBFS none").
///
/// With `from`, better/worse and order compare gains instead of values: ext3's gain from 1 to 4
/// jobs against DBFS's (a ratio of ratios). The factor (better over worse, in the metric's
/// better direction) must lie within `[min_factor, at_most]`: "faster" is (1, ∞), "at least
/// 10×" is [10, ∞), "about 3×" is [2, 4.5].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Its id, by which docs/studies.md and figures name it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The claim in words, as the study made it.
    pub text: String,
    /// The row whose results it is about; every row with the metric when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// Only the results at this sweep point (`threads=1`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// Only the results of this part (a db_bench benchmark, a fio job, a personality).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// The metric compared (`insert_time`, `write_bw`).
    pub metric: String,
    /// Target labels claimed better.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub better: Vec<String>,
    /// Target labels claimed worse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worse: Vec<String>,
    /// Target labels in the claimed order, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// Target labels whose own gains (with `from`) the bounds are about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The scope the gain is measured from: each target's value here over its value there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Scope>,
    /// The smallest factor the claim asserts (1 for "faster": then strictly above 1).
    pub min_factor: f64,
    /// The largest factor the claim allows; none: no upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    /// The factor the study itself measured, shown beside this run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<f64>,
}

/// Where a claim's baseline results are: a row, a sweep point, a part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// The row; the claim's own when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// The sweep point's words (`numjobs=1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}

impl Claim {
    /// The claimed bounds of the factor as words: `> 1×`, `≥ 10×`, `2–4.5×`, `≤ 1.4×`.
    pub fn bounds_text(&self) -> String {
        // `2`, `4.5`, `1.4`: a bound as the study wrote it, without trailing zeros.
        let f = |x: f64| {
            let t = fsarena_stats::factor_text(x);
            if t.contains('.') {
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                t
            }
        };
        match self.at_most {
            Some(hi) if self.min_factor > 0.0 && self.min_factor != 1.0 => {
                format!("{}–{}×", f(self.min_factor), f(hi))
            }
            Some(hi) => format!("> 1× and ≤ {}×", f(hi)),
            None if self.min_factor == 1.0 => "> 1×".into(),
            None => format!("≥ {}×", f(self.min_factor)),
        }
    }
}

/// A row, or a target, that did not run, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// What was skipped: `row pgbench-tpcb` or `target nilfs2`.
    pub what: String,
    /// Why (`workload `pgbench` is not in this build`).
    pub reason: String,
}

impl Experiment {
    /// The text to append to a run's plan text.
    pub fn plan_suffix(&self) -> String {
        // serde_json cannot fail on these plain structs of strings and numbers; an empty
        // suffix (no Findings) is the safe answer if it ever did.
        serde_json::to_string(self).map(|json| format!("\n\n{MARKER}\n{json}\n")).unwrap_or_default()
    }

    /// The experiment recorded in `plan` (a run's plan text), if any.
    pub fn from_plan(plan: &str) -> Option<Self> {
        let at = plan.rfind(MARKER)?;
        let json = plan[at + MARKER.len()..].trim_start().lines().next()?;
        serde_json::from_str(json).ok()
    }

    /// The row whose workloads include `workload_title`.
    pub fn row_of(&self, workload_title: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.workloads.iter().any(|w| w == workload_title))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_experiment_travels_in_the_plan_text() {
        let e = Experiment {
            name: "kv".into(),
            scale: "smoke".into(),
            rows: vec![Row {
                id: "fill".into(),
                title: "fillseq".into(),
                chosen: Some("num=1000: the study gives none".into()),
                ..Row::default()
            }],
            claims: vec![Claim { text: "x".into(), metric: "m".into(), min_factor: 1.5, ..Claim::default() }],
            skipped: vec![Skipped { what: "row pg".into(), reason: "not in this build".into() }],
            figures: vec![Figure {
                id: "fig1".into(),
                caption: "Fig. 1".into(),
                kind: FigureKind::Lines,
                rows: vec!["fill".into()],
                x: "value_size".into(),
                series: "target".into(),
                facet: Some("part".into()),
                metric: vec!["ops_per_s".into()],
            }],
            ..Experiment::default()
        };
        let plan = format!("fsarena suite run kv\n\n# suites/kv.toml\nname = \"kv\"\n{}", e.plan_suffix());
        assert_eq!(Experiment::from_plan(&plan), Some(e));
        assert_eq!(Experiment::from_plan("fsarena run x.toml"), None);
    }

    /// A run stored before figures were kept still loads, with none; one without figures
    /// writes none, so older readers see the JSON they know.
    #[test]
    fn experiments_without_figures_load_and_write_as_before() {
        let old = r#"{"name":"dbfs","scale":"smoke","rows":[{"id":"posix","title":"p","workloads":[]}],"claims":[],"skipped":[]}"#;
        let plan = format!("fsarena suite run dbfs\n\n{MARKER}\n{old}\n");
        let e = Experiment::from_plan(&plan).unwrap();
        assert!(e.figures.is_empty() && e.rows.len() == 1);
        assert!(!e.plan_suffix().contains("figures"));
    }
}
