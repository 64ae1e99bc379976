//! link(2) and linkat(2): POSIX.1-2017 link() and linkat(), and the Linux man page. A new name
//! for an existing file: its link count grows by one and its ctime is marked for update, the
//! new parent's mtime and ctime too. Linux's link() does not follow a symlink (it links the
//! symlink itself), linkat() follows one only with AT_SYMLINK_FOLLOW; AT_EMPTY_PATH links the
//! file of a descriptor. Directories cannot be linked (EPERM), nor can a file across mounts
//! (EXDEV); with fs.protected_hardlinks = 1 a user may link only files it owns or can read
//! and write (EPERM).

use super::sys::{cstr, open, sys, BAD_FD};
use super::{chmod, chown, mkdir, touch, RustCase};
use crate::posix::check::{eq, err, ok, stat, unsupported};
use crate::posix::ctx::{U1, U2};
use rustix::fs::OFlags;
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// `link old new`.
fn link(old: &str, new: &str) -> rustix::io::Result<()> {
    rustix::fs::link(old, new)
}

/// `linkat(olddirfd, old, AT_FDCWD, new, flags)` through the raw syscall, for descriptors
/// and flags rustix does not let through.
fn linkat_raw(olddirfd: libc::c_int, old: &str, new: &str, flags: libc::c_int) -> rustix::io::Result<()> {
    let (o, n) = (cstr(old), cstr(new));
    // SAFETY: both strings are NUL-terminated and alive across the call, which only reads them.
    sys(unsafe { libc::syscall(libc::SYS_linkat, olddirfd, o.as_ptr(), libc::AT_FDCWD, n.as_ptr(), flags) })
}

/// /proc/sys/fs/protected_hardlinks (proc(5)): 1 restricts links to files the caller owns or
/// may read and write; `None` when it cannot be read.
fn protected_hardlinks() -> Option<bool> {
    std::fs::read_to_string("/proc/sys/fs/protected_hardlinks").ok().map(|s| s.trim() != "0")
}

/// The link family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "link.linkat_empty_path.created",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::PATH)?;
            // AT_EMPTY_PATH links the file dirfd refers to (an O_PATH descriptor will do); root
            // has the CAP_DAC_READ_SEARCH it needs.
            ok("linkat (f, O_PATH) \"\" n AT_EMPTY_PATH", linkat_raw(fd.as_raw_fd(), "", "n", libc::AT_EMPTY_PATH))?;
            eq("inode of n", stat("n")?.ino, stat("f")?.ino)
        },
    },
    RustCase {
        name: "link.linkat_empty_path_unlinked.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            ok("unlink f", rustix::fs::unlink("f"))?;
            // linkat(2): "This will generally not work if the file has a link count of zero".
            err(
                "linkat (f, unlinked) \"\" n AT_EMPTY_PATH",
                linkat_raw(fd.as_raw_fd(), "", "n", libc::AT_EMPTY_PATH),
                Errno::NOENT,
            )
        },
    },
    RustCase {
        name: "link.linkat_empty_path_directory.EPERM",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let fd = open("d", OFlags::PATH | OFlags::DIRECTORY)?;
            // linkat(2): with AT_EMPTY_PATH "olddirfd can refer to any type of file except a
            // directory"; a directory is EPERM as for link().
            err(
                "linkat (d) \"\" n AT_EMPTY_PATH",
                linkat_raw(fd.as_raw_fd(), "", "n", libc::AT_EMPTY_PATH),
                Errno::PERM,
            )
        },
    },
    RustCase {
        name: "link.linkat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("linkat (-1) f n", linkat_raw(BAD_FD, "f", "n", 0), Errno::BADF)
        },
    },
    RustCase {
        name: "link.cross_mount.EXDEV",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let other = c.other_mount()?.join("fsarena-posix-link-never-made");
            err(&format!("link f {}", other.display()), rustix::fs::link("f", &other), Errno::XDEV)
        },
    },
    RustCase {
        name: "link.protected_not_owner_no_write.EPERM",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o644)?;
            chown("f", U2.uid, U2.gid)?;
            // proc(5), protected_hardlinks = 1: a user may link a file only when it owns it or
            // may read and write it (and it is regular, not set-user-ID nor executable
            // set-group-ID); link(2): "EPERM (since Linux 3.6)".
            match protected_hardlinks() {
                Some(true) => {}
                Some(false) => return Err(unsupported("fs.protected_hardlinks is 0: no restriction to check")),
                None => return Err(unsupported("/proc/sys/fs/protected_hardlinks cannot be read")),
            }
            c.as_user(U1, || err("link f w/n as uid 65534 (f of uid 65533, 0644)", link("f", "w/n"), Errno::PERM))
        },
    },
    RustCase {
        name: "link.protected_setuid.EPERM",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o644)?;
            chown("f", U2.uid, U2.gid)?;
            chmod("f", 0o4666)?;
            // Readable and writable by all, but set-user-ID: protected_hardlinks still refuses.
            match protected_hardlinks() {
                Some(true) => {}
                Some(false) => return Err(unsupported("fs.protected_hardlinks is 0: no restriction to check")),
                None => return Err(unsupported("/proc/sys/fs/protected_hardlinks cannot be read")),
            }
            c.as_user(U1, || err("link f w/n as uid 65534 (f of uid 65533, 04666)", link("f", "w/n"), Errno::PERM))
        },
    },
    RustCase {
        name: "link.name_max.created",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let name = "x".repeat(c.name_max());
            ok("link f NAME_MAX", link("f", name.as_str()))?;
            eq("inode of the NAME_MAX name", stat(name.as_str())?.ino, stat("f")?.ino)
        },
    },
    RustCase {
        name: "link.linkat_empty_path_unprivileged.ENOENT",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o644)?;
            // A descriptor root opened: without CAP_DAC_READ_SEARCH "ENOENT AT_EMPTY_PATH was
            // specified in flags, but the caller did not have the CAP_DAC_READ_SEARCH capability"
            // (linkat(2); since Linux 6.10 a descriptor the caller opened itself with the same
            // credentials is let through, not this one). Else a descriptor passed on would give a
            // name to a file its receiver could not otherwise reach.
            let fd = open("f", OFlags::RDONLY)?;
            let raw = fd.as_raw_fd();
            c.as_user(U1, || {
                err(
                    "linkat (f, root's) \"\" w/n AT_EMPTY_PATH as uid 65534",
                    linkat_raw(raw, "", "w/n", libc::AT_EMPTY_PATH),
                    Errno::NOENT,
                )
            })?;
            eq("link count of f", stat("f")?.nlink, 1)
        },
    },
];
