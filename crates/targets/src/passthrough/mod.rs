//! A FUSE passthrough onto a backing directory, with hook points ([`Hooks`]) where its users
//! add what they are for: fsarena's file recorder logs every operation
//! ([`crate::recorder::files`]), and the test tree's bugfs (crates/cli/examples/bugfs.rs)
//! holds written data in memory and plants its bugs there. The passthrough itself is honest.
//!
//! Safety: fsarena runs as root and the daemon is a tenant: whatever it makes in `{work}`
//! (symbolic links to anything, a link where a directory was) it may then ask to act on, and
//! the kernel never follows a link for a request that names the link itself (`utimensat` with
//! `AT_SYMLINK_NOFOLLOW`, `fchmodat2`, `lchown`, `lsetxattr`). So every operation here acts
//! beneath the backing directory's descriptor: the directory holding a name is opened with
//! no symbolic link anywhere on the way (openat2 `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`,
//! [`HeldDir`]), the name itself is acted on by an `*at` call that does not follow it
//! (`utimensat`/`fchownat` with `AT_SYMLINK_NOFOLLOW`, `unlinkat`, `renameat`, `linkat`
//! without `AT_SYMLINK_FOLLOW`, `readlinkat`, the `l*xattr` calls through the held parent),
//! and a file is opened `O_NOFOLLOW|O_NONBLOCK` (a FIFO cannot block the server) and checked
//! by `fstat` before its descriptor is used (`fchmod`, `ftruncate`, `fsync`, `f*xattr`). The
//! mode of a symbolic link cannot be changed (EOPNOTSUPP), as on Linux filesystems. Hooks act
//! on the backing directory only through [`Backing`], which keeps to the same rules.

mod backing;
mod hooks;
mod ops;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use backing::Backing;
pub use hooks::{Feature, Hooks, Inode};

use crate::beneath::HeldDir;
use fuser::FileType;
use rustix::fs as rfs;
use rustix::io::Errno;
use std::time::Duration;

const TTL: Duration = Duration::ZERO;

/// The largest xattr value or name list answered (the kernel's own limit).
const XATTR_MAX: usize = 65536;

fn raw(e: Errno) -> i32 {
    e.raw_os_error()
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// The FUSE type of a file mode.
fn kind(mode: u32) -> FileType {
    match rfs::FileType::from_raw_mode(mode) {
        rfs::FileType::Directory => FileType::Directory,
        rfs::FileType::Symlink => FileType::Symlink,
        rfs::FileType::Fifo => FileType::NamedPipe,
        rfs::FileType::CharacterDevice => FileType::CharDevice,
        rfs::FileType::BlockDevice => FileType::BlockDevice,
        rfs::FileType::Socket => FileType::Socket,
        _ => FileType::RegularFile,
    }
}

/// The passthrough onto a backing directory, `H` adding what its user is for; mount it with
/// fuser (it is a [`fuser::Filesystem`]).
#[derive(Debug)]
pub struct Passthrough<H> {
    backing: Backing,
    hooks: H,
}

impl<H: Hooks> Passthrough<H> {
    /// Serves `root` with `hooks`.
    pub fn new(root: HeldDir, hooks: H) -> Self {
        Self { backing: Backing::new(root), hooks }
    }
}
