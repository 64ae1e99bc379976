//! Signals and lifecycle: SIGKILL on a dir: target, PID reuse across PID namespaces, a double
//! Ctrl-C, a busy mount at teardown, a FUSE command that never mounts, results that cannot be
//! stored, and a relative work directory cleaned up from another directory.

use super::harness::{
    diff_with, loops_under, mount_points_under, processes_mentioning, snapshot, start, wait_until, workdir_leftovers,
    Arena, Played, Victim,
};
use super::scene::{victim_dir, victim_file};
use rustix::process::Signal;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LONG_WRITE: &str = "io:rw=write,bs=4k,size=8m,time_based=1,runtime=60";

/// `fsarena run` with one measured repetition and no store.
fn run_cmd(work: &Path, targets: &[&str], workload: &str) -> Command {
    let mut c = super::harness::fsarena();
    c.arg("run").arg("--workdir").arg(work);
    for t in targets {
        c.args(["--target", t]);
    }
    c.args(["--workload", workload, "--no-store", "--repeat", "1", "--warmup", "0"]);
    c
}

fn cleanup(work: &Path, cwd: &Path) -> Played {
    let mut c = super::harness::fsarena();
    c.arg("cleanup").arg("--workdir").arg(work).current_dir(cwd);
    super::harness::play(c, Duration::from_secs(60))
}

/// True once a file named `io.*` exists below `root` (the workload has laid out its file).
fn io_file_under(root: &Path) -> bool {
    super::harness::snapshot(root).keys().any(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("io.")))
}

#[test]
fn sigkill_on_a_dir_target_then_cleanup_removes_its_files() {
    let a = Arena::new("sigkill-dir");
    let t = a.tmpfs("t", "64m");
    let before = snapshot(&t);
    let work = a.workdir("work");
    let run = start(run_cmd(&work, &[&format!("dir:path={}", t.display())], LONG_WRITE));
    assert!(wait_until(Duration::from_secs(30), || io_file_under(&t)), "the run never wrote: {}", run.err_so_far());
    std::thread::sleep(Duration::from_millis(300));
    run.signal(Signal::KILL);
    run.finish(Duration::from_secs(10));
    assert!(!diff_with(&before, &snapshot(&t), false).is_empty(), "the killed run left its files (premise)");
    let out = cleanup(&work, &a.root);
    assert_eq!(out.code(), Ok(0), "cleanup: {}", out.err());
    assert!(!out.err().contains("nothing to clean up"), "cleanup found nothing: {}", out.err());
    let left = diff_with(&before, &snapshot(&t), false);
    assert!(left.is_empty(), "cleanup left the killed run's files in the dir: target: {left:?}");
    assert!(workdir_leftovers(&work, &[]).is_empty(), "left {:?}", workdir_leftovers(&work, &[]));
    let again = cleanup(&work, &a.root);
    assert!(again.err().contains("nothing to clean up"), "second cleanup: {}", again.err());
}

/// `unshare --pid --fork --mount-proc fsarena ARGS...`: fsarena runs as PID 1 of a new PID
/// namespace, as in a container.
fn in_pid_namespace(cmd: Command) -> Command {
    let mut c = Command::new("unshare");
    c.args(["--pid", "--fork", "--mount-proc"]).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c
}

fn state_files(work: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(work)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("state-")))
        .collect();
    v.sort();
    v
}

#[test]
fn a_run_reusing_a_killed_runs_pid_in_another_namespace_leaves_its_state_alone() {
    let a = Arena::new("pidns");
    let work = a.workdir("work");
    let first = start(in_pid_namespace(run_cmd(&work, &["ext4:size=128m"], LONG_WRITE)));
    let unshare_pid = first.pid();
    let mut fsarena_pid = 0u32;
    let found = wait_until(Duration::from_secs(30), || {
        let children =
            std::fs::read_to_string(format!("/proc/{unshare_pid}/task/{unshare_pid}/children")).unwrap_or_default();
        fsarena_pid = children.split_whitespace().next().and_then(|p| p.parse().ok()).unwrap_or(0);
        fsarena_pid != 0
            && std::fs::read_to_string(format!("/proc/{fsarena_pid}/mountinfo"))
                .is_ok_and(|m| m.contains(&*work.to_string_lossy()))
    });
    assert!(found, "the first run never mounted: {}", first.err_so_far());
    let status = std::fs::read_to_string(format!("/proc/{fsarena_pid}/status")).unwrap();
    let nspid = status.lines().find(|l| l.starts_with("NSpid:")).unwrap_or_default().to_string();
    assert!(
        nspid.trim_end().ends_with("\t1") || nspid.trim_end().ends_with(" 1"),
        "not PID 1 in its namespace: {nspid}"
    );
    std::thread::sleep(Duration::from_millis(300));
    let _ = rustix::process::kill_process(rustix::process::Pid::from_raw(fsarena_pid as i32).unwrap(), Signal::KILL);
    first.finish(Duration::from_secs(10));
    let killed: Vec<(PathBuf, Victim)> =
        state_files(&work).into_iter().map(|p| (p.clone(), Victim::tree(&p))).collect();
    assert!(!killed.is_empty(), "the killed run left no state file in {}", work.display());
    assert!(!loops_under(&work).is_empty(), "the killed run left no loop device (premise)");

    // Another run, PID 1 of another namespace, in the same work directory.
    let t = a.tmpfs("t", "16m");
    let second = start(in_pid_namespace(run_cmd(&work, &[&format!("dir:path={}", t.display())], "io:size=1m")))
        .finish(Duration::from_secs(60));
    assert_eq!(second.code(), Ok(0), "the second run: {}", second.err());
    for (path, v) in &killed {
        let damage = v.damage();
        assert!(damage.is_empty(), "the second run touched the killed run's state {}: {damage:?}", path.display());
    }
    let out = cleanup(&work, &a.root);
    assert_eq!(out.code(), Ok(0), "cleanup: {}", out.err());
    let left = workdir_leftovers(&work, &[]);
    assert!(left.is_empty(), "the killed run's resources were not cleaned up: {left:?}");
}

/// Starts a long run on `target` and waits until it has mounted under `work`.
fn running_on(a: &Arena, target: &str, workload: &str) -> (PathBuf, super::harness::Running) {
    let work = a.workdir("work");
    let run = start(run_cmd(&work, &[target], workload));
    let mounted = wait_until(Duration::from_secs(60), || !mount_points_under(&work).is_empty());
    assert!(mounted, "the run never mounted: {}", run.err_so_far());
    (work, run)
}

#[test]
fn a_second_interrupt_still_tears_down() {
    let a = Arena::new("double-sigint");
    // fuse2fs: its teardown (fusermount, then ending the daemon) is slow enough for the second
    // interrupt to arrive while it runs.
    let (work, run) = running_on(&a, "fuse2fs:size=128m", LONG_WRITE);
    std::thread::sleep(Duration::from_millis(500));
    run.signal(Signal::INT);
    // Two signals close together can reach the process as one (pending signals coalesce):
    // interrupt again until the second one is seen or the run has ended.
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(10));
        if run.err_so_far().contains("second interrupt") || run.ended() {
            break;
        }
        run.signal(Signal::INT);
    }
    let out = run.finish(Duration::from_secs(60));
    let err = out.err();
    assert_eq!(out.code(), Ok(130), "stderr: {err}");
    let said = err.lines().filter(|l| l.contains("second interrupt")).count();
    assert_eq!(said, 1, "one 'second interrupt' line expected: {err}");
    let left = workdir_leftovers(&work, &[]);
    assert!(left.is_empty(), "a double Ctrl-C left {left:?}; stderr: {err}");
}

#[test]
fn a_busy_mount_at_teardown_is_kept_for_cleanup_and_its_holder_named() {
    let a = Arena::new("busy");
    let (work, run) = running_on(&a, "ext4:size=128m", "io:rw=write,bs=4k,size=4m,time_based=1,runtime=3");
    let mnt = mount_points_under(&work).remove(0);
    let holder = a.spawn(Command::new("sleep").arg("120").current_dir(&mnt));
    let out = run.finish(Duration::from_secs(120));
    let err = out.err();
    assert_eq!(out.code(), Ok(1), "a busy unmount must fail the run: {err}");
    assert!(err.contains(&holder.to_string()), "the holder (pid {holder}, sleep) is not named: {err}");
    assert!(mount_points_under(&work).contains(&mnt), "the busy mount was detached: {err}");
    assert!(!loops_under(&work).is_empty(), "the loop device under the busy mount was detached");
    let names: Vec<String> =
        std::fs::read_dir(&work).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n.ends_with(".img")), "the image under the busy mount was deleted: {names:?}");
    assert!(names.iter().any(|n| n.starts_with("state-")), "the state file was removed: {names:?}");
    a.kill(holder);
    let out = cleanup(&work, &a.root);
    assert_eq!(out.code(), Ok(0), "cleanup: {}", out.err());
    let left = workdir_leftovers(&work, &[]);
    assert!(left.is_empty(), "cleanup after the holder ended left {left:?}");
}

#[test]
fn a_fuse_command_that_never_mounts_leaves_no_process() {
    let a = Arena::new("fuse-timeout");
    let work = a.workdir("work");
    let out = super::harness::play(
        run_cmd(&work, &["fuse:cmd='sleep 600.4711 # {mnt}',timeout=1s"], "io:size=1m"),
        Duration::from_secs(60),
    );
    assert_eq!(out.code(), Ok(1), "stderr: {}", out.err());
    let gone = wait_until(Duration::from_secs(3), || processes_mentioning("600.4711").is_empty());
    let left = processes_mentioning("600.4711");
    // The marker is this test's own: end what fsarena left before failing, by PID.
    for p in &left {
        if let Some(pid) = p.strip_prefix("process ").and_then(|r| r.split(':').next()).and_then(|n| n.parse().ok()) {
            let _ = rustix::process::kill_process(rustix::process::Pid::from_raw(pid).unwrap(), Signal::KILL);
        }
    }
    assert!(gone, "the FUSE command is still running: {left:?}");
    let left = workdir_leftovers(&work, &[]);
    assert!(left.is_empty(), "left {left:?}");
}

/// A database holding one run, on `dir`.
fn first_run(a: &Arena, db: &Path) {
    let t = a.tmpfs("t", "16m");
    let mut c = super::harness::fsarena();
    c.args(["run", "--repeat", "1", "--warmup", "0", "--workload", "io:size=1m"])
        .arg("--target")
        .arg(format!("dir:path={}", t.display()))
        .arg("--workdir")
        .arg(a.workdir("work"))
        .arg("--db")
        .arg(db);
    let out = super::harness::play(c, Duration::from_secs(60));
    assert_eq!(out.code(), Ok(0), "the first run: {}", out.err());
}

fn second_run(a: &Arena, db: &Path) -> Played {
    let t = a.path("t");
    let mut c = super::harness::fsarena();
    c.args(["run", "--repeat", "1", "--warmup", "0", "--workload", "io:size=1m"])
        .arg("--target")
        .arg(format!("dir:path={}", t.display()))
        .arg("--workdir")
        .arg(a.path("work"))
        .arg("--db")
        .arg(db);
    super::harness::play(c, Duration::from_secs(60))
}

#[test]
fn results_that_cannot_be_stored_do_not_exit_0() {
    let a = Arena::new("unstored");
    // An immutable database.
    let db = a.dir("db").join("results.db");
    first_run(&a, &db);
    a.immutable(&db);
    let out = second_run(&a, &db);
    assert!(
        matches!(out.code(), Ok(c) if c != 0),
        "results lost to an immutable database, exit {:?}: {}",
        out.code(),
        out.err()
    );
    assert!(out.err().contains("stored") || out.err().contains("store"), "not said: {}", out.err());
    // A database on a full filesystem.
    let b = Arena::new("unstored-full");
    let fs = b.tmpfs("dbfs", "2m");
    let db = fs.join("results.db");
    first_run(&b, &db);
    let mut filler = std::fs::File::create(fs.join("filler")).unwrap();
    while std::io::Write::write_all(&mut filler, &[0u8; 4096]).is_ok() {}
    drop(filler);
    let out = second_run(&b, &db);
    assert!(matches!(out.code(), Ok(c) if c != 0), "results lost to a full disk, exit {:?}: {}", out.code(), out.err());
    let mut list = super::harness::fsarena();
    list.args(["results", "list", "--output-format", "json", "--db"]).arg(&db);
    let listed = super::harness::play(list, Duration::from_secs(30));
    let v: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
    let runs = v["runs"].as_array().map_or(0, Vec::len);
    assert_eq!(runs, 1, "a run that stored nothing is listed: {} {}", listed.out(), listed.err());
}

#[test]
fn a_relative_work_directory_is_cleaned_up_from_anywhere_and_same_named_decoys_survive() {
    let a = Arena::new("relative");
    let cwd_a = a.dir("a");
    let cwd_b = a.dir("b");
    let work = cwd_a.join("rel/work");
    a.register_workdir(&work);
    let mut cmd = run_cmd(Path::new("rel/work"), &["ext4:size=128m"], LONG_WRITE);
    cmd.current_dir(&cwd_a);
    let run = start(cmd);
    assert!(wait_until(Duration::from_secs(60), || !mount_points_under(&work).is_empty()), "{}", run.err_so_far());
    std::thread::sleep(Duration::from_millis(300));
    run.signal(Signal::KILL);
    run.finish(Duration::from_secs(10));
    // Decoys with the same names, relative to another directory: a mount where fsarena
    // mounted, files and directories where it made them.
    let mounted = mount_points_under(&work);
    let mut victims = Vec::new();
    for e in std::fs::read_dir(&work).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("state-") || name == ".lock" {
            continue;
        }
        let rel = format!("b/rel/work/{name}");
        if mounted.contains(&e.path()) {
            victims.push(super::scene::victim_mount(&a, &rel).1);
        } else if e.path().is_dir() {
            victims.push(victim_dir(&a, &rel).1);
        } else {
            victims.push(victim_file(&a, &rel).1);
        }
    }
    assert!(!victims.is_empty(), "the killed run left nothing to imitate (premise)");
    let out = cleanup(&work, &cwd_b);
    assert_eq!(out.code(), Ok(0), "cleanup: {}", out.err());
    let damage: Vec<String> = victims.iter().flat_map(Victim::damage).collect();
    assert!(damage.is_empty(), "cleanup acted on same-named decoys: {damage:?}");
    let left = workdir_leftovers(&work, &[]);
    assert!(left.is_empty(), "cleanup left the real ones: {left:?}");
    let again = cleanup(Path::new("rel/work"), &cwd_b);
    let damage: Vec<String> = victims.iter().flat_map(Victim::damage).collect();
    assert!(damage.is_empty(), "a cleanup of the decoys' directory acted on them: {damage:?}: {}", again.err());
}
