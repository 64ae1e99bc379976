//! rename(2), continued: renameat (names relative to directory descriptors), renameat2's
//! RENAME_NOREPLACE and RENAME_EXCHANGE (Linux), and who may rename: write permission on both
//! parents and search permission on every component (POSIX.1-2017 rename() EACCES), write
//! permission on a directory moved to another parent (its `..` changes), sticky directories
//! (only the owner of the entry or of the directory, or root), and the immutable and
//! append-only attributes (EPERM, ioctl_iflags(2)).

use super::sys::{cstr, sys_int};
use super::{touch, RustCase};
use crate::posix::check::err;
use rustix::io::Errno;

/// The rename family: renameat, renameat2, permissions and attributes.
pub static CASES: &[RustCase] = &[RustCase {
    name: "rename.renameat_bad_dirfd.EBADF",
    security: false,
    run: |_| {
        touch("a", 0o644)?;
        err("renameat -1:a CWD:b", renameat_bad_old_dirfd("a", "b"), Errno::BADF)
    },
}];

/// renameat with an old directory descriptor that is not open (-1, not AT_FDCWD).
fn renameat_bad_old_dirfd(old: &str, new: &str) -> rustix::io::Result<()> {
    let (o, n) = (cstr(old), cstr(new));
    // SAFETY: both names are NUL-terminated strings alive across the call; the kernel only
    // reads them, and -1 is refused (EBADF) before any descriptor is used.
    let r = unsafe { libc::renameat(-1, o.as_ptr(), libc::AT_FDCWD, n.as_ptr()) };
    sys_int(r)
}
