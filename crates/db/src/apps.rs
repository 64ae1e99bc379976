//! What `crash`'s application workloads (`crash:app=sqlite`, `crash:app=kv`) do with the
//! databases, for fsarena-crash, which links none of them: a SQLite database made in a journal
//! mode, one row committed per transaction, and a recovered database read back; the `kv`
//! workload's store opened as it opens it with `sync=true`. What each state must hold (the
//! applications' promises) stays with crash.

use crate::kv::engine::{self, Engine};
use crate::kv::options::{EngineKind, KvOptions};
use rusqlite::Connection;
use std::path::Path;

/// A SQLite database with one table `t(k INTEGER PRIMARY KEY, v BLOB)`.
#[derive(Debug)]
pub struct Sqlite(Connection);

fn sql(e: rusqlite::Error) -> String {
    format!("sqlite: {e}")
}

impl Sqlite {
    /// Makes the database at `path` in `journal_mode=MODE` with `synchronous=SYNC`, and its
    /// table (committed, fsynced by SQLite).
    pub fn create(path: &Path, mode: &str, synchronous: &str) -> Result<Self, String> {
        let conn = Connection::open(path).map_err(sql)?;
        let set: String = conn.query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0)).map_err(sql)?;
        if !set.eq_ignore_ascii_case(mode) {
            return Err(format!("sqlite: journal_mode={mode} was refused (it stays {set})"));
        }
        conn.execute_batch(&format!(
            "PRAGMA synchronous={synchronous}; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL);"
        ))
        .map_err(sql)?;
        Ok(Self(conn))
    }

    /// Commits one transaction: row `k` holding `v`.
    pub fn commit(&self, k: u32, v: &[u8]) -> Result<(), String> {
        self.0.execute("INSERT INTO t(k, v) VALUES (?1, ?2)", rusqlite::params![k, v]).map_err(sql).map(|_| ())
    }

    /// Closes the database; the error is SQLite's own.
    pub fn close(self) -> Result<(), String> {
        self.0.close().map_err(|(_, e)| e.to_string())
    }

    /// Runs `statements` as they are (tests that damage a database on purpose).
    pub fn execute(&self, statements: &str) -> Result<(), String> {
        self.0.execute_batch(statements).map_err(sql)
    }
}

/// Table `t`'s rows, `(k, v)` in key order.
pub type Rows = Vec<(u32, Vec<u8>)>;

/// Why a recovered database could not be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// It does not open.
    Open(String),
    /// `PRAGMA integrity_check` says this, not `ok` (or fails with it).
    Integrity(String),
    /// Table `t` cannot be read.
    Rows(String),
}

/// Opens the recovered database at `path` (which runs SQLite's own recovery: a hot journal
/// rolled back, the WAL read), checks its integrity and reads table `t` in key order; `None`
/// when it has no table `t`.
pub fn read_rows(path: &Path) -> Result<Option<Rows>, Unreadable> {
    let conn = Connection::open(path).map_err(|e| Unreadable::Open(e.to_string()))?;
    match conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0)) {
        Ok(ok) if ok == "ok" => {}
        Ok(found) => return Err(Unreadable::Integrity(found)),
        Err(e) => return Err(Unreadable::Integrity(e.to_string())),
    }
    let table = conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 't'", [], |r| r.get::<_, i64>(0));
    if !matches!(table, Ok(1)) {
        return Ok(None);
    }
    let rows = conn.prepare("SELECT k, v FROM t ORDER BY k").and_then(|mut st| {
        st.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, Vec<u8>>(1)?)))?.collect::<Result<Vec<_>, _>>()
    });
    rows.map(Some).map_err(|e| Unreadable::Rows(e.to_string()))
}

/// The `kv` workload's store in `dir` (fjall), opened as `kv:engine=fjall,sync=true` opens it.
pub fn kv_synced(dir: &Path) -> Result<Box<dyn Engine>, String> {
    engine::open(EngineKind::Fjall, dir, &KvOptions { sync: true, ..Default::default() })
}
