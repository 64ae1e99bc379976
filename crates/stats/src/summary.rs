//! Run-to-run summary of one metric: mean, spread, a confidence interval and outliers.
//!
//! Outliers use the modified z-score of
//! Boris Iglewicz and David Hoaglin (1993), "Volume 16: How to Detect and Handle Outliers",
//! The ASQC Basic References in Quality Control: Statistical Techniques, Edward F. Mykytka,
//! Ph.D., Editor — the same reference hyperfine's `src/outlier_detection.rs` cites.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The 0.6745 of Iglewicz and Hoaglin: the 0.75 quantile of the standard normal, which makes
/// the MAD of normal data estimate its standard deviation (MAD / 0.6745 ≈ σ).
const MAD_TO_SIGMA: f64 = 0.6745;

/// The modified z-score above which Iglewicz and Hoaglin recommend labelling a value an outlier.
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// Statistics of the measured repetitions of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divides by n-1); 0 when n < 2.
    pub stdev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// 95% confidence interval of the mean, mean ± t(0.975, n-1)·s/√n; `(mean, mean)` for n = 1.
    pub ci95: (f64, f64),
    /// Coefficient of variation, stdev / |mean|; 0 when the mean is 0.
    pub cv: f64,
    /// Indices of values whose modified z-score exceeds [`OUTLIER_THRESHOLD`].
    pub outliers: Vec<usize>,
}

/// Summarizes `values` (one per measured repetition); `None` when there are none.
///
/// Values are expected to be finite: a NaN or an infinity makes the moments NaN or infinite.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = mean(values);
    let stdev = sample_stdev(values, mean);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ci95 = if n < 2 {
        (mean, mean)
    } else {
        let half = t_quantile_975((n - 1) as f64) * stdev / (n as f64).sqrt();
        (mean - half, mean + half)
    };
    let cv = if mean == 0.0 { 0.0 } else { stdev / mean.abs() };
    Some(Summary { n, mean, stdev, min, max, ci95, cv, outliers: mad_outliers(values) })
}

/// Indices of the values whose modified z-score `|0.6745·(x − median) / MAD|` exceeds
/// [`OUTLIER_THRESHOLD`] (Iglewicz and Hoaglin, 1993).
///
/// When the MAD is 0 (at least half the values are equal) the score is undefined and nothing is
/// flagged. hyperfine instead divides by machine epsilon, which flags every value that differs
/// from the majority at all: in `[10, 10, 10.001]` the 10.001 would be an outlier. A real
/// spread still shows in the CV and its warning.
pub fn mad_outliers(values: &[f64]) -> Vec<usize> {
    let Some(center) = median(values) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = values.iter().map(|x| (x - center).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    if mad.is_nan() || mad <= 0.0 {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .filter(|(_, &x)| (MAD_TO_SIGMA * (x - center) / mad).abs() > OUTLIER_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

/// Arithmetic mean of a non-empty slice.
pub(crate) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample variance (n-1 denominator) around `mean`; 0 when there are fewer than two values.
///
/// Two passes (mean first, then squared deviations) rather than the one-pass sum of squares,
/// which loses all precision when the spread is tiny next to the mean (e.g. 1e9 ± 1 ops/s).
pub(crate) fn sample_variance(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64
}

/// Sample standard deviation (n-1 denominator); 0 when there are fewer than two values.
fn sample_stdev(values: &[f64], mean: f64) -> f64 {
    sample_variance(values, mean).sqrt()
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (the two-sided 95% factor).
///
/// Computed from the inverse CDF rather than a table so that any df works, including the
/// fractional df of Welch–Satterthwaite. NaN when `df` is not positive.
pub(crate) fn t_quantile_975(df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(0.975),
        Err(_) => f64::NAN,
    }
}

/// Median of the values; `None` when empty. NaNs sort last (total order), so they never panic.
fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if mid * 2 == sorted.len() { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    #[test]
    fn empty_has_no_summary() {
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn one_to_five() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 3.0, 1e-12));
        assert!(close(s.stdev, 1.581_138_830_084_189_8, 1e-12));
        assert_eq!((s.min, s.max), (1.0, 5.0));
        // scipy.stats.t.ppf(0.975, 4) = 2.7764451051977934.
        let half = 2.776_445_105_197_793_4 * 1.581_138_830_084_189_8 / 5f64.sqrt();
        assert!(close(s.ci95.0, 3.0 - half, 1e-9), "{:?}", s.ci95);
        assert!(close(s.ci95.1, 3.0 + half, 1e-9), "{:?}", s.ci95);
        assert!(close(s.ci95.0, 1.036_756_838_522_442_8, 1e-9));
        assert!(close(s.cv, 1.581_138_830_084_189_8 / 3.0, 1e-12));
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn single_value() {
        let s = summarize(&[42.5]).unwrap();
        assert_eq!(s.n, 1);
        assert_eq!(s.mean, 42.5);
        assert_eq!(s.stdev, 0.0);
        assert_eq!((s.min, s.max), (42.5, 42.5));
        assert_eq!(s.ci95, (42.5, 42.5));
        assert_eq!(s.cv, 0.0);
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn coefficient_of_variation() {
        // mean 100, sample stdev 10: CV 10%.
        let s = summarize(&[90.0, 100.0, 110.0]).unwrap();
        assert!(close(s.cv, 0.10, 1e-12));
        // The sign of the mean does not make the CV negative.
        let s = summarize(&[-90.0, -100.0, -110.0]).unwrap();
        assert!(close(s.cv, 0.10, 1e-12));
        // A zero mean gives 0, not infinity.
        let s = summarize(&[-1.0, 1.0]).unwrap();
        assert_eq!(s.cv, 0.0);
    }

    #[test]
    fn t_quantiles_match_scipy() {
        // scipy.stats.t.ppf(0.975, df).
        for (df, expected) in [
            (1.0, 12.706_204_736_174_694),
            (2.0, 4.302_652_729_749_462),
            (4.0, 2.776_445_105_197_793_4),
            (30.0, 2.042_272_456_301_237_8),
            (24.988_529_290_231_416, 2.059_586_491_365_625),
        ] {
            let t = t_quantile_975(df);
            assert!(close(t, expected, 1e-9), "df {df}: {t} != {expected}");
        }
        assert!(t_quantile_975(0.0).is_nan());
    }

    #[test]
    fn constant_values_have_a_point_interval() {
        let s = summarize(&[7.0, 7.0, 7.0]).unwrap();
        assert_eq!(s.stdev, 0.0);
        assert_eq!(s.ci95, (7.0, 7.0));
        assert!(s.outliers.is_empty());
    }

    #[test]
    fn large_mean_keeps_its_spread() {
        // A one-pass sum of squares would return 0 or garbage here.
        let s = summarize(&[1e9 - 1.0, 1e9, 1e9 + 1.0]).unwrap();
        assert!(close(s.stdev, 1.0, 1e-9), "{}", s.stdev);
    }

    #[test]
    fn mad_flags_the_far_value() {
        // median 10, MAD 1: the score of 100 is 0.6745·90 = 60.7; the next largest is 1.35.
        let s = summarize(&[10.0, 11.0, 9.0, 10.0, 12.0, 10.0, 100.0]).unwrap();
        assert_eq!(s.outliers, vec![6]);
    }

    #[test]
    fn mad_flags_both_tails() {
        assert_eq!(mad_outliers(&[-50.0, 10.0, 11.0, 9.0, 10.0, 12.0, 10.0, 100.0]), vec![0, 7]);
    }

    #[test]
    fn mad_leaves_a_tight_set_alone() {
        assert!(mad_outliers(&[10.0, 10.2, 9.9, 10.1, 9.8, 10.05]).is_empty());
        // hyperfine's sample drawn from a normal distribution.
        let normal = [
            2.332_694_88,
            1.421_959_07,
            -0.575_276_98,
            -0.312_934_37,
            2.294_815_8,
            0.758_132_73,
            -1.071_238_8,
            -0.963_947_41,
            -1.158_974_46,
            1.109_762_85,
        ];
        assert!(mad_outliers(&normal).is_empty());
    }

    #[test]
    fn mad_of_zero_flags_nothing() {
        assert!(mad_outliers(&[10.0, 10.0, 10.0, 10.0, 100.0]).is_empty());
        assert!(mad_outliers(&[]).is_empty());
        assert!(mad_outliers(&[5.0]).is_empty());
    }

    #[test]
    fn mad_threshold_is_strict() {
        // median 0, MAD 1: a value scores exactly 0.6745·x, so x = 3.5/0.6745 sits on the line.
        let edge = OUTLIER_THRESHOLD / MAD_TO_SIGMA;
        assert!(mad_outliers(&[-1.0, 0.0, 1.0, 0.0, edge * 0.999]).is_empty());
        assert_eq!(mad_outliers(&[-1.0, 0.0, 1.0, 0.0, edge * 1.001]), vec![4]);
    }
}
