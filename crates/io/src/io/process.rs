//! Job clones as processes, fio's default (`thread=0`): one forked child per clone.
//!
//! Each child runs the same clone loop a thread would ([`super::job::run_clone`]) and sends its
//! [`CloneResult`] back over its own pipe (histograms in their compact serde form), so the
//! parent merges exactly what threads would have given.
//!
//! Fork, not re-exec: the clone's plan (options, files, the open target root) is in memory
//! already, and a re-exec would have to rebuild it from text in every child. Forking a process
//! that has other threads (the runner's signal and progress threads) is safe only for what
//! the child does afterwards, so the child keeps to a narrow path: no stdio, no lock another
//! thread could have held at the fork (glibc's malloc re-initialises its own locks in the
//! child), only the I/O loop, a write to its pipe and `_exit` (no destructors, no atexit: the
//! parent owns every file and the target). Engines' once-per-run notices are set off in the
//! parent before the fork ([`warm_engines`]), so children inherit them as done.
//!
//! Start, stop, failure:
//! - start: a child writes one byte on its pipe when set up, then blocks reading the shared
//!   "go" pipe; the parent closes its end (EOF for all at once) when every child is ready;
//! - stop: the stop flag and the live counters the children see are in one shared anonymous
//!   mapping; the parent copies its own stop flag (Ctrl-C, or a failed child) there. Children
//!   ignore SIGINT, which the terminal sends to the whole process group: only the parent
//!   decides, and it signals only the PIDs it forked (SIGKILL, when it must give up on them);
//! - failure: a child that ends without a whole result (killed, crashed) fails the run with
//!   its job named; the others are stopped, and the parent removes the files as after any
//!   failure.

use super::job::{CloneResult, CloneSpec, Rusage};
use fsarena_core::LatencyHistogram;
use fsarena_engine::{Engine, EngineVisitor};
use fsarena_stats::IntervalCounter;
use fsarena_workload::{Live, RunEnv};
use rustix::fd::BorrowedFd;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// Where a clone waits for the others before its measured phase: a [`Barrier`] for threads,
/// the go pipe for processes.
pub(crate) trait Start {
    /// Returns when every clone of the group is set up.
    fn wait(&self);
}

impl Start for Barrier {
    fn wait(&self) {
        Barrier::wait(self);
    }
}

/// A child's side of the start: "ready" on its result pipe, then EOF on the go pipe.
struct PipeStart {
    result: i32,
    go: i32,
}

impl Start for PipeStart {
    fn wait(&self) {
        write_all(self.result, b"R");
        let mut b = [0u8; 1];
        loop {
            // SAFETY: reads into a one-byte buffer from a descriptor the child owns.
            let n = unsafe { libc::read(self.go, b.as_mut_ptr().cast(), 1) };
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return;
            }
        }
    }
}

/// Writes all of `buf` with write(2), retrying on EINTR; errors end the write (the parent
/// then sees a short result and says so).
fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: writes from a live buffer to a descriptor the child owns.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n > 0 {
            buf = &buf[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        } else {
            return;
        }
    }
}

/// What the children share with the parent: the stop flag they obey and the counters the
/// progress line reads.
struct Shared {
    /// The stage's stop (see [`super::job::Stage`]).
    stop: AtomicBool,
    live: Live,
    /// Each clone's stop, which it obeys (see [`super::job::Stage::clones`]).
    clones: [AtomicBool; MAX_STAGE_CLONES],
    /// Each clone's start of its I/O (see [`super::job::Stage::running`]).
    running: [AtomicBool; MAX_STAGE_CLONES],
    /// Clones still running per job of the stage (`wait_for`).
    left: [AtomicU32; MAX_STAGE_JOBS],
}

/// Most clones in one stonewall stage of processes (the shared mapping's size; the job-file
/// parser refuses more): fio's own limit of jobs (`REAL_MAX_JOBS`).
pub const MAX_STAGE_CLONES: usize = 4096;
/// Most jobs in one stonewall stage of processes.
pub const MAX_STAGE_JOBS: usize = 256;

/// A [`Shared`] in a MAP_SHARED anonymous mapping, so writes on either side of the fork are
/// seen on the other.
struct SharedMap {
    ptr: *mut Shared,
}

impl SharedMap {
    fn new() -> std::io::Result<Self> {
        let len = std::mem::size_of::<Shared>();
        // SAFETY: a fresh anonymous shared mapping, written once before any use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr = ptr.cast::<Shared>();
        // SAFETY: the mapping is page-aligned and large enough for a Shared.
        unsafe {
            ptr.write(Shared {
                stop: AtomicBool::new(false),
                live: Live::new(),
                clones: std::array::from_fn(|_| AtomicBool::new(false)),
                running: std::array::from_fn(|_| AtomicBool::new(false)),
                left: std::array::from_fn(|_| AtomicU32::new(0)),
            })
        };
        Ok(Self { ptr })
    }

    fn get(&self) -> &Shared {
        // SAFETY: initialised in `new`, unmapped only in Drop; only atomics are inside.
        unsafe { &*self.ptr }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), std::mem::size_of::<Shared>()) };
    }
}

/// A [`CloneResult`] as it crosses the pipe.
#[derive(Serialize, Deserialize)]
struct Wire {
    clat: [LatencyHistogram; 2],
    slat: [LatencyHistogram; 2],
    lat: [LatencyHistogram; 2],
    sync: LatencyHistogram,
    bytes: [u64; 2],
    ios: [u64; 2],
    short_ios: [u64; 2],
    series: [(u64, Vec<(u64, u64)>); 2],
    runtime_ns: u64,
    verify_ns: u64,
    verified_bytes: u64,
    verify_errors: u64,
    verify_first: Option<String>,
    written: Vec<Vec<u64>>,
    /// user, sys, ctx, majflt, minflt.
    cpu: [u64; 5],
    error: Option<(i32, String)>,
    log_error: Option<String>,
}

fn encode(r: CloneResult) -> Vec<u8> {
    let series = |c: &IntervalCounter| {
        let (i, d) = c.intervals();
        (i, d.to_vec())
    };
    let c = r.cpu;
    let wire = Wire {
        series: [series(&r.series[0]), series(&r.series[1])],
        clat: r.clat,
        slat: r.slat,
        lat: r.lat,
        sync: r.sync,
        bytes: r.bytes,
        ios: r.ios,
        short_ios: r.short_ios,
        runtime_ns: r.runtime_ns,
        verify_ns: r.verify_ns,
        verified_bytes: r.verified_bytes,
        verify_errors: r.verify_errors,
        verify_first: r.verify_first,
        written: r.written,
        cpu: [c.user_ns, c.sys_ns, c.ctx, c.majflt, c.minflt],
        error: r.error,
        log_error: r.log_error,
    };
    serde_json::to_vec(&wire).unwrap_or_default()
}

fn decode(bytes: &[u8]) -> Result<CloneResult, String> {
    let w: Wire = serde_json::from_slice(bytes).map_err(|e| format!("a garbled result ({e})"))?;
    let [s0, s1] = w.series;
    let [user_ns, sys_ns, ctx, majflt, minflt] = w.cpu;
    Ok(CloneResult {
        clat: w.clat,
        slat: w.slat,
        lat: w.lat,
        sync: w.sync,
        bytes: w.bytes,
        ios: w.ios,
        short_ios: w.short_ios,
        series: [IntervalCounter::from_intervals(s0.0, s0.1), IntervalCounter::from_intervals(s1.0, s1.1)],
        runtime_ns: w.runtime_ns,
        verify_ns: w.verify_ns,
        verified_bytes: w.verified_bytes,
        verify_errors: w.verify_errors,
        verify_first: w.verify_first,
        written: w.written,
        cpu: Rusage { user_ns, sys_ns, ctx, majflt, minflt },
        error: w.error,
        log: None,
        log_error: w.log_error,
        // Given back to its flow in the child, which shares the flows' mapping.
        flow_ios: 0,
    })
}

/// Builds and drops one engine per distinct job in the parent, before any fork: a notice an
/// engine prints once per run (libaio without direct=1) is then printed here, once, and the
/// children inherit it as printed.
fn warm_engines(specs: &[(usize, CloneSpec)]) {
    struct Warm<'a>(&'a CloneSpec);
    impl EngineVisitor for Warm<'_> {
        type Output = ();
        fn visit<E: Engine>(self) {
            let _ = E::new(&self.0.options.engine_config(self.0.align));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (ji, spec) in specs {
        if seen.insert(*ji) {
            fsarena_engine::with_engine(spec.options.ioengine, Warm(spec));
        }
    }
}

/// A forked child, from the parent's side.
struct Child {
    pid: libc::pid_t,
    pipe: OwnedFd,
}

/// A pipe, both ends close-on-exec.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("cannot create a pipe for the job processes: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors are new and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// [`pipe`] for the tests of the descriptors a job process keeps.
#[cfg(test)]
pub(super) fn pipe_for_tests() -> (OwnedFd, OwnedFd) {
    pipe().unwrap()
}

/// The child's whole life after the fork; never returns. `index` is the clone's place in the
/// stage (its flags in `shared`), `groups` every clone's reporting group.
fn child_main(
    (spec, index, groups): (&CloneSpec, usize, &[usize]),
    root: BorrowedFd<'_>,
    shared: &Shared,
    ss: Option<&super::steady::Slot>,
    flows: &super::flow::Flows,
    result: i32,
    go: i32,
) -> ! {
    fsarena_target::sys::reset_signals_after_fork();
    let body = std::panic::AssertUnwindSafe(|| {
        let start = PipeStart { result, go };
        let stage = super::job::Stage {
            stop: &shared.stop,
            left: &shared.left,
            flows,
            clones: &shared.clones[..groups.len()],
            groups,
            running: &shared.running[..groups.len()],
        };
        let stop = &shared.clones[index];
        let run = super::CloneRun { spec, root, start: &start, stop, stage: &stage, live: &shared.live, ss };
        encode(fsarena_engine::with_engine_mode(spec.options.ioengine, spec.options.offload, run))
    });
    let code = match std::panic::catch_unwind(body) {
        Ok(bytes) => {
            write_all(result, &(bytes.len() as u64).to_le_bytes());
            write_all(result, &bytes);
            0
        }
        Err(_) => 101,
    };
    // SAFETY: _exit ends the child without running the parent's destructors or atexit.
    unsafe { libc::_exit(code) }
}

/// How a child ended, as a sentence after "job 'x' (process N) ".
fn describe_exit(pid: libc::pid_t) -> Option<String> {
    let mut status = 0;
    loop {
        // SAFETY: waits for a child this process forked.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Some("could not be waited for".into());
    }
    if libc::WIFSIGNALED(status) {
        Some(format!("was killed by signal {}", libc::WTERMSIG(status)))
    } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        Some(format!("exited with status {}", libc::WEXITSTATUS(status)))
    } else {
        None
    }
}

/// Reads a child's pipe: the ready byte (counted in `ready`), then the length-prefixed
/// result. `failed` is raised as soon as the child is known to have ended without one.
fn read_child(pipe: &OwnedFd, ready: &AtomicUsize, failed: &AtomicBool) -> Option<Vec<u8>> {
    let mut f = std::fs::File::from(pipe.try_clone().ok()?);
    let mut r = [0u8; 1];
    let got = (|| {
        f.read_exact(&mut r).ok()?;
        ready.fetch_add(1, Ordering::SeqCst);
        let mut len = [0u8; 8];
        f.read_exact(&mut len).ok()?;
        let mut body = vec![0u8; u64::from_le_bytes(len) as usize];
        f.read_exact(&mut body).ok()?;
        Some(body)
    })();
    if got.is_none() {
        if r[0] != b'R' {
            // Died before it was ready: count it so the others are not held at the start.
            ready.fetch_add(1, Ordering::SeqCst);
        }
        failed.store(true, Ordering::SeqCst);
    }
    got
}

/// Each clone with its job's index and its client's root, in `specs` order; an error if a
/// clone names a client `roots` does not have (plan_group never makes one).
pub(super) fn placed<'a, 'fd>(
    roots: &[BorrowedFd<'fd>],
    specs: &'a [(usize, CloneSpec)],
) -> Result<Vec<(usize, &'a CloneSpec, BorrowedFd<'fd>)>, String> {
    specs
        .iter()
        .map(|(ji, spec)| match roots.get(spec.client) {
            Some(root) => Ok((*ji, spec, *root)),
            None => Err(format!("job '{}' has no client {}", spec.options.name, spec.client + 1)),
        })
        .collect()
}

/// Runs the group's clones in forked processes and returns their results in `specs` order,
/// or the first failure (a child that did not end with a result), naming its job. Each
/// clone works in its client's root (`roots[spec.client]`).
pub(super) fn run_clones(
    env: &RunEnv<'_>,
    roots: &[BorrowedFd<'_>],
    specs: &[(usize, CloneSpec)],
    watch: Option<&super::steady::Watch>,
    flows: &super::flow::Flows,
) -> Result<Vec<CloneResult>, String> {
    let placed = placed(roots, specs)?;
    let (clones, left) = super::stage_flags(specs);
    if clones.len() > MAX_STAGE_CLONES || left.len() > MAX_STAGE_JOBS {
        return Err(format!(
            "a stage of job processes has {} clones and {} jobs: at most {MAX_STAGE_CLONES} and {MAX_STAGE_JOBS} (put a stonewall between them)",
            clones.len(),
            left.len()
        ));
    }
    let groups: Vec<usize> = specs.iter().map(|(_, s)| s.report_group).collect();
    let map = SharedMap::new().map_err(|e| format!("cannot share memory with the job processes: {e}"))?;
    let shared = map.get();
    for (mine, count) in shared.left.iter().zip(&left) {
        mine.store(count.load(Ordering::SeqCst), Ordering::SeqCst);
    }
    warm_engines(specs);
    let (go_r, go_w) = pipe()?;
    let mut children: Vec<Child> = Vec::with_capacity(specs.len());
    let mut fork_error = None;
    // Nothing buffered may be written twice: the children inherit stdio buffers.
    let _ = std::io::stdout().flush();
    for (i, &(_, spec, root)) in placed.iter().enumerate() {
        let (r, w) = match pipe() {
            Ok(p) => p,
            Err(e) => {
                fork_error = Some(e);
                break;
            }
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: see the module documentation: the child runs `child_main` only.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // A child must not outlive fsarena: killed with it (SIGKILL of the parent, a second
            // Ctrl-C), it would go on writing into a target being torn down and hold the work
            // directory's lock, so `fsarena cleanup` could not run. The check after the prctl
            // covers a parent that died before it.
            // SAFETY: prctl, getppid, close and _exit have no preconditions here.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            // Another run's pipes (two runs in one process: the tests, a suite's steps) and
            // this run's far ends: a child holding the write end of another run's start pipe
            // would keep that run's children from ever seeing its EOF, and they this one's.
            fsarena_target::sys::close_all_but([root.as_raw_fd(), w.as_raw_fd(), go_r.as_raw_fd()]);
            let ss = watch.and_then(|w| w.slot(i));
            child_main((spec, i, &groups), root, shared, ss, flows, w.as_raw_fd(), go_r.as_raw_fd());
        }
        if pid < 0 {
            fork_error = Some(format!(
                "cannot start a process for job '{}': {}",
                spec.options.name,
                std::io::Error::last_os_error()
            ));
            break;
        }
        // The parent's copy of the write end goes now, so that the pipe ends with the child.
        drop(w);
        children.push(Child { pid, pipe: r });
    }
    if fork_error.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    let ready = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut go = Some(go_w);
    let bodies: Vec<Option<Vec<u8>>> = std::thread::scope(|s| {
        let readers: Vec<_> = children.iter().map(|c| s.spawn(|| read_child(&c.pipe, &ready, &failed))).collect();
        let mut seen = (0u64, 0u64);
        loop {
            if env.stop.load(Ordering::Relaxed) || failed.load(Ordering::SeqCst) {
                shared.stop.store(true, Ordering::SeqCst);
            }
            if shared.stop.load(Ordering::SeqCst) {
                shared.clones.iter().for_each(|c| c.store(true, Ordering::SeqCst));
            }
            if go.is_some() && ready.load(Ordering::SeqCst) >= children.len() {
                // EOF on the go pipe starts every child at once.
                go = None;
            }
            if let Some(w) = watch {
                w.poll();
            }
            let now = shared.live.sample();
            env.live.add(now.ops - seen.0, now.bytes - seen.1);
            seen = (now.ops, now.bytes);
            // fio's main loop: reaps the ended jobs, their flows' shares among them, every 10 ms.
            flows.reap();
            if readers.iter().all(|h| h.is_finished()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        flows.reap();
        readers.into_iter().map(|h| h.join().ok().flatten()).collect()
    });
    drop(go);
    let mut results = Vec::with_capacity(children.len());
    let mut failure = fork_error;
    for ((child, body), (_, spec)) in children.iter().zip(bodies).zip(specs) {
        let exit = describe_exit(child.pid);
        let what = |why: String| format!("job '{}' (process {}) {why}", spec.options.name, child.pid);
        match (body.map(|b| decode(&b)), exit) {
            (Some(Ok(r)), None) => results.push(r),
            (_, Some(why)) => {
                failure.get_or_insert(what(why));
            }
            (Some(Err(e)), None) => {
                failure.get_or_insert(what(format!("sent {e}")));
            }
            (None, None) => {
                failure.get_or_insert(what("ended without a result".into()));
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(results),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_result_crosses_the_pipe_whole() {
        let mut series = [IntervalCounter::new(1_000_000_000, 4), IntervalCounter::new(1_000_000_000, 4)];
        for t in 0..5u64 {
            series[1].add(t * 600_000_000, 4096);
        }
        let make = || CloneResult {
            clat: [LatencyHistogram::of([100, 2_000, 3_000_000]), LatencyHistogram::of([7, 8_000_000_000])],
            slat: [LatencyHistogram::of([10, 20, 30]), LatencyHistogram::new()],
            lat: [LatencyHistogram::of([110, 2_020, 3_000_030]), LatencyHistogram::new()],
            sync: LatencyHistogram::of([55_000]),
            bytes: [3 * 4096, 2 * 8192],
            ios: [3, 2],
            short_ios: [1, 0],
            series: series.clone(),
            runtime_ns: 2_400_000_000,
            verify_ns: 9,
            verified_bytes: 8192,
            verify_errors: 1,
            verify_first: Some("verify failed at offset 4096".into()),
            written: vec![vec![0b101, 7]],
            cpu: Rusage { user_ns: 1, sys_ns: 2, ctx: 3, majflt: 4, minflt: 5 },
            error: Some((5, "EIO at 4096".into())),
            log: None,
            log_error: Some("cannot write the log x_bw.1.log: No space left on device".into()),
            flow_ios: 0,
        };
        let r = make();
        let back = decode(&encode(make())).unwrap();
        for d in 0..2 {
            assert_eq!(back.clat[d].len(), r.clat[d].len());
            assert_eq!(back.clat[d].percentile(50.0), r.clat[d].percentile(50.0));
            assert_eq!((back.clat[d].min(), back.clat[d].max()), (r.clat[d].min(), r.clat[d].max()));
            assert_eq!(back.series[d].per_second(), r.series[d].per_second());
        }
        assert_eq!((back.slat, back.lat), (r.slat.clone(), r.lat.clone()));
        assert_eq!(back.sync.mean(), r.sync.mean());
        assert_eq!((back.bytes, back.ios, back.short_ios), (r.bytes, r.ios, r.short_ios));
        assert_eq!(
            (back.verified_bytes, back.verify_errors, &back.verify_first, &back.written),
            (r.verified_bytes, r.verify_errors, &r.verify_first, &r.written)
        );
        assert_eq!((back.runtime_ns, back.verify_ns, back.cpu.minflt), (r.runtime_ns, r.verify_ns, 5));
        assert_eq!((back.error, back.log_error), (r.error, r.log_error));
        assert!(decode(b"{\"clat\":").unwrap_err().contains("garbled"));
    }
}
