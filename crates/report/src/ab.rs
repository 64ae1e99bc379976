//! A/B comparison of matching results: run A against run B (`compare before after`, the A/B
//! section of a report of two runs), or every target of one run against a baseline target.
//! Results match by target, workload kind + parameters and part; what only one side has is
//! named, never silently skipped.

use crate::model::{is_count, metrics, same_result, Model};
use crate::verdicts::{diff, is_verdict_kind, merged_verdicts, VerdictDiff};
use crate::{ResultEntry, RunReport};
use fsarena_core::Better;
use fsarena_stats::{ratio, Reading, Untold};
use serde::Serialize;

/// How the A/B tables read, said under each of them.
pub const AB_NOTE: &str = "A and B are the geometric means of the repetitions; change = B / A − 1, its 95% interval and p from Welch's t-test on the logarithms (the comparison Findings and claims use); better or worse where the interval excludes no change, in the metric's direction; n.s. where it includes it; not tested with fewer than 3 repetitions a side; too noisy where the interval spans more than 10×.";

/// What a compared metric says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AbVerdict {
    /// B is significantly better.
    #[serde(rename = "better")]
    Better,
    /// B is significantly worse.
    #[serde(rename = "worse")]
    Worse,
    /// The 95% interval of the ratio contains 1.
    #[serde(rename = "n.s.")]
    NotSignificant,
    /// A side has fewer than 3 repetitions: too few to tell.
    #[serde(rename = "not tested")]
    NotTested,
    /// The 95% interval of the ratio spans more than 10×: too noisy to tell.
    #[serde(rename = "too noisy")]
    TooNoisy,
}

impl AbVerdict {
    /// The word shown: `better`, `worse`, `n.s.`, `not tested`, `too noisy`.
    pub fn word(self) -> &'static str {
        match self {
            AbVerdict::Better => "better",
            AbVerdict::Worse => "worse",
            AbVerdict::NotSignificant => "n.s.",
            AbVerdict::NotTested => "not tested",
            AbVerdict::TooNoisy => "too noisy",
        }
    }
}

/// One metric of one matching result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbRow {
    /// The target (side B's in a baseline comparison).
    pub target: String,
    /// The result's label: what varies across the compared runs (`seqread`, `numjobs=16`).
    pub result: String,
    /// The workload as given (`io:rw=read,numjobs=16`), and its part, for scripts.
    pub workload: String,
    /// The part (a fio job), when the workload has several.
    pub part: Option<String>,
    /// The metric's name.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Whether higher values are better.
    pub better: Better,
    /// A's central value: the geometric mean of its repetitions (the arithmetic mean where a
    /// value is 0 or below), as Findings rank by.
    pub mean_a: f64,
    /// B's central value.
    pub mean_b: f64,
    /// B / A, the ratio of the central values (`fsarena_stats::ratio`); NaN when A's is 0.
    pub factor: f64,
    /// (B / A − 1) in percent; NaN when A's central value is 0.
    pub change_percent: f64,
    /// 95% confidence interval of B / A (Welch's on the logarithms); `None` when not tested.
    pub ci95_factor: Option<(f64, f64)>,
    /// The same interval as a change in percent: never below −100%.
    pub ci95_change_percent: Option<(f64, f64)>,
    /// Welch's two-sided p-value; `None` when not tested.
    pub p_value: Option<f64>,
    /// The verdict.
    pub verdict: AbVerdict,
}

/// Every compared metric, and what only one side has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AbComparison {
    /// How side A is named: the run's name or id, or the baseline target.
    pub a: String,
    /// How side B is named.
    pub b: String,
    /// One row per metric of each matching result.
    pub rows: Vec<AbRow>,
    /// Results (`target · workload · part`) only side A has.
    pub only_in_a: Vec<String>,
    /// Results only side B has.
    pub only_in_b: Vec<String>,
    /// The results of the verdict kinds (compliance: `posix`), per kind, target and family:
    /// pass counts and the cases newly failing or newly passing. Their counts get no
    /// significance verdict: a case passes or it does not.
    pub verdicts: Vec<VerdictDiff>,
}

/// Every verdict of kind `kind` of `target` in `run`, over its workloads of that kind and
/// their families (matched by target only: two runs that chose different families or cases
/// still compare the cases they share).
fn kind_verdicts(run: &RunReport, kind: &str, target: &str) -> Vec<fsarena_core::Verdict> {
    merged_verdicts(run.results.iter().filter(|e| e.workload_kind == kind && e.target_label == target))
}

/// The targets of `run` with results of kind `kind`, in order.
fn kind_targets<'r>(run: &'r RunReport, kind: &str) -> Vec<&'r str> {
    let mut out: Vec<&str> = Vec::new();
    for e in run.results.iter().filter(|e| e.workload_kind == kind) {
        if !out.contains(&e.target_label.as_str()) {
            out.push(&e.target_label);
        }
    }
    out
}

/// Run B against run A, result by result on the same target.
pub fn compare_runs(a: &RunReport, b: &RunReport) -> AbComparison {
    let both = [a.clone(), b.clone()];
    let model = Model::new(&both);
    let mut out = AbComparison {
        a: a.handle().to_string(),
        b: b.handle().to_string(),
        rows: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        verdicts: Vec::new(),
    };
    for (kind, _) in crate::verdict_kinds() {
        let (ta, tb) = (kind_targets(a, kind), kind_targets(b, kind));
        for t in &ta {
            if tb.contains(t) {
                out.verdicts.extend(diff(kind, t, &kind_verdicts(a, kind, t), &kind_verdicts(b, kind, t)));
            } else {
                out.only_in_a.push(format!("{t} · {kind}"));
            }
        }
        out.only_in_b.extend(tb.iter().filter(|t| !ta.contains(t)).map(|t| format!("{t} · {kind}")));
    }
    for group in model.results.iter().filter(|g| !is_verdict_kind(g.kind)) {
        let side = |run: usize| -> Vec<&ResultEntry> {
            group.entries.iter().filter(|(s, _)| model.series[*s].run == run).map(|(_, e)| *e).collect()
        };
        let (in_a, in_b) = (side(0), side(1));
        for ea in &in_a {
            match in_b.iter().find(|eb| eb.target_label == ea.target_label) {
                Some(eb) => rows(&mut out.rows, &group.label(), &eb.target_label, ea, eb),
                None => out.only_in_a.push(ea.title()),
            }
        }
        for eb in in_b.iter().filter(|eb| !in_a.iter().any(|ea| ea.target_label == eb.target_label)) {
            out.only_in_b.push(eb.title());
        }
    }
    out
}

/// Every other target of `run` against target `baseline`, result by result; `None` when
/// `baseline` is not a target of the run.
pub fn compare_targets(run: &RunReport, baseline: &str) -> Option<AbComparison> {
    if !run.results.iter().any(|e| e.target_label == baseline) {
        return None;
    }
    let one = std::slice::from_ref(run);
    let model = Model::new(one);
    let mut out = AbComparison {
        a: baseline.to_string(),
        b: "each other target".into(),
        rows: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        verdicts: Vec::new(),
    };
    for (kind, _) in crate::verdict_kinds() {
        let base = kind_verdicts(run, kind, baseline);
        for t in kind_targets(run, kind).into_iter().filter(|t| *t != baseline) {
            if base.is_empty() {
                out.only_in_b.push(format!("{t} · {kind}"));
            } else {
                out.verdicts.extend(diff(kind, t, &base, &kind_verdicts(run, kind, t)));
            }
        }
    }
    for group in model.results.iter().filter(|g| !is_verdict_kind(g.kind)) {
        let base = group.entries.iter().map(|(_, e)| *e).find(|e| e.target_label == baseline);
        for (_, other) in group.entries.iter().filter(|(_, e)| e.target_label != baseline) {
            match base {
                Some(base) => rows(&mut out.rows, &group.label(), &other.target_label, base, other),
                None => out.only_in_b.push(other.title()),
            }
        }
        if let (Some(base), true) = (base, group.entries.len() == 1) {
            out.only_in_a.push(base.title());
        }
    }
    Some(out)
}

/// Adds one row per metric that both `a` and `b` have (counts left out: they are what the
/// workload was told to do, not how fast it did it).
fn rows(out: &mut Vec<AbRow>, label: &str, target: &str, a: &ResultEntry, b: &ResultEntry) {
    debug_assert!(same_result(a, b));
    for metric in metrics([a, b]) {
        if is_count(metric.unit) {
            continue;
        }
        let values = |e: &ResultEntry| -> Vec<f64> {
            e.measurements.iter().filter_map(|m| m.metric(metric.name)).map(|m| m.value).collect()
        };
        let (va, vb) = (values(a), values(b));
        if va.is_empty() || vb.is_empty() {
            continue;
        }
        let Some(r) = ratio(&va, &vb) else { continue };
        let verdict = match r.reading(metric.better) {
            Reading::Better => AbVerdict::Better,
            Reading::Worse => AbVerdict::Worse,
            Reading::NoSignificantDifference => AbVerdict::NotSignificant,
            Reading::Untold(Untold::TooFew) => AbVerdict::NotTested,
            Reading::Untold(Untold::TooWide) => AbVerdict::TooNoisy,
        };
        let tested = r.untold() != Some(Untold::TooFew);
        let pct = |f: f64| (f - 1.0) * 100.0;
        out.push(AbRow {
            target: target.to_string(),
            result: label.to_string(),
            workload: a.workload_title(),
            part: a.part.clone(),
            metric: metric.name.to_string(),
            unit: metric.unit.to_string(),
            better: metric.better,
            mean_a: r.center_a,
            mean_b: r.center_b,
            factor: r.value,
            change_percent: pct(r.value),
            ci95_factor: r.ci95.filter(|_| tested),
            ci95_change_percent: r.ci95.filter(|_| tested).map(|(lo, hi)| (pct(lo), pct(hi))),
            p_value: r.p.filter(|_| tested),
            verdict,
        });
    }
}

/// The A/B rows as one table for every surface: target, result, metric, A and B (central
/// values), the change, the 95% CI of the change (from the ratio's, so never below −100%), p
/// and the verdict, marked where significant.
pub fn ab_table(rows: &[AbRow]) -> crate::table::Table {
    use crate::table::{Cell, Mark, Table};
    let mut table = Table::new(&[
        ("target", false),
        ("result", false),
        ("metric", false),
        ("A", true),
        ("B", true),
        ("change", true),
        ("95% CI of the change", true),
        ("p", true),
        ("verdict", false),
    ]);
    let percent = crate::html::percent;
    for r in rows {
        let mark = match r.verdict {
            AbVerdict::Better => Some(Mark::Better),
            AbVerdict::Worse => Some(Mark::Worse),
            AbVerdict::NotSignificant | AbVerdict::NotTested | AbVerdict::TooNoisy => None,
        };
        table.push(vec![
            r.target.clone().into(),
            r.result.clone().into(),
            r.metric.clone().into(),
            crate::humanize::value(r.mean_a, &r.unit).into(),
            crate::humanize::value(r.mean_b, &r.unit).into(),
            percent(r.change_percent).into(),
            r.ci95_change_percent
                .map_or_else(|| "–".to_string(), |(lo, hi)| format!("{} … {}", percent(lo), percent(hi)))
                .into(),
            r.p_value.map_or_else(|| "–".to_string(), |p| format!("{p:.3}")).into(),
            Cell::marked(r.verdict.word().to_string(), mark),
        ]);
    }
    table
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::Measurement;

    fn entry(target: &str, part: &str, iops: &[f64]) -> ResultEntry {
        ResultEntry {
            target_label: target.into(),
            workload_kind: "io".into(),
            workload_params: vec![("bs".into(), "4k".into())],
            part: Some(part.into()),
            measurements: iops
                .iter()
                .map(|&v| {
                    let mut m = Measurement { complete: true, ..Default::default() };
                    m.push("read_iops", "ops/s", Better::Higher, v);
                    m.push("read_items", "items", Better::Higher, 1000.0);
                    m
                })
                .collect(),
            ..Default::default()
        }
    }

    fn run(name: &str, results: Vec<ResultEntry>) -> RunReport {
        RunReport { id: format!("id-{name}"), name: Some(name.into()), results, ..Default::default() }
    }

    #[test]
    fn matching_results_get_verdicts_and_the_rest_is_named() {
        let a = run(
            "before",
            vec![entry("ext4", "seqread", &[100.0, 101.0, 99.0]), entry("ext4", "randread", &[50.0, 60.0, 40.0])],
        );
        let b = run(
            "after",
            vec![
                entry("ext4", "seqread", &[200.0, 202.0, 198.0]),
                entry("ext4", "randread", &[52.0, 62.0, 41.0]),
                entry("xfs", "seqread", &[1.0, 2.0]),
            ],
        );
        let c = compare_runs(&a, &b);
        assert_eq!((c.a.as_str(), c.b.as_str()), ("before", "after"));
        // Two matching results, one rate each; the count is not compared.
        assert_eq!(c.rows.len(), 2, "{:?}", c.rows);
        let seq = &c.rows[0];
        assert_eq!(
            (seq.result.as_str(), seq.metric.as_str(), seq.verdict),
            ("seqread", "read_iops", AbVerdict::Better)
        );
        assert!((seq.change_percent - 100.0).abs() < 1e-9);
        let (lo, hi) = seq.ci95_change_percent.unwrap();
        assert!(lo < 100.0 && hi > 100.0 && lo > 90.0, "{lo} {hi}");
        assert_eq!(c.rows[1].verdict, AbVerdict::NotSignificant);
        assert_eq!(c.only_in_b, ["xfs · io:bs=4k · seqread"]);
        assert!(c.only_in_a.is_empty());
    }

    fn posix(target: &str, params: &[(&str, &str)], verdicts: &[(&str, fsarena_core::Outcome)]) -> ResultEntry {
        ResultEntry {
            target_label: target.into(),
            workload_kind: "posix".into(),
            workload_params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            part: Some("rmdir".into()),
            measurements: vec![Measurement {
                complete: true,
                verdicts: verdicts
                    .iter()
                    .map(|(case, outcome)| fsarena_core::Verdict {
                        case: case.to_string(),
                        security: false,
                        outcome: *outcome,
                        expected: String::new(),
                        actual: String::new(),
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn posix_results_list_changed_cases_not_significance() {
        use fsarena_core::Outcome::{Fail, Pass};
        let a = run("before", vec![posix("ext4", &[], &[("rmdir.a.removed", Pass), ("rmdir.b.EPERM", Fail)])]);
        // Another case filter on B: the shared cases still compare.
        let b = run(
            "after",
            vec![posix("ext4", &[("case", "rmdir.*")], &[("rmdir.a.removed", Fail), ("rmdir.b.EPERM", Pass)])],
        );
        let c = compare_runs(&a, &b);
        assert!(c.rows.is_empty(), "no welch rows for case counts: {:?}", c.rows);
        assert!(c.only_in_a.is_empty() && c.only_in_b.is_empty());
        assert_eq!(c.verdicts.len(), 1);
        assert_eq!(c.verdicts[0].newly_failing[0].case, "rmdir.a.removed");
        assert_eq!(c.verdicts[0].newly_passing[0].case, "rmdir.b.EPERM");
        let one = run(
            "one",
            vec![posix("tmpfs", &[], &[("rmdir.a.removed", Pass)]), posix("fuse", &[], &[("rmdir.a.removed", Fail)])],
        );
        let c = compare_targets(&one, "tmpfs").unwrap();
        assert_eq!((c.verdicts[0].target.as_str(), c.verdicts[0].newly_failing.len()), ("fuse", 1));
    }

    #[test]
    fn baseline_compares_every_other_target() {
        let r = run(
            "one",
            vec![
                entry("ext4", "j", &[100.0, 101.0, 99.0]),
                entry("xfs", "j", &[50.0, 51.0, 49.0]),
                entry("ext4", "k", &[1.0]),
            ],
        );
        let c = compare_targets(&r, "ext4").unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!((c.rows[0].target.as_str(), c.rows[0].verdict), ("xfs", AbVerdict::Worse));
        assert_eq!(c.only_in_a, ["ext4 · io:bs=4k · k"]);
        assert!(compare_targets(&r, "btrfs").is_none());
        let single =
            compare_runs(&run("a", vec![entry("ext4", "j", &[1.0])]), &run("b", vec![entry("ext4", "j", &[2.0])]));
        assert_eq!(single.rows[0].verdict, AbVerdict::NotTested);
        assert_eq!(single.rows[0].p_value, None);
    }
}
