//! fio's derived figures (rates, per-interval summaries, group share, latency buckets),
//! computed once here so that the fio-json and human exporters print the same numbers.

use fsarena_core::{DirectionResult, JobResult, LatencyHistogram, LatencySummary, SeriesSummary};
use fsarena_stats::summarize_series;

/// A data direction, in fio's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
    Trim,
}

impl Direction {
    /// Every direction, in the order fio prints them.
    pub(crate) const ALL: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Trim];

    /// fio's name for the direction (`io_ddir_name`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
        }
    }

    /// This direction's result in `job`.
    pub(crate) fn of(self, job: &JobResult) -> &DirectionResult {
        match self {
            Direction::Read => &job.read,
            Direction::Write => &job.write,
            Direction::Trim => &job.trim,
        }
    }
}

/// What fio derives from one direction of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DirectionFigures {
    /// Whole milliseconds, truncated as fio keeps `runtime[ddir]`.
    pub runtime_ms: u64,
    /// `1000 * io_bytes / runtime_ms`, integer as in fio; 0 when the runtime is 0.
    pub bw_bytes: u64,
    /// `bw_bytes / 1024` (KiB/s), fio's `bw`.
    pub bw_kib: u64,
    /// `1000 * total_ios / runtime_ms` as a float; 0 when the runtime is 0.
    pub iops: f64,
    /// Per-second bandwidth samples in KiB/s (fio logs bw in KiB/s).
    pub bw_samples: SeriesSummary,
    /// Per-second IOPS samples.
    pub iops_samples: SeriesSummary,
    /// Share of the group's aggregate bandwidth, in percent (fio's `bw_agg` / `per=`).
    pub bw_agg: f64,
}

/// fio's figures for `dir`, given the aggregate bandwidth of the job's group in bytes/s.
///
/// `bw_agg` differs from fio in one respect: fio divides the mean of the job's bandwidth
/// *samples* by the group's aggregate, so a single job shows e.g. 100.2% capped to 100%; we
/// divide the job's overall rate, so a single job shows exactly 100% and the shares of a
/// group add up to 100%. As in fio it is 0 when the job has no bandwidth samples.
pub(crate) fn direction_figures(dir: &DirectionResult, group_bw_bytes: u64) -> DirectionFigures {
    let runtime_ms = dir.runtime.as_millis();
    let (bw_bytes, iops) = if runtime_ms == 0 {
        (0, 0.0)
    } else {
        // u128: 1000 * io_bytes overflows u64 beyond 18 PB.
        let bw = u128::from(dir.io_bytes) * 1000 / u128::from(runtime_ms);
        (u64::try_from(bw).unwrap_or(u64::MAX), 1000.0 * dir.total_ios as f64 / runtime_ms as f64)
    };
    let kib: Vec<f64> = dir.bw_series.iter().map(|b| b / 1024.0).collect();
    let bw_samples = summarize_series(&kib);
    let bw_agg = if bw_samples.samples == 0 {
        0.0
    } else if group_bw_bytes == 0 {
        100.0
    } else {
        (100.0 * bw_bytes as f64 / group_bw_bytes as f64).min(100.0)
    };
    DirectionFigures {
        runtime_ms,
        bw_bytes,
        bw_kib: bw_bytes / 1024,
        iops,
        bw_samples,
        iops_samples: summarize_series(&dir.iops_series),
        bw_agg,
    }
}

/// Aggregate bandwidth (bytes/s) of the jobs of group `group_id` in direction `d`: the sum
/// of each job's `bw_bytes`.
pub(crate) fn group_bw_bytes(jobs: &[JobResult], group_id: u32, d: Direction) -> u64 {
    jobs.iter()
        .filter(|j| j.group_id == group_id)
        .map(|j| direction_figures(d.of(j), 0).bw_bytes)
        .fold(0u64, u64::saturating_add)
}

/// fio's figures for direction `d` of `job`, within its group among `jobs`.
pub(crate) fn job_direction_figures(jobs: &[JobResult], job: &JobResult, d: Direction) -> DirectionFigures {
    direction_figures(d.of(job), group_bw_bytes(jobs, job.group_id, d))
}

/// Keys of fio's `latency_ns` and `latency_us` objects.
pub(crate) const LAT_KEYS: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
/// Keys of fio's `latency_ms` object.
pub(crate) const LAT_MS_KEYS: [&str; 12] =
    ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];

/// Bucket edges in ns: fio's `io_u_mark_lat_*` put a latency `x` in the bucket whose key
/// is the smallest bound above `x`, so key `"4"` of `latency_ns` holds `[2, 4)` ns and key
/// `"2"` of `latency_us` holds `[1000, 2000)` ns (anything under 1 µs went to `latency_ns`).
const LAT_BOUNDS: [f64; 11] = [0.0, 2.0, 4.0, 10.0, 20.0, 50.0, 100.0, 250.0, 500.0, 750.0, 1000.0];

/// fio's latency bins (`stat.h`): 64 linear buckets per power of two above 127 ns.
const FIO_PLAT_BITS: u32 = 6;
/// Buckets per group.
const FIO_PLAT_VAL: u64 = 1 << FIO_PLAT_BITS;
/// fio's bucket count; samples past its last group (2^34 ns) count in the last bucket.
const FIO_PLAT_NR: u64 = 29 * FIO_PLAT_VAL;

/// fio's `plat_val_to_idx`: the bin of a latency of `ns`.
pub(crate) fn fio_bin_index(ns: u64) -> u64 {
    let msb = 63 - u64::from((ns | 1).leading_zeros());
    if msb <= u64::from(FIO_PLAT_BITS) {
        return ns;
    }
    let error_bits = msb - u64::from(FIO_PLAT_BITS);
    let base = (error_bits + 1) << FIO_PLAT_BITS;
    let offset = (FIO_PLAT_VAL - 1) & (ns >> error_bits);
    (base + offset).min(FIO_PLAT_NR - 1)
}

/// fio's `plat_idx_to_val`: the value a bin is reported at (its midpoint), the key of
/// json+'s `bins`.
pub(crate) fn fio_bin_value(index: u64) -> u64 {
    if index < (FIO_PLAT_VAL << 1) {
        return index;
    }
    let error_bits = (index >> FIO_PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(FIO_PLAT_BITS));
    let k = index % FIO_PLAT_VAL;
    // fio computes `base + (k + 0.5) * 2^error_bits` in floating point and truncates;
    // error_bits >= 1 here, so this integer form is the same value.
    base + (2 * k + 1) * (1u64 << (error_bits - 1))
}

/// json+'s `bins` of `h`: (fio's bin value, count), non-empty bins in increasing order.
///
/// Exact: our histogram's buckets are aligned power-of-two ranges at most half as wide as
/// fio's above 255 ns, and single values below (see `LatencyHistogram`), so each of ours lies
/// inside exactly one of fio's and its count goes there whole — the bins are what fio would
/// have counted for the same samples. (A bucket that straddled two of fio's, from a coarser
/// histogram stored by some other version, would go to the bin of its midpoint.)
pub(crate) fn fio_bins(h: &LatencyHistogram) -> Vec<(u64, u64)> {
    let mut bins: Vec<(u64, u64)> = Vec::new();
    for b in h.buckets() {
        let (lo, hi) = (fio_bin_index(b.low), fio_bin_index(b.high));
        let index = if lo == hi { lo } else { fio_bin_index(b.low + (b.high - b.low) / 2) };
        match bins.last_mut() {
            Some((last, count)) if *last == index => *count += b.count,
            _ => bins.push((index, b.count)),
        }
    }
    bins.into_iter().map(|(index, count)| (fio_bin_value(index), count)).collect()
}

/// Which of fio's `latency_ns` / `latency_us` / `latency_ms` buckets a latency of `ns` falls
/// in, as fio's `io_u_mark_lat_*` put it: (0 ns, 1 µs, 2 ms; index into that object's keys).
fn fio_latency_bucket(ns: u64) -> (usize, usize) {
    let (scale, value) = if ns < 1_000 {
        (0, ns)
    } else if ns < 1_000_000 {
        (1, ns / 1_000)
    } else {
        (2, ns / 1_000_000)
    };
    // The first bound above the value, in the scale's own unit (LAT_BOUNDS[i + 1]).
    let index = LAT_BOUNDS[1..].iter().position(|&b| (value as f64) < b).unwrap_or(10);
    (scale, if scale == 2 && value >= 2_000 { 11 } else { index })
}

/// fio's `latency_ns`, `latency_us` and `latency_ms` distributions (percent of all read,
/// write and trim I/Os) from the histograms of the job's directions.
///
/// Each of our buckets goes whole to the fio bucket of its midpoint. Below 256 ns our buckets
/// are single values, so `latency_ns` is exact; above, only a bucket that straddles one of
/// fio's decimal bounds (10 µs, 250 µs, ...) can be misplaced, and it holds only samples
/// within 0.39% of that bound.
pub(crate) fn latency_buckets_of(histograms: &[&LatencyHistogram]) -> ([f64; 10], [f64; 10], [f64; 12]) {
    let mut counts = [[0u64; 12]; 3];
    let mut total = 0u64;
    for h in histograms {
        for b in h.buckets() {
            let (scale, index) = fio_latency_bucket(b.low + (b.high - b.low) / 2);
            counts[scale][index] += b.count;
            total += b.count;
        }
    }
    let pct = |c: u64| if total == 0 { 0.0 } else { c as f64 * 100.0 / total as f64 };
    let mut ns = [0.0; 10];
    let mut us = [0.0; 10];
    let mut ms = [0.0; 12];
    ns.iter_mut().enumerate().for_each(|(i, v)| *v = pct(counts[0][i]));
    us.iter_mut().enumerate().for_each(|(i, v)| *v = pct(counts[1][i]));
    ms.iter_mut().enumerate().for_each(|(i, v)| *v = pct(counts[2][i]));
    (ns, us, ms)
}

/// fio's `latency_ns`, `latency_us` and `latency_ms` distributions (percent of all read,
/// write and trim I/Os), **estimated** from each direction's min, max and percentiles: for
/// runs stored before histograms were kept (schema 3 and older).
///
/// We rebuild the cumulative distribution by linear interpolation between (min, 0%), each
/// (value, p%) and (max, 100%). A bucket's share is then exact to within the spacing of the
/// percentile list around it (at most 10 points between the 10th and 90th percentile, under
/// 1 point in the tail), and the buckets still add up to 100%.
pub(crate) fn latency_buckets(job: &JobResult) -> ([f64; 10], [f64; 10], [f64; 12]) {
    let parts: Vec<(f64, Vec<(f64, f64)>)> = Direction::ALL
        .iter()
        .map(|d| &d.of(job).clat)
        .filter(|c| c.samples > 0)
        .map(|c| (c.samples as f64, cdf_anchors(c)))
        .collect();
    let total: f64 = parts.iter().map(|(w, _)| w).sum();
    let share = |lo: f64, hi: f64| -> f64 {
        if total == 0.0 {
            return 0.0;
        }
        let sum: f64 = parts.iter().map(|(w, a)| w * (cdf(a, hi) - cdf(a, lo))).sum();
        (sum / total).max(0.0)
    };
    let mut ns = [0.0; 10];
    let mut us = [0.0; 10];
    let mut ms = [0.0; 12];
    for i in 0..10 {
        ns[i] = share(LAT_BOUNDS[i], LAT_BOUNDS[i + 1]);
        // The first µs bucket starts at 1 µs: smaller values are in the ns buckets.
        let lo = if i == 0 { 1e3 } else { LAT_BOUNDS[i] * 1e3 };
        us[i] = share(lo, LAT_BOUNDS[i + 1] * 1e3);
        let lo = if i == 0 { 1e6 } else { LAT_BOUNDS[i] * 1e6 };
        ms[i] = share(lo, LAT_BOUNDS[i + 1] * 1e6);
    }
    ms[10] = share(1e9, 2e9);
    ms[11] = share(2e9, f64::INFINITY);
    (ns, us, ms)
}

/// (value ns, cumulative percent) points, non-decreasing in both coordinates.
pub(crate) fn cdf_anchors(c: &LatencySummary) -> Vec<(f64, f64)> {
    let (min, max) = (c.min as f64, c.max.max(c.min) as f64);
    let mut points = vec![(min, 0.0)];
    let mut sorted = c.percentiles.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (p, v) in sorted {
        // Histogram percentiles are bucket midpoints and may fall just outside [min, max].
        let v = (v as f64).clamp(min, max);
        let last = points[points.len() - 1];
        points.push((v.max(last.0), p.clamp(last.1, 100.0)));
    }
    points.push((max, 100.0));
    points
}

/// Estimated percent of samples strictly below `x`.
pub(crate) fn cdf(points: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (points[0], points[points.len() - 1]);
    if x <= first.0 {
        return 0.0;
    }
    if x > last.0 {
        return 100.0;
    }
    // The last point below x and the next one, which is at or above x.
    let i = points.iter().rposition(|&(v, _)| v < x).unwrap_or(0);
    let (a, b) = (points[i], points[(i + 1).min(points.len() - 1)]);
    if b.0 <= a.0 {
        return b.1;
    }
    a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::Nanos;

    fn dir(io_bytes: u64, total_ios: u64, runtime_ms: u64) -> DirectionResult {
        DirectionResult {
            io_bytes,
            total_ios,
            runtime: Nanos(runtime_ms * 1_000_000 + 123),
            bw_series: vec![1024.0 * 1000.0, 1024.0 * 3000.0],
            iops_series: vec![10.0, 30.0],
            ..Default::default()
        }
    }

    #[test]
    fn rates_follow_fio_integer_arithmetic() {
        let f = direction_figures(&dir(335_872_000, 5125, 1005), 0);
        assert_eq!(f.runtime_ms, 1005);
        assert_eq!(f.bw_bytes, 334_200_995);
        assert_eq!(f.bw_kib, 326_368);
        assert!((f.iops - 5_099.502_487_562_189).abs() < 1e-9);
        assert_eq!(f.bw_samples.mean, 2000.0);
        assert_eq!(f.iops_samples.max, 30.0);
        assert_eq!(f.bw_agg, 100.0);
        let none = direction_figures(&DirectionResult::default(), 0);
        assert_eq!((none.bw_bytes, none.iops, none.bw_agg), (0, 0.0, 0.0));
    }

    #[test]
    fn group_shares_add_up() {
        let mut a = JobResult { name: "a".into(), ..Default::default() };
        a.read = dir(3_000_000, 3, 1000);
        let mut b = JobResult { name: "b".into(), ..Default::default() };
        b.read = dir(1_000_000, 1, 1000);
        let jobs = vec![a, b];
        let fa = job_direction_figures(&jobs, &jobs[0], Direction::Read);
        let fb = job_direction_figures(&jobs, &jobs[1], Direction::Read);
        assert!((fa.bw_agg - 75.0).abs() < 1e-9);
        assert!((fa.bw_agg + fb.bw_agg - 100.0).abs() < 1e-9);
    }

    #[test]
    fn fio_bins_follow_fio_index_arithmetic() {
        // Exact below 128 ns; the reference's example: 7,054 ns is reported in bin 7072.
        assert_eq!((fio_bin_index(0), fio_bin_index(127)), (0, 127));
        assert_eq!(fio_bin_value(fio_bin_index(7054)), 7072);
        assert_eq!(fio_bin_index(7054), 494);
        // 128..255 ns: buckets of 2, reported at their midpoint.
        assert_eq!((fio_bin_index(128), fio_bin_index(129), fio_bin_value(128)), (128, 128, 129));
        // Past 2^34 ns everything is in the last bin.
        assert_eq!(fio_bin_index(1 << 40), FIO_PLAT_NR - 1);
        // Each bin's value maps back to the bin.
        for index in 0..FIO_PLAT_NR {
            assert_eq!(fio_bin_index(fio_bin_value(index)), index, "bin {index}");
        }
    }

    #[test]
    fn fio_bins_equal_fio_counting_each_sample() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let samples: Vec<u64> = (0..50_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Every scale: exact ns, µs, ms and beyond fio's last group.
                [x % 300, 1_000 + x % 90_000, 1_000_000 + x % 50_000_000, 1 << 35][i % 4]
            })
            .collect();
        let h = LatencyHistogram::of(samples.iter().copied());
        let mut want: std::collections::BTreeMap<u64, u64> = Default::default();
        for &s in &samples {
            *want.entry(fio_bin_index(s)).or_default() += 1;
        }
        let want: Vec<(u64, u64)> = want.into_iter().map(|(i, c)| (fio_bin_value(i), c)).collect();
        assert_eq!(fio_bins(&h), want);
    }

    #[test]
    fn exact_latency_buckets_count_each_sample_once() {
        // 3 ns -> latency_ns "4"; 1.5 µs -> latency_us "2"; 12 ms -> latency_ms "20";
        // 3 s -> latency_ms ">=2000".
        let h = LatencyHistogram::of([3, 1_500, 12_000_000, 3_000_000_000]);
        let (ns, us, ms) = latency_buckets_of(&[&h]);
        assert_eq!(ns[1], 25.0);
        assert_eq!(us[0], 25.0);
        assert_eq!(ms[3], 25.0);
        assert_eq!(ms[11], 25.0);
        let sum: f64 = ns.iter().chain(&us).chain(&ms).sum();
        assert!((sum - 100.0).abs() < 1e-9);
    }

    #[test]
    fn latency_buckets_sum_to_100_and_land_where_the_samples_are() {
        let mut job = JobResult::default();
        job.read.clat = LatencySummary {
            min: 3_000,
            max: 9_000,
            mean: 5_000.0,
            stddev: 1.0,
            samples: 100,
            percentiles: vec![(50.0, 4_000), (99.0, 8_000)],
        };
        let (ns, us, ms) = latency_buckets(&job);
        let sum: f64 = ns.iter().chain(&us).chain(&ms).sum();
        assert!((sum - 100.0).abs() < 1e-9, "{sum}");
        assert_eq!(ns.iter().sum::<f64>(), 0.0);
        // [2, 4) µs holds everything from the minimum (3 µs) to the median (4 µs).
        assert!((us[1] - 50.0).abs() < 1e-9);
        assert!((us[2] - 50.0).abs() < 1e-9);
        let (ns, us, ms) = latency_buckets(&JobResult::default());
        assert!(ns.iter().chain(&us).chain(&ms).all(|&v| v == 0.0));
    }
}
