//! The `http` workload: a static file served from the target by Debian's nginx on 127.0.0.1
//! and a free port, loaded by `ab` from apache2-utils as the Phoronix round-up did.
//!
//! nginx runs as `www-data` (master and worker: no root, a port above 1024, `-e` and a
//! configuration of fsarena's own, never /etc/nginx's), with its document root and its access
//! and error logs in the target (`http-<hash>/site`, `http-<hash>/logs`) and its PID file and
//! temporary directories in the run's directory under /run/fsarena. Each round starts it,
//! drops the caches and runs `ab -n REQUESTS -c CONCURRENCY [-k] -e CSV`. Traffic stays on
//! loopback. Figures: ab's requests/s, transfer rate (bytes/s), mean time per request and the
//! 99th percentile from its `-e` table.

use super::pgbench::whole_seconds;
use super::{Account, Failed, Host, Running, Tenant};
use crate::options::{boolean, nonzero_size, opt, positive, OptionDef};
use crate::{Footprint, RunEnv, Workload, WorkloadError};
use fsarena_core::option::DefaultValue::Is;
use fsarena_core::option::ValueKind::{Bool, Count, Size, Time};
use fsarena_core::{Better, InputError, Measurement, Spec};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The options of one `http` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
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
        Self { file_size: 4096, concurrency: 1, requests: 100_000, keepalive: false, start_timeout: 60 }
    }
}

/// A row of the http table.
macro_rules! ht {
    ($($rest:tt)*) => { opt!(HttpOptions, $($rest)*) };
}

/// Every option of the `http` workload.
pub static OPTIONS: &[OptionDef<HttpOptions>] = &[
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

/// The file ab requests.
const FILE: &str = "index.html";

impl HttpWorkload {
    /// From `--workload http:concurrency=32`.
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut o = HttpOptions::default();
        for (k, v) in &spec.params {
            crate::options::set("http", OPTIONS, &mut o, k, v)?;
        }
        if o.concurrency > o.requests {
            return Err(InputError::new(format!(
                "http: concurrency={} is more than requests={}: ab needs at least one request per connection",
                o.concurrency, o.requests
            )));
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
        "http"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn footprint(&self) -> Footprint {
        // The file, and the access log: about 100 bytes per request.
        Footprint {
            source: "http workload (nginx and ab)".into(),
            threads: 2,
            buffer_bytes: 1 << 20,
            bytes_on_target: self.options.file_size + u64::from(self.options.requests) * 100 * 2,
            files: 8,
            open_files: u64::from(self.options.concurrency) + 16,
        }
    }

    fn describe(&self) -> Vec<String> {
        let o = &self.options;
        vec![
            format!("http: write a {}-byte {FILE} in the target, untimed; nginx as www-data on 127.0.0.1, files and logs in the target", o.file_size),
            format!(
                "http: each round: start nginx, drop caches, ab -n {} -c {}{}",
                o.requests,
                o.concurrency,
                if o.keepalive { " -k" } else { "" }
            ),
        ]
    }

    fn hosts_server(&self) -> bool {
        true
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String, mut m: Measurement| {
            m.complete = false;
            Err(WorkloadError { message: format!("http: {message}"), partial: vec![m] })
        };
        let Some(host) = env.host else {
            return fail("needs the runner's host for its server (not available here)".into(), Measurement::default());
        };
        let bare = |e: String| Box::new((e, Measurement::default()));
        let data =
            env.root.join(format!("http-{}", super::key_hash(&[("file_size", self.options.file_size.to_string())])));
        let run = host.run_path(&format!("http-{}", super::next_index()));
        let made = super::check_reachable("http", &data, "www-data")
            .and_then(|()| super::make_private_dir(host, &Tenant::RunDir(run.clone()), self.account))
            .map_err(bare);
        let mut result = made.and_then(|()| self.round(env, host, &data, &run));
        super::keep_log_in(&mut result, "nginx-error.log", &data.join("logs").join("error.log"));
        let released = host.release(&Tenant::RunDir(run.clone()));
        match (result, released) {
            (Ok(m), Ok(())) => Ok(vec![m]),
            (Ok(m), Err(e)) => fail(e, m),
            (Err(failed), _) => fail(failed.0, failed.1),
        }
    }
}

impl HttpWorkload {
    fn round(&self, env: &RunEnv<'_>, host: &dyn Host, data: &Path, run: &Path) -> Result<Measurement, Failed> {
        let bare = |e: String| Box::new((e, Measurement::default()));
        let o = &self.options;
        let site = data.join("site");
        if !site.join(FILE).exists() {
            if data.exists() {
                host.release(&Tenant::DataDir(data.to_path_buf())).map_err(bare)?;
            }
            super::make_private_dir(host, &Tenant::DataDir(data.to_path_buf()), self.account).map_err(bare)?;
            for dir in [&site, &data.join("logs")] {
                std::fs::create_dir(dir).map_err(|e| bare(format!("mkdir {}: {e}", dir.display())))?;
                let owner = (
                    Some(rustix::process::Uid::from_raw(self.account.uid)),
                    Some(rustix::process::Gid::from_raw(self.account.gid)),
                );
                rustix::fs::chown(dir, owner.0, owner.1).map_err(|e| bare(format!("chown {}: {e}", dir.display())))?;
            }
            // Printable bytes, so that the page is what a web server serves.
            let body: Vec<u8> = (0..o.file_size).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(site.join(FILE), body).map_err(|e| bare(format!("cannot write {FILE}: {e}")))?;
        }
        // A free port on loopback: the kernel picks one, nginx takes it over.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| bare(format!("cannot find a free port on 127.0.0.1: {e}")))?
            .port();
        let conf = run.join("nginx.conf");
        std::fs::write(&conf, self.config(data, run, port))
            .map_err(|e| bare(format!("cannot write {}: {e}", conf.display())))?;
        let error_log = data.join("logs").join("error.log");
        let mut cmd = Command::new(&self.nginx);
        cmd.arg("-c").arg(&conf).arg("-p").arg(run).arg("-e").arg(&error_log).current_dir("/");
        let mut server =
            Running::spawn(host, "nginx", cmd, self.account, &run.join("nginx.out"), libc::SIGTERM).map_err(bare)?;
        server.log = error_log;
        let pid_file = run.join("nginx.pid");
        let ready = || pid_file.exists() && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        server.wait_ready(Duration::from_secs(o.start_timeout), env.stop, ready).map_err(bare)?;
        if let Some(drop) = env.drop_caches {
            drop().map_err(|e| bare(format!("dropping the caches: {e}")))?;
        }
        (env.progress)(&format!("http: ab -n {} -c {}", o.requests, o.concurrency));
        let csv = run.join("ab-percentiles.csv");
        let mut ab = Command::new(&self.ab);
        ab.arg("-q").arg("-n").arg(o.requests.to_string()).arg("-c").arg(o.concurrency.to_string());
        if o.keepalive {
            ab.arg("-k");
        }
        ab.arg("-e").arg(&csv).arg(format!("http://127.0.0.1:{port}/{FILE}"));
        let out = super::run_client(ab, env.stop).map_err(bare)?;
        let mut m = figures(&out.stdout);
        percentiles(&mut m, &std::fs::read_to_string(&csv).unwrap_or_default());
        m.complete = out.success && !out.stopped;
        if !out.stopped && (!out.success || m.metric("requests_per_s").is_none()) {
            let why = format!("ab failed: {}; nginx's error log ends: {}", out.stderr_tail, server.tail());
            return Err(Box::new((why, m)));
        }
        if let Err(e) = server.stop() {
            return Err(Box::new((e, m)));
        }
        Ok(m)
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

/// `latency_p99` (and p50) from ab's `-e` table: `Percentage served,Time in ms`, one row per
/// percent.
pub fn percentiles(m: &mut Measurement, csv: &str) {
    for line in csv.lines().skip(1) {
        let Some((p, ms)) = line.split_once(',') else { continue };
        let (Ok(p), Ok(ms)) = (p.trim().parse::<u32>(), ms.trim().parse::<f64>()) else { continue };
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
        crate::options::check_table(OPTIONS, Clone::clone).unwrap();
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
    fn concurrency_above_requests_is_refused() {
        let e = HttpWorkload::from_spec(&Spec::parse("http:concurrency=10,requests=5").unwrap()).unwrap_err();
        assert!(e.to_string().contains("concurrency=10 is more than requests=5"), "{e}");
    }
}
