//! What a FUSE daemon serves back to the workloads that read what they wrote (issue 28,
//! principles 1 and 6), played by bugfs (crates/cli/examples/bugfs.rs) as a `fuse:cmd=`
//! target: files served as FIFOs once written (`--fifo-files`), directories served as links
//! to a canary directory of the host (`--link-dirs=`). Each run must end within its time
//! limit (no open or read blocks for ever), say what it met, leave the canary byte for byte and
//! metadata for metadata as it was, and leave nothing mounted. And a `time_based` io job
//! logging every I/O (`write_lat_log`, `log_avg_msec=0`) must keep its memory bounded.

use super::harness::{fsarena, leftovers_under, play, start, wait_until, Arena, Played, Victim};
use std::time::Duration;

/// `fsarena run` of `workload` on bugfs with `modes`, its work directory in `arena` at `rel`.
fn on_bugfs(arena: &Arena, rel: &str, modes: &str, workload: &str, limit: Duration) -> Played {
    let work = arena.path(rel);
    arena.register_workdir(&work);
    let target = format!("fuse:cmd='{} {modes} {{work}} {{mnt}}'", crate::verify::bugfs().display());
    let mut c = fsarena();
    c.arg("run").arg("--no-store").arg("--workdir").arg(&work);
    c.args(["--target", &target, "--workload", workload, "--repeat", "1", "--warmup", "0"]);
    play(c, limit)
}

/// The run in `work` ended by itself within its limit, with nothing of it still mounted or
/// running.
fn ended_and_left_nothing(what: &str, work: &std::path::Path, p: &Played) -> i32 {
    let code = p.code().unwrap_or_else(|e| panic!("{what}: {e}; stderr: {}", p.err()));
    let left = leftovers_under(work);
    assert!(left.is_empty(), "{what}: left {left:?}");
    code
}

#[test]
fn fifos_served_for_written_files_block_no_reader() {
    let arena = Arena::new("reads-fifo");
    // The fill's backing store is a small tmpfs: bugfs keeps its files in {work}.
    arena.tmpfs("fs", "96m");
    // (workload, what its output must say, whether it must fail)
    let cases = [
        // fill reads every file back after filling: by path, a FIFO's open blocked for ever.
        // Now each such file is an error of the run, a finding (exit 0 without --strict-checks).
        ("verify:mode=fill,bs=64k,filesize=1m", "FIFO", false),
        // meta's file_read opens O_RDWR (a FIFO opens) and reads: it waited for ever.
        ("meta:items=8,write_bytes=4096,read_bytes=4096", "Resource temporarily unavailable", true),
        // postmark's reads open read-only: the open blocked for ever. Now a read gets nothing
        // and an append may fill the pipe: it ends either way.
        ("postmark:number=100,transactions=100,bias_read=9", "postmark", false),
    ];
    for (i, (workload, says, must_fail)) in cases.iter().enumerate() {
        let rel = format!("fs/w{i}");
        let p = on_bugfs(&arena, &rel, "--fifo-files", workload, Duration::from_secs(120));
        let code = ended_and_left_nothing(workload, &arena.path(&rel), &p);
        assert_ne!(code, 2, "{workload}: refused as input: {}", p.err());
        let all = format!("{}{}", p.out(), p.err());
        assert!(all.contains(says), "{workload}: exit {code}, expected {says:?} in: {}", p.err());
        if *must_fail {
            assert_ne!(code, 0, "{workload}: a FIFO where a file was written is not a success: {}", p.err());
        }
    }
}

#[test]
fn directories_served_as_links_lead_dbench_nowhere() {
    let arena = Arena::new("reads-links");
    // What a daemon's links lead to: a directory of the host, with files in the places a
    // client's Deltree empties.
    for client in ["client0", "client1"] {
        arena.file(&format!("canary/{client}/precious"), "keep me");
        arena.file(&format!("canary/{client}/sub/precious"), "keep me too");
    }
    let canary = arena.path("canary");
    let victim = Victim::tree(&canary);
    let load = arena.file(
        "load.txt",
        concat!(
            "Deltree \"\\clients\\client1\" NT_STATUS_OK\n",
            "Mkdir \"\\clients\" NT_STATUS_OK\n",
            "Mkdir \"\\clients\\client1\" NT_STATUS_OK\n",
            "NTCreateX \"\\clients\\client1\\A.DOC\" 0x40 0x5 7 NT_STATUS_OK\n",
            "WriteX 7 0 4096 4096 NT_STATUS_OK\n",
            "Close 7 NT_STATUS_OK\n",
        ),
    );
    let workload = format!("dbench:clients=2,runtime=2s,warmup=0,loadfile={}", load.display());
    let modes = format!("--link-dirs={}", canary.display());
    let p = on_bugfs(&arena, "w", &modes, &workload, Duration::from_secs(120));
    let code = ended_and_left_nothing("dbench", &arena.root, &p);
    let damage = victim.damage();
    assert!(damage.is_empty(), "dbench through a daemon's links (exit {code}) changed the host: {damage:?}");
    assert_ne!(code, 0, "nothing could be created where the links are: not a success: {}", p.err());
    assert!(p.err().contains("failed"), "{}", p.err());
}

/// The largest resident set `pid` has had (VmHWM), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1));
    kib.and_then(|k| k.parse::<u64>().ok()).unwrap_or(0) * 1024
}

#[test]
fn a_time_based_job_logging_every_io_keeps_its_memory_bounded() {
    let arena = Arena::new("reads-logs");
    let work = arena.workdir("w");
    let logs = arena.dir("logs");
    let prefix = logs.join("run").display().to_string();
    // 250,000 I/Os a second for 8 s: 2 million samples, 96 MB of them when all are kept.
    let workload = format!(
        "io:ioengine=null,rw=read,bs=4k,size=1g,time_based=1,runtime=8s,thread=1,rate_iops=250000,write_lat_log={prefix},log_avg_msec=0"
    );
    let mut c = fsarena();
    c.arg("run").arg("--no-store").arg("--workdir").arg(&work);
    c.args(["--target", &format!("dir:path={}", arena.dir("t").display()), "--workload", &workload]);
    c.args(["--repeat", "1", "--warmup", "0"]);
    let run = start(c);
    let pid = run.pid();
    let mut peak = 0;
    wait_until(Duration::from_secs(60), || {
        peak = peak.max(peak_rss(pid));
        run.ended()
    });
    let p = run.finish(Duration::from_secs(60));
    let code = p.code().unwrap_or_else(|e| panic!("{e}: {}", p.err()));
    assert_eq!(code, 0, "{}", p.err());
    let lines = std::fs::read_to_string(format!("{prefix}_clat.1.log")).unwrap_or_default().lines().count();
    assert!(lines > 1_000_000, "{lines} lines logged: {}", p.err());
    assert!(peak < 64 << 20, "peak resident set {} MiB for {lines} I/Os logged", peak >> 20);
    assert!(leftovers_under(&arena.root).is_empty(), "{:?}", leftovers_under(&arena.root));
}

#[test]
fn a_file_shrunk_under_a_mapping_tears_down_instead_of_killing_fsarena() {
    let arena = Arena::new("reads-sigbus");
    // bugfs answers every read short: the kernel cuts the file there, and a page of a mapping
    // past the new end raises SIGBUS in the thread that touches it (verify's mapread).
    let p = on_bugfs(&arena, "w", "--short-reads", "verify", Duration::from_secs(120));
    let code = ended_and_left_nothing("verify on short reads", &arena.path("w"), &p);
    // Before: the default action killed fsarena on the spot (signal 7), the FUSE mount, its
    // daemon and the run's cgroup left behind.
    assert_eq!(code, 128 + libc::SIGBUS, "{}", p.err());
    assert!(p.err().contains("SIGBUS") && p.err().contains("tearing down now"), "{}", p.err());
    assert!(p.err().contains("unmounted"), "{}", p.err());
    let err = p.err();
    for cgroup in err.lines().filter_map(|l| l.strip_prefix("fsarena: removed cgroup ")) {
        assert!(!std::path::Path::new(cgroup).exists(), "the run's cgroup {cgroup} is still there");
    }
}

#[test]
fn links_a_daemon_serves_deep_in_a_path_lead_no_workload_out() {
    use super::harness::{diff, snapshot};
    let arena = Arena::new("reads-deep-links");
    arena.file("canary/keep", "keep me");
    let canary = arena.path("canary");
    // Directories two levels down (mdtest's tree below its test directory) are served as
    // links to the canary: mdtest's calls name items by their whole path, so the kernel
    // would resolve through the link, and the directories phase created and removed its
    // directories in the canary (seen as the canary's mtime changing).
    let modes = format!("--link-dirs={} --link-depth=1", canary.display());
    for (i, workload) in ["meta:items=20,dirs_only=1", "meta:items=20"].iter().enumerate() {
        let before = snapshot(&canary);
        let rel = format!("w{i}");
        let p = on_bugfs(&arena, &rel, &modes, workload, Duration::from_secs(120));
        let code = ended_and_left_nothing(workload, &arena.path(&rel), &p);
        let changed = diff(&before, &snapshot(&canary));
        assert!(changed.is_empty(), "{workload} (exit {code}) acted through the daemon's links: {changed:?}");
        assert_eq!(code, 1, "{workload}: {}", p.err());
        assert!(p.err().contains("Too many levels of symbolic links"), "{workload}: {}", p.err());
    }
    // posix follows links (its symlink cases): it is given them, and passes on an honest daemon.
    let p = on_bugfs(&arena, "w-posix", "", "posix:family=symlink", Duration::from_secs(300));
    let code = ended_and_left_nothing("posix", &arena.path("w-posix"), &p);
    assert_eq!(code, 0, "{}", p.err());
}
