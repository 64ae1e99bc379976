//! rename(2), continued: renameat (names relative to directory descriptors), renameat2's
//! RENAME_NOREPLACE and RENAME_EXCHANGE (Linux), and who may rename: write permission on both
//! parents and search permission on every component (POSIX.1-2017 rename() EACCES), write
//! permission on a directory moved to another parent (its `..` changes), sticky directories
//! (only the owner of the entry or of the directory, or root), and the immutable and
//! append-only attributes (EPERM, ioctl_iflags(2)).

use super::sys::{cstr, sys_int};
use super::{chown, mkdir, touch, write_file, RustCase};
use crate::posix::check::{eq, err, ok, stat, unsupported, Check, Miss};
use crate::posix::ctx::U1;
use rustix::fs::{Mode, OFlags, RenameFlags, CWD};
use rustix::io::Errno;

/// The rename family: renameat, renameat2, permissions and attributes.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "rename.renameat_dirfds.renamed",
        security: false,
        run: |_| {
            mkdir("s", 0o755)?;
            mkdir("t", 0o755)?;
            touch("s/a", 0o644)?;
            let a = stat("s/a")?;
            let (s, t) = (dir_fd("s")?, dir_fd("t")?);
            ok("renameat s:a t:b", rustix::fs::renameat(&s, "a", &t, "b"))?;
            err("stat s/a after renameat", rustix::fs::stat("s/a"), Errno::NOENT)?;
            eq("inode of t/b", stat("t/b")?.ino, a.ino)
        },
    },
    RustCase {
        name: "rename.renameat_file_as_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            touch("a", 0o644)?;
            let f = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            // rename(2): "oldpath is relative and olddirfd is a file descriptor referring to a
            // file other than a directory".
            err("renameat CWD:a f:b", rustix::fs::renameat(CWD, "a", &f, "b"), Errno::NOTDIR)
        },
    },
    RustCase {
        name: "rename.renameat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("a", 0o644)?;
            err("renameat -1:a CWD:b", renameat_bad_old_dirfd("a", "b"), Errno::BADF)
        },
    },
    RustCase {
        name: "rename.noreplace_with_exchange.EINVAL",
        security: false,
        run: |_| {
            touch("a", 0o644)?;
            touch("b", 0o644)?;
            let both = RenameFlags::NOREPLACE | RenameFlags::EXCHANGE;
            err("renameat2 a b NOREPLACE|EXCHANGE", rename2("a", "b", both), Errno::INVAL)
        },
    },
    RustCase {
        name: "rename.renameat_absolute_ignores_dirfd.renamed",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            touch("a", 0o644)?;
            let f = ok("open f", rustix::fs::open("f", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
            // rename(2): "If oldpath is absolute, then olddirfd is ignored" (even a non-directory).
            ok("renameat f:/abs/a f:/abs/b", rustix::fs::renameat(&f, c.path("a"), &f, c.path("b")))?;
            stat("b").map(drop)
        },
    },
    RustCase {
        name: "rename.whiteout.created",
        security: false,
        run: |_| {
            write_file("a", b"x")?;
            let a = stat("a")?;
            // rename(2): RENAME_WHITEOUT leaves at the old name "a character device with a
            // {0,0} device number" (needs CAP_MKNOD: the runner is root).
            flag_supported("RENAME_WHITEOUT", ok("renameat2 a b WHITEOUT", rename2("a", "b", RenameFlags::WHITEOUT)))?;
            eq("inode of b", stat("b")?.ino, a.ino)?;
            let w = stat("a")?;
            eq("type and device at a", (w.kind(), w.rdev), (0o020_000, (0, 0)))
        },
    },
    RustCase {
        name: "rename.whiteout_unprivileged.created",
        security: false,
        run: |c| {
            mkdir("d", 0o777)?;
            touch("d/a", 0o666)?;
            chown("d/a", U1.uid, U1.gid)?;
            // rename(2) still says EPERM without CAP_MKNOD, but since Linux 5.8 ("vfs: allow
            // unprivileged whiteout creation") the whiteout, a {0,0} character device that
            // stands for nothing, needs no privilege (fs/namei.c, vfs_mknod): the kernel's
            // behaviour is expected, the man page is out of date.
            c.as_user(U1, || {
                flag_supported(
                    "RENAME_WHITEOUT",
                    ok("renameat2 d/a d/b WHITEOUT as uid 65534", rename2("d/a", "d/b", RenameFlags::WHITEOUT)),
                )
            })?;
            eq("type at d/a", stat("d/a")?.kind(), 0o020_000)
        },
    },
    RustCase {
        name: "rename.whiteout_with_exchange.EINVAL",
        security: false,
        run: |_| {
            touch("a", 0o644)?;
            touch("b", 0o644)?;
            let both = RenameFlags::WHITEOUT | RenameFlags::EXCHANGE;
            err("renameat2 a b WHITEOUT|EXCHANGE", rename2("a", "b", both), Errno::INVAL)
        },
    },
];

/// An O_DIRECTORY descriptor of `p`.
fn dir_fd(p: &str) -> Result<std::os::fd::OwnedFd, Miss> {
    ok(&format!("open {p}"), rustix::fs::open(p, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()))
}

/// renameat2 relative to the working directory.
fn rename2(old: &str, new: &str, flags: RenameFlags) -> rustix::io::Result<()> {
    rustix::fs::renameat_with(CWD, old, CWD, new, flags)
}

/// A case's check of a renameat2 flag, made unsupported when the filesystem refuses the
/// valid flag with EINVAL (rename(2): "The filesystem does not support one of the flags").
fn flag_supported(flag: &str, r: Check) -> Check {
    match r {
        Err(Miss::Fail { actual, .. }) if actual == "EINVAL" => {
            Err(unsupported(format!("renameat2 {flag}: EINVAL, the filesystem does not implement the flag")))
        }
        r => r,
    }
}

/// renameat with an old directory descriptor that is not open (-1, not AT_FDCWD).
fn renameat_bad_old_dirfd(old: &str, new: &str) -> rustix::io::Result<()> {
    let (o, n) = (cstr(old), cstr(new));
    // SAFETY: both names are NUL-terminated strings alive across the call; the kernel only
    // reads them, and -1 is refused (EBADF) before any descriptor is used.
    let r = unsafe { libc::renameat(-1, o.as_ptr(), libc::AT_FDCWD, n.as_ptr()) };
    sys_int(r)
}
