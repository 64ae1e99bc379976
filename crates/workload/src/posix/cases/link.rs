//! link(2) and linkat(2): POSIX.1-2017 link() and linkat(), and the Linux man page. A new name
//! for an existing file: its link count grows by one and its ctime is marked for update, the
//! new parent's mtime and ctime too. Linux's link() does not follow a symlink (it links the
//! symlink itself), linkat() follows one only with AT_SYMLINK_FOLLOW; AT_EMPTY_PATH links the
//! file of a descriptor. Directories cannot be linked (EPERM), nor can a file across mounts
//! (EXDEV); with fs.protected_hardlinks = 1 a user may link only files it owns or can read
//! and write (EPERM).

use super::sys::{cstr, open, set_flag, sys, BAD_FD};
use super::{chmod, chown, mkdir, symlink, too_long_name, too_long_path, touch, write_file, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, unsupported, Mark};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{AtFlags, IFlags, OFlags, CWD};
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// `link old new`.
fn link(old: &str, new: &str) -> rustix::io::Result<()> {
    rustix::fs::link(old, new)
}

/// `linkat(AT_FDCWD, old, AT_FDCWD, new, flags)`.
fn linkat(old: &str, new: &str, flags: AtFlags) -> rustix::io::Result<()> {
    rustix::fs::linkat(CWD, old, CWD, new, flags)
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
pub static CASES: &[Case] = &[
    Case {
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
    Case {
        name: "link.other_dir.created",
        security: false,
        run: |c| {
            mkdir("a", 0o755)?;
            mkdir("b", 0o755)?;
            touch("a/f", 0o644)?;
            let (a, b) = (stat("a")?, stat("b")?);
            c.tick();
            ok("link a/f b/n", link("a/f", "b/n"))?;
            eq("inode of b/n", stat("b/n")?.ino, stat("a/f")?.ino)?;
            // The old name's directory is not written.
            moved("old parent a", a.times, stat("a")?.times, Mark::Any, Mark::Same, Mark::Same)?;
            moved("new parent b", b.times, stat("b")?.times, Mark::Any, Mark::Changed, Mark::Changed)?;
            eq("link count of new parent b", stat("b")?.nlink, b.nlink)
        },
    },
    Case {
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
    Case {
        name: "link.linkat_no_follow.created",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            // linkat(2): "By default, linkat() does not dereference oldpath if it is a symbolic
            // link (like link())".
            ok("linkat l n 0 (l -> f)", linkat("l", "n", AtFlags::empty()))?;
            eq("inode of n", stat("n")?.ino, stat("l")?.ino)?;
            eq("link count of the target f", stat("f")?.nlink, 1)
        },
    },
    Case {
        name: "link.linkat_follow.created",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            ok("linkat l n AT_SYMLINK_FOLLOW (l -> f)", linkat("l", "n", AtFlags::SYMLINK_FOLLOW))?;
            eq("inode of n", stat("n")?.ino, stat("f")?.ino)?;
            eq("link count of the target f", stat("f")?.nlink, 2)?;
            eq("link count of the symlink l", stat("l")?.nlink, 1)
        },
    },
    Case {
        name: "link.linkat_follow_dangling.ENOENT",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            err("linkat l n AT_SYMLINK_FOLLOW (l -> nothing)", linkat("l", "n", AtFlags::SYMLINK_FOLLOW), Errno::NOENT)
        },
    },
    Case {
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
    Case {
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
    Case {
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
    Case {
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
    Case {
        name: "link.linkat_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("linkat f n AT_REMOVEDIR", linkat_raw(libc::AT_FDCWD, "f", "n", libc::AT_REMOVEDIR), Errno::INVAL)?;
            err("stat n", rustix::fs::stat("n"), Errno::NOENT)
        },
    },
    Case {
        name: "link.linkat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("linkat (-1) f n", linkat_raw(BAD_FD, "f", "n", 0), Errno::BADF)
        },
    },
    Case {
        name: "link.linkat_file_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            err("linkat (a file) x n", rustix::fs::linkat(&fd, "x", CWD, "n", AtFlags::empty()), Errno::NOTDIR)
        },
    },
    Case {
        name: "link.new_exists.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            touch("n", 0o644)?;
            err("link f n (n a file)", link("f", "n"), Errno::EXIST)?;
            eq("link count of f", stat("f")?.nlink, 1)
        },
    },
    Case {
        name: "link.new_is_dir.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            mkdir("d", 0o755)?;
            err("link f d (d a directory)", link("f", "d"), Errno::EXIST)
        },
    },
    Case {
        name: "link.new_dangling_symlink.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("nothing", "n")?;
            // The new name is not followed: a symlink there, even dangling, exists.
            err("link f n (n -> nothing)", link("f", "n"), Errno::EXIST)?;
            err("stat nothing", rustix::fs::stat("nothing"), Errno::NOENT)
        },
    },
    Case {
        name: "link.to_itself.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link f f", link("f", "f"), Errno::EXIST)
        },
    },
    Case {
        name: "link.directory.EPERM",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // link(2): "EPERM oldpath is a directory" (POSIX allows supporting it; Linux does not).
            err("link d n (d a directory)", link("d", "n"), Errno::PERM)
        },
    },
    Case {
        name: "link.cross_mount.EXDEV",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let other = c.other_mount()?.join("fsarena-posix-link-never-made");
            err(&format!("link f {}", other.display()), rustix::fs::link("f", &other), Errno::XDEV)
        },
    },
    Case {
        name: "link.missing.ENOENT",
        security: false,
        run: |_| err("link nothing n", link("nothing", "n"), Errno::NOENT),
    },
    Case {
        name: "link.missing_new_parent.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link f nothing/n", link("f", "nothing/n"), Errno::NOENT)
        },
    },
    Case {
        name: "link.empty_path.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link \"\" n", link("", "n"), Errno::NOENT)?;
            err("link f \"\"", link("f", ""), Errno::NOENT)
        },
    },
    Case {
        name: "link.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link f/x n", link("f/x", "n"), Errno::NOTDIR)
        },
    },
    Case {
        name: "link.new_component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            touch("g", 0o644)?;
            err("link f g/n", link("f", "g/n"), Errno::NOTDIR)
        },
    },
    Case {
        name: "link.trailing_slash_on_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link f/ n", link("f/", "n"), Errno::NOTDIR)
        },
    },
    Case {
        name: "link.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("link NAME_MAX+1 n", link(too_long_name(c).as_str(), "n"), Errno::NAMETOOLONG),
    },
    Case {
        name: "link.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("link PATH_MAX n", link(too_long_path().as_str(), "n"), Errno::NAMETOOLONG),
    },
    Case {
        name: "link.new_path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("link f PATH_MAX", link("f", too_long_path().as_str()), Errno::NAMETOOLONG)
        },
    },
    Case {
        name: "link.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("link l1/x n", link("l1/x", "n"), Errno::LOOP)
        },
    },
    Case {
        name: "link.new_symlink_loop.ELOOP",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("link f l1/n", link("f", "l1/n"), Errno::LOOP)
        },
    },
    Case {
        name: "link.linkat_follow_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err(
                "linkat l1 n AT_SYMLINK_FOLLOW (l1 -> l2 -> l1)",
                linkat("l1", "n", AtFlags::SYMLINK_FOLLOW),
                Errno::LOOP,
            )
        },
    },
    Case {
        name: "link.no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || err("link f d/n as uid 65534 (d is root's 0755)", link("f", "d/n"), Errno::ACCESS))
        },
    },
    Case {
        name: "link.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            mkdir("w", 0o777)?;
            touch("d/f", 0o644)?;
            chown("d/f", U1.uid, U1.gid)?;
            chmod("d", 0o666)?;
            c.as_user(U1, || err("link d/f w/n as the owner of f (d is 0666)", link("d/f", "w/n"), Errno::ACCESS))
        },
    },
    Case {
        name: "link.new_no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o776)?;
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || err("link f d/n as uid 65534 (d is 0776)", link("f", "d/n"), Errno::ACCESS))
        },
    },
    Case {
        name: "link.owner.created",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o600)?;
            chown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || ok("link f w/n as its owner uid 65534", link("f", "w/n")))?;
            eq("owner of w/n", stat("w/n")?.uid, U1.uid)
        },
    },
    Case {
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
    Case {
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
    Case {
        name: "link.not_owner_read_write.created",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o666)?;
            chown("f", U2.uid, U2.gid)?;
            // Read and write permission is enough, protected_hardlinks or not.
            c.as_user(U1, || ok("link f w/n as uid 65534 (f of uid 65533, 0666)", link("f", "w/n")))?;
            eq("link count of f", stat("f")?.nlink, 2)
        },
    },
    Case {
        name: "link.immutable.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::IMMUTABLE)?;
            // link(2): "EPERM oldpath is marked immutable or append-only".
            err("link f n (f immutable)", link("f", "n"), Errno::PERM)
        },
    },
    Case {
        name: "link.append_only.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::APPEND)?;
            err("link f n (f append-only)", link("f", "n"), Errno::PERM)
        },
    },
    Case {
        name: "link.immutable_new_parent.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::IMMUTABLE)?;
            err("link f d/n (d immutable)", link("f", "d/n"), Errno::PERM)
        },
    },
    Case {
        name: "link.new_trailing_slash.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // A trailing slash asks for a directory, which a link to a file cannot be. Linux
            // answers ENOENT (the name does not exist as a directory); POSIX's path resolution
            // also allows ENOTDIR.
            err_any("link f n/", link("f", "n/"), &[Errno::NOENT, Errno::NOTDIR])?;
            err("stat n", rustix::fs::stat("n"), Errno::NOENT)
        },
    },
    Case {
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
    Case {
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
    Case {
        name: "link.name_max.created",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let name = "x".repeat(c.name_max());
            ok("link f NAME_MAX", link("f", name.as_str()))?;
            eq("inode of the NAME_MAX name", stat(name.as_str())?.ino, stat("f")?.ino)
        },
    },
    Case {
        name: "link.new_dot.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            mkdir("d", 0o755)?;
            err("link f d/.", link("f", "d/."), Errno::EXIST)?;
            err("link f d/..", link("f", "d/.."), Errno::EXIST)
        },
    },
    Case {
        name: "link.protected_owner_no_access.created",
        security: true,
        run: |c| {
            mkdir("w", 0o777)?;
            touch("f", 0o000)?;
            chown("f", U1.uid, U1.gid)?;
            // protected_hardlinks exempts the owner: no read or write permission needed.
            c.as_user(U1, || ok("link f w/n as its owner (f is 0000)", link("f", "w/n")))?;
            eq("link count of f", stat("f")?.nlink, 2)
        },
    },
    Case {
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
    // Last of the family: fuse2fs 1.47 answers it ENOENT but adds a link and leaves a directory
    // that reads EIO, which stops the run on that target (the case's directory cannot go).
    Case {
        name: "link.new_name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            err("link f NAME_MAX+1", link("f", too_long_name(c).as_str()), Errno::NAMETOOLONG)
        },
    },
];
