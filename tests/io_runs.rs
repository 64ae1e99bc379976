//! Short `io` jobs end to end on tmpfs.

use crate::util::{json, run, stderr, stdout, Scratch};

fn run_ok(args: &[&str]) -> std::process::Output {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    out
}

fn fio_json(dir: &Scratch, workload: &str) -> serde_json::Value {
    json(&run_ok(&["run", "--target", &dir.spec(), "--workload", workload, "--output-format", "fio-json"]))
}

#[test]
fn human_summary_reads_like_fio() {
    let dir = Scratch::new("human");
    let out = run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw=randread,bs=4k,size=32m,runtime=1s,time_based=1",
    ]);
    let text = stdout(&out);
    for want in ["read: IOPS=", "BW=", "/s (", "clat percentiles", "99.99th=[", "cpu          : usr=", "layout:"] {
        assert!(text.contains(want), "summary lacks '{want}':\n{text}");
    }
    assert!(stderr(&out).contains("laid out"), "layout progress goes to stderr");
    assert!(dir.leftovers().is_empty(), "files left: {:?}", dir.leftovers());
}

#[test]
fn json_follows_the_documented_schema() {
    let dir = Scratch::new("json");
    let v = json(&run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw=randrw,bs=4k,size=16m",
        "--output-format",
        "json",
    ]));
    assert_eq!(v["schema"], 1);
    let r = &v["run"]["results"][0];
    assert_eq!(r["workload"]["kind"], "io");
    assert_eq!(r["target"]["kind"], "dir");
    assert_eq!(r["complete"], true);
    for m in [
        "read_iops",
        "read_bw",
        "read_lat_mean",
        "read_lat_p50",
        "read_lat_p99",
        "read_lat_p999",
        "write_iops",
        "write_bw",
        "write_lat_p99",
        "cpu_usr",
        "cpu_sys",
    ] {
        let metric = &r["metrics"][m];
        assert!(metric["values"][0].as_f64().is_some(), "metric {m} missing: {r}");
        assert!(metric["mean"].as_f64().is_some());
    }
    assert_eq!(r["metrics"]["read_iops"]["better"], "higher");
    assert_eq!(r["metrics"]["read_lat_p99"]["unit"], "ns");
    let env = &v["run"]["environment"];
    assert!(env["kernel"].as_str().unwrap().starts_with("Linux"));
}

#[test]
fn fio_json_has_fios_shape_and_units() {
    let dir = Scratch::new("fiojson");
    let v = fio_json(&dir, "io:name=shape,rw=read,bs=64k,size=16m");
    // Scripts match "fio-"; what wrote it is under a key of its own (docs/results-schema.md).
    assert_eq!(v["fio version"], "fio-3.33");
    assert!(v["fsarena version"].as_str().unwrap().starts_with("fsarena-"));
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "shape");
    let read = &job["read"];
    assert_eq!(read["io_bytes"], 16 << 20);
    assert_eq!(read["io_kbytes"], 16 << 10);
    assert_eq!(read["total_ios"], 256);
    let runtime = read["runtime"].as_u64().unwrap().max(1);
    assert_eq!(read["bw_bytes"].as_u64().unwrap(), 1000 * (16u64 << 20) / runtime);
    assert_eq!(read["bw"].as_u64().unwrap(), read["bw_bytes"].as_u64().unwrap() / 1024);
    let clat = &read["clat_ns"];
    assert_eq!(clat["N"], 256);
    assert!(clat["min"].as_u64().unwrap() <= clat["percentile"]["50.000000"].as_u64().unwrap());
    assert!(clat["percentile"]["99.990000"].as_u64().unwrap() <= clat["max"].as_u64().unwrap());
    assert_eq!(clat["percentile"].as_object().unwrap().len(), 17);
    assert!(read["lat_ns"]["percentile"].is_null(), "fio prints lat percentiles only on request");
    assert_eq!(job["write"]["io_bytes"], 0);
    assert!(job["usr_cpu"].as_f64().is_some() && job["ctx"].as_u64().is_some());
}

#[test]
fn loops_nrfiles_offset_and_bssplit_move_fios_bytes() {
    let dir = Scratch::new("shapes");
    let v = fio_json(&dir, "io:rw=read,bs=4k,size=4m,loops=3");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 3 * (4 << 20));
    let v = fio_json(&dir, "io:rw=randwrite,bs=4k,size=4m,nrfiles=4");
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 1024);
    let v = fio_json(&dir, "io:rw=read,bs=4k,filesize=4m,offset=1m");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 3 << 20);
    let v = fio_json(&dir, "io:rw=randread,bssplit=4k/50:64k/50,size=8m");
    let bytes = v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
    assert!((8 << 20..(8 << 20) + 65536).contains(&bytes), "bssplit moved {bytes}");
    let v = fio_json(&dir, "io:rw=randread,bs=4k,size=4m,norandommap=1,randseed=7");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 1024);
    let v = fio_json(&dir, "io:rw=randread,bs=4k,size=4m,random_distribution=zipf:1.2");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 1024);
    assert!(dir.leftovers().is_empty());
}

#[test]
fn numjobs_group_reporting_and_fsync() {
    let dir = Scratch::new("groups");
    let v = fio_json(&dir, "io:rw=write,bs=4k,size=4m,numjobs=3,group_reporting=1,fsync=8");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "group_reporting merges the clones");
    assert_eq!(jobs[0]["write"]["total_ios"], 3 * 1024);
    // fio issues a due fsync before the next write: none after each clone's last one.
    assert_eq!(jobs[0]["sync"]["total_ios"], 3 * (1024 / 8 - 1));
    let v = fio_json(&dir, "io:rw=write,bs=4k,size=4m,numjobs=3,end_fsync=1");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3);
    // fio does not count the end_fsync among the job's syncs.
    assert_eq!(v["jobs"][2]["sync"]["total_ios"], 0);
}

#[test]
fn direct_io_and_sync_engines_on_tmpfs() {
    let dir = Scratch::new("direct");
    let v = fio_json(&dir, "io:rw=randwrite,bs=4k,size=4m,direct=1,ioengine=sync");
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 1024);
    let v = fio_json(&dir, "io:rw=read,bs=4k,size=4m,direct=1,sync=dsync");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 1024);
}

#[test]
fn time_based_ramp_and_rate() {
    let dir = Scratch::new("timing");
    let v = fio_json(&dir, "io:rw=randread,bs=4k,size=4m,time_based=1,runtime=1,ramp_time=1");
    let ms = v["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!((900..1500).contains(&ms), "ramp_time must not count: runtime {ms} ms");
    assert!(v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 4 << 20, "time_based loops over the file");
    let v = fio_json(&dir, "io:rw=write,bs=4k,size=64m,time_based=1,runtime=2,rate=2m");
    let bw = v["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap();
    assert!((1048576.0..=2.2 * 1048576.0).contains(&bw), "rate=2m gave {bw} B/s");
    let v = fio_json(&dir, "io:rw=randread,bs=4k,size=64m,time_based=1,runtime=1,rate_iops=2000");
    let iops = v["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((1000.0..=2200.0).contains(&iops), "rate_iops=2000 gave {iops}");
}

#[test]
fn verify_checks_written_data() {
    let dir = Scratch::new("verify");
    let out = run_ok(&["run", "--target", &dir.spec(), "--workload", "io:rw=randwrite,bs=4k,size=8m,verify=crc32c"]);
    assert!(stdout(&out).contains("verify"), "{}", stdout(&out));
}

#[test]
fn keep_leaves_the_files_and_the_default_removes_them() {
    let dir = Scratch::new("keep");
    run_ok(&["run", "--target", &dir.spec(), "--workload", "io:name=kept,rw=write,bs=64k,size=1m,keep=1"]);
    let left: Vec<String> =
        dir.leftovers().iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).collect();
    assert!(left.contains(&"kept.0.0".to_string()), "{left:?}");
}

#[test]
fn fio_job_files_with_stonewall_and_toml_job_files() {
    let dir = Scratch::new("jobfiles");
    let fio = dir.path.join("../fsarena-test-study.fio");
    std::fs::write(
        &fio,
        "[global]\nioengine=psync\ndirect=1\nbs=128k\nsize=8m\nnumjobs=2\ntime_based\nruntime=1\ngroup_reporting\nfallocate=none\n\n[seqwrite]\nrw=write\nstonewall\n\n[seqread]\nrw=read\nstonewall\n",
    )
    .unwrap();
    let v =
        json(&run_ok(&["run", "--target", &dir.spec(), "--fio", fio.to_str().unwrap(), "--output-format", "fio-json"]));
    std::fs::remove_file(&fio).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!((jobs[0]["jobname"].as_str(), jobs[0]["groupid"].as_u64()), (Some("seqwrite"), Some(0)));
    assert_eq!((jobs[1]["jobname"].as_str(), jobs[1]["groupid"].as_u64()), (Some("seqread"), Some(1)));
    assert!(jobs[1]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert_eq!(v["global options"]["bs"], "128k");

    // Without --target, the jobs' directory= is the target, as in fio.
    let fio = dir.path.join("../fsarena-test-dir.fio");
    std::fs::write(&fio, format!("[global]\ndirectory={}\nsize=1m\n[j]\nrw=read\n", dir.path.display())).unwrap();
    let v = json(&run_ok(&["run", "--fio", fio.to_str().unwrap(), "--output-format", "json"]));
    std::fs::remove_file(&fio).unwrap();
    assert_eq!(v["run"]["results"][0]["target"]["options"]["path"], dir.path.display().to_string());

    let toml = dir.path.join("../fsarena-test-job.toml");
    std::fs::write(
        &toml,
        format!("targets = [\"{}\"]\noutput_format = \"json\"\n\n[[workload]]\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"4m\"\nnumjobs = 2\ngroup_reporting = true\n", dir.spec()),
    )
    .unwrap();
    let v = json(&run_ok(&["run", toml.to_str().unwrap()]));
    std::fs::remove_file(&toml).unwrap();
    assert_eq!(v["run"]["results"][0]["jobs"][0]["read"]["total_ios"], 2048);
    assert!(dir.leftovers().is_empty());
}

#[test]
fn the_docs_list_every_io_option() {
    let docs = include_str!("../docs/workloads.md");
    for def in fsarena_io::io::options::OPTIONS {
        assert!(docs.contains(&format!("| `{}` |", def.name)), "docs/workloads.md lacks io option {}", def.name);
    }
}

/// Per job of a fio-shaped JSON: [read bytes, read ios, write bytes, write ios, syncs].
fn job_counts(v: &serde_json::Value) -> Vec<[u64; 5]> {
    let jobs = v["jobs"].as_array().expect("jobs[]");
    jobs.iter()
        .map(|j| {
            let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or_else(|| panic!("{d}.{k} in {j}"));
            let syncs = j["sync"]["lat_ns"]["N"].as_u64().unwrap_or(0).max(n("sync", "total_ios"));
            [n("read", "io_bytes"), n("read", "total_ios"), n("write", "io_bytes"), n("write", "total_ios"), syncs]
        })
        .collect()
}

#[test]
fn processes_and_threads_move_the_same_bytes_per_job() {
    let dir = Scratch::new("procs-vs-threads");
    for (engine, rw) in [("psync", "randwrite"), ("io_uring", "randread"), ("posixaio", "write"), ("mmap", "read")] {
        let w = format!("io:name=pt,ioengine={engine},rw={rw},bs=4k,size=4m,numjobs=3,iodepth=4,fsync=32");
        let threads = fio_json(&dir, &format!("{w},thread=1"));
        let procs = fio_json(&dir, &format!("{w},thread=0"));
        let (t, p) = (job_counts(&threads), job_counts(&procs));
        assert_eq!(t.len(), 3, "{engine}: one entry per clone");
        assert_eq!(p, t, "{engine} {rw}: processes vs threads [rb, rios, wb, wios, syncs] per job");
        // The histograms crossed the pipe whole: as many latencies as I/Os.
        for job in procs["jobs"].as_array().expect("jobs[]") {
            let d = if rw.contains("write") { "write" } else { "read" };
            assert_eq!(job[d]["clat_ns"]["N"], job[d]["total_ios"], "{engine}: {job}");
        }
        // The default is processes, as fio's thread=0.
        assert_eq!(job_counts(&fio_json(&dir, &w)), t);
    }
    assert!(dir.leftovers().is_empty(), "files left: {:?}", dir.leftovers());
}

#[test]
fn a_killed_job_process_fails_the_run_naming_the_job() {
    let dir = Scratch::new("procs-killed");
    let w = "io:name=victim,rw=randwrite,bs=4k,size=8m,numjobs=2,runtime=20s,time_based=1";
    let scratch = crate::util::TempDir::new();
    let workdir = format!("{}/work", scratch.0);
    let child = crate::util::fsarena()
        .args(["run", "--target", &dir.spec(), "--workload", w, "--no-store", "--repeat", "1", "--warmup", "0"])
        .args(["--workdir", &workdir])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fsarena starts");
    // The job processes are the children of fsarena's process that are not fsarena threads.
    let children = |pid: u32| -> Vec<u32> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.flatten().collect::<Vec<_>>());
        let mut out = Vec::new();
        for t in tasks.unwrap_or_default() {
            let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
        out
    };
    let started = std::time::Instant::now();
    let mut jobs = Vec::new();
    while jobs.len() < 2 && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        jobs = children(child.id());
    }
    assert_eq!(jobs.len(), 2, "two job processes");
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: a signal to a process this test's child forked.
    assert_eq!(unsafe { libc::kill(jobs[1] as i32, libc::SIGKILL) }, 0);
    let out = child.wait_with_output().expect("fsarena ends");
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "the other job stopped early");
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("job 'victim' (process {}) was killed by signal 9", jobs[1])), "{err}");
    assert!(dir.leftovers().is_empty(), "files left: {:?}", dir.leftovers());
}

/// Regression: the page-cache series was the whole machine's. It is now the workload's own
/// (the resident pages of its files on the target), the machine's kept beside it. A 64 MiB
/// buffered write on a disk filesystem (not tmpfs, whose pages are always resident) shows about
/// 64 MiB of its own while the machine's page cache holds more; the caches are dropped before
/// the repetition, so the first reading is near zero.
#[test]
fn the_page_cache_series_is_the_workloads_own_beside_the_machines() {
    let dir = Scratch::under("/var/tmp", "workload-page-cache");
    let out = run_ok(&[
        "run",
        "--target",
        &dir.spec(),
        "--workload",
        "io:rw=write,bs=1m,size=64m,runtime=3s,time_based=1",
        "--output-format",
        "json",
        "--no-store",
    ]);
    let v = json(&out);
    let series = &v["run"]["results"][0]["series"];
    let values = |name: &str| -> Vec<f64> {
        let reps = series[name]["values"].as_array().unwrap_or_else(|| panic!("no {name}: {series}"));
        reps[0].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
    };
    let own = values("mem.workload_page_cache");
    let machine = values("mem.page_cache");
    assert_eq!(series["mem.workload_page_cache"]["unit"], "bytes");
    assert_eq!(own.len(), machine.len(), "sampled together: {own:?} {machine:?}");
    assert!(own.len() >= 3, "one reading a second over 3 s: {own:?}");
    let max = own.iter().copied().fold(0.0, f64::max);
    assert!(max >= (32 << 20) as f64 && max <= (65 << 20) as f64, "the 64 MiB file's pages: {own:?}");
    assert!(own[0] < (8 << 20) as f64, "caches dropped before the repetition: {own:?}");
    for (o, m) in own.iter().zip(&machine) {
        assert!(o <= m, "the workload's pages are part of the machine's: {own:?} {machine:?}");
    }
    assert!(machine.iter().copied().fold(0.0, f64::max) > max, "the machine's is not the workload's");
}
