//! chmod(2), fchmod(2), fchmodat(2) and fchmodat2 (Linux 6.6): POSIX.1-2017 chmod() and
//! fchmod(), and the Linux man page. The owner (or root) sets the permission, set-id and
//! sticky bits; the file's ctime is marked for update, its mtime and the parent's times are
//! not. A non-owner gets EPERM; an owner outside the file's group loses S_ISGID silently;
//! `chmod` follows a last symlink, and a symlink's own mode cannot be changed (EOPNOTSUPP).

use super::sys::{cstr, open, set_flag, sys, BAD_FD};
use super::{chown, mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, moved, ok, stat, Mark, Miss, Octal};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{AtFlags, IFlags, Mode, OFlags};
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

/// `chmod p mode`, as the case calls it.
fn chmod(p: &str, mode: u32) -> rustix::io::Result<()> {
    rustix::fs::chmod(p, Mode::from_raw_mode(mode))
}

/// The chmod family.
pub static CASES: &[Case] = &[
    Case {
        name: "chmod.regular_file.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let before = stat("f")?;
            c.tick();
            ok("chmod f 0600", chmod("f", 0o600))?;
            let after = stat("f")?;
            eq("mode of f", after.perm(), Octal(0o600))?;
            eq("file type of f", after.kind(), before.kind())?;
            // POSIX chmod(): "shall mark for update the last file status change timestamp".
            moved("f", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chmod.directory.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            let before = stat("d")?;
            c.tick();
            ok("chmod d 0700", chmod("d", 0o700))?;
            let after = stat("d")?;
            eq("mode of d", after.perm(), Octal(0o700))?;
            moved("d", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chmod.parent_times.unchanged",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let before = stat("d")?;
            c.tick();
            ok("chmod d/f 0600", chmod("d/f", 0o600))?;
            // Only the file's inode changes: the directory's entries do not.
            moved("parent d", before.times, stat("d")?.times, Mark::Any, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "chmod.all_bits.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // Root may set every bit, set-id and sticky included; none is cut by the umask.
            ok("chmod f 07777", chmod("f", 0o7777))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o7777))
        },
    },
    Case {
        name: "chmod.dir_setgid_sticky.updated",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            ok("chmod d 03775", chmod("d", 0o3775))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o3775))
        },
    },
    Case {
        name: "chmod.follows_symlink.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let link = stat("l")?;
            ok("chmod l 0600 (l -> f)", chmod("l", 0o600))?;
            eq("mode of the target f", stat("f")?.perm(), Octal(0o600))?;
            eq("mode of the symlink l", stat("l")?.mode, link.mode)
        },
    },
    Case {
        name: "chmod.fchmod.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let before = stat("f")?;
            // fchmod needs no write access to the open file: a read-only descriptor will do.
            let fd = open("f", OFlags::RDONLY)?;
            c.tick();
            ok("fchmod (f, O_RDONLY) 0640", rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o640)))?;
            let after = stat("f")?;
            eq("mode of f", after.perm(), Octal(0o640))?;
            moved("f", before.times, after.times, Mark::Any, Mark::Same, Mark::Changed)
        },
    },
    Case {
        name: "chmod.fchmod_unlinked_file.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            ok("unlink f", rustix::fs::unlink("f"))?;
            ok("fchmod (f, unlinked) 0600", rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600)))?;
            let st = ok("fstat (f, unlinked)", rustix::fs::fstat(&fd))?;
            eq("mode of the unlinked f", Octal(st.st_mode & 0o7777), Octal(0o600))
        },
    },
    Case {
        name: "chmod.fchmod_bad_fd.EBADF",
        security: false,
        run: |_| {
            // SAFETY: fchmod takes a plain number; -1 is no descriptor.
            err("fchmod -1", sys(unsafe { libc::fchmod(BAD_FD, 0o644) }.into()), Errno::BADF)
        },
    },
    Case {
        name: "chmod.fchmod_opath_fd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // open(2): on an O_PATH descriptor "fchmod(2) ... fail with the error EBADF".
            let fd = open("f", OFlags::PATH)?;
            err("fchmod (f, O_PATH) 0600", rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600)), Errno::BADF)
        },
    },
    Case {
        name: "chmod.fchmodat_dirfd.updated",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let dfd = open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("fchmodat (d) f 0600", rustix::fs::chmodat(&dfd, "f", Mode::from_raw_mode(0o600), AtFlags::empty()))?;
            eq("mode of d/f", stat("d/f")?.perm(), Octal(0o600))
        },
    },
    Case {
        name: "chmod.fchmodat_absolute_path.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            // An absolute path ignores dirfd, even one that is no directory.
            let fd = open("f", OFlags::RDONLY)?;
            let abs = c.path("f");
            ok(
                "fchmodat (a file) /abs/f 0600",
                rustix::fs::chmodat(&fd, &abs, Mode::from_raw_mode(0o600), AtFlags::empty()),
            )?;
            eq("mode of f", stat("f")?.perm(), Octal(0o600))
        },
    },
    Case {
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
    Case {
        name: "chmod.fchmodat_file_dirfd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            err(
                "fchmodat (a file) x",
                rustix::fs::chmodat(&fd, "x", Mode::from_raw_mode(0o600), AtFlags::empty()),
                Errno::NOTDIR,
            )
        },
    },
    Case {
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
    Case {
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
    Case {
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
    Case {
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
    Case {
        name: "chmod.owner.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || ok("chmod f 0600 as its owner uid 65534", chmod("f", 0o600)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o600))
        },
    },
    Case {
        name: "chmod.not_owner.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o666)?;
            chown("f", U2.uid, U2.gid)?;
            // Write permission is not enough: only the owner or a privileged process may.
            c.as_user(U1, || err("chmod f 0777 as uid 65534 (f of uid 65533, 0666)", chmod("f", 0o777), Errno::PERM))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o666))
        },
    },
    Case {
        name: "chmod.fchmod_not_owner.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o666)?;
            let fd = open("f", OFlags::RDWR)?;
            c.as_user(U1, || {
                err(
                    "fchmod (root's f) 0777 as uid 65534",
                    rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o777)),
                    Errno::PERM,
                )
            })
        },
    },
    Case {
        name: "chmod.setgid_not_in_group.cleared",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            chown("f", U1.uid, U2.gid)?;
            // chmod(2): without CAP_FSETID, when the file's group is not the caller's effective or
            // a supplementary group, "the S_ISGID bit will be turned off, but this will not cause
            // an error to be returned".
            c.as_user(U1, || ok("chmod f 02755 as uid 65534 (f of group 65533)", chmod("f", 0o2755)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "chmod.setgid_in_group.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            chown("f", U1.uid, U2.gid)?;
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || ok("chmod f 02755 as uid 65534 in group 65533", chmod("f", 0o2755)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o2755))
        },
    },
    Case {
        name: "chmod.setuid_by_owner.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            chown("f", U1.uid, U1.gid)?;
            c.as_user(U1, || ok("chmod f 04755 as its owner", chmod("f", 0o4755)))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o4755))
        },
    },
    Case {
        name: "chmod.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            chown("d/f", U1.uid, U1.gid)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || err("chmod d/f as its owner (d is 0666)", chmod("d/f", 0o600), Errno::ACCESS))
        },
    },
    Case {
        name: "chmod.missing.ENOENT",
        security: false,
        run: |_| err("chmod nothing", chmod("nothing", 0o644), Errno::NOENT),
    },
    Case {
        name: "chmod.dangling_symlink.ENOENT",
        security: false,
        run: |_| {
            symlink("nothing", "l")?;
            err("chmod l (l -> nothing)", chmod("l", 0o644), Errno::NOENT)
        },
    },
    Case {
        name: "chmod.empty_path.ENOENT",
        security: false,
        run: |_| err("chmod \"\"", chmod("", 0o644), Errno::NOENT),
    },
    Case {
        name: "chmod.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("chmod f/x", chmod("f/x", 0o644), Errno::NOTDIR)
        },
    },
    Case {
        name: "chmod.trailing_slash_on_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("chmod f/", chmod("f/", 0o600), Errno::NOTDIR)
        },
    },
    Case {
        name: "chmod.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("chmod NAME_MAX+1", chmod(too_long_name(c).as_str(), 0o644), Errno::NAMETOOLONG),
    },
    Case {
        name: "chmod.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("chmod PATH_MAX", chmod(too_long_path().as_str(), 0o644), Errno::NAMETOOLONG),
    },
    Case {
        name: "chmod.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("chmod l1 (l1 -> l2 -> l1)", chmod("l1", 0o644), Errno::LOOP)
        },
    },
    Case {
        name: "chmod.immutable.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::IMMUTABLE)?;
            // chmod(2): "EPERM The file is marked immutable or append-only".
            err("chmod f 0600 (immutable)", chmod("f", 0o600), Errno::PERM)?;
            eq("mode of f", stat("f")?.perm(), Octal(0o644))
        },
    },
    Case {
        name: "chmod.append_only.EPERM",
        security: true,
        run: |c| {
            c.need_flags()?;
            touch("f", 0o644)?;
            set_flag("f", IFlags::APPEND)?;
            err("chmod f 0600 (append-only)", chmod("f", 0o600), Errno::PERM)
        },
    },
    Case {
        name: "chmod.fchmod_directory.updated",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let fd = open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("fchmod (d) 0700", rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700)))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o700))
        },
    },
    Case {
        name: "chmod.fchmodat_empty_path_no_flag.ENOENT",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            // Without AT_EMPTY_PATH an empty path names nothing, whatever dirfd is.
            let r = rustix::fs::chmodat(&fd, "", Mode::from_raw_mode(0o600), AtFlags::empty());
            err("fchmodat (f) \"\" 0600", r, Errno::NOENT)
        },
    },
    Case {
        name: "chmod.dir_setgid_not_in_group.cleared",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            chown("d", U1.uid, U2.gid)?;
            // The rule of chmod(2) on S_ISGID holds for directories as well: the owner outside
            // the directory's group cannot make its new entries inherit that group.
            c.as_user(U1, || ok("chmod d 02755 as its owner, not in group 65533", chmod("d", 0o2755)))?;
            eq("mode of d", stat("d")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "chmod.group_member_not_owner.EPERM",
        security: true,
        run: |c| {
            touch("f", 0o664)?;
            chown("f", U2.uid, U2.gid)?;
            // Membership in the file's group, with write permission through it, is not ownership.
            let u = U1.with_groups(&[65533]);
            c.as_user(u, || err("chmod f 0666 as uid 65534 in group 65533 (f is 0664)", chmod("f", 0o666), Errno::PERM))
        },
    },
    Case {
        name: "chmod.setgid_by_root_other_group.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            chown("f", U1.uid, U2.gid)?;
            // Root has CAP_FSETID: S_ISGID stays whatever the file's group.
            ok("chmod f 02755 as root (f 65534:65533)", chmod("f", 0o2755))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o2755))
        },
    },
    Case {
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
