//! The first test tier: the whole pipeline — command line, plan, sweep, runner, store and
//! report — in this process, without root, mounts or reference tools: a `dir:` target in a
//! scratch directory, the `null` engine (no I/O: only fsarena's own path) and small real
//! metadata work. The root, fio and Chromium tests are the integration tests in tests/.

// Test code: a failed unwrap is a failed test with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::ExitCode;

/// A scratch directory owned by whoever runs the tests, removed on drop.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("fsarena-inproc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir(&path).unwrap();
        Self(path)
    }
    fn join(&self, p: &str) -> String {
        self.0.join(p).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fsarena(args: &[&str]) -> ExitCode {
    fsarena_cli::main_with(std::iter::once("fsarena").chain(args.iter().copied()))
}

fn stored(db: &str) -> fsarena_core::run::RunReport {
    let store = fsarena_store::Store::open_read_only(Path::new(db)).unwrap();
    let id = store.resolve("last").unwrap();
    store.load(&id).unwrap()
}

#[test]
fn a_sweep_runs_stores_and_reads_back_without_root() {
    let s = Scratch::new("sweep");
    std::fs::create_dir(s.0.join("target")).unwrap();
    let (target, db, workdir) = (format!("dir:path={}", s.join("target")), s.join("results.db"), s.join("work"));
    let code = fsarena(&[
        "run",
        "--target",
        &target,
        "--workload",
        "io:ioengine=null,rw='read,write',numjobs='1,2',size=1m,bs=4k",
        "--workload",
        "meta:items=20,files_only=1",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--no-drop-caches",
        "--name",
        "inproc",
        "--db",
        &db,
        "--workdir",
        &workdir,
        "--output-format",
        "json",
        "-q",
    ]);
    assert_eq!(code, ExitCode::SUCCESS);
    let run = stored(&db);
    assert_eq!(run.name.as_deref(), Some("inproc"));
    assert!(run.complete);
    // Four sweep points of io, then meta: five results, two repetitions each.
    let points: Vec<String> = run.results.iter().map(|r| r.variant()).collect();
    assert_eq!(points, ["rw=read numjobs=1", "rw=read numjobs=2", "rw=write numjobs=1", "rw=write numjobs=2", ""]);
    for r in &run.results {
        assert_eq!(r.measurements.len(), 2, "{}", r.title());
        assert!(r.measurements.iter().all(|m| m.complete));
    }
    // The null engine moves no data but counts every I/O: 1 MiB of 4 KiB blocks per clone.
    let ios = |i: usize, op: &str| run.results[i].measurements[0].latency(op).map_or(0, |h| h.len());
    assert_eq!((ios(0, "read"), ios(1, "read"), ios(3, "write")), (256, 512, 512));
    assert!(run.results[4].measurements[0].metric("file_creation").is_some());
    // Nothing left in the target or the work directory but the lock and the state log's home.
    assert_eq!(std::fs::read_dir(s.0.join("target")).unwrap().count(), 0);
}

#[test]
fn bad_input_is_exit_2_and_creates_nothing() {
    let s = Scratch::new("bad");
    let target = format!("dir:path={}", s.0.display());
    let db = s.join("results.db");
    for workload in ["io:numjobs='1,,2',size=1m", "io:size=1m,colour=red", "nosuchkind"] {
        let code =
            fsarena(&["run", "--target", &target, "--workload", workload, "--db", &db, "--workdir", &s.join("w")]);
        assert_eq!(code, ExitCode::from(2), "{workload}");
    }
    assert_eq!(std::fs::read_dir(&s.0).unwrap().count(), 0, "nothing created");
}
