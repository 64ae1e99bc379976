//! `crash:app=sqlite`: an application's own promises across a crash. SQLite in rollback
//! (`journal_mode=DELETE`) and WAL mode: a table is made (mark 0), then [`TXNS`] transactions
//! each commit one row (mark k once commit k has returned). Every crash state must open as a
//! database that passes `PRAGMA integrity_check`, and the rows present are always a prefix
//! 1..=j (a transaction is all or nothing, in order). What survives is what SQLite documents
//! for the mode (https://sqlite.org/pragma.html#pragma_synchronous):
//! - WAL, `synchronous=FULL`: every commit is durable once it returns (rows 1..=k at mark k);
//! - rollback, `synchronous=EXTRA`: the same (the directory is synced after the journal is
//!   unlinked, which is the commit);
//! - rollback, `synchronous=FULL`: the journal's unlink is not synced, so a power cut may roll
//!   the last commit back; it is durable once the next one has synced the directory (rows
//!   1..=k-1 at mark k, the table from mark 1).
//!
//! `crash:app=kv`: the `kv` workload's store (fjall) with `sync=true`: [`TXNS`] puts, a mark
//! after each returns; once mark k is promised, keys 1..=k are there with their values' sizes
//! and the store opens.

use super::oracle::Violation;
use fsarena_db::apps::{kv_synced, read_rows, Sqlite, Unreadable};
use std::path::Path;

/// Transactions a workload commits.
pub(crate) const TXNS: u32 = 8;

/// Bytes of a row's value: more than a page, so a row spans pages.
const ROW: usize = 5000;

/// The file the database lives in.
const DB: &str = "app.db";

/// SQLite's journal modes the workloads use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Journal {
    /// `journal_mode=DELETE`, `synchronous=FULL`.
    Rollback,
    /// `journal_mode=DELETE`, `synchronous=EXTRA`.
    RollbackExtra,
    /// `journal_mode=WAL`, `synchronous=FULL`.
    Wal,
}

/// All three, in their fixed order.
pub(crate) const ALL: [Journal; 3] = [Journal::Rollback, Journal::RollbackExtra, Journal::Wal];

/// The `kv` store's workload's name.
pub(crate) const KV: &str = "kv.sync";

/// The store's directory.
const KV_DIR: &str = "kv";

/// Key `k`.
fn key(k: u32) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..4].copy_from_slice(b"key.");
    out[4..8].copy_from_slice(&k.to_be_bytes());
    out
}

/// Opens the store in `root` and puts keys 1..=[`TXNS`], calling `mark(k)` after put k.
pub(crate) fn kv_run(root: &Path, mark: &mut dyn FnMut(u32) -> Result<(), String>) -> Result<(), String> {
    let store = kv_synced(&root.join(KV_DIR))?;
    mark(0)?;
    for k in 1..=TXNS {
        store.put(&key(k), &row(k))?;
        mark(k)?;
    }
    Ok(())
}

/// Checks a recovered store against the marks the state must honour.
pub(crate) fn kv_check(root: &Path, marks: &[u32]) -> Vec<Violation> {
    let want = marks.iter().copied().max().unwrap_or(0);
    if want == 0 {
        // Nothing acknowledged yet.
        return Vec::new();
    }
    let posix = |promised: String, found: String| vec![Violation { level: "posix", promised, found }];
    let store = match kv_synced(&root.join(KV_DIR)) {
        Ok(s) => s,
        Err(e) => return posix(format!("the store opens (put {want} was acknowledged)"), e),
    };
    for k in 1..=want {
        match store.get(&key(k)) {
            Ok(Some(n)) if n == ROW => {}
            Ok(Some(n)) => return posix(format!("key {k}: {ROW} bytes"), format!("{n} bytes")),
            Ok(None) => return posix(format!("key {k} (acknowledged before mark {want})"), format!("no key {k}")),
            Err(e) => return posix(format!("key {k} reads"), e),
        }
    }
    Vec::new()
}

impl Journal {
    /// The generated workload's name (`only=` takes it).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Rollback => "sqlite.rollback",
            Self::RollbackExtra => "sqlite.rollback_extra",
            Self::Wal => "sqlite.wal",
        }
    }

    fn mode(self) -> &'static str {
        match self {
            Self::Rollback | Self::RollbackExtra => "DELETE",
            Self::Wal => "WAL",
        }
    }

    fn synchronous(self) -> &'static str {
        match self {
            Self::RollbackExtra => "EXTRA",
            _ => "FULL",
        }
    }

    /// The last commit durable when mark `k` is: SQLite's promise for the mode.
    fn durable(self, k: u32) -> Option<u32> {
        match self {
            Self::Rollback => k.checked_sub(1),
            _ => Some(k),
        }
    }

    /// What the workload does, for the findings.
    pub(crate) fn sequence(self) -> String {
        format!(
            "sqlite journal_mode={}, synchronous={}: table made, mark 0; {TXNS} transactions of one {ROW}-byte row each, mark k after commit k",
            self.mode(),
            self.synchronous()
        )
    }
}

/// Row `k`'s value: deterministic, different for every row.
fn row(k: u32) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(u64::from(k) * 0x9e37_79b9);
    (0..ROW).map(|_| rng.u8(..)).collect()
}

/// Makes the database in `root` and its table (committed, fsynced by SQLite).
pub(crate) fn setup(root: &Path, j: Journal) -> Result<Sqlite, String> {
    Sqlite::create(&root.join(DB), j.mode(), j.synchronous())
}

/// Commits transaction `k`: row `k`.
pub(crate) fn commit(db: &Sqlite, k: u32) -> Result<(), String> {
    db.commit(k, &row(k))
}

/// Checks a recovered database against the marks the state must honour.
pub(crate) fn check(root: &Path, j: Journal, marks: &[u32]) -> Vec<Violation> {
    let posix = |promised: String, found: String| vec![Violation { level: "posix", promised, found }];
    // Mark 0 is the table's commit, mark k row k's: the last commit durable, if any.
    let promised = marks.iter().max().and_then(|&k| j.durable(k));
    let path = root.join(DB);
    if !path.exists() {
        return match promised {
            Some(_) => posix("the database exists (its table was committed)".into(), format!("no {DB}")),
            None => Vec::new(),
        };
    }
    // Reading runs SQLite's own recovery (a hot journal rolled back, the WAL read).
    let rows = match read_rows(&path) {
        Ok(Some(rows)) => rows,
        Ok(None) => {
            return match promised {
                Some(_) => posix("table t exists (committed at mark 0)".into(), "no table t".into()),
                None => Vec::new(),
            }
        }
        Err(Unreadable::Open(e)) => return posix("the database opens".into(), e),
        Err(Unreadable::Integrity(found)) => return posix("PRAGMA integrity_check says ok".into(), found),
        Err(Unreadable::Rows(e)) => return posix("table t reads".into(), e),
    };
    let keys: Vec<u32> = rows.iter().map(|(k, _)| *k).collect();
    if keys.iter().enumerate().any(|(i, k)| *k != i as u32 + 1) {
        return posix(
            "the committed rows are 1..=j for some j (all or nothing, in order)".into(),
            format!("rows {keys:?}"),
        );
    }
    if let Some((k, _)) = rows.iter().find(|(k, v)| *v != row(*k)) {
        return posix(format!("row {k} holds what was committed"), "other bytes".into());
    }
    let want = promised.unwrap_or(0);
    if (keys.len() as u32) < want {
        return posix(
            format!("rows 1..={want} (durable by mark {})", marks.iter().max().unwrap_or(&0)),
            format!("{} rows", keys.len()),
        );
    }
    Vec::new()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn committed_rows_are_checked_as_a_prefix_with_their_contents() {
        for j in ALL {
            let dir = std::env::temp_dir().join(format!("fsarena-crash-app-{}-{}", j.name(), std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            // Nothing promised, nothing there: fine; promised: missing.
            assert!(check(&dir, j, &[]).is_empty());
            // Rollback with FULL promises the table only from mark 1.
            assert_eq!(check(&dir, j, &[0, 1]).len(), 1);
            let conn = setup(&dir, j).unwrap();
            for k in 1..=3 {
                commit(&conn, k).unwrap();
            }
            assert!(check(&dir, j, &[0, 1, 2, 3]).is_empty(), "{:?}", check(&dir, j, &[0, 1, 2, 3]));
            let v = check(&dir, j, &[0, 1, 2, 3, 4, 5]);
            assert!(v.len() == 1 && v[0].promised.contains("rows 1..="), "{v:?}");
            // Mark 4: row 4 promised except by rollback with FULL, which promises row 3.
            assert_eq!(check(&dir, j, &[0, 1, 2, 3, 4]).is_empty(), j == Journal::Rollback, "{j:?}");
            // A hole: row 2 gone, row 3 kept.
            conn.execute("DELETE FROM t WHERE k = 2").unwrap();
            let v = check(&dir, j, &[0]);
            assert!(v.len() == 1 && v[0].found.contains("[1, 3]"), "{v:?}");
            // Other bytes in a row.
            conn.execute("UPDATE t SET v = x'00' WHERE k = 1").unwrap();
            conn.execute("DELETE FROM t WHERE k = 3").unwrap();
            let v = check(&dir, j, &[0]);
            assert!(v.len() == 1 && v[0].promised.contains("row 1"), "{v:?}");
            drop(conn);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
