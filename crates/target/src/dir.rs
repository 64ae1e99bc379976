//! `dir:path=PATH`: an existing directory or mount, never formatted or unmounted. Workloads
//! work in a fresh subdirectory that teardown removes.

use crate::{Mounted, Target, TargetError};
use fsarena_core::{InputError, Spec};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// An existing directory.
#[derive(Debug, Clone)]
pub struct DirTarget {
    path: PathBuf,
    label: String,
    options: Vec<(String, String)>,
}

impl DirTarget {
    /// From `dir:path=...[,label=...]`.
    pub fn from_spec(spec: &Spec, text: &str) -> Result<Self, InputError> {
        for (k, _) in &spec.params {
            if k != "path" && k != "label" {
                return Err(InputError::new(format!(
                    "unknown key '{k}' for target dir: accepted keys are path, label"
                )));
            }
        }
        let path = spec.get("path").ok_or_else(|| InputError::new("target dir needs path=, e.g. dir:path=/mnt/nfs"))?;
        let path = PathBuf::from(path);
        if !path.is_dir() {
            return Err(InputError::new(format!("dir:path={}: not an existing directory", path.display())));
        }
        Ok(Self { label: spec.get("label").unwrap_or(text).to_string(), options: spec.params.clone(), path })
    }
}

/// A provisioned directory: `PATH/fsarena-PID-N`.
#[derive(Debug)]
pub struct MountedDir {
    work: PathBuf,
    info: Vec<(String, String)>,
}

impl Target for DirTarget {
    fn label(&self) -> &str {
        &self.label
    }
    fn kind(&self) -> &'static str {
        "dir"
    }
    fn options(&self) -> Vec<(String, String)> {
        self.options.clone()
    }
    fn provision(&self) -> Result<Box<dyn Mounted>, TargetError> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let work = self.path.join(format!("fsarena-{}-{n}", std::process::id()));
        std::fs::create_dir(&work).map_err(|e| TargetError(format!("cannot create {}: {e}", work.display())))?;
        let info = crate::environment::backing(&self.path);
        Ok(Box::new(MountedDir { work, info }))
    }
}

impl Mounted for MountedDir {
    fn root(&self) -> &Path {
        &self.work
    }
    fn info(&self) -> Vec<(String, String)> {
        self.info.clone()
    }
    fn teardown(self: Box<Self>) -> Result<(), TargetError> {
        // Only an empty directory is removed: files a workload kept (keep=1) stay.
        match std::fs::remove_dir(&self.work) {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc_enotempty()) => Ok(()),
            Err(e) => Err(TargetError(format!("cannot remove {}: {e}", self.work.display()))),
        }
    }
}

fn libc_enotempty() -> i32 {
    rustix::io::Errno::NOTEMPTY.raw_os_error()
}
