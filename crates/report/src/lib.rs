//! Reports: turn a [`RunReport`] into bytes for the terminal, fsarena's JSON, fio's JSON or CSV,
//! and one or more runs into an HTML report or a Markdown report with SVG charts.
//!
//! A report never runs anything; it is built from a [`RunReport`], which comes from fresh
//! measurements or from the store.

mod charts;
mod csv;
mod escape;
mod fio_figures;
mod fio_json;
mod html;
mod human;
mod humanize;

pub use humanize::value as format_value;
mod job_curves;
mod json;
mod markdown;
mod model;
mod summary;
mod terminal;
#[cfg(test)]
mod tests;

pub use fsarena_core::run::{ResultEntry, RunReport};

pub use csv::Csv;
pub use fio_json::FioJson;
pub use html::html_report;
pub use human::Human;
pub use json::Json;
pub use markdown::markdown_report;

/// Output formats of `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A fio-like summary for people.
    Human,
    /// fsarena's own versioned JSON schema.
    Json,
    /// fio's JSON shape.
    FioJson,
    /// One row per target × workload × metric × repetition.
    Csv,
}

impl Format {
    /// Every accepted name, for error messages and help.
    pub const NAMES: &'static str = "human, json, fio-json, csv";

    /// Parses a format name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "human" | "normal" => Some(Self::Human),
            "json" => Some(Self::Json),
            "fio-json" => Some(Self::FioJson),
            "csv" => Some(Self::Csv),
            _ => None,
        }
    }

    /// The exporter for this format; `terminal` turns on colour for people.
    pub fn exporter(self, terminal: bool) -> Box<dyn Exporter> {
        match self {
            Self::Human => Box::new(Human { color: terminal }),
            Self::Json => Box::new(Json),
            Self::FioJson => Box::new(FioJson),
            Self::Csv => Box::new(Csv),
        }
    }
}

/// Turns a report into bytes.
pub trait Exporter {
    /// Serializes the whole report.
    fn serialize(&self, report: &RunReport) -> Vec<u8>;
}

/// `unix_secs` as `2026-11-22 02:15:00 UTC`.
pub fn utc_time(unix_secs: u64) -> String {
    let (y, m, d) = fio_json::civil_from_days(unix_secs / 86_400);
    let t = unix_secs % 86_400;
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", t / 3600, t / 60 % 60, t % 60)
}
