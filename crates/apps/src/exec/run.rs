//! Running one command as `/bin/sh -c` and measuring it: wall clock from spawn to exit, the
//! child's CPU and peak memory from `wait4`'s rusage (which includes the descendants it
//! waited for), and its I/O from `/proc/PID/io`, read while the child is a zombie: `waitid`
//! with `WNOWAIT` reports the exit without reaping, so the entry is still there (and the PID,
//! and so its process group ID, cannot be reused), then `wait4` reaps.
//!
//! The child leads a process group of its own (setpgid), so a terminal's Ctrl-C does not
//! reach it directly; fsarena forwards the stop as SIGTERM to that group, then SIGKILL after
//! a grace period. Only that group is ever signalled, and only while its leader is unreaped.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a stopped command has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// The last bytes of stderr kept for the failure message.
const TAIL_BYTES: usize = 4096;

/// `/proc/PID/io` of the child, its waited-for descendants included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcIo {
    /// Bytes passed to read()-class calls.
    pub rchar: u64,
    /// Bytes passed to write()-class calls.
    pub wchar: u64,
    /// read()-class calls.
    pub syscr: u64,
    /// write()-class calls.
    pub syscw: u64,
    /// Bytes fetched from the storage layer.
    pub read_bytes: u64,
    /// Bytes dirtied for the storage layer (0 on tmpfs, which has none).
    pub write_bytes: u64,
    /// Dirtied bytes that were truncated away before writeback.
    pub cancelled_write_bytes: u64,
}

impl ProcIo {
    /// From the text of `/proc/PID/io`.
    pub fn parse(text: &str) -> Self {
        let mut io = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else { continue };
            let value = value.trim().parse().unwrap_or(0);
            match key.trim() {
                "rchar" => io.rchar = value,
                "wchar" => io.wchar = value,
                "syscr" => io.syscr = value,
                "syscw" => io.syscw = value,
                "read_bytes" => io.read_bytes = value,
                "write_bytes" => io.write_bytes = value,
                "cancelled_write_bytes" => io.cancelled_write_bytes = value,
                _ => {}
            }
        }
        io
    }

    /// The counters by name, as stored.
    pub fn counters(&self) -> [(&'static str, u64); 7] {
        [
            ("rchar", self.rchar),
            ("wchar", self.wchar),
            ("syscr", self.syscr),
            ("syscw", self.syscw),
            ("read_bytes", self.read_bytes),
            ("write_bytes", self.write_bytes),
            ("cancelled_write_bytes", self.cancelled_write_bytes),
        ]
    }
}

/// What one command did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// From spawn to exit.
    pub wall: Duration,
    /// The exit code, or None when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// User CPU seconds.
    pub user: f64,
    /// System CPU seconds.
    pub sys: f64,
    /// Peak resident set, bytes.
    pub max_rss: u64,
    /// Page faults that needed I/O, and those that did not.
    pub major_faults: u64,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Voluntary and involuntary context switches.
    pub vol_switches: u64,
    /// Involuntary context switches.
    pub invol_switches: u64,
    /// `/proc/PID/io`, when it could be read.
    pub io: Option<ProcIo>,
    /// The end of stderr.
    pub stderr_tail: String,
    /// Ended by fsarena because the run was stopped.
    pub stopped: bool,
}

impl Outcome {
    /// True when it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// `exit status 3` or `killed by signal 9`.
    pub fn status_text(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "unknown status".into(),
        }
    }
}

/// Runs `script` with `/bin/sh -c` in `cwd` with `env` added, stdin from /dev/null, stdout
/// discarded, stderr's tail kept. Returns when the command and its reaped descendants exited;
/// `stop` ends it early.
pub fn run_shell(script: &str, cwd: &Path, env: &[(&str, &Path)], stop: &AtomicBool) -> Result<Outcome, String> {
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(script).current_dir(cwd).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    // A tree of its own (cgroup and process group): a descendant that leaves the group
    // (setsid, a daemon) is still ended with it.
    let prepared = fsarena_target::contain::prepare(&mut command, fsarena_target::contain::Setup::default());
    let start = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            prepared.abandon();
            return Err(format!("cannot start /bin/sh: {e}"));
        }
    };
    let tree = prepared.started(child.id());
    let pid = child.id() as libc::pid_t;
    // A reader of its own: a command writing much to stderr must not block on a full pipe.
    // Detached: a descendant that escaped the group may hold the pipe open for ever.
    let (tail_tx, tail_rx) = mpsc::channel();
    if let Some(mut stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut tail: Vec<u8> = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 2 * TAIL_BYTES {
                    tail.drain(..tail.len() - TAIL_BYTES);
                }
            }
            let _ = tail_tx.send(tail);
        });
    }
    let done = AtomicBool::new(false);
    let mut outcome = Outcome::default();
    let exited = std::thread::scope(|s| {
        s.spawn(|| outcome.stopped = watch(&tree, &done, stop));
        let exited = wait_exit(pid);
        // Timed here, not after the scope: joining the watcher may take one of its ticks.
        let wall = start.elapsed();
        done.store(true, Ordering::Relaxed);
        exited.map(|()| wall)
    });
    outcome.wall = exited?;
    outcome.io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok().map(|t| ProcIo::parse(&t));
    // The leader is still a zombie, so its group is still ours: end what it left running (a
    // `cmd &`, a daemon), which would otherwise hold files on a target about to be removed.
    let ended = tree.end(None, false, Duration::ZERO);
    let (status, usage) = reap(pid)?;
    ended.map_err(|e| format!("what the command left running: {e}"))?;
    if libc::WIFEXITED(status) {
        outcome.code = Some(libc::WEXITSTATUS(status));
    } else if libc::WIFSIGNALED(status) {
        outcome.signal = Some(libc::WTERMSIG(status));
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    outcome.user = secs(usage.ru_utime);
    outcome.sys = secs(usage.ru_stime);
    outcome.max_rss = (usage.ru_maxrss.max(0) as u64) * 1024;
    outcome.major_faults = usage.ru_majflt.max(0) as u64;
    outcome.minor_faults = usage.ru_minflt.max(0) as u64;
    outcome.vol_switches = usage.ru_nvcsw.max(0) as u64;
    outcome.invol_switches = usage.ru_nivcsw.max(0) as u64;
    let tail = tail_rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let text = String::from_utf8_lossy(&tail[tail.len().saturating_sub(TAIL_BYTES)..]).into_owned();
    outcome.stderr_tail = text.trim_end().to_string();
    Ok(outcome)
}

/// Forwards a stop to the child's tree until `done`: SIGTERM, then SIGKILL after [`GRACE`].
/// True if it signalled.
fn watch(tree: &fsarena_target::contain::Tree, done: &AtomicBool, stop: &AtomicBool) -> bool {
    use rustix::process::Signal;
    let tick = Duration::from_millis(20);
    while !done.load(Ordering::Relaxed) {
        if stop.load(Ordering::Relaxed) {
            tree.signal_all(Signal::TERM);
            let deadline = Instant::now() + GRACE;
            while !done.load(Ordering::Relaxed) {
                if Instant::now() >= deadline {
                    tree.signal_all(Signal::KILL);
                    return true;
                }
                std::thread::sleep(tick);
            }
            return true;
        }
        std::thread::sleep(tick);
    }
    false
}

/// Waits until `pid` exits, without reaping it.
fn wait_exit(pid: libc::pid_t) -> Result<(), String> {
    loop {
        // SAFETY: siginfo_t is plain data, zeroed is a valid value; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid, writable siginfo_t.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waitid({pid}): {e}"));
        }
    }
}

/// Reaps `pid`: its wait status and resource usage.
fn reap(pid: libc::pid_t) -> Result<(i32, libc::rusage), String> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data, zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: status and usage are valid, writable.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("wait4({pid}): {e}"));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn status_cpu_io_and_stderr_are_the_childs() {
        let dir = std::env::temp_dir();
        let stop = AtomicBool::new(false);
        let o = run_shell(
            "head -c 3000000 /dev/zero > /dev/null; echo oops >&2; exit 3",
            &dir,
            &[("X", Path::new("/x"))],
            &stop,
        )
        .unwrap();
        assert_eq!(o.code, Some(3));
        assert!(!o.success() && !o.stopped);
        assert_eq!(o.stderr_tail, "oops");
        let io = o.io.unwrap();
        assert!(io.rchar >= 3_000_000 && io.wchar >= 3_000_000, "{io:?}");
        assert!(o.max_rss > 0);
        let o = run_shell("printf %s \"$X\" >&2", &dir, &[("X", Path::new("/x y"))], &stop).unwrap();
        assert!(o.success());
        assert_eq!(o.stderr_tail, "/x y");
    }

    #[test]
    fn a_stop_ends_the_group() {
        let stop = AtomicBool::new(true);
        let o = run_shell("sleep 30 & sleep 30; wait", &std::env::temp_dir(), &[], &stop).unwrap();
        assert!(o.stopped);
        assert_eq!(o.signal, Some(libc::SIGTERM), "{}", o.status_text());
    }

    #[test]
    fn proc_io_parses() {
        let io = ProcIo::parse(
            "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 0\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n",
        );
        assert_eq!(io.wchar, 20);
        assert_eq!(io.write_bytes, 4096);
    }
}
