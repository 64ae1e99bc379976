//! What every target kind shares: its options, the provisioning context, and the one
//! implementation of [`Mounted`] — a root directory plus the resources to undo.

use crate::state::{undo_all, Resource, Workdir};
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
                    "unknown key '{k}' for target {}: accepted keys are {}",
                    spec.kind,
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
#[derive(Debug, Default)]
pub struct Provisioned {
    /// The directory workloads work in.
    pub root: PathBuf,
    /// Facts for the report.
    pub info: Vec<(String, String)>,
    /// What was created, in order.
    pub resources: Vec<Resource>,
    /// A daemon's stderr, shown when a run fails.
    pub log: Option<PathBuf>,
}

impl Provisioned {
    /// Records `resource` in the state file, then remembers it for teardown. Call before
    /// creating the resource.
    pub fn add(&mut self, ctx: &ProvisionCtx<'_>, resource: Resource) -> Result<(), TargetError> {
        ctx.workdir.record(&resource)?;
        self.resources.push(resource);
        Ok(())
    }

    /// Adds a fact for the report.
    pub fn fact(&mut self, key: &str, value: impl Into<String>) {
        self.info.push((key.to_string(), value.into()));
    }

    /// Creates a directory `name` in the work directory, recorded first.
    pub fn make_dir(&mut self, ctx: &ProvisionCtx<'_>, name: &str, recursive: bool) -> Result<PathBuf, TargetError> {
        let path = ctx.workdir.path().join(name);
        self.add(ctx, Resource::Dir { path: path.clone(), recursive })?;
        std::fs::create_dir(&path).map_err(|e| TargetError(format!("cannot create {}: {e}", path.display())))?;
        Ok(path)
    }

    /// Records the mount options as the kernel shows them for `root`.
    pub fn capture_mount(&mut self) {
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
                let (_, undo_error) = undo_all(&self.resources);
                let mut msg = e.0;
                if let Some(log) = log {
                    msg.push_str(&format!("; daemon output: {log}"));
                }
                if let Some(u) = undo_error {
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
    fn info(&self) -> Vec<(String, String)> {
        self.info.clone()
    }
    fn diagnostics(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.log.as_ref()?).ok()?;
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(10)..].join(" | ");
        (!tail.is_empty()).then_some(tail)
    }
    fn teardown(self: Box<Self>) -> Result<(), TargetError> {
        match undo_all(&self.resources) {
            (_, Some(e)) => Err(e),
            _ => Ok(()),
        }
    }
}
