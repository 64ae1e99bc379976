//! dbench's closing report, in dbench 4's layout: the per-operation table (count, mean and
//! maximum latency in ms) and the `Throughput ... MB/sec` line, so that a dbench user reads
//! (and a script that parses dbench's output parses) it unchanged. Built from the stored
//! measurement alone: the latency histograms named by dbench's operations, the `throughput`
//! and `max_latency` metrics, and the `clients`, `sync_open` and `sync_dirs` counters.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// dbench's operations, in the order of its table.
const OPERATIONS: [&str; 17] = [
    "NTCreateX",
    "Close",
    "Rename",
    "Unlink",
    "Deltree",
    "Rmdir",
    "Mkdir",
    "Qpathinfo",
    "Qfileinfo",
    "Qfsinfo",
    "Sfileinfo",
    "Find",
    "WriteX",
    "ReadX",
    "LockX",
    "UnlockX",
    "Flush",
];

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    dbench_summary(out, m);
}

/// Appends dbench's table and throughput line for `m`; nothing when `m` has no operation.
fn dbench_summary(out: &mut String, m: &Measurement) {
    let rows: Vec<_> = OPERATIONS.iter().filter_map(|op| m.latency(op).map(|h| (*op, h))).collect();
    if rows.is_empty() {
        return;
    }
    out.push('\n');
    out.push_str(" Operation      Count    AvgLat    MaxLat\n");
    out.push_str(" ----------------------------------------\n");
    for (op, h) in rows {
        // dbench: `%-12s %7u %9.03f %9.03f`, latencies in ms.
        let _ = writeln!(out, " {op:<12} {:>7} {:>9.3} {:>9.3}", h.len(), h.mean() / 1e6, h.max() as f64 / 1e6);
    }
    out.push('\n');
    let counter = |name: &str| m.counters.get(name).copied().unwrap_or(0);
    let throughput = m.metric("throughput").map_or(0.0, |t| t.value / 1e6);
    let max_latency = m.metric("max_latency").map_or(0.0, |t| t.value / 1e6);
    let clients = counter("clients");
    let _ = writeln!(
        out,
        "Throughput {} MB/sec{}{}  {clients} clients  {clients} procs  max_latency={max_latency:.3} ms",
        c_general(throughput),
        if counter("sync_open") > 0 { " (sync open)" } else { "" },
        if counter("sync_dirs") > 0 { " (sync dirs)" } else { "" },
    );
}

/// `v` as C's `%g` prints it (dbench prints its throughput so): six significant digits,
/// trailing zeros dropped, exponent form below 1e-4 and from 1e6.
fn c_general(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    // Rounding to six digits first decides the exponent, as C does (999999.5 -> 1e+06).
    let sci = format!("{v:.5e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        trim(&format!("{v:.*}", (5 - exponent) as usize))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Better, LatencyHistogram};

    #[test]
    fn c_general_matches_printf() {
        for (v, want) in [
            (1234.5678, "1234.57"),
            (0.5, "0.5"),
            (100.0, "100"),
            (999999.5, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.00001234, "1.234e-05"),
            (0.0, "0"),
            (56.789012, "56.789"),
        ] {
            assert_eq!(c_general(v), want, "{v}");
        }
    }

    #[test]
    fn the_table_reads_like_dbench() {
        let mut m = Measurement::default();
        m.add_latency("WriteX", &LatencyHistogram::of([1_000_000, 3_000_000]));
        m.add_latency("NTCreateX", &LatencyHistogram::of([250_000]));
        m.push("throughput", "bytes/s", Better::Higher, 123_456_789.0);
        m.push("max_latency", "ns", Better::Lower, 3_500_000.0);
        m.count("clients", 2);
        m.count("sync_open", 1);
        let mut out = String::new();
        dbench_summary(&mut out, &m);
        let want = "
 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 NTCreateX          1     0.250     0.250
 WriteX             2     2.000     3.000

Throughput 123.457 MB/sec (sync open)  2 clients  2 procs  max_latency=3.500 ms
";
        assert_eq!(out, want);
        let mut empty = String::new();
        dbench_summary(&mut empty, &Measurement::default());
        assert!(empty.is_empty());
    }
}
