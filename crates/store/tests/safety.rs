//! The store refuses what it must not write to and reads without leaving anything behind:
//! damaged pages and header bytes, read-only and immutable files, read-only mounts, refused
//! paths, and runs that stored nothing. Run as root (`make test`): the tests mount and chattr.

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::report;
use fsarena_store::{Store, StoreError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A database with `runs` runs stored and closed (everything checkpointed into the main file,
/// no `-wal` left), in a fresh directory.
fn stored_db(runs: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut store = Store::open(&path).unwrap();
    for i in 0..runs {
        store.save(&report(&format!("run-{i}"), 1_700_000_000_000 + i), Some(1_700_000_000_500 + i)).unwrap();
    }
    drop(store);
    (dir, path)
}

fn run(cmd: &str, args: &[&str]) {
    let ok = Command::new(cmd).args(args).status().unwrap().success();
    assert!(ok, "{cmd} {args:?} failed: these tests run as root (make test)");
}

#[test]
fn a_database_with_a_damaged_page_is_refused_for_writing_and_reading() {
    let (dir, path) = stored_db(40);
    let mut bytes = std::fs::read(&path).unwrap();
    let pages = bytes.len() / 4096;
    assert!(pages > 8, "enough pages to damage one in the middle: {pages}");
    // Garbage over a page in the middle: a table or index page of stored results.
    let page = pages / 2;
    bytes[page * 4096..(page + 1) * 4096].fill(0xA5);
    std::fs::write(&path, &bytes).unwrap();
    let before = names(dir.path());

    let e = Store::open(&path).unwrap_err();
    assert!(matches!(&e, StoreError::Damaged { path: p, .. } if p == &path), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(&path.display().to_string()) && text.contains("is damaged"), "{text}");
    assert!(text.contains("quick_check") || text.contains("malformed"), "SQLite's finding: {text}");
    assert!(!text.contains('\n'), "one line: {text}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "left untouched");
    assert_eq!(names(dir.path()), before, "no lock file left, no journal");

    let e = Store::open_read_only(&path).unwrap_err();
    assert!(matches!(e, StoreError::Damaged { .. }), "readers report it too, not garbage: {e:?}");
}

#[test]
fn a_flipped_schema_byte_is_damage_not_a_newer_fsarena() {
    // user_version is the big-endian u32 at offset 60 of the file; application_id at 68.
    for (offset, flip) in [(60, 0x01), (61, 0x80), (63, 0x02), (69, 0x10)] {
        let (dir, path) = stored_db(1);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[offset] ^= flip;
        std::fs::write(&path, &bytes).unwrap();
        let before = names(dir.path());
        for e in [Store::open(&path).unwrap_err(), Store::open_read_only(&path).unwrap_err()] {
            assert!(matches!(e, StoreError::Damaged { .. }), "byte {offset}: {e:?}");
            assert!(!e.to_string().contains("upgrade fsarena") && !e.to_string().contains("written by a newer"), "{e}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "byte {offset}: left untouched");
        assert_eq!(names(dir.path()), before, "byte {offset}: nothing created beside it");
    }
}

#[test]
fn reading_creates_no_lock_file_and_no_wal_or_shm() {
    let (dir, path) = stored_db(2);
    assert_eq!(names(dir.path()), ["results.db", "results.db.lock"]);
    std::fs::remove_file(dir.path().join("results.db.lock")).unwrap();
    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(store.list(None).unwrap().len(), 2);
    assert_eq!(store.load("run-1").unwrap(), report("run-1", 1_700_000_000_001));
    assert_eq!(names(dir.path()), ["results.db"], "while open");
    drop(store);
    assert_eq!(names(dir.path()), ["results.db"], "after");

    // A missing path stays missing, with no directory made for it.
    let missing = dir.path().join("nested/none.db");
    assert!(matches!(Store::open_read_only(&missing), Err(StoreError::Missing(_))));
    assert_eq!(names(dir.path()), ["results.db"]);
}

#[test]
fn reading_while_a_run_writes_sees_what_it_committed() {
    let (dir, path) = stored_db(1);
    let mut writer = Store::open(&path).unwrap();
    writer.save(&report("live", 1_800_000_000_000), None).unwrap();
    assert!(dir.path().join("results.db-wal").exists(), "the writer's log holds the new run");
    let reader = Store::open_read_only(&path).unwrap();
    let ids: Vec<String> = reader.list(None).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(ids, ["live", "run-0"]);
    writer.save(&report("later", 1_800_000_000_001), None).unwrap();
    assert_eq!(reader.list(None).unwrap().len(), 3, "a later read sees the later commit");
}

#[test]
fn a_refused_path_gets_nothing_created_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("hostname");
    std::fs::write(&foreign, b"myhost\n").unwrap();
    assert!(matches!(Store::open(&foreign), Err(StoreError::Foreign(_))));
    assert!(matches!(Store::open_read_only(&foreign), Err(StoreError::Foreign(_))));
    let sub = dir.path().join("a-directory");
    std::fs::create_dir(&sub).unwrap();
    assert!(matches!(Store::open(&sub), Err(StoreError::Foreign(_))));
    assert_eq!(names(dir.path()), ["a-directory", "hostname"]);
    assert_eq!(std::fs::read(&foreign).unwrap(), b"myhost\n");

    // A symbolic link planted at the lock file's name is not followed.
    let (dir, path) = stored_db(1);
    std::fs::remove_file(dir.path().join("results.db.lock")).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("results.db.lock")).unwrap();
    assert!(matches!(Store::open(&path), Err(StoreError::Unwritable { .. })));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    std::fs::remove_file(dir.path().join("results.db.lock")).unwrap();

    // Nor one at SQLite's own files beside it, which SQLite would follow and write through;
    // nor a hard link there.
    for (suffix, hard) in [("-wal", false), ("-shm", false), ("-journal", false), ("-wal", true)] {
        let sidecar = dir.path().join(format!("results.db{suffix}"));
        if hard {
            std::fs::hard_link(&victim, &sidecar).unwrap();
        } else {
            std::os::unix::fs::symlink(&victim, &sidecar).unwrap();
        }
        let e = Store::open(&path).unwrap_err();
        assert!(matches!(e, StoreError::Sidecar { .. }), "{suffix}: {e:?}");
        if suffix == "-wal" {
            // A -wal present means SQLite's ordinary read-only mode, with its -shm.
            assert!(matches!(Store::open_read_only(&path), Err(StoreError::Sidecar { .. })));
        }
        std::fs::remove_file(&sidecar).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep", "{suffix}");
    }
    assert_eq!(names(dir.path()), ["results.db", "victim"]);
}

/// Sets or clears the immutable attribute.
fn chattr(flag: &str, path: &Path) {
    run("chattr", &[flag, path.to_str().unwrap()]);
}

#[test]
fn an_immutable_database_is_refused_for_writing_and_read_as_it_is() {
    let (dir, path) = stored_db(2);
    std::fs::remove_file(dir.path().join("results.db.lock")).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    chattr("+i", &path);
    let write = Store::open(&path);
    let read = Store::open_read_only(&path).map(|s| s.list(None).map(|l| l.len()));
    let after = names(dir.path());
    chattr("-i", &path);

    let e = write.unwrap_err();
    assert!(matches!(e, StoreError::Unwritable { .. }), "{e:?}");
    assert!(e.to_string().contains("cannot be written (Operation not permitted"), "{e}");
    assert_eq!(read.unwrap().unwrap(), 2);
    assert_eq!(after, ["results.db"], "no lock file, no -wal, no -shm");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// A read-only bind mount of a directory, unmounted on drop.
struct ReadOnlyBind(PathBuf);

impl ReadOnlyBind {
    fn new(source: &Path, target: &Path) -> Self {
        std::fs::create_dir_all(target).unwrap();
        run("mount", &["--bind", source.to_str().unwrap(), target.to_str().unwrap()]);
        let bind = Self(target.to_path_buf());
        run("mount", &["-o", "remount,bind,ro", target.to_str().unwrap()]);
        bind
    }
}

impl Drop for ReadOnlyBind {
    fn drop(&mut self) {
        // Lazily if still busy: a failed test must not leave the mount behind.
        if !Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success()) {
            let _ = Command::new("umount").arg("--lazy").arg(&self.0).status();
        }
    }
}

#[test]
fn a_database_on_a_read_only_mount_is_read_and_refused_for_writing() {
    let (dir, _) = stored_db(3);
    std::fs::remove_file(dir.path().join("results.db.lock")).unwrap();
    let mount = tempfile::tempdir().unwrap();
    let before = names(dir.path());
    {
        let ro = ReadOnlyBind::new(dir.path(), mount.path());
        let path = ro.0.join("results.db");
        let store = Store::open_read_only(&path).unwrap();
        assert_eq!(store.list(None).unwrap().len(), 3);
        assert!(store.load("run-2").is_ok());
        let e = Store::open(&path).unwrap_err();
        assert!(matches!(e, StoreError::Unwritable { .. }), "{e:?}");
        assert!(e.to_string().contains("Read-only file system"), "{e}");
        let e = Store::open(&ro.0.join("new/results.db")).unwrap_err();
        assert!(matches!(e, StoreError::Unwritable { .. }), "{e:?}");
    }
    assert_eq!(names(dir.path()), before, "nothing created");
}

#[test]
fn a_killed_runs_log_on_a_read_only_mount_is_still_read() {
    // The -wal and -shm of a writer that never closed (killed), then the media made read-only.
    let (dir, path) = stored_db(1);
    let mut writer = Store::open(&path).unwrap();
    writer.save(&report("in-the-log", 1_800_000_000_000), None).unwrap();
    let mount = tempfile::tempdir().unwrap();
    let ro = ReadOnlyBind::new(dir.path(), mount.path());
    let reader = Store::open_read_only(&ro.0.join("results.db")).unwrap();
    let ids: Vec<String> = reader.list(None).unwrap().into_iter().map(|r| r.id).collect();
    assert!(ids.contains(&"run-0".to_string()), "{ids:?}");
    // SQLite keeps a closed connection's descriptor while another connection of the process
    // holds locks on the same file: the writer goes first, then the mount is free.
    drop(reader);
    drop(writer);
    drop(ro);
}

#[test]
fn a_run_is_stored_with_its_first_measurement_and_not_before() {
    let (_dir, path) = stored_db(0);
    let mut store = Store::open(&path).unwrap();
    let full = report("lazy", 1_800_000_000_000);
    let mut head = full.clone();
    head.results.clear();
    // Refused or failed before measuring: finishing stores nothing, so no empty run is `last`.
    assert!(!store.finish(&head, 1_800_000_000_100).unwrap());
    assert!(store.list(None).unwrap().is_empty());

    store.add_repetition(&head, 0, &full.results[0], 0, &full.results[0].measurements[0]).unwrap();
    store.add_repetition(&head, 0, &full.results[0], 1, &full.results[0].measurements[1]).unwrap();
    let listed = store.list(None).unwrap();
    assert_eq!((listed.len(), listed[0].complete, listed[0].results), (1, false, 1));
    // The second result failed before measuring: finishing stores it without measurements.
    let mut ended = head.clone();
    ended.results = vec![full.results[0].clone(), full.results[1].clone()];
    ended.results[0].measurements.truncate(2);
    ended.results[1].measurements.clear();
    assert!(store.finish(&ended, 1_800_000_000_100).unwrap());
    assert_eq!(store.load("lazy").unwrap(), ended);

    // Another run that happens to have the same id is never added to.
    let mut other = head.clone();
    other.started_unix_ms += 1;
    let e = store.add_repetition(&other, 5, &full.results[0], 0, &full.results[0].measurements[0]).unwrap_err();
    assert!(matches!(e, StoreError::RunExists(_)), "{e:?}");
}
