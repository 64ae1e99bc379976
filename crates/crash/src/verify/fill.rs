//! `verify:mode=fill`: fill the filesystem to ENOSPC and back, every byte checked.
//!
//! One cycle: files of `file_size` are written in `bs` blocks until the filesystem says
//! ENOSPC (or EDQUOT), each fsynced; the page cache is dropped (when the run may) so that the
//! reads come from the device; every 4 KiB unit written is read back and checked; every other
//! file is removed and the freed space filled again (the allocator hands out blocks that held
//! data a moment ago: stale or misplaced data shows there); everything is checked again and
//! removed. With `time_based=1` cycles repeat until `runtime`; a per-second series counts the
//! operations and the errors.
//!
//! Blocks use the `io` workload's verify format (crc32c of the unit, its offset and a seed in
//! a header: [`fsarena_io::io::verify`]), one block format in the project; the seed is the file's,
//! so a unit of another file read at the same offset is caught as well as a damaged one.

use fsarena_io::io::verify::{check, stamp};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The checked unit: the smallest block any target here writes.
pub const UNIT: u64 = 4096;

/// What one fill run does.
#[derive(Debug, Clone)]
pub struct FillConfig {
    /// Bytes a write.
    pub bs: u64,
    /// Bytes a file at most.
    pub file_size: u64,
    /// The seed of the first file (each file's is derived from it).
    pub seed: u64,
    /// Cycles until this much time has passed (`time_based`); None: one cycle.
    pub runtime: Option<Duration>,
}

/// What it found.
#[derive(Debug, Default)]
pub struct FillOutcome {
    /// Writes and reads.
    pub ops: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read back and checked.
    pub bytes_verified: u64,
    /// Units that did not check.
    pub mismatches: u64,
    /// The first of them: file, offset and why.
    pub first_mismatch: Option<String>,
    /// I/O errors other than a full filesystem (each also a finding).
    pub errors: u64,
    /// The first of them.
    pub first_error: Option<String>,
    /// Bytes the first fill wrote before ENOSPC.
    pub fill_bytes: u64,
    /// Cycles done.
    pub cycles: u64,
    /// Operations and errors per second.
    pub per_second: Vec<(u64, u64)>,
    /// Stopped early (Ctrl-C).
    pub interrupted: bool,
}

/// A file written: its path, its seed and the bytes of whole units it holds.
#[derive(Debug)]
struct Written {
    path: PathBuf,
    seed: u64,
    len: u64,
}

/// The per-second counts, against the start.
struct Clock {
    start: Instant,
    per_second: Vec<(u64, u64)>,
}

impl Clock {
    fn add(&mut self, ops: u64, errors: u64) {
        let s = self.start.elapsed().as_secs() as usize;
        if self.per_second.len() <= s {
            self.per_second.resize(s + 1, (0, 0));
        }
        self.per_second[s].0 += ops;
        self.per_second[s].1 += errors;
    }
}

fn full(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::StorageFull || e.raw_os_error() == Some(libc::EDQUOT)
}

/// The running state of one fill run.
struct Filler<'a> {
    cfg: &'a FillConfig,
    dir: &'a Path,
    below: fsarena_workload::served::Below,
    /// Bytes the filesystem said it holds when the run began: a fill that takes much more
    /// is a filesystem that never says ENOSPC, and ends with an error instead of never.
    capacity: u64,
    stop: &'a AtomicBool,
    tick: &'a dyn Fn(u64),
    out: FillOutcome,
    clock: Clock,
    buf: Vec<u8>,
    next_seed: u64,
}

impl Filler<'_> {
    fn error(&mut self, what: String) {
        self.out.errors += 1;
        self.clock.add(0, 1);
        self.out.first_error.get_or_insert(what);
    }

    /// Writes files named `prefix.N` until the filesystem is full; returns them.
    fn fill(&mut self, prefix: &str) -> Result<Vec<Written>, String> {
        let mut files = Vec::new();
        let most = self.capacity.saturating_add(self.capacity / 8).saturating_add(64 << 20);
        let mut took = 0u64;
        for n in 0u64.. {
            if took > most {
                return Err(format!(
                    "{} took {took} bytes without ENOSPC, more than the {} bytes its filesystem said it holds: not filling further",
                    self.dir.display(),
                    self.capacity
                ));
            }
            if self.stop.load(Ordering::Relaxed) {
                self.out.interrupted = true;
                break;
            }
            let path = self.dir.join(format!("{prefix}.{n}"));
            let seed = self.next_seed;
            self.next_seed = self.next_seed.wrapping_add(1);
            let file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => f,
                Err(e) if full(&e) => break,
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            };
            let (len, mut filled) = self.write_file(&file, &path, seed);
            if let Err(e) = file.sync_all() {
                if full(&e) {
                    // A filesystem that buffers writes (FUSE) says ENOSPC here, not at write.
                    filled = true;
                } else {
                    self.error(format!("fsync of {}: {e}", path.display()));
                }
            }
            took = took.saturating_add(len);
            files.push(Written { path, seed, len });
            if filled || len == 0 {
                break;
            }
        }
        Ok(files)
    }

    /// Writes one file; returns the bytes of whole units it holds and whether the filesystem
    /// said it is full.
    fn write_file(&mut self, file: &File, path: &Path, seed: u64) -> (u64, bool) {
        let mut at = 0;
        while at < self.cfg.file_size && !self.stop.load(Ordering::Relaxed) {
            let n = self.cfg.bs.min(self.cfg.file_size - at) as usize;
            let buf = &mut self.buf[..n];
            stamp(buf, at, UNIT, seed);
            match file.write_at(buf, at) {
                Ok(w) => {
                    self.out.ops += 1;
                    self.clock.add(1, 0);
                    (self.tick)(w as u64);
                    self.out.bytes_written += w as u64;
                    at += w as u64 / UNIT * UNIT;
                    if w < n {
                        // A short write: the filesystem is full.
                        return (at, true);
                    }
                }
                Err(e) if full(&e) => return (at, true),
                Err(e) => {
                    self.error(format!("write of {} at offset {at}: {e}", path.display()));
                    return (at, false);
                }
            }
        }
        (at, false)
    }

    /// Reads every unit of `files` back and checks it.
    fn check(&mut self, files: &[Written]) {
        for w in files {
            if self.stop.load(Ordering::Relaxed) {
                self.out.interrupted = true;
                return;
            }
            // Not by path: the target serves what it likes at that name (a link out, a FIFO).
            let file = match self.below.open_regular(&w.path, rustix::fs::OFlags::RDONLY) {
                Ok(f) => f,
                Err(e) => {
                    self.error(format!("cannot open {}: {e}", w.path.display()));
                    continue;
                }
            };
            let mut at = 0;
            while at < w.len {
                let n = self.cfg.bs.min(w.len - at) as usize;
                let got = match file.read_at(&mut self.buf[..n], at) {
                    Ok(g) => g,
                    Err(e) => {
                        self.error(format!("read of {} at offset {at}: {e}", w.path.display()));
                        break;
                    }
                };
                self.out.ops += 1;
                self.clock.add(1, 0);
                (self.tick)(got as u64);
                for u in 0..(n as u64 / UNIT) {
                    let (off, i) = (at + u * UNIT, (u * UNIT) as usize);
                    let piece = self.buf.get(i..i + UNIT as usize).filter(|_| i + UNIT as usize <= got);
                    // The header's bytes 16..24 are the seed (see fsarena_io::io::verify).
                    let outcome = match piece {
                        None => Err("the file is shorter than what was written".to_string()),
                        Some(p) => check(p, off).map_err(|e| e.to_string()).and_then(|()| {
                            let stored = u64::from_le_bytes(p[16..24].try_into().unwrap_or_default());
                            if stored == w.seed {
                                Ok(())
                            } else {
                                Err(format!("the unit of another file (seed {stored}, expected {})", w.seed))
                            }
                        }),
                    };
                    match outcome {
                        Ok(()) => self.out.bytes_verified += UNIT,
                        Err(why) => {
                            self.out.mismatches += 1;
                            self.clock.add(0, 1);
                            self.out
                                .first_mismatch
                                .get_or_insert_with(|| format!("{} at offset {off}: {why}", w.path.display()));
                        }
                    }
                }
                at += n as u64;
            }
        }
    }

    fn remove(&mut self, files: &[Written]) -> Result<(), String> {
        for w in files {
            std::fs::remove_file(&w.path).map_err(|e| format!("cannot remove {}: {e}", w.path.display()))?;
        }
        Ok(())
    }
}

/// Runs fill cycles in `dir` (an empty directory of the target). Every file it made is
/// removed before it returns, also on an error.
pub fn run(
    cfg: &FillConfig,
    dir: &Path,
    stop: &AtomicBool,
    tick: &dyn Fn(u64),
    drop_caches: Option<&(dyn Fn() -> Result<(), String> + Sync)>,
) -> Result<FillOutcome, String> {
    let mut buf = vec![0u8; cfg.bs as usize];
    let mut rng = fastrand::Rng::with_seed(cfg.seed);
    rng.fill(&mut buf);
    let below =
        fsarena_workload::served::Below::hold(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let capacity = rustix::fs::fstatvfs(below.fd())
        .map(|s| s.f_blocks.saturating_mul(s.f_frsize))
        .map_err(|e| format!("statvfs {}: {}", dir.display(), std::io::Error::from(e)))?;
    let mut f = Filler {
        cfg,
        dir,
        below,
        capacity,
        stop,
        tick,
        out: FillOutcome::default(),
        clock: Clock { start: Instant::now(), per_second: Vec::new() },
        buf,
        next_seed: cfg.seed << 20,
    };
    let started = Instant::now();
    let result = (|| -> Result<(), String> {
        loop {
            let cycle = f.out.cycles;
            let first = f.fill(&format!("fill.{cycle}"))?;
            if cycle == 0 {
                f.out.fill_bytes = first.iter().map(|w| w.len).sum();
            }
            if let Some(drop) = drop_caches {
                drop()?;
            }
            f.check(&first);
            // And back: every other file goes, the freed space is filled again.
            let (mut gone, mut kept) = (Vec::new(), Vec::new());
            for (i, w) in first.into_iter().enumerate() {
                if i % 2 == 0 {
                    gone.push(w);
                } else {
                    kept.push(w);
                }
            }
            f.remove(&gone)?;
            let again = f.fill(&format!("refill.{cycle}"))?;
            if let Some(drop) = drop_caches {
                drop()?;
            }
            f.check(&kept);
            f.check(&again);
            f.remove(&kept)?;
            f.remove(&again)?;
            f.out.cycles += 1;
            let more = cfg.runtime.is_some_and(|r| started.elapsed() < r);
            if !more || f.out.interrupted || stop.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
    })();
    // Whatever an error left: only the names this run makes.
    if result.is_err() {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("fill.") || name.starts_with("refill.") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    result?;
    f.out.per_second = f.clock.per_second;
    Ok(f.out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn written_files_check_and_damaged_or_foreign_units_are_caught() {
        // One file written and checked as a fill writes and checks it (filling a real
        // filesystem to ENOSPC is the integration test's).
        let dir = std::env::temp_dir().join(format!("fsarena-fill-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = FillConfig { bs: 64 << 10, file_size: 256 << 10, seed: 3, runtime: None };
        let stop = AtomicBool::new(false);
        let mut buf = vec![1u8; (cfg.bs) as usize];
        let mut f = Filler {
            cfg: &cfg,
            dir: &dir,
            below: fsarena_workload::served::Below::hold(&dir).unwrap(),
            capacity: 1 << 30,
            stop: &stop,
            tick: &|_| {},
            out: FillOutcome::default(),
            clock: Clock { start: Instant::now(), per_second: Vec::new() },
            buf: std::mem::take(&mut buf),
            next_seed: 7,
        };
        let path = dir.join("fill.0.0");
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path).unwrap();
        let (len, filled) = f.write_file(&file, &path, 7);
        assert_eq!((len, filled), (256 << 10, false));
        let w = vec![Written { path: path.clone(), seed: 7, len }];
        f.check(&w);
        assert_eq!((f.out.bytes_verified, f.out.mismatches), (256 << 10, 0));
        // One flipped byte, and a unit of another file's seed: two mismatches, the first named.
        file.write_at(&[0xff], 70_000).unwrap();
        let mut other = vec![1u8; UNIT as usize];
        stamp(&mut other, 8192, UNIT, 8);
        file.write_at(&other, 8192).unwrap();
        f.check(&w);
        assert_eq!(f.out.mismatches, 2);
        let first = f.out.first_mismatch.clone().unwrap();
        assert!(first.contains("at offset 8192") && first.contains("another file"), "{first}");
        f.remove(&w).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
