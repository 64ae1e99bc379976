//! Fills a results database with synthetic runs for the store and report benchmarks
//! (bench/store.sh): `cargo run --release -p fsarena-store --example seed -- DB RUNS`.
//!
//! Each run has two targets × one io workload × three repetitions with realistic metrics and
//! per-job detail, like a small `fsarena run --repeat 3`.

use fsarena_core::run::{ResultEntry, RunReport};
use fsarena_core::{Better, DirectionResult, JobResult, LatencySummary, Measurement, Metric, Nanos, FIO_PERCENTILES};
use fsarena_store::Store;

fn measurement(scale: f64) -> Measurement {
    let metric = |name: &str, unit: &str, better, value| Metric { name: name.into(), unit: unit.into(), better, value };
    let clat = LatencySummary {
        min: 800,
        max: 90_000,
        mean: 1_300.0 * scale,
        stddev: 400.0,
        samples: 700_000,
        percentiles: FIO_PERCENTILES.iter().map(|&p| (p, (1_000.0 + p * 20.0 * scale) as u64)).collect(),
    };
    let read = DirectionResult {
        io_bytes: 2_800_000_000,
        total_ios: 700_000,
        runtime: Nanos(1_000_000_000),
        clat,
        bw_series: vec![2.8e9 / scale; 5],
        iops_series: vec![7e5 / scale; 5],
        ..Default::default()
    };
    Measurement {
        metrics: vec![
            metric("read_iops", "ops/s", Better::Higher, 7e5 / scale),
            metric("read_bw", "bytes/s", Better::Higher, 2.8e9 / scale),
            metric("read_lat_mean", "ns", Better::Lower, 1_300.0 * scale),
            metric("read_lat_p99", "ns", Better::Lower, 3_000.0 * scale),
            metric("cpu_sys", "%", Better::Lower, 90.0),
        ],
        fio: Some(fsarena_core::FioDetail {
            jobs: vec![JobResult { name: "randread".into(), clones: 1, read, ..Default::default() }],
        }),
        complete: true,
        ..Default::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(runs)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u64>().ok())) else {
        eprintln!("usage: seed DB RUNS");
        std::process::exit(2);
    };
    let mut store = Store::open(std::path::Path::new(path))?;
    for i in 0..runs {
        let mut report = RunReport {
            id: format!("{:012x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16),
            started_unix_ms: 1_795_000_000_000 + i * 60_000,
            environment: vec![("kernel".into(), "Linux 6.18".into())],
            plan: "fsarena run --target tmpfs --target ext4 --workload io:rw=randread,bs=4k,size=1g".into(),
            complete: true,
            ..Default::default()
        };
        for (t, label) in ["tmpfs", "ext4"].iter().enumerate() {
            report.results.push(ResultEntry {
                target_label: (*label).into(),
                target_kind: (*label).into(),
                workload_kind: "io".into(),
                workload_params: vec![("rw".into(), "randread".into()), ("bs".into(), "4k".into())],
                point: Vec::new(),
                part: None,
                measurements: (0..3).map(|r| measurement(1.0 + t as f64 + r as f64 * 0.01)).collect(),
                ..Default::default()
            });
        }
        store.save(&report, Some(report.started_unix_ms + 30_000))?;
    }
    Ok(())
}
