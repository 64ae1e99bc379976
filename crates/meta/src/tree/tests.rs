//! Runs of the `tree` workload in a scratch directory.

use super::*;
use std::sync::atomic::AtomicBool;

fn scratch(name: &str) -> PathBuf {
    let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let path = base.join(format!("fsarena-tree-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    path
}

/// Every part's measurement.
fn run_parts(root: &Path, spec: &str) -> Result<Vec<Measurement>, WorkloadError> {
    let stop = AtomicBool::new(false);
    let env = RunEnv::quiet(root, &stop);
    TreeWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap().run(&env)
}

fn run(root: &Path, spec: &str) -> Result<Measurement, WorkloadError> {
    run_parts(root, spec).map(fsarena_workload::one)
}

fn value(m: &Measurement, name: &str) -> f64 {
    m.metric(name).unwrap_or_else(|| panic!("no {name} in {:?}", m.metrics)).value
}

fn count(m: &Measurement, name: &str) -> u64 {
    *m.counters.get(name).unwrap_or_else(|| panic!("no {name} in {:?}", m.counters))
}

#[test]
fn a_run_counts_every_file_and_leaves_nothing() {
    let root = scratch("counts");
    let m =
        run(&root, "tree:levels=2,dirs_per_level=3,files_per_dir=4,threads=2,file_size=6k,write_size=4k,fsync=none")
            .unwrap();
    assert!(m.complete);
    assert_eq!(count(&m, "files_created_items"), 48);
    assert_eq!(count(&m, "dirs_created_items"), 12);
    assert_eq!(count(&m, "files_deleted_items"), 48);
    for name in ["files_created", "dirs_created", "write_bw", "files_deleted", "create_lat_p99", "delete_lat_p50"] {
        assert!(value(&m, name) > 0.0, "{name}");
    }
    // Counts are counters, not metrics; every latency is in its histogram.
    assert!(m.metrics.iter().all(|x| !x.name.ends_with("_items") && !x.name.contains("_6k")), "{:?}", m.metrics);
    assert_eq!(m.latency("create").map(|h| h.len()), Some(48));
    assert_eq!(m.latency("delete").map(|h| h.len()), Some(48));
    // write_bw / files_created is the file size.
    let per_file = value(&m, "write_bw") / value(&m, "files_created");
    assert!((per_file - 6144.0).abs() < 1.0, "{per_file}");
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_list_of_sizes_is_the_plans_sweep_not_one_run() {
    let e = TreeWorkload::from_spec(&Spec::parse("tree:file_size='100k,400k'").unwrap()).unwrap_err();
    assert!(e.to_string().contains("is a list: a run makes files of one size"), "{e}");
}

#[test]
fn kept_trees_have_the_shape_and_sizes_asked_for() {
    let root = scratch("keep");
    let m = run(&root, "tree:levels=3,dirs_per_level=2,files_per_dir=5,file_size=3000,fsync=end,keep=1").unwrap();
    assert_eq!(m.metric("files_created").unwrap().unit, "files/s");
    assert!(m.metric("files_deleted").is_none(), "keep=1 deletes nothing, as fs_mark -k");
    assert_eq!(count(&m, "files_created_items"), 30);
    assert_eq!(count(&m, "dirs_created_items"), 6);
    let t0 = root.join("fsarena-tree/t0");
    for dir in ["d00", "d01", "d00/d00", "d00/d01", "d00/d00/d00", "d00/d00/d01"] {
        for f in 0..5 {
            let meta = std::fs::metadata(t0.join(dir).join(format!("f{f}"))).unwrap();
            assert_eq!(meta.len(), 3000, "{dir}/f{f}");
        }
    }
    assert!(!t0.join("d00/d00/d00/d00").exists());
    // The next run starts from nothing and removes everything.
    run(&root, "tree:levels=1,dirs_per_level=1,files_per_dir=1").unwrap();
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_stale_tree_goes_first_and_a_stopped_run_is_incomplete() {
    let root = scratch("fail");
    // What an interrupted earlier run left is removed first.
    std::fs::create_dir_all(root.join("fsarena-tree/t0/d00")).unwrap();
    std::fs::write(root.join("fsarena-tree/t0/d00/f0"), b"old").unwrap();
    let m = run(&root, "tree:levels=1,dirs_per_level=2,files_per_dir=1,file_size=0,threads=1").unwrap();
    assert_eq!(count(&m, "files_created_items"), 2);
    // ... and a run stopped before it starts is incomplete and leaves nothing.
    let stop = AtomicBool::new(true);
    let env = RunEnv::quiet(&root, &stop);
    let m = fsarena_workload::one(
        TreeWorkload::from_spec(&Spec::parse("tree:loops=3").unwrap()).unwrap().run(&env).unwrap(),
    );
    assert!(!m.complete);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_failed_thread_spawn_releases_the_threads_and_removes_everything() {
    let root = scratch("spawn");
    fsarena_workload::gate::FAIL_SPAWN_AT.with(|f| f.set(Some(1)));
    let outcome = run(&root, "tree:threads=4,levels=1,dirs_per_level=2,files_per_dir=3,fsync=none");
    fsarena_workload::gate::FAIL_SPAWN_AT.with(|f| f.set(None));
    let e = outcome.unwrap_err();
    assert!(e.message.contains("cannot start tree thread 2 of 4"), "{}", e.message);
    assert!(e.partial.iter().all(|m| !m.complete));
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_footprint_counts_threads_files_and_bytes() {
    let w = TreeWorkload::from_spec(
        &Spec::parse("tree:threads=2,levels=2,dirs_per_level=3,files_per_dir=4,file_size=8k,loops=2").unwrap(),
    )
    .unwrap();
    let f = w.footprint();
    // Both loops' files stay until the end.
    assert_eq!((f.threads, f.files, f.bytes_on_target), (2, 2 * 2 * 6 * 4 + 12, 2 * 2 * 6 * 4 * 8192));
}

#[test]
fn loops_are_parts_that_keep_every_loops_files() {
    let root = scratch("loops");
    let w = TreeWorkload::from_spec(&Spec::parse("tree:loops=3").unwrap()).unwrap();
    assert_eq!(w.parts(), ["loop 1", "loop 2", "loop 3"]);
    assert!(TreeWorkload::from_spec(&Spec::parse("tree").unwrap()).unwrap().parts().is_empty());
    let parts = run_parts(&root, "tree:fsmark='-n 6 -D 2 -N 3 -s 100 -S 0 -t 2 -L 3',keep=1").unwrap();
    assert_eq!(parts.len(), 3);
    for (n, m) in parts.iter().enumerate() {
        assert!(m.complete);
        // Each loop: 2 threads × 2 directories × 3 files, under the unsuffixed names.
        assert!(value(m, "files_created") > 0.0, "loop {}", n + 1);
        assert_eq!(count(m, "files_created_items"), 12);
        let used = value(m, "fs_used");
        assert!((0.0..=100.0).contains(&used), "fs_used = {used}");
        assert!(m.metrics.iter().all(|x| !x.name.contains("_loop")), "{:?}", m.metrics);
    }
    // The directories are made in the first loop only.
    assert_eq!(count(&parts[0], "dirs_created_items"), 4);
    assert!(parts[1].metric("dirs_created").is_none() && !parts[1].counters.contains_key("dirs_created_items"));
    for t in 0..2 {
        for d in ["d00", "d01"] {
            let dir = root.join(format!("fsarena-tree/t{t}/{d}"));
            let mut names: Vec<String> =
                std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            names.sort();
            assert_eq!(names, ["f0", "f1", "f2", "l2f0", "l2f1", "l2f2", "l3f0", "l3f1", "l3f2"], "{}", dir.display());
            assert_eq!(std::fs::metadata(dir.join("l3f2")).unwrap().len(), 100);
        }
    }
    // Without keep, the files of every loop are deleted, timed once, with the last loop.
    let parts =
        run_parts(&root, "tree:levels=1,dirs_per_level=2,files_per_dir=3,loops=2,fsync=none,file_size=10").unwrap();
    assert_eq!(parts.len(), 2);
    assert!(parts[0].metric("files_deleted").is_none());
    assert_eq!(count(&parts[1], "files_deleted_items"), 12);
    assert!(value(&parts[1], "files_deleted") > 0.0);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}
