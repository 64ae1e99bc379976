//! A SIGKILL in the middle of a stored run loses no committed step and leaves a database that
//! passes `PRAGMA integrity_check`.
//!
//! The writer is this test binary itself, re-run to run the ignored `sigkill_child_writer`
//! with an environment variable naming its database: ignored, so that a plain `cargo test`
//! does not count it as a passing test, and failing when run without its parent.

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use fsarena_store::Store;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_DB: &str = "FSARENA_STORE_TEST_CHILD_DB";
const RUN_ID: &str = "1795311954-4242";

/// Steps the parent waits for before killing the writer.
const STEPS_BEFORE_KILL: usize = 40;

#[test]
#[ignore = "the writer that a_sigkilled_writer_leaves_an_intact_database_with_every_committed_step runs and kills"]
fn sigkill_child_writer() {
    let path = std::env::var_os(CHILD_DB)
        .unwrap_or_else(|| panic!("the writer of the SIGKILL test: run by its parent, with {CHILD_DB} set"));
    let mut store = Store::open(Path::new(&path)).unwrap();
    let template = common::report(RUN_ID, 1_795_311_954_000);
    let mut head = template.clone();
    head.results.clear();
    store.begin_run(&head).unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "committed begin").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut position = 0usize;
    // Never ends by itself within the test's patience: the parent kills it.
    while Instant::now() < deadline {
        let mut entry = template.results[position % 2].clone();
        entry.target_label = format!("target-{position}");
        let measurements = std::mem::take(&mut entry.measurements);
        let result_id = store.add_result(RUN_ID, position, &entry).unwrap();
        for (rep, m) in measurements.iter().enumerate() {
            store.add_measurement(result_id, rep as u32, m).unwrap();
        }
        writeln!(out, "committed {position}").unwrap();
        out.flush().unwrap();
        position += 1;
    }
}

#[test]
fn a_sigkilled_writer_leaves_an_intact_database_with_every_committed_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sigkill_child_writer", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut committed: Option<usize> = None;
    let mut began = false;
    for line in stdout.lines() {
        let line = line.unwrap();
        // libtest prints the test's name without a newline before the first line.
        match line.split_once("committed ").map(|(_, step)| step) {
            Some("begin") => began = true,
            Some(n) => committed = Some(n.parse().unwrap()),
            None => continue,
        }
        if committed.is_some_and(|n| n + 1 >= STEPS_BEFORE_KILL) {
            break;
        }
    }
    // Child::kill sends SIGKILL on Unix: no destructor, no rollback, no checkpoint runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the writer was killed, not finished");
    assert!(began, "the writer never started");
    let committed = committed.expect("the writer committed no step") + 1;

    // The raw file first, as any SQLite client sees it after the crash.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        let fk: Option<String> = conn
            .query_row("PRAGMA foreign_key_check", [], |r| r.get(0))
            .map(Some)
            .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })
            .unwrap();
        assert_eq!(fk, None, "no orphaned rows");
    }
    let store = Store::open(&path).unwrap();
    let run = store.load(RUN_ID).unwrap();
    assert!(!run.complete, "never finished, so incomplete");
    // Every step the writer reported is there, whole. The step it was in may be there in
    // part (a result with some of its repetitions): each write is its own transaction.
    assert!(run.results.len() >= committed, "{} results stored, {committed} reported", run.results.len());
    for (position, entry) in run.results.iter().enumerate().take(committed) {
        assert_eq!(entry.target_label, format!("target-{position}"));
        assert_eq!(entry.measurements.len(), 3, "result {position} has all its repetitions");
    }
    let summary = store.summary(RUN_ID).unwrap();
    assert!(!summary.complete);
    assert_eq!(summary.finished_unix_ms, None);
}
