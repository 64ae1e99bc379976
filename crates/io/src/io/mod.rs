//! The fio-class `io` workload: fio's options, semantics and byte counts, with a leaner hot
//! loop.

mod bounds;
mod dedupe;
mod files;
mod fiorand;
mod flow;
mod iolog;
mod job;
pub mod jobfile;
mod keywords;
mod layout;
mod logstream;
pub mod net;
pub mod noio;
pub mod offsets;
pub mod options;
mod pattern;
mod process;
mod queue;
mod rate;
mod shared;
mod steady;
pub mod text;
pub mod verify;

use files::CreatedFiles;
use fsarena_core::{
    Better, DirectionResult, FioDetail, InputError, JobResult, Measurement, Nanos, Spec, FIO_PERCENTILES,
};
use fsarena_engine::{Engine, EngineVisitor};
use fsarena_stats::LatencyHistogram;
use fsarena_workload::{Footprint, RunEnv, Workload, WorkloadError};
use job::{CloneResult, CloneSpec, READ, WRITE};
use jobfile::{FioJobFile, JobDef};
use layout::FileNeed;
use options::{ExitWhat, IoOptions};
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// The `io` workload: one or more fio-style jobs, run group by group.
#[derive(Debug, Clone)]
pub struct IoWorkload {
    /// Jobs in order; `stonewall` starts a new stage (and reporting group), `new_group` a
    /// new reporting group.
    pub jobs: Vec<JobDef>,
    /// `[global]` options of a fio job file, for fio-json.
    pub global_options: Vec<(String, String)>,
    /// The files this workload created, kept between repetitions: only these are removed.
    created: CreatedFiles,
}

impl IoWorkload {
    /// From jobs and the `[global]` options they came with.
    pub fn new(jobs: Vec<JobDef>, global_options: Vec<(String, String)>) -> Self {
        Self { jobs, global_options, created: CreatedFiles::default() }
    }

    /// Removes the files this workload created in `root` (and only while each is still the
    /// file it created): for a caller that ran it with `keep=1` over several passes.
    pub fn remove_created(&self, root: &Path) {
        if let Ok(fd) = files::open_root(root) {
            self.created.remove_all(&[root], &[fd.as_fd()]);
        }
    }

    /// From `--workload io:key=value,...` (or a TOML table turned into pairs).
    pub fn from_spec(spec: &Spec) -> Result<Self, InputError> {
        let mut options = IoOptions::default();
        for (k, v) in &spec.params {
            options.set(k, v)?;
        }
        options.validate()?;
        let jobs = vec![JobDef { options, given: spec.params.clone() }];
        if let Some(problem) = check_jobs(&jobs).into_iter().next() {
            return Err(InputError::new(problem));
        }
        Ok(Self::new(jobs, Vec::new()))
    }

    /// From a parsed fio job file.
    pub fn from_job_file(file: FioJobFile) -> Self {
        Self::new(file.jobs, file.global_options)
    }

    /// Jobs split into stages that run one after the other: `stonewall` starts one, as
    /// fio waits there for every job before it to end. A stage's jobs start together.
    fn groups(&self) -> Vec<Vec<&JobDef>> {
        stages_of(&self.jobs)
    }

    /// fio's reporting group (`groupid`) of each job of each stage, in [`Self::groups`]'
    /// shape: `stonewall` and `new_group` start a new one, except on the file's first job.
    /// `new_group` alone does not make a stage: its jobs run with those before it.
    fn group_ids(&self) -> Vec<Vec<u32>> {
        group_ids_of(&self.jobs)
    }

    /// Every clone's buffer seeds, by thread number (jobs in the file's order, each job's
    /// clones in turn), when a job dedupes: its working set may draw on any clone's stream.
    /// Empty when none does.
    fn buffer_seeds(&self) -> Arc<[dedupe::BufferSeeds]> {
        if self.jobs.iter().all(|j| j.options.dedupe_percentage == 0) {
            return Arc::from(Vec::new());
        }
        let mut out = Vec::new();
        for job in &self.jobs {
            for _ in 0..job.options.clones() {
                let thread_number = out.len() as u32 + 1;
                out.push(dedupe::BufferSeeds::of(&job.options, thread_number));
            }
        }
        out.into()
    }

    /// The paths of a job's clone's files, named as fio names them. Names are plain (checked
    /// by `IoOptions::validate`), so every path is a direct child of `root`.
    fn clone_files(root: &Path, o: &IoOptions, clone: u32) -> Vec<PathBuf> {
        // A job on client k keeps its files under client k's root.
        match &o.filename {
            Some(name) => vec![root.join(name)],
            None => (0..o.nrfiles).map(|i| root.join(o.file_name(clone, i))).collect(),
        }
    }
}

/// `job` with the size fio finds on the target when the job starts: `fill_device` (fio's
/// `fill_fs`) with no size writes until ENOSPC, with nothing preallocated; a job with no
/// size that names its file (`filename=`) takes the size of that file, which an earlier job
/// or run made, as fio takes it. Other jobs as they are.
fn sized(job: &JobDef, root: BorrowedFd<'_>) -> Result<JobDef, String> {
    let o = &job.options;
    let mut out = job.clone();
    if o.fill_device && o.size.is_none() && o.filesize.is_none() {
        // fio's size is then unbounded (-1): the writes go on until ENOSPC. Here: one block
        // more than the whole filesystem, which no write can pass.
        let fs = rustix::fs::fstatvfs(root).map_err(|e| format!("job '{}': fill_device: statvfs: {e}", o.name))?;
        let bs = o.max_bs().max(1);
        out.options.size =
            Some(fs.f_blocks.saturating_mul(fs.f_frsize).div_ceil(bs).saturating_add(1).saturating_mul(bs));
        out.options.fallocate = options::Fallocate::None;
        return Ok(out);
    }
    let (None, None, Some(name)) = (o.size, o.filesize, &o.filename) else { return Ok(out) };
    let st = rustix::fs::statat(root, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW).map_err(|e| {
        format!(
            "job '{}' has no size, and its file '{}' cannot be used for one ({e}): give size= (fio: you need to specify size=)",
            o.name,
            fsarena_core::printable(name)
        )
    })?;
    let len = u64::try_from(st.st_size).unwrap_or(0);
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile || len <= o.offset {
        return Err(format!(
            "job '{}' has no size, and its file '{}' is not a regular file with data past offset={}: give size=",
            o.name,
            fsarena_core::printable(name),
            o.offset
        ));
    }
    out.options.size = Some(len - o.offset);
    if o.max_bs() > len - o.offset {
        return Err(format!("job '{}': bs={} is larger than its file's {} bytes", o.name, o.max_bs(), len - o.offset));
    }
    Ok(out)
}

/// `jobs` in stages that run one after the other: `stonewall` starts one, as fio waits
/// there for every job before it to end. A stage's jobs start together.
fn stages_of(jobs: &[JobDef]) -> Vec<Vec<&JobDef>> {
    let mut stages: Vec<Vec<&JobDef>> = Vec::new();
    for job in jobs {
        match stages.last_mut() {
            Some(g) if !job.options.stonewall => g.push(job),
            _ => stages.push(vec![job]),
        }
    }
    stages
}

/// fio's reporting group (`groupid`) of each job, in [`stages_of`]' shape: `stonewall` and
/// `new_group` start a new one, except on the first job (fio's `prev_group_jobs`).
fn group_ids_of(jobs: &[JobDef]) -> Vec<Vec<u32>> {
    let mut id = 0u32;
    let mut first = true;
    stages_of(jobs)
        .iter()
        .map(|stage| {
            stage
                .iter()
                .map(|job| {
                    if (job.options.stonewall || job.options.new_group) && !first {
                        id += 1;
                    }
                    first = false;
                    id
                })
                .collect()
        })
        .collect()
}

/// What a job file's jobs ask of each other that fsarena cannot do or fio refuses: one line
/// each. `wait_for` names one other job, by a name one job has (fio's checks); that job runs
/// in the same stage or an earlier one (fsarena runs stages in order, so a later one would
/// never end first); no ring of jobs waiting for each other; a stage of job processes within
/// the shared mapping's bounds.
pub(crate) fn check_jobs(jobs: &[JobDef]) -> Vec<String> {
    let mut problems = Vec::new();
    let stages = stages_of(jobs);
    let stage_of = |name: &str| stages.iter().position(|st| st.iter().any(|j| j.options.name == name));
    for (si, stage) in stages.iter().enumerate() {
        for job in stage {
            let o = &job.options;
            let Some(waitee) = &o.wait_for else { continue };
            let named = jobs.iter().filter(|j| &j.options.name == waitee).count();
            let name = fsarena_core::printable(&o.name);
            let w = fsarena_core::printable(waitee);
            if waitee == &o.name {
                problems.push(format!("job '{name}': wait_for={w}: a job cannot wait for itself"));
            } else if named == 0 {
                problems
                    .push(format!("job '{name}': wait_for={w}: no job is named '{w}': expected another job's name"));
            } else if named > 1 {
                problems.push(format!(
                    "job '{name}': wait_for={w}: {named} jobs are named '{w}': expected a name one job has"
                ));
            } else if stage_of(waitee).is_some_and(|ws| ws > si) {
                problems.push(format!(
                    "job '{name}': wait_for={w}: '{w}' runs after a stonewall that comes after '{name}': waiting for a job of a later stage is not supported by fsarena (it runs stages in order); move '{w}' before the stonewall"
                ));
            } else {
                // Follow the chain within the stage: it must end.
                let mut at = waitee.clone();
                for _ in 0..stage.len() {
                    match stage.iter().find(|j| j.options.name == at).and_then(|j| j.options.wait_for.clone()) {
                        Some(next) if next == o.name => {
                            problems.push(format!(
                                "job '{name}': wait_for={w}: '{w}' waits, in turn, for '{name}': jobs that wait for each other never start"
                            ));
                            break;
                        }
                        Some(next) => at = next,
                        None => break,
                    }
                }
            }
        }
    }
    for stage in &stages {
        let clones: u64 = stage.iter().map(|j| u64::from(j.options.clones())).sum();
        if stage.iter().any(|j| !j.options.thread)
            && (clones > process::MAX_STAGE_CLONES as u64 || stage.len() > process::MAX_STAGE_JOBS)
        {
            problems.push(format!(
                "jobs '{}' to '{}' run together as processes in {clones} clones of {} jobs: at most {} clones (fio's limit of jobs) and {} jobs run together (put a stonewall between them, or thread=1)",
                fsarena_core::printable(&stage[0].options.name),
                fsarena_core::printable(&stage[stage.len() - 1].options.name),
                stage.len(),
                process::MAX_STAGE_CLONES,
                process::MAX_STAGE_JOBS
            ));
        }
    }
    problems
}

/// One clone's result, ready to merge into a job or group result.
struct Finished {
    job_index: usize,
    /// The client it ran on (0 for the first).
    client: usize,
    result: CloneResult,
}

impl Workload for IoWorkload {
    fn kind(&self) -> &'static str {
        "io"
    }

    fn params(&self) -> Vec<(String, String)> {
        match self.jobs.as_slice() {
            [job] if self.global_options.is_empty() => job.given.clone(),
            // One job of a job file: its name and its own options (the globals are in the
            // report's global options).
            [job] => std::iter::once(("name".to_string(), job.options.name.clone())).chain(job.given.clone()).collect(),
            jobs => jobs.iter().map(|j| ("job".to_string(), j.options.name.clone())).collect(),
        }
    }

    fn global_options(&self) -> Vec<(String, String)> {
        self.global_options.clone()
    }

    fn describe(&self) -> Vec<String> {
        // fio's own start-of-job line (`name: (g=0): rw=read, bs=(R) ...`), then the options
        // that decide what moves, in fio's words, so a fio user reads the plan as a job file.
        let mut lines = Vec::new();
        for (group, ids) in self.groups().into_iter().zip(self.group_ids()) {
            for (job, group_id) in group.into_iter().zip(ids) {
                let o = &job.options;
                let bs = |b: u64| format!("{b}B-{b}B");
                lines.push(format!(
                    "{}: (g={group_id}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
                    o.name,
                    o.rw.fio_name(),
                    bs(o.bs[0]),
                    bs(o.bs[1]),
                    bs(o.bs[0]),
                    o.ioengine,
                    o.iodepth
                ));
                let mut words = options::fio_words(o);
                // fsarena's own, said only where it changes what runs (fio has one client).
                if o.clients > 1 {
                    words.push(format!("clients={} ({} clones in all)", o.clients, o.clones()));
                }
                lines.push(format!("  {}", words.join(" ")));
                if let (Some(path), Some(name)) = (&o.filename_path, &o.filename) {
                    lines.push(format!(
                        "  filename={}: run as '{}' in the target (fsarena runs jobs on the filesystem under test)",
                        fsarena_core::printable(path),
                        fsarena_core::printable(name)
                    ));
                }
            }
        }
        lines
    }

    fn footprint(&self) -> Footprint {
        bounds::footprint(&self.jobs, &self.groups())
    }

    fn parts(&self) -> Vec<String> {
        let units = self.units();
        if units.len() < 2 {
            return Vec::new();
        }
        units.into_iter().map(|u| u.name).collect()
    }

    /// Groups run one after the other, a group's jobs together: the sum over groups of the
    /// longest job in each, when every job's duration is fixed.
    fn estimate(&self) -> Option<std::time::Duration> {
        let mut total = std::time::Duration::ZERO;
        for group in self.groups() {
            let mut longest = std::time::Duration::ZERO;
            for job in group {
                longest = longest.max(job::duration(&job.options)?);
            }
            total += longest;
        }
        Some(total)
    }

    fn clients(&self) -> u32 {
        self.jobs.iter().map(|j| j.options.clients).max().unwrap_or(1)
    }

    fn run(&self, env: &RunEnv<'_>) -> Result<Vec<Measurement>, WorkloadError> {
        // Under MPI on several hosts whose clients are the hosts: this rank runs one client's
        // share (its jobs' numjobs clones), the other hosts' ranks the others'.
        if env.team.is_some_and(|t| t.client.is_some()) && self.clients() > 1 {
            let mut one = self.clone();
            for job in &mut one.jobs {
                job.options.clients = 1;
            }
            return one.run(env);
        }
        let fail = |message| WorkloadError { message, partial: Vec::new() };
        // One root per client the jobs use: the target's root first, then the other
        // clients' mounts of the same filesystem.
        let wanted = self.clients() as usize;
        if wanted > env.client_roots.len().max(1) {
            return Err(fail(format!(
                "clients={wanted}: the target has {} client mount(s); a shared filesystem mounted once per client \
                 (glusterfs:clients={wanted}) runs more",
                env.client_roots.len().max(1)
            )));
        }
        let mut root_paths: Vec<&Path> = vec![env.root];
        root_paths.extend(env.client_roots.iter().skip(1).take(wanted.saturating_sub(1)).map(PathBuf::as_path));
        let owned = root_paths.iter().map(|p| files::open_root(p)).collect::<Result<Vec<_>, _>>().map_err(fail)?;
        let roots: Vec<BorrowedFd<'_>> = owned.iter().map(AsFd::as_fd).collect();
        let clients = Clients { paths: &root_paths, fds: &roots };
        let mut failure: Option<String> = None;
        let mut parts: Vec<Measurement> = Vec::new();
        let mut complete = true;
        // fio numbers every clone of the file from 1, group after group: its logs' N.
        let mut first_thread = 1;
        let buffer_seeds = self.buffer_seeds();
        // fio's flows count every clone's weight from the start, and each clone's until it exits.
        let flows =
            flow::Flows::of(&self.jobs).map_err(|e| fail(format!("cannot share memory for flow control: {e}")))?;
        // fio's exitall with exit_what=all: the groups after are reported, and not run.
        let mut exited_all = false;
        let any_io = self.jobs.iter().any(|j| !j.options.noio());
        let stages = self.groups().len();
        for (stage, (group, ids)) in self.groups().into_iter().zip(self.group_ids()).enumerate() {
            // Sizes fio takes from the target when the stage starts (an earlier stage may have
            // made the file).
            let sized = match group.iter().map(|j| sized(j, roots[0])).collect::<Result<Vec<JobDef>, String>>() {
                Ok(jobs) => jobs,
                Err(e) => {
                    failure.get_or_insert(e);
                    complete = false;
                    break;
                }
            };
            let group: Vec<&JobDef> = sized.iter().collect();
            let ran = if exited_all {
                Ok(not_run(&group, &ids))
            } else {
                let last_with_io = any_io && stage + 1 == stages;
                let in_file = InFile { threads: (first_thread, &buffer_seeds), flows: &flows, last_with_io };
                run_group(env, &clients, &group, &ids, &self.created, in_file)
            };
            exited_all |= group.iter().any(|j| j.options.exitall && j.options.exit_what == ExitWhat::All);
            first_thread += group.iter().map(|j| j.options.clones()).sum::<u32>();
            match ran {
                Ok(units) => {
                    for (mut jobs, totals) in units {
                        if let Some(e) = jobs.iter().find_map(|j| j.error_message.clone()) {
                            failure.get_or_insert(e);
                        }
                        // A single job's histograms are the measurement's own: stored once.
                        if let [job] = jobs.as_mut_slice() {
                            job.read.clat_histogram = None;
                            job.write.clat_histogram = None;
                            job.sync_histogram = None;
                        }
                        let mut m =
                            Measurement { complete: true, fio: Some(FioDetail { jobs }), ..Measurement::default() };
                        totals.metrics(&mut m);
                        parts.push(m);
                    }
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
            if failure.is_some() || env.stop.load(Ordering::Relaxed) {
                complete = false;
                break;
            }
        }
        if !complete {
            match parts.last_mut() {
                Some(last) => last.complete = false,
                None => parts.push(Measurement::default()),
            }
        }
        let keep_for_next = env.keep_files && complete && failure.is_none();
        if !self.jobs.iter().any(|j| j.options.keep) && !keep_for_next {
            // Only what this workload created, and only while it is still that file.
            self.created.remove_all(&root_paths, &roots);
        }
        match failure {
            Some(message) => Err(WorkloadError { message, partial: parts }),
            None => Ok(parts),
        }
    }
}

/// One result of an io workload: a job (its clones summed), or a whole reporting group under
/// `group_reporting`, as fio reports them.
struct Unit {
    /// The job's name; a group is named after its first job, as fio's group report.
    name: String,
}

impl IoWorkload {
    /// The results a run gives, in order.
    fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (stage, ids) in self.groups().into_iter().zip(self.group_ids()) {
            for members in reporting_groups(&ids) {
                if members.iter().any(|&j| stage[j].options.group_reporting) {
                    units.push(Unit { name: stage[members[0]].options.name.clone() });
                } else {
                    units.extend(members.iter().map(|&j| Unit { name: stage[j].options.name.clone() }));
                }
            }
        }
        units
    }
}

/// Per-direction totals of one result (a job or a reporting group), for its metrics.
#[derive(Default)]
struct Totals {
    clat: [LatencyHistogram; 2],
    sync: LatencyHistogram,
    bytes: [u64; 2],
    ios: [u64; 2],
    runtime_ns: [u64; 2],
    cpu_ns: [u64; 2],
    clone_runtime_ns: u64,
    /// verify=: bytes read back and checked, and blocks that failed.
    verified_bytes: u64,
    verify_errors: u64,
    /// Per client, when the result's clones ran on more than one (`clients=`).
    clients: Vec<ClientTotals>,
}

/// One client's share of a result: what its clones moved and its longest clone's run time.
#[derive(Default, Clone)]
struct ClientTotals {
    bytes: [u64; 2],
    ios: [u64; 2],
    runtime_ns: u64,
}

impl ClientTotals {
    /// Bytes and I/Os per second, both directions together, over the client's run time.
    fn rates(&self) -> (f64, f64) {
        let secs = self.runtime_ns as f64 / 1e9;
        if secs <= 0.0 {
            return (0.0, 0.0);
        }
        ((self.bytes[READ] + self.bytes[WRITE]) as f64 / secs, (self.ios[READ] + self.ios[WRITE]) as f64 / secs)
    }
}

impl Totals {
    /// Sums the clones of one result; its runtime per direction is the longest clone's.
    fn of(finished: &[&Finished]) -> Self {
        let clones: Vec<&CloneResult> = finished.iter().map(|f| &f.result).collect();
        let mut t = Totals::default();
        let client_count = finished.iter().map(|f| f.client + 1).max().unwrap_or(1);
        if client_count > 1 {
            t.clients = vec![ClientTotals::default(); client_count];
            for f in finished {
                let c = &mut t.clients[f.client];
                for d in [READ, WRITE] {
                    c.bytes[d] += f.result.bytes[d];
                    c.ios[d] += f.result.ios[d];
                }
                c.runtime_ns = c.runtime_ns.max(f.result.runtime_ns);
            }
        }
        for d in [READ, WRITE] {
            t.runtime_ns[d] = clones.iter().filter(|c| c.ios[d] > 0).map(|c| c.runtime_ns).max().unwrap_or(0);
        }
        for c in &clones {
            for d in [READ, WRITE] {
                t.clat[d].merge(&c.clat[d]);
                t.bytes[d] += c.bytes[d];
                t.ios[d] += c.ios[d];
            }
            t.sync.merge(&c.sync);
            t.verified_bytes += c.verified_bytes;
            t.verify_errors += c.verify_errors;
            t.cpu_ns[0] += c.cpu.user_ns;
            t.cpu_ns[1] += c.cpu.sys_ns;
            t.clone_runtime_ns += c.runtime_ns;
        }
        t
    }

    /// read_iops, read_bw, read_lat_*, write_..., cpu_usr, cpu_sys; the latency histograms
    /// `read`, `write` and `sync`, and the counters `read_ios`, `read_bytes`, ...; over
    /// several clients also each client's counters (`client1.read_bytes`, ...) and
    /// `client_bw_min`/`_max`, `client_iops_min`/`_max` and `client_fairness` (the slowest
    /// client's bandwidth over the fastest's: 1 when every client got the same).
    fn metrics(&self, m: &mut Measurement) {
        self.client_metrics(m);
        m.add_latency("sync", &self.sync);
        for (d, name) in [(READ, "read"), (WRITE, "write")] {
            if self.ios[d] == 0 {
                continue;
            }
            m.add_latency(name, &self.clat[d]);
            m.count(&format!("{name}_ios"), self.ios[d]);
            m.count(&format!("{name}_bytes"), self.bytes[d]);
            // Over the direction's span (the longest clone's run time): ranks of an MPI run
            // merge these over their common span.
            let span = self.runtime_ns[d];
            m.push_rate(&format!("{name}_iops"), "ops/s", &format!("{name}_ios"), self.ios[d], span);
            m.push_rate(&format!("{name}_bw"), "bytes/s", &format!("{name}_bytes"), self.bytes[d], span);
            m.push(&format!("{name}_lat_mean"), "ns", Better::Lower, self.clat[d].mean());
            for (suffix, p) in [("p50", 50.0), ("p99", 99.0), ("p999", 99.9)] {
                m.push(&format!("{name}_lat_{suffix}"), "ns", Better::Lower, self.clat[d].percentile(p) as f64);
            }
        }
        if self.verified_bytes > 0 || self.verify_errors > 0 {
            m.count("bytes_verified", self.verified_bytes);
            m.count("verify_errors", self.verify_errors);
        }
        if self.clone_runtime_ns > 0 {
            let pct = |ns: u64| ns as f64 * 100.0 / self.clone_runtime_ns as f64;
            m.push("cpu_usr", "%", Better::Lower, pct(self.cpu_ns[0]));
            m.push("cpu_sys", "%", Better::Lower, pct(self.cpu_ns[1]));
        }
    }
}

impl Totals {
    fn client_metrics(&self, m: &mut Measurement) {
        if self.clients.len() < 2 {
            return;
        }
        for (k, c) in self.clients.iter().enumerate() {
            for (d, name) in [(READ, "read"), (WRITE, "write")] {
                if self.ios[d] > 0 {
                    m.count(&format!("client{}.{name}_ios", k + 1), c.ios[d]);
                    m.count(&format!("client{}.{name}_bytes", k + 1), c.bytes[d]);
                }
            }
        }
        let rates: Vec<(f64, f64)> = self.clients.iter().map(ClientTotals::rates).collect();
        let min = |f: fn(&(f64, f64)) -> f64| rates.iter().map(f).fold(f64::INFINITY, f64::min);
        let max = |f: fn(&(f64, f64)) -> f64| rates.iter().map(f).fold(0.0, f64::max);
        let (bw_min, bw_max) = (min(|r| r.0), max(|r| r.0));
        m.push("client_bw_min", "bytes/s", Better::Higher, bw_min);
        m.push("client_bw_max", "bytes/s", Better::Higher, bw_max);
        m.push("client_iops_min", "ops/s", Better::Higher, min(|r| r.1));
        m.push("client_iops_max", "ops/s", Better::Higher, max(|r| r.1));
        m.push("client_fairness", "ratio", Better::Higher, if bw_max > 0.0 { bw_min / bw_max } else { 0.0 });
    }
}

/// The roots of the clients a workload's jobs run on, index k being client k+1: their paths
/// (the files' names are built on them) and open descriptors (every file is opened relative
/// to its client's, never through a path).
struct Clients<'a> {
    paths: &'a [&'a Path],
    fds: &'a [BorrowedFd<'a>],
}

/// The thread number of a group's first clone, and every clone's buffer seeds in the file.
type Threads<'a> = (u32, &'a Arc<[dedupe::BufferSeeds]>);

/// What a group shares with the rest of its job file: its clones' thread numbers and buffer
/// seeds, the file's flows, and whether it is the last stage of a file with an I/O job (where
/// `exit_on_io_done` can end a cpuio job).
struct InFile<'a> {
    threads: Threads<'a>,
    flows: &'a flow::Flows,
    last_with_io: bool,
}

/// A group's clones (with their job's index) and the files they need.
type GroupPlan = (Vec<(usize, CloneSpec)>, Vec<FileNeed>);

/// The group's clones and the files they need, each file once: linear in clones × files
/// (a map, not a search of the list, finds a file named twice), and stopped by Ctrl-C.
fn plan_group(
    roots: &[&Path],
    group: &[&JobDef],
    ids: &[u32],
    stop: &AtomicBool,
    (first_thread, buffer_seeds): Threads<'_>,
) -> Result<GroupPlan, String> {
    let mut specs: Vec<(usize, CloneSpec)> = Vec::new();
    let mut needs: Vec<FileNeed> = Vec::new();
    // By name: every client's root shows the same filesystem, so a name two clients use
    // (a shared `filename=`) is one file, laid out once, through the first client using it.
    let mut index: HashMap<std::ffi::OsString, usize> = HashMap::new();
    for (ji, job) in group.iter().enumerate() {
        let o = &job.options;
        let file_size = o.file_size().unwrap_or(0);
        let diskless = o.engine_caps().diskless;
        for clone in 0..o.clones() {
            if clone % 1024 == 0 && stop.load(Ordering::Relaxed) {
                return Err("interrupted while planning the job files".into());
            }
            let client = o.client_of(clone);
            let Some(root) = roots.get(client) else {
                return Err(format!("clients={}: the target has {} client mount(s)", o.clients, roots.len()));
            };
            let files = IoWorkload::clone_files(root, o, clone);
            // fio's offset_increment: each clone starts further in.
            let o = &IoOptions { offset: o.clone_offset(clone), ..o.clone() };
            let thread_number = first_thread + specs.len() as u32;
            let file_sizes = job::drawn_file_sizes(o, thread_number, files.len());
            // A diskless engine (null) uses no file: nothing to lay out, as in fio.
            let used = if diskless { &files[..0] } else { &files[..] };
            for (fi, path) in used.iter().enumerate() {
                // filesize is the whole file (io_span), size the span after offset.
                let size = match file_sizes.get(fi) {
                    // fio's fill_device: the file grows with the writes, never set to a size.
                    _ if o.fill_device => 0,
                    Some(&s) => s,
                    None if o.filesize.is_some() => file_size,
                    None => o.offset + file_size,
                };
                let name = path.file_name().unwrap_or_default().to_os_string();
                match index.get(&name) {
                    Some(&i) => {
                        let n = &mut needs[i];
                        n.content |= o.rw.reads();
                        n.size = n.size.max(size);
                    }
                    None => {
                        index.insert(name, needs.len());
                        // fio lays a file out with the writes of the job that reads it.
                        let fill = if o.rw.reads() {
                            dedupe::BufferFill::new(o, thread_number, buffer_seeds)
                                .map(|f| (specs.len(), f, o.max_bs_of(WRITE) as usize))
                        } else {
                            None
                        };
                        needs.push(FileNeed {
                            path: path.clone(),
                            client,
                            size,
                            content: o.rw.reads(),
                            fallocate: o.fallocate,
                            seed: o.randseed ^ u64::from(clone),
                            fill,
                        });
                    }
                }
            }
            let verify_state = if o.verify_state_load {
                let biggest = file_sizes.iter().copied().fold(file_size, u64::max);
                Some(load_verify_state(root, o, clone, &files, biggest)?)
            } else {
                None
            };
            let spec = CloneSpec {
                options: o.clone(),
                clone,
                client,
                thread_number,
                files,
                file_size,
                file_sizes,
                align: 4096,
                verify_state,
                job_index: ji,
                report_group: (ids[ji] - ids[0]) as usize,
                // A waitee of an earlier stage has ended already (parse refuses a later one).
                waitee: o.wait_for.as_ref().and_then(|w| group.iter().position(|j| &j.options.name == w)),
                ends_with: None,
                buffer_seeds: buffer_seeds.clone(),
                after_layout: None,
            };
            specs.push((ji, spec));
        }
    }
    Ok((specs, needs))
}

/// The results of a group that did not run: each job (or the group, under group_reporting)
/// with nothing done, as fio reports the jobs an `exit_what=all` stopped before they began.
fn not_run(group: &[&JobDef], ids: &[u32]) -> Vec<(Vec<JobResult>, Totals)> {
    let mut units = Vec::new();
    for members in reporting_groups(ids) {
        let nothing = |j: usize| (vec![merge(group[j], ids[j], &[])], Totals::of(&[]));
        if members.iter().any(|&j| group[j].options.group_reporting) {
            units.push(nothing(members[0]));
        } else {
            units.extend(members.iter().map(|&j| nothing(j)));
        }
    }
    units
}

/// The jobs of a stage (indices into it) by reporting group, the groups in order: `ids` is
/// each job's group id, as [`IoWorkload::group_ids`] gives them (non-decreasing).
fn reporting_groups(ids: &[u32]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (j, id) in ids.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if ids[g[0]] == *id => g.push(j),
            _ => groups.push(vec![j]),
        }
    }
    groups
}

/// Lays out the group's files, runs its clones together and merges their results.
fn run_group(
    env: &RunEnv<'_>,
    clients: &Clients<'_>,
    group: &[&JobDef],
    ids: &[u32],
    created: &CreatedFiles,
    InFile { threads, flows, last_with_io }: InFile<'_>,
) -> Result<Vec<(Vec<JobResult>, Totals)>, String> {
    // Files first: which exist, which need data.
    let (mut specs, needs) = plan_group(clients.paths, group, ids, env.stop, threads)?;
    // fio's exit_on_io_done: a cpuio job ends once every job doing I/O has exited. Only in
    // the file's last stage can they all exit while it runs (a later stage's are pending),
    // and only when the file has one (with cpuio jobs alone fio runs them their runtime).
    if last_with_io {
        let io_jobs: Vec<usize> = (0..group.len()).filter(|&j| !group[j].options.noio()).collect();
        for (_, spec) in specs.iter_mut().filter(|(_, s)| s.options.cpu.exit_on_io_done) {
            spec.ends_with = Some(io_jobs.clone());
        }
    }
    // Only files that need data are laid out (reused ones are not: nothing is said of them).
    let t = Instant::now();
    // fio lays files out one at a time unless every job says create_serialize=0 (fio
    // serializes each job's creation that asks for it; one such job makes the layout serial).
    let parallel = match group.iter().any(|j| j.options.create_serialize) {
        true => 1,
        false => std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    let mut layout = layout::lay_out(clients.fds, &needs, parallel, env.stop, created).map_err(|(_, m)| m)?;
    // A clone whose file was laid out from its streams writes on from where the layout left
    // them, as fio's job does after laying its file out.
    for (clone, fill) in std::mem::take(&mut layout.filled) {
        if let Some((_, spec)) = specs.get_mut(clone) {
            spec.after_layout = Some(fill);
        }
    }
    let layout_ns = Nanos::from_duration(t.elapsed());
    if layout.bytes > 0 {
        (env.progress)(&format!(
            "laid out {} in {:.2}s ({}/s), excluded from the figures",
            fsarena_core::units::format_iec(layout.bytes as f64),
            layout_ns.as_secs_f64(),
            fsarena_core::units::format_iec(layout.bytes as f64 / layout_ns.as_secs_f64().max(1e-9))
        ));
    }
    // O_DIRECT: alignment as statx reports it, or a clear refusal.
    for (_, spec) in specs.iter_mut().filter(|(_, s)| s.options.direct && !s.options.engine_caps().diskless) {
        let path = &spec.files[0];
        let fs = || fsarena_engine::filesystem_name(env.root);
        match fsarena_engine::dio_alignment(path) {
            Ok(Some((mem, off))) => {
                spec.align = (mem as usize).max(4096);
                let o = &spec.options;
                if o.min_bs() % u64::from(off) != 0 || o.offset % u64::from(off) != 0 {
                    return Err(format!(
                        "direct=1 on {} needs bs and offset in multiples of {off} bytes (bs={}, offset={})",
                        fs(),
                        o.min_bs(),
                        o.offset
                    ));
                }
            }
            Ok(None) => {
                return Err(format!(
                    "direct=1: {} at {} does not support O_DIRECT; run with direct=0",
                    fs(),
                    env.root.display()
                ))
            }
            Err(e) => return Err(format!("cannot stat {}: {e}", path.display())),
        }
    }
    let names: Vec<String> = group.iter().map(|j| j.options.name.clone()).collect();
    // fio's thread=0 (its default): clones as forked processes; a group runs as threads only
    // when every job in it says thread=1.
    let as_processes = group.iter().any(|j| !j.options.thread);
    let unit = if as_processes { "process(es)" } else { "thread(s)" };
    let on = if clients.fds.len() > 1 { format!(" on {} clients", clients.fds.len()) } else { String::new() };
    (env.progress)(&format!("running {} ({} {unit}{on})", names.join(", "), specs.len()));
    let fresh = files_filecreate_makes(clients.fds, &specs);
    // fio's steady state: one check per reporting group over its clones, in fio's job order.
    let reports_as_one =
        |g: usize| group.iter().zip(ids).any(|(j, &id)| (id - ids[0]) as usize == g && j.options.group_reporting);
    let clone_options: Vec<(&IoOptions, usize, bool)> =
        specs.iter().map(|(_, s)| (&s.options, s.report_group, reports_as_one(s.report_group))).collect();
    let watch = steady::Watch::of(&clone_options)?;
    let finished: Result<Vec<Finished>, String> = if as_processes {
        process::run_clones(env, clients.fds, &specs, watch.as_ref(), flows).map(|results| {
            specs
                .iter()
                .zip(results)
                .map(|((ji, spec), result)| Finished { job_index: *ji, client: spec.client, result })
                .collect()
        })
    } else {
        run_threads(env, clients.fds, &specs, watch.as_ref(), flows)
    };
    // What filecreate made is fsarena's to remove, even after a failed group.
    for (client, path) in fresh {
        if let Ok(file) = files::open_existing(clients.fds[client], &path, OFlags::RDONLY) {
            created.record(&path, &file);
        }
    }
    let finished = finished?;
    write_logs(&finished)?;
    save_verify_states(clients, &specs, &finished, created)?;

    // fio's group_reporting merges the whole group; otherwise one result per job, whose
    // fio detail keeps one entry per clone as fio prints them.
    let per_layout = |mut r: JobResult| {
        r.layout_time = layout_ns;
        r.layout_bytes = layout.bytes;
        r
    };
    let mut units = Vec::new();
    for members in reporting_groups(ids) {
        // The clones of the group's jobs, by their index in `finished` (which is `specs`'
        // order, the steady-state watch's).
        if members.iter().any(|&j| group[j].options.group_reporting) {
            let everyone: Vec<(usize, &Finished)> =
                finished.iter().enumerate().filter(|(_, f)| members.contains(&f.job_index)).collect();
            let all: Vec<&CloneResult> = everyone.iter().map(|(_, f)| &f.result).collect();
            let first = members[0];
            let mut result = per_layout(merge(group[first], ids[first], &all));
            result.steadystate = everyone.first().and_then(|&(i, _)| watch.as_ref().and_then(|w| w.result(i)));
            let everyone: Vec<&Finished> = everyone.into_iter().map(|(_, f)| f).collect();
            units.push((vec![result], Totals::of(&everyone)));
        } else {
            for &ji in &members {
                let mine: Vec<(usize, &Finished)> =
                    finished.iter().enumerate().filter(|(_, f)| f.job_index == ji).collect();
                let jobs = mine
                    .iter()
                    .map(|&(i, f)| {
                        let mut result = per_layout(merge(group[ji], ids[ji], &[&f.result]));
                        result.steadystate = watch.as_ref().and_then(|w| w.result(i));
                        result
                    })
                    .collect();
                let mine: Vec<&Finished> = mine.into_iter().map(|(_, f)| f).collect();
                units.push((jobs, Totals::of(&mine)));
            }
        }
    }
    Ok(units)
}

/// The files of the group's `filecreate` clones that do not exist yet: those the group
/// creates (its client and path). Files that exist already are the user's, never removed.
fn files_filecreate_makes(roots: &[BorrowedFd<'_>], specs: &[(usize, CloneSpec)]) -> Vec<(usize, PathBuf)> {
    let creates = |s: &CloneSpec| s.options.engine_caps().file_op == Some(fsarena_engine::FileOp::Create);
    let mut fresh = Vec::new();
    for (_, spec) in specs.iter().filter(|(_, s)| creates(s)) {
        for path in &spec.files {
            let name = path.file_name().unwrap_or_default();
            if rustix::fs::statat(roots[spec.client], name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_err() {
                fresh.push((spec.client, path.clone()));
            }
        }
    }
    fresh
}

/// Clones as threads (`thread=1`), started together behind a barrier.
fn run_threads(
    env: &RunEnv<'_>,
    roots: &[BorrowedFd<'_>],
    specs: &[(usize, CloneSpec)],
    watch: Option<&steady::Watch>,
    flows: &flow::Flows,
) -> Result<Vec<Finished>, String> {
    // io keeps its own engine loop for now, not the phase runner (fsarena_workload::phase) meta and tree
    // share: a job runs for a time or a size with fio's ramp, rate and stonewall semantics.
    let placed = process::placed(roots, specs)?;
    let barrier = Barrier::new(specs.len());
    let gate = fsarena_workload::gate::StartGate::default();
    // The stage's own stop flag: a job's error or exitall with exit_what=all stops its stage,
    // not the run; the run's (Ctrl-C) is copied in while the stage runs, and the stage's into
    // every clone's, which each clone obeys (an exitall of exit_what=group stops its group's
    // clones, of exit_what=stonewall the clones already running).
    let group_stop = AtomicBool::new(env.stop.load(Ordering::Relaxed));
    let (stops, left) = stage_flags(specs);
    let groups: Vec<usize> = specs.iter().map(|(_, s)| s.report_group).collect();
    let running: Vec<AtomicBool> = specs.iter().map(|_| AtomicBool::new(false)).collect();
    let stage =
        job::Stage { stop: &group_stop, left: &left, flows, clones: &stops, groups: &groups, running: &running };
    let finished: Result<Vec<Finished>, String> = std::thread::scope(|s| {
        let bodies = placed.into_iter().enumerate().map(|(i, (ji, spec, root))| {
            let barrier = &barrier;
            let stop = &stops[i];
            let stage = &stage;
            let ss = watch.and_then(|w| w.slot(i));
            move || {
                let run = CloneRun { spec, root, start: barrier, stop, stage, live: env.live, ss };
                let result = fsarena_engine::with_engine_mode(spec.options.ioengine, spec.options.offload, run);
                Finished { job_index: ji, client: spec.client, result }
            }
        });
        let handles = fsarena_workload::gate::spawn_gated(s, &gate, "io job", bodies)?;
        while !handles.iter().all(|h| h.is_finished()) {
            if env.stop.load(Ordering::Relaxed) {
                group_stop.store(true, Ordering::Relaxed);
            }
            if group_stop.load(Ordering::Relaxed) {
                stops.iter().for_each(|s| s.store(true, Ordering::Relaxed));
            }
            if let Some(w) = watch {
                w.poll();
            }
            // fio's main loop: reaps the ended jobs, their flows' shares among them, every 10 ms.
            flows.reap();
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        flows.reap();
        Ok(handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect())
    });
    let finished = finished?;
    if finished.len() != specs.len() {
        return Err("a job thread panicked; this is a bug in fsarena".into());
    }
    Ok(finished)
}

/// A stop flag per clone of the stage, and its clones per job (what `wait_for` counts
/// down), for the clones of `specs`.
pub(crate) fn stage_flags(specs: &[(usize, CloneSpec)]) -> (Vec<AtomicBool>, Vec<std::sync::atomic::AtomicU32>) {
    let jobs = specs.iter().map(|(ji, _)| ji + 1).max().unwrap_or(0);
    let left: Vec<std::sync::atomic::AtomicU32> = (0..jobs)
        .map(|j| std::sync::atomic::AtomicU32::new(specs.iter().filter(|(ji, _)| *ji == j).count() as u32))
        .collect();
    (specs.iter().map(|_| AtomicBool::new(false)).collect(), left)
}

/// fio's log files of the group's clones (`write_bw_log` and the like), which each clone
/// wrote as it ran and ended: the first that could not be written fails the group.
fn write_logs(finished: &[Finished]) -> Result<(), String> {
    finished.iter().find_map(|done| done.result.log_error.clone()).map_or(Ok(()), Err)
}

/// fio's verify_state_save: each clone's bitmaps of written units, beside its files
/// (`local-NAME-CLONE-verify.state`), replaced on every run and removed with the files.
fn save_verify_states(
    clients: &Clients<'_>,
    specs: &[(usize, CloneSpec)],
    finished: &[Finished],
    created: &CreatedFiles,
) -> Result<(), String> {
    for ((_, spec), done) in specs.iter().zip(finished) {
        if done.result.written.is_empty() {
            continue;
        }
        let o = &spec.options;
        let state = verify::VerifyState {
            unit: o.min_bs(),
            files: spec.files.iter().cloned().zip(done.result.written.iter().cloned()).collect(),
        };
        let name = PathBuf::from(verify::VerifyState::file_name(&o.name, spec.clone));
        let Some(&root) = clients.fds.get(spec.client) else { continue };
        let err =
            |e: std::io::Error| format!("verify_state_save: {}: {e}", clients.paths[spec.client].join(&name).display());
        let file = match files::create_new(root, &name).map_err(err)? {
            Some(f) => {
                created.record(&clients.paths[spec.client].join(&name), &f);
                f
            }
            None => files::open_existing(root, &name, OFlags::WRONLY | OFlags::TRUNC).map_err(err)?,
        };
        serde_json::to_writer(std::io::BufWriter::new(file), &state).map_err(|e| err(std::io::Error::other(e)))?;
    }
    Ok(())
}

/// fio's verify_state_load: the bitmaps clone `clone` of the job saved in `root`, in the
/// order of `files`.
/// `biggest` is the largest of the files, which bounds the state's size.
fn load_verify_state(
    root: &Path,
    o: &IoOptions,
    clone: u32,
    files: &[PathBuf],
    biggest: u64,
) -> Result<Vec<Vec<u64>>, String> {
    let name = PathBuf::from(verify::VerifyState::file_name(&o.name, clone));
    let path = root.join(&name);
    let dir = files::open_root(root)?;
    let file = files::open_existing(dir.as_fd(), &name, OFlags::RDONLY).map_err(|e| {
        format!(
            "verify_state_load=1: no saved state at {} ({e}): run the job with verify_state_save=1 first",
            path.display()
        )
    })?;
    // The state is what verify_state_save wrote beside the files: read no more than its
    // largest for this job (a target's daemon may serve it as a file of any size).
    let bytes =
        fsarena_workload::served::read_capped(file, verify::VerifyState::largest(o.min_bs(), biggest, files), &path)
            .map_err(|e| format!("verify_state_load=1: {e}"))?;
    let state: verify::VerifyState = serde_json::from_slice(&bytes)
        .map_err(|e| format!("verify_state_load=1: {} is not a verify state: {e}", path.display()))?;
    if state.unit != o.min_bs() {
        return Err(format!(
            "verify_state_load=1: {} counts in blocks of {} bytes, the job's smallest block is {}",
            path.display(),
            state.unit,
            o.min_bs()
        ));
    }
    files
        .iter()
        .map(|f| {
            state
                .files
                .iter()
                .find(|(p, _)| p.file_name() == f.file_name())
                .map(|(_, w)| w.clone())
                .ok_or_else(|| format!("verify_state_load=1: {} has no state for {}", path.display(), f.display()))
        })
        .collect()
}

/// One clone's run, compiled for the engine its job names: the engine is chosen once per
/// thread, and the loop calls it directly.
struct CloneRun<'a> {
    spec: &'a CloneSpec,
    root: BorrowedFd<'a>,
    start: &'a dyn process::Start,
    /// Its own stop, which it obeys (its element of the stage's `clones`).
    stop: &'a AtomicBool,
    stage: &'a job::Stage<'a>,
    live: &'a fsarena_workload::Live,
    /// Where fio's steady-state check reads the clone, if its job keeps one.
    ss: Option<&'a steady::Slot>,
}

impl EngineVisitor for CloneRun<'_> {
    type Output = CloneResult;
    fn visit<E: Engine>(self) -> CloneResult {
        let mut r = job::run_clone::<E>(self.spec, self.root, self.start, self.stop, self.stage, self.live, self.ss);
        // Ended, stopped or failed: a job waiting for this one's clones may start, and its
        // flow goes on without it once reaped (fio's flow_exit_job).
        if let Some(left) = self.stage.left.get(self.spec.job_index) {
            left.fetch_sub(1, Ordering::SeqCst);
        }
        if let Some(flow) = self.stage.flow_of(&self.spec.options) {
            flow.leave(r.flow_ios, self.spec.options.flow);
        }
        // The clone writes the rest of its logs itself, in its own thread or process.
        if let Some(log) = r.log.take() {
            r.log_error = log.finish(r.runtime_ns).err();
        }
        r
    }
}

/// One JobResult from one or more clones, summed as fio's `sum_thread_stats` does.
fn merge(job: &JobDef, group_id: u32, clones: &[&CloneResult]) -> JobResult {
    let file_engine = job.options.engine_caps().file_op.is_some();
    let noio = job.options.noio();
    let direction = |d: usize| {
        let mut hist = LatencyHistogram::new();
        let (mut slat, mut lat) = (LatencyHistogram::new(), LatencyHistogram::new());
        let mut r = DirectionResult::default();
        let mut bw: Vec<f64> = Vec::new();
        let mut iops: Vec<f64> = Vec::new();
        for c in clones {
            hist.merge(&c.clat[d]);
            slat.merge(&c.slat[d]);
            lat.merge(&c.lat[d]);
            r.io_bytes += c.bytes[d];
            r.total_ios += c.ios[d];
            r.short_ios += c.short_ios[d];
            // fio times a direction that moved bytes: cpuio's and exec's reads of nothing
            // leave its runtime (and so its iops) at 0.
            if c.ios[d] > 0 && !(noio && c.bytes[d] == 0) {
                r.runtime = r.runtime.max(Nanos(c.runtime_ns));
            }
            let (b, i) = c.series[d].per_second();
            add_series(&mut bw, &b);
            add_series(&mut iops, &i);
        }
        r.clat = hist.summary(&FIO_PERCENTILES);
        r.clat_histogram = (!hist.is_empty()).then_some(hist);
        // Queued engines time submission; a synchronous engine's lat is its clat (`None`).
        r.slat = slat.summary(&[]);
        if !lat.is_empty() {
            r.total_lat = Some(lat.summary(&FIO_PERCENTILES));
            r.lat_histogram = Some(lat);
        } else if file_engine {
            // fio's file engines record a clat per file and no lat (FIO_NOSTATS).
            r.total_lat = Some(LatencyHistogram::new().summary(&[]));
        }
        r.bw_series = bw;
        r.iops_series = iops;
        r
    };
    let mut sync = LatencyHistogram::new();
    clones.iter().for_each(|c| sync.merge(&c.sync));
    let runtime_sum: u64 = clones.iter().map(|c| c.runtime_ns).sum();
    let pct = |ns: u64| if runtime_sum > 0 { ns as f64 * 100.0 / runtime_sum as f64 } else { 0.0 };
    let first_error = clones.iter().find_map(|c| c.error.clone());
    JobResult {
        name: job.options.name.clone(),
        group_id,
        clones: clones.len() as u32,
        options: job.given.clone(),
        read: direction(READ),
        write: direction(WRITE),
        trim: DirectionResult::default(),
        sync: sync.summary(&FIO_PERCENTILES),
        sync_histogram: (!sync.is_empty()).then_some(sync),
        datasync: job.options.fsync == 0 && job.options.fdatasync > 0,
        // fio sums the clones' run times under group_reporting (stat.c sum_thread_stats).
        job_runtime: Nanos(runtime_sum),
        layout_time: Nanos(0),
        layout_bytes: 0,
        verify_time: Nanos(clones.iter().map(|c| c.verify_ns).max().unwrap_or(0)),
        usr_cpu: pct(clones.iter().map(|c| c.cpu.user_ns).sum()),
        sys_cpu: pct(clones.iter().map(|c| c.cpu.sys_ns).sum()),
        ctx: clones.iter().map(|c| c.cpu.ctx).sum(),
        majf: clones.iter().map(|c| c.cpu.majflt).sum(),
        minf: clones.iter().map(|c| c.cpu.minflt).sum(),
        error: first_error.as_ref().map_or(0, |e| e.0),
        error_message: first_error.map(|e| e.1),
        steadystate: None,
    }
}

/// Adds `b` to `a` element by element, keeping the shorter length (clones start together;
/// a clone that ended early has no sample for the later seconds).
fn add_series(a: &mut Vec<f64>, b: &[f64]) {
    if a.is_empty() {
        a.extend_from_slice(b);
    } else {
        a.truncate(b.len());
        a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
