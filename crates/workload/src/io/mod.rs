//! The fio-class `io` workload: fio's options, semantics and byte counts, with a leaner hot
//! loop.

mod bounds;
mod files;
mod fiorand;
mod iolog;
mod job;
pub mod jobfile;
mod keywords;
mod layout;
mod logstream;
pub mod offsets;
pub mod options;
mod pattern;
mod process;
mod queue;
mod rate;
pub(crate) mod verify;

use crate::{Footprint, RunEnv, Workload, WorkloadError};
use files::CreatedFiles;
use fsarena_core::{
    Better, DirectionResult, FioDetail, InputError, JobResult, Measurement, Nanos, Spec, FIO_PERCENTILES,
};
use fsarena_engine::{Engine, EngineVisitor};
use fsarena_stats::LatencyHistogram;
use job::{CloneResult, CloneSpec, READ, WRITE};
use jobfile::{FioJobFile, JobDef};
use layout::FileNeed;
use options::IoOptions;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// The `io` workload: one or more fio-style jobs, run group by group.
#[derive(Debug, Clone)]
pub struct IoWorkload {
    /// Jobs in order; `stonewall`/`new_group` start a new group.
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
        Ok(Self::new(vec![JobDef { options, given: spec.params.clone() }], Vec::new()))
    }

    /// From a parsed fio job file.
    pub fn from_job_file(file: FioJobFile) -> Self {
        Self::new(file.jobs, file.global_options)
    }

    /// Jobs split into groups that run one after the other.
    fn groups(&self) -> Vec<Vec<&JobDef>> {
        let mut groups: Vec<Vec<&JobDef>> = Vec::new();
        for job in &self.jobs {
            match groups.last_mut() {
                Some(g) if !(job.options.stonewall || job.options.new_group) => g.push(job),
                _ => groups.push(vec![job]),
            }
        }
        groups
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
        for (group_id, group) in self.groups().into_iter().enumerate() {
            for job in group {
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
        // fio's exitall with exit_what=all: the groups after are reported, and not run.
        let mut exited_all = false;
        for (group_id, group) in self.groups().into_iter().enumerate() {
            let ran = if exited_all {
                Ok(not_run(&group, group_id as u32))
            } else {
                run_group(env, &clients, &group, group_id as u32, &self.created, first_thread)
            };
            exited_all |= group.iter().any(|j| j.options.exitall && j.options.exit_what_all);
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
        for group in self.groups() {
            if group.iter().any(|j| j.options.group_reporting) {
                units.push(Unit { name: group[0].options.name.clone() });
            } else {
                units.extend(group.iter().map(|j| Unit { name: j.options.name.clone() }));
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

/// A group's clones (with their job's index) and the files they need.
type GroupPlan = (Vec<(usize, CloneSpec)>, Vec<FileNeed>);

/// The group's clones and the files they need, each file once: linear in clones × files
/// (a map, not a search of the list, finds a file named twice), and stopped by Ctrl-C.
fn plan_group(roots: &[&Path], group: &[&JobDef], stop: &AtomicBool, first_thread: u32) -> Result<GroupPlan, String> {
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
                        needs.push(FileNeed {
                            path: path.clone(),
                            client,
                            size,
                            content: o.rw.reads(),
                            fallocate: o.fallocate,
                            seed: o.randseed ^ u64::from(clone),
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
            };
            specs.push((ji, spec));
        }
    }
    Ok((specs, needs))
}

/// The results of a group that did not run: each job (or the group, under group_reporting)
/// with nothing done, as fio reports the jobs an `exit_what=all` stopped before they began.
fn not_run(group: &[&JobDef], group_id: u32) -> Vec<(Vec<JobResult>, Totals)> {
    let nothing = |job: &JobDef| (vec![merge(job, group_id, &[])], Totals::of(&[]));
    if group.iter().any(|j| j.options.group_reporting) {
        vec![nothing(group[0])]
    } else {
        group.iter().copied().map(nothing).collect()
    }
}

/// Lays out the group's files, runs its clones together and merges their results.
fn run_group(
    env: &RunEnv<'_>,
    clients: &Clients<'_>,
    group: &[&JobDef],
    group_id: u32,
    created: &CreatedFiles,
    first_thread: u32,
) -> Result<Vec<(Vec<JobResult>, Totals)>, String> {
    // Files first: which exist, which need data.
    let (mut specs, needs) = plan_group(clients.paths, group, env.stop, first_thread)?;
    // Only files that need data are laid out (reused ones are not: nothing is said of them).
    let t = Instant::now();
    let parallel = std::thread::available_parallelism().map_or(2, |n| n.get());
    let layout = layout::lay_out(clients.fds, &needs, parallel, env.stop, created).map_err(|(_, m)| m)?;
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
    let finished: Result<Vec<Finished>, String> = if as_processes {
        process::run_clones(env, clients.fds, &specs).map(|results| {
            specs
                .iter()
                .zip(results)
                .map(|((ji, spec), result)| Finished { job_index: *ji, client: spec.client, result })
                .collect()
        })
    } else {
        run_threads(env, clients.fds, &specs)
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
    let group_reporting = group.iter().any(|j| j.options.group_reporting);
    let per_layout = |mut r: JobResult| {
        r.layout_time = layout_ns;
        r.layout_bytes = layout.bytes;
        r
    };
    let mut units = Vec::new();
    if group_reporting {
        let all: Vec<&CloneResult> = finished.iter().map(|f| &f.result).collect();
        let everyone: Vec<&Finished> = finished.iter().collect();
        units.push((vec![per_layout(merge(group[0], group_id, &all))], Totals::of(&everyone)));
    } else {
        for (ji, job) in group.iter().enumerate() {
            let mine: Vec<&Finished> = finished.iter().filter(|f| f.job_index == ji).collect();
            let jobs = mine.iter().map(|f| per_layout(merge(job, group_id, &[&f.result]))).collect();
            units.push((jobs, Totals::of(&mine)));
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
) -> Result<Vec<Finished>, String> {
    // io keeps its own engine loop for now, not the phase runner (crate::phase) meta and tree
    // share: a job runs for a time or a size with fio's ramp, rate and stonewall semantics.
    let placed = process::placed(roots, specs)?;
    let barrier = Barrier::new(specs.len());
    let gate = crate::gate::StartGate::default();
    // The group's own stop flag: a job's exitall or error stops its group, not the run;
    // the run's (Ctrl-C) is copied in while the group runs.
    let group_stop = AtomicBool::new(env.stop.load(Ordering::Relaxed));
    let finished: Result<Vec<Finished>, String> = std::thread::scope(|s| {
        let bodies = placed.into_iter().map(|(ji, spec, root)| {
            let barrier = &barrier;
            let stop = &group_stop;
            move || {
                let run = CloneRun { spec, root, start: barrier, stop, live: env.live };
                let result = fsarena_engine::with_engine_mode(spec.options.ioengine, spec.options.offload, run);
                Finished { job_index: ji, client: spec.client, result }
            }
        });
        let handles = crate::gate::spawn_gated(s, &gate, "io job", bodies)?;
        while !handles.iter().all(|h| h.is_finished()) {
            if env.stop.load(Ordering::Relaxed) {
                group_stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect())
    });
    let finished = finished?;
    if finished.len() != specs.len() {
        return Err("a job thread panicked; this is a bug in fsarena".into());
    }
    Ok(finished)
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
    let bytes = crate::served::read_capped(file, verify::VerifyState::largest(o.min_bs(), biggest, files), &path)
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
    stop: &'a AtomicBool,
    live: &'a crate::Live,
}

impl EngineVisitor for CloneRun<'_> {
    type Output = CloneResult;
    fn visit<E: Engine>(self) -> CloneResult {
        let mut r = job::run_clone::<E>(self.spec, self.root, self.start, self.stop, self.live);
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
            if c.ios[d] > 0 {
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
