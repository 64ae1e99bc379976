//! The `posix` compliance workload end to end on real filesystems: the family table with the
//! targets side by side, every rmdir case passing on tmpfs and ext4, verdicts in the JSON,
//! `--posix-family`, bad families refused before anything exists, and `compare` of two stored
//! runs listing the cases that newly fail.

use crate::util::Bounded;
use crate::util::{json, run, stderr, stdout, TestWorkdir};
use serde_json::Value;

/// The verdicts of every posix result of a JSON document, as (target, case, outcome).
fn verdicts(doc: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for r in doc["run"]["results"].as_array().unwrap() {
        assert_eq!(r["workload"]["kind"], "posix", "{r}");
        for v in r["verdicts"].as_array().unwrap() {
            out.push((
                r["target"]["label"].as_str().unwrap().to_string(),
                v["case"].as_str().unwrap().to_string(),
                v["outcome"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

#[test]
fn the_family_table_puts_tmpfs_and_ext4_side_by_side_and_rmdir_passes_on_both() {
    let targets = ["--target", "tmpfs:size=64m", "--target", "ext4:size=256m"];
    let mut args = vec!["run", "--no-store"];
    args.extend(targets);
    args.extend(["--workload", "posix"]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let header = text.lines().find(|l| l.starts_with("| posix family")).unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains("tmpfs:size=64m") && header.contains("ext4:size=256m"), "{header}");
    for row in ["| rmdir ", "| total ", "| security "] {
        assert!(text.lines().any(|l| l.starts_with(row)), "{row}: {text}");
    }

    args.extend(["--output-format", "json"]);
    let doc = json(&run(&args));
    let all = verdicts(&doc);
    let families: Vec<&str> =
        doc["run"]["results"].as_array().unwrap().iter().filter_map(|r| r["workload"]["part"].as_str()).collect();
    assert!(families.contains(&"rmdir"), "{families:?}");
    // Every family row of the table is a family of the JSON.
    for f in &families {
        assert!(text.lines().any(|l| l.starts_with(&format!("| {f} "))), "{f}: {text}");
    }
    for target in ["tmpfs:size=64m", "ext4:size=256m"] {
        let rmdir: Vec<_> = all.iter().filter(|(t, c, _)| t == target && c.starts_with("rmdir.")).collect();
        assert!(rmdir.len() >= 5, "{target}: {rmdir:?}");
        for (_, case, outcome) in rmdir {
            assert_eq!(outcome, "pass", "{target}: {case}");
            assert_eq!(case.split('.').count(), 3, "{case}");
        }
    }
}

#[test]
fn posix_family_runs_only_those_and_bad_families_exit_2_before_anything_exists() {
    let out = run(&[
        "run",
        "--no-store",
        "--target",
        "tmpfs:size=64m",
        "--workload",
        "posix",
        "--posix-family",
        "rmdir",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = verdicts(&json(&out));
    assert!(!all.is_empty());
    assert!(all.iter().all(|(_, c, _)| c.starts_with("rmdir.")), "{all:?}");

    let wd = TestWorkdir::new("posix-bad");
    for (args, want) in [
        (vec!["--workload", "posix", "--posix-family", "rmdir,nosuch"], "'nosuch' is not a posix family"),
        (vec!["--workload", "posix:family=nosuch"], "'nosuch' is not a posix family"),
        (vec!["--workload", "posix:case=nosuch.*"], "matches no case"),
        (vec!["--workload", "io:rw=read,size=1m", "--posix-family", "rmdir"], "--posix-family chooses"),
    ] {
        let mut full = vec!["run", "--no-store", "--workdir", wd.path.to_str().unwrap(), "--target", "ext4:size=256m"];
        full.extend(&args);
        let out = run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!wd.path.exists(), "nothing created for {args:?}: {:?}", wd.leftovers());
    }
}

#[test]
fn compare_lists_the_cases_newly_failing_between_two_stored_runs() {
    // Run A is the kernel's ext4, run B the same format through fuse2fs, both labelled `fs`:
    // two implementations of one filesystem, as "before" and "after" of a build. fuse2fs
    // deviates (its mount refuses other users, its long names say ENOENT), so cases that pass
    // in A fail in B; the comparison must list exactly those.
    let dir = crate::util::Scratch::under("/tmp", "posix-compare");
    let db = dir.path.join("results.db").display().to_string();
    let mut docs = Vec::new();
    for (name, target) in [("kernel", "ext4:size=256m,label=fs"), ("fuse", "fuse2fs:size=256m,label=fs")] {
        let out = run(&[
            "run",
            "--db",
            &db,
            "--name",
            name,
            "--target",
            target,
            "--workload",
            "posix:family=chmod",
            "--output-format",
            "json",
        ]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        docs.push(verdicts(&json(&out)));
    }
    let outcome = |side: &[(String, String, String)], case: &str| {
        side.iter().find(|(_, c, _)| c == case).map(|(_, _, o)| o.clone())
    };
    let mut want: Vec<String> = docs[1]
        .iter()
        .filter(|(_, c, o)| o == "fail" && matches!(outcome(&docs[0], c).as_deref(), Some("pass" | "unsupported")))
        .map(|(_, c, _)| c.clone())
        .collect();
    want.sort();
    assert!(!want.is_empty(), "fuse2fs passed every chmod case ext4 passes: pick another honest difference");

    let cmp = run(&["compare", "kernel", "fuse", "--db", &db, "--output-format", "json"]);
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    let c = json(&cmp);
    let posix = c["posix"].as_array().unwrap();
    assert_eq!(posix.len(), 1, "one target, one family: {posix:?}");
    assert_eq!((posix[0]["target"].as_str(), posix[0]["family"].as_str()), (Some("fs"), Some("chmod")));
    let mut got: Vec<String> =
        posix[0]["newly_failing"].as_array().unwrap().iter().map(|v| v["case"].as_str().unwrap().to_string()).collect();
    got.sort();
    assert_eq!(got, want);
    assert!(c["comparisons"].as_array().unwrap().iter().all(|r| r["workload"] != "posix:family=chmod"));

    let human = run(&["compare", "kernel", "fuse", "--db", &db]);
    let text = stdout(&human);
    assert!(text.contains("| posix family") && text.contains(&format!("newly failing on fs: {}", want[0])), "{text}");
    // A case that passed and now fails is a regression for --fail-on-regression.
    let gate = run(&["compare", "kernel", "fuse", "--db", &db, "--fail-on-regression", "50"]);
    assert_eq!(gate.status.code(), Some(1), "{}", stderr(&gate));
    assert!(stderr(&gate).contains("posix case(s) newly failing"), "{}", stderr(&gate));

    let report = dir.path.join("r.html");
    let out = run(&["report", "kernel", "fuse", "--db", &db, "-o", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<section id=\"posix\">") && html.contains(&want[0]), "table and failures in the report");
}

#[test]
fn a_plan_of_checks_only_runs_once_and_a_plan_with_a_benchmark_repeats() {
    // fsarena() directly: util's run() adds --repeat 1 --warmup 0. A dry run creates nothing.
    let plan = |extra: &[&str]| {
        let out = crate::util::fsarena()
            .args(["run", "--dry-run", "--workdir", "/tmp/fsarena-posix-dry-run-unused", "--target", "tmpfs:size=64m"])
            .args(extra)
            .bounded_output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let once = plan(&["--workload", "posix"]);
    assert!(once.contains("; 0 warm-up + 1 measured repetition(s) each"), "{once}");
    let told = plan(&["--repeat", "2", "--workload", "posix"]);
    assert!(told.contains(" + 2 measured repetition(s) each"), "{told}");
    let mixed = plan(&["--workload", "posix:family=rmdir", "--workload", "io:rw=read,size=1m"]);
    assert!(mixed.contains("; 1 warm-up + 3 measured repetition(s) each"), "{mixed}");
    assert!(!std::path::Path::new("/tmp/fsarena-posix-dry-run-unused").exists(), "a dry run creates nothing");
}
