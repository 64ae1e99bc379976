//! Workloads: what runs inside a target. Each returns a [`Measurement`]; none prints or
//! stores anything.

pub mod io;

use fsarena_core::Measurement;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// What a workload gets from the runner.
pub struct RunEnv<'a> {
    /// The directory inside the target where the workload creates its files.
    pub root: &'a Path,
    /// Set by the signal handler (Ctrl-C): stop as soon as possible, keep what ran.
    pub stop: &'a AtomicBool,
    /// Progress and notes for people (stderr); never results.
    pub progress: &'a (dyn Fn(&str) + Sync),
    /// Keep the test files after a successful run, for the next repetition to reuse; the
    /// last repetition removes them. A failed or interrupted run always removes them (unless
    /// the workload's own `keep=1`).
    pub keep_files: bool,
}

impl std::fmt::Debug for RunEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnv").field("root", &self.root).finish_non_exhaustive()
    }
}

/// A failed run: what went wrong, and what was measured before it did.
#[derive(Debug)]
pub struct WorkloadError {
    /// The first error, naming file and offset where there is one.
    pub message: String,
    /// The measurement so far, marked incomplete.
    pub partial: Option<Measurement>,
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

/// A workload kind.
pub trait Workload {
    /// `io`, `meta`, ...
    fn kind(&self) -> &'static str;
    /// The parameters as given, for reports.
    fn params(&self) -> Vec<(String, String)>;
    /// Runs once in `env.root`. An interrupted run returns an incomplete measurement; a
    /// failed one returns the error with what was measured so far.
    fn run(&self, env: &RunEnv<'_>) -> Result<Measurement, WorkloadError>;
}
