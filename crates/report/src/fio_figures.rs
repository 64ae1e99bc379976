//! fio's derived figures (rates, per-interval summaries, group share, latency buckets),
//! computed once here so that the fio-json and human exporters print the same numbers.

use fsarena_core::{DirectionResult, JobResult, LatencySummary, SeriesSummary};
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

/// fio's `latency_ns`, `latency_us` and `latency_ms` distributions (percent of all read,
/// write and trim I/Os), **estimated** from each direction's min, max and percentiles.
///
/// fio counts every completion into these buckets; fsarena keeps a histogram instead and
/// passes on only its percentiles, so we rebuild the cumulative distribution by linear
/// interpolation between (min, 0%), each (value, p%) and (max, 100%). A bucket's share is
/// then exact to within the spacing of the percentile list around it (at most 10 points
/// between the 10th and 90th percentile, under 1 point in the tail), and the buckets still
/// add up to 100%.
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
