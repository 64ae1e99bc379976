//! Filesets on the target: the directory tree (`dirwidth` entries per directory), each
//! entry's size (fixed or gamma-distributed), which entries exist, and filebench's picking
//! rules (`fileset.c`'s `fileset_pick`): an existing or a missing entry, in rotation from
//! where the last pick stopped, skipping entries another thread is busy with.

use super::model::{FilesetDef, SizeDist};
use fsarena_workload::served::{Below, Budget};
use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags};
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// One file (or leaf directory) of a fileset.
#[derive(Debug, Clone)]
struct Entry {
    /// Path relative to the run's root.
    path: PathBuf,
    size: u64,
    exists: bool,
    /// A thread is opening, creating, deleting or stating it.
    busy: bool,
    /// Descriptors open on it (a delete skips it while any are).
    open: u32,
}

#[derive(Debug)]
struct State {
    entries: Vec<Entry>,
    rotor_exists: usize,
    rotor_missing: usize,
    rotor_dirs: usize,
}

/// What a pick wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An entry that exists (open, delete, stat, removedir).
    Exists,
    /// One that does not (create, makedir).
    Missing,
}

/// A fileset at run time.
#[derive(Debug)]
pub struct Fileset {
    /// Its definition.
    pub def: FilesetDef,
    /// Every directory of its tree (relative to the root), parents first.
    pub dirs: Vec<PathBuf>,
    state: Mutex<State>,
    idle: Condvar,
}

/// A gamma(shape, scale) draw (Marsaglia and Tsang, "A simple method for generating gamma
/// variables", ACM TOMS 26(3), 2000): exact for shape >= 1, boosted by U^(1/shape) below.
pub fn gamma(rng: &mut fastrand::Rng, shape: f64, scale: f64) -> f64 {
    if shape < 1.0 {
        let u = 1.0 - rng.f64();
        return gamma(rng, shape + 1.0, scale) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // A standard normal by Box-Muller; 1 - f64() is in (0, 1], so ln never sees 0.
        let (u1, u2) = (1.0 - rng.f64(), rng.f64());
        let x = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.f64();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v * scale;
        }
    }
}

/// filebench names files and directories by number, 8 digits, from 1.
fn numbered(i: u64) -> String {
    format!("{:08}", i + 1)
}

impl Fileset {
    /// Lays out `def`: paths, sizes (drawn from `sizes`) and which entries exist at the start
    /// (drawn from `exists`); nothing is created. Two generators, as filebench's: its sizes
    /// come from drand48 and its preallocation from rand(), so the one does not shift the other.
    pub fn layout(def: &FilesetDef, sizes: &mut fastrand::Rng, exists: &mut fastrand::Rng) -> Fileset {
        let mut entries = Vec::new();
        let mut dirs = Vec::new();
        let items = def.entries.max(def.leafdirs);
        if def.single_file {
            entries.push(Entry { path: PathBuf::from(&def.name), size: 0, exists: false, busy: false, open: 0 });
        } else {
            // Items `width` to a directory, directories `width` to their parent, as many levels
            // as it takes: a flat directory when the width exceeds the items (varmail).
            let width = def.dirwidth.max(1);
            let mut levels = 1u32;
            let mut span = width;
            while span.saturating_mul(width) < items && levels < 8 {
                span = span.saturating_mul(width);
                levels += 1;
            }
            let base = PathBuf::from(&def.name);
            dirs.push(base.clone());
            let mut seen = std::collections::BTreeSet::new();
            for i in 0..items {
                let mut path = base.clone();
                let mut parent = i / width;
                let mut parts = Vec::new();
                for _ in 0..levels {
                    parts.push(parent % width);
                    parent /= width;
                }
                for p in parts.iter().rev() {
                    path.push(numbered(*p));
                    if seen.insert(path.clone()) {
                        dirs.push(path.clone());
                    }
                }
                path.push(numbered(i));
                entries.push(Entry { path, size: 0, exists: false, busy: false, open: 0 });
            }
        }
        for e in &mut entries {
            e.size = match def.size {
                SizeDist::Fixed(n) => n,
                SizeDist::Gamma { mean, shape } => gamma(sizes, shape, mean / shape).round() as u64,
            };
            e.exists = exists.u32(0..100) < def.prealloc;
        }
        if def.single_file {
            entries[0].exists = def.prealloc > 0;
        }
        Fileset {
            def: def.clone(),
            dirs,
            state: Mutex::new(State { entries, rotor_exists: 0, rotor_missing: 0, rotor_dirs: 0 }),
            idle: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes and entries that exist at the start (for the footprint of the layout).
    pub fn preallocated(&self) -> (u64, u64) {
        let s = self.lock();
        let on = s.entries.iter().filter(|e| e.exists);
        on.fold((0, 0), |(b, n), e| (b + if self.def.leafdirs > 0 { 0 } else { e.size }, n + 1))
    }

    /// Creates the tree and the entries that exist at the start, with their content, untimed.
    /// `stopped` is polled between files (Ctrl-C during a long layout).
    pub fn create(&self, below: &Below, stopped: &dyn Fn() -> bool) -> Result<(), String> {
        let root = below.path();
        for d in &self.dirs {
            let p = root.join(d);
            below
                .parent(d)
                .and_then(|(parent, name)| Ok(rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755))?))
                .map_err(|e| format!("mkdir {}: {e}", p.display()))?;
        }
        let chunk = vec![0u8; 1 << 20];
        let todo: Vec<(PathBuf, u64)> =
            self.lock().entries.iter().filter(|e| e.exists).map(|e| (e.path.clone(), e.size)).collect();
        for (path, size) in todo {
            if stopped() {
                return Err("interrupted while creating the filesets".into());
            }
            let p = root.join(&path);
            if self.def.leafdirs > 0 {
                below
                    .parent(&path)
                    .and_then(|(parent, name)| Ok(rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755))?))
                    .map_err(|e| format!("mkdir {}: {e}", p.display()))?;
                continue;
            }
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
            let mut f = below
                .open(&path, flags, 0o644)
                .and_then(|fd| fsarena_workload::served::regular(&fd, &p).map(|()| std::fs::File::from(fd)))
                .map_err(|e| format!("create {}: {e}", p.display()))?;
            let mut left = size;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                std::io::Write::write_all(&mut f, &chunk[..n]).map_err(|e| format!("write {}: {e}", p.display()))?;
                left -= n as u64;
            }
        }
        Ok(())
    }

    /// Picks an entry as filebench does: in rotation from the last pick, skipping busy ones
    /// (waiting while all that fit are busy); marks it busy. `None` when none fits at all
    /// (filebench's FILEBENCH_NORSC) or `stopped()`.
    pub fn pick(&self, want: Want, stopped: &dyn Fn() -> bool) -> Option<usize> {
        let mut s = self.lock();
        loop {
            let n = s.entries.len();
            let start = (if want == Want::Exists { s.rotor_exists } else { s.rotor_missing }) % n.max(1);
            let mut any = false;
            for k in 0..n {
                let i = (start + k) % n;
                let e = &s.entries[i];
                if e.exists != (want == Want::Exists) {
                    continue;
                }
                any = true;
                if !e.busy {
                    s.entries[i].busy = true;
                    if want == Want::Exists {
                        s.rotor_exists = i + 1;
                    } else {
                        s.rotor_missing = i + 1;
                    }
                    return Some(i);
                }
            }
            if !any || stopped() {
                return None;
            }
            s = self.idle.wait_timeout(s, Duration::from_millis(10)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Ends a pick: the entry now exists or not, and `open` more (or fewer) descriptors are
    /// open on it.
    pub fn release(&self, i: usize, exists: bool, open: i32) {
        self.unbusy(i, Some(exists), open);
    }

    /// Ends a [`Fileset::hold`]: `open` more (or fewer) descriptors, whether the entry exists
    /// unchanged.
    pub fn unhold(&self, i: usize, open: i32) {
        self.unbusy(i, None, open);
    }

    /// filebench's fileset_unbusy.
    fn unbusy(&self, i: usize, exists: Option<bool>, open: i32) {
        let mut s = self.lock();
        let e = &mut s.entries[i];
        e.busy = false;
        if let Some(exists) = exists {
            e.exists = exists;
        }
        e.open = e.open.saturating_add_signed(open);
        drop(s);
        self.idle.notify_all();
    }

    /// Takes entry `i` for a close or a delete through a descriptor, as filebench's
    /// closefile and deletefile do before they time the call: waits while another thread is
    /// busy with it (opening, closing or deleting it) and marks it busy, so that no pick
    /// takes it meanwhile. False when `stopped()` ends the wait.
    pub fn hold(&self, i: usize, stopped: &dyn Fn() -> bool) -> bool {
        let mut s = self.lock();
        while s.entries[i].busy {
            if stopped() {
                return false;
            }
            s = self.idle.wait_timeout(s, Duration::from_millis(10)).unwrap_or_else(|e| e.into_inner()).0;
        }
        s.entries[i].busy = true;
        true
    }

    /// One descriptor on entry `i` closed.
    pub fn closed(&self, i: usize) {
        let mut s = self.lock();
        s.entries[i].open = s.entries[i].open.saturating_sub(1);
    }

    /// Descriptors open on entry `i`.
    pub fn open_count(&self, i: usize) -> u32 {
        self.lock().entries[i].open
    }

    /// Entry `i`'s path (relative to the root) and size.
    pub fn entry(&self, i: usize) -> (PathBuf, u64) {
        let s = self.lock();
        (s.entries[i].path.clone(), s.entries[i].size)
    }

    /// The next directory in rotation (listdir).
    pub fn next_dir(&self) -> Option<PathBuf> {
        let mut s = self.lock();
        if self.dirs.is_empty() {
            return None;
        }
        let i = s.rotor_dirs % self.dirs.len();
        s.rotor_dirs = i + 1;
        Some(self.dirs[i].clone())
    }

    /// Removes everything of the fileset under `root` (best effort: the run's error, if any,
    /// is the one reported).
    /// Removes the fileset's top (its tree, or its single file) below `below`, without
    /// following a link and within a budget of twice its entries (the target may serve an
    /// endless tree).
    pub fn remove(&self, below: &Below) {
        let top = if self.def.single_file { PathBuf::from(&self.def.name) } else { self.dirs[0].clone() };
        let Ok((parent, name)) = below.parent(&top) else { return };
        let entries = (self.lock().entries.len() + self.dirs.len()) as u64;
        let mut budget = Budget::new(&below.path().join(&top), entries.saturating_mul(2) + 1024, 64);
        let _ = fsarena_workload::served::remove_tree(parent.as_fd(), name, &mut budget, 0);
    }

    /// Entries and directories of the fileset: the most a listing of one of its directories
    /// can hold.
    pub fn names(&self) -> u64 {
        (self.lock().entries.len() + self.dirs.len()) as u64
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn def(entries: u64, dirwidth: u64, prealloc: u32, size: SizeDist) -> FilesetDef {
        FilesetDef {
            name: "set".into(),
            single_file: false,
            size,
            entries,
            leafdirs: 0,
            dirwidth,
            prealloc,
            readonly: false,
            line: 1,
        }
    }

    #[test]
    fn gamma_sizes_have_the_asked_mean() {
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 200_000;
        let sum: f64 = (0..n).map(|_| gamma(&mut rng, 1.5, 16384.0 / 1.5)).sum();
        let mean = sum / n as f64;
        assert!((mean - 16384.0).abs() < 16384.0 * 0.01, "{mean}");
        let small: f64 = (0..n).map(|_| gamma(&mut rng, 0.5, 2.0)).sum::<f64>() / n as f64;
        assert!((small - 1.0).abs() < 0.02, "{small}");
    }

    #[test]
    fn tree_widths_prealloc_and_rotation() {
        let mut rng = fastrand::Rng::with_seed(1);
        let fs = Fileset::layout(&def(1000, 20, 80, SizeDist::Fixed(10)), &mut rng.clone(), &mut rng);
        // 1000 files, 20 a directory: 50 leaf directories under 3 parents, plus the top.
        assert_eq!(fs.dirs.len(), 1 + 3 + 50);
        let (bytes, n) = fs.preallocated();
        assert!((700..900).contains(&n), "{n}");
        assert_eq!(bytes, n * 10);
        let flat = Fileset::layout(&def(100, 1_000_000, 0, SizeDist::Fixed(0)), &mut rng.clone(), &mut rng);
        assert_eq!(flat.dirs.len(), 2);
        // Missing entries come in rotation; a busy one is skipped.
        let a = flat.pick(Want::Missing, &|| false).unwrap();
        let b = flat.pick(Want::Missing, &|| false).unwrap();
        assert_eq!((a, b), (0, 1));
        assert_eq!(flat.pick(Want::Exists, &|| false), None);
        flat.release(a, true, 1);
        assert_eq!(flat.pick(Want::Exists, &|| false), Some(0));
        assert_eq!(flat.open_count(0), 1);
    }

    /// closefile takes its entry as filebench's does: it waits while another thread is busy
    /// with it, and no pick takes it while it is being closed.
    #[test]
    fn a_file_being_closed_is_busy_and_a_close_waits_for_a_busy_one() {
        let mut rng = fastrand::Rng::with_seed(2);
        let fs = Fileset::layout(&def(2, 100, 100, SizeDist::Fixed(0)), &mut rng.clone(), &mut rng);
        let a = fs.pick(Want::Exists, &|| false).unwrap();
        fs.release(a, true, 1);
        // Taken for its close: the next pick passes it by.
        assert!(fs.hold(a, &|| false));
        let b = fs.pick(Want::Exists, &|| false).unwrap();
        assert_ne!(a, b);
        // A second close of the busy entry waits; `stopped` ends that wait.
        assert!(!fs.hold(a, &|| true));
        std::thread::scope(|s| {
            let waiter = s.spawn(|| fs.hold(a, &|| false));
            std::thread::sleep(Duration::from_millis(30));
            assert!(!waiter.is_finished(), "a close went ahead while the entry was busy");
            fs.unhold(a, -1);
            assert!(waiter.join().unwrap());
        });
        assert_eq!(fs.open_count(a), 0);
    }
}
