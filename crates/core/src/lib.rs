//! Domain types of fsarena: specs, units, measurements and input errors.
//!
//! This crate does no I/O. Every other crate depends on it, so it holds only the shapes
//! that cross crate boundaries.

pub mod error;
pub mod fio;
pub mod fio_text;
pub mod histogram;
pub mod measurement;
pub mod option;
pub mod run;
pub mod spec;
pub mod sweep;
pub mod text;
pub mod units;

pub use error::InputError;
pub use fio::{DirectionResult, DiskUtil, FioDetail, JobResult};
pub use histogram::LatencyHistogram;
pub use measurement::{
    Better, LatencySummary, Measurement, Metric, Outcome, RateBasis, Series, SeriesSummary, Verdict, FINDINGS,
};
pub use run::Param;
pub use spec::Spec;
pub use text::{did_you_mean, human_duration, printable, shell_quote};
pub use units::{Bytes, Nanos};

/// Version of fsarena's own JSON results schema (`--output-format json`).
pub const SCHEMA_VERSION: u32 = 1;

/// fsarena's version, as shown in reports and in fio-json's `"fsarena version"`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// fio's default completion-latency percentile list (`percentile_list`).
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];
