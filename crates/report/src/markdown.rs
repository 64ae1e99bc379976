//! The Markdown report: the environment, an A/B section when it covers several runs, a
//! comparison table per result (mean ± 95% CI, the significantly best in bold), and the same
//! SVG charts as the HTML report as files beside the `.md`, ready to paste into a README.

use crate::ab::{compare_runs, AbComparison};
use crate::charts::Chart;
use crate::html::utc;
use crate::model::{Group, Model};
use crate::{escape, ExportError, Exporter, RunReport};
use std::fmt::Write as _;

/// The Markdown report as an [`Exporter`] of its text. With `charts`, the text links chart
/// files that [`markdown_report`] returns beside it; without, it has the tables only (for
/// stdout, where there is nowhere to put the files).
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown {
    /// Link the chart files.
    pub charts: bool,
}

impl Exporter for Markdown {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        Ok(render(runs, self.charts).0.into_bytes())
    }
}

/// The Markdown text, and the charts it references as `(file name, SVG document)` pairs for the
/// caller to write into the directory of the `.md` file (the text links them by relative path).
pub fn markdown_report(runs: &[RunReport]) -> (String, Vec<(String, String)>) {
    render(runs, true)
}

/// The text, and the chart files when `charts`.
fn render(runs: &[RunReport], charts: bool) -> (String, Vec<(String, String)>) {
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
    // A study's report (one run): its figures in the study's order, then the Findings.
    if let [run] = runs {
        if let Some((experiment, findings)) = crate::findings::of_run(run) {
            let drawn = crate::figures::of_run(&experiment, run, &model);
            crate::figures_markup::markdown(&mut out, charts.then_some(&mut files), &drawn, &findings);
        }
    }
    for run in runs {
        if let Some((experiment, findings)) = crate::findings::of_run(run) {
            out.push_str(&crate::findings::markdown(&findings, &experiment));
        }
    }
    environment(&mut out, runs);
    targets(&mut out, &model);
    for b in runs.iter().skip(1) {
        if let Some(a) = runs.first() {
            ab_section(&mut out, &compare_runs(a, b));
        }
    }
    out.push_str(&crate::verdicts_markup::markdown(runs));
    let matrices = crate::matrix::matrices(runs);
    if !matrices.is_empty() {
        out.push_str("\n## Clients × processes\n");
        for m in &matrices {
            let _ = writeln!(out, "\n### {}\n\n{}.\n", escape::markdown(&m.title), m.note());
            out.push_str(&m.markdown(escape::markdown));
        }
    }
    if !model.sweeps.is_empty() && charts {
        out.push_str("\n## Sweeps\n");
        for sweep in &model.sweeps {
            let _ = writeln!(out, "\n### {}\n", escape::markdown(&sweep.title()));
            images(&mut out, &mut files, &sweep.charts(&model));
        }
    }
    let common = crate::verdicts::common_without_verdicts(&model.common);
    if !common.is_empty() {
        let _ = writeln!(out, "\n## Results\n\nEvery result shares {}.", escape::markdown(&common.join("; ")));
    }
    // Verdict results are in their own sections above: case counts have no mean ± CI to show.
    for group in model.results.iter().filter(|g| !crate::verdicts::is_verdict_kind(g.kind)) {
        result_section(&mut out, charts.then_some(&mut files), &model, group);
    }
    (out, files)
}

/// The machine, one column per run.
fn environment(out: &mut String, runs: &[RunReport]) {
    if let Some(table) = crate::model::environment_table(runs) {
        out.push_str("\n## Environment\n\n");
        out.push_str(&table.markdown());
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

/// One result: the comparison table, then its charts (when there is somewhere to put them).
fn result_section(out: &mut String, files: Option<&mut Vec<(String, String)>>, model: &Model<'_>, group: &Group<'_>) {
    let _ = writeln!(
        out,
        "\n## {}{}\n",
        escape::markdown(&group.label()),
        if group.complete() { "" } else { " (incomplete)" }
    );
    if let Some((_, e)) = group.entries.first() {
        let _ = writeln!(out, "Workload: {}\n", escape::markdown(&e.workload_title()));
    }
    out.push_str(&group.table(model).markdown());
    out.push_str("\nMean ± half-width of the 95% confidence interval over the repetitions; **best** and _worst_ where the difference to every other target is significant (Welch's t-test, p < 0.05), (n.s.) where it is not; ↑ higher is better, ↓ lower is better.\n\n");
    if let Some(files) = files {
        images(out, files, &group.charts(model));
    }
}

/// Run B against run A: one row per metric of each matching result, then what one run lacks.
fn ab_section(out: &mut String, c: &AbComparison) {
    let _ = writeln!(out, "\n## A/B: {} → {}\n", escape::markdown(&c.a), escape::markdown(&c.b));
    if c.rows.is_empty() && c.verdicts.is_empty() {
        out.push_str("The runs share no result (same target, workload and part) to compare.\n");
    } else if !c.rows.is_empty() {
        out.push_str(&crate::ab::ab_table(&c.rows).markdown());
    }
    if !c.rows.is_empty() {
        let _ = writeln!(out, "\n{}", escape::markdown(crate::ab::AB_NOTE));
    }
    out.push_str(&crate::verdicts_markup::diff_markdown(&c.verdicts));
    for (side, names) in [(&c.a, &c.only_in_a), (&c.b, &c.only_in_b)] {
        if !names.is_empty() {
            let list: Vec<String> = names.iter().map(|n| escape::markdown(n)).collect();
            let _ = writeln!(out, "\nOnly in {} (not compared): {}", escape::markdown(side), list.join("; "));
        }
    }
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
