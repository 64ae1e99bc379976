//! mkfifo(3) and mkfifoat(3): POSIX.1-2017 mkfifo() and the Linux man page (on Linux both
//! are mknodat(2) with S_IFIFO). A new FIFO gets the permission bits of `mode & ~umask`, the
//! effective uid as owner and the effective gid (or the parent's group under a set-group-ID
//! directory) as group; its atime, mtime and ctime and the parent's mtime and ctime are
//! marked for update. An existing name is EEXIST, even a dangling symlink (mkfifo never
//! follows a last symlink); and the path errors every path-taking call shares.
//!
//! Also the helpers the families mkfifo, mknod, open and symlink share.

use super::sys::{cstr, sys, BAD_FD};
use super::RustCase;
use crate::posix::check::{err, ok, times, Check, Times};
use rustix::fs::{Mode, CWD};
use rustix::io::Errno;

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

/// mkfifoat(BAD_FD, p, mode): EBADF expected.
fn mkfifoat_bad_fd(p: &str) -> rustix::io::Result<()> {
    let p = cstr(p);
    // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
    sys(unsafe { libc::mkfifoat(BAD_FD, p.as_ptr(), 0o644) }.into())
}

/// The mkfifo family.
pub static CASES: &[RustCase] = &[
    RustCase {
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
    RustCase {
        name: "mkfifo.mkfifoat_bad_fd.EBADF",
        security: false,
        run: |_| err("mkfifoat (-1) p", mkfifoat_bad_fd("p"), Errno::BADF),
    },
];
