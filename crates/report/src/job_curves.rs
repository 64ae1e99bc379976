//! Curves drawn from a result's measurements: the latency percentiles of one direction over
//! every job and repetition, and its bandwidth per second over the jobs that ran side by side.

use crate::fio_figures::{cdf, cdf_anchors, Direction};
use crate::ResultEntry;
use fsarena_core::{JobResult, LatencyHistogram, LatencySummary, FIO_PERCENTILES};

/// Bisection steps: the bracket shrinks by 2^-64, far below a nanosecond for any latency.
const BISECTION_STEPS: usize = 64;

/// `(percentile, latency ns)` of direction `d` over every job of every repetition of
/// `entry`, at fio's percentile list; empty when nothing has latency samples in that
/// direction.
///
/// The measurements' histograms of `d` are merged, which is exact: the curve is that of all
/// samples, within the histogram's stated bound. Runs stored before histograms were kept fall
/// back to [`estimated_percentiles`] over the last repetition's jobs.
pub(crate) fn latency_percentiles(entry: &ResultEntry, d: Direction) -> Vec<(f64, f64)> {
    let mut merged = LatencyHistogram::new();
    for m in &entry.measurements {
        match m.latency(d.name()) {
            Some(h) => merged.merge(h),
            // Stored without histograms (or not this direction): the estimate, if any.
            None if m.jobs().iter().any(|j| d.of(j).clat.samples > 0) => {
                let last = entry.measurements.last().map_or(&[][..], |m| m.jobs());
                return estimated_percentiles(last, d);
            }
            None => {}
        }
    }
    if merged.is_empty() {
        return Vec::new();
    }
    FIO_PERCENTILES.iter().map(|&p| (p, merged.percentile(p) as f64)).collect()
}

/// `(percentile, latency ns)` of direction `d` over all `jobs`, sorted by percentile, for runs
/// stored with percentiles only; empty when no job has latency samples in that direction.
///
/// One job's percentiles are used as they are. Several jobs are combined through their
/// estimated distributions (the same linear interpolation as the fio-json latency buckets of
/// such runs): the combined distribution is the sample-weighted mixture of each job's, and its
/// percentile `p` is found by bisection.
pub(crate) fn estimated_percentiles(jobs: &[JobResult], d: Direction) -> Vec<(f64, f64)> {
    let parts: Vec<&LatencySummary> =
        jobs.iter().map(|j| &d.of(j).clat).filter(|c| c.samples > 0 && !c.percentiles.is_empty()).collect();
    let Some(first) = parts.first() else { return Vec::new() };
    let mut wanted: Vec<f64> = first.percentiles.iter().map(|(p, _)| *p).collect();
    wanted.sort_by(f64::total_cmp);
    if parts.len() == 1 {
        let mut out: Vec<(f64, f64)> = first.percentiles.iter().map(|&(p, v)| (p, v as f64)).collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        return out;
    }
    let total: f64 = parts.iter().map(|c| c.samples as f64).sum();
    let anchors: Vec<(f64, Vec<(f64, f64)>)> = parts.iter().map(|c| (c.samples as f64, cdf_anchors(c))).collect();
    // Percent of all samples below x.
    let mixture = |x: f64| anchors.iter().map(|(w, a)| w * cdf(a, x)).sum::<f64>() / total;
    let lowest = parts.iter().map(|c| c.min).min().unwrap_or(0) as f64;
    let highest = parts.iter().map(|c| c.max.max(c.min)).max().unwrap_or(0) as f64;
    wanted
        .into_iter()
        .map(|p| {
            let (mut lo, mut hi) = (lowest, highest);
            for _ in 0..BISECTION_STEPS {
                let mid = (lo + hi) / 2.0;
                if mixture(mid) < p {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (p, hi)
        })
        .collect()
}

/// Bytes per second of direction `d`, one value per second, summed over `jobs` (they ran at
/// the same time); empty when no job logged a series.
pub(crate) fn bandwidth_per_second(jobs: &[JobResult], d: Direction) -> Vec<f64> {
    let len = jobs.iter().map(|j| d.of(j).bw_series.len()).max().unwrap_or(0);
    let mut out = vec![0.0; len];
    for job in jobs {
        for (slot, v) in out.iter_mut().zip(&d.of(job).bw_series) {
            *slot += v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(min: u64, max: u64, samples: u64, percentiles: &[(f64, u64)]) -> JobResult {
        let mut j = JobResult::default();
        j.read.clat = LatencySummary { min, max, samples, percentiles: percentiles.to_vec(), ..Default::default() };
        j.read.bw_series = vec![1.0, 2.0, 3.0][..(samples as usize % 3 + 1)].to_vec();
        j
    }

    #[test]
    fn one_job_keeps_its_percentiles() {
        let jobs = [job(1, 100, 10, &[(99.0, 90), (50.0, 40)])];
        assert_eq!(estimated_percentiles(&jobs, Direction::Read), [(50.0, 40.0), (99.0, 90.0)]);
        assert!(estimated_percentiles(&jobs, Direction::Write).is_empty());
    }

    #[test]
    fn identical_jobs_combine_to_the_same_curve_and_weights_count() {
        let a = job(0, 100, 10, &[(50.0, 50), (90.0, 90)]);
        let same = estimated_percentiles(&[a.clone(), a.clone()], Direction::Read);
        assert!((same[0].1 - 50.0).abs() < 1e-6 && (same[1].1 - 90.0).abs() < 1e-6, "{same:?}");
        // A slow job with nine times the samples pulls the median to itself.
        let slow = job(1000, 2000, 90, &[(50.0, 1500), (90.0, 1900)]);
        let mixed = estimated_percentiles(&[a, slow], Direction::Read);
        assert!(mixed[0].1 > 1000.0 && mixed[0].1 < 1500.0, "{mixed:?}");
    }

    #[test]
    fn curves_merge_the_histograms_of_every_job_and_repetition() {
        use fsarena_core::Measurement;
        // Two repetitions: a fast one and a slow one with a tenth of the samples.
        let fast = LatencyHistogram::of((0..900).map(|i| 1_000 + i));
        let slow = LatencyHistogram::of((0..100).map(|i| 50_000 + i * 10));
        let mut entry = ResultEntry::default();
        for h in [&fast, &slow] {
            let mut m = Measurement::default();
            m.add_latency("read", h);
            entry.measurements.push(m);
        }
        let mut all = fast.clone();
        all.merge(&slow);
        let curve = latency_percentiles(&entry, Direction::Read);
        assert_eq!(curve.len(), FIO_PERCENTILES.len());
        for (p, v) in &curve {
            assert_eq!(*v, all.percentile(*p) as f64, "p{p}");
        }
        // p95 falls in the slow repetition: a curve of the last repetition alone, or an
        // average of the two curves, would not put it there.
        assert!(curve.iter().any(|&(p, v)| p == 95.0 && v >= 50_000.0));
        assert!(latency_percentiles(&entry, Direction::Write).is_empty());
        // A run stored without histograms still gets its (estimated) curve.
        let mut old = ResultEntry::default();
        let mut m = Measurement::default();
        m.jobs_mut().push(job(1, 100, 10, &[(50.0, 40), (99.0, 90)]));
        old.measurements.push(m);
        assert_eq!(latency_percentiles(&old, Direction::Read), [(50.0, 40.0), (99.0, 90.0)]);
    }

    #[test]
    fn bandwidth_adds_up_per_second() {
        let jobs = [job(0, 1, 2, &[]), job(0, 1, 1, &[])];
        assert_eq!(bandwidth_per_second(&jobs, Direction::Read), [2.0, 4.0, 3.0]);
        assert!(bandwidth_per_second(&jobs, Direction::Write).is_empty());
    }
}
