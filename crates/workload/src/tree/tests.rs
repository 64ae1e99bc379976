//! Runs of the `tree` workload in a scratch directory.

use super::*;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    let path = base.join(format!("fsarena-tree-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    path
}

fn run(root: &Path, spec: &str) -> Result<Measurement, WorkloadError> {
    let stop = AtomicBool::new(false);
    let env = RunEnv { root, stop: &stop, progress: &|_| {}, keep_files: false, drop_caches: None };
    TreeWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap().run(&env).map(crate::one)
}

fn value(m: &Measurement, name: &str) -> f64 {
    m.metric(name).unwrap_or_else(|| panic!("no {name} in {:?}", m.metrics)).value
}

#[test]
fn a_size_sweep_counts_every_file_and_leaves_nothing() {
    let root = scratch("sweep");
    let m = run(
        &root,
        "tree:levels=2,dirs_per_level=3,files_per_dir=4,threads=2,file_size='1k,6k',write_size=4k,fsync=none",
    )
    .unwrap();
    assert!(m.complete);
    for size in ["1k", "6k"] {
        assert_eq!(value(&m, &format!("files_created_items_{size}")), 48.0);
        assert_eq!(value(&m, &format!("dirs_created_items_{size}")), 12.0);
        assert_eq!(value(&m, &format!("files_deleted_items_{size}")), 48.0);
        for name in ["files_created", "dirs_created", "write_bw", "files_deleted", "create_lat_p99", "delete_lat_p50"] {
            assert!(value(&m, &format!("{name}_{size}")) > 0.0, "{name}_{size}");
        }
    }
    // write_bw / files_created is the file size.
    let per_file = value(&m, "write_bw_6k") / value(&m, "files_created_6k");
    assert!((per_file - 6144.0).abs() < 1.0, "{per_file}");
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn kept_trees_have_the_shape_and_sizes_asked_for() {
    let root = scratch("keep");
    let m = run(&root, "tree:levels=3,dirs_per_level=2,files_per_dir=5,file_size=3000,fsync=end,keep=1").unwrap();
    assert_eq!(m.metric("files_created").unwrap().unit, "files/s");
    assert!(m.metric("files_deleted").is_none(), "keep=1 deletes nothing, as fs_mark -k");
    assert_eq!(value(&m, "files_created_items"), 30.0);
    assert_eq!(value(&m, "dirs_created_items"), 6.0);
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
    assert_eq!(value(&m, "files_created_items"), 2.0);
    // ... and a run stopped before it starts is incomplete and leaves nothing.
    let stop = AtomicBool::new(true);
    let env = RunEnv { root: &root, stop: &stop, progress: &|_| {}, keep_files: false, drop_caches: None };
    let m = crate::one(TreeWorkload::from_spec(&Spec::parse("tree").unwrap()).unwrap().run(&env).unwrap());
    assert!(!m.complete);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_failed_thread_spawn_releases_the_threads_and_removes_everything() {
    let root = scratch("spawn");
    crate::gate::FAIL_SPAWN_AT.with(|f| f.set(Some(1)));
    let outcome = run(&root, "tree:threads=4,levels=1,dirs_per_level=2,files_per_dir=3,fsync=none");
    crate::gate::FAIL_SPAWN_AT.with(|f| f.set(None));
    let e = outcome.unwrap_err();
    assert!(e.message.contains("cannot start tree thread 2 of 4"), "{}", e.message);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_footprint_counts_threads_files_and_bytes() {
    let w = TreeWorkload::from_spec(
        &Spec::parse("tree:threads=2,levels=2,dirs_per_level=3,files_per_dir=4,file_size='1k,8k'").unwrap(),
    )
    .unwrap();
    let f = w.footprint();
    assert_eq!((f.threads, f.files, f.bytes_on_target), (2, 2 * 6 * 4 + 12, 2 * 6 * 4 * 8192));
}

#[test]
fn loops_keep_every_loops_files_and_report_each_loop() {
    let root = scratch("loops");
    let m = run(&root, "tree:fsmark='-n 6 -D 2 -N 3 -s 100 -S 0 -t 2 -L 3',keep=1").unwrap();
    assert!(m.complete);
    for n in 1..=3 {
        assert!(value(&m, &format!("files_created_loop{n}")) > 0.0, "loop {n}");
        let used = value(&m, &format!("fs_used_loop{n}"));
        assert!((0.0..=100.0).contains(&used), "fs_used_loop{n} = {used}");
    }
    assert!(m.metric("files_created_loop4").is_none());
    // 2 threads × 2 directories × 3 files, three times; the directories made once.
    assert_eq!(value(&m, "files_created_items"), 36.0);
    assert_eq!(value(&m, "dirs_created_items"), 4.0);
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
    // Without keep, the files of every loop are deleted, and that deletion is timed.
    let m = run(&root, "tree:levels=1,dirs_per_level=2,files_per_dir=3,loops=2,fsync=none,file_size=10").unwrap();
    assert_eq!(value(&m, "files_created_items"), 12.0);
    assert_eq!(value(&m, "files_deleted_items"), 12.0);
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_step_lasts_from_the_earliest_start_to_the_latest_end() {
    // Two threads of 50 files each that do not overlap: 100 files in 20 ms, not in the 10 ms
    // of either thread's own clock; loops add their spans.
    let base = std::time::Instant::now();
    let ms = |n| base + std::time::Duration::from_millis(n);
    let part = |ops| StepTotal { ops, ..StepTotal::new() };
    let mut t = StepTotal::new();
    t.add_thread(part(50), ms(0), ms(10));
    t.add_thread(part(50), ms(10), ms(20));
    assert_eq!((t.ops, t.ns), (100, 20_000_000));
    let mut second = StepTotal::new();
    second.add_thread(part(100), ms(30), ms(35));
    t.add_loop(second);
    assert_eq!((t.ops, t.ns), (200, 25_000_000));
}
