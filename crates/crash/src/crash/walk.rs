//! How the crash checker reads, writes and copies a recovered state: a tree that a FUSE
//! daemon serves (or a kernel filesystem mounted from a crash image), which may hold anything
//! — a symbolic link where a directory or a file was, a FIFO, a file claiming gigabytes, an
//! endless listing. fsarena runs as root, so none of it may lead it elsewhere or hold it:
//! every name is reached beneath the state's root descriptor with no symbolic link on the
//! way ([`HeldDir`]: openat2 `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`); a file is opened
//! `O_NOFOLLOW|O_NONBLOCK` and checked by `fstat` before a byte is read; a read is capped at
//! what the workload wrote there and one byte more; listings, walks and copies are capped.

use fsarena_target::beneath::{HeldDir, OpenHow};
use rustix::fs::{self as rfs, AtFlags, FileType, OFlags};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Names one walk of a state visits at most (the generated workloads make a dozen).
pub(crate) const MAX_NAMES: usize = 10_000;
/// Directory depth a walk goes to at most.
const MAX_DEPTH: usize = 64;
/// Bytes a kept copy of a state (`keep_failed=`) holds at most.
const MAX_COPY: u64 = 1 << 30;

fn too_many(what: &str) -> io::Error {
    io::Error::other(format!("{what}: more than {MAX_NAMES} names (or deeper than {MAX_DEPTH} directories)"))
}

/// The state's root, held.
pub(crate) fn open_root(root: &Path) -> io::Result<HeldDir> {
    HeldDir::open(root)
}

/// The directory `rel` beneath `root` (the root itself when `rel` is empty).
pub(crate) fn dir(root: &HeldDir, rel: &Path) -> io::Result<HeldDir> {
    if rel.as_os_str().is_empty() {
        root.try_clone()
    } else {
        root.dir(rel)
    }
}

/// The status of `rel` beneath `root` (the root's own when empty), no link followed.
pub(crate) fn stat(root: &HeldDir, rel: &Path) -> io::Result<rfs::Stat> {
    if rel.as_os_str().is_empty() {
        return rfs::fstat(root.fd()).map_err(io::Error::from);
    }
    root.stat(rel)
}

/// The type of a mode.
pub(crate) fn file_type(st: &rfs::Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode)
}

/// The names in directory `rel` with their types (links not followed), at most `cap` of
/// them: Err past that (the listing is `served::for_each_name`'s, capped as every read of what
/// a target serves is).
pub(crate) fn list(root: &HeldDir, rel: &Path, cap: usize) -> io::Result<Vec<(OsString, FileType)>> {
    let held = dir(root, rel)?;
    let fd = rfs::openat(held.fd(), ".", OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, rfs::Mode::empty())?;
    let mut out = Vec::new();
    fsarena_workload::served::for_each_name(fd.as_fd(), rel, cap as u64, |name| {
        let name = OsStr::from_bytes(name.to_bytes());
        let kind = rfs::statat(held.fd(), name, AtFlags::SYMLINK_NOFOLLOW).map_or(FileType::Unknown, |s| file_type(&s));
        out.push((name.to_os_string(), kind));
        true
    })?;
    Ok(out)
}

/// The bytes of the regular file `rel`, when it claims (fstat) no more than `expected`: at
/// most one byte more is read, whatever it serves. Else `Err(size)`, the size it claims,
/// and nothing read.
pub(crate) fn read_capped(root: &HeldDir, rel: &Path, expected: u64) -> io::Result<Result<Vec<u8>, u64>> {
    let file = root.open_file(rel, OpenHow::READ)?;
    let claimed = file.metadata()?.len();
    if claimed > expected {
        return Ok(Err(claimed));
    }
    let mut out = Vec::with_capacity(claimed as usize);
    file.take(expected + 1).read_to_end(&mut out)?;
    Ok(Ok(out))
}

/// Up to `len` bytes of `rel` from `at` on: fewer where the file ends first.
pub(crate) fn read_range(root: &HeldDir, rel: &Path, at: u64, len: u64) -> io::Result<Vec<u8>> {
    let file = root.open_file(rel, OpenHow::READ)?;
    let mut out = Vec::with_capacity(len as usize);
    let mut from = at;
    let mut buf = vec![0u8; len as usize];
    while (out.len() as u64) < len {
        let n = std::os::unix::fs::FileExt::read_at(&file, &mut buf[..(len as usize - out.len())], from)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
        from += n as u64;
    }
    Ok(out)
}

/// The target of link `rel` (at most 4 KiB of it).
pub(crate) fn read_link(root: &HeldDir, rel: &Path) -> io::Result<String> {
    Ok(root.read_link(rel, 4096)?.to_string_lossy().into_owned())
}

/// The user xattrs of `rel` itself: through the held parent's descriptor (`/proc/self/fd/N/
/// NAME`), read with calls that do not follow the last name.
pub(crate) fn xattrs(root: &HeldDir, rel: &Path) -> io::Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let parent = dir(root, rel.parent().unwrap_or(Path::new("")))?;
    let name = rel.file_name().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let path = PathBuf::from(format!("/proc/self/fd/{}", parent.fd().as_raw_fd())).join(name);
    let found = super::seq::xattrs(&path);
    drop(parent);
    found
}

/// Every directory beneath `root` (relative; the root first as ""), no link followed, at most
/// [`MAX_NAMES`] names seen.
pub(crate) fn directories(root: &HeldDir) -> io::Result<Vec<PathBuf>> {
    let mut dirs = vec![PathBuf::new()];
    let mut seen = 0;
    let mut i = 0;
    while let Some(d) = dirs.get(i).cloned() {
        i += 1;
        if d.components().count() > MAX_DEPTH {
            return Err(too_many("the tree"));
        }
        let names = list(root, &d, MAX_NAMES - seen)?;
        seen += names.len();
        dirs.extend(names.into_iter().filter(|(_, k)| *k == FileType::Directory).map(|(n, _)| d.join(n)));
    }
    Ok(dirs)
}

/// Writes `bytes` to the new file `name` in `dir` (it must not exist in any form), fsynced.
pub(crate) fn write_new(dir: &HeldDir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut f = dir.open_file(Path::new(name), OpenHow::NEW.with_mode(0o644))?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Removes `name` from `dir` and, if it is a directory, everything beneath it; no link is
/// followed (a link is removed as itself), the walk is capped: `served::remove_tree`, with the
/// crash checker's limits.
pub(crate) fn remove_tree(dir: &HeldDir, name: &OsStr) -> io::Result<()> {
    let mut budget = fsarena_workload::served::Budget::new(Path::new(name), MAX_NAMES as u64, MAX_DEPTH as u32);
    fsarena_workload::served::remove_tree(dir.fd(), name, &mut budget, 0)
}

/// Copies the state `src` into the new directory `dest` (0700): directories, regular files
/// and symbolic links (as links); FIFOs, devices and sockets are left out. At most
/// [`MAX_NAMES`] names and 1 GiB: a state the daemon grew past that is not kept.
pub(crate) fn copy_tree(src: &Path, dest: &Path) -> io::Result<()> {
    let from = open_root(src)?;
    let parent = dest.parent().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let name = dest.file_name().and_then(OsStr::to_str).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let to = HeldDir::open(parent)?.create_dir(name, 0o700, None)?;
    let mut bytes = 0u64;
    let mut names = 0usize;
    for rel in directories(&from)? {
        let target = dir(&to, &rel)?;
        for (name, kind) in list(&from, &rel, MAX_NAMES)? {
            names += 1;
            if names > MAX_NAMES {
                return Err(too_many("the state"));
            }
            let path = rel.join(&name);
            match kind {
                FileType::Directory => {
                    let n = name.to_str().ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
                    let mode = stat(&from, &path)?.st_mode & 0o777;
                    target.create_dir(n, mode | 0o700, None)?;
                }
                FileType::Symlink => {
                    let link = from.read_link(&path, 4096)?;
                    rfs::symlinkat(link.as_os_str(), target.fd(), name.as_os_str())?;
                }
                FileType::RegularFile => {
                    let src = from.open_file(&path, OpenHow::READ)?;
                    let mode = src.metadata().map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))?;
                    let mut out = target.open_file(Path::new(&name), OpenHow::NEW.with_mode(mode & 0o777))?;
                    let copied = io::copy(&mut src.take(MAX_COPY - bytes + 1), &mut out)?;
                    bytes += copied;
                    if bytes > MAX_COPY {
                        return Err(io::Error::other("the state holds more than 1 GiB: not kept"));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A fresh scratch directory of this test process.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsarena-crash-walk-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        d
    }

    #[test]
    fn nothing_is_read_written_or_removed_through_a_link_or_a_fifo() {
        let outside = scratch("outside");
        let victim = outside.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let s = &scratch("state");
        std::fs::create_dir(s.join("A")).unwrap();
        std::fs::write(s.join("A/foo"), b"0123456789").unwrap();
        std::os::unix::fs::symlink(&outside, s.join("lost+found")).unwrap();
        std::os::unix::fs::symlink(&victim, s.join(".fsarena-sanity")).unwrap();
        let fifo = std::ffi::CString::new(s.join("A/fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let root = open_root(s).unwrap();
        // Reads: capped at one byte more than expected, the size claimed named; a FIFO and a
        // link are refused without blocking or following.
        assert_eq!(read_capped(&root, Path::new("A/foo"), 10).unwrap(), Ok(b"0123456789".to_vec()));
        assert_eq!(read_capped(&root, Path::new("A/foo"), 4).unwrap(), Err(10));
        assert!(read_capped(&root, Path::new("A/fifo"), 4).is_err());
        assert!(read_capped(&root, Path::new("lost+found/victim"), 4).is_err());
        assert!(list(&root, Path::new("lost+found"), 10).is_err());
        // Writes: a name that exists in any form is an error.
        assert!(write_new(&root, ".fsarena-sanity", b"x").is_err());
        // The walk sees A only; the copy keeps the link as a link and leaves the FIFO out.
        assert_eq!(directories(&root).unwrap(), vec![PathBuf::new(), PathBuf::from("A")]);
        let kept = scratch("kept");
        copy_tree(s, &kept.join("k")).unwrap();
        assert!(std::fs::symlink_metadata(kept.join("k/lost+found")).unwrap().file_type().is_symlink());
        assert!(std::fs::symlink_metadata(kept.join("k/A/fifo")).is_err());
        assert_eq!(std::fs::read(kept.join("k/A/foo")).unwrap(), b"0123456789");
        // Removal removes links as links.
        for name in [".fsarena-sanity", "lost+found", "A"] {
            remove_tree(&root, OsStr::new(name)).unwrap();
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(s).unwrap().count(), 0);
        for d in [&outside, s, &kept] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }
}
