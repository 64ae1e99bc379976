//! The results store against real database files in temporary directories.

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{measurement, report};
use fsarena_store::{RunSummary, Store, StoreError, APPLICATION_ID, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/results.db");
    (dir, path)
}

/// Stores `report` step by step, as the runner does, and finishes it.
fn store_stepwise(store: &mut Store, report: &fsarena_core::run::RunReport, finished: u64) {
    let mut head = report.clone();
    head.results.clear();
    store.begin_run(&head).unwrap();
    for (position, entry) in report.results.iter().enumerate() {
        let mut first = entry.clone();
        first.measurements.truncate(1);
        let result_id = store.add_result(&report.id, position, &first).unwrap();
        for (rep, m) in entry.measurements.iter().enumerate().skip(1) {
            store.add_measurement(result_id, rep as u32, m).unwrap();
        }
    }
    store.finish_run(&report.id, report.complete, finished).unwrap();
}

#[test]
fn a_stored_run_loads_back_equal() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let original = report("1795311954-22865", 1_795_311_954_108);
    store_stepwise(&mut store, &original, 1_795_311_960_000);
    drop(store);

    let store = Store::open(&path).unwrap();
    let loaded = store.load("1795311954-22865").unwrap();
    assert_eq!(loaded, original);
    assert_eq!(loaded.results[1].measurements.len(), 3);

    let summary = store.summary("1795311954-22865").unwrap();
    assert_eq!(
        summary,
        RunSummary {
            id: "1795311954-22865".into(),
            started_unix_ms: 1_795_311_954_108,
            finished_unix_ms: Some(1_795_311_960_000),
            complete: true,
            targets: vec!["ext4".into(), "xfs 'quoted' <b>".into()],
            workloads: vec!["io:rw=randread,bs=4k,time_based".into()],
            results: 2,
            name: None,
            tags: Vec::new(),
        }
    );
    assert_eq!(store.list(None).unwrap(), vec![summary]);
}

#[test]
fn posix_verdicts_load_back_equal() {
    use fsarena_core::{Outcome, Verdict};
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut original = report("1795311954-22866", 1_795_311_954_108);
    let entry = &mut original.results[0];
    entry.workload_kind = "posix".into();
    entry.part = Some("rmdir".into());
    for m in &mut entry.measurements {
        m.verdicts = vec![
            Verdict {
                case: "rmdir.empty_dir.removed".into(),
                security: false,
                outcome: Outcome::Pass,
                expected: String::new(),
                actual: String::new(),
            },
            Verdict {
                case: "rmdir.sticky_other_owner.EPERM".into(),
                security: true,
                outcome: Outcome::Fail,
                expected: "EPERM".into(),
                actual: "success 'quoted' <b>".into(),
            },
            Verdict {
                case: "rmdir.immutable.EPERM".into(),
                security: true,
                outcome: Outcome::Unsupported,
                expected: String::new(),
                actual: "no immutable attribute".into(),
            },
        ];
    }
    store.save(&original, Some(1_795_311_960_000)).unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load("1795311954-22866").unwrap();
    assert_eq!(loaded, original);
    assert_eq!(loaded.results[0].measurements[0].verdicts[1].outcome, Outcome::Fail);
    assert!(loaded.results[1].measurements.iter().all(|m| m.verdicts.is_empty()));
}

#[test]
fn save_stores_a_whole_run_and_remove_deletes_it_with_its_rows() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let original = report("r1", 1000);
    store.save(&original, Some(2000)).unwrap();
    store.save(&report("r2", 3000), None).unwrap();
    assert_eq!(store.load("r1").unwrap(), original);
    assert!(matches!(store.save(&original, None), Err(StoreError::RunExists(id)) if id == "r1"));

    store.remove("r1").unwrap();
    assert!(matches!(store.load("r1"), Err(StoreError::UnknownRun(id)) if id == "r1"));
    assert!(matches!(store.remove("r1"), Err(StoreError::UnknownRun(_))));
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let count =
        |table: &str| -> i64 { conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap() };
    // r2 alone is left: 2 results, 6 measurements, 18 metrics.
    assert_eq!((count("runs"), count("results"), count("measurements"), count("metrics")), (1, 2, 6, 18));
}

#[test]
fn steps_survive_when_the_run_never_finishes() {
    let (_dir, path) = temp_db();
    let full = report("killed-run", 5000);
    {
        let mut store = Store::open(&path).unwrap();
        let mut head = full.clone();
        head.results.clear();
        store.begin_run(&head).unwrap();
        let id = store.add_result("killed-run", 0, &full.results[0]).unwrap();
        assert!(id > 0);
        // Dropped here without finish_run, as when the process dies.
    }
    let store = Store::open(&path).unwrap();
    let listed = store.list(None).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].complete);
    assert_eq!(listed[0].finished_unix_ms, None);
    assert_eq!(listed[0].results, 1);
    let loaded = store.load("killed-run").unwrap();
    assert!(!loaded.complete);
    assert_eq!(loaded.results, vec![full.results[0].clone()]);
}

#[test]
fn writes_name_what_is_wrong() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let r = report("r", 1);
    let e = store.add_result("nope", 0, &r.results[0]).unwrap_err();
    assert!(matches!(&e, StoreError::UnknownRun(id) if id == "nope"), "{e}");
    assert!(matches!(store.add_measurement(999, 0, &measurement(0, 1.0)), Err(StoreError::UnknownResult(999))));
    assert!(matches!(store.finish_run("nope", true, 1), Err(StoreError::UnknownRun(_))));

    store.begin_run(&fsarena_core::run::RunReport { results: vec![], ..r.clone() }).unwrap();
    let id = store.add_result("r", 0, &r.results[0]).unwrap();
    let e = store.add_result("r", 0, &r.results[1]).unwrap_err();
    assert_eq!(e.to_string(), "result position 0 of run 'r' is already stored");
    let e = store.add_measurement(id, 1, &measurement(0, 1.0)).unwrap_err();
    assert_eq!(e.to_string(), format!("repetition 1 of result {id} is already stored"));
    store.add_measurement(id, 3, &measurement(3, 1.0)).unwrap();
    assert_eq!(store.load("r").unwrap().results[0].measurements.len(), 4);
}

#[test]
fn resolve_accepts_ids_prefixes_and_last() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    for (id, started) in [("1700000001-11", 1000), ("1700000002-22", 2000), ("1700000002-2", 3000)] {
        store.save(&report(id, started), Some(started + 1)).unwrap();
    }
    assert_eq!(store.resolve("1700000001-11").unwrap(), "1700000001-11");
    assert_eq!(store.resolve("1700000001").unwrap(), "1700000001-11");
    // A full id wins over being the prefix of another id.
    assert_eq!(store.resolve("1700000002-2").unwrap(), "1700000002-2");
    assert_eq!(store.resolve("last").unwrap(), "1700000002-2");
    assert_eq!(store.resolve("last~0").unwrap(), "1700000002-2");
    assert_eq!(store.resolve("last~1").unwrap(), "1700000002-22");
    assert_eq!(store.resolve("last~2").unwrap(), "1700000001-11");

    let e = store.resolve("last~3").unwrap_err();
    assert!(matches!(&e, StoreError::UnknownRun(s) if s == "last~3"));
    let e = store.resolve("42").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no stored run '42': give a run id, a unique prefix of one, a run name (--name), 'last' \
         or 'last~N'; `fsarena results list` shows them"
    );
    assert!(matches!(store.resolve(""), Err(StoreError::UnknownRun(_))));
    match store.resolve("1700000002") {
        Err(StoreError::Ambiguous(spec, candidates)) => {
            assert_eq!(spec, "1700000002");
            assert_eq!(candidates, vec!["1700000002-2".to_string(), "1700000002-22".to_string()]);
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    let names: Vec<String> = store.list(Some(2)).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(names, ["1700000002-2", "1700000002-22"]);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.bin");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(&e, StoreError::Foreign(p) if p == &path), "{e:?}");
    assert!(e.to_string().contains("random.bin is not an fsarena results database"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    let e = Store::open(dir.path()).unwrap_err();
    assert!(matches!(e, StoreError::Foreign(_)), "a directory: {e:?}");
}

#[test]
fn another_programs_sqlite_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(Store::open(&path), Err(StoreError::Foreign(p)) if p == path));
    assert_eq!(std::fs::read(&path).unwrap(), before, "journal mode and schema left as they were");

    // Someone else's application id, even with a user_version, is foreign too.
    let other = dir.path().join("other-app.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("PRAGMA application_id = 42; PRAGMA user_version = 1;").unwrap();
    }
    assert!(matches!(Store::open(&other), Err(StoreError::Foreign(_))));
}

#[test]
fn a_database_from_a_newer_fsarena_is_refused() {
    let (_dir, path) = temp_db();
    Store::open(&path).unwrap().save(&report("r", 1), None).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        // A newer schema changes the tables (see MIGRATIONS) and the version with them.
        conn.execute_batch(&format!(
            "CREATE TABLE tags (run_id TEXT, tag TEXT); PRAGMA user_version = {}",
            SCHEMA_VERSION + 1
        ))
        .unwrap();
    }
    let e = Store::open(&path).unwrap_err();
    match &e {
        StoreError::Newer { path: p, found, supported } => {
            assert_eq!((p, *found, *supported), (&path, SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        other => panic!("expected Newer, got {other:?}"),
    }
    assert_eq!(
        e.to_string(),
        format!(
            "results database {} was written by a newer fsarena (schema {}); this fsarena reads up to schema {}: \
             upgrade fsarena",
            path.display(),
            SCHEMA_VERSION + 1,
            SCHEMA_VERSION
        )
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION + 1, "never downgraded");
}

#[test]
fn a_new_database_is_marked_in_wal_mode_with_foreign_keys() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), path);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!((mode.as_str(), app, version), ("wal", APPLICATION_ID, SCHEMA_VERSION));
    // An empty file (touch results.db) is taken as a new database.
    let empty = path.with_file_name("empty.db");
    std::fs::write(&empty, b"").unwrap();
    Store::open(&empty).unwrap();
}

/// The v1 fixture: written once by `write_v1_fixture` from exactly this content. Never change
/// it; a later schema adds a fixture of its own.
fn fixture_v1_runs() -> Vec<fsarena_core::run::RunReport> {
    let complete = report("1795311954-22865", 1_795_311_954_108);
    let mut incomplete = report("1795312000-30001", 1_795_312_000_000);
    incomplete.complete = false;
    incomplete.results.truncate(1);
    incomplete.results[0].measurements.truncate(2);
    vec![complete, incomplete]
}

fn fixture_v1_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v1.db")
}

#[test]
#[ignore = "writes tests/fixtures/results-v1.db; run only while SCHEMA_VERSION is 1"]
fn write_v1_fixture() {
    assert_eq!(SCHEMA_VERSION, 1, "the v1 fixture must be written by schema-1 code");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results-v1.db");
    let mut store = Store::open(&path).unwrap();
    let runs = fixture_v1_runs();
    store.save(&runs[0], Some(1_795_311_960_000)).unwrap();
    store.save(&runs[1], None).unwrap();
    drop(store);
    // One self-contained, compact file: back to a rollback journal, then vacuumed.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = DELETE; VACUUM;").unwrap();
    drop(conn);
    std::fs::copy(&path, fixture_v1_path()).unwrap();
}

#[test]
fn results_written_by_schema_1_still_load() {
    // Work on a copy: opening migrates the file and adds WAL files beside it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture_v1_path(), &path).unwrap();
    let store = Store::open(&path).unwrap();
    let expected = fixture_v1_runs();

    let listed = store.list(None).unwrap();
    let ids: Vec<&str> = listed.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["1795312000-30001", "1795311954-22865"]);
    assert!(!listed[0].complete && listed[1].complete);
    assert_eq!(listed[1].finished_unix_ms, Some(1_795_311_960_000));
    for run in &expected {
        assert_eq!(&store.load(&run.id).unwrap(), run);
    }
    let loaded = store.load(&store.resolve("last~1").unwrap()).unwrap();
    assert_eq!(loaded.results[0].measurements[1].metric("read_iops").unwrap().value, 1001.0);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION, "migrated to the current schema");
}

#[test]
fn a_reader_sees_a_schema_1_database_upgraded_without_writing_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(fixture_v1_path(), &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let store = Store::open_read_only(&path).unwrap();
    for run in &fixture_v1_runs() {
        assert_eq!(&store.load(&run.id).unwrap(), run);
    }
    assert_eq!(store.list(None).unwrap().len(), 2);
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the reader wrote to the file");
    let beside: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(beside, ["results.db"], "nothing is created beside it");
}

#[test]
fn names_tags_and_failures_are_stored_and_a_name_finds_the_newest_run_of_it() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut first = report("a1b2c3", 1000);
    first.name = Some("before".into());
    first.tags = vec!["ext4".into(), "nightly".into()];
    store.save(&first, Some(1500)).unwrap();
    let mut second = report("d4e5f6", 2000);
    second.name = Some("before".into());
    second.complete = false;
    second.failure = Some("ext4: No space left on device".into());
    store.save(&second, Some(2500)).unwrap();
    // A run named like another run's id prefix: the exact name wins over the prefix.
    let mut third = report("0a0a0a", 3000);
    third.name = Some("a1".into());
    store.save(&third, Some(3500)).unwrap();

    assert_eq!(store.resolve("before").unwrap(), "d4e5f6", "the newest run of a name");
    assert_eq!(store.resolve("a1").unwrap(), "0a0a0a", "a name before an id prefix");
    assert_eq!(store.resolve("a1b").unwrap(), "a1b2c3", "an id prefix still works");
    assert_eq!(store.load("a1b2c3").unwrap(), first);
    assert_eq!(store.load("d4e5f6").unwrap(), second);
    let listed = store.list(None).unwrap();
    assert_eq!(listed[2].name.as_deref(), Some("before"));
    assert_eq!(listed[2].tags, ["ext4", "nightly"]);
    assert!(matches!(store.resolve("after"), Err(StoreError::UnknownRun(_))));
}

#[test]
#[ignore = "benchmark: prints how long list() takes over 10,000 runs"]
fn list_10000_runs_benchmark() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut run = report("x", 0);
    for r in &mut run.results {
        r.measurements.truncate(1);
    }
    let start = std::time::Instant::now();
    for i in 0..10_000u64 {
        run.id = format!("{}-{i}", 1_700_000_000 + i);
        run.started_unix_ms = 1_700_000_000_000 + i * 1000;
        store.save(&run, Some(run.started_unix_ms + 500)).unwrap();
    }
    eprintln!("stored 10,000 runs in {:?}", start.elapsed());
    let store = Store::open(&path).unwrap();
    let start = std::time::Instant::now();
    let listed = store.list(None).unwrap();
    eprintln!("listed {} runs in {:?}", listed.len(), start.elapsed());
    assert_eq!(listed.len(), 10_000);
    assert_eq!(listed[0].targets.len(), 2);
}

#[test]
fn a_measurement_with_non_finite_values_still_loads() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut run = report("nan", 1);
    run.results.truncate(1);
    run.results[0].measurements.truncate(1);
    run.results[0].measurements[0].metrics[0].value = f64::INFINITY;
    run.results[0].measurements[0].metrics[1].value = f64::NAN;
    store.save(&run, None).unwrap();
    let loaded = store.load("nan").unwrap();
    let metrics = &loaded.results[0].measurements[0].metrics;
    // JSON has no NaN nor infinity: both come back as NaN, and everything else unchanged.
    assert!(metrics[0].value.is_nan() && metrics[1].value.is_nan());
    assert_eq!(metrics[2], run.results[0].measurements[0].metrics[2]);
    drop(store);
    // The metrics table keeps infinity (SQLite stores NaN as NULL).
    let conn = rusqlite::Connection::open(&path).unwrap();
    let values: Vec<Option<f64>> = conn
        .prepare("SELECT value FROM metrics ORDER BY rowid LIMIT 2")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(values, vec![Some(f64::INFINITY), None]);
}

#[test]
fn latency_histograms_are_stored_and_give_back_identical_percentiles() {
    use fsarena_core::{LatencyHistogram, FIO_PERCENTILES};
    let (_dir, path) = temp_db();
    let mut original = report("1795400000-1", 1_795_400_000_000);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for (i, m) in original.results[0].measurements.iter_mut().enumerate() {
        let h = LatencyHistogram::of((0..20_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            2_000 + x % (1_000_000 * (i as u64 + 1))
        }));
        m.add_latency("read", &h);
        m.add_latency("sync", &LatencyHistogram::of([10_000, 20_000]));
        m.count("read_ios", h.len());
        // A second clone with a histogram of its own, as io stores several jobs.
        let mut clone = m.jobs()[0].clone();
        clone.read.clat_histogram = Some(h.clone());
        m.jobs_mut().push(clone);
    }
    let mut store = Store::open(&path).unwrap();
    store.save(&original, Some(1_795_400_001_000)).unwrap();
    let loaded = store.load("1795400000-1").unwrap();
    assert_eq!(loaded, original, "histograms, counters and per-job histograms read back equal");
    for (a, b) in original.results[0].measurements.iter().zip(&loaded.results[0].measurements) {
        let (a, b) = (a.latency("read").unwrap(), b.latency("read").unwrap());
        assert_eq!(a.summary(&FIO_PERCENTILES), b.summary(&FIO_PERCENTILES));
        assert_eq!(a.buckets().collect::<Vec<_>>(), b.buckets().collect::<Vec<_>>());
    }
    // Merging the stored repetitions is exact, as merging the fresh ones.
    let merge = |ms: &[fsarena_core::Measurement]| {
        let mut all = LatencyHistogram::new();
        ms.iter().for_each(|m| all.merge(m.latency("read").unwrap()));
        all
    };
    assert_eq!(merge(&loaded.results[0].measurements), merge(&original.results[0].measurements));
}

#[test]
fn a_results_wall_time_is_stored_when_the_run_finishes() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let mut run = report("walled", 7000);
    // The runner stores repetitions as they finish, before the workload's time is known.
    let mut head = run.clone();
    head.results.clear();
    for (position, entry) in run.results.iter().enumerate() {
        store.add_repetition(&head, position, entry, 0, &entry.measurements[0]).unwrap();
    }
    assert_eq!(store.load("walled").unwrap().results[0].wall_ms, None);
    run.results[0].wall_ms = Some(61_234);
    for e in &mut run.results {
        e.measurements.truncate(1);
    }
    assert!(store.finish(&run, 9000).unwrap());
    let loaded = store.load("walled").unwrap();
    assert_eq!(loaded.results.iter().map(|e| e.wall_ms).collect::<Vec<_>>(), vec![Some(61_234), None]);
    // A whole run saved at once keeps it too.
    let mut saved = report("saved", 8000);
    saved.results[1].wall_ms = Some(5);
    store.save(&saved, Some(8100)).unwrap();
    assert_eq!(store.load("saved").unwrap().results[1].wall_ms, Some(5));
}
