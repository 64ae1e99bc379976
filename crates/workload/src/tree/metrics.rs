//! The `tree` workload's figures: fs_mark's files/s, plus directories/s, bytes/s, deletions/s
//! and latencies, per pass and, with several loops, per loop.

use super::StepTotal;
use fsarena_core::{Better, Measurement};

/// What one pass (one file size) measured, step by step.
#[derive(Debug, Default)]
pub(super) struct Pass {
    /// Making the directories (loop 1).
    pub mkdir: Option<StepTotal>,
    /// Every creation loop, summed: counts and spans add up.
    pub create: Option<StepTotal>,
    /// Deleting every loop's files.
    pub delete: Option<StepTotal>,
    /// Removing the directories.
    pub rmdir: Option<StepTotal>,
}

impl Pass {
    /// The first error of any step, naming the path.
    pub fn error(&self) -> Option<String> {
        [&self.mkdir, &self.create, &self.delete, &self.rmdir].into_iter().flatten().find_map(|t| t.error.clone())
    }
}

/// `x` per second of `t`'s time; 0 when it took none.
fn rate(x: u64, t: &StepTotal) -> f64 {
    if t.ns > 0 {
        x as f64 * 1e9 / t.ns as f64
    } else {
        0.0
    }
}

/// files_created, dirs_created, write_bw, files_deleted, latencies and counts of one pass.
pub(super) fn push(m: &mut Measurement, pass: &Pass, suffix: &str) {
    let (Some(mkdir), Some(create)) = (&pass.mkdir, &pass.create) else {
        return;
    };
    let none = StepTotal::new();
    let delete = pass.delete.as_ref().unwrap_or(&none);
    let mut push =
        |name: &str, unit: &str, better: Better, value: f64| m.push(&format!("{name}{suffix}"), unit, better, value);
    if create.ops > 0 {
        push("files_created", "files/s", Better::Higher, rate(create.ops, create));
    }
    if mkdir.ops > 0 {
        push("dirs_created", "dirs/s", Better::Higher, rate(mkdir.ops, mkdir));
    }
    if create.ops > 0 {
        push("write_bw", "bytes/s", Better::Higher, rate(create.bytes, create));
    }
    if delete.ops > 0 {
        push("files_deleted", "files/s", Better::Higher, rate(delete.ops, delete));
    }
    for (name, t) in [("create", create), ("delete", delete)].into_iter().filter(|(_, t)| t.ops > 0) {
        for (p, pct) in [("p50", 50.0), ("p99", 99.0)] {
            push(&format!("{name}_lat_{p}"), "ns", Better::Lower, t.hist.percentile(pct) as f64);
        }
    }
    push("files_created_items", "items", Better::Higher, create.ops as f64);
    push("dirs_created_items", "items", Better::Higher, mkdir.ops as f64);
    if pass.delete.is_some() {
        push("files_deleted_items", "items", Better::Higher, delete.ops as f64);
    }
}

/// fs_mark's line for loop `n`: its files/s and how full the filesystem was after it
/// (`FSUse%`), so that a filling filesystem shows where it slows down.
pub(super) fn push_loop(m: &mut Measurement, n: u32, create: &StepTotal, used: Option<f64>, suffix: &str) {
    if create.ops > 0 {
        m.push(&format!("files_created_loop{n}{suffix}"), "files/s", Better::Higher, rate(create.ops, create));
    }
    if let Some(used) = used {
        m.push(&format!("fs_used_loop{n}{suffix}"), "%", Better::Lower, used);
    }
}
