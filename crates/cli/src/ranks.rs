//! The processes of one run: one ([`Alone`]) or the ranks of an MPI job (`fsarena run --mpi`
//! under `mpirun`, see crates/cli/src/mpi.rs). The runner talks to them through [`Ranks`]
//! alone, so the phase loop is the same with or without MPI and needs no `cfg` of its own.
//!
//! Rank 0 provisions, tears down, prints and stores; every rank runs the workload on its own
//! share of the target. What ranks send each other is JSON with a wire version ([`WIRE`]), so
//! a rank built from another fsarena is refused rather than misread.

use crate::plan::Failure;
use fsarena_core::Measurement;
use serde::{Deserialize, Serialize};

/// The version of every message ranks exchange; bump it when one changes shape.
pub const WIRE: u32 = 1;

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

/// The ranks of this run: the MPI job's with `--mpi`, else [`Alone`]. Without the `mpi`
/// feature `--mpi` is bad input that says how to get it.
pub fn open(mpi: bool) -> Result<Box<dyn Ranks>, Failure> {
    if !mpi {
        return Ok(Box::new(Alone));
    }
    #[cfg(feature = "mpi")]
    {
        crate::mpi::World::init().map(|w| Box::new(w) as Box<dyn Ranks>)
    }
    #[cfg(not(feature = "mpi"))]
    {
        Err(fsarena_core::InputError::new(
            "--mpi: this fsarena was built without MPI; build it with `cargo build --release --features mpi` \
             (needs OpenMPI and libclang: apt-get install libopenmpi-dev libclang-dev), then start it with \
             `mpirun -np N fsarena run --mpi ...`",
        )
        .into())
    }
}

/// The rank the launcher gave this process (OpenMPI's mpirun, PMIx, Slurm's srun), read from
/// its environment before MPI starts; None outside a launcher.
pub fn launcher_rank() -> Option<usize> {
    ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse().ok())
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

/// One repetition's measurements of every rank, merged exactly on rank 0 (histograms and
/// counters add: see [`Measurement::merge`]), one per part; with the first rank's error,
/// named by rank and host. None on the other ranks.
pub fn merge_round(
    ranks: &dyn Ranks,
    hosts: &[String],
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
    let mut first_error = None;
    for (rank, bytes) in all.iter().enumerate() {
        let round: Round = decode(ranks, rank, bytes, |r: &Round| r.wire);
        if let (None, Some(e)) = (&first_error, round.error) {
            let host = hosts.get(rank).map_or("?", String::as_str);
            first_error = Some(format!("rank {rank} on {host}: {e}"));
        }
        for (part, m) in round.measurements.iter().enumerate() {
            match merged.get_mut(part) {
                Some(ours) => ours.merge(m),
                None => merged.push(m.clone()),
            }
        }
    }
    Some((merged, first_error))
}

/// Rank `rank`'s message, on rank 0; a message of another wire version or shape (a rank of
/// another fsarena build) ends the job: the ranks could not agree on anything after it.
fn decode<T: serde::de::DeserializeOwned>(ranks: &dyn Ranks, rank: usize, bytes: &[u8], wire: impl Fn(&T) -> u32) -> T {
    match serde_json::from_slice::<T>(bytes) {
        Ok(v) if wire(&v) == WIRE => v,
        Ok(v) => {
            eprintln!(
                "fsarena: rank {rank} speaks wire version {}, rank 0 version {WIRE}: run the same fsarena on every rank",
                wire(&v)
            );
            ranks.abort(1)
        }
        Err(e) => {
            eprintln!(
                "fsarena: rank {rank} sent a message rank 0 cannot read ({e}): run the same fsarena on every rank"
            );
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
    let rank = ranks.rank();
    let Some(client) = roots.get(rank % roots.len().max(1)) else { return std::path::PathBuf::new() };
    if ranks.distributed() {
        client.join(format!("rank-{rank}"))
    } else {
        client.clone()
    }
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
        let (merged, error) = merge_round(&leader, &hosts, vec![ours], None).unwrap_or_default();
        assert_eq!(error, None);
        let all = LatencyHistogram::of([1_000, 2_000, 3_000, 10_000, 20_000]);
        assert_eq!(merged[0].latency.get("write"), Some(&all));
        assert_eq!(merged[0].counters.get("write_ios"), Some(&5));
    }

    #[test]
    fn a_rank_error_names_rank_and_host() {
        let (ours, _) = measured(&[1_000], None);
        let (_, theirs) = measured(&[1_000], Some("No space left on device"));
        let leader = Leader { others: vec![theirs] };
        let hosts = vec!["a".to_string(), "b".to_string()];
        let (_, error) = merge_round(&leader, &hosts, vec![ours], None).unwrap_or_default();
        assert_eq!(error.as_deref(), Some("rank 1 on b: No space left on device"));
    }

    #[test]
    fn any_is_true_everywhere_when_true_anywhere() {
        assert!(Leader { others: vec![vec![1]] }.any(false));
        assert!(!Leader { others: vec![vec![0]] }.any(false));
        assert!(Alone.any(true) && !Alone.any(false));
    }
}
