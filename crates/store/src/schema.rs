//! Schema versions, migrations, and what a database file says it is.
//!
//! The schema version lives in `PRAGMA user_version`; `PRAGMA application_id` marks the file
//! as fsarena's. [`MIGRATIONS`] entry `i` upgrades a database from version `i` to `i + 1`, in
//! one transaction together with the new `user_version`, so a database is always at exactly
//! one version. Adding schema 2 means appending one entry; stored entries never change.
//!
//! The header fields are four bytes each and nothing checks them: a flipped bit turns schema 1
//! into schema 16777217. So the tables are compared with the ones this code creates, and a
//! header that contradicts them is reported as damage, not as "a newer fsarena".

use crate::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::collections::BTreeSet;
use std::path::Path;

/// `PRAGMA application_id` of an fsarena results database: "fsar" in ASCII.
pub const APPLICATION_ID: i32 = 0x6673_6172;

/// The newest schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// How far beyond [`SCHEMA_VERSION`] a header may claim before it is taken for damage: fsarena
/// adds at most a few schema versions a year, so a larger number is a flipped bit.
const PLAUSIBLE_NEWER: u32 = 64;

/// Entry `i` upgrades schema `i` to `i + 1`. Never edit a released entry: append one. Every
/// migration changes the tables or indexes (a data-only change adds, say, an index), so that
/// a header claiming a newer schema over exactly this code's tables is known for damage.
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

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

/// Schema 2: named runs (`--name`, `--tag`) and why a run failed. The name is not unique: a
/// name finds the newest run that has it, so `--name nightly` can be given every night.
const V2: &str = "
ALTER TABLE runs ADD COLUMN name TEXT;
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN failure TEXT;
CREATE INDEX runs_by_name ON runs (name, started_unix_ms);
";

/// Schema 3: sweeps and parts. A result is one point of a workload's sweep (`point`, the swept
/// keys with their typed values, as JSON) and, when one workload gives several results, one
/// part of it (`part`: a fio job or reporting group, a tree loop).
const V3: &str = "
ALTER TABLE results ADD COLUMN point TEXT NOT NULL DEFAULT '[]';
ALTER TABLE results ADD COLUMN part TEXT;
CREATE INDEX results_by_part ON results (run_id, part);
";

/// Schema 4: what each result cost to run, wall-clock (`wall_ms`: every round, warm-ups and
/// untimed setup included), so a study's report says how long each row took here.
const V4: &str = "
ALTER TABLE results ADD COLUMN wall_ms INTEGER;
";

/// What a database file holds, as far as opening it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Nothing yet: an empty file, or one SQLite has just created.
    Fresh,
    /// fsarena's tables at this code's schema.
    Current,
    /// fsarena's tables at an older schema, which [`migrate`] upgrades.
    Older(u32),
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

/// One schema object as `sqlite_master` lists it: type, name and the SQL that made it.
type Object = (String, String, Option<String>);

fn objects(conn: &Connection) -> rusqlite::Result<BTreeSet<Object>> {
    let mut stmt = conn.prepare("SELECT type, name, sql FROM sqlite_master")?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    rows.collect()
}

/// The objects this code's migrations create, made in a database in memory: the reference a
/// file's tables are compared with, which cannot drift from [`MIGRATIONS`].
fn expected_objects() -> rusqlite::Result<BTreeSet<Object>> {
    expected_objects_at(SCHEMA_VERSION)
}

/// The objects of schema `version`, the same way.
fn expected_objects_at(version: u32) -> rusqlite::Result<BTreeSet<Object>> {
    let conn = Connection::open_in_memory()?;
    for sql in &MIGRATIONS[..version as usize] {
        conn.execute_batch(sql)?;
    }
    objects(&conn)
}

/// Maps an SQLite failure while reading what a file is: not a database at all is foreign, a
/// malformed one is damaged, anything else is SQLite's own error.
pub(crate) fn reading_error<'a>(path: &'a Path, action: &str) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    let action = action.to_string();
    move |e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::Foreign(path.to_path_buf()),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            StoreError::Damaged { path: path.to_path_buf(), finding: e.to_string() }
        }
        _ => StoreError::Sqlite { path: path.to_path_buf(), action: action.clone(), source: e },
    }
}

/// Tells what `conn` holds: a new file, fsarena's current or an older schema; or refuses it as
/// another program's file, a newer fsarena's, or damaged. Reads only.
pub(crate) fn classify(path: &Path, conn: &Connection) -> Result<Shape, StoreError> {
    let identity = identify(conn).map_err(reading_error(path, "reading the schema version"))?;
    if identity.application_id == 0 && identity.version == 0 && identity.objects == 0 {
        return Ok(Shape::Fresh);
    }
    let found = objects(conn).map_err(reading_error(path, "reading the schema"))?;
    let expected = expected_objects().map_err(reading_error(path, "building the reference schema"))?;
    let has_ours = expected.is_subset(&found);
    let exactly_ours = expected == found;
    let damaged = |finding: String| Err(StoreError::Damaged { path: path.to_path_buf(), finding });
    let version = identity.version;
    if identity.application_id != APPLICATION_ID {
        if has_ours {
            return damaged(format!(
                "its header's application id reads {:#010x}, not fsarena's {APPLICATION_ID:#010x}, over \
                 fsarena's tables",
                identity.application_id
            ));
        }
        return Err(StoreError::Foreign(path.to_path_buf()));
    }
    match version {
        v if v == SCHEMA_VERSION && has_ours => Ok(Shape::Current),
        v if v == SCHEMA_VERSION => {
            // An automatic index goes with its table: name the table only.
            let missing: Vec<&str> = expected
                .difference(&found)
                .map(|(_, name, _)| name.as_str())
                .filter(|name| !name.starts_with("sqlite_autoindex_"))
                .collect();
            damaged(format!("fsarena's schema {v} without {} as fsarena made it", missing.join(", ")))
        }
        0 => damaged("fsarena's application id with schema version 0, which fsarena never writes".into()),
        v if v < SCHEMA_VERSION => {
            // Upgrading runs schema v's migrations over the tables: they must be schema v's.
            let older = expected_objects_at(v).map_err(reading_error(path, "building the reference schema"))?;
            if found == older {
                Ok(Shape::Older(v))
            } else {
                damaged(format!("its header says schema {v}, but its tables are not schema {v}'s"))
            }
        }
        v if v > SCHEMA_VERSION.saturating_add(PLAUSIBLE_NEWER) => damaged(format!(
            "its header says schema {v}, a version no fsarena has written (this one writes {SCHEMA_VERSION})"
        )),
        v if exactly_ours => damaged(format!(
            "its header says schema {v}, but its tables are exactly schema {SCHEMA_VERSION}'s, which a newer \
             fsarena would have changed"
        )),
        v => Err(StoreError::Newer { path: path.to_path_buf(), found: v, supported: SCHEMA_VERSION }),
    }
}

/// SQLite's `PRAGMA quick_check` (every page and index entry, without the costly cross-checks of
/// `integrity_check`): `Ok` for a sound file, else [`StoreError::Damaged`] with SQLite's
/// findings, the first three of them.
pub(crate) fn quick_check(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    const SHOWN: usize = 3;
    let rows: Vec<String> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut st| st.query_map([], |r| r.get::<_, String>(0))?.collect())
        .map_err(reading_error(path, "checking integrity (PRAGMA quick_check)"))?;
    if rows.len() == 1 && rows[0] == "ok" {
        return Ok(());
    }
    // A finding may span lines ("*** in database main ***\nTree 6 page 6: ..."): one line
    // each, without the banner, so the error stays one line.
    let rows: Vec<String> = rows
        .iter()
        .flat_map(|row| row.lines())
        .filter(|line| !line.starts_with("*** in database"))
        .map(str::to_string)
        .collect();
    let mut finding =
        format!("PRAGMA quick_check says: {}", rows.iter().take(SHOWN).cloned().collect::<Vec<_>>().join("; "));
    if rows.len() > SHOWN {
        finding.push_str(&format!(" and {} more", rows.len() - SHOWN));
    }
    Err(StoreError::Damaged { path: path.to_path_buf(), finding })
}

/// Applies the missing migrations, one transaction each. The shape is read again under the
/// write lock, so two processes opening a new file at once do not both create the tables.
pub(crate) fn migrate(path: &Path, conn: &Connection) -> Result<(), StoreError> {
    loop {
        let step = |action: String| move |source| StoreError::Sqlite { path: path.to_path_buf(), action, source };
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
            .map_err(step("locking the database to upgrade its schema".into()))?;
        let from = match classify(path, &tx)? {
            Shape::Current => return Ok(()),
            Shape::Fresh => 0,
            Shape::Older(v) => v,
        };
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

    fn current() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        migrate(Path::new("mem.db"), &conn).unwrap();
        conn
    }

    #[test]
    fn a_flipped_header_byte_is_damage_not_a_newer_fsarena() {
        let path = Path::new("mem.db");
        let conn = current();
        assert_eq!(classify(path, &conn).unwrap(), Shape::Current);
        // A bit flipped in the high byte of user_version (file offset 60), and one in the low byte.
        // And one that makes it read as the schema before over today's tables.
        for version in [SCHEMA_VERSION | 1 << 24, SCHEMA_VERSION ^ 8, SCHEMA_VERSION - 1] {
            conn.execute_batch(&format!("PRAGMA user_version = {version}")).unwrap();
            let e = classify(path, &conn).unwrap_err();
            assert!(matches!(e, StoreError::Damaged { .. }), "{version}: {e:?}");
            assert!(e.to_string().contains(&format!("its header says schema {version}")), "{e}");
            assert!(!e.to_string().contains("upgrade"), "{e}");
        }
        // A flipped bit in the application id over fsarena's tables is damage too, not foreign.
        conn.execute_batch(&format!(
            "PRAGMA user_version = {SCHEMA_VERSION}; PRAGMA application_id = {}",
            APPLICATION_ID ^ 0x100
        ))
        .unwrap();
        let e = classify(path, &conn).unwrap_err();
        assert!(e.to_string().contains("application id reads 0x66736072"), "{e}");
    }

    #[test]
    fn a_newer_schema_changes_the_tables() {
        let path = Path::new("mem.db");
        let conn = current();
        conn.execute_batch(&format!(
            "CREATE TABLE tags (run_id TEXT, tag TEXT); PRAGMA user_version = {}",
            SCHEMA_VERSION + 1
        ))
        .unwrap();
        assert!(matches!(classify(path, &conn), Err(StoreError::Newer { found, .. }) if found == SCHEMA_VERSION + 1));
        conn.execute_batch("DROP TABLE results").unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}")).unwrap();
        let e = classify(path, &conn).unwrap_err();
        assert!(e.to_string().contains("without results"), "{e}");
    }

    #[test]
    fn extra_objects_of_the_users_own_are_fine() {
        let conn = current();
        conn.execute_batch("CREATE VIEW iops AS SELECT value FROM metrics WHERE name = 'read_iops'").unwrap();
        assert_eq!(classify(Path::new("mem.db"), &conn).unwrap(), Shape::Current);
    }
}
