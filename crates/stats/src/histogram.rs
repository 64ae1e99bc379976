//! Mergeable log-linear latency histogram with a stated error bound.

use fsarena_core::LatencySummary;
use hdrhistogram::Histogram;

/// Highest latency the histogram resolves: 2^42 ns, about 73 minutes. Larger samples are
/// counted at this value (they still count exactly in `max` and `mean`).
const HIGHEST_NS: u64 = 1 << 42;

/// A latency histogram in nanoseconds, plus exact min, max, mean and variance.
///
/// # Error bound
///
/// The buckets are HdrHistogram's with 3 significant digits: log-linear, 2048 linear
/// sub-buckets per power of two. A value `v` lands in a bucket no wider than `v / 1024`;
/// percentiles are reported at the bucket midpoint, so a reported percentile differs from
/// the true sample at that rank by at most `v / 2048`, a relative error of **0.049%** (values
/// below 2048 ns are exact). fio's buckets (64 per power of two) allow 1/128 = 0.78%.
///
/// Percentiles use the nearest-rank rule, as fio's `calc_clat_percentiles` does: the value of
/// the first sample whose rank `r` satisfies `r >= p/100 * N`.
///
/// Histograms merge exactly by adding counts, so per-thread histograms combine into group
/// and run totals without loss.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
    sum_squares: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        #[allow(clippy::expect_used)] // constant, valid bounds
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid histogram bounds");
        Self { hist, min: u64::MAX, max: 0, sum: 0, sum_squares: 0 }
    }

    /// Records one sample. This is on the I/O hot path: a few nanoseconds, no allocation.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += u128::from(ns);
        self.sum_squares += u128::from(ns) * u128::from(ns);
    }

    /// Number of samples.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Adds every sample of `other` (exact).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Both histograms share the same bounds, so adding cannot fail.
        let _ = self.hist.add(&other.hist);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
    }

    /// Exact mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        let n = self.len();
        if n == 0 {
            0.0
        } else {
            self.sum as f64 / n as f64
        }
    }

    /// Exact sample standard deviation (divided by n-1), as fio reports it.
    pub fn stddev(&self) -> f64 {
        let n = self.len();
        if n < 2 {
            return 0.0;
        }
        let n_f = n as f64;
        let mean = self.sum as f64 / n_f;
        let var = (self.sum_squares as f64 / n_f - mean * mean).max(0.0);
        // fio divides by n-1 (`calc_lat`: `*dev = sqrt(S / (n - 1))`).
        (var * n_f / (n_f - 1.0)).sqrt()
    }

    /// The nearest-rank percentile `p` (0..=100), reported at its bucket's midpoint and
    /// clamped to the exact min and max; 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let v = self.hist.value_at_quantile((p / 100.0).clamp(0.0, 1.0));
        self.hist.median_equivalent(v).clamp(self.min, self.max)
    }

    /// Summary with the given percentiles.
    pub fn summary(&self, percentiles: &[f64]) -> LatencySummary {
        if self.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            min: self.min,
            max: self.max,
            mean: self.mean(),
            stddev: self.stddev(),
            samples: self.len(),
            percentiles: percentiles.iter().map(|&p| (p, self.percentile(p))).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank percentile of sorted samples: the smallest value with rank >= p/100*N.
    fn exact(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    fn check(samples: &mut [u64]) {
        let mut h = LatencyHistogram::new();
        for &s in samples.iter() {
            h.record(s);
        }
        samples.sort_unstable();
        for &p in &fsarena_core::FIO_PERCENTILES {
            let want = exact(samples, p) as f64;
            let got = h.percentile(p) as f64;
            let err = (got - want).abs() / want;
            assert!(err <= 0.0005, "p{p}: got {got}, exact {want}, error {err}");
        }
        let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / samples.len() as f64;
        assert!((h.mean() - mean).abs() < 1e-6 * mean);
        assert_eq!(h.len(), samples.len() as u64);
        assert_eq!(h.summary(&[50.0]).min, samples[0]);
        assert_eq!(h.summary(&[50.0]).max, *samples.last().unwrap_or(&0));
    }

    #[test]
    fn uniform_percentiles_within_bound() {
        let mut rng = fastrand_like(7);
        let mut s: Vec<u64> = (0..200_000).map(|_| 1_000 + rng() % 1_000_000).collect();
        check(&mut s);
    }

    #[test]
    fn exponential_percentiles_within_bound() {
        let mut rng = fastrand_like(11);
        let mut s: Vec<u64> = (0..200_000)
            .map(|_| {
                let u = (rng() % 1_000_000 + 1) as f64 / 1_000_001.0;
                (-u.ln() * 50_000.0) as u64 + 100
            })
            .collect();
        check(&mut s);
    }

    #[test]
    fn heavy_tail_and_small_values_within_bound() {
        let mut rng = fastrand_like(3);
        let mut s: Vec<u64> = (0..100_000)
            .map(|i| if i % 1000 == 0 { 10_000_000_000 + rng() % 1_000_000_000 } else { 50 + rng() % 3000 })
            .collect();
        check(&mut s);
    }

    #[test]
    fn known_values_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100u64 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.percentile(1.0), 1);
        assert_eq!(h.percentile(100.0), 100);
        // population stddev of 1..=100 with n-1: sqrt(841.666..)
        assert!((h.stddev() - 29.011_491_975_882_016).abs() < 1e-9);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..10_000u64 {
            let x = v * 37 % 90_001 + 1;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.summary(&fsarena_core::FIO_PERCENTILES), all.summary(&fsarena_core::FIO_PERCENTILES));
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary(&[50.0]), LatencySummary::default());
    }

    /// A small xorshift generator so the tests need no extra dependency.
    fn fastrand_like(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }
}
