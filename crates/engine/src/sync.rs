//! The synchronous engines: `psync` (pread/pwrite) and `sync` (lseek + read/write), as fio's
//! `engines/sync.c`. Each I/O completes inside `submit`, so `iodepth` is ignored.

use crate::{Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

const SYNC_CAPS: EngineCaps =
    EngineCaps { sync: true, diskless: false, aligned_buffers: false, direct: true, file_op: None };

/// fsync or fdatasync, the sync directions of both engines (fio's `do_io_u_sync`).
#[inline]
pub(crate) fn sync_file(fd: BorrowedFd<'_>, dir: IoDir) -> io::Result<usize> {
    match dir {
        IoDir::Fdatasync => rustix::fs::fdatasync(fd)?,
        _ => rustix::fs::fsync(fd)?,
    }
    Ok(0)
}

/// `ioengine=psync`: pread(2) and pwrite(2), one syscall per I/O (fio's default on Linux).
#[derive(Debug)]
pub struct Psync {
    buffers: SlotBuffers,
}

impl Engine for Psync {
    const NAME: &'static str = "psync";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        SYNC_CAPS
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
            IoDir::Read => rustix::io::pread(op.fd, &mut self.buffers.slot_mut(op.slot)[..op.len], op.offset)
                .map_err(io::Error::from),
            IoDir::Write => {
                rustix::io::pwrite(op.fd, &self.buffers.slot(op.slot)[..op.len], op.offset).map_err(io::Error::from)
            }
            dir => sync_file(op.fd, dir),
        })
    }
}

/// `ioengine=sync`: lseek(2) then read(2) or write(2), as fio's sync engine does — two
/// syscalls per I/O, both inside the timed call.
#[derive(Debug)]
pub struct Sync {
    buffers: SlotBuffers,
    /// The file position after the last I/O, to skip the lseek on sequential access as fio
    /// does (`f->last_pos`).
    position: Option<(i32, u64)>,
}

impl Engine for Sync {
    const NAME: &'static str = "sync";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        SYNC_CAPS
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        Ok(Self { buffers: SlotBuffers::new(1, config.slot_len, config.align), position: None })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        Submit::Completed(match op.dir {
            IoDir::Read | IoDir::Write => self.transfer(op),
            dir => sync_file(op.fd, dir),
        })
    }
}

impl Sync {
    #[inline(always)]
    fn transfer(&mut self, op: IoOp<'_>) -> io::Result<usize> {
        let key = (op.fd.as_raw_fd(), op.offset);
        if self.position != Some(key) {
            rustix::fs::seek(op.fd, rustix::fs::SeekFrom::Start(op.offset))?;
        }
        let n = if op.dir == IoDir::Read {
            rustix::io::read(op.fd, &mut self.buffers.slot_mut(op.slot)[..op.len])?
        } else {
            rustix::io::write(op.fd, &self.buffers.slot(op.slot)[..op.len])?
        };
        self.position = Some((key.0, op.offset + n as u64));
        Ok(n)
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
            other => panic!("a synchronous engine answered {other:?}"),
        }
    }

    fn round_trip<E: Engine>() {
        let config = EngineConfig { depth: 1, slot_len: 8192, align: 4096, iodepth: 1, flags: Default::default() };
        assert!(E::caps(&config).sync && !E::caps(&config).diskless);
        let mut engine = E::new(&config).unwrap();
        let dir = std::env::temp_dir().join(format!("fsarena-h5-engine-{}-{}", E::NAME, std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let file = open_file(&path, OpenFlags { write: true, read: true, create: true, ..Default::default() }).unwrap();
        let fd = file.as_fd();
        engine.buffers().slot_mut(0).iter_mut().enumerate().for_each(|(i, b)| *b = (i % 251) as u8);
        let written = engine.buffers().slot(0).to_vec();
        let op = |dir, offset, len| IoOp { dir, fd, offset, len, slot: 0 };
        assert_eq!(done(engine.submit(op(IoDir::Write, 4096, 8192))), 8192);
        assert_eq!(done(engine.submit(op(IoDir::Fsync, 0, 0))), 0);
        engine.buffers().slot_mut(0).fill(0);
        assert_eq!(done(engine.submit(op(IoDir::Read, 8192, 4096))), 4096);
        assert_eq!(&engine.buffers().slot(0)[..4096], &written[4096..]);
        // reading past the end is short, not an error
        assert_eq!(done(engine.submit(op(IoDir::Read, 12288, 4096))), 0);
        assert_eq!(done(engine.submit(op(IoDir::Fdatasync, 0, 0))), 0);
        // and the default reap of a synchronous engine has nothing
        assert_eq!(engine.reap(1, 1, &mut Vec::new()).unwrap(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn psync_round_trip() {
        round_trip::<Psync>();
    }

    #[test]
    fn sync_round_trip() {
        round_trip::<Sync>();
    }
}
