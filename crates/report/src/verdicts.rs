//! The results of a kind whose results are verdicts (the `posix` compliance workload: its
//! registry line says `verdicts = ...`), as every report shows them: per kind one table with
//! the families of cases as rows and the targets side by side as columns (`passed/all`, where
//! "all" counts the cases the target could express, `+N unsupported` for the rest), a total
//! and a `security` row; then, per target, every failing case with what was expected and what
//! happened, and the unsupported cases grouped by their reason.
//!
//! Such a workload gives one result part per family, each with the verdict of every case
//! ([`Verdict`]). Nothing here depends on which kinds or families exist: rows are the families
//! found, the section's words are the kind's ([`VerdictSection`]). Where one target ran a case
//! more than once (repetitions, two workloads of the kind), the worst outcome stands, as
//! [`fsarena_core::Measurement::merge`] does across hosts.
//!
//! This module builds the table and the comparison of cases and writes the terminal's text;
//! [`crate::verdicts_markup`] writes the same for the HTML and Markdown reports.

use crate::table::{Cell, Column as TableColumn, Mark, Role, Table};
use crate::{ResultEntry, RunReport, VerdictSection};
use fsarena_core::{printable, Outcome, Verdict};
use std::fmt::Write as _;

/// The words of kind `kind`'s section when its results are verdicts.
pub(crate) fn section(kind: &str) -> Option<&'static VerdictSection> {
    crate::verdict_kinds().find(|(k, _)| *k == kind).map(|(_, s)| s)
}

/// Whether results of kind `kind` are verdicts.
pub(crate) fn is_verdict_kind(kind: &str) -> bool {
    section(kind).is_some()
}

/// Whether `entry` is a result of a kind whose results are verdicts.
pub(crate) fn is_verdicts(entry: &ResultEntry) -> bool {
    is_verdict_kind(&entry.workload_kind)
}

/// The parameters shared per kind ([`crate::model::Model::common`], `kind: ...`) less those of
/// the verdict kinds: their results are in their own sections, not among the results those
/// words introduce.
pub(crate) fn common_without_verdicts(common: &[String]) -> Vec<String> {
    common.iter().filter(|c| !c.split_once(": ").is_some_and(|(kind, _)| is_verdict_kind(kind))).cloned().collect()
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

/// The verdicts of several results (a target's workloads of one kind, their families): each
/// case once, in first-run order, with its worst outcome.
pub(crate) fn merged_verdicts<'e>(entries: impl IntoIterator<Item = &'e ResultEntry>) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    for v in entries.into_iter().flat_map(entry_verdicts) {
        merge_one(&mut out, &v);
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

/// The families of one verdict kind side by side for every target of the runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerdictTable {
    /// The kind.
    pub kind: &'static str,
    /// The words of its section.
    pub section: &'static VerdictSection,
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

/// The table of every verdict kind that `runs` have results of, in the registry's order.
pub(crate) fn tables(runs: &[RunReport]) -> Vec<VerdictTable> {
    crate::verdict_kinds().filter_map(|(kind, section)| VerdictTable::new(runs, kind, section)).collect()
}

impl VerdictTable {
    /// The table of the results of kind `kind` in `runs`; `None` when there are none.
    pub(crate) fn new(runs: &[RunReport], kind: &'static str, section: &'static VerdictSection) -> Option<Self> {
        let of_kind = || {
            runs.iter()
                .enumerate()
                .flat_map(|(r, run)| run.results.iter().map(move |e| (r, e)))
                .filter(|(_, e)| e.workload_kind == kind)
        };
        of_kind().next()?;
        let mut families: Vec<String> = Vec::new();
        let mut targets: Vec<&str> = Vec::new();
        for (_, e) in of_kind() {
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
                    run.results.iter().filter(|e| e.workload_kind == kind && e.target_label == target).collect();
                if entries.is_empty() {
                    continue;
                }
                let all = merged_verdicts(entries);
                let by_family =
                    families.iter().map(|f| all.iter().filter(|v| v.family() == f).cloned().collect()).collect();
                let label = if runs.len() > 1 { format!("{} {target}", runs[r].handle()) } else { target.to_string() };
                columns.push(Column { label, families: by_family });
            }
        }
        Some(Self { kind, section, families, columns })
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

    /// The family table for every surface: a family per row, a target per column, the cells
    /// where a case failed marked worst.
    pub(crate) fn table(&self) -> Table {
        let mut family = TableColumn::new("family", false);
        family.role = Role::Name;
        let mut columns = vec![family];
        columns.extend(self.columns.iter().map(|c| TableColumn::new(&c.label, true)));
        let mut table = Table::with(columns);
        for row in self.rows() {
            let mut cells: Vec<Cell> = vec![row.label.into()];
            cells.extend(row.cells.iter().map(|cell| match cell {
                None => Cell::blank(),
                Some(t) => Cell::marked(t.text(), (t.failed > 0).then_some(Mark::Worst)),
            }));
            table.push(cells);
        }
        table
    }

    /// The kind's section of the terminal report: the side-by-side table, then per target its
    /// failures (case, expected, actual, aligned) and its unsupported cases by reason. Case
    /// texts are made inert here: they are not in the [`crate::terminal`] copy's reach.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        let mut table = self.table();
        // No section heading above it in a terminal: the table's own names the kind.
        table.columns[0].title = format!("{} family", self.kind);
        out.push_str(&table.text());
        if self.columns.iter().any(|c| c.verdicts().any(|v| v.outcome == Outcome::Unsupported)) {
            out.push_str("passed/all: \"all\" counts the cases the target could express; unsupported ones are apart\n");
        }
        for c in &self.columns {
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
}

/// The one line of a verdict result in the terminal report: its title and counts, and the
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

/// The verdict side of a comparison for one kind, target and family.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VerdictDiff {
    /// The kind (said by where a surface puts the diff: a JSON key, a section).
    #[serde(skip)]
    pub kind: &'static str,
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

impl VerdictDiff {
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

/// The per-family differences of two results of verdict kind `kind`: `a` and `b` the verdicts
/// of one target each (or of two targets in a baseline comparison).
pub(crate) fn diff(kind: &'static str, target: &str, a: &[Verdict], b: &[Verdict]) -> Vec<VerdictDiff> {
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
            let mut d = VerdictDiff {
                kind,
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

/// The kinds of `diffs` in the order they first come, each with its diffs.
pub(crate) fn by_kind(diffs: &[VerdictDiff]) -> Vec<(&'static str, Vec<&VerdictDiff>)> {
    let mut out: Vec<(&'static str, Vec<&VerdictDiff>)> = Vec::new();
    for d in diffs {
        match out.iter_mut().find(|(k, _)| *k == d.kind) {
            Some((_, list)) => list.push(d),
            None => out.push((d.kind, vec![d])),
        }
    }
    out
}

/// The verdict differences as text, per kind: one line per target and family with the pass
/// counts, then the cases newly failing (with expected and actual) and newly passing.
pub fn diff_text(diffs: &[VerdictDiff], baseline: Option<&str>) -> String {
    let mut out = String::new();
    for (kind, diffs) in by_kind(diffs) {
        let family = format!("{kind} family");
        let mut t = Table::new(&[
            ("target", false),
            (&family, false),
            ("A", false),
            ("B", false),
            ("newly failing", false),
            ("newly passing", false),
        ]);
        for d in &diffs {
            t.push(vec![
                d.target.clone().into(),
                d.family.clone().into(),
                d.text_a().into(),
                d.text_b().into(),
                d.newly_failing.len().to_string().into(),
                d.newly_passing.len().to_string().into(),
            ]);
        }
        out.push_str(&t.text());
        for d in &diffs {
            for c in d.newly_failing.iter().chain(&d.newly_passing) {
                let target = printable(&d.target);
                let case = printable(&c.case);
                let security = if c.security { " [security]" } else { "" };
                // Two runs: what changed between builds; a baseline: how two targets differ.
                let head = match (baseline, c.b) {
                    (None, Outcome::Fail) => {
                        format!("newly failing on {target}: {case}{security} (was {})", c.a.name())
                    }
                    (None, _) => format!("newly passing on {target}: {case}{security} (was {})", c.a.name()),
                    (Some(b), _) => {
                        format!("{target}: {case}{security} {}, {} on {}", c.b.name(), c.a.name(), printable(b))
                    }
                };
                if c.b == Outcome::Fail {
                    let _ =
                        writeln!(out, "{head}: expected {}, actual {}", printable(&c.expected), printable(&c.actual));
                } else {
                    let _ = writeln!(out, "{head}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "verdicts_tests.rs"]
mod tests;
