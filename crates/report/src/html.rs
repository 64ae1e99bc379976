//! The HTML report: one self-contained file (styles inline, charts as inline SVG, no script,
//! no font, image or any other outside request) with the runs, the environment per target, an
//! A/B section when it covers several runs, the sweeps, and a comparison table per result with
//! the significantly best and worst highlighted, and the charts.

use crate::ab::{compare_runs, AbComparison};
use crate::charts::Chart;
use crate::model::{Group, Model};
use crate::{escape, ExportError, Exporter, RunReport};
use std::fmt::Write as _;

/// The HTML report as an [`Exporter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

impl Exporter for Html {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        Ok(html_report(runs).into_bytes())
    }
}

/// The report's styles: system fonts, a light theme, zebra tables.
const STYLE: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --page: #f6f8fa; --zebra: #f6f8fa;
  --best: #dafbe1; --best-fg: #116329; --worst: #ffebe9; --worst-fg: #a40e26; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--page); color: var(--fg); line-height: 1.5; font-size: 15px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif; }
header { background: #24292f; color: #fff; padding: 28px 0 24px; }
header .wrap, main { max-width: 1240px; margin: 0 auto; padding: 0 32px; }
header h1 { margin: 0; font-size: 26px; font-weight: 600; letter-spacing: -0.01em; }
header p { margin: 4px 0 0; color: #d1d9e0; }
main { padding-top: 24px; padding-bottom: 48px; }
section { background: #fff; border: 1px solid var(--border); border-radius: 8px; padding: 20px 24px; margin: 0 0 24px; }
h2 { margin: 0 0 12px; font-size: 20px; font-weight: 600; }
h3 { margin: 20px 0 8px; font-size: 16px; font-weight: 600; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
p.note { color: var(--muted); font-size: 13px; margin: 8px 0 0; }
code, pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
pre { background: var(--zebra); padding: 12px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 14px; }
th, td { padding: 6px 12px; border-bottom: 1px solid var(--border); text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid var(--border); background: #fff; min-width: 6em; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.num { text-align: right; white-space: nowrap; }
th.num { text-align: right; }
td.best { background: var(--best); color: var(--best-fg); font-weight: 600; }
td.worst { background: var(--worst); color: var(--worst-fg); }
td.differs { background: #fff8c5; }
td.better { color: var(--best-fg); font-weight: 600; }
td.worse { color: var(--worst-fg); font-weight: 600; }
td.inconclusive { color: var(--muted); font-style: italic; }
.ns { color: var(--muted); font-size: 12px; margin-left: 6px; }
p.common code { white-space: normal; }
.metric small { color: var(--muted); margin-left: 6px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; line-height: 20px; }
.badge.ok { background: var(--best); color: var(--best-fg); }
.badge.bad { background: #fff8c5; color: #7d4e00; }
.badge.worse { background: var(--worst); color: var(--worst-fg); }
.badge.muted { background: var(--zebra); color: var(--muted); border: 1px solid var(--border); }
.badge.kind { background: #ddf4ff; color: #0550ae; margin-left: 8px; vertical-align: middle; }
.targets { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 16px; }
.target { border: 1px solid var(--border); border-radius: 6px; padding: 12px 16px; }
.target h3 { margin: 0 0 8px; }
.target table { width: 100%; font-size: 13px; }
.target th { color: var(--muted); font-weight: 500; white-space: nowrap; width: 1%; }
.target td code { overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 16px; margin-top: 16px; }
.figure-charts { grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); }
figure { margin: 0; border: 1px solid var(--border); border-radius: 6px; overflow: hidden; background: #fff; }
svg.chart { display: block; width: 100%; height: auto; }
nav ol { margin: 0; padding-left: 20px; columns: 2; }
footer { color: var(--muted); font-size: 13px; text-align: center; padding: 0 0 32px; }
"#;

/// The whole report as one self-contained HTML document; several runs (e.g. before and after
/// a change) are compared side by side, each target of each run a series of its own.
pub fn html_report(runs: &[RunReport]) -> String {
    let model = Model::new(runs);
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    let subtitle = match runs {
        [] => "no runs".to_string(),
        [run] => format!("run {} · {}", run.id, utc(run.started_unix_ms)),
        _ => format!("{} runs compared: {}", runs.len(), ids.join(", ")),
    };
    let mut out = page_start(&format!("fsarena report · {}", ids.join(", ")), "fsarena report", &subtitle);
    runs_section(&mut out, runs);
    // A study's report (one run that recorded its experiment): its figures first, in the
    // study's order, then the Findings, then the rows with their detail folded.
    let experiment = match runs {
        [run] => crate::findings::of_run(run),
        _ => None,
    };
    let drawn = match (runs, &experiment) {
        ([run], Some((e, _))) => crate::figures::of_run(e, run, &model),
        _ => Vec::new(),
    };
    let fold = !drawn.is_empty();
    let figure_links: Vec<(&str, &str)> =
        drawn.iter().map(|d| (d.figure.id.as_str(), d.figure.caption.as_str())).collect();
    contents(&mut out, &model, &figure_links);
    match &experiment {
        Some((e, findings)) => {
            crate::figures_markup::html(&mut out, &drawn, findings, e);
            out.push_str(&crate::findings::html(findings, e));
        }
        None => {
            for (e, findings) in runs.iter().filter_map(crate::findings::of_run) {
                out.push_str(&crate::findings::html(&findings, &e));
            }
        }
    }
    environment_section(&mut out, runs);
    targets_section(&mut out, &model);
    for (i, b) in runs.iter().enumerate().skip(1) {
        if let Some(a) = runs.first() {
            ab_section(&mut out, &compare_runs(a, b), i);
        }
    }
    out.push_str(&crate::verdicts_markup::html(runs));
    for (i, m) in crate::matrix::matrices(runs).iter().enumerate() {
        let _ = writeln!(
            out,
            "<section id=\"matrix-{}\"><h2>{} · {}</h2><p class=\"note\">{}.</p>",
            i + 1,
            m.heading(),
            escape::html(&m.title),
            m.note()
        );
        out.push_str(&m.html());
        out.push_str("</section>\n");
    }
    let experiment = experiment.map(|(e, _)| e);
    let rows = experiment.iter().flat_map(|e| &e.rows);
    // A sweep sits under its row; sweeps of no row come before the results.
    let row_of_sweep: Vec<Option<&str>> = model
        .sweeps
        .iter()
        .map(|sweep| {
            rows.clone()
                .find(|r| sweep.entries.iter().any(|(_, _, e)| r.workloads.contains(&e.workload_title())))
                .map(|r| r.id.as_str())
        })
        .collect();
    for (i, sweep) in model.sweeps.iter().enumerate().filter(|(i, _)| row_of_sweep[*i].is_none()) {
        sweep_section(&mut out, &model, sweep, i + 1);
    }
    let common = crate::verdicts::common_without_verdicts(&model.common);
    if !common.is_empty() {
        out.push_str("<section id=\"common\"><h2>Results</h2><p class=\"common\">Every result shares ");
        let shared: Vec<String> = common.iter().map(|c| format!("<code>{}</code>", escape::html(c))).collect();
        let _ = writeln!(out, "{}; each result below is named by what differs.</p></section>", shared.join("; "));
    }
    // Verdict results are in their own sections above: case counts have no mean ± CI to show.
    let is_verdicts = |g: &Group<'_>| crate::verdicts::is_verdict_kind(g.kind);
    // A study's report: one heading per experiment row, its sweeps and results (tables and
    // charts) below it, folded when the study's figures lead the report; results of no row
    // follow.
    let mut shown = vec![false; model.results.len()];
    for row in rows {
        let of_row =
            |g: &Group<'_>| g.entries.first().is_some_and(|(_, e)| row.workloads.contains(&e.workload_title()));
        let mine: Vec<(usize, &Group<'_>)> =
            model.results.iter().enumerate().filter(|(_, g)| !is_verdicts(g) && of_row(g)).collect();
        let verdicts: Vec<&str> =
            model.results.iter().filter(|g| is_verdicts(g) && of_row(g)).map(|g| g.kind).collect();
        let skipped = experiment.iter().flat_map(|e| &e.skipped).find(|s| s.what == format!("row {}", row.id));
        let walls: Vec<u64> = runs
            .iter()
            .flat_map(|r| &r.results)
            .filter(|e| row.workloads.contains(&e.workload_title()))
            .filter_map(|e| e.wall_ms)
            .collect();
        let wall = (!walls.is_empty()).then(|| walls.iter().sum::<u64>());
        let counts = RowResults { results: mine.len(), verdicts };
        row_heading(&mut out, row, counts, wall, skipped.map(|s| s.reason.as_str()));
        let sweeps: Vec<usize> =
            (0..model.sweeps.len()).filter(|i| row_of_sweep[*i] == Some(row.id.as_str())).collect();
        if mine.is_empty() && sweeps.is_empty() {
            continue;
        }
        if fold {
            let _ = writeln!(
                out,
                "<details class=\"row-detail\"><summary>{}: per-result tables and charts ({} result(s))</summary>",
                escape::html(&row.title),
                mine.len()
            );
        }
        for i in sweeps {
            sweep_section(&mut out, &model, &model.sweeps[i], i + 1);
        }
        for (i, group) in mine {
            shown[i] = true;
            result_section(&mut out, &model, group, i + 1);
        }
        if fold {
            out.push_str("</details>\n");
        }
    }
    for (i, group) in model.results.iter().enumerate().filter(|(i, g)| !shown[*i] && !is_verdicts(g)) {
        result_section(&mut out, &model, group, i + 1);
    }
    page_end(&mut out);
    out
}

/// How many results a row has: with a mean each, and of verdict kinds (whose verdicts are in
/// the kind's section), by their kinds.
#[derive(Debug, Clone)]
struct RowResults<'a> {
    results: usize,
    verdicts: Vec<&'a str>,
}

/// A sweep's section: its line charts, one per headline rate.
fn sweep_section(out: &mut String, model: &Model<'_>, sweep: &crate::sweep::Sweep<'_>, number: usize) {
    let _ = writeln!(out, "<section id=\"sweep-{number}\"><h2>{}</h2>", escape::html(&sweep.title()));
    let _ = writeln!(
        out,
        "<p class=\"note\">The headline rates against <code>{}</code> = {}: mean ± 95% confidence interval over the repetitions, one line per target.</p>",
        escape::html(&sweep.key),
        escape::html(&sweep.values_text())
    );
    chart_grid(out, &sweep.charts(model));
    out.push_str("</section>\n");
}

/// An experiment row's heading: its title, the chart the study drew, and what was reduced.
fn row_heading(
    out: &mut String,
    row: &crate::experiment::Row,
    counts: RowResults<'_>,
    wall_ms: Option<u64>,
    skipped: Option<&str>,
) {
    let results = counts.results + counts.verdicts.len();
    let _ = write!(
        out,
        "<section id=\"row-{}\"><h2>{}</h2><p class=\"note\">",
        escape::html(&row.id),
        escape::html(&row.title)
    );
    let _ = write!(out, "row <code>{}</code> · {} result(s)", escape::html(&row.id), results);
    if let Some(ms) = wall_ms {
        let _ = write!(out, " · ran here in {}", fsarena_core::human_duration(std::time::Duration::from_millis(ms)));
    }
    if let Some(chart) = &row.chart {
        let _ = write!(out, " · the study's chart: {}", escape::html(chart));
    }
    if let Some(reduced) = &row.reduced {
        let _ = write!(out, " · reduced at this scale: {}", escape::html(reduced));
    }
    match skipped {
        Some(why) => {
            let _ = write!(out, " · <strong>not run here</strong>: {}", escape::html(why));
        }
        None if results == 0 => out.push_str(" · no result (the run stopped before it)"),
        None => {}
    }
    for (kind, words) in crate::verdict_kinds().filter(|(k, _)| counts.verdicts.contains(k)) {
        let _ =
            write!(out, " · its verdicts are in <a href=\"#{}\">{}</a>", escape::html(kind), escape::html(words.title));
    }
    out.push_str("</p></section>\n");
}

/// `2024-05-01 12:34:56 UTC` from Unix milliseconds.
pub(crate) fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (y, m, d) = crate::fio_json::civil_from_days(secs / 86_400);
    let s = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", s / 3600, s % 3600 / 60, s % 60)
}

/// The runs covered: id, start, complete or not, what ran.
fn runs_section(out: &mut String, runs: &[RunReport]) {
    out.push_str("<section id=\"runs\"><h2>Runs</h2><div class=\"table-wrap\"><table>\n");
    out.push_str("<thead><tr><th>run</th><th>started</th><th>status</th><th>targets</th><th class=\"num\">results</th><th class=\"num\">repetitions</th></tr></thead><tbody>\n");
    for run in runs {
        let mut targets: Vec<&str> = Vec::new();
        for e in &run.results {
            if !targets.contains(&e.target_label.as_str()) {
                targets.push(&e.target_label);
            }
        }
        let reps: Vec<usize> = run.results.iter().map(|e| e.measurements.len()).collect();
        let (lo, hi) = (reps.iter().min().copied().unwrap_or(0), reps.iter().max().copied().unwrap_or(0));
        let status = if run.complete {
            "<span class=\"badge ok\">complete</span>"
        } else {
            "<span class=\"badge bad\" title=\"the run stopped early: its figures cover only what ran\">incomplete</span>"
        };
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{status}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape::html(&run.id_and_name()),
            utc(run.started_unix_ms),
            escape::html(&targets.join(", ")),
            run.results.len(),
            if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") }
        );
    }
    out.push_str("</tbody></table></div>\n");
    for run in runs.iter().filter(|r| !r.plan.trim().is_empty()) {
        let _ = writeln!(
            out,
            "<details><summary>plan of run <code>{}</code></summary><pre>{}</pre></details>",
            escape::html(&run.id),
            escape::html(&run.plan)
        );
    }
    out.push_str("</section>\n");
}

/// Links to the study's figures (id, caption), the A/B sections, the sweeps and the results.
fn contents(out: &mut String, model: &Model<'_>, figures: &[(&str, &str)]) {
    let comparisons = model.runs.len().saturating_sub(1);
    if model.results.len() + model.sweeps.len() + comparisons + figures.len() < 2 {
        return;
    }
    out.push_str("<section><nav><h2>Contents</h2><ol>\n");
    for (id, caption) in figures {
        let _ = writeln!(out, "<li><a href=\"#figure-{}\">{}</a></li>", escape::html(id), escape::html(caption));
    }
    for (i, run) in model.runs.iter().enumerate().skip(1) {
        let a = model.runs.first().map_or("", |r| r.handle());
        let _ =
            writeln!(out, "<li><a href=\"#ab-{i}\">A/B: {} → {}</a></li>", escape::html(a), escape::html(run.handle()));
    }
    for (i, sweep) in model.sweeps.iter().enumerate() {
        let _ = writeln!(out, "<li><a href=\"#sweep-{}\">{}</a></li>", i + 1, escape::html(&sweep.title()));
    }
    for (kind, words) in crate::verdict_kinds().filter(|(k, _)| model.results.iter().any(|g| g.kind == *k)) {
        let _ = writeln!(out, "<li><a href=\"#{}\">{}</a></li>", escape::html(kind), escape::html(words.title));
    }
    for (i, g) in model.results.iter().enumerate().filter(|(_, g)| !crate::verdicts::is_verdict_kind(g.kind)) {
        let _ = writeln!(out, "<li><a href=\"#result-{}\">{}</a></li>", i + 1, escape::html(&g.label()));
    }
    out.push_str("</ol></nav></section>\n");
}

/// The machine: one column per run, values that differ from the first run highlighted.
fn environment_section(out: &mut String, runs: &[RunReport]) {
    let Some(table) = crate::model::environment_table(runs) else { return };
    out.push_str("<section id=\"environment\"><h2>Environment</h2>");
    out.push_str(table.html("").trim_end_matches('\n'));
    if runs.len() > 1 {
        out.push_str("<p class=\"note\">Highlighted: differs from the first run.</p>");
    }
    out.push_str("</section>\n");
}

/// Per series: the target's kind, options and how it was made and mounted.
fn targets_section(out: &mut String, model: &Model<'_>) {
    if model.series.is_empty() {
        return;
    }
    out.push_str("<section id=\"targets\"><h2>Targets</h2><div class=\"targets\">\n");
    for series in &model.series {
        let crate::model::TargetFacts { kind, options, info } = model.target_facts(series);
        let _ = write!(
            out,
            "<div class=\"target\"><h3>{}<span class=\"badge kind\">{}</span></h3><table><tbody>",
            escape::html(&series.label),
            escape::html(kind)
        );
        for (k, v) in options {
            let _ =
                write!(out, "<tr><th>option {}</th><td><code>{}</code></td></tr>", escape::html(k), escape::html(v));
        }
        for (k, v) in info {
            let _ = write!(out, "<tr><th>{}</th><td><code>{}</code></td></tr>", escape::html(k), escape::html(v));
        }
        if options.is_empty() && info.is_empty() {
            out.push_str("<tr><td>no facts recorded</td></tr>");
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</div></section>\n");
}

/// One result: its comparison table and its charts.
fn result_section(out: &mut String, model: &Model<'_>, group: &Group<'_>, number: usize) {
    let _ = write!(
        out,
        "<section id=\"result-{number}\"><h2>{}<span class=\"badge kind\">{}</span>",
        escape::html(&group.label()),
        escape::html(group.kind)
    );
    if !group.complete() {
        out.push_str(" <span class=\"badge bad\" title=\"a repetition stopped early\">incomplete</span>");
    }
    let spec = group.entries.first().map(|(_, e)| e.workload_title()).unwrap_or_default();
    let _ = write!(out, "</h2>\n<p class=\"note\"><code>{}</code></p>", escape::html(&spec));
    out.push('\n');
    out.push_str(&group.table(model).html("compare"));
    let reps: Vec<usize> = group.entries.iter().map(|(_, e)| e.measurements.len()).collect();
    let (lo, hi) = (reps.iter().min().copied().unwrap_or(0), reps.iter().max().copied().unwrap_or(0));
    let reps = if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") };
    let _ = write!(
        out,
        "<p class=\"note\">Mean ± half-width of the 95% confidence interval (Student's t) over {reps} repetitions; hover a value for each repetition. Green: best, red: worst, where the difference to every other target is significant (Welch's t-test, p &lt; 0.05); n.s.: not significant."
    );
    if group.swept {
        out.push_str(" Its charts are in the sweeps above.");
    }
    out.push_str("</p>\n");
    chart_grid(out, &group.charts(model));
    out.push_str("</section>\n");
}

/// Run B against run A (the first run of the report): one row per metric of each matching
/// result, and what only one run has.
fn ab_section(out: &mut String, c: &AbComparison, number: usize) {
    let _ = writeln!(out, "<section id=\"ab-{number}\"><h2>A/B: {} → {}</h2>", escape::html(&c.a), escape::html(&c.b));
    if c.rows.is_empty() && c.verdicts.is_empty() {
        out.push_str("<p>The runs share no result (same target, workload and part) to compare.</p>\n");
    } else if !c.rows.is_empty() {
        out.push_str(&crate::ab::ab_table(&c.rows).html("ab"));
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape::html(crate::ab::AB_NOTE));
    }
    out.push_str(&crate::verdicts_markup::diff_html(&c.verdicts));
    for (side, names) in [(&c.a, &c.only_in_a), (&c.b, &c.only_in_b)] {
        if !names.is_empty() {
            let list: Vec<String> = names.iter().map(|n| format!("<li>{}</li>", escape::html(n))).collect();
            let _ = writeln!(out, "<p>Only in {} (not compared):</p><ul>{}</ul>", escape::html(side), list.join(""));
        }
    }
    out.push_str("</section>\n");
}

/// `+12.3%`; a dash when not a number.
pub(crate) fn percent(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "–".into()
    }
}

/// Charts in a responsive grid.
fn chart_grid(out: &mut String, charts: &[Chart]) {
    if charts.is_empty() {
        return;
    }
    out.push_str("<div class=\"charts\">\n");
    for chart in charts {
        let _ = writeln!(out, "<figure>{}</figure>", chart.render());
    }
    out.push_str("</div>\n");
}

/// One part of a report of several experiments ([`html_parts`]): a heading, a line under it
/// (what ran, how long against its budget), and the run.
#[derive(Debug)]
pub struct Part<'a> {
    /// The part's heading (a suite's name and study).
    pub heading: String,
    /// One line under it.
    pub note: String,
    /// The run.
    pub run: &'a RunReport,
}

/// Several experiments in one self-contained document (`fsarena demo`: every suite in
/// miniature): each run's own report, one after another, its anchors made its own, after
/// a table of the parts. Runs of different experiments are never compared with each other.
pub fn html_parts(title: &str, intro: &str, parts: &[Part<'_>]) -> String {
    let mut out = page_start(title, title, intro);
    out.push_str("<section id=\"parts\"><h2>Contents</h2><ol>\n");
    for (i, p) in parts.iter().enumerate() {
        let _ = writeln!(
            out,
            "<li><a href=\"#part-{}\">{}</a> · {}</li>",
            i + 1,
            escape::html(&p.heading),
            escape::html(&p.note)
        );
    }
    out.push_str("</ol></section>\n");
    for (i, p) in parts.iter().enumerate() {
        let page = html_report(std::slice::from_ref(p.run));
        let body = page.split_once("<main>").and_then(|(_, rest)| rest.split_once("</main>")).map_or("", |(b, _)| b);
        // Each part's anchors and the links to them, made unique in the document.
        let prefix = format!("part-{}-", i + 1);
        let body = body.replace("id=\"", &format!("id=\"{prefix}")).replace("href=\"#", &format!("href=\"#{prefix}"));
        let _ = writeln!(
            out,
            "<article id=\"part-{}\" class=\"part\"><h2 class=\"part\">{}</h2><p class=\"note\">{}</p>",
            i + 1,
            escape::html(&p.heading),
            escape::html(&p.note)
        );
        out.push_str(&body);
        out.push_str("</article>\n");
    }
    page_end(&mut out);
    out
}

/// A report page up to its `<main>`: the head (a content policy under which nothing is
/// fetched or run: the report needs nothing from outside), the style, the header.
fn page_start(title: &str, heading: &str, subtitle: &str) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape::html(title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        out,
        "<header><div class=\"wrap\"><h1>{}</h1><p>{}</p></div></header>\n<main>",
        escape::html(heading),
        escape::html(subtitle)
    );
    out
}

/// The end of a report page: `</main>`, the footer.
fn page_end(out: &mut String) {
    let _ = writeln!(
        out,
        "</main>\n<footer>Generated by fsarena {} · one self-contained file: no script, no outside request.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
}
