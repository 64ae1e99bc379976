//! Targets: the filesystems under test. A target is provisioned (every resource recorded in
//! the work directory's state file right after fsarena created it, with its identity), lends
//! its root directory to the workloads, and is torn down. Targets know nothing of workloads.

mod cleanup;
mod common;
mod device;
pub mod environment;
mod fuse;
mod kinds;
pub mod requirements;
pub mod safefs;
pub mod state;
pub mod sys;
mod workdir;

pub use cleanup::{cleanup, CleanupReport};
pub use common::{CommonOptions, ProvisionCtx, Provisioned};
pub use device::DeviceTarget;
pub use fuse::{shell_quote, FuseTarget};
pub use kinds::{minimum_size, DirTarget, LoopTarget, TmpfsTarget, LOOP_KINDS};
pub use requirements::Requirement;
pub use state::{Resource, UndoMode};
pub use workdir::{Emergency, RunId, Workdir};

use fsarena_core::{InputError, Spec};
use std::path::Path;

/// Every target kind, in the order `fsarena targets` lists them.
pub const KINDS: [&str; 12] =
    ["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2", "tmpfs", "fuse2fs", "fuse", "dir", "device"];

/// The default work directory for images and mount points.
pub const DEFAULT_WORKDIR: &str = "/var/tmp/fsarena";

/// A failure while provisioning or tearing down. Shown through
/// [`fsarena_core::printable`]: it may quote paths and labels the user gave.
#[derive(Debug, thiserror::Error)]
#[error("{}", fsarena_core::printable(.0))]
pub struct TargetError(pub String);

/// A filesystem under test, not yet provisioned.
pub trait Target: std::fmt::Debug + Send + Sync {
    /// The name shown in reports: `label=`, by default the spec.
    fn label(&self) -> &str;
    /// The kind: `ext4`, `dir`, ...
    fn kind(&self) -> &str;
    /// The options as given.
    fn options(&self) -> Vec<(String, String)>;
    /// What this machine must have; checked before anything is created.
    fn requirements(&self) -> Vec<Requirement>;
    /// Bytes of image this target puts in the work directory (0 for none).
    fn image_bytes(&self) -> u64 {
        0
    }
    /// The bytes a workload can at most put on this target, known before provisioning: the
    /// image or tmpfs size, a `dir:` path's free space, a device's size; None when unknown
    /// (a FUSE command's filesystem).
    fn capacity_bytes(&self) -> Option<u64> {
        None
    }
    /// Makes it ready: creates, formats, mounts; on failure undoes what it did.
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError>;
}

/// A provisioned target.
pub trait Mounted: std::fmt::Debug {
    /// The directory workloads work in.
    fn root(&self) -> &Path;
    /// Facts to show beside the numbers: mkfs command and version, image, loop device, mount
    /// options as the kernel shows them, FUSE command and PID.
    fn info(&self) -> Vec<(String, String)>;
    /// The FUSE daemon's last lines of stderr, shown when a run fails.
    fn diagnostics(&self) -> Option<String> {
        None
    }
    /// Undoes `provision`; touches nothing else.
    fn teardown(self: Box<Self>) -> Result<(), TargetError>;
}

/// Parses and checks a `--target` spec, without side effects. `force` is `--force`.
pub fn parse(text: &str, force: bool) -> Result<Box<dyn Target>, InputError> {
    let spec = Spec::parse(text)?;
    let target: Box<dyn Target> = match spec.kind.as_str() {
        k if LOOP_KINDS.contains(&k) => Box::new(LoopTarget::from_spec(&spec, text)?),
        "tmpfs" => Box::new(TmpfsTarget::from_spec(&spec, text)?),
        "fuse2fs" | "fuse" => Box::new(FuseTarget::from_spec(&spec, text)?),
        "dir" => Box::new(DirTarget::from_spec(&spec, text)?),
        "device" => Box::new(DeviceTarget::from_spec(&spec, text, force)?),
        other => {
            return Err(InputError::new(format!(
                "unknown target kind '{other}': accepted kinds are {}",
                KINDS.join(", ")
            )))
        }
    };
    Ok(target)
}

/// What every kind needs, for `fsarena targets`.
pub fn kind_requirements(kind: &str) -> Vec<Requirement> {
    use requirements as r;
    match kind {
        k if LOOP_KINDS.contains(&k) => {
            vec![Requirement::Root, Requirement::KernelFs(r::kernel_name(k)), r::mkfs_tool(k), r::LOSETUP]
        }
        "tmpfs" => vec![Requirement::Root, Requirement::KernelFs("tmpfs")],
        "fuse2fs" => vec![
            Requirement::Root,
            Requirement::KernelFs("fuse"),
            Requirement::DevFuse,
            r::FUSERMOUNT,
            r::FUSE2FS,
            r::mkfs_tool("ext4"),
        ],
        "fuse" => vec![Requirement::Root, Requirement::KernelFs("fuse"), Requirement::DevFuse, r::FUSERMOUNT],
        "device" => vec![Requirement::Root],
        _ => Vec::new(),
    }
}
