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

/// The mkfs program and Debian package of a filesystem.
pub fn mkfs_tool(fs: &str) -> Requirement {
    let (program, package) = match fs {
        "ext2" => ("mkfs.ext2", "e2fsprogs"),
        "ext3" => ("mkfs.ext3", "e2fsprogs"),
        "ext4" => ("mkfs.ext4", "e2fsprogs"),
        "xfs" => ("mkfs.xfs", "xfsprogs"),
        "btrfs" => ("mkfs.btrfs", "btrfs-progs"),
        "f2fs" => ("mkfs.f2fs", "f2fs-tools"),
        _ => ("mkfs.nilfs2", "nilfs-tools"),
    };
    Requirement::Tool { program, package }
}

/// The kernel filesystem name of a kind.
pub fn kernel_name(fs: &str) -> &'static str {
    match fs {
        "ext2" => "ext2",
        "ext3" => "ext3",
        "ext4" => "ext4",
        "xfs" => "xfs",
        "btrfs" => "btrfs",
        "f2fs" => "f2fs",
        "nilfs2" => "nilfs2",
        "tmpfs" => "tmpfs",
        _ => "fuse",
    }
}

/// losetup, from util-linux's `mount` package.
pub const LOSETUP: Requirement = Requirement::Tool { program: "losetup", package: "mount" };
/// fusermount3, from `fuse3`.
pub const FUSERMOUNT: Requirement = Requirement::Tool { program: "fusermount3", package: "fuse3" };
/// fuse2fs, from `fuse2fs`.
pub const FUSE2FS: Requirement = Requirement::Tool { program: "fuse2fs", package: "fuse2fs" };
