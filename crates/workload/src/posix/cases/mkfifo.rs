//! mkfifo(3) and mkfifoat(3): POSIX.1-2017 mkfifo() and the Linux man page (on Linux both
//! are mknodat(2) with S_IFIFO). A new FIFO gets the permission bits of `mode & ~umask`, the
//! effective uid as owner and the effective gid (or the parent's group under a set-group-ID
//! directory) as group; its atime, mtime and ctime and the parent's mtime and ctime are
//! marked for update. An existing name is EEXIST, even a dangling symlink (mkfifo never
//! follows a last symlink); and the path errors every path-taking call shares.
//!
//! Also the helpers the families mkfifo, mknod, open and symlink share.

use super::sys::{cstr, set_flag, sys, BAD_FD};
use super::{chown, mkdir, symlink, too_long_name, too_long_path, touch, Case};
use crate::posix::check::{eq, err, err_any, moved, ok, stat, times, Check, Mark, Octal, Times};
use crate::posix::ctx::U1;
use rustix::fs::{IFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

/// The file type bits of a FIFO (`S_IFIFO`).
pub(super) const S_IFIFO: u32 = 0o010_000;
/// The file type bits of a regular file (`S_IFREG`).
pub(super) const S_IFREG: u32 = 0o100_000;
/// The file type bits of a symbolic link (`S_IFLNK`).
pub(super) const S_IFLNK: u32 = 0o120_000;

/// The three times of a new object `what` must be the time of its creation: not earlier than
/// anything its parent recorded before (`since`, taken before the call), nor than the clock
/// when the call began (`now`, [`clock_before`], whole seconds: a filesystem may keep no
/// more). POSIX marks all three for update on creation.
///
/// Not "later than `since`": with multigrain timestamps (Linux 6.13: ext4, xfs, btrfs,
/// tmpfs) a new inode takes the coarse clock or the latest fine-grained time handed out,
/// whichever is later, and that can be exactly the parent's last ctime, a fine-grained time
/// ahead of the coarse clock even after [`crate::posix::ctx::Ctx::tick`].
pub(super) fn born(what: &str, since: Times, now: i128, t: Times) -> Check {
    let s = since.atime.max(since.mtime).max(since.ctime).max(now - now % 1_000_000_000);
    let fresh = t.atime >= s && t.mtime >= s && t.ctime >= s;
    crate::posix::check::ensure(
        &format!("{what} atime, mtime, ctime"),
        fresh,
        &format!("all at least {s} ns (the creation time)"),
        || format!("atime {} mtime {} ctime {} (parent before: {since:?})", t.atime, t.mtime, t.ctime),
    )
}

/// CLOCK_REALTIME_COARSE now, in nanoseconds: the clock the kernel stamps inodes with.
pub(super) fn clock_before() -> i128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

/// `mkfifo p mode`, as the case calls it (relative to the case's directory).
fn mkfifo(p: &str, mode: u32) -> rustix::io::Result<()> {
    rustix::fs::mkfifoat(CWD, p, Mode::from_raw_mode(mode))
}

/// A directory `d` owned by root, group 65533, mode `02777`: what is created in it takes the
/// directory's group (POSIX leaves the group open, one of the two choices; Linux, as BSD,
/// takes the parent's under S_ISGID, mkdir(2) and open(2) "bsdgroups").
pub(super) fn setgid_dir() -> Check {
    mkdir("d", 0o777)?;
    // chown before chmod: chown may clear the set-id bits.
    chown("d", 0, 65533)?;
    super::chmod("d", 0o2777)
}

/// mkfifoat(BAD_FD, p, mode): EBADF expected.
fn mkfifoat_bad_fd(p: &str) -> rustix::io::Result<()> {
    let p = cstr(p);
    // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
    sys(unsafe { libc::mkfifoat(BAD_FD, p.as_ptr(), 0o644) }.into())
}

/// The mkfifo family.
pub static CASES: &[Case] = &[
    Case {
        name: "mkfifo.new.created",
        security: false,
        run: |_| {
            ok("mkfifo p 0640", mkfifo("p", 0o640))?;
            let s = stat("p")?;
            eq("file type of p", Octal(s.kind()), Octal(S_IFIFO))?;
            eq("mode of p", s.perm(), Octal(0o640))?;
            eq("link count of p", s.nlink, 1)?;
            eq("size of p", s.size, 0)
        },
    },
    Case {
        name: "mkfifo.mode_and_umask.masked",
        security: false,
        run: |_| {
            // The runner's umask is 022: 0777 & ~022.
            ok("mkfifo p 0777", mkfifo("p", 0o777))?;
            eq("mode of p (umask 022)", stat("p")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "mkfifo.other_umask.masked",
        security: false,
        run: |_| {
            let old = rustix::process::umask(Mode::from_raw_mode(0o077));
            let r = mkfifo("p", 0o666);
            rustix::process::umask(old);
            ok("mkfifo p 0666 under umask 077", r)?;
            eq("mode of p (umask 077)", stat("p")?.perm(), Octal(0o600))
        },
    },
    Case {
        name: "mkfifo.owner_root.created",
        security: false,
        run: |_| {
            ok("mkfifo p", mkfifo("p", 0o644))?;
            let s = stat("p")?;
            eq("owner of p", (s.uid, s.gid), (0, 0))
        },
    },
    Case {
        name: "mkfifo.owner_user.created",
        security: false,
        run: |c| {
            mkdir("d", 0o777)?;
            c.as_user(U1, || ok("mkfifo d/p as uid 65534", mkfifo("d/p", 0o644)))?;
            let s = stat("d/p")?;
            eq("owner of d/p", (s.uid, s.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "mkfifo.setgid_parent_group.inherited",
        security: false,
        run: |_| {
            setgid_dir()?;
            ok("mkfifo d/p", mkfifo("d/p", 0o644))?;
            eq("group of d/p (d is set-group-ID, group 65533)", stat("d/p")?.gid, 65533)
        },
    },
    Case {
        name: "mkfifo.parent_times.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            let before = times("d")?;
            c.tick();
            ok("mkfifo d/p", mkfifo("d/p", 0o644))?;
            moved("parent d", before, times("d")?, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "mkfifo.new_fifo_times.updated",
        security: false,
        run: |c| {
            let before = times(".")?;
            c.tick();
            let now = clock_before();
            ok("mkfifo p", mkfifo("p", 0o644))?;
            born("new fifo p", before, now, times("p")?)
        },
    },
    Case {
        name: "mkfifo.mkfifoat_dirfd.created",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let dir = super::sys::open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            ok("mkfifoat (d) p", rustix::fs::mkfifoat(&dir, "p", Mode::from_raw_mode(0o644)))?;
            eq("file type of d/p", Octal(stat("d/p")?.kind()), Octal(S_IFIFO))
        },
    },
    Case {
        name: "mkfifo.mkfifoat_absolute_path.created",
        security: false,
        run: |c| {
            // An absolute path ignores the descriptor (openat(2), "If pathname is absolute").
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let p = c.path("p");
            ok("mkfifoat (a file fd) /abs/p", rustix::fs::mkfifoat(&file, &p, Mode::from_raw_mode(0o644)))?;
            eq("file type of p", Octal(stat("p")?.kind()), Octal(S_IFIFO))
        },
    },
    Case {
        name: "mkfifo.mkfifoat_file_fd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            err(
                "mkfifoat (fd of regular file f) p",
                rustix::fs::mkfifoat(&file, "p", Mode::from_raw_mode(0o644)),
                Errno::NOTDIR,
            )
        },
    },
    Case {
        name: "mkfifo.mkfifoat_bad_fd.EBADF",
        security: false,
        run: |_| err("mkfifoat (-1) p", mkfifoat_bad_fd("p"), Errno::BADF),
    },
    Case {
        name: "mkfifo.existing_file.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mkfifo f (a regular file)", mkfifo("f", 0o644), Errno::EXIST)
        },
    },
    Case {
        name: "mkfifo.existing_fifo.EEXIST",
        security: false,
        run: |_| {
            ok("mkfifo p", mkfifo("p", 0o644))?;
            err("mkfifo p again", mkfifo("p", 0o644), Errno::EXIST)
        },
    },
    Case {
        name: "mkfifo.existing_dir.EEXIST",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("mkfifo d (a directory)", mkfifo("d", 0o644), Errno::EXIST)
        },
    },
    Case {
        name: "mkfifo.dangling_symlink.EEXIST",
        security: true,
        run: |_| {
            // The name exists (it is the link): EEXIST. A call that creates a directory entry
            // does not follow a last symlink to create what it names (POSIX 4.13; Linux
            // fs/namei.c filename_create looks the last component up without following).
            symlink("nothing", "l")?;
            err("mkfifo l (a dangling symlink)", mkfifo("l", 0o644), Errno::EXIST)?;
            err("lstat nothing (the link's target)", rustix::fs::lstat("nothing"), Errno::NOENT)
        },
    },
    Case {
        name: "mkfifo.missing_parent.ENOENT",
        security: false,
        run: |_| err("mkfifo nothing/p", mkfifo("nothing/p", 0o644), Errno::NOENT),
    },
    Case {
        name: "mkfifo.empty_path.ENOENT",
        security: false,
        run: |_| err("mkfifo \"\"", mkfifo("", 0o644), Errno::NOENT),
    },
    Case {
        name: "mkfifo.trailing_slash.ENOENT",
        security: false,
        run: |_| {
            // POSIX 4.13: a trailing slash resolves only for a directory; the errno is left
            // open. Linux answers ENOENT ("you had / on the end", fs/namei.c filename_create),
            // other systems ENOTDIR.
            err_any("mkfifo p/", mkfifo("p/", 0o644), &[Errno::NOENT, Errno::NOTDIR])?;
            err("lstat p", rustix::fs::lstat("p"), Errno::NOENT)
        },
    },
    Case {
        name: "mkfifo.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("mkfifo f/p", mkfifo("f/p", 0o644), Errno::NOTDIR)
        },
    },
    Case {
        name: "mkfifo.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("mkfifo PATH_MAX", mkfifo(&too_long_path(), 0o644), Errno::NAMETOOLONG),
    },
    Case {
        name: "mkfifo.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("mkfifo l1/p", mkfifo("l1/p", 0o644), Errno::LOOP)
        },
    },
    Case {
        name: "mkfifo.no_search_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o777)?;
            mkdir("d/e", 0o777)?;
            super::chmod("d", 0o666)?;
            c.as_user(U1, || err("mkfifo d/e/p as uid 65534 (d is 0666)", mkfifo("d/e/p", 0o644), Errno::ACCESS))
        },
    },
    Case {
        name: "mkfifo.no_write_permission.EACCES",
        security: true,
        run: |c| {
            mkdir("d", 0o755)?;
            c.as_user(U1, || err("mkfifo d/p as uid 65534 (d is root's 0755)", mkfifo("d/p", 0o644), Errno::ACCESS))
        },
    },
    Case {
        name: "mkfifo.group_write_permission.created",
        security: true,
        run: |c| {
            // The group class: 0770 of group 65534 lets uid 65534 (gid 65534) create.
            mkdir("d", 0o770)?;
            chown("d", 0, U1.gid)?;
            c.as_user(U1, || ok("mkfifo d/p as uid 65534 (d is 0770, group 65534)", mkfifo("d/p", 0o644)))
        },
    },
    Case {
        name: "mkfifo.immutable_parent.EPERM",
        security: true,
        run: |c| {
            // An immutable directory takes no new entries, root's included (chattr(1) +i).
            c.need_flags()?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::IMMUTABLE)?;
            err("mkfifo d/p (d immutable)", mkfifo("d/p", 0o644), Errno::PERM)
        },
    },
    Case {
        name: "mkfifo.append_only_parent.created",
        security: false,
        run: |c| {
            // An append-only directory takes new entries; only removing them is refused.
            c.need_flags()?;
            mkdir("d", 0o755)?;
            set_flag("d", IFlags::APPEND)?;
            ok("mkfifo d/p (d append-only)", mkfifo("d/p", 0o644))
        },
    },
    Case {
        name: "mkfifo.dot.EEXIST",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("mkfifo d/.", mkfifo("d/.", 0o644), Errno::EXIST)
        },
    },
    // Last: fuse2fs (1.47) answers a create of a name longer than NAME_MAX with ENOENT and
    // leaves the directory unreadable (EIO), so that later cases in it would not run.
    Case {
        name: "mkfifo.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("mkfifo NAME_MAX+1", mkfifo(&too_long_name(c), 0o644), Errno::NAMETOOLONG),
    },
];
