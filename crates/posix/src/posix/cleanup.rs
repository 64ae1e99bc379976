//! Removing a case's directory whatever the case left in it: immutable and append-only files,
//! directories without write or search permission, files of other owners (the runner is
//! root, so ownership does not stand in the way; the attributes and missing directory
//! permissions do for `rm -rf` done through the normal paths).

use fsarena_workload::served::{for_each_name, Budget};
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{AtFlags, FileType, IFlags, Mode, OFlags};
use std::path::Path;

/// Names a case directory holds at most: a case makes a handful; a target that serves an
/// endless tree makes the removal fail instead of never end.
const MOST_ENTRIES: u64 = 1 << 20;

/// Levels below a case directory: the deepest case (ELOOP, ENAMETOOLONG) goes a few dozen.
const MOST_DEPTH: u32 = 64;

/// Removes `dir` and everything under it.
pub fn remove(dir: &Path) -> std::io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let top = rustix::fs::open(dir, flags, Mode::empty())?;
    let mut budget = Budget::new(dir, MOST_ENTRIES, MOST_DEPTH);
    loosen(top.as_fd(), &mut budget, 0)?;
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(std::io::Error::other(format!("{}: not a case directory", dir.display())));
    };
    let parent = rustix::fs::open(parent, flags, Mode::empty())?;
    fsarena_workload::served::remove_tree(parent.as_fd(), name, &mut Budget::new(dir, MOST_ENTRIES, MOST_DEPTH), 0)
}

/// Clears the immutable and append-only attributes of the open file or directory `fd` and,
/// when it is a directory, gives it rwx for its owner and does the same under it, within
/// `budget`. Symlinks, fifos, sockets and device nodes are left alone (never opened: opening a
/// fifo or a device has effects); nothing is reached but through `fd`, with no link followed.
fn loosen(fd: BorrowedFd<'_>, budget: &mut Budget, level: u32) -> std::io::Result<()> {
    budget.descend(level)?;
    let st = rustix::fs::fstat(fd)?;
    if let Ok(flags) = rustix::fs::ioctl_getflags(fd) {
        let clear = IFlags::IMMUTABLE | IFlags::APPEND;
        if flags.intersects(clear) {
            rustix::fs::ioctl_setflags(fd, flags - clear)?;
        }
    }
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Ok(());
    }
    rustix::fs::fchmod(fd, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))?;
    let top = budget.top.clone();
    let mut failed = None;
    // The budget, spent name by name below, bounds the listing.
    for_each_name(fd, &top, u64::MAX, |name| {
        if let Err(e) = budget.take() {
            failed = Some(e);
            return false;
        }
        let kind =
            rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).map(|st| FileType::from_raw_mode(st.st_mode));
        if matches!(kind, Ok(FileType::Directory | FileType::RegularFile)) {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            if let Ok(sub) = rustix::fs::openat(fd, name, flags, Mode::empty()) {
                failed = loosen(sub.as_fd(), budget, level + 1).err();
            }
        }
        failed.is_none()
    })?;
    failed.map_or(Ok(()), Err)
}
