//! The `sqlite` workload's options: the two modes (Phoronix's autocommit inserts and the
//! trading-platform study's writers and readers), SQLite's own pragmas under their pragma
//! names, and the row shape. Every key is one row of [`OPTIONS`]; help and the docs come from it.

use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ValueKind::{Bool, Choice, Count, Size, Time};
use fsarena_core::units::parse_time;
use fsarena_workload::options::{boolean, nonzero_size, opt, positive, size, whole, OptionDef};

/// One second in nanoseconds.
const SECOND: u64 = 1_000_000_000;

/// What a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `inserts` rows, each INSERT its own transaction (autocommit), one connection: the
    /// Phoronix Test Suite's SQLite test (12,500 inserts).
    Inserts,
    /// `writers` threads inserting in transactions of `batch` rows while `readers` threads run
    /// point and range queries by primary key.
    Mixed,
}

/// SQLite's `PRAGMA journal_mode` values.
pub const JOURNAL_MODES: &[&str] = &["delete", "truncate", "persist", "wal", "memory", "off"];
/// SQLite's `PRAGMA synchronous` values.
pub const SYNCHRONOUS: &[&str] = &["off", "normal", "full", "extra"];

/// The options of one `sqlite` run, with SQLite's defaults for its pragmas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Inserts or mixed.
    pub mode: Mode,
    /// Rows inserted in `inserts` mode, one transaction each.
    pub inserts: u64,
    /// Writer threads in `mixed` mode.
    pub writers: u32,
    /// Reader threads in `mixed` mode.
    pub readers: u32,
    /// Rows per writer transaction in `mixed` mode.
    pub batch: u32,
    /// Rows read by one range query.
    pub range: u32,
    /// Percent of reader queries that are point queries (the rest are range queries).
    pub point_percent: u32,
    /// Rows in the table before a `mixed` run starts, inserted untimed, so readers find rows.
    pub prefill: u64,
    /// How long a `mixed` run lasts, ns; `None`: 10 s unless `rows` is given.
    pub runtime: Option<u64>,
    /// Rows the writers insert in a `mixed` run, in all; they stop there.
    pub rows: Option<u64>,
    /// `PRAGMA journal_mode`, one of [`JOURNAL_MODES`].
    pub journal_mode: &'static str,
    /// `PRAGMA synchronous`, one of [`SYNCHRONOUS`].
    pub synchronous: &'static str,
    /// `PRAGMA page_size`, a power of two from 512 to 65536.
    pub page_size: u32,
    /// Bytes of payload per row (a BLOB).
    pub row_size: u64,
    /// The page cache of each connection in bytes (`PRAGMA cache_size=-KiB`).
    pub cache_size: u64,
    /// Keep the database after the run.
    pub keep: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            mode: Mode::Inserts,
            inserts: 12_500,
            writers: 1,
            readers: 1,
            batch: 100,
            range: 100,
            point_percent: 50,
            prefill: 10_000,
            runtime: None,
            rows: None,
            journal_mode: "delete",
            synchronous: "full",
            page_size: 4096,
            row_size: 100,
            // SQLite's default cache_size is -2000: 2000 KiB.
            cache_size: 2000 * 1024,
            keep: false,
        }
    }
}

impl SqliteOptions {
    /// The time limit of a `mixed` run: `runtime`, else none when `rows` bounds it, else 10 s.
    pub fn time_limit(&self) -> Option<u64> {
        match (self.runtime, self.rows) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(10 * SECOND),
        }
    }
}

/// The one `choices` word equal to `v` (as the table's static string).
fn choice(v: &str, choices: &[&'static str], what: &str) -> Result<&'static str, String> {
    let v = v.trim().to_ascii_lowercase();
    choices
        .iter()
        .find(|c| **c == v)
        .copied()
        .ok_or_else(|| format!("'{v}' is not a {what}: expected {}", choices.join(", ")))
}

/// SQLite's page sizes: a power of two from 512 to 65536 bytes.
fn page_size(v: &str) -> Result<u32, String> {
    let n = size(v)?;
    if (512..=65536).contains(&n) && n.is_power_of_two() {
        Ok(n as u32)
    } else {
        Err(format!("'{v}' is not a SQLite page size: expected a power of two from 512 to 65536"))
    }
}

/// A duration of at least a millisecond.
fn runtime(v: &str) -> Result<u64, String> {
    match parse_time(v, SECOND).map_err(|e| e.message)?.0 {
        n if n < 1_000_000 => Err(format!("'{v}' is too short: expected at least 1ms")),
        n => Ok(n),
    }
}

/// A row count of at least 1.
fn rows(v: &str) -> Result<u64, String> {
    match whole(v)? {
        0 => Err(format!("'{v}' must be at least 1")),
        n => Ok(n),
    }
}

/// A row of the sqlite table.
macro_rules! sq {
    ($($rest:tt)*) => { opt!(SqliteOptions, $($rest)*) };
}

/// Every option of the `sqlite` workload.
pub static OPTIONS: &[OptionDef<SqliteOptions>] = &[
    sq!(
        "mode",
        Choice(&["inserts", "mixed"]),
        Is("inserts"),
        "inserts: autocommit INSERTs, one connection (Phoronix's test); mixed: writers and readers at once",
        |o, v| o.mode = match choice(v, &["inserts", "mixed"], "mode")? {
            "mixed" => Mode::Mixed,
            _ => Mode::Inserts,
        }
    ),
    sq!("inserts", Count, Is("12500"), "rows inserted in inserts mode, each INSERT its own transaction", |o, v| o
        .inserts =
        rows(v)?),
    sq!("writers", Count, Is("1"), "threads inserting rows in mixed mode, each with its own connection", |o, v| o
        .writers =
        positive(v)?),
    sq!("readers", Count, Is("1"), "threads running point and range queries in mixed mode (0: none)", |o, v| o
        .readers =
        fsarena_workload::options::small(v)?),
    sq!("batch", Count, Is("100"), "rows per writer transaction in mixed mode", |o, v| o.batch = positive(v)?),
    sq!("range", Count, Is("100"), "rows one range query reads (by ascending primary key)", |o, v| o.range =
        positive(v)?),
    sq!(
        "point_percent",
        Count,
        Is("50"),
        "percent of reader queries that are point queries; the rest are range queries",
        |o, v| o.point_percent = fsarena_workload::options::percent(v)?
    ),
    sq!("prefill", Count, Is("10000"), "rows inserted, untimed, before a mixed run, so readers find rows", |o, v| o
        .prefill =
        whole(v)?),
    sq!("runtime", Time, Derived("10s unless rows= is given"), "how long a mixed run lasts (e.g. 30s, 2m)", |o, v| o
        .runtime =
        Some(runtime(v)?)),
    sq!("rows", Count, Unset, "rows the writers of a mixed run insert in all, then stop", |o, v| o.rows =
        Some(rows(v)?)),
    sq!("journal_mode", Choice(JOURNAL_MODES), Is("delete"), "PRAGMA journal_mode", |o, v| o.journal_mode =
        choice(v, JOURNAL_MODES, "journal mode")?),
    sq!("synchronous", Choice(SYNCHRONOUS), Is("full"), "PRAGMA synchronous", |o, v| o.synchronous =
        choice(v, SYNCHRONOUS, "synchronous setting")?),
    sq!("page_size", Size, Is("4096"), "PRAGMA page_size: a power of two from 512 to 65536", |o, v| o.page_size =
        page_size(v)?),
    sq!("row_size", Size, Is("100"), "bytes of payload (a BLOB) per row", |o, v| o.row_size = nonzero_size(v)?),
    sq!("cache_size", Size, Is("2000k"), "page cache of each connection in bytes (PRAGMA cache_size=-KiB)", |o, v| o
        .cache_size =
        size(v)?),
    sq!("keep", Bool, Is("0"), "keep the database after the run (fsarena's own)", |o, v| o.keep = boolean(v)?),
];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_defaults_agree() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }

    #[test]
    fn values_are_sqlites() {
        let mut o = SqliteOptions::default();
        for (k, v) in [("page_size", "64k"), ("journal_mode", "WAL"), ("synchronous", "off"), ("runtime", "2s")] {
            fsarena_workload::options::set("sqlite", OPTIONS, &mut o, k, v).unwrap();
        }
        assert_eq!((o.page_size, o.journal_mode, o.synchronous), (65536, "wal", "off"));
        assert_eq!(o.time_limit(), Some(2 * SECOND));
        let mut o = SqliteOptions::default();
        assert_eq!(o.time_limit(), Some(10 * SECOND));
        o.rows = Some(5);
        assert_eq!(o.time_limit(), None);
        for (k, v, want) in [
            (
                "page_size",
                "1000",
                "page_size=1000: '1000' is not a SQLite page size: expected a power of two from 512 to 65536",
            ),
            ("page_size", "128k", "not a SQLite page size"),
            ("page_size", "256", "not a SQLite page size"),
            ("journal_mode", "rollback", "expected delete, truncate, persist, wal, memory, off"),
            ("synchronous", "2", "expected off, normal, full, extra"),
            ("inserts", "0", "at least 1"),
            ("row_size", "0", "larger than 0"),
            ("runtime", "0", "too short"),
            ("point_percent", "120", "0 to 100"),
            ("journal", "wal", "unknown sqlite option 'journal'"),
        ] {
            let e = fsarena_workload::options::set("sqlite", OPTIONS, &mut SqliteOptions::default(), k, v).unwrap_err();
            assert!(e.message.contains(want), "{k}={v}: {}", e.message);
        }
    }
}
