//! The runner's side of server workloads ([`fsarena_workload::host::Host`]): one per
//! target, it turns what a workload creates for its server — run directories under
//! /run/fsarena/RUNID, the server process, data directories in the target — into state-file
//! records, undoes them when the workload releases them, and releases whatever is left when
//! the target is torn down, before it is unmounted.

use fsarena_target::safefs::{remove_dir_if, DirRemoval};
use fsarena_target::{Resource, UndoMode, Workdir};
use fsarena_workload::host::{Host, Tenant};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Refuses a FUSE mount under `root` that lacks `allow_other`: the kernel then lets no
/// account but the mounting one (root) in, so a server running as its own account could not
/// reach its data. fsarena mounts fuse2fs with it; a `fuse:` command must pass it itself.
pub fn check_fuse_allows_others(label: &str, root: &Path) -> Result<(), String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mounts = fsarena_target::sys::mounts();
    let Some(m) = mounts
        .iter()
        .rev()
        .filter(|m| root.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
    else {
        return Ok(());
    };
    let fuse = m.fstype == "fuse" || m.fstype.starts_with("fuse.");
    let allowed = m.super_options.split(',').chain(m.mount_options.split(',')).any(|o| o == "allow_other");
    if fuse && !allowed {
        return Err(format!(
            "{label}: its FUSE mount at {} lacks allow_other, so the server's account cannot reach its data: mount it with -o allow_other (a server workload runs as postgres, mysql or www-data)",
            m.mount_point.display()
        ));
    }
    Ok(())
}

/// A tenant held by a [`TargetHost`]: its record in the state file (none for a data
/// directory, which lives in the target) and, for a data directory, whether it was loaded.
#[derive(Debug, Clone)]
struct Held {
    tenant: Tenant,
    resource: Option<Resource>,
    loaded: bool,
}

/// The tenants of one target.
#[derive(Debug)]
pub struct TargetHost<'w> {
    workdir: &'w Workdir,
    run_dir: PathBuf,
    /// What was recorded and not released yet, oldest first.
    held: Mutex<Vec<Held>>,
}

impl<'w> TargetHost<'w> {
    /// Tenants in `run_dir` (the run's directory under /run/fsarena), recorded in `workdir`'s
    /// state file.
    pub fn new(workdir: &'w Workdir, run_dir: &Path) -> Self {
        Self { workdir, run_dir: run_dir.to_path_buf(), held: Mutex::new(Vec::new()) }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Held>> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Releases everything still held, newest first (servers before the directories they
    /// use); the first error is returned, the rest still tried.
    pub fn release_all(&self) -> Result<(), String> {
        let all: Vec<Tenant> = self.held().iter().rev().map(|h| h.tenant.clone()).collect();
        let mut first = Ok(());
        for t in all {
            if let Err(e) = self.release(&t) {
                first = first.and(Err(e));
            }
        }
        first
    }
}

impl Host for TargetHost<'_> {
    fn run_path(&self, what: &str) -> PathBuf {
        self.run_dir.join(format!("{}-{what}", self.workdir.run_id()))
    }

    fn record(&self, tenant: &Tenant) -> Result<(), String> {
        let resource = match tenant {
            Tenant::RunDir { path, id } => Some(Resource::Dir { path: path.clone(), id: *id, recursive: true }),
            Tenant::DataDir { .. } => None,
            Tenant::Server { pid, start_time, stop_signal, cgroup } => Some(Resource::Server {
                pid: *pid,
                start_time: *start_time,
                stop_signal: *stop_signal,
                cgroup: cgroup.clone(),
            }),
            Tenant::Client { pid, start_time, cgroup } => {
                Some(Resource::Process { pid: *pid, start_time: *start_time, cgroup: cgroup.clone() })
            }
        };
        if let Some(r) = &resource {
            self.workdir.record(r).map_err(|e| e.to_string())?;
        }
        self.held().push(Held { tenant: tenant.clone(), resource, loaded: false });
        Ok(())
    }

    fn release(&self, tenant: &Tenant) -> Result<(), String> {
        let Some(held) = self.held().iter().find(|h| h.tenant == *tenant).cloned() else { return Ok(()) };
        match (&held.resource, tenant) {
            (Some(r), _) => {
                self.workdir.undo(std::slice::from_ref(r), UndoMode::Teardown).map_err(|e| e.to_string())?;
            }
            // Its server's account owns it and all in it: removed beneath it without following
            // a link, staying on its mount, and only while it is still the directory made.
            (None, Tenant::DataDir { path, id }) => match remove_dir_if(path, *id, true) {
                Ok(DirRemoval::Removed | DirRemoval::NotOurs) => {}
                Ok(DirRemoval::NotEmpty) => {
                    return Err(format!("cannot remove {}: something kept writing into it", path.display()))
                }
                Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
            },
            (None, _) => {}
        }
        self.held().retain(|h| h.tenant != *tenant);
        Ok(())
    }

    fn data_dir(&self, path: &Path) -> Option<(Tenant, bool)> {
        self.held()
            .iter()
            .find(|h| matches!(&h.tenant, Tenant::DataDir { path: p, .. } if p == path))
            .map(|h| (h.tenant.clone(), h.loaded))
    }

    fn mark_loaded(&self, tenant: &Tenant) {
        for h in self.held().iter_mut().filter(|h| h.tenant == *tenant) {
            h.loaded = true;
        }
    }
}
