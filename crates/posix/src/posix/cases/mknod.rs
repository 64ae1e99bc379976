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
use super::{mkdir, touch, RustCase};
use crate::posix::check::{eq, err, ok, stat, times, Check, Octal};
use rustix::fs::{makedev, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

/// `S_IFCHR`.
const S_IFCHR: u32 = 0o020_000;
/// `S_IFBLK`.
const S_IFBLK: u32 = 0o060_000;
/// A device number no driver on a usual machine answers (major 240 is "local/experimental
/// use" in the kernel's devices.txt): the node is only looked at, never opened anyway.
const DEV: (u32, u32) = (240, 17);

/// `mknod p` of `kind` with `mode` and device `dev`.
fn mknod(p: &str, kind: FileType, mode: u32, dev: (u32, u32)) -> rustix::io::Result<()> {
    rustix::fs::mknodat(CWD, p, kind, Mode::from_raw_mode(mode), makedev(dev.0, dev.1))
}

/// Creates `p` of `kind` (mode 0644) and checks its type and mode.
fn created(p: &str, kind: FileType, bits: u32, dev: (u32, u32)) -> Check {
    ok(&format!("mknod {p} {kind:?} 0644"), mknod(p, kind, 0o644, dev))?;
    let s = stat(p)?;
    eq(&format!("file type of {p}"), Octal(s.kind()), Octal(bits))?;
    eq(&format!("mode of {p}"), s.perm(), Octal(0o644))?;
    eq(&format!("link count of {p}"), s.nlink, 1)
}

/// The mknod family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "mknod.char_device.created",
        security: false,
        run: |_| {
            created("c", FileType::CharacterDevice, S_IFCHR, DEV)?;
            eq("device number of c (statx rdev)", stat("c")?.rdev, DEV)
        },
    },
    RustCase {
        name: "mknod.block_device.created",
        security: false,
        run: |_| {
            created("b", FileType::BlockDevice, S_IFBLK, DEV)?;
            eq("device number of b (statx rdev)", stat("b")?.rdev, DEV)
        },
    },
    RustCase {
        name: "mknod.large_device_number.kept",
        security: false,
        run: |_| {
            // Linux device numbers are 12-bit major, 20-bit minor: both beyond the old 8/8.
            // A filesystem that stores fewer bits refuses the number (EINVAL) rather than
            // truncate it: xfs keeps the 32-bit SysV form (14-bit major, 18-bit minor, majors
            // below 512), so it fails this case; POSIX says nothing of device number ranges.
            let dev = (4000, 1_000_000);
            ok("mknod c char 4000:1000000", mknod("c", FileType::CharacterDevice, 0o600, dev))?;
            eq("device number of c (statx rdev)", stat("c")?.rdev, dev)
        },
    },
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
        name: "mknod.mknodat_dirfd.created",
        security: false,
        run: |_| {
            mkdir("d", 0o755)?;
            let dir = super::sys::open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            let r = rustix::fs::mknodat(
                &dir,
                "c",
                FileType::CharacterDevice,
                Mode::from_raw_mode(0o600),
                makedev(DEV.0, DEV.1),
            );
            ok("mknodat (d) c char", r)?;
            eq("device number of d/c", stat("d/c")?.rdev, DEV)
        },
    },
    RustCase {
        name: "mknod.mknodat_file_fd.ENOTDIR",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let file = super::sys::open("f", OFlags::RDONLY)?;
            let r = rustix::fs::mknodat(&file, "p", FileType::Fifo, Mode::from_raw_mode(0o644), 0);
            err("mknodat (fd of regular file f) p", r, Errno::NOTDIR)
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
