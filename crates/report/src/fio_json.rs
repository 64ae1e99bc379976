//! fio's JSON output shape (`--output-format=json` and `json+` of fio 3.42), so that scripts
//! written for fio keep working: same keys, same order, same units (`bw` in KiB/s, latencies
//! in ns).
//!
//! Latency figures come from each job's stored histogram (`fsarena_core::fio::job_latency`),
//! for a fresh run and a stored one alike: `clat_ns.percentile` is the histogram's percentile
//! (the same number as the human summary and the `*_lat_p99` metrics), json+'s
//! `clat_ns.bins` are fio's own bins counted exactly from it (`fio_figures::fio_bins`), and
//! `latency_ns/us/ms` are counted from it. Runs stored before histograms were kept print
//! their stored percentiles, estimated `latency_*` shares and no bins.
//!
//! The key order follows `show_thread_status_json` and `add_ddir_status_json` in fio's
//! `stat.c`; serde_json's `preserve_order` feature keeps insertion order. Whitespace and float
//! formatting are serde_json's (fio prints `"key" : 1.000000`), which JSON parsers ignore.

use crate::fio_figures::{
    fio_bins, job_direction_figures, latency_buckets, latency_buckets_of, Direction, LAT_KEYS, LAT_MS_KEYS,
};
use crate::{Exporter, RunReport};
use fsarena_core::fio::job_latency;
use fsarena_core::{JobResult, LatencyHistogram, LatencySummary, Measurement};
use serde_json::{json, Map, Value};

/// The fio release whose JSON, logs and text fsarena's fio formats follow, and whose draws
/// an `io` job follows unless it asks for another with `fio_version=`.
pub const FIO_VERSION: &str = "fio-3.33";

/// The fio release the run followed: the one its jobs asked for with fsarena's io key
/// `fio_version=` (in `[global]` or a job), else [`FIO_VERSION`].
pub fn fio_version(report: &RunReport) -> String {
    let jobs = report.results.iter().filter_map(|e| e.measurements.last()).flat_map(|m| m.jobs());
    let asked = report
        .global_options
        .iter()
        .chain(jobs.flat_map(|j| j.options.iter()))
        .find(|(k, _)| k == "fio_version")
        .map(|(_, v)| v.trim().trim_start_matches("fio-"));
    asked.map_or_else(|| FIO_VERSION.to_string(), |v| format!("fio-{v}"))
}

/// Writes `io` results in fio's JSON shape (`jobs[].read.iops`, `clat_ns.percentile`, ...).
#[derive(Debug, Clone, Copy, Default)]
pub struct FioJson;

impl Exporter for FioJson {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, crate::ExportError> {
        crate::pretty_json(&document(crate::one_run(runs, "fio-json")?, false), "fio-json")
    }
}

/// Writes fio's json+ shape: fio-json plus `clat_ns.bins` (`{"<bin value ns>": count}`).
#[derive(Debug, Clone, Copy, Default)]
pub struct FioJsonPlus;

impl Exporter for FioJsonPlus {
    fn export(&self, runs: &[RunReport]) -> Result<Vec<u8>, crate::ExportError> {
        crate::pretty_json(&document(crate::one_run(runs, "fio-json+")?, true), "fio-json+")
    }
}

/// The whole fio document; `plus` adds json+'s bins.
fn document(report: &RunReport, plus: bool) -> Value {
    // fio stamps the time it prints the results; a report may be rendered long after the run
    // (from the store), so the run's start is the only stable time we have.
    let ms = report.started_unix_ms;
    let mut root = Map::new();
    // Scripts test `"fio version"` with `startswith("fio-")` or parse its numbers: it names
    // the fio release whose output this matches; `"fsarena version"` says what wrote it
    // (docs/results-schema.md).
    root.insert("fio version".into(), json!(fio_version(report)));
    root.insert("fsarena version".into(), json!(format!("fsarena-{}", fsarena_core::VERSION)));
    root.insert("timestamp".into(), json!(ms / 1000));
    root.insert("timestamp_ms".into(), json!(ms));
    root.insert("time".into(), json!(ctime(ms / 1000)));
    if !report.global_options.is_empty() {
        // A `directory=` that the target replaced is shown as the directory used: the
        // targets' roots, `:`-separated as fio's own list of directories.
        let mut roots: Vec<&str> = Vec::new();
        for entry in &report.results {
            if let Some(r) = target_root(entry).filter(|r| !roots.contains(r)) {
                roots.push(r);
            }
        }
        let used = (!roots.is_empty()).then(|| roots.join(":"));
        root.insert("global options".into(), options_used(&report.global_options, used.as_deref()));
    }
    let mut jobs = Vec::new();
    // Each workload ran on its own (another target or workload), as jobs after a `stonewall`
    // do in fio, so each gets group ids of its own: its jobs' ids shifted past the previous
    // workload's. The parts of one workload (a job file's jobs) keep the ids the file gave
    // them, shifted together; a single workload keeps its ids unchanged.
    let (mut base, mut next_free) = (0, 0);
    let mut previous: Option<(&str, String)> = None;
    for entry in &report.results {
        let Some(m) = entry.measurements.last() else {
            continue;
        };
        let key = (entry.target_label.as_str(), entry.workload_title());
        if entry.part.is_none() || previous.as_ref() != Some(&key) {
            base = next_free;
        }
        previous = Some(key);
        let title = entry.title();
        for job in m.jobs() {
            let group_id = base + job.group_id;
            next_free = next_free.max(group_id + 1);
            let context = JobContext {
                m,
                group_id,
                start_ms: ms,
                desc: &title,
                plus,
                root: target_root(entry),
                globals: &report.global_options,
            };
            jobs.push(job_object(job, &context));
        }
    }
    root.insert("jobs".into(), Value::Array(jobs));
    // fio prints disk_util only when some job's file is on a block device.
    let disks = crate::fio_disk::report_disks(report);
    if !disks.is_empty() {
        root.insert("disk_util".into(), crate::fio_disk::disk_util_json(&disks));
    }
    Value::Object(root)
}

/// What a job's JSON needs from around the job.
struct JobContext<'a> {
    /// The job's measurement: its other jobs (group shares of bandwidth), its histograms.
    m: &'a Measurement,
    /// The job's group id in the document.
    group_id: u32,
    /// `job_start`, unix ms.
    start_ms: u64,
    /// fio's optional `"desc"` (`description=`): which target and workload ran the job.
    desc: &'a str,
    /// json+: latency objects with percentiles get their `bins`.
    plus: bool,
    /// The directory the job ran in (its target's root), shown as its `directory=`.
    root: Option<&'a str>,
    /// The `[global]` options, for the output options a job inherits (`percentile_list`).
    globals: &'a [(String, String)],
}

impl JobContext<'_> {
    /// The histogram of `op` of `job`, when the run kept it.
    fn histogram<'h>(&'h self, job: &'h JobResult, op: &str) -> Option<&'h LatencyHistogram> {
        job_latency(self.m, job, op)
    }
}

/// One element of `"jobs"` (`show_thread_status_json`).
fn job_object(job: &JobResult, context: &JobContext) -> Value {
    let mut o = Map::new();
    o.insert("jobname".into(), json!(job.name));
    o.insert("groupid".into(), json!(context.group_id));
    o.insert("job_start".into(), json!(context.start_ms));
    o.insert("error".into(), json!(job.error));
    o.insert("eta".into(), json!(0));
    // Wall seconds: the longest direction (clones run side by side), not job_runtime, which
    // sums the clones under group_reporting as fio does.
    let wall = [&job.read, &job.write, &job.trim].iter().map(|d| d.runtime.0).max().unwrap_or(0);
    let wall = if wall == 0 { job.job_runtime.0 / u64::from(job.clones.max(1)) } else { wall };
    o.insert("elapsed".into(), json!(wall.div_ceil(1_000_000_000)));
    // fio leaves the key out for a job section of no options at all.
    if !job.options.is_empty() {
        o.insert("job options".into(), options_used(&job.options, context.root));
    }
    for d in Direction::ALL {
        o.insert(d.name().into(), direction_object(job, context, d));
    }
    let sync = latency_object(&job.sync, context.histogram(job, "sync"), true, context.plus, None);
    let fsyncs = if job.datasync { 0 } else { job.sync.samples };
    o.insert("sync".into(), json!({ "total_ios": fsyncs, "lat_ns": sync }));
    o.insert("job_runtime".into(), json!(job.job_runtime.as_millis()));
    o.insert("usr_cpu".into(), json!(finite(job.usr_cpu)));
    o.insert("sys_cpu".into(), json!(finite(job.sys_cpu)));
    o.insert("ctx".into(), json!(job.ctx));
    o.insert("majf".into(), json!(job.majf));
    o.insert("minf".into(), json!(job.minf));

    // Synchronous engines keep exactly one I/O in flight and submit and complete one at a
    // time, which fio counts in its depth-1 and "4" (1 to 4) buckets. fio prints all zeros
    // when nothing was issued.
    let any_io = Direction::ALL.iter().any(|d| d.of(job).total_ios > 0);
    let full = if any_io { 100.0 } else { 0.0 };
    let depth_keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    o.insert("iodepth_level".into(), percent_map(&depth_keys, |i| if i == 0 { full } else { 0.0 }));
    let batch_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    o.insert("iodepth_submit".into(), percent_map(&batch_keys, |i| if i == 1 { full } else { 0.0 }));
    o.insert("iodepth_complete".into(), percent_map(&batch_keys, |i| if i == 1 { full } else { 0.0 }));

    // Counted from the histograms; estimated from the percentiles for runs stored without.
    let active: Vec<Direction> = Direction::ALL.iter().copied().filter(|d| d.of(job).clat.samples > 0).collect();
    let histograms: Vec<&LatencyHistogram> = active.iter().filter_map(|d| context.histogram(job, d.name())).collect();
    let (ns, us, ms) =
        if histograms.len() == active.len() { latency_buckets_of(&histograms) } else { latency_buckets(job) };
    o.insert("latency_ns".into(), percent_map(&LAT_KEYS, |i| ns[i]));
    o.insert("latency_us".into(), percent_map(&LAT_KEYS, |i| us[i]));
    o.insert("latency_ms".into(), percent_map(&LAT_MS_KEYS, |i| ms[i]));
    o.insert("latency_depth".into(), json!(1));
    o.insert("latency_target".into(), json!(0));
    o.insert("latency_target_ns".into(), json!(0));
    o.insert("latency_percentile".into(), json!(100.0));
    o.insert("latency_window".into(), json!(0));
    o.insert("latency_window_us".into(), json!(0));
    o.insert("desc".into(), json!(context.desc));
    if let Some(ss) = &job.steadystate {
        o.insert("steadystate".into(), steadystate_object(ss));
    }
    Value::Object(o)
}

/// fio's `"steadystate"` (fio 3.33's keys and order; its samples array as `"data"`).
fn steadystate_object(ss: &fsarena_core::fio::SteadyStateResult) -> Value {
    let six = |v: f64| (finite(v) * 1e6).round() / 1e6;
    json!({
        "ss": ss.ss,
        "duration": ss.duration,
        "attained": u8::from(ss.attained),
        "criterion": ss.criterion,
        "max_deviation": six(ss.max_deviation),
        "slope": six(ss.slope),
        "data": {
            "bw_mean": ss.bw_mean,
            "iops_mean": ss.iops_mean,
            "iops": ss.iops,
            "bw": ss.bw,
        },
    })
}

/// `"read"`, `"write"` or `"trim"` (`add_ddir_status_json`).
fn direction_object(job: &JobResult, context: &JobContext, d: Direction) -> Value {
    let dir = d.of(job);
    let f = job_direction_figures(context.m.jobs(), job, d);
    let histogram = context.histogram(job, d.name());
    let mut o = Map::new();
    o.insert("io_bytes".into(), json!(dir.io_bytes));
    o.insert("io_kbytes".into(), json!(dir.io_bytes >> 10));
    o.insert("bw_bytes".into(), json!(f.bw_bytes));
    o.insert("bw".into(), json!(f.bw_kib));
    o.insert("iops".into(), json!(f.iops));
    o.insert("runtime".into(), json!(f.runtime_ms));
    o.insert("total_ios".into(), json!(dir.total_ios));
    o.insert("short_ios".into(), json!(dir.short_ios));
    o.insert("drop_ios".into(), json!(0));
    // Queued engines time submission (slat) and the whole I/O (lat); synchronous engines
    // have no slat (N=0, as fio records none for them) and their lat is their clat. fio's
    // default lat_percentiles=0 leaves the percentiles out of lat_ns.
    let p = Percentiles::of(job, context);
    o.insert("slat_ns".into(), latency_object(&dir.slat, None, false, false, None));
    o.insert("clat_ns".into(), latency_object(&dir.clat, histogram, p.clat, context.plus, p.list.as_deref()));
    let lat_histogram = dir.lat_histogram(histogram).filter(|_| p.lat);
    o.insert("lat_ns".into(), latency_object(dir.lat(), lat_histogram, p.lat, false, p.list.as_deref()));
    // fio's bw_min/bw_max/iops_min/iops_max are unsigned integers: truncate as C does.
    o.insert("bw_min".into(), json!(f.bw_samples.min as u64));
    o.insert("bw_max".into(), json!(f.bw_samples.max as u64));
    o.insert("bw_agg".into(), json!(finite(f.bw_agg)));
    o.insert("bw_mean".into(), json!(finite(f.bw_samples.mean)));
    o.insert("bw_dev".into(), json!(finite(f.bw_samples.stddev)));
    o.insert("bw_samples".into(), json!(f.bw_samples.samples));
    o.insert("iops_min".into(), json!(f.iops_samples.min as u64));
    o.insert("iops_max".into(), json!(f.iops_samples.max as u64));
    o.insert("iops_mean".into(), json!(finite(f.iops_samples.mean)));
    o.insert("iops_stddev".into(), json!(finite(f.iops_samples.stddev)));
    o.insert("iops_samples".into(), json!(f.iops_samples.samples));
    Value::Object(o)
}

/// fio's percentile options of a job: its own, else its `[global]`'s.
struct Percentiles {
    /// `percentile_list=`, when given and well formed.
    list: Option<Vec<f64>>,
    /// `clat_percentiles` (default 1).
    clat: bool,
    /// `lat_percentiles` (default 0).
    lat: bool,
}

impl Percentiles {
    fn of(job: &JobResult, context: &JobContext) -> Self {
        // The last setting wins, a job's own over [global]'s, as fio applies them.
        let get = |key: &str| {
            let last = |opts: &[(String, String)]| opts.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            last(&job.options).or_else(|| last(context.globals))
        };
        let on = |v: Option<String>, default: bool| v.map_or(default, |v| v != "0");
        let list = get("percentile_list").and_then(|v| v.split(':').map(|p| p.trim().parse::<f64>().ok()).collect());
        Self { list, clat: on(get("clat_percentiles"), true), lat: on(get("lat_percentiles"), false) }
    }
}

/// `{"min", "max", "mean", "stddev", "N", ["percentile"], ["bins"]}` (`add_ddir_lat_json`):
/// percentiles from `histogram` when the run kept it, else as stored in `l`; json+'s `bins`
/// (`plus`) only beside percentiles and only from a histogram, as fio prints them.
fn latency_object(
    l: &LatencySummary,
    histogram: Option<&LatencyHistogram>,
    with_percentiles: bool,
    plus: bool,
    list: Option<&[f64]>,
) -> Value {
    let mut o = Map::new();
    let empty = l.samples == 0;
    o.insert("min".into(), json!(if empty { 0 } else { l.min }));
    o.insert("max".into(), json!(if empty { 0 } else { l.max }));
    o.insert("mean".into(), json!(if empty { 0.0 } else { finite(l.mean) }));
    o.insert("stddev".into(), json!(if empty { 0.0 } else { finite(l.stddev) }));
    o.insert("N".into(), json!(l.samples));
    if with_percentiles && !empty {
        let mut p = Map::new();
        // fio sorts its percentile list before walking the histogram.
        let mut list: Vec<(f64, u64)> = match (histogram, list) {
            // `percentile_list=`: computed from the histogram, which holds every sample.
            (Some(h), Some(list)) => list.iter().map(|&p| (p, h.percentile(p))).collect(),
            (Some(h), None) => l.percentiles.iter().map(|&(p, _)| (p, h.percentile(p))).collect(),
            (None, _) => l.percentiles.clone(),
        };
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (pct, value) in list {
            // fio formats the keys with "%f": "99.000000".
            p.insert(format!("{pct:.6}"), json!(value));
        }
        if !p.is_empty() {
            o.insert("percentile".into(), Value::Object(p));
        }
        if let (true, Some(h)) = (plus, histogram) {
            let bins = fio_bins(h).into_iter().map(|(value, count)| (value.to_string(), json!(count))).collect();
            o.insert("bins".into(), Value::Object(bins));
        }
    }
    Value::Object(o)
}

/// The directory a result's target lent the workloads (`root`; `path` in runs stored before
/// targets recorded it).
fn target_root(entry: &crate::ResultEntry) -> Option<&str> {
    let find = |key: &str| entry.target_info.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    find("root").or_else(|| find("path"))
}

/// Options as fio prints them, with `directory=` replaced by the directory actually used.
/// fio leaves a bare key (`time_based`, given with no value) out of its JSON, and an empty
/// value is refused there for every option that takes one.
fn options_used(pairs: &[(String, String)], directory: Option<&str>) -> Value {
    Value::Object(
        pairs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| match directory {
                Some(d) if k == "directory" => (k.clone(), json!(d)),
                _ => (k.clone(), json!(v)),
            })
            .collect(),
    )
}

/// An object of float percentages under fixed keys, to fio's six decimals (`%f`).
fn percent_map(keys: &[&str], value: impl Fn(usize) -> f64) -> Value {
    let six = |v: f64| (finite(v) * 1e6).round() / 1e6;
    Value::Object(keys.iter().enumerate().map(|(i, k)| ((*k).to_string(), json!(six(value(i))))).collect())
}

/// JSON has no NaN or infinity; serde_json would write `null` where fio writes a number.
fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// `ctime(3)` without the newline, in UTC: `"Sat Nov 21 23:35:40 2026"`.
pub(crate) fn ctime(unix_secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize], // 1970-01-01 was a Thursday
        MONTHS[(month - 1) as usize],
        day,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        year
    )
}

/// (year, month 1-12, day 1-31) of a day count since 1970-01-01, by Howard Hinnant's
/// `civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>), restricted to
/// dates after the epoch.
pub(crate) fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "fio_json_tests.rs"]
mod tests;
