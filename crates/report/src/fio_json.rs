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
    root.insert("fio version".into(), json!(format!("fsarena-{}", fsarena_core::VERSION)));
    root.insert("timestamp".into(), json!(ms / 1000));
    root.insert("timestamp_ms".into(), json!(ms));
    root.insert("time".into(), json!(ctime(ms / 1000)));
    if !report.global_options.is_empty() {
        root.insert("global options".into(), string_map(&report.global_options));
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
            let context = JobContext { m, group_id, start_ms: ms, desc: &title, plus };
            jobs.push(job_object(job, &context));
        }
    }
    root.insert("jobs".into(), Value::Array(jobs));
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
    o.insert("elapsed".into(), json!(job.job_runtime.0.div_ceil(1_000_000_000)));
    o.insert("job options".into(), string_map(&job.options));
    for d in Direction::ALL {
        o.insert(d.name().into(), direction_object(job, context, d));
    }
    let sync = latency_object(&job.sync, context.histogram(job, "sync"), true, context.plus);
    o.insert("sync".into(), json!({ "total_ios": job.sync.samples, "lat_ns": sync }));
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
    Value::Object(o)
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
    // Synchronous engines: submission is the syscall itself, so slat is 0 (fio records none
    // for sync engines either) and lat equals clat. fio's default lat_percentiles=0 leaves
    // the percentiles out of lat_ns.
    o.insert("slat_ns".into(), latency_object(&LatencySummary::default(), None, false, false));
    o.insert("clat_ns".into(), latency_object(&dir.clat, histogram, true, context.plus));
    o.insert("lat_ns".into(), latency_object(&dir.clat, None, false, false));
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

/// `{"min", "max", "mean", "stddev", "N", ["percentile"], ["bins"]}` (`add_ddir_lat_json`):
/// percentiles from `histogram` when the run kept it, else as stored in `l`; json+'s `bins`
/// (`plus`) only beside percentiles and only from a histogram, as fio prints them.
fn latency_object(
    l: &LatencySummary,
    histogram: Option<&LatencyHistogram>,
    with_percentiles: bool,
    plus: bool,
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
        let mut list: Vec<(f64, u64)> = match histogram {
            Some(h) => l.percentiles.iter().map(|&(p, _)| (p, h.percentile(p))).collect(),
            None => l.percentiles.clone(),
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

/// An object of string values, as fio prints every option value.
fn string_map(pairs: &[(String, String)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
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
mod tests {
    use super::*;
    use crate::ResultEntry;
    use fsarena_core::{DirectionResult, Measurement, Nanos};

    fn sample_job() -> JobResult {
        JobResult {
            name: "seqread".into(),
            group_id: 0,
            clones: 1,
            options: vec![("rw".into(), "read".into()), ("bs".into(), "64k".into())],
            read: DirectionResult {
                io_bytes: 335_872_000,
                total_ios: 5125,
                short_ios: 0,
                runtime: Nanos(1_005_400_000),
                clat: LatencySummary {
                    min: 7054,
                    max: 21_700_093,
                    mean: 192_506.948_098,
                    stddev: 1_240_685.012_619,
                    samples: 5125,
                    percentiles: fsarena_core::FIO_PERCENTILES
                        .iter()
                        .map(|&p| (p, (p * 1000.0).round() as u64 + 8000))
                        .collect(),
                },
                clat_histogram: None,
                bw_series: vec![293_737.0 * 1024.0, 360_239.0 * 1024.0],
                iops_series: vec![4589.0, 5628.0],
            },
            job_runtime: Nanos(1_004_700_000),
            sys_cpu: 9.960_159,
            ctx: 176,
            minf: 24,
            ..Default::default()
        }
    }

    fn sample_report() -> RunReport {
        let mut m = Measurement {
            fio: Some(fsarena_core::FioDetail { jobs: vec![sample_job()] }),
            complete: true,
            ..Default::default()
        };
        m.push("read_iops", "ops/s", fsarena_core::Better::Higher, 5099.5);
        RunReport {
            id: "run-1".into(),
            started_unix_ms: 1_795_304_140_688,
            global_options: vec![("directory".into(), "/mnt/test".into()), ("time_based".into(), String::new())],
            results: vec![ResultEntry {
                target_label: "tmpfs".into(),
                target_kind: "tmpfs".into(),
                workload_kind: "io".into(),
                point: Vec::new(),
                part: None,
                measurements: vec![Measurement::default(), m],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn parse(report: &RunReport) -> Value {
        let bytes = FioJson.export(std::slice::from_ref(report)).unwrap();
        assert_eq!(bytes.last(), Some(&b'\n'));
        serde_json::from_slice(&bytes).unwrap()
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn top_level_follows_fio() {
        let v = parse(&sample_report());
        assert_eq!(keys(&v), ["fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs"]);
        assert_eq!(v["fio version"], format!("fsarena-{}", fsarena_core::VERSION));
        assert_eq!(v["timestamp"], 1_795_304_140u64);
        assert_eq!(v["timestamp_ms"], 1_795_304_140_688u64);
        assert_eq!(v["time"], "Sat Nov 21 23:35:40 2026");
        assert_eq!(v["global options"]["time_based"], "");
        // Only the last measurement of an entry is exported.
        assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
        let without_globals = RunReport { global_options: vec![], ..sample_report() };
        assert!(parse(&without_globals).get("global options").is_none());
    }

    #[test]
    fn job_keys_in_fio_order() {
        let v = parse(&sample_report());
        let job = &v["jobs"][0];
        assert_eq!(
            keys(job),
            [
                "jobname",
                "groupid",
                "job_start",
                "error",
                "eta",
                "elapsed",
                "job options",
                "read",
                "write",
                "trim",
                "sync",
                "job_runtime",
                "usr_cpu",
                "sys_cpu",
                "ctx",
                "majf",
                "minf",
                "iodepth_level",
                "iodepth_submit",
                "iodepth_complete",
                "latency_ns",
                "latency_us",
                "latency_ms",
                "latency_depth",
                "latency_target",
                "latency_target_ns",
                "latency_percentile",
                "latency_window",
                "latency_window_us",
                "desc"
            ]
        );
        assert_eq!(
            keys(&job["read"]),
            [
                "io_bytes",
                "io_kbytes",
                "bw_bytes",
                "bw",
                "iops",
                "runtime",
                "total_ios",
                "short_ios",
                "drop_ios",
                "slat_ns",
                "clat_ns",
                "lat_ns",
                "bw_min",
                "bw_max",
                "bw_agg",
                "bw_mean",
                "bw_dev",
                "bw_samples",
                "iops_min",
                "iops_max",
                "iops_mean",
                "iops_stddev",
                "iops_samples"
            ]
        );
        assert_eq!(keys(&job["job options"]), ["rw", "bs"]);
        assert_eq!(keys(&job["read"]["clat_ns"]), ["min", "max", "mean", "stddev", "N", "percentile"]);
        assert_eq!(keys(&job["read"]["lat_ns"]), ["min", "max", "mean", "stddev", "N"]);
        assert_eq!(keys(&job["sync"]), ["total_ios", "lat_ns"]);
        assert_eq!(keys(&job["latency_ms"]).last(), Some(&">=2000"));
        assert_eq!(keys(&job["iodepth_level"]), ["1", "2", "4", "8", "16", "32", ">=64"]);
    }

    #[test]
    fn figures_and_units_follow_fio() {
        let v = parse(&sample_report());
        let job = &v["jobs"][0];
        let read = &job["read"];
        assert_eq!(read["io_bytes"], 335_872_000u64);
        assert_eq!(read["io_kbytes"], 335_872_000u64 >> 10);
        assert_eq!(read["bw_bytes"], 334_200_995u64);
        assert_eq!(read["bw"], 326_368u64); // KiB/s
        assert!(read["iops"].is_f64());
        assert!((read["iops"].as_f64().unwrap() - 5_099.502_487).abs() < 1e-3);
        assert_eq!(read["runtime"], 1005);
        assert_eq!(read["bw_min"], 293_737);
        assert_eq!(read["bw_max"], 360_239);
        assert_eq!(read["bw_agg"].as_f64(), Some(100.0));
        assert_eq!(read["bw_mean"].as_f64(), Some(326_988.0));
        assert_eq!(read["iops_min"], 4589);
        assert!((read["iops_stddev"].as_f64().unwrap() - 734.683_946).abs() < 1e-6);
        assert_eq!(read["iops_samples"], 2);
        assert_eq!(read["clat_ns"]["min"], 7054);
        assert_eq!(read["clat_ns"]["N"], 5125);
        assert_eq!(read["clat_ns"]["percentile"]["99.000000"], 107_000);
        assert_eq!(read["clat_ns"]["percentile"]["99.990000"], 107_990);
        assert_eq!(read["lat_ns"]["max"], 21_700_093);
        assert_eq!(read["slat_ns"]["N"], 0);
        assert!(read["slat_ns"]["mean"].is_f64());
        // Directions that did nothing keep their keys, with zeros and no percentiles.
        let write = &job["write"];
        assert_eq!(write["bw"], 0);
        assert_eq!(write["iops"].as_f64(), Some(0.0));
        assert_eq!(write["bw_agg"].as_f64(), Some(0.0));
        assert!(write["clat_ns"].get("percentile").is_none());
        assert_eq!(job["job_runtime"], 1004);
        assert_eq!(job["elapsed"], 2);
        assert_eq!(job["job_start"], 1_795_304_140_688u64);
        assert_eq!(job["iodepth_level"]["1"].as_f64(), Some(100.0));
        assert_eq!(job["iodepth_submit"]["4"].as_f64(), Some(100.0));
        assert_eq!(job["latency_percentile"].as_f64(), Some(100.0));
        let lat_sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| job[*k].as_object().unwrap().values().map(|v| v.as_f64().unwrap()))
            .sum();
        assert!((lat_sum - 100.0).abs() < 1e-4, "{lat_sum}");
    }

    #[test]
    fn errors_and_sync_latency_are_reported() {
        let mut report = sample_report();
        let job = &mut report.results[0].measurements[1].jobs_mut()[0];
        job.error = 28;
        job.error_message = Some("No space left on device".into());
        job.sync =
            LatencySummary { min: 10, max: 30, mean: 20.0, stddev: 5.0, samples: 4, percentiles: vec![(50.0, 20)] };
        let v = parse(&report);
        assert_eq!(v["jobs"][0]["error"], 28);
        assert_eq!(v["jobs"][0]["sync"]["total_ios"], 4);
        // fio prints sync percentiles when clat_percentiles (the default) is on.
        assert_eq!(v["jobs"][0]["sync"]["lat_ns"]["percentile"]["50.000000"], 20);
    }

    #[test]
    fn entries_get_groups_of_their_own() {
        let mut report = sample_report();
        let mut second = report.results[0].clone();
        second.target_label = "xfs".into();
        let mut stonewalled = sample_job();
        stonewalled.group_id = 1;
        second.measurements[1].jobs_mut().push(stonewalled);
        report.results.push(second);
        let v = parse(&report);
        let jobs = v["jobs"].as_array().unwrap();
        let groups: Vec<u64> = jobs.iter().map(|j| j["groupid"].as_u64().unwrap()).collect();
        assert_eq!(groups, [0, 1, 2]);
        assert_eq!(jobs[0]["desc"], "tmpfs · io");
        assert_eq!(jobs[2]["desc"], "xfs · io");
        // Group shares are computed within an entry and a group.
        assert_eq!(jobs[1]["read"]["bw_agg"].as_f64(), Some(100.0));
    }

    /// A report whose one job was measured with histograms, as a fresh run is: `samples` on
    /// reads, and 3 syncs.
    fn report_with_histograms(samples: &[u64]) -> RunReport {
        let h = LatencyHistogram::of(samples.iter().copied());
        let sync = LatencyHistogram::of([900, 1_100, 250_000]);
        let mut job = sample_job();
        job.read.total_ios = h.len();
        job.read.clat = h.summary(&fsarena_core::FIO_PERCENTILES);
        job.sync = sync.summary(&fsarena_core::FIO_PERCENTILES);
        let mut report = sample_report();
        let m = &mut report.results[0].measurements[1];
        *m.jobs_mut() = vec![job];
        m.add_latency("read", &h);
        m.add_latency("sync", &sync);
        report
    }

    fn plus(report: &RunReport) -> Value {
        serde_json::from_slice(&FioJsonPlus.export(std::slice::from_ref(report)).unwrap()).unwrap()
    }

    #[test]
    fn json_plus_bins_come_from_the_histogram_and_sum_to_total_ios() {
        let samples: Vec<u64> = (0..5_000u64).map(|i| 7_000 + (i * 7919) % 3_000_000).collect();
        let report = report_with_histograms(&samples);
        let v = plus(&report);
        let clat = &v["jobs"][0]["read"]["clat_ns"];
        assert_eq!(keys(clat), ["min", "max", "mean", "stddev", "N", "percentile", "bins"]);
        let bins = clat["bins"].as_object().unwrap();
        let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(total, v["jobs"][0]["read"]["total_ios"].as_u64().unwrap());
        assert_eq!(total, 5_000);
        // Keys are fio's bin values, in increasing order, each counting its samples exactly.
        let values: Vec<u64> = bins.keys().map(|k| k.parse().unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]));
        let in_first = samples
            .iter()
            .filter(|&&s| crate::fio_figures::fio_bin_value(crate::fio_figures::fio_bin_index(s)) == values[0])
            .count();
        assert_eq!(bins[&values[0].to_string()].as_u64(), Some(in_first as u64));
        // Percentiles are the histogram's.
        let h = LatencyHistogram::of(samples.iter().copied());
        assert_eq!(clat["percentile"]["99.000000"].as_u64(), Some(h.percentile(99.0)));
        // Sync latency has bins too (it has percentiles); lat_ns and slat_ns have neither.
        let sync_bins = v["jobs"][0]["sync"]["lat_ns"]["bins"].as_object().unwrap();
        assert_eq!(sync_bins.values().map(|c| c.as_u64().unwrap()).sum::<u64>(), 3);
        assert!(v["jobs"][0]["read"]["lat_ns"].get("bins").is_none());
        // Plain fio-json has no bins.
        assert!(parse(&report)["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
        // latency_us / latency_ms are counted, not estimated: 7-10 µs, 10-20 µs, ... add up.
        let job = &v["jobs"][0];
        let lat_sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| job[*k].as_object().unwrap().values().map(|v| v.as_f64().unwrap()))
            .sum();
        assert!((lat_sum - 100.0).abs() < 1e-4, "{lat_sum}");
        let under_10us = samples.iter().filter(|&&s| s < 10_000).count() as f64 * 100.0 / 5_000.0;
        assert!((job["latency_us"]["10"].as_f64().unwrap() - under_10us).abs() < 0.1, "{}", job["latency_us"]);
    }

    #[test]
    fn several_jobs_use_their_own_histograms() {
        let mut report = report_with_histograms(&[5_000, 6_000]);
        let m = &mut report.results[0].measurements[1];
        let mut second = m.jobs()[0].clone();
        second.name = "clone2".into();
        second.read.clat_histogram = Some(LatencyHistogram::of([1_000_000; 4]));
        second.read.total_ios = 4;
        m.jobs_mut()[0].read.clat_histogram = Some(LatencyHistogram::of([5_000, 6_000]));
        m.jobs_mut().push(second);
        let v = plus(&report);
        let count = |j: usize| -> u64 {
            v["jobs"][j]["read"]["clat_ns"]["bins"].as_object().unwrap().values().map(|c| c.as_u64().unwrap()).sum()
        };
        assert_eq!((count(0), count(1)), (2, 4));
    }

    #[test]
    fn runs_stored_without_histograms_print_percentiles_and_no_bins() {
        let v = plus(&sample_report());
        let clat = &v["jobs"][0]["read"]["clat_ns"];
        assert_eq!(clat["percentile"]["99.000000"], 107_000);
        assert!(clat.get("bins").is_none());
    }

    #[test]
    fn empty_report_is_valid() {
        let v = parse(&RunReport::default());
        assert_eq!(v["jobs"].as_array().unwrap().len(), 0);
        assert_eq!(v["time"], "Thu Jan  1 00:00:00 1970");
    }

    #[test]
    fn ctime_matches_libc() {
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
        assert_eq!(ctime(1_709_251_199), "Thu Feb 29 23:59:59 2024");
        assert_eq!(ctime(4_102_444_800), "Fri Jan  1 00:00:00 2100");
    }
}
