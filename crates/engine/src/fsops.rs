//! Metadata calls (mdtest's and fs_mark's operations) behind one interface, as IOR's
//! `ior_aiori_t` serves both data and metadata: a metadata workload is written once against
//! [`FsOps`] and runs on any backend that implements it.
//!
//! Every call takes a directory descriptor and a path relative to it (the `*at` calls), which
//! covers both ways a benchmark can name files: mdtest's full paths resolved from the start
//! on every call (pass [`rustix::fs::CWD`] and the whole path), or a held directory and a
//! one-component name (pass the directory's descriptor and the name). The methods are generic
//! over the path type ([`rustix::path::Arg`]: `&str`, `&Path`, `&CStr`, ...), so a workload's
//! loop is compiled for its backend and calls it without indirection; paths under 256 bytes
//! are converted on the stack, not allocated. The small writes and reads such a workload makes
//! to the files it creates (mdtest's `-w`/`-e`, fs_mark's file data) go through it too, so one
//! backend (psync today, io_uring next) serves a whole phase.
//!
//! What the filesystem serves is not trusted (a FUSE daemon answers every lookup): `open` and
//! `create` follow no symbolic link anywhere in the path (openat2 `RESOLVE_NO_SYMLINKS`, the
//! same walk as openat's), so a directory served as a link to the host's `/etc` is an error,
//! not a place to create or read files as root; and they add `O_NONBLOCK`, so a FIFO served in
//! a file's place cannot block (reads and writes of a regular file ignore the flag).

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, Stat};
use rustix::path::Arg;
use std::ffi::CStr;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// The metadata operations a workload times. Errors are the system call's.
pub trait FsOps: Send {
    /// mkdir(2) `path` under `dir`.
    fn mkdir<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, mode: Mode) -> io::Result<()>;
    /// Creates and opens a file: open(2) with `O_CREAT` added to `flags` (mdtest: `O_RDWR`;
    /// add `O_EXCL` to never reuse something planted); no link followed, `O_NONBLOCK`.
    fn create<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags, mode: Mode) -> io::Result<OwnedFd>;
    /// Opens an existing file with `flags`; no link followed, `O_NONBLOCK`.
    fn open<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags) -> io::Result<OwnedFd>;
    /// stat(2) (`AtFlags::SYMLINK_NOFOLLOW` for lstat).
    fn stat<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: AtFlags) -> io::Result<Stat>;
    /// rename(2).
    fn rename<P: Arg, Q: Arg>(
        &mut self,
        old_dir: BorrowedFd<'_>,
        old: P,
        new_dir: BorrowedFd<'_>,
        new: Q,
    ) -> io::Result<()>;
    /// unlink(2) a file.
    fn unlink<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P) -> io::Result<()>;
    /// rmdir(2) an empty directory.
    fn rmdir<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P) -> io::Result<()>;
    /// Lists the directory `path` (`"."` for `dir` itself), calling `each` with every name but
    /// `.` and `..`; returns how many it saw.
    fn readdir<P: Arg, F: FnMut(&CStr)>(&mut self, dir: BorrowedFd<'_>, path: P, each: F) -> io::Result<usize>;
    /// fsync(2) an open file or directory.
    fn fsync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()>;
    /// syncfs(2) the filesystem holding `fd` (fs_mark's `-S 2`).
    fn syncfs(&mut self, fd: BorrowedFd<'_>) -> io::Result<()>;
    /// write(2) at the file's offset: the data a metadata workload puts in the files it
    /// creates (mdtest's `-w`, fs_mark's `-s`). Returns the bytes written, perhaps fewer.
    fn write(&mut self, fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize>;
    /// read(2) at the file's offset (mdtest's `-e`). Returns the bytes read, 0 at the end.
    fn read(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize>;
}

/// Set once openat2 is found missing (Linux before 5.6): opens then walk with openat.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// openat(2) of `path` under `dir` with `flags` plus `O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC`, through
/// openat2 with `RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS` where the kernel has it (ELOOP for a
/// link anywhere in the path). Without openat2 only the last component is held to no-follow.
#[inline]
fn open_no_links<P: Arg>(dir: BorrowedFd<'_>, path: P, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    // openat2 refuses what openat ignores: O_NONBLOCK beside O_PATH, a mode without O_CREAT.
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let flags = if flags.contains(OFlags::PATH) { flags } else { flags | OFlags::NONBLOCK };
    let mode = if flags.contains(OFlags::CREATE) { mode } else { Mode::empty() };
    let fd = path.into_with_c_str(|path| {
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(dir, path, flags, mode, resolve) {
                Err(rustix::io::Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
                other => return other,
            }
        }
        rustix::fs::openat(dir, path, flags, mode)
    })?;
    Ok(fd)
}

/// The plain system calls, one per operation (the metadata side of `psync`).
#[derive(Debug, Default, Clone, Copy)]
pub struct PsyncFsOps;

impl FsOps for PsyncFsOps {
    #[inline]
    fn mkdir<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, mode: Mode) -> io::Result<()> {
        Ok(rustix::fs::mkdirat(dir, path, mode)?)
    }

    #[inline]
    fn create<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        open_no_links(dir, path, flags | OFlags::CREATE, mode)
    }

    #[inline]
    fn open<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags) -> io::Result<OwnedFd> {
        open_no_links(dir, path, flags, Mode::empty())
    }

    #[inline]
    fn stat<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: AtFlags) -> io::Result<Stat> {
        Ok(rustix::fs::statat(dir, path, flags)?)
    }

    #[inline]
    fn rename<P: Arg, Q: Arg>(
        &mut self,
        old_dir: BorrowedFd<'_>,
        old: P,
        new_dir: BorrowedFd<'_>,
        new: Q,
    ) -> io::Result<()> {
        Ok(rustix::fs::renameat(old_dir, old, new_dir, new)?)
    }

    #[inline]
    fn unlink<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, path, AtFlags::empty())?)
    }

    #[inline]
    fn rmdir<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, path, AtFlags::REMOVEDIR)?)
    }

    fn readdir<P: Arg, F: FnMut(&CStr)>(&mut self, dir: BorrowedFd<'_>, path: P, mut each: F) -> io::Result<usize> {
        let fd = rustix::fs::openat(
            dir,
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        let mut seen = 0;
        for entry in rustix::fs::Dir::new(fd)? {
            let entry = entry?;
            let name = entry.file_name();
            if name != c"." && name != c".." {
                seen += 1;
                each(name);
            }
        }
        Ok(seen)
    }

    #[inline]
    fn fsync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::fsync(fd)?)
    }

    #[inline]
    fn syncfs(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::syncfs(fd)?)
    }

    #[inline]
    fn write(&mut self, fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
        Ok(rustix::io::write(fd, buf)?)
    }

    #[inline]
    fn read(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::io::read(fd, buf)?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;
    use rustix::fs::CWD;

    /// Every operation, once through a held directory and once through full paths.
    #[test]
    fn every_operation_by_directory_and_by_path() {
        let base = std::env::temp_dir().join(format!("fsarena-h5-fsops-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let mut ops = PsyncFsOps;
        let root = ops.open(CWD, &base, OFlags::RDONLY | OFlags::DIRECTORY).unwrap();
        let dir = root.as_fd();
        let rw = OFlags::RDWR | OFlags::EXCL | OFlags::NOFOLLOW;
        let mode = Mode::from_raw_mode(0o644);

        // By directory descriptor and one-component names.
        ops.mkdir(dir, "d", Mode::from_raw_mode(0o755)).unwrap();
        let f = ops.create(dir, "a", rw, mode).unwrap();
        assert_eq!(ops.write(f.as_fd(), b"abc").unwrap(), 3);
        ops.fsync(f.as_fd()).unwrap();
        ops.syncfs(f.as_fd()).unwrap();
        assert_eq!(ops.create(dir, "a", rw, mode).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert!(ops.stat(dir, "a", AtFlags::SYMLINK_NOFOLLOW).unwrap().st_mode & 0o170000 == 0o100000);
        ops.rename(dir, "a", dir, "b").unwrap();
        let mut names = Vec::new();
        assert_eq!(ops.readdir(dir, ".", |n| names.push(n.to_string_lossy().into_owned())).unwrap(), 2);
        names.sort();
        assert_eq!(names, ["b", "d"]);
        let mut buf = [0u8; 8];
        let b = ops.open(dir, "b", OFlags::RDWR).unwrap();
        assert_eq!(ops.read(b.as_fd(), &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
        assert_eq!(ops.read(b.as_fd(), &mut buf).unwrap(), 0);
        ops.unlink(dir, "b").unwrap();
        assert_eq!(ops.stat(dir, "b", AtFlags::empty()).unwrap_err().kind(), io::ErrorKind::NotFound);

        // By full path from the working directory, as mdtest names its files.
        let d = base.join("d");
        ops.create(CWD, d.join("x"), rw, mode).unwrap();
        ops.stat(CWD, d.join("x"), AtFlags::empty()).unwrap();
        assert_eq!(ops.readdir(CWD, &d, |_| {}).unwrap(), 1);
        ops.rename(CWD, d.join("x"), CWD, d.join("y")).unwrap();
        ops.unlink(CWD, d.join("y")).unwrap();
        ops.rmdir(CWD, &d).unwrap();
        assert_eq!(ops.readdir(dir, ".", |_| {}).unwrap(), 0);
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// What a hostile filesystem serves: a directory that is a link out, a file that is a link,
    /// a FIFO where a file was. Nothing is followed, nothing blocks.
    #[test]
    fn links_anywhere_are_refused_and_fifos_do_not_block() {
        let base = std::env::temp_dir().join(format!("fsarena-h5-fsops-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::os::unix::fs::symlink(base.join("out"), base.join("d")).unwrap();
        std::fs::write(base.join("out/f"), b"host").unwrap();
        std::os::unix::fs::symlink(base.join("out/f"), base.join("l")).unwrap();
        rustix::fs::mknodat(CWD, base.join("p"), rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let mut ops = PsyncFsOps;
        let root = rustix::fs::open(&base, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let dir = root.as_fd();
        let mode = Mode::from_raw_mode(0o644);
        let lp = |e: io::Error| e.raw_os_error() == Some(libc::ELOOP);
        assert!(lp(ops.create(dir, "d/new", OFlags::RDWR | OFlags::EXCL, mode).unwrap_err()));
        assert!(lp(ops.open(dir, "d/f", OFlags::RDWR).unwrap_err()));
        assert!(lp(ops.open(dir, "l", OFlags::RDONLY).unwrap_err()));
        assert!(ops.open(dir, "d", OFlags::PATH | OFlags::DIRECTORY).is_err());
        assert!(!base.join("out/new").exists());
        // O_RDWR on a FIFO opens, and its read would wait for ever: here it does not.
        let p = ops.open(dir, "p", OFlags::RDWR).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(ops.read(p.as_fd(), &mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
