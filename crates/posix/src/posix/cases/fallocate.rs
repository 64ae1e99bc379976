//! posix_fallocate(3) (POSIX.1-2017) and Linux fallocate(2). Mode 0 is posix_fallocate:
//! the range is allocated (blocks), reads zero where nothing was written, and the size
//! grows to cover it. `FALLOC_FL_KEEP_SIZE` allocates without growing the size;
//! `PUNCH_HOLE` (with KEEP_SIZE) and `ZERO_RANGE` make a range read zero; `COLLAPSE_RANGE`
//! and `INSERT_RANGE` need block-aligned ranges. A mode the filesystem lacks is
//! EOPNOTSUPP: those cases report unsupported. The errors are the descriptor's (EBADF
//! when not open for writing, ESPIPE on a pipe, ENODEV on other than a regular file), the
//! arguments' (EINVAL, EFBIG past the largest size) and the inode flags' (EPERM).

use super::sys::{open, read_file};
use super::{touch, write_file, RustCase};
use crate::posix::check::{
    ensure, eq, err, err_any, fail, moved, name, ok, stat, times, unsupported, Check, Mark, Miss,
};
use crate::posix::ctx::{maybe_unsupported, Ctx};
use rustix::fd::OwnedFd;
use rustix::fs::{FallocateFlags as F, IFlags, Mode, OFlags};
use rustix::io::Errno;

/// 1 MiB: the range most cases allocate.
const MIB: u64 = 1 << 20;
/// 64 KiB: the data most cases write first (a multiple of every block size).
const DATA: usize = 64 << 10;

/// A file `f` of [`DATA`] bytes of 0xaa, flushed (so its blocks are allocated and counted),
/// opened read-write.
fn data_file() -> Result<OwnedFd, Miss> {
    write_file("f", &[0xaa; DATA])?;
    let fd = open("f", OFlags::RDWR)?;
    ok("fsync f", rustix::fs::fsync(&fd))?;
    Ok(fd)
}

/// The bytes `[from, to)` of `b` must all be `v`.
fn all_are(what: &str, b: &[u8], from: usize, to: usize, v: u8) -> Check {
    let bad = b.get(from..to).and_then(|s| s.iter().position(|x| *x != v));
    ensure(what, b.len() >= to && bad.is_none(), &format!("bytes {from}..{to} all {v:#x}"), || match bad {
        Some(i) => format!("byte {} is {:#x}", from + i, b[from + i]),
        None => format!("{} bytes", b.len()),
    })
}

/// A `mode` the filesystem may lack on `fd`: unsupported when it says EOPNOTSUPP, else
/// the result.
fn optional(mode: F, what: &str, fd: &OwnedFd, off: u64, len: u64) -> Result<rustix::io::Result<()>, Miss> {
    maybe_unsupported(what, rustix::fs::fallocate(fd, mode, off, len))
}

/// Sets the inode flag `flag` on `f` (after a need_flags probe).
fn flagged(c: &Ctx<'_>, flag: IFlags) -> Result<OwnedFd, Miss> {
    c.need_flags()?;
    let fd = data_file()?;
    let old = ok("FS_IOC_GETFLAGS f", rustix::fs::ioctl_getflags(&fd))?;
    ok("FS_IOC_SETFLAGS f", rustix::fs::ioctl_setflags(&fd, old | flag))?;
    Ok(fd)
}

/// The fallocate family.
pub static CASES: &[RustCase] = &[
    RustCase {
        name: "fallocate.mode0.size_grown",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            ok("fallocate f 0 1MiB", rustix::fs::fallocate(&fd, F::empty(), 0, MIB))?;
            let s = stat("f")?;
            eq("size of f", s.size, MIB)?;
            ensure("blocks of f", s.blocks * 512 >= MIB, "at least 1 MiB allocated", || {
                format!("{} bytes", s.blocks * 512)
            })
        },
    },
    RustCase {
        name: "fallocate.mode0.reads_zero",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            ok("fallocate f 0 1MiB", rustix::fs::fallocate(&fd, F::empty(), 0, MIB))?;
            all_are("contents of f", &read_file("f")?, 0, MIB as usize, 0)
        },
    },
    // Growing the size changes the file (POSIX posix_fallocate(): "If the size of the file
    // is less than offset+len, then the file is increased to this size"); Linux marks mtime
    // and ctime as for a write.
    RustCase {
        name: "fallocate.mode0_times.updated",
        security: false,
        run: |c| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            let before = times("f")?;
            c.tick();
            ok("fallocate f 0 1MiB", rustix::fs::fallocate(&fd, F::empty(), 0, MIB))?;
            moved("f", before, times("f")?, Mark::Any, Mark::Changed, Mark::Changed)
        },
    },
    RustCase {
        name: "fallocate.within_size.data_kept",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok("fallocate f 4KiB 16KiB", rustix::fs::fallocate(&fd, F::empty(), 4096, 16384))?;
            eq("size of f", stat("f")?.size, DATA as u64)?;
            all_are("contents of f", &read_file("f")?, 0, DATA, 0xaa)
        },
    },
    RustCase {
        name: "fallocate.past_end_data.kept",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok("fallocate f 32KiB 1MiB", rustix::fs::fallocate(&fd, F::empty(), 32 << 10, MIB))?;
            let b = read_file("f")?;
            eq("size of f", b.len() as u64, (32 << 10) + MIB)?;
            all_are("the old data of f", &b, 0, DATA, 0xaa)?;
            all_are("the allocated tail of f", &b, DATA, b.len(), 0)
        },
    },
    RustCase {
        name: "fallocate.keep_size.size_unchanged",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            if let Err(e) = optional(F::KEEP_SIZE, "fallocate KEEP_SIZE", &fd, 0, MIB)? {
                return Err(fail("fallocate f KEEP_SIZE 0 1MiB", "success", name(e)));
            }
            let s = stat("f")?;
            eq("size of f", s.size, 0)?;
            ensure("blocks of f", s.blocks * 512 >= MIB, "at least 1 MiB allocated", || {
                format!("{} bytes", s.blocks * 512)
            })
        },
    },
    RustCase {
        name: "fallocate.punch_hole.zeroed",
        security: false,
        run: |_| {
            let fd = data_file()?;
            let r = optional(F::PUNCH_HOLE | F::KEEP_SIZE, "fallocate PUNCH_HOLE", &fd, 16384, 16384)?;
            ok("fallocate f PUNCH_HOLE|KEEP_SIZE 16KiB 16KiB", r)?;
            let b = read_file("f")?;
            eq("size of f", b.len(), DATA)?;
            all_are("the hole", &b, 16384, 32768, 0)?;
            all_are("before the hole", &b, 0, 16384, 0xaa)?;
            all_are("after the hole", &b, 32768, DATA, 0xaa)
        },
    },
    RustCase {
        name: "fallocate.punch_hole.blocks_freed",
        security: false,
        run: |_| {
            let fd = data_file()?;
            let before = stat("f")?.blocks;
            let r = optional(F::PUNCH_HOLE | F::KEEP_SIZE, "fallocate PUNCH_HOLE", &fd, 0, DATA as u64)?;
            ok("fallocate f PUNCH_HOLE|KEEP_SIZE 0 64KiB", r)?;
            ok("fsync f", rustix::fs::fsync(&fd))?;
            let after = stat("f")?.blocks;
            ensure("blocks of f", after < before, "fewer blocks after punching all data", || {
                format!("{before} then {after}")
            })
        },
    },
    // fallocate(2): PUNCH_HOLE must be ORed with KEEP_SIZE; the VFS refuses it alone with
    // EOPNOTSUPP on every filesystem.
    RustCase {
        name: "fallocate.punch_without_keep_size.EOPNOTSUPP",
        security: false,
        run: |_| {
            let fd = data_file()?;
            err("fallocate f PUNCH_HOLE", rustix::fs::fallocate(&fd, F::PUNCH_HOLE, 0, 4096), Errno::OPNOTSUPP)
        },
    },
    // Two range operations at once: fallocate(2) lists EINVAL; since Linux 6.11
    // vfs_fallocate takes exactly one operation and answers any other combination with
    // EOPNOTSUPP. Either.
    RustCase {
        name: "fallocate.punch_and_zero.EINVAL",
        security: false,
        run: |_| {
            let fd = data_file()?;
            let mode = F::PUNCH_HOLE | F::KEEP_SIZE | F::ZERO_RANGE;
            err_any(
                "fallocate f PUNCH_HOLE|KEEP_SIZE|ZERO_RANGE",
                rustix::fs::fallocate(&fd, mode, 0, 4096),
                &[Errno::INVAL, Errno::OPNOTSUPP],
            )
        },
    },
    RustCase {
        name: "fallocate.zero_range.zeroed",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok(
                "fallocate f ZERO_RANGE 16KiB 16KiB",
                optional(F::ZERO_RANGE, "fallocate ZERO_RANGE", &fd, 16384, 16384)?,
            )?;
            let b = read_file("f")?;
            eq("size of f", b.len(), DATA)?;
            all_are("the zeroed range", &b, 16384, 32768, 0)?;
            all_are("after the zeroed range", &b, 32768, DATA, 0xaa)
        },
    },
    RustCase {
        name: "fallocate.zero_range_past_end.size_grown",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok(
                "fallocate f ZERO_RANGE 64KiB 64KiB",
                optional(F::ZERO_RANGE, "fallocate ZERO_RANGE", &fd, DATA as u64, DATA as u64)?,
            )?;
            eq("size of f", stat("f")?.size, 2 * DATA as u64)
        },
    },
    RustCase {
        name: "fallocate.collapse_range.removed",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok("pwrite f", rustix::io::pwrite(&fd, &[0xbb; 16384], 16384).map(drop))?;
            ok(
                "fallocate f COLLAPSE_RANGE 0 16KiB",
                optional(F::COLLAPSE_RANGE, "fallocate COLLAPSE_RANGE", &fd, 0, 16384)?,
            )?;
            let b = read_file("f")?;
            eq("size of f", b.len(), DATA - 16384)?;
            all_are("the range moved down", &b, 0, 16384, 0xbb)
        },
    },
    RustCase {
        name: "fallocate.insert_range.inserted",
        security: false,
        run: |_| {
            let fd = data_file()?;
            ok(
                "fallocate f INSERT_RANGE 0 16KiB",
                optional(F::INSERT_RANGE, "fallocate INSERT_RANGE", &fd, 0, 16384)?,
            )?;
            let b = read_file("f")?;
            eq("size of f", b.len(), DATA + 16384)?;
            all_are("the inserted hole", &b, 0, 16384, 0)?;
            all_are("the data moved up", &b, 16384, DATA + 16384, 0xaa)
        },
    },
    // fallocate(2): COLLAPSE_RANGE and INSERT_RANGE need offset and len multiples of the
    // filesystem block size, else EINVAL.
    RustCase {
        name: "fallocate.collapse_unaligned.EINVAL",
        security: false,
        run: |_| {
            let fd = data_file()?;
            err(
                "fallocate f COLLAPSE_RANGE 100 1000",
                optional(F::COLLAPSE_RANGE, "fallocate COLLAPSE_RANGE", &fd, 100, 1000)?,
                Errno::INVAL,
            )
        },
    },
    RustCase {
        name: "fallocate.insert_unaligned.EINVAL",
        security: false,
        run: |_| {
            let fd = data_file()?;
            err(
                "fallocate f INSERT_RANGE 100 1000",
                optional(F::INSERT_RANGE, "fallocate INSERT_RANGE", &fd, 100, 1000)?,
                Errno::INVAL,
            )
        },
    },
    // fallocate(2): a collapse reaching the end of the file is EINVAL (use ftruncate).
    RustCase {
        name: "fallocate.collapse_to_end.EINVAL",
        security: false,
        run: |_| {
            let fd = data_file()?;
            let r = optional(F::COLLAPSE_RANGE, "fallocate COLLAPSE_RANGE", &fd, 0, DATA as u64)?;
            err("fallocate f COLLAPSE_RANGE 0 64KiB (the whole file)", r, Errno::INVAL)
        },
    },
    RustCase {
        name: "fallocate.read_only_fd.EBADF",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDONLY)?;
            err("fallocate on an O_RDONLY fd", rustix::fs::fallocate(&fd, F::empty(), 0, 4096), Errno::BADF)
        },
    },
    RustCase {
        name: "fallocate.zero_len.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            err("fallocate f 0 0", rustix::fs::fallocate(&fd, F::empty(), 0, 0), Errno::INVAL)
        },
    },
    // The syscall takes signed offsets: all ones is -1.
    RustCase {
        name: "fallocate.negative_offset.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            err("fallocate f -1 4096", rustix::fs::fallocate(&fd, F::empty(), u64::MAX, 4096), Errno::INVAL)
        },
    },
    RustCase {
        name: "fallocate.negative_len.EINVAL",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            err("fallocate f 0 -4096", rustix::fs::fallocate(&fd, F::empty(), 0, 0u64.wrapping_sub(4096)), Errno::INVAL)
        },
    },
    // offset + len overflowing (or past the filesystem's largest file) is EFBIG.
    RustCase {
        name: "fallocate.past_max_size.EFBIG",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            err("fallocate f 2^62 2^62", rustix::fs::fallocate(&fd, F::empty(), 1 << 62, 1 << 62), Errno::FBIG)
        },
    },
    // More than the whole filesystem holds (twice its size, so it cannot succeed even on a
    // big dir: target); on a filesystem whose largest file is smaller than that, EFBIG is
    // the answer posix_fallocate() gives first: either.
    RustCase {
        name: "fallocate.no_space.ENOSPC",
        security: false,
        run: |_| {
            touch("f", 0o644)?;
            let fd = open("f", OFlags::RDWR)?;
            let vfs = ok("statvfs .", rustix::fs::statvfs("."))?;
            let len = vfs.f_blocks.saturating_mul(vfs.f_frsize).saturating_mul(2).saturating_add(64 * MIB).min(1 << 60);
            let r = rustix::fs::fallocate(&fd, F::empty(), 0, len);
            err_any(&format!("fallocate f 0 {len} (twice the filesystem)"), r, &[Errno::NOSPC, Errno::FBIG])
        },
    },
    RustCase {
        name: "fallocate.fifo.ESPIPE",
        security: false,
        run: |_| {
            ok(
                "mkfifo p",
                rustix::fs::mknodat(rustix::fs::CWD, "p", rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o644), 0),
            )?;
            let fd = open("p", OFlags::RDWR | OFlags::NONBLOCK)?;
            err("fallocate on a fifo", rustix::fs::fallocate(&fd, F::empty(), 0, 4096), Errno::SPIPE)
        },
    },
    RustCase {
        name: "fallocate.char_device.ENODEV",
        security: false,
        run: |_| {
            // A nodev mount (FUSE's default) refuses to open devices at all.
            let vfs = ok("statvfs .", rustix::fs::statvfs("."))?;
            if vfs.f_flag.contains(rustix::fs::StatVfsMountFlags::NODEV) {
                return Err(unsupported("the filesystem is mounted nodev: devices cannot be opened"));
            }
            let dev = rustix::fs::makedev(1, 3);
            ok(
                "mknod c 1 3",
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    "c",
                    rustix::fs::FileType::CharacterDevice,
                    Mode::from_raw_mode(0o600),
                    dev,
                ),
            )?;
            let fd = open("c", OFlags::WRONLY)?;
            err("fallocate on /dev/null's device", rustix::fs::fallocate(&fd, F::empty(), 0, 4096), Errno::NODEV)
        },
    },
    RustCase {
        name: "fallocate.immutable.EPERM",
        security: true,
        run: |c| {
            let fd = flagged(c, IFlags::IMMUTABLE)?;
            err("fallocate f (immutable)", rustix::fs::fallocate(&fd, F::empty(), 0, MIB), Errno::PERM)
        },
    },
    // fallocate(2): an append-only file may grow, but not lose or move data.
    RustCase {
        name: "fallocate.append_only_punch.EPERM",
        security: true,
        run: |c| {
            let fd = flagged(c, IFlags::APPEND)?;
            err(
                "fallocate f PUNCH_HOLE|KEEP_SIZE (append-only)",
                rustix::fs::fallocate(&fd, F::PUNCH_HOLE | F::KEEP_SIZE, 0, 4096),
                Errno::PERM,
            )
        },
    },
    RustCase {
        name: "fallocate.append_only_grow.allocated",
        security: false,
        run: |c| {
            let fd = flagged(c, IFlags::APPEND)?;
            ok("fallocate f 64KiB 1MiB (append-only)", rustix::fs::fallocate(&fd, F::empty(), DATA as u64, MIB))
        },
    },
    // A directory cannot be opened for writing (open(2): EISDIR), and fallocate needs a
    // descriptor open for writing before it looks at the file type: EBADF.
    RustCase {
        name: "fallocate.directory.EBADF",
        security: false,
        run: |_| {
            super::mkdir("d", 0o755)?;
            let fd = open("d", OFlags::RDONLY | OFlags::DIRECTORY)?;
            err("fallocate on a directory fd", rustix::fs::fallocate(&fd, F::empty(), 0, 4096), Errno::BADF)
        },
    },
    RustCase {
        name: "fallocate.parent_dir.unchanged",
        security: false,
        run: |c| {
            super::mkdir("d", 0o755)?;
            touch("d/f", 0o644)?;
            let fd = open("d/f", OFlags::RDWR)?;
            let before = times("d")?;
            c.tick();
            ok("fallocate d/f 0 1MiB", rustix::fs::fallocate(&fd, F::empty(), 0, MIB))?;
            moved("parent d", before, times("d")?, Mark::Same, Mark::Same, Mark::Same)
        },
    },
];
