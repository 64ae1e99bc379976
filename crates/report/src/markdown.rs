//! The Markdown report: the environment, a comparison table per workload (mean ± 95% CI, best in
//! bold), and the same SVG charts as the HTML report as files beside the `.md`, ready to paste
//! into a README.

use crate::charts::Chart;
use crate::html::utc;
use crate::model::{Mark, Model, Workload};
use crate::{escape, humanize, RunReport};
use std::fmt::Write as _;

/// The Markdown text, and the charts it references as `(file name, SVG document)` pairs for the
/// caller to write into the directory of the `.md` file (the text links them by relative path).
pub fn markdown_report(runs: &[RunReport]) -> (String, Vec<(String, String)>) {
    let model = Model::new(runs);
    let mut out = String::from("# fsarena report\n\n");
    let mut files: Vec<(String, String)> = Vec::new();
    out.push_str("| run | started | status | targets |\n|---|---|---|---|\n");
    for run in runs {
        let mut targets: Vec<&str> = Vec::new();
        for e in &run.results {
            if !targets.contains(&e.target_label.as_str()) {
                targets.push(&e.target_label);
            }
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            escape::markdown(&run.id_and_name()),
            utc(run.started_unix_ms),
            if run.complete { "complete" } else { "**incomplete**" },
            escape::markdown(&targets.join(", "))
        );
    }
    environment(&mut out, runs);
    targets(&mut out, &model);
    if !model.sweeps.is_empty() {
        out.push_str("\n## Sweeps\n");
    }
    for sweep in &model.sweeps {
        let _ = writeln!(out, "\n### {}\n", escape::markdown(&sweep.title()));
        images(&mut out, &mut files, &sweep.charts(&model));
    }
    for workload in &model.workloads {
        workload_section(&mut out, &mut files, &model, workload);
    }
    (out, files)
}

/// The machine, one column per run.
fn environment(out: &mut String, runs: &[RunReport]) {
    let keys = crate::model::environment_keys(runs);
    if keys.is_empty() {
        return;
    }
    out.push_str("\n## Environment\n\n|  |");
    for run in runs {
        let _ = write!(out, " {} |", if runs.len() > 1 { escape::markdown(run.handle()) } else { "value".into() });
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(runs.len()));
    out.push('\n');
    for key in keys {
        let _ = write!(out, "| {} |", escape::markdown(key));
        for run in runs {
            let v = run.environment.iter().find(|(k, _)| k == key).map_or("–", |(_, v)| v.as_str());
            let _ = write!(out, " {} |", escape::markdown(v));
        }
        out.push('\n');
    }
}

/// One row per series: kind, options, and how the target was made and mounted.
fn targets(out: &mut String, model: &Model<'_>) {
    if model.series.is_empty() {
        return;
    }
    out.push_str("\n## Targets\n\n| target | kind | options and facts |\n|---|---|---|\n");
    for series in &model.series {
        let crate::model::TargetFacts { kind, options, info } = model.target_facts(series);
        let facts: Vec<String> = options
            .iter()
            .map(|(k, v)| format!("option {}: {}", escape::markdown(k), escape::markdown(v)))
            .chain(info.iter().map(|(k, v)| format!("{}: {}", escape::markdown(k), escape::markdown(v))))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            escape::markdown(&series.label),
            escape::markdown(kind),
            if facts.is_empty() { "–".to_string() } else { facts.join("<br>") }
        );
    }
}

/// One workload: the comparison table, then its charts.
fn workload_section(out: &mut String, files: &mut Vec<(String, String)>, model: &Model<'_>, workload: &Workload<'_>) {
    let _ = writeln!(
        out,
        "\n## {}{}\n",
        escape::markdown(&workload.title),
        if workload.complete() { "" } else { " (incomplete)" }
    );
    out.push_str("| metric |");
    for (s, _) in &workload.entries {
        let _ = write!(out, " {} |", escape::markdown(model.label(*s)));
    }
    out.push_str("\n|:---|");
    out.push_str(&"---:|".repeat(workload.entries.len()));
    out.push('\n');
    for row in workload.rows() {
        let arrow = if row.metric.better == fsarena_core::Better::Higher { "↑" } else { "↓" };
        let _ = write!(out, "| {} {arrow} |", escape::markdown(row.metric.name));
        for cell in &row.cells {
            match cell {
                None => out.push_str(" – |"),
                Some(c) => {
                    let text = escape::markdown(&humanize::mean_ci(c.summary.mean, c.half_width(), row.metric.unit));
                    if c.mark == Mark::Best {
                        let _ = write!(out, " **{text}** |");
                    } else {
                        let _ = write!(out, " {text} |");
                    }
                }
            }
        }
        out.push('\n');
    }
    out.push_str("\nMean ± half-width of the 95% confidence interval over the repetitions; best in **bold**; ↑ higher is better, ↓ lower is better.\n\n");
    images(out, files, &workload.charts(model));
}

/// Adds each chart as a file and references it from the text.
fn images(out: &mut String, files: &mut Vec<(String, String)>, charts: &[Chart]) {
    for chart in charts {
        let name = format!("chart-{:02}-{}.svg", files.len() + 1, slug(chart.title()));
        let _ = writeln!(out, "![{}]({name})", escape::markdown(chart.title()));
        files.push((name, format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n", chart.render())));
    }
}

/// A file-name-safe form of `text`: lowercase ASCII letters and digits joined by single dashes,
/// at most 60 characters (so no path separator, dot or user markup reaches the file system).
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out: String = out.chars().take(60).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("chart");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug("read_iops by numjobs · io:rw=randread,bs=4k"), "read-iops-by-numjobs-io-rw-randread-bs-4k");
        assert_eq!(slug("../<script>alert(1)</script>"), "script-alert-1-script");
        assert_eq!(slug("··"), "chart");
    }
}
