//! The processes of one run: one ([`Alone`]) or the ranks of an MPI job (`fsarena run --mpi`
//! under `mpirun`, see crates/cli/src/mpi.rs). The runner talks to them through [`Ranks`]
//! alone, so the phase loop is the same with or without MPI and needs no `cfg` of its own.
//!
//! Rank 0 provisions, tears down, prints and stores; every rank runs the workload on its own
//! share of the target. What ranks send each other is JSON with a wire version ([`WIRE`]), so
//! a rank built from another fsarena is refused rather than misread.

use crate::output::say;
use fsarena_core::{Better, Measurement};
use serde::{Deserialize, Serialize};

/// The version of every message ranks exchange; bump it when one changes shape.
pub const WIRE: u32 = 2;

/// The collective operations the runner needs. Every rank calls them in the same order; the
/// runner keeps that order by taking every decision that ends a loop collectively
/// ([`Ranks::any`]).
pub trait Ranks {
    /// This process's rank, 0 to `size() - 1`.
    fn rank(&self) -> usize;
    /// How many ranks run.
    fn size(&self) -> usize;
    /// Returns once every rank has called it: the phases start and end together.
    fn barrier(&self);
    /// Every rank's `bytes`, in rank order, on rank 0; None on the others.
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's `bytes` on every rank (the others' argument is ignored).
    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8>;
    /// Ends every rank of the job at once with exit code `code` (MPI_Abort): for a rank that
    /// cannot go on with the others, after it said why.
    fn abort(&self, code: i32) -> !;
    /// Whether this run is spread over MPI ranks (then each rank works in its own `rank-K`
    /// directory), even a job of one rank.
    fn distributed(&self) -> bool {
        true
    }
    /// [`Ranks::any`] for any one thread to call while no other thread calls MPI (MPI's
    /// serialized threading level); None when only the main thread may call MPI.
    fn any_from_any_thread(&self) -> Option<Box<dyn Fn(bool) -> bool + Sync + '_>> {
        None
    }
    /// True on every rank when `flag` is true on any: how a stop (an interrupt, a failure on
    /// one rank) becomes every rank's.
    fn any(&self, flag: bool) -> bool {
        if self.size() == 1 {
            return flag;
        }
        let gathered = self.gather(&[u8::from(flag)]);
        let any = gathered.is_some_and(|all| all.iter().any(|b| b.first() == Some(&1)));
        self.broadcast(vec![u8::from(any)]).first() == Some(&1)
    }
}

/// A run without MPI: one rank, nothing to exchange.
#[derive(Debug)]
pub struct Alone;

impl Ranks for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }
    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        bytes
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
    fn distributed(&self) -> bool {
        false
    }
}

/// The rank the launcher gave this process (OpenMPI's mpirun, PMIx, Slurm's srun), read from
/// its environment before MPI starts; None outside a launcher.
pub fn launcher_rank() -> Option<usize> {
    ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
}

/// Runs `work`, one rank's share of a workload, giving it the rendezvous of
/// [`fsarena_workload::RunEnv::rendezvous`] when several ranks run.
///
/// Each meeting is one [`Ranks::any`] in which a rank still working says true; a rank whose
/// workload has ended goes on answering false until a meeting where every rank says false, so
/// ranks that call the rendezvous a different number of times (one failed early, another had
/// more to do) still leave together and the collectives after stay in order.
///
/// Where MPI lets any one thread call it at a time ([`Ranks::any_from_any_thread`]) the
/// workload runs on this thread and its rendezvous meets the other ranks itself, from the one
/// thread that calls it while the others wait (the phase runner's leader), this thread making
/// no MPI call until the workload has returned: a meeting then costs what mdtest's barrier
/// costs. Otherwise MPI is called from this (the main) thread only: the workload runs on a
/// thread of its own, and its rendezvous asks this thread to meet the other ranks, two
/// hand-offs between threads a meeting (with 4 ranks on 2 CPUs, a phase of one rmdir per
/// rank then took 4-5x mdtest's time).
pub fn run_in_step<T: Send>(ranks: &dyn Ranks, work: impl FnOnce(Option<&(dyn Fn() + Sync)>) -> T + Send) -> T {
    if ranks.size() == 1 {
        return work(None);
    }
    if let Some(any) = ranks.any_from_any_thread() {
        let rendezvous = || {
            any(true);
        };
        let out = work(Some(&rendezvous));
        while ranks.any(false) {}
        return out;
    }
    let (ask, asked) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<()>>();
    std::thread::scope(|s| {
        let worker = s.spawn(move || {
            let rendezvous = move || {
                let (done, wait) = std::sync::mpsc::channel();
                if ask.send(done).is_ok() {
                    let _ = wait.recv();
                }
            };
            work(Some(&rendezvous))
        });
        // Ends when the worker has dropped the rendezvous: its workload has returned.
        for done in asked {
            ranks.any(true);
            let _ = done.send(());
        }
        while ranks.any(false) {}
        match worker.join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// How many ranks the launcher started (OpenMPI's mpirun, PMI, Slurm's srun), read from its
/// environment before MPI starts; None outside a launcher.
pub fn launcher_size() -> Option<u64> {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
}

/// How many hosts the job runs on, in the environment fsarena's launcher gives its ranks
/// (`run --mpi --hostfile`, see crates/cli/src/launch.rs), for the plan's checks.
pub const HOSTS: &str = "FSARENA_MPI_HOSTS";

/// (ranks, hosts) of the job this process launches, known before MPI starts.
static SHAPE: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();

/// The launcher's job: `ranks` on `hosts` hosts, from its hostfile.
pub fn set_job_shape(ranks: u64, hosts: u64) {
    let _ = SHAPE.set((ranks, hosts));
}

/// How many hosts the job runs on, where fsarena launched it: in the launcher from the
/// hostfile, in its ranks from the environment it gave them. None under a launcher of the
/// user's own (only the run knows then).
pub fn hosts_of_job() -> Option<u64> {
    SHAPE.get().map(|s| s.1).or_else(|| std::env::var(HOSTS).ok()?.trim().parse().ok())
}

/// How many ranks the job this process launches has (in the launcher, before mpirun starts).
pub fn ranks_of_job() -> Option<u64> {
    SHAPE.get().map(|s| s.0)
}

/// What every rank of this MPI job, and only they, carry in their environment (`KEY=VALUE`):
/// Open MPI's job namespace. None outside such a job.
pub fn job_marker() -> Option<String> {
    ["PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"]
        .iter()
        .find_map(|key| std::env::var(key).ok().filter(|v| !v.is_empty()).map(|v| format!("{key}={v}")))
}

/// What one rank says about itself at the start: its host and its machine's facts.
#[derive(Debug, Serialize, Deserialize)]
struct Hello {
    wire: u32,
    host: String,
    environment: Vec<(String, String)>,
}

/// What one rank measured in one repetition, and its error if the workload failed.
#[derive(Debug, Serialize, Deserialize)]
struct Round {
    wire: u32,
    measurements: Vec<Measurement>,
    error: Option<String>,
}

/// This machine's name, as ranks and their failures are named.
pub fn host_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

/// The run's environment (on rank 0; empty elsewhere) and every rank's host, in rank order
/// (on rank 0). Alone: the machine's facts, as always. With several ranks: rank 0's facts,
/// `mpi_ranks`, and one `rank.K` entry per rank with its host and facts.
pub fn environments(ranks: &dyn Ranks) -> (Vec<(String, String)>, Vec<String>) {
    let machine = fsarena_target::environment::machine();
    if !ranks.distributed() {
        return (machine, vec![host_name()]);
    }
    let hello = Hello { wire: WIRE, host: host_name(), environment: machine.clone() };
    let bytes = serde_json::to_vec(&hello).unwrap_or_default();
    let Some(all) = ranks.gather(&bytes) else { return (Vec::new(), Vec::new()) };
    let mut environment = machine;
    environment.push(("mpi_ranks".into(), ranks.size().to_string()));
    let mut hosts = Vec::new();
    for (rank, bytes) in all.iter().enumerate() {
        let hello: Hello = decode(ranks, rank, bytes, |h: &Hello| h.wire);
        let facts: Vec<String> = hello.environment.iter().map(|(k, v)| format!("{k}={v}")).collect();
        environment.push((format!("rank.{rank}"), format!("host={}; {}", hello.host, facts.join("; "))));
        hosts.push(hello.host);
    }
    (environment, hosts)
}

/// How far each rank's CLOCK_MONOTONIC is ahead of rank 0's, in nanoseconds, and how far off
/// that may be, in rank order on rank 0 (empty on the others); every rank calls it. Ranks on
/// rank 0's host share its clock: 0, exactly.
///
/// Another host's offset is bounded in each of a few rounds: rank 0 reads its clock before
/// a barrier (`before`) and again once it has every rank's reading taken on leaving it
/// (`after`). A rank leaves the barrier only after rank 0 entered it, and its reading reaches
/// rank 0 before `after`: its reading was taken between `before` and `after` on rank 0's
/// clock, so its clock's lead lies in `[reading - after, reading - before]`. The rounds'
/// bounds intersected give the offset (the middle) and its error (half the width: the
/// quickest round's barrier and gather, microseconds on an idle network). Where they do not
/// intersect (a clock stepped meanwhile) the median of the readings' differences stands, its
/// error their half-range.
pub fn clock_offsets(ranks: &dyn Ranks, hosts: &[String]) -> (Vec<i64>, Vec<u64>) {
    if ranks.size() == 1 {
        return (vec![0], vec![0]);
    }
    const ROUNDS: usize = 7;
    // Per round: rank 0's clock before the barrier and after the gather, every rank's reading.
    let mut rounds: Vec<(u64, u64, Vec<u64>)> = Vec::new();
    for _ in 0..ROUNDS {
        let before = fsarena_workload::phase::monotonic_ns();
        ranks.barrier();
        let now = fsarena_workload::phase::monotonic_ns();
        if let Some(all) = ranks.gather(&now.to_le_bytes()) {
            let after = fsarena_workload::phase::monotonic_ns();
            let read = |b: &Vec<u8>| b.get(..8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_le_bytes);
            rounds.push((before, after, all.iter().map(read).collect()));
        }
    }
    let Some(home) = hosts.first() else { return (Vec::new(), Vec::new()) };
    let diff = |a: u64, b: u64| a.wrapping_sub(b) as i64;
    (0..ranks.size())
        .map(|rank| {
            if hosts.get(rank) == Some(home) {
                return (0, 0);
            }
            let readings = rounds
                .iter()
                .filter_map(|(before, after, all)| Some((*before, *after, *all.get(rank)?, *all.first()?)));
            let (mut lo, mut hi) = (i64::MIN, i64::MAX);
            let mut ahead = Vec::new();
            for (before, after, theirs, ours) in readings {
                lo = lo.max(diff(theirs, after));
                hi = hi.min(diff(theirs, before));
                ahead.push(diff(theirs, ours));
            }
            if lo <= hi && !ahead.is_empty() {
                let half = (hi - lo) / 2;
                return (lo + half, half.unsigned_abs());
            }
            ahead.sort_unstable();
            let median = ahead.get(ahead.len() / 2).copied().unwrap_or(0);
            let spread = match (ahead.first(), ahead.last()) {
                (Some(a), Some(b)) => (b - a).unsigned_abs() / 2,
                _ => 0,
            };
            (median, spread)
        })
        .unzip()
}

/// One repetition's measurements of every rank, merged exactly on rank 0 (histograms and
/// counters add: see [`Measurement::merge`]; rates over the phase's window across the
/// ranks, each rank's window moved onto rank 0's clock by its `offsets` entry), one per
/// part; with the first rank's error, named by rank and host. None on the other ranks.
pub fn merge_round(
    ranks: &dyn Ranks,
    hosts: &[String],
    offsets: &[i64],
    measurements: Vec<Measurement>,
    error: Option<String>,
) -> Option<(Vec<Measurement>, Option<String>)> {
    if ranks.size() == 1 {
        // Nothing to exchange: the measurement as measured, not a JSON round trip of it.
        return Some((measurements, error));
    }
    let round = Round { wire: WIRE, measurements, error };
    let bytes = serde_json::to_vec(&round).unwrap_or_default();
    let all = ranks.gather(&bytes)?;
    let mut merged: Vec<Measurement> = Vec::new();
    // Per part, each rank's share as one client.
    let mut per_rank: Vec<Vec<Option<ClientShare>>> = Vec::new();
    // Per part, each host's ranks merged, hosts in the order of their first rank.
    let mut per_host: Vec<Vec<(String, usize, Measurement)>> = Vec::new();
    let mut first_error = None;
    for (rank, bytes) in all.iter().enumerate() {
        let round: Round = decode(ranks, rank, bytes, |r: &Round| r.wire);
        if let (None, Some(e)) = (&first_error, round.error) {
            let host = hosts.get(rank).map_or("?", String::as_str);
            first_error = Some(format!("rank {rank} on {host}: {e}"));
        }
        for (part, mut m) in round.measurements.into_iter().enumerate() {
            m.shift_windows(offsets.get(rank).map_or(0, |ahead| -ahead));
            match merged.get_mut(part) {
                Some(ours) => ours.merge(&m),
                None => merged.push(m.clone()),
            }
            if per_rank.len() <= part {
                per_rank.resize_with(part + 1, Vec::new);
                per_host.resize_with(part + 1, Vec::new);
            }
            per_rank[part].push(client_share(&m));
            let host = hosts.get(rank).cloned().unwrap_or_else(|| "?".into());
            match per_host[part].iter_mut().find(|(h, _, _)| *h == host) {
                Some((_, ranks, ours)) => {
                    *ranks += 1;
                    ours.merge(&m);
                }
                None => per_host[part].push((host, 1, m)),
            }
        }
    }
    for ((m, shares), hosts) in merged.iter_mut().zip(&per_rank).zip(&per_host) {
        add_client_figures(m, shares);
        add_host_figures(m, hosts);
    }
    Some((merged, first_error))
}

/// The directions io reports, in its order.
const DIRECTIONS: [&str; 2] = ["read", "write"];

/// When the ranks ran on more than one host: each host's row as counters, its ranks'
/// measurements merged exactly (counters added, histograms merged, the rate over the host's
/// ranks' common window): `host.NAME.ranks`, and per direction that moved data
/// `host.NAME.DIR_bytes`, `_ios`, `_bw` (bytes/s), `_iops`, `_lat_mean_ns`, `_lat_p99_ns`;
/// and fairness between the hosts as between clients: `host_bw_min`, `host_bw_max`,
/// `host_fairness` (min / max of the hosts' bandwidths, each over its own window).
fn add_host_figures(m: &mut Measurement, hosts: &[(String, usize, Measurement)]) {
    if hosts.len() < 2 {
        return;
    }
    let mut bandwidths = Vec::new();
    for (host, ranks, h) in hosts {
        m.count(&format!("host.{host}.ranks"), *ranks as u64);
        let mut bw = 0.0;
        let mut moved = false;
        for dir in DIRECTIONS {
            let ios = h.counters.get(&format!("{dir}_ios")).copied().unwrap_or(0);
            if ios == 0 {
                continue;
            }
            moved = true;
            let bytes = h.counters.get(&format!("{dir}_bytes")).copied().unwrap_or(0);
            m.count(&format!("host.{host}.{dir}_bytes"), bytes);
            m.count(&format!("host.{host}.{dir}_ios"), ios);
            let rate = |name: &str| h.metric(name).map_or(0.0, |r| r.value);
            let dir_bw = rate(&format!("{dir}_bw"));
            bw += dir_bw;
            m.count(&format!("host.{host}.{dir}_bw"), dir_bw.round() as u64);
            m.count(&format!("host.{host}.{dir}_iops"), rate(&format!("{dir}_iops")).round() as u64);
            if let Some(lat) = h.latency(dir).filter(|l| !l.is_empty()) {
                m.count(&format!("host.{host}.{dir}_lat_mean_ns"), lat.mean().round() as u64);
                m.count(&format!("host.{host}.{dir}_lat_p99_ns"), lat.percentile(99.0));
            }
        }
        if moved {
            bandwidths.push(bw);
        }
    }
    if bandwidths.len() < 2 {
        return;
    }
    let min = bandwidths.iter().copied().fold(f64::INFINITY, f64::min);
    let max = bandwidths.iter().copied().fold(0.0, f64::max);
    m.push("host_bw_min", "bytes/s", Better::Higher, min);
    m.push("host_bw_max", "bytes/s", Better::Higher, max);
    m.push("host_fairness", "ratio", Better::Higher, if max > 0.0 { min / max } else { 0.0 });
}

/// The `clock_offsets` fact of a run on several hosts: each other host's clock ahead of rank
/// 0's and the error of that figure, as measured at the start ([`clock_offsets`]); None on one
/// host.
pub fn offsets_fact(hosts: &[String], offsets: &[i64], errors: &[u64]) -> Option<String> {
    let home = hosts.first()?;
    let mut said: Vec<String> = Vec::new();
    let mut seen: Vec<&String> = vec![home];
    for ((host, offset), error) in hosts.iter().zip(offsets).zip(errors) {
        if seen.contains(&host) {
            continue;
        }
        seen.push(host);
        said.push(format!("{host} {:+.1} ± {:.1} us", *offset as f64 / 1e3, *error as f64 / 1e3));
    }
    (!said.is_empty()).then(|| format!("{} (each host's clock ahead of {home}'s, rank 0's)", said.join(", ")))
}

/// One rank's share of an io result, as one client: bytes and I/Os per direction, and its
/// longest direction's span. None for a measurement without io's rates.
#[derive(Debug, Clone, Copy, Default)]
struct ClientShare {
    bytes: [u64; 2],
    ios: [u64; 2],
    span_ns: u64,
}

fn client_share(m: &Measurement) -> Option<ClientShare> {
    let mut share = ClientShare::default();
    let mut any = false;
    for (d, dir) in DIRECTIONS.iter().enumerate() {
        if let Some(basis) = m.rates.get(&format!("{dir}_bw")) {
            any = true;
            share.span_ns = share.span_ns.max(basis.span_ns);
            share.bytes[d] = m.counters.get(&format!("{dir}_bytes")).copied().unwrap_or(0);
            share.ios[d] = m.counters.get(&format!("{dir}_ios")).copied().unwrap_or(0);
        }
    }
    any.then_some(share)
}

/// Under MPI every rank is one client: io's per-client figures over the ranks, named as io
/// names them over client mounts on one host (`client1.read_bytes`, `client_bw_min`,
/// `client_bw_max`, `client_iops_min`, `client_iops_max`, `client_fairness`), each client's
/// rate over its own span. Only for io results of at least two ranks that do not have them.
fn add_client_figures(m: &mut Measurement, shares: &[Option<ClientShare>]) {
    let shares: Vec<ClientShare> = shares.iter().flatten().copied().collect();
    if shares.len() < 2 || m.metric("client_fairness").is_some() {
        return;
    }
    let rate = |n: u64, span: u64| if span == 0 { 0.0 } else { n as f64 * 1e9 / span as f64 };
    let mut bw = Vec::new();
    let mut iops = Vec::new();
    for (k, c) in shares.iter().enumerate() {
        for (d, dir) in DIRECTIONS.iter().enumerate() {
            if c.ios[d] > 0 {
                m.count(&format!("client{}.{dir}_ios", k + 1), c.ios[d]);
                m.count(&format!("client{}.{dir}_bytes", k + 1), c.bytes[d]);
            }
        }
        bw.push(rate(c.bytes[0] + c.bytes[1], c.span_ns));
        iops.push(rate(c.ios[0] + c.ios[1], c.span_ns));
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (bw_min, bw_max) = (min(&bw), max(&bw));
    m.push("client_bw_min", "bytes/s", Better::Higher, bw_min);
    m.push("client_bw_max", "bytes/s", Better::Higher, bw_max);
    m.push("client_iops_min", "ops/s", Better::Higher, min(&iops));
    m.push("client_iops_max", "ops/s", Better::Higher, max(&iops));
    m.push("client_fairness", "ratio", Better::Higher, if bw_max > 0.0 { bw_min / bw_max } else { 0.0 });
}

/// Rank `rank`'s message, on rank 0; a message of another wire version or shape (a rank of
/// another fsarena build) ends the job: the ranks could not agree on anything after it.
fn decode<T: serde::de::DeserializeOwned>(ranks: &dyn Ranks, rank: usize, bytes: &[u8], wire: impl Fn(&T) -> u32) -> T {
    match serde_json::from_slice::<T>(bytes) {
        Ok(v) if wire(&v) == WIRE => v,
        Ok(v) => {
            say!(
                "fsarena: rank {rank} speaks wire version {}, rank 0 version {WIRE}: run the same fsarena on every rank",
                wire(&v)
            );
            ranks.abort(1)
        }
        Err(e) => {
            say!("fsarena: rank {rank} sent a message rank 0 cannot read ({e}): run the same fsarena on every rank");
            ranks.abort(1)
        }
    }
}

/// Rank 0's answer to "can the workloads run?": the directories each client reaches the
/// target by (`Mounted::client_roots`), or why not. Rank 0 passes `Some`; every rank gets it.
pub fn share_roots(
    ranks: &dyn Ranks,
    outcome: Option<Result<Vec<std::path::PathBuf>, String>>,
) -> Result<Vec<std::path::PathBuf>, String> {
    if ranks.size() == 1 {
        return outcome.unwrap_or_else(|| Err("no target".into()));
    }
    let bytes = outcome.map(|o| serde_json::to_vec(&o).unwrap_or_default()).unwrap_or_default();
    let shared = ranks.broadcast(bytes);
    serde_json::from_slice(&shared).unwrap_or_else(|e| Err(format!("rank 0's answer could not be read: {e}")))
}

/// Where rank `rank` runs the workload: the client mount `rank % clients` (rank k of a
/// `glusterfs:clients=N` target uses client k mod N; every other kind has one), in its own
/// `rank-K` directory so that the ranks' files never collide. Alone: the root itself.
pub fn rank_root(ranks: &dyn Ranks, roots: &[std::path::PathBuf]) -> std::path::PathBuf {
    let client = client_root(ranks, roots);
    if ranks.distributed() {
        client.join(format!("rank-{}", ranks.rank()))
    } else {
        client
    }
}

/// The client mount rank `rank` reaches the target by (`rank % clients`), shared with the
/// other ranks of that client: where a workload whose ranks share one namespace works
/// ([`fsarena_workload::RunEnv::team`]).
pub fn client_root(ranks: &dyn Ranks, roots: &[std::path::PathBuf]) -> std::path::PathBuf {
    roots.get(ranks.rank() % roots.len().max(1)).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsarena_core::LatencyHistogram;

    /// Rank 0 of a job whose other ranks' messages are given: the collectives without MPI.
    struct Leader {
        others: Vec<Vec<u8>>,
    }

    impl Ranks for Leader {
        fn rank(&self) -> usize {
            0
        }
        fn size(&self) -> usize {
            1 + self.others.len()
        }
        fn barrier(&self) {}
        fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
            Some(std::iter::once(bytes.to_vec()).chain(self.others.iter().cloned()).collect())
        }
        fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
            bytes
        }
        fn abort(&self, code: i32) -> ! {
            panic!("abort({code})")
        }
    }

    fn measured(samples: &[u64], error: Option<&str>) -> (Measurement, Vec<u8>) {
        let mut m = Measurement { complete: true, ..Measurement::default() };
        m.add_latency("write", &LatencyHistogram::of(samples.iter().copied()));
        m.count("write_ios", samples.len() as u64);
        let round = Round { wire: WIRE, measurements: vec![m.clone()], error: error.map(String::from) };
        (m, serde_json::to_vec(&round).unwrap_or_default())
    }

    #[test]
    fn the_merged_histogram_is_the_one_of_all_samples() {
        let (ours, _) = measured(&[1_000, 2_000, 3_000], None);
        let (_, theirs) = measured(&[10_000, 20_000], None);
        let leader = Leader { others: vec![theirs] };
        let hosts = vec!["a".to_string(), "b".to_string()];
        let (merged, error) = merge_round(&leader, &hosts, &[0, 0], vec![ours], None).unwrap_or_default();
        assert_eq!(error, None);
        let all = LatencyHistogram::of([1_000, 2_000, 3_000, 10_000, 20_000]);
        assert_eq!(merged[0].latency.get("write"), Some(&all));
        assert_eq!(merged[0].counters.get("write_ios"), Some(&5));
    }

    #[test]
    fn io_rates_are_over_the_common_span_and_each_rank_is_a_client() {
        // Rank 0 read 300 MB in 3 s, rank 1 100 MB in 1 s, both from the same barrier: 400 MB
        // over the phase's 3 s, not 100 + 100 MB/s; each rank a client at 100 MB/s.
        let rank = |bytes: u64, span_ns: u64| {
            let mut m = Measurement { complete: true, ..Measurement::default() };
            m.count("read_bytes", bytes);
            m.count("read_ios", bytes / 1_000_000);
            m.push_rate("read_bw", "bytes/s", "read_bytes", bytes, span_ns);
            m.push_rate("read_iops", "ops/s", "read_ios", bytes / 1_000_000, span_ns);
            m
        };
        let theirs = Round { wire: WIRE, measurements: vec![rank(100_000_000, 1_000_000_000)], error: None };
        let leader = Leader { others: vec![serde_json::to_vec(&theirs).unwrap_or_default()] };
        let hosts = vec!["a".to_string(), "b".to_string()];
        let (merged, _) =
            merge_round(&leader, &hosts, &[0, 0], vec![rank(300_000_000, 3_000_000_000)], None).unwrap_or_default();
        let value = |name: &str| merged[0].metric(name).map(|m| m.value);
        assert_eq!(value("read_bw"), Some(400e6 / 3.0));
        assert_eq!(value("read_iops"), Some(400.0 / 3.0));
        assert_eq!(value("client_bw_min"), Some(100e6));
        assert_eq!(value("client_bw_max"), Some(100e6));
        assert_eq!(value("client_fairness"), Some(1.0));
        assert_eq!(merged[0].counters.get("client2.read_bytes"), Some(&100_000_000));
    }

    /// Rank 0 of ranks whose clocks read `ahead[r]` ns ahead of its own, plus `jitter[k]` in
    /// the k-th reading (how late the rank left the barrier), each reading taken `early` ns
    /// before rank 0's own, after a barrier that takes `barrier`.
    struct Skewed {
        ahead: Vec<i64>,
        jitter: Vec<i64>,
        round: std::cell::Cell<usize>,
        early: u64,
        barrier: std::time::Duration,
    }

    impl Ranks for Skewed {
        fn rank(&self) -> usize {
            0
        }
        fn size(&self) -> usize {
            self.ahead.len()
        }
        fn barrier(&self) {
            std::thread::sleep(self.barrier);
        }
        fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
            let now = u64::from_le_bytes(bytes.try_into().ok()?);
            let k = self.round.replace(self.round.get() + 1);
            let read = |r: usize| match r {
                0 => now,
                _ => (now - self.early).wrapping_add_signed(self.ahead[r] + self.jitter[k]),
            };
            Some((0..self.ahead.len()).map(|r| read(r).to_le_bytes().to_vec()).collect())
        }
        fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
            bytes
        }
        fn abort(&self, code: i32) -> ! {
            panic!("abort({code})")
        }
    }

    #[test]
    fn another_hosts_clock_offset_is_the_median_reading_and_rank_0s_hosts_is_0() {
        // Rank 1 on another host 100 s ahead, rank 2 on another 3 s behind, rank 3 on rank
        // 0's host (its reading, skewed here too, is not used: one host, one clock). One of
        // the seven rounds left the barrier 5 s late: the median is not moved by it.
        let ranks = Skewed {
            ahead: vec![0, 100_000_000_000, -3_000_000_000, 42],
            jitter: vec![2_000, 1_000, 5_000_000_000, 3_000, 1_500, 2_500, 1_200],
            round: std::cell::Cell::new(0),
            early: 0,
            barrier: std::time::Duration::ZERO,
        };
        let hosts: Vec<String> = ["a", "b", "c", "a"].map(String::from).to_vec();
        let (offsets, _) = clock_offsets(&ranks, &hosts);
        assert_eq!(ranks.round.get(), 7, "seven rounds");
        // The sorted jitters' middle is 2,000 ns.
        assert_eq!(offsets, vec![0, 100_000_002_000, -2_999_998_000, 0]);
        // The offsets put a phase the ranks ran together on one clock: rank 1's window
        // [100 s + 5 s, 100 s + 6 s] on its clock is [5 s, 6 s] on rank 0's, to the jitter.
        let on_rank_0 = |rank: usize, t: i64| t - offsets[rank];
        assert!((on_rank_0(1, 105_000_000_000) - 5_000_000_000).abs() <= 2_000);
    }

    #[test]
    fn another_hosts_offset_lies_within_its_stated_error_taken_from_rank_0s_clock_around_each_round() {
        // Rank 1 is 7 ms ahead, rank 2 2.5 s behind, each reading 0.4 ms before rank 0's own
        // (after the barrier rank 0 entered): the true lead is within the stated error, and
        // that error is no wider than a round (the 1 ms barrier and the gather).
        let ranks = Skewed {
            ahead: vec![0, 7_000_000, -2_500_000_000],
            jitter: vec![0; 7],
            round: std::cell::Cell::new(0),
            early: 400_000,
            barrier: std::time::Duration::from_millis(1),
        };
        let hosts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let (offsets, errors) = clock_offsets(&ranks, &hosts);
        assert_eq!((offsets[0], errors[0]), (0, 0));
        for r in 1..3 {
            let off = (offsets[r] - ranks.ahead[r]).unsigned_abs();
            assert!(off <= errors[r], "rank {r}: {} ± {} against {}", offsets[r], errors[r], ranks.ahead[r]);
            assert!(errors[r] < 5_000_000, "rank {r}: error {} ns", errors[r]);
        }
        let fact = offsets_fact(&hosts, &offsets, &errors).unwrap_or_default();
        // "b +7148.1 ± 553.3 us, c -2499851.9 ± 553.3 us (each host's clock ahead of a's, ...)"
        let figure = |host: &str| -> f64 {
            let at = fact.find(&format!("{host} ")).map_or(0, |i| i + host.len() + 1);
            fact[at..].split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
        };
        assert!((figure("b") - offsets[1] as f64 / 1e3).abs() < 0.1, "{fact}");
        assert!((figure("c") - offsets[2] as f64 / 1e3).abs() < 0.1, "{fact}");
        assert!(fact.contains(" ± ") && fact.ends_with("(each host's clock ahead of a's, rank 0's)"), "{fact}");
    }

    #[test]
    fn meta_rates_merge_over_the_ranks_window_on_rank_0s_clock() {
        // Two ranks on two hosts took turns: rank 0 stat 1000 items from 5 s to 6 s on its
        // clock, rank 1 from 6 s to 7 s on rank 0's clock, which its own clock (100 s ahead)
        // read as 106-107 s. Over the common window: 2000 in 2 s. Each built its own tree,
        // counted once.
        let rank = |start: u64, items: u64, tree: u64| {
            let mut m = Measurement { complete: true, ..Measurement::default() };
            for (name, count, shared) in [("file_stat", items, false), ("tree_creation", tree, true)] {
                let counter = format!("{name}_items");
                m.count(&counter, count);
                let window = Some((start, start + 1_000_000_000));
                let basis = fsarena_core::RateBasis { counter, span_ns: 1_000_000_000, window, shared };
                m.push_rate_basis(name, "ops/s", count, basis);
            }
            m
        };
        let theirs = Round { wire: WIRE, measurements: vec![rank(106_000_000_000, 1000, 1)], error: None };
        let leader = Leader { others: vec![serde_json::to_vec(&theirs).unwrap_or_default()] };
        let hosts = vec!["a".to_string(), "b".to_string()];
        let offsets = [0, 100_000_000_000];
        let (merged, _) =
            merge_round(&leader, &hosts, &offsets, vec![rank(5_000_000_000, 1000, 1)], None).unwrap_or_default();
        let value = |name: &str| merged[0].metric(name).map(|m| m.value);
        assert_eq!(value("file_stat"), Some(1000.0));
        assert_eq!(merged[0].counters.get("file_stat_items"), Some(&2000));
        assert_eq!(merged[0].counters.get("tree_creation_items"), Some(&1));
        // Without the offset the windows would be 100 s apart: a rate of 2000 / 102 s.
        let (unshifted, _) = merge_round(
            &Leader { others: vec![serde_json::to_vec(&theirs).unwrap_or_default()] },
            &hosts,
            &[0, 0],
            vec![rank(5_000_000_000, 1000, 1)],
            None,
        )
        .unwrap_or_default();
        assert!(unshifted[0].metric("file_stat").is_some_and(|m| m.value < 20.0));
    }

    #[test]
    fn a_rank_error_names_rank_and_host() {
        let (ours, _) = measured(&[1_000], None);
        let (_, theirs) = measured(&[1_000], Some("No space left on device"));
        let leader = Leader { others: vec![theirs] };
        let hosts = vec!["a".to_string(), "b".to_string()];
        let (_, error) = merge_round(&leader, &hosts, &[0, 0], vec![ours], None).unwrap_or_default();
        assert_eq!(error.as_deref(), Some("rank 1 on b: No space left on device"));
    }

    /// Ranks as threads of one process: real collectives over a shared barrier, so that the
    /// order of collective calls matters as it does over MPI.
    struct Team {
        rank: usize,
        size: usize,
        shared: std::sync::Arc<(std::sync::Barrier, std::sync::Mutex<Vec<Vec<u8>>>)>,
    }

    impl Ranks for Team {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }
        fn barrier(&self) {
            self.shared.0.wait();
        }
        fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
            self.shared.1.lock().unwrap()[self.rank] = bytes.to_vec();
            self.barrier();
            let all = (self.rank == 0).then(|| self.shared.1.lock().unwrap().clone());
            self.barrier();
            all
        }
        fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
            if self.rank == 0 {
                self.shared.1.lock().unwrap()[0] = bytes;
            }
            self.barrier();
            let out = self.shared.1.lock().unwrap()[0].clone();
            self.barrier();
            out
        }
        fn abort(&self, code: i32) -> ! {
            panic!("abort({code})")
        }
    }

    #[test]
    fn ranks_that_meet_a_different_number_of_times_still_leave_together() {
        // Rank 0 failed before its first phase, rank 1 ran two, rank 2 five: none waits
        // forever, and a barrier after (the runner's) still pairs up.
        let size = 3;
        let shared =
            std::sync::Arc::new((std::sync::Barrier::new(size), std::sync::Mutex::new(vec![Vec::new(); size])));
        let met: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = [0usize, 2, 5]
                .into_iter()
                .enumerate()
                .map(|(rank, phases)| {
                    let team = Team { rank, size, shared: shared.clone() };
                    s.spawn(move || {
                        let met = run_in_step(&team, |meet| {
                            let meet = meet.unwrap();
                            (0..phases).for_each(|_| meet());
                            phases
                        });
                        team.barrier();
                        met
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(met, [0, 2, 5]);
        assert!(run_in_step(&Alone, |meet| meet.is_none()), "one rank meets no one");
    }

    #[test]
    fn any_is_true_everywhere_when_true_anywhere() {
        assert!(Leader { others: vec![vec![1]] }.any(false));
        assert!(!Leader { others: vec![vec![0]] }.any(false));
        assert!(Alone.any(true) && !Alone.any(false));
    }
}
