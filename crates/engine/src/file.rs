//! Opening test files with the flags a job asks for, and what the filesystem says of them.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// How to open a test file.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OpenFlags {
    /// Open for reading.
    pub read: bool,
    /// Open for writing.
    pub write: bool,
    /// Create if missing.
    pub create: bool,
    /// O_DIRECT (`direct=1`).
    pub direct: bool,
    /// O_SYNC (`sync=1` / `sync=sync`).
    pub sync: bool,
    /// O_DSYNC (`sync=dsync`).
    pub dsync: bool,
}

/// Opens `path` with `flags`.
pub fn open_file(path: &Path, flags: OpenFlags) -> io::Result<File> {
    let mut custom = 0;
    if flags.direct {
        custom |= libc::O_DIRECT;
    }
    if flags.sync {
        custom |= libc::O_SYNC;
    }
    if flags.dsync {
        custom |= libc::O_DSYNC;
    }
    std::fs::OpenOptions::new()
        .read(flags.read || !flags.write)
        .write(flags.write)
        .create(flags.create && flags.write)
        .truncate(false)
        .custom_flags(custom)
        .mode(0o644)
        .open(path)
}

/// O_DIRECT alignment of `path` as statx reports it: (memory, offset) in bytes. Falls back to
/// the logical block size guess of 512/512 when the kernel or filesystem does not say
/// (STATX_DIOALIGN is Linux 6.1+); returns `None` when the file does not support O_DIRECT.
pub fn dio_alignment(path: &Path) -> io::Result<Option<(u32, u32)>> {
    use rustix::fs::{statx, AtFlags, StatxFlags, CWD};
    let st = statx(CWD, path, AtFlags::empty(), StatxFlags::DIOALIGN)?;
    if st.stx_mask & StatxFlags::DIOALIGN.bits() == 0 {
        return Ok(Some((512, 512)));
    }
    if st.stx_dio_mem_align == 0 || st.stx_dio_offset_align == 0 {
        return Ok(None);
    }
    Ok(Some((st.stx_dio_mem_align, st.stx_dio_offset_align)))
}

/// The name of the filesystem holding `path` (`ext4`, `tmpfs`, `fuse`, ...), from statfs's
/// magic number, for error messages; the hex magic when unknown.
pub fn filesystem_name(path: &Path) -> String {
    let Ok(st) = rustix::fs::statfs(path) else { return "unknown".into() };
    // Values from linux/magic.h.
    #[allow(clippy::unreadable_literal)]
    let name = match st.f_type as u64 {
        0xEF53 => "ext2/3/4",
        0x58465342 => "xfs",
        0x9123683E => "btrfs",
        0x01021994 => "tmpfs",
        0x65735546 => "fuse",
        0xF2F52010 => "f2fs",
        0x3434 => "nilfs2",
        0x6969 => "nfs",
        0x794C7630 => "overlayfs",
        0xFF534D42 => "cifs",
        0x858458F6 => "ramfs",
        other => return format!("filesystem 0x{other:x}"),
    };
    name.to_string()
}
