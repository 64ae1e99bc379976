//! I/O engines: how a workload's reads, writes and metadata calls reach the kernel.
//!
//! The data path follows fio's `ioengines.h`: an engine declares its [`EngineCaps`] up front,
//! and [`Engine::submit`] answers [`Submit::Completed`] (a synchronous engine did the I/O in
//! the call), [`Submit::Queued`] (an asynchronous engine took it; [`Engine::commit`] sends
//! what is queued, [`Engine::reap`] collects completions) or [`Submit::Busy`] (no room: commit
//! and reap, then submit again). So synchronous and asynchronous engines share one loop with
//! a queue depth ([`QueueDepth`], fio's `iodepth*` options).
//!
//! The hot loop of a workload is generic over [`Engine`] and picked once per thread through
//! the [`registry`] ([`with_engine`]), so each engine's calls inline into it: no virtual call,
//! no allocation and no syscall beyond the I/O itself.
//!
//! Metadata calls (mkdir, create, stat, rename, ...) go through [`FsOps`].

mod buffer;
mod depth;
mod falloc;
mod file;
mod fileop;
mod fsops;
mod io_uring;
mod libaio;
mod mmap;
mod noio;
mod null;
mod offload;
mod posixaio;
pub mod registry;
mod sync;

pub use buffer::{AlignedBuf, SlotBuffers};
pub use depth::QueueDepth;
pub use falloc::{Falloc, Ftruncate};
pub use file::{dio_alignment, filesystem_name, open_file, OpenFlags, O_DSYNC};
pub use fileop::{FileCreate, FileDelete, FileOp, FileStat, StatType};
pub use fsops::{FsOps, PsyncFsOps};
pub use io_uring::{uring_unavailable, IoUring};
pub use libaio::Libaio;
pub use mmap::Mmap;
pub use noio::{CpuIo, Exec, Net};
pub use null::Null;
pub use offload::{Offload, WorkerTimes};
pub use posixaio::PosixAio;
pub use registry::{with_engine, with_engine_mode, EngineError, EngineKind, EngineVisitor, ENGINES};
pub use sync::{Psync, Sync};

use std::io;
use std::os::fd::BorrowedFd;
use std::time::Duration;

/// What an I/O does. fio models fsync as a direction too (`DDIR_SYNC`), so that an engine
/// that moves no data (`null`) also skips the sync, and an async engine may queue it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoDir {
    /// Read `len` bytes at `offset` into the slot's buffer.
    Read,
    /// Write `len` bytes of the slot's buffer at `offset`.
    Write,
    /// fsync(2) the file.
    Fsync,
    /// fdatasync(2) the file.
    Fdatasync,
}

/// One I/O handed to [`Engine::submit`].
#[derive(Debug, Clone, Copy)]
pub struct IoOp<'fd> {
    /// Read, write or sync.
    pub dir: IoDir,
    /// The open file; it stays open until the I/O is reaped.
    pub fd: BorrowedFd<'fd>,
    /// Byte offset in the file (ignored by syncs).
    pub offset: u64,
    /// Bytes to move, at most the slot length (0 for syncs).
    pub len: usize,
    /// Which buffer of [`Engine::buffers`] the data is in or goes to; returned in the
    /// [`Completion`], so the caller finds its own record of the I/O. A slot is reused only
    /// after its I/O was reaped.
    pub slot: u32,
}

/// The answer to [`Engine::submit`], as fio's `enum fio_q_status`.
#[derive(Debug)]
pub enum Submit {
    /// Done in the call (synchronous engines): bytes moved (short at end of file) or the error.
    Completed(io::Result<usize>),
    /// Taken; it is sent by [`Engine::commit`] and comes back from [`Engine::reap`].
    Queued,
    /// Not taken, the queue is full: commit and reap, then submit it again.
    Busy,
}

/// A finished queued I/O, from [`Engine::reap`].
#[derive(Debug)]
pub struct Completion {
    /// The slot of the [`IoOp`].
    pub slot: u32,
    /// Bytes moved or the error.
    pub result: io::Result<usize>,
}

/// What an engine is, declared before it runs (fio's `FIO_*` engine flags), so the workload
/// can plan without trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineCaps {
    /// `submit` always completes in the call (`FIO_SYNCIO`): `iodepth` is ignored, as in fio.
    pub sync: bool,
    /// No disk involved (`FIO_DISKLESSIO | FIO_FAKEIO`): the workload lays out no files, opens
    /// none and verifies nothing; the engine pretends every I/O moved all its bytes.
    pub diskless: bool,
    /// Buffers must be aligned to the page (`FIO_MEMALIGN`), even without O_DIRECT.
    pub aligned_buffers: bool,
    /// O_DIRECT files may be used with it.
    pub direct: bool,
    /// The engine acts on whole files, not on their data (fio's `filecreate`, `filestat`,
    /// `filedelete`): the workload times one such call per file opening and counts the
    /// file's I/Os as done without moving them (`FIO_FAKEIO`); see [`FileOp`].
    pub file_op: Option<FileOp>,
}

/// How an engine is set up for one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Queue depth the engine must hold (1 for synchronous engines): the number of buffer
    /// slots.
    pub depth: u32,
    /// Bytes of each buffer slot (the largest block size).
    pub slot_len: usize,
    /// Alignment of each slot (a power of two; the O_DIRECT memory alignment or the page).
    pub align: usize,
    /// The job's `iodepth` as given: fio's null engine is synchronous at 1 and queues above.
    pub iodepth: u32,
    /// The job's direct flag and the engine-specific options (fio's `io_uring` options).
    pub flags: EngineFlags,
}

/// The job options an engine reads besides the queue: `direct` and fio's engine-specific
/// options of `io_uring` (engines that have no such option ignore them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineFlags {
    /// Files are opened O_DIRECT (`direct=1`): libaio is asynchronous only then.
    pub direct: bool,
    /// `fixedbufs`: register the slot buffers with the ring, use READ_FIXED/WRITE_FIXED.
    pub fixedbufs: bool,
    /// `registerfiles`: register the job's files with the ring, address them by index.
    pub registerfiles: bool,
    /// `sqthread_poll`: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu`: the CPU that thread is bound to.
    pub sqthread_poll_cpu: Option<u32>,
    /// `hipri`: polled completions (IORING_SETUP_IOPOLL); needs `direct=1`.
    pub hipri: bool,
    /// `nonvectored=0`: READV/WRITEV with one iovec instead of READ/WRITE. fio's default (-1)
    /// probes the kernel and uses READ/WRITE wherever they exist (5.6+), as this does.
    pub vectored: bool,
}

/// An I/O engine. Contract, as fio's `ioengine_ops`:
///
/// - [`submit`](Engine::submit) either completes the I/O (synchronous engines always do),
///   queues it, or refuses it with `Busy` when it holds `depth` I/Os already;
/// - [`commit`](Engine::commit) sends what is queued (`iodepth_batch_submit` decides how
///   often); an engine that sends in `submit` keeps the default;
/// - [`reap`](Engine::reap) waits for at least `min` completions (0: do not wait) and returns
///   at most `max`;
/// - an engine that can have I/O in flight waits for it in `Drop`, before its buffers go.
pub trait Engine: Send + 'static {
    /// fio's name for it (`psync`, `null`, ...).
    const NAME: &'static str;

    /// Its capabilities for this configuration.
    fn caps(config: &EngineConfig) -> EngineCaps
    where
        Self: Sized;

    /// Checks at plan time, before anything is created, that the engine can run with
    /// `config` on this machine; the error says why not (one line). Default: it can.
    fn probe(_config: &EngineConfig) -> Result<(), String>
    where
        Self: Sized,
    {
        Ok(())
    }

    /// An engine for one thread, with `config.depth` buffer slots.
    fn new(config: &EngineConfig) -> io::Result<Self>
    where
        Self: Sized;

    /// The engine's buffers: the caller fills a slot before a write and reads it after a read.
    fn buffers(&mut self) -> &mut SlotBuffers;

    /// A file the workload opened is about to be used (fio's `open_file` hook: an engine may
    /// register it). Default: nothing.
    fn open_file(&mut self, _fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Starts one I/O; see the trait's contract.
    fn submit(&mut self, op: IoOp<'_>) -> Submit;

    /// Sends the queued I/Os. Default: nothing (synchronous engines).
    fn commit(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Appends between `min` and `max` completions to `out` (fewer than `min` only when fewer
    /// are in flight) and returns how many. Default: none (synchronous engines).
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<usize> {
        Ok(0)
    }

    /// Waits up to `timeout` for a completion and appends at most `max` (fio's job thread
    /// sleeping on its rate schedule while offloaded I/O completes). Default: sleeps the
    /// whole `timeout`, then takes what is done without waiting.
    fn reap_within(&mut self, max: usize, out: &mut Vec<Completion>, timeout: Duration) -> io::Result<usize> {
        std::thread::sleep(timeout);
        self.reap(0, max, out)
    }

    /// When the I/O last reaped from `slot` was issued and completed, for an engine whose
    /// I/O is done on other threads ([`Offload`]): the caller's own clock readings would time
    /// the hand-off and the reaping instead. Default: `None`, the caller times it.
    fn worker_times(&self, _slot: u32) -> Option<WorkerTimes> {
        None
    }
}
