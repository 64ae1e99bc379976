//! The one comparison every surface uses (Findings, the report's tables and their colours,
//! `compare`, the A/B section and the study's claims): the ratio of geometric means of two sets
//! of repetitions, with its 95% confidence interval from Welch's t-test on the logarithms.
//!
//! Why this and not a difference of arithmetic means: studies quote factors ("ext3 is 40×
//! faster"), and a factor's interval on a linear scale can cross zero ("−243% … +172%", a
//! throughput that fell by more than all of it). On the log scale the ratio's interval is the
//! exponential of an ordinary t interval: always positive, symmetric in the sense that swapping
//! the sides inverts it, and the same test (Welch's, unequal variances) decides significance:
//! the interval excludes 1 exactly when p < 0.05. Benchmark repetitions are positive and their
//! spread grows with their size (multiplicative noise), which is the log scale's assumption.
//!
//! Where the data cannot carry an interval the comparison says so instead of printing one:
//! fewer than [`MIN_REPETITIONS`] on a side (two values give one degree of freedom, and
//! t(0.975, 1) = 12.7 makes intervals such as 0.00–72474673522953), or an interval whose ends
//! are more than [`MAX_SPREAD`] apart.
//!
//! A value of zero or below has no logarithm (a count of errors, a time of 0): then the ratio
//! of arithmetic means is given, with Welch's interval of the difference divided by A's mean,
//! its lower end held at 0 (a ratio of non-negative quantities cannot be negative).

use fsarena_core::Better;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::compare::welch;
use crate::summary::{mean, sample_variance, t_quantile_975};

/// The significance level of every verdict: 95% intervals.
pub const ALPHA: f64 = 0.05;

/// Repetitions a side needs before a comparison gives an interval.
pub const MIN_REPETITIONS: usize = 3;

/// An interval whose upper end is more than this many times its lower end says nothing about
/// the size of a difference: such a comparison is "too noisy to tell".
pub const MAX_SPREAD: f64 = 10.0;

/// How a ratio was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Ratio of geometric means; Welch's t-test on the logarithms.
    Log,
    /// Ratio of arithmetic means; Welch's t-test on the values (a value ≤ 0 on a side).
    Linear,
}

/// Why a comparison gives no interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Untold {
    /// A side has fewer than [`MIN_REPETITIONS`] repetitions.
    TooFew,
    /// The interval spans more than [`MAX_SPREAD`]×.
    TooWide,
}

/// B against A on one metric, as a factor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// A's central value: the geometric mean of its repetitions (arithmetic for [`Method::Linear`]).
    pub center_a: f64,
    /// B's central value.
    pub center_b: f64,
    /// center_b / center_a.
    pub value: f64,
    /// 95% confidence interval of `value`, whenever a test was possible (even a too wide one).
    pub ci95: Option<(f64, f64)>,
    /// Welch's two-sided p.
    pub p: Option<f64>,
    /// Repetitions of A and of B.
    pub n: (usize, usize),
    /// How it was estimated.
    pub method: Method,
}

/// What a comparison says about B against A for a metric with a known better direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// B is significantly better: the whole interval is on the better side of 1.
    Better,
    /// B is significantly worse.
    Worse,
    /// The interval contains 1.
    NoSignificantDifference,
    /// No interval can be trusted: too few repetitions, or too wide.
    Untold(Untold),
}

/// The central value of a set of repetitions: the geometric mean when every value is positive
/// (what ranks and what a ratio divides), else the arithmetic mean; `None` when empty.
pub fn center(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(if positive(values) { log_mean(values).exp() } else { mean(values) })
}

fn positive(values: &[f64]) -> bool {
    values.iter().all(|&v| v > 0.0 && v.is_finite())
}

fn log_mean(values: &[f64]) -> f64 {
    values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64
}

/// B over A; `None` when a side is empty or A's central value is 0.
pub fn ratio(a: &[f64], b: &[f64]) -> Option<Ratio> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let n = (a.len(), b.len());
    if positive(a) && positive(b) {
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let (la, lb) = (ln(a), ln(b));
        let (center_a, center_b) = (mean(&la).exp(), mean(&lb).exp());
        let test = welch(&la, &lb);
        return Some(Ratio {
            center_a,
            center_b,
            value: center_b / center_a,
            ci95: test.as_ref().map(|c| (c.ci95_diff.0.exp(), c.ci95_diff.1.exp())),
            p: test.map(|c| c.p_value),
            n,
            method: Method::Log,
        });
    }
    let (center_a, center_b) = (mean(a), mean(b));
    if center_a == 0.0 {
        return None;
    }
    let test = welch(a, b);
    let scale = |d: f64| (1.0 + d / center_a.abs()).max(0.0);
    Some(Ratio {
        center_a,
        center_b,
        value: center_b / center_a,
        ci95: test.as_ref().map(|c| (scale(c.ci95_diff.0), scale(c.ci95_diff.1))),
        p: test.map(|c| c.p_value),
        n,
        method: Method::Linear,
    })
}

/// A ratio of ratios, on the log scale: `exp(Σ coefficient · mean(ln values))` for groups of
/// repetitions with coefficients +1 or −1, with Welch–Satterthwaite's degrees of freedom for
/// the sum. `[(b, 1), (a, -1)]` is [`ratio`]`(a, b)`; `[(x4, 1), (x1, -1), (y4, -1), (y1, 1)]`
/// asks whether x gains more than y from 1 to 4 jobs. `None` when a group is empty or has a
/// value ≤ 0.
pub fn contrast(groups: &[(&[f64], f64)]) -> Option<Ratio> {
    if groups.is_empty() || groups.iter().any(|(v, _)| v.is_empty() || !positive(v)) {
        return None;
    }
    let logs: Vec<Vec<f64>> = groups.iter().map(|(v, _)| v.iter().map(|x| x.ln()).collect()).collect();
    let estimate: f64 = logs.iter().zip(groups).map(|(l, (_, c))| c * mean(l)).sum();
    let num = |c: f64| groups.iter().zip(&logs).filter(move |(g, _)| g.1 * c > 0.0).map(|(_, l)| mean(l).exp());
    let center_b = num(1.0).product::<f64>();
    let center_a = num(-1.0).product::<f64>();
    let n_side = |c: f64| groups.iter().filter(|g| g.1 * c > 0.0).map(|g| g.0.len()).min().unwrap_or(0);
    let n = (n_side(-1.0), n_side(1.0));
    let mut ratio = Ratio { center_a, center_b, value: estimate.exp(), ci95: None, p: None, n, method: Method::Log };
    if logs.iter().any(|l| l.len() < 2) {
        return Some(ratio);
    }
    // Each group's squared standard error of its mean, times its coefficient squared.
    let parts: Vec<(f64, f64)> = logs
        .iter()
        .zip(groups)
        .map(|(l, (_, c))| (c * c * sample_variance(l, mean(l)) / l.len() as f64, (l.len() - 1) as f64))
        .collect();
    let se2: f64 = parts.iter().map(|(s, _)| s).sum();
    if se2 == 0.0 {
        ratio.ci95 = Some((ratio.value, ratio.value));
        ratio.p = Some(if estimate == 0.0 { 1.0 } else { 0.0 });
        return Some(ratio);
    }
    let df = se2 * se2 / parts.iter().map(|(s, d)| s * s / d).sum::<f64>();
    let half = t_quantile_975(df) * se2.sqrt();
    ratio.ci95 = Some(((estimate - half).exp(), (estimate + half).exp()));
    ratio.p = StudentsT::new(0.0, 1.0, df).ok().map(|t| (2.0 * t.sf(estimate.abs() / se2.sqrt())).min(1.0));
    Some(ratio)
}

impl Ratio {
    /// Why no interval is told, if none is: too few repetitions, or too wide an interval.
    pub fn untold(&self) -> Option<Untold> {
        if self.n.0 < MIN_REPETITIONS || self.n.1 < MIN_REPETITIONS {
            return Some(Untold::TooFew);
        }
        match self.ci95 {
            None => Some(Untold::TooFew),
            // A NaN end compares as neither: too wide to tell.
            Some((lo, hi)) if hi.partial_cmp(&(lo * MAX_SPREAD)).is_none_or(|o| o.is_gt()) => Some(Untold::TooWide),
            Some(_) => None,
        }
    }

    /// The interval when it can be told.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.untold().is_none().then_some(self.ci95).flatten()
    }

    /// What the comparison says about B for a metric whose better direction is `better`.
    pub fn reading(&self, better: Better) -> Reading {
        if let Some(why) = self.untold() {
            return Reading::Untold(why);
        }
        let Some((lo, hi)) = self.ci95 else { return Reading::Untold(Untold::TooFew) };
        let up = if lo > 1.0 {
            true
        } else if hi < 1.0 {
            false
        } else {
            return Reading::NoSignificantDifference;
        };
        if up == (better == Better::Higher) {
            Reading::Better
        } else {
            Reading::Worse
        }
    }

    /// This comparison seen from the other side: A over B.
    pub fn inverse(&self) -> Ratio {
        Ratio {
            center_a: self.center_b,
            center_b: self.center_a,
            value: 1.0 / self.value,
            ci95: self.ci95.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
            p: self.p,
            n: (self.n.1, self.n.0),
            method: self.method,
        }
    }

    /// The factor by which B is better than A in the metric's direction (below 1 when worse):
    /// the ratio itself for higher-is-better metrics, its inverse for lower-is-better ones.
    pub fn oriented(&self, better: Better) -> Ratio {
        if better == Better::Higher {
            self.clone()
        } else {
            self.inverse()
        }
    }
}

/// How a factor is written: `3.20`, `12.4`, `250`.
pub fn factor_text(f: f64) -> String {
    if !f.is_finite() {
        return "∞".into();
    }
    let digits = if f >= 100.0 {
        0
    } else if f >= 10.0 {
        1
    } else if f >= 0.01 || f == 0.0 {
        2
    } else {
        4
    };
    format!("{f:.digits$}")
}

/// `p=0.012` or `p<0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn the_ratio_of_geometric_means_matches_scipy_on_the_logs() {
        // scipy: a, b = log([100, 110, 90]), log([200, 210, 190]);
        // r = ttest_ind(b, a, equal_var=False); exp(r.confidence_interval(0.95)).
        let r = ratio(&[100.0, 110.0, 90.0], &[200.0, 210.0, 190.0]).unwrap();
        assert_eq!(r.method, Method::Log);
        let ga = (100.0f64 * 110.0 * 90.0).cbrt();
        let gb = (200.0f64 * 210.0 * 190.0).cbrt();
        assert!(close(r.center_a, ga, 1e-9) && close(r.center_b, gb, 1e-9));
        assert!(close(r.value, gb / ga, 1e-12));
        let (lo, hi) = r.ci95.unwrap();
        assert!(close(lo, 1.627_481_13, 1e-6) && close(hi, 2.470_183_23, 1e-6), "{lo} {hi}");
        assert!(close(r.p.unwrap(), 0.001_896_423_973, 1e-9), "{:?}", r.p);
        assert_eq!(r.reading(Better::Higher), Reading::Better);
        assert_eq!(r.reading(Better::Lower), Reading::Worse);
    }

    #[test]
    fn the_interval_excludes_one_exactly_when_p_is_below_alpha() {
        let a = [10.0, 11.0, 12.0, 10.5];
        for shift in [0.0, 0.3, 0.6, 0.9, 1.2, 1.5, 3.0] {
            let b: Vec<f64> = a.iter().map(|x| x + shift + (x % 2.0) * 0.1).collect();
            let r = ratio(&a, &b).unwrap();
            let (lo, hi) = r.ci95.unwrap();
            assert_eq!(lo > 1.0 || hi < 1.0, r.p.unwrap() < ALPHA, "shift {shift}: {lo} {hi} {:?}", r.p);
        }
    }

    #[test]
    fn swapping_the_sides_inverts_the_ratio_and_its_interval() {
        let (a, b) = ([5.0, 6.0, 7.0], [9.0, 8.0, 12.0, 10.0]);
        let ab = ratio(&a, &b).unwrap();
        let ba = ratio(&b, &a).unwrap();
        assert!(close(ab.value * ba.value, 1.0, 1e-12));
        let (l1, h1) = ab.ci95.unwrap();
        let (l2, h2) = ba.ci95.unwrap();
        assert!(close(l1 * h2, 1.0, 1e-9) && close(h1 * l2, 1.0, 1e-9));
        let inv = ab.inverse();
        assert!(close(inv.ci95.unwrap().0, l2, 1e-9) && close(inv.value, ba.value, 1e-12));
    }

    #[test]
    fn two_repetitions_or_a_huge_interval_tell_nothing() {
        // The case: two repetitions, "10.1× (95% CI 0.00–72474673522953)".
        let r = ratio(&[1.0, 30.0], &[100.0, 110.0]).unwrap();
        assert_eq!(r.untold(), Some(Untold::TooFew));
        assert_eq!(r.reading(Better::Higher), Reading::Untold(Untold::TooFew));
        assert_eq!(r.interval(), None);
        // Three repetitions but an interval of 0.71–62.9 (scipy on the logs): too wide.
        let r = ratio(&[1.0, 3.0, 9.0], &[10.0, 20.0, 40.0]).unwrap();
        let (lo, hi) = r.ci95.unwrap();
        assert!(hi / lo > MAX_SPREAD, "{lo} {hi}");
        assert_eq!(r.reading(Better::Higher), Reading::Untold(Untold::TooWide));
    }

    #[test]
    fn a_linear_interval_never_goes_below_zero() {
        let r = ratio(&[0.0, 10.0, 20.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(r.method, Method::Linear);
        let (lo, hi) = r.ci95.unwrap();
        assert!(lo >= 0.0 && hi > lo, "{lo} {hi}");
        assert!(ratio(&[0.0, 0.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn a_contrast_of_two_groups_is_the_ratio() {
        let (a, b) = ([5.0, 6.0, 7.0], [9.0, 8.0, 12.0, 10.0]);
        let r = ratio(&a, &b).unwrap();
        let c = contrast(&[(&b, 1.0), (&a, -1.0)]).unwrap();
        assert!(close(c.value, r.value, 1e-12));
        let ((l1, h1), (l2, h2)) = (r.ci95.unwrap(), c.ci95.unwrap());
        assert!(close(l1, l2, 1e-9) && close(h1, h2, 1e-9));
        assert!(close(c.p.unwrap(), r.p.unwrap(), 1e-9));
    }

    #[test]
    fn a_ratio_of_ratios_compares_two_gains() {
        // x doubles from 1 to 4 jobs, y stays: x's gain over y's is about 2.
        let (x1, x4) = ([100.0, 102.0, 98.0], [200.0, 205.0, 195.0]);
        let (y1, y4) = ([50.0, 51.0, 49.0], [50.0, 52.0, 48.0]);
        let c = contrast(&[(&x4, 1.0), (&x1, -1.0), (&y4, -1.0), (&y1, 1.0)]).unwrap();
        assert!(close(c.value, 2.0, 0.05), "{}", c.value);
        let (lo, hi) = c.ci95.unwrap();
        assert!(lo > 1.5 && hi < 2.6, "{lo} {hi}");
        assert_eq!(c.reading(Better::Higher), Reading::Better);
        assert!(contrast(&[(&[0.0, 1.0], 1.0)]).is_none());
    }

    #[test]
    fn orientation_makes_better_above_one() {
        // Times: B takes half as long, so B is 2× better on a lower-is-better metric.
        let r = ratio(&[10.0, 10.5, 9.5], &[5.0, 5.2, 4.8]).unwrap();
        let o = r.oriented(Better::Lower);
        assert!(close(o.value, 1.0 / r.value, 1e-12) && o.value > 1.9);
        assert_eq!(r.reading(Better::Lower), Reading::Better);
        assert_eq!(factor_text(3.204), "3.20");
        assert_eq!(factor_text(12.44), "12.4");
        assert_eq!(p_text(0.0004), "p<0.001");
    }
}
