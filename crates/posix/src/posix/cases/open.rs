//! open(2) and openat(2), what they create and what they refuse: POSIX.1-2017 open() and the
//! Linux man page. O_CREAT makes a regular file of `mode & ~umask` owned by the effective ids,
//! all three of its times and the parent's mtime and ctime marked for update; O_EXCL refuses
//! any existing name, a symlink above all; O_TRUNC empties an existing regular file and marks
//! its mtime and ctime; O_APPEND writes at the end whatever the offset; O_DIRECTORY,
//! O_NOFOLLOW, the *at forms and the path errors. Permissions, attributes and set-id
//! clearing are in open_access.rs; O_TMPFILE, FIFOs and sockets in open_special.rs.

use super::mkfifo::{born, clock_before};
use super::sys::read_file;
use super::sys::{cstr, sys, BAD_FD};
use super::{write_file, RustCase};
use crate::posix::check::{eq, err, ok, times, Check};
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
