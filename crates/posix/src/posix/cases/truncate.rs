//! truncate(2), ftruncate(2): POSIX.1-2017 truncate()/ftruncate() and the Linux man page. The
//! file gets exactly the length asked: data past it is gone, an extension reads as zeros, the
//! descriptor's offset stays. When the size changes, mtime and ctime are marked for update
//! and the set-user-ID/set-group-ID bits "may be cleared" (Linux clears them unless the
//! caller has CAP_FSETID). truncate needs write permission on the file, ftruncate a
//! descriptor open for writing (permission is checked at open, not after). The errors: a
//! negative length (EINVAL), a length past the maximum file size (EFBIG), a directory,
//! immutable and append-only files (EPERM), and the path errors.

use super::rename::read_all;
use super::sys::truncate_raw as truncate;
use super::sys::{open, sys_int};
use super::{chmod, chown, symlink, touch, write_file, RustCase};
use crate::posix::check::{eq, err, err_any, ok, stat, unsupported, Miss, Octal};
use crate::posix::ctx::U1;
use rustix::fs::{OFlags, SeekFrom};
use rustix::io::Errno;
use std::os::fd::AsRawFd;

/// The truncate family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "truncate.grow.zero_filled",
        security: false,
        run: |_| {
            write_file("f", b"abc")?;
            ok("truncate f 10000", truncate("f", 10_000))?;
            eq("size of f", stat("f")?.size, 10_000)?;
            // POSIX: "If the file was previously shorter than length, its size is increased, and
            // the extended area appears as if it were zero-filled."
            let mut want = b"abc".to_vec();
            want.resize(10_000, 0);
            ensure_data("f", want)
        },
    },
    RustCase {
        name: "truncate.shrink.truncated",
        security: false,
        run: |_| {
            write_file("f", &[b'x'; 10_000])?;
            ok("truncate f 100", truncate("f", 100))?;
            eq("size of f", stat("f")?.size, 100)?;
            ensure_data("f", vec![b'x'; 100])
        },
    },
    RustCase {
        name: "truncate.shrink_then_grow.zero_filled",
        security: false,
        run: |_| {
            write_file("f", &[b'x'; 5000])?;
            ok("truncate f 10", truncate("f", 10))?;
            ok("truncate f 5000", truncate("f", 5000))?;
            // The data cut off does not come back.
            let mut want = vec![b'x'; 10];
            want.resize(5000, 0);
            ensure_data("f", want)
        },
    },
    RustCase {
        name: "truncate.to_zero.truncated",
        security: false,
        run: |_| {
            write_file("f", &[b'x'; 5000])?;
            ok("truncate f 0", truncate("f", 0))?;
            eq("size of f", stat("f")?.size, 0)
        },
    },
    RustCase {
        name: "truncate.same_size.unchanged",
        security: false,
        run: |_| {
            write_file("f", b"abc")?;
            ok("truncate f 3 (its size)", truncate("f", 3))?;
            eq("size of f", stat("f")?.size, 3)?;
            // POSIX requires mtime and ctime marked only "if the file size is changed" and
            // does not forbid more; Linux filesystems differ (tmpfs and ext4 update both,
            // btrfs neither), so the times are not checked here.
            ensure_data("f", b"abc".to_vec())
        },
    },
    RustCase {
        name: "truncate.ftruncate.truncated",
        security: false,
        run: |_| {
            write_file("f", &[b'y'; 300])?;
            let fd = open("f", OFlags::RDWR)?;
            ok("ftruncate f 7", rustix::fs::ftruncate(&fd, 7))?;
            eq("size of f", stat("f")?.size, 7)?;
            eq("data of f", read_all(&fd)?, vec![b'y'; 7])
        },
    },
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
        name: "truncate.ftruncate_append_fd.truncated",
        security: false,
        run: |_| {
            write_file("f", &[b'y'; 300])?;
            let fd = open("f", OFlags::WRONLY | OFlags::APPEND)?;
            ok("ftruncate f 3 (O_APPEND descriptor)", rustix::fs::ftruncate(&fd, 3))?;
            eq("size of f", stat("f")?.size, 3)
        },
    },
    RustCase {
        name: "truncate.through_symlink.truncated",
        security: false,
        run: |_| {
            write_file("f", b"abcdef")?;
            symlink("f", "l")?;
            // truncate() follows symlinks: the file named is cut, the link stays a link.
            ok("truncate l 2", truncate("l", 2))?;
            eq("size of f", stat("f")?.size, 2)?;
            eq("type of l", stat("l")?.kind(), 0o120_000)
        },
    },
    RustCase {
        name: "truncate.ftruncate_setid.cleared",
        security: true,
        run: |c| {
            write_file("f", b"abc")?;
            chown("f", U1.uid, U1.gid)?;
            chmod("f", 0o6755)?;
            c.as_user(U1, || {
                let fd = open("f", OFlags::WRONLY)?;
                ok("ftruncate f 1 as its owner, uid 65534", rustix::fs::ftruncate(&fd, 1))
            })?;
            eq("mode of f", stat("f")?.perm(), Octal(0o755))
        },
    },
    RustCase {
        name: "truncate.ftruncate_negative_length.EINVAL",
        security: false,
        run: |_| {
            write_file("f", b"abc")?;
            let fd = open("f", OFlags::WRONLY)?;
            // SAFETY: ftruncate on a descriptor this case owns; no memory is passed.
            let r = sys_int(unsafe { libc::ftruncate(fd.as_raw_fd(), -1) });
            err("ftruncate f -1", r, Errno::INVAL)
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
        name: "truncate.ftruncate_after_chmod.truncated",
        security: false,
        run: |c| {
            write_file("f", b"abc")?;
            chown("f", U1.uid, U1.gid)?;
            // Permission is checked when the descriptor is opened, not by ftruncate.
            c.as_user(U1, || {
                let fd = open("f", OFlags::WRONLY)?;
                chmod("f", 0o444)?;
                ok("ftruncate f 1 (opened for writing, then made 0444)", rustix::fs::ftruncate(&fd, 1))
            })?;
            eq("size of f", stat("f")?.size, 1)
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

/// The whole content of `p` must be `want` (compared by length and first differing byte, not
/// printed whole).
fn ensure_data(p: &str, want: Vec<u8>) -> Result<(), Miss> {
    let got = read_all(&open(p, OFlags::RDONLY)?)?;
    let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
    crate::posix::check::ensure(
        &format!("data of {p}"),
        got.len() == want.len() && first_diff.is_none(),
        &format!("{} bytes as written, zeros past the old end", want.len()),
        || match first_diff {
            Some(i) => format!("byte {i} is {:#04x}, not {:#04x}", got[i], want[i]),
            None => format!("{} bytes", got.len()),
        },
    )
}
