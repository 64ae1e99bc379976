//! Numbers in readable units for tables and chart axes: bytes/s as MiB/s or GiB/s, ns as µs or
//! ms, ops/s with k and M. Tables and charts share these so that a value reads the same in both.

/// How values of one unit near one magnitude are shown: divide by `divisor`, write the number,
/// then `prefix` (an SI prefix such as `k` or `M`, or nothing) and `unit` (with its leading
/// space, e.g. ` GiB/s`, ` ops/s`, `%`). Chart ticks leave out a `unit` that only names the
/// quantity (`ops/s`), since the axis title names it; a scaled unit (`GiB/s`, `µs`) stays.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scale {
    pub divisor: f64,
    pub prefix: &'static str,
    pub unit: String,
    pub unit_on_ticks: bool,
}

/// The largest prefix of `names` (each `base` times the previous) that keeps `magnitude` ≥ 1.
fn pick(magnitude: f64, base: f64, names: &[&'static str]) -> (f64, &'static str) {
    let mut divisor = 1.0;
    let mut i = 0;
    while magnitude >= divisor * base && i + 1 < names.len() {
        divisor *= base;
        i += 1;
    }
    (divisor, names[i])
}

/// The scale for values of `unit` around `magnitude`.
pub(crate) fn scale(unit: &str, magnitude: f64) -> Scale {
    let m = if magnitude.is_finite() { magnitude.abs() } else { 0.0 };
    let scaled =
        |(divisor, name): (f64, &str)| Scale { divisor, prefix: "", unit: format!(" {name}"), unit_on_ticks: true };
    match unit {
        "bytes/s" => scaled(pick(m, 1024.0, &["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "PiB/s"])),
        "bytes" => scaled(pick(m, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])),
        "ns" => scaled(pick(m, 1000.0, &["ns", "µs", "ms", "s"])),
        // Seconds below one are shown as ms or µs: the same as nanoseconds, scaled.
        "s" if m < 1.0 && m > 0.0 => {
            let ns = scale("ns", m * 1e9);
            Scale { divisor: ns.divisor / 1e9, ..ns }
        }
        "%" => Scale { divisor: 1.0, prefix: "", unit: "%".into(), unit_on_ticks: true },
        // ops/s, files/s, plain counts: an SI prefix on the number, the unit spelled out.
        other => {
            let (divisor, prefix) = pick(m, 1000.0, &["", "k", "M", "G", "T"]);
            let unit = if other.is_empty() { String::new() } else { format!(" {other}") };
            Scale { divisor, prefix, unit, unit_on_ticks: false }
        }
    }
}

/// Decimals that show `x` (already scaled) with three significant digits.
pub(crate) fn sig3_decimals(x: f64) -> usize {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    }
}

/// `v` in `unit`, three significant digits: `1.23 GiB/s`, `85.2 µs`, `254k ops/s`.
pub fn value(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = scale(unit, v);
    let x = v / s.divisor;
    let d = sig3_decimals(x);
    format!("{x:.d$}{}{}", s.prefix, s.unit)
}

/// A compact tick label: `v` in `unit` with trailing zeros dropped: `2 µs`, `1.5 GiB/s`, `250k`.
pub(crate) fn short(v: f64, unit: &str) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = scale(unit, v);
    let x = v / s.divisor;
    let text = format!("{x:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    let unit = if s.unit_on_ticks { s.unit.as_str() } else { "" };
    format!("{text}{}{unit}", s.prefix)
}

/// `mean ± half` in one unit chosen by the mean: `1.23 ± 0.04 GiB/s`; the mean alone when
/// there is no interval (a single repetition).
pub(crate) fn mean_ci(mean: f64, half: Option<f64>, unit: &str) -> String {
    if !mean.is_finite() {
        return "–".into();
    }
    let s = scale(unit, mean);
    let x = mean / s.divisor;
    let mut d = sig3_decimals(x);
    match half.filter(|h| h.is_finite() && *h > 0.0) {
        None => format!("{x:.d$}{}{}", s.prefix, s.unit),
        Some(h) => {
            let h = h / s.divisor;
            // Show at least one significant digit of the interval, up to four decimals.
            while d < 4 && h < 0.5 * 10f64.powi(-(d as i32)) {
                d += 1;
            }
            if s.prefix.is_empty() {
                format!("{x:.d$} ± {h:.d$}{}", s.unit)
            } else {
                format!("{x:.d$}{p} ± {h:.d$}{p}{}", s.unit, p = s.prefix)
            }
        }
    }
}

/// Words for an axis: what a value of `unit` measures.
pub(crate) fn quantity(unit: &str) -> String {
    match unit {
        "bytes/s" => "bandwidth".into(),
        "bytes" => "size".into(),
        "ns" => "latency".into(),
        "s" => "time".into(),
        "ops/s" => "operations per second".into(),
        "%" => "percent".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_use_readable_units() {
        assert_eq!(value(334_200_995.0, "bytes/s"), "319 MiB/s");
        assert_eq!(value(1.5 * 1024.0 * 1024.0 * 1024.0, "bytes/s"), "1.50 GiB/s");
        assert_eq!(value(85_200.0, "ns"), "85.2 µs");
        assert_eq!(value(2_500_000.0, "ns"), "2.50 ms");
        assert_eq!(value(254_000.0, "ops/s"), "254k ops/s");
        assert_eq!(value(1_230_000.0, "ops/s"), "1.23M ops/s");
        assert_eq!(value(12.345, "%"), "12.3%");
        assert_eq!(value(0.002, "s"), "2.00 ms");
        assert_eq!(value(f64::NAN, "ns"), "–");
    }

    #[test]
    fn ticks_and_intervals() {
        assert_eq!(short(0.0, "ns"), "0");
        assert_eq!(short(2000.0, "ns"), "2 µs");
        assert_eq!(short(1.5 * 1024.0 * 1024.0 * 1024.0, "bytes/s"), "1.5 GiB/s");
        assert_eq!(short(250_000.0, "ops/s"), "250k");
        assert_eq!(mean_ci(200.0, Some(248.4), "ops/s"), "200 ± 248 ops/s");
        assert_eq!(mean_ci(1_230_000.0, Some(40_000.0), "ops/s"), "1.23M ± 0.04M ops/s");
        assert_eq!(mean_ci(100.0, Some(0.02), "%"), "100.00 ± 0.02%");
        assert_eq!(mean_ci(5.0, None, "ns"), "5.00 ns");
    }
}
