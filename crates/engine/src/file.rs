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

/// `O_DSYNC` as Linux defines it (0o10000): each write waits for its data and the metadata
/// needed to read it back, as fio's `sync=dsync`, dd's `oflag=dsync` and filebench's `dsync`
/// ask. Every dsync open takes its flags from here, not from rustix's own `DSYNC` flag:
/// rustix 1.1's linux_raw backend defines that as `O_SYNC` (0o4010000), which syncs all
/// metadata too.
pub const O_DSYNC: rustix::fs::OFlags = rustix::fs::OFlags::from_bits_retain(libc::O_DSYNC as u32);

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// dsync is O_DSYNC (0o10000) alone, not O_SYNC (0o4010000, what rustix's own `DSYNC` is
    /// on linux_raw), and no source of the workspace opens with that flag.
    #[test]
    fn dsync_is_o_dsync_and_nothing_opens_with_rustixs() {
        assert_eq!(O_DSYNC.bits(), 0o10000);
        assert_eq!(O_DSYNC.bits(), libc::O_DSYNC as u32);
        assert!(!O_DSYNC.contains(rustix::fs::OFlags::SYNC));
        let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let banned = ["OFlags::", "DSYNC"].concat();
        let mut stack = vec![crates.to_path_buf()];
        let mut seen = 0;
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    seen += 1;
                    let text = std::fs::read_to_string(&p).unwrap();
                    assert!(
                        !text.contains(&banned),
                        "{} opens with rustix's {banned} (O_SYNC): use O_DSYNC",
                        p.display()
                    );
                }
            }
        }
        assert!(seen > 100, "the workspace's sources were read ({seen} files)");
    }
}
