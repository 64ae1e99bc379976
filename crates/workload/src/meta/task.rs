//! One task's work in one phase: the hot loops.
//!
//! Every operation is one syscall (or open, write, fsync, close for a file with data) with its
//! name built in a reused buffer: no allocation per operation. With `calls=path` (mdtest's way,
//! the default) the name is the item's whole path from the test directory, so every call walks
//! the tree's levels as mdtest's calls do; with `calls=fd` it is a one-component name relative
//! to the item's open directory, with no walk. The test directory itself is an open descriptor
//! in both modes, so a link planted in its place is never followed. One clock read per
//! operation: the end of one operation is the start of the next, so the loop's own bookkeeping
//! and the opening of each tree directory count towards the next operation's latency rather
//! than costing a second clock read.

use super::names::NameBuf;
use super::options::{Calls, MetaParams};
use fsarena_stats::LatencyHistogram;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// mdtest's `DIRMODE`: rwxrwxr-x.
const DIR_MODE: u32 = 0o775;
/// mdtest's `FILEMODE`: rw-rw-r--.
const FILE_MODE: u32 = 0o664;
/// Operations between two looks at the stop flags (a power of two: the test is a mask).
const CHECK_EVERY: u64 = 64;

/// mdtest's phases, in the order of its summary table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// mkdir of every item directory.
    DirCreation,
    /// stat of every item directory.
    DirStat,
    /// rename of every item directory (mdtest 4's rotation).
    DirRename,
    /// rmdir of every item directory.
    DirRemoval,
    /// open(O_RDWR|O_CREAT), write, fsync, close of every file.
    FileCreation,
    /// stat of every file.
    FileStat,
    /// open(O_RDWR), read, close of every file.
    FileRead,
    /// unlink of every file.
    FileRemoval,
    /// mkdir of the tree's directories.
    TreeCreation,
    /// rmdir of the tree's directories.
    TreeRemoval,
}

impl Phase {
    /// True for the phases that build or remove the tree, whose rows count one tree (task
    /// 0's), as mdtest's do.
    pub fn is_tree(self) -> bool {
        matches!(self, Phase::TreeCreation | Phase::TreeRemoval)
    }

    /// Every phase, in mdtest's summary order.
    pub const ALL: [Phase; 10] = [
        Phase::DirCreation,
        Phase::DirStat,
        Phase::DirRename,
        Phase::DirRemoval,
        Phase::FileCreation,
        Phase::FileStat,
        Phase::FileRead,
        Phase::FileRemoval,
        Phase::TreeCreation,
        Phase::TreeRemoval,
    ];

    /// The metric name (DESIGN.md's mdtest words).
    pub fn metric(self) -> &'static str {
        match self {
            Phase::DirCreation => "dir_creation",
            Phase::DirStat => "dir_stat",
            Phase::DirRename => "dir_rename",
            Phase::DirRemoval => "dir_removal",
            Phase::FileCreation => "file_creation",
            Phase::FileStat => "file_stat",
            Phase::FileRead => "file_read",
            Phase::FileRemoval => "file_removal",
            Phase::TreeCreation => "tree_creation",
            Phase::TreeRemoval => "tree_removal",
        }
    }
}

/// What one task measured in one phase; the phase's time is taken around it, over all tasks.
#[derive(Debug)]
pub struct PhaseRun {
    /// Operations done.
    pub ops: u64,
    /// Latency of every operation.
    pub hist: LatencyHistogram,
    /// The first error, naming the path.
    pub error: Option<String>,
}

impl PhaseRun {
    /// Nothing measured yet.
    pub fn new() -> Self {
        Self { ops: 0, hist: LatencyHistogram::new(), error: None }
    }
}

/// What a task works on; shared read-only between the phases.
#[derive(Debug)]
pub struct Task<'a> {
    /// The task's number (mdtest's rank).
    pub id: u32,
    /// The run's parameters.
    pub params: &'a MetaParams,
    /// The test directory (`test-dir.0-0`), for messages.
    pub test_path: &'a Path,
    /// Its descriptor.
    pub test_dir: BorrowedFd<'a>,
    /// Paths of the tree's directories relative to the test directory, by number.
    pub tree: &'a [CString],
    /// Directory numbers in creation order.
    pub preorder: &'a [u64],
    /// True for the task that builds and removes the tree (task 0, or every task with `-u`).
    pub owns_tree: bool,
    /// Set by a task that failed: the others stop.
    pub abort: &'a AtomicBool,
    /// Set on Ctrl-C.
    pub stop: &'a AtomicBool,
    /// Bytes written per created file (0: none).
    pub write_bytes: u64,
}

/// Why an operation failed.
enum OpError {
    Sys(Errno),
    Short { done: usize, want: usize },
}

impl From<Errno> for OpError {
    fn from(e: Errno) -> Self {
        OpError::Sys(e)
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpError::Sys(e) => write!(f, "{}", std::io::Error::from(*e)),
            OpError::Short { done, want } => write!(f, "moved {done} of {want} bytes"),
        }
    }
}

impl Task<'_> {
    /// Runs `phase` and records it in `rec`. The clock is made once per task, before the
    /// phases: making one calibrates it, which would count towards the phase's span.
    pub fn run(&self, phase: Phase, rec: &mut PhaseRun, clock: &quanta::Clock) {
        let p = self.params;
        let none = AtFlags::empty();
        match phase {
            Phase::TreeCreation if self.owns_tree => self.tree_op(clock, rec, "mkdir", false),
            Phase::TreeRemoval if self.owns_tree => self.tree_op(clock, rec, "rmdir", true),
            Phase::TreeCreation | Phase::TreeRemoval => {}
            Phase::DirCreation => self.items(clock, rec, "dir", "mkdir", false, |d, n, _| {
                Ok(rustix::fs::mkdirat(d, n, Mode::from_raw_mode(DIR_MODE))?)
            }),
            Phase::DirStat => {
                self.items(clock, rec, "dir", "stat", false, |d, n, _| Ok(rustix::fs::statat(d, n, none).map(drop)?))
            }
            Phase::DirRename => self.rename_dirs(clock, rec),
            Phase::DirRemoval => self
                .items(clock, rec, "dir", "rmdir", true, |d, n, _| Ok(rustix::fs::unlinkat(d, n, AtFlags::REMOVEDIR)?)),
            Phase::FileCreation => {
                let mut buf = write_pattern(self.write_bytes as usize);
                let sync = p.sync;
                self.items(clock, rec, "file", "create", true, |d, n, item| create_file(d, n, item, &mut buf, sync))
            }
            Phase::FileStat => {
                self.items(clock, rec, "file", "stat", false, |d, n, _| Ok(rustix::fs::statat(d, n, none).map(drop)?))
            }
            Phase::FileRead => {
                let mut buf = vec![0u8; p.read_bytes as usize];
                self.items(clock, rec, "file", "read", false, |d, n, _| read_file(d, n, &mut buf))
            }
            Phase::FileRemoval => {
                self.items(clock, rec, "file", "unlink", true, |d, n, _| Ok(rustix::fs::unlinkat(d, n, none)?))
            }
        }
    }

    fn stopped(&self) -> bool {
        self.abort.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    fn fail(&self, rec: &mut PhaseRun, message: String) {
        rec.error.get_or_insert(message);
        self.abort.store(true, Ordering::Relaxed);
    }

    fn open_dir(&self, k: u64) -> Result<OwnedFd, String> {
        let path = &self.tree[k as usize];
        rustix::fs::openat(
            self.test_dir,
            path.as_c_str(),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot open directory {}: {}", self.show(k, None), std::io::Error::from(e)))
    }

    /// `TEST_DIR/TREE_PATH[/NAME]`, for messages.
    fn show(&self, k: u64, name: Option<String>) -> String {
        let dir = self.test_path.join(self.tree[k as usize].to_string_lossy().as_ref());
        match name {
            Some(n) => dir.join(n).display().to_string(),
            None => dir.display().to_string(),
        }
    }

    /// mkdir (or rmdir, children first) of every tree directory, by path from the test directory.
    fn tree_op(&self, clock: &quanta::Clock, rec: &mut PhaseRun, what: &str, remove: bool) {
        let mut prev = clock.raw();
        let order: Box<dyn Iterator<Item = &u64>> =
            if remove { Box::new(self.preorder.iter().rev()) } else { Box::new(self.preorder.iter()) };
        for (i, &k) in order.enumerate() {
            if (i as u64) & (CHECK_EVERY - 1) == 0 && self.stopped() {
                break;
            }
            let path = self.tree[k as usize].as_c_str();
            let res = if remove {
                rustix::fs::unlinkat(self.test_dir, path, AtFlags::REMOVEDIR)
            } else {
                rustix::fs::mkdirat(self.test_dir, path, Mode::from_raw_mode(DIR_MODE))
            };
            let now = clock.raw();
            if let Err(e) = res {
                self.fail(rec, format!("{what} {}: {}", self.show(k, None), std::io::Error::from(e)));
                break;
            }
            rec.hist.record(clock.delta_as_nanos(prev, now));
            rec.ops += 1;
            prev = now;
        }
    }

    /// `op` on every item of this task, directory by directory: in creation order for
    /// creation and removal (`create_remove_items`), by item number otherwise (`mdtest_stat`).
    fn items<F>(&self, clock: &quanta::Clock, rec: &mut PhaseRun, kind: &str, what: &str, tree_order: bool, mut op: F)
    where
        F: FnMut(BorrowedFd<'_>, &CStr, u64) -> Result<(), OpError>,
    {
        let per_dir = self.params.shape.items_per_dir;
        let mut names = NameBuf::new(&format!("{kind}.mdtest.{}.", self.id));
        let numeric: Vec<u64>;
        let order = if tree_order {
            self.preorder
        } else {
            numeric = (0..self.params.shape.dirs).collect();
            &numeric
        };
        let mut prev = clock.raw();
        'dirs: for &k in order {
            // mdtest's calls name the item by its path from the test directory; fd calls open
            // the item's directory once and name the item alone.
            let dir = match self.params.calls {
                Calls::Path => {
                    names.set_dir(&self.tree[k as usize]);
                    None
                }
                Calls::Fd => match self.open_dir(k) {
                    Ok(d) => Some(d),
                    Err(m) => {
                        self.fail(rec, m);
                        break;
                    }
                },
            };
            let at = dir.as_ref().map_or(self.test_dir, |d| d.as_fd());
            for item in k * per_dir..(k + 1) * per_dir {
                if item & (CHECK_EVERY - 1) == 0 && self.stopped() {
                    break 'dirs;
                }
                let res = op(at, names.name(item), item);
                let now = clock.raw();
                if let Err(e) = res {
                    let path = match dir {
                        Some(_) => self.show(k, Some(names.display(item))),
                        None => self.test_path.join(names.display(item)).display().to_string(),
                    };
                    self.fail(rec, format!("{what} {path}: {e}"));
                    break 'dirs;
                }
                rec.hist.record(clock.delta_as_nanos(prev, now));
                rec.ops += 1;
                prev = now;
            }
        }
    }

    /// mdtest 4's directory rename (`rename_dir_test`): item 0 to a temporary name, every next
    /// item to the name its predecessor just gave up, and the temporary name to the last name
    /// freed. As many renames as items, across tree directories, and afterwards every name
    /// exists again for the removal phase.
    fn rename_dirs(&self, clock: &quanta::Clock, rec: &mut PhaseRun) {
        let n = self.params.shape.items;
        let per_dir = self.params.shape.items_per_dir;
        if n < 2 {
            return;
        }
        let prefix = format!("dir.mdtest.{}.", self.id);
        let (mut from, mut to) = (NameBuf::new(&prefix), NameBuf::new(&prefix));
        if self.params.calls == Calls::Path {
            return self.rename_by_path(clock, rec, &mut from, &mut to);
        }
        let mut prev = clock.raw();
        let opened = self.open_dir(0).and_then(|first| Ok((first, self.open_dir(0)?)));
        let (first, mut current) = match opened {
            Ok(fds) => fds,
            Err(m) => return self.fail(rec, m),
        };
        let mut current_k = 0;
        let mut previous: Option<OwnedFd> = None; // the directory of item i-1 when it differs
        for i in 0..n {
            if i & (CHECK_EVERY - 1) == 0 && self.stopped() {
                break;
            }
            let k = i / per_dir;
            if k != current_k {
                match self.open_dir(k) {
                    Ok(d) => previous = Some(std::mem::replace(&mut current, d)),
                    Err(m) => return self.fail(rec, m),
                }
                current_k = k;
            }
            let last_dir = match &previous {
                Some(p) if i % per_dir == 0 => p.as_fd(),
                _ => current.as_fd(),
            };
            let res = if i == 0 {
                rustix::fs::renameat(&first, from.name(0), &first, to.name_with(0, b"-XX"))
            } else if i == n - 1 {
                rustix::fs::renameat(&first, from.name_with(0, b"-XX"), last_dir, to.name(i - 1))
            } else {
                rustix::fs::renameat(current.as_fd(), from.name(i), last_dir, to.name(i - 1))
            };
            let now = clock.raw();
            if let Err(e) = res {
                let path = self.show(k, Some(from.display(i)));
                return self.fail(rec, format!("rename {path}: {}", std::io::Error::from(e)));
            }
            rec.hist.record(clock.delta_as_nanos(prev, now));
            rec.ops += 1;
            prev = now;
        }
    }

    /// The same rotation with mdtest's calls: both names are whole paths from the test
    /// directory, item `i` in directory `i / per_dir`.
    fn rename_by_path(&self, clock: &quanta::Clock, rec: &mut PhaseRun, from: &mut NameBuf, to: &mut NameBuf) {
        let n = self.params.shape.items;
        let per_dir = self.params.shape.items_per_dir;
        let dir_of = |i: u64| self.tree[(i / per_dir) as usize].as_c_str();
        let mut prev = clock.raw();
        for i in 0..n {
            if i & (CHECK_EVERY - 1) == 0 && self.stopped() {
                break;
            }
            // (from, to): item 0 to `0-XX`, item i to i-1, and `0-XX` to the last name freed.
            let (f, t) = if i == 0 {
                from.set_dir(dir_of(0));
                to.set_dir(dir_of(0));
                (from.name(0), to.name_with(0, b"-XX"))
            } else if i == n - 1 {
                from.set_dir(dir_of(0));
                to.set_dir(dir_of(i - 1));
                (from.name_with(0, b"-XX"), to.name(i - 1))
            } else {
                from.set_dir(dir_of(i));
                to.set_dir(dir_of(i - 1));
                (from.name(i), to.name(i - 1))
            };
            let res = rustix::fs::renameat(self.test_dir, f, self.test_dir, t);
            let now = clock.raw();
            if let Err(e) = res {
                let path = self.test_path.join(f.to_string_lossy().as_ref()).display().to_string();
                return self.fail(rec, format!("rename {path}: {}", std::io::Error::from(e)));
            }
            rec.hist.record(clock.delta_as_nanos(prev, now));
            rec.ops += 1;
            prev = now;
        }
    }
}

/// mdtest's write buffer: byte `i` is `i + 1`; the item number goes in front per file.
fn write_pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i + 1) as u8).collect()
}

/// Creates one file with mdtest's flags (`O_CREAT|O_RDWR`, mode 0664; `POSIX_Create` in
/// `aiori-POSIX.c`) and writes the buffer (stamped with the item number, as mdtest does) with
/// an optional fsync; the close is the drop. `O_EXCL|O_NOFOLLOW` on top, which cost nothing
/// on a name that does not exist yet: a file or link planted at the name is never opened.
#[inline]
fn create_file(dir: BorrowedFd<'_>, name: &CStr, item: u64, buf: &mut [u8], sync: bool) -> Result<(), OpError> {
    let flags = OFlags::CREATE | OFlags::RDWR | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(FILE_MODE))?;
    if !buf.is_empty() {
        let stamp = item.to_ne_bytes();
        let n = buf.len().min(8);
        buf[..n].copy_from_slice(&stamp[..n]);
        let mut done = 0;
        while done < buf.len() {
            match rustix::io::write(&fd, &buf[done..])? {
                0 => return Err(OpError::Short { done, want: buf.len() }),
                w => done += w,
            }
        }
        if sync {
            rustix::fs::fsync(&fd)?;
        }
    }
    Ok(())
}

/// Opens one file as mdtest does, `O_RDWR` (mdtest passes `O_RDONLY`, 0, as IOR's flags,
/// which `POSIX_Open` reads as neither read-only nor write-only), and reads `buf.len()` bytes
/// from its start (none: open and close only). `O_NOFOLLOW`: a link at the name is refused.
#[inline]
fn read_file(dir: BorrowedFd<'_>, name: &CStr, buf: &mut [u8]) -> Result<(), OpError> {
    let fd = rustix::fs::openat(dir, name, OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::read(&fd, &mut buf[done..])? {
            0 => return Err(OpError::Short { done, want: buf.len() }),
            r => done += r,
        }
    }
    Ok(())
}
