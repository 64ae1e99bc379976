//! The tools Debian's fio package ships read fsarena's outputs as they read fio's:
//! `fio_jsonplus_clat2csv` on json+, `fio2gnuplot` and `fio_generate_plots` on the log files.
//! Each test runs the same job under fio and fsarena and compares the shape of what the tool
//! makes (files, columns, lines) and the counts (I/Os per log), never timings. Also here:
//! fio-json's `disk_util` on a loop-backed target.

use crate::util::Bounded;
use crate::util::{fsarena, json, require, stdout, Scratch, TempDir};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

/// fio with `args` (each `--`-prefixed) run in `dir`, its directory= there too.
fn fio_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(require("fio"))
        .current_dir(dir)
        .arg(format!("--directory={}", dir.display()))
        .args(args.iter().map(|a| format!("--{a}")))
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// fsarena running the same options as an `io` workload on a `dir:` target at `dir`, with
/// `dir` as its current directory (where fio writes logs).
fn fsarena_in(dir: &Path, args: &[&str], format: &str) -> Output {
    let work = TempDir::new();
    let spec = format!("io:{}", args.join(","));
    let out = fsarena()
        .current_dir(dir)
        .args(["run", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir", &format!("{}/w", work.0)])
        .args(["--target", &format!("dir:path={}", dir.display()), "--workload", &spec, "--output-format", format])
        .bounded_output()
        .expect("fsarena runs");
    assert!(out.status.success(), "fsarena failed: {}", crate::util::stderr(&out));
    out
}

/// The log files in `dir` (`*.log`), by name.
fn logs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).expect("log").lines().map(str::to_string).collect()
}

#[test]
fn clat2csv_reads_fsarenas_json_plus_as_fios() {
    let tool = require("fio_jsonplus_clat2csv");
    let job = ["name=plus", "rw=randwrite", "bs=4k", "size=4m", "ioengine=psync"];
    let (a, b) = (Scratch::new("clat2csv-fio"), Scratch::new("clat2csv-ours"));
    let fio = fio_in(&a.path, &[&job[..], &["output-format=json+"]].concat());
    let ours = fsarena_in(&b.path, &job, "json+");
    let mut csvs = Vec::new();
    for (dir, out) in [(&a, fio), (&b, ours)] {
        std::fs::write(dir.path.join("out.json"), &out.stdout).expect("write json");
        let done =
            Command::new(&tool).current_dir(&dir.path).args(["out.json", "csv"]).bounded_output().expect("tool runs");
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
        // One CSV per job, named after the prefix and the job's index.
        let csv = std::fs::read_to_string(dir.path.join("csv_job0")).expect("csv_job0 written");
        csvs.push(csv);
    }
    let shape = |csv: &str| -> (String, usize, u64, String) {
        let mut rows = csv.lines();
        let header = rows.next().expect("header").to_string();
        let rows: Vec<Vec<&str>> = rows.map(|r| r.split(", ").collect()).collect();
        assert!(rows.iter().all(|r| r.len() == header.split(", ").count()), "ragged CSV:\n{csv}");
        let col = header.split(", ").position(|c| c == "write_clat_ns_count").expect("write_clat_ns_count");
        let count: u64 = rows.iter().filter_map(|r| r[col].trim().parse::<u64>().ok()).sum();
        let last = rows.last().map(|r| r[col + 2].trim().to_string()).unwrap_or_default();
        (header, rows.first().map_or(0, Vec::len), count, last)
    };
    let (fio, ours) = (shape(&csvs[0]), shape(&csvs[1]));
    assert_eq!(ours.0, fio.0, "the same columns");
    assert_eq!(ours.1, fio.1);
    // Every write counted once, the cumulative share ending at 1.
    assert_eq!((ours.2, fio.2), (1024, 1024));
    assert_eq!(ours.3, fio.3);
    assert_eq!(ours.3, "1.0");
}

#[test]
fn per_io_logs_are_named_and_counted_as_fios() {
    let logs_opts = "write_bw_log=j,write_lat_log=j,write_iops_log=j,write_hist_log=j";
    let job = ["name=j", "rw=randwrite", "bs=64k", "size=4m", "numjobs=2", "ioengine=psync", logs_opts];
    let (a, b) = (Scratch::new("logs-fio"), Scratch::new("logs-ours"));
    let opts: Vec<&str> = job.iter().flat_map(|o| o.split(',')).collect();
    fio_in(&a.path, &opts);
    fsarena_in(&b.path, &job, "fio-json");
    let names = logs(&a.path);
    assert_eq!(logs(&b.path), names);
    assert!(names.contains("j_bw.2.log") && names.contains("j_clat_hist.1.log"), "{names:?}");
    for name in &names {
        let (fio, ours) = (lines(&a.path.join(name)), lines(&b.path.join(name)));
        // One line per I/O (64 per clone), none in slat (synchronous engine) and none in the
        // histogram log without log_hist_msec, in both.
        assert_eq!(ours.len(), fio.len(), "{name}");
        let fields = |l: &[String]| l.iter().map(|x| x.split(", ").count()).collect::<BTreeSet<_>>();
        assert_eq!(fields(&ours), fields(&fio), "{name}: fields per line");
        // Direction and block size columns agree line by line.
        let tail =
            |l: &[String]| l.iter().map(|x| x.split(", ").skip(2).collect::<Vec<_>>().join(",")).collect::<Vec<_>>();
        assert_eq!(tail(&ours), tail(&fio), "{name}: ddir, bs, prio");
    }
    assert_eq!(lines(&b.path.join("j_iops.1.log")).len(), 64);
}

#[test]
fn log_tools_plot_fsarenas_logs_as_fios() {
    let (generate, to_gnuplot) = (require("fio_generate_plots"), require("fio2gnuplot"));
    require("gnuplot");
    let logs_opts = "write_bw_log=j,write_lat_log=j,write_iops_log=j,write_hist_log=j";
    let job = [
        "name=j",
        "rw=randread",
        "bs=4k",
        "size=4m",
        "runtime=2",
        "time_based=1",
        "log_avg_msec=200",
        "log_hist_msec=500",
        logs_opts,
    ];
    let (a, b) = (Scratch::new("plots-fio"), Scratch::new("plots-ours"));
    let opts: Vec<&str> = job.iter().flat_map(|o| o.split(',')).collect();
    fio_in(&a.path, &opts);
    fsarena_in(&b.path, &job, "fio-json");
    assert_eq!(logs(&b.path), logs(&a.path));
    let mut made = Vec::new();
    for dir in [&a.path, &b.path] {
        // Averaged lines: time, value, ddir, 0, 0; histogram lines: time, ddir, bs, 1856 bins.
        let bw = lines(&dir.join("j_bw.1.log"));
        assert!(bw.len() >= 8, "{bw:?}");
        assert!(bw.iter().all(|l| l.ends_with(", 0, 0, 0") && l.split(", ").count() == 5), "{bw:?}");
        let hist = lines(&dir.join("j_clat_hist.1.log"));
        assert!(hist.len() >= 3 && hist.iter().all(|l| l.split(", ").count() == 1859), "{} lines", hist.len());
        let plots =
            Command::new(&generate).current_dir(dir).arg("t").bounded_output().expect("fio_generate_plots runs");
        assert!(plots.status.success(), "{}", String::from_utf8_lossy(&plots.stderr));
        std::fs::create_dir_all(dir.join("g")).expect("g");
        let traces = Command::new(&to_gnuplot)
            .current_dir(dir)
            .args(["-b", "-g", "-d", "g"])
            .bounded_output()
            .expect("fio2gnuplot runs");
        assert!(traces.status.success(), "{}", stdout(&traces));
        let mut files: BTreeSet<String> = BTreeSet::new();
        for sub in [dir.clone(), dir.join("g")] {
            for e in std::fs::read_dir(&sub).expect("dir").flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let non_empty = e.metadata().map(|m| m.len() > 0).unwrap_or(false);
                if (name.ends_with(".svg") || name.ends_with(".png")) && non_empty {
                    files.insert(name);
                }
            }
        }
        made.push(files);
    }
    assert!(made[0].contains("t-bw.svg") && made[0].contains("j_bw.1-2Draw.png"), "{:?}", made[0]);
    assert_eq!(made[1], made[0], "the plots fsarena's logs give, against fio's");
}

#[test]
fn disk_util_lists_the_loop_device_and_the_disk_behind_it() {
    let work = TempDir::new();
    let out = fsarena()
        .args(["run", "--no-store", "--repeat", "1", "--warmup", "0", "--workdir", &format!("{}/w", work.0)])
        .args(["--target", "ext4:size=256m", "--workload", "io:rw=write,bs=64k,size=16m,direct=1,end_fsync=1"])
        .args(["--output-format", "fio-json"])
        .bounded_output()
        .expect("fsarena runs");
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    let v = json(&out);
    assert!(v["fio version"].as_str().is_some_and(|s| s.starts_with("fio-")), "{}", v["fio version"]);
    assert!(v["fsarena version"].as_str().is_some_and(|s| s.starts_with("fsarena-")));
    let disks = v["disk_util"].as_array().expect("disk_util on a loop-backed target");
    let loop_dev = &disks[0];
    assert!(loop_dev["name"].as_str().is_some_and(|n| n.starts_with("loop")), "{loop_dev}");
    // 16 MiB of O_DIRECT 64 KiB writes reach the loop device: at least 256 writes (the
    // filesystem adds its own), none read back.
    assert!(loop_dev["write_ios"].as_u64().is_some_and(|n| n >= 256), "{loop_dev}");
    for key in ["read_ios", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue"] {
        assert!(loop_dev[key].is_u64(), "{key}: {loop_dev}");
    }
    assert!(loop_dev["util"].as_f64().is_some_and(|u| (0.0..=100.0).contains(&u)));
    // The disk holding the image is the loop device's slave: aggregated beside it and listed.
    if let Some(slave) = disks.get(1) {
        assert!(loop_dev["aggr_write_ios"].is_u64() && loop_dev["aggr_util"].is_f64(), "{loop_dev}");
        assert!(slave.get("aggr_read_ios").is_none());
    }
    // tmpfs has no block device: no disk_util, as fio.
    let tmpfs = Scratch::new("disk-util-tmpfs");
    let out = fsarena_in(&tmpfs.path, &["rw=write", "bs=64k", "size=1m"], "fio-json");
    assert!(json(&out).get("disk_util").is_none());
}
