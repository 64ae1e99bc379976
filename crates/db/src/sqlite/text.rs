//! A `sqlite` result's closing block: which SQLite ran, what reached the table, and one line
//! per operation (count, rate, mean and p99 latency), so a reader sees at once that every
//! insert landed and how the writers and readers shared the time. Built from the measurement's
//! counters (`sqlite_version`, `rows_in_table`, `insert.ops`, `insert.rows`, `point.ops`,
//! `range.ops`, `range.rows`, `prefill.rows`), its `elapsed` metric and its latency
//! histograms alone, so it is the same for a stored run.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// SQLite's version number (3045001) as it writes it (3.45.1).
fn version(n: u64) -> String {
    format!("{}.{}.{}", n / 1_000_000, n / 1000 % 1000, n % 1000)
}

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    sqlite_summary(out, m);
}

/// Appends the block for `m`; nothing when `m` holds no SQLite counters (an older result).
fn sqlite_summary(out: &mut String, m: &Measurement) {
    let counter = |name: &str| m.counters.get(name).copied();
    let (Some(v), Some(rows)) = (counter("sqlite_version"), counter("rows_in_table")) else { return };
    let elapsed = m.metric("elapsed").map_or(0.0, |e| e.value / 1e9);
    out.push('\n');
    let prefill = counter("prefill.rows").unwrap_or(0);
    let _ = write!(out, "SQLite {} (bundled): {rows} rows in the table at the end", version(v));
    if prefill > 0 {
        let _ = write!(out, " ({prefill} inserted untimed before)");
    }
    let _ = writeln!(out, ", {elapsed:.3} s timed");
    let _ = writeln!(out, "  {:<7} {:>10} {:>12} {:>12} {:>12}", "op", "count", "per second", "mean ms", "p99 ms");
    for op in ["insert", "point", "range"] {
        let Some(h) = m.latency(op).filter(|h| !h.is_empty()) else { continue };
        let per_s = if elapsed > 0.0 { h.len() as f64 / elapsed } else { 0.0 };
        let _ = write!(
            out,
            "  {op:<7} {:>10} {per_s:>12.1} {:>12.3} {:>12.3}",
            h.len(),
            h.mean() / 1e6,
            h.percentile(99.0) as f64 / 1e6
        );
        match op {
            "insert" => match counter("insert.rows") {
                // Mixed mode: an insert is a transaction of several rows.
                Some(r) if r != h.len() => {
                    let _ = write!(out, "  (transactions; {r} rows)");
                }
                _ => {}
            },
            "range" => {
                let _ = write!(out, "  ({} rows read)", counter("range.rows").unwrap_or(0));
            }
            _ => {}
        }
        out.push('\n');
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Better, LatencyHistogram};

    #[test]
    fn the_block_says_version_rows_and_ops() {
        let mut m = Measurement::default();
        m.push("elapsed", "ns", Better::Lower, 2e9);
        m.count("sqlite_version", 3_046_001);
        m.count("rows_in_table", 1500);
        m.count("prefill.rows", 1000);
        m.count("insert.rows", 500);
        m.count("range.rows", 40);
        m.add_latency("insert", &LatencyHistogram::of([1_000_000; 5]));
        m.add_latency("range", &LatencyHistogram::of([2000; 4]));
        let mut out = String::new();
        sqlite_summary(&mut out, &m);
        assert!(out.contains("SQLite 3.46.1 (bundled): 1500 rows in the table at the end (1000 inserted untimed before), 2.000 s timed"), "{out}");
        assert!(out.contains("  insert           5          2.5"), "{out}");
        assert!(out.contains("(transactions; 500 rows)") && out.contains("(40 rows read)"), "{out}");
        assert!(!out.contains("point"), "{out}");
        let mut empty = String::new();
        sqlite_summary(&mut empty, &Measurement::default());
        assert!(empty.is_empty());
    }
}
