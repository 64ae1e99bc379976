//! readlink(2) and readlinkat(2), the symlink family's reading half: POSIX.1-2017 readlink()
//! and the Linux man page. The link's bytes come back exactly, without a terminating NUL,
//! truncated to the buffer; a buffer of size 0 and a path that is not a symlink are EINVAL;
//! every component before the last is followed, the last never; and the path errors.

use super::sys::{cstr, sys, BAD_FD};
use super::{symlink, RustCase};
use crate::posix::check::{eq, err, ok};
use rustix::fs::CWD;
use rustix::io::Errno;

/// The symlink family: readlink and readlinkat.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "symlink.readlink_no_nul.returned",
        security: false,
        run: |_| {
            // readlink(2) "does not append a terminating null byte": the byte after the
            // target keeps what the caller left there.
            symlink("abcdef", "l")?;
            let mut buf = [0xAAu8; 16];
            let n = ok("readlink l (16-byte buffer)", rustix::fs::readlinkat_raw(CWD, "l", &mut buf[..]))?;
            eq("readlink l: bytes returned", n, 6)?;
            eq("readlink l: contents", &buf[..7], b"abcdef\xAA".as_slice())
        },
    },
    RustCase {
        name: "symlink.readlink_short_buffer.truncated",
        security: false,
        run: |_| {
            // POSIX: a buffer smaller than the link: "the contents ... are truncated" (Linux
            // returns the buffer's size and no error).
            symlink("abcdef", "l")?;
            let mut buf = [0xAAu8; 8];
            let n = ok("readlink l (3-byte buffer)", rustix::fs::readlinkat_raw(CWD, "l", &mut buf[..3]))?;
            eq("readlink l: bytes returned", n, 3)?;
            eq("readlink l: contents", &buf[..4], b"abc\xAA".as_slice())
        },
    },
    RustCase {
        name: "symlink.readlink_zero_buffer.EINVAL",
        security: false,
        run: |_| {
            // readlink(2): EINVAL "bufsiz is not positive".
            symlink("abcdef", "l")?;
            let mut buf = [0u8; 0];
            err("readlink l (0-byte buffer)", rustix::fs::readlinkat_raw(CWD, "l", &mut buf[..]), Errno::INVAL)
        },
    },
    RustCase {
        name: "symlink.readlinkat_bad_fd.EBADF",
        security: false,
        run: |_| {
            let p = cstr("l");
            let mut buf = [0u8; 16];
            // SAFETY: `p` is a NUL-terminated string and `buf` a writable buffer of the length
            // passed, both alive across the call.
            let r = unsafe { libc::readlinkat(BAD_FD, p.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
            err("readlinkat (-1) l", sys(r as libc::c_long), Errno::BADF)
        },
    },
];
