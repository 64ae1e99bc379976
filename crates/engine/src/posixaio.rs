//! `ioengine=posixaio`: POSIX AIO (aio_read, aio_write, aio_fsync) through libc, as fio's
//! `engines/posixaio.c`. glibc runs these on its own helper threads, so the I/O is queued
//! even for buffered files.
//!
//! `submit` starts the I/O at once (fio's posixaio queues in its `queue` hook too: there is
//! no batch call to commit); `reap(min, max)` polls aio_error over the I/Os in flight and
//! waits in aio_suspend while fewer than `min` are done. A sync is aio_fsync (O_SYNC for
//! fsync, O_DSYNC for fdatasync), queued like the data I/O.

use crate::{Completion, Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;
use std::os::fd::AsRawFd;

/// The posixaio engine. See the module documentation.
pub struct PosixAio {
    buffers: SlotBuffers,
    /// One control block per slot. The vector is sized once and never grows, so a block's
    /// address stays put while glibc holds it.
    cbs: Vec<libc::aiocb>,
    /// Slots with an I/O in flight, in submission order.
    in_flight: Vec<u32>,
    depth: u32,
}

// SAFETY: the control blocks are owned by the engine; glibc's AIO belongs to the process, so
// the engine may move between threads.
unsafe impl Send for PosixAio {}

impl std::fmt::Debug for PosixAio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PosixAio").field("depth", &self.depth).field("in_flight", &self.in_flight.len()).finish()
    }
}

fn zeroed_cb() -> libc::aiocb {
    // SAFETY: aiocb is a plain C struct for which all-zero is the documented initial state.
    unsafe { std::mem::zeroed() }
}

impl Engine for PosixAio {
    const NAME: &'static str = "posixaio";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        EngineCaps { sync: false, diskless: false, aligned_buffers: false, direct: true, file_op: None }
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        let depth = config.depth.max(1);
        Ok(Self {
            buffers: SlotBuffers::new(depth, config.slot_len, config.align),
            cbs: (0..depth).map(|_| zeroed_cb()).collect(),
            in_flight: Vec::with_capacity(depth as usize),
            depth,
        })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        if self.in_flight.len() as u32 >= self.depth {
            return Submit::Busy;
        }
        let buf = self.buffers.slot_mut(op.slot).as_mut_ptr();
        let cb: &mut libc::aiocb = &mut self.cbs[op.slot as usize];
        // SAFETY: reset to the zero state before reuse; the slot's previous I/O was reaped.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = op.fd.as_raw_fd();
        cb.aio_offset = op.offset as libc::off_t;
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = op.len;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the control block and the slot buffer stay put and alive until the I/O is
        // reaped (Drop waits for what is in flight); the caller keeps the fd open as long.
        let ret = unsafe {
            match op.dir {
                IoDir::Read => libc::aio_read(cb),
                IoDir::Write => libc::aio_write(cb),
                IoDir::Fsync => libc::aio_fsync(libc::O_SYNC, cb),
                IoDir::Fdatasync => libc::aio_fsync(libc::O_DSYNC, cb),
            }
        };
        if ret != 0 {
            let e = io::Error::last_os_error();
            // glibc could not take it now (EAGAIN): come back after a reap, as fio does.
            if e.raw_os_error() == Some(libc::EAGAIN) && !self.in_flight.is_empty() {
                return Submit::Busy;
            }
            return Submit::Completed(Err(e));
        }
        self.in_flight.push(op.slot);
        Submit::Queued
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let max = max.max(min);
        let mut got = 0;
        loop {
            let mut i = 0;
            while i < self.in_flight.len() && got < max {
                let slot = self.in_flight[i];
                let cb: &mut libc::aiocb = &mut self.cbs[slot as usize];
                // SAFETY: cb is a control block of an I/O in flight.
                let err = unsafe { libc::aio_error(cb) };
                if err == libc::EINPROGRESS {
                    i += 1;
                    continue;
                }
                // SAFETY: the I/O is done; aio_return is called once for it.
                let ret = unsafe { libc::aio_return(cb) };
                let result = if err != 0 { Err(io::Error::from_raw_os_error(err)) } else { Ok(ret.max(0) as usize) };
                out.push(Completion { slot, result });
                self.in_flight.remove(i);
                got += 1;
            }
            if got >= min || self.in_flight.is_empty() || got >= max {
                return Ok(got);
            }
            self.suspend()?;
        }
    }
}

impl PosixAio {
    /// Waits until at least one I/O in flight is done.
    fn suspend(&self) -> io::Result<()> {
        let list: Vec<*const libc::aiocb> =
            self.in_flight.iter().map(|&s| &self.cbs[s as usize] as *const libc::aiocb).collect();
        // SAFETY: every pointer is a control block of an I/O in flight; no timeout.
        let r = unsafe { libc::aio_suspend(list.as_ptr(), list.len() as libc::c_int, std::ptr::null()) };
        if r != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) && e.raw_os_error() != Some(libc::EAGAIN) {
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // glibc writes into the buffers and control blocks until each I/O ends: wait for all.
        let mut out = Vec::new();
        while !self.in_flight.is_empty() {
            let n = self.in_flight.len();
            if self.reap(n, n, &mut out).is_err() {
                // aio_suspend failing for good: poll instead of freeing memory in use.
                std::thread::yield_now();
            }
            out.clear();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{open_file, OpenFlags};
    use std::os::fd::AsFd;

    #[test]
    fn posixaio_queues_and_reaps_in_any_order() {
        let config = EngineConfig { depth: 4, slot_len: 4096, align: 4096, iodepth: 4, flags: Default::default() };
        let caps = PosixAio::caps(&config);
        assert!(!caps.sync && !caps.diskless);
        let mut engine = PosixAio::new(&config).unwrap();
        let dir = std::env::temp_dir().join(format!("fsarena-h5-posixaio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let file = open_file(&path, OpenFlags { write: true, read: true, create: true, ..Default::default() }).unwrap();
        let fd = file.as_fd();
        for slot in 0..4 {
            engine.buffers().slot_mut(slot).fill(slot as u8 + 1);
            let op = IoOp { dir: IoDir::Write, fd, offset: u64::from(slot) * 4096, len: 4096, slot };
            assert!(matches!(engine.submit(op), Submit::Queued));
        }
        // full: the fifth waits for a reap
        assert!(matches!(engine.submit(IoOp { dir: IoDir::Fsync, fd, offset: 0, len: 0, slot: 0 }), Submit::Busy));
        let mut out = Vec::new();
        assert_eq!(engine.reap(4, 4, &mut out).unwrap(), 4);
        let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, [0, 1, 2, 3]);
        assert!(out.iter().all(|c| matches!(c.result, Ok(4096))));
        out.clear();
        assert!(matches!(
            engine.submit(IoOp { dir: IoDir::Fdatasync, fd, offset: 0, len: 0, slot: 0 }),
            Submit::Queued
        ));
        assert_eq!(engine.reap(1, 1, &mut out).unwrap(), 1);
        assert!(matches!(out[0].result, Ok(0)));
        out.clear();
        // read back slot 2's block into slot 0; past the end is short
        engine.buffers().slot_mut(0).fill(0);
        assert!(matches!(
            engine.submit(IoOp { dir: IoDir::Read, fd, offset: 8192, len: 4096, slot: 0 }),
            Submit::Queued
        ));
        assert!(matches!(
            engine.submit(IoOp { dir: IoDir::Read, fd, offset: 16384, len: 4096, slot: 1 }),
            Submit::Queued
        ));
        assert_eq!(engine.reap(2, 4, &mut out).unwrap(), 2);
        for c in &out {
            let want = if c.slot == 0 { 4096 } else { 0 };
            assert_eq!(*c.result.as_ref().unwrap(), want);
        }
        assert!(engine.buffers().slot(0).iter().all(|&b| b == 3));
        assert_eq!(engine.reap(0, 4, &mut out).unwrap(), 0);
        drop(engine);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
