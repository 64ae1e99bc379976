//! fio's `io_submit_mode=offload` (`rate-submit.c`): the job's thread hands each I/O to a
//! pool of worker threads, one per `iodepth`, and goes on with its schedule while they do the
//! I/O, so a slow completion does not hold back the next submission.
//!
//! [`Offload<E>`] wraps any engine `E` as a queued engine of depth `iodepth`: `submit` hands
//! the I/O to an idle worker at once (fio's `workqueue_enqueue`) and answers `Queued`;
//! `reap` collects what the workers completed. Each worker owns its own `E`, set up with
//! `iodepth=1` as fio sets up its workers (`io_workqueue_init_worker_fn`), and does one I/O
//! at a time: a synchronous engine in the call, a queued one by commit and a reap of one.
//!
//! Each worker reads the clock itself when it issues the I/O and when it completes
//! ([`WorkerTimes`]), so latencies are the worker's, not the time the job's thread took to
//! reap them. As in fio, a synchronous engine's I/O has no submission latency.
//!
//! One difference from fio, which hands its workers the job's own buffer: a worker moves the
//! block between the job's slot and its engine's buffer (one copy, outside the timed
//! interval: before the issue for a write, after the completion for a read).

use crate::{Completion, Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// When a worker issued and completed one I/O, on the raw `quanta` clock (comparable with
/// any other `quanta::Clock`'s raw readings in the process).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerTimes {
    /// Just before the engine's submit (synchronous engines), or after its commit (queued).
    pub issued: u64,
    /// When the engine returned the completion.
    pub completed: u64,
    /// The worker's engine queues: its I/O has a submission latency (fio records none for a
    /// synchronous engine).
    pub slat: bool,
}

/// One I/O for a worker.
struct Job {
    slot: u32,
    dir: IoDir,
    fd: RawFd,
    offset: u64,
    len: usize,
    /// The job's slot buffer, `len` bytes used.
    buf: *mut u8,
}

// SAFETY: `buf` points into the slot buffers of the `Offload` that sent the job, which keeps
// them, unused by anyone else, until the job's completion is reaped, and joins its workers
// before they go.
unsafe impl Send for Job {}

/// One completed I/O from a worker.
struct Done {
    slot: u32,
    result: io::Result<usize>,
    issued: u64,
    completed: u64,
}

/// Engine `E` behind fio's submission workers. See the module documentation.
pub struct Offload<E: Engine> {
    buffers: SlotBuffers,
    /// Each worker's engine (worker i locks engine i for each I/O; `open_file` reaches all).
    engines: Arc<[Mutex<E>]>,
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    /// The times of each slot's last completed I/O.
    times: Vec<WorkerTimes>,
    depth: u32,
    in_flight: u32,
    slat: bool,
}

impl<E: Engine> std::fmt::Debug for Offload<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offload")
            .field("engine", &E::NAME)
            .field("depth", &self.depth)
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

/// A worker's engine setup: the job's, at `iodepth=1`.
fn worker_config(config: &EngineConfig) -> EngineConfig {
    EngineConfig { depth: 1, iodepth: 1, ..*config }
}

impl<E: Engine> Engine for Offload<E> {
    const NAME: &'static str = E::NAME;

    fn caps(config: &EngineConfig) -> EngineCaps {
        EngineCaps { sync: false, ..E::caps(&worker_config(config)) }
    }

    fn probe(config: &EngineConfig) -> Result<(), String> {
        E::probe(&worker_config(config))
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        let depth = config.depth.max(1);
        let inner = worker_config(config);
        let engines: Arc<[Mutex<E>]> =
            (0..depth).map(|_| E::new(&inner).map(Mutex::new)).collect::<io::Result<Vec<_>>>()?.into();
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (done_tx, done) = channel::<Done>();
        let mut me = Self {
            buffers: SlotBuffers::new(depth, config.slot_len, config.align),
            engines,
            jobs: Some(jobs),
            done,
            workers: Vec::with_capacity(depth as usize),
            times: vec![WorkerTimes::default(); depth as usize],
            depth,
            in_flight: 0,
            slat: !E::caps(&inner).sync,
        };
        for i in 0..depth as usize {
            let (engines, queue, done) = (Arc::clone(&me.engines), Arc::clone(&queue), done_tx.clone());
            let worker = std::thread::Builder::new()
                .name(format!("{} offload {i}", E::NAME))
                .spawn(move || work(&engines[i], &queue, &done))?;
            // On an error above, the workers started so far end when `me` drops.
            me.workers.push(worker);
        }
        Ok(me)
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    fn open_file(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        for e in self.engines.iter() {
            e.lock().unwrap_or_else(PoisonError::into_inner).open_file(fd)?;
        }
        Ok(())
    }

    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        if self.in_flight >= self.depth {
            return Submit::Busy;
        }
        let buf = self.buffers.slot_mut(op.slot).as_mut_ptr();
        let job = Job { slot: op.slot, dir: op.dir, fd: op.fd.as_raw_fd(), offset: op.offset, len: op.len, buf };
        match self.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => {
                self.in_flight += 1;
                Submit::Queued
            }
            _ => Submit::Completed(Err(io::Error::other("the offload workers are gone"))),
        }
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let mut n = 0;
        while n < max && self.in_flight > 0 {
            let done = if n < min {
                self.done.recv().map_err(|_| io::Error::other("the offload workers are gone"))?
            } else {
                match self.done.try_recv() {
                    Ok(d) => d,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Err(io::Error::other("the offload workers are gone")),
                }
            };
            self.take(done, out);
            n += 1;
        }
        Ok(n)
    }

    fn reap_within(&mut self, max: usize, out: &mut Vec<Completion>, timeout: Duration) -> io::Result<usize> {
        if self.in_flight == 0 || max == 0 {
            std::thread::sleep(timeout);
            return Ok(0);
        }
        match self.done.recv_timeout(timeout) {
            Ok(done) => self.take(done, out),
            Err(RecvTimeoutError::Timeout) => return Ok(0),
            Err(RecvTimeoutError::Disconnected) => return Err(io::Error::other("the offload workers are gone")),
        }
        Ok(1 + self.reap(0, max - 1, out)?)
    }

    fn worker_times(&self, slot: u32) -> Option<WorkerTimes> {
        self.times.get(slot as usize).copied()
    }
}

impl<E: Engine> Offload<E> {
    fn take(&mut self, done: Done, out: &mut Vec<Completion>) {
        self.in_flight -= 1;
        if let Some(t) = self.times.get_mut(done.slot as usize) {
            *t = WorkerTimes { issued: done.issued, completed: done.completed, slat: self.slat };
        }
        out.push(Completion { slot: done.slot, result: done.result });
    }
}

impl<E: Engine> Drop for Offload<E> {
    fn drop(&mut self) {
        // Closing the queue ends each worker after its current I/O: none is left in flight
        // on the buffers, which go after this.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A worker's life: take the next I/O, do it on its own engine, hand the completion back;
/// until the queue closes.
fn work<E: Engine>(engine: &Mutex<E>, queue: &Mutex<Receiver<Job>>, done: &Sender<Done>) {
    let clock = quanta::Clock::new();
    let mut out = Vec::with_capacity(1);
    loop {
        let job = match queue.lock().unwrap_or_else(PoisonError::into_inner).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let mut e = engine.lock().unwrap_or_else(PoisonError::into_inner);
        let (result, issued, completed) = one(&mut *e, &job, &clock, &mut out);
        drop(e);
        if done.send(Done { slot: job.slot, result, issued, completed }).is_err() {
            return;
        }
    }
}

/// One I/O on the worker's engine, with its issue and completion times.
fn one<E: Engine>(
    e: &mut E,
    job: &Job,
    clock: &quanta::Clock,
    out: &mut Vec<Completion>,
) -> (io::Result<usize>, u64, u64) {
    let data = (job.len > 0).then(|| {
        // SAFETY: see `Job`: the slot is this job's alone until its completion is reaped.
        unsafe { std::slice::from_raw_parts_mut(job.buf, job.len) }
    });
    let len = job.len.min(e.buffers().slot_len());
    if let (IoDir::Write, Some(data)) = (job.dir, data.as_deref()) {
        e.buffers().slot_mut(0)[..len].copy_from_slice(&data[..len]);
    }
    // SAFETY: the caller keeps the file open until the I/O is reaped (the `IoOp` contract).
    let fd = unsafe { BorrowedFd::borrow_raw(job.fd) };
    let op = IoOp { dir: job.dir, fd, offset: job.offset, len, slot: 0 };
    let before = clock.raw();
    let (result, issued) = match e.submit(op) {
        Submit::Completed(r) => (r, before),
        Submit::Queued => {
            out.clear();
            let committed = e.commit();
            let issued = clock.raw();
            let r = match committed.and_then(|()| e.reap(1, 1, out)) {
                Ok(_) => {
                    out.pop().map_or_else(|| Err(io::Error::other("the engine returned no completion")), |c| c.result)
                }
                Err(err) => Err(err),
            };
            (r, issued)
        }
        Submit::Busy => (Err(io::Error::other("the engine is busy with nothing out")), before),
    };
    let completed = clock.raw();
    if let (IoDir::Read, Some(data), Ok(n)) = (job.dir, data, result.as_ref()) {
        let n = (*n).min(len);
        data[..n].copy_from_slice(&e.buffers().slot(0)[..n]);
    }
    (result, issued, completed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{open_file, OpenFlags, Psync};
    use std::os::fd::AsFd;

    #[test]
    fn workers_move_the_slots_data_and_time_it() {
        let config = EngineConfig { depth: 4, slot_len: 4096, align: 4096, iodepth: 4, flags: Default::default() };
        assert!(!Offload::<Psync>::caps(&config).sync, "offloaded, a synchronous engine queues");
        let mut engine = Offload::<Psync>::new(&config).unwrap();
        let dir = std::env::temp_dir().join(format!("fsarena-offload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = open_file(&dir.join("f"), OpenFlags { write: true, read: true, create: true, ..Default::default() })
            .unwrap();
        let fd = file.as_fd();
        // Four writes out at once, one per worker; a fifth is refused until one is reaped.
        for slot in 0..4u32 {
            engine.buffers().slot_mut(slot).fill(slot as u8 + 1);
            let op = IoOp { dir: IoDir::Write, fd, offset: u64::from(slot) * 4096, len: 4096, slot };
            assert!(matches!(engine.submit(op), Submit::Queued));
        }
        let op = IoOp { dir: IoDir::Write, fd, offset: 0, len: 4096, slot: 0 };
        assert!(matches!(engine.submit(op), Submit::Busy));
        let mut out = Vec::new();
        assert_eq!(engine.reap(4, 4, &mut out).unwrap(), 4);
        for c in &out {
            assert_eq!(*c.result.as_ref().unwrap(), 4096);
            let t = engine.worker_times(c.slot).unwrap();
            assert!(t.completed >= t.issued && !t.slat, "{t:?}");
        }
        // Read back into other slots: each gets the block its offset holds.
        for slot in 0..4u32 {
            engine.buffers().slot_mut(slot).fill(0);
            let op = IoOp { dir: IoDir::Read, fd, offset: u64::from(3 - slot) * 4096, len: 4096, slot };
            assert!(matches!(engine.submit(op), Submit::Queued));
        }
        out.clear();
        let mut got = 0;
        while got < 4 {
            got += engine.reap_within(4, &mut out, Duration::from_secs(5)).unwrap();
        }
        for slot in 0..4u32 {
            assert!(engine.buffers().slot(slot).iter().all(|&b| b == 4 - slot as u8), "slot {slot}");
        }
        drop(engine);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
