//! The fs_mark-class `tree` workload: trees of small files, created with their data (and
//! optionally synced), then deleted; files/s and directories/s created, bytes/s written,
//! files/s deleted, and create and delete latencies.
//!
//! Every thread has a tree of its own (`fsarena-tree/t<N>`, as fs_mark gives each thread its
//! own directory). The threads make their directories, then create and write their files
//! (`loops` times, each loop adding new files beside the kept ones, as fs_mark's `-L`, and each
//! loop a result of its own), then delete the files, then the directories, all starting each
//! step together on the phase runner ([`fsarena_workload::phase`]). A step's time is its span, from the
//! earliest thread's start to the latest thread's end: threads that do not overlap (more
//! threads than CPUs) are not counted as if they had run side by side. (fs_mark itself sums
//! its threads' own rates, which is the same when they overlap and more when they do not.) As
//! in fs_mark, the directories are made before the files and timed apart from them. One run
//! makes files of one size: a list of sizes is a sweep of the plan, one result per size.

pub mod fsmark;
mod metrics;
pub mod options;

use fsarena_core::{InputError, Measurement, Spec};
use fsarena_engine::{FsOps, PsyncFsOps};
use fsarena_workload::names::NameBuf;
use fsarena_workload::phase::{Phases, Recorder, Worker};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use options::{FsyncMode, TreeOptions};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use std::ffi::{CStr, CString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// The workload's directory inside the target.
const ROOT: &str = "fsarena-tree";

/// Files between two looks at the stop flags (a power of two: the test is a mask).
const CHECK_EVERY: u64 = 64;

/// The `tree` workload.
#[derive(Debug, Clone)]
pub struct TreeWorkload {
    /// Its options.
    pub options: TreeOptions,
    given: Vec<(String, String)>,
}

/// The timed steps of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Mkdir,
    /// Creation loop `n` (from 1).
    Create(u32),
    /// Deletion of the files of loops 1 to `n`.
    Delete(u32),
    Rmdir,
}

impl fsarena_workload::phase::Phase for Step {
    /// The names of the latency metrics (`create_lat_p99`) and histograms.
    fn op(self) -> &'static str {
        match self {
            Step::Mkdir => "mkdir",
            Step::Create(_) => "create",
            Step::Delete(_) => "delete",
            Step::Rmdir => "rmdir",
        }
    }
}

/// One thread's tree, and the backend of its calls.
struct Thread<'a, O> {
    options: &'a TreeOptions,
    /// The thread's directory, for messages.
    root: PathBuf,
    dir: BorrowedFd<'a>,
    paths: &'a [CString],
    buf: fsarena_engine::AlignedBuf,
    ops: O,
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
            o.threads, o.levels, o.dirs_per_level, o.files_per_dir, o.file_size, o.fsync, o.write_size
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

    /// fs_mark's lines per loop: with `loops` above 1, one result per loop.
    fn parts(&self) -> Vec<String> {
        match self.options.loops {
            0 | 1 => Vec::new(),
            n => (1..=n).map(|i| format!("loop {i}")).collect(),
        }
    }

    fn footprint(&self) -> Footprint {
        let o = &self.options;
        let threads = u64::from(o.threads);
        let dirs = o.dirs();
        // Every loop's files stay until the run ends.
        let files =
            dirs.saturating_mul(u64::from(o.files_per_dir)).saturating_mul(threads).saturating_mul(u64::from(o.loops));
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
                .saturating_add(threads.saturating_mul(o.write_size.min(o.file_size.max(1)) + (64 << 10))),
            bytes_on_target: files.saturating_mul(o.file_size),
            files: files.saturating_add(dirs.saturating_mul(threads)),
            open_files: threads.saturating_mul(3),
        }
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let root = env.root.join(ROOT);
        let mut out = Vec::new();
        let mut failure = None;
        if root.exists() {
            // Left by an earlier run with keep=1: each run starts from nothing.
            if let Err(e) = std::fs::remove_dir_all(&root) {
                failure = Some(format!("cannot remove {} left by an earlier run: {e}", root.display()));
            }
        }
        (env.progress)(&format!("tree: {}", self.shape()));
        if failure.is_none() {
            failure = self.run_in(env, &root, &mut out).err();
        }
        let stopped = env.stop.load(Ordering::Relaxed);
        if !self.options.keep {
            if let Err(e) = std::fs::remove_dir_all(&root) {
                if e.kind() != io::ErrorKind::NotFound {
                    failure.get_or_insert(format!("cannot remove {}: {e}", root.display()));
                }
            }
        }
        // What ran, the last part marked incomplete when the run stopped early.
        if out.is_empty() {
            out.push(Measurement::default());
        }
        if let Some(last) = out.last_mut() {
            last.complete &= failure.is_none() && !stopped;
        }
        match failure {
            Some(message) => Err(WorkloadError { message, partial: out }),
            None => Ok(out),
        }
    }
}

impl TreeWorkload {
    /// Makes the thread directories (untimed), then runs the loops and the deletion, one
    /// measurement per loop in `out`.
    fn run_in(&self, env: &RunEnv<'_>, root: &Path, out: &mut Vec<Measurement>) -> Result<(), String> {
        let o = &self.options;
        let mkdir =
            |path: &Path| std::fs::create_dir(path).map_err(|e| format!("cannot create {}: {e}", path.display()));
        mkdir(root)?;
        let paths: Vec<CString> = o.dir_paths().into_iter().filter_map(|p| CString::new(p).ok()).collect();
        let mut thread_dirs: Vec<(PathBuf, OwnedFd)> = Vec::new();
        for t in 0..o.threads {
            let path = root.join(format!("t{t}"));
            mkdir(&path)?;
            // Not O_PATH: syncfs (fsync=end) and statvfs need a real descriptor. Never
            // through a link.
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::open(&path, flags, Mode::empty())
                .map_err(|e| format!("cannot open {}: {}", path.display(), io::Error::from(e)))?;
            thread_dirs.push((path, fd));
        }
        let mut threads: Vec<Thread<'_, PsyncFsOps>> = thread_dirs
            .iter()
            .enumerate()
            .map(|(id, (path, fd))| {
                // Page-aligned, as fsarena's io buffers: on some CPUs the kernel copies from a
                // misaligned buffer at half the speed (bench/README.md, "fio's buffer alignment").
                let mut buf = fsarena_engine::AlignedBuf::new(o.write_size.min(o.file_size.max(1)) as usize, 4096);
                fastrand::Rng::with_seed(id as u64).fill(buf.as_mut_slice());
                Thread { options: o, root: path.clone(), dir: fd.as_fd(), paths: &paths, buf, ops: PsyncFsOps }
            })
            .collect();
        let runner =
            Phases { name: "tree", stop: env.stop, live: env.live, before_each: None, rendezvous: env.rendezvous };
        let mut loops_done = 0;
        for n in 1..=o.loops {
            if env.stop.load(Ordering::Relaxed) {
                break;
            }
            let steps: &[Step] = if n == 1 { &[Step::Mkdir, Step::Create(1)] } else { &[Step::Create(n)] };
            let totals = runner.run(steps, &mut threads);
            let (mkdir, create) = match totals.as_slice() {
                [mkdir, create] => (Some(mkdir), create),
                [create] => (None, create),
                _ => break, // unreachable: one total per step
            };
            let mut m = Measurement { complete: true, ..Measurement::default() };
            // fs_mark's line per loop: files/s, and how full the filesystem is.
            let used = if o.loops > 1 { thread_dirs.first().and_then(|(_, fd)| used_percent(fd)) } else { None };
            metrics::creation(&mut m, mkdir, create, used);
            out.push(m);
            if let Some(e) = totals.iter().find_map(|t| t.error.clone()) {
                return Err(e);
            }
            loops_done = n;
        }
        // keep=1 keeps the files, as fs_mark's -k does: no deletion is measured then. The
        // deletion of every loop's files is one step, reported with the last loop.
        if !o.keep && loops_done > 0 {
            let totals = runner.run(&[Step::Delete(loops_done), Step::Rmdir], &mut threads);
            if let (Some(m), Some(delete)) = (out.last_mut(), totals.first()) {
                metrics::deletion(m, delete);
            }
            if let Some(e) = totals.iter().find_map(|t| t.error.clone()) {
                return Err(e);
            }
        }
        Ok(())
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

impl<O: FsOps> Worker for Thread<'_, O> {
    type Phase = Step;

    /// One step with one clock read per operation (see [`fsarena_workload::phase`]).
    fn run(&mut self, step: Step, rec: &mut Recorder<'_>) {
        match step {
            Step::Mkdir | Step::Rmdir => self.dirs(step == Step::Mkdir, rec),
            Step::Create(n) => {
                let mut names = NameBuf::new(&loop_prefix(n));
                self.files(rec, &mut names, true);
                if self.options.fsync == FsyncMode::End && !rec.failed() {
                    if let Err(e) = self.ops.syncfs(self.dir) {
                        self.fail(rec, "syncfs", String::new(), e);
                    }
                }
            }
            Step::Delete(loops) => {
                for n in 1..=loops {
                    let mut names = NameBuf::new(&loop_prefix(n));
                    self.files(rec, &mut names, false);
                    if rec.failed() {
                        break;
                    }
                }
            }
        }
    }
}

impl<O: FsOps> Thread<'_, O> {
    fn fail(&self, rec: &mut Recorder<'_>, what: &str, at: String, e: io::Error) {
        rec.fail(format!("{what} {}: {e}", self.root.join(at).display()));
    }

    /// mkdir of every directory of the tree, parents first, or rmdir, children first.
    fn dirs(&mut self, make: bool, rec: &mut Recorder<'_>) {
        let paths = self.paths;
        let order: Box<dyn Iterator<Item = &CString>> =
            if make { Box::new(paths.iter()) } else { Box::new(paths.iter().rev()) };
        for path in order {
            if make && rec.stopped() {
                break;
            }
            let res = if make {
                self.ops.mkdir(self.dir, path.as_c_str(), Mode::from_raw_mode(0o755))
            } else {
                self.ops.rmdir(self.dir, path.as_c_str())
            };
            match res {
                Ok(()) => rec.done(0),
                // A run cut short made only some of them.
                Err(e) if !make && e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    let what = if make { "mkdir" } else { "rmdir" };
                    return self.fail(rec, what, path.to_string_lossy().into_owned(), e);
                }
            }
        }
    }

    /// Creates (or unlinks) `files_per_dir` files named by `names` in every directory.
    fn files(&mut self, rec: &mut Recorder<'_>, names: &mut NameBuf, create: bool) {
        let (paths, size) = (self.paths, self.options.file_size);
        let fsync_file = self.options.fsync == FsyncMode::File;
        for path in paths {
            let dir = match self.ops.open(self.dir, path.as_c_str(), OFlags::PATH | OFlags::DIRECTORY) {
                Ok(d) => d,
                Err(e) => return self.fail(rec, "open", path.to_string_lossy().into_owned(), e),
            };
            for f in 0..u64::from(self.options.files_per_dir) {
                if f & (CHECK_EVERY - 1) == 0 && rec.stopped() {
                    return;
                }
                let name = names.name(f);
                let res = if create {
                    write_file(&mut self.ops, dir.as_fd(), name, size, self.buf.as_slice(), fsync_file)
                } else {
                    self.ops.unlink(dir.as_fd(), name)
                };
                if let Err(e) = res {
                    let what = if create { "create" } else { "unlink" };
                    let at = format!("{}/{}", path.to_string_lossy(), names.display(f));
                    return self.fail(rec, what, at, e);
                }
                rec.done(if create { size } else { 0 });
            }
        }
    }
}

/// Creates one file exclusively and writes `size` bytes in `buf`-sized writes, then fsyncs it
/// if asked; the close is the drop.
#[inline]
fn write_file<O: FsOps>(
    ops: &mut O,
    dir: BorrowedFd<'_>,
    name: &CStr,
    size: u64,
    buf: &[u8],
    fsync: bool,
) -> io::Result<()> {
    let fd = ops.create(dir, name, OFlags::EXCL | OFlags::WRONLY, Mode::from_raw_mode(0o644))?;
    let mut left = size;
    while left > 0 {
        let len = (buf.len() as u64).min(left) as usize;
        match ops.write(fd.as_fd(), &buf[..len])? {
            0 => return Err(io::Error::other(format!("wrote {} of {size} bytes", size - left))),
            n => left -= n as u64,
        }
    }
    if fsync {
        ops.fsync(fd.as_fd())?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
