//! Helpers shared by the integration tests: run the binary, scratch directories on real
//! filesystems, and the reference tools.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long any command a test runs may take. A hung tool fails its test here, naming the
/// command, instead of holding the whole suite until CI's own limit (fio 3.33 sleeps for ever
/// when a thinktime spin overruns the pause, axboe/fio#1588: that hung a CI run for 90
/// minutes). The longest single command of the suite, the demo of every suite, takes a few
/// minutes under CI's load.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(900);

/// `Command::output` with [`COMMAND_LIMIT`]: stdin is null and stdout and stderr are captured,
/// as `output` does (also when the caller set them: a test that gives its own stdout uses std's
/// `output`). At the limit the command is sent SIGTERM (fsarena tears down on it),
/// then SIGKILL 30 s later, and the test panics naming it.
pub trait Bounded {
    fn bounded_output(&mut self) -> std::io::Result<Output> {
        self.output_within(COMMAND_LIMIT)
    }
    /// Panics when the command does not end within `limit`.
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output>;
    /// `None` when the command did not end within `limit` (it was ended).
    fn try_output_within(&mut self, limit: Duration) -> std::io::Result<Option<Output>>;
}

impl Bounded for Command {
    fn output_within(&mut self, limit: Duration) -> std::io::Result<Output> {
        match self.try_output_within(limit)? {
            Some(out) => Ok(out),
            None => panic!("{self:?} did not end within {} s: ended it", limit.as_secs()),
        }
    }

    fn try_output_within(&mut self, limit: Duration) -> std::io::Result<Option<Output>> {
        use std::io::Read;
        // In a process group of its own, so that what it forked ends with it.
        use std::os::unix::process::CommandExt;
        let mut child =
            self.process_group(0).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        // The group this test started (its leader's PID), and only it.
        let group = format!("-{}", child.id());
        // fio's job processes leave the group (setsid in backend.c) and outlive a fio whose
        // main process alone is ended, holding their files: they are found by their parent
        // while it still lives, and ended too.
        let mut forked: Vec<(u32, u64)> = Vec::new();
        // Read both pipes to their end meanwhile, so that a chatty child never blocks on a
        // full pipe.
        let drain = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.read_to_end(&mut buf);
                buf
            })
        };
        let out = drain(Box::new(child.stdout.take().expect("piped")));
        let err = drain(Box::new(child.stderr.take().expect("piped")));
        let started = Instant::now();
        let mut term_sent: Option<Instant> = None;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            match term_sent {
                None if started.elapsed() > limit => {
                    forked = descendants(child.id());
                    let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
                    term_sent = Some(Instant::now());
                }
                Some(at) if at.elapsed() > Duration::from_secs(30) => {
                    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                    let _ = child.wait();
                    kill_still(&forked);
                    return Ok(None);
                }
                _ => {}
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if term_sent.is_some() {
            // The leader ended on SIGTERM; what it forked may not have.
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            kill_still(&forked);
            return Ok(None);
        }
        let stdout = out.join().expect("stdout reader");
        let stderr = err.join().expect("stderr reader");
        Ok(Some(Output { status, stdout, stderr }))
    }
}

/// A process's parent and start time (in clock ticks since boot), from /proc/PID/stat.
fn parent_and_start(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command's `(...)`, which may itself hold spaces and parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    Some((fields.get(1)?.parse().ok()?, fields.get(19)?.parse().ok()?))
}

/// Every process `pid` started and those they started, with their start times, now.
fn descendants(pid: u32) -> Vec<(u32, u64)> {
    let all: Vec<(u32, u32, u64)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| parent_and_start(p).map(|(parent, start)| (p, parent, start)))
        .collect();
    let mut found: Vec<(u32, u64)> = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for &(p, pp, start) in &all {
            if pp == parent && !found.iter().any(|f| f.0 == p) {
                found.push((p, start));
                parents.push(p);
            }
        }
    }
    found
}

/// SIGKILL to each of `procs` that is still the process found (same PID, same start time).
fn kill_still(procs: &[(u32, u64)]) {
    for &(pid, start) in procs {
        if parent_and_start(pid).is_some_and(|(_, now)| now == start) {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// The reference fio for the job file `text`: `fio`, or, for a job that offloads its
/// submissions (`io_submit_mode=offload`), fio on one CPU at a real-time priority.
///
/// fio 3.33 starts each offload worker and then marks it idle, overwriting the worker's own
/// "running" flag if the worker got there first; the job then waits for ever for its workers
/// (fixed upstream in 736c2015, "workqueue: fix threads stall"). That needs the starting
/// thread to be preempted right after `pthread_create`: on this machine 2 runs of 30 when
/// idle, 25 of 30 beside 4 busy loops (the test suite's load), where retrying cannot help. On
/// one CPU under `SCHED_FIFO` no new thread and no other task preempts it: 0 of 30 beside the
/// same busy loops. The corpus compares what fio did, not its timing, so this costs nothing.
pub fn reference_fio(text: &str) -> Command {
    let fio = require("fio");
    let offload = text.lines().any(|l| {
        let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        l.starts_with("io_submit_mode=offload")
    });
    if !offload {
        return Command::new(fio);
    }
    // The first CPU this process may run on (a container may not allow CPU 0).
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).expect("Cpus_allowed_list");
    let first = cpus.trim().split([',', '-']).next().unwrap_or("0").to_string();
    let mut c = Command::new(require("chrt"));
    c.args(["--fifo", "1"]).arg(require("taskset")).args(["--cpu-list", &first]).arg(fio);
    c
}

/// Runs the reference fio command `make` builds, again when fio hangs: a thinktime spin
/// descheduled past the pause sleeps for ever (axboe/fio#1588), and so may fio 3.33's
/// `io_submit_mode=offload` when not run as [`reference_fio`] runs it. Three hung attempts
/// in a row fail the test.
pub fn fio_output(make: impl Fn() -> Command) -> Output {
    const FIO_LIMIT: Duration = Duration::from_secs(60);
    for attempt in 1..=3 {
        let mut cmd = make();
        if let Some(out) = cmd.try_output_within(FIO_LIMIT).expect("fio runs") {
            return out;
        }
        eprintln!("{cmd:?}: fio hung ({attempt} of 3), ended it");
    }
    panic!("fio hung three times in a row");
}

#[test]
#[should_panic(expected = "did not end within 1 s")]
fn a_command_past_its_limit_is_ended_and_named() {
    let _ = Command::new("sleep").arg("600").output_within(Duration::from_secs(1));
}

#[test]
fn a_command_past_its_limit_is_ended_with_what_it_forked() {
    // A leader that ends on SIGTERM and a child in a session of its own that ignores it, as
    // fio's job processes are.
    let dir = TempDir::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let pid_file = format!("{}/child.pid", dir.0);
    let script = format!("setsid sh -c 'trap \"\" TERM; echo $$ > {pid_file}; while :; do sleep 1; done' & wait");
    let out = Command::new("sh").args(["-c", &script]).try_output_within(Duration::from_secs(1)).unwrap();
    assert!(out.is_none(), "the command was ended");
    let child = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    // A killed child is reaped by init: give it a moment to leave the process table.
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !Path::new(&format!("/proc/{child}")).exists()
    });
    assert!(gone, "the forked child {child} outlived the command");
}

#[test]
fn a_command_within_its_limit_gives_its_output() {
    let out = Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]).bounded_output().unwrap();
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice(), out.status.code()),
        (&b"out\n"[..], &b"err\n"[..], Some(3))
    );
}

/// The fsarena binary under test. Its default results database points where nothing can be
/// created, so a test that stores must say where (`--db`) or not store (`--no-store`): tests
/// never touch the user's database and leave none behind.
pub fn fsarena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fsarena"));
    c.env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here");
    c
}

/// Runs fsarena with `args`, in a scratch directory of its own that is removed afterwards: a
/// `run` without `--workdir` gets its work directory there (so that tests running in parallel
/// do not wait on each other's lock), and a `run` without `--db` or `--no-store` its results
/// database. Unless a test asks for repetitions, a run measures once with no warm-up, to keep
/// the suite fast; the repetition tests pass --repeat and --warmup themselves.
pub fn run(args: &[&str]) -> Output {
    let scratch = TempDir::new();
    let mut cmd = fsarena();
    cmd.args(args);
    if args.first() == Some(&"run") {
        if !args.contains(&"--repeat") {
            cmd.args(["--repeat", "1", "--warmup", "0"]);
        }
        if !args.contains(&"--workdir") {
            cmd.args(["--workdir", &format!("{}/work", scratch.0)]);
        }
        if !args.contains(&"--db") && !args.contains(&"--no-store") {
            cmd.env("XDG_DATA_HOME", format!("{}/data", scratch.0));
        }
    }
    cmd.bounded_output().expect("fsarena runs")
}

/// A fresh directory path under /var/tmp, removed (with what is in it) on drop.
pub struct TempDir(pub String);

impl TempDir {
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self(format!("/var/tmp/fsarena-test-wd-{}-{n}", std::process::id()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // A run killed with SIGKILL in it as its work directory leaves what its state file
        // records (a `dir:` target's bind mount among them): `fsarena cleanup` undoes that
        // first, or removing the directory would stop at a mount point.
        let killed = std::fs::read_dir(&self.0)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("state-"));
        if killed {
            let _ = fsarena().args(["cleanup", "--workdir", &self.0]).bounded_output();
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// stdout as a string.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as a string.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory removed on drop, on tmpfs (/dev/shm) unless `base` says otherwise.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        Self::under("/dev/shm", name)
    }
    pub fn under(base: &str, name: &str) -> Self {
        let path = PathBuf::from(base).join(format!("fsarena-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("scratch dir");
        Self { path }
    }
    pub fn spec(&self) -> String {
        format!("dir:path={}", self.path.display())
    }
    /// Everything left inside, recursively.
    pub fn leftovers(&self) -> Vec<PathBuf> {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                out.push(e.path());
                if e.path().is_dir() {
                    walk(&e.path(), out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.path, &mut out);
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A small tmpfs mounted for one test (needs root), unmounted on drop.
pub struct SmallTmpfs {
    pub dir: Scratch,
}

impl SmallTmpfs {
    pub fn new(name: &str, size: &str) -> Self {
        Self::mount(name, "tmpfs", &format!("size={size}"))
    }

    /// A mount of `fstype` (e.g. ramfs, which has no O_DIRECT) with `options`.
    pub fn mount(name: &str, fstype: &str, options: &str) -> Self {
        let dir = Scratch::under("/tmp", name);
        let mut cmd = Command::new("mount");
        cmd.args(["-t", fstype]);
        if !options.is_empty() {
            cmd.args(["-o", options]);
        }
        let ok = cmd.args(["fsarena-test", dir.path.to_str().expect("utf-8")]).status().expect("mount runs").success();
        assert!(ok, "mounting a {fstype} failed: these tests run as root (sudo make test)");
        Self { dir }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir.path).status();
    }
}

/// The path of a reference tool; a missing tool fails the test, never skips it.
pub fn require(tool: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(tool))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| panic!("{tool} is missing: `make test` installs it (apt-get install {tool})"))
}

/// Parses JSON output.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

/// A work directory of fsarena's own for one test (`--workdir`), checked empty and removed
/// on drop.
pub struct TestWorkdir {
    pub path: PathBuf,
}

impl TestWorkdir {
    pub fn new(name: &str) -> Self {
        let path = PathBuf::from(format!("/var/tmp/fsarena-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Self { path }
    }
    pub fn arg(&self) -> String {
        self.path.display().to_string()
    }
    /// What fsarena left: mounts under the directory, loop devices backed by files in it,
    /// and files in it.
    pub fn leftovers(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in mountinfo.lines() {
            if let Some(mp) = line.split(' ').nth(4) {
                if mp.starts_with(&self.arg()) {
                    out.push(format!("mount {mp}"));
                }
            }
        }
        for e in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
            if backing.starts_with(&self.arg()) {
                out.push(format!("loop {} -> {}", e.file_name().to_string_lossy(), backing.trim()));
            }
        }
        for e in std::fs::read_dir(&self.path).into_iter().flatten().flatten() {
            out.push(format!("file {}", e.path().display()));
        }
        // A FUSE daemon started on one of our images.
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(&self.arg()) && !cmdline.contains("fsarena") && !cmdline.contains("cargo") {
                out.push(format!("process {} {cmdline}", e.file_name().to_string_lossy()));
            }
        }
        out
    }
}

impl Drop for TestWorkdir {
    fn drop(&mut self) {
        let _ =
            Command::new(env!("CARGO_BIN_EXE_fsarena")).args(["cleanup", "--workdir", &self.arg()]).bounded_output();
        // Targets a test left held by `fsarena up --detach`.
        let _ = Command::new(env!("CARGO_BIN_EXE_fsarena")).args(["down", "--workdir", &self.arg()]).bounded_output();
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Waits until something is mounted under `dir` (a run reached its measured phase), up to 60 s.
pub fn wait_for_mount_under(dir: &Path) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mounted =
            mountinfo.lines().any(|l| l.split(' ').nth(4).is_some_and(|mp| mp.starts_with(&dir.display().to_string())));
        // And recorded: a mount is written to the state file once mount(8) has made it, so a
        // kill between the two leaves it unrecorded (a window every kind has, not the
        // subject of the tests that wait here).
        let recorded = std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("state-")
                && std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"mount\""))
        });
        if mounted && recorded {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

/// The DOM Debian's headless Chromium renders from the HTML file `page` (`--dump-dom`),
/// failing the test if Chromium is missing or takes over two minutes.
pub fn chromium_dom(page: &Path) -> String {
    let chromium = require("chromium");
    let profile = TempDir::new();
    let mut child = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"])
        .args(["--disable-component-update", "--disable-sync", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.0))
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Read stdout while waiting: a DOM larger than the pipe buffer would block Chromium.
    let mut pipe = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
        s
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 2 minutes on {}", page.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// `program` run under `wrap` (a command and its arguments before the program's), or alone.
pub fn wrapped(wrap: &[&str], program: impl AsRef<std::ffi::OsStr>) -> Command {
    match wrap.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// `fsarena run --fio FILE` of the job file text `job` on target `target`, once, with the
/// report as fio-json on stdout and nothing stored; under `wrap` (a command and its
/// arguments, e.g. strace's) when given. The job file and work directory go under `work`.
pub fn run_fio_text(work: &std::path::Path, target: &str, job: &str, wrap: &[&str]) -> std::process::Output {
    let file = work.join("job.fio");
    std::fs::write(&file, job).expect("job file");
    wrapped(wrap, env!("CARGO_BIN_EXE_fsarena"))
        .env("XDG_DATA_HOME", "/proc/fsarena-tests-store-nothing-here")
        .args(["run", "--no-store", "--repeat", "1", "--warmup", "0", "--output-format", "fio-json", "--workdir"])
        .arg(work.join("wd"))
        .args(["--target", target, "--fio"])
        .arg(&file)
        .bounded_output()
        .expect("fsarena runs")
}
