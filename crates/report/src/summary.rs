//! Run-to-run summary of one metric over the measured repetitions: mean, sample standard
//! deviation and a 95% confidence interval of the mean.
//!
//! This belongs in `fsarena-stats` (DESIGN: "summaries (mean, stdev, percentiles, CI)"); it
//! lives here until that crate offers it, and has no dependency that would stop the move.

/// Two-sided 97.5% quantiles of Student's t distribution for 1 to 30 degrees of freedom
/// (standard tables, three decimals).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// t(0.975, df); beyond 30 degrees of freedom the normal quantile 1.96, which is within 2%
/// of the exact value there.
pub(crate) fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T_975[df - 1],
        _ => 1.96,
    }
}

/// Summary of the values of one metric across repetitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub mean: f64,
    /// Sample standard deviation (n-1); 0 for a single value.
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
    /// 95% confidence interval of the mean, `mean ± t(0.975, n-1) · stdev / √n`;
    /// `[mean, mean]` for a single value, where no spread is known.
    pub ci95: (f64, f64),
}

/// Summarizes `values`; `None` when there are none.
pub(crate) fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let stdev =
        if n > 1 { (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
    let half = if n > 1 { t_975(n - 1) * stdev / (n as f64).sqrt() } else { 0.0 };
    Some(Summary {
        mean,
        stdev,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ci95: (mean - half, mean + half),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn single_value_has_no_spread() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!((s.mean, s.stdev, s.min, s.max, s.ci95), (5.0, 0.0, 5.0, 5.0, (5.0, 5.0)));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn three_values_use_student_t() {
        let s = summarize(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!((s.stdev - 1.0).abs() < 1e-12);
        let half = 4.303 / 3f64.sqrt();
        assert!((s.ci95.0 - (2.0 - half)).abs() < 1e-12);
        assert!((s.ci95.1 - (2.0 + half)).abs() < 1e-12);
        assert_eq!(t_975(31), 1.96);
        assert_eq!(t_975(30), 2.042);
    }
}
