//! One dbench client: replays the load file in its own directory, as dbench's fileio
//! backend does, pass after pass until the run's time is up.
//!
//! Each operation is the system calls dbench makes for it (open flags by disposition, the
//! case-insensitive name lookup that simulates a CIFS server's resolve, pwrite of zeros,
//! byte-range locks, utime, statvfs), and the expected status is checked where dbench checks
//! it: a mismatch on Unlink, Rmdir or Rename, a failed or short write, an unknown handle or a
//! full handle table ends the run (dbench's child exits 1 and takes the run down); a mismatch
//! on NTCreateX or a short read is counted and the replay goes on (dbench prints a line).

use super::loadfile::{client_path, Kind, Line, LoadFile, Op};
use fsarena_core::LatencyHistogram;
use fsarena_workload::live::LiveBatch;
use fsarena_workload::served::{for_each_name, Below, Budget};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use rustix::io::Errno;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// dbench's handle table size (`MAX_FILES`): one more open handle ends the run.
const MAX_HANDLES: usize = 200;

/// The run's options that change what an operation does.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Settings {
    /// `-s`: files opened O_SYNC.
    pub sync_open: bool,
    /// `-S`: the parent directory is synced after Unlink, Rmdir and Rename.
    pub sync_dirs: bool,
    /// `-F`: fsync after every write.
    pub fsync: bool,
    /// `--no-resolve`: no directory scan when a name is not found.
    pub no_resolve: bool,
}

/// The run's moments, shared by all clients.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    /// Operations starting before this are warm-up: done, not counted.
    pub warmup_end: Instant,
    /// No line starts after this; bytes are counted up to it.
    pub deadline: Instant,
}

/// What one client measured.
#[derive(Debug)]
pub(super) struct Tally {
    /// Latency per kind, in [`Kind::ALL`] order, of the counted operations.
    pub hists: Vec<LatencyHistogram>,
    /// Bytes read and written by counted operations that ended by the deadline.
    pub bytes: u64,
    /// Worst lag behind a line's time stamp (timed load files), in ns.
    pub max_lag_ns: u64,
    /// NTCreateX outcomes other than the expected status, and short reads.
    pub mismatches: u64,
    /// Whole passes over the file.
    pub passes: u64,
}

/// An open handle of the load file.
#[derive(Debug)]
struct Handle {
    number: i64,
    fd: OwnedFd,
}

/// One client's state.
pub(super) struct Client<'a> {
    id: usize,
    root: &'a Path,
    /// `root`, held: every name is reached below it with no link followed, as Samba (which
    /// dbench's load files record) resolves names with openat2 and no symbolic links.
    below: &'a Below,
    file: &'a LoadFile,
    settings: Settings,
    handles: Vec<Handle>,
    zeros: Vec<u8>,
    read_buf: Vec<u8>,
    mismatches: u64,
    note: &'a (dyn Fn(&str) + Sync),
}

impl std::fmt::Debug for Client<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("id", &self.id).finish_non_exhaustive()
    }
}

impl<'a> Client<'a> {
    /// Client `id` (its directory is `clients/client<id>` in dbench's client.txt) in `root`,
    /// with buffers for reads and writes of up to `largest_io` bytes.
    pub fn new(
        id: usize,
        below: &'a Below,
        file: &'a LoadFile,
        largest_io: usize,
        settings: Settings,
        note: &'a (dyn Fn(&str) + Sync),
    ) -> Self {
        Self {
            id,
            root: below.path(),
            below,
            file,
            settings,
            handles: Vec::new(),
            zeros: vec![0; largest_io],
            read_buf: vec![0; largest_io],
            mismatches: 0,
            note,
        }
    }

    /// Replays the file until the deadline (a line is started only before it, as dbench checks
    /// its time limit between lines), Ctrl-C (`stop`) or another client's failure (`failed`).
    /// The error is the first fatal mismatch, with what was measured until then.
    pub fn run(
        &mut self,
        clock: Clock,
        stop: &AtomicBool,
        failed: &AtomicBool,
        live: &fsarena_workload::Live,
    ) -> (Tally, Option<String>) {
        let mut tally = Tally {
            hists: vec![LatencyHistogram::new(); Kind::ALL.len()],
            bytes: 0,
            max_lag_ns: 0,
            mismatches: 0,
            passes: 0,
        };
        let mut batch = LiveBatch::new(live);
        let started = Instant::now();
        let file = self.file;
        let error = 'passes: loop {
            let pass_start = Instant::now();
            for line in &file.lines {
                if stop.load(Relaxed) || failed.load(Relaxed) || Instant::now() >= clock.deadline {
                    break 'passes None;
                }
                // A time stamp makes the line wait for its moment in the pass; a line late
                // for it counts its lag in max_latency, as dbench does.
                if let Some(at) = line.at.filter(|t| *t > 0.0) {
                    let due = pass_start + Duration::from_secs_f64(at);
                    if !sleep_until(due, stop) {
                        break 'passes None;
                    }
                    let lag = Instant::now().saturating_duration_since(due);
                    if Instant::now() >= clock.warmup_end {
                        tally.max_lag_ns = tally.max_lag_ns.max(lag.as_nanos() as u64);
                    }
                }
                let begin = Instant::now();
                let bytes = match self.execute(line) {
                    Ok(b) => b,
                    Err(e) => {
                        failed.store(true, Relaxed);
                        break 'passes Some(format!(
                            "dbench client {} failed at {}:{}: {e}",
                            self.id, self.file.path, line.number
                        ));
                    }
                };
                let end = Instant::now();
                if let (Some(kind), true) = (line.op.kind(), begin >= clock.warmup_end) {
                    tally.hists[kind.index()].record(end.duration_since(begin).as_nanos() as u64);
                    if end <= clock.deadline {
                        tally.bytes += bytes;
                    }
                }
                batch.add(bytes, end.duration_since(started).as_nanos() as u64);
            }
            tally.passes += 1;
        };
        tally.mismatches = self.mismatches;
        (tally, error)
    }

    /// Closes what the replay left open (a run that stopped mid-pass).
    pub fn close_all(&mut self) {
        self.handles.clear();
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(client_path(p, self.id))
    }

    fn handle(&self, number: i64) -> Result<usize, String> {
        self.handles
            .iter()
            .position(|h| h.number == number)
            .ok_or_else(|| format!("handle {number} was not found (not opened by an earlier NTCreateX)"))
    }

    /// A non-fatal mismatch: counted; the first few are shown, as dbench prints each.
    fn mismatch(&mut self, line: &Line, what: String) {
        self.mismatches += 1;
        if self.mismatches <= 3 {
            (self.note)(&format!("dbench client {} at {}:{}: {what}", self.id, self.file.path, line.number));
        }
    }

    /// One line's operation; Ok is the bytes it read or wrote, Err a failure that ends the run.
    fn execute(&mut self, line: &Line) -> Result<u64, String> {
        let expect_ok = line.expect_ok;
        let checked = |what: &str, p: &Path, r: Result<(), Errno>| match (r, expect_ok) {
            (Ok(()), true) | (Err(_), false) => Ok(()),
            (Err(e), true) => Err(format!("{what} {} failed ({e}), expected {}", p.display(), line.status)),
            (Ok(()), false) => Err(format!("{what} {} succeeded, expected {}", p.display(), line.status)),
        };
        match &line.op {
            Op::NtCreateX { path, options, disposition, handle } => {
                let p = self.path(path);
                self.resolve(&p);
                self.create(line, &p, *options, *disposition, *handle)?;
            }
            Op::Close { handle } => {
                let i = self.handle(*handle)?;
                self.handles.remove(i);
            }
            Op::Rename { from, to } => {
                let (from, to) = (self.path(from), self.path(to));
                self.resolve(&from);
                self.resolve(&to);
                checked("rename", &from, self.rename(&from, &to))?;
                self.sync_parent(&to);
            }
            Op::Unlink { path } => {
                let p = self.path(path);
                self.resolve(&p);
                checked("unlink", &p, self.remove(&p, AtFlags::empty()))?;
                self.sync_parent(&p);
            }
            Op::Deltree { path } => deltree(self.below, &self.path(path)),
            Op::Rmdir { path } => {
                let p = self.path(path);
                self.resolve(&p);
                checked("rmdir", &p, self.remove(&p, AtFlags::REMOVEDIR))?;
                self.sync_parent(&p);
            }
            Op::Mkdir { path } => {
                let p = self.path(path);
                self.resolve(&p);
                // dbench ignores the outcome: the directory may exist from the last pass.
                let _ = self.mkdir(&p, 0o777);
            }
            Op::Qpathinfo { path } => self.resolve(&self.path(path)),
            Op::Qfileinfo { handle } => {
                let _ = rustix::fs::fstat(&self.handles[self.handle(*handle)?].fd);
            }
            Op::Qfsinfo => {
                let _ = rustix::fs::statvfs(self.root);
            }
            Op::Sfileinfo { handle } => {
                let h = &self.handles[self.handle(*handle)?];
                if let Ok(st) = rustix::fs::fstat(&h.fd) {
                    // dbench's utime(): whole seconds, atime 10 s and mtime 12 s back.
                    let at = |secs: i64| Timespec { tv_sec: secs, tv_nsec: 0 };
                    let times =
                        Timestamps { last_access: at(st.st_atime - 10), last_modification: at(st.st_mtime - 12) };
                    // Through the handle: the name may be served as a link by now.
                    let _ = rustix::fs::futimens(&h.fd, &times);
                }
            }
            Op::Find { path, max_count } => {
                let p = self.path(path);
                self.resolve(&p);
                // Only a pattern lists the directory; a plain name was the lookup above.
                if path.contains(['<', '>', '*', '?', '"']) {
                    if let Some(parent) = p.parent() {
                        list(self.below, parent, *max_count);
                    }
                }
            }
            Op::WriteX { handle, offset, size, returned } => {
                let h = &self.handles[self.handle(*handle)?];
                let size = *size as usize;
                let done = rustix::io::pwrite(&h.fd, &self.zeros[..size], *offset as u64)
                    .map_err(|e| format!("write failed on handle {handle} ({e})"))?;
                if done as i64 != *returned {
                    return Err(format!("wrote {done} bytes, expected to write {returned} bytes on handle {handle}"));
                }
                if self.settings.fsync {
                    let _ = rustix::fs::fsync(&h.fd);
                }
                return Ok(size as u64);
            }
            Op::ReadX { handle, offset, size, returned } => {
                let i = self.handle(*handle)?;
                let size = *size as usize;
                let done = rustix::io::pread(&self.handles[i].fd, &mut self.read_buf[..size], *offset as u64);
                if !matches!(done, Ok(n) if n as i64 == *returned) {
                    let got = done.map_or_else(|e| e.to_string(), |n| format!("{n} bytes"));
                    self.mismatch(line, format!("read on handle {handle} gave {got}, expected {returned} bytes"));
                }
                return Ok(size as u64);
            }
            Op::LockX { handle, offset, size } => lock(&self.handles[self.handle(*handle)?].fd, true, *offset, *size),
            Op::UnlockX { handle, offset, size } => {
                lock(&self.handles[self.handle(*handle)?].fd, false, *offset, *size)
            }
            Op::Flush { handle } => {
                let _ = rustix::fs::fsync(&self.handles[self.handle(*handle)?].fd);
            }
            Op::Sleep { micros } => std::thread::sleep(Duration::from_micros(*micros)),
        }
        Ok(0)
    }

    /// NTCreateX as dbench maps it onto open(2): FILE_CREATE adds O_CREAT, FILE_OVERWRITE(_IF)
    /// O_CREAT|O_TRUNC, FILE_DIRECTORY_FILE makes the directory first and opens it.
    fn create(&mut self, line: &Line, p: &Path, options: u32, disposition: u32, number: i64) -> Result<(), String> {
        const FILE_CREATE: u32 = 2;
        const FILE_OVERWRITE: u32 = 4;
        const FILE_OVERWRITE_IF: u32 = 5;
        const FILE_DIRECTORY_FILE: u32 = 1;
        let directory = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
        if self.settings.sync_open {
            flags |= OFlags::SYNC;
        }
        if disposition == FILE_CREATE {
            flags |= OFlags::CREATE;
        }
        if disposition == FILE_OVERWRITE || disposition == FILE_OVERWRITE_IF {
            flags |= OFlags::CREATE | OFlags::TRUNC;
        }
        if options & FILE_DIRECTORY_FILE != 0 {
            let _ = self.mkdir(p, 0o700);
            flags = directory;
        }
        let opened = match self.below.open(p, flags, 0o600) {
            Err(e) if e.raw_os_error() == Some(libc::EISDIR) => self.below.open(p, directory, 0o600),
            other => other,
        };
        match (opened, line.expect_ok) {
            (Err(e), true) => self.mismatch(line, format!("open {} failed for handle {number} ({e})", p.display())),
            (Err(_), false) => {}
            (Ok(_), false) => self.mismatch(
                line,
                format!("open {} succeeded for handle {number}, expected {}", p.display(), line.status),
            ),
            (Ok(fd), true) => {
                if self.handles.len() >= MAX_HANDLES {
                    return Err(format!("file table full ({MAX_HANDLES} handles) for {}", p.display()));
                }
                let _ = rustix::fs::fstat(&fd);
                self.handles.push(Handle { number, fd });
            }
        }
        Ok(())
    }

    /// dbench's simulation of a CIFS server's name resolution: a stat, and when the name is
    /// not there, a scan of its directory for it in any case.
    fn resolve(&self, p: &Path) {
        let Ok((parent, name)) = self.below.parent(p) else { return };
        if rustix::fs::statat(&parent, name, AtFlags::empty()).is_ok() || self.settings.no_resolve {
            return;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let Ok(fd) = rustix::fs::openat(&parent, c".", flags | OFlags::CLOEXEC, Mode::empty()) else { return };
        let name = name.as_encoded_bytes();
        // Capped: a directory the target lists without end must not hold the client for ever.
        let _ = for_each_name(fd.as_fd(), p, MAX_LISTED, |entry| !entry.to_bytes().eq_ignore_ascii_case(name));
    }

    /// mkdir of `p` below the client's root.
    fn mkdir(&self, p: &Path, mode: u32) -> Result<(), Errno> {
        let (parent, name) = self.below.parent(p).map_err(errno)?;
        rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(mode))
    }

    /// unlink (or rmdir, with `AtFlags::REMOVEDIR`) of `p` below the client's root.
    fn remove(&self, p: &Path, flags: AtFlags) -> Result<(), Errno> {
        let (parent, name) = self.below.parent(p).map_err(errno)?;
        rustix::fs::unlinkat(&parent, name, flags)
    }

    /// rename of `from` to `to`, both below the client's root.
    fn rename(&self, from: &Path, to: &Path) -> Result<(), Errno> {
        let (from_dir, from_name) = self.below.parent(from).map_err(errno)?;
        let (to_dir, to_name) = self.below.parent(to).map_err(errno)?;
        rustix::fs::renameat(&from_dir, from_name, &to_dir, to_name)
    }

    /// `-S`: the directory holding `p` is made durable, as knfsd would.
    fn sync_parent(&self, p: &Path) {
        if !self.settings.sync_dirs {
            return;
        }
        if let Some(parent) = p.parent() {
            if let Ok(fd) = self.below.open(parent, OFlags::RDONLY | OFlags::DIRECTORY, 0) {
                let _ = rustix::fs::fdatasync(&fd);
            }
        }
    }
}

/// Sleeps until `due`, waking for Ctrl-C; false when stopped.
fn sleep_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// Most names one listing of a client reads (FIND_FIRST's count, a name's resolution, a
/// Deltree's walk): far more than a dbench load file makes in a directory (a few hundred),
/// and a bound on a directory the target lists without end.
const MAX_LISTED: u64 = 1 << 20;

/// Levels a Deltree walks down: dbench's trees are a few levels deep.
const MAX_DEPTH: u32 = 64;

fn errno(e: std::io::Error) -> Errno {
    Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO))
}

/// Reads up to `max` entries of `dir` ('.' and '..' included), as FIND_FIRST does.
fn list(below: &Below, dir: &Path, max: i64) {
    let Ok(fd) = below.open(dir, OFlags::RDONLY | OFlags::DIRECTORY, 0) else { return };
    let Ok(entries) = rustix::fs::Dir::read_from(&fd) else { return };
    let _ = entries.take((max.max(0) as u64).min(MAX_LISTED) as usize).count();
}

/// Removes the files under `dir`, recursively; directories stay (emptied of files), and
/// failures are ignored, as in dbench's Deltree, so the next lines see what dbench's would.
/// Walked through descriptors below the client's root: a link is left alone (dbench follows
/// one to a directory, and would empty a directory of the host a daemon links to), and the
/// walk ends at [`MAX_LISTED`] names or [`MAX_DEPTH`] levels.
pub(super) fn deltree(below: &Below, dir: &Path) {
    let Ok(fd) = below.open(dir, OFlags::RDONLY | OFlags::DIRECTORY, 0) else { return };
    let mut budget = Budget::new(dir, MAX_LISTED, MAX_DEPTH);
    let _ = empty_of_files(fd.as_fd(), &mut budget, 0);
}

/// [`deltree`]'s walk of the open directory `dir`, `level` below its top.
fn empty_of_files(dir: BorrowedFd<'_>, budget: &mut Budget, level: u32) -> std::io::Result<()> {
    budget.descend(level)?;
    let top = budget.top.clone();
    let mut failed = None;
    // The budget, spent name by name below, bounds the listing.
    for_each_name(dir, &top, u64::MAX, |name| {
        if let Err(e) = budget.take() {
            failed = Some(e);
            return false;
        }
        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(|st| FileType::from_raw_mode(st.st_mode)) {
            Ok(FileType::Directory) => {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                if let Ok(sub) = rustix::fs::openat(dir, name, flags, Mode::empty()) {
                    failed = empty_of_files(sub.as_fd(), budget, level + 1).err();
                }
            }
            // Links are not followed, nor removed: dbench skips a dangling one.
            Ok(FileType::Symlink) | Err(_) => {}
            Ok(_) => {
                let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
            }
        }
        failed.is_none()
    })?;
    failed.map_or(Ok(()), Err)
}

/// A byte-range write lock (or its release), waited for, as LockX/UnlockX.
fn lock(fd: &OwnedFd, take: bool, offset: i64, size: i64) {
    // SAFETY: flock is plain data; zeroed is a valid value and every field read is set.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = (if take { libc::F_WRLCK } else { libc::F_UNLCK }) as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = offset;
    fl.l_len = size;
    // SAFETY: a valid open descriptor and a pointer to a live flock for the call's duration.
    let _ = unsafe { libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_SETLKW, &fl as *const libc::flock) };
}
