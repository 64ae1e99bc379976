//! FUSE daemons and GlusterFS as attackers (issue 28): a daemon that plants links to a canary
//! and to a FIFO in the `{work}` fsarena's recording passthrough serves and acts on them
//! without following them; one that lures the crash checker to a link and a FIFO; one that
//! claims gigabyte files; one that ignores SIGTERM after its `sh -c` leader has gone; one
//! stuck in the kernel; crash keys out of range; another program writing where GlusterFS
//! keeps its logs while fsarena provisions. Each run ends in bounded time with its exit code,
//! every victim intact and nothing of fsarena's left. The daemon is bugfs from the test tree
//! (crates/cli/examples/bugfs.rs) with its hostile modes.

use super::harness::{
    fsarena, play, processes_mentioning, start, wait_until, workdir_leftovers, Arena, Played, Running, Victim,
};
use super::table::{mkfifo, refuse_all, row};
use crate::util::Bounded;
use rustix::process::Signal;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What a hung run is given before it counts as hung.
const LIMIT: Duration = Duration::from_secs(180);

fn bugfs() -> String {
    crate::verify::bugfs().display().to_string()
}

/// `fsarena run` of `workload` on `target`, one repetition, no store, JSON.
fn run_cmd(work: &Path, target: &str, workload: &str) -> Command {
    let mut c = fsarena();
    c.arg("run").arg("--workdir").arg(work);
    c.args(["--target", target, "--workload", workload, "--no-store", "--repeat", "1", "--warmup", "0"]);
    c.args(["--output-format", "json"]);
    c
}

fn cleanup(work: &Path) -> Played {
    let mut c = fsarena();
    c.arg("cleanup").arg("--workdir").arg(work);
    play(c, Duration::from_secs(90))
}

/// A canary file (mode 0640, an old mtime) and a FIFO beside it, outside everything fsarena
/// makes; the victim covers both, bytes and metadata.
fn canary_and_fifo(a: &Arena) -> (PathBuf, PathBuf, Victim) {
    let canary = a.file("victims/canary", "canary: every byte and every bit of metadata must survive\n".repeat(64));
    std::fs::set_permissions(&canary, std::fs::Permissions::from_mode(0o640)).unwrap();
    let old = std::fs::FileTimes::new()
        .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        .set_accessed(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000));
    std::fs::File::options().write(true).open(&canary).unwrap().set_times(old).unwrap();
    let fifo = a.path("victims/fifo");
    mkfifo(&fifo);
    let v = Victim::tree(&a.path("victims"));
    (canary, fifo, v)
}

/// Asserts the victim intact and nothing of fsarena's left in `work` or mentioning `a`.
fn nothing_harmed(a: &Arena, work: &Path, victim: &Victim, what: &str) {
    let damage = victim.damage();
    assert!(damage.is_empty(), "{what}: the canary was touched: {damage:?}");
    let left = workdir_leftovers(work, &[]);
    assert!(left.is_empty(), "{what}: left {left:?}");
    let procs = processes_mentioning(&a.root.display().to_string());
    assert!(procs.is_empty(), "{what}: left processes {procs:?}");
}

/// A `fuse:` target running bugfs with `honest` on the generated workload and `hostile` on
/// each crash state (`{work}` is then a directory `state-N`).
fn on_crash_states(hostile: &str) -> String {
    let b = bugfs();
    format!("fuse:cmd='case {{work}} in */state-*) exec {b} {hostile} {{work}} {{mnt}};; *) exec {b} {{work}} {{mnt}};; esac'")
}

#[test]
fn a_daemon_acting_on_its_links_through_the_passthrough_reaches_nothing_outside() {
    let a = Arena::new("daemon-plant");
    let (canary, fifo, victim) = canary_and_fifo(&a);
    let work = a.workdir("work");
    // bugfs makes links to the canary and to the FIFO in {work} (the passthrough), then sets
    // their times, mode, owner and an xattr without following them, and opens and truncates
    // them through O_PATH descriptors: the kernel follows nothing, so neither may fsarena.
    let target = format!(
        "fuse:cmd='exec {} --plant={} --plant={} {{work}} {{mnt}}',timeout=20",
        bugfs(),
        canary.display(),
        fifo.display()
    );
    let played = play(run_cmd(&work, &target, "crash:ops=seq1,only=creat.fsync/p1"), LIMIT);
    nothing_harmed(&a, &work, &victim, "links planted through the passthrough");
    assert_eq!(played.code(), Ok(0), "{}", played.err());
    assert!(played.out().contains("states_checked"), "{}", played.out());
}

#[test]
fn a_daemon_luring_the_crash_checker_to_a_link_and_a_fifo_reaches_nothing_outside() {
    let a = Arena::new("daemon-lure");
    let (canary, _, victim) = canary_and_fifo(&a);
    let work = a.workdir("work");
    // On the crash state, `.fsarena-sanity` is a link to the canary in the root and a FIFO in
    // every other directory: the sanity pass creates that name in each.
    let target = on_crash_states(&format!("--lure={}", canary.display()));
    let played = play(run_cmd(&work, &target, "crash:ops=seq1,only=creat.fsync/p1"), LIMIT);
    nothing_harmed(&a, &work, &victim, "the checker lured");
    assert_eq!(played.code(), Ok(0), "{}", played.err());
    // A finding, not a crash of the checker: the state fails its sanity pass.
    assert!(played.out().contains("crash.sanity."), "{}", played.out());
}

/// The largest resident set `run` reaches (VmHWM, sampled) until it ends.
fn peak_memory(run: &Running) -> u64 {
    let mut peak = 0;
    while !run.ended() {
        let status = std::fs::read_to_string(format!("/proc/{}/status", run.pid())).unwrap_or_default();
        let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap_or_default();
        let kib: u64 = hwm.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
        peak = peak.max(kib << 10);
        std::thread::sleep(Duration::from_millis(20));
    }
    peak
}

#[test]
fn a_daemon_claiming_gigabyte_files_leaves_the_oracle_within_kilobytes() {
    let a = Arena::new("daemon-claim");
    let work = a.workdir("work");
    // Every file of the crash state claims 1 GiB (read as zeros): the oracle was promised a
    // few KiB of each.
    let target = on_crash_states(&format!("--claim={}", 1u64 << 30));
    let run = start(run_cmd(&work, &target, "crash:ops=seq1,only=write_append.fsync"));
    let peak = peak_memory(&run);
    let played = run.finish(LIMIT);
    assert_eq!(played.code(), Ok(0), "{}", played.err());
    assert!(played.out().contains("crash.posix.") && played.out().contains("size"), "{}", played.out());
    assert!(peak < 256 << 20, "fsarena's resident set reached {} MiB reading what the daemon claimed", peak >> 20);
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));
}

/// A marker no other process's command line holds: a `sleep` of this many seconds.
fn sleep_marker(tag: u32) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{}.{:09}", 4000 + tag + std::process::id() % 1000, nanos)
}

/// A `fuse:` command whose `sh -c` leader ignores SIGTERM, starts bugfs and a sleeper that
/// inherit that, waits for the mount and exits: only the rest of its tree is left to end.
fn stubborn_target(marker: &str) -> String {
    format!(
        "fuse:cmd='trap \"\" TERM; sleep {marker} & {} {{work}} {{mnt}} & while ! mountpoint -q {{mnt}}; do sleep 0.1; done'",
        bugfs()
    )
}

#[test]
fn a_daemon_ignoring_sigterm_after_its_leader_exits_is_ended_with_its_tree() {
    let a = Arena::new("daemon-term");
    let marker = sleep_marker(1);
    let work = a.workdir("work");
    let played = play(run_cmd(&work, &stubborn_target(&marker), "io:size=1m"), LIMIT);
    assert_eq!(played.code(), Ok(0), "{}", played.err());
    let left = processes_mentioning(&marker);
    assert!(left.is_empty(), "the daemon's tree outlived the run: {left:?}");
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));

    // SIGKILL of fsarena while it runs, then `cleanup` from the state file.
    let marker = sleep_marker(2);
    let work = a.workdir("work-killed");
    let run = start(run_cmd(&work, &stubborn_target(&marker), "io:rw=write,size=8m,time_based=1,runtime=60"));
    let mounted = wait_until(Duration::from_secs(60), || {
        super::harness::mount_points_under(&work).len() == 1 && !processes_mentioning(&marker).is_empty()
    });
    assert!(mounted, "the daemon never mounted: {}", run.err_so_far());
    std::thread::sleep(Duration::from_millis(500));
    run.signal(Signal::KILL);
    run.finish(Duration::from_secs(10));
    assert!(!processes_mentioning(&marker).is_empty(), "the killed run's daemon tree is gone already (premise)");
    let out = cleanup(&work);
    assert_eq!(out.code(), Ok(0), "cleanup: {}", out.err());
    let left = processes_mentioning(&marker);
    assert!(left.is_empty(), "cleanup left the daemon's tree: {left:?}");
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));
    let again = cleanup(&work);
    assert!(again.err().contains("nothing to clean up"), "second cleanup: {}", again.err());
}

/// `pid`'s state letter (R, S, D...).
fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].chars().next()
}

#[test]
fn a_daemon_stuck_in_the_kernel_is_named_and_a_second_cleanup_finishes() {
    let a = Arena::new("daemon-stuck");
    // A loop device on a file of the test's own bugfs, which is then stopped: a direct read
    // of the device waits uninterruptibly for a FUSE answer that does not come, and SIGKILL
    // cannot end the reader until the test lets bugfs go on.
    let back = a.dir("stall-back");
    let mnt = a.dir("stall-mnt");
    std::fs::File::create(back.join("img")).unwrap().set_len(64 << 20).unwrap();
    let server = a.spawn(Command::new(bugfs()).arg(&back).arg(&mnt));
    assert!(wait_until(Duration::from_secs(20), || !super::harness::mount_points_under(&mnt).is_empty()));
    let dev = {
        let out = Command::new("losetup").arg("--find").arg("--show").arg(mnt.join("img")).bounded_output().unwrap();
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let _ = Command::new("udevadm").arg("settle").status();
    let stop = |sig| rustix::process::kill_process(rustix::process::Pid::from_raw(server as i32).unwrap(), sig);
    stop(Signal::STOP).unwrap();
    let work = a.workdir("work");
    // Far from where a probe of the new device may have read (its page cache would answer).
    let target = format!(
        "fuse:cmd='dd if={dev} of=/dev/null iflag=direct bs=4096 count=1 skip=9000 & exec {} {{work}} {{mnt}}'",
        bugfs()
    );
    let played = play(run_cmd(&work, &target, "io:size=1m"), LIMIT);
    let dd: Vec<u32> = processes_mentioning(&dev)
        .iter()
        .filter(|l| l.contains("dd if="))
        .filter_map(|l| l.strip_prefix("process ")?.split(':').next()?.parse().ok())
        .collect();
    let stuck = dd.first().copied();
    let release = || {
        stop(Signal::CONT).unwrap();
        let _ = Command::new("losetup").args(["-d", &dev]).status();
    };
    let Some(pid) = stuck else {
        release();
        panic!("no reader got stuck (premise); the run said: {}", played.err());
    };
    assert_eq!(state_of(pid), Some('D'), "the reader {pid} is not in uninterruptible sleep (premise)");
    // `PID (dd) waiting in ..., holding ... /dev/loopN ...`: the message, not the command line.
    let named = |text: &str| {
        text.split(&format!("{pid} (dd)")).nth(1).and_then(|rest| rest.split_once("holding ")).is_some_and(
            |(_, held)| {
                held.lines().next().unwrap_or_default().split(' ').any(|w| w.trim_end_matches([';', ')', ',']) == dev)
            },
        )
    };
    assert_ne!(played.code(), Ok(0), "a teardown that could not finish exited 0: {}", played.err());
    assert!(named(&played.err()), "the run does not name the stuck process and what it holds: {}", played.err());
    let first = cleanup(&work);
    assert_ne!(first.code(), Ok(0), "cleanup with the process still stuck: {}", first.err());
    assert!(named(&first.err()), "cleanup does not name the stuck process: {}", first.err());
    release();
    assert!(wait_until(Duration::from_secs(20), || state_of(pid).is_none()), "the reader {pid} never ended");
    let second = cleanup(&work);
    assert_eq!(second.code(), Ok(0), "the second cleanup: {}", second.err());
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));
    assert!(processes_mentioning(&work.display().to_string()).is_empty());
}

#[test]
fn crash_keys_out_of_range_are_refused_before_anything_is_created() {
    let f = Arena::new("daemon-crash-keys");
    let open = f.dir("open");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    f.file("plain", "a file, not a directory\n");
    let crash = |keys: &str, wants: &[&str]| {
        let w = format!("crash:ops=seq1,only=creat.fsync,{keys}");
        row(&["run", "--target", "ext4:size=256m", "--workload", &w], wants)
    };
    let rows = vec![
        crash("image_size=1k", &["image_size=1k", "at least"]),
        crash("image_size=100t", &["image_size=100t", "at most"]),
        crash("max_log=1", &["max_log=1", "at least"]),
        crash("max_log=900g", &["max_log=900g", "free"]),
        crash("keep_failed=/nonexistent-fsarena-dir/kept", &["keep_failed=", "does not exist"]),
        crash("keep_failed={F}/plain/kept", &["keep_failed=", "not a directory"]),
        crash("keep_failed={F}/open/kept", &["keep_failed=", "writable by others"]),
        crash("max_states=1000000000", &["max_states=1000000000", "at most"]),
        crash("sample=1000000000", &["sample=1000000000", "at most"]),
        crash("mount_timeout=30d", &["mount_timeout=30d", "at most"]),
        row(
            &[
                "run",
                "--target",
                "fuse:cmd='true {work} {mnt}',timeout=30d",
                "--workload",
                "crash:ops=seq1,only=creat.fsync",
            ],
            &["timeout=30d", "at most"],
        ),
    ];
    refuse_all("crash-keys", &f, rows, 2);
}

/// Victims another program writes where GlusterFS keeps its logs, state and sockets, while
/// fsarena provisions: (path, device, inode).
fn gluster_victims() -> Vec<(PathBuf, u64, u64)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for dir in ["/var/log/glusterfs", "/var/lib/glusterd", "/run/gluster"] {
        let p = PathBuf::from(format!("{dir}/fsarena-daemons-victim-{me}"));
        std::fs::write(&p, "another program's file\n").unwrap();
        let m = std::fs::metadata(&p).unwrap();
        out.push((p, m.dev(), m.ino()));
    }
    out
}

#[test]
fn files_another_program_writes_beside_glusterfs_survive_its_provisioning() {
    let _turn = crate::glusterfs::one_at_a_time();
    let before = crate::glusterfs::outside();
    let a = Arena::new("daemon-gluster");
    let work = a.workdir("work");
    let run = start(run_cmd(&work, "glusterfs:size=300m", "io:rw=write,size=4m"));
    // As soon as fsarena's glusterd runs: the provisioning is under way.
    let up = wait_until(Duration::from_secs(120), || {
        processes_mentioning(&work.display().to_string()).iter().any(|p| p.contains("glusterd"))
    });
    let victims = gluster_victims();
    let played = run.finish(Duration::from_secs(300));
    let survived: Vec<String> = victims
        .iter()
        .filter(|(p, dev, ino)| !std::fs::metadata(p).is_ok_and(|m| m.dev() == *dev && m.ino() == *ino))
        .map(|(p, _, _)| p.display().to_string())
        .collect();
    for (p, _, _) in &victims {
        let _ = std::fs::remove_file(p);
    }
    assert!(up, "fsarena's glusterd never ran: {}", played.err());
    assert_eq!(played.code(), Ok(0), "{}", played.err());
    assert!(survived.is_empty(), "fsarena removed another program's files: {survived:?}");
    let new: Vec<String> = crate::glusterfs::outside().difference(&before).cloned().collect();
    assert!(new.is_empty(), "left outside the work directory: {new:?}");
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));
    assert!(processes_mentioning(&work.display().to_string()).is_empty());
}
