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

/// A study's claim: every `better` target beats every `worse` one on `metric` by at least
/// `min_factor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The claim in words, as the study made it.
    pub text: String,
    /// The row whose results it is about; every row with the metric when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// Only the results at this sweep point (`threads=1`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// The metric compared (`insert_time`, `write_bw`).
    pub metric: String,
    /// Target labels claimed better.
    pub better: Vec<String>,
    /// Target labels claimed worse.
    pub worse: Vec<String>,
    /// The smallest factor between them the claim asserts (1 for "faster").
    pub min_factor: f64,
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
            ..Experiment::default()
        };
        let plan = format!("fsarena suite run kv\n\n# suites/kv.toml\nname = \"kv\"\n{}", e.plan_suffix());
        assert_eq!(Experiment::from_plan(&plan), Some(e));
        assert_eq!(Experiment::from_plan("fsarena run x.toml"), None);
    }
}
