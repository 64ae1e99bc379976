//! Schema versions, migrations, and the checks made when a database file is opened.
//!
//! The schema version lives in `PRAGMA user_version`; `PRAGMA application_id` marks the file
//! as fsarena's. [`MIGRATIONS`] entry `i` upgrades a database from version `i` to `i + 1`, in
//! one transaction together with the new `user_version`, so a database is always at exactly
//! one version. Adding schema 2 means appending one entry; stored entries never change.

use crate::StoreError;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// `PRAGMA application_id` of an fsarena results database: "fsar" in ASCII.
pub const APPLICATION_ID: i32 = 0x6673_6172;

/// The newest schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Every SQLite database file starts with these 16 bytes.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// How long to wait for another fsarena process that holds the write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Entry `i` upgrades schema `i` to `i + 1`. Never edit a released entry: append one.
const MIGRATIONS: &[&str] = &[V1];

/// Schema 1: runs, their results (target × workload), each result's measurements (one per
/// repetition, the whole `Measurement` as JSON) and each measurement's metrics as rows, so
/// that figures can be queried across runs without parsing JSON.
const V1: &str = "
CREATE TABLE runs (
    id               TEXT PRIMARY KEY NOT NULL,
    started_unix_ms  INTEGER NOT NULL,
    finished_unix_ms INTEGER,
    complete         INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
    plan             TEXT NOT NULL DEFAULT '',
    environment      TEXT NOT NULL DEFAULT '[]',
    global_options   TEXT NOT NULL DEFAULT '[]',
    fsarena_version  TEXT NOT NULL
);
CREATE INDEX runs_by_start ON runs (started_unix_ms, id);

CREATE TABLE results (
    id              INTEGER PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    target_label    TEXT NOT NULL,
    target_kind     TEXT NOT NULL,
    target_options  TEXT NOT NULL DEFAULT '[]',
    target_info     TEXT NOT NULL DEFAULT '[]',
    workload_kind   TEXT NOT NULL,
    workload_params TEXT NOT NULL DEFAULT '[]',
    UNIQUE (run_id, position)
);

CREATE TABLE measurements (
    id         INTEGER PRIMARY KEY,
    result_id  INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    repetition INTEGER NOT NULL,
    complete   INTEGER NOT NULL CHECK (complete IN (0, 1)),
    data       TEXT NOT NULL,
    UNIQUE (result_id, repetition)
);

CREATE TABLE metrics (
    measurement_id INTEGER NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    unit           TEXT NOT NULL,
    better         TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
    value          REAL
);
CREATE INDEX metrics_by_measurement ON metrics (measurement_id);
CREATE INDEX metrics_by_name ON metrics (name);
";

/// Opens (creating if missing) the database at `path`, refuses foreign and newer files, sets
/// the durability pragmas and brings the schema up to [`SCHEMA_VERSION`].
pub(crate) fn open(path: &Path) -> Result<Connection, StoreError> {
    let io = |source| StoreError::Io { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    // Several fsarena processes may open a new database at once: until its header, WAL mode
    // and schema are written, a second opener could take the half-made file for a foreign
    // one. A lock on a file beside it makes opening one at a time; SQLite's own locking
    // covers everything after.
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock = File::options().create(true).truncate(false).write(true).open(&lock_path).map_err(io)?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).map_err(|e| io(e.into()))?;
    check_header(path)?;
    let sql = |action: &str| {
        let action = action.to_string();
        move |source| StoreError::Sqlite { path: path.to_path_buf(), action, source }
    };
    // No URI flag: a path such as `file:x.db` is a file name, not an SQLite URI.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sql("opening"))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql("setting the busy timeout"))?;

    // Look before touching anything: a foreign or newer database is left exactly as it was.
    let identity = identify(&conn).map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::Foreign(path.to_path_buf()),
        _ => sql("reading the schema version")(e),
    })?;
    let fresh = identity.application_id == 0 && identity.version == 0 && identity.objects == 0;
    if !fresh {
        check_identity(path, &identity)?;
    }

    // WAL: a writer never blocks readers (`results list` during a run) and a commit is one
    // append to the log. synchronous=FULL fsyncs the log at every commit, so a committed step
    // survives a SIGKILL or a power cut; NORMAL could lose the last commits on power loss.
    // journal_mode answers with the mode in force; a filesystem without shared memory keeps
    // the rollback journal, which is just as durable.
    // Switching needs an exclusive lock, for which SQLite does not wait on its busy handler:
    // switch only when not yet in WAL, and retry while another fsarena holds the database.
    let current: String =
        conn.query_row("PRAGMA journal_mode", [], |row| row.get(0)).map_err(sql("reading the journal mode"))?;
    if !current.eq_ignore_ascii_case("wal") {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e)
                    if matches!(
                        e.sqlite_error_code(),
                        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(sql("enabling WAL")(e)),
            }
        }
    }
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        .map_err(sql("setting synchronous=FULL and foreign_keys=ON"))?;
    if identity.version < SCHEMA_VERSION {
        migrate(path, &conn)?;
    }
    Ok(conn)
}

/// What a database says it is.
struct Identity {
    application_id: i32,
    version: u32,
    /// Tables, indexes, views and triggers in the file.
    objects: i64,
}

fn identify(conn: &Connection) -> rusqlite::Result<Identity> {
    let application_id = conn.query_row("PRAGMA application_id", [], |row| row.get(0))?;
    let version = conn.query_row("PRAGMA user_version", [], |row| row.get::<_, i64>(0))?;
    let objects = conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))?;
    Ok(Identity { application_id, version: u32::try_from(version).unwrap_or(u32::MAX), objects })
}

/// A non-empty database must carry fsarena's application id and a schema this code knows.
fn check_identity(path: &Path, identity: &Identity) -> Result<(), StoreError> {
    // version 0 with our id cannot be written by fsarena: the id and schema 1 are set in
    // one transaction.
    if identity.application_id != APPLICATION_ID || identity.version == 0 {
        return Err(StoreError::Foreign(path.to_path_buf()));
    }
    if identity.version > SCHEMA_VERSION {
        return Err(StoreError::Newer { path: path.to_path_buf(), found: identity.version, supported: SCHEMA_VERSION });
    }
    Ok(())
}

/// An existing, non-empty file must start with SQLite's header; SQLite itself would only
/// notice at the first query, and might try to recover a journal beside it first.
fn check_header(path: &Path) -> Result<(), StoreError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(StoreError::Io { path: path.to_path_buf(), source }),
    };
    if !meta.is_file() {
        return Err(StoreError::Foreign(path.to_path_buf()));
    }
    if meta.len() == 0 {
        // SQLite takes an empty file as an empty database.
        return Ok(());
    }
    let mut header = [0u8; 16];
    let read = File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|source| StoreError::Io { path: path.to_path_buf(), source });
    match read {
        Ok(()) if &header == SQLITE_HEADER => Ok(()),
        Ok(()) => Err(StoreError::Foreign(path.to_path_buf())),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(StoreError::Foreign(path.to_path_buf()))
        }
        Err(e) => Err(e),
    }
}

/// Applies the missing migrations, one transaction each. The version is read again under the
/// write lock, so two processes opening a new file at once do not both create the tables.
fn migrate(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    loop {
        let step = |action: String| move |source| StoreError::Sqlite { path: path.to_path_buf(), action, source };
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
            .map_err(step("locking the database to upgrade its schema".into()))?;
        let identity = identify(&tx).map_err(step("reading the schema version".into()))?;
        if identity.version >= SCHEMA_VERSION {
            return check_identity(path, &identity);
        }
        let foreign = if identity.version == 0 {
            identity.objects > 0 || (identity.application_id != 0 && identity.application_id != APPLICATION_ID)
        } else {
            identity.application_id != APPLICATION_ID
        };
        if foreign {
            return Err(StoreError::Foreign(path.to_path_buf()));
        }
        let from = identity.version;
        let to = from + 1;
        let action = format!("upgrading the schema from version {from} to {to}");
        let sql = MIGRATIONS[from as usize];
        tx.execute_batch(sql).map_err(step(action.clone()))?;
        tx.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {to};"))
            .map_err(step(action.clone()))?;
        tx.commit().map_err(step(action))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_version_counts_the_migrations() {
        assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
        assert_eq!(&APPLICATION_ID.to_be_bytes(), b"fsar");
    }

    #[test]
    fn a_short_file_is_foreign() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short.db");
        std::fs::write(&path, b"SQLite").unwrap();
        assert!(matches!(check_header(&path), Err(StoreError::Foreign(_))));
    }
}
