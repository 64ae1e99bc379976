//! What every target kind shares: its options, the provisioning context, and the one
//! implementation of [`Mounted`] — a root directory plus the resources to undo.

use crate::safefs;
use crate::state::{undo_all, LedgerHandle, Resource, UndoMode};
use crate::Workdir;
use crate::{Mounted, TargetError};
use fsarena_core::units::parse_size;
use fsarena_core::{InputError, Spec};
use std::path::{Path, PathBuf};

/// What provisioning needs from the runner.
#[derive(Debug)]
pub struct ProvisionCtx<'a> {
    /// The locked work directory, with the state file.
    pub workdir: &'a Workdir,
    /// A number unique within the run, for names.
    pub index: usize,
    /// Where mount points go instead of the work directory: the run's directory under
    /// /run/fsarena ([`Workdir::open_run_dir`]) when a workload runs a server as another
    /// account, which could not pass through the 0700 work directory. `None`: the work
    /// directory.
    pub mount_base: Option<&'a Path>,
}

impl ProvisionCtx<'_> {
    /// The path of `what` in the work directory, named with the run id so that it never
    /// meets a name another run (or anyone else) chose: `RUNID-what`.
    pub fn path(&self, what: &str) -> PathBuf {
        self.workdir.path().join(format!("{}-{what}", self.workdir.run_id()))
    }

    /// The path of the mount point `what`: `RUNID-what` in [`ProvisionCtx::mount_base`], else
    /// in the work directory.
    pub fn mount_path(&self, what: &str) -> PathBuf {
        match self.mount_base {
            Some(base) => base.join(format!("{}-{what}", self.workdir.run_id())),
            None => self.path(what),
        }
    }
}

/// The keys a target spec may use, parsed.
#[derive(Debug, Clone, Default)]
pub struct CommonOptions {
    /// The spec as given.
    pub text: String,
    /// Name in reports.
    pub label: String,
    /// Image or tmpfs size.
    pub size: u64,
    /// Extra mkfs arguments.
    pub mkfs: Vec<String>,
    /// Extra mount options.
    pub mount: String,
    /// All key/value pairs as given.
    pub params: Vec<(String, String)>,
}

/// Default image and tmpfs size: 4 GiB.
pub const DEFAULT_SIZE: u64 = 4 << 30;

impl CommonOptions {
    /// Parses `spec`, accepting only `allowed` keys (plus `label`).
    pub fn parse(spec: &Spec, text: &str, allowed: &[&str]) -> Result<Self, InputError> {
        for (k, _) in &spec.params {
            if k != "label" && !allowed.contains(&k.as_str()) {
                let mut accepted: Vec<&str> = allowed.to_vec();
                accepted.push("label");
                return Err(InputError::new(format!(
                    "unknown key '{k}' for target {}:{} accepted keys are {}",
                    spec.kind,
                    fsarena_core::did_you_mean(k, accepted.iter().copied()),
                    accepted.join(", ")
                )));
            }
        }
        let size = match spec.get("size") {
            Some(s) => match parse_size(s) {
                Ok(0) => return Err(InputError::new(format!("{}: size=0: expected a size such as 4g", spec.kind))),
                Ok(n) => n,
                Err(e) => return Err(InputError::new(format!("{}: size={s}: {}", spec.kind, e.message))),
            },
            None => DEFAULT_SIZE,
        };
        Ok(Self {
            text: text.to_string(),
            label: spec.get("label").unwrap_or(text).to_string(),
            size,
            mkfs: spec.get("mkfs").map(|m| m.split_whitespace().map(str::to_string).collect()).unwrap_or_default(),
            mount: spec.get("mount").unwrap_or("").to_string(),
            params: spec.params.clone(),
        })
    }
}

/// A provisioned target: where workloads work, what to show, what to undo.
#[derive(Debug)]
pub struct Provisioned {
    /// The directory workloads work in.
    pub root: PathBuf,
    /// Facts for the report.
    pub info: Vec<(String, String)>,
    /// What was created, in order.
    resources: Vec<Resource>,
    /// The run's state file, where each resource is written down.
    ledger: LedgerHandle,
    /// A daemon's stderr, shown when a run fails.
    pub log: Option<PathBuf>,
    /// Every client's mount of a shared filesystem, `root` first (empty: just `root`).
    pub clients: Vec<PathBuf>,
    /// How `root` was mounted (filesystem type, device, options), for [`Mounted::remount`];
    /// None where fsarena does not remount.
    pub remount: Option<(String, String, String)>,
    /// The user's paths of `root` and the clients (a `dir:` target, whose roots are fsarena's
    /// bind mounts of held directories): shown in reports and used by MPI ranks on other
    /// hosts. Empty: `root` and `clients` themselves.
    pub shown_roots: Vec<PathBuf>,
    /// Directories held open for the target's life (a `dir:` target's scratch directory).
    pub held: Vec<crate::beneath::HeldDir>,
    /// Mounts whose content someone else serves or may change (a `fuse:` command's mount,
    /// the bind mount of a `dir:` target): see [`Mounted::follow_links`].
    pub tenant_mounts: Vec<PathBuf>,
}

impl Provisioned {
    /// Starts provisioning in `ctx`'s work directory.
    pub fn new(ctx: &ProvisionCtx<'_>) -> Self {
        Self {
            root: PathBuf::new(),
            info: Vec::new(),
            resources: Vec::new(),
            ledger: ctx.workdir.ledger(),
            log: None,
            clients: Vec::new(),
            remount: None,
            shown_roots: Vec::new(),
            held: Vec::new(),
            tenant_mounts: Vec::new(),
        }
    }

    /// Starts a group of resources recorded in `ledger` (the recorder's per-state loop
    /// devices and mounts), torn down on their own.
    pub(crate) fn with_ledger(ledger: LedgerHandle) -> Self {
        Self {
            root: PathBuf::new(),
            info: Vec::new(),
            resources: Vec::new(),
            ledger,
            log: None,
            clients: Vec::new(),
            remount: None,
            shown_roots: Vec::new(),
            held: Vec::new(),
            tenant_mounts: Vec::new(),
        }
    }

    /// Records `resource`, which fsarena has just created, in the state file, and remembers
    /// it for teardown. If it cannot be recorded it is undone at once: nothing unrecorded
    /// may outlive the run.
    pub fn add(&mut self, resource: Resource) -> Result<(), TargetError> {
        if let Err(e) = self.ledger.record(&resource) {
            let undo = undo_all(std::slice::from_ref(&resource), UndoMode::Teardown);
            return Err(match undo.error {
                Some(u) => TargetError(format!("{e}; and undoing it failed: {u}")),
                None => e,
            });
        }
        self.resources.push(resource);
        Ok(())
    }

    /// Adds a fact for the report.
    pub fn fact(&mut self, key: &str, value: impl Into<String>) {
        self.info.push((key.to_string(), value.into()));
    }

    /// Creates the directory `path` (0700; an existing one is an error, never adopted), then
    /// records it.
    pub fn make_dir(&mut self, path: PathBuf, recursive: bool) -> Result<PathBuf, TargetError> {
        let id = safefs::create_new_dir(&path, 0o700)
            .map_err(|e| TargetError(format!("cannot create {}: {e}", path.display())))?;
        self.add(Resource::Dir { path: path.clone(), id, recursive })?;
        Ok(path)
    }

    /// Creates the file `path` (`O_EXCL|O_NOFOLLOW`, 0600), then records it.
    pub fn make_file(&mut self, path: PathBuf) -> Result<(std::fs::File, PathBuf), TargetError> {
        let (file, id) = safefs::create_new_file(&path)
            .map_err(|e| TargetError(format!("cannot create {}: {e}", path.display())))?;
        self.add(Resource::File { path: path.clone(), id })?;
        Ok((file, path))
    }

    /// Records the mount fsarena just made at `mnt` (found by its mount point in the mount
    /// table; its mount ID identifies it later).
    pub fn add_mount(&mut self, mnt: &Path, fuse: bool) -> Result<(), TargetError> {
        let entry = crate::sys::mount_at(mnt)
            .ok_or_else(|| TargetError(format!("{} is not a mount point after mounting", mnt.display())))?;
        self.add(Resource::Mount { path: mnt.to_path_buf(), mount_id: entry.mount_id, fuse })
    }

    /// Records the mount options as the kernel shows them for `root`.
    pub fn capture_mount(&mut self) {
        // A `dir:` target's root is fsarena's bind mount of the user's directory: the facts
        // would describe that mount, not a filesystem fsarena made.
        if !self.shown_roots.is_empty() {
            return;
        }
        if let Some(m) = crate::sys::mount_at(&self.root) {
            self.fact("filesystem", m.fstype);
            self.fact("source", m.source);
            self.fact(
                "mount_options",
                format!("{},{}", m.mount_options, m.super_options).trim_end_matches(',').to_string(),
            );
        }
    }

    /// Finishes provisioning: on error, undoes what was created and adds the daemon's log.
    pub fn finish(mut self, built: Result<(), TargetError>) -> Result<Box<dyn Mounted>, TargetError> {
        match built {
            Ok(()) => {
                self.capture_mount();
                Ok(Box::new(self))
            }
            Err(e) => {
                let log = self.diagnostics();
                let undo = self.ledger.undo(&self.resources, UndoMode::Teardown);
                let mut msg = e.0;
                if let Some(log) = log {
                    msg.push_str(&format!("; daemon output: {log}"));
                }
                if let Some(u) = undo.error {
                    msg.push_str(&format!("; and undoing failed: {u}"));
                }
                Err(TargetError(msg))
            }
        }
    }
}

impl Mounted for Provisioned {
    fn root(&self) -> &Path {
        &self.root
    }
    fn client_roots(&self) -> Vec<PathBuf> {
        if self.clients.is_empty() {
            vec![self.root.clone()]
        } else {
            self.clients.clone()
        }
    }
    fn shared_roots(&self) -> Vec<PathBuf> {
        match self.shown_roots.len() {
            0 => self.client_roots(),
            _ => self.shown_roots.clone(),
        }
    }
    fn info(&self) -> Vec<(String, String)> {
        // Where the workloads ran: fio-json shows it as the `directory=` actually used; for a
        // `dir:` target the user's path, not fsarena's bind mount of it.
        let mut info = self.info.clone();
        let root = self.shown_roots.first().unwrap_or(&self.root);
        info.push(("root".into(), root.display().to_string()));
        info
    }
    fn follow_links(&self, follow: bool) -> Result<(), TargetError> {
        for mnt in &self.tenant_mounts {
            crate::sys::set_nosymfollow(mnt, !follow)
                .map_err(|e| TargetError(format!("cannot set nosymfollow on {}: {e}", mnt.display())))?;
        }
        Ok(())
    }
    fn diagnostics(&self) -> Option<String> {
        use std::io::Read;
        // The log is fsarena's own file in its own directory, but a daemon may write a lot:
        // only the end is read.
        let mut file = std::fs::File::open(self.log.as_ref()?).ok()?;
        let len = file.metadata().ok()?.len();
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(len.saturating_sub(64 << 10))).ok()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(10)..].join(" | ");
        (!tail.is_empty()).then(|| fsarena_core::printable(&tail).into_owned())
    }
    fn remounts(&self) -> bool {
        self.remount.is_some()
    }
    fn remount(&mut self) -> Result<(), TargetError> {
        let Some((fstype, source, options)) = self.remount.clone() else {
            return Err(TargetError(
                "this kind of target cannot be remounted: only those fsarena mounts on a loop device".into(),
            ));
        };
        let root = self.root.clone();
        let at = self
            .resources
            .iter()
            .rposition(|r| matches!(r, Resource::Mount { path, .. } if *path == root))
            .ok_or_else(|| TargetError(format!("remount: fsarena has no mount at {}", root.display())))?;
        // Unmounted (and forgotten in the state file) as teardown would, then mounted again
        // and recorded anew: the state file always names the mount that is there.
        if let Some(e) = self.ledger.undo(&self.resources[at..=at], UndoMode::Teardown).error {
            return Err(TargetError(format!("remount: {e}")));
        }
        self.resources.remove(at);
        crate::kinds::mount(self, &fstype, &source, &options, &root)
    }
    fn teardown(self: Box<Self>) -> Result<(), TargetError> {
        match self.ledger.undo(&self.resources, UndoMode::Teardown).error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
