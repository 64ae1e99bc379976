//! The built-in suites and the experiment file's rows, scales and claims: every suite plans at
//! every scale, `suite show` prints the file and the plans, and an experiment file with claims
//! and a row this build cannot run reports Findings and lists the row as skipped.

use crate::util::Bounded;
use crate::util::{fsarena, json, run, stderr, stdout, Scratch, TempDir};

/// The suites `suite list` names.
pub(crate) fn suites() -> Vec<String> {
    let out = fsarena().args(["suite", "list"]).bounded_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn every_suite_plans_at_every_scale() {
    let names = suites();
    assert_eq!(names, ["dbfs", "trading", "client-scaling", "kv", "roundup"]);
    let scratch = TempDir::new();
    let workdir = format!("{}/work", scratch.0);
    for name in &names {
        for scale in ["smoke", "quick", "full"] {
            let out = fsarena()
                .args(["suite", "run", name, "--scale", scale, "--dry-run", "--workdir", &workdir])
                .bounded_output()
                .unwrap();
            let (text, err) = (stdout(&out), stderr(&out));
            // At full the study's own sizes need their disk: tens of GiB per image (and the
            // client-scaling grid, 8 clients × 64 processes × 10 GiB, a cluster's); at quick a
            // few GiB (client-scaling's two 5 GiB bricks), which a CI machine's /var/tmp may
            // lack too (5.4 GiB free seen here beside a build). Where this disk lacks the room,
            // the plan is refused for that alone, by name, after every row, claim and target
            // was parsed and checked. Smoke always fits.
            if scale != "smoke" && out.status.code() == Some(2) {
                assert!(err.contains("does not fit") || err.contains("more than"), "{name}: {err}");
                // The study's plan, refused with what it needs and what is here: two sizes.
                assert!(sizes_in(&err) >= 2, "{name} at {scale}: a refusal names the sizes: {err}");
                continue;
            }
            assert!(out.status.success(), "{name} at {scale}: {err}");
            assert!(text.contains(&format!("scale: {scale}")), "{text}");
            assert!(text.contains("plan: "), "{text}");
        }
    }
    // The workloads other issues bring are listed as skipped rows, never silently dropped.
    let out = fsarena()
        .args(["suite", "run", "roundup", "--scale", "smoke", "--dry-run", "--workdir", &workdir])
        .bounded_output()
        .unwrap();
    let text = stdout(&out);
    for kind in ["pgbench", "http"] {
        if fsarena_has(kind) {
            continue;
        }
        assert!(text.contains(&format!("skipped row {kind}: workload `{kind}` is not in this build")), "{text}");
    }
}

/// How many sizes such as `1.7TiB`, `512 MiB` or `30 GiB` `text` holds.
fn sizes_in(text: &str) -> usize {
    let words: Vec<&str> = text.split_whitespace().map(|w| w.trim_end_matches([',', ':', ')', ';'])).collect();
    let unit = |w: &str| ["KiB", "MiB", "GiB", "TiB", "PiB"].into_iter().find(|u| w.ends_with(u)).map(str::len);
    (0..words.len())
        .filter(|&i| match unit(words[i]) {
            Some(n) if words[i].len() > n => words[i][..words[i].len() - n].parse::<f64>().is_ok(),
            Some(_) => i > 0 && words[i - 1].parse::<f64>().is_ok(),
            None => false,
        })
        .count()
}

/// Whether this build has the workload `kind` (`fsarena help KIND` succeeds).
fn fsarena_has(kind: &str) -> bool {
    fsarena().args(["help", kind]).bounded_output().unwrap().status.success()
}

#[test]
fn suite_show_prints_the_file_the_plans_and_the_before_after_commands() {
    let scratch = TempDir::new();
    let out = fsarena()
        .args(["suite", "show", "dbfs", "--workdir", &format!("{}/work", scratch.0)])
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("# suites/dbfs.toml (study 000)\n"), "{text}");
    assert!(text.contains("--name before") && text.contains("--name after"), "{text}");
    assert!(text.contains("fsarena report before after"), "{text}");
    for scale in ["smoke", "quick", "full"] {
        assert!(text.contains(&format!("# plan at --scale {scale}\n")), "{text}");
    }
    assert!(text.contains("# plan at --scale smoke\n#   budget: 45 s of run time (fsarena demo"), "{text}");
    // crash records the fuse2fs contenders (at file level) and the kernel's ext4 alike.
    assert!(text.contains("crash: ") && !text.contains("skipped crash"), "{text}");
    // Smoke and quick always plan here; full may be refused for disk room alone.
    assert!(text.matches("#   duration: ").count() >= 2, "{text}");
    // The study's figures and tables, in its order, each with the claims about its rows.
    let figures =
        text.split("# the study's figures and tables, in its order (6)\n").nth(1).unwrap_or_else(|| panic!("{text}"));
    let ids: Vec<&str> = figures
        .lines()
        .take_while(|l| !l.starts_with("# plan at"))
        .filter_map(|l| l.strip_prefix("#   ").filter(|l| !l.starts_with(' '))?.split(": ").next())
        .collect();
    assert_eq!(ids, ["pjdfstest", "mdtest", "fio-1job", "fio-1job-4jobs", "fio-4jobs", "filebench"], "{text}");
    assert!(
        figures.contains(
            "#   fio-1job: Fig. fio-test-1job: 4 fio modes × filesystems, 1 MiB, one job [bars]\n#     rows fio-1job · x rw · series target · metric write_bw|read_bw\n#     claim: "
        ),
        "{text}"
    );
    // The file shown is the file shipped, and the whole output is a file `run` takes.
    assert!(text.contains(include_str!("../suites/dbfs.toml")));
    let copy = format!("{}/dbfs.toml", scratch.0);
    std::fs::create_dir_all(&scratch.0).unwrap();
    std::fs::write(&copy, &text).unwrap();
    let out = fsarena()
        .args(["run", &copy, "--scale", "smoke", "--skip-unavailable", "--dry-run", "--workdir"])
        .arg(format!("{}/work", scratch.0))
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("skipped row crash") || fsarena_has("crash"), "{}", stdout(&out));
}

#[test]
fn unknown_suites_and_misplaced_flags_are_bad_input() {
    let out = fsarena().args(["suite", "run", "roundpu", "--dry-run"]).bounded_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no suite 'roundpu': did you mean 'roundup'?"), "{}", stderr(&out));
    let dir = Scratch::new("suite-flags");
    let out = run(&["run", "--target", &dir.spec(), "--workload", "io:size=1m", "--scale", "quick", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--scale sizes an experiment file or a suite"), "{}", stderr(&out));
    let out = run(&["run", "--add-target", &dir.spec(), "--workload", "io:size=1m", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--add-target adds to an experiment file's targets"), "{}", stderr(&out));
}

/// An experiment of two directories, one row at every scale, a row of a workload this build
/// lacks, and claims.
fn experiment(a: &Scratch, b: &Scratch) -> String {
    format!(
        r#"
name = "twodirs"
targets = ["dir:path={},label=a", "dir:path={},label=b"]
[[workload]]
row = "writes"
title = "sequential writes"
chart = "bars"
metrics = ["write_bw"]
kind = "io"
rw = "write"
size = "64m"
[workload.quick]
reason = "a quarter"
size = "16m"
[workload.smoke]
reason = "a sixteenth"
size = "4m"
[[workload]]
row = "servers"
kind = "pgbench-not-built"
[[claim]]
text = "a writes faster than b"
row = "writes"
metric = "write_bw"
better = "a"
worse = "b"
[[claim]]
text = "c writes faster than a"
row = "writes"
metric = "write_bw"
better = "c"
worse = "a"
"#,
        a.path.display(),
        b.path.display()
    )
}

#[test]
fn an_experiment_file_runs_at_a_scale_with_findings_and_skipped_rows() {
    let (a, b, files) = (Scratch::new("exp-rows-a"), Scratch::new("exp-rows-b"), Scratch::new("exp-rows-file"));
    let path = files.path.join("exp.toml");
    std::fs::write(&path, experiment(&a, &b)).unwrap();
    let path = path.display().to_string();
    // Without --skip-unavailable a workload this build lacks is bad input, as ever.
    let out = run(&["run", &path, "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("pgbench-not-built"), "{}", stderr(&out));
    // With it, the row is skipped and listed; the smoke scale writes 4 MiB.
    let db = format!("{}/runs.db", files.path.display());
    let out =
        run(&["run", &path, "--skip-unavailable", "--scale", "smoke", "--repeat", "3", "--db", &db, "--name", "exp"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Findings (twodirs, scale smoke"), "{text}");
    assert!(text.contains("[not tested here] c writes faster than a"), "{text}");
    assert!(text.contains("no target c in this run"), "{text}");
    assert!(text.contains("row servers: workload `pgbench-not-built` is not in this build"), "{text}");
    assert!(stderr(&out).contains("skipping row servers"), "{}", stderr(&out));
    // One of the four verdicts for the claim between the two directories, with its figures.
    assert!(text.contains("a over b: "), "{text}");
    // What the row cost here: its 2 results (a and b), every round counted.
    assert!(text.contains("Time here per row"), "{text}");
    assert!(text.contains("sequential writes: ") && text.contains("(2 result(s) on 2 target(s))"), "{text}");
    // The report of the stored run, as Chromium renders it: the Findings with the claims'
    // verdicts, the skipped row listed, every chart drawing something, no script.
    let page = files.path.join("report.html");
    let out = crate::util::fsarena().args(["report", "exp", "--db", &db, "-o"]).arg(&page).bounded_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dom = crate::util::chromium_dom(&page);
    assert!(dom.contains("Findings") && dom.contains("c writes faster than a"), "{dom}");
    assert!(dom.contains("not tested here") && dom.contains("pgbench-not-built"), "{dom}");
    let charts: Vec<&str> = dom.split("<svg class=\"chart\"").skip(1).collect();
    assert!(!charts.is_empty(), "no chart in the rendered report");
    for chart in &charts {
        let body = &chart[..chart.find("</svg>").unwrap_or(chart.len())];
        assert!(["<path", "<rect", "<line"].iter().any(|s| body.contains(s)), "a chart draws nothing: {body}");
    }
    assert!(!dom.contains("<script"), "the report has a script");
    // The stored run kept each row's time: the heading and the Findings table say it.
    assert!(dom.contains("ran here in ") && dom.contains("Time here per row"), "{dom}");
    let v =
        json(&run(&["run", &path, "--skip-unavailable", "--scale", "smoke", "--output-format", "json", "--no-store"]));
    let params = &v["run"]["results"][0]["workload"]["params"];
    assert_eq!(params["size"], "4m", "{params}");
}

/// Full is the study's scale: kv's plan holds the study's 50,000,000 keys on images sized for
/// them, and a machine without that room refuses it naming the sizes, never a smaller plan.
#[test]
fn full_is_the_studys_plan_or_a_refusal_naming_its_sizes() {
    let scratch = TempDir::new();
    let workdir = format!("{}/work", scratch.0);
    let out = fsarena()
        .args(["suite", "run", "kv", "--scale", "full", "--dry-run", "--workdir", &workdir])
        .bounded_output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    match out.status.code() {
        Some(0) => assert!(text.contains("num=50000000") && text.contains("size=1700g"), "{text}"),
        _ => {
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.contains("its 1.7TiB image does not fit the ") && sizes_in(&err) == 2, "{err}");
        }
    }
    // suite show lists the values chosen where the study gives none, and the rows' metrics.
    let shown = stdout(&fsarena().args(["suite", "show", "roundup", "--workdir", &workdir]).bounded_output().unwrap());
    assert!(
        shown.contains("# chosen here, where the study gives no value")
            && shown.contains("#   dbench: 600 s, dbench's own default run time"),
        "{shown}"
    );
}

/// The `chosen = "..."` texts of a suite file's rows, with their row ids.
fn chosen_texts(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut row = String::new();
    for line in text.lines().map(str::trim) {
        if let Some(r) = line.strip_prefix("row = \"").and_then(|r| r.strip_suffix('"')) {
            row = r.to_string();
        }
        if let Some(c) = line.strip_prefix("chosen = \"").and_then(|c| c.strip_suffix('"')) {
            out.push((row.clone(), c.to_string()));
        }
    }
    out
}

/// The `row = "..."` ids of a suite file.
fn row_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("row = \""))
        .filter_map(|r| r.strip_suffix('"'))
        .map(String::from)
        .collect()
}

#[test]
fn docs_studies_maps_every_study_row_to_a_suite_row_and_back() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/studies.md")).unwrap();
    let mut suite_rows: Vec<String> = Vec::new();
    for name in suites() {
        let text = std::fs::read_to_string(root.join(format!("suites/{name}.toml"))).unwrap();
        suite_rows.extend(row_ids(&text).into_iter().map(|r| format!("{name}/{r}")));
    }
    // The map's lines: | study row | what | `suite/row`, ... | why |
    // (Only that section's: the comparative statements' counts are `| 000 | ...` lines too.)
    let section = doc.split("## Every experiment row, mapped").nth(1).unwrap_or("");
    let section = section.split("\n## ").next().unwrap_or("");
    let lines: Vec<&str> = section.lines().filter(|l| l.starts_with("| 00")).collect();
    let mut mapped: Vec<String> = Vec::new();
    for line in &lines {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let targets: Vec<String> =
            cells[3].split(',').map(|c| c.trim().trim_matches('`').to_string()).filter(|c| !c.is_empty()).collect();
        assert!(!targets.is_empty(), "a study row without a suite row: {line}");
        for t in targets {
            assert!(suite_rows.contains(&t), "{t} (in docs/studies.md) is no suite row: {suite_rows:?}");
            mapped.push(t);
        }
        assert!(!cells[4].is_empty(), "say what was scaled and why: {line}");
    }
    for study in ["000", "001", "002", "003", "004"] {
        assert!(lines.iter().any(|l| l.starts_with(&format!("| {study}-"))), "study {study} has no row in the map");
    }
    // Every value a suite chose where its study gives none is listed, word for word.
    for name in suites() {
        let text = std::fs::read_to_string(root.join(format!("suites/{name}.toml"))).unwrap();
        for (row, chosen) in chosen_texts(&text) {
            assert!(
                doc.contains(&format!("| `{name}/{row}` | {chosen} |")),
                "docs/studies.md does not list {name}/{row}'s chosen = \"{chosen}\""
            );
        }
    }
    // Every suite row is in the map, or named as one beyond the studies.
    for row in &suite_rows {
        assert!(
            mapped.contains(row) || doc.contains(&format!("Suite rows beyond the studies: `{row}`")),
            "suite row {row} is not in docs/studies.md"
        );
    }
}

/// Regression: the dbfs suite's posix row beside its measurements ran once per repetition,
/// and the second run found the first one's fixtures ("File exists"): a check whose verdicts
/// do not vary runs once in a plan of measurements.
#[test]
fn a_check_beside_measurements_runs_once() {
    let dir = Scratch::new("check-once");
    let v = json(&run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "posix:family=chmod",
        "--workload",
        "io:rw=write,size=1m",
        "--repeat",
        "2",
        "--warmup",
        "1",
        "--output-format",
        "json",
        "--no-store",
    ]));
    let results = v["run"]["results"].as_array().unwrap();
    let reps = |kind: &str| {
        results.iter().find(|r| r["workload"]["kind"] == kind).unwrap()["metrics"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()["values"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(reps("io"), 2);
    assert_eq!(reps("posix"), 1);
}

/// A suite none of whose targets this machine can provision stops with the reason (exit 2),
/// as client-scaling does without glusterfs-server; here with a kind the kernel lacks in place
/// of its glusterfs target.
#[test]
fn a_suite_without_a_target_it_can_provision_says_why_and_stops() {
    let lacking = ["f2fs", "nilfs2"]
        .into_iter()
        .find(|kind| !std::fs::read_to_string("/proc/filesystems").unwrap().lines().any(|l| l.ends_with(kind)));
    let Some(kind) = lacking else { return };
    let scratch = TempDir::new();
    let out = fsarena()
        .args(["suite", "run", "client-scaling", "--target", kind, "--workdir", &format!("{}/work", scratch.0)])
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("suite client-scaling: none of its targets can be provisioned here"), "{err}");
    assert!(err.contains(&format!("{kind}: the kernel lacks {kind}")), "{err}");
    assert!(!std::path::Path::new(&format!("{}/work", scratch.0)).exists(), "nothing is created");
}

/// The captions of the `[[figure]]`s of a suite file, in its order.
fn figure_captions(text: &str) -> Vec<String> {
    let figures = text.split("# The study's figures and tables, in its order.").nth(1).unwrap_or_default();
    figures
        .lines()
        .filter_map(|l| l.strip_prefix("caption = \""))
        .map(|c| c.trim_end_matches('"').replace("\\\"", "\""))
        .collect()
}

/// A suite's report leads with the study's figures, in the suite's order, each drawn (its
/// chart or table) under its caption, as Chromium renders it; the rows' detail follows folded.
/// dbfs at smoke: the cheapest suite whose figures cover grouped bars, facets and tables.
#[test]
fn a_suites_report_shows_the_studys_figures_in_its_order() {
    let scratch = Scratch::new("suite-figures");
    let wd = crate::util::TestWorkdir::new("suite-figures");
    let db = format!("{}/runs.db", scratch.path.display());
    let out = run(&["suite", "run", "dbfs", "--scale", "smoke", "--db", &db, "--name", "figs", "--workdir", &wd.arg()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = scratch.path.join("report.html");
    let out = crate::util::fsarena().args(["report", "figs", "--db", &db, "-o"]).arg(&page).bounded_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dom = crate::util::chromium_dom(&page);
    assert!(dom.trim_end().ends_with("</html>") && !dom.contains("<script"), "{dom}");
    let captions = figure_captions(include_str!("../suites/dbfs.toml"));
    assert_eq!(captions.len(), 6);
    let shown: Vec<String> = dom
        .split("<h2 class=\"caption\">")
        .skip(1)
        .map(|s| s[..s.find("</h2>").unwrap()].replace("&amp;", "&"))
        .collect();
    assert_eq!(shown, captions, "the figures in the suite's order");
    // Each figure draws its results: a chart that draws something, or a table with lines.
    let figures = &dom[dom.find("class=\"study-figure\"").unwrap()..dom.find("id=\"findings\"").unwrap()];
    for (section, caption) in figures.split("class=\"study-figure\"").skip(1).zip(&captions) {
        let drawn = section.contains("<rect") || section.contains("<path") || section.matches("<tr>").count() > 1;
        assert!(drawn, "{caption}: nothing drawn in {section}");
    }
    assert_eq!(
        figures.matches("data-chart=\"grouped\"").count(),
        1 + 1 + 2 + 1,
        "mdtest, fio-1job, 2 facets, fio-4jobs"
    );
    // The posix row's heading counts its results, which are in the POSIX section.
    assert!(!dom.contains("no result (the run stopped before it)"), "{dom}");
    assert!(dom.contains("<details class=\"row-detail\">"), "{dom}");
}
