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
