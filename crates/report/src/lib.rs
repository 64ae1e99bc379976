//! Reports: turn runs into bytes for the terminal, fsarena's JSON, fio's JSON, CSV, Markdown
//! or HTML (with SVG charts), each through one fallible [`Exporter`].
//!
//! A report never runs anything; it is built from [`RunReport`]s, which come from fresh
//! measurements or from the store. Every format groups results the same way ([`model`]): one
//! result per target × workload kind and parameters × part, labelled by what varies.

mod ab;
mod charts;
mod csv;
mod escape;
pub mod experiment;
mod figures;
mod figures_markup;
pub mod findings;
#[cfg(test)]
mod findings_tests;
mod fio_disk;
mod fio_figures;
mod fio_json;
mod format;
mod html;
mod human;
mod humanize;
mod job_curves;
mod json;
mod markdown;
mod matrix;
mod model;
#[cfg(test)]
mod presenter_tests;
mod significance;
mod summary;
mod sweep;
pub mod table;
mod terminal;
#[cfg(test)]
mod tests;
pub mod told;
mod verdicts;
mod verdicts_markup;

pub use fsarena_core::run::{Presenter, ResultEntry, RunReport, VerdictSection};

pub use ab::{ab_table, compare_runs, compare_targets, AbComparison, AbRow, AbVerdict, AB_NOTE};
pub use csv::Csv;
pub use fio_json::{FioJson, FioJsonPlus, FIO_VERSION};
pub use format::{OutputFormat, UnknownFormat};
pub use html::{html_parts, html_report, Html, Part};
pub use human::Human;
pub use humanize::value as format_value;
pub use json::Json;
pub use markdown::{markdown_report, Markdown};
pub use verdicts::{diff_text as verdict_diff_text, entry_verdicts, CaseChange, VerdictDiff};

/// Why a report could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A JSON document could not be serialized.
    #[error("cannot serialize the {format} output: {source}")]
    Json {
        /// The format being written.
        format: &'static str,
        /// serde_json's reason.
        source: serde_json::Error,
    },
    /// A format that describes one run was given none or several.
    #[error("the {format} output describes one run, not {runs}: use `fsarena report` (html, md) for several")]
    OneRun {
        /// The format being written.
        format: &'static str,
        /// How many runs it was given.
        runs: usize,
    },
}

/// Turns runs into the bytes of one format. The contract: `Ok` holds the whole document;
/// `Err` means nothing usable was produced and the caller must not print a partial one.
pub trait Exporter {
    /// Serializes `runs` (most formats take exactly one: see [`ExportError::OneRun`]).
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, ExportError>;
}

/// The one run of a single-run format, or [`ExportError::OneRun`].
pub(crate) fn one_run<'a>(runs: &'a [RunReport], format: &'static str) -> Result<&'a RunReport, ExportError> {
    match runs {
        [run] => Ok(run),
        _ => Err(ExportError::OneRun { format, runs: runs.len() }),
    }
}

/// `value` as pretty JSON with a final newline.
pub(crate) fn pretty_json(value: &serde_json::Value, format: &'static str) -> Result<Vec<u8>, ExportError> {
    let mut out = serde_json::to_vec_pretty(value).map_err(|source| ExportError::Json { format, source })?;
    out.push(b'\n');
    Ok(out)
}

/// `unix_secs` as `2026-11-22 02:15:00 UTC`.
pub fn utc_time(unix_secs: u64) -> String {
    let (y, m, d) = fio_json::civil_from_days(unix_secs / 86_400);
    let t = unix_secs % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", t / 3600, t / 60 % 60, t % 60)
}

/// How each workload kind presents its results, by kind name in the registry's order: set
/// once per process by whoever knows the kinds (the binary, from the workload registry), read
/// by every format. The report crate knows no kind by name, so a kind with its own
/// presentation (a text block, verdicts) never edits it.
static PRESENTERS: std::sync::OnceLock<Vec<(&'static str, Presenter)>> = std::sync::OnceLock::new();

/// Registers the kinds' presenters; the first call wins (every caller passes the same
/// registry).
pub fn set_presenters(presenters: Vec<(&'static str, Presenter)>) {
    let _ = PRESENTERS.set(presenters);
}

/// Every registered kind and its presenter, in the registry's order.
fn presenters() -> &'static [(&'static str, Presenter)] {
    // The unit tests register kinds of their own, whichever test runs first.
    #[cfg(test)]
    set_presenters(presenter_tests::presenters());
    PRESENTERS.get().map_or(&[], Vec::as_slice)
}

/// The presenter registered for kind `kind`.
fn presenter(kind: &str) -> Option<&'static Presenter> {
    presenters().iter().find(|(k, _)| *k == kind).map(|(_, p)| p)
}

/// The kinds whose results are verdicts, with the words of their sections, in the registry's
/// order.
fn verdict_kinds() -> impl Iterator<Item = (&'static str, &'static VerdictSection)> {
    presenters().iter().filter_map(|(k, p)| Some((*k, p.verdicts?)))
}
