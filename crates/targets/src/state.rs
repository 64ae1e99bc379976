//! The state file: every resource a run creates is written down right *after* fsarena created
//! it, with what identifies it (device and inode, mount ID, the loop device's backing inode,
//! a process's start time), so that teardown — or `fsarena cleanup` after SIGKILL — undoes it
//! only while it is still that object. Something that already existed is never recorded, so
//! never undone.
//!
//! Format (`state-RUNID.jsonl`): a header line
//! `{"fsarena_state":1,"run":RUNID,"workdir":ABSOLUTE,"lock":{..}|null}`, then one
//! [`Resource`] per line, every path absolute.

use crate::contain::{Cgroup, Tree};
use crate::safefs::{self, DirRemoval, Identity};
use crate::{sys, TargetError};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The version of the state file format, in its header.
pub(crate) const STATE_VERSION: u32 = 1;

/// The first line of a state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    /// [`STATE_VERSION`].
    pub fsarena_state: u32,
    /// The run id; also in the file name.
    pub run: String,
    /// The work directory, absolute, as the run saw it.
    pub workdir: PathBuf,
    /// The `.lock` the run created (None when it used one that was there already).
    pub lock: Option<Identity>,
}

/// Something a run created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resource", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resource {
    /// A directory in the work directory: a mount point (removed if empty) or a private
    /// scratch directory such as a FUSE command's `{work}` (removed with its contents).
    Dir {
        /// Where.
        path: PathBuf,
        /// Device and inode.
        id: Identity,
        /// Remove its contents too.
        recursive: bool,
    },
    /// A file in the work directory: an image or a daemon's log.
    File {
        /// Where.
        path: PathBuf,
        /// Device and inode.
        id: Identity,
    },
    /// A loop device attached to `image`.
    Loop {
        /// `/dev/loopN`.
        device: PathBuf,
        /// The image behind it.
        image: PathBuf,
        /// The image's identity: the loop device is detached only while it is backed by it.
        image_id: Identity,
    },
    /// A mount at `path`.
    Mount {
        /// The mount point.
        path: PathBuf,
        /// The kernel's mount ID (/proc/self/mountinfo field 1).
        mount_id: u64,
        /// A FUSE mount (unmounted with fusermount3).
        fuse: bool,
    },
    /// A process fsarena started in a tree of its own (a FUSE daemon, glusterd): a process
    /// group and, where the machine allows, a cgroup ([`crate::contain`]). Undone by SIGTERM
    /// to every member, a bounded wait, then SIGKILL to every member left.
    Process {
        /// Its PID, also its process group.
        pid: u32,
        /// Its start time, so that a later process reusing the PID is never touched.
        start_time: u64,
        /// The cgroup holding its whole tree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cgroup: Option<Cgroup>,
    },
    /// A database or web server a workload started (PostgreSQL, MariaDB, nginx), recorded
    /// before fsarena waits for it to come up. Undone by its fast shutdown (`stop_signal`:
    /// SIGINT for PostgreSQL, SIGTERM for MariaDB and nginx) to the server's own PID while PID
    /// and start time still match, a bounded wait, then SIGKILL to every process of its tree
    /// (workers included, whether or not the server itself still lives).
    Server {
        /// The server's PID.
        pid: u32,
        /// Its start time (field 22 of /proc/PID/stat).
        start_time: u64,
        /// The signal that asks it for a fast shutdown.
        stop_signal: i32,
        /// The cgroup holding its whole tree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cgroup: Option<Cgroup>,
    },
    /// A directory fsarena made outside the work directory because a daemon needs it as a
    /// mount point (one of GlusterFS's directories, missing on the host, that glusterd's
    /// private namespace binds a directory of the run's own onto): removed while still that
    /// directory and empty. (A file here is one an older fsarena recorded.)
    Outside {
        /// Where.
        path: PathBuf,
        /// Device and inode.
        id: Identity,
        /// A directory (removed only when empty).
        dir: bool,
    },
    /// A GlusterFS volume fsarena created (`started: false`, undone by `volume delete`) or
    /// started (`started: true`, undone by `volume stop force`), through the glusterd that
    /// fsarena started and that listens on `socket`. When that glusterd no longer answers,
    /// there is nothing to undo: its volumes live in its working directory, removed with it.
    GlusterVolume {
        /// The volume name, `fsarena-RUNID-N`.
        name: String,
        /// fsarena's glusterd's CLI socket, in the work directory.
        socket: PathBuf,
        /// The CLI's log file, in the work directory.
        log: PathBuf,
        /// Started (else created).
        started: bool,
    },
    /// The run's cgroup `fsarena-RUNID` ([`crate::contain::open_run_scope`]): every process the
    /// run starts is in a cgroup inside it. Undone last: whatever is still in it is ended
    /// (SIGKILL) and the cgroups removed. Before anything else of a list that holds it is
    /// undone, the processes in it that no other resource of the list records (clients, a
    /// command's leftovers) are ended, so that none keeps a mount busy.
    Cgroup {
        /// Its directory in the cgroup2 hierarchy.
        path: PathBuf,
        /// That directory's identity.
        id: Identity,
    },
    /// A `dir:` target's scratch directory `fsarena-RUNID-N` in the user's directory, where
    /// workloads write. A teardown removes it only if empty (files kept with keep=1 stay);
    /// `cleanup` after a killed run removes it with everything in it.
    Scratch {
        /// Where.
        path: PathBuf,
        /// Device and inode.
        id: Identity,
    },
}

/// How long a server gets to finish its fast shutdown (a checkpoint of what it holds dirty)
/// before it is killed, at teardown and cleanup.
pub const SERVER_GRACE: Duration = Duration::from_secs(60);

/// Who is undoing, which decides how far it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UndoMode {
    /// The end of a target's use in a run.
    Teardown,
    /// A second Ctrl-C: no waiting; a mount busy only because of this process (whose
    /// workload threads are still running) is detached lazily, since the process exits next.
    Emergency,
    /// `fsarena cleanup`, after the run was killed: scratch directories go with their content.
    Cleanup,
}

fn io_error(what: &str, path: &Path, e: impl std::fmt::Display) -> TargetError {
    TargetError(format!("cannot {what} {}: {e}", path.display()))
}

impl Resource {
    /// Undoes this resource if it is still the object fsarena created; says what it did
    /// (None: it was gone already, or is not ours any more and was left alone).
    pub fn undo(&self, mode: UndoMode) -> Result<Option<String>, TargetError> {
        match self {
            Resource::Mount { path, mount_id, fuse } => {
                let table = sys::mounts();
                if !table.iter().any(|m| m.mount_id == *mount_id && m.mount_point == *path) {
                    return Ok(None);
                }
                let top = table.iter().rev().find(|m| m.mount_point == *path).map(|m| m.mount_id);
                if top != Some(*mount_id) {
                    return Err(TargetError(format!(
                        "cannot unmount {}: something else is mounted over it; unmount that first",
                        path.display()
                    )));
                }
                sys::unmount(path, *fuse, mode == UndoMode::Emergency)?;
                Ok(Some(format!("unmounted {}", path.display())))
            }
            Resource::Process { pid, start_time, cgroup } => {
                let tree = Tree::recorded(*pid, *start_time, cgroup.clone());
                if tree.members().is_empty() {
                    tree.remove_cgroup();
                    return Ok(None);
                }
                // A FUSE daemon ends by itself once its mount is gone (undone before it), and
                // may still be writing its image then (fuse2fs flushes at unmount): a signal
                // now could cut that short, so it gets a moment first.
                if mode != UndoMode::Emergency {
                    tree.wait_empty(Duration::from_secs(3));
                }
                let grace = if mode == UndoMode::Emergency { Duration::from_secs(1) } else { Duration::from_secs(5) };
                tree.end(Some(rustix::process::Signal::TERM), false, grace).map_err(TargetError)?;
                Ok(Some(format!("ended process {pid}")))
            }
            Resource::Server { pid, start_time, stop_signal, cgroup } => {
                let tree = Tree::recorded(*pid, *start_time, cgroup.clone());
                if tree.members().is_empty() {
                    tree.remove_cgroup();
                    return Ok(None);
                }
                let grace = if mode == UndoMode::Emergency { Duration::from_secs(2) } else { SERVER_GRACE };
                let signal = rustix::process::Signal::from_named_raw(*stop_signal);
                tree.end(signal, true, grace).map_err(TargetError)?;
                Ok(Some(format!("stopped server {pid}")))
            }
            Resource::Loop { device, image, image_id } => {
                if !sys::loop_backed_by(device, image, *image_id) {
                    return Ok(None);
                }
                sys::run("losetup", &["-d", &device.to_string_lossy()])?;
                // On a device still open (a filesystem just unmounted that releases it late,
                // udev's probe) the kernel only marks it to detach on last close: wait a
                // little for that, so that what follows (the image's removal, a check that
                // nothing is attached) does not race it.
                let until = std::time::Instant::now() + Duration::from_secs(3);
                while sys::loop_backed_by(device, image, *image_id) && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(Some(format!("detached {}", device.display())))
            }
            Resource::File { path, id } => match safefs::remove_file_if(path, *id) {
                Ok(true) => Ok(Some(format!("removed {}", path.display()))),
                Ok(false) => Ok(None),
                Err(e) => Err(io_error("remove", path, e)),
            },
            Resource::Dir { path, id, recursive } => remove_dir(path, *id, *recursive),
            Resource::Outside { path, id, dir: true } => remove_dir(path, *id, false),
            Resource::Outside { path, id, dir: false } => match safefs::remove_file_if(path, *id) {
                Ok(true) => Ok(Some(format!("removed {}", path.display()))),
                Ok(false) => Ok(None),
                Err(e) => Err(io_error("remove", path, e)),
            },
            Resource::GlusterVolume { name, socket, log, started } => {
                Ok(crate::gluster::undo_volume(name, socket, log, *started))
            }
            Resource::Scratch { path, id } => remove_dir(path, *id, mode != UndoMode::Teardown),
            Resource::Cgroup { path, id } => {
                let scope = Cgroup { path: path.clone(), id: *id };
                match scope.end_all().map_err(TargetError)? {
                    true => Ok(Some(format!("removed cgroup {}", path.display()))),
                    false => Ok(None),
                }
            }
        }
    }
}

fn remove_dir(path: &Path, id: Identity, recursive: bool) -> Result<Option<String>, TargetError> {
    match safefs::remove_dir_if(path, id, recursive) {
        Ok(DirRemoval::Removed) => Ok(Some(format!("removed {}", path.display()))),
        // A directory that still holds files kept with keep=1 stays, as asked.
        Ok(DirRemoval::NotOurs | DirRemoval::NotEmpty) => Ok(None),
        Err(e) => Err(io_error("remove", path, e)),
    }
}

/// What undoing a list of resources did.
#[derive(Debug, Default)]
pub struct UndoReport {
    /// One line per action.
    pub done: Vec<String>,
    /// Indexes (into the list given) of the resources that are gone now.
    pub undone: Vec<usize>,
    /// Why the rest was kept.
    pub error: Option<TargetError>,
}

/// Undoes `resources` (in the order they were created), newest first, in stretches that
/// each start at a process: within a stretch, its mounts first, newest first, so that a FUSE
/// daemon is unmounted before it is ended; then the rest, newest first, the process last.
/// Mounts made before a process stay until it is ended (a GlusterFS brick filesystem is
/// busy until the brick daemons and glusterd are gone). The first failure stops it: what was
/// created earlier (the loop device and image below a busy mount, the mount point) stays
/// recorded for `fsarena cleanup`, never pulled from under it.
pub fn undo_all(resources: &[Resource], mode: UndoMode) -> UndoReport {
    let mut report = UndoReport::default();
    let recorded: Vec<&Cgroup> = resources
        .iter()
        .filter_map(|r| match r {
            Resource::Process { cgroup, .. } | Resource::Server { cgroup, .. } => cgroup.as_ref(),
            _ => None,
        })
        .collect();
    for r in resources {
        if let Resource::Cgroup { path, id } = r {
            Cgroup { path: path.clone(), id: *id }.end_unrecorded(&recorded);
        }
    }
    let is_mount = |i: &usize| matches!(resources[*i], Resource::Mount { .. });
    let mut end = resources.len();
    while end > 0 {
        let start = resources[..end]
            .iter()
            .rposition(|r| matches!(r, Resource::Process { .. } | Resource::Server { .. }))
            .unwrap_or(0);
        // A loop device whose image is a file on a mount (the crash recorder's image on its
        // FUSE mount) is detached before that mount, which it holds busy.
        let mut order: Vec<usize> = Vec::new();
        for m in (start..end).rev().filter(is_mount) {
            if let Resource::Mount { path, .. } = &resources[m] {
                let below: Vec<usize> = (start..end)
                    .rev()
                    .filter(|&i| {
                        matches!(&resources[i], Resource::Loop { image, .. } if image.starts_with(path))
                            && !order.contains(&i)
                    })
                    .collect();
                order.extend(below);
            }
            order.push(m);
        }
        let rest: Vec<usize> = (start..end).rev().filter(|i| !order.contains(i)).collect();
        order.extend(rest);
        for i in order {
            match resources[i].undo(mode) {
                Ok(what) => {
                    report.done.extend(what);
                    report.undone.push(i);
                }
                Err(e) => {
                    report.error = Some(e);
                    return report;
                }
            }
        }
        end = start;
    }
    report
}

/// A run's state file and the resources recorded in it and not undone yet.
#[derive(Debug)]
pub(crate) struct Ledger {
    file: File,
    path: PathBuf,
    outstanding: Vec<Resource>,
}

impl Ledger {
    pub(crate) fn new(file: File, path: PathBuf) -> Self {
        Self { file, path, outstanding: Vec::new() }
    }

    fn forget(&mut self, undone: &[Resource]) {
        self.outstanding.retain(|r| !undone.contains(r));
    }

    /// Removes the state file when nothing is left to undo; else says where it is.
    fn close(&mut self) -> Option<PathBuf> {
        if self.outstanding.is_empty() {
            let _ = std::fs::remove_file(&self.path);
            None
        } else {
            Some(self.path.clone())
        }
    }
}

/// The ledger, shared by the provisioned targets and the signal handler.
#[derive(Debug, Clone)]
pub(crate) struct LedgerHandle(Arc<Mutex<Ledger>>);

impl LedgerHandle {
    pub(crate) fn new(ledger: Ledger) -> Self {
        Self(Arc::new(Mutex::new(ledger)))
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        // A panic elsewhere must not stop the teardown: the ledger is still consistent, as
        // every change to it is a single push or retain.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `resource` down durably.
    pub(crate) fn record(&self, resource: &Resource) -> Result<(), TargetError> {
        let mut line = serde_json::to_string(resource).map_err(|e| TargetError(e.to_string()))?;
        line.push('\n');
        let mut ledger = self.lock();
        ledger
            .file
            .write_all(line.as_bytes())
            .and_then(|()| ledger.file.sync_data())
            .map_err(|e| TargetError(format!("cannot write {}: {e}", ledger.path.display())))?;
        ledger.outstanding.push(resource.clone());
        Ok(())
    }

    /// Undoes those of `resources` still outstanding (another thread may have done some).
    pub(crate) fn undo(&self, resources: &[Resource], mode: UndoMode) -> UndoReport {
        let mut ledger = self.lock();
        let todo: Vec<Resource> = resources.iter().filter(|r| ledger.outstanding.contains(r)).cloned().collect();
        let report = undo_all(&todo, mode);
        let gone: Vec<Resource> = report.undone.iter().map(|&i| todo[i].clone()).collect();
        ledger.forget(&gone);
        report
    }

    /// See [`Workdir::close`](crate::Workdir::close).
    pub(crate) fn finish(&self) -> Option<PathBuf> {
        self.lock().close()
    }

    /// See [`Emergency::tear_down_then`](crate::Emergency::tear_down_then).
    pub(crate) fn tear_down_then<R>(
        &self,
        then: impl FnOnce(&[String], Option<&TargetError>, Option<&Path>) -> R,
    ) -> R {
        let mut ledger = self.lock();
        let todo = ledger.outstanding.clone();
        let report = undo_all(&todo, UndoMode::Emergency);
        let gone: Vec<Resource> = report.undone.iter().map(|&i| todo[i].clone()).collect();
        ledger.forget(&gone);
        let kept = ledger.close();
        then(&report.done, report.error.as_ref(), kept.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_format_is_stable() {
        let r = Resource::File { path: "/w/x".into(), id: Identity { dev: 1, ino: 2 } };
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"resource":"file","path":"/w/x","id":{"dev":1,"ino":2}}"#);
        let h = Header { fsarena_state: 1, run: "00ff".into(), workdir: "/w".into(), lock: None };
        assert_eq!(
            serde_json::to_string(&h).unwrap(),
            r#"{"fsarena_state":1,"run":"00ff","workdir":"/w","lock":null}"#
        );
        // An old-format line (no identity) is not a resource of this version.
        assert!(serde_json::from_str::<Resource>(r#"{"resource":"file","path":"/w/x"}"#).is_err());
        assert!(serde_json::from_str::<Resource>(r#"{"resource":"file","path":"/w/x","id":{"dev":1,"ino":2},"x":1}"#)
            .is_err());
    }

    #[test]
    fn mounts_made_before_a_process_are_undone_after_it() {
        let id = Identity { dev: 1, ino: 2 };
        let mount = |p: &str| Resource::Mount { path: PathBuf::from(p), mount_id: u64::MAX, fuse: false };
        // A brick mount, glusterd, a file, a client mount: the client first, the brick last.
        let resources = [
            mount("/nonexistent/brick"),
            Resource::Process { pid: std::process::id(), start_time: 1, cgroup: None },
            Resource::File { path: "/nonexistent/f".into(), id },
            mount("/nonexistent/client"),
        ];
        let report = undo_all(&resources, UndoMode::Cleanup);
        assert!(report.error.is_none(), "{report:?}");
        assert_eq!(report.undone, [3, 2, 1, 0]);
    }

    #[test]
    fn undo_skips_what_is_no_longer_the_object_created() {
        let dir = std::env::temp_dir().join(format!("fsarena-h1-undo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (_, id) = safefs::create_new_file(&dir.join("image.img")).unwrap();
        let recorded = Resource::File { path: dir.join("image.img"), id };
        // Replaced by another file with the same name: left alone.
        std::fs::remove_file(dir.join("image.img")).unwrap();
        std::fs::write(dir.join("other"), b"keep").unwrap();
        std::fs::write(dir.join("image.img"), b"someone else's").unwrap();
        let report = undo_all(std::slice::from_ref(&recorded), UndoMode::Cleanup);
        assert!(report.error.is_none() && report.done.is_empty(), "{report:?}");
        assert_eq!(std::fs::read(dir.join("image.img")).unwrap(), b"someone else's");
        // A mount or loop device that is not there: nothing to do, no error.
        let gone = [
            Resource::Mount { path: dir.join("mnt"), mount_id: u64::MAX, fuse: false },
            Resource::Loop { device: "/dev/loop999999".into(), image: dir.join("image.img"), image_id: id },
            Resource::Process { pid: std::process::id(), start_time: 1, cgroup: None },
            // This process, but not started then: never signalled (SIGTERM would end the test).
            Resource::Server { pid: std::process::id(), start_time: 1, stop_signal: 15, cgroup: None },
        ];
        let report = undo_all(&gone, UndoMode::Cleanup);
        assert!(report.error.is_none() && report.done.is_empty() && report.undone.len() == 4, "{report:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
