//! Tests of the HTML and Markdown reports over whole runs.

#![allow(clippy::unwrap_used)]

use crate::model::Model;
use crate::{html_report, markdown_report, ResultEntry, RunReport};
use fsarena_core::run::Param;
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
    let mut m =
        Measurement { fio: Some(fsarena_core::FioDetail { jobs: vec![job] }), complete: true, ..Default::default() };
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
        wall_ms: None,
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
fn kept_series_get_a_time_chart_each_memory_last() {
    let mut report = two_targets();
    for (i, e) in report.results.iter_mut().enumerate() {
        let m = e.measurements.last_mut().unwrap();
        m.add_series("mem.page_cache", fsarena_core::Series::per_second("bytes", vec![1e6, 2e6 * (i + 1) as f64]));
        m.add_series("ops_per_s", fsarena_core::Series::per_second("ops/s", vec![10.0, 20.0, 30.0]));
    }
    let html = html_report(&[report]);
    assert_eq!(html.matches("data-chart=\"timeseries\"").count(), 3, "bandwidth, ops_per_s, page cache");
    let ops = html.find("ops_per_s per interval").unwrap();
    let cache = html.find("page cache (system)").unwrap();
    assert!(ops < cache, "the workload's own series before memory");
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

/// The CubeFS matrix: rw × numjobs as one `--workload` with lists; the params hold the point's
/// values, the point the typed numbers.
fn matrix(targets: &[&str]) -> Vec<ResultEntry> {
    let mut results = Vec::new();
    for target in targets {
        for rw in ["read", "write", "randread", "randwrite"] {
            for (numjobs, scale) in [(1.0, 1.0), (4.0, 3.0), (16.0, 7.0), (64.0, 9.0)] {
                let nj = numjobs.to_string();
                let mut e = entry(target, &[("rw", rw), ("bs", "4k"), ("numjobs", &nj)], scale);
                e.point = vec![
                    Param { key: "rw".into(), given: rw.into(), number: None },
                    Param { key: "numjobs".into(), given: nj.clone(), number: Some(numjobs) },
                ];
                results.push(e);
            }
        }
    }
    results
}

#[test]
fn the_cubefs_matrix_gives_sixteen_results_and_four_sweep_charts() {
    for targets in [&["ext4"][..], &["ext4", "xfs"][..]] {
        let report = run("r1", matrix(targets));
        let model = Model::new(std::slice::from_ref(&report));
        assert_eq!(model.results.len(), 16, "never merged");
        assert!(model.results.iter().all(|g| g.entries.len() == targets.len()));
        assert_eq!(model.results[5].label(), "rw=write numjobs=4");
        assert_eq!(model.common, ["io: bs=4k"]);
        assert_eq!(model.sweeps.len(), 4, "one per rw");
        assert_eq!(model.sweeps[0].title(), "numjobs sweep · rw=read");
        let html = html_report(&[report]);
        // read_iops and read_bw are proportional (fixed bs): one headline chart per sweep.
        assert_eq!(html.matches("data-chart=\"sweep\"").count(), 4, "{targets:?}");
        assert_eq!(html.matches("data-chart=\"bar\"").count(), 0, "swept results have no bar charts");
        let sweep = html.split("data-chart=\"sweep\"").nth(1).unwrap();
        let sweep = &sweep[..sweep.find("</svg>").unwrap()];
        assert_eq!(sweep.matches("<path").count(), targets.len(), "one line per target");
        // 1..64 spans 64×: a log axis, ticks at the values as given.
        assert!(sweep.contains(">numjobs (log scale)</text>"), "{sweep}");
        for tick in [">1</text>", ">4</text>", ">16</text>", ">64</text>"] {
            assert!(sweep.contains(tick), "{tick}");
        }
        assert_eq!(html.matches("<section id=\"result-").count(), 16);
    }
}

#[test]
fn sweep_values_sort_by_their_number_and_words_are_no_axis() {
    let results = [("64k", 65536.0), ("4k", 4096.0), ("1m", 1048576.0)]
        .iter()
        .map(|(bs, n)| {
            let mut e = entry("ext4", &[("bs", bs)], 1.0);
            e.point = vec![Param { key: "bs".into(), given: bs.to_string(), number: Some(*n) }];
            e
        })
        .collect();
    let html = html_report(&[run("r1", results)]);
    assert!(html.contains("bs</code> = 4k, 64k, 1m"), "{html}");
    // A word-valued key (rw) never makes a sweep, even with a number in its params.
    let results = ["read", "write"]
        .iter()
        .map(|rw| {
            let mut e = entry("ext4", &[("rw", rw), ("numjobs", "4")], 1.0);
            e.point = vec![Param { key: "rw".into(), given: rw.to_string(), number: None }];
            e
        })
        .collect::<Vec<_>>();
    let report = run("r1", results);
    assert!(Model::new(std::slice::from_ref(&report)).sweeps.is_empty());
}

#[test]
fn parts_of_one_workload_are_separate_rows_labelled_by_part() {
    // A four-job fio file: one workload, the same params, four parts.
    let results: Vec<ResultEntry> = ["seqwrite", "seqread", "randwrite", "randread"]
        .iter()
        .map(|job| {
            let mut e = entry("tmpfs", &[("ioengine", "psync"), ("size", "4m")], 1.0);
            e.part = Some(job.to_string());
            e
        })
        .collect();
    let report = run("r1", results);
    let model = Model::new(std::slice::from_ref(&report));
    let labels: Vec<String> = model.results.iter().map(|g| g.label()).collect();
    assert_eq!(labels, ["seqwrite", "seqread", "randwrite", "randread"]);
    assert_eq!(model.common, ["io: ioengine=psync, size=4m"]);
    // Params that differ between workloads label them; shared ones are said once.
    let report = run(
        "r1",
        vec![entry("a", &[("rw", "read"), ("bs", "4k")], 1.0), entry("a", &[("rw", "write"), ("bs", "4k")], 1.0)],
    );
    let model = Model::new(std::slice::from_ref(&report));
    assert_eq!(model.results.iter().map(|g| g.label()).collect::<Vec<_>>(), ["rw=read", "rw=write"]);
}

#[test]
fn constant_counts_get_no_chart_and_wide_overlaps_no_colour() {
    let mut report = two_targets();
    for (i, e) in report.results.iter_mut().enumerate() {
        for m in &mut e.measurements {
            m.push("file_creation_items", "items", Better::Higher, 1000.0);
            m.push("constant_rate", "ops/s", Better::Higher, 5.0);
        }
        // Noisy cpu_sys, overlapping between the targets: 486 ± 605 against 412 ± 458.
        let noisy: [[f64; 3]; 2] = [[250.0, 400.0, 808.0], [230.0, 380.0, 626.0]];
        for (m, v) in e.measurements.iter_mut().zip(noisy[i]) {
            m.metrics.iter_mut().filter(|x| x.name == "cpu_sys").for_each(|x| x.value = v);
        }
    }
    let html = html_report(&[report]);
    assert!(!html.contains(">file_creation_items</text>") && !html.contains(">constant_rate</text>"));
    assert_eq!(html.matches("data-chart=\"bar\"").count(), 4);
    let row = html.split("<td class=\"metric\">cpu_sys").nth(1).unwrap();
    let row = &row[..row.find("</tr>").unwrap()];
    // Their ratio's interval spans more than 10×: too noisy to tell, as Findings would say.
    assert!(row.contains(">too noisy</span>") && !row.contains("best") && !row.contains("worst"), "{row}");
}

#[test]
fn a_report_of_two_runs_has_an_ab_section() {
    let before = RunReport { name: Some("before".into()), ..two_targets() };
    let mut after = RunReport { id: "r2".into(), name: Some("after".into()), ..two_targets() };
    // xfs doubled its IOPS in "after"; ext4 did not change; btrfs is new.
    for m in &mut after.results[1].measurements {
        m.metrics.iter_mut().filter(|x| x.name == "read_iops").for_each(|x| x.value *= 2.0);
    }
    after.results.push(entry("btrfs", &[("rw", "randread"), ("bs", "4k")], 1.0));
    let html = html_report(&[before.clone(), after.clone()]);
    let ab = html.split("<section id=\"ab-1\">").nth(1).unwrap();
    let ab = &ab[..ab.find("</section>").unwrap()];
    assert!(ab.contains("A/B: before → after"), "{ab}");
    assert!(ab.contains("<td>xfs</td><td>io</td><td>read_iops</td>"), "{ab}");
    assert!(ab.contains("+100.0%") && ab.contains("<td class=\"better\">better</td>"), "{ab}");
    assert!(ab.contains("<td>n.s.</td>"), "unchanged ext4: {ab}");
    assert!(ab.contains("Only in after (not compared):") && ab.contains("btrfs · io:rw=randread,bs=4k"), "{ab}");
    let (md, _) = markdown_report(&[before, after]);
    assert!(md.contains("## A/B: before → after"), "{md}");
    assert!(md.contains("| xfs | io | read\\_iops |") && md.contains("**better**"), "{md}");
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
    assert!(md.contains("| read\\_iops ↑ | _26.2k ± 3.1k ops/s_ | **52.5k ± 6.2k ops/s** |"), "{md}");
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

/// `report` with an experiment of one row holding all its results, and `figures`, in its plan.
fn with_figures(mut report: RunReport, figures: Vec<crate::experiment::Figure>) -> RunReport {
    use crate::experiment::{Experiment, Row};
    let mut workloads: Vec<String> = report.results.iter().map(ResultEntry::workload_title).collect();
    workloads.dedup();
    let experiment = Experiment {
        name: "study".into(),
        scale: "smoke".into(),
        rows: vec![Row { id: "fio".into(), title: "fio modes".into(), workloads, ..Row::default() }],
        figures,
        ..Experiment::default()
    };
    report.plan.push_str(&experiment.plan_suffix());
    report
}

fn figure(id: &str, kind: crate::experiment::FigureKind, x: &str, facet: Option<&str>) -> crate::experiment::Figure {
    crate::experiment::Figure {
        id: id.into(),
        caption: format!("Fig. {id}: modes × filesystems"),
        kind,
        rows: vec!["fio".into()],
        x: x.into(),
        series: "target".into(),
        facet: facet.map(String::from),
        metric: vec!["write_bw".into(), "read_bw".into()],
    }
}

#[test]
fn a_figure_of_grouped_bars_has_the_declared_categories_and_series() {
    use crate::experiment::FigureKind;
    let report = with_figures(
        run("r1", matrix(&["ext4", "xfs"])),
        vec![figure("b", FigureKind::Bars, "rw", Some("numjobs")), figure("t", FigureKind::Table, "numjobs", None)],
    );
    let model = Model::new(std::slice::from_ref(&report));
    let experiment = crate::experiment::Experiment::from_plan(&report.plan).unwrap();
    let drawn = crate::figures::of_run(&experiment, &report, &model);
    assert_eq!(drawn[1].facets.len(), 1, "no facet: one table");
    let bars = &drawn[0];
    let titles: Vec<&str> = bars.facets.iter().filter_map(|f| f.title.as_deref()).collect();
    assert_eq!(titles, ["numjobs=1", "numjobs=4", "numjobs=16", "numjobs=64"]);
    for facet in &bars.facets {
        let xs: Vec<&str> = facet.xs.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(xs, ["read", "write", "randread", "randwrite"]);
        let series: Vec<&str> = facet.series.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(series, ["ext4", "xfs"]);
        // The fixtures measure read_bw in every mode: a bar per mode and target.
        assert_eq!(facet.cells.iter().flatten().filter(|c| c.is_some()).count(), 4 * 2);
    }
    let html = html_report(&[report]);
    assert_eq!(html.matches("data-chart=\"grouped\"").count(), 4, "one chart per facet");
    let first = html.split("data-chart=\"grouped\"").nth(1).unwrap();
    let first = &first[..first.find("</svg>").unwrap()];
    assert_eq!(first.matches("<rect").count(), 1 + 4 * 2 + 2, "background, 4 modes × 2 targets, legend");
    for category in [">read</text>", ">write</text>", ">randread</text>", ">randwrite</text>"] {
        assert!(first.contains(category), "{category}");
    }
    // The figures lead, in the declared order, before the Findings; the rows' detail is folded.
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s}"));
    assert!(at("id=\"figure-b\"") < at("id=\"figure-t\"") && at("id=\"figure-t\"") < at("id=\"findings\""));
    assert!(at("id=\"findings\"") < at("<details class=\"row-detail\""));
    assert!(at("<details class=\"row-detail\"") < at("id=\"sweep-1\""), "sweeps under their row");
    // The table: a line per numjobs, a column per target.
    let table = &html[at("id=\"figure-t\"")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr>").count(), 1 + 4);
    assert!(table.contains("<th>numjobs \\ target</th><th class=\"num\">ext4</th><th class=\"num\">xfs</th>"));
}

#[test]
fn a_one_point_series_draws_no_chart() {
    use crate::experiment::FigureKind;
    // One numjobs: a line figure across numjobs would have one point per line.
    let mut report = two_targets();
    for e in &mut report.results {
        e.workload_params.push(("numjobs".into(), "1".into()));
        let m = e.measurements.last_mut().unwrap();
        m.add_series("mem.page_cache", fsarena_core::Series::per_second("bytes", vec![1e6]));
        for m in &mut e.measurements {
            if let Some(fio) = &mut m.fio {
                fio.jobs[0].read.bw_series.truncate(1);
            }
        }
    }
    let report = with_figures(report, vec![figure("l", FigureKind::Lines, "numjobs", None)]);
    let html = html_report(&[report]);
    assert_eq!(html.matches("data-chart=\"figure\"").count(), 0);
    assert!(html.contains("One point per series at this scale: shown as a table."));
    assert_eq!(html.matches("data-chart=\"timeseries\"").count(), 0, "one second, one memory sample");
    // A sweep in which one target has a single point: the other's line only.
    let mut results = matrix(&["ext4"]);
    let mut lone = matrix(&["xfs"]);
    lone.truncate(1);
    results.extend(lone);
    let html = html_report(&[run("r1", results)]);
    let sweep = html.split("data-chart=\"sweep\"").nth(1).unwrap();
    let sweep = &sweep[..sweep.find("</svg>").unwrap()];
    assert_eq!(sweep.matches("<path").count(), 1, "no line of one point");
}
