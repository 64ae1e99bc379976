//! The file recorder's hooks of the [`crate::passthrough`]: every change it makes to the
//! backing directory logged once done, data within `max_log`, and fsyncs logged, not done.

use super::files::{lock, FileOp, Shared, PIECE};
use crate::passthrough::{Backing, Hooks, Inode};
use std::ops::Range;

/// The passthrough's hooks that fill the file-level log.
#[derive(Debug)]
pub(super) struct Recording {
    pub(super) log: Shared,
}

impl Hooks for Recording {
    fn done(&mut self, op: FileOp) {
        lock(&self.log).push(op);
    }

    fn write(&mut self, backing: &Backing, node: Inode<'_>, fh: u64, offset: u64, data: &[u8]) -> Result<(), i32> {
        lock(&self.log).room(data.len() as u64)?;
        backing.write(fh, offset, data)?;
        lock(&self.log).log_write(node.ino, node.path, offset, data)
    }

    fn fallocate(
        &mut self,
        backing: &Backing,
        node: Inode<'_>,
        fh: u64,
        range: Range<u64>,
        mode: i32,
    ) -> Result<(), i32> {
        let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
        let (off, len) = (range.start, range.end - range.start);
        let f = backing.file(fh)?;
        let before = f.metadata().map_err(errno)?.len();
        // An allocation kept past the end is replayed into every crash state: it counts
        // against max_log like written data (a daemon allocating terabytes gets ENOSPC).
        let allocates = mode & libc::FALLOC_FL_KEEP_SIZE != 0 && mode & libc::FALLOC_FL_PUNCH_HOLE == 0;
        if allocates {
            lock(&self.log).room(len)?;
        }
        backing.fallocate(fh, range, mode)?;
        let after = f.metadata().map_err(errno)?.len();
        if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
            // Zeroed bytes are data, logged as writes of zeros (within the file).
            let end = (off + len).min(after);
            let mut at = off;
            while at < end {
                let n = (PIECE - at % PIECE).min(end - at);
                lock(&self.log).log_write(node.ino, node.path, at, &vec![0u8; n as usize])?;
                at += n;
            }
        }
        if after != before {
            self.done(FileOp::Truncate { id: node.ino, path: node.path.to_path_buf(), size: after });
        }
        if allocates {
            lock(&self.log).log_allocate(node.ino, node.path, off, len);
        }
        Ok(())
    }

    fn fsync(&mut self, backing: &Backing, node: Inode<'_>, fh: u64, _datasync: bool) -> Result<(), i32> {
        // Logged, not done: crash states are rebuilt from this log, never from the backing
        // files, so their durability plays no part; a real fsync here waited on the host's
        // disk with every other writer on it (seconds per case on a busy machine). The file
        // is still checked to be one this server serves.
        backing.check_file(node.path, fh)
    }

    fn fsyncdir(&mut self, backing: &Backing, node: Inode<'_>) -> Result<(), i32> {
        // Logged, not done, as fsync above.
        drop(backing.open_dir(node.path)?);
        Ok(())
    }
}
