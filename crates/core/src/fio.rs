//! fio's per-job view of an `io` run: the io-only payload of a [`Measurement`]
//! ([`Measurement::fio`]), from which the fio-json exporters and the fio-like human summary
//! print fio's shapes. Nothing generic (statistics, storage, comparisons) reads it.

use crate::{LatencyHistogram, LatencySummary, Measurement, Nanos};
use serde::{Deserialize, Serialize};

/// The `io` workload's fio-style detail of one measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FioDetail {
    /// One entry per job clone as fio prints them, or one per reporting group under
    /// `group_reporting`.
    pub jobs: Vec<JobResult>,
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
    /// Submission latency (fio's slat): from the I/O's preparation to the return of the
    /// commit that sent it. Queued engines only; no samples for synchronous engines, as fio
    /// records none for them, and in runs stored before it was measured.
    #[serde(default, skip_serializing_if = "no_samples")]
    pub slat: LatencySummary,
    /// Completion latency (the syscall, for synchronous engines).
    pub clat: LatencySummary,
    /// Total latency (fio's lat), from the I/O's preparation to its completion: slat + clat.
    /// `None` when it is `clat` itself: synchronous engines, whose one clock read per I/O
    /// times both, and runs stored before it was measured. Read it with [`Self::lat`].
    #[serde(default, rename = "lat", skip_serializing_if = "Option::is_none")]
    pub total_lat: Option<LatencySummary>,
    /// The histogram behind `total_lat`, when there is one (queued engines), for fio's
    /// `lat_percentiles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_histogram: Option<LatencyHistogram>,
    /// The histogram behind `clat`, when the measurement holds several jobs. `None` when this
    /// job is its measurement's only one: the measurement's own histogram of the direction
    /// (`latency["read"]`) is then this job's, stored once ([`job_latency`] finds either);
    /// also `None` in runs stored before histograms were kept (schema 3 and older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat_histogram: Option<LatencyHistogram>,
    /// Bytes per second, one value per whole second of the measured phase.
    pub bw_series: Vec<f64>,
    /// I/Os per second, one value per whole second of the measured phase.
    pub iops_series: Vec<f64>,
}

/// True for a summary of nothing: such a field is left out of the stored form.
fn no_samples(l: &LatencySummary) -> bool {
    l.samples == 0
}

impl DirectionResult {
    /// Total latency (fio's lat): measured for queued engines, `clat` otherwise.
    pub fn lat(&self) -> &LatencySummary {
        self.total_lat.as_ref().unwrap_or(&self.clat)
    }
    /// The histogram behind [`Self::lat`]: its own, or `clat_hist` (the clat histogram as
    /// [`job_latency`] finds it) when lat is clat. `None` when a measured lat kept none.
    pub fn lat_histogram<'a>(&'a self, clat_hist: Option<&'a LatencyHistogram>) -> Option<&'a LatencyHistogram> {
        if self.total_lat.is_some() {
            self.lat_histogram.as_ref()
        } else {
            clat_hist
        }
    }
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
    /// The histogram behind `sync`, under the same rule as [`DirectionResult::clat_histogram`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_histogram: Option<LatencyHistogram>,
    /// The syncs were fdatasync(2): fio times them with the fsyncs (`sync.lat_ns`) but counts
    /// only fsyncs in `sync.total_ios`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub datasync: bool,
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
    /// fio's steady-state detection, for a job with `ss_dur` (fio's `"steadystate"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyStateResult>,
}

/// fio's `"steadystate"` object of a job's JSON (fio 3.33's `show_thread_status_json`): the
/// criterion, whether it held, and the last window of once-a-second samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateResult {
    /// The criterion as fio writes it back: `iops:10.000000%`, `bw_slope:1048576.000000`.
    pub ss: String,
    /// The window, in seconds (`ss_dur`).
    pub duration: u64,
    /// The criterion held, and ended the job (or the group under group_reporting).
    pub attained: bool,
    /// The criterion's last value as fio prints it (`%f`, with `%` for a percentage limit).
    pub criterion: String,
    /// The largest deviation from the window's mean, in the metric's units (deviation
    /// criteria; 0 for slopes).
    pub max_deviation: f64,
    /// The window's least-squares slope, in the metric's units per second (slope criteria;
    /// 0 for deviations).
    pub slope: f64,
    /// The mean of the window's bandwidth samples, bytes/s (fio's integer division).
    pub bw_mean: u64,
    /// The mean of the window's IOPS samples.
    pub iops_mean: u64,
    /// The window's IOPS samples, in fio's order.
    pub iops: Vec<u64>,
    /// The window's bandwidth samples in bytes/s, in fio's order.
    pub bw: Vec<u64>,
}

/// The latency histogram of operation `op` (`read`, `write`, `trim`, `sync`) of `job` within
/// `m`: the job's own, or the measurement's when the job is the measurement's only one.
/// `None` for runs stored without histograms.
pub fn job_latency<'a>(m: &'a Measurement, job: &'a JobResult, op: &str) -> Option<&'a LatencyHistogram> {
    let own = match op {
        "read" => job.read.clat_histogram.as_ref(),
        "write" => job.write.clat_histogram.as_ref(),
        "trim" => job.trim.clat_histogram.as_ref(),
        "sync" => job.sync_histogram.as_ref(),
        _ => None,
    };
    own.or_else(|| if m.jobs().len() == 1 { m.latency.get(op) } else { None })
}

/// One block device's counters over the measured phase, from `/sys/block/<name>/stat` read
/// before and after (fio's `disk_util`; ticks in ms, as the kernel counts them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUtil {
    /// The kernel's name of the device: `loop3`, `vda`, `nvme0n1`.
    pub name: String,
    /// Reads completed.
    pub read_ios: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Reads merged with a neighbour before reaching the device.
    pub read_merges: u64,
    /// Writes merged likewise.
    pub write_merges: u64,
    /// Milliseconds reads spent, summed over reads.
    pub read_ticks: u64,
    /// Milliseconds writes spent, summed over writes.
    pub write_ticks: u64,
    /// Milliseconds the device had I/O in flight (`io_ticks`): the numerator of `util`.
    pub io_ticks: u64,
    /// Weighted milliseconds of I/O in queue (`time_in_queue`, fio's `in_queue`).
    pub in_queue: u64,
    /// Milliseconds between the two readings: the denominator of `util`.
    pub msec: u64,
    /// The devices under this one, each also listed on its own (fio's slaves: for a loop
    /// device, the disk holding its backing file); fio prints their `aggr_*` beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
}

impl DiskUtil {
    /// Percent of the time the device was busy, at most 100 (fio's `util`).
    pub fn util(&self) -> f64 {
        if self.msec == 0 {
            0.0
        } else {
            (100.0 * self.io_ticks as f64 / self.msec as f64).min(100.0)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn runs_stored_before_slat_load_with_lat_as_clat() {
        let mut d =
            DirectionResult { clat: LatencySummary { min: 5, samples: 3, ..Default::default() }, ..Default::default() };
        let old = serde_json::to_string(&d).unwrap();
        assert!(!old.contains("slat") && !old.contains("\"lat\""), "nothing new stored for a sync engine: {old}");
        let back: DirectionResult = serde_json::from_str(&old).unwrap();
        assert_eq!((back.slat.samples, back.lat()), (0, &back.clat));
        // A queued engine's: both stored, lat its own.
        d.slat.samples = 3;
        d.total_lat = Some(LatencySummary { min: 9, samples: 3, ..Default::default() });
        let back: DirectionResult = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!((back.slat.samples, back.lat().min), (3, 9));
    }
}
