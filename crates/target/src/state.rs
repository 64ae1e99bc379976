//! The state file: every resource a run creates is written down *before* it is created, so
//! that a run killed with SIGKILL can be undone by `fsarena cleanup`, which touches nothing
//! it did not record. The same undo serves a normal teardown.

use crate::sys;
use crate::TargetError;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Something a run created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resource", rename_all = "snake_case")]
pub enum Resource {
    /// A directory fsarena made: a mount point (removed if empty) or a private scratch
    /// directory (removed with its contents).
    Dir {
        /// Where.
        path: PathBuf,
        /// Remove its contents too.
        recursive: bool,
    },
    /// A file: an image or a daemon's log.
    File {
        /// Where.
        path: PathBuf,
    },
    /// A loop device attached to `image`; found again by its backing file.
    Loop {
        /// The image behind it.
        image: PathBuf,
    },
    /// A mount at `path`.
    Mount {
        /// The mount point.
        path: PathBuf,
        /// A FUSE mount (unmounted with fusermount3).
        fuse: bool,
    },
    /// A process fsarena started (a FUSE daemon).
    Process {
        /// Its PID.
        pid: u32,
        /// Its start time, so that a later process reusing the PID is never touched.
        start_time: u64,
    },
}

impl Resource {
    /// Undoes this resource if it still exists; says what it did.
    pub fn undo(&self) -> Result<Option<String>, TargetError> {
        match self {
            Resource::Mount { path, fuse } => {
                if sys::mount_at(path).is_none() {
                    return Ok(None);
                }
                sys::unmount(path, *fuse)?;
                Ok(Some(format!("unmounted {}", path.display())))
            }
            Resource::Process { pid, start_time } => {
                if sys::process_start_time(*pid) != Some(*start_time) {
                    return Ok(None);
                }
                sys::end_process(*pid, *start_time, Duration::from_secs(5));
                Ok(Some(format!("ended process {pid}")))
            }
            Resource::Loop { image } => {
                let devices = sys::loops_backed_by(image);
                for dev in &devices {
                    sys::run("losetup", &["-d", dev])?;
                }
                Ok((!devices.is_empty()).then(|| format!("detached {}", devices.join(", "))))
            }
            Resource::File { path } => match std::fs::remove_file(path) {
                Ok(()) => Ok(Some(format!("removed {}", path.display()))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(TargetError(format!("cannot remove {}: {e}", path.display()))),
            },
            Resource::Dir { path, recursive } => {
                let result = if *recursive { std::fs::remove_dir_all(path) } else { std::fs::remove_dir(path) };
                match result {
                    Ok(()) => Ok(Some(format!("removed {}", path.display()))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    // A mount point that still holds kept files (keep=1) stays.
                    Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(None),
                    Err(e) => Err(TargetError(format!("cannot remove {}: {e}", path.display()))),
                }
            }
        }
    }
}

/// Undoes `resources` (in the order they were created): mounts first, newest first, so a
/// FUSE daemon is unmounted before it is ended; then everything else, newest first. Every
/// resource is tried; the first error is returned.
pub fn undo_all(resources: &[Resource]) -> (Vec<String>, Option<TargetError>) {
    let mut done = Vec::new();
    let mut first_error = None;
    let mounts = resources.iter().rev().filter(|r| matches!(r, Resource::Mount { .. }));
    let others = resources.iter().rev().filter(|r| !matches!(r, Resource::Mount { .. }));
    for r in mounts.chain(others) {
        match r.undo() {
            Ok(Some(what)) => done.push(what),
            Ok(None) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    (done, first_error)
}

/// The work directory of one run: locked for the run's lifetime, with its state file.
#[derive(Debug)]
pub struct Workdir {
    path: PathBuf,
    lock: File,
    state_path: PathBuf,
    state: Mutex<File>,
}

const LOCK: &str = ".lock";

fn lock(path: &Path) -> Result<File, TargetError> {
    std::fs::create_dir_all(path)
        .map_err(|e| TargetError(format!("cannot create work directory {}: {e}", path.display())))?;
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path.join(LOCK))
        .map_err(|e| TargetError(format!("cannot open {}: {e}", path.join(LOCK).display())))?;
    rustix::fs::flock(lock.as_fd(), rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(|_| {
        TargetError(format!(
            "another fsarena run is using the work directory {}; wait for it or use --workdir",
            path.display()
        ))
    })?;
    Ok(lock)
}

impl Workdir {
    /// Locks `path` (creating it) and starts this run's state file.
    pub fn open(path: &Path) -> Result<Self, TargetError> {
        let lock = lock(path)?;
        let state_path = path.join(format!("state-{}.jsonl", std::process::id()));
        let state = File::options()
            .create(true)
            .append(true)
            .open(&state_path)
            .map_err(|e| TargetError(format!("cannot create {}: {e}", state_path.display())))?;
        Ok(Self { path: path.to_path_buf(), lock, state_path, state: Mutex::new(state) })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `resource` down durably; call before creating it.
    pub fn record(&self, resource: &Resource) -> Result<(), TargetError> {
        let mut line = serde_json::to_string(resource).map_err(|e| TargetError(e.to_string()))?;
        line.push('\n');
        let mut file = self.state.lock().map_err(|_| TargetError("state file lock poisoned".into()))?;
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(|e| TargetError(format!("cannot write {}: {e}", self.state_path.display())))
    }

    /// Ends the run: the state file and the lock go; the directory stays.
    pub fn close(self) {
        let _ = std::fs::remove_file(&self.state_path);
        let _ = std::fs::remove_file(self.path.join(LOCK));
        drop(self.lock);
    }
}

/// Undoes what killed runs left in `workdir`, from their state files; touches nothing else.
pub fn cleanup(workdir: &Path) -> Result<Vec<String>, TargetError> {
    if !workdir.exists() {
        return Ok(Vec::new());
    }
    let lock = lock(workdir)?;
    let mut done = Vec::new();
    let mut first_error = None;
    let mut states: Vec<PathBuf> = std::fs::read_dir(workdir)
        .map_err(|e| TargetError(format!("cannot read {}: {e}", workdir.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("state-") && n.ends_with(".jsonl"))
        })
        .collect();
    states.sort();
    for state in states {
        let text = std::fs::read_to_string(&state).unwrap_or_default();
        // A line cut short by the kill is ignored: its resource was never created.
        let resources: Vec<Resource> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let (did, error) = undo_all(&resources);
        done.extend(did);
        match error {
            Some(e) => {
                first_error.get_or_insert(e);
            }
            None => {
                let _ = std::fs::remove_file(&state);
            }
        }
    }
    let _ = std::fs::remove_file(workdir.join(LOCK));
    drop(lock);
    match first_error {
        Some(e) => Err(e),
        None => Ok(done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_and_cleanup_undoes_only_them() {
        let root = std::env::temp_dir().join(format!("fsarena-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let work = root.join("work");
        let wd = Workdir::open(&work).unwrap();
        assert!(Workdir::open(&work).is_err(), "a second run is refused");
        let mine = work.join("scratch");
        let image = work.join("image.img");
        wd.record(&Resource::Dir { path: mine.clone(), recursive: true }).unwrap();
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("f"), b"x").unwrap();
        wd.record(&Resource::File { path: image.clone() }).unwrap();
        std::fs::write(&image, b"img").unwrap();
        let other = work.join("not-mine");
        std::fs::write(&other, b"keep").unwrap();
        // Simulate SIGKILL: the lock goes with the process, the state file stays.
        std::mem::forget(wd.state);
        drop(wd.lock);
        let done = cleanup(&work).unwrap();
        assert_eq!(done.len(), 2, "{done:?}");
        assert!(!mine.exists() && !image.exists());
        assert!(other.exists(), "cleanup touched something it did not record");
        let leftovers: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("not-mine")]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
