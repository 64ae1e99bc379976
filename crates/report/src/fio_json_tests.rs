//! Tests of the fio JSON shape.

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
            ..Default::default()
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
    assert_eq!(
        keys(&v),
        ["fio version", "fsarena version", "timestamp", "timestamp_ms", "time", "global options", "jobs"]
    );
    // Scripts match "fio-" and parse the release; fsarena names itself under its own key.
    assert_eq!(v["fio version"], "fio-3.33");
    assert_eq!(v["fsarena version"], format!("fsarena-{}", fsarena_core::VERSION));
    assert_eq!(v["timestamp"], 1_795_304_140u64);
    assert_eq!(v["timestamp_ms"], 1_795_304_140_688u64);
    assert_eq!(v["time"], "Sat Nov 21 23:35:40 2026");
    // A bare key is left out, as fio 3.33 leaves it out: {"directory": ...} alone.
    assert_eq!(keys(&v["global options"]), ["directory"]);
    // Only the last measurement of an entry is exported.
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let without_globals = RunReport { global_options: vec![], ..sample_report() };
    assert!(parse(&without_globals).get("global options").is_none());
    // A [global] of bare keys only is an empty object, as fio prints it.
    let bare_globals = RunReport { global_options: vec![("time_based".into(), String::new())], ..sample_report() };
    assert_eq!(parse(&bare_globals)["global options"], serde_json::json!({}));
}

#[test]
fn a_job_of_no_options_has_no_job_options_and_one_of_bare_keys_an_empty_object() {
    // fio 3.33: `[x]` under a [global] has no "job options" key; `[x]\ntime_based` has `{}`.
    let mut report = sample_report();
    report.results[0].measurements[1].jobs_mut()[0].options.clear();
    assert!(parse(&report)["jobs"][0].get("job options").is_none());
    report.results[0].measurements[1].jobs_mut()[0].options.push(("time_based".into(), String::new()));
    assert_eq!(parse(&report)["jobs"][0]["job options"], serde_json::json!({}));
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
    job.sync = LatencySummary { min: 10, max: 30, mean: 20.0, stddev: 5.0, samples: 4, percentiles: vec![(50.0, 20)] };
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
fn a_queued_engine_prints_its_slat_and_lat_as_fio() {
    let (slat, lat) = (LatencyHistogram::of([1_500, 2_000, 2_500]), LatencyHistogram::of([50_000, 60_000, 70_000]));
    let mut report = sample_report();
    let job = &mut report.results[0].measurements[1].jobs_mut()[0];
    job.read.slat = slat.summary(&[]);
    job.read.total_lat = Some(lat.summary(&fsarena_core::FIO_PERCENTILES));
    job.read.lat_histogram = Some(lat.clone());
    let read = &parse(&report)["jobs"][0]["read"];
    // fio 3.33, ioengine=libaio: slat_ns and lat_ns carry no percentiles by default.
    assert_eq!(keys(&read["slat_ns"]), ["min", "max", "mean", "stddev", "N"]);
    assert_eq!(
        (&read["slat_ns"]["min"], &read["slat_ns"]["N"], &read["slat_ns"]["mean"]),
        (&json!(1_500), &json!(3), &json!(2000.0))
    );
    assert_eq!(keys(&read["lat_ns"]), ["min", "max", "mean", "stddev", "N"]);
    assert_eq!((&read["lat_ns"]["max"], &read["lat_ns"]["N"]), (&json!(70_000), &json!(3)));
    assert_eq!(read["clat_ns"]["N"], 5125, "clat stays clat");
    // lat_percentiles=1: lat's own histogram, not clat's.
    report.results[0].measurements[1].jobs_mut()[0].options.push(("lat_percentiles".into(), "1".into()));
    let lat_ns = &parse(&report)["jobs"][0]["read"]["lat_ns"];
    assert_eq!(lat_ns["percentile"]["1.000000"], lat.percentile(1.0));
    assert_eq!(lat_ns["percentile"]["99.990000"], lat.percentile(99.99));
    assert!(lat.percentile(1.0) > 40_000, "not clat's 9,000 ns");
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

#[test]
fn disk_util_follows_the_jobs_once_per_run() {
    let disk = |ios| fsarena_core::DiskUtil {
        name: "loop0".into(),
        write_ios: ios,
        io_ticks: 500,
        msec: 1000,
        slaves: vec!["vda".into()],
        ..Default::default()
    };
    let mut report = sample_report();
    report.results[0].measurements[1].disk_util =
        vec![disk(40), fsarena_core::DiskUtil { name: "vda".into(), write_ios: 30, msec: 1000, ..Default::default() }];
    // A second part of the same run shares the reading: counted once.
    report.results[0].part = Some("a".into());
    let mut second = report.results[0].clone();
    second.part = Some("b".into());
    report.results.push(second);
    let v = parse(&report);
    assert_eq!(keys(&v).last(), Some(&"disk_util"));
    let disks = v["disk_util"].as_array().unwrap();
    assert_eq!(disks.len(), 2);
    assert_eq!(disks[0]["name"], "loop0");
    assert_eq!(disks[0]["write_ios"], 40);
    assert_eq!(disks[0]["util"].as_f64(), Some(50.0));
    assert_eq!(disks[0]["aggr_write_ios"], 30);
    assert_eq!(disks[1]["name"], "vda");
    // Another target's run adds up.
    let mut other = report.results[0].clone();
    other.target_label = "xfs".into();
    report.results.push(other);
    assert_eq!(parse(&report)["disk_util"][0]["write_ios"], 80);
    // No block device (tmpfs): no key, as fio.
    assert!(parse(&sample_report()).get("disk_util").is_none());
}

#[test]
fn directory_shows_the_directory_used() {
    let mut report = sample_report();
    report.results[0].measurements[1].jobs_mut()[0].options.push(("directory".into(), "/mnt/test".into()));
    report.results[0].target_info = vec![("root".into(), "/var/tmp/fsarena/r/mnt-0-ext4".into())];
    let v = parse(&report);
    assert_eq!(v["global options"]["directory"], "/var/tmp/fsarena/r/mnt-0-ext4");
    assert!(v["global options"].get("time_based").is_none());
    assert_eq!(v["jobs"][0]["job options"]["directory"], "/var/tmp/fsarena/r/mnt-0-ext4");
    // Two targets: fio's `:`-separated list of directories.
    let mut other = report.results[0].clone();
    other.target_info = vec![("path".into(), "/srv/nfs".into())];
    report.results.push(other);
    let v = parse(&report);
    assert_eq!(v["global options"]["directory"], "/var/tmp/fsarena/r/mnt-0-ext4:/srv/nfs");
    assert_eq!(v["jobs"][1]["job options"]["directory"], "/srv/nfs");
    // Without a recorded root the option is shown as given.
    assert_eq!(parse(&sample_report())["global options"]["directory"], "/mnt/test");
}

/// fio 3.33's `"steadystate"`, last in the job, its keys in fio's order.
#[test]
fn steadystate_is_fios() {
    let mut report = sample_report();
    let job = &mut report.results[0].measurements[1].jobs_mut()[0];
    job.steadystate = Some(fsarena_core::fio::SteadyStateResult {
        ss: "iops:50.000000%".into(),
        duration: 2,
        attained: true,
        criterion: "9.430631%".into(),
        max_deviation: 36643.0,
        slope: 0.0,
        bw_mean: 1_591_514_843,
        iops_mean: 388_553,
        iops: vec![351_910, 425_196],
        bw: vec![1_441_426_870, 1_741_602_816],
    });
    let v = parse(&report);
    let job = v["jobs"][0].as_object().unwrap();
    assert_eq!(job.keys().next_back().map(String::as_str), Some("steadystate"));
    let ss = job["steadystate"].as_object().unwrap();
    let keys: Vec<&str> = ss.keys().map(String::as_str).collect();
    assert_eq!(keys, ["ss", "duration", "attained", "criterion", "max_deviation", "slope", "data"]);
    assert_eq!(ss["attained"], 1);
    assert_eq!(ss["criterion"], "9.430631%");
    let data = ss["data"].as_object().unwrap();
    assert_eq!(data.keys().map(String::as_str).collect::<Vec<_>>(), ["bw_mean", "iops_mean", "iops", "bw"]);
    assert_eq!(data["iops"], serde_json::json!([351_910, 425_196]));
    // A job without ss_dur has none.
    assert!(parse(&sample_report())["jobs"][0].get("steadystate").is_none());
}
