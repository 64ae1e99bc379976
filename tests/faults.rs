//! Faults during a run: exit 1 with the figures so far marked incomplete, Ctrl-C, and
//! nothing left behind either way.

use crate::util::{json, run, stderr, stdout, Scratch, SmallTmpfs};
use std::time::Duration;

#[test]
fn enospc_exits_1_keeps_the_figures_and_removes_the_files() {
    // A 16 MiB ext4 has about 12.6 MiB for data: 15 MiB fits the target's size, so the plan is
    // accepted, and fills the filesystem at run time (a job larger than the target is refused
    // before anything is created, see hostile.rs).
    let work = crate::util::TestWorkdir::new("enospc");
    let out = run(&[
        "run",
        "--target",
        "ext4:size=16m",
        "--workload",
        "io:rw=write,bs=64k,size=15m",
        "--workdir",
        &work.arg(),
        "--output-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("No space left on device") && err.contains("incomplete"), "{err}");
    let v = json(&out);
    let r = &v["run"]["results"][0];
    assert_eq!(r["complete"], false);
    let written = r["jobs"][0]["write"]["io_bytes"].as_u64().unwrap();
    assert!(written > 0 && written < 15 << 20, "figures so far: {written}");
    assert!(r["jobs"][0]["error_message"].as_str().unwrap().contains("offset"));
    assert!(work.leftovers().is_empty(), "{:?}", work.leftovers());
}

#[test]
fn enospc_in_human_output_is_marked_incomplete() {
    // As above: the job fits the target's size but not the room ext4 leaves for data.
    let work = crate::util::TestWorkdir::new("enospc-human");
    let out = run(&[
        "run",
        "--target",
        "ext4:size=16m",
        "--workload",
        "io:rw=randwrite,bs=4k,size=15m",
        "--workdir",
        &work.arg(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("INCOMPLETE"), "{}", stdout(&out));
    assert!(work.leftovers().is_empty(), "{:?}", work.leftovers());
}

#[test]
fn sigint_stops_the_jobs_prints_what_ran_and_removes_the_files() {
    let dir = Scratch::new("sigint");
    let workdir = crate::util::TempDir::new();
    let child = crate::util::fsarena()
        .args([
            "run",
            "--target",
            &dir.spec(),
            "--workload",
            "io:rw=randread,bs=4k,size=16m,time_based=1,runtime=60",
            "--output-format",
            "fio-json",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--no-store",
            "--workdir",
            &workdir.0,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the measured phase runs, then Ctrl-C.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while dir.leftovers().iter().all(|p| p.is_dir()) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    rustix::process::kill_process(rustix::process::Pid::from_child(&child), rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    let v = json(&out);
    let ms = v["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!(ms < 30_000 && v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0, "ran {ms} ms");
    assert!(dir.leftovers().is_empty(), "left: {:?}", dir.leftovers());
}

#[test]
fn a_filesystem_without_o_direct_is_named_and_the_run_exits_1() {
    let fs = SmallTmpfs::mount("ramfs", "ramfs", "");
    let out = run(&["run", "--target", &fs.dir.spec(), "--workload", "io:rw=read,bs=4k,size=1m,direct=1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("direct=1: ramfs at") && err.contains("refuses O_DIRECT") && err.contains("direct=0"),
        "{err}"
    );
    assert!(fs.dir.leftovers().is_empty(), "left {:?}", fs.dir.leftovers());
}
