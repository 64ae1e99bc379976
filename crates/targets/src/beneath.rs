//! Acting beneath a directory someone else can write: a server's account owns its data and run
//! directories, a FUSE daemon serves whatever it likes, another user owns the directory that
//! holds a `dir:` target. Anything fsarena opens there is reached through a directory
//! descriptor fsarena opened itself ([`HeldDir`]), resolved with no symbolic link anywhere on
//! the way and never above that directory (openat2's `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`, or
//! the same walk one component at a time with `O_NOFOLLOW` where the kernel lacks openat2),
//! opened `O_NONBLOCK|O_NOCTTY` so that a FIFO or a terminal cannot block or adopt fsarena,
//! then checked to be a regular file (and, when asked, of the expected owner) before a byte is
//! read or written; reads are capped.
//!
//! [`read_input_file`] is the same discipline for a file named by the user (a job file, a
//! `file=` or `replay=` key): a regular file of at most a stated size, never a FIFO, device
//! or directory, read with a cap even if it grows meanwhile.

use crate::safefs::Identity;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The flags every open beneath a held directory adds: no link followed at the last
/// component, no blocking open of a FIFO, no controlling terminal, closed on exec.
const SAFE: OFlags = OFlags::NOFOLLOW.union(OFlags::NONBLOCK).union(OFlags::NOCTTY).union(OFlags::CLOEXEC);

/// `flags` and `mode` as openat2 accepts them (it refuses what openat ignores): an `O_PATH`
/// open takes only `O_DIRECTORY`, `O_NOFOLLOW` and `O_CLOEXEC` besides, and a mode only with
/// `O_CREAT` or `O_TMPFILE`.
pub fn strict(flags: OFlags, mode: u32) -> (OFlags, u32) {
    let flags = if flags.contains(OFlags::PATH) {
        flags & (OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC)
    } else {
        flags
    };
    let creates = flags.contains(OFlags::CREATE) || flags.contains(OFlags::TMPFILE);
    (flags, if creates { mode } else { 0 })
}

/// A directory fsarena holds open, to act beneath it without following links.
#[derive(Debug)]
pub struct HeldDir {
    fd: OwnedFd,
    shown: PathBuf,
}

/// How [`HeldDir::open_file`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenHow {
    /// Open for writing (else read only).
    pub write: bool,
    /// Writes go to the end.
    pub append: bool,
    /// Create it when missing (a link or any other object in its place is an error).
    pub create: bool,
    /// Create it, and it must not exist in any form (`O_EXCL`).
    pub exclusive: bool,
    /// Empty it once it is known to be a regular file.
    pub truncate: bool,
    /// The mode of a file created.
    pub mode: u32,
    /// The owner it must have (None: any).
    pub owner: Option<u32>,
}

impl OpenHow {
    /// Read only, an existing regular file.
    pub const READ: Self =
        Self { write: false, append: false, create: false, exclusive: false, truncate: false, mode: 0, owner: None };
    /// A log: appended to, created 0600 when missing.
    pub const APPEND: Self =
        Self { write: true, append: true, create: true, exclusive: false, truncate: false, mode: 0o600, owner: None };
    /// A new file, 0600, that must not exist.
    pub const NEW: Self =
        Self { write: true, append: false, create: true, exclusive: true, truncate: false, mode: 0o600, owner: None };

    /// The same, requiring the owner `uid`.
    pub const fn owned_by(self, uid: u32) -> Self {
        Self { owner: Some(uid), ..self }
    }

    /// The same, with `mode` for a file created.
    pub const fn with_mode(self, mode: u32) -> Self {
        Self { mode, ..self }
    }
}

fn not_plain(rel: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not a relative path of plain names", rel.display()))
}

/// What `st` is, in words, for errors: "a FIFO", "a symbolic link".
pub fn kind_words(mode: u32) -> &'static str {
    match FileType::from_raw_mode(mode) {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a file",
    }
}

impl HeldDir {
    /// Opens the directory `path` (a symbolic link as its last component is refused; the
    /// components above it are the caller's to trust).
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = rfs::open(path, OFlags::DIRECTORY | OFlags::RDONLY | SAFE, Mode::empty())
            .map_err(|e| io::Error::new(io::Error::from(e).kind(), format!("{}: {e}", path.display())))?;
        Ok(Self { fd, shown: path.to_path_buf() })
    }

    /// Holds `fd`, an open directory, shown as `shown` in messages.
    pub fn from_fd(fd: OwnedFd, shown: PathBuf) -> Self {
        Self { fd, shown }
    }

    /// The path it was opened by (for messages; never used to act).
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Its descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// `/proc/self/fd/N`: a path that reaches this very directory, whatever was renamed or
    /// planted at its name since, for this process and the children that inherit it.
    pub fn proc_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }

    /// Its device and inode.
    pub fn identity(&self) -> io::Result<Identity> {
        Identity::of_fd(&self.fd)
    }

    /// Another descriptor of the same directory.
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(Self { fd: self.fd.try_clone()?, shown: self.shown.clone() })
    }

    fn show(&self, rel: &Path) -> PathBuf {
        self.shown.join(rel)
    }

    fn error(&self, rel: &Path, e: impl Into<io::Error>) -> io::Error {
        let e: io::Error = e.into();
        io::Error::new(e.kind(), format!("{}: {e}", self.show(rel).display()))
    }

    /// Opens `rel` beneath this directory with `flags` (plus [`SAFE`]): no symbolic link on
    /// the way or at the end, never a `..` or an absolute path.
    fn open_raw(&self, rel: &Path, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
        let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain || rel.as_os_str().is_empty() {
            return Err(Errno::INVAL);
        }
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let (flags, mode) = strict(flags | SAFE, mode);
        match rfs::openat2(&self.fd, rel, flags, Mode::from_raw_mode(mode), resolve) {
            Err(Errno::NOSYS) => {}
            // EAGAIN: openat2 asks to retry after a concurrent rename; so does the walk.
            other => return other,
        }
        // Without openat2: the same, a component at a time, none of them followed.
        let names: Vec<&OsStr> = rel.iter().collect();
        let (last, dirs) = names.split_last().ok_or(Errno::INVAL)?;
        let mut dir = self.fd.try_clone().map_err(|_| Errno::MFILE)?;
        for name in dirs {
            dir = rfs::openat(&dir, *name, OFlags::DIRECTORY | OFlags::RDONLY | SAFE, Mode::empty())?;
        }
        rfs::openat(&dir, *last, flags, Mode::from_raw_mode(mode))
    }

    /// Opens `rel` beneath this directory with `flags` as given (plus no-follow, non-blocking,
    /// no controlling terminal, close-on-exec), with no symbolic link on the way or at the end:
    /// the bare descriptor, of whatever type, still `O_NONBLOCK`. For a caller that checks the
    /// type itself or cannot afford the check (a timed open in a benchmark loop: `O_NONBLOCK`
    /// is ignored by reads and writes of a regular file, and turns a FIFO's block into an error).
    pub fn open_at(&self, rel: &Path, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
        self.open_raw(rel, flags, mode).map_err(|e| match e {
            Errno::LOOP | Errno::XDEV => {
                self.error(rel, io::Error::other("a symbolic link or a path leaving the directory: not followed"))
            }
            e => self.error(rel, e),
        })
    }

    /// Opens `rel` beneath this directory with `flags` (plus `O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|
    /// O_CLOEXEC`), no symbolic link followed on the way or at the end; the raw error, for a
    /// caller that passes it on (a FUSE passthrough answers with it). The caller checks what
    /// it opened (`fstat`) before using it.
    pub fn open_beneath(&self, rel: &Path, flags: OFlags, mode: u32) -> Result<OwnedFd, Errno> {
        self.open_raw(rel, flags, mode)
    }

    /// The target of the symbolic link `rel` beneath this directory (at most `cap` bytes),
    /// no link followed on the way.
    pub fn read_link(&self, rel: &Path, cap: usize) -> io::Result<std::ffi::OsString> {
        let (dir, name) = self.parent_of(rel)?;
        let target = rfs::readlinkat(&dir, name, Vec::new()).map_err(|e| self.error(rel, e))?;
        let mut bytes = target.into_bytes();
        bytes.truncate(cap);
        Ok(std::ffi::OsString::from(std::ffi::OsStr::from_bytes(&bytes)))
    }

    /// The directory `rel` beneath this one.
    pub fn dir(&self, rel: &Path) -> io::Result<HeldDir> {
        let fd = self.open_raw(rel, OFlags::DIRECTORY | OFlags::RDONLY, 0).map_err(|e| self.error(rel, e))?;
        Ok(HeldDir { fd, shown: self.show(rel) })
    }

    /// Creates the directory `name` (a plain name) with exactly `mode`, owned by `owner`
    /// when given; anything already there is an error, never adopted.
    pub fn create_dir(&self, name: &str, mode: u32, owner: Option<(u32, u32)>) -> io::Result<HeldDir> {
        let rel = Path::new(name);
        if rel.components().count() != 1 || !matches!(rel.components().next(), Some(Component::Normal(_))) {
            return Err(not_plain(rel));
        }
        rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode)).map_err(|e| self.error(rel, e))?;
        let held = self.dir(rel)?;
        if let Some((uid, gid)) = owner {
            rfs::fchown(&held.fd, Some(rfs::Uid::from_raw(uid)), Some(rfs::Gid::from_raw(gid)))
                .map_err(|e| self.error(rel, e))?;
        }
        // After the chown, which may clear set-id bits; and the umask narrowed mkdir's mode.
        rfs::fchmod(&held.fd, Mode::from_raw_mode(mode)).map_err(|e| self.error(rel, e))?;
        Ok(held)
    }

    /// Opens the regular file `rel` beneath this directory as `how` says; anything else at
    /// that name (a link, a FIFO, a device, a directory, a file of another owner) is an
    /// error, and nothing was read, written or truncated.
    pub fn open_file(&self, rel: &Path, how: OpenHow) -> io::Result<File> {
        let mut flags = if how.write { OFlags::WRONLY } else { OFlags::RDONLY };
        if how.append {
            flags |= OFlags::APPEND;
        }
        if how.create {
            flags |= OFlags::CREATE;
        }
        if how.exclusive {
            flags |= OFlags::CREATE | OFlags::EXCL;
        }
        let fd = self.open_at(rel, flags, how.mode)?;
        let st = rfs::fstat(&fd).map_err(|e| self.error(rel, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(self.error(rel, io::Error::other(format!("{}, not a regular file", kind_words(st.st_mode)))));
        }
        if let Some(uid) = how.owner {
            if st.st_uid != uid {
                return Err(self.error(rel, io::Error::other(format!("owned by uid {}, not uid {uid}", st.st_uid))));
            }
        }
        // O_NONBLOCK was for the open; I/O on a regular file blocks as usual.
        let _ = rfs::fcntl_setfl(&fd, rfs::fcntl_getfl(&fd).unwrap_or(flags) - OFlags::NONBLOCK);
        if how.truncate {
            rfs::ftruncate(&fd, 0).map_err(|e| self.error(rel, e))?;
        }
        Ok(File::from(fd))
    }

    /// The last `cap` bytes (at most) of the regular file `rel` beneath this directory, owned
    /// by `owner` when given. A log a tenant writes: whatever it grows to, fsarena reads at
    /// most `cap` bytes of it.
    pub fn read_tail(&self, rel: &Path, owner: Option<u32>, cap: u64) -> io::Result<Vec<u8>> {
        let how = OpenHow { owner, ..OpenHow::READ };
        let mut file = self.open_file(rel, how)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(cap)))?;
        let mut out = Vec::with_capacity(len.min(cap) as usize);
        file.take(cap).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Writes `bytes` to the new file `name` beneath this directory (0600 unless `how` says
    /// otherwise; it must not exist in any form).
    pub fn write_new(&self, rel: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        use std::io::Write;
        let mut f = self.open_file(rel, OpenHow::NEW.with_mode(mode))?;
        f.write_all(bytes).map_err(|e| self.error(rel, e))
    }

    /// Sets the owner of `rel` beneath this directory without following a link there.
    pub fn chown(&self, rel: &Path, uid: u32, gid: u32) -> io::Result<()> {
        let (dir, name) = self.parent_of(rel)?;
        rfs::chownat(
            &dir,
            name,
            Some(rfs::Uid::from_raw(uid)),
            Some(rfs::Gid::from_raw(gid)),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(|e| self.error(rel, e))
    }

    /// Removes the file (not directory) `rel` beneath this directory, if it is one; a missing
    /// name is not an error.
    pub fn remove_file(&self, rel: &Path) -> io::Result<()> {
        let (dir, name) = self.parent_of(rel)?;
        match rfs::unlinkat(&dir, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(self.error(rel, e)),
        }
    }

    /// The directory holding `rel` (opened beneath this one) and `rel`'s last name.
    fn parent_of<'r>(&self, rel: &'r Path) -> io::Result<(OwnedFd, &'r OsStr)> {
        let name = match rel.components().next_back() {
            Some(Component::Normal(n)) => n,
            _ => return Err(not_plain(rel)),
        };
        let dir = match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => self.dir(parent)?.fd,
            None => self.fd.try_clone()?,
        };
        Ok((dir, name))
    }

    /// The status of `rel` beneath this directory, a link not followed.
    pub fn stat(&self, rel: &Path) -> io::Result<rfs::Stat> {
        let (dir, name) = self.parent_of(rel)?;
        rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| self.error(rel, e))
    }

    /// True when `rel` names something beneath this directory (a link not followed).
    pub fn exists(&self, rel: &Path) -> bool {
        self.stat(rel).is_ok()
    }
}

/// Why an input file was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputFileError(pub String);

/// Opens the file `path` named by the user as `what` without blocking and checks that it is a
/// regular file of at most `cap` bytes (not a FIFO, a device such as /dev/zero, a socket or a
/// directory); the open file and its size. Nothing of it is read.
fn open_input_file(path: &Path, what: &str, cap: u64) -> Result<(OwnedFd, u64), InputFileError> {
    let shown = path.display();
    let cannot = |e: io::Error| InputFileError(format!("cannot read {what} {shown}: {e}"));
    let fd = rfs::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| cannot(e.into()))?;
    let st = rfs::fstat(&fd).map_err(|e| cannot(e.into()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(InputFileError(format!(
            "{what} {shown} is {}: expected a regular file of at most {}",
            kind_words(st.st_mode),
            limit_text(cap)
        )));
    }
    if st.st_size as u64 > cap {
        return Err(too_large(path, what, cap));
    }
    Ok((fd, st.st_size as u64))
}

fn too_large(path: &Path, what: &str, cap: u64) -> InputFileError {
    InputFileError(format!("{what} {} is larger than the {} accepted", path.display(), limit_text(cap)))
}

/// Checks, without reading a byte, that `path` is what [`read_input_file`] accepts: for a
/// file named by a key, refused before anything is created even when it is read later.
pub fn check_input_file(path: &Path, what: &str, cap: u64) -> Result<(), InputFileError> {
    open_input_file(path, what, cap).map(drop)
}

/// Reads the file `path` named by the user as `what` (`replay= file`, `fio job file`): a
/// regular file (not a FIFO, a device such as /dev/zero, a socket or a directory) of at most
/// `cap` bytes, opened without blocking and read with that cap even if it grows meanwhile.
/// Errors name the file, what it is and the limit, and never quote a byte of it.
pub fn read_input_file(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>, InputFileError> {
    let (fd, size) = open_input_file(path, what, cap)?;
    let mut bytes = Vec::with_capacity(size as usize);
    File::from(fd)
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputFileError(format!("cannot read {what} {}: {e}", path.display())))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, what, cap));
    }
    Ok(bytes)
}

/// [`read_input_file`], as UTF-8 text; `what` and the line of the first bad byte in the error,
/// never the bytes themselves.
pub fn read_input_text(path: &Path, what: &str, cap: u64) -> Result<String, InputFileError> {
    let bytes = read_input_file(path, what, cap)?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let line = bytes[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        InputFileError(format!("{what} {}:{line} is not UTF-8 text", path.display()))
    })
}

/// True when `mode` and `uid` describe a directory that someone other than root can change
/// the entries of: owned by another user, or writable by its group or by others without the
/// sticky bit (which alone keeps others from renaming or removing what root put there).
pub fn others_can_write(mode: u32, uid: u32) -> bool {
    let sticky = mode & 0o1000 != 0;
    uid != 0 || (mode & 0o022 != 0 && !sticky)
}

/// The name of the first directory from `dir` up to `/` that someone other than root can
/// change the entries of (see [`others_can_write`]), with its owner and mode.
pub fn first_writable_by_others(dir: &Path) -> Option<(PathBuf, u32, u32)> {
    for d in dir.ancestors() {
        let Ok(st) = rfs::stat(d) else { continue };
        if others_can_write(st.st_mode & 0o7777, st.st_uid) {
            return Some((d.to_path_buf(), st.st_uid, st.st_mode & 0o7777));
        }
    }
    None
}

/// A limit in words: `1 MiB`, `64 KiB`, `100 bytes`.
pub fn limit_text(bytes: u64) -> String {
    fsarena_core::units::limit_text(bytes)
}

/// Bytes of a plain name.
pub fn is_plain_name(name: &OsStr) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b != b"." && b != b".." && !b.contains(&b'/') && !b.contains(&0)
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
