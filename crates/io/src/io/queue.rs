//! The measured loop of one clone, over any engine: choose an I/O, submit it, and account it
//! when it completes — in the call for synchronous engines, or when reaped for queued ones,
//! with fio's queue-depth rules ([`QueueDepth`]).
//!
//! Timing: one clock read per completion event. A synchronous I/O's latency runs from the end
//! of the previous event to the end of this one, so the loop's own bookkeeping (tens of
//! nanoseconds) is counted in the next I/O rather than costing a second clock read. A queued
//! I/O's latency runs from the commit that sent it to the reap that returned it (fio's clat
//! for async engines: issue time is taken after commit).
//!
//! Queued engines also time submission, as fio does for them: one more clock read when the
//! I/O is prepared, before it is handed to the engine (fio's `start_time`). Its slat runs from
//! there to the commit that sent it, its lat from there to the reap (slat + clat). Synchronous
//! engines have no slat (fio records none for them) and their lat is their clat.

use super::job::{CloneResult, CloneSpec, FileState, READ, WRITE};
use super::pattern::{plan, reset_pass, Draws, Plan};
use super::verify;
use fsarena_engine::{Completion, Engine, FileOp, IoDir, IoOp, QueueDepth, StatType, Submit};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// One I/O: what the loop needs to account it when it completes.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    dir: usize,
    file: usize,
    offset: u64,
    bs: u64,
    /// Raw clock at the commit that sent it (queued I/Os only).
    issued: u64,
    /// Raw clock when it was prepared, before the engine got it (queued engines only: fio's
    /// `start_time`).
    queued: u64,
}

/// The submission side of a completed queued I/O: its slat and lat, in ns.
#[derive(Debug, Clone, Copy)]
struct Submitted {
    slat: Option<u64>,
    lat: u64,
}

impl Submitted {
    /// Times of `io`, committed and then reaped at raw clock `now`.
    #[inline(always)]
    fn reaped(clock: &quanta::Clock, io: &Pending, now: u64) -> Self {
        Self { slat: Some(clock.delta_as_nanos(io.queued, io.issued)), lat: clock.delta_as_nanos(io.queued, now) }
    }

    /// Times of `io`, completed by the engine within the submit call at raw clock `now`: no
    /// slat, as fio records none for an I/O its engine completed in the queue call.
    #[inline(always)]
    fn inline(clock: &quanta::Clock, io: &Pending, now: u64) -> Self {
        Self { slat: None, lat: clock.delta_as_nanos(io.queued, now) }
    }
}

/// What to do after accounting a completion.
enum Next {
    /// Go on.
    Done,
    /// Nothing was moved (end of file): skip the rate check, as for a short pass.
    Skip,
    /// An error: stop the loop.
    Stop,
}

/// The queue of I/Os out at the engine, in slots; sized once, so the loop never allocates.
struct Queue {
    depth: QueueDepth,
    pending: Vec<Pending>,
    /// Slots with no I/O out; the last is used next.
    free: Vec<u32>,
    /// Slots queued since the last commit.
    uncommitted: Vec<u32>,
    completions: Vec<Completion>,
    in_flight: u32,
    /// Bytes out at the engine, counted toward the pass so it does not overshoot.
    queued_bytes: u64,
}

impl Queue {
    fn new(depth: QueueDepth) -> Self {
        let n = depth.depth.max(1) as usize;
        Self {
            depth,
            pending: vec![Pending::default(); n],
            free: (0..n as u32).rev().collect(),
            uncommitted: Vec::with_capacity(n),
            completions: Vec::with_capacity(n),
            in_flight: 0,
            queued_bytes: 0,
        }
    }
}

/// fio's `verify_backlog`: the writes since the last check, and what a check does.
struct Backlog {
    every: u64,
    writes: u64,
    fatal: bool,
    align: usize,
}

/// The loop's clock, position and counters.
struct State<'r> {
    p: Plan,
    clock: quanta::Clock,
    prev: u64,
    /// Since the phase began, ramp included.
    elapsed: u64,
    measuring: bool,
    measure_start: u64,
    pass_bytes: u64,
    writes_since_sync: u32,
    /// The file whose `fsync=N` fell due. As fio (`get_rw_ddir`), it is issued before the next
    /// I/O, so none follows the job's last write.
    sync_due: Option<usize>,
    /// fio's rate schedule, when the job gives a rate (rate.rs).
    rate: Option<super::rate::Schedule>,
    /// fio's `io_submit_mode=offload`: the engine's workers do the I/O, and the loop never
    /// waits for them to finish before a pause (fio's job thread has none of their I/O to
    /// quiesce).
    offload: bool,
    /// The engine queues (not fio's `FIO_SYNCIO`): submission is timed too (slat, lat).
    queues: bool,
    seed: u64,
    r: &'r mut CloneResult,
    /// fio's verify_backlog: check the written blocks every this many writes.
    backlog: Option<Backlog>,
    /// Every completion (ramp included), for the live rate on the progress line.
    live: fsarena_workload::LiveBatch<'r>,
    /// I/Os completed, ramp included (fio's io_blocks, for `thinktime_blocks`).
    completed: u64,
    /// The count at the last thinktime pause (fio's last_thinktime_blocks).
    last_think: u64,
    /// fio's file engines (`filecreate`, `filestat`, `filedelete`): the call made on each
    /// file at the start of every pass, its `stat_type`, and the direction its latency goes
    /// to. Their I/Os are not timed (`FIO_NOSTATS`): the call is.
    file_op: Option<(FileOp, StatType, usize)>,
    /// Where fio's steady-state check reads this clone's counts, and says when to end it.
    ss: Option<&'r super::steady::Slot>,
}

impl State<'_> {
    /// Reads the clock: (now, time since the previous read), and moves `elapsed` on.
    #[inline(always)]
    fn tick(&mut self) -> (u64, u64) {
        let now = self.clock.raw();
        let lat = self.clock.delta_as_nanos(self.prev, now);
        self.prev = now;
        self.elapsed += lat;
        (now, lat)
    }

    fn fail(&mut self, errno: i32, message: String) {
        self.r.error.get_or_insert((errno, message));
    }

    /// A file engine's call on every file of the pass, each timed as one completion latency
    /// of the job's direction, as fio times it when it opens the file. False on an error
    /// (the job's error, as fio's `td_verror`).
    fn file_ops(&mut self, files: &[FileState<'_>]) -> bool {
        let Some((op, stat_type, dir)) = self.file_op else { return true };
        for f in files {
            let name = Path::new(f.path.file_name().unwrap_or_default());
            self.tick();
            let done = op.apply(f.fd, name, stat_type);
            let (_, ns) = self.tick();
            match done {
                // filecreate's file is closed here, off the clock.
                Ok(_) => self.r.clat[dir].record(ns),
                Err(e) => {
                    let what = match op {
                        FileOp::Create => "create",
                        FileOp::Stat => "stat",
                        FileOp::Delete => "delete",
                    };
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), format!("{what} {}: {e}", f.path.display()));
                    return false;
                }
            }
        }
        true
    }

    /// fio's verify of a job that only reads (`verify=` with `do_verify=1`): each read is
    /// checked as it completes, against the headers an earlier job or run wrote. False when
    /// the job must stop (a bad interval under verify_fatal).
    #[cold]
    fn check_read(&mut self, files: &[FileState<'_>], io: &Pending, data: &[u8]) -> bool {
        let f = &files[io.file];
        let interval = self.p.verify_interval.max(1) as usize;
        let at = io.offset - f.start;
        let mut bad = None;
        for (k, piece) in data.chunks(interval).enumerate() {
            let off = at + (k * interval) as u64;
            if let Err(why) = verify::check(piece, off) {
                self.r.verify_errors += 1;
                bad.get_or_insert_with(|| {
                    format!("verify failed in {} at offset {}: {why}", f.path.display(), f.start + off)
                });
            }
        }
        self.r.verified_bytes += data.len() as u64;
        let Some(first) = bad else { return true };
        self.r.verify_first.get_or_insert(first);
        if self.p.verify_fatal {
            let first = self.r.verify_first.clone().unwrap_or_default();
            self.fail(libc::EILSEQ, format!("{first} (verify_fatal=1)"));
            return false;
        }
        true
    }

    /// fio's verify_backlog: reads back and checks the units written since the last check.
    /// False when the job must stop (a read failed, or a bad block under verify_fatal).
    #[cold]
    fn check_backlog(&mut self, files: &mut [FileState<'_>]) -> bool {
        let Some(b) = &self.backlog else { return true };
        let (fatal, align) = (b.fatal, b.align);
        for f in files.iter_mut() {
            let Some(pending) = f.unverified.as_mut() else { continue };
            if pending.iter().all(|w| *w == 0) {
                continue;
            }
            let checked = verify::check_file(
                f.fd,
                &f.path,
                f.start,
                (self.p.unit, self.p.verify_interval),
                pending,
                align,
                fatal,
            );
            pending.iter_mut().for_each(|w| *w = 0);
            match checked {
                Ok(c) => {
                    self.r.verified_bytes += c.units * self.p.unit;
                    self.r.verify_errors += c.bad;
                    if self.r.verify_first.is_none() {
                        self.r.verify_first = c.first;
                    }
                    if fatal && c.bad > 0 {
                        let first = self.r.verify_first.clone().unwrap_or_default();
                        self.fail(libc::EILSEQ, format!("{first} (verify_fatal=1)"));
                        return false;
                    }
                }
                Err(e) => {
                    self.fail(libc::EIO, e);
                    return false;
                }
            }
        }
        true
    }

    /// Accounts one completed I/O whose completion took `lat` ns (clat), and for a queued
    /// engine its submission times (`sub`); it completed at `at` (ns since the phase began:
    /// now, or earlier for an I/O an offload worker completed while the loop slept).
    #[inline(always)]
    fn finish(
        &mut self,
        files: &mut [FileState<'_>],
        io: Pending,
        result: io::Result<usize>,
        lat: u64,
        sub: Option<Submitted>,
        at: u64,
    ) -> Next {
        let f = &mut files[io.file];
        let n = match result {
            Ok(n) => n as u64,
            // fio's fill_device: a full filesystem is the job's end, not an error; fio counts
            // the write that found it full as one of the job's I/Os (of no bytes).
            Err(e)
                if self.p.fill_device
                    && io.dir == WRITE
                    && matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) =>
            {
                self.r.ios[WRITE] += 1;
                return Next::Stop;
            }
            Err(e) => {
                let what = if io.dir == READ { "read" } else { "write" };
                let message = format!("{what} of {} bytes at offset {} of {}: {e}", io.bs, io.offset, f.path.display());
                self.fail(e.raw_os_error().unwrap_or(libc::EIO), message);
                return Next::Stop;
            }
        };
        if n < io.bs {
            self.r.short_ios[io.dir] += 1;
            if n == 0 {
                f.exhausted = true;
                return Next::Skip;
            }
        }
        self.pass_bytes += n;
        self.live.add(n, self.elapsed);
        if io.dir == WRITE && self.p.verify {
            verify::mark(&mut f.written, io.offset - f.start, n, self.p.unit);
            if let Some(u) = &mut f.unverified {
                verify::mark(u, io.offset - f.start, n, self.p.unit);
            }
            if let Some(b) = &mut self.backlog {
                b.writes += 1;
                if b.writes >= b.every {
                    b.writes = 0;
                    if !self.check_backlog(files) {
                        return Next::Stop;
                    }
                }
            }
        }
        if !self.measuring && self.elapsed >= self.p.ramp_ns {
            self.start_measuring();
        } else {
            // Recorded during the ramp too: a job that ends before its ramp_time is over
            // reports all it did, as fio does.
            if self.file_op.is_none() {
                self.r.clat[io.dir].record(lat);
            }
            if let Some(sub) = sub {
                if let Some(slat) = sub.slat {
                    self.r.slat[io.dir].record(slat);
                }
                self.r.lat[io.dir].record(sub.lat);
            }
            self.r.bytes[io.dir] += n;
            self.r.ios[io.dir] += 1;
            if let Some(slot) = self.ss {
                slot.publish(self.r.ios[READ] + self.r.ios[WRITE], self.r.bytes[READ] + self.r.bytes[WRITE]);
            }
            let since_start = at.saturating_sub(self.measure_start);
            self.r.series[io.dir].add(since_start, n);
            // fio's log files: one branch when off; a sample per I/O when on (iolog.rs).
            if let Some(log) = &mut self.r.log {
                let time_ns = since_start;
                let (slat_ns, total_ns) = sub.map_or((None, lat), |s| (s.slat, s.lat));
                log.push(super::iolog::Sample {
                    time_ns,
                    lat_ns: lat,
                    slat_ns,
                    total_ns,
                    bytes: n as u32,
                    dir: io.dir as u32,
                });
            }
        }
        self.completed += 1;
        if io.dir == WRITE && self.p.sync_every > 0 {
            self.writes_since_sync += 1;
            if self.writes_since_sync == self.p.sync_every {
                self.writes_since_sync = 0;
                self.sync_due = Some(io.file);
            }
        }
        Next::Done
    }

    /// The ramp is over: forget what it recorded and measure from now.
    fn start_measuring(&mut self) {
        self.measuring = true;
        self.measure_start = self.elapsed;
        // fio starts its rate schedule over with its epoch when the ramp ends.
        if let Some(rate) = &mut self.rate {
            rate.restart(self.elapsed);
        }
        let r = &mut *self.r;
        for d in [READ, WRITE] {
            r.clat[d] = fsarena_stats::LatencyHistogram::new();
            if self.queues {
                r.slat[d] = fsarena_stats::LatencyHistogram::new();
                r.lat[d] = fsarena_stats::LatencyHistogram::new();
            }
            // One allocation, once, when the ramp ends.
            r.series[d] = fsarena_stats::IntervalCounter::new(1_000_000_000, 64);
        }
        r.sync = fsarena_stats::LatencyHistogram::new();
        if let Some(log) = &mut r.log {
            log.restart();
        }
        r.bytes = [0; 2];
        r.ios = [0; 2];
        r.short_ios = [0; 2];
        // fio's steady state starts with the measured phase: a job in its ramp_time is not
        // checked, and its counts start from zero.
        if let Some(slot) = self.ss {
            slot.begin();
        }
    }

    /// fio's thinktime pause after an I/O in `dir`: spin, then sleep the rest. Under
    /// `rate_ignore_thinktime` the rate counts the pause as I/O issued. The pause is no
    /// I/O's latency: the clock is read again after it. `Err` to stop.
    fn think<E: Engine>(
        &mut self,
        think: &super::pattern::Think,
        dir: usize,
        q: &mut Queue,
        engine: &mut E,
        files: &mut [FileState<'_>],
        stop: &AtomicBool,
    ) -> Result<(), ()> {
        let start = self.clock.raw();
        while self.clock.delta_as_nanos(start, self.clock.raw()) < think.spin_ns {
            std::hint::spin_loop();
        }
        let slept = self.pause(think.ns, start, q, engine, files, stop);
        // fio counts the pause it made, in µs.
        let total_us = self.clock.delta_as_nanos(start, self.clock.raw()) / 1000;
        let _ = self.tick();
        if let Some(rate) = &mut self.rate {
            rate.thought(dir, total_us);
        }
        slept
    }

    /// Waits until `ns` after raw clock `start`, in short naps so that a stop is not kept
    /// waiting (each nap is measured from the clock, so lateness does not add up). As fio's
    /// `usec_sleep`, the last stretch shorter than a sleep's own overshoot
    /// ([`sleep_granularity`]) is spun, so the wait ends on time rather than a timer slack
    /// late. Under offload the I/Os the workers complete meanwhile are reaped as they come,
    /// so each is counted when it completes. `Err` to stop (an error while reaping).
    fn pause<E: Engine>(
        &mut self,
        ns: u64,
        start: u64,
        q: &mut Queue,
        engine: &mut E,
        files: &mut [FileState<'_>],
        stop: &AtomicBool,
    ) -> Result<(), ()> {
        const NAP_NS: u64 = 20_000_000;
        while !stop.load(Ordering::Relaxed) {
            let left = ns.saturating_sub(self.clock.delta_as_nanos(start, self.clock.raw()));
            if left == 0 {
                break;
            }
            let granularity = sleep_granularity();
            if left < granularity {
                while self.clock.delta_as_nanos(start, self.clock.raw()) < ns {
                    std::hint::spin_loop();
                }
                break;
            }
            let nap = std::time::Duration::from_nanos((left - granularity).min(NAP_NS));
            if self.offload && q.in_flight > 0 {
                q.completions.clear();
                let max = q.in_flight as usize;
                if let Err(e) = engine.reap_within(max, &mut q.completions, nap) {
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), format!("{}: reap: {e}", E::NAME));
                    return Err(());
                }
                if !q.completions.is_empty() {
                    let (now, _) = self.tick();
                    if self.account(q, engine, files, now) {
                        return Err(());
                    }
                }
            } else {
                std::thread::sleep(nap);
            }
        }
        Ok(())
    }

    /// fio's `rate_ddir` before the next I/O, drawn in `dir`: when the rate's time for it
    /// has not come, what is out completes first (inline submission only: fio's
    /// `io_u_quiesce`), then the loop sleeps until that time, bounded by the job's runtime.
    /// The direction to issue in (a mixed job's other one when it is due first); `None` to
    /// end the job: its runtime ran out, it was stopped, or reaping failed.
    fn rate_wait<E: Engine>(
        &mut self,
        dir: usize,
        q: &mut Queue,
        engine: &mut E,
        files: &mut [FileState<'_>],
        stop: &AtomicBool,
    ) -> Option<usize> {
        // fio reads the clock for every rated I/O; a synchronous I/O's latency starts here.
        let (start, _) = self.tick();
        let due = self.rate.as_ref()?.due(dir, self.elapsed);
        if due.wait_us == 0 {
            return Some(due.dir);
        }
        // As fio, the wait is taken before the queue drains and slept after it.
        if !self.offload && self.drain(q, engine, files).is_err() {
            return None;
        }
        let left = self.p.deadline_ns.saturating_sub(self.elapsed);
        let wait = (due.wait_us * 1000).min(left);
        let start = if self.offload { start } else { self.tick().0 };
        if self.pause(wait, start, q, engine, files, stop).is_err() {
            return None;
        }
        self.tick();
        (self.elapsed < self.p.deadline_ns && !stop.load(Ordering::Relaxed)).then_some(due.dir)
    }

    /// An I/O of `bs` bytes was handed to the engine in `dir`: the rate's next time for the
    /// direction moves on (fio counts the issue, not the completion).
    #[inline(always)]
    fn rate_issued(&mut self, dir: usize, bs: u64, draws: &mut Draws) {
        if let Some(rate) = &mut self.rate {
            rate.issued(dir, bs, &mut draws.poisson[dir]);
        }
    }

    /// Sends the queued I/Os and stamps their issue time.
    fn commit<E: Engine>(&mut self, q: &mut Queue, engine: &mut E) -> bool {
        if q.uncommitted.is_empty() {
            return true;
        }
        if let Err(e) = engine.commit() {
            self.fail(e.raw_os_error().unwrap_or(libc::EIO), format!("{}: commit: {e}", E::NAME));
            return false;
        }
        let (now, _) = self.tick();
        for &slot in &q.uncommitted {
            q.pending[slot as usize].issued = now;
        }
        q.uncommitted.clear();
        true
    }

    /// Reaps as fio's `wait_for_completions`: at least the minimum, and on a full queue on
    /// until `iodepth_low`. `Err` to stop.
    fn reap<E: Engine>(
        &mut self,
        q: &mut Queue,
        engine: &mut E,
        files: &mut [FileState<'_>],
        full: bool,
    ) -> Result<(), ()> {
        let mut stop = false;
        loop {
            if !self.commit(q, engine) {
                return Err(());
            }
            let min = q.depth.reap_min(full, q.in_flight);
            let max = q.depth.reap_max(min, q.in_flight);
            q.completions.clear();
            let got = match engine.reap(min, max, &mut q.completions) {
                Ok(0) if min > 0 => Err(io::Error::other(format!("no completion while {} I/Os are out", q.in_flight))),
                other => other,
            };
            if let Err(e) = got {
                self.fail(e.raw_os_error().unwrap_or(libc::EIO), format!("{}: reap: {e}", E::NAME));
                return Err(());
            }
            if !q.completions.is_empty() {
                let (now, _) = self.tick();
                stop = self.account(q, engine, files, now);
            }
            if stop {
                return Err(());
            }
            if !q.depth.keep_reaping(full, q.in_flight) || q.in_flight == 0 {
                return Ok(());
            }
        }
    }

    /// Accounts the completions just reaped into `q.completions` at raw clock `now`; true
    /// when the job must stop. An I/O an offload worker did is timed by the worker's clock
    /// readings, and counted at its completion time.
    fn account<E: Engine>(&mut self, q: &mut Queue, engine: &mut E, files: &mut [FileState<'_>], now: u64) -> bool {
        let mut stop = false;
        let mut completions = std::mem::take(&mut q.completions);
        for c in completions.drain(..) {
            let io = q.pending[c.slot as usize];
            q.free.push(c.slot);
            q.in_flight -= 1;
            q.queued_bytes -= io.bs;
            let (lat, sub, at) = match engine.worker_times(c.slot) {
                Some(t) => {
                    let sub = Submitted {
                        slat: t.slat.then(|| self.clock.delta_as_nanos(io.queued, t.issued)),
                        lat: self.clock.delta_as_nanos(io.queued, t.completed),
                    };
                    let ago = self.clock.delta_as_nanos(t.completed, now);
                    (self.clock.delta_as_nanos(t.issued, t.completed), sub, self.elapsed.saturating_sub(ago))
                }
                None => {
                    (self.clock.delta_as_nanos(io.issued, now), Submitted::reaped(&self.clock, &io, now), self.elapsed)
                }
            };
            if io.dir == READ && self.p.verify_reads {
                if let Ok(n) = &c.result {
                    let data = &engine.buffers().slot(c.slot)[..*n];
                    if !self.check_read(files, &io, data) {
                        stop = true;
                    }
                }
            }
            if let Next::Stop = self.finish(files, io, c.result, lat, Some(sub), at) {
                stop = true;
            }
        }
        q.completions = completions;
        stop
    }

    /// Reaps everything still out; `Err` to stop.
    fn drain<E: Engine>(&mut self, q: &mut Queue, engine: &mut E, files: &mut [FileState<'_>]) -> Result<(), ()> {
        while q.in_flight > 0 {
            self.reap(q, engine, files, true)?;
        }
        Ok(())
    }

    /// fsync (or fdatasync) of `files[file]` through the engine, once nothing else is out, as
    /// fio's async engines do; timed and recorded, except the `end_fsync` (`at_end`), which
    /// fio does not count among the job's syncs.
    fn sync_file<E: Engine>(
        &mut self,
        q: &mut Queue,
        engine: &mut E,
        files: &mut [FileState<'_>],
        file: usize,
        dir: IoDir,
        at_end: bool,
    ) -> bool {
        // The writes before the sync complete first, as fio's async engines wait for them.
        if self.drain(q, engine, files).is_err() {
            return false;
        }
        let op = IoOp { dir, fd: files[file].fd, offset: 0, len: 0, slot: 0 };
        let result = match engine.submit(op) {
            Submit::Completed(r) => r,
            Submit::Queued => {
                q.completions.clear();
                match engine.commit().and_then(|()| engine.reap(1, 1, &mut q.completions)) {
                    Ok(1) => q.completions.pop().map_or(Ok(0), |c| c.result),
                    Ok(_) => Err(io::Error::other("the engine returned no completion for the sync")),
                    Err(e) => Err(e),
                }
            }
            Submit::Busy => Err(io::Error::other("the engine refused a sync with nothing out")),
        };
        let (_, lat) = self.tick();
        if !at_end {
            self.r.sync.record(lat);
        }
        if let Err(e) = result {
            let what = if at_end { "end_fsync" } else { "fsync" };
            let message = format!("{what} of {}: {e}", files[file].path.display());
            self.fail(e.raw_os_error().unwrap_or(libc::EIO), message);
            return false;
        }
        true
    }
}

/// How late a sleep of 1 µs wakes at worst, in ns (fio's `ns_granularity`, taken as fio
/// takes it: the longest of ten), measured once per process. Kept under 1 ms, so that a
/// measurement on a machine busy at that instant does not turn every wait into a spin.
fn sleep_granularity() -> u64 {
    static GRANULARITY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *GRANULARITY.get_or_init(|| {
        (0..10)
            .map(|_| {
                let t = std::time::Instant::now();
                std::thread::sleep(std::time::Duration::from_micros(1));
                t.elapsed().as_nanos() as u64
            })
            .max()
            .unwrap_or(0)
            .min(1_000_000)
    })
}

/// The measured phase of one clone on `engine`; fills `r`.
pub(super) fn measured_phase<E: Engine>(
    spec: &CloneSpec,
    engine: &mut E,
    files: &mut [FileState<'_>],
    stop: &AtomicBool,
    live: &fsarena_workload::Live,
    r: &mut CloneResult,
    // The steady-state slot the clone publishes to, the dedupe/compress streams that refill
    // its writes, and its flow: each there only when its job asks for it.
    (ss, mut refill, flow): (
        Option<&super::steady::Slot>,
        Option<&mut super::dedupe::BufferFill>,
        Option<&super::flow::Flow>,
    ),
) {
    let p = plan(spec);
    let o = &spec.options;
    let mut q = Queue::new(o.queue_depth());
    let clock = quanta::Clock::new();
    let mut draws = Draws::new(spec);
    let queues = !E::caps(&o.engine_config(spec.align)).sync;
    let sync_dir = if p.datasync { IoDir::Fdatasync } else { IoDir::Fsync };
    let p_verify_backlog = if p.verify { o.verify_backlog } else { 0 };
    if o.rate_checked() || o.thinktime.0 > 0 {
        // Measured before the clock starts (ten short sleeps), not in the first wait.
        sleep_granularity();
    }
    let mut st = State {
        measuring: p.ramp_ns == 0,
        p,
        prev: clock.raw(),
        clock,
        elapsed: 0,
        measure_start: 0,
        pass_bytes: 0,
        writes_since_sync: 0,
        sync_due: None,
        rate: super::rate::Schedule::new(o),
        offload: o.offload,
        queues,
        seed: o.randseed ^ u64::from(spec.clone),
        r,
        backlog: (p_verify_backlog > 0).then_some(Backlog {
            every: p_verify_backlog,
            writes: 0,
            fatal: o.verify_fatal,
            align: spec.align,
        }),
        live: fsarena_workload::LiveBatch::new(live),
        completed: 0,
        last_think: 0,
        file_op: E::caps(&o.engine_config(spec.align))
            .file_op
            .map(|op| (op, o.stat_type, if o.rw.reads() { READ } else { WRITE })),
        ss,
    };
    if let Some(slot) = ss.filter(|_| st.measuring) {
        slot.begin();
    }
    if !st.file_ops(files) {
        st.r.runtime_ns = st.elapsed;
        if let Some(slot) = ss {
            slot.end();
        }
        return;
    }
    let mut pass: u64 = 0;
    let mut current = 0usize;
    let nfiles = files.len();

    'io: loop {
        if stop.load(Ordering::Relaxed) || st.elapsed >= st.p.deadline_ns || ss.is_some_and(|s| s.stopped()) {
            break;
        }
        // fio's flow control, asked before each I/O as fio's do_io: held back, the job lets
        // what is out complete and sleeps flow_sleep (or asks again at once, as fio).
        if let Some(flow) = flow {
            if !flow.admit(&mut st.r.flow_ios, o.flow) {
                if o.flow_sleep.0 > 0 {
                    if st.drain(&mut q, engine, files).is_err() {
                        break;
                    }
                    let (start, _) = st.tick();
                    if st.pause(o.flow_sleep.0, start, &mut q, engine, files, stop).is_err() {
                        break;
                    }
                } else {
                    std::thread::yield_now();
                }
                st.tick();
                continue 'io;
            }
        }
        // End of a pass: all files exhausted or the job's bytes moved (or out).
        let exhausted = files.iter().all(|f| f.exhausted);
        if exhausted && st.p.wraps && st.pass_bytes + q.queued_bytes < st.p.pass_bytes {
            // fio's io_size beyond size: the files start over within the same pass.
            reset_pass(files, st.seed, pass + 1, false);
        } else if st.pass_bytes + q.queued_bytes >= st.p.pass_bytes || exhausted {
            pass += 1;
            if !st.p.time_based && pass >= st.p.passes {
                break;
            }
            // A size-based loop ends as fio's do_io ends, with everything out completed: what
            // completes later would count toward the next loop, which would then stop short
            // by the queue's depth (2 loops of libaio iodepth=256 moved 3841 of 4096 blocks).
            if !st.p.time_based && st.drain(&mut q, engine, files).is_err() {
                break;
            }
            // A time-based job goes on over its files within fio's one loop (the random map
            // is reset, its streams go on); a size-based one starts a new loop.
            reset_pass(files, st.seed, pass, o.randrepeat && !st.p.time_based);
            if !st.p.time_based {
                draws.new_loop(o);
                if let (Some(d), true) = (refill.as_deref_mut(), o.randrepeat) {
                    d.new_loop();
                }
            }
            st.pass_bytes = 0;
            // fio opens the files again for each loop: a file engine's call is made again.
            if !st.file_ops(files) {
                break;
            }
        }
        if st.p.io_limit > 0 && draws.issued_total() >= st.p.io_limit {
            break; // fio's number_ios
        }
        if let Some(file) = st.sync_due.take() {
            if !st.sync_file(&mut q, engine, files, file, sync_dir, false) {
                break;
            }
        }
        let mut dir = if st.p.mixed { draws.direction(st.p.rwmixread) } else { st.p.fixed_dir };
        if st.rate.is_some() {
            match st.rate_wait(dir, &mut q, engine, files, stop) {
                Some(d) if d != dir => {
                    dir = d;
                    draws.set_direction(d);
                }
                Some(_) => {}
                None => break 'io,
            }
        }
        // Round-robin over the files (fio's file_service_type=roundrobin).
        let mut tries = 0;
        let (fi, offset, bs) = loop {
            let fi = current;
            current = if current + 1 == nfiles { 0 } else { current + 1 };
            let f = &mut files[fi];
            if !f.exhausted {
                match st.p.next_io(f, dir, &mut draws) {
                    Some((off, len)) => break (fi, off, len),
                    None => f.exhausted = true,
                }
            }
            tries += 1;
            if tries > nfiles {
                continue 'io; // every file is done with this pass
            }
        };
        // There is always a free slot here: a full queue is reaped right after submitting.
        let slot = q.free.last().copied().unwrap_or(0);
        let len = bs as usize;
        if dir == WRITE {
            let buf = &mut engine.buffers().slot_mut(slot)[..len];
            // fio refills a deduping or compressing job's buffer for every write, verify or not.
            if let Some(d) = refill.as_deref_mut() {
                d.fill(buf);
            }
            if st.p.verify {
                verify::stamp_with(&o.verify_method, buf, offset - files[fi].start, st.p.verify_interval, st.seed);
            } else if o.buffer_pattern.is_none() && o.buffer_compress_percentage == 0 && refill.is_none() {
                // fio's scramble_buffers: make each written block differ (not a pattern's,
                // which fio writes as given, nor a compressing job's, which fio refills or,
                // fully compressible, leaves zero).
                buf[..8].copy_from_slice(&offset.to_le_bytes());
            }
        }
        // fio's start_time, read only when the engine queues: a synchronous I/O is timed by
        // the one read at its completion.
        let queued = if st.queues { st.clock.raw() } else { 0 };
        draws.issued(dir);
        let io = Pending { dir, file: fi, offset, bs, issued: 0, queued };
        let op =
            IoOp { dir: if dir == READ { IoDir::Read } else { IoDir::Write }, fd: files[fi].fd, offset, len, slot };
        loop {
            match engine.submit(op) {
                Submit::Completed(result) => {
                    let (now, lat) = st.tick();
                    st.rate_issued(dir, bs, &mut draws);
                    // A queued engine that completed it in the call: lat, no slat.
                    let sub = st.queues.then(|| Submitted::inline(&st.clock, &io, now));
                    let at = st.elapsed;
                    if dir == READ && st.p.verify_reads {
                        if let Ok(n) = &result {
                            let data = &engine.buffers().slot(slot)[..*n];
                            if !st.check_read(files, &io, data) {
                                break 'io;
                            }
                        }
                    }
                    match st.finish(files, io, result, lat, sub, at) {
                        Next::Stop => break 'io,
                        Next::Skip => continue 'io,
                        Next::Done => {}
                    }
                    break;
                }
                Submit::Queued => {
                    st.rate_issued(dir, bs, &mut draws);
                    // `slot` is free; after a Busy and a reap it may no longer be the last.
                    if let Some(at) = q.free.iter().rposition(|&s| s == slot) {
                        q.free.swap_remove(at);
                    }
                    q.pending[slot as usize] = io;
                    q.uncommitted.push(slot);
                    q.in_flight += 1;
                    q.queued_bytes += bs;
                    if q.uncommitted.len() >= q.depth.batch_submit as usize && !st.commit(&mut q, engine) {
                        break 'io;
                    }
                    let full = q.free.is_empty();
                    if (full || q.depth.polling()) && st.reap(&mut q, engine, files, full).is_err() {
                        break 'io;
                    }
                    break;
                }
                Submit::Busy => {
                    // No room: send what is queued, take completions back, try again.
                    if q.in_flight == 0 {
                        st.fail(libc::EBUSY, format!("{}: the engine is busy with nothing out", E::NAME));
                        break 'io;
                    }
                    if st.reap(&mut q, engine, files, true).is_err() {
                        break 'io;
                    }
                }
            }
        }
        if let Some(think) = st.p.think {
            let counted = if think.on_issue { draws.issued_total() } else { st.completed };
            if counted >= st.last_think + think.blocks {
                // fio's io_u_quiesce: what is out completes before the pause (under offload
                // the job's thread has nothing of its own out, and does not wait).
                if !st.offload && st.drain(&mut q, engine, files).is_err() {
                    break 'io;
                }
                if st.think(&think, dir, &mut q, engine, files, stop).is_err() {
                    break 'io;
                }
                st.last_think = counted;
            }
        }
    }
    // What is still out completes and counts, as fio's cleanup_pending_aio.
    // A sync due after the last write is not issued: fio issues it before a next I/O.
    let drained = st.drain(&mut q, engine, files).is_ok();
    if o.end_fsync && drained && st.r.error.is_none() {
        for fi in 0..files.len() {
            if !st.sync_file(&mut q, engine, files, fi, IoDir::Fsync, true) {
                break;
            }
        }
    }
    // A job over before its ramp reports its whole run, as fio.
    let runtime = st.elapsed - st.measure_start;
    st.r.runtime_ns = runtime;
    if let Some(slot) = ss {
        slot.end();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "queue_tests.rs"]
mod tests;
