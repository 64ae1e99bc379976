//! Tests of the verdict tables (of `posix`, a verdict kind in the tests' registry), their
//! text, HTML and Markdown, and the comparison of cases.

use super::*;
use fsarena_core::Measurement;

/// The posix table of `runs`.
fn posix_table(runs: &[RunReport]) -> Option<VerdictTable> {
    tables(runs).into_iter().find(|t| t.kind == "posix")
}

/// The posix section of the terminal report of `runs`.
fn posix_text(runs: &[RunReport]) -> String {
    posix_table(runs).map(|t| t.text()).unwrap_or_default()
}

fn v(case: &str, outcome: Outcome, security: bool, why: &str) -> Verdict {
    let (expected, actual) = match outcome {
        Outcome::Pass => (String::new(), String::new()),
        Outcome::Fail => ("ENOTEMPTY".to_string(), why.to_string()),
        Outcome::Unsupported => (String::new(), why.to_string()),
    };
    Verdict { case: case.into(), security, outcome, expected, actual }
}

fn entry(target: &str, family: &str, verdicts: Vec<Verdict>) -> ResultEntry {
    ResultEntry {
        target_label: target.into(),
        workload_kind: "posix".into(),
        workload_params: vec![("case".into(), "*".into())],
        part: Some(family.into()),
        measurements: vec![Measurement { verdicts, complete: true, ..Default::default() }],
        ..Default::default()
    }
}

fn run() -> RunReport {
    use Outcome::*;
    RunReport {
        id: "r".into(),
        results: vec![
            entry("tmpfs", "rmdir", vec![v("rmdir.a.removed", Pass, false, ""), v("rmdir.b.EPERM", Pass, true, "")]),
            entry("tmpfs", "chmod", vec![v("chmod.x.EPERM", Unsupported, true, "no ACLs")]),
            entry(
                "fuse",
                "rmdir",
                vec![v("rmdir.a.removed", Pass, false, ""), v("rmdir.b.EPERM", Fail, true, "removed")],
            ),
        ],
        ..Default::default()
    }
}

#[test]
fn the_table_puts_families_in_rows_and_targets_in_columns() {
    let t = posix_table(&[run()]).unwrap();
    assert_eq!(t.families, ["rmdir", "chmod"]);
    let labels: Vec<&str> = t.columns.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["tmpfs", "fuse"]);
    let rows = t.rows();
    let text = |r: usize, c: usize| rows[r].cells[c].map(|t| t.text());
    assert_eq!(text(0, 0).as_deref(), Some("2/2"));
    assert_eq!(text(0, 1).as_deref(), Some("1/2"));
    assert_eq!(text(1, 0).as_deref(), Some("0/0 +1 unsupported"));
    assert_eq!(text(1, 1), None);
    assert_eq!((rows[2].label.as_str(), text(2, 0).as_deref()), ("total", Some("2/2 +1 unsupported")));
    assert_eq!((rows[3].label.as_str(), text(3, 1).as_deref()), ("security", Some("0/1")));
    let out = posix_text(&[run()]);
    assert!(out.contains("| rmdir "), "{out}");
    assert!(out.contains("fuse: 1 failed"), "{out}");
    assert!(out.contains("rmdir.b.EPERM [security]  expected ENOTEMPTY  actual removed"), "{out}");
    assert!(out.contains("tmpfs: 1 unsupported\n  no ACLs: chmod.x.EPERM"), "{out}");
    assert_eq!(posix_text(&[RunReport::default()]), "");
}

#[test]
fn html_and_markdown_show_the_table_and_the_failures_escaped() {
    let mut r = run();
    r.results[2].measurements[0].verdicts[1].actual = "<script>x</script>".into();
    let html = crate::html_report(std::slice::from_ref(&r));
    assert!(html.contains("<section id=\"posix\">"), "{html}");
    assert!(html.contains("<td class=\"num worst\">1/2</td>"), "{html}");
    assert!(html.contains("&lt;script&gt;x&lt;/script&gt;") && !html.contains("<script>"), "{html}");
    assert!(
        !html.contains("id=\"result-") && !html.contains("Every result shares"),
        "no mean ± CI sections for case counts: {html}"
    );
    let (md, _) = crate::markdown_report(std::slice::from_ref(&r));
    assert!(md.contains("## POSIX compliance") && md.contains("| rmdir | 2/2 | _1/2_ |"), "{md}");
    assert!(md.contains("### fuse: 1 failed"), "{md}");
    let mut b = r.clone();
    b.id = "r2".into();
    b.results[0].measurements[0].verdicts[0].outcome = Outcome::Fail;
    let html = crate::html_report(&[r, b]);
    assert!(html.contains("<code>rmdir.a.removed</code> (was pass)"), "{html}");
}

#[test]
fn the_terminal_report_has_one_line_per_result_and_no_figures_table_for_cases() {
    use crate::Exporter;
    let text = String::from_utf8(crate::Human::default().export(&[run()]).unwrap()).unwrap();
    assert!(
        text.contains("fuse · posix:case=* · rmdir: 2 cases, 1 passed, 1 failed, 0 unsupported in 0.00 s\n"),
        "{text}"
    );
    assert!(!text.contains("| metric"), "no mean ± CI table of case counts: {text}");
    let header = text.lines().find(|l| l.starts_with("| posix family")).unwrap();
    assert!(header.contains(" tmpfs |") && header.ends_with(" fuse |"), "{text}");
    assert!(text.contains("tmpfs · posix:case=* · chmod: 1 case, 0 passed"), "{text}");
    // fio's JSON has jobs only: a posix result adds none.
    let fio: serde_json::Value = serde_json::from_slice(&crate::FioJson.export(&[run()]).unwrap()).unwrap();
    assert_eq!(fio["jobs"], serde_json::json!([]));
}

#[test]
fn repetitions_keep_the_worst_outcome() {
    let mut e = entry("t", "rmdir", vec![v("rmdir.a.removed", Outcome::Pass, false, "")]);
    e.measurements.push(Measurement {
        verdicts: vec![v("rmdir.a.removed", Outcome::Fail, false, "EBUSY")],
        ..Default::default()
    });
    let merged = entry_verdicts(&e);
    assert_eq!(merged.len(), 1);
    assert_eq!(merged[0].outcome, Outcome::Fail);
}

#[test]
fn diff_lists_newly_failing_and_newly_passing() {
    use Outcome::*;
    let a = vec![
        v("rmdir.a.x", Pass, false, ""),
        v("rmdir.b.y", Fail, false, "E1"),
        v("rmdir.c.z", Unsupported, false, "r"),
    ];
    let b = vec![v("rmdir.a.x", Fail, false, "E2"), v("rmdir.b.y", Pass, false, ""), v("rmdir.c.z", Fail, false, "E3")];
    let d = diff("posix", "ext4", &a, &b);
    assert_eq!(d.len(), 1);
    let names = |l: &[CaseChange]| l.iter().map(|c| c.case.clone()).collect::<Vec<_>>();
    assert_eq!(names(&d[0].newly_failing), ["rmdir.a.x", "rmdir.c.z"]);
    assert_eq!(names(&d[0].newly_passing), ["rmdir.b.y"]);
    assert_eq!((d[0].passed_a, d[0].passed_b, d[0].cases_a), (1, 1, 3));
    let text = diff_text(&d, None);
    assert!(text.contains("newly failing on ext4: rmdir.a.x (was pass): expected ENOTEMPTY, actual E2"), "{text}");
    assert!(text.contains("newly passing on ext4: rmdir.b.y (was fail)"), "{text}");
}
