//! Workloads: what runs inside a target. Each returns a [`Measurement`]; none prints or
//! stores anything.
//!
//! This crate is what every family builds on: the [`Workload`] trait, [`RunEnv`], the option
//! tables' machinery, the phase runner and its [`phase::OpTimer`], [`Finish`], the registry's
//! types, and reading back what a target serves. The kinds live in the family crates
//! (fsarena-io, -meta, -apps, -db, -posix, -crash), each listed once in fsarena-kinds.

pub mod errno;
pub mod footprint;
pub mod gate;
pub mod host;
pub mod live;
pub mod names;
pub mod options;
pub mod phase;
pub mod plain;
pub mod programs;
pub mod registry;
pub mod served;

pub use footprint::{Footprint, MachineLimits};
pub use live::{Live, LiveBatch, LiveSample};
pub use registry::{Parsed, WorkloadKind};

use fsarena_core::Measurement;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What a workload gets from the runner.
pub struct RunEnv<'a> {
    /// The directory inside the target where the workload creates its files.
    pub root: &'a Path,
    /// Every client's view of the same filesystem (`Mounted::client_roots`), the first being
    /// `root`: one mount per client of a shared filesystem (`glusterfs:clients=N`), `[root]`
    /// for every other target. io's `clients=` runs jobs on the first N.
    pub client_roots: Vec<PathBuf>,
    /// Set by the signal handler (Ctrl-C): stop as soon as possible, keep what ran.
    pub stop: &'a AtomicBool,
    /// Progress and notes for people (stderr); never results.
    pub progress: &'a (dyn Fn(&str) + Sync),
    /// Keep the test files after a successful run, for the next repetition to reuse; the
    /// last repetition removes them. A failed or interrupted run always removes them (unless
    /// the workload's own `keep=1`).
    pub keep_files: bool,
    /// Syncs and drops the page cache, dentries and inodes, for a workload that must measure
    /// cold after an untimed step of its own (meta's build, `drop_caches=phase`). `None` when
    /// the run keeps caches (`--no-drop-caches`); the error says why a drop failed (not root).
    pub drop_caches: Option<&'a (dyn Fn() -> Result<(), String> + Sync)>,
    /// Unmounts the target and mounts it again as it was ([`fsarena_target::Mounted::remount`]),
    /// for a workload that checks what survives a remount (`verify:mode=concurrent`); `None`
    /// where the target cannot be remounted (a kind fsarena does not mount on a loop device,
    /// tests, tools).
    pub remount: Option<&'a (dyn Fn() -> Result<(), String> + Sync)>,
    /// Operations and bytes completed so far, for the live rate on the progress line: add
    /// from any thread (`env.live.add(ops, bytes)`), batched in hot loops ([`LiveBatch`]).
    /// [`Live::unused`] where nothing displays it.
    pub live: &'a Live,
    /// Under MPI (`run --mpi`): returns once every rank's workload has called it (or has
    /// ended), so that the ranks start a phase together and end it together, as mdtest's
    /// barriers around each phase. A workload of several timed phases calls it before and after
    /// each ([`phase::Phases::rendezvous`]);
    /// ranks may call it a different number of times (one that failed early is simply not
    /// waited for). `None` on one host.
    pub rendezvous: Option<&'a (dyn Fn() + Sync)>,
    /// Under MPI (`run --mpi`): this rank's place in the job and the directory every rank's
    /// client shares, for a workload whose ranks work in one namespace as mdtest's ranks do
    /// (`meta`: one test directory, one tree without `unique_dir`, names by the rank). Every
    /// other workload works in `root`, the rank's own directory. `None` on one host.
    pub team: Option<Team<'a>>,
    /// Where a server workload (`pgbench`, `sysbench`, `http`) keeps its server's run
    /// directory and records its server and directories (the state file); `None` where
    /// nothing records (such a workload then refuses to run).
    pub host: Option<&'a dyn host::Host>,
    /// The target as given and the run's work directory, for a workload that provisions a
    /// copy of the target of its own (`crash` records one below the filesystem); None where
    /// there is none (tests, tools).
    pub target: Option<TargetAccess<'a>>,
}

/// One rank's place in an MPI job ([`RunEnv::team`]).
#[derive(Debug, Clone, Copy)]
pub struct Team<'a> {
    /// This rank, 0 to `size - 1`.
    pub rank: usize,
    /// How many ranks run.
    pub size: usize,
    /// The directory this rank's client reaches the target by, shared by every rank (each
    /// rank's own `root` is a directory in it).
    pub shared_root: &'a Path,
    /// When the ranks run on several hosts and the step's `clients=` are hosts: the client
    /// this rank's host is (0 for the first host). The rank then runs one client's share of
    /// the workload (io: `numjobs` clones, not `clients × numjobs`); the ranks of the hosts
    /// past `clients=` do not run it. None otherwise.
    pub client: Option<usize>,
}

/// What a workload that makes its own copy of the target gets: the target's spec and the
/// locked work directory, whose state file records what it creates.
#[derive(Debug, Clone)]
pub struct TargetAccess<'a> {
    /// The work directory, with the state file.
    pub workdir: &'a fsarena_target::Workdir,
    /// The target's number in the run, for names.
    pub index: usize,
    /// Its kind: `ext4`, `xfs`, ...
    pub kind: String,
    /// Its keys as given (`size`, `mkfs`, `mount`, ...).
    pub params: Vec<(String, String)>,
}

impl<'a> RunEnv<'a> {
    /// A run that shows nothing and keeps nothing: no progress, no live rate, no cache drops,
    /// the files removed at the end. For callers without a display (tests, tools).
    pub fn quiet(root: &'a Path, stop: &'a AtomicBool) -> Self {
        Self {
            root,
            client_roots: vec![root.to_path_buf()],
            stop,
            progress: &|_| {},
            keep_files: false,
            drop_caches: None,
            remount: None,
            live: Live::unused(),
            rendezvous: None,
            team: None,
            host: None,
            target: None,
        }
    }
}

impl std::fmt::Debug for RunEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnv")
            .field("root", &self.root)
            .field("client_roots", &self.client_roots)
            .finish_non_exhaustive()
    }
}

/// A failed run: what went wrong, and what was measured before it did.
#[derive(Debug)]
pub struct WorkloadError {
    /// The first error, naming file and offset where there is one.
    pub message: String,
    /// The measurements so far, one per part that ran (see [`Workload::parts`]), the last
    /// marked incomplete.
    pub partial: Vec<Measurement>,
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

/// How a run of one measurement ends, said once for every workload: the measurement is
/// complete only when nothing failed and nothing cut the run short (Ctrl-C, a part not
/// done); with an error it is returned as what was measured before it.
pub trait Finish {
    /// `cut_short`: the run stopped before it did all it was asked (the stop flag, or work
    /// left undone), which marks the measurement incomplete without failing the run.
    fn finish(self, error: Option<String>, cut_short: bool) -> Result<Vec<Measurement>, WorkloadError>;
}

impl Finish for Measurement {
    fn finish(mut self, error: Option<String>, cut_short: bool) -> Result<Vec<Measurement>, WorkloadError> {
        self.complete = error.is_none() && !cut_short;
        match error {
            Some(message) => Err(WorkloadError { message, partial: vec![self] }),
            None => Ok(vec![self]),
        }
    }
}

/// The one measurement of a workload without parts, for the families' tests.
///
/// # Panics
///
/// When there is not exactly one.
#[doc(hidden)]
pub fn one(measurements: Vec<Measurement>) -> Measurement {
    assert_eq!(measurements.len(), 1, "expected one measurement");
    measurements.into_iter().next().unwrap_or_default()
}

/// A workload kind.
pub trait Workload: std::fmt::Debug + Send + Sync {
    /// `io`, `meta`, ...
    fn kind(&self) -> &'static str;
    /// The parameters as given, for reports.
    fn params(&self) -> Vec<(String, String)>;
    /// Options shared by all of the workload's jobs (a fio job file's `[global]`), for
    /// fio-json; none by default.
    fn global_options(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// What a run needs at its largest moment (threads, memory, bytes and files on the
    /// target), for the checks made before anything is created.
    fn footprint(&self) -> Footprint;
    /// What it will do, one line per job, for `--dry-run`.
    fn describe(&self) -> Vec<String>;
    /// The results one run gives, by name, when it gives several: a fio job file's jobs (or
    /// reporting groups), a `tree` run's loops. Empty (the default) for one unnamed result.
    fn parts(&self) -> Vec<String> {
        Vec::new()
    }
    /// True when its results do not vary from one repetition to the next (a compliance
    /// check's verdicts): a plan of only such workloads defaults to one repetition and no
    /// warm-up. False (the default) for every measurement of speed.
    fn deterministic(&self) -> bool {
        false
    }
    /// How long one run takes, when its options fix it (a time-based job's runtime and ramp),
    /// for the plan's estimated duration and the ETA; `None` (the default) when it depends on
    /// the filesystem's speed (a job that moves a size, a tree of N files).
    fn estimate(&self) -> Option<std::time::Duration> {
        None
    }
    /// The client mounts it runs on at its largest (io's `clients=`), for the check made
    /// before provisioning against the target's; 1 (the default) for a workload that works
    /// in `env.root` only.
    fn clients(&self) -> u32 {
        1
    }
    /// True when it runs a server as another account (PostgreSQL, MariaDB, nginx): the
    /// runner then mounts its targets under /run/fsarena/RUNID, which that account can
    /// reach, and lends it a [`host::Host`]. False by default.
    fn hosts_server(&self) -> bool {
        false
    }
    /// True when it means the kernel to follow symbolic links on the target (`posix`'s symlink
    /// cases, `exec`'s commands). Otherwise, on a target whose content a tenant serves (a
    /// `fuse:` command, a `dir:` target), the runner has the kernel follow none while it runs
    /// ([`fsarena_target::Mounted::follow_links`]), so that no link a daemon serves leads it
    /// out of the target. False by default.
    fn follows_links(&self) -> bool {
        false
    }
    /// The target kinds it can run on, when it cannot run on every kind (`crash` records
    /// only some): a target of another kind is refused before anything is created.
    fn target_kinds(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// Whether it can run on a target of `kind` with `params` beyond its kind (`crash` needs
    /// a `fuse:` command that keeps its data in `{work}`): the reason it cannot, checked with
    /// the plan, before anything is created. Fine by default.
    fn check_target(&self, kind: &str, params: &[(String, String)]) -> Result<(), String> {
        let _ = (kind, params);
        Ok(())
    }
    /// What it writes in the work directory itself on a target of `kind` with `params`,
    /// beyond the target's own image (crash's write log): the bytes, and what they are in
    /// the option's words, checked with the plan against the free space there before
    /// anything is created. None (the default) for a workload that writes on its target only.
    fn workdir_bytes(&self, kind: &str, params: &[(String, String)]) -> Option<(u64, String)> {
        let _ = (kind, params);
        None
    }
    /// True when it makes its own copy of the target from [`RunEnv::target`] and never works
    /// in the mounted one (`crash` records a copy below the filesystem): a target whose steps
    /// are all such workloads is then not provisioned at all. False by default.
    fn own_target(&self) -> bool {
        false
    }
    /// Runs once in `env.root`: one measurement per part, in the order of [`Workload::parts`]
    /// (one when it has none). An interrupted run returns what ran, the last one marked
    /// incomplete; a failed one returns the error with what was measured so far.
    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError>;
}
