//! The host's side (issue 28): a `dir:` target in a directory another user owns, its scratch
//! directory renamed and replaced by a link mid-run, links planted by `nobody` at the /tmp
//! paths of the old defaults, the privacy of the results database and reports, and a closed
//! stdout or stderr during a run on a loop-image target.

use super::harness::{leftovers_under, play, snapshot, wait_until, Arena, Played, Victim};
use crate::util::Bounded;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `runuser -u nobody -- ARGS...`, which must succeed.
fn as_nobody(args: &[&str]) {
    let out = Command::new("runuser").args(["-u", "nobody", "--"]).args(args).bounded_output().unwrap();
    assert!(out.status.success(), "runuser -u nobody -- {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// `fsarena run` with one target and workload, in `work`, with `extra` arguments.
fn run_cmd(work: &Path, target: &str, workload: &str, extra: &[&str]) -> Command {
    let mut c = super::harness::fsarena();
    c.arg("run").arg("--workdir").arg(work).args(["--target", target, "--workload", workload]);
    c.args(extra);
    c
}

/// Entries of `dir` by name.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_dir_target_in_a_directory_others_can_change_is_refused_before_anything_exists() {
    let a = Arena::new("host-dir-owner");
    let theirs = a.dir("theirs");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    as_nobody(&["mkdir", "-m", "0755", &theirs.join("bench").to_string_lossy()]);
    let bench = theirs.join("bench");
    let open = a.dir("open");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    for (dir, why) in [(&bench, "is owned by uid 65534"), (&open, "is writable by others (mode 0777) and not sticky")] {
        let work = a.workdir(&format!("work-{}", dir.file_name().unwrap().to_string_lossy()));
        let target = format!("dir:path={}", dir.display());
        let out = play(run_cmd(&work, &target, "io:size=1m", &["--no-store"]), Duration::from_secs(60));
        let err = out.err();
        assert_eq!(out.code(), Ok(2), "{target}: {err}");
        assert!(err.contains(why) && err.contains("a dir: target must be a directory owned by root"), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(names(dir).is_empty(), "{target}: created {:?}", names(dir));
        assert!(!work.exists(), "the work directory was created for a refused run");
    }
}

/// The scratch directory `fsarena-*` under `dir`, once there.
fn scratch_in(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fsarena-"))
            && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
    })
}

#[test]
fn a_scratch_directory_renamed_and_replaced_by_a_link_mid_run_leads_nowhere() {
    let a = Arena::new("host-dir-swap");
    let d = a.dir("d");
    // What the workload would write and remove by name, waiting at the link's end.
    let canary = a.dir("canary");
    a.file("canary/io.0.0", "precious bytes of someone else's io.0.0\n");
    a.file("canary/keep", "keep me\n");
    let victim = Victim::tree(&canary);
    let work = a.workdir("work");
    // Five rounds, each opening the job's file again by its name.
    let workload = "io:rw=write,bs=4k,size=4m,time_based=1,runtime=1";
    let target = format!("dir:path={}", d.display());
    let run =
        super::harness::start(run_cmd(&work, &target, workload, &["--no-store", "--repeat", "5", "--warmup", "0"]));
    let mut scratch = None;
    let laid_out = wait_until(Duration::from_secs(30), || {
        scratch = scratch_in(&d);
        scratch.as_ref().is_some_and(|s| s.join("io.0.0").exists())
    });
    assert!(laid_out, "the run never wrote: {}", run.err_so_far());
    let scratch = scratch.unwrap();
    // Root plays the part of whoever may change `d`: the directory moves, a link takes its name.
    let moved = d.join("moved");
    std::fs::rename(&scratch, &moved).unwrap();
    std::os::unix::fs::symlink(&canary, &scratch).unwrap();
    let out = run.finish(Duration::from_secs(120));
    let err = out.err();
    assert_eq!(out.code(), Ok(0), "{err}");
    assert_eq!(victim.damage(), Vec::<String>::new(), "the canary behind the link was changed: {err}");
    let link = std::fs::symlink_metadata(&scratch).unwrap();
    assert!(link.file_type().is_symlink(), "the planted link was replaced");
    assert_eq!(std::fs::read_link(&scratch).unwrap(), canary, "the planted link was changed");
    let mut expected = vec!["moved".to_string(), scratch.file_name().unwrap().to_string_lossy().into_owned()];
    expected.sort();
    assert_eq!(names(&d), expected, "written beside the scratch directory");
    assert!(names(&moved).is_empty(), "the workload's files were not removed from its own directory");
    assert!(leftovers_under(&work).is_empty(), "left {:?}", leftovers_under(&work));
}

#[test]
fn links_planted_by_nobody_at_the_old_tmp_defaults_are_never_followed() {
    let a = Arena::new("host-tmp");
    let canary = a.file("canary", "root's file, reached through nobody's link\n");
    let victim = Victim::tree(&canary);
    // A seed of this test's own: its /tmp name meets no other test's verify run.
    let seed = 2828 + std::process::id() % 1000;
    let planted = PathBuf::from(format!("/tmp/fsarena-verify-{seed}.fsxops"));
    let _ = std::fs::remove_file(&planted);
    as_nobody(&["ln", "-s", &canary.to_string_lossy(), &planted.to_string_lossy()]);
    let work = a.workdir("work");
    let target = format!("fuse:cmd='{} --bugs=flip_bit {{work}} {{mnt}}'", crate::verify::bugfs().display());
    let mut cmd = run_cmd(&work, &target, &format!("verify:seed={seed}"), &["--no-store", "--strict-checks"]);
    cmd.env_remove("TMPDIR");
    let out = play(cmd, Duration::from_secs(180));
    let still_planted = std::fs::symlink_metadata(&planted).is_ok_and(|m| m.file_type().is_symlink());
    let _ = std::fs::remove_file(&planted);
    let err = out.err();
    assert_eq!(out.code(), Ok(3), "a mismatch under --strict-checks: {err}");
    assert_eq!(victim.damage(), Vec::<String>::new(), "the canary was written through the link in /tmp: {err}");
    assert!(still_planted, "nobody's link was removed or replaced");
    let logs: Vec<PathBuf> = snapshot(&work)
        .into_keys()
        .filter(|p| p.to_string_lossy().ends_with(&format!("-verify-{seed}.fsxops")))
        .collect();
    assert_eq!(logs.len(), 1, "the log of operations is not in the run's work directory: {err}");
    assert!(err.contains(&format!("log of operations saved to {}", logs[0].display())), "{err}");
    assert_eq!(mode(&logs[0]), 0o600);
    assert!(std::fs::read_to_string(&logs[0]).unwrap().starts_with("# fsarena verify:mode=fsx seed="));
    assert!(leftovers_under(&work).is_empty(), "left {:?}", leftovers_under(&work));
}

#[test]
fn the_results_database_and_reports_are_private() {
    let a = Arena::new("host-private");
    let t = a.tmpfs("t", "16m");
    let xdg = a.path("xdg/share");
    let out_dir = a.dir("out");
    let work = a.workdir("work");
    let target = format!("dir:path={}", t.display());
    let mut cmd = run_cmd(&work, &target, "io:size=1m", &["--repeat", "2", "--warmup", "0"]);
    cmd.env("XDG_DATA_HOME", &xdg);
    let out = play(cmd, Duration::from_secs(60));
    assert_eq!(out.code(), Ok(0), "{}", out.err());
    // The default data directory, made by fsarena: its owner's alone.
    for made in [a.path("xdg"), xdg.clone(), xdg.join("fsarena")] {
        assert_eq!(mode(&made), 0o700, "{}", made.display());
    }
    let db = xdg.join("fsarena/results.db");
    for name in ["results.db", "results.db.lock", "results.db-wal", "results.db-shm", "results.db-journal"] {
        let p = xdg.join("fsarena").join(name);
        if name == "results.db" || p.exists() {
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }
    // `report -o`: new files 0600 (a Markdown report's charts too); a link planted at the
    // name is refused before anything is written (bad input, exit 2), its target intact.
    let canary = a.file("canary", "someone else's page\n");
    let victim = Victim::tree(&canary);
    let (md, html, planted) = (out_dir.join("run.md"), out_dir.join("run.html"), out_dir.join("planted.html"));
    std::os::unix::fs::symlink(&canary, &planted).unwrap();
    for (path, code) in [(&md, 0), (&html, 0), (&planted, 2)] {
        let mut c = super::harness::fsarena();
        c.args(["report", "last", "-o"]).arg(path).arg("--db").arg(&db);
        let p = play(c, Duration::from_secs(60));
        assert_eq!(p.code(), Ok(code), "{}: {}", path.display(), p.err());
    }
    let written: Vec<PathBuf> = std::fs::read_dir(&out_dir).unwrap().flatten().map(|e| e.path()).collect();
    assert!(written.len() > 3, "no charts beside the Markdown report: {written:?}");
    for p in written.iter().filter(|p| **p != planted) {
        assert_eq!(mode(p), 0o600, "{}", p.display());
    }
    assert_eq!(victim.damage(), Vec::<String>::new());
    assert!(std::fs::symlink_metadata(&planted).unwrap().file_type().is_symlink());
}

/// A pipe: (read end, write end), both close-on-exec.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills both descriptors, which are then owned here.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both are open descriptors nothing else owns.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Waits for `child` to end within `limit` (then kills it): its exit status as [`Played`]
/// says it, with `stderr`.
fn wait_child(mut child: std::process::Child, limit: Duration, stderr: Vec<u8>) -> Played {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Played { status, stdout: Vec::new(), stderr }
}

/// A run on an ext4 loop image whose stdout (and, with `both`, stderr: `2>&1 | head -c1`) is a
/// pipe whose reader reads one byte, waits until the image is mounted, and goes away.
/// Returns how it ended, its stderr when that was not the pipe, the db and the work directory.
fn closed_pipe_run(a: &Arena, both: bool) -> (Played, PathBuf, PathBuf) {
    let work = a.workdir("work");
    let db = a.path("results.db");
    let mut cmd = run_cmd(
        &work,
        "ext4:size=64m",
        "io:rw=write,bs=4k,size=4m,time_based=1,runtime=1",
        &["--repeat", "20", "--warmup", "0", "--log"],
    );
    cmd.arg("--db").arg(&db).stdin(Stdio::null());
    let (reader, writer) = pipe();
    let err_file = a.path("stderr.txt");
    if both {
        cmd.stderr(Stdio::from(writer.try_clone().unwrap()));
    } else {
        cmd.stderr(std::fs::File::create(&err_file).unwrap());
    }
    cmd.stdout(Stdio::from(writer));
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let mut reader = std::fs::File::from(reader);
    if both {
        let mut one = [0u8; 1];
        std::io::Read::read_exact(&mut reader, &mut one).unwrap();
    }
    let mounted = wait_until(Duration::from_secs(60), || !super::harness::mount_points_under(&work).is_empty());
    drop(reader);
    let played = wait_child(child, Duration::from_secs(120), Vec::new());
    let stderr = if both { Vec::new() } else { std::fs::read(&err_file).unwrap_or_default() };
    assert!(mounted, "the target was never mounted: {}", String::from_utf8_lossy(&stderr));
    (Played { stderr, ..played }, db, work)
}

/// The stored runs' completeness, from `results list`.
fn stored_complete(db: &Path) -> Vec<bool> {
    let mut c = super::harness::fsarena();
    c.args(["results", "list", "--output-format", "json", "--db"]).arg(db);
    let p = play(c, Duration::from_secs(30));
    assert_eq!(p.code(), Ok(0), "{}", p.err());
    let v: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
    v["runs"].as_array().unwrap().iter().map(|r| r["complete"].as_bool().unwrap()).collect()
}

#[test]
fn a_closed_stderr_during_a_run_tears_down_like_an_interrupt() {
    let a = Arena::new("host-pipe-err");
    let (out, db, work) = closed_pipe_run(&a, true);
    assert_eq!(out.code(), Ok(141), "not ended as by SIGPIPE (128+13)");
    assert!(leftovers_under(&work).is_empty(), "left {:?}", leftovers_under(&work));
    assert_eq!(stored_complete(&db), vec![false], "the results so far, stored incomplete");
}

#[test]
fn a_closed_stdout_during_a_run_tears_down_like_an_interrupt() {
    let a = Arena::new("host-pipe-out");
    let (out, db, work) = closed_pipe_run(&a, false);
    let err = out.err();
    assert_eq!(out.code(), Ok(141), "not ended as by SIGPIPE (128+13): {err}");
    assert!(err.contains("standard output was closed (broken pipe)"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(leftovers_under(&work).is_empty(), "left {:?}", leftovers_under(&work));
    assert_eq!(stored_complete(&db), vec![false], "the results so far, stored incomplete");
}

#[test]
fn a_read_only_command_into_a_closed_pipe_is_quietly_successful() {
    let a = Arena::new("host-pipe-list");
    let t = a.tmpfs("t", "16m");
    let db = a.path("results.db");
    let mut run = run_cmd(&a.workdir("work"), &format!("dir:path={}", t.display()), "io:size=1m", &["--repeat", "1"]);
    run.arg("--db").arg(&db);
    let made = play(run, Duration::from_secs(60));
    assert_eq!(made.code(), Ok(0), "{}", made.err());
    // `results list | head`: the reader gone before a byte is written.
    let (reader, writer) = pipe();
    drop(reader);
    let mut c = super::harness::fsarena();
    c.args(["results", "list", "--db"]).arg(&db).stdout(Stdio::from(writer)).stderr(Stdio::piped());
    // std's output(), which keeps the stdout given (bounded_output pipes its own).
    let p = c.output().unwrap();
    assert_eq!(p.status.code(), Some(0), "{}", String::from_utf8_lossy(&p.stderr));
    assert!(p.stderr.is_empty(), "{}", String::from_utf8_lossy(&p.stderr));
}
