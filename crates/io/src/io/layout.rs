//! Laying out test files before the measured phase, fast.
//!
//! fio writes its files block by block ("Laying out IO file"), one job after another, after
//! preallocating each (`fallocate=native` by default). Here each file is preallocated the same
//! way and then written by one thread with large sequential writes (several files at once,
//! never one file by several threads, so the filesystem keeps each file in few extents); a
//! file that already has the needed size is reused as is.

use super::files::{self, CreatedFiles};
use super::options::Fallocate;
use fsarena_engine::AlignedBuf;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::OFlags;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bytes per layout write.
const CHUNK: usize = 4 << 20;

/// A file a group of jobs needs.
#[derive(Debug, Clone)]
pub struct FileNeed {
    /// Where.
    pub path: PathBuf,
    /// The client whose root it is laid out through (index into the roots).
    pub client: usize,
    /// Size it must have.
    pub size: u64,
    /// True when a job reads it, so it must hold data; false for write-only files, which are
    /// only created (and preallocated per `fallocate`).
    pub content: bool,
    /// Preallocation of a file created for writing.
    pub fallocate: Fallocate,
    /// Seed for the random content.
    pub seed: u64,
    /// When the job that lays it out fills its writes from fio's streams (it dedupes or
    /// compresses), the layout's content comes from them, as fio's does: the clone's index
    /// in its group, its streams, and the block fio lays out with (the largest write).
    pub fill: Option<(usize, super::dedupe::BufferFill, usize)>,
}

/// What the layout did.
#[derive(Debug, Clone, Default)]
pub struct LayoutReport {
    /// Bytes written.
    pub bytes: u64,
    /// Files reused as they were.
    pub reused: usize,
    /// The streams of the clones whose files were laid out from them, as the layout left
    /// them (by the clone's index in its group): the clone's writes go on from there.
    pub filled: Vec<(usize, super::dedupe::BufferFill)>,
}

/// Lays out `needs` (files directly inside their client's root, `roots[need.client]`) on up
/// to `parallel` threads, recording the files it creates in `created`.
pub fn lay_out(
    roots: &[BorrowedFd<'_>],
    needs: &[FileNeed],
    parallel: usize,
    stop: &AtomicBool,
    created: &CreatedFiles,
) -> Result<LayoutReport, (i32, String)> {
    let next = AtomicUsize::new(0);
    let report = Mutex::new(LayoutReport::default());
    let first_error: Mutex<Option<(i32, String)>> = Mutex::new(None);
    let work = || {
        let mut buf: Option<AlignedBuf> = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(need) = needs.get(i) else { break };
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Some(&root) = roots.get(need.client) else {
                if let Ok(mut slot) = first_error.lock() {
                    slot.get_or_insert((0, format!("{}: no client {}", need.path.display(), need.client + 1)));
                }
                stop.store(true, Ordering::Relaxed);
                break;
            };
            let mut fill = need.fill.clone();
            let streams = fill.as_mut().map(|(_, f, block)| (f, *block));
            match lay_out_one(root, need, &mut buf, streams, stop, created) {
                Ok(Some(bytes)) => {
                    if let Ok(mut r) = report.lock() {
                        r.bytes += bytes;
                        if let Some((clone, f, _)) = fill {
                            r.filled.push((clone, f));
                        }
                    }
                }
                Ok(None) => {
                    if let Ok(mut r) = report.lock() {
                        r.reused += 1;
                    }
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    if let Ok(mut slot) = first_error.lock() {
                        slot.get_or_insert(e);
                    }
                    break;
                }
            }
        }
    };
    std::thread::scope(|s| {
        let mut started = 0;
        for i in 0..parallel.clamp(1, needs.len().max(1)) {
            // The threads share one queue: if one cannot be started, the others (or this
            // thread) do its share.
            match std::thread::Builder::new().name(format!("layout-{i}")).spawn_scoped(s, work) {
                Ok(_) => started += 1,
                Err(_) => break,
            }
        }
        if started == 0 {
            work();
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(report.into_inner().unwrap_or_default())
}

/// Returns Some(bytes written), or None when the file was reused.
fn lay_out_one(
    root: BorrowedFd<'_>,
    need: &FileNeed,
    buf: &mut Option<AlignedBuf>,
    mut streams: Option<(&mut super::dedupe::BufferFill, usize)>,
    stop: &AtomicBool,
    created: &CreatedFiles,
) -> Result<Option<u64>, (i32, String)> {
    let err = |what: &str, e: std::io::Error| {
        (e.raw_os_error().unwrap_or(libc::EIO), format!("laying out {}: {what}: {e}", need.path.display()))
    };
    let (file, existing) = match files::create_new(root, &need.path).map_err(|e| err("create", e))? {
        Some(file) => {
            created.record(&need.path, &file);
            (file, 0)
        }
        None => {
            // There already: reused as fio reuses it (an earlier repetition's, or kept with
            // keep=1), but only a regular file, reached without following a link.
            let file = files::open_existing(root, &need.path, OFlags::RDWR).map_err(|e| err("open", e))?;
            let existing = file.metadata().map(|m| m.len()).map_err(|e| err("stat", e))?;
            if existing >= need.size && (existing > 0 || need.size == 0) {
                return Ok(None);
            }
            (file, existing)
        }
    };
    let mode = match need.fallocate {
        Fallocate::Native => Some(rustix::fs::FallocateFlags::empty()),
        Fallocate::Keep => Some(rustix::fs::FallocateFlags::KEEP_SIZE),
        Fallocate::None | Fallocate::Truncate => None,
    };
    if let Some(mode) = mode {
        // As in fio, a filesystem without fallocate is not an error. Preallocating the whole
        // file before writing it gives the allocator one request, hence few extents.
        let _ = rustix::fs::fallocate(file.as_fd(), mode, existing, need.size.saturating_sub(existing));
    }
    if !need.content {
        file.set_len(need.size).map_err(|e| err("ftruncate", e))?;
        return Ok(Some(0));
    }
    let b = buf.get_or_insert_with(|| {
        let mut b = AlignedBuf::new(CHUNK, 4096);
        super::job::fill_buffer(b.as_mut_slice(), 0, need.seed);
        b
    });
    let mut offset = existing / 4096 * 4096;
    let mut written = 0;
    while offset < need.size {
        if stop.load(Ordering::Relaxed) {
            return Err((libc::EINTR, "interrupted while laying out files".into()));
        }
        let len = match &mut streams {
            Some((fill, block)) => {
                // Whole blocks of fio's layout per write, so that each of its buffers is one.
                // (A block larger than the buffer is split: fio's content then is not kept.)
                let len = if *block <= CHUNK { CHUNK / *block * *block } else { CHUNK };
                let len = len.min((need.size - offset) as usize);
                fill.fill_layout(&mut b.as_mut_slice()[..len], *block);
                len
            }
            None => {
                let len = CHUNK.min((need.size - offset) as usize);
                // Make every 4 KiB block differ, so that no filesystem dedupes the layout.
                for (i, block) in b.as_mut_slice()[..len].chunks_mut(4096).enumerate() {
                    let tag = offset + i as u64 * 4096;
                    let n = 8.min(block.len());
                    block[..n].copy_from_slice(&tag.to_le_bytes()[..n]);
                }
                len
            }
        };
        file.write_all_at(&b.as_slice()[..len], offset).map_err(|e| err("write", e))?;
        offset += len as u64;
        written += len as u64;
    }
    rustix::fs::fdatasync(file.as_fd()).map_err(|e| err("fdatasync", e.into()))?;
    Ok(Some(written))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lays_out_and_reuses() {
        let dir = std::env::temp_dir().join(format!("fsarena-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let need = |name: &str, content| FileNeed {
            client: 0,
            path: dir.join(name),
            size: 5 << 20 | 512,
            content,
            fallocate: Fallocate::None,
            seed: 1,
            fill: None,
        };
        let needs = vec![need("a", true), need("b", true), need("w", false)];
        let stop = AtomicBool::new(false);
        let root = files::open_root(&dir).unwrap();
        let created = CreatedFiles::default();
        let r = lay_out(&[root.as_fd()], &needs, 2, &stop, &created).unwrap();
        assert_eq!(r.bytes, 2 * (5 << 20 | 512));
        for n in &needs {
            assert_eq!(std::fs::metadata(&n.path).unwrap().len(), n.size);
        }
        let data = std::fs::read(dir.join("a")).unwrap();
        assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100, "content is random");
        let again = lay_out(&[root.as_fd()], &needs, 2, &stop, &created).unwrap();
        assert_eq!((again.bytes, again.reused), (0, 3));
        created.remove_all(&[dir.as_path()], &[root.as_fd()]);
        assert!(!dir.join("a").exists() && !dir.join("w").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Extents of `path` as `filefrag` counts them.
    fn extents(path: &std::path::Path) -> u64 {
        let out = std::process::Command::new("filefrag").arg(path).output().expect("filefrag (e2fsprogs) runs");
        let text = String::from_utf8_lossy(&out.stdout);
        // "<path>: N extents found"
        text.rsplit(": ").next().and_then(|t| t.split_whitespace().next()).and_then(|n| n.parse().ok()).expect("count")
    }

    #[test]
    fn files_laid_out_side_by_side_keep_few_extents_on_ext4() {
        // A loop-backed ext4, as the `ext4:` target makes; needs root, as the tests do.
        let base = std::env::temp_dir().join(format!("fsarena-test-frag-{}", std::process::id()));
        let (img, mnt) = (base.join("i.img"), base.join("mnt"));
        std::fs::create_dir_all(&mnt).unwrap();
        std::fs::File::create(&img).unwrap().set_len(512 << 20).unwrap();
        let ok = |c: &mut std::process::Command| c.status().map(|s| s.success()).unwrap_or(false);
        assert!(ok(std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img)), "mkfs.ext4");
        assert!(ok(std::process::Command::new("mount").args(["-o", "loop"]).arg(&img).arg(&mnt)), "mount -o loop");
        let result = std::panic::catch_unwind(|| {
            let root = files::open_root(&mnt).unwrap();
            let mut worst = [0u64; 2];
            for (i, fallocate) in [Fallocate::None, Fallocate::Native].into_iter().enumerate() {
                let needs: Vec<FileNeed> = (0..4)
                    .map(|f| FileNeed {
                        client: 0,
                        path: mnt.join(format!("f{i}.{f}")),
                        size: 32 << 20,
                        content: true,
                        fallocate,
                        seed: f,
                        fill: None,
                    })
                    .collect();
                let created = CreatedFiles::default();
                lay_out(&[root.as_fd()], &needs, 4, &AtomicBool::new(false), &created).unwrap();
                worst[i] = needs.iter().map(|n| extents(&n.path)).max().unwrap();
            }
            worst
        });
        let _ = std::process::Command::new("umount").arg(&mnt).status();
        let _ = std::fs::remove_dir_all(&base);
        let [plain, fallocated] = result.unwrap();
        // fio's default (fallocate=native) leaves 1-4 extents per file (ext4's largest extent
        // is 128 MiB of 4 KiB blocks).
        assert!(fallocated <= 4 && fallocated <= plain, "{fallocated} extents with fallocate (without: {plain})");
        eprintln!("extents per 32 MiB file: {plain} written as is, {fallocated} fallocated first");
    }
}
