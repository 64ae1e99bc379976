//! Runs a plan: for each target provision, run every workload, tear down; then export.
//! Teardown always happens, and what was measured before a failure is still reported.

use crate::cluster::Cluster;
use crate::failure::Failure;
use crate::output::say;
use crate::plan::Plan;
use crate::progress::{Mode, Position, Progress, Schedule};
use crate::ranks::Ranks;
use anyhow::anyhow;
use fsarena_report::{ResultEntry, RunReport};
use fsarena_target::{ProvisionCtx, Workdir};
use fsarena_workload::RunEnv;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs `plan` and prints its report, showing progress as `mode` says; the exit code says
/// how it went.
/// Under MPI every rank calls it; rank 0 alone provisions, prints and stores.
pub fn execute(plan: &Plan, mode: Mode, ranks: &dyn Ranks) -> Result<ExitCode, Failure> {
    if plan.dry_run {
        if ranks.rank() != 0 {
            return Ok(ExitCode::SUCCESS);
        }
        return crate::output::print(plan_listing(plan).as_bytes()).map(|()| ExitCode::SUCCESS);
    }
    // The other ranks print nothing but errors: rank 0 speaks for the run.
    let mode = if ranks.rank() == 0 { mode } else { Mode::Quiet };
    let schedule = schedule(plan);
    let total = schedule.total();
    // Labels, job names and paths are user text: Progress shows them inert, never as terminal
    // controls.
    let progress = Progress::new(mode, schedule);
    // A rank of a job fsarena launched reports to the launcher (a no-op otherwise).
    crate::channel::join(ranks.rank(), progress.clone());
    let size = crate::progress::plan_line(plan.steps.len(), plan.targets.len(), plan.warmup, plan.repeat, total);
    let outcome = run(plan, &progress, &size, ranks);
    // On every way out, the failures included: no live line left drawing over the error
    // message, and the warnings said (once: a no-op when the run printed them).
    progress.print_warnings();
    outcome
}

/// Provisions, runs and tears down every target, then stores and prints the report; `size`
/// is the line announcing the plan's size and duration, said once the run can start.
fn run(plan: &Plan, progress: &Progress, size: &str, ranks: &dyn Ranks) -> Result<ExitCode, Failure> {
    let Some((run, mut out)) = Run::start(plan, progress, size, ranks)? else {
        // Rank 0 could not open its store or work directory: it says why and gives the job its
        // exit status; the other ranks exit 0 (see `Run::finish`).
        return Ok(if ranks.rank() == 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS });
    };
    for (index, target) in plan.targets.iter().enumerate() {
        let site = run.provision(index, target.as_ref(), &mut out);
        for (step_index, step) in plan.steps.iter().enumerate() {
            // A workload this target's kind cannot run (listed as skipped in the plan).
            if plan.excluded.contains(&(index, step_index)) {
                continue;
            }
            // Collective, as every decision that ends a loop: the ranks stay in step.
            if run.cluster.any(run.stopped() || out.failure.is_some()) {
                break;
            }
            run.run_step(&site, step, &mut out);
            if out.failure.is_some() {
                break;
            }
        }
        run.teardown(site, &mut out);
        // A teardown that failed on rank 0 ends the run on every rank.
        let ending = out.failure.is_some() || run.stopped();
        if run.cluster.any(ending) {
            if !ending {
                out.failure = Some("another rank stopped".into());
            }
            break;
        }
    }
    run.finish(out)
}

/// How the steps on one target use it: decided once, before anything of it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetUse {
    /// Every step makes its own copy of the target (`crash`): nothing is provisioned, and the
    /// work directory stands in for a root the workloads never use.
    Own,
    /// Provisioned in the work directory; the workloads run in it.
    Mounted,
    /// Provisioned in the run's directory under /run/fsarena (0711), where a server
    /// workload's account reaches it; what the servers make is released before teardown.
    Hosted,
}

impl TargetUse {
    /// The use of target `index` by the plan's steps that run on it.
    fn of(plan: &Plan, index: usize) -> Self {
        let mut steps = plan.steps.iter().enumerate().filter(|(s, _)| !plan.excluded.contains(&(index, *s)));
        if steps.clone().next().is_some() && steps.all(|(_, s)| s.workload.own_target()) {
            Self::Own
        } else if plan.steps.iter().any(|s| s.workload.hosts_server()) {
            Self::Hosted
        } else {
            Self::Mounted
        }
    }
}

/// What every step of the run works with, unchanged while it runs.
struct Run<'a> {
    plan: &'a Plan,
    progress: &'a Progress,
    cluster: Cluster<'a>,
    /// Set by a signal, or a lost output stream: the workloads stop, teardown runs.
    stop: Arc<AtomicBool>,
    /// The signal that stopped the run, 0 if none.
    signal: Arc<AtomicUsize>,
    /// Rank 0's work directory; None on the other ranks.
    workdir: Option<Workdir>,
    /// Under MPI on several hosts, the work directory of the first rank of each host but rank
    /// 0's, where it mounts a target every host mounts itself (`glusterfs:servers=`).
    host_workdir: Option<Workdir>,
    /// The run's directory under /run/fsarena and what made it, when a server is hosted.
    run_dir: Option<(std::path::PathBuf, Vec<fsarena_target::Resource>)>,
}

/// What the run has found so far: its report, stored as it grows, and its first failure.
struct Outcome {
    report: RunReport,
    store: crate::record::Recorder,
    /// The first failure, which ends the run.
    failure: Option<String>,
    cache: CacheControl,
    /// Interrupts the run while its output stream is lost, until the results are stored.
    output_watch: crate::output::Watch,
}

/// One provisioned target, as the steps on it see it.
struct Site<'r> {
    index: usize,
    target: &'r dyn fsarena_target::Target,
    use_: TargetUse,
    /// The target behind a lock, for a workload that remounts it (`verify:mode=concurrent`)
    /// while the runner holds it; None when nothing was mounted.
    mounted: Option<std::sync::Mutex<Box<dyn fsarena_target::Mounted>>>,
    roots: crate::cluster::Roots,
    /// What server workloads create on this target, released before its teardown.
    host: Option<crate::tenants::TargetHost<'r>>,
}

impl<'a> Run<'a> {
    /// Watches signals and the output, opens the store and (rank 0) the work directory, and
    /// says the plan's size. None when rank 0 could not open its store or work directory:
    /// every rank then ends.
    fn start(
        plan: &'a Plan,
        progress: &'a Progress,
        size: &str,
        ranks: &'a dyn Ranks,
    ) -> Result<Option<(Self, Outcome)>, Failure> {
        let stop = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        let emergency = Arc::new(OnceLock::new());
        // Under mpirun a signal means the job is ending (a rank failed or was killed, or the
        // job was stopped): mpirun follows its SIGTERM with SIGKILL a second later, and the
        // ranks can no longer meet at a barrier, so the first signal already tears down at once.
        watch_signals(&stop, &signal, &emergency, progress, ranks)?;
        crate::fault::watch(&emergency, progress).map_err(|e| Failure::Run(e.into()))?;
        // A closed stdout or stderr interrupts the run as a signal would (SIGPIPE): until the
        // results are stored, after which nothing is left to stop.
        let output_watch = crate::output::watch(&stop, &signal);
        // One random id names the run in the store and everything it creates (never the PID,
        // which another run in another PID namespace may have too).
        let run_id = fsarena_target::RunId::generate().map_err(|e| Failure::Run(e.into()))?;
        let started = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let (cluster, environment) = Cluster::gather(ranks);
        let report = RunReport {
            id: run_id.to_string(),
            started_unix_ms: started.as_millis() as u64,
            environment,
            global_options: plan.steps.iter().flat_map(|s| s.workload.global_options()).collect(),
            results: Vec::new(),
            plan: plan.text.clone(),
            complete: false,
            name: plan.name.clone(),
            tags: plan.tags.clone(),
            failure: None,
        };
        let leader = cluster.leader();
        if leader {
            crate::channel::head(&report);
        }
        // Rank 0 stores and provisions; the other ranks only run workloads on what it made.
        // Each other host that mounts a target itself has a work directory of its own, under
        // an id of its own (another host may share this one's cgroup tree or /run).
        let mounts_here = !leader
            && cluster.host_leader()
            && cluster.spread()
            && plan.targets.iter().any(|t| t.mounts_on_every_host());
        let opened = crate::record::Recorder::open(plan, &report, leader).and_then(|store| {
            let workdir = match leader {
                true => Some(Workdir::open(&plan.workdir, &run_id).map_err(|e| Failure::Run(e.into()))?),
                false => None,
            };
            let host_workdir = match mounts_here {
                true => {
                    let id = fsarena_target::RunId::generate().map_err(|e| Failure::Run(e.into()))?;
                    Some(Workdir::open(&plan.workdir, &id).map_err(|e| Failure::Run(e.into()))?)
                }
                false => None,
            };
            Ok((store, workdir, host_workdir))
        });
        if let Err(Failure::Run(e)) = &opened {
            if !leader {
                // Rank 0 speaks for the run; another host's failure to open its work directory
                // is said here, where it happened.
                say!("fsarena: rank {} on {}: {e:#}", ranks.rank(), crate::ranks::host_name());
            }
        }
        if cluster.any(opened.is_err()) && (opened.is_ok() || !leader) {
            return Ok(None);
        }
        let (store, workdir, host_workdir) = opened?;
        // A server workload's account must reach the target: targets are then mounted in the
        // run's directory under /run/fsarena (0711) instead of the 0700 work directory.
        let servers = plan.steps.iter().any(|s| s.workload.hosts_server());
        let run_dir = match (&workdir, servers) {
            (Some(w), true) => Some(w.open_run_dir().map_err(|e| Failure::Run(e.into()))?),
            _ => None,
        };
        if let Some(workdir) = workdir.as_ref().or(host_workdir.as_ref()) {
            let _ = emergency.set(workdir.emergency());
        }
        progress.event(size);
        for s in &plan.skipped {
            progress.event(&format!("skipping {s}"));
        }
        let cache = CacheControl { enabled: plan.drop_caches, warned: false };
        let run = Self { plan, progress, cluster, stop, signal, workdir, host_workdir, run_dir };
        Ok(Some((run, Outcome { report, store, failure: None, cache, output_watch })))
    }

    /// A signal or a lost output stream stopped the run.
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Provisions target `index` on rank 0 as its use says, and shares its roots with every
    /// rank. When that fails the run's failure is set (no step then runs) and what was made
    /// is still in the site, for [`Run::teardown`].
    fn provision<'r>(&'r self, index: usize, target: &'r dyn fsarena_target::Target, out: &mut Outcome) -> Site<'r> {
        let use_ = TargetUse::of(self.plan, index);
        if use_ != TargetUse::Own {
            self.progress.event(&format!("provisioning {}", target.label()));
        }
        // A target every host mounts itself: the first rank of each host mounts it there.
        let per_host = self.cluster.spread() && target.mounts_on_every_host() && use_ != TargetUse::Own;
        if per_host {
            return self.provision_per_host(index, target, use_, out);
        }
        let mounted = match &self.workdir {
            Some(_) if use_ == TargetUse::Own => None,
            // Rank 0 provisions on its own host: ranks elsewhere would not see that mount.
            Some(_) if self.cluster.spread() && target.kind() != "dir" => {
                out.failure = Some(format!(
                    "{}: the ranks run on several hosts ({}), and a target fsarena provisions is made on rank 0's host only: use dir:path=... with the shared filesystem mounted at that path on every host, or glusterfs:servers=HOST,volume=NAME, which every host mounts",
                    target.label(),
                    self.cluster.distinct_hosts().iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
                ));
                None
            }
            Some(workdir) => match target.provision(&ProvisionCtx {
                workdir,
                index,
                mount_base: self.run_dir.as_ref().map(|(d, _)| d.as_path()),
            }) {
                Ok(m) => Some(m),
                Err(e) => {
                    out.failure = Some(format!("{}: {e}", target.label()));
                    None
                }
            },
            None => None,
        };
        let mounted = mounted.map(std::sync::Mutex::new);
        let offered = self.cluster.leader().then(|| match (&mounted, &out.failure, &self.workdir) {
            // Ranks on other hosts cannot see fsarena's bind mount of a `dir:` target: they get
            // the user's paths of it (the shared filesystem mounted at the same path there).
            (Some(m), _, _) if self.cluster.distributed() => Ok(lock(m).shared_roots()),
            (Some(m), _, _) => Ok(lock(m).client_roots()),
            (None, None, Some(w)) if use_ == TargetUse::Own => Ok(vec![w.path().to_path_buf()]),
            (None, failure, _) => Err(failure.clone().unwrap_or_default()),
        });
        let roots = match self.cluster.roots(offered) {
            Ok(roots) => roots,
            Err(e) => {
                out.failure.get_or_insert(e);
                // Nothing runs on it (the failure ends the steps), and what was mounted is
                // still torn down.
                crate::cluster::Roots::default()
            }
        };
        let host = match (&mounted, &self.workdir, &self.run_dir) {
            (Some(m), Some(w), Some((d, _))) => {
                // A FUSE mount that lets only root in cannot host a server: refused before one
                // starts.
                if let Err(e) = crate::tenants::check_fuse_allows_others(target.label(), lock(m).root()) {
                    out.failure.get_or_insert(e);
                }
                Some(crate::tenants::TargetHost::new(w, d))
            }
            _ => None,
        };
        Site { index, target, use_, mounted, roots, host }
    }

    /// [`Run::provision`] of a target every host mounts itself (`glusterfs:servers=`): the
    /// first rank of each host mounts it in its own work directory; every rank gets its host's
    /// mounts. A host whose mount failed fails the run on every rank, named.
    fn provision_per_host<'r>(
        &'r self,
        index: usize,
        target: &'r dyn fsarena_target::Target,
        use_: TargetUse,
        out: &mut Outcome,
    ) -> Site<'r> {
        let workdir = self.workdir.as_ref().or(self.host_workdir.as_ref());
        let mounted = workdir.map(|workdir| {
            target.provision(&ProvisionCtx { workdir, index, mount_base: None }).map_err(|e| e.to_string())
        });
        let offered = mounted.as_ref().map(|m| m.as_ref().map(|m| m.client_roots()).map_err(Clone::clone));
        let roots = match self.cluster.roots_per_host(offered) {
            Ok(roots) => roots,
            Err(e) => {
                out.failure.get_or_insert(format!("{}: {e}", target.label()));
                crate::cluster::Roots::default()
            }
        };
        let mounted = mounted.and_then(Result::ok).map(std::sync::Mutex::new);
        Site { index, target, use_, mounted, roots, host: None }
    }

    /// Runs `step` on `site`: its warm-ups and measured repetitions, each stored as it ends;
    /// its results join the report, with what the step cost.
    fn run_step(&self, site: &Site<'_>, step: &crate::plan::Step, out: &mut Outcome) {
        // On a target a tenant serves, the kernel follows links only for a workload that
        // means to (posix's symlink cases, exec's commands): no link a daemon serves leads any
        // other out of the target, at any depth of any path it names.
        if let Some(m) = &site.mounted {
            if let Err(e) = lock(m).follow_links(step.workload.follows_links()) {
                out.failure.get_or_insert(format!("{}: {e}", site.target.label()));
                return;
            }
        }
        let clients = step.workload.clients();
        let hosts = self.cluster.distinct_hosts();
        if self.cluster.client_host(clients_given(step)).is_some() && clients as usize > hosts.len() {
            out.failure.get_or_insert(format!(
                "{}: clients={clients}, and under MPI on several hosts each client is a host: the ranks run on {} ({})",
                site.target.label(),
                hosts.len(),
                hosts.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
            ));
            return;
        }
        let mut entries = site.entries(step);
        let first_position = out.report.results.len();
        let mut position = self.position(site, step);
        let rounds = position.warmup + position.repeat;
        // What the step costs here, every round and its untimed setup included.
        let step_started = std::time::Instant::now();
        for round in 0..rounds {
            if self.cluster.any(self.stopped()) {
                break;
            }
            position.round = round;
            let measured = position.measured();
            crate::channel::round(
                format!("{} of {} on {}", position.round_label(), step.workload.kind(), site.target.label()),
                measured,
                first_position,
                entries.first(),
                entries.first().map_or(0, |e| e.measurements.len()),
                self.progress.live(),
            );
            let merged = self.run_round(site, step, &position, round + 1 < rounds, &mut out.cache);
            let failed = self.cluster.any(merged.as_ref().is_some_and(|(_, e)| e.is_some()));
            // Rank 0 gets every rank's measurements merged, one per part; the others only
            // learn whether to go on.
            let Some((measurements, error)) = merged else {
                if failed {
                    out.failure.get_or_insert_with(|| "another rank failed".into());
                    break;
                }
                continue;
            };
            if measured || error.is_some() {
                for (i, (m, entry)) in measurements.into_iter().zip(entries.iter_mut()).enumerate() {
                    out.store.add_measurement(first_position + i, entry, entry.measurements.len(), &m);
                    entry.measurements.push(m);
                }
            }
            if let Some(message) = error {
                let mut message = format!("{}: {message}", site.target.label());
                if let Some(log) = site.mounted.as_ref().and_then(|m| lock(m).diagnostics()) {
                    message.push_str(&format!("; FUSE daemon said: {log}"));
                }
                out.failure = Some(message);
                break;
            }
        }
        self.cluster.step_done(&site.roots.root);
        if let Some(first) = entries.first_mut() {
            first.wall_ms = Some(u64::try_from(step_started.elapsed().as_millis()).unwrap_or(u64::MAX));
        }
        for entry in &entries {
            if let Some(unstable) = crate::warnings::unstable(entry) {
                self.progress.unstable(unstable);
            }
        }
        out.report.results.extend(entries);
    }

    /// Where `step` on `site` stands in the plan, for the live line.
    fn position(&self, site: &Site<'_>, step: &crate::plan::Step) -> Position {
        let values: Vec<String> = step.point.iter().map(ToString::to_string).collect();
        let (warmup, repeat) = self.plan.rounds_of(step);
        Position {
            target: site.index + 1,
            targets: self.plan.targets.len(),
            label: site.target.label().to_string(),
            workload: step.workload_index + 1,
            workloads: self.plan.workload_count,
            kind: step.workload.kind().to_string(),
            point: step.point_index + 1,
            points: step.points,
            values: values.join(" "),
            round: 0,
            warmup,
            repeat,
        }
    }

    /// One round of `step` on `site`, with every rank in step: the cache dropped before a
    /// measured one, the disks and memory sampled around it. Rank 0 gets every rank's
    /// measurements merged, one per part, and the first error; the other ranks None.
    /// `keep_files`: the files stay for the next round (a read job's layout is reused).
    fn run_round(
        &self,
        site: &Site<'_>,
        step: &crate::plan::Step,
        position: &Position,
        keep_files: bool,
        cache: &mut CacheControl,
    ) -> Option<(Vec<fsarena_core::Measurement>, Option<String>)> {
        self.progress.start_round(position);
        if position.measured() {
            cache.drop(self.progress);
        }
        let events = |text: &str| self.progress.event(text);
        // For a workload that drops caches itself between its own steps (meta's untimed build,
        // `drop_caches=phase`): the same drop as before each repetition, or why it cannot.
        let drop_caches_now = || -> Result<(), String> {
            if !fsarena_target::sys::is_root() {
                return Err("not root, so the page cache cannot be dropped".into());
            }
            fsarena_target::sys::drop_caches().map_err(|e| e.to_string())
        };
        let remount_now = || -> Result<(), String> {
            match &site.mounted {
                Some(m) => lock(m).remount().map_err(|e| e.to_string()),
                None => Err("the workload has no target of its own to remount".into()),
            }
        };
        let remounts = site.mounted.as_ref().is_some_and(|m| lock(m).remounts());
        let root = &site.roots.root;
        // On several hosts a step of more than one client runs on the first `clients=` hosts.
        let client_host = self.cluster.client_host(clients_given(step));
        let env = RunEnv {
            root,
            // Under MPI each rank is one client, working in its own directory; on one host
            // every client mount of the target.
            client_roots: if self.cluster.distributed() { vec![root.clone()] } else { site.roots.clients.clone() },
            stop: &self.stop,
            progress: &events,
            keep_files,
            drop_caches: if cache.enabled { Some(&drop_caches_now) } else { None },
            remount: if remounts { Some(&remount_now) } else { None },
            live: self.progress.live(),
            rendezvous: None,
            team: self.cluster.team(&site.roots.shared, client_host.is_some()),
            host: site.host.as_ref().map(|h| h as &dyn fsarena_workload::host::Host),
            target: self.workdir.as_ref().map(|workdir| fsarena_workload::TargetAccess {
                workdir,
                index: site.index,
                kind: site.target.kind().to_string(),
                params: site.target.options(),
            }),
        };
        // fio's disk_util: the block devices under the target, read around the run.
        let disks = fsarena_target::disk::DiskSampler::start(root);
        // Page cache, dirty pages and fsarena's own memory, once a second.
        // The workload's own page cache: its files on the target (see memory.rs).
        let memory = fsarena_target::memory::MemorySampler::start(Some(root.clone()));
        // Under MPI the phase starts and ends on every rank together (the rates are then over
        // one shared span, as mdtest's).
        self.cluster.barrier();
        let outcome = match self.cluster.distributed().then(|| std::fs::create_dir_all(root)) {
            Some(Err(e)) => Err(fsarena_workload::WorkloadError {
                message: format!("{}: {e}", root.display()),
                partial: Vec::new(),
            }),
            // A rank of a host past the step's clients: it meets the others, and measures nothing.
            _ if client_host == Some(false) => self.cluster.run_in_step(|_| Ok(Vec::new())),
            _ => self.cluster.run_in_step(|rendezvous| step.workload.run(&RunEnv { rendezvous, ..env })),
        };
        self.cluster.barrier();
        let (mut measurements, error) = match outcome {
            Ok(m) => (m, None),
            Err(e) => (e.partial, Some(e.message)),
        };
        let memory = memory.finish();
        let disk_util = disks.finish();
        for m in &mut measurements {
            m.disk_util.clone_from(&disk_util);
            for (name, series) in &memory {
                m.add_series(name, series.clone());
            }
        }
        self.progress.end_round();
        self.cluster.merge_round(measurements, error)
    }

    /// Releases what the servers made on `site`, then tears the target down; a failure of
    /// either is the run's.
    fn teardown(&self, site: Site<'_>, out: &mut Outcome) {
        let label = site.target.label();
        // Servers stopped and their directories gone before the target is unmounted.
        if let Some(host) = &site.host {
            if let Err(e) = host.release_all() {
                out.failure.get_or_insert(format!("stopping the servers on {label}: {e}"));
            }
        }
        drop(site.host);
        if let Some(mounted) = site.mounted {
            if let Err(e) = mounted.into_inner().unwrap_or_else(|p| p.into_inner()).teardown() {
                out.failure.get_or_insert(format!("teardown of {label}: {e}"));
            }
        }
    }

    /// After the last target: removes the run's directory, closes the work directory, stores
    /// and prints the report, and gives the exit status (rank 0; the other ranks exit 0).
    fn finish(self, mut out: Outcome) -> Result<ExitCode, Failure> {
        let Some(workdir) = self.workdir else {
            // Not rank 0: rank 0 reports the run, names the rank that failed and gives the job
            // its exit status. This rank exits 0 whatever happened: mpirun ends the whole job
            // (SIGTERM to rank 0, still tearing down, storing and printing) as soon as one rank
            // exits non-zero, and its own exit status is then that rank's, not rank 0's. The
            // first rank of another host closes its work directory, and says what it kept.
            if let Some(state) = self.host_workdir.and_then(Workdir::close) {
                say!(
                    "fsarena: rank {} on {}: kept {}: run `fsarena cleanup` on {} once nothing holds the mount",
                    self.cluster.rank(),
                    crate::ranks::host_name(),
                    state.display(),
                    crate::ranks::host_name()
                );
            }
            return Ok(ExitCode::SUCCESS);
        };
        let (plan, progress) = (self.plan, self.progress);
        let workdir_path = workdir.path().to_path_buf();
        if let Some((_, made)) = &self.run_dir {
            if let Err(e) = workdir.undo(made, fsarena_target::UndoMode::Teardown) {
                out.failure.get_or_insert(format!("removing the run's directory under /run/fsarena: {e}"));
            }
        }
        if let Some(state) = workdir.close() {
            // Something could not be undone (a busy mount): everything below it stays recorded.
            out.failure.get_or_insert_with(|| "teardown did not finish".to_string());
            progress.notice(&format!(
                "kept {} and what it records: run `fsarena cleanup --workdir {}` once nothing holds the mount",
                state.display(),
                workdir_path.display()
            ));
        }
        let signal = self.signal.load(Ordering::Relaxed);
        let (report, failure) = (&mut out.report, out.failure);
        report.complete = failure.is_none() && signal == 0;
        report.failure = match signal {
            0 => failure.clone(),
            crate::output::SIGPIPE => Some(interrupted_by_output()),
            sig => Some(format!("interrupted by signal {sig}")),
        };
        let unstored = out.store.finish(report);
        drop(out.output_watch);
        let unstored = join_unstored(unstored, deliver(plan, progress, report));
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let exported = plan.format.exporter(terminal).export(std::slice::from_ref(report));
        // The live line goes before the report is printed (stdout may be the same terminal);
        // the warnings come after it, once, where they are seen last.
        progress.finish();
        let printed = exported.map_err(|e| Failure::Run(e.into())).and_then(|bytes| crate::output::print(&bytes));
        progress.print_warnings();
        if signal != 0 {
            if signal == crate::output::SIGPIPE {
                say!("fsarena: {}", interrupted_by_output());
            }
            say!("fsarena: interrupted; the results above are incomplete and the test files were removed");
            if let Some(unstored) = &unstored {
                say!("fsarena: {}", fsarena_core::printable(unstored));
            }
            return Ok(ExitCode::from(128 + signal as u8));
        }
        exit_status(plan, report, failure, unstored, printed)
    }
}

impl Site<'_> {
    /// The results `step` gives on this site before it runs: one per part the workload gives
    /// (a fio job file's jobs), else one.
    fn entries(&self, step: &crate::plan::Step) -> Vec<ResultEntry> {
        let workload = &step.workload;
        let base = ResultEntry {
            target_label: self.target.label().to_string(),
            target_kind: self.target.kind().to_string(),
            target_options: self.target.options(),
            target_info: match &self.mounted {
                Some(m) => lock(m).info(),
                None if self.use_ == TargetUse::Own => vec![(
                    "provisioned".to_string(),
                    "not mounted: the workload makes its own copy (its facts are stored with the result)".to_string(),
                )],
                None => Vec::new(),
            },
            workload_kind: workload.kind().to_string(),
            workload_params: workload.params(),
            point: step.point.clone(),
            part: None,
            measurements: Vec::new(),
            wall_ms: None,
        };
        let parts = workload.parts();
        if parts.is_empty() {
            vec![base]
        } else {
            parts.iter().map(|p| ResultEntry { part: Some(p.clone()), ..base.clone() }).collect()
        }
    }
}

/// The clients a step's workload was given (`clients=`), None when it was not.
fn clients_given(step: &crate::plan::Step) -> Option<u32> {
    step.workload.params().iter().any(|(k, _)| k == "clients").then(|| step.workload.clients())
}

/// Writes the HTML report `-o` asked for (checked before the run): one that still cannot be
/// written (a full disk) is a run whose results were not all delivered, as unstored results
/// are: the reason, else None.
fn deliver(plan: &Plan, progress: &Progress, report: &RunReport) -> Option<String> {
    let path = plan.report.as_ref()?;
    match crate::report_file::write(std::slice::from_ref(report), path) {
        Ok(()) => {
            progress.event(&format!(
                "report written to {}",
                std::path::absolute(path).unwrap_or_else(|_| path.clone()).display()
            ));
            None
        }
        Err(e) => Some(format!("the report was not written: {e:#}")),
    }
}

/// Why some results did not reach the store or the report file, if any did not.
fn join_unstored(unstored: Option<String>, unwritten: Option<String>) -> Option<String> {
    match (unstored, unwritten) {
        (Some(a), Some(b)) => Some(format!("{a}, and {b}")),
        (a, b) => a.or(b),
    }
}

/// A run that was not interrupted: 1 for a failure or results not stored or not shown (never
/// 0 for them), 3 for findings under --strict-checks, else 0.
fn exit_status(
    plan: &Plan,
    report: &RunReport,
    failure: Option<String>,
    unstored: Option<String>,
    printed: Result<(), Failure>,
) -> Result<ExitCode, Failure> {
    match (failure, unstored) {
        (Some(message), None) => Err(Failure::Run(anyhow!("{message}; the results above are incomplete"))),
        (Some(message), Some(unstored)) => {
            Err(Failure::Run(anyhow!("{message}; the results above are incomplete, and {unstored}")))
        }
        (None, Some(unstored)) => Err(Failure::Run(anyhow!("{unstored}"))),
        (None, None) => printed.map(|()| {
            // Complete and stored: the findings decide the exit status under --strict-checks.
            let findings: u64 =
                report.results.iter().flat_map(|e| &e.measurements).map(fsarena_core::Measurement::findings).sum();
            if plan.strict_checks && findings > 0 {
                say!("fsarena: {findings} findings (--strict-checks)");
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }),
    }
}

/// Why a run that lost its output stopped, as stored and said.
fn interrupted_by_output() -> String {
    let stream = crate::output::lost().unwrap_or("the output");
    format!("interrupted: {stream} was closed (broken pipe); stopped the workloads and tore down (exit 141)")
}

/// Every round of `plan` with its estimated duration, for the plan line and the ETA.
fn schedule(plan: &Plan) -> Schedule {
    let estimates: Vec<_> = plan.steps.iter().map(|s| s.workload.estimate()).collect();
    let steps: Vec<_> = plan
        .steps
        .iter()
        .zip(estimates)
        .map(|(s, e)| {
            let (warmup, repeat) = plan.rounds_of(s);
            (e, warmup + repeat)
        })
        .collect();
    Schedule::of_pairs(plan.targets.len(), &steps, |t, s| plan.excluded.contains(&(t, s)))
}

/// `--dry-run` and `suite show`: the plan, with labels and job names shown inert (they are
/// user text).
pub fn plan_listing(plan: &Plan) -> String {
    use fsarena_core::printable;
    let mut out = String::new();
    if let Some(d) = &plan.description {
        out.push_str(&format!("{}\n", printable(d)));
    }
    if let Some(scale) = plan.scale {
        out.push_str(&format!("scale: {}\n", scale.name()));
    }
    let results: usize = plan.steps.iter().map(|s| s.workload.parts().len().max(1)).sum();
    // Pairs skipped (see Plan::excluded) give no result: the count says so.
    let skipped: usize = plan.excluded.iter().map(|&(_, s)| plan.steps[s].workload.parts().len().max(1)).sum();
    let skipped = match skipped {
        0 => String::new(),
        n => format!(" ({n} of them skipped, below)"),
    };
    out.push_str(&format!(
        "plan: {} target(s) × {} workload(s) = {} step(s) per target, {} result(s) per target{skipped}; {} warm-up + {} measured repetition(s) each\n",
        plan.targets.len(),
        plan.workload_count,
        plan.steps.len(),
        results,
        plan.warmup,
        plan.repeat
    ));
    let total = schedule(plan).total();
    out.push_str(&format!("duration: {}\n", crate::progress::duration_text(total)));
    for t in &plan.targets {
        out.push_str(&format!("  target {} ({})\n", printable(t.label()), t.kind()));
    }
    for (index, step) in plan.steps.iter().enumerate() {
        let point: Vec<String> = step.point.iter().map(ToString::to_string).collect();
        let head = if point.is_empty() {
            format!("  workload {}/{}", step.workload_index + 1, plan.workload_count)
        } else {
            format!(
                "  workload {}/{} point {}/{}: {}",
                step.workload_index + 1,
                plan.workload_count,
                step.point_index + 1,
                step.points,
                point.join(" ")
            )
        };
        let skipped_on: Vec<&str> = (0..plan.targets.len())
            .filter(|&t| plan.excluded.contains(&(t, index)))
            .map(|t| plan.targets[t].label())
            .collect();
        let head = match skipped_on.len() {
            0 => head,
            n if n == plan.targets.len() => format!("{head} (skipped)"),
            _ => format!("{head} (skipped on {})", skipped_on.join(", ")),
        };
        out.push_str(&format!("{}\n", printable(&head)));
        for line in step.workload.describe() {
            out.push_str(&format!("    {}\n", printable(&line)));
        }
    }
    for s in &plan.skipped {
        out.push_str(&format!("  skipped {}\n", printable(s)));
    }
    out
}

/// Sync and drop the page cache before each measured repetition, when root.
struct CacheControl {
    enabled: bool,
    warned: bool,
}

impl CacheControl {
    /// Warnings go to `progress`, which prints each once at the end.
    fn drop(&mut self, progress: &Progress) {
        if !self.enabled {
            return;
        }
        if fsarena_target::sys::is_root() {
            if let Err(e) = fsarena_target::sys::drop_caches() {
                progress.warn(&format!("cannot drop the page cache before a repetition: {e}"));
            }
        } else if !self.warned {
            self.warned = true;
            progress.warn("not root, so the page cache is not dropped before each repetition; results may come from the cache (run as root, or pass --no-drop-caches to silence this)");
        }
    }
}

/// The first SIGINT or SIGTERM stops the workloads; the runner then tears down as usual and
/// exits 128+signal. A second one does not wait for the workloads any longer: it removes the
/// live line, tears down at once, from this thread, and exits. Teardown is never skipped:
/// there is no exit without it. With `urgent` (an MPI job of several ranks) the first signal
/// is treated as the second.
fn watch_signals(
    stop: &Arc<AtomicBool>,
    signal: &Arc<AtomicUsize>,
    emergency: &Arc<OnceLock<fsarena_target::Emergency>>,
    progress: &Progress,
    ranks: &dyn Ranks,
) -> Result<(), Failure> {
    let (urgent, rank) = (ranks.size() > 1, ranks.rank());
    if urgent {
        // The ranks on this host end together: a mount only they hold is no reason to keep
        // it when the job ends.
        if let Some(marker) = crate::ranks::job_marker() {
            fsarena_target::sys::ends_with_job(marker);
        }
    }
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(|e| Failure::Run(e.into()))?;
    let (stop, signal, emergency) = (Arc::clone(stop), Arc::clone(signal), Arc::clone(emergency));
    let progress = progress.clone();
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for (count, sig) in signals.forever().enumerate() {
                signal.store(sig as usize, Ordering::SeqCst);
                stop.store(true, Ordering::SeqCst);
                if count == 0 && !urgent {
                    progress.event(
                        "interrupted: stopping the workloads, then tearing down (interrupt again to tear down at once)",
                    );
                    continue;
                }
                // This thread's lines would be drawn over by the live line's tick: remove it.
                progress.finish();
                crate::channel::bye(format!("signal {sig}"));
                if urgent {
                    // Rank 0 and the first rank of a host that mounted a target itself have
                    // something to tear down; the others just go.
                    if emergency.get().is_some() {
                        say!(
                            "fsarena: rank {rank} on {}: signal {sig}: the MPI job is ending (a rank failed or was stopped): tearing down now",
                            crate::ranks::host_name()
                        );
                    }
                } else {
                    say!("fsarena: second interrupt: tearing down now");
                }
                let code = 128 + sig;
                match emergency.get() {
                    // Nothing was created yet.
                    None => std::process::exit(code),
                    Some(e) => e.tear_down_then(|done, error, kept| {
                        crate::fault::say_teardown(done, error, kept);
                        std::process::exit(code)
                    }),
                }
            }
        })
        .map_err(|e| Failure::Run(e.into()))?;
    Ok(())
}

/// The target behind its lock (a panic while it was held leaves it usable: teardown must run).
fn lock(
    m: &std::sync::Mutex<Box<dyn fsarena_target::Mounted>>,
) -> std::sync::MutexGuard<'_, Box<dyn fsarena_target::Mounted>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
