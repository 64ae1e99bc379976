//! Small helpers many families share: raw calls through libc where rustix checks arguments
//! itself instead of asking the kernel (bad descriptors, flags it refuses), and the immutable
//! and append-only attributes.

use crate::posix::check::{ok, Miss};
use crate::posix::ctx::broken;
use rustix::fs::{IFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CString;
use std::os::fd::OwnedFd;

/// A descriptor number no process has open (`-1`): EBADF for the f* and *at forms.
pub(super) const BAD_FD: libc::c_int = -1;

/// The errno of a raw libc call's result (`-1` and errno, anything else success).
pub(super) fn sys(r: libc::c_long) -> rustix::io::Result<()> {
    if r == -1 {
        Err(Errno::from_raw_os_error(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)))
    } else {
        Ok(())
    }
}

/// [`sys`] for a libc call returning `int`.
pub(crate) fn sys_int(r: libc::c_int) -> rustix::io::Result<()> {
    sys(r.into())
}

/// `p` as a C string (cases use plain ASCII names).
pub(crate) fn cstr(p: &str) -> CString {
    CString::new(p).unwrap_or_default()
}

/// The most a case reads back of a file: the largest any case writes is a few MiB.
const READ_CAP: u64 = 16 << 20;

/// The contents of `p` (setup or check: a failure names the errno): opened without blocking
/// (a FIFO served in its place), a regular file, and read to at most [`READ_CAP`] bytes (a
/// file served as larger than any case wrote is a failure of the check, EFBIG).
pub(super) fn read_file(p: &str) -> Result<Vec<u8>, Miss> {
    let fail = |e: Errno| broken(&format!("read {p}"), e);
    let fd = rustix::fs::open(p, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty()).map_err(fail)?;
    let st = rustix::fs::fstat(&fd).map_err(fail)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(fail(Errno::INVAL));
    }
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(fail)?;
    fsarena_workload::served::read_capped(std::fs::File::from(fd), READ_CAP, std::path::Path::new(p)).map_err(|e| {
        if e.raw_os_error().is_some() {
            fail(super::io_errno(&e))
        } else {
            fail(Errno::FBIG)
        }
    })
}

/// Opens `p` with `flags` (plus O_CLOEXEC), a failure of the setup when it cannot.
pub(super) fn open(p: &str, flags: OFlags) -> Result<OwnedFd, Miss> {
    rustix::fs::open(p, flags | OFlags::CLOEXEC, Mode::empty()).map_err(|e| broken(&format!("open {p}"), e))
}

/// Adds `flag` (immutable or append-only) to `p`'s attributes through FS_IOC_SETFLAGS; the
/// case has called `need_flags()` first. The runner's cleanup clears them.
pub(crate) fn set_flag(p: &str, flag: IFlags) -> Result<(), Miss> {
    let fd = open(p, OFlags::RDONLY | OFlags::NONBLOCK)?;
    let what = format!("FS_IOC_SETFLAGS {p}");
    let old = ok(&what, rustix::fs::ioctl_getflags(&fd))?;
    ok(&what, rustix::fs::ioctl_setflags(&fd, old | flag))
}

/// truncate(2) of `p` (relative to the case's directory) to `len`, which may be negative:
/// through libc, since rustix takes no negative length.
pub(crate) fn truncate_raw(p: &str, len: i64) -> rustix::io::Result<()> {
    let name = cstr(p);
    // SAFETY: a NUL-terminated path alive across the call, only read by the kernel.
    sys_int(unsafe { libc::truncate(name.as_ptr(), len) })
}
