//! Removing a case's directory whatever the case left in it: immutable and append-only files,
//! directories without write or search permission, files of other owners (the runner is
//! root, so ownership does not stand in the way; the attributes and missing directory
//! permissions do for `rm -rf` done through the normal paths).

use rustix::fs::{FileType, IFlags, Mode, OFlags};
use std::path::Path;

/// Removes `dir` and everything under it.
pub fn remove(dir: &Path) -> std::io::Result<()> {
    loosen(dir, 0)?;
    std::fs::remove_dir_all(dir)
}

/// Clears the immutable and append-only attributes of `path` and, when it is a directory,
/// gives it rwx for its owner and does the same under it. Symlinks, fifos, sockets and device
/// nodes are left alone (never opened: opening a fifo or a device has effects).
fn loosen(path: &Path, depth: u32) -> std::io::Result<()> {
    if depth > 64 {
        return Ok(());
    }
    let st = rustix::fs::lstat(path)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::Directory && kind != FileType::RegularFile {
        return Ok(());
    }
    if let Ok(fd) =
        rustix::fs::open(path, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())
    {
        if let Ok(flags) = rustix::fs::ioctl_getflags(&fd) {
            let clear = IFlags::IMMUTABLE | IFlags::APPEND;
            if flags.intersects(clear) {
                rustix::fs::ioctl_setflags(&fd, flags - clear)?;
            }
        }
    }
    if kind == FileType::Directory {
        rustix::fs::chmod(path, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))?;
        for entry in std::fs::read_dir(path)? {
            loosen(&entry?.path(), depth + 1)?;
        }
    }
    Ok(())
}
