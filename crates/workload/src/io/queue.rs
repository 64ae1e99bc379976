//! The measured loop of one clone, over any engine: choose an I/O, submit it, and account it
//! when it completes — in the call for synchronous engines, or when reaped for queued ones,
//! with fio's queue-depth rules ([`QueueDepth`]).
//!
//! Timing: one clock read per completion event. A synchronous I/O's latency runs from the end
//! of the previous event to the end of this one, so the loop's own bookkeeping (tens of
//! nanoseconds) is counted in the next I/O rather than costing a second clock read. A queued
//! I/O's latency runs from the commit that sent it to the reap that returned it (fio's clat
//! for async engines: issue time is taken after commit).

use super::job::{CloneResult, CloneSpec, FileState, READ, WRITE};
use super::offsets::Zipf;
use super::options::Distribution;
use super::verify;
use fsarena_engine::{Completion, Engine, IoDir, IoOp, QueueDepth, Submit};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Decoded per-op choices, so the hot loop reads plain fields.
struct Plan {
    mixed: bool,
    fixed_dir: usize,
    rwmixread: u32,
    bs: [u64; 2],
    /// fio's `bssplit`, ordered as fio orders it (by percentage), percentages cumulated.
    split: Vec<(u64, u32)>,
    /// Smallest block per direction: the random map's block and alignment for it (fio's
    /// `min_bs[ddir]`, `ba[ddir]`).
    mbs: [u64; 2],
    unit: u64,
    random: bool,
    uniform_repeats: bool,
    zipf: Option<Zipf>,
    /// fio's `random_distribution`, for the zoned draw.
    distribution: Distribution,
    pass_bytes: u64,
    /// fio's io_size: a pass goes on over the files again until its bytes are moved.
    wraps: bool,
    /// fio's `rw=read:8k`: bytes skipped after each sequential I/O.
    skip: u64,
    passes: u64,
    time_based: bool,
    deadline_ns: u64,
    ramp_ns: u64,
    sync_every: u32,
    datasync: bool,
    rate: [u64; 2],
    rate_iops: [u64; 2],
    verify: bool,
}

fn plan(spec: &CloneSpec) -> Plan {
    let o = &spec.options;
    let blocks = super::job::io_span(o, spec.file_size) / o.min_bs();
    let mut split = o.bssplit.clone();
    // fio sorts the entries by percentage before drawing (options.c, bs_cmp).
    split.sort_by_key(|e| e.1);
    // cumulative percentages for a single draw per I/O
    let mut acc = 0;
    for e in &mut split {
        acc += e.1;
        e.1 = acc;
    }
    Plan {
        mixed: o.rw.reads() && o.rw.writes(),
        fixed_dir: if o.rw.writes() { WRITE } else { READ },
        rwmixread: o.rwmixread,
        bs: o.bs,
        mbs: [0, 1].map(|d| split.iter().map(|e| e.0).min().unwrap_or(o.bs[d])),
        split,
        unit: o.min_bs(),
        random: o.rw.is_random(),
        uniform_repeats: o.norandommap,
        distribution: o.random_distribution.clone(),
        zipf: match o.random_distribution {
            Distribution::Zipf(theta) if o.rw.is_random() => Some(Zipf::new(blocks.max(1), theta)),
            _ => None,
        },
        pass_bytes: o.job_size(),
        wraps: o.io_size.is_some(),
        skip: o.rw_skip,
        passes: u64::from(o.loops),
        time_based: o.time_based,
        deadline_ns: o.runtime.map_or(u64::MAX, |r| r.0.saturating_add(o.ramp_time.0)),
        ramp_ns: o.ramp_time.0,
        sync_every: if o.fsync > 0 { o.fsync } else { o.fdatasync },
        datasync: o.fsync == 0 && o.fdatasync > 0,
        rate: o.rate,
        rate_iops: o.rate_iops,
        verify: o.verify,
    }
}

impl Plan {
    /// Next I/O in `f` in direction `dir`: offset and length; None when the file's pass is
    /// over. As fio: the offset first, then a size that fits before the region's end; in the
    /// random map, an I/O shrinks to the free blocks at its start.
    #[inline]
    fn next_io(&self, f: &mut FileState<'_>, dir: usize, rng: &mut fastrand::Rng) -> Option<(u64, u64)> {
        let region = f.blocks * self.unit;
        if !self.random {
            let pos = f.seq[dir] * self.unit;
            let len = self.block_size(dir, rng, region.saturating_sub(pos))?;
            // fio's `rw=write:4k`: a hole after each I/O; one that would reach past the end
            // starts over at the region's start (an I/O that ends at the end finishes it).
            let end = pos + len;
            let wrap = self.skip > 0 && end < region && end + self.skip >= region;
            f.seq[dir] = if wrap { 0 } else { (end + self.skip).div_ceil(self.unit) };
            return Some((f.start + pos, len));
        }
        if let Some(map) = &mut f.map {
            // fio draws a block in units of this direction's smallest size, takes the next
            // free one when it is done, and marks (and shrinks to) the free run after it.
            let mbs = self.mbs[dir];
            let lastb = region / mbs;
            if lastb == 0 {
                return None;
            }
            let mut b = self.distribution.zoned_block(lastb, rng).unwrap_or_else(|| rng.u64(0..lastb));
            if map.is_set(b) {
                b = map.next_free(b)?;
            }
            let off = b * mbs;
            if off >= region {
                return None;
            }
            let len = self.block_size(dir, rng, region - off)?;
            let nr = map.set_nr(b, len.div_ceil(mbs)).max(1);
            return Some((f.start + off, len.min(nr * mbs)));
        }
        let len = self.block_size(dir, rng, region)?;
        let block = if let Some(z) = &self.zipf {
            // Hot ranks scattered over the file, as fio hashes its zipf ranks.
            f.perm.at(z.sample(rng))
        } else if self.uniform_repeats {
            self.distribution.zoned_block(f.blocks, rng).unwrap_or_else(|| rng.u64(0..f.blocks))
        } else {
            if f.taken >= f.blocks {
                return None;
            }
            f.taken += 1;
            f.perm.at(f.taken - 1)
        };
        let off = (block * self.unit).min(region - len) / self.unit * self.unit;
        Some((f.start + off, len))
    }

    /// A block size for direction `dir` that fits in `room` bytes, as fio's
    /// `get_next_buflen`: a fixed size must fit; a `bssplit` draw takes the drawn entry or
    /// the first after it that fits, and draws again when none does.
    #[inline]
    fn block_size(&self, dir: usize, rng: &mut fastrand::Rng, room: u64) -> Option<u64> {
        if self.split.is_empty() {
            return (self.bs[dir] <= room).then_some(self.bs[dir]);
        }
        if room < self.mbs[dir] {
            return None;
        }
        loop {
            let draw = rng.u32(0..100);
            if let Some(e) = self.split.iter().skip_while(|e| draw >= e.1).find(|e| e.0 <= room) {
                return Some(e.0);
            }
        }
    }
}

fn reset_pass(files: &mut [FileState<'_>], seed: u64, pass: u64) {
    for (i, f) in files.iter_mut().enumerate() {
        f.seq = [0; 2];
        f.taken = 0;
        f.exhausted = false;
        if let Some(map) = &mut f.map {
            map.clear();
        }
        if pass > 0 {
            f.perm =
                super::offsets::Permutation::new(f.blocks.max(1), seed ^ pass.wrapping_mul(0x9E37_79B9) ^ i as u64);
        }
    }
}

/// One I/O: what the loop needs to account it when it completes.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    dir: usize,
    file: usize,
    offset: u64,
    bs: u64,
    /// Raw clock at the commit that sent it (queued I/Os only).
    issued: u64,
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
    seed: u64,
    r: &'r mut CloneResult,
    /// Every completion (ramp included), for the live rate on the progress line.
    live: crate::LiveBatch<'r>,
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

    /// Accounts one completed I/O that took `lat` ns.
    #[inline(always)]
    fn finish(&mut self, files: &mut [FileState<'_>], io: Pending, result: io::Result<usize>, lat: u64) -> Next {
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
        }
        if !self.measuring && self.elapsed >= self.p.ramp_ns {
            self.start_measuring();
        } else {
            // Recorded during the ramp too: a job that ends before its ramp_time is over
            // reports all it did, as fio does.
            self.r.clat[io.dir].record(lat);
            self.r.bytes[io.dir] += n;
            self.r.ios[io.dir] += 1;
            self.r.series[io.dir].add(self.elapsed - self.measure_start, n);
            // fio's log files: one branch when off; a sample per I/O when on (iolog.rs).
            if let Some(log) = &mut self.r.log {
                let time_ns = self.elapsed - self.measure_start;
                log.push(super::iolog::Sample { time_ns, lat_ns: lat, bytes: n as u32, dir: io.dir as u32 });
            }
        }
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
            // One allocation, once, when the ramp ends.
            r.series[d] = fsarena_stats::IntervalCounter::new(1_000_000_000, 64);
        }
        r.sync = fsarena_stats::LatencyHistogram::new();
        if let Some(log) = &mut r.log {
            log.clear();
        }
        r.bytes = [0; 2];
        r.ios = [0; 2];
        r.short_ios = [0; 2];
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
        if due > self.elapsed {
            std::thread::sleep(std::time::Duration::from_nanos(
                (due - self.elapsed).min(p.deadline_ns.saturating_sub(self.elapsed)),
            ));
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
                    match self.finish(files, io, c.result, lat) {
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
) {
    let p = plan(spec);
    let o = &spec.options;
    let mut q = Queue::new(o.queue_depth());
    let clock = quanta::Clock::new();
    let mut rng = fastrand::Rng::with_seed(o.randseed.wrapping_add(u64::from(spec.clone)));
    let limited = p.rate != [0, 0] || p.rate_iops != [0, 0];
    let sync_dir = if p.datasync { IoDir::Fdatasync } else { IoDir::Fsync };
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
        seed: o.randseed ^ u64::from(spec.clone),
        r,
        live: crate::LiveBatch::new(live),
    };
    let mut pass: u64 = 0;
    let mut current = 0usize;
    let nfiles = files.len();

    'io: loop {
        if stop.load(Ordering::Relaxed) || st.elapsed >= st.p.deadline_ns {
            break;
        }
        // End of a pass: all files exhausted or the job's bytes moved (or out).
        let exhausted = files.iter().all(|f| f.exhausted);
        if exhausted && st.p.wraps && st.pass_bytes + q.queued_bytes < st.p.pass_bytes {
            // fio's io_size beyond size: the files start over within the same pass.
            reset_pass(files, st.seed, pass + 1);
        } else if st.pass_bytes + q.queued_bytes >= st.p.pass_bytes || exhausted {
            pass += 1;
            if !st.p.time_based && pass >= st.p.passes {
                break;
            }
            reset_pass(files, st.seed, pass);
            st.pass_bytes = 0;
        }
        if let Some(file) = st.sync_due.take() {
            if !st.sync_file(&mut q, engine, files, file, sync_dir, false) {
                break;
            }
        }
        let dir = if st.p.mixed {
            if rng.u32(0..100) < st.p.rwmixread {
                READ
            } else {
                WRITE
            }
        } else {
            st.p.fixed_dir
        };
        // Round-robin over the files (fio's file_service_type=roundrobin).
        let mut tries = 0;
        let (fi, offset, bs) = loop {
            let fi = current;
            current = if current + 1 == nfiles { 0 } else { current + 1 };
            let f = &mut files[fi];
            if !f.exhausted {
                match st.p.next_io(f, dir, &mut rng) {
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
            if st.p.verify {
                verify::stamp_with(&o.verify_method, buf, offset - files[fi].start, st.p.unit, st.seed);
            } else if o.buffer_pattern.is_none() {
                // fio's scramble_buffers: make each written block differ (not a pattern's,
                // which fio writes as given).
                buf[..8].copy_from_slice(&offset.to_le_bytes());
            }
        }
        let io = Pending { dir, file: fi, offset, bs, issued: 0 };
        let op =
            IoOp { dir: if dir == READ { IoDir::Read } else { IoDir::Write }, fd: files[fi].fd, offset, len, slot };
        loop {
            match engine.submit(op) {
                Submit::Completed(result) => {
                    let (_, lat) = st.tick();
                    match st.finish(files, io, result, lat) {
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
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "queue_tests.rs"]
mod tests;
