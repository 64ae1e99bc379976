//! The SQLite side of a run: the database and its connections (pragmas set on each, as a
//! program would), the inserts mode's single connection, and the mixed mode's writer and
//! reader threads. Each returns its measurement and, when something failed, the first error.

use super::options::{Mode, SqliteOptions};
use fsarena_core::{Better, Measurement};
use fsarena_stats::LatencyHistogram;
use fsarena_workload::live::LiveBatch;
use fsarena_workload::phase::OpTimer;
use fsarena_workload::RunEnv;
use rusqlite::{params, Connection, OpenFlags};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The table every mode uses: an integer primary key (the rowid), a number and the payload.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v BLOB NOT NULL)";
const INSERT: &str = "INSERT INTO t (k, v) VALUES (?1, ?2)";
const POINT: &str = "SELECT k, v FROM t WHERE id = ?1";
const RANGE: &str = "SELECT k, v FROM t WHERE id >= ?1 ORDER BY id LIMIT ?2";

/// How long a connection waits for another's lock before the run fails: long, because in
/// rollback-journal modes writers and readers wait for each other by design.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Opens a connection to `path` with the run's pragmas; `create` makes the database (the page
/// size is set before the first table, where SQLite applies it).
pub(crate) fn connect(path: &Path, o: &SqliteOptions, create: bool) -> Result<Connection, String> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let at = |what: &str, e: rusqlite::Error| format!("sqlite {}: {what}: {e}", path.display());
    let conn = Connection::open_with_flags(path, flags).map_err(|e| at("open", e))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| at("busy_timeout", e))?;
    if create {
        conn.pragma_update(None, "page_size", o.page_size).map_err(|e| at("PRAGMA page_size", e))?;
    }
    // journal_mode answers with the mode in force: a mode SQLite cannot use here is refused
    // by name rather than run silently in another.
    let mode: String = conn
        .query_row(&format!("PRAGMA journal_mode={}", o.journal_mode), [], |r| r.get(0))
        .map_err(|e| at("PRAGMA journal_mode", e))?;
    if !mode.eq_ignore_ascii_case(o.journal_mode) {
        return Err(format!("journal_mode={}: SQLite answered '{mode}' on {}", o.journal_mode, path.display()));
    }
    conn.pragma_update(None, "synchronous", o.synchronous).map_err(|e| at("PRAGMA synchronous", e))?;
    let kib = (o.cache_size / 1024).max(1);
    conn.pragma_update(None, "cache_size", -(kib as i64)).map_err(|e| at("PRAGMA cache_size", e))?;
    if create {
        conn.execute_batch(SCHEMA).map_err(|e| at("CREATE TABLE", e))?;
    }
    Ok(conn)
}

/// The payload of a thread's rows: random bytes (SQLite stores BLOBs as they are).
fn payload(o: &SqliteOptions, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..o.row_size).map(|_| rng.u8(..)).collect()
}

/// Rows in the table, counted untimed at the end (the check that every insert landed).
fn count_rows(conn: &Connection) -> Result<u64, String> {
    conn.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
        .map_err(|e| format!("sqlite: counting rows: {e}"))
}

/// SQLite's version as a number (3045001), a counter so a stored result says which SQLite ran.
fn version_counter(m: &mut Measurement) {
    m.count("sqlite_version", u64::try_from(rusqlite::version_number()).unwrap_or(0));
}

/// Per second of `ns`.
fn rate(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

/// Mean and p99 of `op`'s histogram as metrics, when it has samples.
fn latency_metrics(m: &mut Measurement, op: &str, h: &LatencyHistogram) {
    if h.is_empty() {
        return;
    }
    m.push(&format!("{op}_lat_mean"), "ns", Better::Lower, h.mean());
    m.push(&format!("{op}_lat_p99"), "ns", Better::Lower, h.percentile(99.0) as f64);
    m.add_latency(op, h);
}

/// Phoronix's test: `inserts` INSERTs on one connection, each its own (autocommit) transaction.
pub(crate) fn inserts(o: &SqliteOptions, env: &RunEnv<'_>, path: &Path) -> (Measurement, Option<String>) {
    let mut m = Measurement::default();
    let conn = match connect(path, o, true) {
        Ok(c) => c,
        Err(e) => return (m, Some(e)),
    };
    let data = payload(o, 1);
    let mut hist = LatencyHistogram::new();
    let mut live = LiveBatch::new(env.live);
    let mut error = None;
    let start = Instant::now();
    match conn.prepare(INSERT) {
        Err(e) => error = Some(format!("sqlite: prepare INSERT: {e}")),
        Ok(mut stmt) => {
            for i in 0..o.inserts {
                if env.stop.load(Ordering::Relaxed) {
                    break;
                }
                let t0 = OpTimer::start();
                if let Err(e) = stmt.execute(params![i as i64, &data]) {
                    error = Some(format!("sqlite: INSERT {} of {}: {e}", i + 1, o.inserts));
                    break;
                }
                t0.record(&mut hist);
                live.add(o.row_size, start.elapsed().as_nanos() as u64);
            }
        }
    }
    let elapsed = start.elapsed().as_nanos() as u64;
    live.flush();
    m.push("inserts_per_s", "ops/s", Better::Higher, rate(hist.len(), elapsed));
    m.push("elapsed", "ns", Better::Lower, elapsed as f64);
    latency_metrics(&mut m, "insert", &hist);
    m.count("insert.ops", hist.len());
    finish(&mut m, &conn, &mut error);
    (m, error)
}

/// The closing counters: rows in the table and SQLite's version.
fn finish(m: &mut Measurement, conn: &Connection, error: &mut Option<String>) {
    match count_rows(conn) {
        Ok(n) => m.count("rows_in_table", n),
        Err(e) => {
            error.get_or_insert(e);
        }
    }
    version_counter(m);
}

/// What one thread of a mixed run did.
#[derive(Default)]
struct Tally {
    /// Writers: one sample per transaction of `batch` rows. Readers: none.
    insert: LatencyHistogram,
    /// Readers: one sample per point query.
    point: LatencyHistogram,
    /// Readers: one sample per range query.
    range: LatencyHistogram,
    /// Rows in the transactions committed.
    rows_inserted: u64,
    /// Rows the range queries returned.
    rows_read: u64,
    error: Option<String>,
}

/// What the threads of a mixed run share.
struct Shared<'a> {
    o: &'a SqliteOptions,
    env: &'a RunEnv<'a>,
    path: &'a Path,
    /// Rows the writers may still claim (`rows`, else unbounded).
    budget: AtomicU64,
    /// The largest committed rowid: readers query keys up to it.
    committed: AtomicU64,
    /// Set when the run ends: time, all writers done, a failure, or Ctrl-C.
    over: AtomicBool,
    /// All threads have their connection before the clock starts.
    ready: Barrier,
    /// When the time limit ends the run, set as the clock starts.
    deadline: std::sync::OnceLock<Instant>,
}

impl Shared<'_> {
    fn ended(&self) -> bool {
        self.over.load(Ordering::Relaxed)
            || self.env.stop.load(Ordering::Relaxed)
            || self.deadline.get().is_some_and(|d| Instant::now() >= *d)
    }

    /// Claims up to `batch` rows of the budget; 0 when it is spent.
    fn claim(&self) -> u64 {
        let batch = u64::from(self.o.batch);
        self.budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| (left > 0).then(|| left - left.min(batch)))
            .map_or(0, |left| left.min(batch))
    }
}

/// One writer: transactions of `batch` rows (BEGIN IMMEDIATE takes the write lock first, so
/// concurrent writers wait in the busy handler instead of failing to upgrade).
fn writer(s: &Shared<'_>, conn: Result<Connection, String>, seed: u64) -> Tally {
    let mut t = Tally::default();
    s.ready.wait();
    let conn = match conn {
        Ok(c) => c,
        Err(e) => {
            t.error = Some(e);
            return t;
        }
    };
    let data = payload(s.o, seed);
    let mut live = LiveBatch::new(s.env.live);
    // The batch's clock: the thread's own, from here.
    let clock = Instant::now();
    let mut k = seed << 40;
    let mut step = || -> Result<bool, rusqlite::Error> {
        let n = s.claim();
        if n == 0 {
            return Ok(false);
        }
        let t0 = OpTimer::start();
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let done = (|| {
            let mut stmt = conn.prepare_cached(INSERT)?;
            for _ in 0..n {
                k += 1;
                stmt.execute(params![k as i64, &data])?;
            }
            conn.execute_batch("COMMIT")
        })();
        if let Err(e) = done {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e);
        }
        t0.record(&mut t.insert);
        t.rows_inserted += n;
        s.committed.fetch_max(conn.last_insert_rowid().max(0) as u64, Ordering::Relaxed);
        live.add(n * s.o.row_size, clock.elapsed().as_nanos() as u64);
        Ok(true)
    };
    let mut error = None;
    while !s.ended() {
        match step() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                error = Some(format!("sqlite: writer transaction: {e}"));
                break;
            }
        }
    }
    t.error = error;
    t
}

/// One reader: point queries (one row by key) and range queries (`range` rows from a key),
/// keys uniform over the committed rows.
fn reader(s: &Shared<'_>, conn: Result<Connection, String>, seed: u64) -> Tally {
    let mut t = Tally::default();
    s.ready.wait();
    let conn = match conn {
        Ok(c) => c,
        Err(e) => {
            t.error = Some(e);
            return t;
        }
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut live = LiveBatch::new(s.env.live);
    // The batch's clock: the thread's own, from here.
    let clock = Instant::now();
    let range = u64::from(s.o.range);
    let mut query = |rng: &mut fastrand::Rng, t: &mut Tally| -> Result<(), rusqlite::Error> {
        let max = s.committed.load(Ordering::Relaxed);
        if max == 0 {
            // Nothing committed yet (prefill=0): wait for the first writer's commit.
            std::thread::sleep(Duration::from_millis(1));
            return Ok(());
        }
        let point = rng.u32(0..100) < s.o.point_percent;
        let t0 = OpTimer::start();
        let mut bytes = 0u64;
        if point {
            let key = rng.u64(1..=max) as i64;
            let mut stmt = conn.prepare_cached(POINT)?;
            let mut rows = stmt.query([key])?;
            while let Some(row) = rows.next()? {
                bytes += row.get_ref(1)?.as_bytes().map_or(0, |b| b.len() as u64);
            }
            t0.record(&mut t.point);
        } else {
            let key = rng.u64(1..=max.saturating_sub(range).max(1)) as i64;
            let mut stmt = conn.prepare_cached(RANGE)?;
            let mut rows = stmt.query(params![key, range as i64])?;
            while let Some(row) = rows.next()? {
                bytes += row.get_ref(1)?.as_bytes().map_or(0, |b| b.len() as u64);
                t.rows_read += 1;
            }
            t0.record(&mut t.range);
        }
        live.add(bytes, clock.elapsed().as_nanos() as u64);
        Ok(())
    };
    while !s.ended() {
        if let Err(e) = query(&mut rng, &mut t) {
            t.error = Some(format!("sqlite: reader query: {e}"));
            break;
        }
    }
    t
}

/// The trading-platform study's phase: `writers` inserting in batches while `readers` query,
/// for `runtime` or until `rows` are inserted; `prefill` rows first, untimed.
pub(crate) fn mixed(o: &SqliteOptions, env: &RunEnv<'_>, path: &Path) -> (Measurement, Option<String>) {
    debug_assert_eq!(o.mode, Mode::Mixed);
    let mut m = Measurement::default();
    let setup = connect(path, o, true).and_then(|c| prefill(&c, o, env.stop).map(|()| c));
    let conn = match setup {
        Ok(c) => c,
        Err(e) => return (m, Some(e)),
    };
    let s = Shared {
        o,
        env,
        path,
        budget: AtomicU64::new(o.rows.unwrap_or(u64::MAX)),
        committed: AtomicU64::new(o.prefill),
        over: AtomicBool::new(false),
        ready: Barrier::new((o.writers + o.readers) as usize + 1),
        deadline: std::sync::OnceLock::new(),
    };
    let (tallies, elapsed) = std::thread::scope(|scope| {
        let s = &s;
        let writers: Vec<_> = (0..o.writers)
            .map(|i| scope.spawn(move || writer(s, connect(s.path, s.o, false), u64::from(i) + 1)))
            .collect();
        let readers: Vec<_> = (0..o.readers)
            .map(|i| scope.spawn(move || reader(s, connect(s.path, s.o, false), 1000 + u64::from(i))))
            .collect();
        s.ready.wait();
        let start = Instant::now();
        if let Some(limit) = o.time_limit() {
            let _ = s.deadline.set(start + Duration::from_nanos(limit));
        }
        let mut tallies = Vec::new();
        for h in writers {
            let t = h
                .join()
                .unwrap_or_else(|_| Tally { error: Some("sqlite: a writer panicked".into()), ..Tally::default() });
            if t.error.is_some() {
                s.over.store(true, Ordering::Relaxed);
            }
            tallies.push(t);
        }
        // The writers are done (budget spent, time up, or a failure): so is the run.
        let writing = start.elapsed().as_nanos() as u64;
        s.over.store(true, Ordering::Relaxed);
        for h in readers {
            tallies.push(
                h.join()
                    .unwrap_or_else(|_| Tally { error: Some("sqlite: a reader panicked".into()), ..Tally::default() }),
            );
        }
        (tallies, writing.max(1))
    });
    let mut all = Tally::default();
    for t in tallies {
        all.insert.merge(&t.insert);
        all.point.merge(&t.point);
        all.range.merge(&t.range);
        all.rows_inserted += t.rows_inserted;
        all.rows_read += t.rows_read;
        if all.error.is_none() {
            all.error = t.error;
        }
    }
    let queries = all.point.len() + all.range.len();
    m.push("inserts_per_s", "ops/s", Better::Higher, rate(all.rows_inserted, elapsed));
    m.push("queries_per_s", "ops/s", Better::Higher, rate(queries, elapsed));
    m.push("point_per_s", "ops/s", Better::Higher, rate(all.point.len(), elapsed));
    m.push("range_per_s", "ops/s", Better::Higher, rate(all.range.len(), elapsed));
    m.push("elapsed", "ns", Better::Lower, elapsed as f64);
    for (op, h) in [("insert", &all.insert), ("point", &all.point), ("range", &all.range)] {
        latency_metrics(&mut m, op, h);
        m.count(&format!("{op}.ops"), h.len());
    }
    m.count("insert.rows", all.rows_inserted);
    m.count("range.rows", all.rows_read);
    m.count("prefill.rows", o.prefill);
    let mut error = all.error;
    finish(&mut m, &conn, &mut error);
    (m, error)
}

/// `prefill` rows in transactions of 10,000, untimed; Ctrl-C stops it between transactions
/// (the timed threads then see the stop at once).
fn prefill(conn: &Connection, o: &SqliteOptions, stop: &AtomicBool) -> Result<(), String> {
    let data = payload(o, 0);
    let fail = |e: rusqlite::Error| format!("sqlite: prefill: {e}");
    let mut stmt = conn.prepare(INSERT).map_err(fail)?;
    let mut done = 0;
    while done < o.prefill && !stop.load(Ordering::Relaxed) {
        let n = (o.prefill - done).min(10_000);
        conn.execute_batch("BEGIN").map_err(fail)?;
        for i in done..done + n {
            stmt.execute(params![i as i64, &data]).map_err(fail)?;
        }
        conn.execute_batch("COMMIT").map_err(fail)?;
        done += n;
    }
    Ok(())
}
