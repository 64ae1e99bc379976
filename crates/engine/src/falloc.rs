//! fio's engines that change a file's allocation instead of its data (fio 3.33's
//! `engines/ftruncate.c` and `engines/falloc.c`). Both are synchronous and move no bytes,
//! yet each I/O counts with its whole length, as fio counts it.
//!
//! - `ftruncate`: a write at offset O is ftruncate(2) to O bytes; reads are refused (EINVAL).
//! - `falloc`: a write is fallocate(2) of the I/O's range (mode 0: the file grows), a read
//!   is fallocate with `FALLOC_FL_KEEP_SIZE`. fio's trims are hole punches; fsarena's `io`
//!   workload has no trim direction yet, so `rw=trim`-family jobs are refused by its
//!   option parser, not here.

use crate::{Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use rustix::fs::FallocateFlags;
use std::io;

const CAPS: EngineCaps =
    EngineCaps { sync: true, diskless: false, aligned_buffers: false, direct: true, file_op: None };

/// `ioengine=ftruncate`: each write sets the file's length to its offset.
#[derive(Debug)]
pub struct Ftruncate {
    buffers: SlotBuffers,
}

impl Engine for Ftruncate {
    const NAME: &'static str = "ftruncate";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        CAPS
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        Ok(Self { buffers: SlotBuffers::new(1, config.slot_len, config.align) })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        Submit::Completed(match op.dir {
            IoDir::Write => rustix::fs::ftruncate(op.fd, op.offset).map(|()| op.len).map_err(io::Error::from),
            IoDir::Read => Err(io::Error::from_raw_os_error(libc::EINVAL)),
            // fio's ftruncate has no sync hook: a sync is the generic fsync or fdatasync.
            dir => crate::sync::sync_file(op.fd, dir),
        })
    }
}

/// `ioengine=falloc`: each write or read allocates its range.
#[derive(Debug)]
pub struct Falloc {
    buffers: SlotBuffers,
}

impl Engine for Falloc {
    const NAME: &'static str = "falloc";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        CAPS
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        Ok(Self { buffers: SlotBuffers::new(1, config.slot_len, config.align) })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        let mode = match op.dir {
            IoDir::Read => FallocateFlags::KEEP_SIZE,
            IoDir::Write => FallocateFlags::empty(),
            dir => return Submit::Completed(crate::sync::sync_file(op.fd, dir)),
        };
        Submit::Completed(
            rustix::fs::fallocate(op.fd, mode, op.offset, op.len as u64).map(|()| op.len).map_err(io::Error::from),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{open_file, OpenFlags};
    use std::os::fd::AsFd;

    fn done(s: Submit) -> io::Result<usize> {
        match s {
            Submit::Completed(r) => r,
            other => panic!("a synchronous engine answered {other:?}"),
        }
    }

    #[test]
    fn writes_set_the_length_or_the_allocation() {
        let config = EngineConfig { depth: 1, slot_len: 4096, align: 4096, iodepth: 1, flags: Default::default() };
        let dir = std::env::temp_dir().join(format!("fsarena-falloc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let file = open_file(&path, OpenFlags { write: true, read: true, create: true, ..Default::default() }).unwrap();
        let op = |dir, offset, len| IoOp { dir, fd: file.as_fd(), offset, len, slot: 0 };
        let len = || std::fs::metadata(&path).unwrap().len();

        let mut t = Ftruncate::new(&config).unwrap();
        assert_eq!(done(t.submit(op(IoDir::Write, 12288, 4096))).unwrap(), 4096);
        assert_eq!(len(), 12288, "a write at O truncates to O");
        assert_eq!(done(t.submit(op(IoDir::Read, 0, 4096))).unwrap_err().raw_os_error(), Some(libc::EINVAL));

        let mut f = Falloc::new(&config).unwrap();
        assert_eq!(done(f.submit(op(IoDir::Read, 16384, 4096))).unwrap(), 4096);
        assert_eq!(len(), 12288, "a read keeps the size");
        assert_eq!(done(f.submit(op(IoDir::Write, 16384, 4096))).unwrap(), 4096);
        assert_eq!(len(), 20480, "a write grows the file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
