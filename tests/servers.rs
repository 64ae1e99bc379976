//! The server workloads end to end (`pgbench`, `sysbench`, `http`): real PostgreSQL, MariaDB
//! and nginx on tmpfs and ext4 with tiny settings. The figures parse; the servers' data
//! directories live in the target (their working directory while they run is under the
//! target's mount); a data directory is loaded once and reused by the next sweep point; and
//! afterwards nothing is left running, listening, mounted or in /run/fsarena. Bad input exits
//! 2 before anything is created; a server that cannot start fails the run (exit 1) with its
//! log's last lines, leaving nothing behind.
//!
//! The tests take a lock: each checks that no server of fsarena's is left, which another
//! test's running server would fail.

use crate::util::Bounded;
use crate::util::{fsarena, require, run, stderr, Scratch};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Held by every test that starts a server (also the hostile suite's): each checks that none is left.
pub(crate) static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// (PID, name, cmdline) of every process whose command line names /run/fsarena.
fn our_servers() -> Vec<(u32, String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        // A zombie's cmdline is empty: it has exited.
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains("/run/fsarena/") {
            let name = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default().trim().to_string();
            out.push((pid, name, cmdline));
        }
    }
    out
}

/// What `ss` lists of `what` (`-lx`, `-lt`) that names /run/fsarena, or is a listener on
/// 127.0.0.1 on one of `ports`.
fn listening(what: &str) -> String {
    let out = std::process::Command::new("ss").arg(what).arg("-n").bounded_output().expect("ss runs");
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("/run/fsarena/")).collect::<Vec<_>>().join("\n")
}

/// Asserts that nothing of fsarena's servers is left: no process, socket, mount or directory
/// under /run/fsarena, and none of `pids` alive.
fn nothing_left(pids: &[u32]) {
    assert!(our_servers().is_empty(), "servers left: {:?}", our_servers());
    assert_eq!(listening("-lx"), "", "unix sockets left");
    assert_eq!(listening("-lt"), "", "tcp listeners left");
    for pid in pids {
        // A zombie has exited: a killed run's server is reparented to PID 1, which in some
        // containers never reaps it.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|i| stat.get(i + 2..i + 3)).unwrap_or("");
        assert!(stat.is_empty() || state == "Z", "server {pid} still runs: {stat}");
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains("/run/fsarena/"), "mounts left: {mounts}");
    let left: Vec<PathBuf> =
        std::fs::read_dir("/run/fsarena").into_iter().flatten().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left in /run/fsarena: {left:?}");
}

/// The mean of metric `name` of every result of the run's JSON report that has it, in order.
fn metric(report: &serde_json::Value, name: &str) -> Vec<f64> {
    report["run"]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|r| r["metrics"][name]["mean"].as_f64())
        .collect()
}

#[test]
fn each_server_runs_on_tmpfs_and_ext4_with_its_data_in_the_target_and_leaves_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for tool in ["sysbench", "mariadbd", "nginx", "ab"] {
        require(tool);
    }
    let work = Scratch::under("/tmp", "servers-work");
    let mut child = fsarena()
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store", "--output-format", "json"])
        .args(["--workdir", &work.path.join("w").to_string_lossy()])
        .args(["--target", "tmpfs:size=512m", "--target", "ext4:size=1g"])
        .args(["--workload", "pgbench:scale=1,client='1,2',time=3s"])
        .args(["--workload", "sysbench:test=oltp_read_write,table_size=1000,time=3s"])
        .args(["--workload", "http:requests=2000,concurrency=2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs: each server's working directory (PostgreSQL and MariaDB chdir into their
    // data directory) must lie on the target's mount under /run/fsarena.
    let mut seen: Vec<(u32, String, PathBuf)> = Vec::new();
    let (out_pipe, err_pipe) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = |mut p: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = p.read_to_string(&mut s);
            s
        })
    };
    let (out_thread, err_thread) = (reader(Box::new(out_pipe)), reader(Box::new(err_pipe)));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        for (pid, name, _) in our_servers() {
            // Right after the spawn the working directory is still "/": the server moves
            // into its data directory as it starts.
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default();
            if (name == "postgres" || name == "mariadbd") && cwd != Path::new("/") && !cwd.as_os_str().is_empty() {
                seen.retain(|s| s.0 != pid);
                seen.push((pid, name, cwd));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (stdout, stderr) = (out_thread.join().unwrap(), err_thread.join().unwrap());
    assert!(status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // Two targets: pgbench's two sweep points, sysbench, http.
    let tps = metric(&report, "tps");
    assert_eq!(tps.len(), 4, "{stdout}");
    assert!(tps.iter().all(|t| *t > 0.0), "{tps:?}");
    assert_eq!(metric(&report, "latency_p99").iter().filter(|v| **v > 0.0).count(), 6, "pgbench ×4, http ×2");
    let qps = metric(&report, "queries_per_s");
    assert!(qps.len() == 2 && qps.iter().all(|q| *q > 0.0), "{qps:?}");
    assert_eq!(metric(&report, "latency_p95").len(), 2);
    let rps = metric(&report, "requests_per_s");
    assert!(rps.len() == 2 && rps.iter().all(|r| *r > 0.0), "{rps:?}");
    // Loaded once per target: the second sweep point reused the first one's data.
    assert_eq!(stderr.matches("pgbench: initdb and loading").count(), 2, "{stderr}");
    assert_eq!(stderr.matches("sysbench: mariadb-install-db").count(), 2, "{stderr}");
    for kind in ["postgres", "mariadbd"] {
        let dirs: Vec<&PathBuf> = seen.iter().filter(|s| s.1 == kind).map(|s| &s.2).collect();
        assert!(!dirs.is_empty(), "no {kind} seen running");
        let prefix = if kind == "postgres" { "pgbench-" } else { "sysbench-" };
        for d in dirs {
            let mount = d.parent().unwrap();
            assert!(d.file_name().unwrap().to_string_lossy().starts_with(prefix), "{d:?}");
            assert!(mount.starts_with("/run/fsarena/"), "{d:?}");
            let name = mount.file_name().unwrap().to_string_lossy();
            assert!(name.contains("-mnt-0-tmpfs") || name.contains("-mnt-1-ext4"), "{d:?} is not in a target");
        }
    }
    let pids: Vec<u32> = seen.iter().map(|s| s.0).collect();
    nothing_left(&pids);
}

#[test]
fn http_spreads_its_load_over_files_with_one_ab_each() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for tool in ["nginx", "ab"] {
        require(tool);
    }
    let work = Scratch::under("/tmp", "servers-files");
    let workdir = work.path.join("w").to_string_lossy().into_owned();
    let load = ["--workload", "http:files=4,requests=2000,concurrency=4"];
    let args = [&["run", "--no-store", "--output-format", "json", "--workdir", &workdir][..], &load[..]].concat();
    let out = run(&[&args[..], &["--target", "tmpfs:size=64m"][..]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("4 × ab -n 500 -c 1"), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &report["run"]["results"][0];
    // Every request of the four abs, counted once.
    assert_eq!(r["counters"]["requests"][0].as_u64(), Some(2000), "{r}");
    assert!(metric(&report, "requests_per_s").iter().all(|v| *v > 0.0), "{r}");
    assert!(metric(&report, "latency_p99").iter().all(|v| *v > 0.0), "{r}");
    nothing_left(&[]);
}

#[test]
fn bulk_insert_starts_every_round_from_empty_tables() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for tool in ["sysbench", "mariadbd"] {
        require(tool);
    }
    let work = Scratch::under("/tmp", "servers-bulk");
    let workdir = work.path.join("w").to_string_lossy().into_owned();
    // Three rounds on one loaded server: a second round into the first one's rows would fail
    // on duplicate keys.
    let out = run(&[
        "run",
        "--repeat",
        "2",
        "--warmup",
        "1",
        "--no-store",
        "--output-format",
        "json",
        "--workdir",
        &workdir,
        "--target",
        "tmpfs:size=256m",
        "--workload",
        "sysbench:test=bulk_insert,threads=1,time=1s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tps = &report["run"]["results"][0]["metrics"]["transactions_per_s"]["values"];
    assert!(tps.as_array().is_some_and(|v| v.len() == 2 && v.iter().all(|x| x.as_f64() > Some(0.0))), "{tps}");
    nothing_left(&[]);
}

#[test]
fn bad_input_exits_2_before_anything_is_created() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = Scratch::under("/tmp", "servers-bad");
    let workdir = work.path.join("w");
    for (spec, want) in [
        ("pgbench:builtin=tpcc", "'tpcc' is not a pgbench built-in script"),
        ("pgbench:scale=0", "scale=0"),
        ("sysbench:test=oltp_nothing", "'oltp_nothing' is not a sysbench test"),
        ("http:concurrency=10,requests=5", "concurrency=10 is more than requests=5"),
        ("http:files=3,concurrency=4,requests=300", "concurrency=4 is not a multiple of files=3"),
        ("pgbench:time=2.5s", "not a whole number of seconds"),
    ] {
        let out = run(&[
            "run",
            "--target",
            "tmpfs:size=64m",
            "--workload",
            spec,
            "--workdir",
            &workdir.to_string_lossy(),
            "--no-store",
        ]);
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{spec}: {}", stderr(&out));
        assert!(!workdir.exists(), "{spec}: the work directory was created");
    }
    nothing_left(&[]);
}

#[test]
fn a_server_that_does_not_start_in_time_fails_the_run_with_its_log_and_leaves_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A debug build's test knob: the server is never found ready, so start_timeout expires
    // on a real server that did start.
    let out = fsarena()
        .env("FSARENA_TEST_SERVER_NEVER_READY", "1")
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store"])
        .args(["--workdir", &Scratch::under("/tmp", "servers-timeout").path.join("w").to_string_lossy()])
        .args(["--target", "tmpfs:size=256m", "--workload", "http:requests=10,start_timeout=1s"])
        .bounded_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("nginx did not start within 1 s (start_timeout=); its log ends:"), "{err}");
    nothing_left(&[]);
}

#[test]
fn cleanup_stops_the_server_a_killed_run_left_and_unmounts_its_target() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let work = Scratch::under("/tmp", "servers-kill");
    let workdir = work.path.join("w").to_string_lossy().into_owned();
    let mut child = fsarena()
        .args(["run", "--repeat", "1", "--warmup", "0", "--no-store", "--workdir", &workdir])
        .args(["--target", "tmpfs:size=256m", "--workload", "sysbench:table_size=1000,time=30s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the server of the measured round serves its sysbench (the load's server
    // has stopped). Killed while that server was still starting, the run could take it along
    // (seen under CI's load: cleanup then found no server to stop).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while std::time::Instant::now() < deadline {
        let ours = our_servers();
        let servers: Vec<u32> = ours.iter().filter(|s| s.1 == "mariadbd").map(|s| s.0).collect();
        seen.extend(servers.iter().filter(|p| !seen.contains(*p)).copied().collect::<Vec<_>>());
        let serving = ours.iter().any(|s| s.1 == "sysbench");
        if seen.len() >= 2 && !servers.is_empty() && serving {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(seen.len() >= 2, "the measured round's server never ran: {seen:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(!our_servers().is_empty(), "a SIGKILLed run leaves its server running");
    let out = run(&["cleanup", "--workdir", &workdir]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped server"), "{}", stderr(&out));
    nothing_left(&seen);
}
