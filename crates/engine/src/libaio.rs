//! `ioengine=libaio`: the kernel's native AIO (io_setup, io_submit, io_getevents), called as
//! raw syscalls, as fio's `engines/libaio.c` calls them through libaio.
//!
//! `submit` fills an iocb (no syscall); `commit` sends the queued iocbs with one io_submit;
//! `reap(min, max)` is one io_getevents. Syncs complete in `submit` once nothing is out, as
//! fio's libaio does (`do_io_u_sync`; the AIO fsync command is not used).
//!
//! Linux runs AIO asynchronously only for O_DIRECT files: buffered I/O completes inside
//! io_submit. fio says so in its documentation; the plan-time probe prints it once per run
//! when a job uses libaio without `direct=1`.

use crate::{Completion, Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// fio's HOWTO on libaio with buffered I/O, printed once per run.
pub const BUFFERED_WARNING: &str = "fsarena: ioengine=libaio: Linux may only support queued behavior with non-buffered I/O (set direct=1 or buffered=0)";

/// `struct iocb` of linux/aio_abi.h (little-endian layout: key before rw_flags).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    lio_opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event` of linux/aio_abi.h.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// The libaio engine. See the module documentation.
pub struct Libaio {
    ctx: libc::c_ulong,
    buffers: SlotBuffers,
    /// One iocb per slot; the kernel reads it during io_submit only.
    iocbs: Vec<Iocb>,
    /// Pointers to the iocbs queued since the last commit, in order.
    queued: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    depth: u32,
    /// Queued or submitted, not reaped.
    in_flight: u32,
}

// SAFETY: the raw pointers point into `iocbs`, owned by the engine; the AIO context belongs
// to the process, so the engine may move between threads.
unsafe impl Send for Libaio {}

impl std::fmt::Debug for Libaio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libaio").field("depth", &self.depth).field("in_flight", &self.in_flight).finish()
    }
}

fn check(ret: libc::c_long) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

impl Engine for Libaio {
    const NAME: &'static str = "libaio";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        EngineCaps { sync: false, diskless: false, aligned_buffers: true, direct: true, file_op: None }
    }

    fn probe(config: &EngineConfig) -> Result<(), String> {
        if !config.flags.direct {
            // Said at plan time, in the process that plans, once however many jobs use it.
            static ONCE: std::sync::Once = std::sync::Once::new();
            // Written, not eprintln!: a closed stderr must not panic (issue 28).
            ONCE.call_once(|| {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "{BUFFERED_WARNING}");
            });
        }
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into `ctx`.
        let ret = unsafe { libc::syscall(libc::SYS_io_setup, config.depth.max(1) as libc::c_long, &mut ctx) };
        if let Err(e) = check(ret) {
            let max = std::fs::read_to_string("/proc/sys/fs/aio-max-nr").unwrap_or_default();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS) => "libaio is not available: this kernel has no AIO (ENOSYS, CONFIG_AIO=n); use io_uring or psync".into(),
                Some(libc::EAGAIN) => format!("libaio is not available: iodepth={} exceeds the AIO events left (fs.aio-max-nr={}); raise it or lower iodepth", config.depth, max.trim()),
                Some(libc::EPERM) => "libaio is not available: io_setup is not permitted (EPERM: a seccomp filter); use psync".into(),
                _ => format!("libaio is not available: io_setup failed: {e}"),
            });
        }
        // SAFETY: ctx came from io_setup above.
        unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
        Ok(())
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        let depth = config.depth.max(1);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into `ctx`.
        check(unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) })?;
        Ok(Self {
            ctx,
            buffers: SlotBuffers::new(depth, config.slot_len, config.align),
            iocbs: vec![Iocb::default(); depth as usize],
            queued: Vec::with_capacity(depth as usize),
            events: vec![IoEvent::default(); depth as usize],
            depth,
            in_flight: 0,
        })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        let opcode = match op.dir {
            IoDir::Read => IOCB_CMD_PREAD,
            IoDir::Write => IOCB_CMD_PWRITE,
            dir => {
                // As fio: a sync waits for the queue to empty, then runs in the call.
                if self.in_flight > 0 {
                    return Submit::Busy;
                }
                let r = if dir == IoDir::Fdatasync { rustix::fs::fdatasync(op.fd) } else { rustix::fs::fsync(op.fd) };
                return Submit::Completed(r.map(|()| 0).map_err(io::Error::from));
            }
        };
        if self.in_flight >= self.depth {
            return Submit::Busy;
        }
        let buf = self.buffers.slot_mut(op.slot).as_mut_ptr() as u64;
        let cb = &mut self.iocbs[op.slot as usize];
        *cb = Iocb {
            data: u64::from(op.slot),
            lio_opcode: opcode,
            fildes: op.fd.as_raw_fd() as u32,
            buf,
            nbytes: op.len as u64,
            offset: op.offset as i64,
            ..Iocb::default()
        };
        self.queued.push(cb);
        self.in_flight += 1;
        Submit::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        let mut sent = 0;
        while sent < self.queued.len() {
            let rest = &mut self.queued[sent..];
            // SAFETY: each pointer is an iocb of `self.iocbs` naming a live slot buffer and an
            // fd the caller keeps open until the I/O is reaped.
            let ret =
                unsafe { libc::syscall(libc::SYS_io_submit, self.ctx, rest.len() as libc::c_long, rest.as_mut_ptr()) };
            match check(ret) {
                Ok(n) => sent += n,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) => {
                    std::thread::yield_now();
                }
                Err(e) => {
                    // What was not sent will not complete.
                    self.in_flight -= (self.queued.len() - sent) as u32;
                    self.queued.clear();
                    return Err(e);
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let max = max.max(min).min(self.events.len());
        let mut got = 0;
        loop {
            let want = min.saturating_sub(got);
            // SAFETY: `events` has room for `max - got` events; a null timeout waits for `want`.
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    want as libc::c_long,
                    (max - got) as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            let n = match check(ret) {
                Ok(n) => n,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => 0,
                Err(e) => return Err(e),
            };
            for ev in &self.events[..n] {
                let result =
                    if ev.res < 0 { Err(io::Error::from_raw_os_error(-ev.res as i32)) } else { Ok(ev.res as usize) };
                out.push(Completion { slot: ev.data as u32, result });
            }
            got += n;
            self.in_flight -= n as u32;
            if got >= min || self.in_flight == 0 {
                return Ok(got);
            }
        }
    }

    fn open_file(&mut self, _fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // Nothing queued reaches the kernel now; wait for what did before the buffers go.
        self.in_flight -= self.queued.len() as u32;
        self.queued.clear();
        let mut out = Vec::new();
        while self.in_flight > 0 {
            out.clear();
            let n = self.in_flight as usize;
            if self.reap(n, n, &mut out).is_err() {
                break;
            }
        }
        // SAFETY: ctx came from io_setup and is destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::EngineFlags;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn abi_structs_match_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }

    #[test]
    fn reads_and_writes_complete_through_getevents() {
        let dir = std::env::temp_dir().join(format!("fsarena-libaio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![5u8; 64 << 10]).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        let config = EngineConfig { depth: 8, slot_len: 4096, align: 4096, iodepth: 8, flags: EngineFlags::default() };
        assert!(Libaio::probe(&config).is_ok());
        let mut e = Libaio::new(&config).unwrap();
        for slot in 0..8 {
            let op = IoOp { dir: IoDir::Read, fd: f.as_fd(), offset: u64::from(slot) * 4096, len: 4096, slot };
            assert!(matches!(e.submit(op), Submit::Queued));
        }
        let op = IoOp { dir: IoDir::Read, fd: f.as_fd(), offset: 0, len: 4096, slot: 0 };
        assert!(matches!(e.submit(op), Submit::Busy), "a ninth I/O at depth 8 is refused");
        let sync = IoOp { dir: IoDir::Fsync, fd: f.as_fd(), offset: 0, len: 0, slot: 0 };
        assert!(matches!(e.submit(sync), Submit::Busy), "a sync waits for the queue to empty");
        e.commit().unwrap();
        let mut out = Vec::new();
        let mut got = 0;
        while got < 8 {
            got += e.reap(1, 8, &mut out).unwrap();
        }
        assert_eq!(out.len(), 8);
        let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..8).collect::<Vec<_>>());
        assert!(out.iter().all(|c| matches!(c.result, Ok(4096))));
        assert!(e.buffers().slot(3).iter().all(|&b| b == 5));
        assert!(matches!(e.submit(sync), Submit::Completed(Ok(0))));
        // A write lands where it was asked to.
        e.buffers().slot_mut(1).fill(9);
        let op = IoOp { dir: IoDir::Write, fd: f.as_fd(), offset: 4096, len: 4096, slot: 1 };
        assert!(matches!(e.submit(op), Submit::Queued));
        e.commit().unwrap();
        out.clear();
        assert_eq!(e.reap(1, 1, &mut out).unwrap(), 1);
        let data = std::fs::read(&path).unwrap();
        assert!(data[4096..8192].iter().all(|&b| b == 9) && data[0] == 5);
        drop(e);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
