//! Rows, sweeps and A/B in the reports of real runs: results are never merged, each is
//! labelled by what varies, sweeps become line charts, and two runs get an A/B section.

use crate::util::{json, run, stderr, stdout, Scratch};

fn run_ok(args: &[&str]) -> std::process::Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    out
}

/// The table rows of `text` whose first column (the result) is `label`.
fn rows_starting(text: &str, label: &str) -> usize {
    text.lines().filter(|l| l.starts_with(&format!("| {label} "))).count()
}

/// Regression: a fio file with four stonewalled jobs showed one merged table (the entries had
/// the same workload title, so they collapsed into one row set of mixed reads).
#[test]
fn a_four_job_fio_file_gives_four_rows() {
    let dir = Scratch::new("reports-fio4");
    let fio = dir.path.join("four.fio");
    std::fs::write(
        &fio,
        "[global]\nsize=1m\nbs=4k\n\n[seqwrite]\nrw=write\nstonewall\n\n[seqread]\nrw=read\nstonewall\n\n\
         [randwrite]\nrw=randwrite\nstonewall\n\n[randread]\nrw=randread\nstonewall\n",
    )
    .unwrap();
    let target = Scratch::new("reports-fio4-target");
    let common = ["run", "--no-store", "--target", &target.spec(), "--fio", fio.to_str().unwrap(), "--repeat", "1"];
    let text = stdout(&run_ok(&[&common[..], &["--warmup", "0"]].concat()));
    for job in ["seqwrite", "seqread", "randwrite", "randread"] {
        assert_eq!(rows_starting(&text, job), 1, "one row set per job, labelled {job}:\n{text}");
    }
    let table = &text[text.find("| result").expect("a comparison table")..];
    // The read jobs show read figures only, the write jobs write figures only.
    let seqread = &table[table.find("| seqread ").unwrap()..table.find("| randwrite ").unwrap()];
    assert!(seqread.contains("read_iops") && !seqread.contains("write_iops"), "{seqread}");
    let doc = json(&run_ok(&[&common[..], &["--warmup", "0", "--output-format", "json"]].concat()));
    let parts: Vec<&str> =
        doc["run"]["results"].as_array().unwrap().iter().map(|r| r["workload"]["part"].as_str().unwrap()).collect();
    assert_eq!(parts, ["seqwrite", "seqread", "randwrite", "randread"]);
}

/// A small numjobs sweep on two targets: one row set per point, one sweep chart per headline
/// rate; two named runs give an A/B section in the report and the same rows in `compare`.
#[test]
fn a_sweep_gives_rows_per_point_a_sweep_chart_and_ab() {
    let dir = Scratch::new("reports-sweep");
    let db = dir.path.join("r.db");
    let db = db.to_str().unwrap();
    let (a, b) = (Scratch::new("reports-sweep-a"), Scratch::new("reports-sweep-b"));
    let (ta, tb) = (format!("{},label=a", a.spec()), format!("{},label=b", b.spec()));
    for name in ["before", "after"] {
        let out = run_ok(&[
            "run",
            "--db",
            db,
            "--name",
            name,
            "--target",
            &ta,
            "--target",
            &tb,
            "--workload",
            "io:rw=read,bs=4k,size=1m,numjobs='1,2'",
            "--repeat",
            "2",
            "--warmup",
            "0",
        ]);
        let text = stdout(&out);
        assert!(text.contains("every result: io: rw=read, bs=4k, size=1m"), "{text}");
        assert_eq!(rows_starting(&text, "numjobs=1"), 1, "{text}");
        assert_eq!(rows_starting(&text, "numjobs=2"), 1, "{text}");
        let header = text.lines().find(|l| l.starts_with("| result")).unwrap();
        assert!(header.contains(" a |") && header.contains(" b |"), "{header}");
    }
    let html = dir.path.join("r.html");
    run_ok(&["report", "before", "after", "--db", db, "-o", html.to_str().unwrap()]);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("A/B: before → after"), "an A/B section");
    assert!(text.contains("<th>verdict</th>"));
    // read_iops and read_bw are proportional at a fixed bs: one headline chart.
    assert_eq!(text.matches("data-chart=\"sweep\"").count(), 1);
    assert!(text.contains("numjobs sweep · rw=read") || text.contains("numjobs sweep · io"), "a sweep section");
    let cmp = run_ok(&["compare", "before", "after", "--db", db, "--output-format", "json"]);
    let rows = json(&cmp)["comparisons"].as_array().unwrap().clone();
    let results: Vec<&str> =
        rows.iter().filter(|r| r["metric"] == "read_iops").map(|r| r["result"].as_str().unwrap()).collect();
    assert_eq!(results, ["numjobs=1", "numjobs=1", "numjobs=2", "numjobs=2"], "per point and target");
    // Two repetitions a side: too few to tell, so no verdict and no interval, only the change.
    assert!(rows.iter().all(|r| r["verdict"] == "not tested" && r["ci95_factor"].is_null()), "{rows:?}");
    let md = dir.path.join("r.md");
    run_ok(&["report", "before", "after", "--db", db, "-o", md.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&md).unwrap().contains("## A/B: before → after"));
}
