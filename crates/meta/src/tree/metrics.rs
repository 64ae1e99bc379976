//! The `tree` workload's figures: fs_mark's files/s, plus directories/s, bytes/s, deletions/s
//! and latencies, for one creation loop; the deletion is reported with the last loop.

use fsarena_core::{Better, Measurement};
use fsarena_workload::phase::PhaseTotal;

/// The p50 and p99 latency metrics of `t` (`create_lat_p50`, ...), and its histogram.
fn latencies(m: &mut Measurement, t: &PhaseTotal) {
    if t.ops > 0 {
        for (p, pct) in [("p50", 50.0), ("p99", 99.0)] {
            m.push(&format!("{}_lat_{p}", t.op), "ns", Better::Lower, t.hist.percentile(pct) as f64);
        }
    }
    m.add_latency(t.op, &t.hist);
}

/// files_created, dirs_created (the first loop's), write_bw, the creation latencies and how
/// full the filesystem was after the loop (`fs_used`, fs_mark's `FSUse%`, so that a filling
/// filesystem shows where it slows down); the counts as counters, not metrics.
pub(super) fn creation(m: &mut Measurement, mkdir: Option<&PhaseTotal>, create: &PhaseTotal, used: Option<f64>) {
    if let Some(rate) = create.rate(create.ops) {
        m.push("files_created", "files/s", Better::Higher, rate);
    }
    if let Some(rate) = mkdir.and_then(|t| t.rate(t.ops)) {
        m.push("dirs_created", "dirs/s", Better::Higher, rate);
    }
    if let Some(rate) = create.rate(create.bytes) {
        m.push("write_bw", "bytes/s", Better::Higher, rate);
    }
    latencies(m, create);
    if let Some(used) = used {
        m.push("fs_used", "%", Better::Lower, used);
    }
    m.count("files_created_items", create.ops);
    if let Some(mkdir) = mkdir {
        m.count("dirs_created_items", mkdir.ops);
        m.add_latency(mkdir.op, &mkdir.hist);
    }
}

/// files_deleted and the deletion latencies, over every loop's files.
pub(super) fn deletion(m: &mut Measurement, delete: &PhaseTotal) {
    if let Some(rate) = delete.rate(delete.ops) {
        m.push("files_deleted", "files/s", Better::Higher, rate);
    }
    latencies(m, delete);
    m.count("files_deleted_items", delete.ops);
}
