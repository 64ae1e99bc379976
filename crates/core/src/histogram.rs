//! The latency histogram every workload records into, kept in each [`crate::Measurement`]
//! and stored with it, so that percentiles, fio's latency bins and combined curves are
//! computed from counts, never interpolated.
//!
//! It lives in `core`, not `stats`, because a `Measurement` must merge exactly (several jobs,
//! later several hosts) and `core` cannot depend on `stats`; `fsarena_stats` re-exports it.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer as HdrDeserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Highest latency the histogram resolves: 2^42 ns, about 73 minutes. Larger samples are
/// counted at this value (they still count exactly in `max` and `mean`).
const HIGHEST_NS: u64 = 1 << 42;

/// HdrHistogram's precision: 2 significant digits, i.e. 256 sub-buckets (see the error bound).
const SIGNIFICANT_DIGITS: u8 = 2;

/// A latency histogram in nanoseconds, plus exact min, max, mean and variance.
///
/// # Error bound
///
/// The buckets are HdrHistogram's with 2 significant digits: values below 256 ns are kept
/// exactly; above, a value `v` with its highest bit at `2^m` lands in a bucket `2^(m-7)` wide,
/// i.e. 128 linear buckets per power of two. Percentiles are reported at the bucket midpoint,
/// so a reported percentile differs from the true sample at that rank by at most
/// `2^(m-8) <= v/256`: a relative error of **0.39%**. fio's buckets (64 per power of two,
/// `stat.h`) allow 1/128 = 0.78%.
///
/// Why 2 digits and not 3 (0.049%): the buckets then *nest* inside fio's (both are aligned
/// powers of two, ours half as wide), so fio-json+'s `bins` are exact sums of ours; the
/// counts array is 37 KiB instead of 278 KiB, which keeps the hot path's `record` in the L2
/// cache with dozens of threads; and a stored histogram of 100,000 samples takes about 1 KiB
/// instead of 4.5 KiB. The error stays half of fio's.
///
/// Percentiles use the nearest-rank rule, as fio's `calc_clat_percentiles` does: the value of
/// the first sample whose rank `r` satisfies `r >= p/100 * N`.
///
/// # Merging
///
/// [`LatencyHistogram::merge`] is exact: bucket counts add, min and max combine, and the sums
/// behind the mean and variance add, so merging per-thread histograms gives the histogram of
/// all samples, bit for bit.
///
/// # Stored form
///
/// Serialized (serde) as `{"min", "max", "sum", "sum_squares", "hdr"}`: `sum` and
/// `sum_squares` as decimal strings (they exceed 2^53, beyond which most JSON readers round),
/// `hdr` as HdrHistogram's standard V2 encoding, deflated, in base64 — the form of
/// HdrHistogram's log files, readable by its Java, Python and C implementations.
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

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        // An empty histogram's min is a sentinel; compare what is observable.
        self.hist == other.hist
            && self.sum == other.sum
            && self.sum_squares == other.sum_squares
            && (self.is_empty() || (self.min == other.min && self.max == other.max))
    }
}

/// One bucket of a histogram: the samples counted in `[low, high]` ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Smallest value the bucket holds.
    pub low: u64,
    /// Largest value the bucket holds.
    pub high: u64,
    /// How many samples it holds.
    pub count: u64,
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        #[allow(clippy::expect_used)] // constant, valid bounds
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS).expect("valid histogram bounds");
        Self { hist, min: u64::MAX, max: 0, sum: 0, sum_squares: 0 }
    }

    /// An empty histogram whose counts are already in memory: every count written once, so
    /// that the first samples recorded into it fault no page in (a timed phase makes its
    /// histogram before its clock starts).
    pub fn resident() -> Self {
        let mut h = Self::new();
        h.hist.reset();
        h
    }

    /// A histogram of `samples` (tests, and small callers off the hot path).
    pub fn of(samples: impl IntoIterator<Item = u64>) -> Self {
        let mut h = Self::new();
        samples.into_iter().for_each(|s| h.record(s));
        h
    }

    /// Records one sample. This is on the I/O hot path: a few nanoseconds, no allocation.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns);
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
        // Same bounds (or, for a stored one, a histogram that fits them), so adding cannot
        // fail; a histogram read from elsewhere with a wider range saturates at our highest.
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                let _ = self.hist.record_n(v.value_iterated_to().min(HIGHEST_NS), v.count_at_value());
            }
        }
        if !other.is_empty() {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
    }

    /// Smallest sample, exact; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.min
        }
    }

    /// Largest sample, exact; 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
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

    /// The non-empty buckets, in increasing order of value.
    pub fn buckets(&self) -> impl Iterator<Item = Bucket> + '_ {
        self.hist.iter_recorded().map(|v| {
            let high = v.value_iterated_to();
            Bucket { low: self.hist.lowest_equivalent(high), high, count: v.count_at_value() }
        })
    }

    /// Summary with the given percentiles.
    pub fn summary(&self, percentiles: &[f64]) -> crate::LatencySummary {
        if self.is_empty() {
            return crate::LatencySummary::default();
        }
        crate::LatencySummary {
            min: self.min,
            max: self.max,
            mean: self.mean(),
            stddev: self.stddev(),
            samples: self.len(),
            percentiles: percentiles.iter().map(|&p| (p, self.percentile(p))).collect(),
        }
    }
}

/// The stored form (see [`LatencyHistogram`]'s "Stored form").
#[derive(Serialize, Deserialize)]
struct Stored {
    min: u64,
    max: u64,
    sum: String,
    sum_squares: String,
    hdr: String,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.hist, &mut bytes)
            .map_err(|e| serde::ser::Error::custom(format!("cannot encode a latency histogram: {e:?}")))?;
        Stored {
            min: self.min(),
            max: self.max,
            sum: self.sum.to_string(),
            sum_squares: self.sum_squares.to_string(),
            hdr: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Stored::deserialize(deserializer)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.hdr.as_bytes())
            .map_err(|e| D::Error::custom(format!("latency histogram: bad base64: {e}")))?;
        let hist: Histogram<u64> = HdrDeserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| D::Error::custom(format!("latency histogram: bad HdrHistogram encoding: {e:?}")))?;
        let number = |text: &str, what: &str| {
            text.parse::<u128>().map_err(|_| D::Error::custom(format!("latency histogram: bad {what} '{text}'")))
        };
        let mut out = Self::new();
        // Into our bounds, so that merging with fresh histograms stays a plain addition.
        out.hist.add(&hist).map_err(|e| D::Error::custom(format!("latency histogram out of range: {e:?}")))?;
        out.min = if out.is_empty() { u64::MAX } else { s.min };
        out.max = s.max;
        out.sum = number(&s.sum, "sum")?;
        out.sum_squares = number(&s.sum_squares, "sum_squares")?;
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Nearest-rank percentile of sorted samples: the smallest value with rank >= p/100*N.
    fn exact(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    fn check(samples: &mut [u64]) {
        let h = LatencyHistogram::of(samples.iter().copied());
        samples.sort_unstable();
        for &p in &crate::FIO_PERCENTILES {
            let want = exact(samples, p) as f64;
            let got = h.percentile(p) as f64;
            let err = (got - want).abs() / want;
            assert!(err <= 1.0 / 256.0, "p{p}: got {got}, exact {want}, error {err}");
        }
        let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / samples.len() as f64;
        assert!((h.mean() - mean).abs() < 1e-6 * mean);
        assert_eq!(h.len(), samples.len() as u64);
        assert_eq!(h.summary(&[50.0]).min, samples[0]);
        assert_eq!(h.summary(&[50.0]).max, *samples.last().unwrap_or(&0));
    }

    #[test]
    fn uniform_percentiles_within_bound() {
        let mut rng = xorshift(7);
        let mut s: Vec<u64> = (0..200_000).map(|_| 1_000 + rng() % 1_000_000).collect();
        check(&mut s);
    }

    #[test]
    fn exponential_percentiles_within_bound() {
        let mut rng = xorshift(11);
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
        let mut rng = xorshift(3);
        let mut s: Vec<u64> = (0..100_000)
            .map(|i| if i % 1000 == 0 { 10_000_000_000 + rng() % 1_000_000_000 } else { 50 + rng() % 3000 })
            .collect();
        check(&mut s);
    }

    #[test]
    fn known_values_are_exact() {
        let h = LatencyHistogram::of(1..=100u64);
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.percentile(1.0), 1);
        assert_eq!(h.percentile(100.0), 100);
        // population stddev of 1..=100 with n-1: sqrt(841.666..)
        assert!((h.stddev() - 29.011_491_975_882_016).abs() < 1e-9);
        // A zero-length sample (a coarse clock) counts as 0, not 1.
        assert_eq!(LatencyHistogram::of([0, 0, 5]).percentile(50.0), 0);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..10_000u64 {
            let x = v * 37 % 90_001 + 1 + (v % 7) * 1_000_000;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!(a.summary(&crate::FIO_PERCENTILES), all.summary(&crate::FIO_PERCENTILES));
        assert_eq!(a.buckets().collect::<Vec<_>>(), all.buckets().collect::<Vec<_>>());
        // Merging an empty histogram changes nothing, min included.
        a.merge(&LatencyHistogram::new());
        assert_eq!(a, all);
        let mut empty = LatencyHistogram::new();
        empty.merge(&all);
        assert_eq!(empty, all);
    }

    #[test]
    fn stored_form_round_trips_exactly_and_is_small() {
        let mut rng = xorshift(5);
        let h = LatencyHistogram::of((0..100_000).map(|_| 5_000 + rng() % 200_000));
        let text = serde_json::to_string(&h).unwrap();
        let back: LatencyHistogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.summary(&crate::FIO_PERCENTILES), h.summary(&crate::FIO_PERCENTILES));
        assert!(text.len() < 2_000, "{} bytes", text.len());
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["sum_squares"].is_string() && v["hdr"].as_str().unwrap().starts_with("HISTFAAA"), "{v}");
        // An empty one too.
        let empty: LatencyHistogram =
            serde_json::from_str(&serde_json::to_string(&LatencyHistogram::new()).unwrap()).unwrap();
        assert!(empty.is_empty() && empty.min() == 0);
        let mut merged = empty.clone();
        merged.merge(&h);
        assert_eq!(merged, h);
    }

    #[test]
    fn a_damaged_stored_form_is_an_error_not_a_panic() {
        let bad = r#"{"min":1,"max":2,"sum":"3","sum_squares":"5","hdr":"not base64!"}"#;
        assert!(serde_json::from_str::<LatencyHistogram>(bad).unwrap_err().to_string().contains("base64"));
        let bad = r#"{"min":1,"max":2,"sum":"x","sum_squares":"5","hdr":"AAAA"}"#;
        assert!(serde_json::from_str::<LatencyHistogram>(bad).is_err());
    }

    #[test]
    fn buckets_cover_every_sample_and_nest_in_powers_of_two() {
        let h = LatencyHistogram::of([3, 255, 256, 257, 7054, 1 << 30]);
        let buckets: Vec<Bucket> = h.buckets().collect();
        assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), 6);
        assert_eq!((buckets[0].low, buckets[0].high), (3, 3));
        // 256 and 257 share a 2-wide bucket: [256, 257].
        assert!(buckets.iter().any(|b| (b.low, b.high, b.count) == (256, 257, 2)));
        // 7054 (highest bit 2^12) is in a 2^5-wide bucket.
        assert!(buckets.iter().any(|b| b.low <= 7054 && 7054 <= b.high && b.high - b.low + 1 == 32));
    }

    /// A small xorshift generator so the tests need no extra dependency.
    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }
}
