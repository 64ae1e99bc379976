//! Writing a run step by step. Every public call is one transaction: when it returns `Ok`,
//! what it wrote is on disk, whatever happens to the process afterwards.

use crate::{to_sql_int, Fail, Store, StoreError};
use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{Better, Measurement};
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde::Serialize;

impl Store {
    /// Stores a new run: id, start time, plan, environment and global options, marked
    /// incomplete until [`Store::finish_run`]. The report's `results` are not stored here.
    pub fn begin_run(&mut self, report: &RunReport) -> Result<(), StoreError> {
        let fail = self.fail(|| format!("storing the start of run '{}'", report.id));
        write(&self.conn, |tx| insert_run(tx, report, false, None)).map_err(fail)
    }

    /// Stores the result of one workload on one target at `position` in the run, with the
    /// entry's measurements (repetitions 0, 1, ...), and returns the result's id.
    pub fn add_result(&mut self, run_id: &str, position: usize, entry: &ResultEntry) -> Result<i64, StoreError> {
        let fail = self.fail(|| format!("storing result {position} ('{}') of run '{run_id}'", entry.title()));
        write(&self.conn, |tx| insert_result(tx, run_id, position, entry)).map_err(fail)
    }

    /// Stores one measured repetition of the result `result_id`.
    pub fn add_measurement(&mut self, result_id: i64, repetition: u32, m: &Measurement) -> Result<(), StoreError> {
        let fail = self.fail(|| format!("storing repetition {repetition} of result {result_id}"));
        write(&self.conn, |tx| {
            let exists = tx
                .prepare_cached("SELECT 1 FROM results WHERE id = ?1")?
                .query_row([result_id], |_| Ok(()))
                .optional()?;
            if exists.is_none() {
                return Err(StoreError::UnknownResult(result_id).into());
            }
            insert_measurement(tx, result_id, repetition, m)
        })
        .map_err(fail)
    }

    /// Stores one measured repetition in one transaction, together with its run and its
    /// result when they are not stored yet. So a run is stored only once it has something to
    /// show: a run refused or failed before its first measurement leaves nothing behind, and
    /// no empty run becomes `last`. `run` gives the run's id, start, plan and environment (its
    /// results are not read), `entry` the result's target and workload (its measurements are
    /// not read). A stored run with the same id but another start is refused
    /// ([`StoreError::RunExists`]) rather than added to.
    pub fn add_repetition(
        &mut self,
        run: &RunReport,
        position: usize,
        entry: &ResultEntry,
        repetition: u32,
        m: &Measurement,
    ) -> Result<(), StoreError> {
        let fail = self.fail(|| {
            format!("storing repetition {repetition} of result {position} ('{}') of run '{}'", entry.title(), run.id)
        });
        write(&self.conn, |tx| {
            if !run_is_stored(tx, run)? {
                insert_run(tx, run, false, None)?;
            }
            let stored = tx
                .prepare_cached("SELECT id FROM results WHERE run_id = ?1 AND position = ?2")?
                .query_row(params![run.id, to_sql_int(position as u64)], |row| row.get::<_, i64>(0))
                .optional()?;
            let result_id = match stored {
                Some(id) => id,
                None => insert_result_row(tx, &run.id, position, entry)?,
            };
            insert_measurement(tx, result_id, repetition, m)
        })
        .map_err(fail)
    }

    /// Ends a run stored with [`Store::add_repetition`], in one transaction: stores the
    /// results that have no stored repetition (a workload that failed before measuring
    /// anything), and marks the run finished, complete or not as `report` says. A run of which
    /// nothing was stored stays unstored, and the answer is `false`.
    pub fn finish(&mut self, report: &RunReport, finished_unix_ms: u64) -> Result<bool, StoreError> {
        let fail = self.fail(|| format!("marking run '{}' finished", report.id));
        write(&self.conn, |tx| {
            if !run_is_stored(tx, report)? {
                return Ok(false);
            }
            for (position, entry) in report.results.iter().enumerate() {
                let stored = tx
                    .prepare_cached("SELECT 1 FROM results WHERE run_id = ?1 AND position = ?2")?
                    .query_row(params![report.id, to_sql_int(position as u64)], |_| Ok(()))
                    .optional()?;
                if stored.is_none() {
                    insert_result(tx, &report.id, position, entry)?;
                } else if let Some(ms) = entry.wall_ms {
                    // Known once the workload's last round is over, after its repetitions
                    // were stored.
                    tx.prepare_cached("UPDATE results SET wall_ms = ?3 WHERE run_id = ?1 AND position = ?2")?
                        .execute(params![report.id, to_sql_int(position as u64), to_sql_int(ms)])?;
                }
            }
            tx.execute(
                "UPDATE runs SET complete = ?2, finished_unix_ms = ?3, failure = ?4 WHERE id = ?1",
                params![report.id, report.complete, to_sql_int(finished_unix_ms), report.failure],
            )?;
            Ok(true)
        })
        .map_err(fail)
    }

    /// Marks a run as finished: `complete` is false when it stopped early.
    pub fn finish_run(&mut self, run_id: &str, complete: bool, finished_unix_ms: u64) -> Result<(), StoreError> {
        let fail = self.fail(|| format!("marking run '{run_id}' finished"));
        write(&self.conn, |tx| {
            let changed = tx.execute(
                "UPDATE runs SET complete = ?2, finished_unix_ms = ?3 WHERE id = ?1",
                params![run_id, complete, to_sql_int(finished_unix_ms)],
            )?;
            if changed == 0 {
                return Err(StoreError::UnknownRun(run_id.to_string()).into());
            }
            Ok(())
        })
        .map_err(fail)
    }

    /// Stores a whole run at once (results and measurements included) in one transaction,
    /// with `complete` as the report says: for runs imported or saved after the fact.
    pub fn save(&mut self, report: &RunReport, finished_unix_ms: Option<u64>) -> Result<(), StoreError> {
        let fail = self.fail(|| format!("storing run '{}'", report.id));
        write(&self.conn, |tx| {
            insert_run(tx, report, report.complete, finished_unix_ms)?;
            for (position, entry) in report.results.iter().enumerate() {
                insert_result(tx, &report.id, position, entry)?;
            }
            Ok(())
        })
        .map_err(fail)
    }

    /// Deletes a run with its results, measurements and metrics.
    pub fn remove(&mut self, run_id: &str) -> Result<(), StoreError> {
        let fail = self.fail(|| format!("removing run '{run_id}'"));
        write(&self.conn, |tx| {
            // foreign_keys=ON: the results, measurements and metrics go with it (ON DELETE CASCADE).
            if tx.execute("DELETE FROM runs WHERE id = ?1", [run_id])? == 0 {
                return Err(StoreError::UnknownRun(run_id.to_string()).into());
            }
            Ok(())
        })
        .map_err(fail)
    }
}

/// Runs `body` in an immediate transaction (the write lock is taken up front, so a busy
/// database waits for the busy timeout instead of failing half-way) and commits it.
fn write<T>(conn: &rusqlite::Connection, body: impl FnOnce(&Transaction<'_>) -> Result<T, Fail>) -> Result<T, Fail> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let value = body(&tx)?;
    tx.commit()?;
    Ok(value)
}

/// JSON text of a stored value. Serializing the model's plain data cannot fail; if it ever
/// did, the error reaches the caller as a failed write, never as a panic.
fn json(value: &impl Serialize) -> Result<String, Fail> {
    serde_json::to_string(value).map_err(|e| Fail::Sql(rusqlite::Error::ToSqlConversionFailure(Box::new(e))))
}

fn insert_run(
    tx: &Transaction<'_>,
    report: &RunReport,
    complete: bool,
    finished_unix_ms: Option<u64>,
) -> Result<(), Fail> {
    let exists = tx.query_row("SELECT 1 FROM runs WHERE id = ?1", [&report.id], |_| Ok(())).optional()?;
    if exists.is_some() {
        return Err(StoreError::RunExists(report.id.clone()).into());
    }
    tx.execute(
        "INSERT INTO runs (id, started_unix_ms, finished_unix_ms, complete, plan, environment, global_options,
                           fsarena_version, name, tags, failure)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            report.id,
            to_sql_int(report.started_unix_ms),
            finished_unix_ms.map(to_sql_int),
            complete,
            report.plan,
            json(&report.environment)?,
            json(&report.global_options)?,
            fsarena_core::VERSION,
            report.name,
            json(&report.tags)?,
            report.failure,
        ],
    )?;
    Ok(())
}

/// Whether `run` is stored: `false` when no run has its id, an error when one with its id but
/// another start time is (another run, never to be added to).
fn run_is_stored(tx: &Transaction<'_>, run: &RunReport) -> Result<bool, Fail> {
    let started = tx
        .prepare_cached("SELECT started_unix_ms FROM runs WHERE id = ?1")?
        .query_row([&run.id], |row| row.get::<_, i64>(0))
        .optional()?;
    match started {
        None => Ok(false),
        Some(started) if started == to_sql_int(run.started_unix_ms) => Ok(true),
        Some(_) => Err(StoreError::RunExists(run.id.clone()).into()),
    }
}

/// A result with its measurements.
fn insert_result(tx: &Transaction<'_>, run_id: &str, position: usize, entry: &ResultEntry) -> Result<i64, Fail> {
    let result_id = insert_result_row(tx, run_id, position, entry)?;
    for (repetition, m) in entry.measurements.iter().enumerate() {
        insert_measurement(tx, result_id, u32::try_from(repetition).unwrap_or(u32::MAX), m)?;
    }
    Ok(result_id)
}

/// A result's row alone (target and workload), without its measurements.
fn insert_result_row(tx: &Transaction<'_>, run_id: &str, position: usize, entry: &ResultEntry) -> Result<i64, Fail> {
    let run = tx.prepare_cached("SELECT 1 FROM runs WHERE id = ?1")?.query_row([run_id], |_| Ok(())).optional()?;
    if run.is_none() {
        return Err(StoreError::UnknownRun(run_id.to_string()).into());
    }
    let position = to_sql_int(position as u64);
    let taken = tx
        .prepare_cached("SELECT 1 FROM results WHERE run_id = ?1 AND position = ?2")?
        .query_row(params![run_id, position], |_| Ok(()))
        .optional()?;
    if taken.is_some() {
        return Err(StoreError::Duplicate(format!("result position {position} of run '{run_id}'")).into());
    }
    tx.prepare_cached(
        "INSERT INTO results (run_id, position, target_label, target_kind, target_options, target_info,
                              workload_kind, workload_params, point, part, wall_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        run_id,
        position,
        entry.target_label,
        entry.target_kind,
        json(&entry.target_options)?,
        json(&entry.target_info)?,
        entry.workload_kind,
        json(&entry.workload_params)?,
        json(&entry.point)?,
        entry.part,
        entry.wall_ms.map(to_sql_int),
    ])?;
    Ok(tx.last_insert_rowid())
}

fn insert_measurement(tx: &Transaction<'_>, result_id: i64, repetition: u32, m: &Measurement) -> Result<(), Fail> {
    let taken = tx
        .prepare_cached("SELECT 1 FROM measurements WHERE result_id = ?1 AND repetition = ?2")?
        .query_row(params![result_id, repetition], |_| Ok(()))
        .optional()?;
    if taken.is_some() {
        return Err(StoreError::Duplicate(format!("repetition {repetition} of result {result_id}")).into());
    }
    tx.prepare_cached("INSERT INTO measurements (result_id, repetition, complete, data) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![result_id, repetition, m.complete, json(m)?])?;
    let measurement_id = tx.last_insert_rowid();
    let mut insert_metric = tx.prepare_cached(
        "INSERT INTO metrics (measurement_id, name, unit, better, value) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for metric in &m.metrics {
        let better = match metric.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        };
        // SQLite stores NaN as NULL; ±infinity is kept.
        insert_metric.execute(params![measurement_id, metric.name, metric.unit, better, metric.value])?;
    }
    Ok(())
}
