//! The processes a server workload starts: servers ([`Running`]), their untimed setup steps
//! ([`run_as`]) and the client programs ([`run_client`]). Each runs in a tree of its own (a
//! process group and a cgroup: [`fsarena_target::contain`]) recorded with the host before
//! anything waits on it, so that the round, teardown or `fsarena cleanup` after a killed run
//! ends every process of it. What fsarena keeps of a client's output is capped and made
//! printable.

use super::dirs::last_lines;
use super::{Account, Host, ServerLog, Tenant};
use fsarena_target::contain::{self, Setup, Tree};
use rustix::process::Signal;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a server gets to shut down cleanly after a round before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// Most bytes of a client's standard output kept: its last (the figures come at its end).
const CLIENT_STDOUT_CAP: usize = 1 << 20;

/// Most bytes of a client's standard error kept: its last.
const CLIENT_STDERR_CAP: usize = 64 << 10;

/// How a server, or a setup step of its, is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerStart {
    /// Its name in messages (`PostgreSQL`, `initdb`).
    pub name: &'static str,
    /// The account it runs as.
    pub account: Account,
    /// The signal of its fast shutdown.
    pub stop_signal: i32,
    /// In an IPC namespace of its own: the System V segments and semaphores it makes go with
    /// its last process, even when it is killed (PostgreSQL).
    pub own_ipc: bool,
}

/// A server this workload started, recorded with the host; stopped (and released) on drop.
pub struct Running<'h> {
    host: &'h dyn Host,
    child: Child,
    /// It and every process it started.
    tree: Tree,
    tenant: Tenant,
    stop_signal: i32,
    /// Its log (stdout and stderr, or the server's own log file).
    pub log: ServerLog,
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
    /// Spawns `cmd` as `how` says, in a tree of its own (a Ctrl-C at the terminal reaches
    /// fsarena, which then stops the server itself), with stdout and stderr to `log`
    /// ([`ServerLog::open_for_server`]); records it with `host` before anything waits on it.
    pub fn spawn(host: &'h dyn Host, how: ServerStart, mut cmd: Command, log: ServerLog) -> Result<Self, String> {
        let out = log.open_for_server()?;
        let err = out.try_clone().map_err(|e| format!("{}: {e}", log.path().display()))?;
        cmd.stdin(Stdio::null()).stdout(Stdio::from(out)).stderr(Stdio::from(err));
        let setup = Setup { account: Some((how.account.uid, how.account.gid)), own_ipc: how.own_ipc };
        let prepared = contain::prepare(&mut cmd, setup);
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                prepared.abandon();
                return Err(format!("cannot start {}: {e}", how.name));
            }
        };
        let tree = prepared.started(child.id());
        let tenant = Tenant::Server {
            pid: tree.leader,
            start_time: tree.start_time,
            stop_signal: how.stop_signal,
            cgroup: tree.cgroup.clone(),
        };
        if let Err(e) = host.record(&tenant) {
            let _ = child.kill();
            let _ = child.wait();
            let _ = tree.end(None, false, Duration::ZERO);
            return Err(e);
        }
        Ok(Self { host, child, tree, tenant, stop_signal: how.stop_signal, log, name: how.name, done: false })
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
        self.log.tail(8)
    }

    /// True while the server has not exited.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Fast shutdown: the stop signal, a bounded wait, then SIGKILL to every process of its
    /// tree; releases it with the host. An error when it had to be killed or had already died.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop_now()
    }

    fn stop_now(&mut self) -> Result<(), String> {
        let mut result = Ok(());
        if let Ok(Some(status)) = self.child.try_wait() {
            result = Err(format!("{} had exited ({status}); its log ends: {}", self.name, self.tail()));
        } else {
            if let Some(signal) = Signal::from_named_raw(self.stop_signal) {
                self.tree.signal_leader(signal);
            }
            // A process its account stopped (SIGSTOP) would sit on the signal for the whole
            // grace: every process of the tree goes on, to shut down.
            self.tree.signal_all(Signal::CONT);
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
        result.and(self.finish_now())
    }

    /// After its leader exited: whatever of its tree outlived it (a worker it did not end, a
    /// child it left behind) is killed, and it is released with the host.
    fn finish_now(&mut self) -> Result<(), String> {
        self.done = true;
        let mut result = Ok(());
        if let Err(e) = self.tree.end(None, false, Duration::ZERO) {
            result = Err(format!("{}: {e}", self.name));
        }
        // Reaped: the host finds it gone and forgets it.
        if let Err(e) = self.host.release(&self.tenant) {
            result = result.and(Err(e));
        }
        result
    }

    /// Waits for it to exit by itself (a setup step); `stop` kills its tree.
    fn wait_exit(&mut self, stop: &AtomicBool) -> Result<ExitStatus, String> {
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) if stop.load(Ordering::Relaxed) => {
                    let _ = self.tree.end(None, false, Duration::ZERO);
                }
                Ok(None) => {}
                Err(e) => return Err(format!("{}: {e}", self.name)),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
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

/// Runs an untimed setup step (initdb, mariadb-install-db) as `how` says to its end, in a
/// tree of its own recorded with `host`, its output appended to `log`; a failure is an error
/// with the log's last lines.
pub fn run_as(
    host: &dyn Host,
    how: ServerStart,
    cmd: Command,
    log: &ServerLog,
    stop: &AtomicBool,
) -> Result<(), String> {
    let mut step = Running::spawn(host, how, cmd, log.try_clone()?)?;
    let status = step.wait_exit(stop);
    let ended = step.finish_now();
    let status = status?;
    ended?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} failed ({status}); its output ends: {}", how.name, log.tail(8)))
    }
}

/// What a client program (pgbench, sysbench, ab) printed.
#[derive(Debug)]
pub struct ClientOutput {
    /// Its stdout (its last MiB).
    pub stdout: String,
    /// Its stderr's last lines, one line, printable.
    pub stderr_tail: String,
    /// How it exited.
    pub status: ExitStatus,
    /// It exited 0.
    pub success: bool,
    /// It was stopped by Ctrl-C.
    pub stopped: bool,
}

impl ClientOutput {
    /// Its stdout's last lines, one line, printable.
    pub fn stdout_tail(&self) -> String {
        last_lines(&self.stdout, 5).join(" | ")
    }
}

/// Reads `pipe` to its end on a thread, keeping its last `cap` bytes.
fn capture<R: Read + Send + 'static>(pipe: Option<R>, cap: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut pipe) = pipe else { return kept };
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => kept.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            if kept.len() > 2 * cap {
                kept.drain(..kept.len() - cap);
            }
        }
        if kept.len() > cap {
            kept.drain(..kept.len() - cap);
        }
        kept
    })
}

/// Runs a client program to its end in a tree of its own recorded with `host` (killed on
/// `stop`), capturing the end of its output.
pub fn run_client(host: &dyn Host, mut cmd: Command, stop: &AtomicBool) -> Result<ClientOutput, String> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let prepared = contain::prepare(&mut cmd, Setup::default());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            prepared.abandon();
            return Err(format!("cannot start {program}: {e}"));
        }
    };
    let tree = prepared.started(child.id());
    let tenant = Tenant::Client { pid: tree.leader, start_time: tree.start_time, cgroup: tree.cgroup.clone() };
    if let Err(e) = host.record(&tenant) {
        let _ = child.kill();
        let _ = child.wait();
        let _ = tree.end(None, false, Duration::ZERO);
        return Err(e);
    }
    // Read both pipes on threads so that neither fills and blocks the child.
    let out_thread = capture(child.stdout.take(), CLIENT_STDOUT_CAP);
    let err_thread = capture(child.stderr.take(), CLIENT_STDERR_CAP);
    let mut stopped = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(format!("{program}: {e}")),
        }
        if stop.load(Ordering::Relaxed) && !stopped {
            stopped = true;
            let _ = tree.end(None, false, Duration::ZERO);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Whatever it left running (holding its pipes open, say) goes before its output is read.
    let ended = tree.end(None, false, Duration::ZERO);
    let released = host.release(&tenant);
    let status = status?;
    ended.map_err(|e| format!("{program}: {e}"))?;
    released?;
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap_or_default()).into_owned();
    let stderr = err_thread.join().unwrap_or_default();
    let stderr_tail = last_lines(&String::from_utf8_lossy(&stderr), 5).join(" | ");
    Ok(ClientOutput { stdout, stderr_tail, status, success: status.success(), stopped })
}
