//! The seam between a server workload (`pgbench`, `sysbench`, `http`, in fsarena-db) and the
//! runner: what a server workload creates that must not outlive the run ([`Tenant`]), and the
//! [`Host`] that records it and releases it when the target is torn down.

use fsarena_target::safefs::Identity;
use std::path::{Path, PathBuf};

/// Something a server workload creates that must not outlive the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tenant {
    /// A run directory (a server's, or fsarena's own for the round) under the run's directory
    /// in /run/fsarena, just created: recorded in the state file, removed with its contents
    /// while still that directory.
    RunDir {
        /// Its path.
        path: PathBuf,
        /// Its device and inode.
        id: Identity,
    },
    /// A data directory in the target, just created: kept for the rounds and sweep points
    /// that reuse it, removed with its contents (while still that directory) when the target
    /// is torn down (it goes with the target anyway on an image or tmpfs; a `dir:` target's
    /// scratch directory holds it).
    DataDir {
        /// Its path.
        path: PathBuf,
        /// Its device and inode.
        id: Identity,
    },
    /// A server process the workload just spawned.
    Server {
        /// Its PID.
        pid: u32,
        /// Its start time, field 22 of /proc/PID/stat.
        start_time: u64,
        /// The signal of its fast shutdown.
        stop_signal: i32,
        /// The cgroup holding it and every process it starts (None: its process group).
        cgroup: Option<fsarena_target::contain::Cgroup>,
    },
    /// A client program (pgbench, sysbench, ab) the workload just spawned.
    Client {
        /// Its PID.
        pid: u32,
        /// Its start time, field 22 of /proc/PID/stat.
        start_time: u64,
        /// The cgroup holding it and every process it starts (None: its process group).
        cgroup: Option<fsarena_target::contain::Cgroup>,
    },
}

/// What the runner lends a server workload: the run's directory under /run/fsarena, its
/// state file, and a memory that outlives a round. Implemented by the runner per target: what
/// is recorded and not released by the workload is released when the target is torn down,
/// before it is unmounted — the seam that lets a data directory outlive one round and serve
/// every round and sweep point with the same server keys.
pub trait Host: Sync {
    /// `RUN/RUNID-what`: a path for a run directory in the run's directory under
    /// /run/fsarena (0711, root's), named as the state file's confinement expects.
    fn run_path(&self, what: &str) -> PathBuf;
    /// Writes down `tenant`, just created.
    fn record(&self, tenant: &Tenant) -> Result<(), String>;
    /// Undoes `tenant` if still outstanding (stops the process tree, removes the directory)
    /// and forgets it.
    fn release(&self, tenant: &Tenant) -> Result<(), String>;
    /// The data directory recorded at `path` and not released, and whether
    /// [`Host::mark_loaded`] said it is loaded.
    fn data_dir(&self, path: &Path) -> Option<(Tenant, bool)>;
    /// Marks the recorded data directory `tenant` as loaded completely. fsarena's own memory,
    /// never a file in the directory, which its server's account could replace by a link.
    fn mark_loaded(&self, tenant: &Tenant);
}

/// A round that failed: why, and what it measured before.
pub type Failed = Box<(String, fsarena_core::Measurement)>;
