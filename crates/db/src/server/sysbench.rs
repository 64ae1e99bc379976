//! The `sysbench` workload: Debian's MariaDB with its data directory in the target, driven by
//! Debian's sysbench and its OLTP scripts (/usr/share/sysbench/*.lua).
//!
//! The server is `mariadbd --no-defaults` (never the system's /etc/mysql configuration, socket
//! or instance) run as `mysql`: `mariadb-install-db` into the target, then `mariadbd
//! --datadir=DATA --socket=RUNDIR/mysqld.sock --skip-networking`; root connects over the
//! socket by unix_socket authentication. `sysbench TEST prepare` loads the `sbtest` database
//! once per combination of server keys (see [`super`]); each round starts the server, drops
//! the caches and runs `sysbench TEST run`. Figures as sysbench prints them: transactions/s,
//! queries/s, latency avg, 95th percentile and max, ignored errors, reconnects.

use super::pgbench::{choice, whole_seconds};
use super::process::ServerStart;
use super::{Account, Initialise, Measured, Round, Running, Server};
use fsarena_core::option::DefaultValue::Is;
use fsarena_core::option::ValueKind::{Choice, Count, Size, Time};
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_workload::options::{opt, positive, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The sysbench tests this workload runs (Debian's scripts of the same names).
pub const TESTS: &[&str] =
    &["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_insert", "oltp_point_select", "bulk_insert"];
/// InnoDB's `innodb_flush_log_at_trx_commit` values.
pub const FLUSH_LOG: &[&str] = &["0", "1", "2"];
/// InnoDB's `innodb_flush_method` values on Linux (MariaDB 10.11).
pub const FLUSH_METHODS: &[&str] = &["fsync", "O_DIRECT", "O_DSYNC", "O_DIRECT_NO_FSYNC"];
/// Where Debian's sysbench keeps its Lua scripts.
const SCRIPTS: &str = "/usr/share/sysbench";
/// Threads of a MariaDB server besides one per connection (InnoDB's I/O, purge and page
/// cleaner threads, ...), with room to spare.
const SERVER_THREADS: u64 = 32;
/// What a connection costs in the server beyond the buffer pool (its thread's stack and
/// network and sort buffers).
const BYTES_PER_CONNECTION: u64 = 1 << 20;

/// The options of one `sysbench` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysbenchOptions {
    /// The sysbench test (script).
    pub test: &'static str,
    /// `--tables`.
    pub tables: u32,
    /// `--table-size`: rows per table.
    pub table_size: u32,
    /// `--threads`.
    pub threads: u32,
    /// `--time`, seconds.
    pub time: u64,
    /// Server: `innodb_flush_log_at_trx_commit`.
    pub innodb_flush_log_at_trx_commit: &'static str,
    /// Server: `innodb_flush_method`.
    pub innodb_flush_method: &'static str,
    /// Server: `innodb_buffer_pool_size` in bytes.
    pub innodb_buffer_pool_size: u64,
    /// How long the server may take to accept connections, seconds.
    pub start_timeout: u64,
}

impl Default for SysbenchOptions {
    fn default() -> Self {
        Self {
            test: "oltp_read_write",
            tables: 1,
            table_size: 10_000,
            threads: 1,
            time: 10,
            innodb_flush_log_at_trx_commit: "1",
            innodb_flush_method: "fsync",
            innodb_buffer_pool_size: 128 << 20,
            start_timeout: 60,
        }
    }
}

/// A row of the sysbench table.
macro_rules! sb {
    ($($rest:tt)*) => { opt!(SysbenchOptions, $($rest)*) };
}

/// The one flush method equal to `v`, in MariaDB's spelling (`o_direct` is `O_DIRECT`).
fn flush_method(v: &str) -> Result<&'static str, String> {
    FLUSH_METHODS
        .iter()
        .find(|m| m.eq_ignore_ascii_case(v.trim()))
        .copied()
        .ok_or_else(|| format!("'{v}' is not an innodb_flush_method: expected {}", FLUSH_METHODS.join(", ")))
}

/// Every option of the `sysbench` workload.
pub static OPTIONS: &[OptionDef<SysbenchOptions>] = &[
    sb!("test", Choice(TESTS), Is("oltp_read_write"), "the sysbench test (Debian's script of that name)", |o, v| o
        .test =
        choice(v, TESTS, "sysbench test")?),
    sb!("tables", Count, Is("1"), "sysbench --tables; a server key", |o, v| o.tables = positive(v)?),
    sb!("table_size", Count, Is("10000"), "sysbench --table-size: rows per table; a server key", |o, v| o.table_size =
        positive(v)?),
    sb!("threads", Count, Is("1"), "sysbench --threads", |o, v| o.threads = positive(v)?),
    sb!("time", Time, Is("10s"), "sysbench --time: how long a round runs, whole seconds", |o, v| o.time =
        whole_seconds(v)?),
    sb!(
        "innodb_flush_log_at_trx_commit",
        Choice(FLUSH_LOG),
        Is("1"),
        "the server's innodb_flush_log_at_trx_commit; a server key",
        |o, v| o.innodb_flush_log_at_trx_commit = choice(v, FLUSH_LOG, "innodb_flush_log_at_trx_commit value")?
    ),
    sb!(
        "innodb_flush_method",
        Choice(FLUSH_METHODS),
        Is("fsync"),
        "the server's innodb_flush_method; a server key",
        |o, v| o.innodb_flush_method = flush_method(v)?
    ),
    sb!("innodb_buffer_pool_size", Size, Is("128m"), "the server's innodb_buffer_pool_size; a server key", |o, v| o
        .innodb_buffer_pool_size =
        fsarena_workload::options::nonzero_size(v)?),
    sb!("start_timeout", Time, Is("60s"), "how long the server may take to start before the run fails", |o, v| o
        .start_timeout =
        whole_seconds(v)?),
];

/// The `sysbench` workload.
#[derive(Debug, Clone)]
pub struct SysbenchWorkload {
    options: SysbenchOptions,
    mariadbd: PathBuf,
    install_db: PathBuf,
    client: PathBuf,
    sysbench: PathBuf,
    account: Account,
    given: Vec<(String, String)>,
}

impl SysbenchWorkload {
    /// From `--workload sysbench:test=oltp_read_write,threads=8,time=30s`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = SysbenchOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("sysbench", OPTIONS, &mut o, k, v)?;
        }
        let script = Path::new(SCRIPTS).join(format!("{}.lua", o.test));
        if !script.is_file() {
            return Err(InputError::new(format!(
                "sysbench: test={} needs {}, which is missing: install Debian's sysbench package",
                o.test,
                script.display()
            )));
        }
        let mariadbd = super::find_binary("sysbench", "mariadbd", "mariadb-server")?;
        let install_db = super::find_binary("sysbench", "mariadb-install-db", "mariadb-server")?;
        let client = super::find_binary("sysbench", "mariadb", "mariadb-client")?;
        let sysbench = super::find_binary("sysbench", "sysbench", "sysbench")?;
        let account = Account::lookup("sysbench", "mysql", "mariadb-server")?;
        Ok(Self { options: o, mariadbd, install_db, client, sysbench, account, given: spec.params.clone() })
    }

    fn server_command(&self, data: &Path, run: &Path) -> Command {
        let o = &self.options;
        let mut c = Command::new(&self.mariadbd);
        // --no-defaults must come first: no /etc/mysql, no ~/.my.cnf.
        c.arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", run.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", run.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", run.join("mariadb.log").display()))
            .arg("--skip-networking")
            .arg(format!("--innodb-flush-log-at-trx-commit={}", o.innodb_flush_log_at_trx_commit))
            .arg(format!("--innodb-flush-method={}", o.innodb_flush_method))
            .arg(format!("--innodb-buffer-pool-size={}", o.innodb_buffer_pool_size))
            .arg(format!("--max-connections={}", (o.threads + 10).max(151)))
            .current_dir("/");
        c
    }

    /// `sysbench TEST --db-driver=mysql ... COMMAND`.
    fn sysbench(&self, run: &Path, command: &str, threads: u32) -> Command {
        let o = &self.options;
        let mut c = Command::new(&self.sysbench);
        c.arg(o.test)
            .arg("--db-driver=mysql")
            .arg(format!("--mysql-socket={}", run.join("mysqld.sock").display()))
            .arg("--mysql-user=root")
            .arg("--mysql-db=sbtest")
            .arg(format!("--tables={}", o.tables))
            .arg(format!("--table-size={}", o.table_size))
            .arg(format!("--threads={threads}"))
            .current_dir(SCRIPTS);
        if command == "run" {
            c.arg(format!("--time={}", o.time)).arg("--events=0").arg("--percentile=95");
        }
        c.arg(command);
        c
    }
}

impl Workload for SysbenchWorkload {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let threads = u64::from(o.threads);
        // About 250 bytes per row with its indexes, plus InnoDB's system files (~100 MB).
        let rows = u64::from(o.tables) * u64::from(o.table_size);
        Footprint {
            source: format!(
                "sysbench workload (tables={}, table_size={}, threads={})",
                o.tables, o.table_size, o.threads
            ),
            // sysbench's threads, a server thread per connection, and the server's own.
            threads: threads * 2 + SERVER_THREADS,
            buffer_bytes: o.innodb_buffer_pool_size + threads * BYTES_PER_CONNECTION,
            bytes_on_target: rows * 250 + (128 << 20),
            files: 200 + u64::from(o.tables) * 2,
            // sysbench holds a connection per thread, under the limit it inherits from fsarena.
            open_files: threads + 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        vec![
            format!(
                "sysbench: mariadb-install-db and sysbench {} prepare --tables={} --table-size={} in the target, once per server keys, untimed; {} as mysql, --skip-networking",
                o.test,
                o.tables,
                o.table_size,
                self.mariadbd.display()
            ),
            format!("sysbench: each round: start the server, drop caches, sysbench {} --threads={} --time={} run", o.test, o.threads, o.time),
        ]
    }

    fn estimate(&self) -> Option<Duration> {
        Some(Duration::from_secs(self.options.time))
    }

    fn hosts_server(&self) -> bool {
        true
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        super::round::run(self, env)
    }
}

impl SysbenchWorkload {
    /// Runs sysbench's untimed `step` (prepare, cleanup) against the round's server: whether
    /// it succeeded, and its output's end.
    fn step(&self, round: &Round<'_>, step: &str) -> Result<(bool, String), String> {
        // prepare loads the tables in parallel, as many threads as tables (up to 8).
        let command = self.sysbench(round.run_dir(), step, self.options.tables.min(8));
        let out = super::run_client(round.host, command, round.env.stop)?;
        Ok((out.success, format!("{} {}", out.stdout_tail(), out.stderr_tail)))
    }
}

impl Server for SysbenchWorkload {
    const KIND: &'static str = "sysbench";
    const ACCOUNT: &'static str = "mysql";
    const SOCKET: Option<&'static str> = Some("mysqld.sock");
    const LOG: &'static str = "mariadb.log";
    const FIGURE: &'static str = "queries_per_s";
    type Address = ();

    /// SIGTERM is its fast shutdown.
    fn server_start(&self) -> ServerStart {
        ServerStart { name: "MariaDB", account: self.account, stop_signal: libc::SIGTERM, own_ipc: true }
    }

    fn start_timeout(&self) -> Duration {
        Duration::from_secs(self.options.start_timeout)
    }

    /// The test too for bulk_insert, whose tables are not the OLTP tests' tables.
    fn server_keys(&self) -> Vec<(&'static str, String)> {
        let o = &self.options;
        vec![
            ("tables", o.tables.to_string()),
            ("table_size", o.table_size.to_string()),
            ("innodb_flush_log_at_trx_commit", o.innodb_flush_log_at_trx_commit.into()),
            ("innodb_flush_method", o.innodb_flush_method.into()),
            ("innodb_buffer_pool_size", o.innodb_buffer_pool_size.to_string()),
            ("schema", if o.test == "bulk_insert" { "bulk" } else { "oltp" }.into()),
        ]
    }

    fn loading(&self) -> String {
        format!("mariadb-install-db and {} prepare (untimed)", self.options.test)
    }

    fn initialise(&self, round: &Round<'_>) -> Option<Initialise> {
        let mut command = Command::new(&self.install_db);
        command
            .arg("--no-defaults")
            .arg(format!("--datadir={}", round.data.display()))
            .args(["--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve"])
            .current_dir("/");
        Some(Initialise { name: "mariadb-install-db", command, log: Some("install.log") })
    }

    /// The sbtest database, and sysbench prepare.
    fn populate(&self, round: &Round<'_>, _: &()) -> Result<(), String> {
        let mut create = Command::new(&self.client);
        create
            .arg("--no-defaults")
            .arg(format!("--socket={}", round.run_dir().join("mysqld.sock").display()))
            .args(["--user=root", "--execute=CREATE DATABASE sbtest"]);
        let out = super::run_client(round.host, create, round.env.stop)?;
        if !out.success {
            return Err(format!("creating the sbtest database failed: {}", out.stderr_tail));
        }
        match self.step(round, "prepare")? {
            (true, _) => Ok(()),
            (false, tail) => Err(format!("sysbench {} prepare failed; its output ends: {tail}", self.options.test)),
        }
    }

    fn command(&self, round: &Round<'_>) -> Result<(Command, ()), String> {
        Ok((self.server_command(round.data, round.run_dir()), ()))
    }

    fn ready(&self, round: &Round<'_>, _: &()) -> bool {
        std::os::unix::net::UnixStream::connect(round.run_dir().join("mysqld.sock")).is_ok()
    }

    /// bulk_insert's run fills its tables from id 1: a second round into the first one's rows
    /// would only hit duplicate keys. Every round starts from empty tables, as `sysbench
    /// bulk_insert cleanup; prepare; run` by hand (untimed).
    fn before_caches(&self, round: &Round<'_>, _: &()) -> Result<(), String> {
        if self.options.test == "bulk_insert" {
            for step in ["cleanup", "prepare"] {
                if let (false, tail) = self.step(round, step)? {
                    return Err(format!("sysbench bulk_insert {step} failed: {tail}"));
                }
            }
        }
        Ok(())
    }

    fn measure<'m>(&'m self, round: &'m Round<'_>, server: &'m Running<'_>, _: &()) -> Result<Measured<'m>, String> {
        let o = &self.options;
        (round.env.progress)(&format!("sysbench: {} --threads={}", o.test, o.threads));
        let out = super::run_client(round.host, self.sysbench(round.run_dir(), "run", o.threads), round.env.stop)?;
        let (figures, success, stopped) = (figures(&out.stdout), out.success, out.stopped);
        let why = move |_| {
            format!(
                "sysbench {} run failed; its output ends: {} {}; the server's log ends: {}",
                o.test,
                out.stdout_tail(),
                out.stderr_tail,
                server.tail()
            )
        };
        Ok(Measured { figures, success, stopped, why: Box::new(why) })
    }
}

/// sysbench's report as it prints it: `transactions: N (R per sec.)`, `queries: N (R per
/// sec.)`, `ignored errors:`, `reconnects:` and the `Latency (ms):` block.
pub fn figures(stdout: &str) -> Measurement {
    let mut m = Measurement::default();
    // "transactions:   1234   (123.45 per sec.)" → (1234, 123.45).
    let counted = |rest: &str| -> Option<(u64, f64)> {
        let mut words = rest.split_whitespace();
        let n = words.next()?.parse().ok()?;
        let rate = words.next()?.trim_start_matches('(').parse().ok()?;
        Some((n, rate))
    };
    let mut in_latency = false;
    for line in stdout.lines() {
        let line = line.trim();
        if line.starts_with("Latency (ms):") {
            in_latency = true;
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            in_latency = false;
            continue;
        };
        let value = rest.trim();
        if in_latency {
            let Ok(ms) = value.parse::<f64>() else { continue };
            match key {
                "avg" => m.push("latency_avg", "ns", Better::Lower, ms * 1e6),
                "95th percentile" => m.push("latency_p95", "ns", Better::Lower, ms * 1e6),
                "max" => m.push("latency_max", "ns", Better::Lower, ms * 1e6),
                "min" => m.push("latency_min", "ns", Better::Lower, ms * 1e6),
                _ => {}
            }
            continue;
        }
        match key {
            "transactions" => {
                if let Some((n, rate)) = counted(value) {
                    m.push("transactions_per_s", "tx/s", Better::Higher, rate);
                    m.count("transactions", n);
                }
            }
            "queries" => {
                if let Some((n, rate)) = counted(value) {
                    m.push("queries_per_s", "queries/s", Better::Higher, rate);
                    m.count("queries", n);
                }
            }
            "ignored errors" => {
                if let Some((n, _)) = counted(value) {
                    m.count("errors", n);
                }
            }
            "reconnects" => {
                if let Some((n, _)) = counted(value) {
                    m.count("reconnects", n);
                }
            }
            _ => {}
        }
    }
    m
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_defaults_agree() {
        fsarena_workload::options::check_table(OPTIONS, Clone::clone).unwrap();
    }

    #[test]
    fn sysbench_output_parses() {
        let out = "SQL statistics:\n    queries performed:\n        read:                            14000\n        write:                           4000\n        other:                           2000\n        total:                           20000\n    transactions:                        1000   (333.12 per sec.)\n    queries:                             20000  (6662.40 per sec.)\n    ignored errors:                      2      (0.67 per sec.)\n    reconnects:                          0      (0.00 per sec.)\n\nGeneral statistics:\n    total time:                          3.0012s\n    total number of events:              1000\n\nLatency (ms):\n         min:                                    1.52\n         avg:                                    3.00\n         max:                                   25.31\n         95th percentile:                        4.82\n         sum:                                 2998.15\n\nThreads fairness:\n    events (avg/stddev):           1000.0000/0.00\n";
        let m = figures(out);
        assert_eq!(m.metric("transactions_per_s").unwrap().value, 333.12);
        assert_eq!(m.metric("queries_per_s").unwrap().value, 6662.4);
        assert!((m.metric("latency_p95").unwrap().value - 4_820_000.0).abs() < 1.0);
        assert!((m.metric("latency_avg").unwrap().value - 3_000_000.0).abs() < 1.0);
        assert_eq!((m.counters["errors"], m.counters["reconnects"], m.counters["transactions"]), (2, 0, 1000));
        assert!(m.metric("latency_sum").is_none());
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        for (spec, want) in [
            ("sysbench:test=tpcc", "not a sysbench test: expected oltp_read_write"),
            ("sysbench:tables=0", "tables=0"),
            ("sysbench:innodb_flush_method=nosync", "not an innodb_flush_method"),
            ("sysbench:time=0", "at least 1"),
        ] {
            let e = SysbenchWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap_err().to_string();
            assert!(e.contains(want), "{spec}: {e}");
        }
        let o = {
            let mut o = SysbenchOptions::default();
            fsarena_workload::options::set("sysbench", OPTIONS, &mut o, "innodb_flush_method", "o_direct").unwrap();
            o
        };
        assert_eq!(o.innodb_flush_method, "O_DIRECT");
    }
}
