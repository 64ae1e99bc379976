//! [`Ranks`] over MPI (rsmpi on the system's OpenMPI): `mpirun -np N fsarena run --mpi ...`.
//! Built only with the `mpi` feature; the runner sees the trait alone.
//!
//! Only the main thread calls MPI (the workloads' threads never do), so the funneled
//! threading level is enough.

use crate::plan::Failure;
use crate::ranks::Ranks;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

/// The MPI job: initialized on [`World::init`], finalized when dropped.
pub struct World {
    /// Holds MPI initialized; dropping it calls MPI_Finalize.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "World(rank {} of {})", self.world.rank(), self.world.size())
    }
}

impl World {
    /// Joins the MPI job this process was started in (a process started without mpirun is
    /// a job of one rank).
    pub fn init() -> Result<Self, Failure> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| Failure::Run(anyhow::anyhow!("MPI could not be initialized (already initialized?)")))?;
        let world = universe.world();
        Ok(Self { _universe: universe, world })
    }
}

impl Ranks for World {
    fn rank(&self) -> usize {
        usize::try_from(self.world.rank()).unwrap_or(0)
    }

    fn size(&self) -> usize {
        usize::try_from(self.world.size()).unwrap_or(1)
    }

    fn barrier(&self) {
        self.world.barrier();
    }

    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        // Sizes first, so that rank 0 can lay out one buffer for every rank's bytes.
        let length = Count::try_from(bytes.len()).unwrap_or(Count::MAX);
        if self.world.rank() != 0 {
            root.gather_into(&length);
            root.gather_varcount_into(bytes);
            return None;
        }
        let mut lengths = vec![0 as Count; self.size()];
        root.gather_into_root(&length, &mut lengths[..]);
        let displacements: Vec<Count> = lengths
            .iter()
            .scan(0 as Count, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let total: usize = lengths.iter().map(|&n| usize::try_from(n).unwrap_or(0)).sum();
        let mut buffer = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut buffer[..], &lengths[..], &displacements[..]);
            root.gather_varcount_into_root(bytes, &mut partition);
        }
        let mut out = Vec::with_capacity(lengths.len());
        for (&at, &n) in displacements.iter().zip(&lengths) {
            let (at, n) = (usize::try_from(at).unwrap_or(0), usize::try_from(n).unwrap_or(0));
            out.push(buffer.get(at..at + n).unwrap_or_default().to_vec());
        }
        Some(out)
    }

    fn broadcast(&self, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut length = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        root.broadcast_into(&mut length);
        let mut buffer = if self.world.rank() == 0 { bytes } else { vec![0u8; usize::try_from(length).unwrap_or(0)] };
        root.broadcast_into(&mut buffer[..]);
        buffer
    }

    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
