//! The loops of fio's engines that move no data (`FIO_NOIO`): `cpuio` burns CPU, `exec` runs
//! a program. fio runs them through its I/O loop, each "I/O" a call of the engine's queue
//! hook followed by a thinktime the engine sets itself; each is counted as a read of no bytes
//! whose latency is the time the hook took. This does the same, so the job's JSON has fio's
//! figures: zero bytes, one read per chunk, the chunk times as completion latency, and the
//! thread's CPU use (usr_cpu, sys_cpu) over the job's run.

use super::job::{CloneResult, CloneSpec, READ};
use super::options::IoOptions;
use rustix::fd::{AsRawFd, BorrowedFd};
use rustix::fs::{Mode, OFlags};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// fio's `cpumode=`: what a chunk of `cpuio` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// Spins on the clock for `cpuchunks` microseconds (fio's default).
    #[default]
    Noop,
    /// Sorts 256 Ki integers four times (fio's qsort mode); the chunk is what that took.
    Qsort,
}

/// fio's `cpuio` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuOptions {
    /// `cpuload=`: the percent of one CPU to use (above 100 counts as 100, as in fio).
    pub load: u32,
    /// `cpumode=`.
    pub mode: CpuMode,
    /// `cpuchunks=`: microseconds of each burn (noop; qsort measures its own).
    pub chunk_us: u64,
    /// `exit_on_io_done=`.
    pub exit_on_io_done: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        Self { load: 0, mode: CpuMode::Noop, chunk_us: 50_000, exit_on_io_done: false }
    }
}

/// fio's `exec` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOptions {
    /// `program=`: run by exec (searched in PATH when it has no '/'), never through a shell.
    pub program: Option<String>,
    /// `arguments=`: split on spaces, after `%r` and `%n` are expanded.
    pub arguments: Option<String>,
    /// `grace_time=`: seconds between SIGTERM and SIGKILL.
    pub grace_time: u64,
    /// `std_redirect=`: the program's stdout and stderr go to `NAME.stdout` and `NAME.stderr`.
    pub std_redirect: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        Self { program: None, arguments: None, grace_time: 1, std_redirect: true }
    }
}

/// The pause after each chunk, in microseconds, so that a chunk of `chunk_us` is `load`
/// percent of chunk plus pause (fio's cpuio thinktime): `chunk * (100 - load) / load`. A load
/// of 0 is refused before a job runs; above 100 counts as 100.
pub fn think_us(chunk_us: u64, load: u32) -> u64 {
    let load = u64::from(load.clamp(1, 100));
    chunk_us * (100 - load) / load
}

/// The program's argv: `program` then `arguments` with `%r` (the runtime in whole seconds)
/// and `%n` (the job's name) expanded, split on spaces as fio splits them (no quoting: a
/// shell is never involved).
pub fn exec_argv(program: &str, arguments: Option<&str>, runtime_s: u64, name: &str) -> Vec<String> {
    let mut argv = vec![program.to_string()];
    if let Some(a) = arguments {
        let expanded = a.replace("%r", &runtime_s.to_string()).replace("%n", name);
        argv.extend(expanded.split(' ').filter(|w| !w.is_empty()).map(str::to_string));
    }
    argv
}

/// Records one "I/O" of no bytes that took `lat_ns`, `at_ns` after the job started.
fn record(r: &mut CloneResult, lat_ns: u64, at_ns: u64) {
    r.clat[READ].record(lat_ns);
    r.ios[READ] += 1;
    r.series[READ].add(at_ns, 0);
}

/// Sleeps `d`, or less when the job is stopped meanwhile or its deadline comes.
fn pause(d: Duration, deadline: Instant, stop: &AtomicBool) {
    let end = (Instant::now() + d).min(deadline);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        // In steps of at most 100 ms: a stopped job ends soon, and a pause costs few wake-ups.
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
}

/// How long the job runs: its runtime after its ramp (validation makes sure it has one).
fn run_for(o: &IoOptions) -> Duration {
    Duration::from_nanos(o.runtime.map_or(0, |r| r.0).saturating_add(o.ramp_time.0))
}

/// fio's cpuio: burn a chunk, pause, until the runtime is over or, with exit_on_io_done,
/// until every clone of the jobs in `spec.ends_with` has ended (`left` counts them per job),
/// checked before each chunk as fio checks before each of its I/Os.
pub(super) fn cpuio(spec: &CloneSpec, stop: &AtomicBool, left: &[AtomicU32], r: &mut CloneResult) {
    let io_done = || {
        spec.ends_with
            .as_ref()
            .is_some_and(|jobs| jobs.iter().all(|&j| left.get(j).is_none_or(|l| l.load(Ordering::SeqCst) == 0)))
    };
    let c = spec.options.cpu;
    let start = Instant::now();
    let deadline = start + run_for(&spec.options);
    let mut chunk_us = c.chunk_us;
    let mut sorter = (c.mode == CpuMode::Qsort).then(Sorter::new);
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline && !io_done() {
        let t = Instant::now();
        match &mut sorter {
            None => {
                let end = t + Duration::from_micros(chunk_us);
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
            }
            Some(s) => {
                s.run();
                // As fio: the next pause follows from how long this sort took.
                chunk_us = t.elapsed().as_micros() as u64;
            }
        }
        let lat = t.elapsed().as_nanos() as u64;
        record(r, lat, t.duration_since(start).as_nanos() as u64);
        pause(Duration::from_micros(think_us(chunk_us, c.load)), deadline, stop);
    }
    r.runtime_ns = start.elapsed().as_nanos() as u64;
}

/// fio's qsort mode: 256 Ki integers from a multiply-with-carry generator (fio's seed),
/// sorted up, down, by byte, and down again.
struct Sorter {
    data: Vec<i32>,
    bytes: Vec<u8>,
}

impl Sorter {
    const LEN: usize = 256 << 10;

    fn new() -> Self {
        let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
        let data = (0..Self::LEN)
            .map(|_| {
                z = 36969u32.wrapping_mul(z & 65535).wrapping_add(z >> 16);
                w = 18000u32.wrapping_mul(w & 65535).wrapping_add(w >> 16);
                (z << 16).wrapping_add(w) as i32
            })
            .collect();
        Self { data, bytes: vec![0; Self::LEN * 4] }
    }

    fn run(&mut self) {
        self.data.sort_unstable();
        self.data.sort_unstable_by(|a, b| b.cmp(a));
        for (out, v) in self.bytes.chunks_exact_mut(4).zip(&self.data) {
            out.copy_from_slice(&v.to_ne_bytes());
        }
        // fio compares them as signed bytes.
        self.bytes.sort_unstable_by_key(|b| *b as i8);
        for (v, b) in self.data.iter_mut().zip(self.bytes.chunks_exact(4)) {
            *v = i32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        }
        self.data.sort_unstable_by(|a, b| b.cmp(a));
    }
}

/// Where the program's output goes: `NAME.stdout` or `NAME.stderr` in the target's root,
/// created there (never through a link) and truncated, as fio creates them in its working
/// directory.
fn output_file(root: BorrowedFd<'_>, name: &str) -> std::io::Result<std::fs::File> {
    let fd = rustix::fs::openat(
        root,
        name,
        OFlags::CREATE | OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    Ok(std::fs::File::from(fd))
}

/// fio's exec: start the program, look every 50 ms (and pause 50 ms, fio's thinktime for it)
/// whether the runtime is over, then SIGTERM it, wait `grace_time`, and SIGKILL it. The
/// program is a command of the job file's author, run as the user fsarena runs as.
pub(super) fn exec(spec: &CloneSpec, root: BorrowedFd<'_>, stop: &AtomicBool, r: &mut CloneResult) {
    let o = &spec.options;
    let e = &o.exec;
    let Some(program) = e.program.as_deref() else { return };
    let runtime = run_for(o);
    let argv = exec_argv(program, e.arguments.as_deref(), o.runtime.map_or(0, |r| r.0) / 1_000_000_000, &o.name);
    let start = Instant::now();
    let deadline = start + runtime;
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(std::process::Stdio::null());
    // The program runs in the target's root, where its relative paths land; the fd is still
    // open in the child when it changes directory, before exec.
    cmd.current_dir(format!("/proc/self/fd/{}", root.as_raw_fd()));
    if e.std_redirect {
        let files = output_file(root, &format!("{}.stdout", o.name))
            .and_then(|out| output_file(root, &format!("{}.stderr", o.name)).map(|err| (out, err)));
        match files {
            Ok((out, err)) => {
                cmd.stdout(out).stderr(err);
            }
            Err(err) => {
                r.error = Some((
                    err.raw_os_error().unwrap_or(libc::EIO),
                    format!("exec: cannot create {}.stdout/.stderr in the target: {err}", o.name),
                ));
                return;
            }
        }
    } else {
        // Not fsarena's stdout, which may carry the report: the program's output goes to
        // fsarena's stderr.
        cmd.stdout(std::io::stderr()).stderr(std::io::stderr());
    }
    let t = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(err) => {
            r.error = Some((err.raw_os_error().unwrap_or(libc::EIO), format!("exec: cannot run {program}: {err}")));
            return;
        }
    };
    record(r, t.elapsed().as_nanos() as u64, 0);
    let poll = Duration::from_millis(50);
    pause(poll, deadline, stop);
    let mut termed = false;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let t = Instant::now();
        std::thread::sleep(poll);
        if start.elapsed() > runtime {
            terminate(&mut child, e.grace_time);
            termed = true;
        }
        record(r, t.elapsed().as_nanos() as u64, t.duration_since(start).as_nanos() as u64);
        pause(poll, deadline, stop);
    }
    // The runtime ended (or the job was stopped) between two looks: the program gets its
    // SIGTERM and grace now, as it does at fio's last look.
    if !termed {
        let t = Instant::now();
        terminate(&mut child, e.grace_time);
        record(r, t.elapsed().as_nanos() as u64, t.duration_since(start).as_nanos() as u64);
    }
    // fio's cleanup: SIGKILL, whatever the program did with its SIGTERM; then reaped.
    let _ = child.kill();
    let _ = child.wait();
    r.runtime_ns = start.elapsed().as_nanos() as u64;
}

/// SIGTERM to the program if it still runs, then `grace_s` seconds: the whole grace, as fio
/// sleeps it, so the job's runtime is fio's (runtime plus grace) whatever the program does.
fn terminate(child: &mut std::process::Child, grace_s: u64) {
    if matches!(child.try_wait(), Ok(None)) {
        if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }
    std::thread::sleep(Duration::from_secs(grace_s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duty_cycle_pause_makes_the_load() {
        // 50 %: a pause as long as the chunk.
        assert_eq!(think_us(50_000, 50), 50_000);
        // 25 %: three chunks of pause per chunk of burn.
        assert_eq!(think_us(50_000, 25), 150_000);
        assert_eq!(think_us(10_000, 75), 3_333);
        // Full load pauses not at all; above 100 counts as 100, as fio clamps it.
        assert_eq!(think_us(50_000, 100), 0);
        assert_eq!(think_us(50_000, 150), 0);
        // The share of time burning is the load, for every load.
        for load in 1..=100u32 {
            let chunk = 100_000u64;
            let busy = chunk as f64 / (chunk + think_us(chunk, load)) as f64;
            assert!((busy - f64::from(load) / 100.0).abs() < 0.001, "load {load}: {busy}");
        }
    }

    #[test]
    fn argv_expands_runtime_and_name_and_splits_on_spaces() {
        assert_eq!(exec_argv("/usr/bin/sleep", Some("%r"), 10, "j"), ["/usr/bin/sleep", "10"]);
        assert_eq!(exec_argv("echo", Some("  %n ran %r s "), 3, "job1"), ["echo", "job1", "ran", "3", "s"]);
        assert_eq!(exec_argv("true", None, 3, "j"), ["true"]);
        // No shell: quotes and metacharacters are plain words.
        assert_eq!(exec_argv("echo", Some("'a b' ;x"), 1, "j"), ["echo", "'a", "b'", ";x"]);
    }

    #[test]
    fn qsort_mode_sorts_fios_data() {
        let mut s = Sorter::new();
        assert_eq!(s.data.len(), 256 << 10);
        s.run();
        assert!(s.data.windows(2).all(|w| w[0] >= w[1]));
    }
}
