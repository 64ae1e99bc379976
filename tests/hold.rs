//! `fsarena up` and `fsarena down`: targets held for the user's own tools, on real mounts.

use crate::util::Bounded;
use crate::util::{fsarena, stderr, stdout, TestWorkdir};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// The mount points `up` printed: `LABEL<TAB>ROOT` lines.
fn roots(out: &str) -> Vec<String> {
    out.lines().filter_map(|l| l.split_once('\t')).map(|(_, root)| root.to_string()).collect()
}

fn mounted(path: &str) -> bool {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    mountinfo.lines().any(|l| l.split(' ').nth(4) == Some(path))
}

#[test]
fn detached_targets_stay_through_cleanup_until_down() {
    let wd = TestWorkdir::new("up-detach");
    let out = fsarena()
        .args(["up", "--target", "tmpfs:size=64m", "--target", "ext4:size=256m", "--detach", "--workdir", &wd.arg()])
        .bounded_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let roots = roots(&stdout(&out));
    assert_eq!(roots.len(), 2, "{}", stdout(&out));
    assert!(roots.iter().all(|r| mounted(r)), "{roots:?}");
    // The user's own tool on the held filesystem.
    std::fs::write(format!("{}/mine", roots[1]), b"data").unwrap();
    let run = stderr(&out).split("held as run ").nth(1).unwrap().split(' ').next().unwrap().to_string();
    // cleanup leaves held targets and says how to end them.
    let c = fsarena().args(["cleanup", "--workdir", &wd.arg()]).bounded_output().unwrap();
    assert!(c.status.success());
    assert!(stderr(&c).contains("held by `fsarena up --detach`"), "{}", stderr(&c));
    assert!(roots.iter().all(|r| mounted(r)));
    // down with another run id touches nothing; with this one, everything goes.
    let other = fsarena().args(["down", "0123456789abcdef", "--workdir", &wd.arg()]).bounded_output().unwrap();
    assert!(other.status.success() && stderr(&other).contains("no run 0123456789abcdef"), "{}", stderr(&other));
    assert!(roots.iter().all(|r| mounted(r)));
    let d = fsarena().args(["down", &run, "--workdir", &wd.arg()]).bounded_output().unwrap();
    assert!(d.status.success(), "{}", stderr(&d));
    assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
}

#[test]
fn a_held_target_is_torn_down_on_sigterm() {
    let wd = TestWorkdir::new("up-fg");
    let mut child = fsarena()
        .args(["up", "--target", "ext4:size=256m", "--workdir", &wd.arg()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let root = roots(&line).pop().expect("a mount point line");
    assert!(mounted(&root));
    // Only the process this test started is signalled.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(wd.leftovers().is_empty(), "{:?}", wd.leftovers());
}

#[test]
fn bad_targets_are_refused_before_anything_is_created() {
    let wd = TestWorkdir::new("up-bad");
    for args in [&["up", "--target", "ext9"][..], &["up", "--target", "ext4:size=64m", "--target", "ext4:size=64m"]] {
        let out = fsarena().args(args).args(["--workdir", &wd.arg()]).bounded_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!wd.path.exists(), "nothing created for {args:?}");
    }
}
