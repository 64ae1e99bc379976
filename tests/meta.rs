//! The `meta` workload end to end: mdtest's flags, exact counts, the tree on disk, mdtest's
//! summary table, and a filesystem that fills mid-phase.

use crate::util::Bounded;
use crate::util::{json, run, stderr, stdout, Scratch, SmallTmpfs};

fn run_ok(args: &[&str]) -> std::process::Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    out
}

/// The operations of every phase, as the plan (`--dry-run`) tells them: `file_stat (42)`.
fn planned(text: &str) -> Vec<(String, u64)> {
    let phases = text.split("phases (operations): ").nth(1).unwrap_or_else(|| panic!("no phases: {text}"));
    let mut out: Vec<(String, u64)> = phases
        .lines()
        .next()
        .unwrap_or("")
        .split(", ")
        .filter_map(|p| {
            let (name, n) = p.split_once(" (")?;
            Some((name.to_string(), n.trim_end_matches(')').parse().ok()?))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn an_mdtest_command_line_runs_and_ends_with_mdtests_summary() {
    let dir = Scratch::new("meta-mdtest");
    let out = run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "meta:mdtest='-n 100 -u'",
        "--repeat",
        "2",
        "--warmup",
        "0",
    ]);
    let text = stdout(&out);
    assert!(text.contains("SUMMARY rate (in ops/sec): (of 2 iterations)\n"), "{text}");
    assert!(
        text.contains("   Operation                     Max            Min           Mean        Std Dev\n"),
        "{text}"
    );
    for row in ["Directory creation", "Directory rename", "File read", "Tree removal"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("   {row} "))), "no {row} row:\n{text}");
    }
    assert!(stderr(&out).contains("1 tasks, 100 files/directories"), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn every_phase_counts_the_items_of_mdtests_tree() {
    let dir = Scratch::new("meta-counts");
    // -b 2 -z 2 -I 3: 7 directories with 3 items each, per task; 2 tasks share the tree.
    let workload = "meta:mdtest='-b 2 -z 2 -I 3',tasks=2";
    let plan = stdout(&run_ok(&["run", "--dry-run", "--target", &dir.spec(), "--workload", workload]));
    let v = json(&run_ok(&["run", "--target", &dir.spec(), "--workload", workload, "--output-format", "json"]));
    let r = &v["run"]["results"][0];
    assert_eq!(r["complete"], true);
    assert_eq!(r["workload"]["kind"], "meta");
    let want: Vec<(String, u64)> = [
        ("dir_creation", 42),
        ("dir_removal", 42),
        ("dir_rename", 42),
        ("dir_stat", 42),
        ("file_creation", 42),
        ("file_read", 42),
        ("file_removal", 42),
        ("file_stat", 42),
        ("tree_creation", 7),
        ("tree_removal", 7),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(planned(&plan), want);
    // Every phase has its rate; the counts are the plan's, not metrics (the unit tests check
    // that a run counts them exactly).
    for (phase, _) in &want {
        assert!(r["metrics"][phase]["values"][0].as_f64().is_some_and(|x| x > 0.0), "{phase}: {r}");
        assert!(r["metrics"].get(format!("{phase}_items")).is_none(), "{r}");
    }
    assert_eq!(r["metrics"]["file_creation"]["unit"], "ops/s");
    assert_eq!(r["metrics"]["file_creation"]["better"], "higher");
    assert_eq!(r["metrics"]["file_stat_lat_p99"]["unit"], "ns");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn create_only_with_keep_leaves_exactly_mdtests_tree() {
    let dir = Scratch::new("meta-keep");
    run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:mdtest='-b 3 -z 2 -n 40 -u -C',tasks=2,keep=1"]);
    let left = dir.leftovers();
    let name = |p: &std::path::PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    // -n 40 over 13 directories: 3 per directory, 39 per task; each task a tree of its own.
    for t in 0..2 {
        let tree: Vec<_> =
            left.iter().filter(|p| p.is_dir() && name(p).starts_with(&format!("mdtest_tree.{t}."))).collect();
        assert_eq!(tree.len(), 13, "task {t}: {tree:?}");
        let depth = |p: &&&std::path::PathBuf| {
            p.components().filter(|c| c.as_os_str().to_string_lossy().starts_with("mdtest_tree")).count()
        };
        let per_level: Vec<usize> = (1..=3).map(|d| tree.iter().filter(|p| depth(p) == d).count()).collect();
        assert_eq!(per_level, vec![1, 3, 9]);
        for kind in ["file", "dir"] {
            let prefix = format!("{kind}.mdtest.{t}.");
            assert_eq!(left.iter().filter(|p| name(p).starts_with(&prefix)).count(), 39, "{prefix}");
            for d in &tree {
                let here = std::fs::read_dir(d)
                    .unwrap()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                    .count();
                assert_eq!(here, 3, "{} in {}", prefix, d.display());
            }
        }
    }
}

#[test]
fn mdtest_flags_and_keys_make_the_same_plan() {
    let dir = Scratch::new("meta-plan");
    let plan = |w: &str| stdout(&run_ok(&["run", "--dry-run", "--target", &dir.spec(), "--workload", w]));
    assert_eq!(
        plan("meta:mdtest='-b 6 -I 8 -z 3 -u -F -w 4096 -e 4096'"),
        plan("meta:branch=6,items_per_dir=8,depth=3,unique_dir=1,files_only=1,write_bytes=4096,read_bytes=4096")
    );
    let text = plan("meta:mdtest='-b 6 -I 8 -z 3'");
    assert!(text.contains("259 directories (1/6/36/216 per level), 8 items per directory"), "{text}");
}

#[test]
fn bad_mdtest_flags_exit_2_naming_the_flag() {
    let dir = Scratch::new("meta-bad");
    for (workload, want) in [
        ("meta:mdtest='-n 10 -Q'", "unknown mdtest flag -Q"),
        ("meta:mdtest='-n 10 -R'", "-R (random stat order) is not supported"),
        ("meta:mdtest='-n 10 -I 5'", "not both"),
        ("meta:items=10,colour=red", "unknown meta option 'colour'"),
        ("meta:tasks=0", "tasks=0"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty(), "{workload} created {:?}", dir.leftovers());
    }
}

#[test]
fn a_filesystem_that_fills_mid_phase_exits_1_and_leaves_nothing() {
    // 4 MiB of data space: every file takes a whole 4 KiB page of tmpfs for its one byte, so
    // file creation fails after about 1,000 of its 1,200 files, though their 1,200 bytes and
    // 2,401 inodes fit the target's size (larger plans are refused before anything is created).
    let fs = SmallTmpfs::new("meta-enospc", "4m");
    let out = run(&[
        "run",
        "--target",
        &fs.dir.spec(),
        "--workload",
        "meta:items=600,write_bytes=1,tasks=2",
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("No space left on device") && err.contains("incomplete"), "{err}");
    let v = json(&out);
    let r = &v["run"]["results"][0];
    assert_eq!(r["complete"], false);
    // The directory phases ran in full before the files filled the filesystem, and the
    // files created so far have their rate.
    for phase in ["dir_creation", "dir_removal", "file_creation"] {
        assert!(r["metrics"][phase]["values"][0].as_f64().is_some_and(|x| x > 0.0), "{phase}: {r}");
    }
    assert!(r["metrics"].get("file_stat").is_none(), "nothing ran after the failure: {r}");
    assert!(fs.dir.leftovers().is_empty(), "left: {:?}", fs.dir.leftovers());
}

#[test]
fn running_out_of_inodes_in_directory_creation_exits_1_and_leaves_nothing() {
    // A 16 MiB ext4 has 4,096 inodes, which fsarena cannot know before mkfs: 6,000 directories
    // fit the target's size (256 bytes each) and run out of inodes at run time.
    let work = crate::util::TestWorkdir::new("meta-inodes");
    let out =
        run(&["run", "--target", "ext4:size=16m", "--workload", "meta:mdtest='-n 6000 -D'", "--workdir", &work.arg()]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("INCOMPLETE"), "{}", stdout(&out));
    assert!(stdout(&out).contains("   Tree creation "), "the phases so far are in mdtest's table: {}", stdout(&out));
    assert!(work.leftovers().is_empty(), "left: {:?}", work.leftovers());
}

#[test]
fn more_files_than_a_directory_target_has_inodes_is_refused_before_anything_is_created() {
    let fs = SmallTmpfs::new("meta-inodes-plan", "4m,nr_inodes=300");
    let out = run(&["run", "--target", &fs.dir.spec(), "--workload", "meta:mdtest='-n 1000 -D'"]);
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("creates 1001 files and directories, more than the 299 inodes free"),
        "{}",
        stderr(&out)
    );
    assert!(fs.dir.leftovers().is_empty(), "left: {:?}", fs.dir.leftovers());
}

#[test]
fn repetitions_of_a_stat_only_run_reuse_the_prepared_tree() {
    let dir = Scratch::new("meta-stat");
    let out = run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "meta:mdtest='-n 200 -T'",
        "--repeat",
        "3",
        "--warmup",
        "1",
    ]);
    let text = stdout(&out);
    assert!(text.contains("(of 3 iterations)"), "{text}");
    assert!(text.contains("   Directory stat ") && text.contains("   File stat "), "{text}");
    assert!(!text.contains("   File creation "), "{text}");
    assert_eq!(stderr(&out).matches("untimed").count(), 1, "prepared once: {}", stderr(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn calls_are_mdtests_paths_by_default_and_said_in_the_output() {
    let dir = Scratch::new("meta-calls");
    let v = json(&run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:items=20", "--output-format", "json"]));
    assert_eq!(v["run"]["results"][0]["workload"]["params"]["calls"], "path", "{v}");
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:items=20,calls=fd"]);
    assert!(stdout(&out).contains("meta:items=20,calls=fd"), "{}", stdout(&out));
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:items=20"]);
    assert!(stdout(&out).contains("meta:items=20,calls=path"), "{}", stdout(&out));
    assert!(stderr(&out).contains("calls=path, drop_caches=build"), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn unique_dirs_count_task_0s_tree_as_mdtest() {
    let dir = Scratch::new("meta-unique-tree");
    // -b 2 -z 1: 3 directories per tree; 3 tasks build 3 trees, mdtest's rows count rank 0's.
    let workload = "meta:mdtest='-b 2 -z 1 -I 2 -u',tasks=3";
    let plan = stdout(&run_ok(&["run", "--dry-run", "--target", &dir.spec(), "--workload", workload]));
    run_ok(&["run", "--target", &dir.spec(), "--workload", workload]);
    let got: std::collections::BTreeMap<String, u64> = planned(&plan).into_iter().collect();
    assert_eq!((got["tree_creation"], got["tree_removal"]), (3, 3));
    assert_eq!(got["file_creation"], 3 * 3 * 2);
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn a_stat_only_run_drops_the_cache_after_its_build_unless_told_not_to() {
    let dir = Scratch::new("meta-cold");
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:mdtest='-n 100 -T'"]);
    assert!(stderr(&out).contains("dropped the page cache after the build"), "{}", stderr(&out));
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:mdtest='-n 100 -T'", "--no-drop-caches"]);
    assert!(!stderr(&out).contains("dropped the page cache"), "{}", stderr(&out));
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "meta:mdtest='-n 100 -F',drop_caches=phase"]);
    assert!(stdout(&out).contains("   File stat "), "{}", stdout(&out));
    let out = run(&["run", "--target", &dir.spec(), "--workload", "meta:drop_caches=often"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("expected build, phase or none"), "{}", stderr(&out));
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

/// Four tasks on one CPU take turns: the rate is over the phase's span across the tasks, so
/// four are no faster than one (the threads' side of issue 30, which MPI ranks now share:
/// tests/mpi.rs). The tree rows count one tree.
#[test]
fn tasks_taking_turns_on_one_cpu_are_no_faster_than_one_task() {
    crate::util::require("taskset");
    let dir = Scratch::new("meta-one-cpu");
    let launch = |tasks: u64| {
        let scratch = crate::util::TempDir::new();
        let workload = format!("meta:mdtest='-n 1000 -u',tasks={tasks}");
        let out = std::process::Command::new("nice")
            .args(["-n", "-20", "taskset", "-c", "0", env!("CARGO_BIN_EXE_fsarena")])
            .args(["run", "--target", &dir.spec(), "--workload", &workload, "--repeat", "3", "--warmup", "0"])
            .args(["--no-store", "--no-drop-caches", "--output-format", "json", "--workdir", &scratch.0])
            .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
            .bounded_output()
            .expect("fsarena runs");
        assert!(out.status.success(), "{tasks} tasks: {}", stderr(&out));
        (tasks, json(&out)["run"]["results"][0].clone())
    };
    // Side by side, alternating: 1, 4, 1, 4.
    let runs: Vec<(u64, serde_json::Value)> = [1, 4, 1, 4].into_iter().map(launch).collect();
    let mean = |tasks: u64, metric: &str| {
        let values: Vec<f64> = runs
            .iter()
            .filter(|(n, _)| *n == tasks)
            .flat_map(|(_, r)| r["metrics"][metric]["values"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_f64())
            .collect();
        assert!(!values.is_empty(), "no {metric} with {tasks} tasks: {runs:?}");
        values.iter().sum::<f64>() / values.len() as f64
    };
    // Other processes on the CPU give 4 tasks up to 4 shares of it against one task's 1 (the
    // scheduler is fair per thread), hence nice -20 and a margin of 2 on the geometric mean
    // of the three phases that fit in a time slice: merged by each task's own time they read
    // 4 (issue 30: 5-9x mdtest's), merged over the span about 1.
    let ratios: Vec<f64> = ["file_stat", "dir_stat", "file_read"].iter().map(|m| mean(4, m) / mean(1, m)).collect();
    let held = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    assert!(held.exp() <= 2.0, "4 tasks on one CPU against one task (file_stat, dir_stat, file_read): {ratios:.2?}");
    for (n, result) in &runs {
        assert_eq!(result["counters"]["tree_creation_items"][0], 1, "{n} tasks: {result}");
        assert_eq!(result["counters"]["file_stat_items"][0], 1000 * n, "{n} tasks: {result}");
    }
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}
