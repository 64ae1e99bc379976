//! The `pgbench` workload: Debian's PostgreSQL with its data directory in the target, driven
//! by PostgreSQL's own `pgbench` under pgbench's long option names.
//!
//! The server is the newest `/usr/lib/postgresql/*/bin/postgres`, run directly as `postgres`:
//! `initdb` into the target (trust authentication, local connections only), then `postgres -D
//! DATA -k RUNDIR -c listen_addresses=''` — a unix socket in the run's directory under
//! /run/fsarena, never the system's cluster, port or socket. `pgbench -i -s SCALE` loads it
//! once per combination of server keys (see [`super`]); each round starts the server, drops
//! the caches and runs `pgbench -c -j -T|-t -b|-f --log`. Figures: pgbench's own tps
//! (excluding connection time) and latency average; stddev and percentiles from its
//! per-transaction log.
//!
//! The server runs in an IPC namespace of its own with System V dynamic shared memory, so a
//! PostgreSQL killed mid-run (by its own account, say) leaves no segment behind: none in
//! /dev/shm, and those of its namespace go with its last process. A script given by `file=`
//! is read once when the run is planned (a regular file of at most [`SCRIPT_CAP`]), run from a
//! copy in fsarena's own directory, and never shown: neither by fsarena nor by relaying what
//! pgbench or the server say about it.

use super::process::ServerStart;
use super::{Account, Initialise, Measured, Round, Running, Server};
use fsarena_core::option::DefaultValue::{Derived, Is, Unset};
use fsarena_core::option::ValueKind::{Bool, Choice, Count, Size, Text, Time};
use fsarena_core::units::parse_time;
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_stats::LatencyHistogram;
use fsarena_target::beneath::read_input_text;
use fsarena_workload::options::{boolean, opt, positive, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// pgbench's built-in scripts.
pub const BUILTINS: &[&str] = &["tpcb-like", "simple-update", "select-only"];
/// PostgreSQL's `synchronous_commit` values (those that mean something without replicas too).
pub const SYNCHRONOUS_COMMIT: &[&str] = &["on", "off", "local", "remote_write", "remote_apply"];
/// PostgreSQL's `wal_sync_method` values on Linux.
pub const WAL_SYNC_METHODS: &[&str] = &["fdatasync", "fsync", "open_sync", "open_datasync"];
/// Most bytes of a script file (`file=`) accepted.
pub const SCRIPT_CAP: u64 = 1 << 20;
/// The copy of the script file in fsarena's own directory of the round.
const SCRIPT: &str = "script.sql";
/// Processes of a PostgreSQL server besides one per connection (checkpointer, WAL writer,
/// autovacuum, ...), with room to spare.
const SERVER_PROCESSES: u64 = 10;
/// What a connection costs in its server process beyond shared_buffers (work_mem's default
/// of 4 MB is for a sort; a pgbench transaction's backend stays near 2 MiB).
const BYTES_PER_CONNECTION: u64 = 2 << 20;

/// The options of one `pgbench` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgbenchOptions {
    /// `-s`: the scale factor of the loaded tables (100,000 accounts per unit).
    pub scale: u32,
    /// `-c`: concurrent clients.
    pub client: u32,
    /// `-j`: pgbench threads.
    pub jobs: u32,
    /// `-T` in seconds; none when `transactions` bounds the run.
    pub time: Option<u64>,
    /// `-t`: transactions per client.
    pub transactions: Option<u64>,
    /// `-b`: the built-in script.
    pub builtin: &'static str,
    /// `-f`: a script file instead.
    pub file: Option<PathBuf>,
    /// Server: `synchronous_commit`.
    pub synchronous_commit: &'static str,
    /// Server: `fsync`.
    pub fsync: bool,
    /// Server: `wal_sync_method`.
    pub wal_sync_method: &'static str,
    /// Server: `shared_buffers` in bytes.
    pub shared_buffers: u64,
    /// How long the server may take to accept connections, seconds.
    pub start_timeout: u64,
}

impl Default for PgbenchOptions {
    fn default() -> Self {
        Self {
            scale: 1,
            client: 1,
            jobs: 1,
            time: None,
            transactions: None,
            builtin: "tpcb-like",
            file: None,
            synchronous_commit: "on",
            fsync: true,
            wal_sync_method: "fdatasync",
            shared_buffers: 128 << 20,
            start_timeout: 60,
        }
    }
}

impl PgbenchOptions {
    /// pgbench's `-T`: `time`, else 10 s unless `transactions` is given.
    fn seconds(&self) -> Option<u64> {
        match (self.time, self.transactions) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) => Some(10),
        }
    }
}

/// The one `choices` word equal to `v`.
pub(crate) fn choice(v: &str, choices: &[&'static str], what: &str) -> Result<&'static str, String> {
    let v = v.trim().to_ascii_lowercase();
    choices
        .iter()
        .find(|c| **c == v)
        .copied()
        .ok_or_else(|| format!("'{v}' is not a {what}: expected {}", choices.join(", ")))
}

/// Whole seconds, at least 1 (what pgbench's and sysbench's `--time` take).
pub(crate) fn whole_seconds(v: &str) -> Result<u64, String> {
    let ns = parse_time(v, 1_000_000_000).map_err(|e| e.message)?.0;
    if ns < 1_000_000_000 || ns % 1_000_000_000 != 0 {
        return Err(format!("'{v}' is not a whole number of seconds of at least 1"));
    }
    Ok(ns / 1_000_000_000)
}

/// A row of the pgbench table.
macro_rules! pg {
    ($($rest:tt)*) => { opt!(PgbenchOptions, $($rest)*) };
}

/// Every option of the `pgbench` workload.
pub static OPTIONS: &[OptionDef<PgbenchOptions>] = &[
    pg!(
        "scale",
        Count,
        Is("1"),
        "pgbench -s: scale factor of the loaded tables (100,000 accounts each); a server key",
        |o, v| o.scale = positive(v)?
    ),
    pg!("client", Count, Is("1"), "pgbench -c: concurrent database clients", |o, v| o.client = positive(v)?),
    pg!("jobs", Count, Is("1"), "pgbench -j: pgbench threads", |o, v| o.jobs = positive(v)?),
    pg!(
        "time",
        Time,
        Derived("10s unless transactions= is given"),
        "pgbench -T: how long a round runs, whole seconds",
        |o, v| o.time = Some(whole_seconds(v)?)
    ),
    pg!("transactions", Count, Unset, "pgbench -t: transactions each client runs", |o, v| o.transactions =
        Some(u64::from(positive(v)?))),
    pg!("builtin", Choice(BUILTINS), Is("tpcb-like"), "pgbench -b: the built-in script", |o, v| o.builtin =
        choice(v, BUILTINS, "pgbench built-in script")?),
    pg!(
        "file",
        Text,
        Unset,
        "pgbench -f: a script file to run instead of the built-in one (a regular file of at most 1 MiB, read when the run is planned; never shown)",
        |o, v| o.file = Some(PathBuf::from(v))
    ),
    pg!(
        "synchronous_commit",
        Choice(SYNCHRONOUS_COMMIT),
        Is("on"),
        "the server's synchronous_commit; a server key",
        |o, v| o.synchronous_commit = choice(v, SYNCHRONOUS_COMMIT, "synchronous_commit value")?
    ),
    pg!("fsync", Bool, Is("1"), "the server's fsync; a server key", |o, v| o.fsync = boolean(v)?),
    pg!(
        "wal_sync_method",
        Choice(WAL_SYNC_METHODS),
        Is("fdatasync"),
        "the server's wal_sync_method; a server key",
        |o, v| o.wal_sync_method = choice(v, WAL_SYNC_METHODS, "wal_sync_method")?
    ),
    pg!("shared_buffers", Size, Is("128m"), "the server's shared_buffers; a server key", |o, v| o.shared_buffers =
        shared_buffers(v)?),
    pg!("start_timeout", Time, Is("60s"), "how long the server may take to start before the run fails", |o, v| o
        .start_timeout =
        whole_seconds(v)?),
];

/// At least 128 kB (PostgreSQL's minimum: 16 buffers of 8 kB).
fn shared_buffers(v: &str) -> Result<u64, String> {
    match fsarena_workload::options::size(v)? {
        n if n < 128 << 10 => Err(format!("'{v}' is below PostgreSQL's minimum of 128k")),
        n => Ok(n),
    }
}

/// The `pgbench` workload.
#[derive(Debug, Clone)]
pub struct PgbenchWorkload {
    options: PgbenchOptions,
    bin: PathBuf,
    account: Account,
    /// The script file's text (`file=`), read when the run is planned.
    script: Option<String>,
    given: Vec<(String, String)>,
}

/// The newest `/usr/lib/postgresql/VERSION/bin` that has `postgres`, `initdb` and `pgbench`.
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| ["postgres", "initdb", "pgbench", "pg_isready"].iter().all(|p| bin.join(p).is_file()))
        .collect();
    versions.sort();
    versions.pop().map(|v| v.1)
}

impl PgbenchWorkload {
    /// From `--workload pgbench:scale=10,client=8,time=30s`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = PgbenchOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("pgbench", OPTIONS, &mut o, k, v)?;
        }
        let given = |key: &str| spec.params.iter().any(|(k, _)| k == key);
        if given("builtin") && o.file.is_some() {
            return Err(InputError::new("pgbench: give builtin= or file=, not both"));
        }
        if given("time") && o.transactions.is_some() {
            return Err(InputError::new("pgbench: give time= or transactions=, not both"));
        }
        if o.jobs > o.client {
            return Err(InputError::new(format!(
                "pgbench: jobs={} is more than client={}: pgbench needs at least one client per thread",
                o.jobs, o.client
            )));
        }
        // Read now, once: a FIFO, a device or a huge file is refused before anything is
        // created, and what pgbench runs is what was checked.
        let script = match &o.file {
            Some(f) => Some(
                read_input_text(f, "pgbench: the script file", SCRIPT_CAP)
                    .map_err(|e| InputError::new(e.to_string()))?,
            ),
            None => None,
        };
        let bin = postgres_bin().ok_or_else(|| {
            InputError::new(
                "pgbench: no /usr/lib/postgresql/*/bin with postgres, initdb, pgbench and pg_isready: install Debian's postgresql package (apt-get install postgresql)",
            )
        })?;
        let account = Account::lookup("pgbench", "postgres", "postgresql")?;
        Ok(Self { options: o, bin, account, script, given: spec.params.clone() })
    }

    /// `postgres -D data -k rundir ...`.
    fn server_command(&self, data: &Path, run: &Path) -> Command {
        let o = &self.options;
        let mut c = Command::new(self.bin.join("postgres"));
        c.arg("-D").arg(data).arg("-k").arg(run).current_dir("/");
        let settings = [
            "listen_addresses=".to_string(),
            format!("external_pid_file={}", run.join("postgres.pid").display()),
            format!("shared_buffers={}kB", o.shared_buffers / 1024),
            format!("fsync={}", if o.fsync { "on" } else { "off" }),
            format!("synchronous_commit={}", o.synchronous_commit),
            format!("wal_sync_method={}", o.wal_sync_method),
            format!("max_connections={}", (o.client + 10).max(100)),
            "logging_collector=off".to_string(),
            // Not POSIX segments in /dev/shm, which outlive a killed server: System V ones,
            // which go with its IPC namespace.
            "dynamic_shared_memory_type=sysv".to_string(),
        ];
        for s in settings {
            c.arg("-c").arg(s);
        }
        if self.script.is_some() {
            // A failing statement of the script would be quoted in the server's log, which
            // fsarena shows and keeps: only FATAL and worse, and no statement, are logged.
            c.args(["-c", "log_min_messages=fatal", "-c", "log_min_error_statement=panic"]);
        }
        c
    }

    /// A pgbench command against the server in `run`.
    fn pgbench(&self, run: &Path) -> Command {
        let mut c = Command::new(self.bin.join("pgbench"));
        c.arg(format!("--host={}", run.display())).arg("--username=postgres").current_dir("/");
        c
    }
}

impl Workload for PgbenchWorkload {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let clients = u64::from(o.client);
        // pgbench_accounts holds 100,000 rows of about 120 bytes per scale unit, with its
        // index; plus the WAL (1 GB at most by default) and the catalog (~40 MB).
        let data = (u64::from(o.scale) * 16) << 20;
        Footprint {
            source: format!("pgbench workload (scale={}, client={}, jobs={})", o.scale, o.client, o.jobs),
            // pgbench's threads, a server process per client, and the server's own.
            threads: u64::from(o.jobs) + clients + SERVER_PROCESSES,
            buffer_bytes: o.shared_buffers + clients * BYTES_PER_CONNECTION,
            bytes_on_target: data + (256 << 20),
            files: 2000,
            // pgbench holds a connection per client, under the limit it inherits from fsarena.
            open_files: clients + 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        let script = match &o.file {
            Some(f) => format!("--file={}", f.display()),
            None => format!("--builtin={}", o.builtin),
        };
        let bound = match (o.seconds(), o.transactions) {
            (Some(t), _) => format!("--time={t}"),
            (None, Some(n)) => format!("--transactions={n}"),
            (None, None) => String::new(),
        };
        vec![
            format!(
                "pgbench: initdb and pgbench --initialize --scale={} in the target, once per server keys, untimed; PostgreSQL from {}, as postgres, unix socket only",
                o.scale,
                self.bin.display()
            ),
            format!("pgbench: each round: start the server, drop caches, pgbench --client={} --jobs={} {bound} {script} --log", o.client, o.jobs),
        ]
    }

    fn estimate(&self) -> Option<Duration> {
        self.options.seconds().map(Duration::from_secs)
    }

    fn hosts_server(&self) -> bool {
        true
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        super::round::run(self, env)
    }
}

impl Server for PgbenchWorkload {
    const KIND: &'static str = "pgbench";
    const ACCOUNT: &'static str = "postgres";
    const SOCKET: Option<&'static str> = Some(".s.PGSQL.5432.lock");
    const LOG: &'static str = "postgres.log";
    const FIGURE: &'static str = "tps";
    type Address = ();

    /// In an IPC namespace of its own; SIGINT is its fast shutdown.
    fn server_start(&self) -> ServerStart {
        ServerStart { name: "PostgreSQL", account: self.account, stop_signal: libc::SIGINT, own_ipc: true }
    }

    fn start_timeout(&self) -> Duration {
        Duration::from_secs(self.options.start_timeout)
    }

    fn server_keys(&self) -> Vec<(&'static str, String)> {
        let o = &self.options;
        vec![
            ("scale", o.scale.to_string()),
            ("shared_buffers", o.shared_buffers.to_string()),
            ("fsync", o.fsync.to_string()),
            ("synchronous_commit", o.synchronous_commit.into()),
            ("wal_sync_method", o.wal_sync_method.into()),
        ]
    }

    fn loading(&self) -> String {
        format!("initdb and loading scale {} (untimed)", self.options.scale)
    }

    fn initialise(&self, round: &Round<'_>) -> Option<Initialise> {
        let mut command = Command::new(self.bin.join("initdb"));
        command
            .arg("-D")
            .arg(round.data)
            .args(["--auth=trust", "--username=postgres", "--encoding=UTF8", "--locale=C", "--no-instructions"])
            .current_dir("/");
        Some(Initialise { name: "initdb", command, log: None })
    }

    fn populate(&self, round: &Round<'_>, _: &()) -> Result<(), String> {
        let mut init = self.pgbench(round.run_dir());
        init.arg("--initialize").arg("--quiet").arg(format!("--scale={}", self.options.scale)).arg("postgres");
        let out = super::run_client(round.host, init, round.env.stop)?;
        match out.success {
            true => Ok(()),
            false => Err(format!("pgbench --initialize failed; its stderr ends: {}", out.stderr_tail)),
        }
    }

    fn command(&self, round: &Round<'_>) -> Result<(Command, ()), String> {
        Ok((self.server_command(round.data, round.run_dir()), ()))
    }

    fn ready(&self, round: &Round<'_>, _: &()) -> bool {
        Command::new(self.bin.join("pg_isready"))
            .arg("-q")
            .arg(format!("--host={}", round.run_dir().display()))
            .arg("--username=postgres")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn measure<'m>(&'m self, round: &'m Round<'_>, server: &'m Running<'_>, _: &()) -> Result<Measured<'m>, String> {
        let (o, dirs) = (&self.options, round.dirs);
        (round.env.progress)(&format!("pgbench: --client={} --jobs={}", o.client, o.jobs));
        let mut cmd = self.pgbench(round.run_dir());
        cmd.arg(format!("--client={}", o.client)).arg(format!("--jobs={}", o.jobs));
        match (o.seconds(), o.transactions) {
            (Some(t), _) => cmd.arg(format!("--time={t}")),
            (None, Some(n)) => cmd.arg(format!("--transactions={n}")),
            (None, None) => &mut cmd,
        };
        match &self.script {
            Some(text) => {
                let copy = Path::new(SCRIPT);
                dirs.own
                    .held
                    .write_new(copy, text.as_bytes(), 0o600)
                    .map_err(|e| format!("cannot copy the script: {e}"))?;
                cmd.arg(format!("--file={}", dirs.own.path().join(copy).display()))
            }
            None => cmd.arg(format!("--builtin={}", o.builtin)),
        };
        let prefix = dirs.own.path().join("pgbench_log");
        cmd.arg("--log").arg(format!("--log-prefix={}", prefix.display())).arg("postgres");
        let out = super::run_client(round.host, cmd, round.env.stop)?;
        let mut figures = figures(&out.stdout);
        let hist = transaction_log(dirs.own.path(), "pgbench_log");
        latency_figures(&mut figures, &hist);
        let (success, stopped) = (out.success, out.stopped);
        let why = move |failed: bool| match (&o.file, failed) {
            // pgbench quotes the line of the script it rejects, the server the statement
            // that failed: neither is shown.
            (Some(f), _) => format!(
                "pgbench {} with the script file={} ({}); its output is not shown, since it may quote the file",
                if failed { "failed" } else { "printed no tps" },
                f.display(),
                out.status
            ),
            (None, true) => {
                format!(
                    "pgbench failed; its stderr ends: {}; the server's log ends: {}",
                    out.stderr_tail,
                    server.tail()
                )
            }
            (None, false) => format!("pgbench printed no tps; its output ends: {}", out.stdout_tail()),
        };
        Ok(Measured { figures, success, stopped, why: Box::new(why) })
    }
}

/// pgbench's summary as it prints it: `tps = N (without initial connection time)`,
/// `latency average = X ms`, `latency stddev = X ms` (when printed), the transactions
/// processed and failed.
pub fn figures(stdout: &str) -> Measurement {
    let mut m = Measurement::default();
    let number = |line: &str, key: &str| -> Option<f64> {
        line.strip_prefix(key)?.trim_start().strip_prefix('=')?.split_whitespace().next()?.parse().ok()
    };
    for line in stdout.lines() {
        let line = line.trim();
        if line.contains("without initial connection time") {
            if let Some(v) = number(line, "tps") {
                m.push("tps", "tx/s", Better::Higher, v);
            }
        } else if let Some(v) = number(line, "latency average") {
            m.push("latency_avg", "ns", Better::Lower, v * 1e6);
        } else if let Some(v) = number(line, "latency stddev") {
            m.push("latency_stddev", "ns", Better::Lower, v * 1e6);
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.split('/').next()?.parse().ok()) {
                m.count("transactions", n);
            }
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                m.count("failed_transactions", n);
            }
        }
    }
    m
}

/// Every transaction's latency from pgbench's `--log` files (`PREFIX.PID` and
/// `PREFIX.PID.THREAD` in `dir`): `client_id transaction_no time_us script_no epoch us`.
/// `dir` is fsarena's own directory of the round, where only root writes.
pub fn transaction_log(dir: &Path, prefix: &str) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return h };
    for e in entries.flatten() {
        if !e.file_name().to_str().is_some_and(|n| n.starts_with(&format!("{prefix}."))) {
            continue;
        }
        // One line per transaction: read as a stream, however long the run was.
        let Ok(file) = std::fs::File::open(e.path()) else { continue };
        for line in std::io::BufRead::lines(std::io::BufReader::new(file)).map_while(Result::ok) {
            // The third field is the latency in µs, or "skipped"/"failed" for transactions
            // that did not complete.
            if let Some(us) = line.split_whitespace().nth(2).and_then(|f| f.parse::<u64>().ok()) {
                h.record(us * 1000);
            }
        }
    }
    h
}

/// Stddev and p99 from the per-transaction log, and the histogram for the report; pgbench's
/// own stddev is kept when it printed one.
fn latency_figures(m: &mut Measurement, h: &LatencyHistogram) {
    if h.is_empty() {
        return;
    }
    if m.metric("latency_stddev").is_none() {
        m.push("latency_stddev", "ns", Better::Lower, h.stddev());
    }
    m.push("latency_p99", "ns", Better::Lower, h.percentile(99.0) as f64);
    m.add_latency("transaction", h);
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
    fn pgbench_output_parses() {
        let out = "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nquery mode: simple\nnumber of clients: 8\nnumber of threads: 1\nmaximum number of tries: 1\nduration: 3 s\nnumber of transactions actually processed: 4321\nnumber of failed transactions: 0 (0.000%)\nlatency average = 5.551 ms\ninitial connection time = 12.010 ms\ntps = 1441.172540 (without initial connection time)\n";
        let m = figures(out);
        assert_eq!(m.metric("tps").unwrap().value, 1441.17254);
        assert!((m.metric("latency_avg").unwrap().value - 5_551_000.0).abs() < 1.0);
        assert_eq!(m.counters["transactions"], 4321);
        assert_eq!(m.counters["failed_transactions"], 0);
    }

    #[test]
    fn the_transaction_log_gives_percentiles() {
        let dir = std::env::temp_dir().join(format!("fsarena-servers-pglog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines: String = (1..=100).map(|i| format!("0 {i} {} 0 1700000000 {i}\n", i * 100)).collect();
        std::fs::write(dir.join("pgbench_log.123"), lines).unwrap();
        std::fs::write(dir.join("pgbench_log.123.1"), "1 1 skipped 0 1700000000 5\n").unwrap();
        std::fs::write(dir.join("other.1"), "0 1 999999 0 1 1\n").unwrap();
        let h = transaction_log(&dir, "pgbench_log");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(h.len(), 100);
        let p99 = h.percentile(99.0) as f64;
        assert!((p99 - 9_900_000.0).abs() / 9_900_000.0 < 0.02, "{p99}");
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        for (spec, want) in [
            ("pgbench:builtin=tpcc", "not a pgbench built-in script: expected tpcb-like, simple-update, select-only"),
            ("pgbench:scale=0", "scale=0"),
            ("pgbench:time=1.5s", "whole number of seconds"),
            ("pgbench:client=1,jobs=2", "jobs=2 is more than client=1"),
            ("pgbench:file=/nonexistent.sql", "cannot read pgbench: the script file /nonexistent.sql"),
            ("pgbench:file=/dev/zero", "is a character device: expected a regular file of at most 1 MiB"),
            ("pgbench:builtin=select-only,file=/etc/hostname", "not both"),
        ] {
            let e = PgbenchWorkload::from_spec(&Spec::parse(spec).unwrap()).unwrap_err().to_string();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
