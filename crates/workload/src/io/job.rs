//! One job clone on one thread: open, measured phase (the hot loop), end_fsync, verify.

use super::offsets::{Permutation, Zipf};
use super::options::{Distribution, IoOptions, SyncMode};
use super::verify;
use fsarena_engine::{AlignedBuf, Engine};
use fsarena_stats::{IntervalCounter, LatencyHistogram};
use rustix::fd::BorrowedFd;
use rustix::fs::OFlags;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

/// Direction indices, as fio numbers them.
pub const READ: usize = 0;
/// Writes.
pub const WRITE: usize = 1;

/// What one clone measured.
#[derive(Debug, Clone)]
pub struct CloneResult {
    /// Completion latency per direction.
    pub clat: [LatencyHistogram; 2],
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
    /// CPU use over the measured phase: user ns, system ns, context switches, major and
    /// minor faults.
    pub cpu: Rusage,
    /// The first error: errno and message.
    pub error: Option<(i32, String)>,
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
struct FileState {
    file: File,
    path: PathBuf,
    /// First byte of the I/O region.
    start: u64,
    /// Blocks of `unit` bytes in the region.
    blocks: u64,
    /// Next sequential block per direction (fio keeps `last_pos` per direction).
    seq: [u64; 2],
    /// Next position in the random permutation.
    taken: u64,
    perm: Permutation,
    /// Units written, for the verify pass.
    written: Vec<u64>,
    exhausted: bool,
}

/// Everything a clone needs; built by the workload before the threads start.
#[derive(Debug, Clone)]
pub struct CloneSpec {
    /// The job's options.
    pub options: IoOptions,
    /// The clone's number within its job (the N of NAME.N.M).
    pub clone: u32,
    /// The clone's files, laid out already where the job reads.
    pub files: Vec<PathBuf>,
    /// Bytes of each file to use (from `offset`).
    pub file_size: u64,
    /// Buffer alignment for O_DIRECT.
    pub align: usize,
}

/// Runs one clone: open, wait at `start`, measure, end_fsync, verify.
pub fn run_clone<E: Engine>(
    spec: &CloneSpec,
    root: BorrowedFd<'_>,
    mut engine: E,
    start: &Barrier,
    stop: &AtomicBool,
) -> CloneResult {
    let o = &spec.options;
    let expected_seconds = o.runtime.map_or(64, |r| (r.0 / 1_000_000_000) as usize + 2);
    let mut result = CloneResult {
        clat: [LatencyHistogram::new(), LatencyHistogram::new()],
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
        cpu: Rusage::default(),
        error: None,
    };
    let files = match open_files(spec, root) {
        Ok(f) => f,
        Err(e) => {
            result.error = Some(e);
            stop.store(true, Ordering::Relaxed);
            start.wait();
            return result;
        }
    };
    let mut files = files;
    let mut buf = AlignedBuf::new(o.max_bs() as usize, spec.align);
    fill_buffer(buf.as_mut_slice(), o.buffer_compress_percentage, o.randseed ^ u64::from(spec.clone));
    start.wait();
    if stop.load(Ordering::Relaxed) {
        return result;
    }
    let cpu_start = Rusage::thread();
    measured_phase(spec, &mut engine, &mut files, &mut buf, stop, &mut result);
    result.cpu = Rusage::thread().since(cpu_start);
    if o.verify && o.do_verify && result.error.is_none() {
        let t = std::time::Instant::now();
        for f in &files {
            if let Err(e) = verify::check_file(&f.file, &f.path, f.start, spec.options.min_bs(), &f.written, spec.align)
            {
                result.error = Some((libc::EILSEQ, e));
                break;
            }
        }
        result.verify_ns = t.elapsed().as_nanos() as u64;
    }
    result
}

/// Opens the clone's files, laid out already, relative to the target root: never through a
/// link, and only regular files.
fn open_files(spec: &CloneSpec, root: BorrowedFd<'_>) -> Result<Vec<FileState>, (i32, String)> {
    let o = &spec.options;
    let unit = o.min_bs();
    let mut flags = if o.rw.writes() { OFlags::RDWR } else { OFlags::RDONLY };
    for (on, flag) in [
        (o.direct, OFlags::DIRECT),
        (o.sync == SyncMode::Sync, OFlags::SYNC),
        (o.sync == SyncMode::Dsync, OFlags::DSYNC),
    ] {
        if on {
            flags |= flag;
        }
    }
    let mut out = Vec::with_capacity(spec.files.len());
    for (i, path) in spec.files.iter().enumerate() {
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
        let blocks = spec.file_size.saturating_sub(o.offset) / unit;
        let seed = o.randseed ^ (u64::from(spec.clone) << 32) ^ (i as u64) << 16;
        out.push(FileState {
            file,
            path: path.clone(),
            start: o.offset,
            blocks,
            seq: [0; 2],
            taken: 0,
            perm: Permutation::new(blocks.max(1), seed),
            written: if o.verify { vec![0; blocks.div_ceil(64) as usize] } else { Vec::new() },
            exhausted: false,
        });
    }
    Ok(out)
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

/// Decoded per-op choices, so the hot loop reads plain fields.
struct Plan {
    mixed: bool,
    fixed_dir: usize,
    rwmixread: u32,
    bs: [u64; 2],
    split: Vec<(u64, u32)>,
    unit: u64,
    random: bool,
    uniform_repeats: bool,
    zipf: Option<Zipf>,
    pass_bytes: u64,
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
    let blocks = spec.file_size.saturating_sub(o.offset) / o.min_bs();
    let mut split = o.bssplit.clone();
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
        split,
        unit: o.min_bs(),
        random: o.rw.is_random(),
        uniform_repeats: o.norandommap,
        zipf: match o.random_distribution {
            Distribution::Zipf(theta) if o.rw.is_random() => Some(Zipf::new(blocks.max(1), theta)),
            _ => None,
        },
        pass_bytes: o.job_size(),
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
    /// Next offset in `f` for an I/O of `bs` bytes in direction `dir`; None when the file's
    /// pass is over.
    #[inline]
    fn next_offset(&self, f: &mut FileState, dir: usize, bs: u64, rng: &mut fastrand::Rng) -> Option<u64> {
        let region = f.blocks * self.unit;
        let block = if !self.random {
            let b = f.seq[dir];
            if b * self.unit + bs > region {
                return None;
            }
            f.seq[dir] += bs.div_ceil(self.unit);
            return Some(f.start + b * self.unit);
        } else if let Some(z) = &self.zipf {
            // Hot ranks scattered over the file, as fio hashes its zipf ranks.
            f.perm.at(z.sample(rng))
        } else if self.uniform_repeats {
            rng.u64(0..f.blocks)
        } else {
            if f.taken >= f.blocks {
                return None;
            }
            f.taken += 1;
            f.perm.at(f.taken - 1)
        };
        let off = (block * self.unit).min(region - bs) / self.unit * self.unit;
        Some(f.start + off)
    }

    #[inline]
    fn block_size(&self, dir: usize, rng: &mut fastrand::Rng) -> u64 {
        if self.split.is_empty() {
            return self.bs[dir];
        }
        let draw = rng.u32(0..100);
        self.split.iter().find(|e| draw < e.1).map_or(self.unit, |e| e.0)
    }
}

fn reset_pass(files: &mut [FileState], seed: u64, pass: u64) {
    for (i, f) in files.iter_mut().enumerate() {
        f.seq = [0; 2];
        f.taken = 0;
        f.exhausted = false;
        if pass > 0 {
            f.perm = Permutation::new(f.blocks.max(1), seed ^ pass.wrapping_mul(0x9E37_79B9) ^ i as u64);
        }
    }
}

/// The measured phase. One clock read per I/O: the end of one I/O is the start of the next,
/// so the loop's own bookkeeping (tens of nanoseconds) is counted in the next I/O's latency
/// rather than costing a second clock read.
fn measured_phase<E: Engine>(
    spec: &CloneSpec,
    engine: &mut E,
    files: &mut [FileState],
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
    r: &mut CloneResult,
) {
    let p = plan(spec);
    let clock = quanta::Clock::new();
    let mut rng = fastrand::Rng::with_seed(spec.options.randseed.wrapping_add(u64::from(spec.clone)));
    let seed = spec.options.randseed ^ u64::from(spec.clone);
    let mut prev = clock.raw();
    let mut elapsed: u64 = 0; // since the phase began, ramp included
    let mut measuring = p.ramp_ns == 0;
    let mut measure_start: u64 = 0;
    let mut pass: u64 = 0;
    let mut pass_bytes: u64 = 0;
    let mut current = 0usize;
    let mut writes_since_sync: u32 = 0;
    let mut done_bytes = [0u64; 2]; // for rate limits, measured and ramp alike
    let mut done_ios = [0u64; 2];
    let nfiles = files.len();
    let limited = p.rate != [0, 0] || p.rate_iops != [0, 0];
    let buf = buf.as_mut_slice();

    'io: loop {
        if stop.load(Ordering::Relaxed) || elapsed >= p.deadline_ns {
            break;
        }
        // End of a pass: all files exhausted or the job's bytes moved.
        if pass_bytes >= p.pass_bytes || files.iter().all(|f| f.exhausted) {
            pass += 1;
            if !p.time_based && pass >= p.passes {
                break;
            }
            reset_pass(files, seed, pass);
            pass_bytes = 0;
        }
        let dir = if p.mixed {
            if rng.u32(0..100) < p.rwmixread {
                READ
            } else {
                WRITE
            }
        } else {
            p.fixed_dir
        };
        let bs = p.block_size(dir, &mut rng);
        // Round-robin over the files (fio's file_service_type=roundrobin).
        let mut tries = 0;
        let (fi, offset) = loop {
            let fi = current;
            current = if current + 1 == nfiles { 0 } else { current + 1 };
            let f = &mut files[fi];
            if !f.exhausted {
                match p.next_offset(f, dir, bs, &mut rng) {
                    Some(off) => break (fi, off),
                    None => f.exhausted = true,
                }
            }
            tries += 1;
            if tries > nfiles {
                continue 'io; // every file is done with this pass
            }
        };
        let f = &mut files[fi];
        let len = bs as usize;
        let outcome = if dir == READ {
            engine.read_at(f.file.as_fd(), &mut buf[..len], offset)
        } else {
            if p.verify {
                verify::stamp(&mut buf[..len], offset - f.start, p.unit, seed);
            } else {
                // fio's scramble_buffers: make each written block differ.
                buf[..8].copy_from_slice(&offset.to_le_bytes());
            }
            engine.write_at(f.file.as_fd(), &buf[..len], offset)
        };
        let now = clock.raw();
        let lat = clock.delta_as_nanos(prev, now);
        prev = now;
        elapsed += lat;
        let n = match outcome {
            Ok(n) => n as u64,
            Err(e) => {
                let what = if dir == READ { "read" } else { "write" };
                r.error = Some((
                    e.raw_os_error().unwrap_or(libc::EIO),
                    format!("{what} of {bs} bytes at offset {offset} of {}: {e}", f.path.display()),
                ));
                break;
            }
        };
        if n < bs {
            r.short_ios[dir] += 1;
            if n == 0 {
                f.exhausted = true;
                continue;
            }
        }
        pass_bytes += n;
        if dir == WRITE && p.verify {
            verify::mark(&mut f.written, offset - f.start, n, p.unit);
        }
        if measuring {
            r.clat[dir].record(lat);
            r.bytes[dir] += n;
            r.ios[dir] += 1;
            r.series[dir].add(elapsed - measure_start, n);
        } else if elapsed >= p.ramp_ns {
            measuring = true;
            measure_start = elapsed;
        }
        if dir == WRITE && p.sync_every > 0 {
            writes_since_sync += 1;
            if writes_since_sync == p.sync_every {
                writes_since_sync = 0;
                let res =
                    if p.datasync { rustix::fs::fdatasync(f.file.as_fd()) } else { rustix::fs::fsync(f.file.as_fd()) };
                let now = clock.raw();
                let lat = clock.delta_as_nanos(prev, now);
                prev = now;
                elapsed += lat;
                if measuring {
                    r.sync.record(lat);
                }
                if let Err(e) = res {
                    r.error = Some((e.raw_os_error(), format!("fsync of {}: {e}", f.path.display())));
                    break;
                }
            }
        }
        if limited {
            done_bytes[dir] += n;
            done_ios[dir] += 1;
            let due = [
                if p.rate[dir] > 0 {
                    (u128::from(done_bytes[dir]) * 1_000_000_000 / u128::from(p.rate[dir])) as u64
                } else {
                    0
                },
                if p.rate_iops[dir] > 0 {
                    (u128::from(done_ios[dir]) * 1_000_000_000 / u128::from(p.rate_iops[dir])) as u64
                } else {
                    0
                },
            ];
            let due = due[0].max(due[1]);
            if due > elapsed {
                std::thread::sleep(std::time::Duration::from_nanos(
                    (due - elapsed).min(p.deadline_ns.saturating_sub(elapsed)),
                ));
                let now = clock.raw();
                elapsed += clock.delta_as_nanos(prev, now);
                prev = now;
            }
        }
    }
    if spec.options.end_fsync && r.error.is_none() {
        for f in files.iter() {
            let res = rustix::fs::fsync(f.file.as_fd());
            let now = clock.raw();
            let lat = clock.delta_as_nanos(prev, now);
            prev = now;
            elapsed += lat;
            r.sync.record(lat);
            if let Err(e) = res {
                r.error = Some((e.raw_os_error(), format!("end_fsync of {}: {e}", f.path.display())));
                break;
            }
        }
    }
    r.runtime_ns = if measuring { elapsed - measure_start } else { 0 };
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
    fn rw_directions() {
        assert!(Rw::RandRw.reads() && Rw::RandRw.writes() && Rw::RandRw.is_random());
        assert!(!Rw::Write.reads() && !Rw::Read.writes() && !Rw::Read.is_random());
    }
}
