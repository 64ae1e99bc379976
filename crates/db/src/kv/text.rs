//! db_bench's report of one `kv` benchmark: its summary line
//! (`fillseq      :       2.345 micros/op 426439 ops/sec 0.047 seconds 20000 operations;   47.2 MB/s`)
//! and, for the operation's latency, the block db_bench prints with `--histogram=1`, so a
//! db_bench user (and a script that parses its output) reads it unchanged. Built from the
//! stored measurement alone: the part's name, the `micros_per_op`, `ops_per_s`, `mb_per_s`
//! and `elapsed` metrics, the `ops`, `keys_read` and `keys_found` counters and the latency
//! histogram of db_bench's operation.

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// db_bench's operation types, the names of the latency histograms.
const OPERATIONS: [&str; 4] = ["write", "read", "seek", "delete"];

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, entry: &ResultEntry, m: &Measurement) {
    kv_summary(out, entry, m);
}

/// Appends db_bench's summary line and latency block for the benchmark `entry` covers.
fn kv_summary(out: &mut String, entry: &ResultEntry, m: &Measurement) {
    let Some(part) = entry.part.as_deref() else { return };
    // A benchmark named twice in the list is `readrandom.2`: db_bench prints its name.
    let name = match part.rsplit_once('.') {
        Some((base, n)) if n.chars().all(|c| c.is_ascii_digit()) => base,
        _ => part,
    };
    let metric = |k: &str| m.metric(k).map(|x| x.value);
    let (Some(micros), Some(rate), Some(elapsed)) = (metric("micros_per_op"), metric("ops_per_s"), metric("elapsed"))
    else {
        return;
    };
    let counter = |k: &str| m.counters.get(k).copied().unwrap_or(0);
    let mut extra = metric("mb_per_s").map(|mb| format!("{mb:6.1} MB/s")).unwrap_or_default();
    if matches!(name, "readrandom" | "readwhilewriting" | "seekrandom") {
        if !extra.is_empty() {
            extra.push(' ');
        }
        let _ = write!(extra, "({} of {} found)", counter("keys_found"), counter("keys_read"));
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{name:<12} : {micros:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{extra}",
        rate as i64,
        elapsed / 1e9,
        counter("ops").max(1),
        if extra.is_empty() { "" } else { " " },
    );
    for op in OPERATIONS {
        let Some(h) = m.latency(op) else { continue };
        let us = |ns: f64| ns / 1e3;
        let p = |q: f64| us(h.percentile(q) as f64);
        let _ = writeln!(out, "Microseconds per {op}:");
        let _ = writeln!(out, "Count: {} Average: {:.4}  StdDev: {:.2}", h.len(), us(h.mean()), us(h.stddev()));
        let _ = writeln!(out, "Min: {:.0}  Median: {:.4}  Max: {:.0}", us(h.min() as f64), p(50.0), us(h.max() as f64));
        let _ = writeln!(
            out,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            p(50.0),
            p(75.0),
            p(99.0),
            p(99.9),
            p(99.99)
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Better, LatencyHistogram};

    fn entry(part: &str, m: Measurement) -> ResultEntry {
        ResultEntry { part: Some(part.into()), measurements: vec![m], ..ResultEntry::default() }
    }

    #[test]
    fn lines_read_as_db_bench_prints_them() {
        let mut m = Measurement { complete: true, ..Measurement::default() };
        m.push("ops_per_s", "ops/s", Better::Higher, 426_439.7);
        m.push("micros_per_op", "µs", Better::Lower, 2.345_01);
        m.push("mb_per_s", "MB/s", Better::Higher, 47.23);
        m.push("elapsed", "ns", Better::Lower, 46_900_000.0);
        m.count("ops", 20000);
        m.count("keys_read", 20000);
        m.count("keys_found", 19000);
        m.add_latency("read", &LatencyHistogram::of([1000, 2000, 3000]));
        let mut out = String::new();
        kv_summary(&mut out, &entry("readrandom.2", m.clone()), &m);
        let line = out.lines().nth(1).unwrap();
        assert_eq!(
            line,
            "readrandom   :       2.345 micros/op 426439 ops/sec 0.047 seconds 20000 operations;   47.2 MB/s (19000 of 20000 found)"
        );
        assert!(out.contains("Microseconds per read:\nCount: 3 Average: 2.0000"), "{out}");
        let mut d = m.clone();
        d.metrics.retain(|x| x.name != "mb_per_s");
        let mut out = String::new();
        kv_summary(&mut out, &entry("deleterandom", d.clone()), &d);
        assert!(
            out.contains("deleterandom :       2.345 micros/op 426439 ops/sec 0.047 seconds 20000 operations;\n"),
            "{out}"
        );
    }
}
