//! `ioengine=net`: fio's engine that reads from and writes to a socket (`engines/net.c`).
//!
//! A net job's "file" is a connection, which needs the job's own options (hostname, port,
//! protocol, listen) to make, and fio's accounting of a short receive (the rest of the I/O is
//! issued again) differs from a file's. So, as for `cpuio` and `exec`, the workload runs the
//! engine's loop itself and never submits to this engine: it is diskless (no file is laid out
//! or opened for it) and synchronous, as fio declares it (`FIO_SYNCIO | FIO_DISKLESSIO`).

use crate::{Engine, EngineCaps, EngineConfig, IoOp, SlotBuffers, Submit};
use std::io;

/// `ioengine=net`: TCP or unix-socket I/O on this host (the loop is the workload's).
#[derive(Debug)]
pub struct Net {
    buffers: SlotBuffers,
}

impl Engine for Net {
    const NAME: &'static str = "net";

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
        // The workload runs the engine's loop itself (module documentation); an I/O reaching
        // here moved nothing.
        Submit::Completed(Ok(0))
    }
}
