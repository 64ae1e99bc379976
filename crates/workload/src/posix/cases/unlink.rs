//! unlink(2), unlinkat(2): POSIX.1-2017 unlink()/unlinkat() and the Linux man page. Removes a
//! name: the file loses a link (its ctime is marked for update while links remain; an open
//! descriptor still reaches its data when none remain), the parent's mtime and ctime are
//! marked for update. A directory is refused (Linux: EISDIR, where POSIX says EPERM) unless
//! unlinkat is given AT_REMOVEDIR, which behaves as rmdir. Only write and search permission
//! on the directory matter, not the file's own mode, except in a sticky directory (the owner
//! of the file or of the directory, or root) and for immutable/append-only files and
//! directories (EPERM).

use super::rename::read_all;
use super::sys::set_flag;
use super::sys::{cstr, open, sys_int};
use super::{chmod, chown, mkdir, symlink, too_long_name, too_long_path, touch, write_file, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, Mark};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{AtFlags, IFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// The unlink family.
pub static CASES: &[Case] = &[
    Case {
        name: "unlink.file.removed",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let before = stat("d")?;
            c.tick();
            ok("unlink d/f", rustix::fs::unlink("d/f"))?;
            err("stat d/f after unlink", rustix::fs::stat("d/f"), Errno::NOENT)?;
            let after = stat("d")?;
            eq("link count of the parent", after.nlink, before.nlink)?;
            // POSIX: "shall mark for update the last data modification and last file status
            // change timestamps of the parent directory".
            moved("parent d", before.times, after.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "unlink.one_of_two_links.decremented",
        security: false,
        run: |c| {
            write_file("a", b"data")?;
            ok("link a b", rustix::fs::link("a", "b"))?;
            let before = stat("b")?;
            c.tick();
            ok("unlink a", rustix::fs::unlink("a"))?;
            let after = stat("b")?;
            eq("link count of b", after.nlink, 1)?;
            // POSIX: "If the link count of the file is not 0, unlink() shall mark for update the
            // last file status change timestamp of the file"; its data is untouched.
            moved("file b", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
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
    Case {
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
    Case {
        name: "unlink.symlink.removed",
        security: false,
        run: |_| {
            write_file("t", b"target")?;
            symlink("t", "l")?;
            ok("unlink l", rustix::fs::unlink("l"))?;
            // The link goes, not the file it names.
            err("lstat l after unlink", rustix::fs::lstat("l"), Errno::NOENT)?;
            eq("size of t", stat("t")?.size, 6)
        },
    },
    Case {
        name: "unlink.dangling_symlink.removed",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            ok("unlink l (dangling)", rustix::fs::unlink("l"))?;
            err("lstat l after unlink", rustix::fs::lstat("l"), Errno::NOENT)
        },
    },
    Case {
        name: "unlink.fifo.removed",
        security: false,
        run: |_| {
            ok("mkfifo p", rustix::fs::mknodat(CWD, "p", rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o644), 0))?;
            ok("unlink p", rustix::fs::unlink("p"))?;
            err("lstat p after unlink", rustix::fs::lstat("p"), Errno::NOENT)
        },
    },
    Case {
        name: "unlink.directory.EISDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // POSIX: EPERM; Linux returns EISDIR ("the non-POSIX value returned since Linux
            // 2.1.132", unlink(2)), decided by the VFS for every filesystem: Linux's expected.
            err("unlink d", rustix::fs::unlink("d"), Errno::ISDIR)
        },
    },
    Case {
        name: "unlink.missing.ENOENT",
        security: false,
        run: |_| err("unlink nothing", rustix::fs::unlink("nothing"), Errno::NOENT),
    },
    Case {
        name: "unlink.missing_component.ENOENT",
        security: false,
        run: |_| err("unlink nothing/f", rustix::fs::unlink("nothing/f"), Errno::NOENT),
    },
    Case {
        name: "unlink.empty_path.ENOENT",
        security: false,
        run: |_| err("unlink \"\"", rustix::fs::unlink(""), Errno::NOENT),
    },
    Case {
        name: "unlink.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("unlink f/x", rustix::fs::unlink("f/x"), Errno::NOTDIR)
        },
    },
    Case {
        name: "unlink.file_trailing_slash.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // A trailing slash resolves only to a directory (POSIX XBD 4.13).
            err("unlink f/", rustix::fs::unlink("f/"), Errno::NOTDIR)?;
            stat("f").map(drop)
        },
    },
    Case {
        name: "unlink.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("unlink NAME_MAX+1", rustix::fs::unlink(too_long_name(c).as_str()), Errno::NAMETOOLONG),
    },
    Case {
        name: "unlink.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("unlink PATH_MAX", rustix::fs::unlink(too_long_path().as_str()), Errno::NAMETOOLONG),
    },
    Case {
        name: "unlink.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("unlink l1/f", rustix::fs::unlink("l1/f"), Errno::LOOP)
        },
    },
    Case {
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
    Case {
        name: "unlink.unlinkat_dir_without_removedir.EISDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // unlink(2): "pathname refers to a directory, and AT_REMOVEDIR was not specified".
            err("unlinkat d 0", rustix::fs::unlinkat(CWD, "d", AtFlags::empty()), Errno::ISDIR)
        },
    },
    Case {
        name: "unlink.unlinkat_removedir.removed",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            mkdir("d/e", 0o755)?;
            let before = stat("d")?;
            c.tick();
            ok("unlinkat d/e AT_REMOVEDIR", rustix::fs::unlinkat(CWD, "d/e", AtFlags::REMOVEDIR))?;
            err("stat d/e after unlinkat", rustix::fs::stat("d/e"), Errno::NOENT)?;
            let after = stat("d")?;
            // A directory's link count counts its subdirectories only where the filesystem
            // keeps the traditional count (btrfs does not: always 1).
            if super::rename::counts_subdirs(&before) {
                eq("link count of the parent", after.nlink, before.nlink - 1)?;
            }
            moved("parent d", before.times, after.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "unlink.unlinkat_removedir_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("unlinkat f AT_REMOVEDIR", rustix::fs::unlinkat(CWD, "f", AtFlags::REMOVEDIR), Errno::NOTDIR)
        },
    },
    Case {
        name: "unlink.unlinkat_removedir_nonempty.ENOTEMPTY",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            // As rmdir: POSIX allows EEXIST or ENOTEMPTY; Linux returns ENOTEMPTY. Both accepted.
            err_any(
                "unlinkat d AT_REMOVEDIR",
                rustix::fs::unlinkat(CWD, "d", AtFlags::REMOVEDIR),
                &[Errno::NOTEMPTY, Errno::EXIST],
            )
        },
    },
    Case {
        name: "unlink.unlinkat_removedir_dot.EINVAL",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            // POSIX unlinkat with AT_REMOVEDIR is rmdir: `.` as last component is EINVAL.
            err("unlinkat d/. AT_REMOVEDIR", rustix::fs::unlinkat(CWD, "d/.", AtFlags::REMOVEDIR), Errno::INVAL)
        },
    },
    Case {
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
    Case {
        name: "unlink.unlinkat_file_as_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let f = open("f", OFlags::RDONLY)?;
            err("unlinkat f:x", rustix::fs::unlinkat(&f, "x", AtFlags::empty()), Errno::NOTDIR)
        },
    },
    Case {
        name: "unlink.unlinkat_bad_dirfd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("unlinkat -1:f", unlinkat_bad_dirfd("f"), Errno::BADF)
        },
    },
    Case {
        name: "unlink.read_only_file_in_writable_dir.removed",
        security: true,
        run: |c| {
            mkdir("d", 0o777)?;
            // Root's file, read-only: removing a name needs only the directory's permissions.
            touch("d/f", 0o444)?;
            c.as_user(U1, || ok("unlink d/f as uid 65534 (d is 0777)", rustix::fs::unlink("d/f")))
        },
    },
    Case {
        name: "unlink.no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o666)?;
            chown("d/f", U1.uid, U1.gid)?;
            c.as_user(U1, || {
                err("unlink d/f as uid 65534 (d is root's 0755)", rustix::fs::unlink("d/f"), Errno::ACCESS)
            })
        },
    },
    Case {
        name: "unlink.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o777)?;
            touch("d/f", 0o666)?;
            chown("d/f", U1.uid, U1.gid)?;
            chmod("d", 0o666)?;
            c.as_user(U1, || err("unlink d/f as uid 65534 (d is 0666)", rustix::fs::unlink("d/f"), Errno::ACCESS))
        },
    },
    Case {
        name: "unlink.group_write_permission.removed",
        security: true,
        run: |c| {
            mkdir("d", 0o770)?;
            chown("d", 0, U1.gid)?;
            touch("d/f", 0o644)?;
            c.as_user(U1, || ok("unlink d/f as uid 65534 in d's group (d is 0770)", rustix::fs::unlink("d/f")))
        },
    },
    Case {
        name: "unlink.owner_bits_deny_owner.EACCES",
        security: true,
        run: |c| {
            // The owner class is used for the owner even when other is more generous.
            mkdir("d", 0o577)?;
            chown("d", U1.uid, U1.gid)?;
            touch("d/f", 0o644)?;
            c.as_user(U1, || err("unlink d/f as d's owner (d is 0577)", rustix::fs::unlink("d/f"), Errno::ACCESS))
        },
    },
    Case {
        name: "unlink.other_without_write.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o775)?;
            chown("d", 0, U1.gid)?;
            touch("d/f", 0o666)?;
            c.as_user(U2, || {
                err("unlink d/f as uid 65533, not in d's group (d is 0775)", rustix::fs::unlink("d/f"), Errno::ACCESS)
            })
        },
    },
    Case {
        name: "unlink.sticky_dir_others_file.EPERM",
        security: true,
        run: |c| {
            mkdir("d", 0o1777)?;
            touch("d/f", 0o666)?;
            chown("d/f", U2.uid, U2.gid)?;
            // POSIX: EPERM or EACCES; Linux: EPERM (unlink(2) lists both): both accepted.
            c.as_user(U1, || {
                err_any(
                    "unlink d/f as uid 65534 (d sticky, f of uid 65533)",
                    rustix::fs::unlink("d/f"),
                    &[Errno::PERM, Errno::ACCESS],
                )
            })?;
            stat("d/f").map(drop)
        },
    },
    Case {
        name: "unlink.sticky_dir_own_file.removed",
        security: true,
        run: |c| {
            mkdir("d", 0o1777)?;
            touch("d/f", 0o644)?;
            chown("d/f", U1.uid, U1.gid)?;
            c.as_user(U1, || ok("unlink d/f as its owner in a sticky directory", rustix::fs::unlink("d/f")))
        },
    },
    Case {
        name: "unlink.sticky_dir_owner.removed",
        security: true,
        run: |c| {
            mkdir("d", 0o1777)?;
            chown("d", U1.uid, U1.gid)?;
            touch("d/f", 0o644)?;
            chown("d/f", U2.uid, U2.gid)?;
            c.as_user(U1, || ok("unlink d/f as the sticky directory's owner", rustix::fs::unlink("d/f")))
        },
    },
    Case {
        name: "unlink.sticky_dir_by_root.removed",
        security: true,
        run: |_| {
            mkdir("d", 0o1777)?;
            touch("d/f", 0o644)?;
            chown("d/f", U2.uid, U2.gid)?;
            // Root (CAP_FOWNER) is exempt from the sticky restriction.
            ok("unlink d/f as root", rustix::fs::unlink("d/f"))
        },
    },
    Case {
        name: "unlink.immutable_file.EPERM",
        security: false,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::IMMUTABLE)?;
            // unlink(2): "The file to be unlinked is marked immutable or append-only".
            err("unlink f (immutable)", rustix::fs::unlink("f"), Errno::PERM)
        },
    },
    Case {
        name: "unlink.append_only_file.EPERM",
        security: false,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::APPEND)?;
            err("unlink f (append-only)", rustix::fs::unlink("f"), Errno::PERM)
        },
    },
    Case {
        name: "unlink.in_immutable_dir.EPERM",
        security: false,
        run: |c| {
            c.need_flags()?;
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            set_flag("d", IFlags::IMMUTABLE)?;
            err("unlink d/f (d immutable)", rustix::fs::unlink("d/f"), Errno::PERM)
        },
    },
    Case {
        name: "unlink.in_append_only_dir.EPERM",
        security: false,
        run: |c| {
            c.need_flags()?;
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            set_flag("d", IFlags::APPEND)?;
            // An append-only directory takes new entries but loses none.
            err("unlink d/f (d append-only)", rustix::fs::unlink("d/f"), Errno::PERM)
        },
    },
    Case {
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
    Case {
        name: "unlink.through_symlinked_dir.removed",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            symlink("d", "l")?;
            // A symlink in the path prefix is followed; only a last component is not.
            ok("unlink l/f", rustix::fs::unlink("l/f"))?;
            err("stat d/f after unlink", rustix::fs::stat("d/f"), Errno::NOENT)
        },
    },
    Case {
        name: "unlink.unlinkat_removedir_symlink.ENOTDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            symlink("d", "l")?;
            // AT_REMOVEDIR does not follow a last symlink, as rmdir.
            err("unlinkat l AT_REMOVEDIR (l -> d)", rustix::fs::unlinkat(CWD, "l", AtFlags::REMOVEDIR), Errno::NOTDIR)?;
            stat("d").map(drop)
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
