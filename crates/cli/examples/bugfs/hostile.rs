//! bugfs's hostile modes, for fsarena's hostile tests (tests/hostile/daemons.rs): a FUSE
//! daemon that tries to turn fsarena against its host. Off unless asked for.
//!
//! - `--plant=PATH` (repeatable): before serving, a symbolic link `planted-N` to PATH is made
//!   in BACKING — fsarena's logging passthrough when `crash` records the daemon at file level —
//!   and acted on in every way that does not follow it: times, mode, owner, an xattr, a write
//!   open and a truncate through an `O_PATH` descriptor; a FIFO `planted-fifo` is tried too.
//!   Whatever follows the link from there is the passthrough's doing, not the daemon's.
//! - `--lure=PATH`: `.fsarena-sanity` (the name the crash checker's sanity pass writes) is, in
//!   the root, a symbolic link to PATH and, in every other directory, a FIFO; not listed.
//! - `--claim=BYTES`: every regular file claims at least BYTES bytes, read as zeros past what
//!   it holds.
//! - `--fifo-files`: a regular file, once closed, is served as a FIFO (an open of it by name
//!   without `O_NONBLOCK` blocks, a read of an `O_RDWR` one waits for ever).
//! - `--link-dirs=PATH`: every directory below the root, once made, is served as a symbolic
//!   link to PATH (a path resolved through it lands outside the mount); with
//!   `--link-depth=N`, only those more than N levels below the root (a workload's own top
//!   directories stay real, its deeper ones lead out).
//! - `--short-reads`: every read of a file returns no data (end of file) whatever size the
//!   file claims: the kernel then shrinks the file under a mapping of it, and a thread that
//!   touches a page of it past the new end gets SIGBUS.

use fuser::{FileAttr, FileType};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The lure's link, in the root.
const LURE_LINK: u64 = u64::MAX - 1;
/// The lure's FIFO, in every other directory.
const LURE_FIFO: u64 = u64::MAX - 2;
/// The name the lure answers to.
const LURE_NAME: &str = ".fsarena-sanity";

/// The hostile modes switched on.
#[derive(Debug, Default, Clone)]
pub struct Hostile {
    /// `--lure=`: where the link leads.
    pub lure: Option<PathBuf>,
    /// `--claim=`: the size every regular file claims at least.
    pub claim: Option<u64>,
    /// `--fifo-files`: closed files are served as FIFOs.
    pub fifo_files: bool,
    /// `--link-dirs=`: where every directory below the root leads.
    pub link_dirs: Option<PathBuf>,
    /// `--short-reads`: reads return no data.
    pub short_reads: bool,
    /// `--link-depth=`: directories this many levels below the root or fewer stay directories.
    pub link_depth: u32,
}

fn attr(ino: u64, kind: FileType, size: u64, perm: u16) -> FileAttr {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1);
    FileAttr {
        ino,
        size,
        blocks: 0,
        atime: t,
        mtime: t,
        ctime: t,
        crtime: t,
        kind,
        perm,
        nlink: 1,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl Hostile {
    /// The lure answering a lookup of `name` in `parent`, if it is the lure's name.
    pub fn lookup(&self, parent: u64, name: &OsStr) -> Option<FileAttr> {
        let target = self.lure.as_ref()?;
        if name != LURE_NAME {
            return None;
        }
        Some(if parent == fuser::FUSE_ROOT_ID {
            attr(LURE_LINK, FileType::Symlink, target.as_os_str().len() as u64, 0o777)
        } else {
            attr(LURE_FIFO, FileType::NamedPipe, 0, 0o666)
        })
    }

    /// The lure's attributes, when `ino` is one of its inodes.
    pub fn attr(&self, ino: u64) -> Option<FileAttr> {
        match ino {
            LURE_LINK => self.lookup(fuser::FUSE_ROOT_ID, OsStr::new(LURE_NAME)),
            LURE_FIFO => self.lookup(0, OsStr::new(LURE_NAME)),
            _ => None,
        }
    }

    /// Where the lure's link leads.
    pub fn readlink(&self, ino: u64) -> Option<&[u8]> {
        (ino == LURE_LINK).then(|| self.lure.as_ref().map(|p| p.as_os_str().as_bytes())).flatten()
    }

    /// The type served for a node: a directory below the root is a link with `--link-dirs`,
    /// a file closed and not open is a FIFO with `--fifo-files`.
    pub fn kind(&self, depth: u32, dir: bool, idle: bool) -> FileType {
        match dir {
            true if self.links_at(depth) => FileType::Symlink,
            true => FileType::Directory,
            false if self.fifo_files && idle => FileType::NamedPipe,
            false => FileType::RegularFile,
        }
    }

    /// True when a directory `depth` levels below the root is served as a link.
    pub fn links_at(&self, depth: u32) -> bool {
        self.link_dirs.is_some() && depth > self.link_depth
    }

    /// Where a directory `depth` levels below the root, served as a link, leads (`--link-dirs`).
    pub fn dir_link(&self, depth: u32) -> Option<&[u8]> {
        self.link_dirs.as_ref().filter(|_| self.links_at(depth)).map(|p| p.as_os_str().as_bytes())
    }

    /// The size a regular file of `size` bytes claims.
    pub fn claimed(&self, size: u64) -> u64 {
        self.claim.map_or(size, |c| c.max(size))
    }

    /// `data`, read at `offset` of a file holding `size` bytes, padded with zeros to what the
    /// claim says lies there (`len` asked for).
    pub fn pad(&self, mut data: Vec<u8>, offset: u64, len: u64, size: u64) -> Vec<u8> {
        let end = (offset + len).min(self.claimed(size));
        if end > offset + data.len() as u64 {
            data.resize((end - offset) as usize, 0);
        }
        data
    }
}

fn c(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// What a call returned, for the daemon's log.
fn said(rc: libc::c_long) -> String {
    if rc < 0 {
        std::io::Error::last_os_error().to_string()
    } else {
        "done".to_string()
    }
}

/// `--plant=`: links to each of `targets` made in `backing` and acted on without following
/// them, then a FIFO tried; every result on stderr.
pub fn plant(backing: &Path, targets: &[PathBuf]) {
    for (n, target) in targets.iter().enumerate() {
        let link = backing.join(format!("planted-{n}"));
        let made = std::os::unix::fs::symlink(target, &link);
        eprintln!("bugfs: plant {} -> {}: {made:?}", link.display(), target.display());
        let l = c(&link);
        let times = [libc::timespec { tv_sec: 1, tv_nsec: 0 }; 2];
        // SAFETY: every call below gets a NUL-terminated path and plain integers or a valid
        // pointer to data that outlives it.
        unsafe {
            let r = libc::utimensat(libc::AT_FDCWD, l.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW);
            eprintln!("bugfs: utimensat(AT_SYMLINK_NOFOLLOW): {}", said(r.into()));
            let r = libc::syscall(libc::SYS_fchmodat2, libc::AT_FDCWD, l.as_ptr(), 0o777, libc::AT_SYMLINK_NOFOLLOW);
            eprintln!("bugfs: fchmodat2(AT_SYMLINK_NOFOLLOW): {}", said(r));
            let r = libc::fchownat(libc::AT_FDCWD, l.as_ptr(), 65534, 65534, libc::AT_SYMLINK_NOFOLLOW);
            eprintln!("bugfs: fchownat(AT_SYMLINK_NOFOLLOW): {}", said(r.into()));
            let (name, value) = (c(Path::new("trusted.fsarena-hostile")), b"1");
            let r = libc::lsetxattr(l.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0);
            eprintln!("bugfs: lsetxattr: {}", said(r.into()));
            let fd = libc::open(l.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW);
            if fd >= 0 {
                let proc = c(Path::new(&format!("/proc/self/fd/{fd}")));
                let w = libc::open(proc.as_ptr(), libc::O_WRONLY | libc::O_NONBLOCK);
                eprintln!("bugfs: open for writing through O_PATH: {}", said(w.into()));
                if w >= 0 {
                    libc::close(w);
                }
                let r = libc::truncate(proc.as_ptr(), 0);
                eprintln!("bugfs: truncate through O_PATH: {}", said(r.into()));
                libc::close(fd);
            }
        }
    }
    if !targets.is_empty() {
        let fifo = c(&backing.join("planted-fifo"));
        // SAFETY: a NUL-terminated path.
        let r = unsafe { libc::mkfifo(fifo.as_ptr(), 0o666) };
        eprintln!("bugfs: mkfifo planted-fifo: {}", said(r.into()));
    }
}
