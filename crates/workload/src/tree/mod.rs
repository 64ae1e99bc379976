//! The fs_mark-class `tree` workload: trees of small files, created with their data (and
//! optionally synced), then deleted; files/s and directories/s created, bytes/s written,
//! files/s deleted, and create and delete latencies.
//!
//! Every thread has a tree of its own (`fsarena-tree/t<N>`, as fs_mark gives each thread its
//! own directory). One pass per file size: the threads make their directories, then create
//! and write their files, then delete the files, then the directories, all starting each phase
//! together; a phase's time is the slowest thread's. As in fs_mark, the directories are made
//! before the files and timed apart from them.

pub mod options;

use crate::meta::names::NameBuf;
use crate::{Footprint, RunEnv, Workload, WorkloadError};
use fsarena_core::{Better, InputError, Measurement, Spec};
use fsarena_stats::LatencyHistogram;
use options::{FsyncMode, TreeOptions};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};

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
    Create,
    Delete,
    Rmdir,
}

/// One step over all threads.
struct StepTotal {
    ops: u64,
    bytes: u64,
    max_ns: u64,
    hist: LatencyHistogram,
    error: Option<String>,
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
        format!(
            "{} thread(s) × {} levels × {} dirs × {} files, file_size={}, fsync={:?}, write_size={}",
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
        let files_per_pass = dirs.saturating_mul(u64::from(o.files_per_dir)).saturating_mul(threads);
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

    fn run(&self, env: &RunEnv<'_>) -> Result<Measurement, WorkloadError> {
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
                Err(WorkloadError { message, partial: Some(m) })
            }
            None => {
                m.complete &= !stopped;
                Ok(m)
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
                // Not O_PATH: syncfs (fsync=end) needs a real descriptor. Never through a link.
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let fd = rustix::fs::open(&path, flags, Mode::empty())
                    .map_err(|e| format!("cannot open {}: {}", path.display(), std::io::Error::from(e)))?;
                thread_dirs.push((path, fd));
            }
            let suffix = if several { format!("_{name}") } else { String::new() };
            let totals = self.pass(env, &thread_dirs, &paths, *size);
            push_metrics(m, &totals, &suffix);
            if let Some(e) = totals.into_iter().find_map(|(_, t)| t.error) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// One pass: every step on every thread, each step starting together.
    fn pass(
        &self,
        env: &RunEnv<'_>,
        dirs: &[(std::path::PathBuf, OwnedFd)],
        paths: &[CString],
        size: u64,
    ) -> Vec<(Step, StepTotal)> {
        let o = &self.options;
        // keep=1 keeps the files, as fs_mark's -k does: no deletion is measured then.
        let steps: &[Step] =
            if o.keep { &[Step::Mkdir, Step::Create] } else { &[Step::Mkdir, Step::Create, Step::Delete, Step::Rmdir] };
        let totals: Vec<Mutex<StepTotal>> = steps
            .iter()
            .map(|_| Mutex::new(StepTotal { ops: 0, bytes: 0, max_ns: 0, hist: LatencyHistogram::new(), error: None }))
            .collect();
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
                    for (step, total) in steps.iter().zip(totals) {
                        let mut rec =
                            StepTotal { ops: 0, bytes: 0, max_ns: 0, hist: LatencyHistogram::new(), error: None };
                        barrier.wait();
                        if !thread.stopped() {
                            thread.step(*step, size, &mut rec);
                        }
                        if let Ok(mut t) = total.lock() {
                            t.ops += rec.ops;
                            t.bytes += rec.bytes;
                            t.max_ns = t.max_ns.max(rec.max_ns);
                            t.hist.merge(&rec.hist);
                            if t.error.is_none() {
                                t.error = rec.error;
                            }
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
        steps
            .iter()
            .copied()
            .zip(totals.into_iter().map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner())))
            .collect()
    }
}

/// files_created, dirs_created, write_bw, files_deleted, latencies and counts of one pass.
fn push_metrics(m: &mut Measurement, totals: &[(Step, StepTotal)], suffix: &str) {
    let find = |s: Step| totals.iter().find(|(t, _)| *t == s).map(|(_, t)| t);
    let rate = |x: u64, t: &StepTotal| if t.max_ns > 0 { x as f64 * 1e9 / t.max_ns as f64 } else { 0.0 };
    let (Some(mkdir), Some(create)) = (find(Step::Mkdir), find(Step::Create)) else {
        return;
    };
    let none = StepTotal { ops: 0, bytes: 0, max_ns: 0, hist: LatencyHistogram::new(), error: None };
    let delete = find(Step::Delete).unwrap_or(&none);
    let mut push =
        |name: &str, unit: &str, better: Better, value: f64| m.push(&format!("{name}{suffix}"), unit, better, value);
    if create.ops > 0 {
        push("files_created", "files/s", Better::Higher, rate(create.ops, create));
    }
    if mkdir.ops > 0 {
        push("dirs_created", "dirs/s", Better::Higher, rate(mkdir.ops, mkdir));
    }
    if create.ops > 0 {
        push("write_bw", "bytes/s", Better::Higher, rate(create.bytes, create));
    }
    if delete.ops > 0 {
        push("files_deleted", "files/s", Better::Higher, rate(delete.ops, delete));
    }
    for (name, t) in [("create", create), ("delete", delete)].into_iter().filter(|(_, t)| t.ops > 0) {
        for (p, pct) in [("p50", 50.0), ("p99", 99.0)] {
            push(&format!("{name}_lat_{p}"), "ns", Better::Lower, t.hist.percentile(pct) as f64);
        }
    }
    push("files_created_items", "items", Better::Higher, create.ops as f64);
    push("dirs_created_items", "items", Better::Higher, mkdir.ops as f64);
    if find(Step::Delete).is_some() {
        push("files_deleted_items", "items", Better::Higher, delete.ops as f64);
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

    /// Runs one step with one clock read per operation (see the `meta` workload).
    fn step(&mut self, step: Step, size: u64, rec: &mut StepTotal) {
        let clock = quanta::Clock::new();
        let start = clock.raw();
        let mut prev = start;
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
            Step::Create | Step::Delete => {
                let mut names = NameBuf::new("f");
                let fsync_file = self.options.fsync == FsyncMode::File;
                'dirs: for k in 0..dir_count {
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
                            break 'dirs;
                        }
                        let name = names.name(f);
                        let res = if step == Step::Create {
                            write_file(dir.as_fd(), name, size, self.buf.as_slice(), fsync_file)
                        } else {
                            rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(std::io::Error::from)
                        };
                        let now = clock.raw();
                        if let Err(e) = res {
                            let what = if step == Step::Create { "create" } else { "unlink" };
                            let at = format!("{}/{}", self.paths[k].to_string_lossy(), names.display(f));
                            return self.fail(rec, what, at, e);
                        }
                        rec.hist.record(clock.delta_as_nanos(prev, now));
                        rec.ops += 1;
                        prev = now;
                    }
                }
                if step == Step::Create {
                    rec.bytes = rec.ops * size;
                    if self.options.fsync == FsyncMode::End && rec.error.is_none() {
                        if let Err(e) = rustix::fs::syncfs(self.dir) {
                            return self.fail(rec, "syncfs", String::new(), e.into());
                        }
                        prev = clock.raw();
                    }
                }
            }
        }
        rec.max_ns = clock.delta_as_nanos(start, prev);
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
