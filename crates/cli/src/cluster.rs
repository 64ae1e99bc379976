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
    /// Every rank's host, in rank order (rank 0's own alone on the other ranks).
    hosts: Vec<String>,
    /// Every rank's clock ahead of rank 0's, in nanoseconds (see [`crate::ranks::clock_offsets`]).
    clock_offsets: Vec<i64>,
}

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
        let (environment, hosts) = crate::ranks::environments(ranks);
        let clock_offsets = crate::ranks::clock_offsets(ranks, &hosts);
        (Self { ranks, hosts, clock_offsets }, environment)
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

    /// The ranks' hosts, for messages.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
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

    /// Runs `work` with every rank in step (see [`crate::ranks::run_in_step`]).
    pub fn run_in_step<T: Send>(&self, work: impl FnOnce(Option<&(dyn Fn() + Sync)>) -> T + Send) -> T {
        crate::ranks::run_in_step(self.ranks, work)
    }

    /// The team a distributed workload's rank belongs to, sharing `shared_root`; None alone.
    pub fn team<'r>(&self, shared_root: &'r std::path::Path) -> Option<fsarena_workload::Team<'r>> {
        self.distributed().then(|| fsarena_workload::Team {
            rank: self.ranks.rank(),
            size: self.ranks.size(),
            shared_root,
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
