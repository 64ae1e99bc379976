//! Runs of the `meta` workload in a scratch directory: exact counts and the tree on disk.

use super::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Mutex;

/// A scratch directory on tmpfs when there is one, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let path = base.join(format!("fsarena-meta-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    /// Every entry below, relative, with a trailing `/` for directories.
    fn entries(&self) -> Vec<String> {
        fn walk(base: &Path, p: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(p).unwrap().flatten() {
                let rel = e.path().strip_prefix(base).unwrap().display().to_string();
                if e.path().is_dir() {
                    out.push(format!("{rel}/"));
                    walk(base, &e.path(), out);
                } else {
                    out.push(rel);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &self.0, &mut out);
        out.sort();
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn workload(spec: &str) -> MetaWorkload {
    MetaWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap()
}

fn run(dir: &Scratch, spec: &str) -> Measurement {
    run_counting(dir, spec, &AtomicUsize::new(0))
}

/// Runs `spec` with a drop-caches callback that counts its calls in `drops`.
fn run_counting(dir: &Scratch, spec: &str, drops: &AtomicUsize) -> Measurement {
    let stop = AtomicBool::new(false);
    let drop = || {
        drops.fetch_add(1, Ordering::SeqCst);
        Ok(())
    };
    let env = RunEnv {
        root: &dir.0,
        client_roots: vec![dir.0.to_path_buf()],
        stop: &stop,
        progress: &|_| {},
        keep_files: false,
        drop_caches: Some(&drop),
        remount: None,
        live: fsarena_workload::Live::unused(),
        rendezvous: None,
        team: None,
        host: None,
        target: None,
    };
    fsarena_workload::one(workload(spec).run(&env).unwrap_or_else(|e| panic!("{spec}: {}", e.message)))
}

/// Runs `spec` as a run with `--no-drop-caches` does: no callback.
fn run_keeping_caches(dir: &Scratch, spec: &str) -> Measurement {
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(&dir.0, &stop);
    fsarena_workload::one(workload(spec).run(&env).unwrap_or_else(|e| panic!("{spec}: {}", e.message)))
}

/// What each phase counted, by phase (the `<phase>_items` counters).
fn items(m: &Measurement) -> BTreeMap<String, u64> {
    m.counters.iter().filter_map(|(k, n)| Some((k.strip_suffix("_items")?.to_string(), *n))).collect()
}

#[test]
fn every_phase_counts_exactly_and_nothing_is_left() {
    let dir = Scratch::new("counts");
    // -n 20 over 7 directories: 2 per directory, 14 per task, 3 tasks sharing one tree.
    let m = run(&dir, "meta:mdtest='-n 20 -b 2 -z 2',tasks=3");
    assert!(m.complete);
    let want: BTreeMap<String, u64> = [
        ("dir_creation", 42),
        ("dir_stat", 42),
        ("dir_rename", 42),
        ("dir_removal", 42),
        ("file_creation", 42),
        ("file_stat", 42),
        ("file_read", 42),
        ("file_removal", 42),
        ("tree_creation", 7),
        ("tree_removal", 7),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(items(&m), want);
    // The counts are counters and told by the plan, not metrics beside the rates; every
    // phase keeps its latency histogram.
    assert!(m.metrics.iter().all(|x| !x.name.ends_with("_items")), "{:?}", m.metrics);
    assert_eq!(m.latency("file_stat").map(|h| h.len()), Some(42));
    assert_eq!(m.latency("tree_creation").map(|h| h.len()), Some(7));
    let plan = workload("meta:mdtest='-n 20 -b 2 -z 2',tasks=3").describe()[0].clone();
    assert!(plan.contains("tree_creation (7), dir_creation (42), dir_stat (42)"), "{plan}");
    for phase in Phase::ALL {
        let rate = m.metric(phase.metric()).unwrap();
        assert!(rate.value > 0.0 && rate.unit == "ops/s", "{rate:?}");
        assert!(m.metric(&format!("{}_lat_p99", phase.metric())).unwrap().value > 0.0);
    }
    // The metrics come in mdtest's summary order.
    assert_eq!(m.metrics[0].name, "dir_creation");
    assert_eq!(m.metrics[9].name, "tree_removal");
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn unique_dirs_build_one_tree_per_task_as_mdtest_names_it() {
    let dir = Scratch::new("unique");
    let m = run(&dir, "meta:mdtest='-b 2 -z 1 -I 3 -u -C -F',tasks=2,keep=1");
    assert_eq!(items(&m).get("file_creation"), Some(&18));
    // Both trees are built (below), but the tree row counts task 0's, as mdtest's does.
    assert_eq!(items(&m).get("tree_creation"), Some(&3));
    let entries = dir.entries();
    let t = "test-dir.0-0";
    for r in 0..2 {
        let root = format!("{t}/mdtest_tree.{r}.0");
        for (k, path) in
            [(0, root.clone()), (1, format!("{root}/mdtest_tree.{r}.1")), (2, format!("{root}/mdtest_tree.{r}.2"))]
        {
            assert!(entries.contains(&format!("{path}/")), "{path} missing: {entries:?}");
            for i in 0..3 {
                let file = format!("{path}/file.mdtest.{r}.{}", k * 3 + i);
                assert!(entries.contains(&file), "{file} missing: {entries:?}");
            }
        }
    }
    // 1 test dir + 2 × (3 directories + 9 files).
    assert_eq!(entries.len(), 1 + 2 * 12, "{entries:?}");
}

#[test]
fn a_shared_tree_holds_every_tasks_items() {
    let dir = Scratch::new("shared");
    // -b 3 -z 2: 1 + 3 + 9 directories; each holds 2 directories and 2 files of each task.
    let m = run(&dir, "meta:branch=3,depth=2,items_per_dir=2,tasks=2,create_only=1,keep=1");
    assert_eq!(items(&m).get("dir_creation"), Some(&(2 * 13 * 2)));
    let entries = dir.entries();
    let tree: Vec<&String> = entries
        .iter()
        .filter(|e| e.trim_end_matches('/').rsplit('/').next().is_some_and(|n| n.starts_with("mdtest_tree")))
        .collect();
    let depth = |e: &str| e.matches("mdtest_tree").count();
    assert_eq!(tree.len(), 13);
    assert_eq!((1..=3).map(|d| tree.iter().filter(|e| depth(e) == d).count()).collect::<Vec<_>>(), vec![1, 3, 9]);
    assert!(entries.contains(&"test-dir.0-0/mdtest_tree.0/mdtest_tree.2/mdtest_tree.8/".to_string()));
    assert!(entries.contains(&"test-dir.0-0/mdtest_tree.0/mdtest_tree.3/file.mdtest.1.7".to_string()));
    assert!(entries.contains(&"test-dir.0-0/mdtest_tree.0/mdtest_tree.3/dir.mdtest.0.6/".to_string()));
    let files = entries.iter().filter(|e| e.contains("/file.mdtest.")).count();
    let item_dirs = entries.iter().filter(|e| e.contains("/dir.mdtest.")).count();
    assert_eq!((files, item_dirs), (52, 52));
}

#[test]
fn selected_phases_without_creation_prepare_untimed_and_clean_up() {
    let dir = Scratch::new("statonly");
    let m = run(&dir, "meta:items=50,stat_only=1,tasks=2");
    let got = items(&m);
    assert_eq!(got.len(), 2, "only the stat phases are measured: {got:?}");
    assert_eq!((got["dir_stat"], got["file_stat"]), (100, 100));
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
    let m = run(&dir, "meta:items=10,read_only=1,read_bytes=64,files_only=1");
    assert_eq!(items(&m).get("file_read"), Some(&10));
    assert!(dir.entries().is_empty());
}

#[test]
fn rename_rotates_the_names_and_keeps_them_all() {
    let dir = Scratch::new("rename");
    let m = run(&dir, "meta:mdtest='-I 4 -b 2 -z 1 -D -C -U',keep=1");
    assert_eq!(items(&m).get("dir_rename"), Some(&12));
    let names: Vec<String> = dir
        .entries()
        .iter()
        .filter_map(|e| e.trim_end_matches('/').rsplit('/').next().filter(|n| n.starts_with("dir.")).map(String::from))
        .collect();
    let mut want: Vec<String> = (0..12).map(|i| format!("dir.mdtest.0.{i}")).collect();
    want.sort();
    let mut got = names.clone();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn files_hold_what_mdtest_writes() {
    let dir = Scratch::new("write");
    run(&dir, "meta:items=5,files_only=1,create_only=1,write_bytes=100,sync=1,keep=1");
    let data = std::fs::read(dir.0.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.3")).unwrap();
    assert_eq!(data.len(), 100);
    assert_eq!(u64::from_ne_bytes(data[..8].try_into().unwrap()), 3);
    assert_eq!(data[50], 51);
    // A later run that creates again starts from nothing.
    let m = run(&dir, "meta:items=5,files_only=1");
    assert!(m.complete);
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn a_failure_returns_the_figures_so_far_and_removes_everything() {
    let dir = Scratch::new("failure");
    let w = workload("meta:items=30,files_only=1,stat_only=1,keep=0");
    let stop = AtomicBool::new(false);
    let env = RunEnv {
        root: &dir.0,
        client_roots: vec![dir.0.to_path_buf()],
        stop: &stop,
        progress: &|_| {},
        keep_files: true,
        drop_caches: None,
        remount: None,
        live: fsarena_workload::Live::unused(),
        rendezvous: None,
        team: None,
        host: None,
        target: None,
    };
    // A kept tree from "an earlier run" that lacks some files: the stat phase fails on them.
    run(&dir, "meta:items=20,files_only=1,create_only=1,keep=1");
    let err = w.run(&env).unwrap_err();
    // mdtest's calls: the message names the path each call resolved.
    assert!(err.message.contains("stat ") && err.message.contains("mdtest_tree.0/file.mdtest.0.20"), "{}", err.message);
    let partial = fsarena_workload::one(err.partial);
    assert!(!partial.complete);
    assert_eq!(items(&partial).get("file_stat"), Some(&20));
    assert!(partial.metric("file_stat").is_some_and(|r| r.value > 0.0), "the rate of what ran");
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn phases_follow_mdtest_order() {
    let names = |spec: &str| workload(spec).phases().iter().map(|p| p.metric()).collect::<Vec<_>>();
    assert_eq!(
        names("meta:items=4"),
        vec![
            "tree_creation",
            "dir_creation",
            "dir_stat",
            "dir_rename",
            "dir_removal",
            "file_creation",
            "file_stat",
            "file_read",
            "file_removal",
            "tree_removal"
        ]
    );
    assert_eq!(names("meta:items=4,files_only=1,create_only=1"), vec!["tree_creation", "file_creation"]);
    assert_eq!(
        names("meta:items=1,dirs_only=1"),
        vec!["tree_creation", "dir_creation", "dir_stat", "dir_removal", "tree_removal"]
    );
}

#[test]
fn a_failed_thread_spawn_releases_the_tasks_and_removes_everything() {
    let dir = Scratch::new("spawn");
    fsarena_workload::gate::FAIL_SPAWN_AT.with(|f| f.set(Some(2)));
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(&dir.0, &stop);
    let outcome = workload("meta:items=50,tasks=6,unique_dir=1").run(&env);
    fsarena_workload::gate::FAIL_SPAWN_AT.with(|f| f.set(None));
    let e = outcome.unwrap_err();
    assert!(e.message.contains("cannot start meta task thread 3 of 6"), "{}", e.message);
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn a_link_planted_at_the_test_directory_is_not_followed() {
    let outside = Scratch::new("outside");
    let dir = Scratch::new("planted");
    std::os::unix::fs::symlink(&outside.0, dir.0.join(TEST_DIR)).unwrap();
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(&dir.0, &stop);
    // Without the creation phases the test directory is used as found: a link is refused.
    let e = workload("meta:items=5,stat_only=1").run(&env).unwrap_err();
    assert!(e.message.contains("cannot open"), "{}", e.message);
    assert!(outside.entries().is_empty(), "written outside: {:?}", outside.entries());
}

#[test]
fn the_footprint_counts_tasks_items_and_tree_paths() {
    let f = workload("meta:items=1000,tasks=4,write_bytes=4k").footprint();
    assert_eq!((f.threads, f.bytes_on_target, f.files), (4, 4 * 1000 * 4096, 4 * 1000 * 2 + 1));
    let deep = workload("meta:branch=2,depth=22,items_per_dir=1,tasks=64,unique_dir=1").footprint();
    assert!(deep.buffer_bytes > 64 * (1 << 23) * 200, "{deep:?}");
}

#[test]
fn several_tasks_count_all_items_and_one_tree() {
    let dir = Scratch::new("span");
    let m = run(&dir, "meta:items=200,tasks=4,files_only=1,unique_dir=1");
    for phase in ["file_creation", "file_stat", "file_read", "file_removal"] {
        assert_eq!(items(&m).get(phase), Some(&800), "{phase}");
        assert!(m.metric(phase).unwrap().value > 0.0, "{phase}");
    }
    assert_eq!(items(&m).get("tree_removal"), Some(&1));
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn calls_are_mdtests_paths_by_default_and_shown_in_the_params() {
    let p = workload("meta:items=10").params();
    assert_eq!(p, vec![("items".to_string(), "10".to_string()), ("calls".to_string(), "path".to_string())]);
    let p = workload("meta:items=10,calls=fd").params();
    assert_eq!(p.iter().filter(|(k, _)| k == "calls").count(), 1);
    assert!(p.contains(&("calls".to_string(), "fd".to_string())));
    assert!(workload("meta:items=10").describe()[0].contains("calls=path, drop_caches=build"));
}

#[test]
fn path_and_fd_calls_do_the_same_work() {
    let dir = Scratch::new("calls");
    let spec = "meta:mdtest='-b 2 -z 2 -I 3 -w 16 -e 16',tasks=2";
    let by_path = run(&dir, spec);
    let by_fd = run(&dir, &format!("{spec},calls=fd"));
    assert_eq!(items(&by_path), items(&by_fd));
    assert_eq!(items(&by_path).get("file_read"), Some(&42));
    assert_eq!(items(&by_path).get("dir_rename"), Some(&42));
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
    // Rename by path keeps every name, across the tree's directories.
    run(&dir, "meta:mdtest='-I 4 -b 2 -z 1 -D -C -U',keep=1");
    let mut names: Vec<String> = dir
        .entries()
        .iter()
        .filter_map(|e| e.trim_end_matches('/').rsplit('/').next().filter(|n| n.starts_with("dir.")).map(String::from))
        .collect();
    names.sort();
    let mut want: Vec<String> = (0..12).map(|i| format!("dir.mdtest.0.{i}")).collect();
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn caches_drop_after_the_build_and_before_every_phase_when_asked() {
    let dir = Scratch::new("drops");
    let count = |spec: &str| {
        let drops = AtomicUsize::new(0);
        run_counting(&dir, spec, &drops);
        drops.load(Ordering::SeqCst)
    };
    // A stat-only run builds untimed, then drops once before its two timed phases.
    assert_eq!(count("meta:items=20,stat_only=1"), 1);
    // drop_caches=phase: after the build, and before each of the two stat phases.
    assert_eq!(count("meta:items=20,stat_only=1,drop_caches=phase"), 3);
    // A full run has nothing untimed to drop after; with phase, one drop per timed phase.
    assert_eq!(count("meta:items=20"), 0);
    assert_eq!(count("meta:items=20,drop_caches=phase"), 10);
    assert_eq!(count("meta:items=20,files_only=1,drop_caches=phase,tasks=3"), 6);
    assert_eq!(count("meta:items=20,stat_only=1,drop_caches=none"), 0);
    // A run that keeps the caches has no callback: phase drops nothing and still runs.
    let m = run_keeping_caches(&dir, "meta:items=20,stat_only=1,drop_caches=phase");
    assert_eq!(items(&m).get("file_stat"), Some(&20));
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

#[test]
fn a_failed_drop_fails_a_phase_run_and_only_warns_after_a_build() {
    let dir = Scratch::new("dropfail");
    let stop = AtomicBool::new(false);
    let notes = Mutex::new(Vec::<String>::new());
    let progress = |s: &str| notes.lock().unwrap().push(s.to_string());
    let drop = || Err("not root, so the page cache cannot be dropped".to_string());
    let env = RunEnv {
        root: &dir.0,
        client_roots: vec![dir.0.to_path_buf()],
        stop: &stop,
        progress: &progress,
        keep_files: false,
        drop_caches: Some(&drop),
        remount: None,
        live: fsarena_workload::Live::unused(),
        rendezvous: None,
        team: None,
        host: None,
        target: None,
    };
    let m = fsarena_workload::one(workload("meta:items=20,stat_only=1").run(&env).unwrap());
    assert!(m.complete);
    assert!(notes.lock().unwrap().iter().any(|n| n.starts_with("warning: meta: not root")), "{notes:?}");
    let e = workload("meta:items=20,drop_caches=phase").run(&env).unwrap_err();
    assert!(e.message.contains("drop_caches=phase: not root"), "{}", e.message);
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}

/// mdtest's tree rows are rank 0's: under MPI another rank builds its tree (`-u`) and
/// reports its item rows, but no tree row, so that the merged row is rank 0's one tree over
/// rank 0's time, not a window across every rank.
#[test]
fn only_rank_0_reports_the_tree_rows() {
    let dir = Scratch::new("rank1");
    let stop = AtomicBool::new(false);
    let met = AtomicUsize::new(0);
    let meet = || {
        met.fetch_add(1, Ordering::SeqCst);
    };
    let run_as = |rank: usize| {
        let env = RunEnv {
            rendezvous: Some(&meet),
            team: Some(fsarena_workload::Team { rank, size: 2, shared_root: &dir.0, client: None }),
            ..RunEnv::quiet(&dir.0, &stop)
        };
        fsarena_workload::one(workload("meta:mdtest='-n 6 -u',tasks=2").run(&env).unwrap())
    };
    // Rank 1 alone (rank 0 made the test directory it works in, and removes it).
    std::fs::create_dir(dir.0.join("test-dir.0-0")).unwrap();
    let m = run_as(1);
    assert_eq!(items(&m).get("file_stat"), Some(&12), "both of rank 1's tasks count their items");
    assert_eq!(items(&m).get("tree_creation"), Some(&0));
    assert!(m.metric("tree_creation").is_none() && m.metric("tree_removal").is_none(), "{:?}", m.metrics);
    assert!(m.metric("file_stat").is_some());
    assert!(met.load(Ordering::SeqCst) > 0, "the phases met the other ranks");
    std::fs::remove_dir(dir.0.join("test-dir.0-0")).unwrap();
    // Rank 0 counts its first task's tree, once.
    let m = run_as(0);
    assert_eq!(items(&m).get("tree_creation"), Some(&1));
    assert!(m.metric("tree_creation").is_some_and(|r| r.value > 0.0), "{:?}", m.metrics);
    assert!(dir.entries().is_empty(), "left: {:?}", dir.entries());
}
