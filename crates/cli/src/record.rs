//! Writes a run to the store step by step: the run when it starts, each result and each
//! measured repetition as soon as it finishes, the verdict at the end. A failure later in the
//! run, or a SIGKILL, loses nothing already written.

use crate::plan::{Failure, Plan};
use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{InputError, Measurement};
use fsarena_store::Store;

/// The store of one run, or nothing with --no-store.
pub struct Recorder {
    store: Option<Store>,
    warned: bool,
}

impl Recorder {
    /// Opens the store (a foreign or newer database is bad input: exit 2) and records the
    /// run's start.
    pub fn open(plan: &Plan, report: &RunReport) -> Result<Self, Failure> {
        let Some(path) = &plan.db else { return Ok(Self { store: None, warned: false }) };
        let store = Store::open(path).map_err(|e| InputError::new(e.to_string()).at("--db"))?;
        let mut recorder = Self { store: Some(store), warned: false };
        recorder.write(|s| s.begin_run(report));
        Ok(recorder)
    }

    fn write<T>(&mut self, f: impl FnOnce(&mut Store) -> Result<T, fsarena_store::StoreError>) -> Option<T> {
        let store = self.store.as_mut()?;
        match f(store) {
            Ok(v) => Some(v),
            Err(e) => {
                if !self.warned {
                    self.warned = true;
                    eprintln!("fsarena: warning: the results could not be stored: {e}");
                }
                None
            }
        }
    }

    /// Records a target × workload before its repetitions run.
    pub fn add_result(&mut self, run_id: &str, position: usize, entry: &ResultEntry) -> Option<i64> {
        self.write(|s| s.add_result(run_id, position, entry))
    }

    /// Records one measured repetition.
    pub fn add_measurement(&mut self, result_id: Option<i64>, repetition: usize, m: &Measurement) {
        if let Some(id) = result_id {
            self.write(|s| s.add_measurement(id, repetition as u32, m));
        }
    }

    /// Records how the run ended.
    pub fn finish(&mut self, report: &RunReport) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        self.write(|s| s.finish_run(&report.id, report.complete, now.as_millis() as u64));
    }
}
