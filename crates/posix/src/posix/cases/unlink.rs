//! unlink(2), unlinkat(2): POSIX.1-2017 unlink()/unlinkat() and the Linux man page. Removes a
//! name: the file loses a link (its ctime is marked for update while links remain; an open
//! descriptor still reaches its data when none remain), the parent's mtime and ctime are
//! marked for update. A directory is refused (Linux: EISDIR, where POSIX says EPERM) unless
//! unlinkat is given AT_REMOVEDIR, which behaves as rmdir. Only write and search permission
//! on the directory matter, not the file's own mode, except in a sticky directory (the owner
//! of the file or of the directory, or root) and for immutable/append-only files and
//! directories (EPERM).

use super::rename::read_all;
use super::sys::{cstr, open, sys_int};
use super::{mkdir, touch, write_file, RustCase};
use crate::posix::check::{eq, err, ok, stat};
use rustix::fs::{AtFlags, OFlags, CWD};
use rustix::io::Errno;

/// The unlink family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "unlink.open_file_data.readable",
        security: false,
        run: |_| {
            write_file("f", b"still here")?;
            let fd = open("f", OFlags::RDONLY)?;
            ok("unlink f", rustix::fs::unlink("f"))?;
            // POSIX: "if one or more processes have the file open when the last link is removed,
            // the link shall be removed before unlink() returns, but the removal of the file
            // contents shall be postponed until all references to the file are closed".
            err("stat f after unlink", rustix::fs::stat("f"), Errno::NOENT)?;
            eq("link count (fstat)", ok("fstat", rustix::fs::fstat(&fd))?.st_nlink, 0)?;
            eq("data read through the open descriptor", read_all(&fd)?, b"still here".to_vec())
        },
    },
    RustCase {
        name: "unlink.open_file_writable.written",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            ok("unlink f", rustix::fs::unlink("f"))?;
            ok("write through the open descriptor", rustix::io::write(&fd, b"later"))?;
            eq("data read back", read_all(&fd)?, b"later".to_vec())
        },
    },
    RustCase {
        name: "unlink.unlinkat_dirfd.removed",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let d = open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("unlinkat d:f", rustix::fs::unlinkat(&d, "f", AtFlags::empty()))?;
            err("stat d/f after unlinkat", rustix::fs::stat("d/f"), Errno::NOENT)
        },
    },
    RustCase {
        name: "unlink.unlinkat_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // AT_SYMLINK_NOFOLLOW means nothing to unlinkat: "An invalid flag value was
            // specified in flags".
            err(
                "unlinkat f AT_SYMLINK_NOFOLLOW",
                rustix::fs::unlinkat(CWD, "f", AtFlags::SYMLINK_NOFOLLOW),
                Errno::INVAL,
            )?;
            stat("f").map(drop)
        },
    },
    RustCase {
        name: "unlink.unlinkat_file_as_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let f = open("f", OFlags::RDONLY)?;
            err("unlinkat f:x", rustix::fs::unlinkat(&f, "x", AtFlags::empty()), Errno::NOTDIR)
        },
    },
    RustCase {
        name: "unlink.unlinkat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("unlinkat -1:f", unlinkat_bad_dirfd("f"), Errno::BADF)
        },
    },
    RustCase {
        name: "unlink.unlinkat_absolute_ignores_dirfd.removed",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            touch("a", 0o644)?;
            let f = open("f", OFlags::RDONLY)?;
            // unlinkat: an absolute path ignores dirfd, even one that is not a directory.
            ok("unlinkat f:/abs/a", rustix::fs::unlinkat(&f, c.path("a"), AtFlags::empty()))?;
            err("stat a after unlinkat", rustix::fs::stat("a"), Errno::NOENT)
        },
    },
];

/// unlinkat with a directory descriptor that is not open (-1, not AT_FDCWD).
fn unlinkat_bad_dirfd(p: &str) -> rustix::io::Result<()> {
    let name = cstr(p);
    // SAFETY: a NUL-terminated name alive across the call, only read by the kernel; the
    // descriptor -1 is refused (EBADF) before any use.
    sys_int(unsafe { libc::unlinkat(-1, name.as_ptr(), 0) })
}
