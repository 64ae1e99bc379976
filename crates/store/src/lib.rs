//! The results store: every run, written step by step into an embedded SQLite database.
//!
//! Each write is its own transaction, committed with `synchronous=FULL` in WAL mode, so a
//! failure later in the run, a SIGKILL or a power cut loses nothing already stored and never
//! corrupts the file; a run that never reached [`Store::finish_run`] is listed as incomplete.
//! The schema is versioned (`PRAGMA user_version`) and documented in `docs/store-schema.md`.
//!
//! [`Store::open`] is for writing and refuses what it must not write to: another program's
//! file, a newer fsarena's database, a damaged one (`PRAGMA quick_check`), or a file it cannot
//! write. [`Store::open_read_only`] creates and changes nothing, so that reading works on
//! read-only media and leaves no file behind.

mod error;
mod lenient;
mod open;
mod read;
mod schema;
mod write;

pub use error::StoreError;
pub use read::RunSummary;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};

use rusqlite::Connection;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// An open results database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the database at `path` for writing, creating it and its directories if missing,
    /// and upgrades an older schema. Refuses a file that is not an fsarena database, one
    /// written by a newer fsarena, one that fails `PRAGMA quick_check`, and one that cannot be
    /// written; a refused path gets no file created beside it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = open::for_writing(path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// Opens an existing database for reading only: no lock file, journal, `-wal` or `-shm` is
    /// created, so read-only media and immutable files work. Refuses what [`Store::open`]
    /// refuses, except an unwritable file; a missing or empty file is an error too.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let conn = open::read_only(path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SQLite's `PRAGMA integrity_check`: `"ok"` for a sound database, else what is wrong.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let rows: Result<Vec<String>, rusqlite::Error> =
            self.conn.prepare("PRAGMA integrity_check").and_then(|mut st| {
                let rows = st.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect()
            });
        rows.map(|r| r.join("; ")).map_err(|e| self.fail(|| "checking integrity".into())(Fail::Sql(e)))
    }

    /// Turns a failure inside a store operation into a [`StoreError`] that names the file and
    /// what the store was doing.
    fn fail<'a>(&'a self, action: impl FnOnce() -> String + 'a) -> impl FnOnce(Fail) -> StoreError + 'a {
        move |fail| match fail {
            Fail::Store(e) => e,
            Fail::Sql(source) => StoreError::Sqlite { path: self.path.clone(), action: action(), source },
        }
    }
}

/// A failure inside a store operation, before it is given its context.
enum Fail {
    Sql(rusqlite::Error),
    Store(StoreError),
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Self {
        Fail::Sql(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

/// Where results go by default: `$XDG_DATA_HOME/fsarena/results.db`, else
/// `$HOME/.local/share/fsarena/results.db`, else `fsarena-results.db` in the current directory.
pub fn default_path() -> PathBuf {
    default_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// [`default_path`] with the environment given.
fn default_path_from(xdg_data_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    // The XDG base directory specification says to ignore a relative XDG_DATA_HOME.
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(data) = absolute(xdg_data_home) {
        data.join("fsarena").join("results.db")
    } else if let Some(home) = absolute(home) {
        home.join(".local/share/fsarena/results.db")
    } else {
        PathBuf::from("fsarena-results.db")
    }
}

/// A count or position as SQLite stores it.
fn to_sql_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stored count or time back as an unsigned number; a negative value (hand-edited) reads as 0.
fn from_sql_int(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_path_follows_xdg_then_home() {
        let p = default_path_from(Some("/data".into()), Some("/home/u".into()));
        assert_eq!(p, Path::new("/data/fsarena/results.db"));
        let p = default_path_from(None, Some("/home/u".into()));
        assert_eq!(p, Path::new("/home/u/.local/share/fsarena/results.db"));
        let p = default_path_from(Some("relative".into()), Some("/home/u".into()));
        assert_eq!(p, Path::new("/home/u/.local/share/fsarena/results.db"));
        let p = default_path_from(Some("".into()), None);
        assert_eq!(p, Path::new("fsarena-results.db"));
    }
}
