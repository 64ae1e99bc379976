//! Shared helpers of the store's integration tests.

#![allow(dead_code)]

use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{Better, JobResult, Measurement, Nanos};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A measurement of repetition `rep` with io-style metrics and a job's detail.
pub fn measurement(rep: u32, scale: f64) -> Measurement {
    let mut m = Measurement { complete: rep != 2, ..Default::default() };
    m.push("read_iops", "ops/s", Better::Higher, scale * (1000.0 + f64::from(rep)));
    m.push("read_bw", "bytes/s", Better::Higher, scale * 4096.0 * (1000.0 + f64::from(rep)));
    m.push("read_lat_p99", "ns", Better::Lower, 12_345.678 + f64::from(rep));
    let mut job =
        JobResult { name: "io".into(), clones: 1, options: pairs(&[("rw", "randread")]), ..Default::default() };
    job.read.io_bytes = 4096 * 1000;
    job.read.total_ios = 1000;
    job.read.runtime = Nanos(1_000_000_000 + u64::from(rep));
    job.read.clat.min = 100;
    job.read.clat.max = 90_000;
    job.read.clat.mean = 1234.5;
    job.read.clat.stddev = 12.25;
    job.read.clat.samples = 1000;
    job.read.clat.percentiles = vec![(50.0, 1200), (99.0, 12_345), (99.99, 80_000)];
    job.read.bw_series = vec![4096.0e3, 4100.5e3];
    job.read.iops_series = vec![1000.0, 1001.0];
    job.usr_cpu = 3.5;
    job.sys_cpu = 40.25;
    job.error_message = (rep == 2).then(|| "interrupted".to_string());
    m.jobs_mut().push(job);
    m
}

/// A run with two results (two targets, one workload), three measurements each.
pub fn report(id: &str, started_unix_ms: u64) -> RunReport {
    let entry = |label: &str, kind: &str, scale: f64| ResultEntry {
        target_label: label.to_string(),
        target_kind: kind.to_string(),
        target_options: pairs(&[("size", "1g")]),
        target_info: pairs(&[("mkfs", "mkfs.ext4 -F"), ("mount options", "rw,relatime")]),
        workload_kind: "io".into(),
        workload_params: pairs(&[("rw", "randread"), ("bs", "4k"), ("time_based", "")]),
        point: Vec::new(),
        part: None,
        measurements: (0..3).map(|rep| measurement(rep, scale)).collect(),
        wall_ms: None,
    };
    RunReport {
        id: id.to_string(),
        started_unix_ms,
        environment: pairs(&[
            ("cpu", "AMD EPYC"),
            ("cores", "2"),
            ("kernel", "Linux 6.1"),
            ("fsarena_version", "0.1.0"),
        ]),
        global_options: pairs(&[("ioengine", "psync")]),
        results: vec![entry("ext4", "ext4", 1.0), entry("xfs 'quoted' <b>", "xfs", 1.5)],
        plan: "fsarena run --target ext4 --target xfs --workload io:rw=randread,bs=4k --repeat 3\n".into(),
        complete: true,
        name: None,
        tags: Vec::new(),
        failure: None,
    }
}
