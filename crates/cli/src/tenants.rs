//! The runner's side of server workloads ([`fsarena_workload::server::Host`]): one per
//! target, it turns what a workload creates for its server — run directories under
//! /run/fsarena/RUNID, the server process, data directories in the target — into state-file
//! records, undoes them when the workload releases them, and releases whatever is left when
//! the target is torn down, before it is unmounted.

use fsarena_target::safefs::Identity;
use fsarena_target::{Resource, UndoMode, Workdir};
use fsarena_workload::server::{Host, Tenant};
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

/// The tenants of one target.
#[derive(Debug)]
pub struct TargetHost<'w> {
    workdir: &'w Workdir,
    run_dir: PathBuf,
    /// What was recorded and not released yet, oldest first, with its state-file record
    /// (none for a data directory, which lives in the target).
    held: Mutex<Vec<(Tenant, Option<Resource>)>>,
}

impl<'w> TargetHost<'w> {
    /// Tenants in `run_dir` (the run's directory under /run/fsarena), recorded in `workdir`'s
    /// state file.
    pub fn new(workdir: &'w Workdir, run_dir: &Path) -> Self {
        Self { workdir, run_dir: run_dir.to_path_buf(), held: Mutex::new(Vec::new()) }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<(Tenant, Option<Resource>)>> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Releases everything still held, newest first (servers before the directories they
    /// use); the first error is returned, the rest still tried.
    pub fn release_all(&self) -> Result<(), String> {
        let all: Vec<Tenant> = self.held().iter().rev().map(|(t, _)| t.clone()).collect();
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
            Tenant::RunDir(path) => {
                let id = Identity::of_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
                Some(Resource::Dir { path: path.clone(), id, recursive: true })
            }
            Tenant::DataDir(_) => None,
            Tenant::Server { pid, start_time, stop_signal, cgroup } => Some(Resource::Server {
                pid: *pid,
                start_time: *start_time,
                stop_signal: *stop_signal,
                cgroup: cgroup.clone(),
            }),
        };
        if let Some(r) = &resource {
            self.workdir.record(r).map_err(|e| e.to_string())?;
        }
        self.held().push((tenant.clone(), resource));
        Ok(())
    }

    fn release(&self, tenant: &Tenant) -> Result<(), String> {
        let Some(index) = self.held().iter().position(|(t, _)| t == tenant) else { return Ok(()) };
        let (_, resource) = self.held()[index].clone();
        match (&resource, tenant) {
            (Some(r), _) => {
                self.workdir.undo(std::slice::from_ref(r), UndoMode::Teardown).map_err(|e| e.to_string())?;
            }
            (None, Tenant::DataDir(path)) => match std::fs::remove_dir_all(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {}: {e}", path.display())),
            },
            (None, _) => {}
        }
        self.held().retain(|(t, _)| t != tenant);
        Ok(())
    }
}
