//! Targets: the filesystems under test. A target is provisioned, lends its root directory
//! to the workloads, and is torn down. Targets know nothing of workloads.

mod dir;
pub mod environment;

pub use dir::DirTarget;

use fsarena_core::{InputError, Spec};
use std::path::Path;

/// Target kinds accepted by `--target`.
pub const KINDS: &str = "dir";

/// A failure while provisioning or tearing down.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

/// A filesystem under test, not yet provisioned.
pub trait Target: std::fmt::Debug {
    /// The name shown in reports: `label=`, by default the spec.
    fn label(&self) -> &str;
    /// The kind: `dir`, ...
    fn kind(&self) -> &'static str;
    /// The options as given.
    fn options(&self) -> Vec<(String, String)>;
    /// Makes it ready: formats, mounts or creates the working directory.
    fn provision(&self) -> Result<Box<dyn Mounted>, TargetError>;
}

/// A provisioned target.
pub trait Mounted: std::fmt::Debug {
    /// The directory workloads work in.
    fn root(&self) -> &Path;
    /// Facts to show beside the numbers: backing filesystem, device, mount options.
    fn info(&self) -> Vec<(String, String)>;
    /// Undoes `provision`; touches nothing else.
    fn teardown(self: Box<Self>) -> Result<(), TargetError>;
}

/// Parses and checks a `--target` spec, without side effects.
pub fn parse(text: &str) -> Result<Box<dyn Target>, InputError> {
    let spec = Spec::parse(text)?;
    match spec.kind.as_str() {
        "dir" => Ok(Box::new(DirTarget::from_spec(&spec, text)?)),
        "ext2" | "ext3" | "ext4" | "xfs" | "btrfs" | "f2fs" | "nilfs2" | "tmpfs" | "fuse2fs" | "fuse" | "device" => {
            Err(InputError::new(format!(
                "target kind '{}' is not supported yet (loop images, tmpfs and FUSE come with the targets issue): accepted kinds are {KINDS}",
                spec.kind
            )))
        }
        other => Err(InputError::new(format!("unknown target kind '{other}': accepted kinds are {KINDS}"))),
    }
}
