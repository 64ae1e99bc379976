//! Per-interval series (bandwidth and IOPS per second) and their summaries.

use fsarena_core::SeriesSummary;

/// Counts bytes and operations per fixed interval of a measured phase.
///
/// The caller passes the elapsed time it already read for the latency, so counting costs a
/// comparison per operation and no clock read.
#[derive(Debug, Clone)]
pub struct IntervalCounter {
    interval_ns: u64,
    next_boundary: u64,
    bytes: u64,
    ops: u64,
    /// Completed intervals: (bytes, ops).
    done: Vec<(u64, u64)>,
}

impl IntervalCounter {
    /// A counter for intervals of `interval_ns`, with room for `expected` intervals.
    pub fn new(interval_ns: u64, expected: usize) -> Self {
        Self { interval_ns, next_boundary: interval_ns, bytes: 0, ops: 0, done: Vec::with_capacity(expected) }
    }

    /// Adds one operation of `bytes` completed at `elapsed_ns` since the phase began.
    #[inline]
    pub fn add(&mut self, elapsed_ns: u64, bytes: u64) {
        if elapsed_ns >= self.next_boundary {
            self.roll(elapsed_ns);
        }
        self.bytes += bytes;
        self.ops += 1;
    }

    #[cold]
    fn roll(&mut self, elapsed_ns: u64) {
        while elapsed_ns >= self.next_boundary {
            self.done.push((self.bytes, self.ops));
            self.bytes = 0;
            self.ops = 0;
            self.next_boundary += self.interval_ns;
        }
    }

    /// The interval and the completed intervals as (bytes, ops): what another process needs
    /// to rebuild the counter with [`IntervalCounter::from_intervals`].
    pub fn intervals(&self) -> (u64, &[(u64, u64)]) {
        (self.interval_ns, &self.done)
    }

    /// A counter holding the completed intervals `done` of `interval_ns` (a child process's
    /// counter, sent over a pipe).
    pub fn from_intervals(interval_ns: u64, done: Vec<(u64, u64)>) -> Self {
        let next_boundary = interval_ns.saturating_mul(done.len() as u64 + 1);
        Self { interval_ns, next_boundary, bytes: 0, ops: 0, done }
    }

    /// Completed intervals as (bytes per second, ops per second); the partial last interval
    /// is left out, as fio leaves out its partial last sample.
    pub fn per_second(&self) -> (Vec<f64>, Vec<f64>) {
        let scale = 1e9 / self.interval_ns as f64;
        self.done.iter().map(|&(b, o)| (b as f64 * scale, o as f64 * scale)).unzip()
    }
}

/// min, max, mean and sample standard deviation of `values`.
pub fn summarize_series(values: &[f64]) -> SeriesSummary {
    if values.is_empty() {
        return SeriesSummary::default();
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var =
        if values.len() > 1 { values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    SeriesSummary {
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        stddev: var.sqrt(),
        samples: values.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_interval_and_skips_empty_ones() {
        let mut c = IntervalCounter::new(1_000, 4);
        c.add(10, 4096);
        c.add(999, 4096);
        c.add(1_500, 4096);
        c.add(3_100, 4096); // interval 2 had nothing
        let (bw, iops) = c.per_second();
        assert_eq!(iops, vec![2e6, 1e6, 0.0]);
        assert_eq!(bw[0], 2.0 * 4096.0 * 1e6);
    }

    #[test]
    fn series_summary() {
        let s = summarize_series(&[1.0, 2.0, 3.0]);
        assert_eq!((s.min, s.max, s.mean, s.samples), (1.0, 3.0, 2.0, 3));
        assert!((s.stddev - 1.0).abs() < 1e-12);
    }
}
