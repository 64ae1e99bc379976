//! Findings: the conclusions a study writes, from the numbers. Per row, result and metric the
//! targets ranked, the factor between the best and the worst with its 95% confidence interval
//! and p, or "no significant difference", or why nothing can be told; and each of the study's
//! claims marked confirmed, contradicted, not significant, inconclusive at this scale or not
//! tested here, with the figures.
//!
//! Every comparison is the stats crate's one model (`fsarena_stats::ratio`): targets rank by
//! their geometric means, a factor is the ratio of geometric means with Welch's interval on the
//! logarithms, and it is worded by [`crate::told`], as the tables, `compare` and the A/B
//! section word it.

use crate::experiment::{Claim, Experiment, Scope};
use crate::told::{factor_clause, sentence, untold_text};
use crate::{humanize, RunReport};
use fsarena_core::run::ResultEntry;
use fsarena_core::Better;
use fsarena_stats::{center, contrast, factor_text, ratio, Ratio, Reading};
use std::fmt::Write as _;

/// How Findings compare, in a line under their heading.
pub const METHOD: &str = "per metric the targets ranked by geometric mean, and the factor between the best and the worst with its 95% confidence interval and p (Welch's t-test on the logarithms); \"no significant difference\" where the interval contains 1; \"too few repetitions to tell\" below 3 repetitions a side, \"too noisy to tell\" where the interval spans more than 10×. A claim is confirmed only when every interval lies within its bounds, contradicted only when one lies wholly outside them, inconclusive at this scale otherwise.";

/// The same, short, for the terminal's heading.
const METHOD_SHORT: &str = "geometric means, 95% intervals of their ratios by Welch's t-test on the logarithms";

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
    /// Target labels with their central values (geometric means), best first.
    pub ranking: Vec<(String, f64)>,
    /// The best against the worst: the worst's repetitions as A, the best's as B.
    pub factor: Option<Ratio>,
}

/// `a > b` when a is the larger shown value, `a < b` when smaller, `a ≈ b` when they show
/// the same: a sign that is true of the numbers printed beside it.
fn ranking_text(ranking: &[(String, f64)], unit: &str) -> String {
    let mut out = String::new();
    for (i, (label, value)) in ranking.iter().enumerate() {
        let shown = humanize::value(*value, unit);
        if i > 0 {
            let prev = ranking[i - 1].1;
            let sign = if humanize::value(prev, unit) == shown {
                "≈"
            } else if prev > *value {
                ">"
            } else {
                "<"
            };
            let _ = write!(out, " {sign} ");
        }
        let _ = write!(out, "{label} {shown}");
    }
    out
}

impl MetricFinding {
    /// `ext3 20.1 s < ext4 870 s: ext3 43.2× (95% CI …, p<0.001) shorter than ext4`, or
    /// `no significant difference (…)`, or why nothing can be told.
    pub fn text(&self) -> String {
        let head = ranking_text(&self.ranking, &self.unit);
        let (Some(best), Some(worst), Some(r)) = (self.ranking.first(), self.ranking.last(), &self.factor) else {
            return head;
        };
        format!("{head}: {}", sentence(&best.0, &worst.0, r, &self.unit, self.better))
    }

    /// What the best against the worst says.
    pub fn reading(&self) -> Option<Reading> {
        self.factor.as_ref().map(|r| r.reading(self.better))
    }
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimVerdict {
    /// Every compared interval lies within the claimed bounds.
    Confirmed,
    /// An interval lies wholly outside the claimed bounds.
    Contradicted,
    /// An interval contains 1 (no difference shown) where the claim asserts one.
    NotSignificant,
    /// Too few repetitions, too wide an interval, or an interval across a claimed bound.
    Inconclusive,
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
            Self::Inconclusive => "inconclusive at this scale",
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
    row_id: String,
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
            None => out.push(Group { row, row_id: experiment.rows[row].id.clone(), words, entries: vec![entry] }),
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
    // Compliance checks have their own table of cases (verdicts): counts of one run, no
    // ranking.
    for g in groups.iter().filter(|g| !g.entries.iter().any(|e| crate::verdicts::is_verdicts(e))) {
        let row = &experiment.rows[g.row];
        for metric in ranked_metrics(&row.metrics, &g.entries) {
            let Some((unit, better)) = g.entries.iter().find_map(|e| metric_info(e, &metric)) else { continue };
            let mut ranked: Vec<(&ResultEntry, f64)> =
                g.entries.iter().filter_map(|e| center(&values(e, &metric)).map(|c| (*e, c))).collect();
            // Fewer than two targets, or a metric that is zero everywhere (a read job's
            // write_bw): nothing to rank.
            if ranked.len() < 2 || ranked.iter().all(|(_, m)| *m == 0.0) {
                continue;
            }
            ranked.sort_by(|a, b| {
                let o = a.1.total_cmp(&b.1);
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
                factor: ratio(&values(worst, &metric), &values(best, &metric)),
            });
        }
    }
    let claims = experiment.claims.iter().map(|c| check_claim(c, run, experiment, &groups)).collect();
    Findings { metrics, claims, times: row_times(run, experiment) }
}

/// Whether group `g` is in the scope (row index, point words, part).
fn in_scope(g: &Group<'_>, row: Option<usize>, point: Option<&str>, part: Option<&str>) -> bool {
    row.is_none_or(|r| r == g.row)
        && point.is_none_or(|p| p.split_whitespace().all(|p| g.words.split_whitespace().any(|w| w == p)))
        && part.is_none_or(|p| g.entries.first().and_then(|e| e.part.as_deref()) == Some(p))
}

/// One pair's (or one target's) verdict against the claimed bounds `[lo_c, hi_c]` of a factor
/// oriented in the metric's better direction ("faster" is `(1, ∞)`, strictly above 1).
fn judge(o: &Ratio, claim: &Claim) -> ClaimVerdict {
    let (lo_c, hi_c) = (claim.min_factor, claim.at_most.unwrap_or(f64::INFINITY));
    if o.untold().is_some() {
        return ClaimVerdict::Inconclusive;
    }
    let Some((lo, hi)) = o.ci95 else { return ClaimVerdict::Inconclusive };
    // "Faster" asserts a factor strictly above 1; "about 1×" (no gain) has bounds around 1.
    let above = if lo_c == 1.0 { lo > 1.0 } else { lo >= lo_c };
    let claims_no_difference = lo_c < 1.0 && hi_c > 1.0;
    if above && hi <= hi_c {
        ClaimVerdict::Confirmed
    } else if hi < lo_c || lo > hi_c {
        ClaimVerdict::Contradicted
    } else if lo <= 1.0 && hi >= 1.0 && !claims_no_difference {
        ClaimVerdict::NotSignificant
    } else {
        ClaimVerdict::Inconclusive
    }
}

/// The line of figures of one compared pair (or target) of a claim.
fn figure_line(what: &str, at: &str, o: &Ratio, verdict: ClaimVerdict, claim: &Claim) -> String {
    let mut line = match o.untold() {
        Some(why) => format!("{what}{at}: {}× measured; {}", factor_text(o.value), untold_text(o, why)),
        None => format!("{what}{at}: {}", factor_clause(o)),
    };
    if o.untold().is_none() {
        match verdict {
            ClaimVerdict::Contradicted if o.ci95.is_some_and(|(_, hi)| hi < 1.0) => {
                line.push_str(": the reverse holds")
            }
            ClaimVerdict::Contradicted | ClaimVerdict::Inconclusive => {
                let _ = write!(line, ": the claim says {}", claim.bounds_text());
            }
            _ => {}
        }
    }
    if let Some(study) = claim.study {
        let _ = write!(line, "; the study: {}×", factor_text(study));
        if o.ci95.is_some_and(|(lo, hi)| study < lo || study > hi) {
            line.push_str(", outside this interval");
        }
    }
    line
}

/// Checks one claim over every result of its scope where the metric is.
fn check_claim(claim: &Claim, run: &RunReport, experiment: &Experiment, groups: &[Group<'_>]) -> ClaimFinding {
    let not_tested =
        |why: String| ClaimFinding { claim: claim.clone(), verdict: ClaimVerdict::NotTested, figures: vec![why] };
    let labels: Vec<&str> = run.results.iter().map(|e| e.target_label.as_str()).collect();
    let named = claim.better.iter().chain(&claim.worse).chain(&claim.order).chain(&claim.targets);
    let missing: Vec<&str> = named.map(String::as_str).filter(|l| !labels.contains(l)).collect();
    if !missing.is_empty() {
        return not_tested(format!("no target {} in this run", missing.join(", ")));
    }
    // A row id that names no row: the reason it was not tested.
    let row_index = |id: &Option<String>| -> Result<Option<usize>, String> {
        match id {
            Some(id) => match experiment.rows.iter().position(|r| &r.id == id) {
                Some(r) => Ok(Some(r)),
                None => Err(format!("row {id} did not run")),
            },
            None => Ok(None),
        }
    };
    let row = match row_index(&claim.row) {
        Ok(r) => r,
        Err(why) => return not_tested(why),
    };
    let from = match &claim.from {
        Some(Scope { row: from_row, point, part }) => {
            match row_index(&from_row.clone().or_else(|| claim.row.clone())) {
                Ok(r) => Some((r, point.as_deref(), part.as_deref())),
                Err(why) => return not_tested(why),
            }
        }
        None => None,
    };
    // The pairs compared, better first; a target alone (`targets`) is compared with itself at `from`.
    let mut pairs: Vec<(&str, Option<&str>)> = Vec::new();
    for b in &claim.better {
        for w in &claim.worse {
            pairs.push((b, Some(w)));
        }
    }
    pairs.extend(claim.order.windows(2).map(|w| (w[0].as_str(), Some(w[1].as_str()))));
    pairs.extend(claim.targets.iter().map(|t| (t.as_str(), None)));
    let mut figures = Vec::new();
    let mut verdicts = Vec::new();
    for g in groups.iter().filter(|g| in_scope(g, row, claim.point.as_deref(), claim.part.as_deref())) {
        let find = |g: &Group<'_>, label: &str| -> Option<Vec<f64>> {
            g.entries
                .iter()
                .find(|e| e.target_label == label && metric_info(e, &claim.metric).is_some())
                .map(|e| values(e, &claim.metric))
        };
        let Some(better) = g.entries.iter().find_map(|e| metric_info(e, &claim.metric)).map(|(_, b)| b) else {
            continue;
        };
        // The baseline group for gains: the one result of `from`'s scope.
        let base = match from {
            Some((r, point, part)) => {
                match groups.iter().find(|b| in_scope(b, r.or(Some(g.row)), point, part) && !std::ptr::eq(*b, g)) {
                    Some(b) => Some(b),
                    None => continue,
                }
            }
            None => None,
        };
        let at = if g.words.is_empty() { String::new() } else { format!(" at {}", g.words) };
        for &(b, w) in &pairs {
            let (Some(vb), Some(vw)) = (find(g, b), w.map_or(Some(Vec::new()), |w| find(g, w))) else { continue };
            let r = match (base, w) {
                (None, Some(_)) => ratio(&vw, &vb),
                (Some(base), Some(w)) => {
                    let (Some(bb), Some(bw)) = (find(base, b), find(base, w)) else { continue };
                    contrast(&[(&vb, 1.0), (&bb, -1.0), (&vw, -1.0), (&bw, 1.0)])
                }
                (Some(base), None) => {
                    let Some(bb) = find(base, b) else { continue };
                    contrast(&[(&vb, 1.0), (&bb, -1.0)])
                }
                (None, None) => continue,
            };
            let Some(r) = r else { continue };
            let o = r.oriented(better);
            let verdict = judge(&o, claim);
            let what = match (w, base) {
                (Some(w), None) => format!("{b} over {w}"),
                (Some(w), Some(base)) => format!("{b}'s gain over {w}'s, from {}", base_words(base)),
                (None, Some(base)) => format!("{b}'s gain from {}", base_words(base)),
                (None, None) => continue,
            };
            figures.push(figure_line(&what, &at, &o, verdict, claim));
            verdicts.push(verdict);
        }
    }
    if verdicts.is_empty() {
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
    let verdict = if verdicts.contains(&ClaimVerdict::Contradicted) {
        ClaimVerdict::Contradicted
    } else if verdicts.iter().all(|v| *v == ClaimVerdict::Confirmed) {
        ClaimVerdict::Confirmed
    } else if verdicts.contains(&ClaimVerdict::Inconclusive) {
        ClaimVerdict::Inconclusive
    } else {
        ClaimVerdict::NotSignificant
    };
    ClaimFinding { claim: claim.clone(), verdict, figures }
}

/// How a baseline group is named in a gain's figures: its row's id and its words.
fn base_words(g: &Group<'_>) -> String {
    format!("{} {}", g.row_id, g.words).trim_end().to_string()
}

/// The Findings as plain text (the terminal, after the results).
pub fn text(findings: &Findings, experiment: &Experiment) -> String {
    let mut out = format!("Findings ({}, scale {}; {}):\n", experiment.name, experiment.scale, METHOD_SHORT);
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
    let mut out =
        format!("\n## Findings\n\n{} at scale {}: {}\n\n", md(&experiment.name), md(&experiment.scale), md(METHOD));
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
        "<section id=\"findings\"><h2>Findings</h2><p class=\"note\">{} at scale {}: {}</p>\n",
        h(&experiment.name),
        h(&experiment.scale),
        h(METHOD)
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
                ClaimVerdict::Inconclusive => "inconclusive",
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
