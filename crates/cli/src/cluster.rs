//! The run's ranks as one value: one process on one host, or an MPI job's ranks (`--mpi`),
//! and the cross-rank operations the runner needs, each a no-op on one host.

use crate::failure::Failure;
use crate::ranks::Ranks;

/// The ranks of this run: the MPI job's with `--mpi`, else [`Alone`]. Without the `mpi`
/// feature `--mpi` is bad input that says how to get it.
pub fn open(mpi: bool) -> Result<Box<dyn Ranks>, Failure> {
    if !mpi {
        return Ok(Box::new(crate::ranks::Alone));
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

/// The ranks of a run with what they learnt of each other at its start: every rank's host and
/// how far its clock is ahead of rank 0's. Every cross-rank step of the run goes through it;
/// on one host ([`crate::ranks::Alone`]) each is a no-op or the value as given.
pub struct Cluster<'a> {
    ranks: &'a dyn Ranks,
    /// Every rank's host, in rank order, on every rank.
    hosts: Vec<String>,
    /// Every rank's clock ahead of rank 0's, in nanoseconds (see [`crate::ranks::clock_offsets`]).
    clock_offsets: Vec<i64>,
}

/// Each host's client mounts of a target every host mounts itself, as rank 0 answers every
/// rank: the first failure, named by its host, instead.
type PerHost = Result<Vec<(String, Vec<std::path::PathBuf>)>, String>;

/// Where a rank works on one target: its own root and the target's client mounts.
#[derive(Default)]
pub struct Roots {
    /// Where this rank's workload runs (its `rank-K` directory under MPI).
    pub root: std::path::PathBuf,
    /// Every client mount of the target.
    pub clients: Vec<std::path::PathBuf>,
    /// The client mount this rank shares with the other ranks of its client.
    pub shared: std::path::PathBuf,
}

impl<'a> Cluster<'a> {
    /// Gathers every rank's host and machine (the run's environment, on rank 0) and the clock
    /// offsets; every rank calls it.
    pub fn gather(ranks: &'a dyn Ranks) -> (Self, Vec<(String, String)>) {
        let (mut environment, hosts) = crate::ranks::environments(ranks);
        let (clock_offsets, errors) = crate::ranks::clock_offsets(ranks, &hosts);
        if let Some(offsets) = crate::ranks::offsets_fact(&hosts, &clock_offsets, &errors) {
            environment.push(("clock_offsets".into(), offsets));
        }
        // Every rank learns every rank's host: which rank mounts a target on each host, and
        // which ranks are the clients of a step whose clients are hosts.
        let hosts = match ranks.size() {
            1 => hosts,
            _ => {
                let shared = ranks.broadcast(serde_json::to_vec(&hosts).unwrap_or_default());
                serde_json::from_slice(&shared).unwrap_or_default()
            }
        };
        (Self { ranks, hosts, clock_offsets }, environment)
    }

    /// This rank's host.
    fn my_host(&self) -> Option<&String> {
        self.hosts.get(self.ranks.rank())
    }

    /// The first rank on this rank's host: the one that mounts a target every host mounts
    /// itself ([`fsarena_target::Target::mounts_on_every_host`]), and tears it down.
    pub fn host_leader(&self) -> bool {
        self.hosts.iter().position(|h| Some(h) == self.my_host()) == Some(self.ranks.rank())
    }

    /// The hosts in the order their first rank comes (rank 0's first).
    pub fn distinct_hosts(&self) -> Vec<&String> {
        let mut seen: Vec<&String> = Vec::new();
        for h in &self.hosts {
            if !seen.contains(&h) {
                seen.push(h);
            }
        }
        seen
    }

    /// The place of this rank's host in [`Cluster::distinct_hosts`].
    pub fn host_index(&self) -> usize {
        self.distinct_hosts().iter().position(|h| Some(*h) == self.my_host()).unwrap_or(0)
    }

    /// How many ranks before this one run on its host.
    fn local_rank(&self) -> usize {
        self.hosts.iter().take(self.ranks.rank()).filter(|h| Some(*h) == self.my_host()).count()
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.ranks.rank()
    }

    /// Rank 0, which provisions, stores and speaks for the run.
    pub fn leader(&self) -> bool {
        self.ranks.rank() == 0
    }

    /// Several ranks, each one client.
    pub fn distributed(&self) -> bool {
        self.ranks.distributed()
    }

    /// The ranks run on more than one host.
    pub fn spread(&self) -> bool {
        self.hosts.iter().any(|h| Some(h) != self.hosts.first())
    }

    /// True on every rank when `flag` is true on any: every decision that ends a loop is
    /// taken together, so that the ranks stay in step.
    pub fn any(&self, flag: bool) -> bool {
        self.ranks.any(flag)
    }

    /// Waits for every rank.
    pub fn barrier(&self) {
        self.ranks.barrier();
    }

    /// Rank 0's target roots (`offered`, None on the other ranks) on every rank, and where this
    /// rank works in them; rank 0's failure to offer any, on every rank.
    pub fn roots(&self, offered: Option<Result<Vec<std::path::PathBuf>, String>>) -> Result<Roots, String> {
        let clients = crate::ranks::share_roots(self.ranks, offered)?;
        Ok(Roots {
            root: crate::ranks::rank_root(self.ranks, &clients),
            shared: crate::ranks::client_root(self.ranks, &clients),
            clients,
        })
    }

    /// Where this rank works on a target every host mounts itself: each host's first rank
    /// offers its own mounts (`offered`, None on the other ranks), and every rank gets its
    /// host's, the client mount `local rank % mounts` and its `rank-K` directory in it. A host
    /// whose mount failed fails every rank, named.
    pub fn roots_per_host(&self, offered: Option<Result<Vec<std::path::PathBuf>, String>>) -> Result<Roots, String> {
        let bytes = serde_json::to_vec(&offered).unwrap_or_default();
        let answer = self.ranks.gather(&bytes).map(|all| {
            let mut per_host: Vec<(String, Result<Vec<std::path::PathBuf>, String>)> = Vec::new();
            for (rank, bytes) in all.iter().enumerate() {
                let host = self.hosts.get(rank).cloned().unwrap_or_default();
                let offer: Option<Result<Vec<std::path::PathBuf>, String>> =
                    serde_json::from_slice(bytes).unwrap_or_else(|e| Some(Err(format!("unreadable answer: {e}"))));
                if let Some(offer) = offer {
                    per_host.push((host, offer));
                }
            }
            match per_host.iter().find(|(_, o)| o.is_err()) {
                Some((host, Err(e))) => Err(format!("on host {host}: {e}")),
                _ => Ok(per_host.into_iter().map(|(h, o)| (h, o.unwrap_or_default())).collect::<Vec<_>>()),
            }
        });
        let shared = self.ranks.broadcast(serde_json::to_vec(&answer).unwrap_or_default());
        let answer: Option<PerHost> = serde_json::from_slice(&shared)
            .unwrap_or_else(|e| Some(Err(format!("rank 0's answer could not be read: {e}"))));
        let per_host = answer.unwrap_or_else(|| Err("no answer from rank 0".into()))?;
        let clients = per_host
            .into_iter()
            .find(|(h, _)| Some(h) == self.my_host())
            .map(|(_, roots)| roots)
            .ok_or_else(|| format!("no mount on host {}", self.my_host().map_or("?", String::as_str)))?;
        let shared = clients.get(self.local_rank() % clients.len().max(1)).cloned().unwrap_or_default();
        Ok(Roots { root: shared.join(format!("rank-{}", self.ranks.rank())), shared, clients })
    }

    /// Whether this rank is one of a step's `clients` when the ranks run on several hosts and
    /// the workload says how many clients it runs on (io's `clients=`, swept by the
    /// client-scaling study): the clients are then the first `clients` hosts, every rank on
    /// them runs, and the others sit the step out. None when the step's clients are not hosts
    /// (one host, or no `clients=`: every rank is a client).
    pub fn client_host(&self, clients: Option<u32>) -> Option<bool> {
        let clients = clients.filter(|_| self.distributed() && self.spread())?;
        Some(self.host_index() < clients as usize)
    }

    /// Runs `work` with every rank in step (see [`crate::ranks::run_in_step`]).
    pub fn run_in_step<T: Send>(&self, work: impl FnOnce(Option<&(dyn Fn() + Sync)>) -> T + Send) -> T {
        crate::ranks::run_in_step(self.ranks, work)
    }

    /// The team a distributed workload's rank belongs to, sharing `shared_root`; None alone.
    /// `host_client`: the step's clients are hosts ([`Cluster::client_host`]): this rank runs
    /// its host's client's share.
    pub fn team<'r>(&self, shared_root: &'r std::path::Path, host_client: bool) -> Option<fsarena_workload::Team<'r>> {
        self.distributed().then(|| fsarena_workload::Team {
            rank: self.ranks.rank(),
            size: self.ranks.size(),
            shared_root,
            client: host_client.then(|| self.host_index()),
        })
    }

    /// One round's measurements of every rank, merged per part on rank 0 (None on the others),
    /// with the first rank's error.
    pub fn merge_round(
        &self,
        measurements: Vec<fsarena_core::Measurement>,
        error: Option<String>,
    ) -> Option<(Vec<fsarena_core::Measurement>, Option<String>)> {
        crate::ranks::merge_round(self.ranks, &self.hosts, &self.clock_offsets, measurements, error)
    }

    /// After a step under MPI: the rank's own directory goes (kept if not empty, as the
    /// workload's files are), and every rank's before rank 0 goes on to the next step or to
    /// its teardown, which removes the target's directory only when empty.
    pub fn step_done(&self, root: &std::path::Path) {
        if self.distributed() {
            let _ = std::fs::remove_dir(root);
            self.barrier();
        }
    }
}
