//! fio's normal-output lines that more than one surface writes: the latency line
//! (`display_lat`), the percentile block (`show_clat_percentiles`) and fio's number format
//! (`num2str`). The terminal report writes its job blocks with them, and so do the kinds'
//! own text blocks (io's "All clients"), which cannot reach the report crate.

use crate::LatencySummary;
use std::fmt::Write as _;

/// fio's `display_lat` line and `show_clat_percentiles` block for one latency summary.
pub fn latency_lines(out: &mut String, name: &str, l: &LatencySummary) {
    latency_line(out, name, l);
    percentile_lines(out, name, &l.percentiles);
}

/// fio's `display_lat` line (none for a summary of nothing, as fio's `calc_lat`).
pub fn latency_line(out: &mut String, name: &str, l: &LatencySummary) {
    if l.samples == 0 {
        return;
    }
    // fio's nsec_to_msec / nsec_to_usec: scale down only when min, max and the spread are all
    // large, so that small numbers keep their digits.
    let (unit, div) = if l.min > 2_000_000 && l.max > 99_999_999 && l.stddev > 1_000_000.0 {
        ("msec", 1_000_000)
    } else if l.min > 2000 && l.max > 99_999 && l.stddev > 1000.0 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    let _ = writeln!(
        out,
        "    {name} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        num2str(l.min / div, 6),
        num2str(l.max / div, 6),
        l.mean / div as f64,
        l.stddev / div as f64
    );
}

/// fio's `show_clat_percentiles`: one unit for the whole list, chosen from its smallest and
/// largest value, and as many entries per line as fit in 80 columns (4 for the defaults).
pub fn percentile_lines(out: &mut String, name: &str, percentiles: &[(f64, u64)]) {
    let mut list = percentiles.to_vec();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(minv), Some(maxv)) = (list.iter().map(|p| p.1).min(), list.iter().map(|p| p.1).max()) else {
        return;
    };
    let (unit, steps, div) = if minv > 2_000_000 && maxv > 99_999_999 {
        ("msec", 2, 1_000_000)
    } else if minv > 2000 && maxv > 99_999 {
        ("usec", 1, 1000)
    } else {
        ("nsec", 0, 1)
    };
    // fio's percentile_precision is that of the list; 2 covers the default 99.95 and 99.99.
    let precision = list.iter().map(|p| decimals(p.0)).max().unwrap_or(2).max(2);
    let time_width = digits(maxv / div).max(5);
    let per_line = ((80 - 7) / (precision + 10 + time_width)).max(1);
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    for (j, &(p, value)) in list.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        // fio rounds up at each step down: (v + 999) / 1000.
        let scaled = (0..steps).fold(value, |v, _| v.div_ceil(1000));
        let last = j + 1 == list.len();
        let _ = write!(
            out,
            " {p:w$.precision$}th=[{scaled:time_width$}]{}",
            if last { '\n' } else { ',' },
            w = precision + 3
        );
        if !last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// Decimal places needed to print `p` exactly (up to 6, as fio's `%f`).
fn decimals(p: f64) -> usize {
    (0..6).find(|&d| (p * 10f64.powi(d as i32)).fract().abs() < 1e-9).unwrap_or(6)
}

/// Number of decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// fio's `num2str(n, maxlen, 1, 0, N2S_NONE)`: `n` as is if it has at most `maxlen` digits,
/// else divided by 1000 until it fits, with a k/M/G/... suffix and the decimals that still
/// fit (`21700093` -> `21700k`, `1234567` -> `1234.6k`).
pub fn num2str(n: u64, maxlen: usize) -> String {
    const SUFFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let mut whole = n;
    let mut power = 0;
    while digits(whole) > maxlen && power + 1 < SUFFIXES.len() {
        whole /= 1000;
        power += 1;
    }
    if power == 0 {
        return n.to_string();
    }
    let value = n as f64 / 1000f64.powi(power as i32);
    // The decimal point counts towards maxlen.
    let room = maxlen.saturating_sub(digits(whole));
    let places = if room <= 1 { 0 } else { (room - 1).min(3) };
    format!("{value:.places$}{}", SUFFIXES[power])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formatting_follows_fio() {
        assert_eq!(num2str(21_700_093, 6), "21700k");
        assert_eq!(num2str(999_999, 6), "999999");
        assert_eq!(num2str(1_234_567, 6), "1234.6k");
        assert_eq!(num2str(12_345_678_901, 6), "12346M");
        assert_eq!(decimals(99.99), 2);
        assert_eq!(decimals(99.999), 3);
        assert_eq!(decimals(50.0), 0);
        assert_eq!(digits(0), 1);
        assert_eq!(digits(99_999), 5);
    }
}
