//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`) on a real tmpfs: the same job
//! file through fsarena and through fio 3.33 ends early when the criterion holds and runs its
//! whole runtime when it cannot.

use crate::util::Bounded;
use crate::util::{json, require, run, stderr, SmallTmpfs};
use std::path::Path;
use std::process::Command;

/// A job file on the mount (gone with it), with `extra` in its `[global]`.
fn job_file(fs: &SmallTmpfs, name: &str, extra: &str) -> std::path::PathBuf {
    let path = fs.dir.path.join(format!("{name}.fio"));
    let text = format!("[global]\nrw=randread\nbs=4k\nsize=8m\ntime_based\n{extra}\n[{name}]\n");
    std::fs::write(&path, text).unwrap();
    path
}

fn fsarena_job(fs: &SmallTmpfs, fio: &Path) -> serde_json::Value {
    let dir = fs.dir.path.join("fsarena");
    std::fs::create_dir_all(&dir).unwrap();
    let target = format!("dir:path={}", dir.display());
    let out = run(&[
        "run",
        "--no-store",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--target",
        &target,
        "--fio",
        fio.to_str().unwrap(),
        "--output-format",
        "fio-json",
    ]);
    assert!(out.status.success(), "fsarena failed: {}", stderr(&out));
    json(&out)["jobs"][0].clone()
}

fn fio_job(fs: &SmallTmpfs, fio: &Path) -> serde_json::Value {
    let dir = fs.dir.path.join("fio");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(require("fio"))
        .current_dir(&dir)
        .arg(format!("--directory={}", dir.display()))
        .arg("--output-format=json")
        .arg(fio)
        .bounded_output()
        .expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    json(&out)["jobs"][0].clone()
}

/// The job's longest direction, in ms (fio's `read.runtime`: clones side by side).
fn wall_ms(job: &serde_json::Value) -> u64 {
    job["read"]["runtime"].as_u64().unwrap()
}

/// A loose criterion holds within seconds of a 30 s job: both tools end it early, say
/// attained=1 and keep the last two one-second samples. Two clones as processes under
/// group_reporting: the group's summed samples end both.
#[test]
fn a_loose_criterion_ends_the_job_early() {
    let fs = SmallTmpfs::new("ss-loose", "64m");
    let fio = job_file(&fs, "loose", "runtime=30s\nss=iops:50%\nss_dur=2s\nnumjobs=2\ngroup_reporting\n");
    for (tool, job) in [("fsarena", fsarena_job(&fs, &fio)), ("fio", fio_job(&fs, &fio))] {
        let ss = &job["steadystate"];
        assert_eq!(ss["ss"], "iops:50.000000%", "{tool}: {ss}");
        assert_eq!(ss["duration"], 2, "{tool}: {ss}");
        assert_eq!(ss["attained"], 1, "{tool}: {ss}");
        assert!(ss["criterion"].as_str().unwrap().ends_with('%'), "{tool}: {ss}");
        let iops = ss["data"]["iops"].as_array().unwrap();
        assert_eq!(iops.len(), 2, "{tool}: {ss}");
        assert!(iops.iter().all(|v| v.as_u64().unwrap() > 0), "{tool}: {ss}");
        // Bytes and I/Os are each divided by the same milliseconds, in whole units.
        let (bw, io_bytes) = (ss["data"]["bw"][0].as_u64().unwrap(), iops[0].as_u64().unwrap() * 4096);
        assert!(bw.abs_diff(io_bytes) <= 2 * 4096, "{tool}: {ss}");
        assert!(wall_ms(&job) < 15_000, "{tool} ran {} ms of 30 s", wall_ms(&job));
    }
}

/// A deviation under 0% never holds: both tools run the whole runtime and say attained=0.
#[test]
fn an_impossible_criterion_runs_the_whole_runtime() {
    let fs = SmallTmpfs::new("ss-never", "64m");
    let fio = job_file(&fs, "never", "runtime=3s\nss=iops:0%\nss_dur=2s\nthread\n");
    for (tool, job) in [("fsarena", fsarena_job(&fs, &fio)), ("fio", fio_job(&fs, &fio))] {
        let ss = &job["steadystate"];
        assert_eq!(ss["attained"], 0, "{tool}: {ss}");
        assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2, "{tool}: {ss}");
        assert!(wall_ms(&job) >= 2_900, "{tool} ran {} ms of 3 s", wall_ms(&job));
    }
}

/// Bad steady-state values are refused before anything runs, each in one line.
#[test]
fn bad_steady_state_values_are_refused() {
    let fs = SmallTmpfs::new("ss-bad", "8m");
    for (extra, says) in [
        ("ss=iops\nss_dur=2s\n", "'iops' has no limit"),
        ("ss=lat:1ms\nss_dur=2s\n", "latency criteria are fio 3.42's"),
        ("ss=iops:many%\nss_dur=2s\n", "is not a number"),
        ("ss_dur=soon\n", "'soon' is not a duration"),
    ] {
        let fio = job_file(&fs, "bad", &format!("runtime=1s\n{extra}"));
        let out = run(&["run", "--dry-run", "--no-store", "--target", &fs.dir.spec(), "--fio", fio.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{extra}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{extra}: {err}");
    }
    // fio refuses a group whose jobs keep different steady states.
    let fio = fs.dir.path.join("mixed.fio");
    std::fs::write(&fio, "[global]\nsize=1m\nruntime=1s\n[a]\nss_dur=2s\n[b]\nss_dur=3s\n").unwrap();
    let out = run(&["run", "--dry-run", "--no-store", "--target", &fs.dir.spec(), "--fio", fio.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("job 'b' keeps another steady state than job 'a'"), "{}", stderr(&out));
}
