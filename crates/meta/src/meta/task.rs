//! One task's work in one phase: the hot loops, written against [`FsOps`] so that any backend
//! makes the calls, and run by the phase runner ([`fsarena_workload::phase`]).
//!
//! Every operation is one syscall (or open, write, fsync, close for a file with data) with its
//! name built in a reused buffer: no allocation per operation. With `calls=path` (mdtest's way,
//! the default) the name is the item's whole path from the root, the test directory's path in
//! front, so every call walks every component as mdtest's calls do (mdtest builds
//! `DIR/test-dir.0-0/mdtest_tree.0.0/file.mdtest.0.5` and calls stat() on it); with `calls=fd`
//! it is a one-component name relative to the item's open directory, with no walk. One clock read per
//! operation: the end of one operation is the start of the next, so the loop's own bookkeeping
//! and the opening of each tree directory count towards the next operation's latency rather
//! than costing a second clock read.

use super::options::{Calls, MetaParams};
use super::paths::ItemPath;
use fsarena_engine::FsOps;
use fsarena_workload::names::NameBuf;
use fsarena_workload::phase::{Recorder, Worker};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::{CStr, CString};
use std::io;
use std::path::Path;

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

    /// The metric name (DESIGN.md's mdtest words), also the name of its operation kind.
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

impl fsarena_workload::phase::Phase for Phase {
    fn op(self) -> &'static str {
        self.metric()
    }
}

/// What a task works on, and the backend that makes its calls.
#[derive(Debug)]
pub struct Task<'a, O> {
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
    /// The same directories as `calls=path` names them: whole paths from the root, the test
    /// directory's path in front, as mdtest's calls name them (each call resolves every
    /// component). Unused with `calls=fd`.
    pub full: &'a [CString],
    /// Directory numbers in creation order.
    pub preorder: &'a [u64],
    /// True for the task that builds and removes the tree (task 0, or every task with `-u`).
    pub owns_tree: bool,
    /// True for the task that counts the tree rows: task 0 (rank 0's first). One tree counts,
    /// over task 0's process's span, as mdtest's rows are rank 0's one tree over rank 0's time:
    /// under MPI the other ranks report no tree rows, and rank 0's time runs between two
    /// meetings that it is the first to leave, as it leaves mdtest's barriers.
    pub counts_tree: bool,
    /// Bytes written per created file (0: none).
    pub write_bytes: u64,
    /// The backend of every call.
    pub ops: O,
}

/// Why an operation failed.
enum OpError {
    Sys(io::Error),
    Short { done: usize, want: usize },
}

impl From<io::Error> for OpError {
    fn from(e: io::Error) -> Self {
        OpError::Sys(e)
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpError::Sys(e) => write!(f, "{e}"),
            OpError::Short { done, want } => write!(f, "moved {done} of {want} bytes"),
        }
    }
}

impl<O: FsOps> Worker for Task<'_, O> {
    type Phase = Phase;

    fn run(&mut self, phase: Phase, rec: &mut Recorder<'_>) {
        let p = self.params;
        let none = AtFlags::empty();
        match phase {
            Phase::TreeCreation if self.owns_tree => self.tree_op(rec, "mkdir", false),
            Phase::TreeRemoval if self.owns_tree => self.tree_op(rec, "rmdir", true),
            Phase::TreeCreation | Phase::TreeRemoval => {}
            Phase::DirCreation => {
                self.items(rec, "dir", "mkdir", false, |o, d, n, _| Ok(o.mkdir(d, n, Mode::from_raw_mode(DIR_MODE))?))
            }
            Phase::DirStat => self.items(rec, "dir", "stat", false, |o, d, n, _| Ok(o.stat(d, n, none).map(drop)?)),
            Phase::DirRename => self.rename_dirs(rec),
            Phase::DirRemoval => self.items(rec, "dir", "rmdir", true, |o, d, n, _| Ok(o.rmdir(d, n)?)),
            Phase::FileCreation => {
                let mut buf = write_pattern(self.write_bytes as usize);
                let sync = p.sync;
                self.items(rec, "file", "create", true, |o, d, n, item| create_file(o, d, n, item, &mut buf, sync))
            }
            Phase::FileStat => self.items(rec, "file", "stat", false, |o, d, n, _| Ok(o.stat(d, n, none).map(drop)?)),
            Phase::FileRead => {
                let mut buf = vec![0u8; p.read_bytes as usize];
                self.items(rec, "file", "read", false, |o, d, n, _| read_file(o, d, n, &mut buf))
            }
            Phase::FileRemoval => self.items(rec, "file", "unlink", true, |o, d, n, _| Ok(o.unlink(d, n)?)),
        }
    }

    /// An untimed mkdir and rmdir in the test directory, on this thread, through the backend
    /// the phases call. mdtest's first timed call, the tree's mkdir, comes right after its own
    /// mkdir of the test directory in the same process, with the filesystem's allocation
    /// paths warm on that CPU; fsarena's test directory is made on another thread before the
    /// tasks start. Without this a tree of one directory (`-n N -u`) ran at half mdtest's rate
    /// on ext4, though the mkdir calls are the same. Task 0 alone, as only mdtest's rank 0 made
    /// the test directory: with every task warm, 4 tasks' trees (one mkdir each in the one
    /// test directory) were made at 2.2-2.5x mdtest's rate on ext4, as threads and as ranks.
    fn warm(&mut self) {
        if self.id != 0 {
            return;
        }
        let name = CString::new(format!(".fsarena-warm.{}", self.id)).unwrap_or_default();
        if self.ops.mkdir(self.test_dir, &name, Mode::from_raw_mode(DIR_MODE)).is_ok() {
            let _ = self.ops.rmdir(self.test_dir, &name);
        }
    }

    /// The tree rows count one tree, as mdtest's do, also with `unique_dir`.
    fn counts(&self, phase: Phase) -> bool {
        !phase.is_tree() || self.counts_tree
    }
}

impl<O: FsOps> Task<'_, O> {
    fn open_dir(&mut self, k: u64) -> Result<OwnedFd, String> {
        let path = self.tree[k as usize].as_c_str();
        self.ops
            .open(self.test_dir, path, OFlags::PATH | OFlags::DIRECTORY)
            .map_err(|e| format!("cannot open directory {}: {e}", self.show(k, None)))
    }

    /// `TEST_DIR/TREE_PATH[/NAME]`, for messages.
    fn show(&self, k: u64, name: Option<String>) -> String {
        let dir = self.test_path.join(self.tree[k as usize].to_string_lossy().as_ref());
        match name {
            Some(n) => dir.join(n).display().to_string(),
            None => dir.display().to_string(),
        }
    }

    /// mkdir (or rmdir, children first) of every tree directory, by its whole path (`calls=fd`: from
    /// the test directory).
    fn tree_op(&mut self, rec: &mut Recorder<'_>, what: &str, remove: bool) {
        let preorder = self.preorder;
        let order: Box<dyn Iterator<Item = &u64>> =
            if remove { Box::new(preorder.iter().rev()) } else { Box::new(preorder.iter()) };
        for (i, &k) in order.enumerate() {
            if (i as u64) & (CHECK_EVERY - 1) == 0 && rec.stopped() {
                break;
            }
            let path = match self.params.calls {
                Calls::Path => self.full[k as usize].as_c_str(),
                Calls::Fd => self.tree[k as usize].as_c_str(),
            };
            let res = if remove {
                self.ops.rmdir(self.test_dir, path)
            } else {
                self.ops.mkdir(self.test_dir, path, Mode::from_raw_mode(DIR_MODE))
            };
            if let Err(e) = res {
                return rec.fail(format!("{what} {}: {e}", self.show(k, None)));
            }
            rec.done(0);
        }
    }

    /// `op` on every item of this task, directory by directory: in creation order for
    /// creation and removal (`create_remove_items`), by item number otherwise (`mdtest_stat`).
    fn items<F>(&mut self, rec: &mut Recorder<'_>, kind: &str, what: &str, tree_order: bool, mut op: F)
    where
        F: FnMut(&mut O, BorrowedFd<'_>, &CStr, u64) -> Result<(), OpError>,
    {
        let per_dir = self.params.shape.items_per_dir;
        let prefix = format!("{kind}.mdtest.{}.", self.id);
        let mut names = if self.params.calls == Calls::Path { NameBuf::mdtest(&prefix) } else { NameBuf::new(&prefix) };
        let (preorder, full) = (self.preorder, self.full);
        let numeric: Vec<u64>;
        let order = if tree_order {
            preorder
        } else {
            numeric = (0..self.params.shape.dirs).collect();
            &numeric
        };
        // The stat and read phases with mdtest's calls make every path as mdtest does.
        if self.params.calls == Calls::Path && !tree_order {
            return self.items_by_mdtest_path(rec, kind, what, op);
        }
        'dirs: for &k in order {
            // mdtest's calls name the item by its whole path; fd calls open the item's
            // directory once and name the item alone.
            let dir = match self.params.calls {
                Calls::Path => {
                    names.set_dir(&full[k as usize]);
                    None
                }
                Calls::Fd => match self.open_dir(k) {
                    Ok(d) => Some(d),
                    Err(m) => return rec.fail(m),
                },
            };
            let at = dir.as_ref().map_or(self.test_dir, |d| d.as_fd());
            for item in k * per_dir..(k + 1) * per_dir {
                if item & (CHECK_EVERY - 1) == 0 && rec.stopped() {
                    break 'dirs;
                }
                if let Err(e) = op(&mut self.ops, at, names.name(item), item) {
                    let path = match dir {
                        Some(_) => self.show(k, Some(names.display(item))),
                        None => self.test_path.join(names.display(item)).display().to_string(),
                    };
                    return rec.fail(format!("{what} {path}: {e}"));
                }
                rec.done(0);
            }
        }
    }

    /// `op` on every item of this task by item number, each named by its whole path made as
    /// mdtest's stat and read phases make it ([`ItemPath`]).
    fn items_by_mdtest_path<F>(&mut self, rec: &mut Recorder<'_>, kind: &str, what: &str, mut op: F)
    where
        F: FnMut(&mut O, BorrowedFd<'_>, &CStr, u64) -> Result<(), OpError>,
    {
        let shape = &self.params.shape;
        let (Some(root), Some(first)) = (self.full.first(), self.tree.first()) else { return };
        // The tree's directories are `BASE.<number>`; its first is `BASE.0`.
        let first = first.to_string_lossy();
        let base = first.rsplit_once('.').map_or(first.as_ref(), |(b, _)| b);
        let prefix = format!("{kind}.mdtest.{}.", self.id);
        let mut path = ItemPath::new(root, base, &prefix, shape.items_per_dir, shape.branch);
        for item in 0..shape.items_per_dir.saturating_mul(shape.dirs) {
            if item & (CHECK_EVERY - 1) == 0 && rec.stopped() {
                break;
            }
            let Some(name) = path.build(item) else {
                return rec.fail(format!("{what} {prefix}{item}: its path is longer than mdtest's 4096 bytes"));
            };
            if let Err(e) = op(&mut self.ops, self.test_dir, name, item) {
                return rec.fail(format!("{what} {}: {e}", name.to_string_lossy()));
            }
            rec.done(0);
        }
    }

    /// mdtest 4's directory rename (`rename_dir_test`): item 0 to a temporary name, every next
    /// item to the name its predecessor just gave up, and the temporary name to the last name
    /// freed. As many renames as items, across tree directories, and afterwards every name
    /// exists again for the removal phase.
    fn rename_dirs(&mut self, rec: &mut Recorder<'_>) {
        let n = self.params.shape.items;
        let per_dir = self.params.shape.items_per_dir;
        if n < 2 {
            return;
        }
        let prefix = format!("dir.mdtest.{}.", self.id);
        if self.params.calls == Calls::Path {
            let (mut from, mut to) = (NameBuf::mdtest(&prefix), NameBuf::mdtest(&prefix));
            return self.rename_by_path(rec, &mut from, &mut to);
        }
        let (mut from, mut to) = (NameBuf::new(&prefix), NameBuf::new(&prefix));
        let opened = self.open_dir(0).and_then(|first| Ok((first, self.open_dir(0)?)));
        let (first, mut current) = match opened {
            Ok(fds) => fds,
            Err(m) => return rec.fail(m),
        };
        let mut current_k = 0;
        let mut previous: Option<OwnedFd> = None; // the directory of item i-1 when it differs
        for i in 0..n {
            if i & (CHECK_EVERY - 1) == 0 && rec.stopped() {
                break;
            }
            let k = i / per_dir;
            if k != current_k {
                match self.open_dir(k) {
                    Ok(d) => previous = Some(std::mem::replace(&mut current, d)),
                    Err(m) => return rec.fail(m),
                }
                current_k = k;
            }
            let last_dir = match &previous {
                Some(p) if i % per_dir == 0 => p.as_fd(),
                _ => current.as_fd(),
            };
            let res = if i == 0 {
                self.ops.rename(first.as_fd(), from.name(0), first.as_fd(), to.name_with(0, b"-XX"))
            } else if i == n - 1 {
                self.ops.rename(first.as_fd(), from.name_with(0, b"-XX"), last_dir, to.name(i - 1))
            } else {
                self.ops.rename(current.as_fd(), from.name(i), last_dir, to.name(i - 1))
            };
            if let Err(e) = res {
                let path = self.show(k, Some(from.display(i)));
                return rec.fail(format!("rename {path}: {e}"));
            }
            rec.done(0);
        }
    }

    /// The same rotation with mdtest's calls: both names are whole paths from the root,
    /// item `i` in directory `i / per_dir`.
    fn rename_by_path(&mut self, rec: &mut Recorder<'_>, from: &mut NameBuf, to: &mut NameBuf) {
        let n = self.params.shape.items;
        let per_dir = self.params.shape.items_per_dir;
        let full = self.full;
        let dir_of = |i: u64| full[(i / per_dir) as usize].as_c_str();
        for i in 0..n {
            if i & (CHECK_EVERY - 1) == 0 && rec.stopped() {
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
            if let Err(e) = self.ops.rename(self.test_dir, f, self.test_dir, t) {
                let path = self.test_path.join(f.to_string_lossy().as_ref()).display().to_string();
                return rec.fail(format!("rename {path}: {e}"));
            }
            rec.done(0);
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
fn create_file<O: FsOps>(
    ops: &mut O,
    dir: BorrowedFd<'_>,
    name: &CStr,
    item: u64,
    buf: &mut [u8],
    sync: bool,
) -> Result<(), OpError> {
    let flags = OFlags::RDWR | OFlags::EXCL | OFlags::NOFOLLOW;
    let fd = ops.create(dir, name, flags, Mode::from_raw_mode(FILE_MODE))?;
    if !buf.is_empty() {
        let stamp = item.to_ne_bytes();
        let n = buf.len().min(8);
        buf[..n].copy_from_slice(&stamp[..n]);
        let mut done = 0;
        while done < buf.len() {
            match ops.write(fd.as_fd(), &buf[done..])? {
                0 => return Err(OpError::Short { done, want: buf.len() }),
                w => done += w,
            }
        }
        if sync {
            ops.fsync(fd.as_fd())?;
        }
    }
    Ok(())
}

/// Opens one file as mdtest does, `O_RDWR` (mdtest passes `O_RDONLY`, 0, as IOR's flags,
/// which `POSIX_Open` reads as neither read-only nor write-only), and reads `buf.len()` bytes
/// from its start (none: open and close only). `O_NOFOLLOW`: a link at the name is refused.
#[inline]
fn read_file<O: FsOps>(ops: &mut O, dir: BorrowedFd<'_>, name: &CStr, buf: &mut [u8]) -> Result<(), OpError> {
    let fd = ops.open(dir, name, OFlags::RDWR | OFlags::NOFOLLOW)?;
    let mut done = 0;
    while done < buf.len() {
        match ops.read(fd.as_fd(), &mut buf[done..])? {
            0 => return Err(OpError::Short { done, want: buf.len() }),
            r => done += r,
        }
    }
    Ok(())
}
