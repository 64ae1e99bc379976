//! The experiment model end to end: sweeps, one result per fio job, TOML experiment files.

use crate::util::Bounded;
use crate::util::{fsarena, json, run, stderr, stdout, Scratch, TempDir};

fn run_ok(args: &[&str]) -> std::process::Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    out
}

/// `(part, point as "k=v k=v")` of every result, in order.
fn keys(v: &serde_json::Value) -> Vec<(Option<String>, String)> {
    v["run"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let point = r["workload"]["point"].as_object().map_or(String::new(), |p| {
                p.iter().map(|(k, v)| format!("{k}={}", v["given"].as_str().unwrap())).collect::<Vec<_>>().join(" ")
            });
            (r["workload"]["part"].as_str().map(String::from), point)
        })
        .collect()
}

#[test]
fn lists_sweep_their_product_in_order_each_point_its_own_result() {
    let dir = Scratch::new("sweep");
    let v = json(&run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw='read,randwrite',numjobs='1,2',size=1m,bs=64k",
        "--output-format",
        "json",
        "--no-store",
    ]));
    let points: Vec<String> = keys(&v).into_iter().map(|(_, p)| p).collect();
    assert_eq!(points, ["rw=read numjobs=1", "rw=read numjobs=2", "rw=randwrite numjobs=1", "rw=randwrite numjobs=2"]);
    let results = v["run"]["results"].as_array().unwrap();
    // Each point ran with its own value: numjobs=2 moves twice the bytes of numjobs=1.
    let bytes = |i: usize, d: &str| {
        results[i]["jobs"].as_array().unwrap().iter().map(|j| j[d]["io_bytes"].as_u64().unwrap()).sum::<u64>()
    };
    assert_eq!(bytes(0, "read"), 1 << 20);
    assert_eq!(bytes(1, "read"), 2 << 20);
    assert_eq!(bytes(3, "write"), 2 << 20);
    assert_eq!(results[1]["workload"]["point"]["numjobs"]["number"], 2.0);
    assert_eq!(results[1]["workload"]["params"]["numjobs"], "2");
}

#[test]
fn fios_comma_valued_keys_keep_their_meaning_and_sweep_with_a_bar() {
    let dir = Scratch::new("sweep-bs");
    // bs=4k,64k is fio's read size and write size: one result.
    let v = json(&run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw=randrw,bs='4k,64k',size=1m",
        "--output-format",
        "json",
        "--no-store",
    ]));
    assert_eq!(keys(&v).len(), 1);
    let v = json(&run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw=read,bs='4k|64k',size=1m",
        "--output-format",
        "json",
        "--no-store",
    ]));
    let points: Vec<String> = keys(&v).into_iter().map(|(_, p)| p).collect();
    assert_eq!(points, ["bs=4k", "bs=64k"]);
    assert_eq!(v["run"]["results"][1]["workload"]["point"]["bs"]["number"], 65536.0);
}

#[test]
fn a_four_job_fio_file_gives_four_results_and_group_reporting_one_per_group() {
    let dir = Scratch::new("parts");
    let jobs = Scratch::new("parts-jobs");
    let file = jobs.path.join("four.fio");
    std::fs::write(
        &file,
        "[global]\nsize=1m\nbs=64k\n[seqwrite]\nrw=write\n[seqread]\nstonewall\nrw=read\n\
         [randwrite]\nstonewall\nrw=randwrite\nbs=4k\n[randread]\nstonewall\nrw=randread\nbs=4k\n",
    )
    .unwrap();
    let out = run_ok(&[
        "run",
        "--fio",
        file.to_str().unwrap(),
        "--target",
        &dir.spec(),
        "--output-format",
        "json",
        "--no-store",
    ]);
    let v = json(&out);
    let parts: Vec<Option<String>> = keys(&v).into_iter().map(|(p, _)| p).collect();
    assert_eq!(parts, ["seqwrite", "seqread", "randwrite", "randread"].map(|p| Some(p.to_string())));
    let results = v["run"]["results"].as_array().unwrap();
    // Each result holds its own job's figures only: reads in the read jobs, writes in the write jobs.
    assert!(results[0]["metrics"]["write_iops"].is_object() && results[0]["metrics"]["read_iops"].is_null());
    assert!(results[3]["metrics"]["read_iops"].is_object() && results[3]["metrics"]["write_iops"].is_null());
    assert_eq!(results[3]["jobs"][0]["name"], "randread");

    // Two jobs in one group with group_reporting: one result, named after the first job.
    std::fs::write(&file, "[global]\nsize=1m\ngroup_reporting\n[a]\nrw=write\n[b]\nrw=read\n").unwrap();
    let v = json(&run_ok(&[
        "run",
        "--fio",
        file.to_str().unwrap(),
        "--target",
        &dir.spec(),
        "--output-format",
        "json",
        "--no-store",
    ]));
    assert_eq!(keys(&v), [(None, String::new())]);
}

#[test]
fn a_toml_experiment_holds_the_whole_run_and_is_stored_verbatim() {
    let dir = Scratch::new("exp");
    let files = Scratch::new("exp-files");
    let scratch = TempDir::new();
    let db = format!("{}/results.db", scratch.0);
    let exp = files.path.join("exp.toml");
    let text = format!(
        "name = \"exp-before\"\ndescription = \"two modes by two job counts\"\ntags = [\"study\"]\n\
         repeat = 2\nwarmup = 0\ndrop_caches = \"none\"\ntargets = [\"{}\"]\n\n\
         [[workload]]\nkind = \"io\"\nrw = [\"read\", \"write\"]\nnumjobs = [1, 2]\nsize = \"1m\"\nbs = \"64k\"\n",
        dir.spec()
    );
    std::fs::write(&exp, &text).unwrap();
    let workdir = format!("{}/work", scratch.0);
    let dry =
        fsarena().args(["run", exp.to_str().unwrap(), "--dry-run", "--workdir", &workdir]).bounded_output().unwrap();
    assert!(dry.status.success(), "{}", stderr(&dry));
    let plan = stdout(&dry);
    assert!(plan.contains("two modes by two job counts"), "{plan}");
    assert!(plan.contains("point 4/4: rw=write numjobs=2"), "{plan}");
    assert!(plan.contains("0 warm-up + 2 measured"), "{plan}");

    let out = fsarena()
        .args(["run", exp.to_str().unwrap(), "--db", &db, "--workdir", &workdir, "--output-format", "json"])
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["run"]["name"], "exp-before");
    assert_eq!(v["run"]["tags"][0], "study");
    assert_eq!(keys(&v).len(), 4);
    assert_eq!(v["run"]["results"][0]["metrics"]["read_iops"]["values"].as_array().unwrap().len(), 2);
    // Stored: found by its name, the experiment file kept verbatim in the plan.
    let shown = fsarena()
        .args(["results", "show", "exp-before", "--db", &db, "--output-format", "json"])
        .bounded_output()
        .unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let stored = json(&shown);
    assert!(stored["run"]["plan"].as_str().unwrap().contains(&text), "{}", stored["run"]["plan"]);
    assert_eq!(keys(&stored), keys(&v));
    // The command line wins over the file.
    let out = fsarena()
        .args([
            "run",
            exp.to_str().unwrap(),
            "--repeat",
            "1",
            "--no-store",
            "--workdir",
            &workdir,
            "--output-format",
            "json",
        ])
        .bounded_output()
        .unwrap();
    assert_eq!(json(&out)["run"]["results"][0]["metrics"]["read_iops"]["values"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_sweeps_and_experiment_files_are_refused_before_anything_runs() {
    let dir = Scratch::new("exp-bad");
    let files = Scratch::new("exp-bad-files");
    let bad = |args: &[&str], want: &str| {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(want), "{args:?}: wanted '{want}' in: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    };
    let t = dir.spec();
    bad(
        &["run", "--target", &t, "--workload", "io:size=1m,numjobs='1,,4'"],
        "a list needs a value between every two ','",
    );
    bad(&["run", "--target", &t, "--workload", "io:size=1m,numjobs='1,x'"], "at numjobs=x");
    bad(&["run", "--target", &t, "--workload", "io:size=1m", "--workload", "io:size=1m"], "is given twice");
    let write = |name: &str, body: &str| {
        let p = files.path.join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let f = write("a.toml", &format!("targets = [\"{t}\"]\nrepeats = 3\n"));
    bad(&["run", &f], "unknown field `repeats`");
    let f = write(
        "b.toml",
        &format!("targets = [\"{t}\"]\ndrop_caches = \"always\"\n[[workload]]\nkind = \"io\"\nsize = \"1m\"\n"),
    );
    bad(&["run", &f], "drop_caches = \"always\"");
    let f = write("c.toml", &format!("targets = [\"{t}\"]\n[[workload]]\nkind = \"io\"\nnumjobs = []\n"));
    bad(&["run", &f], "numjobs = []");
    let f = write("d.toml", &format!("targets = [\"{t}\"]\nrepeat = 0\n[[workload]]\nkind = \"io\"\nsize = \"1m\"\n"));
    bad(&["run", &f, "--repeat", "0"], "--repeat 0: expected at least 1");
    // The file's own repeat = 0, with no --repeat to override it.
    let out = fsarena().args(["run", &f, "--no-store", "--dry-run"]).bounded_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("d.toml: repeat = 0: expected at least 1"), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty());
}

#[test]
fn the_cubefs_example_reproduces_the_studys_matrix_in_one_run() {
    // The study's own file, scaled down (10 GiB and 120 s per point would take an hour):
    // every other key as the study ran it, on a real ext4 where direct I/O works.
    let files = Scratch::new("cubefs-files");
    let scratch = TempDir::new();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cubefs-fio.toml"))
        .unwrap()
        .replace("size = \"10g\"", "size = \"1m\"")
        .replace("runtime = 120", "runtime = 1");
    let exp = files.path.join("cubefs.toml");
    std::fs::write(&exp, text).unwrap();
    let db = format!("{}/results.db", scratch.0);
    let out = fsarena()
        .args(["run", exp.to_str().unwrap(), "--target", "ext4:size=300m", "--repeat", "1", "--warmup", "0"])
        .args(["--db", &db, "--workdir", &format!("{}/work", scratch.0), "--output-format", "json"])
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["run"]["name"], "cubefs-1-client");
    let points: Vec<String> = keys(&v).into_iter().map(|(_, p)| p).collect();
    assert_eq!(points.len(), 16, "{points:?}");
    assert_eq!(points[0], "numjobs=1");
    assert_eq!(points[15], "rw=randwrite numjobs=64");
    for r in v["run"]["results"].as_array().unwrap() {
        assert_eq!(r["target"]["kind"], "ext4");
        assert_eq!(r["workload"]["params"]["direct"], "1");
        assert!(r["complete"].as_bool().unwrap(), "{r}");
    }
}

#[test]
fn dd_sweeps_block_sizes_with_dds_own_comma_flags_on_a_real_filesystem() {
    // oflag='direct,dsync' is dd's two flags; bs='4k,64k' a sweep: two results, each direct
    // and durable, on ext4 (tmpfs has no O_DIRECT).
    let v = json(&run_ok(&[
        "run",
        "--target",
        "ext4:size=64m",
        "--workload",
        "dd:bs='4k,64k',count=32,oflag='direct,dsync'",
        "--workload",
        "dd:bs=64k,count=32,mode=read,files=2",
        "--output-format",
        "json",
        "--no-store",
    ]));
    let points: Vec<String> = keys(&v).into_iter().map(|(_, p)| p).collect();
    assert_eq!(points, ["bs=4k", "bs=64k", ""]);
    for r in v["run"]["results"].as_array().unwrap() {
        assert!(r["metrics"]["bw"]["mean"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["workload"]["params"]["count"], "32");
    }
}
