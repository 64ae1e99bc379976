//! Findings on fixed stored results: a clear winner, a pair with no significant difference, a
//! claim confirmed, one contradicted, one not tested here; in text, HTML and Markdown.

#![allow(clippy::unwrap_used)]

use crate::experiment::{Claim, Experiment, Row, Skipped};
use crate::findings::{findings, ClaimVerdict};
use crate::{ResultEntry, RunReport};
use fsarena_core::{Better, Measurement};
use fsarena_stats::{ratio, Reading};

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
        metric: "insert_time".into(),
        better: better.iter().map(ToString::to_string).collect(),
        worse: worse.iter().map(ToString::to_string).collect(),
        min_factor,
        ..Claim::default()
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
    assert_eq!(m.reading(), Some(Reading::Better));
    let r = m.factor.as_ref().unwrap().oriented(Better::Lower);
    // 870.7 / 20.2 ≈ 43: the geometric means' ratio, its CI around it.
    assert!((42.0..45.0).contains(&r.value), "{r:?}");
    let (lo, hi) = r.ci95.unwrap();
    assert!(lo < r.value && r.value < hi);
    // Lower is better: the ranking reads "<", and the factor is "shorter", never a false ">".
    assert!(m.text().starts_with("ext3 20.2 s < ext4 870 s"), "{}", m.text());
    assert!(m.text().contains(": ext3 43.") && m.text().contains("× shorter than xfs (95% CI"), "{}", m.text());
}

#[test]
fn a_pair_within_noise_has_no_significant_difference() {
    let r = ratio(&[872.0, 850.0, 890.0], &[870.0, 860.0, 880.0]).unwrap();
    assert_eq!(r.reading(Better::Lower), Reading::NoSignificantDifference);
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
    assert!(f.claims[1].figures[0].contains("the reverse holds"), "{:?}", f.claims[1].figures);
    assert_eq!(f.claims[3].figures, ["no target btrfs in this run"]);
}

#[test]
fn a_claim_above_the_whole_interval_is_contradicted_and_one_across_it_inconclusive() {
    let (run, mut experiment) = fixture();
    experiment.claims = vec![
        claim("ext3 is 100 times faster", &["ext3"], &["ext4"], 100.0),
        claim("ext3 is about 43 times faster", &["ext3"], &["ext4"], 43.0 / 1.5),
        claim("ext3 is 30 to 50 times faster", &["ext3"], &["ext4"], 30.0),
        claim("ext3 is 43 to 44 times faster", &["ext3"], &["ext4"], 43.0),
    ];
    experiment.claims[1].at_most = Some(43.0 * 1.5);
    experiment.claims[1].study = Some(40.0);
    experiment.claims[2].at_most = Some(50.0);
    experiment.claims[3].at_most = Some(44.0);
    let f = findings(&run, &experiment);
    let verdicts: Vec<ClaimVerdict> = f.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        verdicts,
        [ClaimVerdict::Contradicted, ClaimVerdict::Confirmed, ClaimVerdict::Confirmed, ClaimVerdict::Inconclusive]
    );
    assert!(f.claims[0].figures[0].contains("the claim says ≥ 100×"), "{:?}", f.claims[0].figures);
    assert!(f.claims[1].figures[0].contains("; the study: 40.0×"), "{:?}", f.claims[1].figures);
    assert!(f.claims[3].figures[0].contains("the claim says 43–44×"), "{:?}", f.claims[3].figures);
}

#[test]
fn two_repetitions_are_inconclusive_never_confirmed_or_contradicted() {
    let (mut run, experiment) = fixture();
    for e in &mut run.results {
        e.measurements.truncate(2);
    }
    let f = findings(&run, &experiment);
    let verdicts: Vec<ClaimVerdict> = f.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        verdicts,
        [ClaimVerdict::Inconclusive, ClaimVerdict::Inconclusive, ClaimVerdict::Inconclusive, ClaimVerdict::NotTested]
    );
    assert!(f.claims[0].figures[0].contains("too few repetitions to tell (2 and 2; 3 needed)"), "{:?}", f.claims[0]);
    assert!(
        f.metrics[0].text().ends_with("too few repetitions to tell (2 and 2; 3 needed)"),
        "{}",
        f.metrics[0].text()
    );
    assert_eq!(ClaimVerdict::Inconclusive.word(), "inconclusive at this scale");
}

/// Two rows (one job, four jobs) of io results with `write_bw`.
fn scaling() -> (RunReport, Experiment) {
    let io = |target: &str, jobs: u32, bw: &[f64]| ResultEntry {
        target_label: target.into(),
        workload_kind: "io".into(),
        workload_params: vec![("numjobs".into(), jobs.to_string())],
        part: Some("write".into()),
        measurements: bw
            .iter()
            .map(|&v| {
                let mut m = Measurement { complete: true, ..Default::default() };
                m.push("write_bw", "B/s", Better::Higher, v);
                m
            })
            .collect(),
        ..Default::default()
    };
    let row = |id: &str, jobs: u32| Row {
        id: id.into(),
        title: id.into(),
        workloads: vec![format!("io:numjobs={jobs}")],
        ..Row::default()
    };
    let experiment = Experiment {
        name: "dbfs".into(),
        scale: "quick".into(),
        rows: vec![row("one", 1), row("four", 4)],
        ..Experiment::default()
    };
    let run = RunReport {
        id: "1700000000-2".into(),
        results: vec![
            io("ext3", 1, &[100.0, 102.0, 98.0]),
            io("ext4", 1, &[90.0, 91.0, 89.0]),
            io("dbfs", 1, &[50.0, 51.0, 49.0]),
            io("ext3", 4, &[130.0, 131.0, 129.0]),
            io("ext4", 4, &[120.0, 118.0, 122.0]),
            io("dbfs", 4, &[50.0, 52.0, 48.0]),
        ],
        complete: true,
        ..Default::default()
    };
    (run, experiment)
}

#[test]
fn an_order_of_three_targets_and_gains_across_rows_are_claims() {
    let (run, mut experiment) = scaling();
    let base = Claim {
        row: Some("four".into()),
        part: Some("write".into()),
        metric: "write_bw".into(),
        min_factor: 1.0,
        ..Claim::default()
    };
    let from = Some(crate::experiment::Scope { row: Some("one".into()), ..Default::default() });
    experiment.claims = vec![
        Claim {
            text: "ext3 > ext4 > dbfs".into(),
            order: vec!["ext3".into(), "ext4".into(), "dbfs".into()],
            ..base.clone()
        },
        Claim {
            text: "dbfs > ext3 > ext4".into(),
            order: vec!["dbfs".into(), "ext3".into(), "ext4".into()],
            ..base.clone()
        },
        Claim {
            text: "ext3 gains up to 1.4×".into(),
            targets: vec!["ext3".into()],
            from: from.clone(),
            at_most: Some(1.4),
            ..base.clone()
        },
        Claim {
            text: "dbfs gains nothing".into(),
            targets: vec!["dbfs".into()],
            from: from.clone(),
            min_factor: 1.0 / 1.5,
            at_most: Some(1.5),
            ..base.clone()
        },
        Claim {
            text: "ext3 gains more than dbfs".into(),
            better: vec!["ext3".into()],
            worse: vec!["dbfs".into()],
            from,
            ..base.clone()
        },
        Claim {
            text: "readrandom only".into(),
            better: vec!["ext3".into()],
            worse: vec!["dbfs".into()],
            part: Some("read".into()),
            ..base
        },
    ];
    let f = findings(&run, &experiment);
    let verdicts: Vec<ClaimVerdict> = f.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(
        verdicts,
        [
            ClaimVerdict::Confirmed,
            ClaimVerdict::Contradicted,
            ClaimVerdict::Confirmed,
            ClaimVerdict::Confirmed,
            ClaimVerdict::Confirmed,
            ClaimVerdict::NotTested
        ],
        "{:#?}",
        f.claims
    );
    assert!(
        f.claims[2].figures[0].starts_with("ext3's gain from one write at write: 1.30×"),
        "{:?}",
        f.claims[2].figures
    );
    assert!(f.claims[4].figures[0].contains("ext3's gain over dbfs's"), "{:?}", f.claims[4].figures);
}

/// The same two-target comparison, read by Findings, the HTML table's marks, `compare
/// --baseline`, and the A/B section of two runs, says one ranking, factor, interval and verdict.
#[test]
fn every_surface_tells_one_comparison_the_same() {
    let (slow, fast) = ([870.0, 860.0, 880.0], [600.0, 640.0, 610.0]);
    let (mut run, experiment) = fixture();
    run.results = vec![entry("ext4", &slow), entry("xfs", &fast)];
    let f = findings(&run, &experiment);
    let m = &f.metrics[0];
    let order: Vec<&str> = m.ranking.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(order, ["xfs", "ext4"]);
    let want = ratio(&slow, &fast).unwrap();
    assert_eq!(m.factor.as_ref(), Some(&want));
    let clause = crate::told::interval_text(&want.oriented(Better::Lower)).unwrap();
    assert!(m.text().contains(&clause), "{} / {clause}", m.text());
    // compare --baseline ext4: xfs's insert_time, B over A, is the same ratio and interval.
    let c = crate::compare_targets(&run, "ext4").unwrap();
    let row = c.rows.iter().find(|r| r.metric == "insert_time").unwrap();
    assert_eq!((row.factor, row.ci95_factor, row.p_value), (want.value, want.ci95, want.p));
    assert_eq!(row.verdict, crate::AbVerdict::Better);
    // The A/B section of two runs, ext4 before and "after" with xfs's numbers.
    let before = RunReport { id: "a".into(), results: vec![entry("ext4", &slow)], ..Default::default() };
    let after = RunReport { id: "b".into(), results: vec![entry("ext4", &fast)], ..Default::default() };
    let ab = crate::compare_runs(&before, &after);
    let ab_row = ab.rows.iter().find(|r| r.metric == "insert_time").unwrap();
    assert_eq!((ab_row.factor, ab_row.ci95_factor, ab_row.verdict), (row.factor, row.ci95_factor, row.verdict));
    let (lo, hi) = ab_row.ci95_change_percent.unwrap();
    assert!(lo > -100.0 && hi < 0.0, "{lo} {hi}");
    // The HTML table marks xfs best and ext4 worst, as Findings rank them.
    let html = crate::html_report(std::slice::from_ref(&run));
    let table = &html[html.find("id=\"result-1\"").unwrap()..];
    let best = table.find("class=\"num best\"").or_else(|| table.find("best")).unwrap();
    let worst = table.find("worst").unwrap();
    assert!(best < table.len() && worst < table.len());
    // A verdict of too few repetitions is the same everywhere too.
    let mut two = run.clone();
    for e in &mut two.results {
        e.measurements.truncate(2);
    }
    let f = findings(&two, &experiment);
    assert!(f.metrics[0].text().contains("too few repetitions to tell"), "{}", f.metrics[0].text());
    let c = crate::compare_targets(&two, "ext4").unwrap();
    assert_eq!(c.rows.iter().find(|r| r.metric == "insert_time").unwrap().verdict, crate::AbVerdict::NotTested);
    let html = crate::html_report(std::slice::from_ref(&two));
    assert!(html.contains("too few"), "no 'too few' note in the table");
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
