//! Memory and page cache while a workload runs: the system's page cache, dirty and writeback
//! pages (`/proc/meminfo`) and fsarena's own resident memory (its process and every process
//! it forked, such as `io`'s job processes), sampled once a second on a thread of its own and
//! kept as per-second series with each measurement. Buffered runs show the page cache filling
//! as data goes through it (the KV study watched exactly that); a tool whose memory grows
//! shows it here.

use fsarena_core::Series;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The series a sampler keeps, by the name they are stored under.
pub const SERIES: [&str; 4] = ["mem.page_cache", "mem.dirty", "mem.writeback", "mem.tool_rss"];

/// One reading: page cache, dirty, writeback (bytes, from /proc/meminfo) and fsarena's RSS.
type Reading = [f64; 4];

/// A thread sampling memory once a second until [`MemorySampler::finish`].
#[derive(Debug)]
pub struct MemorySampler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Reading>>>,
}

impl MemorySampler {
    /// Starts sampling: a first reading now, then one a second.
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("memory sampler".into())
            .spawn(move || {
                let mut readings = Vec::new();
                let start = Instant::now();
                let mut next = Duration::ZERO;
                loop {
                    if start.elapsed() >= next {
                        readings.push(read());
                        next += Duration::from_secs(1);
                    }
                    if flag.load(Ordering::Relaxed) {
                        return readings;
                    }
                    // Short sleeps so that `finish` returns at once, not after a second.
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .ok();
        Self { stop, thread }
    }

    /// Stops sampling and returns the series (empty when the thread could not start).
    pub fn finish(mut self) -> Vec<(String, Series)> {
        self.stop.store(true, Ordering::Relaxed);
        let readings = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        if readings.is_empty() {
            return Vec::new();
        }
        SERIES
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), Series::per_second("bytes", readings.iter().map(|r| r[i]).collect())))
            .collect()
    }
}

impl Drop for MemorySampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn read() -> Reading {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| meminfo_bytes(&meminfo, name).unwrap_or(0) as f64;
    [field("Cached"), field("Dirty"), field("Writeback"), tree_rss(std::process::id()) as f64]
}

/// A `/proc/meminfo` field in bytes (the file gives kB).
fn meminfo_bytes(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse::<u64>().ok().map(|kb| kb * 1024)
    })
}

/// Resident bytes of process `pid` and all its descendants (`/proc/PID/task/*/children`
/// lists a thread's children; a process gone meanwhile counts nothing).
fn tree_rss(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        total += std::fs::read_to_string(format!("/proc/{p}/statm"))
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages * page_size());
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) {
            for t in tasks.flatten() {
                let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                todo.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
    }
    total
}

fn page_size() -> u64 {
    rustix::param::page_size() as u64
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nCached:          1000 kB\nDirty:   8 kB\nSwapCached: 5 kB\n";
        assert_eq!(meminfo_bytes(text, "Cached"), Some(1_024_000));
        assert_eq!(meminfo_bytes(text, "Dirty"), Some(8192));
        assert_eq!(meminfo_bytes(text, "Writeback"), None);
    }

    #[test]
    fn the_tree_counts_children() {
        let alone = tree_rss(std::process::id());
        assert!(alone > 0);
        // A child holding 64 MiB of touched memory raises the tree's RSS.
        let mut child = std::process::Command::new("python3")
            .args(["-c", "import time; b = bytearray(64 << 20); time.sleep(3)"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let with_child = tree_rss(std::process::id());
        child.kill().ok();
        child.wait().ok();
        assert!(with_child >= alone + (48 << 20), "{alone} -> {with_child}");
    }

    #[test]
    fn a_sampler_keeps_one_reading_a_second() {
        let s = MemorySampler::start();
        std::thread::sleep(Duration::from_millis(2100));
        let series = s.finish();
        assert_eq!(series.len(), 4);
        let (name, cache) = &series[0];
        assert_eq!(name, "mem.page_cache");
        assert_eq!(cache.values.len(), 3, "at 0, 1 and 2 s");
        assert!(series[3].1.values.iter().all(|&v| v > 0.0), "fsarena's own RSS");
    }
}
