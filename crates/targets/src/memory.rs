//! Memory and page cache while a workload runs: the page cache of the workload's own files
//! (`mem.workload_page_cache`), the system's page cache, dirty and writeback pages
//! (`/proc/meminfo`, `mem.page_cache` etc., the whole machine's, shown beside it) and fsarena's
//! own resident memory (its process and every process it forked, such as `io`'s job
//! processes), sampled once a second on a thread of its own and kept as per-second series with
//! each measurement. Buffered runs show the page cache filling as data goes through it (the KV
//! study watched exactly that); a tool whose memory grows shows it here.
//!
//! The workload's own page cache is the resident pages (`mincore`) of the files under the
//! target's directory the workload uses, not its cgroup's `memory.stat` `file`: in-process
//! workloads (io, kv, dd, ...) run in fsarena's own cgroup, shared with whatever started it,
//! and machines with the memory controller on cgroup v1 (this project's build machine among
//! them) have no `memory.stat` in the cgroup2 trees fsarena makes for servers. The files are
//! the same whoever reads them, so one rule covers a server's data directory and fsarena's own
//! I/O, and pages left by another program outside the target are never counted.

use fsarena_core::Series;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The series a sampler keeps from /proc/meminfo and fsarena's RSS, by the name they are
/// stored under: the machine's (`mem.page_cache` keeps the name it always had, the system's).
pub const SERIES: [&str; 4] = ["mem.page_cache", "mem.dirty", "mem.writeback", "mem.tool_rss"];
/// The page cache of the workload's own files, in bytes.
pub const WORKLOAD_PAGE_CACHE: &str = "mem.workload_page_cache";
/// Most files one reading of the workload's page cache looks at: each costs an open, an mmap
/// and a mincore on the filesystem under test, so a tree of many small files (tree, meta,
/// postmark) would have its metadata rates disturbed by the sampling itself. Past this the
/// series is left out for that workload rather than sampled from a part of its files.
const MAX_FILES: usize = 4096;

/// One reading: page cache, dirty, writeback (bytes, from /proc/meminfo) and fsarena's RSS,
/// and the workload's page cache (None: not sampled).
type Reading = ([f64; 4], Option<f64>);

/// A thread sampling memory once a second until [`MemorySampler::finish`].
#[derive(Debug)]
pub struct MemorySampler {
    stop: Arc<AtomicBool>,
    readings: Arc<std::sync::Mutex<Vec<Reading>>>,
    thread: Option<JoinHandle<()>>,
}

/// How long [`MemorySampler::finish`] waits for the sampling thread to stop: a reading in
/// progress on a tenant's FUSE mount may never return, and the run must not wait with it.
const FINISH_WAIT: Duration = Duration::from_secs(2);

impl MemorySampler {
    /// Starts sampling: a first reading now, then one a second; the workload's page cache is
    /// that of the files under `files` (the target's directory the workload uses).
    pub fn start(files: Option<std::path::PathBuf>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let readings = Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = Arc::clone(&readings);
        let thread = std::thread::Builder::new()
            .name("memory sampler".into())
            .spawn(move || {
                let start = Instant::now();
                let mut next = Duration::ZERO;
                let mut files = files;
                loop {
                    if start.elapsed() >= next {
                        let own = files.as_deref().and_then(resident_bytes);
                        if own.is_none() {
                            // Too many files, or none to look at: stop walking the target.
                            files = None;
                        }
                        if let Ok(mut r) = kept.lock() {
                            r.push((read(), own));
                        }
                        next += Duration::from_secs(1);
                    }
                    if flag.load(Ordering::Relaxed) {
                        return;
                    }
                    // Short sleeps so that `finish` returns at once, not after a second.
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .ok();
        Self { stop, readings, thread }
    }

    /// Stops sampling and returns the series (empty when the thread could not start).
    pub fn finish(mut self) -> Vec<(String, Series)> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let deadline = Instant::now() + FINISH_WAIT;
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            // Joined when done; else left to end on its own (its reading may be stuck in a
            // daemon): the readings taken so far are kept.
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        let readings = self.readings.lock().map(|r| r.clone()).unwrap_or_default();
        if readings.is_empty() {
            return Vec::new();
        }
        let own: Option<Vec<f64>> = readings.iter().map(|r| r.1).collect();
        let mut series: Vec<(String, Series)> = own
            .map(|values| (WORKLOAD_PAGE_CACHE.to_string(), Series::per_second("bytes", values)))
            .into_iter()
            .collect();
        series.extend(SERIES.iter().enumerate().map(|(i, name)| {
            (name.to_string(), Series::per_second("bytes", readings.iter().map(|r| r.0[i]).collect()))
        }));
        series
    }
}

impl Drop for MemorySampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Bytes of the regular files under `dir` (not following links, not leaving its filesystem)
/// that are in the page cache; None when `dir` cannot be read or holds more than
/// [`MAX_FILES`] files.
///
/// The tree may be served by a tenant (a FUSE daemon, another user's directory), so it is
/// walked as the crash checker walks a state: every name is opened relative to its held parent
/// with `O_NOFOLLOW` (a link swapped in anywhere is refused, never followed out of the tree),
/// non-blocking (a FIFO opens at once), checked by `fstat` before it is mapped; nothing is
/// read. A daemon that never answers holds only this thread: [`MemorySampler::finish`] does
/// not wait for it.
pub fn resident_bytes(dir: &std::path::Path) -> Option<f64> {
    use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let top = rfs::open(dir, flags, Mode::empty()).ok()?;
    let device = rfs::fstat(&top).ok()?.st_dev;
    let mut todo = vec![top];
    let (mut files, mut bytes) = (0usize, 0u64);
    while let Some(d) = todo.pop() {
        // A directory removed meanwhile (a workload deleting its files) counts nothing.
        let Ok(listing) = rfs::Dir::read_from(&d) else { continue };
        for entry in listing.flatten() {
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let Ok(st) = rfs::statat(&d, name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
            if st.st_dev != device {
                continue;
            }
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => {
                    if let Ok(sub) = rfs::openat(&d, name, flags, Mode::empty()) {
                        todo.push(sub);
                    }
                }
                FileType::RegularFile => {
                    files += 1;
                    if files > MAX_FILES {
                        return None;
                    }
                    // O_NOATIME: sampling must not change what it samples (root may set it).
                    let how = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOATIME | OFlags::CLOEXEC;
                    if let Ok(file) = rfs::openat(&d, name, how, Mode::empty()) {
                        bytes += file_resident_bytes(&file);
                    }
                }
                _ => {}
            }
        }
    }
    Some(bytes as f64)
}

/// Bytes of the open file in the page cache: mincore(2) over a shared read-only mapping, which
/// reads no data and faults nothing in. 0 for anything but a regular file (checked on the
/// descriptor: what was listed may have been replaced) or one that cannot be mapped (a FUSE
/// file that refuses mmap).
fn file_resident_bytes(file: &std::os::fd::OwnedFd) -> u64 {
    use std::os::fd::AsRawFd;
    let Ok(st) = rustix::fs::fstat(file) else { return 0 };
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return 0;
    }
    let Ok(len) = usize::try_from(st.st_size) else { return 0 };
    if len == 0 {
        return 0;
    }
    let page = page_size() as usize;
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: a fresh read-only shared mapping of `len` bytes of an open file, never
    // dereferenced; mincore writes one byte per page into `vec`, which holds `pages` bytes; the
    // mapping is unmapped before returning.
    let resident = unsafe {
        let map = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0);
        if map == libc::MAP_FAILED {
            return 0;
        }
        let ok = libc::mincore(map, len, vec.as_mut_ptr()) == 0;
        libc::munmap(map, len);
        ok
    };
    match resident {
        true => vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page as u64,
        false => 0,
    }
}

fn read() -> [f64; 4] {
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
        let s = MemorySampler::start(None);
        std::thread::sleep(Duration::from_millis(2100));
        let series = s.finish();
        assert_eq!(series.len(), 4, "no workload series without its files");
        let (name, cache) = &series[0];
        assert_eq!(name, "mem.page_cache");
        assert_eq!(cache.values.len(), 3, "at 0, 1 and 2 s");
        assert!(series[3].1.values.iter().all(|&v| v > 0.0), "fsarena's own RSS");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod workload_tests {
    use super::*;

    /// A file written through the page cache is resident; after POSIX_FADV_DONTNEED (synced
    /// first) it is not; a file elsewhere never counts.
    #[test]
    fn the_workload_page_cache_counts_its_own_files_resident_pages() {
        // On a disk filesystem (/var/tmp), not tmpfs, whose pages are always resident.
        let dir = std::path::Path::new("/var/tmp").join(format!("fsarena-resident-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let file = dir.join("sub/data");
        std::fs::write(&file, vec![7u8; 8 << 20]).unwrap();
        let cached = resident_bytes(&dir).unwrap();
        assert!(cached >= (6 << 20) as f64 && cached <= (8 << 20) as f64, "{cached}");
        let f = std::fs::File::open(&file).unwrap();
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        let dropped = resident_bytes(&dir).unwrap();
        assert!(dropped < (1 << 20) as f64, "{cached} -> {dropped}");
        // Links a tenant plants, to a cached file and to a directory outside, count nothing.
        let outside = std::path::Path::new("/var/tmp").join(format!("fsarena-resident-out-{}", std::process::id()));
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("hot"), vec![1u8; 4 << 20]).unwrap();
        std::os::unix::fs::symlink(outside.join("hot"), dir.join("sub/link")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("dirlink")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, dir.join("fifo"), rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
        let linked = resident_bytes(&dir).unwrap();
        assert!(linked < (1 << 20) as f64, "links followed: {linked}");
        std::fs::remove_dir_all(&outside).unwrap();
        for i in 0..=MAX_FILES {
            std::fs::write(dir.join(format!("f{i}")), b"x").unwrap();
        }
        assert_eq!(resident_bytes(&dir), None, "more than MAX_FILES files: not sampled");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
