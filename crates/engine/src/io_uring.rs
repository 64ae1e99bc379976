//! `ioengine=io_uring`: the kernel's io_uring through the `io-uring` crate, as fio's
//! `engines/io_uring.c` uses it.
//!
//! `submit` writes one SQE (no syscall); `commit` sends the queued SQEs in one
//! `io_uring_enter`; `reap(min, max)` takes what the completion ring holds and waits in the
//! kernel only for what is missing. fio's engine options map onto ring setup: `sqthread_poll`
//! (SQPOLL, with `sqthread_poll_cpu`), `hipri` (IOPOLL), `fixedbufs` (registered buffers,
//! READ_FIXED/WRITE_FIXED), `registerfiles` (registered files addressed by index) and
//! `nonvectored=0` (READV/WRITEV). Syncs are queued as IORING_OP_FSYNC, as fio does.
//!
//! Without SQPOLL the ring is set up SINGLE_ISSUER | DEFER_TASKRUN where the kernel has them
//! (6.1+): the clone's thread is the only submitter, and completions are posted when it
//! asks for them rather than by interrupting it, which is the cheapest way to run a ring.

use crate::{Completion, Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use io_uring::{opcode, squeue, types, IoUring as Ring};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

/// io_uring_enter's flag to process completions (linux/io_uring.h); the crate keeps its
/// `sys` module private.
const IORING_ENTER_GETEVENTS: u32 = 1;

/// The io_uring engine. See the module documentation.
pub struct IoUring {
    ring: Ring,
    buffers: SlotBuffers,
    /// One iovec per slot, for READV/WRITEV and for registering the buffers.
    iovecs: Vec<libc::iovec>,
    depth: u32,
    /// SQEs pushed and not yet reaped.
    in_flight: u32,
    fixedbufs: bool,
    vectored: bool,
    registerfiles: bool,
    /// Completions are only posted inside io_uring_enter (DEFER_TASKRUN).
    deferred: bool,
    /// SQPOLL: a kernel thread consumes the submission queue.
    sqpoll: bool,
    /// Files seen by `open_file`, registered together before the first I/O.
    files: Vec<RawFd>,
    /// Registered index of each raw fd (indexed by fd), once registered.
    fixed_index: Vec<u32>,
}

// SAFETY: the iovecs point into `buffers`, which the engine owns; nothing is shared with
// another thread, and the ring itself is Send.
unsafe impl Send for IoUring {}

impl std::fmt::Debug for IoUring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoUring").field("depth", &self.depth).field("in_flight", &self.in_flight).finish()
    }
}

/// Builds the ring `config` asks for; `fast` adds SINGLE_ISSUER | DEFER_TASKRUN.
fn build(config: &EngineConfig, fast: bool) -> io::Result<Ring> {
    let mut b = Ring::builder();
    let f = &config.flags;
    if f.hipri {
        b.setup_iopoll();
    }
    if f.sqthread_poll {
        b.setup_sqpoll(1000);
        if let Some(cpu) = f.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    } else if fast {
        b.setup_single_issuer().setup_defer_taskrun();
    }
    b.build(config.depth.max(1))
}

/// Why an io_uring ring cannot be set up, from the errno of io_uring_setup: one line for the
/// user, naming the cause and what to change.
pub fn uring_unavailable(err: &io::Error) -> String {
    let knob = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").map(|s| s.trim().to_string());
    match err.raw_os_error() {
        Some(libc::ENOSYS) => "io_uring is not available: this kernel has no io_uring (ENOSYS); use ioengine=libaio or psync".into(),
        Some(libc::EPERM) | Some(libc::EACCES) => match knob {
            Ok(v) if v != "0" => format!(
                "io_uring is not available: the kernel disables it (kernel.io_uring_disabled={v}); set it to 0 or use ioengine=libaio or psync"
            ),
            _ => "io_uring is not available: io_uring_setup is not permitted (EPERM: a seccomp filter or container policy); use ioengine=libaio or psync".into(),
        },
        Some(libc::ENOMEM) => {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Memlock).current;
            let limit = limit.map_or("unlimited".to_string(), |l| format!("{} KiB", l / 1024));
            format!("io_uring is not available: cannot lock memory for the ring (ENOMEM; RLIMIT_MEMLOCK is {limit}): raise it (ulimit -l) or lower iodepth")
        }
        Some(libc::EINVAL) => format!("io_uring is not available with these options: the kernel refuses the ring setup ({err}); drop sqthread_poll/hipri or lower iodepth"),
        _ => format!("io_uring is not available: io_uring_setup failed: {err}"),
    }
}

impl IoUring {
    /// The fd as the SQE names it: a registered index, or the fd itself.
    #[inline(always)]
    fn target(&self, fd: RawFd) -> Result<types::Fixed, types::Fd> {
        if self.registerfiles {
            if let Some(&i) = self.fixed_index.get(fd as usize) {
                if i != u32::MAX {
                    return Ok(types::Fixed(i));
                }
            }
        }
        Err(types::Fd(fd))
    }

    /// Registers the files `open_file` announced, once, before the first I/O.
    fn register_files(&mut self) -> io::Result<()> {
        if self.files.is_empty() || !self.fixed_index.is_empty() {
            return Ok(());
        }
        self.ring.submitter().register_files(&self.files)?;
        let top = self.files.iter().copied().max().unwrap_or(0).max(0) as usize;
        self.fixed_index = vec![u32::MAX; top + 1];
        for (i, &fd) in self.files.iter().enumerate() {
            self.fixed_index[fd as usize] = i as u32;
        }
        Ok(())
    }

    fn sqe(&self, op: &IoOp<'_>) -> squeue::Entry {
        let fd = op.fd.as_raw_fd();
        let ptr = self.iovecs[op.slot as usize].iov_base.cast::<u8>();
        let len = op.len as u32;
        macro_rules! on {
            ($target:expr) => {{
                let t = $target;
                match op.dir {
                    IoDir::Read if self.fixedbufs => {
                        opcode::ReadFixed::new(t, ptr, len, op.slot as u16).offset(op.offset).build()
                    }
                    IoDir::Write if self.fixedbufs => {
                        opcode::WriteFixed::new(t, ptr, len, op.slot as u16).offset(op.offset).build()
                    }
                    IoDir::Read if self.vectored => opcode::Readv::new(t, self.iovec(op), 1).offset(op.offset).build(),
                    IoDir::Write if self.vectored => {
                        opcode::Writev::new(t, self.iovec(op), 1).offset(op.offset).build()
                    }
                    IoDir::Read => opcode::Read::new(t, ptr, len).offset(op.offset).build(),
                    IoDir::Write => opcode::Write::new(t, ptr, len).offset(op.offset).build(),
                    IoDir::Fsync => opcode::Fsync::new(t).build(),
                    IoDir::Fdatasync => opcode::Fsync::new(t).flags(types::FsyncFlags::DATASYNC).build(),
                }
            }};
        }
        let entry = match self.target(fd) {
            Ok(fixed) => on!(fixed),
            Err(plain) => on!(plain),
        };
        entry.user_data(u64::from(op.slot))
    }

    /// The slot's iovec, trimmed to this I/O's length.
    fn iovec(&self, op: &IoOp<'_>) -> *const libc::iovec {
        // The iovec must stay valid until the I/O is reaped: it lives in `self.iovecs`, and the
        // slot is not reused before then. Its length is set per I/O in `submit`.
        &self.iovecs[op.slot as usize]
    }

    /// Moves up to `max` completions from the ring to `out`.
    fn harvest(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion().take(max) {
            let res = cqe.result();
            let result = if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as usize) };
            out.push(Completion { slot: cqe.user_data() as u32, result });
            n += 1;
        }
        self.in_flight -= n as u32;
        n
    }
}

impl Engine for IoUring {
    const NAME: &'static str = "io_uring";

    fn caps(_config: &EngineConfig) -> EngineCaps {
        EngineCaps { sync: false, diskless: false, aligned_buffers: true, direct: true, file_op: None }
    }

    fn probe(config: &EngineConfig) -> Result<(), String> {
        let f = &config.flags;
        if f.hipri && !f.direct {
            return Err("hipri=1 needs direct=1: polled completions (IOPOLL) exist only for O_DIRECT I/O".into());
        }
        if f.fixedbufs && config.depth > 16384 {
            return Err(format!(
                "fixedbufs=1 registers one buffer per I/O: iodepth={} is above the kernel's 16384",
                config.depth
            ));
        }
        if f.sqthread_poll_cpu.is_some() && !f.sqthread_poll {
            return Err("sqthread_poll_cpu needs sqthread_poll=1".into());
        }
        build(config, false).map(drop).map_err(|e| uring_unavailable(&e))
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        let ring = match build(config, true) {
            Ok(r) => r,
            // Kernels before 6.1 refuse DEFER_TASKRUN: a plain ring does the same work.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => build(config, false)?,
            Err(e) => return Err(e),
        };
        let deferred = !config.flags.sqthread_poll && ring.params().is_setup_single_issuer();
        let mut buffers = SlotBuffers::new(config.depth, config.slot_len, config.align);
        let iovecs: Vec<libc::iovec> = (0..buffers.slots())
            .map(|i| {
                let s = buffers.slot_mut(i);
                libc::iovec { iov_base: s.as_mut_ptr().cast(), iov_len: s.len() }
            })
            .collect();
        if config.flags.fixedbufs {
            // SAFETY: the iovecs point into `buffers`, which lives as long as the ring (both
            // are fields of the engine, and the ring is dropped after in-flight I/O is reaped).
            unsafe { ring.submitter().register_buffers(&iovecs)? };
        }
        Ok(Self {
            ring,
            buffers,
            iovecs,
            depth: config.depth.max(1),
            in_flight: 0,
            fixedbufs: config.flags.fixedbufs,
            vectored: config.flags.vectored,
            registerfiles: config.flags.registerfiles,
            deferred,
            sqpoll: config.flags.sqthread_poll,
            files: Vec::new(),
            fixed_index: Vec::new(),
        })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    fn open_file(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        if self.registerfiles && !self.files.contains(&fd.as_raw_fd()) {
            self.files.push(fd.as_raw_fd());
        }
        Ok(())
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        if self.in_flight >= self.depth {
            return Submit::Busy;
        }
        if self.registerfiles && self.fixed_index.is_empty() {
            if let Err(e) = self.register_files() {
                return Submit::Completed(Err(e));
            }
        }
        if self.vectored {
            self.iovecs[op.slot as usize].iov_len = op.len;
        }
        let entry = self.sqe(&op);
        // SAFETY: the buffer, iovec and fd named by the SQE stay valid until it is reaped: the
        // caller keeps the fd open and the slot unused until then, and Drop waits for it.
        let mut pushed = unsafe { self.ring.submission().push(&entry) }.is_ok();
        // With SQPOLL the kernel thread can post an I/O's completion (one that completes
        // inline, as on tmpfs) before it moves the submission queue's head past it: the queue
        // looks full with nothing in flight. Wait for the thread to take the entries.
        let mut tries = 0;
        while !pushed && self.sqpoll && tries < 1000 {
            tries += 1;
            match self.ring.submitter().squeue_wait() {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Submit::Completed(Err(e)),
            }
            // SAFETY: as above.
            pushed = unsafe { self.ring.submission().push(&entry) }.is_ok();
        }
        if !pushed {
            return Submit::Busy;
        }
        self.in_flight += 1;
        Submit::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // The completion ring is full: the caller reaps, and the SQEs stay queued.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let max = max.max(min);
        let mut got = self.harvest(max, out);
        if got == 0 && min == 0 && self.deferred && self.in_flight > 0 {
            // With DEFER_TASKRUN, completions are posted only inside io_uring_enter: a poll
            // must enter (without waiting) to see them.
            // SAFETY: no argument pointer is passed.
            unsafe { self.ring.submitter().enter::<()>(0, 0, IORING_ENTER_GETEVENTS, None)? };
            got = self.harvest(max, out);
        }
        while got < min && self.in_flight > 0 {
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) => {}
                Err(e) => return Err(e),
            }
            got += self.harvest(max - got, out);
        }
        Ok(got)
    }
}

impl Drop for IoUring {
    fn drop(&mut self) {
        // The kernel may still write into the buffers: wait for everything out before they go.
        let mut out = Vec::new();
        while self.in_flight > 0 {
            out.clear();
            if self.reap(self.in_flight as usize, self.in_flight as usize, &mut out).is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
#[path = "io_uring_tests.rs"]
mod tests;
