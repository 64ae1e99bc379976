//! The backing directory as the passthrough holds it: its descriptor, the inode numbers it
//! gave, the files open under FUSE handles; and every way of acting on it, as [`super`] says.

use super::{errno, kind, raw};
use crate::beneath::HeldDir;
use fuser::{FileAttr, FileType, TimeOrNow};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::ops::Range;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// The backing directory, its inode numbers and its open files.
#[derive(Debug)]
pub struct Backing {
    root: HeldDir,
    /// Inode → path relative to `root`.
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    files: HashMap<u64, File>,
    next_fh: u64,
}

impl Backing {
    pub(super) fn new(root: HeldDir) -> Self {
        let mut b = Self {
            root,
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: fuser::FUSE_ROOT_ID + 1,
            files: HashMap::new(),
            next_fh: 1,
        };
        b.paths.insert(fuser::FUSE_ROOT_ID, PathBuf::new());
        b.inos.insert(PathBuf::new(), fuser::FUSE_ROOT_ID);
        b
    }

    /// The path of inode `ino` below the backing directory (ENOENT when it has none: never
    /// looked up, or removed).
    pub fn path_of(&self, ino: u64) -> Result<PathBuf, i32> {
        self.paths.get(&ino).cloned().ok_or(libc::ENOENT)
    }

    /// The inode number given to `rel`, if one was.
    pub fn ino_at(&self, rel: &Path) -> Option<u64> {
        self.inos.get(rel).copied()
    }

    pub(super) fn ino_of(&mut self, rel: &Path) -> u64 {
        if let Some(i) = self.inos.get(rel) {
            return *i;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.paths.insert(ino, rel.to_path_buf());
        self.inos.insert(rel.to_path_buf(), ino);
        ino
    }

    pub(super) fn forget_path(&mut self, rel: &Path) {
        if let Some(i) = self.inos.remove(rel) {
            self.paths.remove(&i);
        }
    }

    /// After `from` was renamed over `to`: every known path at or below `from` moves below
    /// `to`, and what `to` was is forgotten.
    pub(super) fn moved(&mut self, from: &Path, to: &Path) {
        self.forget_path(to);
        let moved: Vec<(PathBuf, u64)> =
            self.inos.iter().filter(|(p, _)| p.starts_with(from)).map(|(p, i)| (p.clone(), *i)).collect();
        for (p, i) in moved {
            let Ok(rest) = p.strip_prefix(from) else { continue };
            let new = if rest.as_os_str().is_empty() { to.to_path_buf() } else { to.join(rest) };
            self.inos.remove(&p);
            self.inos.insert(new.clone(), i);
            self.paths.insert(i, new);
        }
    }

    /// The path of `name` in directory `parent` (EINVAL for anything but a plain name).
    pub(super) fn child(&self, parent: u64, name: &OsStr) -> Result<PathBuf, i32> {
        if !crate::beneath::is_plain_name(name) {
            return Err(libc::EINVAL);
        }
        Ok(self.path_of(parent)?.join(name))
    }

    /// A new handle for `f`.
    pub(super) fn handle(&mut self, f: File) -> u64 {
        let fh = self.next_fh;
        self.next_fh += 1;
        self.files.insert(fh, f);
        fh
    }

    pub(super) fn close(&mut self, fh: u64) {
        self.files.remove(&fh);
    }

    /// The file open under handle `fh` (EBADF if none).
    pub fn file(&self, fh: u64) -> Result<&File, i32> {
        self.files.get(&fh).ok_or(libc::EBADF)
    }

    /// The directory holding `rel` (opened beneath the root, no link on the way) and `rel`'s
    /// last name. The root itself has no parent here (EINVAL).
    pub(super) fn parent(&self, rel: &Path) -> Result<(OwnedFd, OsString), i32> {
        let name = rel.file_name().ok_or(libc::EINVAL)?.to_os_string();
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => self.root.open_beneath(p, OFlags::DIRECTORY | OFlags::RDONLY, 0).map_err(raw)?,
            None => self.root.fd().try_clone_to_owned().map_err(|e| errno(&e))?,
        };
        Ok((dir, name))
    }

    /// Opens `rel` itself with `flags` (never through a link, never blocking); the root when
    /// `rel` is empty. The caller checks what it got.
    pub(super) fn open_node(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, i32> {
        if rel.as_os_str().is_empty() {
            let safe = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            return rfs::openat(self.root.fd(), ".", flags | safe, Mode::empty()).map_err(raw);
        }
        self.root.open_beneath(rel, flags, 0).map_err(raw)
    }

    /// Opens `rel` when it is a regular file or a directory (else `not`), as `flags` says.
    pub(super) fn open_data(&self, rel: &Path, flags: OFlags, not: i32) -> Result<OwnedFd, i32> {
        let fd = self.open_node(rel, flags)?;
        let st = rfs::fstat(&fd).map_err(raw)?;
        match rfs::FileType::from_raw_mode(st.st_mode) {
            rfs::FileType::RegularFile | rfs::FileType::Directory => Ok(fd),
            _ => Err(not),
        }
    }

    /// A regular file `rel`, opened as `flags` says, ready for blocking I/O (EISDIR for a
    /// directory, EINVAL for anything else).
    pub fn open_regular(&self, rel: &Path, flags: OFlags) -> Result<File, i32> {
        let fd = self.open_node(rel, flags)?;
        let st = rfs::fstat(&fd).map_err(raw)?;
        match rfs::FileType::from_raw_mode(st.st_mode) {
            rfs::FileType::RegularFile => {}
            rfs::FileType::Directory => return Err(libc::EISDIR),
            _ => return Err(libc::EINVAL),
        }
        // O_NONBLOCK was for the open only.
        rfs::fcntl_setfl(&fd, rfs::fcntl_getfl(&fd).map_err(raw)? - OFlags::NONBLOCK).map_err(raw)?;
        Ok(File::from(fd))
    }

    fn stat(&self, rel: &Path) -> Result<rfs::Stat, i32> {
        if rel.as_os_str().is_empty() {
            return rfs::fstat(self.root.fd()).map_err(raw);
        }
        let (dir, name) = self.parent(rel)?;
        rfs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW).map_err(raw)
    }

    /// The type of `rel` itself (a link is a link).
    pub fn kind(&self, rel: &Path) -> Result<FileType, i32> {
        Ok(kind(self.stat(rel)?.st_mode))
    }

    /// The attributes of `rel` itself, under the inode number it has (given one now if it
    /// had none).
    pub(super) fn attr(&mut self, rel: &Path) -> Result<FileAttr, i32> {
        let st = self.stat(rel)?;
        let ino = if rel.as_os_str().is_empty() { fuser::FUSE_ROOT_ID } else { self.ino_of(rel) };
        let t = |s: i64, ns: u64| UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.min(999_999_999) as u32);
        Ok(FileAttr {
            ino,
            size: st.st_size as u64,
            blocks: st.st_blocks as u64,
            atime: t(st.st_atime, st.st_atime_nsec),
            mtime: t(st.st_mtime, st.st_mtime_nsec),
            ctime: t(st.st_ctime, st.st_ctime_nsec),
            crtime: t(st.st_ctime, st.st_ctime_nsec),
            kind: kind(st.st_mode),
            perm: (st.st_mode & 0o7777) as u16,
            nlink: st.st_nlink as u32,
            uid: st.st_uid,
            gid: st.st_gid,
            rdev: st.st_rdev as u32,
            blksize: st.st_blksize as u32,
            flags: 0,
        })
    }

    /// Removes the name `rel`: unlink, or rmdir when `dir`.
    pub fn remove(&self, rel: &Path, dir: bool) -> Result<(), i32> {
        let (at, name) = self.parent(rel)?;
        let flags = if dir { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        rfs::unlinkat(&at, &name, flags).map_err(raw)
    }

    /// Creates the regular file `rel` with `mode` (nothing may be at that name, a link
    /// included); open for reading and writing.
    pub fn make_file(&self, rel: &Path, mode: u32) -> Result<File, i32> {
        let (dir, last) = self.parent(rel)?;
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&dir, &last, flags, Mode::from_raw_mode(0o600)).map_err(raw)?;
        let _ = rfs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777));
        Ok(File::from(fd))
    }

    /// Creates the directory `rel` with `mode`.
    pub(super) fn make_dir(&self, rel: &Path, mode: u32) -> Result<(), i32> {
        let (dir, last) = self.parent(rel)?;
        rfs::mkdirat(&dir, &last, Mode::from_raw_mode(0o700)).map_err(raw)?;
        let made = rfs::openat(&dir, &last, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW, Mode::empty());
        if let Ok(fd) = made {
            let _ = rfs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777));
        }
        Ok(())
    }

    /// Sets the mode of `rel` (not of a link: EOPNOTSUPP).
    pub(super) fn chmod(&self, rel: &Path, mode: u32) -> Result<(), i32> {
        let fd = self.open_data(rel, OFlags::RDONLY, libc::EOPNOTSUPP)?;
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(raw)
    }

    /// Sets the owner of `rel` itself, a link included.
    pub(super) fn chown(&self, rel: &Path, uid: Option<u32>, gid: Option<u32>) -> Result<(), i32> {
        let (uid, gid) = (uid.map(rfs::Uid::from_raw), gid.map(rfs::Gid::from_raw));
        if rel.as_os_str().is_empty() {
            return rfs::fchown(self.root.fd(), uid, gid).map_err(raw);
        }
        let (dir, name) = self.parent(rel)?;
        rfs::chownat(&dir, &name, uid, gid, AtFlags::SYMLINK_NOFOLLOW).map_err(raw)
    }

    /// Sets the times of `rel` itself, a link included.
    pub(super) fn set_times(&self, rel: &Path, atime: Option<TimeOrNow>, mtime: Option<TimeOrNow>) -> Result<(), i32> {
        let spec = |t: Option<TimeOrNow>| match t {
            None => rfs::Timespec { tv_sec: 0, tv_nsec: rfs::UTIME_OMIT },
            Some(TimeOrNow::Now) => rfs::Timespec { tv_sec: 0, tv_nsec: rfs::UTIME_NOW },
            Some(TimeOrNow::SpecificTime(at)) => {
                let d = at.duration_since(UNIX_EPOCH).unwrap_or_default();
                rfs::Timespec { tv_sec: d.as_secs() as i64, tv_nsec: i64::from(d.subsec_nanos()) }
            }
        };
        let times = rfs::Timestamps { last_access: spec(atime), last_modification: spec(mtime) };
        if rel.as_os_str().is_empty() {
            return rfs::futimens(self.root.fd(), &times).map_err(raw);
        }
        let (dir, name) = self.parent(rel)?;
        rfs::utimensat(&dir, &name, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(raw)
    }

    /// Renames `from` over `to` (the names themselves, links included).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), i32> {
        let (from_dir, from_name) = self.parent(from)?;
        let (to_dir, to_name) = self.parent(to)?;
        rfs::renameat(&from_dir, &from_name, &to_dir, &to_name).map_err(raw)
    }

    /// `size` bytes at `offset` of the file open under `fh`, fewer at its end.
    pub fn read(&self, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, i32> {
        let f = self.file(fh)?;
        let mut buf = vec![0u8; size as usize];
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => return Err(errno(&e)),
            }
        }
        buf.truncate(done);
        Ok(buf)
    }

    /// Writes `data` at `offset` of the file open under `fh`.
    pub fn write(&self, fh: u64, offset: u64, data: &[u8]) -> Result<(), i32> {
        self.file(fh)?.write_all_at(data, offset).map_err(|e| errno(&e))
    }

    /// Sets the size of the regular file `rel`, through handle `fh` if there is one.
    pub fn truncate(&self, rel: &Path, fh: Option<u64>, size: u64) -> Result<(), i32> {
        match fh.and_then(|h| self.files.get(&h)) {
            Some(f) => f.set_len(size).map_err(|e| errno(&e)),
            None => self.open_regular(rel, OFlags::WRONLY)?.set_len(size).map_err(|e| errno(&e)),
        }
    }

    /// fallocate of the file open under `fh`, `mode` as FUSE passed it.
    pub fn fallocate(&self, fh: u64, range: Range<u64>, mode: i32) -> Result<(), i32> {
        let flags = rfs::FallocateFlags::from_bits_truncate(mode as u32);
        rfs::fallocate(self.file(fh)?.as_fd(), flags, range.start, range.end - range.start).map_err(raw)
    }

    /// That `fh` is a handle of this passthrough, or else `rel` a regular file or directory
    /// (EINVAL for anything else): what an fsync may act on.
    pub fn check_file(&self, rel: &Path, fh: u64) -> Result<(), i32> {
        if !self.files.contains_key(&fh) {
            drop(self.open_data(rel, OFlags::RDONLY, libc::EINVAL)?);
        }
        Ok(())
    }

    /// fsync (fdatasync when `datasync`) of the file open under `fh`, else of `rel`.
    pub fn fsync(&self, rel: &Path, fh: u64, datasync: bool) -> Result<(), i32> {
        let sync = |f: &File| if datasync { f.sync_data() } else { f.sync_all() }.map_err(|e| errno(&e));
        match self.files.get(&fh) {
            Some(f) => sync(f),
            None => sync(&File::from(self.open_data(rel, OFlags::RDONLY, libc::EINVAL)?)),
        }
    }

    /// The directory `rel` (the root when empty), opened to be synced or listed.
    pub fn open_dir(&self, rel: &Path) -> Result<OwnedFd, i32> {
        self.open_node(rel, OFlags::DIRECTORY | OFlags::RDONLY)
    }

    /// fsync of the directory `rel`: its entries are durable.
    pub fn fsync_dir(&self, rel: &Path) -> Result<(), i32> {
        rfs::fsync(self.open_dir(rel)?).map_err(raw)
    }

    /// Where an xattr call on `rel` itself acts, never following it: the descriptor of the
    /// root, or `/proc/self/fd/PARENT/NAME` for an `l*` call (the held parent reached by its
    /// magic link, the last name not followed).
    pub(super) fn xattr_at(&self, rel: &Path) -> Result<XattrAt, i32> {
        if rel.as_os_str().is_empty() {
            return Ok(XattrAt::Fd(self.root.fd().try_clone_to_owned().map_err(|e| errno(&e))?));
        }
        let (dir, name) = self.parent(rel)?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name);
        Ok(XattrAt::Path(path, dir))
    }

    /// The backing directory's statfs.
    pub(super) fn statvfs(&self) -> Result<rfs::StatVfs, i32> {
        rfs::fstatvfs(self.root.fd()).map_err(raw)
    }
}

/// See [`Backing::xattr_at`].
pub(super) enum XattrAt {
    /// The root's own descriptor.
    Fd(OwnedFd),
    /// A path through the parent's descriptor, kept open while the path is used.
    Path(PathBuf, OwnedFd),
}
