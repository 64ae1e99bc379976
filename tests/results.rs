//! Repetitions, the store, comparisons and reports, end to end.

use crate::util::{json, run, stderr, stdout, Scratch};

fn db(name: &str) -> (Scratch, String) {
    let dir = Scratch::under("/tmp", name);
    let path = dir.path.join("results.db").display().to_string();
    (dir, path)
}

fn run_stored(target: &Scratch, db: &str, workload: &str) -> std::process::Output {
    let out = run(&[
        "run",
        "--db",
        db,
        "--target",
        &target.spec(),
        "--workload",
        workload,
        "--repeat",
        "3",
        "--warmup",
        "1",
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn repetitions_are_summarised_stored_compared_and_reported() {
    let (dir, db) = db("results");
    let target = Scratch::new("results-target");
    let w = "io:rw=randread,bs=4k,size=8m";
    let first = json(&run_stored(&target, &db, w));
    let iops = &first["run"]["results"][0]["metrics"]["read_iops"];
    assert_eq!(iops["values"].as_array().unwrap().len(), 3, "three measured repetitions, the warm-up discarded");
    assert!(iops["ci95"][0].as_f64().unwrap() <= iops["mean"].as_f64().unwrap());
    assert!(iops["cv"].as_f64().is_some() && iops["outliers"].is_array());
    run_stored(&target, &db, w);

    let list = run(&["results", "list", "--db", &db, "--output-format", "json"]);
    let runs = json(&list)["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["complete"], true);
    let newest = runs[0]["id"].as_str().unwrap().to_string();

    let show = run(&["results", "show", "last", "--db", &db, "--output-format", "json"]);
    assert_eq!(json(&show)["run"]["id"], newest.as_str());
    let csv = stdout(&run(&["results", "export", &newest[..8.min(newest.len())], "--db", &db, "--format", "csv"]));
    assert!(csv.starts_with("run_id,target,workload,metric,unit,repetition,value"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",read_iops,")).count(), 3);
    let md = stdout(&run(&["results", "export", "last", "--db", &db, "--format", "md"]));
    assert!(md.contains("| read\\_iops"), "{md}");

    let cmp = run(&["compare", "last~1", "last", "--db", &db, "--output-format", "json"]);
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    let rows = json(&cmp)["comparisons"].as_array().unwrap().clone();
    let row = rows.iter().find(|r| r["metric"] == "read_iops").unwrap();
    assert!(row["p_value"].as_f64().unwrap() >= 0.0 && row["p_value"].as_f64().unwrap() <= 1.0);
    assert!(["faster", "slower", "no significant difference"].contains(&row["verdict"].as_str().unwrap()));
    let human = stdout(&run(&["compare", "last~1", "last", "--db", &db]));
    assert!(human.contains("read_iops") && human.contains("verdict"), "{human}");

    let html = dir.path.join("r.html");
    let out = run(&["report", "last~1", "last", "--db", &db, "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<svg class=\"chart\""));
    let md = dir.path.join("r.md");
    assert!(run(&["report", "last", "--db", &db, "-o", md.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&md).unwrap();
    let svg = text.split("![").nth(1).and_then(|s| s.split("](").nth(1)).and_then(|s| s.split(')').next()).unwrap();
    assert!(dir.path.join(svg).exists(), "the Markdown's chart {svg} is written beside it");

    let rm = run(&["results", "rm", "last", "--db", &db]);
    assert!(rm.status.success());
    let runs =
        json(&run(&["results", "list", "--db", &db, "--output-format", "json"]))["runs"].as_array().unwrap().len();
    assert_eq!(runs, 1);
}

#[test]
fn bad_store_input_exits_2_with_one_line() {
    let (dir, db) = db("results-bad");
    let target = Scratch::new("results-bad-target");
    run_stored(&target, &db, "io:rw=read,size=1m");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["results".into(), "show".into(), "nosuchrun".into(), "--db".into(), db.clone()], "nosuchrun"),
        (vec!["compare".into(), "last".into(), "zzz".into(), "--db".into(), db.clone()], "zzz"),
        (
            vec![
                "report".into(),
                "last".into(),
                "--db".into(),
                db.clone(),
                "-o".into(),
                "/nonexistent-dir/r.html".into(),
            ],
            "does not exist",
        ),
        (vec!["report".into(), "last".into(), "--db".into(), db.clone(), "-o".into(), "r.pdf".into()], ".html or .md"),
        (
            vec!["compare".into(), "last".into(), "--baseline".into(), "nope".into(), "--db".into(), db.clone()],
            "--baseline 'nope'",
        ),
        (
            vec![
                "results".into(),
                "export".into(),
                "last".into(),
                "--format".into(),
                "xml".into(),
                "--db".into(),
                db.clone(),
            ],
            "xml",
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want) && stderr(&out).trim().lines().count() == 1, "{args:?}: {}", stderr(&out));
    }
    let foreign = dir.path.join("foreign.db");
    std::fs::write(&foreign, b"not a database at all, not even close....................................").unwrap();
    let out = run(&["results", "list", "--db", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(&["run", "--db", foreign.to_str().unwrap(), "--target", &target.spec(), "--workload", "io:size=1m"]);
    assert_eq!(out.status.code(), Some(2), "a foreign database is refused before anything runs: {}", stderr(&out));
}

#[test]
fn fail_on_regression_exits_1_on_a_significant_slowdown() {
    let (_dir, db) = db("results-regress");
    let fast = Scratch::new("results-regress-fast");
    // One run, two targets: a tmpfs directory and fuse2fs, far slower at 4 KiB random reads.
    let out = run(&[
        "run",
        "--db",
        &db,
        "--target",
        &format!("{},label=fast", fast.spec()),
        "--target",
        "fuse2fs:size=64m,label=slow",
        "--workload",
        "io:rw=randread,bs=4k,size=4m,direct=1,time_based=1,runtime=300ms",
        "--repeat",
        "3",
        "--warmup",
        "0",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["compare", "last", "--baseline", "fast", "--db", &db, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = json(&out)["comparisons"].as_array().unwrap().clone();
    let iops = rows.iter().find(|r| r["metric"] == "read_iops").unwrap();
    assert_eq!((iops["target"].as_str(), iops["verdict"].as_str()), (Some("slow"), Some("slower")), "{iops}");
    let out = run(&["compare", "last", "--baseline", "fast", "--db", &db, "--fail-on-regression", "20"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("regression"), "{}", stderr(&out));
    let out = run(&["compare", "last", "--baseline", "slow", "--db", &db, "--output-format", "json"]);
    let rows = json(&out)["comparisons"].as_array().unwrap().clone();
    let iops = rows.iter().find(|r| r["metric"] == "read_iops").unwrap();
    assert_eq!(iops["verdict"], "faster", "{iops}");
}

#[test]
fn a_sigkilled_run_keeps_its_finished_repetitions_in_a_sound_database() {
    let (dir, db) = db("results-kill");
    let target = Scratch::new("results-kill-target");
    let workdir = crate::util::TempDir::new();
    let mut child = crate::util::fsarena()
        .args(["run", "--db", &db, "--target", &target.spec(), "--workdir", &workdir.0])
        .args([
            "--workload",
            "io:rw=randread,bs=4k,size=4m,time_based=1,runtime=400ms",
            "--repeat",
            "20",
            "--warmup",
            "0",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let store = fsarena_store::Store::open(std::path::Path::new(&db)).unwrap();
    let runs = store.list(None).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(!runs[0].complete, "a killed run is marked incomplete");
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let report = store.load(&runs[0].id).unwrap();
    let done = report.results[0].measurements.len();
    assert!((1..20).contains(&done), "the finished repetitions are kept: {done}");
    assert!(report.results[0].measurements.iter().all(|m| m.metric("read_iops").is_some()));
    drop(store);
    let out = run(&["results", "show", "last", "--db", &db, "--output-format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["run"]["complete"], false);
    drop(dir);
}

/// Regression: runs started together on a new database took it, half made, for a foreign file
/// (exit 2) or failed to switch it to WAL ("database is locked").
#[test]
fn concurrent_runs_share_a_new_database() {
    let (_dir, db) = db("results-concurrent");
    let target = Scratch::new("results-concurrent-target");
    let workdirs: Vec<crate::util::TempDir> = (0..6).map(|_| crate::util::TempDir::new()).collect();
    let children: Vec<_> = workdirs
        .iter()
        .map(|workdir| {
            crate::util::fsarena()
                .args(["run", "--db", &db, "--target", &target.spec(), "--workload", "io:rw=write,size=1m"])
                .args(["--repeat", "1", "--warmup", "0", "--workdir", &workdir.0])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs =
        json(&run(&["results", "list", "--db", &db, "--output-format", "json"]))["runs"].as_array().unwrap().len();
    assert_eq!(runs, 6);
}
