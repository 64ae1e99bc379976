//! The `sqlite` workload: SQLite (the bundled library rusqlite builds) on the target, as two
//! studies used it.
//!
//! - `mode=inserts` (the default) is the Phoronix Test Suite's SQLite test: 12,500 INSERTs
//!   into one table, each its own transaction, so each is a journal write and (with
//!   `synchronous=full`) several syncs: a test of the filesystem's sync path more than of SQLite.
//!   Figures: inserts per second and the seconds taken.
//! - `mode=mixed` is the trading-platform study's multi-threaded phase: `writers` threads
//!   inserting in transactions of `batch` rows while `readers` threads run point queries and
//!   range queries by primary key, for `runtime` or until `rows` are inserted, after `prefill`
//!   rows (untimed). Figures: inserts (rows) and queries per second, latency per op: `insert`
//!   (one transaction of `batch` rows), `point`, `range`.
//!
//! `journal_mode`, `synchronous`, `page_size` and `cache_size` are SQLite's pragmas, set on
//! every connection as a program would. The database is a directory `sqlite` under the
//! workload's root, removed at the end unless `keep=1`; every run starts from an empty table.

pub mod options;
mod run;
pub mod text;

use fsarena_core::{InputError, Measurement, Spec};
use fsarena_workload::{Finish, Footprint, RunEnv, Workload, WorkloadError};
use options::{Mode, SqliteOptions};
use std::os::unix::fs::DirBuilderExt;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub use options::OPTIONS;

/// The run's directory under the workload's root.
const RUN_DIR: &str = "sqlite";
/// The database file in it.
const DB: &str = "fsarena.db";
/// The database and the files SQLite puts beside it (rollback journal, WAL, shared memory).
const FILES: [&str; 4] = ["fsarena.db", "fsarena.db-journal", "fsarena.db-wal", "fsarena.db-shm"];

/// Bytes SQLite stores per row beyond the payload (record header, key, cell pointer), and the
/// share of pages left free, for the footprint's estimate of the database's size.
const ROW_OVERHEAD: u64 = 32;

/// The `sqlite` workload.
#[derive(Debug, Clone)]
pub struct SqliteWorkload {
    options: SqliteOptions,
    given: Vec<(String, String)>,
}

impl SqliteWorkload {
    /// From `--workload sqlite:inserts=12500,journal_mode=wal` or
    /// `sqlite:mode=mixed,writers=4,readers=8,runtime=30s`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = SqliteOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("sqlite", OPTIONS, &mut options, k, v)?;
        }
        if options.mode == Mode::Inserts {
            // Keys of the other mode would be ignored silently: say so instead.
            for (k, _) in &spec.params {
                let key = fsarena_workload::options::find(OPTIONS, k).map_or(k.as_str(), |d| d.name);
                if ["writers", "readers", "batch", "range", "point_percent", "prefill", "runtime", "rows"]
                    .contains(&key)
                {
                    return Err(InputError::new(format!(
                        "{key}= is an option of mode=mixed: add mode=mixed, or drop it for mode=inserts"
                    )));
                }
            }
        } else if spec.params.iter().any(|(k, _)| k == "inserts") {
            return Err(InputError::new("inserts= is an option of mode=inserts: mode=mixed takes rows= or runtime="));
        }
        Ok(Self { options, given: spec.params.clone() })
    }

    /// The options a run uses.
    pub fn options(&self) -> &SqliteOptions {
        &self.options
    }

    /// Rows the run puts in the table, when its options fix it.
    fn rows(&self) -> Option<u64> {
        let o = &self.options;
        match o.mode {
            Mode::Inserts => Some(o.inserts),
            Mode::Mixed => o.rows.map(|r| r.saturating_add(o.prefill)),
        }
    }
}

impl Workload for SqliteWorkload {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let connections = match o.mode {
            Mode::Inserts => 1,
            Mode::Mixed => 1 + u64::from(o.writers) + u64::from(o.readers),
        };
        // A time-bound run's size depends on the filesystem's speed: only the prefill is known.
        let rows = self.rows().unwrap_or(o.prefill);
        let table = rows.saturating_mul(o.row_size + ROW_OVERHEAD).saturating_mul(3) / 2;
        Footprint {
            source: format!("sqlite workload (mode={}, {} rows of {} bytes)", mode_name(o.mode), rows, o.row_size),
            threads: connections.saturating_sub(1).max(1),
            buffer_bytes: connections.saturating_mul(o.cache_size + u64::from(o.page_size) * 4 + o.row_size),
            // The journal or WAL can hold as much again as the table, page by page.
            bytes_on_target: table.saturating_mul(2).saturating_add(4 * u64::from(o.page_size)),
            files: FILES.len() as u64 + 1,
            open_files: connections * 3,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let pragmas = format!(
            "journal_mode={}, synchronous={}, page_size={}, cache_size={} KiB",
            o.journal_mode,
            o.synchronous,
            o.page_size,
            (o.cache_size / 1024).max(1)
        );
        match o.mode {
            Mode::Inserts => vec![format!(
                "sqlite: {} INSERTs of {}-byte rows, each its own transaction, one connection; {pragmas}",
                o.inserts, o.row_size
            )],
            Mode::Mixed => {
                let until = match (o.time_limit(), o.rows) {
                    (Some(t), Some(r)) => format!("for {} s or {r} rows", t as f64 / 1e9),
                    (Some(t), None) => format!("for {} s", t as f64 / 1e9),
                    (None, Some(r)) => format!("until {r} rows"),
                    (None, None) => String::new(),
                };
                vec![format!(
                    "sqlite: {} writer(s) inserting {}-byte rows in transactions of {}, {} reader(s) ({}% point queries, \
                     ranges of {} rows), {until}, after {} rows untimed; {pragmas}",
                    o.writers, o.row_size, o.batch, o.readers, o.point_percent, o.range, o.prefill
                )]
            }
        }
    }

    fn estimate(&self) -> Option<Duration> {
        match self.options.mode {
            Mode::Mixed if self.options.rows.is_none() => self.options.time_limit().map(Duration::from_nanos),
            _ => None,
        }
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let dir = env.root.join(RUN_DIR);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            // A database kept by an earlier run (keep=1): every run starts empty.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => remove_files(&dir),
            Err(e) => return Err(fail(format!("mkdir {}: {e}", dir.display()))),
        }
        let path = dir.join(DB);
        let (m, error) = match self.options.mode {
            Mode::Inserts => run::inserts(&self.options, env, &path),
            Mode::Mixed => run::mixed(&self.options, env, &path),
        };
        if !self.options.keep {
            remove_files(&dir);
            let _ = std::fs::remove_dir(&dir);
        }
        m.finish(error, env.stop.load(Ordering::Relaxed))
    }
}

/// The database and its journals in `dir`, whichever exist.
fn remove_files(dir: &std::path::Path) {
    for name in FILES {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// The word of `mode=`.
fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Inserts => "inserts",
        Mode::Mixed => "mixed",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn workload(spec: &str) -> Result<SqliteWorkload, InputError> {
        SqliteWorkload::from_spec(&Spec::parse(spec).unwrap())
    }

    /// Runs `spec` in a fresh directory, checks nothing is left unless kept, returns the result.
    fn run(spec: &str) -> Result<Measurement, WorkloadError> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fsarena-sqlite-test-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let out = workload(spec).unwrap().run(&RunEnv::quiet(&dir, &stop)).map(fsarena_workload::one);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "files left by {spec}");
        std::fs::remove_dir(&dir).unwrap();
        out
    }

    #[test]
    fn inserts_land_one_transaction_each() {
        for journal in ["delete", "wal", "off"] {
            let m = run(&format!("sqlite:inserts=60,journal_mode={journal},synchronous=off,page_size=1k")).unwrap();
            assert_eq!(m.counters["rows_in_table"], 60, "{journal}");
            assert_eq!(m.latency("insert").unwrap().len(), 60);
            assert!(m.metric("inserts_per_s").unwrap().value > 0.0);
            assert_eq!(m.metrics[0].name, "inserts_per_s", "the headline first");
            assert!(m.counters["sqlite_version"] >= 3_000_000);
        }
    }

    #[test]
    fn mixed_inserts_rows_in_batches_and_queries() {
        let m = run("sqlite:mode=mixed,writers=2,readers=2,rows=600,batch=50,prefill=200,range=10,synchronous=off")
            .unwrap();
        assert_eq!(m.counters["insert.rows"], 600);
        assert_eq!(m.counters["insert.ops"], 12, "600 rows in transactions of 50");
        assert_eq!(m.counters["rows_in_table"], 800);
        let queries = m.counters["point.ops"] + m.counters["range.ops"];
        assert!(m.metric("queries_per_s").is_some());
        assert!(m.counters["range.rows"] <= 10 * m.counters["range.ops"], "{queries}");
    }

    #[test]
    fn mixed_without_readers_or_prefill_runs_by_time() {
        let m = run("sqlite:mode=mixed,readers=0,prefill=0,runtime=200ms,synchronous=off,journal_mode=memory").unwrap();
        assert_eq!(m.counters["rows_in_table"], m.counters["insert.rows"]);
        assert_eq!(m.counters["point.ops"] + m.counters["range.ops"], 0);
    }

    #[test]
    fn refusals_name_the_value_before_anything_exists() {
        for (spec, want) in [
            ("sqlite:page_size=1000", "page_size=1000: '1000' is not a SQLite page size"),
            ("sqlite:writers=4", "writers= is an option of mode=mixed"),
            ("sqlite:mode=mixed,inserts=5", "inserts= is an option of mode=inserts"),
            ("sqlite:mode=both", "'both' is not a mode"),
            ("sqlite:journal_mode=wall", "expected delete, truncate, persist, wal, memory, off"),
        ] {
            let e = workload(spec).unwrap_err();
            assert!(e.message.contains(want), "{spec}: {}", e.message);
        }
    }

    #[test]
    fn describe_and_footprint_follow_the_options() {
        let w = workload("sqlite").unwrap();
        assert!(w.describe()[0].starts_with("sqlite: 12500 INSERTs of 100-byte rows"), "{:?}", w.describe());
        assert_eq!(w.footprint().threads, 1);
        assert_eq!(w.estimate(), None);
        let w = workload("sqlite:mode=mixed,writers=3,readers=5,runtime=30s").unwrap();
        assert_eq!(w.footprint().threads, 8);
        assert_eq!(w.estimate(), Some(Duration::from_secs(30)));
    }
}
