//! chmod(2), fchmod(2), fchmodat(2) and fchmodat2 (Linux 6.6): POSIX.1-2017 chmod() and
//! fchmod(), and the Linux man page. The owner (or root) sets the permission, set-id and
//! sticky bits; the file's ctime is marked for update, its mtime and the parent's times are
//! not. A non-owner gets EPERM; an owner outside the file's group loses S_ISGID silently;
//! `chmod` follows a last symlink, and a symlink's own mode cannot be changed (EOPNOTSUPP).

use super::sys::{cstr, open, sys, BAD_FD};
use super::{symlink, touch, RustCase};
use crate::posix::check::{eq, err, ok, stat, Miss, Octal};
use rustix::fs::OFlags;
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// fchmodat2(dirfd, path, mode, flags) by its syscall number: rustix and glibc before 2.39
/// answer AT_SYMLINK_NOFOLLOW themselves, without asking the kernel. ENOSYS on kernels
/// before 6.6.
fn fchmodat2(dirfd: libc::c_int, path: &str, mode: u32, flags: libc::c_int) -> rustix::io::Result<()> {
    let p = cstr(path);
    // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
    sys(unsafe { libc::syscall(libc::SYS_fchmodat2, dirfd, p.as_ptr(), mode, flags) })
}

/// fchmodat2 where the kernel has it, else unsupported with the reason.
fn need_fchmodat2(r: rustix::io::Result<()>) -> Result<rustix::io::Result<()>, Miss> {
    match r {
        Err(e) if e == Errno::NOSYS => Err(crate::posix::check::unsupported("no fchmodat2 system call (Linux < 6.6)")),
        r => Ok(r),
    }
}

/// The chmod family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "chmod.fchmod_bad_fd.EBADF",
        security: false,
        run: |_| {
            // SAFETY: fchmod takes a plain number; -1 is no descriptor.
            err("fchmod -1", sys(unsafe { libc::fchmod(BAD_FD, 0o644) }.into()), Errno::BADF)
        },
    },
    RustCase {
        name: "chmod.fchmodat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let p = cstr("f");
            // SAFETY: `p` is NUL-terminated and alive across the call.
            let r = sys(unsafe { libc::syscall(libc::SYS_fchmodat, BAD_FD, p.as_ptr(), 0o600, 0) });
            err("fchmodat (-1) f", r, Errno::BADF)
        },
    },
    RustCase {
        name: "chmod.fchmodat2_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // fchmodat2 takes AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH; any other flag is EINVAL.
            let r = need_fchmodat2(fchmodat2(libc::AT_FDCWD, "f", 0o600, libc::AT_REMOVEDIR))?;
            err("fchmodat2 f 0600 AT_REMOVEDIR", r, Errno::INVAL)?;
            eq("mode of f", stat("f")?.perm(), Octal(0o644))
        },
    },
    RustCase {
        name: "chmod.fchmodat2_nofollow_symlink.EOPNOTSUPP",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            // fchmodat(2): AT_SYMLINK_NOFOLLOW: "If pathname is a symbolic link, do not
            // dereference it: instead operate on the link itself", and ENOTSUP when that is not
            // supported: Linux has no mode for symlinks and refuses (EOPNOTSUPP, = ENOTSUP), and
            // above all must not change the target.
            let r = need_fchmodat2(fchmodat2(libc::AT_FDCWD, "l", 0o600, libc::AT_SYMLINK_NOFOLLOW))?;
            err("fchmodat2 l 0600 AT_SYMLINK_NOFOLLOW", r, Errno::OPNOTSUPP)?;
            eq("mode of the target f", stat("f")?.perm(), Octal(0o644))
        },
    },
    RustCase {
        name: "chmod.fchmodat2_nofollow_regular.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // AT_SYMLINK_NOFOLLOW only matters when the last component is a symlink.
            let r = need_fchmodat2(fchmodat2(libc::AT_FDCWD, "f", 0o600, libc::AT_SYMLINK_NOFOLLOW))?;
            ok("fchmodat2 f 0600 AT_SYMLINK_NOFOLLOW", r)?;
            eq("mode of f", stat("f")?.perm(), Octal(0o600))
        },
    },
    RustCase {
        name: "chmod.fchmodat2_empty_path.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::PATH)?;
            // AT_EMPTY_PATH: operate on dirfd itself, an O_PATH descriptor included.
            let r = need_fchmodat2(fchmodat2(fd.as_raw_fd(), "", 0o600, libc::AT_EMPTY_PATH))?;
            ok("fchmodat2 (f, O_PATH) \"\" 0600 AT_EMPTY_PATH", r)?;
            eq("mode of f", stat("f")?.perm(), Octal(0o600))
        },
    },
    RustCase {
        name: "chmod.file_type_bits.ignored",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let before = stat("f")?;
            let p = cstr("f");
            // Only the permission, set-id and sticky bits of mode are used: S_IFDIR in it does
            // not make f a directory. Through libc, so that no library masks the bits first.
            // SAFETY: `p` is NUL-terminated and alive across the call, which only reads it.
            let r = sys(unsafe { libc::chmod(p.as_ptr(), 0o040_600) }.into());
            ok("chmod f 040600 (S_IFDIR | 0600)", r)?;
            let after = stat("f")?;
            eq("file type of f", after.kind(), before.kind())?;
            eq("mode of f", after.perm(), Octal(0o600))
        },
    },
];
