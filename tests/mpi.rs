//! `fsarena run --mpi` under OpenMPI's mpirun, two ranks on this machine against a `dir:`
//! target (issue 14). Compiled only with the `mpi` feature (`cargo test --features mpi`):
//! the plain build's tests need no MPI.

use crate::util::Bounded;
use crate::util::{json, stderr, stdout, Scratch, TempDir};
use std::process::{Command, Output};

/// `mpirun -np RANKS fsarena ARGS` as root (mpirun refuses root without
/// --allow-run-as-root), with a work directory of its own unless ARGS give one.
fn mpirun(ranks: usize, args: &[&str], scratch: &TempDir) -> Output {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "-np", &ranks.to_string()]);
    // Two ranks on a two-core machine are fine; more would need --oversubscribe.
    c.arg(env!("CARGO_BIN_EXE_fsarena"));
    c.args(args);
    if !args.contains(&"--workdir") {
        c.args(["--workdir", &format!("{}/work", scratch.0)]);
    }
    c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
    c.bounded_output().expect("mpirun runs")
}

/// Two ranks writing 8 MiB each: one result whose counters are twice one rank's, printed
/// once, and one stored run that records both ranks' hosts.
#[test]
fn two_ranks_merge_exactly_and_store_one_run() {
    crate::util::require("mpirun");
    let dir = Scratch::new("mpi-dir");
    let scratch = TempDir::new();
    std::fs::create_dir_all(&scratch.0).unwrap();
    let db = format!("{}/results.db", scratch.0);
    let target = dir.spec();
    let workload = "io:rw=write,bs=64k,size=8m";
    let one = crate::util::run(&[
        "run",
        "--target",
        &target,
        "--workload",
        workload,
        "--no-store",
        "--output-format",
        "json",
    ]);
    assert!(one.status.success(), "{}", stderr(&one));
    let both = mpirun(
        2,
        &[
            "run",
            "--mpi",
            "--target",
            &target,
            "--workload",
            workload,
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--db",
            &db,
            "--output-format",
            "json",
        ],
        &scratch,
    );
    assert!(both.status.success(), "stdout: {}\nstderr: {}", stdout(&both), stderr(&both));
    // One JSON document: rank 1 printed nothing on stdout.
    let merged = json(&both);
    let single = json(&one);
    let (merged, single) = (&merged["run"]["results"][0], &single["run"]["results"][0]);
    assert_eq!(merged["counters"]["write_bytes"][0], 16 << 20, "{merged}");
    let counters = single["counters"].as_object().unwrap();
    assert!(!counters.is_empty());
    for (name, values) in counters {
        let one_rank = values[0].as_u64().unwrap();
        assert_eq!(merged["counters"][name][0].as_u64(), Some(2 * one_rank), "counter {name}: {merged}");
    }
    // Each rank worked in its own directory, removed with its files.
    assert!(dir.leftovers().is_empty(), "{:?}", dir.leftovers());
    let shown = crate::util::fsarena()
        .args(["results", "show", "last", "--db", &db, "--output-format", "json"])
        .bounded_output()
        .unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let environment = &json(&shown)["run"]["environment"];
    assert_eq!(environment["mpi_ranks"], "2", "{environment}");
    for rank in ["rank.0", "rank.1"] {
        let facts = environment[rank].as_str().unwrap_or_else(|| panic!("{rank} missing: {environment}"));
        assert!(facts.starts_with("host=") && facts.contains("kernel=Linux"), "{facts}");
    }
    let listed = crate::util::fsarena()
        .args(["results", "list", "--db", &db, "--output-format", "json"])
        .bounded_output()
        .unwrap();
    assert_eq!(json(&listed)["runs"].as_array().map(Vec::len), Some(1), "{}", stdout(&listed));
}

/// Bad input fails every rank with exit 2 before anything exists, said once.
#[test]
fn bad_input_is_said_once() {
    crate::util::require("mpirun");
    let dir = Scratch::new("mpi-bad");
    let scratch = TempDir::new();
    let out =
        mpirun(2, &["run", "--mpi", "--target", &dir.spec(), "--workload", "io:rw=sideways", "--no-store"], &scratch);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out).lines().filter(|l| l.contains("sideways")).count();
    assert_eq!(said, 1, "{}", stderr(&out));
}

/// A rank whose workload fails stops every rank; rank 0 names the rank and its host, and
/// exits 1; nothing is left in the target.
#[test]
fn a_failing_rank_fails_the_run_and_is_named() {
    crate::util::require("mpirun");
    let dir = Scratch::new("mpi-fail");
    let scratch = TempDir::new();
    // Fails in rank 1's directory only.
    let workload = "exec:cmd='case $FSARENA_MNT in *rank-1*) exit 3;; esac'";
    let out = mpirun(2, &["run", "--mpi", "--target", &dir.spec(), "--workload", workload, "--no-store"], &scratch);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    assert!(stderr(&out).contains(&format!("rank 1 on {host}: exec")), "{}", stderr(&out));
    // Rank 0 alone exits non-zero: a rank 1 exiting 1 made mpirun end rank 0 (SIGTERM) while
    // it was still tearing down and printing, and the job's status was then rank 1's.
    let said = stderr(&out);
    let named: Vec<&str> = said.lines().filter(|l| l.trim_start().starts_with("Process name:")).collect();
    assert!(named.iter().all(|l| l.trim_end().ends_with(",0]")), "{said}");
    assert!(!said.contains("signal 15"), "{said}");
    assert!(dir.leftovers().is_empty(), "{:?}", dir.leftovers());
}

/// A rank killed mid-run: mpirun ends the job, rank 0 tears down on its signal and nothing
/// stays mounted; mpirun names the rank.
#[test]
fn a_killed_rank_leaves_nothing_mounted() {
    crate::util::require("mpirun");
    let scratch = TempDir::new();
    let workdir = format!("{}/work", scratch.0);
    // Rank 1 kills itself (the shell's parent); rank 0 waits outside the mount, so that only
    // fsarena's teardown decides what stays mounted.
    let workload = "exec:cmd='case $FSARENA_MNT in *rank-1*) kill -9 $PPID;; *) cd / && exec sleep 3;; esac'";
    let out = mpirun(
        2,
        &["run", "--mpi", "--target", "tmpfs:size=16m", "--workload", workload, "--no-store", "--workdir", &workdir],
        &scratch,
    );
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("rank 1") && said.contains("tearing down now"), "{said}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&workdir), "left mounted: {said}");
}

/// Under MPI each rank is one client: a numjobs sweep prints the clients × processes table
/// with the ranks as its row and each rank's fairness; meta's phases meet across the ranks
/// (mdtest's barrier before each phase) and count every rank's items.
#[test]
fn ranks_are_the_clients_of_the_matrix_and_meta_phases_meet() {
    crate::util::require("mpirun");
    let dir = Scratch::new("mpi-matrix");
    let scratch = TempDir::new();
    let out = mpirun(
        2,
        &[
            "run",
            "--mpi",
            "--target",
            &dir.spec(),
            "--workload",
            "io:rw=write,bs=64k,size=2m,numjobs='1,2'",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--no-store",
        ],
        &scratch,
    );
    assert!(out.status.success(), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let table = text.split("clients × processes · ").nth(1).unwrap_or_else(|| panic!("no matrix in:\n{text}"));
    let lines: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(lines.len(), 3, "header, rule and the ranks' row:\n{table}");
    assert!(lines[0].contains("numjobs=1") && lines[0].contains("numjobs=2"), "{table}");
    assert!(lines[2].starts_with("| clients=2") && lines[2].contains("fairness"), "{table}");
    assert!(text.contains("All clients: (clients=2,") && text.contains("per client   : bw min="), "{text}");
    assert!(dir.leftovers().is_empty(), "{:?}", dir.leftovers());

    let meta = mpirun(
        2,
        &[
            "run",
            "--mpi",
            "--target",
            &dir.spec(),
            "--workload",
            "meta:items=100,files_only=1",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--no-store",
            "--output-format",
            "json",
        ],
        &scratch,
    );
    assert!(meta.status.success(), "{}", stderr(&meta));
    let v = json(&meta);
    let result = &v["run"]["results"][0];
    assert_eq!(result["counters"]["file_creation_items"][0], 200, "{result}");
    assert!(result["metrics"]["file_creation"]["mean"].as_f64().is_some_and(|r| r > 0.0), "{result}");
}

/// Four ranks against a glusterfs target with four client mounts (oversubscribed on this
/// machine; rank K works through client mount K): the merged result counts every rank's bytes
/// once, each rank is one client of it, and nothing of the volume is left afterwards.
#[test]
fn four_ranks_on_four_glusterfs_clients() {
    crate::util::require("mpirun");
    let _turn = crate::glusterfs::one_at_a_time();
    let before = crate::glusterfs::outside();
    let wd = crate::util::TestWorkdir::new("mpi-gluster");
    let mut c = Command::new("mpirun");
    // Four ranks on two cores; glusterd's teardown outlasts mpirun's default SIGKILL delay.
    c.args(["--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "4"]);
    c.args(["--mca", "odls_base_sigkill_timeout", "30"]);
    c.arg(env!("CARGO_BIN_EXE_fsarena"));
    c.args([
        "run",
        "--mpi",
        "--workdir",
        &wd.arg(),
        "--no-store",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--output-format",
        "json",
        "--target",
        "glusterfs:clients=4,size=400m",
        "--workload",
        "io:rw=write,bs=64k,size=4m",
    ]);
    c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
    let out = c.bounded_output().expect("mpirun runs");
    assert!(out.status.success(), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    let v = json(&out);
    let result = &v["run"]["results"][0];
    assert_eq!(result["counters"]["write_bytes"][0], 16 << 20, "{result}");
    for k in 1..=4 {
        assert_eq!(result["counters"][format!("client{k}.write_bytes")][0], 4 << 20, "{result}");
    }
    assert_eq!(v["run"]["environment"]["mpi_ranks"], "4");
    crate::glusterfs::nothing_left(&wd, &before);
}

/// Four ranks on one CPU take turns, and each rank's phase (1000 stats, about a millisecond)
/// fits in one time slice: the merged rate is over the phase's span across the ranks (the
/// earliest start to the latest end), so four ranks are no faster than one (issue 30: merged
/// over the longest rank's own time, 4 ranks claimed up to 9× mdtest's stat rate). The tree
/// rows count one tree, as mdtest's and the threads' do, though every rank built one.
#[test]
fn ranks_taking_turns_on_one_cpu_are_no_faster_than_one_rank() {
    crate::util::require("mpirun");
    crate::util::require("taskset");
    let dir = Scratch::new("mpi-one-cpu");
    let scratch = TempDir::new();
    let launch = |ranks: usize| {
        let mut c = Command::new("nice");
        c.args([
            "-n",
            "-20",
            "taskset",
            "-c",
            "0",
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "--bind-to",
            "none",
        ]);
        c.args(["-np", &ranks.to_string(), env!("CARGO_BIN_EXE_fsarena")]);
        c.args(["run", "--mpi", "--target", &dir.spec(), "--workload", "meta:mdtest='-n 1000 -u'"]);
        c.args(["--repeat", "3", "--warmup", "0", "--no-store", "--no-drop-caches", "--output-format", "json"]);
        c.args(["--workdir", &format!("{}/work", scratch.0)]);
        c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
        let out = c.bounded_output().expect("mpirun runs");
        assert!(out.status.success(), "{ranks} ranks: {}", stderr(&out));
        json(&out)["run"]["results"][0].clone()
    };
    // Side by side, alternating: 1, 4, 1, 4.
    let runs: Vec<(usize, serde_json::Value)> = [1, 4, 1, 4].into_iter().map(|n| (n, launch(n))).collect();
    let mean = |ranks: usize, metric: &str| {
        let values: Vec<f64> = runs
            .iter()
            .filter(|(n, _)| *n == ranks)
            .flat_map(|(_, r)| r["metrics"][metric]["values"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_f64())
            .collect();
        assert!(!values.is_empty(), "no {metric} with {ranks} ranks: {runs:?}");
        values.iter().sum::<f64>() / values.len() as f64
    };
    // Other processes on the CPU give 4 ranks up to 4 shares of it against one rank's 1 (the
    // scheduler is fair per thread), hence nice -20 and a margin of 2 on the geometric mean
    // of the three phases that fit in a time slice: merged by each rank's own time they read
    // 4 (issue 30: 5-9x mdtest's), merged over the span about 1.
    let ratios: Vec<f64> = ["file_stat", "dir_stat", "file_read"].iter().map(|m| mean(4, m) / mean(1, m)).collect();
    let held = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    assert!(held.exp() <= 2.0, "4 ranks on one CPU against one rank (file_stat, dir_stat, file_read): {ratios:.2?}");
    for (n, result) in &runs {
        assert_eq!(result["counters"]["tree_creation_items"][0], 1, "{n} ranks: {result}");
        assert_eq!(result["counters"]["file_stat_items"][0], 1000 * n, "{n} ranks: {result}");
    }
    assert!(dir.leftovers().is_empty(), "{:?}", dir.leftovers());
}

/// Under MPI the ranks are mdtest's ranks in one namespace: one test directory that rank 0
/// makes, one tree without `-u` holding every rank's items named by its rank
/// (`file.mdtest.1.3`), one tree per rank with `-u` (`mdtest_tree.1.0`), side by side. Each
/// rank in a directory of its own made mdtest's shared-directory test a private one: on ext4,
/// 4 ranks created and renamed directories at 1.5-2.1x mdtest's rate.
#[test]
fn meta_ranks_share_one_namespace_as_mdtests_do() {
    crate::util::require("mpirun");
    let dir = Scratch::new("mpi-meta-shared");
    let scratch = TempDir::new();
    let names = |path: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let items = |ranks: &[usize]| -> Vec<String> {
        let mut all: Vec<String> = ranks
            .iter()
            .flat_map(|r| (0..3).flat_map(move |i| [format!("dir.mdtest.{r}.{i}"), format!("file.mdtest.{r}.{i}")]))
            .collect();
        all.sort();
        all
    };
    for (flags, trees) in [
        ("-n 3 -C", vec![("mdtest_tree.0", vec![0, 1])]),
        ("-n 3 -C -u", vec![("mdtest_tree.0.0", vec![0]), ("mdtest_tree.1.0", vec![1])]),
    ] {
        let workload = format!("meta:mdtest='{flags}',keep=1");
        let args = ["run", "--mpi", "--target", &dir.spec(), "--workload", &workload];
        let rest = ["--repeat", "1", "--warmup", "0", "--no-store", "--output-format", "json"];
        let out = mpirun(2, &[&args[..], &rest[..]].concat(), &scratch);
        assert!(out.status.success(), "{flags}: {}", stderr(&out));
        let result = &json(&out)["run"]["results"][0];
        assert_eq!(result["counters"]["file_creation_items"][0], 6, "{flags}: {result}");
        assert_eq!(result["counters"]["tree_creation_items"][0], 1, "{flags}: {result}");
        // In the target's own directory (`fsarena-RUN-0`), where every rank's client is.
        let found = dir.leftovers().into_iter().filter(|p| p.ends_with("test-dir.0-0")).collect::<Vec<_>>();
        let [test_dir] = &found[..] else { panic!("{flags}: one test directory: {:?}", dir.leftovers()) };
        let want: Vec<&str> = trees.iter().map(|(t, _)| *t).collect();
        assert_eq!(names(test_dir), want, "{flags}: {:?}", dir.leftovers());
        for (tree, ranks) in &trees {
            assert_eq!(names(&test_dir.join(tree)), items(ranks), "{flags}: {tree}");
        }
        std::fs::remove_dir_all(test_dir.parent().unwrap()).unwrap();
        assert!(dir.leftovers().is_empty(), "{flags}: {:?}", dir.leftovers());
    }
}
