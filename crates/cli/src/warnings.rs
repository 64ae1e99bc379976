//! Warnings for people: collected during a run and printed once at the end, each naming the
//! cause and the fix. Unstable results fold into one line that names the worst few by target
//! and variant (never by the whole workload spec, which can run to hundreds of characters).

use fsarena_core::run::ResultEntry;
use fsarena_core::Better;

/// Coefficient of variation above which repetitions are called unstable.
const UNSTABLE_CV: f64 = 0.10;

/// How many unstable results the folded line names; the rest are counted.
const NAMED: usize = 3;

/// A workload named by its spec is cut to this many characters in a warning.
const SPEC_CHARS: usize = 40;

/// A result whose measured repetitions disagree: its noisiest metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Unstable {
    /// `target · variant`, e.g. `ext4 · numjobs=64`.
    pub name: String,
    /// The metric with the largest coefficient of variation, e.g. `write_bw`.
    pub metric: String,
    /// That coefficient (0.31 for 31%).
    pub cv: f64,
}

/// The noisiest throughput or mean-latency metric of `entry` when its coefficient of variation
/// across the measured repetitions exceeds 10%; `None` when it is stable or measured once.
pub fn unstable(entry: &ResultEntry) -> Option<Unstable> {
    let first = entry.measurements.first()?;
    if entry.measurements.len() < 2 {
        return None;
    }
    let mut worst: Option<(String, f64)> = None;
    for metric in first.metrics.iter().filter(|m| m.better == Better::Higher || m.name.ends_with("_lat_mean")) {
        let values: Vec<f64> =
            entry.measurements.iter().filter_map(|m| m.metric(&metric.name)).map(|m| m.value).collect();
        if let Some(s) = fsarena_stats::summarize(&values) {
            if s.cv > UNSTABLE_CV && worst.as_ref().is_none_or(|(_, cv)| s.cv > *cv) {
                worst = Some((metric.name.clone(), s.cv));
            }
        }
    }
    let (metric, cv) = worst?;
    Some(Unstable { name: short_name(entry), metric, cv })
}

/// `target · variant`; without a variant (nothing swept, one part) the workload's kind and
/// parameters, cut short.
fn short_name(entry: &ResultEntry) -> String {
    let variant = entry.variant();
    let what = if variant.is_empty() { entry.workload_title() } else { variant };
    let what = if what.chars().count() > SPEC_CHARS {
        format!("{}…", what.chars().take(SPEC_CHARS - 1).collect::<String>())
    } else {
        what
    };
    format!("{} · {what}", entry.target_label)
}

/// The warnings of one run, in the order first seen, each once.
#[derive(Debug, Default)]
pub struct Warnings {
    unstable: Vec<Unstable>,
    notes: Vec<String>,
}

impl Warnings {
    /// Records an unstable result.
    pub fn add_unstable(&mut self, u: Unstable) {
        self.unstable.push(u);
    }

    /// Records a warning given as text (`not root, so ...`); the same text twice is kept once.
    pub fn note(&mut self, text: &str) {
        let text = text.trim();
        if !text.is_empty() && !self.notes.iter().any(|n| n == text) {
            self.notes.push(text.to_string());
        }
    }

    /// The lines to print, without the `fsarena: warning: ` prefix: the notes, then one line
    /// for all unstable results, the noisiest first.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = self.notes.clone();
        if !self.unstable.is_empty() {
            let mut worst: Vec<&Unstable> = self.unstable.iter().collect();
            worst.sort_by(|a, b| b.cv.total_cmp(&a.cv));
            let named: Vec<String> = worst
                .iter()
                .take(NAMED)
                .map(|u| format!("{} ({} CV {:.0}%)", u.name, u.metric, u.cv * 100.0))
                .collect();
            let more = match worst.len().saturating_sub(NAMED) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let count = worst.len();
            lines.push(format!(
                "unstable (CV > {:.0}%) in {count} result{}: {}{more}; add --repeat, lengthen the job (runtime=), or check for background load",
                UNSTABLE_CV * 100.0,
                if count == 1 { "" } else { "s" },
                named.join(", "),
            ));
        }
        lines
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use fsarena_core::{Measurement, Param};

    fn entry(label: &str, point: &[(&str, &str)], bw: &[f64]) -> ResultEntry {
        let measurements = bw
            .iter()
            .map(|&v| {
                let mut m = Measurement { complete: true, ..Measurement::default() };
                m.push("write_bw", "bytes/s", Better::Higher, v);
                m.push("write_lat_p99", "ns", Better::Lower, 1000.0 * v);
                m
            })
            .collect();
        ResultEntry {
            target_label: label.into(),
            target_kind: "ext4".into(),
            target_options: Vec::new(),
            target_info: Default::default(),
            workload_kind: "io".into(),
            workload_params: vec![("rw".into(), "randwrite".into()), ("filename".into(), "x".repeat(300))],
            point: point.iter().map(|(k, v)| Param { key: (*k).into(), given: (*v).into(), number: None }).collect(),
            part: None,
            measurements,
            wall_ms: None,
        }
    }

    #[test]
    fn an_unstable_result_is_named_by_target_and_variant_not_by_its_spec() {
        let u = unstable(&entry("ext4", &[("numjobs", "64")], &[100.0, 150.0, 60.0])).unwrap();
        assert_eq!((u.name.as_str(), u.metric.as_str()), ("ext4 · numjobs=64", "write_bw"));
        assert!((u.cv - 0.43).abs() < 0.01, "{}", u.cv);
        // No sweep point: the spec, cut short.
        let u = unstable(&entry("xfs", &[], &[100.0, 150.0])).unwrap();
        assert!(u.name.starts_with("xfs · io:rw=randwrite,filename=xxx") && u.name.ends_with('…'), "{}", u.name);
        assert!(u.name.chars().count() < 60, "{}", u.name);
        // Stable, or measured once: nothing. p99 is lower-is-better and not a mean: not judged.
        assert_eq!(unstable(&entry("ext4", &[], &[100.0, 101.0, 99.0])), None);
        assert_eq!(unstable(&entry("ext4", &[], &[100.0])), None);
    }

    #[test]
    fn unstable_results_fold_into_one_line_noisiest_first() {
        let mut w = Warnings::default();
        for (i, cv) in [0.12, 0.31, 0.5, 0.2, 0.15].iter().enumerate() {
            w.add_unstable(Unstable { name: format!("ext4 · numjobs={i}"), metric: "write_bw".into(), cv: *cv });
        }
        let lines = w.lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines[0],
            "unstable (CV > 10%) in 5 results: ext4 · numjobs=2 (write_bw CV 50%), ext4 · numjobs=1 (write_bw CV 31%), \
             ext4 · numjobs=3 (write_bw CV 20%) and 2 more; add --repeat, lengthen the job (runtime=), or check for \
             background load"
        );
        let mut one = Warnings::default();
        one.add_unstable(Unstable { name: "ext4 · io".into(), metric: "read_iops".into(), cv: 0.14 });
        assert!(one.lines()[0].starts_with("unstable (CV > 10%) in 1 result: ext4 · io (read_iops CV 14%); add"));
    }

    #[test]
    fn notes_are_kept_once_in_order_before_the_unstable_line() {
        let mut w = Warnings::default();
        assert!(w.lines().is_empty());
        w.note("not root, so the page cache is not dropped");
        w.add_unstable(Unstable { name: "a · b".into(), metric: "m".into(), cv: 0.2 });
        w.note("cannot write report.html: read-only");
        w.note(" not root, so the page cache is not dropped\n");
        let lines = w.lines();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "not root, so the page cache is not dropped");
        assert_eq!(lines[1], "cannot write report.html: read-only");
        assert!(lines[2].starts_with("unstable"));
    }
}
