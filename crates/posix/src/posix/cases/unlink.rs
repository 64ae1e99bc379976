//! unlink(2), unlinkat(2): POSIX.1-2017 unlink()/unlinkat() and the Linux man page. Removes a
//! name: the file loses a link (its ctime is marked for update while links remain; an open
//! descriptor still reaches its data when none remain), the parent's mtime and ctime are
//! marked for update. A directory is refused (Linux: EISDIR, where POSIX says EPERM) unless
//! unlinkat is given AT_REMOVEDIR, which behaves as rmdir. Only write and search permission
//! on the directory matter, not the file's own mode, except in a sticky directory (the owner
//! of the file or of the directory, or root) and for immutable/append-only files and
//! directories (EPERM).

use super::sys::{cstr, sys_int};
use super::{touch, RustCase};
use crate::posix::check::err;
use rustix::io::Errno;

/// The unlink family.
pub static CASES: &[RustCase] = &[RustCase {
    name: "unlink.unlinkat_bad_dirfd.EBADF",
    security: false,
    run: |_| {
        touch("f", 0o644)?;
        err("unlinkat -1:f", unlinkat_bad_dirfd("f"), Errno::BADF)
    },
}];

/// unlinkat with a directory descriptor that is not open (-1, not AT_FDCWD).
fn unlinkat_bad_dirfd(p: &str) -> rustix::io::Result<()> {
    let name = cstr(p);
    // SAFETY: a NUL-terminated name alive across the call, only read by the kernel; the
    // descriptor -1 is refused (EBADF) before any use.
    sys_int(unsafe { libc::unlinkat(-1, name.as_ptr(), 0) })
}
