//! Writes a run to the store step by step: each measured repetition as soon as it finishes
//! (with its run and result the first time), the verdict at the end. A failure later in the
//! run, or a SIGKILL, loses nothing already written.
//!
//! The run's row is written together with its first measurement, never before: a run refused
//! or failed before it measured anything stores nothing, rather than an empty "incomplete" run
//! that would become `last`. When a write fails (a read-only or full disk), nothing more is
//! written, the run goes on, and [`Recorder::finish`] says so: the run then exits 1.

use crate::failure::Failure;
use crate::plan::Plan;
use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{InputError, Measurement};
use fsarena_store::{Store, StoreError};

/// The store of one run, or nothing with --no-store.
pub struct Recorder {
    store: Option<Store>,
    /// The run's id, start, plan and environment, written with its first measurement.
    head: RunReport,
    /// The first write that failed; nothing is written after it.
    failed: Option<StoreError>,
}

impl Recorder {
    /// Opens the store for writing. A database that must not or cannot be written (another
    /// program's file, a newer or damaged one, a read-only one) is bad input: exit 2, before
    /// anything runs. Nothing of the run is written yet.
    /// Only the `leader` (rank 0 under MPI) stores; the other ranks' recorders keep nothing.
    pub fn open(plan: &Plan, report: &RunReport, leader: bool) -> Result<Self, Failure> {
        let head = RunReport { results: Vec::new(), ..report.clone() };
        let store = match &plan.db {
            Some(path) if leader => Some(Store::open(path).map_err(|e| InputError::new(e.to_string()).at("--db"))?),
            _ => None,
        };
        Ok(Self { store, head, failed: None })
    }

    /// Records one measured repetition of the result at `position` of the run.
    pub fn add_measurement(&mut self, position: usize, entry: &ResultEntry, repetition: usize, m: &Measurement) {
        let (Some(store), None) = (self.store.as_mut(), &self.failed) else { return };
        let repetition = u32::try_from(repetition).unwrap_or(u32::MAX);
        if let Err(e) = store.add_repetition(&self.head, position, entry, repetition, m) {
            self.failed = Some(e);
        }
    }

    /// Records how the run ended, and returns what went wrong with the store, if anything,
    /// as one line for the run's final error.
    pub fn finish(&mut self, report: &RunReport) -> Option<String> {
        if let (Some(store), None) = (self.store.as_mut(), &self.failed) {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            let finished_unix_ms = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
            if let Err(e) = store.finish(report, finished_unix_ms) {
                self.failed = Some(e);
            }
        }
        self.failed.as_ref().map(|e| format!("the results could not be stored: {e}"))
    }
}
