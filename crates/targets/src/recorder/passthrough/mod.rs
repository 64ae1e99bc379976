//! The logging passthrough a `fuse:` daemon's `{work}` is served by ([`super::files`]): each
//! operation done on the backing directory, then logged.
//!
//! Safety: fsarena runs as root and the daemon is a tenant: whatever it makes in `{work}`
//! (symbolic links to anything, a link where a directory was) it may then ask to act on, and
//! the kernel never follows a link for a request that names the link itself (`utimensat` with
//! `AT_SYMLINK_NOFOLLOW`, `fchmodat2`, `lchown`, `lsetxattr`). So every operation here acts
//! beneath the backing directory's descriptor: the directory holding a name is opened with
//! no symbolic link anywhere on the way (openat2 `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`,
//! [`HeldDir`]), the name itself is acted on by an `*at` call that does not follow it
//! (`utimensat`/`fchownat` with `AT_SYMLINK_NOFOLLOW`, `unlinkat`, `renameat`, `linkat`
//! without `AT_SYMLINK_FOLLOW`, `readlinkat`, the `l*xattr` calls through the held parent),
//! and a file is opened `O_NOFOLLOW|O_NONBLOCK` (a FIFO cannot block the server) and checked
//! by `fstat` before its descriptor is used (`fchmod`, `ftruncate`, `fsync`, `f*xattr`). The
//! mode of a symbolic link cannot be changed (EOPNOTSUPP), as on Linux filesystems.

mod ops;

use super::files::{lock, FileOp, Shared};
use crate::beneath::HeldDir;
use fuser::{FileAttr, FileType, ReplyEntry, TimeOrNow};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

const TTL: Duration = Duration::ZERO;

/// The largest xattr value or name list answered (the kernel's own limit).
const XATTR_MAX: usize = 65536;

fn raw(e: Errno) -> i32 {
    e.raw_os_error()
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// The FUSE type of a file mode.
fn kind(mode: u32) -> FileType {
    match rfs::FileType::from_raw_mode(mode) {
        rfs::FileType::Directory => FileType::Directory,
        rfs::FileType::Symlink => FileType::Symlink,
        rfs::FileType::Fifo => FileType::NamedPipe,
        rfs::FileType::CharacterDevice => FileType::CharDevice,
        rfs::FileType::BlockDevice => FileType::BlockDevice,
        rfs::FileType::Socket => FileType::Socket,
        _ => FileType::RegularFile,
    }
}

/// The logging passthrough onto the backing directory `root`.
pub(super) struct Passthrough {
    root: HeldDir,
    /// Inode → path relative to `root`.
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    files: HashMap<u64, File>,
    next_fh: u64,
    log: Shared,
}

impl Passthrough {
    /// Serves `root`, logging into `log`.
    pub(super) fn new(root: HeldDir, log: Shared) -> Self {
        let mut fs = Self {
            root,
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: fuser::FUSE_ROOT_ID + 1,
            files: HashMap::new(),
            next_fh: 1,
            log,
        };
        fs.paths.insert(fuser::FUSE_ROOT_ID, PathBuf::new());
        fs.inos.insert(PathBuf::new(), fuser::FUSE_ROOT_ID);
        fs
    }

    fn rel(&self, ino: u64) -> Result<PathBuf, i32> {
        self.paths.get(&ino).cloned().ok_or(libc::ENOENT)
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

    /// The directory holding `rel` (opened beneath the root, no link on the way) and `rel`'s
    /// last name. The root itself has no parent here (EINVAL).
    fn parent(&self, rel: &Path) -> Result<(OwnedFd, OsString), i32> {
        let name = rel.file_name().ok_or(libc::EINVAL)?.to_os_string();
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => self.root.open_beneath(p, OFlags::DIRECTORY | OFlags::RDONLY, 0).map_err(raw)?,
            None => self.root.fd().try_clone_to_owned().map_err(|e| errno(&e))?,
        };
        Ok((dir, name))
    }

    /// Opens `rel` itself with `flags` (never through a link, never blocking); the root when
    /// `rel` is empty. The caller checks what it got.
    fn open_node(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, i32> {
        if rel.as_os_str().is_empty() {
            let safe = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            return rfs::openat(self.root.fd(), ".", flags | safe, Mode::empty()).map_err(raw);
        }
        self.root.open_beneath(rel, flags, 0).map_err(raw)
    }

    /// Opens `rel` when it is a regular file or a directory (else `not`), as `flags` says.
    fn open_data(&self, rel: &Path, flags: OFlags, not: i32) -> Result<OwnedFd, i32> {
        let fd = self.open_node(rel, flags)?;
        let st = rfs::fstat(&fd).map_err(raw)?;
        match rfs::FileType::from_raw_mode(st.st_mode) {
            rfs::FileType::RegularFile | rfs::FileType::Directory => Ok(fd),
            _ => Err(not),
        }
    }

    /// A regular file `rel`, opened as `flags` says, ready for blocking I/O.
    fn open_regular(&self, rel: &Path, flags: OFlags) -> Result<File, i32> {
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

    fn attr(&mut self, rel: &Path) -> Result<FileAttr, i32> {
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

    fn log(&self, op: FileOp) {
        lock(&self.log).push(op);
    }

    fn entry(&mut self, rel: &Path, reply: ReplyEntry) {
        match self.attr(rel) {
            Ok(a) => reply.entry(&TTL, &a, 0),
            Err(e) => reply.error(e),
        }
    }

    fn child(&self, parent: u64, name: &OsStr) -> Result<PathBuf, i32> {
        if !crate::beneath::is_plain_name(name) {
            return Err(libc::EINVAL);
        }
        Ok(self.rel(parent)?.join(name))
    }

    /// unlink, or rmdir when `dir`: done, then logged.
    fn remove(&mut self, parent: u64, name: &OsStr, dir: bool) -> Result<(), i32> {
        let rel = self.child(parent, name)?;
        let (at, name) = self.parent(&rel)?;
        let flags = if dir { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        rfs::unlinkat(&at, &name, flags).map_err(raw)?;
        self.log(if dir { FileOp::Rmdir { path: rel.clone() } } else { FileOp::Unlink { path: rel.clone() } });
        self.forget_path(&rel);
        Ok(())
    }

    /// A new handle for `f`.
    fn handle(&mut self, f: File) -> u64 {
        let fh = self.next_fh;
        self.next_fh += 1;
        self.files.insert(fh, f);
        fh
    }

    /// Creates the regular file `rel` with `mode` (nothing may be at that name, a link
    /// included), logged; open for reading and writing.
    fn make_file(&self, rel: &Path, mode: u32) -> Result<File, i32> {
        let (dir, last) = self.parent(rel)?;
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&dir, &last, flags, Mode::from_raw_mode(0o600)).map_err(raw)?;
        self.log(FileOp::Create { path: rel.to_path_buf(), mode: mode & 0o7777 });
        let _ = rfs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777));
        Ok(File::from(fd))
    }

    /// Sets the mode of `rel` (not of a link: EOPNOTSUPP), logged.
    fn chmod(&self, rel: &Path, mode: u32) -> Result<(), i32> {
        let fd = self.open_data(rel, OFlags::RDONLY, libc::EOPNOTSUPP)?;
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(raw)?;
        self.log(FileOp::Chmod { path: rel.to_path_buf(), mode });
        Ok(())
    }

    /// Sets the owner of `rel` itself, a link included.
    fn chown(&self, rel: &Path, uid: Option<u32>, gid: Option<u32>) -> Result<(), i32> {
        let (uid, gid) = (uid.map(rfs::Uid::from_raw), gid.map(rfs::Gid::from_raw));
        if rel.as_os_str().is_empty() {
            return rfs::fchown(self.root.fd(), uid, gid).map_err(raw);
        }
        let (dir, name) = self.parent(rel)?;
        rfs::chownat(&dir, &name, uid, gid, AtFlags::SYMLINK_NOFOLLOW).map_err(raw)
    }

    /// Sets the times of `rel` itself, a link included.
    fn set_times(&self, rel: &Path, atime: Option<TimeOrNow>, mtime: Option<TimeOrNow>) -> Result<(), i32> {
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

    /// Where an xattr call on `rel` itself acts, never following it: the descriptor of the
    /// root, or `/proc/self/fd/PARENT/NAME` for an `l*` call (the held parent reached by its
    /// magic link, the last name not followed).
    fn xattr_at(&self, rel: &Path) -> Result<XattrAt, i32> {
        if rel.as_os_str().is_empty() {
            return Ok(XattrAt::Fd(self.root.fd().try_clone_to_owned().map_err(|e| errno(&e))?));
        }
        let (dir, name) = self.parent(rel)?;
        let path = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name);
        Ok(XattrAt::Path(path, dir))
    }
}

/// See [`Passthrough::xattr_at`].
enum XattrAt {
    /// The root's own descriptor.
    Fd(OwnedFd),
    /// A path through the parent's descriptor, kept open while the path is used.
    Path(PathBuf, OwnedFd),
}
