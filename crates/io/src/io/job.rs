//! One job clone on one thread: open, measured phase (the loop is in `queue.rs`), end_fsync,
//! verify.

use super::offsets::{BlockMap, Permutation};
use super::options::{IoOptions, SyncMode};
use super::verify;
use fsarena_engine::Engine;
use fsarena_stats::{IntervalCounter, LatencyHistogram};
use rustix::fd::BorrowedFd;
use rustix::fs::OFlags;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Direction indices, as fio numbers them.
pub const READ: usize = 0;
/// Writes.
pub const WRITE: usize = 1;

/// What one clone measured.
#[derive(Debug)]
pub struct CloneResult {
    /// Completion latency per direction.
    pub clat: [LatencyHistogram; 2],
    /// Submission latency per direction (fio's slat): queued engines only, empty otherwise.
    pub slat: [LatencyHistogram; 2],
    /// Total latency per direction, preparation to completion (fio's lat): queued engines
    /// only; a synchronous engine's lat is its `clat`.
    pub lat: [LatencyHistogram; 2],
    /// fsync/fdatasync latency.
    pub sync: LatencyHistogram,
    /// Bytes per direction.
    pub bytes: [u64; 2],
    /// I/Os per direction.
    pub ios: [u64; 2],
    /// Short I/Os per direction.
    pub short_ios: [u64; 2],
    /// Per-second series per direction.
    pub series: [IntervalCounter; 2],
    /// Measured time in ns (after ramp).
    pub runtime_ns: u64,
    /// Verify pass time in ns.
    pub verify_ns: u64,
    /// Bytes read back and checked (backlog and pass together).
    pub verified_bytes: u64,
    /// Blocks that failed the check.
    pub verify_errors: u64,
    /// The first block that failed, naming file and offset.
    pub verify_first: Option<String>,
    /// `verify_state_save`: which blocks of each file the clone wrote (empty otherwise).
    pub written: Vec<Vec<u64>>,
    /// CPU use over the measured phase: user ns, system ns, context switches, major and
    /// minor faults.
    pub cpu: Rusage,
    /// The first error: errno and message.
    pub error: Option<(i32, String)>,
    /// fio's log files of the clone, when the job writes one (`None` otherwise: the hot loop
    /// then only tests this); written out when the clone ends ([`super::CloneRun`]).
    pub log: Option<super::iolog::SampleLog>,
    /// Why the clone's log files could not be written, if they could not.
    pub log_error: Option<String>,
    /// The I/Os its flow counted for it (fio's `td->flow_counter`).
    pub flow_ios: u64,
}

impl CloneResult {
    /// Nothing measured yet: per-second series sized for `expected_seconds`, and the clone's
    /// log files, if it writes any.
    pub fn empty(expected_seconds: usize, log: Option<super::iolog::SampleLog>) -> Self {
        Self {
            clat: [LatencyHistogram::new(), LatencyHistogram::new()],
            slat: Default::default(),
            lat: Default::default(),
            sync: LatencyHistogram::new(),
            bytes: [0; 2],
            ios: [0; 2],
            short_ios: [0; 2],
            series: [
                IntervalCounter::new(1_000_000_000, expected_seconds),
                IntervalCounter::new(1_000_000_000, expected_seconds),
            ],
            runtime_ns: 0,
            verify_ns: 0,
            verified_bytes: 0,
            verify_errors: 0,
            verify_first: None,
            written: Vec::new(),
            cpu: Rusage::default(),
            error: None,
            log,
            log_error: None,
            flow_ios: 0,
        }
    }
}

/// Thread CPU use.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rusage {
    /// User time, ns.
    pub user_ns: u64,
    /// System time, ns.
    pub sys_ns: u64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    /// Major faults.
    pub majflt: u64,
    /// Minor faults.
    pub minflt: u64,
}

impl Rusage {
    /// This thread's usage so far.
    pub fn thread() -> Self {
        // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_THREAD is Linux's.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
            ru
        };
        let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
        Self {
            user_ns: ns(ru.ru_utime),
            sys_ns: ns(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            majflt: ru.ru_majflt as u64,
            minflt: ru.ru_minflt as u64,
        }
    }

    /// One thread cannot use more CPU than the wall time it ran: the kernel splits a
    /// thread's exact run time into user and system by tick samples, which over a short span
    /// can put more in one than the span lasted (once 235 % for a 50 ms job). Scaled down to
    /// `wall_ns` when over it.
    fn within(self, wall_ns: u64) -> Rusage {
        let used = self.user_ns + self.sys_ns;
        if used <= wall_ns || used == 0 {
            return self;
        }
        let scale = |ns: u64| (u128::from(ns) * u128::from(wall_ns) / u128::from(used)) as u64;
        Rusage { user_ns: scale(self.user_ns), sys_ns: scale(self.sys_ns), ..self }
    }

    fn since(self, start: Rusage) -> Rusage {
        Rusage {
            user_ns: self.user_ns.saturating_sub(start.user_ns),
            sys_ns: self.sys_ns.saturating_sub(start.sys_ns),
            ctx: self.ctx.saturating_sub(start.ctx),
            majflt: self.majflt.saturating_sub(start.majflt),
            minflt: self.minflt.saturating_sub(start.minflt),
        }
    }
}

/// One file of a clone: where I/O may go and the order it goes there.
pub(super) struct FileState<'fd> {
    /// The open file (the target root for a diskless engine, which never uses it).
    pub fd: BorrowedFd<'fd>,
    pub path: PathBuf,
    /// First byte of the I/O region.
    pub start: u64,
    /// Blocks of `unit` bytes in the region.
    pub blocks: u64,
    /// Where the last I/O per direction ended, from the region's start (fio's `last_pos`).
    pub seq: [u64; 2],
    /// Where the last I/O per direction started (fio's `last_start`), for
    /// `rw_sequencer=identical`.
    pub last_start: [Option<u64>; 2],
    /// Next position in the random permutation.
    pub taken: u64,
    pub perm: Permutation,
    /// fio's random map, for random jobs whose I/Os differ in size (see [`uses_block_map`]).
    pub map: Option<BlockMap>,
    /// Units written, for the verify pass.
    pub written: Vec<u64>,
    /// With `verify_backlog`: units written and not yet checked by the backlog.
    pub unverified: Option<Vec<u64>>,
    pub exhausted: bool,
}

/// Everything a clone needs; built by the workload before the threads start.
#[derive(Debug, Clone)]
pub struct CloneSpec {
    /// The job's options.
    pub options: IoOptions,
    /// The clone's number within its job (the N of NAME.N.M).
    pub clone: u32,
    /// The client it runs on: index into the client roots (0 for the first, fio's only).
    pub client: usize,
    /// fio's `thread_number`: 1 for the first clone of the file's first job, counting every
    /// clone of every job in order; it seeds the clone's random streams as in fio.
    pub thread_number: u32,
    /// The clone's files, laid out already where the job reads.
    pub files: Vec<PathBuf>,
    /// Bytes of each file to use (from `offset`).
    pub file_size: u64,
    /// Each file's size when they differ (`filesize=MIN-MAX`, drawn as fio draws them);
    /// empty when every file is `file_size`.
    pub file_sizes: Vec<u64>,
    /// Buffer alignment for O_DIRECT.
    pub align: usize,
    /// `verify_state_load`: the saved bitmap of each file, in `files`' order.
    pub verify_state: Option<Vec<Vec<u64>>>,
    /// Every clone's buffer seeds in the file, by thread number, when a job dedupes (its
    /// working set may draw on all of them); empty otherwise.
    pub buffer_seeds: std::sync::Arc<[super::dedupe::BufferSeeds]>,
    /// The clone's buffer streams as laying its file out left them, when they filled it.
    pub after_layout: Option<super::dedupe::BufferFill>,
    /// Its job's index in the stage (what [`Stage::left`] counts).
    pub job_index: usize,
    /// Its reporting group's index in the stage: which stop it obeys.
    pub report_group: usize,
    /// fio's `wait_for`: the stage's job (index) whose clones must all end before this
    /// clone starts; None when the job waits for none, or for one of an earlier stage.
    pub waitee: Option<usize>,
    /// A cpuio job with `exit_on_io_done`: the stage's jobs that do I/O, whose clones all
    /// ended end it (fio's `fio_running_or_pending_io_threads`). None: it runs its runtime,
    /// as in fio when a later stage's jobs are still pending or no job of the file does I/O.
    pub ends_with: Option<Vec<usize>>,
}

/// What a clone shares with the other clones of its stage besides the start.
pub struct Stage<'a> {
    /// The whole stage's stop (a failed clone, an `exitall` with `exit_what=all`); whoever
    /// runs the stage copies it into every clone's stop.
    pub stop: &'a AtomicBool,
    /// Clones still running, per job of the stage: `wait_for` waits for its job's to be 0.
    pub left: &'a [AtomicU32],
    /// The workload's flows (fio's `flow`), shared by every stage.
    pub flows: &'a super::flow::Flows,
    /// Each clone's stop, which it obeys, in the stage's clone order.
    pub clones: &'a [AtomicBool],
    /// Each clone's reporting group, in the same order.
    pub groups: &'a [usize],
    /// Set by each clone as it starts its I/O, past its `start_delay` and `wait_for`: what
    /// fio's `exit_what=stonewall` stops (fio terminates the jobs whose runstate is running
    /// or later; a job still in its start delay or waiting for another starts later and runs
    /// in full).
    pub running: &'a [AtomicBool],
}

impl Stage<'_> {
    /// The flow a job of options `o` issues in, if it has a weight.
    pub(super) fn flow_of(&self, o: &IoOptions) -> Option<&super::flow::Flow> {
        (o.flow > 0).then(|| self.flows.get(o.flow_id)).flatten()
    }

    /// Returns once every clone of the stage's job `waitee` has ended, or on `stop`.
    fn wait_for(&self, waitee: Option<usize>, stop: &AtomicBool) {
        let Some(left) = waitee.and_then(|w| self.left.get(w)) else { return };
        while left.load(Ordering::SeqCst) > 0 && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Stops the stage and every clone of it at once.
    fn stop_all(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.clones.iter().for_each(|c| c.store(true, Ordering::SeqCst));
    }

    /// Stops every clone of reporting group `group` (fio's `exit_what=group`: its group's
    /// jobs, started or not).
    fn stop_group(&self, group: usize) {
        for (c, g) in self.clones.iter().zip(self.groups) {
            if *g == group {
                c.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Stops every clone that has started its I/O (fio's `exit_what=stonewall`); the others
    /// run in full when their delay or their wait ends.
    fn stop_running(&self) {
        for (c, r) in self.clones.iter().zip(self.running) {
            if r.load(Ordering::SeqCst) {
                c.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Marks the clone whose stop is `stop` as running (see [`Stage::running`]). The clone is
    /// found by its flag's address: every clone's `stop` is its element of `clones`.
    fn mark_running(&self, stop: &AtomicBool) {
        if let Some(i) = self.clones.iter().position(|c| std::ptr::eq(c, stop)) {
            if let Some(r) = self.running.get(i) {
                r.store(true, Ordering::SeqCst);
            }
        }
    }
}

/// Runs one clone on engine `E`: set the engine up, open, wait at `start`, measure,
/// end_fsync, verify.
pub fn run_clone<E: Engine>(
    spec: &CloneSpec,
    root: BorrowedFd<'_>,
    start: &dyn super::process::Start,
    stop: &AtomicBool,
    stage: &Stage<'_>,
    live: &fsarena_workload::Live,
    ss: Option<&super::steady::Slot>,
) -> CloneResult {
    let o = &spec.options;
    // fio counts the faults of the job's whole life (its buffers' first touches among them).
    let life_start = Rusage::thread();
    let expected_seconds = o.runtime.map_or(64, |r| (r.0 / 1_000_000_000) as usize + 2);
    let mut result = CloneResult::empty(
        expected_seconds,
        super::iolog::SampleLog::new(
            &super::iolog::LogOptions::of(&o.outputs),
            &super::iolog::LogJob { name: &o.name, thread_number: spec.thread_number, first_clone: spec.clone == 0 },
            o.ramp_time.0 == 0,
        ),
    );
    let config = o.engine_config(spec.align);
    let diskless = E::caps(&config).diskless;
    // fio's file engines never open the files they create, stat or delete: they get the
    // root, and make their call on each file's name in it (queue.rs `file_ops`).
    let unopened = diskless || E::caps(&config).file_op.is_some();
    let opened = E::new(&config)
        .map_err(|e| (e.raw_os_error().unwrap_or(libc::EIO), format!("ioengine={}: cannot set it up: {e}", E::NAME)))
        .and_then(
            |engine| if unopened { Ok((engine, Vec::new())) } else { open_files(spec, root).map(|f| (engine, f)) },
        );
    let (mut engine, handles) = match opened {
        Ok(x) => x,
        Err(e) => {
            result.error = Some(e);
            stage.stop_all();
            start.wait();
            return result;
        }
    };
    // fio's net engine binds its listener in its setup: before the stage's start barrier, so
    // every listener of the stage is bound before any job connects (net.rs).
    let mut net = None;
    if o.ioengine == fsarena_engine::EngineKind::Net {
        match super::net::Endpoint::setup(o, spec.clone) {
            Ok(endpoint) => net = Some(endpoint),
            Err(e) => {
                result.error = Some(e);
                stage.stop_all();
                start.wait();
                return result;
            }
        }
    }
    // A diskless engine touches no file: it gets the root as a stand-in it never uses.
    let fds: Vec<BorrowedFd<'_>> =
        if unopened { vec![root; spec.files.len()] } else { handles.iter().map(|f| f.as_fd()).collect() };
    let mut files = file_states(spec, &fds);
    for f in &files {
        if let Err(e) = engine.open_file(f.fd) {
            result.error = Some((e.raw_os_error().unwrap_or(libc::EIO), format!("ioengine={}: {e}", E::NAME)));
            stage.stop_all();
            break;
        }
    }
    let buffers = engine.buffers();
    for slot in 0..buffers.slots() {
        // The thread number, not the clone's, so that two jobs never write the same blocks.
        let seed = o.randseed ^ u64::from(spec.thread_number) ^ (u64::from(slot) << 40);
        fill_buffer(buffers.slot_mut(slot), o.buffer_compress_percentage, seed);
        if let Some(pattern) = &o.buffer_pattern {
            super::options::fill_pattern(buffers.slot_mut(slot), pattern);
        }
    }
    // A deduping or compressing job fills each write afresh; its I/O units' first fill in
    // fio takes the streams' first turns, which fsarena's refills then follow.
    // A job that only reads fills nothing.
    let mut refill = spec
        .after_layout
        .clone()
        .or_else(|| super::dedupe::BufferFill::new(o, spec.thread_number, &spec.buffer_seeds))
        .filter(|_| o.rw.writes());
    if let Some(d) = &mut refill {
        d.skip(o.iodepth.max(1), o.max_bs() as usize);
    }
    // A clone the barrier itself releases (no start delay, no waitee) is running from the
    // barrier on, as fio's main thread marks every job it releases TD_RUNNING before it lets
    // any of them go: a short job's exitall (exit_what=stonewall) that ends before a sibling
    // has reached its first I/O still stops that sibling.
    let at_barrier = o.startdelay.0 == 0 && spec.waitee.is_none();
    if at_barrier {
        stage.mark_running(stop);
    }
    start.wait();
    o.wait_start_delay(stop);
    // fio starts a job with wait_for once its waitee has exited (after its start_delay).
    stage.wait_for(spec.waitee, stop);
    if stop.load(Ordering::Relaxed) {
        return result;
    }
    if !at_barrier {
        stage.mark_running(stop);
    }
    let cpu_start = Rusage::thread();
    if o.verify_only {
        // fio's verify_only: nothing written; the units an earlier run wrote are checked, as
        // its saved state names them (verify_state_load) or, without one, every unit of the
        // region (what a completed pass of a write job writes).
        for (i, f) in files.iter_mut().enumerate() {
            match spec.verify_state.as_ref().and_then(|s| s.get(i)) {
                Some(saved) => f.written.clone_from(saved),
                None => f.written = all_units(f.blocks),
            }
        }
    } else if o.ioengine == fsarena_engine::EngineKind::CpuIo {
        super::noio::cpuio(spec, stop, stage.left, &mut result);
    } else if o.ioengine == fsarena_engine::EngineKind::Exec {
        super::noio::exec(spec, root, stop, &mut result);
    } else if let Some(endpoint) = net {
        super::net::run(endpoint, (o, spec.thread_number), stop, live, &mut result);
    } else {
        super::queue::measured_phase(
            spec,
            &mut engine,
            &mut files,
            stop,
            live,
            &mut result,
            (ss, refill.as_mut(), stage.flow_of(o)),
        );
    }
    if result.error.is_none() {
        result.error = o.ratemin_missed(result.bytes, result.runtime_ns).map(|e| (libc::EIO, e));
    }
    let end = Rusage::thread();
    result.cpu = end.since(cpu_start).within(result.runtime_ns);
    let life = end.since(life_start);
    (result.cpu.majflt, result.cpu.minflt) = (life.majflt, life.minflt);
    if o.verify && o.verify_state_save && !o.verify_only {
        result.written = files.iter().map(|f| f.written.clone()).collect();
    }
    let verify_pass = o.verify && (o.do_verify || o.verify_only) && !diskless;
    if verify_pass && result.error.is_none() && !(o.verify_fatal && result.verify_errors > 0) {
        let t = std::time::Instant::now();
        let mut checked = super::verify::Checked::default();
        for (f, handle) in files.iter().zip(&handles) {
            // With verify_backlog, what the backlog checked already is not read again.
            let bitmap = f.unverified.as_ref().unwrap_or(&f.written);
            match verify::check_file(
                handle.as_fd(),
                &f.path,
                f.start,
                (o.min_bs(), o.verify_interval()),
                bitmap,
                spec.align,
                o.verify_fatal,
            ) {
                Ok(c) => checked.add(c),
                Err(e) => {
                    result.error = Some((libc::EIO, e));
                    break;
                }
            }
            if o.verify_fatal && checked.bad > 0 {
                break;
            }
        }
        result.verified_bytes += checked.units * o.min_bs();
        result.verify_errors += checked.bad;
        if result.verify_first.is_none() {
            result.verify_first = checked.first;
        }
        if o.verify_only {
            // What verify_only moves is its reads: the job's figures.
            result.bytes[READ] += checked.units * o.min_bs();
            result.ios[READ] += checked.units;
            result.runtime_ns = t.elapsed().as_nanos() as u64;
        }
        result.verify_ns = t.elapsed().as_nanos() as u64;
    }
    if !o.verify_only && verify_pass && result.error.is_none() {
        // fio reads every written I/O back and counts those reads as the job's reads.
        result.bytes[READ] += result.bytes[WRITE];
        result.ios[READ] += result.ios[WRITE];
    }
    if result.error.is_none() && result.verify_errors > 0 {
        let first = result.verify_first.clone().unwrap_or_default();
        let n = result.verify_errors;
        result.error =
            Some((libc::EILSEQ, format!("{first} ({n} block{} failed verify)", if n == 1 { "" } else { "s" })));
    }
    // fio's exitall: this job's end stops the others of its reporting group, or every job
    // of the stage already running (exit_what=stonewall), or every job (all, which also
    // skips the stages after: the workload does that).
    if o.exitall {
        match o.exit_what {
            super::options::ExitWhat::Group => stage.stop_group(spec.report_group),
            super::options::ExitWhat::Stonewall => stage.stop_running(),
            super::options::ExitWhat::All => stage.stop_all(),
        }
    }
    result
}

/// Opens the clone's files, laid out already, relative to the target root: never through a
/// link, and only regular files.
fn open_files(spec: &CloneSpec, root: BorrowedFd<'_>) -> Result<Vec<File>, (i32, String)> {
    let o = &spec.options;
    let mut flags = if o.rw.writes() && !o.verify_only { OFlags::RDWR } else { OFlags::RDONLY };
    for (on, flag) in [
        (o.direct, OFlags::DIRECT),
        (o.sync == SyncMode::Sync, OFlags::SYNC),
        (o.sync == SyncMode::Dsync, fsarena_engine::O_DSYNC),
    ] {
        if on {
            flags |= flag;
        }
    }
    let mut out = Vec::with_capacity(spec.files.len());
    for path in &spec.files {
        let file = super::files::open_existing(root, path, flags).map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            if o.direct && errno == libc::EINVAL {
                let fs = fsarena_engine::filesystem_name(path.parent().unwrap_or(path));
                (errno, format!("direct=1: {fs} at {} refuses O_DIRECT (open: {e}); run with direct=0", path.display()))
            } else {
                (errno, format!("cannot open {}: {e}", path.display()))
            }
        })?;
        if o.invalidate {
            // fio's invalidate=1: start from a cold page cache for this file.
            let _ = rustix::fs::fadvise(file.as_fd(), 0, None, rustix::fs::Advice::DontNeed);
        }
        out.push(file);
    }
    Ok(out)
}

/// How long one clone of a job with options `o` runs, when its options fix it: fio's
/// `time_based` with a `runtime`, after its `ramp_time`. A job that moves a size (with or
/// without a `runtime` cap) ends when the filesystem has moved it: unknown beforehand.
pub fn duration(o: &IoOptions) -> Option<std::time::Duration> {
    match o.runtime {
        Some(runtime) if o.time_based => Some(std::time::Duration::from_nanos(runtime.0.saturating_add(o.ramp_time.0))),
        _ => None,
    }
}

/// A bitmap with the first `blocks` units set.
fn all_units(blocks: u64) -> Vec<u64> {
    let mut v = vec![u64::MAX; blocks.div_ceil(64) as usize];
    if !blocks.is_multiple_of(64) {
        if let Some(last) = v.last_mut() {
            *last = (1u64 << (blocks % 64)) - 1;
        }
    }
    v
}

/// Where each file's I/O goes and in which order; `fds[i]` is `spec.files[i]`, open.
pub(super) fn file_states<'fd>(spec: &CloneSpec, fds: &[BorrowedFd<'fd>]) -> Vec<FileState<'fd>> {
    let o = &spec.options;
    let map = uses_block_map(o);
    spec.files
        .iter()
        .zip(fds)
        .enumerate()
        .map(|(i, (path, &fd))| {
            let blocks = io_span(o, spec.file_sizes.get(i).copied().unwrap_or(spec.file_size)) / o.min_bs();
            let seed = o.randseed ^ (u64::from(spec.clone) << 32) ^ (i as u64) << 16;
            FileState {
                fd,
                path: path.clone(),
                start: o.offset,
                blocks,
                seq: [0; 2],
                last_start: [None; 2],
                taken: 0,
                perm: Permutation::new(blocks.max(1), seed),
                map: map.then(|| BlockMap::new(blocks)),
                written: if o.verify { vec![0; blocks.div_ceil(64) as usize] } else { Vec::new() },
                unverified: (o.verify && o.verify_backlog > 0 && !o.verify_only)
                    .then(|| vec![0; blocks.div_ceil(64) as usize]),
                exhausted: false,
            }
        })
        .collect()
}

/// Bytes of each file the job's I/O covers, from `offset`, as fio: `size` (per file) is the
/// span after `offset`, so the file is `offset + size` long; `filesize` is the whole file, so
/// the span is what follows `offset` in it.
pub(super) fn io_span(o: &IoOptions, file_size: u64) -> u64 {
    if o.filesize.is_some() {
        file_size.saturating_sub(o.offset)
    } else {
        file_size
    }
}

/// Each file's size under `filesize=MIN-MAX` for the clone numbered `thread_number`, drawn
/// from fio's file-size stream (filesetup.c `get_rand_file_size`): MIN + (MAX − MIN) × U,
/// rounded down to the smallest block. Empty when the files are all one size.
pub(super) fn drawn_file_sizes(o: &IoOptions, thread_number: u32, files: usize) -> Vec<u64> {
    let (Some(lo), Some(hi)) = (o.filesize, o.filesize_max) else { return Vec::new() };
    let seed = o.fio_seed();
    let seeds = super::fiorand::Seeds::new(seed, u64::from(thread_number), o.fixed_block_seed());
    let mut r = seeds.stream(super::fiorand::Stream::FileSize, o.tausworthe64);
    let unit = o.min_bs().max(1);
    (0..files)
        .map(|_| {
            let size = lo + ((hi - lo) as f64 * r.unit()) as u64;
            size - size % unit
        })
        .collect()
}

/// True when a job's random I/Os take fio's random map rather than the permutation: their
/// sizes differ (`bsrange`, `bssplit`, or per-direction `bs` in a mixed job), so an I/O may
/// overlap blocks done already and fio shrinks it. Equal sizes visit each block once either
/// way, and the permutation needs no bitmap. fio 3.33 keeps no random map under a zipf or a
/// zoned distribution (its zoned draws repeat blocks, as `norandommap` does: checked with
/// `--debug=random`, which never reports a busy block there), and neither does fsarena.
pub(super) fn uses_block_map(o: &IoOptions) -> bool {
    let sizes_differ = o.sizes_drawn() || (o.rw.reads() && o.rw.writes() && o.bs[READ] != o.bs[WRITE]);
    // Under rw=randread:N the I/Os between random ones overlap blocks done: fio's map and
    // its draws decide where the random ones land.
    o.rw.is_random()
        && (sizes_differ || o.rw_seq_nr > 1)
        && !o.norandommap
        && matches!(o.random_distribution, super::options::Distribution::Random)
}

/// Fills the write buffer: random bytes, with `compress_pct` of every 512-byte chunk zeroed
/// (fio's `buffer_compress_percentage`, with its default `buffer_compress_chunk=512`).
pub fn fill_buffer(buf: &mut [u8], compress_pct: u32, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    rng.fill(buf);
    if compress_pct > 0 {
        let zeros = 512 * compress_pct as usize / 100;
        for chunk in buf.chunks_mut(512) {
            let n = zeros.min(chunk.len());
            let len = chunk.len();
            chunk[len - n..].fill(0);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::options::Rw;
    use super::*;

    #[test]
    fn compressible_buffers_have_zero_tails() {
        let mut b = vec![0u8; 4096];
        fill_buffer(&mut b, 50, 1);
        for chunk in b.chunks(512) {
            assert!(chunk[256..].iter().all(|&x| x == 0));
            assert!(chunk[..256].iter().filter(|&&x| x != 0).count() > 200);
        }
    }

    #[test]
    fn a_job_lasts_its_runtime_and_ramp_only_when_time_based() {
        use std::time::Duration;
        let job = |spec: &str| super::super::IoWorkload::from_spec(&fsarena_core::Spec::parse(spec).unwrap()).unwrap();
        let o = |spec: &str| job(spec).jobs[0].options.clone();
        assert_eq!(duration(&o("io:size=1m,runtime=10s,time_based=1,ramp_time=2s")), Some(Duration::from_secs(12)));
        // A size-based job ends when the bytes are moved; a runtime only caps it.
        assert_eq!(duration(&o("io:size=1g")), None);
        assert_eq!(duration(&o("io:size=1g,runtime=10s")), None);
        use fsarena_workload::Workload;
        assert_eq!(job("io:size=1m,runtime=3s,time_based=1").estimate(), Some(Duration::from_secs(3)));
        assert_eq!(job("io:size=1m").estimate(), None);
    }

    #[test]
    fn a_job_file_lasts_its_groups_one_after_the_other() {
        use fsarena_workload::Workload;
        use std::time::Duration;
        let text = "[global]\nsize=1m\ntime_based=1\nruntime=2s\n[a]\nrw=read\n[b]\nrw=write\nruntime=5s\n\
                    [c]\nstonewall\nrw=randread\nramp_time=1s\n";
        let w = super::super::IoWorkload::from_job_file(super::super::jobfile::parse_str(text, "t.fio").unwrap());
        // Group 1: a (2 s) beside b (5 s); group 2: c (2 s + 1 s ramp).
        assert_eq!(w.estimate(), Some(Duration::from_secs(8)));
        let sized = "[global]\nsize=1m\n[a]\nrw=read\n[b]\nstonewall\nruntime=1s\ntime_based=1\n";
        let w = super::super::IoWorkload::from_job_file(super::super::jobfile::parse_str(sized, "t.fio").unwrap());
        assert_eq!(w.estimate(), None, "one size-based group makes the whole unknown");
    }

    #[test]
    fn rw_directions() {
        assert!(Rw::RandRw.reads() && Rw::RandRw.writes() && Rw::RandRw.is_random());
        assert!(!Rw::Write.reads() && !Rw::Read.writes() && !Rw::Read.is_random());
    }
}
