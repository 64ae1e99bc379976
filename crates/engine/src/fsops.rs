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

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, Stat};
use rustix::path::Arg;
use std::ffi::CStr;
use std::io;

/// The metadata operations a workload times. Errors are the system call's.
pub trait FsOps: Send {
    /// mkdir(2) `path` under `dir`.
    fn mkdir<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, mode: Mode) -> io::Result<()>;
    /// Creates and opens a file: open(2) with `O_CREAT` added to `flags` (mdtest: `O_RDWR`;
    /// add `O_EXCL | O_NOFOLLOW` to never reuse or follow something planted).
    fn create<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags, mode: Mode) -> io::Result<OwnedFd>;
    /// Opens an existing file with `flags`.
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
        Ok(rustix::fs::openat(dir, path, flags | OFlags::CREATE | OFlags::CLOEXEC, mode)?)
    }

    #[inline]
    fn open<P: Arg>(&mut self, dir: BorrowedFd<'_>, path: P, flags: OFlags) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(dir, path, flags | OFlags::CLOEXEC, Mode::empty())?)
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
}
