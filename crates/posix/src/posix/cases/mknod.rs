//! mknod(2) and mknodat(2): POSIX.1-2017 mknod() and the Linux man page. Creates a regular
//! file, FIFO, socket, or (privileged: CAP_MKNOD) a character or block device whose device
//! number statx reports back as `stx_rdev`; the mode is `mode & ~umask`, the owner the
//! effective ids, the new node's three times and the parent's mtime and ctime are marked for
//! update. An unprivileged user asking for a device gets EPERM; a type that is none of these
//! is EINVAL (S_IFDIR: EPERM on Linux: mkdir(2) makes directories).
//!
//! The device nodes made here are never opened: opening one reaches the driver.

use super::mkfifo::{born, clock_before};
use super::sys::{cstr, sys, BAD_FD};
use super::RustCase;
use crate::posix::check::{err, ok, times};
use rustix::fs::{makedev, FileType, Mode, CWD};
use rustix::io::Errno;

/// A device number no driver on a usual machine answers (major 240 is "local/experimental
/// use" in the kernel's devices.txt): the node is only looked at, never opened anyway.
const DEV: (u32, u32) = (240, 17);

/// `mknod p` of `kind` with `mode` and device `dev`.
fn mknod(p: &str, kind: FileType, mode: u32, dev: (u32, u32)) -> rustix::io::Result<()> {
    rustix::fs::mknodat(CWD, p, kind, Mode::from_raw_mode(mode), makedev(dev.0, dev.1))
}

/// The mknod family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "mknod.new_node_times.updated",
        security: false,
        run: |c| {
            let before = times(".")?;
            c.tick();
            let now = clock_before();
            ok("mknod b block", mknod("b", FileType::BlockDevice, 0o600, DEV))?;
            born("new block device b", before, now, times("b")?)
        },
    },
    RustCase {
        name: "mknod.mknodat_bad_fd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("p");
            // SAFETY: `p` is a NUL-terminated string alive across the call, which only reads it.
            let r = sys(unsafe { libc::mknodat(BAD_FD, p.as_ptr(), libc::S_IFIFO | 0o644, 0) }.into());
            err("mknodat (-1) p fifo", r, Errno::BADF)
        },
    },
];
