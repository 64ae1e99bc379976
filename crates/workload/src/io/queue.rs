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
    /// For rate limits, measured and ramp alike.
    done_bytes: [u64; 2],
    done_ios: [u64; 2],
    limited: bool,
    /// The engine queues (not fio's `FIO_SYNCIO`): submission is timed too (slat, lat).
    queues: bool,
    seed: u64,
    r: &'r mut CloneResult,
    /// fio's verify_backlog: check the written blocks every this many writes.
    backlog: Option<Backlog>,
    /// Every completion (ramp included), for the live rate on the progress line.
    live: crate::LiveBatch<'r>,
    /// I/Os completed, ramp included (fio's io_blocks, for `thinktime_blocks`).
    completed: u64,
    /// The count at the last thinktime pause (fio's last_thinktime_blocks).
    last_think: u64,
    /// fio's file engines (`filecreate`, `filestat`, `filedelete`): the call made on each
    /// file at the start of every pass, its `stat_type`, and the direction its latency goes
    /// to. Their I/Os are not timed (`FIO_NOSTATS`): the call is.
    file_op: Option<(FileOp, StatType, usize)>,
    /// The clone's stop, which a rate's wait obeys: at 300 bytes/s one 4 KiB I/O waits
    /// 13.6 s, and an exitall must not wait that long for it.
    halt: &'r AtomicBool,
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
            let checked = verify::check_file(f.fd, &f.path, f.start, self.p.unit, pending, align, fatal);
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
    /// engine its submission times (`sub`).
    #[inline(always)]
    fn finish(
        &mut self,
        files: &mut [FileState<'_>],
        io: Pending,
        result: io::Result<usize>,
        lat: u64,
        sub: Option<Submitted>,
    ) -> Next {
        let f = &mut files[io.file];
        let n = match result {
            Ok(n) => n as u64,
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
            self.r.series[io.dir].add(self.elapsed - self.measure_start, n);
            // fio's log files: one branch when off; a sample per I/O when on (iolog.rs).
            if let Some(log) = &mut self.r.log {
                let time_ns = self.elapsed - self.measure_start;
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
        if self.limited {
            self.done_bytes[io.dir] += n;
            self.done_ios[io.dir] += 1;
        }
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

    /// fio's thinktime pause: spin, then sleep the rest (in short naps, so a stop is not kept
    /// waiting). The pause is no I/O's latency: the clock is read again after it.
    fn think(&mut self, think: &super::pattern::Think, stop: &AtomicBool) {
        let start = self.clock.raw();
        let since = |clock: &quanta::Clock| clock.delta_as_nanos(start, clock.raw());
        while since(&self.clock) < think.spin_ns {
            std::hint::spin_loop();
        }
        while !stop.load(Ordering::Relaxed) {
            let left = think.ns.saturating_sub(since(&self.clock));
            if left == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_nanos(left.min(20_000_000)));
        }
        let _ = self.tick();
    }

    /// Sleeps until direction `dir` is back under its `rate`/`rate_iops` limits.
    fn throttle(&mut self, dir: usize) {
        let p = &self.p;
        let due = |done: u64, rate: u64| {
            if rate > 0 {
                (u128::from(done) * 1_000_000_000 / u128::from(rate)) as u64
            } else {
                0
            }
        };
        let due = due(self.done_bytes[dir], p.rate[dir]).max(due(self.done_ios[dir], p.rate_iops[dir]));
        let until = due.min(p.deadline_ns);
        // In naps, as fio's usec_sleep, so that a stop is seen within one.
        while self.elapsed < until && !self.halt.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_nanos((until - self.elapsed).min(20_000_000)));
            self.tick();
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
                let mut completions = std::mem::take(&mut q.completions);
                for c in completions.drain(..) {
                    let io = q.pending[c.slot as usize];
                    q.free.push(c.slot);
                    q.in_flight -= 1;
                    q.queued_bytes -= io.bs;
                    let lat = self.clock.delta_as_nanos(io.issued, now);
                    let sub = Submitted::reaped(&self.clock, &io, now);
                    match self.finish(files, io, c.result, lat, Some(sub)) {
                        Next::Stop => stop = true,
                        Next::Done if self.limited => self.throttle(io.dir),
                        Next::Done | Next::Skip => {}
                    }
                }
                q.completions = completions;
            }
            if stop {
                return Err(());
            }
            if !q.depth.keep_reaping(full, q.in_flight) || q.in_flight == 0 {
                return Ok(());
            }
        }
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

/// The measured phase of one clone on `engine`; fills `r`.
pub(super) fn measured_phase<E: Engine>(
    spec: &CloneSpec,
    engine: &mut E,
    files: &mut [FileState<'_>],
    stop: &AtomicBool,
    live: &crate::Live,
    r: &mut CloneResult,
    // The steady-state slot the clone publishes to, and the dedupe/compress streams that
    // refill its writes: each there only when its job asks for it.
    (ss, mut refill): (Option<&super::steady::Slot>, Option<&mut super::dedupe::BufferFill>),
) {
    let p = plan(spec);
    let o = &spec.options;
    let mut q = Queue::new(o.queue_depth());
    let clock = quanta::Clock::new();
    let mut draws = Draws::new(spec);
    let limited = p.rate != [0, 0] || p.rate_iops != [0, 0];
    let queues = !E::caps(&o.engine_config(spec.align)).sync;
    let sync_dir = if p.datasync { IoDir::Fdatasync } else { IoDir::Fsync };
    let p_verify_backlog = if p.verify { o.verify_backlog } else { 0 };
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
        done_bytes: [0; 2],
        done_ios: [0; 2],
        limited,
        queues,
        seed: o.randseed ^ u64::from(spec.clone),
        r,
        backlog: (p_verify_backlog > 0).then_some(Backlog {
            every: p_verify_backlog,
            writes: 0,
            fatal: o.verify_fatal,
            align: spec.align,
        }),
        live: crate::LiveBatch::new(live),
        completed: 0,
        last_think: 0,
        file_op: E::caps(&o.engine_config(spec.align))
            .file_op
            .map(|op| (op, o.stat_type, if o.rw.reads() { READ } else { WRITE })),
        halt: stop,
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
        let dir = if st.p.mixed { draws.direction(st.p.rwmixread) } else { st.p.fixed_dir };
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
                verify::stamp_with(&o.verify_method, buf, offset - files[fi].start, st.p.unit, st.seed);
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
                    // A queued engine that completed it in the call: lat, no slat.
                    let sub = st.queues.then(|| Submitted::inline(&st.clock, &io, now));
                    match st.finish(files, io, result, lat, sub) {
                        Next::Stop => break 'io,
                        Next::Skip => continue 'io,
                        Next::Done => {}
                    }
                    if st.limited {
                        st.throttle(dir);
                    }
                    break;
                }
                Submit::Queued => {
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
                // fio's io_u_quiesce: what is out completes before the pause.
                if st.drain(&mut q, engine, files).is_err() {
                    break 'io;
                }
                st.think(&think, stop);
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
