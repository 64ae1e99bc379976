//! Opening, creating and removing the job files without following anything planted.
//!
//! Every file is opened relative to the target's root directory descriptor with
//! `O_NOFOLLOW`, so a symlink planted at `io.0.0` cannot redirect a write outside the target;
//! a file that exists must be a regular file (a FIFO would block the open for ever, a device
//! would be written to). A file is created with `O_EXCL` and recorded with its device and
//! inode; at the end only the recorded files are removed, and only while they are still the
//! same inode, so a file fsarena did not create is never deleted.

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Files fsarena created, by path, with their (device, inode); shared by the clones of one
/// workload so that a later repetition removes what an earlier one created.
#[derive(Debug, Clone, Default)]
pub struct CreatedFiles(Arc<Mutex<HashMap<PathBuf, (u64, u64)>>>);

impl CreatedFiles {
    /// Records a file this workload created.
    pub fn record(&self, path: &Path, file: &File) {
        if let Ok(st) = rustix::fs::fstat(file) {
            if let Ok(mut map) = self.0.lock() {
                map.insert(path.to_path_buf(), (st.st_dev, st.st_ino));
            }
        }
    }

    /// Removes every recorded file that is still the inode fsarena created, and forgets them.
    /// `dirs` are the client roots (paths and descriptors, in the same order): a file is
    /// checked and removed through the root it was created under, since each client's mount
    /// has its own device number; a file under none of them is left alone.
    pub fn remove_all(&self, paths: &[&Path], dirs: &[BorrowedFd<'_>]) {
        let Ok(mut map) = self.0.lock() else { return };
        for (path, (dev, ino)) in map.drain() {
            let Some(name) = path.file_name() else { continue };
            let Some(&dir) = paths.iter().position(|p| path.parent() == Some(*p)).and_then(|k| dirs.get(k)) else {
                continue;
            };
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if st.st_dev == dev && st.st_ino == ino => {
                    let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
                }
                _ => {}
            }
        }
    }

    /// True when nothing is recorded.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.lock().map_or(true, |m| m.is_empty())
    }
}

/// The target root, for `*at` calls.
pub fn open_root(root: &Path) -> Result<OwnedFd, String> {
    rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| format!("cannot open {}: {}", root.display(), std::io::Error::from(e)))
}

/// The last component of `path`: every job file is a direct child of the root.
fn name(path: &Path) -> std::io::Result<&std::ffi::OsStr> {
    path.file_name().ok_or_else(|| std::io::Error::other(format!("{} is not a file name", path.display())))
}

/// Opens the existing regular file `path` in `dir` with `flags` (access mode, O_DIRECT,
/// O_SYNC ...), never following a symlink and never blocking on a FIFO.
pub fn open_existing(dir: BorrowedFd<'_>, path: &Path, flags: OFlags) -> std::io::Result<File> {
    let fd = rustix::fs::openat(
        dir,
        name(path)?,
        flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP => std::io::Error::other("it is a symbolic link; fsarena does not follow links inside the target"),
        e => e.into(),
    })?;
    regular(&fd)?;
    // O_NONBLOCK was only for the open; I/O on the file blocks as usual.
    rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    Ok(File::from(fd))
}

/// Creates `path` in `dir` exclusively (read-write, mode 0644); None when it exists already.
pub fn create_new(dir: BorrowedFd<'_>, path: &Path) -> std::io::Result<Option<File>> {
    let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name(path)?, flags, Mode::from_raw_mode(0o644)) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(Errno::EXIST) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Refuses anything but a regular file.
fn regular(fd: &impl AsFd) -> std::io::Result<()> {
    let st = rustix::fs::fstat(fd)?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(()),
        other => Err(std::io::Error::other(format!(
            "it exists and is not a regular file (a {}); fsarena uses only regular files",
            format!("{other:?}").to_lowercase()
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn links_and_fifos_are_refused_and_only_created_files_removed() {
        let dir = std::env::temp_dir().join(format!("fsarena-h2-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("io.0.0")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, dir.join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let root = open_root(&dir).unwrap();
        let e = open_existing(root.as_fd(), &dir.join("io.0.0"), OFlags::RDWR).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(create_new(root.as_fd(), &dir.join("io.0.0")).unwrap().is_none());
        let e = open_existing(root.as_fd(), &dir.join("fifo"), OFlags::RDONLY).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // Created and recorded: removed. Existing, or replaced after creation: kept.
        let created = CreatedFiles::default();
        let mine = dir.join("mine");
        created.record(&mine, &create_new(root.as_fd(), &mine).unwrap().unwrap());
        let swapped = dir.join("swapped");
        created.record(&swapped, &create_new(root.as_fd(), &swapped).unwrap().unwrap());
        // Replaced by another inode (both exist at once, so the numbers differ).
        std::fs::write(dir.join("other"), b"someone else's").unwrap();
        std::fs::rename(dir.join("other"), &swapped).unwrap();
        created.remove_all(&[dir.as_path()], &[root.as_fd()]);
        assert!(!mine.exists() && swapped.exists() && created.is_empty());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
