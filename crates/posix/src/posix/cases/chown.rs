//! chown(2), fchown(2), lchown(2), fchownat(2): POSIX.1-2017 chown(), fchown(), lchown(),
//! fchownat() and the Linux man page. Root may change the owner; the owner may change the
//! group to one of its own groups (EPERM otherwise); -1 leaves an id as it is; the ctime is
//! marked for update. Changing the owner or group of an executable regular file clears its
//! set-user-ID bit and its set-group-ID bit when it is group-executable, for root too on
//! Linux ("since Linux 2.2.13, root is treated like other users"); a set-group-ID bit without
//! group-execute (mandatory locking) and a directory's set-id bits are kept. `chown` follows
//! a last symlink, `lchown` and AT_SYMLINK_NOFOLLOW do not.

use super::sys::{cstr, open, sys, BAD_FD};
use super::{chown as setown, touch, RustCase};
use crate::posix::check::{eq, err, ok, stat};
use crate::posix::ctx::{U1, U2};
use rustix::fs::{Gid, OFlags, Uid};
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// `chown p uid gid`, following a last symlink.
fn chown(p: &str, uid: Option<u32>, gid: Option<u32>) -> rustix::io::Result<()> {
    rustix::fs::chown(p, uid.map(Uid::from_raw), gid.map(Gid::from_raw))
}

/// `fchownat(dirfd, p, uid, gid, flags)` through the raw syscall, for descriptors and flags
/// rustix does not let through.
fn fchownat_raw(dirfd: libc::c_int, p: &str, uid: u32, gid: u32, flags: libc::c_int) -> rustix::io::Result<()> {
    let c = cstr(p);
    // SAFETY: `c` is NUL-terminated and alive across the call, which only reads it.
    sys(unsafe { libc::syscall(libc::SYS_fchownat, dirfd, c.as_ptr(), uid, gid, flags) })
}

/// The chown family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "chown.fchownat_empty_path.updated",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // AT_EMPTY_PATH: operate on dirfd itself, here an O_PATH descriptor of f.
            let fd = open("f", OFlags::PATH)?;
            let r = fchownat_raw(fd.as_raw_fd(), "", U1.uid, U1.gid, libc::AT_EMPTY_PATH);
            ok("fchownat (f, O_PATH) \"\" 65534:65534 AT_EMPTY_PATH", r)?;
            let st = stat("f")?;
            eq("owner of f", (st.uid, st.gid), (U1.uid, U1.gid))
        },
    },
    RustCase {
        name: "chown.fchownat_bad_flag.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            // fchownat(2): "EINVAL (fchownat()) Invalid flag specified in flags."
            err(
                "fchownat f AT_REMOVEDIR",
                fchownat_raw(libc::AT_FDCWD, "f", U1.uid, U1.gid, libc::AT_REMOVEDIR),
                Errno::INVAL,
            )
        },
    },
    RustCase {
        name: "chown.fchownat_bad_dirfd.EBADF",
        security: false,
        run: |_| err("fchownat (-1) f", fchownat_raw(BAD_FD, "f", U1.uid, U1.gid, 0), Errno::BADF),
    },
    RustCase {
        name: "chown.fchown_bad_fd.EBADF",
        security: false,
        run: |_| {
            // SAFETY: fchown takes a plain number; -1 is no descriptor.
            err("fchown -1", sys(unsafe { libc::fchown(BAD_FD, U1.uid, U1.gid) }.into()), Errno::BADF)
        },
    },
    RustCase {
        name: "chown.group_by_owner_primary_gid.updated",
        security: true,
        run: |c| {
            touch("f", 0o644)?;
            setown("f", U1.uid, U1.gid)?;
            // The effective group id counts as one of the owner's groups.
            let u = U1.with_gid(65533);
            c.as_user(u, || ok("chown f -1:65533 as its owner, of gid 65533", chown("f", None, Some(U2.gid))))?;
            eq("group of f", stat("f")?.gid, U2.gid)
        },
    },
];
