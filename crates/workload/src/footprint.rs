//! What a workload asks of the machine and of the target, checked before anything is created.
//!
//! `numjobs=100000` once planned for minutes, then about 20,000 thread spawns failed and the
//! rest hung holding a mount. Every workload states its [`Footprint`]; the CLI checks it
//! against [`MachineLimits`] and the target's capacity at plan time (exit 2), so such a job is
//! refused in milliseconds, also for `--dry-run`.

use rustix::process::{getrlimit, Resource};

/// Most threads one workload may start, whatever the machine allows: beyond this the
/// scheduler, not the filesystem, is what a benchmark measures.
pub const MAX_THREADS: u64 = 4096;

/// The least a file or directory costs a filesystem in metadata (an inode, a directory entry):
/// ext4's inodes alone are 256 bytes, xfs's 512, btrfs's items about 200, tmpfs's about 600 of
/// kernel memory. A plan creating more files than the target's size divided by this cannot run,
/// whatever the files hold.
pub const MIN_BYTES_PER_FILE: u64 = 256;

/// Descriptors kept free for fsarena itself (the store, the state file, stdio, the engine).
const RESERVED_FDS: u64 = 64;

/// What one run of a workload needs at its largest moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Where the numbers come from, for messages: `io job 'seq': numjobs=8, nrfiles=4`.
    pub source: String,
    /// Threads running at once.
    pub threads: u64,
    /// Memory for I/O buffers and for the run's own plan (file lists, tree paths), in bytes.
    pub buffer_bytes: u64,
    /// Bytes of file data put on the target.
    pub bytes_on_target: u64,
    /// Files and directories put on the target.
    pub files: u64,
    /// File descriptors open at once.
    pub open_files: u64,
}

/// What this machine allows, read from /proc and the resource limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineLimits {
    /// Threads one workload may start: the least of threads-max, RLIMIT_NPROC and
    /// [`MAX_THREADS`].
    pub threads: u64,
    /// Which of them sets `threads`, for messages.
    pub threads_why: String,
    /// MemAvailable from /proc/meminfo, in bytes; None when unknown.
    pub mem_available: Option<u64>,
    /// The soft RLIMIT_NOFILE.
    pub open_files: Option<u64>,
}

impl MachineLimits {
    /// Reads the limits of this machine and process.
    pub fn detect() -> Self {
        let threads_max =
            std::fs::read_to_string("/proc/sys/kernel/threads-max").ok().and_then(|t| t.trim().parse().ok());
        let nproc = getrlimit(Resource::Nproc).current;
        let mem_available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| meminfo_available(&t));
        let open_files = getrlimit(Resource::Nofile).current;
        Self::from_values(threads_max, nproc, mem_available, open_files)
    }

    /// The limits from the raw values (None: unlimited or unknown).
    pub fn from_values(
        threads_max: Option<u64>,
        nproc: Option<u64>,
        mem_available: Option<u64>,
        open_files: Option<u64>,
    ) -> Self {
        let mut threads = MAX_THREADS;
        let mut threads_why = format!("fsarena's limit of {MAX_THREADS} per workload");
        if let Some(t) = threads_max.filter(|&t| t < threads) {
            threads = t;
            threads_why = format!("the kernel's threads-max of {t}");
        }
        if let Some(n) = nproc.filter(|&n| n < threads) {
            threads = n;
            threads_why = format!("RLIMIT_NPROC of {n}");
        }
        Self { threads, threads_why, mem_available, open_files }
    }
}

/// `MemAvailable:  123 kB` in bytes.
fn meminfo_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

impl Footprint {
    /// Checks the footprint against the machine and against `capacity` (bytes the target
    /// holds, when known); the error names the values, the limit and why there is one.
    pub fn check(&self, limits: &MachineLimits, capacity: Option<u64>) -> Result<(), String> {
        let iec = |b: u64| fsarena_core::units::format_iec(b as f64);
        let src = &self.source;
        if self.threads > limits.threads {
            return Err(format!(
                "{src}: needs {} threads at once, more than the {} allowed ({}): use fewer jobs, tasks or threads",
                self.threads, limits.threads, limits.threads_why
            ));
        }
        if let Some(fds) = limits.open_files {
            let usable = fds.saturating_sub(RESERVED_FDS);
            if self.open_files > usable {
                return Err(format!(
                    "{src}: keeps {} files open at once, more than the {usable} this process may open (RLIMIT_NOFILE {fds}, less {RESERVED_FDS} for fsarena): use fewer jobs or files, or raise ulimit -n",
                    self.open_files
                ));
            }
        }
        if let Some(mem) = limits.mem_available {
            if self.buffer_bytes > mem {
                return Err(format!(
                    "{src}: needs {} of memory for its buffers and file lists, more than the {} available (MemAvailable): use fewer jobs or files, or smaller blocks",
                    iec(self.buffer_bytes),
                    iec(mem)
                ));
            }
        }
        if let Some(cap) = capacity {
            if self.bytes_on_target > cap {
                return Err(format!(
                    "{src}: puts {} of files on the target, more than the {} it holds: use a smaller size or a larger target (size=)",
                    iec(self.bytes_on_target),
                    iec(cap)
                ));
            }
            if self.files.saturating_mul(MIN_BYTES_PER_FILE) > cap {
                return Err(format!(
                    "{src}: creates {} files and directories, and each takes at least {MIN_BYTES_PER_FILE} bytes of metadata: more than the {} the target holds; use fewer items or a larger target (size=)",
                    self.files,
                    iec(cap)
                ));
            }
        }
        Ok(())
    }

    /// Refuses more files and directories than the target has inodes free, where it says.
    pub fn check_files(&self, free_files: Option<u64>) -> Result<(), String> {
        match free_files {
            Some(free) if self.files > free => Err(format!(
                "{}: creates {} files and directories, more than the {free} inodes free on the target: use fewer items",
                self.source, self.files
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fp(threads: u64, buffer_bytes: u64, bytes_on_target: u64, open_files: u64) -> Footprint {
        Footprint { source: "io job 'j'".into(), threads, buffer_bytes, bytes_on_target, files: 1, open_files }
    }

    #[test]
    fn the_least_thread_limit_wins_and_is_named() {
        let l = MachineLimits::from_values(Some(100_000), None, None, None);
        assert_eq!(l.threads, MAX_THREADS);
        let l = MachineLimits::from_values(Some(1000), Some(500), None, None);
        assert_eq!((l.threads, l.threads_why.as_str()), (500, "RLIMIT_NPROC of 500"));
        let l = MachineLimits::from_values(Some(300), Some(500), None, None);
        assert!(l.threads_why.contains("threads-max of 300"));
        assert_eq!(meminfo_available("MemTotal: 8 kB\nMemAvailable:     2048 kB\n"), Some(2 << 20));
    }

    #[test]
    fn each_bound_refuses_with_value_limit_and_reason() {
        let l = MachineLimits::from_values(Some(10_000), None, Some(1 << 30), Some(1024));
        assert!(fp(4096, 1 << 20, 1 << 20, 10).check(&l, Some(1 << 30)).is_ok());
        let e = fp(100_000, 0, 0, 0).check(&l, None).unwrap_err();
        assert!(e.contains("100000 threads") && e.contains("4096") && e.contains("fsarena's limit"), "{e}");
        let e = fp(1, 2 << 30, 0, 0).check(&l, None).unwrap_err();
        assert!(e.contains("2.0GiB") && e.contains("MemAvailable"), "{e}");
        let e = fp(1, 0, 3 << 30, 0).check(&l, Some(1 << 30)).unwrap_err();
        assert!(e.contains("3.0GiB") && e.contains("1.0GiB"), "{e}");
        let e = fp(1, 0, 0, 5000).check(&l, None).unwrap_err();
        assert!(e.contains("5000 files open") && e.contains("RLIMIT_NOFILE 1024"), "{e}");
        // Unknown capacity: not checked.
        assert!(fp(1, 0, u64::MAX, 0).check(&l, None).is_ok());
        // A billion empty files do not fit 1 GiB whatever they hold, nor 1,000 free inodes.
        let many = Footprint { files: 1_000_000_000, ..fp(1, 0, 0, 0) };
        let e = many.check(&l, Some(1 << 30)).unwrap_err();
        assert!(e.contains("creates 1000000000 files and directories") && e.contains("256 bytes"), "{e}");
        assert!(many.check_files(Some(1000)).unwrap_err().contains("more than the 1000 inodes free"));
        assert!(many.check_files(None).is_ok() && fp(1, 0, 0, 0).check_files(Some(1)).is_ok());
    }

    #[test]
    fn this_machine_has_limits() {
        let l = MachineLimits::detect();
        assert!(l.threads >= 1 && l.threads <= MAX_THREADS);
        assert!(l.mem_available.is_some());
    }
}
