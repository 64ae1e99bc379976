//! The `http` workload: a static file served from the target by Debian's nginx on 127.0.0.1
//! and a free port, loaded by `ab` from apache2-utils as the Phoronix round-up did.
//!
//! nginx runs as `www-data` (master and worker: no root, a port above 1024, `-e` and a
//! configuration of fsarena's own, never /etc/nginx's), with its document root and its access
//! and error logs in the target (`http-<hash>/site`, `http-<hash>/logs`) and its PID file and
//! temporary directories in the run's directory under /run/fsarena. Everything in the target
//! is root's but the log directory, so that the pages served are the ones fsarena wrote;
//! nginx's configuration and ab's tables are in fsarena's own directory of the round. Each round starts it,
//! drops the caches and runs `ab -n REQUESTS -c CONCURRENCY [-k] -e CSV`. Traffic stays on
//! loopback. Figures: ab's requests/s, transfer rate (bytes/s), mean time per request and the
//! 99th percentile from its `-e` table.
//!
//! `files=N` serves N files and spreads the load over them: ab fetches one URL per process, so
//! N ab processes run at once, each on its own file with requests/N and concurrency/N. The
//! figures are the aggregate: every completed request and byte over the longest ab's time, the
//! mean time per request weighted by requests, and the percentiles of the merged distribution
//! of their `-e` tables (with one ab, exactly its own table's rows).

use super::pgbench::whole_seconds;
use super::process::ServerStart;
use super::{Account, DataDir, Measured, Round, RoundDirs, Running, Server, ServerLog};
use fsarena_core::option::DefaultValue::Is;
use fsarena_core::option::ValueKind::{Bool, Count, Size, Time};
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_target::beneath::{HeldDir, OpenHow};
use fsarena_workload::options::{boolean, nonzero_size, opt, positive, OptionDef};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The options of one `http` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// Files served (one ab each).
    pub files: u32,
    /// Bytes of the served file.
    pub file_size: u64,
    /// ab -c.
    pub concurrency: u32,
    /// ab -n.
    pub requests: u32,
    /// ab -k.
    pub keepalive: bool,
    /// How long nginx may take to accept connections, seconds.
    pub start_timeout: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self { files: 1, file_size: 4096, concurrency: 1, requests: 100_000, keepalive: false, start_timeout: 60 }
    }
}

/// A row of the http table.
macro_rules! ht {
    ($($rest:tt)*) => { opt!(HttpOptions, $($rest)*) };
}

/// Every option of the `http` workload.
pub static OPTIONS: &[OptionDef<HttpOptions>] = &[
    ht!("files", Count, Is("1"), "files served, each loaded by its own ab with requests/files and concurrency/files (ab fetches one URL); a server key", |o, v| o.files = positive(v)?),
    ht!("file_size", Size, Is("4k"), "bytes of the static file served from the target; a server key", |o, v| o
        .file_size =
        nonzero_size(v)?),
    ht!("concurrency", Count, Is("1"), "ab -c: requests in flight at once", |o, v| o.concurrency = positive(v)?),
    ht!("requests", Count, Is("100000"), "ab -n: requests in a round", |o, v| o.requests = positive(v)?),
    ht!("keepalive", Bool, Is("0"), "ab -k: keep connections open between requests", |o, v| o.keepalive = boolean(v)?),
    ht!("start_timeout", Time, Is("60s"), "how long nginx may take to start before the run fails", |o, v| o
        .start_timeout =
        whole_seconds(v)?),
];

/// The `http` workload.
#[derive(Debug, Clone)]
pub struct HttpWorkload {
    options: HttpOptions,
    nginx: PathBuf,
    ab: PathBuf,
    account: Account,
    given: Vec<(String, String)>,
}

/// The file ab requests (with `files=1`).
const FILE: &str = "index.html";

/// File `i` of `n`: `index.html` alone, else `page-I.html`.
fn file_name(i: u32, n: u32) -> String {
    if n == 1 {
        FILE.to_string()
    } else {
        format!("page-{i}.html")
    }
}

impl HttpWorkload {
    /// From `--workload http:concurrency=32`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = HttpOptions::default();
        for (k, v) in &spec.params {
            fsarena_workload::options::set("http", OPTIONS, &mut o, k, v)?;
        }
        if o.concurrency > o.requests {
            return Err(InputError::new(format!(
                "http: concurrency={} is more than requests={}: ab needs at least one request per connection",
                o.concurrency, o.requests
            )));
        }
        if o.files > 1 {
            for (key, value) in [("concurrency", o.concurrency), ("requests", o.requests)] {
                if value % o.files != 0 {
                    return Err(InputError::new(format!(
                        "http: {key}={value} is not a multiple of files={}: each file gets its own ab with {key}/files (ab fetches one URL)",
                        o.files
                    )));
                }
            }
        }
        // ab's -c limit (MAX_CONCURRENCY).
        if o.concurrency > 20_000 {
            return Err(InputError::new(format!("http: concurrency={}: ab accepts at most 20000", o.concurrency)));
        }
        let nginx = super::find_binary("http", "nginx", "nginx")?;
        let ab = super::find_binary("http", "ab", "apache2-utils")?;
        let account = Account::lookup("http", "www-data", "base-passwd")?;
        Ok(Self { options: o, nginx, ab, account, given: spec.params.clone() })
    }

    /// nginx's configuration: everything under fsarena's directories.
    fn config(&self, data: &Path, run: &Path, port: u16) -> String {
        let o = &self.options;
        let temp: String = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
            .iter()
            .map(|t| format!("    {t}_temp_path {};\n", run.join(format!("{t}_temp")).display()))
            .collect();
        format!(
            "# fsarena's http workload: nothing of /etc/nginx is used.\n\
             daemon off;\n\
             worker_processes auto;\n\
             pid {pid};\n\
             error_log {logs}/error.log;\n\
             events {{ worker_connections {conns}; }}\n\
             http {{\n\
             {temp}\
             \x20   access_log {logs}/access.log;\n\
             \x20   sendfile on;\n\
             \x20   keepalive_requests {requests};\n\
             \x20   default_type text/html;\n\
             \x20   server {{\n\
             \x20       listen 127.0.0.1:{port};\n\
             \x20       root {site};\n\
             \x20   }}\n\
             }}\n",
            pid = run.join("nginx.pid").display(),
            logs = data.join("logs").display(),
            conns = (o.concurrency * 2).max(1024),
            requests = o.requests,
            site = data.join("site").display(),
        )
    }
}

impl Workload for HttpWorkload {
    fn kind(&self) -> &'static str {
        Self::KIND
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        Footprint {
            source: format!("http workload (files={}, concurrency={})", o.files, o.concurrency),
            // An ab per file, and nginx's master and workers (worker_processes auto).
            threads: u64::from(o.files) + workers + 1,
            // ab's buffers, a few KiB per connection.
            buffer_bytes: (1 << 20) + u64::from(o.concurrency) * (16 << 10),
            // The files, and the access log: about 100 bytes per request.
            bytes_on_target: o.file_size * u64::from(o.files) + u64::from(o.requests) * 100 * 2,
            files: 8 + u64::from(o.files),
            // ab holds a connection per concurrent request, under the limit it inherits.
            open_files: u64::from(o.concurrency) + 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        vec![
            format!(
                "http: write {} file(s) of {} bytes in the target, untimed; nginx as www-data on 127.0.0.1, files and logs in the target",
                o.files, o.file_size
            ),
            format!(
                "http: each round: start nginx, drop caches, {}ab -n {} -c {}{}",
                if o.files > 1 { format!("{} at once, one per file: ", o.files) } else { String::new() },
                o.requests / o.files,
                o.concurrency / o.files,
                if o.keepalive { " -k" } else { "" }
            ),
        ]
    }

    fn hosts_server(&self) -> bool {
        true
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        super::round::run(self, env)
    }
}

/// Writes `size` bytes of printable text (`abc...z` over and over: what a web server serves)
/// to the new file `name` beneath `dir`, a MiB at a time.
fn write_page(dir: &HeldDir, name: &str, size: u64) -> Result<(), String> {
    use std::io::Write;
    let cannot = |e: std::io::Error| format!("cannot write {e}");
    let mut file = dir.open_file(Path::new(name), OpenHow::NEW.with_mode(0o644)).map_err(cannot)?;
    // A whole number of alphabets, so that each chunk goes on where the last one ended.
    let chunk: Vec<u8> = (0..26 * 40_000).map(|i| b'a' + (i % 26) as u8).collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n])
            .map_err(|e| cannot(std::io::Error::new(e.kind(), format!("{}/{name}: {e}", dir.path().display()))))?;
        left -= n as u64;
    }
    Ok(())
}

impl Server for HttpWorkload {
    const KIND: &'static str = "http";
    const ACCOUNT: &'static str = "www-data";
    /// nginx's error log, in the target ([`Server::log`]).
    const LOG: &'static str = "nginx-error.log";
    const FIGURE: &'static str = "requests_per_s";
    /// nginx logs to its error log (`-e`): what it prints goes to a file of its own.
    const OUTPUT: Option<&'static str> = Some("nginx.out");
    /// The port nginx listens on, on 127.0.0.1.
    type Address = u16;

    fn server_start(&self) -> ServerStart {
        ServerStart { name: "nginx", account: self.account, stop_signal: libc::SIGTERM, own_ipc: true }
    }

    fn start_timeout(&self) -> Duration {
        Duration::from_secs(self.options.start_timeout)
    }

    fn server_keys(&self) -> Vec<(&'static str, String)> {
        let mut keys = vec![("file_size", self.options.file_size.to_string())];
        if self.options.files > 1 {
            keys.push(("files", self.options.files.to_string()));
        }
        keys
    }

    /// Root's, as the site and its pages: www-data reads them and writes its logs only.
    fn data_dir_mode(&self) -> (u32, Option<Account>) {
        (0o711, None)
    }

    /// The site and its pages, and the account's log directory: all of the load.
    fn fill(&self, data: &DataDir) -> Result<bool, String> {
        let o = &self.options;
        let site = data.made.held.create_dir("site", 0o755, None).map_err(|e| format!("cannot create {e}"))?;
        for i in 0..o.files {
            write_page(&site, &file_name(i, o.files), o.file_size)?;
        }
        let owner = Some((self.account.uid, self.account.gid));
        data.made.held.create_dir("logs", 0o700, owner).map_err(|e| format!("cannot create {e}"))?;
        Ok(true)
    }

    /// nginx's error log in the site's data directory.
    fn log(&self, _: &RoundDirs, data: &DataDir) -> Result<ServerLog, String> {
        let logs = data.made.held.dir(Path::new("logs")).map_err(|e| format!("cannot open {e}"))?;
        ServerLog::new(&logs, "error.log", self.account)
    }

    fn command(&self, round: &Round<'_>) -> Result<(Command, u16), String> {
        let (dirs, run) = (round.dirs, round.run_dir());
        // A free port on loopback: the kernel picks one, nginx takes it over.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?
            .port();
        let conf = Path::new("nginx.conf");
        let text = self.config(round.data, run, port);
        dirs.own.held.write_new(conf, text.as_bytes(), 0o644).map_err(|e| format!("cannot write {e}"))?;
        let mut cmd = Command::new(&self.nginx);
        cmd.arg("-c").arg(dirs.own.path().join(conf)).arg("-p").arg(run).arg("-e").arg(round.log.path());
        cmd.current_dir("/");
        Ok((cmd, port))
    }

    fn ready(&self, round: &Round<'_>, port: &u16) -> bool {
        round.dirs.server.held.exists(Path::new("nginx.pid"))
            && std::net::TcpStream::connect(("127.0.0.1", *port)).is_ok()
    }

    fn measure<'m>(
        &'m self,
        round: &'m Round<'_>,
        server: &'m Running<'_>,
        port: &u16,
    ) -> Result<Measured<'m>, String> {
        let (o, env, host, dirs) = (&self.options, round.env, round.host, round.dirs);
        let names: Vec<String> = (0..o.files).map(|i| file_name(i, o.files)).collect();
        let (n, c) = (o.requests / o.files, o.concurrency / o.files);
        (env.progress)(&format!(
            "http: {}ab -n {n} -c {c}",
            if o.files > 1 { format!("{} × ", o.files) } else { String::new() }
        ));
        // One ab per file, all at once; its table in fsarena's own directory.
        let outs: Vec<Result<(super::ClientOutput, String), String>> = std::thread::scope(|s| {
            let runs: Vec<_> = names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let csv = format!("ab-percentiles-{i}.csv");
                    let mut ab = Command::new(&self.ab);
                    ab.arg("-q").arg("-n").arg(n.to_string()).arg("-c").arg(c.to_string());
                    if o.keepalive {
                        ab.arg("-k");
                    }
                    ab.arg("-e").arg(dirs.own.path().join(&csv)).arg(format!("http://127.0.0.1:{port}/{name}"));
                    s.spawn(move || {
                        let out = super::run_client(host, ab, env.stop)?;
                        let table = dirs.own.held.read_tail(Path::new(&csv), Some(0), 1 << 20).unwrap_or_default();
                        Ok((out, String::from_utf8_lossy(&table).into_owned()))
                    })
                })
                .collect();
            runs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("ab's thread panicked".into()))).collect()
        });
        let outs: Vec<(super::ClientOutput, String)> = outs.into_iter().collect::<Result<_, _>>()?;
        let figures = aggregate(&outs.iter().map(|(o, csv)| (o.stdout.as_str(), csv.as_str())).collect::<Vec<_>>());
        let stopped = outs.iter().any(|(o, _)| o.stopped);
        let failed = outs.into_iter().find(|(o, _)| !o.success);
        let success = failed.is_none();
        let why = move |_| {
            let tail = failed.map(|(o, _)| o.stderr_tail).unwrap_or_default();
            format!("ab failed: {tail}; nginx's error log ends: {}", server.tail())
        };
        Ok(Measured { figures, success, stopped, why: Box::new(why) })
    }
}

/// ab's report: `Requests per second: R [#/sec] (mean)`, `Transfer rate: K [Kbytes/sec]
/// received`, `Time per request: T [ms] (mean)`, `Failed requests: N`, `Non-2xx responses:`.
pub fn figures(stdout: &str) -> Measurement {
    let mut m = Measurement::default();
    let first = |rest: &str| rest.split_whitespace().next().and_then(|v| v.parse::<f64>().ok());
    for line in stdout.lines() {
        let Some((key, rest)) = line.split_once(':') else { continue };
        match key.trim() {
            "Requests per second" => {
                if let Some(v) = first(rest) {
                    m.push("requests_per_s", "requests/s", Better::Higher, v);
                }
            }
            "Transfer rate" => {
                if let Some(v) = first(rest) {
                    m.push("transfer_bw", "bytes/s", Better::Higher, v * 1024.0);
                }
            }
            // The first "Time per request" is the mean per request as one client sees it.
            "Time per request" if rest.contains("(mean)") => {
                if let Some(v) = first(rest) {
                    m.push("latency_avg", "ns", Better::Lower, v * 1e6);
                }
            }
            "Failed requests" => {
                if let Some(v) = first(rest) {
                    m.count("failed_requests", v as u64);
                }
            }
            "Non-2xx responses" => {
                if let Some(v) = first(rest) {
                    m.count("non_2xx_responses", v as u64);
                }
            }
            "Complete requests" => {
                if let Some(v) = first(rest) {
                    m.count("requests", v as u64);
                }
            }
            _ => {}
        }
    }
    m
}

/// The figures of several ab runs at once (stdout and `-e` table each): requests and bytes
/// over the longest run's time, the mean time per request weighted by requests, the
/// percentiles of the merged distribution. With one run, exactly that run's figures.
pub fn aggregate(runs: &[(&str, &str)]) -> Measurement {
    if let [(stdout, csv)] = runs {
        let mut m = figures(stdout);
        percentiles(&mut m, csv);
        return m;
    }
    let field = |stdout: &str, key: &str| -> Option<f64> {
        stdout.lines().find_map(|l| {
            let (k, rest) = l.split_once(':')?;
            (k.trim() == key).then(|| rest.split_whitespace().next()?.parse().ok()).flatten()
        })
    };
    let each: Vec<Measurement> = runs.iter().map(|(out, _)| figures(out)).collect();
    let mut m = Measurement::default();
    let requests: u64 = each.iter().map(|e| e.counters.get("requests").copied().unwrap_or(0)).sum();
    let secs = runs.iter().filter_map(|(out, _)| field(out, "Time taken for tests")).fold(0.0, f64::max);
    let bytes: f64 = runs.iter().filter_map(|(out, _)| field(out, "Total transferred")).sum();
    if secs > 0.0 {
        m.push("requests_per_s", "requests/s", Better::Higher, requests as f64 / secs);
        m.push("transfer_bw", "bytes/s", Better::Higher, bytes / secs);
    }
    let weighted: f64 = each
        .iter()
        .filter_map(|e| Some(e.metric("latency_avg")?.value * e.counters.get("requests").copied()? as f64))
        .sum();
    if requests > 0 {
        m.push("latency_avg", "ns", Better::Lower, weighted / requests as f64);
    }
    for name in ["requests", "failed_requests", "non_2xx_responses"] {
        let n: u64 = each.iter().filter_map(|e| e.counters.get(name)).sum();
        if each.iter().any(|e| e.counters.contains_key(name)) {
            m.count(name, n);
        }
    }
    // Each table: the time (ms) under which p% of that run's requests were served. The
    // merged distribution's p-th percentile: the smallest time at which, averaged over the
    // runs (equal request counts), at least p% were served.
    let tables: Vec<Vec<(u32, f64)>> = runs.iter().map(|(_, csv)| table(csv)).filter(|t| !t.is_empty()).collect();
    if !tables.is_empty() {
        let served = |t: f64| -> f64 {
            let sum: f64 = tables
                .iter()
                .map(|rows| f64::from(rows.iter().filter(|(_, ms)| *ms <= t).map(|(p, _)| *p).max().unwrap_or(0)))
                .sum();
            sum / tables.len() as f64
        };
        let mut times: Vec<f64> = tables.iter().flatten().map(|(_, ms)| *ms).collect();
        times.sort_by(f64::total_cmp);
        for (p, name) in [(50.0, "latency_p50"), (99.0, "latency_p99")] {
            if let Some(t) = times.iter().find(|&&t| served(t) >= p) {
                m.push(name, "ns", Better::Lower, t * 1e6);
            }
        }
    }
    m
}

/// ab's `-e` table: (percent, ms) rows.
fn table(csv: &str) -> Vec<(u32, f64)> {
    csv.lines()
        .skip(1)
        .filter_map(|line| {
            let (p, ms) = line.split_once(',')?;
            Some((p.trim().parse().ok()?, ms.trim().parse().ok()?))
        })
        .collect()
}

/// `latency_p99` (and p50) from ab's `-e` table: `Percentage served,Time in ms`, one row per
/// percent.
pub fn percentiles(m: &mut Measurement, csv: &str) {
    for (p, ms) in table(csv) {
        match p {
            50 => m.push("latency_p50", "ns", Better::Lower, ms * 1e6),
            99 => m.push("latency_p99", "ns", Better::Lower, ms * 1e6),
            _ => {}
        }
    }
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
    fn ab_output_parses() {
        let out = "Concurrency Level:      4\nTime taken for tests:   1.234 seconds\nComplete requests:      1000\nFailed requests:        0\nRequests per second:    810.37 [#/sec] (mean)\nTime per request:       4.936 [ms] (mean)\nTime per request:       1.234 [ms] (mean, across all concurrent requests)\nTransfer rate:          3899.54 [Kbytes/sec] received\n";
        let mut m = figures(out);
        percentiles(&mut m, "Percentage served,Time in ms\n0,0.100\n50,4.000\n99,12.500\n100,20.000\n");
        assert_eq!(m.metric("requests_per_s").unwrap().value, 810.37);
        assert!((m.metric("transfer_bw").unwrap().value - 3899.54 * 1024.0).abs() < 1e-6);
        assert!((m.metric("latency_avg").unwrap().value - 4_936_000.0).abs() < 1.0);
        assert!((m.metric("latency_p99").unwrap().value - 12_500_000.0).abs() < 1.0);
        assert_eq!((m.counters["requests"], m.counters["failed_requests"]), (1000, 0));
    }

    #[test]
    fn several_abs_add_up_and_their_percentiles_merge() {
        let out = |secs: f64, n: u64, mean: f64| {
            format!("Time taken for tests:   {secs} seconds\nComplete requests:      {n}\nFailed requests:        0\nTotal transferred:      {} bytes\nRequests per second:    {} [#/sec] (mean)\nTime per request:       {mean} [ms] (mean)\n", n * 4400, n as f64 / secs)
        };
        let csv = |base: f64| -> String {
            let mut t = "Percentage served,Time in ms\n".to_string();
            for p in 0..=100 {
                t.push_str(&format!("{p},{:.3}\n", base + f64::from(p) / 100.0));
            }
            t
        };
        let (a, b) = (out(2.0, 1000, 1.0), out(4.0, 1000, 3.0));
        let (ca, cb) = (csv(1.0), csv(3.0));
        let m = aggregate(&[(&a, &ca), (&b, &cb)]);
        // 2000 requests over the longer run's 4 s; bytes likewise; means weighted.
        assert_eq!(m.metric("requests_per_s").unwrap().value, 500.0);
        assert_eq!(m.metric("transfer_bw").unwrap().value, 2000.0 * 4400.0 / 4.0);
        assert!((m.metric("latency_avg").unwrap().value - 2_000_000.0).abs() < 1.0);
        assert_eq!(m.counters["requests"], 2000);
        // Half of all requests are the fast run's: the merged median is its slowest time, the
        // merged p99 the slow run's 98th percentile.
        assert!((m.metric("latency_p50").unwrap().value - 2_000_000.0).abs() < 1.0, "{:?}", m.metric("latency_p50"));
        assert!((m.metric("latency_p99").unwrap().value - 3_980_000.0).abs() < 1.0, "{:?}", m.metric("latency_p99"));
        // One run: exactly its own figures.
        let one = aggregate(&[(&a, &ca)]);
        assert_eq!(one.metric("latency_p99").unwrap().value, 1.99e6);
        assert_eq!(one.metric("requests_per_s").unwrap().value, 500.0);
    }

    #[test]
    fn files_must_divide_the_load() {
        let e = HttpWorkload::from_spec(&Spec::parse("http:files=3,concurrency=4,requests=300").unwrap()).unwrap_err();
        assert!(e.to_string().contains("concurrency=4 is not a multiple of files=3"), "{e}");
        let e = HttpWorkload::from_spec(&Spec::parse("http:files=2,concurrency=2,requests=301").unwrap()).unwrap_err();
        assert!(e.to_string().contains("requests=301 is not a multiple of files=2"), "{e}");
    }

    #[test]
    fn concurrency_above_requests_is_refused() {
        let e = HttpWorkload::from_spec(&Spec::parse("http:concurrency=10,requests=5").unwrap()).unwrap_err();
        assert!(e.to_string().contains("concurrency=10 is more than requests=5"), "{e}");
    }
}
