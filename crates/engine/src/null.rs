//! `ioengine=null`: fio's null engine (`engines/null.c`). Every I/O "completes" without
//! touching data or files, so a run measures the tool's own overhead, and the whole pipeline
//! can be tested with no disk and no root.
//!
//! As in fio, it is synchronous at `iodepth=1` (each I/O completes in `submit`) and queues
//! above it: `submit` queues until `commit`, which turns everything queued into pending
//! completions; `reap` hands them back; while completions are pending, `submit` answers
//! `Busy`.

use crate::{Completion, Engine, EngineCaps, EngineConfig, IoDir, IoOp, SlotBuffers, Submit};
use std::io;

/// The null engine. See the module documentation.
#[derive(Debug)]
pub struct Null {
    buffers: SlotBuffers,
    sync: bool,
    depth: usize,
    /// (slot, bytes) submitted and not yet committed.
    queued: Vec<(u32, usize)>,
    /// (slot, bytes) committed and not yet reaped (fio's `nd->events`).
    events: Vec<(u32, usize)>,
}

impl Engine for Null {
    const NAME: &'static str = "null";

    fn caps(config: &EngineConfig) -> EngineCaps {
        EngineCaps { sync: config.iodepth <= 1, diskless: true, aligned_buffers: false, direct: true, file_op: None }
    }

    fn new(config: &EngineConfig) -> io::Result<Self> {
        let depth = config.depth.max(1) as usize;
        Ok(Self {
            buffers: SlotBuffers::new(config.depth, config.slot_len, config.align),
            sync: Self::caps(config).sync,
            depth,
            // Sized once here, so the hot loop never allocates.
            queued: Vec::with_capacity(depth),
            events: Vec::with_capacity(depth),
        })
    }

    fn buffers(&mut self) -> &mut SlotBuffers {
        &mut self.buffers
    }

    #[inline(always)]
    fn submit(&mut self, op: IoOp<'_>) -> Submit {
        let bytes = if matches!(op.dir, IoDir::Read | IoDir::Write) { op.len } else { 0 };
        if self.sync {
            return Submit::Completed(Ok(bytes));
        }
        if !self.events.is_empty() || self.queued.len() + self.events.len() >= self.depth {
            return Submit::Busy;
        }
        self.queued.push((op.slot, bytes));
        Submit::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        // As fio: a commit while completions are pending waits for them to be reaped.
        if self.events.is_empty() {
            std::mem::swap(&mut self.queued, &mut self.events);
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        // fio's null_getevents hands back the pending events only when asked to wait.
        if min == 0 {
            return Ok(0);
        }
        let n = self.events.len().min(max.max(min));
        out.extend(self.events.drain(..n).map(|(slot, bytes)| Completion { slot, result: Ok(bytes) }));
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn config(iodepth: u32) -> EngineConfig {
        EngineConfig { depth: iodepth, slot_len: 4096, align: 4096, iodepth, flags: Default::default() }
    }

    #[test]
    fn at_depth_one_every_io_completes_at_once_without_touching_data() {
        let root = std::fs::File::open("/").unwrap();
        assert!(Null::caps(&config(1)).sync && Null::caps(&config(1)).diskless);
        let mut e = Null::new(&config(1)).unwrap();
        e.buffers().slot_mut(0).fill(7);
        let op = |dir, len| IoOp { dir, fd: root.as_fd(), offset: 1 << 40, len, slot: 0 };
        assert!(matches!(e.submit(op(IoDir::Read, 4096)), Submit::Completed(Ok(4096))));
        assert!(matches!(e.submit(op(IoDir::Write, 512)), Submit::Completed(Ok(512))));
        assert!(matches!(e.submit(op(IoDir::Fsync, 0)), Submit::Completed(Ok(0))));
        assert!(e.buffers().slot(0).iter().all(|&b| b == 7), "a read must not touch the buffer");
    }

    #[test]
    fn queued_ios_complete_on_commit_and_busy_when_full() {
        let root = std::fs::File::open("/").unwrap();
        assert!(!Null::caps(&config(4)).sync);
        let mut e = Null::new(&config(4)).unwrap();
        let op = |slot| IoOp { dir: IoDir::Read, fd: root.as_fd(), offset: 0, len: 100 + slot as usize, slot };
        for slot in 0..4 {
            assert!(matches!(e.submit(op(slot)), Submit::Queued));
        }
        assert!(matches!(e.submit(op(4)), Submit::Busy), "a fifth I/O at depth 4 must be refused");
        let mut out = Vec::new();
        assert_eq!(e.reap(1, 4, &mut out).unwrap(), 0, "nothing completes before commit");
        e.commit().unwrap();
        assert!(matches!(e.submit(op(0)), Submit::Busy), "busy while completions are pending");
        assert_eq!(e.reap(0, 4, &mut out).unwrap(), 0, "a reap that may not wait gets nothing, as in fio");
        assert_eq!(e.reap(1, 3, &mut out).unwrap(), 3, "at most max");
        assert_eq!(e.reap(1, 3, &mut out).unwrap(), 1);
        let got: Vec<(u32, usize)> = out.iter().map(|c| (c.slot, *c.result.as_ref().unwrap())).collect();
        assert_eq!(got, vec![(0, 100), (1, 101), (2, 102), (3, 103)]);
        assert!(matches!(e.submit(op(1)), Submit::Queued), "room again once reaped");
    }
}
