//! What a user of the passthrough adds to it: one trait, every method optional, each default
//! the plain passthrough (what the method's documentation says it does).

use super::Backing;
use crate::recorder::files::FileOp;
use fuser::{FileAttr, FileType};
use std::ffi::OsStr;
use std::ops::Range;
use std::path::Path;

/// The file or directory an operation acts on.
#[derive(Debug, Clone, Copy)]
pub struct Inode<'a> {
    /// Its inode number: what FUSE names it by, kept across renames.
    pub ino: u64,
    /// Its path below the backing directory, as it is now.
    pub path: &'a Path,
}

/// Operations a passthrough may leave out; left out, they answer ENOSYS, as to a filesystem
/// without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// symlink.
    Symlinks,
    /// link.
    HardLinks,
    /// mknod (of regular files: the passthrough refuses any other node with EPERM).
    Mknod,
    /// setxattr, getxattr, listxattr, removexattr.
    Xattrs,
}

/// Hook points of the [`super::Passthrough`]. A method answering `Err(errno)` makes the FUSE
/// request fail with that errno; the name operations around it are the passthrough's own and
/// keep to its safety rules (see [`super`]). Hooks act on the backing directory only through
/// [`Backing`].
pub trait Hooks: Send + 'static {
    /// Whether the operations of `feature` are served (default: all are).
    fn supports(&self, _feature: Feature) -> bool {
        true
    }

    /// Whether what the backing directory holds of type `kind` is served: else it is not
    /// found and not listed, whatever type [`Self::attr`] would answer for it (default:
    /// everything is).
    fn serves(&self, _kind: FileType) -> bool {
        true
    }

    /// An answer to a lookup of `name` in `parent` that the hooks give themselves, for an
    /// entry of their own (default: None, the backing directory answers).
    fn lookup(&mut self, _parent: u64, _name: &OsStr) -> Option<FileAttr> {
        None
    }

    /// The attributes of one of the hooks' own inodes (see [`Self::lookup`]); None for the
    /// rest (the default).
    fn getattr(&mut self, _ino: u64) -> Option<FileAttr> {
        None
    }

    /// The target answered for a readlink of `ino`, given by the hooks themselves; None (the
    /// default) reads the link in the backing directory.
    fn readlink(&mut self, _backing: &Backing, _ino: u64) -> Option<Vec<u8>> {
        None
    }

    /// The attributes answered for `node`, from those of what the backing directory holds
    /// (default: as they are). `made`: the answer to the request that made it (mkdir,
    /// create, mknod, symlink), whose type the kernel checks.
    fn attr(&mut self, _node: Inode<'_>, attr: FileAttr, _made: bool) -> FileAttr {
        attr
    }

    /// A change made to the backing directory, reported once done, before it is answered:
    /// every name operation, mode and xattr change, truncate, fsync and directory fsync.
    /// Writes and fallocate are reported by [`Self::write`] and [`Self::fallocate`]
    /// themselves (their data is theirs). Default: nothing.
    fn done(&mut self, _op: FileOp) {}

    /// `node` was opened, or `created`, under a new handle (default: nothing).
    fn opened(&mut self, _backing: &Backing, _node: Inode<'_>, _created: bool) {}

    /// The data answered to a read of `size` bytes at `offset` (default: read from the file
    /// open under `fh`).
    fn read(&mut self, backing: &Backing, _ino: u64, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, i32> {
        backing.read(fh, offset, size)
    }

    /// A write of `data` at `offset` (default: written to the file open under `fh`).
    fn write(&mut self, backing: &Backing, _node: Inode<'_>, fh: u64, offset: u64, data: &[u8]) -> Result<(), i32> {
        backing.write(fh, offset, data)
    }

    /// A size set (default: [`Backing::truncate`]); reported to [`Self::done`] after.
    fn truncate(&mut self, backing: &Backing, node: Inode<'_>, fh: Option<u64>, size: u64) -> Result<(), i32> {
        backing.truncate(node.path, fh, size)
    }

    /// fallocate of `range` with `mode` as FUSE passed it (default: [`Backing::fallocate`]).
    fn fallocate(
        &mut self,
        backing: &Backing,
        _node: Inode<'_>,
        fh: u64,
        range: Range<u64>,
        mode: i32,
    ) -> Result<(), i32> {
        backing.fallocate(fh, range, mode)
    }

    /// A flush (each close of a descriptor) of `ino` (default: nothing).
    fn flush(&mut self, _backing: &Backing, _ino: u64) -> Result<(), i32> {
        Ok(())
    }

    /// The last close of handle `fh` of `ino`, before the passthrough closes its file
    /// (default: nothing).
    fn release(&mut self, _backing: &Backing, _ino: u64, _fh: u64) -> Result<(), i32> {
        Ok(())
    }

    /// fsync (fdatasync when `datasync`) of a file (default: [`Backing::fsync`]); reported to
    /// [`Self::done`] after.
    fn fsync(&mut self, backing: &Backing, node: Inode<'_>, fh: u64, datasync: bool) -> Result<(), i32> {
        backing.fsync(node.path, fh, datasync)
    }

    /// fsync of a directory (default: [`Backing::fsync_dir`]); reported to [`Self::done`]
    /// after.
    fn fsyncdir(&mut self, backing: &Backing, node: Inode<'_>) -> Result<(), i32> {
        backing.fsync_dir(node.path)
    }

    /// A rename of `from` over `to` (default: [`Backing::rename`]); reported to
    /// [`Self::done`] after, and the passthrough's inode numbers follow it.
    fn rename(&mut self, backing: &Backing, from: &Path, to: &Path) -> Result<(), i32> {
        backing.rename(from, to)
    }
}

/// The plain passthrough: no hooks.
impl Hooks for () {}
