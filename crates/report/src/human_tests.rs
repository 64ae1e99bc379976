//! The fio-like text summary, line by line against fio's own.

use super::*;
use fsarena_core::{Better, DirectionResult, LatencySummary, Measurement, Nanos, FIO_PERCENTILES};

fn seqread() -> JobResult {
    JobResult {
        name: "seqread".into(),
        clones: 1,
        read: DirectionResult {
            io_bytes: 335_872_000,
            total_ios: 5125,
            runtime: Nanos(1_005_000_000),
            clat: LatencySummary {
                min: 7054,
                max: 21_700_093,
                mean: 192_506.948,
                stddev: 1_240_685.012,
                samples: 5125,
                percentiles: FIO_PERCENTILES.iter().map(|&p| (p, 8000 + (p * 1000.0).round() as u64)).collect(),
            },
            bw_series: vec![293_737.0 * 1024.0, 360_239.0 * 1024.0],
            iops_series: vec![4589.0, 5628.0],
            ..Default::default()
        },
        job_runtime: Nanos(1_004_000_000),
        layout_bytes: 1 << 30,
        layout_time: Nanos(520_000_000),
        sys_cpu: 9.96,
        ctx: 176,
        minf: 24,
        ..Default::default()
    }
}

fn entry(label: &str, iops: f64, complete: bool) -> ResultEntry {
    let mut m =
        Measurement { fio: Some(fsarena_core::FioDetail { jobs: vec![seqread()] }), complete, ..Default::default() };
    m.push("read_iops", "ops/s", Better::Higher, iops);
    m.push("read_bw", "bytes/s", Better::Higher, 334_200_995.0);
    m.push("read_lat_p99", "ns", Better::Lower, 7_569_408.0);
    ResultEntry {
        target_label: label.into(),
        target_kind: label.into(),
        workload_kind: "io".into(),
        workload_params: vec![("rw".into(), "read".into()), ("bs".into(), "64k".into())],
        point: Vec::new(),
        part: None,
        measurements: vec![m],
        ..Default::default()
    }
}

fn render(report: &RunReport, color: bool) -> String {
    String::from_utf8(Human { color }.export(std::slice::from_ref(report)).unwrap()).unwrap()
}

#[test]
fn fio_like_block() {
    let report = RunReport { results: vec![entry("ext4", 5099.0, true)], ..Default::default() };
    let text = render(&report, false);
    assert!(text.starts_with("ext4 · io:rw=read,bs=64k\nseqread: (groupid=0, jobs=1): err= 0\n"), "{text}");
    assert!(text.contains("  read: IOPS=5099, BW=319MiB/s (334MB/s)(320MiB/1005msec)\n"), "{text}");
    assert!(text.contains("    clat (usec): min=7, max=21700, avg=192.51, stdev=1240.69\n"), "{text}");
    // A synchronous engine: no slat line, and lat is clat, printed after it.
    assert!(!text.contains("slat"), "{text}");
    assert!(text.contains("\n     lat (usec): min=7, max=21700, avg=192.51, stdev=1240.69\n    clat percentiles"));
    assert!(text.contains("    clat percentiles (usec):\n     |  1.00th=[    9],  5.00th=[   13],"), "{text}");
    assert!(text.contains("     | 99.99th=[  108]\n"), "{text}");
    assert!(text
        .contains("   bw (  KiB/s): min=293737, max=360239, per=100.00%, avg=326988.00, stdev=47024.02, samples=2\n"));
    assert!(text.contains("   iops        : min= 4589, max= 5628, avg=5108.50, stdev=734.68, samples=2\n"));
    assert!(text.contains("  cpu          : usr=0.00%, sys=9.96%, ctx=176, majf=0, minf=24\n"));
    assert!(text.contains("  layout: 1.0GiB in 0.52s (1.9GiB/s), excluded from the figures\n"), "{text}");
    assert!(!text.contains("write:"), "directions without I/O are omitted");
    assert!(!text.contains('\x1b'));
    assert!(!text.contains("| metric"), "no comparison for a single entry");
    // Four percentiles per line, as fio prints the default list.
    let first = text.lines().find(|l| l.contains("1.00th")).unwrap();
    assert_eq!(first.matches("th=[").count(), 4);
}

#[test]
fn nanosecond_latencies_stay_in_nsec() {
    let clat = LatencySummary {
        min: 700,
        max: 90_000,
        mean: 1500.0,
        stddev: 300.0,
        samples: 10,
        percentiles: vec![(50.0, 1400), (99.0, 80_000), (99.99, 90_000)],
    };
    let mut text = String::new();
    latency_lines(&mut text, "clat", &clat);
    assert_eq!(
        text,
        "    clat (nsec): min=700, max=90000, avg=1500.00, stdev=300.00\n    clat percentiles (nsec):\n     \
         | 50.00th=[ 1400], 99.00th=[80000], 99.99th=[90000]\n"
    );
}

#[test]
fn a_queued_engine_prints_slat_clat_and_lat_in_fio_order() {
    let mut e = entry("ext4", 10.0, true);
    let read = &mut e.measurements[0].jobs_mut()[0].read;
    let summary =
        |min, max, mean, stddev| LatencySummary { min, max, mean, stddev, samples: 5125, percentiles: vec![] };
    read.slat = summary(1523, 26_259, 2467.47, 1799.29);
    read.total_lat = Some(summary(12_000, 130_000, 31_690.0, 10_400.0));
    let text = render(&RunReport { results: vec![e], ..Default::default() }, false);
    let lines = "    slat (nsec): min=1523, max=26259, avg=2467.47, stdev=1799.29\n    \
                 clat (usec): min=7, max=21700, avg=192.51, stdev=1240.69\n     \
                 lat (usec): min=12, max=130, avg=31.69, stdev=10.40\n    clat percentiles (usec):\n";
    assert!(text.contains(lines), "{text}");
}

#[test]
fn errors_incomplete_and_color() {
    let mut e = entry("xfs", 10.0, false);
    let job = &mut e.measurements[0].jobs_mut()[0];
    job.error = 28;
    job.error_message = Some("write /mnt/f: No space left on device".into());
    let report = RunReport { results: vec![e], ..Default::default() };
    let text = render(&report, true);
    assert!(text.contains("  INCOMPLETE: stopped early; figures cover only what ran\n"));
    assert!(text.contains("err=28\n  error: write /mnt/f: No space left on device\n"));
    assert!(text.contains("\x1b[1m  read: IOPS="));
}

#[test]
fn comparison_table_for_several_entries() {
    let report =
        RunReport { results: vec![entry("ext4", 25_400.0, true), entry("xfs", 254_000.0, true)], ..Default::default() };
    let text = render(&report, false);
    assert!(text.contains("| metric"), "{text}");
    let header = text.lines().find(|l| l.starts_with("| metric")).unwrap();
    assert!(header.contains("ext4") && header.contains("xfs"), "one column per target: {header}");
    assert!(text.contains("25.4k ops/s"), "{text}");
    assert!(text.contains("254k ops/s"), "{text}");
    assert!(text.contains("319 MiB/s"), "{text}");
    assert!(text.contains("7.57 ms"), "{text}");
    // What the results share is said once, above the table.
    assert!(text.contains("every result: io: rw=read, bs=64k\n| metric"), "{text}");
    // One repetition each: nothing is coloured, and the table says why.
    assert!(text.contains("| read_iops (too few) |"), "{text}");
    assert!(
        text.ends_with("|\ntoo few: a target has fewer than three repetitions: too few to tell, no colour\n"),
        "{text}"
    );
}

#[test]
fn other_workloads_list_their_metrics() {
    let mut m = Measurement { complete: true, ..Default::default() };
    m.push("file_creation", "ops/s", Better::Higher, 12_345.0);
    let e = ResultEntry {
        target_label: "tmpfs".into(),
        workload_kind: "tree".into(),
        point: Vec::new(),
        part: None,
        measurements: vec![m.clone(), m],
        ..Default::default()
    };
    let text = render(&RunReport { results: vec![e], ..Default::default() }, false);
    assert_eq!(text, "tmpfs · tree\n  last of 2 measured repetitions\n  file_creation : 12.3k ops/s\n");
}

/// fio's `show_ss_normal` line, after the issued I/Os (rates written as the read and write
/// lines write them).
#[test]
fn steadystate_line_follows_fio() {
    let mut e = entry("tmpfs", 5099.0, true);
    e.measurements[0].jobs_mut()[0].steadystate = Some(fsarena_core::fio::SteadyStateResult {
        ss: "iops:10.000000%".into(),
        duration: 2,
        attained: true,
        criterion: "10.209871%".into(),
        bw_mean: 1_786_773_504,
        iops_mean: 436_224,
        ..Default::default()
    });
    let text = render(&RunReport { results: vec![e], ..Default::default() }, false);
    assert!(
        text.contains("  steadystate  : attained=yes, bw=1.7GiB/s (1.8GB/s), iops=436k, iops mean dev=10.210%\n"),
        "{text}"
    );
}
