//! Reading back what a target serves. A target's files are the tenant's to serve: a FUSE daemon
//! (any `fuse:cmd=`) answers every lookup, read and readdir, so a file fsarena wrote may come
//! back as a symbolic link to a file of the host, a FIFO that blocks an open for ever, a device,
//! a file of 2^40 bytes, or a directory of a million names that never ends. Every workload
//! reaches its files through here, by class:
//!
//! - opens ([`Below::open`]) resolve beneath the workload's directory with no symbolic link on
//!   the way or at the end (openat2 `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`), `O_NONBLOCK` (a FIFO
//!   cannot block; reads and writes of a regular file ignore it), and a file read back outside
//!   a timed loop is checked to be a regular file ([`Below::open_regular`]);
//! - whole-file reads are capped at what the workload wrote there ([`read_capped`]);
//! - directory listings are capped at the entries the workload made ([`for_each_name`]), and
//!   walks of a tree in depth and entries ([`Budget`]).

use fsarena_target::beneath::{kind_words, HeldDir};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A workload's directory on a target, held open: everything below it is reached through it.
#[derive(Debug)]
pub struct Below {
    held: HeldDir,
}

impl Below {
    /// Holds the directory `root` (fsarena's own mount point or scratch directory; a link as
    /// its last component is refused).
    pub fn hold(root: &Path) -> io::Result<Self> {
        Ok(Self { held: HeldDir::open(root)? })
    }

    /// Its descriptor, for `*at` calls.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.held.fd()
    }

    /// The path it was opened by (for messages).
    pub fn path(&self) -> &Path {
        self.held.path()
    }

    /// `path` relative to this directory: a relative path as it is, an absolute one below it
    /// with its prefix taken off; anything else is refused.
    fn rel<'p>(&self, path: &'p Path) -> io::Result<&'p Path> {
        if path.is_relative() {
            return Ok(path);
        }
        path.strip_prefix(self.held.path()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not below {}", path.display(), self.held.path().display()),
            )
        })
    }

    /// Opens `path` (below this directory) with `flags` and `mode` as [`HeldDir::open_at`]
    /// does: no link followed anywhere, never above this directory, `O_NONBLOCK` left set. The
    /// directory itself for an empty relative path.
    pub fn open(&self, path: &Path, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
        let rel = self.rel(path)?;
        if rel.as_os_str().is_empty() {
            let fd = rustix::fs::openat(self.held.fd(), c".", flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, 0.into())?;
            return Ok(fd);
        }
        self.held.open_at(rel, flags, mode)
    }

    /// Opens the existing file `path` (below this directory) with `flags` (read only unless
    /// they say otherwise), as [`Below::open`] does, and checks it is a regular file: a FIFO,
    /// a device, a socket or a directory in its place is an error naming what it is. The file
    /// then blocks as usual.
    pub fn open_regular(&self, path: &Path, flags: OFlags) -> io::Result<File> {
        let fd = self.open(path, flags, 0)?;
        regular(&fd, &self.held.path().join(self.rel(path)?))?;
        rustix::fs::fcntl_setfl(&fd, rustix::fs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
        Ok(File::from(fd))
    }
}

/// The directory that holds a name, for `*at` calls: the held directory itself, or one opened
/// beneath it.
#[derive(Debug)]
pub enum Parent<'a> {
    /// The held directory.
    Top(BorrowedFd<'a>),
    /// A directory below it.
    Below(OwnedFd),
}

impl AsFd for Parent<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Parent::Top(fd) => *fd,
            Parent::Below(fd) => fd.as_fd(),
        }
    }
}

impl Below {
    /// The directory holding `path` (below this directory, reached with no link followed)
    /// and `path`'s last name, for the `*at` calls that act on a name (mkdirat, unlinkat,
    /// renameat, statat): whatever the target serves at the components above, the name acted
    /// on is below this directory. A name directly below costs no open.
    pub fn parent<'p>(&self, path: &'p Path) -> io::Result<(Parent<'_>, &'p OsStr)> {
        let rel = self.rel(path)?;
        let name = rel
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} names no file", path.display())))?;
        match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            None => Ok((Parent::Top(self.held.fd()), name)),
            Some(dir) => {
                let fd = self.held.open_at(dir, OFlags::PATH | OFlags::DIRECTORY, 0)?;
                Ok((Parent::Below(fd), name))
            }
        }
    }
}

/// Removes `name` in `dir` and, when it is a directory, everything below it, spending one
/// entry of `budget` per name: no link is followed (a link is removed as a link), nothing
/// outside `dir` is reached, and a tree deeper or larger than the budget (a daemon's endless
/// one) ends with an error. A name already gone is not an error.
pub fn remove_tree(dir: BorrowedFd<'_>, name: &OsStr, budget: &mut Budget, level: u32) -> io::Result<()> {
    budget.take()?;
    let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return ignore_gone(rustix::fs::unlinkat(dir, name, AtFlags::empty()));
    }
    budget.descend(level + 1)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let sub = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    let top = budget.top.clone();
    let mut pause = HIDDEN_FIRST_PAUSE;
    let mut waited = Duration::ZERO;
    loop {
        // Removed while listed, as std's remove_dir_all does (Linux lists each name once).
        let mut failed = None;
        // The budget, spent name by name below, bounds the listing.
        for_each_name(sub.as_fd(), &top, u64::MAX, |child| {
            failed = remove_tree(sub.as_fd(), OsStr::from_bytes(child.to_bytes()), budget, level + 1).err();
            failed.is_none()
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            // A FUSE daemon built on libfuse's high-level API (fuse2fs among them) renames a
            // file unlinked while open to `.fuse_hidden…` in the same directory and deletes it
            // only when the file is released; the kernel sends that release after close()
            // returns, so a file a workload's thread closed just before is still "open" to
            // the daemon. The directory then is not empty for a moment: listed again, and
            // again, until those releases arrive (a daemon that never releases ends the wait).
            Err(rustix::io::Errno::NOTEMPTY) if waited < HIDDEN_WAIT => {
                std::thread::sleep(pause);
                waited += pause;
                pause = (pause * 2).min(HIDDEN_WAIT / 8);
            }
            r => return ignore_gone(r),
        }
    }
}

/// The first pause before a directory that was not empty at its removal is listed again.
const HIDDEN_FIRST_PAUSE: Duration = Duration::from_millis(5);
/// How long a directory may stay not empty (files released late by a FUSE daemon) before its
/// removal gives up.
const HIDDEN_WAIT: Duration = Duration::from_secs(2);

fn ignore_gone(r: rustix::io::Result<()>) -> io::Result<()> {
    match r {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Refuses anything but a regular file, naming `shown` and what it is.
pub fn regular(fd: &impl AsFd, shown: &Path) -> io::Result<()> {
    let st = rustix::fs::fstat(fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::other(format!(
            "{} is {}, not the regular file fsarena wrote there",
            shown.display(),
            kind_words(st.st_mode)
        )));
    }
    Ok(())
}

/// All of `file` when it holds at most `cap` bytes (what fsarena wrote there, and a margin);
/// a file that yields more is an error naming `shown` and the limit, and no more than
/// `cap + 1` bytes of it are read, whatever size it claims.
pub fn read_capped(file: impl Read, cap: u64, shown: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::other(format!(
            "{} holds more than the {} fsarena wrote there: not read further",
            shown.display(),
            fsarena_core::units::limit_text(cap)
        )));
    }
    Ok(bytes)
}

/// Calls `each` with every name in the open directory `dir` (`.` and `..` left out) until it
/// answers false, at most `cap` names: a directory that lists more (a daemon may list a
/// million names, or never end) is an error naming `shown` and the limit. The names seen.
pub fn for_each_name(
    dir: BorrowedFd<'_>,
    shown: &Path,
    cap: u64,
    mut each: impl FnMut(&CStr) -> bool,
) -> io::Result<u64> {
    let mut seen = 0u64;
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        seen += 1;
        if seen > cap {
            return Err(too_many(shown, cap));
        }
        if !each(name) {
            break;
        }
    }
    Ok(seen)
}

fn too_many(shown: &Path, cap: u64) -> io::Error {
    io::Error::other(format!(
        "{} lists more than the {cap} entries fsarena made there: not read further",
        shown.display()
    ))
}

/// What a walk of a tree on a target may visit: a tree fsarena made is at most this deep and
/// holds at most this many entries; a daemon serving an endless tree ends the walk with an
/// error instead.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Entries left.
    pub entries: u64,
    /// Levels below the top.
    pub depth: u32,
    /// Where the walk began, for messages.
    pub top: PathBuf,
    cap: u64,
}

impl Budget {
    /// At most `entries` entries, `depth` levels deep, below `top`.
    pub fn new(top: &Path, entries: u64, depth: u32) -> Self {
        Self { entries, depth, top: top.to_path_buf(), cap: entries }
    }

    /// Takes one entry; an error once they are spent.
    pub fn take(&mut self) -> io::Result<()> {
        match self.entries.checked_sub(1) {
            Some(left) => {
                self.entries = left;
                Ok(())
            }
            None => Err(too_many(&self.top, self.cap)),
        }
    }

    /// An error when `level` is deeper than the tree fsarena made.
    pub fn descend(&self, level: u32) -> io::Result<()> {
        if level > self.depth {
            return Err(io::Error::other(format!(
                "{} is deeper than the {} levels fsarena made there: not walked further",
                self.top.display(),
                self.depth
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsarena-served-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    #[test]
    fn links_fifos_and_paths_out_are_refused_and_files_read() {
        let d = scratch("open");
        std::fs::write(d.join("sub/f"), b"data").unwrap();
        std::fs::write(d.join("outside"), b"host").unwrap();
        symlink(d.join("outside"), d.join("sub/link")).unwrap();
        symlink(d.join("sub"), d.join("dirlink")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, d.join("sub/fifo"), FileType::Fifo, 0o600.into(), 0).unwrap();
        let below = Below::hold(&d).unwrap();
        let f = below.open_regular(&d.join("sub/f"), OFlags::RDONLY).unwrap();
        assert_eq!(read_capped(f, 4, Path::new("f")).unwrap(), b"data");
        let e = below.open_regular(Path::new("sub/link"), OFlags::RDONLY).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = below.open_regular(Path::new("dirlink/f"), OFlags::RDONLY).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        // The FIFO's open does not block; it is refused by type.
        let e = below.open_regular(Path::new("sub/fifo"), OFlags::RDONLY).unwrap_err().to_string();
        assert!(e.contains("is a FIFO, not the regular file"), "{e}");
        assert!(below.open(Path::new("/etc/passwd"), OFlags::RDONLY, 0).is_err());
        assert!(below.open(Path::new("../outside"), OFlags::RDONLY, 0).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// fuse2fs (libfuse's high-level API) hides a file unlinked while open as `.fuse_hidden…`
    /// until its release, which the kernel sends after close() returns: a tree removed just
    /// after its last file was closed is emptied once that release arrives, not refused as
    /// "not empty" (CI: filebench's next repetition found its fileset still there).
    #[test]
    fn a_tree_on_fuse2fs_whose_file_is_released_late_is_removed() {
        struct Mounted(PathBuf);
        impl Drop for Mounted {
            fn drop(&mut self) {
                // A failed assertion may leave the file open for a moment in the closer thread.
                for _ in 0..50 {
                    if std::process::Command::new("umount").arg(&self.0).status().is_ok_and(|s| s.success()) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        let d = scratch("hidden");
        let image = d.join("image");
        std::fs::File::create(&image).unwrap().set_len(32 << 20).unwrap();
        let ok = |c: &mut std::process::Command| c.status().is_ok_and(|s| s.success());
        assert!(
            ok(std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image)),
            "mkfs.ext4 (e2fsprogs) is needed"
        );
        let mnt = d.join("sub");
        assert!(
            ok(std::process::Command::new("fuse2fs").arg(&image).arg(&mnt).args(["-o", "fakeroot"])),
            "fuse2fs (fuse2fs package) and /dev/fuse are needed"
        );
        let mounted = Mounted(mnt.clone());
        std::fs::create_dir_all(mnt.join("tree/deeper")).unwrap();
        std::fs::write(mnt.join("tree/deeper/f"), b"data").unwrap();
        let open = std::fs::File::open(mnt.join("tree/deeper/f")).unwrap();
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(open);
        });
        let below = Below::hold(&mnt).unwrap();
        let mut budget = Budget::new(&mnt.join("tree"), 1000, 8);
        remove_tree(below.fd(), OsStr::new("tree"), &mut budget, 0).unwrap();
        closer.join().unwrap();
        assert!(!mnt.join("tree").exists());
        drop(below);
        drop(mounted);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn reads_and_listings_stop_at_their_caps() {
        let e = read_capped(std::io::repeat(0), 1 << 20, Path::new("/t/huge")).unwrap_err().to_string();
        assert!(e.contains("/t/huge holds more than the 1 MiB"), "{e}");
        let d = scratch("list");
        for i in 0..10 {
            std::fs::write(d.join(format!("n{i}")), b"").unwrap();
        }
        let dir = rustix::fs::open(&d, OFlags::RDONLY | OFlags::DIRECTORY, 0.into()).unwrap();
        let mut names = 0;
        let count = for_each_name(dir.as_fd(), &d, 11, |_| {
            names += 1;
            true
        });
        assert_eq!(count.unwrap(), 11);
        assert_eq!(names, 11);
        let dir = rustix::fs::open(&d, OFlags::RDONLY | OFlags::DIRECTORY, 0.into()).unwrap();
        let e = for_each_name(dir.as_fd(), &d, 5, |_| true).unwrap_err().to_string();
        assert!(e.contains("lists more than the 5 entries"), "{e}");
        // A tree removed without following the link in it; the link's target stays.
        std::fs::create_dir_all(d.join("t/a/b")).unwrap();
        std::fs::write(d.join("t/a/b/f"), b"x").unwrap();
        std::fs::write(d.join("keep"), b"k").unwrap();
        symlink(&d, d.join("t/a/up")).unwrap();
        let top = rustix::fs::open(&d, OFlags::RDONLY | OFlags::DIRECTORY, 0.into()).unwrap();
        let e = remove_tree(top.as_fd(), OsStr::new("t"), &mut Budget::new(&d, 100, 1), 0).unwrap_err();
        assert!(e.to_string().contains("deeper than the 1 levels"), "{e}");
        let e = remove_tree(top.as_fd(), OsStr::new("t"), &mut Budget::new(&d, 3, 10), 0).unwrap_err();
        assert!(e.to_string().contains("more than the 3 entries"), "{e}");
        remove_tree(top.as_fd(), OsStr::new("t"), &mut Budget::new(&d, 100, 10), 0).unwrap();
        assert!(!d.join("t").exists() && d.join("keep").exists() && d.join("n0").exists());
        let mut b = Budget::new(&d, 2, 3);
        assert!(b.take().is_ok() && b.take().is_ok() && b.take().is_err());
        assert!(b.descend(3).is_ok() && b.descend(4).is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
