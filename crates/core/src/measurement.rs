//! What one repetition of one workload on one target produced.
//!
//! Every workload returns a [`Measurement`]; statistics, storage and reports work on this shape
//! alone. The `io` workload also fills [`Measurement::jobs`] with fio-style per-job detail,
//! which the fio-json exporter and the human summary use.

use crate::Nanos;
use serde::{Deserialize, Serialize};

/// Whether a larger value of a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughput, operations per second.
    Higher,
    /// Latency, time.
    Lower,
}

/// One named figure, e.g. `read_iops`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// snake_case name reusing the reference tool's words.
    pub name: String,
    /// `ops/s`, `bytes/s`, `ns`, `%`, ...
    pub unit: String,
    /// Which direction is better.
    pub better: Better,
    /// The value.
    pub value: f64,
}

/// Latency statistics of one operation kind, in nanoseconds.
///
/// `min`, `max`, `mean` and `stddev` are exact; `percentiles` come from a histogram whose
/// relative error bound is stated in `fsarena_stats::LatencyHistogram`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (n-1), as fio prints it.
    pub stddev: f64,
    /// Number of samples.
    pub samples: u64,
    /// `(percentile, value)` pairs, e.g. `(99.0, 1234)`.
    pub percentiles: Vec<(f64, u64)>,
}

/// min/max/mean/stddev over per-interval samples (fio's `bw_*` and `iops_*`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Number of samples.
    pub samples: u64,
}

/// One direction (read, write or trim) of one job or group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionResult {
    /// Bytes transferred in the measured phase.
    pub io_bytes: u64,
    /// Completed I/Os in the measured phase.
    pub total_ios: u64,
    /// I/Os that transferred less than asked.
    pub short_ios: u64,
    /// Measured time of this direction (ramp and layout excluded).
    pub runtime: Nanos,
    /// Completion latency (the syscall, for synchronous engines).
    pub clat: LatencySummary,
    /// Bytes per second, one value per whole second of the measured phase.
    pub bw_series: Vec<f64>,
    /// I/Os per second, one value per whole second of the measured phase.
    pub iops_series: Vec<f64>,
}

impl DirectionResult {
    /// Bytes per second over the runtime; 0 when nothing ran.
    pub fn bw_bytes(&self) -> f64 {
        if self.runtime.0 == 0 {
            0.0
        } else {
            self.io_bytes as f64 * 1e9 / self.runtime.0 as f64
        }
    }
    /// I/Os per second over the runtime; 0 when nothing ran.
    pub fn iops(&self) -> f64 {
        if self.runtime.0 == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1e9 / self.runtime.0 as f64
        }
    }
}

/// One fio-style job (or one reporting group under `group_reporting`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// The job's name (`[section]` of a fio job file).
    pub name: String,
    /// fio's `groupid`: jobs separated by `stonewall`/`new_group` get different groups.
    pub group_id: u32,
    /// How many job clones this result covers (numjobs under group_reporting).
    pub clones: u32,
    /// The job's options as given, values as strings (fio's `"job options"`).
    pub options: Vec<(String, String)>,
    /// Reads.
    pub read: DirectionResult,
    /// Writes.
    pub write: DirectionResult,
    /// Trims (none yet; kept for fio's shape).
    pub trim: DirectionResult,
    /// fsync/fdatasync latency.
    pub sync: LatencySummary,
    /// Wall time of the measured phase.
    pub job_runtime: Nanos,
    /// Time spent laying out files before the measured phase.
    pub layout_time: Nanos,
    /// Bytes written to lay out files.
    pub layout_bytes: u64,
    /// Time spent in the verify pass.
    pub verify_time: Nanos,
    /// User CPU time over the measured phase, percent of `job_runtime` (per clone, as fio).
    pub usr_cpu: f64,
    /// System CPU time, likewise.
    pub sys_cpu: f64,
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    /// Major page faults.
    pub majf: u64,
    /// Minor page faults.
    pub minf: u64,
    /// errno of the first error, 0 if none (fio's `error`).
    pub error: i32,
    /// The first error, in words.
    pub error_message: Option<String>,
}

/// What one repetition of one workload on one target produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Named figures (`read_iops`, `read_lat_p99`, `cpu_usr`, ...).
    pub metrics: Vec<Metric>,
    /// fio-style per-job detail (the `io` workload only).
    pub jobs: Vec<JobResult>,
    /// False when the workload stopped early (error or interrupt): the figures cover only
    /// what ran.
    pub complete: bool,
}

impl Measurement {
    /// The metric named `name`.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// Adds a metric.
    pub fn push(&mut self, name: &str, unit: &str, better: Better, value: f64) {
        self.metrics.push(Metric { name: name.to_string(), unit: unit.to_string(), better, value });
    }
}
