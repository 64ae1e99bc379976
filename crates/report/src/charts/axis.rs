//! Chart axes: where a value lands (linear, logarithmic, or the percentile scale of latency
//! curves) and which ticks to label.

use crate::humanize;

/// How values map to positions.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Transform {
    Linear,
    Log,
    /// `-log10(1 - p/100)`: p50 → 0.3, p90 → 1, p99 → 2, p99.9 → 3; the tail gets room.
    Percentile,
}

/// The highest percentile the percentile scale distinguishes; p100 would be at infinity.
const PERCENTILE_CAP: f64 = 99.9999;

/// One axis: its range and its labelled ticks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    lo: f64,
    hi: f64,
    transform: Transform,
    /// (value, label) of each tick.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    /// From 0 to a round value at or above `max`, with four or five ticks in `unit`.
    pub(crate) fn linear(max: f64, unit: &str) -> Self {
        let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
        let scale = humanize::scale(unit, max);
        let scaled = max / scale.divisor;
        let step = nice_step(scaled / 4.0);
        let steps = (scaled / step - 1e-9).ceil().max(1.0) as usize;
        let decimals = step_decimals(step);
        let unit_text = if scale.unit_on_ticks { scale.unit.as_str() } else { "" };
        let ticks = (0..=steps)
            .map(|i| {
                let v = i as f64 * step;
                let label = if i == 0 { "0".to_string() } else { format!("{v:.decimals$}{}{unit_text}", scale.prefix) };
                (v * scale.divisor, label)
            })
            .collect();
        Self { lo: 0.0, hi: steps as f64 * step * scale.divisor, transform: Transform::Linear, ticks }
    }

    /// Whole decades around `min`..`max` (both > 0); 1-2-5 ticks when at most two decades.
    pub(crate) fn log(min: f64, max: f64, unit: &str) -> Self {
        let min = if min.is_finite() && min > 0.0 { min } else { 1.0 };
        let max = if max.is_finite() && max > min { max } else { min };
        let lo_exp = min.log10().floor() as i32;
        let mut hi_exp = max.log10().ceil() as i32;
        if hi_exp <= lo_exp {
            hi_exp = lo_exp + 1;
        }
        let mantissas: &[f64] = if hi_exp - lo_exp <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        let hi = 10f64.powi(hi_exp);
        let mut ticks = Vec::new();
        for e in lo_exp..=hi_exp {
            for m in mantissas {
                let v = m * 10f64.powi(e);
                if v <= hi * (1.0 + 1e-9) {
                    ticks.push((v, humanize::short(v, unit)));
                }
            }
        }
        Self { lo: 10f64.powi(lo_exp), hi, transform: Transform::Log, ticks }
    }

    /// Percentiles from 0 to at least p99 (at most [`PERCENTILE_CAP`]), ticks p50, p90, p99, ...
    pub(crate) fn percentile(max_percentile: f64) -> Self {
        let hi = max_percentile.clamp(99.0, PERCENTILE_CAP);
        let ticks = [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
            .iter()
            .filter(|&&p| p <= hi + 1e-9)
            // The origin stays unlabelled: p50 sits close to it.
            .map(|&p| (p, if p == 0.0 { String::new() } else { format!("p{p}") }))
            .collect();
        Self { lo: 0.0, hi, transform: Transform::Percentile, ticks }
    }

    /// The swept values themselves as ticks, each labelled as given (`4k`, `16`), on a
    /// logarithmic axis when `log` (values spanning decades: 1, 4, 16, 64) or else a linear
    /// one. A margin of a twentieth of the span on each side keeps the end markers inside.
    pub(crate) fn values(values: &[(f64, String)], log: bool) -> Self {
        let transform = if log { Transform::Log } else { Transform::Linear };
        let t = |x: f64| if log { x.max(f64::MIN_POSITIVE).log10() } else { x };
        let back = |x: f64| if log { 10f64.powf(x) } else { x };
        let lo = values.iter().map(|(v, _)| t(*v)).fold(f64::INFINITY, f64::min);
        let hi = values.iter().map(|(v, _)| t(*v)).fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let margin = if hi > lo { (hi - lo) / 20.0 } else { 1.0 };
        let ticks = values.to_vec();
        Self { lo: back(lo - margin), hi: back(hi + margin), transform, ticks }
    }

    /// Where `v` lands, from 0 (start of the axis) to 1 (end); clamped to the axis.
    pub(crate) fn fraction(&self, v: f64) -> f64 {
        let t = |x: f64| match self.transform {
            Transform::Linear => x,
            Transform::Log => x.max(f64::MIN_POSITIVE).log10(),
            Transform::Percentile => -(1.0 - x.clamp(0.0, PERCENTILE_CAP) / 100.0).log10(),
        };
        let span = t(self.hi) - t(self.lo);
        if !span.is_finite() || span <= 0.0 {
            return 0.0;
        }
        ((t(v) - t(self.lo)) / span).clamp(0.0, 1.0)
    }
}

/// A step of 1, 2, 2.5 or 5 times a power of ten, at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    let f = raw / power;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// Decimals needed to print multiples of `step` exactly (at most 4).
fn step_decimals(step: f64) -> usize {
    (0..4).find(|&d| ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() < 1e-6).unwrap_or(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn linear_ticks_are_round_and_humanised() {
        let a = Axis::linear(334_200_995.0, "bytes/s");
        assert_eq!(labels(&a), ["0", "100 MiB/s", "200 MiB/s", "300 MiB/s", "400 MiB/s"]);
        assert_eq!(a.fraction(0.0), 0.0);
        assert_eq!(a.fraction(400.0 * 1024.0 * 1024.0), 1.0);
        let a = Axis::linear(9.0, "%");
        assert_eq!(labels(&a), ["0", "2.5%", "5.0%", "7.5%", "10.0%"]);
        let a = Axis::linear(254_000.0, "ops/s");
        assert_eq!(labels(&a), ["0", "100k", "200k", "300k"]);
        assert_eq!(labels(&Axis::linear(0.0, "")), ["0", "0.25", "0.50", "0.75", "1.00"]);
    }

    #[test]
    fn log_ticks_cover_whole_decades() {
        let a = Axis::log(7_054.0, 21_700_093.0, "ns");
        assert_eq!(labels(&a), ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms"]);
        assert!((a.fraction(1e5) - 0.4).abs() < 1e-9);
        let a = Axis::log(3_000.0, 9_000.0, "ns");
        assert_eq!(labels(&a), ["1 µs", "2 µs", "5 µs", "10 µs"]);
    }

    #[test]
    fn percentile_scale_spreads_the_tail() {
        let a = Axis::percentile(99.99);
        assert_eq!(labels(&a), ["", "p50", "p90", "p99", "p99.9", "p99.99"]);
        assert!((a.fraction(90.0) - 0.25).abs() < 1e-9);
        assert!((a.fraction(99.0) - 0.5).abs() < 1e-9);
        assert_eq!(a.fraction(99.99), 1.0);
    }

    #[test]
    fn swept_values_are_ticks_on_a_log_axis() {
        let v: Vec<(f64, String)> = [1.0, 4.0, 16.0, 64.0].iter().map(|&x| (x, x.to_string())).collect();
        let a = Axis::values(&v, true);
        assert_eq!(labels(&a), ["1", "4", "16", "64"]);
        // Equal ratios, equal steps.
        let step = a.fraction(4.0) - a.fraction(1.0);
        assert!((a.fraction(16.0) - a.fraction(4.0) - step).abs() < 1e-9);
        assert!(a.fraction(1.0) > 0.0 && a.fraction(64.0) < 1.0);
        let a = Axis::values(&v, false);
        assert!((a.fraction(16.0) - a.fraction(4.0) - 4.0 * (a.fraction(4.0) - a.fraction(1.0))).abs() < 1e-9);
    }
}
