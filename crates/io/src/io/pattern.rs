//! Where the next I/O goes and how large it is, as fio chooses: direction (rwmix), offset
//! (sequential, the random permutation, fio's random map, zipf, zoned) and block size
//! (bs, bsrange, bssplit).

use super::fiorand::{FioRand, Seeds, Stream};
use super::job::{CloneSpec, FileState, READ, WRITE};
use super::offsets::Zipf;
use super::options::Distribution;

/// A clone's random choices: fio's own streams wherever fio's choice changes what is moved
/// (sizes, the read/write mix, the random map's offsets, zones), so that counts match fio's
/// exactly; fsarena's generator elsewhere (uniform repeats, zipf ranks).
pub(super) struct Draws {
    bs: [FioRand; 2],
    block: FioRand,
    mix: FioRand,
    zone: FioRand,
    /// fio's `poisson_state` per direction: the gaps of `rate_process=poisson`.
    pub(super) poisson: [FioRand; 2],
    /// fio's `rwmix_ddir`: the direction of the current run of a mixed job.
    mix_dir: usize,
    /// fio's `rwmix_issues`: the current direction holds until it has issued this many.
    mix_issues: u64,
    /// I/Os issued per direction (fio's `io_issues`).
    issues: [u64; 2],
    /// fsarena's own generator.
    pub(super) rng: fastrand::Rng,
    /// fio's `td->ddir_seq_nr`: I/Os left until the next random offset under
    /// `rw=randread:N`, over both directions; not reset at a new loop, as in fio.
    seq_left: u32,
    /// The seed, fio's job number and the clone the streams came from: fio seeds them again
    /// at every loop.
    origin: (u64, u32, u32),
}

impl Draws {
    /// The streams of `spec`'s clone, seeded as fio seeds job number `thread_number`.
    pub(super) fn new(spec: &CloneSpec) -> Self {
        Self::of(&spec.options, spec.thread_number, spec.clone)
    }

    /// The streams of clone `clone` of a job with options `o`, fio's job number
    /// `thread_number`.
    fn of(o: &super::options::IoOptions, thread_number: u32, clone: u32) -> Self {
        // fio seeds from the system when randrepeat=0 and no randseed is given.
        Self::seeded(o, o.fio_seed(), thread_number, clone)
    }

    fn seeded(o: &super::options::IoOptions, seed: u64, thread_number: u32, clone: u32) -> Self {
        let seeds = Seeds::new(seed, u64::from(thread_number), o.fixed_block_seed());
        let read = seeds.stream(Stream::BsRead, o.tausworthe64);
        // fio: a verifying job draws its write sizes from the read seed, so that reads
        // see the sizes written.
        let write = if o.verify { read.clone() } else { seeds.stream(Stream::BsWrite, o.tausworthe64) };
        Self {
            bs: [read, write],
            block: seeds.stream(Stream::Block, o.tausworthe64),
            mix: seeds.stream(Stream::Mix, false),
            zone: seeds.stream(Stream::Zone, false),
            poisson: [seeds.stream(Stream::PoissonRead, false), seeds.stream(Stream::PoissonWrite, false)],
            mix_dir: READ,
            mix_issues: 0,
            issues: [0; 2],
            rng: fastrand::Rng::with_seed(seed.wrapping_add(u64::from(clone))),
            origin: (seed, thread_number, clone),
            // fio starts it at 1, not N (init.c): the first I/O is a random one.
            seq_left: 1,
        }
    }

    /// A new loop over the files, as fio's `clear_io_state` starts one: the run of the mixed
    /// job's current direction starts over (`rwmix_issues = 0`; the direction and the issue
    /// counts stay), and under `randrepeat` every stream is seeded again
    /// (`td_fill_rand_seeds`), so each loop draws what the first one drew.
    pub(super) fn new_loop(&mut self, o: &super::options::IoOptions) {
        self.mix_issues = 0;
        if o.randrepeat {
            let (seed, thread_number, clone) = self.origin;
            let fresh = Self::seeded(o, seed, thread_number, clone);
            (self.bs, self.block, self.mix, self.zone, self.poisson, self.rng) =
                (fresh.bs, fresh.block, fresh.mix, fresh.zone, fresh.poisson, fresh.rng);
        }
    }

    /// The direction of the next I/O of a mixed job (fio's `get_rw_ddir`): a direction holds
    /// for a run of I/Os, and a new draw of `rwmixread` comes when the run is over.
    #[inline]
    pub(super) fn direction(&mut self, rwmixread: u32) -> usize {
        if self.issues[self.mix_dir] >= self.mix_issues {
            let dir = if self.mix.between(1, 100) <= u64::from(rwmixread) { READ } else { WRITE };
            if dir != self.mix_dir {
                // fio's set_rwmix_bytes: the new direction's share of the old one's issues.
                let share = if self.mix_dir == READ { 100 - rwmixread } else { rwmixread };
                self.mix_issues = self.issues[self.mix_dir] * u64::from(share) / 100;
            }
            self.mix_dir = dir;
        }
        self.mix_dir
    }

    /// The rate's choice of direction replaces the mix's (fio's `rate_ddir` result becomes
    /// `rwmix_ddir`): the run goes on in `dir`.
    #[inline]
    pub(super) fn set_direction(&mut self, dir: usize) {
        self.mix_dir = dir;
    }

    /// Counts an I/O issued in `dir`.
    #[inline]
    pub(super) fn issued(&mut self, dir: usize) {
        self.issues[dir] += 1;
    }

    /// I/Os issued so far, both directions, every loop (fio's io_blocks + queued + in flight).
    #[inline]
    pub(super) fn issued_total(&self) -> u64 {
        self.issues[0] + self.issues[1]
    }

    /// The zone of the next random I/O under fio's zoned distribution, drawn by its share of
    /// the accesses (`zone_state`): its first block and its length in blocks of `blocks`.
    /// `None` unless zoned.
    #[inline]
    fn zone(&mut self, d: &Distribution, blocks: u64) -> Option<(u64, u64)> {
        let Distribution::Zoned(zones) = d else { return None };
        let v = self.zone.between(1, 100);
        let (mut access, mut start) = (0u64, 0u64);
        for &(a, size) in zones {
            access += u64::from(a);
            if v <= access {
                return Some((blocks * start / 100, blocks * u64::from(size) / 100));
            }
            start += u64::from(size);
        }
        Some((0, blocks))
    }

    /// A block in `[0, blocks)`: uniform, or inside a zone drawn as fio draws it.
    #[inline]
    fn zoned_block(&mut self, d: &Distribution, blocks: u64) -> u64 {
        match self.zone(d, blocks) {
            // A zone too small for a block of its own still gets one.
            Some((lo, n)) => (lo + self.block.below(n.max(1))).min(blocks.saturating_sub(1)),
            None => self.block.below(blocks),
        }
    }
}

/// Decoded per-op choices, so the hot loop reads plain fields.
pub(super) struct Plan {
    pub(super) mixed: bool,
    pub(super) fixed_dir: usize,
    pub(super) rwmixread: u32,
    /// fio's `bssplit` per direction, ordered as fio orders it (by percentage), percentages
    /// cumulated.
    pub(super) split: [Vec<(u64, u32)>; 2],
    /// fio's `bsrange` per direction.
    pub(super) range: [Option<(u64, u64)>; 2],
    /// Largest block per direction (fio's `max_bs[ddir]`).
    pub(super) maxbs: [u64; 2],
    /// Smallest block per direction: the random map's block and alignment for it (fio's
    /// `min_bs[ddir]`, `ba[ddir]`).
    pub(super) mbs: [u64; 2],
    pub(super) unit: u64,
    /// fio's `verify_interval`: the bytes each verify header covers (a divisor of `unit`).
    pub(super) verify_interval: u64,
    pub(super) random: bool,
    pub(super) uniform_repeats: bool,
    pub(super) zipf: Option<Zipf>,
    /// fio's `random_distribution`, for the zoned draw.
    pub(super) distribution: Distribution,
    pub(super) pass_bytes: u64,
    /// fio's io_size: a pass goes on over the files again until its bytes are moved.
    pub(super) wraps: bool,
    /// fio's `rw=read:8k`: bytes skipped after each sequential I/O (negative: back).
    pub(super) skip: i64,
    /// fio's `rw=randread:N`: a random offset every N I/Os.
    pub(super) seq_nr: u32,
    /// fio's `rw_sequencer=identical`.
    pub(super) identical: bool,
    pub(super) passes: u64,
    /// fio's `number_ios × loops`: a size-based job stops once it has issued this many I/Os
    /// over all its loops (0: no limit).
    pub(super) io_limit: u64,
    /// fio's `thinktime`: a pause after every `thinktime_blocks` I/Os.
    pub(super) think: Option<Think>,
    pub(super) time_based: bool,
    pub(super) deadline_ns: u64,
    pub(super) ramp_ns: u64,
    pub(super) sync_every: u32,
    pub(super) datasync: bool,
    pub(super) verify: bool,
    /// A job that only reads, with `verify=` and `do_verify=1`: its reads are checked.
    pub(super) verify_reads: bool,
    /// fio's `verify_fatal`.
    pub(super) verify_fatal: bool,
    /// fio's `fill_device`: ENOSPC ends the job.
    pub(super) fill_device: bool,
}

/// fio's `thinktime` family (backend.c `handle_thinktime`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Think {
    /// The whole pause (`thinktime`).
    pub(super) ns: u64,
    /// Its first part spent spinning on the CPU (`thinktime_spin`); the rest sleeps.
    pub(super) spin_ns: u64,
    /// I/Os between pauses (`thinktime_blocks`).
    pub(super) blocks: u64,
    /// Counted when issued (`thinktime_blocks_type=issue`), else when completed.
    pub(super) on_issue: bool,
}

pub(super) fn plan(spec: &CloneSpec) -> Plan {
    let o = &spec.options;
    let blocks = super::job::io_span(o, spec.file_size) / o.min_bs();
    let split = o.bssplit.clone().map(|mut split| {
        // fio sorts the entries by percentage before drawing (options.c, bs_cmp; stable).
        split.sort_by_key(|e| e.1);
        split.retain(|e| e.1 > 0);
        let mut acc = 0;
        for e in &mut split {
            acc += e.1;
            e.1 = acc;
        }
        split
    });
    Plan {
        mixed: o.rw.reads() && o.rw.writes(),
        fixed_dir: if o.rw.writes() { WRITE } else { READ },
        rwmixread: o.rwmixread,
        mbs: [0, 1].map(|d| o.min_bs_of(d)),
        maxbs: [0, 1].map(|d| o.max_bs_of(d)),
        range: o.bsrange,
        split,
        unit: o.min_bs(),
        verify_interval: o.verify_interval(),
        random: o.rw.is_random(),
        // fio keeps no random map under a zoned distribution: its blocks repeat.
        uniform_repeats: o.norandommap || matches!(o.random_distribution, Distribution::Zoned(_)),
        distribution: o.random_distribution.clone(),
        zipf: match o.random_distribution {
            Distribution::Zipf(theta) if o.rw.is_random() => Some(Zipf::new(blocks.max(1), theta)),
            _ => None,
        },
        pass_bytes: if spec.file_sizes.is_empty() || o.io_size.is_some() {
            o.job_size()
        } else {
            // fio: the files' drawn sizes add up to the job's size, or cap a size= given.
            let total: u64 = spec.file_sizes.iter().map(|&s| super::job::io_span(o, s)).sum();
            o.size.map_or(total, |s| s.min(total))
        },
        wraps: o.io_size.is_some(),
        skip: o.rw_skip,
        seq_nr: o.rw_seq_nr,
        identical: o.rw_sequencer_identical,
        passes: u64::from(o.loops),
        // fio checks it in do_io's loop condition, which a time-based job never leaves for it.
        think: (o.thinktime.0 > 0).then_some(Think {
            ns: o.thinktime.0,
            spin_ns: o.thinktime_spin.0.min(o.thinktime.0),
            blocks: u64::from(o.thinktime_blocks.max(1)),
            on_issue: o.thinktime_blocks_issue,
        }),
        io_limit: if o.time_based { 0 } else { o.number_ios.saturating_mul(u64::from(o.loops)) },
        time_based: o.time_based,
        deadline_ns: o.runtime.map_or(u64::MAX, |r| r.0.saturating_add(o.ramp_time.0)),
        ramp_ns: o.ramp_time.0,
        sync_every: if o.fsync > 0 { o.fsync } else { o.fdatasync },
        datasync: o.fsync == 0 && o.fdatasync > 0,
        verify: o.verify,
        verify_reads: o.verify && o.do_verify && !o.rw.writes() && !o.verify_only,
        verify_fatal: o.verify_fatal,
        fill_device: o.fill_device,
    }
}

impl Plan {
    /// Next I/O in `f` in direction `dir`: offset and length; None when the file's pass is
    /// over. As fio: the offset first, then a size that fits before the region's end; in the
    /// random map, an I/O shrinks to the free blocks at its start.
    #[inline]
    pub(super) fn next_io(&self, f: &mut FileState<'_>, dir: usize, draws: &mut Draws) -> Option<(u64, u64)> {
        let region = f.blocks * self.unit;
        let (pos, len) = if !self.random {
            let pos = self.seq_offset(f, dir, region)?;
            (pos, self.block_size(dir, draws, region - pos)?)
        } else if let Some(pos) = self.between_random(f, dir, draws, region) {
            (pos, self.block_size(dir, draws, region - pos)?)
        } else {
            let (off, len) = self.random_io(f, dir, draws, region)?;
            (off - f.start, len)
        };
        // fio's last_pos and last_start, after every I/O, random ones too.
        f.seq[dir] = pos + len;
        f.last_start[dir] = Some(pos);
        Some((f.start + pos, len))
    }

    /// fio's `get_next_seq_offset` (io_u.c), relative to the region: the next I/O starts
    /// where the last one ended, after the hole of `rw=read:SIZE`; a step past the end
    /// starts over at the region's start, a step back before it (`rw=read:-SIZE`) at the
    /// end, less the step. None when the last I/O reached the end.
    #[inline]
    fn seq_offset(&self, f: &FileState<'_>, dir: usize, region: u64) -> Option<u64> {
        let last = f.seq[dir];
        if last >= region {
            return None;
        }
        let mut pos = last;
        if pos != 0 && self.skip != 0 {
            pos = pos.wrapping_add_signed(self.skip);
            if pos >= region {
                pos = if self.skip > 0 { 0 } else { region.wrapping_add_signed(self.skip) };
            }
        }
        // fio: an offset at or past the file's io_size ends it.
        (pos < region).then_some(pos)
    }

    /// Under fio's `rw=randread:N`, the I/Os between random ones (get_next_offset,
    /// get_next_block): every Nth I/O of the clone draws a random offset (None here); the
    /// others go on from the last I/O of their direction (`rw_sequencer=sequential`; at the
    /// end, a random offset instead) or repeat its offset (`identical`).
    #[inline]
    fn between_random(&self, f: &FileState<'_>, dir: usize, draws: &mut Draws, region: u64) -> Option<u64> {
        if self.seq_nr <= 1 {
            return None;
        }
        draws.seq_left -= 1;
        if draws.seq_left == 0 {
            draws.seq_left = self.seq_nr;
            return None;
        }
        if self.identical {
            return Some(f.last_start[dir].unwrap_or(0));
        }
        self.seq_offset(f, dir, region)
    }

    /// A random offset (absolute) and length, as fio draws them.
    #[inline]
    fn random_io(&self, f: &mut FileState<'_>, dir: usize, draws: &mut Draws, region: u64) -> Option<(u64, u64)> {
        if let Some(map) = &mut f.map {
            // fio draws a block in units of this direction's smallest size, takes the next
            // free one when it is done, and marks (and shrinks to) the free run after it.
            let mbs = self.mbs[dir];
            let lastb = region / mbs;
            if lastb == 0 {
                return None;
            }
            let mut b = draws.block.below(lastb);
            if map.is_set(b) {
                b = map.next_free(b)?;
            }
            let off = b * mbs;
            if off >= region {
                return None;
            }
            let len = self.block_size(dir, draws, region - off)?;
            let nr = map.set_nr(b, len.div_ceil(mbs)).max(1);
            return Some((f.start + off, len.min(nr * mbs)));
        }
        let len = self.block_size(dir, draws, region)?;
        let block = if let Some(z) = &self.zipf {
            // Hot ranks scattered over the file, as fio hashes its zipf ranks.
            f.perm.at(z.sample(&mut draws.rng))
        } else if self.uniform_repeats {
            if matches!(self.distribution, Distribution::Zoned(_)) {
                draws.zoned_block(&self.distribution, f.blocks)
            } else {
                draws.rng.u64(0..f.blocks)
            }
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
    /// `get_next_buflen`: a fixed size must fit; `bsrange` draws MIN + MAX × U; `bssplit`
    /// takes the first entry, in fio's order, whose cumulated share covers the draw and
    /// that fits; the size is rounded down to a multiple of the smallest and capped at the
    /// largest, and drawn again until it fits. None when not even the smallest fits.
    #[inline]
    fn block_size(&self, dir: usize, draws: &mut Draws, room: u64) -> Option<u64> {
        let (min, max) = (self.mbs[dir], self.maxbs[dir]);
        if min == max {
            return (min <= room).then_some(min);
        }
        if room < min {
            return None;
        }
        let r = &mut draws.bs[dir];
        let rmax = r.max();
        loop {
            let v = r.next();
            let mut len = match self.range[dir] {
                Some(_) if self.split[dir].is_empty() => min + (max as f64 * (v as f64 / (rmax as f64 + 1.0))) as u64,
                _ => {
                    let mut len = min;
                    for &(bs, cum) in &self.split[dir] {
                        len = bs;
                        if v / u64::from(cum) <= rmax / 100 && bs <= room {
                            break;
                        }
                    }
                    len
                }
            };
            len = if min.is_power_of_two() { len & !(min - 1) } else { len - len % min };
            len = len.min(max);
            if len <= room {
                return Some(len);
            }
        }
    }
}

/// Under `randrepeat` (`repeat`) fio's offsets start over at every loop: the permutation of
/// the first pass is kept.
pub(super) fn reset_pass(files: &mut [FileState<'_>], seed: u64, pass: u64, repeat: bool) {
    for (i, f) in files.iter_mut().enumerate() {
        f.seq = [0; 2];
        f.last_start = [None; 2];
        f.taken = 0;
        f.exhausted = false;
        if let Some(map) = &mut f.map {
            map.clear();
        }
        if pass > 0 && !repeat {
            f.perm =
                super::offsets::Permutation::new(f.blocks.max(1), seed ^ pass.wrapping_mul(0x9E37_79B9) ^ i as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::options::IoOptions;

    #[test]
    fn zoned_draws_give_each_zone_its_share() {
        let mut d = Draws::of(&IoOptions::default(), 1, 0);
        let zoned = Distribution::Zoned(vec![(60, 10), (30, 20), (10, 70)]);
        let mut zones = [0u32; 3];
        for _ in 0..100_000 {
            let b = d.zoned_block(&zoned, 1000);
            zones[usize::from(b >= 100) + usize::from(b >= 300)] += 1;
        }
        for (got, want) in zones.iter().zip([60_000, 30_000, 10_000]) {
            assert!(got.abs_diff(want) < 1500, "{zones:?}");
        }
        // Zones smaller than a block still land inside the region.
        let tiny = Distribution::Zoned(vec![(50, 1), (50, 99)]);
        assert!((0..1000).all(|_| d.zoned_block(&tiny, 3) < 3));
        assert_eq!(d.zone(&Distribution::Random, 10), None);
    }

    #[test]
    fn the_mix_keeps_the_share() {
        let mut d = Draws::of(&IoOptions::default(), 1, 0);
        let mut reads = 0u32;
        for _ in 0..100_000 {
            let dir = d.direction(70);
            d.issued(dir);
            reads += u32::from(dir == READ);
        }
        assert!((68_000..72_000).contains(&reads), "{reads} reads");
        // Nothing issued: the direction holds (fio draws again only once a run is done).
        let mut d = Draws::of(&IoOptions::default(), 1, 0);
        let first = d.direction(50);
        d.mix_issues = 5;
        assert!((0..10).all(|_| d.direction(50) == first));
    }

    /// The first `n` offsets (in 4k blocks) of a read job over a 64k file, with `set` applied.
    fn offsets(set: &[(&str, &str)], n: usize) -> Vec<u64> {
        offsets_in(64 << 10, set, n)
    }

    /// [`offsets`] over a file of `file_size` bytes.
    fn offsets_in(file_size: u64, set: &[(&str, &str)], n: usize) -> Vec<u64> {
        use std::os::fd::AsFd as _;
        let mut o = IoOptions::default();
        for (k, v) in set {
            o.set(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        let spec = CloneSpec {
            client: 0,
            options: o,
            clone: 0,
            thread_number: 1,
            files: vec!["f".into()],
            file_size,
            file_sizes: Vec::new(),
            align: 4096,
            verify_state: None,
            job_index: 0,
            report_group: 0,
            waitee: None,
            ends_with: None,
            buffer_seeds: Vec::new().into(),
            after_layout: None,
        };
        let null = std::fs::File::open("/dev/null").unwrap_or_else(|e| panic!("/dev/null: {e}"));
        let mut files = super::super::job::file_states(&spec, &[null.as_fd()]);
        let (p, mut d) = (plan(&spec), Draws::new(&spec));
        (0..n)
            .map(|_| {
                let (off, _) = p.next_io(&mut files[0], READ, &mut d).unwrap_or((u64::MAX, 0));
                d.issued(READ);
                off / 4096
            })
            .collect()
    }

    #[test]
    fn fio_version_chooses_the_offsets_seed() {
        // rw=randread, bsrange=4k-16k, size=1m: the first offsets (4k blocks) of fio 3.33 and
        // of fio 3.42 built from its tag, traced with strace.
        let set = [("rw", "randread"), ("bsrange", "4k-16k")];
        assert_eq!(offsets_in(1 << 20, &set, 8), [15, 189, 215, 120, 102, 219, 97, 90]);
        let set = [("rw", "randread"), ("bsrange", "4k-16k"), ("fio_version", "3.42")];
        assert_eq!(offsets_in(1 << 20, &set, 8), [250, 221, 168, 132, 154, 251, 3, 57]);
    }

    #[test]
    fn offset_modifiers_give_fio_33s_offsets() {
        // Each list as fio 3.33 read the file (strace of its pread64 offsets, bs=4k, size=64k).
        assert_eq!(offsets(&[("rw", "read:-8k")], 16), [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(offsets(&[("rw", "read:8k")], 6), [0, 3, 6, 9, 12, 15]);
        assert_eq!(offsets(&[("rw", "randread:4")], 16), [0, 1, 2, 3, 11, 12, 13, 14, 13, 14, 15, 7, 6, 7, 8, 9]);
        assert_eq!(
            offsets(&[("rw", "randread:4"), ("rw_sequencer", "identical")], 16),
            [0, 0, 0, 0, 11, 11, 11, 11, 13, 13, 13, 13, 7, 7, 7, 7]
        );
    }

    #[test]
    fn drawn_sizes_are_multiples_of_the_smallest_and_fit() {
        let o = IoOptions { bsrange: [Some((4096, 16384)); 2], ..IoOptions::default() };
        let spec = CloneSpec {
            client: 0,
            options: o,
            clone: 0,
            thread_number: 1,
            files: Vec::new(),
            file_size: 1 << 20,
            file_sizes: Vec::new(),
            align: 4096,
            verify_state: None,
            job_index: 0,
            report_group: 0,
            waitee: None,
            ends_with: None,
            buffer_seeds: Vec::new().into(),
            after_layout: None,
        };
        let (p, mut d) = (plan(&spec), Draws::new(&spec));
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let len = p.block_size(READ, &mut d, 1 << 20).unwrap_or(0);
            assert!(len % 4096 == 0 && (4096..=16384).contains(&len), "{len}");
            seen[(len / 4096 - 1) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        assert_eq!(p.block_size(READ, &mut d, 8192).map(|l| l <= 8192), Some(true));
        assert_eq!(p.block_size(READ, &mut d, 4095), None);
    }
}
