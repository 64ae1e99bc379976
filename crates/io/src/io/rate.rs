//! fio's rate schedule (`rate`, `rate_iops`, `rate_process`, `rate_ignore_thinktime`): when
//! the next I/O of each direction may be issued, as fio 3.33 computes it (backend.c
//! `usec_for_io`, io_u.c `rate_ddir`, init.c `__setup_rate`).
//!
//! The schedule counts what was issued, not what completed: after every I/O handed to the
//! engine, the direction's next time is set from the bytes issued so far (`linear`: the
//! time at which the rate has moved them) or from one more exponential gap (`poisson`). An
//! I/O waits until its direction's time has come. The times are in whole microseconds since
//! the schedule began (fio's epoch: the job's start, or the end of its `ramp_time`, when fio
//! starts the schedule over), truncated as fio truncates them, so that both tools issue on
//! the same instants.

use super::fiorand::FioRand;
use super::job::{READ, WRITE};
use super::options::IoOptions;

/// One job's rate schedule; `None` of it when the job gives no rate option.
#[derive(Debug, Clone)]
pub(super) struct Schedule {
    /// fio's `rate_bps` per direction; 0: that direction is not limited.
    bps: [u64; 2],
    /// fio's `min_bs` per direction: `rate_iops` counts I/Os of this size.
    min_bs: [u64; 2],
    poisson: bool,
    /// fio's `rate_io_issue_bytes`.
    issued: [u64; 2],
    /// fio's `rate_next_io_time`, µs since the epoch.
    next: [u64; 2],
    /// fio's `last_usec`: the sum of the poisson gaps drawn so far, µs.
    last: [u64; 2],
    /// Whether a direction that is ahead may give way to the other (a mixed job whose other
    /// direction has a share of the mix), as fio's `rate_ddir` switches.
    may_switch: [bool; 2],
    /// Skip the pause of `thinktime` in the rate (`rate_ignore_thinktime`).
    ignore_think: bool,
    /// The epoch, in the loop's ns since the phase began.
    epoch_ns: u64,
}

/// What the schedule says about the next I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Due {
    /// The direction to issue in (the one asked for, or the other one of a mixed job when it
    /// is due sooner).
    pub dir: usize,
    /// µs to wait first; 0: issue now.
    pub wait_us: u64,
}

impl Schedule {
    /// The schedule of a job with options `o`, or `None` when it gives no rate option (fio
    /// then never checks the rate, not even the time).
    pub(super) fn new(o: &IoOptions) -> Option<Self> {
        if !o.rate_checked() {
            return None;
        }
        let mixed = o.rw.reads() && o.rw.writes();
        Some(Self {
            bps: [READ, WRITE].map(|d| o.rate_bps(d)),
            min_bs: [READ, WRITE].map(|d| o.min_bs_of(d).max(1)),
            poisson: o.rate_poisson,
            issued: [0; 2],
            next: [0; 2],
            last: [0; 2],
            // fio's rwmix[odir]: the share of the direction switched to.
            may_switch: [mixed && o.rwmixread > 0, mixed && o.rwmixread < 100],
            ignore_think: o.rate_ignore_thinktime,
            epoch_ns: 0,
        })
    }

    /// The schedule starts over at `now_ns` (fio's `reset_io_counters` when the ramp ends);
    /// the poisson streams go on.
    pub(super) fn restart(&mut self, now_ns: u64) {
        self.issued = [0; 2];
        self.next = [0; 2];
        self.last = [0; 2];
        self.epoch_ns = now_ns;
    }

    /// When the next I/O, drawn in `dir`, may go, at `now_ns` (fio's `rate_ddir`): now if its
    /// direction's time has come; else, in a mixed job, the other direction if its time has
    /// come, or whichever comes first, after the wait.
    pub(super) fn due(&self, dir: usize, now_ns: u64) -> Due {
        let now = now_ns.saturating_sub(self.epoch_ns) / 1000;
        if self.next[dir] <= now {
            return Due { dir, wait_us: 0 };
        }
        let other = dir ^ 1;
        if self.may_switch[other] {
            if self.next[other] <= now {
                return Due { dir: other, wait_us: 0 };
            }
            if self.next[other] < self.next[dir] {
                return Due { dir: other, wait_us: self.next[other] - now };
            }
        }
        Due { dir, wait_us: self.next[dir] - now }
    }

    /// An I/O of `bytes` was handed to the engine in `dir` (fio counts it in `td_io_queue`,
    /// then sets the direction's next time with `usec_for_io`); `gaps` is the direction's
    /// poisson stream.
    pub(super) fn issued(&mut self, dir: usize, bytes: u64, gaps: &mut FioRand) {
        self.issued[dir] += bytes;
        self.next[dir] = self.next_time(dir, gaps);
    }

    /// fio's `usec_for_io`: the direction's next time, µs since the epoch.
    fn next_time(&mut self, dir: usize, gaps: &mut FioRand) -> u64 {
        let bps = self.bps[dir];
        if self.poisson {
            // The options refuse a poisson job whose rate is under one block per second,
            // on which fio divides by zero.
            let iops = (bps / self.min_bs[dir]).max(1);
            self.last[dir] += poisson_gap(iops, gaps);
            return self.last[dir];
        }
        if bps == 0 {
            return 0;
        }
        let bytes = self.issued[dir];
        (bytes % bps) * 1_000_000 / bps + (bytes / bps) * 1_000_000
    }

    /// After a `thinktime` pause of `total_us` µs following an I/O in `dir`: under
    /// `rate_ignore_thinktime`, the bytes the rate would have moved meanwhile (less one
    /// block, so the next I/O goes at once) count as issued, and the poisson clock moves on
    /// by the pause, as fio's `handle_thinktime` does. The direction's next time is not set
    /// again until the next I/O, as in fio.
    pub(super) fn thought(&mut self, dir: usize, total_us: u64) {
        let bps = self.bps[dir];
        if total_us == 0 || bps == 0 || !self.ignore_think {
            return;
        }
        let missed = bps.saturating_mul(total_us) / 1_000_000;
        let bs = self.min_bs[dir];
        let per_io_us = bs * 1_000_000 / bps;
        // fio's `over`: a whole block when the pause was at least one I/O's time, else 0
        // (its formula's integer division gives 0 there). `missed - over` may wrap, as fio's
        // unsigned sum does, which takes from the bytes.
        let over = if per_io_us <= total_us { bs } else { 0 };
        self.issued[dir] = self.issued[dir].wrapping_add(missed.wrapping_sub(over));
        self.last[dir] += total_us;
    }
}

/// One gap of fio's poisson process for `iops` I/Os per second, µs: fio's
/// `(int64_t)(1000000 / iops) * -logf(__rand_0_1(state))`, whose product is single
/// precision (an integer times a float) and truncated to whole µs.
pub(super) fn poisson_gap(iops: u64, gaps: &mut FioRand) -> u64 {
    let mean = (1_000_000 / iops) as f32;
    let u = gaps.unit_open() as f32;
    (mean * -u.ln()) as u64
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::io::fiorand::{Seeds, Stream};

    fn options(pairs: &[(&str, &str)]) -> IoOptions {
        let mut o = IoOptions::default();
        for (k, v) in pairs {
            o.set(k, v).unwrap();
        }
        o
    }

    /// The first job's poisson stream of reads with fio's default seed (randseed=0x89,
    /// randrepeat=1), as fio seeds it.
    fn fios_read_gaps() -> FioRand {
        Seeds::new(0x89, 1, true).stream(Stream::PoissonRead, false)
    }

    /// fio 3.33's own draws: `fio --debug=rate` on a job with `rw=randread rate_iops=200
    /// rate_process=poisson` (bs=4k, default seeds) prints `poisson rate iops=1000000/gap`
    /// after each I/O (nothing when the gap is 0). These are its first 40 lines.
    const FIO_DEBUG_RATE_IOPS: [u64; 40] = [
        85, 420, 646, 188, 53, 130, 245, 628, 164, 185, 2380, 224, 242, 176, 1628, 4975, 659, 129, 91, 2932, 38, 179,
        200000, 85, 129, 728, 241, 127, 107, 157, 131, 1406, 5076, 396, 1474, 863, 185, 182, 3623, 320,
    ];

    #[test]
    fn poisson_gaps_are_fios_for_its_seed() {
        let mut gaps = fios_read_gaps();
        let printed: Vec<u64> =
            (0..60).map(|_| poisson_gap(200, &mut gaps)).filter(|&g| g > 0).map(|g| 1_000_000 / g).take(40).collect();
        assert_eq!(printed, FIO_DEBUG_RATE_IOPS);
    }

    /// The same for writes (`rw=randwrite`), from fio's second poisson stream: its first 20.
    const FIO_DEBUG_RATE_IOPS_WRITE: [u64; 20] =
        [127, 2032, 1953, 6060, 4464, 672, 5617, 114, 77, 186, 865, 281, 1628, 304, 1879, 469, 682, 862, 161, 2500];

    #[test]
    fn poisson_write_gaps_are_fios_for_its_seed() {
        let mut gaps = Seeds::new(0x89, 1, true).stream(Stream::PoissonWrite, false);
        let printed: Vec<u64> =
            (0..30).map(|_| poisson_gap(200, &mut gaps)).filter(|&g| g > 0).map(|g| 1_000_000 / g).take(20).collect();
        assert_eq!(printed, FIO_DEBUG_RATE_IOPS_WRITE);
    }

    #[test]
    fn poisson_gaps_average_one_over_the_rate() {
        // 200,000 exponential gaps: the mean's standard error is 1/sqrt(n) = 0.22 % of it,
        // so 1 % is over 4 standard errors; the truncation to whole µs takes 0.5 µs off.
        for iops in [50u64, 200, 1000] {
            let mut gaps = fios_read_gaps();
            let n = 200_000u64;
            let draws: Vec<u64> = (0..n).map(|_| poisson_gap(iops, &mut gaps)).collect();
            let mean = draws.iter().sum::<u64>() as f64 / n as f64;
            let expected = 1e6 / iops as f64;
            assert!((mean / expected - 1.0).abs() < 0.01, "iops={iops}: mean gap {mean} µs, expected {expected}");
            // Exponential: the standard deviation equals the mean (coefficient of variation 1).
            let var = draws.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / n as f64;
            let cv = var.sqrt() / mean;
            assert!((cv - 1.0).abs() < 0.02, "iops={iops}: coefficient of variation {cv}");
        }
    }

    #[test]
    fn linear_times_follow_the_bytes_issued() {
        let o = options(&[("rw", "read"), ("bs", "4k"), ("rate_iops", "200"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        let mut gaps = fios_read_gaps();
        // rate_iops=200 of 4 KiB is 819,200 B/s: I/O k may go at k × 5000 µs.
        for k in 1..=1000u64 {
            assert_eq!(s.due(READ, (k - 1) * 5_000_000).wait_us, 0);
            s.issued(READ, 4096, &mut gaps);
            assert_eq!(s.next[READ], k * 5000);
            assert_eq!(s.due(READ, (k - 1) * 5_000_000 + 1_000_000), Due { dir: READ, wait_us: 4000 });
        }
        // rate_iops counts blocks of the smallest size: a 16 KiB I/O under bsrange=4k-16k
        // takes four I/Os' time.
        let o = options(&[("rw", "read"), ("bsrange", "4k-16k"), ("rate_iops", "100"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        s.issued(READ, 16384, &mut gaps);
        assert_eq!(s.next[READ], 40_000);
        // rate= is bytes per second: 1 MiB/s, 3 × 4 KiB issued → 11718 µs (truncated).
        let o = options(&[("rw", "write"), ("bs", "4k"), ("rate", "1m"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        for _ in 0..3 {
            s.issued(WRITE, 4096, &mut gaps);
        }
        assert_eq!(s.next[WRITE], 11_718);
    }

    #[test]
    fn poisson_times_add_up_the_gaps_and_restart_at_the_ramp() {
        let o = options(&[("rw", "randread"), ("rate_iops", "200"), ("rate_process", "poisson"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        let (mut gaps, mut expect) = (fios_read_gaps(), fios_read_gaps());
        let mut sum = 0;
        for _ in 0..10 {
            s.issued(READ, 4096, &mut gaps);
            sum += poisson_gap(200, &mut expect);
            assert_eq!(s.next[READ], sum);
        }
        s.restart(7_000_000);
        assert_eq!(s.due(READ, 7_000_000), Due { dir: READ, wait_us: 0 });
        s.issued(READ, 4096, &mut gaps);
        assert_eq!(s.next[READ], poisson_gap(200, &mut expect), "the sum starts over, the stream goes on");
    }

    #[test]
    fn a_mixed_job_issues_in_the_direction_that_is_due() {
        let o = options(&[("rw", "randrw"), ("rate_iops", "100,50"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        let mut gaps = fios_read_gaps();
        s.issued(READ, 4096, &mut gaps); // next read at 10 ms
        s.issued(WRITE, 4096, &mut gaps); // next write at 20 ms
        assert_eq!(s.due(READ, 5_000_000), Due { dir: READ, wait_us: 5000 });
        assert_eq!(s.due(WRITE, 5_000_000), Due { dir: READ, wait_us: 5000 }, "reads are due first");
        assert_eq!(s.due(WRITE, 12_000_000), Due { dir: READ, wait_us: 0 }, "writes ahead, reads behind");
        // rwmixread=100: writes never take a read's turn, nor reads a write's.
        let o = options(&[("rw", "randrw"), ("rwmixread", "100"), ("rate_iops", "100"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        s.issued(READ, 4096, &mut gaps);
        assert_eq!(s.due(READ, 0), Due { dir: READ, wait_us: 10_000 });
        // A direction without a rate is never held back.
        let o = options(&[("rw", "randrw"), ("rate_iops", "100,"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        s.issued(WRITE, 4096, &mut gaps);
        assert_eq!(s.due(WRITE, 0), Due { dir: WRITE, wait_us: 0 });
    }

    #[test]
    fn ignoring_thinktime_counts_the_pause_as_issued() {
        let o = options(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("rate_iops", "100"),
            ("rate_ignore_thinktime", "1"),
            ("size", "1m"),
        ]);
        let mut s = Schedule::new(&o).unwrap();
        let mut gaps = fios_read_gaps();
        s.issued(WRITE, 4096, &mut gaps);
        // 50 ms of pause at 409,600 B/s: 20,480 B missed, less one block → 4 more blocks.
        s.thought(WRITE, 50_000);
        s.issued(WRITE, 4096, &mut gaps);
        assert_eq!(s.next[WRITE], 60_000);
        // Without the option the pause changes nothing.
        let o = options(&[("rw", "write"), ("bs", "4k"), ("rate_iops", "100"), ("size", "1m")]);
        let mut s = Schedule::new(&o).unwrap();
        s.issued(WRITE, 4096, &mut gaps);
        s.thought(WRITE, 50_000);
        s.issued(WRITE, 4096, &mut gaps);
        assert_eq!(s.next[WRITE], 20_000);
    }
}
