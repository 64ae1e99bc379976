//! File-level recording, for a `fuse:` target's daemon: the directory it keeps its data in
//! (`{work}` in its command) is served by fsarena as a logging passthrough onto a plain
//! directory of the work directory. Every name operation (create, mkdir, symlink, link,
//! rename, unlink, rmdir), metadata change (mode, owner, xattrs), data write, truncate,
//! fsync/fdatasync and fsyncdir the daemon makes there is logged in order, then done on the
//! backing directory and answered. A crash state at point p is rebuilt from that log into a
//! fresh directory, and the daemon is started again on it.
//!
//! Writes are logged in pieces that do not cross a 4 KiB boundary, so that a crash state can
//! lose any part of a file's unsynced data at that granularity by leaving pieces out.
//! `sync()` and `syncfs()` never reach a FUSE daemon, so they log nothing.
//!
//! The server is a thread of fsarena (fuser's background session), not a process of its own
//! as the block recorder's: nothing here waits on a loop device, and every FUSE wait is
//! killable, so a SIGKILLed fsarena always exits and its end closes the connection.
//! Hand-written because the point is the log: no passthrough crate logs its operations.

use crate::TargetError;
use fuser::{
    FileAttr, FileType, Filesystem, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The granularity at which unsynced data may be lost.
pub const PIECE: u64 = 4096;

/// One logged operation. Paths are relative to the recorded directory, as they were when the
/// operation was made; `id` names the file across renames (for "its last fsync").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// A new regular file.
    Create { path: PathBuf, mode: u32 },
    /// A new directory.
    Mkdir { path: PathBuf, mode: u32 },
    /// A new symbolic link.
    Symlink { path: PathBuf, target: PathBuf },
    /// A new hard link `to` of `from`.
    Link { from: PathBuf, to: PathBuf },
    /// `from` renamed over `to`.
    Rename { from: PathBuf, to: PathBuf },
    /// A name removed.
    Unlink { path: PathBuf },
    /// A directory removed.
    Rmdir { path: PathBuf },
    /// Mode bits changed.
    Chmod { path: PathBuf, mode: u32 },
    /// An extended attribute set (`value`) or removed (None).
    Xattr { path: PathBuf, name: Vec<u8>, value: Option<Vec<u8>> },
    /// Data written (within one 4 KiB piece).
    Write { id: u64, path: PathBuf, offset: u64, data: Vec<u8> },
    /// Size set (truncate, or an extending fallocate).
    Truncate { id: u64, path: PathBuf, size: u64 },
    /// fsync (or fdatasync) of a file: its data and size are durable.
    Fsync { id: u64, path: PathBuf },
    /// fsync of a directory: its entries are durable.
    FsyncDir { path: PathBuf },
    /// The workload's mark `n`, after its persistence call `n` returned.
    Mark(u32),
    /// Everything before is durable: the set-up of a generated workload, made durable by
    /// fsarena whatever the daemon's own fsync does (the operation's persistence call is
    /// what is tested).
    Barrier,
}

impl FileOp {
    /// Data: lost at a crash unless its file was fsynced after it.
    pub fn is_data(&self) -> bool {
        matches!(self, Self::Write { .. } | Self::Truncate { .. })
    }

    /// A persistence point.
    pub fn is_persist(&self) -> bool {
        matches!(self, Self::Fsync { .. } | Self::FsyncDir { .. })
    }

    /// A name or metadata operation: kept at every later crash point (in order) with
    /// `names=kept`; with `names=lossy` (the default) only once a later fsync covers it.
    pub fn is_name(&self) -> bool {
        !self.is_data() && !self.is_persist() && !matches!(self, Self::Mark(_) | Self::Barrier)
    }

    /// The name a name operation makes (a new file, directory or link; a rename's new name).
    pub fn subject(&self) -> Option<&Path> {
        match self {
            Self::Create { path, .. } | Self::Mkdir { path, .. } | Self::Symlink { path, .. } => Some(path),
            Self::Link { to, .. } | Self::Rename { to, .. } => Some(to),
            _ => None,
        }
    }

    /// The directories whose entries a name operation changes.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        match self {
            Self::Create { path, .. }
            | Self::Mkdir { path, .. }
            | Self::Symlink { path, .. }
            | Self::Unlink { path }
            | Self::Rmdir { path } => vec![parent(path)],
            Self::Link { to, .. } => vec![parent(to)],
            Self::Rename { from, to } => vec![parent(from), parent(to)],
            _ => Vec::new(),
        }
    }
}

/// The log, shared by the server thread and fsarena.
#[derive(Debug, Default)]
pub struct FileLog {
    ops: Vec<FileOp>,
    bytes: u64,
    max: u64,
}

type Shared = Arc<Mutex<FileLog>>;

fn lock(log: &Mutex<FileLog>) -> std::sync::MutexGuard<'_, FileLog> {
    log.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

const TTL: Duration = Duration::ZERO;

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// The logging passthrough.
struct Passthrough {
    root: PathBuf,
    /// Inode → path relative to `root`.
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    files: HashMap<u64, File>,
    next_fh: u64,
    log: Shared,
}

impl Passthrough {
    fn rel(&self, ino: u64) -> Result<PathBuf, i32> {
        self.paths.get(&ino).cloned().ok_or(libc::ENOENT)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    fn ino_of(&mut self, rel: &Path) -> u64 {
        if let Some(i) = self.inos.get(rel) {
            return *i;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.paths.insert(ino, rel.to_path_buf());
        self.inos.insert(rel.to_path_buf(), ino);
        ino
    }

    fn forget_path(&mut self, rel: &Path) {
        if let Some(i) = self.inos.remove(rel) {
            self.paths.remove(&i);
        }
    }

    fn attr(&mut self, rel: &Path) -> Result<FileAttr, i32> {
        let md = std::fs::symlink_metadata(self.full(rel)).map_err(|e| errno(&e))?;
        let ino = if rel.as_os_str().is_empty() { fuser::FUSE_ROOT_ID } else { self.ino_of(rel) };
        let t = |s: i64, ns: i64| UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
        let ft = md.file_type();
        use std::os::unix::fs::FileTypeExt;
        let kind = if ft.is_dir() {
            FileType::Directory
        } else if ft.is_symlink() {
            FileType::Symlink
        } else if ft.is_fifo() {
            FileType::NamedPipe
        } else if ft.is_char_device() {
            FileType::CharDevice
        } else if ft.is_block_device() {
            FileType::BlockDevice
        } else if ft.is_socket() {
            FileType::Socket
        } else {
            FileType::RegularFile
        };
        Ok(FileAttr {
            ino,
            size: md.len(),
            blocks: md.blocks(),
            atime: t(md.atime(), md.atime_nsec()),
            mtime: t(md.mtime(), md.mtime_nsec()),
            ctime: t(md.ctime(), md.ctime_nsec()),
            crtime: t(md.ctime(), md.ctime_nsec()),
            kind,
            perm: (md.mode() & 0o7777) as u16,
            nlink: md.nlink() as u32,
            uid: md.uid(),
            gid: md.gid(),
            rdev: md.rdev() as u32,
            blksize: md.blksize() as u32,
            flags: 0,
        })
    }

    fn log(&self, op: FileOp) {
        lock(&self.log).ops.push(op);
    }

    /// Whether `len` more bytes of data fit `max_log` (ENOSPC if not): asked before a write is
    /// done, so that every write done is logged.
    fn room(&self, len: u64) -> Result<(), i32> {
        let log = lock(&self.log);
        if log.bytes + len > log.max {
            return Err(libc::ENOSPC);
        }
        Ok(())
    }

    /// Logs a write done, in pieces within 4 KiB boundaries; refused (ENOSPC) past `max_log`.
    fn log_write(&self, id: u64, path: &Path, offset: u64, data: &[u8]) -> Result<(), i32> {
        let mut log = lock(&self.log);
        if log.bytes + data.len() as u64 > log.max {
            return Err(libc::ENOSPC);
        }
        log.bytes += data.len() as u64;
        let mut at = 0usize;
        while at < data.len() {
            let off = offset + at as u64;
            let n = ((PIECE - off % PIECE) as usize).min(data.len() - at);
            log.ops.push(FileOp::Write { id, path: path.to_path_buf(), offset: off, data: data[at..at + n].to_vec() });
            at += n;
        }
        Ok(())
    }

    fn entry(&mut self, rel: &Path, reply: ReplyEntry) {
        match self.attr(rel) {
            Ok(a) => reply.entry(&TTL, &a, 0),
            Err(e) => reply.error(e),
        }
    }

    fn child(&self, parent: u64, name: &OsStr) -> Result<PathBuf, i32> {
        Ok(self.rel(parent)?.join(name))
    }

    /// unlink, or rmdir when `dir`: done, then logged.
    fn remove(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<(), i32> {
        let rel = self.child(parent, name)?;
        let full = self.full(&rel);
        if dir {
            std::fs::remove_dir(&full).map_err(|e| errno(&e))?;
            self.log(FileOp::Rmdir { path: rel.clone() });
        } else {
            std::fs::remove_file(&full).map_err(|e| errno(&e))?;
            self.log(FileOp::Unlink { path: rel.clone() });
        }
        self.forget_path(&rel);
        Ok(())
    }
}

impl Filesystem for Passthrough {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name) {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.rel(ino).and_then(|rel| self.attr(&rel)) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let r = (|| {
            let rel = self.rel(ino)?;
            let full = self.full(&rel);
            if let Some(m) = mode {
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(m & 0o7777)).map_err(|e| errno(&e))?;
                self.log(FileOp::Chmod { path: rel.clone(), mode: m & 0o7777 });
            }
            if uid.is_some() || gid.is_some() {
                // Owners are not part of what a daemon's crash state is checked for: done,
                // not logged (the state is rebuilt as root).
                std::os::unix::fs::lchown(&full, uid, gid).map_err(|e| errno(&e))?;
            }
            if let Some(s) = size {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&full)
                    .and_then(|f| f.set_len(s))
                    .map_err(|e| errno(&e))?;
                self.log(FileOp::Truncate { id: ino, path: rel.clone(), size: s });
            }
            if atime.is_some() || mtime.is_some() {
                // Timestamps are never compared: set, not logged.
                let when = |t: Option<TimeOrNow>| match t {
                    Some(TimeOrNow::SpecificTime(s)) => Some(s),
                    Some(TimeOrNow::Now) => Some(SystemTime::now()),
                    None => None,
                };
                if let Ok(f) = File::options().write(true).open(&full) {
                    let mut times = std::fs::FileTimes::new();
                    if let Some(a) = when(atime) {
                        times = times.set_accessed(a);
                    }
                    if let Some(m) = when(mtime) {
                        times = times.set_modified(m);
                    }
                    let _ = f.set_times(times);
                }
            }
            self.attr(&rel)
        })();
        match r {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&mut self, _req: &Request<'_>, ino: u64, reply: ReplyData) {
        match self.rel(ino).and_then(|rel| std::fs::read_link(self.full(&rel)).map_err(|e| errno(&e))) {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        // Regular files only: a daemon keeps data, not devices.
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(libc::EPERM);
        }
        let r = self.child(parent, name).and_then(|rel| {
            File::options().write(true).create_new(true).open(self.full(&rel)).map_err(|e| errno(&e))?;
            self.log(FileOp::Create { path: rel.clone(), mode: mode & 0o7777 });
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, mode: u32, _umask: u32, reply: ReplyEntry) {
        let r = self.child(parent, name).and_then(|rel| {
            let full = self.full(&rel);
            std::fs::create_dir(&full).map_err(|e| errno(&e))?;
            self.log(FileOp::Mkdir { path: rel.clone(), mode: mode & 0o7777 });
            let _ = std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode & 0o7777));
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, false) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, true) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(&mut self, _req: &Request<'_>, parent: u64, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let r = self.child(parent, link_name).and_then(|rel| {
            std::os::unix::fs::symlink(target, self.full(&rel)).map_err(|e| errno(&e))?;
            self.log(FileOp::Symlink { path: rel.clone(), target: target.to_path_buf() });
            Ok(rel)
        });
        match r {
            Ok(rel) => self.entry(&rel, reply),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        reply: ReplyEmpty,
    ) {
        // RENAME_NOREPLACE and RENAME_EXCHANGE are not passed through.
        if flags != 0 {
            return reply.error(libc::EINVAL);
        }
        let r = self.child(parent, name).and_then(|from| {
            let to = self.child(newparent, newname)?;
            std::fs::rename(self.full(&from), self.full(&to)).map_err(|e| errno(&e))?;
            self.log(FileOp::Rename { from: from.clone(), to: to.clone() });
            self.forget_path(&to);
            // Every known path at or below `from` moves below `to`.
            let moved: Vec<(PathBuf, u64)> =
                self.inos.iter().filter(|(p, _)| p.starts_with(&from)).map(|(p, i)| (p.clone(), *i)).collect();
            for (p, i) in moved {
                let Ok(rest) = p.strip_prefix(&from) else { continue };
                let new = if rest.as_os_str().is_empty() { to.clone() } else { to.join(rest) };
                self.inos.remove(&p);
                self.inos.insert(new.clone(), i);
                self.paths.insert(i, new);
            }
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(&mut self, _req: &Request<'_>, ino: u64, newparent: u64, newname: &OsStr, reply: ReplyEntry) {
        let r = self.rel(ino).and_then(|from| {
            let to = self.child(newparent, newname)?;
            std::fs::hard_link(self.full(&from), self.full(&to)).map_err(|e| errno(&e))?;
            self.log(FileOp::Link { from: from.clone(), to: to.clone() });
            Ok(from)
        });
        // The new name answers with the inode the kernel asked about.
        match r.and_then(|from| self.attr(&from)) {
            Ok(a) => reply.entry(&TTL, &a, 0),
            Err(e) => reply.error(e),
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        let r = self.rel(ino).and_then(|rel| {
            let mode = flags & libc::O_ACCMODE;
            File::options()
                .read(mode != libc::O_WRONLY)
                .write(mode != libc::O_RDONLY)
                .open(self.full(&rel))
                .map_err(|e| errno(&e))
        });
        match r {
            Ok(f) => {
                let fh = self.next_fh;
                self.next_fh += 1;
                self.files.insert(fh, f);
                reply.opened(fh, 0);
            }
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let r = self.child(parent, name).and_then(|rel| {
            let full = self.full(&rel);
            let f = File::options().read(true).write(true).create_new(true).open(&full).map_err(|e| errno(&e))?;
            self.log(FileOp::Create { path: rel.clone(), mode: mode & 0o7777 });
            let _ = std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode & 0o7777));
            Ok((rel, f))
        });
        match r.and_then(|(rel, f)| Ok((self.attr(&rel)?, f))) {
            Ok((a, f)) => {
                let fh = self.next_fh;
                self.next_fh += 1;
                self.files.insert(fh, f);
                reply.created(&TTL, &a, 0, fh, 0);
            }
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let Some(f) = self.files.get(&fh) else { return reply.error(libc::EBADF) };
        let mut buf = vec![0u8; size as usize];
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], offset.max(0) as u64 + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return reply.error(errno(&e)),
            }
        }
        reply.data(&buf[..done]);
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let offset = offset.max(0) as u64;
        let r = self.rel(ino).and_then(|rel| {
            self.room(data.len() as u64)?;
            let f = self.files.get(&fh).ok_or(libc::EBADF)?;
            f.write_all_at(data, offset).map_err(|e| errno(&e))?;
            self.log_write(ino, &rel, offset, data)
        });
        match r {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        _flags: i32,
        _lock_owner: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.files.remove(&fh);
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let r = self.rel(ino).and_then(|rel| {
            match self.files.get(&fh) {
                Some(f) => f.sync_all(),
                None => File::open(self.full(&rel)).and_then(|f| f.sync_all()),
            }
            .map_err(|e| errno(&e))?;
            // Logged once it is done: a crash after it keeps what it covered.
            self.log(FileOp::Fsync { id: ino, path: rel });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&mut self, _req: &Request<'_>, _ino: u64, _flags: i32, reply: ReplyOpen) {
        reply.opened(0, 0);
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        let rel = match self.rel(ino) {
            Ok(r) => r,
            Err(e) => return reply.error(e),
        };
        let listed = match std::fs::read_dir(self.full(&rel)) {
            Ok(d) => d,
            Err(e) => return reply.error(errno(&e)),
        };
        let mut entries: Vec<(u64, FileType, std::ffi::OsString)> =
            vec![(ino, FileType::Directory, ".".into()), (fuser::FUSE_ROOT_ID, FileType::Directory, "..".into())];
        let mut names: Vec<_> = listed.flatten().collect();
        names.sort_by_key(std::fs::DirEntry::file_name);
        for e in names {
            let kind = match e.file_type() {
                Ok(t) if t.is_dir() => FileType::Directory,
                Ok(t) if t.is_symlink() => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            let child = self.ino_of(&rel.join(e.file_name()));
            entries.push((child, kind, e.file_name()));
        }
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(child, i as i64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _flags: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let r = self.rel(ino).and_then(|rel| {
            File::open(self.full(&rel)).and_then(|d| d.sync_all()).map_err(|e| errno(&e))?;
            self.log(FileOp::FsyncDir { path: rel });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        match rustix::fs::statvfs(&self.root) {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                255,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(e.raw_os_error()),
        }
    }

    fn setxattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        let r = self.rel(ino).and_then(|rel| {
            let flags = rustix::fs::XattrFlags::from_bits_truncate(flags as u32);
            rustix::fs::lsetxattr(self.full(&rel), name, value, flags).map_err(|e| e.raw_os_error())?;
            self.log(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: Some(value.to_vec()) });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(&mut self, _req: &Request<'_>, ino: u64, name: &OsStr, size: u32, reply: ReplyXattr) {
        let r = self.rel(ino).and_then(|rel| {
            let mut buf = vec![0u8; 65536];
            let n = rustix::fs::lgetxattr(self.full(&rel), name, &mut buf).map_err(|e| e.raw_os_error())?;
            buf.truncate(n);
            Ok(buf)
        });
        xattr_reply(r, size, reply);
    }

    fn listxattr(&mut self, _req: &Request<'_>, ino: u64, size: u32, reply: ReplyXattr) {
        let r = self.rel(ino).and_then(|rel| {
            let mut buf = vec![0u8; 65536];
            let n = rustix::fs::llistxattr(self.full(&rel), &mut buf).map_err(|e| e.raw_os_error())?;
            buf.truncate(n);
            Ok(buf)
        });
        xattr_reply(r, size, reply);
    }

    fn removexattr(&mut self, _req: &Request<'_>, ino: u64, name: &OsStr, reply: ReplyEmpty) {
        let r = self.rel(ino).and_then(|rel| {
            rustix::fs::lremovexattr(self.full(&rel), name).map_err(|e| e.raw_os_error())?;
            self.log(FileOp::Xattr { path: rel, name: name.as_bytes().to_vec(), value: None });
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn access(&mut self, _req: &Request<'_>, _ino: u64, _mask: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        fh: u64,
        offset: i64,
        length: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let (off, len) = (offset.max(0) as u64, length.max(0) as u64);
        let r = self.rel(ino).and_then(|rel| {
            let f = self.files.get(&fh).ok_or(libc::EBADF)?;
            let before = f.metadata().map_err(|e| errno(&e))?.len();
            let flags = rustix::fs::FallocateFlags::from_bits_truncate(mode as u32);
            rustix::fs::fallocate(f, flags, off, len).map_err(|e| e.raw_os_error())?;
            let after = f.metadata().map_err(|e| errno(&e))?.len();
            if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
                // Zeroed bytes are data, logged as writes of zeros (within the file).
                let end = (off + len).min(after);
                let mut at = off;
                while at < end {
                    let n = (PIECE - at % PIECE).min(end - at);
                    self.log_write(ino, &rel, at, &vec![0u8; n as usize])?;
                    at += n;
                }
            }
            if after != before {
                self.log(FileOp::Truncate { id: ino, path: rel, size: after });
            }
            Ok(())
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

/// An xattr value or name list answered as FUSE asks: its size when `size` is 0, else the
/// bytes if they fit, else ERANGE.
fn xattr_reply(r: Result<Vec<u8>, i32>, size: u32, reply: ReplyXattr) {
    match r {
        Ok(v) if size == 0 => reply.size(v.len() as u32),
        Ok(v) if v.len() <= size as usize => reply.data(&v),
        Ok(_) => reply.error(libc::ERANGE),
        Err(e) => reply.error(e),
    }
}

/// A running logging passthrough: `mnt` serves `backing`.
pub struct FileRecorder {
    log: Shared,
    session: Option<fuser::BackgroundSession>,
}

impl std::fmt::Debug for FileRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRecorder").finish_non_exhaustive()
    }
}

impl FileRecorder {
    /// Mounts the passthrough of `backing` at `mnt` (`allow_other`: the daemon may run as
    /// another user); the log may hold `max_log` bytes of data.
    pub fn start(backing: &Path, mnt: &Path, max_log: u64) -> Result<Self, TargetError> {
        let log: Shared = Arc::new(Mutex::new(FileLog { max: max_log, ..FileLog::default() }));
        let mut fs = Passthrough {
            root: backing.to_path_buf(),
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: fuser::FUSE_ROOT_ID + 1,
            files: HashMap::new(),
            next_fh: 1,
            log: log.clone(),
        };
        fs.paths.insert(fuser::FUSE_ROOT_ID, PathBuf::new());
        fs.inos.insert(PathBuf::new(), fuser::FUSE_ROOT_ID);
        let options = [
            fuser::MountOption::FSName("fsarena-file-recorder".into()),
            fuser::MountOption::RW,
            fuser::MountOption::AllowOther,
            fuser::MountOption::DefaultPermissions,
        ];
        let session = fuser::spawn_mount2(fs, mnt, &options)
            .map_err(|e| TargetError(format!("cannot mount the file recorder at {}: {e}", mnt.display())))?;
        Ok(Self { log, session: Some(session) })
    }

    /// Writes mark `n` into the log.
    pub fn mark(&self, n: u32) {
        lock(&self.log).ops.push(FileOp::Mark(n));
    }

    /// Everything logged so far is durable (see [`FileOp::Barrier`]).
    pub fn barrier(&self) {
        lock(&self.log).ops.push(FileOp::Barrier);
    }

    /// The log so far.
    pub fn ops(&self) -> Vec<FileOp> {
        lock(&self.log).ops.clone()
    }

    /// Bytes of data logged.
    pub fn logged_bytes(&self) -> u64 {
        lock(&self.log).bytes
    }

    /// Unmounts (the caller has stopped the daemon).
    pub fn stop(mut self) {
        if let Some(s) = self.session.take() {
            s.join();
        }
    }
}

impl Drop for FileRecorder {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            s.join();
        }
    }
}

/// Rebuilds a crash state in the empty directory `dest`: the operations `keep` selects from
/// `ops` (indexes, in log order), each done as it was logged. An operation that no longer
/// applies (its name was dropped with `names=lossy`, or its directory is gone) is skipped.
pub fn build(ops: &[FileOp], keep: &[usize], dest: &Path) -> std::io::Result<()> {
    use std::io::ErrorKind::{AlreadyExists, NotFound};
    let moot = |e: &std::io::Error| {
        matches!(e.kind(), NotFound | AlreadyExists)
            || matches!(e.raw_os_error(), Some(libc::ENOTEMPTY | libc::ENOTDIR | libc::EISDIR | libc::ENODATA))
    };
    let at = |p: &Path| dest.join(p);
    for &i in keep {
        let Some(op) = ops.get(i) else { continue };
        // Safety: fsarena runs as root, and a daemon's log may name a path through a
        // symbolic link it made (or one a dropped operation would have replaced): nothing is
        // done through a link, so nothing is made or written outside `dest`.
        if !op_paths(op).iter().all(|p| beneath(dest, p, !matches!(op, FileOp::Rename { .. } | FileOp::Unlink { .. })))
        {
            continue;
        }
        let done = match op {
            FileOp::Create { path, mode } => File::options()
                .write(true)
                .create_new(true)
                .open(at(path))
                .and_then(|f| f.set_permissions(std::fs::Permissions::from_mode(*mode))),
            FileOp::Mkdir { path, mode } => std::fs::create_dir(at(path))
                .and_then(|()| std::fs::set_permissions(at(path), std::fs::Permissions::from_mode(*mode))),
            FileOp::Symlink { path, target } => std::os::unix::fs::symlink(target, at(path)),
            FileOp::Link { from, to } => std::fs::hard_link(at(from), at(to)),
            FileOp::Rename { from, to } => std::fs::rename(at(from), at(to)),
            FileOp::Unlink { path } => std::fs::remove_file(at(path)),
            FileOp::Rmdir { path } => std::fs::remove_dir(at(path)),
            FileOp::Chmod { path, mode } => std::fs::set_permissions(at(path), std::fs::Permissions::from_mode(*mode)),
            FileOp::Xattr { path, name, value } => {
                let name = OsStr::from_bytes(name);
                match value {
                    Some(v) => rustix::fs::lsetxattr(at(path), name, v, rustix::fs::XattrFlags::empty()),
                    None => rustix::fs::lremovexattr(at(path), name),
                }
                .map_err(std::io::Error::from)
            }
            FileOp::Write { path, offset, data, .. } => {
                File::options().write(true).open(at(path)).and_then(|f| f.write_all_at(data, *offset))
            }
            FileOp::Truncate { path, size, .. } => {
                File::options().write(true).open(at(path)).and_then(|f| f.set_len(*size))
            }
            FileOp::Fsync { .. } | FileOp::FsyncDir { .. } | FileOp::Mark(_) | FileOp::Barrier => Ok(()),
        };
        match done {
            Err(e) if !moot(&e) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// The paths an operation names.
fn op_paths(op: &FileOp) -> Vec<&Path> {
    match op {
        FileOp::Create { path, .. }
        | FileOp::Mkdir { path, .. }
        | FileOp::Symlink { path, .. }
        | FileOp::Unlink { path }
        | FileOp::Rmdir { path }
        | FileOp::Chmod { path, .. }
        | FileOp::Xattr { path, .. }
        | FileOp::Write { path, .. }
        | FileOp::Truncate { path, .. } => vec![path],
        FileOp::Link { from, to } | FileOp::Rename { from, to } => vec![from, to],
        FileOp::Fsync { .. } | FileOp::FsyncDir { .. } | FileOp::Mark(_) | FileOp::Barrier => Vec::new(),
    }
}

/// Whether `rel` below `dest` is reached through no symbolic link: no component is `..` or
/// absolute, no directory on the way is a link, and (unless `link_ok`: a rename or unlink
/// acts on the link itself) the last component is not one either.
fn beneath(dest: &Path, rel: &Path, last_no_link: bool) -> bool {
    use std::path::Component;
    let parts: Vec<Component<'_>> = rel.components().collect();
    if parts.iter().any(|c| !matches!(c, Component::Normal(_))) {
        return false;
    }
    let mut at = dest.to_path_buf();
    for (k, c) in parts.iter().enumerate() {
        at.push(c);
        let last = k + 1 == parts.len();
        if last && !last_no_link {
            break;
        }
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return false;
        }
    }
    true
}

/// Which operations a crash at point `p` (before `ops[p]`) keeps for certain: every name
/// operation before it (with `lossy`, only those a later fsync before `p` covered: of a
/// directory whose entries it changed, or of the name it made, as Linux filesystems persist
/// a new file's name with its fsync), and every data operation whose file was fsynced after
/// it before `p`. The rest before `p` (data, and with `lossy` the uncovered name operations)
/// is what the crash may lose, in whole or in part: the second list, in log order.
pub fn durable_at(ops: &[FileOp], p: usize, lossy: bool) -> (Vec<usize>, Vec<usize>) {
    let (mut sure, mut unsynced) = (Vec::new(), Vec::new());
    let barrier = ops[..p].iter().rposition(|o| *o == FileOp::Barrier);
    for (j, op) in ops[..p].iter().enumerate() {
        let later = &ops[j + 1..p];
        if barrier.is_some_and(|b| j < b) {
            if op.is_name() || op.is_data() {
                sure.push(j);
            }
        } else if op.is_name() {
            let dirs = op.dirs();
            let subject = op.subject();
            let covers = |o: &FileOp| match o {
                FileOp::FsyncDir { path } => dirs.contains(path) || subject == Some(path.as_path()),
                FileOp::Fsync { path, .. } => subject == Some(path.as_path()),
                _ => false,
            };
            // Uncovered, with `lossy`: the crash may lose it or keep it, like unsynced data.
            if !lossy || later.iter().any(covers) {
                sure.push(j);
            } else {
                unsynced.push(j);
            }
        } else if op.is_data() {
            let id = match op {
                FileOp::Write { id, .. } | FileOp::Truncate { id, .. } => *id,
                _ => 0,
            };
            if later.iter().any(|o| matches!(o, FileOp::Fsync { id: f, .. } if *f == id)) {
                sure.push(j);
            } else {
                unsynced.push(j);
            }
        }
    }
    (sure, unsynced)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn w(id: u64, path: &str, offset: u64, byte: u8) -> FileOp {
        FileOp::Write { id, path: path.into(), offset, data: vec![byte; 4] }
    }

    #[test]
    fn a_crash_keeps_names_and_synced_data_and_may_lose_the_rest() {
        let ops = vec![
            FileOp::Create { path: "a".into(), mode: 0o644 },
            w(2, "a", 0, b'x'),
            FileOp::Fsync { id: 2, path: "a".into() },
            FileOp::Mark(1),
            w(2, "a", 4, b'y'),
            FileOp::Create { path: "b".into(), mode: 0o644 },
            FileOp::Mkdir { path: "d".into(), mode: 0o755 },
            FileOp::FsyncDir { path: "".into() },
            FileOp::Create { path: "d/c".into(), mode: 0o600 },
        ];
        let (sure, unsynced) = durable_at(&ops, ops.len(), false);
        assert_eq!(sure, vec![0, 1, 5, 6, 8]);
        assert_eq!(unsynced, vec![4]);
        // Lossy: the names in the root were fsynced after them; d/c's directory never was.
        // d/c's name may be lost or kept, as unsynced data may, in log order with it.
        let (sure, unsynced) = durable_at(&ops, ops.len(), true);
        assert_eq!(sure, vec![0, 1, 5, 6]);
        assert_eq!(unsynced, vec![4, 8]);
        // A rename is covered by the fsync of the name it made, or of either directory; what
        // a barrier precedes is durable; a name no fsync covered is not.
        let lossy = vec![
            FileOp::Create { path: "f".into(), mode: 0o644 },
            FileOp::Barrier,
            FileOp::Rename { from: "f".into(), to: "A/g".into() },
            FileOp::Fsync { id: 9, path: "A/g".into() },
            FileOp::Rename { from: "A/g".into(), to: "h".into() },
            FileOp::FsyncDir { path: "A".into() },
            FileOp::Create { path: "x".into(), mode: 0o644 },
        ];
        assert_eq!(durable_at(&lossy, lossy.len(), true), (vec![0, 2, 4], vec![6]));
        assert_eq!(durable_at(&lossy, lossy.len(), false).0, vec![0, 2, 4, 6]);
        // Built: what was kept, as it was logged; a write to a name that was dropped is moot.
        let dir = tempfile::tempdir().unwrap();
        let mut keep = sure.clone();
        keep.push(4);
        keep.sort_unstable();
        build(&ops, &keep, dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), b"xxxxyyyy");
        assert!(dir.path().join("b").exists() && dir.path().join("d").is_dir());
        assert!(!dir.path().join("d/c").exists());
        let dir = tempfile::tempdir().unwrap();
        build(&ops, &[1, 8], dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_rebuilt_state_never_reaches_through_a_link() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        let ops = vec![
            FileOp::Symlink { path: "d".into(), target: outside.path().to_path_buf() },
            FileOp::Symlink { path: "l".into(), target: outside.path().join("victim") },
            FileOp::Create { path: "d/new".into(), mode: 0o644 },
            FileOp::Mkdir { path: "d/dir".into(), mode: 0o755 },
            w(5, "l", 0, b'x'),
            FileOp::Truncate { id: 5, path: "l".into(), size: 0 },
            FileOp::Chmod { path: "l".into(), mode: 0o777 },
            FileOp::Write { id: 6, path: "../escape".into(), offset: 0, data: vec![1] },
            FileOp::Rename { from: "l".into(), to: "m".into() },
        ];
        let dir = tempfile::tempdir().unwrap();
        build(&ops, &(0..ops.len()).collect::<Vec<_>>(), dir.path()).unwrap();
        assert_eq!(std::fs::read(outside.path().join("victim")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
        assert!(!dir.path().parent().unwrap().join("escape").exists());
        // The link itself may be renamed: it is the link that moves.
        assert!(std::fs::symlink_metadata(dir.path().join("m")).unwrap().file_type().is_symlink());
    }
}
