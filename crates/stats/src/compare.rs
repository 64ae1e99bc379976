//! A/B comparison of two sets of repetitions: Welch's unequal-variances t-test.
//!
//! Welch's test rather than Student's pooled test because two filesystems (or a filesystem
//! before and after a change) rarely share a variance, and Welch's test loses almost nothing
//! when they do. References: B. L. Welch (1947), "The generalization of 'Student's' problem
//! when several different population variances are involved", Biometrika 34 (1–2): 28–35;
//! F. E. Satterthwaite (1946), "An approximate distribution of estimates of variance
//! components", Biometrics Bulletin 2 (6): 110–114.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::summary::{mean, sample_variance, t_quantile_975};

/// Result of comparing run B against run A for one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Mean of A (the baseline).
    pub mean_a: f64,
    /// Mean of B (the candidate).
    pub mean_b: f64,
    /// mean_b − mean_a.
    pub diff: f64,
    /// diff / mean_a, the relative change; NaN when mean_a is 0.
    pub relative: f64,
    /// 95% confidence interval of `diff`, with the Welch–Satterthwaite degrees of freedom.
    pub ci95_diff: (f64, f64),
    /// Welch–Satterthwaite degrees of freedom (may be fractional).
    pub df: f64,
    /// t statistic, diff / standard error, so it has the sign of `diff`.
    pub t: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// Welch's t-test of B against A; `None` when either side has fewer than two values.
///
/// When both sides have zero variance the test is undefined; the result is then exact:
/// `p_value` 0 if the means differ and 1 if not, `ci95_diff` is `(diff, diff)`, `t` is
/// ±infinity (0 for equal means) and `df` is the pooled na + nb − 2, the Welch–Satterthwaite
/// limit for equal sample sizes.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Comparison> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mean_a, mean_b) = (mean(a), mean(b));
    let diff = mean_b - mean_a;
    let relative = if mean_a == 0.0 { f64::NAN } else { diff / mean_a };
    // Squared standard errors of each mean.
    let se2_a = sample_variance(a, mean_a) / na;
    let se2_b = sample_variance(b, mean_b) / nb;
    let se2 = se2_a + se2_b;

    if se2 == 0.0 {
        let (t, p_value) = if diff == 0.0 { (0.0, 1.0) } else { (f64::INFINITY.copysign(diff), 0.0) };
        return Some(Comparison {
            mean_a,
            mean_b,
            diff,
            relative,
            ci95_diff: (diff, diff),
            df: na + nb - 2.0,
            t,
            p_value,
        });
    }

    let se = se2.sqrt();
    let t = diff / se;
    let df = se2 * se2 / (se2_a * se2_a / (na - 1.0) + se2_b * se2_b / (nb - 1.0));
    // The survival function rather than 1 − cdf keeps small p-values exact instead of rounding
    // them to 0 in the subtraction.
    let p_value = match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    };
    let half = t_quantile_975(df) * se;
    Some(Comparison { mean_a, mean_b, diff, relative, ci95_diff: (diff - half, diff + half), df, t, p_value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    // Wikipedia's Welch's t-test example 2; the expected figures are from
    // scipy.stats.ttest_ind(B, A, equal_var=False) and its confidence_interval(0.95).
    const A: [f64; 15] = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
    const B: [f64; 15] = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];

    #[test]
    fn welch_matches_scipy() {
        let c = welch(&A, &B).unwrap();
        assert!(close(c.mean_a, 20.82, 1e-12));
        assert!(close(c.mean_b, 22.986_666_666_666_665, 1e-12));
        assert!(close(c.diff, 2.166_666_666_666_668, 1e-12));
        assert!(close(c.relative, 2.166_666_666_666_668 / 20.82, 1e-12));
        assert!(close(c.t, 2.455_356_398_286_006, 1e-12), "t {}", c.t);
        assert!(close(c.df, 24.988_529_290_231_416, 1e-9), "df {}", c.df);
        assert!(close(c.p_value, 0.021_378_001_462_866_992, 1e-9), "p {}", c.p_value);
        assert!(close(c.ci95_diff.0, 0.349_237_066_192_406_9, 1e-9), "{:?}", c.ci95_diff);
        assert!(close(c.ci95_diff.1, 3.984_096_267_140_929, 1e-9), "{:?}", c.ci95_diff);
    }

    #[test]
    fn swapping_sides_flips_the_signs() {
        let ab = welch(&A, &B).unwrap();
        let ba = welch(&B, &A).unwrap();
        assert!(close(ba.t, -ab.t, 1e-12));
        assert!(close(ba.diff, -ab.diff, 1e-12));
        assert!(close(ba.df, ab.df, 1e-9));
        assert!(close(ba.p_value, ab.p_value, 1e-12));
        assert!(close(ba.ci95_diff.0, -ab.ci95_diff.1, 1e-9));
        assert!(close(ba.ci95_diff.1, -ab.ci95_diff.0, 1e-9));
    }

    #[test]
    fn welch_unequal_sizes_matches_scipy() {
        // scipy.stats.ttest_ind([2, 4, 6, 8], [1, 2, 3], equal_var=False).
        let c = welch(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(close(c.t, 2.121_320_343_559_643, 1e-12));
        assert!(close(c.df, 4.075_471_698_113_207_5, 1e-9));
        assert!(close(c.p_value, 0.099_912_864_311_800_87, 1e-9));
        assert!(close(c.ci95_diff.0, -0.897_975_451_083_127_9, 1e-9));
        assert!(close(c.ci95_diff.1, 6.897_975_451_083_128, 1e-9));
    }

    #[test]
    fn one_constant_side() {
        // scipy.stats.ttest_ind([11, 12, 13], [10, 10, 10], equal_var=False): df is exactly 2.
        let c = welch(&[10.0, 10.0, 10.0], &[11.0, 12.0, 13.0]).unwrap();
        assert!(close(c.t, 3.464_101_615_137_755, 1e-12));
        assert!(close(c.df, 2.0, 1e-12));
        assert!(close(c.p_value, 0.074_179_900_227_448_54, 1e-9));
        assert!(close(c.ci95_diff.0, -0.484_137_711_750_329_8, 1e-9));
        assert!(close(c.ci95_diff.1, 4.484_137_711_750_33, 1e-9));
    }

    #[test]
    fn too_few_values() {
        assert_eq!(welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch(&[1.0, 2.0], &[]), None);
    }

    #[test]
    fn both_constant_and_equal() {
        let c = welch(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(c.p_value, 1.0);
        assert_eq!(c.ci95_diff, (0.0, 0.0));
        assert_eq!(c.t, 0.0);
        assert_eq!(c.df, 3.0);
    }

    #[test]
    fn both_constant_and_different() {
        let c = welch(&[5.0, 5.0], &[6.0, 6.0, 6.0]).unwrap();
        assert_eq!(c.p_value, 0.0);
        assert_eq!(c.diff, 1.0);
        assert_eq!(c.ci95_diff, (1.0, 1.0));
        assert_eq!(c.t, f64::INFINITY);
        assert!(close(c.relative, 0.2, 1e-12));
        let c = welch(&[6.0, 6.0], &[5.0, 5.0]).unwrap();
        assert_eq!(c.t, f64::NEG_INFINITY);
        assert_eq!(c.p_value, 0.0);
    }

    #[test]
    fn relative_of_a_zero_baseline_is_nan() {
        let c = welch(&[-1.0, 1.0], &[1.0, 2.0]).unwrap();
        assert!(c.relative.is_nan());
    }

    #[test]
    fn verdict_directions() {
        use crate::{ratio, Reading};
        use fsarena_core::Better;
        // B is higher than A, significantly: the one model (ratio) reads it by direction.
        let up = ratio(&A, &B).unwrap();
        assert_eq!(up.reading(Better::Higher), Reading::Better); // e.g. ops/s went up
        assert_eq!(up.reading(Better::Lower), Reading::Worse); // e.g. latency went up
        let down = ratio(&B, &A).unwrap();
        assert_eq!(down.reading(Better::Higher), Reading::Worse);
        assert_eq!(down.reading(Better::Lower), Reading::Better);
        // Equal constant sides: no difference; different constant sides: exact.
        assert_eq!(
            ratio(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap().reading(Better::Higher),
            Reading::NoSignificantDifference
        );
        assert_eq!(ratio(&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0]).unwrap().reading(Better::Higher), Reading::Better);
    }
}
