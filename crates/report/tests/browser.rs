//! Loads the HTML report in Debian's headless Chromium: every chart is in the rendered DOM with
//! something drawn in it, a hostile target label is text and not an element, and a screenshot
//! of the page is not blank.
//!
//! Chromium is required, not optional: `make test` installs it (`apt-get install chromium`).
//! Set `FSARENA_BROWSER_TEST_OUT=DIR` to keep the report and the screenshot in DIR.

#![allow(clippy::unwrap_used)]

use fsarena_core::run::{Param, Presenter, VerdictSection};
use fsarena_core::{Better, DirectionResult, JobResult, LatencySummary, Measurement, Nanos, FIO_PERCENTILES};
use fsarena_report::{html_report, ResultEntry, RunReport};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const HOSTILE: &str = "<script>alert(1)</script>";
/// How long one Chromium invocation may take before the test fails.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);

/// One repetition of `io` with two directions, per-second series and latency percentiles.
fn measurement(scale: f64, repetition: u32) -> Measurement {
    let jitter = 1.0 + 0.04 * f64::from(repetition);
    let direction = |base_bw: f64, base_lat: f64| DirectionResult {
        io_bytes: (base_bw * 10.0 * scale) as u64,
        total_ios: (base_bw * 10.0 * scale / 4096.0) as u64,
        runtime: Nanos(10_000_000_000),
        clat: LatencySummary {
            min: (base_lat / 4.0) as u64,
            max: (base_lat * 400.0) as u64,
            mean: base_lat,
            stddev: base_lat / 2.0,
            samples: 100_000,
            percentiles: FIO_PERCENTILES
                .iter()
                .map(|&p| (p, (base_lat / scale * (1.0 + 50.0 / (100.1 - p))) as u64))
                .collect(),
        },
        bw_series: (0..20).map(|s| base_bw * scale * jitter * (1.0 + 0.15 * (f64::from(s) * 0.9).sin())).collect(),
        iops_series: (0..20).map(|_| base_bw * scale / 4096.0).collect(),
        ..Default::default()
    };
    let job = JobResult {
        name: "randrw".into(),
        clones: 1,
        read: direction(180e6, 40_000.0),
        write: direction(60e6, 90_000.0),
        ..Default::default()
    };
    let mut m =
        Measurement { fio: Some(fsarena_core::FioDetail { jobs: vec![job] }), complete: true, ..Default::default() };
    m.push("read_iops", "ops/s", Better::Higher, 44_000.0 * scale * jitter);
    m.push("read_bw", "bytes/s", Better::Higher, 180e6 * scale * jitter);
    m.push("read_lat_p99", "ns", Better::Lower, 120_000.0 / scale * jitter);
    m.push("write_iops", "ops/s", Better::Higher, 14_600.0 * scale / jitter);
    m.push("write_bw", "bytes/s", Better::Higher, 60e6 * scale / jitter);
    m.push("cpu_sys", "%", Better::Lower, 18.0 * scale * jitter);
    m
}

fn entry(target: &str, kind: &str, numjobs: &str, scale: f64) -> ResultEntry {
    ResultEntry {
        target_label: target.into(),
        target_kind: kind.into(),
        target_options: vec![("size".into(), "2g".into())],
        target_info: vec![
            ("mkfs".into(), format!("mkfs.{kind} -q /var/tmp/fsarena/{kind}.img")),
            ("mount options".into(), "rw,relatime".into()),
            ("loop device".into(), "/dev/loop3".into()),
        ],
        workload_kind: "io".into(),
        workload_params: vec![
            ("rw".into(), "randrw".into()),
            ("bs".into(), "4k".into()),
            ("numjobs".into(), numjobs.into()),
        ],
        point: vec![Param { key: "numjobs".into(), given: numjobs.into(), number: numjobs.parse().ok() }],
        part: None,
        measurements: (0..3).map(|r| measurement(scale, r)).collect(),
        wall_ms: None,
    }
}

/// Two targets, one with a hostile label, three repetitions, a numjobs sweep 1, 2, 4.
fn report() -> RunReport {
    let mut results = Vec::new();
    for (target, kind, speed) in [("ext4", "ext4", 1.0), (HOSTILE, "xfs", 1.3)] {
        for (numjobs, scaling) in [("1", 1.0), ("2", 1.7), ("4", 2.6)] {
            results.push(entry(target, kind, numjobs, speed * scaling));
        }
        // A workload of its own, not swept: it gets bar charts and curves.
        let mut single = entry(target, kind, "8", speed * 3.0);
        single.point.clear();
        single.workload_params.push(("direct".into(), "1".into()));
        results.push(single);
        // A compliance result: its own table, no chart; a hostile failure text stays text.
        results.push(ResultEntry {
            target_label: target.into(),
            target_kind: kind.into(),
            workload_kind: "posix".into(),
            part: Some("rmdir".into()),
            measurements: vec![Measurement {
                complete: true,
                verdicts: vec![fsarena_core::Verdict {
                    case: "rmdir.nonempty_dir.ENOTEMPTY".into(),
                    security: false,
                    outcome: if kind == "xfs" { fsarena_core::Outcome::Fail } else { fsarena_core::Outcome::Pass },
                    expected: "ENOTEMPTY".into(),
                    actual: HOSTILE.into(),
                }],
                ..Default::default()
            }],
            ..Default::default()
        });
    }
    RunReport {
        id: "1700000000-4242".into(),
        started_unix_ms: 1_700_000_000_000,
        environment: vec![
            ("cpu".into(), "AMD EPYC 7B13 64-Core Processor".into()),
            ("cores".into(), "2".into()),
            ("memory".into(), "24 GiB".into()),
            ("kernel".into(), "6.1.0-18-amd64".into()),
            ("distribution".into(), "Debian GNU/Linux 12 (bookworm)".into()),
            ("fsarena_version".into(), "0.1.0".into()),
        ],
        results,
        plan: "fsarena run --target ext4 --target xfs --workload io:rw=randrw,bs=4k,numjobs=1,2,4".into(),
        complete: true,
        ..Default::default()
    }
}

/// Runs Chromium headless on `page` with `args`, failing the test past [`BROWSER_TIMEOUT`].
fn chromium(profile: &Path, args: &[String], page: &Path) -> Output {
    assert!(Path::new(CHROMIUM).exists(), "chromium is missing: `make test` installs it (apt-get install chromium)");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes while waiting: a DOM larger than the pipe buffer would block Chromium.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() };
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Where the report and screenshot go: a fresh temporary directory, or the one the
/// environment names.
fn output_dir() -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var_os("FSARENA_BROWSER_TEST_OUT") {
        Some(dir) => {
            std::fs::create_dir_all(&dir).unwrap();
            (None, PathBuf::from(dir).canonicalize().unwrap())
        }
        None => {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().to_path_buf();
            (Some(tmp), path)
        }
    }
}

#[test]
fn report_renders_every_chart_in_chromium() {
    // posix's presenter, in the words of its registry line (the report knows no kind by name;
    // the binary registers every kind's from fsarena-kinds).
    static POSIX: VerdictSection = VerdictSection {
        title: "POSIX compliance",
        unsupported_examples: "no ACLs, no immutable attribute",
        security: "the access-control cases of every family",
    };
    fsarena_report::set_presenters(vec![("posix", Presenter { text: None, verdicts: Some(&POSIX) })]);
    let (_keep, dir) = output_dir();
    let html = html_report(&[report()]);
    let generated = html.matches("<svg class=\"chart\"").count();
    // The workload not swept: 6 bar charts, read and write latency, read and write bandwidth;
    // the sweep: one line chart per direction (iops and bandwidth are one quantity).
    assert_eq!(generated, 6 + 2 + 2 + 2);
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();

    let profile = tempfile::tempdir().unwrap();
    let dom = chromium(profile.path(), &["--dump-dom".to_string()], &page);
    let dom = String::from_utf8(dom.stdout).unwrap();
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), generated, "charts in the rendered DOM");
    for (i, chart) in dom.split("<svg class=\"chart\"").skip(1).enumerate() {
        let body = &chart[..chart.find("</svg>").unwrap_or(chart.len())];
        assert!(["<path", "<rect", "<line"].iter().any(|shape| body.contains(shape)), "chart {i} draws nothing");
    }
    for kind in ["bar", "latency", "timeseries", "sweep"] {
        assert!(dom.contains(&format!("data-chart=\"{kind}\"")), "no {kind} chart");
    }
    assert!(!dom.contains("<script>alert"), "the hostile label became an element");
    assert!(!dom.contains("<script"), "the report has no script at all");
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the hostile label is not shown as text");
    assert!(dom.contains("<section id=\"posix\">") && dom.contains("rmdir.nonempty_dir.ENOTEMPTY"), "posix table");

    let shot = dir.join("report.png");
    let profile = tempfile::tempdir().unwrap();
    chromium(
        profile.path(),
        &[format!("--screenshot={}", shot.display()), "--window-size=1280,2000".to_string()],
        &page,
    );
    let size = std::fs::metadata(&shot).unwrap().len();
    assert!(size > 20_000, "screenshot is only {size} bytes");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (1280, 2000));
    let channels = frame.color_type.samples();
    let pixels = &pixels[..frame.buffer_size()];
    let mut colours: Vec<&[u8]> = pixels.chunks(channels).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() > 50, "screenshot looks blank: {} colours", colours.len());
}
