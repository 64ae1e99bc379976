//! link(2) and linkat(2): POSIX.1-2017 link() and linkat(), and the Linux man page. A new name
//! for an existing file: its link count grows by one and its ctime is marked for update, the
//! new parent's mtime and ctime too. Linux's link() does not follow a symlink (it links the
//! symlink itself), linkat() follows one only with AT_SYMLINK_FOLLOW; AT_EMPTY_PATH links the
//! file of a descriptor. Directories cannot be linked (EPERM), nor can a file across mounts
//! (EXDEV); with fs.protected_hardlinks = 1 a user may link only files it owns or can read
//! and write (EPERM).

use super::sys::{cstr, open, sys, BAD_FD};
use super::{chmod, chown, mkdir, symlink, touch, write_file, RustCase};
use crate::posix::check::{eq, err, moved, ok, stat, unsupported, Mark};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{AtFlags, OFlags, CWD};
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
        name: "link.regular_file.created",
        security: false,
        run: |c| {
            write_file("f", b"data")?;
            let (file, dir) = (stat("f")?, stat(".")?);
            c.tick();
            ok("link f n", link("f", "n"))?;
            let (f, n) = (stat("f")?, stat("n")?);
            eq("inode of n", n.ino, file.ino)?;
            eq("link count of f", f.nlink, file.nlink + 1)?;
            eq("size of n", n.size, 4)?;
            // POSIX link(): "shall mark for update the last file status change timestamp of the
            // file ... and the last data modification and last file status change timestamps of
            // the directory that contains the new entry".
            moved("f", file.times, f.times, Mark::Any, Mark::Same, Mark::Changed)?;
            moved("the parent", dir.times, stat(".")?.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    RustCase {
        name: "link.symlink_itself.created",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            // link(2): "POSIX.1-2001 says that link() should dereference oldpath if it is a
            // symbolic link. However, since kernel 2.0, Linux does not do so": Linux's choice.
            ok("link l n (l -> f)", link("l", "n"))?;
            let (l, n, f) = (stat("l")?, stat("n")?, stat("f")?);
            eq("inode of n", n.ino, l.ino)?;
            eq("link count of the symlink l", l.nlink, 2)?;
            eq("link count of the target f", f.nlink, 1)
        },
    },
    RustCase {
        name: "link.linkat_dirfds.created",
        security: false,
        run: |_| {
            mkdir("a", 0o755)?;
            mkdir("b", 0o755)?;
            touch("a/f", 0o644)?;
            let (da, db) =
                (open("a", OFlags::RDONLY | OFlags::DIRECTORY)?, open("b", OFlags::RDONLY | OFlags::DIRECTORY)?);
            ok("linkat (a) f (b) n 0", rustix::fs::linkat(&da, "f", &db, "n", AtFlags::empty()))?;
            eq("inode of b/n", stat("b/n")?.ino, stat("a/f")?.ino)
        },
    },
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
        name: "link.linkat_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("linkat f n AT_REMOVEDIR", linkat_raw(libc::AT_FDCWD, "f", "n", libc::AT_REMOVEDIR), Errno::INVAL)?;
            err("stat n", rustix::fs::stat("n"), Errno::NOENT)
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
        name: "link.linkat_file_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            err("linkat (a file) x n", rustix::fs::linkat(&fd, "x", CWD, "n", AtFlags::empty()), Errno::NOTDIR)
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
        name: "link.linkat_opath_dirfd.created",
        security: false,
        run: |_| {
            mkdir("a", 0o755)?;
            touch("a/f", 0o644)?;
            // An O_PATH descriptor of a directory serves as dirfd.
            let da = open("a", OFlags::PATH | OFlags::DIRECTORY)?;
            ok("linkat (a, O_PATH) f . n 0", rustix::fs::linkat(&da, "f", CWD, "n", AtFlags::empty()))?;
            eq("inode of n", stat("n")?.ino, stat("a/f")?.ino)
        },
    },
    RustCase {
        name: "link.as_user.created",
        security: false,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("w/f", 0o644)?;
            chown("w/f", U1.uid, U1.gid)?;
            let before = stat("w/f")?;
            c.tick();
            c.as_user(U1, || ok("link w/f w/n as uid 65534", link("w/f", "w/n")))?;
            let after = stat("w/n")?;
            // The new name is the same file: owner, group and mode are its own, not the caller's.
            eq("owner, group and mode of w/n", (after.uid, after.gid, after.perm()), (U1.uid, U1.gid, before.perm()))?;
            moved("w/f", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
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
