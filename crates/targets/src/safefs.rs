//! Filesystem primitives that never follow a symlink planted in fsarena's way and never adopt
//! an object someone else made: files are created with `O_CREAT|O_EXCL|O_NOFOLLOW`,
//! directories with `mkdir` (EEXIST is an error), and each comes back with its [`Identity`]
//! so that it is undone later only while it is still that object.

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, StatxFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What makes a file or directory the one fsarena created: its device and inode numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl Identity {
    fn of_stat(st: &rfs::Stat) -> Self {
        Self { dev: st.st_dev, ino: st.st_ino }
    }

    /// The identity of what `path` names itself (a symlink is not followed).
    pub fn of_path(path: &Path) -> io::Result<Self> {
        Ok(Self::of_stat(&rfs::lstat(path)?))
    }

    /// The identity of an open file.
    pub fn of_fd(fd: impl AsFd) -> io::Result<Self> {
        Ok(Self::of_stat(&rfs::fstat(fd)?))
    }
}

/// Creates the regular file `path`, which must not exist in any form (a planted symlink, even
/// a dangling one, makes this fail with EEXIST): `O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600.
pub fn create_new_file(path: &Path) -> io::Result<(File, Identity)> {
    let flags = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::RDWR | OFlags::CLOEXEC;
    let fd = rfs::open(path, flags, Mode::from_raw_mode(0o600))?;
    let id = Identity::of_fd(&fd)?;
    Ok((File::from(fd), id))
}

/// Opens `path` for fsarena's output (a report, a chart, an export, a log of operations: they
/// hold commands, environments and logs): a new file is created 0600 with
/// `O_CREAT|O_EXCL|O_NOFOLLOW`. With `replace`, a file already there is emptied and written
/// instead, but only a regular file with no other name (a symbolic link, a FIFO, a device or a
/// hard link to another file planted at the name is refused, untouched), and its mode is
/// narrowed to 0600. Opened `O_NONBLOCK` so that nothing at the name can block the open.
pub fn create_private(path: &Path, replace: bool) -> io::Result<File> {
    let base = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let private = Mode::from_raw_mode(0o600);
    let fd = match rfs::open(path, base | OFlags::CREATE | OFlags::EXCL, private) {
        Ok(fd) => fd,
        Err(Errno::EXIST) if replace => {
            let not_regular = |mode: u32| {
                let what = crate::beneath::kind_words(mode);
                io::Error::other(format!("{what}, not a regular file: not replaced"))
            };
            // Said before opening: a FIFO without a reader refuses a non-blocking open.
            let seen = rfs::lstat(path)?;
            if FileType::from_raw_mode(seen.st_mode) != FileType::RegularFile {
                return Err(not_regular(seen.st_mode));
            }
            // And checked on what was opened, which may have been swapped in since.
            let fd = rfs::open(path, base, Mode::empty()).map_err(|e| match e {
                Errno::LOOP => io::Error::other("a symbolic link, not a regular file: not replaced"),
                e => e.into(),
            })?;
            let st = rfs::fstat(&fd)?;
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                return Err(not_regular(st.st_mode));
            }
            if st.st_nlink > 1 {
                return Err(io::Error::other("a file with other names (hard links): not replaced"));
            }
            rfs::fchmod(&fd, Mode::from_raw_mode(st.st_mode & 0o600))?;
            rfs::ftruncate(&fd, 0)?;
            fd
        }
        Err(e) => return Err(e.into()),
    };
    // O_NONBLOCK was for the open; writes to a regular file block as usual.
    rfs::fcntl_setfl(&fd, rfs::fcntl_getfl(&fd)? - OFlags::NONBLOCK)?;
    Ok(File::from(fd))
}

/// Creates the directory `path` with `mode` (exactly: the umask does not narrow or the
/// caller's intent widen it). An existing directory is an error, never adopted.
pub fn create_new_dir(path: &Path, mode: u32) -> io::Result<Identity> {
    rfs::mkdir(path, Mode::from_raw_mode(mode))?;
    let fd = rfs::open(path, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    rfs::fchmod(&fd, Mode::from_raw_mode(mode))?;
    Identity::of_fd(&fd)
}

/// Removes the file `path` if it is still `expected`; Ok(false) when it is gone or is
/// another object now (which is left alone).
pub fn remove_file_if(path: &Path, expected: Identity) -> io::Result<bool> {
    match Identity::of_path(path) {
        Ok(id) if id == expected => {}
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What happened to a directory fsarena asked to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirRemoval {
    /// It is gone.
    Removed,
    /// It no longer exists, or another object has its name now: nothing was touched.
    NotOurs,
    /// It still holds entries (only when the removal was not recursive).
    NotEmpty,
}

fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} has no parent", path.display()))),
    }
}

fn open_dir_at(dir: impl AsFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    rfs::openat(dir, name, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
}

fn mount_id(fd: impl AsFd) -> io::Result<u64> {
    Ok(rfs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?.stx_mnt_id)
}

/// Removes the directory `path` if it is still `expected`: with everything in it when
/// `recursive`, else only if empty.
///
/// Hand-written instead of `std::fs::remove_dir_all` because that takes a path (so the object
/// removed could be swapped between the identity check and the removal) and crosses into
/// filesystems mounted inside the tree. This works beneath the directory's own file
/// descriptor, never follows a symlink (a symlink is removed, not its target), and refuses
/// to descend into another mount.
pub fn remove_dir_if(path: &Path, expected: Identity, recursive: bool) -> io::Result<DirRemoval> {
    let (parent, name) = split(path)?;
    let parent_fd = match rfs::open(parent, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(DirRemoval::NotOurs),
        Err(e) => return Err(e.into()),
    };
    let fd = match open_dir_at(&parent_fd, name) {
        Ok(fd) => fd,
        // Gone, or replaced by a symlink or a file: not the directory fsarena made.
        Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR) => return Ok(DirRemoval::NotOurs),
        Err(e) => return Err(e.into()),
    };
    if Identity::of_fd(&fd)? != expected {
        return Ok(DirRemoval::NotOurs);
    }
    if recursive {
        let mount = mount_id(&fd)?;
        remove_contents(&fd, mount, path)?;
    }
    // The name is checked once more right before the rmdir, which removes only an empty
    // directory anyway.
    match rfs::statat(&parent_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if Identity::of_stat(&st) == expected => {}
        Ok(_) | Err(Errno::NOENT) => return Ok(DirRemoval::NotOurs),
        Err(e) => return Err(e.into()),
    }
    match rfs::unlinkat(&parent_fd, name, AtFlags::REMOVEDIR) {
        Ok(()) => Ok(DirRemoval::Removed),
        Err(Errno::NOENT) => Ok(DirRemoval::NotOurs),
        Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(DirRemoval::NotEmpty),
        Err(e) => Err(e.into()),
    }
}

/// Removes everything inside the open directory `dir` (shown as `shown` in errors), staying
/// on the mount `mount`.
fn remove_contents(dir: &OwnedFd, mount: u64, shown: &Path) -> io::Result<()> {
    let mut names = Vec::new();
    for entry in rfs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push((OsStr::from_bytes(name).to_os_string(), entry.file_type()));
        }
    }
    for (name, file_type) in names {
        let file_type = match file_type {
            FileType::Unknown => match rfs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            },
            t => t,
        };
        if file_type == FileType::Directory {
            let sub = match open_dir_at(dir, &name) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            };
            let path = shown.join(&name);
            if mount_id(&sub)? != mount {
                return Err(io::Error::other(format!(
                    "{} is a mount point: not removing anything below it",
                    path.display()
                )));
            }
            remove_contents(&sub, mount, &path)?;
            drop(sub);
            match rfs::unlinkat(dir, &name, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io::Error::other(format!("cannot remove {}: {e}", path.display()))),
            }
        } else {
            match rfs::unlinkat(dir, &name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(io::Error::other(format!("cannot remove {}: {e}", shown.join(&name).display()))),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fsarena-h1-safefs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_planted_symlink_is_never_followed_when_creating() {
        let dir = scratch("create");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let planted = dir.join("image.img");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(create_new_file(&planted).is_err());
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
        assert!(create_new_file(&dir.join("dangling")).is_err());
        assert!(!dir.join("nowhere").exists(), "a dangling symlink's target was created");
        std::fs::create_dir(dir.join("existing")).unwrap();
        assert!(create_new_dir(&dir.join("existing"), 0o700).is_err(), "an existing directory is adopted");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn private_outputs_are_0600_and_replace_only_a_plain_regular_file() {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("private");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let new = dir.join("report.html");
        create_private(&new, false).unwrap().write_all(b"x").unwrap();
        assert_eq!(std::fs::metadata(&new).unwrap().permissions().mode() & 0o7777, 0o600);
        assert!(create_private(&new, false).is_err(), "an existing file without replace");
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o644)).unwrap();
        create_private(&new, true).unwrap().write_all(b"yz").unwrap();
        assert_eq!(std::fs::read(&new).unwrap(), b"yz");
        assert_eq!(std::fs::metadata(&new).unwrap().permissions().mode() & 0o7777, 0o600);
        let link = dir.join("link.html");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let hard = dir.join("hard.html");
        std::fs::hard_link(&victim, &hard).unwrap();
        let fifo = dir.join("fifo.html");
        rfs::mknodat(rfs::CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        for (p, why) in [(&link, "symbolic link"), (&hard, "hard links"), (&fifo, "a FIFO")] {
            let e = create_private(p, true).unwrap_err().to_string();
            assert!(e.contains(why), "{}: {e}", p.display());
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn new_directories_are_0700_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("mode");
        let id = create_new_dir(&dir.join("d"), 0o700).unwrap();
        let meta = std::fs::symlink_metadata(dir.join("d")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
        assert_eq!(Identity::of_path(&dir.join("d")).unwrap(), id);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn removal_checks_identity_and_never_follows_symlinks_out() {
        let dir = scratch("remove");
        let outside = dir.join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"keep").unwrap();
        let mine = dir.join("mine");
        let id = create_new_dir(&mine, 0o700).unwrap();
        std::fs::create_dir_all(mine.join("a/b")).unwrap();
        std::fs::write(mine.join("a/b/f"), b"x").unwrap();
        std::os::unix::fs::symlink(&outside, mine.join("a/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("keep"), mine.join("filelink")).unwrap();
        assert_eq!(remove_dir_if(&mine, id, false).unwrap(), DirRemoval::NotEmpty);
        assert_eq!(remove_dir_if(&mine, id, true).unwrap(), DirRemoval::Removed);
        assert!(!mine.exists());
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"keep");
        // Another directory under the same name: not ours, left alone. (Its identity is taken
        // from a directory that is still there: a freed inode number is reused at once.)
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("theirs"), b"t").unwrap();
        let other = Identity::of_path(&outside).unwrap();
        assert_eq!(remove_dir_if(&mine, other, true).unwrap(), DirRemoval::NotOurs);
        assert!(mine.join("theirs").exists());
        // A symlink in its place: not followed.
        std::fs::remove_dir_all(&mine).unwrap();
        std::os::unix::fs::symlink(&outside, &mine).unwrap();
        let outside_id = Identity::of_path(&outside).unwrap();
        assert_eq!(remove_dir_if(&mine, outside_id, true).unwrap(), DirRemoval::NotOurs);
        assert!(outside.join("keep").exists());
        // Files: only the same inode.
        let (_, fid) = create_new_file(&dir.join("f")).unwrap();
        // Moved away (so its inode number stays taken), another file under its name.
        std::fs::rename(dir.join("f"), dir.join("moved")).unwrap();
        std::fs::write(dir.join("f"), b"other").unwrap();
        assert!(!remove_file_if(&dir.join("f"), fid).unwrap());
        assert!(dir.join("f").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn recursive_removal_stops_at_a_mount_point_inside() {
        if !rustix::process::geteuid().is_root() {
            return; // mounting needs root; the integration tests run as root
        }
        let dir = scratch("mount");
        let mine = dir.join("mine");
        let id = create_new_dir(&mine, 0o700).unwrap();
        std::fs::create_dir(mine.join("m")).unwrap();
        let m = mine.join("m");
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "fsarena-h1-test", m.to_str().unwrap()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        std::fs::write(m.join("theirs"), b"t").unwrap();
        let result = remove_dir_if(&mine, id, true);
        let still = m.join("theirs").exists();
        let _ = std::process::Command::new("umount").arg(&m).status();
        assert!(result.is_err(), "{result:?}");
        assert!(still, "removal crossed into a mounted filesystem");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
