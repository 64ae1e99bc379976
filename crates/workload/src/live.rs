//! A live count of completed operations and bytes, for the progress display only (never for
//! results): workloads add to it from any thread, the runner samples it twice a second.
//!
//! Adding is one relaxed atomic add per call. A hot loop that completes millions of
//! operations a second adds through a [`LiveBatch`], which touches the shared counter at most
//! every [`FLUSH_NS`] of its own clock, so threads do not contend for its cache line.

use std::sync::atomic::{AtomicU64, Ordering};

/// How often a [`LiveBatch`] adds what it holds to the shared counter: often enough that a
/// sample taken every 500 ms is off by a few percent at most, rarely enough to cost nothing.
pub const FLUSH_NS: u64 = 20_000_000;

/// Completed operations and bytes so far, shared by a run's threads.
#[derive(Debug, Default)]
pub struct Live {
    ops: AtomicU64,
    bytes: AtomicU64,
}

/// One reading of a [`Live`] counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSample {
    /// Operations completed (I/Os, creates, stats, ...).
    pub ops: u64,
    /// Bytes moved by them (zero for metadata operations).
    pub bytes: u64,
}

impl Live {
    /// A counter at zero.
    pub const fn new() -> Self {
        Self { ops: AtomicU64::new(0), bytes: AtomicU64::new(0) }
    }

    /// A counter nobody reads, for callers without a display (tests, library use).
    pub fn unused() -> &'static Live {
        static UNUSED: Live = Live::new();
        &UNUSED
    }

    /// Counts `ops` more operations that moved `bytes`; callable from any thread.
    #[inline]
    pub fn add(&self, ops: u64, bytes: u64) {
        // Relaxed: a display reading, ordered with nothing else.
        self.ops.fetch_add(ops, Ordering::Relaxed);
        if bytes > 0 {
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// The counts so far.
    pub fn sample(&self) -> LiveSample {
        LiveSample { ops: self.ops.load(Ordering::Relaxed), bytes: self.bytes.load(Ordering::Relaxed) }
    }
}

/// One thread's additions to a [`Live`] counter, held back until [`FLUSH_NS`] of the caller's
/// clock has passed; what is held is added when the batch is dropped.
#[derive(Debug)]
pub struct LiveBatch<'a> {
    live: &'a Live,
    ops: u64,
    bytes: u64,
    next_flush_ns: u64,
}

impl<'a> LiveBatch<'a> {
    /// An empty batch for `live`.
    pub fn new(live: &'a Live) -> Self {
        Self { live, ops: 0, bytes: 0, next_flush_ns: 0 }
    }

    /// Counts one operation of `bytes`; `now_ns` is any monotonic clock of the caller's (the
    /// loop's own, so that batching costs no clock read).
    #[inline(always)]
    pub fn add(&mut self, bytes: u64, now_ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        if now_ns >= self.next_flush_ns {
            self.next_flush_ns = now_ns.saturating_add(FLUSH_NS);
            self.flush();
        }
    }

    /// Adds what is held to the shared counter now.
    pub fn flush(&mut self) {
        if self.ops > 0 {
            self.live.add(self.ops, self.bytes);
            self.ops = 0;
            self.bytes = 0;
        }
    }
}

impl Drop for LiveBatch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_reach_the_counter_by_time_and_on_drop() {
        let live = Live::new();
        {
            let mut batch = LiveBatch::new(&live);
            // The first addition flushes (nothing was shown yet), the next ones wait.
            batch.add(4096, 1);
            assert_eq!(live.sample(), LiveSample { ops: 1, bytes: 4096 });
            batch.add(4096, 2);
            batch.add(4096, 3);
            assert_eq!(live.sample().ops, 1, "held until FLUSH_NS has passed");
            batch.add(4096, 1 + FLUSH_NS);
            assert_eq!(live.sample(), LiveSample { ops: 4, bytes: 4 * 4096 });
            batch.add(0, 2 + FLUSH_NS);
        }
        assert_eq!(live.sample(), LiveSample { ops: 5, bytes: 4 * 4096 }, "dropping flushes");
    }

    #[test]
    fn threads_add_to_one_counter() {
        let live = Live::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        live.add(1, 10);
                    }
                });
            }
        });
        assert_eq!(live.sample(), LiveSample { ops: 4000, bytes: 40_000 });
    }
}
