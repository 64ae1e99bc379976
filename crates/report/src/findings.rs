//! Findings: the conclusions a study writes, from the numbers. Per row, result and metric the
//! targets ranked, the factor between the best and the worst with its 95% confidence interval
//! and p, or "no significant difference"; and each of the study's claims marked confirmed,
//! contradicted, not significant or not tested here, with the figures.
//!
//! Factors are ratios of geometric means, tested by Welch's t-test (the stats crate's) on the
//! logarithms of the repetitions: a ratio is what a study quotes ("ext3 is 40× faster"), and on
//! the log scale its confidence interval is the exponential of an ordinary one. Where a value
//! is zero or negative the logarithm does not exist, and the ratio of arithmetic means is given
//! with the test and interval of the difference, divided by the worse mean.

use crate::experiment::{Claim, Experiment};
use crate::{humanize, RunReport};
use fsarena_core::run::ResultEntry;
use fsarena_core::Better;
use fsarena_stats::welch;
use std::fmt::Write as _;

/// The significance level of every statement.
pub const ALPHA: f64 = 0.05;

/// How one target fares against another on one metric: the factor by which `over` beats
/// `under` (above 1 when it does), with its 95% CI and the test's p.
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    /// over / under in the metric's better direction: 2 means twice as good.
    pub value: f64,
    /// Its 95% confidence interval.
    pub ci95: (f64, f64),
    /// Two-sided p of Welch's test; `None` with fewer than two repetitions on a side.
    pub p: Option<f64>,
}

impl Factor {
    /// Significant at [`ALPHA`].
    pub fn significant(&self) -> bool {
        self.p.is_some_and(|p| p < ALPHA)
    }

    /// `3.20× (95% CI 2.9–3.5, p=0.001)`.
    pub fn text(&self) -> String {
        let p = self.p.map_or_else(|| "untested: one repetition".to_string(), |p| format!("p{}", p_text(p)));
        format!("{}× (95% CI {}–{}, {p})", factor_text(self.value), factor_text(self.ci95.0), factor_text(self.ci95.1))
    }
}

fn factor_text(f: f64) -> String {
    if !f.is_finite() {
        return "∞".into();
    }
    let digits = if f >= 100.0 {
        0
    } else if f >= 10.0 {
        1
    } else {
        2
    };
    format!("{f:.digits$}")
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("={p:.3}")
    }
}

/// The factor by which `over` beats `under` on a metric whose better direction is `better`.
pub fn factor(over: &[f64], under: &[f64], better: Better) -> Option<Factor> {
    if over.is_empty() || under.is_empty() {
        return None;
    }
    // Oriented so that the factor is above 1 when `over` is better.
    let (num, den) = if better == Better::Higher { (over, under) } else { (under, over) };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    if num.iter().chain(den).all(|&v| v > 0.0 && v.is_finite()) {
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let (ln_num, ln_den) = (ln(num), ln(den));
        let value = (mean(&ln_num) - mean(&ln_den)).exp();
        return Some(match welch(&ln_den, &ln_num) {
            Some(c) => Factor { value, ci95: (c.ci95_diff.0.exp(), c.ci95_diff.1.exp()), p: Some(c.p_value) },
            None => Factor { value, ci95: (value, value), p: None },
        });
    }
    let (m_num, m_den) = (mean(num), mean(den));
    if m_den == 0.0 {
        return None;
    }
    let value = m_num / m_den;
    Some(match welch(den, num) {
        Some(c) => {
            Factor { value, ci95: (1.0 + c.ci95_diff.0 / m_den, 1.0 + c.ci95_diff.1 / m_den), p: Some(c.p_value) }
        }
        None => Factor { value, ci95: (value, value), p: None },
    })
}

/// One metric of one result, across the targets.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricFinding {
    /// The row's title.
    pub row: String,
    /// What tells the result apart within its row (`rw=read numjobs=4`); may be empty.
    pub result: String,
    /// The metric.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Its better direction.
    pub better: Better,
    /// Target labels with their means, best first.
    pub ranking: Vec<(String, f64)>,
    /// Best over worst.
    pub factor: Option<Factor>,
}

impl MetricFinding {
    /// `ext3 > ext4 > xfs: ext3 3.20× ext4's (95% CI …, p=…)` or `no significant difference`.
    pub fn text(&self) -> String {
        let order: Vec<String> =
            self.ranking.iter().map(|(l, m)| format!("{l} {}", humanize::value(*m, &self.unit))).collect();
        let head = order.join(" > ");
        let (Some(best), Some(worst)) = (self.ranking.first(), self.ranking.last()) else { return head };
        match &self.factor {
            Some(f) if f.significant() => format!("{head}: {} is {} better than {}", best.0, f.text(), worst.0),
            Some(f) if f.p.is_none() => format!("{head}: {} ({})", "not tested", f.text()),
            Some(f) => format!("{head}: no significant difference ({})", f.text()),
            None => head,
        }
    }
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimVerdict {
    /// Every better label beats every worse one with p < 0.05 by at least min_factor.
    Confirmed,
    /// A worse label significantly beats a better one.
    Contradicted,
    /// Neither: the differences are not significant, or smaller than claimed.
    NotSignificant,
    /// A named target, the row or the metric is missing from this run.
    NotTested,
}

impl ClaimVerdict {
    /// The word reports show.
    pub fn word(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Contradicted => "contradicted",
            Self::NotSignificant => "not significant",
            Self::NotTested => "not tested here",
        }
    }
}

/// A claim checked against the run.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimFinding {
    /// The claim.
    pub claim: Claim,
    /// Its verdict.
    pub verdict: ClaimVerdict,
    /// The figures behind it, one line per pair and result (or why it was not tested).
    pub figures: Vec<String>,
}

/// What one experiment row cost to run here.
#[derive(Debug, Clone, PartialEq)]
pub struct RowTime {
    /// The row's title.
    pub row: String,
    /// Its results (target × sweep point × part).
    pub results: usize,
    /// The targets it ran on.
    pub targets: usize,
    /// Wall-clock milliseconds, every round, warm-ups and setup included; none when the run
    /// was stored before this was kept (or the row did not run).
    pub wall_ms: Option<u64>,
}

impl RowTime {
    /// `4m12s`, or `not recorded`.
    pub fn time_text(&self) -> String {
        match self.wall_ms {
            Some(ms) => fsarena_core::human_duration(std::time::Duration::from_millis(ms)),
            None => "not recorded".into(),
        }
    }

    /// `12 results on 4 targets`.
    pub fn size_text(&self) -> String {
        format!("{} result(s) on {} target(s)", self.results, self.targets)
    }
}

/// The Findings of one run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// Per row, result and metric.
    pub metrics: Vec<MetricFinding>,
    /// The claims.
    pub claims: Vec<ClaimFinding>,
    /// Per row, the time it took here.
    pub times: Vec<RowTime>,
}

/// Each row's results, targets and wall-clock time in `run`.
fn row_times(run: &RunReport, experiment: &Experiment) -> Vec<RowTime> {
    experiment
        .rows
        .iter()
        .map(|row| {
            let mine: Vec<&ResultEntry> =
                run.results.iter().filter(|e| row.workloads.contains(&e.workload_title())).collect();
            let mut targets: Vec<&str> = mine.iter().map(|e| e.target_label.as_str()).collect();
            targets.sort_unstable();
            targets.dedup();
            let walls: Vec<u64> = mine.iter().filter_map(|e| e.wall_ms).collect();
            RowTime {
                row: row.title.clone(),
                results: mine.len(),
                targets: targets.len(),
                wall_ms: (!walls.is_empty()).then(|| walls.iter().sum()),
            }
        })
        .collect()
}

/// The rows' total time, when every row that ran recorded one.
fn total_ms(times: &[RowTime]) -> Option<u64> {
    let ran: Vec<&RowTime> = times.iter().filter(|t| t.results > 0).collect();
    ran.iter().map(|t| t.wall_ms).sum::<Option<u64>>().filter(|_| !ran.is_empty())
}

/// The values of `metric` over the repetitions of `entry`.
fn values(entry: &ResultEntry, metric: &str) -> Vec<f64> {
    entry.measurements.iter().filter_map(|m| m.metric(metric)).map(|m| m.value).filter(|v| v.is_finite()).collect()
}

/// The unit and direction of `metric` in `entry`.
fn metric_info(entry: &ResultEntry, metric: &str) -> Option<(String, Better)> {
    entry.measurements.iter().find_map(|m| m.metric(metric)).map(|m| (m.unit.clone(), m.better))
}

/// A result of a row: its entries (one per target) and the words that tell it apart.
struct Group<'a> {
    row: usize,
    words: String,
    entries: Vec<&'a ResultEntry>,
}

/// The run's results grouped by row and by result within the row, in the run's order.
fn groups<'a>(run: &'a RunReport, experiment: &Experiment) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for entry in &run.results {
        let Some(row) = experiment.rows.iter().position(|r| r.workloads.contains(&entry.workload_title())) else {
            continue;
        };
        let words = entry.variant();
        match out.iter_mut().find(|g| g.row == row && g.words == words) {
            Some(g) => g.entries.push(entry),
            None => out.push(Group { row, words, entries: vec![entry] }),
        }
    }
    out
}

/// The metrics a row's Findings rank: those it names, else every rate (`…/s`) that is not
/// zero everywhere, else every metric that is not a count.
fn ranked_metrics(named: &[String], entries: &[&ResultEntry]) -> Vec<String> {
    if !named.is_empty() {
        return named.to_vec();
    }
    let all = crate::model::metrics(entries.iter().copied());
    let rates: Vec<String> = all
        .iter()
        .filter(|m| m.unit.ends_with("/s") && entries.iter().any(|e| values(e, m.name).iter().any(|&v| v != 0.0)))
        .map(|m| m.name.to_string())
        .collect();
    if !rates.is_empty() {
        return rates;
    }
    all.iter().filter(|m| !crate::model::is_count(m.unit)).map(|m| m.name.to_string()).collect()
}

/// The Findings of `run`, shaped by its experiment.
pub fn findings(run: &RunReport, experiment: &Experiment) -> Findings {
    let groups = groups(run, experiment);
    let mut metrics = Vec::new();
    // Compliance checks have their own table of cases (posix): counts of one run, no ranking.
    for g in groups.iter().filter(|g| !g.entries.iter().any(|e| crate::posix_text::is_posix(e))) {
        let row = &experiment.rows[g.row];
        for metric in ranked_metrics(&row.metrics, &g.entries) {
            let Some((unit, better)) = g.entries.iter().find_map(|e| metric_info(e, &metric)) else { continue };
            let mut ranked: Vec<(&ResultEntry, f64)> = g
                .entries
                .iter()
                .filter_map(|e| {
                    let v = values(e, &metric);
                    (!v.is_empty()).then(|| (*e, v.iter().sum::<f64>() / v.len() as f64))
                })
                .collect();
            // Fewer than two targets, or a metric that is zero everywhere (a read job's
            // write_bw): nothing to rank.
            if ranked.len() < 2 || ranked.iter().all(|(_, m)| *m == 0.0) {
                continue;
            }
            ranked.sort_by(|a, b| {
                let o = a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal);
                if better == Better::Higher {
                    o.reverse()
                } else {
                    o
                }
            });
            let (best, worst) = (ranked[0].0, ranked[ranked.len() - 1].0);
            metrics.push(MetricFinding {
                row: row.title.clone(),
                result: g.words.clone(),
                metric: metric.clone(),
                unit,
                better,
                ranking: ranked.iter().map(|(e, m)| (e.target_label.clone(), *m)).collect(),
                factor: factor(&values(best, &metric), &values(worst, &metric), better),
            });
        }
    }
    let claims = experiment.claims.iter().map(|c| check_claim(c, run, experiment, &groups)).collect();
    Findings { metrics, claims, times: row_times(run, experiment) }
}

/// Checks one claim over every result of its row (at its point) where the metric is.
fn check_claim(claim: &Claim, run: &RunReport, experiment: &Experiment, groups: &[Group<'_>]) -> ClaimFinding {
    let not_tested =
        |why: String| ClaimFinding { claim: claim.clone(), verdict: ClaimVerdict::NotTested, figures: vec![why] };
    let labels: Vec<&str> = run.results.iter().map(|e| e.target_label.as_str()).collect();
    let missing: Vec<&str> =
        claim.better.iter().chain(&claim.worse).map(String::as_str).filter(|l| !labels.contains(l)).collect();
    if !missing.is_empty() {
        return not_tested(format!("no target {} in this run", missing.join(", ")));
    }
    let row = match &claim.row {
        Some(id) => match experiment.rows.iter().position(|r| &r.id == id) {
            Some(r) => Some(r),
            None => return not_tested(format!("row {id} did not run")),
        },
        None => None,
    };
    let mut figures = Vec::new();
    let (mut confirmed, mut contradicted, mut pairs) = (0, 0, 0);
    for g in groups.iter().filter(|g| row.is_none_or(|r| r == g.row)) {
        if let Some(point) = &claim.point {
            if !point.split_whitespace().all(|p| g.words.split_whitespace().any(|w| w == p)) {
                continue;
            }
        }
        let find =
            |label: &str| g.entries.iter().find(|e| e.target_label == label && metric_info(e, &claim.metric).is_some());
        for b in &claim.better {
            for w in &claim.worse {
                let (Some(be), Some(we)) = (find(b), find(w)) else { continue };
                let Some((_, better)) = metric_info(be, &claim.metric) else { continue };
                let Some(f) = factor(&values(be, &claim.metric), &values(we, &claim.metric), better) else { continue };
                pairs += 1;
                let at = if g.words.is_empty() { String::new() } else { format!(" at {}", g.words) };
                let mut line = format!("{b} over {w}{at}: {}", f.text());
                if f.significant() && f.value >= claim.min_factor {
                    confirmed += 1;
                } else if f.significant() && f.value < 1.0 {
                    contradicted += 1;
                    line.push_str(&format!(": {w} is better"));
                } else if f.significant() {
                    line.push_str(&format!(": smaller than the claimed {}×", factor_text(claim.min_factor)));
                }
                figures.push(line);
            }
        }
    }
    if pairs == 0 {
        if let (Some(r), Some(id)) = (row, &claim.row) {
            if !groups.iter().any(|g| g.row == r) {
                let why = experiment.skipped.iter().find(|s| s.what == format!("row {id}")).map(|s| s.reason.as_str());
                return not_tested(match why {
                    Some(why) => format!("row {id} did not run here: {why}"),
                    None => format!("row {id} has no results"),
                });
            }
        }
        return not_tested(format!("no result with {} for these targets", claim.metric));
    }
    let verdict = if contradicted > 0 {
        ClaimVerdict::Contradicted
    } else if confirmed == pairs {
        ClaimVerdict::Confirmed
    } else {
        ClaimVerdict::NotSignificant
    };
    ClaimFinding { claim: claim.clone(), verdict, figures }
}

/// The Findings as plain text (the terminal, after the results).
pub fn text(findings: &Findings, experiment: &Experiment) -> String {
    let mut out =
        format!("Findings ({}, scale {}; 95% confidence, Welch's t-test):\n", experiment.name, experiment.scale);
    if findings.metrics.is_empty() {
        out.push_str("  nothing to rank: no row has results from two targets or more\n");
    }
    let mut last_row = "";
    for m in &findings.metrics {
        if m.row != last_row {
            let _ = writeln!(out, "  {}", m.row);
            last_row = &m.row;
        }
        let at = if m.result.is_empty() { String::new() } else { format!("{} ", m.result) };
        let _ = writeln!(out, "    {at}{}: {}", m.metric, m.text());
    }
    if !findings.claims.is_empty() {
        out.push_str("Claims of the study:\n");
        for c in &findings.claims {
            let _ = writeln!(out, "  [{}] {}", c.verdict.word(), c.claim.text);
            for f in &c.figures {
                let _ = writeln!(out, "      {f}");
            }
        }
    }
    skipped_text(&mut out, experiment, "Skipped here:\n", "  ");
    if findings.times.iter().any(|t| t.wall_ms.is_some()) {
        out.push_str("Time here per row (every round, warm-ups and setup included):\n");
        for t in &findings.times {
            let _ = writeln!(out, "  {}: {} ({})", t.row, t.time_text(), t.size_text());
        }
        if let Some(ms) = total_ms(&findings.times) {
            let _ = writeln!(out, "  all rows: {}", fsarena_core::human_duration(std::time::Duration::from_millis(ms)));
        }
    }
    out
}

fn skipped_text(out: &mut String, experiment: &Experiment, head: &str, indent: &str) {
    if !experiment.skipped.is_empty() {
        out.push_str(head);
        for s in &experiment.skipped {
            let _ = writeln!(out, "{indent}{}: {}", s.what, s.reason);
        }
    }
}

/// The Findings as a Markdown section.
pub fn markdown(findings: &Findings, experiment: &Experiment) -> String {
    use crate::escape::markdown as md;
    let mut out = format!(
        "\n## Findings\n\n{} at scale {}: per metric the targets ranked (mean), and the factor between the best and the worst with its 95% CI and p (Welch's t-test on the logarithms).\n\n",
        md(&experiment.name),
        md(&experiment.scale)
    );
    out.push_str("| row | result | metric | ranking and factor |\n|---|---|---|---|\n");
    let mut last_row = "";
    for m in &findings.metrics {
        // The row's title once, on its first line: the lines below it are its results.
        let row = if m.row == last_row { String::new() } else { md(&m.row) };
        last_row = &m.row;
        let _ = writeln!(out, "| {row} | {} | {} | {} |", md(&m.result), md(&m.metric), md(&m.text()));
    }
    if !findings.claims.is_empty() {
        out.push_str("\n### Claims of the study\n\n| claim | verdict | figures |\n|---|---|---|\n");
        for c in &findings.claims {
            let _ =
                writeln!(out, "| {} | **{}** | {} |", md(&c.claim.text), c.verdict.word(), md(&c.figures.join("; ")));
        }
    }
    if !experiment.skipped.is_empty() {
        out.push_str("\n### Skipped here\n\n");
        for s in &experiment.skipped {
            let _ = writeln!(out, "- {}: {}", md(&s.what), md(&s.reason));
        }
    }
    if findings.times.iter().any(|t| t.wall_ms.is_some()) {
        out.push_str("\n### Time here per row\n\nWall-clock, every round, warm-ups and setup included.\n\n| row | results | time |\n|---|---|---|\n");
        for t in &findings.times {
            let _ = writeln!(out, "| {} | {} | {} |", md(&t.row), md(&t.size_text()), t.time_text());
        }
        if let Some(ms) = total_ms(&findings.times) {
            let _ = writeln!(
                out,
                "| all rows | | {} |",
                fsarena_core::human_duration(std::time::Duration::from_millis(ms))
            );
        }
    }
    out
}

/// The Findings as an HTML section.
pub fn html(findings: &Findings, experiment: &Experiment) -> String {
    use crate::escape::html as h;
    let mut out = format!(
        "<section id=\"findings\"><h2>Findings</h2><p class=\"note\">{} at scale {}: per metric the targets ranked by mean, and the factor between the best and the worst with its 95% confidence interval and p (Welch's t-test on the logarithms); \"no significant difference\" where p ≥ 0.05.</p>\n",
        h(&experiment.name),
        h(&experiment.scale)
    );
    out.push_str("<div class=\"table-wrap\"><table><thead><tr><th>row</th><th>result</th><th>metric</th><th>ranking and factor</th></tr></thead><tbody>\n");
    let mut last_row = "";
    for m in &findings.metrics {
        let row = if m.row == last_row { String::new() } else { h(&m.row) };
        last_row = &m.row;
        let _ = writeln!(
            out,
            "<tr><td>{row}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            h(&m.result),
            h(&m.metric),
            h(&m.text())
        );
    }
    out.push_str("</tbody></table></div>\n");
    if !findings.claims.is_empty() {
        out.push_str("<h3>Claims of the study</h3><div class=\"table-wrap\"><table><thead><tr><th>claim</th><th>verdict</th><th>figures</th></tr></thead><tbody>\n");
        for c in &findings.claims {
            let class = match c.verdict {
                ClaimVerdict::Confirmed => "better",
                ClaimVerdict::Contradicted => "worse",
                _ => "",
            };
            let figures: Vec<String> = c.figures.iter().map(|f| h(f)).collect();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"{class}\">{}</td><td>{}</td></tr>",
                h(&c.claim.text),
                c.verdict.word(),
                figures.join("<br>")
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if !experiment.skipped.is_empty() {
        out.push_str("<h3>Skipped here</h3><ul>\n");
        for s in &experiment.skipped {
            let _ = writeln!(out, "<li>{}: {}</li>", h(&s.what), h(&s.reason));
        }
        out.push_str("</ul>\n");
    }
    if findings.times.iter().any(|t| t.wall_ms.is_some()) {
        out.push_str("<h3>Time here per row</h3><p class=\"note\">Wall-clock, every round, warm-ups and setup included.</p><div class=\"table-wrap\"><table><thead><tr><th>row</th><th>results</th><th class=\"num\">time</th></tr></thead><tbody>\n");
        for t in &findings.times {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                h(&t.row),
                h(&t.size_text()),
                t.time_text()
            );
        }
        if let Some(ms) = total_ms(&findings.times) {
            let _ = writeln!(
                out,
                "<tr><td>all rows</td><td></td><td class=\"num\">{}</td></tr>",
                fsarena_core::human_duration(std::time::Duration::from_millis(ms))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
    out
}

/// The experiment and its Findings for `run`, when the run came from an experiment file or a
/// suite that recorded one.
pub fn of_run(run: &RunReport) -> Option<(Experiment, Findings)> {
    let experiment = Experiment::from_plan(&run.plan)?;
    let findings = findings(run, &experiment);
    Some((experiment, findings))
}
