//! I/O engines: how a workload's reads and writes reach the kernel.
//!
//! The hot loop of a workload is generic over [`Engine`], so each engine's calls inline into
//! it: no virtual call, no allocation and no syscall beyond the I/O itself.

mod buffer;
mod file;

pub use buffer::AlignedBuf;
pub use file::{dio_alignment, filesystem_name, open_file, OpenFlags};

use std::io;
use std::os::fd::BorrowedFd;

/// Engine names accepted by `ioengine=`.
pub const ENGINE_NAMES: &str = "psync, sync";

/// A synchronous I/O engine: one call moves one block.
pub trait Engine: Send {
    /// fio's name for it.
    fn name(&self) -> &'static str;
    /// Reads `buf.len()` bytes at `offset`; returns the bytes read (short at end of file).
    fn read_at(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes `buf` at `offset`; returns the bytes written.
    fn write_at(&mut self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize>;
}

/// `ioengine=psync`: pread(2) and pwrite(2), one syscall per I/O (fio's default on Linux).
#[derive(Debug, Default, Clone, Copy)]
pub struct Psync;

impl Engine for Psync {
    fn name(&self) -> &'static str {
        "psync"
    }
    #[inline]
    fn read_at(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pread(fd, buf, offset)?)
    }
    #[inline]
    fn write_at(&mut self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pwrite(fd, buf, offset)?)
    }
}

/// `ioengine=sync`: lseek(2) then read(2) or write(2), as fio's sync engine does — two
/// syscalls per I/O, the second of them timed.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sync {
    /// The file position after the last I/O, to skip the lseek on sequential access as fio
    /// does (`f->last_pos`).
    position: Option<(i32, u64)>,
}

impl Engine for Sync {
    fn name(&self) -> &'static str {
        "sync"
    }
    #[inline]
    fn read_at(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.seek(fd, offset)?;
        let n = rustix::io::read(fd, buf)?;
        self.advance(fd, offset, n);
        Ok(n)
    }
    #[inline]
    fn write_at(&mut self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.seek(fd, offset)?;
        let n = rustix::io::write(fd, buf)?;
        self.advance(fd, offset, n);
        Ok(n)
    }
}

impl Sync {
    fn seek(&mut self, fd: BorrowedFd<'_>, offset: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        if self.position != Some((fd.as_raw_fd(), offset)) {
            rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(offset))?;
        }
        Ok(())
    }
    fn advance(&mut self, fd: BorrowedFd<'_>, offset: u64, n: usize) {
        use std::os::fd::AsRawFd;
        self.position = Some((fd.as_raw_fd(), offset + n as u64));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn round_trip(engine: &mut dyn Engine) {
        let dir = std::env::temp_dir().join(format!("fsarena-engine-{}-{}", engine.name(), std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let file = open_file(&path, OpenFlags { write: true, read: true, create: true, ..Default::default() }).unwrap();
        let mut buf = AlignedBuf::new(8192, 4096);
        buf.as_mut_slice().iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
        assert_eq!(engine.write_at(file.as_fd(), buf.as_slice(), 4096).unwrap(), 8192);
        let mut back = AlignedBuf::new(4096, 4096);
        assert_eq!(engine.read_at(file.as_fd(), back.as_mut_slice(), 8192).unwrap(), 4096);
        assert_eq!(back.as_slice(), &buf.as_slice()[4096..]);
        // reading past the end is short, not an error
        assert_eq!(engine.read_at(file.as_fd(), back.as_mut_slice(), 12288).unwrap(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn psync_round_trip() {
        round_trip(&mut Psync);
    }

    #[test]
    fn sync_round_trip() {
        round_trip(&mut Sync::default());
    }
}
