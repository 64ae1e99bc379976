//! aiowrite and aiowait (filebench's `fb_lfsflow_aiowrite` / `fb_lfsflow_aiowait`) on the
//! io_uring engine of fsarena_engine, one ring per thread that has an aiowrite.
//!
//! aiowrite picks its file as a write does (fd slot, opennext), draws a random offset within
//! the working set (filebench's asynchronous writes are random only), queues one write of
//! `iosize` and returns: its time is the submission's, its bytes `iosize`, as filebench's.
//! aiowait waits for half the thread's outstanding writes, at least one (none when none are
//! outstanding), and more while over 4096 remain, as filebench's (`MAXREAP`); its time is the
//! wait's.
//!
//! Differences by design: filebench's queue is unbounded (POSIX AIO); here a thread has at
//! most [`depth`] writes out, and an aiowrite beyond that first waits for one to complete
//! (not timed as aiowait). Every write keeps its file open until it is reaped, so `opennext`
//! may move on while the previous file's writes are still in flight.

use super::{End, Outcome, Step, Worker};
use crate::filebench::vocabulary::{Flowop, Kind};
use fsarena_engine::{Completion, Engine, EngineConfig, EngineFlags, IoDir, IoOp, IoUring, Submit};
use fsarena_workload::phase::OpTimer;
use rustix::fd::{AsFd, OwnedFd};
use std::io;
use std::rc::Rc;

/// filebench's MAXREAP: aiowait reaps again while more than this many are outstanding.
const MAXREAP: usize = 4096;

/// The most writes one thread keeps in flight.
const MAX_DEPTH: u64 = 1024;

/// The most memory one thread's write buffers take (a slot per write in flight).
const MAX_BUFFERS: u64 = 64 << 20;

/// The aiowrite flowops of a thread's list.
fn writers(flowops: &[Flowop]) -> impl Iterator<Item = &Flowop> {
    flowops.iter().filter(|f| f.kind == Kind::AioWrite)
}

/// The largest aiowrite of the list (0: it has none).
fn slot_len(flowops: &[Flowop]) -> u64 {
    writers(flowops).map(|f| f.iosize).max().unwrap_or(0)
}

/// Writes a thread keeps in flight at most: twice what one pass of its list issues (oltp's
/// dbwr issues 100 and then waits for half, so it peaks at 200), within 1024 and 64 MiB of
/// buffers; 0 when the list has no aiowrite.
pub fn depth(flowops: &[Flowop]) -> u32 {
    let per_pass: u64 = writers(flowops).map(|f| f.iters).sum();
    if per_pass == 0 {
        return 0;
    }
    let by_memory = (MAX_BUFFERS / slot_len(flowops).max(1)).max(1);
    (per_pass * 2).clamp(1, MAX_DEPTH.min(by_memory)) as u32
}

/// Bytes of write buffers a thread running `flowops` allocates (for the footprint).
pub fn buffer_bytes(flowops: &[Flowop]) -> u64 {
    u64::from(depth(flowops)) * slot_len(flowops).next_multiple_of(4096)
}

/// The ring a thread running `flowops` sets up, `None` when it has no aiowrite.
pub fn config(flowops: &[Flowop]) -> Option<EngineConfig> {
    let depth = depth(flowops);
    (depth > 0).then(|| EngineConfig {
        depth,
        slot_len: slot_len(flowops) as usize,
        align: 4096,
        iodepth: depth,
        flags: EngineFlags { direct: writers(flowops).any(|f| f.directio), ..EngineFlags::default() },
    })
}

/// One thread's asynchronous writes.
pub struct Aio {
    /// Declared first so that it is dropped first: its Drop waits for the writes in flight,
    /// while their files (below) are still open.
    engine: IoUring,
    /// Slots with no write in flight.
    free: Vec<u32>,
    /// Per slot in flight: its file (kept open until reaped) and its length.
    inflight: Vec<Option<(Rc<OwnedFd>, usize)>>,
    outstanding: usize,
    done: Vec<Completion>,
}

impl std::fmt::Debug for Aio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aio").field("outstanding", &self.outstanding).finish_non_exhaustive()
    }
}

impl Aio {
    /// A ring and its buffers as `config` says.
    pub fn new(config: &EngineConfig) -> io::Result<Self> {
        let engine = IoUring::new(config)?;
        let slots = config.depth.max(1);
        Ok(Aio {
            engine,
            free: (0..slots).rev().collect(),
            inflight: (0..slots).map(|_| None).collect(),
            outstanding: 0,
            done: Vec::new(),
        })
    }

    /// Writes in flight.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Queues a write of `len` bytes at `offset` of `fd` and sends it; with every slot in
    /// flight, first waits for one to complete.
    pub fn write(&mut self, fd: &Rc<OwnedFd>, offset: u64, len: usize) -> io::Result<()> {
        if self.free.is_empty() {
            self.wait(1)?;
        }
        let slot = self.free.pop().ok_or_else(|| io::Error::other("no write slot free after a completion"))?;
        loop {
            let op = IoOp { dir: IoDir::Write, fd: fd.as_fd(), offset, len, slot };
            match self.engine.submit(op) {
                Submit::Queued => break,
                Submit::Busy => {
                    if let Err(e) = self.wait(1) {
                        self.free.push(slot);
                        return Err(e);
                    }
                }
                Submit::Completed(r) => {
                    self.free.push(slot);
                    return r.map(drop);
                }
            }
        }
        self.inflight[slot as usize] = Some((Rc::clone(fd), len));
        self.outstanding += 1;
        // Sent now, not batched: the kernel takes its own reference to the file at submission,
        // and a write waiting in the queue would show no latency to aiowait.
        self.engine.commit()
    }

    /// Waits for at least `min` writes (at most those outstanding) and reaps all that are done.
    /// A failed or short write is an error, after every completion was taken.
    pub fn wait(&mut self, min: usize) -> io::Result<usize> {
        self.done.clear();
        let min = min.min(self.outstanding);
        let n = self.engine.reap(min, self.outstanding.max(1), &mut self.done)?;
        let mut failed = None;
        for c in self.done.drain(..) {
            let Some((_, len)) = self.inflight.get_mut(c.slot as usize).and_then(Option::take) else { continue };
            self.free.push(c.slot);
            self.outstanding -= 1;
            match c.result {
                Ok(n) if n == len => {}
                Ok(n) => failed = Some(io::Error::other(format!("short write: {n} of {len} bytes"))),
                Err(e) => failed = Some(e),
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }
}

impl Worker<'_> {
    /// The thread's ring, set up on its first aiowrite.
    fn aio(&mut self, op: &Flowop) -> Result<&mut Aio, End> {
        if self.aio.is_none() {
            let config = config(&self.steps.iter().map(|s| s.op.clone()).collect::<Vec<_>>())
                .ok_or_else(|| Self::fail(op, "aiowrite", "no aiowrite in the thread's list"))?;
            let aio =
                Aio::new(&config).map_err(|e| Self::fail(op, "io_uring", fsarena_engine::uring_unavailable(&e)))?;
            self.aio = Some(aio);
        }
        self.aio.as_mut().ok_or(End::Over)
    }

    /// aiowrite: one random write of iosize, queued.
    pub(super) fn aiowrite(&mut self, step: Step<'_>) -> Outcome {
        let op = step.op;
        let (set, entry, fd) = {
            let f = self.file(step, op.fd)?;
            (f.set, f.entry, Rc::clone(&f.fd))
        };
        let size = self.sh.filesets[set].entry(entry).1;
        let wss = if op.workingset > 0 { op.workingset } else { size };
        let len = op.iosize;
        let offset = self.random_offset(op, wss, len)?;
        let aio = self.aio(op)?;
        let t0 = OpTimer::start();
        aio.write(&fd, offset, len as usize).map_err(|e| Self::fail(op, "aiowrite", e))?;
        self.record(step, t0, len);
        Ok(())
    }

    /// aiowait: half the outstanding writes, at least one, as filebench's.
    pub(super) fn aiowait(&mut self, step: Step<'_>) -> Outcome {
        let op = step.op;
        let t0 = OpTimer::start();
        if let Some(aio) = self.aio.as_mut() {
            loop {
                let todo = (aio.outstanding() / 2).clamp(1, MAXREAP);
                aio.wait(todo).map_err(|e| Self::fail(op, "aiowait", e))?;
                if aio.outstanding() <= MAXREAP {
                    break;
                }
            }
        }
        self.record(step, t0, 0);
        Ok(())
    }

    /// At the thread's end: waits for every write still out (untimed); a failed one is the
    /// thread's error.
    pub(super) fn drain_aio(&mut self) -> Result<(), String> {
        let Some(aio) = self.aio.as_mut() else { return Ok(()) };
        while aio.outstanding() > 0 {
            aio.wait(aio.outstanding()).map_err(|e| format!("an asynchronous write failed: {e}"))?;
        }
        Ok(())
    }
}
