//! fio's flow control (`flow`, `flow_id`, `flow_sleep`): the jobs that share a `flow_id`
//! issue I/Os in the ratio of their `flow` weights.
//!
//! As fio 3.33 (flow.c): each flow keeps a counter of the I/Os its jobs issued (from one)
//! and the sum of the weights of its jobs that have not exited, every clone of every job
//! of the file counted from the start (fio adds a job's weight when it reads the job, and
//! takes it away, with the job's own count, when the job is reaped). Before each I/O a job
//! compares its share of the counter with its share of the weights: above it, it is held
//! back (fio's `io_u_quiesce`, then `flow_sleep` microseconds) and asks again; otherwise it
//! counts the I/O in both and issues it.
//!
//! A job leaves its flow when it is reaped, as fio's `flow_exit_job` runs in `reap_threads`,
//! from the main loop that looks at the jobs every 10 ms: until then its count still holds
//! the others back. A clone that ends only reports its count and weight ([`Flow::leave`]);
//! whoever runs the stage takes them away at its next look ([`Flows::reap`]). Taken away at
//! once, the last of two time-based jobs ran unthrottled for however much later its clock
//! ended: on a busy machine 1 % more reads per write than fio in fio's examples/flow.fio.
//!
//! The counters live in a shared anonymous mapping made before any job process is forked,
//! so that processes (fio's default) and threads share them alike.

use super::jobfile::JobDef;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// fio's `FLOW_MAX_WEIGHT`.
pub const MAX_WEIGHT: u32 = 1000;

/// One flow's shared counters.
#[derive(Debug)]
pub struct Flow {
    used: AtomicBool,
    id: AtomicU32,
    /// I/Os its jobs issued, plus 1 (fio's start), less the counts of the jobs reaped.
    counter: AtomicU64,
    /// The weights of its clones that have not been reaped.
    weight: AtomicU64,
    /// The counts of the clones that ended since the last reap.
    ended_count: AtomicU64,
    /// Their weights.
    ended_weight: AtomicU64,
}

impl Flow {
    /// fio's `flow_threshold_exceeded`: whether a clone of weight `weight` that issued
    /// `mine` I/Os of the flow must wait; when it need not, the I/O is counted.
    pub fn admit(&self, mine: &mut u64, weight: u32) -> bool {
        let counter = self.counter.load(Ordering::Relaxed).max(1);
        let total = self.weight.load(Ordering::Relaxed).max(1);
        if *mine as f64 / counter as f64 > f64::from(weight) / total as f64 {
            return false;
        }
        self.counter.fetch_add(1, Ordering::Relaxed);
        *mine += 1;
        true
    }

    /// A clone of weight `weight` that issued `mine` I/Os of the flow exited: it leaves
    /// the flow at the next [`Flows::reap`].
    pub fn leave(&self, mine: u64, weight: u32) {
        self.ended_count.fetch_add(mine, Ordering::Relaxed);
        self.ended_weight.fetch_add(u64::from(weight), Ordering::Relaxed);
    }

    /// Takes away the counts and weights of the clones that ended since the last call.
    fn reap(&self) {
        let count = self.ended_count.swap(0, Ordering::Relaxed);
        let weight = self.ended_weight.swap(0, Ordering::Relaxed);
        self.counter.fetch_sub(count, Ordering::Relaxed);
        self.weight.fetch_sub(weight, Ordering::Relaxed);
    }
}

// SAFETY: only atomics, and all-zero is a valid, unused flow.
unsafe impl super::shared::SharedZeroed for Flow {}

/// Every flow of a workload, in a mapping shared with the job processes.
pub struct Flows(super::shared::SharedArray<Flow>);

impl std::fmt::Debug for Flows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Flows({})", self.0.len())
    }
}

impl Flows {
    /// The flows of `jobs` (every job with a `flow` weight), each with its clones' weights.
    pub fn of(jobs: &[JobDef]) -> std::io::Result<Self> {
        let mut ids: Vec<u32> = jobs.iter().filter(|j| j.options.flow > 0).map(|j| j.options.flow_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let flows = super::shared::SharedArray::<Flow>::zeroed(ids.len())?;
        for (i, id) in ids.iter().enumerate() {
            let weight: u64 = jobs
                .iter()
                .filter(|j| j.options.flow > 0 && j.options.flow_id == *id)
                .map(|j| u64::from(j.options.flow) * u64::from(j.options.clones()))
                .sum();
            let Some(f) = flows.get(i) else { continue };
            f.id.store(*id, Ordering::Relaxed);
            f.counter.store(1, Ordering::Relaxed);
            f.weight.store(weight, Ordering::Relaxed);
            f.used.store(true, Ordering::Release);
        }
        Ok(Self(flows))
    }

    /// fio's `reap_threads` for the flows: the clones that ended since the last call leave
    /// their flows. Whoever runs a stage calls it at each look at its clones, and once more
    /// when they have all ended.
    pub fn reap(&self) {
        (0..self.0.len()).filter_map(|i| self.0.get(i)).filter(|f| f.used.load(Ordering::Acquire)).for_each(Flow::reap);
    }

    /// The flow of `id`, if a job has a weight in it.
    pub fn get(&self, id: u32) -> Option<&Flow> {
        (0..self.0.len())
            .filter_map(|i| self.0.get(i))
            .find(|f| f.used.load(Ordering::Acquire) && f.id.load(Ordering::Relaxed) == id)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn two_jobs_issue_in_the_ratio_of_their_weights() {
        // fio's examples/flow.fio: weights 1 and 8 in flow 0. Taking turns as fast as each
        // is admitted, the heavier job issues 8 I/Os for each of the lighter one's.
        let jobs =
            crate::io::jobfile::parse_str("[global]\nsize=1m\nflow_sleep=1\n[a]\nflow=1\n[b]\nflow=8\n", "f.fio")
                .unwrap()
                .jobs;
        let flows = Flows::of(&jobs).unwrap();
        let flow = flows.get(0).unwrap();
        assert!(flows.get(1).is_none());
        let (mut a, mut b) = (0u64, 0u64);
        for _ in 0..9000 {
            flow.admit(&mut a, 1);
            flow.admit(&mut b, 8);
        }
        let ratio = b as f64 / a as f64;
        assert!((7.9..8.1).contains(&ratio), "b/a = {ratio} ({b} and {a})");
        // A job that exits still holds the other back until it is reaped (fio's
        // flow_exit_job, from reap_threads).
        flow.leave(a, 1);
        let before = b;
        for _ in 0..100 {
            flow.admit(&mut b, 8);
        }
        assert!(b - before < 100 && b <= 8 * (a + 1) + 1, "{} I/Os admitted before the reap", b - before);
        // Reaped, it takes its count and weight away: the other runs alone.
        flows.reap();
        let before = b;
        for _ in 0..100 {
            flow.admit(&mut b, 8);
        }
        assert_eq!(b - before, 100);
        // A second reap takes nothing more away.
        flows.reap();
        for _ in 0..100 {
            flow.admit(&mut b, 8);
        }
        assert_eq!(b - before, 200);
    }

    #[test]
    fn jobs_without_a_weight_have_no_flow() {
        let jobs = crate::io::jobfile::parse_str("[a]\nsize=1m\n", "f.fio").unwrap().jobs;
        assert!(Flows::of(&jobs).unwrap().get(0).is_none());
    }
}
