//! Workloads: what runs inside a target. Each returns a [`Measurement`]; none prints or
//! stores anything.

pub mod footprint;
mod gate;
pub mod io;
pub mod meta;
pub mod plain;
pub mod tree;

pub use footprint::{Footprint, MachineLimits};

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
    /// Syncs and drops the page cache, dentries and inodes, for a workload that must measure
    /// cold after an untimed step of its own (meta's build, `drop_caches=phase`). `None` when
    /// the run keeps caches (`--no-drop-caches`); the error says why a drop failed (not root).
    pub drop_caches: Option<&'a (dyn Fn() -> Result<(), String> + Sync)>,
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

/// Workload kinds accepted by `--workload`.
pub const KINDS: &str = "io, meta, tree";

/// Parses and checks a `--workload` spec (or a TOML `[[workload]]` table turned into one),
/// without side effects.
pub fn parse(spec: &fsarena_core::Spec) -> Result<Box<dyn Workload + Send + Sync>, fsarena_core::InputError> {
    use fsarena_core::InputError;
    match spec.kind.as_str() {
        "io" => Ok(Box::new(io::IoWorkload::from_spec(spec)?)),
        "meta" => Ok(Box::new(meta::MetaWorkload::from_spec(spec)?)),
        "tree" => Ok(Box::new(tree::TreeWorkload::from_spec(spec)?)),
        "personality" | "kv" | "sqlite" | "exec" | "posix" | "crash" | "verify" => Err(InputError::new(format!(
            "workload kind '{}' is not supported yet: accepted kinds are {KINDS}",
            spec.kind
        ))),
        other => Err(InputError::new(format!("unknown workload kind '{other}': accepted kinds are {KINDS}"))),
    }
}

/// A workload kind.
pub trait Workload: std::fmt::Debug {
    /// `io`, `meta`, ...
    fn kind(&self) -> &'static str;
    /// The parameters as given, for reports.
    fn params(&self) -> Vec<(String, String)>;
    /// Options shared by all of the workload's jobs (a fio job file's `[global]`), for
    /// fio-json; none by default.
    fn global_options(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// What a run needs at its largest moment (threads, memory, bytes and files on the
    /// target), for the checks made before anything is created.
    fn footprint(&self) -> Footprint;
    /// What it will do, one line per job, for `--dry-run`.
    fn describe(&self) -> Vec<String>;
    /// Runs once in `env.root`. An interrupted run returns an incomplete measurement; a
    /// failed one returns the error with what was measured so far.
    fn run(&self, env: &RunEnv<'_>) -> Result<Measurement, WorkloadError>;
}
