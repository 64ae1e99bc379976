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
    /// The measurements so far, one per part that ran (see [`Workload::parts`]), the last
    /// marked incomplete.
    pub partial: Vec<Measurement>,
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

/// The one measurement of a workload without parts (tests).
#[cfg(test)]
pub(crate) fn one(measurements: Vec<Measurement>) -> Measurement {
    assert_eq!(measurements.len(), 1, "expected one measurement");
    measurements.into_iter().next().unwrap_or_default()
}

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

/// The separators a list of values of `key` may use in a `--workload` spec: `,` and `|` for
/// most keys; only `|` where the value's own syntax holds commas (fio's per-direction `bs=4k,64k`
/// is a read size and a write size, not a sweep); none where the value is a whole command line
/// or a name. A TOML array is a list whatever the key.
pub fn list_separators(kind: &str, key: &str) -> &'static [char] {
    match (kind, key) {
        ("io", "bs" | "blocksize" | "bssplit" | "rate" | "rate_iops") => &['|'],
        ("io", "name") | ("meta", "mdtest") | ("tree", "fsmark") => &[],
        _ => &[',', '|'],
    }
}

/// A swept value as a number in the option's base unit (bytes for sizes, a count), for the
/// axes of sweep charts; `None` for words (`randread`).
pub fn param_number(_kind: &str, _key: &str, value: &str) -> Option<f64> {
    let value = value.trim();
    if let Ok(n) = value.parse::<f64>() {
        return n.is_finite().then_some(n);
    }
    fsarena_core::units::parse_size(value).ok().map(|n| n as f64)
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
    /// The results one run gives, by name, when it gives several: a fio job file's jobs (or
    /// reporting groups), a `tree` run's loops. Empty (the default) for one unnamed result.
    fn parts(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs once in `env.root`: one measurement per part, in the order of [`Workload::parts`]
    /// (one when it has none). An interrupted run returns what ran, the last one marked
    /// incomplete; a failed one returns the error with what was measured so far.
    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError>;
}
