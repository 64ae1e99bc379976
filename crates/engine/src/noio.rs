//! `ioengine=cpuio`, `ioengine=exec` and `ioengine=net`: fio's engines whose loop the workload
//! runs itself.
//!
//! fio's `cpuio` burns CPU in chunks and sleeps between them; its `exec` runs a program for
//! the job's runtime (both `FIO_NOIO`). Its `net` (`engines/net.c`) reads from and writes to a
//! socket: a net job's "file" is a connection, made from the job's own options (hostname, port,
//! protocol, listen), and fio's accounting of a short receive (the rest of the I/O is issued
//! again) differs from a file's. None touches a file, so all three are diskless and synchronous
//! here (net as fio declares it, `FIO_SYNCIO | FIO_DISKLESSIO`). What each does per "I/O" needs
//! the job's own options, which an engine does not see: the workload runs that loop itself
//! (io/noio.rs, io/net.rs) and never submits to these engines.

use crate::{Engine, EngineCaps, EngineConfig, IoOp, SlotBuffers, Submit};
use std::io;

macro_rules! noio_engine {
    ($ty:ident, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug)]
        pub struct $ty {
            buffers: SlotBuffers,
        }

        impl Engine for $ty {
            const NAME: &'static str = $name;

            fn caps(_config: &EngineConfig) -> EngineCaps {
                EngineCaps { sync: true, diskless: true, aligned_buffers: false, direct: true, file_op: None }
            }

            fn new(_config: &EngineConfig) -> io::Result<Self> {
                // No I/O ever goes through it: one empty slot is enough.
                Ok(Self { buffers: SlotBuffers::new(1, 0, 1) })
            }

            fn buffers(&mut self) -> &mut SlotBuffers {
                &mut self.buffers
            }

            fn submit(&mut self, _op: IoOp<'_>) -> Submit {
                // The workload runs the engine's loop itself (module documentation); an I/O
                // reaching here moved nothing.
                Submit::Completed(Ok(0))
            }
        }
    };
}

noio_engine!(CpuIo, "cpuio", "`ioengine=cpuio`: burns CPU, moves no data (the loop is the workload's).");
noio_engine!(
    Exec,
    "exec",
    "`ioengine=exec`: runs a program for the runtime, moves no data (the loop is the workload's)."
);
noio_engine!(Net, "net", "`ioengine=net`: TCP or unix-socket I/O on this host (the loop is the workload's).");
