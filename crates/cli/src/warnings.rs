//! Warnings for people: each names the cause and the fix.

use fsarena_core::run::ResultEntry;
use fsarena_core::Better;

/// Coefficient of variation above which repetitions are called unstable.
const UNSTABLE_CV: f64 = 0.10;

/// One warning per entry whose throughput or mean latency varies by more than 10% across its
/// measured repetitions.
pub fn unstable(entry: &ResultEntry) -> Vec<String> {
    let Some(first) = entry.measurements.first() else { return Vec::new() };
    if entry.measurements.len() < 2 {
        return Vec::new();
    }
    let mut noisy = Vec::new();
    for metric in first.metrics.iter().filter(|m| m.better == Better::Higher || m.name.ends_with("_lat_mean")) {
        let values: Vec<f64> =
            entry.measurements.iter().filter_map(|m| m.metric(&metric.name)).map(|m| m.value).collect();
        if let Some(s) = fsarena_stats::summarize(&values) {
            if s.cv > UNSTABLE_CV {
                noisy.push(format!("{} CV {:.0}%", metric.name, s.cv * 100.0));
            }
        }
    }
    if noisy.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "unstable: {} on {} across {} repetitions ({}); add --repeat, lengthen the job (runtime=), or check for background load",
        entry.workload_title(),
        entry.target_label,
        entry.measurements.len(),
        noisy.join(", ")
    )]
}
