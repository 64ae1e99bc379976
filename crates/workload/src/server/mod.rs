//! Real servers on the filesystem under test — PostgreSQL for `pgbench`, MariaDB for
//! `sysbench`, nginx for `http` — and their lifetime, shared by the three workloads.
//!
//! A server is a tenant of its target, not of the machine: it runs as the account its Debian
//! package created (never one fsarena makes), with its data directory in the target and its
//! run directory (socket, PID file, log) under the run's directory in /run/fsarena, both 0700
//! and owned by that account. Everything is recorded through the runner's [`Host`] — the data
//! and run directories right after they are made, the server's PID and start time right after
//! it is spawned and before it is waited on — so that teardown, or `fsarena cleanup` after a
//! killed run, stops the server (fast shutdown, a bounded wait, a kill of that PID only while
//! PID and start time match) before the target is unmounted.
//!
//! Lifetime across rounds (the seam in the runner is [`Host`]): the data directory is named
//! after the workload's server keys (`pgbench-<hash>`), initialised and loaded once (untimed,
//! then a marker file says it is complete) and left recorded with the host, which removes it
//! when the target is torn down; so every repetition and every sweep point with the same
//! server keys (client keys: `client`, `threads`, `time`, ...) reuses it. Each round starts the
//! server afresh on it, drops the caches, measures, and shuts the server down cleanly.

pub mod http;
pub mod pgbench;
pub mod sysbench;

use fsarena_core::InputError;
use std::ffi::CString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Something a server workload creates that must not outlive the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tenant {
    /// A server's run directory (socket, PID file, log) under the run's directory in
    /// /run/fsarena, just created: recorded in the state file, removed with its contents
    /// while still that directory.
    RunDir(PathBuf),
    /// A data directory in the target, just created: kept for the rounds and sweep points
    /// that reuse it, removed with its contents when the target is torn down (it goes with
    /// the target anyway on an image or tmpfs; a `dir:` target's scratch directory holds it).
    DataDir(PathBuf),
    /// A server process the workload just spawned.
    Server {
        /// Its PID.
        pid: u32,
        /// Its start time, field 22 of /proc/PID/stat.
        start_time: u64,
        /// The signal of its fast shutdown.
        stop_signal: i32,
        /// The cgroup holding it and every process it starts (None: its process group).
        cgroup: Option<fsarena_target::contain::Cgroup>,
    },
}

/// What the runner lends a server workload: the run's directory under /run/fsarena and its
/// state file. Implemented by the runner per target: what is recorded and not released by
/// the workload is released when the target is torn down, before it is unmounted — the seam
/// that lets a data directory outlive one round and serve every round and sweep point with
/// the same server keys.
pub trait Host: Sync {
    /// `RUN/RUNID-what`: a path for a server's run directory in the run's directory under
    /// /run/fsarena (0711, root's), named as the state file's confinement expects.
    fn run_path(&self, what: &str) -> PathBuf;
    /// Writes down `tenant`, just created.
    fn record(&self, tenant: &Tenant) -> Result<(), String>;
    /// Undoes `tenant` if still outstanding (stops the server, removes the directory) and
    /// forgets it.
    fn release(&self, tenant: &Tenant) -> Result<(), String>;
}

/// A round that failed: why, and what it measured before.
pub type Failed = Box<(String, fsarena_core::Measurement)>;

/// Longest unix socket path accepted: sun_path holds 108 bytes with its NUL, and the servers
/// add a suffix of their own (`.s.PGSQL.5432.lock`).
pub const MAX_SOCKET_PATH: usize = 100;

/// The default of `start_timeout=`.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a server gets to shut down cleanly after a round before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// A Debian package's system account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

impl Account {
    /// The account `name`, which the Debian package `package` creates; missing → the input
    /// error naming the package (fsarena creates no users).
    pub fn lookup(kind: &str, name: &str, package: &str) -> Result<Self, InputError> {
        let missing = || {
            InputError::new(format!(
                "{kind}: the account '{name}' does not exist: it is created by Debian's {package} package (apt-get install {package}); fsarena creates no users"
            ))
        };
        let c = CString::new(name).map_err(|_| missing())?;
        // SAFETY: getpwnam reads a NUL-terminated name and returns a pointer into static
        // storage or null; the fields are copied out at once.
        let pw = unsafe { libc::getpwnam(c.as_ptr()) };
        if pw.is_null() {
            return Err(missing());
        }
        // SAFETY: non-null, pointing at a valid passwd record until the next getpw* call.
        let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
        Ok(Self { uid, gid })
    }
}

/// `program` in the newest of `dirs` (globbed by the caller), or on the usual paths.
pub fn find_binary(kind: &str, program: &str, package: &str) -> Result<PathBuf, InputError> {
    crate::exec::options::find_program(program).ok_or_else(|| {
        InputError::new(format!(
            "{kind}: {program} is not found: it comes with Debian's {package} package (apt-get install {package})"
        ))
    })
}

/// Checks a unix socket path's length (`what` names it in the message).
pub fn check_socket_path(kind: &str, path: &Path) -> Result<(), String> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(format!(
            "{kind}: the server's socket path {} is {len} bytes, over the {MAX_SOCKET_PATH} a unix socket allows",
            path.display()
        ));
    }
    Ok(())
}

/// Creates the directory of `tenant` (a run or data directory; 0700, owned by `owner`) and
/// records it with `host`.
pub fn make_private_dir(host: &dyn Host, tenant: &Tenant, owner: Account) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let (Tenant::RunDir(path) | Tenant::DataDir(path)) = tenant else {
        return Err("make_private_dir: not a directory".into());
    };
    std::fs::DirBuilder::new().mode(0o700).create(path).map_err(|e| format!("mkdir {}: {e}", path.display()))?;
    if let Err(e) = host.record(tenant) {
        let _ = std::fs::remove_dir(path);
        return Err(e);
    }
    // The mode again (the umask applied to mkdir), then the owner.
    let chown = rustix::fs::chown(
        path,
        Some(rustix::process::Uid::from_raw(owner.uid)),
        Some(rustix::process::Gid::from_raw(owner.gid)),
    );
    let chmod = std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o700));
    match (chown, chmod) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), _) => Err(format!("chown {}: {e}", path.display())),
        (_, Err(e)) => Err(format!("chmod {}: {e}", path.display())),
    }
}

/// Runs an untimed step (initdb, mariadb-install-db) as `account` to its end, its output
/// appended to `log`; a failure is an error with the log's last lines.
pub fn run_as(mut cmd: Command, account: Account, log: &Path, stop: &AtomicBool) -> Result<(), String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
    cmd.uid(account.uid).gid(account.gid).stdin(Stdio::null()).stdout(Stdio::from(out)).stderr(Stdio::from(err));
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {program}: {e}"))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if stop.load(Ordering::Relaxed) => {
                let _ = child.kill();
            }
            Ok(None) => {}
            Err(e) => return Err(format!("{program}: {e}")),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.success() {
        Ok(())
    } else {
        Err(format!("{program} failed ({status}); its output ends: {}", log_tail(log, 8)))
    }
}

/// Checks that `account` can reach `dir`: every directory above it must let others pass
/// (x), since the server runs as that account, not as root.
pub fn check_reachable(kind: &str, dir: &Path, account_name: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for a in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(a) else { continue };
        if meta.permissions().mode() & 0o001 == 0 {
            return Err(format!(
                "{kind}: {} (mode {:04o}) does not let the '{account_name}' account pass, so the server cannot reach its data in {}",
                a.display(),
                meta.permissions().mode() & 0o7777,
                dir.display()
            ));
        }
    }
    Ok(())
}

/// The last `lines` lines of the file `path`, joined by " | " (one line for messages).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let all: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}

/// How many of a server log's last lines are kept with the result.
const KEPT_LOG_LINES: usize = 200;

/// Keeps the last lines of the server log `path` with the result `m`, as `name`.
pub fn keep_log(m: &mut fsarena_core::Measurement, name: &str, path: &Path) {
    let Ok(bytes) = std::fs::read(path) else { return };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[lines.len().saturating_sub(KEPT_LOG_LINES)..].join("\n");
    if !kept.is_empty() {
        m.logs.insert(name.to_string(), kept);
    }
}

/// Keeps the server log with whatever a round gave: its measurement, or the one its failure
/// carries.
pub fn keep_log_in(result: &mut Result<fsarena_core::Measurement, Failed>, name: &str, path: &Path) {
    match result {
        Ok(m) => keep_log(m, name, path),
        Err(failed) => keep_log(&mut failed.1, name, path),
    }
}

/// A server this workload started, recorded with the host; stopped (and released) on drop.
pub struct Running<'h> {
    host: &'h dyn Host,
    child: Child,
    /// It and every process it started.
    tree: fsarena_target::contain::Tree,
    tenant: Tenant,
    stop_signal: i32,
    /// Its log (stdout and stderr, or the server's own log file).
    pub log: PathBuf,
    /// Its name in messages (`PostgreSQL`).
    pub name: &'static str,
    /// Stopped and released already.
    done: bool,
}

impl std::fmt::Debug for Running<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("tenant", &self.tenant).field("log", &self.log).finish_non_exhaustive()
    }
}

impl<'h> Running<'h> {
    /// Spawns `cmd` as `account`, in a tree of its own (process group and cgroup:
    /// [`fsarena_target::contain`]; a Ctrl-C at the terminal reaches fsarena, which then stops
    /// the server itself), with stdout and stderr to `log`; records it with `host` before
    /// anything waits on it.
    pub fn spawn(
        host: &'h dyn Host,
        name: &'static str,
        mut cmd: Command,
        account: Account,
        log: &Path,
        stop_signal: i32,
    ) -> Result<Self, String> {
        use fsarena_target::contain;
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdin(Stdio::null()).stdout(Stdio::from(out)).stderr(Stdio::from(err));
        let prepared =
            contain::prepare(&mut cmd, contain::Setup { account: Some((account.uid, account.gid)), own_ipc: false });
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                prepared.abandon();
                return Err(format!("cannot start {name}: {e}"));
            }
        };
        let tree = prepared.started(child.id());
        if tree.start_time == 0 {
            let _ = child.kill();
            let _ = child.wait();
            let _ = tree.end(None, false, Duration::ZERO);
            return Err(format!("{name} exited at once; its log ends: {}", log_tail(log, 8)));
        }
        let tenant =
            Tenant::Server { pid: tree.leader, start_time: tree.start_time, stop_signal, cgroup: tree.cgroup.clone() };
        if let Err(e) = host.record(&tenant) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = tree.end(None, false, Duration::ZERO);
            return Err(e);
        }
        Ok(Self { host, child, tree, tenant, stop_signal, log: log.to_path_buf(), name, done: false })
    }

    /// Waits until `ready` says the server accepts clients, for at most `timeout`; an exit or
    /// the timeout is an error with the log's last lines (the server is then stopped).
    pub fn wait_ready(&mut self, timeout: Duration, stop: &AtomicBool, ready: impl Fn() -> bool) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{} exited while starting ({status}); its log ends: {}", self.name, self.tail()));
            }
            // A debug build's test knob: never ready, so that the tests reach the timeout
            // with a real server.
            let never = cfg!(debug_assertions) && std::env::var_os("FSARENA_TEST_SERVER_NEVER_READY").is_some();
            if !never && ready() {
                return Ok(());
            }
            if stop.load(Ordering::Relaxed) {
                return Err(format!("interrupted while {} was starting", self.name));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{} did not start within {} s (start_timeout=); its log ends: {}",
                    self.name,
                    timeout.as_secs_f64(),
                    self.tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The log's last lines.
    pub fn tail(&self) -> String {
        log_tail(&self.log, 8)
    }

    /// True while the server has not exited.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Fast shutdown: the stop signal, a bounded wait, then SIGKILL; releases it with the
    /// host. An error when it had to be killed or had already died.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<(), String> {
        self.done = true;
        let mut result = Ok(());
        if let Ok(Some(status)) = self.child.try_wait() {
            result = Err(format!("{} had exited ({status}); its log ends: {}", self.name, self.tail()));
        } else {
            if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
                if let Some(sig) = rustix::process::Signal::from_named_raw(self.stop_signal) {
                    let _ = rustix::process::kill_process(pid, sig);
                }
            }
            let deadline = Instant::now() + STOP_GRACE;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
                result =
                    Err(format!("{} did not shut down within {} s and was killed", self.name, STOP_GRACE.as_secs()));
            }
            let _ = self.child.wait();
        }
        // Whatever of its tree outlived it (a worker it did not end, a child it left behind).
        if let Err(e) = self.tree.end(None, false, Duration::ZERO) {
            result = result.and(Err(format!("{}: {e}", self.name)));
        }
        // Reaped: the host finds it gone and forgets it.
        if let Err(e) = self.host.release(&self.tenant) {
            result = result.and(Err(e));
        }
        result
    }
}

impl Drop for Running<'_> {
    /// A server not stopped by [`Running::stop`] (an error or panic on the way) is stopped here.
    fn drop(&mut self) {
        if !self.done {
            let _ = self.stop_now();
        }
    }
}

/// What a client program (pgbench, sysbench, ab) printed.
#[derive(Debug)]
pub struct ClientOutput {
    /// Its stdout.
    pub stdout: String,
    /// Its stderr's last lines, one line.
    pub stderr_tail: String,
    /// It exited 0.
    pub success: bool,
    /// It was stopped by Ctrl-C.
    pub stopped: bool,
}

/// Runs a client program to its end (killed on `stop`), capturing its output.
pub fn run_client(mut cmd: Command, stop: &AtomicBool) -> Result<ClientOutput, String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {program}: {e}"))?;
    // Read both pipes on threads so that neither fills and blocks the child.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out_thread = reader(out.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err_thread = reader(err.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let mut stopped = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("{program}: {e}")),
        }
        if stop.load(Ordering::Relaxed) && !stopped {
            stopped = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let stderr = err_thread.join().unwrap_or_default();
    let lines: Vec<&str> = stderr.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    let stderr_tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    Ok(ClientOutput { stdout, stderr_tail, success: status.success(), stopped })
}

/// A short stable hash of the server keys, naming the data directory they build.
pub fn key_hash(keys: &[(&str, String)]) -> String {
    // FNV-1a: stable across builds and runs (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in keys {
        for b in k.bytes().chain([b'=']).chain(v.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{:08x}", h >> 32)
}

/// A process-wide counter naming each server run directory uniquely in a run.
pub fn next_index() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A host for tests and tools: run directories under `dir`, nothing recorded, releases
/// undone directly (directories removed; servers are stopped by [`Running`] itself).
#[derive(Debug)]
pub struct LocalHost {
    /// Where run directories go.
    pub dir: PathBuf,
}

impl Host for LocalHost {
    fn run_path(&self, what: &str) -> PathBuf {
        self.dir.join(what)
    }
    fn record(&self, _tenant: &Tenant) -> Result<(), String> {
        Ok(())
    }
    fn release(&self, tenant: &Tenant) -> Result<(), String> {
        if let Tenant::RunDir(p) | Tenant::DataDir(p) = tenant {
            let _ = std::fs::remove_dir_all(p);
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_tell_keys_apart() {
        let a = key_hash(&[("scale", "1".into()), ("fsync", "on".into())]);
        assert_eq!(a, key_hash(&[("scale", "1".into()), ("fsync", "on".into())]));
        assert_ne!(a, key_hash(&[("scale", "10".into()), ("fsync", "on".into())]));
        assert_ne!(key_hash(&[("a", "bc".into())]), key_hash(&[("ab", "c".into())]));
    }

    #[test]
    fn the_last_lines_of_a_server_log_go_with_the_result_even_a_failed_one() {
        let path = std::env::temp_dir().join(format!("fsarena-servers-keeplog-{}", std::process::id()));
        let text: String = (0..250).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let mut failed: Result<fsarena_core::Measurement, Failed> =
            Err(Box::new(("x".into(), fsarena_core::Measurement::default())));
        keep_log_in(&mut failed, "postgres.log", &path);
        let _ = std::fs::remove_file(&path);
        let kept = &failed.unwrap_err().1.logs["postgres.log"];
        assert_eq!(kept.lines().count(), KEPT_LOG_LINES);
        assert!(kept.starts_with("line 50\n") && kept.ends_with("line 249"), "{kept}");
        let mut m = fsarena_core::Measurement::default();
        keep_log(&mut m, "gone.log", Path::new("/nonexistent/fsarena.log"));
        assert!(m.logs.is_empty());
    }

    #[test]
    fn long_socket_paths_and_missing_accounts_are_refused() {
        assert!(check_socket_path("pgbench", Path::new("/run/fsarena/x/.s.PGSQL.5432")).is_ok());
        let long = PathBuf::from(format!("/run/{}", "x".repeat(100)));
        assert!(check_socket_path("pgbench", &long).unwrap_err().contains("over the 100"));
        let e = Account::lookup("pgbench", "fsarena-no-such-user", "postgresql").unwrap_err().to_string();
        assert!(e.contains("Debian's postgresql package"), "{e}");
        assert_eq!(Account::lookup("x", "root", "base").unwrap(), Account { uid: 0, gid: 0 });
    }
}
