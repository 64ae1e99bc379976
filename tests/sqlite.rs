//! The `sqlite` workload end to end: Phoronix's autocommit inserts on tmpfs and ext4 in both
//! journal families, every row in the table and nothing left behind; the pragmas reach the
//! database file; the mixed phase's writers and readers all run; bad values exit 2.

use crate::util::{run, stderr, stdout, Scratch};

/// The "SQLite ...: N rows in the table" lines of a human report.
fn table_rows(text: &str) -> Vec<u64> {
    text.lines()
        .filter(|l| l.starts_with("SQLite ") && l.contains(" rows in the table"))
        .filter_map(|l| l.split(": ").nth(1)?.split(' ').next()?.parse().ok())
        .collect()
}

/// The count column of the `op` lines of the report's operation table.
fn op_counts(text: &str, op: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words.first() == Some(&op) && l.starts_with("  ")).then(|| words.get(1)?.parse().ok())?
        })
        .collect()
}

#[test]
fn inserts_on_tmpfs_and_ext4_in_delete_and_wal_land_every_row() {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--target",
        "ext4:size=512m",
        "--workload",
        "sqlite:inserts=500,journal_mode='delete,wal'",
        "--repeat",
        "1",
        "--no-store",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(table_rows(&text), vec![500; 4], "two targets × two journal modes: {text}");
    assert_eq!(op_counts(&text, "insert"), vec![500; 4], "{text}");
    assert!(text.contains("journal_mode=wal") && text.contains("journal_mode=delete"), "{text}");
}

#[test]
fn the_database_is_removed_unless_kept_and_carries_the_pragmas() {
    let dir = Scratch::new("sqlite-keep");
    let out = run(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "sqlite:inserts=200,synchronous=off",
        "--repeat",
        "1",
        "--no-store",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(table_rows(&stdout(&out)), vec![200]);
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());

    let spec = "sqlite:inserts=50,synchronous=off,page_size=8k,journal_mode=wal,keep=1";
    let out = run(&["run", "--target", &dir.spec(), "--workload", spec, "--repeat", "1", "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let db = dir.leftovers().into_iter().find(|p| p.ends_with("sqlite/fsarena.db")).expect("the kept database");
    let header = std::fs::read(&db).unwrap();
    assert!(header.starts_with(b"SQLite format 3\0"), "{db:?}");
    // The file header: page size (big-endian) at 16, write and read format versions (2: WAL).
    assert_eq!(u16::from_be_bytes([header[16], header[17]]), 8192);
    assert_eq!((header[18], header[19]), (2, 2));
}

#[test]
fn mixed_writers_and_readers_all_run_for_two_seconds() {
    let out = run(&[
        "run",
        "--target",
        "tmpfs:size=256m",
        "--workload",
        "sqlite:mode=mixed,writers=2,readers=2,runtime=2s,batch=20,prefill=1000,journal_mode=wal,synchronous=normal",
        "--repeat",
        "1",
        "--no-store",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for op in ["insert", "point", "range"] {
        let n = op_counts(&text, op);
        assert!(n.len() == 1 && n[0] > 0, "{op}: {text}");
    }
    assert!(text.contains("inserts_per_s") && text.contains("queries_per_s"), "{text}");
    let rows = table_rows(&text)[0];
    let inserted: u64 = text
        .lines()
        .find_map(|l| l.split("(transactions; ").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or(op_counts(&text, "insert")[0] * 20);
    assert_eq!(rows, 1000 + inserted, "{text}");
}

#[test]
fn bad_sqlite_input_exits_2_naming_the_value() {
    let dir = Scratch::new("sqlite-bad");
    for (workload, want) in [
        (
            "sqlite:page_size=1000",
            "page_size=1000: '1000' is not a SQLite page size: expected a power of two from 512 to 65536",
        ),
        ("sqlite:journal_mode=rollback", "expected delete, truncate, persist, wal, memory, off"),
        ("sqlite:readers=2", "readers= is an option of mode=mixed"),
    ] {
        let out = run(&["run", "--target", &dir.spec(), "--workload", workload]);
        assert_eq!(out.status.code(), Some(2), "{workload}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{workload}: {}", stderr(&out));
        assert!(dir.leftovers().is_empty());
    }
}
