//! fio's random number streams, reproduced so that every choice fio draws at random (block
//! sizes under `bsrange`/`bssplit`, random offsets in its random map, the read/write mix,
//! zoned distributions, file sizes under `filesize=MIN-MAX`) comes out the same in fsarena:
//! a job file moves the same bytes in the same number of I/Os under both tools.
//!
//! The generators are L'Ecuyer's maximally equidistributed combined Tausworthe generators
//! ("Maximally Equidistributed Combined Tausworthe Generators", Math. Comp. 65 (1996); the
//! 64-bit one from "Tables of Maximally Equidistributed Combined LFSR Generators", Math.
//! Comp. 68 (1999)), seeded the way fio 3.33 seeds them (init.c `setup_random_seeds`,
//! `td_fill_rand_seeds`; lib/rand.c). No crate implements these with fio's seeding, and only
//! the exact sequence makes the counts equal, hence this small hand-written module.
//!
//! Only where fio's choice changes what is moved does fsarena follow fio's stream; where it
//! does not (the order of a fixed-size random pass) fsarena keeps its own faster permutation.

/// fio's `FIO_RANDSEED`: the block-offset seed per job when `randrepeat=1`.
const FIO_RANDSEED: u64 = 0xb189_9bed;
/// The multiplier fio steps its seed with.
const SEED_STEP: u64 = 0x9e37_0001;

/// Indexes into a job's seeds, in fio's order (fio.h `FIO_RAND_*_OFF`).
#[derive(Debug, Clone, Copy)]
#[repr(usize)]
pub enum Stream {
    /// Block sizes of reads.
    BsRead = 0,
    /// Block sizes of writes.
    BsWrite = 1,
    /// The read/write mix.
    Mix = 4,
    /// Random block offsets (replaced by `FIO_RANDSEED × job number` under `randrepeat`).
    Block = 6,
    /// File sizes under `filesize=MIN-MAX`.
    FileSize = 7,
    /// Write buffer contents (`buf_state`).
    Buffer = 9,
    /// Whether a write buffer is a duplicate (`dedupe_percentage`).
    Dedupe = 14,
    /// The gaps between reads under `rate_process=poisson` (fio's `FIO_RAND_POISSON_OFF`).
    PoissonRead = 15,
    /// Zoned random distributions.
    Zone = 16,
    /// The gaps between writes under `rate_process=poisson` (`FIO_RAND_POISSON2_OFF`).
    PoissonWrite = 17,
    /// Which working-set block a duplicate repeats (`dedupe_mode=working_set`).
    DedupeWorkingSetIndex = 20,
}

/// How many seeds fio keeps per job (`FIO_RAND_NR_OFFS`).
const NR_SEEDS: usize = 21;

/// One job's seeds, from `randseed` and the job's number (1 for the first job of the file,
/// counting every clone of `numjobs`), as fio computes them when `randrepeat=1` or a
/// `randseed` is given.
#[derive(Debug, Clone)]
pub struct Seeds {
    seeds: [u64; NR_SEEDS],
    thread_number: u64,
    repeatable: bool,
}

impl Seeds {
    /// The seeds of job number `thread_number` (1-based) with `randseed = rand_seed`.
    /// `repeatable` is fio 3.33's `randrepeat` (fio 3.42 no longer replaces the offsets'
    /// seed: its callers pass false); when it is off the offsets come from the seeds too
    /// (fio then also seeds from the system unless `randseed` is given; fsarena's caller
    /// passes a random `rand_seed` for that).
    pub fn new(rand_seed: u64, thread_number: u64, repeatable: bool) -> Self {
        let mut seed = rand_seed;
        for _ in 0..4 {
            seed = seed.wrapping_mul(SEED_STEP);
        }
        let mut seeds = [0; NR_SEEDS];
        for (i, s) in seeds.iter_mut().enumerate() {
            *s = seed.wrapping_mul(thread_number).wrapping_add(i as u64);
            seed = seed.wrapping_mul(SEED_STEP);
        }
        Self { seeds, thread_number, repeatable }
    }

    /// The seed of one stream.
    pub fn get(&self, s: Stream) -> u64 {
        match s {
            Stream::Block if self.repeatable => FIO_RANDSEED.wrapping_mul(self.thread_number),
            _ => self.seeds[s as usize],
        }
    }

    /// A generator for one stream: 64-bit when `use64` (fio's `random_generator=tausworthe64`),
    /// else 32-bit; fio's mix, zone, dedupe and poisson streams are always 32-bit.
    pub fn stream(&self, s: Stream, use64: bool) -> FioRand {
        let use64 = use64
            && !matches!(s, Stream::Mix | Stream::Zone | Stream::Dedupe | Stream::PoissonRead | Stream::PoissonWrite);
        FioRand::new(self.get(s), use64)
    }
}

/// fio's `struct frand_state`: a 32-bit (taus88) or 64-bit (taus258) Tausworthe generator.
#[derive(Debug, Clone)]
pub enum FioRand {
    /// Three 32-bit components.
    Taus88([u32; 3]),
    /// Five 64-bit components.
    Taus258([u64; 5]),
}

/// fio's `__seed`: a component must be at least its minimum for the generator to be full.
fn at_least(x: u64, m: u64) -> u64 {
    if x < m {
        x + m
    } else {
        x
    }
}

/// The constant fio's LCG seeding starts from. fio writes it `(2^31) + (2^17) + (2^7)`, which
/// in C is xor, not power: 29 + 19 + 5.
const LCG_START: u64 = 53;

impl FioRand {
    /// A generator seeded with `seed` (fio's `init_rand_seed`; the 32-bit one takes the low
    /// 32 bits of the seed).
    pub fn new(seed: u64, use64: bool) -> Self {
        if use64 {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let mut s = [0u64; 5];
            s[0] = at_least(lcg(LCG_START), 1);
            for (i, min) in [(1, 7), (2, 15), (3, 33), (4, 49)] {
                s[i] = at_least(lcg(s[i - 1]), min);
            }
            let mut r = FioRand::Taus258(s);
            for _ in 0..6 {
                r.next();
            }
            r
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69_069) ^ seed;
            let s1 = at_least(u64::from(lcg(LCG_START as u32)), 1) as u32;
            let s2 = at_least(u64::from(lcg(s1)), 7) as u32;
            let s3 = at_least(u64::from(lcg(s2)), 15) as u32;
            let mut r = FioRand::Taus88([s1, s2, s3]);
            for _ in 0..6 {
                r.next();
            }
            r
        }
    }

    /// The largest value [`FioRand::next`] returns (fio's `rand_max`).
    pub fn max(&self) -> u64 {
        match self {
            FioRand::Taus88(_) => u64::from(u32::MAX),
            FioRand::Taus258(_) => u64::MAX,
        }
    }

    /// The next value (fio's `__rand`).
    #[inline]
    pub fn next(&mut self) -> u64 {
        match self {
            FioRand::Taus88(s) => {
                s[0] = ((s[0] & 0xffff_fffe) << 12) ^ (((s[0] << 13) ^ s[0]) >> 19);
                s[1] = ((s[1] & 0xffff_fff8) << 4) ^ (((s[1] << 2) ^ s[1]) >> 25);
                s[2] = ((s[2] & 0xffff_fff0) << 17) ^ (((s[2] << 3) ^ s[2]) >> 11);
                u64::from(s[0] ^ s[1] ^ s[2])
            }
            FioRand::Taus258(s) => {
                let step = |x: u64, a: u32, b: u32, mask: u64, d: u32| ((x & mask) << d) ^ (((x << a) ^ x) >> b);
                s[0] = step(s[0], 1, 53, 0xffff_ffff_ffff_fffe, 10);
                s[1] = step(s[1], 24, 50, 0xffff_ffff_ffff_fe00, 5);
                s[2] = step(s[2], 3, 23, 0xffff_ffff_ffff_f000, 29);
                s[3] = step(s[3], 5, 24, 0xffff_ffff_fffe_0000, 23);
                s[4] = step(s[4], 3, 33, 0xffff_ffff_ff80_0000, 8);
                s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
            }
        }
    }

    /// `r / (max + 1)` for the next value `r`: fio's scaling of a draw into [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        let max = self.max() as f64 + 1.0;
        self.next() as f64 / max
    }

    /// `(r + 1) / (max + 1)` for the next value `r`: a draw in (0, 1], never 0, as fio's
    /// `__rand_0_1` makes it for a logarithm.
    #[inline]
    pub fn unit_open(&mut self) -> f64 {
        let max = self.max() as f64 + 1.0;
        (self.next() as f64 + 1.0) / max
    }

    /// `n × unit()`, truncated: a draw in [0, n) as fio scales it (`lastb * (r / (max+1.0))`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        (n as f64 * self.unit()) as u64
    }

    /// A value in `[start, end]`, both included (fio's `rand_between`).
    #[inline]
    pub fn between(&mut self, start: u64, end: u64) -> u64 {
        let span = end - start + 1;
        let r = self.next() as f64;
        let scaled = match self {
            // rand32_upto: the 32-bit draw over 2^32, through an int.
            FioRand::Taus88(_) => (span as f64 * (r / 4_294_967_296.0)) as u64,
            FioRand::Taus258(_) => (span as f64 * (r / 18_446_744_073_709_551_616.0)) as u64,
        };
        start + scaled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's own draws, taken with `--debug=random` on job files run under fio: the first
    /// random offsets (`off rand`) of the first job with the default seeds.
    #[test]
    fn the_block_stream_of_the_first_job_is_fios() {
        let seeds = Seeds::new(0x89, 1, true);
        let mut r = seeds.stream(Stream::Block, false);
        let got: Vec<u64> = (0..3).map(|_| r.next()).collect();
        assert_eq!(got, FIO_FIRST_OFFSET_DRAWS);
        // random_generator=tausworthe64
        let mut r = seeds.stream(Stream::Block, true);
        assert_eq!([r.next(), r.next()], [17_311_067_694_306_724_737, 485_009_114_434_689_783]);
        // the second job of a file, randrepeat=0 randseed=7: offsets from the seeds
        let mut r = Seeds::new(7, 2, false).stream(Stream::Block, false);
        assert_eq!([r.next(), r.next()], [2_466_130_742, 507_734_957]);
    }

    /// Filled in from fio's `--debug=random` output (see the test above).
    const FIO_FIRST_OFFSET_DRAWS: [u64; 3] = [259_043_585, 3_179_521_932, 3_621_444_214];

    #[test]
    fn seeds_differ_per_job_and_stream() {
        let a = Seeds::new(0x89, 1, true);
        let b = Seeds::new(0x89, 2, true);
        assert_ne!(a.get(Stream::BsRead), b.get(Stream::BsRead));
        assert_ne!(a.get(Stream::BsRead), a.get(Stream::BsWrite));
        assert_eq!(a.get(Stream::Block), FIO_RANDSEED);
        assert_ne!(Seeds::new(0x89, 1, false).get(Stream::Block), FIO_RANDSEED);
    }

    #[test]
    fn draws_stay_in_range_and_look_uniform() {
        for use64 in [false, true] {
            let mut r = FioRand::new(12345, use64);
            let mut counts = [0u32; 10];
            for _ in 0..100_000 {
                let v = r.between(1, 10);
                assert!((1..=10).contains(&v));
                counts[(v - 1) as usize] += 1;
                assert!(r.unit() < 1.0);
            }
            assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
        }
    }
}
