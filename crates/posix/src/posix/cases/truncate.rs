//! truncate(2), ftruncate(2): POSIX.1-2017 truncate()/ftruncate() and the Linux man page. The
//! file gets exactly the length asked: data past it is gone, an extension reads as zeros, the
//! descriptor's offset stays. When the size changes, mtime and ctime are marked for update
//! and the set-user-ID/set-group-ID bits "may be cleared" (Linux clears them unless the
//! caller has CAP_FSETID). truncate needs write permission on the file, ftruncate a
//! descriptor open for writing (permission is checked at open, not after). The errors: a
//! negative length (EINVAL), a length past the maximum file size (EFBIG), a directory,
//! immutable and append-only files (EPERM), and the path errors.

use super::sys::truncate_raw as truncate;
use super::sys::{open, sys_int};
use super::{touch, write_file, RustCase};
use crate::posix::check::{eq, err, err_any, ok, stat, unsupported};
use rustix::fs::{OFlags, SeekFrom};
use rustix::io::Errno;

/// The truncate family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "truncate.ftruncate_offset.unchanged",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            ok("write 100 bytes", rustix::io::write(&fd, &[b'z'; 100]))?;
            ok("ftruncate f 10", rustix::fs::ftruncate(&fd, 10))?;
            // POSIX: "The value of the seek pointer shall not be modified by a call to
            // ftruncate()."
            eq("file offset", ok("lseek", rustix::fs::seek(&fd, SeekFrom::Current(0)))?, 100)
        },
    },
    RustCase {
        name: "truncate.past_max_file_size.EFBIG",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let r = truncate("f", i64::MAX);
            if r.is_ok() && stat("f")?.size == i64::MAX as u64 {
                // The filesystem's maximum file size is the largest length there is (tmpfs,
                // btrfs, xfs): no length can exceed it.
                return Err(unsupported(
                    "a length of 2^63-1 is within the maximum file size: EFBIG cannot be provoked",
                ));
            }
            // truncate(2): EFBIG (XSI) or EINVAL for "larger than the maximum file size"; Linux
            // returns EFBIG (inode_newsize_ok): both accepted.
            err_any("truncate f 2^63-1", r, &[Errno::FBIG, Errno::INVAL])
        },
    },
    RustCase {
        name: "truncate.ftruncate_bad_fd.EBADF",
        security: false,
        run: |_| {
            // SAFETY: no memory is passed; -1 is never an open descriptor.
            err("ftruncate -1 0", sys_int(unsafe { libc::ftruncate(-1, 0) }), Errno::BADF)
        },
    },
    RustCase {
        name: "truncate.grow_sparse.zero_filled",
        security: false,
        run: |_| {
            write_file("f", b"abc")?;
            // Far past the free space of a small filesystem: an extension needs no blocks.
            ok("truncate f 1 GiB", truncate("f", 1 << 30))?;
            eq("size of f", stat("f")?.size, 1 << 30)?;
            let fd = open("f", OFlags::RDONLY)?;
            let mut tail = [0xffu8; 4096];
            let n = ok("pread the last 4 KiB", rustix::io::pread(&fd, &mut tail, (1 << 30) - 4096))?;
            eq("bytes read", n, 4096)?;
            eq("the last 4 KiB are zeros", tail.iter().all(|b| *b == 0), true)
        },
    },
];
