//! Targets: the filesystems under test. A target is provisioned (every resource recorded in
//! the work directory's state file right after fsarena created it, with its identity), lends
//! its root directory to the workloads, and is torn down. Targets know nothing of workloads.

pub mod beneath;
mod cleanup;
mod common;
pub mod contain;
mod device;
mod dir;
pub mod disk;
pub mod environment;
mod fuse;
mod gluster;
mod kinds;
pub mod memory;
pub mod passthrough;
pub mod recorder;
pub mod requirements;
pub mod safefs;
pub mod state;
pub mod sys;
pub mod table;
mod workdir;

pub use cleanup::{cleanup, down, CleanupReport};
pub use common::{CommonOptions, ProvisionCtx, Provisioned};
pub use device::DeviceTarget;
pub use dir::DirTarget;
pub use fuse::{shell_quote, FuseTarget};
pub use gluster::GlusterTarget;
pub use kinds::{LoopTarget, TmpfsTarget};
pub use requirements::Requirement;
pub use state::{Resource, UndoMode};
pub use table::{parse, Filesystem, Kind, FILESYSTEMS, TARGET_KINDS};
pub use workdir::{run_dir_of, Emergency, RunId, Workdir, RUN_BASE};

use std::path::{Path, PathBuf};

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
    /// The files and directories a workload can at most create on it, where the target says
    /// before provisioning (a `dir:` path's free inodes); None when unknown.
    fn capacity_files(&self) -> Option<u64> {
        None
    }
    /// How many client mounts [`Mounted::client_roots`] will give, where known before
    /// provisioning: one for every kind but a shared filesystem mounted once per client
    /// (`glusterfs:clients=N`); None when only the mounted target knows.
    fn clients(&self) -> Option<u32> {
        Some(1)
    }
    /// Whether every host that runs ranks of an MPI job mounts it itself (a volume served from
    /// other hosts: `glusterfs:servers=`), rather than rank 0 alone making it on its host.
    fn mounts_on_every_host(&self) -> bool {
        false
    }
    /// Makes it ready: creates, formats, mounts; on failure undoes what it did.
    fn provision(&self, ctx: &ProvisionCtx<'_>) -> Result<Box<dyn Mounted>, TargetError>;
}

/// A provisioned target.
pub trait Mounted: std::fmt::Debug + Send {
    /// The directory workloads work in.
    fn root(&self) -> &Path;
    /// Every client's view of the same filesystem, the first being [`Mounted::root`]: a
    /// shared filesystem mounted once per client (`glusterfs:clients=N`), each mount with its
    /// own client process and caches; one for every other kind.
    fn client_roots(&self) -> Vec<PathBuf> {
        vec![self.root().to_path_buf()]
    }
    /// [`Mounted::client_roots`] as other hosts reach them (MPI ranks elsewhere): the user's
    /// own paths of a `dir:` target, whose roots here are fsarena's bind mounts; the same
    /// for every other kind.
    fn shared_roots(&self) -> Vec<PathBuf> {
        self.client_roots()
    }
    /// Facts to show beside the numbers: mkfs command and version, image, loop device, mount
    /// options as the kernel shows them, FUSE command and PID; last, `root`: the directory
    /// workloads ran in.
    fn info(&self) -> Vec<(String, String)>;
    /// Lets the kernel follow symbolic links on the mounts whose content a tenant serves (a
    /// `fuse:` command's mount, a `dir:` target's bind mount), or not (`MOUNT_ATTR_NOSYMFOLLOW`,
    /// mount_setattr(2)): a workload that never means to follow a link then cannot be led
    /// through one a daemon serves, at any depth of any path it names, to act on the host.
    /// Nothing to do for the kinds fsarena formats and serves itself.
    fn follow_links(&self, _follow: bool) -> Result<(), TargetError> {
        Ok(())
    }
    /// The FUSE daemon's last lines of stderr, shown when a run fails.
    fn diagnostics(&self) -> Option<String> {
        None
    }
    /// Unmounts the filesystem and mounts it again as it was (same device, same options),
    /// so that nothing of it stays cached: what a later read finds came from the device. The
    /// new mount is recorded in place of the old. Only where [`Mounted::remounts`] says so.
    fn remount(&mut self) -> Result<(), TargetError> {
        Err(TargetError("this kind of target cannot be remounted: only those fsarena mounts on a loop device".into()))
    }
    /// Whether [`Mounted::remount`] can be asked: the kinds fsarena mounts on a loop device.
    fn remounts(&self) -> bool {
        false
    }
    /// Undoes `provision`; touches nothing else.
    fn teardown(self: Box<Self>) -> Result<(), TargetError>;
}
