//! Findings on fixed stored results: a clear winner, a pair with no significant difference, a
//! claim confirmed, one contradicted, one not tested here; in text, HTML and Markdown.

#![allow(clippy::unwrap_used)]

use crate::experiment::{Claim, Experiment, Row, Skipped};
use crate::findings::{factor, findings, ClaimVerdict};
use crate::{ResultEntry, RunReport};
use fsarena_core::{Better, Measurement};

/// A sqlite-like result: `insert_time` (s, lower is better) and `inserts` (ops/s) over the
/// repetitions given.
fn entry(target: &str, seconds: &[f64]) -> ResultEntry {
    ResultEntry {
        target_label: target.into(),
        target_kind: target.into(),
        workload_kind: "sqlite".into(),
        workload_params: vec![("inserts".into(), "12500".into())],
        measurements: seconds
            .iter()
            .map(|&s| {
                let mut m = Measurement { complete: true, ..Default::default() };
                m.push("insert_time", "s", Better::Lower, s);
                m.push("inserts_per_second", "ops/s", Better::Higher, 12_500.0 / s);
                m
            })
            .collect(),
        ..Default::default()
    }
}

fn claim(text: &str, better: &[&str], worse: &[&str], min_factor: f64) -> Claim {
    Claim {
        text: text.into(),
        row: Some("sqlite".into()),
        point: None,
        metric: "insert_time".into(),
        better: better.iter().map(ToString::to_string).collect(),
        worse: worse.iter().map(ToString::to_string).collect(),
        min_factor,
    }
}

/// ext3 far ahead; ext4 and xfs within noise of each other; no btrfs in the run.
fn fixture() -> (RunReport, Experiment) {
    let experiment = Experiment {
        name: "roundup".into(),
        scale: "smoke".into(),
        rows: vec![Row {
            id: "sqlite".into(),
            title: "SQLite 12,500 inserts".into(),
            chart: Some("bars".into()),
            metrics: vec!["insert_time".into()],
            workloads: vec!["sqlite:inserts=12500".into()],
            reduced: None,
            ..Row::default()
        }],
        claims: vec![
            claim("ext3 finishes the SQLite inserts far sooner than ext4 and xfs", &["ext3"], &["ext4", "xfs"], 10.0),
            claim("xfs inserts faster than ext3", &["xfs"], &["ext3"], 1.0),
            claim("ext4 beats xfs", &["ext4"], &["xfs"], 1.0),
            claim("btrfs is the slowest", &["ext4"], &["btrfs"], 1.0),
        ],
        skipped: vec![Skipped { what: "row pgbench".into(), reason: "workload `pgbench` is not in this build".into() }],
        ..Experiment::default()
    };
    let run = RunReport {
        id: "1700000000-1".into(),
        results: vec![
            entry("ext4", &[870.0, 860.0, 880.0]),
            entry("ext3", &[20.0, 21.0, 19.5]),
            entry("xfs", &[872.0, 850.0, 890.0]),
        ],
        plan: format!("fsarena suite run roundup{}", experiment.plan_suffix()),
        complete: true,
        ..Default::default()
    };
    (run, experiment)
}

#[test]
fn a_clear_winner_is_ranked_with_its_factor_ci_and_p() {
    let (run, experiment) = fixture();
    let f = findings(&run, &experiment);
    assert_eq!(f.metrics.len(), 1, "{f:?}");
    let m = &f.metrics[0];
    let order: Vec<&str> = m.ranking.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(order, ["ext3", "ext4", "xfs"]);
    let factor = m.factor.as_ref().unwrap();
    assert!(factor.significant());
    // 870.7 / 20.2 ≈ 43: the geometric means' ratio, its CI around it.
    assert!((42.0..45.0).contains(&factor.value), "{factor:?}");
    assert!(factor.ci95.0 < factor.value && factor.value < factor.ci95.1);
    assert!(m.text().contains("ext3 is 43"), "{}", m.text());
}

#[test]
fn a_pair_within_noise_has_no_significant_difference() {
    let f = factor(&[870.0, 860.0, 880.0], &[872.0, 850.0, 890.0], Better::Lower).unwrap();
    assert!(!f.significant(), "{f:?}");
    assert!(f.ci95.0 < 1.0 && f.ci95.1 > 1.0);
    let (mut run, experiment) = fixture();
    run.results.retain(|e| e.target_label != "ext3");
    let f = findings(&run, &experiment);
    assert!(f.metrics[0].text().contains("no significant difference"), "{}", f.metrics[0].text());
}

#[test]
fn claims_are_confirmed_contradicted_not_significant_or_not_tested() {
    let (run, experiment) = fixture();
    let f = findings(&run, &experiment);
    let verdicts: Vec<ClaimVerdict> = f.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        verdicts,
        [ClaimVerdict::Confirmed, ClaimVerdict::Contradicted, ClaimVerdict::NotSignificant, ClaimVerdict::NotTested]
    );
    assert!(f.claims[1].figures[0].contains("xfs over ext3"), "{:?}", f.claims[1].figures);
    assert!(f.claims[1].figures[0].contains("ext3 is better"), "{:?}", f.claims[1].figures);
    assert_eq!(f.claims[3].figures, ["no target btrfs in this run"]);
}

#[test]
fn a_claim_above_the_figures_is_not_confirmed() {
    let (run, mut experiment) = fixture();
    experiment.claims = vec![claim("ext3 is 100 times faster", &["ext3"], &["ext4"], 100.0)];
    let f = findings(&run, &experiment);
    assert_eq!(f.claims[0].verdict, ClaimVerdict::NotSignificant);
    assert!(f.claims[0].figures[0].contains("smaller than the claimed 100×"), "{:?}", f.claims[0].figures);
}

#[test]
fn every_format_shows_the_findings_and_what_was_skipped() {
    let (run, _) = fixture();
    let text =
        String::from_utf8(crate::Exporter::export(&crate::Human::default(), std::slice::from_ref(&run)).unwrap())
            .unwrap();
    assert!(text.contains("Findings (roundup, scale smoke"), "{text}");
    assert!(text.contains("[contradicted] xfs inserts faster than ext3"), "{text}");
    assert!(text.contains("[not tested here] btrfs is the slowest"), "{text}");
    assert!(text.contains("row pgbench: workload `pgbench` is not in this build"), "{text}");
    let html = crate::html_report(std::slice::from_ref(&run));
    assert!(html.contains("<section id=\"findings\">"));
    assert!(html.contains("<section id=\"row-sqlite\"><h2>SQLite 12,500 inserts</h2>"));
    assert!(html.contains("<td class=\"better\">confirmed</td>"));
    // The row's heading comes before its results.
    assert!(html.find("id=\"row-sqlite\"") < html.find("id=\"result-1\""));
    // A row that did not run still has its heading, with the reason.
    let mut experiment = crate::experiment::Experiment::from_plan(&run.plan).unwrap();
    experiment.rows.push(Row { id: "pgbench".into(), title: "PostgreSQL".into(), ..Row::default() });
    let mut skipped_run = run.clone();
    skipped_run.plan = experiment.plan_suffix();
    let html = crate::html_report(std::slice::from_ref(&skipped_run));
    assert!(html.contains("<h2>PostgreSQL</h2>"), "{html}");
    assert!(html.contains("<strong>not run here</strong>: workload `pgbench` is not in this build"));
    let (md, _) = crate::markdown_report(std::slice::from_ref(&run));
    assert!(md.contains("## Findings"));
    assert!(md.contains("| **contradicted** |"), "{md}");
    assert!(md.contains("### Skipped here"));
}

#[test]
fn a_run_without_an_experiment_has_no_findings() {
    let (mut run, _) = fixture();
    run.plan = "fsarena run --target ext4 --workload sqlite".into();
    let html = crate::html_report(std::slice::from_ref(&run));
    assert!(!html.contains("id=\"findings\""));
}

#[test]
fn compliance_checks_are_not_ranked() {
    let (mut run, mut experiment) = fixture();
    let posix = |label: &str, passed: f64| {
        let mut e = entry(label, &[1.0]);
        e.workload_kind = "posix".into();
        e.workload_params = vec![("family".into(), "chmod".into())];
        e.measurements[0].metrics.clear();
        e.measurements[0].push("chmod_passed", "cases", Better::Higher, passed);
        e
    };
    run.results.push(posix("ext4", 41.0));
    run.results.push(posix("ext3", 37.0));
    experiment.rows.push(Row { id: "posix".into(), workloads: vec!["posix:family=chmod".into()], ..Row::default() });
    let f = findings(&run, &experiment);
    assert_eq!(f.metrics.len(), 1, "only the sqlite row is ranked: {:?}", f.metrics);
}

#[test]
fn each_row_says_how_long_it_took_here() {
    let (mut run, experiment) = fixture();
    // Not recorded (a run stored before wall times were kept): no table, no heading figure.
    let f = findings(&run, &experiment);
    assert_eq!(f.times.len(), 1);
    assert_eq!((f.times[0].results, f.times[0].targets, f.times[0].wall_ms), (3, 3, None));
    assert!(!crate::html_report(std::slice::from_ref(&run)).contains("Time here per row"));
    // Recorded: the row's time is the sum over its results (targets, parts).
    for (e, ms) in run.results.iter_mut().zip([61_000, 2_400, 59_000]) {
        e.wall_ms = Some(ms);
    }
    let f = findings(&run, &experiment);
    assert_eq!(f.times[0].wall_ms, Some(122_400));
    assert_eq!(f.times[0].time_text(), "2m02s");
    let text = crate::findings::text(&f, &experiment);
    assert!(text.contains("SQLite 12,500 inserts: 2m02s (3 result(s) on 3 target(s))"), "{text}");
    assert!(text.contains("all rows: 2m02s"), "{text}");
    let html = crate::html_report(std::slice::from_ref(&run));
    assert!(html.contains("<h3>Time here per row</h3>"), "{html}");
    assert!(html.contains("· ran here in 2m02s"), "{html}");
    let (md, _) = crate::markdown_report(std::slice::from_ref(&run));
    assert!(md.contains("| SQLite 12,500 inserts | 3 result(s) on 3 target(s) | 2m02s |"), "{md}");
}
