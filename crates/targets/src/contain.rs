//! Every process fsarena starts dies with its whole tree. A daemon (a FUSE command, glusterd),
//! a server (PostgreSQL, MariaDB, nginx) or a load generator is started in a cgroup v2 of its
//! own (`fsarena-PID-N` beside fsarena's own cgroup) and in a process group of its own. A
//! process cannot leave a cgroup without write access to another one's `cgroup.procs`, which
//! the accounts fsarena hands servers to do not have, so the cgroup holds every descendant,
//! also one that forked away from its parent or called setsid(). Ending it is: the polite
//! signal (to the leader, or to the group), a bounded wait, then SIGKILL to every member
//! (`cgroup.kill`), whether or not the leader still lives; the empty cgroup is removed.
//!
//! Where no cgroup v2 hierarchy can be written (no cgroup2 mount, a read-only one), the
//! process group is the container: the same sequence by `kill(-pgid)`, escalated while any
//! member of the group lives (a group ID cannot be reused while a member exists), which a
//! process that calls setsid() escapes. [`Tree::cgroup`] says which one holds a tree.

use crate::safefs::Identity;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A cgroup fsarena created, as recorded in the state file: removed (when empty) only while
/// its directory is still that inode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cgroup {
    /// Its directory in the cgroup2 hierarchy.
    pub path: PathBuf,
    /// That directory's identity.
    pub id: Identity,
}

/// The process tree of one process fsarena started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The first process: the process group's ID.
    pub leader: u32,
    /// Its start time (field 22 of /proc/PID/stat).
    pub start_time: u64,
    /// The cgroup holding every process of the tree (None: the process group alone).
    pub cgroup: Option<Cgroup>,
}

/// What [`prepare`] sets up in the child between fork and exec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setup {
    /// Run as this account (uid, gid), with no supplementary groups.
    pub account: Option<(u32, u32)>,
    /// In an IPC namespace of its own: System V shared memory and semaphores it makes go
    /// when its last process does, so a killed server leaks none (PostgreSQL).
    pub own_ipc: bool,
}

/// A cgroup made for a process about to be started, and the descriptor of its
/// `cgroup.procs`, which the child writes itself into.
#[derive(Debug)]
pub struct Prepared {
    cgroup: Option<(Cgroup, OwnedFd)>,
}

/// The cgroup2 directory fsarena itself is in: the cgroup2 mount point joined with the path
/// /proc/self/cgroup gives for hierarchy 0.
fn own_cgroup_dir() -> Option<PathBuf> {
    let mount = crate::sys::mounts().into_iter().find(|m| m.fstype == "cgroup2")?.mount_point;
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(own.trim_start_matches('/')))
}

/// The cgroup of the run in progress, under which each tree's cgroup is made. One run per
/// process, so one scope per process; but a test binary runs many tests at once, each opening
/// its own run (and a test's cleanup ending its scope would end another test's trees made in
/// it): there each thread (each test) has its own.
#[cfg(not(test))]
static RUN_SCOPE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

#[cfg(test)]
thread_local! {
    static TEST_SCOPE: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` on the current run scope (the process's; the thread's in tests).
fn with_run_scope<T>(f: impl FnOnce(&mut Option<PathBuf>) -> T) -> T {
    #[cfg(not(test))]
    return f(&mut RUN_SCOPE.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    #[cfg(test)]
    return TEST_SCOPE.with(|s| f(&mut s.borrow_mut()));
}

fn run_scope() -> Option<PathBuf> {
    with_run_scope(|s| s.clone())
}

/// Makes the cgroup `fsarena-RUNID` of a run, beside fsarena's own, under which every tree
/// started from now on gets its cgroup; None where cgroups cannot be made here. Whatever a
/// workload starts, also a process not recorded on its own (a client, a command's
/// descendant that left its process group), is then inside it: ending it ends them all.
pub fn open_run_scope(run: &str) -> Option<Cgroup> {
    if std::env::var_os("FSARENA_NO_CGROUP").is_some() {
        return None;
    }
    let path = own_cgroup_dir()?.join(format!("fsarena-{run}"));
    std::fs::create_dir(&path).ok()?;
    match Identity::of_path(&path) {
        Ok(id) => {
            with_run_scope(|s| *s = Some(path.clone()));
            Some(Cgroup { path, id })
        }
        Err(_) => {
            let _ = std::fs::remove_dir(&path);
            None
        }
    }
}

/// Forgets the run's cgroup as the place for new trees (the run is ending).
pub fn close_run_scope(scope: &Cgroup) {
    with_run_scope(|current| {
        if current.as_deref() == Some(scope.path.as_path()) {
            *current = None;
        }
    });
}

/// Makes a fresh cgroup for one tree (in the run's cgroup when there is one), or None where
/// that cannot be done here.
fn new_cgroup() -> Option<(Cgroup, OwnedFd)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if std::env::var_os("FSARENA_NO_CGROUP").is_some() {
        return None;
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = match run_scope() {
        Some(scope) => scope.join(format!("tree-{n}")),
        None => own_cgroup_dir()?.join(format!("fsarena-{}-{n}", std::process::id())),
    };
    std::fs::create_dir(&path).ok()?;
    let opened = Identity::of_path(&path).and_then(|id| {
        let procs = std::fs::OpenOptions::new().write(true).open(path.join("cgroup.procs"))?;
        Ok((id, OwnedFd::from(procs)))
    });
    match opened {
        Ok((id, fd)) => Some((Cgroup { path, id }, fd)),
        Err(_) => {
            let _ = std::fs::remove_dir(&path);
            None
        }
    }
}

/// Readies `cmd` to start in a tree of its own: a new process group, a new cgroup when the
/// machine allows, and `setup`. Uid and gid must be set here, not with `Command::uid`: the
/// child joins its cgroup and namespaces first, while it is still root.
pub fn prepare(cmd: &mut Command, setup: Setup) -> Prepared {
    let cgroup = new_cgroup();
    let procs = cgroup.as_ref().map(|(_, fd)| fd.as_raw_fd());
    cmd.process_group(0);
    // SAFETY: the closure makes raw system calls only (write, unshare, setgroups, setgid,
    // setuid), which are async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if let Some(fd) = procs {
                // "0" is the writer itself.
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(fd);
            }
            if setup.own_ipc && libc::unshare(libc::CLONE_NEWIPC) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((uid, gid)) = setup.account {
                if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Prepared { cgroup }
}

/// Readies a process about to be forked, not started from a `Command` (the crash recorder's
/// FUSE server): a cgroup when the machine allows; the child calls [`Prepared::enter`].
pub fn prepare_fork() -> Prepared {
    Prepared { cgroup: new_cgroup() }
}

impl Prepared {
    /// In the child of a fork (before anything else): joins the cgroup made for it and a
    /// process group of its own, as [`prepare`]'s command does. Raw system calls only, safe
    /// after a fork; then closes the cgroup's descriptor.
    pub fn enter(&self) {
        // SAFETY: write, close and setpgid on a descriptor this process owns, no allocation.
        unsafe {
            if let Some((_, fd)) = &self.cgroup {
                let _ = libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1);
                libc::close(fd.as_raw_fd());
            }
            libc::setpgid(0, 0);
        }
    }

    /// The tree of the child just spawned from the command, `leader` its PID. Read its start
    /// time before the child can be reaped.
    pub fn started(self, leader: u32) -> Tree {
        let start_time = crate::sys::process_start_time(leader).unwrap_or(0);
        Tree { leader, start_time, cgroup: self.cgroup.map(|(c, _)| c) }
    }

    /// The spawn failed: the cgroup made for it goes.
    pub fn abandon(self) {
        if let Some((c, _)) = self.cgroup {
            let _ = std::fs::remove_dir(&c.path);
        }
    }
}

/// A member of a tree that would not go, for messages: what it is, where in the kernel it
/// waits and what it holds open, `1234 (dd) waiting in blk_mq_get_tag, holding /dev/loop3`.
fn describe(pid: u32) -> String {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let mut out = format!("{pid} ({})", fsarena_core::printable(comm.trim_end()));
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    if !wchan.is_empty() && wchan != "0" {
        out.push_str(&format!(" waiting in {}", fsarena_core::printable(&wchan)));
    }
    let held = holdings(pid);
    if !held.is_empty() {
        out.push_str(&format!(", holding {}", held.join(" ")));
    }
    out
}

/// The files and directories `pid` holds open and its working directory (paths, not pipes
/// or sockets), at most 6, for messages.
fn holdings(pid: u32) -> Vec<String> {
    let mut links: Vec<PathBuf> = vec![PathBuf::from(format!("/proc/{pid}/cwd"))];
    let mut fds: Vec<(u32, PathBuf)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
        .collect();
    fds.sort();
    links.extend(fds.into_iter().map(|(_, p)| p));
    let mut out: Vec<String> = Vec::new();
    for link in links {
        let Ok(target) = std::fs::read_link(&link) else { continue };
        let shown = fsarena_core::printable(&target.to_string_lossy()).into_owned();
        let boring = shown == "/" || shown == "/dev/null" || !shown.starts_with('/');
        if !boring && !out.contains(&shown) {
            out.push(shown);
        }
        if out.len() == 6 {
            break;
        }
    }
    out
}

/// (state, pgrp, start time) of a process, from /proc/PID/stat.
fn stat_of(pid: u32) -> Option<(char, u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split(' ').collect();
    Some((f.first()?.chars().next()?, f.get(2)?.parse().ok()?, f.get(19)?.parse().ok()?))
}

impl Tree {
    /// A tree as recorded in a state file.
    pub fn recorded(leader: u32, start_time: u64, cgroup: Option<Cgroup>) -> Self {
        Self { leader, start_time, cgroup }
    }

    /// True while the cgroup directory is still the one fsarena made.
    fn cgroup_is_ours(&self) -> Option<&Cgroup> {
        self.cgroup.as_ref().filter(|c| Identity::of_path(&c.path).ok() == Some(c.id))
    }

    /// The live (not zombie) processes of the tree.
    pub fn members(&self) -> Vec<u32> {
        if let Some(c) = self.cgroup_is_ours() {
            let text = std::fs::read_to_string(c.path.join("cgroup.procs")).unwrap_or_default();
            return text
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .filter(|&pid| stat_of(pid).is_some_and(|(state, _, _)| state != 'Z' && state != 'X'))
                .collect();
        }
        // The process group: members started no earlier than its leader (a group ID is not
        // reused while a member lives; the start time guards the rest).
        let mut out = Vec::new();
        if self.leader == 0 {
            return out;
        }
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if let Some((state, pgrp, start)) = stat_of(pid) {
                if pgrp == self.leader && state != 'Z' && state != 'X' && start >= self.start_time {
                    out.push(pid);
                }
            }
        }
        out
    }

    /// True while the leader is the process started at the recorded time and has not exited.
    pub fn leader_alive(&self) -> bool {
        crate::sys::process_running(self.leader, self.start_time)
    }

    /// Sends `signal` to every member.
    pub fn signal_all(&self, signal: rustix::process::Signal) {
        use rustix::process::{kill_process, Pid};
        for pid in self.members() {
            if let Some(p) = Pid::from_raw(pid as i32) {
                let _ = kill_process(p, signal);
            }
        }
    }

    /// Sends `signal` to the leader alone (a server's own fast shutdown), if it still runs.
    pub fn signal_leader(&self, signal: rustix::process::Signal) {
        if self.leader_alive() {
            if let Some(p) = rustix::process::Pid::from_raw(self.leader as i32) {
                let _ = rustix::process::kill_process(p, signal);
            }
        }
    }

    /// Waits up to `limit` for every member to be gone; true when they are.
    pub fn wait_empty(&self, limit: Duration) -> bool {
        let (deadline, mut backoff) = (Instant::now() + limit, crate::sys::Backoff::new());
        loop {
            if self.members().is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            backoff.pause();
        }
    }

    /// SIGKILL to every member (`cgroup.kill` where there is one), then a bounded wait.
    fn kill_all(&self) -> bool {
        if let Some(c) = self.cgroup_is_ours() {
            let killed = std::fs::OpenOptions::new()
                .write(true)
                .open(c.path.join("cgroup.kill"))
                .and_then(|mut f| f.write_all(b"1"));
            if killed.is_err() {
                self.signal_all(rustix::process::Signal::KILL);
            }
        } else {
            self.signal_all(rustix::process::Signal::KILL);
        }
        // A process killed while blocked in the kernel (on a FUSE mount whose daemon is gone,
        // say) takes a moment to go; new members forked meanwhile are killed on the next pass.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if self.wait_empty(Duration::from_millis(200)) {
                return true;
            }
            self.signal_all(rustix::process::Signal::KILL);
        }
        false
    }

    /// Ends the whole tree: `polite` (None: straight to SIGKILL) sent to the leader alone
    /// (`to_leader`, a server's fast shutdown) or to every member, up to `grace` for them all
    /// to exit, then SIGKILL to every member whether or not the leader still lives; the empty
    /// cgroup is removed. An error names the processes that would not go.
    pub fn end(&self, polite: Option<rustix::process::Signal>, to_leader: bool, grace: Duration) -> Result<(), String> {
        match polite {
            // A server whose own process is gone has nobody left to shut its workers down.
            Some(_) if to_leader && !self.leader_alive() => {}
            Some(signal) => {
                match to_leader {
                    true => self.signal_leader(signal),
                    false => self.signal_all(signal),
                }
                // A process stopped (SIGSTOP, by the account it runs as, say) would sit on the
                // signal for the whole grace: every member goes on, to act on it.
                self.signal_all(rustix::process::Signal::CONT);
                self.wait_empty(grace);
            }
            None => {}
        }
        let gone = self.members().is_empty() || self.kill_all();
        self.remove_cgroup();
        if gone {
            return Ok(());
        }
        let left: Vec<String> = self.members().into_iter().map(describe).collect();
        Err(format!("process {} still alive after SIGKILL (blocked in the kernel)", left.join("; ")))
    }

    /// Removes the cgroup if it is empty and still ours. The kernel may still count a process
    /// that has just exited (EBUSY for a moment after its last member went): retried for up to
    /// a second, as empty cgroups left behind accumulated (about 7 a run of tests/hosts.rs, each
    /// a run's scope holding an empty `tree-0`, its FUSE daemon's).
    pub fn remove_cgroup(&self) {
        if let Some(c) = self.cgroup_is_ours() {
            let (deadline, mut backoff) = (Instant::now() + Duration::from_secs(1), crate::sys::Backoff::new());
            while let Err(e) = std::fs::remove_dir(&c.path) {
                if e.raw_os_error() != Some(libc::EBUSY) || Instant::now() >= deadline {
                    break;
                }
                backoff.pause();
            }
        }
    }
}

impl Cgroup {
    /// True while its directory is still the one fsarena made.
    fn is_ours(&self) -> bool {
        Identity::of_path(&self.path).ok() == Some(self.id)
    }

    /// The cgroups directly inside it.
    fn children(&self) -> Vec<PathBuf> {
        let entries = std::fs::read_dir(&self.path).into_iter().flatten().flatten();
        entries.filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
    }

    /// Ends every process in the run's cgroup whose tree is not among `recorded` (those are
    /// ended in their turn, a FUSE daemon after its mount): clients, a command's leftovers.
    pub fn end_unrecorded(&self, recorded: &[&Cgroup]) {
        if !self.is_ours() {
            return;
        }
        for child in self.children() {
            if recorded.iter().any(|r| r.path == child) {
                continue;
            }
            let Ok(id) = Identity::of_path(&child) else { continue };
            let tree = Tree { leader: 0, start_time: 0, cgroup: Some(Cgroup { path: child, id }) };
            let _ = tree.end(None, false, Duration::ZERO);
        }
    }

    /// Ends every process left in the run's cgroup and removes it with the cgroups inside.
    /// An error names the processes that would not go.
    pub fn end_all(&self) -> Result<bool, String> {
        if !self.is_ours() {
            return Ok(false);
        }
        let tree = Tree { leader: 0, start_time: 0, cgroup: Some(self.clone()) };
        let mut first = Ok(());
        for child in self.children() {
            let Ok(id) = Identity::of_path(&child) else { continue };
            let inner = Tree { leader: 0, start_time: 0, cgroup: Some(Cgroup { path: child, id }) };
            first = first.and(inner.end(None, false, Duration::ZERO));
        }
        first.and(tree.end(None, false, Duration::ZERO))?;
        Ok(!self.path.exists())
    }
}

/// Checks that a cgroup named in a state file of run `run` is one fsarena makes: in a cgroup2
/// mount, named `fsarena-RUN` (the run's, `scope`), or `tree-N` inside that, or
/// `fsarena-PID-N` (a tree made outside any run). A state file never gets fsarena to end the
/// processes of another cgroup.
pub fn check_recorded(path: &std::path::Path, run: &str, scope: bool) -> Result<(), String> {
    use std::path::Component;
    let shown = || fsarena_core::printable(&path.to_string_lossy()).into_owned();
    let plain = path.is_absolute() && path.components().skip(1).all(|c| matches!(c, Component::Normal(_)));
    let in_cgroup2 = crate::sys::mounts().iter().any(|m| m.fstype == "cgroup2" && path.starts_with(&m.mount_point));
    let name = |p: &std::path::Path| p.file_name().and_then(|n| n.to_str()).map(str::to_string).unwrap_or_default();
    let numbered = |n: &str, prefix: &str| {
        n.strip_prefix(prefix).is_some_and(|rest| {
            !rest.is_empty() && rest.split('-').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let scope_name = format!("fsarena-{run}");
    let ok = plain
        && in_cgroup2
        && match scope {
            true => name(path) == scope_name,
            false => {
                (numbered(&name(path), "tree-") && path.parent().is_some_and(|p| name(p) == scope_name))
                    || numbered(&name(path), "fsarena-")
            }
        };
    match ok {
        true => Ok(()),
        false => Err(format!("{} is not a cgroup run {run} makes", shown())),
    }
}

/// True when fsarena can make cgroups here (else process groups hold the trees).
pub fn cgroups_available() -> bool {
    match new_cgroup() {
        Some((c, _)) => {
            let _ = std::fs::remove_dir(&c.path);
            true
        }
        None => false,
    }
}

#[cfg(test)]
#[path = "contain_tests.rs"]
mod tests;
