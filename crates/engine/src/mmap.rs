//! `ioengine=mmap`: the file is mapped and each I/O is a memcpy between the mapping and the
//! slot buffer, as fio's `engines/mmap.c`. A sync is msync(MS_SYNC) of the whole mapping
//! (fio does the same for fsync and fdatasync); with `direct=1` each I/O is followed by an
//! msync and a madvise(DONTNEED), fio's stand-in for O_DIRECT on a mapping.
//!
//! Each file is mapped whole when it is opened ([`Engine::open_file`]): a read-only file
//! (a read job) with PROT_READ, a read-write one with PROT_READ | PROT_WRITE. An I/O past the
//! mapping's end remaps the file at its current size first, and one past the file's end is
//! short (reads) or grows the file (writes): touching a page past the end of a file would
//! raise SIGBUS instead.

use crate::{Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// One mapped file.
#[derive(Debug)]
struct Mapping {
    fd: i32,
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

impl Mapping {
    /// Maps `fd` whole at its current size (nothing when it is empty).
    fn map(fd: BorrowedFd<'_>) -> io::Result<Self> {
        let flags = rustix::fs::fcntl_getfl(fd)?;
        let writable = flags.contains(rustix::fs::OFlags::RDWR);
        let mut m = Self { fd: fd.as_raw_fd(), ptr: std::ptr::null_mut(), len: 0, writable };
        m.remap(fd)?;
        Ok(m)
    }

    /// Drops the old mapping and maps the file at its current size.
    fn remap(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.unmap();
        let size = rustix::fs::fstat(fd)?.st_size.max(0) as usize;
        if size == 0 {
            return Ok(());
        }
        let prot = if self.writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: a fresh shared mapping of an open file; nothing else aliases it.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        self.ptr = ptr.cast();
        self.len = size;
        Ok(())
    }

    fn unmap(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr/len came from mmap and are unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
            self.ptr = std::ptr::null_mut();
            self.len = 0;
        }
    }

    /// msync(MS_SYNC) of `len` bytes at `offset` (the whole mapping for a file sync).
    fn msync(&self, offset: usize, len: usize) -> io::Result<()> {
        if self.ptr.is_null() || len == 0 {
            return Ok(());
        }
        // msync wants a page-aligned start.
        let start = offset & !(page_size() - 1);
        // SAFETY: the range lies inside the mapping.
        let r = unsafe { libc::msync(self.ptr.add(start).cast(), offset + len - start, libc::MS_SYNC) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        self.unmap();
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// The mmap engine. See the module documentation.
#[derive(Debug)]
pub struct Mmap {
    buffers: SlotBuffers,
    maps: Vec<Mapping>,
    /// Which of `maps` the last I/O used: the next one is most often the same file.
    last: usize,
    direct: bool,
}

// SAFETY: the mappings belong to the engine alone; a mapping may be used from any thread.
unsafe impl Send for Mmap {}

impl Engine for Mmap {
    const NAME: &'static str = "mmap";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        // fio: FIO_SYNCIO | FIO_NOEXTEND; direct=1 is accepted and emulated (module doc).
        EngineCaps { sync: true, diskless: false, aligned_buffers: false, direct: true, file_op: None }
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        Ok(Self {
            buffers: SlotBuffers::new(1, config.slot_len, config.align),
            maps: Vec::new(),
            last: 0,
            direct: config.flags.direct,
        })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    fn open_file(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        // A descriptor number reused after a close is a new file: its old mapping goes.
        self.maps.retain(|m| m.fd != fd.as_raw_fd());
        self.maps.push(Mapping::map(fd)?);
        Ok(())
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        Submit::Completed(self.transfer(op))
    }
}

impl Mmap {
    /// The mapping of `fd`, mapped now if the workload did not announce it.
    fn mapping(&mut self, fd: BorrowedFd<'_>) -> io::Result<usize> {
        let raw = fd.as_raw_fd();
        if self.maps.get(self.last).is_some_and(|m| m.fd == raw) {
            return Ok(self.last);
        }
        self.last = match self.maps.iter().position(|m| m.fd == raw) {
            Some(i) => i,
            None => {
                self.maps.push(Mapping::map(fd)?);
                self.maps.len() - 1
            }
        };
        Ok(self.last)
    }

    fn transfer(&mut self, op: IoOp<'_>) -> io::Result<usize> {
        let i = self.mapping(op.fd)?;
        let direct = self.direct;
        let m = &mut self.maps[i];
        if matches!(op.dir, IoDir::Fsync | IoDir::Fdatasync) {
            return m.msync(0, m.len).map(|()| 0);
        }
        let offset = usize::try_from(op.offset).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let end = offset + op.len;
        if end > m.len {
            let size = rustix::fs::fstat(op.fd)?.st_size.max(0) as usize;
            if op.dir == IoDir::Write && size < end {
                if !m.writable {
                    return Err(io::Error::from_raw_os_error(libc::EBADF));
                }
                rustix::fs::ftruncate(op.fd, end as u64)?;
            }
            m.remap(op.fd)?;
        }
        // Past the end of the file a read is short, as pread's.
        let len = op.len.min(m.len.saturating_sub(offset));
        if len == 0 {
            return Ok(0);
        }
        match op.dir {
            IoDir::Read => {
                let dst = &mut self.buffers.slot_mut(op.slot)[..len];
                // SAFETY: offset + len lies inside the mapping (clamped above).
                let src = unsafe { std::slice::from_raw_parts(m.ptr.add(offset), len) };
                dst.copy_from_slice(src);
            }
            _ => {
                if !m.writable {
                    return Err(io::Error::from_raw_os_error(libc::EBADF));
                }
                let src = &self.buffers.slot(op.slot)[..len];
                // SAFETY: a writable mapping; offset + len lies inside it.
                let dst = unsafe { std::slice::from_raw_parts_mut(m.ptr.add(offset), len) };
                dst.copy_from_slice(src);
            }
        }
        if direct {
            m.msync(offset, len)?;
            let start = offset & !(page_size() - 1);
            // SAFETY: the range lies inside the mapping; DONTNEED on a shared file mapping
            // only drops clean pages, which the msync above made clean.
            unsafe { libc::madvise(m.ptr.add(start).cast(), offset + len - start, libc::MADV_DONTNEED) };
        }
        Ok(len)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{open_file, OpenFlags};
    use std::os::fd::AsFd;

    fn done(s: Submit) -> usize {
        match s {
            Submit::Completed(r) => r.unwrap(),
            other => panic!("mmap answered {other:?}"),
        }
    }

    #[test]
    fn mmap_round_trip_short_reads_and_growth() {
        let config = EngineConfig { depth: 1, slot_len: 8192, align: 4096, iodepth: 1, flags: Default::default() };
        let mut engine = Mmap::new(&config).unwrap();
        let dir = std::env::temp_dir().join(format!("fsarena-h5-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let file = open_file(&path, OpenFlags { write: true, read: true, ..Default::default() }).unwrap();
        let fd = file.as_fd();
        engine.open_file(fd).unwrap();
        engine.buffers().slot_mut(0).iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
        let written = engine.buffers().slot(0).to_vec();
        let op = |dir, offset, len| IoOp { dir, fd, offset, len, slot: 0 };
        // a write past the end grows the file instead of faulting
        assert_eq!(done(engine.submit(op(IoDir::Write, 4096, 8192))), 8192);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 12288);
        assert_eq!(done(engine.submit(op(IoDir::Fsync, 0, 0))), 0);
        assert_eq!(&std::fs::read(&path).unwrap()[4096..], &written[..]);
        engine.buffers().slot_mut(0).fill(0);
        assert_eq!(done(engine.submit(op(IoDir::Read, 0, 4096))), 4096);
        assert!(engine.buffers().slot(0)[..4096].iter().all(|&b| b == 7));
        // reading at and past the end is short, not SIGBUS
        assert_eq!(done(engine.submit(op(IoDir::Read, 8192, 8192))), 4096);
        assert_eq!(done(engine.submit(op(IoDir::Read, 12288, 4096))), 0);
        drop(engine);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_read_only_file_refuses_writes() {
        let config = EngineConfig { depth: 1, slot_len: 4096, align: 4096, iodepth: 1, flags: Default::default() };
        let mut engine = Mmap::new(&config).unwrap();
        let dir = std::env::temp_dir().join(format!("fsarena-h5-mmapro-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![1u8; 4096]).unwrap();
        let file = open_file(&path, OpenFlags { read: true, ..Default::default() }).unwrap();
        let fd = file.as_fd();
        engine.open_file(fd).unwrap();
        match engine.submit(IoOp { dir: IoDir::Write, fd, offset: 0, len: 4096, slot: 0 }) {
            Submit::Completed(Err(e)) => assert_eq!(e.raw_os_error(), Some(libc::EBADF)),
            other => panic!("{other:?}"),
        }
        drop(engine);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
