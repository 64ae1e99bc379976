//! filebench's closing report (`stats.c`'s `stats_snap`): the "Per-Operation Breakdown" with
//! one line per flowop, newest-defined first as filebench lists them, and the "IO Summary"
//! line, in filebench's exact layout, so that its users read and diff it as their own; then
//! what filebench lacks: latency percentiles per flowop. Built from the stored measurement
//! only (counters `flowop.NAME.ops|bytes|order`, the histograms, the summary metrics).

use fsarena_core::run::ResultEntry;
use fsarena_core::Measurement;
use std::fmt::Write as _;

/// One flowop's figures.
struct Row<'a> {
    name: &'a str,
    ops: u64,
    bytes: u64,
    order: u64,
}

fn rows(m: &Measurement) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = m
        .counters
        .iter()
        .filter_map(|(k, &ops)| {
            let name = k.strip_prefix("flowop.")?.strip_suffix(".ops")?;
            let get = |what: &str| m.counters.get(&format!("flowop.{name}.{what}")).copied().unwrap_or(0);
            Some(Row { name, ops, bytes: get("bytes"), order: get("order") })
        })
        .collect();
    rows.sort_by(|a, b| b.order.cmp(&a.order).then(a.name.cmp(b.name)));
    rows
}

/// The kind's block in a result's text (registered as its `text` in the workload registry).
pub fn text(out: &mut String, _entry: &ResultEntry, m: &Measurement) {
    filebench_text(out, m);
}

/// Appends filebench's breakdown, IO Summary and the percentiles of `m` to `out`; nothing for
/// a measurement without flowop counters.
fn filebench_text(out: &mut String, m: &Measurement) {
    let rows = rows(m);
    if rows.is_empty() {
        return;
    }
    let metric = |name: &str| m.metric(name).map_or(0.0, |x| x.value);
    let secs = metric("elapsed") / 1e9;
    let per_s = |n: f64| if secs > 0.0 { n / secs } else { 0.0 };
    let _ = writeln!(out, "{secs:.3}: Per-Operation Breakdown");
    for r in &rows {
        let (mean, min, max) = m.latency(r.name).map_or((0.0, 0, 0), |h| (h.mean(), h.min(), h.max()));
        let _ = writeln!(
            out,
            "{:<20} {}ops {:8.0}ops/s {:5.1}mb/s {:8.3}ms/op [{:.3}ms - {:5.3}ms]",
            r.name,
            r.ops,
            per_s(r.ops as f64),
            per_s(r.bytes as f64 / 1_048_576.0),
            mean / 1e6,
            min as f64 / 1e6,
            max as f64 / 1e6
        );
    }
    let ops = m.counters.get("io.ops").copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "{secs:.3}: IO Summary: {ops:5} ops {:5.3} ops/s {:.0}/{:.0} rd/wr {:5.1}mb/s {:5.3}ms/op",
        metric("ops_per_s"),
        metric("rd_per_s"),
        metric("wr_per_s"),
        metric("mb_per_s"),
        metric("ms_per_op")
    );
    let _ = writeln!(out, "Latency percentiles (ms, fsarena):");
    let _ = writeln!(out, "{:<20} {:>10} {:>10} {:>10} {:>10}", "flowop", "p50", "p95", "p99", "p99.9");
    for r in rows.iter().filter(|r| r.ops > 0) {
        let Some(h) = m.latency(r.name) else { continue };
        let p = |q: f64| h.percentile(q) as f64 / 1e6;
        let _ = writeln!(out, "{:<20} {:>10.3} {:>10.3} {:>10.3} {:>10.3}", r.name, p(50.0), p(95.0), p(99.0), p(99.9));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Better, LatencyHistogram};

    #[test]
    fn breakdown_and_summary_in_filebenchs_layout() {
        let mut m = Measurement::default();
        for (i, (name, ops, bytes, ns)) in
            [("deletefile1", 1959u64, 0u64, 2_237_000u64), ("readfile4", 1957, 34_603_008, 32_000)]
                .into_iter()
                .enumerate()
        {
            m.count(&format!("flowop.{name}.ops"), ops);
            m.count(&format!("flowop.{name}.bytes"), bytes);
            m.count(&format!("flowop.{name}.order"), i as u64);
            m.add_latency(name, &LatencyHistogram::of((0..ops).map(|_| ns)));
        }
        m.count("io.ops", 25447);
        for (k, v) in [
            ("ops_per_s", 5086.188),
            ("rd_per_s", 782.0),
            ("wr_per_s", 783.0),
            ("mb_per_s", 18.0),
            ("ms_per_op", 0.389),
        ] {
            m.push(k, "x", Better::Higher, v);
        }
        m.push("elapsed", "ns", Better::Lower, 5e9);
        let mut out = String::new();
        filebench_text(&mut out, &m);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "5.000: Per-Operation Breakdown");
        assert!(
            lines[1].starts_with("readfile4            1957ops      391ops/s   6.6mb/s    0.032ms/op [0.032ms - "),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].starts_with("deletefile1          1959ops      392ops/s   0.0mb/s    2.237ms/op [2.237ms - "),
            "{}",
            lines[2]
        );
        assert_eq!(lines[3], "5.000: IO Summary: 25447 ops 5086.188 ops/s 782/783 rd/wr  18.0mb/s 0.389ms/op");
        assert!(lines[6].starts_with("readfile4") && lines[7].starts_with("deletefile1"), "{out}");
    }
}
