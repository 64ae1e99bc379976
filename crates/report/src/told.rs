//! How every surface words the one comparison (`fsarena_stats::ratio`): Findings, the tables'
//! marks, `compare`, the A/B section and the claims all say a difference the same way, as a
//! factor in the metric's better direction with its interval ("xfs 1.31× faster than ext4
//! (95% CI 1.12–1.53, p=0.003)"), in the metric's own words (faster, shorter, fewer), never
//! as an arithmetic sign that could be false for a lower-is-better metric.

use fsarena_core::Better;
use fsarena_stats::{factor_text, p_text, Ratio, Reading, Untold, MAX_SPREAD, MIN_REPETITIONS};

/// The words for better and worse on a metric: `faster`/`slower` for rates, `shorter`/`longer`
/// for times, `fewer`/`more` for counted things, `smaller`/`larger` for sizes, else
/// `higher`/`lower` (or the reverse when lower is better).
pub fn words(unit: &str, better: Better) -> (&'static str, &'static str) {
    const TIMES: &[&str] = &["ns", "µs", "us", "ms", "s", "min", "h"];
    match better {
        Better::Higher if unit.ends_with("/s") => ("faster", "slower"),
        Better::Higher => ("higher", "lower"),
        Better::Lower if TIMES.contains(&unit) => ("shorter", "longer"),
        Better::Lower if matches!(unit, "B" | "bytes" | "KiB" | "MiB" | "GiB") => ("smaller", "larger"),
        Better::Lower if unit.is_empty() || unit == "%" => ("lower", "higher"),
        Better::Lower => ("fewer", "more"),
    }
}

/// `95% CI 1.12–1.53, p=0.003`, when the ratio was tested.
pub fn interval_text(r: &Ratio) -> Option<String> {
    match (r.ci95, r.p) {
        (Some((lo, hi)), Some(p)) => Some(format!("95% CI {}–{}, {}", factor_text(lo), factor_text(hi), p_text(p))),
        _ => None,
    }
}

/// `1.31× (95% CI 1.12–1.53, p=0.003)`: a ratio with its interval, whatever it says.
pub fn factor_clause(r: &Ratio) -> String {
    let value = factor_text(r.value);
    match interval_text(r) {
        Some(ci) => format!("{value}× ({ci})"),
        None => format!("{value}×"),
    }
}

/// Why no interval is told: `too few repetitions to tell (2 and 2; 3 needed)` or `too noisy
/// to tell (95% CI 0.71–62.9×, wider than 10×)`.
pub fn untold_text(r: &Ratio, why: Untold) -> String {
    match why {
        Untold::TooFew => {
            format!("too few repetitions to tell ({} and {}; {MIN_REPETITIONS} needed)", r.n.0, r.n.1)
        }
        Untold::TooWide => {
            let (lo, hi) = r.ci95.unwrap_or((f64::NAN, f64::NAN));
            format!(
                "too noisy to tell (95% CI {}–{}×, wider than {}×)",
                factor_text(lo),
                factor_text(hi),
                factor_text(MAX_SPREAD)
            )
        }
    }
}

/// What `b` against `a` says, in words: `b 1.31× faster than a (95% CI …)`, `no significant
/// difference (…)`, or why nothing can be told. `r` is b over a in the metric's raw unit.
pub fn sentence(b: &str, a: &str, r: &Ratio, unit: &str, better: Better) -> String {
    let (good, _) = words(unit, better);
    let o = r.oriented(better);
    let ci = |r: &Ratio| interval_text(r).unwrap_or_default();
    match r.reading(better) {
        Reading::Better => format!("{b} {}× {good} than {a} ({})", factor_text(o.value), ci(&o)),
        Reading::Worse => format!("{a} {}× {good} than {b} ({})", factor_text(1.0 / o.value), ci(&o.inverse())),
        Reading::NoSignificantDifference => {
            format!("no significant difference ({b} {}× {good}; {})", factor_text(o.value), ci(&o))
        }
        Reading::Untold(why) => untold_text(r, why),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_stats::ratio;

    #[test]
    fn a_lower_is_better_metric_reads_shorter_never_as_a_false_sign() {
        let r = ratio(&[8.1, 8.0, 8.2], &[5.96, 6.0, 5.9]).unwrap();
        let s = sentence("xfs", "ext4", &r, "s", Better::Lower);
        assert!(s.starts_with("xfs 1.36× shorter than ext4 (95% CI 1.3"), "{s}");
        let s = sentence("ext4", "xfs", &r.inverse(), "s", Better::Lower);
        assert!(s.starts_with("xfs 1.36× shorter than ext4 (95% CI"), "{s}");
        assert_eq!(words("ops/s", Better::Higher), ("faster", "slower"));
        assert_eq!(words("mismatches", Better::Lower), ("fewer", "more"));
    }

    #[test]
    fn what_cannot_be_told_is_not_printed_as_an_interval() {
        let r = ratio(&[1.0, 30.0], &[100.0, 110.0]).unwrap();
        let s = sentence("b", "a", &r, "ops/s", Better::Higher);
        assert_eq!(s, "too few repetitions to tell (2 and 2; 3 needed)");
        let r = ratio(&[1.0, 3.0, 9.0], &[10.0, 20.0, 40.0]).unwrap();
        assert!(sentence("b", "a", &r, "ops/s", Better::Higher).starts_with("too noisy to tell (95% CI 0.71–62.9×"));
    }
}
