//! The recorder's FUSE server: one directory holding one file, `image`, backed by a file in
//! the work directory. Every WRITE is appended to the log (its data to the spill file) before
//! it is answered; FSYNC closes an epoch; FALLOCATE punch/zero is logged as a zeroing write.
//! The kernel's loop driver turns every block-layer flush into an FSYNC on the image, in order
//! with the writes, so the log is the device's write history with its persistence points.
//!
//! Written against fuser's low-level `Filesystem` trait: the file is opened with
//! `FOPEN_DIRECT_IO` (no page cache between the loop device and the log) and the mount never
//! asks for `writeback_cache`. FSYNC, FSYNCDIR, FALLOCATE and STATFS are implemented: an ENOSYS
//! answer to FSYNC would make the kernel stop sending flushes at all.

use super::log::Log;
use fuser::{
    consts::FOPEN_DIRECT_IO, FileAttr, FileType, Filesystem, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The inode of the one file.
const IMAGE_INO: u64 = 2;
/// Its name.
pub(crate) const IMAGE_NAME: &str = "image";
/// How long the kernel may cache attributes and names: the file never changes size.
const TTL: Duration = Duration::from_secs(3600);

/// What the server and fsarena share: the backing file and the log.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The image's bytes (replaced per generated workload while no loop device uses it).
    pub backing: File,
    /// Its size, fixed.
    pub size: u64,
    /// The write history.
    pub log: Log,
}

/// The handle both sides lock.
pub(crate) type SharedHandle = Arc<Mutex<Shared>>;

pub(crate) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic in one thread must not stop teardown or logging in another: every change to
    // the shared state is a single push or write.
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The FUSE filesystem.
#[derive(Debug)]
pub(crate) struct RecorderFs {
    pub shared: SharedHandle,
}

fn attr(ino: u64, size: u64) -> FileAttr {
    let dir = ino == fuser::FUSE_ROOT_ID;
    FileAttr {
        ino,
        size: if dir { 0 } else { size },
        blocks: if dir { 0 } else { size.div_ceil(512) },
        atime: UNIX_EPOCH,
        mtime: UNIX_EPOCH,
        ctime: UNIX_EPOCH,
        crtime: UNIX_EPOCH,
        kind: if dir { FileType::Directory } else { FileType::RegularFile },
        perm: if dir { 0o700 } else { 0o600 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}

impl RecorderFs {
    fn size(&self) -> u64 {
        lock(&self.shared).size
    }
}

impl Filesystem for RecorderFs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == fuser::FUSE_ROOT_ID && name == IMAGE_NAME {
            reply.entry(&TTL, &attr(IMAGE_INO, self.size()), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match ino {
            fuser::FUSE_ROOT_ID | IMAGE_INO => reply.attr(&TTL, &attr(ino, self.size())),
            _ => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // The device has a fixed size: a truncate to another size is refused, the rest (times
        // a loop device's open may touch) is accepted and ignored.
        if size.is_some_and(|s| s != self.size()) {
            reply.error(libc::EPERM);
        } else {
            reply.attr(&TTL, &attr(ino, self.size()));
        }
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino == IMAGE_INO {
            reply.opened(0, FOPEN_DIRECT_IO);
        } else {
            reply.error(libc::EISDIR);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyData,
    ) {
        let shared = lock(&self.shared);
        let offset = offset.max(0) as u64;
        let len = (size as u64).min(shared.size.saturating_sub(offset)) as usize;
        let mut buf = vec![0u8; len];
        match shared.backing.read_exact_at(&mut buf, offset) {
            Ok(()) => reply.data(&buf),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock_owner: Option<u64>,
        reply: ReplyWrite,
    ) {
        let mut shared = lock(&self.shared);
        let offset = offset.max(0) as u64;
        if offset + data.len() as u64 > shared.size {
            reply.error(libc::ENOSPC);
            return;
        }
        // Logged first: a write the log could not keep is failed, never answered.
        if let Err(e) = shared.log.write(offset, data) {
            reply.error(e.raw_os_error().unwrap_or(libc::EIO));
            return;
        }
        match shared.backing.write_all_at(data, offset) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e.raw_os_error().unwrap_or(libc::EIO)),
        }
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        // close(2), not a persistence point.
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        // Covers exactly the writes answered before it arrived: the server answers one
        // request at a time, so that is everything logged so far.
        lock(&self.shared).log.flush();
        reply.ok();
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        lock(&self.shared).log.flush();
        reply.ok();
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        offset: i64,
        length: i64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut shared = lock(&self.shared);
        let (offset, length) = (offset.max(0) as u64, length.max(0) as u64);
        let zeroing = mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0;
        if !zeroing {
            // A plain allocation of a fixed-size device changes no byte.
            reply.ok();
            return;
        }
        let end = (offset + length).min(shared.size);
        let length = end.saturating_sub(offset);
        shared.log.zero(offset, length);
        // Zeroes written through, so the live image reads as the device would.
        let zeros = vec![0u8; 1 << 16];
        let mut at = offset;
        while at < end {
            let n = (end - at).min(zeros.len() as u64) as usize;
            if let Err(e) = shared.backing.write_all_at(&zeros[..n], at) {
                reply.error(e.raw_os_error().unwrap_or(libc::EIO));
                return;
            }
            at += n as u64;
        }
        reply.ok();
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let blocks = self.size() / 4096;
        reply.statfs(blocks, 0, 0, 2, 0, 4096, 255, 4096);
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        if ino != fuser::FUSE_ROOT_ID {
            reply.error(libc::ENOTDIR);
            return;
        }
        let entries = [
            (fuser::FUSE_ROOT_ID, FileType::Directory, "."),
            (fuser::FUSE_ROOT_ID, FileType::Directory, ".."),
            (IMAGE_INO, FileType::RegularFile, IMAGE_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
