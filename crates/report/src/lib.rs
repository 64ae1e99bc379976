//! Reports: turn a [`RunReport`] into bytes for the terminal, fsarena's JSON or fio's JSON.
//!
//! A report never runs anything; it is built from a [`RunReport`], which comes from fresh
//! measurements or from the store.

mod fio_figures;
mod fio_json;
mod human;
mod json;
mod summary;

pub use fsarena_core::run::{ResultEntry, RunReport};

pub use fio_json::FioJson;
pub use human::Human;
pub use json::Json;

/// Output formats of `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A fio-like summary for people.
    Human,
    /// fsarena's own versioned JSON schema.
    Json,
    /// fio's JSON shape.
    FioJson,
}

impl Format {
    /// Every accepted name, for error messages and help.
    pub const NAMES: &'static str = "human, json, fio-json";

    /// Parses a format name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "human" | "normal" => Some(Self::Human),
            "json" => Some(Self::Json),
            "fio-json" => Some(Self::FioJson),
            _ => None,
        }
    }

    /// The exporter for this format; `terminal` turns on colour for people.
    pub fn exporter(self, terminal: bool) -> Box<dyn Exporter> {
        match self {
            Self::Human => Box::new(Human { color: terminal }),
            Self::Json => Box::new(Json),
            Self::FioJson => Box::new(FioJson),
        }
    }
}

/// Turns a report into bytes.
pub trait Exporter {
    /// Serializes the whole report.
    fn serialize(&self, report: &RunReport) -> Vec<u8>;
}
