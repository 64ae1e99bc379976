//! The mdtest-class `meta` workload: mdtest's tree, phases, names and rates, with threads as
//! mdtest's ranks, and under MPI the ranks' threads: every rank works in one test directory
//! that rank 0 makes, its tasks numbered after the ranks before it ([`fsarena_workload::RunEnv::team`]),
//! as mdtest's ranks share theirs.
//!
//! A run builds `test-dir.0-0` in the target (mdtest's `TEST_DIR.<iteration>-<loop>`), then
//! runs mdtest's phases in mdtest's order: tree creation; directory creation, stat, rename and
//! removal; file creation, stat, read and removal; tree removal, on the phase runner
//! ([`fsarena_workload::phase`]), every task waiting at a barrier before each phase. A phase's time is its span, from the earliest task's start to the latest
//! task's end, and its rate is all tasks' items over that span: mdtest's aggregate, where each
//! rank's time runs from its start to the barrier after the phase, and the summary takes the
//! slowest rank's rate times the ranks. A task's own clock is not the phase's: tasks that do
//! not overlap (more tasks than CPUs) would each report a short time and the sum would exceed
//! what the machine did. The tree rows count one tree, task 0's, also with `unique_dir`, as
//! mdtest's do. The measurement holds the rates and latency percentiles as metrics, each
//! phase's latency histogram, and each phase's count as a counter (`file_creation_items`), not
//! a metric: a complete run counts what the plan says (`describe` tells it).
//!
//! Calls go through [`fsarena_engine::FsOps`] and name their items as mdtest's do
//! (`calls=path`, the default): the whole path from the root, the test directory's path in
//! front, made per item as mdtest makes it and resolved by every call; `calls=fd` keeps
//! fsarena's cheaper calls relative to an open directory. Each rank's or task's phase is timed
//! as mdtest times it: one span around the phase, after the barrier, with nothing of fsarena's
//! own (allocation, progress) in it. A run without creation phases builds what it needs untimed and then drops
//! the page cache (`drop_caches=build`), so that its first repetition measures the same cold
//! tree as the later ones; `drop_caches=phase` also drops before every timed phase.

pub mod options;
mod paths;
pub mod shape;
mod task;
pub mod text;

use fsarena_core::{Better, InputError, Measurement, RateBasis, Spec};
use fsarena_engine::PsyncFsOps;
use fsarena_workload::phase::{PhaseTotal, Phases};
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use options::{Calls, DropCaches, MetaOptions, MetaParams};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::Ordering;
pub use task::Phase;
use task::Task;

/// mdtest's test directory for iteration 0, loop 0.
const TEST_DIR: &str = "test-dir.0-0";

/// The `meta` workload.
#[derive(Debug, Clone)]
pub struct MetaWorkload {
    /// What a run does.
    pub params: MetaParams,
    given: Vec<(String, String)>,
}

impl MetaWorkload {
    /// From `--workload meta:key=value,...` (or a TOML table turned into pairs).
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = MetaOptions::default();
        for (k, v) in &spec.params {
            options.set(k, v)?;
        }
        Ok(Self { params: options.resolve()?, given: spec.params.clone() })
    }

    /// The measured phases, in mdtest's order.
    pub fn phases(&self) -> Vec<Phase> {
        let p = &self.params;
        let s = p.phases;
        let mut out = Vec::new();
        if s.create {
            out.push(Phase::TreeCreation);
        }
        if p.dirs {
            let steps = [
                (s.create, Phase::DirCreation),
                (s.stat, Phase::DirStat),
                (s.rename && p.shape.items > 1, Phase::DirRename),
                (s.remove, Phase::DirRemoval),
            ];
            out.extend(steps.iter().filter(|(on, _)| *on).map(|(_, ph)| *ph));
        }
        if p.files {
            let steps = [
                (s.create, Phase::FileCreation),
                (s.stat, Phase::FileStat),
                (s.read, Phase::FileRead),
                (s.remove, Phase::FileRemoval),
            ];
            out.extend(steps.iter().filter(|(on, _)| *on).map(|(_, ph)| *ph));
        }
        if s.remove {
            out.push(Phase::TreeRemoval);
        }
        out
    }

    /// The tree base name of task `t` (mdtest's `base_tree_name`).
    fn base_name(&self, t: u32) -> String {
        if self.params.unique_dir {
            format!("mdtest_tree.{t}")
        } else {
            "mdtest_tree".to_string()
        }
    }

    /// Operations a complete run of `phase` counts: every task's items, one tree's directories.
    pub fn planned(&self, phase: Phase) -> u64 {
        let p = &self.params;
        if phase.is_tree() {
            p.shape.dirs
        } else {
            u64::from(p.tasks).saturating_mul(p.shape.items)
        }
    }

    /// mdtest's header line: `2 tasks, 1000 files/directories`.
    fn header(&self) -> String {
        let p = &self.params;
        let s = &p.shape;
        let what = match (p.dirs, p.files) {
            (true, true) => "files/directories",
            (true, false) => "directories",
            _ => "files",
        };
        format!(
            "{} tasks, {} {what}; tree: branch={} depth={}, {} directories ({} per level), {} items per directory per task; calls={}, drop_caches={}",
            p.tasks,
            u64::from(p.tasks) * s.items,
            s.branch,
            s.depth,
            s.dirs,
            s.dirs_per_level().iter().map(|n| n.to_string()).collect::<Vec<_>>().join("/"),
            s.items_per_dir,
            p.calls.as_str(),
            p.drop_caches.as_str()
        )
    }
}

impl Workload for MetaWorkload {
    fn kind(&self) -> &'static str {
        "meta"
    }

    fn params(&self) -> Vec<(String, String)> {
        // How the calls name their items changes every rate: shown even when not given.
        let mut params = self.given.clone();
        if !params.iter().any(|(k, _)| k == "calls") {
            params.push(("calls".into(), self.params.calls.as_str().into()));
        }
        params
    }

    fn footprint(&self) -> Footprint {
        let p = &self.params;
        let s = &p.shape;
        let tasks = u64::from(p.tasks);
        let trees = if p.unique_dir { tasks } else { 1 };
        // Each tree's paths are kept in memory: a directory at depth L has L + 1 components
        // of at most `mdtest_tree.TASK.NUMBER/`, plus the CString's own cost.
        let component = 12 + 11 + 21;
        let path_bytes = s.dirs.saturating_mul(u64::from(s.depth + 1) * component + 48);
        let memory = trees
            .saturating_mul(path_bytes)
            .saturating_add(s.dirs.saturating_mul(8).saturating_mul(tasks + 1))
            .saturating_add(tasks.saturating_mul(p.write_bytes.max(p.read_bytes).saturating_mul(2) + (64 << 10)));
        let per_task = u64::from(p.dirs) + u64::from(p.files);
        Footprint {
            source: format!(
                "meta workload (tasks={}, {} items per task, {} directories per tree)",
                p.tasks, s.items, s.dirs
            ),
            threads: tasks,
            buffer_bytes: memory,
            bytes_on_target: if p.files {
                tasks.saturating_mul(s.items).saturating_mul(p.write_bytes.max(p.read_bytes))
            } else {
                0
            },
            files: tasks.saturating_mul(s.items).saturating_mul(per_task).saturating_add(trees.saturating_mul(s.dirs)),
            open_files: tasks.saturating_mul(3),
        }
    }

    fn describe(&self) -> Vec<String> {
        // The counts are what a complete run does: they are not measured figures, so they are
        // told here rather than stored as metrics beside the rates.
        let names: Vec<String> =
            self.phases().iter().map(|&p| format!("{} ({})", p.metric(), self.planned(p))).collect();
        vec![format!("meta: {}; phases (operations): {}", self.header(), names.join(", "))]
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let p = &self.params;
        // Under MPI the ranks are mdtest's ranks: one test directory in the directory they
        // share, made and removed by rank 0, the others' tasks numbered after rank 0's.
        let (base, rank) = env.team.map_or((env.root, 0), |t| (t.shared_root, t.rank));
        let first_task = u32::try_from(rank).unwrap_or(u32::MAX).saturating_mul(p.tasks);
        let meet = || {
            if let Some(meet) = env.rendezvous {
                meet();
            }
        };
        let test_path = base.join(TEST_DIR);
        // Whether the phases find their tree, asked by every rank before any builds one.
        let build = !p.phases.create && !test_path.join(shape::Shape::root(&self.base_name(first_task))).exists();
        let made = if rank == 0 { make_test_dir(&test_path, p.phases.create) } else { Ok(()) };
        // No rank opens the test directory before rank 0 has made it.
        meet();
        made.map_err(fail)?;
        let outcome = self.run_in(env, &test_path, first_task, build);
        let (mut measurement, mut failure) = match outcome {
            Ok(m) => (m, None),
            Err(e) => (e.partial.into_iter().next().unwrap_or_default(), Some(e.message)),
        };
        let stopped = env.stop.load(Ordering::Relaxed);
        // The tree stays for the next repetition when that one does not create it again.
        let keep = p.keep || (failure.is_none() && !stopped && env.keep_files && !p.phases.create);
        // Rank 0 removes it once every rank is done with it.
        meet();
        if rank == 0 && (!keep || is_empty_dir(&test_path)) {
            if let Err(e) = std::fs::remove_dir_all(&test_path) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    failure.get_or_insert(format!("cannot remove {}: {e}", test_path.display()));
                }
            }
        }
        match failure {
            Some(message) => {
                measurement.complete = false;
                Err(WorkloadError { message, partial: vec![measurement] })
            }
            None => {
                measurement.complete &= !stopped;
                Ok(vec![measurement])
            }
        }
    }
}

impl MetaWorkload {
    /// Prepares what the selected phases need, runs them on `tasks` threads and turns the
    /// totals into metrics.
    /// `first_task` is the number of this rank's first task (mdtest's rank); `build` says
    /// that the phases need a tree and items made first, untimed.
    fn run_in(
        &self,
        env: &RunEnv<'_>,
        test_path: &Path,
        first_task: u32,
        build: bool,
    ) -> Result<Measurement, WorkloadError> {
        let p = &self.params;
        let fail = |message: String| WorkloadError { message, partial: Vec::new() };
        let test_dir =
            // Never through a link planted at the test directory's name.
            rustix::fs::open(test_path, OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| fail(format!("cannot open {}: {}", test_path.display(), std::io::Error::from(e))))?;
        let trees: Vec<Vec<CString>> = if p.unique_dir {
            (0..p.tasks).map(|t| p.shape.paths(&self.base_name(first_task.saturating_add(t)))).collect()
        } else {
            vec![p.shape.paths(&self.base_name(0))]
        };
        let preorder = p.shape.preorder();
        // calls=path names every directory by its whole path, as mdtest does: made here,
        // before any phase, so that no phase builds them.
        let full: Vec<Vec<CString>> = match p.calls {
            Calls::Path => {
                let base = std::path::absolute(test_path)
                    .map_err(|e| fail(format!("cannot resolve {}: {e}", test_path.display())))?;
                trees.iter().map(|tree| full_paths(&base, tree)).collect()
            }
            Calls::Fd => vec![Vec::new(); trees.len()],
        };
        (env.progress)(&format!("meta: {}", self.header()));

        // Without the creation phases, the items come from an earlier run with keep=1, or are
        // made here, untimed.
        if build {
            let mut prepare = vec![Phase::TreeCreation];
            if p.dirs {
                prepare.push(Phase::DirCreation);
            }
            if p.files {
                prepare.push(Phase::FileCreation);
            }
            (env.progress)("meta: creating the tree and its items for the selected phases (untimed)");
            let totals =
                self.run_tasks(env, &test_dir, test_path, first_task, (&trees, &full), &preorder, &prepare, true);
            if let Some(e) = totals.into_iter().find_map(|t| t.error) {
                return Err(fail(format!("preparing the tree: {e}")));
            }
            // What was just built is in the cache; a later repetition that reuses the tree
            // finds it cold (the runner drops before every repetition): drop it here too, or
            // the first repetition alone measures the cache.
            if p.drop_caches != DropCaches::Never {
                if let Some(drop) = env.drop_caches {
                    match drop() {
                        Ok(()) => (env.progress)("meta: dropped the page cache after the build"),
                        Err(e) => (env.progress)(&format!(
                            "warning: meta: {e}: the phases after the build measure a hot cache, later repetitions a cold one"
                        )),
                    }
                }
            }
        }

        let phases = self.phases();
        if p.drop_caches == DropCaches::Phase && env.drop_caches.is_none() {
            (env.progress)(
                "warning: meta: drop_caches=phase does nothing: this run keeps the caches (--no-drop-caches)",
            );
        }
        let totals = self.run_tasks(env, &test_dir, test_path, first_task, (&trees, &full), &preorder, &phases, false);
        let mut m = Measurement { complete: true, ..Measurement::default() };
        let mut failure = None;
        let ran: Vec<(Phase, PhaseTotal)> = phases.into_iter().zip(totals).collect();
        let ordered = || Phase::ALL.iter().filter_map(|ph| ran.iter().find(|(r, _)| r == ph));
        for (phase, t) in ordered() {
            if t.rate(t.ops).is_some() {
                // The window lets MPI ranks merge over the phase's span across every rank;
                // the tree rows are rank 0's alone (`counts_tree`), one tree, as mdtest's.
                let basis = RateBasis {
                    counter: format!("{}_items", phase.metric()),
                    span_ns: t.span_ns(),
                    window: t.window_ns(),
                    shared: phase.is_tree(),
                };
                m.push_rate_basis(phase.metric(), "ops/s", t.ops, basis);
            }
            if failure.is_none() {
                failure = t.error.clone();
            }
        }
        for (phase, t) in ordered().filter(|(_, t)| t.ops > 0) {
            for (suffix, pct) in [("p50", 50.0), ("p99", 99.0)] {
                m.push(&format!("{}_lat_{suffix}", phase.metric()), "ns", Better::Lower, t.hist.percentile(pct) as f64);
            }
        }
        // What each phase counted: exact totals beside the rates, not metrics of their own
        // (a complete run's counts are the plan's, which `describe` tells). The histograms
        // keep every latency, for exact percentiles when repetitions or hosts are merged.
        for (phase, t) in ordered() {
            m.count(&format!("{}_items", phase.metric()), t.ops);
            m.add_latency(phase.metric(), &t.hist);
        }
        match failure {
            Some(message) => {
                m.complete = false;
                Err(WorkloadError { message, partial: vec![m] })
            }
            None => Ok(m),
        }
    }

    /// Runs `phases` on every task, all starting each phase together, and sums each phase.
    /// `prepare` writes what a later read needs, at least `read_bytes` per file, and never
    /// drops caches between its phases; otherwise `drop_caches=phase` drops before each.
    #[allow(clippy::too_many_arguments)]
    fn run_tasks(
        &self,
        env: &RunEnv<'_>,
        test_dir: &OwnedFd,
        test_path: &Path,
        first_task: u32,
        (trees, full): (&[Vec<CString>], &[Vec<CString>]),
        preorder: &[u64],
        phases: &[Phase],
        prepare: bool,
    ) -> Vec<PhaseTotal> {
        let p = &self.params;
        let cold = if prepare || p.drop_caches != DropCaches::Phase { None } else { env.drop_caches };
        let write_bytes = if prepare { p.write_bytes.max(p.read_bytes) } else { p.write_bytes };
        let mut tasks: Vec<Task<'_, PsyncFsOps>> = (0..p.tasks)
            .map(|t| Task {
                id: first_task.saturating_add(t),
                params: p,
                test_path,
                test_dir: test_dir.as_fd(),
                tree: if p.unique_dir { &trees[t as usize] } else { &trees[0] },
                full: if p.unique_dir { &full[t as usize] } else { &full[0] },
                preorder,
                owns_tree: p.unique_dir || first_task.saturating_add(t) == 0,
                counts_tree: first_task.saturating_add(t) == 0,
                write_bytes,
                ops: PsyncFsOps,
            })
            .collect();
        // One task drops the caches for all before each phase; its failure names the option.
        let drop_before = || cold.map_or(Ok(()), |drop| drop().map_err(|e| format!("drop_caches=phase: {e}")));
        let before_each: Option<&(dyn Fn() -> Result<(), String> + Sync)> =
            if cold.is_some() { Some(&drop_before) } else { None };
        // The ranks of an MPI run start each phase together (mdtest's barrier), the untimed
        // build's too: no rank makes items in a shared tree before rank 0 has made it.
        let rendezvous = env.rendezvous;
        let runner = Phases { name: "meta task", stop: env.stop, live: env.live, before_each, rendezvous };
        runner.run(phases, &mut tasks)
    }
}

/// Makes the test directory, after removing what a kept earlier run left there when the run
/// creates its tree again (untimed).
fn make_test_dir(test_path: &Path, create: bool) -> Result<(), String> {
    // Creation needs a clean slate: what a kept earlier run left goes, untimed.
    if create && test_path.exists() {
        std::fs::remove_dir_all(test_path)
            .map_err(|e| format!("cannot remove {} left by an earlier run: {e}", test_path.display()))?;
    }
    match std::fs::create_dir(test_path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot create {}: {e}", test_path.display())),
    }
}

/// `BASE/PATH` for every path of a tree: the names mdtest's calls use.
fn full_paths(base: &Path, tree: &[CString]) -> Vec<CString> {
    use std::os::unix::ffi::OsStrExt;
    let base = base.as_os_str().as_bytes();
    tree.iter()
        .filter_map(|p| {
            let mut bytes = Vec::with_capacity(base.len() + 1 + p.as_bytes().len());
            bytes.extend_from_slice(base);
            bytes.push(b'/');
            bytes.extend_from_slice(p.as_bytes());
            CString::new(bytes).ok()
        })
        .collect()
}

/// True when `path` is a directory with nothing in it.
fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
