use super::*;
use std::process::Stdio;

fn root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A shell that ignores SIGTERM, with a child that ignores it too and one that left the
/// process group with setsid.
fn stubborn(tag: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", &format!("trap '' TERM; sh -c \"sleep 1001; : {tag}\" & setsid sleep 1002 & exec sleep 1003")]);
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    c
}

fn with_tag(tag: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(tag) && stat_of(pid).is_some_and(|s| s.0 != 'Z') {
            out.push(pid);
        }
    }
    out
}

#[test]
fn the_whole_tree_goes_even_when_the_leader_died_first() {
    let tag = format!("fsarena-contain-{}", std::process::id());
    let mut cmd = stubborn(&tag);
    let prepared = prepare(&mut cmd, Setup::default());
    let mut child = cmd.spawn().unwrap();
    let tree = prepared.started(child.id());
    assert!(wait_until(|| tree.members().len() >= 2), "{:?}", tree.members());
    // The leader dies; its TERM-ignoring child stays in the group (and the cgroup).
    let _ = child.kill();
    let _ = child.wait();
    assert!(!with_tag(&tag).is_empty());
    tree.end(Some(rustix::process::Signal::TERM), false, Duration::from_millis(300)).unwrap();
    assert!(wait_until(|| with_tag(&tag).is_empty()), "left behind: {:?}", with_tag(&tag));
    if let Some(c) = &tree.cgroup {
        assert!(!c.path.exists(), "the cgroup was not removed");
    }
}

#[test]
fn a_cgroup_holds_a_process_that_left_the_group() {
    if !root() || !cgroups_available() {
        return; // the process-group fallback cannot see a setsid() child: said in the module
    }
    let mut cmd = stubborn("fsarena-contain-setsid");
    let prepared = prepare(&mut cmd, Setup::default());
    let mut child = cmd.spawn().unwrap();
    let tree = prepared.started(child.id());
    assert!(tree.cgroup.is_some());
    assert!(wait_until(|| tree.members().len() >= 3), "{:?}", tree.members());
    tree.end(Some(rustix::process::Signal::TERM), true, Duration::from_millis(200)).unwrap();
    let _ = child.wait();
    assert!(tree.members().is_empty());
    assert!(with_tag("sleep 1002").is_empty(), "the setsid() child escaped");
}

#[test]
fn an_account_and_an_ipc_namespace_are_applied_before_exec() {
    if !root() {
        return;
    }
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "id -u; id -G; readlink /proc/self/ns/ipc"]).stdout(Stdio::piped());
    let prepared = prepare(&mut cmd, Setup { account: Some((65534, 65534)), own_ipc: true });
    let child = cmd.spawn().unwrap();
    let tree = prepared.started(child.id());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "65534", "{text}");
    assert_eq!(lines[1], "65534", "supplementary groups kept: {text}");
    assert_ne!(lines[2], std::fs::read_link("/proc/self/ns/ipc").unwrap().to_string_lossy(), "{text}");
    tree.end(None, false, Duration::ZERO).unwrap();
}

fn wait_until(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn without_a_cgroup_the_process_group_is_ended_whether_or_not_its_leader_lives() {
    let tag = format!("fsarena-contain-pg-{}", std::process::id());
    let mut cmd = stubborn(&tag);
    let prepared = prepare(&mut cmd, Setup::default());
    let mut child = cmd.spawn().unwrap();
    let tree = prepared.started(child.id());
    let group = Tree { cgroup: None, ..tree.clone() };
    assert!(wait_until(|| group.members().len() >= 2), "{:?}", group.members());
    let _ = child.kill();
    let _ = child.wait();
    assert!(!with_tag(&tag).is_empty());
    group.end(Some(rustix::process::Signal::TERM), false, Duration::from_millis(300)).unwrap();
    assert!(wait_until(|| with_tag(&tag).is_empty()), "left behind: {:?}", with_tag(&tag));
    // The setsid() child left the group: only the cgroup, where there is one, still holds it.
    tree.end(None, false, Duration::ZERO).unwrap();
}

/// A cgroup `name` made by hand inside `parent` holding a fresh `sleep` (not through the run
/// scope: that is process-wide, and other tests start trees meanwhile).
fn cgroup_with_sleep(parent: &std::path::Path, name: &str) -> (Cgroup, std::process::Child) {
    let path = parent.join(name);
    std::fs::create_dir(&path).unwrap();
    let child = Command::new("sleep").arg("1004").spawn().unwrap();
    std::fs::write(path.join("cgroup.procs"), child.id().to_string()).unwrap();
    (Cgroup { id: Identity::of_path(&path).unwrap(), path }, child)
}

#[test]
fn the_runs_cgroup_ends_what_no_resource_records_first_and_everything_last() {
    if !root() || !cgroups_available() {
        return;
    }
    let run = format!("contain-test-{}", std::process::id());
    let path = own_cgroup_dir().unwrap().join(format!("fsarena-{run}"));
    std::fs::create_dir(&path).unwrap();
    let scope = Cgroup { id: Identity::of_path(&path).unwrap(), path };
    let (daemon, mut daemon_child) = cgroup_with_sleep(&scope.path, "tree-0");
    let (_, mut client_child) = cgroup_with_sleep(&scope.path, "tree-1");
    scope.end_unrecorded(&[&daemon]);
    let client_status = client_child.wait().unwrap();
    assert!(!client_status.success(), "the unrecorded client was not ended");
    assert!(matches!(daemon_child.try_wait(), Ok(None)), "the recorded daemon was ended before its turn");
    assert!(scope.end_all().unwrap());
    assert!(!daemon_child.wait().unwrap().success());
    assert!(!scope.path.exists());
    // Names a state file may give: the run's own only.
    let mount = own_cgroup_dir().unwrap();
    assert!(check_recorded(&mount.join(format!("fsarena-{run}")), &run, true).is_ok());
    assert!(check_recorded(&mount.join(format!("fsarena-{run}/tree-3")), &run, false).is_ok());
    assert!(check_recorded(&mount.join("fsarena-12-3"), &run, false).is_ok());
    for bad in [mount.join("system.slice"), mount.join(format!("fsarena-{run}/../x")), "/tmp/fsarena-1-2".into()] {
        assert!(check_recorded(&bad, &run, false).is_err() && check_recorded(&bad, &run, true).is_err(), "{bad:?}");
    }
}

#[test]
fn a_process_that_would_not_go_is_named_with_what_it_holds() {
    let dir = std::env::temp_dir().join(format!("fsarena-contain-holds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("held"), b"x").unwrap();
    let mut child = Command::new("sh")
        .args(["-c", "exec 7<held; exec sleep 1004"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let held = dir.join("held").display().to_string();
    // The shell holds the file before it becomes sleep: wait for both, or the name is still "sh".
    let named = format!("{} (sleep)", child.id());
    assert!(
        wait_until(|| {
            let text = describe(child.id());
            text.contains(&held) && text.starts_with(&named)
        }),
        "{}",
        describe(child.id())
    );
    assert!(describe(child.id()).contains(&dir.display().to_string()));
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
