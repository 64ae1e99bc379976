//! The fs_mark-class `tree` workload: trees of small files, created with their data (and
//! optionally synced), then deleted; files/s and directories/s created, bytes/s written,
//! files/s deleted, and create and delete latencies.
//!
//! Every thread has a tree of its own (`fsarena-tree/t<N>`, as fs_mark gives each thread its
//! own directory). One pass per file size: the threads make their directories, then create
//! and write their files (`loops` times, each loop adding new files beside the kept ones, as
//! fs_mark's `-L`), then delete the files, then the directories, all starting each step
//! together. A step's time is its span, from the earliest thread's start to the latest
//! thread's end: threads that do not overlap (more threads than CPUs) are not counted as if
//! they had run side by side. (fs_mark itself sums its threads' own rates, which is the same
//! when they overlap and more when they do not.) As in fs_mark, the directories are made
//! before the files and timed apart from them.

pub mod fsmark;
mod metrics;
pub mod options;

use crate::meta::names::NameBuf;
use crate::{Footprint, RunEnv, Workload, WorkloadError};
use fsarena_core::{InputError, Measurement, Spec};
use fsarena_stats::LatencyHistogram;
use options::{FsyncMode, TreeOptions};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

/// The workload's directory inside the target.
const ROOT: &str = "fsarena-tree";

/// The `tree` workload.
#[derive(Debug, Clone)]
pub struct TreeWorkload {
    /// Its options.
    pub options: TreeOptions,
    given: Vec<(String, String)>,
}

/// The timed steps of one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Mkdir,
    /// Creation loop `n` (from 1).
    Create(u32),
    /// Deletion of the files of loops 1 to `n`.
    Delete(u32),
    Rmdir,
}

/// One step over all threads (or, summed, over several loops).
#[derive(Debug)]
struct StepTotal {
    ops: u64,
    bytes: u64,
    /// The step's span (summed over loops).
    ns: u64,
    /// The earliest thread's start and the latest thread's end, while the step runs.
    start: Option<Instant>,
    end: Option<Instant>,
    hist: LatencyHistogram,
    error: Option<String>,
}

impl StepTotal {
    fn new() -> Self {
        Self { ops: 0, bytes: 0, ns: 0, start: None, end: None, hist: LatencyHistogram::new(), error: None }
    }

    /// Adds one thread's part of a step that ran from `start` to `end` on that thread.
    fn add_thread(&mut self, part: StepTotal, start: Instant, end: Instant) {
        self.start = Some(self.start.map_or(start, |s| s.min(start)));
        self.end = Some(self.end.map_or(end, |e| e.max(end)));
        self.ns = match (self.start, self.end) {
            (Some(s), Some(e)) => e.saturating_duration_since(s).as_nanos().min(u128::from(u64::MAX)) as u64,
            _ => 0,
        };
        self.absorb_counts(part);
    }

    /// Adds a later loop of the same step: counts and spans add up.
    fn add_loop(&mut self, other: StepTotal) {
        self.ns = self.ns.saturating_add(other.ns);
        self.absorb_counts(other);
    }

    fn absorb_counts(&mut self, other: StepTotal) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.hist.merge(&other.hist);
        if self.error.is_none() {
            self.error = other.error;
        }
    }
}

/// One thread's view of its tree.
struct Thread<'a> {
    options: &'a TreeOptions,
    root: &'a Path,
    dir: BorrowedFd<'a>,
    paths: &'a [CString],
    buf: fsarena_engine::AlignedBuf,
    abort: &'a AtomicBool,
    stop: &'a AtomicBool,
}

impl TreeWorkload {
    /// From `--workload tree:key=value,...` (or a TOML table turned into pairs).
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = TreeOptions::default();
        for (k, v) in &spec.params {
            options.set(k, v)?;
        }
        options.validate()?;
        Ok(Self { options, given: spec.params.clone() })
    }

    fn shape(&self) -> String {
        let o = &self.options;
        let loops = if o.loops > 1 { format!(" × {} loops", o.loops) } else { String::new() };
        format!(
            "{} thread(s) × {} levels × {} dirs × {} files{loops}, file_size={}, fsync={:?}, write_size={}",
            o.threads,
            o.levels,
            o.dirs_per_level,
            o.files_per_dir,
            o.file_sizes.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>().join(","),
            o.fsync,
            o.write_size
        )
        .to_lowercase()
    }
}

impl Workload for TreeWorkload {
    fn kind(&self) -> &'static str {
        "tree"
    }

    fn params(&self) -> Vec<(String, String)> {
        self.given.clone()
    }

    fn describe(&self) -> Vec<String> {
        vec![format!("tree: {}", self.shape())]
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let threads = u64::from(o.threads);
        let dirs = o.dirs();
        // Every loop's files stay until the pass ends.
        let files_per_pass =
            dirs.saturating_mul(u64::from(o.files_per_dir)).saturating_mul(threads).saturating_mul(u64::from(o.loops));
        let largest = o.file_sizes.iter().map(|(_, s)| *s).max().unwrap_or(0);
        // keep=1 keeps every pass's files; otherwise a pass removes its files before the next.
        let bytes_per_file =
            if o.keep { o.file_sizes.iter().map(|(_, s)| *s).fold(0, u64::saturating_add) } else { largest };
        let passes = if o.keep { o.file_sizes.len() as u64 } else { 1 };
        // The paths of one tree: `d00/` per level above the directory, its name, the
        // CString's own cost; about levels²/2 × dirs_per_level × 4 bytes in all.
        let levels = u64::from(o.levels);
        let path_bytes =
            u64::from(o.dirs_per_level).saturating_mul(levels.saturating_mul(levels + 1) * 2 + levels * 48);
        Footprint {
            source: format!(
                "tree workload (threads={}, levels={}, dirs_per_level={}, files_per_dir={})",
                o.threads, o.levels, o.dirs_per_level, o.files_per_dir
            ),
            threads,
            buffer_bytes: path_bytes
                .saturating_add(threads.saturating_mul(o.write_size.min(largest.max(1)) + (64 << 10))),
            bytes_on_target: files_per_pass.saturating_mul(bytes_per_file),
            files: files_per_pass.saturating_add(dirs.saturating_mul(threads)).saturating_mul(passes),
            open_files: threads.saturating_mul(3),
        }
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let root = env.root.join(ROOT);
        let mut m = Measurement { complete: true, ..Measurement::default() };
        let mut failure = None;
        if root.exists() {
            // Left by an earlier run with keep=1: each pass starts from nothing.
            if let Err(e) = std::fs::remove_dir_all(&root) {
                failure = Some(format!("cannot remove {} left by an earlier run: {e}", root.display()));
            }
        }
        (env.progress)(&format!("tree: {}", self.shape()));
        if failure.is_none() {
            failure = self.run_in(env, &root, &mut m).err();
        }
        let stopped = env.stop.load(Ordering::Relaxed);
        if !self.options.keep {
            if let Err(e) = std::fs::remove_dir_all(&root) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    failure.get_or_insert(format!("cannot remove {}: {e}", root.display()));
                }
            }
        }
        match failure {
            Some(message) => {
                m.complete = false;
                Err(WorkloadError { message, partial: vec![m] })
            }
            None => {
                m.complete &= !stopped;
                Ok(vec![m])
            }
        }
    }
}

impl TreeWorkload {
    /// Makes the thread directories (untimed), then runs one pass per size.
    fn run_in(&self, env: &RunEnv<'_>, root: &Path, m: &mut Measurement) -> Result<(), String> {
        let o = &self.options;
        let mkdir =
            |path: &Path| std::fs::create_dir(path).map_err(|e| format!("cannot create {}: {e}", path.display()));
        mkdir(root)?;
        let paths: Vec<CString> = o.dir_paths().into_iter().filter_map(|p| CString::new(p).ok()).collect();
        let several = o.file_sizes.len() > 1;
        for (name, size) in &o.file_sizes {
            if env.stop.load(Ordering::Relaxed) {
                break;
            }
            // Kept trees of a sweep stay apart: fsarena-tree/<size>/t<N>.
            let pass_root = if several { root.join(name) } else { root.to_path_buf() };
            if several {
                mkdir(&pass_root)?;
                (env.progress)(&format!("tree: file_size={name}"));
            }
            let mut thread_dirs = Vec::new();
            for t in 0..o.threads {
                let path = pass_root.join(format!("t{t}"));
                mkdir(&path)?;
                // Not O_PATH: syncfs (fsync=end) and statvfs need a real descriptor. Never
                // through a link.
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let fd = rustix::fs::open(&path, flags, Mode::empty())
                    .map_err(|e| format!("cannot open {}: {}", path.display(), std::io::Error::from(e)))?;
                thread_dirs.push((path, fd));
            }
            let suffix = if several { format!("_{name}") } else { String::new() };
            let pass = self.pass(env, &thread_dirs, &paths, *size, m, &suffix);
            metrics::push(m, &pass, &suffix);
            if let Some(e) = pass.error() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// One pass: the directories, `loops` creation loops (each reported when there are
    /// several), then the deletion of every loop's files and the directories.
    fn pass(
        &self,
        env: &RunEnv<'_>,
        dirs: &[(std::path::PathBuf, OwnedFd)],
        paths: &[CString],
        size: u64,
        m: &mut Measurement,
        suffix: &str,
    ) -> metrics::Pass {
        let o = &self.options;
        let mut pass = metrics::Pass::default();
        let mut loops_done = 0;
        for n in 1..=o.loops {
            if env.stop.load(Ordering::Relaxed) || pass.error().is_some() {
                break;
            }
            let steps: &[Step] = if n == 1 { &[Step::Mkdir, Step::Create(1)] } else { &[Step::Create(n)] };
            let mut totals = self.run_steps(env, dirs, paths, size, steps).into_iter();
            if n == 1 {
                pass.mkdir = totals.next();
            }
            let Some(create) = totals.next() else { break };
            loops_done = n;
            if o.loops > 1 {
                // fs_mark's line per loop: files/s, and how full the filesystem is.
                let used = dirs.first().and_then(|(_, fd)| used_percent(fd));
                metrics::push_loop(m, n, &create, used, suffix);
            }
            match &mut pass.create {
                Some(total) => total.add_loop(create),
                None => pass.create = Some(create),
            }
        }
        // keep=1 keeps the files, as fs_mark's -k does: no deletion is measured then.
        if !o.keep && loops_done > 0 {
            let mut totals =
                self.run_steps(env, dirs, paths, size, &[Step::Delete(loops_done), Step::Rmdir]).into_iter();
            pass.delete = totals.next();
            pass.rmdir = totals.next();
        }
        pass
    }

    /// Runs `steps` on every thread, each step starting together after a barrier.
    fn run_steps(
        &self,
        env: &RunEnv<'_>,
        dirs: &[(std::path::PathBuf, OwnedFd)],
        paths: &[CString],
        size: u64,
        steps: &[Step],
    ) -> Vec<StepTotal> {
        let o = &self.options;
        let totals: Vec<Mutex<StepTotal>> = steps.iter().map(|_| Mutex::new(StepTotal::new())).collect();
        let barrier = Barrier::new(o.threads as usize);
        let abort_flag = AtomicBool::new(false);
        let abort = &abort_flag;
        let gate = crate::gate::StartGate::default();
        let spawn_error = std::thread::scope(|s| {
            let bodies = dirs.iter().enumerate().map(|(id, (path, fd))| {
                let (barrier, totals) = (&barrier, &totals);
                // Page-aligned, as fsarena's io buffers: on some CPUs the kernel copies from a
                // misaligned buffer at half the speed (bench/README.md, "fio's buffer alignment").
                let mut buf = fsarena_engine::AlignedBuf::new((o.write_size.min(size.max(1))) as usize, 4096);
                fastrand::Rng::with_seed(id as u64).fill(buf.as_mut_slice());
                let mut thread = Thread { options: o, root: path, dir: fd.as_fd(), paths, buf, abort, stop: env.stop };
                move || {
                    // Made once, before the steps: making one calibrates it (see `meta`).
                    let clock = quanta::Clock::new();
                    for (step, total) in steps.iter().zip(totals) {
                        let mut rec = StepTotal::new();
                        barrier.wait();
                        let start = Instant::now();
                        if !thread.stopped() {
                            thread.step(*step, size, &mut rec, &clock);
                        }
                        let end = Instant::now();
                        if let Ok(mut t) = total.lock() {
                            t.add_thread(rec, start, end);
                        }
                    }
                }
            });
            // Joined when the scope ends; a failed spawn has released the started ones.
            crate::gate::spawn_gated(s, &gate, "tree", bodies).err()
        });
        if let (Some(e), Some(first)) = (spawn_error, totals.first()) {
            if let Ok(mut t) = first.lock() {
                t.error = Some(e);
            }
        }
        totals.into_iter().map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner())).collect()
    }
}

/// How full the filesystem holding `dir` is, in percent of its blocks, as fs_mark's `FSUse%`
/// (`get_df_full`): blocks not available to users, the root-reserved ones included, over all.
fn used_percent(dir: &OwnedFd) -> Option<f64> {
    let st = rustix::fs::fstatvfs(dir).ok()?;
    (st.f_blocks > 0).then(|| (st.f_blocks - st.f_bavail.min(st.f_blocks)) as f64 * 100.0 / st.f_blocks as f64)
}

/// File names of creation loop `n`: `f<i>` in the first (fs_mark's single loop), `l<n>f<i>`
/// in later ones, so that every loop adds new files beside the kept ones.
fn loop_prefix(n: u32) -> String {
    if n <= 1 {
        "f".to_string()
    } else {
        format!("l{n}f")
    }
}

impl Thread<'_> {
    fn stopped(&self) -> bool {
        self.abort.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    fn fail(&self, rec: &mut StepTotal, what: &str, at: String, e: std::io::Error) {
        rec.error.get_or_insert(format!("{what} {}: {e}", self.root.join(at).display()));
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Runs one step with one clock read per operation (see the `meta` workload); the
    /// step's time is taken around it, over all threads. The clock is the thread's own, made
    /// before its first step.
    fn step(&mut self, step: Step, size: u64, rec: &mut StepTotal, clock: &quanta::Clock) {
        let mut prev = clock.raw();
        let dir_count = self.paths.len();
        match step {
            Step::Mkdir | Step::Rmdir => {
                let order: Vec<usize> =
                    if step == Step::Mkdir { (0..dir_count).collect() } else { (0..dir_count).rev().collect() };
                for k in order {
                    if step == Step::Mkdir && self.stopped() {
                        break;
                    }
                    let path = self.paths[k].as_c_str();
                    let res = if step == Step::Mkdir {
                        rustix::fs::mkdirat(self.dir, path, Mode::from_raw_mode(0o755))
                    } else {
                        rustix::fs::unlinkat(self.dir, path, AtFlags::REMOVEDIR)
                    };
                    let now = clock.raw();
                    match res {
                        Ok(()) => {}
                        // A pass cut short made only some of them.
                        Err(rustix::io::Errno::NOENT) if step == Step::Rmdir => continue,
                        Err(e) => {
                            let what = if step == Step::Mkdir { "mkdir" } else { "rmdir" };
                            return self.fail(rec, what, path.to_string_lossy().into_owned(), e.into());
                        }
                    }
                    rec.hist.record(clock.delta_as_nanos(prev, now));
                    rec.ops += 1;
                    prev = now;
                }
            }
            Step::Create(n) => {
                let mut names = NameBuf::new(&loop_prefix(n));
                self.files(clock, &mut prev, rec, &mut names, true, size);
                rec.bytes = rec.ops * size;
                if self.options.fsync == FsyncMode::End && rec.error.is_none() {
                    if let Err(e) = rustix::fs::syncfs(self.dir) {
                        self.fail(rec, "syncfs", String::new(), e.into());
                    }
                }
            }
            Step::Delete(loops) => {
                for n in 1..=loops {
                    let mut names = NameBuf::new(&loop_prefix(n));
                    self.files(clock, &mut prev, rec, &mut names, false, size);
                    if rec.error.is_some() {
                        break;
                    }
                }
            }
        }
    }

    /// Creates (or unlinks) `files_per_dir` files named by `names` in every directory.
    fn files(
        &self,
        clock: &quanta::Clock,
        prev: &mut u64,
        rec: &mut StepTotal,
        names: &mut NameBuf,
        create: bool,
        size: u64,
    ) {
        let fsync_file = self.options.fsync == FsyncMode::File;
        for k in 0..self.paths.len() {
            let dir = match rustix::fs::openat(
                self.dir,
                self.paths[k].as_c_str(),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(d) => d,
                Err(e) => {
                    let at = self.paths[k].to_string_lossy().into_owned();
                    return self.fail(rec, "open", at, e.into());
                }
            };
            for f in 0..u64::from(self.options.files_per_dir) {
                if f & 63 == 0 && self.stopped() {
                    return;
                }
                let name = names.name(f);
                let res = if create {
                    write_file(dir.as_fd(), name, size, self.buf.as_slice(), fsync_file)
                } else {
                    rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(std::io::Error::from)
                };
                let now = clock.raw();
                if let Err(e) = res {
                    let what = if create { "create" } else { "unlink" };
                    let at = format!("{}/{}", self.paths[k].to_string_lossy(), names.display(f));
                    return self.fail(rec, what, at, e);
                }
                rec.hist.record(clock.delta_as_nanos(*prev, now));
                rec.ops += 1;
                *prev = now;
            }
        }
    }
}

/// Creates one file exclusively and writes `size` bytes in `buf`-sized writes, then fsyncs it
/// if asked; the close is the drop.
#[inline]
fn write_file(dir: BorrowedFd<'_>, name: &std::ffi::CStr, size: u64, buf: &[u8], fsync: bool) -> std::io::Result<()> {
    let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o644))?;
    let mut left = size;
    while left > 0 {
        let len = (buf.len() as u64).min(left) as usize;
        match rustix::io::write(&fd, &buf[..len])? {
            0 => return Err(std::io::Error::other(format!("wrote {} of {size} bytes", size - left))),
            n => left -= n as u64,
        }
    }
    if fsync {
        rustix::fs::fsync(&fd)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
