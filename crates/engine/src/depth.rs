//! Queue depth: fio's `iodepth`, `iodepth_batch_submit`, `iodepth_batch_complete_min/max`
//! and `iodepth_low`, with fio's defaults and fix-ups (`init.c`, `fixup_options`) and its
//! reaping rules (`backend.c`, `wait_for_completions`; `ioengines.c`, `td_io_getevents`), so a
//! job file means the same queue behaviour here as in fio.

/// The queue-depth settings of one job, fixed up as fio does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueDepth {
    /// I/Os in flight at most (`iodepth`; 1 with a synchronous engine, whatever was given).
    pub depth: u32,
    /// Queued I/Os that trigger a commit (`iodepth_batch_submit`; fio's default 1 sends each
    /// I/O at once; 0 means `depth`).
    pub batch_submit: u32,
    /// Completions a reap waits for (`iodepth_batch_complete_min`, default 1; 0 polls).
    pub complete_min: u32,
    /// Completions a reap takes at most (`iodepth_batch_complete_max`; default: the min).
    pub complete_max: u32,
    /// When the queue was full, reap until no more than this many are in flight
    /// (`iodepth_low`; default `depth`).
    pub low: u32,
}

impl Default for QueueDepth {
    fn default() -> Self {
        Self::new(1, 1, 1, 0, 0, true)
    }
}

impl QueueDepth {
    /// The settings as given (0 meaning "unset" where fio says so), fixed up as fio does;
    /// `sync` engines get depth 1 (fio: "iodepth ... will not affect synchronous ioengines").
    pub fn new(iodepth: u32, batch_submit: u32, complete_min: u32, complete_max: u32, low: u32, sync: bool) -> Self {
        let depth = if sync { 1 } else { iodepth.max(1) };
        let clamp = |v: u32| if v == 0 || v > depth { depth } else { v };
        Self {
            depth,
            batch_submit: clamp(batch_submit),
            complete_min,
            complete_max: complete_max.max(complete_min),
            low: clamp(low),
        }
    }

    /// True when every reap just polls (both batch_complete values 0): fio then reaps after
    /// every submission, not only when the queue is full (`io_in_polling`).
    pub fn polling(&self) -> bool {
        self.complete_min == 0 && self.complete_max == 0
    }

    /// Completions to wait for now, with `in_flight` I/Os out (fio's `wait_for_completions`:
    /// a full queue must give back at least one, and 0 means 1 there too).
    pub fn reap_min(&self, full: bool, in_flight: u32) -> usize {
        let mut min = self.complete_min.min(in_flight);
        if (full && min == 0) || self.complete_min == 0 {
            min = 1;
        }
        min.min(in_flight) as usize
    }

    /// Completions to take at most when waiting for `min` (fio's `td_io_getevents`).
    pub fn reap_max(&self, min: usize, in_flight: u32) -> usize {
        (self.complete_max.min(in_flight) as usize).max(min)
    }

    /// After a reap that started on a full queue: go on while more than `low` are out.
    pub fn keep_reaping(&self, full: bool, in_flight: u32) -> bool {
        full && in_flight > self.low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_defaults_and_fixups() {
        // iodepth=32 alone: submit each I/O, wait for one, take one, refill from 32.
        let q = QueueDepth::new(32, 1, 1, 0, 0, false);
        assert_eq!(q, QueueDepth { depth: 32, batch_submit: 1, complete_min: 1, complete_max: 1, low: 32 });
        // 0 and too-large values mean the depth; max below min is raised to min.
        let q = QueueDepth::new(16, 0, 8, 4, 64, false);
        assert_eq!((q.batch_submit, q.complete_min, q.complete_max, q.low), (16, 8, 8, 16));
        // a synchronous engine ignores iodepth
        assert_eq!(QueueDepth::new(64, 8, 4, 8, 2, true).depth, 1);
        assert_eq!(QueueDepth::default().depth, 1);
    }

    #[test]
    fn reap_bounds_follow_wait_for_completions() {
        let q = QueueDepth::new(32, 8, 4, 16, 0, false);
        assert_eq!(q.reap_min(true, 32), 4);
        assert_eq!(q.reap_max(4, 32), 16);
        assert_eq!(q.reap_min(false, 2), 2, "never more than are in flight");
        assert_eq!(q.reap_max(2, 2), 2);
        let polling = QueueDepth::new(32, 1, 0, 0, 0, false);
        assert!(polling.polling() && !q.polling());
        assert_eq!(polling.reap_min(false, 5), 1);
        assert_eq!(polling.reap_max(1, 5), 1);
        assert_eq!(polling.reap_min(false, 0), 0);
        let low = QueueDepth::new(32, 1, 1, 0, 8, false);
        assert!(low.keep_reaping(true, 9) && !low.keep_reaping(true, 8) && !low.keep_reaping(false, 30));
    }
}
