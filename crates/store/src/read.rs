//! Reading runs back: the list, one whole run, and resolving what the user typed to a run id.

use crate::{from_sql_int, lenient, Fail, Store, StoreError};
use fsarena_core::run::{ResultEntry, RunReport};
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One line of `fsarena results list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Run identifier.
    pub id: String,
    /// Unix time of the run's start, in milliseconds.
    pub started_unix_ms: u64,
    /// Unix time of the run's end, in milliseconds; `None` when it never finished (killed).
    pub finished_unix_ms: Option<u64>,
    /// False when the run stopped early or never finished.
    pub complete: bool,
    /// Target labels, in the order they ran, each once.
    pub targets: Vec<String>,
    /// Workload titles (`kind:k=v,...`), in the order they ran, each once.
    pub workloads: Vec<String>,
    /// Number of stored results (target × workload entries).
    pub results: usize,
    /// The run's name (`--name`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The run's tags (`--tag`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// The columns of `runs` a summary shows (not the plan nor the environment, which can be long).
const SUMMARY_COLUMNS: &str = "id, started_unix_ms, finished_unix_ms, complete, name, tags";

/// Newest first; the id breaks ties between runs started in the same millisecond.
const NEWEST_FIRST: &str = "ORDER BY started_unix_ms DESC, id DESC";

impl Store {
    /// The stored runs, newest first, at most `limit` of them.
    pub fn list(&self, limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let inner = format!("SELECT {SUMMARY_COLUMNS} FROM runs {NEWEST_FIRST} LIMIT ?1");
        self.summaries(&inner, params![limit]).map_err(self.fail(|| "listing runs".to_string()))
    }

    /// The summary of one run, as [`Store::list`] shows it.
    pub fn summary(&self, run_id: &str) -> Result<RunSummary, StoreError> {
        let found = self
            .summaries(&format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = ?1"), params![run_id])
            .map_err(self.fail(|| format!("reading run '{run_id}'")))?;
        found.into_iter().next().ok_or_else(|| StoreError::UnknownRun(run_id.to_string()))
    }

    /// One query over the chosen runs joined with their results, in run order then position
    /// order: a single pass, whatever the number of runs.
    fn summaries(&self, runs: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<RunSummary>, Fail> {
        let sql = format!(
            "SELECT r.id, r.started_unix_ms, r.finished_unix_ms, r.complete, r.name, r.tags,
                    s.target_label, s.workload_kind, s.workload_params
             FROM ({runs}) AS r LEFT JOIN results AS s ON s.run_id = r.id
             ORDER BY r.started_unix_ms DESC, r.id DESC, s.position"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query(params)?;
        let mut out: Vec<RunSummary> = Vec::new();
        // Workload parameters repeat across runs; format each distinct one once.
        let mut titles: HashMap<(String, String), String> = HashMap::new();
        while let Some(row) = rows.next()? {
            let id: String = row.get(0)?;
            if !matches!(out.last(), Some(last) if last.id == id) {
                out.push(RunSummary {
                    id,
                    started_unix_ms: from_sql_int(row.get(1)?),
                    finished_unix_ms: row.get::<_, Option<i64>>(2)?.map(from_sql_int),
                    complete: row.get(3)?,
                    targets: Vec::new(),
                    workloads: Vec::new(),
                    results: 0,
                    name: row.get(4)?,
                    tags: serde_json::from_str(&row.get::<_, String>(5)?).unwrap_or_default(),
                });
            }
            let Some(label) = row.get::<_, Option<String>>(6)? else { continue };
            let kind: String = row.get(7)?;
            let params: String = row.get(8)?;
            let title = titles.entry((kind, params)).or_insert_with_key(|(kind, params)| workload_title(kind, params));
            if let Some(summary) = out.last_mut() {
                summary.results += 1;
                if !summary.targets.contains(&label) {
                    summary.targets.push(label);
                }
                if !summary.workloads.contains(title) {
                    summary.workloads.push(title.clone());
                }
            }
        }
        Ok(out)
    }

    /// The whole run `run_id` (an exact id; see [`Store::resolve`]): results in position order,
    /// measurements in repetition order.
    pub fn load(&self, run_id: &str) -> Result<RunReport, StoreError> {
        let action = || format!("reading run '{run_id}'");
        // One read transaction: a run being written meanwhile is seen at one instant.
        let read = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)
            .map_err(Fail::from)
            .and_then(|tx| self.load_in(&tx, run_id));
        read.map_err(self.fail(action))
    }

    fn load_in(&self, tx: &Transaction<'_>, run_id: &str) -> Result<RunReport, Fail> {
        let run = tx
            .query_row(
                "SELECT started_unix_ms, complete, plan, environment, global_options, name, tags, failure
                 FROM runs WHERE id = ?1",
                [run_id],
                |row| {
                    Ok((
                        (row.get::<_, i64>(0)?, row.get(1)?, row.get(2)?),
                        (row.get::<_, String>(3)?, row.get::<_, String>(4)?),
                        (row.get::<_, Option<String>>(5)?, row.get::<_, String>(6)?, row.get::<_, Option<String>>(7)?),
                    ))
                },
            )
            .optional()?;
        let Some(((started, complete, plan), (environment, global_options), (name, tags, failure))) = run else {
            return Err(StoreError::UnknownRun(run_id.to_string()).into());
        };
        let parse = |what: &str, text: &str| self.parse_pairs(run_id, what, text);
        let mut report = RunReport {
            id: run_id.to_string(),
            started_unix_ms: from_sql_int(started),
            environment: parse("environment", &environment)?,
            global_options: parse("global options", &global_options)?,
            results: Vec::new(),
            plan,
            complete,
            name,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            failure,
        };

        let mut stmt = tx.prepare(
            "SELECT id, target_label, target_kind, target_options, target_info, workload_kind, workload_params,
                    point, part, wall_ms
             FROM results WHERE run_id = ?1 ORDER BY position",
        )?;
        let mut rows = stmt.query([run_id])?;
        let mut index_of: HashMap<i64, usize> = HashMap::new();
        while let Some(row) = rows.next()? {
            let position = report.results.len();
            let what = |column: &str| format!("{column} of result {position}");
            index_of.insert(row.get(0)?, position);
            report.results.push(ResultEntry {
                target_label: row.get(1)?,
                target_kind: row.get(2)?,
                target_options: parse(&what("target options"), &row.get::<_, String>(3)?)?,
                target_info: parse(&what("target info"), &row.get::<_, String>(4)?)?,
                workload_kind: row.get(5)?,
                workload_params: parse(&what("workload parameters"), &row.get::<_, String>(6)?)?,
                point: serde_json::from_str(&row.get::<_, String>(7)?)
                    .map_err(|e| self.corrupt(run_id, &what("sweep point"), &e))?,
                part: row.get(8)?,
                measurements: Vec::new(),
                wall_ms: row.get::<_, Option<i64>>(9)?.and_then(|ms| u64::try_from(ms).ok()),
            });
        }

        let mut stmt = tx.prepare(
            "SELECT m.result_id, m.repetition, m.data FROM measurements AS m
             JOIN results AS r ON r.id = m.result_id
             WHERE r.run_id = ?1 ORDER BY r.position, m.repetition",
        )?;
        let mut rows = stmt.query([run_id])?;
        while let Some(row) = rows.next()? {
            let result_id: i64 = row.get(0)?;
            let repetition: i64 = row.get(1)?;
            let data: String = row.get(2)?;
            let Some(&index) = index_of.get(&result_id) else { continue };
            let measurement = lenient::from_str(&data).map_err(|e| {
                self.corrupt(run_id, &format!("measurement (repetition {repetition}) of result {index}"), &e)
            })?;
            report.results[index].measurements.push(measurement);
        }
        Ok(report)
    }

    /// A stored JSON array of `[key, value]` pairs.
    fn parse_pairs(&self, run_id: &str, what: &str, text: &str) -> Result<Vec<(String, String)>, Fail> {
        serde_json::from_str(text).map_err(|e| self.corrupt(run_id, what, &e).into())
    }

    fn corrupt(&self, run_id: &str, what: &str, e: &serde_json::Error) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            run: run_id.to_string(),
            what: what.to_string(),
            detail: e.to_string(),
        }
    }

    /// The run id that `spec` names: a full id, a unique prefix of one, `last` (the newest
    /// run) or `last~N` (the N-th before the newest).
    pub fn resolve(&self, spec: &str) -> Result<String, StoreError> {
        self.resolve_in(spec).map_err(self.fail(|| format!("looking up run '{spec}'")))
    }

    fn resolve_in(&self, spec: &str) -> Result<String, Fail> {
        let unknown = || Fail::Store(StoreError::UnknownRun(spec.to_string()));
        if spec.is_empty() {
            return Err(unknown());
        }
        let back =
            if spec == "last" { Some(0) } else { spec.strip_prefix("last~").and_then(|n| n.parse::<i64>().ok()) };
        if let Some(back) = back.filter(|n| *n >= 0) {
            let sql = format!("SELECT id FROM runs {NEWEST_FIRST} LIMIT 1 OFFSET ?1");
            return self.conn.query_row(&sql, [back], |row| row.get(0)).optional()?.ok_or_else(unknown);
        }
        let exact = self.conn.query_row("SELECT id FROM runs WHERE id = ?1", [spec], |row| row.get(0)).optional()?;
        if let Some(id) = exact {
            return Ok(id);
        }
        // A name finds the newest run that has it, before any id prefix does.
        let sql = format!("SELECT id FROM runs WHERE name = ?1 {NEWEST_FIRST} LIMIT 1");
        if let Some(id) = self.conn.query_row(&sql, [spec], |row| row.get(0)).optional()? {
            return Ok(id);
        }
        let sql = format!("SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 {NEWEST_FIRST}");
        let mut stmt = self.conn.prepare(&sql)?;
        let mut candidates = stmt.query_map([spec], |row| row.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        match candidates.len() {
            0 => Err(unknown()),
            1 => Ok(candidates.remove(0)),
            _ => Err(StoreError::Ambiguous(spec.to_string(), candidates).into()),
        }
    }
}

/// `kind:k=v,...` exactly as reports title a workload; stored parameters that do not parse
/// (a hand-edited database) show as the bare kind rather than failing the whole list.
fn workload_title(kind: &str, params: &str) -> String {
    let entry = ResultEntry {
        workload_kind: kind.to_string(),
        workload_params: serde_json::from_str(params).unwrap_or_default(),
        ..ResultEntry::default()
    };
    entry.workload_title()
}
