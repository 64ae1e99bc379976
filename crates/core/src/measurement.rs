//! What one repetition of one workload on one target produced.
//!
//! Every workload returns a [`Measurement`]; statistics, storage and reports work on this shape
//! alone: named metrics, a latency histogram per operation kind and exact counters, which
//! [`Measurement::merge`] combines. The `io` workload also fills [`Measurement::fio`] with
//! fio-style per-job detail, which only the fio-json exporters and the human summary read.

use crate::fio::{DiskUtil, FioDetail, JobResult};
use crate::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// What one repetition of one workload on one target produced.
///
/// Stored as JSON (the store's `measurements.data`); every field added since schema 1 has a
/// default, so older stored measurements still read (see [`Stored`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored")]
pub struct Measurement {
    /// Named figures (`read_iops`, `read_lat_p99`, `cpu_usr`, ...).
    pub metrics: Vec<Metric>,
    /// Latency per operation kind, named as the metrics derived from it are prefixed:
    /// `read`, `write`, `sync` for `io`; `file_creation`, `file_stat`, ... for `meta`. Each
    /// holds every sample of the measured phase over all threads (error bound: see
    /// [`LatencyHistogram`]). Empty in runs stored before histograms were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub latency: BTreeMap<String, LatencyHistogram>,
    /// Exact totals of countable things (`read_ios`, `read_bytes`, `write_ios`, ...), which
    /// add up when measurements merge.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    /// fio-style per-job detail: the `io` workload only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<FioDetail>,
    /// What the block devices under the target did over the measured phase (fio's
    /// `disk_util`): empty for targets without one (tmpfs, FUSE) and runs stored before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_util: Vec<DiskUtil>,
    /// Time series sampled over the measured phase, by name (`ops_per_s`, a flowop's rate,
    /// the page cache's size): one value per interval. Empty for workloads that keep none
    /// and for runs stored before series were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub series: BTreeMap<String, Series>,
    /// The named checks of a compliance workload (`posix`), one per case in the order run:
    /// empty for performance workloads and runs stored before verdicts were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
    /// What each rate metric is a rate of, by metric name: a counter over a span of time
    /// (`read_bw` is `read_bytes` over the read phase's span). [`Measurement::merge`]
    /// recomputes such a rate over the merged span: from the earliest part's start to the
    /// latest part's end when both parts know their window on one clock
    /// ([`RateBasis::window`]), else the longest of the spans. Ranks that take turns on the
    /// CPUs then give what the machine did over the phase, as mdtest's barrier-to-barrier time
    /// does, not a sum of the ranks' own rates. Empty for rates pushed with
    /// [`Measurement::push`] and in runs stored before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rates: BTreeMap<String, RateBasis>,
    /// Text kept with the result, by name: a server workload's server log (its last lines,
    /// `postgres.log`), for reading after the run. Empty for other workloads and runs stored
    /// before logs were kept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub logs: BTreeMap<String, String>,
    /// False when the workload stopped early (error or interrupt): the figures cover only
    /// what ran.
    pub complete: bool,
}

/// How a measurement reads from storage: today's fields, plus schema 1-3's `jobs` (fio's
/// per-job detail, then a field of the measurement itself), moved into [`Measurement::fio`].
#[derive(Deserialize)]
struct Stored {
    #[serde(default)]
    metrics: Vec<Metric>,
    #[serde(default)]
    latency: BTreeMap<String, LatencyHistogram>,
    #[serde(default)]
    counters: BTreeMap<String, u64>,
    #[serde(default)]
    fio: Option<FioDetail>,
    #[serde(default)]
    disk_util: Vec<DiskUtil>,
    #[serde(default)]
    series: BTreeMap<String, Series>,
    #[serde(default)]
    verdicts: Vec<Verdict>,
    #[serde(default)]
    rates: BTreeMap<String, RateBasis>,
    #[serde(default)]
    logs: BTreeMap<String, String>,
    /// Schema 1-3.
    #[serde(default)]
    jobs: Vec<JobResult>,
    #[serde(default)]
    complete: bool,
}

impl From<Stored> for Measurement {
    fn from(s: Stored) -> Self {
        let fio = match s.fio {
            Some(detail) => Some(detail),
            None if !s.jobs.is_empty() => Some(FioDetail { jobs: s.jobs }),
            None => None,
        };
        Measurement {
            metrics: s.metrics,
            latency: s.latency,
            counters: s.counters,
            fio,
            disk_util: s.disk_util,
            series: s.series,
            verdicts: s.verdicts,
            rates: s.rates,
            logs: s.logs,
            complete: s.complete,
        }
    }
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

    /// Adds a rate metric of `count` things over `span_ns` nanoseconds, `count` being what
    /// counter `counter` holds (or will: add it with [`Measurement::count`]): the rate keeps its basis, so merging measurements of ranks that ran side by
    /// side recomputes it over their common span (see [`Measurement::rates`]).
    pub fn push_rate(&mut self, name: &str, unit: &str, counter: &str, count: u64, span_ns: u64) {
        self.push_rate_basis(
            name,
            unit,
            count,
            RateBasis { counter: counter.to_string(), span_ns, ..RateBasis::default() },
        );
    }

    /// Adds a rate metric of `count` things over `basis` (its span, and its window and
    /// sharing when known: see [`RateBasis`]).
    pub fn push_rate_basis(&mut self, name: &str, unit: &str, count: u64, basis: RateBasis) {
        self.push(name, unit, Better::Higher, per_second(count, basis.span_ns));
        self.rates.insert(name.to_string(), basis);
    }

    /// Moves every rate's window by `by_ns` (another host's clock onto this one's).
    pub fn shift_windows(&mut self, by_ns: i64) {
        for basis in self.rates.values_mut() {
            if let Some((start, end)) = &mut basis.window {
                *start = start.saturating_add_signed(by_ns);
                *end = end.saturating_add_signed(by_ns);
            }
        }
    }

    /// The latency histogram of operation kind `op`.
    pub fn latency(&self, op: &str) -> Option<&LatencyHistogram> {
        self.latency.get(op)
    }

    /// Adds the samples of `h` to operation kind `op` (exact); an empty `h` adds nothing.
    pub fn add_latency(&mut self, op: &str, h: &LatencyHistogram) {
        if !h.is_empty() {
            self.latency.entry(op.to_string()).or_default().merge(h);
        }
    }

    /// Adds `n` to counter `name`.
    pub fn count(&mut self, name: &str, n: u64) {
        let c = self.counters.entry(name.to_string()).or_default();
        *c = c.saturating_add(n);
    }

    /// fio's per-job detail (empty for workloads other than `io`).
    pub fn jobs(&self) -> &[JobResult] {
        self.fio.as_ref().map_or(&[], |d| d.jobs.as_slice())
    }

    /// fio's per-job detail to fill or edit (an empty one is created if there is none).
    pub fn jobs_mut(&mut self) -> &mut Vec<JobResult> {
        &mut self.fio.get_or_insert_with(FioDetail::default).jobs
    }

    /// Combines `other`, measured side by side with `self` (another job of a group, another
    /// host of a multi-host run), into one measurement of both.
    ///
    /// Exact: the latency histograms (bucket counts, min, max, mean, stddev) and the
    /// counters; metrics named `<op>_lat_<stat>` (`mean`, `min`, `max`, `p50`, `p99`, `p999`,
    /// `pNN`) of an operation kind with a histogram, which are recomputed from the merged
    /// histogram (to its stated bound); rates with a basis ([`Measurement::rates`]), which are
    /// their merged counter over the merged span ([`Measurement::rates`]; a shared counter is
    /// kept once, not added: [`RateBasis::shared`]). Added: other rates (unit `.../s`) and counts (`items`,
    /// `bytes`, `ops`), exact when the parts ran over the same interval, as fio's
    /// `group_reporting` and mdtest's aggregate rates assume. Any other metric present in both
    /// (a percentage such as `cpu_usr`) becomes the mean of the two: an approximation.
    /// fio's per-job detail lists the jobs of both; `complete` only if both were.
    pub fn merge(&mut self, other: &Measurement) {
        for (op, h) in &other.latency {
            self.add_latency(op, h);
        }
        // Counters every part counts alike (mdtest's tree, built by each rank) are kept once.
        let shared: Vec<String> =
            self.rates.values().chain(other.rates.values()).filter(|b| b.shared).map(|b| b.counter.clone()).collect();
        for (name, n) in &other.counters {
            if shared.contains(name) {
                let c = self.counters.entry(name.clone()).or_default();
                *c = (*c).max(*n);
            } else {
                self.count(name, *n);
            }
        }
        for theirs in &other.metrics {
            match self.metrics.iter_mut().find(|m| m.name == theirs.name) {
                Some(ours) => ours.value = combined(ours, theirs),
                None => self.metrics.push(theirs.clone()),
            }
        }
        for (name, theirs) in &other.rates {
            match self.rates.get_mut(name) {
                Some(ours) => ours.merge(theirs),
                None => {
                    self.rates.insert(name.clone(), theirs.clone());
                }
            }
        }
        for metric in &mut self.metrics {
            if let Some(v) = histogram_figure(&self.latency, &metric.name) {
                metric.value = v;
            }
            if let Some(basis) = self.rates.get(&metric.name) {
                metric.value = per_second(self.counters.get(&basis.counter).copied().unwrap_or(0), basis.span_ns);
            }
        }
        if let Some(theirs) = &other.fio {
            self.fio.get_or_insert_with(FioDetail::default).jobs.extend(theirs.jobs.iter().cloned());
        }
        for (name, theirs) in &other.series {
            match self.series.get_mut(name) {
                Some(ours) => ours.add(theirs),
                None => {
                    self.series.insert(name.clone(), theirs.clone());
                }
            }
        }
        // A case checked on both sides (two hosts) keeps the worse outcome.
        for theirs in &other.verdicts {
            match self.verdicts.iter_mut().find(|v| v.case == theirs.case) {
                Some(ours) if theirs.outcome.worse_than(ours.outcome) => *ours = theirs.clone(),
                Some(_) => {}
                None => self.verdicts.push(theirs.clone()),
            }
        }
        // Each rank's or host's log under its own name; a name both have keeps both texts.
        for (name, text) in &other.logs {
            self.logs.entry(name.clone()).and_modify(|ours| ours.push_str(text)).or_insert_with(|| text.clone());
        }
        self.complete = self.complete && other.complete;
    }

    /// Adds a series (replacing one of the same name).
    pub fn add_series(&mut self, name: &str, series: Series) {
        self.series.insert(name.to_string(), series);
    }
}

/// How one compliance case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The filesystem did what the standard says.
    Pass,
    /// It did something else: `expected` and `actual` say what.
    Fail,
    /// The filesystem cannot express the case (ACLs off, no immutable attribute): `actual`
    /// says why. Not a pass, not hidden.
    Unsupported,
}

impl Outcome {
    /// Its name in tables and JSON: `pass`, `fail`, `unsupported`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Unsupported => "unsupported",
        }
    }

    /// Fail is worse than unsupported, which is worse than pass.
    pub fn worse_than(self, other: Outcome) -> bool {
        let rank = |o| match o {
            Outcome::Pass => 0,
            Outcome::Unsupported => 1,
            Outcome::Fail => 2,
        };
        rank(self) > rank(other)
    }
}

/// One named check and its result: `rename.dir_over_nonempty_dir.ENOTEMPTY`, expected
/// `ENOTEMPTY`, actual `EEXIST`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// `family.what.expectation`; the family is the part before the first dot.
    pub case: String,
    /// A check of access control (permissions, sticky directories, setuid clearing, ACLs,
    /// symlink following), reported apart as well as in its family.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub security: bool,
    /// How it ended.
    pub outcome: Outcome,
    /// What the standard says should happen (empty for a pass).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub expected: String,
    /// What happened (for unsupported: why the case cannot run; empty for a pass).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actual: String,
}

impl Verdict {
    /// The family: the case name up to its first dot (`rename`).
    pub fn family(&self) -> &str {
        self.case.split('.').next().unwrap_or(&self.case)
    }
}

/// The counter ([`Measurement::counters`]) by which a checking workload declares what it
/// found: `posix` its failed cases, `verify` its mismatches, `crash` its violations and
/// fsck failures. `run --strict-checks` sums it over every result of the run and exits 3 when
/// the sum is not 0; a workload that checks nothing never sets it.
pub const FINDINGS: &str = "findings";

impl Measurement {
    /// Its findings: the [`FINDINGS`] counter, 0 where it has none.
    pub fn findings(&self) -> u64 {
        self.counters.get(FINDINGS).copied().unwrap_or(0)
    }
}

/// Values sampled at a fixed interval from the start of the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The interval between samples, ns (1 s for per-second series).
    pub interval_ns: u64,
    /// The values' unit: `ops/s`, `MiB/s`, `bytes`.
    pub unit: String,
    /// One value per interval; the last may cover a partial interval.
    pub values: Vec<f64>,
}

impl Series {
    /// A per-second series of `values` in `unit`.
    pub fn per_second(unit: &str, values: Vec<f64>) -> Self {
        Self { interval_ns: 1_000_000_000, unit: unit.to_string(), values }
    }

    /// Adds `other` interval by interval (parts that ran side by side: their rates add),
    /// keeping the shorter length (a part that ended early has no later samples). Series of
    /// different intervals are left as they are.
    pub fn add(&mut self, other: &Series) {
        if self.interval_ns != other.interval_ns {
            return;
        }
        self.values.truncate(other.values.len());
        for (a, b) in self.values.iter_mut().zip(&other.values) {
            *a += b;
        }
    }
}

/// What a rate metric is a rate of: see [`Measurement::rates`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateBasis {
    /// The counter of the things counted (`read_bytes`, `file_creation_items`).
    pub counter: String,
    /// The time they took: the phase's span, from the earliest start to the latest end.
    pub span_ns: u64,
    /// The phase's start and end (ns of the host's CLOCK_MONOTONIC, ranks of other hosts
    /// shifted onto rank 0's), when the workload knows them: parts merge over the window
    /// from the earliest start to the latest end. None in runs stored before, and for
    /// workloads that give a span alone (then the longest span is the merged one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(u64, u64)>,
    /// True when every part counts the same things, so that merged parts count them once:
    /// mdtest's tree rows count one tree however many ranks build one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

impl RateBasis {
    /// The basis of both parts, measured side by side: over their common window when both
    /// know theirs, else over the longer span.
    fn merge(&mut self, theirs: &RateBasis) {
        match (self.window, theirs.window) {
            (Some((a, b)), Some((c, d))) => {
                let window = (a.min(c), b.max(d));
                self.window = Some(window);
                self.span_ns = window.1.saturating_sub(window.0);
            }
            _ => {
                self.window = None;
                self.span_ns = self.span_ns.max(theirs.span_ns);
            }
        }
        self.shared &= theirs.shared;
    }
}

/// `count` per second of `span_ns`; 0 when no time passed.
fn per_second(count: u64, span_ns: u64) -> f64 {
    if span_ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / span_ns as f64
    }
}

/// Two values of the same metric combined, by what the unit says it is.
fn combined(ours: &Metric, theirs: &Metric) -> f64 {
    let unit = ours.unit.as_str();
    if unit.ends_with("/s") || matches!(unit, "items" | "bytes" | "ops") {
        ours.value + theirs.value
    } else {
        (ours.value + theirs.value) / 2.0
    }
}

/// The value of a metric named `<op>_lat_<stat>` computed from `op`'s histogram, when there
/// is one.
fn histogram_figure(latency: &BTreeMap<String, LatencyHistogram>, name: &str) -> Option<f64> {
    let (op, stat) = name.rsplit_once("_lat_")?;
    let h = latency.get(op)?;
    match stat {
        "mean" => Some(h.mean()),
        "min" => Some(h.min() as f64),
        "max" => Some(h.max() as f64),
        "p999" => Some(h.percentile(99.9) as f64),
        _ => {
            let digits = stat.strip_prefix('p')?;
            let p: f64 = digits.parse().ok()?;
            (p <= 100.0).then(|| h.percentile(p) as f64)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {

    #[test]
    fn series_merge_by_interval_and_old_records_have_none() {
        let mut a = Measurement::default();
        a.add_series("ops_per_s", Series::per_second("ops/s", vec![1.0, 2.0, 3.0]));
        let mut b = Measurement::default();
        b.add_series("ops_per_s", Series::per_second("ops/s", vec![10.0, 20.0]));
        b.add_series("cache", Series::per_second("bytes", vec![5.0]));
        a.merge(&b);
        assert_eq!(a.series["ops_per_s"].values, [11.0, 22.0], "added, cut to the shorter");
        assert_eq!(a.series["cache"].values, [5.0]);
        let old: Measurement = serde_json::from_str(r#"{"metrics":[],"complete":true}"#).unwrap();
        assert!(old.series.is_empty());
        let back: Measurement = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back.series, a.series);
    }
    use super::*;

    /// A measurement of `samples` on op `read`, with the metrics io derives from them.
    fn measured(samples: &[u64], iops: f64) -> Measurement {
        let mut m = Measurement { complete: true, ..Default::default() };
        let h = LatencyHistogram::of(samples.iter().copied());
        m.push("read_iops", "ops/s", Better::Higher, iops);
        m.push("read_lat_p99", "ns", Better::Lower, h.percentile(99.0) as f64);
        m.push("read_lat_mean", "ns", Better::Lower, h.mean());
        m.push("cpu_usr", "%", Better::Lower, iops / 100.0);
        m.add_latency("read", &h);
        m.count("read_ios", samples.len() as u64);
        m
    }

    #[test]
    fn rates_with_a_basis_merge_over_the_longest_span() {
        // Two ranks started together: one moved 100 MB in 1 s, the other 50 MB in 2 s. Over
        // the phase's span (2 s) they moved 150 MB: 75 MB/s, not 100 + 25 = 125 MB/s.
        let rank = |bytes: u64, span_ns: u64| {
            let mut m = Measurement { complete: true, ..Default::default() };
            m.count("read_bytes", bytes);
            m.push_rate("read_bw", "bytes/s", "read_bytes", bytes, span_ns);
            m
        };
        let mut a = rank(100_000_000, 1_000_000_000);
        assert_eq!(a.metric("read_bw").unwrap().value, 100e6);
        a.merge(&rank(50_000_000, 2_000_000_000));
        assert_eq!(a.metric("read_bw").unwrap().value, 75e6);
        assert_eq!(a.rates["read_bw"].span_ns, 2_000_000_000);
        // Kept in storage.
        let back: Measurement = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn rates_with_windows_merge_over_the_earliest_start_to_the_latest_end() {
        // Two ranks that took turns on one CPU: 1000 stats in 0-1 s and 1000 in 1-2 s. Each
        // rank's own span is 1 s; the machine did 2000 in 2 s, not 2000 in 1 s.
        let rank = |items: u64, start: u64, end: u64, shared: bool| {
            let mut m = Measurement { complete: true, ..Default::default() };
            m.count("file_stat_items", items);
            let basis = RateBasis {
                counter: "file_stat_items".into(),
                span_ns: end - start,
                window: Some((start, end)),
                shared,
            };
            m.push_rate_basis("file_stat", "ops/s", items, basis);
            m
        };
        let mut a = rank(1000, 5_000_000_000, 6_000_000_000, false);
        a.merge(&rank(1000, 6_000_000_000, 7_000_000_000, false));
        assert_eq!(a.metric("file_stat").unwrap().value, 1000.0);
        assert_eq!(a.rates["file_stat"].window, Some((5_000_000_000, 7_000_000_000)));
        // A rank's clock shifted onto another's moves its window.
        let mut late = rank(1000, 6_000_000_000, 7_000_000_000, false);
        late.shift_windows(-1_000_000_000);
        let mut b = rank(1000, 5_000_000_000, 6_000_000_000, false);
        b.merge(&late);
        assert_eq!(b.metric("file_stat").unwrap().value, 2000.0);
        // Shared counts (the tree every rank builds) are kept once.
        let mut t = rank(1, 0, 1_000_000, true);
        t.merge(&rank(1, 0, 1_000_000, true));
        assert_eq!(t.counters["file_stat_items"], 1);
        assert_eq!(t.metric("file_stat").unwrap().value, 1000.0);
        // Without a window on one side: the longest span, as before.
        let mut c = rank(1000, 0, 1_000_000_000, false);
        let mut plain = Measurement::default();
        plain.count("file_stat_items", 1000);
        plain.push_rate("file_stat", "ops/s", "file_stat_items", 1000, 2_000_000_000);
        c.merge(&plain);
        assert_eq!(c.metric("file_stat").unwrap().value, 1000.0);
        let back: Measurement = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn merge_is_exact_for_histograms_counters_and_latency_metrics() {
        let fast: Vec<u64> = (1..=900).map(|i| 1_000 + i).collect();
        let slow: Vec<u64> = (1..=100).map(|i| 90_000 + i * 7).collect();
        let mut a = measured(&fast, 1000.0);
        let b = measured(&slow, 10.0);
        a.merge(&b);
        let all: Vec<u64> = fast.iter().chain(&slow).copied().collect();
        let one = LatencyHistogram::of(all.iter().copied());
        assert_eq!(a.latency("read"), Some(&one));
        assert_eq!(a.counters["read_ios"], 1000);
        // Recomputed from the merged histogram, not averaged: p99 is in the slow job's range.
        assert_eq!(a.metric("read_lat_p99").unwrap().value, one.percentile(99.0) as f64);
        assert!(a.metric("read_lat_p99").unwrap().value > 90_000.0);
        assert_eq!(a.metric("read_lat_mean").unwrap().value, one.mean());
        // Rates add; a percentage is averaged.
        assert_eq!(a.metric("read_iops").unwrap().value, 1010.0);
        assert_eq!(a.metric("cpu_usr").unwrap().value, 5.05);
        assert!(a.complete);
        a.merge(&Measurement::default());
        assert!(!a.complete);
    }

    #[test]
    fn stored_measurements_of_schema_3_and_older_still_read() {
        // Schema 1-3: fio's jobs at the top level, no histograms.
        let old = r#"{"metrics":[{"name":"read_iops","unit":"ops/s","better":"higher","value":5.0}],
            "jobs":[{"name":"seqread","group_id":0,"clones":1,"options":[],
              "read":{"io_bytes":4096,"total_ios":1,"short_ios":0,"runtime":1000,
                "clat":{"min":7,"max":7,"mean":7.0,"stddev":0.0,"samples":1,"percentiles":[[50.0,7]]},
                "bw_series":[],"iops_series":[]},
              "write":{"io_bytes":0,"total_ios":0,"short_ios":0,"runtime":0,
                "clat":{"min":0,"max":0,"mean":0.0,"stddev":0.0,"samples":0,"percentiles":[]},
                "bw_series":[],"iops_series":[]},
              "trim":{"io_bytes":0,"total_ios":0,"short_ios":0,"runtime":0,
                "clat":{"min":0,"max":0,"mean":0.0,"stddev":0.0,"samples":0,"percentiles":[]},
                "bw_series":[],"iops_series":[]},
              "sync":{"min":0,"max":0,"mean":0.0,"stddev":0.0,"samples":0,"percentiles":[]},
              "job_runtime":1000,"layout_time":0,"layout_bytes":0,"verify_time":0,"usr_cpu":0.0,
              "sys_cpu":0.0,"ctx":0,"majf":0,"minf":0,"error":0,"error_message":null}],
            "complete":true}"#;
        let m: Measurement = serde_json::from_str(old).unwrap();
        assert_eq!(m.jobs().len(), 1);
        assert_eq!(m.jobs()[0].read.clat.percentiles, [(50.0, 7)]);
        assert!(m.latency.is_empty() && m.jobs()[0].read.clat_histogram.is_none());
        // Written back, the detail is under "fio" and nothing is lost.
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains("\"fio\"") && !text.contains("\"jobs\":[{\"name\":\"seqread\"},"));
        assert_eq!(serde_json::from_str::<Measurement>(&text).unwrap(), m);
    }

    #[test]
    fn a_measurement_with_histograms_round_trips() {
        let m = measured(&[5, 500, 5_000, 50_000], 4.0);
        let back: Measurement = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.latency("read").unwrap().percentile(99.0), m.latency("read").unwrap().percentile(99.0));
    }
}
