//! What a target kind needs from this machine, checked before anything is created.

use crate::sys;

/// One thing a target kind needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// The kernel has this filesystem (/proc/filesystems).
    KernelFs(&'static str),
    /// A program, and the Debian package that has it.
    Tool {
        /// The program.
        program: &'static str,
        /// Its Debian package.
        package: &'static str,
    },
    /// /dev/fuse exists.
    DevFuse,
    /// Running as root (mount, losetup).
    Root,
}

impl Requirement {
    /// None when met; otherwise why not, with the fix.
    pub fn unmet(&self) -> Option<String> {
        match self {
            Requirement::KernelFs(fs) => (!sys::kernel_filesystems().iter().any(|k| k == fs))
                .then(|| format!("the kernel lacks {fs} (not in /proc/filesystems)")),
            Requirement::Tool { program, package } => {
                (!sys::have(program)).then(|| format!("{program} is missing (apt-get install {package})"))
            }
            Requirement::DevFuse => (!std::path::Path::new("/dev/fuse").exists()).then(|| "no /dev/fuse".to_string()),
            Requirement::Root => (!sys::is_root()).then(|| "needs root (mount, losetup)".to_string()),
        }
    }
}

/// The first unmet requirement's reason, if any.
pub fn check(requirements: &[Requirement]) -> Result<(), String> {
    match requirements.iter().find_map(Requirement::unmet) {
        Some(reason) => Err(reason),
        None => Ok(()),
    }
}

/// losetup, from util-linux's `mount` package.
pub const LOSETUP: Requirement = Requirement::Tool { program: "losetup", package: "mount" };
/// fusermount3, from `fuse3`.
pub const FUSERMOUNT: Requirement = Requirement::Tool { program: "fusermount3", package: "fuse3" };
/// fuse2fs, from `fuse2fs`.
pub const FUSE2FS: Requirement = Requirement::Tool { program: "fuse2fs", package: "fuse2fs" };
/// glusterd, from `glusterfs-server` (which brings the CLI and the client).
pub const GLUSTERD: Requirement = Requirement::Tool { program: "glusterd", package: "glusterfs-server" };
/// The gluster CLI, from `glusterfs-cli`.
pub const GLUSTER: Requirement = Requirement::Tool { program: "gluster", package: "glusterfs-cli" };
/// The FUSE client's mount helper, from `glusterfs-client`.
pub const MOUNT_GLUSTERFS: Requirement = Requirement::Tool { program: "mount.glusterfs", package: "glusterfs-client" };
/// hostname (for `hostname -I`), from `hostname`.
pub const HOSTNAME: Requirement = Requirement::Tool { program: "hostname", package: "hostname" };
