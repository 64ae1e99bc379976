//! Reports: turn a [`RunReport`] into bytes for the terminal, fsarena's JSON or fio's JSON.
//!
//! A report never runs anything; it is built from fresh measurements or (later) from the store.

mod fio_figures;
mod fio_json;
mod human;
mod json;
mod summary;

use fsarena_core::Measurement;
use serde::Serialize;

pub use fio_json::FioJson;
pub use human::Human;
pub use json::Json;

/// Everything a report shows about one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunReport {
    /// Run identifier.
    pub id: String,
    /// Unix time of the run's start, in milliseconds.
    pub started_unix_ms: u64,
    /// Machine and software facts: `cpu`, `cores`, `memory`, `kernel`, `distribution`,
    /// `fsarena_version`, ... in display order.
    pub environment: Vec<(String, String)>,
    /// Options from a fio job file's `[global]` section (fio-json's `"global options"`).
    pub global_options: Vec<(String, String)>,
    /// One entry per target × workload.
    pub results: Vec<ResultEntry>,
}

/// The results of one workload on one target.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ResultEntry {
    /// The name shown in reports (`label=`, by default the spec).
    pub target_label: String,
    /// Target kind: `dir`, `ext4`, ...
    pub target_kind: String,
    /// The target's options.
    pub target_options: Vec<(String, String)>,
    /// Facts about the provisioned target: mkfs command and version, image, loop device,
    /// mount options as the kernel shows them, FUSE command and PID.
    pub target_info: Vec<(String, String)>,
    /// Workload kind: `io`, ...
    pub workload_kind: String,
    /// The workload's parameters as given.
    pub workload_params: Vec<(String, String)>,
    /// One measurement per measured repetition (one until repetitions land).
    pub measurements: Vec<Measurement>,
}

impl ResultEntry {
    /// `"<target label> · <workload>"`, the entry's name in reports.
    pub fn title(&self) -> String {
        format!("{} · {}", self.target_label, self.workload_title())
    }

    /// `"<workload kind>:<k=v,...>"`; a flag given bare (`time_based`) shows bare.
    pub fn workload_title(&self) -> String {
        let params: Vec<String> = self
            .workload_params
            .iter()
            .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") })
            .collect();
        if params.is_empty() {
            self.workload_kind.clone()
        } else {
            format!("{}:{}", self.workload_kind, params.join(","))
        }
    }
}

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
