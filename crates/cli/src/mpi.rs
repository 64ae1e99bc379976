//! [`Ranks`] over MPI (rsmpi on the system's OpenMPI): `mpirun -np N fsarena run --mpi ...`.
//! Built only with the `mpi` feature; the runner sees the trait alone.
//!
//! MPI is asked for its serialized threading level: a workload's rendezvous then calls MPI
//! from the workload's thread while the main thread waits for the workload (see
//! [`crate::ranks::run_in_step`]); one thread at a time, never two. Where the library gives
//! less (funneled), only the main thread calls MPI and the rendezvous hands each meeting to it.

use crate::failure::Failure;
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
    /// The threading level MPI gave: serialized or more lets another thread call it.
    threading: mpi::Threading,
}

/// The job's [`Ranks::any`] for the one thread at a time that calls it: what a workload's
/// rendezvous holds (see [`Ranks::any_from_any_thread`]).
struct Serialized<'a>(&'a World);

// SAFETY: MPI was initialized at MPI_THREAD_SERIALIZED or above (World::any_from_any_thread
// gives this out only then), which lets any thread call MPI while no other does. The one
// holder, run_in_step, passes it to a workload while the main thread makes no MPI call, and
// the phase runner calls its rendezvous from one thread, the others waiting at a barrier; the
// communicator is only read.
unsafe impl Sync for Serialized<'_> {}

impl Serialized<'_> {
    fn any(&self, flag: bool) -> bool {
        self.0.any(flag)
    }
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
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or_else(|| Failure::Run(anyhow::anyhow!("MPI could not be initialized (already initialized?)")))?;
        let world = universe.world();
        let world = Self { _universe: universe, world, threading };
        world.warm_up();
        Ok(world)
    }

    /// Meets the other ranks [`WARM_UP_MEETINGS`] times, untimed, so that what Open MPI sets
    /// up on the way is in place before any phase is timed. Its shared-memory transport (the
    /// `vader` BTL, `sm` in Open MPI 5) gives a pair of ranks a fast box, a mailbox of its
    /// own, once one has sent the other `btl_vader_fbox_threshold` messages (16 by default);
    /// the setup costs the sender 25-30 us. fsarena's meetings send the same messages every
    /// run, so that setup fell on rank 0's replies at the end of the first timed phase, every
    /// run: traced with 2 ranks on 2 CPUs (`meta:mdtest='-n 1 -u'`, 6 runs), rank 0's replies
    /// there took 24-32 us against 1-6 us at the meeting before, and 0.6-1.1 us with
    /// `OMPI_MCA_btl_vader_fbox_threshold=1`; with 4 ranks, three setups at once made a tree
    /// of one mkdir a rank read 0.59x mdtest's rate (mdtest's barriers pass the threshold
    /// before its timed phases).
    fn warm_up(&self) {
        for _ in 0..WARM_UP_MEETINGS {
            self.any(true);
        }
    }
}

/// How many times the ranks meet before anything is timed: four times Open MPI's default
/// fast-box threshold (see [`World::warm_up`]); a meeting costs 1-10 us.
const WARM_UP_MEETINGS: usize = 64;

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

    fn any_from_any_thread(&self) -> Option<Box<dyn Fn(bool) -> bool + Sync + '_>> {
        if self.threading < mpi::Threading::Serialized {
            return None;
        }
        let serialized = Serialized(self);
        Some(Box::new(move |flag| serialized.any(flag)))
    }

    /// Every rank's flag to rank 0, which answers each, as Open MPI's barrier meets 4 ranks:
    /// rank 0 is the first to leave, when the last rank has arrived, so that its time between
    /// two meetings runs from the last arrival at the first to the last arrival at the second.
    /// mdtest's tree rows are rank 0's time between two barriers (the ranks' phases end and
    /// start at these meetings). An all-reduce lets the ranks leave in any order: measured with
    /// 4 ranks on 2 CPUs, 2,000 meetings each, Open MPI 4.1.4, the first to leave
    /// `MPI_Barrier` was rank 0 1,994 times, the first to leave `MPI_Allreduce` rank 0 491
    /// times and rank 3 824 times, which made rank 0's time a random share of a phase of one
    /// mkdir a rank. Messages on a tag of their own; eager at 4 bytes, so a send returns at once.
    fn any(&self, flag: bool) -> bool {
        const TAG: mpi::Tag = 0x6673; // "fs"
        let mine = i32::from(flag);
        if self.world.rank() != 0 {
            let root = self.world.process_at_rank(0);
            root.send_with_tag(&mine, TAG);
            let (any, _) = root.receive_with_tag::<i32>(TAG);
            return any == 1;
        }
        let mut any = mine;
        for _ in 1..self.world.size() {
            let (theirs, _) = self.world.any_process().receive_with_tag::<i32>(TAG);
            any = any.max(theirs);
        }
        for k in 1..self.world.size() {
            self.world.process_at_rank(k).send_with_tag(&any, TAG);
        }
        any == 1
    }

    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
