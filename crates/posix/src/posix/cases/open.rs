//! open(2) and openat(2), what they create and what they refuse: POSIX.1-2017 open() and the
//! Linux man page. O_CREAT makes a regular file of `mode & ~umask` owned by the effective ids,
//! all three of its times and the parent's mtime and ctime marked for update; O_EXCL refuses
//! any existing name, a symlink above all; O_TRUNC empties an existing regular file and marks
//! its mtime and ctime; O_APPEND writes at the end whatever the offset; O_DIRECTORY,
//! O_NOFOLLOW, the *at forms and the path errors. Permissions, attributes and set-id
//! clearing are in open_access.rs; O_TMPFILE, FIFOs and sockets in open_special.rs.

use super::mkfifo::{born, clock_before, S_IFLNK, S_IFREG};
use super::sys::read_file;
use super::sys::{cstr, sys, BAD_FD};
use super::{mkdir, symlink, touch, write_file, RustCase};
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
pub static CASES: &[RustCase] = &[
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
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
    RustCase {
        name: "open.openat_file_fd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let r = rustix::fs::openat(&file, "g", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty());
            err("openat (fd of regular file f) g", r, Errno::NOTDIR)
        },
    },
    RustCase {
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
];
