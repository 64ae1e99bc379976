//! The hostile suite's tools: scratch arenas that clean up after themselves even when
//! fsarena does not, and fsarena played with a time limit and an address-space limit, its
//! output checked for raw control characters and secrets. Snapshots, victims and leftover
//! detection live in `evidence`, re-exported here.

pub use super::evidence::*;
use crate::util::Bounded;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Text that must never reach fsarena's output: the content of the secret file the job-file
/// cases try to include, and the marker file of the shell-injection cases.
pub const SECRET: &str = "HOSTILE-SECRET-7f3a9c";
/// The file a shell injection would create.
pub const PWNED: &str = "PWNED";

/// The fsarena binary under test, like `util::fsarena()`; `$HOSTILE_FSARENA` names another
/// build (say, of an older commit) to show which attacks it falls to.
pub fn fsarena() -> Command {
    let bin = std::env::var_os("HOSTILE_FSARENA").unwrap_or_else(|| env!("CARGO_BIN_EXE_fsarena").into());
    let mut c = Command::new(bin);
    c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
    c
}

/// A scratch directory of one test (`/var/tmp/fsarena-hostile-PID-NAME-N`, mode 0755, root's)
/// and everything the test set up there: on drop, fsarena cleanup runs on the registered work
/// directories, then mounts, swap and loop devices under it are undone, processes the test
/// started are killed, immutable flags cleared, and the directory removed.
#[derive(Debug)]
pub struct Arena {
    /// The directory.
    pub root: PathBuf,
    workdirs: Mutex<Vec<PathBuf>>,
    children: Mutex<Vec<Child>>,
    immutable: Mutex<Vec<PathBuf>>,
    swaps: Mutex<Vec<String>>,
}

impl Arena {
    /// A fresh, empty arena.
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = PathBuf::from(format!("/var/tmp/fsarena-hostile-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).expect("arena");
        // Root-owned and not writable by others, whatever the umask: fsarena trusts it.
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self {
            root,
            workdirs: Mutex::default(),
            children: Mutex::default(),
            immutable: Mutex::default(),
            swaps: Mutex::default(),
        }
    }

    /// `root/rel` (not created).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// `root/rel`, created with mode 0755.
    pub fn dir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// `root/rel` with `content` (parents created).
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    /// A work directory path that fsarena cleanup is run on at drop (not created).
    pub fn workdir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        self.workdirs.lock().unwrap().push(p.clone());
        p
    }

    /// Registers a work directory given some other way (relative runs, odd names).
    pub fn register_workdir(&self, p: &Path) {
        self.workdirs.lock().unwrap().push(p.to_path_buf());
    }

    /// A tmpfs of `size` mounted at `root/rel`.
    pub fn tmpfs(&self, rel: &str, size: &str) -> PathBuf {
        self.tmpfs_with(rel, &format!("size={size}"))
    }

    /// A tmpfs mounted at `root/rel` with mount `options`.
    pub fn tmpfs_with(&self, rel: &str, options: &str) -> PathBuf {
        let p = self.dir(rel);
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "fsarena-hostile"])
            .arg(&p)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mounting a tmpfs failed: the hostile suite runs as root");
        p
    }

    /// A sparse image of `size` bytes at `root/rel`, attached to a loop device; returns the device.
    pub fn loop_device(&self, rel: &str, size: u64) -> String {
        let image = self.path(rel);
        std::fs::File::create(&image).unwrap().set_len(size).unwrap();
        let out = Command::new("losetup").arg("--find").arg("--show").arg(&image).bounded_output().unwrap();
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Makes `dev` active swap; swapped off at drop.
    pub fn swapon(&self, dev: &str) {
        assert!(Command::new("mkswap").arg(dev).stdout(Stdio::null()).status().unwrap().success());
        assert!(Command::new("swapon").arg(dev).status().unwrap().success(), "swapon {dev}");
        self.swaps.lock().unwrap().push(dev.to_string());
    }

    /// Starts `cmd` (killed at drop) and returns its PID.
    pub fn spawn(&self, cmd: &mut Command) -> u32 {
        let child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let pid = child.id();
        self.children.lock().unwrap().push(child);
        pid
    }

    /// Kills the process `pid` started with [`Arena::spawn`] and reaps it.
    pub fn kill(&self, pid: u32) {
        let mut children = self.children.lock().unwrap();
        if let Some(i) = children.iter().position(|c| c.id() == pid) {
            let mut c = children.remove(i);
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// `chattr +i path`; cleared at drop.
    pub fn immutable(&self, path: &Path) {
        assert!(Command::new("chattr").arg("+i").arg(path).status().unwrap().success(), "chattr +i");
        self.immutable.lock().unwrap().push(path.to_path_buf());
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for c in self.children.get_mut().unwrap().iter_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for w in self.workdirs.get_mut().unwrap().iter() {
            if w.exists() {
                // Bounded: a FIFO planted where fsarena reads could block it for good.
                let mut c = fsarena();
                c.arg("cleanup").arg("--workdir").arg(w);
                let _ = play(c, Duration::from_secs(30));
            }
        }
        for dev in self.swaps.get_mut().unwrap().iter() {
            let _ = Command::new("swapoff").arg(dev).status();
        }
        // Deepest first, lazily: whatever is still mounted below the arena is ours or fsarena's.
        let mut mounts = mount_points_under(&self.root);
        mounts.sort_by_key(|m| std::cmp::Reverse(m.as_os_str().len()));
        for m in mounts {
            let _ = Command::new("umount").arg("-l").arg(&m).stderr(Stdio::null()).status();
        }
        for dev in loops_under(&self.root) {
            let _ = Command::new("losetup").args(["-d", &dev]).status();
        }
        for p in self.immutable.get_mut().unwrap().iter() {
            let _ = Command::new("chattr").arg("-i").arg(p).status();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The result of one fsarena process played with a time limit.
#[derive(Debug)]
pub struct Played {
    /// Exit status; None when it was killed for running past the limit.
    pub status: Option<ExitStatus>,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: Vec<u8>,
}

impl Played {
    /// The exit code, or a description of how it ended.
    pub fn code(&self) -> Result<i32, String> {
        match self.status {
            None => Err("hung (killed at the time limit)".into()),
            Some(s) => s.code().ok_or_else(|| format!("killed by {s}")),
        }
    }
    /// stderr as text.
    pub fn err(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// stdout as text.
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs `cmd` in a process group of its own with at most 4 GiB of address space (so a bomb
/// that fsarena accepts fails instead of exhausting the machine); after `limit` the group is
/// killed with SIGKILL.
pub fn play(cmd: Command, limit: Duration) -> Played {
    start(cmd).finish(limit)
}

/// A process started by [`start`], its output being collected.
#[derive(Debug)]
pub struct Running {
    child: Child,
    out: (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>),
    err: (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>),
}

/// Starts `cmd` as [`play`] does, without waiting.
pub fn start(mut cmd: Command) -> Running {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 4 << 30, rlim_max: 4 << 30 };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    // Another build may be replacing the binary this very moment: try again for a while.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Ok(c) => break c,
            Err(e)
                if tries < 50
                    && (e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ETXTBSY)) =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("cannot start {:?}: {e}", cmd.get_program()),
        }
    };
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    Running { child, out, err }
}

impl Running {
    /// Its PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `sig` to it (not to its group).
    pub fn signal(&self, sig: rustix::process::Signal) {
        let _ = rustix::process::kill_process(rustix::process::Pid::from_child(&self.child), sig);
    }

    /// True once it has exited (it is not reaped here).
    pub fn ended(&self) -> bool {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: waitid with WNOWAIT only peeks at the child's state; `info` is writable.
        let r = unsafe {
            libc::waitid(libc::P_PID, self.child.id(), info.as_mut_ptr(), libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)
        };
        // SAFETY: waitid filled (or zeroed) `info`; si_pid is 0 while the child runs.
        r == 0 && unsafe { info.assume_init().si_pid() } != 0
    }

    /// stderr so far.
    pub fn err_so_far(&self) -> String {
        String::from_utf8_lossy(&self.err.0.lock().unwrap()).into_owned()
    }

    /// Waits for it to end, killing its process group with SIGKILL after `limit`.
    pub fn finish(mut self, limit: Duration) -> Played {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break Some(s);
            }
            if Instant::now() > deadline {
                let _ = rustix::process::kill_process_group(
                    rustix::process::Pid::from_child(&self.child),
                    rustix::process::Signal::KILL,
                );
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Read to the end of both pipes, unless a daemon fsarena left holds them open: then
        // take what arrived within 5 s.
        let _ = wait_until(Duration::from_secs(5), || self.out.1.is_finished() && self.err.1.is_finished());
        let stdout = std::mem::take(&mut *self.out.0.lock().unwrap());
        let stderr = std::mem::take(&mut *self.err.0.lock().unwrap());
        Played { status, stdout, stderr }
    }
}

/// Polls `f` every 10 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Collects what `r` yields in a thread; the handle says when it reached the end.
fn drain(mut r: impl Read + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, std::thread::JoinHandle<()>) {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let b = Arc::clone(&buf);
    let handle = std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            b.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    });
    (buf, handle)
}

/// Problems with how a refused command spoke: raw control characters or bidi overrides in
/// stderr (a label must not rewrite the terminal), secrets, injected markers.
pub fn speech_problems(p: &Played) -> Vec<String> {
    let mut out = Vec::new();
    let err = p.err();
    let body = err.strip_suffix('\n').unwrap_or(&err);
    if let Some(c) = body.chars().find(|c| {
        c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        if c != '\n' {
            out.push(format!("stderr holds a raw control character U+{:04X}", c as u32));
        }
    }
    let all = format!("{}{}", p.out(), err);
    if all.contains(SECRET) {
        out.push("the secret file's content reached the output".into());
    }
    out
}

/// A short, escaped quote of `text` for failure reports: its start and its end.
pub fn quote(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 600 {
        return format!("{text:?}");
    }
    let head: String = chars[..200].iter().collect();
    let tail: String = chars[chars.len() - 350..].iter().collect();
    format!("{head:?} ... {tail:?}")
}
