//! open(2) and openat(2), what they create and what they refuse: POSIX.1-2017 open() and the
//! Linux man page. O_CREAT makes a regular file of `mode & ~umask` owned by the effective ids,
//! all three of its times and the parent's mtime and ctime marked for update; O_EXCL refuses
//! any existing name, a symlink above all; O_TRUNC empties an existing regular file and marks
//! its mtime and ctime; O_APPEND writes at the end whatever the offset; O_DIRECTORY,
//! O_NOFOLLOW, the *at forms and the path errors. Permissions, attributes and set-id
//! clearing are in open_access.rs; O_TMPFILE, FIFOs and sockets in open_special.rs.

use super::mkfifo::{born, clock_before, setgid_dir, S_IFLNK, S_IFREG};
use super::sys::read_file;
use super::sys::{cstr, sys, BAD_FD};
use super::{mkdir, symlink, too_long_name, too_long_path, touch, write_file, Case};
use crate::posix::check::{eq, err, moved, ok, stat, times, Check, Mark, Octal};
use crate::posix::ctx::U1;
use rustix::fs::{Mode, OFlags, SeekFrom, CWD};
use rustix::io::Errno;
use std::os::fd::OwnedFd;

/// `open(p, flags | O_CLOEXEC, mode)`, as the case calls it.
pub(super) fn open(p: &str, flags: OFlags, mode: u32) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(CWD, p, flags | OFlags::CLOEXEC, Mode::from_raw_mode(mode))
}

/// `write(fd, data)` must write all of `data`.
pub(super) fn write_all(what: &str, fd: &OwnedFd, data: &[u8]) -> Check {
    let n = ok(what, rustix::io::write(fd, data))?;
    eq(&format!("{what}: bytes written"), n, data.len())
}

/// The open family: creation, truncation, appending, the flags that shape the lookup.
pub static CASES: &[Case] = &[
    Case {
        name: "open.create.created",
        security: false,
        run: |_| {
            ok("open f O_CREAT|O_WRONLY 0640", open("f", OFlags::CREATE | OFlags::WRONLY, 0o640))?;
            let s = stat("f")?;
            eq("file type of f", Octal(s.kind()), Octal(S_IFREG))?;
            eq("mode of f", s.perm(), Octal(0o640))?;
            eq("owner of f", (s.uid, s.gid), (0, 0))?;
            eq("link count of f", s.nlink, 1)?;
            eq("size of f", s.size, 0)
        },
    },
    Case {
        name: "open.create_mode_and_umask.masked",
        security: false,
        run: |_| {
            ok("open f O_CREAT 0777", open("f", OFlags::CREATE | OFlags::WRONLY, 0o777))?;
            eq("mode of f (umask 022)", stat("f")?.perm(), Octal(0o755))
        },
    },
    Case {
        name: "open.create_other_umask.masked",
        security: false,
        run: |_| {
            let old = rustix::process::umask(Mode::from_raw_mode(0o077));
            let r = open("f", OFlags::CREATE | OFlags::WRONLY, 0o666);
            rustix::process::umask(old);
            ok("open f O_CREAT 0666 under umask 077", r)?;
            eq("mode of f (umask 077)", stat("f")?.perm(), Octal(0o600))
        },
    },
    Case {
        name: "open.create_as_user.owned",
        security: false,
        run: |c| {
            mkdir("d", 0o777)?;
            c.as_user(U1, || ok("open d/f O_CREAT as uid 65534", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o644)))?;
            let s = stat("d/f")?;
            eq("owner of d/f", (s.uid, s.gid), (U1.uid, U1.gid))
        },
    },
    Case {
        name: "open.create_setgid_parent_group.inherited",
        security: false,
        run: |_| {
            setgid_dir()?;
            ok("open d/f O_CREAT", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o644))?;
            eq("group of d/f (d is set-group-ID, group 65533)", stat("d/f")?.gid, 65533)
        },
    },
    Case {
        name: "open.create_read_only_mode.writable",
        security: false,
        run: |c| {
            // POSIX: the new file's mode applies to later opens; the creating open gets the
            // access it asked for even when the mode denies it.
            mkdir("d", 0o777)?;
            c.as_user(U1, || {
                let fd =
                    ok("open d/f O_CREAT|O_RDWR 0444 as uid 65534", open("d/f", OFlags::CREATE | OFlags::RDWR, 0o444))?;
                write_all("write d/f", &fd, b"x")
            })
        },
    },
    Case {
        name: "open.create_parent_times.updated",
        security: false,
        run: |c| {
            mkdir("d", 0o755)?;
            let before = times("d")?;
            c.tick();
            ok("open d/f O_CREAT", open("d/f", OFlags::CREATE | OFlags::WRONLY, 0o644))?;
            moved("parent d", before, times("d")?, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "open.create_new_file_times.updated",
        security: false,
        run: |c| {
            let before = times(".")?;
            c.tick();
            let now = clock_before();
            ok("open f O_CREAT", open("f", OFlags::CREATE | OFlags::WRONLY, 0o644))?;
            born("new file f", before, now, times("f")?)
        },
    },
    Case {
        name: "open.create_existing.kept",
        security: false,
        run: |c| {
            // POSIX: O_CREAT on an existing file "has no effect" (without O_EXCL): its mode and
            // data stay, nothing is created in the parent.
            write_file("f", b"data")?;
            super::chmod("f", 0o600)?;
            let before = times(".")?;
            c.tick();
            ok("open f O_CREAT|O_WRONLY 0777 (f exists)", open("f", OFlags::CREATE | OFlags::WRONLY, 0o777))?;
            eq("mode of f", stat("f")?.perm(), Octal(0o600))?;
            eq("contents of f", read_file("f")?, b"data".to_vec())?;
            moved("parent .", before, times(".")?, Mark::Any, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "open.create_through_dangling_symlink.created",
        security: false,
        run: |_| {
            // O_CREAT without O_EXCL follows a last symlink: Linux creates the file it names
            // (open(2); POSIX leaves it to the implementation unless O_EXCL is set).
            symlink("target", "l")?;
            ok("open l O_CREAT|O_WRONLY (l -> missing target)", open("l", OFlags::CREATE | OFlags::WRONLY, 0o644))?;
            eq("file type of target", Octal(stat("target")?.kind()), Octal(S_IFREG))
        },
    },
    Case {
        name: "open.existing_no_times.kept",
        security: false,
        run: |c| {
            // Opening marks nothing: only reads, writes and truncation do.
            write_file("f", b"data")?;
            let before = times("f")?;
            c.tick();
            ok("open f O_RDWR", open("f", OFlags::RDWR, 0))?;
            moved("f", before, times("f")?, Mark::Same, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "open.excl_existing_file.EEXIST",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("open f O_CREAT|O_EXCL", open("f", OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY, 0o644), Errno::EXIST)
        },
    },
    Case {
        name: "open.excl_existing_dir.EEXIST",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("open d O_CREAT|O_EXCL", open("d", OFlags::CREATE | OFlags::EXCL | OFlags::RDONLY, 0o644), Errno::EXIST)
        },
    },
    Case {
        name: "open.excl_symlink.EEXIST",
        security: true,
        run: |_| {
            // POSIX: "If O_EXCL and O_CREAT are set, and path names a symbolic link, open() shall
            // fail ... [EEXIST], regardless of the contents of the symbolic link."
            touch("f", 0o644)?;
            symlink("f", "l")?;
            err(
                "open l O_CREAT|O_EXCL (l -> f)",
                open("l", OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY, 0o644),
                Errno::EXIST,
            )
        },
    },
    Case {
        name: "open.excl_dangling_symlink.EEXIST",
        security: true,
        run: |_| {
            symlink("target", "l")?;
            let r = open("l", OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY, 0o644);
            err("open l O_CREAT|O_EXCL (l -> missing target)", r, Errno::EXIST)?;
            err("lstat target (must not be created)", rustix::fs::lstat("target"), Errno::NOENT)
        },
    },
    Case {
        name: "open.trunc.emptied",
        security: false,
        run: |c| {
            write_file("f", &[7u8; 5000])?;
            let before = times("f")?;
            c.tick();
            ok("open f O_WRONLY|O_TRUNC", open("f", OFlags::WRONLY | OFlags::TRUNC, 0))?;
            let s = stat("f")?;
            eq("size of f", s.size, 0)?;
            moved("f", before, s.times, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "open.trunc_empty_file.updated",
        security: false,
        run: |c| {
            // POSIX: "If O_TRUNC is set and the file did previously exist, upon successful
            // completion, open() shall mark for update the last data modification and last
            // file status change timestamps" - whether or not it had data (unlike truncate()).
            touch("f", 0o644)?;
            let before = times("f")?;
            c.tick();
            ok("open f O_WRONLY|O_TRUNC (f is empty)", open("f", OFlags::WRONLY | OFlags::TRUNC, 0))?;
            moved("f", before, times("f")?, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    Case {
        name: "open.trunc_parent_times.kept",
        security: false,
        run: |c| {
            write_file("f", b"data")?;
            let before = times(".")?;
            c.tick();
            ok("open f O_WRONLY|O_TRUNC", open("f", OFlags::WRONLY | OFlags::TRUNC, 0))?;
            moved("parent .", before, times(".")?, Mark::Any, Mark::Same, Mark::Same)
        },
    },
    Case {
        name: "open.append.at_end",
        security: false,
        run: |_| {
            // POSIX: with O_APPEND "the file offset shall be set to the end of the file prior to
            // each write": a seek to 0 does not make the write overwrite.
            write_file("f", b"abc")?;
            let fd = ok("open f O_WRONLY|O_APPEND", open("f", OFlags::WRONLY | OFlags::APPEND, 0))?;
            ok("lseek f 0", rustix::fs::seek(&fd, SeekFrom::Start(0)))?;
            write_all("write xy", &fd, b"xy")?;
            eq("offset after the write", ok("lseek f +0", rustix::fs::seek(&fd, SeekFrom::Current(0)))?, 5)?;
            eq("contents of f", read_file("f")?, b"abcxy".to_vec())
        },
    },
    Case {
        name: "open.append_two_descriptors.at_end",
        security: false,
        run: |_| {
            // Each write lands at the end as it is then, even after another descriptor wrote.
            touch("f", 0o644)?;
            let a = ok("open f O_WRONLY|O_APPEND (a)", open("f", OFlags::WRONLY | OFlags::APPEND, 0))?;
            let b = ok("open f O_WRONLY|O_APPEND (b)", open("f", OFlags::WRONLY | OFlags::APPEND, 0))?;
            write_all("write a 1", &a, b"1")?;
            write_all("write b 22", &b, b"22")?;
            write_all("write a 333", &a, b"333")?;
            eq("contents of f", read_file("f")?, b"122333".to_vec())
        },
    },
    Case {
        name: "open.directory_on_dir.opened",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            ok("open d O_DIRECTORY", open("d", OFlags::DIRECTORY | OFlags::RDONLY, 0)).map(drop)
        },
    },
    Case {
        name: "open.directory_on_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("open f O_DIRECTORY", open("f", OFlags::DIRECTORY | OFlags::RDONLY, 0), Errno::NOTDIR)
        },
    },
    Case {
        name: "open.directory_on_symlink_to_file.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            err("open l O_DIRECTORY (l -> f)", open("l", OFlags::DIRECTORY | OFlags::RDONLY, 0), Errno::NOTDIR)
        },
    },
    Case {
        name: "open.dir_write_only.EISDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("open d O_WRONLY", open("d", OFlags::WRONLY, 0), Errno::ISDIR)
        },
    },
    Case {
        name: "open.dir_read_write.EISDIR",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            err("open d O_RDWR", open("d", OFlags::RDWR, 0), Errno::ISDIR)
        },
    },
    Case {
        name: "open.create_existing_dir.EISDIR",
        security: false,
        run: |_| {
            // Linux refuses O_CREAT on a directory even read-only (fs/namei.c do_open);
            // POSIX.1-2024 made it the standard: EISDIR "includes O_CREAT without O_DIRECTORY".
            mkdir("d", 0o755)?;
            err("open d O_CREAT|O_RDONLY", open("d", OFlags::CREATE | OFlags::RDONLY, 0o644), Errno::ISDIR)
        },
    },
    Case {
        name: "open.create_trailing_slash.EISDIR",
        security: false,
        run: |_| {
            // A name ending in / asks for a directory, which open cannot create: Linux says
            // EISDIR (fs/namei.c open_last_lookups "trailing slashes?"), nothing is created.
            err("open n/ O_CREAT|O_WRONLY", open("n/", OFlags::CREATE | OFlags::WRONLY, 0o644), Errno::ISDIR)?;
            err("lstat n", rustix::fs::lstat("n"), Errno::NOENT)
        },
    },
    Case {
        name: "open.create_directory_flag.EINVAL",
        security: false,
        run: |_| {
            // O_CREAT|O_DIRECTORY: EINVAL since Linux 6.4 (commit 43b450632676, "open: return
            // EINVAL for O_DIRECTORY | O_CREAT"); before, it could create a regular file. This
            // kernel is newer, so EINVAL, and nothing created.
            err(
                "open n O_CREAT|O_DIRECTORY",
                open("n", OFlags::CREATE | OFlags::DIRECTORY | OFlags::RDONLY, 0o755),
                Errno::INVAL,
            )?;
            err("lstat n", rustix::fs::lstat("n"), Errno::NOENT)
        },
    },
    Case {
        name: "open.nofollow_symlink.ELOOP",
        security: true,
        run: |_| {
            touch("f", 0o644)?;
            symlink("f", "l")?;
            err("open l O_NOFOLLOW (l -> f)", open("l", OFlags::NOFOLLOW | OFlags::RDONLY, 0), Errno::LOOP)
        },
    },
    Case {
        name: "open.nofollow_create_dangling.ELOOP",
        security: true,
        run: |_| {
            // Creating through the link would follow it: refused, and the target not created.
            symlink("target", "l")?;
            let r = open("l", OFlags::CREATE | OFlags::NOFOLLOW | OFlags::WRONLY, 0o644);
            err("open l O_CREAT|O_NOFOLLOW (l -> missing target)", r, Errno::LOOP)?;
            err("lstat target", rustix::fs::lstat("target"), Errno::NOENT)
        },
    },
    Case {
        name: "open.nofollow_earlier_component.opened",
        security: false,
        run: |_| {
            // O_NOFOLLOW concerns the last component only (open(2)).
            mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            symlink("d", "l")?;
            ok("open l/f O_NOFOLLOW (l -> d)", open("l/f", OFlags::NOFOLLOW | OFlags::RDONLY, 0)).map(drop)
        },
    },
    Case {
        name: "open.path_nofollow.link_itself",
        security: true,
        run: |_| {
            // O_PATH|O_NOFOLLOW gives a descriptor of the link itself (open(2), O_PATH).
            touch("f", 0o644)?;
            symlink("f", "l")?;
            let fd = ok("open l O_PATH|O_NOFOLLOW", open("l", OFlags::PATH | OFlags::NOFOLLOW, 0))?;
            let st = ok("fstat (l, O_PATH)", rustix::fs::fstat(&fd))?;
            eq("file type of the descriptor", Octal(st.st_mode & 0o170_000), Octal(S_IFLNK))
        },
    },
    Case {
        name: "open.openat_dirfd.opened",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let dir = super::sys::open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            let r = rustix::fs::openat(
                &dir,
                "f",
                OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            );
            ok("openat (d) f O_CREAT", r)?;
            eq("file type of d/f", Octal(stat("d/f")?.kind()), Octal(S_IFREG))
        },
    },
    Case {
        name: "open.openat_absolute_path.opened",
        security: false,
        run: |c| {
            // openat(2): an absolute path ignores dirfd, even a descriptor of a regular file.
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let p = c.path("f");
            ok(
                "openat (a file fd) /abs/f",
                rustix::fs::openat(&file, &p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()),
            )
            .map(drop)
        },
    },
    Case {
        name: "open.openat_file_fd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let r = rustix::fs::openat(&file, "g", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty());
            err("openat (fd of regular file f) g", r, Errno::NOTDIR)
        },
    },
    Case {
        name: "open.openat_bad_fd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("f");
            // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
            let fd = unsafe { libc::openat(BAD_FD, p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd >= 0 {
                // SAFETY: `fd` was just returned by openat and is closed once, here.
                unsafe { libc::close(fd) };
            }
            err("openat (-1) f", sys(fd.into()), Errno::BADF)
        },
    },
    Case {
        name: "open.missing.ENOENT",
        security: false,
        run: |_| err("open nothing O_RDONLY", open("nothing", OFlags::RDONLY, 0), Errno::NOENT),
    },
    Case {
        name: "open.empty_path.ENOENT",
        security: false,
        run: |_| err("open \"\" O_RDONLY", open("", OFlags::RDONLY, 0), Errno::NOENT),
    },
    Case {
        name: "open.dangling_symlink.ENOENT",
        security: false,
        run: |_| {
            symlink("target", "l")?;
            err("open l O_RDONLY (l -> missing target)", open("l", OFlags::RDONLY, 0), Errno::NOENT)
        },
    },
    Case {
        name: "open.create_missing_parent.ENOENT",
        security: false,
        run: |_| err("open nothing/f O_CREAT", open("nothing/f", OFlags::CREATE | OFlags::WRONLY, 0o644), Errno::NOENT),
    },
    Case {
        name: "open.component_not_dir.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            err("open f/g O_RDONLY", open("f/g", OFlags::RDONLY, 0), Errno::NOTDIR)
        },
    },
    Case {
        name: "open.file_trailing_slash.ENOTDIR",
        security: false,
        run: |_| {
            // POSIX 4.13: a trailing slash on a non-directory does not resolve.
            touch("f", 0o644)?;
            err("open f/ O_RDONLY", open("f/", OFlags::RDONLY, 0), Errno::NOTDIR)
        },
    },
    Case {
        name: "open.symlink_loop.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("open l1 O_RDONLY (l1 -> l2 -> l1)", open("l1", OFlags::RDONLY, 0), Errno::LOOP)
        },
    },
    Case {
        name: "open.symlink_loop_component.ELOOP",
        security: false,
        run: |_| {
            symlink("l2", "l1")?;
            symlink("l1", "l2")?;
            err("open l1/f O_CREAT", open("l1/f", OFlags::CREATE | OFlags::WRONLY, 0o644), Errno::LOOP)
        },
    },
    Case {
        name: "open.path_too_long.ENAMETOOLONG",
        security: false,
        run: |_| err("open PATH_MAX O_RDONLY", open(&too_long_path(), OFlags::RDONLY, 0), Errno::NAMETOOLONG),
    },
    Case {
        name: "open.create_flag_on_symlink_to_dir.EISDIR",
        security: false,
        run: |_| {
            // O_CREAT follows the last symlink; it names a directory: as on the directory itself.
            mkdir("d", 0o755)?;
            symlink("d", "l")?;
            err("open l O_CREAT|O_WRONLY (l -> d)", open("l", OFlags::CREATE | OFlags::WRONLY, 0o644), Errno::ISDIR)
        },
    },
    Case {
        name: "open.dir_trunc.EISDIR",
        security: false,
        run: |_| {
            // O_TRUNC asks for write access (open(2)); a directory is never opened for
            // writing: EISDIR even with O_RDONLY (POSIX leaves O_RDONLY|O_TRUNC unspecified;
            // Linux fs/namei.c may_open).
            mkdir("d", 0o755)?;
            err("open d O_RDONLY|O_TRUNC", open("d", OFlags::RDONLY | OFlags::TRUNC, 0), Errno::ISDIR)
        },
    },
    // Last: fuse2fs (1.47) answers a create of a name longer than NAME_MAX with ENOENT and
    // leaves the directory unreadable (EIO), so that later cases in it would not run.
    Case {
        name: "open.name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| err("open NAME_MAX+1 O_RDONLY", open(&too_long_name(c), OFlags::RDONLY, 0), Errno::NAMETOOLONG),
    },
    Case {
        name: "open.create_name_too_long.ENAMETOOLONG",
        security: false,
        run: |c| {
            err(
                "open NAME_MAX+1 O_CREAT",
                open(&too_long_name(c), OFlags::CREATE | OFlags::WRONLY, 0o644),
                Errno::NAMETOOLONG,
            )
        },
    },
];
