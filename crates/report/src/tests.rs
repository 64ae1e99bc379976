//! Tests of the HTML and Markdown reports over whole runs.

#![allow(clippy::unwrap_used)]

use crate::{html_report, markdown_report, ResultEntry, RunReport};
use fsarena_core::{Better, DirectionResult, JobResult, LatencySummary, Measurement, Nanos, FIO_PERCENTILES};

const HOSTILE: &str = "<script>alert(1)</script>";
const HOSTILE_TEXT: &str = "&lt;script&gt;alert(1)&lt;/script&gt;";

/// One repetition of an io workload: four metrics, one job with latency percentiles and
/// ten seconds of bandwidth.
fn measurement(scale: f64) -> Measurement {
    let job = JobResult {
        name: "job".into(),
        read: DirectionResult {
            io_bytes: 1 << 30,
            total_ios: 262_144,
            runtime: Nanos(10_000_000_000),
            clat: LatencySummary {
                min: 2_000,
                max: 9_000_000,
                mean: 30_000.0,
                samples: 262_144,
                percentiles: FIO_PERCENTILES.iter().map(|&p| (p, (3_000.0 + p * p * scale) as u64)).collect(),
                ..Default::default()
            },
            bw_series: (0..10).map(|i| 100e6 * scale + f64::from(i) * 1e6).collect(),
            iops_series: vec![25_000.0; 10],
            ..Default::default()
        },
        ..Default::default()
    };
    let mut m = Measurement { jobs: vec![job], complete: true, ..Default::default() };
    m.push("read_iops", "ops/s", Better::Higher, 25_000.0 * scale);
    m.push("read_bw", "bytes/s", Better::Higher, 100e6 * scale);
    m.push("read_lat_p99", "ns", Better::Lower, 90_000.0 / scale);
    m.push("cpu_sys", "%", Better::Lower, 12.0 * scale);
    m
}

fn entry(target: &str, params: &[(&str, &str)], scale: f64) -> ResultEntry {
    ResultEntry {
        target_label: target.into(),
        target_kind: "ext4".into(),
        target_options: vec![("size".into(), "1g".into())],
        target_info: vec![("mkfs".into(), "mkfs.ext4 -F -q /tmp/img".into()), ("mount".into(), "rw,relatime".into())],
        workload_kind: "io".into(),
        workload_params: params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        point: Vec::new(),
        part: None,
        measurements: (0..3).map(|i| measurement(scale * (1.0 + 0.05 * f64::from(i)))).collect(),
    }
}

fn run(id: &str, results: Vec<ResultEntry>) -> RunReport {
    RunReport {
        id: id.into(),
        started_unix_ms: 1_700_000_000_000,
        environment: vec![("cpu".into(), "AMD EPYC".into()), ("kernel".into(), "6.1.0".into())],
        results,
        plan: "fsarena run --target ext4 --workload io:rw=randread".into(),
        complete: true,
        ..Default::default()
    }
}

/// Two targets, three repetitions each, one workload.
fn two_targets() -> RunReport {
    let params = [("rw", "randread"), ("bs", "4k")];
    run("r1", vec![entry("ext4", &params, 1.0), entry("xfs", &params, 2.0)])
}

fn charts(text: &str) -> usize {
    text.matches("<svg class=\"chart\"").count()
}

#[test]
fn two_targets_three_repetitions_chart_count() {
    let html = html_report(&[two_targets()]);
    // A bar chart per metric (4), read latency percentiles, read bandwidth per second.
    assert_eq!(charts(&html), 6);
    assert_eq!(html.matches("data-chart=\"bar\"").count(), 4);
    assert_eq!(html.matches("data-chart=\"latency\"").count(), 1);
    assert_eq!(html.matches("data-chart=\"timeseries\"").count(), 1);
    // Each metric has a best and a worst cell; xfs (scale 2) is faster, ext4 uses less CPU.
    assert_eq!(html.matches("class=\"num best\"").count(), 4);
    assert_eq!(html.matches("class=\"num worst\"").count(), 4);
    assert!(html.contains(
        "<td class=\"num best\" title=\"n=3: 50.0k ops/s, 52.5k ops/s, 55.0k ops/s\">52.5k ± 6.2k ops/s</td>"
    ));
    assert!(html.contains("mkfs.ext4 -F -q /tmp/img"));
    assert!(html.contains("AMD EPYC"));
    assert!(html.contains("2023-11-14 22:13:20 UTC"));
    assert!(html.contains("<span class=\"badge ok\">complete</span>"));
}

#[test]
fn nothing_is_fetched_or_run() {
    let html = html_report(&[two_targets()]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for forbidden in ["<script", "<link", "src=", "url(", "@import", "https:"] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
    // The only URL is the SVG namespace, which is a name, not a request.
    assert_eq!(html.matches("http:").count(), html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count());
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let mut report = two_targets();
    report.id = HOSTILE.into();
    report.environment.push(("kernel\"><b>".into(), HOSTILE.into()));
    report.results[1].target_label = HOSTILE.into();
    report.results[1].target_info.push((HOSTILE.into(), "'\"&".into()));
    report.results[1].workload_params = vec![("rw".into(), HOSTILE.into())];
    report.plan = HOSTILE.into();
    let html = html_report(&[report.clone(), report.clone()]);
    assert!(!html.contains("<script"), "raw script in the report");
    assert!(!html.contains("<b>"));
    assert!(html.contains(HOSTILE_TEXT));
    assert!(html.contains("&#39;&quot;&amp;"));
    let (md, files) = markdown_report(&[report]);
    assert!(!md.contains("<script"));
    assert!(md.contains(HOSTILE_TEXT));
    for (name, svg) in &files {
        assert!(!svg.contains("<script"), "{name}");
        assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.'), "{name}");
    }
}

#[test]
fn numjobs_sweep_gives_line_charts() {
    let mut results = Vec::new();
    for target in ["ext4", "xfs"] {
        for (numjobs, scale) in [("1", 1.0), ("2", 1.8), ("4", 3.1)] {
            results.push(entry(target, &[("rw", "randread"), ("numjobs", numjobs), ("bs", "4k")], scale));
        }
    }
    // A lone entry with another rw is not part of the sweep, and rw itself is not swept.
    results.push(entry("ext4", &[("rw", "read"), ("numjobs", "1"), ("bs", "4k")], 1.0));
    let html = html_report(&[run("r1", results)]);
    assert_eq!(html.matches("data-chart=\"sweep\"").count(), 4);
    assert!(html.contains("numjobs sweep · io:rw=randread,bs=4k"));
    assert!(html.contains(">read_iops by numjobs</text>"));
    // Four workloads, each with 6 charts, plus the sweep.
    assert_eq!(charts(&html), 4 * 6 + 4);
    let sweep = html.split("data-chart=\"sweep\"").nth(1).unwrap();
    let sweep = &sweep[..sweep.find("</svg>").unwrap()];
    assert_eq!(sweep.matches("<path").count(), 2, "one line per target");
    assert!(sweep.contains(">1</text>") && sweep.contains(">2</text>") && sweep.contains(">4</text>"));
}

#[test]
fn sweep_values_sort_by_size() {
    let results = ["64k", "4k", "1m"].iter().map(|bs| entry("ext4", &[("bs", bs)], 1.0)).collect();
    let html = html_report(&[run("r1", results)]);
    assert!(html.contains("bs</code> = 4k, 64k, 1m"));
}

#[test]
fn several_runs_are_distinct_series() {
    let before = two_targets();
    let mut after = two_targets();
    after.id = "r2".into();
    after.environment[1].1 = "6.8.0".into();
    let html = html_report(&[before, after]);
    for label in ["r1 ext4", "r1 xfs", "r2 ext4", "r2 xfs"] {
        assert!(html.contains(&format!("<th class=\"num\">{label}</th>")), "{label}");
    }
    assert!(html.contains("<td class=\"differs\">6.8.0</td>"));
    assert_eq!(charts(&html), 6);
}

#[test]
fn markdown_references_every_chart_file() {
    let (md, files) = markdown_report(&[two_targets()]);
    assert_eq!(files.len(), 6);
    assert_eq!(md.matches("![").count(), files.len());
    for (name, svg) in &files {
        assert!(name.ends_with(".svg"));
        assert!(md.contains(&format!("]({name})")), "{name} not referenced");
        assert!(svg.starts_with("<?xml") && svg.contains("<svg class=\"chart\""));
    }
    let names: std::collections::HashSet<&String> = files.iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), files.len(), "file names are unique");
    assert!(md.contains("| metric | ext4 | xfs |"));
    assert!(md.contains("| read\\_iops ↑ | 26.2k ± 3.1k ops/s | **52.5k ± 6.2k ops/s** |"), "{md}");
    assert!(md.contains("| kernel | 6.1.0 |"));
    assert!(md.contains("mkfs: mkfs.ext4 -F -q /tmp/img"));
}

#[test]
fn empty_and_incomplete_reports_still_render() {
    let html = html_report(&[]);
    assert!(html.contains("no runs") && html.ends_with("</html>\n"));
    let mut report = two_targets();
    report.complete = false;
    report.results[0].measurements[2].complete = false;
    report.results[1].measurements.clear();
    let html = html_report(&[report.clone()]);
    assert!(html.contains("badge bad"));
    // xfs has no values: no best or worst, its cells are dashes, its bars are missing.
    assert!(!html.contains("num best"));
    let (md, _) = markdown_report(&[report]);
    assert!(md.contains("(incomplete)") && md.contains("**incomplete**"));
}
