//! `fsarena demo`, the README's first command. Its own module, named to sort early: libtest
//! starts tests in name order, and this one takes the demo's four minutes, so it runs beside
//! the rest of the suite rather than alone at its end.

use crate::suites::suites;
use crate::util::Bounded;
use crate::util::{run, stderr, stdout, Scratch};

/// `fsarena demo`, as the README's first command runs it: every suite at smoke, each row
/// repeated, stored, one report. Checked: exit 0, every suite's run stored and present in
/// the report as Chromium renders it (its Findings, charts that draw, no script), how long
/// each suite took against its budget said, and nothing left behind.
#[test]
fn every_suite_runs_at_smoke_into_one_report() {
    // The demo starts servers (trading, roundup) and a glusterd (client-scaling): it takes
    // its turn with the tests that start them and check that none is left, in the order
    // every test that holds both takes them.
    let _servers = crate::servers::ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let _glusterd = crate::glusterfs::one_at_a_time();
    let scratch = Scratch::new("demo");
    let (db, page) = (scratch.path.join("runs.db"), scratch.path.join("demo.html"));
    let wd = crate::util::TestWorkdir::new("demo");
    let out = crate::util::fsarena()
        .args(["demo", "--log", "--db"])
        .arg(&db)
        .args(["--workdir", &wd.arg(), "-o"])
        .arg(&page)
        .bounded_output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
    for name in suites() {
        assert!(err.contains(&format!("fsarena: demo: suite {name} took ")), "{name}: {err}");
    }
    assert!(err.contains("report written to"), "{err}");
    let dom = crate::util::chromium_dom(&page);
    for name in suites() {
        assert!(dom.contains(&format!("{name} · ")), "{name} missing from the report");
    }
    assert!(dom.contains("Findings"), "no Findings in the demo report");
    // A claim whose interval is too wide or rests on too few repetitions is inconclusive at
    // this scale: never confirmed or contradicted (so two demo runs cannot disagree on it).
    let text = stdout(&out);
    let mut claims = 0;
    for block in text.split("\n  [").skip(1) {
        let Some((verdict, rest)) = block.split_once("] ") else { continue };
        let figures: Vec<&str> = rest.lines().skip(1).take_while(|l| l.starts_with("      ")).collect();
        if figures.is_empty() {
            continue;
        }
        claims += 1;
        let untold = |f: &&&str| f.contains("too noisy to tell") || f.contains("too few repetitions to tell");
        if figures.iter().all(|f| untold(&f)) {
            assert_eq!(verdict, "inconclusive at this scale", "{rest}");
        } else if figures.iter().any(|f| untold(&f)) {
            // Another pair's interval may still lie wholly outside the claim.
            assert!(verdict == "inconclusive at this scale" || verdict == "contradicted", "[{verdict}] {rest}");
        }
        if verdict == "confirmed" {
            assert!(figures.iter().all(|f| f.contains("(95% CI")), "[{verdict}] {rest}");
        }
    }
    assert!(claims >= 10, "{claims} claims in the demo's output: {text}");
    let charts: Vec<&str> = dom.split("<svg class=\"chart\"").skip(1).collect();
    assert!(charts.len() >= 5, "{} charts in the demo report", charts.len());
    for chart in &charts {
        let body = &chart[..chart.find("</svg>").unwrap_or(chart.len())];
        assert!(["<path", "<rect", "<line"].iter().any(|s| body.contains(s)), "a chart draws nothing: {body}");
    }
    assert!(!dom.contains("<script"), "the report has a script");
    // Each suite is its own stored run, tagged demo.
    // (`results list` shortens long names: demo-client-sca…)
    let listed = stdout(&run(&["results", "list", "--db", &db.display().to_string()]));
    let runs: Vec<&str> = listed.lines().filter(|l| l.contains(" demo-") && l.contains(" complete ")).collect();
    assert_eq!(runs.len(), suites().len(), "{listed}");
}
