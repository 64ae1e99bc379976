//! The results of the `posix` compliance workload, as every report shows them: one table with
//! the syscall families as rows and the targets side by side as columns (`passed/all`, where
//! "all" counts the cases the target could express, `+N unsupported` for the rest), a total
//! and a `security` row; then, per target, every failing case with what was expected and what
//! happened, and the unsupported cases grouped by their reason.
//!
//! A posix workload gives one result part per family, each with the verdict of every case
//! ([`Verdict`]). Nothing here depends on which families exist: rows are the families found.
//! Where one target ran a case more than once (repetitions, two posix workloads), the worst
//! outcome stands, as [`fsarena_core::Measurement::merge`] does across hosts.
//!
//! This module builds the table and the comparison of cases and writes the terminal's text;
//! [`crate::posix_markup`] writes the same for the HTML and Markdown reports.

use crate::{ResultEntry, RunReport};
use fsarena_core::{printable, Outcome, Verdict};
use std::fmt::Write as _;

/// The workload kind whose results are verdicts, not figures.
pub(crate) const KIND: &str = "posix";

/// Whether `entry` is a result of the posix workload.
pub(crate) fn is_posix(entry: &ResultEntry) -> bool {
    entry.workload_kind == KIND
}

/// The parameters shared per kind ([`crate::model::Model::common`]) less the posix kind's:
/// its results are in the posix section, not among the results those words introduce.
pub(crate) fn common_without_posix(common: &[String]) -> Vec<String> {
    let prefix = format!("{KIND}: ");
    common.iter().filter(|c| !c.starts_with(&prefix)).cloned().collect()
}

/// Pass, fail and unsupported counts of a set of cases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases the filesystem could not express.
    pub unsupported: usize,
}

impl Tally {
    /// Counts `verdicts`.
    pub(crate) fn of<'v>(verdicts: impl IntoIterator<Item = &'v Verdict>) -> Self {
        let mut t = Tally::default();
        for v in verdicts {
            t.add(v.outcome);
        }
        t
    }

    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Unsupported => self.unsupported += 1,
        }
    }

    /// Every case counted.
    pub(crate) fn cases(&self) -> usize {
        self.passed + self.failed + self.unsupported
    }

    /// `40/42`, or `40/42 +3 unsupported`: passed over the cases the target could express,
    /// then the ones it could not.
    pub(crate) fn text(&self) -> String {
        let mut s = format!("{}/{}", self.passed, self.passed + self.failed);
        if self.unsupported > 0 {
            let _ = write!(s, " +{} unsupported", self.unsupported);
        }
        s
    }
}

/// The verdicts of one result over its repetitions: each case once, in first-run order, with
/// its worst outcome.
pub fn entry_verdicts(entry: &ResultEntry) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    for v in entry.measurements.iter().flat_map(|m| &m.verdicts) {
        merge_one(&mut out, v);
    }
    out
}

/// Adds `v` to `list`, or replaces the case's verdict there when `v` is worse.
fn merge_one(list: &mut Vec<Verdict>, v: &Verdict) {
    match list.iter_mut().find(|o| o.case == v.case) {
        Some(o) if v.outcome.worse_than(o.outcome) => *o = v.clone(),
        Some(_) => {}
        None => list.push(v.clone()),
    }
}

/// One column of the table: a target in one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    /// The target's label, prefixed by the run's name when the report covers several runs.
    pub label: String,
    /// Per family, in row order, the verdicts of that family (empty: the target did not run it).
    pub families: Vec<Vec<Verdict>>,
}

impl Column {
    /// Every verdict of the column, family by family.
    pub(crate) fn verdicts(&self) -> impl Iterator<Item = &Verdict> {
        self.families.iter().flatten()
    }

    /// Its failures, in run order.
    pub(crate) fn failures(&self) -> Vec<&Verdict> {
        self.verdicts().filter(|v| v.outcome == Outcome::Fail).collect()
    }

    /// Its unsupported cases grouped by reason (reasons in first-seen order).
    pub(crate) fn unsupported(&self) -> Vec<(&str, Vec<&str>)> {
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for v in self.verdicts().filter(|v| v.outcome == Outcome::Unsupported) {
            match groups.iter_mut().find(|(why, _)| *why == v.actual) {
                Some((_, cases)) => cases.push(&v.case),
                None => groups.push((&v.actual, vec![&v.case])),
            }
        }
        groups
    }
}

/// The families side by side for every target of the runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PosixTable {
    /// The families, in the order they first ran.
    pub families: Vec<String>,
    /// The targets (of each run), by target then run, as the other tables of a report.
    pub columns: Vec<Column>,
}

/// One row of the table: its label and one cell per column (`None`: not run there).
pub(crate) struct TableRow {
    /// The family, `total` or `security`.
    pub label: String,
    /// One per column, in column order.
    pub cells: Vec<Option<Tally>>,
}

impl PosixTable {
    /// The table of the posix results of `runs`; `None` when there are none.
    pub(crate) fn new(runs: &[RunReport]) -> Option<Self> {
        let posix = || {
            runs.iter()
                .enumerate()
                .flat_map(|(r, run)| run.results.iter().map(move |e| (r, e)))
                .filter(|(_, e)| is_posix(e))
        };
        posix().next()?;
        let mut families: Vec<String> = Vec::new();
        let mut targets: Vec<&str> = Vec::new();
        for (_, e) in posix() {
            for v in e.measurements.iter().flat_map(|m| &m.verdicts) {
                if !families.iter().any(|f| f == v.family()) {
                    families.push(v.family().to_string());
                }
            }
            if !targets.contains(&e.target_label.as_str()) {
                targets.push(&e.target_label);
            }
        }
        let mut columns = Vec::new();
        for target in targets {
            for (r, run) in runs.iter().enumerate() {
                let entries: Vec<&ResultEntry> =
                    run.results.iter().filter(|e| is_posix(e) && e.target_label == target).collect();
                if entries.is_empty() {
                    continue;
                }
                let mut all: Vec<Verdict> = Vec::new();
                for v in entries.iter().flat_map(|e| entry_verdicts(e)) {
                    merge_one(&mut all, &v);
                }
                let by_family =
                    families.iter().map(|f| all.iter().filter(|v| v.family() == f).cloned().collect()).collect();
                let label = if runs.len() > 1 { format!("{} {target}", runs[r].handle()) } else { target.to_string() };
                columns.push(Column { label, families: by_family });
            }
        }
        Some(Self { families, columns })
    }

    /// The rows: one per family, then `total` and `security` (the security-tagged cases of
    /// every family).
    pub(crate) fn rows(&self) -> Vec<TableRow> {
        let mut rows: Vec<TableRow> = self
            .families
            .iter()
            .enumerate()
            .map(|(i, f)| TableRow {
                label: f.clone(),
                cells: self
                    .columns
                    .iter()
                    .map(|c| (!c.families[i].is_empty()).then(|| Tally::of(&c.families[i])))
                    .collect(),
            })
            .collect();
        rows.push(TableRow {
            label: "total".into(),
            cells: self.columns.iter().map(|c| Some(Tally::of(c.verdicts()))).collect(),
        });
        rows.push(TableRow {
            label: "security".into(),
            cells: self.columns.iter().map(|c| Some(Tally::of(c.verdicts().filter(|v| v.security)))).collect(),
        });
        rows
    }
}

/// The one line of a posix result in the terminal report: its title and counts, and the
/// time of its last repetition (`tmpfs · posix · chmod: 35 cases, 35 passed, 0 failed, 0
/// unsupported in 0.08 s`).
pub(crate) fn entry_line(out: &mut String, entry: &ResultEntry) {
    let t = Tally::of(&entry_verdicts(entry));
    let secs = entry.measurements.last().and_then(|m| m.metric("elapsed")).map_or(0.0, |m| m.value / 1e9);
    let complete = !entry.measurements.is_empty() && entry.measurements.iter().all(|m| m.complete);
    let _ = writeln!(
        out,
        "{}: {} case{}, {} passed, {} failed, {} unsupported in {secs:.2} s{}",
        entry.title(),
        t.cases(),
        if t.cases() == 1 { "" } else { "s" },
        t.passed,
        t.failed,
        t.unsupported,
        if complete { "" } else { " (INCOMPLETE: stopped early)" }
    );
}

/// The posix section of the terminal report: the side-by-side table, then per target its
/// failures (case, expected, actual, aligned) and its unsupported cases by reason. Empty when
/// the runs have no posix result. Case texts are made inert here: they are not in the
/// [`crate::terminal`] copy's reach.
pub(crate) fn posix_text(runs: &[RunReport]) -> String {
    let Some(table) = PosixTable::new(runs) else { return String::new() };
    let mut out = String::new();
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::ASCII_MARKDOWN).force_no_tty();
    let mut header = vec!["posix family".to_string()];
    header.extend(table.columns.iter().map(|c| printable(&c.label).into_owned()));
    t.set_header(header);
    for row in table.rows() {
        let mut cells = vec![printable(&row.label).into_owned()];
        cells.extend(row.cells.iter().map(|c| c.map_or_else(|| "-".to_string(), |t| t.text())));
        t.add_row(cells);
    }
    for i in 1..=table.columns.len() {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    let _ = writeln!(out, "{t}");
    if table.columns.iter().any(|c| c.verdicts().any(|v| v.outcome == Outcome::Unsupported)) {
        out.push_str("passed/all: \"all\" counts the cases the target could express; unsupported ones are apart\n");
    }
    for c in &table.columns {
        let label = printable(&c.label);
        let failures = c.failures();
        if !failures.is_empty() {
            let _ = writeln!(out, "\n{label}: {} failed", failures.len());
            let rows: Vec<[String; 3]> = failures
                .iter()
                .map(|v| {
                    let mark = if v.security { " [security]" } else { "" };
                    [
                        format!("{}{mark}", printable(&v.case)),
                        printable(&v.expected).into_owned(),
                        printable(&v.actual).into_owned(),
                    ]
                })
                .collect();
            let w0 = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
            let w1 = rows.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
            for [case, expected, actual] in rows {
                let _ = writeln!(out, "  {case:w0$}  expected {expected:w1$}  actual {actual}");
            }
        }
        let unsupported = c.unsupported();
        if !unsupported.is_empty() {
            let n: usize = unsupported.iter().map(|(_, cs)| cs.len()).sum();
            let _ = writeln!(out, "\n{label}: {n} unsupported");
            for (why, cases) in unsupported {
                let names: Vec<String> = cases.iter().map(|c| printable(c).into_owned()).collect();
                let _ = writeln!(out, "  {}: {}", printable(why), names.join(", "));
            }
        }
    }
    out
}

/// How one case changed between two sides of a comparison.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CaseChange {
    /// The case name.
    pub case: String,
    /// Whether it is a security case.
    pub security: bool,
    /// Its outcome on side A.
    pub a: Outcome,
    /// Its outcome on side B.
    pub b: Outcome,
    /// What B's failure expected (empty unless B failed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub expected: String,
    /// What B did (the reason for an unsupported, the error for a failure).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub actual: String,
}

/// The posix side of a comparison for one target and family.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PosixDiff {
    /// The target (side B's in a baseline comparison).
    pub target: String,
    /// The family.
    pub family: String,
    /// Cases passed and run on side A.
    pub passed_a: usize,
    /// Cases run on side A.
    pub cases_a: usize,
    /// Cases unsupported on side A (the filesystem could not express them).
    pub unsupported_a: usize,
    /// Cases passed on side B.
    pub passed_b: usize,
    /// Cases run on side B.
    pub cases_b: usize,
    /// Cases unsupported on side B.
    pub unsupported_b: usize,
    /// Cases that passed or were unsupported in A and fail in B.
    pub newly_failing: Vec<CaseChange>,
    /// Cases that failed in A and pass in B.
    pub newly_passing: Vec<CaseChange>,
}

impl PosixDiff {
    /// Side A's counts as the family table shows them: `40/42 +3 unsupported`.
    pub fn text_a(&self) -> String {
        tally(self.passed_a, self.cases_a, self.unsupported_a).text()
    }

    /// Side B's counts as the family table shows them.
    pub fn text_b(&self) -> String {
        tally(self.passed_b, self.cases_b, self.unsupported_b).text()
    }
}

/// The tally of `cases` of which `passed` passed and `unsupported` could not run.
fn tally(passed: usize, cases: usize, unsupported: usize) -> Tally {
    Tally { passed, unsupported, failed: cases.saturating_sub(passed + unsupported) }
}

/// The per-family differences of two results of the posix workload: `a` and `b` the verdicts
/// of one target each (or of two targets in a baseline comparison).
pub(crate) fn diff(target: &str, a: &[Verdict], b: &[Verdict]) -> Vec<PosixDiff> {
    let mut families: Vec<&str> = Vec::new();
    for v in a.iter().chain(b) {
        if !families.contains(&v.family()) {
            families.push(v.family());
        }
    }
    families
        .into_iter()
        .map(|f| {
            let of = |s: &'_ [Verdict]| -> Vec<Verdict> { s.iter().filter(|v| v.family() == f).cloned().collect() };
            let (fa, fb) = (of(a), of(b));
            let mut d = PosixDiff {
                target: target.to_string(),
                family: f.to_string(),
                passed_a: Tally::of(&fa).passed,
                cases_a: fa.len(),
                unsupported_a: Tally::of(&fa).unsupported,
                passed_b: Tally::of(&fb).passed,
                cases_b: fb.len(),
                unsupported_b: Tally::of(&fb).unsupported,
                newly_failing: Vec::new(),
                newly_passing: Vec::new(),
            };
            for vb in &fb {
                let Some(va) = fa.iter().find(|va| va.case == vb.case) else { continue };
                let change = || CaseChange {
                    case: vb.case.clone(),
                    security: vb.security,
                    a: va.outcome,
                    b: vb.outcome,
                    expected: vb.expected.clone(),
                    actual: vb.actual.clone(),
                };
                match (va.outcome, vb.outcome) {
                    (Outcome::Pass | Outcome::Unsupported, Outcome::Fail) => d.newly_failing.push(change()),
                    (Outcome::Fail, Outcome::Pass) => d.newly_passing.push(change()),
                    _ => {}
                }
            }
            d
        })
        .collect()
}

/// The posix differences as text: one line per target and family with the pass counts, then
/// the cases newly failing (with expected and actual) and newly passing.
pub fn diff_text(diffs: &[PosixDiff], baseline: Option<&str>) -> String {
    let mut out = String::new();
    if diffs.is_empty() {
        return out;
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::ASCII_MARKDOWN).force_no_tty();
    t.set_header(["target", "posix family", "A", "B", "newly failing", "newly passing"]);
    for d in diffs {
        t.add_row([
            printable(&d.target).into_owned(),
            printable(&d.family).into_owned(),
            d.text_a(),
            d.text_b(),
            d.newly_failing.len().to_string(),
            d.newly_passing.len().to_string(),
        ]);
    }
    let _ = writeln!(out, "{t}");
    for d in diffs {
        for c in d.newly_failing.iter().chain(&d.newly_passing) {
            let target = printable(&d.target);
            let case = printable(&c.case);
            let security = if c.security { " [security]" } else { "" };
            // Two runs: what changed between builds; a baseline: how two targets differ.
            let head = match (baseline, c.b) {
                (None, Outcome::Fail) => format!("newly failing on {target}: {case}{security} (was {})", c.a.name()),
                (None, _) => format!("newly passing on {target}: {case}{security} (was {})", c.a.name()),
                (Some(b), _) => {
                    format!("{target}: {case}{security} {}, {} on {}", c.b.name(), c.a.name(), printable(b))
                }
            };
            if c.b == Outcome::Fail {
                let _ = writeln!(out, "{head}: expected {}, actual {}", printable(&c.expected), printable(&c.actual));
            } else {
                let _ = writeln!(out, "{head}");
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "posix_text_tests.rs"]
mod tests;
